//! The studio driven like a person would: find widgets by label, click, step frames, assert on
//! what is shown and on the run's record. No display or GPU needed (egui_kittest).

#[path = "support/studio.rs"]
mod studio_support;
use studio_support::{harness, step_until};
#[macro_use]
#[path = "support/field_data.rs"]
mod field_data;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use hydrogeo_studio::runtime::decide::{Decide, Decision, ScriptedDecider};
use hydrogeo_studio::runtime::events::Event;
use hydrogeo_studio::runtime::{JsonProduct, Outputs, Registry, RunContext, StepStatus, Tool};
use hydrogeo_studio::studio::app::{DeciderMaker, NoPicker};
use hydrogeo_studio::studio::{StudioApp, StudioConfig};
use serde_json::Value;

mod support;

fn tool(name: &str, requires: &[&str], produces: &'static str, sleep_ms: u64) -> Tool {
    let label = format!("Step {name}");
    Tool::new(name, "A fake step for the UI tests.", move |_| {
        std::thread::sleep(Duration::from_millis(sleep_ms));
        Ok((
            format!("found {produces}"),
            Outputs::new().with(produces, JsonProduct::new(produces, Value::Null)),
        ))
    })
    .requires(requires)
    .produces(&[produces])
    .label(&label)
    .module("ert")
}

fn chain(sleep_ms: u64) -> Registry {
    let mut reg = Registry::new();
    reg.register(tool("load", &[], "data", sleep_ms)).unwrap();
    reg.register(tool("invert", &["data"], "model", sleep_ms))
        .unwrap();
    reg.register(tool("report", &["model"], "report_files", sleep_ms))
        .unwrap();
    reg
}

struct Setup {
    _dir: tempfile::TempDir,
    runs: PathBuf,
}

fn app(registry: Registry, decider: DeciderMaker) -> (StudioApp, Setup) {
    app_with(registry, decider, &[])
}

/// The studio on a project whose inputs are `(role, file name, contents)`.
fn app_with(
    registry: Registry,
    decider: DeciderMaker,
    inputs: &[(&str, &str, &str)],
) -> (StudioApp, Setup) {
    let dir = tempfile::tempdir().unwrap();
    let mut roles = serde_json::Map::new();
    for (role, name, text) in inputs {
        std::fs::write(dir.path().join(name), text).unwrap();
        roles.insert(role.to_string(), Value::from(*name));
    }
    let project = serde_json::json!({"goal": "a test goal", "inputs": roles,
                                     "config": {"inversion_params": {"lambda": 20}}});
    std::fs::write(dir.path().join("project.json"), project.to_string()).unwrap();
    let runs = dir.path().join("runs");
    let app = StudioApp::new(StudioConfig {
        project: dir.path().to_path_buf(),
        registry: Arc::new(registry),
        decider,
        picker: Arc::new(NoPicker),
        runs_dir: Some(runs.clone()),
        exit_after_first_frame: false,
        unattended: Default::default(),
        settings: None,
        chat_model: None,
    });
    (app, Setup { _dir: dir, runs })
}

fn no_model() -> DeciderMaker {
    Arc::new(|_| None)
}

/// A scripted chat model: turn `n` (from 1) answers `reply(n, messages)`.
struct Turns<F>(usize, F);

impl<F> hydrogeo_studio::llm::harness::ChatModel for Turns<F>
where
    F: FnMut(
            usize,
            &[hydrogeo_studio::llm::harness::ChatMessage],
        ) -> hydrogeo_studio::llm::harness::ChatMessage
        + Send,
{
    fn complete(
        &mut self,
        _system: &str,
        messages: &[hydrogeo_studio::llm::harness::ChatMessage],
        _tools: &[Value],
    ) -> Result<hydrogeo_studio::llm::harness::ChatMessage, String> {
        self.0 += 1;
        Ok((self.1)(self.0, messages))
    }
}

/// The studio's configuration on `project`: no tools, no run model, no runs folder, and
/// `chat_model` for the chat.
fn bare_config(
    project: &std::path::Path,
    chat_model: Option<hydrogeo_studio::studio::chat::ChatModelMaker>,
) -> StudioConfig {
    StudioConfig {
        project: project.to_path_buf(),
        registry: Arc::new(Registry::new()),
        decider: no_model(),
        picker: Arc::new(NoPicker),
        runs_dir: None,
        exit_after_first_frame: false,
        unattended: Default::default(),
        settings: None,
        chat_model,
    }
}

/// The studio on `project` with `model` as the chat's model, no run model, the chat open
/// and settled (a few frames, so its contents are drawn before anything is clicked inside).
fn chat_harness(
    project: &std::path::Path,
    model: hydrogeo_studio::studio::chat::ChatModelMaker,
) -> Harness<'static, StudioApp> {
    let mut h = harness(StudioApp::new(bare_config(project, Some(model))));
    h.get_by_label("Chat").click();
    for _ in 0..3 {
        h.step();
    }
    h
}

/// Step frames until `done` holds (or fail after `secs`).
/// Step until the widget labelled `label` is in the same place two frames running (a dialog
/// that is still growing moves its buttons under the pointer).
fn settle(h: &mut Harness<'static, StudioApp>, label: &str) {
    let mut last = h.get_by_label(label).rect();
    for _ in 0..120 {
        h.step();
        let now = h.get_by_label(label).rect();
        if now == last {
            return;
        }
        last = now;
    }
    panic!("{label} never stopped moving");
}

fn journal_events(runs: &std::path::Path) -> Vec<Event> {
    let dir = std::fs::read_dir(runs)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    hydrogeo_studio::runtime::journal::replay(&dir.join("journal.jsonl"))
        .unwrap()
        .events
}

#[test]
fn auto_to_report_fills_the_timeline_in_order_and_ends_with_a_finish_card() {
    let (app, setup) = app(chain(30), no_model());
    let mut h = harness(app);
    h.get_by_label("Auto to report").click();
    h.step();
    // A double click does not start a second run.
    h.get_by_label("Auto to report").click();
    step_until(&mut h, 30, "the finish card", |a| {
        a.shared.timeline.finish.is_some()
    });
    assert_eq!(h.state().runs_started(), 1);
    let tools: Vec<String> = h
        .state()
        .shared
        .timeline
        .cards
        .iter()
        .map(|c| c.tool.clone())
        .collect();
    assert_eq!(tools, vec!["load", "invert", "report"]);
    assert!(
        h.state()
            .shared
            .timeline
            .cards
            .iter()
            .all(|c| c.status == Some(StepStatus::Ok))
    );
    h.get_by_label("Report ready");
    // The route strip shrank step by step: 3, 2, 1, 0 steps ahead.
    let ahead: Vec<usize> = journal_events(&setup.runs)
        .iter()
        .filter_map(|e| match e {
            Event::Route { ahead, .. } => Some(ahead.len()),
            _ => None,
        })
        .collect();
    assert_eq!(ahead, vec![3, 2, 1, 0]);
}

#[test]
fn step_by_step_asks_before_each_step_and_skip_and_stop_are_honoured() {
    let mut reg = chain(0);
    reg.register(tool("extra", &["data"], "extra", 0)).unwrap();
    let (app, _setup) = app(reg, no_model());
    let mut h = harness(app);
    h.get_by_label("Step by step").click();
    step_until(&mut h, 20, "the first approval", |a| !a.dialogs.is_empty());
    h.get_by_label_contains("Next step 1: Step load");
    // Neither a click outside the dialog (on a rail entry) nor Escape answers an approval:
    // Stop is only the Stop button.
    h.get_all_by_label("ERT").next().unwrap().click();
    h.step();
    h.key_press(egui::Key::Escape);
    h.step();
    h.step();
    assert_eq!(h.state().dialogs.len(), 1, "the approval still waits");
    assert!(h.state().shared.timeline.cards.is_empty(), "nothing ran");
    // The panels stay usable while it waits (issue 18 item 4): the rail click opened ERT.
    assert_eq!(h.state().panels[h.state().active].key(), "ert");
    // And so does the note box: a note sent while the approval waits is queued for the run.
    h.state_mut().note = "use lambda 5".into();
    h.get_by_label("Send note").click();
    h.step();
    h.step();
    assert_eq!(
        h.state().shared.timeline.notes.len(),
        1,
        "the note was sent"
    );
    assert_eq!(h.state().dialogs.len(), 1, "and the approval still waits");
    h.get_by_label("Proceed").click();
    step_until(&mut h, 20, "the second approval", |a| {
        a.dialogs.current().is_some_and(|p| p.id != 1) && a.shared.timeline.cards.len() == 1
    });
    h.get_by_label_contains("Next step 2: Step invert");
    h.get_by_label("Skip").click();
    step_until(&mut h, 20, "the third approval", |a| {
        a.shared.timeline.cards.len() == 2 && !a.dialogs.is_empty()
    });
    h.get_by_label("Stop here").click();
    step_until(&mut h, 20, "the finish card", |a| {
        a.shared.timeline.finish.is_some()
    });
    let cards: Vec<(String, Option<StepStatus>)> = h
        .state()
        .shared
        .timeline
        .cards
        .iter()
        .map(|c| (c.tool.clone(), c.status))
        .collect();
    assert_eq!(cards[0], ("load".into(), Some(StepStatus::Ok)));
    assert_eq!(cards[1], ("invert".into(), Some(StepStatus::Skipped)));
    assert_eq!(cards[2].1, Some(StepStatus::Skipped));
    assert_eq!(
        h.state().shared.timeline.finish.as_ref().unwrap().status,
        "stopped"
    );
    h.get_by_label("Stopped");
}

/// A tool that puts a script to the user and records the answer it got.
/// The answers a script review got: (run, edited source).
type Answers = Arc<Mutex<Vec<(bool, Option<String>)>>>;

fn script_registry(answers: Answers) -> Registry {
    let mut reg = Registry::new();
    reg.register(
        Tool::new(
            "scripted",
            "Offers a script.",
            move |ctx: &mut RunContext| {
                let (a, _) = ctx.review_script(
                    "Rewrite the electrode table as x, z.",
                    vec![("electrode_file".into(), "/data/electrodes.txt".into())],
                    "def main(inputs, out):\n    # read the table\n    return {\"rows\": 48}\n",
                    "python",
                    vec!["separate process".into()],
                );
                answers
                    .lock()
                    .unwrap()
                    .push((a.run, a.edited_source.clone()));
                Ok((
                    format!("script run: {}", a.run),
                    Outputs::new().with("report_files", JsonProduct::new("r", Value::Null)),
                ))
            },
        )
        .produces(&["report_files"])
        .label("Offer a script")
        .module("project"),
    )
    .unwrap();
    reg
}

#[test]
fn the_script_review_shows_the_code_and_every_way_out_declines_except_run() {
    for way in ["escape", "do not run", "run", "close the window"] {
        let answers = Arc::new(Mutex::new(Vec::new()));
        let (app, _setup) = app(script_registry(answers.clone()), no_model());
        let mut h = harness(app);
        h.get_by_label("Auto to report").click();
        step_until(&mut h, 20, "the script review", |a| !a.dialogs.is_empty());
        h.get_by_label("Review a generated script");
        h.get_by_label_contains("return {\"rows\": 48}");
        h.get_by_label_contains("electrode_file: /data/electrodes.txt");
        match way {
            "escape" => {
                h.key_press(egui::Key::Escape);
                h.step();
            }
            "do not run" => {
                h.get_by_label("Do not run").click();
                h.step();
            }
            "run" => {
                h.get_by_label("Run script").click();
                h.step();
                h.step();
                // A second press cannot send twice: the dialog is gone.
                assert!(h.query_by_label("Run script").is_none());
            }
            _ => {
                drop(h);
                let t0 = Instant::now();
                while answers.lock().unwrap().is_empty() {
                    assert!(
                        t0.elapsed() < Duration::from_secs(10),
                        "closing the window did not answer"
                    );
                    std::thread::sleep(Duration::from_millis(10));
                }
                assert_eq!(
                    answers.lock().unwrap().as_slice(),
                    &[(false, None)],
                    "closing declines"
                );
                continue;
            }
        }
        step_until(&mut h, 20, "the end", |a| {
            a.shared.timeline.finish.is_some()
        });
        let got = answers.lock().unwrap().clone();
        assert_eq!(got.len(), 1, "answered exactly once ({way})");
        assert_eq!(got[0].0, way == "run", "{way}");
    }
}

#[test]
fn a_note_reaches_the_controller_and_pause_holds_until_resume() {
    let mut reg = Registry::new();
    reg.register(tool("load", &[], "data", 400)).unwrap();
    reg.register(tool("invert", &["data"], "model", 0)).unwrap();
    reg.register(tool("other", &["data"], "other", 0)).unwrap();
    reg.register(tool("report", &["model", "other"], "report_files", 0))
        .unwrap();
    let seen: Arc<Mutex<Vec<Vec<String>>>> = Arc::new(Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    let maker: DeciderMaker = Arc::new(move |_| {
        struct Recorder(ScriptedDecider, Arc<Mutex<Vec<Vec<String>>>>);
        impl Decide for Recorder {
            fn describe(&self) -> String {
                "recorder".into()
            }
            fn decide(
                &mut self,
                r: &hydrogeo_studio::runtime::DecisionRequest,
                e: &mut dyn FnMut(hydrogeo_studio::runtime::ModelEvent),
            ) -> Result<Decision, hydrogeo_studio::runtime::DecideError> {
                self.1.lock().unwrap().push(r.notes.clone());
                self.0.decide(r, e)
            }
        }
        let d = ScriptedDecider::new(vec![
            Ok(Decision::tool("invert", "the note was read")),
            Ok(Decision::tool("other", "next")),
        ]);
        Some(Box::new(Recorder(d, seen2.clone())) as Box<dyn Decide>)
    });
    let (app, _setup) = app(reg, maker);
    let mut h = harness(app);
    h.get_by_label("Auto to report").click();
    step_until(&mut h, 20, "the first step to start", |a| {
        a.shared.timeline.running()
    });
    h.state_mut().note = "use lambda 5".into();
    h.get_by_label("Send note").click();
    h.step();
    h.get_by_label("Pause").click();
    h.step();
    h.get_by_label_contains("Note: use lambda 5");
    step_until(&mut h, 20, "the pause to take hold", |a| {
        a.shared.timeline.paused
    });
    h.get_by_label_contains("Paused before the next step");
    // Held: nothing new starts while paused.
    let cards = h.state().shared.timeline.cards.len();
    for _ in 0..30 {
        h.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        h.state().shared.timeline.cards.len(),
        cards,
        "no step started while paused"
    );
    h.get_by_label("Resume").click();
    step_until(&mut h, 20, "the end", |a| {
        a.shared.timeline.finish.is_some()
    });
    // The note was in the very first decision the model was asked for.
    assert_eq!(seen.lock().unwrap()[0], vec!["use lambda 5".to_string()]);
    let note = &h.state().shared.timeline.notes[0];
    assert_eq!(note.response.as_deref(), Some("the note was read"));
}

#[test]
fn the_ui_stays_responsive_while_a_tool_sleeps_two_seconds() {
    let mut reg = Registry::new();
    reg.register(tool("slow", &[], "report_files", 2000))
        .unwrap();
    let (app, _setup) = app(reg, no_model());
    let mut h = harness(app);
    h.get_by_label("Auto to report").click();
    step_until(&mut h, 10, "the slow step to start", |a| {
        a.shared.timeline.running()
    });
    let mut frames = Vec::new();
    let t0 = Instant::now();
    while h.state().shared.timeline.running() && t0.elapsed() < Duration::from_secs(5) {
        let f0 = Instant::now();
        h.step();
        frames.push(f0.elapsed());
        std::thread::sleep(Duration::from_millis(8));
    }
    assert!(
        frames.len() > 50,
        "frames kept coming while the worker slept: {}",
        frames.len()
    );
    frames.sort();
    let p99 = frames[(frames.len() * 99 / 100).min(frames.len() - 1)];
    assert!(
        p99 < Duration::from_millis(16),
        "p99 frame time {p99:?} (of {} frames)",
        frames.len()
    );
}

#[test]
fn every_panel_with_nothing_loaded_says_what_to_do() {
    let app = StudioApp::new(bare_config(
        std::path::Path::new("/nonexistent/project"),
        None,
    ));
    let mut h = harness(app);
    h.step();
    h.get_by_label_contains("cannot read the project");
    // The rail carries the short names; the panel's heading its full title.
    for (rail, title, hint) in [
        (
            "ERT",
            "Electrical resistivity (ERT)",
            "Add files with File → Add data files",
        ),
        ("Seismic", "Seismic refraction", "Readable formats"),
        ("EM", "Time-domain EM (TDEM)", "Readable formats"),
        ("MT", "Magnetotellurics (MT)", "Readable formats"),
        ("Grav/Mag", "Gravity and magnetics", "Readable formats"),
        ("GPR", "Ground-penetrating radar (GPR)", "Readable formats"),
        ("Report", "Report", "No report yet"),
    ] {
        h.get_by_label(rail).click();
        h.step();
        h.step();
        assert_eq!(
            h.state().panels[h.state().active].title(),
            title,
            "the rail's {rail} opens the {title} panel"
        );
        h.get_by_label_contains(hint);
    }
}

#[test]
fn the_chat_proposes_actions_the_user_approves_or_rejects_and_the_panel_changes() {
    use hydrogeo_studio::llm::harness::{ChatMessage, ChatModel, Role, ToolCall};
    let model = || {
        Turns(0, |turn: usize, msgs: &[ChatMessage]| {
            let call = |id: &str, name: &str, args: Value| ToolCall {
                id: id.into(),
                name: name.into(),
                arguments: args,
            };
            match turn {
                1 => ChatMessage::assistant(
                    "Let me open the ERT module.",
                    vec![call(
                        "c1",
                        "open_module",
                        serde_json::json!({"module": "ert"}),
                    )],
                ),
                2 => ChatMessage::assistant(
                    "I will sharpen the goal.",
                    vec![call(
                        "c2",
                        "apply_action",
                        serde_json::json!({"module": "project", "action": "set_goal", "args": {"goal": "changed by the assistant"}}),
                    )],
                ),
                3 => {
                    let last = msgs.iter().rev().find(|m| m.role == Role::Tool).unwrap();
                    assert!(
                        last.content.starts_with("Declined by the user"),
                        "{}",
                        last.content
                    );
                    assert!(!last.is_error, "a rejection is not a tool error");
                    ChatMessage::assistant(
                        "Understood; the seismic line next.",
                        vec![call(
                            "c3",
                            "open_module",
                            serde_json::json!({"module": "seismic"}),
                        )],
                    )
                }
                _ => ChatMessage::assistant("The seismic module is open.", vec![]),
            }
        })
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("project.json"),
        r#"{"goal": "the original goal", "inputs": {}}"#,
    )
    .unwrap();
    let mut h = chat_harness(
        dir.path(),
        Arc::new(move || Some(Box::new(model()) as Box<dyn ChatModel>)),
    );
    h.state_mut().chat.input = "Find the water table along the ERT line".into();
    h.get_by_label("Send").click();
    step_until(&mut h, 20, "the first call", |a| a.chat.pending.is_some());
    h.get_by_label_contains("The assistant wants to call open_module");
    h.get_by_label("Approve").click();
    step_until(&mut h, 20, "the second call", |a| {
        a.chat
            .pending
            .as_ref()
            .is_some_and(|p| p.call.name == "apply_action")
    });
    assert_eq!(
        h.state().panels[h.state().active].key(),
        "ert",
        "the ERT panel is in front"
    );
    h.get_by_label("Reject").click();
    step_until(&mut h, 20, "the third call", |a| {
        a.chat
            .pending
            .as_ref()
            .is_some_and(|p| p.call.arguments["module"] == "seismic")
    });
    h.get_by_label("Approve").click();
    step_until(&mut h, 20, "the end of the turn", |a| !a.chat.working());
    assert_eq!(h.state().panels[h.state().active].key(), "seismic");
    assert_eq!(
        h.state().shared.project.as_ref().unwrap().goal,
        "the original goal",
        "the rejected action never ran"
    );
    h.get_by_label("Timeline").click();
    h.step();
    h.get_by_label_contains("No Seismic refraction data");
    // The conversation was saved with the project's runs, and reopens.
    let saved = h.state().chat.save_path.clone().unwrap();
    assert!(saved.exists());
    let mut other = hydrogeo_studio::studio::chat::ChatPanel::new(Arc::new(|| None));
    other.reopen(&saved).unwrap();
    assert_eq!(other.messages.len(), h.state().chat.messages.len());
}

#[test]
fn closing_the_window_during_a_run_asks_and_stop_leaves_a_stopped_report() {
    // Issue 17 item 6: closing mid-run quit at once and result.json kept "ended": null.
    let (app, setup) = app(chain(400), no_model());
    let mut h = harness(app);
    h.get_by_label("Auto to report").click();
    step_until(&mut h, 10, "the first step to finish", |a| {
        a.shared.timeline.cards.iter().any(|c| c.status.is_some())
    });
    // The window's close button.
    h.input_mut()
        .viewports
        .entry(egui::ViewportId::ROOT)
        .or_default()
        .events
        .push(egui::ViewportEvent::Close);
    h.step();
    h.step();
    assert_eq!(
        h.state().closing,
        hydrogeo_studio::studio::app::Closing::Asking
    );
    h.get_by_label("Stop the run");
    h.get_by_label("Keep it running in the background");
    h.get_by_label("Cancel");
    assert!(
        h.state().running(),
        "the run goes on while the person decides"
    );
    h.get_by_label("Stop the run").click();
    step_until(&mut h, 20, "the run to stop", |a| !a.running());
    let dir = std::fs::read_dir(&setup.runs)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("result.json")).unwrap()).unwrap();
    assert_eq!(result["status"], "stopped", "{result:#}");
    assert_eq!(result["ended"], "stopped");
    let md = std::fs::read_to_string(dir.join("report.md")).expect("a report of what was done");
    assert!(md.contains("| Run status | stopped |"), "{md}");
    assert!(
        md.contains("Step load"),
        "the report covers the step that ran"
    );
}

#[test]
fn pause_during_a_step_says_at_once_that_it_pauses_after_the_step() {
    // Issue 18 item 4: the pause took effect only after the step, and nothing said so. Each
    // step takes 1 s, so the click lands while the first one runs.
    let (app, _setup) = app(chain(1000), no_model());
    let mut h = harness(app);
    h.get_by_label("Auto to report").click();
    step_until(&mut h, 10, "a step to start", |a| {
        a.shared.timeline.cards.iter().any(|c| c.status.is_none())
    });
    h.get_by_label("Pause").click();
    h.step();
    h.step();
    h.get_by_label("Pausing after this step…");
    h.get_by_label("Resume");
    step_until(&mut h, 20, "the pause", |a| a.shared.timeline.paused);
    h.step();
    h.get_by_label("Paused before the next step");
    assert!(
        h.query_by_label("Pausing after this step…").is_none(),
        "one message at a time"
    );
    h.get_by_label("Resume").click();
    step_until(&mut h, 30, "the end", |a| {
        a.shared.timeline.finish.is_some()
    });
}

/// Issue 18: the model (over HTTP, through the scenario server) writes a reader for an
/// electrode table in an unexpected layout; the studio's dialog shows its code; the person
/// edits it and presses Run script; the edited reader runs in the sandbox, the step runs again
/// on its output and the run reaches the report, which names the generated code.
#[test]
fn a_reader_the_model_writes_is_shown_edited_approved_and_run_from_the_studio() {
    use support::scenario::{ODD_ELECTRODES, READER, no_python, reader_turns, registry};
    if no_python() {
        return;
    }
    let server = support::model_server::ModelServer::start(reader_turns(READER));
    let settings = server.settings();
    let maker: DeciderMaker = Arc::new(move |_| {
        let client = hydrogeo_studio::llm::Client::new(settings.clone()).ok()?;
        Some(Box::new(hydrogeo_studio::llm::ModelDecider::new(client)) as Box<dyn Decide>)
    });
    let (app, setup) = app_with(
        registry(),
        maker,
        &[("electrode_file", "electrodes.txt", ODD_ELECTRODES)],
    );
    let mut h = harness(app);
    h.get_by_label("Auto to report").click();
    step_until(&mut h, 60, "the script review", |a| !a.dialogs.is_empty());
    h.get_by_label("Review a generated script");
    h.get_by_label_contains("float(parts[0][1:])");
    h.get_by_label("Edit before running").click();
    h.step();
    // The dialog grows to its editing size over several frames (the code area's height is
    // animated); a person waits for it, and so does the test: until "Run script" stops moving.
    settle(&mut h, "Run script");
    // Two multi-line fields are on screen: the note box and, drawn last in its dialog, the
    // script editor.
    h.get_all_by_role(egui::accesskit::Role::MultilineTextInput)
        .last()
        .expect("the script editor")
        .focus();
    h.step();
    h.get_all_by_role(egui::accesskit::Role::MultilineTextInput)
        .last()
        .expect("the script editor")
        .type_text("# checked by hand\n");
    h.step();
    h.get_by_label("Run script").click();
    h.step();
    step_until(&mut h, 60, "the end", |a| {
        a.shared.timeline.finish.is_some()
    });
    assert_eq!(server.unanswered(), Vec::<String>::new());
    let run = std::fs::read_dir(&setup.runs)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let edited = std::fs::read_to_string(run.join("scripts/1/edited.py")).unwrap();
    assert!(
        edited.contains("# checked by hand") && edited.contains("float(parts[0][1:])"),
        "{edited}"
    );
    let record: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("scripts/1/record.json")).unwrap())
            .unwrap();
    assert_eq!(
        (record["decision"].as_str(), record["status"].as_str()),
        (Some("run"), Some("ok"))
    );
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(
        md.contains("### Reader 1") && md.contains("Decision: **run** by you"),
        "{md}"
    );
}

/// Issue 18: with Flexible ticked in the studio's settings, the run is flexible (not only
/// recorded as such): the model's question (over HTTP) reaches the studio's question dialog,
/// and the person's answer reaches the model in its next prompt.
#[test]
fn a_question_from_the_model_reaches_the_dialog_and_the_answer_reaches_the_model() {
    use support::model_server::{DECISION, ModelServer, Turn};
    let server = ModelServer::start(vec![
        Turn::decide(serde_json::json!({"why": "the clay decides the model",
            "propose": {"kind": "question", "question": "Is there clay above the water table?",
                        "options": ["yes", "no"]}})),
        Turn::choose("load", "data first"),
        Turn::choose("invert", "then a model"),
        Turn::choose("report", "then the report"),
        Turn::decide(serde_json::json!({"why": "the report answers it", "done": true})),
    ]);
    let settings = server.settings();
    let maker: DeciderMaker = Arc::new(move |_| {
        let client = hydrogeo_studio::llm::Client::new(settings.clone()).ok()?;
        Some(Box::new(hydrogeo_studio::llm::ModelDecider::new(client)) as Box<dyn Decide>)
    });
    let (mut app, _setup) = app(chain(0), maker);
    app.settings.flexible = true;
    let mut h = harness(app);
    h.get_by_label("Auto to report").click();
    step_until(&mut h, 30, "the question", |a| !a.dialogs.is_empty());
    h.get_by_label("A question from the run");
    h.get_all_by_label("Is there clay above the water table?")
        .next()
        .unwrap();
    h.get_by_label("no").click();
    h.step();
    step_until(&mut h, 30, "the end", |a| {
        a.shared.timeline.finish.is_some()
    });
    assert_eq!(server.unanswered(), Vec::<String>::new());
    let decisions = server.prompts_with(DECISION);
    assert!(decisions[0].contains("(flexible mode)"), "{}", decisions[0]);
    assert!(
        decisions[1]
            .contains("You asked: Is there clay above the water table? The user chose: no."),
        "{}",
        decisions[1]
    );
}

/// Issue 24 item 1: a folder of real data files and no project.json. File → New project from
/// folder… reads every file, gives the ERT file its role and leaves the README out, writes
/// project.json beside the data (which are not changed) and opens it; Auto to report then
/// runs it to a report.
#[test]
fn a_new_project_from_a_folder_of_data_runs_to_a_report() {
    let Some(dat) = field_data::data("ert/gimli/bedrock.dat") else {
        return;
    };
    let Some(readme) = field_data::data("ert/README.txt") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("ert")).unwrap();
    std::fs::copy(&dat, dir.path().join("ert/bedrock.dat")).unwrap();
    std::fs::copy(&readme, dir.path().join("README.txt")).unwrap();
    let app = StudioApp::new(StudioConfig {
        project: dir.path().to_path_buf(),
        registry: Arc::new(hydrogeo_studio::catalog::registry()),
        decider: no_model(),
        picker: Arc::new(NoPicker),
        runs_dir: None,
        exit_after_first_frame: false,
        unattended: Default::default(),
        settings: None,
        chat_model: None,
    });
    let mut h = harness(app);
    h.step();
    assert!(
        h.state()
            .shared
            .project_error
            .as_ref()
            .is_some_and(|e| e.contains("New project from folder")),
        "a folder without project.json says how to make one: {:?}",
        h.state().shared.project_error
    );
    h.get_by_label("File").click();
    for _ in 0..3 {
        h.step();
    }
    h.get_by_label("New project from folder…").click();
    for _ in 0..20 {
        h.step();
        if h.query_by_label("Read the folder").is_some() {
            break;
        }
    }
    h.state_mut().new_project.folder = dir.path().display().to_string();
    h.get_by_label("Read the folder").click();
    for _ in 0..20 {
        h.step();
        if h.query_by_label("ert/bedrock.dat").is_some() {
            break;
        }
    }
    h.get_by_label("ert/bedrock.dat");
    let roles: Vec<(String, Option<String>)> = h
        .state()
        .new_project
        .files
        .iter()
        .map(|f| (f.path.display().to_string(), f.role.clone()))
        .collect();
    assert_eq!(
        roles,
        vec![
            ("README.txt".to_string(), None),
            ("ert/bedrock.dat".to_string(), Some("ert_files".to_string())),
        ]
    );
    h.state_mut().new_project.goal = "Where is the bedrock?".into();
    h.step();
    h.get_by_label("Create project").click();
    h.step();
    h.step();
    let written: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("project.json")).expect("project.json written"),
    )
    .unwrap();
    assert_eq!(
        written["inputs"],
        serde_json::json!({"ert_files": ["ert/bedrock.dat"]})
    );
    assert_eq!(
        std::fs::read(dir.path().join("ert/bedrock.dat")).unwrap(),
        std::fs::read(&dat).unwrap(),
        "the data are only read"
    );
    let project = h
        .state()
        .shared
        .project
        .as_ref()
        .expect("the new project is open");
    assert_eq!(project.goal, "Where is the bedrock?");
    h.get_by_label("Auto to report").click();
    step_until(&mut h, 600, "the report", |a| {
        a.shared.timeline.finish.is_some()
    });
    let finish = h.state().shared.timeline.finish.clone().unwrap();
    let report = PathBuf::from(finish.report.clone().expect("a report"));
    assert!(report.is_file(), "{finish:?}");
    assert!(
        std::fs::read_to_string(&report)
            .unwrap()
            .contains("Where is the bedrock?")
    );
}

/// Issue 20: the chat answers "what is the water table depth?" from the run's answers — the
/// scripted model calls `get_answers`, the person approves, and the tool's result carries
/// the number, the methods and the figure (an answer put on the shelf as a run would).
#[test]
fn the_chat_reads_the_water_table_from_the_answers() {
    use hydrogeo_studio::catalog::answers::{Answer, Answers, Evidence, Question, QuestionKind};
    use hydrogeo_studio::catalog::kit::{Held, keys};
    use hydrogeo_studio::llm::harness::{ChatMessage, ChatModel, Role, ToolCall};
    let seen: Arc<Mutex<String>> = Arc::default();
    let model = move |seen: Arc<Mutex<String>>| {
        Turns(0, move |turn: usize, msgs: &[ChatMessage]| {
            if turn == 1 {
                ChatMessage::assistant(
                    "Let me read the answers.",
                    vec![ToolCall {
                        id: "c1".into(),
                        name: "get_answers".into(),
                        arguments: serde_json::json!({}),
                    }],
                )
            } else {
                let last = msgs.iter().rev().find(|m| m.role == Role::Tool).unwrap();
                *seen.lock().unwrap() = last.content.clone();
                ChatMessage::assistant("The water table lies at 4.1 ± 0.2 m.", vec![])
            }
        })
    };
    let q = Question {
        kind: QuestionKind::WaterTableDepth,
        words: "Where is the water table".into(),
        at_depth_m: None,
    };
    let ev = |m: &str, v: f64, s: f64| Evidence {
        method: m.into(),
        value: v,
        uncertainty: s,
        how: "test".into(),
        product: "p".into(),
        file: None,
    };
    let answer = Answer::depth(
        &q,
        "water table",
        vec![ev("ERT", 4.0, 0.3), ev("GPR", 4.2, 0.3)],
        Value::Null,
    );
    let held = Held::new(
        Answers {
            answers: vec![answer],
            answerable: vec![],
        },
        "1 of 1 question(s) answered",
    )
    .file(PathBuf::from("figures/answers_evidence.png"));
    let model_seen = seen.clone();
    let dir = tempfile::tempdir().unwrap();
    let mut h = chat_harness(
        dir.path(),
        Arc::new(move || Some(Box::new(model(model_seen.clone())) as Box<dyn ChatModel>)),
    );
    h.state().shared.shelf.put(keys::ANSWERS, Arc::new(held));
    h.state_mut().chat.input = "What is the water table depth?".into();
    h.get_by_label("Send").click();
    step_until(&mut h, 20, "the get_answers call", |a| {
        a.chat.pending.is_some()
    });
    h.get_by_label("Approve").click();
    step_until(&mut h, 20, "the end of the turn", |a| !a.chat.working());
    let result = seen.lock().unwrap().clone();
    let v: Value = serde_json::from_str(&result).expect("the tool's result is the answers' JSON");
    let a = &v["answers"][0];
    assert_eq!(a["kind"], "water_table_depth");
    // Inverse-variance of 4.0 and 4.2 at equal σ 0.3: 4.1 ± 0.212.
    assert!((a["value"].as_f64().unwrap() - 4.1).abs() < 1e-9, "{a}");
    assert_eq!(a["agreement"], "agree");
    assert_eq!(a["evidence"].as_array().unwrap().len(), 2);
    assert_eq!(v["files"][0], "figures/answers_evidence.png");
    h.get_by_label_contains("4.1 ± 0.2 m");
}

/// Issue 24 item 5: Settings' "Test connection" makes the same check as `hydrogeo-studio
/// models` — one request over HTTP to the endpoint typed there, with the key typed for the
/// session — off the UI thread, and shows the endpoint's answer (a loopback server here).
#[test]
fn test_connection_in_settings_asks_the_endpoint_and_shows_its_answer() {
    use support::model_server::{ModelServer, Reply, Turn};
    let server = ModelServer::start(vec![Turn::any(Reply::Text("pong".into()))]);
    let (mut app, _setup) = app(chain(0), no_model());
    app.settings.provider = "openai".into();
    app.settings.base_url = server.url.clone();
    app.settings.model = "scenario-model".into();
    app.settings_window.typed_key = "sk-typed-0123456789".into();
    app.settings_window.open = true;
    let mut h = harness(app);
    h.run();
    h.get_by_label("Test connection").click();
    step_until(&mut h, 20, "the endpoint's answer", |a| {
        a.settings_window.check.is_some()
    });
    h.get_by_label_contains("The endpoint answered: \"pong\"");
    assert_eq!(server.bodies().len(), 1, "one request");
    assert_eq!(server.unanswered(), Vec::<String>::new());
}

/// Issue 24 item 4: the newest exchange is at the bottom — messages and the notices that
/// answer them in the order they came (the notices used to be drawn after every message, so a
/// new message appeared above the old notices), and the view follows it.
#[test]
fn the_chat_keeps_the_newest_exchange_at_the_bottom_and_in_view() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("project.json"), r#"{"goal": "g"}"#).unwrap();
    // No chat model: each message is answered by a notice that none is connected.
    let mut h = chat_harness(dir.path(), Arc::new(|| None));
    for word in ["first", "second", "third"] {
        h.state_mut().chat.input = format!("the {word} message");
        h.get_by_label("Send").click();
        for _ in 0..3 {
            h.step();
        }
    }
    let top = |h: &Harness<'static, StudioApp>, l: &str| h.get_by_label(l).rect().top();
    let (a, b, c) = (
        top(&h, "You: the first message"),
        top(&h, "You: the second message"),
        top(&h, "You: the third message"),
    );
    let mut notices: Vec<f32> = h
        .get_all_by_label_contains("No model is connected")
        .map(|n| n.rect().top())
        .collect();
    notices.sort_by(f32::total_cmp);
    assert_eq!(notices.len(), 3);
    assert!(
        a < notices[0] && notices[0] < b && b < notices[1] && notices[1] < c && c < notices[2],
        "in the order they came: {a} {notices:?} {b} {c}"
    );
    // In view: the newest notice lies inside the window.
    assert!(
        notices[2] < 900.0,
        "the newest is visible without scrolling: {notices:?}"
    );
}
