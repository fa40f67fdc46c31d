//! The gravity/magnetics tools: `load_gravmag_data` reads the station table named by the
//! `gravmag_file` input and decides what it measures; `invert_gravmag` removes the regional
//! trend, grids the maps and inverts the residual for a 3D density-contrast or susceptibility
//! model ([`crate::methods::gravmag::pipeline::invert_table`]); `evaluate_gravmag_inversion`
//! judges the model with the shared rubric ([`crate::methods::quality`]).
//!
//! **What was measured is never guessed.** The field kind comes, in order, from the setting
//! `gravmag_kind`, the column names and the file name, and — only when those say nothing —
//! the request. When it still cannot be decided (no evidence, or evidence for both gravity
//! and magnetics) the user is asked with the candidates and the evidence; with nobody there
//! the default answer is to stop, with an error that says how to set `gravmag_kind`.
//!
//! Settings: `gravmag_params` ([`GravMagParams`]), `gravmag_kind` (text, [`parse_kind`]) and
//! `magnetic_field` ([`MagneticFieldParams`]); all three are declared adjustable by the tools
//! that read them (a recovery may change them).
//!
//! The studio's Grav/Mag panel calls [`run::load`] and [`run::invert`] — the functions the
//! tools call.

pub mod export;
pub mod figures;
pub mod product;
pub mod report;
pub mod run;
pub mod settings;
#[cfg(test)]
mod tests;
pub mod tools;

use super::kit::format::{num as fmt, range, range_words};
use super::kit::keys;
use super::kit::markdown::cell;
use super::kit::paths::file_name;
use super::kit::register_all;
use super::kit::{Held, draw_figure, figure_path, held, planned_path, product_path, write_csv};
use crate::methods::gravmag::GravMagError;
use crate::methods::gravmag::grid::{Grid2D, GridOptions};
use crate::methods::gravmag::inversion::{
    BetaOutcome, DEPTH_WARNING, GravMagEvaluation, InversionOptions, Weighting,
    evaluate_gravmag_inversion,
};
use crate::methods::gravmag::kind::{EvidenceSource, Family, FieldKind, KindInference, Quantity};
use crate::methods::gravmag::mesh::{MeshOptions, TensorMesh};
use crate::methods::gravmag::pipeline::{TableInversion, TableInversionOptions, invert_table};
use crate::methods::gravmag::prism::InducingField;
use crate::methods::gravmag::stations::{ReadOptions, StationTable, read_station_table};
use crate::methods::io::ReadError;
use crate::report::figures::{self as plot, Axes, ColourScale, FigureError, Palette, Series};
use crate::runtime::tool::RegistryError;
use crate::runtime::{JsonProduct, Outputs, QuestionOption, Registry, RunContext, Tool};
use anyhow::{anyhow, bail};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

pub use export::*;
pub use figures::*;
pub use product::*;
use report::*;
pub use run::*;
pub use settings::*;
pub use tools::*;

/// Register the gravity/magnetics tools, in dependency order.
pub fn register(reg: &mut Registry) -> Result<(), RegistryError> {
    register_all(
        reg,
        [
            Tool::new(
                "load_gravmag_data",
                "Read the gravity or magnetic station table (x, y, value[, z] or longitude/latitude, CSV or text) and decide what it measures (gravity in mGal or magnetics in nT) from the setting gravmag_kind, the column names, the file name or the request; asks the user when that is ambiguous. Draws the stations.",
                load_gravmag_data,
            )
            .produces(&[keys::GRAVMAG_DATA])
            .label("Load gravity/magnetic stations")
            .module("gravmag")
            .adjusts(&[keys::GRAVMAG_KIND])
            .agent("gravity/magnetics")
            .when(|ctx| ctx.has_input(DATA_ROLE)),
            Tool::new(
                "invert_gravmag",
                "Remove a polynomial regional trend (gravmag_params.trend_degree), grid the observed, regional and residual maps, and invert the residual for a 3D density-contrast (gravity) or susceptibility (magnetics, inducing field from magnetic_field) model on a tensor mesh with depth weighting, smoothness and bounds, β searched to χ² 1 ± 0.2. Writes the maps, model slices, the model cells CSV and ESRI ASCII grids.",
                invert_gravmag,
            )
            .requires(&[keys::GRAVMAG_DATA])
            .produces(&[keys::GRAVMAG_RESULTS, MODEL_3D])
            .label("Invert gravity/magnetics in 3D")
            .module("gravmag")
            .adjusts(&[keys::GRAVMAG_PARAMS, keys::GRAVMAG_KIND, keys::MAGNETIC_FIELD])
            .agent("gravity/magnetics")
            .when(data_is_mappable),
            Tool::new(
                "evaluate_gravmag_inversion",
                "Judge the 3D gravity/magnetic model with the studio's quality rubric: data fit from χ², cells at a bound, how the β search ended, and the standing warning that depth comes from the weighting.",
                evaluate_gravmag,
            )
            .requires(&[keys::GRAVMAG_RESULTS])
            .produces(&[keys::GRAVMAG_EVALUATION])
            .label("Evaluate the gravity/magnetic model")
            .module("gravmag")
            .agent("gravity/magnetics"),
        ],
    )
}

/// A JSON summary of a gravmag data file, or `None` when it is not one.
pub fn read_summary(path: &std::path::Path) -> Option<Result<serde_json::Value, ReadError>> {
    crate::methods::gravmag::read_summary(path)
}
