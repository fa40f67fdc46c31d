//! Zero-phase Butterworth band-pass, designed and applied as `obspy.signal.filter.bandpass(…,
//! zerophase=True)` does (readgssi's `bp` calls it), so the numbers agree with it.
//!
//! Design (scipy `iirfilter(N, [f1/fN, f2/fN], btype='band', ftype='butter', output='sos')`):
//!
//! 1. analogue Butterworth prototype of order N: poles `p_k = −exp(iπ m/(2N))`,
//!    `m = −N+1, −N+3, …, N−1`, gain 1 (Butterworth 1930);
//! 2. pre-warp the band edges for the bilinear transform at fs = 2:
//!    `ω_{1,2} = 4·tan(π·W_{1,2}/2)` with `W = f/f_Nyquist`;
//! 3. low-pass → band-pass: bandwidth `B = ω₂ − ω₁`, centre `ω₀ = √(ω₁ω₂)`; every prototype
//!    pole `p` gives `p·B/2 ± √((p·B/2)² − ω₀²)`, N zeros at s = 0, gain `B^N`;
//! 4. bilinear transform `z = (4 + s)/(4 − s)`: poles map, the N zeros at 0 go to z = 1,
//!    N zeros are added at z = −1, gain `B^N·4^N / Π(4 − p)`;
//! 5. second-order sections: each pair of conjugate (or adjacent real) poles with one zero at
//!    +1 and one at −1, `b = [1, 0, −1]`, the gain in the first section.
//!
//! Application: `sosfilt` (transposed direct form II, zero initial state) forward, then
//! again on the time-reversed output, then reversed back — no padding (obspy's zerophase).
//! The amplitude response is `|H(f)|²` of the order-N filter (corners = N, so the effective
//! order is 2N).

use std::f64::consts::PI;

use ndarray::{Array2, ArrayView2};
use num_complex::Complex64;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::filters::Cols;
use super::line::GprError;

/// One second-order section `[b0, b1, b2, a0, a1, a2]` with `a0 = 1`.
pub type Sos = [f64; 6];

/// Band-pass parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BandpassParams {
    /// Lower corner, MHz.
    pub low_mhz: f64,
    /// Upper corner, MHz.
    pub high_mhz: f64,
    /// Butterworth order per corner (obspy `corners`); 1 to 8.
    pub order: usize,
}

/// Design the band-pass as second-order sections (module docs, steps 1–5).
pub fn butterworth_bandpass_sos(
    low_hz: f64,
    high_hz: f64,
    fs_hz: f64,
    order: usize,
) -> Result<Vec<Sos>, GprError> {
    let step = "band-pass";
    if !(1..=8).contains(&order) {
        return Err(GprError::invalid(
            step,
            "order",
            order,
            "use an order of 1 to 8",
        ));
    }
    if !(fs_hz.is_finite() && fs_hz > 0.0) {
        return Err(GprError::invalid(
            step,
            "sampling rate (Hz)",
            fs_hz,
            "must be positive",
        ));
    }
    let nyquist = 0.5 * fs_hz;
    if !(low_hz > 0.0 && low_hz < high_hz) {
        return Err(GprError::invalid(
            step,
            "corners (Hz)",
            format!("{low_hz}–{high_hz}"),
            "need 0 < low < high",
        ));
    }
    if high_hz >= nyquist {
        return Err(GprError::invalid(
            step,
            "upper corner (Hz)",
            high_hz,
            &format!("must be below the Nyquist frequency {nyquist} Hz of this sampling"),
        ));
    }
    let n = order;
    let warp = |f: f64| 4.0 * (PI * (f / nyquist) / 2.0).tan();
    let (w1, w2) = (warp(low_hz), warp(high_hz));
    let bw = w2 - w1;
    let w0 = (w1 * w2).sqrt();
    // Analogue prototype poles and the band-pass transformation.
    let mut poles: Vec<Complex64> = Vec::with_capacity(2 * n);
    for k in 0..n {
        let m = -(n as f64) + 1.0 + 2.0 * k as f64;
        let p = -Complex64::from_polar(1.0, PI * m / (2.0 * n as f64));
        let pl = p * (bw / 2.0);
        let root = (pl * pl - w0 * w0).sqrt();
        poles.push(pl + root);
        poles.push(pl - root);
    }
    // Bilinear transform (fs = 2 → 2·fs = 4).
    let fs2: f64 = 4.0;
    let mut gain = Complex64::new(bw.powi(n as i32) * fs2.powi(n as i32), 0.0);
    for p in &poles {
        gain /= fs2 - p;
    }
    let zpoles: Vec<Complex64> = poles.iter().map(|p| (fs2 + p) / (fs2 - p)).collect();
    let sections = pair_poles(&zpoles);
    Ok(sections
        .iter()
        .enumerate()
        .map(|(i, (a1, a2))| {
            let k = if i == 0 { gain.re } else { 1.0 };
            [k, 0.0, -k, 1.0, *a1, *a2]
        })
        .collect())
}

/// Group z-plane poles into real second-order denominators `(a1, a2)` of
/// `1 + a1 z⁻¹ + a2 z⁻²`: conjugate pairs together, real poles two by two.
fn pair_poles(poles: &[Complex64]) -> Vec<(f64, f64)> {
    let tol = 1e-12;
    let mut complex: Vec<Complex64> = poles.iter().copied().filter(|p| p.im > tol).collect();
    let mut real: Vec<f64> = poles
        .iter()
        .filter(|p| p.im.abs() <= tol)
        .map(|p| p.re)
        .collect();
    complex.sort_by(|a, b| a.norm().total_cmp(&b.norm()));
    real.sort_by(f64::total_cmp);
    let mut out: Vec<(f64, f64)> = complex
        .iter()
        .map(|p| (-2.0 * p.re, p.norm_sqr()))
        .collect();
    for pair in real.chunks(2) {
        match pair {
            [a, b] => out.push((-(a + b), a * b)),
            [a] => out.push((-a, 0.0)),
            _ => {}
        }
    }
    out
}

/// scipy `sosfilt` with zero initial state (transposed direct form II per section):
/// `y = b0·x + z0; z0 = b1·x − a1·y + z1; z1 = b2·x − a2·y`.
pub fn sosfilt(sos: &[Sos], x: &mut [f64]) {
    let mut state = vec![[0.0f64; 2]; sos.len()];
    for v in x.iter_mut() {
        let mut cur = *v;
        for (s, z) in sos.iter().zip(state.iter_mut()) {
            let y = s[0] * cur + z[0];
            z[0] = s[1] * cur - s[4] * y + z[1];
            z[1] = s[2] * cur - s[5] * y;
            cur = y;
        }
        *v = cur;
    }
}

/// Zero-phase filtering as obspy does it: `sosfilt` forward, then on the reversed output,
/// reversed back (no padding).
pub fn filtfilt_obspy(sos: &[Sos], x: &mut [f64]) {
    sosfilt(sos, x);
    x.reverse();
    sosfilt(sos, x);
    x.reverse();
}

/// Zero-phase Butterworth band-pass of every trace (module docs); `dt_ns` is the sampling
/// interval, so fs = 1/dt.
pub fn bandpass(
    data: ArrayView2<f64>,
    dt_ns: f64,
    params: &BandpassParams,
) -> Result<Array2<f64>, GprError> {
    if !(dt_ns.is_finite() && dt_ns > 0.0) {
        return Err(GprError::invalid(
            "band-pass",
            "dt_ns",
            dt_ns,
            "must be positive",
        ));
    }
    let sos = butterworth_bandpass_sos(
        params.low_mhz * 1e6,
        params.high_mhz * 1e6,
        1e9 / dt_ns,
        params.order,
    )?;
    let mut c = Cols::from_view(data);
    if c.ns > 0 {
        let ns = c.ns;
        c.buf
            .par_chunks_mut(ns)
            .for_each(|col| filtfilt_obspy(&sos, col));
    }
    Ok(c.into_array())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frequency response of the cascade at `f/fs`.
    fn response(sos: &[Sos], f_over_fs: f64) -> f64 {
        let z1 = Complex64::from_polar(1.0, -2.0 * PI * f_over_fs);
        let z2 = z1 * z1;
        sos.iter()
            .map(|s| ((s[0] + s[1] * z1 + s[2] * z2) / (s[3] + s[4] * z1 + s[5] * z2)).norm())
            .product()
    }

    #[test]
    fn butterworth_response_is_half_power_at_the_corners() {
        // A digital Butterworth band-pass from the bilinear transform has |H| = 1/√2 at both
        // corners and |H| = 1 at the (pre-warped) centre; these hold for every order.
        for order in 1..=4 {
            let fs = 1000.0;
            let sos = butterworth_bandpass_sos(50.0, 200.0, fs, order).unwrap();
            assert_eq!(sos.len(), order);
            for f in [50.0, 200.0] {
                let h = response(&sos, f / fs);
                assert!((h - 0.5f64.sqrt()).abs() < 1e-9, "order {order} f {f}: {h}");
            }
            let w1 = (PI * 50.0 / fs).tan();
            let w2 = (PI * 200.0 / fs).tan();
            let fc = (w1 * w2).sqrt().atan() / PI * fs;
            assert!((response(&sos, fc / fs) - 1.0).abs() < 1e-9);
            assert!(response(&sos, 0.0) < 1e-12);
        }
    }

    #[test]
    fn order_one_section_closed_form() {
        // N = 1: the analogue band-pass is H(s) = B·s/(s² + B·s + ω0²); with s = 4(1 − z⁻¹)/(1 + z⁻¹)
        // it becomes 4B(1 − z⁻²)/(D0 + (2ω0² − 32)z⁻¹ + (16 − 4B + ω0²)z⁻²), D0 = 16 + 4B + ω0².
        let (f1, f2, fs) = (100e6, 800e6, 512.0 / 48e-9);
        let sos = butterworth_bandpass_sos(f1, f2, fs, 1).unwrap();
        assert_eq!(sos.len(), 1);
        let w = |f: f64| 4.0 * (PI * f / fs).tan();
        let (w1, w2) = (w(f1), w(f2));
        let (b, w0sq) = (w2 - w1, w1 * w2);
        let d0 = 16.0 + 4.0 * b + w0sq;
        let expect = [
            4.0 * b / d0,
            0.0,
            -4.0 * b / d0,
            1.0,
            (2.0 * w0sq - 32.0) / d0,
            (16.0 - 4.0 * b + w0sq) / d0,
        ];
        for (got, want) in sos[0].iter().zip(expect) {
            assert!((got - want).abs() < 1e-14, "{:?} vs {expect:?}", sos[0]);
        }
    }

    #[test]
    fn refuses_corners_above_nyquist() {
        let e = butterworth_bandpass_sos(1.0, 600.0, 1000.0, 1).unwrap_err();
        assert!(e.to_string().contains("Nyquist"), "{e}");
    }
}
