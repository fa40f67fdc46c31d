//! The Ground-penetrating radar (GPR) panel: the radargram (recorded or processed) drawn with
//! egui_plot as an image in plot coordinates — distance along the line on x, two-way time or
//! depth on y increasing downwards — the processing steps as parameters with units and
//! tooltips, a Run button that processes the line on a [`Job`] with the SAME function the
//! catalog tool `process_gpr_line` calls ([`crate::catalog::gpr::process`]), and the recipe.
//!
//! The velocity follows the catalog's rule: the project's `gpr_velocity_m_per_ns` /
//! `gpr_permittivity`, else the header's εr (said so), else a semblance analysis of a
//! CMP/WARR gather; without any the line stays in two-way time and the panel says why.

use std::sync::Arc;

use egui_plot::{Plot, PlotImage, PlotPoint};
use serde_json::{Value, json};

use super::method::{MethodSpec, MethodView};
use super::{Panel, Shared};
use crate::catalog::gpr::{
    self as cat, GprProcessed, UserVelocity, VerticalAxis, settings as gpr_settings,
};
use crate::catalog::kit::Held;
use crate::catalog::kit::keys;
use crate::methods::gpr::GprLine;
use crate::methods::gpr::bandpass::BandpassParams;
use crate::methods::gpr::filters::BackgroundWindow;
use crate::methods::gpr::process::{Domain, ProcessingParams, Step, TimeZeroMethod};
use crate::methods::gpr::timezero::TimeZeroParams;
use crate::studio::job::Job;

/// What this panel shows.
pub const SPEC: MethodSpec = crate::catalog::kit::methods::GPR;

/// Which radargram is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Showing {
    /// The line as recorded.
    #[default]
    Recorded,
    /// The processed line.
    Processed,
}

/// The Ground-penetrating radar (GPR) panel.
#[derive(Debug, Default)]
pub struct GprPanel {
    view: MethodView,
    /// The line the panel read itself (Load), else the run's `gpr_data`.
    line: Option<Arc<GprLine>>,
    /// The processing settings of the next panel run: the project's `gpr_params` until a
    /// person (or the chat) changes one, then the edited copy.
    pub params: ProcessingParams,
    /// Whether `params` holds edits (else it follows the project).
    params_edited: bool,
    /// The panel's own last processing, else the run's `gpr_results`.
    result: Option<Arc<GprProcessed>>,
    job: Option<Job<GprProcessed>>,
    error: Option<String>,
    showing: Showing,
    /// The uploaded radargram: (what it shows, texture).
    texture: Option<Texture>,
}

/// The uploaded radargram: (what it shows, texture, clip).
struct Texture(String, egui::TextureHandle, f64);

impl std::fmt::Debug for Texture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Texture({}, clip {})", self.0, self.2)
    }
}

/// A radargram ready to draw: the amplitudes (rows down, traces across) and their axes.
struct Gram<'a> {
    data: ndarray::ArrayView2<'a, f64>,
    positions_m: &'a [f64],
    trace_numbers: bool,
    vertical: VerticalAxis,
    key: String,
}

impl GprPanel {
    /// The line to process: the panel's own, else the run's product.
    fn current_line(&self, shared: &Shared) -> Option<Arc<GprLine>> {
        if let Some(l) = &self.line {
            return Some(l.clone());
        }
        let p = shared.shelf.get(keys::GPR_DATA)?;
        p.as_any()
            .downcast_ref::<Held<GprLine>>()
            .map(|h| Arc::new(h.value.clone()))
    }

    /// The processed line to show: the panel's own run, else the run's product.
    fn current_result(&self, shared: &Shared) -> Option<Arc<GprProcessed>> {
        if let Some(r) = &self.result {
            return Some(r.clone());
        }
        let p = shared.shelf.get(keys::GPR_RESULTS)?;
        p.as_any()
            .downcast_ref::<Held<GprProcessed>>()
            .map(|h| Arc::new(h.value.clone()))
    }

    /// Read the project's `gpr_file` with the catalog's reader.
    fn load(&mut self, shared: &Shared) -> Result<Value, String> {
        let project = shared
            .project
            .as_ref()
            .ok_or("no project is open: open one with File → Open project")?;
        let path = project.context().input_path(cat::DATA_ROLE).ok_or(
            "the project names no gpr_file input: add the radar file (.dzt, .dt1, .rd3/.rd7, .sgy)",
        )?;
        let line = cat::read(&path).map_err(|e| e.to_string())?;
        let out = json!({
            "file": path.display().to_string(),
            "n_traces": line.n_traces,
            "n_samples": line.n_samples,
            "time_window_ns": line.time_window_ns,
        });
        self.line = Some(Arc::new(line));
        self.showing = Showing::Recorded;
        self.error = None;
        Ok(out)
    }

    /// Start processing on a job (the catalog's `process`, the project's velocity settings).
    fn start(&mut self, ctx: &egui::Context, shared: &Shared) {
        let Some(line) = self.current_line(shared) else {
            self.error = Some("no GPR line is loaded: press Load the line first".into());
            return;
        };
        let config = shared
            .project
            .as_ref()
            .map(|p| p.config.clone())
            .unwrap_or_default();
        let user = match UserVelocity::from_config(&config) {
            Ok(u) => u,
            Err(e) => {
                self.error = Some(e);
                return;
            }
        };
        let params = self.params.clone();
        self.error = None;
        self.job = Some(Job::spawn(ctx, "Processing the GPR line", move |p, c| {
            cat::process(&line, &params, &user, None, p, c)
        }));
    }

    fn poll(&mut self) {
        if let Some(job) = &mut self.job
            && job.poll()
        {
            match job.result.take() {
                Some(Ok(r)) => {
                    self.result = Some(Arc::new(r));
                    self.showing = Showing::Processed;
                }
                Some(Err(e)) => self.error = Some(e),
                None => {}
            }
            self.job = None;
        }
    }

    fn running(&self) -> bool {
        self.job.is_some()
    }

    /// Set `gpr_params` from JSON (unknown keys are refused with the valid ones).
    fn set_params(&mut self, args: &Value) -> Result<Value, String> {
        let p: ProcessingParams = serde_json::from_value(args.clone()).map_err(|e| {
            format!(
                "gpr_params: {e}; valid keys are time_zero, dewow_window_samples, bandpass, background, tpow_power, agc_window_samples, migrate"
            )
        })?;
        self.params = p;
        self.params_edited = true;
        serde_json::to_value(&self.params).map_err(|e| e.to_string())
    }

    /// Follow the project's `gpr_params` until the panel's own are edited.
    fn sync_params(&mut self, shared: &Shared) {
        if self.params_edited {
            return;
        }
        if let Some(Ok(p)) = shared
            .project
            .as_ref()
            .map(|p| gpr_settings::params(&p.context()))
        {
            self.params = p;
        }
    }
}

/// A step's three states in words.
fn mode<T>(s: &Step<T>) -> &'static str {
    match s {
        Step::Default => "default",
        Step::Off => "off",
        Step::Set(_) => "set",
    }
}

/// One processing step: its name (with a tooltip), default / off / set, and when set, the
/// value's editor.
fn step_row<T: Clone>(
    ui: &mut egui::Ui,
    name: &str,
    tip: &str,
    step: &mut Step<T>,
    first_value: T,
    edit: impl FnOnce(&mut egui::Ui, &mut T),
) {
    ui.horizontal(|ui| {
        let mut m = mode(step);
        egui::ComboBox::new(("gpr_step", name), name)
            .selected_text(m)
            .width(80.0)
            .show_ui(ui, |ui| {
                for option in ["default", "off", "set"] {
                    ui.selectable_value(&mut m, option, option);
                }
            })
            .response
            .on_hover_text(tip);
        if m != mode(step) {
            *step = match m {
                "off" => Step::Off,
                "set" => Step::Set(first_value),
                _ => Step::Default,
            };
        }
        if let Step::Set(v) = step {
            edit(ui, v);
        }
    });
}

/// A labelled number editor (the label names it for screen readers and tests).
fn number<N: egui::emath::Numeric>(
    ui: &mut egui::Ui,
    label: &str,
    value: &mut N,
    range: std::ops::RangeInclusive<N>,
    speed: f64,
) {
    let l = ui.label(label);
    ui.add(egui::DragValue::new(value).range(range).speed(speed))
        .labelled_by(l.id);
}

fn params_ui(ui: &mut egui::Ui, p: &mut ProcessingParams) {
    let tz_tip = "Where two-way time zero is put. Default: the header's time zero when it states one, else the first break (5 % of each trace's peak). 'set' picks the direct wave's peak instead: with a zero-phase wavelet, reflections are then read at their peaks.";
    ui.horizontal(|ui| {
        let current = match &p.time_zero {
            Step::Default => "default",
            Step::Off => "off",
            Step::Set(TimeZeroMethod::FirstBreak(_)) => "first break",
            Step::Set(TimeZeroMethod::DirectWavePeak(_)) => "direct-wave peak",
            Step::Set(TimeZeroMethod::Header) => "header",
            Step::Set(TimeZeroMethod::Sample(_)) => "sample",
        };
        let mut m = current;
        egui::ComboBox::new("gpr_time_zero", "Time zero")
            .selected_text(m)
            .width(120.0)
            .show_ui(ui, |ui| {
                for o in [
                    "default",
                    "off",
                    "first break",
                    "direct-wave peak",
                    "header",
                ] {
                    ui.selectable_value(&mut m, o, o);
                }
            })
            .response
            .on_hover_text(tz_tip);
        if m != current {
            p.time_zero = match m {
                "off" => Step::Off,
                "first break" => Step::Set(TimeZeroMethod::FirstBreak(TimeZeroParams::default())),
                "direct-wave peak" => {
                    Step::Set(TimeZeroMethod::DirectWavePeak(TimeZeroParams::default()))
                }
                "header" => Step::Set(TimeZeroMethod::Header),
                _ => Step::Default,
            };
        }
    });
    step_row(
        ui,
        "Dewow",
        "Subtract a running mean of each trace (removes the receiver's low-frequency wow). Default window: one period of the antenna's nominal frequency in samples.",
        &mut p.dewow_window_samples,
        9usize,
        |ui, v| number(ui, "Dewow window (samples)", v, 3..=10_000, 1.0),
    );
    step_row(
        ui,
        "Band-pass",
        "Zero-phase Butterworth band-pass (forward and backward). Default: order 1 from half to twice the antenna's nominal frequency.",
        &mut p.bandpass,
        BandpassParams {
            low_mhz: 100.0,
            high_mhz: 800.0,
            order: 1,
        },
        |ui, b| {
            number(ui, "Low corner (MHz)", &mut b.low_mhz, 1.0..=10_000.0, 5.0);
            number(
                ui,
                "High corner (MHz)",
                &mut b.high_mhz,
                1.0..=10_000.0,
                5.0,
            );
            number(ui, "Order", &mut b.order, 1..=8, 0.1);
        },
    );
    step_row(
        ui,
        "Background removal",
        "Subtract the mean trace. Off by default: it removes every flat reflector, a water table included. 0 traces = the whole line's mean.",
        &mut p.background,
        BackgroundWindow::WholeLine,
        |ui, b| {
            let mut n = match b {
                BackgroundWindow::WholeLine => 0usize,
                BackgroundWindow::Running { traces } => *traces,
            };
            number(
                ui,
                "Background window (traces, 0 = whole line)",
                &mut n,
                0..=100_000,
                1.0,
            );
            *b = if n == 0 {
                BackgroundWindow::WholeLine
            } else {
                BackgroundWindow::Running { traces: n }
            };
        },
    );
    step_row(
        ui,
        "t-power gain",
        "Multiply each sample by t^p, t in ns after time zero. Off by default.",
        &mut p.tpow_power,
        1.0f64,
        |ui, v| number(ui, "Power p (dimensionless)", v, 0.0..=4.0, 0.05),
    );
    step_row(
        ui,
        "AGC",
        "Automatic gain control: divide by the running RMS over a window. Default window: three periods of the antenna's nominal frequency.",
        &mut p.agc_window_samples,
        30usize,
        |ui, v| number(ui, "AGC window (samples)", v, 3..=10_000, 1.0),
    );
    ui.checkbox(&mut p.migrate, "Stolt migration (needs a velocity)")
        .on_hover_text("Stolt f-k migration collapses diffraction hyperbolae; it runs only when a velocity was given.");
}

/// Grey levels of a radargram, symmetric about zero and clipped at the 99th percentile of
/// |amplitude| (as the catalog's PNG); NaN is transparent. Every `stride`-th trace is kept
/// so the texture stays under 4096 pixels wide.
fn grey_image(data: ndarray::ArrayView2<f64>) -> (egui::ColorImage, f64) {
    let (rows, cols) = data.dim();
    let stride = cols.div_ceil(4096).max(1);
    let w = cols.div_ceil(stride);
    let mut m: Vec<f64> = data
        .iter()
        .filter(|v| v.is_finite())
        .map(|v| v.abs())
        .collect();
    let clip = if m.is_empty() {
        1.0
    } else {
        let k = ((m.len() - 1) as f64 * 0.99) as usize;
        let (_, v, _) = m.select_nth_unstable_by(k, f64::total_cmp);
        if *v > 0.0 { *v } else { 1.0 }
    };
    let mut pixels = Vec::with_capacity(w * rows);
    for i in 0..rows {
        for j in (0..cols).step_by(stride) {
            let v = data[[i, j]];
            pixels.push(if v.is_finite() {
                let g = (127.5 * (1.0 - (v / clip).clamp(-1.0, 1.0))).round() as u8;
                egui::Color32::from_gray(g)
            } else {
                egui::Color32::TRANSPARENT
            });
        }
    }
    (
        egui::ColorImage {
            size: [w, rows],
            source_size: egui::vec2(w as f32, rows as f32),
            pixels,
        },
        clip,
    )
}

impl GprPanel {
    fn gram<'a>(
        &self,
        line: Option<&'a GprLine>,
        result: Option<&'a GprProcessed>,
    ) -> Option<Gram<'a>> {
        match (self.showing, result, line) {
            (Showing::Processed, Some(r), _) => {
                let p = &r.processed;
                Some(Gram {
                    data: p.data.view(),
                    positions_m: &p.positions_m,
                    trace_numbers: line.is_some_and(|l| l.positions_guessed),
                    vertical: VerticalAxis {
                        domain: p.domain,
                        first: p.vertical_first,
                        step: p.vertical_step,
                    },
                    // Stable across frames, new per run (the recipe holds each step's time).
                    key: format!(
                        "processed:{}:{}",
                        r.source_file.display(),
                        serde_json::to_string(&p.recipe.steps).unwrap_or_default()
                    ),
                })
            }
            (_, _, Some(l)) => Some(Gram {
                data: l.data.view(),
                positions_m: &l.positions_m,
                trace_numbers: l.positions_guessed,
                vertical: VerticalAxis {
                    domain: Domain::TwoWayTime,
                    first: -l.time_zero_sample * l.sample_interval_ns,
                    step: l.sample_interval_ns,
                },
                key: format!(
                    "recorded:{}:{}x{}",
                    l.file.display(),
                    l.n_traces,
                    l.n_samples
                ),
            }),
            _ => None,
        }
    }

    fn radargram_ui(&mut self, ui: &mut egui::Ui, g: &Gram) {
        let (rows, cols) = g.data.dim();
        if rows == 0 || cols == 0 {
            ui.label("The line has no samples to draw.");
            return;
        }
        if self.texture.as_ref().is_none_or(|t| t.0 != g.key) {
            let (img, clip) = grey_image(g.data);
            let tex = ui
                .ctx()
                .load_texture("gpr_radargram", img, egui::TextureOptions::NEAREST);
            self.texture = Some(Texture(g.key.clone(), tex, clip));
        }
        let Some(Texture(_, tex, clip)) = &self.texture else {
            return;
        };
        let (id, clip) = (tex.id(), *clip);
        let x0 = g.positions_m.first().copied().unwrap_or(0.0);
        let x1 = g.positions_m.last().copied().unwrap_or(cols as f64 - 1.0);
        let dx = if cols > 1 {
            (x1 - x0) / (cols - 1) as f64
        } else {
            1.0
        };
        let h = g.vertical.step.abs().max(f64::MIN_POSITIVE);
        let span = rows as f64 * h;
        let top = g.vertical.first - h / 2.0;
        let centre_y = match g.vertical.domain {
            Domain::Elevation => g.vertical.first + h / 2.0 - span / 2.0,
            _ => top + span / 2.0,
        };
        let width = (x1 - x0).abs() + dx.abs();
        let x_label = if g.trace_numbers {
            "Trace number"
        } else {
            "Distance along the line (m)"
        };
        ui.label(format!(
            "Grey scale: amplitude, black positive, white negative, clipped at ±{}",
            crate::catalog::kit::format::num(clip)
        ));
        Plot::new("gpr_radargram_plot")
            .height(360.0)
            .invert_y(g.vertical.domain != Domain::Elevation)
            .x_axis_label(x_label)
            .y_axis_label(g.vertical.label())
            .show(ui, |pui| {
                pui.image(PlotImage::new(
                    "radargram",
                    id,
                    PlotPoint::new((x0 + x1) / 2.0, centre_y),
                    egui::vec2(width as f32, span as f32),
                ));
            });
    }
}

fn recipe_ui(ui: &mut egui::Ui, r: &GprProcessed) {
    ui.label(format!("Velocity: {}", r.velocity_sentence));
    if let Some(why) = &r.processed.why_two_way_time {
        ui.label(format!("Why two-way time: {why}"));
    }
    ui.label("Recipe (in order):");
    egui::Grid::new("gpr_recipe")
        .striped(true)
        .num_columns(5)
        .show(ui, |ui| {
            for h in ["#", "Step", "Applied", "Chosen by", "What it did"] {
                ui.strong(h);
            }
            ui.end_row();
            for (i, s) in r.processed.recipe.steps.iter().enumerate() {
                ui.label((i + 1).to_string());
                ui.label(s.step.replace('_', " "));
                ui.label(if s.applied { "yes" } else { "no" });
                ui.label(&s.chosen_by);
                ui.label(&s.detail);
                ui.end_row();
            }
        });
    for n in &r.notes {
        ui.small(n);
    }
}

impl Panel for GprPanel {
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
        self.poll();
        self.sync_params(shared);
        egui::ScrollArea::vertical()
            .id_salt("gpr_panel")
            .show(ui, |ui| {
                self.view.ui(ui, &SPEC, shared);
                if MethodView::inputs(&SPEC, shared).is_empty() && self.current_line(shared).is_none()
                {
                    return;
                }
                ui.separator();
                ui.horizontal(|ui| {
                    if ui.button("Load the line").clicked()
                        && let Err(e) = self.load(shared)
                    {
                        self.error = Some(e);
                    }
                    let can_run = !self.running() && self.current_line(shared).is_some();
                    if ui
                        .add_enabled(can_run, egui::Button::new("Run processing"))
                        .on_hover_text("Process the line with these settings on a background job (the same function as the process_gpr_line step).")
                        .clicked()
                    {
                        let ctx = ui.ctx().clone();
                        self.start(&ctx, shared);
                    }
                });
                if let Some(job) = &mut self.job {
                    job.ui(ui);
                }
                if let Some(e) = &self.error {
                    ui.colored_label(egui::Color32::from_rgb(190, 60, 40), e);
                }
                egui::CollapsingHeader::new("Processing settings (gpr_params)")
                    .default_open(true)
                    .show(ui, |ui| {
                        let before = self.params.clone();
                        params_ui(ui, &mut self.params);
                        self.params_edited |= self.params != before;
                    });
                let line = self.current_line(shared);
                let result = self.current_result(shared);
                match &line {
                    Some(l) => {
                        ui.label(format!(
                            "Line: {} traces × {} samples, {} ns window",
                            l.n_traces, l.n_samples, l.time_window_ns
                        ));
                    }
                    None => {
                        ui.label("No line loaded yet: press Load the line, or run the load_gpr_line step.");
                    }
                }
                ui.horizontal(|ui| {
                    ui.selectable_value(&mut self.showing, Showing::Recorded, "Show as recorded");
                    ui.add_enabled_ui(result.is_some(), |ui| {
                        ui.selectable_value(&mut self.showing, Showing::Processed, "Show processed");
                    });
                });
                if let Some(g) = self.gram(line.as_deref(), result.as_deref()) {
                    self.radargram_ui(ui, &g);
                }
                if let Some(r) = &result {
                    ui.separator();
                    recipe_ui(ui, r);
                }
            });
    }

    fn describe(&self, shared: &Shared) -> Value {
        let mut d = MethodView::describe(&SPEC, shared);
        let line = self.current_line(shared);
        let result = self.current_result(shared);
        d["state"] = json!({
            "line": line.as_ref().map(|l| json!({
                "file": l.file.display().to_string(),
                "n_traces": l.n_traces,
                "n_samples": l.n_samples,
                "time_window_ns": l.time_window_ns,
                "header_permittivity": l.header_permittivity,
            })),
            keys::GPR_PARAMS: serde_json::to_value(&self.params).unwrap_or(Value::Null),
            "running": self.running(),
            "error": self.error,
            "showing": match self.showing { Showing::Recorded => "recorded", Showing::Processed => "processed" },
            "processed": result.as_ref().map(|r| json!({
                "domain": r.processed.domain,
                "vertical_step": r.processed.vertical_step,
                "vertical_unit": r.processed.vertical_unit,
                "velocity": r.velocity_sentence,
                "why_two_way_time": r.processed.why_two_way_time,
                "steps": r.processed.recipe.steps.iter().map(|s| json!({
                    "step": s.step, "applied": s.applied, "chosen_by": s.chosen_by, "detail": s.detail
                })).collect::<Vec<_>>(),
            })),
        });
        if let Some(a) = d["actions"].as_array_mut() {
            a.push(
                json!({"name": "load_line", "args": {}, "desc": "Read the project's gpr_file."}),
            );
            a.push(json!({"name": "set_params", "args": {"time_zero": "default | off | {\"set\": {\"direct_wave_peak\": {}}} | ...", "dewow_window_samples": "default | off | {\"set\": n}", "bandpass": "default | off | {\"set\": {\"low_mhz\": f, \"high_mhz\": f, \"order\": n}}", "background": "default | off | {\"set\": \"whole_line\"} | {\"set\": {\"running\": {\"traces\": n}}}", "tpow_power": "default | off | {\"set\": p}", "agc_window_samples": "default | off | {\"set\": n}", "migrate": "bool"}, "desc": "Replace the processing settings (absent keys take their defaults; unknown keys are refused)."}));
            a.push(json!({"name": "run", "args": {}, "desc": "Process the line with the settings on a background job; the velocity comes from the project settings, else the header, else a gather's semblance."}));
            a.push(json!({"name": "show", "args": {"view": "recorded | processed"}, "desc": "Which radargram to draw."}));
        }
        d
    }

    fn apply(
        &mut self,
        action: &str,
        args: &Value,
        shared: &mut Shared,
        window: &egui::Context,
    ) -> Result<Value, String> {
        self.sync_params(shared);
        match action {
            "load_line" => self.load(shared),
            "set_params" => self.set_params(args),
            "run" => {
                if self.running() {
                    return Err("a processing job is already running".into());
                }
                if self.current_line(shared).is_none() {
                    self.load(shared)?;
                }
                self.start(window, shared);
                if let Some(e) = &self.error {
                    return Err(e.clone());
                }
                Ok(
                    json!({"started": true, "gpr_params": serde_json::to_value(&self.params).unwrap_or(Value::Null)}),
                )
            }
            "show" => match args.get("view").and_then(Value::as_str) {
                Some("recorded") => {
                    self.showing = Showing::Recorded;
                    Ok(json!({"showing": "recorded"}))
                }
                Some("processed") if self.current_result(shared).is_some() => {
                    self.showing = Showing::Processed;
                    Ok(json!({"showing": "processed"}))
                }
                Some("processed") => {
                    Err("the line has not been processed yet: run it first".into())
                }
                _ => Err("show needs \"view\": \"recorded\" or \"processed\"".into()),
            },
            "inspect_product" => MethodView::apply(&SPEC, action, args, shared),
            other => Err(format!(
                "no action '{other}' on the GPR panel; its actions are: load_line, set_params, run, show, inspect_product"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use egui_kittest::Harness;
    use egui_kittest::kittest::Queryable;

    use super::*;
    use crate::runtime::Project;

    type State = (GprPanel, Shared);

    fn harness(shared: Shared) -> Harness<'static, State> {
        Harness::builder()
            .with_size(egui::vec2(1200.0, 1600.0))
            .with_context_setup(crate::studio::setup_fonts)
            .build_ui_state(
                |ui, (panel, shared): &mut State| panel.ui(ui, shared),
                (GprPanel::default(), shared),
            )
    }

    /// The example project's radar line with the truth's velocity as the user's setting.
    fn example_project(dir: &std::path::Path) -> Shared {
        let truth = crate::example::Truth::default();
        let roles = crate::example::gpr::write(&truth, dir).unwrap();
        let inputs: serde_json::Map<String, Value> = roles
            .into_iter()
            .map(|(r, p)| (r, Value::from(p.display().to_string())))
            .collect();
        let project = json!({
            "goal": "Where is the water table?",
            "inputs": inputs,
            "config": { keys::GPR_VELOCITY: truth.gpr_velocity_m_per_ns }
        });
        std::fs::write(dir.join("project.json"), project.to_string()).unwrap();
        Shared {
            project: Some(Project::load(dir).unwrap()),
            ..Shared::default()
        }
    }

    /// Nothing loaded: the panel says what to do, and Run is refused with the reason.
    #[test]
    fn an_empty_project_says_what_to_do() {
        let mut h = harness(Shared::default());
        h.run();
        h.get_by_label_contains("No Ground-penetrating radar (GPR) data in this project");
        assert!(h.query_by_label("Run processing").is_none());
        let window = h.ctx.clone();
        let (panel, shared) = h.state_mut();
        let e = panel.apply("run", &json!({}), shared, &window).unwrap_err();
        assert!(e.contains("no project is open"), "{e}");
        let e = panel.apply("fly", &json!({}), shared, &window).unwrap_err();
        assert!(e.contains("load_line, set_params, run, show"), "{e}");
    }

    /// Load the example line by its button (481 traces × 256 samples, as written), set the
    /// direct-wave-peak time zero through `apply`, press Run: the job runs the catalog's
    /// `process` — the panel's line equals a direct call sample for sample — the recipe and
    /// the velocity's origin are shown, and the water table (median over traces away from
    /// the diffractor of the strongest sample at 3–5 m) is 4 m deep within one row
    /// (v·dt/2 = 0.12 · 100/256 / 2 = 0.0234 m).
    #[test]
    fn load_run_and_show_the_recipe() {
        let dir = tempfile::tempdir().unwrap();
        let mut h = harness(example_project(dir.path()));
        h.run();
        h.get_by_label_contains("gpr_file: ");
        h.get_by_label("Load the line").click();
        h.run();
        h.get_by_label_contains("Line: 481 traces × 256 samples, 100 ns window");
        h.get_by_label_contains("Grey scale: amplitude");
        {
            let (panel, _) = h.state_mut();
            let e = panel.set_params(&json!({ "dewow": 3 })).unwrap_err();
            assert!(e.contains("valid keys are time_zero"), "{e}");
            panel
                .set_params(&json!({ "time_zero": { "set": { "direct_wave_peak": {} } } }))
                .unwrap();
        }
        h.run();
        h.get_by_label("Run processing").click();
        let t0 = Instant::now();
        loop {
            h.step();
            let p = &h.state().0;
            if p.job.is_none() && (p.result.is_some() || p.error.is_some()) {
                break;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(60),
                "processing timed out"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        h.run();
        let (panel, shared) = h.state();
        assert_eq!(panel.error, None);
        h.get_by_label_contains(
            "Velocity: 0.1200 m/ns from the project setting gpr_velocity_m_per_ns",
        );
        h.get_by_label("Recipe (in order):");
        h.get_by_label("Show processed");
        let d = panel.describe(shared);
        assert_eq!(d["state"]["showing"], "processed");
        assert_eq!(d["state"]["processed"]["domain"], "depth");
        let row = 0.12 * (100.0 / 256.0) / 2.0;
        let step = d["state"]["processed"]["vertical_step"].as_f64().unwrap();
        assert!((step - row).abs() < 1e-12, "{step}");

        let r = panel.result.clone().unwrap();
        let line = panel.line.clone().unwrap();
        let user = UserVelocity {
            velocity_m_per_ns: Some(0.12),
            relative_permittivity: None,
        };
        let direct = cat::process(
            &line,
            &panel.params,
            &user,
            None,
            &mut |_, _| {},
            &std::sync::atomic::AtomicBool::new(false),
        )
        .unwrap();
        assert_eq!(direct.processed.data, r.processed.data);

        let p = &r.processed;
        let axis = p.vertical_axis();
        let mut picks: Vec<f64> = (0..p.n_traces)
            .filter(|j| (p.positions_m[*j] - 18.0).abs() > 6.0)
            .map(|j| {
                let col = p.data.column(j);
                let i = (0..p.n_samples)
                    .filter(|i| (3.0..5.0).contains(&axis[*i]))
                    .max_by(|a, b| col[*a].abs().total_cmp(&col[*b].abs()))
                    .unwrap();
                axis[i]
            })
            .collect();
        picks.sort_by(f64::total_cmp);
        let depth = picks[picks.len() / 2];
        assert!((depth - 4.0).abs() <= row, "water table at {depth} m");

        // Back to the recorded line through the chat's action.
        let window = h.ctx.clone();
        let (panel, shared) = h.state_mut();
        assert_eq!(
            panel
                .apply("show", &json!({"view": "recorded"}), shared, &window)
                .unwrap(),
            json!({"showing": "recorded"})
        );
    }
}
