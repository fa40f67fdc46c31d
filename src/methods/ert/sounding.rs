//! The 1D layered-earth DC response (vertical electrical sounding) by a Hankel digital
//! linear filter.
//!
//! Potential of a unit current source on the surface of a stack of layers (resistivities
//! ρ_i, thicknesses h_i, the last layer a half-space), at horizontal distance r
//! (Koefoed 1979, eq. 2.13):
//!
//!   u(r) = (1/2π) ∫₀^∞ T(λ) J0(λ r) dλ,
//!
//! with the resistivity transform T from the Pekeris recursion (Koefoed 1979, eq. 3.4)
//! T_n = ρ_n, T_i = (T_{i+1} + ρ_i tanh(λh_i)) / (1 + T_{i+1} tanh(λh_i)/ρ_i).
//! Writing T = ρ1 (1 + K) and K(λ) = K(0) e^{−2λh1} + R(λ), the first two parts transform in
//! closed form (∫ e^{−λz} J0(λr) dλ = 1/√(r² + z²)), and the remainder R, which vanishes at
//! λ = 0 and λ → ∞, is transformed by the 61-point J0 filter of Kong (2007, Geophysical
//! Prospecting 55, 83–89; coefficients as distributed with Key's Dipole1D, Apache-2.0 by the
//! author's permission, via empymod): ∫₀^∞ f(λ) J0(λr) dλ ≈ (1/r) Σ_j f(b_j/r) c_j,
//! b_j = exp(−3.75 + 0.125 j).

/// Kong (2007) 61-point J0 filter coefficients (digits as published).
#[allow(clippy::excessive_precision)]
const KONG61_J0: [f64; 61] = [
    1.4463210615326699e+02,
    -1.1066222143752420e+03,
    3.7030010025325978e+03,
    -6.8968188464424520e+03,
    7.1663544112656937e+03,
    -2.4507884783377681e+03,
    -4.0166567754046082e+03,
    6.8623845298546094e+03,
    -5.0013321011775661e+03,
    2.1291291365196648e+03,
    -1.3845222435542289e+03,
    2.1661554291595580e+03,
    -2.2260393789657141e+03,
    8.0317156013986391e+02,
    1.0142221718890841e+03,
    -1.9350455051432630e+03,
    1.6601169447226580e+03,
    -7.5159684285420133e+02,
    -9.0315984178183285e+01,
    5.0705574889546148e+02,
    -5.1207646422722519e+02,
    2.9722959494490038e+02,
    -5.0248319908072993e+01,
    -1.2290725861955920e+02,
    1.9695244755899429e+02,
    -1.9175679966946601e+02,
    1.4211755630338590e+02,
    -7.7463216543224149e+01,
    1.7638009334931201e+01,
    2.8855056499202671e+01,
    -5.9225643887809561e+01,
    7.5987941373668960e+01,
    -8.1687962781233580e+01,
    8.0599209238447102e+01,
    -7.4895905328771619e+01,
    6.7516291538794434e+01,
    -5.9325033647358048e+01,
    5.1617042242841528e+01,
    -4.4664967446820263e+01,
    3.8366152052928278e+01,
    -3.3308787868993100e+01,
    2.8278671651033459e+01,
    -2.4505863388620480e+01,
    2.0469632532079750e+01,
    -1.7074034940700429e+01,
    1.4206119215530070e+01,
    -1.0904435643084650e+01,
    8.7518389425802283e+00,
    -6.7721665239085622e+00,
    4.5096884588095891e+00,
    -3.2704247166629590e+00,
    2.6827195063720430e+00,
    -1.8406031821386459e+00,
    9.1586697140412443e-01,
    -3.2436011485890798e-01,
    8.0675176189581893e-02,
    -1.2881307195759690e-02,
    7.0489137468452920e-04,
    2.3846917590855061e-04,
    -6.9102205995825531e-05,
    6.7792635718095777e-06,
];

/// A layered earth: resistivities (Ω·m) top-down, thicknesses (m) of all but the last layer.
#[derive(Debug, Clone, PartialEq)]
pub struct LayeredEarth {
    /// Layer resistivities, Ω·m, top to bottom.
    pub rho_ohm_m: Vec<f64>,
    /// Thicknesses of the layers above the half-space, m.
    pub thickness_m: Vec<f64>,
}

impl LayeredEarth {
    /// Resistivity transform T(λ), Ω·m (Pekeris recursion, module docs).
    pub fn transform(&self, lambda: f64) -> f64 {
        let n = self.rho_ohm_m.len();
        let mut t = self.rho_ohm_m[n - 1];
        for i in (0..n - 1).rev() {
            let th = (lambda * self.thickness_m[i]).tanh();
            let rho = self.rho_ohm_m[i];
            t = (t + rho * th) / (1.0 + t * th / rho);
        }
        t
    }

    /// Potential at distance  from a 1 A surface source, V (module docs).
    pub fn potential_v(&self, r_m: f64) -> f64 {
        let rho1 = self.rho_ohm_m[0];
        let pi2 = 2.0 * std::f64::consts::PI;
        if self.rho_ohm_m.len() == 1 {
            return rho1 / (pi2 * r_m);
        }
        let h1 = self.thickness_m[0];
        let kernel = |l: f64| self.transform(l) / rho1 - 1.0;
        let k_zero = self.rho_ohm_m[self.rho_ohm_m.len() - 1] / rho1 - 1.0;
        let rest = |l: f64| kernel(l) - k_zero * (-2.0 * l * h1).exp();
        let s: f64 = KONG61_J0
            .iter()
            .enumerate()
            .map(|(j, c)| {
                let b = (-3.75 + 0.125 * j as f64).exp();
                c * rest(b / r_m)
            })
            .sum::<f64>()
            / r_m;
        rho1 / pi2 * (1.0 / r_m + k_zero / (r_m * r_m + 4.0 * h1 * h1).sqrt() + s)
    }

    /// Transfer resistance R = U_M − U_N of a collinear surface array with electrodes at
    /// positions a, b, m, n (m) along the line, Ω (superposition of the two sources).
    pub fn resistance_ohm(&self, a: f64, b: f64, m: f64, n: f64) -> f64 {
        let u = |s: f64, p: f64| self.potential_v((s - p).abs());
        u(a, m) - u(a, n) - u(b, m) + u(b, n)
    }

    /// Apparent resistivity of that array, Ω·m: ρa = k R with the flat-ground k.
    pub fn rhoa_ohm_m(&self, a: f64, b: f64, m: f64, n: f64) -> f64 {
        crate::methods::ert::qc::geometric_factor_flat(a, b, m, n) * self.resistance_ohm(a, b, m, n)
    }
}

/// Potential of a unit surface source over two layers by the image series
/// (e.g. Telford, Geldart & Sheriff 1990, eq. 8.48):
/// u(r) = ρ1/(2π) [1/r + 2 Σ_{n≥1} κⁿ / √(r² + (2nh)²)], κ = (ρ2 − ρ1)/(ρ2 + ρ1).
pub fn two_layer_image_potential_v(rho1: f64, rho2: f64, h_m: f64, r_m: f64) -> f64 {
    let kappa = (rho2 - rho1) / (rho2 + rho1);
    let mut s = 1.0 / r_m;
    let mut kn = 1.0;
    for n in 1..100_000 {
        kn *= kappa;
        let term = 2.0 * kn / (r_m * r_m + (2.0 * n as f64 * h_m).powi(2)).sqrt();
        s += term;
        if term.abs() < 1e-16 * s.abs() {
            break;
        }
    }
    rho1 / (2.0 * std::f64::consts::PI) * s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_space_is_exact() {
        let e = LayeredEarth {
            rho_ohm_m: vec![100.0],
            thickness_m: vec![],
        };
        assert!((e.rhoa_ohm_m(0.0, 3.0, 1.0, 2.0) - 100.0).abs() < 1e-12);
    }

    #[test]
    fn filter_matches_the_image_series() {
        // Two layers 100 over 10 Ω·m at 5 m (the acceptance model): the filter potential
        // equals the closed-form image series within 1e-5 relative for r = 0.5…200 m.
        let e = LayeredEarth {
            rho_ohm_m: vec![100.0, 10.0],
            thickness_m: vec![5.0],
        };
        for r in [0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0] {
            let f = e.potential_v(r);
            let x = two_layer_image_potential_v(100.0, 10.0, 5.0, r);
            assert!((f / x - 1.0).abs() < 1e-5, "r = {r}: {f} vs {x}");
        }
        // And a resistive basement (κ = 0.82), within 1e-4. A 100:1 resistive basement is beyond this short
        // filter (its kernel varies on a λ scale below the filter's lowest abscissa).
        let e = LayeredEarth {
            rho_ohm_m: vec![10.0, 100.0],
            thickness_m: vec![2.0],
        };
        for r in [0.5, 3.0, 30.0] {
            let f = e.potential_v(r);
            let x = two_layer_image_potential_v(10.0, 100.0, 2.0, r);
            assert!((f / x - 1.0).abs() < 1e-4, "r = {r}: {f} vs {x}");
        }
    }

    #[test]
    fn schlumberger_limits() {
        // Short spacings see the top layer, long ones the basement (within 1 %).
        let e = LayeredEarth {
            rho_ohm_m: vec![100.0, 10.0],
            thickness_m: vec![5.0],
        };
        let s = |ab2: f64| e.rhoa_ohm_m(-ab2, ab2, -0.1, 0.1);
        assert!((s(0.5) / 100.0 - 1.0).abs() < 0.01, "{}", s(0.5));
        assert!((s(1000.0) / 10.0 - 1.0).abs() < 0.01, "{}", s(1000.0));
    }
}
