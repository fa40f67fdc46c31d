//! File → New project from folder…: a folder (typed, or picked where the system has a file
//! dialog), every file in it read by the readers, a table of file → format → role that the
//! person can change, the goal typed, and project.json written beside the data
//! ([`crate::catalog::new_project`]; the data are only read).

use std::path::{Path, PathBuf};

use crate::catalog::kit::methods::by_id;
use crate::catalog::new_project::{ScannedFile, scan_folder, write_project};

/// The window and what it holds between frames.
#[derive(Debug, Default)]
pub struct NewProjectWindow {
    /// Shown.
    pub open: bool,
    /// The folder, as typed or picked.
    pub folder: String,
    /// The question the project is to answer.
    pub goal: String,
    /// The folder's files as last read.
    pub files: Vec<ScannedFile>,
    /// The folder `files` were read from.
    pub scanned: Option<PathBuf>,
    /// What went wrong last (shown in red).
    pub error: Option<String>,
}

/// What the window asks the studio to do.
#[derive(Debug, Clone, PartialEq)]
pub enum NewProjectAction {
    /// Open the system's folder dialog.
    Browse,
    /// Open the project just written.
    Open(PathBuf),
}

impl NewProjectWindow {
    /// Open the window (empty, or on the folder the person picked).
    pub fn show(&mut self) {
        self.open = true;
    }

    /// A folder came back from the file dialog: read it.
    pub fn picked(&mut self, folder: &Path) {
        self.folder = folder.display().to_string();
        self.scan();
    }

    /// Read the typed folder's files.
    pub fn scan(&mut self) {
        let dir = PathBuf::from(self.folder.trim());
        match scan_folder(&dir) {
            Ok(files) => {
                self.files = files;
                self.scanned = Some(dir);
                self.error = None;
            }
            Err(e) => {
                self.files.clear();
                self.scanned = None;
                self.error = Some(e.to_string());
            }
        }
    }

    /// Write project.json; on success the window closes and the project is to be opened.
    pub fn create(&mut self) -> Option<NewProjectAction> {
        let dir = self.scanned.clone()?;
        match write_project(&dir, &self.goal, &self.files) {
            Ok(path) => {
                self.open = false;
                self.error = None;
                Some(NewProjectAction::Open(path))
            }
            Err(e) => {
                self.error = Some(e.to_string());
                None
            }
        }
    }

    /// Draw the window.
    pub fn ui(&mut self, ctx: &egui::Context) -> Option<NewProjectAction> {
        if !self.open {
            return None;
        }
        let mut action = None;
        let mut open = self.open;
        egui::Window::new("New project from a folder")
            .open(&mut open)
            .default_width(760.0)
            .show(ctx, |ui| action = self.contents_ui(ui));
        self.open = self.open && open;
        action
    }

    fn contents_ui(&mut self, ui: &mut egui::Ui) -> Option<NewProjectAction> {
        let mut action = None;
        ui.label("The folder that holds the survey's files (they are only read; project.json is written beside them):");
        ui.horizontal(|ui| {
            let field = ui.add(
                egui::TextEdit::singleline(&mut self.folder)
                    .hint_text("/path/to/survey")
                    .desired_width(480.0),
            );
            let entered = field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            if ui.button("Read the folder").clicked() || entered {
                self.scan();
            }
            if ui.button("Browse…").clicked() {
                action = Some(NewProjectAction::Browse);
            }
        });
        if !self.files.is_empty() {
            ui.separator();
            self.files_ui(ui);
        }
        ui.separator();
        ui.label("Goal (the question the run answers):");
        ui.add(
            egui::TextEdit::multiline(&mut self.goal)
                .hint_text("e.g. Where is the water table along the line?")
                .desired_rows(2)
                .desired_width(f32::INFINITY),
        );
        let ready = self.scanned.is_some()
            && !self.goal.trim().is_empty()
            && self.files.iter().any(|f| f.role.is_some());
        if ui
            .add_enabled(ready, egui::Button::new("Create project"))
            .clicked()
        {
            action = self.create().or(action);
        }
        if !ready {
            ui.small("Read a folder with data files and type the goal to create the project.");
        }
        if let Some(e) = &self.error {
            ui.colored_label(egui::Color32::from_rgb(190, 60, 40), e);
        }
        action
    }

    /// The table: file, what the readers made of it, its role (a choice among its method's
    /// roles, or left out).
    fn files_ui(&mut self, ui: &mut egui::Ui) {
        let recognised = self.files.iter().filter(|f| f.method.is_some()).count();
        ui.label(format!(
            "{} files, {recognised} recognised by a reader:",
            self.files.len()
        ));
        egui::ScrollArea::vertical()
            .id_salt("new_project_files")
            .max_height(320.0)
            .show(ui, |ui| {
                egui::Grid::new("new_project_grid")
                    .striped(true)
                    .num_columns(3)
                    .show(ui, |ui| {
                        ui.strong("File");
                        ui.strong("Format");
                        ui.strong("Role");
                        ui.end_row();
                        for (i, f) in self.files.iter_mut().enumerate() {
                            ui.monospace(f.path.display().to_string());
                            ui.label(&f.format);
                            role_ui(ui, i, f);
                            ui.end_row();
                        }
                    });
            });
    }
}

/// The role chooser of one file: its method's roles, or "left out".
fn role_ui(ui: &mut egui::Ui, i: usize, f: &mut ScannedFile) {
    let Some(method) = f.method.as_deref().and_then(by_id) else {
        ui.label("—");
        return;
    };
    let shown = f.role.clone().unwrap_or_else(|| "left out".into());
    egui::ComboBox::from_id_salt(("new_project_role", i))
        .selected_text(shown)
        .show_ui(ui, |ui| {
            for role in method.roles {
                ui.selectable_value(&mut f.role, Some(role.to_string()), *role);
            }
            ui.selectable_value(&mut f.role, None, "left out");
        });
}
