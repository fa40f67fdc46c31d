//! Magnetotellurics: transfer-function files (EDI, EMTF XML, Z-files, J-files, Zonge AVG),
//! the 1D impedance recursion with its analytic Jacobian, Occam 1D inversion, static shift and
//! dimensionality indicators, and the quality verdict of an inversion.
//!
//! The pieces, in the order a run uses them:
//!
//! 1. [`read_transfer_function`] → [`TransferFunction`] (impedance in (mV/km)/nT, tipper),
//!    or [`read_sounding_table`] for plain ρa/φ tables (Occam 1D data, benchmark CSV).
//! 2. [`sounding_from_tf`] → [`MtSounding`]: ρa/φ curves of the chosen modes with the sign
//!    convention detected from the phases and stated, error floors applied.
//! 3. [`dimensionality`] → phase-tensor skew, Swift skew, strike: whether 1D is defensible.
//! 4. [`invert_occam`] → [`OccamResult`]: the smoothest layered model at the target RMS.
//! 5. [`evaluate_mt_inversion`] → the shared quality rubric (fit, static shift,
//!    plausibility); [`mt_water_content`] → water content per layer through `petro`.
//!
//! [`invert_site`] runs 2–5 for one transfer function in a single call.

pub mod avg;
pub mod dimensionality;
pub mod edi;
pub mod emtfxml;
pub mod forward;
pub mod interpret;
pub mod jfile;
pub mod nanser;
pub mod occam;
pub mod quality;
pub mod site;
pub mod sounding;
pub mod table;
pub mod text;
pub mod tf;
pub mod zfile;

#[cfg(test)]
mod field_tests;
#[cfg(test)]
mod proptests;

use std::path::Path;

pub use dimensionality::{Dimensionality, DimensionalityVerdict, dimensionality};
pub use forward::{
    ForwardResponse, LayeredEarth, impedance_ohm, mt1d_forward, mt1d_forward_with_jacobian,
};
pub use occam::{
    OccamIteration, OccamOptions, OccamResult, Progress, StaticShift, invert_occam,
    log_spaced_layers, occam_trial,
};
pub use quality::{MtEvaluation, MtWaterContent, evaluate_mt_inversion, mt_water_content};
pub use site::{MtSiteInversion, invert_site, invert_sounding};
pub use sounding::{
    CurveMode, ModeCurve, MtSounding, OccamMode, SignConvention, SoundingOptions,
    StaticShiftIndicator, apply_error_floor, sounding_from_tf, static_shift_indicator,
};
pub use table::read_sounding_table;
pub use tf::{Component, MU0, TfFormat, TransferFunction, phase_deg, rhoa_ohm_m};

use crate::methods::io::{ReadError, read_bytes};

/// Why an MT computation could not be done (readers use [`ReadError`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MtError {
    /// The input is unusable for this computation.
    #[error("{0}")]
    InvalidInput(String),
    /// The run was cancelled between iterations.
    #[error("cancelled after {iterations} iterations")]
    Cancelled {
        /// Completed iterations.
        iterations: usize,
    },
    /// A linear solve failed (singular system).
    #[error("numerical failure: {0}")]
    Numerical(String),
    /// Petrophysical conversion failed.
    #[error(transparent)]
    Petro(#[from] crate::methods::petro::PetroError),
}

/// How a file was recognised.
/// How a transfer-function file's format was recognised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Recognised {
    /// By its extension.
    Extension,
    /// By its content: the format's own opening line or root element.
    Signature,
    /// By a column name in its head only (a guess, confirmed before use).
    WeakSignature,
}

fn detect(path: &Path, head: &str) -> Option<(TfFormatKind, Recognised)> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    let by_ext = match ext.as_str() {
        "edi" => Some(TfFormatKind::Edi),
        "zmm" | "zrr" | "zss" => Some(TfFormatKind::ZFile),
        "j" => Some(TfFormatKind::JFile),
        "avg" => Some(TfFormatKind::Avg),
        "xml" if head.contains("<EM_TF") => Some(TfFormatKind::Xml),
        _ => None,
    };
    if let Some(k) = by_ext {
        return Some((k, Recognised::Extension));
    }
    if ext == "xml" {
        return None;
    }
    // By content: the first four are unambiguous signatures (the format's own opening
    // line or root element), so the format is proven; a Zonge .avg is recognised only by
    // a column name somewhere in its head, a weak signature, so it is a guess (issue 17:
    // confirmed before use).
    let t = head.trim_start();
    let upper: String = t.chars().take(200).collect::<String>().to_ascii_uppercase();
    if t.starts_with(">HEAD") || t.starts_with(">head") {
        Some((TfFormatKind::Edi, Recognised::Signature))
    } else if head.contains("<EM_TF") {
        Some((TfFormatKind::Xml, Recognised::Signature))
    } else if upper.starts_with("TRANSFER FUNCTIONS IN MEASUREMENT COORDINATES") {
        Some((TfFormatKind::ZFile, Recognised::Signature))
    } else if upper.starts_with("#BIRRP") {
        Some((TfFormatKind::JFile, Recognised::Signature))
    } else if head.contains("$Rx.Cmp") || head.to_ascii_lowercase().contains("\nskp,freq") {
        Some((TfFormatKind::Avg, Recognised::WeakSignature))
    } else {
        None
    }
}

#[derive(Debug, Clone, Copy)]
enum TfFormatKind {
    Edi,
    Xml,
    ZFile,
    JFile,
    Avg,
}

/// Read any supported transfer-function file, choosing the reader by extension (or, for an
/// unknown extension, by a signature in the first bytes, said in a note; `format_guessed` is
/// set only when that signature is weak, a Zonge column name).
pub fn read_transfer_function(path: &Path) -> Result<TransferFunction, ReadError> {
    let bytes = read_bytes(path)?;
    let text = match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
    let head: String = text.chars().take(4096).collect();
    let Some((kind, how)) = detect(path, &head) else {
        return Err(ReadError::format(
            path,
            "not a recognised MT transfer-function file (EDI, EMTF XML, .zmm/.zrr/.zss, .j, .avg)",
        ));
    };
    let mut tf = match kind {
        TfFormatKind::Edi => edi::parse_edi(path, &text)?,
        TfFormatKind::Xml => emtfxml::parse_emtf_xml(path, &text)?,
        TfFormatKind::ZFile => zfile::parse_zfile(path, &text)?,
        TfFormatKind::JFile => jfile::parse_jfile(path, &text)?,
        TfFormatKind::Avg => avg::parse_avg(path, &text)?,
    };
    match how {
        Recognised::Extension => {}
        Recognised::Signature => tf.notes.push(format!(
            "Format recognised as {} from its content (its own opening line), not its extension.",
            tf.format.label()
        )),
        Recognised::WeakSignature => {
            tf.format_guessed = true;
            tf.notes.push(format!(
                "Format recognised as {} from a column name in its content only, not its extension (a guess).",
                tf.format.label()
            ));
        }
    }
    Ok(tf)
}

/// The JSON summary of an MT file for `hydrogeo-studio read <file>`; `None` when the file is
/// clearly not an MT format (by extension and signature).
pub fn read_summary(path: &Path) -> Option<Result<serde_json::Value, ReadError>> {
    let bytes = match read_bytes(path) {
        Ok(b) => b,
        Err(e) => {
            // An unreadable file with an MT extension is ours to report.
            let ext = path
                .extension()
                .and_then(|e| e.to_str())
                .map(str::to_ascii_lowercase)
                .unwrap_or_default();
            return ["edi", "zmm", "zrr", "zss", "j", "avg"]
                .contains(&ext.as_str())
                .then_some(Err(e));
        }
    };
    let head: String = String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]).into_owned();
    if detect(path, &head).is_some() {
        return Some(read_transfer_function(path).map(|tf| tf_summary(&tf)));
    }
    if table::looks_like_sounding_table(&head) {
        return Some(read_sounding_table(path).map(|s| {
            serde_json::json!({
                "method": "mt",
                "format": s.format_label,
                "format_guessed": s.format_guessed,
                "site": s.site,
                "n_periods": s.period_s.len(),
                "period_min_s": s.period_s.first(),
                "period_max_s": s.period_s.last(),
                "modes": s.curves.iter().map(|c| c.mode.label()).collect::<Vec<_>>(),
                "rhoa_range_ohm_m": range(&s.curves.iter().flat_map(|c| c.rhoa_ohm_m.clone()).collect::<Vec<_>>()),
                "notes": s.notes,
            })
        }));
    }
    None
}

fn range(v: &[f64]) -> Option<[f64; 2]> {
    let f: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if f.is_empty() {
        return None;
    }
    Some([
        f.iter().copied().fold(f64::INFINITY, f64::min),
        f.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    ])
}

/// The summary of a transfer function (format, counts, ranges, units, conventions).
pub fn tf_summary(tf: &TransferFunction) -> serde_json::Value {
    let (xy, yx) = (tf.rhoa_phase(Component::Xy), tf.rhoa_phase(Component::Yx));
    let sign = sounding::detect_sign_convention(tf);
    serde_json::json!({
        "method": "mt",
        "format": tf.format.label(),
        "format_guessed": tf.format_guessed,
        "site": tf.site,
        "n_periods": tf.n_periods(),
        "period_min_s": tf.period_s.first(),
        "period_max_s": tf.period_s.last(),
        "impedance_present": tf.z_mv_km_nt.is_some(),
        "tipper_present": tf.tipper.is_some(),
        "impedance_units_in_file": tf.units_in_file,
        "impedance_units_used": "(mV/km)/nT; rho_a = 0.2*T*|Z|^2",
        "units_guessed": tf.units_guessed,
        "rhoa_xy_range_ohm_m": xy.as_ref().and_then(|(r, _)| range(r)),
        "rhoa_yx_range_ohm_m": yx.as_ref().and_then(|(r, _)| range(r)),
        "phase_xy_range_deg": xy.as_ref().and_then(|(_, p)| range(p)),
        "phase_yx_range_deg": yx.as_ref().and_then(|(_, p)| range(p)),
        "sign_convention": sign.map(|s| s.describe()),
        "latitude_deg": tf.latitude_deg,
        "longitude_deg": tf.longitude_deg,
        "elevation_m": tf.elevation_m,
        "acquired_date": tf.acquired_date,
        "notes": tf.notes,
    })
}
