//! The studio's verdict on a grav/mag model, on the shared rubric's scale (`quality.rs`).
//!
//! Components and weights: data fit 0.40 (χ² bands), plausibility 0.15 (40 when any cell sits
//! at a bound, else 100), convergence 0.10 from the β search (converged 100, fixed β 70,
//! otherwise 60), and the checks that do not come from the misfit ([`GravMagChecks`]): Gauss's
//! theorem mass 0.15, anomaly centre 0.10, oscillation 0.10. Unscored components drop out of
//! the weighted mean.
//!
//! The model passes when the overall score reaches the threshold, the data fit reaches
//! [`quality::FIT_PASS`], every scored check reaches [`CHECK_PASS`], and the data hold an
//! anomaly above their noise (a zero model that fits the data within their errors is "nothing
//! found", not a model to interpret) strongly enough that the model's depth and mass come from
//! the data ([`super::inversion::WEAK_SIGNAL_RATIO`]). Every failed rule is named in the summary.

use serde::{Deserialize, Serialize};

use super::checks::{CHECK_PASS, GravMagChecks};
use super::inversion::{BetaOutcome, DEPTH_WARNING, GravMagInversion, weak_signal_warning};
use crate::methods::quality::{self, Component, Quality};

/// The verdict (module docs).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GravMagEvaluation {
    /// The overall score, 0–100 (= `quality.score`).
    pub quality_score: f64,
    /// Whether the model passes (= `quality.passed`).
    pub passed: bool,
    /// The score and its components.
    pub quality: Quality,
    /// The rules the model failed, each naming its check ("gauss_mass: …"); empty on a pass.
    #[serde(default)]
    pub failed_checks: Vec<String>,
    /// The warnings a report must carry (always the depth warning).
    pub warnings: Vec<String>,
    /// One paragraph.
    pub summary: String,
}

/// Judge a model with the shared rubric and, when given, the independent checks.
pub fn evaluate_gravmag_inversion(
    inv: &GravMagInversion,
    checks: Option<&GravMagChecks>,
) -> GravMagEvaluation {
    let mut components = base_components(inv);
    match checks {
        Some(c) => components.extend(c.components()),
        None => components.push(Component::unscored(
            "checks",
            0.35,
            "no residual map was given: the mass, centre and oscillation checks were not run",
        )),
    }
    let mut quality =
        Quality::from_components(components, Some(inv.chi2), quality::QUALITY_THRESHOLD);
    let failed = failed_rules(inv, &quality);
    quality.passed = failed.is_empty();
    let verdict = verdict_sentence(&quality, &failed);
    let summary = format!(
        "{verdict}. χ² {:.2} over {} data after {} exact solve(s) (β {:.3e}); {} of {} cells at a bound. {}",
        inv.chi2,
        inv.n_data,
        inv.iterations,
        inv.lambda,
        inv.bound_hits,
        inv.n_cells,
        DEPTH_WARNING
    );
    GravMagEvaluation {
        quality_score: quality.score,
        passed: quality.passed,
        quality,
        failed_checks: failed,
        warnings: inv.warnings.clone(),
        summary,
    }
}

impl GravMagEvaluation {
    /// "Quality 82/100, which meets the 70 threshold", or the failed rules by name.
    pub fn verdict(&self) -> String {
        verdict_sentence(&self.quality, &self.failed_checks)
    }
}

fn verdict_sentence(q: &Quality, failed: &[String]) -> String {
    if failed.is_empty() {
        q.sentence()
    } else {
        format!(
            "Quality {:.0}/100: the model does not pass ({})",
            q.score,
            failed.join("; ")
        )
    }
}

/// Data fit, plausibility and convergence.
fn base_components(inv: &GravMagInversion) -> Vec<Component> {
    let plaus = if inv.bound_hits > 0 { 40.0 } else { 100.0 };
    let conv = match inv.beta_search.outcome {
        BetaOutcome::Converged => 100.0,
        BetaOutcome::Fixed => 70.0,
        BetaOutcome::DataWithinNoise | BetaOutcome::NotConverged => 60.0,
    };
    vec![
        Component::data_fit(0.40, inv.chi2),
        Component::scored(
            "plausibility",
            0.15,
            plaus,
            format!(
                "{} cells at a bound ({} … {} {})",
                inv.bound_hits, inv.bounds.0, inv.bounds.1, inv.model_unit
            ),
        ),
        Component::scored(
            "convergence",
            0.10,
            conv,
            format!(
                "β search: {:?}, {}",
                inv.beta_search.outcome, inv.beta_search.note
            ),
        ),
    ]
}

/// Every pass rule the model breaks, named (module docs).
fn failed_rules(inv: &GravMagInversion, q: &Quality) -> Vec<String> {
    let mut out = Vec::new();
    if inv.beta_search.outcome == BetaOutcome::DataWithinNoise {
        out.push(format!("signal_above_noise: {}", inv.beta_search.note));
    }
    if let Some(w) = weak_signal_warning(&inv.beta_search) {
        out.push(format!("signal_strength: {w}"));
    }
    for c in &q.components {
        let Some(s) = c.score else { continue };
        let limit = match c.name.as_str() {
            "data_fit" => quality::FIT_PASS,
            "gauss_mass" | "anomaly_centre" | "oscillation" => CHECK_PASS,
            _ => continue,
        };
        if s < limit {
            out.push(format!("{} {s:.0} < {limit:.0}: {}", c.name, c.note));
        }
    }
    if q.score < q.threshold {
        out.push(format!(
            "overall {:.0} below the {:.0} threshold",
            q.score, q.threshold
        ));
    }
    out
}
