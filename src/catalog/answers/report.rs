//! The report's **Answers**: one paragraph per question in plain language, one figure that
//! overlays every method's water table and interface on the seismic section (or, without
//! one, as depth against distance), the executive summary's findings, and each unanswered
//! question for *Not delivered*.

use super::answer::{Answers, Status};
use super::questions::answerable_kinds;
use crate::catalog::kit::figure_path;
use crate::catalog::kit::held;
use crate::catalog::kit::keys;
use crate::catalog::kit::palette;
use crate::catalog::seismic::SeismicModel;
use crate::report::figures::{Axes, Series, Style, line_plot};
use crate::report::{AnswersSection, NotDelivered};
use crate::runtime::RunContext;

/// The answers of the run as it stands: the `answers` artifact, or gathered now.
pub fn answers_of(ctx: &RunContext) -> Answers {
    held::<Answers>(ctx, keys::ANSWERS)
        .cloned()
        .unwrap_or_else(|| super::collect(ctx))
}

/// The Answers section (with its figure written into the run folder).
pub fn section(ctx: &RunContext) -> AnswersSection {
    let all = answers_of(ctx);
    let mut s = AnswersSection::default();
    if all.answers.is_empty() {
        s.paragraphs.push(format!(
            "The request asked no question this version recognises, so nothing below answers one. It can answer: {}. Ask one of these in the goal to get an answer with evidence from every method.",
            answerable_kinds().join("; ")
        ));
        return s;
    }
    for a in &all.answers {
        s.paragraphs.push(format!(
            "**{}?** {}",
            a.question.trim_end_matches('?'),
            a.sentence
        ));
        if a.status == Status::Answered {
            s.findings
                .push(format!("**{}.** {}", capital(&a.question), a.sentence));
        }
    }
    let drawn = ctx
        .get::<crate::catalog::kit::Held<Answers>>(keys::ANSWERS)
        .and_then(|h| h.files.first().cloned())
        .map(|p| (p, FIGURE_CAPTION.to_string()));
    if let Some(f) = drawn.or_else(|| evidence_figure(ctx, &all)) {
        s.figures.push(f);
    }
    s
}

/// The evidence figure's caption.
pub const FIGURE_CAPTION: &str = "Depth below ground of the water table and interfaces each method read, along the line (one line per method; the Answers paragraphs give each value's uncertainty)";

fn capital(s: &str) -> String {
    let mut c = s.trim().trim_end_matches('?').chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

/// Each unanswered question, for *Not delivered*.
pub fn not_delivered(ctx: &RunContext) -> Vec<NotDelivered> {
    answers_of(ctx)
        .answers
        .iter()
        .filter(|a| a.status == Status::NotAnswered)
        .map(|a| NotDelivered {
            what: format!("An answer to “{}”", a.question),
            why: a.reason.clone().unwrap_or_default(),
        })
        .collect()
}

/// Every method's depth profile of every depth answer, as depth below ground against
/// distance along the line, with the seismic model's surface for reference.
pub fn evidence_figure(ctx: &RunContext, all: &Answers) -> Option<(std::path::PathBuf, String)> {
    let mut series = Vec::new();
    let mut i = 0usize;
    for a in all.answers.iter().filter(|a| a.status == Status::Answered) {
        let Some(profiles) = a.details.get("profiles").and_then(|p| p.as_array()) else {
            continue;
        };
        for p in profiles {
            let method = p["method"].as_str().unwrap_or("");
            let xs: Vec<f64> = p["x_m"]
                .as_array()?
                .iter()
                .filter_map(|v| v.as_f64())
                .collect();
            let ds: Vec<f64> = p["depth_m"]
                .as_array()?
                .iter()
                .filter_map(|v| v.as_f64())
                .collect();
            if xs.is_empty() || xs.len() != ds.len() {
                continue;
            }
            let name = format!("{} — {method}", a.kind.word().replace('_', " "));
            series.push(
                Series::line(&name, xs, ds)
                    .style(if i.is_multiple_of(2) {
                        Style::LinePoints
                    } else {
                        Style::Dashed
                    })
                    .colour(palette::series_colour(i)),
            );
            i += 1;
        }
    }
    if series.is_empty() {
        return None;
    }
    let path = figure_path(ctx, "answers_evidence").ok()?;
    let mut axes = Axes::new(
        "The answers' evidence: each method's depth along the line",
        "Distance x (m)",
        "Depth below ground (m)",
    );
    axes.flip_y = true;
    if let Some(m) = held::<SeismicModel>(ctx, keys::SEISMIC_RESULTS) {
        let g = &m.inversion.grid;
        axes.x_range = Some((g.x_m[0], g.x_m[g.x_m.len() - 1]));
    }
    line_plot(&path, &axes, &series).ok()?;
    Some((path, FIGURE_CAPTION.into()))
}
