//! From a transfer function to the apparent-resistivity and phase curves an inversion fits:
//! mode selection (det, xy, yx, both), the sign convention detected from the phases, phases
//! folded into the first quadrant (a half-space gives +45°), errors from the impedance
//! variances with a floor, and a static-shift indicator between the two modes.

use serde::{Deserialize, Serialize};

use super::tf::{Component, TransferFunction, phase_deg, rhoa_ohm_m, z_det};

/// Which curves to invert.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OccamMode {
    /// The determinant (rotation-invariant) impedance.
    Det,
    /// Zxy only.
    Xy,
    /// Zyx only.
    Yx,
    /// Zxy and Zyx jointly (one model, optionally one static shift per mode).
    Both,
}

/// The kind of one curve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CurveMode {
    /// From Zxy.
    Xy,
    /// From Zyx.
    Yx,
    /// From the determinant impedance.
    Det,
    /// A single curve given as such (e.g. an averaged curve in a ρa/φ table).
    Single,
}

impl CurveMode {
    /// Short label.
    pub fn label(self) -> &'static str {
        match self {
            CurveMode::Xy => "xy",
            CurveMode::Yx => "yx",
            CurveMode::Det => "det",
            CurveMode::Single => "single",
        }
    }
}

/// One apparent-resistivity/phase curve; NaN marks a missing value (masked).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModeCurve {
    /// Which curve.
    pub mode: CurveMode,
    /// Apparent resistivity, Ω·m.
    #[serde(with = "super::nanser::vec")]
    pub rhoa_ohm_m: Vec<f64>,
    /// Standard deviation of log10 ρa.
    #[serde(with = "super::nanser::vec")]
    pub log10_rhoa_std: Vec<f64>,
    /// Phase in degrees, first-quadrant convention (half-space +45°).
    #[serde(with = "super::nanser::vec")]
    pub phase_deg: Vec<f64>,
    /// Standard deviation of the phase, degrees.
    #[serde(with = "super::nanser::vec")]
    pub phase_std_deg: Vec<f64>,
}

/// The sign convention of a file's impedances, read from its phases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SignConvention {
    /// e^{+iωt}: Zxy in the first quadrant, Zyx in the third (the EDI/EMTF norm).
    PlusIomegaT,
    /// e^{−iωt}: Zxy in the fourth quadrant, Zyx in the second (complex conjugates).
    MinusIomegaT,
    /// Both Zxy and Zyx in the first quadrant (yx already rotated by 180°).
    BothFirstQuadrant,
    /// Zxy in the third quadrant and Zyx in the first (axes swapped).
    Swapped,
    /// The phases do not fit any of the above.
    Undetermined,
}

impl SignConvention {
    /// One sentence for summaries and reports.
    pub fn describe(self) -> &'static str {
        match self {
            SignConvention::PlusIomegaT => {
                "e^{+iωt}: Zxy phases in the first quadrant and Zyx in the third; yx phases \
                 shifted by +180° for inversion"
            }
            SignConvention::MinusIomegaT => {
                "e^{-iωt}: Zxy phases in the fourth quadrant and Zyx in the second; impedances \
                 conjugated for inversion"
            }
            SignConvention::BothFirstQuadrant => {
                "both Zxy and Zyx phases already in the first quadrant; used as given"
            }
            SignConvention::Swapped => {
                "Zxy phases in the third quadrant and Zyx in the first (x and y swapped?); xy \
                 shifted by +180° for inversion"
            }
            SignConvention::Undetermined => {
                "the phases fit no standard convention; e^{+iωt} assumed (a guess)"
            }
        }
    }

    /// Fold a phase of `mode` into the first-quadrant convention.
    pub fn fold(self, mode: CurveMode, phase: f64) -> f64 {
        let wrap = |p: f64| {
            let mut p = p;
            while p > 180.0 {
                p -= 360.0;
            }
            while p <= -180.0 {
                p += 360.0;
            }
            p
        };
        let p = match (self, mode) {
            (SignConvention::PlusIomegaT | SignConvention::Undetermined, CurveMode::Yx) => {
                phase + 180.0
            }
            (SignConvention::MinusIomegaT, CurveMode::Yx) => 180.0 - phase,
            (SignConvention::MinusIomegaT, _) => -phase,
            (SignConvention::Swapped, CurveMode::Xy) => phase + 180.0,
            _ => phase,
        };
        wrap(p)
    }
}

/// Options for [`sounding_from_tf`] (every key optional in JSON; unknown keys are refused).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SoundingOptions {
    /// Which curves.
    pub mode: OccamMode,
    /// Error floor on |Z| in percent (5 % → 10 % in ρa, 2.9° in phase).
    pub z_error_floor_percent: f64,
}

impl Default for SoundingOptions {
    fn default() -> Self {
        SoundingOptions {
            mode: OccamMode::Det,
            z_error_floor_percent: 5.0,
        }
    }
}

/// The curves one inversion fits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MtSounding {
    /// Site name.
    pub site: String,
    /// The source format.
    pub format_label: String,
    /// Whether that format was guessed.
    pub format_guessed: bool,
    /// Periods in seconds, ascending.
    pub period_s: Vec<f64>,
    /// One or two curves.
    pub curves: Vec<ModeCurve>,
    /// The sign convention detected (None for tables given as ρa/φ).
    pub sign_convention: Option<SignConvention>,
    /// What was decided and why.
    pub notes: Vec<String>,
}

impl MtSounding {
    /// Number of usable data (finite ρa and phase values with finite, positive errors).
    pub fn n_data(&self) -> usize {
        self.curves
            .iter()
            .map(|c| {
                (0..self.period_s.len())
                    .map(|i| {
                        usize::from(
                            c.rhoa_ohm_m[i].is_finite()
                                && c.rhoa_ohm_m[i] > 0.0
                                && c.log10_rhoa_std[i] > 0.0,
                        ) + usize::from(c.phase_deg[i].is_finite() && c.phase_std_deg[i] > 0.0)
                    })
                    .sum::<usize>()
            })
            .sum()
    }
}

// The upper median (the element at `n / 2` of the sorted finite values).
use crate::methods::shared::stats::upper_median as median;

/// The sign convention from the median xy and yx phases (module docs); `None` without an
/// impedance.
pub fn detect_sign_convention(tf: &TransferFunction) -> Option<SignConvention> {
    let (_, pxy) = tf.rhoa_phase(Component::Xy)?;
    let (_, pyx) = tf.rhoa_phase(Component::Yx)?;
    let (mxy, myx) = (median(&pxy), median(&pyx));
    let q = |p: Option<f64>| -> Option<u8> {
        let p = p?;
        Some(if (0.0..=90.0).contains(&p) {
            1
        } else if p > 90.0 {
            2
        } else if p < -90.0 {
            3
        } else {
            4
        })
    };
    Some(match (q(mxy), q(myx)) {
        (Some(1), Some(3)) | (Some(1), None) | (None, Some(3)) => SignConvention::PlusIomegaT,
        (Some(4), Some(2)) | (Some(4), None) | (None, Some(2)) => SignConvention::MinusIomegaT,
        (Some(1), Some(1)) => SignConvention::BothFirstQuadrant,
        (Some(3), Some(1)) => SignConvention::Swapped,
        _ => SignConvention::Undetermined,
    })
}

/// Build the curves of `opts.mode` from a transfer function (module docs). Errors: the
/// impedance standard deviation δ gives δ(log10 ρa) = 2·(δ/|Z|)/ln 10 and δφ = δ/|Z| rad,
/// with δ/|Z| raised to the floor.
pub fn sounding_from_tf(
    tf: &TransferFunction,
    opts: &SoundingOptions,
) -> Result<MtSounding, super::MtError> {
    let Some(z) = tf.z_mv_km_nt.as_ref() else {
        return Err(super::MtError::InvalidInput(format!(
            "site {}: the file holds no impedance (tipper only), so there is nothing to invert",
            tf.site
        )));
    };
    let sign = detect_sign_convention(tf).unwrap_or(SignConvention::Undetermined);
    let mut notes = vec![format!("Sign convention: {}.", sign.describe())];
    let floor = opts.z_error_floor_percent / 100.0;
    let modes: Vec<CurveMode> = match opts.mode {
        OccamMode::Det => vec![CurveMode::Det],
        OccamMode::Xy => vec![CurveMode::Xy],
        OccamMode::Yx => vec![CurveMode::Yx],
        OccamMode::Both => vec![CurveMode::Xy, CurveMode::Yx],
    };
    let mut floored = 0usize;
    let mut curves = Vec::new();
    for mode in modes {
        let comp = match mode {
            CurveMode::Xy => Component::Xy,
            CurveMode::Yx => Component::Yx,
            _ => Component::Det,
        };
        let std = tf.impedance_std(comp);
        let n = tf.n_periods();
        let mut c = ModeCurve {
            mode,
            rhoa_ohm_m: vec![f64::NAN; n],
            log10_rhoa_std: vec![f64::NAN; n],
            phase_deg: vec![f64::NAN; n],
            phase_std_deg: vec![f64::NAN; n],
        };
        let mut out_of_quadrant = 0usize;
        for k in 0..n {
            let zz = match mode {
                CurveMode::Xy => z[k][0][1],
                CurveMode::Yx => z[k][1][0],
                _ => z_det(&z[k]),
            };
            if !(zz.re.is_finite() && zz.im.is_finite()) || zz.norm() == 0.0 {
                continue;
            }
            let rel_given = std.as_ref().map_or(f64::NAN, |s| s[k] / zz.norm());
            let rel = if rel_given.is_finite() && rel_given >= floor {
                rel_given
            } else {
                floored += 1;
                floor
            };
            c.rhoa_ohm_m[k] = rhoa_ohm_m(zz, tf.period_s[k]);
            c.log10_rhoa_std[k] = 2.0 * rel / std::f64::consts::LN_10;
            let p = sign.fold(mode, phase_deg(zz));
            if !(0.0..=90.0).contains(&p) {
                out_of_quadrant += 1;
            }
            c.phase_deg[k] = p;
            c.phase_std_deg[k] = rel.min(1.0).asin().to_degrees();
        }
        if out_of_quadrant > 0 {
            notes.push(format!(
                "{out_of_quadrant} {} phases lie outside 0–90° after folding: a 1D earth cannot \
                 produce them (3D effects, noise or a wrong convention); they are kept and will \
                 not be fitted well.",
                mode.label()
            ));
        }
        curves.push(c);
    }
    if floored > 0 {
        notes.push(format!(
            "{floored} of {} curve values use the {:.1} % error floor on |Z| (no or smaller \
             stated errors).",
            tf.n_periods() * curves.len(),
            opts.z_error_floor_percent
        ));
    }
    Ok(MtSounding {
        site: tf.site.clone(),
        format_label: tf.format.label().to_string(),
        format_guessed: tf.format_guessed,
        period_s: tf.period_s.clone(),
        curves,
        sign_convention: Some(sign),
        notes,
    })
}

/// Raise every error of a sounding to the floor equivalent to `z_error_floor_percent` on |Z|
/// (δlog10 ρa = 2·f/ln 10, δφ = asin f), e.g. for a ρa/φ table whose stated errors are
/// smaller than the data warrant; returns how many values were raised (and notes it).
pub fn apply_error_floor(s: &mut MtSounding, z_error_floor_percent: f64) -> usize {
    let f = (z_error_floor_percent / 100.0).max(0.0);
    let lr = 2.0 * f / std::f64::consts::LN_10;
    let ph = f.min(1.0).asin().to_degrees();
    let mut raised = 0;
    for c in &mut s.curves {
        for v in c.log10_rhoa_std.iter_mut() {
            if !v.is_nan() && *v < lr {
                *v = lr;
                raised += 1;
            }
        }
        for v in c.phase_std_deg.iter_mut() {
            if !v.is_nan() && *v < ph {
                *v = ph;
                raised += 1;
            }
        }
    }
    if raised > 0 {
        s.notes.push(format!(
            "{raised} errors raised to the floor of {z_error_floor_percent:.1} % on |Z| \
             ({:.1} % in ρa, {ph:.2}° in phase).",
            200.0 * f
        ));
    }
    raised
}

/// A data-based static-shift indicator between the xy and yx curves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StaticShiftIndicator {
    /// Geometric-mean ratio ρa,xy/ρa,yx over the shortest-period quarter of the data.
    #[serde(with = "super::nanser::num")]
    pub ratio_xy_over_yx: f64,
    /// Periods used.
    pub n_periods_used: usize,
    /// Median |φxy − φyx| there, degrees (parallel curves have similar phases).
    #[serde(with = "super::nanser::num")]
    pub median_phase_difference_deg: f64,
    /// True when the ratio exceeds 2.5 (or is below 1/2.5) while the phases agree within 10°.
    pub flagged: bool,
    /// One sentence.
    pub note: String,
}

/// Compare the two modes at the shortest periods: where the earth looks 1D the curves should
/// coincide; a constant ratio with equal phases is the signature of static shift (Jones
/// 1988). The factor 2.5 follows the peer studio's `STATIC_SHIFT_FACTOR`.
pub fn static_shift_indicator(s: &MtSounding) -> Option<StaticShiftIndicator> {
    let xy = s.curves.iter().find(|c| c.mode == CurveMode::Xy)?;
    let yx = s.curves.iter().find(|c| c.mode == CurveMode::Yx)?;
    let idx: Vec<usize> = (0..s.period_s.len())
        .filter(|&i| {
            xy.rhoa_ohm_m[i].is_finite()
                && yx.rhoa_ohm_m[i].is_finite()
                && xy.rhoa_ohm_m[i] > 0.0
                && yx.rhoa_ohm_m[i] > 0.0
        })
        .collect();
    if idx.len() < 3 {
        return None;
    }
    let take = (idx.len() / 4).max(3).min(idx.len());
    let used = &idx[..take];
    let logs: Vec<f64> = used
        .iter()
        .map(|&i| (xy.rhoa_ohm_m[i] / yx.rhoa_ohm_m[i]).log10())
        .collect();
    let dphi: Vec<f64> = used
        .iter()
        .map(|&i| (xy.phase_deg[i] - yx.phase_deg[i]).abs())
        .collect();
    let ratio = 10f64.powf(median(&logs)?);
    let dp = median(&dphi).unwrap_or(f64::NAN);
    let big = !(1.0 / 2.5..=2.5).contains(&ratio);
    let flagged = big && dp <= 10.0;
    let note = if flagged {
        format!(
            "At the {take} shortest periods ρa,xy/ρa,yx = {ratio:.2} with phases within {dp:.1}°: \
             a static shift larger than a factor 2.5 between the modes."
        )
    } else if big {
        format!(
            "At the {take} shortest periods ρa,xy/ρa,yx = {ratio:.2}, but the phases differ by \
             {dp:.1}°: the split is not only static shift (2D/3D structure)."
        )
    } else {
        format!(
            "At the {take} shortest periods ρa,xy/ρa,yx = {ratio:.2}: no static shift beyond a factor 2.5."
        )
    };
    Some(StaticShiftIndicator {
        ratio_xy_over_yx: ratio,
        n_periods_used: take,
        median_phase_difference_deg: dp,
        flagged,
        note,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::mt::tf::{TfFormat, ohm_to_field};
    use num_complex::Complex64;

    fn tf_1d(conj: bool, shift_xy: f64) -> TransferFunction {
        let mut tf = TransferFunction::empty(TfFormat::Edi);
        let periods: Vec<f64> = (0..12).map(|i| 10f64.powf(-2.0 + 0.4 * i as f64)).collect();
        let mut z = Vec::new();
        let mut s = Vec::new();
        for &t in &periods {
            let omega = 2.0 * std::f64::consts::PI / t;
            // Half-space 100 Ω·m: Z = √(iωμ0ρ) (SI), in field units.
            let zo = (Complex64::new(0.0, omega * super::super::tf::MU0 * 100.0)).sqrt();
            let mut zf = ohm_to_field(zo);
            if conj {
                zf = zf.conj();
            }
            let zero = Complex64::new(0.0, 0.0);
            z.push([[zero, zf * shift_xy.sqrt()], [-zf, zero]]);
            s.push([[0.0, 0.01 * zf.norm()], [0.01 * zf.norm(), 0.0]]);
        }
        tf.period_s = periods;
        tf.z_mv_km_nt = Some(z);
        tf.z_std_mv_km_nt = Some(s);
        tf
    }

    #[test]
    fn conventions_are_detected_and_folded_to_45_degrees() {
        for (conj, expected) in [
            (false, SignConvention::PlusIomegaT),
            (true, SignConvention::MinusIomegaT),
        ] {
            let tf = tf_1d(conj, 1.0);
            assert_eq!(detect_sign_convention(&tf), Some(expected));
            let s = sounding_from_tf(
                &tf,
                &SoundingOptions {
                    mode: OccamMode::Both,
                    z_error_floor_percent: 5.0,
                },
            )
            .unwrap();
            for c in &s.curves {
                for (&r, &p) in c.rhoa_ohm_m.iter().zip(&c.phase_deg) {
                    assert!((r - 100.0).abs() < 1e-9, "{r}");
                    assert!((p - 45.0).abs() < 1e-9, "{:?} {p}", c.mode);
                }
                // 1 % stated error is raised to the 5 % floor: δlog10ρa = 0.1/ln10.
                assert!((c.log10_rhoa_std[0] - 0.1 / std::f64::consts::LN_10).abs() < 1e-15);
                assert!((c.phase_std_deg[0] - 0.05f64.asin().to_degrees()).abs() < 1e-12);
            }
            let d = sounding_from_tf(&tf, &SoundingOptions::default()).unwrap();
            assert!((d.curves[0].phase_deg[3] - 45.0).abs() < 1e-9);
        }
    }

    #[test]
    fn error_floor_raises_small_errors_only() {
        let mut s = sounding_from_tf(
            &tf_1d(false, 1.0),
            &SoundingOptions {
                mode: OccamMode::Xy,
                z_error_floor_percent: 1.0,
            },
        )
        .unwrap();
        // Stated 1 % → floor 5 %: every ρa and φ error is raised, none twice.
        let n = apply_error_floor(&mut s, 5.0);
        assert_eq!(n, 24);
        assert!((s.curves[0].log10_rhoa_std[0] - 0.1 / std::f64::consts::LN_10).abs() < 1e-15);
        assert_eq!(apply_error_floor(&mut s, 5.0), 0);
    }

    #[test]
    fn static_shift_of_three_is_flagged() {
        let tf = tf_1d(false, 3.0);
        let s = sounding_from_tf(
            &tf,
            &SoundingOptions {
                mode: OccamMode::Both,
                z_error_floor_percent: 5.0,
            },
        )
        .unwrap();
        let ind = static_shift_indicator(&s).unwrap();
        assert!((ind.ratio_xy_over_yx - 3.0).abs() < 1e-9);
        assert!(ind.flagged);
        let ok = sounding_from_tf(
            &tf_1d(false, 2.0),
            &SoundingOptions {
                mode: OccamMode::Both,
                z_error_floor_percent: 5.0,
            },
        )
        .unwrap();
        assert!(!static_shift_indicator(&ok).unwrap().flagged);
    }
}
