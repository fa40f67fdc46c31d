//! The studio window: a left rail of modules, the module panel in the centre, the live
//! timeline and notes on the right, and a top bar with Auto to report, Step by step,
//! Pause / Resume, Stop, the model status and the running tokens and cost.
//!
//! Per-frame logic (draining the worker's events) is kept apart from drawing; the UI thread
//! never waits on the worker.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crossbeam_channel::{Receiver, unbounded};
use egui::{Color32, RichText};

use super::bridge::{Command, DeciderFactory, RunHandle};
use super::dialogs::Dialogs;
use super::panels::{self, Panel, Shared};
use super::settings::{STORAGE_KEY, SettingsWindow, StudioSettings};
use super::timeline::Timeline;
use crate::llm::Settings;
use crate::runtime::decide::Decide;
use crate::runtime::events::Event;
use crate::runtime::{Mode, Project, Registry};

/// Makes the decider for a run from the current model settings (tests inject scripted ones).
pub type DeciderMaker = Arc<dyn Fn(&Settings) -> Option<Box<dyn Decide>> + Send + Sync>;

/// File dialogs, behind a trait so tests can answer them (rfd blocks: it is called off the UI
/// thread).
pub trait Picker: Send + Sync {
    /// A project folder (or `project.json`).
    fn pick_project(&self) -> Option<PathBuf>;
    /// Data files to add.
    fn pick_files(&self) -> Option<Vec<PathBuf>>;
}

/// The system's file dialogs (xdg portal, or zenity).
#[derive(Debug, Default)]
pub struct RfdPicker;

impl Picker for RfdPicker {
    fn pick_project(&self) -> Option<PathBuf> {
        rfd::FileDialog::new()
            .set_title("Open a project folder")
            .pick_folder()
    }

    fn pick_files(&self) -> Option<Vec<PathBuf>> {
        rfd::FileDialog::new()
            .set_title("Add data files")
            .pick_files()
    }
}

/// What a pending file dialog was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PickKind {
    Project,
    Files,
}

/// How the studio is set up.
pub struct StudioConfig {
    /// The project to open.
    pub project: PathBuf,
    /// The tools.
    pub registry: Arc<Registry>,
    /// How a run gets its decider.
    pub decider: DeciderMaker,
    /// File dialogs.
    pub picker: Arc<dyn Picker>,
    /// Where runs are written (default: `<project>/runs`).
    pub runs_dir: Option<PathBuf>,
    /// Close after the first frame (smoke test).
    pub exit_after_first_frame: bool,
    /// What to do unattended once the window is up (documentation screenshots, smoke tests).
    pub unattended: Unattended,
    /// Persisted settings, when there are any.
    pub settings: Option<StudioSettings>,
    /// How the chat gets its model (from the settings in force).
    pub chat_model: Option<super::chat::ChatModelMaker>,
}

impl StudioConfig {
    /// The real configuration: the catalog's tools, the model from the settings, rfd dialogs.
    pub fn real(project: PathBuf) -> StudioConfig {
        StudioConfig {
            project,
            registry: Arc::new(crate::catalog::registry()),
            decider: Arc::new(|s: &Settings| s.decider().map(|d| d as Box<dyn Decide>)),
            picker: Arc::new(RfdPicker),
            runs_dir: None,
            exit_after_first_frame: false,
            unattended: Unattended::default(),
            settings: None,
            chat_model: None,
        }
    }
}

/// Unattended actions for the window: start Auto to report on the first frame, show a panel,
/// and save a screenshot of the window once the run has ended (then close). Used to make the
/// README's screenshot from the real window, and by the Xvfb smoke test.
#[derive(Debug, Clone, Default)]
pub struct Unattended {
    /// Start Auto to report on the first frame.
    pub auto_run: bool,
    /// The rail label of the panel to show (e.g. "ERT").
    pub panel: Option<String>,
    /// Save a PNG of the window here once the run (if any) has ended, then close.
    pub screenshot: Option<PathBuf>,
}

/// Which view the right-hand panel shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RightTab {
    /// The live timeline.
    Timeline,
    /// The chat.
    Chat,
}

/// The studio.
pub struct StudioApp {
    /// Project, products, timeline: what the panels share.
    pub shared: Shared,
    /// The module panels, in rail order.
    pub panels: Vec<Box<dyn Panel>>,
    /// The panel shown.
    pub active: usize,
    /// Persisted settings.
    pub settings: StudioSettings,
    /// The settings window.
    pub settings_window: SettingsWindow,
    /// The run in progress (or finished and not yet replaced).
    pub run: Option<RunHandle>,
    /// Open requests.
    pub dialogs: Dialogs,
    /// The note being typed.
    pub note: String,
    /// The chat.
    pub chat: super::chat::ChatPanel,
    /// What the right-hand panel shows.
    pub right_tab: RightTab,
    /// The chat's model from the current settings (kept so the settings window can change it).
    chat_settings: Arc<std::sync::Mutex<Settings>>,
    thumbnails: super::images::ImageCache,
    registry: Arc<Registry>,
    decider: DeciderMaker,
    picker: Arc<dyn Picker>,
    picking: Option<(PickKind, Receiver<Option<Vec<PathBuf>>>)>,
    runs_dir: Option<PathBuf>,
    exit_after_first_frame: bool,
    unattended: Unattended,
    screenshot_asked: bool,
    screenshot_saved: Arc<std::sync::atomic::AtomicBool>,
    frames: u64,
    runs_started: usize,
    egui_ctx: Option<egui::Context>,
}

impl std::fmt::Debug for StudioApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StudioApp")
            .field("active", &self.active)
            .finish_non_exhaustive()
    }
}

impl StudioApp {
    /// A studio on `config.project`.
    pub fn new(config: StudioConfig) -> StudioApp {
        let settings = config.settings.unwrap_or_default();
        let chat_settings = Arc::new(std::sync::Mutex::new(settings.model_settings("")));
        let cs = chat_settings.clone();
        let chat_model: super::chat::ChatModelMaker = config.chat_model.unwrap_or_else(|| {
            Arc::new(move || {
                let s = cs.lock().unwrap_or_else(|p| p.into_inner()).clone();
                if s.why_no_model().is_some() {
                    return None;
                }
                crate::llm::Client::new(s).ok().map(|c| {
                    Box::new(crate::llm::chat_model::ProviderChat::new(c))
                        as Box<dyn crate::llm::harness::ChatModel>
                })
            })
        });
        let mut shared = Shared::default();
        match Project::load(&config.project) {
            Ok(p) => shared.project = Some(p),
            Err(e) => shared.project_error = Some(e.to_string()),
        }
        StudioApp {
            shared,
            panels: panels::all(),
            active: 0,
            settings,
            settings_window: SettingsWindow::default(),
            run: None,
            dialogs: Dialogs::new(),
            note: String::new(),
            chat: super::chat::ChatPanel::new(chat_model),
            right_tab: RightTab::Timeline,
            chat_settings,
            thumbnails: Default::default(),
            registry: config.registry,
            decider: config.decider,
            picker: config.picker,
            picking: None,
            runs_dir: config.runs_dir,
            exit_after_first_frame: config.exit_after_first_frame,
            unattended: config.unattended,
            screenshot_asked: false,
            screenshot_saved: Arc::default(),
            frames: 0,
            runs_started: 0,
            egui_ctx: None,
        }
    }

    /// How many runs this studio has started (one at a time).
    pub fn runs_started(&self) -> usize {
        self.runs_started
    }

    /// The unattended actions (see [`Unattended`]), called once per frame by the window.
    fn unattended_ui(&mut self, ctx: &egui::Context) {
        if self.frames == 1 {
            if let Some(label) = self.unattended.panel.clone()
                && let Some(i) = self
                    .panels
                    .iter()
                    .position(|p| p.rail_label().eq_ignore_ascii_case(&label))
            {
                self.active = i;
            }
            if self.unattended.auto_run {
                self.start_run(Mode::Auto, ctx);
            }
        }
        let Some(path) = self.unattended.screenshot.clone() else {
            return;
        };
        ctx.request_repaint_after(std::time::Duration::from_millis(100));
        if self
            .screenshot_saved
            .load(std::sync::atomic::Ordering::SeqCst)
        {
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            return;
        }
        if !self.screenshot_asked && !self.running() && self.frames > 3 {
            self.screenshot_asked = true;
            let done = self.screenshot_saved.clone();
            let wake = ctx.clone();
            ctx.request_screenshot(move |image| {
                let [w, h] = image.size;
                let rgba: Vec<u8> = image.pixels.iter().flat_map(|c| c.to_array()).collect();
                let saved = u32::try_from(w)
                    .ok()
                    .zip(u32::try_from(h).ok())
                    .and_then(|(w, h)| image::RgbaImage::from_raw(w, h, rgba))
                    .ok_or_else(|| "the screenshot's size does not match its pixels".to_string())
                    .and_then(|img| img.save(&path).map_err(|e| e.to_string()));
                match saved {
                    Ok(()) => println!("HydroGeo Studio: screenshot saved to {}", path.display()),
                    Err(e) => eprintln!("HydroGeo Studio: screenshot {}: {e}", path.display()),
                }
                done.store(true, std::sync::atomic::Ordering::SeqCst);
                wake.request_repaint();
            });
        }
    }

    /// Whether a run is going on.
    pub fn running(&self) -> bool {
        self.run.as_ref().is_some_and(|r| !r.finished())
            || (self.run.is_some() && self.shared.timeline.finish.is_none())
    }

    /// The model settings in force.
    pub fn model_settings(&self) -> Settings {
        self.settings
            .model_settings(&self.settings_window.typed_key)
    }

    /// `provider · model · ready` or `no model`.
    pub fn model_status(&self) -> String {
        let s = self.model_settings();
        match s.why_no_model() {
            None => format!("{} · ready", s.label()),
            Some(_) => "no model (dependency order)".into(),
        }
    }

    /// Start a run in `mode`, unless one is going on (a double click does not start two).
    pub fn start_run(&mut self, mode: Mode, ctx: &egui::Context) {
        if self.running() {
            return;
        }
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
        spec.mode = if self.settings.approve_each_step {
            Mode::StepByStep
        } else {
            mode
        };
        spec.settings
            .insert("flexible".into(), self.settings.flexible.into());
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

    /// Per-frame logic, apart from drawing: take the worker's events, finish a finished run,
    /// take file-dialog results.
    pub fn logic(&mut self, ctx: &egui::Context) {
        *self.chat_settings.lock().unwrap_or_else(|p| p.into_inner()) = self.model_settings();
        self.chat.poll();
        if let Some(goal) = self.chat.auto_goal.take() {
            if let Some(p) = &mut self.shared.project {
                p.goal = goal;
            }
            self.start_run(Mode::Auto, ctx);
            self.chat
                .narration
                .push("Handed to Auto to report; each finished step is narrated here.".into());
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
                {
                    let (mark, text) = match status {
                        crate::runtime::StepStatus::Ok => ("✔", summary),
                        crate::runtime::StepStatus::Skipped
                        | crate::runtime::StepStatus::Blocked => ("↷", error),
                        _ => ("✖", error),
                    };
                    self.chat.narration.push(format!("{mark} {label}: {text}"));
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
                    self.shared.timeline.finish = Some(super::timeline::Finish {
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
            if let Some(paths) = result {
                self.picked(kind, paths);
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

    fn pick(&mut self, kind: PickKind) {
        if self.picking.is_some() {
            return;
        }
        let (tx, rx) = unbounded();
        let picker = self.picker.clone();
        std::thread::spawn(move || {
            let r = match kind {
                PickKind::Project => picker.pick_project().map(|p| vec![p]),
                PickKind::Files => picker.pick_files(),
            };
            let _ = tx.send(r);
        });
        self.picking = Some((kind, rx));
    }

    /// Draw everything.
    pub fn ui_root(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        if self.egui_ctx.is_none() {
            self.egui_ctx = Some(ctx.clone());
        }
        egui::Panel::top("top_bar").show(ui, |ui| self.top_bar_ui(ui, &ctx));
        egui::Panel::left("module_rail")
            .exact_size(120.0)
            .show(ui, |ui| self.rail_ui(ui));
        egui::Panel::right("timeline_panel")
            .default_size(430.0)
            .show(ui, |ui| self.timeline_ui(ui));
        egui::CentralPanel::default().show(ui, |ui| {
            let active = self.active.min(self.panels.len().saturating_sub(1));
            if let Some(p) = self.panels.get_mut(active) {
                egui::ScrollArea::vertical()
                    .id_salt("module_scroll")
                    .show(ui, |ui| p.ui(ui, &mut self.shared));
            }
        });
        self.settings_window.ui(&ctx, &mut self.settings);
        self.dialogs.ui(&ctx);
        // A running step's clock keeps ticking.
        if self.shared.timeline.running() {
            ctx.request_repaint_after(std::time::Duration::from_millis(250));
        }
    }

    fn top_bar_ui(&mut self, ui: &mut egui::Ui, ctx: &egui::Context) {
        ui.horizontal(|ui| {
            ui.menu_button("File", |ui| {
                if ui.button("Open project…").clicked() {
                    self.pick(PickKind::Project);
                    ui.close();
                }
                if ui.button("Add data files…").clicked() {
                    self.pick(PickKind::Files);
                    ui.close();
                }
            });
            ui.separator();
            let idle = !self.running();
            if ui
                .add_enabled(idle, egui::Button::new("Auto to report"))
                .clicked()
            {
                self.start_run(Mode::Auto, ctx);
            }
            if ui
                .add_enabled(idle, egui::Button::new("Step by step"))
                .clicked()
            {
                self.start_run(Mode::StepByStep, ctx);
            }
            if self.shared.timeline.paused {
                if ui.add_enabled(!idle, egui::Button::new("Resume")).clicked() {
                    self.command(Command::Resume);
                }
            } else if ui.add_enabled(!idle, egui::Button::new("Pause")).clicked() {
                self.command(Command::Pause);
            }
            if ui.add_enabled(!idle, egui::Button::new("Stop")).clicked() {
                self.command(Command::Stop);
            }
            ui.separator();
            if ui.button("Settings").clicked() {
                self.settings_window.open = !self.settings_window.open;
            }
            ui.label(RichText::new(self.model_status()).small());
            let t = &self.shared.timeline;
            if t.tokens_in + t.tokens_out > 0 {
                ui.label(
                    RichText::new(format!(
                        "{} in / {} out tokens · US$ {:.4}",
                        t.tokens_in, t.tokens_out, t.cost_usd
                    ))
                    .small(),
                );
            }
            if let Some(m) = self.shared.messages.last() {
                ui.label(
                    RichText::new(m)
                        .small()
                        .color(Color32::from_rgb(200, 140, 0)),
                );
            }
        });
    }

    fn rail_ui(&mut self, ui: &mut egui::Ui) {
        ui.vertical(|ui| {
            for (i, p) in self.panels.iter().enumerate() {
                let busy = self
                    .shared
                    .timeline
                    .cards
                    .iter()
                    .any(|c| c.status.is_none() && c.module == p.key());
                let text = if busy {
                    format!("{} (running)", p.rail_label())
                } else {
                    p.rail_label().to_string()
                };
                if ui.selectable_label(self.active == i, text).clicked() {
                    self.active = i;
                }
            }
        });
    }

    fn timeline_ui(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            ui.selectable_value(
                &mut self.right_tab,
                RightTab::Timeline,
                RichText::new("Timeline").heading(),
            );
            ui.selectable_value(
                &mut self.right_tab,
                RightTab::Chat,
                RichText::new("Chat").heading(),
            );
        });
        if self.right_tab == RightTab::Chat {
            if self.chat.save_path.is_none() {
                self.chat.save_path = self.chat_save_path();
            }
            if let Some((call, note)) = self.chat.ui(ui) {
                let outcome = self.execute_chat_tool(&call);
                let outcome = match (outcome, note.trim()) {
                    (crate::llm::harness::ToolOutcome::Ok(t), n) if !n.is_empty() => {
                        crate::llm::harness::ToolOutcome::Ok(format!(
                            "{t}\nThe user approved this with a note: {n}"
                        ))
                    }
                    (o, _) => o,
                };
                if let Some(p) = &mut self.chat.pending {
                    p.answer(outcome);
                }
                self.chat.pending = None;
            }
            return;
        }
        egui::Panel::bottom("note_box").show(ui, |ui| {
            ui.horizontal(|ui| {
                let label = ui.label("Note:");
                let edit = ui
                    .add(egui::TextEdit::singleline(&mut self.note).hint_text("e.g. use lambda 5"))
                    .labelled_by(label.id);
                let enter = edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                if ui.button("Send note").clicked() || enter {
                    self.send_note();
                }
            });
        });
        if self.shared.timeline.cards.is_empty()
            && self.shared.timeline.finish.is_none()
            && !self.running()
        {
            ui.label("No run yet. Auto to report runs every step to a report; Step by step asks before each one.");
        }
        if let Some(module) = self.shared.timeline.ui(ui, &mut self.thumbnails)
            && let Some(i) = self.panels.iter().position(|p| p.key() == module)
        {
            self.active = i;
        }
    }

    /// Where the conversation is saved: with the run when there is one, else beside the
    /// project's runs.
    fn chat_save_path(&self) -> Option<PathBuf> {
        if let Some(d) = &self.shared.run_dir {
            return Some(d.join("chat.json"));
        }
        let p = self.shared.project.as_ref()?;
        let (y, mo, d, h, mi, s) =
            crate::runtime::run_folder::utc_parts(crate::runtime::run_folder::now_unix());
        Some(
            p.dir
                .join("runs")
                .join("chats")
                .join(format!("{y:04}-{mo:02}-{d:02}_{h:02}{mi:02}{s:02}.json")),
        )
    }

    /// Carry out an approved chat tool call against the studio (only through the panels'
    /// `describe` / `apply`). A failed action is an ordinary result with a status line; a
    /// tool that could not do its job is an error; nothing found is an absence.
    pub fn execute_chat_tool(
        &mut self,
        call: &crate::llm::harness::ToolCall,
    ) -> crate::llm::harness::ToolOutcome {
        use crate::llm::harness::{Absence, ToolOutcome};
        let args = &call.arguments;
        let text = |v: serde_json::Value| {
            ToolOutcome::Ok(serde_json::to_string_pretty(&v).unwrap_or_default())
        };
        match call.name.as_str() {
            "list_modules" => text(serde_json::json!(
                self.panels
                    .iter()
                    .map(|p| serde_json::json!({"key": p.key(), "title": p.title()}))
                    .collect::<Vec<_>>()
            )),
            "open_module" => {
                let key = args["module"].as_str().unwrap_or("");
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
            "describe_module" => {
                text(self.panels[self.active.min(self.panels.len() - 1)].describe(&self.shared))
            }
            "apply_action" => {
                let key = args["module"].as_str().unwrap_or("");
                let action = args["action"].as_str().unwrap_or("");
                let Some(i) = self.panels.iter().position(|p| p.key() == key) else {
                    return ToolOutcome::Error(format!("there is no module {key}"));
                };
                self.active = i;
                let a = args.get("args").cloned().unwrap_or(serde_json::Value::Null);
                match self.panels[i].apply(action, &a, &mut self.shared) {
                    Ok(v) => ToolOutcome::Ok(format!(
                        "{}\nAction exited with status ok",
                        serde_json::to_string_pretty(&v).unwrap_or_default()
                    )),
                    Err(why) => ToolOutcome::Ok(format!("Action exited with status failed: {why}")),
                }
            }
            "read_state" => {
                let t = &self.shared.timeline;
                text(serde_json::json!({
                    "project": self.shared.project.as_ref().map(|p| serde_json::json!({"file": p.file.display().to_string(), "goal": p.goal})),
                    "running": self.running(),
                    "steps": t.cards.iter().map(|c| serde_json::json!({"step": c.step, "label": c.label, "status": c.status.map(|s| s.word()).unwrap_or("running"), "summary": c.summary, "error": c.error})).collect::<Vec<_>>(),
                    "route_ahead": t.route.iter().map(|r| r.label.clone()).collect::<Vec<_>>(),
                    "products": self.shared.shelf.keys(),
                    "finished": t.finish.as_ref().map(|f| serde_json::json!({"status": f.status, "reasons": f.reasons})),
                }))
            }
            "inspect_product" => {
                let key = args["key"].as_str().unwrap_or("");
                match self.shared.shelf.get(key) {
                    Some(p) => ToolOutcome::Ok(p.inspect()),
                    None => {
                        let have = self.shared.shelf.keys();
                        ToolOutcome::Absent(Absence {
                            looked_for: "a product of the current run with the requested name"
                                .into(),
                            checked: vec![format!(
                                "the {} products the current run has made",
                                have.len()
                            )],
                            not_checked: vec!["products of earlier runs".into()],
                            try_instead: Some(if have.is_empty() {
                                "run steps first (run_step), then look again".into()
                            } else {
                                format!("the products that exist are: {}", have.join(", "))
                            }),
                        })
                    }
                }
            }
            "run_step" => {
                if let Some(p) = self.dialogs.current()
                    && matches!(p.ask, super::dialogs::Ask::Approval { .. })
                {
                    let id = p.id;
                    self.command(Command::Proceed { id });
                    return ToolOutcome::Ok("Approved the step the run was waiting on; it has started. The timeline shows its result when it ends.".into());
                }
                if self.running() {
                    return ToolOutcome::Ok("A run is going on and is not waiting for approval; wait for its current step to end.".into());
                }
                let ctx = self.egui_ctx.clone();
                match ctx {
                    Some(c) => {
                        self.start_run(Mode::StepByStep, &c);
                        ToolOutcome::Ok(
                            "started: a step-by-step run began; it will ask before each step."
                                .into(),
                        )
                    }
                    None => ToolOutcome::Error("the studio window is not ready".into()),
                }
            }
            "find_data_files" => {
                let Some(p) = &self.shared.project else {
                    return ToolOutcome::Error(
                        "no project is open, so there is no folder to look in".into(),
                    );
                };
                let want = args["method"].as_str().map(str::to_string);
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
                            if want.as_ref().is_none_or(|w| *w == m) {
                                found.push(serde_json::json!({"path": path.display().to_string(), "method": m}));
                            }
                        }
                    }
                }
                if found.is_empty() {
                    ToolOutcome::Absent(Absence {
                        looked_for: "data files a reader recognises (of the requested method, if one was named)".into(),
                        checked: vec![format!("the {n} files in the project folder and two levels of subfolders (run folders excluded)")],
                        not_checked: vec!["folders outside the project".into(), "deeper subfolders".into()],
                        try_instead: Some("name the files in the project's inputs, or add them with File → Add data files".into()),
                    })
                } else {
                    text(serde_json::json!(found))
                }
            }
            other => ToolOutcome::Error(format!("there is no tool called {other}")),
        }
    }

    /// The settings to persist.
    pub fn persisted(&self) -> &StudioSettings {
        &self.settings
    }
}

fn take_replay(p: &mut dyn Panel) -> Option<PathBuf> {
    // The project panel is the only one with a replay request; reach it through describe-free
    // downcasting of its known type.
    let any = p as &mut dyn std::any::Any;
    any.downcast_mut::<panels::project::ProjectPanel>()
        .and_then(|pp| pp.replay_request.take())
}

/// The project role a method's files go under.
fn role_for_method(method: &str) -> Option<&'static str> {
    Some(match method {
        "ert" => "ert_files",
        "seismic" => "seismic_file",
        "tdem" => "tdem_file",
        "mt" => "mt_files",
        "gravmag" => "gravmag_file",
        "gpr" => "gpr_file",
        _ => return None,
    })
}

impl eframe::App for StudioApp {
    fn logic(&mut self, ctx: &egui::Context, _frame: &mut eframe::Frame) {
        StudioApp::logic(self, ctx);
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.ui_root(ui);
        self.frames += 1;
        if self.exit_after_first_frame && self.frames == 1 {
            let size = ui.ctx().content_rect().size();
            println!(
                "HydroGeo Studio: first frame drawn ({:.0}×{:.0} points); closing.",
                size.x, size.y
            );
            ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
        }
        self.unattended_ui(ui.ctx());
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, STORAGE_KEY, &self.settings);
    }

    fn on_exit(&mut self, _gl: Option<&eframe::glow::Context>) {
        // Every open request gets its safe default; the run is told to stop.
        self.dialogs.decline_all();
        self.chat.pending = None;
        self.chat.save();
        if let Some(r) = &self.run {
            r.send(Command::Stop);
        }
    }
}
