//! The last steps of every run: combining methods and writing the report.

use std::sync::Arc;

use super::kit::keys;
use super::kit::register_all;
use super::shortfall_reasons;
use crate::report::{self, NotDelivered, ReportInput};
use crate::runtime::run_folder::incomplete_because;
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
            && t.available(ctx)
    })
}

/// Steps that can still run before the report: the methods', then combining them and
/// answering the goal's questions.
fn others_pending(ctx: &RunContext) -> bool {
    method_steps_pending(ctx)
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
            why: format!("Left out with the user's agreement: {}", s.error),
        });
    }
    out
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

/// Write the report for the run as it stands.
pub fn write_report(ctx: &mut RunContext) -> crate::runtime::ToolResult {
    let dir = match &ctx.output_dir {
        Some(d) => d.clone(),
        None => super::kit::run_subdir(ctx, "report")?,
    };
    let mut reasons = incomplete_because(ctx, "__report_being_written__");
    reasons.retain(|r| !r.contains("report"));
    reasons.extend(super::assess(ctx));
    let mut nd = not_delivered(ctx);
    nd.extend(super::answers::report::not_delivered(ctx));
    let input = ReportInput {
        answers: Some(super::answers::report::section(ctx)),
        not_delivered: nd,
        status: if reasons.is_empty() {
            "success".into()
        } else {
            "incomplete".into()
        },
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
    };
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
