//! The interpretation settings (`config.answers_params`), defaults from the methods'
//! interpretation modules; an unknown key is an error naming the valid ones.

use serde::{Deserialize, Serialize};

use crate::catalog::kit::keys;
use crate::methods::seismic::interpret::{BEDROCK_THRESHOLD_M_PER_S, WATER_TABLE_RANGE_M_PER_S};
use crate::runtime::RunContext;

/// `answers_params`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AnswerSettings {
    /// The P-velocity range of saturated sediment, m/s (water table contour at its middle).
    pub water_table_velocity_m_per_s: (f64, f64),
    /// The bedrock threshold velocity, m/s.
    pub bedrock_velocity_m_per_s: f64,
    /// The smallest change against the baseline that counts as changed, %.
    pub change_threshold_percent: f64,
    /// The shallowest depth a GPR reflector is looked for (below the direct wave), m.
    pub gpr_min_depth_m: f64,
}

impl Default for AnswerSettings {
    fn default() -> Self {
        AnswerSettings {
            water_table_velocity_m_per_s: WATER_TABLE_RANGE_M_PER_S,
            bedrock_velocity_m_per_s: BEDROCK_THRESHOLD_M_PER_S,
            change_threshold_percent: 10.0,
            gpr_min_depth_m: 0.5,
        }
    }
}

impl AnswerSettings {
    /// The project's settings.
    pub fn read(ctx: &RunContext) -> anyhow::Result<Self> {
        Ok(ctx.params::<AnswerSettings>(keys::ANSWERS_PARAMS)?)
    }
}
