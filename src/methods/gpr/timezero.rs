//! Time-zero correction on the first break.
//!
//! The first break of trace `j` is where its amplitude first reaches a fraction `τ` of the
//! trace's peak: the first sample `i` with `|a_i| ≥ τ·max|a|`, refined by linear
//! interpolation between samples `i − 1` and `i`:
//! `p_j = i − 1 + (τ·max − |a_{i−1}|)/(|a_i| − |a_{i−1}|)`.
//! The line's first break is the median of the picks. With bistatic antennas the first
//! arrival is the direct air wave, which left the transmitter at time zero and crossed the
//! separation `s` at the speed of light, so time zero is `P − s/(c·dt)` samples when the
//! separation is known and the correction is asked for.
//!
//! The shift is applied by dropping the whole samples before time zero; the fraction of a
//! sample that remains is kept in the time axis (`t_i = (i − f)·dt`), so nothing is
//! resampled. Threshold picking is one convention among several (peak, zero crossing, onset):
//! other tools can put time zero a fraction of a period away, and the recipe records which
//! was used.

use ndarray::{Array2, ArrayView2};
use serde::{Deserialize, Serialize};

use super::filters::Cols;
use super::line::{GprError, SPEED_OF_LIGHT_M_PER_NS};

/// Parameters of the time-zero step (absent keys take the defaults).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TimeZeroParams {
    /// Pick threshold as a fraction of each trace's peak |amplitude| (0 < τ < 1).
    pub threshold_fraction: f64,
    /// Shift every trace onto the line's median pick (removes trigger jitter, but also any
    /// real static such as antenna lift-off) instead of one shift for the whole line.
    pub align_traces: bool,
    /// Move time zero earlier by the air-wave time over the antenna separation, `s/c`.
    pub correct_for_antenna_separation: bool,
}

impl Default for TimeZeroParams {
    fn default() -> Self {
        TimeZeroParams {
            threshold_fraction: 0.05,
            align_traces: false,
            correct_for_antenna_separation: true,
        }
    }
}

/// What the time-zero step found and did.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TimeZeroOutcome {
    /// The data from time zero on. Not serialised.
    #[serde(skip)]
    pub data: Array2<f64>,
    /// Per-trace first-break picks, fractional sample index (None for a silent trace).
    pub picks_sample: Vec<Option<f64>>,
    /// The line's first break: median of the picks, fractional sample index.
    pub line_first_break_sample: f64,
    /// Time zero in the input, fractional sample index.
    pub time_zero_sample_in: f64,
    /// Whole samples removed from the top of every trace.
    pub samples_removed: usize,
    /// Time zero in the output, fractional sample index in [0, 1).
    pub time_zero_sample_out: f64,
    /// Per-trace shifts applied when aligning (samples, positive = moved earlier).
    pub trace_shifts_samples: Vec<i64>,
    /// What a reader of the recipe should know.
    pub notes: Vec<String>,
}

/// First-break picks of every trace (module docs), ignoring the first `skip_samples` samples
/// (scan-header words). `None` for a trace with no non-zero sample.
pub fn pick_first_breaks(
    data: ArrayView2<f64>,
    threshold_fraction: f64,
    skip_samples: usize,
) -> Vec<Option<f64>> {
    let c = Cols::from_view(data);
    let ns = c.ns;
    if ns == 0 {
        return vec![None; c.ntr];
    }
    c.buf
        .chunks(ns)
        .map(|tr| pick_one(tr, threshold_fraction, skip_samples))
        .collect()
}

fn pick_one(trace: &[f64], tau: f64, skip: usize) -> Option<f64> {
    let body = trace.get(skip..)?;
    let peak = body.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if !(peak > 0.0 && peak.is_finite()) {
        return None;
    }
    let thr = tau * peak;
    let i = body.iter().position(|v| v.abs() >= thr)?;
    if i == 0 {
        return Some(skip as f64);
    }
    let (a0, a1) = (body[i - 1].abs(), body[i].abs());
    let frac = if a1 > a0 { (thr - a0) / (a1 - a0) } else { 1.0 };
    Some((skip + i - 1) as f64 + frac.clamp(0.0, 1.0))
}

/// Median of the picks that exist.
fn median(values: &[Option<f64>]) -> Option<f64> {
    let v: Vec<f64> = values.iter().flatten().copied().collect();
    crate::methods::shared::stats::median(&v)
}

/// Which phase of the direct wave marks time zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum TimeZeroPhase {
    /// The first break: where |a| first reaches τ of the trace's peak (module docs).
    #[default]
    FirstBreak,
    /// The direct wave's main lobe ([`pick_direct_wave_peaks`]): right for a zero-phase
    /// wavelet, whose reflections are then read at their peaks.
    DirectWavePeak,
}

/// Direct-wave peak picks of every trace: from the first break (threshold τ, see
/// [`pick_first_breaks`]) on, the first sample `i` where |a| is a local maximum
/// (`|a_{i−1}| ≤ |a_i| ≥ |a_{i+1}|`) and at least half the trace's peak |a| — the direct
/// wave's main lobe, not its side lobe — refined by the vertex of the parabola through
/// `(i−1, i, i+1)`: `p = i + (|a_{i−1}| − |a_{i+1}|) / (2·(|a_{i−1}| − 2|a_i| + |a_{i+1}|))`.
/// `None` for a silent trace.
pub fn pick_direct_wave_peaks(
    data: ArrayView2<f64>,
    threshold_fraction: f64,
    skip_samples: usize,
) -> Vec<Option<f64>> {
    let c = Cols::from_view(data);
    let ns = c.ns;
    if ns == 0 {
        return vec![None; c.ntr];
    }
    c.buf
        .chunks(ns)
        .map(|tr| peak_one(tr, threshold_fraction, skip_samples))
        .collect()
}

fn peak_one(trace: &[f64], tau: f64, skip: usize) -> Option<f64> {
    let first = pick_one(trace, tau, skip)?;
    let peak = trace
        .get(skip..)?
        .iter()
        .fold(0.0f64, |m, v| m.max(v.abs()));
    let n = trace.len();
    let start = (first.floor() as usize).max(skip);
    let a = |i: usize| trace[i].abs();
    for i in start..n {
        let left = if i > skip { a(i - 1) } else { 0.0 };
        let right = if i + 1 < n { a(i + 1) } else { 0.0 };
        if a(i) >= 0.5 * peak && a(i) >= left && a(i) >= right {
            let denom = left - 2.0 * a(i) + right;
            let off = if denom < 0.0 {
                (0.5 * (left - right) / denom).clamp(-0.5, 0.5)
            } else {
                0.0
            };
            return Some(i as f64 + off);
        }
    }
    None
}

/// Pick the first breaks, place time zero (module docs) and cut the samples before it.
/// `skip_samples` are scan-header words ignored by the picker; `antenna_separation_m`
/// enables the air-wave correction when the parameters ask for it.
pub fn apply_time_zero(
    data: ArrayView2<f64>,
    dt_ns: f64,
    params: &TimeZeroParams,
    skip_samples: usize,
    antenna_separation_m: Option<f64>,
) -> Result<TimeZeroOutcome, GprError> {
    apply_time_zero_at(
        data,
        dt_ns,
        params,
        TimeZeroPhase::FirstBreak,
        skip_samples,
        antenna_separation_m,
    )
}

/// [`apply_time_zero`] with the phase that marks time zero chosen: the first break or the
/// direct wave's peak ([`pick_direct_wave_peaks`]). The air-wave correction `s/c` applies to
/// either (the direct air wave's onset and its peak both arrive `s/c` after emission).
pub fn apply_time_zero_at(
    data: ArrayView2<f64>,
    dt_ns: f64,
    params: &TimeZeroParams,
    phase: TimeZeroPhase,
    skip_samples: usize,
    antenna_separation_m: Option<f64>,
) -> Result<TimeZeroOutcome, GprError> {
    let step = "time zero";
    if !(params.threshold_fraction > 0.0 && params.threshold_fraction < 1.0) {
        return Err(GprError::invalid(
            step,
            "threshold_fraction",
            params.threshold_fraction,
            "must be between 0 and 1 (a fraction of each trace's peak)",
        ));
    }
    if !(dt_ns.is_finite() && dt_ns > 0.0) {
        return Err(GprError::invalid(step, "dt_ns", dt_ns, "must be positive"));
    }
    let picks = match phase {
        TimeZeroPhase::FirstBreak => {
            pick_first_breaks(data, params.threshold_fraction, skip_samples)
        }
        TimeZeroPhase::DirectWavePeak => {
            pick_direct_wave_peaks(data, params.threshold_fraction, skip_samples)
        }
    };
    let Some(line_pick) = median(&picks) else {
        return Err(GprError::not_applicable(
            step,
            "no trace has a non-zero sample, so there is no first break to pick",
        ));
    };
    let mut notes = vec![match phase {
        TimeZeroPhase::FirstBreak => format!(
            "first break at {:.2} samples ({:.3} ns): median of {} picks at {:.0} % of each trace's peak",
            line_pick,
            line_pick * dt_ns,
            picks.iter().flatten().count(),
            100.0 * params.threshold_fraction
        ),
        TimeZeroPhase::DirectWavePeak => format!(
            "direct-wave peak at {:.2} samples ({:.3} ns): median of {} picks of the main lobe (the first local maximum of |a| at or above half the trace's peak, after the {:.0} % first break); reflections are then read at their peaks",
            line_pick,
            line_pick * dt_ns,
            picks.iter().flatten().count(),
            100.0 * params.threshold_fraction
        ),
    }];
    let mut t0 = line_pick;
    match (params.correct_for_antenna_separation, antenna_separation_m) {
        (true, Some(s)) if s > 0.0 => {
            let air_ns = s / SPEED_OF_LIGHT_M_PER_NS;
            t0 = (line_pick - air_ns / dt_ns).max(0.0);
            notes.push(format!(
                "time zero moved {air_ns:.3} ns earlier than the first break: the air wave's time over the {s} m antenna separation"
            ));
        }
        (true, _) => notes.push(
            "antenna separation unknown: time zero is the first break itself (the air-wave time over the separation is not subtracted)"
                .to_string(),
        ),
        _ => {}
    }
    let mut c = Cols::from_view(data);
    let ns = c.ns;
    let mut shifts = Vec::new();
    if params.align_traces && ns > 0 {
        for (tr, p) in c.buf.chunks_mut(ns).zip(&picks) {
            let s = p.map_or(0, |p| (p - line_pick).round() as i64);
            shift_trace(tr, s);
            shifts.push(s);
        }
        notes.push(format!(
            "each trace shifted onto the median pick (largest shift {} samples)",
            shifts.iter().map(|s| s.abs()).max().unwrap_or(0)
        ));
    }
    let cut = (t0.floor() as usize).min(ns);
    let frac = t0 - cut as f64;
    let new_ns = ns - cut;
    let mut out = Vec::with_capacity(new_ns * c.ntr);
    if ns > 0 {
        for tr in c.buf.chunks(ns) {
            out.extend_from_slice(&tr[cut..]);
        }
    }
    let out = Cols {
        ns: new_ns,
        ntr: c.ntr,
        buf: out,
    };
    Ok(TimeZeroOutcome {
        data: out.into_array(),
        picks_sample: picks,
        line_first_break_sample: line_pick,
        time_zero_sample_in: t0,
        samples_removed: cut,
        time_zero_sample_out: frac,
        trace_shifts_samples: shifts,
        notes,
    })
}

/// Move a trace `s` samples earlier (s > 0) or later (s < 0), zero-filling.
fn shift_trace(tr: &mut [f64], s: i64) {
    let n = tr.len();
    let k = s.unsigned_abs() as usize;
    if k == 0 {
        return;
    }
    if k >= n {
        tr.iter_mut().for_each(|v| *v = 0.0);
    } else if s > 0 {
        tr.copy_within(k.., 0);
        tr[n - k..].iter_mut().for_each(|v| *v = 0.0);
    } else {
        tr.copy_within(..n - k, k);
        tr[..k].iter_mut().for_each(|v| *v = 0.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pick_interpolates_the_threshold_crossing() {
        // Peak 10, threshold 0.25 → 2.5, crossed between samples 3 (|−1|) and 4 (4):
        // p = 3 + (2.5 − 1)/(4 − 1) = 3.5.
        let tr = [0.0, 0.0, 0.5, -1.0, 4.0, 10.0, -6.0];
        assert_eq!(pick_one(&tr, 0.25, 0), Some(3.5));
        // Skipping header words: a huge word at 0 must not be the peak.
        let tr2 = [-32768.0, 0.0, 0.5, -1.0, 4.0, 10.0];
        assert_eq!(pick_one(&tr2, 0.25, 1), Some(3.5));
        assert_eq!(pick_one(&[0.0; 5], 0.1, 0), None);
    }

    #[test]
    fn time_zero_cuts_whole_samples_and_keeps_the_fraction() {
        // Two traces with a spike ramp: first breaks at 10.5 and 12.5 → median 11.5.
        let mut x = Array2::<f64>::zeros((40, 2));
        for (j, at) in [(0usize, 10usize), (1, 12)] {
            x[[at, j]] = 1.0;
            x[[at + 1, j]] = 3.0;
            x[[at + 2, j]] = 10.0;
        }
        let p = TimeZeroParams {
            threshold_fraction: 0.2,
            align_traces: false,
            correct_for_antenna_separation: false,
        };
        let o = apply_time_zero(x.view(), 0.5, &p, 0, None).unwrap();
        // Trace 0: threshold 2 between 1 (i=10) and 3 (i=11) → 10.5; trace 1 → 12.5.
        assert_eq!(o.picks_sample, vec![Some(10.5), Some(12.5)]);
        assert_eq!(o.line_first_break_sample, 11.5);
        assert_eq!(o.samples_removed, 11);
        assert_eq!(o.time_zero_sample_out, 0.5);
        assert_eq!(o.data.nrows(), 29);
        // With the air-wave correction for 0.299792458 m (1 ns = 2 samples): 11.5 − 2 = 9.5.
        let p2 = TimeZeroParams {
            correct_for_antenna_separation: true,
            ..p
        };
        let o2 = apply_time_zero(x.view(), 0.5, &p2, 0, Some(SPEED_OF_LIGHT_M_PER_NS)).unwrap();
        assert!((o2.time_zero_sample_in - 9.5).abs() < 1e-12);
        // Aligning moves trace 1 one sample earlier and trace 0 one later (round(±1)).
        let p3 = TimeZeroParams {
            align_traces: true,
            ..p
        };
        let o3 = apply_time_zero(x.view(), 0.5, &p3, 0, None).unwrap();
        assert_eq!(o3.trace_shifts_samples, vec![-1, 1]);
        assert_eq!(o3.data[[1, 0]], o3.data[[1, 1]]);
    }

    /// A symmetric pulse 1, 4, 9, 10, 9, 4, 1 (vertex at sample 4 exactly) and an
    /// asymmetric one 2, 8, 10, 6 around sample 12: parabola vertex
    /// 12 + (8 − 6)/(2·(8 − 20 + 6)) = 12 − 1/6. A side lobe of −4 before the main lobe of 10
    /// is passed over (below half the peak).
    #[test]
    fn direct_wave_peak_is_the_main_lobe_vertex() {
        let tr = [0.0, 1.0, 4.0, 9.0, 10.0, 9.0, 4.0, 1.0, 0.0];
        assert_eq!(peak_one(&tr, 0.05, 0), Some(4.0));
        let mut tr2 = vec![0.0; 16];
        tr2[8] = -4.0;
        tr2[9] = -1.0;
        tr2[10] = 2.0;
        tr2[11] = 8.0;
        tr2[12] = 10.0;
        tr2[13] = 6.0;
        let p = peak_one(&tr2, 0.05, 0).unwrap();
        assert!((p - (12.0 - 1.0 / 6.0)).abs() < 1e-12, "{p}");
        assert_eq!(peak_one(&[0.0; 4], 0.05, 0), None);
        // Through the step: time zero at the vertex, the fraction kept.
        let x = Array2::from_shape_fn((16, 3), |(i, _)| tr2[i]);
        let o = apply_time_zero_at(
            x.view(),
            0.5,
            &TimeZeroParams::default(),
            TimeZeroPhase::DirectWavePeak,
            0,
            None,
        )
        .unwrap();
        assert_eq!(o.samples_removed, 11);
        assert!((o.time_zero_sample_out - 5.0 / 6.0).abs() < 1e-12);
        assert!(o.notes[0].contains("direct-wave peak"), "{:?}", o.notes);
    }

    #[test]
    fn silent_line_is_not_applicable() {
        let x = Array2::<f64>::zeros((10, 3));
        let e = apply_time_zero(x.view(), 1.0, &TimeZeroParams::default(), 0, None).unwrap_err();
        assert!(e.to_string().contains("no first break"), "{e}");
    }
}
