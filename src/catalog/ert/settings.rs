//! The ERT settings of a project, read into one typed struct: the instrument format, the
//! inversion's settings, the time-lapse scheme, the coverage mask and the evaluation's
//! rubric. A panel's edits are layered over these, never instead of them.

#[allow(unused_imports)]
use super::*;

/// Default temporal regularisation α of the simultaneous scheme (peer-studio §1.12).
pub const DEFAULT_TEMPORAL_REGULARIZATION: f64 = 10.0;

/// Default coverage mask: cells below this fraction of the largest coverage are faded.
pub const DEFAULT_COVERAGE_THRESHOLD: f64 = 1e-3;

/// The instrument format (`instrument`, auto by default).
pub fn instrument(ctx: &RunContext) -> anyhow::Result<Instrument> {
    match ctx.config_str(keys::INSTRUMENT) {
        None => Ok(Instrument::Auto),
        Some(s) => {
            let key = s.trim().to_ascii_lowercase().replace(['-', ' '], "_");
            serde_json::from_value(serde_json::Value::from(key)).map_err(|_| {
                anyhow!(
                    "instrument = '{s}' is not a format this studio reads; use auto, unified, e4d, syscal_csv, syscal_bin, abem_lund, abem_ls, res2dinv, das1, sting, r2_protocol, ares_ii, lippmann, electra, ohm_pi, bgs_prime or plain_csv"
                )
            })
        }
    }
}

/// The inversion's settings (`inversion_params`), an unknown field named.
pub fn inversion_params(ctx: &RunContext) -> anyhow::Result<InversionParams> {
    ctx.params::<InversionParams>(keys::INVERSION_PARAMS)
        .map_err(|e| anyhow!("inversion_params: {}", e.message))
}

/// The evaluation's rubric.
pub fn evaluation_settings(ctx: &RunContext) -> EvaluationSettings {
    let d = EvaluationSettings::default();
    EvaluationSettings {
        quality_threshold: ctx.config_f64(keys::QUALITY_THRESHOLD, d.quality_threshold),
        max_attempts: ctx
            .config_f64(keys::MAX_ATTEMPTS, d.max_attempts as f64)
            .max(1.0) as usize,
        auto_adjust: ctx.config_bool(keys::AUTO_ADJUST, d.auto_adjust),
    }
}

/// The time-lapse scheme (`time_lapse_method`, simultaneous by default).
pub fn time_lapse_method(ctx: &RunContext) -> anyhow::Result<TimeLapseMethod> {
    TimeLapseMethod::parse(
        ctx.config_str(keys::TIME_LAPSE_METHOD)
            .unwrap_or("simultaneous"),
    )
    .map_err(|e| anyhow!("{e}"))
}

/// The temporal regularisation α of the simultaneous scheme.
pub fn temporal_regularization(ctx: &RunContext) -> f64 {
    ctx.config_f64(
        keys::TEMPORAL_REGULARIZATION,
        DEFAULT_TEMPORAL_REGULARIZATION,
    )
}

/// The later surveys to invert against the baseline (`time_lapse_epochs`: 0-based survey
/// indices), `None` for every one; anything but a list of whole numbers is an error.
pub fn time_lapse_epochs(ctx: &RunContext) -> anyhow::Result<Option<Vec<usize>>> {
    match ctx.config.get(keys::TIME_LAPSE_EPOCHS) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(v) => serde_json::from_value::<Vec<usize>>(v.clone())
            .map(Some)
            .map_err(|_| {
                anyhow!(
                    "time_lapse_epochs: expected a list of 0-based survey indices (e.g. [1, 2]), found {v}"
                )
            }),
    }
}

/// The coverage mask's threshold (fraction of the largest coverage).
pub fn coverage_threshold(ctx: &RunContext) -> f64 {
    ctx.config_f64(keys::COVERAGE_THRESHOLD, DEFAULT_COVERAGE_THRESHOLD)
}

/// Every ERT setting of a project, read once (the tools read each where they need it, through
/// the same functions, so a bad value fails the step that uses it).
#[derive(Debug, Clone, PartialEq)]
pub struct ErtSettings {
    /// The instrument format (`instrument`).
    pub instrument: Instrument,
    /// The inversion (`inversion_params`).
    pub inversion: InversionParams,
    /// The time-lapse scheme (`time_lapse_method`).
    pub time_lapse_method: TimeLapseMethod,
    /// Temporal regularisation α (`temporal_regularization`).
    pub temporal_regularization: f64,
    /// The later surveys inverted against the baseline (`time_lapse_epochs`; `None`: all).
    pub epochs: Option<Vec<usize>>,
    /// Coverage mask (`coverage_threshold`).
    pub coverage_threshold: f64,
    /// The evaluation's rubric (`quality_threshold`, `max_attempts`, `auto_adjust`).
    pub evaluation: EvaluationSettings,
}

impl ErtSettings {
    /// The project's (or the run's) ERT settings; an error names the bad key.
    pub fn read(ctx: &RunContext) -> anyhow::Result<Self> {
        Ok(ErtSettings {
            instrument: instrument(ctx)?,
            inversion: inversion_params(ctx)?,
            time_lapse_method: time_lapse_method(ctx)?,
            temporal_regularization: temporal_regularization(ctx),
            epochs: time_lapse_epochs(ctx)?,
            coverage_threshold: coverage_threshold(ctx),
            evaluation: evaluation_settings(ctx),
        })
    }

    /// These settings with a panel's edits on top.
    pub fn with_edits(mut self, edits: &ErtEdits) -> Self {
        if let Some(l) = edits.lambda {
            self.inversion.lambda = l;
        }
        if let Some(m) = edits.time_lapse_method {
            self.time_lapse_method = m;
        }
        self
    }
}

/// What a person changed in the ERT panel; `None` keeps the project's value.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ErtEdits {
    /// λ of the next panel inversion.
    pub lambda: Option<f64>,
    /// The time-lapse scheme of the next panel inversion.
    pub time_lapse_method: Option<TimeLapseMethod>,
}
