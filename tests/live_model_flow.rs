//! Issue 18, items 2 and 3, through the real `llm` client and the scenario model server:
//! flexible mode (offers filtered by `when`/`applies`, a proposal accepted and declined, the
//! report written again after an accepted re-run) and step by step (an approval before every
//! step that runs, retries and accepted proposals included, each saying what kind it is).

mod support;

use std::path::Path;
use std::sync::{Arc, Mutex};

use hydrogeo_studio::runtime::controller::Mode;
use hydrogeo_studio::runtime::interaction::{ApprovalRequest, QuestionRequest, Scripted};
use hydrogeo_studio::runtime::session::{self, RunOutcome, RunSpec};
use hydrogeo_studio::runtime::toolbox::{FLEXIBLE_MAX_STEPS, flexible_max_steps};
use hydrogeo_studio::runtime::{
    Interaction, JsonProduct, Outputs, Project, Registry, RunContext, StepStatus, Tool, Verdict,
};
use serde_json::{Value, json};
use support::model_server::{DECISION, ModelServer, Turn};

fn lambda(ctx: &RunContext) -> f64 {
    ctx.config["inversion_params"]["lambda"]
        .as_f64()
        .unwrap_or(20.0)
}

/// load → invert (diverges above λ 10) → report; a seismic step that does not apply to this
/// project and a time-lapse step that applies but is off the route.
fn registry() -> Registry {
    registry_hooked(Arc::new(|| {}))
}

/// [`registry`] with `while_inverting` called inside every inversion (a person acting while
/// it runs).
fn registry_hooked(while_inverting: Arc<dyn Fn() + Send + Sync>) -> Registry {
    let mut reg = Registry::new();
    let put = |key: &'static str, v: Value| Outputs::new().with(key, JsonProduct::new(key, v));
    reg.register(
        Tool::new(
            "load_data",
            "Read the survey.",
            move |_: &mut RunContext| Ok(("12 readings".into(), put("data", json!(12)))),
        )
        .produces(&["data"]),
    )
    .unwrap();
    reg.register(
        Tool::new(
            "invert",
            "Invert the survey.",
            move |ctx: &mut RunContext| {
                while_inverting();
                let l = lambda(ctx);
                if l > 10.0 {
                    anyhow::bail!("the inversion diverged at lambda {l}");
                }
                Ok((format!("model at lambda {l}"), put("model", json!(l))))
            },
        )
        .requires(&["data"])
        .produces(&["model"])
        .adjusts(&["inversion_params"]),
    )
    .unwrap();
    reg.register(
        Tool::new(
            "invert_seismic",
            "Invert travel times.",
            move |_: &mut RunContext| Ok(("seismic".into(), put("velocity", Value::Null))),
        )
        .requires(&["data"])
        .produces(&["velocity"])
        .when(|_| false)
        .applies(|_| false),
    )
    .unwrap();
    reg.register(
        Tool::new(
            "time_lapse",
            "Compare surveys in time.",
            move |_: &mut RunContext| Ok(("change".into(), put("change", Value::Null))),
        )
        .requires(&["data"])
        .produces(&["change"])
        .when(|_| false),
    )
    .unwrap();
    reg.register(
        Tool::new(
            "write_report",
            "Write the report.",
            move |ctx: &mut RunContext| {
                Ok((
                    format!("report at lambda {}", lambda(ctx)),
                    put("report_files", Value::Null),
                ))
            },
        )
        .requires(&["model"])
        .produces(&["report_files"]),
    )
    .unwrap();
    reg
}

fn project(dir: &Path, lambda: f64) -> Project {
    std::fs::write(dir.join("a.dat"), "1\n").unwrap();
    let p = json!({"goal": "Where is the water table?", "inputs": {"data_file": "a.dat"},
                   "config": {"inversion_params": {"lambda": lambda}}});
    std::fs::write(dir.join("project.json"), p.to_string()).unwrap();
    Project::load(dir).unwrap()
}

/// Answers approvals with Proceed and questions with `answer`, keeping every request.
#[derive(Clone, Default)]
struct Person {
    approvals: Arc<Mutex<Vec<ApprovalRequest>>>,
    questions: Arc<Mutex<Vec<QuestionRequest>>>,
}

impl Person {
    fn answering(&self, answer: &'static str) -> Arc<dyn Interaction> {
        let (a, q) = (self.approvals.clone(), self.questions.clone());
        Arc::new(Scripted {
            approve: Box::new(move |r: &ApprovalRequest| {
                a.lock().unwrap().push(r.clone());
                Some(Verdict::Proceed)
            }),
            ask: Box::new(move |r: &QuestionRequest| {
                q.lock().unwrap().push(r.clone());
                Some(answer.to_string())
            }),
            ..Default::default()
        })
    }
}

fn run(
    dir: &Path,
    p: Project,
    server: &ModelServer,
    mode: Mode,
    who: Arc<dyn Interaction>,
) -> RunOutcome {
    let mut spec = RunSpec::new(p);
    spec.runs_dir = dir.join("runs");
    spec.mode = mode;
    spec.flexible = true;
    spec.max_steps = flexible_max_steps(spec.max_steps);
    spec.interaction = Some(who);
    let mut d = server.decider();
    session::run(spec, &registry(), Some(&mut d)).unwrap()
}

fn tools(ctx: &RunContext) -> Vec<(String, StepStatus)> {
    ctx.steps
        .iter()
        .map(|s| (s.tool.clone(), s.status))
        .collect()
}

fn redo(lambda: f64) -> Turn {
    Turn::decide(json!({"why": "the model is too smooth for a water table",
        "propose": {"kind": "redo", "tool": "invert", "settings": {"inversion_params": {"lambda": lambda}}}}))
}

fn done() -> Turn {
    Turn::decide(json!({"why": "the report answers the goal", "done": true}))
}

fn flexible_turns() -> Vec<Turn> {
    vec![
        Turn::choose("load_data", "data first"),
        Turn::choose("invert", "a model next"),
        Turn::choose("write_report", "then the report"),
        redo(2.0),
        done(),
        done(),
    ]
}

#[test]
fn an_accepted_re_run_makes_the_report_out_of_date_and_it_is_written_again() {
    let tmp = tempfile::tempdir().unwrap();
    let server = ModelServer::start(flexible_turns());
    let person = Person::default();
    let out = run(
        tmp.path(),
        project(tmp.path(), 5.0),
        &server,
        Mode::Auto,
        person.answering("go"),
    );
    let ctx = &out.context;
    assert_eq!(server.unanswered(), Vec::<String>::new());
    // The proposal reached the person, with the model's reason.
    let q = person.questions.lock().unwrap();
    assert_eq!(q.len(), 1);
    assert!(
        q[0].question
            .contains("run invert again with {\"inversion_params\":{\"lambda\":2.0}}"),
        "{}",
        q[0].question
    );
    let names: Vec<&str> = ctx.steps.iter().map(|s| s.tool.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "load_data",
            "invert",
            "write_report",
            "invert",
            "write_report"
        ]
    );
    // The "done" after the re-run was refused until the report was written again, at λ 2.
    assert_eq!(ctx.steps[4].summary, "report at lambda 2");
    let decisions = server.prompts_with(DECISION);
    assert!(
        decisions[4].contains("finishing is not an option"),
        "{}",
        decisions[4]
    );
    assert!(
        decisions[5].contains("so you may finish"),
        "{}",
        decisions[5]
    );
}

#[test]
fn the_offers_hold_no_loader_and_no_tool_that_does_not_apply() {
    let tmp = tempfile::tempdir().unwrap();
    let server = ModelServer::start(flexible_turns());
    let person = Person::default();
    run(
        tmp.path(),
        project(tmp.path(), 5.0),
        &server,
        Mode::Auto,
        person.answering("stay"),
    );
    // The prompt the server received after the report was first written.
    let p = &server.prompts_with(DECISION)[3];
    assert!(p.contains("(flexible mode)"), "{p}");
    assert!(
        p.contains("\"kind\": \"redo\", \"tool\": \"<one of: invert>\""),
        "{p}"
    );
    assert!(
        p.contains("\"tool\": \"<one of: time_lapse (Compare surveys in time.)>\""),
        "{p}"
    );
    assert!(
        !p.contains("invert_seismic"),
        "a step whose applies is false was offered: {p}"
    );
    assert!(
        !p.contains("<one of: load_data"),
        "a loader was offered for a re-run: {p}"
    );
}

#[test]
fn a_declined_proposal_keeps_the_route_and_the_report() {
    let tmp = tempfile::tempdir().unwrap();
    let mut turns = flexible_turns();
    turns.truncate(5);
    let server = ModelServer::start(turns);
    let person = Person::default();
    let out = run(
        tmp.path(),
        project(tmp.path(), 5.0),
        &server,
        Mode::Auto,
        person.answering("stay"),
    );
    let ctx = &out.context;
    assert_eq!(person.questions.lock().unwrap().len(), 1);
    let names: Vec<&str> = ctx.steps.iter().map(|s| s.tool.as_str()).collect();
    assert_eq!(names, vec!["load_data", "invert", "write_report"]);
    assert_eq!(lambda(ctx), 5.0);
    assert!(!ctx.proposals[0].accepted);
}

#[test]
fn step_by_step_asks_before_every_step_including_the_retry_and_the_accepted_proposal() {
    let tmp = tempfile::tempdir().unwrap();
    let mut turns = flexible_turns();
    turns.insert(
        2,
        Turn::diagnose(json!({"cause": "lambda 20 is too strong for this noise",
            "action": "retry", "changes": {"inversion_params": {"lambda": 5}},
            "why": "less smoothing converges"})),
    );
    let server = ModelServer::start(turns);
    let person = Person::default();
    let out = run(
        tmp.path(),
        project(tmp.path(), 20.0),
        &server,
        Mode::StepByStep,
        person.answering("go"),
    );
    assert_eq!(server.unanswered(), Vec::<String>::new());
    let ran = tools(&out.context);
    assert_eq!(
        ran,
        vec![
            ("load_data".into(), StepStatus::Ok),
            ("invert".into(), StepStatus::Failed),
            ("invert".into(), StepStatus::Ok),
            ("write_report".into(), StepStatus::Ok),
            ("invert".into(), StepStatus::Ok),
            ("write_report".into(), StepStatus::Ok),
        ]
    );
    // One approval per step that ran (6), each saying what kind of step it is.
    let asked: Vec<(String, String)> = person
        .approvals
        .lock()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a.tool.clone(),
                a.reason.split(':').next().unwrap_or("").to_string(),
            )
        })
        .collect();
    let want = [
        ("load_data", "Next step"),
        ("invert", "Next step"),
        (
            "invert",
            "Recovery retry (the step failed; a setting was changed)",
        ),
        ("write_report", "Next step"),
        ("invert", "A step you accepted from the model's proposal"),
        ("write_report", "Next step"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    assert_eq!(asked, want);
    assert_eq!(
        person.questions.lock().unwrap().len(),
        1,
        "the proposal itself was one question"
    );
}

#[test]
fn the_flexible_step_limit_is_never_below_the_plain_one() {
    // The catalog's plain bound is twice its tool count (catalog::run_spec); flexible adds room
    // for every look and proposal, and is at least FLEXIBLE_MAX_STEPS.
    for plain in [1, 24, 40, 64, 200] {
        assert!(flexible_max_steps(plain) > plain, "{plain}");
        assert!(flexible_max_steps(plain) >= FLEXIBLE_MAX_STEPS);
    }
    assert_eq!(flexible_max_steps(64), 78);
}

/// Seed 001 `_follow_plan`, over HTTP: the model names the steps after the first with
/// `then`; they run without another request, and the next request comes only when the plan
/// is used up (here: the done after the report).
#[test]
fn a_plan_in_the_models_answer_runs_without_asking_it_again() {
    let tmp = tempfile::tempdir().unwrap();
    let server = ModelServer::start(vec![
        Turn::decide(
            json!({"why": "data, model, report: the goal needs nothing else",
            "tool": "load_data", "then": ["invert", "write_report"]}),
        ),
        done(),
    ]);
    let person = Person::default();
    let out = run(
        tmp.path(),
        project(tmp.path(), 5.0),
        &server,
        Mode::Auto,
        person.answering("stay"),
    );
    assert_eq!(server.unanswered(), Vec::<String>::new());
    let names: Vec<&str> = out.context.steps.iter().map(|s| s.tool.as_str()).collect();
    assert_eq!(names, vec!["load_data", "invert", "write_report"]);
    assert_eq!(
        server.prompts_with(DECISION).len(),
        2,
        "one request for the plan, one to finish"
    );
    assert!(server.prompts_with(DECISION)[0].contains("add \"then\""));
    assert!(
        out.context.steps[1]
            .reason
            .starts_with("planned by the model at step 1"),
        "{}",
        out.context.steps[1].reason
    );
}

/// Issue 18 item 4: "use lambda 5" sent while the inversion runs (and fails at λ 20) reaches
/// the failed step's diagnosis, the retry runs at λ 5 (asserted on its result), and the
/// journal says which step used the note.
#[test]
fn a_note_sent_while_the_inversion_runs_sets_the_retrys_lambda() {
    let tmp = tempfile::tempdir().unwrap();
    let steering = hydrogeo_studio::runtime::Steering::new();
    let (s2, said) = (steering.clone(), Arc::new(Mutex::new(false)));
    let reg = registry_hooked(Arc::new(move || {
        let mut said = said.lock().unwrap();
        if !*said {
            s2.say("use lambda 5");
            *said = true;
        }
    }));
    let server = ModelServer::start(vec![
        Turn::choose("load_data", "data first"),
        Turn::choose("invert", "a model next"),
        Turn::diagnose(json!({"cause": "lambda 20 is too strong for this noise",
            "action": "retry", "changes": {"inversion_params": {"lambda": 5}},
            "why": "the scientist asked for lambda 5"})),
        Turn::choose("write_report", "then the report"),
        done(),
    ]);
    let mut spec = RunSpec::new(project(tmp.path(), 20.0));
    spec.runs_dir = tmp.path().join("runs");
    spec.steering = steering;
    let mut d = server.decider();
    let out = session::run(spec, &reg, Some(&mut d)).unwrap();
    assert_eq!(server.unanswered(), Vec::<String>::new());
    let diagnosis = &server.prompts_with(support::model_server::DIAGNOSIS)[0];
    assert!(
        diagnosis.contains("While the step ran, the scientist told the run:\n- use lambda 5"),
        "{diagnosis}"
    );
    let ran = tools(&out.context);
    assert_eq!(ran[1], ("invert".to_string(), StepStatus::Failed));
    assert_eq!(ran[2], ("invert".to_string(), StepStatus::Ok));
    assert_eq!(out.context.steps[2].summary, "model at lambda 5");
    let journal = std::fs::read_to_string(out.dir.join("journal.jsonl")).unwrap();
    let heard: Vec<Value> = journal
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| {
            e.to_string()
                .contains("the retry, step 3, ran with the change")
        })
        .collect();
    assert_eq!(heard.len(), 1, "{journal}");
    assert!(heard[0].to_string().contains("use lambda 5"));
}
