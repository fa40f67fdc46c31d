//! The project panel: the goal, the input files by role (and whether they exist), the
//! settings, and the past runs of this project (each can be replayed from its journal).

use serde_json::{Value, json};

use super::{Panel, Shared};

/// The project panel.
#[derive(Debug, Default)]
pub struct ProjectPanel {
    /// A past run the user asked to replay (taken by the app).
    pub replay_request: Option<std::path::PathBuf>,
}

/// Past run folders of the open project, newest first.
pub fn past_runs(shared: &Shared) -> Vec<std::path::PathBuf> {
    let Some(p) = &shared.project else {
        return Vec::new();
    };
    let mut runs: Vec<std::path::PathBuf> = std::fs::read_dir(p.dir.join("runs"))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|d| d.join("journal.jsonl").exists())
                .collect()
        })
        .unwrap_or_default();
    runs.sort();
    runs.reverse();
    runs
}

impl Panel for ProjectPanel {
    fn key(&self) -> &'static str {
        "project"
    }

    fn title(&self) -> &'static str {
        "Project"
    }

    fn ui(&mut self, ui: &mut egui::Ui, shared: &mut Shared) {
        ui.heading("Project");
        if let Some(e) = &shared.project_error {
            ui.colored_label(egui::Color32::from_rgb(190, 60, 40), e);
            ui.label("Open another project with File → Open project…");
        }
        let Some(project) = &mut shared.project else {
            ui.label("No project is open. Use File → Open project… to choose a folder with a project.json.");
            return;
        };
        ui.monospace(project.file.display().to_string());
        let label = ui.label("Goal (the question the run answers; used by the next run):");
        ui.add(
            egui::TextEdit::multiline(&mut project.goal)
                .desired_rows(2)
                .desired_width(f32::INFINITY),
        )
        .labelled_by(label.id);
        ui.separator();
        ui.label("Input files:");
        let ctx = project.context();
        egui::Grid::new("inputs_grid").striped(true).show(ui, |ui| {
            for role in ctx.input_roles().keys() {
                for path in ctx.input_paths(role) {
                    ui.monospace(role);
                    if path.exists() {
                        ui.monospace(path.display().to_string());
                    } else {
                        ui.colored_label(
                            egui::Color32::from_rgb(190, 60, 40),
                            format!("{} (missing)", path.display()),
                        );
                    }
                    ui.end_row();
                }
            }
        });
        if !project.config.is_empty() {
            ui.separator();
            ui.label("Settings:");
            ui.monospace(serde_json::to_string_pretty(&project.config).unwrap_or_default());
        }
        let runs = past_runs(shared);
        if !runs.is_empty() {
            ui.separator();
            ui.label("Past runs (replayed from their journals):");
            for r in runs.iter().take(12) {
                let name = r
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                if ui.button(format!("Replay {name}")).clicked() {
                    self.replay_request = Some(r.clone());
                }
            }
        }
    }

    fn describe(&self, shared: &Shared) -> Value {
        let Some(p) = &shared.project else {
            return json!({"module": "project", "state": {"open": false, "error": shared.project_error}, "actions": []});
        };
        let ctx = p.context();
        let inputs: Vec<Value> = ctx
            .input_roles()
            .keys()
            .flat_map(|r| ctx.input_paths(r).into_iter().map(move |path| (r.clone(), path)))
            .map(|(r, path)| json!({"role": r, "path": path.display().to_string(), "exists": path.exists()}))
            .collect();
        json!({
            "module": "project",
            "state": {"open": true, "file": p.file.display().to_string(), "goal": p.goal, "inputs": inputs, "config": p.config},
            "actions": [
                {"name": "set_goal", "args": {"goal": "text"}, "desc": "Change the goal the next run answers."},
                {"name": "list_runs", "args": {}, "desc": "The past runs of this project."}
            ],
        })
    }

    fn apply(
        &mut self,
        action: &str,
        args: &Value,
        shared: &mut Shared,
        _window: &egui::Context,
    ) -> Result<Value, String> {
        match action {
            "set_goal" => {
                let goal = args
                    .get("goal")
                    .and_then(Value::as_str)
                    .ok_or("set_goal needs \"goal\"")?;
                let p = shared.project.as_mut().ok_or("no project is open")?;
                p.goal = goal.to_string();
                Ok(json!({"goal": goal}))
            }
            "list_runs" => Ok(
                json!({"runs": past_runs(shared).iter().map(|r| r.display().to_string()).collect::<Vec<_>>()}),
            ),
            other => Err(format!(
                "no action '{other}' on the project panel; its actions are: set_goal, list_runs"
            )),
        }
    }
}
