//! The ERT report text: the inversion's settings, the model, the quality verdict and where the
//! petrophysical parameters came from.

#[allow(unused_imports)]
use super::*;

pub(super) fn settings_table(p: &InversionParams) -> String {
    format!(
        "| Setting | Value |\n|---|---|\n| λ | {} ({:?}) |\n| target χ² | {} |\n| max iterations | {} |\n| z-weight | {} |\n| error source | {:?} (relative {:.1} %, floor {:.1} %) |\n| bounds | {} – {} Ω·m |\n| solver | {:?} |\n",
        p.lambda,
        p.lambda_mode,
        p.target_chi2,
        p.max_iterations,
        p.z_weight,
        p.error_source,
        100.0 * p.relative_error,
        100.0 * p.min_relative_error,
        p.lower_ohm_m,
        p.upper_ohm_m
            .map_or_else(|| "∞".to_string(), |u| format!("{u}")),
        p.solver
    )
}

pub(super) fn model_report(model: &ErtModel) -> String {
    let mut md = String::new();
    match model {
        ErtModel::Single(r) => {
            let _ = writeln!(
                md,
                "Gauss–Newton inversion of log resistivity: {} data, {} cells; χ² {:.3}, rrms {:.2} % after {} iterations ({}); λ {:.3}.\n",
                r.n_data,
                r.n_cells,
                r.chi2,
                r.rrms_percent,
                r.iterations,
                r.stop_reason.words(),
                r.lambda
            );
            if let Some(u) = &r.user_lambda_run {
                let _ = writeln!(
                    md,
                    "The user's own λ {:.3} gave χ² {:.3} (kept for comparison).\n",
                    u.lambda, u.chi2
                );
            }
        }
        ErtModel::TimeLapse(r) => {
            let _ = writeln!(
                md,
                "Time-lapse inversion, {}: {} surveys, {} data each, {} cells; joint χ² {:.3}; λ {:.3}{}.\n\n{}.\n",
                r.method.describe(),
                r.steps.len(),
                r.n_data,
                r.n_cells,
                r.chi2,
                r.lambda,
                if r.method == TimeLapseMethod::Simultaneous {
                    format!(", temporal α {}", r.alpha)
                } else {
                    String::new()
                },
                r.matching.sentence()
            );
            let _ = writeln!(
                md,
                "| Survey | χ² | rrms (%) | iterations |\n|---|---|---|---|"
            );
            for s in &r.steps {
                let _ = writeln!(
                    md,
                    "| {} | {:.3} | {:.2} | {} |",
                    s.time.as_deref().unwrap_or(&s.label),
                    s.chi2,
                    s.rrms_percent,
                    s.iterations
                );
            }
            md.push('\n');
        }
    }
    md.push_str(&settings_table(model.params()));
    for n in model.notes() {
        let _ = writeln!(md, "\n- {n}");
    }
    md
}

pub(super) fn quality_report(ev: &Evaluation<ErtModel>) -> String {
    let q = &ev.quality;
    let mut md = format!(
        "{} (pass mark {:.0}; data fit ≥ 60, plausibility ≥ 70 and residual pattern ≥ 50 are required as well).\n\n| Component | Weight | Score | Note |\n|---|---|---|---|\n",
        q.sentence(),
        ev.settings.quality_threshold
    );
    for c in &q.components {
        let _ = writeln!(
            md,
            "| {} | {:.2} | {} | {} |",
            c.name,
            c.weight,
            c.score
                .map_or_else(|| "–".to_string(), |s| format!("{s:.0}")),
            c.note
        );
    }
    let _ = writeln!(
        md,
        "\n| Attempt | λ | χ² | Score | Kept |\n|---|---|---|---|---|"
    );
    for a in &ev.attempts {
        let _ = writeln!(
            md,
            "| {} | {:.3} | {:.3} | {:.0} | {} |",
            a.attempt,
            a.lambda,
            a.chi2,
            a.score,
            if a.kept { "yes" } else { "" }
        );
    }
    let _ = writeln!(md, "\n{}", ev.why_kept);
    md
}

pub(super) fn prior_statement(wc: &WaterContent, cfg: &PetroConfig) -> String {
    let ranges: Vec<String> = wc
        .prior_ranges
        .iter()
        .map(|r| {
            format!(
                "{} {}: {:.3}–{:.3}{}",
                r.region,
                r.parameter,
                r.p5,
                r.p95,
                if r.from_user { "" } else { " (default)" }
            )
        })
        .collect();
    let head = match wc.prior_source {
        PriorSource::User => format!(
            "Petrophysical parameters from the user{}",
            cfg.source
                .as_ref()
                .map_or_else(String::new, |s| format!(" ({s})"))
        ),
        PriorSource::Partial => {
            "Petrophysical parameters PARTLY GENERIC DEFAULTS: the user gave some, the rest are defaults".to_string()
        }
        PriorSource::Default => {
            "NO PETROPHYSICAL PARAMETERS WERE GIVEN: GENERIC DEFAULTS ARE USED THROUGHOUT; the water content is illustrative, not a measurement".to_string()
        }
    };
    format!(
        "{head}. Prior as the 5–95 % range of the draws: {}.",
        ranges.join("; ")
    )
}

pub(super) fn reliability_words(wc: &WaterContent) -> &'static str {
    use crate::methods::petro::Reliability;
    match wc.reliability {
        Reliability::Resolved => "resolved",
        Reliability::QualitativeOnly => "qualitative only",
        Reliability::NotDistinguishable => "not distinguishable from the uncertainty",
        Reliability::NotApplicable => "not applicable (uniform map)",
    }
}

/// Mean θ range, mean σ and the reliability ratio of one step's conversion.
fn water_numbers(wc: &WaterContent) -> (f64, f64, f64, String) {
    let m = &wc.water_content.mean;
    let lo = m.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = m.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let sd = wc.water_content.std.iter().sum::<f64>() / wc.n_cells.max(1) as f64;
    let ratio = wc
        .reliability_ratio
        .map_or_else(|| "–".to_string(), |r| format!("{r:.2}"));
    (lo, hi, sd, ratio)
}

/// What the water-content conversion found, one clause per time step.
pub(super) fn water_summary(labels: &[String], steps: &[WaterContent], statement: &str) -> String {
    let lines: Vec<String> = labels
        .iter()
        .zip(steps)
        .map(|(l, wc)| {
            let (lo, hi, sd, ratio) = water_numbers(wc);
            format!(
                "{l}: mean θ {lo:.3}–{hi:.3} m³/m³, mean σ {sd:.3}, reliability ratio {ratio} → {}",
                reliability_words(wc)
            )
        })
        .collect();
    let Some(first) = steps.first() else {
        return String::new();
    };
    format!(
        "Water content ({}, {} draws, seed {}) of {} time step(s): {}. {statement}",
        first.relation_by_region.join(", "),
        first.n_realizations,
        first.seed,
        steps.len(),
        lines.join("; "),
    )
}

/// The report section of the water-content conversion.
pub(super) fn water_report(labels: &[String], steps: &[WaterContent], statement: &str) -> String {
    let mut md = format!(
        "### ERT water content\n\n**{statement}**\n\n| Time step | Mean θ range (m³/m³) | Mean σ (m³/m³) | Reliability ratio | Verdict |\n|---|---|---|---|---|\n"
    );
    for (l, wc) in labels.iter().zip(steps) {
        let (lo, hi, sd, ratio) = water_numbers(wc);
        let _ = writeln!(
            md,
            "| {l} | {lo:.3}–{hi:.3} | {sd:.3} | {ratio} | {} |",
            reliability_words(wc)
        );
    }
    for n in steps.first().map_or(&[][..], |f| &f.notes[..]) {
        let _ = writeln!(md, "\n- {n}");
    }
    md
}
