//! Travel-time tomography: Gauss–Newton on log-slowness with first-order smoothness.
//!
//! The objective (Günther, Rücker & Spitzer 2006, GJI 166, 506–517, eq. 2–4; Rücker,
//! Günther & Wagner 2017, C&G 109, 106–123 — the pyGIMLi formulation) is
//!
//! ```text
//!     Φ(m) = Φ_d + λ Φ_m = ‖W_d (t_obs − f(m))‖² + λ ‖C m‖²
//! ```
//!
//! with `W_d = diag(1/ε_i)` (absolute pick errors, s), `f` the shortest-path forward
//! model ([`super::forward`]) and the model `m` the transformed cell slowness:
//! `m = ln s` without bounds, or the bounded log transform
//! `m = ln(s − s_lo) − ln(s_hi − s)` when velocity bounds are set (pyGIMLi's "logarithmic
//! LU transform"). `C` has one row per pair of neighbouring cells, `w·(m_a − m_b)`, with
//! `w = 1` across vertical edges and `w = zWeight` across horizontal edges (between cells
//! stacked vertically), as pyGIMLi's `cType = 1` constraints. Each Gauss–Newton step solves
//!
//! ```text
//!     (Jᵀ W_dᵀ W_d J + λ Cᵀ C) Δm = Jᵀ W_dᵀ W_d (t_obs − f(m)) − λ Cᵀ C m
//! ```
//!
//! by CGLS (Björck 1996, Numerical Methods for Least Squares Problems, §7.4) on the stacked
//! system `[W_d J; √λ C; √μ I] Δm ≈ [W_d r; −√λ C m; 0]` with column scaling, where
//! `J = L · diag(∂s/∂m)` is the ray-length matrix `L` times the transform's derivative
//! (`∂s/∂m = s` for ln s; `(s − s_lo)(s_hi − s)/(s_hi − s_lo)` when bounded). A line search
//! on Φ (full step, then the minimum of the parabola through Φ(0), Φ'(0), Φ(1), then
//! halving) takes the step length `τ ≤ 1`.
//!
//! Shortest-path travel times are piecewise linear in the slowness (a ray switches paths
//! when a cell slows down), so a full Gauss–Newton step can promise far more than it
//! delivers; on real data (Königsee) the line search then keeps cutting steps to τ ≈ 0.2
//! and progress stalls. A Levenberg–Marquardt trust-region control (Marquardt 1963, SIAM J.
//! Appl. Math. 11, 431–441; Nocedal & Wright 2006, §10.3) handles this: the damping
//! `μ = ν · median(diag(Jᵀ W_dᵀ W_d J))` starts at 0 (plain Gauss–Newton, as pyGIMLi), is
//! raised (ν ← max(3ν, 0.01)) after a step shorter than ½ and lowered (ν ← ν/3, to 0)
//! after a step longer than 0.9. It changes the path to the minimum of Φ, not Φ itself.
//!
//! Stopping (pyGIMLi's defaults): χ² = Φ_d/N ≤ 1, a relative χ² decrease below
//! `min_dphi_percent` (2 %), or `max_iterations` (20).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::data::TravelTimes;
use super::forward::{RayGraph, SparseRows, forward};
use super::grid::{Grid, GridError, GridOptions};

/// How the starting model is chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StartModel {
    /// A vertical gradient from the data: the direct-wave velocity (at most 500 m/s) at the
    /// surface to 1.5 × the far-offset apparent velocity (at most 5000 m/s) at the bottom
    /// (the peer studio's survey-scaled default).
    FromData,
    /// A gradient linear in velocity with depth below the surface, `v_top` at the shallowest
    /// cell centre to `v_bottom` at the deepest (pyGIMLi `createGradientModel2D`).
    Gradient {
        /// Velocity at the top, m/s.
        v_top_m_per_s: f64,
        /// Velocity at the bottom, m/s.
        v_bottom_m_per_s: f64,
    },
    /// One velocity everywhere, m/s.
    Constant {
        /// The velocity, m/s.
        velocity_m_per_s: f64,
    },
}

/// Velocity bounds of the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bounds {
    /// No bounds (plain log-slowness), as pyGIMLi's default.
    None,
    /// From the data: lower = min(¼ direct-wave velocity, 100 m/s), upper = 10 000 m/s.
    FromData,
    /// Given bounds, m/s.
    Fixed {
        /// Lower velocity bound, m/s.
        min_m_per_s: f64,
        /// Upper velocity bound, m/s.
        max_m_per_s: f64,
    },
}

/// Settings of one inversion. Defaults follow pyGIMLi's `TravelTimeManager.invert`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct InversionParams {
    /// Regularisation strength λ (pyGIMLi default 20).
    pub lambda: f64,
    /// Weight of vertical smoothness relative to horizontal (pyGIMLi `zWeight`, default 1).
    pub z_weight: f64,
    /// Iteration cap (pyGIMLi default 20).
    pub max_iterations: usize,
    /// Stop when the objective Φ falls by less than this percentage in an iteration, from
    /// the third on (pyGIMLi's `minDPhi`, 2 %).
    pub min_dphi_percent: f64,
    /// Stop once χ² ≤ 1 (pyGIMLi default true).
    pub stop_at_chi1: bool,
    /// Secondary nodes per cell edge of the forward graph.
    pub secondary_nodes: usize,
    /// Relative error assumed when the data carry no errors (pyGIMLi: 3 %).
    pub relative_error: f64,
    /// Absolute error added to the assumed relative error, s (0 by default).
    pub absolute_error_s: f64,
    /// Starting model.
    pub start: StartModel,
    /// Velocity bounds (default none, as pyGIMLi; the peer's "half the direct-wave
    /// velocity" lower bound cut the fit of real lines whose near surface is slower, e.g.
    /// 95 m/s on `srtfieldline2.dat`).
    pub bounds: Bounds,
    /// Grid layout.
    pub grid: GridOptions,
    /// CGLS stops when the normal-equation residual falls below this fraction of its start.
    pub cgls_tolerance: f64,
    /// CGLS iteration cap.
    pub cgls_max_iterations: usize,
}

impl Default for InversionParams {
    fn default() -> Self {
        InversionParams {
            lambda: 20.0,
            z_weight: 1.0,
            max_iterations: 20,
            min_dphi_percent: 2.0,
            stop_at_chi1: true,
            secondary_nodes: 3,
            relative_error: 0.03,
            absolute_error_s: 0.0,
            start: StartModel::FromData,
            bounds: Bounds::None,
            grid: GridOptions::default(),
            cgls_tolerance: 1e-4,
            cgls_max_iterations: 400,
        }
    }
}

/// One iteration as recorded: the record every method shares
/// ([`crate::methods::shared::IterationRecord`]).
pub use crate::methods::shared::IterationRecord;

/// Why the iterations ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// χ² reached 1.
    Target,
    /// Φ changed by less than `min_dphi_percent`.
    Plateau,
    /// The iteration cap was reached.
    IterationCap,
    /// No step length lowered the objective.
    NoDescent,
}

/// The result of one tomography run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SeismicInversion {
    /// The model grid.
    pub grid: Grid,
    /// Velocity of every cell, m/s (cell order of [`Grid`]).
    pub velocity_m_per_s: Vec<f64>,
    /// Starting velocity of every cell, m/s.
    pub start_velocity_m_per_s: Vec<f64>,
    /// Total ray length in every cell for the final model, m (pyGIMLi `rayCoverage`).
    pub coverage_m: Vec<f64>,
    /// Cells crossed by a ray or next to one (pyGIMLi `standardizedCoverage`).
    pub covered: Vec<bool>,
    /// Indices (into the input picks) of the picks inverted.
    pub used_picks: Vec<usize>,
    /// Observed times of the picks inverted, s.
    pub observed_s: Vec<f64>,
    /// Errors used, s.
    pub error_s: Vec<f64>,
    /// Modelled times of the final model, s.
    pub response_s: Vec<f64>,
    /// Final χ².
    pub chi2: f64,
    /// χ² of the start model and after each iteration.
    pub chi2_history: Vec<f64>,
    /// Final relative RMS, %.
    pub rrms_percent: f64,
    /// Gauss–Newton iterations done.
    pub iterations: usize,
    /// λ used.
    pub lambda: f64,
    /// Picks inverted.
    pub n_data: usize,
    /// Model cells.
    pub n_cells: usize,
    /// Every iteration.
    pub history: Vec<IterationRecord>,
    /// Why it stopped.
    pub stop_reason: StopReason,
    /// Velocity bounds used, m/s.
    pub bounds_m_per_s: Option<(f64, f64)>,
    /// The settings used (after data-derived defaults were filled in).
    pub params: InversionParams,
    /// What was assumed or derived (errors, start model, bounds, grid), one sentence each.
    pub notes: Vec<String>,
    /// Total wall time, s.
    pub seconds: f64,
}

/// Why an inversion could not run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum InversionError {
    /// Too few usable picks.
    #[error("only {0} usable picks (at least 8 with positive time and non-zero offset are needed)")]
    TooFewPicks(usize),
    /// The data are internally inconsistent.
    #[error("the travel-time data are inconsistent: {0}")]
    BadData(String),
    /// The grid could not be laid out.
    #[error(transparent)]
    Grid(#[from] GridError),
    /// A parameter is out of range.
    #[error("inversion parameter {0}")]
    BadParameter(String),
    /// The user cancelled.
    #[error("cancelled by the user after {0} iterations")]
    Cancelled(usize),
}

/// The model transform `m(s)` (module docs).
#[derive(Debug, Clone, Copy)]
struct Transform {
    bounds: Option<(f64, f64)>,
}

impl Transform {
    /// `m = ln s`, or `ln(s − lo) − ln(hi − s)` with slowness bounds.
    fn to_m(self, s: f64) -> f64 {
        match self.bounds {
            None => s.ln(),
            Some((lo, hi)) => {
                let s = s.clamp(lo + 1e-9 * (hi - lo), hi - 1e-9 * (hi - lo));
                (s - lo).ln() - (hi - s).ln()
            }
        }
    }

    /// Inverse: `s = e^m`, or `(lo + hi·e^m)/(1 + e^m)`.
    fn to_s(self, m: f64) -> f64 {
        match self.bounds {
            None => m.exp(),
            Some((lo, hi)) => {
                // Written with e^{−|m|} so that large |m| cannot overflow.
                if m >= 0.0 {
                    let e = (-m).exp();
                    (lo * e + hi) / (1.0 + e)
                } else {
                    let e = m.exp();
                    (lo + hi * e) / (1.0 + e)
                }
            }
        }
    }

    /// `ds/dm`: `s`, or `(s − lo)(hi − s)/(hi − lo)`.
    fn ds_dm(self, s: f64) -> f64 {
        match self.bounds {
            None => s,
            Some((lo, hi)) => (s - lo) * (hi - s) / (hi - lo),
        }
    }
}

/// Smoothness constraints `(a, b, w)`: one row `w·(m_a − m_b)` per neighbour pair.
fn constraints(grid: &Grid, z_weight: f64) -> Vec<(u32, u32, f64)> {
    grid.neighbour_pairs()
        .into_iter()
        .map(|(a, b, vertical)| (a as u32, b as u32, if vertical { z_weight } else { 1.0 }))
        .collect()
}

/// `‖C m‖²`.
fn roughness(c: &[(u32, u32, f64)], m: &[f64]) -> f64 {
    c.iter()
        .map(|&(a, b, w)| {
            let d = w * (m[a as usize] - m[b as usize]);
            d * d
        })
        .sum()
}

/// χ² = mean(((t_obs − t)/ε)²).
pub fn chi2(observed_s: &[f64], modelled_s: &[f64], error_s: &[f64]) -> f64 {
    let n = observed_s.len().max(1) as f64;
    observed_s
        .iter()
        .zip(modelled_s)
        .zip(error_s)
        .map(|((o, m), e)| ((o - m) / e).powi(2))
        .sum::<f64>()
        / n
}

/// Relative RMS in %: `100·sqrt(mean(((t_obs − t)/t_obs)²))`.
pub fn rrms_percent(observed_s: &[f64], modelled_s: &[f64]) -> f64 {
    let n = observed_s.len().max(1) as f64;
    100.0
        * (observed_s
            .iter()
            .zip(modelled_s)
            .map(|(o, m)| ((o - m) / o).powi(2))
            .sum::<f64>()
            / n)
            .sqrt()
}

/// Direct-wave velocity (median offset/time of the two nearest picks on each shot side)
/// and far-offset apparent velocity (median over shot sides of 1/slope of a line fitted
/// to the farthest third of the picks), m/s.
pub fn apparent_velocities(tt: &TravelTimes, picks: &[usize]) -> (Option<f64>, Option<f64>) {
    let mut sides: std::collections::BTreeMap<(usize, bool), Vec<(f64, f64)>> = Default::default();
    for &i in picks {
        let off = tt.signed_offset_m(i);
        sides
            .entry((tt.shot[i], off > 0.0))
            .or_default()
            .push((tt.offset_m(i), tt.time_s[i]));
    }
    let mut near = Vec::new();
    let mut far = Vec::new();
    for pts in sides.values_mut() {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        near.extend(pts.iter().take(2).filter(|p| p.1 > 0.0).map(|p| p.0 / p.1));
        if pts.len() >= 3 {
            let from = pts.len() - (pts.len() / 3).max(3).min(pts.len());
            let seg = &pts[from..];
            let n = seg.len() as f64;
            let (mx, mt) = (
                seg.iter().map(|p| p.0).sum::<f64>() / n,
                seg.iter().map(|p| p.1).sum::<f64>() / n,
            );
            let sxx: f64 = seg.iter().map(|p| (p.0 - mx).powi(2)).sum();
            let sxt: f64 = seg.iter().map(|p| (p.0 - mx) * (p.1 - mt)).sum();
            if sxx > 0.0 && sxt > 0.0 {
                far.push(sxx / sxt);
            }
        }
    }
    (median(&near), median(&far))
}

use crate::methods::shared::stats::median;

/// Velocities of a gradient start model: linear in the depth of the cell centre below the
/// surface, from `v_top` at the shallowest centre to `v_bottom` at the deepest
/// (pyGIMLi 1.6 `createGradientModel2D`).
pub fn gradient_model(grid: &Grid, v_top: f64, v_bottom: f64) -> Vec<f64> {
    let d: Vec<f64> = (0..grid.n_cells()).map(|c| grid.cell_depth(c)).collect();
    let lo = d.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = d.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    d.iter()
        .map(|&z| {
            if hi > lo {
                v_top + (v_bottom - v_top) * (z - lo) / (hi - lo)
            } else {
                v_top
            }
        })
        .collect()
}

/// Picks that can be inverted: positive time, distinct shot and geophone positions.
fn usable_picks(tt: &TravelTimes, notes: &mut Vec<String>) -> Vec<usize> {
    let used: Vec<usize> = (0..tt.n_data())
        .filter(|&i| tt.time_s[i] > 0.0 && tt.offset_m(i) > 1e-9)
        .collect();
    if used.len() < tt.n_data() {
        notes.push(format!(
            "{} picks left out (zero offset or time ≤ 0)",
            tt.n_data() - used.len()
        ));
    }
    used
}

/// CGLS on `A x ≈ b` for `A = [W J; √λ C]` with column scaling (module docs); returns the
/// step and the number of iterations.
struct Stacked<'a> {
    rays: &'a SparseRows,
    dsdm: &'a [f64],
    w: &'a [f64],
    c: &'a [(u32, u32, f64)],
    sqrt_lam: f64,
    /// Square root of the Marquardt damping `μ` (rows `√μ · Δm_j`), 0 for none.
    sqrt_mu: f64,
    scale: Vec<f64>,
}

impl Stacked<'_> {
    fn n_rows(&self) -> usize {
        self.w.len()
            + self.c.len()
            + if self.sqrt_mu > 0.0 {
                self.scale.len()
            } else {
                0
            }
    }

    /// `A D x` (D the column scaling).
    fn mul(&self, x: &[f64], out: &mut [f64]) {
        let xs: Vec<f64> = x.iter().zip(&self.scale).map(|(a, b)| a * b).collect();
        let nd = self.w.len();
        for (i, o) in out.iter_mut().enumerate().take(nd) {
            *o = self.w[i]
                * self
                    .rays
                    .row(i)
                    .map(|(c, l)| l * self.dsdm[c] * xs[c])
                    .sum::<f64>();
        }
        for (k, &(a, b, wc)) in self.c.iter().enumerate() {
            out[nd + k] = self.sqrt_lam * wc * (xs[a as usize] - xs[b as usize]);
        }
        if self.sqrt_mu > 0.0 {
            let off = nd + self.c.len();
            for (j, x) in xs.iter().enumerate() {
                out[off + j] = self.sqrt_mu * x;
            }
        }
    }

    /// `D Aᵀ y`.
    fn tmul(&self, y: &[f64], out: &mut [f64]) {
        out.fill(0.0);
        let nd = self.w.len();
        for (i, &yi) in y.iter().enumerate().take(nd) {
            let f = self.w[i] * yi;
            for (c, l) in self.rays.row(i) {
                out[c] += f * l * self.dsdm[c];
            }
        }
        for (k, &(a, b, wc)) in self.c.iter().enumerate() {
            let f = self.sqrt_lam * wc * y[nd + k];
            out[a as usize] += f;
            out[b as usize] -= f;
        }
        if self.sqrt_mu > 0.0 {
            let off = nd + self.c.len();
            for (j, o) in out.iter_mut().enumerate() {
                *o += self.sqrt_mu * y[off + j];
            }
        }
        for (o, s) in out.iter_mut().zip(&self.scale) {
            *o *= s;
        }
    }
}

/// Solve the stacked least-squares problem by CGLS; returns `(Δm, iterations)`.
fn cgls(a: &Stacked, b: &[f64], tol: f64, max_iter: usize) -> (Vec<f64>, usize) {
    let n = a.scale.len();
    let mut x = vec![0.0; n];
    let mut r = b.to_vec();
    let mut s = vec![0.0; n];
    a.tmul(&r, &mut s);
    let mut p = s.clone();
    let mut gamma: f64 = s.iter().map(|v| v * v).sum();
    let gamma0 = gamma;
    let mut q = vec![0.0; a.n_rows()];
    let mut it = 0;
    while it < max_iter && gamma > tol * tol * gamma0 && gamma > 0.0 {
        a.mul(&p, &mut q);
        let qq: f64 = q.iter().map(|v| v * v).sum();
        if qq <= 0.0 {
            break;
        }
        let alpha = gamma / qq;
        for (xi, pi) in x.iter_mut().zip(&p) {
            *xi += alpha * pi;
        }
        for (ri, qi) in r.iter_mut().zip(&q) {
            *ri -= alpha * qi;
        }
        a.tmul(&r, &mut s);
        let g_new: f64 = s.iter().map(|v| v * v).sum();
        let beta = g_new / gamma;
        gamma = g_new;
        for (pi, si) in p.iter_mut().zip(&s) {
            *pi = si + beta * *pi;
        }
        it += 1;
    }
    let dm = x.iter().zip(&a.scale).map(|(v, s)| v * s).collect();
    (dm, it)
}

/// Invert first-arrival picks for a velocity model (module docs give the method).
///
/// `progress(fraction, detail)` is called after every iteration; `cancel` is checked
/// between iterations and ends the run with [`InversionError::Cancelled`].
pub fn invert(
    tt: &TravelTimes,
    params: &InversionParams,
    progress: &mut dyn FnMut(f64, &str),
    cancel: &AtomicBool,
) -> Result<SeismicInversion, InversionError> {
    let t_start = Instant::now();
    tt.validate().map_err(InversionError::BadData)?;
    if !(params.lambda > 0.0 && params.lambda.is_finite()) {
        return Err(InversionError::BadParameter(format!(
            "lambda = {} must be > 0",
            params.lambda
        )));
    }
    if !(params.z_weight > 0.0 && params.z_weight.is_finite()) {
        return Err(InversionError::BadParameter(format!(
            "z_weight = {} must be > 0",
            params.z_weight
        )));
    }
    let mut notes = Vec::new();
    let mut params = params.clone();
    let used = usable_picks(tt, &mut notes);
    if used.len() < 8 {
        return Err(InversionError::TooFewPicks(used.len()));
    }
    let observed: Vec<f64> = used.iter().map(|&i| tt.time_s[i]).collect();
    let error_s: Vec<f64> = match &tt.error_s {
        Some(e) if used.iter().all(|&i| e[i] > 0.0 && e[i].is_finite()) => {
            used.iter().map(|&i| e[i]).collect()
        }
        other => {
            if other.is_some() {
                notes.push(
                    "the file's errors include zero or invalid values; they were replaced".into(),
                );
            }
            notes.push(format!(
                "no pick errors given: {:.1} % relative error{} assumed (pyGIMLi's default)",
                100.0 * params.relative_error,
                if params.absolute_error_s > 0.0 {
                    format!(" plus {:.2} ms", 1e3 * params.absolute_error_s)
                } else {
                    String::new()
                }
            ));
            observed
                .iter()
                .map(|t| params.relative_error * t + params.absolute_error_s)
                .collect()
        }
    };
    if error_s.iter().any(|e| e.is_nan() || *e <= 0.0) {
        return Err(InversionError::BadParameter(
            "relative_error and absolute_error_s give a zero error".into(),
        ));
    }

    let grid = Grid::for_survey(tt, &params.grid)?;
    notes.extend(grid.notes.iter().cloned());
    let graph = RayGraph::new(
        &grid,
        &tt.sensor_x_m,
        &tt.sensor_z_m,
        params.secondary_nodes,
    );
    if graph.max_sensor_snap_m > 0.01 {
        notes.push(format!(
            "sensors lie up to {:.3} m off the model surface (the surface is straight between grid columns)",
            graph.max_sensor_snap_m
        ));
    }
    let sub = TravelTimes {
        shot: used.iter().map(|&i| tt.shot[i]).collect(),
        geophone: used.iter().map(|&i| tt.geophone[i]).collect(),
        time_s: observed.clone(),
        error_s: None,
        notes: vec![],
        ..tt.clone()
    };

    let (v_direct, v_far) = apparent_velocities(tt, &used);
    let start_v = match params.start {
        StartModel::FromData => {
            let vt = v_direct.unwrap_or(500.0).min(500.0);
            let vb = (1.5 * v_far.unwrap_or(3000.0)).min(5000.0).max(1.5 * vt);
            notes.push(format!(
                "start model: gradient {vt:.0} → {vb:.0} m/s from the data (direct-wave velocity {} m/s, capped at 500; \
                 1.5 × far-offset apparent velocity {} m/s, capped at 5000)",
                v_direct.map_or("unknown".into(), |v| format!("{v:.0}")),
                v_far.map_or("unknown".into(), |v| format!("{v:.0}")),
            ));
            params.start = StartModel::Gradient {
                v_top_m_per_s: vt,
                v_bottom_m_per_s: vb,
            };
            gradient_model(&grid, vt, vb)
        }
        StartModel::Gradient {
            v_top_m_per_s,
            v_bottom_m_per_s,
        } => {
            if !(v_top_m_per_s > 0.0 && v_bottom_m_per_s > 0.0) {
                return Err(InversionError::BadParameter(
                    "start velocities must be > 0".into(),
                ));
            }
            gradient_model(&grid, v_top_m_per_s, v_bottom_m_per_s)
        }
        StartModel::Constant { velocity_m_per_s } => {
            if velocity_m_per_s.is_nan() || velocity_m_per_s <= 0.0 {
                return Err(InversionError::BadParameter(
                    "start velocity must be > 0".into(),
                ));
            }
            vec![velocity_m_per_s; grid.n_cells()]
        }
    };
    let bounds_v = match params.bounds {
        Bounds::None => None,
        Bounds::FromData => {
            let lo = (0.25 * v_direct.unwrap_or(400.0)).min(100.0);
            let hi = 10_000.0;
            notes.push(format!(
                "velocity bounds {lo:.0}–{hi:.0} m/s (lower: a quarter of the direct-wave velocity, at most 100 m/s)"
            ));
            params.bounds = Bounds::Fixed {
                min_m_per_s: lo,
                max_m_per_s: hi,
            };
            Some((lo, hi))
        }
        Bounds::Fixed {
            min_m_per_s,
            max_m_per_s,
        } => {
            if !(min_m_per_s > 0.0 && max_m_per_s > min_m_per_s) {
                return Err(InversionError::BadParameter(
                    "bounds need 0 < min < max".into(),
                ));
            }
            Some((min_m_per_s, max_m_per_s))
        }
    };
    let tr = Transform {
        bounds: bounds_v.map(|(lo, hi)| (1.0 / hi, 1.0 / lo)),
    };
    let start_v: Vec<f64> = match bounds_v {
        Some((lo, hi)) => start_v
            .iter()
            .map(|v| v.clamp(lo * 1.01, hi / 1.01))
            .collect(),
        None => start_v,
    };
    let cons = constraints(&grid, params.z_weight);
    let w: Vec<f64> = error_s.iter().map(|e| 1.0 / e).collect();
    let lam = params.lambda;

    let mut m: Vec<f64> = start_v.iter().map(|v| tr.to_m(1.0 / v)).collect();
    let slow_of = |m: &[f64]| -> Vec<f64> { m.iter().map(|&x| tr.to_s(x)).collect() };
    let mut slow = slow_of(&m);
    let mut fw = forward(&graph, &slow, &sub, true);
    let mut chi = chi2(&observed, &fw.time_s, &error_s);
    let mut phi = chi * observed.len() as f64 + lam * roughness(&cons, &m);
    let mut history = vec![IterationRecord {
        iteration: 0,
        chi2: chi,
        rrms_percent: Some(rrms_percent(&observed, &fw.time_s)),
        phi_m: roughness(&cons, &m),
        lambda: lam,
        step_length: 0.0,
        damping: Some(0.0),
        cgls_iterations: Some(0),
        seconds: t_start.elapsed().as_secs_f64(),
        ..Default::default()
    }];
    progress(0.0, &format!("start model: χ² {chi:.2}"));
    let mut stop = StopReason::IterationCap;
    let mut iterations = 0;
    // Marquardt damping relative to the median data-term diagonal (module docs).
    let mut nu = 0.0f64;
    for it in 1..=params.max_iterations {
        if params.stop_at_chi1 && chi <= 1.0 {
            stop = StopReason::Target;
            break;
        }
        if cancel.load(Ordering::Relaxed) {
            return Err(InversionError::Cancelled(iterations));
        }
        let t_it = Instant::now();
        // Invariant: every `forward` call in this function asks for rays (`true`).
        let rays = fw.rays.as_ref().expect("forward ran with rays");
        let dsdm: Vec<f64> = slow.iter().map(|&s| tr.ds_dm(s)).collect();
        // Column norms of [W J; √λ C] for the scaling.
        let mut col2 = vec![0.0; grid.n_cells()];
        for (i, wi) in w.iter().enumerate() {
            for (c, l) in rays.row(i) {
                col2[c] += (wi * l * dsdm[c]).powi(2);
            }
        }
        for &(a, b, wc) in &cons {
            col2[a as usize] += lam * wc * wc;
            col2[b as usize] += lam * wc * wc;
        }
        let mu = {
            let d: Vec<f64> = col2.iter().copied().filter(|&v| v > 0.0).collect();
            nu * median(&d).unwrap_or(0.0)
        };
        let scale: Vec<f64> = col2
            .iter()
            .map(|&v| {
                if v + mu > 0.0 {
                    1.0 / (v + mu).sqrt()
                } else {
                    1.0
                }
            })
            .collect();
        let a = Stacked {
            rays,
            dsdm: &dsdm,
            w: &w,
            c: &cons,
            sqrt_lam: lam.sqrt(),
            sqrt_mu: mu.sqrt(),
            scale,
        };
        let mut rhs: Vec<f64> = (0..observed.len())
            .map(|i| w[i] * (observed[i] - fw.time_s[i]))
            .collect();
        rhs.extend(
            cons.iter()
                .map(|&(p, q, wc)| -lam.sqrt() * wc * (m[p as usize] - m[q as usize])),
        );
        if mu > 0.0 {
            rhs.extend(std::iter::repeat_n(0.0, grid.n_cells()));
        }
        let (dm, cg_it) = cgls(&a, &rhs, params.cgls_tolerance, params.cgls_max_iterations);

        // Line search on Φ: the full step, then the minimum of the parabola through Φ(0),
        // Φ'(0) and Φ(1), then halving; the best trial that lowers Φ is kept.
        let jdm: Vec<f64> = (0..observed.len())
            .map(|i| rays.row(i).map(|(c, l)| l * dsdm[c] * dm[c]).sum::<f64>())
            .collect();
        let dphi0 = 2.0
            * ((0..observed.len())
                .map(|i| -w[i] * w[i] * jdm[i] * (observed[i] - fw.time_s[i]))
                .sum::<f64>()
                + lam
                    * cons
                        .iter()
                        .map(|&(p, q, wc)| {
                            wc * wc
                                * (m[p as usize] - m[q as usize])
                                * (dm[p as usize] - dm[q as usize])
                        })
                        .sum::<f64>());
        let try_step = |tau: f64| {
            let m_try: Vec<f64> = m.iter().zip(&dm).map(|(a, d)| a + tau * d).collect();
            let s_try = slow_of(&m_try);
            let f_try = forward(&graph, &s_try, &sub, true);
            let chi_try = chi2(&observed, &f_try.time_s, &error_s);
            let phi_try = chi_try * observed.len() as f64 + lam * roughness(&cons, &m_try);
            (tau, m_try, s_try, f_try, chi_try, phi_try)
        };
        let full = try_step(1.0);
        let curv = full.5 - phi - dphi0;
        let mut best = (full.5 < phi).then_some(full);
        let parabola =
            (dphi0 < 0.0 && curv > 0.0).then(|| (-dphi0 / (2.0 * curv)).clamp(0.05, 0.95));
        if let Some(tp) = parabola
            && best
                .as_ref()
                .is_none_or(|b| tp < 0.9 && b.5 > phi + 0.5 * dphi0)
        {
            let t = try_step(tp);
            if t.5 < phi && best.as_ref().is_none_or(|b| t.5 < b.5) {
                best = Some(t);
            }
        }
        let mut tau = parabola.unwrap_or(1.0) * 0.5;
        while best.is_none() && tau >= 0.01 {
            let t = try_step(tau);
            if t.5 < phi {
                best = Some(t);
            }
            tau *= 0.5;
        }
        let accepted = best.map(|(tau, m, s, f, c, p)| (m, s, f, c, p, tau));
        let Some((m_new, s_new, f_new, chi_new, phi_new, tau)) = accepted else {
            stop = StopReason::NoDescent;
            notes.push(format!(
                "iteration {it}: no step length lowered the objective; stopped"
            ));
            break;
        };
        let dphi = (phi - phi_new) / phi;
        let damping = nu;
        if tau < 0.5 {
            nu = (nu * 3.0).max(0.01);
        } else if tau > 0.9 {
            nu = if nu < 1e-3 { 0.0 } else { nu / 3.0 };
        }
        (m, slow, fw, chi, phi) = (m_new, s_new, f_new, chi_new, phi_new);
        iterations = it;
        history.push(IterationRecord {
            iteration: it,
            chi2: chi,
            rrms_percent: Some(rrms_percent(&observed, &fw.time_s)),
            phi_m: roughness(&cons, &m),
            lambda: lam,
            step_length: tau,
            damping: Some(damping),
            cgls_iterations: Some(cg_it),
            seconds: t_it.elapsed().as_secs_f64(),
            ..Default::default()
        });
        progress(
            it as f64 / params.max_iterations as f64,
            &format!("iteration {it}: χ² {chi:.3}, step {tau:.2}"),
        );
        if params.stop_at_chi1 && chi <= 1.0 {
            stop = StopReason::Target;
            break;
        }
        // pyGIMLi's rule: the objective fell by less than min_dphi_percent, after the
        // second iteration.
        if dphi * 100.0 < params.min_dphi_percent && it > 2 {
            stop = StopReason::Plateau;
            break;
        }
    }
    let rays = fw.rays.take().unwrap_or_default();
    let coverage_m = rays.column_abs_sums();
    let covered = standardized_coverage(&grid, &coverage_m);
    let velocity: Vec<f64> = slow.iter().map(|s| 1.0 / s).collect();
    progress(
        1.0,
        &format!("done: χ² {chi:.3} after {iterations} iterations"),
    );
    Ok(SeismicInversion {
        n_cells: grid.n_cells(),
        n_data: observed.len(),
        velocity_m_per_s: velocity,
        start_velocity_m_per_s: start_v,
        coverage_m,
        covered,
        used_picks: used,
        rrms_percent: rrms_percent(&observed, &fw.time_s),
        response_s: fw.time_s,
        observed_s: observed,
        error_s,
        chi2: chi,
        chi2_history: history.iter().map(|h| h.chi2).collect(),
        iterations,
        lambda: lam,
        history,
        stop_reason: stop,
        bounds_m_per_s: bounds_v,
        params,
        notes,
        seconds: t_start.elapsed().as_secs_f64(),
        grid,
    })
}

/// Cells crossed by a ray or sharing an edge with one that is (pyGIMLi's
/// `standardizedCoverage`, `sign(|Cᵀ C cov|)`, marks the same cells up to cells whose
/// neighbours all carry exactly their coverage).
pub fn standardized_coverage(grid: &Grid, coverage_m: &[f64]) -> Vec<bool> {
    let mut covered: Vec<bool> = coverage_m.iter().map(|&c| c > 0.0).collect();
    for (a, b, _) in grid.neighbour_pairs() {
        if coverage_m[a] > 0.0 {
            covered[b] = true;
        }
        if coverage_m[b] > 0.0 {
            covered[a] = true;
        }
    }
    covered
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::seismic::forward::analytic::two_layer_time_s;

    fn never() -> AtomicBool {
        AtomicBool::new(false)
    }

    #[test]
    fn transforms_round_trip_and_derivatives_match() {
        for tr in [
            Transform { bounds: None },
            Transform {
                bounds: Some((1e-4, 1e-2)),
            },
        ] {
            for s in [2e-4, 1e-3, 5e-3] {
                let m = tr.to_m(s);
                assert!((tr.to_s(m) - s).abs() < 1e-15, "{s}");
                let h = 1e-6;
                let fd = (tr.to_s(m + h) - tr.to_s(m - h)) / (2.0 * h);
                assert!(
                    (fd - tr.ds_dm(s)).abs() < 1e-8 * fd.abs(),
                    "{fd} {}",
                    tr.ds_dm(s)
                );
            }
        }
    }

    /// Synthetic two-layer data (500 over 2500 m/s at 10 m, analytic times, 2 % error
    /// stated): the inversion fits them to χ² ≤ 1.5 and puts ≥ 1800 m/s below 14 m depth
    /// in the covered middle of the line and ≤ 800 m/s in the top 4 m.
    #[test]
    fn recovers_a_two_layer_model() {
        let tt = crate::methods::seismic::forward::tests::two_layer_survey();
        let params = InversionParams {
            z_weight: 0.3,
            ..Default::default()
        };
        let mut log = Vec::new();
        let inv = invert(
            &tt,
            &params,
            &mut |f, s| log.push((f, s.to_string())),
            &never(),
        )
        .unwrap();
        eprintln!(
            "{:?} {:?} {:?}",
            inv.chi2_history, inv.stop_reason, inv.notes
        );
        assert!(inv.chi2 <= 1.5, "{}", inv.chi2);
        let g = &inv.grid;
        let mid = |c: usize| (20.0..=74.0).contains(&g.cell_center(c).0);
        let deep: Vec<f64> = (0..g.n_cells())
            .filter(|&c| mid(c) && (14.0..18.0).contains(&g.cell_depth(c)))
            .map(|c| inv.velocity_m_per_s[c])
            .collect();
        let top: Vec<f64> = (0..g.n_cells())
            .filter(|&c| mid(c) && g.cell_depth(c) < 4.0)
            .map(|c| inv.velocity_m_per_s[c])
            .collect();
        let med = |v: Vec<f64>| median(&v).unwrap();
        assert!(med(deep.clone()) >= 1800.0, "{:?}", deep);
        assert!(med(top.clone()) <= 800.0, "{:?}", top);
        assert_eq!(inv.chi2_history.len(), inv.iterations + 1);
        assert!(log.len() >= inv.iterations);
    }

    #[test]
    fn cancel_stops_between_iterations() {
        let mut tt = crate::methods::seismic::forward::tests::acceptance_survey();
        tt.time_s = (0..tt.n_data())
            .map(|i| two_layer_time_s(tt.offset_m(i), 500.0, 2500.0, 10.0))
            .collect();
        let cancel = AtomicBool::new(true);
        let r = invert(&tt, &InversionParams::default(), &mut |_, _| {}, &cancel);
        assert_eq!(r.unwrap_err(), InversionError::Cancelled(0));
    }
}

#[cfg(test)]
mod field_tests {
    use super::*;
    use crate::methods::seismic::sgt::read_sgt;

    fn run(tt: &TravelTimes, params: &InversionParams) -> SeismicInversion {
        invert(tt, params, &mut |_, _| {}, &AtomicBool::new(false)).unwrap()
    }

    /// Median of `v` weighted by `w`.
    fn weighted_median(v: &[f64], w: &[f64]) -> f64 {
        let mut p: Vec<(f64, f64)> = v.iter().copied().zip(w.iter().copied()).collect();
        p.sort_by(|a, b| a.0.total_cmp(&b.0));
        let half = 0.5 * p.iter().map(|x| x.1).sum::<f64>();
        let mut acc = 0.0;
        for (v, w) in p {
            acc += w;
            if acc >= half {
                return v;
            }
        }
        f64::NAN
    }

    /// Real Königsee picks with pyGIMLi's settings (oracles/seismic.json
    /// `koenigsee_inversion`: secNodes 3, zWeight 0.2, start 500 → 5000 m/s, λ 20, 3 %
    /// error): issue #7 acceptance χ² ≤ 3.5 and rrms ≤ 6 % (pyGIMLi 3.464 / 5.58 %), and the
    /// bedrock zone's median velocity within 15 % of pyGIMLi's model.
    #[test]
    fn koenigsee_fits_as_well_as_pygimli() {
        let oracle = crate::require_oracle!("seismic.json");
        let p = crate::require_data!("seismic/gimli_koenigsee.sgt");
        let o = &oracle["koenigsee_inversion"]["results"]["with fop._core.setThreadCount(1)"];
        let tt = read_sgt(&p).unwrap();
        let inv = run(
            &tt,
            &InversionParams {
                lambda: 20.0,
                z_weight: 0.2,
                secondary_nodes: 3,
                start: StartModel::Gradient {
                    v_top_m_per_s: 500.0,
                    v_bottom_m_per_s: 5000.0,
                },
                bounds: Bounds::None,
                ..Default::default()
            },
        );
        eprintln!(
            "Königsee: χ² {:.3} (pyGIMLi {:.3}), rrms {:.2} % (pyGIMLi {:.2} %), {} iterations, {:?}, {} cells, v {:.0}–{:.0} m/s",
            inv.chi2,
            o["chi2"].as_f64().unwrap(),
            inv.rrms_percent,
            o["rrms_percent"].as_f64().unwrap(),
            inv.iterations,
            inv.chi2_history,
            inv.n_cells,
            inv.velocity_m_per_s
                .iter()
                .copied()
                .fold(f64::INFINITY, f64::min),
            inv.velocity_m_per_s.iter().copied().fold(0.0, f64::max),
        );
        assert!(
            inv.notes.iter().any(|n| n.contains("3.0 % relative error")),
            "the assumed error is stated"
        );
        assert!(inv.chi2 <= 3.5, "χ² {}", inv.chi2);
        assert!(inv.rrms_percent <= 6.0, "rrms {}", inv.rrms_percent);
        // The fastest cell within 25 % of pyGIMLi's 4827 m/s.
        let vmax = inv.velocity_m_per_s.iter().copied().fold(0.0, f64::max);
        let o_max = o["velocity_max_ms"].as_f64().unwrap();
        assert!((vmax - o_max).abs() <= 0.25 * o_max, "{vmax} vs {o_max}");
        // The bedrock zone (cells faster than 2000 m/s, as for tt_48 below): area-weighted
        // median within 15 % of pyGIMLi's (issue #7). pyGIMLi's model per cell is not in
        // ../shared/oracles; tests/oracles/koenigsee_pygimli_model.json is the same call run
        // with pyGIMLi 1.6.1 by scripts/oracle/koenigsee_pygimli.py, and it reproduces the
        // staged oracle's χ², rrms, cell count and median velocity (checked here).
        let model: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("tests/oracles/koenigsee_pygimli_model.json"),
            )
            .unwrap(),
        )
        .unwrap();
        let num = |k: &str| model[k].as_f64().unwrap();
        assert!((num("chi2") - o["chi2"].as_f64().unwrap()).abs() < 1e-6);
        assert!((num("rrms_percent") - o["rrms_percent"].as_f64().unwrap()).abs() < 1e-6);
        assert_eq!(model["n_cells"], o["n_cells"]);
        let col = |k: &str| -> Vec<f64> {
            model[k]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect()
        };
        let (pv_all, pa_all) = (col("velocity_m_per_s"), col("area_m2"));
        let o_median = o["velocity_median_ms"].as_f64().unwrap();
        let mut sorted = pv_all.clone();
        sorted.sort_by(f64::total_cmp);
        let m = sorted.len() / 2;
        let median = if sorted.len() % 2 == 0 {
            0.5 * (sorted[m - 1] + sorted[m])
        } else {
            sorted[m]
        };
        assert!((median - o_median).abs() < 0.01, "{median} vs {o_median}");
        let fast = |v: &[f64], a: &[f64]| -> (Vec<f64>, Vec<f64>) {
            v.iter()
                .zip(a)
                .filter(|(v, _)| **v > 2000.0)
                .map(|(v, a)| (*v, *a))
                .unzip()
        };
        let (pv, pa) = fast(&pv_all, &pa_all);
        let areas: Vec<f64> = (0..inv.n_cells).map(|c| inv.grid.cell_area(c)).collect();
        let (mv, ma) = fast(&inv.velocity_m_per_s, &areas);
        let (theirs, mine) = (weighted_median(&pv, &pa), weighted_median(&mv, &ma));
        eprintln!(
            "Königsee bedrock (> 2000 m/s): median {mine:.0} m/s over {:.0} m² vs pyGIMLi {theirs:.0} m/s over {:.0} m²",
            ma.iter().sum::<f64>(),
            pa.iter().sum::<f64>()
        );
        assert!((mine - theirs).abs() <= 0.15 * theirs, "{mine} vs {theirs}");
    }

    /// The benchmark problem (../shared/bench tt_48, README (b)): with pyGIMLi's defaults
    /// (secNodes 2, start 500 → 5000 m/s, λ 20, file errors) the fit reaches the target as
    /// pyGIMLi's does (χ² 0.989), and the bedrock zone — cells faster than 2000 m/s — has an
    /// area-weighted median velocity within 15 % of pyGIMLi's model in tt_48_invmesh.json
    /// (the acceptance check of geophysics.md §5.2.3, on the one problem whose pyGIMLi model
    /// is staged).
    #[test]
    fn bench_model_matches_pygimli_bedrock_velocity() {
        let Some(p) = crate::field_data::bench("tt_48.sgt") else {
            return;
        };
        let Some(mesh_path) = crate::field_data::bench("tt_48_invmesh.json") else {
            return;
        };
        let mesh: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(mesh_path).unwrap()).unwrap();
        let tt = read_sgt(&p).unwrap();
        let inv = run(
            &tt,
            &InversionParams {
                secondary_nodes: 2,
                start: StartModel::Gradient {
                    v_top_m_per_s: 500.0,
                    v_bottom_m_per_s: 5000.0,
                },
                ..Default::default()
            },
        );
        assert!(
            inv.chi2 <= 1.0 && inv.stop_reason == StopReason::Target,
            "{} {:?}",
            inv.chi2,
            inv.stop_reason
        );
        // pyGIMLi's model: triangle areas and velocities.
        let nodes: Vec<(f64, f64)> = mesh["node_xy_m"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p[0].as_f64().unwrap(), p[1].as_f64().unwrap()))
            .collect();
        let (mut pv, mut pa) = (Vec::new(), Vec::new());
        for (cell, v) in mesh["cells_0based"]
            .as_array()
            .unwrap()
            .iter()
            .zip(mesh["model"].as_array().unwrap())
        {
            let c: Vec<(f64, f64)> = cell
                .as_array()
                .unwrap()
                .iter()
                .map(|i| nodes[i.as_u64().unwrap() as usize])
                .collect();
            let area = 0.5
                * ((c[1].0 - c[0].0) * (c[2].1 - c[0].1) - (c[2].0 - c[0].0) * (c[1].1 - c[0].1))
                    .abs();
            let v = v.as_f64().unwrap();
            if v > 2000.0 {
                pv.push(v);
                pa.push(area);
            }
        }
        let ours: Vec<usize> = (0..inv.n_cells)
            .filter(|&c| inv.velocity_m_per_s[c] > 2000.0)
            .collect();
        let mv: Vec<f64> = ours.iter().map(|&c| inv.velocity_m_per_s[c]).collect();
        let ma: Vec<f64> = ours.iter().map(|&c| inv.grid.cell_area(c)).collect();
        let (theirs, mine) = (weighted_median(&pv, &pa), weighted_median(&mv, &ma));
        eprintln!(
            "tt_48: χ² {:.3}, bedrock median {mine:.0} m/s vs pyGIMLi {theirs:.0} m/s (truth 3000); {:?}",
            inv.chi2,
            inv.history
                .iter()
                .map(|h| (h.chi2, h.step_length, h.cgls_iterations, h.seconds))
                .collect::<Vec<_>>()
        );
        assert!((mine - theirs).abs() <= 0.15 * theirs, "{mine} vs {theirs}");
    }

    /// PyHydroGeophysX field line 2 (no errors in the file → 3 %): issue #7 asks for χ² ≤
    /// 2 × pyGIMLi's. The peer studio's pyGIMLi run with survey-scaled defaults reached
    /// χ² 0.67 (reference/peer-studio.md §3.4), so the bound is 1.34 with our data-derived
    /// defaults.
    #[test]
    fn srtfieldline2_fits_within_twice_pygimli() {
        let p = crate::require_data!("seismic/phgx/srtfieldline2.dat");
        let tt = read_sgt(&p).unwrap();
        let inv = run(&tt, &InversionParams::default());
        eprintln!(
            "srtfieldline2: χ² {:.3}, rrms {:.2} %, {:?}",
            inv.chi2, inv.rrms_percent, inv.chi2_history
        );
        assert!(inv.chi2 <= 2.0 * 0.67, "{}", inv.chi2);
    }

    /// The Refrapy field example 01 (.sgt, flat): inverts with data-derived defaults.
    /// No pyGIMLi χ² for this file is staged (oracles/seismic.json lists its counts only,
    /// example 02 is kept back), so the bound is the rubric's "good" band edge, 1.5.
    #[test]
    fn refrapy_example_fits() {
        let p = crate::require_data!("seismic/refrapy_field_example_01.sgt");
        let tt = read_sgt(&p).unwrap();
        let inv = run(&tt, &InversionParams::default());
        eprintln!(
            "refrapy 01: χ² {:.3}, rrms {:.2} %, {:?}",
            inv.chi2, inv.rrms_percent, inv.chi2_history
        );
        assert!(inv.chi2 <= 1.5, "{}", inv.chi2);
    }
}

#[cfg(test)]
mod pygimli_model_forward {
    use super::*;
    use crate::methods::seismic::forward::analytic::two_layer_time_s;
    use crate::methods::seismic::forward::{RayGraph, forward};
    use crate::methods::seismic::grid::GridOptions;

    /// The velocity of pyGIMLi's tt_48 model (tt_48_invmesh.json) at each cell centre of
    /// `grid` (the triangle holding the centre).
    fn sample_pygimli_model(grid: &Grid, mesh: &serde_json::Value) -> Vec<f64> {
        let nodes: Vec<(f64, f64)> = mesh["node_xy_m"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p[0].as_f64().unwrap(), p[1].as_f64().unwrap()))
            .collect();
        let tris: Vec<([(f64, f64); 3], f64)> = mesh["cells_0based"]
            .as_array()
            .unwrap()
            .iter()
            .zip(mesh["model"].as_array().unwrap())
            .map(|(c, v)| {
                let i: Vec<usize> = c
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|k| k.as_u64().unwrap() as usize)
                    .collect();
                ([nodes[i[0]], nodes[i[1]], nodes[i[2]]], v.as_f64().unwrap())
            })
            .collect();
        let inside = |t: &[(f64, f64); 3], x: f64, z: f64| {
            let s =
                |a: (f64, f64), b: (f64, f64)| (b.0 - a.0) * (z - a.1) - (b.1 - a.1) * (x - a.0);
            let (d1, d2, d3) = (s(t[0], t[1]), s(t[1], t[2]), s(t[2], t[0]));
            (d1 >= 0.0 && d2 >= 0.0 && d3 >= 0.0) || (d1 <= 0.0 && d2 <= 0.0 && d3 <= 0.0)
        };
        (0..grid.n_cells())
            .map(|c| {
                let (x, z) = grid.cell_center(c);
                tris.iter()
                    .find(|(t, _)| inside(t, x, z))
                    .map_or(3000.0, |(_, v)| *v)
            })
            .collect()
    }

    /// Forward accuracy on the benchmark problem (bench README (b): truth 800 over
    /// 3000 m/s at 8 m, picks simulated by pyGIMLi on a fine mesh plus 0.5 ms noise):
    /// * the picks fit the closed form of the truth at χ² 0.94 (the noise alone: ≈ 1);
    /// * our forward of the truth **on the default inversion grid** (2 secondary nodes, as
    ///   the benchmark inverts; the node row nearest 8 m moved to 8 m so that the cells hold
    ///   the truth exactly) fits them within 10 % of that χ², so the grid the inversion uses
    ///   adds no misfit of its own;
    /// * finding, printed not asserted: pyGIMLi's own inverted model (χ² 0.989 with
    ///   pyGIMLi's forward on its 731-triangle mesh) fits the picks only to χ² ≈ 1.4 with an
    ///   accurate forward (ours on 0.25 m cells), its times 0.5σ short on average: pyGIMLi's
    ///   coarse-mesh forward overestimates times by about 1 % at far offsets and its model
    ///   is faster to compensate.
    #[test]
    fn default_grid_forward_is_as_good_as_the_closed_form() {
        let Some(p) = crate::field_data::bench("tt_48.sgt") else {
            return;
        };
        let Some(mesh_path) = crate::field_data::bench("tt_48_invmesh.json") else {
            return;
        };
        let mesh: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(mesh_path).unwrap()).unwrap();
        let tt = crate::methods::seismic::sgt::read_sgt(&p).unwrap();
        let err = tt.error_s.clone().unwrap();
        let exact: Vec<f64> = (0..tt.n_data())
            .map(|i| two_layer_time_s(tt.offset_m(i), 800.0, 3000.0, 8.0))
            .collect();
        let c_exact = chi2(&tt.time_s, &exact, &err);
        // Truth on the default grid with 2 secondary nodes; the node row nearest 8 m is
        // moved to 8 m so that cells represent the truth exactly.
        let mut depths = Grid::for_survey(&tt, &GridOptions::default())
            .unwrap()
            .depth_m;
        let k8 = (1..depths.len())
            .min_by(|&a, &b| (depths[a] - 8.0).abs().total_cmp(&(depths[b] - 8.0).abs()))
            .unwrap();
        depths[k8] = 8.0;
        let grid = Grid::for_survey(
            &tt,
            &GridOptions {
                depths_m: Some(depths),
                ..Default::default()
            },
        )
        .unwrap();
        let slow: Vec<f64> = (0..grid.n_cells())
            .map(|c| {
                if grid.cell_depth(c) < 8.0 {
                    1.0 / 800.0
                } else {
                    1.0 / 3000.0
                }
            })
            .collect();
        let g = RayGraph::new(&grid, &tt.sensor_x_m, &tt.sensor_z_m, 2);
        let c_ours = chi2(&tt.time_s, &forward(&g, &slow, &tt, false).time_s, &err);
        // pyGIMLi's model with an accurate forward.
        let fine = Grid::for_survey(
            &tt,
            &GridOptions {
                dx_m: Some(0.25),
                dz_top_m: Some(0.25),
                dz_growth: 1.0,
                coarsen_with_depth: false,
                ..Default::default()
            },
        )
        .unwrap();
        let v = sample_pygimli_model(&fine, &mesh);
        let gf = RayGraph::new(&fine, &tt.sensor_x_m, &tt.sensor_z_m, 3);
        let t = forward(
            &gf,
            &v.iter().map(|v| 1.0 / v).collect::<Vec<_>>(),
            &tt,
            false,
        )
        .time_s;
        let c_pg = chi2(&tt.time_s, &t, &err);
        let mean_r: f64 = (0..tt.n_data())
            .map(|i| (tt.time_s[i] - t[i]) / err[i])
            .sum::<f64>()
            / tt.n_data() as f64;
        eprintln!(
            "tt_48: χ² closed form {c_exact:.3}; our default-grid forward of the truth {c_ours:.3}; \
             pyGIMLi's model with an accurate forward {c_pg:.3} (mean residual {mean_r:+.2}σ; pyGIMLi's own 0.989)"
        );
        assert!((c_exact - 0.941).abs() < 0.01, "{c_exact}");
        assert!(
            (c_ours - c_exact).abs() <= 0.1 * c_exact,
            "{c_ours} vs {c_exact}"
        );
    }
}
