//! The TDEM work as a catalog tool or a studio button does it, in one place so that both
//! behave identically: load a file with its geometry and the system from the settings
//! ([`load_dataset`]), invert it ([`invert_dataset`]), judge it by the shared rubric with λ
//! retries when λ is fixed ([`evaluate_inversion`]), and map it ([`plan_maps`]).

use super::analytic::diffusion_depth_m;
use super::data::{MaskReason, Position, ResponseUnit, Sounding};
use super::diagnosis::{DiagnosisError, FitDiagnosis, diagnose_fits};
use super::forward::{LayeredEarth, LoopShape, Receiver, TemSystem, Waveform};
use super::invert::{InversionError, LambdaMode, Progress};
use super::kriging::{KrigingError, PlanMap, plan_view_maps};
use super::params::{ParamsError, TdemParams};
use super::quality::{judge, resolved};
use super::readers::{TdemFile, attach_geometry, read_geometry, read_tdem_file};
use super::survey::{SurveyInversion, SurveySettings, invert_survey};
use crate::methods::io::ReadError;
use crate::methods::petro::{
    LayerWaterContent, MonteCarloOptions, PetroError, PetroPrior, WaterContent, WaterContentInput,
    layer_rows, water_content,
};
use crate::methods::quality::{
    Attempt, FitBand, MAX_ATTEMPTS, QUALITY_THRESHOLD, Quality, retry_lambda,
};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// Why a step of the TDEM work could not be done.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PipelineError {
    /// A file could not be read.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// A setting is invalid.
    #[error(transparent)]
    Params(#[from] ParamsError),
    /// No sounding has a system to model it with.
    #[error("{0}")]
    NoSystem(String),
    /// The inversion could not run.
    #[error(transparent)]
    Inversion(#[from] InversionError),
    /// A map could not be made.
    #[error(transparent)]
    Map(#[from] KrigingError),
    /// The water-content conversion could not be made.
    #[error(transparent)]
    Petro(#[from] PetroError),
}

/// A TDEM file as loaded: the soundings (positions attached, systems filled in from the
/// settings where the file has none) and what was done to get there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TdemDataset {
    /// The data file.
    pub path: PathBuf,
    /// The geometry table, when one was given.
    pub geometry_path: Option<PathBuf>,
    /// The soundings.
    pub file: TdemFile,
    /// What the loading did and assumed (geometry matching, systems from the settings).
    pub notes: Vec<String>,
}

impl TdemDataset {
    /// Number of soundings.
    pub fn n_soundings(&self) -> usize {
        self.file.soundings.len()
    }

    /// Gates in all soundings.
    pub fn n_gates_total(&self) -> usize {
        self.file.soundings.iter().map(Sounding::n_gates).sum()
    }

    /// Gates masked for any of `reasons` (all reasons when empty).
    pub fn n_masked(&self, reasons: &[MaskReason]) -> usize {
        self.file
            .soundings
            .iter()
            .flat_map(|s| s.mask.iter())
            .filter(|m| match m {
                None => false,
                Some(r) => reasons.is_empty() || reasons.contains(r),
            })
            .count()
    }

    /// Earliest and latest gate time [s].
    pub fn time_range_s(&self) -> Option<(f64, f64)> {
        let t = self
            .file
            .soundings
            .iter()
            .flat_map(|s| s.times_s.iter().copied())
            .filter(|t| t.is_finite());
        let (a, b) = t.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
        a.is_finite().then_some((a, b))
    }

    /// Soundings without a system (they cannot be modelled).
    pub fn n_without_system(&self) -> usize {
        self.file
            .soundings
            .iter()
            .filter(|s| s.system.is_none())
            .count()
    }

    /// What was found, in numbers a reader can check: "5 soundings, 25 gates each (125 in
    /// all), 3 masked (2 saturated, 1 below the noise floor); 1e-05 to 0.01 s".
    pub fn summary(&self) -> String {
        let n = self.n_soundings();
        let gates: Vec<usize> = self.file.soundings.iter().map(Sounding::n_gates).collect();
        let each = if gates.iter().all(|g| Some(g) == gates.first()) {
            format!("{} gates each", gates.first().copied().unwrap_or(0))
        } else {
            format!(
                "{}–{} gates",
                gates.iter().min().copied().unwrap_or(0),
                gates.iter().max().copied().unwrap_or(0)
            )
        };
        let masked = self.n_masked(&[]);
        let sat = self.n_masked(&[MaskReason::Saturated]);
        let noise = self.n_masked(&[MaskReason::NoiseFloor, MaskReason::NonPositive]);
        let early = self.n_masked(&[MaskReason::RisingEarlyGate, MaskReason::InsideRamp]);
        let mut parts = Vec::new();
        if sat > 0 {
            parts.push(format!("{sat} saturated"));
        }
        if noise > 0 {
            parts.push(format!("{noise} below the noise floor or non-positive"));
        }
        if early > 0 {
            parts.push(format!("{early} in or just after the turn-off"));
        }
        let user = masked - sat - noise - early;
        if user > 0 {
            parts.push(format!("{user} left out by the user"));
        }
        let masked_text = if masked == 0 {
            "none masked".to_string()
        } else {
            format!("{masked} masked ({})", parts.join(", "))
        };
        let range = self
            .time_range_s()
            .map(|(a, b)| format!("; {a:.3e} to {b:.3e} s"))
            .unwrap_or_default();
        format!(
            "{n} sounding{}, {each} ({} in all), {masked_text}{range}",
            if n == 1 { "" } else { "s" },
            self.n_gates_total()
        )
    }
}

/// One line describing a system: "central loop (circle r = 20 m, 1 turn, 1 A), receiver
/// 1 m² × 1 turn, step-off, on the ground".
pub fn describe_system(s: &TemSystem) -> String {
    let shape = match s.transmitter {
        LoopShape::Circle { radius_m } => format!("circle r = {radius_m} m"),
        LoopShape::Square { side_m } => format!("square {side_m} m × {side_m} m"),
    };
    let rx = match s.receiver {
        Receiver::Central { area_m2, turns } => {
            format!("central loop ({shape}), receiver coil {area_m2} m² × {turns} turn(s)")
        }
        Receiver::Coincident { turns } => {
            format!("coincident loop ({shape}), {turns} receiver turn(s)")
        }
        Receiver::Offset {
            offset_m,
            area_m2,
            turns,
        } => format!(
            "loop ({shape}) with a receiver coil {area_m2} m² × {turns} turn(s) at {offset_m} m offset"
        ),
    };
    let wf = match &s.waveform {
        Waveform::StepOff => "step-off".to_string(),
        Waveform::LinearRamp { ramp_s } => format!("linear ramp of {:.3e} s", ramp_s),
        Waveform::PiecewiseLinear { time_s, .. } => {
            format!("piecewise-linear turn-off ({} points)", time_s.len())
        }
    };
    let height = if s.tx_height_m > 0.0 || s.rx_height_m > 0.0 {
        format!(
            "transmitter {} m, receiver {} m above ground",
            s.tx_height_m, s.rx_height_m
        )
    } else {
        "on the ground".to_string()
    };
    format!(
        "{rx}; {} transmitter turn(s), {} A; {wf}; {height}",
        s.tx_turns, s.current_a
    )
}

/// Read `data` (and `geometry`), attach positions, and give every sounding whose file does not
/// describe a system (or every sounding, with `override_file_system`) the system of `params`.
pub fn load_dataset(
    data: &Path,
    geometry: Option<&Path>,
    params: &TdemParams,
) -> Result<TdemDataset, PipelineError> {
    let options = params.read_options()?;
    let mut file = read_tdem_file(data, &options)?;
    let mut notes = Vec::new();
    if let Some(g) = geometry {
        let rows = read_geometry(g)?;
        notes.push(attach_geometry(&mut file, &rows));
    }
    if let Some((system, system_notes)) = params.system()? {
        let mut given = 0;
        for s in &mut file.soundings {
            if params.override_file_system || s.system.is_none() {
                s.system = Some(system.clone());
                s.remask(&options.mask_limits);
                given += 1;
            }
        }
        if given > 0 {
            notes.push(format!(
                "system from tdem_params for {given} of {} sounding(s): {}",
                file.soundings.len(),
                describe_system(&system)
            ));
            notes.extend(system_notes);
        } else {
            notes.push("the file describes its system: tdem_params' loop not used (set override_file_system to use it)".into());
        }
    }
    if let Some(keep) = &params.soundings {
        select_soundings(&mut file, keep, data)?;
        let names: Vec<&str> = file.soundings.iter().map(|s| s.name.as_str()).collect();
        notes.push(format!(
            "{} of the file's soundings inverted (tdem_params.soundings): {}",
            names.len(),
            match names.as_slice() {
                [a, _, _, _, _, _, _, .., b] => format!("{a} … {b}"),
                _ => names.join(", "),
            }
        ));
    }
    let missing = file.soundings.iter().filter(|s| s.system.is_none()).count();
    if missing > 0 {
        notes.push(format!(
            "{missing} sounding(s) have no system: the file does not describe the loop; give it in tdem_params (loop_type, loop_radius_m or loop_side_m, turns, current_a, waveform)"
        ));
    }
    Ok(TdemDataset {
        path: data.to_path_buf(),
        geometry_path: geometry.map(Path::to_path_buf),
        file,
        notes,
    })
}

/// Keep the soundings at `keep` (0-based file indices, in the file's order); an index past
/// the file's last sounding is refused with the count there is.
fn select_soundings(file: &mut TdemFile, keep: &[usize], path: &Path) -> Result<(), PipelineError> {
    let n = file.soundings.len();
    if let Some(bad) = keep.iter().find(|&&k| k >= n) {
        return Err(PipelineError::Params(ParamsError {
            key: "soundings".into(),
            message: format!(
                "{}: expected sounding indices below {n} (0-based, the file holds {n} sounding(s)), found {bad}",
                path.display()
            ),
        }));
    }
    let all = std::mem::take(&mut file.soundings);
    file.soundings = all
        .into_iter()
        .enumerate()
        .filter(|(k, _)| keep.contains(k))
        .map(|(_, s)| s)
        .collect();
    Ok(())
}

/// How a line of soundings is inverted ([`TdemParams::lateral`]): κ when laterally
/// constrained, `None` one by one, with the reason — decided on every sounding of `ds`
/// against the median depth they see.
pub fn lateral_decision(
    ds: &TdemDataset,
    params: &TdemParams,
) -> Result<(Option<f64>, String), PipelineError> {
    let distances: Vec<Option<f64>> = ds
        .file
        .soundings
        .iter()
        .map(|s| s.position.distance_m)
        .collect();
    let mut seen: Vec<f64> = ds.file.soundings.iter().filter_map(depth_seen_m).collect();
    seen.sort_by(f64::total_cmp);
    let max_spacing = seen.get(seen.len() / 2).copied().unwrap_or(0.0);
    Ok(params.lateral(&distances, max_spacing)?)
}

/// One sounding's inverted model and its fit, whichever way it was inverted (alone or in a
/// line).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SoundingFit {
    /// Index of the sounding in the file.
    pub index: usize,
    /// Its name.
    pub name: String,
    /// Its position.
    pub position: Position,
    /// The data unit.
    pub unit: ResponseUnit,
    /// Gate times of the inverted gates [s].
    pub times_s: Vec<f64>,
    /// Observed values (unit).
    pub observed: Vec<f64>,
    /// Standard deviations used (unit).
    pub sigma: Vec<f64>,
    /// Predicted values of the smooth model (unit).
    pub predicted: Vec<f64>,
    /// The smooth model.
    pub model: LayeredEarth,
    /// Depth of investigation [m].
    pub doi_m: Option<f64>,
    /// χ² of the smooth model.
    pub chi2: f64,
    /// Relative RMS [%].
    pub rrms_percent: f64,
    /// Number of data.
    pub n_data: usize,
    /// The few-layer model, when one was asked for and converged.
    pub few_layer: Option<LayeredEarth>,
    /// Its χ².
    pub few_layer_chi2: Option<f64>,
}

impl SoundingFit {
    /// Normalised residuals (d − f)/σ per gate.
    pub fn residuals(&self) -> Vec<f64> {
        self.observed
            .iter()
            .zip(&self.predicted)
            .zip(&self.sigma)
            .map(|((d, f), s)| (d - f) / s)
            .collect()
    }
}

/// The inversion of a whole file as the tools hold it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TdemInversion {
    /// The methods' result (per sounding or the line, the verdict).
    pub survey: SurveyInversion,
    /// The settings used.
    pub settings: SurveySettings,
    /// Per inverted sounding, in file order.
    pub fits: Vec<SoundingFit>,
    /// Soundings that could not be inverted: (name, reason).
    pub failed: Vec<(String, String)>,
    /// Why the line was (not) laterally constrained.
    pub lateral_note: String,
    /// Settings that were defaults, the lateral decision, the method's notes.
    pub notes: Vec<String>,
}

impl TdemInversion {
    /// χ² over all inverted data.
    pub fn chi2(&self) -> f64 {
        self.survey.chi2
    }

    /// Data inverted.
    pub fn n_data(&self) -> usize {
        self.fits.iter().map(|f| f.n_data).sum()
    }

    /// Model cells (layers × soundings).
    pub fn n_cells(&self) -> usize {
        self.fits.iter().map(|f| f.model.n_layers()).sum()
    }

    /// Relative RMS over all data [%]: √(Σ nᵢ rrmsᵢ² / Σ nᵢ).
    pub fn rrms_percent(&self) -> f64 {
        let n = self.n_data().max(1) as f64;
        (self
            .fits
            .iter()
            .map(|f| f.n_data as f64 * f.rrms_percent * f.rrms_percent)
            .sum::<f64>()
            / n)
            .sqrt()
    }

    /// Iterations: the line's, or the most any sounding took.
    pub fn iterations(&self) -> usize {
        match &self.survey.line {
            Some(l) => l.iterations,
            None => self
                .survey
                .soundings
                .iter()
                .filter_map(|o| o.smooth.as_ref().map(|s| s.iterations))
                .max()
                .unwrap_or(0),
        }
    }

    /// Final λ: the line's, or the median of the soundings'.
    pub fn lambda(&self) -> f64 {
        match &self.survey.line {
            Some(l) => l.lambda,
            None => {
                let mut l: Vec<f64> = self
                    .survey
                    .soundings
                    .iter()
                    .filter_map(|o| o.smooth.as_ref().map(|s| s.lambda))
                    .collect();
                l.sort_by(f64::total_cmp);
                l.get(l.len() / 2).copied().unwrap_or(f64::NAN)
            }
        }
    }

    /// The χ² history: the line's, or the single sounding's (empty for several soundings
    /// inverted one by one: each has its own).
    pub fn chi2_history(&self) -> Vec<f64> {
        match &self.survey.line {
            Some(l) => l.chi2_history.clone(),
            None => match self.survey.soundings.as_slice() {
                [one] => one
                    .smooth
                    .as_ref()
                    .map(|s| s.chi2_history.clone())
                    .unwrap_or_default(),
                _ => Vec::new(),
            },
        }
    }

    /// "line" (laterally constrained) or "one by one".
    pub fn mode(&self) -> &'static str {
        if self.survey.line.is_some() {
            "laterally constrained line"
        } else {
            "one by one"
        }
    }
}

/// The depth a sounding sees, as the default layering's bottom: 1.2 × the diffusion depth
/// √(2tρ/μ0) (Spies 1989) at the latest usable gate with the median late-time ρa.
fn depth_seen_m(s: &Sounding) -> Option<f64> {
    let system = s.system.as_ref()?;
    let used = s.used_gates();
    let t = used.iter().map(|&i| s.times_s[i]).fold(0.0, f64::max);
    let rhoa = s.late_time_rhoa(system);
    let mut r: Vec<f64> = used
        .iter()
        .filter_map(|&i| rhoa[i])
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    if r.is_empty() || t <= 0.0 {
        return None;
    }
    r.sort_by(f64::total_cmp);
    Some(1.2 * diffusion_depth_m(t, r[r.len() / 2].clamp(0.5, 1e4)))
}

/// Invert `ds` with the settings of `params` (lateral constraints decided by
/// [`TdemParams::lateral`] against the depth the soundings see).
pub fn invert_dataset(
    ds: &TdemDataset,
    params: &TdemParams,
    progress: Progress<'_>,
    cancel: &AtomicBool,
) -> Result<TdemInversion, PipelineError> {
    let (mut settings, mut notes) = params.survey_settings()?;
    let (kappa, lateral_note) = lateral_decision(ds, params)?;
    settings.lateral_factor = kappa;
    notes.push(lateral_note.clone());
    invert_with(ds, &settings, lateral_note, notes, progress, cancel)
}

/// Invert `ds` with explicit settings.
pub fn invert_with(
    ds: &TdemDataset,
    settings: &SurveySettings,
    lateral_note: String,
    mut notes: Vec<String>,
    progress: Progress<'_>,
    cancel: &AtomicBool,
) -> Result<TdemInversion, PipelineError> {
    if ds.n_without_system() == ds.n_soundings() {
        return Err(PipelineError::NoSystem(format!(
            "{}: no sounding has a system (the file does not describe the loop): set tdem_params.loop_type and loop_radius_m or loop_side_m (and turns, current_a, waveform if they are not 1, 1 A and step-off)",
            ds.path.display()
        )));
    }
    let survey = invert_survey(&ds.file, settings, progress, cancel)?;
    notes.extend(survey.notes.iter().cloned());
    let mut fits = Vec::new();
    let mut failed = Vec::new();
    let mut taken = vec![false; ds.n_soundings()];
    let mut index_of = |name: &str| -> usize {
        let i = ds
            .file
            .soundings
            .iter()
            .enumerate()
            .position(|(i, s)| !taken[i] && s.name == name)
            .unwrap_or(0);
        if let Some(t) = taken.get_mut(i) {
            *t = true;
        }
        i
    };
    if let Some(line) = &survey.line {
        for o in &survey.soundings {
            if let Some(e) = &o.error {
                failed.push((o.name.clone(), e.clone()));
                index_of(&o.name);
            }
        }
        for l in &line.soundings {
            let index = index_of(&l.name);
            let s = &ds.file.soundings[index];
            fits.push(SoundingFit {
                index,
                name: l.name.clone(),
                position: s.position.clone(),
                unit: s.unit,
                times_s: l.times_s.clone(),
                observed: l.observed.clone(),
                sigma: l.sigma.clone(),
                predicted: l.predicted.clone(),
                model: l.model.clone(),
                doi_m: l.doi.doi_m,
                chi2: l.chi2,
                rrms_percent: l.rrms_percent,
                n_data: l.n_data,
                few_layer: None,
                few_layer_chi2: None,
            });
        }
    } else {
        for o in &survey.soundings {
            let index = index_of(&o.name);
            match (&o.smooth, &o.error) {
                (Some(r), _) => {
                    let s = &ds.file.soundings[index];
                    fits.push(SoundingFit {
                        index,
                        name: o.name.clone(),
                        position: s.position.clone(),
                        unit: s.unit,
                        times_s: r.times_s.clone(),
                        observed: r.observed.clone(),
                        sigma: r.sigma.clone(),
                        predicted: r.predicted.clone(),
                        model: r.model.clone(),
                        doi_m: r.doi.doi_m,
                        chi2: r.chi2,
                        rrms_percent: r.rrms_percent,
                        n_data: r.n_data,
                        few_layer: o.few_layer.as_ref().map(|f| f.model.clone()),
                        few_layer_chi2: o.few_layer.as_ref().map(|f| f.chi2),
                    });
                }
                (None, e) => failed.push((
                    o.name.clone(),
                    e.clone().unwrap_or_else(|| "not inverted".into()),
                )),
            }
        }
    }
    fits.sort_by_key(|f| f.index);
    Ok(TdemInversion {
        survey,
        settings: settings.clone(),
        fits,
        failed,
        lateral_note,
        notes,
    })
}

/// How the evaluation judges and retries.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EvaluationOptions {
    /// The pass mark (default 70).
    pub threshold: f64,
    /// Inversions at most, the first included (default 3).
    pub max_attempts: usize,
    /// Whether to retry at all.
    pub auto_adjust: bool,
}

impl Default for EvaluationOptions {
    fn default() -> Self {
        EvaluationOptions {
            threshold: QUALITY_THRESHOLD,
            max_attempts: MAX_ATTEMPTS,
            auto_adjust: true,
        }
    }
}

/// One sounding's verdict line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SoundingVerdict {
    /// Name.
    pub name: String,
    /// χ².
    pub chi2: f64,
    /// Relative RMS [%].
    pub rrms_percent: f64,
    /// Depth of investigation [m].
    pub doi_m: Option<f64>,
    /// Fit band of the χ².
    pub band: FitBand,
    /// Whether the DOI reaches below the fourth layer.
    pub resolved: bool,
}

/// The evaluation: the verdict, every attempt, which model was kept and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TdemEvaluation {
    /// The verdict on the kept model.
    pub quality: Quality,
    /// Every inversion tried (the first is the one `invert_tdem` made).
    pub attempts: Vec<Attempt>,
    /// Which model was kept and why.
    pub why_kept: String,
    /// Whether a retry's model replaced the first one.
    pub replaced: bool,
    /// The kept inversion (what maps and water content use).
    pub kept: TdemInversion,
    /// Per sounding.
    pub soundings: Vec<SoundingVerdict>,
    /// Why the soundings of the kept model that fit worse than χ² 1.5 do not fit (the worst
    /// few, see [`diagnose_fits`]).
    #[serde(default)]
    pub diagnoses: Vec<FitDiagnosis>,
    /// Said about the diagnoses (how many were left out).
    #[serde(default)]
    pub diagnosis_note: Option<String>,
}

/// Judge `inv` by the shared rubric (TDEM weights: fit, resolution against the DOI,
/// plausibility). With a fixed λ and a failing verdict, invert again with λ halved
/// (underfit) or doubled (overfit), at most `max_attempts` inversions, and keep the
/// best-scoring model ([`retry_lambda`]). With Occam's λ search there is nothing to retry:
/// each iteration already chose λ.
pub fn evaluate_inversion(
    ds: &TdemDataset,
    inv: &TdemInversion,
    options: &EvaluationOptions,
    mut progress: Progress<'_>,
    cancel: &AtomicBool,
) -> Result<TdemEvaluation, PipelineError> {
    let q0 = judge(
        &inv.survey.quality,
        &inv.fits,
        inv.chi2(),
        options.threshold,
    );
    let verdicts = |inv: &TdemInversion| -> Vec<SoundingVerdict> {
        inv.fits
            .iter()
            .map(|f| SoundingVerdict {
                name: f.name.clone(),
                chi2: f.chi2,
                rrms_percent: f.rrms_percent,
                doi_m: f.doi_m,
                band: FitBand::of(f.chi2),
                resolved: resolved(
                    &f.model,
                    &super::invert::Doi {
                        doi_m: f.doi_m,
                        threshold: inv.settings.smooth.doi_threshold,
                        sensitivity_per_m: vec![],
                        cumulative: vec![],
                    },
                ),
            })
            .collect()
    };
    let fixed = match inv.settings.smooth.lambda_mode {
        LambdaMode::Fixed { lambda } => Some(lambda),
        LambdaMode::Occam => None,
    };
    let Some(lambda0) = fixed.filter(|_| !q0.passed && options.auto_adjust) else {
        let why = if q0.passed {
            format!(
                "the first model passes ({}); no retry needed",
                q0.sentence()
            )
        } else if fixed.is_none() {
            format!(
                "Occam's search chose λ at every iteration (final λ {:.3e}); a λ retry would repeat that search, so the first model is kept ({})",
                inv.lambda(),
                q0.sentence()
            )
        } else {
            format!(
                "retries are switched off (auto_adjust = false); the first model is kept ({})",
                q0.sentence()
            )
        };
        let (diagnoses, diagnosis_note) = diagnose_kept(ds, inv, progress, cancel)?;
        return Ok(TdemEvaluation {
            attempts: vec![Attempt {
                attempt: 1,
                lambda: fixed.unwrap_or_else(|| inv.lambda()),
                chi2: inv.chi2(),
                score: q0.score,
                kept: true,
            }],
            quality: q0,
            why_kept: why,
            replaced: false,
            soundings: verdicts(inv),
            kept: inv.clone(),
            diagnoses,
            diagnosis_note,
        });
    };
    let mut first = Some(inv.clone());
    let max = options.max_attempts.max(1);
    let mut k = 0usize;
    let retried = retry_lambda(lambda0, max, true, |lambda| {
        k += 1;
        if let Some(cb) = progress.as_mut() {
            cb(
                (k - 1) as f64 / max as f64,
                &format!("attempt {k} of at most {max}: λ = {lambda:.3e}"),
            );
        }
        let candidate = match first.take() {
            Some(i) => i,
            None => {
                let mut s = inv.settings.clone();
                s.smooth.lambda_mode = LambdaMode::Fixed { lambda };
                invert_with(
                    ds,
                    &s,
                    inv.lateral_note.clone(),
                    inv.notes.clone(),
                    None,
                    cancel,
                )?
            }
        };
        let q = judge(
            &candidate.survey.quality,
            &candidate.fits,
            candidate.chi2(),
            options.threshold,
        );
        let chi2 = candidate.chi2();
        Ok::<_, PipelineError>((candidate, chi2, q))
    })?;
    let (diagnoses, diagnosis_note) = diagnose_kept(ds, &retried.best, progress, cancel)?;
    let replaced = retried.attempts.iter().position(|a| a.kept) != Some(0);
    Ok(TdemEvaluation {
        quality: retried.quality,
        attempts: retried.attempts,
        why_kept: retried.why_kept,
        replaced,
        soundings: verdicts(&retried.best),
        kept: retried.best,
        diagnoses,
        diagnosis_note,
    })
}

/// The diagnoses of the kept inversion's soundings that do not fit (progress from 0.9 to 1).
fn diagnose_kept(
    ds: &TdemDataset,
    kept: &TdemInversion,
    mut progress: Progress<'_>,
    cancel: &AtomicBool,
) -> Result<(Vec<FitDiagnosis>, Option<String>), PipelineError> {
    let mut inner = |f: f64, what: &str| {
        if let Some(cb) = progress.as_mut() {
            cb(0.9 + 0.1 * f, what);
        }
    };
    let out = diagnose_fits(
        &ds.file.soundings,
        &kept.fits,
        &kept.settings,
        Some(&mut inner),
        cancel,
    )
    .map_err(|e| match e {
        DiagnosisError::Cancelled => PipelineError::Inversion(InversionError::Cancelled(0)),
    })?;
    if let Some(cb) = progress.as_mut() {
        cb(1.0, "evaluation done");
    }
    Ok(out)
}

/// Plan-view maps of the kept models.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TdemMaps {
    /// One map per depth.
    pub maps: Vec<PlanMap>,
    /// The depths [m].
    pub depths_m: Vec<f64>,
    /// Whether the depths were the default (¼, ½, ¾ of the median DOI).
    pub depths_default: bool,
    /// What was assumed.
    pub notes: Vec<String>,
}

/// x rounded to two significant digits.
fn two_digits(x: f64) -> f64 {
    if !(x.is_finite() && x > 0.0) {
        return x;
    }
    let p = 10f64.powf(x.log10().floor() - 1.0);
    (x / p).round() * p
}

/// Ordinary-kriging maps of log10 ρ of `inv`'s models at the depths of `params` (default ¼,
/// ½ and ¾ of the median DOI), soundings below their DOI left out (see
/// [`plan_view_maps`]). Soundings with an along-line distance but no easting/northing are
/// placed at (distance, 0), and the notes say so.
pub fn plan_maps(inv: &TdemInversion, params: &TdemParams) -> Result<TdemMaps, PipelineError> {
    let settings = params.map_settings()?;
    let mut notes = Vec::new();
    let any_en = inv
        .fits
        .iter()
        .any(|f| f.position.easting_m.is_some() && f.position.northing_m.is_some());
    let soundings: Vec<(Position, LayeredEarth, Option<f64>)> = inv
        .fits
        .iter()
        .map(|f| {
            let mut p = f.position.clone();
            if !any_en && let Some(d) = p.distance_m {
                p.easting_m = Some(d);
                p.northing_m = Some(0.0);
            }
            (p, f.model.clone(), f.doi_m)
        })
        .collect();
    if !any_en && inv.fits.iter().any(|f| f.position.distance_m.is_some()) {
        notes.push("no easting/northing: soundings placed at (distance along the line, 0)".into());
    }
    let (depths, default) = match params.map_depths()? {
        Some(d) => (d, false),
        None => {
            let mut dois: Vec<f64> = inv.fits.iter().filter_map(|f| f.doi_m).collect();
            dois.sort_by(f64::total_cmp);
            let base = dois.get(dois.len() / 2).copied().unwrap_or_else(|| {
                let mut b: Vec<f64> = inv
                    .fits
                    .iter()
                    .filter_map(|f| f.model.top_depths_m().last().copied())
                    .collect();
                b.sort_by(f64::total_cmp);
                b.get(b.len() / 2).copied().unwrap_or(10.0)
            });
            let d: Vec<f64> = [0.25, 0.5, 0.75]
                .iter()
                .map(|f| two_digits(f * base))
                .collect();
            notes.push(format!(
                "map depths {} m: ¼, ½ and ¾ of the median DOI {:.0} m (default; tdem_params.map_depths_m)",
                d.iter().map(|z| format!("{z}")).collect::<Vec<_>>().join(", "),
                base
            ));
            (d, true)
        }
    };
    let maps = plan_view_maps(&soundings, &depths, &settings)?;
    for m in &maps {
        for n in &m.notes {
            notes.push(format!("{} m: {n}", m.depth_m));
        }
    }
    Ok(TdemMaps {
        maps,
        depths_m: depths,
        depths_default: default,
        notes,
    })
}

/// Water content per layer of every sounding's model (issue 8 item 4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TdemWaterContent {
    /// One row per layer and sounding, top down, soundings in file order (the rows of
    /// `water_content_by_layer.csv`).
    pub rows: Vec<LayerWaterContent>,
    /// Per row: whether the layer's top lies below its sounding's DOI (or the sounding has
    /// none), so the layer is not resolved by the data and its water content is the prior's.
    pub below_doi: Vec<bool>,
    /// The Monte Carlo conversion of all layers together (prior, its source, reliability).
    pub conversion: WaterContent,
    /// What a reader must know (the conversion's notes first).
    pub notes: Vec<String>,
}

impl TdemWaterContent {
    /// `water_content_by_layer.csv` of the rows (`station_index` when there is more than
    /// one sounding).
    pub fn csv(&self) -> String {
        crate::methods::petro::water_content_by_layer_csv(&self.rows)
    }
}

/// Convert every layer of every sounding's model to volumetric water content θ = φ·S by
/// petro's Monte Carlo over `prior` (Archie 1942, or Waxman & Smits 1968 when the prior has
/// surface conduction; see [`crate::methods::petro::water_content`]). One conversion over all
/// layers of all soundings, so the reliability ratio judges the whole survey. The station
/// index is the sounding's index when there is more than one sounding.
pub fn water_content_by_layer(
    inv: &TdemInversion,
    prior: &PetroPrior,
    options: &MonteCarloOptions,
) -> Result<TdemWaterContent, PipelineError> {
    let rho: Vec<f64> = inv
        .fits
        .iter()
        .flat_map(|f| f.model.rho_ohm_m.iter().copied())
        .collect();
    let input = WaterContentInput {
        resistivity_ohm_m: &rho,
        resistivity_sigma_ln: None,
        region_of_cell: None,
    };
    let conversion = water_content(&input, std::slice::from_ref(prior), options)?;
    let many = inv.fits.len() > 1;
    let (mut rows, mut below_doi) = (Vec::new(), Vec::new());
    let mut start = 0;
    for f in &inv.fits {
        let n = f.model.rho_ohm_m.len();
        let part = slice_conversion(&conversion, start, n);
        let station = many.then_some(f.index);
        for r in layer_rows(station, &f.model.thickness_m, &f.model.rho_ohm_m, &part) {
            below_doi.push(f.doi_m.is_none_or(|d| r.depth_top_m >= d));
            rows.push(r);
        }
        start += n;
    }
    let mut notes = conversion.notes.clone();
    let n_below = below_doi.iter().filter(|b| **b).count();
    if n_below > 0 {
        notes.push(format!(
            "{n_below} of {} layers lie below their sounding's depth of investigation: their \
             resistivity, and so their water content, is not constrained by the data",
            rows.len()
        ));
    }
    notes.push(
        "resistivity is taken as exact: the spread is the prior's only, not the inversion's"
            .to_string(),
    );
    Ok(TdemWaterContent {
        rows,
        below_doi,
        conversion,
        notes,
    })
}

/// The cells `start..start + n` of a conversion, for [`layer_rows`].
fn slice_conversion(wc: &WaterContent, start: usize, n: usize) -> WaterContent {
    // Invariant: `water_content` returns one value per input cell, and the callers' slices
    // partition those cells, so `start + n` never exceeds the lengths.
    let cut = |v: &[f64]| v[start..start + n].to_vec();
    let stats = |c: &crate::methods::petro::CellStatistics| crate::methods::petro::CellStatistics {
        mean: cut(&c.mean),
        std: cut(&c.std),
        p10: cut(&c.p10),
        p50: cut(&c.p50),
        p90: cut(&c.p90),
    };
    WaterContent {
        n_cells: n,
        water_content: stats(&wc.water_content),
        saturation: stats(&wc.saturation),
        clipped_share: cut(&wc.clipped_share),
        ..wc.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn langeoog() -> Option<TdemDataset> {
        let p = crate::field_data::data("tdem/TEMfastLangeoog.tem")?;
        Some(load_dataset(&p, None, &TdemParams::default()).unwrap())
    }

    #[test]
    fn langeoog_loads_with_its_own_system_and_says_what_it_masked() {
        // ../shared/data/tdem/TEMfastLangeoog.tem: 44 gates, 10 masked (7 non-positive, 2
        // rising early gates, 1 noise) — readers::tests::temfast_langeoog_reads_with_its_header.
        let Some(ds) = langeoog() else {
            crate::require_data!("tdem/TEMfastLangeoog.tem");
            return;
        };
        assert_eq!(ds.n_soundings(), 1);
        assert_eq!(ds.n_gates_total(), 44);
        assert_eq!(ds.n_masked(&[]), 10);
        assert_eq!(ds.n_without_system(), 0);
        let s = ds.summary();
        assert!(
            s.starts_with("1 sounding, 44 gates each (44 in all), 10 masked"),
            "{s}"
        );
        assert!(s.contains("8 below the noise floor or non-positive"), "{s}");
        assert!(s.contains("2 in or just after the turn-off"), "{s}");
    }

    #[test]
    fn a_table_without_a_system_is_refused_with_what_to_set() {
        let p = crate::require_data!("tdem/phgx/joint_synthetic_tdem.csv");
        let ds = load_dataset(&p, None, &TdemParams::default()).unwrap();
        assert!(
            ds.notes.iter().any(|n| n.contains("no system")),
            "{:?}",
            ds.notes
        );
        let e = invert_dataset(&ds, &TdemParams::default(), None, &AtomicBool::new(false))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("tdem_params.loop_type") && e.contains("loop_radius_m"),
            "{e}"
        );
    }

    #[test]
    fn fixed_lambda_underfit_is_retried_with_half_lambda_and_the_best_kept() {
        // Langeoog, 15 layers, a fixed λ = 4: the Gauss–Newton iterations stall at χ² ≈ 13
        // (underfit, fit score 0), so the rubric's retry halves λ: 4 → 2 (χ² ≈ 12.5, still
        // underfit) → 1, which reaches χ² ≈ 0.93 and passes. Measured by this code; the rule
        // (½ when underfit, at most 3 inversions, keep the best score) is
        // methods::quality::retry_lambda's.
        let Some(ds) = langeoog() else {
            crate::require_data!("tdem/TEMfastLangeoog.tem");
            return;
        };
        let params = TdemParams {
            lambda: Some(4.0),
            n_layers: Some(15),
            max_iterations: Some(10),
            ..TdemParams::default()
        };
        let cancel = AtomicBool::new(false);
        let inv = invert_dataset(&ds, &params, None, &cancel).unwrap();
        let ev =
            evaluate_inversion(&ds, &inv, &EvaluationOptions::default(), None, &cancel).unwrap();
        eprintln!(
            "attempts {:?}; kept χ² {:.3}; {}",
            ev.attempts
                .iter()
                .map(|a| (a.lambda, (a.chi2 * 100.0).round() / 100.0, a.score.round()))
                .collect::<Vec<_>>(),
            ev.kept.chi2(),
            ev.why_kept
        );
        assert!(inv.chi2() > 1.5, "first χ² {}", inv.chi2());
        assert_eq!(
            ev.attempts.iter().map(|a| a.lambda).collect::<Vec<_>>(),
            vec![4.0, 2.0, 1.0]
        );
        assert!(ev.attempts[2].kept && ev.replaced);
        assert!(ev.quality.passed, "{:?}", ev.quality);
        assert!(ev.kept.chi2() <= 1.5, "kept χ² {}", ev.kept.chi2());
        assert_eq!(
            ev.kept.settings.smooth.lambda_mode,
            LambdaMode::Fixed { lambda: 1.0 }
        );
    }

    #[test]
    fn occam_models_are_not_retried_and_say_why() {
        // Occam chooses λ itself: one attempt, kept, with the reason in words.
        let Some(ds) = langeoog() else {
            crate::require_data!("tdem/TEMfastLangeoog.tem");
            return;
        };
        let params = TdemParams {
            n_layers: Some(15),
            ..TdemParams::default()
        };
        let cancel = AtomicBool::new(false);
        let inv = invert_dataset(&ds, &params, None, &cancel).unwrap();
        let ev =
            evaluate_inversion(&ds, &inv, &EvaluationOptions::default(), None, &cancel).unwrap();
        assert_eq!(ev.attempts.len(), 1);
        assert!(ev.attempts[0].kept && !ev.replaced);
        // Acceptance (issue 8): the Langeoog smooth inversion reaches χ² ≤ 1.5.
        assert!(inv.chi2() <= 1.5, "χ² {}", inv.chi2());
        assert!(ev.quality.passed);
        assert!(ev.why_kept.contains("no retry needed"), "{}", ev.why_kept);
        assert_eq!(ev.soundings.len(), 1);
        assert!(ev.soundings[0].resolved);
    }
    #[test]
    fn water_content_per_layer_equals_archie_for_a_fixed_prior() {
        // Langeoog, 15-layer Occam model; a prior with every parameter fixed (φ = 0.35,
        // m = 1.3, n = 2, a = 1, ρw = 2 Ω·m, no surface conduction) makes the Monte Carlo
        // exact: θ = φ·min(1, (a·ρw / (φ^m·ρ))^(1/n)) (Archie 1942), σ = 0. Tolerance 1e-12
        // relative (floating-point order only).
        use crate::methods::petro::{Distribution, Param};
        let Some(ds) = langeoog() else {
            crate::require_data!("tdem/TEMfastLangeoog.tem");
            return;
        };
        let params = TdemParams {
            n_layers: Some(15),
            ..TdemParams::default()
        };
        let inv = invert_dataset(&ds, &params, None, &AtomicBool::new(false)).unwrap();
        let fixed = |value| Param::user(Distribution::Fixed { value });
        let prior = PetroPrior {
            name: "sand".into(),
            porosity: fixed(0.35),
            cementation_m: fixed(1.3),
            saturation_n: fixed(2.0),
            tortuosity_a: fixed(1.0),
            fluid_resistivity_ohm_m: fixed(2.0),
            surface_conductivity_s_per_m: fixed(0.0),
        };
        let wc = water_content_by_layer(&inv, &prior, &MonteCarloOptions::default()).unwrap();
        let model = &inv.fits[0].model;
        assert_eq!(wc.rows.len(), 15);
        assert_eq!(wc.below_doi.len(), 15);
        let tops = model.top_depths_m();
        for (i, r) in wc.rows.iter().enumerate() {
            let rho = model.rho_ohm_m[i];
            let s = (2.0 / (0.35f64.powf(1.3) * rho)).powf(0.5).min(1.0);
            let theta = 0.35 * s;
            assert!(
                ((r.water_content_mean - theta) / theta).abs() < 1e-12,
                "layer {i}: {} vs {theta}",
                r.water_content_mean
            );
            assert!(r.water_content_std.abs() < 1e-12);
            assert_eq!(r.station_index, None);
            assert_eq!(r.depth_top_m, tops[i]);
            assert_eq!(r.resistivity_ohm_m, rho);
            let doi = inv.fits[0].doi_m.unwrap();
            assert_eq!(wc.below_doi[i], tops[i] >= doi);
        }
        assert_eq!(wc.rows[14].depth_bottom_m, None);
        // Both branches of the closed form are exercised: the lens (> 20 Ω·m) is below
        // full saturation, the saline layers (< 5 Ω·m) are clipped to S = 1 (θ = φ).
        let fresh = wc.rows.iter().find(|r| r.resistivity_ohm_m > 20.0).unwrap();
        let salt = wc.rows.iter().find(|r| r.resistivity_ohm_m < 5.0).unwrap();
        assert!(
            fresh.water_content_mean < 0.3,
            "{}",
            fresh.water_content_mean
        );
        assert!((salt.water_content_mean - 0.35).abs() < 1e-12);
        assert!(wc.csv().starts_with(
            "depth_top_m,depth_bottom_m,resistivity_ohm_m,water_content_mean,water_content_std"
        ));
    }
}
