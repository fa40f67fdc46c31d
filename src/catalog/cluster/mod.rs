//! Beyond one machine (issue 25): the independent work of a project split into parts, each
//! part run on its own (`run --part i/N`), the parts merged into one run folder
//! ([`merge`]), and the Slurm scripts that fan the parts out ([`slurm`]).
//!
//! A *unit* is a piece of work whose numbers do not depend on any other unit: in this version
//! an MT site (each site is an Occam 1D inversion of its own, judged on its own), and "the rest
//! of the project" (every other method, run whole in one part). Coupled work — a simultaneous
//! ERT time-lapse, a laterally constrained TDEM line — is never split and the plan says so;
//! work that could be split but is not in this version (ERT epochs of a difference, ratio or
//! independent time-lapse; TDEM soundings inverted one by one) is named with the reason.
//!
//! A part runs the same tools as a one-machine run, minus the steps that combine methods or
//! all the units (fusion, interpretations, the answers, the report, MT water content): those
//! need every part, and the merged run lists what they would have made under *Not delivered*.

pub mod merge;
pub mod slurm;

use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::catalog::kit::keys;
use crate::runtime::product::JsonProduct;
use crate::runtime::session::RunSpec;
use crate::runtime::tool::{Outputs, Registry, Tool};
use crate::runtime::{Project, RunContext};

/// The run setting (in `run.json`) that says which part a run folder holds.
pub const PART_SETTING: &str = "part";

/// The artifact a part's last step makes: the part's run is finished when it exists.
pub const PART_CLOSED: &str = "part_closed";

/// The tools a part never runs: each combines methods or needs every unit of a split method.
pub const CROSS_PART_TOOLS: &[&str] = &[
    "fuse_methods",
    "interpret_water_table",
    "interpret_bedrock",
    "interpret_change",
    "interpret_water_content",
    "answer_questions",
    "write_report",
    "write_survey_report",
    "convert_mt_water_content",
];

/// The method name of the unit that holds every input not split.
pub const REST: &str = "rest";

/// The method name of an MT site unit.
pub const MT: &str = "mt";

/// Why a project cannot be split as asked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SplitError {
    /// `--parts 0`, or a part index outside `0..N`.
    #[error("expected {expected}, found {found}")]
    Count {
        /// What is accepted.
        expected: String,
        /// What was given.
        found: String,
    },
    /// More parts than independent units.
    #[error(
        "{project}: {n_parts} parts asked for, but the project has only {n_units} independent unit(s) of work ({units}); ask for at most {n_units} part(s)"
    )]
    TooFewUnits {
        /// The project file.
        project: String,
        /// Parts asked for.
        n_parts: usize,
        /// Units there are.
        n_units: usize,
        /// Their names.
        units: String,
    },
    /// `mt_files` is not a list of paths.
    #[error("{project}: input {role}: expected a path or a list of paths, found {found}")]
    Inputs {
        /// The project file.
        project: String,
        /// The input role.
        role: String,
        /// What is there.
        found: String,
    },
}

/// One independent piece of work.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unit {
    /// `mt` (one site) or `rest` (every input not split).
    pub method: String,
    /// The site's name (its file stem), or a description of the rest.
    pub name: String,
    /// The input file of an MT site as the project writes it; the input roles of the rest.
    pub inputs: Vec<String>,
}

/// Work the plan keeps whole, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Whole {
    /// The method.
    pub method: String,
    /// `coupled` (the units are solved together) or `not_split` (independent, but this
    /// version runs them in one part).
    pub kind: String,
    /// Why, in words.
    pub why: String,
}

/// One part: the units it runs, in project order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Part {
    /// 0-based (Slurm's `$SLURM_ARRAY_TASK_ID`).
    pub index: usize,
    /// Its units.
    pub units: Vec<Unit>,
}

impl Part {
    /// "part 1 of 3 (MT sites site02, site03)", the name a missing part is given.
    pub fn describe(&self, n_parts: usize) -> String {
        let names: Vec<String> = self
            .units
            .iter()
            .map(|u| match u.method.as_str() {
                MT => format!("MT site {}", u.name),
                _ => u.name.clone(),
            })
            .collect();
        format!("part {} of {n_parts} ({})", self.index, names.join("; "))
    }
}

/// The split of a project into parts (`hydrogeo-studio parts`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// The project file.
    pub project: String,
    /// Parts in all.
    pub n_parts: usize,
    /// The parts, by index.
    pub parts: Vec<Part>,
    /// Work kept whole (in the part holding the rest), with the reason.
    pub whole: Vec<Whole>,
}

/// The entries of a path or list-of-paths input role, as written.
fn paths_of(project: &Project, role: &str) -> Result<Vec<String>, SplitError> {
    let bad = |found: String| SplitError::Inputs {
        project: project.file.display().to_string(),
        role: role.to_string(),
        found,
    };
    match project.inputs.get(role) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(vec![s.clone()]),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| bad(format!("a list holding {v}")))
            })
            .collect(),
        Some(other) => Err(bad(other.to_string())),
    }
}

/// The file stem of a path as written ("mt/site01.edi" → "site01").
fn stem(path: &str) -> String {
    Path::new(path)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.to_string())
}

/// What the plan keeps whole, from the project's inputs and settings.
fn kept_whole(project: &Project) -> Vec<Whole> {
    let mut out = Vec::new();
    let has = |role: &str| project.inputs.get(role).is_some_and(|v| !v.is_null());
    if has(keys::ERT_FILES) || has("ert_file") || has("ert_dir") {
        let scheme = project
            .config
            .get(keys::TIME_LAPSE_METHOD)
            .and_then(Value::as_str)
            .unwrap_or("simultaneous")
            .to_lowercase();
        out.push(if scheme.starts_with("simultaneous") || scheme == "4d" {
            Whole {
                method: "ERT".into(),
                kind: "coupled".into(),
                why: "a simultaneous (4D) time-lapse inverts every epoch together, with temporal regularisation between them: one part".into(),
            }
        } else {
            Whole {
                method: "ERT".into(),
                kind: "not_split".into(),
                why: format!("the {scheme} time-lapse epochs are independent after the baseline, but this version runs them in one part (the evaluation's λ retries judge all epochs together)"),
            }
        });
    }
    if has(keys::TDEM_FILE) {
        let lateral = project
            .config
            .get(keys::TDEM_PARAMS)
            .and_then(|p| p.get("lateral_constraints"))
            .and_then(Value::as_bool);
        out.push(Whole {
            method: "TDEM".into(),
            kind: if lateral == Some(false) { "not_split" } else { "coupled" }.into(),
            why: if lateral == Some(false) {
                "the soundings are inverted one by one, but the evaluation's λ retries judge them together, so this version runs them in one part".into()
            } else {
                "a laterally constrained inversion (the default when the soundings are close; tdem_params.lateral_constraints) solves every sounding of the line together: one part".into()
            },
        });
    }
    if has(keys::MT_DIR) && !has(keys::MT_FILES) {
        out.push(Whole {
            method: "MT".into(),
            kind: "not_split".into(),
            why: "the sites are named by a folder (mt_dir); list them in mt_files to split them by site".into(),
        });
    }
    out
}

/// Split `project` into `n_parts` parts: the rest of the project (when there is any) is the
/// first unit, then each MT site of `mt_files` in order; the units are dealt out in
/// contiguous runs, the first parts taking one more when they do not divide evenly.
pub fn plan(project: &Project, n_parts: usize) -> Result<Plan, SplitError> {
    // The split is of what a run would run: files the goal names are adopted first, as
    // `catalog::run_spec` does.
    let (adopted, _) = crate::catalog::fusion::adopt_request_inputs(project.clone());
    let project = &adopted;
    // Absolute, so the plan (and the commands a merge prints for a missing part) read the
    // same whichever folder each part was started from.
    // Canonical, as `slurm` writes it into the scripts: a part re-run by hand through another
    // path to the same project still belongs to the same split.
    let file = std::fs::canonicalize(&project.file)
        .or_else(|_| std::path::absolute(&project.file))
        .unwrap_or_else(|_| project.file.clone())
        .display()
        .to_string();
    if n_parts == 0 {
        return Err(SplitError::Count {
            expected: "at least 1 part".into(),
            found: "0".into(),
        });
    }
    let sites = paths_of(project, keys::MT_FILES)?;
    let rest_roles: Vec<String> = project
        .inputs
        .iter()
        .filter(|(k, v)| k.as_str() != keys::MT_FILES && !v.is_null())
        .map(|(k, _)| k.clone())
        .collect();
    let mut units = Vec::new();
    if !rest_roles.is_empty() {
        units.push(Unit {
            method: REST.into(),
            name: format!("the rest of the project ({})", rest_roles.join(", ")),
            inputs: rest_roles,
        });
    }
    for s in &sites {
        units.push(Unit {
            method: MT.into(),
            name: stem(s),
            inputs: vec![s.clone()],
        });
    }
    if units.len() < n_parts {
        return Err(SplitError::TooFewUnits {
            project: file,
            n_parts,
            n_units: units.len(),
            units: units
                .iter()
                .map(|u| u.name.clone())
                .collect::<Vec<_>>()
                .join("; "),
        });
    }
    let (per, extra) = (units.len() / n_parts, units.len() % n_parts);
    let mut parts = Vec::new();
    let mut it = units.into_iter();
    for index in 0..n_parts {
        let take = per + usize::from(index < extra);
        parts.push(Part {
            index,
            units: it.by_ref().take(take).collect(),
        });
    }
    Ok(Plan {
        project: file,
        n_parts,
        parts,
        whole: kept_whole(project),
    })
}

/// Parse `i/N` (0-based `i`, as `$SLURM_ARRAY_TASK_ID/N`).
pub fn parse_part(text: &str) -> Result<(usize, usize), SplitError> {
    let bad = || SplitError::Count {
        expected: "--part i/N with 0 ≤ i < N (e.g. 0/3)".into(),
        found: format!("'{text}'"),
    };
    let (i, n) = text.split_once('/').ok_or_else(bad)?;
    let (i, n) = (
        i.trim().parse::<usize>().map_err(|_| bad())?,
        n.trim().parse::<usize>().map_err(|_| bad())?,
    );
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

/// The project a part runs: the same goal and settings, the inputs of its units only.
pub fn part_project(project: &Project, part: &Part) -> Project {
    let mut sub = project.clone();
    let mut inputs = serde_json::Map::new();
    for u in &part.units {
        if u.method == REST {
            for role in &u.inputs {
                if let Some(v) = project.inputs.get(role) {
                    inputs.insert(role.clone(), v.clone());
                }
            }
        }
    }
    let sites: Vec<Value> = part
        .units
        .iter()
        .filter(|u| u.method == MT)
        .flat_map(|u| u.inputs.iter().cloned().map(Value::from))
        .collect();
    if !sites.is_empty() {
        inputs.insert(keys::MT_FILES.into(), Value::Array(sites));
    }
    sub.inputs = inputs;
    sub
}

/// The tools of a part: the catalog's, without [`CROSS_PART_TOOLS`], and a last step that
/// closes the part once nothing else can run.
pub fn part_registry(part: &Part, n_parts: usize) -> Registry {
    let tools: Vec<Tool> = crate::catalog::shared_registry()
        .tools()
        .iter()
        .filter(|t| !CROSS_PART_TOOLS.contains(&t.name.as_str()))
        .cloned()
        .collect();
    let mut reg = Registry::new();
    for t in &tools {
        // Names are unique in the catalog (its test `every_tool_registers_once`).
        let _ = reg.register(t.clone());
    }
    let others = Arc::new(tools);
    let name = part.describe(n_parts);
    let close = Tool::new(
        "close_part",
        "Close this part of a split run once every step it can run has run; the merge makes the report.",
        move |_ctx: &mut RunContext| {
            Ok((
                format!("Closed {name}: no further step of this part can run; `hydrogeo-studio merge` makes the report from every part."),
                Outputs::new().with(PART_CLOSED, JsonProduct::new("part closed", Value::Null)),
            ))
        },
    )
    .produces(&[PART_CLOSED])
    .label("Close this part")
    .module("report")
    .agent("Report")
    .when(move |ctx| others.iter().all(|t| !t.available(ctx)));
    let _ = reg.register(close);
    reg
}

/// What `run.json` records of a part: its index, the plan, and the units it holds.
pub fn part_setting(plan: &Plan, index: usize) -> Value {
    serde_json::json!({
        "index": index,
        "n_parts": plan.n_parts,
        "plan": plan,
    })
}

/// The run specification of part `index` of `plan`: the part's project, the part's tools
/// (see [`part_registry`]), finished by [`PART_CLOSED`], no report.
pub fn part_spec(
    project: &Project,
    plan: &Plan,
    index: usize,
) -> Result<(RunSpec, Registry), SplitError> {
    let part = plan.parts.get(index).ok_or_else(|| SplitError::Count {
        expected: format!("a part index below {}", plan.n_parts),
        found: index.to_string(),
    })?;
    let (adopted, notes) = crate::catalog::fusion::adopt_request_inputs(project.clone());
    let sub = part_project(&adopted, part);
    let registry = part_registry(part, plan.n_parts);
    let mut spec = RunSpec::new(sub);
    spec.notes = notes;
    spec.notes.push(format!(
        "This run is {} of a split run: the steps that combine methods or every part (fusion, interpretation, answers, the report) are made by `hydrogeo-studio merge`.",
        part.describe(plan.n_parts)
    ));
    spec.finish = PART_CLOSED.to_string();
    spec.max_steps = spec.max_steps.max(2 * registry.len());
    spec.settings
        .insert(PART_SETTING.into(), part_setting(plan, index));
    Ok((spec, registry))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(inputs: Value, config: Value) -> Project {
        let text = serde_json::json!({"goal": "g", "inputs": inputs, "config": config}).to_string();
        Project::parse(&text, Path::new("/p/project.json")).unwrap()
    }

    #[test]
    fn mt_sites_are_dealt_out_after_the_rest_and_coupled_work_is_named() {
        let p = project(
            serde_json::json!({"mt_files": ["mt/a.edi", "mt/b.edi", "mt/c.edi"],
                "ert_files": ["e1.dat", "e2.dat"], "tdem_file": "t.csv"}),
            serde_json::json!({}),
        );
        let plan = plan(&p, 3).unwrap();
        let names: Vec<Vec<String>> = plan
            .parts
            .iter()
            .map(|p| p.units.iter().map(|u| u.name.clone()).collect())
            .collect();
        assert_eq!(names[0].len(), 2, "{names:?}");
        assert!(names[0][0].starts_with("the rest"), "{names:?}");
        assert_eq!(names[0][1], "a");
        assert_eq!(names[1], vec!["b".to_string()]);
        assert_eq!(names[2], vec!["c".to_string()]);
        let ert = plan.whole.iter().find(|w| w.method == "ERT").unwrap();
        assert_eq!(ert.kind, "coupled");
        let tdem = plan.whole.iter().find(|w| w.method == "TDEM").unwrap();
        assert_eq!(tdem.kind, "coupled");
        // The sub-projects: part 1 has one site and nothing else.
        let sub = part_project(&p, &plan.parts[1]);
        assert_eq!(sub.inputs.len(), 1);
        assert_eq!(sub.inputs[keys::MT_FILES], serde_json::json!(["mt/b.edi"]));
        let sub0 = part_project(&p, &plan.parts[0]);
        assert_eq!(sub0.inputs[keys::MT_FILES], serde_json::json!(["mt/a.edi"]));
        assert!(sub0.inputs.contains_key(keys::TDEM_FILE));
    }

    #[test]
    fn too_many_parts_and_bad_indices_are_refused_with_what_was_expected() {
        let p = project(
            serde_json::json!({"mt_files": ["a.edi"]}),
            serde_json::json!({}),
        );
        let e = plan(&p, 2).unwrap_err().to_string();
        assert!(e.contains("only 1 independent unit"), "{e}");
        assert!(plan(&p, 0).is_err());
        assert_eq!(parse_part("2/3").unwrap(), (2, 3));
        assert!(parse_part("3/3").is_err());
        assert!(parse_part("x").unwrap_err().to_string().contains("'x'"));
    }

    #[test]
    fn a_part_never_runs_a_step_that_needs_every_part() {
        let reg = part_registry(
            &Part {
                index: 0,
                units: vec![],
            },
            1,
        );
        for t in CROSS_PART_TOOLS {
            assert!(
                crate::catalog::shared_registry().get(t).is_some(),
                "{t} is not a catalog tool (renamed?)"
            );
            assert!(reg.get(t).is_none(), "{t}");
        }
        assert!(reg.get("invert_mt").is_some());
        assert!(reg.get("close_part").is_some());
    }
}
