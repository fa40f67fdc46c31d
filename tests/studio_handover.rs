//! Issue 26, item 5: an inversion run on the studio's ERT page is taken over by a run. The
//! studio is driven like a person would (egui_kittest): λ set on the ERT page, Run inversion,
//! then Auto to report. The run's timeline has no second inversion step, and the report names
//! the page's settings.

#[path = "support/studio.rs"]
mod studio_support;
use studio_support::{harness, step_until};

use std::path::{Path, PathBuf};
use std::sync::Arc;

use egui_kittest::kittest::Queryable;
use hydrogeo_studio::runtime::StepStatus;
use hydrogeo_studio::studio::app::{DeciderMaker, NoPicker};
use hydrogeo_studio::studio::{StudioApp, StudioConfig};
use serde_json::{Value, json};

/// The bundled example's first survey (always present).
fn example_survey() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/example/ert/2024-05-01.dat")
}

/// The studio on a one-survey project (λ 20 in the project, two iterations, no λ retries in
/// the evaluation, to keep the test short) with the catalog's tools and no model.
fn studio(dir: &Path) -> StudioApp {
    let project = json!({
        "goal": "Invert the ERT line",
        "inputs": {"ert_files": [example_survey().display().to_string()]},
        "config": {
            "inversion_params": {"lambda": 20.0, "max_iterations": 2},
            "auto_adjust": false,
            "instrument": "unified"
        }
    });
    std::fs::write(dir.join("project.json"), project.to_string()).expect("project written");
    let no_model: DeciderMaker = Arc::new(|_| None);
    StudioApp::new(StudioConfig {
        project: dir.to_path_buf(),
        registry: Arc::new(hydrogeo_studio::catalog::registry()),
        decider: no_model,
        picker: Arc::new(NoPicker),
        runs_dir: Some(dir.join("runs")),
        exit_after_first_frame: false,
        unattended: Default::default(),
        settings: None,
        chat_model: None,
    })
}

/// The ERT page's state as the chat reads it.
fn ert_state(app: &StudioApp) -> Value {
    let page = app
        .panels
        .iter()
        .find(|p| p.key() == "ert")
        .expect("an ERT page");
    page.describe(&app.shared)["state"].clone()
}

#[test]
fn an_inversion_run_on_the_ert_page_is_taken_over_by_a_run() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let mut h = harness(studio(tmp.path()));
    h.step();
    h.get_by_label("ERT").click();
    h.step();
    // λ 12.5 on the page (the chat's action on the panel, as a person's edit is kept).
    let window = h.ctx.clone();
    {
        let app = h.state_mut();
        let page = app
            .panels
            .iter_mut()
            .find(|p| p.key() == "ert")
            .expect("an ERT page");
        page.apply(
            "set_lambda",
            &json!({"lambda": 12.5}),
            &mut app.shared,
            &window,
        )
        .expect("λ set");
    }
    h.step();
    h.get_by_label("Run inversion").click();
    step_until(&mut h, 600, "the page's inversion", |a| {
        ert_state(a)["status"]
            .as_str()
            .is_some_and(|s| s.starts_with("Inversion f"))
    });
    let state = ert_state(h.state());
    let status = state["status"].as_str().unwrap_or_default().to_string();
    assert!(status.starts_with("Inversion finished"), "{status}");
    assert_eq!(state["model"]["lambda"], json!(12.5));
    let page_chi2 = state["model"]["chi2"].as_f64().expect("the page's χ²");
    h.get_by_label_contains("takes this page's model over");

    h.get_by_label("Auto to report").click();
    step_until(&mut h, 600, "the run's report", |a| {
        a.shared.timeline.finish.is_some()
    });
    let app = h.state();
    let cards: Vec<(String, Option<StepStatus>)> = app
        .shared
        .timeline
        .cards
        .iter()
        .map(|c| (c.tool.clone(), c.status))
        .collect();
    assert!(
        cards.contains(&("load_studio_inversion".to_string(), Some(StepStatus::Ok))),
        "{cards:?}"
    );
    assert!(
        !cards
            .iter()
            .any(|(t, _)| t == "invert_ert" || t == "invert_time_lapse"),
        "a second inversion ran: {cards:?}"
    );
    assert!(
        cards.contains(&("evaluate_inversion".to_string(), Some(StepStatus::Ok))),
        "{cards:?}"
    );
    assert!(
        app.shared
            .messages
            .iter()
            .any(|m| m.contains("handed to the run")),
        "{:?}",
        app.shared.messages
    );
    let finish = app.shared.timeline.finish.clone().expect("finished");
    let report = std::fs::read_to_string(finish.report.as_deref().expect("a report"))
        .expect("the report reads");
    let line = report
        .lines()
        .find(|l| l.starts_with("ERT page inversion taken over"))
        .unwrap_or_else(|| panic!("the report does not name the page's inversion:\n{report}"));
    assert!(
        line.starts_with(
            "ERT page inversion taken over: λ 12.5, scheme single survey, instrument unified, "
        ),
        "{line}"
    );
    assert!(line.contains("(at most 2)"), "{line}");
    assert!(line.contains(&format!("χ² {page_chi2:.2}")), "{line}");
    // The timeline says so too.
    assert!(
        h.query_all_by_label_contains("ERT page inversion taken over: λ 12.5")
            .next()
            .is_some(),
        "the timeline does not show the take-over"
    );
}
