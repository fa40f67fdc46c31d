//! Resistivity ↔ saturation relations: Archie (1942) and Waxman & Smits (1968).
//!
//! Symbols: φ porosity (fraction), S water saturation (fraction), θ = φ·S volumetric water
//! content (m³/m³), ρ bulk resistivity, ρw pore-water resistivity (Ω·m), a tortuosity factor,
//! m cementation exponent, n saturation exponent, σ = 1/ρ.

use serde::{Deserialize, Serialize};

use super::PetroError;

/// Archie's empirical constants.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Archie {
    /// Tortuosity factor a (usually 1).
    pub a: f64,
    /// Cementation exponent m (1.3 unconsolidated … 2.5 cemented).
    pub m: f64,
    /// Saturation exponent n (about 2).
    pub n: f64,
}

impl Archie {
    /// Check a > 0, m > 0, n > 0.
    pub fn validate(&self) -> Result<(), PetroError> {
        positive("tortuosity a", self.a)?;
        positive("cementation exponent m", self.m)?;
        positive("saturation exponent n", self.n)
    }
}

/// Formation factor F = a·φ^(−m) (Archie 1942, eq. 1 with Winsauer's a).
pub fn formation_factor(porosity: f64, a: f64, m: f64) -> f64 {
    a * porosity.powf(-m)
}

/// Archie's law, bulk resistivity: ρ = a·ρw·φ^(−m)·S^(−n) (Archie 1942).
pub fn archie_resistivity_ohm_m(
    porosity: f64,
    saturation: f64,
    fluid_resistivity_ohm_m: f64,
    p: &Archie,
) -> f64 {
    p.a * fluid_resistivity_ohm_m * porosity.powf(-p.m) * saturation.powf(-p.n)
}

/// Archie's law solved for saturation: S = (a·ρw / (φ^m·ρ))^(1/n).
pub fn archie_saturation(
    resistivity_ohm_m: f64,
    porosity: f64,
    fluid_resistivity_ohm_m: f64,
    p: &Archie,
) -> f64 {
    (p.a * fluid_resistivity_ohm_m / (porosity.powf(p.m) * resistivity_ohm_m)).powf(1.0 / p.n)
}

/// Water content from Archie: θ = φ·S with S from [`archie_saturation`].
pub fn archie_water_content(
    resistivity_ohm_m: f64,
    porosity: f64,
    fluid_resistivity_ohm_m: f64,
    p: &Archie,
) -> f64 {
    porosity * archie_saturation(resistivity_ohm_m, porosity, fluid_resistivity_ohm_m, p)
}

/// Waxman–Smits constants: Archie's a, m*, n* and the surface-conduction term B·Qv.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WaxmanSmits {
    /// a, m*, n*.
    pub archie: Archie,
    /// B·Qv in S/m: equivalent counter-ion conductance B (S m⁻¹ per meq/cm³) times the
    /// cation exchange capacity per pore volume Qv (meq/cm³). Zero reduces to Archie.
    pub surface_conductivity_s_per_m: f64,
}

/// Waxman & Smits (1968), eq. 5 with F* = a·φ^(−m*):
/// σ = (1/F*)·(σw·S^n* + B·Qv·S^(n*−1)).
pub fn waxman_smits_conductivity_s_per_m(
    porosity: f64,
    saturation: f64,
    fluid_resistivity_ohm_m: f64,
    p: &WaxmanSmits,
) -> f64 {
    let f = formation_factor(porosity, p.archie.a, p.archie.m);
    let n = p.archie.n;
    (saturation.powf(n) / fluid_resistivity_ohm_m
        + p.surface_conductivity_s_per_m * saturation.powf(n - 1.0))
        / f
}

/// A saturation solved from a resistivity, with how it was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SaturationSolve {
    /// S (may exceed 1 when the rock conducts more than brine-saturated rock would).
    pub saturation: f64,
    /// Newton iterations (0 for the closed form).
    pub iterations: usize,
    /// True when B·Qv = 0 and Archie's closed form was used.
    pub closed_form: bool,
}

/// Waxman–Smits solved for S given the bulk resistivity: the root of
/// g(S) = σw·S^n + B·Qv·S^(n−1) − F*·σ = 0 (Waxman & Smits 1968, eq. 5 rearranged).
///
/// With B·Qv = 0 this is Archie's closed form. Otherwise g is strictly increasing for
/// S > 0 when n > 1, g(0⁺) < 0 and g(S_Archie) = B·Qv·S_Archie^(n−1) ≥ 0, so the root is
/// unique and lies in (0, S_Archie]; it is found by Newton's method safeguarded by bisection
/// on that bracket, to a relative step of 1e-15.
pub fn waxman_smits_saturation(
    resistivity_ohm_m: f64,
    porosity: f64,
    fluid_resistivity_ohm_m: f64,
    p: &WaxmanSmits,
) -> Result<SaturationSolve, PetroError> {
    p.archie.validate()?;
    positive("bulk resistivity", resistivity_ohm_m)?;
    positive("fluid resistivity", fluid_resistivity_ohm_m)?;
    fraction("porosity", porosity)?;
    if !p.surface_conductivity_s_per_m.is_finite() || p.surface_conductivity_s_per_m < 0.0 {
        return Err(PetroError::InvalidParameter {
            name: "surface conductivity B·Qv (S/m)".into(),
            expected: "a finite number ≥ 0".into(),
            value: p.surface_conductivity_s_per_m,
        });
    }
    let s_archie = archie_saturation(
        resistivity_ohm_m,
        porosity,
        fluid_resistivity_ohm_m,
        &p.archie,
    );
    let bqv = p.surface_conductivity_s_per_m;
    if bqv == 0.0 {
        return Ok(SaturationSolve {
            saturation: s_archie,
            iterations: 0,
            closed_form: true,
        });
    }
    let n = p.archie.n;
    if n <= 1.0 {
        return Err(PetroError::InvalidParameter {
            name: "saturation exponent n (Waxman–Smits with a surface term)".into(),
            expected: "n > 1, for which the saturation is unique".into(),
            value: n,
        });
    }
    let sigma_w = 1.0 / fluid_resistivity_ohm_m;
    let target = formation_factor(porosity, p.archie.a, p.archie.m) / resistivity_ohm_m;
    let g = |s: f64| sigma_w * s.powf(n) + bqv * s.powf(n - 1.0) - target;
    let dg = |s: f64| n * sigma_w * s.powf(n - 1.0) + (n - 1.0) * bqv * s.powf(n - 2.0);
    let (mut lo, mut hi) = (0.0_f64, s_archie);
    let mut s = s_archie;
    for it in 1..=200 {
        let gs = g(s);
        if gs == 0.0 {
            return Ok(SaturationSolve {
                saturation: s,
                iterations: it,
                closed_form: false,
            });
        }
        if gs > 0.0 {
            hi = s;
        } else {
            lo = s;
        }
        let newton = s - gs / dg(s);
        let next = if newton > lo && newton < hi && newton.is_finite() {
            newton
        } else {
            0.5 * (lo + hi)
        };
        if (next - s).abs() <= 1e-15 * s.max(f64::MIN_POSITIVE) || hi - lo <= 1e-16 * hi {
            return Ok(SaturationSolve {
                saturation: next,
                iterations: it,
                closed_form: false,
            });
        }
        s = next;
    }
    Err(PetroError::NoConvergence {
        what: "Waxman–Smits saturation".into(),
        detail: format!(
            "ρ = {resistivity_ohm_m} Ω·m, φ = {porosity}, ρw = {fluid_resistivity_ohm_m} Ω·m"
        ),
    })
}

/// Equivalent counter-ion conductance after Juhász (1981):
/// B = (−1.28 + 0.225·T − 4.059·10⁻⁴·T²) / (1 + ρw^1.23·(0.045·T − 0.27)),
/// in S m⁻¹ per meq/cm³, T in °C, ρw in Ω·m.
pub fn juhasz_b(temperature_c: f64, fluid_resistivity_ohm_m: f64) -> f64 {
    let t = temperature_c;
    (-1.28 + 0.225 * t - 4.059e-4 * t * t)
        / (1.0 + fluid_resistivity_ohm_m.powf(1.23) * (0.045 * t - 0.27))
}

/// Cation exchange capacity per unit pore volume (Waxman & Smits 1968):
/// Qv = CEC·(1 − φ)·ρ_grain / φ, in meq/cm³ for CEC in meq/g and ρ_grain in g/cm³.
pub fn qv_meq_per_cm3(cec_meq_per_g: f64, porosity: f64, grain_density_g_per_cm3: f64) -> f64 {
    cec_meq_per_g * (1.0 - porosity) * grain_density_g_per_cm3 / porosity
}

fn positive(name: &str, v: f64) -> Result<(), PetroError> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(PetroError::InvalidParameter {
            name: name.into(),
            expected: "a finite number > 0".into(),
            value: v,
        })
    }
}

fn fraction(name: &str, v: f64) -> Result<(), PetroError> {
    if v.is_finite() && v > 0.0 && v <= 1.0 {
        Ok(())
    } else {
        Err(PetroError::InvalidParameter {
            name: name.into(),
            expected: "a fraction in (0, 1]".into(),
            value: v,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// geophysics.md §5.7.1: a 20×20×20 grid of φ ∈ [0.05, 0.45], S ∈ [0.05, 1],
    /// ρw ∈ [1, 100] Ω·m with m = 1.8, n = 2.1, a = 1: S(ρ(S)) = S to 1e-12.
    #[test]
    fn archie_round_trip_to_1e_12() {
        let p = Archie {
            a: 1.0,
            m: 1.8,
            n: 2.1,
        };
        let lin = |lo: f64, hi: f64, i: usize| lo + (hi - lo) * i as f64 / 19.0;
        let mut worst: f64 = 0.0;
        for i in 0..20 {
            let phi = lin(0.05, 0.45, i);
            for j in 0..20 {
                let s = lin(0.05, 1.0, j);
                for k in 0..20 {
                    let rw = 10f64.powf(lin(0.0, 2.0, k));
                    let rho = archie_resistivity_ohm_m(phi, s, rw, &p);
                    let back = archie_saturation(rho, phi, rw, &p);
                    worst = worst.max(((back - s) / s).abs());
                }
            }
        }
        eprintln!("Archie round trip: worst relative error {worst:e}");
        assert!(worst < 1e-12, "worst relative round-trip error {worst:e}");
    }

    /// pyGIMLi `petro.resistivityArchie(rFluid=20, porosity=0.3, m=2, sat=0.6, n=2)`
    /// = 617.28395062 (geophysics.md §2, check 23), to the 11 digits printed there.
    #[test]
    fn archie_equals_pygimli() {
        let p = Archie {
            a: 1.0,
            m: 2.0,
            n: 2.0,
        };
        let rho = archie_resistivity_ohm_m(0.3, 0.6, 20.0, &p);
        assert!((rho - 617.28395062).abs() < 5e-9, "{rho}");
    }

    /// Waxman–Smits with B·Qv = 0 is Archie (geophysics.md §5.7.2), to 1e-12.
    #[test]
    fn waxman_smits_reduces_to_archie() {
        let ws = WaxmanSmits {
            archie: Archie {
                a: 1.0,
                m: 1.8,
                n: 2.1,
            },
            surface_conductivity_s_per_m: 0.0,
        };
        for &(phi, s, rw) in &[(0.3, 0.6, 20.0), (0.1, 0.2, 1.0), (0.45, 1.0, 100.0)] {
            let sigma = waxman_smits_conductivity_s_per_m(phi, s, rw, &ws);
            let rho_archie = archie_resistivity_ohm_m(phi, s, rw, &ws.archie);
            assert!(((1.0 / sigma - rho_archie) / rho_archie).abs() < 1e-12);
            let solved = waxman_smits_saturation(1.0 / sigma, phi, rw, &ws).unwrap();
            assert!(solved.closed_form);
            assert!(((solved.saturation - s) / s).abs() < 1e-12);
        }
    }

    /// geophysics.md §5.7.2: Juhász B at 25 °C, φ = 0.25, m* = n* = 2, ρw = 0.1–10 Ω·m,
    /// Qv = 0.1–1 meq/cm³: the Newton S satisfies the forward equation to 1e-12 and is ≤ the
    /// Archie S for the same σ.
    #[test]
    fn waxman_smits_newton_solves_the_forward_equation() {
        for &rw in &[0.1, 0.3, 1.0, 3.0, 10.0] {
            let b = juhasz_b(25.0, rw);
            assert!(b > 0.0, "B must be positive at 25 °C, got {b}");
            for &qv in &[0.1, 0.3, 1.0] {
                let ws = WaxmanSmits {
                    archie: Archie {
                        a: 1.0,
                        m: 2.0,
                        n: 2.0,
                    },
                    surface_conductivity_s_per_m: b * qv,
                };
                for &s_true in &[0.1, 0.4, 0.8, 1.0] {
                    let sigma = waxman_smits_conductivity_s_per_m(0.25, s_true, rw, &ws);
                    let solved = waxman_smits_saturation(1.0 / sigma, 0.25, rw, &ws).unwrap();
                    let back = waxman_smits_conductivity_s_per_m(0.25, solved.saturation, rw, &ws);
                    assert!(((back - sigma) / sigma).abs() < 1e-12, "rw {rw} qv {qv}");
                    assert!(((solved.saturation - s_true) / s_true).abs() < 1e-12);
                    let s_archie = archie_saturation(1.0 / sigma, 0.25, rw, &ws.archie);
                    assert!(solved.saturation <= s_archie * (1.0 + 1e-15));
                }
            }
        }
    }

    /// Juhász (1981) at 25 °C and ρw = 1 Ω·m: (−1.28 + 5.625 − 0.25369)/(1 + 0.855)
    /// = 4.0913125/1.855 = 2.2055593 S m⁻¹ (meq/cm³)⁻¹, worked by hand from the formula.
    #[test]
    fn juhasz_b_worked_value() {
        let b = juhasz_b(25.0, 1.0);
        let expected = (-1.28 + 0.225 * 25.0 - 4.059e-4 * 625.0) / (1.0 + (0.045 * 25.0 - 0.27));
        assert!((b - expected).abs() < 1e-15);
        assert!((b - 2.205_559_3).abs() < 1e-7, "{b}");
    }

    #[test]
    fn bad_parameters_are_errors_not_panics() {
        let ws = WaxmanSmits {
            archie: Archie {
                a: 1.0,
                m: 2.0,
                n: 2.0,
            },
            surface_conductivity_s_per_m: 0.01,
        };
        assert!(waxman_smits_saturation(-1.0, 0.3, 10.0, &ws).is_err());
        assert!(waxman_smits_saturation(10.0, 1.5, 10.0, &ws).is_err());
        assert!(waxman_smits_saturation(f64::NAN, 0.3, 10.0, &ws).is_err());
    }
}
