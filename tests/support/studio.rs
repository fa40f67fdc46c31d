//! Stepping the studio in kittest tests until something holds.

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
