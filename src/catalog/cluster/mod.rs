//! Beyond one machine (issue 25): the independent work of a project split into parts, each
//! part run on its own (`run --part i/N`), the parts merged into one run folder
//! ([`merge`]), and the Slurm scripts that fan the parts out ([`slurm`]).
//!
//! A *unit* is a piece of work whose numbers do not depend on any other unit ([`units`]): an
//! ERT epoch of a difference, ratio or independent time-lapse (inverted against the baseline,
//! which every part holding epochs inverts again, to the same numbers), a TDEM sounding
//! inverted one by one, an MT site, and "the rest of the project" (every other input, run
//! whole in one part). Coupled work — a simultaneous ERT time-lapse, a laterally constrained
//! TDEM line — is never split and the plan says so, as it says what a split run does not make.
//!
//! A part runs the same tools as a one-machine run, minus the steps that combine methods or
//! all the units (fusion, interpretations, the answers, the report, MT water content, the TDEM
//! plan-view maps of a split line): those need every part, and the merged run lists what they
//! would have made under *Not delivered* when the goal asks for it.

pub mod campaign;
pub mod merge;
pub mod slurm;
mod units;

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

/// The method name of an ERT epoch unit (a later survey of a relative or independent
/// time-lapse).
pub const ERT_EPOCH: &str = "ert_epoch";

/// The method name of a TDEM sounding unit.
pub const TDEM_SOUNDING: &str = "tdem_sounding";

/// The tool a part holding TDEM soundings does not run: a map of part of a line is not the
/// line's map.
const LINE_MAP_TOOL: &str = "map_tdem_plan_view";

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
    /// `mt` (one site), `ert_epoch`, `tdem_sounding` or `rest` (every input not split).
    pub method: String,
    /// The site's or epoch's file stem, the sounding's name, or a description of the rest.
    pub name: String,
    /// The input file of the unit as the project writes it; the input roles of the rest.
    pub inputs: Vec<String>,
    /// The unit's index among its method's inputs: the MT file, the ERT survey (1 is the
    /// first after the baseline), the TDEM sounding in the file (0-based).
    #[serde(default)]
    pub index: Option<usize>,
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
    /// "part 1 of 3 (MT site site02; TDEM soundings snd1 … snd20 (20))", the name a missing
    /// part is given.
    pub fn describe(&self, n_parts: usize) -> String {
        let mut groups: Vec<String> = Vec::new();
        let mut rest: Vec<String> = Vec::new();
        for (method, one, many) in [
            (ERT_EPOCH, "ERT epoch", "ERT epochs"),
            (TDEM_SOUNDING, "TDEM sounding", "TDEM soundings"),
            (MT, "MT site", "MT sites"),
            (campaign::PROJECT, "project", "projects"),
        ] {
            let names: Vec<&str> = self
                .units
                .iter()
                .filter(|u| u.method == method)
                .map(|u| u.name.as_str())
                .collect();
            match names.as_slice() {
                [] => {}
                [a] => groups.push(format!("{one} {a}")),
                _ if (method == MT || method == campaign::PROJECT) && names.len() <= 3 => {
                    groups.extend(names.iter().map(|n| format!("{one} {n}")));
                }
                [a, .., b] => groups.push(format!("{many} {a} … {b} ({})", names.len())),
            }
        }
        rest.extend(
            self.units
                .iter()
                .filter(|u| u.method == REST)
                .map(|u| u.name.clone()),
        );
        rest.extend(groups);
        format!("part {} of {n_parts} ({})", self.index, rest.join("; "))
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

/// Deal `by_method` (each method's units, in project order) and `rest` out to `n_parts`
/// parts: each method's units in contiguous runs, one run to each of the parts holding least
/// so far (the first such parts taking one more when they do not divide evenly), then the
/// rest to the part holding least; every part's units in project order (rest, ERT, TDEM, MT).
fn deal(rest: Option<Unit>, by_method: Vec<Vec<Unit>>, n_parts: usize) -> Vec<Part> {
    let mut parts: Vec<Part> = (0..n_parts)
        .map(|index| Part {
            index,
            units: Vec::new(),
        })
        .collect();
    for units in by_method {
        let n_runs = units.len().min(n_parts);
        if n_runs == 0 {
            continue;
        }
        let (per, extra) = (units.len() / n_runs, units.len() % n_runs);
        let mut order: Vec<usize> = (0..n_parts).collect();
        order.sort_by_key(|&i| (parts[i].units.len(), i));
        let mut it = units.into_iter();
        for (k, &i) in order.iter().take(n_runs).enumerate() {
            let take = per + usize::from(k < extra);
            parts[i].units.extend(it.by_ref().take(take));
        }
    }
    if let Some(r) = rest
        && let Some(i) = (0..n_parts).min_by_key(|&i| (parts[i].units.len(), i))
    {
        parts[i].units.insert(0, r);
    }
    parts
}

/// Split `project` into `n_parts` parts ([`deal`]): the rest of the project (when there is
/// any) is one unit; ERT epochs, TDEM soundings and MT sites are units of their own where the
/// work is independent ([`units`]).
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
    let splits = [
        units::ert_epochs(project)?,
        units::tdem_soundings(project)?,
        units::mt_sites(project)?,
    ];
    let taken: Vec<&str> = splits
        .iter()
        .filter(|m| !m.units.is_empty())
        .flat_map(|m| m.roles.iter().copied())
        .collect();
    let rest_roles: Vec<String> = project
        .inputs
        .iter()
        .filter(|(k, v)| !taken.contains(&k.as_str()) && !v.is_null())
        .map(|(k, _)| k.clone())
        .collect();
    let rest = (!rest_roles.is_empty()).then(|| Unit {
        method: REST.into(),
        name: format!("the rest of the project ({})", rest_roles.join(", ")),
        inputs: rest_roles,
        index: None,
    });
    let n_units = usize::from(rest.is_some()) + splits.iter().map(|m| m.units.len()).sum::<usize>();
    if n_units < n_parts {
        let names: Vec<String> = rest
            .iter()
            .chain(splits.iter().flat_map(|m| &m.units))
            .map(|u| u.name.clone())
            .collect();
        return Err(SplitError::TooFewUnits {
            project: file,
            n_parts,
            n_units,
            units: names.join("; "),
        });
    }
    let whole: Vec<Whole> = splits.iter().flat_map(|m| m.whole.clone()).collect();
    let parts = deal(rest, splits.into_iter().map(|m| m.units).collect(), n_parts);
    Ok(Plan {
        project: file,
        n_parts,
        parts,
        whole,
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

/// The project a part runs: the same goal and settings, the inputs of its units only — the
/// rest's roles; every ERT survey with `time_lapse_epochs` naming the part's epochs; the TDEM
/// file with `tdem_params.soundings` naming its soundings, inverted one by one; its MT sites.
pub fn part_project(project: &Project, part: &Part) -> Project {
    let mut sub = project.clone();
    let mut inputs = serde_json::Map::new();
    let copy_role = |inputs: &mut serde_json::Map<String, Value>, role: &str| {
        if let Some(v) = project.inputs.get(role) {
            inputs.insert(role.to_string(), v.clone());
        }
    };
    let indices = |method: &str| -> Vec<usize> {
        part.units
            .iter()
            .filter(|u| u.method == method)
            .filter_map(|u| u.index)
            .collect()
    };
    for u in part.units.iter().filter(|u| u.method == REST) {
        for role in &u.inputs {
            copy_role(&mut inputs, role);
        }
    }
    let epochs = indices(ERT_EPOCH);
    if !epochs.is_empty() {
        copy_role(&mut inputs, keys::ERT_FILES);
        copy_role(&mut inputs, keys::ELECTRODE_FILE);
        sub.config
            .insert(keys::TIME_LAPSE_EPOCHS.into(), Value::from(epochs));
    }
    let soundings = indices(TDEM_SOUNDING);
    if !soundings.is_empty() {
        copy_role(&mut inputs, keys::TDEM_FILE);
        copy_role(&mut inputs, keys::TDEM_GEOMETRY_FILE);
        let mut params = project
            .config
            .get(keys::TDEM_PARAMS)
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        params.insert("soundings".into(), Value::from(soundings));
        params.insert("lateral_constraints".into(), Value::Bool(false));
        sub.config
            .insert(keys::TDEM_PARAMS.into(), Value::Object(params));
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
    let split_line = part.units.iter().any(|u| u.method == TDEM_SOUNDING);
    let tools: Vec<Tool> = crate::catalog::shared_registry()
        .tools()
        .iter()
        .filter(|t| !CROSS_PART_TOOLS.contains(&t.name.as_str()))
        .filter(|t| !(split_line && t.name == LINE_MAP_TOOL))
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
        assert_eq!(tdem.kind, "not_split");
        assert!(tdem.why.contains("could not be read"), "{tdem:?}");
        // The sub-projects: part 1 has one site and nothing else.
        let sub = part_project(&p, &plan.parts[1]);
        assert_eq!(sub.inputs.len(), 1);
        assert_eq!(sub.inputs[keys::MT_FILES], serde_json::json!(["mt/b.edi"]));
        let sub0 = part_project(&p, &plan.parts[0]);
        assert_eq!(sub0.inputs[keys::MT_FILES], serde_json::json!(["mt/a.edi"]));
        assert!(sub0.inputs.contains_key(keys::TDEM_FILE));
    }

    /// A project in a folder beside the example's TDEM soundings (five, 20 m apart) and four
    /// ERT file names (never read by the plan).
    fn tdem_project(dir: &Path, config: Value) -> Project {
        let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/example/tdem");
        for f in ["soundings.csv", "geometry.csv"] {
            std::fs::copy(example.join(f), dir.join(f)).unwrap();
        }
        let text = serde_json::json!({"goal": "g", "config": config, "inputs": {
            "ert_files": ["a.dat", "b.dat", "c.dat", "d.dat"],
            "tdem_file": "soundings.csv", "tdem_geometry_file": "geometry.csv",
            "gravmag_file": "g.csv"}})
        .to_string();
        Project::parse(&text, &dir.join("project.json")).unwrap()
    }

    fn units_of(plan: &Plan, method: &str) -> Vec<(usize, usize)> {
        plan.parts
            .iter()
            .flat_map(|p| {
                p.units
                    .iter()
                    .filter(|u| u.method == method)
                    .map(move |u| (p.index, u.index.unwrap_or(usize::MAX)))
            })
            .collect()
    }

    #[test]
    fn relative_time_lapse_epochs_and_one_by_one_soundings_are_units_and_coupled_work_is_not() {
        let tmp = tempfile::tempdir().unwrap();
        let tdem = serde_json::from_str::<Value>(crate::example::tdem::TDEM_PARAMS).unwrap();
        let mut free = tdem.clone();
        free["lateral_constraints"] = Value::Bool(false);
        // Difference scheme, soundings one by one: 3 epochs and 5 soundings are units, each
        // method's dealt in contiguous runs to the parts holding least (the soundings' first
        // run to part 1, which has one epoch to part 0's two), then the rest (gravity) to the
        // part holding least, the first of a tie.
        let p = tdem_project(
            tmp.path(),
            serde_json::json!({"time_lapse_method": "difference", "tdem_params": free}),
        );
        let plan = plan(&p, 2).unwrap();
        assert_eq!(units_of(&plan, ERT_EPOCH), vec![(0, 1), (0, 2), (1, 3)]);
        assert_eq!(
            units_of(&plan, TDEM_SOUNDING),
            vec![(0, 3), (0, 4), (1, 0), (1, 1), (1, 2)]
        );
        assert_eq!(plan.parts[0].units[0].method, REST);
        assert_eq!(
            plan.parts[0].units[0].inputs,
            vec!["gravmag_file".to_string()]
        );
        assert!(
            plan.whole
                .iter()
                .any(|w| w.method == "ERT" && w.kind == "shared")
        );
        // The part's project: every ERT survey, its epochs named; the TDEM file with its
        // soundings, one by one; nothing of the rest in part 1.
        let sub = part_project(&p, &plan.parts[1]);
        assert_eq!(sub.inputs[keys::ERT_FILES], p.inputs[keys::ERT_FILES]);
        assert_eq!(sub.config[keys::TIME_LAPSE_EPOCHS], serde_json::json!([3]));
        assert_eq!(
            sub.config[keys::TDEM_PARAMS]["soundings"],
            serde_json::json!([0, 1, 2])
        );
        assert_eq!(sub.config[keys::TDEM_PARAMS]["lateral_constraints"], false);
        assert_eq!(sub.config[keys::TDEM_PARAMS]["loop_radius_m"], 20.0);
        assert!(!sub.inputs.contains_key("gravmag_file"));
        assert_eq!(
            plan.parts[1].describe(2),
            "part 1 of 2 (ERT epoch d; TDEM soundings snd1 … snd3 (3))"
        );
        // A part holding soundings makes no plan-view map of its piece of the line.
        assert!(
            part_registry(&plan.parts[0], 2)
                .get(LINE_MAP_TOOL)
                .is_none()
        );

        // Coupled or not split, each with its reason: the simultaneous scheme, outlier
        // rejection, the laterally constrained line (the default at 20 m spacing), a fixed λ
        // the evaluation retries.
        for (config, method, kind, says) in [
            (
                serde_json::json!({"tdem_params": free}),
                "ERT",
                "coupled",
                "simultaneous",
            ),
            (
                serde_json::json!({"time_lapse_method": "ratio", "tdem_params": free,
                    "inversion_params": {"outlier_threshold": 3.0}}),
                "ERT",
                "coupled",
                "outlier",
            ),
            (
                serde_json::json!({"tdem_params": tdem}),
                "TDEM",
                "coupled",
                "laterally constrained",
            ),
            (
                serde_json::json!({"tdem_params": {"lambda": 5.0, "lateral_constraints": false,
                    "loop_radius_m": 20.0, "unit": "V/(A·m²)"}}),
                "TDEM",
                "not_split",
                "fixed λ",
            ),
        ] {
            let p = tdem_project(tmp.path(), config.clone());
            let plan = super::plan(&p, 1).unwrap();
            let w = plan
                .whole
                .iter()
                .find(|w| w.method == method && w.kind == kind)
                .unwrap_or_else(|| panic!("{config}: {:?}", plan.whole));
            assert!(w.why.contains(says), "{config}: {}", w.why);
            let kind_of = if method == "ERT" {
                ERT_EPOCH
            } else {
                TDEM_SOUNDING
            };
            assert!(units_of(&plan, kind_of).is_empty(), "{config}");
        }
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
