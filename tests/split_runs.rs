//! Issue 25: a project split into parts (`parts`), each part run on its own
//! (`run --part i/N`), the parts merged (`merge`) — through the built binary, against a
//! one-machine run of the same project. And the Slurm scripts (`slurm --dry-run`), and, with
//! `HGX_SLURM=1` on a machine running a Slurm cluster (`.ci/run` starts a one-node one), the
//! same through `sbatch`.

mod support;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::cli::{studio, text};

use serde_json::Value;

fn run_ok(args: &[&str], expect: i32) -> Output {
    let out = studio().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(expect), "{args:?}: {}", text(&out));
    out
}

/// The run folder a run or merge printed on its last line (`status: folder`).
fn folder_of(out: &Output) -> PathBuf {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or_default();
    let (_, dir) = last.split_once(": ").expect("status: folder");
    PathBuf::from(dir.trim())
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A project of the example's three MT sites and its gravity stations, asking no question
/// (a split run does not answer questions in this version; a one-machine run of the same
/// project succeeds).
fn project(dir: &Path) {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/example");
    std::fs::create_dir_all(dir.join("mt")).unwrap();
    for s in ["site01", "site02", "site03"] {
        std::fs::copy(
            example.join(format!("mt/{s}.edi")),
            dir.join(format!("mt/{s}.edi")),
        )
        .unwrap();
    }
    std::fs::copy(
        example.join("gravity/stations.csv"),
        dir.join("stations.csv"),
    )
    .unwrap();
    std::fs::write(
        dir.join("project.json"),
        r#"{"goal": "Invert the MT sites and the gravity stations",
            "inputs": {"mt_files": ["mt/site01.edi", "mt/site02.edi", "mt/site03.edi"],
                       "gravmag_file": "stations.csv"}}"#,
    )
    .unwrap();
}

/// The units of part `i` of a plan printed by `parts`, as `method:name`.
fn unit_names(plan: &Value, i: usize) -> Vec<String> {
    plan["parts"][i]["units"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            format!(
                "{}:{}",
                u["method"].as_str().unwrap(),
                u["name"].as_str().unwrap()
            )
        })
        .collect()
}

/// The large example of issue 25 (`make-example --monitoring EPOCHS --soundings M`): daily
/// ERT surveys inverted by the difference scheme and a line of TDEM soundings inverted one by
/// one, with `config` added to its settings.
fn monitoring(dir: &Path, epochs: usize, soundings: usize, config: Value) {
    let truth = hydrogeo_studio::example::Truth::default();
    let file = hydrogeo_studio::example::monitoring::write(&truth, dir, epochs, soundings)
        .expect("writes the large example");
    let mut project = json(&file);
    for (k, v) in config.as_object().into_iter().flatten() {
        project["config"][k] = v.clone();
    }
    std::fs::write(&file, project.to_string()).unwrap();
}

/// The merged run `merged` holds every ERT epoch (and the baseline once) and every TDEM
/// sounding of the one-machine run `one` with the same χ² and misfit, to the last bit, and the
/// same ERT cell tables to the byte.
fn assert_one_machine_numbers(one: &Path, merged: &Path, epochs: usize, soundings: usize) {
    let (o, m) = (
        json(&one.join("result.json")),
        json(&merged.join("result.json")),
    );
    let ert = &o["products"]["evaluation_results"];
    let labels = ert["step_labels"].as_array().expect("per-step numbers");
    assert_eq!(labels.len(), epochs);
    for (i, label) in labels.iter().enumerate() {
        let name = label.as_str().unwrap().trim_end_matches(".dat");
        let key = if i == 0 {
            format!("ert-baseline:{name}")
        } else {
            format!("ert:{name}")
        };
        let u = &m["units"][&key];
        assert_eq!(u["chi2"], ert["chi2_by_step"][i], "{key}: {u}");
        assert_eq!(
            u["rrms_percent"], ert["rrms_percent_by_step"][i],
            "{key}: {u}"
        );
        assert_eq!(u["iterations"], ert["iterations_by_step"][i], "{key}: {u}");
    }
    let tdem = &o["products"]["tdem_results"];
    let names = tdem["sounding_names"].as_array().unwrap();
    assert_eq!(names.len(), soundings);
    for (i, n) in names.iter().enumerate() {
        let key = format!("tdem:{}", n.as_str().unwrap());
        let u = &m["units"][&key];
        assert_eq!(u["chi2"], tdem["chi2_per_sounding"][i], "{key}: {u}");
        assert_eq!(
            u["rrms_percent"], tdem["rrms_percent_per_sounding"][i],
            "{key}: {u}"
        );
    }
    assert_eq!(m["units"].as_object().unwrap().len(), epochs + soundings);
    for table in ["ert_timelapse_cells.csv", "ert_evaluated_cells.csv"] {
        let (a, b) = (
            one.join("products").join(table),
            merged.join("products").join(table),
        );
        assert_eq!(a.is_file(), b.is_file(), "{table}");
        if a.is_file() {
            assert!(
                std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap(),
                "{table} differs from the one-machine run's"
            );
        }
    }
}

#[test]
fn monitoring_epochs_and_soundings_split_in_three_give_the_one_machine_numbers_through_a_lambda_retry()
 {
    // 6 daily surveys (baseline + 5 epochs) and 15 soundings; λ 400 underfits the baseline, so
    // the evaluation inverts again with λ 200 and keeps that model — in every part, because λ
    // is chosen on the baseline every part inverts.
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("project");
    monitoring(
        &p,
        6,
        15,
        serde_json::json!({"inversion_params": {"lambda": 400.0}, "max_attempts": 2}),
    );
    let ps = p.to_str().unwrap();
    let plan: Value =
        serde_json::from_slice(&run_ok(&["parts", ps, "--parts", "3"], 0).stdout).unwrap();
    let count = |m: &str| -> Vec<usize> {
        plan["parts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                p["units"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|u| u["method"] == m)
                    .count()
            })
            .collect()
    };
    assert_eq!(count("ert_epoch"), vec![2, 2, 1]);
    assert_eq!(count("tdem_sounding"), vec![5, 5, 5]);
    let one = folder_of(&run_ok(
        &["run", ps, "--out", tmp.path().join("one").to_str().unwrap()],
        0,
    ));
    let ev = &json(&one.join("result.json"))["products"]["evaluation_results"];
    assert_eq!(ev["attempts"], 2, "the retry this test is about: {ev}");
    assert_eq!(ev["replaced"], true, "{ev}");
    assert_eq!(ev["survey_quality_basis"], "baseline");
    let parts = tmp.path().join("parts");
    for i in 0..3 {
        let part = folder_of(&run_ok(
            &[
                "run",
                ps,
                "--part",
                &format!("{i}/3"),
                "--out",
                parts.to_str().unwrap(),
            ],
            0,
        ));
        let tools: Vec<String> = json(&part.join("result.json"))["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["tool"].as_str().unwrap().to_string())
            .collect();
        assert!(
            !tools.iter().any(|t| t == "map_tdem_plan_view"),
            "{tools:?}"
        );
    }
    let merged = folder_of(&run_ok(
        &[
            "merge",
            parts.to_str().unwrap(),
            "--out",
            tmp.path().join("merged").to_str().unwrap(),
        ],
        0,
    ));
    assert_one_machine_numbers(&one, &merged, 6, 15);
    // Every part's products, bundles included (the model folder the studio reopens).
    for i in 0..3 {
        assert!(
            merged
                .join(format!("products/part-{i}/ert_model/model.json"))
                .is_file(),
            "part {i}'s ERT model bundle"
        );
    }
    let report = std::fs::read_to_string(merged.join("report.md")).unwrap();
    assert!(
        report.contains("| ERT baseline | 2024-05-01 | 0 |"),
        "{report}"
    );
    assert!(report.contains("| TDEM sounding | snd15 |"), "{report}");
    assert!(
        report.contains("inverts the baseline 2024-05-01 again"),
        "{report}"
    );
}

#[test]
fn parts_run_apart_and_merged_give_the_one_machine_numbers_and_name_a_missing_part() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("project");
    project(&p);
    let ps = p.to_str().unwrap();

    // The split: the rest (gravity) with the first site, then one site each.
    let out = run_ok(&["parts", ps, "--parts", "3"], 0);
    let plan: Value = serde_json::from_slice(&out.stdout).expect("parts prints JSON");
    let units = |i: usize| unit_names(&plan, i);
    assert_eq!(plan["n_parts"], 3);
    assert_eq!(
        units(0),
        vec!["rest:the rest of the project (gravmag_file)", "mt:site01"]
    );
    assert_eq!(units(1), vec!["mt:site02"]);
    assert_eq!(units(2), vec!["mt:site03"]);
    // More parts than units: refused, naming the count.
    let out = run_ok(&["parts", ps, "--parts", "5"], 2);
    assert!(
        text(&out).contains("only 4 independent unit(s)"),
        "{}",
        text(&out)
    );

    // One machine.
    let one_out = tmp.path().join("one");
    let one = folder_of(&run_ok(&["run", ps, "--out", one_out.to_str().unwrap()], 0));
    let one_result = json(&one.join("result.json"));
    assert_eq!(one_result["status"], "success", "{one_result:#}");
    let mt_one = &one_result["products"]["mt_results"];
    assert_eq!(mt_one["chi2_by_site"].as_array().unwrap().len(), 3);

    // Parts 0 and 2 only: the merge names part 1 as missing and is incomplete.
    let parts = tmp.path().join("parts");
    let pd = parts.to_str().unwrap();
    for i in [0, 2] {
        let part = folder_of(&run_ok(
            &["run", ps, "--part", &format!("{i}/3"), "--out", pd],
            0,
        ));
        assert!(
            part.starts_with(parts.join(format!("part-{i}-of-3"))),
            "{}",
            part.display()
        );
        assert!(!part.join("report.md").exists(), "a part writes no report");
        let r = json(&part.join("result.json"));
        assert_eq!(r["status"], "success", "{r:#}");
        let tools: Vec<&str> = r["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["tool"].as_str().unwrap())
            .collect();
        assert!(!tools.contains(&"write_report"), "{tools:?}");
        assert_eq!(tools.last(), Some(&"close_part"), "{tools:?}");
        assert_eq!(tools.contains(&"invert_gravmag"), i == 0, "{tools:?}");
    }
    let merged_out = tmp.path().join("merged");
    let out = run_ok(&["merge", pd, "--out", merged_out.to_str().unwrap()], 1);
    let first = folder_of(&out);
    let r = json(&first.join("result.json"));
    assert_eq!(r["status"], "incomplete");
    let nd: Vec<&str> = r["not_delivered"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(nd.len(), 1, "{nd:?}");
    assert!(
        nd[0].starts_with("part 1 of 3 (MT site site02): missing"),
        "{nd:?}"
    );
    let report = std::fs::read_to_string(first.join("report.md")).unwrap();
    let nd_section = report.split("## Not delivered").nth(1).unwrap();
    assert!(
        nd_section.contains("part 1 of 3 (MT site site02)"),
        "{report}"
    );
    assert!(r["units"].get("mt:site02").is_none());

    // Re-run the missing part, merge again: success, the one-machine numbers.
    run_ok(&["run", ps, "--part", "1/3", "--out", pd], 0);
    let out = run_ok(&["merge", pd, "--out", merged_out.to_str().unwrap()], 0);
    let merged = folder_of(&out);
    assert_ne!(merged, first);
    let r = json(&merged.join("result.json"));
    assert_eq!(r["status"], "success", "{r:#}");
    assert_eq!(r["not_delivered"], serde_json::json!([]));
    for (i, site) in ["site01", "site02", "site03"].iter().enumerate() {
        let u = &r["units"][format!("mt:{site}")];
        assert_eq!(u["chi2"], mt_one["chi2_by_site"][i], "{site}: {u}");
        assert_eq!(u["rms"], mt_one["rms_by_site"][i], "{site}: {u}");
        assert!(u["chi2"].as_f64().unwrap() > 0.5, "{u}");
    }
    // The layered models, site by site, are the one-machine table to the byte.
    assert_eq!(
        std::fs::read_to_string(merged.join("products/mt_models.csv")).unwrap(),
        std::fs::read_to_string(one.join("products/mt_models.csv")).unwrap()
    );
    // The rest (gravity) ran whole in part 0: its numbers are the one-machine ones.
    assert_eq!(
        r["products"]["gravmag_results"]["by_part"]["0"]["chi2"],
        one_result["products"]["gravmag_results"]["chi2"]
    );
    // One journal, the parts in order, each part's steps whole.
    let journal = std::fs::read_to_string(merged.join("journal.jsonl")).unwrap();
    let marks: Vec<usize> = (0..3)
        .map(|i| journal.find(&format!("part {i} of 3")).expect("part mark"))
        .collect();
    assert!(marks.windows(2).all(|w| w[0] < w[1]), "{marks:?}");
    assert_eq!(journal.matches("\"event\":\"run_started\"").count(), 3);
    // One report with every part and its figures (copied into the merged folder).
    let report = std::fs::read_to_string(merged.join("report.md")).unwrap();
    for site in ["site01", "site02", "site03"] {
        assert!(report.contains(&format!("| {site} |")), "{report}");
    }
    assert!(merged.join("report.html").is_file());
    for line in report.lines().filter(|l| l.starts_with("![")) {
        let rel = line.split("](").nth(1).unwrap().trim_end_matches(')');
        assert!(merged.join(rel).is_file(), "{rel}");
    }
    assert!(report.contains("figures/part-2/mt_models.png"), "{report}");
}

#[test]
fn a_campaign_of_projects_splits_by_project_and_merges_every_projects_own_report() {
    // A campaign: a folder of three projects (one MT site each). Each project is a unit, run
    // whole with its own report; the merge names every project, its status and report.
    let tmp = tempfile::tempdir().unwrap();
    let campaign = tmp.path().join("campaign");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/example");
    for (name, site) in [
        ("north", "site01"),
        ("centre", "site02"),
        ("south", "site03"),
    ] {
        let d = campaign.join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::copy(example.join(format!("mt/{site}.edi")), d.join("site.edi")).unwrap();
        std::fs::write(
            d.join("project.json"),
            r#"{"goal": "Invert the MT site", "inputs": {"mt_files": ["site.edi"]}}"#,
        )
        .unwrap();
    }
    std::fs::create_dir_all(campaign.join("notes")).unwrap(); // not a project: left out
    let cs = campaign.to_str().unwrap();
    let plan: Value =
        serde_json::from_slice(&run_ok(&["parts", cs, "--parts", "2"], 0).stdout).unwrap();
    let names = |i: usize| unit_names(&plan, i);
    assert_eq!(names(0), vec!["project:centre", "project:north"]);
    assert_eq!(names(1), vec!["project:south"]);
    run_ok(&["parts", cs, "--parts", "4"], 2);

    let parts = tmp.path().join("parts");
    let pd = parts.to_str().unwrap();
    let part0 = folder_of(&run_ok(&["run", cs, "--part", "0/2", "--out", pd], 0));
    let r0 = json(&part0.join("result.json"));
    assert_eq!(r0["projects"].as_array().unwrap().len(), 2, "{r0:#}");
    for p in r0["projects"].as_array().unwrap() {
        assert_eq!(p["status"], "success", "{p}");
        assert!(Path::new(p["report"].as_str().unwrap()).is_file(), "{p}");
    }
    // Part 1 missing: the merge names its project.
    let merged_out = tmp.path().join("merged");
    let out = run_ok(&["merge", pd, "--out", merged_out.to_str().unwrap()], 1);
    let r = json(&folder_of(&out).join("result.json"));
    let nd = r["not_delivered"].as_array().unwrap();
    assert_eq!(nd.len(), 1, "{nd:?}");
    assert!(
        nd[0]
            .as_str()
            .unwrap()
            .starts_with("part 1 of 2 (project south): missing"),
        "{nd:?}"
    );
    run_ok(&["run", cs, "--part", "1/2", "--out", pd], 0);
    let merged = folder_of(&run_ok(
        &["merge", pd, "--out", merged_out.to_str().unwrap()],
        0,
    ));
    let r = json(&merged.join("result.json"));
    assert_eq!(r["status"], "success", "{r:#}");
    for name in ["north", "centre", "south"] {
        assert_eq!(
            r["units"][format!("project:{name}")]["status"],
            "success",
            "{r:#}"
        );
    }
    let report = std::fs::read_to_string(merged.join("report.md")).unwrap();
    assert!(report.contains("## Projects"), "{report}");
    assert!(report.contains("| south | 1 | success |"), "{report}");
    // The whole campaign on one machine is part 0 of 1.
    let whole = folder_of(&run_ok(
        &[
            "run",
            cs,
            "--out",
            tmp.path().join("whole").to_str().unwrap(),
        ],
        0,
    ));
    assert_eq!(
        json(&whole.join("result.json"))["projects"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
}

#[test]
fn a_failed_part_is_recorded_by_name_not_raised() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("project");
    project(&p);
    // Site 2 unreadable: its part fails, the others succeed; the merge names it.
    std::fs::write(p.join("mt/site02.edi"), "not an EDI file\n").unwrap();
    let ps = p.to_str().unwrap();
    let parts = tmp.path().join("parts");
    let pd = parts.to_str().unwrap();
    run_ok(&["run", ps, "--part", "0/3", "--out", pd], 0);
    run_ok(&["run", ps, "--part", "1/3", "--out", pd], 1);
    run_ok(&["run", ps, "--part", "2/3", "--out", pd], 0);
    let out = run_ok(
        &["merge", pd, "--out", tmp.path().join("m").to_str().unwrap()],
        1,
    );
    let r = json(&folder_of(&out).join("result.json"));
    let nd = r["not_delivered"].as_array().unwrap();
    assert_eq!(nd.len(), 1, "{nd:?}");
    let why = nd[0].as_str().unwrap();
    assert!(
        why.starts_with("part 1 of 3 (MT site site02): incomplete"),
        "{why}"
    );
    assert!(why.contains("site02.edi"), "{why}");
    assert!(r["units"]["mt:site03"]["chi2"].as_f64().is_some(), "{r:#}");
}

#[test]
fn slurm_dry_run_writes_an_array_job_and_a_merge_after_it() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("project");
    project(&p);
    let sub = tmp.path().join("submission");
    let out = run_ok(
        &[
            "slurm",
            p.to_str().unwrap(),
            "--parts",
            "3",
            "--partition",
            "short",
            "--time",
            "00:20:00",
            "--cpus",
            "1",
            "--sbatch-arg",
            "--mem=1G",
            "--out",
            sub.to_str().unwrap(),
            "--dry-run",
        ],
        0,
    );
    assert!(text(&out).contains("nothing submitted"), "{}", text(&out));
    let job = std::fs::read_to_string(sub.join("job.sbatch")).unwrap();
    let exe = env!("CARGO_BIN_EXE_hydrogeo-studio");
    let project_file = std::fs::canonicalize(p.join("project.json")).unwrap();
    for line in [
        "#SBATCH --array=0-2",
        "#SBATCH --partition=short",
        "#SBATCH --time=00:20:00",
        "#SBATCH --cpus-per-task=1",
        "#SBATCH --mem=1G",
    ] {
        assert!(job.lines().any(|l| l == line), "{line} in\n{job}");
    }
    assert!(
        job.contains(&format!(
            "exec '{exe}' run '{}' --part \"$SLURM_ARRAY_TASK_ID/3\" --out '{}'",
            project_file.display(),
            sub.join("parts").display()
        )),
        "{job}"
    );
    let merge = std::fs::read_to_string(sub.join("merge.sbatch")).unwrap();
    assert!(
        merge.contains(&format!(
            "exec '{exe}' merge '{}' --out '{}'",
            sub.join("parts").display(),
            sub.join("merged").display()
        )),
        "{merge}"
    );
    // Too many parts: refused before anything is written.
    let other = tmp.path().join("other");
    run_ok(
        &[
            "slurm",
            p.to_str().unwrap(),
            "--parts",
            "9",
            "--out",
            other.to_str().unwrap(),
            "--dry-run",
        ],
        2,
    );
    assert!(!other.exists());
}

/// `cmd` with `SLURM_CONF` as the environment gives it; output checked.
fn slurm_cmd(program: &str, args: &[&str]) -> String {
    let out = Command::new(program).args(args).output().unwrap();
    assert!(out.status.success(), "{program} {args:?}: {}", text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Wait until Slurm no longer lists any of `jobs` (bounded; the test fails naming them).
fn wait_for(jobs: &str) {
    for _ in 0..3000 {
        if slurm_cmd("squeue", &["-h", "-j", jobs]).trim().is_empty() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    panic!(
        "Slurm jobs {jobs} did not end: {}",
        slurm_cmd("squeue", &[])
    );
}

/// Submit `project` in 3 parts with `hgx slurm` into `sub` (extra sbatch arguments `extra`);
/// returns (array job id, merge job id).
fn submit(project: &str, sub: &Path, extra: &[&str]) -> (String, String) {
    let mut args = vec!["slurm", project, "--parts", "3", "--cpus", "1"];
    for e in extra {
        args.extend(["--sbatch-arg", e]);
    }
    args.extend(["--out", sub.to_str().unwrap()]);
    let out = run_ok(&args, 0);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let id_after = |prefix: &str| -> String {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(prefix))
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("no '{prefix}' in {stdout}"))
            .to_string()
    };
    assert!(
        stdout.contains(&sub.join("merged").display().to_string()),
        "{stdout}"
    );
    (
        id_after("Submitted the parts as array job "),
        id_after("Submitted the merge as job "),
    )
}

/// The run folder the merge job wrote under `sub/merged`.
fn merged_by_job(sub: &Path) -> PathBuf {
    std::fs::read_dir(sub.join("merged"))
        .ok()
        .and_then(|d| d.flatten().map(|e| e.path()).next())
        .unwrap_or_else(|| {
            panic!(
                "the merge job wrote nothing: {}",
                std::fs::read_to_string(sub.join("slurm/merge.out")).unwrap_or_default()
            )
        })
}

#[test]
fn on_a_real_slurm_cluster_a_split_monitoring_run_gives_the_one_machine_numbers_and_a_cancelled_task_is_named()
 {
    if std::env::var("HGX_SLURM").as_deref() != Ok("1") {
        println!(
            "skipped: set HGX_SLURM=1 on a machine running a Slurm cluster (.ci/run starts a one-node one with .ci/slurm-node) to run the Slurm integration test"
        );
        return;
    }
    // Issue 25's acceptance: 12 ERT epochs (difference scheme) and 60 TDEM soundings.
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("project");
    monitoring(&p, 12, 60, serde_json::json!({}));
    let ps = p.to_str().unwrap();
    let one = folder_of(&run_ok(
        &["run", ps, "--out", tmp.path().join("one").to_str().unwrap()],
        0,
    ));

    // Submitted in 3 parts, merged by the job that waits for the array: success, every epoch
    // and sounding, the one-machine numbers.
    let sub = tmp.path().join("submission");
    let (array, merge) = submit(ps, &sub, &[]);
    wait_for(&format!("{array},{merge}"));
    let merged = merged_by_job(&sub);
    let r = json(&merged.join("result.json"));
    assert_eq!(r["status"], "success", "{r:#}");
    assert_one_machine_numbers(&one, &merged, 12, 60);
    // Slurm's own account of the array: each task completed, in the job-completion log the
    // one-node cluster keeps beside its slurm.conf (.ci/slurm-node: JobCompType=filetxt).
    let conf = PathBuf::from(std::env::var("SLURM_CONF").expect("SLURM_CONF names the cluster"));
    let log = std::fs::read_to_string(conf.with_file_name("jobcomp.txt")).unwrap_or_default();
    let completed = log
        .lines()
        .filter(|l| l.contains("JobState=COMPLETED") && l.contains(&format!("ArrayJobId={array} ")))
        .count();
    assert_eq!(
        completed, 3,
        "three completed tasks of array {array} in\n{log}"
    );

    // Held at submission, so task 2 is cancelled before it can start, whatever the timing;
    // then the array is released. The merge names the part missing.
    let sub = tmp.path().join("submission-cancelled");
    let (array, merge) = submit(ps, &sub, &["--hold"]);
    slurm_cmd("scancel", &[&format!("{array}_2")]);
    // --sbatch-arg goes into both scripts: both were held.
    slurm_cmd("scontrol", &["release", &format!("{array},{merge}")]);
    wait_for(&format!("{array},{merge}"));
    let first = merged_by_job(&sub);
    let r = json(&first.join("result.json"));
    assert_eq!(r["status"], "incomplete", "{r:#}");
    let nd = r["not_delivered"].as_array().unwrap();
    assert_eq!(nd.len(), 1, "{nd:?}");
    let why = nd[0].as_str().unwrap();
    assert!(why.starts_with("part 2 of 3 (ERT epochs"), "{why}");
    assert!(why.contains("TDEM soundings"), "{why}");
    assert!(why.contains(": missing"), "{why}");
    assert!(
        std::fs::read_to_string(first.join("report.md"))
            .unwrap()
            .contains("not delivered |"),
        "the missing part's units are in the table as not delivered"
    );

    // Re-run the cancelled part and merge again: success, the one-machine numbers.
    let parts = sub.join("parts");
    run_ok(
        &["run", ps, "--part", "2/3", "--out", parts.to_str().unwrap()],
        0,
    );
    let merged = folder_of(&run_ok(
        &[
            "merge",
            parts.to_str().unwrap(),
            "--out",
            sub.join("merged").to_str().unwrap(),
        ],
        0,
    ));
    let r = json(&merged.join("result.json"));
    assert_eq!(r["status"], "success", "{r:#}");
    assert_one_machine_numbers(&one, &merged, 12, 60);
}

#[test]
fn the_example_keeps_its_coupled_work_whole_and_bad_requests_exit_2() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/example");
    let ex = example.to_str().unwrap();
    let out = run_ok(&["parts", ex, "--parts", "4"], 0);
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    let whole = plan["whole"].as_array().unwrap();
    let kind = |m: &str| {
        whole
            .iter()
            .find(|w| w["method"] == m)
            .map(|w| w["kind"].as_str().unwrap().to_string())
    };
    // The example's ERT is a simultaneous time-lapse, its TDEM line laterally constrained.
    assert_eq!(kind("ERT").as_deref(), Some("coupled"), "{whole:?}");
    assert_eq!(kind("TDEM").as_deref(), Some("coupled"), "{whole:?}");
    // Rest + 3 MT sites: 4 units, one per part.
    let n: Vec<usize> = plan["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["units"].as_array().unwrap().len())
        .collect();
    assert_eq!(n, vec![1, 1, 1, 1]);
    let tmp = tempfile::tempdir().unwrap();
    let o = tmp.path().to_str().unwrap();
    let out = run_ok(&["run", ex, "--part", "4/4", "--out", o], 2);
    assert!(text(&out).contains("'4/4'"), "{}", text(&out));
    let out = run_ok(&["merge", o, "--out", o], 2);
    assert!(
        text(&out).contains("no part of a split run found"),
        "{}",
        text(&out)
    );
    // Nothing was written for the refused part.
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
}
