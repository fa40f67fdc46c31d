//! The ERT tools, in dependency order: `load_ert_surveys` → `invert_ert` (one survey) or
//! `invert_time_lapse` (two or more) → `evaluate_inversion` (the shared quality rubric with λ
//! retries) → `convert_water_content` (only when the goal asks for it) and `derive_structure`
//! (re-inversion with a seismic interface as a boundary smoothing does not cross).
//!
//! A model finished on the studio's ERT page can stand in for the run's own inversion
//! (`load_studio_inversion`, `take_studio_inversion`, [`handover`]): the studio writes it with
//! its settings to the folder the run's `studio_inversion_dir` names, and the run evaluates,
//! interprets and reports that model instead of inverting again.
//!
//! Figures: a pseudosection per survey, the model under the real surface with coverage
//! masking, the data fit, the χ² history, water content with its uncertainty. Products: the
//! model cells as CSV (units in the column names), VTK for ParaView and the model bundle
//! folder `ert_model/` (`model.json`, `cells.csv`, `model.vtk`) the studio reopens.

pub mod export;
pub mod figures;
pub mod handover;
#[cfg(test)]
mod handover_tests;
pub mod product;
pub mod report;
pub mod run;
pub mod settings;
#[cfg(test)]
mod tests;
pub mod tools;

use super::intent;
use super::kit::keys;
use super::kit::register_all;
use super::kit::settings::n_realizations;
use super::kit::{Held, InterfaceLine, figure_path, held, planned_path, write_csv, write_product};
use crate::methods::ert::evaluation::{Assessable, Evaluation, EvaluationSettings, evaluate};
use crate::methods::ert::inversion::{
    InversionError, InversionParams, InversionResult, IterationRecord, ModelSection, StopReason,
    invert_survey,
};
use crate::methods::ert::mesh::Interface;
use crate::methods::ert::readers::read_survey_with_electrodes;
use crate::methods::ert::timelapse::{
    TimeLapseMethod, TimeLapseResult, TimeStep, invert_time_lapse_epochs, survey_label,
};
use crate::methods::ert::{Instrument, Survey, SurveySet, qc, read_survey};
use crate::methods::io::ReadError;
use crate::methods::petro::{
    MonteCarloOptions, PetroConfig, PetroPrior, PriorSource, UserPetroParams, WaterContent,
    WaterContentInput, water_content as petro_water_content,
};
use crate::methods::quality::Quality;
use crate::report::figures::{Axes, ColourScale, Palette, Series, Style, cell_section, line_plot};
use crate::runtime::tool::RegistryError;
use crate::runtime::{Outputs, Registry, RunContext, Tool, ToolResult};
use anyhow::anyhow;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use export::*;
pub use figures::*;
pub use handover::*;
pub use product::*;
use report::*;
pub use run::*;
pub use settings::*;
pub use tools::*;

fn n_surveys(ctx: &RunContext) -> usize {
    held::<SurveySet>(ctx, keys::ERT_DATA).map_or(0, |s| s.surveys.len())
}

/// Whether the run has, or will have, an ERT model: then ERT's conversion is the run's water
/// content, and the layered methods (TDEM, MT) do not make their own.
pub fn ert_model_in_run(ctx: &RunContext) -> bool {
    ctx.product(keys::INVERSION_RESULTS).is_some()
        || ctx.projected(keys::INVERSION_RESULTS)
        || ctx.has_input(keys::ERT_FILES)
        || ctx.has_input(keys::ERT_FILE)
}

/// Surveys the run has or will have: loaded ones, else the files given.
fn surveys_expected(ctx: &RunContext) -> usize {
    let n = n_surveys(ctx);
    if n > 0 {
        return n;
    }
    let files = ctx.input_paths(keys::ERT_FILES).len();
    if files > 0 {
        files
    } else {
        usize::from(ctx.has_input(keys::ERT_FILE))
    }
}

/// The tool that takes the studio's ERT page's model over on the route.
pub const LOAD_STUDIO_INVERSION: &str = "load_studio_inversion";
/// The tool a model may propose to take the ERT page's model over off the route.
pub const TAKE_STUDIO_INVERSION: &str = "take_studio_inversion";

/// Whether the run carries on from the ERT page's model, so it does not invert itself: the
/// model was taken over, or the studio handed one over and taking it has not been tried or
/// left out yet (a failed or refused take-over leaves the run's own inversion to run).
pub fn studio_model_in_place(ctx: &RunContext) -> bool {
    ctx.ran(LOAD_STUDIO_INVERSION)
        || ctx.ran(TAKE_STUDIO_INVERSION)
        || (ctx.has_input(keys::STUDIO_INVERSION_DIR)
            && ctx.attempted(LOAD_STUDIO_INVERSION) == 0
            && !ctx.skipped(LOAD_STUDIO_INVERSION))
}

/// Register the ERT tools, in dependency order.
pub fn register(reg: &mut Registry) -> Result<(), RegistryError> {
    let tools = [
        Tool::new(
            "load_ert_surveys",
            "Read the ERT data files (any supported instrument format, with the electrode table when given), report counts, ranges and dates, and draw a pseudosection per survey.",
            load_ert_surveys,
        )
        .produces(&[keys::ERT_DATA])
        .label("Load ERT data")
        .module("ert")
        .adjusts(&[keys::INSTRUMENT])
        .adapts(keys::ELECTRODE_FILE, 3, "3 columns: number (index), x (m), elevation (m)")
        .when(|ctx| ctx.has_input(keys::ERT_FILES) || ctx.has_input(keys::ERT_FILE)),
        Tool::new(
            LOAD_STUDIO_INVERSION,
            "Take over the ERT inversion the user already ran on the studio's ERT page (the folder studio_inversion_dir names), so the run carries on from that model instead of inverting again; the model must be of the data loaded. Offered only when the studio handed its page's inversion to the run; use it before any inversion.",
            take_studio_model,
        )
        .requires(&[keys::ERT_DATA])
        .produces(&[keys::INVERSION_RESULTS])
        .label("Take over the studio inversion")
        .module("ert")
        .proposable(false)
        .when(|ctx| ctx.has_input(keys::STUDIO_INVERSION_DIR) && !ctx.has(&[keys::INVERSION_RESULTS])),
        Tool::new(
            TAKE_STUDIO_INVERSION,
            "Bring the inversion finished on the studio's ERT page into this run (for example one run there with other settings), so this run evaluates, interprets and reports that model; steps already built on the run's own model run again on it.",
            take_studio_model,
        )
        .requires(&[keys::ERT_DATA])
        .produces(&[keys::INVERSION_RESULTS])
        .label("Take over the ERT page's inversion")
        .module("ert")
        .when(|_| false)
        .applies(|ctx| ctx.has_input(keys::STUDIO_INVERSION_DIR)),
        Tool::new(
            "invert_time_lapse",
            "Invert two or more ERT surveys of one line together (time_lapse_method: simultaneous, difference, ratio or independent; temporal_regularization α) and map the change against the first.",
            invert_time_lapse_tool,
        )
        .requires(&[keys::ERT_DATA])
        .produces(&[keys::INVERSION_RESULTS])
        .label("Run time-lapse inversion")
        .module("ert")
        .adjusts(&[keys::INVERSION_PARAMS, keys::TIME_LAPSE_METHOD, keys::TEMPORAL_REGULARIZATION, keys::TIME_LAPSE_EPOCHS, keys::COVERAGE_THRESHOLD])
        .when(|ctx| surveys_expected(ctx) >= 2 && !studio_model_in_place(ctx)),
        Tool::new(
            "invert_ert",
            "Invert one ERT survey for a 2D resistivity section (Gauss–Newton on log resistivity with smoothness, under the real surface), with coverage per cell.",
            invert_ert,
        )
        .requires(&[keys::ERT_DATA])
        .produces(&[keys::INVERSION_RESULTS])
        .label("Run ERT inversion")
        .module("ert")
        .adjusts(&[keys::INVERSION_PARAMS, keys::COVERAGE_THRESHOLD])
        .when(|ctx| surveys_expected(ctx) == 1 && !studio_model_in_place(ctx)),
        Tool::new(
            "evaluate_inversion",
            "Score the ERT model (data fit, smoothness, plausibility, convergence, residual pattern by pseudosection level and electrode; pass mark quality_threshold) and, when it fails, invert again with λ halved or doubled up to max_attempts, keeping the best.",
            evaluate_inversion,
        )
        .requires(&[keys::INVERSION_RESULTS])
        .produces(&[keys::EVALUATION_RESULTS])
        .label("Evaluate inversion quality")
        .module("ert"),
        Tool::new(
            "estimate_ert_doi",
            "The depth of investigation index of a single-survey ERT model (Oldenburg & Li 1999): two more inversions with reference models a factor 10 each side; says how deep the data determine the model. Runs when the project's depth_of_investigation setting is true.",
            estimate_ert_doi,
        )
        .requires(&[keys::ERT_DATA, keys::INVERSION_RESULTS])
        .produces(&[keys::ERT_DOI])
        .label("Estimate the depth of investigation")
        .module("ert")
        .when(|ctx| ctx.config_bool(keys::DEPTH_OF_INVESTIGATION, false)),
        Tool::new(
            "derive_structure",
            "Re-invert the first ERT survey with the seismic interface as a boundary the smoothness does not cross, and say whether the constraint was used.",
            derive_structure,
        )
        .requires(&[keys::SEISMIC_STRUCTURE, keys::INVERSION_RESULTS])
        .produces(&[keys::STRUCTURE_RESULTS])
        .label("Constrain ERT with the seismic structure")
        .module("ert"),
        Tool::new(
            "convert_water_content",
            "Convert the evaluated ERT model to volumetric water content (Archie or Waxman–Smits) with Monte Carlo uncertainty over petrophysical_params (n_realizations draws); says loudly when the parameters are generic defaults.",
            convert_water_content,
        )
        .requires(&[keys::INVERSION_RESULTS, keys::EVALUATION_RESULTS])
        .produces(&[keys::WATER_CONTENT])
        .label("Convert to water content")
        .module("ert")
        .adjusts(&[keys::PETROPHYSICAL_PARAMS, keys::N_REALIZATIONS, keys::COVERAGE_THRESHOLD])
        .adjusts(&[keys::COVERAGE_THRESHOLD])
        .adjusts(&[keys::QUALITY_THRESHOLD, keys::MAX_ATTEMPTS, keys::AUTO_ADJUST, keys::COVERAGE_THRESHOLD])
        .when(|ctx| intent::wants(&ctx.goal, keys::WATER_CONTENT)),
    ];
    register_all(reg, tools)
}

/// A JSON summary of an ERT data file, or `None` when it is not one.
pub fn read_summary(path: &Path) -> Option<Result<serde_json::Value, ReadError>> {
    crate::methods::ert::read_summary(path)
}
