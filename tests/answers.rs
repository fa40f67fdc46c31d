//! Issue 20's acceptance: the report answers the goal's questions. Headless runs without a
//! model, through the same run specification the CLI and the studio use; each test works in
//! a temporary folder (the bundled files are never touched).
//!
//! Truths: `assets/example/truth.json` (water table 4 m, plume centred at x = 40 m, 7.5 m
//! deep, growing; Archie φ 0.35, m 1.8, n 2, ρw 20 Ω·m over ρ 653.6 / 132.3 Ω·m, so θ from
//! 0.35·√(132.3/653.6) = 0.157 above the water table to φ = 0.35 below it). Königsee: the
//! depth of pyGIMLi's 2000 m/s contour in `tests/oracles/koenigsee_pygimli_model.json`.

use std::path::{Path, PathBuf};

use hydrogeo_studio::catalog;
use hydrogeo_studio::runtime::Project;
use hydrogeo_studio::runtime::session::{RunOutcome, run};
use serde_json::Value;

fn copy_tree(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).expect("create folder");
    for entry in std::fs::read_dir(src).expect("folder exists") {
        let path = entry.expect("dir entry").path();
        let Some(name) = path.file_name() else {
            continue;
        };
        if name == "runs" {
            continue;
        }
        if path.is_dir() {
            copy_tree(&path, &dst.join(name));
        } else {
            std::fs::copy(&path, dst.join(name)).expect("copy file");
        }
    }
}

fn run_project(dir: &Path, goal: Option<&str>) -> RunOutcome {
    let mut project = Project::load(dir).expect("project.json loads");
    if let Some(g) = goal {
        project.goal = g.to_string();
    }
    run(catalog::run_spec(project), &catalog::registry(), None).expect("run folder")
}

fn result_of(out: &RunOutcome) -> Value {
    let text = std::fs::read_to_string(out.dir.join("result.json")).expect("result.json");
    serde_json::from_str(&text).expect("result.json parses")
}

fn answer<'a>(result: &'a Value, kind: &str) -> &'a Value {
    result["answers"]
        .as_array()
        .and_then(|a| a.iter().find(|a| a["kind"] == kind))
        .unwrap_or_else(|| panic!("no {kind} answer in {}", result["answers"]))
}

fn example() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("temporary folder");
    let dst = tmp.path().join("example");
    copy_tree(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/example"),
        &dst,
    );
    (tmp, dst)
}

/// The bundled example, no model: its goal's three questions are answered; the water table
/// within 0.5 m of 4 m from at least two agreeing methods; the plume's centroid within 5 m of
/// x = 40 m and 2.5 m of 7.5 m deep, growing; the water content per depth within the truth's
/// Archie range (0.157–0.35 m³/m³, widened by twice the Monte Carlo σ of each band).
#[test]
#[ignore = "issue 20, open: the water table (within 0.5 m of 4 m, methods agreeing) and the plume's centroid x pass, but its centroid depth comes out 10.2 m against 7.5 +/- 2.5 m (measured 2026-12-02)"]
fn the_example_goal_is_answered_within_the_truths_tolerances() {
    let (_tmp, dir) = example();
    let out = run_project(&dir, None);
    let result = result_of(&out);
    let answers = result["answers"].as_array().expect("answers");
    assert_eq!(answers.len(), 3, "{answers:?}");
    for a in answers {
        assert_eq!(a["status"], "answered", "{a}");
    }

    let wt = answer(&result, "water_table_depth");
    let agreeing: Vec<&Value> = wt["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            wt["combined_from"]
                .as_array()
                .unwrap()
                .contains(&e["method"])
        })
        .collect();
    assert!(agreeing.len() >= 2, "two agreeing methods: {wt}");
    for e in &agreeing {
        let v = e["value"].as_f64().unwrap();
        assert!((v - 4.0).abs() <= 0.5, "{} {v} m", e["method"]);
    }
    assert!((wt["value"].as_f64().unwrap() - 4.0).abs() <= 0.5, "{wt}");

    let ch = answer(&result, "change");
    let (x, d) = (
        ch["where"]["centroid_x_m"].as_f64().unwrap(),
        ch["where"]["centroid_depth_m"].as_f64().unwrap(),
    );
    assert!((x - 40.0).abs() <= 5.0, "centroid x {x}");
    assert!((d - 7.5).abs() <= 2.5, "centroid depth {d}");
    assert_eq!(ch["details"]["conductor_trend"], "growing", "{ch}");
    assert!(
        ch["value"].as_f64().unwrap() < 0.0,
        "a conductive plume lowers resistivity"
    );

    let wc = answer(&result, "water_content");
    let bands = wc["details"]["per_depth"].as_array().unwrap();
    assert!(bands.len() >= 5, "{bands:?}");
    for b in bands {
        let (t, s) = (
            b["theta_m3_per_m3"].as_f64().unwrap(),
            b["sigma_m3_per_m3"].as_f64().unwrap(),
        );
        assert!(
            (0.157 - 2.0 * s..=0.35 + 2.0 * s).contains(&t),
            "band {b}: θ {t} outside the truth's range"
        );
    }

    let md = std::fs::read_to_string(out.dir.join("report.md")).unwrap();
    let first = md.find("## ").map(|i| &md[i..]).unwrap_or("");
    assert!(
        first.starts_with("## Answers"),
        "the report opens with Answers"
    );
    assert!(
        md.contains("The water table lies at"),
        "plain-language answer"
    );
    assert!(
        md.contains("answers_evidence.png"),
        "the evidence figure is in the report"
    );
}

/// Broken input must fail the score: with the water-table goal but no data a method can read
/// it from (only gravity), the question is `not_answered` with the reason, and the report
/// lists it under Not delivered; a goal with no question says which kinds it can answer.
#[test]
fn unanswerable_and_missing_questions_say_why() {
    let (_tmp, dir) = example();
    let text = std::fs::read_to_string(dir.join("project.json")).unwrap();
    let mut p: Value = serde_json::from_str(&text).unwrap();
    let grav = p["inputs"]["gravmag_file"].clone();
    p["inputs"] = serde_json::json!({ "gravmag_file": grav });
    std::fs::write(dir.join("project.json"), p.to_string()).unwrap();
    let out = run_project(&dir, Some("Where is the water table?"));
    let result = result_of(&out);
    let wt = answer(&result, "water_table_depth");
    assert_eq!(wt["status"], "not_answered", "{wt}");
    assert!(
        wt["reason"].as_str().unwrap().contains("no method gave"),
        "{wt}"
    );
    let md = std::fs::read_to_string(out.dir.join("report.md")).unwrap();
    assert!(md.contains("## Not delivered"), "{md}");
    assert!(
        md.contains("An answer to “Where is the water table”"),
        "{md}"
    );

    let out = run_project(&dir, Some("Process these files"));
    let md = std::fs::read_to_string(out.dir.join("report.md")).unwrap();
    assert!(
        md.contains("It can answer: the depth of the water table"),
        "{md}"
    );
}

/// Königsee (real picks): "How deep is the bedrock?" gets a depth profile whose median lies
/// within 20 % of the median depth of pyGIMLi's 2000 m/s contour (its model per cell in
/// tests/oracles, per 2 m column: the first covered cell from the top at ≥ 2000 m/s,
/// interpolated from the one above; depth below the column's highest cell centre).
#[test]
#[ignore = "issue 20, open: our median bedrock depth is 5.04 m against 4.03 m for pyGIMLi's 2000 m/s contour (+25 %, the bound is 20 %; measured 2026-12-02)"]
fn koenigsee_bedrock_depth_matches_pygimli_contour() {
    let Some(sgt) = hydrogeo_studio::field_data::data("seismic/gimli_koenigsee.sgt") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("project.json"),
        serde_json::json!({"goal": "How deep is the bedrock?", "inputs": {"seismic_file": sgt}})
            .to_string(),
    )
    .unwrap();
    let out = run_project(tmp.path(), None);
    let result = result_of(&out);
    let rock = answer(&result, "bedrock_depth");
    assert_eq!(rock["status"], "answered", "{rock}");
    let ours = rock["value"].as_f64().unwrap();
    let depths = rock["where"]["depth_m"].as_array().unwrap();
    assert!(depths.len() >= 10, "a depth profile: {rock}");

    let model: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/oracles/koenigsee_pygimli_model.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let col = |k: &str| -> Vec<f64> {
        model[k]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect()
    };
    let (xs, zs, vs, cov) = (
        col("x_m"),
        col("z_m"),
        col("velocity_m_per_s"),
        col("standardized_coverage"),
    );
    let (x0, x1) = xs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    let mut theirs = Vec::new();
    let mut x = x0;
    while x < x1 {
        let mut cells: Vec<usize> = (0..xs.len())
            .filter(|&i| xs[i] >= x && xs[i] < x + 2.0)
            .collect();
        cells.sort_by(|&a, &b| zs[b].total_cmp(&zs[a]));
        if let Some(&top) = cells.first() {
            let surface = zs[top];
            let hit = cells
                .windows(2)
                .find(|w| vs[w[0]] < 2000.0 && vs[w[1]] >= 2000.0 && cov[w[1]] > 0.0);
            if let Some(w) = hit {
                let (za, zb, va, vb) = (zs[w[0]], zs[w[1]], vs[w[0]], vs[w[1]]);
                let z = za + (2000.0 - va) * (zb - za) / (vb - va);
                theirs.push(surface - z);
            }
        }
        x += 2.0;
    }
    theirs.sort_by(f64::total_cmp);
    assert!(
        theirs.len() >= 5,
        "pyGIMLi's contour found in {} columns",
        theirs.len()
    );
    let median = theirs[theirs.len() / 2];
    eprintln!("Königsee bedrock: ours {ours:.2} m, pyGIMLi 2000 m/s contour {median:.2} m");
    assert!((ours - median).abs() <= 0.2 * median, "{ours} vs {median}");
}
