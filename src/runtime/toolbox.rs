//! Flexible mode: what the controller may do besides the next step on the standard route.
//!
//! * Read-only looks are free (at most [`MAX_INSPECTIONS`]): a product's numbers summarised
//!   into the transcript; nothing changes.
//! * Every other change of course is the user's decision, put to them with the model's reason:
//!   an extra tool the route did not schedule, a finished step run again with other settings
//!   (its downstream steps are reopened), a changed setting, leaving route steps out (never the
//!   report, never a step a requested product needs), a temporary script, a question.
//!   Staying on the route is the default — the answer when nobody is there.
//! * Bounded: at most [`MAX_PROPOSALS`] proposals a run, and a declined one is never offered
//!   again.

use serde_json::{Map, Value};

use super::context::{ProposalRecord, RunContext};
use super::decide::{CodeKind, Decide, Proposal};
use super::events::QuestionOption;
use super::recovery;
use super::step::{DecidedBy, StepStatus};
use super::tool::Registry;

/// Looks a run may take before it must act on what it has seen.
pub const MAX_INSPECTIONS: usize = 10;
/// Off-route proposals a run may put to the user.
pub const MAX_PROPOSALS: usize = 4;
/// Steps a flexible run may take (the route is about eight; the rest is room for looks, a
/// re-run and the steps after it).
pub const FLEXIBLE_MAX_STEPS: usize = 40;

/// Looks left.
pub fn looks_left(ctx: &RunContext) -> usize {
    MAX_INSPECTIONS.saturating_sub(
        ctx.steps
            .iter()
            .filter(|s| s.tool == "inspect" && s.status == StepStatus::Ok)
            .count(),
    )
}

/// Proposals left.
pub fn proposals_left(ctx: &RunContext) -> usize {
    MAX_PROPOSALS.saturating_sub(ctx.proposals.len())
}

/// Whether the proposal `key` was declined before.
pub fn declined(ctx: &RunContext, key: &str) -> bool {
    ctx.proposals.iter().any(|p| p.key == key && !p.accepted)
}

/// Tools whose inputs exist but which the route has not scheduled (gate closed, not tried,
/// proposable, and applicable to this run).
pub fn extra_tools<'a>(ctx: &RunContext, reg: &'a Registry) -> Vec<&'a super::tool::Tool> {
    reg.tools()
        .iter()
        .filter(|t| {
            t.proposable
                && t.missing(ctx).is_empty()
                && !t.gate_open(ctx)
                && ctx.attempted(&t.name) == 0
                && t.applies.as_ref().is_none_or(|a| a(ctx))
        })
        .collect()
}

/// Finished steps that could be run again with other settings: not the one that writes the
/// final product (it is run again by itself when a step before it is), not a loader (a step
/// that needs nothing reads the user's files, and no setting a proposal may change makes it
/// read them differently), and not one whose `applies` is false for this run.
pub fn redo_candidates<'a>(
    ctx: &RunContext,
    reg: &'a Registry,
    finish: &str,
) -> Vec<&'a super::tool::Tool> {
    reg.tools()
        .iter()
        .filter(|t| {
            ctx.ran(&t.name)
                && !t.requires.is_empty()
                && !t.produces.iter().any(|p| p == finish)
                && t.applies.as_ref().is_none_or(|a| a(ctx))
        })
        .collect()
}

/// The step bound of a flexible run: never below the plain run's, with room for every look and
/// every proposal on top of it, and at least [`FLEXIBLE_MAX_STEPS`].
pub fn flexible_max_steps(plain: usize) -> usize {
    (plain + MAX_INSPECTIONS + MAX_PROPOSALS).max(FLEXIBLE_MAX_STEPS)
}

/// Whether leaving `tool` out would lose the report or a product the request needs.
pub fn needed(reg: &Registry, tool: &str, finish: &str, protected: &[String]) -> bool {
    let Some(t) = reg.get(tool) else { return false };
    if t.produces
        .iter()
        .any(|p| p == finish || protected.contains(p))
    {
        return true;
    }
    reg.downstream(&t.produces)
        .iter()
        .filter_map(|n| reg.get(n))
        .any(|d| d.produces.iter().any(|p| protected.contains(p)))
}

/// The off-route actions as the decision prompt lists them.
pub fn toolbox_text(
    ctx: &RunContext,
    reg: &Registry,
    route: &[String],
    finish: &str,
    protected: &[String],
) -> String {
    let mut lines = Vec::new();
    let looks = looks_left(ctx);
    let products: Vec<String> = ctx
        .artifact_keys()
        .into_iter()
        .filter(|k| ctx.product(k).is_some())
        .collect();
    if looks > 0 && !products.is_empty() {
        lines.push(format!(
            "- Look at a product's numbers ({looks} looks left), read-only: {{\"why\": \"…\", \"inspect\": \"<one of: {}>\"}}",
            products.join(", ")
        ));
    }
    let left = proposals_left(ctx);
    if left > 0 {
        lines.push(format!(
            "Or propose one of these to the scientist ({left} proposals left; they decide, and staying on the route is the default):"
        ));
        let extras: Vec<String> = extra_tools(ctx, reg)
            .iter()
            .filter(|t| !declined(ctx, &format!("extra:{}", t.name)))
            .map(|t| format!("{} ({})", t.name, t.description))
            .collect();
        if !extras.is_empty() {
            lines.push(format!(
                "- an extra step the route has not scheduled: {{\"why\": \"…\", \"propose\": {{\"kind\": \"extra\", \"tool\": \"<one of: {}>\"}}}}",
                extras.join("; ")
            ));
        }
        let redos: Vec<String> = redo_candidates(ctx, reg, finish)
            .iter()
            .filter(|t| !declined(ctx, &format!("redo:{}", t.name)))
            .map(|t| t.name.clone())
            .collect();
        if !redos.is_empty() {
            lines.push(format!(
                "- run a finished step again with other settings (the steps after it run again too): {{\"why\": \"…\", \"propose\": {{\"kind\": \"redo\", \"tool\": \"<one of: {}>\", \"settings\": {{…}}}}}}",
                redos.join(", ")
            ));
        }
        lines.push("- change settings: {\"why\": \"…\", \"propose\": {\"kind\": \"settings\", \"changes\": {…}}}".into());
        let skippable: Vec<String> = route
            .iter()
            .filter(|t| !needed(reg, t, finish, protected) && ctx.attempted(t) == 0)
            .cloned()
            .collect();
        if !skippable.is_empty() {
            lines.push(format!(
                "- leave route steps out: {{\"why\": \"…\", \"propose\": {{\"kind\": \"skip\", \"tools\": [<from: {}>]}}}}",
                skippable.join(", ")
            ));
        }
        lines.push("- a short temporary Python script for something no step does (a scientist reads it before it runs): {\"why\": \"…\", \"propose\": {\"kind\": \"script\", \"task\": \"…\"}}".into());
        lines.push("- a question only the scientist can answer: {\"why\": \"…\", \"propose\": {\"kind\": \"question\", \"question\": \"…\", \"options\": [\"…\", \"…\"], \"recommend\": \"<the option taken when nobody answers>\"}}".into());
    }
    lines.join("\n")
}

/// Record a read-only look at `key` as a step; returns what it saw.
pub fn inspect(ctx: &mut RunContext, key: &str, why: &str) -> String {
    let step = ctx.begin("inspect", why);
    step.label = format!("Look at {key}");
    step.module = "project".into();
    step.decided_by = DecidedBy::Model;
    if looks_left(ctx) == 0 {
        ctx.finish(
            "",
            StepStatus::Blocked,
            &format!("No looks left: {MAX_INSPECTIONS} were taken; act on what was seen."),
        );
        return String::new();
    }
    match ctx.product(key).map(|p| p.inspect()) {
        Some(text) => {
            let text: String = text.chars().take(1600).collect();
            ctx.finish(&format!("{key}: {text}"), StepStatus::Ok, "");
            text
        }
        None => {
            let have: Vec<String> = ctx
                .artifact_keys()
                .into_iter()
                .filter(|k| ctx.product(k).is_some())
                .collect();
            // Nothing found is an answer with its coverage, not an error (seed 004).
            let why = super::absence::Absence::new(
                "a product of this run with the name asked for",
                [format!("the {} products this run has made", have.len())],
            )
            .map(|a| {
                a.not_checked(["products of earlier runs".to_string()])
                    .try_instead(format!("look at one of: {}", have.join(", ")))
                    .sentence()
            })
            .unwrap_or_else(|e| e.to_string());
            ctx.finish("", StepStatus::Blocked, &why);
            String::new()
        }
    }
}

/// What became of a proposal.
#[derive(Debug, Clone, PartialEq)]
pub enum Proposed {
    /// Accepted; the named tool should run next (extra or redo) with this reason.
    Run(String, String),
    /// Accepted and done here (settings, skip, script, question).
    Done,
    /// Declined, refused or impossible; the sentence says why.
    No(String),
}

fn put_to_user(ctx: &mut RunContext, key: &str, title: &str, why: &str, route_next: &str) -> bool {
    let question = format!("The assistant proposes: {title}. Its reason: {why}");
    let stay = if route_next.is_empty() {
        "Carry on with the route".to_string()
    } else {
        format!("Carry on with the route ({route_next})")
    };
    let answer = ctx.ask(
        &question,
        &[
            QuestionOption::new(
                "stay",
                &stay,
                "The proposal is dropped and not offered again.",
            ),
            QuestionOption::new(
                "go",
                "Do it",
                "The run does what is proposed, and the report says you agreed.",
            ),
        ],
        "stay",
    );
    let accepted = answer == "go";
    ctx.proposals.push(ProposalRecord {
        key: key.to_string(),
        title: title.to_string(),
        why: why.to_string(),
        accepted,
    });
    accepted
}

/// Where the run stands for a proposal: the finish artifact, the requested products, and the
/// label of the next step on the route.
#[derive(Debug, Clone, Copy)]
pub struct RouteView<'a> {
    /// The artifact that must exist before the run may finish.
    pub finish: &'a str,
    /// Artifacts the request asked for.
    pub protected: &'a [String],
    /// The next step's label (for "carry on with …").
    pub next: &'a str,
}

/// Handle a proposal: check it is possible and allowed, put it to the user, and carry out what
/// can be done here (one function per kind of proposal).
pub fn propose(
    ctx: &mut RunContext,
    reg: &Registry,
    decider: &mut dyn Decide,
    proposal: &Proposal,
    why: &str,
    view: RouteView<'_>,
) -> Proposed {
    if proposals_left(ctx) == 0 {
        return Proposed::No(format!(
            "No proposals left: {MAX_PROPOSALS} were made in this run."
        ));
    }
    match proposal {
        Proposal::Extra { tool } => propose_extra(ctx, reg, tool, why, view.next),
        Proposal::Redo { tool, settings } => propose_redo(ctx, reg, tool, settings, why, view),
        Proposal::Settings { changes } => propose_settings(ctx, changes, why, view.next),
        Proposal::Skip { tools } => propose_skip(ctx, reg, tools, why, view),
        Proposal::Script { task } => propose_script(ctx, decider, task, why),
        Proposal::Question {
            question,
            options,
            recommend,
        } => propose_question(ctx, question, options, recommend.as_deref(), why),
    }
}

/// Run a step whose inputs exist and that the route left out.
fn propose_extra(
    ctx: &mut RunContext,
    reg: &Registry,
    tool: &str,
    why: &str,
    route_next: &str,
) -> Proposed {
    let key = format!("extra:{tool}");
    if declined(ctx, &key) {
        return Proposed::No(format!(
            "Running {tool} was declined before; it is not offered again."
        ));
    }
    let Some(t) = extra_tools(ctx, reg).into_iter().find(|t| t.name == *tool) else {
        return Proposed::No(format!(
            "{tool} cannot be proposed: it is not a step whose inputs exist and that the route left out."
        ));
    };
    let title = format!("run {} ({})", t.display_label(), t.name);
    if put_to_user(ctx, &key, &title, why, route_next) {
        Proposed::Run(tool.to_string(), format!("proposed and accepted: {why}"))
    } else {
        Proposed::No(format!("The user kept to the route instead of {title}."))
    }
}

/// Run a finished step again, with settings recovery may change.
fn propose_redo(
    ctx: &mut RunContext,
    reg: &Registry,
    tool: &str,
    settings: &Map<String, Value>,
    why: &str,
    view: RouteView<'_>,
) -> Proposed {
    let (finish, route_next) = (view.finish, view.next);
    let key = format!("redo:{tool}");
    if declined(ctx, &key) {
        return Proposed::No(format!(
            "Running {tool} again was declined before; it is not offered again."
        ));
    }
    if !redo_candidates(ctx, reg, finish)
        .iter()
        .any(|t| t.name == *tool)
    {
        return Proposed::No(format!(
            "{tool} cannot be run again: it has not finished, or it writes the report."
        ));
    }
    let allowed = recovery::allowed_changes(ctx, settings);
    let change_text = if allowed.is_empty() {
        "the same settings".to_string()
    } else {
        Value::Object(allowed.clone()).to_string()
    };
    let title = format!("run {tool} again with {change_text}");
    if !put_to_user(ctx, &key, &title, why, route_next) {
        return Proposed::No(format!("The user kept the result of {tool}."));
    }
    let (applied, _) = recovery::apply_changes(ctx, &allowed, "proposal", why);
    let produced: Vec<String> = reg
        .get(tool)
        .map(|t| t.produces.clone())
        .unwrap_or_default();
    let mut reopen: Vec<String> = vec![tool.to_string()];
    reopen.extend(reg.downstream(&produced));
    let names: Vec<&str> = reopen.iter().map(String::as_str).collect();
    ctx.reopen(&names);
    if !applied.is_empty() {
        ctx.note(&format!(
            "Changed with the user's agreement: {}.",
            applied.join("; ")
        ));
    }
    Proposed::Run(
        tool.to_string(),
        format!("run again with the user's agreement: {why}"),
    )
}

/// Change adjustable settings (never a file).
fn propose_settings(
    ctx: &mut RunContext,
    changes: &Map<String, Value>,
    why: &str,
    route_next: &str,
) -> Proposed {
    let allowed = recovery::allowed_changes(ctx, changes);
    if allowed.is_empty() {
        return Proposed::No(
            "No allowed setting would change: only the adjustable settings may, and never a file."
                .into(),
        );
    }
    let key = format!(
        "settings:{}",
        allowed.keys().cloned().collect::<Vec<_>>().join(",")
    );
    if declined(ctx, &key) {
        return Proposed::No("That change of settings was declined before.".into());
    }
    let title = format!("change {}", Value::Object(allowed.clone()));
    if !put_to_user(ctx, &key, &title, why, route_next) {
        return Proposed::No("The user kept the settings.".into());
    }
    let (applied, _) = recovery::apply_changes(ctx, &allowed, "proposal", why);
    ctx.note(&format!(
        "Changed with the user's agreement: {}.",
        applied.join("; ")
    ));
    Proposed::Done
}

/// Leave out steps nothing requested needs.
fn propose_skip(
    ctx: &mut RunContext,
    reg: &Registry,
    tools: &[String],
    why: &str,
    view: RouteView<'_>,
) -> Proposed {
    let (finish, protected, route_next) = (view.finish, view.protected, view.next);
    let mut ok = Vec::new();
    for t in tools {
        if needed(reg, t, finish, protected) {
            return Proposed::No(format!(
                "{t} cannot be left out: the report or a product the request asked for needs it."
            ));
        }
        if reg.get(t).is_some() && ctx.attempted(t) == 0 {
            ok.push(t.clone());
        }
    }
    if ok.is_empty() {
        return Proposed::No("None of those steps can be left out.".into());
    }
    let key = format!("skip:{}", ok.join(","));
    if declined(ctx, &key) {
        return Proposed::No("Leaving those steps out was declined before.".into());
    }
    if !put_to_user(
        ctx,
        &key,
        &format!("leave out {}", ok.join(", ")),
        why,
        route_next,
    ) {
        return Proposed::No("The user kept those steps on the route.".into());
    }
    for t in ok {
        let step = ctx.begin(&t, why);
        step.decided_by = DecidedBy::User;
        if let Some(tool) = reg.get(&t) {
            step.label = tool.display_label().to_string();
            step.module = tool.module.clone();
        }
        ctx.finish(
            "",
            StepStatus::Skipped,
            &format!("Left out with the user's agreement: {why}"),
        );
    }
    Proposed::Done
}

/// A temporary script: the review dialog is the question.
fn propose_script(
    ctx: &mut RunContext,
    decider: &mut dyn Decide,
    task: &str,
    why: &str,
) -> Proposed {
    let key = format!("script:{}", task.chars().take(40).collect::<String>());
    if declined(ctx, &key) {
        return Proposed::No("That script was declined before.".into());
    }
    // The review dialog is the question: the person reads the code and decides.
    let offer = super::offers::offer_script(
        ctx,
        decider,
        CodeKind::Task,
        "",
        "",
        task,
        &format!("The assistant suggests a temporary script. Why: {why}"),
    );
    let accepted = matches!(
        offer,
        super::offers::Offer::Ran(_) | super::offers::Offer::Failed(_)
    );
    ctx.proposals.push(ProposalRecord {
        key,
        title: format!("a temporary script to {task}"),
        why: why.to_string(),
        accepted,
    });
    match offer {
        super::offers::Offer::Ran(r) => {
            ctx.run_notes.push(format!(
                "A temporary script ran ({task}) and returned {}.",
                r.result
            ));
            Proposed::Done
        }
        super::offers::Offer::Failed(r) => Proposed::No(format!(
            "The approved script failed: {}",
            super::offers::last_line(&r.error)
        )),
        super::offers::Offer::Declined(_) => Proposed::No("The script was declined.".into()),
        super::offers::Offer::NotOffered(w) => {
            Proposed::No(format!("No script could be offered: {w}."))
        }
    }
}

/// Put the model's question to the user and tell the model the answer.
/// Put the model's question to the user (seed 001, `ask_choice`): the recommended option is
/// the default — the answer when nobody is there — and the first when it names none.
fn propose_question(
    ctx: &mut RunContext,
    question: &str,
    options: &[String],
    recommend: Option<&str>,
    why: &str,
) -> Proposed {
    let key = format!("question:{}", question.chars().take(40).collect::<String>());
    if options.is_empty() {
        return Proposed::No("A question needs options.".into());
    }
    let recommended = recommend
        .map(str::trim)
        .and_then(|r| options.iter().position(|o| o.trim() == r))
        .unwrap_or(0);
    let opts: Vec<QuestionOption> = options
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let note = if i == recommended { "recommended" } else { "" };
            QuestionOption::new(&format!("o{i}"), o, note)
        })
        .collect();
    let answer = ctx.ask(question, &opts, &format!("o{recommended}"));
    let chosen = opts
        .iter()
        .find(|o| o.id == answer)
        .map(|o| o.label.clone())
        .unwrap_or_default();
    let by_default = ctx.questions.last().is_some_and(|q| !q.by.is_user());
    ctx.run_notes.push(format!(
        "You asked: {question} The user chose: {chosen}{}.",
        if by_default {
            " (the default; nobody answered)"
        } else {
            ""
        }
    ));
    ctx.proposals.push(ProposalRecord {
        key,
        title: format!("a question: {question}"),
        why: why.to_string(),
        accepted: !by_default,
    });
    Proposed::Done
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::decide::ScriptedDecider;
    use crate::runtime::interaction::Scripted;
    use crate::runtime::product::JsonProduct;
    use crate::runtime::tool::{Outputs, Tool, ToolResult};
    use std::sync::Arc;

    #[test]
    fn a_question_defaults_to_the_recommended_option() {
        // Seed 001, ask_choice: nobody answers, so the recommendation is taken and said to be
        // the default.
        let mut ctx = RunContext::new("x");
        let options = vec!["Archie".to_string(), "Waxman-Smits".to_string()];
        let q = "Archie or Waxman-Smits?";
        assert_eq!(
            propose_question(&mut ctx, q, &options, Some("Archie"), "which relation"),
            Proposed::Done
        );
        assert_eq!(
            ctx.run_notes.last().map(String::as_str),
            Some(
                "You asked: Archie or Waxman-Smits? The user chose: Archie (the default; nobody answered)."
            )
        );
        // The default is the recommendation, not always the first option.
        propose_question(&mut ctx, q, &options, Some("Waxman-Smits"), "clay");
        assert!(
            ctx.run_notes
                .last()
                .unwrap()
                .contains("The user chose: Waxman-Smits (the default")
        );
        assert_eq!(ctx.questions.last().unwrap().default, "o1");
        // A recommendation that names no option falls back to the first.
        propose_question(&mut ctx, q, &options, Some("Simandoux"), "");
        assert!(
            ctx.run_notes
                .last()
                .unwrap()
                .contains("The user chose: Archie (the default")
        );
    }

    fn noop(_: &mut RunContext) -> ToolResult {
        Ok((String::new(), Outputs::new()))
    }

    fn reg() -> Registry {
        let mut r = Registry::new();
        r.register(
            Tool::new("inv", "Invert.", noop)
                .produces(&["m"])
                .adjusts(&["fit_params"]),
        )
        .unwrap();
        r.register(
            Tool::new("ev", "Evaluate.", noop)
                .requires(&["m"])
                .produces(&["e"]),
        )
        .unwrap();
        r.register(
            Tool::new("wc", "Water content.", noop)
                .requires(&["e"])
                .produces(&["water_content"]),
        )
        .unwrap();
        r.register(Tool::new("climate", "Weather.", noop).when(|_| false))
            .unwrap();
        r.register(Tool::new("tem", "TEM.", noop).produces(&["t"]))
            .unwrap();
        r.register(Tool::new("rep", "Report.", noop).produces(&["report_files"]))
            .unwrap();
        r
    }

    #[test]
    fn extras_redos_and_what_may_be_left_out() {
        // Seed 001, toolbox examples.
        let r = reg();
        let ctx = RunContext::new("x");
        let extras: Vec<&str> = extra_tools(&ctx, &r)
            .iter()
            .map(|t| t.name.as_str())
            .collect();
        assert_eq!(extras, vec!["climate"]);
        let protected = vec!["water_content".to_string()];
        assert!(
            needed(&r, "inv", "report_files", &protected),
            "water content needs the inversion"
        );
        assert!(!needed(&r, "tem", "report_files", &protected));
        assert!(
            needed(&r, "rep", "report_files", &protected),
            "never the report"
        );
    }

    #[test]
    fn a_proposal_with_nobody_there_stays_on_the_route_and_is_never_offered_again() {
        // Seed 001, toolbox.propose example.
        let r = reg();
        let mut ctx = RunContext::new("x");
        let mut d = ScriptedDecider::default();
        let p = Proposal::Extra {
            tool: "climate".into(),
        };
        assert!(matches!(
            propose(
                &mut ctx,
                &r,
                &mut d,
                &p,
                "rain explains it",
                RouteView {
                    finish: "report_files",
                    protected: &[],
                    next: "Write the report"
                }
            ),
            Proposed::No(_)
        ));
        assert!(!ctx.proposals[0].accepted && declined(&ctx, "extra:climate"));
        let again = propose(
            &mut ctx,
            &r,
            &mut d,
            &p,
            "rain explains it",
            RouteView {
                finish: "report_files",
                protected: &[],
                next: "",
            },
        );
        assert!(matches!(again, Proposed::No(m) if m.contains("declined before")));
        assert_eq!(ctx.proposals.len(), 1, "not put to the user twice");
    }

    #[test]
    fn accepted_redo_changes_settings_and_reopens_downstream() {
        // A re-run is offered only for a step that works on data (a loader has no
        // `requires`, and loaders are never re-run), so here the inversion needs the data.
        let mut r = Registry::new();
        r.register(Tool::new("load", "Load.", noop).produces(&["d"]))
            .unwrap();
        r.register(
            Tool::new("inv", "Invert.", noop)
                .requires(&["d"])
                .produces(&["m"])
                .adjusts(&["fit_params"]),
        )
        .unwrap();
        r.register(
            Tool::new("ev", "Evaluate.", noop)
                .requires(&["m"])
                .produces(&["e"]),
        )
        .unwrap();
        r.register(Tool::new("rep", "Report.", noop).produces(&["report_files"]))
            .unwrap();
        let cfg = serde_json::json!({"fit_params": {"lambda": 20}});
        let mut ctx = RunContext::new("x")
            .with_config(cfg.as_object().cloned().unwrap())
            .with_interaction(Arc::new(Scripted {
                ask: Box::new(|_| Some("go".into())),
                ..Default::default()
            }));
        ctx.recovery = r.recovery_rules();
        for (t, k) in [("load", "d"), ("inv", "m"), ("ev", "e")] {
            ctx.put_value(k, JsonProduct::new(k, Value::Null));
            ctx.begin(t, "");
            ctx.finish("ok", StepStatus::Ok, "");
        }
        let mut d = ScriptedDecider::default();
        let p = Proposal::Redo {
            tool: "inv".into(),
            settings: serde_json::json!({"fit_params": {"lambda": 5}})
                .as_object()
                .cloned()
                .unwrap(),
        };
        let out = propose(
            &mut ctx,
            &r,
            &mut d,
            &p,
            "chi2 is 39",
            RouteView {
                finish: "report_files",
                protected: &[],
                next: "",
            },
        );
        assert!(
            matches!(out, Proposed::Run(ref t, _) if t == "inv"),
            "{out:?}"
        );
        assert_eq!(ctx.config["fit_params"]["lambda"], 5);
        assert_eq!(ctx.attempted("inv"), 0);
        assert_eq!(
            ctx.attempted("ev"),
            0,
            "the evaluation reads the new model, so it may run again"
        );
        assert_eq!(ctx.setting_changes[0].by, "proposal");
    }

    #[test]
    fn leaving_out_a_step_a_requested_product_needs_is_refused() {
        let r = reg();
        let mut ctx = RunContext::new("x");
        let mut d = ScriptedDecider::default();
        let p = Proposal::Skip {
            tools: vec!["ev".into()],
        };
        let out = propose(
            &mut ctx,
            &r,
            &mut d,
            &p,
            "not needed",
            RouteView {
                finish: "report_files",
                protected: &["water_content".to_string()],
                next: "",
            },
        );
        assert!(matches!(out, Proposed::No(m) if m.contains("cannot be left out")));
        assert!(
            ctx.proposals.is_empty(),
            "an impossible proposal is not put to the user"
        );
    }

    #[test]
    fn looks_are_counted_and_an_unknown_product_is_refused_with_the_list() {
        let mut ctx = RunContext::new("x");
        ctx.put_value(
            "chi2",
            JsonProduct::new("fit", serde_json::json!({"chi2": 1.5})),
        );
        assert_eq!(inspect(&mut ctx, "chi2", "check the fit"), "{chi2: 1.5}");
        assert_eq!(looks_left(&ctx), MAX_INSPECTIONS - 1);
        inspect(&mut ctx, "nothing", "x");
        // Nothing found, with its coverage (seed 004), and the products there are.
        assert_eq!(
            ctx.steps[1].error,
            "Nothing found: a product of this run with the name asked for. Checked: the 1 products this run has made. Not checked: products of earlier runs. Try instead: look at one of: chi2."
        );
    }
}
