//! `load_model_output`: read a hydrological model's output files, put its grid and the
//! geophysical line in one frame, and hold the [`HydroModel`] the comparison and the forward
//! sample.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::settings::HydroSettings;
use crate::methods::hydro::geometry::{Line, StructuredGrid};
use crate::methods::hydro::sample::{
    CellArray, Porosity, column_at, water_content_at, water_table_from_pressure,
    water_table_from_saturation,
};
use crate::methods::hydro::{
    HydroFileKind, MaskOptions, ModelOutput, file_kind, read_grb, read_model_output, read_pfb,
};

/// Where the model's water table comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WaterTableSource {
    /// ParFlow pressure head: where ψ = 0.
    Pressure,
    /// MODFLOW heads: the uppermost active head.
    Heads,
    /// ParFlow saturation: the top of the first saturated cell.
    Saturation,
}

impl WaterTableSource {
    /// In words, for summaries and the report.
    pub fn words(self) -> &'static str {
        match self {
            WaterTableSource::Pressure => {
                "where the pressure head is zero (linear between cell centres)"
            }
            WaterTableSource::Heads => "the head of the uppermost active layer",
            WaterTableSource::Saturation => {
                "the top of the first saturated cell (resolution one cell; the capillary fringe counts as saturated)"
            }
        }
    }
}

/// A hydrological model's state placed under the geophysical line.
#[derive(Debug, Clone)]
pub struct HydroModel {
    /// The files read.
    pub files: Vec<PathBuf>,
    /// The formats, in words.
    pub format: String,
    /// The grid.
    pub grid: StructuredGrid,
    /// The geophysical line in the grid's frame.
    pub line: Line,
    /// Model elevation = geophysical elevation + this (m).
    pub elevation_shift_m: f64,
    /// The model time of the state used (model time unit), when the file gives one.
    pub time: Option<f64>,
    /// Saturation (0–1).
    pub saturation: Option<CellArray>,
    /// Pressure head (length unit of the grid).
    pub pressure: Option<CellArray>,
    /// Heads (MODFLOW), top layer first.
    pub heads: Option<CellArray>,
    /// Porosity, when known.
    pub porosity: Option<Porosity>,
    /// Where φ came from, in words.
    pub porosity_source: String,
    /// Saturation above the water table of a heads-only model (a setting).
    pub unsaturated_saturation: Option<f64>,
    /// A cell counts as saturated at S ≥ this.
    pub saturated_at: f64,
    /// Cells masked (inactive, dry, no value) over the arrays used.
    pub n_masked: usize,
    /// What was noticed and decided.
    pub notes: Vec<String>,
}

impl HydroModel {
    /// Where the water table comes from (pressure first, then heads, then saturation).
    pub fn water_table_source(&self) -> Option<WaterTableSource> {
        if self.pressure.is_some() {
            Some(WaterTableSource::Pressure)
        } else if self.heads.is_some() {
            Some(WaterTableSource::Heads)
        } else if self.saturation.is_some() {
            Some(WaterTableSource::Saturation)
        } else {
            None
        }
    }

    /// The water table's elevation (geophysical datum, m) under `distance` along the line.
    pub fn water_table_z(&self, distance: f64) -> Option<f64> {
        let (row, col) = column_at(&self.grid, &self.line, distance)?;
        let z = match self.water_table_source()? {
            WaterTableSource::Pressure => {
                water_table_from_pressure(&self.grid, self.pressure.as_ref()?, row, col)
            }
            WaterTableSource::Heads => {
                let h = self.heads.as_ref()?;
                (0..self.grid.nlay()).find_map(|l| h.at(&self.grid, (l, row, col)))
            }
            WaterTableSource::Saturation => water_table_from_saturation(
                &self.grid,
                self.saturation.as_ref()?,
                row,
                col,
                self.saturated_at,
            ),
        }?;
        Some(z - self.elevation_shift_m)
    }

    /// The model's water content θ (m³/m³) at `distance` along the line and geophysical
    /// elevation `z_m`: φ·S from saturation, or for a heads-only model φ below the water
    /// table and φ·`unsaturated_saturation` above it. `None` outside the grid, in a masked
    /// cell, or when the model holds no water content.
    pub fn water_content(&self, distance: f64, z_m: f64) -> Option<f64> {
        let phi = self.porosity.as_ref()?;
        let p = self.line.point(distance);
        let zm = z_m + self.elevation_shift_m;
        if let Some(s) = &self.saturation {
            return water_content_at(&self.grid, s, phi, p[0], p[1], zm);
        }
        let s_unsat = self.unsaturated_saturation?;
        let cell = self.grid.locate(p[0], p[1], zm)?;
        let wt = self.water_table_z(distance)?;
        let s = if z_m < wt { 1.0 } else { s_unsat };
        Some(phi.at(&self.grid, cell)? * s)
    }

    /// The model's (θ, φ, S) at a point, for the forward: `None` where the model says nothing.
    pub fn state_at(&self, distance: f64, z_m: f64) -> Option<(f64, f64)> {
        let theta = self.water_content(distance, z_m)?;
        let p = self.line.point(distance);
        let cell = self.grid.locate(p[0], p[1], z_m + self.elevation_shift_m)?;
        let phi = self.porosity.as_ref()?.at(&self.grid, cell)?;
        (phi > 0.0).then_some((phi, (theta / phi).clamp(1e-6, 1.0)))
    }

    /// Whether the model holds a water content (not only a water table).
    pub fn has_water_content(&self) -> bool {
        self.porosity.is_some()
            && (self.saturation.is_some()
                || (self.heads.is_some() && self.unsaturated_saturation.is_some()))
    }
}

/// What each file is: the quantity a ParFlow file's name carries, or the kind of a MODFLOW
/// file.
fn role_of(path: &Path, out: &ModelOutput) -> &'static str {
    let q = out
        .records
        .first()
        .map(|r| r.quantity.to_ascii_lowercase())
        .unwrap_or_default();
    match file_kind(path) {
        Some(HydroFileKind::Pfb) if q.starts_with("satur") => "saturation",
        Some(HydroFileKind::Pfb) if q.starts_with("press") => "pressure",
        Some(HydroFileKind::Pfb) if q.starts_with("poros") => "porosity",
        Some(HydroFileKind::Heads) if q.contains("head") => "heads",
        _ => "other",
    }
}

/// A record's values and mask as a cell array.
fn cells(out: &ModelOutput, index: usize) -> Option<CellArray> {
    let r = out.records.get(index)?;
    Some(CellArray {
        values: r.values.clone(),
        active: r.active.clone(),
        order: out.layer_order,
    })
}

/// Read `files` (and the MODFLOW 6 `grid_file` a heads file needs) into a [`HydroModel`];
/// `default_porosity` is the petrophysical prior's porosity, used when neither a porosity
/// file nor `hydro_params.porosity` gives one.
pub fn load(
    files: &[PathBuf],
    grid_file: Option<&Path>,
    s: &HydroSettings,
    default_porosity: Option<f64>,
) -> anyhow::Result<HydroModel> {
    let opts = MaskOptions {
        hnoflo: s.hnoflo,
        hdry: s.hdry,
        ..MaskOptions::default()
    };
    let mut notes = Vec::new();
    let mut grid: Option<StructuredGrid> = None;
    let (mut saturation, mut pressure, mut heads, mut porosity_field) = (None, None, None, None);
    let mut time = None;
    let mut n_masked = 0;
    let mut formats = Vec::new();
    for f in files {
        let out = read_model_output(f, &opts)?;
        let role = role_of(f, &out);
        formats.push(format!("{} ({role})", out.format.id()));
        let this_grid = match file_kind(f) {
            Some(HydroFileKind::Pfb) => StructuredGrid::from_pfb(&read_pfb(f)?),
            _ => {
                let g = grid_file.ok_or_else(|| {
                    anyhow::anyhow!(
                        "{}: a MODFLOW heads file needs its grid; name the MODFLOW 6 binary grid file (.grb) as the model_grid_file input (a MODFLOW-2005 .dis is not read in this version)",
                        f.display()
                    )
                })?;
                StructuredGrid::from_grb(&read_grb(g)?)?
            }
        };
        if let Some(g) = &grid
            && (g.delr.len(), g.delc.len(), g.nlay())
                != (this_grid.delr.len(), this_grid.delc.len(), this_grid.nlay())
        {
            anyhow::bail!(
                "{}: its grid ({} columns × {} rows × {} layers) is not the first file's ({} × {} × {})",
                f.display(),
                this_grid.delr.len(),
                this_grid.delc.len(),
                this_grid.nlay(),
                g.delr.len(),
                g.delc.len(),
                g.nlay()
            );
        }
        grid.get_or_insert(this_grid);
        let index = match role {
            "heads" => {
                let last = out.records.len().saturating_sub(1);
                let i = s.record.unwrap_or(last);
                if i > last {
                    anyhow::bail!(
                        "hydro_params.record = {i}: {} holds records 0 to {last}",
                        f.display()
                    );
                }
                i
            }
            _ => 0,
        };
        if let Some(r) = out.records.get(index) {
            time = time.or(r.totim);
            n_masked += r.active.iter().filter(|a| !**a).count();
        }
        notes.extend(out.notes.iter().map(|n| format!("{}: {n}", file_label(f))));
        let arr = cells(&out, index);
        match role {
            "saturation" => saturation = arr,
            "pressure" => pressure = arr,
            "heads" => heads = arr,
            "porosity" => porosity_field = arr,
            _ => notes.push(format!(
                "{}: not a saturation, pressure, porosity or heads file by its name or records; not used",
                file_label(f)
            )),
        }
    }
    let grid = grid.ok_or_else(|| anyhow::anyhow!("no model output file was named"))?;
    if saturation.is_none() && pressure.is_none() && heads.is_none() {
        anyhow::bail!(
            "none of the files holds saturation, pressure head or heads ({}); a ParFlow file's name says what it holds (run.out.satur.00010.pfb, run.out.press.00010.pfb)",
            formats.join(", ")
        );
    }
    let (porosity, porosity_source) = match (porosity_field, s.porosity, default_porosity) {
        (Some(a), _, _) => (
            Some(Porosity::Field(a)),
            "the model's porosity file".to_string(),
        ),
        (None, Some(p), _) => (
            Some(Porosity::Uniform(p)),
            format!("hydro_params.porosity = {p}"),
        ),
        (None, None, Some(p)) => (
            Some(Porosity::Uniform(p)),
            format!("the petrophysical prior's porosity {p} (the model gave none)"),
        ),
        _ => (None, "none given".to_string()),
    };
    let line = Line {
        origin_xy: s.line_origin.unwrap_or_else(|| {
            let h: f64 = grid.delc.iter().sum();
            notes.push("hydro_params.line_origin not given: the line starts at the grid's origin corner, half-way across its rows".into());
            let (sn, cs) = grid.angrot_deg.to_radians().sin_cos();
            [grid.origin_xy[0] - sn * h / 2.0, grid.origin_xy[1] + cs * h / 2.0]
        }),
        azimuth_deg: s.line_azimuth_deg,
    };
    Ok(HydroModel {
        files: files.to_vec(),
        format: formats.join(", "),
        grid,
        line,
        elevation_shift_m: s.elevation_shift_m,
        time,
        saturation,
        pressure,
        heads,
        porosity,
        porosity_source,
        unsaturated_saturation: s.unsaturated_saturation,
        saturated_at: s.saturated_at,
        n_masked,
        notes,
    })
}

/// A file's name for messages.
pub fn file_label(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
}
