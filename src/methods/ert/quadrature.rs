//! Gauss–Legendre and Gauss–Laguerre rules, and the wavenumbers of the 2.5D inverse
//! Fourier-cosine transform.
//!
//! The 2.5D potential is u(x, 0, z) = (2/π) ∫₀^∞ Ũ(x, k, z) dk (Dey & Morrison 1979, eq. 5).
//! Ũ behaves like K0(k r) — logarithmic at k → 0, exponentially decaying for large k — so the
//! integral is split at k0 = 1/r_min (Kemna 2000, §2.2.3; the same split pyGIMLi/BERT uses):
//! on [0, k0] with k = k0 t² and Gauss–Legendre in t (the substitution removes the log
//! singularity), and on [k0, ∞) with k = k0 + s·c/r_min and Gauss–Laguerre in s (the factor
//! e^{s} in the weights undoes the Laguerre weight function). The weights returned include
//! the 2/π, so u = Σ w_i Ũ(k_i).

use serde::{Deserialize, Serialize};

/// Abscissae and weights of the n-point Gauss–Legendre rule on [−1, 1], by Newton iteration
/// on P_n (Abramowitz & Stegun 1964, 25.4.29; Press et al. 2007, §4.6 `gauleg`).
pub fn gauss_legendre(n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut x = vec![0.0; n];
    let mut w = vec![0.0; n];
    let m = n.div_ceil(2);
    for i in 0..m {
        let mut z = (std::f64::consts::PI * (i as f64 + 0.75) / (n as f64 + 0.5)).cos();
        let mut pp = 1.0;
        for _ in 0..100 {
            let (mut p1, mut p2) = (1.0, 0.0);
            for j in 1..=n {
                let p3 = p2;
                p2 = p1;
                p1 = ((2 * j - 1) as f64 * z * p2 - (j - 1) as f64 * p3) / j as f64;
            }
            pp = n as f64 * (z * p1 - p2) / (z * z - 1.0);
            let z1 = z;
            z = z1 - p1 / pp;
            if (z - z1).abs() < 1e-15 {
                break;
            }
        }
        x[i] = -z;
        x[n - 1 - i] = z;
        w[i] = 2.0 / ((1.0 - z * z) * pp * pp);
        w[n - 1 - i] = w[i];
    }
    (x, w)
}

/// Abscissae and weights of the n-point Gauss–Laguerre rule for ∫₀^∞ e^{−s} f(s) ds
/// (Abramowitz & Stegun 1964, 25.4.45; Press et al. 2007, §4.6 `gaulag`, α = 0).
pub fn gauss_laguerre(n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut x = vec![0.0; n];
    let mut w = vec![0.0; n];
    let mut z = 0.0;
    for i in 0..n {
        z = match i {
            0 => 3.0 / (1.0 + 2.4 * n as f64),
            1 => z + 15.0 / (1.0 + 2.5 * n as f64),
            _ => {
                let ai = (i - 1) as f64;
                z + (1.0 + 2.55 * ai) / (1.9 * ai) * (z - x[i - 2])
            }
        };
        let (mut pp, mut p2) = (1.0, 0.0);
        for _ in 0..100 {
            let (mut p1, mut q2) = (1.0, 0.0);
            for j in 1..=n {
                let p3 = q2;
                q2 = p1;
                p1 = ((2 * j - 1) as f64 - z) * q2 / j as f64 - (j - 1) as f64 * p3 / j as f64;
            }
            p2 = q2;
            pp = n as f64 * (p1 - p2) / z;
            let z1 = z;
            z = z1 - p1 / pp;
            if (z - z1).abs() <= 1e-15 * z.abs() {
                break;
            }
        }
        x[i] = z;
        w[i] = -1.0 / (pp * n as f64 * p2);
    }
    (x, w)
}

/// Wavenumbers k_i (1/m) and weights w_i with u = Σ w_i Ũ(k_i) for the 2.5D transform.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Wavenumbers {
    /// Wavenumbers, 1/m.
    pub k_per_m: Vec<f64>,
    /// Weights (including 2/π), 1/m.
    pub weights: Vec<f64>,
}

impl Wavenumbers {
    /// The split Legendre/Laguerre rule of the module docs for electrode distances from
    /// `r_min_m` up: `n_legendre` points on [0, 1/r_min], `n_laguerre` beyond, Laguerre
    /// scale `c` (the tail abscissae are k0 + s·c/r_min).
    pub fn new(r_min_m: f64, n_legendre: usize, n_laguerre: usize, c: f64) -> Self {
        let k0 = 1.0 / r_min_m;
        let (x, w) = gauss_legendre(n_legendre);
        let mut k = Vec::new();
        let mut wt = Vec::new();
        for (xi, wi) in x.iter().zip(&w) {
            let t = 0.5 * (xi + 1.0);
            k.push(k0 * t * t);
            wt.push(0.5 * wi * 2.0 * k0 * t * 2.0 / std::f64::consts::PI);
        }
        let (s, ws) = gauss_laguerre(n_laguerre);
        for (si, wi) in s.iter().zip(&ws) {
            k.push(k0 + si * c / r_min_m);
            wt.push(wi * si.exp() * c / r_min_m * 2.0 / std::f64::consts::PI);
        }
        Wavenumbers {
            k_per_m: k,
            weights: wt,
        }
    }

    /// The default rule for a survey whose electrode distances span `r_min_m`..`r_max_m`:
    /// 13 + 4 points (as pyGIMLi) when r_max/r_min ≤ 50, 20 + 6 beyond; Laguerre scale ½.
    pub fn for_distances(r_min_m: f64, r_max_m: f64) -> Self {
        if r_max_m / r_min_m <= 50.0 {
            Wavenumbers::new(r_min_m, 13, 4, 0.5)
        } else {
            Wavenumbers::new(r_min_m, 20, 6, 0.5)
        }
    }

    /// Number of wavenumbers.
    pub fn len(&self) -> usize {
        self.k_per_m.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.k_per_m.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::ert::bessel::k0;

    #[test]
    fn legendre_and_laguerre_integrate_polynomials_exactly() {
        let (x, w) = gauss_legendre(7);
        // ∫_{-1}^{1} x^12 dx = 2/13 (degree 12 ≤ 2n−1 = 13).
        let s: f64 = x.iter().zip(&w).map(|(x, w)| w * x.powi(12)).sum();
        assert!((s - 2.0 / 13.0).abs() < 1e-14, "{s}");
        let (x, w) = gauss_laguerre(5);
        // ∫_0^∞ e^{-s} s^9 ds = 9! = 362880.
        let s: f64 = x.iter().zip(&w).map(|(x, w)| w * x.powi(9)).sum();
        assert!((s / 362_880.0 - 1.0).abs() < 1e-12, "{s}");
    }

    #[test]
    fn reproduces_pygimli_wavenumbers() {
        // ../shared/bench/ert_dd48_truth.json lists pyGIMLi's 17 wavenumbers for r_min = 1 m:
        // the same split with Laguerre scale 1 gives them.
        let w = Wavenumbers::new(1.0, 13, 4, 1.0);
        let want = [
            6.254393950878899e-05,
            0.25,
            0.9842455986580976,
            1.3225476896193924,
            10.395070912301133,
        ];
        for (i, v) in [0, 6, 12, 13, 16].iter().zip(want) {
            assert!(
                (w.k_per_m[*i] / v - 1.0).abs() < 1e-9,
                "k[{i}] = {}",
                w.k_per_m[*i]
            );
        }
    }

    #[test]
    fn inverse_transform_of_k0_is_one_over_r() {
        // (2/π) ∫₀^∞ K0(k r) dk = 1/r (Gradshteyn & Ryzhik 6.511.12). The default rule is
        // within 1e-3 of it for r from r_min to 47 r_min (the dd48 survey's range).
        let w = Wavenumbers::for_distances(1.0, 47.0);
        for r in [1.0, 2.0, 3.0, 5.0, 10.0, 20.0, 47.0] {
            let s: f64 = w
                .k_per_m
                .iter()
                .zip(&w.weights)
                .map(|(k, wi)| wi * k0(k * r))
                .sum();
            assert!((s * r - 1.0).abs() < 1e-3, "r = {r}: {}", s * r - 1.0);
        }
    }
}
