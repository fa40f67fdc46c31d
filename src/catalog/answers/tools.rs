//! The interpretation steps: one per kind of question the goal asks, each a step on the
//! timeline that reads the run's products and holds its [`Answer`], then `answer_questions`
//! that gathers them (with every question no step could answer, and why).

use std::sync::Arc;

use serde_json::{Value, json};

use super::answer::{Agreement, Answer, Answers, Evidence, Status};
use super::evidence::{self, Gathered};
use super::questions::{Question, QuestionKind, answerable_kinds, questions};
use super::settings::AnswerSettings;
use crate::catalog::ert::{ErtModel, ErtSettings, ErtWaterContent};
use crate::catalog::kit::format::{num, pm};
use crate::catalog::kit::methods::ERT;
use crate::catalog::kit::{Held, held, keys};
use crate::methods::ert::interpret::{ChangeRegion, change_region, covered_cells, evolution};
use crate::methods::ert::timelapse::TimeLapseResult;
use crate::methods::petro::interpret::{BandWaterContent, band, bands};
use crate::runtime::{Outputs, RunContext, ToolResult};

/// The question of `kind` the goal asks, or an error (the gate keeps this from happening).
fn asked(ctx: &RunContext, kind: QuestionKind) -> anyhow::Result<Question> {
    questions(&ctx.goal)
        .into_iter()
        .find(|q| q.kind == kind)
        .ok_or_else(|| anyhow::anyhow!("the goal does not ask about {}", kind.described()))
}

/// Hold `answer` under `key`, its sentence the step's summary.
fn hold(key: &str, answer: Answer) -> ToolResult {
    let summary = answer.sentence.clone();
    let mut h = Held::new(
        answer.clone(),
        format!("answer ({}): {}", answer.kind.word(), short(&summary)),
    );
    for e in &answer.evidence {
        if let Some(f) = &e.file {
            h = h.file(f.into());
        }
    }
    Ok((summary, Outputs::new().put(key, Arc::new(h))))
}

fn short(s: &str) -> String {
    s.chars().take(160).collect()
}

/// A depth answer from gathered evidence.
fn depth_answer(q: &Question, what: &str, g: Gathered) -> Answer {
    let details = g.details();
    let mut a = Answer::depth(q, what, g.evidence, details);
    if !g.not_used.is_empty() {
        let why: Vec<String> = g
            .not_used
            .iter()
            .map(|(m, w)| format!("{m}: {w}"))
            .collect();
        if a.status == Status::NotAnswered {
            a.reason = Some(format!("no method gave a {what} ({})", why.join("; ")));
            a.sentence = format!("Not answered: {}.", a.reason.clone().unwrap_or_default());
        } else {
            a.sentence
                .push_str(&format!(" Not used: {}.", why.join("; ")));
        }
    }
    a
}

/// `interpret_water_table`.
pub fn interpret_water_table(ctx: &mut RunContext) -> ToolResult {
    let q = asked(ctx, QuestionKind::WaterTableDepth)?;
    let s = AnswerSettings::read(ctx)?;
    let g = evidence::water_table(ctx, &s)?;
    hold(keys::ANSWER_WATER_TABLE, depth_answer(&q, "water table", g))
}

/// `interpret_bedrock`.
pub fn interpret_bedrock(ctx: &mut RunContext) -> ToolResult {
    let q = asked(ctx, QuestionKind::BedrockDepth)?;
    let s = AnswerSettings::read(ctx)?;
    let g = evidence::bedrock(ctx, &s);
    let mut a = depth_answer(&q, "bedrock", g);
    if let (Some(p), Status::Answered) = (a.details["profiles"].get(0).cloned(), a.status) {
        a.where_ = json!({"x_m": p["x_m"], "depth_m": p["depth_m"], "z_m": p["z_m"]});
    }
    hold(keys::ANSWER_BEDROCK, a)
}

/// `interpret_change`: the time-lapse model's changed region per survey.
pub fn interpret_change(ctx: &mut RunContext) -> ToolResult {
    let q = asked(ctx, QuestionKind::Change)?;
    let s = AnswerSettings::read(ctx)?;
    let cov = ErtSettings::read(ctx)?.coverage_threshold;
    let a = match held::<ErtModel>(ctx, keys::INVERSION_RESULTS) {
        Some(ErtModel::TimeLapse(r)) => change_answer(&q, r, cov, s.change_threshold_percent),
        _ => Answer::not_answered(
            &q,
            "%",
            "change needs a time-lapse ERT inversion of two or more surveys; this run has none"
                .into(),
        ),
    };
    hold(keys::ANSWER_CHANGE, a)
}

/// The change answer of a time-lapse result (`methods::ert::interpret` gives the method).
pub fn change_answer(
    q: &Question,
    r: &TimeLapseResult,
    min_coverage: f64,
    threshold: f64,
) -> Answer {
    let covered = covered_cells(&r.coverage, min_coverage);
    let mut regions: Vec<ChangeRegion> = Vec::new();
    let mut rows = Vec::new();
    let mut words = Vec::new();
    for st in r.steps.iter().skip(1) {
        let label = st.time.clone().unwrap_or_else(|| st.label.clone());
        let region = change_region(&r.section, &st.change_percent, &covered, threshold, &label);
        let evo = match (regions.last(), &region) {
            (Some(p), Some(n)) => evolution(p, n),
            _ => "first",
        };
        let required = !st.change_within_errors();
        rows.push(json!({"survey": label, "region": region, "evolution": evo,
            "chi2_no_change": st.chi2_no_change, "required_by_data": required}));
        if let Some(c) = &region {
            words.push(format!(
                "{label}: {} % median ({} % max) over {} m² centred at x {} m, {} m deep{}{}",
                num(c.median_percent),
                num(c.max_percent),
                num(c.area_m2),
                num(c.centroid_x_m),
                num(c.centroid_depth_m),
                if evo == "first" {
                    String::new()
                } else {
                    format!(", {evo}")
                },
                if required {
                    String::new()
                } else {
                    format!(
                        " — not required by the data (χ² of no change {})",
                        num(st.chi2_no_change)
                    )
                }
            ));
            regions.push(c.clone());
        } else {
            words.push(format!(
                "{label}: no covered cell changed by {threshold} % or more"
            ));
        }
    }
    let Some(last) = regions.last().cloned() else {
        return Answer::not_answered(
            q,
            "%",
            format!("no covered cell changed by {threshold} % or more in any survey"),
        );
    };
    let direction = if last.sign < 0 {
        "decrease"
    } else {
        "increase"
    };
    let trend = trend_of(&regions);
    let conductor = conductor_trend(last.sign, trend);
    let sentence = format!(
        "Resistivity {direction} of up to {} % (median {} %) by {}, centred at x {} m and {} m below ground (half-maximum contour) over x {}–{} m, depth {}–{} m; the changed region was {trend}, so the conductive body was {conductor}. Per survey: {}.",
        num(last.max_percent.abs()),
        num(last.median_percent),
        last.label,
        pm(last.centroid_x_m, last.centroid_x_sigma_m),
        pm(last.centroid_depth_m, last.centroid_depth_sigma_m),
        num(last.x_range_m.0),
        num(last.x_range_m.1),
        num(last.depth_range_m.0),
        num(last.depth_range_m.1),
        words.join("; ")
    );
    Answer {
        question: q.words.clone(),
        kind: q.kind,
        value: Some(last.median_percent),
        unit: "%".into(),
        uncertainty: None,
        where_: json!({"centroid_x_m": last.centroid_x_m, "centroid_depth_m": last.centroid_depth_m,
            "centroid_x_sigma_m": last.centroid_x_sigma_m, "centroid_depth_sigma_m": last.centroid_depth_sigma_m,
            "x_range_m": [last.x_range_m.0, last.x_range_m.1], "depth_range_m": [last.depth_range_m.0, last.depth_range_m.1],
            "area_m2": last.area_m2}),
        evidence: vec![Evidence {
            method: ERT.prose.into(),
            value: last.median_percent,
            uncertainty: f64::NAN,
            how: format!(
                "cells of the time-lapse model ({}) changed by {threshold} % or more against the baseline, in covered cells",
                r.method.name()
            ),
            product: keys::INVERSION_RESULTS.into(),
            file: None,
        }],
        agreement: Agreement::SingleMethod,
        combined_from: Vec::new(),
        status: Status::Answered,
        reason: Some(
            "one method (time-lapse ERT); no uncertainty of the change per cell is computed".into(),
        ),
        sentence,
        details: json!({"trend": trend, "conductor_trend": conductor, "steps": rows}),
    }
}

/// What the changed region's trend means for a conductive body: a growing region of
/// resistivity *decrease* is a growing conductor; a growing region of *increase* against the
/// baseline is a conductor receding from where it was (shrinking), and the other way round.
fn conductor_trend(sign: i8, trend: &'static str) -> &'static str {
    match (sign < 0, trend) {
        (false, "growing") => "shrinking",
        (false, "shrinking") => "growing",
        (_, t) => t,
    }
}

/// `growing`, `shrinking`, `moving` or `steady` over the whole series (first to last region).
fn trend_of(regions: &[ChangeRegion]) -> &'static str {
    match (regions.first(), regions.last()) {
        (Some(a), Some(b)) if regions.len() >= 2 => evolution(a, b),
        _ => "seen in one survey only",
    }
}

/// `interpret_water_content`: water content of the baseline per 1 m of depth (and at the
/// asked depth), with the Monte Carlo spread.
pub fn interpret_water_content(ctx: &mut RunContext) -> ToolResult {
    let q = asked(ctx, QuestionKind::WaterContent)?;
    let cov = ErtSettings::read(ctx)?.coverage_threshold;
    let model = held::<ErtModel>(ctx, keys::INVERSION_RESULTS);
    let a = match (held::<ErtWaterContent>(ctx, keys::WATER_CONTENT), model) {
        (Some(wc), Some(m)) => water_content_answer(&q, wc, m, cov),
        _ => Answer::not_answered(&q, "m³/m³", "water content needs the ERT model converted with petrophysical parameters; this run has no ERT water content".into()),
    };
    hold(keys::ANSWER_WATER_CONTENT, a)
}

/// The water-content answer from the ERT conversion's first survey.
pub fn water_content_answer(
    q: &Question,
    wc: &ErtWaterContent,
    m: &ErtModel,
    min_coverage: f64,
) -> Answer {
    let Some(first) = wc.steps.first() else {
        return Answer::not_answered(
            q,
            "m³/m³",
            "the water-content conversion holds no survey".into(),
        );
    };
    let depth: Vec<f64> = (0..wc.section.n_params())
        .map(|j| wc.section.param_depth_m(j))
        .collect();
    let mut covered = covered_cells(m.coverage(), min_coverage);
    if covered.len() != depth.len() {
        // The conversion's mesh is not the model's (it cannot be, today): no mask rather
        // than a wrong one.
        covered = vec![true; depth.len()];
    }
    let (mean, std) = (&first.water_content.mean, &first.water_content.std);
    let max_depth = depth
        .iter()
        .zip(&covered)
        .filter(|(_, c)| **c)
        .map(|(d, _)| *d)
        .fold(0.0, f64::max);
    let per_band: Vec<BandWaterContent> =
        bands(&depth, mean, std, &covered, 1.0, max_depth.min(30.0));
    let chosen = match q.at_depth_m {
        Some(d) => band(&depth, mean, std, &covered, (d - 0.5).max(0.0), d + 0.5),
        None => band(&depth, mean, std, &covered, 0.0, f64::INFINITY),
    };
    let Some(c) = chosen else {
        return Answer::not_answered(q, "m³/m³", "no covered cell at the asked depth".into());
    };
    let label = wc.labels.first().cloned().unwrap_or_default();
    let table: Vec<String> = per_band
        .iter()
        .map(|b| {
            format!(
                "{}–{} m {}",
                num(b.depth_top_m),
                num(b.depth_bottom_m),
                pm(b.theta_m3_per_m3, b.sigma_m3_per_m3)
            )
        })
        .collect();
    let sentence = format!(
        "The water content {} is {} m³/m³ (ERT, {label}, Monte Carlo spread of the petrophysical prior: {}). Per depth: {}.",
        q.at_depth_m.map_or_else(
            || "of the covered section (median)".to_string(),
            |d| format!("at {} m", num(d))
        ),
        pm(c.theta_m3_per_m3, c.sigma_m3_per_m3),
        wc.prior_statement,
        table.join("; ")
    );
    Answer {
        question: q.words.clone(),
        kind: q.kind,
        value: Some(c.theta_m3_per_m3),
        unit: "m³/m³".into(),
        uncertainty: Some(c.sigma_m3_per_m3),
        where_: json!({"depth_range_m": [c.depth_top_m, c.depth_bottom_m.min(max_depth)], "survey": label}),
        evidence: vec![Evidence {
            method: ERT.prose.into(),
            value: c.theta_m3_per_m3,
            uncertainty: c.sigma_m3_per_m3,
            how: format!(
                "median over {} covered cells of the Monte Carlo mean θ; uncertainty the median σ(θ)",
                c.n_cells
            ),
            product: keys::WATER_CONTENT.into(),
            file: None,
        }],
        agreement: Agreement::SingleMethod,
        combined_from: Vec::new(),
        status: Status::Answered,
        reason: None,
        sentence,
        details: json!({"per_depth": per_band}),
    }
}

/// The answer artifact of each kind that has an interpretation step.
pub fn answer_key(kind: QuestionKind) -> Option<&'static str> {
    match kind {
        QuestionKind::WaterTableDepth => Some(keys::ANSWER_WATER_TABLE),
        QuestionKind::BedrockDepth => Some(keys::ANSWER_BEDROCK),
        QuestionKind::Change => Some(keys::ANSWER_CHANGE),
        QuestionKind::WaterContent => Some(keys::ANSWER_WATER_CONTENT),
        QuestionKind::Map | QuestionKind::Presence => None,
    }
}

/// Every question's answer as the run stands: the interpretation step's, or not answered
/// with the reason (no step for this kind, its step failed or did not run).
pub fn collect(ctx: &RunContext) -> Answers {
    let qs = questions(&ctx.goal);
    let answers = qs
        .iter()
        .map(|q| {
            let Some(key) = answer_key(q.kind) else {
                return Answer::not_answered(
                    q,
                    "",
                    format!(
                        "no interpretation step in this version answers {}",
                        q.kind.described()
                    ),
                );
            };
            if let Some(a) = held::<Answer>(ctx, key) {
                return a.clone();
            }
            let tool = format!("interpret_{}", key.trim_start_matches("answer_"));
            let why = ctx
                .steps
                .iter()
                .rev()
                .find(|s| s.tool == tool && !s.error.is_empty())
                .map_or_else(
                    || {
                        "its interpretation step did not run (the products it reads were not made)"
                            .to_string()
                    },
                    |s| format!("its interpretation step failed ({})", s.error),
                );
            Answer::not_answered(q, "", why)
        })
        .collect();
    Answers {
        answers,
        answerable: if qs.is_empty() {
            answerable_kinds().iter().map(|s| s.to_string()).collect()
        } else {
            Vec::new()
        },
    }
}

/// `answer_questions`: gather every answer (the `answers` artifact `result.json` carries).
pub fn answer_questions(ctx: &mut RunContext) -> ToolResult {
    let all = collect(ctx);
    let n = all.answers.len();
    let answered = all
        .answers
        .iter()
        .filter(|a| a.status == Status::Answered)
        .count();
    let summary = format!(
        "{answered} of {n} question(s) answered: {}",
        all.answers
            .iter()
            .map(|a| format!("{} — {}", a.question, a.sentence))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let value: Value = serde_json::to_value(&all.answers)?;
    let figure = super::report::evidence_figure(ctx, &all);
    let mut h = Held::new(all, format!("{answered} of {n} question(s) answered"))
        .number("n_answered", answered)
        .number("n_questions", n)
        .result_field(keys::ANSWERS, value);
    let mut out = Outputs::new();
    if let Some((p, caption)) = figure {
        h = h.file(p.clone());
        out = out.figure(p, &caption);
    }
    Ok((summary, out.put(keys::ANSWERS, Arc::new(h))))
}
