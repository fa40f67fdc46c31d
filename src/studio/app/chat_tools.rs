//! The chat's tool calls as typed actions: a call the person approved is read once into a
//! [`ChatAction`] (its name and arguments checked there), then carried out against the
//! studio — only through the panels' `describe` / `apply`. A failed action is an ordinary
//! result with a status line; a tool that could not do its job is an error; nothing found is
//! an absence.

use serde::Deserialize;
use serde_json::{Value, json};

use super::StudioApp;
use crate::llm::harness::{Absence, ToolCall, ToolOutcome};
use crate::runtime::Mode;
use crate::studio::bridge::Command;
use crate::studio::dialogs::Ask;

/// One of the chat's tools, with its arguments (see `studio::chat::tool_specs`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "name", content = "arguments", rename_all = "snake_case")]
pub enum ChatAction {
    /// The modules with their keys.
    ListModules {},
    /// Bring a module to the front and describe it.
    OpenModule {
        /// The module key.
        #[serde(default)]
        module: String,
    },
    /// Describe the open module.
    DescribeModule {},
    /// Carry out one of a module's actions.
    ApplyAction {
        /// The module key.
        #[serde(default)]
        module: String,
        /// The action's name, as the module's `describe` lists it.
        #[serde(default)]
        action: String,
        /// Its arguments.
        #[serde(default)]
        args: Value,
    },
    /// The studio's state.
    ReadState {},
    /// The numbers a product holds.
    InspectProduct {
        /// The product key.
        #[serde(default)]
        key: String,
    },
    /// Advance the run by one step.
    RunStep {},
    /// The answers to the goal's questions the current run computed.
    GetAnswers {},
    /// Data files in the project folder a reader recognises.
    FindDataFiles {
        /// Only this method's files.
        #[serde(default)]
        method: Option<String>,
    },
    /// One data file as the readers see it.
    ReadDataFile {
        /// The file, relative to the project folder.
        #[serde(default)]
        path: String,
    },
}

impl ChatAction {
    /// The action a call asks for, or why it is not one.
    pub fn read(call: &ToolCall) -> Result<ChatAction, String> {
        let arguments = match &call.arguments {
            Value::Null => json!({}),
            a => a.clone(),
        };
        serde_json::from_value(json!({"name": call.name, "arguments": arguments})).map_err(|e| {
            if e.to_string().starts_with("unknown variant") {
                format!("there is no tool called {}", call.name)
            } else {
                format!("{}: {e}", call.name)
            }
        })
    }
}

/// The run answered no question: the goal asked none of the kinds this version answers. An
/// absence (the answers step ran and looked), with what no tool here can answer.
fn no_question_answered(answerable: &[String]) -> ToolOutcome {
    ToolOutcome::absent(
        Absence::new(
            "an answer to a question of the goal",
            ["the goal's text, read for every kind of question this version answers".to_string()],
        )
        .map(|a| {
            a.cannot_cover(["questions of other kinds: no tool in this version answers them".to_string()])
                .try_instead(format!(
                    "say plainly that the goal's question is not one this version answers; the kinds it answers are: {}",
                    answerable.join("; ")
                ))
        }),
    )
}

/// One data file as the readers see it. A file no reader recognises is an absence (the
/// readers looked); a file that could not be looked at is an error; a file a reader
/// recognised and found broken is an ordinary failed result naming file and line.
pub fn read_data_file(project_dir: &std::path::Path, path: &str) -> ToolOutcome {
    if path.trim().is_empty() {
        return ToolOutcome::Error("read_data_file needs \"path\"; it could not look.".into());
    }
    let file = crate::runtime::context::resolve_path(std::path::Path::new(path), project_dir);
    if let Err(e) = crate::methods::io::regular_file(&file) {
        return ToolOutcome::Error(format!("{e}"));
    }
    match crate::catalog::recognise(&file) {
        Ok(Some(v)) => text(v),
        Ok(None) => ToolOutcome::absent(
            Absence::new(
                "data a reader recognises in the named file",
                [
                    "the file's extension and first bytes, against the readers of all six methods"
                        .to_string(),
                ],
            )
            .map(|a| {
                a.cannot_cover(["formats none of the readers reads".to_string()])
                    .try_instead(
                        "say which instrument wrote it, or look for the project's data files",
                    )
            })
            .and_then(|a| {
                a.try_instead_tool(
                    "find_data_files",
                    Some("it lists the files in the project a reader recognises"),
                )
            }),
        ),
        Err(e) => ToolOutcome::Ok(format!("Action exited with status failed: {e}")),
    }
}

/// Pretty JSON as a tool's result.
fn text(v: Value) -> ToolOutcome {
    ToolOutcome::Ok(serde_json::to_string_pretty(&v).unwrap_or_default())
}

impl StudioApp {
    /// Carry out an approved chat tool call against the studio.
    pub fn execute_chat_tool(&mut self, call: &ToolCall) -> ToolOutcome {
        let action = match ChatAction::read(call) {
            Ok(a) => a,
            Err(e) => return ToolOutcome::Error(e),
        };
        match action {
            ChatAction::ListModules {} => text(json!(
                self.panels
                    .iter()
                    .map(|p| json!({"key": p.key(), "title": p.title()}))
                    .collect::<Vec<_>>()
            )),
            ChatAction::OpenModule { module } => self.open_module(&module),
            ChatAction::DescribeModule {} => {
                text(self.panels[self.active.min(self.panels.len() - 1)].describe(&self.shared))
            }
            ChatAction::ApplyAction {
                module,
                action,
                args,
            } => self.apply_action(&module, &action, &args),
            ChatAction::ReadState {} => text(self.state_json()),
            ChatAction::InspectProduct { key } => self.inspect_product(&key),
            ChatAction::RunStep {} => self.run_step(),
            ChatAction::GetAnswers {} => self.get_answers(),
            ChatAction::FindDataFiles { method } => self.find_data_files(method.as_deref()),
            ChatAction::ReadDataFile { path } => match &self.shared.project {
                Some(p) => read_data_file(&p.dir, &path),
                None => ToolOutcome::Error(
                    "no project is open, so there is no folder to read from".into(),
                ),
            },
        }
    }

    fn open_module(&mut self, key: &str) -> ToolOutcome {
        match self.panels.iter().position(|p| p.key() == key) {
            Some(i) => {
                self.active = i;
                text(self.panels[i].describe(&self.shared))
            }
            None => ToolOutcome::Error(format!(
                "open_module needs one of the module keys: {}",
                self.panels
                    .iter()
                    .map(|p| p.key())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }

    fn apply_action(&mut self, key: &str, action: &str, args: &Value) -> ToolOutcome {
        let Some(i) = self.panels.iter().position(|p| p.key() == key) else {
            return ToolOutcome::Error(format!("there is no module {key}"));
        };
        let Some(window) = self.egui_ctx.clone() else {
            return ToolOutcome::Error("the studio window is not ready".into());
        };
        self.active = i;
        match self.panels[i].apply(action, args, &mut self.shared, &window) {
            Ok(v) => ToolOutcome::Ok(format!(
                "{}\nAction exited with status ok",
                serde_json::to_string_pretty(&v).unwrap_or_default()
            )),
            Err(why) => ToolOutcome::Ok(format!("Action exited with status failed: {why}")),
        }
    }

    fn state_json(&self) -> Value {
        let t = &self.shared.timeline;
        json!({
            "project": self.shared.project.as_ref().map(|p| json!({"file": p.file.display().to_string(), "goal": p.goal})),
            "running": self.running(),
            "steps": t.cards.iter().map(|c| json!({"step": c.step, "label": c.label, "status": c.status.map(|s| s.word()).unwrap_or("running"), "summary": c.summary, "error": c.error})).collect::<Vec<_>>(),
            "route_ahead": t.route.iter().map(|r| r.label.clone()).collect::<Vec<_>>(),
            "products": self.shared.shelf.keys(),
            "finished": t.finish.as_ref().map(|f| json!({"status": f.status, "reasons": f.reasons})),
        })
    }

    fn inspect_product(&self, key: &str) -> ToolOutcome {
        if let Some(p) = self.shared.shelf.get(key) {
            return ToolOutcome::Ok(p.inspect());
        }
        let have = self.shared.shelf.keys();
        let absence = Absence::new(
            "a product of the current run with the requested name",
            [format!(
                "the {} products the current run has made",
                have.len()
            )],
        )
        .map(|a| {
            let a = a.not_checked(["products of earlier runs".to_string()]);
            if have.is_empty() {
                a.try_instead("run steps first, then look again")
                    .try_instead_tool("run_step", Some("no step has made a product yet"))
            } else {
                Ok(a.try_instead(format!("the products that exist are: {}", have.join(", "))))
            }
        })
        .and_then(|r| r);
        ToolOutcome::absent(absence)
    }

    /// The run's answers (the `answers` product): the same objects `result.json` holds, with
    /// the evidence's files, so a reply can quote the number, the methods and the figure.
    fn get_answers(&self) -> ToolOutcome {
        use crate::catalog::answers::Answers;
        use crate::catalog::kit::keys;
        use crate::catalog::kit::product::value_of;
        if let Some(p) = self.shared.shelf.get(keys::ANSWERS)
            && let Some(a) = value_of::<Answers>(p.as_ref())
        {
            if a.answers.is_empty() {
                return no_question_answered(&a.answerable);
            }
            let files: Vec<String> = p.files().iter().map(|f| f.display().to_string()).collect();
            return text(json!({"answers": a.answers, "answerable": a.answerable, "files": files}));
        }
        let checked = [format!(
            "the {} products the current run has made",
            self.shared.shelf.keys().len()
        )];
        let absence = Absence::new("the answers to the goal's questions in the current run", checked)
            .map(|a| {
                a.not_checked(["answers of earlier runs".to_string()])
                    .try_instead("run the project to its end (the answer_questions step runs after the methods), then ask again")
            })
            .and_then(|a| a.try_instead_tool("run_step", Some("the answers are made by a step of the run")));
        ToolOutcome::absent(absence)
    }

    fn run_step(&mut self) -> ToolOutcome {
        if let Some(p) = self.dialogs.current()
            && matches!(p.ask, Ask::Approval { .. })
        {
            let id = p.id;
            self.command(Command::Proceed { id });
            return ToolOutcome::Ok("Approved the step the run was waiting on; it has started. The timeline shows its result when it ends.".into());
        }
        if self.running() {
            return ToolOutcome::Ok("A run is going on and is not waiting for approval; wait for its current step to end.".into());
        }
        match self.egui_ctx.clone() {
            Some(c) => {
                self.start_run(Mode::StepByStep, &c);
                ToolOutcome::Ok(
                    "started: a step-by-step run began; it will ask before each step.".into(),
                )
            }
            None => ToolOutcome::Error("the studio window is not ready".into()),
        }
    }

    fn find_data_files(&self, want: Option<&str>) -> ToolOutcome {
        let Some(p) = &self.shared.project else {
            return ToolOutcome::Error(
                "no project is open, so there is no folder to look in".into(),
            );
        };
        let mut found = Vec::new();
        let mut n = 0usize;
        let mut stack = vec![(p.dir.clone(), 0usize)];
        while let Some((d, depth)) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in rd.flatten() {
                let path = e.path();
                if path.is_dir() {
                    if depth < 2 && path.file_name().is_some_and(|f| f != "runs") {
                        stack.push((path, depth + 1));
                    }
                    continue;
                }
                n += 1;
                if let Ok(v) = crate::catalog::read_summary(&path) {
                    let m = v["method"].as_str().unwrap_or("").to_string();
                    if want.is_none_or(|w| w == m) {
                        found.push(json!({"path": path.display().to_string(), "method": m}));
                    }
                }
            }
        }
        if !found.is_empty() {
            return text(json!(found));
        }
        let absence = Absence::new(
            "data files a reader recognises (of the requested method, if one was named)",
            [format!(
                "the {n} files in the project folder and two levels of subfolders (run folders excluded)"
            )],
        )
        .map(|a| {
            a.not_checked([
                "deeper subfolders".to_string(),
                "folders outside the project".to_string(),
            ])
            .cannot_cover(["files of formats no reader here recognises".to_string()])
            .try_instead(
                "name the files in the project's inputs, or add them with File → Add data files",
            )
        });
        ToolOutcome::absent(absence)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, arguments: Value) -> ToolCall {
        ToolCall {
            id: "1".into(),
            name: name.into(),
            arguments,
        }
    }

    #[test]
    fn calls_are_read_into_typed_actions_and_unknown_tools_are_named() {
        assert_eq!(
            ChatAction::read(&call(
                "apply_action",
                json!({"module": "ert", "action": "set_lambda", "args": {"lambda": 5}})
            )),
            Ok(ChatAction::ApplyAction {
                module: "ert".into(),
                action: "set_lambda".into(),
                args: json!({"lambda": 5})
            })
        );
        assert_eq!(
            ChatAction::read(&call("read_state", Value::Null)),
            Ok(ChatAction::ReadState {})
        );
        assert_eq!(
            ChatAction::read(&call("find_data_files", json!({}))),
            Ok(ChatAction::FindDataFiles { method: None })
        );
        assert_eq!(
            ChatAction::read(&call("fly", json!({}))),
            Err("there is no tool called fly".to_string())
        );
        assert_eq!(
            ChatAction::read(&call("read_data_file", json!({"path": "a.dat"}))),
            Ok(ChatAction::ReadDataFile {
                path: "a.dat".into()
            })
        );
        // Every tool the chat offers reads as an action.
        for (name, _, _) in crate::studio::chat::tool_specs() {
            assert!(ChatAction::read(&call(&name, json!({}))).is_ok(), "{name}");
        }
    }

    #[test]
    fn a_file_no_reader_recognises_is_an_absence_and_a_missing_one_an_error() {
        // Seed 004: "nothing found" (the readers looked) is not "could not look".
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(
            tmp.path().join("README.txt"),
            "Field notes, day 3: windy.\n",
        )
        .unwrap();
        match read_data_file(tmp.path(), "README.txt") {
            ToolOutcome::Absent(a) => {
                let v = a.to_json();
                assert_eq!(v["outcome"], "nothing_found");
                assert_eq!(v["try_instead_tool"]["tool"], "find_data_files");
                assert!(v["cannot_cover"][0].as_str().unwrap().contains("formats"));
            }
            other => panic!("expected an absence, got {other:?}"),
        }
        assert!(matches!(
            read_data_file(tmp.path(), "nowhere.dat"),
            ToolOutcome::Error(_)
        ));
        assert!(matches!(
            read_data_file(tmp.path(), " "),
            ToolOutcome::Error(_)
        ));
        // A question no tool answers is an absence with what it cannot cover.
        match no_question_answered(&["the water table depth".to_string()]) {
            ToolOutcome::Absent(a) => {
                let v = a.to_json();
                assert!(v["cannot_cover"][0].as_str().unwrap().contains("no tool"));
                assert!(
                    v["try_instead"]
                        .as_str()
                        .unwrap()
                        .contains("the water table depth")
                );
            }
            other => panic!("expected an absence, got {other:?}"),
        }
    }
}
