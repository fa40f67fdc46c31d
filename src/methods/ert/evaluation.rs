//! The quality of an ERT model by the shared rubric ([`crate::methods::quality`]), with
//! ERT's components and weights (peer-studio.md §3.1):
//!
//! * **data fit** (0.35): the χ² score and its band;
//! * **smoothness** (0.20): from the contrasts c = |Δ log10 ρ| between neighbouring cells:
//!   100 − 5·std(c)/mean(c), capped at 50 when one contrast exceeds a factor 100 (2 decades);
//! * **physical plausibility** (0.20): 100 − 200·(share of cells outside 1–10⁴ Ω·m + share
//!   within 2 % of a bound in log ρ), times 0.8 when max/min ρ exceeds 1000; ERT also requires
//!   this component ≥ 70 to pass;
//! * **convergence** (0.10): 100 when the iterations stopped at the target χ² or because χ²
//!   stopped improving (the solver's own verdict), otherwise the slope rule of
//!   [`crate::methods::quality::convergence_score`]; 60 when fewer than three χ² values exist;
//! * **residual pattern** (0.15), a check that does not come from the size of the misfit: the
//!   normalised residuals ln(ρa_obs/ρa_pred)/ε grouped by pseudosection level (the span of the
//!   quadrupole in electrode spacings, a proxy of the pseudodepth) and by electrode (each
//!   datum counts for its four electrodes); a group whose mean stands out of the scatter is a
//!   pattern ([`crate::methods::residuals`]), and below the check pass mark (50) the model
//!   fails whatever its score.
//!
//! A failing model is inverted again with λ halved (underfit) or doubled (overfit), at most
//! `max_attempts` times in all, keeping the best ([`crate::methods::quality::retry_lambda`]).

use super::inversion::{InversionError, InversionResult, StopReason};
use super::survey::Quadrupole;
use super::timelapse::TimeLapseResult;
use crate::methods::quality::{
    Attempt, CHECK_PASS, Component, MAX_ATTEMPTS, QUALITY_THRESHOLD, Quality, convergence_score,
    retry_lambda,
};
use crate::methods::residuals::{ResidualPattern, residual_component};
use serde::{Deserialize, Serialize};

/// The plausible resistivity range, Ω·m.
pub const PLAUSIBLE_OHM_M: (f64, f64) = (1.0, 1e4);
/// The plausibility component must also reach this for ERT to pass.
pub const PLAUSIBILITY_PASS: f64 = 70.0;

/// Settings of an evaluation (config keys `quality_threshold`, `max_attempts`, `auto_adjust`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvaluationSettings {
    /// Pass mark of the overall score.
    pub quality_threshold: f64,
    /// Inversions at most (the first and its retries).
    pub max_attempts: usize,
    /// Whether to retry with another λ at all.
    pub auto_adjust: bool,
}

impl Default for EvaluationSettings {
    fn default() -> Self {
        EvaluationSettings {
            quality_threshold: QUALITY_THRESHOLD,
            max_attempts: MAX_ATTEMPTS,
            auto_adjust: true,
        }
    }
}

/// Smoothness score from neighbour contrasts (module docs) and a sentence.
pub fn smoothness(rho: &[f64], neighbours: &[[usize; 2]]) -> (f64, String) {
    let c: Vec<f64> = neighbours
        .iter()
        .map(|[i, j]| (rho[*i].log10() - rho[*j].log10()).abs())
        .filter(|v| v.is_finite())
        .collect();
    if c.is_empty() {
        return (100.0, "no neighbouring cells".into());
    }
    let n = c.len() as f64;
    let mean = c.iter().sum::<f64>() / n;
    let std = (c.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt();
    let max = c.iter().copied().fold(0.0, f64::max);
    let mut score = if mean > 0.0 {
        100.0 - 5.0 * std / mean
    } else {
        100.0
    };
    let mut note =
        format!("neighbour contrasts: mean {mean:.3}, std {std:.3}, largest {max:.2} decades");
    if max > 2.0 {
        score = score.min(50.0);
        note.push_str(" (a jump of more than a factor 100 between neighbours)");
    }
    (score.clamp(0.0, 100.0), note)
}

/// Plausibility score (module docs) and a sentence; `bounds` = the inversion's (lo, hi).
pub fn plausibility(rho: &[f64], bounds: (f64, f64)) -> (f64, String) {
    let n = rho.len().max(1) as f64;
    let outside = rho
        .iter()
        .filter(|r| !(**r >= PLAUSIBLE_OHM_M.0 && **r <= PLAUSIBLE_OHM_M.1))
        .count() as f64
        / n;
    let near = |r: f64, b: f64| b > 0.0 && b.is_finite() && (r.ln() - b.ln()).abs() < 0.02;
    let at_bound = rho
        .iter()
        .filter(|r| near(**r, bounds.0) || near(**r, bounds.1))
        .count() as f64
        / n;
    let lo = rho.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = rho.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut score = 100.0 - 200.0 * (outside + at_bound);
    let mut note = format!(
        "{:.1} % of cells outside 1–10⁴ Ω·m, {:.1} % at a bound; range {lo:.3}–{hi:.1} Ω·m",
        100.0 * outside,
        100.0 * at_bound
    );
    if hi / lo > 1000.0 {
        score *= 0.8;
        note.push_str(" (max/min above 1000)");
    }
    (score.clamp(0.0, 100.0), note)
}

/// The convergence component (module docs).
pub fn convergence(chi2_history: &[f64], stop: StopReason, weight: f64) -> Component {
    match stop {
        StopReason::TargetReached => {
            Component::scored("convergence", weight, 100.0, "χ² reached the target")
        }
        StopReason::Plateau => Component::scored(
            "convergence",
            weight,
            100.0,
            "χ² stopped improving (the solver's stopping rule)",
        ),
        _ => match convergence_score(chi2_history, false) {
            Some(s) => Component::scored(
                "convergence",
                weight,
                s,
                format!("{}; judged from the last iterations", stop.words()),
            ),
            None => Component::scored(
                "convergence",
                weight,
                60.0,
                "fewer than three χ² values recorded",
            ),
        },
    }
}

/// Observed and predicted ρa (Ω·m) and relative errors of one survey.
pub type Fit<'a> = (&'a [f64], &'a [f64], &'a [f64]);

/// The residual patterns of one or several surveys on the same quadrupoles (module docs):
/// by pseudosection level and by electrode.
pub fn residual_patterns(quads: &[Quadrupole], fits: &[Fit]) -> Vec<ResidualPattern> {
    let nq = quads.len().max(1);
    let r: Vec<f64> = fits
        .iter()
        .flat_map(|(obs, pred, err)| {
            obs.iter()
                .zip(pred.iter())
                .zip(err.iter())
                .map(|((o, p), e)| (o / p).ln() / e)
        })
        .collect();
    let electrodes = |i: usize| -> Vec<usize> {
        let q = quads.get(i % nq);
        q.map(|q| [q.a, q.b, q.m, q.n].into_iter().flatten().collect())
            .unwrap_or_default()
    };
    let level = |i: usize| -> Vec<usize> {
        let e = electrodes(i);
        match (e.iter().min(), e.iter().max()) {
            (Some(lo), Some(hi)) => vec![hi - lo],
            _ => Vec::new(),
        }
    };
    vec![
        ResidualPattern::by_group("pseudosection level (span in electrodes)", &r, level),
        ResidualPattern::by_group("electrode", &r, electrodes),
    ]
}

/// The quality of a model described by its final χ², χ² history, stop reason, resistivities
/// (one or several time steps, each with the same neighbours), bounds and residual patterns.
#[allow(clippy::too_many_arguments)]
pub fn assess_models(
    chi2: f64,
    chi2_history: &[f64],
    stop: StopReason,
    models: &[&[f64]],
    neighbours: &[[usize; 2]],
    bounds: (f64, f64),
    patterns: &[ResidualPattern],
    threshold: f64,
) -> Quality {
    let (mut s_sum, mut notes_s) = (0.0, Vec::new());
    let (mut p_min, mut notes_p) = (100.0f64, Vec::new());
    for m in models {
        let (s, ns) = smoothness(m, neighbours);
        s_sum += s;
        notes_s.push(ns);
        let (p, np) = plausibility(m, bounds);
        p_min = p_min.min(p);
        notes_p.push(np);
    }
    let k = models.len().max(1) as f64;
    // The oscillation check (methods::oscillation; the seismic and grav/mag evaluations have
    // it too): a model fitted to the noise alternates between neighbours, whatever its χ².
    // Of several time steps, the worst.
    let oscillation = models
        .iter()
        .map(|m| crate::methods::oscillation::oscillation_component(0.10, m, neighbours))
        .min_by(|a, b| {
            a.score
                .unwrap_or(f64::INFINITY)
                .total_cmp(&b.score.unwrap_or(f64::INFINITY))
        })
        .unwrap_or_else(|| {
            crate::methods::oscillation::oscillation_component(0.10, &[], neighbours)
        });
    let components = vec![
        Component::data_fit(0.35, chi2),
        Component::scored("smoothness", 0.15, s_sum / k, notes_s.join("; ")),
        Component::scored("plausibility", 0.15, p_min, notes_p.join("; ")),
        convergence(chi2_history, stop, 0.10),
        residual_component(0.15, patterns, &[]),
        oscillation,
    ];
    let mut q = Quality::from_components(components, Some(chi2), threshold);
    q.require("plausibility", PLAUSIBILITY_PASS);
    q.require("residual_pattern", CHECK_PASS);
    q.require("oscillation", CHECK_PASS);
    q
}

/// Something an evaluation can judge and re-run.
pub trait Assessable: Clone {
    /// Its quality.
    fn assess(&self, threshold: f64) -> Quality;
    /// Its final χ².
    fn chi2(&self) -> f64;
}

impl Assessable for InversionResult {
    fn assess(&self, threshold: f64) -> Quality {
        assess_models(
            self.chi2,
            &self.chi2_history,
            self.stop_reason,
            &[&self.rho_ohm_m],
            &self.section.neighbours,
            (
                self.params.lower_ohm_m,
                self.params.upper_ohm_m.unwrap_or(f64::INFINITY),
            ),
            &residual_patterns(
                &self.data.quadrupoles,
                &[(&self.rhoa_obs_ohm_m, &self.rhoa_pred_ohm_m, &self.data.err)],
            ),
            threshold,
        )
    }

    fn chi2(&self) -> f64 {
        self.chi2
    }
}

impl Assessable for TimeLapseResult {
    fn assess(&self, threshold: f64) -> Quality {
        let models: Vec<&[f64]> = self.steps.iter().map(|s| s.rho_ohm_m.as_slice()).collect();
        let fits: Vec<Fit> = self
            .steps
            .iter()
            .map(|s| {
                (
                    s.rhoa_obs_ohm_m.as_slice(),
                    s.rhoa_pred_ohm_m.as_slice(),
                    s.err.as_slice(),
                )
            })
            .collect();
        assess_models(
            self.chi2,
            &self.chi2_history,
            self.stop_reason,
            &models,
            &self.section.neighbours,
            (
                self.params.lower_ohm_m,
                self.params.upper_ohm_m.unwrap_or(f64::INFINITY),
            ),
            &residual_patterns(&self.quadrupoles, &fits),
            threshold,
        )
    }

    fn chi2(&self) -> f64 {
        self.chi2
    }
}

/// An evaluation: the model kept, its quality, every attempt and why.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Evaluation<T> {
    /// The model kept (the first one unless a retry scored higher).
    pub kept: T,
    /// Its quality.
    pub quality: Quality,
    /// Every inversion tried, the kept one marked.
    pub attempts: Vec<Attempt>,
    /// Which model was kept and why, in one sentence.
    pub why_kept: String,
    /// Whether the kept model is a retry (it replaces the inversion's).
    pub replaced: bool,
    /// The settings used.
    pub settings: EvaluationSettings,
}

/// Judge `first` (inverted with λ = `first_lambda`); while it fails, re-invert with λ halved
/// (underfit) or doubled (overfit) through `rerun`, at most `max_attempts` in all, and keep
/// the best ([`retry_lambda`]).
pub fn evaluate<T: Assessable>(
    first: T,
    first_lambda: f64,
    settings: &EvaluationSettings,
    mut rerun: impl FnMut(f64) -> Result<T, InversionError>,
) -> Result<Evaluation<T>, InversionError> {
    let threshold = settings.quality_threshold;
    let mut first_slot = Some(first);
    let retried = retry_lambda(
        first_lambda,
        settings.max_attempts,
        settings.auto_adjust,
        |lambda| -> Result<(T, f64, Quality), InversionError> {
            let model = match first_slot.take() {
                Some(m) => m,
                None => rerun(lambda)?,
            };
            let q = model.assess(threshold);
            let c = model.chi2();
            Ok((model, c, q))
        },
    )?;
    let replaced = retried.attempts.iter().position(|a| a.kept).unwrap_or(0) > 0;
    Ok(Evaluation {
        kept: retried.best,
        quality: retried.quality,
        attempts: retried.attempts,
        why_kept: retried.why_kept,
        replaced,
        settings: settings.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plausibility_and_smoothness_follow_the_rules() {
        // One of 100 cells at 0.5 Ω·m: 100 − 200·0.01 = 98 (max/min 400 < 1000: no factor).
        let mut rho = vec![100.0; 98];
        rho.extend([0.5, 200.0]);
        let (p, _) = plausibility(&rho, (0.0, f64::INFINITY));
        assert!((p - 98.0).abs() < 1e-9, "{p}");
        // A bound hit counts like a cell outside.
        let (p2, _) = plausibility(&[10.0, 10.0, 1000.0, 50.0], (10.0, 1e6));
        assert!(
            (p2 - 0.0).abs() < 1e-9,
            "half the cells at the lower bound: {p2}"
        );
        // Smoothness: equal contrasts → std 0 → 100; one 3-decade jump → ≤ 50.
        let nb: Vec<[usize; 2]> = (0..4).map(|i| [i, i + 1]).collect();
        let (s, _) = smoothness(&[1.0, 10.0, 100.0, 1000.0, 10000.0], &nb);
        assert_eq!(s, 100.0);
        let (s2, _) = smoothness(&[10.0, 10.0, 10000.0, 10000.0, 10000.0], &nb);
        assert!(s2 <= 50.0);
    }

    /// Dipole–dipole quadrupoles on 20 electrodes (a = 1, n = 1…4, 62 data). Residuals
    /// alternate ±1 datum by datum (no pattern); then the 4 data using electrode 0 are
    /// shifted by +3 errors: by hand s = √((58 + 16 + 4 + 4 + 16)/62) ≈ 1.26, the group's
    /// z = 3·√4/1.26 ≈ 4.8 (flagged) and bias e = 3/1.26 ≈ 2.4 > 1.75: the check fails.
    #[test]
    fn a_model_that_alternates_between_neighbours_fails_the_oscillation_check() {
        // Issue 21: a check that does not come from the misfit. A 12 × 12 grid of cells with a
        // good χ²: smooth (a ramp) passes, a checkerboard of 50 and 200 Ω·m (what a noise fit
        // looks like) fails, named.
        let idx = |i: usize, j: usize| i * 12 + j;
        let mut nb = Vec::new();
        for i in 0..12 {
            for j in 0..12 {
                if i + 1 < 12 {
                    nb.push([idx(i, j), idx(i + 1, j)]);
                }
                if j + 1 < 12 {
                    nb.push([idx(i, j), idx(i, j + 1)]);
                }
            }
        }
        let ramp: Vec<f64> = (0..144)
            .map(|k| 50.0 + (k / 12) as f64 * 10.0 + (k % 12) as f64)
            .collect();
        let board: Vec<f64> = (0..144)
            .map(|k| {
                if (k / 12 + k % 12) % 2 == 0 {
                    50.0
                } else {
                    200.0
                }
            })
            .collect();
        let assess = |m: &[f64]| {
            assess_models(
                1.0,
                &[10.0, 2.0, 1.0],
                StopReason::TargetReached,
                &[m],
                &nb,
                (1.0, f64::INFINITY),
                &[],
                QUALITY_THRESHOLD,
            )
        };
        let smooth = assess(&ramp);
        assert!(
            !smooth.failed_checks().contains(&"oscillation".to_string()),
            "{:?}",
            smooth.failed
        );
        let noisy = assess(&board);
        assert!(!noisy.passed, "{}", noisy.sentence());
        assert!(
            noisy.failed_checks().contains(&"oscillation".to_string()),
            "{:?}",
            noisy.failed
        );
    }

    #[test]
    fn a_bad_electrode_is_a_residual_pattern() {
        let quads: Vec<Quadrupole> = (1..=4)
            .flat_map(|n| {
                (0..20 - 2 - n).map(move |i| Quadrupole::new(i, i + 1, i + 1 + n, i + 2 + n))
            })
            .collect();
        let nd = quads.len();
        let pred = vec![100.0; nd];
        let err = vec![0.02; nd];
        let clean: Vec<f64> = (0..nd)
            .map(|i| 100.0 * (0.02f64 * if i % 2 == 0 { 1.0 } else { -1.0 }).exp())
            .collect();
        let p = residual_patterns(&quads, &[(&clean, &pred, &err)]);
        let c = residual_component(0.15, &p, &[]);
        assert_eq!(c.score, Some(100.0), "{}", c.note);
        let uses0 = |q: &Quadrupole| [q.a, q.b, q.m, q.n].contains(&Some(0));
        let biased: Vec<f64> = clean
            .iter()
            .zip(&quads)
            .map(|(o, q)| if uses0(q) { o * (0.06f64).exp() } else { *o })
            .collect();
        let p = residual_patterns(&quads, &[(&biased, &pred, &err)]);
        assert_eq!(
            p[1].worst.as_ref().map(|g| g.key.as_str()),
            Some("electrode 0")
        );
        let c = residual_component(0.15, &p, &[]);
        assert!(c.score.unwrap() < CHECK_PASS, "{}", c.note);
    }

    #[test]
    fn stop_reasons_override_the_slope_rule() {
        let c = convergence(&[100.0, 50.0, 40.0], StopReason::Plateau, 0.1);
        assert_eq!(c.score, Some(100.0));
        let c = convergence(&[100.0, 50.0, 25.0], StopReason::MaxIterations, 0.1);
        assert_eq!(c.score, Some(50.0), "still improving by 50 % per iteration");
        let c = convergence(&[100.0, 50.0], StopReason::MaxIterations, 0.1);
        assert_eq!(c.score, Some(60.0));
    }
}
