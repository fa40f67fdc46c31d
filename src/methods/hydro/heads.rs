//! MODFLOW binary heads and drawdown: MODFLOW-2005 and MODFLOW-NWT `.hds` / `.hed` / `.ddn`,
//! and MODFLOW 6 binary heads (and GWT concentrations, which MODFLOW 6 writes the same way).
//!
//! Format (Harbaugh, A.W., 2005, *MODFLOW-2005, the U.S. Geological Survey modular
//! ground-water model — the Ground-Water Flow Process*, USGS Techniques and Methods 6-A16,
//! chapter 8, "Output Control", and the ULASAV utility): for every layer saved at a time
//! step, one record
//!
//! ```text
//! KSTP, KPER        (integer)  time step, stress period
//! PERTIM, TOTIM     (real)     time in the stress period, time in the simulation
//! TEXT              (16 chars) "            HEAD", "        DRAWDOWN"
//! NCOL, NROW, ILAY  (integer)
//! ((H(J,I,ILAY), J = 1, NCOL), I = 1, NROW)   (real)
//! ```
//!
//! "real" is 4 bytes in the single-precision build of MODFLOW-2005 / NWT and 8 in the
//! double-precision build; MODFLOW 6 always writes 8 (Langevin et al., *Documentation for
//! the MODFLOW 6 Groundwater Flow Model*, USGS TM 6-A55, 2017, and the "mf6io" input/output
//! guide, appendix "Binary Output Files": the same record, the name left-justified, NROW = 1
//! and NCOL = the cells of a layer for DISV, one record of all nodes for DISU). The file
//! holds no word that says which, so the precision is found from the headers
//! ([`super::layered`]). Times are in the model's time unit (ITMUNI / TIME_UNITS).
//!
//! Inactive cells hold HNOFLO (1e30 by default; MODFLOW 6: 1e30), dry cells HDRY
//! (MODFLOW 6: −1e30); both are masked and counted ([`super::output::MaskOptions`]).

use std::path::Path;

use super::error::HydroError;
use super::layered::{MODFLOW_FIRST, read_layered};
use super::output::{MaskOptions, ModelOutput};
use crate::methods::io::read_bytes;

/// Read a MODFLOW heads or drawdown file.
pub fn read_heads(path: &Path, opts: &MaskOptions) -> Result<ModelOutput, HydroError> {
    let bytes = read_bytes(path)?;
    parse_heads(path, &bytes, opts)
}

/// Parse the bytes of a MODFLOW heads or drawdown file (`path` only names it in messages).
/// A file in MT3D's layout is read too and says so in its `format`.
pub fn parse_heads(
    path: &Path,
    bytes: &[u8],
    opts: &MaskOptions,
) -> Result<ModelOutput, HydroError> {
    read_layered(path, bytes, &MODFLOW_FIRST, opts)
}
