//! Electrical resistivity tomography: readers for instrument formats, quality control,
//! the 2.5D finite-element forward model and its Jacobian, inversion (single and
//! time-lapse).
//!
//! * [`survey`]: the [`Survey`] every reader returns, and [`SurveySet`] for time-lapse.
//! * [`readers`]: one reader per instrument format, signature detection, the unified-format
//!   writer, electrode tables.
//! * [`qc`]: geometric factors, apparent resistivity, reciprocal errors, the error model,
//!   filters.
//! * [`mesh`]: 2D triangle meshes with topography, electrode refinement, padded boundary,
//!   and interface polylines.
//! * [`geometry`]: the electrode layout (surface line, ring, boreholes, 3D) and the 2D refusal.
//! * [`fem`]: the 2.5D finite-element forward operator and the adjoint Jacobian.
//! * [`inversion`]: Gauss–Newton inversion of one survey, data preparation, coverage.
//! * [`evaluation`]: the quality rubric for ERT models and the λ retries.
//! * [`timelapse`]: simultaneous (4D), difference, ratio and independent time-lapse inversion.
//! * [`rng`]: a seeded normal random number generator (noise, test data).
//! * [`sounding`]: the 1D layered-earth response by a Hankel digital filter.

// Numerical kernels index several parallel arrays (nodes, element matrices, columns) by
// the same loop variable; iterator chains would hide that, so these two lints are off here.
// Settings checks are written `!(x >= 0.0)` on purpose: a NaN fails them too, which the
// "simplified" `x < 0.0` would let through.
#![allow(
    clippy::needless_range_loop,
    clippy::type_complexity,
    clippy::neg_cmp_op_on_partial_ord
)]

pub mod bessel;
pub mod doi;
pub mod evaluation;
pub mod fem;
pub mod geometry;
pub mod interpret;
pub mod inversion;
pub mod mesh;
pub mod qc;
pub mod quadrature;
pub mod readers;
pub mod rng;
pub mod sounding;
pub mod survey;
pub mod timelapse;

pub use readers::{Instrument, read_survey};
pub use survey::{Electrode, Format, Quadrupole, Survey, SurveySet, SurveyTime};

use crate::methods::io::ReadError;
use std::path::Path;

/// The JSON summary of an ERT file for `hydrogeo-studio read <file>`; `None` when the file
/// is clearly not an ERT format (no signature fits and the extension is not an ERT one).
pub fn read_summary(path: &Path) -> Option<Result<serde_json::Value, ReadError>> {
    let bytes = match crate::methods::io::read_bytes(path) {
        Ok(b) => b,
        Err(e) => return Some(Err(e)),
    };
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let ert_ext = [
        "ohm", "shm", "srv", "stg", "bin", "2dm", "tx0", "ele", "tab",
    ]
    .contains(&ext.as_str())
        || (ext == "data" && bytes.windows(11).any(|w| w == b"#data_start"));
    if ext == "sgt" {
        return None; // refraction travel times in the unified layout: the seismic reader's
    }
    let detected = readers::detect(path, &bytes);
    if detected.is_none() && !ert_ext {
        return electrode_table_summary(path, &bytes);
    }
    match readers::parse_survey(path, &bytes, Instrument::Auto) {
        Ok(s) => Some(Ok(s.summary())),
        // A unified-layout file whose data are travel times ('s g t') is not ERT.
        Err(ReadError::Format { message, .. }) if message.contains("travel-time") => None,
        Err(e) => Some(Err(e)),
    }
}

/// An electrode table (`electrodes.dat`, `elec.csv`: rows `x z` or `x y z`) summarised for
/// `read`. Such tables carry no signature of their own, so only a file whose name says
/// "elec" is taken for one, and the summary says that the name was what decided it.
fn electrode_table_summary(
    path: &Path,
    bytes: &[u8],
) -> Option<Result<serde_json::Value, ReadError>> {
    let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
    if !name.contains("elec") {
        return None;
    }
    let text = readers::decode_text(bytes);
    let t = readers::electrodes::parse_electrode_table(path, &text).ok()?;
    let xs: Vec<f64> = t.electrodes.iter().map(|e| e.x_m).collect();
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some(Ok(serde_json::json!({
        "method": "ert",
        "file": path.display().to_string(),
        "kind": "electrode table",
        "format_name": "electrode table (x z or x y z)",
        "format_guessed": true,
        "format_reason": "no data-format signature; the file name says 'elec' and every row is a position",
        "n_electrodes": t.electrodes.len(),
        "n_data": 0,
        "electrode_x_range_m": [lo, hi],
        "electrode_layout_words": geometry::classify(&t.electrodes).describe(),
        "notes": t.notes,
    })))
}
