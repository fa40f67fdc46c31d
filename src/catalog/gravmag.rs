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
//! `magnetic_field` ([`MagneticFieldParams`]); all three are adjustable
//! (`runtime::recovery::ADJUSTABLE`).
//!
//! The studio's Grav/Mag panel calls [`load`] and [`invert`] — the functions the tools call.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::{anyhow, bail};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::common::{Held, figure_path, held, product_path, write_csv};
use super::keys;
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
use crate::report::figures::{self, Axes, ColourScale, FigureError, Palette, Series};
use crate::runtime::{JsonProduct, Outputs, QuestionOption, Registry, RunContext, Tool};

/// The input role of the station table.
pub const DATA_ROLE: &str = "gravmag_file";
/// The processing and inversion settings ([`GravMagParams`]).
pub const PARAMS_KEY: &str = "gravmag_params";
/// The declared field kind (text, see [`parse_kind`]).
pub const KIND_KEY: &str = "gravmag_kind";
/// The inducing field for magnetics ([`MagneticFieldParams`]).
pub const FIELD_KEY: &str = "magnetic_field";
/// The artifact a request for "a 3D model" is answered by (`catalog::intent`); made by
/// `invert_gravmag` beside [`keys::GRAVMAG_RESULTS`].
pub const MODEL_3D: &str = "model_3d";
/// The answer that stops instead of choosing a kind.
const STOP: &str = "stop";

// ----- settings ----------------------------------------------------------------------------

/// The settings of `invert_gravmag` (`gravmag_params`). Every field has a default; an
/// unknown key is an error naming the valid ones.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GravMagParams {
    /// Degree of the regional polynomial trend removed before the inversion (0–3).
    pub trend_degree: usize,
    /// At most this many block-averaged stations are inverted.
    pub max_stations: usize,
    /// Height of the stations above the flat mesh top when the table has no z, m.
    pub station_height_m: f64,
    /// Node spacing of the maps, m; default: from the mean station spacing.
    pub grid_spacing_m: Option<f64>,
    /// Horizontal core cell of the mesh, m; default: from the station extent and spacing.
    pub core_cell_m: Option<f64>,
    /// Depth of the mesh core below its top, m; default: half the station extent.
    pub core_depth_m: Option<f64>,
    /// Padding cells on each side and below the core.
    pub padding_cells: usize,
    /// Relative part of the data standard deviation (0.03 = 3 %).
    pub relative_error: f64,
    /// Absolute floor of the standard deviation of gravity data, mGal; default 1 % of the
    /// largest |residual|.
    pub error_floor_mgal: Option<f64>,
    /// Absolute floor of the standard deviation of magnetic data, nT; default 1 % of the
    /// largest |residual|.
    pub error_floor_nt: Option<f64>,
    /// The χ² the β search aims for.
    pub target_chi2: f64,
    /// Accepted distance of χ² from the target.
    pub chi2_tolerance: f64,
    /// At most this many exact solves in the β search.
    pub max_solves: usize,
    /// Smoothness length scale, m; default four times the smallest horizontal cell.
    pub length_scale_m: Option<f64>,
    /// Exponent of the depth weighting; default 1 for gravity, 2 for magnetics.
    pub depth_weighting_exponent: Option<f64>,
    /// Use sensitivity-based weighting instead of depth weighting.
    pub sensitivity_weighting: bool,
    /// Bounds of the density contrast, g/cm³; default ±1.
    pub density_bounds_g_per_cc: Option<[f64; 2]>,
    /// Bounds of the susceptibility, SI; default ±0.5.
    pub susceptibility_bounds_si: Option<[f64; 2]>,
    /// A fixed β instead of the search.
    pub beta: Option<f64>,
}

impl Default for GravMagParams {
    fn default() -> Self {
        let d = TableInversionOptions::default();
        GravMagParams {
            trend_degree: d.trend_degree,
            max_stations: d.max_stations,
            station_height_m: d.station_height_m,
            grid_spacing_m: None,
            core_cell_m: None,
            core_depth_m: None,
            padding_cells: d.mesh.padding_cells,
            relative_error: d.inversion.relative_error,
            error_floor_mgal: None,
            error_floor_nt: None,
            target_chi2: d.inversion.target_chi2,
            chi2_tolerance: d.inversion.chi2_tolerance,
            max_solves: d.inversion.max_solves,
            length_scale_m: None,
            depth_weighting_exponent: None,
            sensitivity_weighting: false,
            density_bounds_g_per_cc: None,
            susceptibility_bounds_si: None,
            beta: None,
        }
    }
}

impl GravMagParams {
    /// Refuse settings the chain cannot use, saying which and why.
    pub fn validate(&self) -> Result<(), String> {
        let positive = |name: &str, v: Option<f64>| match v {
            Some(x) if !(x.is_finite() && x > 0.0) => Err(format!(
                "{PARAMS_KEY}.{name} must be a positive number; found {x}"
            )),
            _ => Ok(()),
        };
        if self.trend_degree > 3 {
            return Err(format!(
                "{PARAMS_KEY}.trend_degree must be 0, 1, 2 or 3; found {}",
                self.trend_degree
            ));
        }
        if self.max_stations < 3 {
            return Err(format!(
                "{PARAMS_KEY}.max_stations must be at least 3; found {}",
                self.max_stations
            ));
        }
        if !(self.station_height_m.is_finite() && self.station_height_m >= 0.0) {
            return Err(format!(
                "{PARAMS_KEY}.station_height_m must be 0 or more; found {}",
                self.station_height_m
            ));
        }
        positive("grid_spacing_m", self.grid_spacing_m)?;
        positive("core_cell_m", self.core_cell_m)?;
        positive("core_depth_m", self.core_depth_m)?;
        positive("error_floor_mgal", self.error_floor_mgal)?;
        positive("error_floor_nt", self.error_floor_nt)?;
        positive("length_scale_m", self.length_scale_m)?;
        positive("depth_weighting_exponent", self.depth_weighting_exponent)?;
        positive("beta", self.beta)?;
        if !(self.relative_error.is_finite() && (0.0..1.0).contains(&self.relative_error)) {
            return Err(format!(
                "{PARAMS_KEY}.relative_error is a fraction in [0, 1) (0.03 = 3 %); found {}",
                self.relative_error
            ));
        }
        if !(self.target_chi2.is_finite() && self.target_chi2 > 0.0) {
            return Err(format!(
                "{PARAMS_KEY}.target_chi2 must be positive; found {}",
                self.target_chi2
            ));
        }
        if !(self.chi2_tolerance.is_finite() && self.chi2_tolerance > 0.0) {
            return Err(format!(
                "{PARAMS_KEY}.chi2_tolerance must be positive; found {}",
                self.chi2_tolerance
            ));
        }
        if !(1..=20).contains(&self.max_solves) {
            return Err(format!(
                "{PARAMS_KEY}.max_solves must be 1 to 20; found {}",
                self.max_solves
            ));
        }
        if self.padding_cells > 12 {
            return Err(format!(
                "{PARAMS_KEY}.padding_cells must be 0 to 12; found {}",
                self.padding_cells
            ));
        }
        for (name, b) in [
            ("density_bounds_g_per_cc", self.density_bounds_g_per_cc),
            ("susceptibility_bounds_si", self.susceptibility_bounds_si),
        ] {
            if let Some([lo, hi]) = b
                && !(lo.is_finite() && hi.is_finite() && lo < hi)
            {
                return Err(format!(
                    "{PARAMS_KEY}.{name} must be [lower, upper] with lower < upper; found [{lo}, {hi}]"
                ));
            }
        }
        Ok(())
    }

    /// The method options for a table of `family`, with the inducing field `field`.
    pub fn options(&self, family: Family, field: Option<InducingField>) -> TableInversionOptions {
        let d = TableInversionOptions::default();
        let weighting = if self.sensitivity_weighting {
            Some(Weighting::Sensitivity)
        } else {
            self.depth_weighting_exponent.map(|e| Weighting::Depth {
                exponent: e,
                z0_m: None,
            })
        };
        let (error_floor, bounds) = match family {
            Family::Gravity => (
                self.error_floor_mgal,
                // g/cm³ → kg/m³.
                self.density_bounds_g_per_cc
                    .map(|[a, b]| (a * 1000.0, b * 1000.0)),
            ),
            Family::Magnetic => (
                self.error_floor_nt,
                self.susceptibility_bounds_si.map(|[a, b]| (a, b)),
            ),
        };
        TableInversionOptions {
            trend_degree: self.trend_degree,
            max_stations: self.max_stations,
            station_height_m: self.station_height_m,
            grid: GridOptions {
                spacing_m: self.grid_spacing_m,
                ..d.grid
            },
            mesh: MeshOptions {
                core_cell_m: self.core_cell_m,
                core_depth_m: self.core_depth_m,
                padding_cells: self.padding_cells,
                ..d.mesh
            },
            inversion: InversionOptions {
                relative_error: self.relative_error,
                error_floor,
                target_chi2: self.target_chi2,
                chi2_tolerance: self.chi2_tolerance,
                max_solves: self.max_solves,
                length_scale_m: self.length_scale_m,
                weighting,
                bounds,
                beta: self.beta,
                ..d.inversion
            },
            inducing_field: field,
        }
    }
}

/// The inducing geomagnetic field (`magnetic_field`): all three values or none.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MagneticFieldParams {
    /// Total intensity |F|, nT.
    pub intensity_nt: Option<f64>,
    /// Inclination, degrees below the horizontal (−90 to 90).
    pub inclination_deg: Option<f64>,
    /// Declination, degrees east of north.
    pub declination_deg: Option<f64>,
}

impl MagneticFieldParams {
    /// The field, `None` when nothing was given; an error for a partial or impossible field.
    pub fn field(&self) -> Result<Option<InducingField>, String> {
        match (
            self.intensity_nt,
            self.inclination_deg,
            self.declination_deg,
        ) {
            (None, None, None) => Ok(None),
            (Some(f), Some(i), Some(d)) => {
                if !(f.is_finite() && f > 0.0) {
                    return Err(format!(
                        "{FIELD_KEY}.intensity_nt must be positive (about 25 000 to 65 000 nT on Earth); found {f}"
                    ));
                }
                if !(i.is_finite() && (-90.0..=90.0).contains(&i)) {
                    return Err(format!(
                        "{FIELD_KEY}.inclination_deg must be between −90 and 90; found {i}"
                    ));
                }
                if !d.is_finite() {
                    return Err(format!("{FIELD_KEY}.declination_deg must be a number"));
                }
                Ok(Some(InducingField {
                    intensity_nt: f,
                    inclination_deg: i,
                    declination_deg: d,
                }))
            }
            _ => Err(format!(
                "{FIELD_KEY} needs all of intensity_nt, inclination_deg and declination_deg (the IGRF values at the survey), not some of them"
            )),
        }
    }
}

/// The kinds `gravmag_kind` accepts, with the words that name them.
const KIND_WORDS: &[(&str, Quantity)] = &[
    ("gravity", Quantity::GravityUnspecified),
    ("bouguer", Quantity::BouguerAnomaly),
    ("bouguer_anomaly", Quantity::BouguerAnomaly),
    ("free_air", Quantity::FreeAirAnomaly),
    ("free_air_anomaly", Quantity::FreeAirAnomaly),
    ("gravity_disturbance", Quantity::GravityDisturbance),
    ("observed_gravity", Quantity::ObservedGravity),
    ("magnetic", Quantity::MagneticUnspecified),
    ("magnetics", Quantity::MagneticUnspecified),
    ("tmi", Quantity::TotalFieldAnomaly),
    ("total_field_anomaly", Quantity::TotalFieldAnomaly),
];

/// The kind named by `text` (case and `-`/space insensitive): `gravity`, `bouguer`,
/// `free_air`, `gravity_disturbance`, `observed_gravity`, `magnetic`, `tmi`,
/// `total_field_anomaly`; an error lists them.
pub fn parse_kind(text: &str) -> Result<FieldKind, String> {
    let key = text.trim().to_lowercase().replace(['-', ' '], "_");
    KIND_WORDS
        .iter()
        .find(|(w, _)| *w == key)
        .map(|(_, q)| FieldKind::of(*q))
        .ok_or_else(|| {
            format!(
                "{KIND_KEY} \"{text}\" is not a kind this studio knows; use one of {}",
                KIND_WORDS
                    .iter()
                    .map(|(w, _)| *w)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
}

/// The `gravmag_kind` word for a quantity (the option id of the kind question).
pub fn kind_word(q: Quantity) -> &'static str {
    match q {
        Quantity::BouguerAnomaly => "bouguer",
        Quantity::FreeAirAnomaly => "free_air",
        Quantity::GravityDisturbance => "gravity_disturbance",
        Quantity::ObservedGravity => "observed_gravity",
        Quantity::GravityUnspecified => "gravity",
        Quantity::TotalFieldAnomaly => "tmi",
        Quantity::MagneticUnspecified => "magnetic",
    }
}

// ----- the functions the tools and the panel call --------------------------------------------

/// Read the station table at `path`. The kind is `declared` when given; otherwise it comes
/// from the column names and the file name, and only when those say nothing from `request`
/// (a request that mentions both methods must not contradict a clear header).
pub fn load(
    path: &Path,
    declared: Option<FieldKind>,
    request: Option<&str>,
) -> Result<StationTable, ReadError> {
    let first = read_station_table(
        path,
        &ReadOptions {
            kind: declared,
            ..ReadOptions::default()
        },
    )?;
    match (&first.kind, request) {
        (KindInference::Ambiguous { evidence, .. }, Some(r)) if evidence.is_empty() => {
            read_station_table(
                path,
                &ReadOptions {
                    request: Some(r.to_string()),
                    ..ReadOptions::default()
                },
            )
        }
        _ => Ok(first),
    }
}

/// Run the chain on `table` (kind resolved): trend, maps, mesh, inversion, predicted and
/// misfit maps, evaluation. `progress` gets (fraction, detail); `cancel` is checked between
/// the solves.
pub fn invert(
    table: &StationTable,
    params: &GravMagParams,
    field: Option<InducingField>,
    progress: &mut dyn FnMut(f64, &str),
    cancel: &AtomicBool,
) -> Result<TableInversion, String> {
    params.validate()?;
    let family = table.family().ok_or_else(|| {
        "what the table measures is not decided (gravity or magnetics): set gravmag_kind"
            .to_string()
    })?;
    let options = params.options(family, field);
    invert_table(table, &options, Some(progress), Some(cancel)).map_err(|e| match e {
        GravMagError::Cancelled => "stopped by the user before the inversion finished".into(),
        GravMagError::AmbiguousKind(q) => format!("{q} Set {KIND_KEY} and run again."),
        other => other.to_string(),
    })
}

// ----- the products --------------------------------------------------------------------------

/// The station table as the run holds it (`keys::GRAVMAG_DATA` holds `Held<GravMagData>`).
#[derive(Debug, Clone, Serialize)]
pub struct GravMagData {
    /// The file read.
    pub source_file: PathBuf,
    /// The table (kind resolved).
    pub table: StationTable,
    /// What the kind rests on, in words.
    pub kind_basis: String,
}

/// The maps and the model as the run holds them (`keys::GRAVMAG_RESULTS` holds
/// `Held<GravMagResults>`).
#[derive(Debug, Clone, Serialize)]
pub struct GravMagResults {
    /// The settings used.
    pub params: GravMagParams,
    /// The inducing field given (`None`: not given; the assumed one is in the notes).
    pub inducing_field: Option<InducingField>,
    /// Everything the chain computed.
    pub result: TableInversion,
}

/// The verdict as the run holds it (`keys::GRAVMAG_EVALUATION` holds
/// `Held<GravMagVerdict>`).
#[derive(Debug, Clone, Serialize)]
pub struct GravMagVerdict {
    /// The rubric's verdict.
    pub evaluation: GravMagEvaluation,
    /// How the β search ended.
    pub beta_outcome: BetaOutcome,
    /// Cells at a bound.
    pub bound_hits: usize,
    /// Cells in the model.
    pub n_cells: usize,
    /// Final χ².
    pub chi2: f64,
}

// ----- small helpers ------------------------------------------------------------------------

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

fn fmt(v: f64) -> String {
    crate::runtime::product::short_num(v)
}

fn range(v: &[f64]) -> (f64, f64) {
    v.iter()
        .filter(|x| x.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        })
}

fn range_words(v: &[f64], unit: &str) -> String {
    let (a, b) = range(v);
    if a.is_finite() {
        format!("{} to {} {unit}", fmt(a), fmt(b))
    } else {
        "no finite values".into()
    }
}

/// Markdown table cell text (pipes escaped, one line).
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn evidence_words(kind: &KindInference) -> String {
    match kind {
        KindInference::Resolved { evidence, .. } => {
            let parts: Vec<String> = evidence
                .iter()
                .map(|e| {
                    let src = match e.source {
                        EvidenceSource::Header => "the column name",
                        EvidenceSource::FileName => "the file name",
                        EvidenceSource::Request => "the request",
                        EvidenceSource::Declared => "the setting gravmag_kind",
                    };
                    if e.source == EvidenceSource::Declared {
                        src.to_string()
                    } else {
                        format!("\"{}\" in {src}", e.keyword)
                    }
                })
                .collect();
            parts.join(", ")
        }
        KindInference::Ambiguous { .. } => "undecided".into(),
    }
}

/// The model value in the unit of the exports: density contrast in g/cm³ (from kg/m³) or
/// susceptibility in SI.
fn model_export_value(family: Family, v: f64) -> f64 {
    match family {
        Family::Gravity => v / 1000.0,
        Family::Magnetic => v,
    }
}

fn model_label(family: Family) -> &'static str {
    match family {
        Family::Gravity => "Density contrast (g/cm³)",
        Family::Magnetic => "Susceptibility (SI)",
    }
}

fn model_column(family: Family) -> &'static str {
    match family {
        Family::Gravity => "density_contrast_g_per_cc",
        Family::Magnetic => "susceptibility_SI",
    }
}

fn unit_suffix(family: Family) -> &'static str {
    match family {
        Family::Gravity => "mgal",
        Family::Magnetic => "nt",
    }
}

// ----- figures and exports -----------------------------------------------------------------

/// A grid as rows for [`figures::image`]: row 0 is the northernmost, unsupported nodes NaN.
pub fn grid_rows(g: &Grid2D) -> Vec<Vec<f64>> {
    let v = g.masked_values();
    (0..g.ny)
        .rev()
        .map(|iy| v[iy * g.nx..(iy + 1) * g.nx].to_vec())
        .collect()
}

/// The area a node-registered grid covers: half a spacing beyond the outer nodes.
pub fn grid_extent(g: &Grid2D) -> (f64, f64, f64, f64) {
    let h = 0.5 * g.spacing_m;
    (
        g.x0_m - h,
        g.x(g.nx.saturating_sub(1)) + h,
        g.y0_m - h,
        g.y(g.ny.saturating_sub(1)) + h,
    )
}

/// Write a grid as an ESRI ASCII raster (node-registered: `xllcenter`/`yllcenter`; rows
/// from north to south; unsupported nodes as `NODATA_value`).
pub fn write_esri_ascii(path: &Path, g: &Grid2D) -> std::io::Result<()> {
    const NODATA: f64 = -99_999.0;
    let mut s = String::new();
    let _ = writeln!(s, "ncols {}", g.nx);
    let _ = writeln!(s, "nrows {}", g.ny);
    let _ = writeln!(s, "xllcenter {}", g.x0_m);
    let _ = writeln!(s, "yllcenter {}", g.y0_m);
    let _ = writeln!(s, "cellsize {}", g.spacing_m);
    let _ = writeln!(s, "NODATA_value {NODATA}");
    for row in grid_rows(g) {
        let line: Vec<String> = row
            .iter()
            .map(|v| {
                if v.is_finite() {
                    format!("{v}")
                } else {
                    format!("{NODATA}")
                }
            })
            .collect();
        let _ = writeln!(s, "{}", line.join(" "));
    }
    std::fs::write(path, s)
}

/// The first and last index of the cells of the smallest width along an axis (the core; the
/// padding cells are wider).
pub fn core_range(widths: &[f64]) -> (usize, usize) {
    let min = widths.iter().copied().fold(f64::INFINITY, f64::min);
    let is_core = |w: &f64| *w <= min * (1.0 + 1e-6);
    let first = widths.iter().position(is_core).unwrap_or(0);
    let last = widths
        .iter()
        .rposition(is_core)
        .unwrap_or(widths.len().saturating_sub(1));
    (first, last)
}

/// The index of the cell along an axis (`nodes` ascending) holding `v`, clamped to the mesh.
pub fn cell_index(nodes: &[f64], v: f64) -> usize {
    let n_cells = nodes.len().saturating_sub(1).max(1);
    nodes
        .partition_point(|n| *n <= v)
        .saturating_sub(1)
        .min(n_cells - 1)
}

/// The cell holding the anomaly centroid, or the cell of the largest |value|.
pub fn focus_cell(
    mesh: &TensorMesh,
    model: &[f64],
    centroid: Option<[f64; 3]>,
) -> (usize, usize, usize) {
    match centroid {
        Some(c) => (
            cell_index(&mesh.nodes_x_m, c[0]),
            cell_index(&mesh.nodes_y_m, c[1]),
            cell_index(&mesh.nodes_z_m, c[2]),
        ),
        None => {
            let k = model
                .iter()
                .enumerate()
                .fold(
                    (0, f64::MIN),
                    |a, (k, v)| {
                        if v.abs() > a.1 { (k, v.abs()) } else { a }
                    },
                )
                .0;
            mesh.ijk(k)
        }
    }
}

/// Which slice of the model a figure shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slice {
    /// A horizontal slice of layer `iz` (x–y).
    Depth(usize),
    /// A vertical section along x at row `iy` (x–z).
    AlongX(usize),
    /// A vertical section along y at column `ix` (y–z).
    AlongY(usize),
}

/// The core cells of one slice as polygons with their model values (export unit).
pub fn slice_cells(
    mesh: &TensorMesh,
    model: &[f64],
    family: Family,
    slice: Slice,
) -> (Vec<Vec<(f64, f64)>>, Vec<f64>) {
    let (cx, cy, cz) = (
        core_range(&mesh.widths_x()),
        core_range(&mesh.widths_y()),
        core_range(&mesh.widths_z()),
    );
    let (nx, ny, nz) = (
        mesh.nodes_x_m.clone(),
        mesh.nodes_y_m.clone(),
        mesh.nodes_z_m.clone(),
    );
    let rect = |a0: f64, a1: f64, b0: f64, b1: f64| vec![(a0, b0), (a1, b0), (a1, b1), (a0, b1)];
    let mut cells = Vec::new();
    let mut values = Vec::new();
    let value = |i: usize, j: usize, k: usize| {
        model
            .get(mesh.index(i, j, k))
            .map_or(f64::NAN, |v| model_export_value(family, *v))
    };
    match slice {
        Slice::Depth(k) => {
            for j in cy.0..=cy.1 {
                for i in cx.0..=cx.1 {
                    cells.push(rect(nx[i], nx[i + 1], ny[j], ny[j + 1]));
                    values.push(value(i, j, k));
                }
            }
        }
        Slice::AlongX(j) => {
            for k in cz.0..=cz.1 {
                for i in cx.0..=cx.1 {
                    cells.push(rect(nx[i], nx[i + 1], nz[k], nz[k + 1]));
                    values.push(value(i, j, k));
                }
            }
        }
        Slice::AlongY(i) => {
            for k in cz.0..=cz.1 {
                for j in cy.0..=cy.1 {
                    cells.push(rect(ny[j], ny[j + 1], nz[k], nz[k + 1]));
                    values.push(value(i, j, k));
                }
            }
        }
    }
    (cells, values)
}

fn map_axes(title: &str) -> Axes {
    Axes::new(title, "Easting x (m)", "Northing y (m)").equal()
}

fn draw_grid(
    path: &Path,
    title: &str,
    g: &Grid2D,
    scale: &ColourScale,
    overlays: &[Series],
) -> Result<(), FigureError> {
    figures::image(
        path,
        &map_axes(title),
        &grid_rows(g),
        grid_extent(g),
        scale,
        overlays,
    )
}

/// The maps of a run (observed, regional, residual, predicted, misfit) and three model
/// slices through the anomaly: (path, caption) each.
fn draw_results(
    ctx: &RunContext,
    r: &TableInversion,
) -> Result<Vec<(PathBuf, String)>, FigureError> {
    let io = |e: std::io::Error| FigureError::Draw {
        path: "figures/".into(),
        message: e.to_string(),
    };
    let family = r.kind.family;
    let unit = family.unit();
    let what = r.kind.quantity.words();
    let mut out = Vec::new();
    let observed = r.observed_grid.masked_values();
    let p = figure_path(ctx, "gravmag_observed_map").map_err(io)?;
    let scale = ColourScale::fit(
        &observed,
        false,
        &format!("Observed ({unit})"),
        Palette::Viridis,
    );
    draw_grid(
        &p,
        &format!("Observed {what}"),
        &r.observed_grid,
        &scale,
        &[],
    )?;
    out.push((
        p,
        format!("Observed {what} gridded by minimum curvature ({unit})."),
    ));

    let p = figure_path(ctx, "gravmag_regional_map").map_err(io)?;
    let scale = ColourScale::fit(
        &r.regional_grid.masked_values(),
        false,
        &format!("Regional ({unit})"),
        Palette::Viridis,
    );
    draw_grid(&p, "Regional trend", &r.regional_grid, &scale, &[])?;
    out.push((
        p,
        format!(
            "Regional trend: degree-{} polynomial fitted by least squares ({unit}).",
            r.regional_residual.trend.degree
        ),
    ));

    // Residual and predicted share one symmetric scale so they can be compared by eye.
    let residual = r.residual_grid.masked_values();
    let shared = ColourScale::symmetric(&residual, &format!("Residual ({unit})"));
    let p = figure_path(ctx, "gravmag_residual_map").map_err(io)?;
    draw_grid(
        &p,
        "Residual (observed − regional)",
        &r.residual_grid,
        &shared,
        &[],
    )?;
    out.push((
        p,
        format!("Residual anomaly: observed minus regional ({unit})."),
    ));

    let st = &r.inverted_stations;
    let stations = if st.x_m.len() <= 1000 {
        vec![Series::points("stations inverted", st.x_m.clone(), st.y_m.clone()).colour((0, 0, 0))]
    } else {
        Vec::new()
    };
    let p = figure_path(ctx, "gravmag_predicted_map").map_err(io)?;
    let pred_scale = ColourScale {
        label: format!("Predicted ({unit})"),
        ..shared.clone()
    };
    draw_grid(
        &p,
        "Predicted by the 3D model",
        &r.predicted_grid,
        &pred_scale,
        &stations,
    )?;
    out.push((
        p,
        format!("Data predicted by the 3D model at the inverted stations, gridded ({unit}); same colour scale as the residual."),
    ));

    let p = figure_path(ctx, "gravmag_misfit_map").map_err(io)?;
    let scale = ColourScale::symmetric(
        &r.misfit_grid.masked_values(),
        &format!("Observed − predicted ({unit})"),
    );
    draw_grid(
        &p,
        "Misfit (residual − predicted)",
        &r.misfit_grid,
        &scale,
        &stations,
    )?;
    out.push((
        p,
        format!("Misfit: residual minus predicted at the inverted stations, gridded ({unit})."),
    ));

    let inv = &r.inversion;
    let mesh = &inv.mesh;
    let (i, j, k) = focus_cell(mesh, &inv.model, inv.anomaly_centroid_m);
    let label = model_label(family);
    let scale = ColourScale::symmetric(
        &inv.model
            .iter()
            .map(|v| model_export_value(family, *v))
            .collect::<Vec<_>>(),
        label,
    );
    let top = mesh.top_m();
    let zc = 0.5 * (mesh.nodes_z_m[k] + mesh.nodes_z_m[k + 1]);
    let xc = 0.5 * (mesh.nodes_x_m[i] + mesh.nodes_x_m[i + 1]);
    let yc = 0.5 * (mesh.nodes_y_m[j] + mesh.nodes_y_m[j + 1]);
    let slices = [
        (
            Slice::Depth(k),
            "gravmag_model_depth_slice",
            format!(
                "Model at z = {} m ({} m below the mesh top)",
                fmt(zc),
                fmt(top - zc)
            ),
            "Easting x (m)",
            "Northing y (m)",
        ),
        (
            Slice::AlongX(j),
            "gravmag_model_section_x",
            format!("Model section along x at y = {} m", fmt(yc)),
            "Easting x (m)",
            "Elevation z (m)",
        ),
        (
            Slice::AlongY(i),
            "gravmag_model_section_y",
            format!("Model section along y at x = {} m", fmt(xc)),
            "Northing y (m)",
            "Elevation z (m)",
        ),
    ];
    for (slice, name, title, xl, yl) in slices {
        let (cells, values) = slice_cells(mesh, &inv.model, family, slice);
        let p = figure_path(ctx, name).map_err(io)?;
        figures::cell_section(
            &p,
            &Axes::new(&title, xl, yl),
            &cells,
            &values,
            &scale,
            None,
            &[],
        )?;
        out.push((
            p,
            format!(
                "{title}: {} of the core cells through the anomaly centroid ({label}). Depth in this model comes from the depth weighting, not from the data.",
                label.to_lowercase()
            ),
        ));
    }
    Ok(out)
}

/// Write the products of a run for other programs: the model cells (CSV, units in the
/// column names), the stations with regional and residual, the inverted stations with
/// predicted values, and the five maps as ESRI ASCII grids.
fn write_products(
    ctx: &RunContext,
    r: &TableInversion,
    table: &StationTable,
) -> std::io::Result<Vec<PathBuf>> {
    let family = r.kind.family;
    let u = unit_suffix(family);
    let inv = &r.inversion;
    let mesh = &inv.mesh;
    let mut files = Vec::new();

    let p = product_path(ctx, "gravmag_model_cells.csv")?;
    let (wx, wy, wz) = (mesh.widths_x(), mesh.widths_y(), mesh.widths_z());
    let rows: Vec<Vec<f64>> = (0..inv.model.len().min(mesh.n_cells()))
        .map(|c| {
            let (i, j, k) = mesh.ijk(c);
            let centre = mesh.centre(c);
            vec![
                centre[0],
                centre[1],
                centre[2],
                wx[i],
                wy[j],
                wz[k],
                model_export_value(family, inv.model[c]),
            ]
        })
        .collect();
    write_csv(
        &p,
        &[
            "x_m",
            "y_m",
            "z_m",
            "dx_m",
            "dy_m",
            "dz_m",
            model_column(family),
        ],
        &rows,
    )?;
    files.push(p);

    let p = product_path(ctx, "gravmag_stations.csv")?;
    let rr = &r.regional_residual;
    let z = table.z_m.clone();
    let rows: Vec<Vec<f64>> = (0..table.n_stations)
        .map(|k| {
            vec![
                table.x_m[k],
                table.y_m[k],
                z.as_ref().map_or(f64::NAN, |z| z[k]),
                table.value[k],
                rr.regional[k],
                rr.residual[k],
            ]
        })
        .collect();
    let h = [
        "x_m".to_string(),
        "y_m".into(),
        "z_m".into(),
        format!("observed_{u}"),
        format!("regional_{u}"),
        format!("residual_{u}"),
    ];
    write_csv(&p, &h.iter().map(String::as_str).collect::<Vec<_>>(), &rows)?;
    files.push(p);

    let p = product_path(ctx, "gravmag_inverted_stations.csv")?;
    let st = &r.inverted_stations;
    let rows: Vec<Vec<f64>> = (0..st.value.len())
        .map(|k| {
            vec![
                st.x_m[k],
                st.y_m[k],
                st.z_m[k],
                st.value[k],
                inv.predicted.get(k).copied().unwrap_or(f64::NAN),
                inv.standard_deviation.get(k).copied().unwrap_or(f64::NAN),
            ]
        })
        .collect();
    let h = [
        "x_m".to_string(),
        "y_m".into(),
        "z_m".into(),
        format!("residual_{u}"),
        format!("predicted_{u}"),
        format!("std_{u}"),
    ];
    write_csv(&p, &h.iter().map(String::as_str).collect::<Vec<_>>(), &rows)?;
    files.push(p);

    for (name, g) in [
        ("observed", &r.observed_grid),
        ("regional", &r.regional_grid),
        ("residual", &r.residual_grid),
        ("predicted", &r.predicted_grid),
        ("misfit", &r.misfit_grid),
    ] {
        let p = product_path(ctx, &format!("gravmag_{name}_{u}.asc"))?;
        write_esri_ascii(&p, g)?;
        files.push(p);
    }
    Ok(files)
}

// ----- report sections ---------------------------------------------------------------------

fn data_report(d: &GravMagData) -> String {
    let t = &d.table;
    let unit = t.value_unit.as_deref().unwrap_or("");
    let mut md = String::new();
    let _ = writeln!(md, "| Station table | |\n|---|---|");
    let _ = writeln!(
        md,
        "| File | `{}` ({}) |",
        cell(&file_name(&d.source_file)),
        cell(&t.format)
    );
    if let Some(k) = t.kind.kind() {
        let _ = writeln!(
            md,
            "| Measured | {} ({unit}), from {} |",
            k.quantity.words(),
            cell(&d.kind_basis)
        );
    }
    let _ = writeln!(
        md,
        "| Stations | {}{} |",
        t.n_stations,
        if t.skipped_rows > 0 {
            format!(" ({} rows without a value skipped)", t.skipped_rows)
        } else {
            String::new()
        }
    );
    let _ = writeln!(md, "| x (east) | {} |", range_words(&t.x_m, "m"));
    if !t.profile {
        let _ = writeln!(md, "| y (north) | {} |", range_words(&t.y_m, "m"));
    }
    if let Some(z) = &t.z_m {
        let _ = writeln!(md, "| Elevation | {} |", range_words(z, "m"));
    }
    let _ = writeln!(md, "| Values | {} |", range_words(&t.value, unit));
    if let Some(p) = &t.projection {
        let _ = writeln!(md, "| Projection | {} |", cell(&p.describe()));
    }
    if t.columns_guessed {
        let roles: Vec<String> = t
            .columns
            .iter()
            .map(|c| format!("{:?}", c.role).to_lowercase())
            .collect();
        let _ = writeln!(
            md,
            "| Columns | assumed: {} (no header) |",
            roles.join(", ")
        );
    }
    if !t.notes.is_empty() {
        md.push('\n');
        for n in &t.notes {
            let _ = writeln!(md, "- {n}");
        }
    }
    md
}

fn weighting_words(w: &Weighting) -> String {
    match w {
        Weighting::Depth { exponent, z0_m } => format!(
            "depth weighting (z + z0)^(−{}/2){}",
            fmt(*exponent),
            z0_m.map(|z| format!(", z0 = {} m", fmt(z)))
                .unwrap_or_default()
        ),
        Weighting::Sensitivity => "sensitivity weighting (Li & Oldenburg 2000)".into(),
    }
}

fn results_report(res: &GravMagResults) -> String {
    let r = &res.result;
    let inv = &r.inversion;
    let family = r.kind.family;
    let unit = family.unit();
    let mut md = String::new();
    let _ = writeln!(md, "**Settings used**\n");
    let _ = writeln!(md, "| Setting | Value |\n|---|---|");
    let _ = writeln!(
        md,
        "| Regional trend | degree {} polynomial, least squares |",
        r.regional_residual.trend.degree
    );
    let _ = writeln!(
        md,
        "| Stations inverted | {} of {} (at most {}{}) |",
        inv.n_data,
        r.regional_residual.residual.len(),
        res.params.max_stations,
        if r.inverted_stations.block_m > 0.0 {
            format!(
                "; block averages in {} m squares",
                fmt(r.inverted_stations.block_m)
            )
        } else {
            String::new()
        }
    );
    let _ = writeln!(
        md,
        "| Map node spacing | {} m (minimum curvature, tension 0.25) |",
        fmt(r.residual_grid.spacing_m)
    );
    let m = &inv.mesh;
    let _ = writeln!(
        md,
        "| Mesh | {} × {} × {} = {} cells; core cells {} m × {} m × {} m |",
        m.nx(),
        m.ny(),
        m.nz(),
        inv.n_cells,
        fmt(r.mesh.core_cell_m),
        fmt(r.mesh.core_cell_m),
        fmt(r.mesh.core_cell_z_m)
    );
    let (slo, shi) = range(&inv.standard_deviation);
    let _ = writeln!(
        md,
        "| Data errors | {} % relative + floor; σ from {} to {} {unit} |",
        fmt(res.params.relative_error * 100.0),
        fmt(slo),
        fmt(shi)
    );
    let _ = writeln!(
        md,
        "| Target χ² | {} ± {}, at most {} exact solves |",
        fmt(inv.beta_search.target_chi2),
        fmt(inv.beta_search.tolerance),
        res.params.max_solves
    );
    let _ = writeln!(md, "| Weighting | {} |", weighting_words(&inv.weighting));
    let _ = writeln!(
        md,
        "| Smoothness | α_s = {}, length scale {} m |",
        fmt(inv.alpha_s),
        fmt(inv.length_scale_m)
    );
    let (blo, bhi) = inv.bounds;
    let _ = writeln!(
        md,
        "| Bounds | {} to {} {} |",
        fmt(model_export_value(family, blo)),
        fmt(model_export_value(family, bhi)),
        match family {
            Family::Gravity => "g/cm³",
            Family::Magnetic => "SI",
        }
    );
    if let Some(f) = &res.inducing_field {
        let _ = writeln!(
            md,
            "| Inducing field | {} nT, I = {}°, D = {}° (given) |",
            fmt(f.intensity_nt),
            fmt(f.inclination_deg),
            fmt(f.declination_deg)
        );
    }
    let _ = writeln!(md, "\n**Results**\n");
    let _ = writeln!(md, "| Result | Value |\n|---|---|");
    let tr = &r.regional_residual.trend;
    let terms: Vec<String> = tr
        .terms
        .iter()
        .zip(&tr.coefficients)
        .map(|(&(a, b), c)| match (a, b) {
            (0, 0) => format!("{c:.6e}"),
            _ => format!("{c:.6e}·x^{a}·y^{b}"),
        })
        .collect();
    let _ = writeln!(
        md,
        "| Regional polynomial ({unit}, x and y in m) | {} |",
        cell(&terms.join(" + "))
    );
    let _ = writeln!(md, "| Residual RMS | {} {unit} |", fmt(tr.residual_rms));
    let _ = writeln!(md, "| χ² | {} |", fmt(inv.chi2));
    let _ = writeln!(md, "| rRMS | {} % |", fmt(inv.rrms_percent));
    let _ = writeln!(md, "| β (λ) | {:.4e} |", inv.lambda);
    let _ = writeln!(
        md,
        "| β search | {:?}: {} |",
        inv.beta_search.outcome,
        cell(&inv.beta_search.note)
    );
    let _ = writeln!(
        md,
        "| Cells at a bound | {} of {} |",
        inv.bound_hits, inv.n_cells
    );
    let model: Vec<f64> = inv
        .model
        .iter()
        .map(|v| model_export_value(family, *v))
        .collect();
    let _ = writeln!(
        md,
        "| Model range | {} |",
        range_words(
            &model,
            match family {
                Family::Gravity => "g/cm³",
                Family::Magnetic => "SI",
            }
        )
    );
    if let Some(c) = inv.anomaly_centroid_m {
        let _ = writeln!(
            md,
            "| Anomaly centroid | x {} m, y {} m, z {} m ({} m below the mesh top) |",
            fmt(c[0]),
            fmt(c[1]),
            fmt(c[2]),
            fmt(inv.mesh.top_m() - c[2])
        );
    }
    if let (Some(core), Some(total)) = (inv.excess_mass_kg, inv.excess_mass_total_kg) {
        let _ = writeln!(
            md,
            "| Excess mass | {} kg in the core cells ({} kg with the padding) |",
            fmt(core),
            fmt(total)
        );
    }
    let _ = writeln!(
        md,
        "\n**Exact solves** (each one is the exact minimiser for its β)\n"
    );
    let _ = writeln!(
        md,
        "| Solve | β | χ² before bounds | χ² | φ_m | Cells at a bound | Seconds |\n|---|---|---|---|---|---|---|"
    );
    for s in &inv.iteration_records {
        let _ = writeln!(
            md,
            "| {} | {:.4e} | {} | {} | {} | {} | {} |",
            s.iteration,
            s.lambda,
            fmt(s.chi2_unbounded),
            fmt(s.chi2),
            fmt(s.phi_m),
            s.bound_hits,
            fmt(s.seconds)
        );
    }
    let notes: Vec<&String> = r
        .notes
        .iter()
        .chain(&r.mesh.notes)
        .chain(&inv.notes)
        .collect();
    if !notes.is_empty() {
        md.push('\n');
        for n in notes {
            let _ = writeln!(md, "- {n}");
        }
    }
    md
}

fn verdict_report(v: &GravMagVerdict, res: &GravMagResults) -> String {
    let q = &v.evaluation.quality;
    let inv = &res.result.inversion;
    let mut md = String::new();
    let _ = writeln!(md, "| Quality | |\n|---|---|");
    let _ = writeln!(
        md,
        "| Score | {:.0}/100 (pass mark {:.0}): {} |",
        q.score,
        q.threshold,
        if q.passed { "passes" } else { "does not pass" }
    );
    if let Some(b) = q.band {
        let _ = writeln!(md, "| Fit | χ² {}: {} |", fmt(v.chi2), b.word());
    }
    let _ = writeln!(
        md,
        "| β search | {:?} after {} exact solve(s) |",
        v.beta_outcome, inv.iterations
    );
    let _ = writeln!(
        md,
        "| Cells at a bound | {} of {} |",
        v.bound_hits, v.n_cells
    );
    let _ = writeln!(
        md,
        "\n| Component | Weight | Score | Basis |\n|---|---|---|---|"
    );
    for c in &q.components {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} |",
            c.name,
            fmt(c.weight),
            c.score
                .map_or("not scored".to_string(), |s| format!("{s:.0}")),
            cell(&c.note)
        );
    }
    let kept = inv.iteration_records.last();
    if let Some(k) = kept {
        let _ = writeln!(
            md,
            "\nModel kept: solve {} (β {:.4e}, χ² {}) — {}",
            k.iteration,
            k.lambda,
            fmt(k.chi2),
            match v.beta_outcome {
                BetaOutcome::Converged =>
                    "the β search reached the target band; each solve is exact for its β, so no other model would fit as well with less structure.",
                BetaOutcome::Fixed => "β was given in the settings, not searched.",
                BetaOutcome::DataWithinNoise =>
                    "even the zero model fits the data within their errors: there is no anomaly the data require.",
                BetaOutcome::NotConverged =>
                    "the search used every solve allowed without reaching the target band; this is the closest model.",
            }
        );
    }
    md.push_str("\n**Warnings**\n\n");
    for w in &v.evaluation.warnings {
        let _ = writeln!(md, "- {w}");
    }
    if !v.evaluation.warnings.iter().any(|w| w == DEPTH_WARNING) {
        let _ = writeln!(md, "- {DEPTH_WARNING}");
    }
    md
}

// ----- the tools -----------------------------------------------------------------------------

/// The kind declared in the settings, if any.
/// The kind the project setting `gravmag_kind` declares (`None`: not set); an error for a
/// value that is not a kind ([`parse_kind`]). The panel uses it too.
pub fn declared_kind(ctx: &RunContext) -> anyhow::Result<Option<FieldKind>> {
    match ctx.config.get(KIND_KEY) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => parse_kind(s).map(Some).map_err(|e| anyhow!(e)),
        Some(other) => bail!(
            "the setting {KIND_KEY} must be text such as \"gravity\" or \"tmi\"; found {other}"
        ),
    }
}

/// `load_gravmag_data`.
pub fn load_gravmag_data(ctx: &mut RunContext) -> crate::runtime::ToolResult {
    let path = ctx
        .input_path(DATA_ROLE)
        .ok_or_else(|| anyhow!("no {DATA_ROLE} input: name the station table in project.json"))?;
    let declared = declared_kind(ctx)?;
    let goal = ctx.goal.clone();
    let table = load(&path, declared, Some(&goal)).map_err(|e| anyhow!("{e}"))?;
    let name = file_name(&path);
    let (table, basis) = match &table.kind {
        KindInference::Resolved { .. } => {
            let basis = evidence_words(&table.kind);
            (table, basis)
        }
        KindInference::Ambiguous {
            candidates,
            evidence,
            question,
        } => {
            let mut options: Vec<QuestionOption> = candidates
                .iter()
                .map(|k| {
                    let (label, detail) = match k.family {
                        Family::Gravity => (
                            "Gravity (mGal)",
                            "Read the values as gravity in mGal (gz positive down) and invert for density contrast.",
                        ),
                        Family::Magnetic => (
                            "Magnetics (nT)",
                            "Read the values as a total-field magnetic anomaly in nT and invert for susceptibility.",
                        ),
                    };
                    QuestionOption::new(kind_word(k.quantity), label, detail)
                })
                .collect();
            options.push(QuestionOption::new(
                STOP,
                "Stop: I will set gravmag_kind",
                "Do not load the table; set gravmag_kind in the project settings and run again.",
            ));
            let found = if evidence.is_empty() {
                "no evidence".to_string()
            } else {
                evidence
                    .iter()
                    .map(|e| format!("\"{}\"", e.keyword))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let answer = ctx.ask(
                &format!("{name}: {question} (found: {found})"),
                &options,
                STOP,
            );
            if answer == STOP {
                bail!(
                    "what {name} measures could not be decided: {question} The studio does not guess; set the project setting {KIND_KEY} to \"gravity\" (mGal) or \"magnetic\" (nT) — or bouguer, free_air, gravity_disturbance, tmi — and run again"
                );
            }
            let kind = parse_kind(&answer).map_err(|e| anyhow!(e))?;
            (
                table.clone().with_kind(kind),
                format!("the user's answer to: {question}"),
            )
        }
    };
    // The reader's notes that record a guess or a loss go to the run's warnings; the others
    // (projection used, columns not used) are in the report's table.
    const WARN: &[&str] = &[
        "no header",
        "comment line",
        "longitude and",
        "non-positive",
        "skipped",
        "converted",
    ];
    for n in &table.notes {
        if WARN.iter().any(|w| n.contains(w)) {
            ctx.note(&format!("{name}: {n}"));
        }
    }
    let unit = table.value_unit.clone().unwrap_or_default();
    let kind = table
        .kind
        .kind()
        .ok_or_else(|| anyhow!("internal: the kind of {name} was not resolved"))?;
    let mut summary = format!(
        "{} {} stations of {} ({unit}) in {name}: x {}",
        table.n_stations,
        kind.family.word(),
        kind.quantity.words(),
        range_words(&table.x_m, "m")
    );
    if !table.profile {
        let _ = write!(summary, ", y {}", range_words(&table.y_m, "m"));
    }
    if let Some(z) = &table.z_m {
        let _ = write!(summary, ", z {}", range_words(z, "m"));
    }
    let _ = write!(
        summary,
        "; values {}; kind from {basis}",
        range_words(&table.value, &unit)
    );
    if let Some(p) = &table.projection {
        let _ = write!(summary, "; longitude/latitude projected: {}", p.describe());
    }
    if table.profile {
        summary.push_str(
            "; a two-column profile (x, value): maps and the 3D inversion need x, y stations",
        );
    }
    summary.push('.');
    let mut outputs = Outputs::new();
    if !table.profile {
        let p = figure_path(ctx, "gravmag_stations")?;
        let scale = ColourScale::fit(
            &table.value,
            false,
            &format!("{} ({unit})", kind.quantity.words()),
            Palette::Viridis,
        );
        figures::station_map(
            &p,
            &map_axes(&format!("Stations: observed {}", kind.quantity.words())),
            &table.x_m,
            &table.y_m,
            &table.value,
            &scale,
        )?;
        outputs = outputs.figure(
            p,
            &format!(
                "Stations coloured by the observed {} ({unit}).",
                kind.quantity.words()
            ),
        );
    }
    let (vlo, vhi) = range(&table.value);
    let data = GravMagData {
        source_file: path.clone(),
        table,
        kind_basis: basis,
    };
    let report = data_report(&data);
    let detail = format!(
        "{} stations, {}; x {}, y {}; values {}",
        data.table.n_stations,
        data.table.format,
        range_words(&data.table.x_m, "m"),
        range_words(&data.table.y_m, "m"),
        range_words(&data.table.value, &unit)
    );
    let n = data.table.n_stations;
    let held = Held::new(data, summary.clone())
        .detail(detail)
        .report(report)
        .number("n_data", n)
        .number("value_min", vlo)
        .number("value_max", vhi)
        .number("value_unit", unit.as_str());
    Ok((summary, outputs.put(keys::GRAVMAG_DATA, Arc::new(held))))
}

/// `invert_gravmag`.
pub fn invert_gravmag(ctx: &mut RunContext) -> crate::runtime::ToolResult {
    let data = held::<GravMagData>(ctx, keys::GRAVMAG_DATA)
        .ok_or_else(|| anyhow!("no station table loaded: run load_gravmag_data first"))?
        .clone();
    let params: GravMagParams = ctx.params(PARAMS_KEY)?;
    params.validate().map_err(|e| anyhow!(e))?;
    let field_params: MagneticFieldParams = ctx.params(FIELD_KEY)?;
    let field = field_params.field().map_err(|e| anyhow!(e))?;
    let family = data
        .table
        .family()
        .ok_or_else(|| anyhow!("what the table measures is not decided: set {KIND_KEY}"))?;
    if family == Family::Magnetic && field.is_none() {
        ctx.note(
            "No inducing field was given (magnetic_field): I = 60°, D = 0°, 50 000 nT was assumed. Give the IGRF values of the survey for a real interpretation.",
        );
    }
    if family == Family::Gravity && field.is_some() {
        ctx.note("magnetic_field is set but the data are gravity: it was not used.");
    }
    let cancel = ctx.cancel_flag();
    let result = {
        let c: &RunContext = ctx;
        let mut progress = |f: f64, s: &str| c.progress(f, s);
        invert(&data.table, &params, field, &mut progress, &cancel)
    }
    .map_err(|e| anyhow!("{}: {e}", file_name(&data.source_file)))?;
    for w in &result.inversion.warnings {
        ctx.note(w);
    }
    let figs = draw_results(ctx, &result)?;
    let files = write_products(ctx, &result, &data.table)?;
    let inv = &result.inversion;
    let unit = family.unit();
    let model: Vec<f64> = inv
        .model
        .iter()
        .map(|v| model_export_value(family, *v))
        .collect();
    let mut summary = format!(
        "Regional: degree-{} trend removed (residual RMS {} {unit}). {} stations inverted on {} × {} × {} = {} cells: χ² {} after {} exact solve(s) (β {:.3e}, search {:?}), {} cells at a bound; {} {}",
        result.regional_residual.trend.degree,
        fmt(result.regional_residual.trend.residual_rms),
        inv.n_data,
        inv.mesh.nx(),
        inv.mesh.ny(),
        inv.mesh.nz(),
        inv.n_cells,
        fmt(inv.chi2),
        inv.iterations,
        inv.lambda,
        inv.beta_search.outcome,
        inv.bound_hits,
        model_label(family).to_lowercase(),
        range_words(&model, "")
    );
    if let Some(c) = inv.anomaly_centroid_m {
        let _ = write!(
            summary,
            "; anomaly centroid at x {} m, y {} m, {} m below the mesh top",
            fmt(c[0]),
            fmt(c[1]),
            fmt(inv.mesh.top_m() - c[2])
        );
    }
    if let Some(m) = inv.excess_mass_kg {
        let _ = write!(summary, "; excess mass {} kg", fmt(m));
    }
    summary.push_str(". The depth comes from the depth weighting, not from the data.");
    let res = GravMagResults {
        params: params.clone(),
        inducing_field: field,
        result,
    };
    let report = results_report(&res);
    let r = &res.result;
    let inv = &r.inversion;
    let detail = format!(
        "χ² {} (history {:?}); rRMS {} %; β {:.3e}; {} data, {} cells; model {}; maps {} × {} nodes at {} m",
        fmt(inv.chi2),
        inv.chi2_history.iter().map(|c| fmt(*c)).collect::<Vec<_>>(),
        fmt(inv.rrms_percent),
        inv.lambda,
        inv.n_data,
        inv.n_cells,
        range_words(&model, ""),
        r.residual_grid.nx,
        r.residual_grid.ny,
        fmt(r.residual_grid.spacing_m)
    );
    let model_csv = files[0].clone();
    let mut held = Held::new(res.clone(), summary.clone())
        .detail(detail)
        .report(report)
        .number("chi2", inv.chi2)
        .number("chi2_history", json!(inv.chi2_history))
        .number("rrms_percent", inv.rrms_percent)
        .number("iterations", inv.iterations)
        .number("lambda", inv.lambda)
        .number("n_data", inv.n_data)
        .number("n_cells", inv.n_cells)
        .number("bound_hits", inv.bound_hits)
        .number("trend_degree", r.regional_residual.trend.degree);
    if let Some(m) = inv.excess_mass_kg {
        held = held.number("excess_mass_kg", m);
    }
    for f in files {
        held = held.file(f);
    }
    let model_3d = JsonProduct::new(
        format!(
            "the 3D {} model of invert_gravmag ({} cells; see gravmag_results)",
            model_label(family).to_lowercase(),
            inv.n_cells
        ),
        json!({ "cells_csv": model_csv.display().to_string(), "n_cells": inv.n_cells }),
    );
    let mut outputs = Outputs::new()
        .put(keys::GRAVMAG_RESULTS, Arc::new(held))
        .put(MODEL_3D, Arc::new(model_3d));
    for (p, c) in figs {
        outputs = outputs.figure(p, &c);
    }
    Ok((summary, outputs))
}

/// The β search's χ² per solve, against the target band.
fn draw_beta_search(
    ctx: &RunContext,
    res: &GravMagResults,
) -> Result<Option<(PathBuf, String)>, FigureError> {
    let inv = &res.result.inversion;
    let recs = &inv.iteration_records;
    if recs.is_empty() || recs.iter().any(|r| !(r.lambda > 0.0 && r.chi2 > 0.0)) {
        return Ok(None);
    }
    let p = figure_path(ctx, "gravmag_beta_search").map_err(|e| FigureError::Draw {
        path: "figures/gravmag_beta_search.png".into(),
        message: e.to_string(),
    })?;
    let beta: Vec<f64> = recs.iter().map(|r| r.lambda).collect();
    let (b0, b1) = range(&beta);
    let (b0, b1) = if b1 > b0 {
        (b0 / 2.0, b1 * 2.0)
    } else {
        (b0 / 10.0, b1 * 10.0)
    };
    let t = inv.beta_search.target_chi2;
    let tol = inv.beta_search.tolerance;
    figures::line_plot(
        &p,
        &Axes::new(
            "β search: misfit of each exact solve",
            "β (regularisation weight)",
            "χ²",
        )
        .log(true, true),
        &[
            Series::points("solves", beta, recs.iter().map(|r| r.chi2).collect()),
            Series::line("target", vec![b0, b1], vec![t, t]).colour((40, 140, 40)),
            Series::line("target − tolerance", vec![b0, b1], vec![t - tol, t - tol])
                .style(figures::Style::Dashed)
                .colour((40, 140, 40)),
            Series::line("target + tolerance", vec![b0, b1], vec![t + tol, t + tol])
                .style(figures::Style::Dashed)
                .colour((40, 140, 40)),
        ],
    )?;
    Ok(Some((
        p,
        format!(
            "χ² of each exact solve against β (log–log), with the target {} ± {}.",
            fmt(t),
            fmt(tol)
        ),
    )))
}

/// `evaluate_gravmag_inversion`.
pub fn evaluate_gravmag(ctx: &mut RunContext) -> crate::runtime::ToolResult {
    let res = held::<GravMagResults>(ctx, keys::GRAVMAG_RESULTS)
        .ok_or_else(|| anyhow!("no grav/mag model: run invert_gravmag first"))?
        .clone();
    let inv = &res.result.inversion;
    let evaluation = evaluate_gravmag_inversion(inv);
    for w in &evaluation.warnings {
        ctx.note(w);
    }
    ctx.note(DEPTH_WARNING);
    let verdict = GravMagVerdict {
        evaluation,
        beta_outcome: inv.beta_search.outcome,
        bound_hits: inv.bound_hits,
        n_cells: inv.n_cells,
        chi2: inv.chi2,
    };
    let q = &verdict.evaluation.quality;
    let summary = format!(
        "{}: χ² {} ({}), β search {:?} in {} exact solve(s), {} of {} cells at a bound. Depth comes from the depth weighting, not from the data.",
        q.sentence(),
        fmt(verdict.chi2),
        q.band.map_or("not judged", |b| b.word()),
        verdict.beta_outcome,
        inv.iterations,
        verdict.bound_hits,
        verdict.n_cells
    );
    let report = verdict_report(&verdict, &res);
    let mut outputs = Outputs::new();
    if let Some((p, c)) = draw_beta_search(ctx, &res)? {
        outputs = outputs.figure(p, &c);
    }
    let held = Held::new(verdict.clone(), summary.clone())
        .detail(format!(
            "quality {:.1}; components {}",
            q.score,
            q.components
                .iter()
                .map(|c| format!(
                    "{} {}",
                    c.name,
                    c.score.map_or("-".into(), |s| format!("{s:.0}"))
                ))
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .report(report)
        .number("quality_score", q.score)
        .number("passed", q.passed)
        .number("chi2", verdict.chi2)
        .number("bound_hits", verdict.bound_hits)
        .number(
            "beta_outcome",
            serde_json::to_value(verdict.beta_outcome).unwrap_or(Value::Null),
        );
    Ok((
        summary,
        outputs.put(keys::GRAVMAG_EVALUATION, Arc::new(held)),
    ))
}

/// Whether the loaded table can be mapped and inverted (x, y stations, not a profile).
fn data_is_mappable(ctx: &RunContext) -> bool {
    held::<GravMagData>(ctx, keys::GRAVMAG_DATA).is_none_or(|d| !d.table.profile)
}

/// Register the gravity/magnetics tools, in dependency order.
pub fn register(reg: &mut Registry) {
    let _ = reg.register(
        Tool::new(
            "load_gravmag_data",
            "Read the gravity or magnetic station table (x, y, value[, z] or longitude/latitude, CSV or text) and decide what it measures (gravity in mGal or magnetics in nT) from the setting gravmag_kind, the column names, the file name or the request; asks the user when that is ambiguous. Draws the stations.",
            load_gravmag_data,
        )
        .produces(&[keys::GRAVMAG_DATA])
        .label("Load gravity/magnetic stations")
        .module("gravmag")
        .agent("gravity/magnetics")
        .when(|ctx| ctx.has_input(DATA_ROLE)),
    );
    let _ = reg.register(
        Tool::new(
            "invert_gravmag",
            "Remove a polynomial regional trend (gravmag_params.trend_degree), grid the observed, regional and residual maps, and invert the residual for a 3D density-contrast (gravity) or susceptibility (magnetics, inducing field from magnetic_field) model on a tensor mesh with depth weighting, smoothness and bounds, β searched to χ² 1 ± 0.2. Writes the maps, model slices, the model cells CSV and ESRI ASCII grids.",
            invert_gravmag,
        )
        .requires(&[keys::GRAVMAG_DATA])
        .produces(&[keys::GRAVMAG_RESULTS, MODEL_3D])
        .label("Invert gravity/magnetics in 3D")
        .module("gravmag")
        .agent("gravity/magnetics")
        .when(data_is_mappable),
    );
    let _ = reg.register(
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
    );
}

/// A JSON summary of a gravmag data file, or `None` when it is not one.
pub fn read_summary(path: &std::path::Path) -> Option<Result<serde_json::Value, ReadError>> {
    crate::methods::gravmag::read_summary(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::interaction::Scripted;
    use crate::runtime::step::DecidedBy;
    use crate::runtime::{StepStatus, invoke};
    use serde_json::Map;

    fn tools() -> Registry {
        let mut r = Registry::new();
        register(&mut r);
        r
    }

    /// A run whose `gravmag_file` is `file` (absolute), with `config`, writing into `out`.
    fn context(goal: &str, file: &Path, config: Value, out: &Path) -> RunContext {
        let mut inputs = Map::new();
        inputs.insert(DATA_ROLE.into(), Value::from(file.display().to_string()));
        RunContext::new(goal)
            .with_inputs(&inputs, out)
            .with_config(config.as_object().cloned().unwrap_or_default())
            .with_output_dir(out)
    }

    fn run(ctx: &mut RunContext, tool: &str) -> StepStatus {
        invoke(ctx, &tools(), tool, "test", DecidedBy::Policy)
    }

    fn example_file(dir: &Path) -> PathBuf {
        let written =
            crate::example::gravmag::write(&crate::example::Truth::default(), dir).unwrap();
        dir.join(&written[0].1)
    }

    #[test]
    fn bushveld_loads_inverts_and_evaluates_with_maps_slices_and_exports() {
        // The real Bushveld table end to end through the three tools (issue 9, item 5 and the
        // acceptance "runs end to end to a map and a model").
        let path = crate::require_data!("gravmag/phgx/bushveld_gravity_disturbance.csv");
        let out = tempfile::tempdir().unwrap();
        let mut ctx = context(
            "Map the density of the Bushveld complex",
            &path,
            json!({}),
            out.path(),
        );
        assert_eq!(run(&mut ctx, "load_gravmag_data"), StepStatus::Ok);
        let s = &ctx.steps[0];
        // 3 877 stations (phgx/acknowledgement.txt); the kind from the header
        // "gravity_disturbance_mGal"; the value range −81.667 … 137.738 mGal (awk over the file).
        assert!(
            s.summary
                .starts_with("3877 gravity stations of gravity disturbance (mGal)"),
            "{}",
            s.summary
        );
        assert!(
            s.summary.contains("\"disturbance\" in the column name"),
            "{}",
            s.summary
        );
        assert!(
            s.summary.contains("values -81.67 to 137.7 mGal"),
            "{}",
            s.summary
        );
        assert_eq!(s.figures.len(), 1);
        assert!(s.figures[0].path.exists());
        let data = ctx.product(keys::GRAVMAG_DATA).unwrap().key_numbers();
        assert_eq!(data["n_data"], 3877);
        assert!((data["value_min"].as_f64().unwrap() + 81.667).abs() < 1e-9);
        assert!((data["value_max"].as_f64().unwrap() - 137.738).abs() < 1e-9);

        assert_eq!(
            run(&mut ctx, "invert_gravmag"),
            StepStatus::Ok,
            "{:?}",
            ctx.steps[1].error
        );
        let s = &ctx.steps[1];
        assert_eq!(
            s.produced,
            vec![keys::GRAVMAG_RESULTS.to_string(), MODEL_3D.to_string()]
        );
        // Five maps and three model slices, every one a PNG on disk.
        assert_eq!(s.figures.len(), 8, "{:?}", s.figures);
        for f in &s.figures {
            assert!(f.path.exists() && f.caption.contains('('), "{f:?}");
        }
        let p = ctx.product(keys::GRAVMAG_RESULTS).unwrap();
        let n = p.key_numbers();
        let chi2 = n["chi2"].as_f64().unwrap();
        // The β search's target: χ² 1 ± 0.2 (issue 9, item 4).
        assert!((chi2 - 1.0).abs() <= 0.2, "χ² {chi2}");
        assert!(n["n_data"].as_u64().unwrap() <= 600);
        assert!(
            s.summary.contains(&format!("χ² {}", fmt(chi2))),
            "{}",
            s.summary
        );
        let res = held::<GravMagResults>(&ctx, keys::GRAVMAG_RESULTS).unwrap();
        let inv = &res.result.inversion;
        // The exports: model cells with the unit in the column name, one row per cell, the
        // values the model's (kg/m³ → g/cm³, written with full precision).
        let files = p.files();
        assert_eq!(files.len(), 8, "{files:?}");
        let cells = std::fs::read_to_string(&files[0]).unwrap();
        let mut lines = cells.lines();
        assert_eq!(
            lines.next().unwrap(),
            "x_m,y_m,z_m,dx_m,dy_m,dz_m,density_contrast_g_per_cc"
        );
        assert_eq!(lines.clone().count(), inv.n_cells);
        for (c, line) in lines.enumerate().step_by(997) {
            let v: f64 = line.rsplit(',').next().unwrap().parse().unwrap();
            assert_eq!(v, inv.model[c] / 1000.0, "cell {c}");
        }
        let asc = std::fs::read_to_string(
            files
                .iter()
                .find(|f| f.ends_with("gravmag_residual_mgal.asc"))
                .unwrap(),
        )
        .unwrap();
        let g = &res.result.residual_grid;
        assert!(asc.starts_with(&format!("ncols {}\nnrows {}\n", g.nx, g.ny)));
        assert_eq!(asc.lines().count(), 6 + g.ny);
        assert!(ctx.product(MODEL_3D).is_some());
        let md = p.report_markdown().unwrap();
        assert!(
            md.contains("| Solve | β |") && md.contains("Regional polynomial"),
            "{md}"
        );

        let expected_score = evaluate_gravmag_inversion(inv).quality_score;
        assert_eq!(run(&mut ctx, "evaluate_gravmag_inversion"), StepStatus::Ok);
        let e = ctx.product(keys::GRAVMAG_EVALUATION).unwrap();
        let score = e.key_numbers()["quality_score"].as_f64().unwrap();
        assert_eq!(score, expected_score);
        let md = e.report_markdown().unwrap();
        assert!(
            md.contains(DEPTH_WARNING) && md.contains("| data_fit |"),
            "{md}"
        );
        assert!(ctx.warnings.iter().any(|w| w == DEPTH_WARNING));
        assert_eq!(ctx.steps[2].figures.len(), 1);
    }

    #[test]
    fn an_undecidable_kind_is_asked_and_with_nobody_there_the_run_stops() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("stations.txt");
        std::fs::write(&file, "0 0 1.5\n10 0 2.5\n0 10 3.5\n10 10 4.5\n20 20 1.0\n").unwrap();
        // Nobody there: the question is recorded, the default is to stop, the step fails
        // saying how to set the kind.
        let mut ctx = context("Interpret these data", &file, json!({}), dir.path());
        assert_eq!(run(&mut ctx, "load_gravmag_data"), StepStatus::Failed);
        let e = &ctx.steps[0].error;
        assert!(e.contains("does not guess") && e.contains(KIND_KEY), "{e}");
        assert_eq!(ctx.questions.len(), 1);
        let q = &ctx.questions[0];
        assert_eq!((q.default.as_str(), q.answer.as_str()), (STOP, STOP));
        let ids: Vec<&str> = q.options.iter().map(|o| o.id.as_str()).collect();
        assert_eq!(ids, vec!["gravity", "magnetic", STOP]);
        assert!(ctx.product(keys::GRAVMAG_DATA).is_none());
        // The setting decides without a question.
        let mut ctx = context(
            "Interpret these data",
            &file,
            json!({ "gravmag_kind": "magnetic" }),
            dir.path(),
        );
        assert_eq!(run(&mut ctx, "load_gravmag_data"), StepStatus::Ok);
        assert!(
            ctx.steps[0].summary.starts_with("5 magnetic stations"),
            "{}",
            ctx.steps[0].summary
        );
        assert!(ctx.steps[0].summary.contains("(nT)") && ctx.questions.is_empty());
        // A person answers.
        let mut ctx = context("Interpret these data", &file, json!({}), dir.path())
            .with_interaction(Arc::new(Scripted {
                ask: Box::new(|_| Some("gravity".into())),
                ..Default::default()
            }));
        assert_eq!(run(&mut ctx, "load_gravmag_data"), StepStatus::Ok);
        assert!(ctx.steps[0].summary.contains("(mGal)"));
        assert_eq!(
            ctx.questions[0].by,
            crate::runtime::events::AnsweredBy::User
        );
        // The request decides when the file says nothing.
        let mut ctx = context(
            "Interpret the Bouguer gravity",
            &file,
            json!({}),
            dir.path(),
        );
        assert_eq!(run(&mut ctx, "load_gravmag_data"), StepStatus::Ok);
        assert!(
            ctx.steps[0].summary.contains("Bouguer anomaly (mGal)"),
            "{}",
            ctx.steps[0].summary
        );
        // A kind nobody knows is refused with the list.
        let mut ctx = context("x", &file, json!({ "gravmag_kind": "radar" }), dir.path());
        assert_eq!(run(&mut ctx, "load_gravmag_data"), StepStatus::Failed);
        assert!(
            ctx.steps[0].error.contains("free_air"),
            "{}",
            ctx.steps[0].error
        );
    }

    #[test]
    fn a_clear_header_is_not_contradicted_by_a_request_that_names_both_methods() {
        let dir = tempfile::tempdir().unwrap();
        let file = example_file(dir.path());
        let mut ctx = context(
            "Compare the gravity and the magnetic data",
            &file,
            json!({}),
            dir.path(),
        );
        assert_eq!(run(&mut ctx, "load_gravmag_data"), StepStatus::Ok);
        assert!(ctx.questions.is_empty());
        assert!(
            ctx.steps[0].summary.starts_with("400 gravity stations"),
            "{}",
            ctx.steps[0].summary
        );
    }

    #[test]
    fn wrong_settings_are_refused_with_what_is_valid() {
        let dir = tempfile::tempdir().unwrap();
        let file = example_file(dir.path());
        for (config, expect) in [
            (
                json!({ "gravmag_params": { "trend_degre": 2 } }),
                "trend_degree",
            ),
            (
                json!({ "gravmag_params": { "trend_degree": 5 } }),
                "0, 1, 2 or 3",
            ),
            (
                json!({ "gravmag_params": { "density_bounds_g_per_cc": [0.5, -0.5] } }),
                "lower < upper",
            ),
            (
                json!({ "magnetic_field": { "intensity_nt": 50000.0 } }),
                "needs all of intensity_nt",
            ),
        ] {
            let mut ctx = context("x", &file, config, dir.path());
            assert_eq!(run(&mut ctx, "load_gravmag_data"), StepStatus::Ok);
            assert_eq!(run(&mut ctx, "invert_gravmag"), StepStatus::Failed);
            let e = &ctx.steps[1].error;
            assert!(e.contains(expect), "{e}");
        }
    }

    #[test]
    fn britain_aeromagnetics_inverts_for_susceptibility() {
        // The real Britain TMI subset (3 451 stations, header "total_field_anomaly_nT") with an
        // inducing field given (a test setting: roughly the field over south-west England).
        let path = crate::require_data!("gravmag/phgx/britain_aeromagnetic_anomaly.csv");
        let out = tempfile::tempdir().unwrap();
        let mut ctx = context(
            "Interpret the aeromagnetic map",
            &path,
            json!({ "magnetic_field": { "intensity_nt": 48000.0, "inclination_deg": 66.0, "declination_deg": -8.0 } }),
            out.path(),
        );
        assert_eq!(run(&mut ctx, "load_gravmag_data"), StepStatus::Ok);
        assert!(
            ctx.steps[0]
                .summary
                .starts_with("3451 magnetic stations of total-field magnetic anomaly (nT)"),
            "{}",
            ctx.steps[0].summary
        );
        assert_eq!(
            run(&mut ctx, "invert_gravmag"),
            StepStatus::Ok,
            "{}",
            ctx.steps[1].error
        );
        assert!(!ctx.warnings.iter().any(|w| w.contains("No inducing field")));
        let p = ctx.product(keys::GRAVMAG_RESULTS).unwrap();
        let cells = std::fs::read_to_string(&p.files()[0]).unwrap();
        assert!(cells.starts_with("x_m,y_m,z_m,dx_m,dy_m,dz_m,susceptibility_SI\n"));
        assert!(
            p.files()
                .iter()
                .any(|f| f.ends_with("gravmag_misfit_nt.asc"))
        );
        let res = held::<GravMagResults>(&ctx, keys::GRAVMAG_RESULTS).unwrap();
        assert_eq!(res.result.inversion.model_unit, "SI");
        assert_eq!(res.inducing_field.unwrap().inclination_deg, 66.0);
    }

    #[test]
    fn a_run_over_the_whole_registry_takes_the_example_through_the_gravmag_steps_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let truth = crate::example::Truth::default();
        let written = crate::example::gravmag::write(&truth, dir.path()).unwrap();
        let mut inputs = Map::new();
        inputs.insert(
            written[0].0.clone(),
            Value::from(written[0].1.display().to_string()),
        );
        let out = dir.path().join("run");
        std::fs::create_dir_all(&out).unwrap();
        // The example's noise is 0.01 mGal (example::gravmag::NOISE_MGAL): the error floor.
        let config = json!({ "gravmag_params": { "error_floor_mgal": crate::example::gravmag::NOISE_MGAL } });
        let mut ctx = RunContext::new(crate::example::GOAL)
            .with_inputs(&inputs, dir.path())
            .with_config(config.as_object().cloned().unwrap())
            .with_output_dir(&out);
        let ended = crate::runtime::drive(
            &mut ctx,
            &crate::catalog::registry(),
            None,
            &crate::runtime::RunOptions::default(),
        );
        let grav: Vec<(&str, StepStatus)> = ctx
            .steps
            .iter()
            .filter(|s| s.module == "gravmag")
            .map(|s| (s.tool.as_str(), s.status))
            .collect();
        assert_eq!(
            grav,
            vec![
                ("load_gravmag_data", StepStatus::Ok),
                ("invert_gravmag", StepStatus::Ok),
                ("evaluate_gravmag_inversion", StepStatus::Ok),
            ],
            "{:#?}",
            ctx.steps
        );
        assert!(
            ctx.product(keys::REPORT_FILES).is_some(),
            "ended {ended:?}: {:#?}",
            ctx.steps
        );
        assert!(
            ctx.questions.is_empty(),
            "the header says gravity: no question"
        );
        let res = held::<GravMagResults>(&ctx, keys::GRAVMAG_RESULTS).unwrap();
        let inv = &res.result.inversion;
        let c = inv.anomaly_centroid_m.unwrap();
        let body = crate::example::gravmag::body(&truth).centre_m();
        eprintln!(
            "example: χ² {:.3}, {:?}, centroid {:?} vs body {:?}, excess mass {:?} vs {:.3e}; steps {:?}",
            inv.chi2,
            inv.beta_search.outcome,
            c,
            body,
            inv.excess_mass_kg,
            crate::example::gravmag::density_contrast_kg_per_m3(&truth)
                * crate::example::gravmag::body(&truth).volume_m3(),
            ctx.steps
                .iter()
                .map(|s| (&s.tool, s.status))
                .collect::<Vec<_>>()
        );
        // The recovered anomaly is over the body: centroid within one 10 m core cell of the
        // body's centre horizontally (the depth comes from the weighting and is not tested).
        assert!(
            (c[0] - body[0]).abs() <= 10.0 && (c[1] - body[1]).abs() <= 10.0,
            "centroid {c:?} vs body {body:?}"
        );
        // The report carries the three sections.
        let md = std::fs::read_to_string(out.join("report.md")).unwrap();
        assert!(md.contains("## Gravity and magnetics") && md.contains(DEPTH_WARNING));
    }

    #[test]
    fn kinds_parse_from_their_words() {
        assert_eq!(
            parse_kind("Free-Air").unwrap().quantity,
            Quantity::FreeAirAnomaly
        );
        assert_eq!(parse_kind(" TMI ").unwrap().family, Family::Magnetic);
        for (w, q) in KIND_WORDS {
            assert_eq!(parse_kind(kind_word(*q)).unwrap().quantity, *q, "{w}");
        }
        assert!(
            parse_kind("seismic")
                .unwrap_err()
                .contains("gravity_disturbance")
        );
    }

    #[test]
    fn esri_grids_run_north_to_south_with_nodata_for_unsupported_nodes() {
        let g = Grid2D {
            x0_m: 100.0,
            y0_m: 200.0,
            spacing_m: 5.0,
            nx: 3,
            ny: 2,
            values: vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
            mask: vec![true, true, true, true, false, true],
            unit: Some("mGal".into()),
            notes: vec![],
        };
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("g.asc");
        write_esri_ascii(&p, &g).unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "ncols 3\nnrows 2\nxllcenter 100\nyllcenter 200\ncellsize 5\nNODATA_value -99999\n4 -99999 6\n1 2 3\n"
        );
        assert_eq!(grid_extent(&g), (97.5, 112.5, 197.5, 207.5));
        assert_eq!(core_range(&[30.0, 20.0, 10.0, 10.0, 10.0, 20.0]), (2, 4));
        assert_eq!(cell_index(&[0.0, 10.0, 20.0], 15.0), 1);
        assert_eq!(cell_index(&[0.0, 10.0, 20.0], 25.0), 1);
        assert_eq!(cell_index(&[0.0, 10.0, 20.0], -5.0), 0);
    }
}
