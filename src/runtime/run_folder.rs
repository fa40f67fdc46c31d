//! The run folder and the run's result.
//!
//! ```text
//! runs/<yyyy-mm-dd_hhmmss>-<slug>/
//!   run.json          goal, config as started, settings (never an API key)
//!   journal.jsonl     every event, in order
//!   result.json       status with reasons, steps, products' key numbers, report paths
//!   figures/  products/  scripts/
//!   report.md, report.html
//! ```

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::context::{Ended, RunContext};
use super::step::StepStatus;

/// `result.json`'s file name.
pub const RESULT_FILE: &str = "result.json";
/// `run.json`'s file name.
pub const RUN_FILE: &str = "run.json";

/// A run folder on disk.
#[derive(Debug, Clone, PartialEq)]
pub struct RunFolder {
    /// The folder.
    pub dir: PathBuf,
}

/// The run's overall status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Every requested product delivered, nothing failed unrecovered, a report written.
    Success,
    /// Something is missing; the reasons say what.
    Incomplete,
    /// The user stopped it before its report.
    Stopped,
}

impl RunStatus {
    /// The word used in `result.json`.
    pub fn word(self) -> &'static str {
        match self {
            RunStatus::Success => "success",
            RunStatus::Incomplete => "incomplete",
            RunStatus::Stopped => "stopped",
        }
    }
}

/// Civil date and time (UTC) from seconds since 1970 (Howard Hinnant's days-from-civil
/// inverse), without a date crate.
pub fn utc_parts(unix_s: i64) -> (i64, u32, u32, u32, u32, u32) {
    let days = unix_s.div_euclid(86_400);
    let secs = unix_s.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (
        y,
        m,
        d,
        (secs / 3600) as u32,
        ((secs % 3600) / 60) as u32,
        (secs % 60) as u32,
    )
}

/// Now as seconds since 1970.
pub fn now_unix() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// `2026-11-30 06:22:22 UTC`.
pub fn utc_stamp(unix_s: i64) -> String {
    let (y, mo, d, h, mi, s) = utc_parts(unix_s);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02} UTC")
}

/// A short folder-safe slug of a goal: lower-case words joined by `-`, at most 40 chars.
pub fn slug(goal: &str) -> String {
    let mut out = String::new();
    for word in goal
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        if out.len() + word.len() + 1 > 40 {
            break;
        }
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(&word.to_lowercase());
    }
    if out.is_empty() { "run".into() } else { out }
}

/// How many runs of one goal may start within one second before creation gives up.
const MAX_SAME_SECOND: u32 = 10_000;

impl RunFolder {
    /// Create `base/<yyyy-mm-dd_hhmmss>-<slug>/` with its sub-folders (a suffix keeps two runs
    /// started in the same second apart).
    pub fn create(base: &Path, goal: &str) -> std::io::Result<RunFolder> {
        let (y, mo, d, h, mi, s) = utc_parts(now_unix());
        let stem = format!("{y:04}-{mo:02}-{d:02}_{h:02}{mi:02}{s:02}-{}", slug(goal));
        std::fs::create_dir_all(base)?;
        // `create_dir` either makes the folder or fails because it exists: two runs started
        // in the same second can never both claim one folder (a check with `exists()` first
        // could let both through).
        let mut dir = base.join(&stem);
        let mut n = 2u32;
        loop {
            match std::fs::create_dir(&dir) {
                Ok(()) => break,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < MAX_SAME_SECOND => {
                    dir = base.join(format!("{stem}-{n}"));
                    n += 1;
                }
                Err(e) => return Err(e),
            }
        }
        for sub in ["figures", "products", "scripts"] {
            std::fs::create_dir_all(dir.join(sub))?;
        }
        Ok(RunFolder { dir })
    }

    /// `figures/`.
    pub fn figures(&self) -> PathBuf {
        self.dir.join("figures")
    }

    /// `products/`.
    pub fn products(&self) -> PathBuf {
        self.dir.join("products")
    }

    /// Write `run.json`: the goal, the inputs and the configuration as started, the settings.
    /// Settings are copied key by key from the context, which never holds an API key.
    pub fn write_run_json(
        &self,
        ctx: &RunContext,
        project_file: Option<&Path>,
    ) -> std::io::Result<()> {
        let inputs: Map<String, Value> = ctx
            .input_roles()
            .iter()
            .map(|(k, v)| {
                let list: Vec<Value> = v
                    .iter()
                    .map(|p| Value::from(p.display().to_string()))
                    .collect();
                (k.clone(), Value::Array(list))
            })
            .collect();
        let value = json!({
            "goal": ctx.goal,
            "project": project_file.map(|p| p.display().to_string()),
            "project_dir": ctx.project_dir.display().to_string(),
            "inputs": inputs,
            "config": ctx.config,
            "settings": ctx.settings,
            "software": format!("HydroGeo Studio {}", env!("CARGO_PKG_VERSION")),
            "started": utc_stamp(now_unix()),
        });
        write_atomic(&self.dir.join(RUN_FILE), &value)
    }
}

/// Write JSON to `path` through [`write_file_atomic`], so a crash or a full disk never
/// leaves half a file (or an empty one) where the last good one was.
pub fn write_atomic(path: &Path, value: &Value) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(value).map_err(std::io::Error::other)?;
    write_file_atomic(path, text.as_bytes())
}

/// Distinguishes the temporary files of concurrent writers in one process.
static TEMP_SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The one way the run writes a file others read (`result.json`, `run.json`, `report.md`,
/// `report.html`): the bytes go to a new temporary file beside `path` (created with
/// `create_new`, so never through a link someone planted), are `fsync`ed, and the temporary
/// file is renamed over `path`; the folder is then synced so the rename survives a power
/// cut. A reader sees the old file or the new one, never a part. On any failure the
/// temporary file is removed and the error names `path`.
pub fn write_file_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    let serial = TEMP_SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = path.with_file_name(format!(".{name}.{}-{serial}.tmp", std::process::id()));
    let named =
        |e: std::io::Error| std::io::Error::new(e.kind(), format!("{}: {e}", path.display()));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .and_then(|mut f| {
            f.write_all(bytes)?;
            f.sync_all()
        })
        .and_then(|_| std::fs::rename(&tmp, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(named(e));
    }
    // Syncing the folder makes the rename durable. Some file systems refuse to sync a
    // folder (EINVAL); the file itself is already on disk then, so that refusal is not an
    // error of the write.
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty())
        && let Ok(d) = std::fs::File::open(parent)
        && let Err(e) = d.sync_all()
        && e.kind() != std::io::ErrorKind::InvalidInput
    {
        return Err(named(e));
    }
    Ok(())
}

/// The reason a run that delivered nothing but (at most) its report gives.
pub const NOTHING_DELIVERED: &str =
    "No step could run with the inputs given, so the run produced nothing to answer the request.";

/// Whether a step that finished `ok` stored a product other than the report (`finish`, or
/// [`REPORT_KEY`] when the report is being written): the goal can only be served by one.
pub fn delivered_any(ctx: &RunContext, finish: &str) -> bool {
    ctx.steps.iter().any(|s| {
        s.status == StepStatus::Ok
            && s.produced
                .iter()
                .any(|k| k != finish && k != REPORT_KEY && ctx.product(k).is_some())
    })
}

/// The reason a stopped run gives (its report, written after the stop, covers what ran).
pub const STOPPED_REASON: &str =
    "The run was stopped before it finished; only the steps that ran before the stop are reported.";

/// The finish artifact's usual key (the report files).
pub const REPORT_KEY: &str = "report_files";

/// Why the run cannot be called a success, from what the runtime alone knows: nothing but
/// the report was delivered, it was stopped or hit the step limit before the finish artifact,
/// a step failed and was never recovered, a step was interrupted, no finish artifact.
pub fn incomplete_because(ctx: &RunContext, finish: &str) -> Vec<String> {
    let mut reasons = Vec::new();
    let ran_any = ctx.steps.iter().any(|s| s.status == StepStatus::Ok);
    if !delivered_any(ctx, finish) {
        reasons.push(NOTHING_DELIVERED.into());
    }
    let finished = ctx.has(&[finish]) && !ctx.projected(finish);
    match ctx.ended {
        Some(Ended::Stopped) => reasons.push(STOPPED_REASON.into()),
        Some(Ended::StepLimit) if !finished => reasons
            .push("The run used every step it was allowed before a report was written.".into()),
        Some(Ended::Broke) => {
            reasons.push("The run's own loop failed repeatedly and was ended.".into())
        }
        _ => {}
    }
    for tool in ctx.unfinished() {
        let last = ctx.steps.iter().rev().find(|s| s.tool == tool);
        if let Some(s) = last {
            let label = if s.label.is_empty() {
                &s.tool
            } else {
                &s.label
            };
            reasons.push(match s.status {
                StepStatus::Interrupted => format!("{label} was interrupted: {}", s.error),
                _ => format!("{label} failed: {}", s.error),
            });
        }
    }
    for u in &ctx.shortfalls {
        let verb = if u.output { "not written" } else { "left out" };
        reasons.push(format!("{} was {verb}: {}", u.what, u.why));
    }
    if ran_any && !finished && !matches!(ctx.ended, Some(Ended::Stopped | Ended::StepLimit)) {
        reasons.push("No report was written.".into());
    }
    reasons
}

/// The run's status and its reasons (runtime reasons plus `extra` from the catalog).
pub fn status_of(ctx: &RunContext, finish: &str, extra: Vec<String>) -> (RunStatus, Vec<String>) {
    let mut reasons = incomplete_because(ctx, finish);
    for r in extra {
        if !reasons.contains(&r) {
            reasons.push(r);
        }
    }
    let status = if ctx.ended == Some(Ended::Stopped) {
        RunStatus::Stopped
    } else if reasons.is_empty() {
        RunStatus::Success
    } else {
        RunStatus::Incomplete
    };
    (status, reasons)
}

/// The run setting (`true`) that says the run's end rewrites its report with the final status
/// (the session sets it when it has a finaliser); a report written before then says so.
pub const FINAL_STATUS_PENDING: &str = "final_status_pending";

/// Why `result.json` (written after each step) and a report written by its step say
/// `incomplete` while the run is going: both are rewritten with the final status when the run
/// ends, so a reader who finds this sentence is looking at a run that was interrupted.
pub const NOT_ENDED_REASON: &str = "The run had not ended when this was written (the files are rewritten with the final status when it ends): if you read this, the run was interrupted.";

/// [`status_of`] for a run still going: `incomplete`, with [`NOT_ENDED_REASON`] first, until
/// the controller records how the run ended.
pub fn status_so_far(
    ctx: &RunContext,
    finish: &str,
    extra: Vec<String>,
) -> (RunStatus, Vec<String>) {
    let (status, mut reasons) = status_of(ctx, finish, extra);
    if ctx.ended.is_some() {
        return (status, reasons);
    }
    reasons.insert(0, NOT_ENDED_REASON.to_string());
    (RunStatus::Incomplete, reasons)
}

/// The content of `result.json`.
pub fn result_json(
    ctx: &RunContext,
    finish: &str,
    extra: Vec<String>,
    report: Option<(&Path, &Path)>,
) -> Value {
    let (status, reasons) = status_of(ctx, finish, extra);
    result_value(ctx, status, &reasons, report)
}

/// The content of `result.json` for a status already decided (the final one, computed once
/// after the last step, so `result.json`, the report and the CLI say the same).
pub fn result_value(
    ctx: &RunContext,
    status: RunStatus,
    reasons: &[String],
    report: Option<(&Path, &Path)>,
) -> Value {
    let steps: Vec<Value> = ctx
        .steps
        .iter()
        .enumerate()
        .map(|(i, s)| {
            json!({
                "step": i + 1,
                "tool": s.tool,
                "label": s.label,
                "status": s.status.word(),
                "summary": s.summary,
                "error": s.error,
                "reason": s.reason,
                "decided_by": s.decided_by,
                "seconds": (s.seconds * 1000.0).round() / 1000.0,
                "produced": s.produced,
                "figures": s.figures.iter().map(|f| f.path.display().to_string()).collect::<Vec<_>>(),
            })
        })
        .collect();
    let mut products = Map::new();
    let mut fields = Map::new();
    for key in ctx.artifact_keys() {
        if let Some(p) = ctx.product(&key) {
            if let Some((name, value)) = p.result_field() {
                fields.insert(name, value);
            }
            let mut entry = Map::new();
            entry.insert(
                "description".into(),
                Value::from(ctx.description(&key).unwrap_or_default()),
            );
            entry.extend(p.key_numbers());
            let files: Vec<Value> = p
                .files()
                .iter()
                .map(|f| Value::from(f.display().to_string()))
                .collect();
            if !files.is_empty() {
                entry.insert("files".into(), Value::Array(files));
            }
            products.insert(key, Value::Object(entry));
        }
    }
    let mut out = json!({
        "status": status.word(),
        "reasons": reasons,
        "ended": ctx.ended.map(Ended::word),
        "goal": ctx.goal,
        "steps": steps,
        "products": products,
        "report": report.map(|(md, html)| json!({"markdown": md.display().to_string(), "html": html.display().to_string()})),
        "warnings": ctx.warnings,
        "questions": ctx.questions,
        "approvals": ctx.approvals,
        "user_notes": ctx.guidance,
        "setting_changes": ctx.setting_changes,
        "shortfalls": ctx.shortfalls,
        "usage": ctx.usage,
        "seconds": (ctx.elapsed_s() * 1000.0).round() / 1000.0,
    });
    if let Some(obj) = out.as_object_mut() {
        for (name, value) in fields {
            obj.entry(name).or_insert(value);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::product::JsonProduct;

    /// A `load` step that stored `key`.
    fn delivered(ctx: &mut RunContext, key: &str) {
        ctx.begin("load", "").produced.push(key.into());
        ctx.finish("ok", StepStatus::Ok, "");
        ctx.put_value(key, JsonProduct::new("d", Value::Null));
    }

    #[test]
    fn a_run_that_only_wrote_its_report_is_incomplete() {
        // The goal-only project of issue 17: the report step ran, nothing else did.
        let mut ctx = RunContext::new("nothing to do");
        ctx.begin("write_survey_report", "")
            .produced
            .push(REPORT_KEY.into());
        ctx.finish("Wrote the report.", StepStatus::Ok, "");
        ctx.put_value(REPORT_KEY, JsonProduct::new("r", Value::Null));
        ctx.ended = Some(Ended::Finished);
        let (status, reasons) = status_of(&ctx, REPORT_KEY, vec![]);
        assert_eq!(status, RunStatus::Incomplete);
        assert_eq!(reasons, vec![NOTHING_DELIVERED.to_string()]);
        // With one real product it would be a success: the check can pass as well as fail.
        delivered(&mut ctx, "data");
        assert_eq!(status_of(&ctx, REPORT_KEY, vec![]).0, RunStatus::Success);
    }

    #[test]
    fn an_atomic_write_replaces_the_file_whole_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(RESULT_FILE);
        write_file_atomic(&path, b"old").unwrap();
        write_file_atomic(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec![RESULT_FILE.to_string()]);
    }

    #[test]
    fn a_failed_atomic_write_keeps_the_old_file_and_names_the_path() {
        let dir = tempfile::tempdir().unwrap();
        // The target is a non-empty folder: the rename must fail after the bytes were written.
        let path = dir.path().join("report.md");
        std::fs::create_dir(&path).unwrap();
        std::fs::write(path.join("keep"), "x").unwrap();
        let e = write_file_atomic(&path, b"# Report").unwrap_err();
        assert!(e.to_string().contains("report.md"), "{e}");
        assert_eq!(std::fs::read_to_string(path.join("keep")).unwrap(), "x");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "temporary file left"
        );
        // A folder that does not exist is an error too, not a silent no-op.
        assert!(write_file_atomic(&dir.path().join("gone/result.json"), b"{}").is_err());
    }

    #[test]
    fn an_atomic_write_replaces_a_planted_link_and_never_writes_through_it() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(outside.path(), "user's file").unwrap();
        let path = dir.path().join(RESULT_FILE);
        std::os::unix::fs::symlink(outside.path(), &path).unwrap();
        write_file_atomic(&path, b"{}").unwrap();
        assert_eq!(
            std::fs::read_to_string(outside.path()).unwrap(),
            "user's file"
        );
        assert!(
            !std::fs::symlink_metadata(&path)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&path).unwrap(), b"{}");
    }

    #[test]
    fn civil_dates_from_unix_seconds() {
        assert_eq!(utc_parts(0), (1970, 1, 1, 0, 0, 0));
        // 2026-11-30 06:22:22 UTC
        assert_eq!(utc_parts(1_796_019_742), (2026, 11, 30, 6, 22, 22));
        assert_eq!(utc_parts(951_782_400), (2000, 2, 29, 0, 0, 0));
    }

    #[test]
    fn slugs_are_short_and_safe() {
        assert_eq!(
            slug("Where is the water table, and how did the plume change?"),
            "where-is-the-water-table-and-how-did-the"
        );
        assert_eq!(slug("???"), "run");
    }

    #[test]
    fn nothing_ran_is_incomplete_with_the_reason() {
        let mut ctx = RunContext::new("nothing to do");
        ctx.ended = Some(Ended::Exhausted);
        let (status, reasons) = status_of(&ctx, "report_files", vec![]);
        assert_eq!(status, RunStatus::Incomplete);
        assert_eq!(reasons[0], NOTHING_DELIVERED);
    }

    #[test]
    fn a_failed_step_never_recovered_makes_the_run_incomplete() {
        let mut ctx = RunContext::new("x");
        delivered(&mut ctx, "seismic_model");
        ctx.begin("invert_tdem", "");
        ctx.open_step_mut().unwrap().label = "Run TDEM inversion".into();
        ctx.finish("", StepStatus::Failed, "TDEM data file not found: s.csv");
        ctx.begin("write_report", "");
        ctx.finish("wrote", StepStatus::Ok, "");
        ctx.put_value("report_files", JsonProduct::new("r", Value::Null));
        ctx.ended = Some(Ended::Finished);
        let (status, reasons) = status_of(&ctx, "report_files", vec![]);
        assert_eq!(status, RunStatus::Incomplete);
        assert_eq!(
            reasons,
            vec!["Run TDEM inversion failed: TDEM data file not found: s.csv".to_string()]
        );
    }

    #[test]
    fn stopped_before_the_report_is_stopped() {
        let mut ctx = RunContext::new("x");
        delivered(&mut ctx, "data");
        ctx.ended = Some(Ended::Stopped);
        let (status, reasons) = status_of(&ctx, "report_files", vec![]);
        assert_eq!(status, RunStatus::Stopped);
        assert_eq!(reasons, vec![STOPPED_REASON.to_string()]);
    }
}
