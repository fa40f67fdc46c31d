//! Snapshot (PNG) tests of two key screens, rendered on the CPU (Mesa lavapipe or llvmpipe):
//! the timeline in the middle of a run, and the script review dialog. Regenerate with
//! `UPDATE_SNAPSHOTS=1 cargo test --test studio_snapshots` after an intended change and look at
//! the images before committing them.

use std::path::PathBuf;
use std::sync::Arc;

use egui_kittest::Harness;
use hydrogeo_studio::runtime::Registry;
use hydrogeo_studio::runtime::events::{Event, RouteStep};
use hydrogeo_studio::runtime::step::StepStatus;
use hydrogeo_studio::studio::app::NoPicker;
use hydrogeo_studio::studio::{StudioApp, StudioConfig};

fn app(dir: &std::path::Path) -> StudioApp {
    std::fs::write(
        dir.join("project.json"),
        r#"{"goal": "Where is the water table, how did the plume change, and what is the water content?", "inputs": {}}"#,
    )
    .unwrap();
    StudioApp::new(StudioConfig {
        project: dir.to_path_buf(),
        registry: Arc::new(Registry::new()),
        decider: Arc::new(|_| None),
        picker: Arc::new(NoPicker),
        runs_dir: None,
        exit_after_first_frame: false,
        unattended: Default::default(),
        settings: None,
        chat_model: Some(Arc::new(|| None)),
    })
}

fn route(items: &[(&str, &str)]) -> Vec<RouteStep> {
    items
        .iter()
        .map(|(t, l)| RouteStep {
            tool: t.to_string(),
            label: l.to_string(),
            module: "ert".into(),
        })
        .collect()
}

/// The events of a run three steps in: two done (one with a note), one running, four ahead.
fn mid_run() -> Vec<Event> {
    vec![
        Event::RunStarted {
            goal: "Where is the water table, how did the plume change, and what is the water content?".into(),
            run_dir: "runs/2026-11-30_090000-example".into(),
            mode: "auto".into(),
            decider: "no model (dependency order)".into(),
        },
        Event::Route { step: 0, ahead: route(&[("load_ert_surveys", "Load ERT data"), ("invert_time_lapse", "Run time-lapse inversion"), ("evaluate_inversion", "Evaluate inversion quality"), ("convert_water_content", "Convert to water content"), ("write_report", "Write the report")]) },
        Event::StepStarted { step: 1, tool: "load_ert_surveys".into(), label: "Load ERT data".into(), module: "ert".into(), reason: "next available step".into() },
        Event::StepFinished {
            step: 1,
            tool: "load_ert_surveys".into(),
            label: "Load ERT data".into(),
            module: "ert".into(),
            status: StepStatus::Ok,
            summary: "4 surveys, 48 electrodes, 578 dipole-dipole measurements each, 2024-05-01 to 2024-08-01.".into(),
            error: String::new(),
            produced: vec!["ert_data".into()],
            figures: vec![],
            seconds: 0.4,
        },
        Event::Route { step: 1, ahead: route(&[("invert_time_lapse", "Run time-lapse inversion"), ("evaluate_inversion", "Evaluate inversion quality"), ("convert_water_content", "Convert to water content"), ("write_report", "Write the report")]) },
        Event::StepStarted { step: 2, tool: "invert_time_lapse".into(), label: "Run time-lapse inversion".into(), module: "ert".into(), reason: "four surveys are loaded and the question is how the plume changed".into() },
        Event::Progress { step: 2, fraction: 0.6, detail: "iteration 4, chi2 1.8".into() },
    ]
}

/// A project folder at a fixed path, so the path shown in the window is the same every run.
fn fixed_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn the_timeline_mid_run() {
    let dir = fixed_dir("hgx-snapshot-timeline");
    let mut app = app(&dir);
    app.shared.timeline.replay = true;
    for e in mid_run() {
        app.shared.timeline.apply(&e);
    }
    app.shared
        .timeline
        .queue_note("use lambda 10 for the time-lapse");
    let mut h = Harness::builder()
        .with_size(egui::vec2(1400.0, 900.0))
        .with_context_setup(hydrogeo_studio::studio::setup_fonts)
        .wgpu()
        .build_ui_state(|ui, app: &mut StudioApp| app.ui_root(ui), app);
    h.run_steps(3);
    h.snapshot("timeline_mid_run");
}

#[test]
fn the_script_review_dialog() {
    let dir = fixed_dir("hgx-snapshot-script");
    let app = app(&dir);
    let (tx, _rx) = crossbeam_channel::unbounded();
    let mut app = app;
    app.dialogs.on_event(
        &Event::ScriptReview {
            id: 1,
            purpose: "Load ERT data failed: the electrode table uses semicolons and decimal commas. This reader splits on semicolons and reads the commas as decimal points, writing x and elevation in metres.".into(),
            inputs: vec![("electrode_file".into(), "/data/site/ert/electrodes.txt".into())],
            code: "def adapt(text):\n    # skip the header line, then split on semicolons\n    rows = []\n    for line in text.splitlines()[1:]:\n        n, x, z = line.split(';')\n        rows.append([float(n), float(x.replace(',', '.')), float(z.replace(',', '.'))])\n    return rows\n".into(),
            language: "python-adapter".into(),
            protections: vec![
                "checked with Python's parser before you were asked".into(),
                "runs in a process of its own, in its own folder, with a time limit".into(),
                "Landlock (kernel ABI v6): writes only inside its folder".into(),
            ],
        },
        &tx,
    );
    let mut h = Harness::builder()
        .with_size(egui::vec2(1400.0, 900.0))
        .with_context_setup(hydrogeo_studio::studio::setup_fonts)
        .wgpu()
        .build_ui_state(|ui, app: &mut StudioApp| app.ui_root(ui), app);
    h.run_steps(3);
    h.snapshot("script_review_dialog");
}
