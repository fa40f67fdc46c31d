//! Occam 1D inversion (Constable, Parker & Constable 1987, Geophysics 52(3) 289–300).
//!
//! Model: m_j = log10 ρ_j of fixed layers (thickness growing with depth, the last a
//! half-space); optionally one static-shift parameter s_c = log10 (shift factor) per curve.
//! Data: log10 ρa and phase (first quadrant) of each curve, weighted by W = diag(1/σ).
//! Roughness R1 = ‖∂m‖² with ∂ the first differences of m (their eq. 3).
//!
//! Each iteration linearises F at m_k (analytic Jacobian J, see [`super::forward`]) and, for
//! a Lagrange multiplier μ, solves (their eq. 9)
//!
//! (μ·∂ᵀ∂ + Pₛ + (WJ)ᵀWJ)·m(μ) = (WJ)ᵀ·W·d̂,  d̂ = d − F(m_k) + J·m_k,
//!
//! where Pₛ = diag(1/σₛ²) on the shift parameters (a prior on the static shift; zero rows
//! otherwise). μ is chosen by a 1D search on the true (non-linearised) misfit
//! X²(μ) = ‖W(d − F(m(μ)))‖²: phase 1, while the target cannot be met, the μ of least misfit
//! (coarse log-grid, then golden section); phase 2, once it can, the **largest** μ whose RMS
//! meets the target (bisection between the last feasible and the first infeasible grid μ,
//! keeping the feasible side). If a phase-1 step does not lower the misfit, the step is halved
//! (up to five times). The run stops when the RMS is at the target and the roughness changes by
//! less than the tolerance between iterations, when phase 1 stops improving, or at the
//! iteration cap. RMS = √(X²/N); the project's χ² is RMS² (misfit per datum).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::MtError;
use super::forward::{
    LayeredEarth, impedance_and_derivatives_core, impedance_core, mt1d_forward, sqrt_omega_mu0,
};
use super::sounding::{CurveMode, ModeCurve, MtSounding};
use super::tf::MU0;
use num_complex::Complex64;

pub use super::sounding::OccamMode;

/// Settings of an Occam run (every key optional in JSON; unknown keys are refused).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OccamOptions {
    /// Explicit layer thicknesses (m, top-down, one fewer than layers). When `None` the mesh
    /// is built by [`log_spaced_layers`] from the data's skin depths with `n_layers`.
    pub thickness_m: Option<Vec<f64>>,
    /// Number of layers (including the half-space) for the automatic mesh.
    pub n_layers: usize,
    /// Target RMS (Constable et al.: 1).
    pub target_rms: f64,
    /// Iteration cap.
    pub max_iterations: usize,
    /// Uniform starting resistivity (Ω·m); `None` = geometric mean of the apparent
    /// resistivities.
    pub start_resistivity_ohm_m: Option<f64>,
    /// Estimate one static-shift factor per curve.
    pub estimate_static_shift: bool,
    /// Prior standard deviation of log10(shift factor) (default log10 2.5 ≈ 0.40).
    pub static_shift_prior_log10: f64,
    /// Stop when the relative roughness change is below this (at the target RMS).
    pub roughness_tolerance: f64,
}

impl Default for OccamOptions {
    fn default() -> Self {
        OccamOptions {
            thickness_m: None,
            n_layers: 40,
            target_rms: 1.0,
            max_iterations: 20,
            start_resistivity_ohm_m: None,
            estimate_static_shift: false,
            static_shift_prior_log10: 2.5f64.log10(),
            roughness_tolerance: 0.01,
        }
    }
}

/// One Occam iteration as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OccamIteration {
    /// 1-based iteration number.
    pub iteration: usize,
    /// Misfit per datum (RMS²).
    pub chi2: f64,
    /// RMS misfit.
    pub rms: f64,
    /// Model roughness ‖∂m‖² (φ_m).
    pub roughness: f64,
    /// The Lagrange multiplier μ chosen (the project's λ).
    pub lambda: f64,
    /// Fraction of the full step taken (1, ½, ¼, …).
    pub step_length: f64,
    /// 1 = reaching the target (least misfit), 2 = smoothing at the target.
    pub phase: u8,
    /// Trial μ values evaluated.
    pub n_trials: usize,
    /// Wall time of the iteration, s.
    pub seconds: f64,
}

/// A static-shift estimate of one curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StaticShift {
    /// The curve.
    pub mode: CurveMode,
    /// Multiplicative factor on ρa (observed = factor × 1D response).
    pub factor: f64,
}

/// The result of [`invert_occam`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OccamResult {
    /// The layered model (top-down; last layer is the half-space).
    pub model: LayeredEarth,
    /// Static-shift factors, when estimated.
    pub static_shift: Vec<StaticShift>,
    /// Final misfit per datum (RMS²).
    pub chi2: f64,
    /// Final RMS.
    pub rms: f64,
    /// Misfit per datum of the start model and after each iteration.
    pub chi2_history: Vec<f64>,
    /// Iterations run.
    pub iterations: usize,
    /// Final μ (NaN when no iteration ran).
    #[serde(with = "super::nanser::num")]
    pub lambda: f64,
    /// Final roughness ‖∂m‖².
    pub roughness: f64,
    /// Whether the target RMS was reached.
    pub reached_target: bool,
    /// Whether the smoothing phase converged (roughness change below tolerance at target).
    pub converged: bool,
    /// Why it stopped.
    pub stop_reason: String,
    /// Data fitted.
    pub n_data: usize,
    /// Layers.
    pub n_cells: usize,
    /// Forward-model evaluations.
    pub n_forward: usize,
    /// Per-iteration record.
    pub history: Vec<OccamIteration>,
    /// Predicted curves (same modes as the data, static shift applied).
    pub predicted: Vec<ModeCurve>,
    /// Niblett–Bostick depth of the longest period on the predicted curve, m:
    /// D = √(ρa·T/(2π·μ0)) — an approximate depth of investigation.
    pub doi_m: Option<f64>,
    /// The parameters (log10 ρ, then shifts) at which the last iteration linearised; with
    /// [`occam_trial`] this reproduces that iteration for any μ.
    pub last_linearization: Vec<f64>,
    /// Settings actually used and what a reader must know.
    pub notes: Vec<String>,
}

/// Thicknesses (m) of `n_layers − 1` layers growing geometrically, h_i = first_m·q^i, with q
/// chosen (by bisection) so that the top of the half-space lies at `bottom_m`; q = 1 when
/// `bottom_m ≤ (n_layers − 1)·first_m`, i.e. equal layers of `first_m`.
pub fn log_spaced_layers(n_layers: usize, first_m: f64, bottom_m: f64) -> Vec<f64> {
    let n = n_layers.saturating_sub(1);
    if n == 0 {
        return Vec::new();
    }
    let total = |q: f64| -> f64 { (0..n).map(|i| first_m * q.powi(i as i32)).sum() };
    let q = if n == 1 || total(1.0) >= bottom_m {
        1.0
    } else {
        let (mut lo, mut hi) = (1.0, 2.0);
        while total(hi) < bottom_m && hi < 1e6 {
            hi *= 2.0;
        }
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if total(mid) < bottom_m {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        0.5 * (lo + hi)
    };
    (0..n).map(|i| first_m * q.powi(i as i32)).collect()
}

/// The data vector of a sounding: (value, σ, curve index, period index, is_phase).
struct DataRow {
    value: f64,
    sigma: f64,
    curve: usize,
    period: usize,
    phase: bool,
}

struct Problem<'a> {
    s: &'a MtSounding,
    rows: Vec<DataRow>,
    thick: Vec<f64>,
    n_layers: usize,
    n_shift: usize,
    shift_prior: f64,
}

impl Problem<'_> {
    fn n_par(&self) -> usize {
        self.n_layers + self.n_shift
    }

    /// Predicted values at `p` (log10 ρa or phase per row) and, when asked, the weighted
    /// Jacobian G = W·J (rows × params, row-major).
    fn respond(&self, p: &[f64], want_j: bool) -> (Vec<f64>, Vec<f64>) {
        let rho: Vec<f64> = p[..self.n_layers].iter().map(|m| 10f64.powf(*m)).collect();
        let np = self.n_par();
        let periods = &self.s.period_s;
        // Response per period (shared by the curves).
        let mut lr = vec![f64::NAN; periods.len()];
        let mut ph = vec![f64::NAN; periods.len()];
        let mut jr = if want_j {
            vec![0.0; periods.len() * self.n_layers]
        } else {
            Vec::new()
        };
        let mut jp = if want_j {
            vec![0.0; periods.len() * self.n_layers]
        } else {
            Vec::new()
        };
        let mut used = vec![false; periods.len()];
        for r in &self.rows {
            used[r.period] = true;
        }
        let mut dz = vec![Complex64::new(0.0, 0.0); self.n_layers];
        let mut d_up = vec![Complex64::new(0.0, 0.0); self.n_layers];
        let sqrt_rho: Vec<f64> = rho.iter().map(|r| r.sqrt()).collect();
        for (i, &t) in periods.iter().enumerate() {
            if !used[i] {
                continue;
            }
            let omega = 2.0 * std::f64::consts::PI / t;
            let sw = sqrt_omega_mu0(t);
            let z = if want_j {
                impedance_and_derivatives_core(sw, &sqrt_rho, &self.thick, &mut dz, &mut d_up)
            } else {
                impedance_core(sw, &sqrt_rho, &self.thick)
            };
            lr[i] = (z.norm_sqr() / (omega * MU0)).log10();
            ph[i] = z.im.atan2(z.re).to_degrees();
            if want_j {
                for j in 0..self.n_layers {
                    let q = dz[j] / z;
                    jr[i * self.n_layers + j] = 2.0 * q.re;
                    jp[i * self.n_layers + j] = std::f64::consts::LN_10 * q.im.to_degrees();
                }
            }
        }
        let mut pred = Vec::with_capacity(self.rows.len());
        let mut g = if want_j {
            vec![0.0; self.rows.len() * np]
        } else {
            Vec::new()
        };
        for (k, r) in self.rows.iter().enumerate() {
            if r.phase {
                pred.push(ph[r.period]);
            } else {
                let shift = if self.n_shift > 0 {
                    p[self.n_layers + r.curve]
                } else {
                    0.0
                };
                pred.push(lr[r.period] + shift);
            }
            if want_j {
                let w = 1.0 / r.sigma;
                let src = if r.phase { &jp } else { &jr };
                for j in 0..self.n_layers {
                    g[k * np + j] = w * src[r.period * self.n_layers + j];
                }
                if !r.phase && self.n_shift > 0 {
                    g[k * np + self.n_layers + r.curve] = w;
                }
            }
        }
        (pred, g)
    }

    fn chi2_sum(&self, pred: &[f64]) -> f64 {
        self.rows
            .iter()
            .zip(pred)
            .map(|(r, p)| ((r.value - p) / r.sigma).powi(2))
            .sum()
    }

    fn roughness(&self, p: &[f64]) -> f64 {
        p[..self.n_layers]
            .windows(2)
            .map(|w| (w[1] - w[0]).powi(2))
            .sum()
    }
}

/// The linear system of one linearisation: GᵀG, Gᵀd̂ (d̂ weighted).
struct Linearised {
    gtg: Vec<f64>,
    gtd: Vec<f64>,
}

fn linearise(pb: &Problem<'_>, p: &[f64]) -> (Linearised, Vec<f64>) {
    let (pred, g) = pb.respond(p, true);
    let np = pb.n_par();
    let nd = pb.rows.len();
    // d̂ = W(d − F(m) + J m) = W(d − F) + G m
    let mut dhat = vec![0.0; nd];
    for k in 0..nd {
        let r = &pb.rows[k];
        let mut gm = 0.0;
        for j in 0..np {
            gm += g[k * np + j] * p[j];
        }
        dhat[k] = (r.value - pred[k]) / r.sigma + gm;
    }
    let mut gtg = vec![0.0; np * np];
    let mut gtd = vec![0.0; np];
    for k in 0..nd {
        let row = &g[k * np..(k + 1) * np];
        for a in 0..np {
            let ga = row[a];
            if ga == 0.0 {
                continue;
            }
            gtd[a] += ga * dhat[k];
            for b in a..np {
                gtg[a * np + b] += ga * row[b];
            }
        }
    }
    for a in 0..np {
        for b in 0..a {
            gtg[a * np + b] = gtg[b * np + a];
        }
    }
    (Linearised { gtg, gtd }, pred)
}

/// Solve A x = b for symmetric positive definite A (row-major n×n) by Cholesky.
fn cholesky_solve(a: &mut [f64], n: usize, b: &mut [f64]) -> bool {
    for j in 0..n {
        let mut d = a[j * n + j];
        for k in 0..j {
            d -= a[j * n + k] * a[j * n + k];
        }
        if d.is_nan() || d <= 0.0 || !d.is_finite() {
            return false;
        }
        let d = d.sqrt();
        a[j * n + j] = d;
        for i in j + 1..n {
            let mut s = a[i * n + j];
            for k in 0..j {
                s -= a[i * n + k] * a[j * n + k];
            }
            a[i * n + j] = s / d;
        }
    }
    for i in 0..n {
        let mut s = b[i];
        for k in 0..i {
            s -= a[i * n + k] * b[k];
        }
        b[i] = s / a[i * n + i];
    }
    for i in (0..n).rev() {
        let mut s = b[i];
        for k in i + 1..n {
            s -= a[k * n + i] * b[k];
        }
        b[i] = s / a[i * n + i];
    }
    true
}

/// m(μ) for one linearisation.
fn solve_mu(pb: &Problem<'_>, lin: &Linearised, mu: f64) -> Option<Vec<f64>> {
    let np = pb.n_par();
    let nl = pb.n_layers;
    let mut a = lin.gtg.clone();
    // μ ∂ᵀ∂: tridiagonal (1, −1) differences over the layers.
    for j in 0..nl.saturating_sub(1) {
        a[j * np + j] += mu;
        a[(j + 1) * np + j + 1] += mu;
        a[j * np + j + 1] -= mu;
        a[(j + 1) * np + j] -= mu;
    }
    for c in 0..pb.n_shift {
        let i = nl + c;
        a[i * np + i] += 1.0 / (pb.shift_prior * pb.shift_prior);
    }
    let mut b = lin.gtd.clone();
    if cholesky_solve(&mut a, np, &mut b) {
        return Some(b);
    }
    // Nearly singular: add a tiny ridge and try once more.
    let mut a = lin.gtg.clone();
    let tr: f64 = (0..np).map(|i| a[i * np + i]).sum::<f64>().max(1.0);
    for j in 0..nl.saturating_sub(1) {
        a[j * np + j] += mu;
        a[(j + 1) * np + j + 1] += mu;
        a[j * np + j + 1] -= mu;
        a[(j + 1) * np + j] -= mu;
    }
    for i in 0..np {
        a[i * np + i] += 1e-10 * tr / np as f64;
    }
    for c in 0..pb.n_shift {
        let i = nl + c;
        a[i * np + i] += 1.0 / (pb.shift_prior * pb.shift_prior);
    }
    let mut b = lin.gtd.clone();
    cholesky_solve(&mut a, np, &mut b).then_some(b)
}

fn build_problem<'a>(
    s: &'a MtSounding,
    opts: &OccamOptions,
) -> Result<(Problem<'a>, Vec<String>), MtError> {
    let mut notes = Vec::new();
    let mut rows = Vec::new();
    for (c, curve) in s.curves.iter().enumerate() {
        for i in 0..s.period_s.len() {
            let (r, rs) = (curve.rhoa_ohm_m[i], curve.log10_rhoa_std[i]);
            if r.is_finite() && r > 0.0 && rs.is_finite() && rs > 0.0 {
                rows.push(DataRow {
                    value: r.log10(),
                    sigma: rs,
                    curve: c,
                    period: i,
                    phase: false,
                });
            }
            let (p, ps) = (curve.phase_deg[i], curve.phase_std_deg[i]);
            if p.is_finite() && ps.is_finite() && ps > 0.0 {
                rows.push(DataRow {
                    value: p,
                    sigma: ps,
                    curve: c,
                    period: i,
                    phase: true,
                });
            }
        }
    }
    if rows.is_empty() {
        return Err(MtError::InvalidInput(format!(
            "site {}: no finite apparent resistivity or phase with a positive error to invert",
            s.site
        )));
    }
    if s.period_s.iter().any(|t| !(t.is_finite() && *t > 0.0)) {
        return Err(MtError::InvalidInput(
            "periods must be finite and positive".into(),
        ));
    }
    let thick = match &opts.thickness_m {
        Some(t) => {
            if t.iter().any(|h| !(h.is_finite() && *h > 0.0)) {
                return Err(MtError::InvalidInput(
                    "layer thicknesses must be finite and > 0 m".into(),
                ));
            }
            notes.push(format!("Mesh as given: {} layers.", t.len() + 1));
            t.clone()
        }
        None => {
            if opts.n_layers < 2 {
                return Err(MtError::InvalidInput("at least 2 layers are needed".into()));
            }
            // Skin depth δ = √(2ρT/(2πμ0))·… ≈ 503·√(ρ·T) m.
            let rt: Vec<f64> = rows
                .iter()
                .filter(|r| !r.phase)
                .map(|r| 10f64.powf(r.value) * s.period_s[r.period])
                .collect();
            let (lo, hi) = rt
                .iter()
                .fold((f64::INFINITY, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
            let (lo, hi) = if rt.is_empty() {
                // Phase only: assume 100 Ω·m.
                let t0 = s.period_s.iter().copied().fold(f64::INFINITY, f64::min);
                let t1 = s.period_s.iter().copied().fold(0.0, f64::max);
                (100.0 * t0, 100.0 * t1)
            } else {
                (lo, hi)
            };
            let first = 503.3 * lo.sqrt() / 10.0;
            let bottom = 2.0 * 503.3 * hi.sqrt();
            notes.push(format!(
                "Mesh: {} layers, the first {:.3} m thick and growing geometrically to a \
                 half-space at {:.0} m (a tenth of the smallest and twice the largest skin depth \
                 503·√(ρa·T) of the data).",
                opts.n_layers, first, bottom
            ));
            log_spaced_layers(opts.n_layers, first, bottom)
        }
    };
    let n_layers = thick.len() + 1;
    let n_shift = if opts.estimate_static_shift {
        s.curves.len()
    } else {
        0
    };
    if n_shift > 0 {
        notes.push(format!(
            "Static shift estimated per curve with a prior σ of {:.2} in log10 (a factor {:.2}); \
             with a single curve the shift trades off against the overall resistivity level and \
             the estimate leans on that prior.",
            opts.static_shift_prior_log10,
            10f64.powf(opts.static_shift_prior_log10)
        ));
    }
    Ok((
        Problem {
            s,
            rows,
            thick,
            n_layers,
            n_shift,
            shift_prior: opts.static_shift_prior_log10.max(1e-6),
        },
        notes,
    ))
}

/// Reproduce one Occam step: linearise at `linearization` (log10 ρ then shifts) and solve for
/// `mu`; returns the new parameters and their RMS on the true forward model.
pub fn occam_trial(
    sounding: &MtSounding,
    opts: &OccamOptions,
    linearization: &[f64],
    mu: f64,
) -> Result<(Vec<f64>, f64), MtError> {
    let (pb, _) = build_problem(sounding, opts)?;
    if linearization.len() != pb.n_par() {
        return Err(MtError::InvalidInput(format!(
            "{} parameters given for {} layers and {} shifts",
            linearization.len(),
            pb.n_layers,
            pb.n_shift
        )));
    }
    let (lin, _) = linearise(&pb, linearization);
    let p = solve_mu(&pb, &lin, mu)
        .ok_or_else(|| MtError::Numerical("singular Occam system".into()))?;
    let (pred, _) = pb.respond(&p, false);
    let rms = (pb.chi2_sum(&pred) / pb.rows.len() as f64).sqrt();
    Ok((p, rms))
}

/// The progress callback: (fraction done, what is happening).
pub type Progress<'a> = dyn FnMut(f64, &str) + 'a;

/// Run Occam 1D on a sounding (module docs). `progress(fraction, detail)` is called after
/// every iteration; `cancel` is checked between iterations.
pub fn invert_occam(
    sounding: &MtSounding,
    opts: &OccamOptions,
    mut progress: Option<&mut Progress<'_>>,
    cancel: Option<&AtomicBool>,
) -> Result<OccamResult, MtError> {
    if !(opts.target_rms.is_finite() && opts.target_rms > 0.0) {
        return Err(MtError::InvalidInput(format!(
            "target RMS must be > 0, got {}",
            opts.target_rms
        )));
    }
    let (pb, mut notes) = build_problem(sounding, opts)?;
    let nd = pb.rows.len();
    let np = pb.n_par();
    let nl = pb.n_layers;
    let start = match opts.start_resistivity_ohm_m {
        Some(r) if r.is_finite() && r > 0.0 => r,
        Some(r) => {
            return Err(MtError::InvalidInput(format!(
                "start resistivity must be > 0, got {r}"
            )));
        }
        None => {
            let logs: Vec<f64> = pb
                .rows
                .iter()
                .filter(|r| !r.phase)
                .map(|r| r.value)
                .collect();
            if logs.is_empty() {
                100.0
            } else {
                10f64.powf(logs.iter().sum::<f64>() / logs.len() as f64)
            }
        }
    };
    notes.push(format!("Start model: uniform {start:.3} Ω·m."));
    let mut p = vec![start.log10(); np];
    for c in 0..pb.n_shift {
        p[nl + c] = 0.0;
    }
    let mut n_forward = 1;
    let (pred0, _) = pb.respond(&p, false);
    let mut chi2 = pb.chi2_sum(&pred0) / nd as f64;
    let mut chi2_history = vec![chi2];
    let mut history = Vec::new();
    let target_chi2 = opts.target_rms * opts.target_rms;
    let mut lambda = f64::NAN;
    let mut last_lin = p.clone();
    let mut prev_rough: Option<f64> = None;
    let mut converged = false;
    let mut reached = chi2 <= target_chi2;
    let mut stop_reason = format!("iteration cap ({}) reached", opts.max_iterations);
    let mut iterations = 0;
    // Scale of μ: where μ·∂ᵀ∂ and GᵀG are comparable.
    for it in 1..=opts.max_iterations {
        if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(MtError::Cancelled { iterations: it - 1 });
        }
        let t0 = Instant::now();
        let (lin, _) = linearise(&pb, &p);
        n_forward += 1;
        last_lin = p.clone();
        let scale = {
            let tr: f64 = (0..nl).map(|i| lin.gtg[i * np + i]).sum();
            (tr / (2.0 * (nl.max(2) - 1) as f64)).max(1e-12)
        };
        let mut n_trials = 0usize;
        let mut eval = |mu: f64, n_forward: &mut usize| -> Option<(f64, Vec<f64>)> {
            n_trials += 1;
            let q = solve_mu(&pb, &lin, mu)?;
            let (pred, _) = pb.respond(&q, false);
            *n_forward += 1;
            let c = pb.chi2_sum(&pred) / nd as f64;
            c.is_finite().then_some((c, q))
        };
        // A grid in log10 μ: the first iteration spans ten decades (step 1) around the scale
        // where μ·∂ᵀ∂ and GᵀG are comparable, later ones ±2 decades (step ½) around the
        // previous μ; the grid grows while the point sought (the largest feasible μ, or the
        // least misfit) sits on its edge.
        let l0 = scale.log10();
        let (lo_lim, hi_lim) = (l0 - 14.0, l0 + 12.0);
        let (centre, half, step): (f64, f64, f64) = if lambda.is_finite() {
            (lambda.log10(), 2.0, 0.5)
        } else {
            (l0 - 1.0, 5.0, 1.0)
        };
        let n_steps = (2.0 * half / step).round() as usize;
        let mut trials: Vec<(f64, f64, Vec<f64>)> = Vec::new();
        for i in 0..=n_steps {
            let lm = centre - half + step * i as f64;
            if let Some((c, q)) = eval(10f64.powf(lm), &mut n_forward) {
                trials.push((lm, c, q));
            }
        }
        if trials.is_empty() {
            return Err(MtError::Numerical(format!(
                "iteration {it}: no trial μ gave a solvable system"
            )));
        }
        for _ in 0..24 {
            let last = trials.len() - 1;
            let (left, right) = match (0..trials.len())
                .rev()
                .find(|&i| trials[i].1 <= target_chi2)
            {
                Some(ia) => (false, ia == last),
                None => {
                    let ib = (0..trials.len())
                        .min_by(|&a, &b| trials[a].1.total_cmp(&trials[b].1))
                        .unwrap_or(0);
                    (ib == 0, ib == last)
                }
            };
            let lm = if right {
                trials[last].0 + step
            } else if left {
                trials[0].0 - step
            } else {
                break;
            };
            if !(lo_lim..=hi_lim).contains(&lm) {
                break;
            }
            let Some((c, q)) = eval(10f64.powf(lm), &mut n_forward) else {
                break;
            };
            if right {
                trials.push((lm, c, q));
            } else {
                trials.insert(0, (lm, c, q));
            }
        }
        let feasible: Vec<usize> = (0..trials.len())
            .filter(|&i| trials[i].1 <= target_chi2)
            .collect();
        let (mut best_lm, mut best_c, mut best_q, phase);
        if let Some(&ia) = feasible.last() {
            // Phase 2: largest μ meeting the target; bisect towards the next grid μ.
            phase = 2u8;
            let (mut la, mut ca, mut qa) = (trials[ia].0, trials[ia].1, trials[ia].2.clone());
            if ia + 1 < trials.len() {
                let mut lb = trials[ia + 1].0;
                for _ in 0..7 {
                    let lm = 0.5 * (la + lb);
                    match eval(10f64.powf(lm), &mut n_forward) {
                        Some((c, q)) if c <= target_chi2 => {
                            la = lm;
                            ca = c;
                            qa = q;
                        }
                        _ => lb = lm,
                    }
                }
            }
            best_lm = la;
            best_c = ca;
            best_q = qa;
        } else {
            // Phase 1: least misfit, refined by golden section around the best grid point.
            phase = 1u8;
            let ib = (0..trials.len())
                .min_by(|&a, &b| trials[a].1.total_cmp(&trials[b].1))
                .unwrap_or(0);
            best_lm = trials[ib].0;
            best_c = trials[ib].1;
            best_q = trials[ib].2.clone();
            let (mut a, mut b) = (
                trials
                    .get(ib.wrapping_sub(1))
                    .map_or(best_lm - step, |t| t.0),
                trials.get(ib + 1).map_or(best_lm + step, |t| t.0),
            );
            let gr = 0.5 * (5f64.sqrt() - 1.0);
            let mut x1 = b - gr * (b - a);
            let mut x2 = a + gr * (b - a);
            let mut f1 = eval(10f64.powf(x1), &mut n_forward);
            let mut f2 = eval(10f64.powf(x2), &mut n_forward);
            for _ in 0..8 {
                let v1 = f1.as_ref().map_or(f64::INFINITY, |x| x.0);
                let v2 = f2.as_ref().map_or(f64::INFINITY, |x| x.0);
                if v1 < best_c
                    && let Some((c, q)) = &f1
                {
                    best_c = *c;
                    best_q = q.clone();
                    best_lm = x1;
                }
                if v2 < best_c
                    && let Some((c, q)) = &f2
                {
                    best_c = *c;
                    best_q = q.clone();
                    best_lm = x2;
                }
                if v1 < v2 {
                    b = x2;
                    x2 = x1;
                    f2 = f1.take();
                    x1 = b - gr * (b - a);
                    f1 = eval(10f64.powf(x1), &mut n_forward);
                } else {
                    a = x1;
                    x1 = x2;
                    f1 = f2.take();
                    x2 = a + gr * (b - a);
                    f2 = eval(10f64.powf(x2), &mut n_forward);
                }
            }
        }
        // Step control in phase 1: a step that does not lower the misfit is halved.
        let mut step = 1.0;
        if phase == 1 && best_c >= chi2 {
            let full = best_q.clone();
            let mut improved = false;
            for _ in 0..5 {
                step *= 0.5;
                let q: Vec<f64> = p
                    .iter()
                    .zip(&full)
                    .map(|(a, b)| a + step * (b - a))
                    .collect();
                let (pred, _) = pb.respond(&q, false);
                n_forward += 1;
                let c = pb.chi2_sum(&pred) / nd as f64;
                if c < chi2 {
                    best_q = q;
                    best_c = c;
                    improved = true;
                    break;
                }
            }
            if !improved {
                iterations = it;
                let secs = t0.elapsed().as_secs_f64();
                history.push(OccamIteration {
                    iteration: it,
                    chi2,
                    rms: chi2.sqrt(),
                    roughness: pb.roughness(&p),
                    lambda: 10f64.powf(best_lm),
                    step_length: 0.0,
                    phase,
                    n_trials,
                    seconds: secs,
                });
                chi2_history.push(chi2);
                lambda = 10f64.powf(best_lm);
                stop_reason = format!(
                    "no step lowered the misfit any further (RMS {:.3} above the target {:.3})",
                    chi2.sqrt(),
                    opts.target_rms
                );
                break;
            }
        }
        let improvement = (chi2 - best_c) / chi2.max(1e-300);
        p = best_q;
        chi2 = best_c;
        lambda = 10f64.powf(best_lm);
        iterations = it;
        let rough = pb.roughness(&p);
        let secs = t0.elapsed().as_secs_f64();
        history.push(OccamIteration {
            iteration: it,
            chi2,
            rms: chi2.sqrt(),
            roughness: rough,
            lambda,
            step_length: step,
            phase,
            n_trials,
            seconds: secs,
        });
        chi2_history.push(chi2);
        if let Some(cb) = progress.as_deref_mut() {
            cb(
                it as f64 / opts.max_iterations as f64,
                &format!(
                    "Occam iteration {it}: RMS {:.3}, μ {:.3e}, roughness {:.4}",
                    chi2.sqrt(),
                    lambda,
                    rough
                ),
            );
        }
        if chi2 <= target_chi2 {
            reached = true;
            if let Some(pr) = prev_rough {
                let change = (pr - rough).abs() / rough.max(1e-12);
                if change < opts.roughness_tolerance && phase == 2 {
                    converged = true;
                    stop_reason = format!(
                        "target RMS {:.3} met and the roughness changed by {:.2} % (< {:.1} %)",
                        opts.target_rms,
                        100.0 * change,
                        100.0 * opts.roughness_tolerance
                    );
                    break;
                }
            }
            prev_rough = Some(rough);
        } else {
            prev_rough = None;
            if phase == 1 && improvement < 1e-4 {
                stop_reason = format!(
                    "the misfit stopped improving (RMS {:.3} above the target {:.3})",
                    chi2.sqrt(),
                    opts.target_rms
                );
                break;
            }
        }
    }
    if iterations == 0 {
        stop_reason = "no iteration was run".into();
    }

    // Predicted curves.
    let model = LayeredEarth {
        resistivity_ohm_m: p[..nl].iter().map(|m| 10f64.powf(*m)).collect(),
        thickness_m: pb.thick.clone(),
    };
    let resp = mt1d_forward(&sounding.period_s, &model);
    let static_shift: Vec<StaticShift> = (0..pb.n_shift)
        .map(|c| StaticShift {
            mode: sounding.curves[c].mode,
            factor: 10f64.powf(p[nl + c]),
        })
        .collect();
    let predicted: Vec<ModeCurve> = sounding
        .curves
        .iter()
        .enumerate()
        .map(|(c, curve)| {
            let f = static_shift.get(c).map_or(1.0, |s| s.factor);
            ModeCurve {
                mode: curve.mode,
                rhoa_ohm_m: resp.rhoa_ohm_m.iter().map(|r| r * f).collect(),
                log10_rhoa_std: vec![f64::NAN; resp.rhoa_ohm_m.len()],
                phase_deg: resp.phase_deg.clone(),
                phase_std_deg: vec![f64::NAN; resp.rhoa_ohm_m.len()],
            }
        })
        .collect();
    let doi_m = sounding
        .period_s
        .iter()
        .zip(&resp.rhoa_ohm_m)
        .filter(|(t, r)| t.is_finite() && r.is_finite())
        .map(|(t, r)| (r * t / (2.0 * std::f64::consts::PI * MU0)).sqrt())
        .next_back();
    if !reached {
        notes.push(format!(
            "The target RMS {:.2} was not reached: the model shown is the best fit found (RMS {:.2}).",
            opts.target_rms,
            chi2.sqrt()
        ));
    }
    Ok(OccamResult {
        static_shift,
        chi2,
        rms: chi2.sqrt(),
        chi2_history,
        iterations,
        lambda,
        roughness: pb.roughness(&p),
        reached_target: reached,
        converged,
        stop_reason,
        n_data: nd,
        n_cells: nl,
        n_forward,
        history,
        predicted,
        doi_m,
        last_linearization: last_lin,
        notes,
        model,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::mt::sounding::ModeCurve;

    fn synthetic(periods: &[f64], earth: &LayeredEarth, rel_err: f64) -> MtSounding {
        let r = mt1d_forward(periods, earth);
        MtSounding {
            site: "synthetic".into(),
            format_label: "test".into(),
            format_guessed: false,
            period_s: periods.to_vec(),
            curves: vec![ModeCurve {
                mode: CurveMode::Xy,
                rhoa_ohm_m: r.rhoa_ohm_m.clone(),
                log10_rhoa_std: vec![2.0 * rel_err / std::f64::consts::LN_10; periods.len()],
                phase_deg: r.phase_deg.clone(),
                phase_std_deg: vec![rel_err.to_degrees(); periods.len()],
            }],
            sign_convention: None,
            notes: vec![],
        }
    }

    #[test]
    fn log_spaced_mesh_reaches_the_bottom() {
        let t = log_spaced_layers(40, 10.0, 50_000.0);
        assert_eq!(t.len(), 39);
        assert!((t.iter().sum::<f64>() - 50_000.0).abs() < 1e-6 * 50_000.0);
        assert!((t[0] - 10.0).abs() < 1e-12);
        assert!(t.windows(2).all(|w| w[1] > w[0]));
    }

    /// Noise-free data of a half-space: Occam must return (nearly) that half-space at the
    /// target, and the smoothest model (roughness ~0).
    #[test]
    fn half_space_data_give_a_flat_model() {
        let periods: Vec<f64> = (0..20)
            .map(|i| 10f64.powf(-2.0 + 0.25 * i as f64))
            .collect();
        let earth = LayeredEarth {
            resistivity_ohm_m: vec![50.0],
            thickness_m: vec![],
        };
        let s = synthetic(&periods, &earth, 0.02);
        let r = invert_occam(
            &s,
            &OccamOptions {
                start_resistivity_ohm_m: Some(500.0),
                ..OccamOptions::default()
            },
            None,
            None,
        )
        .unwrap();
        assert!(r.rms <= 1.0, "rms {}", r.rms);
        for rho in &r.model.resistivity_ohm_m {
            assert!((rho / 50.0 - 1.0).abs() < 0.05, "{rho}");
        }
        assert!(r.roughness < 1e-3, "roughness {}", r.roughness);
    }

    #[test]
    fn progress_is_reported_every_iteration() {
        let periods: Vec<f64> = (0..16).map(|i| 10f64.powf(-2.0 + 0.3 * i as f64)).collect();
        let s = synthetic(
            &periods,
            &LayeredEarth {
                resistivity_ohm_m: vec![100.0, 10.0],
                thickness_m: vec![300.0],
            },
            0.02,
        );
        let mut calls = Vec::new();
        let mut cb = |f: f64, msg: &str| calls.push((f, msg.to_string()));
        let r = invert_occam(&s, &OccamOptions::default(), Some(&mut cb), None).unwrap();
        assert_eq!(calls.len(), r.iterations);
        assert!(
            calls
                .iter()
                .all(|(f, m)| *f > 0.0 && *f <= 1.0 && m.contains("RMS"))
        );
        assert_eq!(r.chi2_history.len(), r.iterations + 1);
        assert_eq!(r.history.len(), r.iterations);
        assert!(r.history.iter().all(|h| h.seconds >= 0.0 && h.lambda > 0.0));
    }

    #[test]
    fn cancel_stops_between_iterations() {
        let periods: Vec<f64> = (0..10).map(|i| 10f64.powf(-2.0 + 0.5 * i as f64)).collect();
        let s = synthetic(
            &periods,
            &LayeredEarth {
                resistivity_ohm_m: vec![100.0, 10.0],
                thickness_m: vec![300.0],
            },
            0.02,
        );
        let flag = AtomicBool::new(true);
        let e = invert_occam(&s, &OccamOptions::default(), None, Some(&flag)).unwrap_err();
        assert_eq!(e, MtError::Cancelled { iterations: 0 });
    }

    #[test]
    fn cholesky_solves_a_known_system() {
        let mut a = vec![4.0, 2.0, 2.0, 3.0];
        let mut b = vec![2.0, 1.0];
        assert!(cholesky_solve(&mut a, 2, &mut b));
        // [[4,2],[2,3]] x = [2,1] → x = [0.5, 0].
        assert!((b[0] - 0.5).abs() < 1e-15 && b[1].abs() < 1e-15);
        let mut singular = vec![1.0, 1.0, 1.0, 1.0];
        let mut b = vec![1.0, 1.0];
        assert!(!cholesky_solve(&mut singular, 2, &mut b));
    }
}
