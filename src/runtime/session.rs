//! One run from a project to a run folder: the folder, `run.json`, the journal, the loop,
//! `result.json` after every step and at the end. The CLI and the studio both start runs
//! here, so a run behaves the same whichever way it was started.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::context::{Ended, RunContext};
use super::controller::{Assess, Mode, RunOptions, drive};
use super::decide::Decide;
use super::events::{Event, Listener};
use super::interaction::Interaction;
use super::journal::{JOURNAL_FILE, Journal};
use super::project::Project;
use super::run_folder::{
    RESULT_FILE, RunFolder, RunStatus, result_value, status_of, status_so_far, write_atomic,
};
use super::steering::Steering;
use super::tool::Registry;

/// What a run needs besides its tools and its decider.
pub struct RunSpec {
    /// The project: goal, inputs, settings.
    pub project: Project,
    /// The folder run folders are created in (`<project>/runs` by default).
    pub runs_dir: PathBuf,
    /// Auto or step by step.
    pub mode: Mode,
    /// Step bound.
    pub max_steps: usize,
    /// The artifact that must exist before the run may finish.
    pub finish: String,
    /// Pause / resume / stop / notes from another thread.
    pub steering: Steering,
    /// Who answers requests; `None`: nobody (safe defaults).
    pub interaction: Option<Arc<dyn Interaction>>,
    /// Extra listeners (the studio's channel, the CLI's printer).
    pub listeners: Vec<Listener>,
    /// Reasons the run is incomplete that only the catalog knows (requested products).
    pub assess: Option<Assess>,
    /// Extra settings recorded in `run.json` (never a key).
    pub settings: serde_json::Map<String, serde_json::Value>,
    /// Receives every product a step stores, as it is stored (the studio's panels draw from
    /// these while the run goes on).
    pub on_product: Option<ProductSink>,
    /// Flexible mode: the model may look at products and propose off-route actions.
    pub flexible: bool,
    /// The artifacts the request asked for (steps they need are never left out).
    pub protected: Option<Assess>,
    /// Notes to record at the start (e.g. files adopted from the request).
    pub notes: Vec<String>,
    /// Called once after the last step with the run's final status and reasons (the
    /// catalog rewrites the report with them, or writes one for a stopped run), so the
    /// report, `result.json` and the CLI say the same.
    pub finalize: Option<Finalize>,
}

/// The end-of-run hook: `(run, final status, reasons)`. An `Err` says which file could not be
/// written (the report with the final status); the run's outcome lists it as unwritten.
pub type Finalize =
    Arc<dyn Fn(&mut RunContext, RunStatus, &[String]) -> Result<(), String> + Send + Sync>;

/// Receives `(key, product)` after each step that made them.
pub type ProductSink = Arc<dyn Fn(&str, crate::runtime::SharedProduct) + Send + Sync>;

impl RunSpec {
    /// Defaults for a project: runs under `<project dir>/runs`, auto mode, 24 steps, report.
    pub fn new(project: Project) -> Self {
        let runs_dir = project.dir.join("runs");
        RunSpec {
            project,
            runs_dir,
            mode: Mode::Auto,
            max_steps: super::controller::DEFAULT_MAX_STEPS,
            finish: super::controller::DEFAULT_FINISH.to_string(),
            steering: Steering::new(),
            interaction: None,
            listeners: Vec::new(),
            assess: None,
            settings: serde_json::Map::new(),
            on_product: None,
            flexible: false,
            protected: None,
            notes: Vec::new(),
            finalize: None,
        }
    }
}

/// How a run ended.
#[derive(Debug)]
pub struct RunOutcome {
    /// The run folder.
    pub dir: PathBuf,
    /// success | incomplete | stopped.
    pub status: RunStatus,
    /// Why it is not a success.
    pub reasons: Vec<String>,
    /// How the loop ended.
    pub ended: Ended,
    /// The run itself (steps, artifacts, warnings).
    pub context: RunContext,
    /// Files the run had to write at its end and could not (`result.json`, the report with
    /// the final status), each with its cause. Not empty: the run folder does not say how
    /// the run ended, and the CLI exits with an error.
    pub unwritten: Vec<String>,
}

/// Why a run could not even start.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The run folder or its first files could not be written.
    #[error("cannot create the run folder under {dir}: {source}")]
    Folder {
        /// Where it was to be.
        dir: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// The report files named by the finish artifact (its `files()`), as (markdown, html).
fn report_paths(ctx: &RunContext, finish: &str) -> Option<(PathBuf, PathBuf)> {
    let files = ctx.product(finish)?.files();
    let md = files
        .iter()
        .find(|f| f.extension().is_some_and(|e| e == "md"))?
        .clone();
    let html = files
        .iter()
        .find(|f| f.extension().is_some_and(|e| e == "html"))
        .cloned()
        .unwrap_or_else(|| md.with_extension("html"));
    Some((md, html))
}

/// Write `result.json` as the run stands (after a step: `incomplete` until the run ends,
/// [`status_so_far`]). A failure is reported on stderr and the run goes on: the next step,
/// or the end, writes it again.
fn write_result(ctx: &RunContext, dir: &Path, finish: &str, assess: &Option<Assess>) {
    let extra = assess.as_ref().map(|a| a(ctx)).unwrap_or_default();
    let (status, reasons) = status_so_far(ctx, finish, extra);
    if let Err(e) = write_result_as(ctx, dir, finish, status, &reasons) {
        eprintln!("warning: cannot write {RESULT_FILE}: {e}");
    }
}

/// Write `result.json` with a status already decided (atomically: the old one stays whole
/// when this fails).
fn write_result_as(
    ctx: &RunContext,
    dir: &Path,
    finish: &str,
    status: RunStatus,
    reasons: &[String],
) -> std::io::Result<()> {
    let report = report_paths(ctx, finish);
    let value = result_value(
        ctx,
        status,
        reasons,
        report.as_ref().map(|(m, h)| (m.as_path(), h.as_path())),
    );
    write_atomic(&dir.join(RESULT_FILE), &value)
}

/// Run a project to its end in a new run folder.
pub fn run(
    spec: RunSpec,
    registry: &Registry,
    decider: Option<&mut (dyn Decide + '_)>,
) -> Result<RunOutcome, SessionError> {
    let folder = RunFolder::create(&spec.runs_dir, &spec.project.goal).map_err(|source| {
        SessionError::Folder {
            dir: spec.runs_dir.clone(),
            source,
        }
    })?;
    let dir = folder.dir.clone();
    let journal = Journal::open(&dir.join(JOURNAL_FILE)).map_err(|e| SessionError::Folder {
        dir: dir.clone(),
        source: std::io::Error::other(e.to_string()),
    })?;
    let mut ctx = spec
        .project
        .context()
        .with_output_dir(&dir)
        .with_cancel_flag(spec.steering.cancel_flag());
    if let Some(i) = &spec.interaction {
        ctx = ctx.with_interaction(i.clone());
    }
    let decider_name = decider.as_ref().map_or_else(
        || "no model (dependency order)".to_string(),
        |d| d.describe(),
    );
    ctx.settings.insert("mode".into(), spec.mode.word().into());
    ctx.settings.insert("flexible".into(), spec.flexible.into());
    ctx.settings
        .insert("decider".into(), decider_name.clone().into());
    ctx.settings.extend(spec.settings.clone());
    if spec.finalize.is_some() {
        ctx.settings
            .insert(super::run_folder::FINAL_STATUS_PENDING.into(), true.into());
    }
    ctx.events.subscribe(journal.into_listener());
    for l in spec.listeners {
        ctx.events.subscribe(l);
    }
    folder
        .write_run_json(&ctx, Some(&spec.project.file))
        .map_err(|source| SessionError::Folder {
            dir: dir.clone(),
            source,
        })?;
    ctx.events.emit(&Event::RunStarted {
        goal: ctx.goal.clone(),
        run_dir: dir.display().to_string(),
        mode: spec.mode.word().into(),
        decider: decider_name,
    });
    if decider.is_none() {
        ctx.note("No model is connected, so the run follows the tools' dependency order.");
    }
    for n in &spec.notes {
        ctx.note(n);
    }
    for (key, path) in spec.project.missing_inputs() {
        ctx.note(&format!(
            "The input {key} names {}, which does not exist.",
            path.display()
        ));
    }
    let finish = spec.finish.clone();
    let assess = spec.assess.clone();
    let dir2 = dir.clone();
    let finish2 = finish.clone();
    let assess2 = assess.clone();
    let sink = spec.on_product.clone();
    let finalize = spec.finalize.clone();
    let options = RunOptions {
        mode: spec.mode,
        max_steps: spec.max_steps,
        finish: finish.clone(),
        recovery: true,
        flexible: spec.flexible,
        protected: spec.protected.clone(),
        steering: Some(spec.steering.clone()),
        on_result: Some(Arc::new(move |c: &RunContext| {
            if let (Some(sink), Some(step)) = (&sink, c.steps.last()) {
                for key in &step.produced {
                    if let Some(p) = c.product(key) {
                        sink(key, p.clone());
                    }
                }
            }
            write_result(c, &dir2, &finish2, &assess2);
        })),
    };
    write_result(&ctx, &dir, &finish, &assess);
    let ended = drive(&mut ctx, registry, decider, &options);
    // The status is decided once, after the last step, from what was delivered; the report
    // is then (re)written with it and result.json records the same.
    let extra = assess.as_ref().map(|a| a(&ctx)).unwrap_or_default();
    let (status, reasons) = status_of(&ctx, &finish, extra);
    let mut unwritten = Vec::new();
    if let Some(f) = &finalize
        && let Err(e) = f(&mut ctx, status, &reasons)
    {
        unwritten.push(e);
    }
    if let Err(e) = write_result_as(&ctx, &dir, &finish, status, &reasons) {
        unwritten.push(format!("{RESULT_FILE} could not be written: {e}"));
    }
    ctx.events.emit(&Event::RunEnded {
        ended: ended.word().into(),
        status: status.word().into(),
        reasons: reasons.clone(),
        report: report_paths(&ctx, &finish).map(|(m, _)| m.display().to_string()),
    });
    Ok(RunOutcome {
        dir,
        status,
        reasons,
        ended,
        context: ctx,
        unwritten,
    })
}

/// [`run`] with every stored product handed to `sink` as it is made.
pub fn run_with_shelf(
    mut spec: RunSpec,
    registry: &Registry,
    decider: Option<&mut (dyn Decide + '_)>,
    sink: ProductSink,
) -> Result<RunOutcome, SessionError> {
    spec.on_product = Some(sink);
    run(spec, registry, decider)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::journal::replay;
    use crate::runtime::product::JsonProduct;
    use crate::runtime::step::StepStatus;
    use crate::runtime::tool::{Outputs, Tool};
    use serde_json::Value;

    fn registry() -> Registry {
        let mut reg = Registry::new();
        reg.register(
            Tool::new("load", "Load.", |ctx| {
                let p = ctx
                    .input_path("data_file")
                    .ok_or_else(|| anyhow::anyhow!("no data_file"))?;
                let text = std::fs::read_to_string(&p)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
                Ok((
                    format!("{} lines", text.lines().count()),
                    Outputs::new().with("data", JsonProduct::new("d", Value::Null)),
                ))
            })
            .produces(&["data"]),
        )
        .unwrap();
        reg.register(
            Tool::new("report", "Report.", |ctx| {
                let dir = ctx.output_dir.clone().unwrap();
                let md = dir.join("report.md");
                std::fs::write(&md, "# Report\n")?;
                std::fs::write(dir.join("report.html"), "<h1>Report</h1>")?;
                Ok((
                    "Wrote the report.".into(),
                    Outputs::new().with(
                        "report_files",
                        JsonProduct::new("report", serde_json::json!({"markdown": md})),
                    ),
                ))
            })
            .requires(&["data"])
            .produces(&["report_files"]),
        )
        .unwrap();
        reg
    }

    fn project(dir: &Path, data: &str) -> Project {
        std::fs::write(dir.join("a.txt"), data).unwrap();
        let text = r#"{"goal": "count lines", "inputs": {"data_file": "a.txt"}, "config": {"inversion_params": {"lambda": 20}}}"#;
        std::fs::write(dir.join("project.json"), text).unwrap();
        Project::load(dir).unwrap()
    }

    #[test]
    fn a_run_writes_its_folder_journal_and_result() {
        let tmp = tempfile::tempdir().unwrap();
        let spec = RunSpec::new(project(tmp.path(), "1\n2\n3\n"));
        let out = run(spec, &registry(), None).unwrap();
        assert_eq!(out.status, RunStatus::Success, "{:?}", out.reasons);
        let result: Value =
            serde_json::from_str(&std::fs::read_to_string(out.dir.join(RESULT_FILE)).unwrap())
                .unwrap();
        assert_eq!(result["status"], "success");
        assert_eq!(result["steps"][0]["summary"], "3 lines");
        assert!(
            result["report"]["markdown"]
                .as_str()
                .unwrap()
                .ends_with("report.md")
        );
        let journal = replay(&out.dir.join(JOURNAL_FILE)).unwrap();
        assert_eq!(journal.goal, "count lines");
        assert_eq!(journal.ended.as_deref(), Some("finished"));
        assert!(journal.steps.iter().all(|s| s.status == StepStatus::Ok));
        let run_json: Value =
            serde_json::from_str(&std::fs::read_to_string(out.dir.join("run.json")).unwrap())
                .unwrap();
        assert_eq!(run_json["config"]["inversion_params"]["lambda"], 20);
        assert!(out.dir.starts_with(tmp.path().join("runs")));
    }

    #[test]
    fn headless_step_by_step_records_nobody_asked_in_journal_and_result() {
        // Issue 17: with nobody to approve, the step was recorded as stopped "at the user's
        // request". Now the journal and result.json say nobody could be asked.
        let tmp = tempfile::tempdir().unwrap();
        let mut spec = RunSpec::new(project(tmp.path(), "1\n"));
        spec.mode = Mode::StepByStep;
        let out = run(spec, &registry(), None).unwrap();
        assert_eq!(out.status, RunStatus::Stopped);
        let result: Value =
            serde_json::from_str(&std::fs::read_to_string(out.dir.join(RESULT_FILE)).unwrap())
                .unwrap();
        assert_eq!(result["approvals"][0]["by"], "nobody_asked", "{result:#}");
        assert_eq!(result["ended"], "stopped");
        let step_error = result["steps"][0]["error"].as_str().unwrap();
        assert!(!step_error.contains("user's request"), "{step_error}");
        let journal = std::fs::read_to_string(out.dir.join(JOURNAL_FILE)).unwrap();
        assert!(
            journal
                .lines()
                .any(|l| l.contains("\"answered\"") && l.contains("\"nobody_asked\"")),
            "{journal}"
        );
        assert!(
            !journal.contains("\"by\":\"user\""),
            "nobody answered as the user"
        );
    }

    #[test]
    fn a_missing_input_makes_the_run_incomplete_and_says_why() {
        let tmp = tempfile::tempdir().unwrap();
        let p = project(tmp.path(), "x");
        std::fs::remove_file(tmp.path().join("a.txt")).unwrap();
        let out = run(RunSpec::new(p), &registry(), None).unwrap();
        assert_eq!(out.status, RunStatus::Incomplete);
        assert!(
            out.reasons.iter().any(|r| r.contains("a.txt")),
            "{:?}",
            out.reasons
        );
        assert!(
            out.context
                .warnings
                .iter()
                .any(|w| w.contains("does not exist"))
        );
    }
}
