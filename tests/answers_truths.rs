//! Issue 20: the answers checked against truths the code was not tuned on, each written by
//! the same writer `make-example --truth` uses (`example::write_project_from`) and run
//! headless without a model. Tolerances as for the bundled example: water table within
//! 0.5 m from at least two agreeing methods; the plume's centroid within 5 m along the line
//! and 2.5 m in depth, its evolution in the right direction; the bedrock's dip the truth's.

use std::path::Path;

use hydrogeo_studio::example::{Plume, Truth, tdem, write_project_from};
use serde_json::Value;

mod support;
use support::answers::{answer, centroid_within, result_of, run_project};

/// Write `truth`'s project and run it; `result.json`.
fn run_truth(truth: &Truth, dir: &Path) -> Value {
    write_project_from(truth, dir).expect("the example writes");
    result_of(&run_project(dir, None))
}

/// Water table at 2 m; the plume at x = 62 m, 6.5 m deep, shrinking.
fn shallow_and_shrinking() -> Truth {
    let d = Truth::default();
    Truth {
        water_table_depth_m: 2.0,
        plume: Plume {
            x_m: 62.0,
            depth_m: 6.5,
            radius_m: [5.5, 4.5, 3.5, 2.5],
            ..d.plume.clone()
        },
        ..d
    }
}

/// Water table at 8 m.
fn deep_water_table() -> Truth {
    Truth {
        water_table_depth_m: 8.0,
        ..Truth::default()
    }
}

/// Bedrock depth falling along the line (−0.05 m/m).
fn bedrock_reversed() -> Truth {
    Truth {
        bedrock: (12.0, -0.05),
        ..Truth::default()
    }
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
#[ignore = "issue 20, open: the water table (ERT and GPR within 0.5 m of 2 m), the centroid x and the trend (shrinking) pass, but the centroid depth is 3.6 m against 6.5 +/- 2.5 m (measured 2026-12-04, on the log ratio of the change; 3.1 m on percentages): the change is the annulus the shrinking conductor vacated, and the section resolves its shallow side, not the side 9-12 m deep"]
fn a_shallow_water_table_and_a_shrinking_plume_elsewhere() {
    let tmp = tempfile::tempdir().unwrap();
    let r = run_truth(&shallow_and_shrinking(), tmp.path());
    water_table_within(&r, 2.0);
    let ch = answer(&r, "change");
    centroid_within(ch, 62.0, 6.5, 5.0, 2.5);
    assert_eq!(ch["details"]["conductor_trend"], "shrinking", "{ch}");
}

/// Water table at 8 m (below what the GPR line reaches: GPR must say so, not answer).
#[test]
#[ignore = "issue 20, open: with the water table at 8 m the answer is 5.7 m (measured 2026-12-02): ERT 5.75 m (the strongest decrease lies above the truth's), GPR 5.46 m (a flat event on 68 % of the traces near the end of its 5.6 m window is taken as a reflector), seismic 12.8 m (disagreeing)"]
fn a_deep_water_table() {
    let tmp = tempfile::tempdir().unwrap();
    let r = run_truth(&deep_water_table(), tmp.path());
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
    write_project_from(&bedrock_reversed(), tmp.path()).expect("the example writes");
    let r = result_of(&run_project(
        tmp.path(),
        Some("Where is the water table and how deep is the bedrock?"),
    ));
    water_table_within(&r, 4.0);
    let rock = answer(&r, "bedrock_depth");
    assert_eq!(rock["status"], "answered", "{rock}");
    let floats = |v: &Value| -> Vec<f64> {
        v.as_array()
            .map(|a| a.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_default()
    };
    let (xs, ds) = (
        floats(&rock["where"]["x_m"]),
        floats(&rock["where"]["depth_m"]),
    );
    assert!(xs.len() >= 10 && xs.len() == ds.len(), "a profile: {rock}");
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

/// The three truths above.
fn the_three_truths() -> Vec<(&'static str, Truth)> {
    vec![
        (
            "shallow water table, shrinking plume",
            shallow_and_shrinking(),
        ),
        ("deep water table", deep_water_table()),
        ("bedrock dipping the other way", bedrock_reversed()),
    ]
}

/// Issue 21 acceptance: "the three example truths of the answers issue (make-example --truth)
/// pass their evaluations too". Every method's evaluation product in `result.json`
/// (ERT `evaluation_results`, `seismic_evaluation`, `tdem_evaluation`, `mt_evaluation`,
/// `gravmag_evaluation`, GPR `gpr_results`) is present and passed, on each truth.
#[test]
fn every_truth_passes_every_methods_evaluation() {
    const EVALUATIONS: [&str; 6] = [
        "evaluation_results",
        "seismic_evaluation",
        "tdem_evaluation",
        "mt_evaluation",
        "gravmag_evaluation",
        "gpr_results",
    ];
    for (name, truth) in the_three_truths() {
        let tmp = tempfile::tempdir().unwrap();
        let r = run_truth(&truth, tmp.path());
        assert_eq!(r["status"], "success", "{name}: {}", r["status"]);
        for key in EVALUATIONS {
            let e = &r["products"][key];
            eprintln!("{name}: {key}: {} {}", e["passed"], e["quality_score"]);
            assert_eq!(e["passed"], true, "{name}: {key} did not pass: {e}");
        }
    }
}

/// A TDEM line alone over conductive ground (100 Ω·m over 20 Ω·m, the water table 60 m
/// deep, bedrock at 150 m): the earliest gate's diffusion depth in 100 Ω·m is 40 m, so the
/// water table lies in the window the data resolve, and TDEM alone answers within 2σ of
/// 60 m with a σ under 15 m (a fifth of the depth).
#[test]
fn a_tdem_line_reads_a_water_table_60_m_deep_in_conductive_ground() {
    let truth = Truth {
        water_table_depth_m: 60.0,
        rho_ohm_m: (100.0, 20.0, 2000.0),
        bedrock: (150.0, 0.0),
        deep: (400.0, 100.0, 10.0, 1000.0),
        ..Truth::default()
    };
    let tmp = tempfile::tempdir().expect("temporary folder");
    let dir = tmp.path();
    let files = tdem::write(&truth, dir).expect("TDEM written");
    let mut inputs = serde_json::Map::new();
    for (role, path) in files {
        inputs.insert(role, Value::from(path.display().to_string()));
    }
    let project = serde_json::json!({
        "goal": "Where is the water table?",
        "inputs": inputs,
        "config": { "tdem_params": serde_json::from_str::<Value>(tdem::TDEM_PARAMS).expect("params") },
    });
    std::fs::write(dir.join("project.json"), project.to_string()).expect("project");
    let result = result_of(&run_project(dir, None));
    let wt = answer(&result, "water_table_depth");
    assert_eq!(wt["status"], "answered", "{wt}");
    let e = wt["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["method"] == "TDEM")
        .unwrap_or_else(|| panic!("TDEM evidence: {wt}"));
    let (v, sigma) = (
        e["value"].as_f64().unwrap(),
        e["uncertainty"].as_f64().unwrap(),
    );
    assert!(sigma > 0.0 && sigma < 15.0, "{e}");
    assert!(
        (v - 60.0).abs() <= 2.0 * sigma,
        "{v} ± {sigma} m vs 60 m: {e}"
    );
}
