//! The seismic settings of a project, read into one typed struct: picking, the tomography, the
//! evaluation's retries and the interface thresholds. A panel's edits are layered over
//! these, never instead of them.

#[allow(unused_imports)]
use super::*;
use serde_json::Value;

/// `seismic_inversion_params`: the method's settings plus the catalog's start-bound switch.
pub type SeismicInversionParams = InversionParams;

/// The thresholds asked for: `velocity_thresholds` (a list), else `velocity_threshold`,
/// else 1200 m/s (said so in the second value).
pub fn thresholds(ctx: &RunContext) -> anyhow::Result<(Vec<f64>, bool)> {
    if let Some(v) = ctx
        .config
        .get(keys::VELOCITY_THRESHOLDS)
        .filter(|v| !v.is_null())
    {
        let list: Vec<f64> = serde_json::from_value(v.clone())
            .map_err(|e| anyhow!("velocity_thresholds must be a list of velocities in m/s: {e}"))?;
        if list.is_empty() || list.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
            bail!("velocity_thresholds must be positive velocities in m/s, found {list:?}");
        }
        return Ok((list, false));
    }
    if let Some(v) = ctx
        .config
        .get(keys::VELOCITY_THRESHOLD)
        .filter(|v| !v.is_null())
    {
        let x = v
            .as_f64()
            .filter(|x| x.is_finite() && *x > 0.0)
            .ok_or_else(|| anyhow!("velocity_threshold must be a velocity in m/s, found {v}"))?;
        return Ok((vec![x], false));
    }
    Ok((vec![DEFAULT_THRESHOLD_M_PER_S], true))
}

/// Where a request may have put the tomography's settings besides its own key: the request
/// parser's fusion stage (`seismic_params`).
pub const SEISMIC_PARAMS: &str = "seismic_params";

/// Other spellings of the tomography's settings (pyGIMLi's and the request parser's), each
/// read as ours.
const ALIASES: &[(&str, &str)] = &[("lam", "lambda"), ("zWeight", "z_weight")];

/// Top-level settings a seismic-only request states for the tomography.
const TOP_LEVEL: &[&str] = &["lam", "lambda", "z_weight", "zWeight"];

/// The tomography's settings as a project states them, under any of their names (seed 001,
/// `seismic_inversion_params`): `seismic_params`, then — for a project with no other
/// inverting method's data, where they can mean only the tomography — top-level
/// `lam`/`lambda`/`z_weight`, then
/// `seismic_inversion_params`, which wins setting by setting. Spellings are read as ours
/// (`lam` → `lambda`, `zWeight` → `z_weight`).
pub fn inversion_settings(ctx: &RunContext) -> serde_json::Map<String, Value> {
    let normal = |k: &str| {
        ALIASES
            .iter()
            .find(|(a, _)| *a == k)
            .map_or(k, |(_, ours)| *ours)
            .to_string()
    };
    let mut merged = serde_json::Map::new();
    let mut take = |m: &serde_json::Map<String, Value>, only: Option<&[&str]>| {
        for (k, v) in m {
            if only.is_none_or(|o| o.contains(&k.as_str())) && !v.is_null() {
                merged.insert(normal(k), v.clone());
            }
        }
    };
    if let Some(Value::Object(m)) = ctx.config.get(SEISMIC_PARAMS) {
        take(m, None);
    }
    // Top-level λ / z-weight mean the tomography only when no other inverting method's data
    // are in the project (ERT, TDEM, MT, gravity/magnetics read their own keys).
    let others = super::super::kit::methods::METHODS
        .iter()
        .filter(|m| !matches!(m.id, "seismic" | "gpr"))
        .any(|m| ctx.has_input(m.main_role))
        || ctx.has_input(keys::ERT_FILE);
    if !others {
        take(&ctx.config, Some(TOP_LEVEL));
    }
    if let Some(Value::Object(m)) = ctx.config.get(keys::SEISMIC_INVERSION_PARAMS) {
        take(m, None);
    }
    merged
}

/// The tomography's settings ([`inversion_settings`]), an unknown field named.
pub fn inversion_params(ctx: &RunContext) -> anyhow::Result<SeismicInversionParams> {
    serde_json::from_value(Value::Object(inversion_settings(ctx))).map_err(|e| {
        crate::runtime::context::ConfigError {
            key: keys::SEISMIC_INVERSION_PARAMS.to_string(),
            message: e.to_string(),
        }
        .into()
    })
}

/// The first-break picker's settings (`first_break_params`).
pub fn pick_params(ctx: &RunContext) -> anyhow::Result<PickParams> {
    Ok(ctx.params(keys::FIRST_BREAK_PARAMS)?)
}

/// How an evaluation retries: inversions in all (`max_attempts`) and whether it adjusts λ
/// (`auto_adjust`).
pub fn retries(ctx: &RunContext) -> (usize, bool) {
    (
        ctx.config_f64(keys::MAX_ATTEMPTS, MAX_ATTEMPTS as f64)
            .max(1.0) as usize,
        ctx.config_bool(keys::AUTO_ADJUST, true),
    )
}

/// Every seismic setting of a project, read once (the tools read each where they need it,
/// through the same functions, so a bad value fails the step that uses it).
#[derive(Debug, Clone, PartialEq)]
pub struct SeismicSettings {
    /// The picker (`first_break_params`).
    pub picks: PickParams,
    /// The tomography (`seismic_inversion_params`).
    pub inversion: SeismicInversionParams,
    /// Inversions an evaluation may make in all (`max_attempts`).
    pub max_attempts: usize,
    /// Whether an evaluation retries with another λ (`auto_adjust`).
    pub auto_adjust: bool,
}

impl SeismicSettings {
    /// The project's (or the run's) seismic settings; an error names the bad key.
    pub fn read(ctx: &RunContext) -> anyhow::Result<Self> {
        let (max_attempts, auto_adjust) = retries(ctx);
        Ok(SeismicSettings {
            picks: pick_params(ctx)?,
            inversion: inversion_params(ctx)?,
            max_attempts,
            auto_adjust,
        })
    }

    /// These settings with a panel's edits on top.
    pub fn with_edits(mut self, e: &SeismicEdits) -> Self {
        let p = &mut self.inversion;
        if let Some(v) = e.lambda {
            p.lambda = v;
        }
        if let Some(v) = e.z_weight {
            p.z_weight = v;
        }
        if let Some(v) = e.max_iterations {
            p.max_iterations = v;
        }
        if let Some(v) = e.relative_error_percent {
            p.relative_error = v / 100.0;
        }
        self
    }
}

/// What a person changed in the seismic panel's tomography settings; `None` keeps the
/// project's value.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SeismicEdits {
    /// Regularisation strength λ.
    pub lambda: Option<f64>,
    /// Vertical smoothness weight.
    pub z_weight: Option<f64>,
    /// Iteration cap.
    pub max_iterations: Option<usize>,
    /// Relative error assumed when the data carry none, %.
    pub relative_error_percent: Option<f64>,
}
