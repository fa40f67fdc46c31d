//! The GPR settings of a project: `gpr_params` and the velocity somebody gave
//! (`gpr_velocity_m_per_ns` or `gpr_permittivity`). No recovery may choose a velocity: the
//! tools do not declare those two keys adjustable. A panel's edits are layered over these.

#[allow(unused_imports)]
use super::*;

/// The input role of the radar line.
pub const DATA_ROLE: &str = keys::GPR_FILE;

/// The optional input role of a topography table along the line (distance, elevation).
pub const TOPOGRAPHY_ROLE: &str = keys::GPR_TOPOGRAPHY_FILE;

/// The processing settings (`ProcessingParams`).
pub const PARAMS_KEY: &str = keys::GPR_PARAMS;

/// A radar velocity the user gives, m/ns.
pub const VELOCITY_KEY: &str = keys::GPR_VELOCITY;

/// A relative permittivity the user gives (v = c/√εr).
pub const PERMITTIVITY_KEY: &str = keys::GPR_PERMITTIVITY;

/// The velocity the user gave in the project settings.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct UserVelocity {
    /// `gpr_velocity_m_per_ns`.
    pub velocity_m_per_ns: Option<f64>,
    /// `gpr_permittivity`.
    pub relative_permittivity: Option<f64>,
}

impl UserVelocity {
    /// Read `gpr_velocity_m_per_ns` and `gpr_permittivity`; a key that is present but not a
    /// number is an error that names it and what was found.
    pub fn from_config(config: &Map<String, Value>) -> Result<UserVelocity, String> {
        let number = |key: &str, unit: &str| -> Result<Option<f64>, String> {
            match config.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => v.as_f64().map(Some).ok_or_else(|| {
                    format!("the setting {key} must be a number ({unit}); found {v}")
                }),
            }
        };
        Ok(UserVelocity {
            velocity_m_per_ns: number(VELOCITY_KEY, "m/ns")?,
            relative_permittivity: number(PERMITTIVITY_KEY, "a relative permittivity")?,
        })
    }
}

/// The processing settings of a run or a project (`gpr_params`), an unknown key named.
pub fn params(ctx: &RunContext) -> anyhow::Result<ProcessingParams> {
    ctx.params(PARAMS_KEY).map_err(|e| anyhow!("{e}"))
}
