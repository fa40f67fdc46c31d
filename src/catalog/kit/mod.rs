//! What the six method folders share: the typed product wrapper and the keys (artifacts, input
//! roles, settings), the fit summary every inversion reports its key numbers through, where a
//! step writes its files, one number formatter, one Markdown escape, one palette, and the
//! `METHODS` table the report, the panels, the catalog and the studio take their lists from.

pub mod confirm;
pub mod fit;
pub mod format;
pub mod keys;
pub mod markdown;
pub mod methods;
pub mod palette;
pub mod paths;
pub mod product;
pub mod settings;

pub use confirm::confirm_guessed_format;
pub use fit::FitSummary;
pub use methods::{METHODS, MethodInfo};
pub use paths::{
    draw_figure, figure_path, planned_path, product_path, run_subdir, write_csv, write_product,
};
pub use product::{Held, InterfaceLine, held, require};

use crate::runtime::tool::RegistryError;
use crate::runtime::{Registry, Tool};

/// Register `tools` in order. A tool the registry refuses (a second tool of a name) is left
/// out and the first refusal returned: a bug in the catalog, which the catalog's test
/// `every_tool_registers_once` catches.
pub fn register_all(
    reg: &mut Registry,
    tools: impl IntoIterator<Item = Tool>,
) -> Result<(), RegistryError> {
    let mut first = Ok(());
    for t in tools {
        if let Err(e) = reg.register(t)
            && first.is_ok()
        {
            first = Err(e);
        }
    }
    first
}
