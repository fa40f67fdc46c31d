//! The only way to load, invert, evaluate and map TDEM data: the catalog's tools and the EM
//! panel both call these functions (over [`crate::methods::tdem::pipeline`]), with the same
//! settings (the panel's edits layered over the project's `tdem_params`).

#[allow(unused_imports)]
use super::*;

/// Judge the models by the shared rubric, with λ retries.
pub use crate::methods::tdem::pipeline::evaluate_inversion as evaluate;
/// Invert the soundings (smooth models, one by one or as a laterally constrained line).
pub use crate::methods::tdem::pipeline::invert_dataset as invert;
/// Plan-view maps by ordinary kriging.
pub use crate::methods::tdem::pipeline::plan_maps as maps;
/// Water content per layer.
pub use crate::methods::tdem::pipeline::water_content_by_layer as water_content;

/// The TDEM files of a run or a project: the sounding file and its geometry table.
#[derive(Debug, Clone, PartialEq)]
pub struct TdemInputs {
    /// `tdem_file`.
    pub data: PathBuf,
    /// `tdem_geometry_file`, when given.
    pub geometry: Option<PathBuf>,
}

impl TdemInputs {
    /// The TDEM inputs of `ctx`, or an error naming the role to give.
    pub fn of(ctx: &RunContext) -> anyhow::Result<Self> {
        let data = ctx
            .input_path(ROLE_DATA)
            .ok_or_else(|| anyhow!("the project names no TDEM file (input role {ROLE_DATA})"))?;
        Ok(TdemInputs {
            data,
            geometry: ctx.input_path(ROLE_GEOMETRY),
        })
    }
}

/// Read the soundings with the system and reading options of `params`.
pub fn load(inputs: &TdemInputs, params: &TdemParams) -> anyhow::Result<TdemDataset> {
    Ok(load_dataset(
        &inputs.data,
        inputs.geometry.as_deref(),
        params,
    )?)
}
