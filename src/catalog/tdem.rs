//! The tdem tools. (Filled in by the tdem work: loaders, inversions, evaluations, figures.)

use crate::methods::io::ReadError;
use crate::runtime::Registry;

/// Register the tdem tools, in dependency order.
pub fn register(_reg: &mut Registry) {}

/// A JSON summary of a tdem data file, or `None` when it is not one.
pub fn read_summary(path: &std::path::Path) -> Option<Result<serde_json::Value, ReadError>> {
    crate::methods::tdem::read_summary(path)
}
