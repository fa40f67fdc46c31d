//! The Electrical resistivity (ERT) panel: the measured pseudosection of each survey the run
//! has read, the model section under the real surface as
//! coloured cells on a log scale with a colour bar, faded where coverage is low, a time-step
//! selector for a series, and a Run button that inverts the project's surveys on a [`Job`]
//! through the catalog's ERT run path ([`crate::catalog::ert::run`]) with the project's
//! settings (instrument, `inversion_params`, time-lapse scheme and α) and the panel's edits
//! (λ, scheme) on top — the model a run's `invert_ert` / `invert_time_lapse` step makes.
//! Inputs, products and figures as every method panel shows them.

use serde_json::{Value, json};

use super::method::{MethodSpec, MethodView};
use super::section::{Frame, log_range, section_frame_ui, spectral};
use super::{Panel, Shared};
use crate::catalog::ert::run::{self as ert_run, ErtInputs};
use crate::catalog::ert::{
    ErtEdits, ErtModel, ErtSettings, Handover, coverage_alpha, pseudosection,
    pseudosection_half_width_m,
};
use crate::catalog::kit::Held;
use crate::catalog::kit::keys;
use crate::methods::ert::evaluation::Evaluation;
use crate::methods::ert::timelapse::{TimeLapseMethod, survey_label};
use crate::methods::ert::{Survey, SurveySet};
use crate::runtime::RunContext;
use crate::studio::job::Job;

/// What this panel shows.
pub const SPEC: MethodSpec = crate::catalog::kit::methods::ERT;

/// The Electrical resistivity (ERT) panel.
#[derive(Default)]
pub struct ErtPanel {
    view: MethodView,
    /// The time step shown.
    step: usize,
    /// The survey whose pseudosection is shown.
    pseudo_survey: usize,
    /// Fade cells whose coverage is below 1e-3 of the maximum (off by default, issue 24:
    /// fading whitened most of each section; a toggle).
    coverage_mask: bool,
    /// The panel's edits (λ, time-lapse scheme), layered over the project's settings.
    edits: ErtEdits,
    job: Option<Job<PageInversion>>,
    /// The model of the panel's own run (shown instead of the run's products).
    local: Option<ErtModel>,
    /// How the panel made `local` (settings, data, when), for a run to take it over.
    record: Option<Handover>,
    status: String,
}

impl std::fmt::Debug for ErtPanel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ErtPanel")
            .field("step", &self.step)
            .field("edits", &self.edits)
            .field("status", &self.status)
            .finish_non_exhaustive()
    }
}

/// A finished inversion of the panel: the model and the record of how it was made.
struct PageInversion {
    model: ErtModel,
    record: Handover,
}

/// The model to show: the panel's own run, else the evaluated model, else the inversion.
fn with_model<R>(
    local: Option<&ErtModel>,
    shared: &Shared,
    f: impl FnOnce(&ErtModel, &str) -> R,
) -> Option<R> {
    if let Some(m) = local {
        return Some(f(m, "the panel's run"));
    }
    if let Some(p) = shared.shelf.get(keys::EVALUATION_RESULTS)
        && let Some(h) = p.as_any().downcast_ref::<Held<Evaluation<ErtModel>>>()
    {
        return Some(f(&h.value.kept, "the evaluated model"));
    }
    if let Some(p) = shared.shelf.get(keys::INVERSION_RESULTS)
        && let Some(h) = p.as_any().downcast_ref::<Held<ErtModel>>()
    {
        return Some(f(&h.value, "the run's inversion"));
    }
    None
}

/// Draw a model step as coloured cells (log10 ρ) with the surface, the electrodes and a
/// colour bar.
fn draw_section(ui: &mut egui::Ui, model: &ErtModel, step: usize, mask: bool) {
    let section = model.section();
    let steps = model.steps();
    let Some(s) = steps.get(step.min(steps.len().saturating_sub(1))) else {
        return;
    };
    let Some((lo, hi)) = log_range(steps.iter().flat_map(|s| s.rho_ohm_m.iter().copied())) else {
        return;
    };
    let alpha = if mask {
        coverage_alpha(model.coverage(), 1e-3)
    } else {
        vec![1.0; section.n_params()]
    };
    let polys: Vec<[[f64; 2]; 3]> = (0..section.n_params())
        .map(|j| section.param_polygon(j))
        .collect();
    let xs = polys.iter().flatten().map(|p| p[0]);
    let zs = polys.iter().flatten().map(|p| p[1]);
    let (x0, x1) = (
        xs.clone().fold(f64::INFINITY, f64::min),
        xs.fold(f64::NEG_INFINITY, f64::max),
    );
    let (z0, z1) = (
        zs.clone().fold(f64::INFINITY, f64::min),
        zs.fold(f64::NEG_INFINITY, f64::max),
    );
    if !(x1 > x0 && z1 > z0) {
        return;
    }
    let frame = Frame {
        x: (x0, x1),
        z: (z0, z1),
        log_range: (lo, hi),
        z_label: "Elevation (m)",
        bar_label: "Ω·m",
    };
    section_frame_ui(ui, &frame, |painter, to| {
        let mut mesh = egui::Mesh::default();
        for (j, tri) in polys.iter().enumerate() {
            let t = (s.rho_ohm_m[j].log10() - lo) / (hi - lo);
            let c = spectral(t, alpha.get(j).copied().unwrap_or(1.0));
            let base = mesh.vertices.len() as u32;
            for p in tri {
                mesh.colored_vertex(to(p[0], p[1]), c);
            }
            mesh.add_triangle(base, base + 1, base + 2);
        }
        painter.add(egui::Shape::mesh(mesh));
        let black = egui::Stroke::new(1.5, egui::Color32::BLACK);
        let surface: Vec<egui::Pos2> = section.surface_xz.iter().map(|p| to(p[0], p[1])).collect();
        painter.add(egui::Shape::line(surface, black));
        for e in &section.electrodes_xz {
            painter.circle_filled(to(e[0], e[1]), 2.5, egui::Color32::BLACK);
        }
        for i in &section.interfaces {
            let pts: Vec<egui::Pos2> = i.points.iter().map(|p| to(p[0], p[1])).collect();
            painter.add(egui::Shape::dashed_line(
                &pts,
                egui::Stroke::new(1.5, egui::Color32::WHITE),
                6.0,
                4.0,
            ));
        }
    });
}

/// Draw a survey's pseudosection ([`pseudosection`]: ρa at the electrodes' midpoint and
/// pseudo-depth 0.19 × spread, the same points as the run's figure) as coloured blocks on a
/// log scale, returning how many data were drawn.
fn draw_pseudosection(ui: &mut egui::Ui, survey: &Survey) -> usize {
    let pts = pseudosection(survey);
    let Some((lo, hi)) = log_range(pts.iter().map(|p| p.2)) else {
        return 0;
    };
    let h = pseudosection_half_width_m(survey);
    let x0 = pts.iter().map(|p| p.0).fold(f64::INFINITY, f64::min) - h;
    let x1 = pts.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max) + h;
    let d1 = pts.iter().map(|p| p.1).fold(0.0, f64::max) + h;
    let frame = Frame {
        x: (x0, x1),
        z: (-d1, 0.0),
        log_range: (lo, hi),
        z_label: "Pseudo-depth (m)",
        bar_label: "ρa, Ω·m",
    };
    section_frame_ui(ui, &frame, |painter, to| {
        for (x, d, r) in &pts {
            let t = (r.log10() - lo) / (hi - lo);
            let rect = egui::Rect::from_two_pos(to(x - h, -d - h / 2.0), to(x + h, -d + h / 2.0));
            painter.rect_filled(rect, 0.0, spectral(t, 1.0));
        }
    });
    pts.len()
}

/// Call `f` with the surveys the run has read (the `ert_data` product), if any.
fn with_surveys<R>(shared: &Shared, f: impl FnOnce(&[Survey]) -> R) -> Option<R> {
    let p = shared.shelf.get(keys::ERT_DATA)?;
    let h = p.as_any().downcast_ref::<Held<SurveySet>>()?;
    (!h.value.surveys.is_empty()).then(|| f(&h.value.surveys))
}

/// The project's run context (an empty one without a project: every setting at its default).
fn project_context(shared: &Shared) -> RunContext {
    shared
        .project
        .as_ref()
        .map_or_else(|| RunContext::new(""), |p| p.context())
}

impl ErtPanel {
    /// The settings the next panel run uses: the project's, with the panel's edits on top.
    fn settings(&self, shared: &Shared) -> Result<ErtSettings, String> {
        ErtSettings::read(&project_context(shared))
            .map(|s| s.with_edits(&self.edits))
            .map_err(|e| format!("the project's ERT settings cannot be used: {e:#}"))
    }

    /// Start an inversion of the project's surveys on a background job.
    fn run(&mut self, shared: &Shared, window: &egui::Context) -> Result<String, String> {
        if self.job.as_ref().is_some_and(|j| j.result.is_none()) {
            return Err("an inversion is already running".into());
        }
        let inputs = ErtInputs::of(&project_context(shared))
            .map_err(|_| "no ERT file in the project (input role ert_files or ert_file)")?;
        let settings = self.settings(shared)?;
        let n = inputs.files.len();
        let lambda = settings.inversion.lambda;
        self.job = Some(Job::spawn(
            window,
            "ERT inversion",
            move |progress, cancel| {
                let set = ert_run::load(&inputs, settings.instrument)
                    .map_err(|e| format!("{e:#}"))?
                    .set;
                let model = ert_run::invert(&set, &settings, progress, cancel)
                    .map_err(|e| format!("{e:#}"))?;
                let now = crate::runtime::run_folder::now_unix();
                let record = Handover::of_page(&model, &settings, &set.surveys, now);
                Ok(PageInversion { model, record })
            },
        ));
        Ok(format!("inverting {n} survey(s) with λ {lambda}"))
    }

    fn poll(&mut self) {
        if let Some(job) = &mut self.job
            && job.poll()
        {
            match job.result.take() {
                Some(Ok(PageInversion { model: m, record })) => {
                    self.status = format!(
                        "Inversion finished: χ² {:.2}, {} cells, {} iterations.",
                        m.chi2(),
                        m.section().n_params(),
                        m.iterations()
                    );
                    self.step = 0;
                    self.local = Some(m);
                    self.record = Some(record);
                }
                Some(Err(e)) => self.status = format!("Inversion failed: {e}"),
                None => {}
            }
            self.job = None;
        }
    }
}

impl ErtPanel {
    /// The inversion finished on this page, with the record of how it was made: what a run
    /// started now takes over instead of inverting again (`None` before one has finished).
    pub fn finished_inversion(&mut self) -> Option<(&Handover, &ErtModel)> {
        self.poll();
        self.record.as_ref().zip(self.local.as_ref())
    }
}

impl Panel for ErtPanel {
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
        ui.horizontal(|ui| {
            let project = ErtSettings::read(&project_context(shared)).ok();
            let mut lambda = self
                .edits
                .lambda
                .or(project.as_ref().map(|p| p.inversion.lambda))
                .unwrap_or(20.0);
            let l = ui.label("Lambda (regularisation)");
            if ui.add(egui::DragValue::new(&mut lambda).range(0.01..=1e4).speed(0.5))
                .labelled_by(l.id)
                .on_hover_text("Regularisation strength λ of the smoothness term (the project's inversion_params.lambda until changed here; pyGIMLi's default 20; smaller fits the data more closely).")
                .changed()
            {
                self.edits.lambda = Some(lambda);
            }
            let mut method = self
                .edits
                .time_lapse_method
                .or(project.as_ref().map(|p| p.time_lapse_method))
                .unwrap_or(TimeLapseMethod::Simultaneous);
            egui::ComboBox::from_label("Time-lapse method")
                .selected_text(method.name())
                .show_ui(ui, |ui| {
                    for m in [
                        TimeLapseMethod::Simultaneous,
                        TimeLapseMethod::Difference,
                        TimeLapseMethod::Ratio,
                        TimeLapseMethod::Independent,
                    ] {
                        if ui.selectable_value(&mut method, m, m.name()).changed() {
                            self.edits.time_lapse_method = Some(m);
                        }
                    }
                });
            let running = self.job.as_ref().is_some_and(|j| j.result.is_none());
            if ui
                .add_enabled(!running, egui::Button::new("Run inversion"))
                .on_hover_text("Invert the project's ERT files here (one survey, or a time-lapse series with the chosen method).")
                .clicked()
            {
                match self.run(shared, ui.ctx()) {
                    Ok(s) => self.status = s,
                    Err(e) => self.status = e,
                }
            }
        });
        if let Some(job) = &mut self.job {
            job.ui(ui);
        }
        if !self.status.is_empty() {
            ui.label(&self.status);
        }
        if self.record.is_some() {
            ui.label("A run started now (Auto to report, Step by step) takes this page's model over instead of inverting again.");
        }
        let mut step = self.step;
        let mut mask = self.coverage_mask;
        let shown = with_model(self.local.as_ref(), shared, |m, source| {
            let steps = m.steps();
            ui.label(format!(
                "Model from {source}: χ² {:.2}, rrms {:.1} %, {} cells, λ {:.3}",
                m.chi2(),
                m.rrms_percent(),
                m.section().n_params(),
                m.lambda()
            ));
            ui.horizontal(|ui| {
                if steps.len() > 1 {
                    ui.label("Time step:");
                    for (i, s) in steps.iter().enumerate() {
                        ui.selectable_value(&mut step, i, s.label.clone());
                    }
                }
                ui.checkbox(&mut mask, "Fade poorly covered cells");
            });
            draw_section(ui, m, step, mask);
        });
        self.step = step;
        self.coverage_mask = mask;
        if shown.is_none() {
            ui.label(
                "No ERT model yet: press Run inversion, or run the ERT steps (Auto to report).",
            );
        }
        let mut pick = self.pseudo_survey;
        with_surveys(shared, |surveys| {
            ui.separator();
            pick = pick.min(surveys.len() - 1);
            ui.horizontal(|ui| {
                ui.label("Pseudosection of");
                for (i, s) in surveys.iter().enumerate() {
                    ui.selectable_value(&mut pick, i, survey_label(s, i));
                }
            });
            let n = draw_pseudosection(ui, &surveys[pick]);
            ui.label(format!(
                "Measured data: {n} apparent resistivities at the midpoint of their electrodes, pseudo-depth 0.19 × spread (Edwards 1977)"
            ));
        });
        self.pseudo_survey = pick;
        ui.separator();
        self.view.ui(ui, &SPEC, shared);
    }

    fn describe(&self, shared: &Shared) -> Value {
        let mut v = MethodView::describe(&SPEC, shared);
        let settings = self.settings(shared);
        let model = with_model(self.local.as_ref(), shared, |m, source| {
            json!({
                "source": source,
                "chi2": m.chi2(),
                "rrms_percent": m.rrms_percent(),
                "n_cells": m.section().n_params(),
                "lambda": m.lambda(),
                "time_steps": m.steps().iter().map(|s| s.label.clone()).collect::<Vec<_>>(),
            })
        });
        v["state"] = json!({
            "model": model,
            "time_step": self.step,
            "pseudosection_survey": self.pseudo_survey,
            "surveys": with_surveys(shared, |s| s.iter().enumerate().map(|(i, s)| survey_label(s, i)).collect::<Vec<_>>()),
            "coverage_mask": self.coverage_mask,
            "lambda": settings.as_ref().map(|s| s.inversion.lambda).ok(),
            "time_lapse_method": settings.as_ref().map(|s| s.time_lapse_method.name()).ok(),
            "settings_error": settings.as_ref().err(),
            "running": self.job.as_ref().is_some_and(|j| j.result.is_none()),
            "status": self.status,
        });
        if let Some(a) = v["actions"].as_array_mut() {
            a.extend([
                json!({"name": "select_time_step", "args": {"index": "0-based time step"}, "desc": "Show another survey of a series."}),
                json!({"name": "select_pseudosection", "args": {"index": "0-based survey"}, "desc": "Show another survey's pseudosection (measured ρa)."}),
                json!({"name": "set_lambda", "args": {"lambda": "λ > 0"}, "desc": "λ of the next panel inversion."}),
                json!({"name": "set_time_lapse_method", "args": {"method": TimeLapseMethod::NAMES.join(" | ")}, "desc": "Scheme of the next time-lapse inversion."}),
                json!({"name": "set_coverage_mask", "args": {"on": "true | false"}, "desc": "Fade cells with coverage below 1e-3 of the maximum."}),
                json!({"name": "run_inversion", "args": {}, "desc": "Invert the project's ERT files on a background job."}),
            ]);
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
            "select_time_step" => {
                let i = args
                    .get("index")
                    .and_then(Value::as_u64)
                    .ok_or("select_time_step needs \"index\" (0-based)")?
                    as usize;
                let n = with_model(self.local.as_ref(), shared, |m, _| m.steps().len())
                    .ok_or("no ERT model yet")?;
                if i >= n {
                    return Err(format!("time step {i} does not exist; the model has {n}"));
                }
                self.step = i;
                Ok(json!({"time_step": i}))
            }
            "select_pseudosection" => {
                let i = args
                    .get("index")
                    .and_then(Value::as_u64)
                    .ok_or("select_pseudosection needs \"index\" (0-based)")?
                    as usize;
                let n = with_surveys(shared, <[Survey]>::len)
                    .ok_or("no ERT data read yet: run load_ert_surveys first")?;
                if i >= n {
                    return Err(format!("survey {i} does not exist; {n} were read"));
                }
                self.pseudo_survey = i;
                Ok(json!({"pseudosection_survey": i}))
            }
            "set_lambda" => {
                let l = args
                    .get("lambda")
                    .and_then(Value::as_f64)
                    .filter(|l| l.is_finite() && *l > 0.0)
                    .ok_or("set_lambda needs \"lambda\" > 0")?;
                self.edits.lambda = Some(l);
                Ok(json!({"lambda": l}))
            }
            "set_time_lapse_method" => {
                let name = args
                    .get("method")
                    .and_then(Value::as_str)
                    .ok_or("set_time_lapse_method needs \"method\"")?;
                let m = TimeLapseMethod::parse(name).map_err(|e| e.to_string())?;
                self.edits.time_lapse_method = Some(m);
                Ok(json!({"time_lapse_method": m.name()}))
            }
            "set_coverage_mask" => {
                let on = args
                    .get("on")
                    .and_then(Value::as_bool)
                    .ok_or("set_coverage_mask needs \"on\" (true or false)")?;
                self.coverage_mask = on;
                Ok(json!({"coverage_mask": on}))
            }
            "run_inversion" => self.run(shared, window).map(|s| json!({"started": s})),
            "inspect_product" => MethodView::apply(&SPEC, action, args, shared),
            other => Err(format!(
                "no action '{other}' on the ERT panel; its actions are: inspect_product, select_time_step, select_pseudosection, set_lambda, set_time_lapse_method, set_coverage_mask, run_inversion"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::ert::inversion::{InversionParams, invert_survey};
    use crate::methods::ert::readers::read_survey_with_electrodes;
    use crate::methods::ert::{Instrument, read_survey};
    use egui_kittest::Harness;
    use egui_kittest::kittest::Queryable;
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;

    type State = (ErtPanel, Shared);

    fn harness(state: State) -> Harness<'static, State> {
        Harness::builder()
            .with_size(egui::vec2(1200.0, 900.0))
            .with_context_setup(crate::studio::setup_fonts)
            .build_ui_state(
                |ui, s: &mut State| {
                    let (panel, shared) = s;
                    panel.ui(ui, shared);
                },
                state,
            )
    }

    #[test]
    fn an_empty_panel_says_what_to_do_and_run_explains_why_not() {
        let mut h = harness((ErtPanel::default(), Shared::default()));
        h.run();
        h.get_by_label_contains("No ERT model yet");
        h.get_by_label("Run inversion").click();
        h.run();
        h.get_by_label_contains("no ERT file in the project");
        // The chat's actions: λ is set, an unknown scheme is refused naming the real ones.
        let window = h.ctx.clone();
        let (panel, shared) = h.state_mut();
        assert!(
            panel
                .apply("set_lambda", &json!({"lambda": 5.0}), shared, &window)
                .is_ok()
        );
        assert_eq!(panel.edits.lambda, Some(5.0));
        let e = panel
            .apply(
                "set_time_lapse_method",
                &json!({"method": "cross_gradient"}),
                shared,
                &window,
            )
            .expect_err("unknown scheme");
        assert!(
            e.contains("simultaneous, difference, ratio, independent"),
            "{e}"
        );
        let d = panel.describe(shared);
        assert_eq!(d["state"]["lambda"], json!(5.0));
        assert!(d["state"]["model"].is_null());
    }

    #[test]
    fn the_runs_surveys_are_drawn_as_pseudosections_one_at_a_time() {
        // Two real DAS-1 surveys as the run's ert_data: the first is drawn, with as many
        // points as the catalog's pseudosection figure has; choosing the second draws it.
        let e = crate::require_data!("ert/phgx/DAS/electrodes.dat");
        let a = crate::require_data!("ert/phgx/DAS/20171105_1418.Data");
        let b = crate::require_data!("ert/phgx/DAS/20171107_1417.Data");
        let surveys: Vec<Survey> = [a, b]
            .iter()
            .map(|p| read_survey_with_electrodes(p, Instrument::Auto, &e).expect("reads"))
            .collect();
        let n: Vec<usize> = surveys.iter().map(|s| pseudosection(s).len()).collect();
        assert!(n[0] > 400, "{n:?}");
        let shared = Shared::default();
        shared.shelf.put(
            keys::ERT_DATA,
            Arc::new(Held::new(SurveySet::new(surveys), "surveys")),
        );
        let mut h = harness((ErtPanel::default(), shared));
        h.run();
        h.get_by_label("Pseudosection of");
        h.get_by_label_contains(&format!("Measured data: {} apparent", n[0]));
        h.get_by_label("20171107_1417.Data").click();
        h.run();
        assert_eq!(h.state().0.pseudo_survey, 1);
        h.get_by_label_contains(&format!("Measured data: {} apparent", n[1]));
        // The chat's action: the same choice, refused past the last survey.
        let window = h.ctx.clone();
        let (panel, shared) = h.state_mut();
        assert!(
            panel
                .apply(
                    "select_pseudosection",
                    &json!({"index": 0}),
                    shared,
                    &window
                )
                .is_ok()
        );
        assert_eq!(panel.pseudo_survey, 0);
        let e = panel
            .apply(
                "select_pseudosection",
                &json!({"index": 2}),
                shared,
                &window,
            )
            .expect_err("two surveys");
        assert!(e.contains("2 were read"), "{e}");
        assert_eq!(
            panel.describe(shared)["state"]["surveys"],
            json!(["20171105_1418.Data", "20171107_1417.Data"])
        );
    }

    #[test]
    fn a_model_on_the_shelf_is_drawn_with_its_numbers_and_the_mask_toggles() {
        // A short real inversion of gallery.dat (2 iterations) as the run's product.
        let p = crate::require_data!("ert/gimli/gallery.dat");
        let s = read_survey(&p, Instrument::Auto).expect("reads");
        let params = InversionParams {
            max_iterations: 2,
            ..Default::default()
        };
        let r = invert_survey(&s, &params, &[], &mut |_, _| {}, &AtomicBool::new(false))
            .expect("inverts");
        let (chi2, n) = (r.chi2, r.n_cells);
        let shared = Shared::default();
        shared.shelf.put(
            keys::INVERSION_RESULTS,
            Arc::new(Held::new(ErtModel::Single(Box::new(r)), "model")),
        );
        let mut h = harness((ErtPanel::default(), shared));
        h.run();
        h.get_by_label_contains(&format!("Model from the run's inversion: χ² {chi2:.2}"));
        h.get_by_label_contains(&format!("{n} cells"));
        assert!(!h.state().0.coverage_mask, "fading is off by default");
        h.get_by_label("Fade poorly covered cells").click();
        h.run();
        assert!(h.state().0.coverage_mask);
        let window = h.ctx.clone();
        let (panel, shared) = h.state_mut();
        let d = panel.describe(shared);
        assert_eq!(d["state"]["model"]["n_cells"], json!(n));
        let e = panel
            .apply("select_time_step", &json!({"index": 1}), shared, &window)
            .expect_err("one step only");
        assert!(e.contains("the model has 1"), "{e}");
    }

    /// The example project with non-default ERT settings: λ 7, the unified reader named, the
    /// simultaneous scheme with α 3, and two iterations (to keep the test short).
    fn example_with_settings(instrument: &str) -> crate::runtime::Project {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/example");
        let mut p = crate::runtime::Project::load(&dir).expect("the example project reads");
        p.config.insert(
            keys::INVERSION_PARAMS.into(),
            json!({"lambda": 7.0, "max_iterations": 2}),
        );
        p.config.insert(keys::INSTRUMENT.into(), json!(instrument));
        p.config
            .insert(keys::TIME_LAPSE_METHOD.into(), json!("simultaneous"));
        p.config
            .insert(keys::TEMPORAL_REGULARIZATION.into(), json!(3.0));
        p
    }

    /// Press Run inversion and draw frames until the job has finished.
    fn run_to_the_end(h: &mut Harness<'static, State>) {
        h.run();
        h.get_by_label("Run inversion").click();
        let t0 = std::time::Instant::now();
        loop {
            h.run();
            let p = &h.state().0;
            if p.job.is_none() && !p.status.starts_with("inverting") {
                return;
            }
            assert!(
                t0.elapsed().as_secs() < 1800,
                "the panel's inversion did not finish"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    #[test]
    fn run_uses_the_projects_settings_and_makes_the_runs_model() {
        use crate::catalog::kit::held;
        use crate::runtime::step::DecidedBy;
        use crate::runtime::{StepStatus, invoke};
        // The run's steps on the example with the project's settings.
        let project = example_with_settings("unified");
        let mut ctx = project.context();
        let reg = crate::catalog::registry();
        for tool in ["load_ert_surveys", "invert_time_lapse"] {
            assert_eq!(
                invoke(&mut ctx, &reg, tool, "", DecidedBy::Policy),
                StepStatus::Ok
            );
        }
        let tool_model = held::<ErtModel>(&ctx, keys::INVERSION_RESULTS)
            .expect("the tool's model")
            .clone();
        // The panel's Run on the same project.
        let shared = Shared {
            project: Some(project),
            ..Default::default()
        };
        let mut h = harness((ErtPanel::default(), shared));
        run_to_the_end(&mut h);
        let panel = &h.state().0;
        let model = panel
            .local
            .as_ref()
            .unwrap_or_else(|| panic!("{}", panel.status));
        // The project's λ, iteration cap, scheme and α reached the panel's inversion …
        assert_eq!(model.lambda(), 7.0);
        assert_eq!(model.params().max_iterations, 2);
        let ErtModel::TimeLapse(r) = model else {
            panic!("four surveys make a time-lapse model")
        };
        assert_eq!((r.method, r.alpha), (TimeLapseMethod::Simultaneous, 3.0));
        // … and the model is the run's: same χ² and the same resistivity in every cell of
        // every time step (to 1e-9 relative: the same computation, summation order aside).
        assert_eq!(model.steps().len(), tool_model.steps().len());
        assert!((model.chi2() - tool_model.chi2()).abs() <= 1e-9 * tool_model.chi2());
        for (a, b) in model.steps().iter().zip(tool_model.steps()) {
            for (x, y) in a.rho_ohm_m.iter().zip(b.rho_ohm_m) {
                assert!((x - y).abs() <= 1e-9 * y.abs(), "{x} against {y}");
            }
        }
    }

    #[test]
    fn run_reads_the_files_with_the_projects_instrument() {
        // The example's files are in the unified format; a project that names another
        // instrument makes the panel fail exactly as the run's load step does.
        let project = example_with_settings("syscal_bin");
        let mut ctx = project.context();
        let reg = crate::catalog::registry();
        use crate::runtime::step::DecidedBy;
        use crate::runtime::{StepStatus, invoke};
        assert_eq!(
            invoke(&mut ctx, &reg, "load_ert_surveys", "", DecidedBy::Policy),
            StepStatus::Failed
        );
        let error = ctx.steps[0].error.clone();
        let shared = Shared {
            project: Some(project),
            ..Default::default()
        };
        let mut h = harness((ErtPanel::default(), shared));
        run_to_the_end(&mut h);
        let status = &h.state().0.status;
        assert!(h.state().0.local.is_none());
        assert_eq!(status, &format!("Inversion failed: {error}"));
    }
}
