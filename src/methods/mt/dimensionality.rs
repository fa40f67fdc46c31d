//! Dimensionality indicators, so the report can say whether a 1D interpretation is
//! defensible.
//!
//! * Swift (1967) skew κ = |Zxx + Zyy| / |Zxy − Zyx| and strike: the θ that minimises
//!   |Zxx′ − Zyy′|² under rotation, tan 4θ = 2·Re[(Zxx − Zyy)(Zxy + Zyx)*] /
//!   (|Zxx − Zyy|² − |Zxy + Zyx|²) (Vozoff 1972), taken on the minimising branch:
//!   θ = ¼·atan2(−2·Re[(Zxx − Zyy)(Zxy + Zyx)*], −(|Zxx − Zyy|² − |Zxy + Zyx|²)).
//! * Bahr (1988) phase-sensitive skew η = √|[D1, S2] − [S1, D2]| / |D2| with
//!   S1 = Zxx + Zyy, S2 = Zxy + Zyx, D1 = Zxx − Zyy, D2 = Zxy − Zyx, [A, B] = Im(B·A*).
//! * Phase tensor (Caldwell, Bibby & Brown 2004): Φ = X⁻¹Y with X = Re Z, Y = Im Z;
//!   β = ½·arctan[(Φ12 − Φ21)/(Φ11 + Φ22)] (skew angle), α = ½·atan2(Φ12 + Φ21, Φ11 − Φ22),
//!   strike α − β; Φ1 = (Φ11 + Φ22)/2, Φ2 = √|det Φ|, Φ3 = (Φ12 − Φ21)/2,
//!   Φmax/min = √(Φ1² + Φ3²) ± √(Φ1² + Φ3² − Φ2²) (eqs. 17–20), ellipticity
//!   (Φmax − Φmin)/(Φmax + Φmin).
//!
//! Classification per period (the usual phase-tensor reading, e.g. Booker 2014): |β| ≥ 3° →
//! 3D; otherwise ellipticity < 0.1 → 1D, else 2D. These are thresholds on estimates without
//! their error bars: a noisy period can cross them by noise alone, and the summary says so.

use serde::{Deserialize, Serialize};

use super::tf::{Tensor, TransferFunction};

/// |β| threshold for 3D, degrees.
pub const BETA_3D_DEG: f64 = 3.0;
/// Ellipticity threshold between 1D and 2D.
pub const ELLIPTICITY_2D: f64 = 0.1;
/// Share of 1D-like periods needed to call a 1D interpretation defensible.
pub const SHARE_1D_DEFENSIBLE: f64 = 0.7;

/// The class of one period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DimClass {
    /// |β| < 3° and ellipticity < 0.1.
    OneD,
    /// |β| < 3° and ellipticity ≥ 0.1.
    TwoD,
    /// |β| ≥ 3°.
    ThreeD,
}

/// The overall verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DimensionalityVerdict {
    /// At least 70 % of the periods are 1D-like: a 1D model is defensible.
    OneDDefensible,
    /// Mostly 2D (β small, ellipticity large): a 1D model of the determinant is a compromise.
    TwoDDominant,
    /// Mostly 3D (β large): a 1D model is not defensible.
    ThreeDDominant,
    /// No class dominates.
    Mixed,
    /// No full impedance tensor to judge.
    NotAssessable,
}

/// Indicators per period and the verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dimensionality {
    /// Periods, s.
    #[serde(with = "super::nanser::vec")]
    pub period_s: Vec<f64>,
    /// Swift skew κ.
    #[serde(with = "super::nanser::vec")]
    pub swift_skew: Vec<f64>,
    /// Swift strike, degrees (90° ambiguity).
    #[serde(with = "super::nanser::vec")]
    pub swift_strike_deg: Vec<f64>,
    /// Bahr skew η.
    #[serde(with = "super::nanser::vec")]
    pub bahr_skew: Vec<f64>,
    /// Phase-tensor skew angle β, degrees.
    #[serde(with = "super::nanser::vec")]
    pub pt_beta_deg: Vec<f64>,
    /// Phase-tensor α, degrees.
    #[serde(with = "super::nanser::vec")]
    pub pt_alpha_deg: Vec<f64>,
    /// Phase-tensor strike α − β, degrees (90° ambiguity).
    #[serde(with = "super::nanser::vec")]
    pub pt_strike_deg: Vec<f64>,
    /// arctan Φmax, degrees.
    #[serde(with = "super::nanser::vec")]
    pub pt_phimax_deg: Vec<f64>,
    /// arctan Φmin, degrees.
    #[serde(with = "super::nanser::vec")]
    pub pt_phimin_deg: Vec<f64>,
    /// (Φmax − Φmin)/(Φmax + Φmin).
    #[serde(with = "super::nanser::vec")]
    pub pt_ellipticity: Vec<f64>,
    /// Class per period (`None` where the tensor is incomplete).
    pub class: Vec<Option<DimClass>>,
    /// Shares of the classified periods.
    pub share_1d: f64,
    /// Share 2D.
    pub share_2d: f64,
    /// Share 3D.
    pub share_3d: f64,
    /// Median phase-tensor strike over the 2D periods (degrees, modulo 90), if any.
    pub strike_deg: Option<f64>,
    /// The verdict.
    pub verdict: DimensionalityVerdict,
    /// One or two sentences for the report.
    pub sentence: String,
}

/// The indicators of one tensor: (κ, Swift strike°, η, β°, α°, Φmax°, Φmin°, ellipticity).
pub fn tensor_indicators(z: &Tensor) -> [f64; 8] {
    let (zxx, zxy, zyx, zyy) = (z[0][0], z[0][1], z[1][0], z[1][1]);
    let s1 = zxx + zyy;
    let s2 = zxy + zyx;
    let d1 = zxx - zyy;
    let d2 = zxy - zyx;
    let kappa = s1.norm() / d2.norm();
    let swift = 0.25 * (-2.0 * (d1 * s2.conj()).re).atan2(-(d1.norm_sqr() - s2.norm_sqr()));
    let comm = |a: num_complex::Complex64, b: num_complex::Complex64| (b * a.conj()).im;
    let eta = (comm(d1, s2) - comm(s1, d2)).abs().sqrt() / d2.norm();
    let (x11, x12, x21, x22) = (zxx.re, zxy.re, zyx.re, zyy.re);
    let (y11, y12, y21, y22) = (zxx.im, zxy.im, zyx.im, zyy.im);
    let det_x = x11 * x22 - x21 * x12;
    let p11 = (x22 * y11 - x12 * y21) / det_x;
    let p12 = (x22 * y12 - x12 * y22) / det_x;
    let p21 = (x11 * y21 - x21 * y11) / det_x;
    let p22 = (x11 * y22 - x21 * y12) / det_x;
    let beta = 0.5 * ((p12 - p21) / (p11 + p22)).atan();
    let alpha = 0.5 * (p12 + p21).atan2(p11 - p22);
    let phi1 = 0.5 * (p11 + p22);
    let phi2 = (p11 * p22 - p12 * p21).abs().sqrt();
    let phi3 = 0.5 * (p12 - p21);
    let a = (phi1 * phi1 + phi3 * phi3).sqrt();
    let b = (phi1 * phi1 + phi3 * phi3 - phi2 * phi2).max(0.0).sqrt();
    let (pmax, pmin) = (a + b, a - b);
    let ell = if pmax + pmin != 0.0 {
        (pmax - pmin) / (pmax + pmin)
    } else {
        f64::NAN
    };
    [
        kappa,
        swift.to_degrees(),
        eta,
        beta.to_degrees(),
        alpha.to_degrees(),
        pmax.atan().to_degrees(),
        pmin.atan().to_degrees(),
        ell,
    ]
}

/// Dimensionality of a transfer function (module docs); the verdict is
/// [`DimensionalityVerdict::NotAssessable`] without a full impedance tensor.
pub fn dimensionality(tf: &TransferFunction) -> Dimensionality {
    let n = tf.n_periods();
    let mut d = Dimensionality {
        period_s: tf.period_s.clone(),
        swift_skew: vec![f64::NAN; n],
        swift_strike_deg: vec![f64::NAN; n],
        bahr_skew: vec![f64::NAN; n],
        pt_beta_deg: vec![f64::NAN; n],
        pt_alpha_deg: vec![f64::NAN; n],
        pt_strike_deg: vec![f64::NAN; n],
        pt_phimax_deg: vec![f64::NAN; n],
        pt_phimin_deg: vec![f64::NAN; n],
        pt_ellipticity: vec![f64::NAN; n],
        class: vec![None; n],
        share_1d: 0.0,
        share_2d: 0.0,
        share_3d: 0.0,
        strike_deg: None,
        verdict: DimensionalityVerdict::NotAssessable,
        sentence: String::new(),
    };
    let Some(z) = tf.z_mv_km_nt.as_ref() else {
        d.sentence = "No impedance tensor: dimensionality cannot be assessed.".into();
        return d;
    };
    let mut counts = [0usize; 3];
    let mut strikes_2d = Vec::new();
    for (k, t) in z.iter().enumerate().take(n) {
        if t.iter()
            .flatten()
            .any(|c| !(c.re.is_finite() && c.im.is_finite()))
        {
            continue;
        }
        let v = tensor_indicators(t);
        if v.iter().any(|x| !x.is_finite()) {
            continue;
        }
        d.swift_skew[k] = v[0];
        d.swift_strike_deg[k] = v[1];
        d.bahr_skew[k] = v[2];
        d.pt_beta_deg[k] = v[3];
        d.pt_alpha_deg[k] = v[4];
        d.pt_strike_deg[k] = v[4] - v[3];
        d.pt_phimax_deg[k] = v[5];
        d.pt_phimin_deg[k] = v[6];
        d.pt_ellipticity[k] = v[7];
        let c = if v[3].abs() >= BETA_3D_DEG {
            DimClass::ThreeD
        } else if v[7] < ELLIPTICITY_2D {
            DimClass::OneD
        } else {
            strikes_2d.push((v[4] - v[3]).rem_euclid(90.0));
            DimClass::TwoD
        };
        counts[c as usize] += 1;
        d.class[k] = Some(c);
    }
    let total = counts.iter().sum::<usize>();
    if total == 0 {
        d.sentence =
            "The impedance tensor is incomplete at every period: dimensionality cannot be assessed."
                .into();
        return d;
    }
    d.share_1d = counts[0] as f64 / total as f64;
    d.share_2d = counts[1] as f64 / total as f64;
    d.share_3d = counts[2] as f64 / total as f64;
    if !strikes_2d.is_empty() {
        strikes_2d.sort_by(f64::total_cmp);
        d.strike_deg = Some(strikes_2d[strikes_2d.len() / 2]);
    }
    d.verdict = if d.share_1d >= SHARE_1D_DEFENSIBLE {
        DimensionalityVerdict::OneDDefensible
    } else if d.share_3d >= 0.5 {
        DimensionalityVerdict::ThreeDDominant
    } else if d.share_2d >= 0.5 {
        DimensionalityVerdict::TwoDDominant
    } else {
        DimensionalityVerdict::Mixed
    };
    let shares = format!(
        "{:.0} % of {total} periods 1D-like, {:.0} % 2D, {:.0} % 3D (phase tensor: |β| ≥ {BETA_3D_DEG}° → 3D, ellipticity ≥ {ELLIPTICITY_2D} → 2D; thresholds on estimates without error bars)",
        100.0 * d.share_1d,
        100.0 * d.share_2d,
        100.0 * d.share_3d
    );
    d.sentence = match d.verdict {
        DimensionalityVerdict::OneDDefensible => {
            format!("A 1D interpretation is defensible: {shares}.")
        }
        DimensionalityVerdict::TwoDDominant => format!(
            "Mostly 2D: {shares}; strike about {:.0}° (±90° ambiguity). A 1D model of the determinant is a compromise.",
            d.strike_deg.unwrap_or(f64::NAN)
        ),
        DimensionalityVerdict::ThreeDDominant => {
            format!("Mostly 3D: {shares}. A 1D model is not defensible beyond a rough average.")
        }
        DimensionalityVerdict::Mixed => format!(
            "Mixed dimensionality: {shares}. A 1D model holds at best for the 1D-like period range."
        ),
        DimensionalityVerdict::NotAssessable => unreachable!("handled above"),
    };
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::mt::tf::TfFormat;
    use num_complex::Complex64;

    fn c(re: f64, im: f64) -> Complex64 {
        Complex64::new(re, im)
    }

    /// A 1D tensor: κ = η = β = 0, ellipticity 0, Φmax = Φmin = φ (Caldwell et al. 2004 §3).
    #[test]
    fn one_d_tensor_has_zero_skew_and_a_circle() {
        let zxy = c(1.0, 2.0);
        let v = tensor_indicators(&[[c(0.0, 0.0), zxy], [-zxy, c(0.0, 0.0)]]);
        assert!(v[0].abs() < 1e-15 && v[2].abs() < 1e-15 && v[3].abs() < 1e-12);
        assert!(v[7].abs() < 1e-12);
        let phi = zxy.arg().to_degrees();
        assert!((v[5] - phi).abs() < 1e-10 && (v[6] - phi).abs() < 1e-10);
        // The e^{-iωt} conjugate gives the same β = 0 (arctan, not atan2).
        let v2 = tensor_indicators(&[[c(0.0, 0.0), zxy.conj()], [-zxy.conj(), c(0.0, 0.0)]]);
        assert!(v2[3].abs() < 1e-12);
    }

    /// A 2D tensor with strike θ: rotate diag(0,·) TE/TM impedances by θ; then β = 0, the
    /// phase-tensor strike and Swift strike recover θ (mod 90°), κ = 0.
    #[test]
    fn rotated_two_d_tensor_recovers_the_strike() {
        let (te, tm) = (c(1.0, 1.5), c(3.0, 1.0));
        let th = 25f64.to_radians();
        let (cs, sn) = (th.cos(), th.sin());
        // Z' = R Z Rᵀ with Z = [[0, te], [−tm, 0]], R = [[c, s], [−s, c]] (rotation by −θ).
        let z0 = [[c(0.0, 0.0), te], [-tm, c(0.0, 0.0)]];
        let r = [[cs, -sn], [sn, cs]];
        let mut z = [[c(0.0, 0.0); 2]; 2];
        for i in 0..2 {
            for j in 0..2 {
                for a in 0..2 {
                    for b in 0..2 {
                        z[i][j] += r[i][a] * z0[a][b] * r[j][b];
                    }
                }
            }
        }
        let v = tensor_indicators(&z);
        assert!(v[0] < 1e-12, "Swift skew {}", v[0]);
        assert!(v[3].abs() < 1e-10, "β {}", v[3]);
        assert!(v[7] > 0.1, "ellipticity {}", v[7]);
        let pt_strike = (v[4] - v[3]).rem_euclid(90.0);
        assert!((pt_strike - 25.0).abs() < 1e-8, "PT strike {pt_strike}");
        assert!(
            (v[1].rem_euclid(90.0) - 25.0).abs() < 1e-8,
            "Swift strike {}",
            v[1]
        );
    }

    #[test]
    fn verdict_for_a_1d_site_and_for_no_tensor() {
        let mut tf = TransferFunction::empty(TfFormat::Edi);
        tf.period_s = vec![1.0, 2.0, 3.0];
        let zxy = c(1.0, 1.0);
        tf.z_mv_km_nt = Some(vec![[[c(0.0, 0.0), zxy], [-zxy, c(0.0, 0.0)]]; 3]);
        let d = dimensionality(&tf);
        assert_eq!(d.verdict, DimensionalityVerdict::OneDDefensible);
        assert_eq!(d.share_1d, 1.0);
        tf.z_mv_km_nt = None;
        assert_eq!(
            dimensionality(&tf).verdict,
            DimensionalityVerdict::NotAssessable
        );
    }
}
