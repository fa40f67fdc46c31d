//! Issue 18: every path of generated code, through the real `llm` client against the scenario
//! model server (`tests/support/model_server.rs`): prompt, HTTP, SSE, parsing, controller, run
//! folder. A coordinate table in an unexpected layout gets a reader the model writes; a data
//! file the step cannot read gets a recovery script. Each is approved (it runs in the sandbox,
//! the run goes on, the report names it), declined (recorded, the run goes on) or met by
//! nobody (declined without asking; source and decision still under `scripts/<n>/`).

mod support;

use std::path::Path;
use std::sync::{Arc, Mutex};

use hydrogeo_studio::runtime::events::AnsweredBy;
use hydrogeo_studio::runtime::interaction::{ScriptAnswer, ScriptRequest, Scripted};
use hydrogeo_studio::runtime::session::{self, RunOutcome, RunSpec};
use hydrogeo_studio::runtime::{Interaction, Project, RunContext, StepStatus};
use serde_json::{Value, json};
use support::model_server::{CODE, ModelServer, Reply, Turn};
use support::scenario::{
    FIX_SCRIPT, ODD_ELECTRODES, READER, SEMICOLONS, no_python, reader_turns, registry,
};

/// A project in a temporary folder with `inputs` written as files.
fn project(dir: &Path, inputs: &[(&str, &str, &str)]) -> Project {
    let mut roles = serde_json::Map::new();
    for (key, name, text) in inputs {
        std::fs::write(dir.join(name), text).unwrap();
        roles.insert(key.to_string(), Value::from(*name));
    }
    let p = json!({"goal": "Where are the electrodes?", "inputs": roles, "config": {}});
    std::fs::write(dir.join("project.json"), p.to_string()).unwrap();
    Project::load(dir).unwrap()
}

/// Answers every script review with `answer`, and keeps the requests.
fn reviewer(
    answer: Option<ScriptAnswer>,
) -> (Arc<dyn Interaction>, Arc<Mutex<Vec<ScriptRequest>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    let i = Scripted {
        review: Box::new(move |r: &ScriptRequest| {
            s2.lock().unwrap().push(r.clone());
            answer.clone()
        }),
        ..Default::default()
    };
    (Arc::new(i), seen)
}

/// A project whose electrode table has a layout no reader knows, in a fresh folder.
fn odd_electrodes_project() -> (tempfile::TempDir, Project) {
    let tmp = tempfile::tempdir().unwrap();
    let p = project(
        tmp.path(),
        &[("electrode_file", "electrodes.txt", ODD_ELECTRODES)],
    );
    (tmp, p)
}

fn run(
    dir: &Path,
    project: Project,
    server: &ModelServer,
    who: Option<Arc<dyn Interaction>>,
) -> RunOutcome {
    let mut spec = RunSpec::new(project);
    spec.runs_dir = dir.join("runs");
    spec.interaction = who;
    let mut d = server.decider();
    session::run(spec, &registry(), Some(&mut d)).unwrap()
}

fn statuses(ctx: &RunContext, tool: &str) -> Vec<StepStatus> {
    ctx.steps
        .iter()
        .filter(|s| s.tool == tool)
        .map(|s| s.status)
        .collect()
}

fn record(out: &RunOutcome, n: usize) -> Value {
    let p = out.dir.join(format!("scripts/{n}/record.json"));
    serde_json::from_str(
        &std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
    )
    .unwrap()
}

const YES: ScriptAnswer = ScriptAnswer {
    run: true,
    edited_source: None,
};

#[test]
fn an_approved_reader_edited_by_the_user_runs_and_the_report_names_it() {
    if no_python() {
        return;
    }
    let (tmp, p) = odd_electrodes_project();
    let server = ModelServer::start(reader_turns(READER));
    let edited = format!("# checked by hand\n{READER}");
    let (who, seen) = reviewer(Some(ScriptAnswer {
        run: true,
        edited_source: Some(edited.clone()),
    }));
    let out = run(tmp.path(), p, &server, Some(who));
    let ctx = &out.context;
    assert_eq!(server.unanswered(), Vec::<String>::new());
    // The code prompt went over HTTP with the file's first lines and the reader's rules.
    let code_prompts = server.prompts_with(CODE);
    assert_eq!(code_prompts.len(), 1);
    assert!(
        code_prompts[0].contains("E1; 0.0 m; 100.0 m"),
        "{}",
        code_prompts[0]
    );
    assert!(code_prompts[0].contains("never `open(`"));
    // The person saw the model's code, not a paraphrase.
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].code, READER);
    assert!(seen[0].purpose.contains("Splits each row on semicolons"));
    // It ran (the edited version) in the sandbox and the step ran again on its output.
    assert_eq!(
        statuses(ctx, "load_electrodes"),
        vec![StepStatus::Failed, StepStatus::Ok]
    );
    assert_eq!(
        ctx.steps
            .iter()
            .find(|s| s.status == StepStatus::Ok)
            .unwrap()
            .summary,
        "3 electrodes"
    );
    let rec = record(&out, 1);
    assert_eq!(
        (rec["decision"].as_str(), rec["status"].as_str()),
        (Some("run"), Some("ok"))
    );
    assert_eq!(
        std::fs::read_to_string(out.dir.join("scripts/1/edited.py")).unwrap(),
        edited
    );
    assert_eq!(
        std::fs::read_to_string(out.dir.join("scripts/1/proposed.py")).unwrap(),
        READER
    );
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("electrodes.txt")).unwrap(),
        ODD_ELECTRODES
    );
    // The run went on to the report, which names the generated code and who decided.
    assert!(ctx.has(&["report_files"]));
    let md = std::fs::read_to_string(out.dir.join("report.md")).unwrap();
    assert!(
        md.contains("## Generated code") && md.contains("### Reader 1"),
        "{md}"
    );
    assert!(md.contains("Decision: **run** by you"), "{md}");
}

#[test]
fn a_declined_reader_is_recorded_and_the_run_goes_on() {
    if no_python() {
        return;
    }
    let (tmp, p) = odd_electrodes_project();
    let server = ModelServer::start(reader_turns(READER));
    let (who, seen) = reviewer(Some(ScriptAnswer {
        run: false,
        edited_source: None,
    }));
    let out = run(tmp.path(), p, &server, Some(who));
    let ctx = &out.context;
    assert_eq!(seen.lock().unwrap().len(), 1, "the person was asked");
    assert_eq!(statuses(ctx, "load_electrodes"), vec![StepStatus::Failed]);
    let rec = record(&out, 1);
    assert_eq!(rec["decision"], "decline");
    assert_eq!(rec["by"], serde_json::to_value(AnsweredBy::User).unwrap());
    assert!(!out.dir.join("adapted").exists(), "nothing ran");
    assert!(ctx.has(&["report_files"]), "the run went on to the report");
    assert!(
        ctx.warnings.iter().any(|w| w.contains("was not approved")),
        "{:?}",
        ctx.warnings
    );
}

#[test]
fn headless_a_reader_is_declined_without_asking_and_still_kept() {
    if no_python() {
        return;
    }
    let (tmp, p) = odd_electrodes_project();
    let server = ModelServer::start(reader_turns(READER));
    let out = run(tmp.path(), p, &server, None);
    let rec = record(&out, 1);
    assert_eq!(rec["decision"], "decline");
    assert_eq!(
        rec["by"],
        serde_json::to_value(AnsweredBy::NobodyAsked).unwrap()
    );
    assert_eq!(
        std::fs::read_to_string(out.dir.join("scripts/1/proposed.py")).unwrap(),
        READER
    );
    assert!(!out.dir.join("adapted").exists());
    assert!(out.context.has(&["report_files"]));
}

#[test]
fn a_reader_that_opens_a_file_is_sent_back_and_never_shown() {
    if no_python() {
        return;
    }
    let (tmp, p) = odd_electrodes_project();
    let sneaky = "def adapt(text):\n    return [[1.0, 2.0, 3.0] for _ in open('/etc/passwd')]\n";
    let mut turns = reader_turns(sneaky);
    turns.push(Turn::code("Splits on semicolons.", READER));
    let server = ModelServer::start(turns);
    let (who, seen) = reviewer(Some(YES));
    let out = run(tmp.path(), p, &server, Some(who));
    let code_prompts = server.prompts_with(CODE);
    assert_eq!(code_prompts.len(), 2);
    assert!(
        code_prompts[1]
            .contains("It was refused before anyone was asked: generated code may not use 'open('"),
        "{}",
        code_prompts[1]
    );
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1, "only the clean reader reached the person");
    assert_eq!(seen[0].code, READER);
    assert_eq!(
        statuses(&out.context, "load_electrodes"),
        vec![StepStatus::Failed, StepStatus::Ok]
    );
}

#[test]
fn an_approved_reader_that_fails_is_fixed_once_with_its_failure_fed_back() {
    if no_python() {
        return;
    }
    let (tmp, p) = odd_electrodes_project();
    let two_columns = "def adapt(text):\n    return [[1.0, 2.0]]\n";
    let mut turns = reader_turns(two_columns);
    turns.push(Turn::code("Keeps all three columns.", READER));
    let server = ModelServer::start(turns);
    let (who, seen) = reviewer(Some(YES));
    let out = run(tmp.path(), p, &server, Some(who));
    let code_prompts = server.prompts_with(CODE);
    assert_eq!(code_prompts.len(), 2);
    // Seed 001 ADAPTER_RETRY, word for word, with the failure and the reader.
    assert!(code_prompts[1].contains(
        "A reader you wrote for this file was approved and run, and it failed with:\nrow 1 has 2 columns; 3 were expected\nThat reader was:\ndef adapt(text):\n    return [[1.0, 2.0]]\n\nFix the cause the error shows."
    ), "{}", code_prompts[1]);
    assert_eq!(
        seen.lock().unwrap().len(),
        2,
        "the fix was put to the person again"
    );
    assert_eq!(record(&out, 1)["status"], "failed");
    assert_eq!(record(&out, 2)["status"], "ok");
    assert_eq!(
        statuses(&out.context, "load_electrodes"),
        vec![StepStatus::Failed, StepStatus::Ok]
    );
}

fn script_turns() -> Vec<Turn> {
    vec![
        Turn::choose("load_table", "the table first"),
        Turn::diagnose(json!({
            "cause": "the table uses semicolons", "action": "script",
            "replaces": "data_file",
            "purpose": "Rewrite the semicolons as commas into a copy the step can read.",
            "why": "the numbers are fine"})),
        Turn::code("Rewrites ';' as ',' into out/fixed.csv.", FIX_SCRIPT),
    ]
}

#[test]
fn an_approved_recovery_script_stands_in_for_the_file_and_the_step_runs_again() {
    if no_python() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let p = project(tmp.path(), &[("data_file", "table.csv", SEMICOLONS)]);
    let server = ModelServer::start(script_turns());
    let (who, seen) = reviewer(Some(YES));
    let out = run(tmp.path(), p, &server, Some(who));
    let ctx = &out.context;
    assert_eq!(server.unanswered(), Vec::<String>::new());
    assert!(
        server.prompts_with(CODE)[0].contains("1;2"),
        "the model saw the file's first lines"
    );
    assert_eq!(seen.lock().unwrap()[0].code, FIX_SCRIPT);
    assert_eq!(
        statuses(ctx, "load_table"),
        vec![StepStatus::Failed, StepStatus::Ok]
    );
    assert_eq!(statuses(ctx, "temporary_script"), vec![StepStatus::Ok]);
    let rec = record(&out, 1);
    assert_eq!(
        (rec["decision"].as_str(), rec["status"].as_str()),
        (Some("run"), Some("ok"))
    );
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("table.csv")).unwrap(),
        SEMICOLONS
    );
    let md = std::fs::read_to_string(out.dir.join("report.md")).unwrap();
    assert!(md.contains("### Script 1"), "{md}");
}

#[test]
fn a_script_output_outside_its_own_folder_never_stands_in_for_an_input() {
    // Seed 000, script_fix: the replacement must be inside the script's own folder — a file
    // elsewhere in the run folder (here the run's journal) is refused and the step is not
    // run again on it.
    if no_python() {
        return;
    }
    const ESCAPE: &str =
        "def main(inputs, out):\n    return {'replacement': '../../../journal.jsonl'}\n";
    let tmp = tempfile::tempdir().unwrap();
    let p = project(tmp.path(), &[("data_file", "table.csv", SEMICOLONS)]);
    let mut turns = script_turns();
    turns.pop();
    turns.push(Turn::code("Points at a file of the run.", ESCAPE));
    let server = ModelServer::start(turns);
    let (who, _) = reviewer(Some(YES));
    let out = run(tmp.path(), p, &server, Some(who));
    assert!(out.dir.join("journal.jsonl").is_file());
    assert_eq!(
        statuses(&out.context, "load_table"),
        vec![StepStatus::Failed],
        "the step was not run again on a file outside the script's folder"
    );
    assert!(out.context.substitutions().is_empty());
    assert!(
        out.context
            .warnings
            .iter()
            .any(|w| w.contains("outside its own folder")),
        "{:?}",
        out.context.warnings
    );
}

#[test]
fn a_declined_recovery_script_is_recorded_and_the_run_goes_on() {
    if no_python() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let p = project(tmp.path(), &[("data_file", "table.csv", SEMICOLONS)]);
    let server = ModelServer::start(script_turns());
    let (who, seen) = reviewer(Some(ScriptAnswer {
        run: false,
        edited_source: None,
    }));
    let out = run(tmp.path(), p, &server, Some(who));
    assert_eq!(seen.lock().unwrap().len(), 1);
    assert_eq!(
        statuses(&out.context, "load_table"),
        vec![StepStatus::Failed]
    );
    assert!(
        statuses(&out.context, "temporary_script").is_empty(),
        "nothing ran"
    );
    assert_eq!(record(&out, 1)["decision"], "decline");
    assert!(out.context.has(&["report_files"]));
    assert!(
        out.context
            .warnings
            .iter()
            .any(|w| w.contains("offered and declined"))
    );
}

#[test]
fn headless_a_recovery_script_is_declined_without_asking_and_still_kept() {
    if no_python() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let p = project(tmp.path(), &[("data_file", "table.csv", SEMICOLONS)]);
    let server = ModelServer::start(script_turns());
    let out = run(tmp.path(), p, &server, None);
    let rec = record(&out, 1);
    assert_eq!(rec["decision"], "decline");
    assert_eq!(
        rec["by"],
        serde_json::to_value(AnsweredBy::NobodyAsked).unwrap()
    );
    assert_eq!(
        std::fs::read_to_string(out.dir.join("scripts/1/proposed.py")).unwrap(),
        FIX_SCRIPT
    );
    assert!(statuses(&out.context, "temporary_script").is_empty());
    assert!(out.context.has(&["report_files"]));
}

#[test]
fn the_server_streams_reasoning_the_client_ignores_and_records_what_it_was_sent() {
    // The server itself can fail a test: a request no turn answers is listed.
    let server = ModelServer::start(vec![Turn::on(
        "ready",
        Reply::Reasoned {
            reasoning: "The user wants one word.".into(),
            text: "ready".into(),
        },
    )]);
    let answer = server.settings().check().unwrap();
    assert!(answer.starts_with("\"ready\""), "{answer}");
    assert_eq!(
        server.prompts(),
        vec![hydrogeo_studio::llm::prompts::PING.to_string()]
    );
    assert!(
        server.settings().check().is_err(),
        "no second turn: refused"
    );
    assert_eq!(server.unanswered().len(), 1);
}
