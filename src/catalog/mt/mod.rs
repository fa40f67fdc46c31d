//! The MT tools: read the sites (`mt_files` or `mt_dir`), invert each with Occam 1D
//! (Constable et al. 1987), judge each inversion with the shared rubric (the dimensionality
//! verdict stated beside the score, unscored), and — when the goal asks for water content and
//! no ERT model exists — convert the layered models to water content per layer.
//!
//! The studio's MT panel calls the same functions ([`read_sites`], [`invert_sites`],
//! [`MtParams`]), so a button and a step behave identically.

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
use super::kit::format::{num as sci, range_of};
use super::kit::keys;
use super::kit::markdown::csv_field as csv_text;
use super::kit::palette::series_colour;
use super::kit::register_all;
use super::kit::{Held, draw_figure, held, write_product};
use crate::methods::io::ReadError;
use crate::methods::mt::{
    self, MtSiteInversion, MtSounding, MtWaterContent, OccamMode, OccamOptions, SoundingOptions,
    TransferFunction,
};
use crate::methods::petro::{PetroConfig, PetroPrior, water_content_by_layer_csv};
use crate::report::figures::{Axes, Series, Style, line_plot};
use crate::runtime::tool::RegistryError;
use crate::runtime::{Outputs, Registry, RunContext, Tool};
use anyhow::anyhow;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use export::*;
pub use figures::*;
pub use product::*;
pub use report::*;
pub use run::*;
pub use settings::*;
pub use tools::*;

/// Register the MT tools, in dependency order.
pub fn register(reg: &mut Registry) -> Result<(), RegistryError> {
    register_all(
        reg,
        [
            Tool::new(
                "load_mt_sites",
                "Read magnetotelluric (MT) transfer-function files (EDI, EMTF XML, .zmm/.zrr/.zss Z-files, BIRRP J-files, Zonge AVG, or period/rho/phase tables) named by the project's mt_files list or found in its mt_dir folder; reports periods, units, sign convention and tipper per site.",
                load_mt_sites,
            )
            .produces(&[keys::MT_DATA])
            .label("Read the MT sites")
            .module("mt")
            .agent("MT")
            .when(|ctx| ctx.has_input(keys::MT_FILES) || ctx.has_input(keys::MT_DIR)),
            Tool::new(
                "invert_mt",
                "Invert each MT site for a smooth 1D layered resistivity model with Occam's method (Constable et al. 1987) at the target RMS; settings under mt_params (mode det/xy/yx/both, error_floor_percent, n_layers, static_shift). Draws apparent resistivity and phase with the fit and the layered models with their depth of investigation.",
                invert_mt,
            )
            .requires(&[keys::MT_DATA])
            .produces(&[keys::MT_RESULTS])
            .label("Invert the MT sites (Occam 1D)")
            .module("mt")
            .adjusts(&[keys::MT_PARAMS])
            .agent("MT"),
            Tool::new(
                "evaluate_mt_inversion",
                "Judge each MT inversion with the shared quality rubric (fit from RMS, static shift, plausibility) and state whether a 1D interpretation is defensible from the phase-tensor skew, Swift skew and strike; writes the MT section of the report.",
                evaluate_mt,
            )
            .requires(&[keys::MT_RESULTS])
            .produces(&[keys::MT_EVALUATION])
            .label("Evaluate the MT inversions")
            .module("mt")
            .agent("MT"),
            Tool::new(
                "convert_mt_water_content",
                "Convert the MT layered models to volumetric water content per layer (Archie / Waxman-Smits with Monte Carlo uncertainty, petrophysical_params) and write water_content_by_layer.csv. Only for requests that ask for water content when the run has no ERT model.",
                convert_mt_water_content,
            )
            .requires(&[keys::MT_RESULTS])
            .produces(&[keys::WATER_CONTENT])
            .label("Convert MT resistivity to water content")
            .module("mt")
            .adjusts(&[keys::PETROPHYSICAL_PARAMS, keys::N_REALIZATIONS])
            .agent("MT")
            .when(|ctx| {
                intent::wants(&ctx.goal, keys::WATER_CONTENT)
                    && ctx.product(keys::WATER_CONTENT).is_none()
                    && !super::ert::ert_model_in_run(ctx)
            })
            .applies(|ctx| !super::ert::ert_model_in_run(ctx)),
        ],
    )
}

/// A JSON summary of an MT data file, or `None` when it is not one.
pub fn read_summary(path: &std::path::Path) -> Option<Result<serde_json::Value, ReadError>> {
    crate::methods::mt::read_summary(path)
}
