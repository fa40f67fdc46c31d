//! The GPR tools: `load_gpr_line` reads the radar line named by the `gpr_file` input and
//! draws it as recorded; `process_gpr_line` runs the processing chain of
//! [`crate::methods::gpr::process`] with the settings `gpr_params`, and writes the processed
//! line (`.npz`), its radargram (PNG) and the recipe (JSON).
//!
//! **A depth needs a velocity somebody gave.** In order: the project setting
//! `gpr_velocity_m_per_ns` or `gpr_permittivity` (a user value), the εr in the file header
//! (the operator's instrument setting — said so, loudly), and for a CMP/WARR gather a
//! hyperbolic-semblance analysis of the gather itself. Without any, the line stays in
//! two-way time and the summary says why. These two keys are not adjustable settings (no
//! tool declares them for a recovery to change): no recovery may choose a velocity.
//!
//! The studio's GPR panel calls [`read`] and [`process`] — the same functions the tools call.

pub mod export;
pub mod figures;
pub mod product;
pub mod report;
pub mod run;
pub mod settings;
#[cfg(test)]
mod tests;
pub mod tools;

use super::kit::format::num as short;
use super::kit::keys;
use super::kit::markdown::cell as escape;
use super::kit::paths::file_name;
use super::kit::register_all;
use super::kit::{Held, draw_figure, figure_path, held, planned_path, product_path};
use crate::methods::gpr::evaluation::evaluate_line;
use crate::methods::gpr::process::{Domain, ProcessedLine, ProcessingParams, process_line};
use crate::methods::gpr::sidefiles::{Topography, read_topography};
use crate::methods::gpr::velocity::{
    GatherAnalysis, GatherAnalysisParams, VelocitySource, analyse_gather,
    velocity_from_permittivity,
};
use crate::methods::gpr::{self, GprLine, SurveyKind};
use crate::methods::io::{ReadError, year_first_date};
use crate::report::figures::{self as plot, Axes, ColourScale, FigureError, Palette, Series};
use crate::runtime::context::compact;
use crate::runtime::tool::RegistryError;
use crate::runtime::{Outputs, Registry, RunContext, Tool};
use anyhow::anyhow;
use ndarray::ArrayView2;
use serde::Serialize;
use serde_json::{Map, Value, json};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use export::*;
pub use figures::*;
pub use product::*;
pub use report::*;
pub use run::*;
pub use settings::*;
use tools::*;

/// Register the GPR tools, in dependency order.
pub fn register(reg: &mut Registry) -> Result<(), RegistryError> {
    register_all(
        reg,
        [
            Tool::new(
                "load_gpr_line",
                "Read the ground-penetrating radar (GPR) line named by the gpr_file input (GSSI DZT, pulseEKKO DT1+HD, MALA rd3/rd7+rad or SEG-Y): traces, samples, time window, antenna, the header's permittivity setting, marks, survey kind; draws the radargram as recorded.",
                load_gpr_line,
            )
            .produces(&[keys::GPR_DATA])
            .label("Read the GPR line")
            .module("gpr")
            .agent("GPR reader")
            .when(|ctx| ctx.has_input(DATA_ROLE)),
            Tool::new(
                "process_gpr_line",
                "Process the GPR line that was read: time zero, dewow, band-pass, optional background removal and gains, Stolt migration and time-to-depth, every step recorded in a recipe (settings: gpr_params). Depth needs a velocity somebody gave: the project setting gpr_velocity_m_per_ns or gpr_permittivity, else the header's permittivity (an instrument setting), else a semblance analysis when the line is a CMP/WARR gather; without any the line stays in two-way time. Writes the processed line (.npz), its radargram and the recipe JSON.",
                process_gpr_line,
            )
            .requires(&[keys::GPR_DATA])
            .produces(&[keys::GPR_RESULTS])
            .label("Process the GPR line")
            .module("gpr")
            .adjusts(&[keys::GPR_PARAMS])
            .agent("GPR processing"),
        ],
    )
}

/// A JSON summary of a gpr data file, or `None` when it is not one.
pub fn read_summary(path: &std::path::Path) -> Option<Result<serde_json::Value, ReadError>> {
    crate::methods::gpr::read_summary(path)
}
