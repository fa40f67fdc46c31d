//! The Magnetotellurics (MT) panel: the sites of the project, Occam parameters with units and
//! tooltips, a Run button that inverts on a background [`Job`] (the same
//! [`crate::catalog::mt::run::invert_sites`] the `invert_mt` step calls, with the project's
//! `mt_params` until they are edited here), and per site the
//! apparent resistivity and phase against period (observed with errors, modelled), the
//! layered model with its depth of investigation and the dimensionality indicators.
//!
//! Log axes: egui_plot draws linear axes, so log10 values are plotted and the tick labels
//! show 10^value.

use std::path::PathBuf;

use egui_plot::{Legend, Line, LineStyle, Plot, PlotPoints, Points};
use serde_json::{Value, json};

use super::method::{MethodSpec, MethodView};
use super::{Panel, Shared};
use crate::catalog::kit::Held;
use crate::catalog::kit::keys;
use crate::catalog::mt::{
    MtInversions, MtParams, MtSites, model_steps, run as mt_run, settings as mt_settings,
};
use crate::methods::mt::{MtSiteInversion, OccamMode};
use crate::studio::job::Job;

/// What this panel shows.
pub const SPEC: MethodSpec = crate::catalog::kit::methods::MT;

/// The Magnetotellurics (MT) panel.
#[derive(Debug, Default)]
pub struct MtPanel {
    view: MethodView,
    /// The Occam settings of the next panel run: the project's `mt_params` until a person
    /// (or the chat) changes one, then the edited copy.
    params: MtParams,
    /// Whether `params` holds edits (else it follows the project).
    params_edited: bool,
    data: Option<MtSites>,
    job: Option<Job<MtInversions>>,
    own: Option<MtInversions>,
    site: usize,
    message: Option<String>,
}

const MODES: [(OccamMode, &str, &str); 4] = [
    (
        OccamMode::Det,
        "det",
        "The determinant impedance: rotation-invariant, the usual choice for 1D.",
    ),
    (OccamMode::Xy, "xy", "Zxy only (one polarisation)."),
    (OccamMode::Yx, "yx", "Zyx only (the other polarisation)."),
    (
        OccamMode::Both,
        "both",
        "Zxy and Zyx jointly: one model fitting both curves.",
    ),
];

impl MtPanel {
    /// The MT files of the project (mt_files, and the MT files found in mt_dir).
    fn project_files(shared: &Shared) -> Vec<PathBuf> {
        let Some(p) = &shared.project else {
            return Vec::new();
        };
        mt_run::site_files(&p.context()).unwrap_or_default()
    }

    /// Follow the project's `mt_params` until the panel's own are edited.
    fn sync_params(&mut self, shared: &Shared) {
        if self.params_edited {
            return;
        }
        if let Some(Ok(p)) = shared
            .project
            .as_ref()
            .map(|p| mt_settings::params(&p.context()))
        {
            self.params = p;
        }
    }

    /// Read the project's files (quick: no job).
    fn read(&mut self, shared: &Shared) -> Result<Value, String> {
        let files = Self::project_files(shared);
        if files.is_empty() {
            return Err(
                "no MT files in this project: add them under inputs.mt_files or mt_dir".into(),
            );
        }
        let data = mt_run::read_sites(&files);
        let out = json!({
            "sites": data.sites.iter().map(|s| &s.site).collect::<Vec<_>>(),
            "unreadable": data.unreadable,
        });
        self.message = Some(crate::catalog::mt::sites_summary(&data));
        self.data = Some(data);
        self.site = 0;
        Ok(out)
    }

    /// The sites to show: this panel's own run, else the run's `mt_results`.
    fn results(&self, shared: &Shared) -> Option<MtInversions> {
        if let Some(r) = &self.own {
            return Some(r.clone());
        }
        let p = shared.shelf.get(keys::MT_RESULTS)?;
        p.as_any()
            .downcast_ref::<Held<MtInversions>>()
            .map(|h| h.value.clone())
    }

    fn start_job(&mut self, ctx: &egui::Context) {
        let Some(data) = self.data.clone() else {
            self.message = Some("Read the MT files first.".into());
            return;
        };
        let params = self.params.clone();
        self.job = Some(Job::spawn(ctx, "Occam 1D", move |progress, cancel| {
            mt_run::invert_sites(&data, &params, progress, cancel)
        }));
    }

    fn poll(&mut self) {
        if let Some(job) = &mut self.job
            && job.poll()
        {
            match job.result.take() {
                Some(Ok(r)) => {
                    self.message = Some(format!(
                        "Inverted {} site(s): RMS {}.",
                        r.sites.len(),
                        r.sites
                            .iter()
                            .map(|s| format!("{} {:.2}", s.site, s.result.rms))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                    self.own = Some(r);
                }
                Some(Err(e)) => self.message = Some(format!("The inversion stopped: {e}")),
                None => {}
            }
            self.job = None;
        }
    }

    fn params_ui(&mut self, ui: &mut egui::Ui) {
        egui::Grid::new(keys::MT_PARAMS).num_columns(2).show(ui, |ui| {
            let l = ui
                .label("Curves")
                .on_hover_text("Which impedance the 1D model must fit.");
            let current = MODES
                .iter()
                .find(|m| m.0 == self.params.mode)
                .map_or("det", |m| m.1);
            egui::ComboBox::from_id_salt("mt_mode")
                .selected_text(current)
                .show_ui(ui, |ui| {
                    for (mode, name, tip) in MODES {
                        ui.selectable_value(&mut self.params.mode, mode, name)
                            .on_hover_text(tip);
                    }
                })
                .response
                .labelled_by(l.id);
            ui.end_row();
            let l = ui.label("Error floor (% of |Z|)").on_hover_text(
                "Smallest error allowed on |Z|; 5 % of |Z| is 10 % on apparent resistivity and 2.9 degrees of phase.",
            );
            ui.add(
                egui::DragValue::new(&mut self.params.error_floor_percent)
                    .range(0.0..=50.0)
                    .speed(0.1),
            )
            .labelled_by(l.id);
            ui.end_row();
            let l = ui.label("Layers (count)").on_hover_text(
                "Layers of the log-spaced mesh, the half-space included; thicknesses grow with depth down to the longest period's skin depth.",
            );
            ui.add(egui::DragValue::new(&mut self.params.n_layers).range(5..=100))
                .labelled_by(l.id);
            ui.end_row();
            let l = ui.label("Target RMS (dimensionless)").on_hover_text(
                "Occam first reaches this misfit, then makes the model as smooth as possible at it (Constable et al. 1987). 1 = data fitted to their errors.",
            );
            ui.add(
                egui::DragValue::new(&mut self.params.target_rms)
                    .range(0.1..=10.0)
                    .speed(0.05),
            )
            .labelled_by(l.id);
            ui.end_row();
            let l = ui.label("Iterations (max)").on_hover_text("The iteration cap.");
            ui.add(egui::DragValue::new(&mut self.params.max_iterations).range(1..=100))
                .labelled_by(l.id);
            ui.end_row();
            ui.label("Static shift").on_hover_text(
                "Estimate one multiplicative factor per apparent-resistivity curve (galvanic distortion); factors beyond 2.5 are flagged.",
            );
            ui.checkbox(&mut self.params.static_shift, "estimate per curve");
            ui.end_row();
        });
    }

    fn site_ui(ui: &mut egui::Ui, s: &MtSiteInversion) {
        let r = &s.result;
        ui.label(format!(
            "{}: RMS {:.2} (target {}), chi2 {:.2}, {} iterations, mu {:.3e}, {} data, {} layers{}.",
            s.site,
            r.rms,
            if r.reached_target { "reached" } else { "NOT reached" },
            r.chi2,
            r.iterations,
            r.lambda,
            r.n_data,
            r.n_cells,
            r.doi_m
                .map(|d| format!(", depth of investigation about {d:.0} m"))
                .unwrap_or_default()
        ));
        ui.label(format!(
            "Quality {:.0}/100 ({}).",
            s.evaluation.quality_score,
            if s.evaluation.quality.passed {
                "passes"
            } else {
                "does not pass"
            }
        ));
        match &s.dimensionality {
            Some(d) => {
                egui::Grid::new("mt_dims").num_columns(2).show(ui, |ui| {
                    ui.label("Dimensionality").on_hover_text(
                        "From the phase tensor (Caldwell et al. 2004) and Swift skew: whether a 1D model is defensible.",
                    );
                    ui.label(d.verdict.word());
                    ui.end_row();
                    ui.label("Median phase-tensor skew |beta| (deg)")
                        .on_hover_text("Below 3 degrees is usually taken as 1D or 2D.");
                    ui.label(format!("{:.1}", d.median_abs_beta_deg()));
                    ui.end_row();
                    ui.label("Median Swift skew (dimensionless)")
                        .on_hover_text("|Zxx + Zyy| / |Zxy - Zyx| (Swift 1967); small for 1D and 2D.");
                    ui.label(format!("{:.2}", d.median_swift_skew()));
                    ui.end_row();
                    ui.label("Strike (deg, +-90 ambiguity)");
                    ui.label(d.strike_deg.map_or("not determined".to_string(), |v| format!("{v:.0}")));
                    ui.end_row();
                });
                ui.small(d.sentence.clone());
            }
            None => {
                ui.label("Dimensionality: not assessable (apparent resistivity and phase only, no impedance tensor).");
            }
        }
        let colours = [
            egui::Color32::from_rgb(31, 119, 180),
            egui::Color32::from_rgb(214, 39, 40),
        ];
        let log_fmt = |m: egui_plot::GridMark, _: &std::ops::RangeInclusive<f64>| {
            crate::runtime::product::short_num(10f64.powf(m.value))
        };
        let p = &s.sounding.period_s;
        ui.columns(3, |cols| {
            Plot::new(("mt_rhoa", s.site.as_str()))
                .height(260.0)
                .legend(Legend::default())
                .x_axis_label("Period (s)")
                .y_axis_label("Apparent resistivity (ohm m)")
                .x_axis_formatter(log_fmt)
                .y_axis_formatter(log_fmt)
                .show(&mut cols[0], |pu| {
                    for (k, (obs, pred)) in s.sounding.curves.iter().zip(&r.predicted).enumerate() {
                        let c = colours[k % 2];
                        let pts: Vec<[f64; 2]> = finite_log(p, &obs.rhoa_ohm_m);
                        pu.points(
                            Points::new(
                                format!("{} observed", obs.mode.label()),
                                PlotPoints::from(pts),
                            )
                            .color(c)
                            .radius(3.0),
                        );
                        pu.line(
                            Line::new(
                                format!("{} model", obs.mode.label()),
                                PlotPoints::from(finite_log(p, &pred.rhoa_ohm_m)),
                            )
                            .color(c),
                        );
                    }
                });
            Plot::new(("mt_phase", s.site.as_str()))
                .height(260.0)
                .legend(Legend::default())
                .x_axis_label("Period (s)")
                .y_axis_label("Phase (deg)")
                .x_axis_formatter(log_fmt)
                .show(&mut cols[1], |pu| {
                    for (k, (obs, pred)) in s.sounding.curves.iter().zip(&r.predicted).enumerate() {
                        let c = colours[k % 2];
                        pu.points(
                            Points::new(
                                format!("{} observed phase", obs.mode.label()),
                                PlotPoints::from(log_x(p, &obs.phase_deg)),
                            )
                            .color(c)
                            .radius(3.0),
                        );
                        pu.line(
                            Line::new(
                                format!("{} model phase", obs.mode.label()),
                                PlotPoints::from(log_x(p, &pred.phase_deg)),
                            )
                            .color(c),
                        );
                    }
                });
            let (x, y) = model_steps(&r.model, r.doi_m);
            let pts: Vec<[f64; 2]> = x
                .iter()
                .zip(&y)
                .filter(|(r, _)| **r > 0.0)
                .map(|(r, d)| [r.log10(), -d])
                .collect();
            Plot::new(("mt_model", s.site.as_str()))
                .height(260.0)
                .legend(Legend::default())
                .x_axis_label("Resistivity (ohm m)")
                .y_axis_label("Depth (m)")
                .x_axis_formatter(log_fmt)
                .y_axis_formatter(|m, _| crate::runtime::product::short_num(-m.value))
                .show(&mut cols[2], |pu| {
                    pu.line(Line::new("Occam model", PlotPoints::from(pts)).color(colours[0]));
                    if let Some(d) = r.doi_m {
                        pu.hline(
                            egui_plot::HLine::new("depth of investigation", -d)
                                .style(LineStyle::dashed_loose()),
                        );
                    }
                });
        });
    }
}

/// (log10 x, log10 y) of the finite positive pairs.
fn finite_log(x: &[f64], y: &[f64]) -> Vec<[f64; 2]> {
    x.iter()
        .zip(y)
        .filter(|(a, b)| **a > 0.0 && **b > 0.0 && a.is_finite() && b.is_finite())
        .map(|(a, b)| [a.log10(), b.log10()])
        .collect()
}

/// (log10 x, y) of the finite pairs.
fn log_x(x: &[f64], y: &[f64]) -> Vec<[f64; 2]> {
    x.iter()
        .zip(y)
        .filter(|(a, b)| **a > 0.0 && a.is_finite() && b.is_finite())
        .map(|(a, b)| [a.log10(), *b])
        .collect()
}

impl Panel for MtPanel {
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
            .id_salt("mt_panel_scroll")
            .show(ui, |ui| {
                self.view.ui(ui, &SPEC, shared);
                ui.separator();
                ui.strong("Occam 1D inversion");
                let before = self.params.clone();
                self.params_ui(ui);
                self.params_edited |= self.params != before;
                let has_files = !Self::project_files(shared).is_empty();
                ui.horizontal(|ui| {
                    if ui
                        .add_enabled(has_files, egui::Button::new("Read MT files"))
                        .on_hover_text("Read the project's MT files (mt_files, mt_dir).")
                        .clicked()
                        && let Err(e) = self.read(shared)
                    {
                        self.message = Some(e);
                    }
                    let can_run = self.data.as_ref().is_some_and(|d| !d.sites.is_empty())
                        && self.job.is_none();
                    if ui
                        .add_enabled(can_run, egui::Button::new("Run Occam inversion"))
                        .on_hover_text("Invert every site with these settings, in the background.")
                        .clicked()
                    {
                        self.start_job(ui.ctx());
                    }
                });
                if let Some(job) = &mut self.job {
                    job.ui(ui);
                }
                if let Some(m) = &self.message {
                    ui.label(m.clone());
                }
                let Some(res) = self.results(shared) else {
                    if has_files {
                        ui.label("No MT model yet: press Read MT files, then Run Occam inversion.");
                    }
                    return;
                };
                if res.sites.is_empty() {
                    return;
                }
                self.site = self.site.min(res.sites.len() - 1);
                ui.separator();
                ui.horizontal(|ui| {
                    let l = ui.label("Site");
                    egui::ComboBox::from_id_salt("mt_site")
                        .selected_text(res.sites[self.site].site.clone())
                        .show_ui(ui, |ui| {
                            for (i, s) in res.sites.iter().enumerate() {
                                ui.selectable_value(&mut self.site, i, s.site.clone());
                            }
                        })
                        .response
                        .labelled_by(l.id);
                });
                Self::site_ui(ui, &res.sites[self.site]);
            });
    }

    fn describe(&self, shared: &Shared) -> Value {
        let mut v = MethodView::describe(&SPEC, shared);
        let res = self.results(shared);
        if let Some(o) = v.as_object_mut() {
            o.insert(
                "actions".into(),
                json!([
                    {"name": "inspect_product", "args": {"key": "one of the product keys"}, "desc": "The numbers a product holds (read-only)."},
                    {"name": "read_files", "args": {}, "desc": "Read the project's MT files (mt_files, mt_dir)."},
                    {"name": "set_params", "args": {"mode": "det | xy | yx | both", "error_floor_percent": "percent of |Z|", "n_layers": "count", "target_rms": "dimensionless", "max_iterations": "count", "static_shift": "true/false"}, "desc": "Change the Occam settings (same keys as mt_params)."},
                    {"name": "run_inversion", "args": {}, "desc": "Invert every site read, in the background."},
                    {"name": "select_site", "args": {"index": "0-based site index"}, "desc": "Show one site's curves, model and dimensionality."}
                ]),
            );
            o.insert(
                "params".into(),
                serde_json::to_value(&self.params).unwrap_or(Value::Null),
            );
            o.insert(
                "sites_read".into(),
                json!(
                    self.data.as_ref().map(|d| d
                        .sites
                        .iter()
                        .map(|s| s.site.clone())
                        .collect::<Vec<_>>())
                ),
            );
            o.insert("running".into(), json!(self.job.is_some()));
            o.insert("selected_site".into(), json!(self.site));
            o.insert(
                "results".into(),
                json!(res.map(|r| {
                    r.sites.iter().map(|s| json!({
                    "site": s.site, "rms": s.result.rms, "chi2": s.result.chi2,
                    "iterations": s.result.iterations, "doi_m": s.result.doi_m,
                    "quality_score": s.evaluation.quality_score,
                    "dimensionality": s.dimensionality.as_ref().map(|d| d.verdict.word()),
                })).collect::<Vec<_>>()
                })),
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
        self.sync_params(shared);
        match action {
            "read_files" => self.read(shared),
            "set_params" => {
                let mut cur = serde_json::to_value(&self.params).map_err(|e| e.to_string())?;
                if let (Some(c), Some(a)) = (cur.as_object_mut(), args.as_object()) {
                    for (k, v) in a {
                        c.insert(k.clone(), v.clone());
                    }
                }
                self.params = serde_json::from_value(cur).map_err(|e| format!("mt_params: {e}"))?;
                self.params_edited = true;
                Ok(serde_json::to_value(&self.params).unwrap_or(Value::Null))
            }
            "run_inversion" => {
                if self.data.is_none() {
                    self.read(shared)?;
                }
                if self.job.is_some() {
                    return Err("an MT inversion is already running".into());
                }
                self.start_job(window);
                Ok(json!({"started": true, "sites": self.data.as_ref().map_or(0, |d| d.sites.len())}))
            }
            "select_site" => {
                let n = self.results(shared).map_or(0, |r| r.sites.len());
                let i = args
                    .get("index")
                    .and_then(Value::as_u64)
                    .ok_or("select_site needs \"index\"")? as usize;
                if i >= n {
                    return Err(format!("site index {i} out of range: {n} site(s) inverted"));
                }
                self.site = i;
                Ok(json!({"selected_site": i}))
            }
            _ => MethodView::apply(&SPEC, action, args, shared).map_err(|e| {
                if e.starts_with("no action") {
                    format!(
                        "no action '{action}' on the MT panel; its actions are: inspect_product, read_files, set_params, run_inversion, select_site"
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
    use egui_kittest::Harness;
    use egui_kittest::kittest::Queryable;

    struct State {
        panel: MtPanel,
        shared: Shared,
    }

    /// A project naming the example's three EDI sites (written by `example::mt`).
    fn project() -> (tempfile::TempDir, Shared) {
        let dir = tempfile::tempdir().unwrap();
        let files =
            crate::example::mt::write(&crate::example::Truth::default(), dir.path()).unwrap();
        let list: Vec<String> = files.iter().map(|(_, p)| p.display().to_string()).collect();
        std::fs::write(
            dir.path().join("project.json"),
            json!({"goal": "MT", "inputs": {"mt_files": list}, "config": {}}).to_string(),
        )
        .unwrap();
        let shared = Shared {
            project: Some(crate::runtime::Project::load(dir.path()).unwrap()),
            ..Default::default()
        };
        (dir, shared)
    }

    fn harness(state: State) -> Harness<'static, State> {
        Harness::builder()
            .with_size(egui::vec2(1400.0, 1000.0))
            .with_context_setup(crate::studio::setup_fonts)
            .build_ui_state(|ui, s: &mut State| s.panel.ui(ui, &mut s.shared), state)
    }

    /// Nothing loaded: the panel says what to do.
    #[test]
    fn an_empty_project_says_what_to_do() {
        let mut h = harness(State {
            panel: MtPanel::default(),
            shared: Shared::default(),
        });
        h.run();
        h.get_by_label_contains("No Magnetotellurics (MT) data in this project");
    }

    /// Read, Run on a Job, and the result shown: the example's three sites are read (the
    /// message names 3 sites, 31 periods each), the Occam job finishes with every site at
    /// RMS ≤ 1.5 (data with 3 % noise and 5 % floor: the target RMS 1 is reachable), and the
    /// site's dimensionality verdict is shown as 1D defensible (the example is 1D by
    /// construction). describe() lists the actions; apply validates its arguments.
    #[test]
    fn read_run_and_show_the_example_sites() {
        let (_dir, shared) = project();
        let mut h = harness(State {
            panel: MtPanel::default(),
            shared,
        });
        h.run();
        h.get_by_label("Read MT files").click();
        h.run();
        h.get_by_label_contains("Read 3 MT sites (SEG EDI (impedance) ×3): 31 periods each");
        h.get_by_label("Run Occam inversion").click();
        let t0 = std::time::Instant::now();
        loop {
            h.step();
            if h.state().panel.own.is_some() {
                break;
            }
            assert!(t0.elapsed().as_secs() < 120, "the job did not finish");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        h.run();
        let own = h.state().panel.own.clone().unwrap();
        assert_eq!(own.sites.len(), 3);
        for s in &own.sites {
            assert!(s.result.rms <= 1.5, "{}: RMS {}", s.site, s.result.rms);
        }
        h.get_by_label("1D defensible");
        h.get_by_label_contains("site01: RMS");
        let window = h.ctx.clone();
        let st = h.state_mut();
        let d = st.panel.describe(&st.shared);
        assert_eq!(d["results"].as_array().unwrap().len(), 3);
        assert!(d["actions"].to_string().contains("run_inversion"));
        let e = st
            .panel
            .apply(
                "set_params",
                &json!({"n_layer": 3}),
                &mut st.shared,
                &window,
            )
            .unwrap_err();
        assert!(e.contains("n_layers"), "{e}");
        let ok = st
            .panel
            .apply(
                "set_params",
                &json!({"mode": "both", "error_floor_percent": 7.5}),
                &mut st.shared,
                &window,
            )
            .unwrap();
        assert_eq!(ok["mode"], "both");
        assert!(
            st.panel
                .apply("select_site", &json!({"index": 5}), &mut st.shared, &window)
                .is_err()
        );
        assert_eq!(
            st.panel
                .apply("select_site", &json!({"index": 2}), &mut st.shared, &window)
                .unwrap()["selected_site"],
            2
        );
    }
}
