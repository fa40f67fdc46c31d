//! A raw shot gather as the SEG-2 and SEG-Y readers return it.

use ndarray::Array2;
use serde::{Deserialize, Serialize};

/// One shot: its traces (one row per trace, one column per sample) and geometry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShotGather {
    /// Samples, `n_traces × n_samples`, in the file's units (counts or volts, descaled
    /// when the file says how). Not serialised (gathers are megabytes; write them with
    /// `segy::write_segy` instead).
    #[serde(skip)]
    pub data: Array2<f64>,
    /// Sample interval, s.
    pub sample_interval_s: f64,
    /// Time of the first sample after the shot, s (negative for a pre-trigger; 0 unless
    /// applied from the file or resolved by [`super::picking::resolve_time_zero`]).
    pub start_time_s: f64,
    /// A delay field the reader found but did not apply (SEG-2 `DELAY`, whose sign and unit
    /// vary between instruments), in the file's number.
    pub unapplied_delay: Option<f64>,
    /// Source position along the line, m, when the file gives it.
    pub source_x_m: Option<f64>,
    /// Receiver position of each trace along the line, m, when the file gives them.
    pub receiver_x_m: Option<Vec<f64>>,
    /// Channel number of each trace as recorded.
    pub channel: Vec<i64>,
    /// The shot's record number in the file (SEG-2: file order; SEG-Y: field record).
    pub record: i64,
    /// The file format ("SEG-2", "SEG-Y rev 1", …).
    pub format: String,
    /// The sample encoding ("int32", "IEEE float32", "IBM float32", …).
    pub sample_format: String,
    /// Whether something about the reading was a guess.
    pub guessed: bool,
    /// What was read and how (sample interval source, ignored fields), one sentence each.
    pub notes: Vec<String>,
}

impl ShotGather {
    /// Number of traces.
    pub fn n_traces(&self) -> usize {
        self.data.nrows()
    }

    /// Samples per trace.
    pub fn n_samples(&self) -> usize {
        self.data.ncols()
    }

    /// Time of sample `j` after the shot, s.
    pub fn time_s(&self, j: usize) -> f64 {
        self.start_time_s + j as f64 * self.sample_interval_s
    }

    /// A JSON summary (counts, sampling, geometry) for `read <file>`.
    pub fn summary(&self) -> serde_json::Value {
        let max_abs = self.data.iter().fold(0.0f64, |a, &b| a.max(b.abs()));
        serde_json::json!({
            "record": self.record,
            "n_traces": self.n_traces(),
            "n_samples": self.n_samples(),
            "sample_interval_s": self.sample_interval_s,
            "record_length_s": self.n_samples() as f64 * self.sample_interval_s,
            "sample_format": self.sample_format,
            "source_x_m": self.source_x_m,
            "receiver_x_range_m": self.receiver_x_m.as_ref().map(|r| {
                [r.iter().copied().fold(f64::INFINITY, f64::min), r.iter().copied().fold(f64::NEG_INFINITY, f64::max)]
            }),
            "max_abs_amplitude": max_abs,
        })
    }
}
