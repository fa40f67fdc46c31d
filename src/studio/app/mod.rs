//! The studio window: a left rail of modules, the module panel in the centre, the live
//! timeline and notes on the right, and a top bar with Auto to report, Step by step,
//! Pause / Resume, Stop, the model status and the running tokens and cost.
//!
//! Split by role, as rerun's viewer is: this file holds the state and its setup;
//! [`command_handling`] carries out [`StudioCommand`]s — what a click asked for is queued
//! while drawing and carried out once, at the start of the next frame, with the worker's
//! events; [`ui`] draws; [`chat_tools`] turns the chat's approved tool calls into typed
//! actions on the panels. The UI thread never waits on the worker.

mod chat_tools;
mod close;
mod command_handling;
mod handover;
mod ui;

use std::path::PathBuf;
use std::sync::Arc;

use crossbeam_channel::Receiver;

pub use chat_tools::ChatAction;
pub use close::Closing;
pub use command_handling::StudioCommand;

use super::bridge::Command;
use super::bridge::RunHandle;
use super::dialogs::Dialogs;
use super::panels::{self, Panel, Shared};
use super::settings::{STORAGE_KEY, SettingsWindow, StudioSettings};
use crate::llm::Settings;
use crate::runtime::decide::Decide;
use crate::runtime::{Project, Registry};

/// Makes the decider for a run from the current model settings (tests inject scripted ones).
pub type DeciderMaker = Arc<dyn Fn(&Settings) -> Option<Box<dyn Decide>> + Send + Sync>;

/// File dialogs, behind a trait so tests can answer them (rfd blocks: it is called off the UI
/// thread).
pub trait Picker: Send + Sync {
    /// A project folder (or `project.json`).
    fn pick_project(&self) -> Option<PathBuf>;
    /// Data files to add.
    fn pick_files(&self) -> Option<Vec<PathBuf>>;
    /// A folder of data files for a new project (`None`: none picked, or no dialog).
    fn pick_folder(&self) -> Option<PathBuf> {
        None
    }
}

/// A picker that never picks: every dialog is cancelled (headless harnesses, tests and the
/// frame benchmark).
#[derive(Debug, Default)]
pub struct NoPicker;

impl Picker for NoPicker {
    fn pick_project(&self) -> Option<PathBuf> {
        None
    }
    fn pick_files(&self) -> Option<Vec<PathBuf>> {
        None
    }
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

    fn pick_folder(&self) -> Option<PathBuf> {
        rfd::FileDialog::new()
            .set_title("A folder of data files for a new project")
            .pick_folder()
    }
}

/// What a pending file dialog was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickKind {
    /// A project folder.
    Project,
    /// Data files to add.
    Files,
    /// A folder of data files for a new project.
    Folder,
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
    /// Start Step by step on the first frame (the screenshot is taken at its first
    /// question, which then is declined and the run stopped).
    pub step_run: bool,
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
    /// File → New project from folder….
    pub new_project: super::new_project::NewProjectWindow,
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
    /// What the window asked for this frame, carried out once at the start of the next.
    commands: Vec<StudioCommand>,
    /// A close request during a run, and what the person chose.
    pub closing: Closing,
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
            new_project: Default::default(),
            picking: None,
            runs_dir: config.runs_dir,
            exit_after_first_frame: config.exit_after_first_frame,
            unattended: config.unattended,
            screenshot_asked: false,
            screenshot_saved: Arc::default(),
            frames: 0,
            runs_started: 0,
            egui_ctx: None,
            commands: Vec::new(),
            closing: Closing::No,
        }
    }

    /// How many runs this studio has started (one at a time).
    pub fn runs_started(&self) -> usize {
        self.runs_started
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
    crate::catalog::kit::methods::by_id(method).map(|m| m.main_role)
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
        // The window is gone: open requests are closed without an answer, never the user's.
        if let Some(r) = &self.run {
            r.send(Command::Close);
        }
    }
}
