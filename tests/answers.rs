//! Issue 20's acceptance: the report answers the goal's questions. Headless runs without a
//! model, through the same run specification the CLI and the studio use; each test works in
//! a temporary folder (the bundled files are never touched).
//!
//! Truths: `assets/example/truth.json` (water table 4 m, plume centred at x = 40 m, 7.5 m
//! deep, growing; Archie φ 0.35, m 1.8, n 2, ρw 20 Ω·m over ρ 653.6 / 132.3 Ω·m, so θ from
//! 0.35·√(132.3/653.6) = 0.157 above the water table to φ = 0.35 below it). Königsee: the
//! depth of pyGIMLi's 2000 m/s contour in `tests/oracles/koenigsee_pygimli_model.json`.

#[macro_use]
#[path = "support/field_data.rs"]
mod field_data;

use std::path::{Path, PathBuf};

use hydrogeo_studio::catalog::kit::format::pm;
use serde_json::Value;

mod support;
use support::answers::{answer, centroid_within, result_of, run_project};

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
    // The sentence gives the uncertainty to two significant digits, the value to match.
    let said = format!(
        "The water table lies at {} m below ground",
        pm(
            wt["value"].as_f64().unwrap(),
            wt["uncertainty"].as_f64().unwrap()
        )
    );
    assert!(wt["sentence"].as_str().unwrap().starts_with(&said), "{wt}");
    // The GPR depth carries its velocity's error: the project's 0.12 m/ns comes without one,
    // so the default 10 % (answers_params) is in its σ, at least 0.1 · depth.
    let gpr = wt["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["method"] == "GPR")
        .unwrap_or_else(|| panic!("GPR evidence: {wt}"));
    assert!(
        gpr["uncertainty"].as_f64().unwrap() >= 0.1 * gpr["value"].as_f64().unwrap() - 1e-9,
        "{gpr}"
    );
    // TDEM's earliest gate (10 µs) and MT's shortest period resolve nothing this shallow: no
    // value from either, and the sentence says why (the depth window each resolves).
    for m in ["TDEM", "MT"] {
        assert!(
            !wt["evidence"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["method"] == m),
            "{m} gave a water table: {wt}"
        );
        let why = format!(
            "{m}: no downward resistivity decrease of 20 % or more between the shallowest depth the data resolve"
        );
        assert!(wt["sentence"].as_str().unwrap().contains(&why), "{m}: {wt}");
    }
    // Every method left out of the combination is reported as disagreeing, with a reason.
    for e in wt["evidence"].as_array().unwrap() {
        if !wt["combined_from"]
            .as_array()
            .unwrap()
            .contains(&e["method"])
        {
            assert_eq!(wt["agreement"], "disagree", "{wt}");
            let named = wt["details"]["disagreeing"].as_array().is_some_and(|d| {
                d.iter().any(|x| {
                    x["method"] == e["method"]
                        && x["likely_reason"].as_str().is_some_and(|r| !r.is_empty())
                })
            });
            assert!(named, "{} not named as disagreeing: {wt}", e["method"]);
        }
    }

    eprintln!("water table: {}", wt["sentence"]);
    let ch = answer(&result, "change");
    eprintln!("change: {}", ch["where"]);
    centroid_within(ch, 40.0, 7.5, 5.0, 2.5);
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
/// within 20 % of the median depth of pyGIMLi's 2000 m/s contour, read from its model per
/// cell (tests/oracles) the way the issue defines a contour depth and our interpretation
/// reads its own model (`methods::seismic::interfaces` docs): vertical profiles every 1 m
/// between the outer sensors, sampled every 0.25 m below the sensors' surface, the velocity
/// of the cell whose centre is nearest (the model is constant per cell), the first crossing
/// from the top with both samples covered, linearly interpolated.
///
/// An earlier reference took each 2 m strip's cells sorted by elevation and measured from the
/// highest cell centre; it read 4.03 m, because the strip's shallowest crossing among
/// triangles from 2 m of line comes first and the top cell centre lies ~0.45 m below the
/// surface. Read as above, pyGIMLi's contour lies at 4.59 m (measured 2026-12-02; with the
/// velocity interpolated between the three nearest cell centres instead, 4.85 m), so of our
/// 5.04 m against the old 4.03 m about 0.55 m was the reference's reading and the rest
/// (+0.45 m, +10 %) is the difference between the two inversions.
#[test]
fn koenigsee_bedrock_depth_matches_pygimli_contour() {
    let Some(sgt) = field_data::data("seismic/gimli_koenigsee.sgt") else {
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

    let theirs = pygimli_contour_depths(&sgt, 2000.0);
    assert!(
        theirs.len() >= 20,
        "pyGIMLi's contour found on {} profiles",
        theirs.len()
    );
    let median = theirs[theirs.len() / 2];
    eprintln!("Königsee bedrock: ours {ours:.2} m, pyGIMLi 2000 m/s contour {median:.2} m");
    // The reference as measured when this reading was written (4.59 m, see above): a change
    // of the oracle file or of the reading shows here first.
    assert!((median - 4.59).abs() < 0.01, "pyGIMLi's contour {median}");
    assert!((ours - median).abs() <= 0.2 * median, "{ours} vs {median}");
}

/// The depths (sorted) of the `v_mps` contour of pyGIMLi's Königsee model (the reading the
/// test above describes).
fn pygimli_contour_depths(sgt: &Path, v_mps: f64) -> Vec<f64> {
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
    let tt = hydrogeo_studio::methods::seismic::sgt::read_sgt(sgt).unwrap();
    let mut sensors: Vec<(f64, f64)> = tt
        .sensor_x_m
        .iter()
        .copied()
        .zip(tt.sensor_z_m.iter().copied())
        .collect();
    sensors.sort_by(|a, b| a.0.total_cmp(&b.0));
    let surface = |x: f64| {
        sensors
            .windows(2)
            .find(|w| w[0].0 <= x && x <= w[1].0)
            .map_or(sensors[0].1, |w| {
                w[0].1 + (x - w[0].0) * (w[1].1 - w[0].1) / (w[1].0 - w[0].0)
            })
    };
    let nearest = |x: f64, z: f64| {
        (0..xs.len())
            .min_by(|&a, &b| {
                let d = |i: usize| (xs[i] - x).powi(2) + (zs[i] - z).powi(2);
                d(a).total_cmp(&d(b))
            })
            .unwrap()
    };
    let (first, last) = (sensors[0].0, sensors[sensors.len() - 1].0);
    let mut depths = Vec::new();
    let mut x = first + 0.5;
    while x < last {
        let s = surface(x);
        let profile: Vec<(f64, usize)> = (0..120)
            .map(|k| {
                let d = (k as f64 + 0.5) * 0.25;
                (d, nearest(x, s - d))
            })
            .collect();
        if vs[profile[0].1] < v_mps
            && let Some(w) = profile
                .windows(2)
                .find(|w| vs[w[0].1] < v_mps && vs[w[1].1] >= v_mps)
            && cov[w[0].1] > 0.0
            && cov[w[1].1] > 0.0
        {
            let ((da, a), (db, b)) = (w[0], w[1]);
            depths.push(da + (v_mps - vs[a]) * (db - da) / (vs[b] - vs[a]));
        }
        x += 1.0;
    }
    depths.sort_by(f64::total_cmp);
    depths
}
