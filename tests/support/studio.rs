//! The studio in kittest tests: its harness, and stepping it until something holds.

use std::time::{Duration, Instant};

use egui_kittest::Harness;
use hydrogeo_studio::studio::StudioApp;

/// Step frames until `done` holds (or fail after `secs`, naming `what`), then one more.
pub fn step_until(
    h: &mut Harness<'static, StudioApp>,
    secs: u64,
    what: &str,
    mut done: impl FnMut(&StudioApp) -> bool,
) {
    let t0 = Instant::now();
    while !done(h.state()) {
        assert!(
            t0.elapsed() < Duration::from_secs(secs),
            "timed out waiting for {what}"
        );
        h.step();
        std::thread::sleep(Duration::from_millis(5));
    }
    h.step();
}

/// The studio in a 1400 × 900 harness, each frame its `logic` then its `ui_root`.
pub fn harness(app: StudioApp) -> Harness<'static, StudioApp> {
    Harness::builder()
        .with_size(egui::vec2(1400.0, 900.0))
        .with_context_setup(hydrogeo_studio::studio::setup_fonts)
        .build_ui_state(
            |ui, app: &mut StudioApp| {
                let ctx = ui.ctx().clone();
                app.logic(&ctx);
                app.ui_root(ui);
            },
            app,
        )
}
