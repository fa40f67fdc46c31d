//! Running a project headless without a model and reading its answers from `result.json`
//! (issue 20's acceptance tests).
#![allow(dead_code)]

use std::path::Path;

use hydrogeo_studio::catalog;
use hydrogeo_studio::runtime::Project;
use hydrogeo_studio::runtime::session::{RunOutcome, run};
use serde_json::Value;

/// Run `project` to its report, no model, through the CLI's and the studio's specification.
pub fn run_loaded(project: Project) -> RunOutcome {
    run(catalog::run_spec(project), &catalog::registry(), None).expect("run folder")
}

/// Load the project in `dir` (its goal replaced by `goal` when given) and run it.
pub fn run_project(dir: &Path, goal: Option<&str>) -> RunOutcome {
    let mut project = Project::load(dir).expect("project.json loads");
    if let Some(g) = goal {
        project.goal = g.to_string();
    }
    run_loaded(project)
}

/// The run's `result.json`.
pub fn result_of(out: &RunOutcome) -> Value {
    let text = std::fs::read_to_string(out.dir.join("result.json")).expect("result.json");
    serde_json::from_str(&text).expect("result.json parses")
}

/// The answer of `kind` (panics naming the answers there are).
pub fn answer<'a>(result: &'a Value, kind: &str) -> &'a Value {
    result["answers"]
        .as_array()
        .and_then(|a| a.iter().find(|a| a["kind"] == kind))
        .unwrap_or_else(|| panic!("no {kind} answer in {}", result["answers"]))
}

/// The change answer's centroid lies within `dx_m` of `x_m` along the line and `dd_m` of
/// `depth_m` in depth.
pub fn centroid_within(change: &Value, x_m: f64, depth_m: f64, dx_m: f64, dd_m: f64) {
    let (x, d) = (
        change["where"]["centroid_x_m"].as_f64().unwrap(),
        change["where"]["centroid_depth_m"].as_f64().unwrap(),
    );
    assert!((x - x_m).abs() <= dx_m, "centroid x {x} vs {x_m}: {change}");
    assert!(
        (d - depth_m).abs() <= dd_m,
        "centroid depth {d} vs {depth_m}: {change}"
    );
}
