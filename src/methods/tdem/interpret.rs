//! What a TDEM line's layered models say about the water table: each sounding's smooth
//! model read by [`sounding_depth::water_table`] between the shallowest depth its data
//! resolve and its DOI.
//!
//! The shallowest resolved depth is the diffusion depth of the earliest inverted gate in the
//! model's top-layer resistivity, `d = √(2 t₀ ρ₁ / μ0)` (Nabighian & Macnae 1991, *Time
//! domain electromagnetic prospecting methods*, the diffusion depth `√(2t/σμ0)`): at `t₀`
//! the induced currents have already passed below `d`, so structure shallower than that is
//! integrated into the earliest gate, not resolved. A 10 µs gate over 600 Ω·m sand resolves
//! nothing above ~100 m: a 4 m water table is not TDEM's to see, and the reading says so.

use super::forward::MU0;
use super::pipeline::{SoundingFit, TdemInversion};
use crate::methods::sounding_depth::LayeredSounding;

/// The diffusion depth `√(2 t ρ / μ0)` of a gate at `time_s` in `rho_ohm_m`, m (module docs).
pub fn diffusion_depth_m(time_s: f64, rho_ohm_m: f64) -> f64 {
    (2.0 * time_s * rho_ohm_m / MU0).sqrt()
}

/// Position along the line: the file's distance, else the easting from the first sounding's,
/// else the sounding's order.
fn along_line_m(f: &SoundingFit, first_easting: Option<f64>, order: usize) -> f64 {
    f.position
        .distance_m
        .or_else(|| Some(f.position.easting_m? - first_easting?))
        .unwrap_or(order as f64)
}

/// The soundings with a DOI as [`LayeredSounding`]s (those without one say nothing about a
/// depth window and are left out).
pub fn layered_soundings(inv: &TdemInversion) -> Vec<LayeredSounding> {
    let first_e = inv.fits.iter().find_map(|f| f.position.easting_m);
    inv.fits
        .iter()
        .enumerate()
        .filter_map(|(i, f)| {
            let t0 = f.times_s.iter().copied().fold(f64::INFINITY, f64::min);
            let rho1 = *f.model.rho_ohm_m.first()?;
            Some(LayeredSounding {
                name: f.name.clone(),
                x_m: along_line_m(f, first_e, i),
                surface_z_m: f.position.elevation_m.unwrap_or(0.0),
                rho_ohm_m: f.model.rho_ohm_m.clone(),
                thickness_m: f.model.thickness_m.clone(),
                shallowest_m: diffusion_depth_m(t0, rho1),
                doi_m: f.doi_m?,
            })
        })
        .filter(|s| s.shallowest_m.is_finite())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_diffusion_depth_is_the_closed_form() {
        // √(2 · 1e-5 s · 600 Ω·m / 4π·10⁻⁷ H/m) = √(9549.3) = 97.72 m.
        assert!((diffusion_depth_m(1e-5, 600.0) - 97.72).abs() < 0.01);
        // Four times the time, twice the depth.
        let r = diffusion_depth_m(4e-5, 600.0) / diffusion_depth_m(1e-5, 600.0);
        assert!((r - 2.0).abs() < 1e-12);
    }
}
