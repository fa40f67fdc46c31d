//! The hydrological-model tools (issue 26): a MODFLOW or ParFlow model's output beside the
//! geophysics.
//!
//! * `load_model_output` reads the files of the `model_output_files` input (ParFlow `.pfb`
//!   saturation / pressure / porosity, MODFLOW heads with the `.grb` of `model_grid_file`),
//!   places the geophysical line in the model's grid (`hydro_params`) and draws the model's
//!   water table and water content along it ([`model`]);
//! * `forward_model_output` turns the model's water content into resistivity by the run's
//!   petrophysical relation and forwards it onto the ERT survey's own quadrupoles: does the
//!   model explain the data ([`forward`])?
//! * `compare_model_output` compares the model with the run's geophysical answers — water
//!   table and water content — once they exist ([`compare`]).
//!
//! Not in this version: sampling at TDEM / MT sites and the seismic travel-time forward of a
//! model's velocity; the report says so when those methods are in the run.

pub mod compare;
pub mod figures;
pub mod forward;
pub mod model;
pub mod report;
pub mod settings;
#[cfg(test)]
mod tests;
pub mod tools;

use super::kit::{keys, register_all};
use crate::runtime::tool::RegistryError;
use crate::runtime::{Registry, RunContext, Tool};

pub use compare::{ModelComparison, Verdict};
pub use forward::ForwardComparison;
pub use model::HydroModel;
pub use settings::HydroSettings;

/// The module the hydrological-model steps carry (their report section).
pub const MODULE: &str = "hydro";

/// The step that waits for the run's answers.
pub const COMPARE_TOOL: &str = "compare_model_output";

/// Whether the comparison can still run (the report waits for it; the answers do not).
pub fn comparison_pending(ctx: &RunContext) -> bool {
    super::shared_registry()
        .get(COMPARE_TOOL)
        .is_some_and(|t| t.available(ctx))
}

/// Register the hydrological-model tools.
pub fn register(reg: &mut Registry) -> Result<(), RegistryError> {
    register_all(
        reg,
        [
            Tool::new(
                "load_model_output",
                "Read water content, saturation, pressure head or heads from a hydrological model (ParFlow .pfb files, MODFLOW heads with the MODFLOW 6 .grb grid) named by the model_output_files input, place the geophysical line in the model's grid (hydro_params: line_origin, line_azimuth_deg, elevation_shift_m) and draw the model's water table and water content along it, for comparison with the geophysics.",
                tools::load_model_output,
            )
            .produces(&[keys::MODEL_OUTPUT])
            .label("Load the hydrological model")
            .module(MODULE)
            .agent("Hydrological model")
            .when(|ctx| ctx.has_input(keys::MODEL_OUTPUT_FILES)),
            Tool::new(
                "forward_model_output",
                "Turn the hydrological model's water content into resistivity by the run's petrophysical relation (Archie / Waxman–Smits, with its Monte Carlo spread) and compute the ERT data it implies on the survey's own quadrupoles by the 2.5D forward; the misfit (χ²) against the measured data says whether the model explains the geophysics. Run after the ERT inversion is evaluated.",
                tools::forward_model_output,
            )
            .requires(&[
                keys::MODEL_OUTPUT,
                keys::ERT_DATA,
                keys::INVERSION_RESULTS,
                keys::EVALUATION_RESULTS,
            ])
            .produces(&[keys::MODEL_FORWARD])
            .label("Predict the ERT data from the model")
            .module(MODULE)
            .adjusts(&[keys::HYDRO_PARAMS])
            .agent("Hydrological model"),
            Tool::new(
                COMPARE_TOOL,
                "Compare the hydrological model with the run's geophysical answers: its water table along the line against the water-table answer and each method's evidence, its water content against the ERT water content by depth band and cell (difference map, table by depth, correlation), judged against the geophysics' uncertainty. Runs once the questions are answered.",
                tools::compare_model_output,
            )
            .requires(&[keys::MODEL_OUTPUT, keys::INVERSION_RESULTS])
            .produces(&[keys::MODEL_COMPARISON])
            .label("Compare the model with the geophysics")
            .module(MODULE)
            .agent("Hydrological model")
            .when(|ctx| {
                !super::reporting::method_steps_pending(ctx)
                    && !super::answers::interpretation_pending(ctx)
            }),
        ],
    )
}
