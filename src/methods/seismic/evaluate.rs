//! Judging a velocity model by the shared rubric (`methods::quality`) and the λ retries.
//!
//! Seismic components and weights: data fit 0.35, ray coverage of the interpreted zone 0.15,
//! plausibility 0.15, convergence 0.10, and two checks that do not come from the size of the
//! misfit: residual pattern 0.15 and oscillation 0.10.
//!
//! * **coverage** of the interpreted zone — the cells between the outermost sensors whose
//!   centre lies above [`ZONE_DEPTH_SHARE`] of the longest offset (the depth a refraction
//!   survey is read to; rays of the longest offsets turn at roughly ¼–⅓ of it): 100 · min(1,
//!   covered share / 0.8), the share in the note; the share of the whole grid is kept as
//!   `coverage_fraction`;
//! * **plausibility** = 100 − 300 · (share of cells within 2 % of a velocity bound)
//!   − 300 · (share of cells outside 100–7000 m/s), clamped to 0–100;
//! * **residual pattern**: the normalised residuals (t_obs − t_pred)/σ grouped by shot and by
//!   offset band (eight equal bands up to the longest offset); a group whose mean stands out
//!   of the scatter is a pattern ([`crate::methods::residuals`]);
//! * **oscillation**: the share of cells that are a local extreme against all their
//!   neighbours ([`crate::methods::oscillation`]): a model fitted to the noise alternates;
//! * picks whose residual exceeds 3 errors are listed, and flagged in a note when they are
//!   more than 5 % of the data.
//!
//! The model passes when the rubric passes and the residual pattern, oscillation and
//! coverage checks each reach the check pass mark (50); every broken rule is named.

use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};

use super::data::TravelTimes;
use super::inversion::{InversionError, InversionParams, SeismicInversion, StopReason, invert};
use crate::methods::oscillation::oscillation_component;
use crate::methods::quality::{
    CHECK_PASS, Component, MAX_ATTEMPTS, QUALITY_THRESHOLD, Quality, Retried, retry_lambda,
};
use crate::methods::residuals::{ResidualPattern, residual_component};
use crate::runtime::product::short_num as num;

/// Weight of the data-fit component.
pub const W_FIT: f64 = 0.35;
/// Weight of the ray-coverage component.
pub const W_COVERAGE: f64 = 0.15;
/// Weight of the plausibility component.
pub const W_PLAUSIBILITY: f64 = 0.15;
/// Weight of the convergence component.
pub const W_CONVERGENCE: f64 = 0.10;
/// Weight of the residual-pattern check.
pub const W_RESIDUALS: f64 = 0.15;
/// Weight of the oscillation check.
pub const W_OSCILLATION: f64 = 0.10;
/// The interpreted zone reaches down to this share of the longest offset.
pub const ZONE_DEPTH_SHARE: f64 = 0.25;
/// Offset bands of the residual-pattern check.
pub const OFFSET_BANDS: usize = 8;
/// Velocities outside this range (m/s) are implausible for near-surface refraction.
pub const PLAUSIBLE_M_PER_S: (f64, f64) = (100.0, 7000.0);

/// The verdict on one velocity model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeismicEvaluation {
    /// The rubric's overall score, 0–100 (= `quality.score`; the key number's name).
    pub quality_score: f64,
    /// The rubric's verdict.
    pub quality: Quality,
    /// Final χ².
    pub chi2: f64,
    /// Final relative RMS, %.
    pub rrms_percent: f64,
    /// Share of cells covered by rays (or next to a covered cell).
    pub coverage_fraction: f64,
    /// Share of the interpreted zone's cells covered (module docs).
    #[serde(default)]
    pub zone_coverage_fraction: f64,
    /// Cells within 2 % of a velocity bound.
    pub n_cells_at_bounds: usize,
    /// Cells outside 100–7000 m/s.
    pub n_cells_implausible: usize,
    /// Input pick indices whose residual exceeds three errors.
    pub picks_over_3_errors: Vec<usize>,
    /// Their share of the data inverted.
    pub share_over_3_errors: f64,
    /// Plain sentences for the report: what the score rests on and what to watch.
    pub notes: Vec<String>,
}

/// Score a model (module docs give the rules); `tt` holds the picks it was inverted from.
pub fn evaluate(inv: &SeismicInversion, tt: &TravelTimes) -> SeismicEvaluation {
    let n = inv.n_cells.max(1) as f64;
    let covered = inv.covered.iter().filter(|&&c| c).count();
    let coverage_fraction = covered as f64 / n;
    let mut notes = Vec::new();
    let zone = zone_coverage(inv, tt);
    let coverage = Component::scored(
        "coverage",
        W_COVERAGE,
        100.0 * (zone.0 / 0.8).min(1.0),
        format!(
            "{} % of the interpreted zone ({} cells between the outer sensors, above {} m) and {} % of the whole grid are covered by rays",
            num(100.0 * zone.0),
            zone.1,
            num(zone.2),
            num(100.0 * coverage_fraction)
        ),
    );
    if coverage_fraction < 0.4 {
        notes.push(format!(
            "only {:.0} % of the model is covered by rays: read velocities only where the coverage mask shows rays",
            100.0 * coverage_fraction
        ));
    }
    let n_at_bounds = inv.bounds_m_per_s.map_or(0, |(lo, hi)| {
        inv.velocity_m_per_s
            .iter()
            .filter(|&&v| v <= lo * 1.02 || v >= hi / 1.02)
            .count()
    });
    let n_out = inv
        .velocity_m_per_s
        .iter()
        .filter(|&&v| v < PLAUSIBLE_M_PER_S.0 || v > PLAUSIBLE_M_PER_S.1)
        .count();
    let plaus_score = 100.0 - 300.0 * n_at_bounds as f64 / n - 300.0 * n_out as f64 / n;
    let plausibility = Component::scored(
        "plausibility",
        W_PLAUSIBILITY,
        plaus_score,
        format!(
            "{n_at_bounds} cells at a velocity bound, {n_out} outside {:.0}–{:.0} m/s",
            PLAUSIBLE_M_PER_S.0, PLAUSIBLE_M_PER_S.1
        ),
    );
    let reached = inv.stop_reason == StopReason::Target;
    let neighbours: Vec<[usize; 2]> = inv
        .grid
        .neighbour_pairs()
        .iter()
        .map(|(a, b, _)| [*a, *b])
        .collect();
    let components = vec![
        Component::data_fit(W_FIT, inv.chi2),
        coverage,
        plausibility,
        Component::convergence(W_CONVERGENCE, &inv.chi2_history, reached),
        residual_component(W_RESIDUALS, &residual_patterns(inv, tt), &[]),
        oscillation_component(W_OSCILLATION, &inv.velocity_m_per_s, &neighbours),
    ];
    let mut quality = Quality::from_components(components, Some(inv.chi2), QUALITY_THRESHOLD);
    for check in ["coverage", "residual_pattern", "oscillation"] {
        quality.require(check, CHECK_PASS);
    }
    let over: Vec<usize> = (0..inv.n_data)
        .filter(|&k| ((inv.observed_s[k] - inv.response_s[k]) / inv.error_s[k]).abs() > 3.0)
        .map(|k| inv.used_picks[k])
        .collect();
    let share = over.len() as f64 / inv.n_data.max(1) as f64;
    if share > 0.05 {
        notes.push(format!(
            "{} picks ({:.1} %) misfit by more than three errors: check them in the travel-time plot (mis-picks, trigger delays or too small errors)",
            over.len(),
            100.0 * share
        ));
    }
    notes.push(quality.sentence());
    SeismicEvaluation {
        quality_score: quality.score,
        quality,
        chi2: inv.chi2,
        rrms_percent: inv.rrms_percent,
        coverage_fraction,
        zone_coverage_fraction: zone.0,
        n_cells_at_bounds: n_at_bounds,
        n_cells_implausible: n_out,
        picks_over_3_errors: over,
        share_over_3_errors: share,
        notes,
    }
}

/// (covered share, cells, depth limit m) of the interpreted zone (module docs).
fn zone_coverage(inv: &SeismicInversion, tt: &TravelTimes) -> (f64, usize, f64) {
    let max_offset = (0..tt.n_data()).map(|i| tt.offset_m(i)).fold(0.0, f64::max);
    let depth_m = ZONE_DEPTH_SHARE * max_offset;
    let (x0, x1) = tt
        .sensor_x_m
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(*x), b.max(*x))
        });
    let zone: Vec<usize> = (0..inv.n_cells)
        .filter(|&c| {
            let (x, _) = inv.grid.cell_center(c);
            x >= x0 && x <= x1 && inv.grid.cell_depth(c) <= depth_m
        })
        .collect();
    let covered = zone.iter().filter(|&&c| inv.covered[c]).count();
    (
        covered as f64 / zone.len().max(1) as f64,
        zone.len(),
        depth_m,
    )
}

/// The residual patterns by shot and by offset band (module docs).
pub fn residual_patterns(inv: &SeismicInversion, tt: &TravelTimes) -> Vec<ResidualPattern> {
    let r: Vec<f64> = (0..inv.n_data)
        .map(|k| (inv.observed_s[k] - inv.response_s[k]) / inv.error_s[k])
        .collect();
    let pick = |k: usize| inv.used_picks.get(k).copied().filter(|&i| i < tt.n_data());
    let max_offset = (0..tt.n_data()).map(|i| tt.offset_m(i)).fold(0.0, f64::max);
    let band = |k: usize| -> Vec<usize> {
        pick(k)
            .filter(|_| max_offset > 0.0)
            .map(|i| {
                let b = (tt.offset_m(i) / max_offset * OFFSET_BANDS as f64).floor() as usize;
                b.min(OFFSET_BANDS - 1) + 1
            })
            .into_iter()
            .collect()
    };
    let shot = |k: usize| -> Vec<usize> { pick(k).map(|i| tt.shot[i] + 1).into_iter().collect() };
    vec![
        ResidualPattern::by_group("shot at sensor", &r, shot),
        ResidualPattern::by_group("offset band (of 8)", &r, band),
    ]
}

/// Invert, evaluate, and retry with λ halved (underfit) or doubled (overfit) while the
/// model fails the rubric, at most `max_attempts` inversions (the shared
/// [`retry_lambda`]); the best-scoring model is kept with its evaluation. `progress`
/// reports the fraction over all attempts; `cancel` ends the current attempt and the
/// retries (a cancelled first attempt is an error).
pub fn invert_with_retries(
    tt: &TravelTimes,
    params: &InversionParams,
    max_attempts: Option<usize>,
    auto_adjust: bool,
    progress: &mut dyn FnMut(f64, &str),
    cancel: &AtomicBool,
) -> Result<Retried<(SeismicInversion, SeismicEvaluation)>, InversionError> {
    let attempts = max_attempts.unwrap_or(MAX_ATTEMPTS).max(1);
    let mut attempt = 0usize;
    retry_lambda(params.lambda, attempts, auto_adjust, |lambda| {
        attempt += 1;
        let p = InversionParams {
            lambda,
            ..params.clone()
        };
        let base = (attempt - 1) as f64 / attempts as f64;
        let mut inner = |f: f64, s: &str| {
            progress(
                base + f / attempts as f64,
                &format!("attempt {attempt} (λ {lambda:.3}): {s}"),
            )
        };
        let inv = invert(tt, &p, &mut inner, cancel)?;
        let ev = evaluate(&inv, tt);
        let (chi2, q) = (inv.chi2, ev.quality.clone());
        Ok(((inv, ev), chi2, q))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::seismic::forward::analytic::two_layer_time_s;
    use crate::methods::seismic::inversion::Bounds;

    /// Analytic two-layer times (500 over 2500 m/s at 10 m) with uniform relative noise of
    /// full width `noise_fraction`, errors 2 %.
    fn synthetic(noise_fraction: f64) -> TravelTimes {
        let mut tt = crate::methods::seismic::forward::tests::acceptance_survey();
        let mut seed = 7u64;
        tt.time_s = (0..tt.n_data())
            .map(|i| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let u = (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
                two_layer_time_s(tt.offset_m(i), 500.0, 2500.0, 10.0) * (1.0 + noise_fraction * u)
            })
            .collect();
        tt.error_s = Some(tt.time_s.iter().map(|t| 0.02 * t).collect());
        tt
    }

    /// A good synthetic fit passes the rubric; every component is scored and the weights
    /// are the seismic ones (0.35/0.15/0.15/0.10/0.15/0.10). Noise: uniform with the 2 % standard
    /// deviation the errors state (width √12 · 2 % ≈ 6.9 %).
    #[test]
    fn a_good_fit_passes_with_the_seismic_weights() {
        let tt = synthetic(0.069);
        let inv = invert(
            &tt,
            &InversionParams {
                z_weight: 0.3,
                ..Default::default()
            },
            &mut |_, _| {},
            &AtomicBool::new(false),
        )
        .unwrap();
        let ev = evaluate(&inv, &tt);
        let w: Vec<f64> = ev.quality.components.iter().map(|c| c.weight).collect();
        assert_eq!(w, vec![0.35, 0.15, 0.15, 0.10, 0.15, 0.10]);
        assert!(ev.quality.passed, "{:?}", ev.quality);
        assert!(ev.coverage_fraction > 0.3 && ev.coverage_fraction <= 1.0);
        assert_eq!(ev.n_cells_implausible, 0);
    }

    /// Plausibility: cells pinned at a bound cost 300 points per unit share
    /// (a model with every cell at the lower bound scores 0).
    #[test]
    fn cells_at_bounds_lower_plausibility() {
        let tt = synthetic(0.0);
        let mut inv = invert(
            &tt,
            &InversionParams {
                bounds: Bounds::Fixed {
                    min_m_per_s: 400.0,
                    max_m_per_s: 3000.0,
                },
                max_iterations: 2,
                ..Default::default()
            },
            &mut |_, _| {},
            &AtomicBool::new(false),
        )
        .unwrap();
        let n = inv.n_cells;
        for v in inv.velocity_m_per_s.iter_mut().take(n / 10) {
            *v = 401.0;
        }
        let ev = evaluate(&inv, &tt);
        let expected = 100.0 - 300.0 * ev.n_cells_at_bounds as f64 / n as f64;
        assert!(ev.n_cells_at_bounds >= n / 10);
        assert!(
            (ev.quality.component("plausibility").unwrap() - expected.clamp(0.0, 100.0)).abs()
                < 1e-9
        );
    }

    /// With λ far too large the first model underfits; the retries halve λ and keep the
    /// best score (quality::retry_lambda).
    #[test]
    fn retries_halve_lambda_when_underfit() {
        let tt = synthetic(0.02);
        let params = InversionParams {
            lambda: 5000.0,
            max_iterations: 6,
            ..Default::default()
        };
        let r = invert_with_retries(
            &tt,
            &params,
            Some(3),
            true,
            &mut |_, _| {},
            &AtomicBool::new(false),
        )
        .unwrap();
        assert!(r.attempts.len() >= 2, "{:?}", r.attempts);
        assert_eq!(r.attempts[1].lambda, 2500.0);
        let kept = r.attempts.iter().find(|a| a.kept).unwrap();
        assert!(r.attempts.iter().all(|a| a.score <= kept.score));
    }
}
