//! The last steps of every run: combining methods and writing the report.

use std::sync::Arc;

use super::kit::keys;
use super::kit::register_all;
use super::shortfall_reasons;
use crate::report::{self, NotDelivered, ReportInput};
use crate::runtime::run_folder::{RunStatus, incomplete_because};
use crate::runtime::tool::RegistryError;
use crate::runtime::{Outputs, Registry, RunContext, StepStatus, Tool};

/// The report files as the finish artifact: its `files()` name the Markdown and HTML.
#[derive(Debug, Clone)]
pub struct ReportProduct {
    /// The files.
    pub files: report::ReportFiles,
}

impl crate::runtime::Product for ReportProduct {
    fn describe(&self) -> String {
        format!("the report: {}", self.files.markdown.display())
    }

    fn files(&self) -> Vec<std::path::PathBuf> {
        vec![self.files.markdown.clone(), self.files.html.clone()]
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Method steps (everything but combining and reporting) that can still run.
pub fn method_steps_pending(ctx: &RunContext) -> bool {
    super::shared_registry().tools().iter().any(|t| {
        t.module != "report"
            && t.module != "fusion"
            && t.module != super::answers::MODULE
            && t.name != super::hydro::COMPARE_TOOL
            && t.available(ctx)
    })
}

/// Steps that can still run before the report: the methods', then combining them and
/// answering the goal's questions.
fn others_pending(ctx: &RunContext) -> bool {
    method_steps_pending(ctx)
        || super::hydro::comparison_pending(ctx)
        || super::shared_registry()
            .get("fuse_methods")
            .is_some_and(|t| t.available(ctx))
        || super::shared_registry()
            .tools()
            .iter()
            .any(|t| t.module == super::answers::MODULE && t.available(ctx))
}

/// Whether the run has ERT inputs.
fn has_ert(ctx: &RunContext) -> bool {
    ctx.has_input(keys::ERT_FILES) || ctx.has_input(keys::ERT_FILE)
}

/// Everything the report must say it does not contain: each requested product the run did
/// not make, then each step that failed and was not recovered, once, with its reason.
pub fn not_delivered(ctx: &RunContext) -> Vec<NotDelivered> {
    let mut out: Vec<NotDelivered> = shortfall_reasons(ctx)
        .into_iter()
        .map(|(what, why)| NotDelivered {
            what: capitalise(&what),
            why,
        })
        .collect();
    for tool in ctx.unfinished() {
        if let Some(s) = ctx.steps.iter().rev().find(|s| s.tool == tool) {
            out.push(NotDelivered {
                what: s.label_or_tool().to_string(),
                why: s.error.clone(),
            });
        }
    }
    for s in ctx
        .steps
        .iter()
        .filter(|s| s.status == StepStatus::Skipped && s.error.contains("user"))
    {
        out.push(NotDelivered {
            what: s.label_or_tool().to_string(),
            why: left_out_because(&s.error),
        });
    }
    for u in &ctx.shortfalls {
        out.push(NotDelivered {
            what: u.what.clone(),
            why: if u.output {
                format!(
                    "could not be written ({}); the result stays in this run and in the report",
                    u.why
                )
            } else {
                format!("left out, the step went on without it: {}", u.why)
            },
        });
    }
    out
}

/// "Left out with the user's agreement: …", said once even when the step's own record
/// already starts with it.
fn left_out_because(error: &str) -> String {
    const PREFIX: &str = "Left out with the user's agreement: ";
    let rest = error.strip_prefix(PREFIX).unwrap_or(error);
    format!("{PREFIX}{rest}")
}

/// Survey dates the products carry (`survey_dates` or `survey_date` among their key numbers).
fn survey_dates(ctx: &RunContext) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for k in ctx.artifact_keys() {
        if let Some(p) = ctx.product(&k) {
            let n = p.key_numbers();
            for key in ["survey_dates", "survey_date"] {
                match n.get(key) {
                    Some(serde_json::Value::String(s)) => out.push(s.clone()),
                    Some(serde_json::Value::Array(a)) => {
                        out.extend(a.iter().filter_map(|v| v.as_str().map(str::to_string)))
                    }
                    _ => {}
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// What the report is written from, with the status and reasons it is to state.
fn report_input(ctx: &RunContext, status: &str, reasons: Vec<String>) -> ReportInput {
    let mut not_delivered = not_delivered(ctx);
    not_delivered.extend(super::answers::report::not_delivered(ctx));
    ReportInput {
        answers: Some(super::answers::report::section(ctx)),
        not_delivered,
        status: status.to_string(),
        reasons,
        site: ctx
            .config_str(keys::SITE)
            .map(str::to_string)
            .unwrap_or_else(|| {
                ctx.project_dir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            }),
        survey_dates: survey_dates(ctx),
        model_text: Vec::new(),
        sections: super::kit::methods::report_sections(),
    }
}

/// Write the report for the run as it stands.
pub fn write_report(ctx: &mut RunContext) -> crate::runtime::ToolResult {
    let dir = match &ctx.output_dir {
        Some(d) => d.clone(),
        None => super::kit::run_subdir(ctx, "report")?,
    };
    let mut reasons = incomplete_because(ctx, "__report_being_written__");
    reasons.retain(|r| !r.contains("report"));
    reasons.extend(super::assess(ctx));
    if ctx
        .settings
        .get(crate::runtime::run_folder::FINAL_STATUS_PENDING)
        == Some(&serde_json::Value::Bool(true))
    {
        // Issue 19: the run's end rewrites this report with the status it decides once; a
        // run killed before then must not leave a report claiming a status it never reached
        // (result.json, written after each step, says the same until then).
        reasons.insert(0, crate::runtime::run_folder::NOT_ENDED_REASON.to_string());
    }
    let status = if reasons.is_empty() {
        "success"
    } else {
        "incomplete"
    };
    let input = report_input(ctx, status, reasons);
    let files = report::write(ctx, &input, &dir)?;
    let n_nd = input.not_delivered.len();
    let summary = format!(
        "Wrote the report ({} and {}){}.",
        files.markdown.display(),
        files.html.display(),
        if n_nd == 0 {
            String::new()
        } else {
            format!("; it lists {n_nd} item(s) not delivered")
        }
    );
    Ok((
        summary,
        Outputs::new().put(keys::REPORT_FILES, Arc::new(ReportProduct { files })),
    ))
}

/// After the last step: rewrite the report with the run's final status (decided once,
/// from what was delivered), or, for a stopped run without one, write a report of the steps
/// that ran. A write that fails is a note in the run and an `Err` naming the file, which the
/// CLI reports with a non-zero exit.
pub fn finalize(ctx: &mut RunContext, status: RunStatus, reasons: &[String]) -> Result<(), String> {
    let Some(dir) = ctx.output_dir.clone() else {
        return Ok(());
    };
    let had_report = ctx.product(keys::REPORT_FILES).is_some();
    if !had_report && status != RunStatus::Stopped {
        return Ok(());
    }
    let input = report_input(ctx, status.word(), reasons.to_vec());
    match report::write(ctx, &input, &dir) {
        Ok(files) if !had_report => ctx.put(
            keys::REPORT_FILES,
            Arc::new(ReportProduct { files }),
            Some("the report of the steps that ran before the stop".into()),
        ),
        Ok(_) => {}
        Err(e) => {
            let why = format!(
                "The report could not be written with the run's final status ({}): {e}",
                status.word()
            );
            ctx.note(&why);
            return Err(why);
        }
    }
    Ok(())
}

/// Register the report tools (last, in dependency order).
pub fn register(reg: &mut Registry) -> Result<(), RegistryError> {
    register_all(
        reg,
        [
            Tool::new(
                "write_report",
                "Write the final report (Markdown and HTML with figures) from everything the run produced, including an ERT model. Run this last, once the products the request asked for exist.",
                write_report,
            )
            .requires(&[keys::INVERSION_RESULTS])
            .produces(&[keys::REPORT_FILES])
            .label("Write the report")
            .module("report")
            .agent("report writer")
            .when(|ctx| !others_pending(ctx)),
            Tool::new(
                "write_survey_report",
                "Write the final report of a run without an ERT model, from the seismic, TDEM, MT, gravity/magnetic and GPR results it produced. Run this last.",
                write_report,
            )
            .produces(&[keys::REPORT_FILES])
            .label("Write the report")
            .module("report")
            .agent("report writer")
            .proposable(false)
            .when(|ctx| ctx.product(keys::INVERSION_RESULTS).is_none() && !ctx.projected(keys::INVERSION_RESULTS) && (!has_ert(ctx) || ctx.attempted("load_ert_surveys") > 0 || ctx.skipped("load_ert_surveys")) && !others_pending(ctx)),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_left_out_by_the_user_says_so_once() {
        // Issue 17: "Left out with the user's agreement: Left out with the user's agreement: …".
        let mut ctx = RunContext::new("x");
        ctx.begin("invert_gpr", "").label = "Process GPR".into();
        ctx.finish(
            "",
            StepStatus::Skipped,
            "Left out with the user's agreement: not needed for the water table",
        );
        let nd = not_delivered(&ctx);
        assert_eq!(nd.len(), 1, "{nd:?}");
        assert_eq!(
            nd[0].why,
            "Left out with the user's agreement: not needed for the water table"
        );
    }

    #[test]
    fn a_file_not_written_is_named_in_not_delivered() {
        let mut ctx = RunContext::new("x");
        ctx.begin("invert_ert", "");
        ctx.not_written(std::path::Path::new("products/ert_cells.csv"), "disk full");
        ctx.finish("Inverted.", StepStatus::Ok, "");
        let nd = not_delivered(&ctx);
        assert!(
            nd.iter()
                .any(|n| n.what.contains("products/ert_cells.csv") && n.why.contains("disk full")),
            "{nd:?}"
        );
        assert_eq!(ctx.shortfalls[0].tool, "invert_ert");
    }
}
