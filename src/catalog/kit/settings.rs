//! Settings every method reads the same way.

use super::keys;
use crate::runtime::RunContext;

/// Monte Carlo draws of a water-content conversion (`n_realizations`, at least 1).
pub fn n_realizations(ctx: &RunContext) -> usize {
    ctx.config_f64(
        keys::N_REALIZATIONS,
        crate::methods::petro::DEFAULT_REALIZATIONS as f64,
    )
    .max(1.0) as usize
}
