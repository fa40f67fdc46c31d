//! Frame time of the studio with a run working (issue 24, item 6): the bundled example's Auto
//! to report runs on the worker while the harness draws frames, and the time of each frame's
//! `logic` + `ui_root` (what eframe's `App::ui` does) is recorded. After one whole run (not
//! counted, so the panels have figures to draw), 150 frames on each module panel (ERT …
//! Report), with a run in the background throughout (a new one is started when one ends). Prints p50, p90, p99 and the maximum in ms. No display: egui_kittest, no
//! rendering (tessellation and painting are the GPU side's and are not in `ui()`).
//!
//! `cargo bench --bench studio_frames`

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use hydrogeo_studio::studio::app::NoPicker;
use hydrogeo_studio::studio::{StudioApp, StudioConfig};

const PANELS: [&str; 7] = ["ERT", "Seismic", "EM", "MT", "Grav/Mag", "GPR", "Report"];
const FRAMES_PER_PANEL: usize = 150;

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn main() {
    let tmp = tempfile::tempdir().expect("temporary folder");
    // The bundled example, written by the writer make-example uses.
    hydrogeo_studio::example::write_project_from(
        &hydrogeo_studio::example::Truth::default(),
        tmp.path(),
    )
    .expect("the example writes");
    let runs = tmp.path().join("runs");
    let app = StudioApp::new(StudioConfig {
        project: tmp.path().to_path_buf(),
        registry: Arc::new(hydrogeo_studio::catalog::registry()),
        decider: Arc::new(|_| None),
        picker: Arc::new(NoPicker),
        runs_dir: Some(runs),
        exit_after_first_frame: false,
        unattended: Default::default(),
        settings: None,
        chat_model: None,
    });
    let times: Arc<Mutex<Vec<f64>>> = Arc::new(Mutex::new(Vec::new()));
    let record = times.clone();
    let mut h = Harness::builder()
        .with_size(egui::vec2(1400.0, 900.0))
        .with_context_setup(hydrogeo_studio::studio::setup_fonts)
        .build_ui_state(
            move |ui, app: &mut StudioApp| {
                let t = Instant::now();
                let ctx = ui.ctx().clone();
                app.logic(&ctx);
                app.ui_root(ui);
                if let Ok(mut v) = record.lock() {
                    v.push(t.elapsed().as_secs_f64() * 1e3);
                }
            },
            app,
        );
    h.step();
    // One whole run first, uncounted, so every panel has its products and figures to draw.
    h.get_by_label("Auto to report").click();
    let t0 = Instant::now();
    h.step();
    while h.state().running() && t0.elapsed() < Duration::from_secs(600) {
        h.step();
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut runs_started = 1;
    let mut counted: Vec<f64> = Vec::new();
    let mut per_panel = Vec::new();
    for panel in PANELS {
        h.query_by_label_contains(panel)
            .unwrap_or_else(|| panic!("no rail entry {panel}"))
            .click();
        let mut mine = Vec::new();
        while mine.len() < FRAMES_PER_PANEL {
            if !h.state().running() {
                h.get_by_label("Auto to report").click();
                runs_started += 1;
            }
            times.lock().expect("times").clear();
            h.step();
            // Only frames drawn while the worker is busy count.
            if h.state().running() {
                mine.extend(times.lock().expect("times").iter().copied());
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let mut s = mine.clone();
        s.sort_by(f64::total_cmp);
        per_panel.push((panel, percentile(&s, 0.5), percentile(&s, 0.99)));
        counted.extend(mine);
    }
    counted.sort_by(f64::total_cmp);
    println!(
        "studio frames with a run working: {} frames, {runs_started} run(s) started; ui() ms: p50 {:.2}, p90 {:.2}, p99 {:.2}, max {:.2}",
        counted.len(),
        percentile(&counted, 0.5),
        percentile(&counted, 0.9),
        percentile(&counted, 0.99),
        counted.last().copied().unwrap_or(f64::NAN)
    );
    for (p, p50, p99) in per_panel {
        println!("  {p:<9} p50 {p50:.2} ms, p99 {p99:.2} ms");
    }
}
