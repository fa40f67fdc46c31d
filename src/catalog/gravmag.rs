//! The gravmag tools. (Filled in by the gravmag work: loaders, inversions, evaluations, figures.)

use crate::methods::io::ReadError;
use crate::runtime::Registry;

/// Register the gravmag tools, in dependency order.
pub fn register(_reg: &mut Registry) {}

/// A JSON summary of a gravmag data file, or `None` when it is not one.
pub fn read_summary(path: &std::path::Path) -> Option<Result<serde_json::Value, ReadError>> {
    crate::methods::gravmag::read_summary(path)
}
