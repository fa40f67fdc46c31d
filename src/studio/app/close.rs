//! Closing the window while a run goes on: the person is asked to stop the run, keep it
//! running in the background, or cancel. Stopping (here or with the Stop button) ends the run
//! as `stopped` with a report of the steps that ran; the window closes once it has ended.
//! "In the background" minimises the window and closes it when the run ends.

use super::StudioApp;
use crate::studio::bridge::Command;

/// Where a close request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Closing {
    /// No close asked for.
    #[default]
    No,
    /// The window was closed during a run: the three choices are shown.
    Asking,
    /// Stop chosen: the run is stopping; the window closes once it has ended.
    Stopping,
    /// Keep running chosen: the window is minimised and closes when the run ends.
    Background,
}

impl StudioApp {
    /// Each frame: hold a close request that comes during a run and ask about it; close once
    /// a stopping or background run has ended.
    pub(super) fn close_logic(&mut self, ctx: &egui::Context) {
        let requested = ctx.input(|i| i.viewport().close_requested());
        let running = self.running();
        match self.closing {
            Closing::No if requested && running => {
                ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
                self.closing = Closing::Asking;
            }
            Closing::Asking if !running => self.closing = Closing::No,
            Closing::Stopping | Closing::Background if !running => {
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            }
            Closing::Asking | Closing::Stopping | Closing::Background if requested => {
                ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
            }
            _ => {}
        }
    }

    /// The close dialog, while it is asked.
    pub(super) fn close_dialog_ui(&mut self, ctx: &egui::Context) {
        if self.closing != Closing::Asking {
            return;
        }
        let mut choice = None;
        egui::Window::new("A run is going on")
            .collapsible(false)
            .resizable(false)
            .anchor(egui::Align2::CENTER_CENTER, egui::vec2(0.0, 0.0))
            .show(ctx, |ui| {
                ui.label("Closing the window would end the run. What should happen to it?");
                ui.horizontal(|ui| {
                    if ui.button("Stop the run").clicked() {
                        choice = Some(Closing::Stopping);
                    }
                    if ui.button("Keep it running in the background").clicked() {
                        choice = Some(Closing::Background);
                    }
                    if ui.button("Cancel").clicked() {
                        choice = Some(Closing::No);
                    }
                });
                ui.small(
                    "Stop writes a report of the steps already done (status: stopped). In the background, the window is minimised and closes when the run ends.",
                );
            });
        match choice {
            Some(Closing::Stopping) => {
                self.command(Command::Stop);
                self.closing = Closing::Stopping;
            }
            Some(Closing::Background) => {
                ctx.send_viewport_cmd(egui::ViewportCommand::Minimized(true));
                self.closing = Closing::Background;
            }
            Some(_) => self.closing = Closing::No,
            None => {}
        }
    }
}
