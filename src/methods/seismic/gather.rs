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

/// A little- or big-endian reader over a byte slice that never panics: every read is
/// bounds-checked and returns `None` past the end.
#[derive(Clone, Copy)]
pub(crate) struct Bytes<'a> {
    pub b: &'a [u8],
    pub big_endian: bool,
}

impl<'a> Bytes<'a> {
    pub fn slice(&self, off: usize, len: usize) -> Option<&'a [u8]> {
        self.b.get(off..off.checked_add(len)?)
    }

    fn arr<const N: usize>(&self, off: usize) -> Option<[u8; N]> {
        let s = self.slice(off, N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        if self.big_endian {
            a.reverse();
        }
        Some(a)
    }

    pub fn u8(&self, off: usize) -> Option<u8> {
        self.b.get(off).copied()
    }
    pub fn u16(&self, off: usize) -> Option<u16> {
        self.arr::<2>(off).map(u16::from_le_bytes)
    }
    pub fn i16(&self, off: usize) -> Option<i16> {
        self.arr::<2>(off).map(i16::from_le_bytes)
    }
    pub fn u32(&self, off: usize) -> Option<u32> {
        self.arr::<4>(off).map(u32::from_le_bytes)
    }
    pub fn i32(&self, off: usize) -> Option<i32> {
        self.arr::<4>(off).map(i32::from_le_bytes)
    }
    pub fn u64(&self, off: usize) -> Option<u64> {
        self.arr::<8>(off).map(u64::from_le_bytes)
    }
    pub fn i64(&self, off: usize) -> Option<i64> {
        self.arr::<8>(off).map(i64::from_le_bytes)
    }
    pub fn f32(&self, off: usize) -> Option<f32> {
        self.arr::<4>(off).map(f32::from_le_bytes)
    }
    pub fn f64(&self, off: usize) -> Option<f64> {
        self.arr::<8>(off).map(f64::from_le_bytes)
    }
}
