//! The hand-over of the ERT page's model to a run: `handover.json` written and read back, a
//! missing or corrupt record and a model of other data refused by name, and a project whose
//! `studio_inversion_dir` names a hand-over running to its report without inverting again.

use super::*;
use crate::runtime::step::DecidedBy;
use crate::runtime::{Project, StepStatus, invoke};
use serde_json::json;
use std::sync::OnceLock;

/// The first survey of the bundled example (always present: no field data needed).
fn example_survey_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/example/ert")
        .join(name)
}

/// A project on the example's first survey with the page-like settings the tests use: λ 7,
/// two iterations, no λ retries in the evaluation (to keep the tests short).
fn project(dir: &Path) -> Project {
    let text = json!({
        "goal": "Invert the ERT line",
        "inputs": {keys::ERT_FILES: [example_survey_file("2024-05-01.dat").display().to_string()]},
        "config": {
            keys::INVERSION_PARAMS: {"lambda": 7.0, "max_iterations": 2},
            keys::AUTO_ADJUST: false,
            keys::INSTRUMENT: "unified",
        }
    });
    let file = dir.join("project.json");
    std::fs::write(&file, text.to_string()).expect("project written");
    Project::load(&file).expect("project reads")
}

/// The page's inversion of the example's first survey (made once for every test here): the
/// loaded surveys, the model, and its record as the ERT page makes it.
fn page_inversion() -> &'static (SurveySet, ErtModel, Handover) {
    static PAGE: OnceLock<(SurveySet, ErtModel, Handover)> = OnceLock::new();
    PAGE.get_or_init(|| {
        let tmp = tempfile::tempdir().expect("temp dir");
        let ctx = project(tmp.path()).context();
        let settings = ErtSettings::read(&ctx).expect("settings");
        let inputs = ErtInputs::of(&ctx).expect("inputs");
        let set = run::load(&inputs, settings.instrument).expect("loads").set;
        let cancel = std::sync::atomic::AtomicBool::new(false);
        let model = run::invert(&set, &settings, &mut |_, _| {}, &cancel).expect("inverts");
        // 2026-01-02 03:04:05 UTC.
        let record = Handover::of_page(&model, &settings, &set.surveys, 1_767_323_045);
        (set, model, record)
    })
}

#[test]
fn handover_json_round_trips_with_the_model_and_names_the_pages_settings() {
    let (_, model, record) = page_inversion();
    let tmp = tempfile::tempdir().expect("temp dir");
    let files = write_handover(tmp.path(), record, model).expect("written");
    assert!(files.contains(&tmp.path().join(HANDOVER_FILE)), "{files:?}");
    assert!(tmp.path().join("ert_model/model.json").is_file());
    let (back, back_model) = read_handover(tmp.path()).expect("read back");
    assert_eq!(&back, record);
    assert_eq!(back_model.chi2(), model.chi2());
    assert_eq!(back_model.steps()[0].rho_ohm_m, model.steps()[0].rho_ohm_m);
    // The record holds what the page's settings were, not defaults.
    assert_eq!(back.inversion_params.lambda, 7.0);
    assert_eq!(back.inversion_params.max_iterations, 2);
    assert_eq!(back.instrument, Instrument::Unified);
    assert_eq!(back.surveys.len(), 1);
    assert_eq!(back.surveys[0].label, "2024-05-01.dat");
    assert!(back.surveys[0].n_quadrupoles > 100, "{:?}", back.surveys);
    let s = back.sentence();
    assert!(
        s.starts_with(
            "ERT page inversion taken over: λ 7, scheme single survey, instrument unified"
        ),
        "{s}"
    );
    assert!(s.contains(&format!("χ² {:.2}", model.chi2())), "{s}");
    assert!(s.contains("(at most 2)"), "{s}");
    assert!(s.ends_with("finished 2026-01-02 03:04:05 UTC"), "{s}");
}

#[test]
fn a_missing_or_corrupt_record_is_an_error_naming_the_file() {
    let (_, model, record) = page_inversion();
    let tmp = tempfile::tempdir().expect("temp dir");
    let file = tmp.path().join(HANDOVER_FILE);
    let missing = read_handover(tmp.path())
        .expect_err("nothing written")
        .to_string();
    assert!(missing.contains(&file.display().to_string()), "{missing}");
    assert!(missing.contains("no hand-over record"), "{missing}");
    std::fs::write(&file, "{ not json").expect("written");
    let corrupt = read_handover(tmp.path()).expect_err("corrupt").to_string();
    assert!(corrupt.contains(&file.display().to_string()), "{corrupt}");
    assert!(
        corrupt.contains("not a readable hand-over record"),
        "{corrupt}"
    );
    let mut v = serde_json::to_value(record).expect("json");
    v["version"] = json!(99);
    std::fs::write(&file, v.to_string()).expect("written");
    let version = read_handover(tmp.path()).expect_err("version").to_string();
    assert!(version.contains("version 99"), "{version}");
    // A record without its model names the bundle folder.
    std::fs::write(&file, serde_json::to_string(record).expect("json")).expect("written");
    let bundle = read_handover(tmp.path()).expect_err("no model").to_string();
    assert!(
        bundle.contains(&tmp.path().join("ert_model").display().to_string()),
        "{bundle}"
    );
    write_handover(tmp.path(), record, model).expect("written");
    assert!(read_handover(tmp.path()).is_ok());
}

#[test]
fn a_model_of_other_data_is_refused_naming_what_differs() {
    let (set, model, record) = page_inversion();
    assert!(check_matches(record, model, &set.surveys).is_ok());
    // Fewer quadrupoles and one electrode more in the run's survey.
    let mut other = set.surveys[0].clone();
    let n = other.quadrupoles.len();
    other.quadrupoles.truncate(n - 10);
    other.electrodes.push(other.electrodes[0].clone());
    let e = check_matches(record, model, std::slice::from_ref(&other))
        .expect_err("other data")
        .to_string();
    assert!(e.contains("does not match the data this run loaded"), "{e}");
    assert!(
        e.contains(&format!(
            "{n} quadrupoles on the page (2024-05-01.dat), {} in this run",
            n - 10
        )),
        "{e}"
    );
    assert!(e.contains("electrodes on the page"), "{e}");
    // Two surveys loaded against the page's one.
    let two = [set.surveys[0].clone(), set.surveys[0].clone()];
    let e = check_matches(record, model, &two)
        .expect_err("two surveys")
        .to_string();
    assert!(
        e.contains("the page inverted 1 survey(s), this run loaded 2"),
        "{e}"
    );
    assert!(
        e.contains("the page's model is of one survey, this run loaded 2"),
        "{e}"
    );
}

#[test]
fn taking_over_a_model_of_other_data_is_a_failed_step_and_the_run_inverts_itself() {
    let (_, model, record) = page_inversion();
    let tmp = tempfile::tempdir().expect("temp dir");
    let handover = tmp.path().join("handover");
    let mut wrong = record.clone();
    wrong.surveys[0].n_quadrupoles += 1;
    write_handover(&handover, &wrong, model).expect("written");
    let mut p = project(tmp.path());
    p.inputs.insert(
        keys::STUDIO_INVERSION_DIR.into(),
        handover.display().to_string().into(),
    );
    let mut ctx = p.context().with_output_dir(tmp.path());
    let reg = crate::catalog::registry();
    assert_eq!(
        invoke(&mut ctx, &reg, "load_ert_surveys", "", DecidedBy::Policy),
        StepStatus::Ok
    );
    // Before the take-over is tried, the run's own inversion is closed.
    assert!(!reg.get("invert_ert").expect("tool").available(&ctx));
    let next = crate::runtime::controller::next_by_policy(&ctx, &reg).map(|t| t.name.clone());
    assert_eq!(next.as_deref(), Some(LOAD_STUDIO_INVERSION));
    assert_eq!(
        invoke(&mut ctx, &reg, LOAD_STUDIO_INVERSION, "", DecidedBy::Policy),
        StepStatus::Failed
    );
    let error = &ctx.steps.last().expect("a step").error;
    assert!(error.contains("does not match"), "{error}");
    assert!(error.contains("quadrupoles on the page"), "{error}");
    assert!(ctx.product(keys::INVERSION_RESULTS).is_none());
    // A refused take-over leaves the run to invert by itself.
    assert!(reg.get("invert_ert").expect("tool").available(&ctx));
}

#[test]
fn a_project_naming_a_handover_runs_to_the_report_without_inverting_again() {
    let (_, model, record) = page_inversion();
    let tmp = tempfile::tempdir().expect("temp dir");
    let handover = tmp.path().join("handover");
    write_handover(&handover, record, model).expect("written");
    let mut p = project(tmp.path());
    p.config.insert(
        keys::STUDIO_INVERSION_DIR.into(),
        handover.display().to_string().into(),
    );
    let spec = crate::catalog::run_spec(p);
    let outcome = crate::runtime::session::run(spec, &crate::catalog::registry(), None)
        .expect("the run folder is written");
    let steps: Vec<(&str, StepStatus)> = outcome
        .context
        .steps
        .iter()
        .map(|s| (s.tool.as_str(), s.status))
        .collect();
    assert!(
        steps.contains(&(LOAD_STUDIO_INVERSION, StepStatus::Ok)),
        "{steps:?}"
    );
    assert!(
        steps.contains(&("evaluate_inversion", StepStatus::Ok)),
        "{steps:?}"
    );
    assert!(
        !steps
            .iter()
            .any(|(t, _)| *t == "invert_ert" || *t == "invert_time_lapse"),
        "{steps:?}"
    );
    let taken = held::<ErtModel>(&outcome.context, keys::INVERSION_RESULTS).expect("a model");
    assert_eq!(taken.chi2(), model.chi2());
    let report = std::fs::read_to_string(outcome.dir.join("report.md")).expect("report.md");
    assert!(report.contains(&record.sentence()), "{report}");
    let result = std::fs::read_to_string(outcome.dir.join("result.json")).expect("result.json");
    assert!(result.contains("\"taken_over_from\""), "{result}");
    assert!(outcome.dir.join("products/ert_model/model.json").is_file());
}

#[test]
fn taking_over_after_the_runs_own_inversion_lets_the_evaluation_run_again_on_it() {
    let (_, model, record) = page_inversion();
    let tmp = tempfile::tempdir().expect("temp dir");
    let handover = tmp.path().join("handover");
    write_handover(&handover, record, model).expect("written");
    let mut p = project(tmp.path());
    p.config.insert(
        keys::INVERSION_PARAMS.into(),
        json!({"lambda": 50.0, "max_iterations": 1}),
    );
    let mut ctx = p.context().with_output_dir(tmp.path());
    let reg = crate::catalog::registry();
    for tool in ["load_ert_surveys", "invert_ert", "evaluate_inversion"] {
        assert_eq!(
            invoke(&mut ctx, &reg, tool, "", DecidedBy::Policy),
            StepStatus::Ok,
            "{tool}"
        );
    }
    // Without a hand-over the page's tools are not offered at all.
    let extra = crate::runtime::toolbox::extra_tools(&ctx, &reg);
    assert!(!extra.iter().any(|t| t.name == TAKE_STUDIO_INVERSION));
    let named = json!({keys::STUDIO_INVERSION_DIR: handover.display().to_string()});
    let mut ctx = ctx.with_config(named.as_object().cloned().unwrap_or_default());
    let extra = crate::runtime::toolbox::extra_tools(&ctx, &reg);
    assert!(extra.iter().any(|t| t.name == TAKE_STUDIO_INVERSION));
    let evaluate = reg.get("evaluate_inversion").expect("tool");
    assert!(!evaluate.available(&ctx), "evaluated once already");
    assert_eq!(
        invoke(&mut ctx, &reg, TAKE_STUDIO_INVERSION, "", DecidedBy::Policy),
        StepStatus::Ok
    );
    let held_now = held::<ErtModel>(&ctx, keys::INVERSION_RESULTS).expect("a model");
    assert_eq!(
        held_now.lambda(),
        7.0,
        "the page's model replaced the run's"
    );
    assert!(evaluate.available(&ctx), "the evaluation runs again on it");
}
