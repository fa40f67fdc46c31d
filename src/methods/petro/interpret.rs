//! Water content at a depth, or per depth band, from a converted model: the cells whose
//! centroid lies in the band (and that are covered), their median mean θ and, as its
//! uncertainty, the median of their Monte Carlo standard deviations (the spread of
//! θ = φ·S over the petrophysical prior's draws, [`super::monte_carlo`]). Median, not mean: a
//! few poorly resolved cells at a band's edge do not move it.

use serde::{Deserialize, Serialize};

use crate::methods::depth::median;

/// The water content of one depth band.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BandWaterContent {
    /// Top of the band below the surface, m.
    pub depth_top_m: f64,
    /// Bottom of the band, m.
    pub depth_bottom_m: f64,
    /// Median of the cells' mean θ, m³/m³.
    pub theta_m3_per_m3: f64,
    /// Median of the cells' Monte Carlo σ(θ), m³/m³.
    pub sigma_m3_per_m3: f64,
    /// Cells in the band.
    pub n_cells: usize,
}

/// The water content of `[top, bottom)` from per-cell depths, mean θ, σ(θ) and a coverage
/// mask (module docs); `None` when no covered cell lies in the band.
pub fn band(
    depth_m: &[f64],
    theta_mean: &[f64],
    theta_std: &[f64],
    covered: &[bool],
    top_m: f64,
    bottom_m: f64,
) -> Option<BandWaterContent> {
    let cells: Vec<usize> = (0..depth_m.len())
        .filter(|&j| covered[j] && depth_m[j] >= top_m && depth_m[j] < bottom_m)
        .filter(|&j| theta_mean[j].is_finite() && theta_std[j].is_finite())
        .collect();
    let theta: Vec<f64> = cells.iter().map(|&j| theta_mean[j]).collect();
    let sigma: Vec<f64> = cells.iter().map(|&j| theta_std[j]).collect();
    Some(BandWaterContent {
        depth_top_m: top_m,
        depth_bottom_m: bottom_m,
        theta_m3_per_m3: median(&theta)?,
        sigma_m3_per_m3: median(&sigma)?,
        n_cells: cells.len(),
    })
}

/// Bands of `step_m` from the surface down to `max_depth_m`, each that has covered cells.
pub fn bands(
    depth_m: &[f64],
    theta_mean: &[f64],
    theta_std: &[f64],
    covered: &[bool],
    step_m: f64,
    max_depth_m: f64,
) -> Vec<BandWaterContent> {
    let n = (max_depth_m / step_m).ceil() as usize;
    (0..n)
        .filter_map(|k| {
            let top = k as f64 * step_m;
            band(depth_m, theta_mean, theta_std, covered, top, top + step_m)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_take_the_median_of_covered_cells() {
        let depth = [0.5, 1.5, 1.6, 1.7, 2.5, 3.5];
        let theta = [0.10, 0.20, 0.22, 0.90, 0.30, 0.35];
        let std = [0.01, 0.02, 0.03, 0.04, 0.05, 0.06];
        let covered = [true, true, true, true, true, false];
        let b = bands(&depth, &theta, &std, &covered, 1.0, 4.0);
        // 3–4 m holds only an uncovered cell: three bands.
        assert_eq!(b.len(), 3);
        // 1–2 m: θ 0.20, 0.22, 0.90 → median 0.22 (the outlier does not move it).
        assert_eq!(b[1].theta_m3_per_m3, 0.22);
        assert_eq!(b[1].sigma_m3_per_m3, 0.03);
        assert_eq!(b[1].n_cells, 3);
        assert!(band(&depth, &theta, &std, &covered, 10.0, 11.0).is_none());
    }
}
