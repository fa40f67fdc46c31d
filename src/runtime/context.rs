//! The run: what was asked, what was done, and what was found.
//!
//! One object passed to every tool, holding two things apart: *artifacts* (the data — large,
//! typed, behind [`Product`]) and *steps* (the record — small, read by everything). The model
//! reads only [`RunContext::transcript`]; it never sees an array.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::events::{AnsweredBy, Event, EventBus, QuestionOption};
use super::interaction::{Interaction, QuestionRequest, ScriptAnswer, ScriptRequest};
use super::product::{Product, SharedProduct};
use super::step::{FigureRef, Step, StepStatus};

/// How the controller's loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ended {
    /// The model said "done" once the finish artifact existed.
    Finished,
    /// Nothing more could run.
    Exhausted,
    /// The user (or a broken approval gate) stopped it.
    Stopped,
    /// It used every step it was allowed.
    StepLimit,
    /// The loop's own code failed again after being resumed past it.
    Broke,
}

impl Ended {
    /// The snake-case word used in `result.json` and events.
    pub fn word(self) -> &'static str {
        match self {
            Ended::Finished => "finished",
            Ended::Exhausted => "exhausted",
            Ended::Stopped => "stopped",
            Ended::StepLimit => "step_limit",
            Ended::Broke => "broke",
        }
    }
}

/// A choice put to the user and the answer it got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionRecord {
    /// The question.
    pub question: String,
    /// The options offered.
    pub options: Vec<QuestionOption>,
    /// The default.
    pub default: String,
    /// The option taken.
    pub answer: String,
    /// A person or the default.
    pub by: AnsweredBy,
}

/// An off-route action put to the user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProposalRecord {
    /// Identifies the proposal (`extra:<tool>`, `redo:<tool>`, `settings`, `script:…`), so a
    /// declined one is never offered again.
    pub key: String,
    /// What was proposed.
    pub title: String,
    /// The model's reason.
    pub why: String,
    /// Whether the user accepted it.
    pub accepted: bool,
}

/// A step-by-step decision a person (or the safe default) made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRecord {
    /// The step it was about.
    pub step: usize,
    /// Tool name.
    pub tool: String,
    /// proceed | skip | stop.
    pub verdict: String,
    /// A person, or the default when nobody was there.
    pub by: AnsweredBy,
}

/// A setting changed after the run started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SettingChange {
    /// The configuration key.
    pub key: String,
    /// Its value before.
    pub old: Value,
    /// Its value after.
    pub new: Value,
    /// Who changed it: `recovery`, `user note`, `proposal`, `user`.
    pub by: String,
    /// Why.
    pub why: String,
}

/// Something a step that otherwise succeeded did not deliver: an output file it could not
/// write (output is a convenience: the product stays), or an input it left out (one bad
/// file of four). The run is incomplete and the report's Not delivered names it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Shortfall {
    /// What is missing ("File products/ert_cells.csv", "ERT file ert/2024-06-01.dat").
    pub what: String,
    /// Why, with the file's line where a reader gave one.
    pub why: String,
    /// The file concerned.
    pub path: PathBuf,
    /// The step's tool.
    pub tool: String,
    /// An output the step could not write (true) or an input it left out (false).
    pub output: bool,
}

/// A derived file standing in for a user's input (a rewritten coordinate table), kept in the
/// run folder; the user's file is untouched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Substitution {
    /// The derived file.
    pub path: PathBuf,
    /// How it was made.
    pub why: String,
}

/// Tokens and cost across the run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct UsageTotals {
    /// Model calls.
    pub calls: u64,
    /// Tokens sent.
    pub tokens_in: u64,
    /// Tokens received.
    pub tokens_out: u64,
    /// Estimated cost in US dollars.
    pub cost_usd: f64,
}

/// A configuration section that could not be read into its typed parameters.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("configuration key `{key}`: {message}")]
pub struct ConfigError {
    /// The key.
    pub key: String,
    /// What was wrong (serde names the valid fields for an unknown one).
    pub message: String,
}

#[derive(Debug, Clone)]
enum Slot {
    Product(SharedProduct),
    Projected,
}

#[derive(Debug, Clone)]
struct Artifact {
    key: String,
    slot: Slot,
    description: String,
}

/// Everything one run knows about itself.
#[derive(Clone)]
pub struct RunContext {
    /// The user's request, in their words.
    pub goal: String,
    /// Settings: the `config` object of the project (never input paths).
    pub config: Map<String, Value>,
    /// Where input paths are relative to.
    pub project_dir: PathBuf,
    /// The run folder; `None` for a run that writes nothing (tests, projections).
    pub output_dir: Option<PathBuf>,
    /// Anything a run needs that is not configuration: mode, decider description, flags.
    /// Never an API key.
    pub settings: Map<String, Value>,
    /// The record of what happened.
    pub steps: Vec<Step>,
    /// Warnings the user should see, deduplicated, in order.
    pub warnings: Vec<String>,
    /// Choices put to the user and the answers.
    pub questions: Vec<QuestionRecord>,
    /// What the user told the run while it worked, in order: the user's notes only.
    pub guidance: Vec<String>,
    /// What the run tells the model about its own doings (answers to questions it put,
    /// proposals not carried out): never shown as the user's words.
    pub run_notes: Vec<String>,
    /// Off-route actions put to the user.
    pub proposals: Vec<ProposalRecord>,
    /// Step-by-step approvals and their answers.
    pub approvals: Vec<ApprovalRecord>,
    /// Every offer of generated code and what became of it.
    pub scripts: Vec<super::script_record::ScriptRecord>,
    /// Settings changed mid-run, and by whom.
    pub setting_changes: Vec<SettingChange>,
    /// What steps that succeeded did not deliver (files not written, inputs left out).
    pub shortfalls: Vec<Shortfall>,
    /// How the loop ended; `None` until it has.
    pub ended: Option<Ended>,
    /// Tokens and cost so far.
    pub usage: UsageTotals,
    /// Tool name → index of the first step that counts as an attempt of it.
    pub reopened: HashMap<String, usize>,
    /// Listeners to everything the run reports.
    pub events: EventBus,
    /// What the run may change on its own, as its tools declare it (set from the registry
    /// when the loop starts).
    pub recovery: super::rules::RecoveryRules,
    /// Tool name → recoveries spent on it in this run. Kept here, not in the loop, so the
    /// limit ([`super::recovery::MAX_RECOVERIES`]) holds when the loop is picked up again
    /// after its own error.
    pub recoveries_spent: BTreeMap<String, usize>,
    inputs: BTreeMap<String, Vec<PathBuf>>,
    substitutions: BTreeMap<String, Substitution>,
    artifacts: Vec<Artifact>,
    open: Option<(Step, Instant)>,
    interaction: Option<Arc<dyn Interaction>>,
    cancel: Arc<AtomicBool>,
    ids: Arc<AtomicU64>,
    started: Instant,
}

impl std::fmt::Debug for RunContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunContext")
            .field("goal", &self.goal)
            .field("steps", &self.steps.len())
            .field("artifacts", &self.artifact_keys())
            .finish_non_exhaustive()
    }
}

/// A data file's real location, trying the ways a request gets it wrong (seed 001,
/// `resolve_path`): as given under the project folder; with a duplicated prefix of the
/// project folder's own name dropped (`example/data/a.dat` inside `…/example`); a bare file
/// name found in exactly one subfolder of the project (one level down). The first that exists
/// wins; otherwise the path under the project folder, so the caller reports a missing file by
/// the name the user used. An empty path stays empty; an absolute path is unchanged.
pub fn resolve_path(path: &Path, project_dir: &Path) -> PathBuf {
    if path.as_os_str().is_empty() || path.is_absolute() {
        return path.to_path_buf();
    }
    let here = project_dir.as_os_str().is_empty() || project_dir == Path::new(".");
    let direct = if here {
        path.to_path_buf()
    } else {
        project_dir.join(path)
    };
    if direct.exists() {
        return direct;
    }
    // A duplicated prefix: the path starts with the project folder's own name.
    let dir_name = project_dir
        .canonicalize()
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_os_string()));
    let mut parts = path.components();
    if let (Some(first), Some(name)) = (parts.next(), dir_name)
        && first.as_os_str() == name
    {
        let rest = project_dir.join(parts.as_path());
        if parts.as_path().components().next().is_some() && rest.exists() {
            return rest;
        }
    }
    // A bare file name, in exactly one subfolder.
    if path.components().count() == 1 {
        let hits: Vec<PathBuf> = std::fs::read_dir(if here { Path::new(".") } else { project_dir })
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.path())
                    .filter(|d| d.is_dir())
                    .map(|d| d.join(path))
                    .filter(|p| p.exists())
                    .collect()
            })
            .unwrap_or_default();
        if let [only] = hits.as_slice() {
            return only.clone();
        }
    }
    direct
}

/// Whether `path` (which must exist) resolves, links followed, inside `folder`.
pub fn is_inside(path: &Path, folder: &Path) -> bool {
    path.canonicalize()
        .ok()
        .zip(folder.canonicalize().ok())
        .is_some_and(|(p, f)| p.starts_with(f))
}

/// Whether a configuration key names an input role (a file or folder the user chose).
pub fn is_input_role(key: &str) -> bool {
    key.ends_with("_file") || key.ends_with("_files") || key.ends_with("_dir")
}

impl RunContext {
    /// A run with a goal and nothing else.
    pub fn new(goal: &str) -> Self {
        RunContext {
            goal: goal.to_string(),
            config: Map::new(),
            project_dir: PathBuf::from("."),
            output_dir: None,
            settings: Map::new(),
            steps: Vec::new(),
            warnings: Vec::new(),
            questions: Vec::new(),
            guidance: Vec::new(),
            run_notes: Vec::new(),
            proposals: Vec::new(),
            approvals: Vec::new(),
            scripts: Vec::new(),
            setting_changes: Vec::new(),
            shortfalls: Vec::new(),
            ended: None,
            usage: UsageTotals::default(),
            reopened: HashMap::new(),
            events: EventBus::new(),
            recovery: super::rules::RecoveryRules::default(),
            recoveries_spent: BTreeMap::new(),
            inputs: BTreeMap::new(),
            substitutions: BTreeMap::new(),
            artifacts: Vec::new(),
            open: None,
            interaction: None,
            cancel: Arc::new(AtomicBool::new(false)),
            ids: Arc::new(AtomicU64::new(1)),
            started: Instant::now(),
        }
    }

    /// Builder: the configuration (settings). Input roles found in it are moved to the
    /// inputs, so that nothing mid-run can change them.
    pub fn with_config(mut self, config: Map<String, Value>) -> Self {
        for (k, v) in config {
            if is_input_role(&k) {
                self.set_input_value(&k, &v);
            } else {
                self.config.insert(k, v);
            }
        }
        self
    }

    /// Builder: the input roles (keys ending in `_file`, `_files`, `_dir`), paths relative to
    /// `project_dir`. Keys that are not roles are ignored.
    pub fn with_inputs(mut self, inputs: &Map<String, Value>, project_dir: &Path) -> Self {
        self.project_dir = project_dir.to_path_buf();
        for (k, v) in inputs {
            if is_input_role(k) {
                self.set_input_value(k, v);
            }
        }
        self
    }

    /// Builder: the run folder.
    pub fn with_output_dir(mut self, dir: &Path) -> Self {
        self.output_dir = Some(dir.to_path_buf());
        self
    }

    /// Builder: the flag a stop raises (shared with [`super::Steering`]).
    pub fn with_cancel_flag(mut self, flag: Arc<AtomicBool>) -> Self {
        self.cancel = flag;
        self
    }

    /// Builder: who answers questions, approvals and script reviews.
    pub fn with_interaction(mut self, interaction: Arc<dyn Interaction>) -> Self {
        self.interaction = Some(interaction);
        self
    }

    fn set_input_value(&mut self, key: &str, value: &Value) {
        let paths: Vec<PathBuf> = match value {
            Value::String(s) if !s.is_empty() => vec![PathBuf::from(s)],
            Value::Array(a) => a
                .iter()
                .filter_map(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(PathBuf::from)
                .collect(),
            _ => Vec::new(),
        };
        if !paths.is_empty() {
            self.inputs.insert(key.to_string(), paths);
        }
    }

    // ----- inputs ---------------------------------------------------------------------

    /// The input roles as given (relative paths as the user wrote them).
    pub fn input_roles(&self) -> &BTreeMap<String, Vec<PathBuf>> {
        &self.inputs
    }

    /// Whether the run was given an input for `key`.
    pub fn has_input(&self, key: &str) -> bool {
        self.inputs.contains_key(key)
    }

    /// The first path of input `key`, resolved against the project folder; a substitution
    /// (a rewritten table in the run folder) takes its place when one was made.
    pub fn input_path(&self, key: &str) -> Option<PathBuf> {
        if let Some(s) = self.substitutions.get(key) {
            return Some(s.path.clone());
        }
        self.inputs
            .get(key)
            .and_then(|v| v.first())
            .map(|p| self.resolve(p))
    }

    /// Every path of input `key`, resolved.
    pub fn input_paths(&self, key: &str) -> Vec<PathBuf> {
        if let Some(s) = self.substitutions.get(key) {
            return vec![s.path.clone()];
        }
        self.inputs
            .get(key)
            .map(|v| v.iter().map(|p| self.resolve(p)).collect())
            .unwrap_or_default()
    }

    /// `path` relative to the project folder, tried the ways a request gets it wrong
    /// ([`resolve_path`]).
    pub fn resolve(&self, path: &Path) -> PathBuf {
        resolve_path(path, &self.project_dir)
    }

    /// Let a derived file in the run folder stand in for input `key`. The role itself — the
    /// file the user chose — is kept and reported; only a file inside the run folder may
    /// stand in, so this can never point a run at another of the user's files.
    pub fn substitute_input(&mut self, key: &str, path: &Path, why: &str) -> Result<(), String> {
        let Some(out) = &self.output_dir else {
            return Err("this run has no folder to hold a derived file".into());
        };
        if !is_inside(path, out) {
            return Err(format!(
                "{} is not inside the run folder; only a derived file there may stand in for {key}",
                path.display()
            ));
        }
        self.substitutions.insert(
            key.to_string(),
            Substitution {
                path: path.to_path_buf(),
                why: why.to_string(),
            },
        );
        Ok(())
    }

    /// The substitutions made so far.
    pub fn substitutions(&self) -> &BTreeMap<String, Substitution> {
        &self.substitutions
    }

    // ----- configuration --------------------------------------------------------------

    /// The typed parameters under `key`, defaults where absent; an unknown field is an
    /// error that names the valid ones (use `#[serde(default, deny_unknown_fields)]`).
    pub fn params<T: serde::de::DeserializeOwned + Default>(
        &self,
        key: &str,
    ) -> Result<T, ConfigError> {
        match self.config.get(key) {
            None | Some(Value::Null) => Ok(T::default()),
            Some(v) => serde_json::from_value(v.clone()).map_err(|e| ConfigError {
                key: key.to_string(),
                message: e.to_string(),
            }),
        }
    }

    /// A number setting, or `default`.
    pub fn config_f64(&self, key: &str, default: f64) -> f64 {
        self.config
            .get(key)
            .and_then(Value::as_f64)
            .unwrap_or(default)
    }

    /// A switch setting, or `default`.
    pub fn config_bool(&self, key: &str, default: bool) -> bool {
        self.config
            .get(key)
            .and_then(Value::as_bool)
            .unwrap_or(default)
    }

    /// A text setting.
    pub fn config_str(&self, key: &str) -> Option<&str> {
        self.config.get(key).and_then(Value::as_str)
    }

    // ----- artifacts ------------------------------------------------------------------

    /// Record an artifact; `description` defaults to the product's own line.
    pub fn put(&mut self, key: &str, product: SharedProduct, description: Option<String>) {
        let description = description.unwrap_or_else(|| product.describe());
        self.set_slot(key, Slot::Product(product), description);
    }

    /// Record a typed value as an artifact.
    pub fn put_value<P: Product>(&mut self, key: &str, product: P) {
        self.put(key, Arc::new(product), None);
    }

    /// Mark `key` as made by a step a route has only projected.
    pub fn put_projected(&mut self, key: &str) {
        self.set_slot(key, Slot::Projected, "(projected)".into());
    }

    fn set_slot(&mut self, key: &str, slot: Slot, description: String) {
        if let Some(a) = self.artifacts.iter_mut().find(|a| a.key == key) {
            a.slot = slot;
            a.description = description;
        } else {
            self.artifacts.push(Artifact {
                key: key.to_string(),
                slot,
                description,
            });
        }
    }

    /// Remove an artifact (a step run again replaces what it made).
    pub fn remove(&mut self, key: &str) {
        self.artifacts.retain(|a| a.key != key);
    }

    /// True when every named artifact exists (really or projected).
    pub fn has(&self, keys: &[&str]) -> bool {
        keys.iter()
            .all(|k| self.artifacts.iter().any(|a| a.key == *k))
    }

    /// True when `key` exists only in a projected route, not in fact.
    pub fn projected(&self, key: &str) -> bool {
        self.artifacts
            .iter()
            .any(|a| a.key == key && matches!(a.slot, Slot::Projected))
    }

    /// The artifact `key`, if it exists in fact.
    pub fn product(&self, key: &str) -> Option<&SharedProduct> {
        self.artifacts
            .iter()
            .find(|a| a.key == key)
            .and_then(|a| match &a.slot {
                Slot::Product(p) => Some(p),
                Slot::Projected => None,
            })
    }

    /// The artifact `key` as its concrete type.
    pub fn get<T: Product>(&self, key: &str) -> Option<&T> {
        self.product(key)?.as_any().downcast_ref::<T>()
    }

    /// The artifacts' keys, in the order they were made.
    pub fn artifact_keys(&self) -> Vec<String> {
        self.artifacts.iter().map(|a| a.key.clone()).collect()
    }

    /// The one-line description of artifact `key`.
    pub fn description(&self, key: &str) -> Option<&str> {
        self.artifacts
            .iter()
            .find(|a| a.key == key)
            .map(|a| a.description.as_str())
    }

    // ----- steps ----------------------------------------------------------------------

    /// Open a step. Only one is open at a time; opening another closes the first as
    /// interrupted.
    pub fn begin(&mut self, tool: &str, reason: &str) -> &mut Step {
        if let Some((mut s, t0)) = self.open.take() {
            s.status = StepStatus::Interrupted;
            s.error = "another step began before this one finished; it may have run, or run partly"
                .into();
            s.seconds = t0.elapsed().as_secs_f64();
            self.steps.push(s);
        }
        self.open = Some((Step::new(tool, reason), Instant::now()));
        // The open step was just set.
        match &mut self.open {
            Some((s, _)) => s,
            None => unreachable!("a step was opened on the line above"),
        }
    }

    /// The step that is open, if any.
    pub fn open_step(&self) -> Option<&Step> {
        self.open.as_ref().map(|(s, _)| s)
    }

    /// The open step, mutably (tools add figures to it).
    pub fn open_step_mut(&mut self) -> Option<&mut Step> {
        self.open.as_mut().map(|(s, _)| s)
    }

    /// Close the open step with what it concluded; returns it.
    pub fn finish(&mut self, summary: &str, status: StepStatus, error: &str) -> Option<&Step> {
        let (mut s, t0) = self.open.take()?;
        s.summary = summary.to_string();
        s.status = status;
        s.error = error.to_string();
        s.seconds = t0.elapsed().as_secs_f64();
        self.steps.push(s);
        self.steps.last()
    }

    /// True when `tool` has completed successfully (since it was last reopened).
    pub fn ran(&self, tool: &str) -> bool {
        let from = self.reopened.get(tool).copied().unwrap_or(0);
        self.steps
            .iter()
            .skip(from)
            .any(|s| s.tool == tool && s.status == StepStatus::Ok)
    }

    /// How many times `tool` has been tried, successfully or not. A blocked or skipped step
    /// is not an attempt: the tool never ran.
    pub fn attempted(&self, tool: &str) -> usize {
        let from = self.reopened.get(tool).copied().unwrap_or(0);
        self.steps
            .iter()
            .skip(from)
            .filter(|s| {
                s.tool == tool && !matches!(s.status, StepStatus::Blocked | StepStatus::Skipped)
            })
            .count()
    }

    /// Whether `tool` was left out (skipped) since it was last reopened.
    pub fn skipped(&self, tool: &str) -> bool {
        let from = self.reopened.get(tool).copied().unwrap_or(0);
        self.steps
            .iter()
            .skip(from)
            .any(|s| s.tool == tool && s.status == StepStatus::Skipped)
    }

    /// Let `names` run again: their earlier attempts no longer count.
    pub fn reopen(&mut self, names: &[&str]) {
        let at = self.steps.len();
        for n in names {
            self.reopened.insert((*n).to_string(), at);
        }
    }

    /// Tools that were attempted and never succeeded (in order of first failure).
    pub fn unfinished(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for s in &self.steps {
            if matches!(s.status, StepStatus::Failed | StepStatus::Interrupted)
                && !self.ran(&s.tool)
                && !out.contains(&s.tool)
            {
                out.push(s.tool.clone());
            }
        }
        out
    }

    /// The execution plan, derived from what actually ran (never written beside it).
    pub fn plan(&self) -> Vec<Value> {
        self.steps
            .iter()
            .enumerate()
            .map(|(i, s)| {
                serde_json::json!({
                    "step": i + 1,
                    "tool": s.tool,
                    "agent": s.agent,
                    "description": if s.label.is_empty() { &s.tool } else { &s.label },
                    "reason": s.reason,
                    "status": s.status.word(),
                    "seconds": (s.seconds * 1000.0).round() / 1000.0,
                    "outputs": s.produced,
                })
            })
            .collect()
    }

    /// Seconds since the run was created.
    pub fn elapsed_s(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    // ----- warnings, notes, progress ----------------------------------------------------

    /// A warning the user should see; said once however often it is raised.
    pub fn note(&mut self, message: &str) {
        let m = message.trim();
        if m.is_empty() || self.warnings.iter().any(|w| w == m) {
            return;
        }
        self.warnings.push(m.to_string());
        self.events.emit(&Event::Warning {
            text: m.to_string(),
        });
    }

    /// Record an output file the open step could not write: a warning naming the file and
    /// why, and a [`Shortfall`]; the step goes on.
    pub fn not_written(&mut self, path: &Path, why: &str) {
        self.note(&format!(
            "{} could not be written ({why}); the result it would hold stays in the run.",
            path.display()
        ));
        self.shortfall(format!("File {}", path.display()), why, path, true);
    }

    /// Record an input the open step left out because it could not be used (`why` names the
    /// line); the step goes on with the others.
    pub fn left_out(&mut self, what: &str, path: &Path, why: &str) {
        self.note(&format!("{what} was left out: {why}"));
        self.shortfall(what.to_string(), why, path, false);
    }

    fn shortfall(&mut self, what: String, why: &str, path: &Path, output: bool) {
        let tool = self.open_step().map(|s| s.tool.clone()).unwrap_or_default();
        self.shortfalls.push(Shortfall {
            what,
            why: why.to_string(),
            path: path.to_path_buf(),
            tool,
            output,
        });
    }

    /// Report how far a long step is (0–1) and what it is doing.
    pub fn progress(&self, fraction: f64, detail: &str) {
        self.events.emit(&Event::Progress {
            step: self.steps.len() + 1,
            fraction: fraction.clamp(0.0, 1.0),
            detail: detail.to_string(),
        });
    }

    /// Record a figure on the open step.
    pub fn add_figure(&mut self, path: &Path, caption: &str) {
        if let Some((s, _)) = &mut self.open {
            s.figures.push(FigureRef {
                path: path.to_path_buf(),
                caption: caption.to_string(),
            });
        }
    }

    /// The flag long tools check between iterations; set when the user stops the run.
    pub fn cancel_flag(&self) -> Arc<AtomicBool> {
        self.cancel.clone()
    }

    /// Whether the user asked the run to stop.
    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// A fresh id for a request that needs an answer.
    pub fn next_id(&self) -> u64 {
        self.ids.fetch_add(1, Ordering::Relaxed)
    }

    /// Whether somebody can answer questions.
    pub fn has_interaction(&self) -> bool {
        self.interaction.is_some()
    }

    /// Who "answered" a request nobody answered: nobody could be asked, or the window
    /// closed with it open.
    pub fn absent(&self) -> AnsweredBy {
        self.interaction
            .as_ref()
            .map_or(AnsweredBy::NobodyAsked, |i| i.absent())
    }

    /// The interaction, for the controller's approval gate.
    pub fn interaction(&self) -> Option<Arc<dyn Interaction>> {
        self.interaction.clone()
    }

    /// Change a setting, recording who and why. Input roles cannot be changed here.
    pub fn change_setting(
        &mut self,
        key: &str,
        new: Value,
        by: &str,
        why: &str,
    ) -> Result<String, String> {
        if is_input_role(key) {
            return Err(format!(
                "{key} names an input file the user chose; it cannot be changed during a run"
            ));
        }
        let old = self.config.get(key).cloned().unwrap_or(Value::Null);
        if old == new {
            return Err(format!("{key} already has that value"));
        }
        let line = format!("{key}: {} -> {}", compact(&old), compact(&new));
        self.config.insert(key.to_string(), new.clone());
        self.setting_changes.push(SettingChange {
            key: key.to_string(),
            old,
            new,
            by: by.to_string(),
            why: why.to_string(),
        });
        Ok(line)
    }

    // ----- questions ------------------------------------------------------------------

    /// Put a choice to the user and wait, or take `default` if nobody is there.
    ///
    /// Always returns one of the offered ids: an answer that matches nothing falls back to
    /// the default, because a typo must not select behaviour nobody offered. Without anybody
    /// to ask, the default is taken and a warning says so.
    pub fn ask(&mut self, question: &str, options: &[QuestionOption], default: &str) -> String {
        let default = if options.iter().any(|o| o.id == default) {
            default.to_string()
        } else {
            options.first().map(|o| o.id.clone()).unwrap_or_default()
        };
        let id = self.next_id();
        self.events.emit(&Event::Question {
            id,
            question: question.to_string(),
            options: options.to_vec(),
            default: default.clone(),
        });
        let reply = self.interaction.as_ref().and_then(|i| {
            i.ask(&QuestionRequest {
                id,
                question: question.to_string(),
                options: options.to_vec(),
                default: default.clone(),
            })
        });
        let (answer, by) = match reply {
            Some(a) if options.iter().any(|o| o.id == a) => (a, AnsweredBy::User),
            Some(other) => {
                self.note(&format!(
                    "An answer that matched none of the options ('{other}') was taken as the default '{default}'."
                ));
                (default.clone(), AnsweredBy::Default)
            }
            None => {
                self.note(&format!(
                    "Nobody was available to answer: {question} Continued with '{default}'."
                ));
                (default.clone(), self.absent())
            }
        };
        self.events.emit(&Event::Answered {
            id,
            answer: answer.clone(),
            by,
        });
        self.questions.push(QuestionRecord {
            question: question.to_string(),
            options: options.to_vec(),
            default,
            answer: answer.clone(),
            by,
        });
        answer
    }

    /// Put generated code to the user. Declined unless somebody explicitly says yes.
    pub fn review_script(
        &mut self,
        purpose: &str,
        inputs: Vec<(String, String)>,
        code: &str,
        language: &str,
        protections: Vec<String>,
    ) -> (ScriptAnswer, AnsweredBy) {
        let id = self.next_id();
        self.events.emit(&Event::ScriptReview {
            id,
            purpose: purpose.to_string(),
            inputs: inputs.clone(),
            code: code.to_string(),
            language: language.to_string(),
            protections: protections.clone(),
        });
        let reply = self.interaction.as_ref().and_then(|i| {
            i.review_script(&ScriptRequest {
                id,
                purpose: purpose.to_string(),
                inputs,
                code: code.to_string(),
                language: language.to_string(),
                protections,
            })
        });
        let (answer, by) = match reply {
            Some(a) => (a, AnsweredBy::User),
            None => (
                ScriptAnswer {
                    run: false,
                    edited_source: None,
                },
                self.absent(),
            ),
        };
        self.events.emit(&Event::Answered {
            id,
            answer: if answer.run { "run" } else { "decline" }.into(),
            by,
        });
        (answer, by)
    }

    // ----- the transcript -------------------------------------------------------------

    /// The run so far as the controller reads it: goal, artifacts on hand (one line each),
    /// the last `limit` steps, warnings and the user's notes.
    pub fn transcript(&self, limit: usize) -> String {
        let mut out = String::new();
        let goal = if self.goal.trim().is_empty() {
            "(none stated)"
        } else {
            self.goal.trim()
        };
        out.push_str(&format!("Goal: {goal}\n"));
        let real: Vec<&Artifact> = self
            .artifacts
            .iter()
            .filter(|a| matches!(a.slot, Slot::Product(_)))
            .collect();
        if real.is_empty() {
            out.push_str("Available now: nothing yet.\n");
        } else {
            out.push_str("Available now:\n");
            for a in real {
                out.push_str(&format!("  - {}: {}\n", a.key, a.description));
            }
        }
        if self.steps.is_empty() {
            out.push_str("Steps so far: none.\n");
        } else {
            out.push_str("Steps so far:\n");
            let skip = self.steps.len().saturating_sub(limit);
            if skip > 0 {
                out.push_str(&format!("  ({skip} earlier steps not shown)\n"));
            }
            for s in self.steps.iter().skip(skip) {
                out.push_str(&format!("  {}\n", s.line()));
            }
        }
        if !self.warnings.is_empty() {
            out.push_str("Warnings raised:\n");
            for w in &self.warnings {
                out.push_str(&format!("  - {w}\n"));
            }
        }
        if !self.guidance.is_empty() {
            out.push_str("What the user said during the run:\n");
            for g in &self.guidance {
                out.push_str(&format!("  - {g}\n"));
            }
        }
        if !self.run_notes.is_empty() {
            out.push_str("Notes from the run itself:\n");
            for g in &self.run_notes {
                out.push_str(&format!("  - {g}\n"));
            }
        }
        out
    }
}

/// A JSON value in one short line.
pub fn compact(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 200 {
        format!(
            "{}…",
            &s[..s.char_indices().nth(200).map_or(s.len(), |(i, _)| i)]
        )
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_resolved_the_ways_a_request_gets_it_wrong() {
        // Seed 001, resolve_path examples: missing stays as named, empty stays empty.
        assert_eq!(
            resolve_path(Path::new("absent.dat"), Path::new(".")),
            PathBuf::from("absent.dat")
        );
        assert_eq!(resolve_path(Path::new(""), Path::new(".")), PathBuf::new());
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().join("example");
        std::fs::create_dir_all(project.join("data")).unwrap();
        std::fs::write(project.join("data/line.dat"), "x").unwrap();
        // Relative to the project folder.
        assert_eq!(
            resolve_path(Path::new("data/line.dat"), &project),
            project.join("data/line.dat")
        );
        // A duplicated prefix of the project folder's name.
        assert_eq!(
            resolve_path(Path::new("example/data/line.dat"), &project),
            project.join("data/line.dat")
        );
        // A bare file name in one subfolder.
        assert_eq!(
            resolve_path(Path::new("line.dat"), &project),
            project.join("data/line.dat")
        );
        // Two subfolders holding it: ambiguous, so reported missing by the user's name.
        std::fs::create_dir_all(project.join("old")).unwrap();
        std::fs::write(project.join("old/line.dat"), "x").unwrap();
        assert_eq!(
            resolve_path(Path::new("line.dat"), &project),
            project.join("line.dat")
        );
        assert_eq!(
            resolve_path(Path::new("nowhere.dat"), &project),
            project.join("nowhere.dat")
        );
    }
    use crate::runtime::interaction::Scripted;
    use crate::runtime::product::JsonProduct;

    fn opts() -> Vec<QuestionOption> {
        vec![
            QuestionOption::new("a", "Use the station file", ""),
            QuestionOption::new("b", "Use the SEG-Y headers", ""),
        ]
    }

    #[test]
    fn put_has_begin_finish() {
        // Seed 001, RunContext example.
        let mut ctx = RunContext::new("invert this line");
        ctx.put_value(
            "ert_data",
            JsonProduct::new("Loaded 1 survey, 812 measurements.", Value::Null),
        );
        assert!(ctx.has(&["ert_data"]));
        assert_eq!(
            ctx.begin("invert_ert", "the data are loaded").tool,
            "invert_ert"
        );
        ctx.finish("Converged to chi-squared 1.6.", StepStatus::Ok, "");
        assert_eq!(ctx.steps.last().unwrap().status, StepStatus::Ok);
    }

    #[test]
    fn ask_without_anybody_takes_the_default_and_warns() {
        // Seed 001, RunContext.ask example.
        let mut ctx = RunContext::new("goal");
        assert_eq!(ctx.ask("Which origin is right?", &opts(), ""), "a");
        assert!(ctx.warnings[0].starts_with("Nobody was available"));
        let mut ctx = ctx.with_interaction(Arc::new(Scripted {
            ask: Box::new(|_| Some("b".into())),
            ..Default::default()
        }));
        assert_eq!(ctx.ask("Which origin is right?", &opts(), ""), "b");
        assert_eq!(ctx.questions.len(), 2);
        assert_eq!(ctx.questions[1].by, AnsweredBy::User);
    }

    #[test]
    fn an_answer_that_matches_nothing_is_the_default() {
        let mut ctx = RunContext::new("goal").with_interaction(Arc::new(Scripted {
            ask: Box::new(|_| Some("c".into())),
            ..Default::default()
        }));
        assert_eq!(ctx.ask("Which?", &opts(), "b"), "b");
        assert_eq!(ctx.questions[0].by, AnsweredBy::Default);
    }

    #[test]
    fn attempted_excludes_blocked_and_reopen_resets() {
        // Seed 001, attempted/reopen examples.
        let mut ctx = RunContext::new("x");
        ctx.begin("evaluate", "");
        ctx.finish("", StepStatus::Ok, "");
        assert_eq!(ctx.attempted("evaluate"), 1);
        ctx.reopen(&["evaluate"]);
        assert_eq!(ctx.attempted("evaluate"), 0);
        ctx.begin("convert", "");
        ctx.finish("", StepStatus::Blocked, "Needs evaluation");
        assert_eq!(ctx.attempted("convert"), 0);
    }

    #[test]
    fn projected_artifacts_count_as_present_but_are_not_products() {
        let mut ctx = RunContext::new("x");
        ctx.put_projected("data");
        assert!(ctx.has(&["data"]) && ctx.projected("data"));
        assert!(ctx.product("data").is_none());
    }

    #[test]
    fn warnings_are_deduplicated() {
        let mut ctx = RunContext::new("x");
        ctx.note("same");
        ctx.note("same");
        assert_eq!(ctx.warnings.len(), 1);
    }

    #[test]
    fn input_roles_are_kept_out_of_settings_and_cannot_be_changed() {
        let mut cfg = Map::new();
        cfg.insert("data_file".into(), Value::from("a.dat"));
        cfg.insert("fit_params".into(), serde_json::json!({"lambda": 20}));
        let mut ctx = RunContext::new("x").with_config(cfg);
        assert!(ctx.has_input("data_file"));
        assert!(!ctx.config.contains_key("data_file"));
        assert!(
            ctx.change_setting("data_file", Value::from("/etc/passwd"), "user note", "")
                .is_err()
        );
        let line = ctx
            .change_setting(
                "fit_params",
                serde_json::json!({"lambda": 5}),
                "user note",
                "asked",
            )
            .unwrap();
        assert_eq!(line, "fit_params: {\"lambda\":20} -> {\"lambda\":5}");
    }

    #[test]
    fn transcript_lists_goal_artifacts_steps_and_warnings() {
        let mut ctx = RunContext::new("find the water table");
        ctx.put_value(
            "ert_data",
            JsonProduct::new("5 surveys, 812 measurements each", Value::Null),
        );
        ctx.begin("load_ert_surveys", "it is first");
        ctx.finish("5 surveys, 812 measurements each", StepStatus::Ok, "");
        ctx.note("electrode 12 has no elevation");
        let t = ctx.transcript(40);
        assert_eq!(
            t,
            "Goal: find the water table\nAvailable now:\n  - ert_data: 5 surveys, 812 measurements each\nSteps so far:\n  [done] load_ert_surveys (chosen because: it is first) -> 5 surveys, 812 measurements each\nWarnings raised:\n  - electrode 12 has no elevation\n"
        );
    }
}
