//! Quality control of ERT data: geometric factors, apparent resistivity, reciprocal
//! pairing and errors, the error model of Koestel et al. (2008), and data filters.

/// Geometric factor of a four-electrode array on flat ground (half-space), m:
/// k = 2π / (1/AM − 1/BM − 1/AN + 1/BN) (e.g. Telford et al. 1990, eq. 8.28), positions
/// along the line in m; an infinite position is a remote electrode (its terms vanish).
pub fn geometric_factor_flat(a: f64, b: f64, m: f64, n: f64) -> f64 {
    let inv = |p: f64, q: f64| {
        if p.is_finite() && q.is_finite() {
            1.0 / (p - q).abs()
        } else {
            0.0
        }
    };
    2.0 * std::f64::consts::PI / (inv(a, m) - inv(b, m) - inv(a, n) + inv(b, n))
}

/// The same factor for electrodes at 3D points on or in a flat half-space, m:
/// k = 2π / (1/AM − 1/BM − 1/AN + 1/BN) with straight-line distances r = |P − Q|
/// (Telford et al. 1990, eq. 8.28); `None` is a remote electrode at infinity.
pub fn geometric_factor_points(
    a: Option<[f64; 3]>,
    b: Option<[f64; 3]>,
    m: Option<[f64; 3]>,
    n: Option<[f64; 3]>,
) -> f64 {
    let inv = |p: Option<[f64; 3]>, q: Option<[f64; 3]>| match (p, q) {
        (Some(p), Some(q)) => {
            let r = ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt();
            if r > 0.0 { 1.0 / r } else { 0.0 }
        }
        _ => 0.0,
    };
    2.0 * std::f64::consts::PI / (inv(a, m) - inv(b, m) - inv(a, n) + inv(b, n))
}

use super::survey::{Quadrupole, Survey};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Flat-ground geometric factors of every quadrupole of a survey (positions along the line),
/// m; NaN where the survey's electrodes are not on flat ground (use
/// [`super::fem::ForwardOperator::geometric_factors`], numerical, there).
pub fn geometric_factors(s: &Survey) -> Vec<f64> {
    let pos = s.line_positions();
    let flat = s.is_flat_line();
    s.quadrupoles
        .iter()
        .map(|q| {
            if !flat {
                return f64::NAN;
            }
            let x = |e: Option<usize>| {
                e.and_then(|i| pos.get(i))
                    .map(|p| p[0])
                    .unwrap_or(f64::INFINITY)
            };
            geometric_factor_flat(x(q.a), x(q.b), x(q.m), x(q.n))
        })
        .collect()
}

/// Apparent resistivity ρa = k·R, Ω·m, for the survey's resistances and the given factors.
pub fn apparent_resistivity(s: &Survey, k_m: &[f64]) -> Vec<f64> {
    s.resistances_ohm()
        .iter()
        .zip(k_m)
        .map(|(r, k)| r * k)
        .collect()
}

/// A normal datum and its reciprocal (A B M N ↔ M N A B, either polarity).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ReciprocalPair {
    /// Index of the normal datum.
    pub normal: usize,
    /// Index of the reciprocal datum.
    pub reciprocal: usize,
    /// Mean |R| of the two, Ω.
    pub r_mean_ohm: f64,
    /// |R_n − R_r| (the reciprocal's sign aligned), Ω.
    pub dr_ohm: f64,
    /// Reciprocal error |R_n − R_r| / mean |R|.
    pub rel_error: f64,
}

/// Pair every datum with its reciprocal, if measured: (A, B, M, N) ↔ (M, N, A, B), where
/// swapping A↔B or M↔N only flips the sign of R (reciprocity theorem; e.g. Parasnis 1988).
pub fn reciprocal_pairs(s: &Survey) -> Vec<ReciprocalPair> {
    let r = s.resistances_ohm();
    let key = |q: &Quadrupole| -> (
        (Option<usize>, Option<usize>),
        (Option<usize>, Option<usize>),
        f64,
    ) {
        let (ab, sa) = if q.a <= q.b {
            ((q.a, q.b), 1.0)
        } else {
            ((q.b, q.a), -1.0)
        };
        let (mn, sm) = if q.m <= q.n {
            ((q.m, q.n), 1.0)
        } else {
            ((q.n, q.m), -1.0)
        };
        (ab, mn, sa * sm)
    };
    let mut index: HashMap<
        (
            (Option<usize>, Option<usize>),
            (Option<usize>, Option<usize>),
        ),
        (usize, f64),
    > = HashMap::new();
    for (i, q) in s.quadrupoles.iter().enumerate() {
        let (ab, mn, sg) = key(q);
        index.entry((ab, mn)).or_insert((i, sg));
    }
    let mut out = Vec::new();
    let mut used = vec![false; s.quadrupoles.len()];
    for (i, q) in s.quadrupoles.iter().enumerate() {
        if used[i] {
            continue;
        }
        let (ab, mn, sg) = key(q);
        if let Some(&(j, sg2)) = index.get(&(mn, ab))
            && j != i
            && !used[j]
        {
            let (rn, rr) = (r[i] * sg, r[j] * sg2);
            if rn.is_finite() && rr.is_finite() {
                let mean = 0.5 * (rn.abs() + rr.abs());
                let dr = (rn - rr).abs();
                out.push(ReciprocalPair {
                    normal: i,
                    reciprocal: j,
                    r_mean_ohm: mean,
                    dr_ohm: dr,
                    rel_error: if mean > 0.0 { dr / mean } else { f64::NAN },
                });
                used[i] = true;
                used[j] = true;
            }
        }
    }
    out
}

/// The power-law error model of Koestel et al. (2008, Vadose Zone J. 7): the reciprocal
/// differences follow log10|ΔR| = m·log10|R| + b, fitted over equal-count bins of |R|; the
/// relative error of a datum is then 10^b·|R|^(m−1), floored at `floor`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorModel {
    /// Slope m.
    pub slope: f64,
    /// Intercept b (log10 Ω).
    pub intercept: f64,
    /// Floor of the relative error (fraction).
    pub floor: f64,
    /// Reciprocal pairs used.
    pub n_pairs: usize,
    /// Bins the fit used (mean log10|R|, mean log10|ΔR|).
    pub bins: Vec<[f64; 2]>,
}

impl ErrorModel {
    /// Relative error of a datum with resistance `r_ohm`.
    pub fn relative_error(&self, r_ohm: f64) -> f64 {
        let e = 10f64.powf(self.intercept) * r_ohm.abs().powf(self.slope - 1.0);
        if e.is_finite() {
            e.max(self.floor)
        } else {
            self.floor
        }
    }
}

/// Fit the error model on reciprocal pairs: pairs sorted by |R|, grouped in `n_bins`
/// equal-count bins, least squares of the bins' mean log10|ΔR| on mean log10|R|
/// (Koestel et al. 2008). `None` when fewer than 2 bins with ΔR > 0 remain.
pub fn fit_error_model(pairs: &[ReciprocalPair], n_bins: usize, floor: f64) -> Option<ErrorModel> {
    let mut p: Vec<(f64, f64)> = pairs
        .iter()
        .filter(|p| p.r_mean_ohm > 0.0 && p.dr_ohm > 0.0)
        .map(|p| (p.r_mean_ohm.log10(), p.dr_ohm.log10()))
        .collect();
    p.sort_by(|a, b| a.0.total_cmp(&b.0));
    let nb = n_bins.max(2).min(p.len());
    if nb < 2 {
        return None;
    }
    let bins: Vec<[f64; 2]> = (0..nb)
        .map(|b| {
            let (lo, hi) = (b * p.len() / nb, (b + 1) * p.len() / nb);
            let chunk = &p[lo..hi];
            let n = chunk.len() as f64;
            [
                chunk.iter().map(|x| x.0).sum::<f64>() / n,
                chunk.iter().map(|x| x.1).sum::<f64>() / n,
            ]
        })
        .collect();
    let n = bins.len() as f64;
    let (mx, my) = (
        bins.iter().map(|b| b[0]).sum::<f64>() / n,
        bins.iter().map(|b| b[1]).sum::<f64>() / n,
    );
    let sxx: f64 = bins.iter().map(|b| (b[0] - mx).powi(2)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let slope = bins.iter().map(|b| (b[0] - mx) * (b[1] - my)).sum::<f64>() / sxx;
    Some(ErrorModel {
        slope,
        intercept: my - slope * mx,
        floor,
        n_pairs: p.len(),
        bins,
    })
}

/// Thresholds of [`filter`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FilterSettings {
    /// Keep ρa within this range, Ω·m (non-positive ρa is always removed).
    pub rhoa_range_ohm_m: (f64, f64),
    /// Remove data whose reciprocal error exceeds this fraction (both of the pair).
    pub max_reciprocal_error: f64,
    /// Remove data with |U| below this, V.
    pub min_voltage_v: f64,
    /// Remove data with |I| below this, A.
    pub min_current_a: f64,
    /// Remove data with |k| above this, m.
    pub max_abs_k_m: f64,
}

impl Default for FilterSettings {
    fn default() -> Self {
        FilterSettings {
            rhoa_range_ohm_m: (0.1, 1e5),
            max_reciprocal_error: 0.1,
            min_voltage_v: 1e-4,
            min_current_a: 1e-3,
            max_abs_k_m: 5000.0,
        }
    }
}

/// What a filter removed and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FilterReport {
    /// Data before filtering.
    pub n_before: usize,
    /// Data kept.
    pub n_after: usize,
    /// (reason, count) in the order the rules were applied; a datum is counted once, under
    /// the first rule that removed it.
    pub removed: Vec<(String, usize)>,
}

/// Remove bad data in place: non-positive or out-of-range ρa, high reciprocal error, tiny
/// voltage or current, huge |k|. Returns how many each rule removed.
pub fn filter(s: &mut Survey, k_m: &[f64], settings: &FilterSettings) -> FilterReport {
    let n = s.n_data();
    let rhoa = apparent_resistivity(s, k_m);
    let mut keep = vec![true; n];
    let mut removed: Vec<(String, usize)> = Vec::new();
    let mut rule = |name: String, bad: &dyn Fn(usize) -> bool, keep: &mut Vec<bool>| {
        let mut c = 0;
        for i in 0..n {
            if keep[i] && bad(i) {
                keep[i] = false;
                c += 1;
            }
        }
        removed.push((name, c));
    };
    rule(
        "non-positive or undefined ρa".into(),
        &|i| rhoa[i].is_nan() || rhoa[i] <= 0.0,
        &mut keep,
    );
    let (lo, hi) = settings.rhoa_range_ohm_m;
    rule(
        format!("ρa outside {lo}–{hi} Ω·m"),
        &|i| rhoa[i] < lo || rhoa[i] > hi,
        &mut keep,
    );
    let mut recip_bad = vec![false; n];
    for p in reciprocal_pairs(s) {
        if p.rel_error > settings.max_reciprocal_error {
            recip_bad[p.normal] = true;
            recip_bad[p.reciprocal] = true;
        }
    }
    rule(
        format!(
            "reciprocal error above {:.0} %",
            100.0 * settings.max_reciprocal_error
        ),
        &|i| recip_bad[i],
        &mut keep,
    );
    let u = s.u_v.clone();
    let cur = s.i_a.clone();
    rule(
        format!("|U| below {} V", settings.min_voltage_v),
        &|i| {
            u.as_ref()
                .is_some_and(|u| u[i].abs() < settings.min_voltage_v)
        },
        &mut keep,
    );
    rule(
        format!("|I| below {} A", settings.min_current_a),
        &|i| {
            cur.as_ref()
                .is_some_and(|c| c[i].abs() < settings.min_current_a)
        },
        &mut keep,
    );
    rule(
        format!("|k| above {} m", settings.max_abs_k_m),
        &|i| k_m[i].abs() > settings.max_abs_k_m,
        &mut keep,
    );
    s.retain_data(&keep);
    FilterReport {
        n_before: n,
        n_after: s.n_data(),
        removed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::ert::survey::{Electrode, Format};

    #[test]
    fn wenner_factor_is_two_pi_a() {
        // Wenner-α: k = 2πa (Telford et al. 1990, eq. 8.30).
        assert!(
            (geometric_factor_flat(0.0, 3.0, 1.0, 2.0) - 2.0 * std::f64::consts::PI).abs() < 1e-12
        );
        // Dipole-dipole a = 1, n = 1: |k| = π a n (n+1)(n+2) = 6π; positive for B A M N, negative
        // for pyGIMLi's A B M N order (../shared/bench/README.md).
        assert!(
            (geometric_factor_flat(1.0, 0.0, 2.0, 3.0) - 6.0 * std::f64::consts::PI).abs() < 1e-12
        );
        assert!(
            (geometric_factor_flat(0.0, 1.0, 2.0, 3.0) + 6.0 * std::f64::consts::PI).abs() < 1e-12
        );
        // Pole-pole A M: k = 2π AM.
        assert!(
            (geometric_factor_flat(0.0, f64::INFINITY, 2.0, f64::INFINITY)
                - 4.0 * std::f64::consts::PI)
                .abs()
                < 1e-12
        );
    }

    fn survey(quads: Vec<Quadrupole>, r: Vec<f64>) -> Survey {
        let mut s = Survey::empty(Format::PlainCsv);
        s.electrodes = (0..8).map(|i| Electrode::at(i as f64, 0.0, 0.0)).collect();
        s.valid = vec![true; quads.len()];
        s.quadrupoles = quads;
        s.r_ohm = Some(r);
        s
    }

    #[test]
    fn reciprocals_pair_and_the_error_model_recovers_a_power_law() {
        // Synthetic: ΔR = 0.02·|R|^1.2 exactly → m = 1.2, b = log10 0.02.
        let mut q = Vec::new();
        let mut r = Vec::new();
        let mut k = 0;
        for a in 0..4 {
            for d in 1..4usize {
                let (m, n) = (a + d + 1, a + d + 2);
                if n >= 8 {
                    continue;
                }
                let rn = 10f64.powf(-1.0 + 0.3 * k as f64);
                k += 1;
                q.push(Quadrupole::new(a, a + 1, m, n));
                r.push(rn);
                // reciprocal written with swapped polarity (M N → N M): R flips sign
                q.push(Quadrupole::new(n, m, a, a + 1));
                r.push(-(rn + 0.02 * rn.powf(1.2)));
            }
        }
        let s = survey(q, r);
        let pairs = reciprocal_pairs(&s);
        assert_eq!(pairs.len(), s.n_data() / 2);
        let model = fit_error_model(&pairs, 4, 0.01).unwrap();
        // Bins average the mean R of each pair (R_n + ΔR/2), so the fit is close, not exact.
        assert!((model.slope - 1.2).abs() < 0.02, "{}", model.slope);
        assert!(
            (model.intercept - 0.02f64.log10()).abs() < 0.05,
            "{}",
            model.intercept
        );
        assert_eq!(model.relative_error(1e-9), 0.01, "floored");
    }

    #[test]
    fn filter_reports_each_rule() {
        let q = vec![
            Quadrupole::new(0, 3, 1, 2),
            Quadrupole::new(1, 4, 2, 3),
            Quadrupole::new(2, 5, 3, 4),
            Quadrupole::new(1, 2, 0, 3), // reciprocal of the first, 50 % off
        ];
        let mut s = survey(q, vec![10.0, -1.0, 1e-9, 15.0]);
        let k = geometric_factors(&s);
        let rep = filter(
            &mut s,
            &k,
            &FilterSettings {
                rhoa_range_ohm_m: (0.01, 1e5),
                ..Default::default()
            },
        );
        assert_eq!(rep.n_before, 4);
        assert_eq!(rep.removed[0].1, 1, "the negative ρa");
        assert_eq!(rep.removed[1].1, 1, "the tiny ρa");
        assert_eq!(rep.removed[2].1, 2, "both of the reciprocal pair");
        assert_eq!(rep.n_after, 0);
    }
}
