//! A depth read along a line (one value per profile), its summary with an uncertainty, and
//! the agreement of several methods' estimates of one depth.
//!
//! Summary of a profile: the median depth, and as its spread the normalised median absolute
//! deviation `1.4826 · median|d − median(d)|` (equal to σ for normal scatter; Rousseeuw &
//! Croux 1993). The uncertainty of the estimate is `√(σ_method² + σ_spread²)`, where
//! `σ_method` is what the method says about its own resolution at that depth (each
//! interpretation states it).
//!
//! Agreement: two estimates agree when `|a − b| ≤ 2 √(σa² + σb²)` (their difference within
//! two standard deviations). The combined value of estimates that all agree pairwise is the
//! inverse-variance weighted mean `Σ(dᵢ/σᵢ²) / Σ(1/σᵢ²)` with `σ = (Σ 1/σᵢ²)^(-1/2)`; the
//! set combined is the largest that agrees, of equal ones the one with the smallest χ² about
//! its mean ([`largest_agreeing`]).

use serde::{Deserialize, Serialize};

pub use super::shared::stats::median;

/// A depth below ground read along a line: one value per profile.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DepthProfile {
    /// Position along the line of each profile, m.
    pub x_m: Vec<f64>,
    /// Depth below the surface, m.
    pub depth_m: Vec<f64>,
    /// Elevation, m.
    pub z_m: Vec<f64>,
}

impl DepthProfile {
    /// Add one profile's depth.
    pub fn push(&mut self, x_m: f64, depth_m: f64, z_m: f64) {
        self.x_m.push(x_m);
        self.depth_m.push(depth_m);
        self.z_m.push(z_m);
    }

    /// Number of profiles with a depth.
    pub fn len(&self) -> usize {
        self.x_m.len()
    }

    /// Whether no profile gave a depth.
    pub fn is_empty(&self) -> bool {
        self.x_m.is_empty()
    }

    /// The `x_m,depth_m,z_m` table.
    pub fn to_csv(&self) -> String {
        let mut s = String::from("x_m,depth_m,z_m\n");
        for i in 0..self.len() {
            s.push_str(&format!(
                "{:.4},{:.4},{:.4}\n",
                self.x_m[i], self.depth_m[i], self.z_m[i]
            ));
        }
        s
    }
}

/// One method's estimate of a depth (module docs give the summary).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DepthEstimate {
    /// Median depth below the surface, m.
    pub depth_m: f64,
    /// One standard deviation, m: the method's resolution and the spread along the line.
    pub uncertainty_m: f64,
    /// The method's own resolution at that depth, m.
    pub resolution_m: f64,
    /// The spread along the line (normalised MAD), m.
    pub spread_m: f64,
    /// The x range the profiles cover, m.
    pub x_range_m: (f64, f64),
    /// The profiles.
    pub profile: DepthProfile,
    /// How it was read, in one sentence.
    pub how: String,
}

/// Normalised median absolute deviation (module docs).
pub fn mad_sigma(v: &[f64]) -> Option<f64> {
    let m = median(v)?;
    let dev: Vec<f64> = v.iter().map(|x| (x - m).abs()).collect();
    median(&dev).map(|d| 1.4826 * d)
}

/// The smallest decrease of log10 ρ across a step that counts as a water table (a fall of
/// 20 %: log10(1/0.8); a smaller fall is not a saturated zone, Archie 1942: ρ drops by
/// `S^-n` as `S → 1`).
pub const MIN_DROP_LOG10: f64 = 0.0969;

/// Summarise a profile with the method's resolution (module docs); `None` when it is empty.
pub fn summarise(profile: DepthProfile, resolution_m: f64, how: String) -> Option<DepthEstimate> {
    let depth_m = median(&profile.depth_m)?;
    let spread_m = mad_sigma(&profile.depth_m).unwrap_or(0.0);
    let (x0, x1) = profile
        .x_m
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    Some(DepthEstimate {
        depth_m,
        uncertainty_m: resolution_m.hypot(spread_m),
        resolution_m,
        spread_m,
        x_range_m: (x0, x1),
        profile,
        how,
    })
}

/// Whether two values with standard deviations agree (module docs: within 2σ of their
/// difference).
pub fn agree(a: f64, sa: f64, b: f64, sb: f64) -> bool {
    (a - b).abs() <= 2.0 * sa.hypot(sb)
}

/// The inverse-variance weighted mean and its σ (module docs); `None` when any σ is not
/// positive and finite or there is nothing to combine.
pub fn inverse_variance(values: &[(f64, f64)]) -> Option<(f64, f64)> {
    if values.is_empty() || values.iter().any(|(_, s)| !(s.is_finite() && *s > 0.0)) {
        return None;
    }
    let w: f64 = values.iter().map(|(_, s)| 1.0 / (s * s)).sum();
    let m = values.iter().map(|(v, s)| v / (s * s)).sum::<f64>() / w;
    Some((m, 1.0 / w.sqrt()))
}

/// The largest set of estimates (indices) that agree pairwise; among sets of equal size the
/// one whose members agree best, the smallest `χ² = Σ (dᵢ − d̄)²/σᵢ²` about their
/// inverse-variance mean `d̄` (an estimate with a wide σ agrees with two that disagree with
/// each other, and must not decide which of them is combined by the order it was listed
/// in); a single estimate when no two agree.
pub fn largest_agreeing(values: &[(f64, f64)]) -> Vec<usize> {
    let n = values.len();
    let mut best: Vec<usize> = (0..n.min(1)).collect();
    let mut best_chi2 = 0.0;
    // At most a handful of methods: every subset is cheap (2^6 = 64).
    for mask in 1u32..(1u32 << n.min(16)) {
        let set: Vec<usize> = (0..n).filter(|i| mask & (1 << i) != 0).collect();
        if set.len() < best.len() || set.len() < 2 {
            continue;
        }
        let ok = set.iter().enumerate().all(|(k, &i)| {
            set[k + 1..]
                .iter()
                .all(|&j| agree(values[i].0, values[i].1, values[j].0, values[j].1))
        });
        if !ok {
            continue;
        }
        let chosen: Vec<(f64, f64)> = set.iter().map(|&i| values[i]).collect();
        let chi2 = inverse_variance(&chosen).map_or(f64::INFINITY, |(m, _)| {
            chosen.iter().map(|(d, s)| ((d - m) / s).powi(2)).sum()
        });
        if set.len() > best.len() || chi2 < best_chi2 {
            best = set;
            best_chi2 = chi2;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_is_summarised_by_its_median_and_spread() {
        let mut p = DepthProfile::default();
        for (i, d) in [4.0, 4.2, 3.8, 4.1, 3.9, 9.0].iter().enumerate() {
            p.push(i as f64, *d, 100.0 - d);
        }
        let e = summarise(p, 0.3, "test".into()).unwrap();
        // Median of the six: (3.9 + 4.0 + 4.1 + 4.2)/… → 4.05 (hand count); the outlier at
        // 9 m moves the median by half a step, not the mean's 0.8 m.
        assert!((e.depth_m - 4.05).abs() < 1e-12, "{}", e.depth_m);
        // |d − 4.05| = 0.05, 0.15, 0.25, 0.05, 0.15, 4.95 → median 0.15 → σ 0.2224.
        assert!((e.spread_m - 1.4826 * 0.15).abs() < 1e-9, "{}", e.spread_m);
        assert!((e.uncertainty_m - 0.3f64.hypot(e.spread_m)).abs() < 1e-12);
        assert_eq!(e.x_range_m, (0.0, 5.0));
        assert!(summarise(DepthProfile::default(), 0.3, "x".into()).is_none());
    }

    #[test]
    fn agreeing_values_are_combined_and_disagreeing_ones_are_not() {
        // 4.0 ± 0.3 and 4.2 ± 0.4: weights 11.11 and 6.25 → 4.072, σ 0.24 (hand computed).
        let (m, s) = inverse_variance(&[(4.0, 0.3), (4.2, 0.4)]).unwrap();
        assert!((m - 4.072).abs() < 1e-3, "{m}");
        assert!((s - 0.24).abs() < 1e-3, "{s}");
        assert!(agree(4.0, 0.3, 4.2, 0.4));
        assert!(!agree(4.0, 0.3, 6.0, 0.4), "2.0 m apart is 4σ");
        assert_eq!(
            largest_agreeing(&[(6.5, 0.3), (4.0, 0.3), (4.2, 0.4)]),
            vec![1, 2]
        );
        assert_eq!(largest_agreeing(&[(1.0, 0.1), (5.0, 0.1)]), vec![0]);
        // A shallow-water-table truth as a run measured it (2026-12-02): seismic 5.28 ± 1.01,
        // ERT 2.25 ± 1.86, GPR 2.11 ± 0.21 m. ERT agrees with both, seismic and GPR do not
        // agree; of the two pairs, ERT–GPR agree far better (χ² 0.0056 against 2.05, hand
        // computed), whichever order the methods come in.
        let shallow = [(5.28, 1.01), (2.25, 1.86), (2.11, 0.21)];
        assert_eq!(largest_agreeing(&shallow), vec![1, 2]);
        let reordered = [(2.11, 0.21), (2.25, 1.86), (5.28, 1.01)];
        assert_eq!(largest_agreeing(&reordered), vec![0, 1]);
        assert!(
            inverse_variance(&[(1.0, 0.0)]).is_none(),
            "a zero σ is refused"
        );
    }
}
