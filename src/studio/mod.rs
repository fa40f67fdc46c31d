//! The egui studio: the shell, module panels, timeline, dialogs, settings and the worker
//! bridge. The controller runs on its own thread; the UI thread never waits on it.

pub mod app;
pub mod bridge;
pub mod chat;
pub mod dialogs;
pub mod images;
pub mod job;
pub mod markdown;
pub mod new_project;
pub mod panels;
pub mod settings;
pub mod timeline;

use std::path::PathBuf;

pub use app::{StudioApp, StudioConfig};

/// How the studio is opened.
#[derive(Debug, Clone)]
pub struct LaunchOptions {
    /// The project to open.
    pub project: PathBuf,
    /// Close after the first frame (smoke test).
    pub exit_after_first_frame: bool,
    /// Unattended actions (auto run, panel, screenshot).
    pub unattended: app::Unattended,
}

/// The studio's fonts: egui's Ubuntu for text, with Hack behind it (arrows, geometric shapes,
/// Greek and mathematical signs Ubuntu lacks) and the emoji fonts last (check marks). Call once
/// on a new context (the window does; tests pass it to the harness builder).
pub fn setup_fonts(ctx: &egui::Context) {
    let mut fonts = egui::FontDefinitions::default();
    if let Some(p) = fonts.families.get_mut(&egui::FontFamily::Proportional)
        && !p.iter().any(|f| f == "Hack")
    {
        let at = p
            .iter()
            .position(|f| f == "Ubuntu-Light")
            .map_or(0, |i| i + 1);
        p.insert(at, "Hack".to_owned());
    }
    ctx.set_fonts(fonts);
}

/// Open the studio window on a project.
pub fn launch(options: LaunchOptions) -> anyhow::Result<()> {
    let native = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("HydroGeo Studio")
            .with_inner_size([1400.0, 900.0])
            .with_min_inner_size([900.0, 600.0]),
        renderer: eframe::Renderer::Glow,
        ..Default::default()
    };
    let mut config = StudioConfig::real(options.project);
    config.exit_after_first_frame = options.exit_after_first_frame;
    config.unattended = options.unattended;
    eframe::run_native(
        "HydroGeo Studio",
        native,
        Box::new(move |cc| {
            setup_fonts(&cc.egui_ctx);
            config.settings = cc.storage.and_then(|s| {
                eframe::get_value::<settings::StudioSettings>(s, settings::STORAGE_KEY)
            });
            Ok(Box::new(StudioApp::new(config)))
        }),
    )
    .map_err(|e| anyhow::anyhow!("the studio window could not open: {e}"))
}
