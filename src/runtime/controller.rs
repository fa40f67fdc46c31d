//! The loop: read the transcript, choose one action, observe, choose again.
//!
//! Two properties matter more than the loop itself. It always terminates and always produces
//! something: a model that keeps choosing badly is bounded by `max_steps`, and a model that
//! cannot be reached falls through to [`next_by_policy`], the tools in dependency order. And a
//! refusal is data: a tool that cannot run, or does not exist, becomes a recorded step with its
//! reason, and the loop goes on — the model sees its own mistake in the transcript.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::context::{Ended, RunContext};
use super::decide::{Choice, Decide, Decision, DecisionRequest, ModelEvent};
use super::events::{AnsweredBy, Event, RouteStep, Verdict};
use super::interaction::ApprovalRequest;
use super::recovery::{self, MAX_RECOVERIES};
use super::steering::Steering;
use super::step::{DecidedBy, StepStatus};
use super::tool::{Registry, Tool, invoke};

/// A run that has taken this many steps is looping rather than progressing.
pub const DEFAULT_MAX_STEPS: usize = 24;
/// The artifact that has to exist before the run may finish.
pub const DEFAULT_FINISH: &str = "report_files";
/// How many times [`drive`] picks a run up after an error in the loop's own code.
pub const MAX_LOOP_ERRORS: usize = 2;
/// At most this many `Thought` events per second.
pub const THOUGHTS_PER_SECOND: u32 = 20;

/// The app's two modes, as two answers to "may this step run?".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Never pauses: every step runs as chosen.
    #[default]
    Auto,
    /// Asks before every step and honours proceed / skip / stop. With nobody to ask, stop.
    StepByStep,
}

impl Mode {
    /// `auto` or `step_by_step`.
    pub fn word(self) -> &'static str {
        match self {
            Mode::Auto => "auto",
            Mode::StepByStep => "step_by_step",
        }
    }
}

/// Extra reasons a run is incomplete, from the layer that knows what the goal asked for.
pub type Assess = Arc<dyn Fn(&RunContext) -> Vec<String> + Send + Sync>;

/// How a run is driven.
#[derive(Clone)]
pub struct RunOptions {
    /// Auto or step by step.
    pub mode: Mode,
    /// Hard bound on iterations.
    pub max_steps: usize,
    /// The artifact that must exist before "done" is accepted.
    pub finish: String,
    /// Whether a failed step may be diagnosed and retried once with changed settings.
    pub recovery: bool,
    /// Pause, resume, stop and notes from another thread.
    pub steering: Option<Steering>,
    /// Called after every step with the run as it stands (the run folder rewrites
    /// `result.json` here, so a crash leaves the latest).
    pub on_result: Option<OnResult>,
    /// Let the model look at products and propose off-route actions (the user decides).
    pub flexible: bool,
    /// Artifacts the request asked for: a step they need is never left out.
    pub protected: Option<Assess>,
}

/// A hook called after every step.
pub type OnResult = Arc<dyn Fn(&RunContext) + Send + Sync>;

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            mode: Mode::Auto,
            max_steps: DEFAULT_MAX_STEPS,
            finish: DEFAULT_FINISH.to_string(),
            recovery: true,
            steering: None,
            on_result: None,
            flexible: false,
            protected: None,
        }
    }
}

/// The decision to take without asking: exactly one tool on the menu and "done" not yet
/// valid. Asking a model for it would cost a request and could only return this answer.
pub fn forced_choice(ctx: &RunContext, registry: &Registry, finish: &str) -> Option<Decision> {
    if finished(ctx, registry, finish) {
        return None;
    }
    match registry.runnable(ctx).as_slice() {
        [only] => Some(Decision::tool(
            &only.name,
            &format!("only one action was available: {}", only.name),
        )),
        _ => None,
    }
}

/// Whether the finish artifact exists and is up to date. After a step before it was run again
/// (an accepted re-run reopens everything downstream), the step that wrote it is runnable
/// again (it has not run since it was reopened): the report is out of date and must be
/// written again before "done" is accepted.
pub fn finished(ctx: &RunContext, registry: &Registry, finish: &str) -> bool {
    ctx.has(&[finish])
        && !registry.tools().iter().any(|t| {
            t.produces.iter().any(|p| p == finish)
                && !ctx.ran(&t.name)
                && ctx
                    .steps
                    .iter()
                    .any(|s| s.tool == t.name && s.status == StepStatus::Ok)
        })
}

/// The next tool when there is no model to ask: the first runnable one in registration
/// (= dependency) order.
pub fn next_by_policy<'a>(ctx: &RunContext, registry: &'a Registry) -> Option<&'a Tool> {
    registry.runnable(ctx).into_iter().next()
}

/// The steps still between the run as it stands and `finish`, worked out on a copy: the
/// policy takes a step, the step is assumed to make what it declares, and so on until the
/// finish artifact exists or nothing more can run. Not a promise — the controller may choose
/// differently and a step may fail — which is why it is redrawn after every step.
pub fn route_ahead(
    ctx: &RunContext,
    registry: &Registry,
    finish: &str,
    limit: usize,
) -> Vec<RouteStep> {
    let mut shadow = ctx.clone();
    shadow.events = Default::default();
    let mut planned: Vec<String> = Vec::new();
    let mut route = Vec::new();
    while route.len() < limit && !shadow.has(&[finish]) {
        let next = registry
            .tools()
            .iter()
            .find(|t| !planned.contains(&t.name) && t.available(&shadow));
        let Some(tool) = next else { break };
        planned.push(tool.name.clone());
        for p in &tool.produces {
            if !shadow.has(&[p.as_str()]) {
                shadow.put_projected(p);
            }
        }
        route.push(RouteStep {
            tool: tool.name.clone(),
            label: tool.display_label().to_string(),
            module: tool.module.clone(),
        });
    }
    route
}

/// Emits `Thought` events no more often than [`THOUGHTS_PER_SECOND`], always cumulative, and
/// the final text once the model is done.
struct ThoughtThrottle {
    last: Option<Instant>,
    pending: Option<String>,
}

impl ThoughtThrottle {
    fn new() -> Self {
        ThoughtThrottle {
            last: None,
            pending: None,
        }
    }

    fn offer(&mut self, ctx: &RunContext, text: String) {
        let gap = Duration::from_secs(1) / THOUGHTS_PER_SECOND;
        if self.last.is_none_or(|t| t.elapsed() >= gap) {
            self.last = Some(Instant::now());
            self.pending = None;
            ctx.events.emit(&Event::Thought { text });
        } else {
            self.pending = Some(text);
        }
    }

    fn flush(&mut self, ctx: &RunContext) {
        if let Some(text) = self.pending.take() {
            ctx.events.emit(&Event::Thought { text });
        }
    }
}

/// Handle what a model reports: reasoning (throttled), usage (added to the run), notes.
fn model_event(
    ctx: &mut RunContext,
    throttle: &mut ThoughtThrottle,
    describe: &str,
    e: ModelEvent,
) {
    match e {
        ModelEvent::Thought(text) => throttle.offer(ctx, text),
        ModelEvent::Usage {
            tokens_in,
            tokens_out,
            cost_usd,
        } => {
            ctx.usage.calls += 1;
            ctx.usage.tokens_in += tokens_in;
            ctx.usage.tokens_out += tokens_out;
            ctx.usage.cost_usd += cost_usd;
            ctx.events.emit(&Event::Usage {
                model: describe.to_string(),
                tokens_in,
                tokens_out,
                cost_usd,
                run_tokens_in: ctx.usage.tokens_in,
                run_tokens_out: ctx.usage.tokens_out,
                run_cost_usd: ctx.usage.cost_usd,
                run_calls: ctx.usage.calls,
            });
        }
        ModelEvent::Note(text) => ctx.note(&text),
    }
}

/// Ask the decider, passing its events through. Returns the decision or the error text.
fn ask_model(
    ctx: &mut RunContext,
    decider: &mut dyn Decide,
    request: &DecisionRequest,
) -> Result<Decision, String> {
    let describe = decider.describe();
    let mut events: Vec<ModelEvent> = Vec::new();
    let mut throttle = ThoughtThrottle::new();
    // Thoughts must reach the timeline while the model is still writing, so they are emitted
    // as they arrive; usage and notes are applied once the call is over.
    let result = {
        let ctx_ref: &mut RunContext = ctx;
        let mut on_event = |e: ModelEvent| match e {
            ModelEvent::Thought(text) => throttle.offer(ctx_ref, text),
            other => events.push(other),
        };
        decider.decide(request, &mut on_event)
    };
    throttle.flush(ctx);
    let mut t2 = ThoughtThrottle::new();
    for e in events {
        model_event(ctx, &mut t2, &describe, e);
    }
    result.map_err(|e| e.to_string())
}

/// The steps and the artifacts after one controller pass.
fn decide_next(
    ctx: &mut RunContext,
    registry: &Registry,
    decider: Option<&mut (dyn Decide + '_)>,
    notes: &[String],
    finish: &str,
    toolbox: Option<String>,
) -> (Decision, DecidedBy, Option<String>) {
    let done_allowed = finished(ctx, registry, finish);
    // A forced choice needs no model — unless the user just said something, which could
    // change a setting or end the run.
    if notes.is_empty()
        && toolbox.is_none()
        && let Some(d) = forced_choice(ctx, registry, finish)
    {
        return (d, DecidedBy::Forced, None);
    }
    let Some(decider) = decider else {
        return match next_by_policy(ctx, registry) {
            Some(t) if !done_allowed => (
                Decision::tool(&t.name, "next available step"),
                DecidedBy::Policy,
                None,
            ),
            _ => (
                Decision::done("the report exists and there is no model to choose more"),
                DecidedBy::Policy,
                None,
            ),
        };
    };
    let runnable = registry.runnable(ctx);
    let request = DecisionRequest {
        transcript: ctx.transcript(40),
        menu: registry.menu(ctx),
        menu_names: runnable.iter().map(|t| t.name.clone()).collect(),
        done_allowed,
        finish: finish.to_string(),
        notes: notes.to_vec(),
        adjustable: recovery::settings_for(ctx),
        toolbox,
    };
    match ask_model(ctx, decider, &request) {
        Ok(d) => (d, DecidedBy::Model, None),
        Err(why) => {
            let fallback = match next_by_policy(ctx, registry) {
                Some(t) if !done_allowed => Decision::tool(&t.name, "next available step"),
                _ => Decision::done("no usable decision and the report exists"),
            };
            (fallback, DecidedBy::Policy, Some(why))
        }
    }
}

/// Apply the settings a decision changed because of the user's notes, and tell the run.
fn answer_notes(ctx: &mut RunContext, notes: &[String], decision: &Decision, had_model: bool) {
    if notes.is_empty() {
        return;
    }
    if !had_model {
        ctx.note(
            "You sent a note, but this run has no model to read notes, so it carried on in dependency order. Settings can be changed in the module panels.",
        );
        ctx.events.emit(&Event::NoteHeard {
            notes: notes.to_vec(),
            changes: Vec::new(),
            response: "No model is connected to read notes; the run carried on unchanged.".into(),
        });
        return;
    }
    let (applied, refused) =
        recovery::apply_changes(ctx, &decision.settings, "user note", &notes.join(" / "));
    for line in &applied {
        ctx.note(&format!("Changed at the user's request: {line}."));
    }
    for why in &refused {
        ctx.note(&format!(
            "A note asked for a change that cannot be made: {why}."
        ));
    }
    let mut response = decision.why.clone();
    if !applied.is_empty() {
        response.push_str(&format!(" In effect from step {} on.", ctx.steps.len() + 1));
    }
    if !refused.is_empty() {
        response.push_str(&format!(" Not changed: {}.", refused.join("; ")));
    }
    ctx.events.emit(&Event::NoteHeard {
        notes: notes.to_vec(),
        changes: applied,
        response,
    });
}

/// Tell the timeline that notes sent while a step ran were read with its diagnosis, and
/// which step used them.
fn notes_read_by_recovery(ctx: &RunContext, notes: &[String], applied: Vec<String>) {
    if notes.is_empty() {
        return;
    }
    let response = if applied.is_empty() {
        "Read with the failed step's diagnosis; no setting was changed for a retry.".to_string()
    } else {
        format!(
            "Read with the failed step's diagnosis; the retry, step {}, ran with the change.",
            ctx.steps.len()
        )
    };
    ctx.events.emit(&Event::NoteHeard {
        notes: notes.to_vec(),
        changes: applied,
        response,
    });
}

/// Run a tool as a step, announcing it before and reporting it after.
fn run_step(
    ctx: &mut RunContext,
    registry: &Registry,
    name: &str,
    reason: &str,
    by: DecidedBy,
) -> StepStatus {
    let tool = registry.get(name);
    let number = ctx.steps.len() + 1;
    ctx.events.emit(&Event::StepStarted {
        step: number,
        tool: name.to_string(),
        label: tool
            .map_or("Unknown step", |t| t.display_label())
            .to_string(),
        module: tool.map(|t| t.module.clone()).unwrap_or_default(),
        reason: reason.to_string(),
    });
    let status = invoke(ctx, registry, name, reason, by);
    emit_finished(ctx);
    status
}

/// Announce the last step as finished.
fn emit_finished(ctx: &RunContext) {
    if let Some(s) = ctx.steps.last() {
        ctx.events.emit(&Event::StepFinished {
            step: ctx.steps.len(),
            tool: s.tool.clone(),
            label: if s.label.is_empty() {
                s.tool.clone()
            } else {
                s.label.clone()
            },
            module: s.module.clone(),
            status: s.status,
            summary: s.summary.clone(),
            error: s.error.clone(),
            produced: s.produced.clone(),
            figures: s.figures.clone(),
            seconds: s.seconds,
        });
    }
}

/// Record a step that did not run (blocked, skipped) without invoking anything.
fn record_not_run(
    ctx: &mut RunContext,
    registry: &Registry,
    name: &str,
    reason: &str,
    status: StepStatus,
    error: &str,
    by: DecidedBy,
) {
    let tool = registry.get(name);
    let step = ctx.begin(name, reason);
    step.decided_by = by;
    if let Some(t) = tool {
        step.label = t.display_label().to_string();
        step.module = t.module.clone();
        step.agent = t.agent.clone();
        step.purpose = t.description.clone();
    }
    ctx.finish("", status, error);
    emit_finished(ctx);
}

/// What kind of step an approval is asked for: step by step asks before every step that will
/// run, and the question says which kind it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepKind {
    /// The next step the controller chose.
    Next,
    /// The same step again after it failed, with a setting the diagnosis changed.
    Retry,
    /// The failed step again on what code you approved wrote.
    Rerun,
    /// A step you accepted when the model proposed it.
    Proposal,
}

impl StepKind {
    /// The words the approval's reason starts with.
    pub fn words(self) -> &'static str {
        match self {
            StepKind::Next => "Next step",
            StepKind::Retry => "Recovery retry (the step failed; a setting was changed)",
            StepKind::Rerun => "Re-run on the output of code you approved",
            StepKind::Proposal => "A step you accepted from the model's proposal",
        }
    }
}

/// Run a step, in step-by-step mode only after asking. `None`: it did not run — skipped, or
/// stopped (then the run's stop flag is set, so the loop ends as stopped).
fn run_gated(
    ctx: &mut RunContext,
    registry: &Registry,
    mode: Mode,
    step: (&str, &str, DecidedBy),
    kind: StepKind,
) -> Option<StepStatus> {
    let (name, reason, by) = step;
    if mode == Mode::StepByStep {
        let tool = registry.get(name)?.clone();
        let (why, stop) = match approve(ctx, &tool, reason, kind) {
            (Verdict::Proceed, _) => ("", false),
            (Verdict::Skip, _) => ("Skipped at the user's request.", false),
            (Verdict::Stop, AnsweredBy::User) => {
                ("Stopped at the user's request before this step ran.", true)
            }
            (Verdict::Stop, AnsweredBy::ClosedWithoutAnswer) => (
                "Not run: the window closed while this step waited for approval (closed_without_answer).",
                true,
            ),
            (Verdict::Stop, _) => (
                "Not run: step by step needs a person to approve each step, and nobody could be asked (nobody_asked).",
                true,
            ),
        };
        if !why.is_empty() {
            record_not_run(ctx, registry, name, reason, StepStatus::Skipped, why, by);
            if stop {
                ctx.cancel_flag()
                    .store(true, std::sync::atomic::Ordering::Relaxed);
            }
            return None;
        }
    }
    Some(run_step(ctx, registry, name, reason, by))
}

/// How a step run again turned out, for the note.
fn outcome(status: Option<StepStatus>) -> &'static str {
    match status {
        Some(StepStatus::Ok) => "which worked",
        Some(_) => "which did not help either",
        None => "but it was not run: you skipped or stopped it",
    }
}

/// The approval gate of step-by-step mode. Nobody there, or a gate that fails → stop; the
/// answer says who gave it (`user`, `nobody_asked`, `closed_without_answer`).
fn approve(
    ctx: &mut RunContext,
    tool: &Tool,
    reason: &str,
    kind: StepKind,
) -> (Verdict, AnsweredBy) {
    let id = ctx.next_id();
    let request = ApprovalRequest {
        id,
        step: ctx.steps.len() + 1,
        tool: tool.name.clone(),
        label: tool.display_label().to_string(),
        module: tool.module.clone(),
        reason: format!("{}: {reason}", kind.words()),
        irreversible: tool.irreversible,
    };
    ctx.events.emit(&Event::ApprovalNeeded {
        id,
        step: request.step,
        tool: request.tool.clone(),
        label: request.label.clone(),
        module: request.module.clone(),
        reason: request.reason.clone(),
        irreversible: request.irreversible,
    });
    let answer = ctx.interaction().and_then(|i| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| i.approve(&request)))
            .unwrap_or(None)
    });
    let (verdict, by) = match answer {
        Some(v) => (v, AnsweredBy::User),
        None => (Verdict::Stop, ctx.absent()),
    };
    match by {
        AnsweredBy::ClosedWithoutAnswer => ctx.note("The window closed while a step waited for approval, so the run stopped rather than proceed unapproved."),
        AnsweredBy::User => {}
        _ => ctx.note("Step by step needs somebody to approve each step; nobody could be asked, so the run stopped rather than proceed unapproved."),
    }
    let word = match verdict {
        Verdict::Proceed => "proceed",
        Verdict::Skip => "skip",
        Verdict::Stop => "stop",
    };
    ctx.approvals.push(super::context::ApprovalRecord {
        step: request.step,
        tool: request.tool.clone(),
        verdict: word.into(),
        by,
    });
    ctx.events.emit(&Event::Answered {
        id,
        answer: word.into(),
        by,
    });
    (verdict, by)
}

/// Diagnose a failed step and, if a setting can be blamed, run it again once. `notes` are
/// what the user said while the step ran: the diagnosis reads them, since the retry is the
/// next step to use the settings they change. Returns the settings changed for the retry.
fn recover(
    ctx: &mut RunContext,
    registry: &Registry,
    decider: &mut dyn Decide,
    (name, mode): (&str, Mode),
    notes: &[String],
) -> Vec<String> {
    let used = ctx.recoveries_spent.get(name).copied().unwrap_or(0);
    if used >= MAX_RECOVERIES {
        return Vec::new();
    }
    let Some(tool) = registry.get(name) else {
        return Vec::new();
    };
    let error = ctx
        .steps
        .last()
        .map(|s| s.error.clone())
        .unwrap_or_default();
    let describe = decider.describe();
    let mut events = Vec::new();
    let plan = recovery::diagnose(
        ctx,
        name,
        &tool.description,
        &error,
        notes,
        decider,
        &mut |e| events.push(e),
    );
    let mut t = ThoughtThrottle::new();
    for e in events {
        model_event(ctx, &mut t, &describe, e);
    }
    let label = tool.display_label().to_string();
    match plan.action.as_str() {
        "retry" => {}
        "adapt" => {
            ctx.recoveries_spent.insert(name.to_string(), used + 1);
            recover_by_reader(
                ctx,
                registry,
                decider,
                (name, mode),
                &plan,
                (&label, &error),
            );
            return Vec::new();
        }
        "script" => {
            ctx.recoveries_spent.insert(name.to_string(), used + 1);
            recover_by_script(
                ctx,
                registry,
                decider,
                (name, mode),
                &plan,
                (&label, &error),
            );
            return Vec::new();
        }
        _ => {
            if !plan.cause.is_empty() {
                ctx.note(&format!(
                    "{label} failed ({error}). Diagnosis: {}. Nothing in the settings would change that, so it was left undone.",
                    plan.cause.trim_end_matches('.')
                ));
            }
            return Vec::new();
        }
    }
    ctx.recoveries_spent.insert(name.to_string(), used + 1);
    let (applied, _) = recovery::apply_changes(ctx, &plan.changes, "recovery", &plan.why);
    if applied.is_empty() {
        return Vec::new();
    }
    ctx.reopen(&[name]);
    let reason = format!(
        "retried after it failed; {}",
        if plan.why.is_empty() {
            &plan.cause
        } else {
            &plan.why
        }
    );
    let Some(status) = run_gated(
        ctx,
        registry,
        mode,
        (name, &reason, DecidedBy::Recovery),
        StepKind::Retry,
    ) else {
        ctx.note(&format!(
            "{label} failed ({error}); a retry with {} was prepared, and not run: you skipped or stopped it.",
            applied.join("; ")
        ));
        return Vec::new();
    };
    ctx.note(&recovery::recovery_note(
        &label,
        &error,
        &plan.cause,
        &applied,
        status == StepStatus::Ok,
    ));
    applied
}

/// Recovery by a generated reader (the diagnosis' `adapt`): offered for review; once
/// approved, its table stands in for the file and the step runs again (asked first in step
/// by step).
fn recover_by_reader(
    ctx: &mut RunContext,
    registry: &Registry,
    decider: &mut dyn Decide,
    (name, mode): (&str, Mode),
    plan: &super::decide::Diagnosis,
    (label, error): (&str, &str),
) {
    match super::offers::offer_reader(ctx, decider, &plan.file_key, error) {
        Ok(path) => {
            ctx.reopen(&[name]);
            let reason = format!("run again on {} read by the approved reader", path.display());
            let status = run_gated(ctx, registry, mode, (name, &reason, DecidedBy::Recovery), StepKind::Rerun);
            ctx.note(&format!(
                "{label} failed ({error}). Diagnosis: {}. A generated reader you approved rewrote {}, and the step was run again, {}.",
                plan.cause.trim_end_matches('.'),
                plan.file_key,
                outcome(status)
            ));
        }
        Err(why) => ctx.note(&format!(
            "{label} failed ({error}). Diagnosis: {}. A generated reader for {} was not used: {why}.",
            plan.cause.trim_end_matches('.'),
            plan.file_key
        )),
    }
}

/// Recovery by a temporary script (the diagnosis' `script`): offered for review; when it ran
/// and wrote a replacement for an input, that stands in for it and the step runs again.
fn recover_by_script(
    ctx: &mut RunContext,
    registry: &Registry,
    decider: &mut dyn Decide,
    (name, mode): (&str, Mode),
    plan: &super::decide::Diagnosis,
    (label, error): (&str, &str),
) {
    let intro = format!("{label} failed: {}.", plan.cause.trim_end_matches('.'));
    let offer = super::offers::offer_script(
        ctx,
        decider,
        super::decide::CodeKind::Script,
        name,
        error,
        &plan.purpose,
        &intro,
    );
    let head = format!(
        "{label} failed ({error}). Diagnosis: {}.",
        plan.cause.trim_end_matches('.')
    );
    match offer {
        super::offers::Offer::Ran(rec) => {
            let replacement = rec.result.get("replacement").and_then(Value::as_str).map(str::to_string)
                .or_else(|| (rec.files.len() == 1).then(|| rec.files[0].clone()));
            let own = rec.folder.join("out");
            let target = replacement.map(|r| own.join(r));
            // Only the script's own output may stand in for an input — not merely anything in
            // the run folder (another script's output, a figure, the journal).
            if let Some(t) = &target
                && t.exists()
                && !super::context::is_inside(t, &own)
            {
                ctx.note(&format!(
                    "{head} A temporary script you approved named {} as its output, which is outside its own folder {}; it was not used, and the step was not run again.",
                    t.display(),
                    own.display()
                ));
                return;
            }
            match (plan.replaces.as_str(), target) {
                (key, Some(t)) if !key.is_empty() && t.exists() && ctx.has_input(key) => {
                    match ctx.substitute_input(key, &t, &format!("written by the approved script in scripts/{}", rec.n)) {
                        Ok(()) => {
                            ctx.reopen(&[name]);
                            let status = run_gated(ctx, registry, mode, (name, "run again on the approved script's output", DecidedBy::Recovery), StepKind::Rerun);
                            ctx.note(&format!(
                                "{head} A temporary script you approved wrote {} in place of {key}, and the step was run again, {}. The script is kept in {}; your file is unchanged.",
                                t.display(),
                                outcome(status),
                                rec.folder.display()
                            ));
                        }
                        Err(why) => ctx.note(&format!("{head} The script's output could not stand in for {key}: {why}.")),
                    }
                }
                _ => ctx.note(&format!(
                    "{head} A temporary script you approved ran; it is kept in {}. The step itself was not run again.",
                    rec.folder.display()
                )),
            }
        }
        super::offers::Offer::Failed(rec) => ctx.note(&format!(
            "{head} The approved temporary script did not succeed ({}); it is kept in {}.",
            super::offers::last_line(&rec.error),
            rec.folder.display()
        )),
        super::offers::Offer::Declined(_) => ctx.note(&format!(
            "{head} A temporary script to get past it was offered and declined, so the step was left undone."
        )),
        super::offers::Offer::NotOffered(why) => ctx.note(&format!("{head} A temporary script could not be offered: {why}.")),
    }
}

/// How many of the model's choices may be refused in a row before the controller stops asking
/// it and follows dependency order for the rest of the run (issue 19: a confused model that
/// names artifacts or finished steps must not use up the step limit before the report).
pub const MAX_REFUSED_CHOICES: usize = 3;

/// The steps a model announced with `then` (seed 001, `_follow_plan`): taken one by one
/// without a new request while each is on the menu, no note arrived and the step before it
/// succeeded; dropped as soon as any of that fails or the model looks or proposes.
#[derive(Debug, Default)]
struct Plan {
    steps: std::collections::VecDeque<String>,
    /// The model's reason when it made the plan, and the step it made it at.
    why: String,
    at_step: usize,
}

impl Plan {
    fn adopt(&mut self, decision: &Decision, at_step: usize) {
        self.steps = decision.then.iter().cloned().collect();
        self.why = decision.why.clone();
        self.at_step = at_step;
    }

    fn clear(&mut self) {
        self.steps.clear();
    }

    /// The next planned step, when it is on the menu; otherwise the plan is dropped.
    fn next(&mut self, ctx: &RunContext, registry: &Registry) -> Option<Decision> {
        let name = self.steps.pop_front()?;
        if !registry.runnable(ctx).iter().any(|t| t.name == name) {
            self.clear();
            return None;
        }
        Some(Decision::tool(
            &name,
            &format!(
                "planned by the model at step {} ({}); taken without asking it again",
                self.at_step, self.why
            ),
        ))
    }
}

/// What the loop does after a decision.
enum Next {
    /// Run this tool (name, reason, who chose it).
    Run(String, String, DecidedBy),
    /// Go round again (an inspection or a proposal was handled).
    Again,
    /// The run is over.
    End(Ended),
}

/// Everything one decision is made with in flexible mode.
struct Flex {
    flexible: bool,
    protected: Vec<String>,
    route: Vec<String>,
}

impl Flex {
    fn new(ctx: &RunContext, registry: &Registry, options: &RunOptions, had_model: bool) -> Self {
        let flexible = options.flexible && had_model;
        if !flexible {
            return Flex {
                flexible,
                protected: Vec::new(),
                route: Vec::new(),
            };
        }
        Flex {
            flexible,
            protected: options
                .protected
                .as_ref()
                .map(|p| p(ctx))
                .unwrap_or_default(),
            route: route_ahead(ctx, registry, &options.finish, 12)
                .into_iter()
                .map(|r| r.tool)
                .collect(),
        }
    }

    fn toolbox(&self, ctx: &RunContext, registry: &Registry, finish: &str) -> Option<String> {
        self.flexible
            .then(|| {
                super::toolbox::toolbox_text(ctx, registry, &self.route, finish, &self.protected)
            })
            .filter(|t| !t.is_empty())
    }
}

/// The notes the user sent since the last look, kept as the run's guidance.
fn take_notes(ctx: &mut RunContext, options: &RunOptions) -> Vec<String> {
    let notes = options
        .steering
        .as_ref()
        .map(Steering::take_notes)
        .unwrap_or_default();
    ctx.guidance.extend(notes.iter().cloned());
    notes
}

/// Hold while paused, stop when told (the steering checkpoint). False: the run stops.
fn checkpoint(ctx: &RunContext, options: &RunOptions) -> bool {
    if let Some(steer) = &options.steering {
        let step = ctx.steps.len();
        let events = ctx.events.clone();
        let events2 = ctx.events.clone();
        let go_on = steer.checkpoint(
            || events.emit(&Event::Paused { step }),
            || events2.emit(&Event::Resumed { step }),
        );
        if !go_on {
            return false;
        }
    }
    !ctx.cancelled()
}

/// Turn a decision into what the loop does next: a step to run, or an inspection or a
/// proposal handled here (flexible mode), or the end.
fn act_on(
    ctx: &mut RunContext,
    registry: &Registry,
    decider: Option<&mut (dyn Decide + '_)>,
    options: &RunOptions,
    decision: &Decision,
    by: DecidedBy,
    flex: &Flex,
) -> Next {
    let finish = options.finish.as_str();
    match &decision.choice {
        Choice::Done if finished(ctx, registry, finish) => Next::End(Ended::Finished),
        Choice::Done => match next_by_policy(ctx, registry) {
            Some(t) => Next::Run(
                t.name.clone(),
                "the model answered 'done' before a report was written, so the next available step was taken".to_string(),
                DecidedBy::Policy,
            ),
            None => Next::End(Ended::Exhausted),
        },
        Choice::Tool(t) => Next::Run(t.clone(), decision.why.clone(), by),
        Choice::Inspect(key) if options.flexible => {
            let number = ctx.steps.len() + 1;
            ctx.events.emit(&Event::StepStarted {
                step: number,
                tool: "inspect".into(),
                label: format!("Look at {key}"),
                module: "project".into(),
                reason: decision.why.clone(),
            });
            super::toolbox::inspect(ctx, key, &decision.why);
            emit_finished(ctx);
            emit_route(ctx, registry, finish);
            Next::Again
        }
        Choice::Propose(p) if options.flexible => {
            let next = flex
                .route
                .first()
                .and_then(|t| registry.get(t))
                .map(|t| t.display_label().to_string())
                .unwrap_or_default();
            let Some(d) = decider else {
                return Next::Again;
            };
            let view = super::toolbox::RouteView {
                finish,
                protected: &flex.protected,
                next: &next,
            };
            match super::toolbox::propose(ctx, registry, d, p, &decision.why, view) {
                super::toolbox::Proposed::Run(tool, reason) => {
                    run_gated(
                        ctx,
                        registry,
                        options.mode,
                        (&tool, &reason, DecidedBy::User),
                        StepKind::Proposal,
                    );
                    if let Some(hook) = &options.on_result {
                        hook(ctx);
                    }
                }
                super::toolbox::Proposed::Done => {}
                super::toolbox::Proposed::No(why) => ctx
                    .run_notes
                    .push(format!("Your proposal was not carried out: {why}")),
            }
            emit_route(ctx, registry, finish);
            Next::Again
        }
        Choice::Inspect(_) | Choice::Propose(_) => match next_by_policy(ctx, registry) {
            Some(t) => {
                ctx.note("The model answered with an action only flexible mode offers; the next available step was taken instead.");
                Next::Run(
                    t.name.clone(),
                    "next available step".to_string(),
                    DecidedBy::Policy,
                )
            }
            None => Next::End(Ended::Exhausted),
        },
    }
}

/// A tool that is not on the menu is refused and recorded. True when it was refused.
fn refuse_unoffered(
    ctx: &mut RunContext,
    registry: &Registry,
    name: &str,
    reason: &str,
    by: DecidedBy,
) -> bool {
    let offered = registry.runnable(ctx);
    if offered.iter().any(|t| t.name == name) {
        return false;
    }
    let names: Vec<&str> = offered.iter().map(|t| t.name.as_str()).collect();
    let (status, why) = match registry.get(name) {
        Some(tool) => (
            StepStatus::Blocked,
            format!(
                "Not offered, so not run: {}. Choose one of: {}.",
                tool.unavailable_because(ctx),
                names.join(", ")
            ),
        ),
        None => (
            StepStatus::Skipped,
            format!(
                "No tool named '{name}'. Choose one that is offered: {}.",
                names.join(", ")
            ),
        ),
    };
    record_not_run(ctx, registry, name, reason, status, &why, by);
    true
}

/// Drive the run to its end, one chosen action at a time. Never raises: tool failures are
/// recorded, display failures ignored.
pub fn run_controller(
    ctx: &mut RunContext,
    registry: &Registry,
    mut decider: Option<&mut (dyn Decide + '_)>,
    options: &RunOptions,
) -> Ended {
    ctx.recovery = registry.recovery_rules();
    let finish = options.finish.as_str();
    let mut refused_in_a_row = 0usize;
    let mut plan = Plan::default();
    for _ in ctx.steps.len()..options.max_steps.max(ctx.steps.len()) {
        // 1. Steering checkpoint: hold while paused; stop when told.
        if !checkpoint(ctx, options) {
            return end(ctx, Ended::Stopped);
        }
        // 2. Notes.
        let notes = take_notes(ctx, options);
        // 3. Menu. With the report written and nothing left, the run is finished — except
        // that a flexible run's model may still propose (a re-run, a question) while it has
        // proposals left; it ends the run by answering "done".
        let may_propose = options.flexible
            && decider.is_some()
            && super::toolbox::proposals_left(ctx) > 0
            && finished(ctx, registry, finish);
        if registry.runnable(ctx).is_empty() && !may_propose {
            let e = if ctx.has(&[finish]) {
                Ended::Finished
            } else {
                Ended::Exhausted
            };
            return end(ctx, e);
        }
        // 4. Decide: the model's plan while it holds, else a decision.
        let had_model = decider.is_some();
        let flex = Flex::new(ctx, registry, options, had_model);
        if !notes.is_empty() || !flex.flexible {
            plan.clear();
        }
        let (decision, by, problem) = match plan.next(ctx, registry) {
            Some(d) => (d, DecidedBy::Model, None),
            None => {
                let (d, by, problem) = decide_next(
                    ctx,
                    registry,
                    decider.as_deref_mut(),
                    &notes,
                    finish,
                    flex.toolbox(ctx, registry, finish),
                );
                if flex.flexible && by == DecidedBy::Model {
                    plan.adopt(&d, ctx.steps.len() + 1);
                }
                (d, by, problem)
            }
        };
        if let Some(why) = problem {
            ctx.note(&format!(
                "The controller could not get a usable decision from the model ({why}) and fell back to running the available steps in order."
            ));
        }
        // 5. Notes answered.
        answer_notes(ctx, &notes, &decision, had_model);
        // 6. Done, or a premature done, or an off-route action.
        let (name, reason, by) = match act_on(
            ctx,
            registry,
            decider.as_deref_mut(),
            options,
            &decision,
            by,
            &flex,
        ) {
            Next::Run(name, reason, by) => (name, reason, by),
            Next::Again => {
                plan.clear();
                continue;
            }
            Next::End(e) => return end(ctx, e),
        };
        // 7. A tool that is not on the menu is refused and recorded.
        if refuse_unoffered(ctx, registry, &name, &reason, by) {
            plan.clear();
            emit_route(ctx, registry, finish);
            if by == DecidedBy::Model {
                refused_in_a_row += 1;
                if refused_in_a_row >= MAX_REFUSED_CHOICES && decider.is_some() {
                    decider = None;
                    ctx.note(&format!(
                        "The model's last {MAX_REFUSED_CHOICES} choices in a row were refused (tools not on the menu); the rest of the run follows the tools' dependency order, so the run still ends with a report."
                    ));
                }
            }
            continue;
        }
        refused_in_a_row = 0;
        // 8–9. The approval gate (step by step), then run it, and recover once if it failed.
        let Some(status) = run_gated(
            ctx,
            registry,
            options.mode,
            (&name, &reason, by),
            StepKind::Next,
        ) else {
            plan.clear();
            if ctx.cancelled() {
                return end(ctx, Ended::Stopped);
            }
            emit_route(ctx, registry, finish);
            continue;
        };
        if status != StepStatus::Ok {
            plan.clear();
        }
        if status == StepStatus::Failed
            && options.recovery
            && let Some(d) = decider.as_deref_mut()
        {
            let notes = take_notes(ctx, options);
            let applied = recover(ctx, registry, d, (&name, options.mode), &notes);
            notes_read_by_recovery(ctx, &notes, applied);
        }
        if let Some(hook) = &options.on_result {
            hook(ctx);
        }
        if status == StepStatus::Interrupted || ctx.cancelled() {
            return end(ctx, Ended::Stopped);
        }
        // 10. The route as things stand.
        emit_route(ctx, registry, finish);
    }
    end(ctx, Ended::StepLimit)
}

fn emit_route(ctx: &RunContext, registry: &Registry, finish: &str) {
    let ahead = route_ahead(ctx, registry, finish, 12);
    ctx.events.emit(&Event::Route {
        step: ctx.steps.len(),
        ahead,
    });
}

fn end(ctx: &mut RunContext, ended: Ended) -> Ended {
    ctx.ended = Some(ended);
    ended
}

/// [`run_controller`] with the route announced first and the loop's own errors caught: a
/// panic in the loop (not in a tool — tools are already contained) becomes a note and the run
/// resumes, at most [`MAX_LOOP_ERRORS`] times, then ends as `broke`.
pub fn drive(
    ctx: &mut RunContext,
    registry: &Registry,
    mut decider: Option<&mut (dyn Decide + '_)>,
    options: &RunOptions,
) -> Ended {
    emit_route(ctx, registry, &options.finish);
    let mut errors = 0;
    loop {
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run_controller(ctx, registry, decider.as_deref_mut(), options)
        }));
        match outcome {
            Ok(ended) => return ended,
            Err(panic) => {
                errors += 1;
                let msg = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "unknown error".into());
                // A step left open by the failure is closed as interrupted: it may have run.
                if ctx.open_step().is_some() {
                    ctx.finish(
                        "",
                        StepStatus::Interrupted,
                        "the run's own code failed while this step was open; it may have run, or run partly",
                    );
                    emit_finished(ctx);
                }
                ctx.note(&format!(
                    "The run's own loop failed ({msg}); it was picked up again."
                ));
                if errors > MAX_LOOP_ERRORS {
                    return end(ctx, Ended::Broke);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::decide::{DecideError, ScriptedDecider};
    use crate::runtime::events::collect;
    use crate::runtime::interaction::{Interaction, Scripted};
    use crate::runtime::product::JsonProduct;
    use crate::runtime::tool::{Outputs, ToolResult};
    use serde_json::Map;
    use std::sync::Mutex;

    fn make(
        key: &'static str,
        summary: &'static str,
    ) -> impl Fn(&mut RunContext) -> ToolResult + Send + Sync {
        move |_| {
            Ok((
                summary.to_string(),
                Outputs::new().with(key, JsonProduct::new(summary, Value::Null)),
            ))
        }
    }

    fn chain() -> Registry {
        let mut reg = Registry::new();
        reg.register(
            Tool::new("load", "Load.", make("data", "Loaded 3 files."))
                .produces(&["data"])
                .label("Load data"),
        )
        .unwrap();
        reg.register(
            Tool::new("invert", "Invert.", make("model", "Converged."))
                .requires(&["data"])
                .produces(&["model"])
                .label("Invert")
                .adjusts(&["fit_params"]),
        )
        .unwrap();
        reg.register(
            Tool::new("other", "Other.", make("extra", "Extra."))
                .requires(&["data"])
                .produces(&["extra"]),
        )
        .unwrap();
        reg.register(
            Tool::new("report", "Report.", make("report_files", "Wrote it."))
                .requires(&["model"])
                .produces(&["report_files"])
                .label("Write the report"),
        )
        .unwrap();
        reg
    }

    fn tools_of(ctx: &RunContext) -> Vec<String> {
        ctx.steps.iter().map(|s| s.tool.clone()).collect()
    }

    #[test]
    fn run_controller_load_then_report_without_a_model() {
        // Seed 001, run_controller example.
        let mut reg = Registry::new();
        reg.register(
            Tool::new("load", "Load.", make("data", "Loaded 3 files.")).produces(&["data"]),
        )
        .unwrap();
        reg.register(
            Tool::new("report", "Report.", |_| {
                Ok(("Wrote it.".into(), Outputs::new()))
            })
            .requires(&["data"]),
        )
        .unwrap();
        let mut ctx = RunContext::new("process my data");
        let ended = run_controller(&mut ctx, &reg, None, &RunOptions::default());
        assert_eq!(tools_of(&ctx), vec!["load", "report"]);
        assert_eq!(ctx.steps[0].summary, "Loaded 3 files.");
        assert_eq!(ended, Ended::Exhausted);
    }

    #[test]
    fn forced_choice_only_when_one_tool_and_no_report() {
        // Seed 001, forced_choice example.
        let mut only = Registry::new();
        only.register(Tool::new("load", "Load.", make("data", "x")).produces(&["data"]))
            .unwrap();
        let d = forced_choice(&RunContext::new("x"), &only, DEFAULT_FINISH).unwrap();
        assert_eq!(
            d,
            Decision::tool("load", "only one action was available: load")
        );
        let mut ctx = RunContext::new("x");
        ctx.put_value("report_files", JsonProduct::new("r.md", Value::Null));
        assert!(forced_choice(&ctx, &only, DEFAULT_FINISH).is_none());
    }

    #[test]
    fn next_by_policy_takes_the_first_runnable() {
        // Seed 001, next_by_policy example.
        let mut reg = Registry::new();
        reg.register(Tool::new("first", "One.", make("a", "x")).produces(&["a"]))
            .unwrap();
        reg.register(
            Tool::new("second", "Two.", |_| Ok((String::new(), Outputs::new()))).requires(&["a"]),
        )
        .unwrap();
        let mut ctx = RunContext::new("x");
        assert_eq!(next_by_policy(&ctx, &reg).unwrap().name, "first");
        ctx.put_value("a", JsonProduct::new("a", Value::Null));
        ctx.begin("first", "");
        ctx.finish("", StepStatus::Ok, "");
        assert_eq!(next_by_policy(&ctx, &reg).unwrap().name, "second");
    }

    #[test]
    fn route_ahead_projects_products() {
        // Seed 001, route_ahead example.
        let mut reg = Registry::new();
        reg.register(
            Tool::new("load", "Load.", make("data", "x"))
                .produces(&["data"])
                .label("Load data"),
        )
        .unwrap();
        reg.register(
            Tool::new("report", "Report.", |_| Ok((String::new(), Outputs::new())))
                .requires(&["data"])
                .produces(&["report_files"])
                .label("Write the report"),
        )
        .unwrap();
        let labels: Vec<String> = route_ahead(&RunContext::new("x"), &reg, DEFAULT_FINISH, 12)
            .into_iter()
            .map(|s| s.label)
            .collect();
        assert_eq!(labels, vec!["Load data", "Write the report"]);
        let mut ctx = RunContext::new("x");
        ctx.put_value("data", JsonProduct::new("d", Value::Null));
        ctx.begin("load", "");
        ctx.finish("", StepStatus::Ok, "");
        let tools: Vec<String> = route_ahead(&ctx, &reg, DEFAULT_FINISH, 12)
            .into_iter()
            .map(|s| s.tool)
            .collect();
        assert_eq!(tools, vec!["report"]);
    }

    #[test]
    fn drive_emits_route_start_done_route() {
        // Seed 001, drive example.
        let mut reg = Registry::new();
        reg.register(Tool::new("load", "Load.", make("data", "Loaded.")).produces(&["data"]))
            .unwrap();
        reg.register(
            Tool::new("summarise", "Summarise.", make("summary", "Done."))
                .requires(&["data"])
                .produces(&["summary"]),
        )
        .unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut ctx = RunContext::new("goal");
        ctx.events.subscribe(collect(seen.clone()));
        let opts = RunOptions {
            finish: "summary".into(),
            ..Default::default()
        };
        drive(&mut ctx, &reg, None, &opts);
        assert_eq!(tools_of(&ctx), vec!["load", "summarise"]);
        let seen = seen.lock().unwrap();
        let kinds: Vec<(String, String)> = seen
            .iter()
            .take(4)
            .map(|e| match e {
                Event::Route { .. } => ("route".into(), String::new()),
                Event::StepStarted { tool, .. } => ("start".into(), tool.clone()),
                Event::StepFinished { tool, .. } => ("done".into(), tool.clone()),
                other => (format!("{other:?}"), String::new()),
            })
            .collect();
        assert_eq!(
            kinds,
            vec![
                ("route".to_string(), String::new()),
                ("start".into(), "load".into()),
                ("done".into(), "load".into()),
                ("route".into(), String::new())
            ]
        );
        let Event::Route { ahead, .. } = &seen[0] else {
            panic!()
        };
        assert_eq!(
            ahead.iter().map(|s| s.tool.as_str()).collect::<Vec<_>>(),
            vec!["load", "summarise"]
        );
        let Event::Route { ahead, .. } = &seen[3] else {
            panic!()
        };
        assert_eq!(ahead[0].tool, "summarise");
    }

    #[test]
    fn a_model_that_answers_garbage_falls_back_with_a_note() {
        let reg = chain();
        let mut d = ScriptedDecider::new(vec![Err(DecideError::Unusable(
            "the reply was prose".into(),
        ))]);
        let mut ctx = RunContext::new("goal");
        run_controller(&mut ctx, &reg, Some(&mut d), &RunOptions::default());
        // load was forced; the first real question (invert or other) got garbage.
        assert_eq!(ctx.steps[1].tool, "invert");
        assert_eq!(ctx.steps[1].reason, "next available step");
        assert!(
            ctx.warnings
                .iter()
                .any(|w| w.contains("could not get a usable decision") && w.contains("prose"))
        );
        assert!(ctx.has(&["report_files"]));
    }

    #[test]
    fn a_tool_not_on_the_menu_is_a_blocked_step_and_the_loop_goes_on() {
        let reg = chain();
        let mut d = ScriptedDecider::new(vec![
            Ok(Decision::tool("report", "write it now")),
            Ok(Decision::tool("invert", "the data are loaded")),
            Ok(Decision::tool("report", "the model exists")),
            Ok(Decision::done("report written")),
        ]);
        let mut ctx = RunContext::new("goal");
        let ended = run_controller(&mut ctx, &reg, Some(&mut d), &RunOptions::default());
        assert_eq!(tools_of(&ctx), vec!["load", "report", "invert", "report"]);
        assert_eq!(ctx.steps[1].status, StepStatus::Blocked);
        assert!(
            ctx.steps[1]
                .error
                .starts_with("Not offered, so not run: it needs model"),
            "{}",
            ctx.steps[1].error
        );
        assert!(ctx.steps[1].error.contains("Choose one of: invert, other."));
        assert_eq!(ended, Ended::Finished);
    }

    #[test]
    fn done_before_the_report_is_refused() {
        let reg = chain();
        let mut d = ScriptedDecider::new(vec![
            Ok(Decision::done("looks finished")),
            Ok(Decision::done("now")),
        ]);
        let mut ctx = RunContext::new("goal");
        run_controller(&mut ctx, &reg, Some(&mut d), &RunOptions::default());
        assert_eq!(ctx.steps[1].tool, "invert");
        assert!(
            ctx.steps[1]
                .reason
                .contains("answered 'done' before a report")
        );
        assert!(ctx.has(&["report_files"]));
    }

    /// Issue 19: a model that only ever names tools that are not on the menu is asked
    /// MAX_REFUSED_CHOICES times, then the run follows dependency order to its report.
    #[test]
    fn a_model_refused_three_times_in_a_row_hands_over_to_dependency_order() {
        let reg = chain();
        let answers = (0..40)
            .map(|_| Ok(Decision::tool("report_files", "the artifact, not a tool")))
            .collect();
        let mut d = ScriptedDecider::new(answers);
        let mut ctx = RunContext::new("goal");
        let ended = run_controller(&mut ctx, &reg, Some(&mut d), &RunOptions::default());
        assert_eq!(ended, Ended::Finished);
        let refused = ctx
            .steps
            .iter()
            .filter(|s| s.status == StepStatus::Skipped)
            .count();
        assert_eq!(refused, MAX_REFUSED_CHOICES);
        assert!(ctx.has(&["report_files"]));
        assert!(
            ctx.warnings
                .iter()
                .any(|n| n.contains("follows the tools' dependency order")),
        );
    }

    #[test]
    fn max_steps_ends_with_step_limit() {
        let reg = chain();
        let mut ctx = RunContext::new("goal");
        let ended = run_controller(
            &mut ctx,
            &reg,
            None,
            &RunOptions {
                max_steps: 2,
                ..Default::default()
            },
        );
        assert_eq!(ended, Ended::StepLimit);
        assert_eq!(ctx.steps.len(), 2);
    }

    #[test]
    fn step_by_step_skip_and_stop() {
        let reg = chain();
        let answers = Arc::new(Mutex::new(vec![
            Verdict::Stop,
            Verdict::Skip,
            Verdict::Proceed,
        ]));
        let a2 = answers.clone();
        let mut ctx = RunContext::new("goal").with_interaction(Arc::new(Scripted {
            approve: Box::new(move |_| a2.lock().unwrap().pop()),
            ..Default::default()
        }));
        let opts = RunOptions {
            mode: Mode::StepByStep,
            ..Default::default()
        };
        let ended = run_controller(&mut ctx, &reg, None, &opts);
        assert_eq!(ended, Ended::Stopped);
        let s: Vec<(String, StepStatus)> = ctx
            .steps
            .iter()
            .map(|s| (s.tool.clone(), s.status))
            .collect();
        assert_eq!(
            s,
            vec![
                ("load".to_string(), StepStatus::Ok),
                ("invert".to_string(), StepStatus::Skipped),
                ("other".to_string(), StepStatus::Skipped),
            ]
        );
        assert_eq!(ctx.steps[1].error, "Skipped at the user's request.");
        assert!(ctx.steps[2].error.contains("Stopped"));
    }

    #[test]
    fn step_by_step_with_nobody_there_stops_and_never_proceeds() {
        let reg = chain();
        let mut ctx = RunContext::new("goal");
        let ended = run_controller(
            &mut ctx,
            &reg,
            None,
            &RunOptions {
                mode: Mode::StepByStep,
                ..Default::default()
            },
        );
        assert_eq!(ended, Ended::Stopped);
        assert!(ctx.steps.iter().all(|s| s.status != StepStatus::Ok));
        // Issue 17: nobody's silence is not the user's choice.
        assert_eq!(ctx.approvals[0].by, AnsweredBy::NobodyAsked);
        let last = ctx.steps.last().unwrap();
        assert!(last.error.contains("nobody_asked"), "{}", last.error);
        assert!(!last.error.contains("user's request"), "{}", last.error);
    }

    /// A window that closed with every request open.
    struct Closed;

    impl Interaction for Closed {
        fn approve(&self, _: &crate::runtime::interaction::ApprovalRequest) -> Option<Verdict> {
            None
        }
        fn ask(&self, _: &crate::runtime::interaction::QuestionRequest) -> Option<String> {
            None
        }
        fn review_script(
            &self,
            _: &crate::runtime::interaction::ScriptRequest,
        ) -> Option<crate::runtime::interaction::ScriptAnswer> {
            None
        }
        fn absent(&self) -> AnsweredBy {
            AnsweredBy::ClosedWithoutAnswer
        }
    }

    #[test]
    fn an_approval_closed_with_the_window_is_recorded_as_closed_without_answer() {
        let reg = chain();
        let mut ctx = RunContext::new("goal").with_interaction(Arc::new(Closed));
        let seen = Arc::new(Mutex::new(Vec::new()));
        ctx.events.subscribe(collect(seen.clone()));
        let ended = run_controller(
            &mut ctx,
            &reg,
            None,
            &RunOptions {
                mode: Mode::StepByStep,
                ..Default::default()
            },
        );
        assert_eq!(ended, Ended::Stopped);
        assert_eq!(ctx.approvals[0].by, AnsweredBy::ClosedWithoutAnswer);
        assert!(ctx.steps[0].error.contains("closed_without_answer"));
        let answered = seen.lock().unwrap().iter().any(|e| {
            matches!(
                e,
                Event::Answered {
                    by: AnsweredBy::ClosedWithoutAnswer,
                    ..
                }
            )
        });
        assert!(answered, "the journal's event says who answered");
    }

    #[test]
    fn a_failing_approval_gate_is_stop() {
        let reg = chain();
        let mut ctx = RunContext::new("goal").with_interaction(Arc::new(Scripted {
            approve: Box::new(|_| panic!("dialog broke")),
            ..Default::default()
        }));
        let ended = run_controller(
            &mut ctx,
            &reg,
            None,
            &RunOptions {
                mode: Mode::StepByStep,
                ..Default::default()
            },
        );
        assert_eq!(ended, Ended::Stopped);
        assert!(ctx.steps.iter().all(|s| s.status != StepStatus::Ok));
    }

    #[test]
    fn a_note_without_a_model_is_answered_with_a_warning() {
        let reg = chain();
        let steer = Steering::new();
        steer.say("use lambda 5");
        let mut ctx = RunContext::new("goal");
        run_controller(
            &mut ctx,
            &reg,
            None,
            &RunOptions {
                steering: Some(steer),
                ..Default::default()
            },
        );
        assert_eq!(ctx.guidance, vec!["use lambda 5".to_string()]);
        assert!(
            ctx.warnings
                .iter()
                .any(|w| w.contains("no model to read notes"))
        );
    }

    #[test]
    fn a_note_changes_an_allowed_setting_and_refuses_a_path() {
        let reg = chain();
        let steer = Steering::new();
        steer.say("use lambda 5 and read other.dat instead");
        let mut settings = Map::new();
        settings.insert("fit_params".into(), serde_json::json!({"lambda": 5}));
        settings.insert("data_file".into(), Value::from("other.dat"));
        let mut d = ScriptedDecider::new(vec![
            Ok(Decision {
                why: "following the note".into(),
                choice: Choice::Tool("load".into()),
                settings,
                then: Vec::new(),
            }),
            Ok(Decision::tool("invert", "")),
            Ok(Decision::tool("report", "")),
            Ok(Decision::done("")),
        ]);
        let cfg = serde_json::json!({"fit_params": {"lambda": 20}, "data_file": "a.dat"});
        let mut ctx = RunContext::new("goal").with_config(cfg.as_object().cloned().unwrap());
        run_controller(
            &mut ctx,
            &reg,
            Some(&mut d),
            &RunOptions {
                steering: Some(steer),
                ..Default::default()
            },
        );
        assert_eq!(ctx.config["fit_params"], serde_json::json!({"lambda": 5}));
        assert_eq!(
            ctx.input_roles()["data_file"],
            vec![std::path::PathBuf::from("a.dat")]
        );
        assert!(
            ctx.warnings
                .iter()
                .any(|w| w.starts_with("Changed at the user's request: fit_params"))
        );
        assert!(
            ctx.warnings
                .iter()
                .any(|w| w.contains("data_file names an input file"))
        );
        // The note reached the decision: the first request carried it.
        assert_eq!(
            d.seen[0].notes,
            vec!["use lambda 5 and read other.dat instead".to_string()]
        );
    }

    #[test]
    fn pause_from_another_thread_holds_the_next_step() {
        let mut reg = Registry::new();
        reg.register(
            Tool::new("slow", "Slow.", |_| {
                std::thread::sleep(Duration::from_millis(150));
                Ok((
                    "slept".into(),
                    Outputs::new().with("a", JsonProduct::new("a", Value::Null)),
                ))
            })
            .produces(&["a"]),
        )
        .unwrap();
        reg.register(
            Tool::new("next", "Next.", make("report_files", "r"))
                .requires(&["a"])
                .produces(&["report_files"]),
        )
        .unwrap();
        let steer = Steering::new();
        let s2 = steer.clone();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut ctx = RunContext::new("goal");
        ctx.events.subscribe(collect(seen.clone()));
        let handle = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            s2.pause();
            std::thread::sleep(Duration::from_millis(300));
            s2.resume();
        });
        run_controller(
            &mut ctx,
            &reg,
            None,
            &RunOptions {
                steering: Some(steer),
                ..Default::default()
            },
        );
        handle.join().unwrap();
        let order: Vec<&str> = seen
            .lock()
            .unwrap()
            .iter()
            .filter_map(|e| match e {
                Event::StepFinished { .. } => Some("done"),
                Event::Paused { .. } => Some("paused"),
                Event::Resumed { .. } => Some("resumed"),
                Event::StepStarted { .. } => Some("start"),
                _ => None,
            })
            .collect();
        assert_eq!(
            order,
            vec!["start", "done", "paused", "resumed", "start", "done"]
        );
    }

    #[test]
    fn recovery_retries_once_with_an_allowed_change() {
        let mut reg = Registry::new();
        reg.register(
            Tool::new("invert", "Invert.", |ctx| {
                let lam = ctx.config["fit_params"]["lambda"].as_f64().unwrap_or(0.0);
                if lam > 10.0 {
                    anyhow::bail!("diverged at lambda {lam}")
                }
                Ok((
                    "converged".into(),
                    Outputs::new().with("report_files", JsonProduct::new("m", Value::Null)),
                ))
            })
            .produces(&["report_files"])
            .label("Run the inversion")
            .adjusts(&["fit_params"]),
        )
        .unwrap();
        let mut d = ScriptedDecider::default();
        d.diagnoses.push_back(Ok(crate::runtime::decide::Diagnosis {
            cause: "too smooth".into(),
            action: "retry".into(),
            changes: serde_json::json!({"fit_params": {"lambda": 5}})
                .as_object()
                .cloned()
                .unwrap(),
            why: "less smoothing".into(),
            ..Default::default()
        }));
        let cfg = serde_json::json!({"fit_params": {"lambda": 15}});
        let mut ctx = RunContext::new("goal").with_config(cfg.as_object().cloned().unwrap());
        run_controller(&mut ctx, &reg, Some(&mut d), &RunOptions::default());
        assert_eq!(ctx.steps.len(), 2);
        assert_eq!(ctx.steps[0].status, StepStatus::Failed);
        assert_eq!(ctx.steps[1].status, StepStatus::Ok);
        assert_eq!(ctx.steps[1].decided_by, DecidedBy::Recovery);
        assert!(ctx.warnings.iter().any(|w| w
            == "Run the inversion failed (diverged at lambda 15). Diagnosis: too smooth. Retried with fit_params: {\"lambda\":15} -> {\"lambda\":5}, which worked."));
        assert_eq!(ctx.setting_changes[0].by, "recovery");
    }

    #[test]
    fn the_recovery_limit_holds_when_the_loop_is_picked_up_again() {
        // Seed 000, MAX_RECOVERIES "carried across a run": the count lives in the run, not in
        // one pass of the loop, so a loop restarted after its own error recovers no tool twice.
        let mut reg = Registry::new();
        reg.register(
            Tool::new("invert", "Invert.", |_| anyhow::bail!("diverged"))
                .produces(&["report_files"])
                .adjusts(&["fit_params"]),
        )
        .unwrap();
        let retry = |lam: i64| {
            Ok(crate::runtime::decide::Diagnosis {
                cause: "too smooth".into(),
                action: "retry".into(),
                changes: serde_json::json!({"fit_params": {"lambda": lam}})
                    .as_object()
                    .cloned()
                    .unwrap(),
                ..Default::default()
            })
        };
        let mut d = ScriptedDecider::default();
        d.diagnoses.push_back(retry(5));
        d.diagnoses.push_back(retry(3));
        let cfg = serde_json::json!({"fit_params": {"lambda": 15}});
        let mut ctx = RunContext::new("goal").with_config(cfg.as_object().cloned().unwrap());
        run_controller(&mut ctx, &reg, Some(&mut d), &RunOptions::default());
        assert_eq!(d.diagnoses.len(), 1, "one recovery in the first pass");
        let attempts = ctx.steps.len();
        // The loop is picked up again (as `drive` does after an internal error).
        ctx.reopen(&["invert"]);
        run_controller(&mut ctx, &reg, Some(&mut d), &RunOptions::default());
        assert!(ctx.steps.len() > attempts, "the tool ran again and failed");
        assert_eq!(d.diagnoses.len(), 1, "no second recovery after the restart");
        assert_eq!(ctx.recoveries_spent.get("invert"), Some(&1));
    }

    #[test]
    fn a_coordinate_table_in_an_odd_layout_is_read_by_an_approved_generated_reader() {
        if crate::runtime::scratch::python().is_none() {
            return eprintln!("skipping: no python3");
        }
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(
            tmp.path().join("el.txt"),
            "electrode;x;z\n1;0,0;100,0\n2;1,0;100,5\n",
        )
        .unwrap();
        let mut reg = Registry::new();
        reg.register(
            Tool::new("load_stations", "Load.", |ctx| {
                let p = ctx.input_path("station_file").unwrap();
                let text = std::fs::read_to_string(&p)?;
                let rows: Vec<Vec<f64>> = text
                    .lines()
                    .map(|l| {
                        l.split_whitespace()
                            .map(|v| v.parse::<f64>())
                            .collect::<Result<Vec<_>, _>>()
                    })
                    .collect::<Result<_, _>>()
                    .map_err(|e| anyhow::anyhow!("{}: expected numbers, found {e}", p.display()))?;
                Ok((
                    format!("{} stations", rows.len()),
                    Outputs::new().with("report_files", JsonProduct::new("x", Value::Null)),
                ))
            })
            .produces(&["report_files"])
            .label("Load the stations")
            .adapts(
                "station_file",
                3,
                "3 columns: number (index), x (m), elevation (m)",
            ),
        )
        .unwrap();
        let mut d = ScriptedDecider::default();
        d.diagnoses.push_back(Ok(crate::runtime::decide::Diagnosis {
            cause: "the table uses semicolons and decimal commas".into(),
            action: "adapt".into(),
            file_key: "station_file".into(),
            ..Default::default()
        }));
        d.code.push_back(Ok(crate::runtime::decide::CodeProposal {
            purpose: "Splits on semicolons and reads decimal commas.".into(),
            code: "def adapt(text):\n    rows = []\n    for line in text.splitlines()[1:]:\n        a, b, c = line.split(';')\n        rows.append([float(a), float(b.replace(',', '.')), float(c.replace(',', '.'))])\n    return rows\n".into(),
        }));
        let out = tmp.path().join("run");
        std::fs::create_dir_all(&out).unwrap();
        let inputs = serde_json::json!({"station_file": "el.txt"});
        let mut ctx = RunContext::new("goal")
            .with_inputs(inputs.as_object().unwrap(), tmp.path())
            .with_output_dir(&out)
            .with_interaction(Arc::new(Scripted {
                review: Box::new(|r| {
                    assert_eq!(r.language, "python-adapter");
                    Some(crate::runtime::interaction::ScriptAnswer {
                        run: true,
                        edited_source: None,
                    })
                }),
                ..Default::default()
            }));
        run_controller(&mut ctx, &reg, Some(&mut d), &RunOptions::default());
        let s: Vec<(String, StepStatus)> = ctx
            .steps
            .iter()
            .map(|s| (s.tool.clone(), s.status))
            .collect();
        assert_eq!(
            s,
            vec![
                ("load_stations".to_string(), StepStatus::Failed),
                ("load_stations".to_string(), StepStatus::Ok)
            ]
        );
        assert_eq!(ctx.steps[1].summary, "2 stations");
        assert!(ctx.warnings.iter().any(|w| {
            w.contains("A generated reader you approved rewrote station_file")
                && w.contains("which worked")
        }));
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("el.txt")).unwrap(),
            "electrode;x;z\n1;0,0;100,0\n2;1,0;100,5\n"
        );
        assert_eq!(ctx.scripts[0].kind, "reader");
    }

    #[test]
    fn flexible_mode_looks_proposes_and_the_user_decides() {
        let mut reg = chain();
        reg.register(
            Tool::new(
                "climate",
                "Fetch weather.",
                make("climate", "Rain on 3 days."),
            )
            .produces(&["climate"])
            .when(|_| false),
        )
        .unwrap();
        let mut d = ScriptedDecider::new(vec![
            Ok(Decision::tool("load", "first")),
            Ok(Decision {
                why: "check the data".into(),
                choice: Choice::Inspect("data".into()),
                settings: Map::new(),
                then: Vec::new(),
            }),
            Ok(Decision {
                why: "rain explains the change".into(),
                choice: Choice::Propose(crate::runtime::decide::Proposal::Extra {
                    tool: "climate".into(),
                }),
                settings: Map::new(),
                then: Vec::new(),
            }),
            Ok(Decision {
                why: "not needed".into(),
                choice: Choice::Propose(crate::runtime::decide::Proposal::Skip {
                    tools: vec!["other".into()],
                }),
                settings: Map::new(),
                then: Vec::new(),
            }),
            Ok(Decision::tool("invert", "next")),
            Ok(Decision::done("finished too early")),
        ]);
        let answers = Arc::new(Mutex::new(vec!["stay".to_string(), "go".to_string()]));
        let a2 = answers.clone();
        let mut ctx = RunContext::new("goal").with_interaction(Arc::new(Scripted {
            ask: Box::new(move |_| a2.lock().unwrap().pop()),
            ..Default::default()
        }));
        let opts = RunOptions {
            flexible: true,
            ..Default::default()
        };
        run_controller(&mut ctx, &reg, Some(&mut d), &opts);
        let steps: Vec<(String, StepStatus)> = ctx
            .steps
            .iter()
            .map(|s| (s.tool.clone(), s.status))
            .collect();
        assert_eq!(
            steps,
            vec![
                ("load".to_string(), StepStatus::Ok),
                ("inspect".to_string(), StepStatus::Ok),
                ("climate".to_string(), StepStatus::Ok),
                ("invert".to_string(), StepStatus::Ok),
                ("other".to_string(), StepStatus::Ok),
                ("report".to_string(), StepStatus::Ok),
            ]
        );
        assert!(
            ctx.steps[1].summary.starts_with("data: "),
            "the look is in the transcript"
        );
        // Once a product existed the request carried the toolbox with the look offered.
        assert!(
            d.seen[1]
                .toolbox
                .as_ref()
                .unwrap()
                .contains("Look at a product")
        );
        assert!(
            d.seen[1]
                .toolbox
                .as_ref()
                .unwrap()
                .contains("climate (Fetch weather.)")
        );
        assert_eq!(ctx.proposals.len(), 2);
        assert!(ctx.proposals[0].accepted, "climate accepted");
        assert!(!ctx.proposals[1].accepted, "leaving out 'other' declined");
        assert!(ctx.run_notes.iter().any(|g| g.contains("kept those steps")));
    }

    fn planned(tool: &str, then: &[&str]) -> Result<Decision, DecideError> {
        Ok(Decision {
            then: then.iter().map(|t| t.to_string()).collect(),
            ..Decision::tool(tool, "the data are in")
        })
    }

    fn flexible() -> RunOptions {
        RunOptions {
            flexible: true,
            ..Default::default()
        }
    }

    #[test]
    fn a_models_plan_is_followed_without_asking_it_again() {
        // Seed 001 `_follow_plan`: three planned steps, one request for all of them.
        let reg = chain();
        let mut d = ScriptedDecider::new(vec![
            planned("load", &["invert", "other", "report"]),
            Ok(Decision::done("the report answers it")),
        ]);
        let mut ctx = RunContext::new("goal");
        let ended = run_controller(&mut ctx, &reg, Some(&mut d), &flexible());
        assert_eq!(ended, Ended::Finished);
        let tools: Vec<&str> = ctx.steps.iter().map(|s| s.tool.as_str()).collect();
        assert_eq!(tools, ["load", "invert", "other", "report"]);
        assert_eq!(d.seen.len(), 2, "one request for the plan, one for done");
        assert!(
            ctx.steps[1]
                .reason
                .starts_with("planned by the model at step 1 (the data are in)"),
            "{}",
            ctx.steps[1].reason
        );
    }

    #[test]
    fn a_plan_whose_next_step_is_not_on_the_menu_is_dropped_and_the_model_asked() {
        let reg = chain();
        let mut d = ScriptedDecider::new(vec![
            planned("load", &["report", "invert"]),
            Ok(Decision::tool("invert", "now the model")),
            Ok(Decision::tool("report", "then the report")),
            Ok(Decision::done("done")),
        ]);
        let mut ctx = RunContext::new("goal");
        run_controller(&mut ctx, &reg, Some(&mut d), &flexible());
        let tools: Vec<&str> = ctx.steps.iter().map(|s| s.tool.as_str()).collect();
        assert_eq!(tools, ["load", "invert", "report"], "nothing refused");
        assert_eq!(d.seen.len(), 4);
    }

    #[test]
    fn without_flexible_mode_a_plan_is_ignored() {
        let reg = chain();
        let mut d = ScriptedDecider::new(vec![
            planned("load", &["invert", "report"]),
            Ok(Decision::tool("invert", "")),
            Ok(Decision::tool("report", "")),
            Ok(Decision::done("")),
        ]);
        let mut ctx = RunContext::new("goal");
        run_controller(&mut ctx, &reg, Some(&mut d), &RunOptions::default());
        assert!(d.seen.len() >= 3, "asked at every choice: {}", d.seen.len());
    }

    #[test]
    fn no_model_no_diagnosis() {
        let mut reg = Registry::new();
        reg.register(
            Tool::new("invert", "Invert.", |_| anyhow::bail!("diverged")).produces(&["m"]),
        )
        .unwrap();
        let mut ctx = RunContext::new("goal");
        run_controller(&mut ctx, &reg, None, &RunOptions::default());
        assert_eq!(ctx.steps.len(), 1);
        assert_eq!(ctx.steps[0].status, StepStatus::Failed);
    }
}
