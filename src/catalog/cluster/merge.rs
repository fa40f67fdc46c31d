//! `hydrogeo-studio merge DIR… --out DIR`: the run folders of the parts of a split run made
//! into one run folder — one `result.json`, one journal (the parts in order), one report with
//! every part's steps, products and figures. A part that is missing, or did not succeed, is
//! in *Not delivered* by name; merging again after re-running it completes the run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::{ERT_EPOCH, MT, PART_SETTING, Part, Plan, REST, TDEM_SOUNDING};

/// The ERT cell tables a part writes, merged column by column (the baseline's and each
/// epoch's columns, named by survey index).
const ERT_TABLES: &[&str] = &["ert_timelapse_cells.csv", "ert_evaluated_cells.csv"];
use crate::catalog::kit::keys;
use crate::runtime::journal::JOURNAL_FILE;
use crate::runtime::run_folder::{
    RESULT_FILE, RunFolder, RunStatus, write_atomic, write_file_atomic,
};

/// Why the parts could not be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// No run folder of a part was found under the folders given.
    #[error(
        "no part of a split run found in {0}: expected run folders written by `hydrogeo-studio run --part i/N` (a run.json with a \"part\" setting)"
    )]
    NoParts(String),
    /// The folders hold parts of different splits.
    #[error("{dir}: expected a part of {expected}, found a part of {found}")]
    Mixed {
        /// The folder of the odd part.
        dir: PathBuf,
        /// The split the first part belongs to.
        expected: String,
        /// This part's split.
        found: String,
    },
    /// A file of a part is not what a part writes.
    #[error("{path}: expected {expected}, found {found}")]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What a part writes.
        expected: String,
        /// What is there.
        found: String,
    },
    /// Writing the merged folder failed.
    #[error("{path}: cannot write: {source}")]
    Write {
        /// What was written.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

fn write_err(path: &Path) -> impl FnOnce(std::io::Error) -> MergeError + '_ {
    move |source| MergeError::Write {
        path: path.to_path_buf(),
        source,
    }
}

/// One part's run folder as found.
#[derive(Debug, Clone)]
pub struct FoundPart {
    /// The run folder.
    pub dir: PathBuf,
    /// Its index.
    pub index: usize,
    /// The plan it was run from.
    pub plan: Plan,
    /// Its `result.json`, when there is one that parses.
    pub result: Option<Value>,
}

/// How the merge ended.
#[derive(Debug)]
pub struct MergeOutcome {
    /// The merged run folder.
    pub dir: PathBuf,
    /// success when every part delivered and nothing the goal asks for is missing.
    pub status: RunStatus,
    /// What was not delivered, by name.
    pub not_delivered: Vec<String>,
}

fn read_json(path: &Path) -> Result<Value, MergeError> {
    let text = std::fs::read_to_string(path).map_err(|e| MergeError::Malformed {
        path: path.to_path_buf(),
        expected: "a readable JSON file".into(),
        found: e.to_string(),
    })?;
    serde_json::from_str(&text).map_err(|e| MergeError::Malformed {
        path: path.to_path_buf(),
        expected: "JSON".into(),
        found: format!("invalid JSON at line {} ({e})", e.line()),
    })
}

/// The part a run folder holds, `None` when it is not a part's run folder.
fn part_in(dir: &Path) -> Result<Option<FoundPart>, MergeError> {
    let run_json = dir.join("run.json");
    if !run_json.is_file() {
        return Ok(None);
    }
    let run = read_json(&run_json)?;
    let Some(setting) = run.get("settings").and_then(|s| s.get(PART_SETTING)) else {
        return Ok(None);
    };
    let bad = |found: String| MergeError::Malformed {
        path: run_json.clone(),
        expected: "settings.part with \"index\" and \"plan\"".into(),
        found,
    };
    let index = setting
        .get("index")
        .and_then(Value::as_u64)
        .ok_or_else(|| bad(setting.to_string()))? as usize;
    let plan: Plan = serde_json::from_value(setting.get("plan").cloned().unwrap_or(Value::Null))
        .map_err(|e| bad(format!("a plan that does not parse ({e})")))?;
    let result_path = dir.join(RESULT_FILE);
    let result = if result_path.is_file() {
        read_json(&result_path).ok()
    } else {
        None
    };
    Ok(Some(FoundPart {
        dir: dir.to_path_buf(),
        index,
        plan,
        result,
    }))
}

/// Every part's run folder in `dirs` (each a part's run folder, or a folder holding them up
/// to two levels down); for a part found more than once, the newest run folder (by name: run
/// folders are named by their start time).
pub fn find_parts(dirs: &[PathBuf]) -> Result<BTreeMap<usize, FoundPart>, MergeError> {
    let mut found: Vec<FoundPart> = Vec::new();
    fn walk(dir: &Path, depth: usize, out: &mut Vec<FoundPart>) -> Result<(), MergeError> {
        if let Some(p) = part_in(dir)? {
            out.push(p);
            return Ok(());
        }
        if depth == 0 {
            return Ok(());
        }
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Ok(());
        };
        let mut subs: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        subs.sort();
        for s in subs {
            walk(&s, depth - 1, out)?;
        }
        Ok(())
    }
    for d in dirs {
        walk(d, 2, &mut found)?;
    }
    let Some(first) = found.first().cloned() else {
        return Err(MergeError::NoParts(
            dirs.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        ));
    };
    let mut by_index: BTreeMap<usize, FoundPart> = BTreeMap::new();
    for p in found {
        if p.plan != first.plan {
            return Err(MergeError::Mixed {
                dir: p.dir.clone(),
                expected: format!("{} in {} parts", first.plan.project, first.plan.n_parts),
                found: format!("{} in {} parts", p.plan.project, p.plan.n_parts),
            });
        }
        let newer = by_index
            .get(&p.index)
            .is_none_or(|q| p.dir.file_name() > q.dir.file_name());
        if newer {
            by_index.insert(p.index, p);
        }
    }
    Ok(by_index)
}

/// Copy `from` into `to` (a file), creating its folder.
fn copy(from: &Path, to: &Path) -> Result<(), MergeError> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(write_err(parent))?;
    }
    std::fs::copy(from, to).map_err(write_err(to))?;
    Ok(())
}

/// Copy every file under `from` (its folders too, such as a product bundle like
/// `ert_model/`) to the same place under `to`.
fn copy_tree(from: &Path, to: &Path) -> Result<(), MergeError> {
    for f in files_in(from) {
        if let Some(name) = f.file_name() {
            copy(&f, &to.join(name))?;
        }
    }
    let Ok(entries) = std::fs::read_dir(from) else {
        return Ok(());
    };
    let mut subs: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    subs.sort();
    for s in subs {
        if let Some(name) = s.file_name() {
            copy_tree(&s, &to.join(name))?;
        }
    }
    Ok(())
}

/// The files directly in `dir`, sorted.
fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|r| {
            r.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The names of a part's units of `method`, in the order its run read them.
fn names_of(part: &Part, method: &str) -> Vec<String> {
    part.units
        .iter()
        .filter(|u| u.method == method)
        .map(|u| u.name.clone())
        .collect()
}

/// The key of a unit in the merged `result.json`'s `units`: `mt:site01`, `ert:2024-06-01`,
/// `tdem:snd3`.
pub fn unit_key(method: &str, name: &str) -> String {
    let prefix = match method {
        ERT_EPOCH => "ert",
        TDEM_SOUNDING => "tdem",
        other => other,
    };
    format!("{prefix}:{name}")
}

/// Entry `i` of the array `key` of a product's numbers (null when absent).
fn at(numbers: &Value, key: &str, i: usize) -> Value {
    numbers[key].get(i).cloned().unwrap_or(Value::Null)
}

/// The per-unit numbers of a part's results, by unit key: MT sites (`chi2_by_site`,
/// `rms_by_site`, in the order of its sites), ERT epochs (the evaluated model's
/// `chi2_by_step`, `rrms_percent_by_step` by `step_labels`; the baseline under
/// `ert-baseline:`), TDEM soundings (`chi2_per_sounding`, `rrms_percent_per_sounding` by
/// `sounding_names`).
fn unit_numbers(part: &Part, result: &Value) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    let products = &result["products"];
    let mt = &products["mt_results"];
    if mt.is_object() {
        for (i, site) in names_of(part, MT).into_iter().enumerate() {
            out.insert(
                unit_key(MT, &site),
                json!({"part": part.index, "chi2": at(mt, "chi2_by_site", i), "rms": at(mt, "rms_by_site", i)}),
            );
        }
    }
    let ert = [keys::EVALUATION_RESULTS, keys::INVERSION_RESULTS]
        .iter()
        .map(|k| &products[*k])
        .find(|p| p["step_labels"].is_array());
    if let Some(ert) = ert {
        let epochs = names_of(part, ERT_EPOCH);
        for (i, label) in ert["step_labels"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let label = label.as_str().unwrap_or_default();
            let name = std::path::Path::new(label)
                .file_stem()
                .map_or_else(|| label.to_string(), |s| s.to_string_lossy().into_owned());
            let key = if i == 0 {
                format!("ert-baseline:{name}")
            } else if epochs.contains(&name) {
                unit_key(ERT_EPOCH, &name)
            } else {
                continue;
            };
            out.insert(
                key,
                json!({"part": part.index, "chi2": at(ert, "chi2_by_step", i),
                    "rrms_percent": at(ert, "rrms_percent_by_step", i),
                    "iterations": at(ert, "iterations_by_step", i)}),
            );
        }
    }
    let tdem = &products[keys::TDEM_RESULTS];
    let soundings = names_of(part, TDEM_SOUNDING);
    for (i, name) in tdem["sounding_names"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let name = name.as_str().unwrap_or_default();
        if soundings.iter().any(|s| s == name) {
            out.insert(
                unit_key(TDEM_SOUNDING, name),
                json!({"part": part.index, "chi2": at(tdem, "chi2_per_sounding", i),
                    "rrms_percent": at(tdem, "rrms_percent_per_sounding", i)}),
            );
        }
    }
    out
}

/// Merge the parts found in `dirs` into a new run folder under `out`.
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<MergeOutcome, MergeError> {
    let parts = find_parts(dirs)?;
    let plan = parts
        .values()
        .next()
        .map(|p| p.plan.clone())
        .ok_or_else(|| MergeError::NoParts(out.display().to_string()))?;
    let goal = parts
        .values()
        .find_map(|p| p.result.as_ref().and_then(|r| r["goal"].as_str()))
        .unwrap_or_default()
        .to_string();
    let folder = RunFolder::create(out, &goal).map_err(write_err(out))?;
    let dir = folder.dir.clone();

    let (mut not_delivered, delivered, part_rows) = part_statuses(&plan, &parts);
    // A campaign's projects answer their own goals, each in its own report.
    if !is_campaign(&plan) {
        not_delivered.extend(split_shortfalls(&goal, &delivered));
    }

    let g = gather(&plan, &parts, &dir)?;
    let (steps, products, units, mt_models) = (g.steps, g.products, g.units, g.mt_models);
    let (journal, report_parts) = (g.journal, g.report_parts);
    let mut notes = g.notes;
    if mt_models.len() > 1 {
        let path = dir.join("products").join("mt_models.csv");
        write_file_atomic(&path, (mt_models.join("\n") + "\n").as_bytes())
            .map_err(write_err(&path))?;
    }
    for (name, tables) in &g.tables {
        match merge_columns(tables) {
            Ok(text) => {
                let path = dir.join("products").join(name);
                write_file_atomic(&path, text.as_bytes()).map_err(write_err(&path))?;
            }
            Err(why) => notes.push(format!("products/{name} of the parts not merged: {why}")),
        }
    }
    let journal_path = dir.join(JOURNAL_FILE);
    write_file_atomic(&journal_path, journal.as_bytes()).map_err(write_err(&journal_path))?;

    let status = if not_delivered.is_empty() {
        RunStatus::Success
    } else {
        RunStatus::Incomplete
    };
    let (md, html) = (dir.join("report.md"), dir.join("report.html"));
    let report = report_markdown(
        &goal,
        status,
        &plan,
        parts.len(),
        &Findings {
            not_delivered: &not_delivered,
            units: &units,
            notes: &notes,
        },
        &report_parts,
    );
    write_file_atomic(&md, report.as_bytes()).map_err(write_err(&md))?;
    let page = crate::report::html::render(&report, &dir, &goal);
    write_file_atomic(&html, page.as_bytes()).map_err(write_err(&html))?;

    let run_json = json!({
        "goal": goal,
        "project": plan.project,
        "merged_from": parts.values().map(|p| p.dir.display().to_string()).collect::<Vec<_>>(),
        "settings": {"merged": true, "n_parts": plan.n_parts},
        "software": format!("HydroGeo Studio {}", env!("CARGO_PKG_VERSION")),
    });
    write_atomic(&dir.join("run.json"), &run_json).map_err(write_err(&dir.join("run.json")))?;
    let result = json!({
        "status": status.word(),
        "reasons": not_delivered,
        "not_delivered": not_delivered,
        "goal": goal,
        "plan": plan,
        "parts": part_rows,
        "units": units,
        "notes": notes,
        "steps": steps,
        "products": products,
        "report": {"markdown": md.display().to_string(), "html": html.display().to_string()},
    });
    let result_path = dir.join(RESULT_FILE);
    write_atomic(&result_path, &result).map_err(write_err(&result_path))?;
    Ok(MergeOutcome {
        dir,
        status,
        not_delivered,
    })
}

/// Phase 1: each part of the plan found and succeeded, or named under Not delivered (missing,
/// or failed with its reasons and the command that re-runs it). Returns (not delivered, the
/// parts that succeeded, one `result.json` row per part).
fn part_statuses<'a>(
    plan: &Plan,
    parts: &'a BTreeMap<usize, FoundPart>,
) -> (Vec<String>, Vec<&'a FoundPart>, Vec<Value>) {
    let mut not_delivered = Vec::new();
    let mut delivered: Vec<&FoundPart> = Vec::new();
    let mut part_rows = Vec::new();
    for part in &plan.parts {
        let name = part.describe(plan.n_parts);
        match parts.get(&part.index) {
            None => {
                not_delivered.push(format!(
                    "{name}: missing — no run folder of this part was found; run it with `hydrogeo-studio run {} --part {}/{} --out …` and merge again",
                    plan.project, part.index, plan.n_parts
                ));
                part_rows.push(json!({"part": part.index, "name": name, "status": "missing"}));
            }
            Some(found) => {
                let status = found
                    .result
                    .as_ref()
                    .and_then(|r| r["status"].as_str())
                    .unwrap_or("unreadable")
                    .to_string();
                if status != "success" {
                    let reasons: Vec<String> = found
                        .result
                        .as_ref()
                        .and_then(|r| r["reasons"].as_array())
                        .map(|a| {
                            a.iter()
                                .filter_map(|v| v.as_str().map(str::to_string))
                                .collect()
                        })
                        .unwrap_or_else(|| {
                            vec![format!(
                                "{} has no readable {RESULT_FILE}",
                                found.dir.display()
                            )]
                        });
                    not_delivered.push(format!(
                        "{name}: {status} ({}) — {}; re-run it with `hydrogeo-studio run {} --part {}/{} --out …` and merge again",
                        found.dir.display(),
                        reasons.join("; "),
                        plan.project,
                        part.index,
                        plan.n_parts
                    ));
                } else {
                    delivered.push(found);
                }
                part_rows.push(json!({"part": part.index, "name": name, "status": status,
                    "run_dir": found.dir.display().to_string()}));
            }
        }
    }
    (not_delivered, delivered, part_rows)
}

/// Phase 2: what only a one-machine run makes — products the goal asks for that no part made,
/// and the answers to the goal's questions.
fn split_shortfalls(goal: &str, delivered: &[&FoundPart]) -> Vec<String> {
    let mut out = Vec::new();
    // What only a one-machine run makes: answers to the goal's questions and products the
    // goal asks for that no part made.
    let made: std::collections::BTreeSet<String> = delivered
        .iter()
        .filter_map(|p| p.result.as_ref())
        .filter_map(|r| r["products"].as_object())
        .flat_map(|o| o.keys().cloned())
        .collect();
    for r in crate::catalog::intent::requested(goal) {
        if !made.contains(r.key) {
            out.push(format!(
                "{}: the goal asks for it, and a split run does not make it in this version (it combines methods or every part); run the project on one machine for it",
                r.name
            ));
        }
    }
    for q in crate::catalog::answers::questions(goal) {
        out.push(format!(
            "the answer to \"{}\": a split run does not answer the goal's questions in this version (they combine methods); run the project on one machine for the answers",
            q.words
        ));
    }
    out
}

/// What [`gather`] collects from the parts.
#[derive(Default)]
struct Gathered {
    steps: Vec<Value>,
    products: Map<String, Value>,
    units: BTreeMap<String, Value>,
    mt_models: Vec<String>,
    journal: String,
    report_parts: String,
    notes: Vec<String>,
    /// The ERT cell tables of the parts, by file name, in part order.
    tables: BTreeMap<String, Vec<String>>,
}

/// Phase 3: every part's figures and products copied under `part-<i>/` of `dir`, its steps
/// (tagged with the part), products (by part), MT site numbers and models, journal and report
/// section, in part order.
fn gather(
    plan: &Plan,
    parts: &BTreeMap<usize, FoundPart>,
    dir: &Path,
) -> Result<Gathered, MergeError> {
    // Files: each part's figures and products under part-<i>/; the MT models of every part
    // in one table, in site order.
    let mut g = Gathered::default();
    let Gathered {
        steps,
        products,
        units,
        mt_models,
        journal,
        report_parts,
        notes,
        tables,
    } = &mut g;
    for found in parts.values() {
        let tag = format!("part-{}", found.index);
        let part = &plan.parts.get(found.index);
        let name = part
            .map(|p| p.describe(plan.n_parts))
            .unwrap_or_else(|| tag.clone());
        for sub in ["figures", "products"] {
            copy_tree(&found.dir.join(sub), &dir.join(sub).join(&tag))?;
        }
        for name in ERT_TABLES {
            if let Ok(text) = std::fs::read_to_string(found.dir.join("products").join(name)) {
                tables.entry(name.to_string()).or_default().push(text);
            }
        }
        let mt_csv = found.dir.join("products").join("mt_models.csv");
        if let Ok(text) = std::fs::read_to_string(&mt_csv) {
            let mut lines = text.lines();
            let header = lines.next().unwrap_or_default();
            if mt_models.is_empty() {
                mt_models.push(header.to_string());
            }
            mt_models.extend(lines.map(str::to_string));
        }
        journal.push_str(
            &json!({"event": "warning", "text": format!("{name}, from {}", found.dir.display())})
                .to_string(),
        );
        journal.push('\n');
        if let Ok(text) = std::fs::read_to_string(found.dir.join(JOURNAL_FILE)) {
            journal.push_str(&text);
            if !text.ends_with('\n') {
                journal.push('\n');
            }
        }
        report_parts.push_str(&format!(
            "## {}\n\nRun folder: `{}`. Status: {}.\n\n",
            capitalise(&name),
            found.dir.display(),
            found
                .result
                .as_ref()
                .and_then(|r| r["status"].as_str())
                .unwrap_or("no result.json")
        ));
        let Some(result) = &found.result else {
            continue;
        };
        for (name, row) in super::campaign::project_rows(result) {
            let mut row = row;
            row["part"] = Value::from(found.index);
            units.insert(unit_key(super::campaign::PROJECT, &name), row);
        }
        if let Some(p) = part {
            for (key, v) in unit_numbers(p, result) {
                if let Some(b) = key.strip_prefix("ert-baseline:") {
                    // The baseline is inverted again in every part holding epochs: one entry,
                    // and a note if any part's baseline differs from the first's.
                    match units.get(&key) {
                        None => {
                            units.insert(key.clone(), v);
                        }
                        Some(first) if first["chi2"] != v["chi2"] => notes.push(format!(
                            "the baseline {b} came out with χ² {} in part {} and {} in part {}: the parts did not run the same inversion (different software or settings?)",
                            first["chi2"], first["part"], v["chi2"], v["part"]
                        )),
                        Some(_) => {}
                    }
                } else {
                    units.insert(key, v);
                }
            }
        }
        for s in result["steps"].as_array().into_iter().flatten() {
            let mut s = s.clone();
            if let Some(o) = s.as_object_mut() {
                o.insert("part".into(), Value::from(found.index));
            }
            report_parts.push_str(&format!(
                "### {}\n\n{}\n\n",
                s["label"].as_str().unwrap_or_default(),
                if s["error"].as_str().is_some_and(|e| !e.is_empty()) {
                    format!("Failed: {}", s["error"].as_str().unwrap_or_default())
                } else {
                    s["summary"].as_str().unwrap_or_default().to_string()
                }
            ));
            for f in s["figures"].as_array().into_iter().flatten() {
                if let Some(file) = f.as_str().and_then(|p| Path::new(p).file_name()) {
                    let rel = format!("figures/{tag}/{}", file.to_string_lossy());
                    report_parts.push_str(&format!("![{}]({rel})\n\n", file.to_string_lossy()));
                }
            }
            steps.push(s);
        }
        for (key, entry) in result["products"].as_object().into_iter().flatten() {
            if key == super::PART_CLOSED {
                continue;
            }
            match products.get_mut(key) {
                None => {
                    products.insert(
                        key.clone(),
                        json!({"by_part": {found.index.to_string(): entry}}),
                    );
                }
                Some(Value::Object(o)) => {
                    if let Some(Value::Object(b)) = o.get_mut("by_part") {
                        b.insert(found.index.to_string(), entry.clone());
                    }
                }
                Some(_) => {}
            }
        }
    }
    Ok(g)
}

/// Phase 4: the merged report's Markdown.
/// What the merge found, for the report: what was not delivered, each unit's numbers, notes.
struct Findings<'a> {
    not_delivered: &'a [String],
    units: &'a BTreeMap<String, Value>,
    notes: &'a [String],
}

fn report_markdown(
    goal: &str,
    status: RunStatus,
    plan: &Plan,
    n_found: usize,
    found: &Findings,
    report_parts: &str,
) -> String {
    let (not_delivered, units, notes) = (found.not_delivered, found.units, found.notes);
    let mut report = format!(
        "# {}\n\n| | |\n|---|---|\n| Status | {} |\n| Project | `{}` |\n| Parts | {} (merged from {} run folder(s)) |\n\n",
        if goal.is_empty() { "Merged run" } else { goal },
        status.word(),
        plan.project,
        plan.n_parts,
        n_found
    );
    report.push_str("## Not delivered\n\n");
    if not_delivered.is_empty() {
        report.push_str("Everything was delivered: every part succeeded.\n\n");
    } else {
        for n in not_delivered {
            report.push_str(&format!("- {n}\n"));
        }
        report.push('\n');
    }
    if !is_campaign(plan) {
        report.push_str(&format!(
            "A split run does not run the steps that combine methods or need every part ({}); a one-machine run of the project makes them. Each part's steps, products and figures follow, in part order.\n\n",
            super::CROSS_PART_TOOLS.join(", ")
        ));
    }
    if !plan.whole.is_empty() {
        report.push_str("## Work kept whole\n\n");
        for w in &plan.whole {
            report.push_str(&format!("- {} ({}): {}\n", w.method, w.kind, w.why));
        }
        report.push('\n');
    }
    if !notes.is_empty() {
        report.push_str("## Notes on the merge\n\n");
        for n in notes {
            report.push_str(&format!("- {n}\n"));
        }
        report.push('\n');
    }
    if is_campaign(plan) {
        report.push_str(&projects_table(plan, units));
    } else {
        report.push_str(&units_table(plan, units));
    }
    report.push_str(report_parts);
    report
}

/// Whether `plan` splits a campaign (its units are whole projects).
fn is_campaign(plan: &Plan) -> bool {
    plan.parts
        .iter()
        .flat_map(|p| &p.units)
        .any(|u| u.method == super::campaign::PROJECT)
}

/// The merged report's table of a campaign's projects, in plan order: each one's part,
/// status and report (a project whose part is missing: not delivered).
fn projects_table(plan: &Plan, units: &BTreeMap<String, Value>) -> String {
    use crate::catalog::kit::markdown::cell;
    let mut body = String::new();
    for part in &plan.parts {
        for u in &part.units {
            let row = units.get(&unit_key(&u.method, &u.name));
            let (status, report) = match row {
                Some(r) => (
                    r["status"].as_str().unwrap_or("unknown").to_string(),
                    r["report"].as_str().map_or_else(
                        || r["why"].as_str().unwrap_or("–").to_string(),
                        |p| format!("`{p}`"),
                    ),
                ),
                None => ("not delivered".to_string(), "–".to_string()),
            };
            body.push_str(&format!(
                "| {} | {} | {} | {} |\n",
                cell(&u.name),
                part.index,
                cell(&status),
                cell(&report)
            ));
        }
    }
    format!(
        "## Projects\n\nEach project was run whole, as on one machine; its answers and figures are in its own report.\n\n| Project | Part | Status | Report |\n|---|---|---|---|\n{body}\n"
    )
}

/// The merged report's table of units, in plan order: the ERT baseline (inverted again in
/// every part holding epochs), then each unit of each part with its fit, or "not delivered".
fn units_table(plan: &Plan, units: &BTreeMap<String, Value>) -> String {
    use crate::catalog::kit::markdown::cell;
    let num = |v: &Value, d: usize| {
        v.as_f64()
            .map_or_else(|| "–".to_string(), |x| format!("{x:.d$}"))
    };
    let row = |kind: &str, name: &str, v: Option<&Value>| -> String {
        match v {
            Some(v) => {
                let (misfit, what) = if v["rms"].is_number() {
                    (num(&v["rms"], 3), "RMS")
                } else {
                    (num(&v["rrms_percent"], 2), "RRMS %")
                };
                format!(
                    "| {kind} | {} | {} | {} | {misfit} ({what}) |\n",
                    cell(name),
                    v["part"],
                    num(&v["chi2"], 3)
                )
            }
            None => format!("| {kind} | {} | – | not delivered | – |\n", cell(name)),
        }
    };
    let mut body = String::new();
    for (key, v) in units.iter().filter(|(k, _)| k.starts_with("ert-baseline:")) {
        body.push_str(&row(
            "ERT baseline",
            key.trim_start_matches("ert-baseline:"),
            Some(v),
        ));
    }
    for part in &plan.parts {
        for u in part.units.iter().filter(|u| u.method != REST) {
            let kind = match u.method.as_str() {
                ERT_EPOCH => "ERT epoch",
                TDEM_SOUNDING => "TDEM sounding",
                _ => "MT site",
            };
            body.push_str(&row(
                kind,
                &u.name,
                units.get(&unit_key(&u.method, &u.name)),
            ));
        }
    }
    if body.is_empty() {
        return String::new();
    }
    format!("## Units\n\n| Unit | Name | Part | χ² | Misfit |\n|---|---|---|---|---|\n{body}\n")
}

/// Merge CSV tables column by column: the first table whole, then each later table's
/// columns the earlier ones do not have. Every table must have the same rows (the same cells)
/// and agree on every column they share.
fn merge_columns(tables: &[String]) -> Result<String, String> {
    let split = |t: &str| -> Vec<Vec<String>> {
        t.lines()
            .map(|l| l.split(',').map(str::to_string).collect())
            .collect()
    };
    let mut out = match tables.first() {
        Some(t) => split(t),
        None => return Err("no table".into()),
    };
    for (k, t) in tables.iter().enumerate().skip(1) {
        let rows = split(t);
        if rows.len() != out.len() || rows.is_empty() {
            return Err(format!(
                "part tables differ in rows ({} and {})",
                out.len(),
                rows.len()
            ));
        }
        let header = rows[0].clone();
        for (c, name) in header.iter().enumerate() {
            match out[0].iter().position(|h| h == name) {
                Some(o) => {
                    if rows.iter().zip(&out).any(|(r, m)| r.get(c) != m.get(o)) {
                        return Err(format!(
                            "column {name} of table {} differs from the first part's",
                            k + 1
                        ));
                    }
                }
                None => {
                    for (r, m) in rows.iter().zip(out.iter_mut()) {
                        m.push(r.get(c).cloned().unwrap_or_default());
                    }
                }
            }
        }
    }
    Ok(out
        .iter()
        .map(|r| r.join(","))
        .collect::<Vec<_>>()
        .join("\n")
        + "\n")
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}
