//! One radar line as every reader returns it, and the error type of the processing chain.
//!
//! Orientation: `data` has shape `(n_samples, n_traces)` — rows are two-way-time samples,
//! columns are traces — the radargram as it is drawn and as GPRPy holds it. Readers build it
//! in column-major (Fortran) memory order so that each trace is contiguous; every function
//! here accepts any memory order.

use std::path::PathBuf;

use ndarray::Array2;
use serde::{Deserialize, Serialize};

/// The speed of light in vacuum, m/ns.
pub const SPEED_OF_LIGHT_M_PER_NS: f64 = 0.299_792_458;

/// The file format a line was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GprFormat {
    /// GSSI SIR `.DZT`.
    GssiDzt,
    /// Sensors & Software pulseEKKO `.DT1` with its `.HD` header.
    PulseEkkoDt1,
    /// MALA `.rd3` (16-bit) with its `.rad` header.
    MalaRd3,
    /// MALA `.rd7` (32-bit) with its `.rad` header.
    MalaRd7,
    /// SEG-Y (rev 0/1/2).
    SegY,
}

impl GprFormat {
    /// A name for a table.
    pub fn label(self) -> &'static str {
        match self {
            GprFormat::GssiDzt => "GSSI DZT",
            GprFormat::PulseEkkoDt1 => "Sensors & Software pulseEKKO DT1/HD",
            GprFormat::MalaRd3 => "MALA rd3/rad",
            GprFormat::MalaRd7 => "MALA rd7/rad",
            GprFormat::SegY => "SEG-Y",
        }
    }
}

/// What kind of acquisition the line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SurveyKind {
    /// Fixed antenna separation moved along a line (a reflection profile).
    CommonOffset,
    /// Common mid-point gather: both antennas move apart about a fixed centre.
    Cmp,
    /// Wide-angle reflection and refraction: one antenna fixed, the other moves away.
    Warr,
    /// Not stated and not inferable.
    Unknown,
}

/// A radar line as read from a file: samples, time axis, positions and what the header says.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GprLine {
    /// The data file as the user named it.
    pub file: PathBuf,
    /// The format it was read as.
    pub format: GprFormat,
    /// True when the format was recognised by a weak signature (extension only, or a
    /// byte-order guess); `notes` says which.
    pub format_guessed: bool,
    /// Amplitudes, shape `(n_samples, n_traces)`, in the file's units (signed counts for
    /// integer formats). Not serialised: the catalog writes it as `.npy`.
    #[serde(skip)]
    pub data: Array2<f64>,
    /// Samples per trace.
    pub n_samples: usize,
    /// Number of traces.
    pub n_traces: usize,
    /// Sampling interval in ns (the instrument's definition: time window / samples unless the
    /// format stores the interval itself).
    pub sample_interval_ns: f64,
    /// The recorded time window in ns.
    pub time_window_ns: f64,
    /// Fractional sample index of time zero as the header states it (0 when it states none):
    /// the two-way time of sample `i` is `(i − time_zero_sample)·dt`.
    pub time_zero_sample: f64,
    /// Position of every trace along the line, m.
    pub positions_m: Vec<f64>,
    /// True when the positions are not from a distance calibration (trace numbers instead).
    pub positions_guessed: bool,
    /// Antenna name as written in the header.
    pub antenna: Option<String>,
    /// Nominal antenna centre frequency, MHz.
    pub antenna_frequency_mhz: Option<f64>,
    /// Transmitter–receiver separation, m.
    pub antenna_separation_m: Option<f64>,
    /// The relative permittivity the operator entered in the instrument (GSSI `rhf_epsr`).
    /// It is an instrument setting, not a measurement.
    pub header_permittivity: Option<f64>,
    /// Leading samples of every trace that hold a trace header or marker word, not signal
    /// (2 in GSSI files).
    pub header_samples: usize,
    /// Trace indices (0-based) that carry a user mark.
    pub marks: Vec<usize>,
    /// The acquisition kind.
    pub survey_kind: SurveyKind,
    /// True when `survey_kind` was inferred (e.g. from the file name) rather than stated.
    pub survey_kind_guessed: bool,
    /// The header fields as the file holds them (format-specific keys).
    pub header: serde_json::Value,
    /// Everything a reader decided that a user should know.
    pub notes: Vec<String>,
}

impl GprLine {
    /// Two-way time of every sample, ns: `t_i = (i − time_zero_sample)·dt`.
    pub fn time_ns(&self) -> Vec<f64> {
        (0..self.n_samples)
            .map(|i| (i as f64 - self.time_zero_sample) * self.sample_interval_ns)
            .collect()
    }

    /// Sum of |x| over all samples (float64), the checksum the oracles use.
    pub fn sum_abs(&self) -> f64 {
        self.data.iter().map(|v| v.abs()).sum()
    }

    /// A compact JSON summary: format, counts, ranges and units, and the notes.
    pub fn summary(&self) -> serde_json::Value {
        let (min, max) = finite_range(self.data.iter().copied());
        let (p0, p1) = finite_range(self.positions_m.iter().copied());
        serde_json::json!({
            "method": "gpr",
            "file": self.file.display().to_string(),
            "format": self.format,
            "format_label": self.format.label(),
            "format_guessed": self.format_guessed,
            "n_samples": self.n_samples,
            "n_traces": self.n_traces,
            "sample_interval_ns": self.sample_interval_ns,
            "time_window_ns": self.time_window_ns,
            "time_zero_sample": self.time_zero_sample,
            "position_range_m": [p0, p1],
            "positions_guessed": self.positions_guessed,
            "amplitude_range": [min, max],
            "amplitude_units": "counts (signed)",
            "antenna": self.antenna,
            "antenna_frequency_mhz": self.antenna_frequency_mhz,
            "antenna_separation_m": self.antenna_separation_m,
            "header_permittivity": self.header_permittivity,
            "header_samples": self.header_samples,
            "n_marks": self.marks.len(),
            "survey_kind": self.survey_kind,
            "survey_kind_guessed": self.survey_kind_guessed,
            "header": self.header,
            "notes": self.notes,
        })
    }
}

/// (min, max) over the finite values; `(NaN, NaN)` serialises as `null` when there are none.
pub(crate) fn finite_range(values: impl Iterator<Item = f64>) -> (Option<f64>, Option<f64>) {
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for v in values.filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if lo.is_finite() {
        (Some(lo), Some(hi))
    } else {
        (None, None)
    }
}

/// Why a processing step could not run, in terms a user can act on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GprError {
    /// A parameter is outside what the step can use.
    #[error("{step}: {parameter} = {value} is not usable: {reason}")]
    InvalidParameter {
        /// The processing step.
        step: String,
        /// The parameter's name.
        parameter: String,
        /// Its value as given.
        value: String,
        /// Why it cannot be used.
        reason: String,
    },
    /// A velocity outside the plausible range for radar waves in the ground.
    #[error("velocity {velocity_m_per_ns} m/ns refused: {reason}")]
    VelocityRefused {
        /// The velocity that was offered.
        velocity_m_per_ns: f64,
        /// Why it was refused.
        reason: String,
    },
    /// The data cannot go through this step (empty line, wrong shape, …).
    #[error("{step}: {reason}")]
    NotApplicable {
        /// The processing step.
        step: String,
        /// Why.
        reason: String,
    },
    /// An output file could not be written.
    #[error("cannot write {file}: {message}")]
    Write {
        /// The output file.
        file: PathBuf,
        /// The operating system's message.
        message: String,
    },
}

impl GprError {
    /// An [`GprError::InvalidParameter`].
    pub fn invalid(step: &str, parameter: &str, value: impl ToString, reason: &str) -> Self {
        GprError::InvalidParameter {
            step: step.to_string(),
            parameter: parameter.to_string(),
            value: value.to_string(),
            reason: reason.to_string(),
        }
    }

    /// A [`GprError::NotApplicable`].
    pub fn not_applicable(step: &str, reason: impl Into<String>) -> Self {
        GprError::NotApplicable {
            step: step.to_string(),
            reason: reason.into(),
        }
    }
}
