//! MT3DMS and MT3D-USGS concentration files (`.ucn`, `MT3D001.UCN`, `MT3D001S.UCN`).
//!
//! Format (Zheng, C., and Wang, P.P., 1999, *MT3DMS: A Modular Three-Dimensional
//! Multispecies Transport Model*, documentation and user's guide, U.S. Army Corps of
//! Engineers SERDP-99-1, chapter 6, "Unformatted concentration file"; unchanged in Bedekar,
//! V., Morway, E.D., Langevin, C.D., and Tonkin, M., 2016, *MT3D-USGS version 1*, USGS
//! Techniques and Methods 6-A53): for every layer saved at a transport step, one record
//!
//! ```text
//! NTRANS, KSTP, KPER  (integer)  transport step, flow time step, stress period
//! TIME2               (real)     the simulation time, in the model's time unit
//! TEXT                (16 chars) "CONCENTRATION   "
//! NCOL, NROW, ILAY    (integer)
//! ((C(J,I,ILAY), J = 1, NCOL), I = 1, NROW)     (real)
//! ```
//!
//! written as a binary stream, normally in single precision; a double-precision build is
//! detected from the headers as for heads ([`super::layered`]). Inactive cells hold CINACT
//! (often 1e30 or −999.99), dry cells CDRY: both masked by default or as the caller says.
//! A MODFLOW 6 GWT `.ucn` is written in MODFLOW's heads layout and is read as such.

use std::path::Path;

use super::error::HydroError;
use super::layered::{MT3D_FIRST, read_layered};
use super::output::{MaskOptions, ModelOutput};
use crate::methods::io::read_bytes;

/// Read an MT3D (or MODFLOW 6 GWT) concentration file.
pub fn read_ucn(path: &Path, opts: &MaskOptions) -> Result<ModelOutput, HydroError> {
    let bytes = read_bytes(path)?;
    parse_ucn(path, &bytes, opts)
}

/// Parse the bytes of a concentration file (`path` only names it in messages).
pub fn parse_ucn(path: &Path, bytes: &[u8], opts: &MaskOptions) -> Result<ModelOutput, HydroError> {
    read_layered(path, bytes, &MT3D_FIRST, opts)
}
