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
pub mod evaluation;
pub mod fem;
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
        return None;
    }
    match readers::parse_survey(path, &bytes, Instrument::Auto) {
        Ok(s) => Some(Ok(s.summary())),
        // A unified-layout file whose data are travel times ('s g t') is not ERT.
        Err(ReadError::Format { message, .. }) if message.contains("travel-time") => None,
        Err(e) => Some(Err(e)),
    }
}
