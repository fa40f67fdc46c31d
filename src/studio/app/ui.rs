//! Drawing the window: the top bar, the rail, the module panel, the timeline or the chat, the
//! settings window and the dialogs. What a click asks for is queued as a
//! [`StudioCommand`] and carried out at the start of the next frame.

use std::path::PathBuf;

use egui::{Color32, RichText};

use super::{PickKind, RightTab, StudioApp, StudioCommand};
use crate::runtime::Mode;
use crate::studio::bridge::Command;

impl StudioApp {
    /// Draw everything.
    pub fn ui_root(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        if self.egui_ctx.is_none() {
            self.egui_ctx = Some(ctx.clone());
        }
        egui::Panel::top("top_bar").show(ui, |ui| self.top_bar_ui(ui));
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
        match self.new_project.ui(&ctx) {
            Some(super::super::new_project::NewProjectAction::Browse) => {
                self.queue(StudioCommand::Pick(PickKind::Folder));
            }
            Some(super::super::new_project::NewProjectAction::Open(p)) => self.open_project(&p),
            None => {}
        }
        self.dialogs.ui(&ctx);
        self.close_dialog_ui(&ctx);
        // A running step's clock keeps ticking.
        if self.shared.timeline.running() {
            ctx.request_repaint_after(std::time::Duration::from_millis(250));
        }
    }

    fn top_bar_ui(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            ui.menu_button("File", |ui| {
                if ui.button("New project from folder…").clicked() {
                    self.queue(StudioCommand::NewProject);
                    ui.close();
                }
                if ui.button("Open project…").clicked() {
                    self.queue(StudioCommand::Pick(PickKind::Project));
                    ui.close();
                }
                if ui.button("Add data files…").clicked() {
                    self.queue(StudioCommand::Pick(PickKind::Files));
                    ui.close();
                }
            });
            ui.separator();
            let idle = !self.running();
            if ui
                .add_enabled(idle, egui::Button::new("Auto to report"))
                .clicked()
            {
                self.queue(StudioCommand::StartRun(Mode::Auto));
            }
            if ui
                .add_enabled(idle, egui::Button::new("Step by step"))
                .clicked()
            {
                self.queue(StudioCommand::StartRun(Mode::StepByStep));
            }
            let t = &self.shared.timeline;
            if t.paused || t.pause_asked {
                if ui.add_enabled(!idle, egui::Button::new("Resume")).clicked() {
                    self.queue(StudioCommand::Run(Command::Resume));
                }
            } else if ui.add_enabled(!idle, egui::Button::new("Pause")).clicked() {
                self.queue(StudioCommand::Run(Command::Pause));
            }
            if ui.add_enabled(!idle, egui::Button::new("Stop")).clicked() {
                self.queue(StudioCommand::Run(Command::Stop));
            }
            ui.separator();
            if ui.button("Settings").clicked() {
                self.queue(StudioCommand::ToggleSettings);
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
        let mut picked = None;
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
                    picked = Some(i);
                }
            }
        });
        if let Some(i) = picked {
            self.queue(StudioCommand::ShowPanel(i));
        }
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
                self.queue(StudioCommand::ChatCall(call, note));
            }
            return;
        }
        let mut send = false;
        egui::Panel::bottom("note_box").show(ui, |ui| {
            ui.horizontal(|ui| {
                let label = ui.label("Note:");
                let edit = ui
                    .add(egui::TextEdit::singleline(&mut self.note).hint_text("e.g. use lambda 5"))
                    .labelled_by(label.id);
                let enter = edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                if ui.button("Send note").clicked() || enter {
                    send = true;
                }
            });
        });
        if send {
            self.queue(StudioCommand::SendNote);
        }
        if self.shared.timeline.cards.is_empty()
            && self.shared.timeline.finish.is_none()
            && !self.running()
        {
            ui.label("No run yet. Auto to report runs every step to a report; Step by step asks before each one.");
        }
        if let Some(module) = self.shared.timeline.ui(ui, &mut self.thumbnails) {
            self.queue(StudioCommand::ShowModule(module.to_string()));
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

    /// The unattended actions (see [`Unattended`]), called once per frame by the window.
    pub(super) fn unattended_ui(&mut self, ctx: &egui::Context) {
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
                self.queue(StudioCommand::StartRun(Mode::Auto));
            } else if self.unattended.step_run {
                self.queue(StudioCommand::StartRun(Mode::StepByStep));
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
            if self.running() {
                // A step-by-step run photographed at its first approval: decline what waits
                // and stop, then close once it has ended (as the close dialog's Stop does).
                if self.closing != super::close::Closing::Stopping {
                    self.dialogs.decline_all();
                    self.command(crate::studio::bridge::Command::Stop);
                    self.closing = super::close::Closing::Stopping;
                }
                return;
            }
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            return;
        }
        // The moment to photograph: the run has ended, or (step by step) a question waits.
        let ready = !self.running() || (self.unattended.step_run && !self.dialogs.is_empty());
        if !self.screenshot_asked && ready && self.frames > 3 {
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
}
