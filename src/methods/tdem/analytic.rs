//! Closed-form TDEM responses of a homogeneous half-space and the late-time apparent
//! resistivity. These are the references the digital-filter forward model is tested
//! against, and the ρa transforms users compare with their instrument's column.
//!
//! All responses are for an ideal step-off of the transmitter current at t = 0, the
//! transmitter and receiver on the surface of a half-space of conductivity σ = 1/ρ, and
//! use θ = √(μ0 σ / (4t)) (Ward & Hohmann 1988, "Electromagnetic theory for geophysical
//! applications", in Nabighian (ed.), *Electromagnetic Methods in Applied Geophysics*
//! vol. 1, SEG, ch. 4).

use super::forward::MU0;
use super::special::erf;
use std::f64::consts::PI;

/// θ = √(μ0 σ / (4t)) (Ward & Hohmann 1988, after eq. 4.69).
fn theta(rho_ohm_m: f64, time_s: f64) -> f64 {
    (MU0 / (rho_ohm_m * 4.0 * time_s)).sqrt()
}

/// f(x) = 3e^{−x²}/(√π x) + (1 − 3/(2x²)) erf(x), the bracket of Ward & Hohmann eq. 4.98;
/// for x < 0.3 its series (8/√π) Σ_{m≥1} (−1)^{m+1} m x^{2m+1} / (m!(2m+1)(2m+3)), derived
/// from the erf and exp series, avoids the cancellation of the closed form at late times.
fn central_loop_b_bracket(x: f64) -> f64 {
    if x < 0.3 {
        let mut sum = 0.0;
        let mut fact = 1.0;
        for m in 1..30 {
            let mf = m as f64;
            fact *= mf;
            let sign = if m % 2 == 1 { 1.0 } else { -1.0 };
            sum += sign * mf * x.powi(2 * m + 1) / (fact * (2.0 * mf + 1.0) * (2.0 * mf + 3.0));
        }
        8.0 / PI.sqrt() * sum
    } else {
        3.0 * (-x * x).exp() / (PI.sqrt() * x) + (1.0 - 1.5 / (x * x)) * erf(x)
    }
}

/// g(x) = 3 erf(x) − (2/√π) x (3 + 2x²) e^{−x²}, the bracket of Ward & Hohmann eq. 4.99;
/// for x < 0.3 its series (2/√π) Σ_{n≥2} (−1)ⁿ 4n(n−1) x^{2n+1} / (n!(2n+1)).
fn central_loop_dbdt_bracket(x: f64) -> f64 {
    if x < 0.3 {
        let mut sum = 0.0;
        let mut fact = 1.0;
        for n in 1..30 {
            let nf = n as f64;
            fact *= nf;
            if n < 2 {
                continue;
            }
            let sign = if n % 2 == 0 { 1.0 } else { -1.0 };
            sum += sign * 4.0 * nf * (nf - 1.0) * x.powi(2 * n + 1) / (fact * (2.0 * nf + 1.0));
        }
        2.0 / PI.sqrt() * sum
    } else {
        3.0 * erf(x) - 2.0 / PI.sqrt() * x * (3.0 + 2.0 * x * x) * (-x * x).exp()
    }
}

/// Bz(t) [T per A] at the centre of a circular loop of radius a on a half-space after a
/// step-off: Bz = μ0 (I/(2a)) [3e^{−θ²a²}/(√π θa) + (1 − 3/(2θ²a²)) erf(θa)]
/// (Ward & Hohmann 1988, eq. 4.98, times μ0).
pub fn central_loop_bz(rho_ohm_m: f64, radius_m: f64, time_s: f64) -> f64 {
    let x = theta(rho_ohm_m, time_s) * radius_m;
    MU0 / (2.0 * radius_m) * central_loop_b_bracket(x)
}

/// −∂Bz/∂t [T/s per A] at the centre of a circular loop of radius a on a half-space after a
/// step-off: ∂hz/∂t = −(I/(μ0 σ a³)) [3 erf(θa) − (2/√π) θa (3 + 2θ²a²) e^{−θ²a²}]
/// (Ward & Hohmann 1988, eq. 4.99), so −∂Bz/∂t = (ρ/a³) [ … ].
pub fn central_loop_neg_dbzdt(rho_ohm_m: f64, radius_m: f64, time_s: f64) -> f64 {
    let x = theta(rho_ohm_m, time_s) * radius_m;
    rho_ohm_m / radius_m.powi(3) * central_loop_dbdt_bracket(x)
}

/// F(x) = (9/(2x²) − 1) erf(x) − (1/√π)(9/x + 4x) e^{−x²}, the bracket of Ward & Hohmann
/// eq. 4.69a (the VMD step-off response on the surface, x = θr).
///
/// For x < 0.5 its series (1/√π) Σ_{m≥1} (−1)^{m+1} 16m² x^{2m+1} / (m!(2m+1)(2m+3))
/// (from the erf and exp series) avoids the cancellation of the closed form.
fn vmd_bracket(x: f64) -> f64 {
    if x < 0.5 {
        return vmd_series(x, false);
    }
    (4.5 / (x * x) - 1.0) * erf(x) - (9.0 / x + 4.0 * x) * (-x * x).exp() / PI.sqrt()
}

/// The series of [`vmd_bracket`] (or, with `x3_derivative`, of x³F′(x) =
/// (1/√π) Σ_{m≥1} (−1)^{m+1} 16m² x^{2m+3} / (m!(2m+3))).
fn vmd_series(x: f64, x3_derivative: bool) -> f64 {
    let mut sum = 0.0;
    let mut fact = 1.0;
    for m in 1..40 {
        let mf = m as f64;
        fact *= mf;
        let sign = if m % 2 == 1 { 1.0 } else { -1.0 };
        sum += if x3_derivative {
            sign * 16.0 * mf * mf * x.powi(2 * m + 3) / (fact * (2.0 * mf + 3.0))
        } else {
            sign * 16.0 * mf * mf * x.powi(2 * m + 1) / (fact * (2.0 * mf + 1.0) * (2.0 * mf + 3.0))
        };
    }
    sum / PI.sqrt()
}

/// x³ F'(x) = −9 erf(x) + (e^{−x²}/√π)(18x + 12x³ + 8x⁵), from differentiating
/// [`vmd_bracket`] (used for ∂hz/∂t with dx/dt = −x/(2t)).
fn vmd_bracket_x3_derivative(x: f64) -> f64 {
    if x < 0.5 {
        return vmd_series(x, true);
    }
    let x2 = x * x;
    -9.0 * erf(x) + (-x2).exp() / PI.sqrt() * (18.0 * x + 12.0 * x * x2 + 8.0 * x * x2 * x2)
}

/// Hz(t) [A/m per A·m² of moment] of a vertical magnetic dipole on a half-space at
/// horizontal offset r after a step-off: hz = (m/(4πr³)) [(9/(2θ²r²) − 1) erf(θr) −
/// (1/√π)(9/(θr) + 4θr) e^{−θ²r²}] (Ward & Hohmann 1988, eq. 4.69a). The value at t → 0⁺
/// is the primary field −m/(4πr³).
pub fn vmd_hz(rho_ohm_m: f64, offset_m: f64, time_s: f64) -> f64 {
    let x = theta(rho_ohm_m, time_s) * offset_m;
    vmd_bracket(x) / (4.0 * PI * offset_m.powi(3))
}

/// ∂Hz/∂t [A/(m·s) per A·m²] of the VMD of [`vmd_hz`]: with x = θr and dx/dt = −x/(2t),
/// ∂hz/∂t = −(m/(2π μ0 σ r⁵)) x³ F'(x) (the time derivative of Ward & Hohmann eq. 4.69a,
/// their eq. 4.70).
pub fn vmd_dhzdt(rho_ohm_m: f64, offset_m: f64, time_s: f64) -> f64 {
    let x = theta(rho_ohm_m, time_s) * offset_m;
    -rho_ohm_m / (2.0 * PI * MU0 * offset_m.powi(5)) * vmd_bracket_x3_derivative(x)
}

/// Late-time apparent resistivity from the induced voltage of a central or coincident loop
/// [Ω·m]: ρa = (μ0/(4πt)) · (2 μ0 A_Tx A_Rx / (5 t (V/I)))^{2/3} (Spies & Frischknecht
/// 1991, SEG EM vol. 2 ch. 5; identical to pyGIMLi `rhoafromU`). `a_tx_m2` and `a_rx_m2` are
/// the effective areas (area × turns). `None` when V/I ≤ 0, where the formula is undefined.
pub fn late_time_rhoa_from_voltage(
    time_s: f64,
    v_per_a: f64,
    a_tx_m2: f64,
    a_rx_m2: f64,
) -> Option<f64> {
    if !(v_per_a > 0.0 && time_s > 0.0) {
        return None;
    }
    Some(
        MU0 / (4.0 * PI * time_s)
            * (2.0 * MU0 * a_tx_m2 * a_rx_m2 / (5.0 * time_s * v_per_a)).powf(2.0 / 3.0),
    )
}

/// Late-time apparent resistivity from −∂Bz/∂t per ampere at the loop centre [Ω·m]:
/// the voltage formula of [`late_time_rhoa_from_voltage`] with V/I = A_Rx·(−∂Bz/∂t)/I.
pub fn late_time_rhoa_from_dbdt(time_s: f64, neg_dbdt_per_a: f64, a_tx_m2: f64) -> Option<f64> {
    late_time_rhoa_from_voltage(time_s, neg_dbdt_per_a, a_tx_m2, 1.0)
}

/// Late-time apparent resistivity from the step-off Bz per ampere at the loop centre
/// [Ω·m]: ρa = (μ0/(πt)) (μ0 A_Tx I / (30 B))^{2/3} (the late-time limit of Ward & Hohmann
/// eq. 4.98 solved for ρ; identical to pyGIMLi `rhoafromB`).
pub fn late_time_rhoa_from_b(time_s: f64, b_per_a: f64, a_tx_m2: f64) -> Option<f64> {
    if !(b_per_a > 0.0 && time_s > 0.0) {
        return None;
    }
    Some(MU0 / (PI * time_s) * (MU0 * a_tx_m2 / (30.0 * b_per_a)).powf(2.0 / 3.0))
}

/// The diffusion depth d = √(2 t ρ / μ0) [m] of a step response at time t (Spies 1989,
/// Geophysics 54(7), 872–888): the depth scale a TDEM gate at t senses.
pub fn diffusion_depth_m(time_s: f64, rho_ohm_m: f64) -> f64 {
    (2.0 * time_s * rho_ohm_m / MU0).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_forms_reach_their_limits() {
        // t → 0⁺: the central-loop field is the primary I/(2a)·μ0 (Ward & Hohmann 4.98);
        // the VMD field is the primary −m/(4πr³). Tolerance 1e-6 relative.
        let b0 = central_loop_bz(100.0, 20.0, 1e-15);
        assert!((b0 / (MU0 / 40.0) - 1.0).abs() < 1e-6, "{b0}");
        let h0 = vmd_hz(100.0, 100.0, 1e-15);
        assert!((h0 * 4.0 * PI * 1e6 + 1.0).abs() < 1e-6, "{h0}");
        // Late time: Bz → μ0 I a² (μ0σ)^{3/2} / (30 √π t^{3/2}); 1e-4 at θa = 0.011.
        let (rho, a, t) = (100.0_f64, 20.0_f64, 1e-2_f64);
        let late = MU0 * a * a * (MU0 / rho).powf(1.5) / (30.0 * PI.sqrt() * t.powf(1.5));
        assert!((central_loop_bz(rho, a, t) / late - 1.0).abs() < 1e-4);
    }

    #[test]
    fn series_and_closed_form_brackets_agree_at_the_switch() {
        // The two evaluations of each bracket must meet at x = 0.3 (1e-12 relative).
        let x: f64 = 0.3;
        let closed_b = 3.0 * (-x * x).exp() / (PI.sqrt() * x) + (1.0 - 1.5 / (x * x)) * erf(x);
        assert!((central_loop_b_bracket(x - 1e-13) / closed_b - 1.0).abs() < 1e-10);
        let closed_d = 3.0 * erf(x) - 2.0 / PI.sqrt() * x * (3.0 + 2.0 * x * x) * (-x * x).exp();
        assert!((central_loop_dbdt_bracket(x - 1e-13) / closed_d - 1.0).abs() < 1e-9);
    }

    #[test]
    fn dbdt_is_the_time_derivative_of_b() {
        // Central difference of eq. 4.98 vs eq. 4.99 (and of 4.69a vs its derivative) at
        // 1e-4 relative step: agreement to 1e-6 relative.
        for &t in &[1e-5, 1e-4, 1e-3, 1e-2] {
            let h = t * 1e-4;
            let fd = -(central_loop_bz(100.0, 20.0, t + h) - central_loop_bz(100.0, 20.0, t - h))
                / (2.0 * h);
            let an = central_loop_neg_dbzdt(100.0, 20.0, t);
            assert!((fd / an - 1.0).abs() < 1e-6, "t={t}: {fd} vs {an}");
            let fd = (vmd_hz(100.0, 100.0, t + h) - vmd_hz(100.0, 100.0, t - h)) / (2.0 * h);
            let an = vmd_dhzdt(100.0, 100.0, t);
            assert!((fd / an - 1.0).abs() < 1e-6, "t={t}: {fd} vs {an}");
        }
    }

    #[test]
    fn late_time_rhoa_inverts_the_late_time_asymptote() {
        // A half-space's late-time dB/dt fed to the ρa formula returns ρ (to 1e-3 at
        // θa = 0.011, where the asymptote holds to ~1e-4).
        let (rho, a, t) = (100.0, 20.0, 1e-2);
        let area = PI * a * a;
        let r = late_time_rhoa_from_dbdt(t, central_loop_neg_dbzdt(rho, a, t), area).unwrap();
        assert!((r / rho - 1.0).abs() < 1e-3, "{r}");
        let r = late_time_rhoa_from_b(t, central_loop_bz(rho, a, t), area).unwrap();
        assert!((r / rho - 1.0).abs() < 1e-3, "{r}");
        assert_eq!(late_time_rhoa_from_voltage(t, -1.0, area, area), None);
    }
}
