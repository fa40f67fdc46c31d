//! The 1D magnetotelluric forward model: Wait's (1954) impedance recursion for a stack of
//! homogeneous layers over a half-space, and its analytic Jacobian.
//!
//! Convention e^{+iωt}, SI impedance (ohms). For layer j with resistivity ρ_j and thickness
//! h_j: k_j = √(iωμ0/ρ_j), intrinsic impedance ζ_j = iωμ0/k_j = √(iωμ0ρ_j). From the
//! half-space up (Ward & Hohmann 1988, eq. 4.47 ff.; Wait 1954):
//!
//! * Z_N = ζ_N,
//! * Z_j = ζ_j·(Z_{j+1} + ζ_j·t_j)/(ζ_j + Z_{j+1}·t_j), t_j = tanh(k_j·h_j),
//! * ρa = |Z_1|²/(ωμ0), φ = arg Z_1 (45° for a half-space).
//!
//! With √i = e^{iπ/4}: ζ_j = √(ωμ0ρ_j)·√i and k_j·h_j = √(ωμ0/ρ_j)·h_j·√i, so only real
//! square roots are taken; tanh is evaluated as (1 − e^{−2x})/(1 + e^{−2x}) (Re x > 0), which
//! cannot overflow.
//!
//! Jacobian (derived here by the chain rule through the recursion): with N = Z_{j+1} + ζ t,
//! D = ζ + Z_{j+1} t,
//!
//! * ∂Z_j/∂Z_{j+1} = ζ²(1 − t²)/D²,
//! * ∂Z_j/∂ζ = N/D + ζt/D − ζN/D², ∂Z_j/∂t = ζ(ζ² − Z_{j+1}²)/D²,
//! * ∂ζ/∂ln ρ = ζ/2, ∂t/∂ln ρ = −(1 − t²)·k·h/2,
//! * ∂Z_1/∂ln ρ_j = (Π_{i<j} ∂Z_i/∂Z_{i+1})·∂Z_j/∂ln ρ_j, and ∂Z_N/∂ln ρ_N = ζ_N/2;
//! * ∂log10 ρa/∂log10 ρ_j = 2·Re(∂Z_1/∂ln ρ_j / Z_1),
//!   ∂φ/∂log10 ρ_j = ln 10·Im(∂Z_1/∂ln ρ_j / Z_1) rad.
//!
//! Cost: O(layers) per period for the response and the whole Jacobian row.

use ndarray::Array2;
use num_complex::Complex64;
use serde::{Deserialize, Serialize};

use super::tf::MU0;

/// A layered earth: `resistivity_ohm_m[i]` for layer i (top first, the last is the
/// half-space) and `thickness_m[i]` for the first n − 1 layers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayeredEarth {
    /// Resistivities top-down, Ω·m; the last is the half-space.
    pub resistivity_ohm_m: Vec<f64>,
    /// Thicknesses top-down, m (one fewer than resistivities).
    pub thickness_m: Vec<f64>,
}

impl LayeredEarth {
    /// Depth to the top of each layer, m.
    pub fn depth_top_m(&self) -> Vec<f64> {
        let mut d = Vec::with_capacity(self.resistivity_ohm_m.len());
        let mut z = 0.0;
        d.push(z);
        for h in &self.thickness_m {
            z += h;
            d.push(z);
        }
        d.truncate(self.resistivity_ohm_m.len());
        d
    }
}

/// Apparent resistivity and phase at each period.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForwardResponse {
    /// Periods, s.
    pub period_s: Vec<f64>,
    /// ρa, Ω·m.
    pub rhoa_ohm_m: Vec<f64>,
    /// φ, degrees (first quadrant).
    pub phase_deg: Vec<f64>,
}

/// √i = e^{iπ/4} = (1 + i)/√2: ζ = √(ωμ0ρ)·√i and k·h = √(ωμ0/ρ)·h·√i, so only real square
/// roots are needed.
const SQRT_I: Complex64 = Complex64::new(
    std::f64::consts::FRAC_1_SQRT_2,
    std::f64::consts::FRAC_1_SQRT_2,
);

/// tanh(a·√i) for real a ≥ 0 as (1 − e)/(1 + e) with e = e^{−2a√i} =
/// e^{−√2·a}·(cos √2a − i·sin √2a); for √2·a > 40 (|e| < 5·10⁻¹⁸) it is 1 to the last bit.
fn tanh_sqrt_i(a: f64) -> Complex64 {
    let b = std::f64::consts::SQRT_2 * a;
    if b > 40.0 {
        return Complex64::new(1.0, 0.0);
    }
    let m = (-b).exp();
    let (sn, cs) = b.sin_cos();
    let e = Complex64::new(m * cs, -m * sn);
    (1.0 - e) / (1.0 + e)
}

/// √(ωμ0) for a period.
pub(crate) fn sqrt_omega_mu0(period_s: f64) -> f64 {
    (2.0 * std::f64::consts::PI / period_s * MU0).sqrt()
}

/// The recursion with √ρ precomputed (module docs).
pub(crate) fn impedance_core(sqrt_w: f64, sqrt_rho: &[f64], thick: &[f64]) -> Complex64 {
    let n = sqrt_rho.len();
    let mut z = SQRT_I * (sqrt_w * sqrt_rho[n - 1]);
    for j in (0..n - 1).rev() {
        let zeta = SQRT_I * (sqrt_w * sqrt_rho[j]);
        let t = tanh_sqrt_i(sqrt_w / sqrt_rho[j] * thick[j]);
        z = zeta * (z + zeta * t) / (zeta + z * t);
    }
    z
}

/// Z_1 and ∂Z_1/∂ln ρ_j with √ρ precomputed (module docs); `d_up` is scratch space.
pub(crate) fn impedance_and_derivatives_core(
    sqrt_w: f64,
    sqrt_rho: &[f64],
    thick: &[f64],
    dz: &mut [Complex64],
    d_up: &mut [Complex64],
) -> Complex64 {
    let n = sqrt_rho.len();
    // Upward sweep, keeping each layer's local partials.
    let mut z_below = SQRT_I * (sqrt_w * sqrt_rho[n - 1]);
    dz[n - 1] = 0.5 * z_below; // local ∂Z_N/∂ln ρ_N
    for j in (0..n - 1).rev() {
        let zeta = SQRT_I * (sqrt_w * sqrt_rho[j]);
        let a = sqrt_w / sqrt_rho[j] * thick[j];
        let kh = SQRT_I * a;
        let t = tanh_sqrt_i(a);
        let num = z_below + zeta * t;
        let den = zeta + z_below * t;
        let inv_den = 1.0 / den;
        let zj = zeta * num * inv_den;
        let one_t2 = 1.0 - t * t;
        d_up[j] = zeta * zeta * one_t2 * inv_den * inv_den;
        let dz_dzeta = (num + zeta * t) * inv_den - zeta * num * inv_den * inv_den;
        let dz_dt = zeta * (zeta * zeta - z_below * z_below) * inv_den * inv_den;
        dz[j] = 0.5 * zeta * dz_dzeta - 0.5 * one_t2 * kh * dz_dt;
        z_below = zj;
    }
    // Downward product of ∂Z_i/∂Z_{i+1}.
    let mut p = Complex64::new(1.0, 0.0);
    for j in 0..n {
        dz[j] *= p;
        if j + 1 < n {
            p *= d_up[j];
        }
    }
    z_below
}

/// The surface impedance Z_1 in ohms (module docs). `rho` top-down, `thick` one shorter.
pub fn impedance_ohm(period_s: f64, rho: &[f64], thick: &[f64]) -> Complex64 {
    let sqrt_rho: Vec<f64> = rho.iter().map(|r| r.sqrt()).collect();
    impedance_core(sqrt_omega_mu0(period_s), &sqrt_rho, thick)
}

/// Z_1 and ∂Z_1/∂ln ρ_j for every layer (module docs); `dz` must have `rho.len()` entries.
pub fn impedance_and_derivatives(
    period_s: f64,
    rho: &[f64],
    thick: &[f64],
    dz: &mut [Complex64],
) -> Complex64 {
    let sqrt_rho: Vec<f64> = rho.iter().map(|r| r.sqrt()).collect();
    let mut d_up = vec![Complex64::new(0.0, 0.0); rho.len()];
    impedance_and_derivatives_core(sqrt_omega_mu0(period_s), &sqrt_rho, thick, dz, &mut d_up)
}

/// ρa and φ of a layered earth at each period.
pub fn mt1d_forward(period_s: &[f64], earth: &LayeredEarth) -> ForwardResponse {
    let mut rhoa = Vec::with_capacity(period_s.len());
    let mut phase = Vec::with_capacity(period_s.len());
    let sqrt_rho: Vec<f64> = earth.resistivity_ohm_m.iter().map(|r| r.sqrt()).collect();
    for &t in period_s {
        let z = impedance_core(sqrt_omega_mu0(t), &sqrt_rho, &earth.thickness_m);
        let omega = 2.0 * std::f64::consts::PI / t;
        rhoa.push(z.norm_sqr() / (omega * MU0));
        phase.push(z.im.atan2(z.re).to_degrees());
    }
    ForwardResponse {
        period_s: period_s.to_vec(),
        rhoa_ohm_m: rhoa,
        phase_deg: phase,
    }
}

/// The response and the Jacobians ∂log10 ρa/∂log10 ρ_j and ∂φ(°)/∂log10 ρ_j
/// (periods × layers).
pub fn mt1d_forward_with_jacobian(
    period_s: &[f64],
    earth: &LayeredEarth,
) -> (ForwardResponse, Array2<f64>, Array2<f64>) {
    let n = earth.resistivity_ohm_m.len();
    let m = period_s.len();
    let mut j_rho = Array2::zeros((m, n));
    let mut j_phase = Array2::zeros((m, n));
    let mut rhoa = Vec::with_capacity(m);
    let mut phase = Vec::with_capacity(m);
    let mut dz = vec![Complex64::new(0.0, 0.0); n];
    let mut d_up = vec![Complex64::new(0.0, 0.0); n];
    let sqrt_rho: Vec<f64> = earth.resistivity_ohm_m.iter().map(|r| r.sqrt()).collect();
    for (i, &t) in period_s.iter().enumerate() {
        let z = impedance_and_derivatives_core(
            sqrt_omega_mu0(t),
            &sqrt_rho,
            &earth.thickness_m,
            &mut dz,
            &mut d_up,
        );
        let omega = 2.0 * std::f64::consts::PI / t;
        rhoa.push(z.norm_sqr() / (omega * MU0));
        phase.push(z.im.atan2(z.re).to_degrees());
        for j in 0..n {
            let r = dz[j] / z;
            j_rho[[i, j]] = 2.0 * r.re;
            j_phase[[i, j]] = std::f64::consts::LN_10 * r.im.to_degrees();
        }
    }
    (
        ForwardResponse {
            period_s: period_s.to_vec(),
            rhoa_ohm_m: rhoa,
            phase_deg: phase,
        },
        j_rho,
        j_phase,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// geophysics.md §5.4.1: half-space ρa = ρ to 1e-10 and φ = 45° to 1e-8°, 1e-4–1e4 Hz.
    #[test]
    fn half_space_is_exact() {
        let periods: Vec<f64> = (0..=80)
            .map(|i| 10f64.powf(-4.0 + 0.1 * i as f64))
            .collect();
        for rho in [0.3, 100.0, 1.0e4] {
            let r = mt1d_forward(
                &periods,
                &LayeredEarth {
                    resistivity_ohm_m: vec![rho],
                    thickness_m: vec![],
                },
            );
            for (a, p) in r.rhoa_ohm_m.iter().zip(&r.phase_deg) {
                assert!(((a - rho) / rho).abs() < 1e-10, "{a} vs {rho}");
                assert!((p - 45.0).abs() < 1e-8, "{p}");
            }
            // A stack of identical layers is the same half-space.
            let r2 = mt1d_forward(
                &periods,
                &LayeredEarth {
                    resistivity_ohm_m: vec![rho; 4],
                    thickness_m: vec![10.0, 1000.0, 1.0e5],
                },
            );
            for a in &r2.rhoa_ohm_m {
                assert!(((a - rho) / rho).abs() < 1e-10);
            }
        }
    }

    /// The oracle curve `ref_mt1d_3layer.txt` (100/10/1000 Ω·m, 500 and 1000 m; numpy Wait
    /// recursion, agreeing with pyGIMLi to 1e-15 and SimPEG to 1e-10): ρa to 1e-8 relative,
    /// φ to 1e-6° (geophysics.md §5.4.2).
    #[test]
    fn three_layer_matches_the_oracle_curve() {
        let Some(path) = crate::field_data::oracle("curves/ref_mt1d_3layer.txt") else {
            return;
        };
        let text = std::fs::read_to_string(path).unwrap();
        let rows: Vec<Vec<f64>> = text
            .lines()
            .filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())
            .map(|l| l.split_whitespace().map(|x| x.parse().unwrap()).collect())
            .collect();
        assert_eq!(rows.len(), 25);
        let periods: Vec<f64> = rows.iter().map(|r| 1.0 / r[0]).collect();
        let earth = LayeredEarth {
            resistivity_ohm_m: vec![100.0, 10.0, 1000.0],
            thickness_m: vec![500.0, 1000.0],
        };
        let r = mt1d_forward(&periods, &earth);
        let mut worst_rho: f64 = 0.0;
        let mut worst_phase: f64 = 0.0;
        for (i, row) in rows.iter().enumerate() {
            worst_rho = worst_rho.max(((r.rhoa_ohm_m[i] - row[1]) / row[1]).abs());
            worst_phase = worst_phase.max((r.phase_deg[i] - row[2]).abs());
        }
        eprintln!("3-layer oracle: worst ρa relative {worst_rho:e}, worst phase {worst_phase:e}°");
        assert!(
            worst_rho < 1e-8,
            "worst ρa relative difference {worst_rho:e}"
        );
        assert!(
            worst_phase < 1e-6,
            "worst phase difference {worst_phase:e}°"
        );
    }

    /// geophysics.md §5.4.2: the analytic Jacobian against central finite differences of the
    /// forward model (step 1e-4 in log10 ρ), agreement ≤ 1e-5 (absolute, in log10 ρa per
    /// log10 ρ and degrees per log10 ρ).
    #[test]
    fn analytic_jacobian_matches_finite_differences() {
        let periods: Vec<f64> = (0..30)
            .map(|i| 10f64.powf(-3.0 + 6.0 * i as f64 / 29.0))
            .collect();
        let rho: Vec<f64> = (0..12)
            .map(|i| 10f64.powf(1.0 + (i as f64 * 0.9).sin()))
            .collect();
        let thick: Vec<f64> = (0..11).map(|i| 20.0 * 1.6f64.powi(i)).collect();
        let earth = LayeredEarth {
            resistivity_ohm_m: rho.clone(),
            thickness_m: thick.clone(),
        };
        let (_, jr, jp) = mt1d_forward_with_jacobian(&periods, &earth);
        let h = 1e-4;
        let mut worst: f64 = 0.0;
        for j in 0..rho.len() {
            let mut up = rho.clone();
            let mut dn = rho.clone();
            up[j] *= 10f64.powf(h);
            dn[j] *= 10f64.powf(-h);
            let fu = mt1d_forward(
                &periods,
                &LayeredEarth {
                    resistivity_ohm_m: up,
                    thickness_m: thick.clone(),
                },
            );
            let fd = mt1d_forward(
                &periods,
                &LayeredEarth {
                    resistivity_ohm_m: dn,
                    thickness_m: thick.clone(),
                },
            );
            for i in 0..periods.len() {
                let dr = (fu.rhoa_ohm_m[i].log10() - fd.rhoa_ohm_m[i].log10()) / (2.0 * h);
                let dp = (fu.phase_deg[i] - fd.phase_deg[i]) / (2.0 * h);
                worst = worst
                    .max((dr - jr[[i, j]]).abs())
                    .max((dp - jp[[i, j]]).abs());
            }
        }
        eprintln!("Jacobian vs finite differences: worst {worst:e}");
        assert!(
            worst < 1e-5,
            "worst |analytic − finite difference| {worst:e}"
        );
    }

    #[test]
    fn depth_tops() {
        let e = LayeredEarth {
            resistivity_ohm_m: vec![1.0, 2.0, 3.0],
            thickness_m: vec![10.0, 5.0],
        };
        assert_eq!(e.depth_top_m(), vec![0.0, 10.0, 15.0]);
    }
}
