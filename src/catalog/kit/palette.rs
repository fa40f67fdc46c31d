//! One palette module: the report's colour scales and series colours, also as plain RGB for
//! the studio's panels, so a figure and a panel colour the same value alike.

pub use crate::report::figures::{CYCLE as SERIES_COLOURS, Palette};

/// The colour of the `k`-th series of a figure (cycles through [`SERIES_COLOURS`]).
pub fn series_colour(k: usize) -> (u8, u8, u8) {
    SERIES_COLOURS[k % SERIES_COLOURS.len()]
}

/// `palette` at `t` in 0–1 (clamped; not finite reads as 0) as RGB.
pub fn rgb(palette: Palette, t: f64) -> (u8, u8, u8) {
    let c = palette.at(t);
    (c.0, c.1, c.2)
}

/// Resistivity colours for a section at `t` in 0–1 (of log ρ): the report's scale exactly —
/// blue (low, conductive) through yellow to dark red (high), pyGIMLi's `Spectral_r` — so a
/// panel and a figure colour the same model alike (issue 24: they were opposite).
pub fn resistivity(t: f64) -> (u8, u8, u8) {
    rgb(Palette::SpectralR, t.clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_of_the_scales() {
        // SpectralR's stops (report/figures.rs): 0 → (94, 79, 162), 1 → (158, 1, 66).
        assert_eq!(resistivity(0.0), (94, 79, 162));
        assert_eq!(resistivity(1.0), (158, 1, 66));
        assert_eq!(resistivity(0.3), rgb(Palette::SpectralR, 0.3));
        assert_eq!(rgb(Palette::Viridis, 0.0), (68, 1, 84));
        assert_eq!(series_colour(8), series_colour(0));
    }
}
