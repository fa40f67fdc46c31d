//! The common result of the array readers ([`ModelOutput`]): the grid's shape, the time
//! records with their step numbers and times, the quantity, the values as `f64` and which of
//! them are active; inactive, dry and unwritten cells masked and counted by cause.

use std::path::PathBuf;

use ndarray::Array3;
use serde::Serialize;
use serde_json::{Value, json};

/// Which file format the values came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum HydroFormat {
    /// A MODFLOW binary array file (heads, drawdown; MODFLOW-2005, NWT, MODFLOW 6 heads and
    /// GWT concentrations): records of KSTP, KPER, PERTIM, TOTIM, TEXT, NCOL, NROW, ILAY.
    ModflowBinary,
    /// An MT3DMS / MT3D-USGS concentration file (`.ucn`): records of NTRANS, KSTP, KPER,
    /// TIME2, TEXT, NCOL, NROW, ILAY.
    Mt3dUcn,
    /// A ParFlow binary file (`.pfb`).
    ParflowPfb,
}

impl HydroFormat {
    /// The id `hydrogeo-studio read` prints.
    pub fn id(self) -> &'static str {
        match self {
            HydroFormat::ModflowBinary => "modflow_binary",
            HydroFormat::Mt3dUcn => "mt3d_ucn",
            HydroFormat::ParflowPfb => "parflow_pfb",
        }
    }
}

/// Precision of the reals in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// 4-byte IEEE reals.
    Single,
    /// 8-byte IEEE reals.
    Double,
}

impl Precision {
    /// Bytes of one real.
    pub fn bytes(self) -> usize {
        match self {
            Precision::Single => 4,
            Precision::Double => 8,
        }
    }

    /// `"single"` or `"double"`.
    pub fn name(self) -> &'static str {
        match self {
            Precision::Single => "single",
            Precision::Double => "double",
        }
    }
}

/// How the layer axis is numbered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LayerOrder {
    /// Index 0 is the top layer (MODFLOW and MT3D: layer 1 is the uppermost).
    TopFirst,
    /// Index 0 is the bottom (ParFlow: z index 0 is the lowest cell).
    BottomFirst,
}

/// One time of the output: every layer written for one (NTRANS,) KSTP, KPER, time and name.
#[derive(Debug, Clone)]
pub struct OutputRecord {
    /// Time step within the stress period (1-based, as the file writes it).
    pub kstp: Option<i32>,
    /// Stress period (1-based, as the file writes it).
    pub kper: Option<i32>,
    /// MT3D's transport step number.
    pub ntrans: Option<i32>,
    /// Time since the start of the stress period, in the model's time unit.
    pub pertim: Option<f64>,
    /// Time since the start of the simulation (MODFLOW's TOTIM, MT3D's TIME2), in the
    /// model's time unit.
    pub totim: Option<f64>,
    /// The output step number in a ParFlow file name (`run.out.press.00010.pfb` → 10).
    pub output_index: Option<u32>,
    /// The quantity as the file names it (`HEAD`, `DRAWDOWN`, `CONCENTRATION`; for ParFlow
    /// the name part of the file, `press` or `satur`).
    pub quantity: String,
    /// Values, shape (layers, rows, columns); unwritten cells hold NaN.
    pub values: Array3<f64>,
    /// `true` where the value is a real model value (not masked).
    pub active: Array3<bool>,
}

/// What values to mask, besides NaN and infinities (always masked).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MaskOptions {
    /// The model's HNOFLO (value of inactive cells), e.g. from a config's `hnoflo`.
    pub hnoflo: Option<f64>,
    /// The model's HDRY (value of dry cells), e.g. from a config's `hdry`.
    pub hdry: Option<f64>,
    /// Further values to mask (MT3D's CINACT, a model's own no-data value).
    pub also: Vec<f64>,
    /// Do not mask the usual sentinels (±1e30, |v| ≥ 1e20, -999.99) unless named above.
    pub no_defaults: bool,
}

/// Why a value was masked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaskReason {
    /// The caller's HNOFLO.
    Hnoflo,
    /// The caller's HDRY.
    Hdry,
    /// One of the caller's further values.
    Also,
    /// ±1e30: MODFLOW's default HNOFLO, MODFLOW 6's inactive (1e30) and dry (-1e30) cells,
    /// MT3D's default CINACT.
    Inactive1e30,
    /// Any other |value| ≥ 1e20: the HDRY values models set (1e20, -1e20, ...).
    Dry1e20,
    /// -999.99, the HDRY / HNOFLO / CINACT many models and examples use.
    Minus999_99,
    /// NaN or ±infinity.
    NonFinite,
    /// The file holds no value for the cell at this time (a layer not saved).
    NotWritten,
}

/// Masked values counted by cause over all records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct MaskCounts {
    /// Equal to the caller's HNOFLO.
    pub hnoflo: usize,
    /// Equal to the caller's HDRY.
    pub hdry: usize,
    /// Equal to one of the caller's further values.
    pub also: usize,
    /// ±1e30 (default sentinel).
    pub inactive_1e30: usize,
    /// Other |value| ≥ 1e20 (default sentinel).
    pub dry_1e20: usize,
    /// -999.99 (default sentinel).
    pub minus_999_99: usize,
    /// NaN or infinite.
    pub non_finite: usize,
    /// Cells of a layer the file did not write at that time.
    pub not_written: usize,
}

impl MaskCounts {
    /// All masked values.
    pub fn total(&self) -> usize {
        self.hnoflo
            + self.hdry
            + self.also
            + self.inactive_1e30
            + self.dry_1e20
            + self.minus_999_99
            + self.non_finite
            + self.not_written
    }

    pub(crate) fn add(&mut self, reason: MaskReason) {
        let slot = match reason {
            MaskReason::Hnoflo => &mut self.hnoflo,
            MaskReason::Hdry => &mut self.hdry,
            MaskReason::Also => &mut self.also,
            MaskReason::Inactive1e30 => &mut self.inactive_1e30,
            MaskReason::Dry1e20 => &mut self.dry_1e20,
            MaskReason::Minus999_99 => &mut self.minus_999_99,
            MaskReason::NonFinite => &mut self.non_finite,
            MaskReason::NotWritten => &mut self.not_written,
        };
        *slot += 1;
    }
}

/// Relative tolerance of a sentinel match: a value written in single precision differs from
/// the decimal the model was given by up to 6e-8 (−999.99 is stored as −999.98999).
const SENTINEL_RTOL: f64 = 1e-6;

fn near(v: f64, s: f64) -> bool {
    (v - s).abs() <= SENTINEL_RTOL * s.abs().max(f64::MIN_POSITIVE)
}

impl MaskOptions {
    /// Why `v` is masked, or `None` for an active value. The caller's values come first, so
    /// an HNOFLO of 1e30 is counted as HNOFLO, not as the default sentinel.
    pub fn classify(&self, v: f64) -> Option<MaskReason> {
        if !v.is_finite() {
            return Some(MaskReason::NonFinite);
        }
        if self.hnoflo.is_some_and(|h| near(v, h)) {
            return Some(MaskReason::Hnoflo);
        }
        if self.hdry.is_some_and(|h| near(v, h)) {
            return Some(MaskReason::Hdry);
        }
        if self.also.iter().any(|&a| near(v, a)) {
            return Some(MaskReason::Also);
        }
        if self.no_defaults {
            return None;
        }
        if near(v, 1e30) || near(v, -1e30) {
            Some(MaskReason::Inactive1e30)
        } else if v.abs() >= 1e20 * (1.0 - SENTINEL_RTOL) {
            Some(MaskReason::Dry1e20)
        } else if near(v, -999.99) {
            Some(MaskReason::Minus999_99)
        } else {
            None
        }
    }
}

/// What a MODFLOW, MT3D or ParFlow array file holds.
#[derive(Debug, Clone)]
pub struct ModelOutput {
    /// The file as the caller named it.
    pub file: PathBuf,
    /// The format.
    pub format: HydroFormat,
    /// Precision of the reals as stored (the values here are always `f64`).
    pub precision: Precision,
    /// `true` when the file is big-endian (ParFlow always; MODFLOW rarely).
    pub big_endian: bool,
    /// Number of layers (MODFLOW ILAY's largest value; ParFlow NZ).
    pub nlay: usize,
    /// Number of rows (MODFLOW NROW, 1 for a MODFLOW 6 DISV or DISU grid; ParFlow NY).
    pub nrow: usize,
    /// Number of columns (MODFLOW NCOL, the cells per layer for DISV/DISU; ParFlow NX).
    pub ncol: usize,
    /// How the layer axis is numbered.
    pub layer_order: LayerOrder,
    /// Number of array records in the file (one per layer and time; ParFlow: 1).
    pub n_layer_records: usize,
    /// The times, in file order.
    pub records: Vec<OutputRecord>,
    /// The mask options used.
    pub mask_options: MaskOptions,
    /// Masked values by cause, over all records.
    pub mask_counts: MaskCounts,
    /// What the reader noticed and the user may want to know (writer, grid, trailing bytes).
    pub notes: Vec<String>,
}

/// At most this many times are listed in a summary (the first and last halves).
const SUMMARY_TIMES: usize = 40;

impl ModelOutput {
    /// The smallest and largest active value over all records (`None` when none is active).
    pub fn active_range(&self) -> Option<(f64, f64)> {
        let mut out: Option<(f64, f64)> = None;
        for r in &self.records {
            for (v, a) in r.values.iter().zip(r.active.iter()) {
                if *a {
                    out = Some(match out {
                        None => (*v, *v),
                        Some((lo, hi)) => (lo.min(*v), hi.max(*v)),
                    });
                }
            }
        }
        out
    }

    /// Number of active values over all records.
    pub fn n_active(&self) -> usize {
        self.records
            .iter()
            .map(|r| r.active.iter().filter(|a| **a).count())
            .sum()
    }

    /// The distinct quantities, in file order.
    pub fn quantities(&self) -> Vec<String> {
        let mut q: Vec<String> = Vec::new();
        for r in &self.records {
            if !q.contains(&r.quantity) {
                q.push(r.quantity.clone());
            }
        }
        q
    }

    /// A value of the first time that looks like a model's own no-data value left active:
    /// of magnitude 99 or more with at most two decimals, the largest or smallest active
    /// value, and in at least 5 % of the cells (the MODFLOW-2005 Freyberg model's HNOFLO
    /// is 999). Returned as (value, cells, cells of the time).
    pub fn suspected_no_data(&self) -> Option<(f64, usize, usize)> {
        let r = self.records.first()?;
        let active: Vec<f64> = r
            .values
            .iter()
            .zip(r.active.iter())
            .filter(|(_, a)| **a)
            .map(|(v, _)| *v)
            .collect();
        let lo = active.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = active.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let n = r.values.len();
        [hi, lo].into_iter().find_map(|v| {
            let round = ((v * 100.0).round() - v * 100.0).abs() < 1e-6 * v.abs().max(1.0);
            let count = active.iter().filter(|x| **x == v).count();
            (v.is_finite() && v.abs() >= 99.0 && round && count >= 2 && count * 20 >= n)
                .then_some((v, count, n))
        })
    }

    /// The JSON `hydrogeo-studio read` prints.
    pub fn summary(&self) -> Value {
        let time = |r: &OutputRecord| {
            let mut t = serde_json::Map::new();
            let mut put = |k: &str, v: Value| {
                if !v.is_null() {
                    t.insert(k.into(), v);
                }
            };
            put("ntrans", json!(r.ntrans));
            put("kstp", json!(r.kstp));
            put("kper", json!(r.kper));
            put("pertim", json!(r.pertim));
            put("totim", json!(r.totim));
            put("output_index", json!(r.output_index));
            if self.quantities().len() > 1 {
                put("quantity", json!(r.quantity));
            }
            Value::Object(t)
        };
        let n = self.records.len();
        let shown: Vec<Value> = if n <= SUMMARY_TIMES {
            self.records.iter().map(time).collect()
        } else {
            let half = SUMMARY_TIMES / 2;
            self.records[..half]
                .iter()
                .chain(&self.records[n - half..])
                .map(time)
                .collect()
        };
        let (lo, hi) = self.active_range().unzip();
        let mut notes = self.notes.clone();
        if let Some((v, count, n)) = self.suspected_no_data() {
            notes.push(format!(
                "{v} is in {count} of the {n} cells of the first time and is its extreme active value: if it is the model's HNOFLO or HDRY, pass it (hnoflo / hdry) to mask it"
            ));
        }
        let name = match self.format {
            HydroFormat::ModflowBinary => {
                "MODFLOW binary array file (MODFLOW-2005/NWT/MODFLOW 6 heads, drawdown or concentration)"
            }
            HydroFormat::Mt3dUcn => "MT3DMS / MT3D-USGS concentration file (UCN)",
            HydroFormat::ParflowPfb => "ParFlow binary file (PFB)",
        };
        json!({
            "method": "hydro",
            "file": self.file.display().to_string(),
            "format": self.format.id(),
            "format_name": name,
            "format_guessed": false,
            "precision": self.precision.name(),
            "byte_order": if self.big_endian { "big-endian" } else { "little-endian" },
            "quantity": self.quantities(),
            "grid": {
                "nlay": self.nlay,
                "nrow": self.nrow,
                "ncol": self.ncol,
                "layer_order": self.layer_order,
            },
            "n_layer_records": self.n_layer_records,
            "n_times": n,
            "times_shown": shown.len(),
            "times": shown,
            "time_unit": "the model's time unit",
            "n_active": self.n_active(),
            "active_min": lo,
            "active_max": hi,
            "masked_total": self.mask_counts.total(),
            "masked": self.mask_counts,
            "notes": notes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentinels_are_classified_and_the_callers_values_come_first() {
        let d = MaskOptions::default();
        assert_eq!(d.classify(1e30), Some(MaskReason::Inactive1e30));
        assert_eq!(d.classify(-1e30), Some(MaskReason::Inactive1e30));
        // 1e30 stored in single precision.
        assert_eq!(
            d.classify(f64::from(1e30f32)),
            Some(MaskReason::Inactive1e30)
        );
        assert_eq!(d.classify(-1e20), Some(MaskReason::Dry1e20));
        assert_eq!(d.classify(3e25), Some(MaskReason::Dry1e20));
        assert_eq!(
            d.classify(f64::from(-999.99f32)),
            Some(MaskReason::Minus999_99)
        );
        assert_eq!(d.classify(f64::NAN), Some(MaskReason::NonFinite));
        assert_eq!(d.classify(-999.0), None);
        assert_eq!(d.classify(9.99e19), None);
        let c = MaskOptions {
            hnoflo: Some(1e30),
            hdry: Some(-999.0),
            also: vec![0.5],
            no_defaults: false,
        };
        assert_eq!(c.classify(1e30), Some(MaskReason::Hnoflo));
        assert_eq!(c.classify(-999.0), Some(MaskReason::Hdry));
        assert_eq!(c.classify(0.5), Some(MaskReason::Also));
        let none = MaskOptions {
            no_defaults: true,
            ..MaskOptions::default()
        };
        assert_eq!(none.classify(1e30), None);
        assert_eq!(none.classify(f64::INFINITY), Some(MaskReason::NonFinite));
    }
}
