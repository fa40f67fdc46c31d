//! The report: Markdown and a self-contained HTML file (figures embedded), written from the
//! run's steps — what actually ran, what it found, what it did not deliver — never from the
//! configuration.
//!
//! Fields without content are left out rather than printed as "N/A". The first line of the
//! summary never claims a run finished that did not.

pub mod figures;
pub mod html;
pub mod ticks;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::runtime::events::AnsweredBy;
use crate::runtime::run_folder::{now_unix, utc_stamp};
use crate::runtime::{RunContext, StepStatus};

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A file could not be written.
    #[error("cannot write the report to {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// One thing the report must say it does not contain, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotDelivered {
    /// What is missing.
    pub what: String,
    /// Why.
    pub why: String,
}

/// What the report is written from besides the run: things only the catalog knows.
#[derive(Debug, Clone, Default)]
pub struct ReportInput {
    /// Requested products that are missing, and failed steps not recovered.
    pub not_delivered: Vec<NotDelivered>,
    /// The run's status word as it stands when the report is written (`success` /
    /// `incomplete`), with its reasons.
    pub status: String,
    /// Why the run is not a success.
    pub reasons: Vec<String>,
    /// Site name (from the project).
    pub site: String,
    /// Survey dates found in the data, as text.
    pub survey_dates: Vec<String>,
    /// Text written by a model, to be flagged where it appears (heading, text).
    pub model_text: Vec<(String, String)>,
    /// The report's sections in order, as (module key, heading): the catalog's `METHODS`
    /// between the project and the fusion. A step whose module is not listed has no section.
    pub sections: Vec<(&'static str, &'static str)>,
    /// The answers to the goal's questions (computed, not written by a model), when the
    /// catalog has them: the report opens with them.
    pub answers: Option<AnswersSection>,
}

/// The report's **Answers** section as the catalog computed it.
#[derive(Debug, Clone, Default)]
pub struct AnswersSection {
    /// One paragraph per question (Markdown).
    pub paragraphs: Vec<String>,
    /// Figures overlaying the evidence (path, caption).
    pub figures: Vec<(PathBuf, String)>,
    /// The executive summary's findings, one line each.
    pub findings: Vec<String>,
}

/// The files written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportFiles {
    /// `report.md`.
    pub markdown: PathBuf,
    /// `report.html` (figures embedded).
    pub html: PathBuf,
}

/// Write `report.md` and `report.html` into `dir`.
pub fn write(
    ctx: &RunContext,
    input: &ReportInput,
    dir: &Path,
) -> Result<ReportFiles, ReportError> {
    // Quoted file content, step errors and warnings can carry control bytes (a truncated
    // binary file): the report shows them as `\xNN`, never raw.
    let md = crate::methods::io::escape_control(&markdown(ctx, input, dir), "\n\t");
    let md_path = dir.join("report.md");
    // Both files through the run's one atomic writer: a full disk or a kill leaves the
    // previous report whole (or none), never an empty or half file.
    crate::runtime::run_folder::write_file_atomic(&md_path, md.as_bytes()).map_err(|source| {
        ReportError::Io {
            path: md_path.clone(),
            source,
        }
    })?;
    let html_path = dir.join("report.html");
    let page = html::render(&md, dir, "Hydrogeophysical survey report");
    crate::runtime::run_folder::write_file_atomic(&html_path, page.as_bytes()).map_err(
        |source| ReportError::Io {
            path: html_path.clone(),
            source,
        },
    )?;
    Ok(ReportFiles {
        markdown: md_path,
        html: html_path,
    })
}

/// `path` relative to `dir` when it is inside it (figures are linked relatively).
fn rel(path: &Path, dir: &Path) -> String {
    path.strip_prefix(dir).unwrap_or(path).display().to_string()
}

/// The report as Markdown.
pub fn markdown(ctx: &RunContext, input: &ReportInput, dir: &Path) -> String {
    let mut out = String::new();
    let methods: Vec<&str> = input
        .sections
        .iter()
        .filter(|(k, _)| {
            *k != "project"
                && ctx
                    .steps
                    .iter()
                    .any(|s| s.module == *k && s.status == StepStatus::Ok)
        })
        .map(|(_, t)| *t)
        .collect();

    // Title and document control.
    let _ = writeln!(out, "# Hydrogeophysical survey report\n");
    let _ = writeln!(
        out,
        "> **Automated output — technical review required.** Every number below was computed by HydroGeo Studio from the data named in this report; none was typed in by hand. Check the quality tables and the warnings before relying on a result.\n"
    );
    let _ = writeln!(out, "| Document control | |\n|---|---|");
    if !input.site.is_empty() {
        let _ = writeln!(out, "| Site | {} |", cell(&input.site));
    }
    if !input.survey_dates.is_empty() {
        let _ = writeln!(
            out,
            "| Survey dates | {} |",
            cell(&input.survey_dates.join(", "))
        );
    }
    if !methods.is_empty() {
        let _ = writeln!(out, "| Methods | {} |", cell(&methods.join("; ")));
    }
    let _ = writeln!(
        out,
        "| Software | HydroGeo Studio {} |",
        env!("CARGO_PKG_VERSION")
    );
    let _ = writeln!(out, "| Report date | {} |", utc_stamp(now_unix()));
    if let Some(dec) = ctx.settings.get("decider").and_then(|v| v.as_str()) {
        let _ = writeln!(out, "| Steps chosen by | {} |", cell(dec));
    }
    let _ = writeln!(out, "| Run status | {} |", cell(&input.status));
    let _ = writeln!(
        out,
        "| Status | automated output — technical review required |\n"
    );

    // Answers to the goal's questions.
    if let Some(a) = &input.answers {
        let _ = writeln!(out, "## Answers\n");
        let _ = writeln!(
            out,
            "*Computed from the data by the interpretation steps, not written by a model.*\n"
        );
        for p in &a.paragraphs {
            let _ = writeln!(out, "{}\n", p.trim_end());
        }
        for (path, caption) in &a.figures {
            let _ = writeln!(
                out,
                "![{}]({})\n\n*Figure: {caption}*\n",
                cell(caption),
                rel(path, dir)
            );
        }
    }

    // Executive summary.
    let _ = writeln!(out, "## Executive summary\n");
    if input.status != "success" {
        let _ = writeln!(
            out,
            "**This run did not complete.** {}\n",
            if input.reasons.is_empty() {
                "See Not delivered below.".to_string()
            } else {
                input.reasons.join(" ")
            }
        );
    }
    let _ = writeln!(out, "**Scope.** The request was: “{}”.\n", ctx.goal.trim());
    let answered: Vec<String> = input
        .answers
        .iter()
        .flat_map(|a| a.findings.iter().map(|f| format!("- {f}")))
        .collect();
    let findings: Vec<String> = if !answered.is_empty() {
        answered
    } else {
        ctx.steps
            .iter()
            .filter(|s| {
                s.status == StepStatus::Ok
                    && s.module != "project"
                    && s.module != "report"
                    && !s.summary.is_empty()
            })
            .map(|s| format!("- **{}.** {}", s.label_or_tool(), s.summary))
            .collect()
    };
    if !findings.is_empty() {
        let _ = writeln!(out, "**Principal findings.**\n\n{}\n", findings.join("\n"));
    }
    let _ = writeln!(out, "**Confidence.** {}\n", confidence(ctx, input));

    // Not delivered.
    if !input.not_delivered.is_empty() {
        let _ = writeln!(out, "## Not delivered\n");
        for nd in &input.not_delivered {
            let _ = writeln!(out, "- **{}** — {}", nd.what, nd.why);
        }
        out.push('\n');
    }

    // Per method.
    let mut by_module: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, s) in ctx.steps.iter().enumerate() {
        if let Some(pos) = input.sections.iter().position(|(k, _)| *k == s.module) {
            by_module.entry(pos).or_default().push(i);
        }
    }
    for (pos, steps) in by_module {
        let (key, title) = input.sections[pos];
        if key == "project" {
            continue;
        }
        let _ = writeln!(out, "## {title}\n");
        for i in steps {
            let s = &ctx.steps[i];
            let _ = writeln!(out, "### {}\n", s.label_or_tool());
            match s.status {
                StepStatus::Ok => {
                    let _ = writeln!(out, "{}\n", s.summary);
                }
                other => {
                    let _ = writeln!(
                        out,
                        "*{}:* {}\n",
                        other.word(),
                        if s.error.is_empty() {
                            &s.summary
                        } else {
                            &s.error
                        }
                    );
                }
            }
            for key in &s.produced {
                if let Some(md) = ctx.product(key).and_then(|p| p.report_markdown()) {
                    let _ = writeln!(out, "{}\n", md.trim_end());
                }
            }
            for f in &s.figures {
                let _ = writeln!(
                    out,
                    "![{}]({})\n\n*Figure: {}*\n",
                    cell(&f.caption),
                    rel(&f.path, dir),
                    f.caption
                );
            }
        }
    }

    // Text written by a model.
    if !input.model_text.is_empty() {
        let _ = writeln!(
            out,
            "## Interpretation\n\n**Written by a model — verify before citing.**\n"
        );
        for (head, text) in &input.model_text {
            let _ = writeln!(out, "### {head}\n\n{text}\n");
        }
    }

    // Decisions a person made.
    let mut decisions: Vec<String> = Vec::new();
    for q in &ctx.questions {
        let who = match q.by {
            AnsweredBy::User => "answered",
            AnsweredBy::Default => "the answer matched no option; the default was taken:",
            AnsweredBy::NobodyAsked => {
                "nobody could be asked (nobody_asked); the default was taken:"
            }
            AnsweredBy::ClosedWithoutAnswer => {
                "the window closed before an answer (closed_without_answer); the default was taken:"
            }
        };
        let label = q
            .options
            .iter()
            .find(|o| o.id == q.answer)
            .map_or(q.answer.as_str(), |o| o.label.as_str());
        decisions.push(format!("- Asked: {} — {who} **{label}**.", q.question));
    }
    for a in &ctx.approvals {
        let who = match a.by {
            AnsweredBy::User => "the user answered",
            AnsweredBy::Default => "no valid answer came; the safe default was",
            AnsweredBy::NobodyAsked => "nobody could be asked (nobody_asked); the safe default was",
            AnsweredBy::ClosedWithoutAnswer => {
                "the window closed before an answer (closed_without_answer); the safe default was"
            }
        };
        decisions.push(format!(
            "- Step {} ({}): {who} **{}**.",
            a.step, a.tool, a.verdict
        ));
    }
    for s in ctx
        .steps
        .iter()
        .filter(|s| s.status == StepStatus::Skipped && s.error.contains("user"))
    {
        decisions.push(format!("- {} was left out: {}", s.label_or_tool(), s.error));
    }
    for g in &ctx.guidance {
        decisions.push(format!("- Note from the user during the run: “{g}”."));
    }
    for p in &ctx.proposals {
        decisions.push(format!(
            "- Proposed: {} ({}) — {}.",
            p.title,
            p.why,
            if p.accepted { "accepted" } else { "declined" }
        ));
    }
    if !decisions.is_empty() {
        let _ = writeln!(
            out,
            "## Decisions a person made\n\n{}\n",
            decisions.join("\n")
        );
    }

    // Settings changed mid-run.
    if !ctx.setting_changes.is_empty() {
        let _ = writeln!(
            out,
            "## Settings changed during the run\n\n| Setting | Before | After | Changed by | Why |\n|---|---|---|---|---|"
        );
        for c in &ctx.setting_changes {
            let _ = writeln!(
                out,
                "| {} | `{}` | `{}` | {} | {} |",
                c.key,
                cell(&c.old.to_string()),
                cell(&c.new.to_string()),
                c.by,
                cell(&c.why)
            );
        }
        out.push('\n');
    }

    // Code that ran (or was offered), with its source.
    if !ctx.scripts.is_empty() {
        let _ = writeln!(out, "## Generated code\n");
        for r in &ctx.scripts {
            let who = match r.by {
                AnsweredBy::User => "you",
                AnsweredBy::Default => "nobody (the default)",
                AnsweredBy::NobodyAsked => "nobody, since nobody could be asked (the default)",
                AnsweredBy::ClosedWithoutAnswer => "nobody, the window closed first (the default)",
            };
            let _ = writeln!(
                out,
                "### {} {} — {}\n\n{}\n\nDecision: **{}** by {who}. Outcome: {}{}. Kept in `{}`.\n",
                match r.kind.as_str() {
                    "reader" => "Reader",
                    _ => "Script",
                },
                r.n,
                r.status,
                r.purpose,
                r.decision,
                r.status,
                if r.error.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", crate::runtime::offers::last_line(&r.error))
                },
                r.folder.display()
            );
            let source = r.edited.as_deref().unwrap_or(&r.proposed);
            let _ = writeln!(out, "```python\n{}\n```\n", source.trim_end());
            if r.edited.is_some() {
                let _ = writeln!(
                    out,
                    "You edited it before approving; the model's version was:\n\n```python\n{}\n```\n",
                    r.proposed.trim_end()
                );
            }
        }
    }

    // Warnings.
    if !ctx.warnings.is_empty() {
        let _ = writeln!(out, "## Warnings\n");
        for w in &ctx.warnings {
            let _ = writeln!(out, "- {w}");
        }
        out.push('\n');
    }

    // Model use.
    let _ = writeln!(out, "## Model use\n");
    if ctx.usage.calls == 0 {
        let _ = writeln!(
            out,
            "No language model was called during this run: every step was chosen by dependency order, and no text in this report was written by a model.\n"
        );
    } else {
        let _ = writeln!(
            out,
            "A language model ({}) chose steps: {} calls, {} tokens in, {} tokens out, estimated cost US$ {:.4}. {}\n",
            ctx.settings
                .get("decider")
                .and_then(|v| v.as_str())
                .unwrap_or("unknown"),
            ctx.usage.calls,
            ctx.usage.tokens_in,
            ctx.usage.tokens_out,
            ctx.usage.cost_usd,
            if input.model_text.is_empty() {
                "No text in this report was written by a model; the numbers and sentences come from the tools."
            } else {
                "The section headed Interpretation was written by the model and is flagged there."
            }
        );
    }

    // Appendix: output files.
    let files = list_files(dir);
    if !files.is_empty() {
        let _ = writeln!(out, "## Appendix: output files\n");
        for f in files {
            let _ = writeln!(out, "- `{f}`");
        }
        out.push('\n');
    }
    out
}

/// A confidence sentence from the quality scores the evaluations left and the warnings.
fn confidence(ctx: &RunContext, input: &ReportInput) -> String {
    // (key, score, passed): an evaluation's own verdict when it states one (a model can
    // score above the mark and still fail a required check), else the score against 70.
    let mut scores: Vec<(String, f64, bool)> = Vec::new();
    for key in ctx.artifact_keys() {
        if let Some(p) = ctx.product(&key) {
            let nums = p.key_numbers();
            if let Some(q) = nums.get("quality_score").and_then(|v| v.as_f64()) {
                let passed = nums
                    .get("passed")
                    .and_then(|v| v.as_bool())
                    .unwrap_or(q >= 70.0);
                scores.push((key, q, passed));
            }
        }
    }
    let mut parts = Vec::new();
    if scores.is_empty() {
        parts.push("No inversion was scored, so the results have no quality score.".to_string());
    } else {
        let list: Vec<String> = scores
            .iter()
            .map(|(k, q, passed)| {
                format!(
                    "{k} {q:.0}/100{}",
                    if *passed { "" } else { " (does not pass)" }
                )
            })
            .collect();
        let failed = scores.iter().filter(|(_, _, passed)| !passed).count();
        parts.push(format!(
            "Quality scores (pass mark 70, and each evaluation's required checks): {}{}.",
            list.join(", "),
            if failed > 0 {
                format!("; {failed} do not pass their evaluation")
            } else {
                String::new()
            }
        ));
    }
    if !input.not_delivered.is_empty() {
        parts.push(format!(
            "{} requested item(s) were not delivered.",
            input.not_delivered.len()
        ));
    }
    if !ctx.warnings.is_empty() {
        parts.push(format!(
            "{} warning(s) were raised; they are listed below.",
            ctx.warnings.len()
        ));
    }
    parts.push(
        "The scores are heuristics: they say where to look, not that a model is unique or right."
            .into(),
    );
    parts.join(" ")
}

/// Text safe inside a Markdown table cell.
pub fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// Every file under `dir`, relative, sorted (the report itself included once written).
fn list_files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(rel(&p, dir));
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::context::Ended;

    #[test]
    fn notes_from_the_run_itself_are_never_shown_as_the_users() {
        // Issue 17: system sentences were printed as "Note from the user during the run".
        let dir = tempfile::tempdir().unwrap();
        let mut ctx = RunContext::new("x");
        ctx.run_notes
            .push("You asked: which line? The user chose: line 1.".into());
        let md = markdown(&ctx, &ReportInput::default(), dir.path());
        assert!(!md.contains("Note from the user"), "{md}");
        // The user's own note is reported as theirs.
        ctx.guidance.push("use lambda 5".into());
        let md = markdown(&ctx, &ReportInput::default(), dir.path());
        assert!(md.contains("Note from the user during the run: “use lambda 5”"));
    }

    #[test]
    fn an_incomplete_run_says_so_first_and_lists_what_it_did_not_deliver() {
        let dir = tempfile::tempdir().unwrap();
        let mut ctx = RunContext::new("Where is the water table and what is the water content?");
        ctx.begin("invert_tdem", "");
        {
            let s = ctx.open_step_mut().unwrap();
            s.label = "Run TDEM inversion".into();
            s.module = "em".into();
        }
        ctx.finish("", StepStatus::Failed, "TDEM data file not found: s.csv");
        ctx.ended = Some(Ended::Exhausted);
        let input = ReportInput {
            not_delivered: vec![NotDelivered {
                what: "Run TDEM inversion".into(),
                why: "TDEM data file not found: s.csv".into(),
            }],
            status: "incomplete".into(),
            reasons: vec!["Run TDEM inversion failed: TDEM data file not found: s.csv".into()],
            ..Default::default()
        };
        let files = write(&ctx, &input, dir.path()).unwrap();
        let md = std::fs::read_to_string(&files.markdown).unwrap();
        let summary = md.split("## Executive summary\n\n").nth(1).unwrap();
        assert!(
            summary.starts_with("**This run did not complete.**"),
            "{summary}"
        );
        assert!(md.contains(
            "## Not delivered\n\n- **Run TDEM inversion** — TDEM data file not found: s.csv"
        ));
        assert!(!md.contains("N/A"));
        assert!(md.contains("No language model was called"));
        let html = std::fs::read_to_string(&files.html).unwrap();
        assert!(html.contains("<h2>Not delivered</h2>"));
    }
}
