//! What the window asks for, carried out once per frame: a click queues a [`StudioCommand`]
//! while the frame is drawn, and [`StudioApp::logic`] carries the queue out at the start of
//! the next frame, before it takes the worker's events.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crossbeam_channel::unbounded;

use super::{PickKind, StudioApp, role_for_method, take_replay};
use crate::llm::harness::{ToolCall, ToolOutcome};
use crate::runtime::events::Event;
use crate::runtime::{Mode, Project};
use crate::studio::bridge::{Command, DeciderFactory, RunHandle};
use crate::studio::dialogs::Dialogs;
use crate::studio::timeline::Timeline;

/// Something the window asked the studio to do.
#[derive(Debug, Clone)]
pub enum StudioCommand {
    /// Start a run (ignored while one is going on).
    StartRun(Mode),
    /// Tell the run something (pause, resume, stop, an answer).
    Run(Command),
    /// Send the typed note to the run.
    SendNote,
    /// Open a file dialog.
    Pick(PickKind),
    /// Open the New project from folder window.
    NewProject,
    /// Show the panel at this rail position.
    ShowPanel(usize),
    /// Show the panel of this module key.
    ShowModule(String),
    /// Open or close the settings window.
    ToggleSettings,
    /// Carry out a chat tool call the person approved (with the note they added).
    ChatCall(ToolCall, String),
}

impl StudioApp {
    /// Ask for `command`; it is carried out at the start of the next frame.
    pub fn queue(&mut self, command: StudioCommand) {
        self.commands.push(command);
    }

    /// Carry out every queued command, in order.
    fn run_commands(&mut self, ctx: &egui::Context) {
        for c in std::mem::take(&mut self.commands) {
            match c {
                StudioCommand::StartRun(mode) => self.start_run(mode, ctx),
                StudioCommand::Run(command) => self.command(command),
                StudioCommand::SendNote => self.send_note(),
                StudioCommand::Pick(kind) => self.pick(kind),
                StudioCommand::NewProject => self.new_project.show(),
                StudioCommand::ShowPanel(i) => {
                    self.active = i.min(self.panels.len().saturating_sub(1));
                }
                StudioCommand::ShowModule(key) => {
                    if let Some(i) = self.panels.iter().position(|p| p.key() == key) {
                        self.active = i;
                    }
                }
                StudioCommand::ToggleSettings => {
                    self.settings_window.open = !self.settings_window.open;
                }
                StudioCommand::ChatCall(call, note) => self.answer_chat_call(&call, &note),
            }
        }
    }

    /// Carry out an approved chat call and hand its outcome (with the person's note) back to
    /// the chat.
    fn answer_chat_call(&mut self, call: &ToolCall, note: &str) {
        let outcome = match (self.execute_chat_tool(call), note.trim()) {
            (ToolOutcome::Ok(t), n) if !n.is_empty() => {
                ToolOutcome::Ok(format!("{t}\nThe user approved this with a note: {n}"))
            }
            (o, _) => o,
        };
        if let Some(p) = &mut self.chat.pending {
            p.answer(outcome);
        }
        self.chat.pending = None;
    }

    /// Start a run in `mode`, unless one is going on (a double click does not start two).
    pub fn start_run(&mut self, mode: Mode, ctx: &egui::Context) {
        if self.running() {
            return;
        }
        // Narrated in the chat only when the chat starts it (it sets this after the call).
        self.chat.narrate_run = false;
        let Some(project) = self.shared.project.clone() else {
            self.shared
                .messages
                .push("Open a project first (File → Open project…).".into());
            return;
        };
        let mut spec = crate::catalog::run_spec(project);
        if let Some(d) = &self.runs_dir {
            spec.runs_dir = d.clone();
        }
        self.hand_over_ert_page(&mut spec);
        spec.mode = if self.settings.approve_each_step {
            Mode::StepByStep
        } else {
            mode
        };
        // Flexible mode is a property of the run (the controller reads `spec.flexible`), not
        // only a line in run.json.
        spec.flexible = self.settings.flexible;
        if spec.flexible {
            spec.max_steps = crate::runtime::toolbox::flexible_max_steps(spec.max_steps);
        }
        let model = self.model_settings();
        let maker = self.decider.clone();
        let factory: DeciderFactory = Box::new(move || maker(&model));
        let ctx2 = ctx.clone();
        let wake: Arc<dyn Fn() + Send + Sync> = Arc::new(move || ctx2.request_repaint());
        let handle = RunHandle::start(spec, self.registry.clone(), factory, wake);
        self.shared.shelf = handle.shelf.clone();
        self.shared.timeline = Timeline::new();
        self.shared.run_dir = None;
        self.dialogs = Dialogs::new();
        self.run = Some(handle);
        self.runs_started += 1;
    }

    /// Send a command to the run, if there is one.
    pub fn command(&mut self, c: Command) {
        // A pause takes effect at the next checkpoint, after the running step: say so at once
        // (issue 18), not only when the step ends.
        match c {
            Command::Pause => self.shared.timeline.pause_asked = true,
            Command::Resume => self.shared.timeline.pause_asked = false,
            _ => {}
        }
        if let Some(r) = &self.run {
            r.send(c);
        }
    }

    /// Send the typed note.
    pub fn send_note(&mut self) {
        let text = self.note.trim().to_string();
        if text.is_empty() {
            return;
        }
        if self.running() {
            self.shared.timeline.queue_note(&text);
            self.command(Command::Note(text));
        } else {
            self.shared.messages.push(
                "Notes steer a run while it works: start one with Auto to report or Step by step."
                    .into(),
            );
        }
        self.note.clear();
    }

    /// Per-frame logic, apart from drawing: carry out what the last frame asked for, take the
    /// worker's events, finish a finished run, take file-dialog results.
    pub fn logic(&mut self, ctx: &egui::Context) {
        if self.egui_ctx.is_none() {
            self.egui_ctx = Some(ctx.clone());
        }
        self.run_commands(ctx);
        self.close_logic(ctx);
        *self.chat_settings.lock().unwrap_or_else(|p| p.into_inner()) = self.model_settings();
        self.chat.poll();
        if let Some(goal) = self.chat.auto_goal.take() {
            if let Some(p) = &mut self.shared.project {
                p.goal = goal;
            }
            self.start_run(Mode::Auto, ctx);
            self.chat.narrate_run = true;
            self.chat
                .narrate("Handed to Auto to report; each finished step is narrated here.");
        }
        if let Some(run) = &mut self.run {
            let events: Vec<Event> = run.events.try_iter().collect();
            let sender = run.sender();
            for e in &events {
                if let Event::StepFinished {
                    label,
                    status,
                    summary,
                    error,
                    ..
                } = e
                    && self.chat.narrate_run
                {
                    let (mark, text) = match status {
                        crate::runtime::StepStatus::Ok => ("✔", summary),
                        crate::runtime::StepStatus::Skipped
                        | crate::runtime::StepStatus::Blocked => ("↷", error),
                        _ => ("✖", error),
                    };
                    self.chat.narrate(&format!("{mark} {label}: {text}"));
                }
                self.shared.timeline.apply(e);
                self.dialogs.on_event(e, &sender);
                match e {
                    Event::RunStarted { run_dir, .. } => {
                        self.shared.run_dir = Some(PathBuf::from(run_dir))
                    }
                    Event::StepStarted { module, .. } if self.settings.bring_to_front => {
                        if let Some(i) = self.panels.iter().position(|p| p.key() == module) {
                            self.active = i;
                        }
                    }
                    _ => {}
                }
            }
            if run.finished() && run.events.is_empty() {
                if let Some(Err(e)) = run.take_outcome() {
                    self.shared
                        .messages
                        .push(format!("The run could not start: {e}"));
                    self.shared.timeline.finish = Some(crate::studio::timeline::Finish {
                        ended: "not started".into(),
                        status: "incomplete".into(),
                        reasons: vec![e.to_string()],
                        report: None,
                    });
                }
                if self.shared.timeline.finish.is_some() {
                    // Nothing more can be asked: any request still open gets its default.
                    self.dialogs.decline_all();
                }
            }
        }
        if let Some((kind, rx)) = &self.picking
            && let Ok(result) = rx.try_recv()
        {
            let kind = *kind;
            self.picking = None;
            match result {
                Some(paths) => self.picked(kind, paths),
                None => self.shared.messages.push(nothing_picked(kind).into()),
            }
        }
        // A replay asked for by the project panel.
        if let Some(p) = self.panels.iter_mut().find(|p| p.key() == "project")
            && let Some(dir) = take_replay(p.as_mut())
        {
            match Timeline::replay(&dir.join("journal.jsonl")) {
                Ok(t) => {
                    self.shared.timeline = t;
                    self.shared.run_dir = Some(dir);
                }
                Err(e) => self.shared.messages.push(format!("Cannot replay: {e}")),
            }
        }
    }

    fn picked(&mut self, kind: PickKind, paths: Vec<PathBuf>) {
        match kind {
            PickKind::Project => {
                if let Some(p) = paths.into_iter().next() {
                    self.open_project(&p);
                }
            }
            PickKind::Files => {
                for p in paths {
                    self.add_data_file(&p);
                }
            }
            PickKind::Folder => {
                if let Some(p) = paths.into_iter().next() {
                    self.new_project.picked(&p);
                }
            }
        }
    }

    /// Open another project (not while a run is going on).
    pub fn open_project(&mut self, path: &Path) {
        if self.running() {
            self.shared
                .messages
                .push("Stop the run before opening another project.".into());
            return;
        }
        match Project::load(path) {
            Ok(p) => {
                self.shared.project = Some(p);
                self.shared.project_error = None;
                self.shared.timeline = Timeline::new();
                self.shared.run_dir = None;
            }
            Err(e) => self.shared.project_error = Some(e.to_string()),
        }
    }

    /// Add a data file to the open project (in this session), under the role its reader
    /// recognises; a file no reader recognises is not added, and the message says why.
    pub fn add_data_file(&mut self, path: &Path) {
        let Some(project) = &mut self.shared.project else {
            self.shared
                .messages
                .push("Open a project before adding files.".into());
            return;
        };
        let role = match crate::catalog::read_summary(path) {
            Ok(v) => v
                .get("method")
                .and_then(|m| m.as_str())
                .and_then(role_for_method),
            Err(e) => {
                self.shared.messages.push(format!("Not added: {e:#}"));
                return;
            }
        };
        let Some(role) = role else {
            self.shared
                .messages
                .push(format!("Not added: no method takes {}", path.display()));
            return;
        };
        let value = serde_json::Value::from(path.display().to_string());
        if role.ends_with("_files") {
            let entry = project
                .inputs
                .entry(role.to_string())
                .or_insert_with(|| serde_json::Value::Array(Vec::new()));
            if let serde_json::Value::Array(a) = entry {
                a.push(value);
            }
        } else {
            project.inputs.insert(role.to_string(), value);
        }
        self.shared.messages.push(format!(
            "Added {} as {role} for this session (project.json is not changed).",
            path.display()
        ));
    }

    pub(super) fn pick(&mut self, kind: PickKind) {
        if self.picking.is_some() {
            return;
        }
        let (tx, rx) = unbounded();
        let picker = self.picker.clone();
        std::thread::spawn(move || {
            let r = match kind {
                PickKind::Project => picker.pick_project().map(|p| vec![p]),
                PickKind::Files => picker.pick_files(),
                PickKind::Folder => picker.pick_folder().map(|p| vec![p]),
            };
            let _ = tx.send(r);
        });
        self.picking = Some((kind, rx));
    }
}

/// What the studio says when a file dialog came back empty: cancelled, or no dialog service
/// on this system (no xdg portal, no zenity), which rfd cannot tell apart.
fn nothing_picked(kind: PickKind) -> &'static str {
    match kind {
        PickKind::Project => {
            "No project was opened (the dialog was cancelled, or this system has no file dialog). Start with --project <folder>, or make one with File → New project from folder…, where the folder can be typed."
        }
        PickKind::Files => {
            "No files were added (the dialog was cancelled, or this system has no file dialog)."
        }
        PickKind::Folder => {
            "No folder was picked (the dialog was cancelled, or this system has no file dialog): type the folder's path in the field."
        }
    }
}
