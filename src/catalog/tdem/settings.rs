//! The TDEM settings of a project: the system and inversion (`tdem_params`), the evaluation's
//! rubric and the petrophysical prior. A panel's edits are layered over these, never instead
//! of them.

#[allow(unused_imports)]
use super::*;

/// The input role of the sounding file.
pub const ROLE_DATA: &str = keys::TDEM_FILE;

/// The input role of the geometry table.
pub const ROLE_GEOMETRY: &str = keys::TDEM_GEOMETRY_FILE;

/// The configuration key of the settings.
pub const PARAMS_KEY: &str = keys::TDEM_PARAMS;

/// The settings of the run (`tdem_params`), or an error naming the bad key.
pub fn params(ctx: &RunContext) -> anyhow::Result<TdemParams> {
    ctx.params::<TdemParams>(PARAMS_KEY)
        .map_err(|e| anyhow!("{e}"))
}

/// The user's petrophysical parameters from the `petrophysical_params` setting, read by the
/// one parser every method uses ([`crate::methods::petro::PetroConfig::from_json`]), with
/// notes on what was read and implied.
pub fn user_petro_params(
    value: Option<&serde_json::Value>,
) -> anyhow::Result<(UserPetroParams, Vec<String>)> {
    let cfg = crate::methods::petro::PetroConfig::from_json(value).map_err(|e| anyhow!(e))?;
    let (p, mut notes) = cfg.user_params();
    if let Some(src) = &cfg.source {
        notes.insert(
            0,
            format!("petrophysical parameters' source as given: {src}"),
        );
    }
    Ok((p, notes))
}

/// The prior for the TDEM layers: the user's `petrophysical_params` over the generic
/// unconsolidated-sediment defaults (peer-studio §3.3), with notes on what was read.
pub fn water_prior(ctx: &RunContext) -> anyhow::Result<(PetroPrior, Vec<String>)> {
    let (given, notes) = user_petro_params(ctx.config.get(keys::PETROPHYSICAL_PARAMS))?;
    Ok((
        PetroPrior::from_user(
            "TDEM layers",
            &given,
            &PetroPrior::default_regolith("TDEM layers"),
        ),
        notes,
    ))
}

/// The evaluation's rubric: pass mark (`quality_threshold`), inversions in all
/// (`max_attempts`, 1–10) and whether to retry (`auto_adjust`).
pub fn evaluation_options(ctx: &RunContext) -> EvaluationOptions {
    let d = EvaluationOptions::default();
    EvaluationOptions {
        threshold: ctx.config_f64(keys::QUALITY_THRESHOLD, d.threshold),
        max_attempts: ctx
            .config_f64(keys::MAX_ATTEMPTS, d.max_attempts as f64)
            .clamp(1.0, 10.0) as usize,
        auto_adjust: ctx.config_bool(keys::AUTO_ADJUST, true),
    }
}

/// What a person changed in the EM panel; `None` keeps the project's `tdem_params`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TdemEdits {
    /// Layers of the smooth model including the half-space.
    pub n_layers: Option<usize>,
    /// Relative error floor, percent.
    pub error_floor_percent: Option<f64>,
}

impl TdemEdits {
    /// `params` with these edits on top.
    pub fn apply(&self, mut params: TdemParams) -> TdemParams {
        if let Some(n) = self.n_layers {
            params.n_layers = Some(n);
        }
        if let Some(e) = self.error_floor_percent {
            params.error_floor = Some(e / 100.0);
        }
        params
    }
}
