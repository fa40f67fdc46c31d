//! Structural checks of residuals (issue 21): does the misfit a model leaves have a pattern?
//!
//! The normalised residuals r_i = (d_i − f_i)/σ_i of a model that explains its data are
//! independent and have no structure, whatever their size. Grouped by something the model
//! must not be biased along — a pseudosection level or an electrode (ERT), a shot or an offset
//! band (seismic), a gate (TDEM), a period band (MT) — each group's mean is tested against
//! the overall scatter:
//!
//! z_g = mean_g(r) · √n_g / s,  s = √(mean r²) over all data,
//!
//! which for residuals without structure is close to a standard normal variable. A group with
//! |z_g| > [`Z_FLAG`] (3.5: p ≈ 5·10⁻⁴ per group for Gaussian residuals) is a pattern: the
//! model is biased there. Dividing by s rather than by 1 makes this a test of structure, not
//! of size (an underfit with random residuals is the data-fit check's business).
//!
//! Along an ordered axis (periods, gates) the Wald–Wolfowitz runs test (Wald & Wolfowitz
//! 1940) counts runs of same-sign residuals: with n₊ positive and n₋ negative residuals,
//! E[R] = 1 + 2n₊n₋/n and Var[R] = 2n₊n₋(2n₊n₋ − n)/(n²(n − 1)); z = (R − E[R])/√Var[R], and
//! too few runs (z < −[`Z_FLAG`]) is a pattern.
//!
//! With many data a small bias is significant without mattering, so a group's score rests on
//! its size as well: e_g = mean_g / max(s, 1), the bias in data errors while the residuals
//! are within their errors, in units of the overall scatter when they are not (|e| = 1: the
//! group's mean residual is one error, or as large as the rms of all). Score of a grouping: 100
//! while no group is flagged or the worst flagged |e| ≤ [`EFFECT_FREE`] (1), then falling
//! linearly to 0 at [`EFFECT_ZERO`] (2.5); with the shared check pass mark
//! ([`super::quality::CHECK_PASS`], 50) a model fails when a significant group is biased by
//! more than 1.75 times the scatter. Runs: 100 while z ≥ −Z_FLAG, then
//! 100 − [`POINTS_PER_Z`]·(−z − Z_FLAG), so too few runs at z < −6 fail.

use std::collections::BTreeMap;
use std::fmt::Display;

use serde::{Deserialize, Serialize};

use super::quality::Component;
use crate::runtime::product::short_num as num;

/// |z| above which a group's mean residual (or a runs count) is a pattern.
pub const Z_FLAG: f64 = 3.5;
/// Score points lost per unit of |z| beyond [`Z_FLAG`].
pub const POINTS_PER_Z: f64 = 20.0;
/// Groups with fewer data are not tested (their mean says too little).
pub const MIN_GROUP: usize = 3;
/// A flagged group's bias |e| up to this (in units of the scatter) still scores 100.
pub const EFFECT_FREE: f64 = 1.0;
/// … and at this it scores 0.
pub const EFFECT_ZERO: f64 = 2.5;

/// One group's residual statistics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupStat {
    /// The group ("level 8", "shot 12", "gate 21").
    pub key: String,
    /// Data in the group.
    pub n: usize,
    /// Mean normalised residual of the group.
    pub mean: f64,
    /// z_g of the module docs.
    pub z: f64,
}

/// Residuals grouped by one key (module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResidualPattern {
    /// What the groups are ("pseudosection level", "electrode", "shot").
    pub what: String,
    /// s: rms of all normalised residuals.
    pub rms: f64,
    /// Groups tested (with at least [`MIN_GROUP`] data).
    pub n_groups: usize,
    /// The group with the largest |z|, when any was tested.
    pub worst: Option<GroupStat>,
    /// The groups with |z| > [`Z_FLAG`].
    pub flagged: Vec<GroupStat>,
}

impl ResidualPattern {
    /// Group `residuals` (normalised) by `keys(i)` — a datum may belong to several groups
    /// (an ERT datum to its four electrodes) — and test each group (module docs).
    pub fn by_group<K: Ord + Display>(
        what: &str,
        residuals: &[f64],
        keys: impl Fn(usize) -> Vec<K>,
    ) -> Self {
        let finite: Vec<f64> = residuals
            .iter()
            .copied()
            .filter(|r| r.is_finite())
            .collect();
        let rms = (finite.iter().map(|r| r * r).sum::<f64>() / finite.len().max(1) as f64).sqrt();
        let mut sums: BTreeMap<K, (f64, usize)> = BTreeMap::new();
        for (i, r) in residuals.iter().enumerate().filter(|(_, r)| r.is_finite()) {
            for k in keys(i) {
                let e = sums.entry(k).or_insert((0.0, 0));
                e.0 += r;
                e.1 += 1;
            }
        }
        let stats: Vec<GroupStat> = sums
            .into_iter()
            .filter(|(_, (_, n))| *n >= MIN_GROUP)
            .map(|(k, (s, n))| {
                let mean = s / n as f64;
                let z = if rms > 0.0 {
                    mean * (n as f64).sqrt() / rms
                } else {
                    0.0
                };
                GroupStat {
                    key: format!("{what} {k}"),
                    n,
                    mean,
                    z,
                }
            })
            .collect();
        let worst = stats
            .iter()
            .max_by(|a, b| a.z.abs().total_cmp(&b.z.abs()))
            .cloned();
        let flagged = stats
            .iter()
            .filter(|g| g.z.abs() > Z_FLAG)
            .cloned()
            .collect();
        ResidualPattern {
            what: what.to_string(),
            rms,
            n_groups: stats.len(),
            worst,
            flagged,
        }
    }

    /// The worst |z| (0 when no group was tested).
    pub fn worst_z(&self) -> f64 {
        self.worst.as_ref().map_or(0.0, |g| g.z.abs())
    }

    /// The largest bias |e| = |mean|/max(s, 1) among the flagged groups (0 when none is
    /// flagged).
    pub fn worst_effect(&self) -> f64 {
        self.flagged
            .iter()
            .map(|g| g.mean.abs() / self.rms.max(1.0))
            .fold(0.0, f64::max)
    }

    /// The check's score (module docs).
    pub fn score(&self) -> f64 {
        let e = self.worst_effect();
        if !e.is_finite() {
            return 0.0;
        }
        (100.0 * (EFFECT_ZERO - e) / (EFFECT_ZERO - EFFECT_FREE)).clamp(0.0, 100.0)
    }

    /// "by pseudosection level: 2 of 11 groups biased; worst level 8, mean −1.3σ over 40
    /// data (z −4.2)".
    pub fn note(&self) -> String {
        match &self.worst {
            None => format!("by {}: no group of {MIN_GROUP} or more data", self.what),
            Some(w) => format!(
                "by {}: {} of {} groups biased (|z| > {Z_FLAG}); worst {}, mean {} errors (or × the scatter, when larger) over {} data (z {})",
                self.what,
                self.flagged.len(),
                self.n_groups,
                w.key,
                signed(w.mean / self.rms.max(1.0)),
                w.n,
                signed(w.z)
            ),
        }
    }
}

/// Runs of same-sign residuals along an ordered axis (module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SignRuns {
    /// What the axis is ("period", "gate").
    pub what: String,
    /// Residuals counted (non-zero, finite).
    pub n: usize,
    /// Runs found.
    pub runs: usize,
    /// Runs expected for independent signs.
    pub expected: f64,
    /// (runs − expected)/σ; negative = too few runs (same-sign stretches).
    pub z: f64,
}

impl SignRuns {
    /// Count the runs of `residuals` in the order given.
    pub fn of(what: &str, residuals: &[f64]) -> Self {
        let signs: Vec<bool> = residuals
            .iter()
            .filter(|r| r.is_finite() && **r != 0.0)
            .map(|r| *r > 0.0)
            .collect();
        let n = signs.len();
        let runs = if n == 0 {
            0
        } else {
            1 + signs.windows(2).filter(|w| w[0] != w[1]).count()
        };
        let np = signs.iter().filter(|s| **s).count() as f64;
        let nm = n as f64 - np;
        let nf = n as f64;
        let expected = if n > 0 { 1.0 + 2.0 * np * nm / nf } else { 0.0 };
        let var = if n > 1 {
            2.0 * np * nm * (2.0 * np * nm - nf) / (nf * nf * (nf - 1.0))
        } else {
            0.0
        };
        let z = if var > 0.0 {
            (runs as f64 - expected) / var.sqrt()
        } else {
            0.0
        };
        SignRuns {
            what: what.to_string(),
            n,
            runs,
            expected,
            z,
        }
    }

    /// The check's score: only too few runs count against a model.
    pub fn score(&self) -> f64 {
        z_score((-self.z).max(0.0))
    }

    /// "along period: 4 runs of same sign in 50 residuals, 26 expected (z −6.1)".
    pub fn note(&self) -> String {
        format!(
            "along {}: {} runs of same sign in {} residuals, {} expected (z {})",
            self.what,
            self.runs,
            self.n,
            num(self.expected),
            signed(self.z)
        )
    }
}

/// The score of a |z| (module docs).
pub fn z_score(z_abs: f64) -> f64 {
    if !z_abs.is_finite() {
        return 0.0;
    }
    (100.0 - POINTS_PER_Z * (z_abs - Z_FLAG).max(0.0)).clamp(0.0, 100.0)
}

/// One `residual_pattern` component from several groupings and runs tests: the lowest
/// score, every note.
pub fn residual_component(
    weight: f64,
    patterns: &[ResidualPattern],
    runs: &[SignRuns],
) -> Component {
    let scores = patterns
        .iter()
        .map(ResidualPattern::score)
        .chain(runs.iter().map(SignRuns::score));
    let Some(score) = scores.reduce(f64::min) else {
        return Component::unscored("residual_pattern", weight, "no residuals to group");
    };
    let notes: Vec<String> = patterns
        .iter()
        .map(ResidualPattern::note)
        .chain(runs.iter().map(SignRuns::note))
        .collect();
    Component::scored("residual_pattern", weight, score, notes.join("; "))
}

/// `+1.2` / `−0.4` with the kit's precision.
fn signed(v: f64) -> String {
    if v > 0.0 {
        format!("+{}", num(v))
    } else {
        num(v).replace('-', "−")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Alternating ±1 residuals: every group mean 0 when groups span both signs.
    #[test]
    fn no_pattern_scores_full_and_a_biased_group_fails() {
        let r: Vec<f64> = (0..200)
            .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        let p = ResidualPattern::by_group("level", &r, |i| vec![i / 10]);
        assert_eq!(p.score(), 100.0, "{}", p.note());
        // Level 0 (10 data) shifted by +3 (values 4 and 2, mean 3): s = √(290/200) ≈ 1.204,
        // z = 3·√10/1.204 ≈ 7.88 (by hand): flagged; its bias e = 3/1.204 ≈ 2.49 scores
        // 100·(2.5 − 2.49)/1.5 ≈ 0.6 < 50.
        let mut b = r.clone();
        for v in b.iter_mut().take(10) {
            *v += 3.0;
        }
        let p = ResidualPattern::by_group("level", &b, |i| vec![i / 10]);
        assert!((p.worst_z() - 7.88).abs() < 0.01, "{}", p.note());
        assert!((p.worst_effect() - 3.0 / 1.45f64.sqrt()).abs() < 1e-9);
        assert!(p.score() < 1.0, "{}", p.score());
        assert_eq!(p.flagged.len(), 1);
        // Shifted by +1.5 instead (values 2.5 and 0.5, mean 1.5): by hand Σr² = 190 +
        // 5·6.25 + 5·0.25 = 222.5, s ≈ 1.055, z = 1.5·√10/1.055 ≈ 4.5 (flagged), e ≈ 1.42:
        // a significant but moderate bias, score ≈ 72 (passes).
        let mut m = r.clone();
        for v in m.iter_mut().take(10) {
            *v += 1.5;
        }
        let p = ResidualPattern::by_group("level", &m, |i| vec![i / 10]);
        assert_eq!(p.flagged.len(), 1, "{}", p.note());
        let e = 1.5 / (222.5f64 / 200.0).sqrt();
        assert!((p.worst_effect() - e).abs() < 1e-9);
        assert!((p.score() - 100.0 * (2.5 - e) / 1.5).abs() < 1e-9 && p.score() > 50.0);
        assert!(p.note().contains("level 0"), "{}", p.note());
    }

    /// 40 residuals in two same-sign halves: 2 runs, 21 expected, Var = 2·400·760/(1600·39)
    /// ≈ 9.74, z = −19/√9.74 ≈ −6.09 (by hand); alternating signs have 40 runs (z > 0, score 100).
    #[test]
    fn runs_test_counts_same_sign_stretches() {
        let halves: Vec<f64> = (0..40).map(|i| if i < 20 { 1.0 } else { -1.0 }).collect();
        let r = SignRuns::of("period", &halves);
        assert_eq!(r.runs, 2);
        assert!((r.expected - 21.0).abs() < 1e-12);
        assert!(
            (r.z + 19.0 / (608_000.0f64 / 62_400.0).sqrt()).abs() < 1e-9,
            "{}",
            r.z
        );
        assert!(r.score() < 55.0);
        let alt: Vec<f64> = (0..40)
            .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        assert_eq!(SignRuns::of("period", &alt).score(), 100.0);
    }
}
