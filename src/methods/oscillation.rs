//! The oscillation of a model between neighbouring cells (issue 21): a check that does not
//! come from the misfit.
//!
//! A model regularised to the discrepancy principle is the smoothest that fits its data: its
//! strict local extremes (a cell above, or below, every neighbour) sit at the few peaks of
//! its features. A model fitted to the noise (λ → 0) alternates between neighbours like a
//! checkerboard. The oscillation index is the share of cells with at least two neighbours
//! that are a strict local extreme of ln(value) with a swing (the smallest difference to a
//! neighbour) above [`SWING_SHARE`] of the model's ln range — the grav/mag check of
//! `gravmag/checks.rs` on any cell graph.
//!
//! Score: 100 while the index ≤ [`INDEX_FREE`], then falling linearly to 0 at
//! [`INDEX_ZERO`]; below the check pass mark (50) the model fails.

use crate::methods::quality::Component;
use crate::runtime::product::short_num as num;

/// A local extreme counts when its swing exceeds this share of the model's ln range.
pub const SWING_SHARE: f64 = 0.05;
/// Indices up to this score 100 (the peaks and troughs of a smooth model).
pub const INDEX_FREE: f64 = 0.05;
/// The index at which the score reaches 0.
pub const INDEX_ZERO: f64 = 0.25;

/// The oscillation index (module docs) of positive `values` on the cell graph `neighbours`;
/// `None` when no cell has two neighbours or a value is not positive.
pub fn oscillation_index(values: &[f64], neighbours: &[[usize; 2]]) -> Option<f64> {
    if values.iter().any(|v| !(*v > 0.0 && v.is_finite())) {
        return None;
    }
    let lv: Vec<f64> = values.iter().map(|v| v.ln()).collect();
    let (lo, hi) = lv
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(*x), b.max(*x))
        });
    let mut adj: Vec<Vec<usize>> = vec![Vec::new(); values.len()];
    for [i, j] in neighbours {
        if *i < values.len() && *j < values.len() && i != j {
            adj[*i].push(*j);
            adj[*j].push(*i);
        }
    }
    let (mut n, mut extremes) = (0usize, 0usize);
    for (i, a) in adj.iter().enumerate().filter(|(_, a)| a.len() >= 2) {
        n += 1;
        let above = a.iter().all(|j| lv[i] > lv[*j]);
        let below = a.iter().all(|j| lv[i] < lv[*j]);
        let swing = a
            .iter()
            .map(|j| (lv[i] - lv[*j]).abs())
            .fold(f64::INFINITY, f64::min);
        if (above || below) && swing > SWING_SHARE * (hi - lo) {
            extremes += 1;
        }
    }
    (n > 0).then_some(extremes as f64 / n.max(1) as f64)
}

/// The score of an index (module docs).
pub fn oscillation_score(index: f64) -> f64 {
    (100.0 * (INDEX_ZERO - index) / (INDEX_ZERO - INDEX_FREE)).clamp(0.0, 100.0)
}

/// The `oscillation` component of a model.
pub fn oscillation_component(weight: f64, values: &[f64], neighbours: &[[usize; 2]]) -> Component {
    match oscillation_index(values, neighbours) {
        Some(ix) => Component::scored(
            "oscillation",
            weight,
            oscillation_score(ix),
            format!(
                "{} % of the cells are a local extreme against all their neighbours (smooth models: ≤ {} %; a checkerboard fitted to the noise: ≈ 25 % or more)",
                num(100.0 * ix),
                num(100.0 * INDEX_FREE)
            ),
        ),
        None => Component::unscored(
            "oscillation",
            weight,
            "no cell with two neighbours (or a non-positive value): not judged",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 10 × 10 grid: a smooth ramp has no interior extreme (index 0, score 100); a
    /// checkerboard of 1 and 2 makes every cell an extreme (index 1, score 0).
    #[test]
    fn a_ramp_scores_full_and_a_checkerboard_fails() {
        let idx = |i: usize, j: usize| i * 10 + j;
        let mut nb = Vec::new();
        for i in 0..10 {
            for j in 0..10 {
                if i + 1 < 10 {
                    nb.push([idx(i, j), idx(i + 1, j)]);
                }
                if j + 1 < 10 {
                    nb.push([idx(i, j), idx(i, j + 1)]);
                }
            }
        }
        let ramp: Vec<f64> = (0..100).map(|k| 1.0 + (k % 10 + k / 10) as f64).collect();
        let ramp_ix = oscillation_index(&ramp, &nb).unwrap();
        // Only the corner (0, 0) counts: its swing ln 2 exceeds 5 % of the ln range
        // (0.05·ln 19 = 0.147); the (9, 9) corner swings ln(19/18) = 0.054. 1 of 100.
        assert!((ramp_ix - 0.01).abs() < 1e-12, "{ramp_ix}");
        assert_eq!(oscillation_score(ramp_ix), 100.0);
        let board: Vec<f64> = (0..100)
            .map(|k| if (k % 10 + k / 10) % 2 == 0 { 1.0 } else { 2.0 })
            .collect();
        assert_eq!(oscillation_index(&board, &nb), Some(1.0));
        assert_eq!(oscillation_score(1.0), 0.0);
        assert!(oscillation_index(&[0.0, 1.0, 2.0], &nb[..2]).is_none());
    }
}
