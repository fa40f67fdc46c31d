//! A campaign: a folder of projects (each sub-folder with a `project.json`), the whole
//! projects the units of a split run. A part runs each of its projects as a one-machine run
//! — its own journal, answers and report — and writes a part folder that lists them; the merge
//! makes one run folder naming every project, its status and its report.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{PART_SETTING, Part, Plan, SplitError, Unit, part_setting};
use crate::runtime::project::PROJECT_FILE;
use crate::runtime::run_folder::{
    RESULT_FILE, RUN_FILE, RunFolder, RunStatus, write_atomic, write_file_atomic,
};

/// The method name of a unit that is a whole project of a campaign.
pub const PROJECT: &str = "project";

/// A folder of projects.
#[derive(Debug, Clone, PartialEq)]
pub struct Campaign {
    /// The campaign folder.
    pub dir: PathBuf,
    /// Each project's name (its folder's) and project file, by name.
    pub projects: Vec<(String, PathBuf)>,
}

impl Campaign {
    /// The campaign at `path`: a folder with no `project.json` of its own whose sub-folders
    /// hold one each (those without are not projects and are left out). `None` for anything
    /// else, a project among them.
    pub fn find(path: &Path) -> Option<Campaign> {
        if !path.is_dir() || path.join(PROJECT_FILE).exists() {
            return None;
        }
        let mut projects: Vec<(String, PathBuf)> = std::fs::read_dir(path)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.join(PROJECT_FILE).is_file())
            .map(|p| {
                let name = p
                    .file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
                (name, p.join(PROJECT_FILE))
            })
            .collect();
        if projects.is_empty() {
            return None;
        }
        projects.sort();
        let dir = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        Some(Campaign { dir, projects })
    }

    /// The split of the campaign into `n_parts` parts: one unit per project, in contiguous
    /// runs (the first parts taking one more when they do not divide evenly).
    pub fn plan(&self, n_parts: usize) -> Result<Plan, SplitError> {
        let n = self.projects.len();
        if n_parts == 0 || n_parts > n {
            return Err(SplitError::TooFewUnits {
                project: self.dir.display().to_string(),
                n_parts,
                n_units: n,
                units: self
                    .projects
                    .iter()
                    .map(|(name, _)| name.clone())
                    .collect::<Vec<_>>()
                    .join("; "),
            });
        }
        let (per, extra) = (n / n_parts, n % n_parts);
        let mut it = self.projects.iter().enumerate();
        let parts = (0..n_parts)
            .map(|index| Part {
                index,
                units: it
                    .by_ref()
                    .take(per + usize::from(index < extra))
                    .map(|(i, (name, file))| Unit {
                        method: PROJECT.into(),
                        name: name.clone(),
                        inputs: vec![file.display().to_string()],
                        index: Some(i),
                    })
                    .collect(),
            })
            .collect();
        Ok(Plan {
            project: self.dir.display().to_string(),
            n_parts,
            parts,
            whole: vec![super::Whole {
                method: "campaign".into(),
                kind: "projects".into(),
                why: format!(
                    "{n} project(s), each run whole as on one machine, with its own answers and report"
                ),
            }],
        })
    }

    /// The goal a campaign's part and merged run are named by.
    pub fn goal(&self) -> String {
        format!(
            "Campaign {} ({} projects)",
            self.dir
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
            self.projects.len()
        )
    }
}

/// How one project of a part ended: its status and run folder, or why it could not run.
pub type ProjectRun = Result<(RunStatus, PathBuf), String>;

/// Run part `index` of `plan` of `campaign` under `out`: each project through `run_one`
/// (project file, the folder its run goes under) into `out/<project>/`, then the part folder
/// `out/<stamp>-campaign…/` (`run.json` with the part, `result.json` listing every project,
/// a journal line per project). Returns the part's status (success when every project
/// succeeded) and its folder. A project that fails is recorded, never raised.
pub fn run_part(
    campaign: &Campaign,
    plan: &Plan,
    index: usize,
    out: &Path,
    run_one: &mut dyn FnMut(&Path, &Path) -> ProjectRun,
) -> std::io::Result<(RunStatus, PathBuf)> {
    let part = plan
        .parts
        .get(index)
        .ok_or_else(|| std::io::Error::other(format!("no part {index} in the plan")))?;
    let mut rows = Vec::new();
    let mut reasons = Vec::new();
    let mut journal = String::new();
    for u in &part.units {
        let file = PathBuf::from(u.inputs.first().cloned().unwrap_or_default());
        let row = match run_one(&file, &out.join(&u.name)) {
            Ok((status, dir)) => {
                if status != RunStatus::Success {
                    reasons.push(format!(
                        "project {}: {} ({})",
                        u.name,
                        status.word(),
                        dir.display()
                    ));
                }
                json!({"name": u.name, "status": status.word(),
                    "run_dir": dir.display().to_string(),
                    "report": dir.join("report.md").display().to_string()})
            }
            Err(why) => {
                reasons.push(format!("project {}: did not run: {why}", u.name));
                json!({"name": u.name, "status": "not run", "why": why})
            }
        };
        journal.push_str(
            &json!({"event": "warning", "text": format!("campaign project {}: {}", u.name, row["status"])})
                .to_string(),
        );
        journal.push('\n');
        rows.push(row);
    }
    let status = if reasons.is_empty() {
        RunStatus::Success
    } else {
        RunStatus::Incomplete
    };
    let goal = campaign.goal();
    let folder = RunFolder::create(out, &goal)?;
    write_atomic(
        &folder.dir.join(RUN_FILE),
        &json!({"goal": goal, "project": plan.project,
            "settings": {PART_SETTING: part_setting(plan, index)}}),
    )?;
    write_file_atomic(
        &folder.dir.join(crate::runtime::journal::JOURNAL_FILE),
        journal.as_bytes(),
    )?;
    write_atomic(
        &folder.dir.join(RESULT_FILE),
        &json!({"status": status.word(), "reasons": reasons, "goal": goal,
            "steps": [], "products": {}, "projects": rows}),
    )?;
    Ok((status, folder.dir))
}

/// The rows of a campaign part's `result.json` (`projects`), by project name.
pub fn project_rows(result: &Value) -> Vec<(String, Value)> {
    result["projects"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            (
                r["name"].as_str().unwrap_or_default().to_string(),
                r.clone(),
            )
        })
        .collect()
}
