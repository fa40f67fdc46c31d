//! Why a sounding does not fit: for every inverted sounding whose χ² is above the good band
//! (χ² > 1.5, [`FitBand::Underfit`]), which gates carry the misfit, whether early or late,
//! whether the residuals are systematic or random, and what re-inverting the sounding alone
//! with a changed assumption does to χ² — the turn-off ramp, a noise floor, the loop size and
//! the worst time window left out.
//!
//! Phases:
//! 1. the misfit by gate: normalised residuals rᵢ = (dᵢ − Fᵢ)/σᵢ of the kept model, their
//!    squares' shares in three windows of equal width in log time, the five largest |rᵢ|;
//! 2. the Wald–Wolfowitz runs test on the residuals' signs (Wald & Wolfowitz 1940, Ann. Math.
//!    Stat. 11(2), 147–162): R runs among n₊ positive and n₋ negative residuals,
//!    μ = 2n₊n₋/n + 1, σ² = 2n₊n₋(2n₊n₋ − n)/(n²(n − 1)), z = (R − μ)/σ; z < −2 (too few
//!    runs) means the residuals are systematic, a model error rather than noise;
//! 3. trials: the sounding re-inverted alone (Occam, the run's settings) as the baseline and
//!    once per changed assumption, each χ² against the baseline's;
//! 4. the conclusion, in words, from 1–3.
//!
//! Nothing here changes the kept model: the diagnosis is a reading of it for the report.

use super::data::{MaskReason, Sounding};
use super::forward::{LoopShape, Receiver, TemSystem, Waveform};
use super::invert::{InversionError, Prepared, Progress, invert_smooth};
use super::pipeline::SoundingFit;
use super::survey::SurveySettings;
use crate::methods::quality::CHI2_ACCEPTABLE;
use serde::{Deserialize, Serialize};
use std::sync::atomic::AtomicBool;

/// At most this many soundings are diagnosed (the worst χ² first); the note says so.
pub const MAX_DIAGNOSED: usize = 5;

/// The runs-test z below which residuals count as systematic.
pub const RUNS_Z_SYSTEMATIC: f64 = -2.0;

/// A third of the sounding's gates, by log time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeWindow {
    /// The earliest third of the log-time range.
    Early,
    /// The middle third.
    Middle,
    /// The latest third.
    Late,
}

impl TimeWindow {
    /// The word for a sentence.
    pub fn word(self) -> &'static str {
        match self {
            TimeWindow::Early => "early",
            TimeWindow::Middle => "middle",
            TimeWindow::Late => "late",
        }
    }
}

/// Where the misfit sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MisfitPlace {
    /// More than half of Σ r² is in this window.
    In(TimeWindow),
    /// No window carries more than half.
    Throughout,
}

/// One window's share of the misfit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WindowShare {
    /// The window.
    pub window: TimeWindow,
    /// First and last gate time in it [s] (NaN when it has no gate).
    pub from_s: f64,
    /// Last gate time [s].
    pub to_s: f64,
    /// Gates in it.
    pub n_gates: usize,
    /// Its share of Σ r² (0–1).
    pub share: f64,
    /// χ² of its gates alone, (1/nₖ) Σₖ r².
    pub chi2: f64,
}

/// One gate's misfit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateMisfit {
    /// The gate's number in the file (1-based).
    pub gate: usize,
    /// Its time [s].
    pub time_s: f64,
    /// Normalised residual (d − F)/σ.
    pub residual: f64,
}

/// One re-inversion with a changed assumption.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    /// What was changed, in words.
    pub what: String,
    /// χ² of the sounding re-inverted alone with the change (`None`: it could not be inverted,
    /// see `note`).
    pub chi2: Option<f64>,
    /// Why it could not run, or what to know when reading its χ².
    pub note: Option<String>,
}

/// The diagnosis of one sounding that does not fit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FitDiagnosis {
    /// The sounding.
    pub name: String,
    /// χ² of the kept model.
    pub chi2: f64,
    /// Gates inverted.
    pub n_gates: usize,
    /// The three windows.
    pub windows: Vec<WindowShare>,
    /// Where the misfit sits.
    pub place: MisfitPlace,
    /// The five largest |r|, largest first.
    pub worst_gates: Vec<GateMisfit>,
    /// Runs-test z of the residual signs.
    pub runs_z: f64,
    /// Whether the residuals are systematic (z < [`RUNS_Z_SYSTEMATIC`]).
    pub systematic: bool,
    /// Gates (1-based) masked as non-positive between used gates: a sign reversal inside the
    /// decay, the mark of induced polarisation (or of a 3D conductor) that no 1D resistive
    /// model produces.
    pub sign_reversals: Vec<usize>,
    /// Stacks behind each value, when the file says.
    pub stacks: Option<u32>,
    /// χ² of the sounding re-inverted alone with the run's assumptions (`None`: it could not
    /// be re-inverted).
    pub baseline_chi2: Option<f64>,
    /// The re-inversions.
    pub trials: Vec<Trial>,
    /// What the diagnosis concludes.
    pub conclusion: String,
}

/// Why a sounding could not be diagnosed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DiagnosisError {
    /// The user cancelled.
    #[error("the diagnosis was cancelled")]
    Cancelled,
}

/// Diagnose every fit of `fits` above the good band, the worst [`MAX_DIAGNOSED`] first.
/// Returns the diagnoses and a note when some were left out.
pub fn diagnose_fits(
    soundings: &[Sounding],
    fits: &[SoundingFit],
    settings: &SurveySettings,
    mut progress: Progress<'_>,
    cancel: &AtomicBool,
) -> Result<(Vec<FitDiagnosis>, Option<String>), DiagnosisError> {
    let mut bad: Vec<&SoundingFit> = fits
        .iter()
        .filter(|f| f.chi2.is_finite() && f.chi2 > CHI2_ACCEPTABLE.1)
        .collect();
    bad.sort_by(|a, b| b.chi2.total_cmp(&a.chi2));
    let note = (bad.len() > MAX_DIAGNOSED).then(|| {
        format!(
            "{} soundings fit worse than χ² {}: the {MAX_DIAGNOSED} worst are diagnosed",
            bad.len(),
            CHI2_ACCEPTABLE.1
        )
    });
    bad.truncate(MAX_DIAGNOSED);
    let total = bad.len().max(1) as f64;
    let mut out = Vec::new();
    for (k, fit) in bad.into_iter().enumerate() {
        if let Some(cb) = progress.as_mut() {
            cb(
                k as f64 / total,
                &format!("diagnosing the fit of '{}'", fit.name),
            );
        }
        let Some(sounding) = soundings.get(fit.index) else {
            continue;
        };
        out.push(diagnose(sounding, fit, settings, cancel)?);
    }
    Ok((out, note))
}

/// Diagnose one sounding's fit (see the module docs).
pub fn diagnose(
    sounding: &Sounding,
    fit: &SoundingFit,
    settings: &SurveySettings,
    cancel: &AtomicBool,
) -> Result<FitDiagnosis, DiagnosisError> {
    // Phase 1: the misfit by gate.
    let residuals = fit.residuals();
    let gate_numbers = file_gate_numbers(sounding, &fit.times_s);
    let windows = window_shares(&fit.times_s, &residuals);
    let place = windows
        .iter()
        .find(|w| w.share > 0.5)
        .map(|w| MisfitPlace::In(w.window))
        .unwrap_or(MisfitPlace::Throughout);
    let worst_gates = worst_gates(&fit.times_s, &residuals, &gate_numbers, 5);
    // Phase 2: systematic or random.
    let runs_z = runs_test_z(&residuals);
    let systematic = runs_z < RUNS_Z_SYSTEMATIC;
    let sign_reversals = sign_reversals(sounding);
    // Phase 3: trials.
    let system = settings
        .system
        .as_ref()
        .or(sounding.system.as_ref())
        .cloned();
    let (baseline_chi2, trials) = match &system {
        Some(system) => {
            let baseline = refit(sounding, system, settings, cancel)?.ok();
            let trials = run_trials(sounding, system, settings, &windows, place, cancel)?;
            (baseline, trials)
        }
        None => (None, vec![]),
    };
    let mut d = FitDiagnosis {
        name: fit.name.clone(),
        chi2: fit.chi2,
        n_gates: residuals.len(),
        windows,
        place,
        worst_gates,
        runs_z,
        systematic,
        sign_reversals,
        stacks: sounding.stacks,
        baseline_chi2,
        trials,
        conclusion: String::new(),
    };
    // Phase 4: the conclusion.
    d.conclusion = conclude(&d);
    Ok(d)
}

/// The 1-based file gate number of each inverted gate time (matched by time).
fn file_gate_numbers(sounding: &Sounding, times_s: &[f64]) -> Vec<usize> {
    times_s
        .iter()
        .map(|t| {
            sounding
                .times_s
                .iter()
                .position(|s| (s - t).abs() <= 1e-9 * t.abs().max(1e-12))
                .map(|i| i + 1)
                .unwrap_or(0)
        })
        .collect()
}

/// Phase 1: Σ r² in three windows of equal width in log₁₀ t over the inverted gates.
fn window_shares(times_s: &[f64], residuals: &[f64]) -> Vec<WindowShare> {
    let logs: Vec<f64> = times_s.iter().map(|t| t.max(1e-30).log10()).collect();
    let lo = logs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let width = ((hi - lo) / 3.0).max(f64::MIN_POSITIVE);
    let total: f64 = residuals.iter().map(|r| r * r).sum();
    [TimeWindow::Early, TimeWindow::Middle, TimeWindow::Late]
        .into_iter()
        .enumerate()
        .map(|(k, window)| {
            let inside: Vec<usize> = (0..logs.len())
                .filter(|&i| (((logs[i] - lo) / width).floor() as usize).min(2) == k)
                .collect();
            let sum: f64 = inside.iter().map(|&i| residuals[i].powi(2)).sum();
            WindowShare {
                window,
                from_s: inside.first().map(|&i| times_s[i]).unwrap_or(f64::NAN),
                to_s: inside.last().map(|&i| times_s[i]).unwrap_or(f64::NAN),
                n_gates: inside.len(),
                share: if total > 0.0 { sum / total } else { 0.0 },
                chi2: if inside.is_empty() {
                    0.0
                } else {
                    sum / inside.len() as f64
                },
            }
        })
        .collect()
}

/// The `n` largest |r|, largest first.
fn worst_gates(times_s: &[f64], residuals: &[f64], gates: &[usize], n: usize) -> Vec<GateMisfit> {
    let mut order: Vec<usize> = (0..residuals.len()).collect();
    order.sort_by(|&a, &b| residuals[b].abs().total_cmp(&residuals[a].abs()));
    order
        .into_iter()
        .take(n)
        .map(|i| GateMisfit {
            gate: gates.get(i).copied().unwrap_or(0),
            time_s: times_s[i],
            residual: residuals[i],
        })
        .collect()
}

/// Phase 2: the Wald–Wolfowitz runs-test z of the signs of `residuals` (zeros skipped);
/// 0 when one sign is missing or fewer than 3 residuals (no evidence either way).
pub fn runs_test_z(residuals: &[f64]) -> f64 {
    let signs: Vec<bool> = residuals
        .iter()
        .filter(|r| **r != 0.0 && r.is_finite())
        .map(|r| *r > 0.0)
        .collect();
    let n = signs.len() as f64;
    let n_pos = signs.iter().filter(|s| **s).count() as f64;
    let n_neg = n - n_pos;
    if signs.len() < 3 || n_pos == 0.0 || n_neg == 0.0 {
        return 0.0;
    }
    let runs = 1.0 + signs.windows(2).filter(|w| w[0] != w[1]).count() as f64;
    let p = 2.0 * n_pos * n_neg;
    let mu = p / n + 1.0;
    let var = p * (p - n) / (n * n * (n - 1.0));
    if var <= 0.0 {
        return 0.0;
    }
    (runs - mu) / var.sqrt()
}

/// Gates masked non-positive with a used gate on either side (1-based).
fn sign_reversals(sounding: &Sounding) -> Vec<usize> {
    let used = sounding.used_gates();
    let (Some(&first), Some(&last)) = (used.first(), used.last()) else {
        return vec![];
    };
    (first..last)
        .filter(|&i| sounding.mask[i] == Some(MaskReason::NonPositive))
        .map(|i| i + 1)
        .collect()
}

/// Re-invert `sounding` alone with `system` and the run's smooth settings: its χ², or why it
/// could not be inverted.
fn refit(
    sounding: &Sounding,
    system: &TemSystem,
    settings: &SurveySettings,
    cancel: &AtomicBool,
) -> Result<Result<f64, String>, DiagnosisError> {
    let fs = settings.forward_settings();
    let prepared =
        match Prepared::with_settings(sounding, Some(system), settings.smooth.error_floor, fs) {
            Ok(p) => p,
            Err(e) => return Ok(Err(e.to_string())),
        };
    match invert_smooth(&prepared, &settings.smooth, None, cancel) {
        Ok(r) => Ok(Ok(r.chi2)),
        Err(InversionError::Cancelled(_)) => Err(DiagnosisError::Cancelled),
        Err(e) => Ok(Err(e.to_string())),
    }
}

/// Phase 3: the re-inversions, each changing one assumption.
fn run_trials(
    sounding: &Sounding,
    system: &TemSystem,
    settings: &SurveySettings,
    windows: &[WindowShare],
    place: MisfitPlace,
    cancel: &AtomicBool,
) -> Result<Vec<Trial>, DiagnosisError> {
    let mut trials = Vec::new();
    let mut run = |what: String,
                   s: &Sounding,
                   sys: &TemSystem,
                   note: Option<String>|
     -> Result<(), DiagnosisError> {
        let (chi2, note) = match refit(s, sys, settings, cancel)? {
            Ok(c) => (Some(c), note),
            Err(e) => (None, Some(e)),
        };
        trials.push(Trial { what, chi2, note });
        Ok(())
    };
    // The turn-off ramp.
    for (what, waveform) in ramp_variants(sounding, system) {
        let mut sys = system.clone();
        sys.waveform = waveform;
        run(what, sounding, &sys, None)?;
    }
    // A noise floor: the background after the stacks.
    if let Some((floor, note)) = noise_floor(sounding) {
        let mut s = sounding.clone();
        let errors = s.errors.get_or_insert_with(|| vec![0.0; s.times_s.len()]);
        for e in errors.iter_mut() {
            *e = (e.powi(2) + floor.powi(2)).sqrt();
        }
        run(
            format!(
                "an absolute noise floor of {floor:.2e} added in quadrature to every gate's error"
            ),
            &s,
            system,
            Some(note),
        )?;
    }
    // The loop size.
    for factor in [0.9, 1.1] {
        let sys = scaled_loop(system, factor);
        run(
            format!(
                "transmitter loop {:.0} % of the declared size ({})",
                factor * 100.0,
                loop_words(&sys.transmitter)
            ),
            sounding,
            &sys,
            None,
        )?;
    }
    // Without the window that carries the misfit.
    if let MisfitPlace::In(window) = place
        && let Some(w) = windows.iter().find(|w| w.window == window)
    {
        let mut s = sounding.clone();
        for (i, t) in s.times_s.iter().enumerate() {
            if s.mask[i].is_none() && *t >= w.from_s && *t <= w.to_s {
                s.mask[i] = Some(MaskReason::UserExcluded);
            }
        }
        run(
            format!(
                "without the {} gates ({:.3e}–{:.3e} s, {} gates)",
                window.word(),
                w.from_s,
                w.to_s,
                w.n_gates
            ),
            &s,
            system,
            Some("fewer data: a lower χ² here says where the misfit is, not that those gates are wrong".into()),
        )?;
    }
    Ok(trials)
}

/// The ramps tried: step-off, half, twice and four times a declared linear ramp; for a
/// step-off system ramps of 1/8, 1/4 and 1/2 of the first gate time; nothing for a measured
/// piecewise waveform (it is the instrument's own record).
fn ramp_variants(sounding: &Sounding, system: &TemSystem) -> Vec<(String, Waveform)> {
    let us = |s: f64| s * 1e6;
    match system.waveform {
        Waveform::LinearRamp { ramp_s } if ramp_s > 0.0 => {
            let mut v = vec![(
                format!("step-off instead of the declared {:.2} µs ramp", us(ramp_s)),
                Waveform::StepOff,
            )];
            for f in [0.5, 2.0, 4.0] {
                v.push((
                    format!(
                        "a {:.2} µs ramp ({f}× the declared {:.2} µs)",
                        us(ramp_s * f),
                        us(ramp_s)
                    ),
                    Waveform::LinearRamp { ramp_s: ramp_s * f },
                ));
            }
            v
        }
        Waveform::StepOff | Waveform::LinearRamp { .. } => {
            let Some(t1) = sounding
                .used_gates()
                .first()
                .map(|&i| sounding.times_s[i])
                .filter(|t| *t > 0.0)
            else {
                return vec![];
            };
            [0.125, 0.25, 0.5]
                .into_iter()
                .map(|f| {
                    (
                        format!(
                            "a {:.2} µs linear ramp instead of step-off ({f} × the first gate time)",
                            us(t1 * f)
                        ),
                        Waveform::LinearRamp { ramp_s: t1 * f },
                    )
                })
                .collect()
        }
        Waveform::PiecewiseLinear { .. } => vec![],
    }
}

/// The noise floor: the median file error of the last three used gates, where the signal is
/// nearest the background, so that their error is the best estimate of the background left
/// after stacking. With N stacks each file error is itself a standard deviation estimated
/// from N samples, uncertain by 1/√(2(N − 1)) (the standard error of a sample standard
/// deviation of a normal population).
fn noise_floor(sounding: &Sounding) -> Option<(f64, String)> {
    let errors = sounding.errors.as_ref()?;
    let used = sounding.used_gates();
    let mut last: Vec<f64> = used
        .iter()
        .rev()
        .take(3)
        .map(|&i| errors[i].abs())
        .filter(|e| e.is_finite() && *e > 0.0)
        .collect();
    if last.is_empty() {
        return None;
    }
    last.sort_by(f64::total_cmp);
    let floor = last[last.len() / 2];
    let note = match sounding.stacks {
        Some(n) if n > 1 => format!(
            "from the last three used gates' errors; with {n} stacks each file error is itself uncertain by about {:.0} %",
            100.0 / (2.0 * (f64::from(n) - 1.0)).sqrt()
        ),
        Some(n) => format!("from the last three used gates' errors ({n} stack)"),
        None => "from the last three used gates' errors (the file does not say how many stacks)"
            .to_string(),
    };
    Some((floor, note))
}

/// The system with the transmitter loop's size scaled by `factor` (a central receiver keeps
/// its own area; a coincident receiver is the loop itself and follows it).
fn scaled_loop(system: &TemSystem, factor: f64) -> TemSystem {
    let mut sys = system.clone();
    sys.transmitter = match system.transmitter {
        LoopShape::Circle { radius_m } => LoopShape::Circle {
            radius_m: radius_m * factor,
        },
        LoopShape::Square { side_m } => LoopShape::Square {
            side_m: side_m * factor,
        },
    };
    if let Receiver::Offset { offset_m, .. } = &mut sys.receiver {
        *offset_m *= factor;
    }
    sys
}

fn loop_words(shape: &LoopShape) -> String {
    match shape {
        LoopShape::Circle { radius_m } => format!("radius {radius_m:.1} m"),
        LoopShape::Square { side_m } => format!("side {side_m:.1} m"),
    }
}

/// Phase 4: the conclusion in words.
fn conclude(d: &FitDiagnosis) -> String {
    let good = CHI2_ACCEPTABLE.1;
    let mut parts = Vec::new();
    let where_words = match d.place {
        MisfitPlace::In(w) => {
            let share = d
                .windows
                .iter()
                .find(|s| s.window == w)
                .map(|s| s.share)
                .unwrap_or(0.0);
            format!(
                "{:.0} % of the misfit is in the {} gates",
                share * 100.0,
                w.word()
            )
        }
        MisfitPlace::Throughout => "the misfit is spread over the whole decay".to_string(),
    };
    parts.push(format!(
        "χ² {:.2} over {} gates; {where_words}; the residuals are {} (runs test z = {:.1})",
        d.chi2,
        d.n_gates,
        if d.systematic {
            "systematic"
        } else {
            "random in sign"
        },
        d.runs_z
    ));
    let explaining = d
        .trials
        .iter()
        .filter(|t| !t.what.starts_with("without"))
        .filter_map(|t| t.chi2.map(|c| (t, c)))
        .filter(|(_, c)| *c <= good)
        .min_by(|a, b| a.1.total_cmp(&b.1));
    let base = d
        .baseline_chi2
        .map(|b| format!("{b:.2}"))
        .unwrap_or_else(|| "n/a".into());
    if let Some(b) = d.baseline_chi2.filter(|b| *b <= good) {
        parts.push(format!(
            "inverted alone it fits (χ² {b:.2}): the lateral constraint to its neighbours makes the misfit, so this sounding differs from them"
        ));
    } else if let Some((t, c)) = explaining {
        parts.push(format!(
            "explained by {}: re-inverted alone, χ² falls from {base} to {c:.2}",
            t.what
        ));
    } else if let Some((t, c)) = d
        .trials
        .iter()
        .filter(|t| t.what.starts_with("without"))
        .find_map(|t| t.chi2.map(|c| (t, c)))
        .filter(|(_, c)| *c <= good)
    {
        parts.push(format!(
            "no change of ramp, noise floor or loop size brings χ² to {good}; {}, χ² is {c:.2} (from {base}): those gates carry it{}",
            t.what,
            early_late_hint(d.place)
        ));
    } else if !d.systematic {
        parts.push(format!(
            "no trial explains it and the residuals look like noise: the errors are probably underestimated by about ×{:.1} (√χ²)",
            d.chi2.max(0.0).sqrt()
        ));
    } else {
        parts.push(format!(
            "no trial explains it: a 1D model does not reproduce this decay{}",
            early_late_hint(d.place)
        ));
    }
    if !d.sign_reversals.is_empty() {
        parts.push(format!(
            "gate(s) {} reverse sign inside the decay (masked), the mark of induced polarisation or a 3D conductor, which no 1D resistivity model produces",
            d.sign_reversals
                .iter()
                .map(|g| g.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    parts.join("; ") + "."
}

fn early_late_hint(place: MisfitPlace) -> &'static str {
    match place {
        MisfitPlace::In(TimeWindow::Early) => {
            " (early gates: the turn-off or receiver transient, or a shallow lateral change)"
        }
        MisfitPlace::In(TimeWindow::Late) => {
            " (late gates: background noise, induced polarisation or a 3D body at depth)"
        }
        MisfitPlace::In(TimeWindow::Middle) | MisfitPlace::Throughout => {
            " (3D structure, induced polarisation or a system description that is not the instrument's)"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::tdem::data::{Position, ResponseUnit};
    use crate::methods::tdem::forward::{Forward, LayeredEarth, Quantity};
    use crate::methods::tdem::invert::SmoothSettings;
    use crate::methods::tdem::invert::tests::normals;

    /// 24 gates from 2 µs to 1 ms.
    fn gate_times_s() -> Vec<f64> {
        (0..24)
            .map(|i| 2e-6 * 500f64.powf(i as f64 / 23.0))
            .collect()
    }

    fn earth() -> LayeredEarth {
        LayeredEarth::new(vec![100.0, 10.0], vec![30.0]).unwrap()
    }

    fn system(waveform: Waveform) -> TemSystem {
        TemSystem {
            waveform,
            ..TemSystem::central_loop(20.0)
        }
    }

    /// Data computed with `truth`, relative noise `noise`, file errors `error` × |value|, and
    /// the file declaring `declared`.
    fn sounding(
        truth: &TemSystem,
        declared: &TemSystem,
        noise: f64,
        error: f64,
        seed: u64,
    ) -> Sounding {
        let times = gate_times_s();
        let clean = Forward::new(truth, &times, Quantity::DbDt)
            .unwrap()
            .response(&earth());
        let z = normals(seed, times.len());
        let values: Vec<f64> = clean
            .iter()
            .zip(&z)
            .map(|(v, e)| v * (1.0 + noise * e))
            .collect();
        Sounding {
            name: "S1".into(),
            mask: vec![None; times.len()],
            stacks: Some(11),
            errors: Some(values.iter().map(|v| error * v.abs()).collect()),
            times_s: times,
            values,
            unit: ResponseUnit::VoltPerAmpM2,
            unit_stated: true,
            instrument_rhoa_ohm_m: None,
            position: Position::default(),
            system: Some(declared.clone()),
            notes: vec![],
        }
    }

    fn settings(error_floor: f64) -> SurveySettings {
        SurveySettings {
            smooth: SmoothSettings {
                n_layers: 20,
                error_floor,
                ..SmoothSettings::default()
            },
            ..SurveySettings::default()
        }
    }

    /// The sounding inverted alone, as the pipeline records it.
    fn fit_alone(s: &Sounding, settings: &SurveySettings) -> SoundingFit {
        let p = Prepared::new(s, None, settings.smooth.error_floor).unwrap();
        let r = invert_smooth(&p, &settings.smooth, None, &AtomicBool::new(false)).unwrap();
        SoundingFit {
            index: 0,
            name: s.name.clone(),
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
            few_layer: None,
            few_layer_chi2: None,
        }
    }

    #[test]
    fn runs_test_matches_the_closed_form() {
        // n₊ = n₋ = 4: μ = 2·16/8 + 1 = 5, σ² = 32·(32 − 8)/(64·7) = 12/7 (Wald & Wolfowitz
        // 1940); alternating signs give R = 8, z = 3/√(12/7); two blocks R = 2, z = −3/√(12/7).
        let sigma = (12.0f64 / 7.0).sqrt();
        let alternating = [1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0];
        let blocked = [1.0, 2.0, 1.0, 3.0, -1.0, -2.0, -1.0, -3.0];
        assert!((runs_test_z(&alternating) - 3.0 / sigma).abs() < 1e-12);
        assert!((runs_test_z(&blocked) + 3.0 / sigma).abs() < 1e-12);
        assert!(runs_test_z(&blocked) < RUNS_Z_SYSTEMATIC);
        // One sign only, or too few: no evidence either way.
        assert_eq!(runs_test_z(&[1.0, 2.0, 3.0, 4.0]), 0.0);
        assert_eq!(runs_test_z(&[1.0, -1.0]), 0.0);
    }

    #[test]
    fn a_sounding_that_fits_is_not_diagnosed() {
        // Data from the declared system with 1 % noise and 1 % errors: χ² reaches ≈ 1.
        let sys = system(Waveform::LinearRamp { ramp_s: 5e-6 });
        let s = sounding(&sys, &sys, 0.01, 0.01, 7);
        let settings = settings(0.01);
        let fit = fit_alone(&s, &settings);
        assert!(fit.chi2 <= CHI2_ACCEPTABLE.1, "χ² {}", fit.chi2);
        let (d, note) =
            diagnose_fits(&[s], &[fit], &settings, None, &AtomicBool::new(false)).unwrap();
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(note, None);
    }

    #[test]
    fn a_ramp_four_times_the_declared_one_is_found_in_the_early_gates() {
        // The instrument's ramp is 40 µs, the file declares 10 µs: a ramp averages the step
        // response over its length (Fitterman & Anderson 1987), which a smooth model absorbs
        // in its top layers when the first gate is late (measured here: with gates from 4 µs
        // χ² stays 0.85); from 2 µs it cannot (χ² 2.97), and the trial with 4× the declared
        // ramp is the truth, so re-inverted with it χ² falls back to the noise level (≤ 1.5).
        let truth = system(Waveform::LinearRamp { ramp_s: 40e-6 });
        let declared = system(Waveform::LinearRamp { ramp_s: 10e-6 });
        let s = sounding(&truth, &declared, 0.01, 0.01, 11);
        let settings = settings(0.01);
        let fit = fit_alone(&s, &settings);
        assert!(fit.chi2 > CHI2_ACCEPTABLE.1, "χ² {}", fit.chi2);
        let d = diagnose(&s, &fit, &settings, &AtomicBool::new(false)).unwrap();
        assert_eq!(d.place, MisfitPlace::In(TimeWindow::Early), "{d:?}");
        let four = d
            .trials
            .iter()
            .find(|t| t.what.starts_with("a 40.00 µs ramp"))
            .unwrap_or_else(|| panic!("{:?}", d.trials));
        assert!(four.chi2.unwrap() <= CHI2_ACCEPTABLE.1, "{four:?}");
        assert!(
            d.conclusion.contains("explained by a 40.00 µs ramp"),
            "{}",
            d.conclusion
        );
        // The loop-size trials do not explain it.
        for t in d
            .trials
            .iter()
            .filter(|t| t.what.starts_with("transmitter loop"))
        {
            assert!(t.chi2.unwrap() > CHI2_ACCEPTABLE.1, "{t:?}");
        }
        assert_eq!(d.stacks, Some(11));
        assert!(d.worst_gates.len() == 5 && d.worst_gates[0].gate >= 1);
    }

    #[test]
    fn random_misfit_is_read_as_underestimated_errors() {
        // 6 % noise, the file says 1.5 %, no floor: χ² ≈ (6/1.5)² = 16 spread over the whole
        // decay, random in sign; no assumption changes that, so the errors are underestimated
        // by about √χ².
        let sys = system(Waveform::LinearRamp { ramp_s: 5e-6 });
        let s = sounding(&sys, &sys, 0.06, 0.015, 3);
        let settings = settings(0.0);
        let fit = fit_alone(&s, &settings);
        assert!(fit.chi2 > 4.0, "χ² {}", fit.chi2);
        let d = diagnose(&s, &fit, &settings, &AtomicBool::new(false)).unwrap();
        assert!(!d.systematic, "z {}", d.runs_z);
        assert!(
            d.conclusion.contains("errors are probably underestimated"),
            "{}",
            d.conclusion
        );
        assert!(d.trials.iter().any(|t| t.what.contains("noise floor")
            && t.note.as_deref().is_some_and(|n| n.contains("11 stacks"))));
    }

    #[test]
    fn cancelling_stops_the_diagnosis() {
        let truth = system(Waveform::LinearRamp { ramp_s: 40e-6 });
        let declared = system(Waveform::LinearRamp { ramp_s: 10e-6 });
        let s = sounding(&truth, &declared, 0.01, 0.01, 11);
        let settings = settings(0.01);
        let fit = fit_alone(&s, &settings);
        let e = diagnose(&s, &fit, &settings, &AtomicBool::new(true)).unwrap_err();
        assert_eq!(e, DiagnosisError::Cancelled);
    }
}
