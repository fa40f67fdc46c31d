//! 1D TDEM inversions of one sounding: the smooth many-layer Occam inversion (Constable,
//! Parker & Constable 1987, Geophysics 52(3), 289–300) and a few-layer Marquardt
//! (Levenberg 1944; Marquardt 1963) inversion, both with the analytic Jacobian of
//! [`forward`](super::forward), and the depth of investigation of Christiansen & Auken
//! (2012, Geophysics 77(4), WB171–WB177).
//!
//! Model parameters are m = ln ρ per layer (and ln h per thickness for the few-layer
//! inversion). The data misfit is χ² = (1/N) Σ ((dᵢ − Fᵢ(m))/σᵢ)², σᵢ = max(errᵢ, floor·|dᵢ|).

use super::data::{ResponseUnit, Sounding};
use super::forward::{
    Forward, ForwardError, ForwardSettings, JacobianParams, LayeredEarth, TemSystem,
};
use super::linalg::{spd_inverse, spd_solve};
use ndarray::{Array1, Array2, Axis};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Why an inversion could not run or finish.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum InversionError {
    /// Fewer usable gates than needed.
    #[error("only {0} usable gates: at least {1} are needed to invert")]
    TooFewGates(usize, usize),
    /// No system was given and the file did not describe one.
    #[error("no system (loop, receiver, waveform) for sounding '{0}'")]
    NoSystem(String),
    /// The forward model could not be set up.
    #[error(transparent)]
    Forward(#[from] ForwardError),
    /// The user cancelled.
    #[error("cancelled after {0} iterations")]
    Cancelled(usize),
    /// The settings are inconsistent.
    #[error("invalid settings: {0}")]
    Settings(String),
}

/// A progress callback: fraction done in [0, 1] and a short description.
pub type Progress<'a> = Option<&'a mut dyn FnMut(f64, &str)>;

/// One sounding prepared for inversion: the usable gates, their data and standard deviations
/// and the forward operator.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// Name of the sounding.
    pub name: String,
    /// Times of the usable gates [s].
    pub times_s: Vec<f64>,
    /// Indices of the usable gates in the sounding.
    pub gate_index: Vec<usize>,
    /// Observed values (the sounding's unit).
    pub observed: Vec<f64>,
    /// Standard deviations with the error floor (same unit).
    pub sigma: Vec<f64>,
    /// Unit of `observed`.
    pub unit: ResponseUnit,
    /// The system modelled.
    pub system: TemSystem,
    forward: Forward,
    scale: f64,
}

impl Prepared {
    /// Prepare the usable gates of `sounding` with `system` (or the sounding's own system)
    /// and an error floor (relative).
    pub fn new(
        sounding: &Sounding,
        system: Option<&TemSystem>,
        error_floor: f64,
    ) -> Result<Self, InversionError> {
        Prepared::with_settings(sounding, system, error_floor, ForwardSettings::default())
    }

    /// As [`Prepared::new`] with explicit forward settings (e.g. the fast 101-point filters).
    pub fn with_settings(
        sounding: &Sounding,
        system: Option<&TemSystem>,
        error_floor: f64,
        forward_settings: ForwardSettings,
    ) -> Result<Self, InversionError> {
        let system = system
            .or(sounding.system.as_ref())
            .ok_or_else(|| InversionError::NoSystem(sounding.name.clone()))?
            .clone();
        let end_off = system.waveform.end_of_turn_off_s();
        let gate_index: Vec<usize> = sounding
            .used_gates()
            .into_iter()
            .filter(|&i| sounding.times_s[i] > end_off)
            .collect();
        if gate_index.len() < 3 {
            return Err(InversionError::TooFewGates(gate_index.len(), 3));
        }
        let sig_all = sounding.errors_with_floor(error_floor);
        let times_s: Vec<f64> = gate_index.iter().map(|&i| sounding.times_s[i]).collect();
        let observed: Vec<f64> = gate_index.iter().map(|&i| sounding.values[i]).collect();
        let mut sigma: Vec<f64> = gate_index.iter().map(|&i| sig_all[i]).collect();
        // A zero error (floor 0 and no file error) would make χ² infinite: use 1 % then.
        for (s, d) in sigma.iter_mut().zip(&observed) {
            if s.is_nan() || *s <= 0.0 {
                *s = 0.01 * d.abs().max(f64::MIN_POSITIVE);
            }
        }
        let forward = Forward::with_settings(
            &system,
            &times_s,
            sounding.unit.quantity(),
            forward_settings,
        )?;
        let scale = sounding.unit.scale_from_model(&system);
        Ok(Prepared {
            name: sounding.name.clone(),
            times_s,
            gate_index,
            observed,
            sigma,
            unit: sounding.unit,
            system,
            forward,
            scale,
        })
    }

    /// Number of data.
    pub fn n_data(&self) -> usize {
        self.observed.len()
    }

    /// Predicted data for a model (the sounding's unit).
    pub fn predict(&self, earth: &LayeredEarth) -> Vec<f64> {
        self.forward
            .response(earth)
            .into_iter()
            .map(|v| v * self.scale)
            .collect()
    }

    /// Predicted data and Jacobian (∂/∂ln ρ, then ∂/∂ln h when asked for).
    pub fn predict_with_jacobian(
        &self,
        earth: &LayeredEarth,
        params: JacobianParams,
    ) -> (Vec<f64>, Array2<f64>) {
        let (d, mut j) = self.forward.response_and_jacobian(earth, params);
        j *= self.scale;
        (d.into_iter().map(|v| v * self.scale).collect(), j)
    }

    /// χ² = (1/N) Σ ((d − f)/σ)².
    pub fn chi2(&self, predicted: &[f64]) -> f64 {
        let n = self.n_data() as f64;
        self.observed
            .iter()
            .zip(predicted)
            .zip(&self.sigma)
            .map(|((d, f), s)| ((d - f) / s).powi(2))
            .sum::<f64>()
            / n
    }

    /// Relative RMS misfit in percent: 100·√((1/N) Σ ((d − f)/d)²).
    pub fn rrms_percent(&self, predicted: &[f64]) -> f64 {
        let n = self.n_data() as f64;
        100.0
            * (self
                .observed
                .iter()
                .zip(predicted)
                .map(|(d, f)| ((d - f) / d).powi(2))
                .sum::<f64>()
                / n)
                .sqrt()
    }

    /// A starting resistivity: the median late-time apparent resistivity of the usable gates
    /// (100 Ω·m if none is defined).
    pub fn median_rhoa(&self) -> f64 {
        let mut s = Sounding {
            name: String::new(),
            times_s: self.times_s.clone(),
            values: self.observed.clone(),
            errors: None,
            unit: self.unit,
            unit_stated: true,
            instrument_rhoa_ohm_m: None,
            position: Default::default(),
            system: None,
            mask: vec![None; self.n_data()],
            stacks: None,
            notes: vec![],
        };
        s.system = Some(self.system.clone());
        let mut r: Vec<f64> = s
            .late_time_rhoa(&self.system)
            .into_iter()
            .flatten()
            .filter(|v| v.is_finite() && *v > 0.0)
            .collect();
        if r.is_empty() {
            return 100.0;
        }
        r.sort_by(f64::total_cmp);
        r[r.len() / 2]
    }

    /// The depth range a default smooth model spans: the first layer a tenth of the diffusion
    /// depth at the earliest gate, the half-space below 1.2× the diffusion depth at the latest
    /// gate (both with the median late-time ρa; Spies 1989 diffusion depth √(2tρ/μ0)).
    pub fn default_depth_range(&self) -> (f64, f64) {
        let rho = self.median_rhoa().clamp(0.5, 1e4);
        let tmin = self.times_s.iter().copied().fold(f64::INFINITY, f64::min);
        let tmax = self.times_s.iter().copied().fold(0.0, f64::max);
        let first = (0.1 * super::analytic::diffusion_depth_m(tmin, rho)).max(0.5);
        let bottom = (1.2 * super::analytic::diffusion_depth_m(tmax, rho)).max(20.0 * first);
        (first, bottom)
    }
}

/// n − 1 thicknesses growing geometrically from `first_m` so that the half-space starts at
/// `bottom_depth_m` (the ratio q solves Σ first·qⁱ = bottom by bisection).
pub fn log_spaced_thicknesses(n_layers: usize, first_m: f64, bottom_depth_m: f64) -> Vec<f64> {
    let k = n_layers.saturating_sub(1);
    if k == 0 {
        return vec![];
    }
    let total = |q: f64| (0..k).map(|i| first_m * q.powi(i as i32)).sum::<f64>();
    if total(1.0) >= bottom_depth_m {
        return vec![bottom_depth_m / k as f64; k];
    }
    let (mut lo, mut hi) = (1.0, 2.0);
    while total(hi) < bottom_depth_m {
        hi *= 2.0;
    }
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if total(mid) < bottom_depth_m {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (0..k).map(|i| first_m * lo.powi(i as i32)).collect()
}

/// One iteration as recorded: the record every method shares
/// ([`crate::methods::shared::IterationRecord`]).
pub use crate::methods::shared::IterationRecord;

/// How the smooth inversion chooses λ.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LambdaMode {
    /// Occam: each iteration searches λ; the smallest misfit while above the target, then
    /// the largest λ that keeps the target.
    Occam,
    /// A fixed λ with Gauss–Newton steps (for the shared λ-retry rubric).
    Fixed {
        /// The λ on the roughness.
        lambda: f64,
    },
}

/// Settings of the smooth inversion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SmoothSettings {
    /// Number of layers including the half-space.
    pub n_layers: usize,
    /// Explicit thicknesses (n_layers − 1 values); overrides the depth range.
    pub thicknesses_m: Option<Vec<f64>>,
    /// Thickness of the first layer [m] (default from the data, see
    /// [`Prepared::default_depth_range`]).
    pub first_thickness_m: Option<f64>,
    /// Depth of the top of the half-space [m] (default from the data).
    pub bottom_depth_m: Option<f64>,
    /// Relative error floor.
    pub error_floor: f64,
    /// Target χ².
    pub target_chi2: f64,
    /// Iteration cap.
    pub max_iterations: usize,
    /// λ choice.
    pub lambda_mode: LambdaMode,
    /// Starting λ for the Occam search (default: tr(JᵀWᵀWJ)/tr(RᵀR) of the start model).
    pub lambda0: Option<f64>,
    /// Uniform starting resistivity [Ω·m] (default: median late-time ρa).
    pub start_rho_ohm_m: Option<f64>,
    /// Weight of a smallness term towards the starting model relative to the roughness
    /// (keeps undetermined deep layers at the start value).
    pub alpha_s: f64,
    /// Bounds on the resistivity [Ω·m].
    pub rho_bounds_ohm_m: (f64, f64),
    /// Christiansen & Auken (2012) DOI threshold.
    pub doi_threshold: f64,
}

impl Default for SmoothSettings {
    fn default() -> Self {
        SmoothSettings {
            n_layers: 30,
            thicknesses_m: None,
            first_thickness_m: None,
            bottom_depth_m: None,
            error_floor: 0.03,
            target_chi2: 1.0,
            max_iterations: 20,
            lambda_mode: LambdaMode::Occam,
            lambda0: None,
            start_rho_ohm_m: None,
            alpha_s: 1e-4,
            rho_bounds_ohm_m: (0.1, 1e5),
            doi_threshold: 0.8,
        }
    }
}

/// The depth of investigation of a layered model (Christiansen & Auken 2012): with the
/// error-normalised sensitivities sⱼ = Σᵢ |∂dᵢ/∂ln ρⱼ| / σᵢ, per metre s*ⱼ = sⱼ/hⱼ, and the
/// cumulative Sⱼ = Σ_{k≥j} s*ₖ summed from the deepest layer up, the DOI is the bottom depth of
/// the deepest layer with Sⱼ above the threshold (0.8 in the paper's calibration).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Doi {
    /// The DOI [m]; `None` when even the top layer is below the threshold.
    pub doi_m: Option<f64>,
    /// The threshold used.
    pub threshold: f64,
    /// s*ⱼ per layer above the half-space.
    pub sensitivity_per_m: Vec<f64>,
    /// Sⱼ per layer above the half-space.
    pub cumulative: Vec<f64>,
}

/// [`Doi`] from a Jacobian with respect to ln ρ (rows gates, columns layers incl. the
/// half-space), the data standard deviations and the thicknesses.
pub fn doi_christiansen_auken(
    jac: &Array2<f64>,
    sigma: &[f64],
    thickness_m: &[f64],
    threshold: f64,
) -> Doi {
    let n = thickness_m.len();
    let s: Vec<f64> = (0..n)
        .map(|j| {
            (0..jac.nrows())
                .map(|i| (jac[[i, j]] / sigma[i]).abs())
                .sum::<f64>()
                / thickness_m[j]
        })
        .collect();
    let mut cum = vec![0.0; n];
    let mut acc = 0.0;
    for j in (0..n).rev() {
        acc += s[j];
        cum[j] = acc;
    }
    let mut depth = 0.0;
    let mut doi = None;
    for j in 0..n {
        depth += thickness_m[j];
        if cum[j] > threshold {
            doi = Some(depth);
        }
    }
    Doi {
        doi_m: doi,
        threshold,
        sensitivity_per_m: s,
        cumulative: cum,
    }
}

/// The result of a smooth inversion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SmoothResult {
    /// Sounding name.
    pub name: String,
    /// The final model.
    pub model: LayeredEarth,
    /// Final χ².
    pub chi2: f64,
    /// χ² of the start model and after every iteration.
    pub chi2_history: Vec<f64>,
    /// Relative RMS misfit [%].
    pub rrms_percent: f64,
    /// Iterations done.
    pub iterations: usize,
    /// Final λ.
    pub lambda: f64,
    /// Number of data.
    pub n_data: usize,
    /// Number of model cells (layers).
    pub n_cells: usize,
    /// Final roughness ‖R ln ρ‖².
    pub roughness: f64,
    /// Whether χ² reached the target.
    pub reached_target: bool,
    /// Why the iterations stopped.
    pub stop_reason: String,
    /// Gate times [s], observed, predicted, standard deviations (sounding's unit).
    pub times_s: Vec<f64>,
    /// Observed data.
    pub observed: Vec<f64>,
    /// Predicted data.
    pub predicted: Vec<f64>,
    /// Standard deviations used.
    pub sigma: Vec<f64>,
    /// Depth of investigation.
    pub doi: Doi,
    /// Every iteration.
    pub history: Vec<IterationRecord>,
    /// What was assumed (default layering, start model, …).
    pub notes: Vec<String>,
}

/// First-difference roughness matrix R ((N−1) × N).
pub(crate) fn roughness_matrix(n: usize) -> Array2<f64> {
    let mut r = Array2::<f64>::zeros((n.saturating_sub(1), n));
    for i in 0..n.saturating_sub(1) {
        r[[i, i]] = -1.0;
        r[[i, i + 1]] = 1.0;
    }
    r
}

/// Solve (JwᵀJw + λ(RᵀR + αI)) m = Jwᵀ(rw + Jw m_k) + λα m_ref, the Occam/GN update for
/// the linearised problem around m_k (Constable et al. 1987, eq. 9 with a smallness term).
fn regularised_step(
    jtj: &Array2<f64>,
    jt_dhat: &Array1<f64>,
    rtr: &Array2<f64>,
    lambda: f64,
    alpha: f64,
    m_ref: &Array1<f64>,
) -> Option<Array1<f64>> {
    let n = jtj.nrows();
    let mut a = jtj + &(rtr * lambda);
    for i in 0..n {
        a[[i, i]] += lambda * alpha;
    }
    let b = jt_dhat + &(m_ref * (lambda * alpha));
    spd_solve(&a, &b)
}

pub(crate) fn earth_from_ln(m: &[f64], thick: &[f64]) -> LayeredEarth {
    LayeredEarth {
        rho_ohm_m: m.iter().map(|v| v.exp()).collect(),
        thickness_m: thick.to_vec(),
    }
}

/// A regularised problem the Occam loop can drive: misfit, linearisation, the regularised
/// solve for a given λ, roughness.
pub(crate) trait OccamProblem: Sync {
    /// The linearisation at a model (Jacobian products and right-hand sides).
    type Lin: Sync;
    /// χ² of a model (∞ when it cannot be evaluated).
    fn misfit(&self, m: &Array1<f64>) -> f64;
    /// Linearise at m.
    fn linearize(&self, m: &Array1<f64>) -> Self::Lin;
    /// A natural starting λ: tr(JᵀWᵀWJ)/tr(RᵀR).
    fn lambda_scale(&self, lin: &Self::Lin) -> f64;
    /// The model minimising the linearised objective for λ (bounds applied).
    fn solve(&self, lin: &Self::Lin, lambda: f64) -> Option<Array1<f64>>;
    /// The regularisation norm reported as φ_m.
    fn roughness(&self, m: &Array1<f64>) -> f64;
}

/// Loop control shared by the single-sounding and the line inversions.
pub(crate) struct OccamControl {
    pub target: f64,
    pub max_iterations: usize,
    pub lambda_mode: LambdaMode,
    pub lambda0: Option<f64>,
}

/// What the Occam loop returns.
pub(crate) struct OccamOutcome {
    pub m: Array1<f64>,
    pub lambda: f64,
    pub chi2_history: Vec<f64>,
    pub history: Vec<IterationRecord>,
    pub iterations: usize,
    pub stop_reason: String,
}

/// Occam's iteration (Constable et al. 1987 §"The algorithm"): linearise, solve the
/// regularised normal equations for a fan of λ, evaluate the true χ² of each candidate; while
/// above the target take the smallest χ² (phase 1), once the target is reachable take the
/// largest λ that keeps it (phase 2, refined by interpolating ln λ in χ²). Steps that do not
/// reduce χ² are halved up to five times; the loop stops when the target is met and the
/// roughness changes by < 1 %, when χ² improves by < 1 % twice, or at the cap.
pub(crate) fn occam_loop<P: OccamProblem>(
    problem: &P,
    m0: Array1<f64>,
    ctl: &OccamControl,
    mut progress: Progress<'_>,
    cancel: &AtomicBool,
) -> Result<OccamOutcome, InversionError> {
    let start = Instant::now();
    let mut m = m0;
    let mut chi2 = problem.misfit(&m);
    let mut chi2_history = vec![chi2];
    let mut history = vec![IterationRecord {
        iteration: 0,
        chi2,
        phi_m: problem.roughness(&m),
        lambda: 0.0,
        step_length: 0.0,
        seconds: start.elapsed().as_secs_f64(),
        ..Default::default()
    }];
    let mut lambda = ctl.lambda0.unwrap_or(f64::NAN);
    let mut stop_reason = format!("iteration cap ({}) reached", ctl.max_iterations);
    let mut stalled = 0;
    let mut iterations = 0;
    let target = ctl.target;
    for it in 1..=ctl.max_iterations {
        if cancel.load(Ordering::Relaxed) {
            return Err(InversionError::Cancelled(it - 1));
        }
        if let Some(p) = progress.as_mut() {
            p(
                (it - 1) as f64 / ctl.max_iterations as f64,
                &format!("iteration {it}, χ² {chi2:.3}"),
            );
        }
        let lin = problem.linearize(&m);
        if lambda.is_nan() {
            lambda = problem.lambda_scale(&lin).max(1e-12);
        }
        let candidates: Vec<f64> = match ctl.lambda_mode {
            LambdaMode::Fixed { lambda: l } => vec![l],
            LambdaMode::Occam => {
                // First iteration: a wide fan. Later, four values on the side the phase
                // needs: smaller λ while above the target, larger once it is reached.
                let exps: &[f64] = if it == 1 {
                    &[-3.0, -2.0, -1.0, 0.0, 1.0]
                } else if chi2 > target {
                    &[-1.0, -0.5, 0.0, 0.5]
                } else {
                    &[-0.5, 0.0, 0.5, 1.0]
                };
                exps.iter().map(|e| lambda * 10f64.powf(*e)).collect()
            }
        };
        let try_all = |cands: &[f64]| -> Vec<(f64, Array1<f64>, f64)> {
            cands
                .par_iter()
                .filter_map(|&l| {
                    let mn = problem.solve(&lin, l)?;
                    let c = problem.misfit(&mn);
                    Some((l, mn, c))
                })
                .collect()
        };
        let mut trials = try_all(&candidates);
        // Above the target with the best at the smallest λ tried: extend the search down.
        if let LambdaMode::Occam = ctl.lambda_mode {
            let lmin = candidates.iter().copied().fold(f64::INFINITY, f64::min);
            let best = trials.iter().min_by(|a, b| a.2.total_cmp(&b.2));
            if best.is_some_and(|b| b.2 > target && b.0 <= lmin) {
                trials.extend(try_all(&[lmin * 0.1, lmin * 0.01]));
            }
        }
        let Some(first) = trials.first().cloned() else {
            stop_reason = "the normal equations could not be solved".into();
            break;
        };
        let feasible = trials
            .iter()
            .filter(|t| t.2 <= target)
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .cloned();
        let (mut best_l, mut best_m, mut best_c) = match feasible {
            Some(t) => t,
            None => trials
                .iter()
                .min_by(|a, b| a.2.total_cmp(&b.2))
                .cloned()
                .unwrap_or(first),
        };
        if best_c <= target
            && let Some(next) = trials
                .iter()
                .filter(|t| t.0 > best_l)
                .min_by(|a, b| a.0.total_cmp(&b.0))
        {
            let f = (target - best_c) / (next.2 - best_c);
            let l = (best_l.ln() + f.clamp(0.0, 1.0) * (next.0.ln() - best_l.ln())).exp();
            if let Some(mn) = problem.solve(&lin, l) {
                let c = problem.misfit(&mn);
                if c <= target {
                    (best_l, best_m, best_c) = (l, mn, c);
                }
            }
        }
        let mut step = 1.0;
        if best_c > target && best_c >= chi2 {
            let mut found = false;
            for _ in 0..5 {
                step *= 0.5;
                let mn = &m + &((&best_m - &m) * step);
                let c = problem.misfit(&mn);
                if c < chi2 {
                    best_m = mn;
                    best_c = c;
                    found = true;
                    break;
                }
            }
            if !found {
                stop_reason = format!("no step reduced χ² below {chi2:.3}");
                break;
            }
        }
        let rough_before = problem.roughness(&m);
        let improvement = (chi2 - best_c) / chi2.max(1e-300);
        m = best_m;
        lambda = best_l;
        chi2 = best_c;
        iterations = it;
        chi2_history.push(chi2);
        let phi = problem.roughness(&m);
        history.push(IterationRecord {
            iteration: it,
            chi2,
            phi_m: phi,
            lambda,
            step_length: step,
            seconds: start.elapsed().as_secs_f64(),
            ..Default::default()
        });
        if chi2 <= target * 1.001 {
            let change = (phi - rough_before).abs() / rough_before.max(1e-12);
            if change < 0.01 || matches!(ctl.lambda_mode, LambdaMode::Fixed { .. }) {
                stop_reason = "target χ² reached and the model no longer smooths".into();
                break;
            }
        } else if improvement < 0.01 {
            stalled += 1;
            if stalled >= 2 {
                stop_reason = format!("χ² stalled at {chi2:.3} (improvement < 1 % twice)");
                break;
            }
        } else {
            stalled = 0;
        }
    }
    if let Some(p) = progress.as_mut() {
        p(1.0, &format!("done, χ² {chi2:.3}"));
    }
    Ok(OccamOutcome {
        m,
        lambda,
        chi2_history,
        history,
        iterations,
        stop_reason,
    })
}

/// The layering of a smooth model from the settings (explicit thicknesses, or log-spaced
/// over the given or data-derived depth range), with a note when derived from the data.
pub(crate) fn smooth_layering(
    settings: &SmoothSettings,
    default_range: (f64, f64),
    notes: &mut Vec<String>,
) -> Result<Vec<f64>, InversionError> {
    match &settings.thicknesses_m {
        Some(t) => {
            if t.is_empty() || t.iter().any(|h| !(*h > 0.0 && h.is_finite())) {
                return Err(InversionError::Settings(
                    "thicknesses must be positive".into(),
                ));
            }
            Ok(t.clone())
        }
        None => {
            if settings.n_layers < 2 {
                return Err(InversionError::Settings("at least 2 layers".into()));
            }
            let first = settings.first_thickness_m.unwrap_or(default_range.0);
            let bottom = settings.bottom_depth_m.unwrap_or(default_range.1);
            if !(first > 0.0 && bottom > first) {
                return Err(InversionError::Settings(format!(
                    "first thickness {first} m and bottom depth {bottom} m are not consistent"
                )));
            }
            if settings.first_thickness_m.is_none() || settings.bottom_depth_m.is_none() {
                notes.push(format!(
                    "layering from the data: {} layers, first {first:.1} m, half-space below {bottom:.0} m (diffusion depths at the first and last gate)",
                    settings.n_layers
                ));
            }
            Ok(log_spaced_thicknesses(settings.n_layers, first, bottom))
        }
    }
}

/// One sounding as an Occam problem.
struct SingleProblem<'a> {
    data: &'a Prepared,
    thick: Vec<f64>,
    rtr: Array2<f64>,
    rmat: Array2<f64>,
    w: Array1<f64>,
    obs: Array1<f64>,
    m_ref: Array1<f64>,
    alpha: f64,
    bounds: (f64, f64),
}

impl OccamProblem for SingleProblem<'_> {
    type Lin = (Array2<f64>, Array1<f64>);

    fn misfit(&self, m: &Array1<f64>) -> f64 {
        let c = self
            .data
            .chi2(&self.data.predict(&earth_from_ln(&m.to_vec(), &self.thick)));
        if c.is_finite() { c } else { f64::INFINITY }
    }

    fn linearize(&self, m: &Array1<f64>) -> Self::Lin {
        let earth = earth_from_ln(&m.to_vec(), &self.thick);
        let (pred, jac) = self
            .data
            .predict_with_jacobian(&earth, JacobianParams::LogRho);
        let jw = &jac * &self.w.view().insert_axis(Axis(1));
        let rw = (&self.obs - &Array1::from_vec(pred)) * &self.w;
        let dhat = &rw + &jw.dot(m);
        (jw.t().dot(&jw), jw.t().dot(&dhat))
    }

    fn lambda_scale(&self, lin: &Self::Lin) -> f64 {
        lin.0.diag().sum() / self.rtr.diag().sum().max(1e-300)
    }

    fn solve(&self, lin: &Self::Lin, lambda: f64) -> Option<Array1<f64>> {
        let m = regularised_step(&lin.0, &lin.1, &self.rtr, lambda, self.alpha, &self.m_ref)?;
        Some(m.mapv(|v| v.clamp(self.bounds.0, self.bounds.1)))
    }

    fn roughness(&self, m: &Array1<f64>) -> f64 {
        self.rmat.dot(m).mapv(|v| v * v).sum()
    }
}

/// The smooth many-layer (Occam) inversion of one prepared sounding.
pub fn invert_smooth(
    data: &Prepared,
    settings: &SmoothSettings,
    progress: Progress<'_>,
    cancel: &AtomicBool,
) -> Result<SmoothResult, InversionError> {
    let mut notes = Vec::new();
    let thick = smooth_layering(settings, data.default_depth_range(), &mut notes)?;
    let n = thick.len() + 1;
    let rho0 = settings.start_rho_ohm_m.unwrap_or_else(|| {
        let r = data.median_rhoa();
        notes.push(format!(
            "start model: half-space of {r:.1} Ω·m (median late-time ρa)"
        ));
        r
    });
    let bounds = (
        settings.rho_bounds_ohm_m.0.ln(),
        settings.rho_bounds_ohm_m.1.ln(),
    );
    let m_ref = Array1::from_elem(n, rho0.ln().clamp(bounds.0, bounds.1));
    let rmat = roughness_matrix(n);
    let problem = SingleProblem {
        data,
        thick: thick.clone(),
        rtr: rmat.t().dot(&rmat),
        rmat,
        w: data.sigma.iter().map(|s| 1.0 / s).collect(),
        obs: Array1::from_vec(data.observed.clone()),
        m_ref: m_ref.clone(),
        alpha: settings.alpha_s,
        bounds,
    };
    let ctl = OccamControl {
        target: settings.target_chi2,
        max_iterations: settings.max_iterations,
        lambda_mode: settings.lambda_mode,
        lambda0: settings.lambda0,
    };
    let out = occam_loop(&problem, m_ref, &ctl, progress, cancel)?;
    let earth = earth_from_ln(&out.m.to_vec(), &thick);
    let (predicted, jac) = data.predict_with_jacobian(&earth, JacobianParams::LogRho);
    let chi2 = data.chi2(&predicted);
    let doi = doi_christiansen_auken(&jac, &data.sigma, &thick, settings.doi_threshold);
    Ok(SmoothResult {
        name: data.name.clone(),
        chi2,
        rrms_percent: data.rrms_percent(&predicted),
        iterations: out.iterations,
        lambda: out.lambda,
        n_data: data.n_data(),
        n_cells: n,
        roughness: problem.roughness(&out.m),
        reached_target: chi2 <= settings.target_chi2 * 1.001,
        stop_reason: out.stop_reason,
        times_s: data.times_s.clone(),
        observed: data.observed.clone(),
        predicted,
        sigma: data.sigma.clone(),
        doi,
        chi2_history: out.chi2_history,
        history: out.history,
        notes,
        model: earth,
    })
}

/// Settings of the few-layer inversion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FewLayerSettings {
    /// Number of layers including the half-space (used when no start model is given).
    pub n_layers: usize,
    /// Starting model (default: the smooth model collapsed at its largest jumps, or
    /// log-spaced interfaces over the default depth range).
    pub start: Option<LayeredEarth>,
    /// Relative error floor.
    pub error_floor: f64,
    /// Iteration cap.
    pub max_iterations: usize,
    /// Bounds on the resistivity [Ω·m].
    pub rho_bounds_ohm_m: (f64, f64),
    /// DOI threshold.
    pub doi_threshold: f64,
}

impl Default for FewLayerSettings {
    fn default() -> Self {
        FewLayerSettings {
            n_layers: 3,
            start: None,
            error_floor: 0.03,
            max_iterations: 30,
            rho_bounds_ohm_m: (0.1, 1e5),
            doi_threshold: 0.8,
        }
    }
}

/// The result of a few-layer inversion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FewLayerResult {
    /// Sounding name.
    pub name: String,
    /// The final model.
    pub model: LayeredEarth,
    /// Final χ².
    pub chi2: f64,
    /// χ² history.
    pub chi2_history: Vec<f64>,
    /// Relative RMS [%].
    pub rrms_percent: f64,
    /// Iterations.
    pub iterations: usize,
    /// Final Marquardt damping.
    pub lambda: f64,
    /// Number of data.
    pub n_data: usize,
    /// Number of layers.
    pub n_cells: usize,
    /// Standard-deviation factors exp(√Cᵢᵢ) of ρ per layer, from the posterior covariance
    /// C = (JᵀWᵀWJ)⁻¹ of the ln-parameters (Auken et al. 2005's "STDF"; > 2 means poorly
    /// determined). `None` where the matrix is singular.
    pub rho_std_factor: Vec<Option<f64>>,
    /// The same for the thicknesses.
    pub thickness_std_factor: Vec<Option<f64>>,
    /// Gate times [s].
    pub times_s: Vec<f64>,
    /// Observed data.
    pub observed: Vec<f64>,
    /// Predicted data.
    pub predicted: Vec<f64>,
    /// Standard deviations.
    pub sigma: Vec<f64>,
    /// DOI computed on the model refined into 60 layers (Christiansen & Auken 2012).
    pub doi: Doi,
    /// Why it stopped.
    pub stop_reason: String,
    /// Every iteration.
    pub history: Vec<IterationRecord>,
    /// Notes.
    pub notes: Vec<String>,
}

/// A few-layer start model from a smooth one: interfaces at the n−1 largest jumps of ln ρ,
/// each layer's resistivity the geometric mean of the smooth layers it covers.
pub fn blocky_from_smooth(smooth: &LayeredEarth, n_layers: usize) -> LayeredEarth {
    let n = smooth.n_layers();
    let k = n_layers.clamp(1, n) - 1;
    let mut jumps: Vec<(usize, f64)> = (0..n - 1)
        .map(|i| {
            (
                i,
                (smooth.rho_ohm_m[i + 1].ln() - smooth.rho_ohm_m[i].ln()).abs(),
            )
        })
        .collect();
    jumps.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut cuts: Vec<usize> = jumps.iter().take(k).map(|j| j.0).collect();
    cuts.sort_unstable();
    let tops = smooth.top_depths_m();
    let mut rho = Vec::new();
    let mut thick = Vec::new();
    let mut from = 0;
    for &c in cuts.iter().chain(std::iter::once(&(n - 1))) {
        let to = if c == n - 1 { n } else { c + 1 };
        let slice = &smooth.rho_ohm_m[from..to];
        let gm = (slice.iter().map(|r| r.ln()).sum::<f64>() / slice.len() as f64).exp();
        rho.push(gm);
        if to < n {
            thick.push(tops[to] - tops[from]);
        }
        from = to;
    }
    LayeredEarth {
        rho_ohm_m: rho,
        thickness_m: thick,
    }
}

/// The few-layer Marquardt inversion of one prepared sounding: parameters ln ρ and ln h,
/// steps (JᵀWᵀWJ + μ diag(JᵀWᵀWJ)) Δ = JᵀWᵀW r (Marquardt 1963), μ divided by 3 after an
/// accepted step and multiplied by 4 after a rejected one.
pub fn invert_few_layer(
    data: &Prepared,
    settings: &FewLayerSettings,
    mut progress: Progress<'_>,
    cancel: &AtomicBool,
) -> Result<FewLayerResult, InversionError> {
    let start = Instant::now();
    let mut notes = Vec::new();
    let start_model = match &settings.start {
        Some(s) => s.clone(),
        None => {
            let (first, bottom) = data.default_depth_range();
            let nl = settings.n_layers.max(1);
            let tops: Vec<f64> = (1..nl)
                .map(|i| {
                    (first.max(bottom / 20.0))
                        * (bottom / first.max(bottom / 20.0))
                            .powf((i - 1) as f64 / (nl - 1).max(1) as f64)
                })
                .collect();
            let mut thick = Vec::new();
            let mut prev = 0.0;
            for t in tops {
                thick.push(t - prev);
                prev = t;
            }
            let r = data.median_rhoa();
            notes.push(format!(
                "start model: {nl} layers of {r:.1} Ω·m, interfaces log-spaced to {bottom:.0} m"
            ));
            LayeredEarth {
                rho_ohm_m: vec![r; nl],
                thickness_m: thick,
            }
        }
    };
    let nl = start_model.n_layers();
    if data.n_data() < 2 * nl {
        return Err(InversionError::TooFewGates(data.n_data(), 2 * nl));
    }
    let (lo, hi) = (
        settings.rho_bounds_ohm_m.0.ln(),
        settings.rho_bounds_ohm_m.1.ln(),
    );
    let np = 2 * nl - 1;
    let mut p = Array1::from_iter(
        start_model
            .rho_ohm_m
            .iter()
            .map(|r| r.ln())
            .chain(start_model.thickness_m.iter().map(|h| h.ln())),
    );
    let to_earth = |p: &Array1<f64>| LayeredEarth {
        rho_ohm_m: (0..nl).map(|i| p[i].clamp(lo, hi).exp()).collect(),
        thickness_m: (nl..np).map(|i| p[i].clamp(-3.0, 10.0).exp()).collect(),
    };
    let w: Array1<f64> = data.sigma.iter().map(|s| 1.0 / s).collect();
    let obs = Array1::from_vec(data.observed.clone());
    let mut chi2 = data.chi2(&data.predict(&to_earth(&p)));
    let mut chi2_history = vec![chi2];
    let mut history = vec![IterationRecord {
        iteration: 0,
        chi2,
        phi_m: 0.0,
        lambda: 0.0,
        step_length: 0.0,
        seconds: start.elapsed().as_secs_f64(),
        ..Default::default()
    }];
    let mut mu = 1.0;
    let mut stop_reason = format!("iteration cap ({}) reached", settings.max_iterations);
    let mut iterations = 0;
    for it in 1..=settings.max_iterations {
        if cancel.load(Ordering::Relaxed) {
            return Err(InversionError::Cancelled(it - 1));
        }
        if let Some(cb) = progress.as_mut() {
            cb(
                (it - 1) as f64 / settings.max_iterations as f64,
                &format!("iteration {it}, χ² {chi2:.3}"),
            );
        }
        let (pred, jac) =
            data.predict_with_jacobian(&to_earth(&p), JacobianParams::LogRhoAndLogThickness);
        let jw = &jac * &w.view().insert_axis(Axis(1));
        let rw = (&obs - &Array1::from_vec(pred)) * &w;
        let jtj = jw.t().dot(&jw);
        let g = jw.t().dot(&rw);
        let mut accepted = false;
        for _ in 0..8 {
            let mut a = jtj.clone();
            for i in 0..np {
                a[[i, i]] += mu * jtj[[i, i]].max(1e-12) + 1e-10;
            }
            let Some(dp) = spd_solve(&a, &g) else {
                mu *= 4.0;
                continue;
            };
            // Limit a step to a factor e² in any parameter.
            let maxstep = dp.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
            let dp = if maxstep > 2.0 {
                dp * (2.0 / maxstep)
            } else {
                dp
            };
            let pn = &p + &dp;
            let c = data.chi2(&data.predict(&to_earth(&pn)));
            if c.is_finite() && c < chi2 {
                let rel = (chi2 - c) / chi2;
                p = pn;
                chi2 = c;
                mu = (mu / 3.0).max(1e-8);
                accepted = true;
                iterations = it;
                chi2_history.push(chi2);
                history.push(IterationRecord {
                    iteration: it,
                    chi2,
                    phi_m: dp.mapv(|v| v * v).sum(),
                    lambda: mu,
                    step_length: 1.0,
                    seconds: start.elapsed().as_secs_f64(),
                    ..Default::default()
                });
                if rel < 1e-4 {
                    stop_reason = "χ² changed by less than 0.01 %".into();
                }
                break;
            }
            mu *= 4.0;
        }
        if !accepted {
            stop_reason = "no Marquardt step reduced χ² (converged)".into();
            break;
        }
        if stop_reason.starts_with("χ² changed") {
            break;
        }
    }
    if let Some(cb) = progress.as_mut() {
        cb(1.0, &format!("done, χ² {chi2:.3}"));
    }
    let earth = to_earth(&p);
    let (predicted, jac) =
        data.predict_with_jacobian(&earth, JacobianParams::LogRhoAndLogThickness);
    let jw = &jac * &w.view().insert_axis(Axis(1));
    let cov = spd_inverse(&jw.t().dot(&jw));
    let stdf = |i: usize| cov.as_ref().map(|c| c[[i, i]].max(0.0).sqrt().exp());
    // DOI on the model refined into 60 layers down to 1.5× the deepest interface (or the
    // default bottom when there is one layer).
    let tops = earth.top_depths_m();
    let deepest = tops
        .last()
        .copied()
        .unwrap_or(0.0)
        .max(data.default_depth_range().1 / 1.5);
    let fine_thick = vec![1.5 * deepest / 59.0; 59];
    let mut fine_rho = Vec::with_capacity(60);
    let mut z = 0.0;
    for h in fine_thick.iter().chain(std::iter::once(&0.0)) {
        let mid = z + 0.5 * h;
        let layer = tops.iter().rposition(|t| *t <= mid).unwrap_or(0);
        fine_rho.push(earth.rho_ohm_m[layer]);
        z += h;
    }
    let fine = LayeredEarth {
        rho_ohm_m: fine_rho,
        thickness_m: fine_thick.clone(),
    };
    let (_, jfine) = data.predict_with_jacobian(&fine, JacobianParams::LogRho);
    let doi = doi_christiansen_auken(&jfine, &data.sigma, &fine_thick, settings.doi_threshold);
    Ok(FewLayerResult {
        name: data.name.clone(),
        chi2: data.chi2(&predicted),
        rrms_percent: data.rrms_percent(&predicted),
        iterations,
        lambda: mu,
        n_data: data.n_data(),
        n_cells: nl,
        rho_std_factor: (0..nl).map(stdf).collect(),
        thickness_std_factor: (nl..np).map(stdf).collect(),
        times_s: data.times_s.clone(),
        observed: data.observed.clone(),
        predicted,
        sigma: data.sigma.clone(),
        doi,
        stop_reason,
        chi2_history,
        history,
        notes,
        model: earth,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::methods::tdem::data::{MaskLimits, Position};
    use crate::methods::tdem::forward::Quantity;
    use crate::methods::tdem::readers::{ReadOptions, read_table, read_temfast};

    /// Deterministic standard normal numbers (splitmix64 + Box–Muller) for synthetic noise.
    pub(crate) fn normals(seed: u64, n: usize) -> Vec<f64> {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            (z >> 11) as f64 / (1u64 << 53) as f64
        };
        (0..n)
            .map(|_| {
                let (u1, u2) = (next().max(1e-300), next());
                (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
            })
            .collect()
    }

    pub(crate) fn synthetic_sounding(earth: &LayeredEarth, noise: f64, seed: u64) -> Sounding {
        let times: Vec<f64> = (0..24)
            .map(|i| 1e-5 * 1000f64.powf(i as f64 / 23.0))
            .collect();
        let sys = TemSystem::central_loop(20.0);
        let clean = Forward::new(&sys, &times, Quantity::DbDt)
            .unwrap()
            .response(earth);
        let z = normals(seed, times.len());
        let values: Vec<f64> = clean
            .iter()
            .zip(&z)
            .map(|(v, e)| v * (1.0 + noise * e))
            .collect();
        let errors = Some(values.iter().map(|v| noise.max(1e-6) * v.abs()).collect());
        Sounding {
            name: "synthetic".into(),
            mask: vec![None; times.len()],
            stacks: None,
            times_s: times,
            values,
            errors,
            unit: ResponseUnit::VoltPerAmpM2,
            unit_stated: true,
            instrument_rhoa_ohm_m: None,
            position: Position::default(),
            system: Some(sys),
            notes: vec![],
        }
    }

    fn three_layer() -> LayeredEarth {
        LayeredEarth::new(vec![100.0, 10.0, 500.0], vec![20.0, 40.0]).unwrap()
    }

    /// Geometric-mean resistivity of the smooth model between two depths.
    fn mean_rho_between(m: &LayeredEarth, z0: f64, z1: f64) -> f64 {
        let tops = m.top_depths_m();
        let mut acc = 0.0;
        let mut wsum = 0.0;
        for i in 0..m.n_layers() {
            let top = tops[i];
            let bot = if i + 1 < m.n_layers() {
                tops[i + 1]
            } else {
                f64::INFINITY
            };
            let overlap = (bot.min(z1) - top.max(z0)).max(0.0);
            acc += overlap * m.rho_ohm_m[i].ln();
            wsum += overlap;
        }
        (acc / wsum).exp()
    }

    #[test]
    fn smooth_inversion_recovers_a_buried_conductor() {
        // Synthetic 100/10/500 Ω·m (20, 40 m) central-loop decay, 3 % Gaussian noise and 3 %
        // errors: Occam reaches χ² ≤ 1 (target) and the model puts a conductor (< 30 Ω·m mean)
        // in 25–55 m under a resistive top (> 50 Ω·m mean in 0–15 m); DOI below 60 m.
        let s = synthetic_sounding(&three_layer(), 0.03, 7);
        let data = Prepared::new(&s, None, 0.03).unwrap();
        let chi2_true = data.chi2(&data.predict(&three_layer()));
        let cancel = AtomicBool::new(false);
        let r = invert_smooth(&data, &SmoothSettings::default(), None, &cancel).unwrap();
        eprintln!(
            "smooth synthetic: χ² {:.3} (true model {chi2_true:.3}) after {} iterations ({}), DOI {:?}",
            r.chi2, r.iterations, r.stop_reason, r.doi.doi_m
        );
        assert!(r.chi2 <= 1.0 * 1.001, "χ² {}", r.chi2);
        assert!(mean_rho_between(&r.model, 25.0, 55.0) < 30.0);
        assert!(mean_rho_between(&r.model, 0.0, 15.0) > 50.0);
        assert!(r.doi.doi_m.unwrap() > 60.0);
        assert_eq!(r.chi2_history.len(), r.iterations + 1);
        assert_eq!(r.history.len(), r.iterations + 1);
    }

    #[test]
    fn few_layer_inversion_recovers_the_true_model_from_clean_data() {
        // Noise-free data (0.1 % errors) from 100/10/500 Ω·m, 20/40 m, start 3 × 50 Ω·m at
        // 10/40 m: ρ₁, ρ₂, h₁ within 2 %, h₂ within 5 % (ρ₂h₂ is the well-resolved product),
        // χ² ≤ 1.
        let s = synthetic_sounding(&three_layer(), 0.0, 1);
        let data = Prepared::new(&s, None, 0.001).unwrap();
        let settings = FewLayerSettings {
            start: Some(LayeredEarth::new(vec![50.0, 50.0, 50.0], vec![10.0, 30.0]).unwrap()),
            error_floor: 0.001,
            ..FewLayerSettings::default()
        };
        let r = invert_few_layer(&data, &settings, None, &AtomicBool::new(false)).unwrap();
        let m = &r.model;
        eprintln!(
            "few-layer: {:?} {:?} χ² {:.3e} ({})",
            m.rho_ohm_m, m.thickness_m, r.chi2, r.stop_reason
        );
        assert!(r.chi2 <= 1.0);
        assert!((m.rho_ohm_m[0] / 100.0 - 1.0).abs() < 0.02);
        assert!((m.rho_ohm_m[1] / 10.0 - 1.0).abs() < 0.02);
        assert!((m.thickness_m[0] / 20.0 - 1.0).abs() < 0.02);
        assert!((m.thickness_m[1] / 40.0 - 1.0).abs() < 0.05);
        assert!(r.rho_std_factor.iter().all(|f| f.is_some()));
    }

    #[test]
    fn progress_is_reported_and_reaches_one() {
        // Two iterations on a synthetic sounding: the callback sees fractions that never
        // decrease and a final 1.0; the history has one record per iteration plus the start.
        let s = synthetic_sounding(&three_layer(), 0.03, 3);
        let data = Prepared::new(&s, None, 0.03).unwrap();
        let settings = SmoothSettings {
            n_layers: 12,
            max_iterations: 2,
            ..SmoothSettings::default()
        };
        let mut seen: Vec<f64> = Vec::new();
        let mut cb = |f: f64, _: &str| seen.push(f);
        let r = invert_smooth(&data, &settings, Some(&mut cb), &AtomicBool::new(false)).unwrap();
        assert!(seen.windows(2).all(|w| w[1] >= w[0]), "{seen:?}");
        assert_eq!(seen.last(), Some(&1.0));
        assert_eq!(r.history.len(), r.iterations + 1);
        assert!(
            r.history
                .iter()
                .skip(1)
                .all(|h| h.lambda > 0.0 && h.seconds >= 0.0)
        );
    }

    #[test]
    fn cancel_flag_stops_before_the_first_iteration() {
        let s = synthetic_sounding(&three_layer(), 0.03, 3);
        let data = Prepared::new(&s, None, 0.03).unwrap();
        let cancel = AtomicBool::new(true);
        let e = invert_smooth(&data, &SmoothSettings::default(), None, &cancel).unwrap_err();
        assert_eq!(e, InversionError::Cancelled(0));
    }

    #[test]
    fn doi_deepens_with_more_accurate_data() {
        // Christiansen & Auken (2012): the DOI grows as the data errors shrink (s* ∝ 1/σ).
        let data = Prepared::new(&synthetic_sounding(&three_layer(), 0.0, 1), None, 0.03).unwrap();
        let thick = log_spaced_thicknesses(30, 2.0, 400.0);
        let earth = LayeredEarth::new(vec![50.0; 30], thick.clone()).unwrap();
        let (_, j) = data.predict_with_jacobian(&earth, JacobianParams::LogRho);
        let sig3: Vec<f64> = data.sigma.clone();
        let sig10: Vec<f64> = data.sigma.iter().map(|s| s * 10.0 / 3.0).collect();
        let d3 = doi_christiansen_auken(&j, &sig3, &thick, 0.8)
            .doi_m
            .unwrap();
        let d10 = doi_christiansen_auken(&j, &sig10, &thick, 0.8)
            .doi_m
            .unwrap();
        assert!(d3 > d10, "DOI 3 % {d3} vs 10 % {d10}");
    }

    #[test]
    fn langeoog_smooth_inversion_shows_the_freshwater_lens() {
        // Acceptance (issue 8): real TEM-FAST Langeoog, gates 5–38, 20 log-spaced layers, 3 %
        // error floor (geophysics.md §5.3.3): χ² ≤ 1.5 and the freshwater lens, > 20 Ω·m
        // above ≈ 30–40 m over < 5 Ω·m below (Costabel et al. 2017).
        let path = crate::require_data!("tdem/TEMfastLangeoog.tem");
        let f = read_temfast(&path, &ReadOptions::default()).unwrap();
        let s = &f.soundings[0];
        let data = Prepared::new(s, None, 0.03).unwrap();
        assert_eq!(data.n_data(), 34);
        let settings = SmoothSettings {
            n_layers: 20,
            ..SmoothSettings::default()
        };
        let r = invert_smooth(&data, &settings, None, &AtomicBool::new(false)).unwrap();
        let m = &r.model;
        let tops = m.top_depths_m();
        eprintln!(
            "Langeoog: χ² {:.3} in {} iterations ({}); DOI {:?}",
            r.chi2, r.iterations, r.stop_reason, r.doi.doi_m
        );
        for (t, rho) in tops.iter().zip(&m.rho_ohm_m) {
            eprintln!("  {t:7.1} m  {rho:8.2} Ω·m");
        }
        assert!(r.chi2 <= 1.5, "χ² {}", r.chi2);
        // The lens: the most resistive layer between 10 m (below the dry dune sand) and 40 m
        // exceeds 20 Ω·m; the most conductive between 35 and 70 m (above the DOI) is below
        // 5 Ω·m, and lies deeper.
        let band = |z0: f64, z1: f64| -> Vec<(f64, f64)> {
            tops.iter()
                .zip(&m.rho_ohm_m)
                .filter(|(t, _)| **t >= z0 && **t < z1)
                .map(|(t, r)| (*t, *r))
                .collect()
        };
        let fresh = band(10.0, 40.0)
            .into_iter()
            .fold((0.0, 0.0), |b, x| if x.1 > b.1 { x } else { b });
        let salt = band(35.0, 70.0)
            .into_iter()
            .fold((0.0, f64::INFINITY), |b, x| if x.1 < b.1 { x } else { b });
        assert!(fresh.1 > 20.0, "freshwater lens {fresh:?}");
        assert!(salt.1 < 5.0, "saltwater {salt:?}");
        assert!(salt.0 > fresh.0);
        assert!(
            r.doi.doi_m.is_some_and(|d| d > salt.0),
            "DOI {:?}",
            r.doi.doi_m
        );
    }

    #[test]
    fn bench_problem_inverts_to_the_target() {
        // ../shared/bench/tdem_3layer.csv with SimPEG's 30-layer mesh (2·1.1^i m) and the
        // file's 5 % errors (no floor): χ² ≤ 1 (SimPEG: 0.928 in 10 iterations,
        // tdem_3layer_truth.json `simpeg_result`), and the conductor (< 40 Ω·m mean) between
        // 25 and 55 m as in the true model.
        let Some(p) = crate::field_data::bench("tdem_3layer.csv") else {
            return;
        };
        let f = read_table(&p, &ReadOptions::default()).unwrap();
        let mut s = f.soundings[0].clone();
        s.system = Some(TemSystem::central_loop(20.0));
        s.remask(&MaskLimits::default());
        let data = Prepared::new(&s, None, 0.0).unwrap();
        let settings = SmoothSettings {
            thicknesses_m: Some((0..29).map(|i| 2.0 * 1.1f64.powi(i)).collect()),
            start_rho_ohm_m: Some(100.0),
            ..SmoothSettings::default()
        };
        let r = invert_smooth(&data, &settings, None, &AtomicBool::new(false)).unwrap();
        eprintln!(
            "bench: χ² {:.3} in {} iterations ({})",
            r.chi2, r.iterations, r.stop_reason
        );
        assert!(r.chi2 <= 1.001);
        assert!(mean_rho_between(&r.model, 25.0, 55.0) < 40.0);
    }
}
