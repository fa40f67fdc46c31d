//! The hydrological-model tools' handlers: each reads what the run holds, calls
//! [`super::model`], [`super::forward`] or [`super::compare`], draws its figures, writes its
//! table and says what it found.

use std::sync::Arc;

use anyhow::anyhow;

use super::compare::{ModelComparison, compare};
use super::forward::{ForwardComparison, ForwardInputs, forward};
use super::model::{HydroModel, file_label, load};
use super::settings::HydroSettings;
use super::{figures, report};
use crate::catalog::answers::Answer;
use crate::catalog::ert::{ErtModel, ErtWaterContent, coverage_threshold};
use crate::catalog::kit::settings::n_realizations;
use crate::catalog::kit::{Held, held, keys, require};
use crate::methods::ert::SurveySet;
use crate::methods::ert::evaluation::Evaluation;
use crate::methods::petro::{PetroConfig, PetroPrior};
use crate::runtime::{Outputs, RunContext, ToolResult};

/// The porosity the petrophysical prior centres on (the user's, else the sediment default).
fn prior_porosity(cfg: &PetroConfig) -> f64 {
    let (user, _) = cfg.user_params();
    user.porosity
        .map(|d| d.centre())
        .unwrap_or_else(|| PetroPrior::default_regolith("sediment").centres()[0])
}

/// The run's petrophysical configuration.
fn petro_config(ctx: &RunContext) -> anyhow::Result<PetroConfig> {
    PetroConfig::from_json(ctx.config.get(keys::PETROPHYSICAL_PARAMS)).map_err(|e| anyhow!(e))
}

/// The ERT model the run kept: the evaluated one when the evaluation ran, else the inversion's.
fn kept_model(ctx: &RunContext) -> anyhow::Result<ErtModel> {
    if let Some(ev) = held::<Evaluation<ErtModel>>(ctx, keys::EVALUATION_RESULTS) {
        return Ok(ev.kept.clone());
    }
    require::<ErtModel>(
        ctx,
        keys::INVERSION_RESULTS,
        "no ERT model: run the ERT inversion first",
    )
    .cloned()
}

/// `load_model_output`.
pub fn load_model_output(ctx: &mut RunContext) -> ToolResult {
    let files = ctx.input_paths(keys::MODEL_OUTPUT_FILES);
    if files.is_empty() {
        return Err(anyhow!(
            "no {} input: name the model's output files (ParFlow .pfb, MODFLOW heads)",
            keys::MODEL_OUTPUT_FILES
        ));
    }
    let grid_file = ctx.input_path(keys::MODEL_GRID_FILE);
    let settings = HydroSettings::read(ctx)?;
    let porosity = prior_porosity(&petro_config(ctx)?);
    ctx.progress(0.1, "reading the model's files");
    let m = load(&files, grid_file.as_deref(), &settings, Some(porosity))?;
    for n in &m.notes {
        ctx.note(n);
    }
    ctx.progress(0.7, "drawing the model along the line");
    let mut out = Outputs::new();
    for (p, caption) in figures::model_figures(ctx, &m) {
        out = out.figure(p, &caption);
    }
    let line = report::model_line(&m);
    let mut h = Held::new(m.clone(), line.clone())
        .report(report::model_report(&m))
        .number("n_files", m.files.len())
        .number("n_masked", m.n_masked)
        .number(
            "n_cells",
            m.grid.delr.len() * m.grid.delc.len() * m.grid.nlay(),
        );
    if let Some(t) = m.time {
        h = h.number("model_time", t);
    }
    ctx.progress(1.0, "read");
    Ok((format!("{line}."), out.put(keys::MODEL_OUTPUT, Arc::new(h))))
}

/// `forward_model_output`.
pub fn forward_model_output(ctx: &mut RunContext) -> ToolResult {
    let m = require::<HydroModel>(
        ctx,
        keys::MODEL_OUTPUT,
        "no hydrological model: run load_model_output first",
    )?
    .clone();
    if !m.has_water_content() {
        return Err(anyhow!(
            "the model holds no water content to forward ({}: a saturation file with a porosity, or heads with hydro_params.unsaturated_saturation)",
            m.files
                .iter()
                .map(|f| file_label(f))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let ert = kept_model(ctx)?;
    let settings = HydroSettings::read(ctx)?;
    let cfg = petro_config(ctx)?;
    let (priors, region) = crate::catalog::ert::run::priors(&cfg, ert.section())?;
    let topography = require::<SurveySet>(ctx, keys::ERT_DATA, "no ERT data loaded")?
        .surveys
        .first()
        .map(|s| s.topography.clone())
        .unwrap_or_default();
    let inp = ForwardInputs {
        priors: &priors,
        region: &region,
        n_draws: settings.forward_realizations,
        seed: cfg.seed.unwrap_or(crate::methods::petro::DEFAULT_SEED),
        chi2_ratio_max: settings.chi2_ratio_max,
        model_error_fraction: settings.model_error_fraction,
        topography: &topography,
    };
    let cancel = ctx.cancel_flag();
    let mut r = {
        let mut pr = |f: f64, d: &str| ctx.progress(0.9 * f, d);
        forward(&m, &ert, &inp, &mut pr, &cancel)?
    };
    for n in &r.notes {
        ctx.note(n);
    }
    r.image_theta = image_water_content(&r, &cfg, n_realizations(ctx), ctx);
    let mut out = Outputs::new();
    if let Some((p, caption)) = figures::forward_figure(ctx, &r) {
        out = out.figure(p, &caption);
    }
    if let Some((p, caption)) = figures::forward_section(ctx, &ert, &r) {
        out = out.figure(p, &caption);
    }
    let h = Held::new(r.clone(), forward_line(&r))
        .report(report::forward_report(&r))
        .number("chi2_model", r.chi2_model)
        .number("chi2_inversion", r.chi2_inversion)
        .number("chi2_limit", r.chi2_limit)
        .number("n_data", r.n_data)
        .number("verdict", r.verdict.word());
    Ok((
        r.sentence.clone(),
        out.put(keys::MODEL_FORWARD, Arc::new(h)),
    ))
}

/// The mean water content of the model's image, by the conversion the field model went
/// through (the same prior, draws and seed); `None`, noted, when it cannot be made.
fn image_water_content(
    r: &ForwardComparison,
    cfg: &PetroConfig,
    n: usize,
    ctx: &mut RunContext,
) -> Option<Vec<f64>> {
    let img = ErtModel::Single(r.image.clone()?);
    match crate::catalog::ert::run::water_content(&img, cfg, n) {
        Ok(steps) => steps.first().map(|w| w.water_content.mean.clone()),
        Err(e) => {
            ctx.note(&format!("the water content of the model's image: {e:#}"));
            None
        }
    }
}

fn forward_line(r: &ForwardComparison) -> String {
    format!(
        "model-predicted ERT data: χ² {} against the inversion's {} — {}",
        crate::catalog::kit::format::num(r.chi2_model),
        crate::catalog::kit::format::num(r.chi2_inversion),
        r.verdict.word()
    )
}

/// `compare_model_output`.
pub fn compare_model_output(ctx: &mut RunContext) -> ToolResult {
    let m = require::<HydroModel>(
        ctx,
        keys::MODEL_OUTPUT,
        "no hydrological model: run load_model_output first",
    )?
    .clone();
    let ert = kept_model(ctx)?;
    let settings = HydroSettings::read(ctx)?;
    let answer = held::<Answer>(ctx, keys::ANSWER_WATER_TABLE).cloned();
    let wc = held::<ErtWaterContent>(ctx, keys::WATER_CONTENT).cloned();
    let image =
        held::<ForwardComparison>(ctx, keys::MODEL_FORWARD).and_then(|f| f.image_theta.clone());
    let c: ModelComparison = compare(
        &m,
        &ert,
        answer.as_ref(),
        wc.as_ref(),
        image.as_deref(),
        coverage_threshold(ctx),
        settings.agreement_sigmas,
    );
    let mut out = Outputs::new();
    for (p, caption) in figures::comparison_figures(ctx, &ert, &c) {
        out = out.figure(p, &caption);
    }
    let files = report::comparison_csv(ctx, &c);
    let h = Held::new(
        c.clone(),
        format!("model against geophysics: {}", c.verdict.word()),
    )
    .report(report::comparison_report(&c, ctx))
    .number("verdict", c.verdict.word())
    .number("water_table_verdict", c.water_table.verdict.word())
    .number("water_content_verdict", c.water_content.verdict.word())
    .number("correlation", c.water_content.correlation)
    .files(files);
    Ok((
        c.sentence.clone(),
        out.put(keys::MODEL_COMPARISON, Arc::new(h)),
    ))
}
