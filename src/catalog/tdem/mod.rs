//! The TDEM tools: load a sounding file (with its geometry and the system from `tdem_params`),
//! invert it (smooth models, one by one or as a laterally constrained line), judge the models
//! by the shared rubric, map them in plan view when a map is asked for, and convert them to
//! water content per layer when water content is asked for and the run has no ERT model.
//!
//! Every tool calls [`crate::methods::tdem::pipeline`], the same functions the EM panel's
//! buttons call. Figures: decays with the fit, normalised residuals, layered models with the
//! DOI (and a section for a line), plan maps with their kriging σ.

pub mod export;
pub mod figures;
pub mod product;
pub mod report;
pub mod run;
pub mod settings;
#[cfg(test)]
mod tests;
pub mod tools;

use super::intent;
use super::kit::format::num as short_num;
use super::kit::format::opt_m;
use super::kit::keys;
use super::kit::markdown::notes;
use super::kit::palette::series_colour;
use super::kit::register_all;
use super::kit::settings::n_realizations;
use super::kit::{Held, draw_figure, figure_path, held, write_product};
use crate::methods::io::ReadError;
use crate::methods::petro::{self, MonteCarloOptions, PetroPrior, PriorSource, UserPetroParams};
use crate::methods::tdem::data::ResponseUnit;
use crate::methods::tdem::forward::LayeredEarth;
use crate::methods::tdem::invert::LambdaMode;
use crate::methods::tdem::kriging::{PlanMap, esri_ascii_grid};
use crate::methods::tdem::params::TdemParams;
use crate::methods::tdem::pipeline::{
    EvaluationOptions, SoundingFit, TdemDataset, TdemEvaluation, TdemInversion, TdemWaterContent,
    describe_system, load_dataset,
};
use crate::report::figures::{
    Axes, ColourScale, Palette, Series, Style, cell_section, image, line_plot,
};
use crate::runtime::tool::RegistryError;
use crate::runtime::{Outputs, Registry, RunContext, Tool, ToolResult};
use anyhow::{Context, anyhow};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use export::*;
pub use figures::*;
use product::*;
use report::*;
pub use run::*;
pub use settings::*;
use tools::*;

/// Register the TDEM tools, in dependency order.
pub fn register(reg: &mut Registry) -> Result<(), RegistryError> {
    register_all(
        reg,
        [
            Tool::new(
                "load_tdem_data",
                "Read the TDEM sounding file (time/response tables with a geometry table, TEM-FAST .tem, USF .usf): gates, units, positions, the loop system; saturated and noise-floor gates are masked and counted.",
                load_tdem_data,
            )
            .produces(&[keys::TDEM_DATA])
            .label("Load TDEM data")
            .module("em")
            .adjusts(&[keys::TDEM_PARAMS])
            .agent("TDEM")
            .when(|ctx| ctx.has_input(ROLE_DATA)),
            Tool::new(
                "invert_tdem",
                "Invert the TDEM soundings for smooth layered resistivity models (Occam, 1D, with depth of investigation); a line of close soundings is inverted with lateral constraints.",
                invert_tdem,
            )
            .requires(&[keys::TDEM_DATA])
            .produces(&[keys::TDEM_RESULTS])
            .label("Run TDEM inversion")
            .module("em")
            .adjusts(&[keys::TDEM_PARAMS])
            .agent("TDEM"),
            Tool::new(
                "evaluate_tdem_inversion",
                "Judge the TDEM models by the shared quality rubric (data fit, resolution against the DOI, plausibility); with a fixed λ a failing model is re-inverted with λ halved or doubled and the best kept.",
                evaluate_tdem_inversion,
            )
            .requires(&[keys::TDEM_RESULTS])
            .produces(&[keys::TDEM_EVALUATION])
            .label("Evaluate TDEM inversion quality")
            .module("em")
            .adjusts(&[keys::QUALITY_THRESHOLD, keys::MAX_ATTEMPTS, keys::AUTO_ADJUST])
            .agent("TDEM"),
            Tool::new(
                "map_tdem_plan_view",
                "Interpolate the evaluated TDEM models into plan-view maps of resistivity at chosen depths by ordinary kriging, with kriging uncertainty maps. Only when the request asks for a map.",
                map_tdem_plan_view,
            )
            .requires(&[keys::TDEM_RESULTS, keys::TDEM_EVALUATION])
            .produces(&[keys::PLAN_MAPS])
            .label("Interpolate TDEM plan-view maps")
            .module("em")
            .adjusts(&[keys::TDEM_PARAMS])
            .agent("TDEM")
            .applies(|ctx| ctx.has_input(ROLE_DATA))
            .when(|ctx| {
                intent::wants(&ctx.goal, keys::PLAN_MAPS)
                    && held::<TdemEvaluation>(ctx, keys::TDEM_EVALUATION)
                        .is_none_or(|e| e.kept.fits.len() >= 2)
            }),
            Tool::new(
                "convert_tdem_water_content",
                "Convert the evaluated TDEM layered models to volumetric water content per layer (Archie or Waxman-Smits by Monte Carlo over the petrophysical prior; mean and standard deviation per layer, layers below the DOI flagged), written as water_content_by_layer.csv. Only when water content is asked for and the run has no ERT model.",
                convert_tdem_water_content,
            )
            .requires(&[keys::TDEM_RESULTS, keys::TDEM_EVALUATION])
            .produces(&[keys::WATER_CONTENT])
            .label("Convert TDEM models to water content")
            .module("em")
            .adjusts(&[keys::PETROPHYSICAL_PARAMS, keys::N_REALIZATIONS])
            .agent("TDEM")
            .applies(|ctx| ctx.has_input(ROLE_DATA))
            .when(|ctx| intent::wants(&ctx.goal, keys::WATER_CONTENT) && !super::ert::ert_model_in_run(ctx)),
        ],
    )
}

/// A JSON summary of a TDEM data file, or `None` when it is not one.
pub fn read_summary(path: &std::path::Path) -> Option<Result<serde_json::Value, ReadError>> {
    crate::methods::tdem::read_summary(path)
}
