//! The seismic refraction tools: first-break picking from raw shots, loading travel-time
//! files, tomography, its evaluation by the shared rubric with λ retries, and interfaces at
//! threshold velocities (handed on as `keys::SEISMIC_STRUCTURE` for the ERT structural
//! constraint). Each tool calls the functions of `methods::seismic`, the same ones the
//! studio's seismic panel calls.

pub mod export;
pub mod figures;
pub mod product;
pub mod report;
pub mod run;
pub mod settings;
#[cfg(test)]
mod tests;
pub mod tools;

use super::kit::format::range;
use super::kit::keys;
use super::kit::paths::file_name;
use super::kit::register_all;
use super::kit::{Held, InterfaceLine, draw_figure, held, write_product};
use crate::methods::io::ReadError;
use crate::methods::quality::{Attempt, MAX_ATTEMPTS, Retried, retry_lambda};
use crate::methods::seismic::evaluate::{SeismicEvaluation, evaluate as evaluate_model};
use crate::methods::seismic::gather::ShotGather;
use crate::methods::seismic::interfaces::{
    DEFAULT_THRESHOLD_M_PER_S, Interface, InterfaceSet, extract_interfaces,
};
use crate::methods::seismic::inversion::{
    InversionParams, SeismicInversion, invert as invert_tomography,
};
use crate::methods::seismic::picking::{
    PickParams, ShotPicks, pick_gather, picks_to_traveltimes, reciprocal_check,
};
use crate::methods::seismic::{Topography, TravelTimes, seg2, segy, sgt, tables};
use crate::report::figures::{self as plot, Axes, ColourScale, Palette, Series, Style};
use crate::runtime::tool::RegistryError;
use crate::runtime::{Outputs, QuestionOption, Registry, RunContext, Tool, ToolResult};
use anyhow::{Context, anyhow, bail};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use export::*;
pub use figures::*;
pub use product::*;
use report::*;
pub use run::*;
pub use settings::*;
pub use tools::*;

/// Register the seismic tools, in dependency order.
pub fn register(reg: &mut Registry) -> Result<(), RegistryError> {
    register_all(
        reg,
        [
            Tool::new(
                "pick_first_breaks",
                "Pick first-arrival times on raw seismic shot gathers (SEG-Y or SEG-2): threshold picks, a monotone curve per shot side, stray picks re-picked by AIC, shots that disagree with their reciprocals flagged. Only when no travel-time file was given.",
                pick_first_breaks,
            )
            .produces(&[keys::SEISMIC_PICKS])
            .label("Pick first breaks")
            .module("seismic")
            .adjusts(&[keys::FIRST_BREAK_PARAMS, keys::ALIGN_ORIGIN])
            .adapts(keys::GEOPHONE_FILE, 3, "3 columns: number (index), x (m), elevation (m)")
            .when(|ctx| {
                (ctx.has_input(keys::SEGY_FILE) || ctx.has_input(keys::SEG2_FILES))
                    && !ctx.has_input(keys::SEISMIC_FILE)
            }),
            Tool::new(
                "load_seismic_traveltimes",
                "Read seismic first-arrival travel times (pyGIMLi .sgt or a CSV of source_x, receiver_x, time[, err]) with an optional topography table.",
                load_seismic_traveltimes,
            )
            .produces(&[keys::SEISMIC_TRAVELTIMES])
            .label("Load seismic travel times")
            .module("seismic")
            .adapts(keys::TOPOGRAPHY_FILE, 2, "2 columns: x (m), elevation (m)")
            .when(|ctx| ctx.has_input(keys::SEISMIC_FILE)),
            Tool::new(
                "invert_seismic",
                "Invert first-arrival travel times (from a file or from picks) for a 2D P-velocity model by Gauss–Newton travel-time tomography with smoothness; 3 % error assumed when the data give none.",
                invert_seismic,
            )
            .produces(&[keys::SEISMIC_RESULTS])
            .label("Run seismic tomography")
            .module("seismic")
            .adjusts(&[keys::SEISMIC_INVERSION_PARAMS])
            .when(|ctx| ctx.has(&[keys::SEISMIC_TRAVELTIMES]) || ctx.has(&[keys::SEISMIC_PICKS])),
            Tool::new(
                "evaluate_seismic_inversion",
                "Score the seismic velocity model by the shared quality rubric (data fit, ray coverage of the interpreted zone, plausibility, convergence, residual pattern by shot and offset, oscillation) and, when it fails, re-invert with λ halved or doubled (max_attempts, auto_adjust), keeping the best model.",
                evaluate_seismic_inversion,
            )
            .requires(&[keys::SEISMIC_RESULTS])
            .produces(&[keys::SEISMIC_EVALUATION])
            .label("Evaluate the seismic model")
            .module("seismic"),
            Tool::new(
                "extract_seismic_interfaces",
                "Trace interfaces in the seismic velocity model at threshold velocities (velocity_threshold or velocity_thresholds, 1200 m/s by default), write them as x,z tables, and hand them on as the structure the ERT inversion can use.",
                extract_seismic_interfaces,
            )
            .requires(&[keys::SEISMIC_RESULTS])
            .produces(&[keys::SEISMIC_STRUCTURE])
            .label("Extract seismic interfaces")
            .module("seismic")
            .adjusts(&[keys::VELOCITY_THRESHOLD, keys::VELOCITY_THRESHOLDS])
            .adjusts(&[keys::MAX_ATTEMPTS, keys::AUTO_ADJUST])
            .when(|ctx| {
                ctx.has(&[keys::SEISMIC_EVALUATION])
                    || ctx.attempted("evaluate_seismic_inversion") > 0
                    || ctx.skipped("evaluate_seismic_inversion")
            }),
        ],
    )
}

/// A JSON summary of a seismic data file, or `None` when it is not one.
pub fn read_summary(path: &std::path::Path) -> Option<Result<serde_json::Value, ReadError>> {
    crate::methods::seismic::read_summary(path)
}
