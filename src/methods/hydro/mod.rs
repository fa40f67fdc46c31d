//! Hydrological-model output beside the geophysics (issue 26): readers for MODFLOW,
//! MT3D and ParFlow files, each refusing what it cannot read with the file, the byte offset
//! or record, what was expected and what was found ([`HydroError`]).
//!
//! * [`heads`]: MODFLOW-2005 / NWT binary heads and drawdown (`.hds`, `.hed`, `.ddn`,
//!   single or double precision, told from the record headers) and MODFLOW 6 binary heads;
//! * [`ucn`]: MT3DMS / MT3D-USGS concentrations (`.ucn`; MODFLOW 6 GWT's too);
//! * [`grb`]: the MODFLOW 6 binary grid file (`.grb`, DIS, DISV, DISU);
//! * [`pfb`]: ParFlow binary files (`.pfb`, subgrids assembled and checked);
//! * [`geometry`]: a structured model grid in its coordinates (from a DIS `.grb` or a
//!   `.pfb`) and a geophysical line placed in it;
//! * [`sample`]: the model's water table (from pressure, saturation or heads) and water
//!   content θ = φ·S at points of a geophysical section;
//! * [`output`]: the common result [`ModelOutput`] — grid shape, time records (KSTP, KPER,
//!   times in the model's time unit), the quantity, values as `f64` and the active mask,
//!   with inactive / dry / unwritten cells counted by cause ([`MaskOptions`], [`MaskCounts`]).
//!
//! [`read_summary`] is the CLI's `read <file>` answer; [`read_model_output`] the one entry
//! for an array file of any of these formats.

pub mod error;
pub mod geometry;
pub mod grb;
pub mod heads;
pub mod layered;
pub mod output;
pub mod pfb;
pub mod sample;
pub mod ucn;

use std::io::Read as _;
use std::path::Path;

pub use error::HydroError;
pub use grb::{GrbFile, GridShape, GridType, read_grb};
pub use heads::read_heads;
pub use output::{
    HydroFormat, LayerOrder, MaskCounts, MaskOptions, MaskReason, ModelOutput, OutputRecord,
    Precision,
};
pub use pfb::{PfbFile, read_pfb};
pub use ucn::read_ucn;

use crate::methods::io::{ReadError, regular_file};

/// What a file is, by extension or, under another name, by content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HydroFileKind {
    /// A MODFLOW binary array file (heads, drawdown).
    Heads,
    /// An MT3D concentration file.
    Ucn,
    /// A MODFLOW 6 binary grid file.
    Grb,
    /// A ParFlow binary file.
    Pfb,
}

/// Bytes looked at to recognise a file by content.
const SNIFF_BYTES: u64 = 256;

/// The kind of `path`: `.hds` / `.hed` / `.ddn` / `.bhd`, `.ucn`, `.grb`, `.pfb` by
/// extension; any other name by content, strictly (a `GRID DIS…` first line; a ParFlow
/// header whose sizes make up the file exactly; a MODFLOW or MT3D record header whose record
/// length divides the file). `None` when it is none of these.
pub fn file_kind(path: &Path) -> Option<HydroFileKind> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    match ext.as_str() {
        "hds" | "hed" | "ddn" | "bhd" => return Some(HydroFileKind::Heads),
        "ucn" => return Some(HydroFileKind::Ucn),
        "grb" => return Some(HydroFileKind::Grb),
        "pfb" => return Some(HydroFileKind::Pfb),
        _ => {}
    }
    let len = regular_file(path).ok()?.len();
    let mut head = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(SNIFF_BYTES)
        .read_to_end(&mut head)
        .ok()?;
    if head.starts_with(b"GRID DIS") {
        return Some(HydroFileKind::Grb);
    }
    if pfb::sniff(&head, len) {
        return Some(HydroFileKind::Pfb);
    }
    match layered::sniff(&head, len)?.layout {
        layered::RecordLayout::Modflow => Some(HydroFileKind::Heads),
        layered::RecordLayout::Mt3d => Some(HydroFileKind::Ucn),
    }
}

/// Read any of the array files (heads, drawdown, concentration, ParFlow) as a
/// [`ModelOutput`], masking as `opts` says. A `.grb` is a grid, not an output: refused here
/// with a pointer to [`read_grb`].
pub fn read_model_output(path: &Path, opts: &MaskOptions) -> Result<ModelOutput, HydroError> {
    match file_kind(path) {
        Some(HydroFileKind::Heads) => read_heads(path, opts),
        Some(HydroFileKind::Ucn) => read_ucn(path, opts),
        Some(HydroFileKind::Pfb) => read_pfb(path).map(|p| p.into_output(opts)),
        Some(HydroFileKind::Grb) => Err(ReadError::format(
            path,
            "a MODFLOW 6 binary grid file describes the grid, it holds no output values (read it with read_grb)",
        )
        .into()),
        None => {
            regular_file(path)?;
            Err(ReadError::format(
                path,
                "not a MODFLOW heads/drawdown (.hds, .hed, .ddn), MT3D (.ucn), MODFLOW 6 grid (.grb) or ParFlow (.pfb) file, by extension or content",
            )
            .into())
        }
    }
}

/// The CLI's `read <file>`: `None` when the file is none of these formats, otherwise its
/// JSON summary (format, precision, grid, records and times, quantity, active range, masked
/// counts) or the refusal.
pub fn read_summary(path: &Path) -> Option<Result<serde_json::Value, ReadError>> {
    let kind = file_kind(path)?;
    Some(match kind {
        HydroFileKind::Grb => read_grb(path).map(|g| g.summary()).map_err(Into::into),
        _ => read_model_output(path, &MaskOptions::default())
            .map(|o| o.summary())
            .map_err(Into::into),
    })
}
