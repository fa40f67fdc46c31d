//! Checks of a grav/mag model that do not come from the misfit: the excess mass the residual
//! map implies by Gauss's theorem against the model's, the model's anomaly centre against the
//! residual's peak, and the model's oscillation between neighbouring cells.
//!
//! * **Gauss's theorem** (Blakely 1995, *Potential Theory in Gravity and Magnetic
//!   Applications*, §3.1 and eq. 7.1): the vertical attraction of any buried mass integrated
//!   over the whole surface is `∬ Δg dA = 2πG M`, whatever its shape or depth. Over the
//!   survey window only the part `f` of the field falls inside; for a compact source `f` is
//!   the window's solid angle seen from the source over 2π, computed here for a point mass at
//!   the model's anomaly centroid as `f = (1/2π) Σ_nodes Δz / r³ · dA` over the supported
//!   nodes of the residual grid. `M = Σ Δg dA / (2πG f)`.
//! * **Centre**: the model's anomaly centroid (horizontal) against the peak of the residual
//!   map smoothed over 3 × 3 nodes. Gravity only: a magnetic anomaly's peak is offset from its
//!   source by the inclination of the field.
//! * **Oscillation**: the share of interior core cells that are a strict local extreme along
//!   x and along y with a swing above 5 % of the model's largest |value| (a checkerboard: ~1;
//!   a smooth body: the few cells at its peak). The discrepancy-principle model is the
//!   smoothest that fits the data; a model rougher than that was fitted to the noise.

use serde::{Deserialize, Serialize};

use super::grid::Grid2D;
use super::inversion::{GravMagInversion, core_cells, gauss_excess_mass_kg};
use crate::methods::quality::Component;

/// A check scoring below this fails the evaluation whatever the overall score.
pub const CHECK_PASS: f64 = 70.0;
/// Below this share of the anomaly inside the window the Gauss mass is not scored.
pub const MIN_WINDOW_FRACTION: f64 = 0.3;
/// The model's mass passes when within this factor of the Gauss mass (either way).
pub const MASS_FACTOR_PASS: f64 = 1.5;
/// … and scores 0 beyond this factor (or with the opposite sign).
pub const MASS_FACTOR_FAIL: f64 = 3.0;
/// Oscillation index at and below which the model counts as smooth.
pub const OSCILLATION_PASS: f64 = 0.1;
/// Oscillation index at and above which the score is 0.
pub const OSCILLATION_FAIL: f64 = 0.3;

/// The results of the checks (module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GravMagChecks {
    /// `Σ Δg dA / 2πG` over the residual grid's supported nodes, kg (gravity only).
    pub gauss_mass_window_kg: Option<f64>,
    /// The share of a point mass's field at the model centroid that falls in the window.
    pub window_fraction: Option<f64>,
    /// The window mass corrected by the window fraction, kg.
    pub gauss_mass_kg: Option<f64>,
    /// The model's excess mass over its core cells, kg.
    pub model_mass_kg: Option<f64>,
    /// (x, y) of the smoothed residual map's largest |value|, m.
    pub residual_peak_m: Option<[f64; 2]>,
    /// (x, y) of the model's anomaly centroid, m.
    pub model_centre_m: Option<[f64; 2]>,
    /// Horizontal distance between the two, m.
    pub centre_offset_m: Option<f64>,
    /// The offset tolerated: two residual-grid spacings or two core cells, whichever larger.
    pub centre_tolerance_m: f64,
    /// The oscillation index of the model, 0–1.
    pub oscillation: Option<f64>,
}

impl GravMagChecks {
    /// Run the checks on a model and the residual map it was fitted to.
    pub fn compute(inv: &GravMagInversion, residual: &Grid2D) -> GravMagChecks {
        let gravity = inv.excess_mass_kg.is_some();
        let centroid = inv.anomaly_centroid_m;
        let station_z = inv.mesh.top_m() + 1.0;
        let (window, fraction) = match (gravity, centroid, residual.is_consistent()) {
            (true, Some(c), true) => {
                let (sum, area) = supported_sum(residual);
                (
                    Some(gauss_excess_mass_kg(&[sum], area)),
                    Some(window_fraction(residual, c, station_z)),
                )
            }
            _ => (None, None),
        };
        let gauss = match (window, fraction) {
            (Some(w), Some(f)) if f >= MIN_WINDOW_FRACTION => Some(w / f),
            _ => None,
        };
        let peak = gravity.then(|| smoothed_peak(residual)).flatten();
        let centre = centroid.map(|c| [c[0], c[1]]);
        let offset = match (peak, centre) {
            (Some(p), Some(c)) => Some((p[0] - c[0]).hypot(p[1] - c[1])),
            _ => None,
        };
        let core_h = inv
            .mesh
            .widths_x()
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min);
        GravMagChecks {
            gauss_mass_window_kg: window,
            window_fraction: fraction,
            gauss_mass_kg: gauss,
            model_mass_kg: inv.excess_mass_kg,
            residual_peak_m: peak,
            model_centre_m: centre,
            centre_offset_m: offset,
            centre_tolerance_m: (2.0 * residual.spacing_m).max(2.0 * core_h),
            oscillation: oscillation_index(inv),
        }
    }

    /// The three components (weights 0.15, 0.10, 0.10 of the grav/mag rubric).
    pub fn components(&self) -> Vec<Component> {
        vec![
            self.mass_component(),
            self.centre_component(),
            self.oscillation_component(),
        ]
    }

    fn mass_component(&self) -> Component {
        const NAME: &str = "gauss_mass";
        let (Some(g), Some(m)) = (self.gauss_mass_kg, self.model_mass_kg) else {
            let why = match (self.model_mass_kg, self.window_fraction) {
                (None, _) => "magnetics: no mass to compare".to_string(),
                (_, Some(f)) if f < MIN_WINDOW_FRACTION => format!(
                    "the survey window holds only {:.0} % of the anomaly: Gauss's theorem is not usable",
                    100.0 * f
                ),
                _ => "no anomaly centre or residual map".to_string(),
            };
            return Component::unscored(NAME, 0.15, why);
        };
        let ratio = m / g;
        let score = if ratio > 0.0 {
            band_score(
                ratio.ln().abs(),
                MASS_FACTOR_PASS.ln(),
                MASS_FACTOR_FAIL.ln(),
            )
        } else {
            0.0
        };
        Component::scored(
            NAME,
            0.15,
            score,
            format!(
                "model {} kg vs {} kg from the residual by Gauss's theorem ({:.0} % of the field in the window); ratio {:.2}",
                sci(m),
                sci(g),
                100.0 * self.window_fraction.unwrap_or(f64::NAN),
                ratio
            ),
        )
    }

    fn centre_component(&self) -> Component {
        const NAME: &str = "anomaly_centre";
        let Some(d) = self.centre_offset_m else {
            return Component::unscored(
                NAME,
                0.10,
                "magnetics or no anomaly: the centre is not compared",
            );
        };
        let tol = self.centre_tolerance_m;
        let score = band_score(d, tol, 3.0 * tol);
        Component::scored(
            NAME,
            0.10,
            score,
            format!("model centre {d:.0} m from the residual's peak (tolerance {tol:.0} m)"),
        )
    }

    fn oscillation_component(&self) -> Component {
        const NAME: &str = "oscillation";
        let Some(o) = self.oscillation else {
            return Component::unscored(NAME, 0.10, "too few interior core cells to judge");
        };
        let score = band_score(o, OSCILLATION_PASS, OSCILLATION_FAIL);
        Component::scored(
            NAME,
            0.10,
            score,
            format!(
                "{:.0} % of the interior core cells swing against both neighbours (smooth ≤ {:.0} %)",
                100.0 * o,
                100.0 * OSCILLATION_PASS
            ),
        )
    }
}

/// 100 when `x ≤ pass`; beyond, from 60 down to 0 at `fail` (below [`CHECK_PASS`]: a check
/// past its pass mark fails the evaluation).
fn band_score(x: f64, pass: f64, fail: f64) -> f64 {
    if x <= pass {
        100.0
    } else {
        (60.0 * (fail - x) / (fail - pass)).max(0.0)
    }
}

/// Three significant figures in scientific notation ("5.40e6").
fn sci(v: f64) -> String {
    format!("{v:.2e}")
}

/// (Σ values over the supported nodes, node area m²).
fn supported_sum(g: &Grid2D) -> (f64, f64) {
    let sum = g
        .values
        .iter()
        .zip(&g.mask)
        .filter(|(v, m)| **m && v.is_finite())
        .map(|(v, _)| v)
        .sum();
    (sum, g.spacing_m * g.spacing_m)
}

/// `(1/2π) Σ Δz / r³ dA` over the supported nodes for a point at `c`, the nodes at `z_m`.
fn window_fraction(g: &Grid2D, c: [f64; 3], z_m: f64) -> f64 {
    let dz = (z_m - c[2]).max(1e-6);
    let area = g.spacing_m * g.spacing_m;
    let mut s = 0.0;
    for iy in 0..g.ny {
        for ix in 0..g.nx {
            if g.mask[iy * g.nx + ix] {
                let r2 = (g.x(ix) - c[0]).powi(2) + (g.y(iy) - c[1]).powi(2) + dz * dz;
                s += dz / r2.powf(1.5) * area;
            }
        }
    }
    s / (2.0 * std::f64::consts::PI)
}

/// The (x, y) of the largest |mean over the supported 3 × 3 neighbourhood|.
fn smoothed_peak(g: &Grid2D) -> Option<[f64; 2]> {
    if !g.is_consistent() {
        return None;
    }
    let mut best: Option<(f64, [f64; 2])> = None;
    for iy in 0..g.ny {
        for ix in 0..g.nx {
            if !g.mask[iy * g.nx + ix] {
                continue;
            }
            let (mut s, mut n) = (0.0, 0.0);
            for jy in iy.saturating_sub(1)..(iy + 2).min(g.ny) {
                for jx in ix.saturating_sub(1)..(ix + 2).min(g.nx) {
                    let k = jy * g.nx + jx;
                    if g.mask[k] && g.values[k].is_finite() {
                        s += g.values[k];
                        n += 1.0;
                    }
                }
            }
            let v = (s / n).abs();
            if n > 0.0 && best.is_none_or(|b| v > b.0) {
                best = Some((v, [g.x(ix), g.y(iy)]));
            }
        }
    }
    best.map(|b| b.1)
}

/// The share of interior core cells that are a strict local extreme along both x and y with
/// swings above 5 % of max |m| (module docs); `None` with fewer than 9 such cells.
pub fn oscillation_index(inv: &GravMagInversion) -> Option<f64> {
    let mesh = &inv.mesh;
    let (nx, ny) = (mesh.nx(), mesh.ny());
    let m = &inv.model;
    if m.len() != mesh.n_cells() || nx < 3 || ny < 3 {
        return None;
    }
    let core = core_cells(mesh);
    let max = m.iter().fold(0.0f64, |a, b| a.max(b.abs()));
    if max.is_nan() || max <= 0.0 {
        return Some(0.0);
    }
    let swing = 0.05 * max;
    let at = |i: usize, j: usize, k: usize| m[i + nx * (j + ny * k)];
    let extreme = |a: f64, b: f64, c: f64| {
        ((b - a) > swing && (b - c) > swing) || ((a - b) > swing && (c - b) > swing)
    };
    let (mut n, mut hits) = (0usize, 0usize);
    for (c, &is_core) in core.iter().enumerate() {
        let (i, j, k) = mesh.ijk(c);
        if !is_core || i == 0 || j == 0 || i + 1 == nx || j + 1 == ny {
            continue;
        }
        n += 1;
        let v = at(i, j, k);
        if extreme(at(i - 1, j, k), v, at(i + 1, j, k))
            && extreme(at(i, j - 1, k), v, at(i, j + 1, k))
        {
            hits += 1;
        }
    }
    (n >= 9).then(|| hits as f64 / n as f64)
}
