//! Trace filters and gains: dewow, background (mean-trace) removal, t^p gain and AGC.
//!
//! The moving windows follow GPRPy's `gprpyTools` definitions exactly (Plattner 2020, TLE
//! 39(5); the rules are written out in `../shared/oracles/gpr_processing.json` →
//! `meta.definitions`), so results agree with GPRPy to rounding. For a window of `w`
//! samples (or traces) the half-width is `h = ⌈w/2⌉` and index `i` of `n` uses:
//!
//! * `i ≥ n − h`: the block `[n − h, n)` (the last `h` values);
//! * `h ≤ i < n − h`: the centred block `[i − h, i + h]` (`2h + 1` values: 11 for `w = 10`);
//! * `i < h`: the block `[0, h]` (`h + 1` values).
//!
//! and when the window is at least the whole record (`w ≥ n`; for AGC `w > n`) one block
//! covering everything.

use ndarray::{Array2, ArrayView2, ShapeBuilder};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::line::GprError;

/// A matrix in column-major order: `buf[j·ns + i]` is sample `i` of trace `j`.
pub(crate) struct Cols {
    pub(crate) ns: usize,
    pub(crate) ntr: usize,
    pub(crate) buf: Vec<f64>,
}

impl Cols {
    /// Copy any `(n_samples, n_traces)` view into column-major order.
    pub(crate) fn from_view(data: ArrayView2<f64>) -> Self {
        let (ns, ntr) = data.dim();
        let t = data.t();
        let buf = match t.as_slice() {
            Some(s) => s.to_vec(),
            None => t.iter().copied().collect(),
        };
        Cols { ns, ntr, buf }
    }

    /// Back into an `(n_samples, n_traces)` array (column-major memory).
    pub(crate) fn into_array(self) -> Array2<f64> {
        // The buffer length is ns·ntr by construction, so the shape always fits.
        Array2::from_shape_vec((self.ns, self.ntr).f(), self.buf)
            .unwrap_or_else(|_| Array2::zeros((0, 0)))
    }

    fn zeros(ns: usize, ntr: usize) -> Self {
        Cols {
            ns,
            ntr,
            buf: vec![0.0; ns * ntr],
        }
    }
}

/// GPRPy's window `[start, end)` for index `i` of `n` with half-width `h` (module docs).
pub fn gprpy_window(i: usize, n: usize, h: usize) -> (usize, usize) {
    let last = n.saturating_sub(h);
    if i >= last {
        (last, n)
    } else if i >= h {
        (i - h, (i + h + 1).min(n))
    } else {
        (0, (h + 1).min(n))
    }
}

/// Half-width `⌈w/2⌉` of a GPRPy window of `w`.
pub fn half_width(window: usize) -> usize {
    window.div_ceil(2)
}

fn check_window(step: &str, parameter: &str, window: usize) -> Result<(), GprError> {
    if window == 0 {
        return Err(GprError::invalid(
            step,
            parameter,
            window,
            "a moving window needs at least one sample",
        ));
    }
    Ok(())
}

/// Dewow: subtract from each sample the mean of its trace over a moving window of
/// `window_samples` (GPRPy `dewow`: `y_i = x_i − mean(x[a_i..b_i])` with the window rule of
/// the module docs; the whole-trace mean when `window ≥ n_samples`). A low-cut filter that
/// removes the slowly decaying "wow" induced by the direct coupling.
pub fn dewow(data: ArrayView2<f64>, window_samples: usize) -> Result<Array2<f64>, GprError> {
    check_window("dewow", "window_samples", window_samples)?;
    let c = Cols::from_view(data);
    let (ns, ntr) = (c.ns, c.ntr);
    let mut out = Cols::zeros(ns, ntr);
    if ns == 0 || ntr == 0 {
        return Ok(out.into_array());
    }
    let ranges = windows(ns, window_samples, window_samples >= ns);
    out.buf
        .par_chunks_mut(ns)
        .zip(c.buf.par_chunks(ns))
        .for_each(|(o, x)| {
            let sums = window_sums(x, &ranges, |v| v);
            for (i, (&(a, b), sum)) in ranges.iter().zip(sums).enumerate() {
                o[i] = x[i] - sum / (b - a) as f64;
            }
        });
    Ok(out.into_array())
}

/// Per-index windows: one block `[0, n)` when `full`, else GPRPy's rule.
fn windows(n: usize, window: usize, full: bool) -> Vec<(usize, usize)> {
    if full {
        vec![(0, n); n]
    } else {
        let h = half_width(window);
        (0..n).map(|i| gprpy_window(i, n, h)).collect()
    }
}

/// Sums of `f(x)` over each index's window, `out_i = Σ_{k∈[a_i,b_i)} f(x_k)`.
///
/// Consecutive windows that move forward are updated by adding the entering and removing
/// the leaving terms; the sum is recomputed directly every 64 updates, and whenever it has
/// shrunk below 1e-8 of the magnitude that passed through it since the last recompute (so
/// cancellation cannot eat its digits). The result equals direct summation to ~1e-13
/// relative, in O(n) instead of O(n·w).
fn window_sums(x: &[f64], ranges: &[(usize, usize)], f: impl Fn(f64) -> f64) -> Vec<f64> {
    let direct = |a: usize, b: usize| x[a..b].iter().map(|v| f(*v)).sum::<f64>();
    let mut out = Vec::with_capacity(ranges.len());
    let mut cur: Option<(usize, usize)> = None;
    let (mut sum, mut mag, mut updates) = (0.0f64, 0.0f64, 0usize);
    for &(a, b) in ranges {
        match cur {
            Some((ca, cb)) if (ca, cb) == (a, b) => {}
            Some((ca, cb)) if a >= ca && b >= cb && a <= cb && updates < 64 => {
                for v in &x[cb..b] {
                    let t = f(*v);
                    sum += t;
                    mag += t.abs();
                }
                for v in &x[ca..a] {
                    let t = f(*v);
                    sum -= t;
                    mag += t.abs();
                }
                updates += 1;
                if sum.abs() < 1e-8 * mag {
                    sum = direct(a, b);
                    mag = sum.abs();
                    updates = 0;
                }
            }
            _ => {
                sum = direct(a, b);
                mag = sum.abs();
                updates = 0;
            }
        }
        cur = Some((a, b));
        out.push(sum);
    }
    out
}

/// How much of the line the background (mean) trace is taken over.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackgroundWindow {
    /// The mean of all traces (readgssi `bgr(win=0)`): removes everything horizontal,
    /// including flat reflectors.
    WholeLine,
    /// A moving mean over this many traces (GPRPy `remMeanTrace(ntraces)`): removes the
    /// air/ground wave and ringing while keeping long flat reflectors better.
    Running {
        /// Window width in traces.
        traces: usize,
    },
}

/// Background removal: subtract from every trace the mean trace over a window of traces,
/// `y_{i,j} = x_{i,j} − mean_{k∈[a_j,b_j)} x_{i,k}` (GPRPy `remMeanTrace`, readgssi `bgr`).
pub fn remove_background(
    data: ArrayView2<f64>,
    window: BackgroundWindow,
) -> Result<Array2<f64>, GprError> {
    let c = Cols::from_view(data);
    let (ns, ntr) = (c.ns, c.ntr);
    let mut out = Cols::zeros(ns, ntr);
    if ns == 0 || ntr == 0 {
        return Ok(out.into_array());
    }
    let ranges = match window {
        BackgroundWindow::WholeLine => windows(ntr, ntr, true),
        BackgroundWindow::Running { traces } => {
            check_window("background removal", "traces", traces)?;
            windows(ntr, traces, traces >= ntr)
        }
    };
    // Consecutive traces share their window at the edges (and for the whole line): compute
    // each distinct mean trace once.
    let mut mean_cache: Option<((usize, usize), Vec<f64>)> = None;
    for (j, &(a, b)) in ranges.iter().enumerate() {
        if mean_cache.as_ref().is_none_or(|(r, _)| *r != (a, b)) {
            let mut mean = vec![0.0; ns];
            for k in a..b {
                for (m, x) in mean.iter_mut().zip(&c.buf[k * ns..(k + 1) * ns]) {
                    *m += x;
                }
            }
            let inv = (b - a) as f64;
            mean.iter_mut().for_each(|m| *m /= inv);
            mean_cache = Some(((a, b), mean));
        }
        if let Some((_, mean)) = &mean_cache {
            let x = &c.buf[j * ns..(j + 1) * ns];
            for ((o, xv), m) in out.buf[j * ns..(j + 1) * ns].iter_mut().zip(x).zip(mean) {
                *o = xv - m;
            }
        }
    }
    Ok(out.into_array())
}

/// t-power gain: `y_{i,j} = x_{i,j} · max(t_i, 0)^p` with `t` the two-way time in ns (GPRPy
/// `tpowGain`: no normalisation, so sample 0 at t = 0 becomes 0). Times before time zero
/// are given zero gain. `p` must be in [0, 10].
pub fn tpow_gain(
    data: ArrayView2<f64>,
    time_ns: &[f64],
    power: f64,
) -> Result<Array2<f64>, GprError> {
    if !(0.0..=10.0).contains(&power) {
        return Err(GprError::invalid(
            "t-power gain",
            "power",
            power,
            "the exponent must be between 0 and 10 (negative powers divide by t = 0)",
        ));
    }
    if time_ns.len() != data.nrows() {
        return Err(GprError::not_applicable(
            "t-power gain",
            format!(
                "the time axis has {} values for {} samples",
                time_ns.len(),
                data.nrows()
            ),
        ));
    }
    let gain: Vec<f64> = time_ns.iter().map(|t| t.max(0.0).powf(power)).collect();
    let mut c = Cols::from_view(data);
    let ns = c.ns;
    if ns > 0 {
        c.buf.par_chunks_mut(ns).for_each(|col| {
            for (v, g) in col.iter_mut().zip(&gain) {
                *v *= g;
            }
        });
    }
    Ok(c.into_array())
}

/// Floor of the AGC energy (GPRPy `agcGain`'s `eps`).
pub const AGC_EPS: f64 = 1e-8;

/// Automatic gain control: each sample divided by the Euclidean norm of its trace over a
/// moving window, `y_i = x_i / max(‖x[a_i..b_i]‖₂, 1e-8)` (GPRPy `agcGain`; the norm, not the
/// RMS, so a constant-amplitude trace comes out at 1/√(window length)). When the window is
/// longer than the trace (`w > n`) the whole-trace norm is used.
pub fn agc_gain(data: ArrayView2<f64>, window_samples: usize) -> Result<Array2<f64>, GprError> {
    check_window("AGC", "window_samples", window_samples)?;
    let c = Cols::from_view(data);
    let (ns, ntr) = (c.ns, c.ntr);
    let mut out = Cols::zeros(ns, ntr);
    if ns == 0 || ntr == 0 {
        return Ok(out.into_array());
    }
    let ranges = windows(ns, window_samples, window_samples > ns);
    out.buf
        .par_chunks_mut(ns)
        .zip(c.buf.par_chunks(ns))
        .for_each(|(o, x)| {
            let sums = window_sums(x, &ranges, |v| v * v);
            for (i, sum) in sums.into_iter().enumerate() {
                o[i] = x[i] / sum.max(0.0).sqrt().max(AGC_EPS);
            }
        });
    Ok(out.into_array())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn window_rule_matches_gprpy_for_window_10() {
        // n = 20, w = 10 → h = 5: rows 0..4 use [0, 6), rows 5..14 centred 11-sample windows,
        // rows 15..19 use [15, 20).
        assert_eq!(gprpy_window(0, 20, 5), (0, 6));
        assert_eq!(gprpy_window(4, 20, 5), (0, 6));
        assert_eq!(gprpy_window(5, 20, 5), (0, 11));
        assert_eq!(gprpy_window(14, 20, 5), (9, 20));
        assert_eq!(gprpy_window(15, 20, 5), (15, 20));
        assert_eq!(gprpy_window(19, 20, 5), (15, 20));
    }

    #[test]
    fn sliding_sums_equal_direct_sums_even_after_a_loud_burst() {
        // A 1e8 burst followed by values of order 1: the sliding sums of squares must not
        // keep the burst's rounding (the cancellation guard recomputes).
        let mut x: Vec<f64> = (0..2000).map(|i| ((i * 7919) % 13) as f64 - 6.0).collect();
        x[100] = 1e8;
        let ranges: Vec<(usize, usize)> =
            (0..x.len()).map(|i| gprpy_window(i, x.len(), 20)).collect();
        let fast = window_sums(&x, &ranges, |v| v * v);
        for (i, &(a, b)) in ranges.iter().enumerate() {
            let d: f64 = x[a..b].iter().map(|v| v * v).sum();
            assert!(
                (fast[i] - d).abs() <= 1e-12 * d.abs().max(1.0),
                "{i}: {} vs {d}",
                fast[i]
            );
        }
    }

    #[test]
    fn dewow_of_a_constant_is_zero_and_of_a_ramp_is_zero_inside() {
        let ramp = Array2::from_shape_fn((30, 2), |(i, _)| 3.0 + 2.0 * i as f64);
        let d = dewow(ramp.view(), 4).unwrap();
        // Interior (centred windows, h = 2): a linear trend is removed exactly.
        for i in 2..28 {
            assert!(d[[i, 0]].abs() < 1e-12, "{i}: {}", d[[i, 0]]);
        }
        // First block: mean of rows 0..=2 is 5 → row 0 gives 3 − 5.
        assert!((d[[0, 1]] + 2.0).abs() < 1e-12);
        // Window ≥ n: the whole-trace mean.
        let w = dewow(ramp.view(), 30).unwrap();
        assert!((w[[0, 0]] - (3.0 - 32.0)).abs() < 1e-12);
        assert!(dewow(ramp.view(), 0).is_err());
    }

    #[test]
    fn background_removal_kills_a_flat_event_and_keeps_a_dipping_one() {
        let mut x = Array2::<f64>::zeros((20, 40));
        for j in 0..40 {
            x[[5, j]] = 7.0; // flat
            x[[6 + j / 4, j]] += 1.0; // dipping
        }
        let y = remove_background(x.view(), BackgroundWindow::WholeLine).unwrap();
        assert!(y.row(5).iter().all(|v| v.abs() < 1e-12));
        assert!(y[[6, 0]] > 0.8);
        let r = remove_background(x.view(), BackgroundWindow::Running { traces: 8 }).unwrap();
        assert!(r.row(5).iter().all(|v| v.abs() < 1e-12));
    }

    #[test]
    fn tpow_and_agc_closed_forms() {
        let x = array![[1.0], [1.0], [1.0]];
        let g = tpow_gain(x.view(), &[0.0, 2.0, 4.0], 1.5).unwrap();
        assert_eq!(g.column(0).to_vec(), vec![0.0, 2f64.powf(1.5), 8.0]);
        assert!(tpow_gain(x.view(), &[0.0, 1.0], 1.0).is_err());
        assert!(tpow_gain(x.view(), &[0.0, 1.0, 2.0], -1.0).is_err());
        // A constant trace of length 100 with window 9 (h = 5): interior windows hold 11
        // samples, so AGC gives 1/√11; window > n gives 1/√100.
        let c = Array2::from_elem((100, 1), 3.0);
        let a = agc_gain(c.view(), 9).unwrap();
        assert!((a[[50, 0]] - 1.0 / 11f64.sqrt()).abs() < 1e-15);
        let a = agc_gain(c.view(), 101).unwrap();
        assert!((a[[0, 0]] - 0.1).abs() < 1e-15);
        // Zero energy is floored, not divided by zero.
        let z = agc_gain(Array2::<f64>::zeros((10, 1)).view(), 3).unwrap();
        assert!(z.iter().all(|v| *v == 0.0));
    }
}
