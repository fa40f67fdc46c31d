//! The Seismic refraction panel: travel-time curves (observed and modelled), the picks on a
//! raw shot gather (a click on a trace picks it there; set or delete by number), the velocity model with its coverage mask, the
//! tomography settings with units and tooltips (the project's `seismic_inversion_params` with
//! the panel's edits on top), and a Run button that calls the catalog's seismic run path
//! ([`crate::catalog::seismic::run::invert`], as the `invert_seismic` step does) on a
//! background [`Job`].

use std::sync::Arc;

use egui_plot::{GridMark, Line, Plot, PlotPoints, Points, Polygon};
use serde_json::{Value, json};

use super::method::{MethodSpec, MethodView};
use super::{Panel, Shared};
use crate::catalog::kit::Held;
use crate::catalog::kit::keys;
use crate::catalog::seismic::run as seismic_run;
use crate::catalog::seismic::{
    SeismicEdits, SeismicModel, SeismicPicks, SeismicSettings, held_model,
};
use crate::methods::seismic::TravelTimes;
use crate::runtime::RunContext;
use crate::studio::job::Job;

/// What this panel shows.
pub const SPEC: MethodSpec = crate::catalog::kit::methods::SEISMIC;

/// The Seismic refraction panel.
#[derive(Debug, Default)]
pub struct SeismicPanel {
    view: MethodView,
    /// The panel's edits of the tomography settings, layered over the project's.
    pub edits: SeismicEdits,
    /// The shot shown in the gather view (index into the picks' shots).
    pub shot: usize,
    /// The trace the pick editor acts on.
    pub edit_trace: usize,
    /// The time the pick editor sets, ms.
    pub edit_time_ms: f64,
    /// The gather plot's screen ↔ (x, −time) mapping of the last frame (for a click).
    gather_transform: Option<egui_plot::PlotTransform>,
    job: Option<Job<SeismicModel>>,
    /// The last message of the panel (what an action did, or why not).
    pub status: String,
}

/// The trace whose receiver is nearest to `x_m` (`None` without traces or for a non-finite x).
fn nearest_trace(receiver_x_m: &[f64], x_m: f64) -> Option<usize> {
    if !x_m.is_finite() {
        return None;
    }
    receiver_x_m
        .iter()
        .enumerate()
        .min_by(|a, b| (a.1 - x_m).abs().total_cmp(&(b.1 - x_m).abs()))
        .map(|(i, _)| i)
}

/// The picks on the shelf.
fn picks(shared: &Shared) -> Option<SeismicPicks> {
    let p = shared.shelf.get(keys::SEISMIC_PICKS)?;
    p.as_any()
        .downcast_ref::<Held<SeismicPicks>>()
        .map(|h| h.value.clone())
}

/// The travel times on the shelf (a file's, else the picks').
fn traveltimes(shared: &Shared) -> Option<TravelTimes> {
    if let Some(p) = shared.shelf.get(keys::SEISMIC_TRAVELTIMES)
        && let Some(h) = p.as_any().downcast_ref::<Held<TravelTimes>>()
    {
        return Some(h.value.clone());
    }
    picks(shared).map(|p| p.traveltimes)
}

/// The model on the shelf.
fn model(shared: &Shared) -> Option<SeismicModel> {
    let p = shared.shelf.get(keys::SEISMIC_RESULTS)?;
    p.as_any()
        .downcast_ref::<Held<SeismicModel>>()
        .map(|h| h.value.clone())
}

/// Put edited picks back on the shelf (travel times rebuilt from them).
fn store_picks(shared: &Shared, mut p: SeismicPicks) {
    p.rebuild();
    let n: usize = p.shots.iter().map(|s| s.n_picked()).sum();
    let line = format!(
        "{n} first-break picks from {} shots (edited)",
        p.shots.len()
    );
    shared.shelf.put(
        keys::SEISMIC_PICKS,
        Arc::new(Held::new(p, line).number("n_data", n)),
    );
}

/// A horizontal colour bar of the model's scale: `lo` on the left, `hi` on the right, linear.
fn colour_bar_ui(ui: &mut egui::Ui, lo: f64, hi: f64, label: &str) {
    super::section::horizontal_bar_ui(ui, (lo, hi), label, viridis);
}

/// Viridis-like colour for t in 0–1 (five anchor colours of matplotlib's viridis).
fn viridis(t: f64) -> egui::Color32 {
    const C: [(f64, f64, f64); 5] = [
        (68.0, 1.0, 84.0),
        (59.0, 82.0, 139.0),
        (33.0, 145.0, 140.0),
        (94.0, 201.0, 98.0),
        (253.0, 231.0, 37.0),
    ];
    let t = t.clamp(0.0, 1.0) * 4.0;
    let i = (t.floor() as usize).min(3);
    let f = t - i as f64;
    let mix = |a: f64, b: f64| (a + f * (b - a)).round() as u8;
    egui::Color32::from_rgb(
        mix(C[i].0, C[i + 1].0),
        mix(C[i].1, C[i + 1].1),
        mix(C[i].2, C[i + 1].2),
    )
}

impl SeismicPanel {
    /// Set a pick by hand: `shot` and `trace` are indices, `time_ms` the new time.
    pub fn set_pick(
        shared: &Shared,
        shot: usize,
        trace: usize,
        time_ms: f64,
    ) -> Result<Value, String> {
        let mut p = picks(shared).ok_or("no picks yet: run Pick first breaks on raw shots")?;
        let n_shots = p.shots.len();
        let s = p.shots.get_mut(shot).ok_or(format!(
            "no shot {shot}: shots are 0 to {}",
            n_shots.saturating_sub(1)
        ))?;
        if !(time_ms.is_finite() && time_ms >= 0.0) {
            return Err(format!("time_ms must be a time ≥ 0 in ms, found {time_ms}"));
        }
        if !s.set_pick(trace, time_ms / 1e3) {
            return Err(format!("shot {shot} has no trace {trace}"));
        }
        let n = s.n_picked();
        store_picks(shared, p);
        Ok(json!({"shot": shot, "trace": trace, "time_ms": time_ms, "picks_in_shot": n}))
    }

    /// Delete a pick by hand.
    pub fn delete_pick(shared: &Shared, shot: usize, trace: usize) -> Result<Value, String> {
        let mut p = picks(shared).ok_or("no picks yet: run Pick first breaks on raw shots")?;
        let n_shots = p.shots.len();
        let s = p.shots.get_mut(shot).ok_or(format!(
            "no shot {shot}: shots are 0 to {}",
            n_shots.saturating_sub(1)
        ))?;
        if !s.delete_pick(trace) {
            return Err(format!("shot {shot} has no trace {trace}"));
        }
        let n = s.n_picked();
        store_picks(shared, p);
        Ok(json!({"shot": shot, "trace": trace, "deleted": true, "picks_in_shot": n}))
    }

    fn poll_job(&mut self, shared: &mut Shared) {
        let Some(job) = &mut self.job else { return };
        if !job.poll() {
            return;
        }
        match job.result.take() {
            Some(Ok(m)) => {
                self.status = format!(
                    "Tomography: χ² {:.2}, rrms {:.2} % after {} iterations.",
                    m.inversion.chi2, m.inversion.rrms_percent, m.inversion.iterations
                );
                shared
                    .shelf
                    .put(keys::SEISMIC_RESULTS, Arc::new(held_model(m)));
            }
            Some(Err(e)) => self.status = format!("Tomography did not finish: {e}"),
            None => {}
        }
        self.job = None;
    }

    fn start_job(&mut self, ctx: &egui::Context, shared: &Shared) {
        let Some(tt) = traveltimes(shared) else {
            self.status =
                "No travel times: load a travel-time file or pick raw shots first.".into();
            return;
        };
        let params = match self.settings(shared) {
            Ok(s) => s.inversion,
            Err(e) => {
                self.status = e;
                return;
            }
        };
        let source = if shared.shelf.get(keys::SEISMIC_TRAVELTIMES).is_some() {
            "travel-time file".to_string()
        } else {
            "picks".to_string()
        };
        self.job = Some(Job::spawn(
            ctx,
            "Seismic tomography",
            move |progress, cancel| {
                seismic_run::invert(&tt, &source, &params, progress, cancel)
                    .map_err(|e| format!("{e:#}"))
            },
        ));
        self.status = "Tomography running.".into();
    }

    /// The settings the next Run uses: the project's, with the panel's edits on top.
    fn settings(&self, shared: &Shared) -> Result<SeismicSettings, String> {
        let ctx = shared
            .project
            .as_ref()
            .map_or_else(|| RunContext::new(""), |p| p.context());
        SeismicSettings::read(&ctx)
            .map(|s| s.with_edits(&self.edits))
            .map_err(|e| format!("the project's seismic settings cannot be used: {e:#}"))
    }

    fn settings_ui(&mut self, ui: &mut egui::Ui, shared: &Shared) {
        let Ok(s) = self.settings(shared) else {
            return;
        };
        let p = s.inversion;
        let (mut lambda, mut z_weight, mut max_iterations, mut error_percent) = (
            p.lambda,
            p.z_weight,
            p.max_iterations,
            100.0 * p.relative_error,
        );
        egui::Grid::new("seismic_settings").show(ui, |ui| {
            let l = ui.label("Regularisation λ");
            if ui.add(egui::DragValue::new(&mut lambda).range(0.01..=1e4).speed(0.5))
                .labelled_by(l.id)
                .on_hover_text("Smoothness weight of the tomography (the project's seismic_inversion_params until changed here; pyGIMLi default 20). Smaller fits the data closer.")
                .changed()
            {
                self.edits.lambda = Some(lambda);
            }
            ui.end_row();
            let l = ui.label("Vertical smoothness weight");
            if ui.add(egui::DragValue::new(&mut z_weight).range(0.01..=10.0).speed(0.01))
                .labelled_by(l.id)
                .on_hover_text("Weight of vertical relative to horizontal smoothness (zWeight); below 1 allows layering.")
                .changed()
            {
                self.edits.z_weight = Some(z_weight);
            }
            ui.end_row();
            let l = ui.label("Max iterations");
            if ui.add(egui::DragValue::new(&mut max_iterations).range(1..=100))
                .labelled_by(l.id)
                .on_hover_text("Gauss–Newton iterations at most.")
                .changed()
            {
                self.edits.max_iterations = Some(max_iterations);
            }
            ui.end_row();
            let l = ui.label("Assumed error (%)");
            if ui.add(egui::DragValue::new(&mut error_percent).range(0.1..=50.0).speed(0.1))
                .labelled_by(l.id)
                .on_hover_text("Relative pick error used only when the data carry no errors (3 % by default).")
                .changed()
            {
                self.edits.relative_error_percent = Some(error_percent);
            }
            ui.end_row();
        });
    }

    fn traveltime_plot(ui: &mut egui::Ui, tt: &TravelTimes, m: Option<&SeismicModel>) {
        ui.label("Travel-time curves: observed (points), modelled (lines)");
        let mut modelled = vec![f64::NAN; tt.n_data()];
        if let Some(m) = m
            && m.data.n_data() == tt.n_data()
        {
            for (&i, &r) in m.inversion.used_picks.iter().zip(&m.inversion.response_s) {
                if i < modelled.len() {
                    modelled[i] = r;
                }
            }
        }
        Plot::new("seismic_tt")
            .height(260.0)
            .x_axis_label("Receiver position x (m)")
            .y_axis_label("Time (ms)")
            .show(ui, |p| {
                for s in tt.shots() {
                    let mut rows: Vec<usize> =
                        (0..tt.n_data()).filter(|&i| tt.shot[i] == s).collect();
                    rows.sort_by(|&a, &b| {
                        tt.sensor_x_m[tt.geophone[a]].total_cmp(&tt.sensor_x_m[tt.geophone[b]])
                    });
                    let obs: Vec<[f64; 2]> = rows
                        .iter()
                        .map(|&i| [tt.sensor_x_m[tt.geophone[i]], 1e3 * tt.time_s[i]])
                        .collect();
                    p.points(Points::new("observed", PlotPoints::from(obs)).radius(2.0));
                    let md: Vec<[f64; 2]> = rows
                        .iter()
                        .filter(|&&i| modelled[i].is_finite())
                        .map(|&i| [tt.sensor_x_m[tt.geophone[i]], 1e3 * modelled[i]])
                        .collect();
                    if !md.is_empty() {
                        p.line(
                            Line::new("modelled", PlotPoints::from(md))
                                .color(egui::Color32::from_rgb(200, 30, 30)),
                        );
                    }
                }
            });
    }

    fn model_plot(ui: &mut egui::Ui, m: &SeismicModel) {
        let inv = &m.inversion;
        let (lo, hi) = inv
            .velocity_m_per_s
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                (a.min(v), b.max(v))
            });
        ui.label(format!(
            "Velocity model (m/s), faded where no ray passes; colour scale {lo:.0} (dark) to {hi:.0} m/s (yellow)"
        ));
        Plot::new("seismic_model")
            .height(260.0)
            .data_aspect(1.0)
            .x_axis_label("Distance x (m)")
            .y_axis_label("Elevation z (m)")
            .show(ui, |p| {
                for c in 0..inv.grid.n_cells() {
                    let k = inv.grid.cell_corners(c);
                    let t = (inv.velocity_m_per_s[c] - lo) / (hi - lo).max(1e-9);
                    let mut col = viridis(t);
                    if !inv.covered[c] {
                        col = col.gamma_multiply(0.25);
                    }
                    let pts = vec![
                        [k[0].0, k[0].1],
                        [k[1].0, k[1].1],
                        [k[3].0, k[3].1],
                        [k[2].0, k[2].1],
                    ];
                    p.polygon(
                        Polygon::new("", PlotPoints::from(pts))
                            .fill_color(col)
                            .stroke(egui::Stroke::NONE)
                            .allow_hover(false),
                    );
                }
            });
        colour_bar_ui(ui, lo, hi, "P velocity (m/s)");
    }

    fn gather_plot(&mut self, ui: &mut egui::Ui, shared: &Shared, p: &SeismicPicks) {
        let n = p.shots.len();
        if n == 0 {
            return;
        }
        self.shot = self.shot.min(n - 1);
        ui.horizontal(|ui| {
            let l = ui.label("Shot");
            ui.add(egui::DragValue::new(&mut self.shot).range(0..=n - 1))
                .labelled_by(l.id)
                .on_hover_text("Which shot gather to show (0-based)");
            ui.label(format!(
                "source at x = {:.2} m, {} picks",
                p.shots[self.shot].source_x_m,
                p.shots[self.shot].n_picked()
            ));
        });
        let (Some(g), Some(s)) = (p.gathers.get(self.shot), p.shots.get(self.shot)) else {
            return;
        };
        let rx: Vec<f64> = s.picks.iter().map(|q| q.receiver_x_m).collect();
        let spacing = rx
            .windows(2)
            .map(|w| (w[1] - w[0]).abs())
            .filter(|d| *d > 0.0)
            .fold(f64::INFINITY, f64::min);
        let spacing = if spacing.is_finite() { spacing } else { 1.0 };
        let stride = (g.n_samples() / 800).max(1);
        let resp = Plot::new("seismic_gather")
            .height(300.0)
            .x_axis_label("Receiver position x (m)")
            .y_axis_label("Time (ms, down)")
            .y_axis_formatter(|m: GridMark, _| format!("{:.0}", -m.value))
            .show(ui, |pl| {
                for (t, &x) in rx.iter().enumerate().take(g.n_traces()) {
                    let row = g.data.row(t);
                    let peak = row.iter().fold(0.0f64, |a, v| a.max(v.abs())).max(1e-30);
                    let pts: Vec<[f64; 2]> = (0..g.n_samples())
                        .step_by(stride)
                        .map(|j| [x + 0.45 * spacing * row[j] / peak, -1e3 * g.time_s(j)])
                        .collect();
                    pl.line(
                        Line::new("", PlotPoints::from(pts))
                            .color(egui::Color32::DARK_GRAY)
                            .width(1.0),
                    );
                }
                let pk: Vec<[f64; 2]> = s
                    .picks
                    .iter()
                    .filter_map(|q| Some([q.receiver_x_m, -1e3 * q.time_s?]))
                    .collect();
                pl.points(
                    Points::new("picks", PlotPoints::from(pk))
                        .color(egui::Color32::from_rgb(220, 40, 40))
                        .radius(3.0),
                );
            });
        self.gather_transform = Some(resp.transform);
        // A click on the gather picks the nearest trace at the clicked time.
        if resp.response.clicked()
            && let Some(pos) = resp.response.interact_pointer_pos()
        {
            let at = resp.transform.value_from_position(pos);
            if let Some(trace) = nearest_trace(&rx, at.x) {
                let time_ms = (-at.y).max(0.0);
                self.edit_trace = trace;
                self.edit_time_ms = time_ms;
                self.status = match Self::set_pick(shared, self.shot, trace, time_ms) {
                    Ok(_) => format!(
                        "Pick set on trace {trace} at {time_ms:.2} ms (clicked on the gather; Delete pick undoes it)."
                    ),
                    Err(e) => e,
                };
            }
        }
        ui.label(
            "Click on a trace in the gather to pick it at that time, or set a pick by number:",
        );
        ui.horizontal(|ui| {
            let l = ui.label("Trace");
            ui.add(
                egui::DragValue::new(&mut self.edit_trace)
                    .range(0..=g.n_traces().saturating_sub(1)),
            )
            .labelled_by(l.id)
            .on_hover_text("Trace number (0-based) of the pick to set or delete");
            let l = ui.label("Pick time (ms)");
            ui.add(
                egui::DragValue::new(&mut self.edit_time_ms)
                    .range(0.0..=1e5)
                    .speed(0.1),
            )
            .labelled_by(l.id)
            .on_hover_text("First-arrival time to set on the trace, ms");
            if ui.button("Set pick").clicked() {
                self.status =
                    match Self::set_pick(shared, self.shot, self.edit_trace, self.edit_time_ms) {
                        Ok(_) => format!(
                            "Pick set on trace {} at {:.2} ms.",
                            self.edit_trace, self.edit_time_ms
                        ),
                        Err(e) => e,
                    };
            }
            if ui.button("Delete pick").clicked() {
                self.status = match Self::delete_pick(shared, self.shot, self.edit_trace) {
                    Ok(_) => format!("Pick on trace {} deleted.", self.edit_trace),
                    Err(e) => e,
                };
            }
        });
    }
}

impl Panel for SeismicPanel {
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
        self.poll_job(shared);
        egui::ScrollArea::vertical()
            .id_salt("seismic_panel")
            .show(ui, |ui| {
                self.view.ui(ui, &SPEC, shared);
                ui.separator();
                ui.strong("Tomography settings");
                self.settings_ui(ui, shared);
                let tt = traveltimes(shared);
                ui.horizontal(|ui| {
                    let running = self.job.is_some();
                    if ui
                        .add_enabled(tt.is_some() && !running, egui::Button::new("Run tomography"))
                        .on_hover_text("Invert the travel times with these settings (the same inversion as the run's invert_seismic step)")
                        .clicked()
                    {
                        self.start_job(ui.ctx(), shared);
                    }
                    if let Some(job) = &mut self.job {
                        job.ui(ui);
                    }
                });
                if tt.is_none() {
                    ui.label("No travel times yet: load a travel-time file or pick raw shots (Auto to report does both).");
                }
                if !self.status.is_empty() {
                    ui.label(self.status.clone());
                }
                let m = model(shared);
                if let Some(tt) = &tt {
                    ui.separator();
                    Self::traveltime_plot(ui, tt, m.as_ref());
                }
                if let Some(m) = &m {
                    ui.separator();
                    Self::model_plot(ui, m);
                }
                if let Some(p) = picks(shared) {
                    ui.separator();
                    ui.strong("Picks on the shot gather");
                    self.gather_plot(ui, shared, &p);
                }
            });
    }

    fn describe(&self, shared: &Shared) -> Value {
        let mut v = MethodView::describe(&SPEC, shared);
        let settings = self.settings(shared);
        let p = picks(shared);
        let m = model(shared);
        if let Some(o) = v.as_object_mut() {
            o.insert(
                "actions".into(),
                json!([
                    {"name": "inspect_product", "args": {"key": "one of the product keys"}, "desc": "The numbers a product holds (read-only)."},
                    {"name": "set_pick", "args": {"shot": "shot index (0-based)", "trace": "trace index (0-based)", "time_ms": "first-arrival time, ms"}, "desc": "Set a first-break pick by hand."},
                    {"name": "delete_pick", "args": {"shot": "shot index (0-based)", "trace": "trace index (0-based)"}, "desc": "Delete a first-break pick."},
                    {"name": "set_setting", "args": {"name": "lambda | z_weight | max_iterations | relative_error_percent", "value": "a number"}, "desc": "Change a tomography setting of the panel's Run."},
                    {"name": "run_tomography", "args": {}, "desc": "Invert the travel times with the panel's settings (in the background)."}
                ]),
            );
            o.insert(
                "state".into(),
                json!({
                    "settings": settings.as_ref().ok().map(|s| json!({
                        "lambda": s.inversion.lambda,
                        "z_weight": s.inversion.z_weight,
                        "max_iterations": s.inversion.max_iterations,
                        "relative_error_percent": 100.0 * s.inversion.relative_error,
                    })),
                    "settings_error": settings.as_ref().err(),
                    "shots_picked": p.as_ref().map(|p| p.shots.iter().map(|s| json!({"source_x_m": s.source_x_m, "picks": s.n_picked(), "flagged": s.flagged})).collect::<Vec<_>>()),
                    "model": m.as_ref().map(|m| json!({"chi2": m.inversion.chi2, "rrms_percent": m.inversion.rrms_percent, "iterations": m.inversion.iterations})),
                    "running": self.job.is_some(),
                    "status": self.status,
                }),
            );
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
        let idx = |k: &str| -> Result<usize, String> {
            args.get(k)
                .and_then(Value::as_u64)
                .map(|v| v as usize)
                .ok_or(format!("{action} needs \"{k}\" (a whole number ≥ 0)"))
        };
        match action {
            "set_pick" => {
                let t = args
                    .get("time_ms")
                    .and_then(Value::as_f64)
                    .ok_or("set_pick needs \"time_ms\" (ms)")?;
                let r = Self::set_pick(shared, idx("shot")?, idx("trace")?, t)?;
                self.status = format!("Pick set: {r}");
                Ok(r)
            }
            "delete_pick" => {
                let r = Self::delete_pick(shared, idx("shot")?, idx("trace")?)?;
                self.status = format!("Pick deleted: {r}");
                Ok(r)
            }
            "set_setting" => {
                let name = args
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or("set_setting needs \"name\"")?;
                let value = args
                    .get("value")
                    .and_then(Value::as_f64)
                    .filter(|v| v.is_finite() && *v > 0.0)
                    .ok_or("set_setting needs a positive number \"value\"")?;
                match name {
                    "lambda" => self.edits.lambda = Some(value),
                    "z_weight" => self.edits.z_weight = Some(value),
                    "max_iterations" => self.edits.max_iterations = Some(value.round().max(1.0) as usize),
                    "relative_error_percent" => self.edits.relative_error_percent = Some(value),
                    other => {
                        return Err(format!(
                            "no setting '{other}'; the settings are lambda, z_weight, max_iterations, relative_error_percent"
                        ));
                    }
                }
                Ok(json!({"name": name, "value": value}))
            }
            "run_tomography" => {
                if traveltimes(shared).is_none() {
                    return Err("no travel times: load a travel-time file or pick raw shots first".into());
                }
                if self.job.is_some() {
                    return Err("a tomography is already running".into());
                }
                self.start_job(window, shared);
                if self.job.is_none() {
                    return Err(self.status.clone());
                }
                Ok(json!({"started": true, "note": "the inversion runs in the background; describe shows when it is done"}))
            }
            _ => MethodView::apply(&SPEC, action, args, shared).map_err(|e| {
                if e.starts_with("no action") {
                    format!(
                        "no action '{action}' on the Seismic refraction panel; its actions are: inspect_product, set_pick, delete_pick, set_setting, run_tomography"
                    )
                } else {
                    e
                }
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::seismic::picking::{
        PickParams, PickStatus, pick_gather, picks_to_traveltimes,
    };
    use egui_kittest::Harness;
    use egui_kittest::kittest::{NodeT, Queryable};

    /// A shelf with picks made by our picker on a synthetic shot (the example's raw-shot
    /// recipe with direct-wave times offset/450 m/s).
    fn shared_with_picks() -> Shared {
        let truth = crate::example::Truth::default();
        let tt = crate::example::seismic::survey(&truth);
        let t: Vec<f64> = (0..tt.n_data()).map(|i| tt.offset_m(i) / 450.0).collect();
        let g = crate::example::seismic::raw_shot(&tt, &t, 3);
        let shots = vec![pick_gather(&g, &PickParams::default())];
        let p = SeismicPicks {
            traveltimes: picks_to_traveltimes(&shots, true),
            gathers: vec![g],
            shots,
            files: vec!["synthetic".into()],
            notes: vec![],
        };
        let shared = Shared::default();
        shared
            .shelf
            .put(keys::SEISMIC_PICKS, Arc::new(Held::new(p, "picks")));
        shared
    }

    fn harness(shared: Shared) -> Harness<'static, (SeismicPanel, Shared)> {
        Harness::builder()
            .with_size(egui::vec2(1000.0, 1600.0))
            .with_context_setup(crate::studio::setup_fonts)
            .build_ui_state(
                |ui, (panel, shared): &mut (SeismicPanel, Shared)| panel.ui(ui, shared),
                (SeismicPanel::default(), shared),
            )
    }

    /// Nothing loaded: the panel says what to do and the Run button is there but disabled.
    #[test]
    fn empty_panel_says_what_to_do() {
        let mut h = harness(Shared::default());
        h.run();
        h.get_by_label_contains("No travel times yet");
        assert!(
            h.get_by_label("Run tomography")
                .accesskit_node()
                .is_disabled()
        );
    }

    /// With picks: the gather and travel-time plots show; the pick editor's Set pick and
    /// Delete pick change the picks on the shelf (and the travel times rebuilt from them);
    /// `apply` does the same, and `describe` lists the actions.
    #[test]
    fn picks_can_be_set_and_deleted() {
        let mut h = harness(shared_with_picks());
        h.run();
        h.get_by_label("Picks on the shot gather");
        h.get_by_label_contains("Travel-time curves");
        assert!(
            !h.get_by_label("Run tomography")
                .accesskit_node()
                .is_disabled()
        );
        {
            let (panel, _) = h.state_mut();
            panel.edit_trace = 5;
            panel.edit_time_ms = 12.5;
        }
        h.get_by_label("Set pick").click();
        h.run();
        h.get_by_label("Pick set on trace 5 at 12.50 ms.");
        let p = picks(&h.state().1).unwrap();
        let q = &p.shots[0].picks[5];
        assert_eq!(q.time_s, Some(0.0125));
        assert_eq!(q.status, PickStatus::Manual);
        let before = p.traveltimes.n_data();
        h.get_by_label("Delete pick").click();
        h.run();
        let p = picks(&h.state().1).unwrap();
        assert_eq!(p.shots[0].picks[5].time_s, None);
        assert_eq!(p.traveltimes.n_data(), before - 1);
        let window = h.ctx.clone();
        let (panel, shared) = h.state_mut();
        let r = panel
            .apply(
                "set_pick",
                &json!({"shot": 0, "trace": 5, "time_ms": 10.0}),
                shared,
                &window,
            )
            .unwrap();
        assert_eq!(r["picks_in_shot"].as_u64().unwrap() as usize, before);
        assert!(
            panel
                .apply(
                    "set_pick",
                    &json!({"shot": 3, "trace": 5, "time_ms": 1.0}),
                    shared,
                    &window
                )
                .is_err()
        );
        let d = panel.describe(shared);
        let names: Vec<&str> = d["actions"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|a| a["name"].as_str())
            .collect();
        assert!(
            names.contains(&"set_pick")
                && names.contains(&"delete_pick")
                && names.contains(&"run_tomography")
        );
        assert!(
            panel
                .apply(
                    "set_setting",
                    &json!({"name": "lambda", "value": 5}),
                    shared,
                    &window
                )
                .is_ok()
        );
        assert_eq!(panel.edits.lambda, Some(5.0));
    }

    /// A click on the gather sets the pick of the nearest trace at the clicked time (within a
    /// pixel's worth of time), and the status says how to undo it.
    #[test]
    fn a_click_on_the_gather_picks_the_nearest_trace() {
        let mut h = harness(shared_with_picks());
        h.run();
        let rx: Vec<f64> = picks(&h.state().1).unwrap().shots[0]
            .picks
            .iter()
            .map(|q| q.receiver_x_m)
            .collect();
        let tr = h.state().0.gather_transform.expect("the gather was drawn");
        // Slightly off trace 7's axis, at 9 ms.
        let pos = tr.position_from_point(&egui_plot::PlotPoint::new(rx[7] + 0.1, -9.0));
        let ms_per_px = f64::from(
            (tr.value_from_position(pos + egui::vec2(0.0, 1.0)).y - tr.value_from_position(pos).y)
                .abs() as f32,
        );
        h.hover_at(pos);
        h.run();
        for pressed in [true, false] {
            h.event(egui::Event::PointerButton {
                pos,
                button: egui::PointerButton::Primary,
                pressed,
                modifiers: egui::Modifiers::NONE,
            });
        }
        h.run();
        let t = picks(&h.state().1).unwrap().shots[0].picks[7]
            .time_s
            .unwrap()
            * 1e3;
        assert!((t - 9.0).abs() <= ms_per_px.max(0.05), "{t} ms");
        assert_eq!(h.state().0.edit_trace, 7);
        h.get_by_label_contains("Pick set on trace 7 at");
        assert_eq!(nearest_trace(&[0.0, 2.0, 4.0], 2.9), Some(1));
        assert_eq!(nearest_trace(&[], 1.0), None);
        assert_eq!(nearest_trace(&[0.0], f64::NAN), None);
    }

    /// The panel's Run uses the project's `seismic_inversion_params` (λ 7, z-weight 0.5, two
    /// iterations here, none of them the defaults) and makes the model the run's
    /// `invert_seismic` step makes of the example's travel times.
    #[test]
    fn run_uses_the_projects_settings_and_makes_the_runs_model() {
        use crate::catalog::kit::held;
        use crate::runtime::step::DecidedBy;
        use crate::runtime::{StepStatus, invoke};
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/example");
        let mut project = crate::runtime::Project::load(&dir).expect("the example project reads");
        project.config.insert(
            keys::SEISMIC_INVERSION_PARAMS.into(),
            json!({"lambda": 7.0, "z_weight": 0.5, "max_iterations": 2}),
        );
        let mut ctx = project.context();
        let reg = crate::catalog::registry();
        for tool in ["load_seismic_traveltimes", "invert_seismic"] {
            assert_eq!(
                invoke(&mut ctx, &reg, tool, "", DecidedBy::Policy),
                StepStatus::Ok
            );
        }
        let tool_model = held::<SeismicModel>(&ctx, keys::SEISMIC_RESULTS)
            .expect("the tool's model")
            .clone();
        // The panel with the project and the run's travel times on the shelf.
        let shared = Shared {
            project: Some(project),
            ..Default::default()
        };
        let tt = ctx
            .product(keys::SEISMIC_TRAVELTIMES)
            .expect("travel times")
            .clone();
        shared.shelf.put(keys::SEISMIC_TRAVELTIMES, tt);
        let mut h = harness(shared);
        h.run();
        h.get_by_label("Run tomography").click();
        let t0 = std::time::Instant::now();
        loop {
            h.run();
            if h.state().0.job.is_none() && !h.state().0.status.contains("running") {
                break;
            }
            assert!(
                t0.elapsed().as_secs() < 1800,
                "the panel's tomography did not finish"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let m = model(&h.state().1).unwrap_or_else(|| panic!("{}", h.state().0.status));
        let (a, b) = (&m.inversion, &tool_model.inversion);
        assert_eq!(
            (a.lambda, a.params.z_weight, a.params.max_iterations),
            (7.0, 0.5, 2)
        );
        assert_eq!(a.params, b.params);
        // The same model: χ² and every cell's velocity to 1e-9 relative.
        assert!((a.chi2 - b.chi2).abs() <= 1e-9 * b.chi2);
        assert_eq!(a.velocity_m_per_s.len(), b.velocity_m_per_s.len());
        for (x, y) in a.velocity_m_per_s.iter().zip(&b.velocity_m_per_s) {
            assert!((x - y).abs() <= 1e-9 * y.abs(), "{x} against {y}");
        }
    }
}
