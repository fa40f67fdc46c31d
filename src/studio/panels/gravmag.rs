//! The Gravity and magnetics panel: the method's inputs, products and figures (the shared
//! [`MethodView`]) beside what a scientist looks at — the station map, the settings of the
//! trend removal and the inversion with their units, a Run button that runs the SAME chain
//! as the `invert_gravmag` tool ([`crate::catalog::gravmag::run::invert`]) on a background
//! [`Job`] with progress and Cancel, the residual map, a profile between two points
//! ([`crate::methods::gravmag::grid::profile`]) and depth slices of the 3D model.
//!
//! The panel never guesses what a table measures: when the column names, the file name and
//! the request do not decide between gravity and magnetics it says so and asks for the
//! project setting `gravmag_kind`, like the loading tool.

use serde_json::{Value, json};

use super::method::{MethodSpec, MethodView};
use super::{Panel, Shared};
use crate::catalog::gravmag::run::{invert, load};
use crate::catalog::gravmag::{
    GravMagData, GravMagParams, GravMagResults, KIND_KEY, declared_kind, settings as gm_settings,
};
use crate::catalog::kit::Held;
use crate::catalog::kit::keys;
use crate::methods::gravmag::grid::{Grid2D, Profile, profile};
use crate::methods::gravmag::kind::{Family, KindInference};
use crate::methods::gravmag::pipeline::TableInversion;
use crate::methods::gravmag::stations::StationTable;
use crate::report::figures::Palette;
use crate::studio::job::Job;

/// What this panel shows.
pub const SPEC: MethodSpec = crate::catalog::kit::methods::GRAVMAG;

/// Points sampled along the profile.
const PROFILE_POINTS: usize = 101;
/// Colour classes of the map markers.
const COLOUR_CLASSES: usize = 12;

/// The Gravity and magnetics panel.
#[derive(Debug, Default)]
pub struct GravMagPanel {
    view: MethodView,
    /// The table the panel loaded (else the run's, from the shelf).
    table: Option<StationTable>,
    /// The inversion the panel ran (else the run's, from the shelf).
    result: Option<TableInversion>,
    /// Settings of the panel's Run (start: the project's `gravmag_params`).
    params: Option<GravMagParams>,
    /// Profile start and end (x, y), m; `None`: west–east through the map centre.
    profile_m: Option<[f64; 4]>,
    /// The model layer shown as a depth slice, counted from the top (0 = the top layer).
    slice_layer: usize,
    job: Option<Job<TableInversion>>,
    /// The last thing that went wrong, in words.
    error: Option<String>,
}

impl GravMagPanel {
    /// The table shown: the panel's own, else the one the run loaded.
    fn table(&self, shared: &Shared) -> Option<StationTable> {
        if let Some(t) = &self.table {
            return Some(t.clone());
        }
        let p = shared.shelf.get(keys::GRAVMAG_DATA)?;
        p.as_any()
            .downcast_ref::<Held<GravMagData>>()
            .map(|h| h.value.table.clone())
    }

    /// The inversion shown: the panel's own, else the one the run made.
    fn result(&self, shared: &Shared) -> Option<TableInversion> {
        if let Some(r) = &self.result {
            return Some(r.clone());
        }
        let p = shared.shelf.get(keys::GRAVMAG_RESULTS)?;
        p.as_any()
            .downcast_ref::<Held<GravMagResults>>()
            .map(|h| h.value.result.clone())
    }

    /// The settings: the panel's, else the project's `gravmag_params`, else the defaults.
    fn params(&self, shared: &Shared) -> Result<GravMagParams, String> {
        if let Some(p) = &self.params {
            return Ok(p.clone());
        }
        match &shared.project {
            Some(p) => gm_settings::params(&p.context()).map_err(|e| e.to_string()),
            None => Ok(GravMagParams::default()),
        }
    }

    /// Read the project's station table with the loader the tool uses.
    fn load_stations(&mut self, shared: &Shared) -> Result<String, String> {
        let project = shared
            .project
            .as_ref()
            .ok_or("no project is open: open one with File → Open project")?;
        let ctx = project.context();
        let path = ctx.input_path(SPEC.roles[0]).ok_or(
            "the project names no gravmag_file: add the station table with File → Add data files",
        )?;
        let declared = declared_kind(&ctx).map_err(|e| e.to_string())?;
        let table = load(&path, declared, Some(&ctx.goal)).map_err(|e| e.to_string())?;
        if let KindInference::Ambiguous { question, .. } = &table.kind {
            return Err(format!(
                "{question} The studio does not guess: set the project setting {KIND_KEY} to \"gravity\" or \"magnetic\" and load again."
            ));
        }
        let line = table_line(&table);
        self.table = Some(table);
        self.result = None;
        Ok(line)
    }

    /// Start the inversion of the shown table on a background job.
    fn start_run(&mut self, shared: &Shared, window: &egui::Context) -> Result<String, String> {
        if self.job.as_ref().is_some_and(|j| j.result.is_none()) {
            return Err("an inversion is already running; Cancel it first".into());
        }
        let table = self
            .table(shared)
            .ok_or("no stations loaded: press Load stations first")?;
        let params = self.params(shared)?;
        params.validate()?;
        let field = match &shared.project {
            Some(p) => gm_settings::field_params(&p.context())
                .map_err(|e| e.to_string())?
                .field()?,
            None => None,
        };
        let n = table.n_stations;
        self.job = Some(Job::spawn(
            window,
            "Grav/Mag inversion",
            move |progress, cancel| invert(&table, &params, field, progress, cancel),
        ));
        self.error = None;
        Ok(format!("inversion of {n} stations started"))
    }

    /// Take in a finished job.
    fn poll(&mut self) {
        let Some(job) = &mut self.job else { return };
        if !job.poll() {
            return;
        }
        match job.result.take() {
            Some(Ok(r)) => {
                self.result = Some(r);
                self.error = None;
            }
            Some(Err(e)) => self.error = Some(e),
            None => {}
        }
        self.job = None;
    }

    /// The profile ends: the panel's, else west to east through the centre of `g`.
    fn profile_ends(&self, g: &Grid2D) -> [f64; 4] {
        self.profile_m.unwrap_or_else(|| {
            let yc = g.y0_m + 0.5 * (g.ny.saturating_sub(1)) as f64 * g.spacing_m;
            let x1 = g.x0_m + (g.nx.saturating_sub(1)) as f64 * g.spacing_m;
            [g.x0_m, yc, x1, yc]
        })
    }

    fn settings_ui(&mut self, ui: &mut egui::Ui, shared: &Shared, unit: &str) {
        let mut p = match self.params(shared) {
            Ok(p) => p,
            Err(e) => {
                ui.colored_label(egui::Color32::from_rgb(190, 60, 40), e);
                GravMagParams::default()
            }
        };
        let before = p.clone();
        egui::Grid::new("gravmag_settings")
            .num_columns(2)
            .show(ui, |ui| {
                let l = ui.label("Trend degree");
                ui.add(egui::DragValue::new(&mut p.trend_degree).range(0..=3))
                    .labelled_by(l.id)
                    .on_hover_text("Degree (0–3) of the polynomial regional trend fitted by least squares and removed before the inversion.");
                ui.end_row();
                let l = ui.label("Relative error (%)");
                let mut pct = p.relative_error * 100.0;
                ui.add(egui::DragValue::new(&mut pct).range(0.0..=50.0).speed(0.1))
                    .labelled_by(l.id)
                    .on_hover_text("Relative part of each datum's standard deviation, in percent of its value.");
                p.relative_error = pct / 100.0;
                ui.end_row();
                let l = ui.label(format!("Error floor ({unit})"));
                let floor = if unit == "nT" {
                    &mut p.error_floor_nt
                } else {
                    &mut p.error_floor_mgal
                };
                let mut v = floor.unwrap_or(0.0);
                ui.add(egui::DragValue::new(&mut v).range(0.0..=1.0e4).speed(0.001))
                    .labelled_by(l.id)
                    .on_hover_text("Absolute floor of the standard deviation; 0 = 1 % of the largest residual.");
                *floor = (v > 0.0).then_some(v);
                ui.end_row();
                let l = ui.label("Target chi-squared");
                ui.add(egui::DragValue::new(&mut p.target_chi2).range(0.1..=10.0).speed(0.01))
                    .labelled_by(l.id)
                    .on_hover_text("The chi-squared per datum the beta search aims for (1 = fit to the errors).");
                ui.end_row();
                let l = ui.label("Most exact solves");
                ui.add(egui::DragValue::new(&mut p.max_solves).range(1..=20))
                    .labelled_by(l.id)
                    .on_hover_text("At most this many exact solves in the beta search (the sensitivity is computed once).");
                ui.end_row();
            });
        if p != before || self.params.is_none() {
            self.params = Some(p);
        }
    }

    fn profile_ui(&mut self, ui: &mut egui::Ui, g: &Grid2D, unit: &str) {
        let mut e = self.profile_ends(g);
        let before = e;
        ui.horizontal(|ui| {
            for (k, name) in ["Start x (m)", "Start y (m)", "End x (m)", "End y (m)"]
                .iter()
                .enumerate()
            {
                let l = ui.label(*name);
                ui.add(egui::DragValue::new(&mut e[k]).speed(g.spacing_m * 0.5))
                    .labelled_by(l.id)
                    .on_hover_text("Profile end point in the map's local metric coordinates.");
            }
        });
        if e != before {
            self.profile_m = Some(e);
        }
        match profile(g, (e[0], e[1]), (e[2], e[3]), PROFILE_POINTS) {
            Ok(pr) => {
                let n_valid = pr.value.iter().filter(|v| v.is_finite()).count();
                ui.label(format!(
                    "Profile: {n_valid} of {PROFILE_POINTS} points inside the gridded area"
                ));
                profile_plot(ui, &pr, unit);
            }
            Err(err) => {
                ui.label(format!("No profile: {err}"));
            }
        }
    }
}

/// The one-line description of a table.
fn table_line(t: &StationTable) -> String {
    let what = match t.family() {
        Some(Family::Gravity) => "gravity",
        Some(Family::Magnetic) => "magnetics",
        None => "undecided kind",
    };
    let (lo, hi) = min_max(&t.value);
    format!(
        "{} stations, {what}, {} to {} {}",
        t.n_stations,
        short(lo),
        short(hi),
        t.value_unit.as_deref().unwrap_or("")
    )
}

fn short(v: f64) -> String {
    crate::runtime::product::short_num(v)
}

fn min_max(v: &[f64]) -> (f64, f64) {
    v.iter()
        .filter(|x| x.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        })
}

fn colour(t: f64) -> egui::Color32 {
    let c = Palette::Viridis.at(t);
    egui::Color32::from_rgb(c.0, c.1, c.2)
}

/// Points (x, y, value) drawn as markers in [`COLOUR_CLASSES`] colour classes over the value
/// range, with a colour bar below labelled `what (unit)`.
fn map_plot(
    ui: &mut egui::Ui,
    id: &str,
    points: &[(f64, f64, f64)],
    what: &str,
    unit: &str,
    square: bool,
) {
    let (lo, hi) = min_max(&points.iter().map(|p| p.2).collect::<Vec<_>>());
    let span = if hi > lo { hi - lo } else { 1.0 };
    let mut classes: Vec<Vec<[f64; 2]>> = vec![Vec::new(); COLOUR_CLASSES];
    for &(x, y, v) in points {
        if v.is_finite() {
            let k = (((v - lo) / span) * COLOUR_CLASSES as f64) as usize;
            classes[k.min(COLOUR_CLASSES - 1)].push([x, y]);
        }
    }
    egui_plot::Plot::new(id)
        .height(260.0)
        .data_aspect(1.0)
        .x_axis_label("x east (m)")
        .y_axis_label("y north (m)")
        .show(ui, |plot| {
            for (k, pts) in classes.into_iter().enumerate() {
                if pts.is_empty() {
                    continue;
                }
                let t = (k as f64 + 0.5) / COLOUR_CLASSES as f64;
                let mut m = egui_plot::Points::new(format!("{what} class {k}"), pts)
                    .color(colour(t))
                    .radius(if square { 3.0 } else { 2.5 })
                    .filled(true);
                if square {
                    m = m.shape(egui_plot::MarkerShape::Square);
                }
                plot.points(m);
            }
        });
    colour_bar(ui, lo, hi, &format!("{what} ({unit})"));
}

/// A horizontal colour bar from `lo` to `hi` with its label.
fn colour_bar(ui: &mut egui::Ui, lo: f64, hi: f64, label: &str) {
    super::section::horizontal_bar_ui(ui, (lo, hi), label, colour);
}

fn profile_plot(ui: &mut egui::Ui, pr: &Profile, unit: &str) {
    let pts: Vec<[f64; 2]> = pr
        .distance_m
        .iter()
        .zip(&pr.value)
        .filter(|(_, v)| v.is_finite())
        .map(|(d, v)| [*d, *v])
        .collect();
    egui_plot::Plot::new("gravmag_profile")
        .height(160.0)
        .x_axis_label("distance along the profile (m)")
        .y_axis_label(format!("residual ({unit})"))
        .show(ui, |plot| {
            plot.line(egui_plot::Line::new("residual", pts));
        });
}

fn grid_points(g: &Grid2D) -> Vec<(f64, f64, f64)> {
    let mut out = Vec::new();
    for iy in 0..g.ny {
        for ix in 0..g.nx {
            let k = iy * g.nx + ix;
            // `mask` is true where a node is supported by stations: draw those, skip the rest.
            if !g.mask.get(k).copied().unwrap_or(false) {
                continue;
            }
            if let Some(v) = g.values.get(k) {
                out.push((g.x(ix), g.y(iy), *v));
            }
        }
    }
    out
}

impl Panel for GravMagPanel {
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
        egui::ScrollArea::vertical()
            .id_salt("gravmag_panel")
            .show(ui, |ui| {
                self.view.ui(ui, &SPEC, shared);
                ui.separator();
                self.tools_ui(ui, shared);
            });
    }

    fn describe(&self, shared: &Shared) -> Value {
        let mut d = MethodView::describe(&SPEC, shared);
        let table = self.table(shared);
        let result = self.result(shared);
        let params = self.params(shared).ok();
        d["state"] = json!({
            "stations": table.as_ref().map(table_line),
            "settings": params,
            "running": self.job.as_ref().map(|j| json!({"fraction": j.fraction, "detail": j.detail})),
            "inversion": result.as_ref().map(|r| json!({
                "chi2": r.inversion.chi2,
                "solves": r.inversion.chi2_history.len(),
                "residual_range": r.residual_grid.range(),
            })),
            "profile_m": result.as_ref().map(|r| self.profile_ends(&r.residual_grid)),
            "model_slice_layer": self.slice_layer,
            "model_layers": result.as_ref().map(|r| r.inversion.mesh.nz()),
            "error": self.error,
        });
        d["actions"] = json!([
            {"name": "inspect_product", "args": {"key": "one of the product keys"}, "desc": "The numbers a product holds (read-only)."},
            {"name": "load_stations", "args": {}, "desc": "Read the project's gravmag_file (kind from gravmag_kind, column names, file name or the goal; never guessed)."},
            {"name": "set_params", "args": {"trend_degree": "0-3", "relative_error": "fraction (0.03 = 3 %)", "error_floor_mgal": "mGal", "error_floor_nt": "nT", "target_chi2": "number", "max_solves": "1-20", "…": "any other gravmag_params key"}, "desc": "Change the settings of the panel's inversion (merged into the current ones)."},
            {"name": "run_inversion", "args": {}, "desc": "Trend removal, maps and the 3D inversion of the loaded stations on a background job (the same chain as invert_gravmag)."},
            {"name": "cancel", "args": {}, "desc": "Stop a running inversion."},
            {"name": "set_profile", "args": {"x0_m": "m", "y0_m": "m", "x1_m": "m", "y1_m": "m"}, "desc": "The residual sampled along a line between two points; returns the samples."},
            {"name": "select_model_slice", "args": {"layer": "0-based layer from the top"}, "desc": "Show another depth slice of the 3D model; returns its depth and value range."}
        ]);
        d
    }

    fn apply(
        &mut self,
        action: &str,
        args: &Value,
        shared: &mut Shared,
        window: &egui::Context,
    ) -> Result<Value, String> {
        match action {
            "load_stations" => self.load_stations(shared).map(|line| json!({"loaded": line})),
            "set_params" => {
                let current = serde_json::to_value(self.params(shared)?).map_err(|e| e.to_string())?;
                let mut merged = current;
                let obj = args.as_object().ok_or("set_params needs an object of settings")?;
                for (k, v) in obj {
                    merged[k.as_str()] = v.clone();
                }
                let p: GravMagParams = serde_json::from_value(merged)
                    .map_err(|e| format!("gravmag_params: {e}"))?;
                p.validate()?;
                self.params = Some(p.clone());
                Ok(json!({"settings": p}))
            }
            "run_inversion" => self.start_run(shared, window).map(|s| json!({"started": s})),
            "cancel" => match &self.job {
                Some(j) => {
                    j.cancel();
                    Ok(json!({"cancelled": true}))
                }
                None => Ok(json!({"cancelled": false, "note": "nothing is running"})),
            },
            "set_profile" => {
                let get = |k: &str| {
                    args.get(k)
                        .and_then(Value::as_f64)
                        .ok_or(format!("set_profile needs \"{k}\" (m)"))
                };
                let e = [get("x0_m")?, get("y0_m")?, get("x1_m")?, get("y1_m")?];
                let r = self
                    .result(shared)
                    .ok_or("no residual map yet: run the inversion first")?;
                let pr = profile(&r.residual_grid, (e[0], e[1]), (e[2], e[3]), PROFILE_POINTS)
                    .map_err(|err| err.to_string())?;
                self.profile_m = Some(e);
                Ok(json!({"profile": pr, "unit": r.residual_grid.unit}))
            }
            "select_model_slice" => {
                let r = self
                    .result(shared)
                    .ok_or("no model yet: run the inversion first")?;
                let nz = r.inversion.mesh.nz();
                let k = args
                    .get("layer")
                    .and_then(Value::as_u64)
                    .map(|k| k as usize)
                    .filter(|k| *k < nz)
                    .ok_or(format!(
                        "select_model_slice needs \"layer\", 0 to {}",
                        nz.saturating_sub(1)
                    ))?;
                self.slice_layer = k;
                let extent = self
                    .table(shared)
                    .map(|t| station_extent(&t))
                    .unwrap_or((f64::MIN, f64::MAX, f64::MIN, f64::MAX));
                let (depth, pts) = model_slice(&r.inversion, k, extent);
                let (lo, hi) = min_max(&pts.iter().map(|p| p.2).collect::<Vec<_>>());
                Ok(json!({"layer": k, "depth_m": depth, "cells": pts.len(), "range": [lo, hi], "unit": r.inversion.model_unit}))
            }
            other => MethodView::apply(&SPEC, other, args, shared).map_err(|e| {
                if e.starts_with("no action") {
                    format!(
                        "no action '{other}' on the {} panel; its actions are: inspect_product, load_stations, set_params, run_inversion, cancel, set_profile, select_model_slice",
                        SPEC.title
                    )
                } else {
                    e
                }
            }),
        }
    }
}

impl GravMagPanel {
    fn tools_ui(&mut self, ui: &mut egui::Ui, shared: &mut Shared) {
        ui.strong("Stations, maps and inversion");
        if ui
            .button("Load stations")
            .on_hover_text("Read the project's station table with the same loader as the run.")
            .clicked()
        {
            match self.load_stations(shared) {
                Ok(_) => self.error = None,
                Err(e) => self.error = Some(e),
            }
        }
        if let Some(e) = &self.error {
            ui.colored_label(egui::Color32::from_rgb(190, 60, 40), e);
        }
        let Some(table) = self.table(shared) else {
            ui.label("No stations loaded: press Load stations (or run the project).");
            return;
        };
        let unit = table.value_unit.clone().unwrap_or_else(|| {
            match table.family() {
                Some(Family::Magnetic) => "nT",
                _ => "mGal",
            }
            .to_string()
        });
        ui.label(format!("Loaded: {}", table_line(&table)));
        let pts: Vec<(f64, f64, f64)> = table
            .x_m
            .iter()
            .zip(&table.y_m)
            .zip(&table.value)
            .map(|((x, y), v)| (*x, *y, *v))
            .collect();
        ui.label("Station map");
        map_plot(ui, "gravmag_stations", &pts, "observed", &unit, false);
        ui.separator();
        self.settings_ui(ui, shared, &unit);
        let running = self.job.as_ref().is_some_and(|j| j.result.is_none());
        if ui
            .add_enabled(!running, egui::Button::new("Run inversion"))
            .on_hover_text(
                "Trend removal, gridding and the 3D inversion (the chain of invert_gravmag).",
            )
            .clicked()
            && let Err(e) = self.start_run(shared, ui.ctx())
        {
            self.error = Some(e);
        }
        if let Some(job) = &mut self.job {
            job.ui(ui);
        }
        let Some(res) = self.result(shared) else {
            return;
        };
        let inv = &res.inversion;
        ui.label(format!(
            "Inversion: chi-squared {} after {} solves, {:?}",
            short(inv.chi2),
            inv.chi2_history.len(),
            inv.beta_search.outcome
        ));
        ui.label("Residual map");
        let grid = &res.residual_grid;
        map_plot(
            ui,
            "gravmag_residual",
            &grid_points(grid),
            "residual",
            &unit,
            true,
        );
        ui.separator();
        self.profile_ui(ui, grid, &unit);
        ui.separator();
        let nz = inv.mesh.nz();
        if nz == 0 {
            return;
        }
        self.slice_layer = self.slice_layer.min(nz - 1);
        ui.horizontal(|ui| {
            let l = ui.label("Model layer (from the top)");
            ui.add(egui::Slider::new(&mut self.slice_layer, 0..=nz - 1))
                .labelled_by(l.id)
                .on_hover_text("Which layer of the 3D model to show as a depth slice");
        });
        let extent = station_extent(&table);
        let (depth, pts) = model_slice(inv, self.slice_layer, extent);
        ui.label(format!(
            "Model slice at {depth:.1} m depth (layer {} of {nz}): {} cells under the stations",
            self.slice_layer + 1,
            pts.len()
        ));
        map_plot(
            ui,
            "gravmag_model_slice",
            &pts,
            "model",
            &inv.model_unit,
            true,
        );
    }
}

/// The stations' x and y range, m: (x0, x1, y0, y1).
fn station_extent(t: &StationTable) -> (f64, f64, f64, f64) {
    let (x0, x1) = min_max(&t.x_m);
    let (y0, y1) = min_max(&t.y_m);
    (x0, x1, y0, y1)
}

/// A horizontal slice of the 3D model: layer `from_top` (0 = the top layer) as the depth of
/// its centre below the mesh top and the (x, y, value) of its cells whose centres lie within
/// `extent` (x0, x1, y0, y1) — the core under the stations, without the padding cells.
fn model_slice(
    inv: &crate::methods::gravmag::inversion::GravMagInversion,
    from_top: usize,
    extent: (f64, f64, f64, f64),
) -> (f64, Vec<(f64, f64, f64)>) {
    let m = &inv.mesh;
    let nz = m.nz();
    if nz == 0 {
        return (f64::NAN, Vec::new());
    }
    let iz = nz - 1 - from_top.min(nz - 1);
    let depth = m.top_m() - 0.5 * (m.nodes_z_m[iz] + m.nodes_z_m[iz + 1]);
    let (x0, x1, y0, y1) = extent;
    let mut pts = Vec::new();
    for iy in 0..m.ny() {
        for ix in 0..m.nx() {
            let c = m.index(ix, iy, iz);
            let [x, y, _] = m.centre(c);
            if (x0..=x1).contains(&x)
                && (y0..=y1).contains(&y)
                && let Some(v) = inv.model.get(c)
            {
                pts.push((x, y, *v));
            }
        }
    }
    (depth, pts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_residual_map_draws_the_supported_nodes_with_a_finite_range() {
        // Issue 21: the map was empty with an "inf … −inf" colour bar because the supported
        // nodes (mask true) were the ones skipped. A 3 × 2 grid with one unsupported node: the
        // five supported ones are drawn and the range is their finite min and max.
        let g = Grid2D {
            x0_m: 0.0,
            y0_m: 0.0,
            spacing_m: 10.0,
            nx: 3,
            ny: 2,
            values: vec![1.0, 2.0, 3.0, 4.0, 5.0, 99.0],
            mask: vec![true, true, true, true, true, false],
            unit: None,
            notes: vec![],
        };
        let pts = grid_points(&g);
        assert_eq!(pts.len(), 5);
        let (lo, hi) = min_max(&pts.iter().map(|p| p.2).collect::<Vec<_>>());
        assert_eq!((lo, hi), (1.0, 5.0));
    }
    use egui_kittest::Harness;
    use egui_kittest::kittest::Queryable;
    use std::time::{Duration, Instant};

    type State = (GravMagPanel, Shared);

    fn harness(state: State) -> Harness<'static, State> {
        Harness::builder()
            .with_size(egui::vec2(900.0, 2400.0))
            .with_context_setup(crate::studio::setup_fonts)
            .build_ui_state(|ui, s: &mut State| s.0.ui(ui, &mut s.1), state)
    }

    /// A project folder with the example gravity survey.
    fn project(dir: &std::path::Path) -> Shared {
        let written =
            crate::example::gravmag::write(&crate::example::Truth::default(), dir).unwrap();
        let project = json!({
            "goal": "map the dense body",
            "inputs": { keys::GRAVMAG_FILE: written[0].1.display().to_string() },
            "config": { keys::GRAVMAG_PARAMS: { "error_floor_mgal": crate::example::gravmag::NOISE_MGAL } }
        });
        std::fs::write(dir.join("project.json"), project.to_string()).unwrap();
        Shared {
            project: Some(crate::runtime::Project::load(dir).unwrap()),
            ..Shared::default()
        }
    }

    #[test]
    fn with_nothing_loaded_the_panel_says_what_to_do() {
        let mut h = harness((GravMagPanel::default(), Shared::default()));
        h.run();
        h.get_by_label_contains("No Gravity and magnetics data in this project");
        h.get_by_label_contains("No stations loaded");
        // Loading without a project says why, on the screen.
        h.get_by_label("Load stations").click();
        h.run();
        h.get_by_label_contains("no project is open");
    }

    #[test]
    fn load_run_and_profile_the_example_through_the_buttons() {
        let dir = tempfile::tempdir().unwrap();
        let mut h = harness((GravMagPanel::default(), project(dir.path())));
        h.run();
        h.get_by_label("Load stations").click();
        h.run();
        // The example file: 400 stations of gravity in mGal (example::gravmag::N_SIDE²).
        h.get_by_label_contains("Loaded: 400 stations, gravity");
        h.get_by_label("Station map");
        h.get_by_label_contains("observed (mGal)");
        // The settings start from the project's (error floor 0.01 mGal).
        assert_eq!(
            h.state().0.params.as_ref().unwrap().error_floor_mgal,
            Some(crate::example::gravmag::NOISE_MGAL)
        );
        h.get_by_label("Run inversion").click();
        // The click is taken in on the next frame, which starts the job.
        h.step();
        assert!(
            h.state().0.job.is_some() || h.state().0.result.is_some(),
            "Run inversion started nothing: {:?}",
            h.state().0.error
        );
        let t0 = Instant::now();
        while h.state().0.job.is_some() {
            assert!(
                t0.elapsed() < Duration::from_secs(120),
                "the inversion did not end"
            );
            h.step();
            std::thread::sleep(Duration::from_millis(20));
        }
        h.run();
        assert!(h.state().0.error.is_none(), "{:?}", h.state().0.error);
        let r = h.state().0.result.clone().unwrap();
        // The β search aims at χ² 1 ± 0.2 (gravmag_params defaults).
        assert!(
            (r.inversion.chi2 - 1.0).abs() <= 0.2,
            "chi2 {}",
            r.inversion.chi2
        );
        h.get_by_label_contains("Inversion: chi-squared");
        h.get_by_label("Residual map");
        // The default profile runs west to east through the map centre; the body sits at the
        // centre of the station grid, so the profile's largest residual is within two grid
        // spacings of the middle of the line.
        h.get_by_label_contains("points inside the gridded area");
        let d = h.state().0.describe(&h.state().1);
        let ends = d["state"]["profile_m"].as_array().unwrap().clone();
        let (x0, x1) = (ends[0].as_f64().unwrap(), ends[2].as_f64().unwrap());
        let yc = ends[1].as_f64().unwrap();
        let args = json!({"x0_m": x0, "y0_m": yc, "x1_m": x1, "y1_m": yc});
        let window = h.ctx.clone();
        let state = h.state_mut();
        let out = state
            .0
            .apply("set_profile", &args, &mut state.1, &window)
            .unwrap();
        let pr: Profile = serde_json::from_value(out["profile"].clone()).unwrap();
        let (k, _) = pr
            .value
            .iter()
            .enumerate()
            .filter(|(_, v)| v.is_finite())
            .fold(
                (0, f64::MIN),
                |a, (k, v)| if *v > a.1 { (k, *v) } else { a },
            );
        let mid = 0.5 * (pr.distance_m[0] + pr.distance_m[PROFILE_POINTS - 1]);
        assert!(
            (pr.distance_m[k] - mid).abs() <= 2.0 * r.residual_grid.spacing_m,
            "peak at {} m, middle {mid} m",
            pr.distance_m[k]
        );
        // The model's depth slices: the top one is shown; the action picks the layer with
        // the strongest cell, and that cell lies near the centre of the station grid (the
        // example's body), within two core cells.
        h.get_by_label_contains("Model slice at");
        let nz = r.inversion.mesh.nz();
        let table = h.state().0.table(&h.state().1).unwrap();
        let ext = station_extent(&table);
        let (best, _) = (0..nz)
            .map(|k| {
                let (_, p) = model_slice(&r.inversion, k, ext);
                (k, p.iter().map(|q| q.2.abs()).fold(0.0, f64::max))
            })
            .fold((0, f64::MIN), |a, b| if b.1 > a.1 { b } else { a });
        let window = h.ctx.clone();
        let state = h.state_mut();
        let out = state
            .0
            .apply(
                "select_model_slice",
                &json!({"layer": best}),
                &mut state.1,
                &window,
            )
            .unwrap();
        assert_eq!(out["layer"], json!(best));
        assert!(out["depth_m"].as_f64().unwrap() > 0.0);
        let (_, pts) = model_slice(&r.inversion, best, ext);
        let peak = pts.iter().fold((0.0, 0.0, 0.0), |a, p| {
            if p.2.abs() > a.2 {
                (p.0, p.1, p.2.abs())
            } else {
                a
            }
        });
        let (cx, cy) = (0.5 * (ext.0 + ext.1), 0.5 * (ext.2 + ext.3));
        let core = r
            .inversion
            .mesh
            .widths_x()
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min);
        assert!(
            (peak.0 - cx).abs() <= 2.0 * core && (peak.1 - cy).abs() <= 2.0 * core,
            "strongest cell at ({}, {}), centre ({cx}, {cy}), core {core} m",
            peak.0,
            peak.1
        );
        h.run();
        h.get_by_label_contains(&format!("(layer {} of {nz})", best + 1));
        let window = h.ctx.clone();
        let state = h.state_mut();
        assert!(
            state
                .0
                .apply(
                    "select_model_slice",
                    &json!({"layer": nz}),
                    &mut state.1,
                    &window
                )
                .is_err()
        );
    }

    #[test]
    fn actions_refuse_wrong_settings_and_name_the_valid_actions() {
        let window = egui::Context::default();
        let dir = tempfile::tempdir().unwrap();
        let mut p = GravMagPanel::default();
        let mut shared = project(dir.path());
        let e = p
            .apply(
                "set_params",
                &json!({"trend_degree": 5}),
                &mut shared,
                &window,
            )
            .unwrap_err();
        assert!(e.contains("trend_degree must be 0, 1, 2 or 3"), "{e}");
        let e = p
            .apply(
                "set_params",
                &json!({"no_such_key": 1}),
                &mut shared,
                &window,
            )
            .unwrap_err();
        assert!(
            e.contains("unknown field") && e.contains("trend_degree"),
            "{e}"
        );
        let ok = p
            .apply(
                "set_params",
                &json!({"trend_degree": 2}),
                &mut shared,
                &window,
            )
            .unwrap();
        assert_eq!(ok["settings"]["trend_degree"], 2);
        // The project's floor survives the merge.
        assert_eq!(
            ok["settings"]["error_floor_mgal"],
            crate::example::gravmag::NOISE_MGAL
        );
        let e = p
            .apply("fly", &json!({}), &mut shared, &window)
            .unwrap_err();
        assert!(
            e.contains("run_inversion") && e.contains("set_profile"),
            "{e}"
        );
        let e = p
            .apply("run_inversion", &json!({}), &mut shared, &window)
            .unwrap_err();
        assert!(e.contains("Load stations"), "{e}");
        let loaded = p
            .apply("load_stations", &json!({}), &mut shared, &window)
            .unwrap();
        assert!(
            loaded["loaded"]
                .as_str()
                .unwrap()
                .starts_with("400 stations, gravity")
        );
        let d = p.describe(&shared);
        assert!(d["state"]["stations"].as_str().unwrap().contains("mGal"));
    }
}
