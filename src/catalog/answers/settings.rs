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
    /// The deepest a TDEM or MT layered model is searched for the water table, m: a
    /// decrease deeper than this is read as a conductor, not the water table
    /// (`methods::sounding_depth`).
    pub sounding_water_table_max_depth_m: f64,
    /// The relative error σv/v of a GPR velocity the project gives (`gpr_velocity_m_per_ns`
    /// or `gpr_permittivity`) without its own error: 10 % by default, the usual accuracy of
    /// velocities from CMP gathers and diffraction-hyperbola fits (Jol 2009, *Ground
    /// Penetrating Radar Theory and Applications*, ch. 1; Huisman et al. 2003, Vadose Zone J.
    /// 2:476).
    pub gpr_velocity_relative_sigma: f64,
    /// σv/v of a velocity from the εr the operator typed into the instrument: 25 % by
    /// default (εr of wet and dry sediments spans 4–30, Davis & Annan 1989, Geophys.
    /// Prospect. 37:531; the header value is a guess, not a measurement).
    pub gpr_header_velocity_relative_sigma: f64,
}

impl Default for AnswerSettings {
    fn default() -> Self {
        AnswerSettings {
            water_table_velocity_m_per_s: WATER_TABLE_RANGE_M_PER_S,
            bedrock_velocity_m_per_s: BEDROCK_THRESHOLD_M_PER_S,
            change_threshold_percent: 10.0,
            gpr_min_depth_m: 0.5,
            sounding_water_table_max_depth_m: 100.0,
            gpr_velocity_relative_sigma: 0.10,
            gpr_header_velocity_relative_sigma: 0.25,
        }
    }
}

impl AnswerSettings {
    /// The project's settings.
    pub fn read(ctx: &RunContext) -> anyhow::Result<Self> {
        Ok(ctx.params::<AnswerSettings>(keys::ANSWERS_PARAMS)?)
    }
}
