//! Issue 20: the answers checked against truths the code was not tuned on, each written by
//! the same writer `make-example --truth` uses (`example::write_project_from`) and run
//! headless without a model. Tolerances as for the bundled example: water table within
//! 0.5 m from at least two agreeing methods; the plume's centroid within 5 m along the line
//! and 2.5 m in depth, its evolution in the right direction; the bedrock's dip the truth's.

use std::path::Path;

use hydrogeo_studio::catalog;
use hydrogeo_studio::example::{Truth, write_project_from};
use hydrogeo_studio::runtime::Project;
use hydrogeo_studio::runtime::session::run;
use serde_json::Value;

/// Write `truth`'s project and run it; `result.json`.
fn run_truth(truth: &Truth, dir: &Path) -> Value {
    write_project_from(truth, dir).expect("the example writes");
    let project = Project::load(dir).expect("project.json loads");
    let out = run(catalog::run_spec(project), &catalog::registry(), None).expect("run folder");
    let text = std::fs::read_to_string(out.dir.join("result.json")).expect("result.json");
    serde_json::from_str(&text).expect("result.json parses")
}

fn answer<'a>(result: &'a Value, kind: &str) -> &'a Value {
    result["answers"]
        .as_array()
        .and_then(|a| a.iter().find(|a| a["kind"] == kind))
        .unwrap_or_else(|| panic!("no {kind} answer in {}", result["answers"]))
}

/// The water table within 0.5 m of `depth_m` from at least two methods that agree.
fn water_table_within(result: &Value, depth_m: f64) {
    let wt = answer(result, "water_table_depth");
    assert_eq!(wt["status"], "answered", "{wt}");
    let combined = wt["combined_from"].as_array().unwrap();
    assert!(combined.len() >= 2, "two agreeing methods: {wt}");
    for e in wt["evidence"].as_array().unwrap() {
        if combined.contains(&e["method"]) {
            let v = e["value"].as_f64().unwrap();
            assert!(
                (v - depth_m).abs() <= 0.5,
                "{} {v} m vs {depth_m} m: {wt}",
                e["method"]
            );
        }
    }
}

/// Water table at 2 m; the plume at x = 62 m, 6.5 m deep, shrinking.
#[test]
fn a_shallow_water_table_and_a_shrinking_plume_elsewhere() {
    let tmp = tempfile::tempdir().unwrap();
    let mut t = Truth::default();
    t.water_table_depth_m = 2.0;
    t.plume.x_m = 62.0;
    t.plume.depth_m = 6.5;
    t.plume.radius_m = [5.5, 4.5, 3.5, 2.5];
    let r = run_truth(&t, tmp.path());
    water_table_within(&r, 2.0);
    let ch = answer(&r, "change");
    let (x, d) = (
        ch["where"]["centroid_x_m"].as_f64().unwrap(),
        ch["where"]["centroid_depth_m"].as_f64().unwrap(),
    );
    assert!((x - 62.0).abs() <= 5.0, "centroid x {x}: {ch}");
    assert!((d - 6.5).abs() <= 2.5, "centroid depth {d}: {ch}");
    assert_eq!(ch["details"]["conductor_trend"], "shrinking", "{ch}");
}

/// Water table at 8 m (below what the GPR line reaches: GPR must say so, not answer).
#[test]
fn a_deep_water_table() {
    let tmp = tempfile::tempdir().unwrap();
    let mut t = Truth::default();
    t.water_table_depth_m = 8.0;
    let r = run_truth(&t, tmp.path());
    let wt = answer(&r, "water_table_depth");
    assert_eq!(wt["status"], "answered", "{wt}");
    let v = wt["value"].as_f64().unwrap();
    assert!(
        (v - 8.0).abs() <= 0.5 + wt["uncertainty"].as_f64().unwrap(),
        "{wt}"
    );
    for e in wt["evidence"].as_array().unwrap() {
        assert_ne!(e["method"], "GPR", "the GPR line reaches ~5.6 m only: {wt}");
    }
}

/// Bedrock dipping the other way (depth falls along the line): the seismic bedrock profile
/// falls too — its depth at the far end is less than at the near end.
#[test]
fn bedrock_dipping_the_other_way() {
    let tmp = tempfile::tempdir().unwrap();
    let mut t = Truth::default();
    t.bedrock = (12.0, -0.05);
    write_project_from(&t, tmp.path()).expect("the example writes");
    let mut project = Project::load(tmp.path()).expect("project.json loads");
    project.goal = "Where is the water table and how deep is the bedrock?".into();
    let out = run(catalog::run_spec(project), &catalog::registry(), None).expect("run folder");
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(out.dir.join("result.json")).unwrap())
            .unwrap();
    water_table_within(&r, 4.0);
    let rock = answer(&r, "bedrock_depth");
    assert_eq!(rock["status"], "answered", "{rock}");
    let xs: Vec<f64> = rock["where"]["x_m"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_f64)
        .collect();
    let ds: Vec<f64> = rock["where"]["depth_m"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_f64)
        .collect();
    // Least-squares slope of depth against x: the truth's is −0.05 m/m.
    let n = xs.len() as f64;
    let (mx, md) = (xs.iter().sum::<f64>() / n, ds.iter().sum::<f64>() / n);
    let slope = xs
        .iter()
        .zip(&ds)
        .map(|(x, d)| (x - mx) * (d - md))
        .sum::<f64>()
        / xs.iter().map(|x| (x - mx).powi(2)).sum::<f64>();
    assert!(
        slope < -0.02,
        "the bedrock falls along the line: slope {slope}"
    );
}
