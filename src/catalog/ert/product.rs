//! The ERT products: a model (one survey or a time-lapse series), its water content, and the
//! model re-inverted with the seismic structure.

#[allow(unused_imports)]
use super::*;

/// An ERT model: one survey's inversion or a time-lapse series.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", content = "result", rename_all = "snake_case")]
pub enum ErtModel {
    /// One survey.
    Single(Box<InversionResult>),
    /// Two or more surveys.
    TimeLapse(Box<TimeLapseResult>),
}

/// One time step of a model as the figures and exports need it.
pub struct StepView<'a> {
    /// Label (file name or date).
    pub label: String,
    /// Resistivity per parameter cell, Ω·m.
    pub rho_ohm_m: &'a [f64],
    /// Change against the baseline, percent (time-lapse steps after the first).
    pub change_percent: Option<&'a [f64]>,
    /// Observed apparent resistivity, Ω·m.
    pub rhoa_obs_ohm_m: &'a [f64],
    /// Predicted apparent resistivity, Ω·m.
    pub rhoa_pred_ohm_m: &'a [f64],
}

impl ErtModel {
    /// The shared geometry.
    pub fn section(&self) -> &ModelSection {
        match self {
            ErtModel::Single(r) => &r.section,
            ErtModel::TimeLapse(r) => &r.section,
        }
    }

    /// Coverage (cumulative sensitivity) per parameter cell.
    pub fn coverage(&self) -> &[f64] {
        match self {
            ErtModel::Single(r) => &r.coverage,
            ErtModel::TimeLapse(r) => &r.coverage,
        }
    }

    /// Every time step (one for a single survey).
    pub fn steps(&self) -> Vec<StepView<'_>> {
        match self {
            ErtModel::Single(r) => vec![StepView {
                label: "model".into(),
                rho_ohm_m: &r.rho_ohm_m,
                change_percent: None,
                rhoa_obs_ohm_m: &r.rhoa_obs_ohm_m,
                rhoa_pred_ohm_m: &r.rhoa_pred_ohm_m,
            }],
            ErtModel::TimeLapse(r) => r
                .steps
                .iter()
                .enumerate()
                .map(|(i, s)| StepView {
                    label: s.time.clone().unwrap_or_else(|| s.label.clone()),
                    rho_ohm_m: &s.rho_ohm_m,
                    change_percent: (i > 0).then_some(s.change_percent.as_slice()),
                    rhoa_obs_ohm_m: &s.rhoa_obs_ohm_m,
                    rhoa_pred_ohm_m: &s.rhoa_pred_ohm_m,
                })
                .collect(),
        }
    }

    /// Final χ².
    pub fn chi2(&self) -> f64 {
        match self {
            ErtModel::Single(r) => r.chi2,
            ErtModel::TimeLapse(r) => r.chi2,
        }
    }

    /// The iterations (of the joint run or the baseline).
    pub fn history(&self) -> &[IterationRecord] {
        match self {
            ErtModel::Single(r) => &r.history,
            ErtModel::TimeLapse(r) => &r.history,
        }
    }

    /// λ used.
    pub fn lambda(&self) -> f64 {
        match self {
            ErtModel::Single(r) => r.lambda,
            ErtModel::TimeLapse(r) => r.lambda,
        }
    }

    /// The settings used.
    pub fn params(&self) -> &InversionParams {
        match self {
            ErtModel::Single(r) => &r.params,
            ErtModel::TimeLapse(r) => &r.params,
        }
    }

    /// Iterations.
    pub fn iterations(&self) -> usize {
        match self {
            ErtModel::Single(r) => r.iterations,
            ErtModel::TimeLapse(r) => r.iterations,
        }
    }

    /// Why the iterations ended.
    pub fn stop_reason(&self) -> StopReason {
        match self {
            ErtModel::Single(r) => r.stop_reason,
            ErtModel::TimeLapse(r) => r.stop_reason,
        }
    }

    /// Relative rms misfit of the predicted apparent resistivities, percent (the mean over
    /// time steps for a series).
    pub fn rrms_percent(&self) -> f64 {
        match self {
            ErtModel::Single(r) => r.rrms_percent,
            ErtModel::TimeLapse(r) => {
                r.steps.iter().map(|s| s.rrms_percent).sum::<f64>() / r.steps.len().max(1) as f64
            }
        }
    }

    /// Data per survey.
    pub fn n_data(&self) -> usize {
        match self {
            ErtModel::Single(r) => r.n_data,
            ErtModel::TimeLapse(r) => r.n_data,
        }
    }

    /// Notes of the inversion.
    pub fn notes(&self) -> &[String] {
        match self {
            ErtModel::Single(r) => &r.notes,
            ErtModel::TimeLapse(r) => &r.notes,
        }
    }
}

impl Assessable for ErtModel {
    fn assess(&self, threshold: f64) -> Quality {
        match self {
            ErtModel::Single(r) => r.assess(threshold),
            ErtModel::TimeLapse(r) => r.assess(threshold),
        }
    }

    fn chi2(&self) -> f64 {
        ErtModel::chi2(self)
    }
}

/// A difference, ratio or independent time-lapse as the evaluation's λ retries judge it: by
/// its baseline alone. Every later survey is inverted against the baseline with the same λ,
/// so choosing λ on the baseline keeps each epoch's model independent of which other epochs
/// are inverted with it — what lets a split run (issue 25) deal the epochs out to parts and
/// still give the numbers of a one-machine run. The quality reported is of every epoch
/// ([`BaselineJudged::whole`]).
#[derive(Debug, Clone)]
pub struct BaselineJudged(pub ErtModel);

impl BaselineJudged {
    /// Whether `model` is judged this way: a time-lapse with a baseline of its own
    /// (difference, ratio, independent; not the simultaneous scheme).
    pub fn applies(model: &ErtModel) -> bool {
        matches!(model, ErtModel::TimeLapse(r) if r.method != TimeLapseMethod::Simultaneous && r.baseline.is_some())
    }

    fn baseline(&self) -> Option<&InversionResult> {
        match &self.0 {
            ErtModel::TimeLapse(r) => r.baseline.as_deref(),
            ErtModel::Single(r) => Some(r),
        }
    }

    /// The evaluation of the whole model: the kept model's quality over every epoch, the
    /// attempts as the baseline scored them, and why λ was chosen so.
    pub fn whole(ev: Evaluation<BaselineJudged>) -> Evaluation<ErtModel> {
        let kept = ev.kept.0;
        let quality = kept.assess(ev.settings.quality_threshold);
        Evaluation {
            why_kept: format!(
                "{} λ is chosen on the baseline survey (its χ² and score are the attempts'), which every later survey is inverted against; the quality shown is of every survey.",
                ev.why_kept
            ),
            kept,
            quality,
            attempts: ev.attempts,
            replaced: ev.replaced,
            settings: ev.settings,
        }
    }
}

impl Assessable for BaselineJudged {
    fn assess(&self, threshold: f64) -> Quality {
        self.baseline()
            .map_or_else(|| self.0.assess(threshold), |b| b.assess(threshold))
    }

    fn chi2(&self) -> f64 {
        self.baseline().map_or_else(|| self.0.chi2(), |b| b.chi2)
    }
}

/// The water content of each time step of the evaluated model.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ErtWaterContent {
    /// Time-step labels.
    pub labels: Vec<String>,
    /// The conversion of each step.
    pub steps: Vec<WaterContent>,
    /// The geometry.
    pub section: ModelSection,
    /// Where the petrophysical parameters came from, in words.
    pub prior_statement: String,
}

/// The structure-constrained re-inversion.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ErtStructure {
    /// The model with the interface honoured.
    pub model: InversionResult,
    /// The interfaces used (threshold velocity, m/s).
    pub velocities_m_per_s: Vec<f64>,
    /// Whether the constraint entered the inversion (the interface crossed the section).
    pub constraint_used: bool,
}
