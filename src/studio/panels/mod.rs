//! The module panels: one file each, the same shape. Each panel draws itself (`ui`), describes
//! its actions, their arguments and its state as JSON (`describe`), and carries out an action
//! (`apply`) — the chat drives the studio only through these two, never through widgets.

pub mod em;
pub mod ert;
pub mod gpr;
pub mod gravmag;
pub mod method;
pub mod mt;
pub mod project;
pub mod report;
pub mod section;
pub mod seismic;

use std::path::PathBuf;

use serde_json::Value;

use super::bridge::Shelf;
use super::timeline::Timeline;
use crate::runtime::Project;

/// What every panel may read and change: the project, the run's products, the timeline.
#[derive(Debug, Default)]
pub struct Shared {
    /// The open project, if it could be read.
    pub project: Option<Project>,
    /// Why the project could not be read.
    pub project_error: Option<String>,
    /// Products of the current (or last) run.
    pub shelf: Shelf,
    /// The current (or last) run's timeline.
    pub timeline: Timeline,
    /// The current (or last) run folder.
    pub run_dir: Option<PathBuf>,
    /// Messages for the status line, newest last.
    pub messages: Vec<String>,
}

/// A module panel.
pub trait Panel: std::any::Any {
    /// The module key (`project`, `ert`, `seismic`, `em`, `mt`, `gravmag`, `gpr`, `report`).
    fn key(&self) -> &'static str;
    /// The panel's heading.
    fn title(&self) -> &'static str;
    /// The short name on the rail (Project, ERT, Seismic, EM, MT, Grav/Mag, GPR, Report).
    fn rail_label(&self) -> &'static str {
        self.title()
    }
    /// Draw the panel.
    fn ui(&mut self, ui: &mut egui::Ui, shared: &mut Shared);
    /// Actions, their arguments and the panel's state, as JSON.
    fn describe(&self, shared: &Shared) -> Value;
    /// Carry out an action; the result (or why not) as JSON / text. `window` is the studio's
    /// egui context: a background job started here wakes the window through it.
    fn apply(
        &mut self,
        action: &str,
        args: &Value,
        shared: &mut Shared,
        window: &egui::Context,
    ) -> Result<Value, String>;
}

/// Every panel, in rail order.
pub fn all() -> Vec<Box<dyn Panel>> {
    vec![
        Box::new(project::ProjectPanel::default()),
        Box::new(ert::ErtPanel::default()),
        Box::new(seismic::SeismicPanel::default()),
        Box::new(em::EmPanel::default()),
        Box::new(mt::MtPanel::default()),
        Box::new(gravmag::GravMagPanel::default()),
        Box::new(gpr::GprPanel::default()),
        Box::new(report::ReportPanel::default()),
    ]
}
