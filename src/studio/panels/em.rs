//! The Time-domain EM (TDEM) panel: the method's inputs, products and figures (shared
//! [`MethodView`]), and what a scientist needs to see of the soundings — decays on log–log
//! axes (observed with their error bars' extent, modelled), the layered model with its depth
//! of investigation, a stitched section of every sounding's model along the line, the
//! settings with units (the project's `tdem_params` with the panel's edits on top) — and a
//! Run button that calls the catalog's TDEM run path ([`crate::catalog::tdem::run`], as the
//! `load_tdem_data` and `invert_tdem` steps do) on a [`Job`].

use egui_plot::{HLine, Legend, Line, LineStyle, Plot, PlotPoints, Points};
use serde_json::{Value, json};

use super::method::{MethodSpec, MethodView};
use super::section::{Frame, log_range, section_frame_ui, spectral};
use super::{Panel, Shared};
use crate::catalog::kit::Held;
use crate::catalog::kit::keys;
use crate::catalog::tdem::run::{self as tdem_run, TdemInputs};
use crate::catalog::tdem::{TdemEdits, settings as tdem_settings};
use crate::methods::tdem::invert::SmoothSettings;
use crate::methods::tdem::params::TdemParams;
use crate::methods::tdem::pipeline::{SoundingFit, TdemDataset, TdemInversion};
use crate::studio::job::Job;

/// What this panel shows.
pub const SPEC: MethodSpec = crate::catalog::kit::methods::TDEM;

/// A run started from the panel: the data as loaded and the models.
#[derive(Debug, Clone)]
pub struct PanelRun {
    /// The soundings as read.
    pub dataset: TdemDataset,
    /// The smooth models.
    pub inversion: TdemInversion,
}

/// The Time-domain EM (TDEM) panel.
#[derive(Debug, Default)]
pub struct EmPanel {
    view: MethodView,
    /// The panel's edits, layered over the project's `tdem_params` for the next run.
    pub edits: TdemEdits,
    /// The sounding whose decay and model are drawn.
    pub selected: usize,
    job: Option<Job<PanelRun>>,
    /// The last run started here (shown before the run's products).
    pub last: Option<PanelRun>,
    /// Why the last run failed.
    pub error: Option<String>,
}

/// The project's TDEM files and `tdem_params`, or why not.
fn project_inputs(shared: &Shared) -> Result<(TdemInputs, TdemParams), String> {
    let p = shared
        .project
        .as_ref()
        .ok_or("no project is open: open one with File → Open project…")?;
    let ctx = p.context();
    let inputs = TdemInputs::of(&ctx).map_err(|e| e.to_string())?;
    let params = tdem_settings::params(&ctx).map_err(|e| e.to_string())?;
    Ok((inputs, params))
}

impl EmPanel {
    /// The models to draw: the panel's own last run, else the run's `tdem_results`.
    fn inversion(&self, shared: &Shared) -> Option<TdemInversion> {
        if let Some(r) = &self.last {
            return Some(r.inversion.clone());
        }
        let p = shared.shelf.get(keys::TDEM_RESULTS)?;
        p.as_any()
            .downcast_ref::<Held<TdemInversion>>()
            .map(|h| h.value.clone())
    }

    /// Start the inversion on a background job with the panel's settings.
    fn start(&mut self, ctx: &egui::Context, shared: &Shared) {
        let (inputs, params) = match project_inputs(shared) {
            Ok((i, p)) => (i, self.edits.apply(p)),
            Err(e) => {
                self.error = Some(e);
                return;
            }
        };
        self.error = None;
        self.job = Some(Job::spawn(
            ctx,
            "TDEM inversion",
            move |progress, cancel| {
                progress(0.0, "reading the soundings");
                let dataset = tdem_run::load(&inputs, &params).map_err(|e| e.to_string())?;
                let inversion = tdem_run::invert(&dataset, &params, Some(progress), cancel)
                    .map_err(|e| e.to_string())?;
                Ok(PanelRun { dataset, inversion })
            },
        ));
    }

    /// The layers and error floor (percent) the next run uses: the panel's edits over the
    /// project's `tdem_params`, over the inversion's defaults.
    fn effective(&self, shared: &Shared) -> (usize, f64) {
        let d = SmoothSettings::default();
        let p = project_inputs(shared).map(|(_, p)| p).unwrap_or_default();
        let p = self.edits.apply(p);
        (
            p.n_layers.unwrap_or(d.n_layers),
            100.0 * p.error_floor.unwrap_or(d.error_floor),
        )
    }

    fn settings_ui(&mut self, ui: &mut egui::Ui, shared: &Shared) {
        let (mut n_layers, mut floor) = self.effective(shared);
        ui.horizontal(|ui| {
            let l = ui
                .label("Layers")
                .on_hover_text("Layers of the smooth model, the half-space included; log-spaced down to below the depth of investigation (the project's tdem_params.n_layers until changed here).");
            if ui
                .add(egui::DragValue::new(&mut n_layers).range(3..=60))
                .labelled_by(l.id)
                .changed()
            {
                self.edits.n_layers = Some(n_layers);
            }
            let l = ui
                .label("Error floor (%)")
                .on_hover_text("Smallest relative standard deviation a gate is given (percent of its value; the project's tdem_params.error_floor until changed here).");
            if ui
                .add(
                    egui::DragValue::new(&mut floor)
                        .range(0.5..=50.0)
                        .speed(0.1),
                )
                .labelled_by(l.id)
                .changed()
            {
                self.edits.error_floor_percent = Some(floor);
            }
        });
    }

    fn run_ui(&mut self, ui: &mut egui::Ui, shared: &mut Shared) {
        let running = self.job.as_ref().is_some_and(|j| j.result.is_none());
        if ui
            .add_enabled(!running, egui::Button::new("Run TDEM inversion"))
            .on_hover_text("Read the soundings and invert them for smooth layered models (the same functions as the invert_tdem step).")
            .clicked()
        {
            let ctx = ui.ctx().clone();
            self.start(&ctx, shared);
        }
        if let Some(job) = &mut self.job {
            if job.poll() {
                match job.result.take() {
                    Some(Ok(run)) => {
                        shared.messages.push(format!(
                            "TDEM inversion: χ² {:.2} over {} sounding(s)",
                            run.inversion.chi2(),
                            run.inversion.fits.len()
                        ));
                        self.selected = self
                            .selected
                            .min(run.inversion.fits.len().saturating_sub(1));
                        self.last = Some(run);
                    }
                    Some(Err(e)) => self.error = Some(e),
                    None => {}
                }
                self.job = None;
            } else {
                job.ui(ui);
            }
        }
        if let Some(e) = &self.error {
            ui.colored_label(
                egui::Color32::from_rgb(190, 60, 40),
                format!("Run failed: {e}"),
            );
        }
    }

    fn plots_ui(&mut self, ui: &mut egui::Ui, inv: &TdemInversion) {
        if inv.fits.is_empty() {
            ui.label("The inversion produced no model (see the notes of the step).");
            return;
        }
        self.selected = self.selected.min(inv.fits.len() - 1);
        let names: Vec<String> = inv.fits.iter().map(|f| f.name.clone()).collect();
        egui::ComboBox::from_label("Sounding")
            .selected_text(names[self.selected].clone())
            .show_ui(ui, |ui| {
                for (i, n) in names.iter().enumerate() {
                    ui.selectable_value(&mut self.selected, i, n);
                }
            });
        let f = &inv.fits[self.selected];
        ui.label(format!(
            "{}: χ² {:.2}, RRMS {:.1} %, {} gates, DOI {}",
            f.name,
            f.chi2,
            f.rrms_percent,
            f.n_data,
            f.doi_m
                .map_or("not reached".into(), |d| format!("{d:.0} m"))
        ));
        ui.columns(2, |cols| {
            decay_plot(&mut cols[0], f);
            model_plot(&mut cols[1], f);
        });
        if inv.fits.len() > 1 {
            ui.separator();
            let n = stitched_section_ui(ui, inv);
            ui.label(format!(
                "Stitched section: {n} soundings side by side at their distance along the line, layers faded below each DOI"
            ));
        }
    }
}

/// The soundings' layered models side by side (a stitched section): each a column of its
/// layers at its distance along the line (its order when it has none), coloured by log10 ρ,
/// faded below its depth of investigation. Returns how many soundings were drawn.
fn stitched_section_ui(ui: &mut egui::Ui, inv: &TdemInversion) -> usize {
    let xs: Vec<f64> = inv
        .fits
        .iter()
        .enumerate()
        .map(|(i, f)| f.position.distance_m.unwrap_or(i as f64))
        .collect();
    let Some((lo, hi)) = log_range(
        inv.fits
            .iter()
            .flat_map(|f| f.model.rho_ohm_m.iter().copied()),
    ) else {
        return 0;
    };
    let mut sorted = xs.clone();
    sorted.sort_by(f64::total_cmp);
    let gap = sorted
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|d| *d > 0.0)
        .fold(f64::INFINITY, f64::min);
    let half = if gap.is_finite() { 0.4 * gap } else { 0.5 };
    let doi_max = inv.fits.iter().filter_map(|f| f.doi_m).fold(0.0, f64::max);
    let last_top = inv
        .fits
        .iter()
        .filter_map(|f| f.model.top_depths_m().last().copied())
        .fold(0.0, f64::max);
    let bottom = if doi_max > 0.0 {
        1.3 * doi_max
    } else {
        1.2 * last_top
    }
    .max(1.0);
    let frame = Frame {
        x: (sorted[0] - half, sorted[sorted.len() - 1] + half),
        z: (-bottom, 0.0),
        log_range: (lo, hi),
        z_label: "Depth (m)",
        bar_label: "Ω·m",
    };
    section_frame_ui(ui, &frame, |painter, to| {
        for (f, &x) in inv.fits.iter().zip(&xs) {
            let tops = f.model.top_depths_m();
            for (i, rho) in f.model.rho_ohm_m.iter().enumerate() {
                let top = tops[i].min(bottom);
                let bot = tops.get(i + 1).copied().unwrap_or(bottom).min(bottom);
                if bot <= top {
                    continue;
                }
                let below_doi = f.doi_m.is_some_and(|d| top >= d);
                let c = spectral(
                    (rho.log10() - lo) / (hi - lo),
                    if below_doi { 0.3 } else { 1.0 },
                );
                painter.rect_filled(
                    egui::Rect::from_two_pos(to(x - half, -top), to(x + half, -bot)),
                    0.0,
                    c,
                );
            }
            if let Some(d) = f.doi_m.filter(|d| *d < bottom) {
                painter.line_segment(
                    [to(x - half, -d), to(x + half, -d)],
                    egui::Stroke::new(1.5, egui::Color32::BLACK),
                );
            }
        }
    });
    inv.fits.len()
}

/// log10 of the positive values, paired with log10 t.
fn log_points(t: &[f64], v: &[f64]) -> Vec<[f64; 2]> {
    t.iter()
        .zip(v)
        .filter(|(t, v)| **t > 0.0 && **v > 0.0)
        .map(|(t, v)| [t.log10(), v.log10()])
        .collect()
}

fn pow10_label(mark: egui_plot::GridMark, _r: &std::ops::RangeInclusive<f64>) -> String {
    format!("1e{:.1}", mark.value)
}

/// Observed (points, with ±σ as short vertical lines) and modelled (line) decay, log–log.
fn decay_plot(ui: &mut egui::Ui, f: &SoundingFit) {
    ui.label("Decay: observed (points) and modelled (line), log-log");
    Plot::new(("tdem_decay", f.index))
        .height(260.0)
        .legend(Legend::default())
        .x_axis_label("log10 time after turn-off (s)")
        .y_axis_label("log10 response")
        .x_axis_formatter(pow10_label)
        .y_axis_formatter(pow10_label)
        .show(ui, |p| {
            p.points(
                Points::new(
                    "observed",
                    PlotPoints::from(log_points(&f.times_s, &f.observed)),
                )
                .radius(3.0),
            );
            for ((t, o), s) in f.times_s.iter().zip(&f.observed).zip(&f.sigma) {
                if *t > 0.0 && o - s > 0.0 {
                    p.line(
                        Line::new(
                            "±σ",
                            PlotPoints::from(vec![
                                [t.log10(), (o - s).log10()],
                                [t.log10(), (o + s).log10()],
                            ]),
                        )
                        .color(egui::Color32::GRAY),
                    );
                }
            }
            p.line(Line::new(
                "modelled",
                PlotPoints::from(log_points(&f.times_s, &f.predicted)),
            ));
        });
}

/// The layered model as a step profile: log10 ρ against depth (drawn downwards), the DOI
/// as a dashed horizontal line.
fn model_plot(ui: &mut egui::Ui, f: &SoundingFit) {
    ui.label("Layered model with depth of investigation");
    let tops = f.model.top_depths_m();
    let bottom = f
        .doi_m
        .map_or(tops.last().copied().unwrap_or(10.0) * 1.2, |d| d * 1.3)
        .max(1.0);
    let mut pts = Vec::new();
    for (i, rho) in f.model.rho_ohm_m.iter().enumerate() {
        let top = tops[i];
        let bot = tops.get(i + 1).copied().unwrap_or(bottom.max(top * 1.05));
        pts.push([rho.log10(), -top]);
        pts.push([rho.log10(), -bot]);
    }
    Plot::new(("tdem_model", f.index))
        .height(260.0)
        .legend(Legend::default())
        .x_axis_label("log10 resistivity (ohm m)")
        .y_axis_label("depth (m)")
        .x_axis_formatter(pow10_label)
        .y_axis_formatter(|m, _| format!("{:.0}", -m.value))
        .show(ui, |p| {
            p.line(Line::new("model", PlotPoints::from(pts)));
            if let Some(d) = f.doi_m {
                p.hline(HLine::new("DOI", -d).style(LineStyle::dashed_loose()));
            }
        });
}

impl Panel for EmPanel {
    fn key(&self) -> &'static str {
        SPEC.panel
    }

    fn title(&self) -> &'static str {
        SPEC.title
    }

    fn rail_label(&self) -> &'static str {
        SPEC.short
    }

    fn ui(&mut self, ui: &mut egui::Ui, shared: &mut Shared) {
        egui::ScrollArea::vertical()
            .id_salt("em_panel")
            .show(ui, |ui| {
                self.view.ui(ui, &SPEC, shared);
                if MethodView::inputs(&SPEC, shared).is_empty() {
                    return;
                }
                ui.separator();
                ui.strong("Smooth 1D inversion");
                self.settings_ui(ui, shared);
                self.run_ui(ui, shared);
                match self.inversion(shared) {
                    Some(inv) => self.plots_ui(ui, &inv),
                    None => {
                        ui.label("No models yet: press Run TDEM inversion.");
                    }
                }
            });
    }

    fn describe(&self, shared: &Shared) -> Value {
        let mut v = MethodView::describe(&SPEC, shared);
        let inv = self.inversion(shared);
        let (n_layers, floor) = self.effective(shared);
        v["state"] = json!({
            "n_layers": n_layers,
            "error_floor_percent": floor,
            "running": self.job.is_some(),
            "selected_sounding": self.selected,
            "soundings": inv.as_ref().map(|i| i.fits.iter().map(|f| json!({
                "name": f.name, "chi2": f.chi2, "doi_m": f.doi_m
            })).collect::<Vec<_>>()),
            "chi2": inv.as_ref().map(TdemInversion::chi2),
            "error": self.error,
        });
        if let Some(a) = v["actions"].as_array_mut() {
            a.push(json!({"name": "set_settings", "args": {"n_layers": "3–60", "error_floor_percent": "0.5–50"}, "desc": "Settings of the next panel run."}));
            a.push(json!({"name": "select_sounding", "args": {"index": "0-based sounding index"}, "desc": "Which sounding's decay and model are drawn."}));
            a.push(json!({"name": "run_inversion", "args": {}, "desc": "Invert the project's TDEM file with the panel's settings (background job; progress in the panel)."}));
        }
        v
    }

    fn apply(
        &mut self,
        action: &str,
        args: &Value,
        shared: &mut Shared,
        window: &egui::Context,
    ) -> Result<Value, String> {
        match action {
            "set_settings" => {
                if let Some(n) = args.get("n_layers") {
                    let n = n.as_u64().filter(|n| (3..=60).contains(n)).ok_or_else(|| {
                        format!("n_layers must be a whole number from 3 to 60, got {n}")
                    })?;
                    self.edits.n_layers = Some(n as usize);
                }
                if let Some(e) = args.get("error_floor_percent") {
                    let e = e
                        .as_f64()
                        .filter(|e| (0.5..=50.0).contains(e))
                        .ok_or_else(|| format!("error_floor_percent must be 0.5–50, got {e}"))?;
                    self.edits.error_floor_percent = Some(e);
                }
                let (n, e) = self.effective(shared);
                Ok(json!({"n_layers": n, "error_floor_percent": e}))
            }
            "select_sounding" => {
                let n = self.inversion(shared).map_or(0, |i| i.fits.len());
                let i = args
                    .get("index")
                    .and_then(Value::as_u64)
                    .map(|i| i as usize)
                    .filter(|i| *i < n)
                    .ok_or_else(|| format!("index must be a sounding index below {n}"))?;
                self.selected = i;
                Ok(json!({"selected_sounding": i}))
            }
            "run_inversion" => {
                project_inputs(shared)?;
                if self.job.as_ref().is_some_and(|j| j.result.is_none()) {
                    return Err("a TDEM inversion is already running".into());
                }
                self.start(window, shared);
                match &self.error {
                    Some(e) => Err(e.clone()),
                    None => Ok(
                        json!({"started": true, "note": "the inversion runs in the background; its progress shows in the EM panel"}),
                    ),
                }
            }
            _ => MethodView::apply(&SPEC, action, args, shared),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::Project;
    use egui_kittest::Harness;
    use egui_kittest::kittest::Queryable;

    fn shared_with_example(dir: &std::path::Path) -> Shared {
        let truth = crate::example::Truth::default();
        let roles = crate::example::tdem::write(&truth, dir).unwrap();
        let mut inputs = serde_json::Map::new();
        for (role, path) in &roles {
            inputs.insert(role.clone(), json!(path));
        }
        let params: Value = serde_json::from_str(crate::example::tdem::TDEM_PARAMS).unwrap();
        let text = json!({
            "goal": "Image the deep conductor",
            "inputs": inputs,
            "config": {keys::TDEM_PARAMS: params}
        })
        .to_string();
        let file = dir.join("project.json");
        Shared {
            project: Some(Project::parse(&text, &file).unwrap()),
            ..Shared::default()
        }
    }

    #[test]
    fn nothing_loaded_says_what_to_do() {
        let mut h = Harness::builder()
            .with_context_setup(crate::studio::setup_fonts)
            .build_ui_state(
                |ui, s: &mut (EmPanel, Shared)| s.0.ui(ui, &mut s.1),
                (EmPanel::default(), Shared::default()),
            );
        h.run();
        h.get_by_label_contains("No Time-domain EM (TDEM) data in this project");
        assert!(h.query_by_label("Run TDEM inversion").is_none());
    }

    #[test]
    fn run_inverts_the_example_on_a_job_and_draws_the_sounding() {
        // The example's five soundings (src/example/tdem.rs) with 8 layers to keep it short:
        // Run → job → models; the selector lists snd1…snd5 and the text names the χ².
        let dir = tempfile::tempdir().unwrap();
        let mut panel = EmPanel::default();
        panel.edits.n_layers = Some(8);
        let mut h = Harness::builder()
            .with_size(egui::vec2(1200.0, 1000.0))
            .with_context_setup(crate::studio::setup_fonts)
            .build_ui_state(
                |ui, s: &mut (EmPanel, Shared)| s.0.ui(ui, &mut s.1),
                (panel, shared_with_example(dir.path())),
            );
        h.run();
        h.get_by_label("No models yet: press Run TDEM inversion.");
        h.get_by_label("Run TDEM inversion").click();
        let t0 = std::time::Instant::now();
        while h.state().0.last.is_none() && h.state().0.error.is_none() {
            assert!(t0.elapsed().as_secs() < 300, "the job did not finish");
            h.step();
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        h.run();
        assert_eq!(h.state().0.error, None);
        let inv = &h.state().0.last.as_ref().unwrap().inversion;
        assert_eq!(inv.fits.len(), 5);
        assert_eq!(inv.fits[0].model.n_layers(), 8);
        let chi2 = inv.fits[0].chi2;
        h.get_by_label_contains(&format!("snd1: χ² {chi2:.2}"));
        // The five models side by side.
        h.get_by_label_contains("Stitched section: 5 soundings side by side");
        // describe / apply drive the same state.
        let window = h.ctx.clone();
        let (panel, shared) = h.state_mut();
        panel
            .apply("select_sounding", &json!({"index": 2}), shared, &window)
            .unwrap();
        assert!(
            panel
                .apply("select_sounding", &json!({"index": 9}), shared, &window)
                .is_err()
        );
        let d = panel.describe(shared);
        assert_eq!(d["state"]["selected_sounding"], 2);
        assert_eq!(d["state"]["soundings"].as_array().unwrap().len(), 5);
        h.run();
        let chi2 = h.state().0.last.as_ref().unwrap().inversion.fits[2].chi2;
        h.get_by_label_contains(&format!("snd3: χ² {chi2:.2}"));
    }
}
