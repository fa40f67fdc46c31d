//! TDEM model quality by the shared rubric ([`crate::methods::quality`]): data fit (0.45),
//! resolution against the depth of investigation (0.20), physical plausibility (0.20) and the
//! residual pattern by gate (0.15) — the peer studio's TDEM components
//! (reference/peer-studio.md §3.1) with the gate check of issue 21 added.
//!
//! * **data fit**: one sounding, the rubric's χ² score; a line, 0.6·score(median χ²) +
//!   40·(share of soundings with χ² ≤ 2);
//! * **resolution**: 100·(1 − (failed + unresolved)/n) where a sounding is unresolved when it
//!   has no DOI or its DOI does not reach below the third layer (the model says nothing
//!   beyond the near surface);
//! * **plausibility**: 100 − 300·(share of layers above the DOI within 2 % (in ln ρ) of a
//!   resistivity bound) − 300·(share outside 0.1–10⁵ Ω·m), floored at 0;
//! * **residual pattern** ([`gate_residuals`]), a check that does not come from the size of
//!   the misfit: the normalised residuals (d − f)/σ of every sounding grouped by gate and by
//!   time third (early, middle, late gates: an early- or late-time bias), and the runs of
//!   same-sign residuals along the gates ([`crate::methods::residuals`]).
//!
//! The model passes when the rubric passes and the residual pattern and the resolution each
//! reach the check pass mark (50).

use super::forward::LayeredEarth;
use super::invert::{Doi, SmoothResult};
use super::line::LineResult;
use super::pipeline::SoundingFit;
use crate::methods::quality::{CHECK_PASS, Component, QUALITY_THRESHOLD, Quality, chi2_score};
use crate::methods::residuals::{ResidualPattern, SignRuns, residual_component};

/// Weights of the TDEM components (data fit, resolution, plausibility).
pub const WEIGHTS: (f64, f64, f64) = (0.45, 0.20, 0.20);
/// Weight of the residual-pattern check.
pub const W_RESIDUALS: f64 = 0.15;

/// The residual-pattern component of a set of fitted soundings (module docs).
pub fn gate_residuals(fits: &[SoundingFit]) -> Component {
    let mut r = Vec::new();
    let mut gate = Vec::new();
    for f in fits {
        let res = f.residuals();
        let n = res.len().max(1);
        gate.extend((0..res.len()).map(|k| (k, n)));
        r.extend(res);
    }
    let by_gate = ResidualPattern::by_group("gate", &r, |i| vec![gate[i].0 + 1]);
    let by_third = ResidualPattern::by_group("time third (1 early, 3 late)", &r, |i| {
        let (k, n) = gate[i];
        vec![3 * k / n + 1]
    });
    let runs = SignRuns::of("the gates of each sounding in turn", &r);
    residual_component(W_RESIDUALS, &[by_gate, by_third], &[runs])
}

/// The verdict of the line or soundings whose rubric is `q` (the survey inversion's), with
/// the residual pattern of `fits` added and the checks required (module docs).
pub fn judge(q: &Quality, fits: &[SoundingFit], chi2: f64, threshold: f64) -> Quality {
    let mut components: Vec<Component> = q
        .components
        .iter()
        .filter(|c| c.name != "residual_pattern")
        .cloned()
        .collect();
    components.push(gate_residuals(fits));
    let mut out = Quality::from_components(components, Some(chi2), threshold);
    out.require("residual_pattern", CHECK_PASS);
    out.require("resolution", CHECK_PASS);
    out
}

/// The physically plausible resistivity range [Ω·m] (peer studio `RESISTIVITY_RANGE`).
pub const RHO_RANGE_OHM_M: (f64, f64) = (0.1, 1e5);

/// Whether a model is resolved: its DOI reaches below the top of the fourth layer (or of
/// the last, for fewer layers).
pub fn resolved(model: &LayeredEarth, doi: &Doi) -> bool {
    let tops = model.top_depths_m();
    match (doi.doi_m, tops.get(3).or(tops.last())) {
        (Some(d), Some(t)) => d > *t,
        _ => false,
    }
}

/// Share of layers above the DOI at a bound (within 2 % in ln ρ) and outside the range.
fn plausibility_shares(model: &LayeredEarth, doi: &Doi, bounds: (f64, f64)) -> (f64, f64, usize) {
    let tops = model.top_depths_m();
    let limit = doi.doi_m.unwrap_or(f64::INFINITY);
    let idx: Vec<usize> = (0..model.n_layers()).filter(|&i| tops[i] < limit).collect();
    let n = idx.len().max(1) as f64;
    let (lo, hi) = (bounds.0.ln(), bounds.1.ln());
    let at_bound = idx
        .iter()
        .filter(|&&i| {
            let l = model.rho_ohm_m[i].ln();
            (l - lo).abs() < 0.02 * lo.abs().max(1.0) || (hi - l).abs() < 0.02 * hi.abs().max(1.0)
        })
        .count() as f64;
    let outside = idx
        .iter()
        .filter(|&&i| !(RHO_RANGE_OHM_M.0..=RHO_RANGE_OHM_M.1).contains(&model.rho_ohm_m[i]))
        .count() as f64;
    (at_bound / n, outside / n, idx.len())
}

fn plausibility_component(models: &[(&LayeredEarth, &Doi)], bounds: (f64, f64)) -> Component {
    let (mut ab, mut out, mut n) = (0.0, 0.0, 0usize);
    for (m, d) in models {
        let (a, o, k) = plausibility_shares(m, d, bounds);
        ab += a * k as f64;
        out += o * k as f64;
        n += k;
    }
    let nf = n.max(1) as f64;
    let (ab, out) = (ab / nf, out / nf);
    Component::scored(
        "plausibility",
        WEIGHTS.2,
        (100.0 - 300.0 * ab - 300.0 * out).max(0.0),
        format!(
            "{:.0} % of the layers above the DOI sit at a resistivity bound, {:.0} % outside 0.1–1e5 Ω·m",
            100.0 * ab,
            100.0 * out
        ),
    )
}

/// Judge one smooth sounding model. `rho_bounds_ohm_m` are the inversion's bounds.
pub fn evaluate_sounding(result: &SmoothResult, rho_bounds_ohm_m: (f64, f64)) -> Quality {
    let fit = Component::data_fit(WEIGHTS.0, result.chi2);
    let ok = resolved(&result.model, &result.doi);
    let resolution = Component::scored(
        "resolution",
        WEIGHTS.1,
        if ok { 100.0 } else { 0.0 },
        match result.doi.doi_m {
            Some(d) => format!(
                "DOI {d:.0} m{}",
                if ok {
                    ""
                } else {
                    ": above the fourth layer, unresolved"
                }
            ),
            None => "no depth reaches the DOI threshold: unresolved".to_string(),
        },
    );
    let plaus = plausibility_component(&[(&result.model, &result.doi)], rho_bounds_ohm_m);
    Quality::from_components(
        vec![fit, resolution, plaus],
        Some(result.chi2),
        QUALITY_THRESHOLD,
    )
}

/// Judge a line: survey fit from the per-sounding χ², resolution from the share of resolved
/// soundings (`n_failed` soundings that could not be inverted count against it), the median
/// DOI in the note.
pub fn evaluate_line(
    result: &LineResult,
    n_failed: usize,
    rho_bounds_ohm_m: (f64, f64),
) -> Quality {
    let items: Vec<(&LayeredEarth, &Doi, f64)> = result
        .soundings
        .iter()
        .map(|s| (&s.model, &s.doi, s.chi2))
        .collect();
    evaluate_soundings(&items, n_failed, rho_bounds_ohm_m, result.chi2)
}

/// Judge a set of soundings (model, DOI, χ²) inverted together or one by one: the survey
/// rules of the module docs; `total_chi2` is the χ² over all data (for the fit band).
pub fn evaluate_soundings(
    items: &[(&LayeredEarth, &Doi, f64)],
    n_failed: usize,
    rho_bounds_ohm_m: (f64, f64),
    total_chi2: f64,
) -> Quality {
    let mut chis: Vec<f64> = items.iter().map(|s| s.2).collect();
    chis.sort_by(f64::total_cmp);
    let n = items.len() + n_failed;
    let median = chis.get(chis.len() / 2).copied().unwrap_or(f64::INFINITY);
    let share_ok = chis.iter().filter(|c| **c <= 2.0).count() as f64 / n.max(1) as f64;
    let fit = Component::scored(
        "data_fit",
        WEIGHTS.0,
        0.6 * chi2_score(median) + 40.0 * share_ok,
        format!(
            "median sounding χ² {median:.2}; {:.0} % of the soundings at χ² ≤ 2",
            100.0 * share_ok
        ),
    );
    let unresolved = items.iter().filter(|s| !resolved(s.0, s.1)).count();
    let mut dois: Vec<f64> = items.iter().filter_map(|s| s.1.doi_m).collect();
    dois.sort_by(f64::total_cmp);
    let resolution = Component::scored(
        "resolution",
        WEIGHTS.1,
        100.0 * (1.0 - (n_failed + unresolved) as f64 / n.max(1) as f64),
        format!(
            "{n_failed} failed, {unresolved} unresolved of {n}; median DOI {}",
            dois.get(dois.len() / 2)
                .map_or("none".to_string(), |d| format!("{d:.0} m"))
        ),
    );
    let models: Vec<(&LayeredEarth, &Doi)> = items.iter().map(|s| (s.0, s.1)).collect();
    let plaus = plausibility_component(&models, rho_bounds_ohm_m);
    Quality::from_components(
        vec![fit, resolution, plaus],
        Some(total_chi2),
        QUALITY_THRESHOLD,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::tdem::invert::tests::synthetic_sounding;
    use crate::methods::tdem::invert::{Prepared, SmoothSettings, invert_smooth};
    use std::sync::atomic::AtomicBool;

    #[test]
    fn a_good_fit_with_depth_passes_and_a_bad_one_fails() {
        // Synthetic 3-layer sounding inverted to χ² ≈ 1: fit 100 − 20|χ²−1| ≥ 98, resolved,
        // no bound hits ⇒ passes. The same model judged at χ² = 6 (fit score 15) fails even
        // though the overall score stays above 50.
        let earth = LayeredEarth::new(vec![100.0, 10.0, 500.0], vec![20.0, 40.0]).unwrap();
        let data = Prepared::new(&synthetic_sounding(&earth, 0.03, 5), None, 0.03).unwrap();
        let settings = SmoothSettings {
            n_layers: 20,
            ..SmoothSettings::default()
        };
        let r = invert_smooth(&data, &settings, None, &AtomicBool::new(false)).unwrap();
        let q = evaluate_sounding(&r, settings.rho_bounds_ohm_m);
        assert!(q.passed, "{q:?}");
        assert!(q.component("data_fit").unwrap() >= 98.0);
        assert_eq!(q.component("resolution"), Some(100.0));
        let mut bad = r.clone();
        bad.chi2 = 6.0;
        let q = evaluate_sounding(&bad, settings.rho_bounds_ohm_m);
        assert!(!q.passed);
        assert!((q.component("data_fit").unwrap() - 15.0).abs() < 1e-9);
    }
}
