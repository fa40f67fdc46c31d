//! Auto to report, end to end, headless and without a model, on the bundled example project
//! (`assets/example`, written by `cargo run --bin make-example` from the documented truth in
//! `src/example`). Each test copies the project to a temporary folder, so the bundled files
//! are never touched, and runs it with the same specification the CLI and the studio use.
//!
//! What the issue asks (#12, item 5): the example runs to a report with status success, every
//! method's section present and figures written; one truncated file makes the run
//! `incomplete`, the report's Not delivered names that file and every other method's results
//! are intact; a goal asking for a product no tool makes is reported as not delivered.
//! (The "under 60 s in release" part is measured by `benches/end_to_end.rs`, not here.)

use std::path::{Path, PathBuf};

use hydrogeo_studio::catalog;
use hydrogeo_studio::runtime::Project;
use hydrogeo_studio::runtime::run_folder::RunStatus;
use hydrogeo_studio::runtime::session::{RunOutcome, run};

/// The bundled example project.
fn example_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets")
        .join("example")
}

/// Copy the example project (without any `runs/`) into a fresh temporary folder.
fn example_copy() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("temporary folder");
    let dst = tmp.path().join("example");
    copy_tree(&example_dir(), &dst);
    (tmp, dst)
}

fn copy_tree(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).expect("create folder");
    for entry in std::fs::read_dir(src).expect("example project exists") {
        let entry = entry.expect("dir entry");
        let path = entry.path();
        if path.file_name().is_some_and(|n| n == "runs") {
            continue;
        }
        let target = dst.join(entry.file_name());
        if path.is_dir() {
            copy_tree(&path, &target);
        } else {
            std::fs::copy(&path, &target).expect("copy file");
        }
    }
}

/// Run the project in `dir` to its end with no model; optionally with another goal.
fn run_example(dir: &Path, goal: Option<&str>) -> RunOutcome {
    let mut project = Project::load(dir).expect("project.json loads");
    if let Some(g) = goal {
        project.goal = g.to_string();
    }
    let spec = catalog::run_spec(project);
    run(spec, &catalog::registry(), None).expect("the run folder can be written")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The report's "Not delivered" section (up to the next `## ` heading).
fn not_delivered(report_md: &str) -> String {
    let Some(start) = report_md.find("## Not delivered") else {
        return String::new();
    };
    let rest = &report_md[start + 3..];
    let end = rest.find("\n## ").map_or(rest.len(), |i| i);
    rest[..end].to_string()
}

/// The per-method headings the report must carry, one per method in the example.
const METHOD_SECTIONS: &[&str] = &[
    "ERT",
    "Seismic refraction",
    "TDEM",
    "Magnetotellurics",
    "Gravity",
    "GPR",
];

#[test]
fn the_example_runs_to_a_successful_report_with_every_method() {
    let (_tmp, dir) = example_copy();
    let out = run_example(&dir, None);
    let failed: Vec<String> = out
        .context
        .steps
        .iter()
        .filter(|s| !s.error.is_empty())
        .map(|s| format!("{}: {}", s.tool, s.error))
        .collect();
    assert_eq!(
        out.status,
        RunStatus::Success,
        "reasons: {:?}; failed steps: {failed:?}",
        out.reasons
    );
    assert!(out.reasons.is_empty(), "{:?}", out.reasons);

    let result: serde_json::Value =
        serde_json::from_str(&read(&out.dir.join("result.json"))).expect("result.json");
    assert_eq!(result["status"], "success");

    let md = read(&out.dir.join("report.md"));
    for method in METHOD_SECTIONS {
        assert!(
            md.lines()
                .any(|l| l.starts_with("## ") && l.contains(method)),
            "no section for {method} in report.md; headings: {:?}",
            md.lines()
                .filter(|l| l.starts_with("## "))
                .collect::<Vec<_>>()
        );
    }
    assert!(
        md.contains("automated output — technical review required"),
        "document control status missing"
    );
    assert!(
        not_delivered(&md).is_empty(),
        "a successful run has nothing under Not delivered: {}",
        not_delivered(&md)
    );

    // Figures: at least one per method, each a real PNG, all embedded in the HTML.
    let figures: Vec<PathBuf> = std::fs::read_dir(out.dir.join("figures"))
        .expect("figures folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "png"))
        .collect();
    assert!(
        figures.len() >= METHOD_SECTIONS.len(),
        "only {} figures",
        figures.len()
    );
    for f in &figures {
        let bytes = std::fs::read(f).expect("figure");
        assert_eq!(
            &bytes[..8],
            b"\x89PNG\r\n\x1a\n",
            "{} is not a PNG",
            f.display()
        );
    }
    let html = read(&out.dir.join("report.html"));
    assert!(
        html.matches("data:image/png;base64,").count() >= figures.len(),
        "every figure is embedded in report.html"
    );
    assert!(
        !html.contains("src=\"figures/"),
        "the HTML is self-contained"
    );
}

#[test]
fn a_truncated_file_makes_the_run_incomplete_and_is_named() {
    let (_tmp, dir) = example_copy();
    let project = Project::load(&dir).expect("project");
    let rel = project.inputs["tdem_file"]
        .as_str()
        .expect("the example names a TDEM file")
        .to_string();
    let broken = dir.join(&rel);
    let text = read(&broken);
    // Cut the file in the middle of a line: the reader must say where and what it expected.
    let cut = text.len() / 2;
    let cut = (cut..text.len())
        .find(|&i| text.as_bytes()[i] == b',')
        .unwrap_or(cut);
    std::fs::write(&broken, &text.as_bytes()[..cut]).expect("truncate");

    let out = run_example(&dir, None);
    assert_eq!(out.status, RunStatus::Incomplete, "{:?}", out.reasons);
    let file_name = Path::new(&rel)
        .file_name()
        .expect("file name")
        .to_string_lossy()
        .to_string();
    assert!(
        out.reasons.iter().any(|r| r.contains(&file_name)),
        "the reasons name {file_name}: {:?}",
        out.reasons
    );
    let md = read(&out.dir.join("report.md"));
    let nd = not_delivered(&md);
    assert!(
        nd.contains(&file_name),
        "Not delivered names {file_name}:\n{nd}"
    );
    let summary_first_line = md
        .split("## Executive summary\n\n")
        .nth(1)
        .and_then(|s| s.lines().next())
        .unwrap_or_default();
    assert!(
        summary_first_line.starts_with("**This run did not complete.**"),
        "the summary's first line says the run did not complete: {summary_first_line}"
    );
    // Every other method's section is intact.
    for method in METHOD_SECTIONS.iter().filter(|m| **m != "TDEM") {
        assert!(
            md.lines()
                .any(|l| l.starts_with("## ") && l.contains(method)),
            "{method}'s section survived the broken TDEM file"
        );
    }
}

#[test]
fn a_goal_asking_for_a_product_no_tool_makes_is_reported_as_not_delivered() {
    let (_tmp, dir) = example_copy();
    let goal = "Where is the water table, and how does it relate to this summer's rainfall?";
    let out = run_example(&dir, Some(goal));
    assert_eq!(out.status, RunStatus::Incomplete, "{:?}", out.reasons);
    assert!(
        out.reasons
            .iter()
            .any(|r| r.contains("climate data") && r.contains("no tool")),
        "{:?}",
        out.reasons
    );
    let md = read(&out.dir.join("report.md"));
    let nd = not_delivered(&md);
    assert!(
        nd.to_lowercase().contains("climate data"),
        "Not delivered says climate data was not delivered:\n{nd}"
    );
    assert!(md.contains(goal), "the scope quotes the goal");
}
