//! Gauss–Newton inversion of one ERT survey for the log resistivity of the cells of a
//! parameter mesh.
//!
//! **Objective** (Günther, Rücker & Spitzer 2006, eq. 3; Rücker, Günther & Wagner 2017, §2.3):
//!
//!   Φ(m) = ‖D (d − f(m))‖² + λ (‖W C (m − m_ref)‖² + α_s ‖m − m_ref‖²),
//!
//! with d = ln ρa (observed), f(m) = ln ρa of the 2.5D forward model ([`super::fem`]),
//! D = diag(1/ε_i) (ε_i the relative error of datum i, which is the error of ln ρa), C the
//! first-order smoothness operator of the parameter mesh (one row per edge shared by two
//! parameter cells of the same region: (C m)_r = m_i − m_j; pyGIMLi's constraint type 1),
//! W = diag(w_r) the anisotropy weights w_r = 1 + (z_w − 1)·|n_z| (n the unit normal of the
//! shared edge, z_w the z-weight: z_w < 1 smooths less across horizontal edges and favours
//! layering; pyGIMLi's `zWeight`), α_s an optional smallness weight towards the reference
//! model (default: the homogeneous start model), and m the transformed model:
//! m = ln(ρ − ρ_lo) − ln(ρ_hi − ρ) with bounds, m = ln ρ without (pyGIMLi's log-LU
//! transform, so the bounds can never be crossed).
//!
//! **Step** (Gauss–Newton; e.g. Aster, Borchers & Thurber 2013, eq. 10.34):
//!
//!   (J_wᵀ J_w + λ R) Δm = J_wᵀ D (d − f(m)) − λ R (m − m_ref),  R = CᵀWᵀWC + α_s I,
//!
//! with J_w = D J T, J = ∂ ln ρa / ∂ ln ρ from the adjoint Jacobian and T = diag(∂ ln ρ/∂m).
//! The normal equations are solved by dense Cholesky (n ≤ [`DIRECT_MAX_PARAMS`]) or by
//! Jacobi-preconditioned conjugate gradients (Hestenes & Stiefel 1952) without forming
//! J_wᵀJ_w. A line search follows: the full step if it satisfies Armijo's condition
//! Φ(m + Δm) ≤ Φ(m) + 10⁻⁴ ∇Φᵀ Δm — unless the parabola through Φ(0), Φ'(0) and Φ(1) has its
//! minimum below τ = 0.7 and is lower there ([`shorter_tau`]) — otherwise the minimum of that
//! parabola (Nocedal & Wright 2006, §3.5), then halving.
//!
//! **Stopping**: χ² = ‖D(d − f)‖²/N ≤ the target (1), or χ² decreased by less than
//! `min_dchi2_percent` in one iteration (it stopped improving), or `max_iterations`.
//!
//! **λ**: fixed, or found automatically: the user's λ is run first and kept for comparison;
//! while the final χ² is outside target·(1 ± tolerance), λ is changed by a secant step in
//! (ln λ, ln χ²) (χ² grows with λ) and the inversion repeated from the same start model.
//!
//! **Coverage** (cumulative sensitivity; pyGIMLi `coverageDCtrans`): c_j = Σ_i |J_ij| / A_j
//! with J the log-log Jacobian of the last iteration and A_j the cell area (m²).

use super::fem::{ForwardError, ForwardOperator, ForwardSettings, parameter_map};
use super::mesh::{Interface, LineMeshParams, MARKER_BACKGROUND, Mesh, MeshError, line_mesh};
use super::qc;
use super::survey::{Quadrupole, Survey};
use ndarray::Array2;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// A progress callback: fraction done (0–1) and what is being done.
pub type Progress<'a> = &'a mut dyn FnMut(f64, &str);

/// Why an inversion could not run or finish.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum InversionError {
    /// Nothing usable to invert.
    #[error("no usable data: {0}")]
    NoData(String),
    /// A setting is out of range.
    #[error("invalid inversion setting: {0}")]
    BadParams(String),
    /// The mesh could not be built.
    #[error("mesh: {0}")]
    Mesh(#[from] MeshError),
    /// The forward model failed.
    #[error("forward model: {0}")]
    Forward(#[from] ForwardError),
    /// The normal equations could not be solved.
    #[error("the Gauss–Newton system could not be solved: {0}")]
    Solve(String),
    /// The user stopped it.
    #[error("stopped by the user after {iterations} iterations")]
    Cancelled {
        /// Iterations completed.
        iterations: usize,
    },
    /// A time-lapse request that cannot be honoured.
    #[error("{0}")]
    TimeLapse(String),
}

/// How λ is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum LambdaMode {
    /// The given λ throughout.
    #[default]
    Fixed,
    /// The given λ first (kept for comparison), then λ changed until χ² reaches the target.
    Auto,
}

/// Where the data errors come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ErrorSource {
    /// The file's `err` column when it has one, else a reciprocal error model when there are
    /// enough normal/reciprocal pairs, else the fixed relative error.
    #[default]
    Auto,
    /// The file's `err` column (an error if it has none).
    File,
    /// The power-law model fitted on reciprocal pairs (an error if there are too few).
    Reciprocal,
    /// `relative_error` (+ `absolute_error_v`/|U| where U is known) for every datum.
    Fixed,
}

/// How the Gauss–Newton system is solved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Solver {
    /// Dense Cholesky up to [`DIRECT_MAX_PARAMS`] parameters, conjugate gradients above.
    #[default]
    Auto,
    /// Dense Cholesky of JᵀJ + λR.
    Direct,
    /// Jacobi-preconditioned conjugate gradients (JᵀJ never formed).
    Cg,
}

/// Settings of an inversion (the `inversion_params` configuration key). Missing fields take
/// the defaults; an unknown field is an error naming the valid ones.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct InversionParams {
    /// Regularisation strength λ (pyGIMLi's default 20).
    pub lambda: f64,
    /// Fixed λ or λ found to the target χ².
    pub lambda_mode: LambdaMode,
    /// The χ² to stop at (and aim for with `lambda_mode = auto`).
    pub target_chi2: f64,
    /// Auto λ: accept χ² within target·(1 ± this).
    pub lambda_tolerance: f64,
    /// Auto λ: at most this many inversions besides the user's.
    pub max_lambda_trials: usize,
    /// Gauss–Newton iterations at most.
    pub max_iterations: usize,
    /// Stop when χ² decreased by less than this (percent) in one iteration.
    pub min_dchi2_percent: f64,
    /// Anisotropy: weight of smoothness across horizontal edges (< 1 favours layers).
    pub z_weight: f64,
    /// Smallness weight α_s towards the reference model (0 = smoothness only).
    pub alpha_s: f64,
    /// Reference model, Ω·m (homogeneous); `None` = the start model.
    pub reference_ohm_m: Option<f64>,
    /// Start model, Ω·m (homogeneous); `None` = the median of the apparent resistivities.
    pub start_ohm_m: Option<f64>,
    /// Lower bound of the resistivity, Ω·m (0 = none).
    pub lower_ohm_m: f64,
    /// Upper bound of the resistivity, Ω·m (`None` = none).
    pub upper_ohm_m: Option<f64>,
    /// Where the data errors come from.
    pub error_source: ErrorSource,
    /// Relative error used when the errors are not taken from the file or reciprocals.
    pub relative_error: f64,
    /// Absolute voltage error (V) added as `absolute_error_v`/|U| where U is known.
    pub absolute_error_v: f64,
    /// No datum gets a smaller relative error than this.
    pub min_relative_error: f64,
    /// Average normal and reciprocal measurements into one datum.
    pub merge_reciprocals: bool,
    /// Outlier rejection: after a first inversion, data whose normalised residual
    /// |ln ρa_obs − ln ρa_pred|/ε exceeds this many robust standard deviations
    /// (1.4826·median) and 3 are removed (at most 10 % of the data) and the inversion is run
    /// again; 0 = off.
    pub outlier_threshold: f64,
    /// Normal equations solver.
    pub solver: Solver,
    /// Parameter mesh; `None` = [`default_mesh_params`].
    pub mesh: Option<LineMeshParams>,
}

impl Default for InversionParams {
    fn default() -> Self {
        InversionParams {
            lambda: 20.0,
            lambda_mode: LambdaMode::Fixed,
            target_chi2: 1.0,
            lambda_tolerance: 0.2,
            max_lambda_trials: 4,
            max_iterations: 15,
            min_dchi2_percent: 2.0,
            z_weight: 1.0,
            alpha_s: 0.0,
            reference_ohm_m: None,
            start_ohm_m: None,
            lower_ohm_m: 0.0,
            upper_ohm_m: None,
            error_source: ErrorSource::Auto,
            relative_error: 0.03,
            absolute_error_v: 0.0,
            min_relative_error: 0.01,
            merge_reciprocals: true,
            outlier_threshold: 0.0,
            solver: Solver::Auto,
            mesh: None,
        }
    }
}

impl InversionParams {
    /// Check ranges; the message names the setting and its valid range.
    pub fn validate(&self) -> Result<(), InversionError> {
        let bad = |m: String| Err(InversionError::BadParams(m));
        if !(self.lambda.is_finite() && self.lambda > 0.0) {
            return bad(format!("lambda = {} (must be > 0)", self.lambda));
        }
        if !(self.target_chi2 > 0.0) {
            return bad(format!("target_chi2 = {} (must be > 0)", self.target_chi2));
        }
        if self.max_iterations == 0 || self.max_iterations > 100 {
            return bad(format!(
                "max_iterations = {} (1..=100)",
                self.max_iterations
            ));
        }
        if !(self.z_weight > 0.0 && self.z_weight <= 10.0) {
            return bad(format!("z_weight = {} (0 < z_weight ≤ 10)", self.z_weight));
        }
        if !(self.alpha_s >= 0.0) {
            return bad(format!("alpha_s = {} (≥ 0)", self.alpha_s));
        }
        if !(self.relative_error > 0.0 && self.relative_error < 1.0) {
            return bad(format!(
                "relative_error = {} (0 < e < 1, a fraction: 0.03 = 3 %)",
                self.relative_error
            ));
        }
        if !(self.min_relative_error >= 0.0 && self.min_relative_error < 1.0) {
            return bad(format!(
                "min_relative_error = {} (0 ≤ e < 1)",
                self.min_relative_error
            ));
        }
        if !(self.outlier_threshold >= 0.0) {
            return bad(format!(
                "outlier_threshold = {} (≥ 0; 0 = off)",
                self.outlier_threshold
            ));
        }
        if !(self.lower_ohm_m >= 0.0) {
            return bad(format!("lower_ohm_m = {} (≥ 0)", self.lower_ohm_m));
        }
        if let Some(u) = self.upper_ohm_m
            && !(u > self.lower_ohm_m)
        {
            return bad(format!(
                "upper_ohm_m = {u} must exceed lower_ohm_m = {}",
                self.lower_ohm_m
            ));
        }
        for (name, v) in [
            ("start_ohm_m", self.start_ohm_m),
            ("reference_ohm_m", self.reference_ohm_m),
        ] {
            if let Some(v) = v
                && !(v > self.lower_ohm_m && self.upper_ohm_m.is_none_or(|u| v < u))
            {
                return bad(format!("{name} = {v} lies outside the bounds"));
            }
        }
        Ok(())
    }
}

/// The parameter mesh used when none is given: one column of cells per electrode spacing
/// (two for lines of up to 32 electrodes, whose cells would otherwise be few), first layer
/// half a spacing thick growing by 1.25 per level down to the parameter depth, padding out to
/// 1.5 line lengths (the Robin boundary condition makes a near boundary accurate).
pub fn default_mesh_params(n_electrodes: usize, para_depth_m: f64) -> LineMeshParams {
    LineMeshParams {
        n_between: if n_electrodes <= 32 { 2 } else { 1 },
        side_extension: 2,
        first_layer_fraction: 0.5,
        depth_growth: 1.25,
        para_depth_m,
        boundary_factor: 1.5,
        padding_growth: 2.5,
    }
}

/// Parameter depth, m: 0.4 × the length of the electrode line, pyGIMLi's default for
/// `createParaMesh(paraDepth=0)` (Rücker, Günther & Wagner 2017), but at least the deepest
/// median depth of investigation of the quadrupoles (≈ 0.2 × the spread of one quadrupole;
/// Edwards 1977, Barker 1989) times 1.5.
pub fn auto_para_depth_m(positions: &[[f64; 2]], quads: &[Quadrupole]) -> f64 {
    let xs = |e: Option<usize>| e.and_then(|i| positions.get(i)).map(|p| p[0]);
    let spread = quads
        .iter()
        .map(|q| {
            let v: Vec<f64> = [q.a, q.b, q.m, q.n].iter().filter_map(|e| xs(*e)).collect();
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            if v.len() >= 2 { hi - lo } else { 0.0 }
        })
        .fold(0.0, f64::max);
    let lo = positions.iter().map(|p| p[0]).fold(f64::INFINITY, f64::min);
    let hi = positions
        .iter()
        .map(|p| p[0])
        .fold(f64::NEG_INFINITY, f64::max);
    let line = (hi - lo).max(0.0);
    (0.4 * line).max(0.3 * spread)
}

/// What one datum's value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ValueKind {
    /// A transfer resistance (R, U/I or ρa/k of the file): ρa = k_model·R.
    Resistance,
    /// An apparent resistivity as the file gives it (no R): used as is.
    ApparentResistivity,
}

/// The data of one survey as they are inverted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DataSet {
    /// Quadrupoles (indices into the survey's electrodes).
    pub quadrupoles: Vec<Quadrupole>,
    /// Transfer resistance (Ω) or apparent resistivity (Ω·m), see `kind`.
    pub value: Vec<f64>,
    /// What `value` is.
    pub kind: Vec<ValueKind>,
    /// Relative error of each datum (fraction).
    pub err: Vec<f64>,
    /// Index of each datum in the survey (the normal datum of a merged pair).
    pub source_index: Vec<usize>,
    /// Where the errors came from, in words.
    pub error_source: String,
    /// Whether that was a default (no errors in the file, no reciprocals).
    pub error_is_default: bool,
    /// Data in the file.
    pub n_read: usize,
    /// (reason, count) of data left out.
    pub dropped: Vec<(String, usize)>,
    /// Reciprocal pairs averaged into one datum.
    pub n_reciprocal_merged: usize,
    /// What was noticed and decided.
    pub notes: Vec<String>,
}

impl DataSet {
    /// Number of data.
    pub fn len(&self) -> usize {
        self.value.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.value.is_empty()
    }

    /// Keep only the data where `keep[i]`.
    pub fn retain(&mut self, keep: &[bool]) {
        fn f<T: Clone>(v: &[T], keep: &[bool]) -> Vec<T> {
            v.iter()
                .zip(keep)
                .filter(|(_, k)| **k)
                .map(|(x, _)| x.clone())
                .collect()
        }
        self.quadrupoles = f(&self.quadrupoles, keep);
        self.value = f(&self.value, keep);
        self.kind = f(&self.kind, keep);
        self.err = f(&self.err, keep);
        self.source_index = f(&self.source_index, keep);
    }
}

/// Select the usable data of a survey, merge reciprocals and attach errors (see
/// [`ErrorSource`]); nothing is dropped silently — `dropped` counts each reason.
pub fn prepare_data(survey: &Survey, params: &InversionParams) -> Result<DataSet, InversionError> {
    let n = survey.n_data();
    let r = survey.resistances_ohm();
    let rhoa_file = survey.rhoa_ohm_m.clone();
    let mut notes = Vec::new();
    let mut dropped: Vec<(String, usize)> = Vec::new();
    let mut keep = vec![true; n];
    let mut count = |name: &str, bad: &dyn Fn(usize) -> bool, keep: &mut Vec<bool>| {
        let c = (0..n).filter(|&i| keep[i] && bad(i)).count();
        for i in 0..n {
            if keep[i] && bad(i) {
                keep[i] = false;
            }
        }
        if c > 0 {
            dropped.push((name.to_string(), c));
        }
    };
    count(
        "flagged invalid in the file or by a filter",
        &|i| !survey.valid.get(i).copied().unwrap_or(true),
        &mut keep,
    );
    let has_value = |i: usize| {
        r[i].is_finite() && r[i] != 0.0
            || rhoa_file
                .as_ref()
                .is_some_and(|v| v[i].is_finite() && v[i] > 0.0)
    };
    count(
        "no resistance or apparent resistivity",
        &|i| !has_value(i),
        &mut keep,
    );
    count(
        "current and potential electrodes coincide",
        &|i| {
            let q = survey.quadrupoles[i];
            [q.a, q.b]
                .iter()
                .flatten()
                .any(|e| q.m == Some(*e) || q.n == Some(*e))
                || (q.a.is_none() && q.b.is_none())
                || (q.m.is_none() && q.n.is_none())
        },
        &mut keep,
    );
    // Reciprocal pairs among the kept data.
    let pairs: Vec<qc::ReciprocalPair> = qc::reciprocal_pairs(survey)
        .into_iter()
        .filter(|p| keep[p.normal] && keep[p.reciprocal])
        .collect();
    let recip_model = if pairs.len() >= 20 {
        qc::fit_error_model(&pairs, 10, params.min_relative_error.max(1e-3))
    } else {
        None
    };
    let mut value: Vec<f64> = (0..n)
        .map(|i| {
            if r[i].is_finite() && r[i] != 0.0 {
                r[i]
            } else {
                rhoa_file.as_ref().map_or(f64::NAN, |v| v[i])
            }
        })
        .collect();
    let kind: Vec<ValueKind> = (0..n)
        .map(|i| {
            if r[i].is_finite() && r[i] != 0.0 {
                ValueKind::Resistance
            } else {
                ValueKind::ApparentResistivity
            }
        })
        .collect();
    let mut n_merged = 0;
    if params.merge_reciprocals {
        for p in &pairs {
            // R of the normal datum with the pair's mean magnitude (the reciprocal's sign is
            // aligned in `reciprocal_pairs`).
            value[p.normal] = value[p.normal].signum() * p.r_mean_ohm;
            keep[p.reciprocal] = false;
            n_merged += 1;
        }
        if n_merged > 0 {
            notes.push(format!(
                "{n_merged} normal/reciprocal pairs averaged into one datum each"
            ));
        }
    }
    // Errors.
    let file_err = survey.err.as_ref();
    let percent = file_err.is_some_and(|e| e.iter().any(|v| v.is_finite() && *v > 1.0));
    let source = match params.error_source {
        ErrorSource::Auto => {
            if file_err.is_some() {
                ErrorSource::File
            } else if recip_model.is_some() {
                ErrorSource::Reciprocal
            } else {
                ErrorSource::Fixed
            }
        }
        s => s,
    };
    let u_of = |i: usize| -> f64 {
        let pick = |c: &Option<Vec<f64>>| c.as_ref().and_then(|v| v.get(i).copied());
        if let Some(u) = pick(&survey.u_v).filter(|u| u.is_finite()) {
            return u;
        }
        match pick(&survey.i_a).filter(|c| c.is_finite()) {
            Some(c) if r[i].is_finite() => r[i] * c,
            _ => f64::NAN,
        }
    };
    let fixed = |i: usize| {
        let u = u_of(i).abs();
        let abs = if params.absolute_error_v > 0.0 && u > 0.0 {
            params.absolute_error_v / u
        } else {
            0.0
        };
        params.relative_error + abs
    };
    let floor = params.min_relative_error;
    let (err, error_source, error_is_default): (Vec<f64>, String, bool) = match source {
        ErrorSource::File => {
            let Some(e) = file_err else {
                return Err(InversionError::BadParams(
                    "error_source = file, but the file has no err column".into(),
                ));
            };
            let scale = if percent { 0.01 } else { 1.0 };
            if percent {
                notes.push(format!(
                    "the file's err values reach {:.4}, above 1: read as percent (err/100)",
                    e.iter()
                        .copied()
                        .filter(|v| v.is_finite())
                        .fold(0.0, f64::max)
                ));
            }
            let err = (0..n)
                .map(|i| {
                    let v = e[i] * scale;
                    if v.is_finite() && v >= floor {
                        v
                    } else {
                        floor.max(1e-4)
                    }
                })
                .collect();
            let kept_floor = (0..n)
                .filter(|&i| keep[i] && !(e[i] * scale >= floor))
                .count();
            if kept_floor > 0 {
                notes.push(format!(
                    "{kept_floor} data had an error below the floor of {:.1} % (or none) and got the floor",
                    100.0 * floor
                ));
            }
            (
                err,
                format!(
                    "the file's err column{}, floored at {:.1} %",
                    if percent { " (percent)" } else { "" },
                    100.0 * floor
                ),
                false,
            )
        }
        ErrorSource::Reciprocal => {
            let Some(m) = &recip_model else {
                return Err(InversionError::BadParams(format!(
                    "error_source = reciprocal, but only {} normal/reciprocal pairs were found (at least 20 needed)",
                    pairs.len()
                )));
            };
            let err = (0..n)
                .map(|i| m.relative_error(value[i]).max(floor))
                .collect();
            (
                err,
                format!(
                    "power-law model of {} reciprocal pairs: ΔR = 10^{:.3}·|R|^{:.3} (Koestel et al. 2008), floored at {:.1} %",
                    m.n_pairs,
                    m.intercept,
                    m.slope,
                    100.0 * m.floor.max(floor)
                ),
                false,
            )
        }
        ErrorSource::Fixed | ErrorSource::Auto => {
            let err = (0..n).map(|i| fixed(i).max(floor)).collect();
            let default = params.error_source == ErrorSource::Auto;
            let text = if params.absolute_error_v > 0.0 {
                format!(
                    "{:.1} % relative + {} V / |U|",
                    100.0 * params.relative_error,
                    params.absolute_error_v
                )
            } else {
                format!("{:.1} % relative", 100.0 * params.relative_error)
            };
            if default {
                notes.push(format!(
                    "DEFAULT ERRORS: the file has no error column and too few reciprocal pairs ({}), so every datum was given {text}; χ² depends on this assumption",
                    pairs.len()
                ));
            }
            (err, text, default)
        }
    };
    let quads: Vec<Quadrupole> = survey.quadrupoles.clone();
    let mut ds = DataSet {
        quadrupoles: quads,
        value,
        kind,
        err,
        source_index: (0..n).collect(),
        error_source,
        error_is_default,
        n_read: n,
        dropped,
        n_reciprocal_merged: n_merged,
        notes,
    };
    ds.retain(&keep);
    if ds.is_empty() {
        return Err(InversionError::NoData(format!(
            "all {n} data of the survey were left out ({})",
            ds.dropped
                .iter()
                .map(|(r, c)| format!("{c} {r}"))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok(ds)
}

/// A smoothness constraint between two parameters: (i, j, weight).
pub type Constraint = (usize, usize, f64);

/// The geometry every model of an inversion shares: the parameter mesh, which cell is which
/// parameter, and the electrodes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelSection {
    /// The parameter mesh, background padding included (x along the line, z up, m).
    pub mesh: Mesh,
    /// The parameter of every mesh cell (background cells carry their nearest parameter).
    pub cell_param: Vec<usize>,
    /// The mesh cell of each parameter.
    pub param_cell: Vec<usize>,
    /// Area of each parameter cell, m².
    pub param_area_m2: Vec<f64>,
    /// Centroid (x, z) of each parameter cell, m.
    pub param_centroid_m: Vec<[f64; 2]>,
    /// Region marker of each parameter ([`super::mesh::MARKER_ABOVE`] / `MARKER_BELOW`).
    pub param_region: Vec<i32>,
    /// Pairs of parameters sharing an edge (all of them, across regions too).
    pub neighbours: Vec<[usize; 2]>,
    /// Electrode positions (along the line, elevation), m.
    pub electrodes_xz: Vec<[f64; 2]>,
    /// The ground surface (x, z) from the first to the last parameter column, m.
    pub surface_xz: Vec<[f64; 2]>,
    /// Interfaces the mesh honours (x, z), m.
    pub interfaces: Vec<Interface>,
}

impl ModelSection {
    /// Number of parameters.
    pub fn n_params(&self) -> usize {
        self.param_cell.len()
    }

    /// The triangle of parameter j as (x, z) vertices, m.
    pub fn param_polygon(&self, j: usize) -> [[f64; 2]; 3] {
        self.mesh.cells[self.param_cell[j]].map(|i| self.mesh.nodes[i])
    }

    /// The parameter whose cell contains (x, z), if any (barycentric test, edges included).
    pub fn param_at(&self, x: f64, z: f64) -> Option<usize> {
        (0..self.n_params()).find(|&j| {
            let [a, b, c] = self.param_polygon(j);
            let d = (b[1] - c[1]) * (a[0] - c[0]) + (c[0] - b[0]) * (a[1] - c[1]);
            if d == 0.0 {
                return false;
            }
            let l1 = ((b[1] - c[1]) * (x - c[0]) + (c[0] - b[0]) * (z - c[1])) / d;
            let l2 = ((c[1] - a[1]) * (x - c[0]) + (a[0] - c[0]) * (z - c[1])) / d;
            let eps = -1e-9;
            l1 >= eps && l2 >= eps && 1.0 - l1 - l2 >= eps
        })
    }

    /// Depth below the surface of parameter j's centroid, m.
    pub fn param_depth_m(&self, j: usize) -> f64 {
        let c = self.param_centroid_m[j];
        super::mesh::interp(&self.surface_xz, c[0]) - c[1]
    }
}

/// A forward operator on a parameter mesh, with its smoothness constraints.
pub struct Discretisation {
    /// The shared geometry.
    pub section: ModelSection,
    /// The forward operator (H2-refined mesh; parameters = parameter cells).
    pub op: ForwardOperator,
    /// Smoothness constraints (region boundaries are not crossed).
    pub constraints: Vec<Constraint>,
    /// Constraints left out because they would cross an interface.
    pub n_cut_by_interfaces: usize,
}

/// Build the parameter mesh for electrodes at `positions` (along the line, elevation) with
/// `topography`, honouring `interfaces`, its H2 refinement as the forward mesh, and the
/// forward operator for `quads`; smoothness constraints with z-weight `z_weight` between
/// parameter cells of the same region.
pub fn discretise(
    positions: &[[f64; 2]],
    topography: &[[f64; 2]],
    quads: &[Quadrupole],
    mesh_params: &LineMeshParams,
    interfaces: &[Interface],
    z_weight: f64,
    geometric_factors: Option<Vec<f64>>,
) -> Result<Discretisation, InversionError> {
    let coarse = line_mesh(positions, topography, mesh_params, interfaces)?;
    let (fine, parent) = coarse.refine_h2();
    let (map, np) = parameter_map(&coarse, &parent);
    let param_cell: Vec<usize> = (0..coarse.n_cells())
        .filter(|&c| coarse.cell_marker[c] != MARKER_BACKGROUND)
        .collect();
    if param_cell.len() != np {
        return Err(InversionError::BadParams(
            "the parameter mesh has no parameter cells".into(),
        ));
    }
    let mut cell_param = vec![0usize; coarse.n_cells()];
    for (c, &p) in parent.iter().zip(&map) {
        cell_param[*c] = p;
    }
    let cent = coarse.centroids();
    let param_area_m2: Vec<f64> = param_cell.iter().map(|&c| coarse.signed_area(c)).collect();
    let param_centroid_m: Vec<[f64; 2]> = param_cell.iter().map(|&c| cent[c]).collect();
    let param_region: Vec<i32> = param_cell.iter().map(|&c| coarse.cell_marker[c]).collect();
    // Edges shared by two parameter cells.
    let mut of_cell = vec![usize::MAX; coarse.n_cells()];
    for (j, &c) in param_cell.iter().enumerate() {
        of_cell[c] = j;
    }
    let mut edge_cells: HashMap<(usize, usize), Vec<usize>> = HashMap::new();
    for &c in &param_cell {
        let t = coarse.cells[c];
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            edge_cells.entry((a.min(b), a.max(b))).or_default().push(c);
        }
    }
    let mut edges: Vec<((usize, usize), Vec<usize>)> = edge_cells.into_iter().collect();
    edges.sort_unstable_by_key(|e| e.0);
    let mut neighbours = Vec::new();
    let mut constraints = Vec::new();
    let mut cut = 0;
    for ((a, b), cells) in edges {
        if cells.len() != 2 {
            continue;
        }
        let (i, j) = (of_cell[cells[0]], of_cell[cells[1]]);
        neighbours.push([i.min(j), i.max(j)]);
        if param_region[i] != param_region[j] {
            cut += 1;
            continue;
        }
        let (p, q) = (coarse.nodes[a], coarse.nodes[b]);
        let (dx, dz) = (q[0] - p[0], q[1] - p[1]);
        let len = dx.hypot(dz);
        // Unit normal (dz, −dx)/len: its vertical component is |dx|/len.
        let nz = if len > 0.0 { dx.abs() / len } else { 0.0 };
        constraints.push((i.min(j), i.max(j), 1.0 + (z_weight - 1.0) * nz));
    }
    // The surface over the parameter columns.
    let mut surface_xz: Vec<[f64; 2]> = coarse
        .boundary
        .iter()
        .filter(|e| e.kind == super::mesh::BoundaryKind::Surface)
        .flat_map(|e| e.nodes)
        .map(|i| coarse.nodes[i])
        .collect();
    surface_xz.sort_by(|a, b| a[0].total_cmp(&b[0]));
    surface_xz.dedup_by(|a, b| (a[0] - b[0]).abs() < 1e-9);
    let settings = ForwardSettings {
        geometric_factors,
        ..Default::default()
    };
    let op = ForwardOperator::new(fine, map, positions, quads, &settings)?;
    Ok(Discretisation {
        section: ModelSection {
            mesh: coarse,
            cell_param,
            param_cell,
            param_area_m2,
            param_centroid_m,
            param_region,
            neighbours,
            electrodes_xz: positions.to_vec(),
            surface_xz,
            interfaces: interfaces.to_vec(),
        },
        op,
        constraints,
        n_cut_by_interfaces: cut,
    })
}

/// The model transform m(ρ) of the module docs (log, or log with bounds).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Transform {
    /// Lower bound, Ω·m (0 = none).
    pub lo: f64,
    /// Upper bound, Ω·m (∞ = none).
    pub hi: f64,
}

impl Transform {
    /// From the parameters' bounds.
    pub fn of(params: &InversionParams) -> Self {
        Transform {
            lo: params.lower_ohm_m,
            hi: params.upper_ohm_m.unwrap_or(f64::INFINITY),
        }
    }

    /// m = ln(ρ − lo) − ln(hi − ρ) (or ln(ρ − lo) without an upper bound).
    pub fn m(&self, rho: f64) -> f64 {
        if self.hi.is_finite() {
            (rho - self.lo).ln() - (self.hi - rho).ln()
        } else {
            (rho - self.lo).ln()
        }
    }

    /// ρ = lo + (hi − lo)/(1 + e^−m) (or lo + e^m), the inverse of [`Self::m`].
    pub fn rho(&self, m: f64) -> f64 {
        if self.hi.is_finite() {
            self.lo + (self.hi - self.lo) / (1.0 + (-m).exp())
        } else {
            self.lo + m.exp()
        }
    }

    /// ∂ ln ρ / ∂m = (ρ − lo)(hi − ρ) / ((hi − lo) ρ) (or (ρ − lo)/ρ).
    pub fn dlnrho_dm(&self, rho: f64) -> f64 {
        if self.hi.is_finite() {
            (rho - self.lo) * (self.hi - rho) / ((self.hi - self.lo) * rho)
        } else {
            (rho - self.lo) / rho
        }
    }
}

/// The regularisation R = CᵀWᵀWC + α_s I around a reference model (transformed units).
#[derive(Debug, Clone)]
pub struct Regularisation {
    /// Constraints (i, j, w).
    pub constraints: Vec<Constraint>,
    /// Smallness weight.
    pub alpha_s: f64,
    /// Reference model (transformed).
    pub m_ref: Vec<f64>,
}

impl Regularisation {
    /// φ_m = Σ_r w_r² (Δ_i − Δ_j)² + α_s Σ Δ², Δ = m − m_ref.
    pub fn phi(&self, m: &[f64]) -> f64 {
        let d = |i: usize| m[i] - self.m_ref[i];
        let s: f64 = self
            .constraints
            .iter()
            .map(|&(i, j, w)| (w * (d(i) - d(j))).powi(2))
            .sum();
        s + self.alpha_s * (0..m.len()).map(|i| d(i) * d(i)).sum::<f64>()
    }

    /// R x.
    pub fn apply(&self, x: &[f64]) -> Vec<f64> {
        let mut y: Vec<f64> = x.iter().map(|v| self.alpha_s * v).collect();
        for &(i, j, w) in &self.constraints {
            let t = w * w * (x[i] - x[j]);
            y[i] += t;
            y[j] -= t;
        }
        y
    }

    /// The diagonal of R.
    pub fn diagonal(&self, n: usize) -> Vec<f64> {
        let mut d = vec![self.alpha_s; n];
        for &(i, j, w) in &self.constraints {
            d[i] += w * w;
            d[j] += w * w;
        }
        d
    }
}

/// One iteration as recorded: the record every method shares
/// ([`crate::methods::shared::IterationRecord`]).
pub use crate::methods::shared::IterationRecord;

/// Why the iterations ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// χ² reached the target.
    TargetReached,
    /// χ² stopped improving (less than `min_dchi2_percent` in one iteration).
    Plateau,
    /// The iteration limit.
    MaxIterations,
    /// No step length decreased the objective.
    NoDescent,
}

impl StopReason {
    /// In words.
    pub fn words(self) -> &'static str {
        match self {
            StopReason::TargetReached => "χ² reached the target",
            StopReason::Plateau => "χ² stopped improving",
            StopReason::MaxIterations => "the iteration limit was reached",
            StopReason::NoDescent => "no step decreased the objective",
        }
    }
}

/// One λ tried by the automatic λ search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LambdaTrial {
    /// λ.
    pub lambda: f64,
    /// Final χ².
    pub chi2: f64,
    /// Iterations.
    pub iterations: usize,
    /// Whether this is the model returned.
    pub chosen: bool,
}

/// The inversion of one survey.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InversionResult {
    /// The shared geometry.
    pub section: ModelSection,
    /// Resistivity of each parameter, Ω·m.
    pub rho_ohm_m: Vec<f64>,
    /// Coverage of each parameter (Σ_i |J_ij| / A_j, m⁻²).
    pub coverage: Vec<f64>,
    /// The data inverted.
    pub data: DataSet,
    /// Geometric factors used for ρa, m.
    pub k_m: Vec<f64>,
    /// Observed ρa, Ω·m.
    pub rhoa_obs_ohm_m: Vec<f64>,
    /// Predicted ρa of the final model, Ω·m.
    pub rhoa_pred_ohm_m: Vec<f64>,
    /// Final χ².
    pub chi2: f64,
    /// χ² of the start model and after each iteration.
    pub chi2_history: Vec<f64>,
    /// Relative rms misfit of ρa, percent.
    pub rrms_percent: f64,
    /// Gauss–Newton iterations done.
    pub iterations: usize,
    /// λ of the returned model.
    pub lambda: f64,
    /// Every iteration.
    pub history: Vec<IterationRecord>,
    /// Why the iterations ended.
    pub stop_reason: StopReason,
    /// Start model, Ω·m.
    pub start_ohm_m: f64,
    /// Number of data.
    pub n_data: usize,
    /// Number of parameter cells.
    pub n_cells: usize,
    /// Whether an interface shaped the mesh and cut the smoothness.
    pub interface_used: bool,
    /// Smoothness constraints left out at interfaces.
    pub n_constraints_cut: usize,
    /// The settings used.
    pub params: InversionParams,
    /// Auto λ: every λ tried (the user's first).
    pub lambda_trials: Vec<LambdaTrial>,
    /// Auto λ: the run at the user's own λ, when another λ was chosen.
    pub user_lambda_run: Option<Box<InversionResult>>,
    /// Seconds for the whole inversion.
    pub seconds: f64,
    /// What was noticed and decided.
    pub notes: Vec<String>,
}

impl InversionResult {
    /// Coverage relative to its maximum (0–1).
    pub fn relative_coverage(&self) -> Vec<f64> {
        let max = self.coverage.iter().copied().fold(0.0, f64::max);
        self.coverage
            .iter()
            .map(|c| if max > 0.0 { c / max } else { 0.0 })
            .collect()
    }
}

/// χ² = mean(((d − f)/ε)²) on ln ρa (pyGIMLi's definition with a log data transform).
pub fn chi2(d: &[f64], f: &[f64], w: &[f64]) -> f64 {
    let n = d.len().max(1) as f64;
    d.iter()
        .zip(f)
        .zip(w)
        .map(|((d, f), w)| ((d - f) * w).powi(2))
        .sum::<f64>()
        / n
}

/// Relative rms misfit, percent: 100·sqrt(mean(((ρa_obs − ρa_pred)/ρa_obs)²)).
pub fn rrms_percent(obs: &[f64], pred: &[f64]) -> f64 {
    let n = obs.len().max(1) as f64;
    100.0
        * (obs
            .iter()
            .zip(pred)
            .map(|(o, p)| ((o - p) / o).powi(2))
            .sum::<f64>()
            / n)
            .sqrt()
}

/// ln |ρa| of the forward response of parameter resistivities `rho`.
pub(crate) fn log_response(op: &ForwardOperator, rho: &[f64]) -> Result<Vec<f64>, ForwardError> {
    Ok(op
        .response(rho)?
        .rhoa_ohm_m
        .iter()
        .map(|v| v.abs().max(1e-300).ln())
        .collect())
}

/// The problem one Gauss–Newton run solves.
pub(crate) struct GnProblem<'a> {
    pub op: &'a ForwardOperator,
    /// ln ρa observed (or the difference/ratio data).
    pub d: Vec<f64>,
    /// 1/ε.
    pub w: Vec<f64>,
    pub tr: Transform,
    pub reg: Regularisation,
    pub lambda: f64,
}

/// What a Gauss–Newton run returns.
pub(crate) struct GnRun {
    pub m: Vec<f64>,
    pub f: Vec<f64>,
    pub chi2: f64,
    pub history: Vec<IterationRecord>,
    pub stop: StopReason,
    pub jac: Option<Array2<f64>>,
    pub iterations: usize,
}

impl GnProblem<'_> {
    fn rho(&self, m: &[f64]) -> Vec<f64> {
        m.iter().map(|&v| self.tr.rho(v)).collect()
    }

    fn objective(&self, f: &[f64], m: &[f64]) -> f64 {
        chi2(&self.d, f, &self.w) * self.d.len() as f64 + self.lambda * self.reg.phi(m)
    }

    fn record(&self, it: usize, f: &[f64], m: &[f64], tau: f64, secs: f64) -> IterationRecord {
        let obs: Vec<f64> = self.d.iter().map(|v| v.exp()).collect();
        let pred: Vec<f64> = f.iter().map(|v| v.exp()).collect();
        IterationRecord {
            iteration: it,
            chi2: chi2(&self.d, f, &self.w),
            phi_m: self.reg.phi(m),
            lambda: self.lambda,
            step_length: tau,
            rrms_percent: Some(rrms_percent(&obs, &pred)),
            seconds: secs,
            ..Default::default()
        }
    }
}

/// Up to this many parameters [`Solver::Auto`] solves the normal equations by dense Cholesky
/// (the matrix and its factor: 2 × 8 n² bytes, 400 MB at the limit). Measured on a 96-electrode
/// dipole–dipole line (4 371 data, 2 772 cells; 2 cores, 2026-12-04): 3 s per Gauss–Newton
/// iteration direct against 50–78 s by Jacobi-preconditioned CG, which needed thousands of
/// iterations (25 s per iteration even at a relative residual of 1e-3), for the same χ²
/// history; the old limit of 2 500 sent that line to CG and its inversion took 7 minutes.
pub const DIRECT_MAX_PARAMS: usize = 5000;

/// The Gauss–Newton step Δm of the module docs for a weighted Jacobian `jw` (n_d × n, J_w = D J T)
/// and weighted residual `rw` = D(d − f).
pub(crate) fn gn_step(
    jw: &Array2<f64>,
    rw: &[f64],
    reg: &Regularisation,
    lambda: f64,
    m: &[f64],
    solver: Solver,
) -> Result<(Vec<f64>, Vec<f64>), InversionError> {
    let n = m.len();
    let dm_ref: Vec<f64> = m.iter().zip(&reg.m_ref).map(|(a, b)| a - b).collect();
    let r_ref = reg.apply(&dm_ref);
    let rw_arr = ndarray::ArrayView1::from(rw);
    let jtr = jw.t().dot(&rw_arr);
    let g: Vec<f64> = (0..n).map(|i| jtr[i] - lambda * r_ref[i]).collect();
    let direct = match solver {
        Solver::Direct => true,
        Solver::Cg => false,
        Solver::Auto => n <= DIRECT_MAX_PARAMS,
    };
    let x = if direct {
        solve_direct(jw, reg, lambda, &g)?
    } else {
        solve_cg(jw, reg, lambda, &g)?
    };
    Ok((x, g))
}

/// The Gauss–Newton step for benchmarks and tests: (Δm, gradient) for a weighted Jacobian
/// `jw` and weighted residual `rw` (see [`InversionResult`]'s module docs).
pub fn gn_step_public(
    jw: &Array2<f64>,
    rw: &[f64],
    reg: &Regularisation,
    lambda: f64,
    m: &[f64],
    solver: Solver,
) -> Result<(Vec<f64>, Vec<f64>), InversionError> {
    gn_step(jw, rw, reg, lambda, m, solver)
}

/// A faer view of a column-major ndarray matrix.
fn faer_view(a: &Array2<f64>) -> Option<faer::MatRef<'_, f64>> {
    let (r, c) = a.dim();
    let s = a.as_slice_memory_order()?;
    if a.t().is_standard_layout() {
        Some(faer::MatRef::from_column_major_slice(s, r, c))
    } else {
        Some(faer::MatRef::from_row_major_slice(s, r, c))
    }
}

/// Solve (J_wᵀJ_w + λR) x = g by dense Cholesky (faer; JᵀJ by a parallel GEMM).
fn solve_direct(
    jw: &Array2<f64>,
    reg: &Regularisation,
    lambda: f64,
    g: &[f64],
) -> Result<Vec<f64>, InversionError> {
    use faer::linalg::solvers::Solve;
    let n = g.len();
    let a = normal_matrix(jw, reg, lambda, 0.0)?;
    let llt = a
        .llt(faer::Side::Lower)
        .map_err(|e| InversionError::Solve(format!("Cholesky failed: {e:?}")))?;
    let mut b = faer::Mat::<f64>::from_fn(n, 1, |i, _| g[i]);
    llt.solve_in_place(&mut b);
    Ok((0..n).map(|i| b[(i, 0)]).collect())
}

/// The dense normal matrix J_wᵀJ_w + λR + `extra_diag`·I (faer; JᵀJ by a parallel GEMM),
/// with a relative ridge of 1e-10 so a direction nothing constrains cannot make it singular.
pub(crate) fn normal_matrix(
    jw: &Array2<f64>,
    reg: &Regularisation,
    lambda: f64,
    extra_diag: f64,
) -> Result<faer::Mat<f64>, InversionError> {
    let n = jw.ncols();
    let mut a = faer::Mat::<f64>::zeros(n, n);
    let owned;
    let jv = match faer_view(jw) {
        Some(v) => v,
        None => {
            owned = jw.as_standard_layout().to_owned();
            faer_view(&owned).ok_or_else(|| InversionError::Solve("Jacobian layout".into()))?
        }
    };
    faer::linalg::matmul::matmul(
        a.as_mut(),
        faer::Accum::Replace,
        jv.transpose(),
        jv,
        1.0,
        faer::Par::rayon(0),
    );
    for i in 0..n {
        a[(i, i)] += lambda * reg.alpha_s + extra_diag;
    }
    for &(i, j, w) in &reg.constraints {
        let t = lambda * w * w;
        a[(i, i)] += t;
        a[(j, j)] += t;
        a[(i, j)] -= t;
        a[(j, i)] -= t;
    }
    // A tiny ridge keeps a system with no smallness and an unresolved direction definite.
    let ridge = 1e-10 * (0..n).map(|i| a[(i, i)]).fold(0.0, f64::max);
    for i in 0..n {
        a[(i, i)] += ridge;
    }
    Ok(a)
}

/// Solve (J_wᵀJ_w + λR) x = g by Jacobi-preconditioned conjugate gradients, relative residual
/// 1e-6 or 2n iterations.
fn solve_cg(
    jw: &Array2<f64>,
    reg: &Regularisation,
    lambda: f64,
    g: &[f64],
) -> Result<Vec<f64>, InversionError> {
    let n = g.len();
    let colsq: Vec<f64> = (0..n)
        .map(|j| jw.column(j).iter().map(|v| v * v).sum())
        .collect();
    let rd = reg.diagonal(n);
    let pre: Vec<f64> = (0..n)
        .map(|i| {
            let d = colsq[i] + lambda * rd[i];
            if d > 0.0 { 1.0 / d } else { 1.0 }
        })
        .collect();
    let apply = |p: &[f64]| -> Vec<f64> {
        let jp = jw.dot(&ndarray::ArrayView1::from(p));
        let jtjp = jw.t().dot(&jp);
        let rp = reg.apply(p);
        (0..n).map(|i| jtjp[i] + lambda * rp[i]).collect()
    };
    let precond = |r: &[f64]| -> Vec<f64> { r.iter().zip(&pre).map(|(r, p)| r * p).collect() };
    Ok(pcg(&apply, &precond, g, 1e-6, 2 * n.max(10)))
}

/// Preconditioned conjugate gradients for A x = b (A symmetric positive definite given by
/// `apply`, preconditioner z = M⁻¹ r given by `precond`); Hestenes & Stiefel (1952).
pub(crate) fn pcg(
    apply: &dyn Fn(&[f64]) -> Vec<f64>,
    precond: &dyn Fn(&[f64]) -> Vec<f64>,
    b: &[f64],
    rtol: f64,
    max_iter: usize,
) -> Vec<f64> {
    let n = b.len();
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let mut x = vec![0.0; n];
    let mut r = b.to_vec();
    let bn = dot(b, b).sqrt();
    if bn == 0.0 {
        return x;
    }
    let mut z = precond(&r);
    let mut p = z.clone();
    let mut rz = dot(&r, &z);
    for _ in 0..max_iter {
        let ap = apply(&p);
        let pap = dot(&p, &ap);
        if pap <= 0.0 {
            break;
        }
        let a = rz / pap;
        for i in 0..n {
            x[i] += a * p[i];
            r[i] -= a * ap[i];
        }
        if dot(&r, &r).sqrt() <= rtol * bn {
            break;
        }
        z = precond(&r);
        let rz_new = dot(&r, &z);
        let beta = rz_new / rz;
        rz = rz_new;
        for i in 0..n {
            p[i] = z[i] + beta * p[i];
        }
    }
    x
}

/// Settings of one Gauss–Newton run (the part of [`InversionParams`] it needs).
#[derive(Debug, Clone, Copy)]
pub(crate) struct GnSettings {
    pub target_chi2: f64,
    pub max_iterations: usize,
    pub min_dchi2_percent: f64,
    pub solver: Solver,
}

impl GnSettings {
    pub fn of(p: &InversionParams) -> Self {
        GnSettings {
            target_chi2: p.target_chi2,
            max_iterations: p.max_iterations,
            min_dchi2_percent: p.min_dchi2_percent,
            solver: p.solver,
        }
    }
}

/// Armijo backtracking with a parabolic first guess along `dm` from `m` (objective `phi0`,
/// directional derivative `slope` < 0), given the objective `phi1` of the full step (already
/// evaluated by the caller, which then knows whether it was accepted: `phi1 ≤ phi0 + 10⁻⁴
/// slope`). Returns (τ, m_new, f_new) for τ < 1, or `None` when no step length down to 1/64
/// of the parabola's decreases the objective.
pub(crate) fn line_search(
    eval: &dyn Fn(&[f64]) -> Option<(Vec<f64>, f64)>,
    m: &[f64],
    dm: &[f64],
    phi0: f64,
    slope: f64,
    phi1: f64,
) -> Option<(f64, Vec<f64>, Vec<f64>)> {
    let at = |tau: f64| -> Vec<f64> { m.iter().zip(dm).map(|(a, b)| a + tau * b).collect() };
    let mut tau = if phi1.is_finite() {
        let den = 2.0 * (phi1 - phi0 - slope);
        if den > 0.0 {
            (-slope / den).clamp(0.05, 0.8)
        } else {
            0.5
        }
    } else {
        0.25
    };
    let mut best: Option<(f64, Vec<f64>, Vec<f64>, f64)> = None;
    for _ in 0..6 {
        let mt = at(tau);
        if let Some((ft, phit)) = eval(&mt) {
            if phit <= phi0 + 1e-4 * tau * slope {
                return Some((tau, mt, ft));
            }
            if phit < phi0 && best.as_ref().is_none_or(|b| phit < b.3) {
                best = Some((tau, mt, ft, phit));
            }
        }
        tau *= 0.5;
    }
    best.map(|(t, m, f, _)| (t, m, f))
}

/// For an accepted full step that decreased the objective far less than its own quadratic
/// model promised, the shorter step length to try: the parabola through φ(0), φ'(0) = `slope`
/// and φ(1) = `phi1` has its minimum at τ* = −slope / (2 (φ₁ − φ₀ − slope)) (Nocedal & Wright
/// 2006, eq. 3.57); `Some(τ*)` when τ* < 0.7. The caller evaluates the objective there (one
/// forward solve) and keeps that step when it is lower than φ₁; a
/// full step kept only because it passed Armijo's test can leave a strongly nonlinear problem
/// (a 50:1 conductor at the surface) in a basin it never leaves: χ² 79 at λ 20 where λ 5 fits
/// to 1 (the 2 m water-table truth of the answers issue).
pub(crate) fn shorter_tau(phi0: f64, slope: f64, phi1: f64) -> Option<f64> {
    let den = 2.0 * (phi1 - phi0 - slope);
    if !(den > 0.0 && slope < 0.0) {
        return None;
    }
    let tau = (-slope / den).max(0.05);
    (tau < 0.7).then_some(tau)
}

/// Gauss–Newton iterations from `m0` (see the module docs).
pub(crate) fn gauss_newton(
    prob: &GnProblem,
    m0: Vec<f64>,
    set: GnSettings,
    progress: Progress,
    cancel: &AtomicBool,
    frac: (f64, f64),
) -> Result<GnRun, InversionError> {
    let t0 = Instant::now();
    let mut m = m0;
    let mut f = log_response(prob.op, &prob.rho(&m))?;
    let mut chi = chi2(&prob.d, &f, &prob.w);
    let mut history = vec![prob.record(0, &f, &m, 0.0, t0.elapsed().as_secs_f64())];
    let mut jac_last: Option<Array2<f64>> = None;
    // The Jacobian at the current model, when the line search already computed it.
    let mut jac_cur: Option<Array2<f64>> = None;
    let report = |progress: &mut dyn FnMut(f64, &str), it: usize, chi: f64| {
        let x = frac.0 + (frac.1 - frac.0) * (it as f64 / set.max_iterations as f64);
        progress(x.min(frac.1), &format!("iteration {it}: χ² {chi:.3}"));
    };
    report(progress, 0, chi);
    let mut stop = StopReason::MaxIterations;
    let mut it = 0;
    while it < set.max_iterations {
        if chi <= set.target_chi2 {
            stop = StopReason::TargetReached;
            break;
        }
        if cancel.load(Ordering::Relaxed) {
            return Err(InversionError::Cancelled { iterations: it });
        }
        let ti = Instant::now();
        let rho = prob.rho(&m);
        let j = match jac_cur.take() {
            Some(j) => j,
            None => prob.op.jacobian(&rho)?.1,
        };
        let mut jw = j.clone();
        for (jcol, mut col) in jw.columns_mut().into_iter().enumerate() {
            let t = prob.tr.dlnrho_dm(rho[jcol]);
            for (i, v) in col.iter_mut().enumerate() {
                *v *= prob.w[i] * t;
            }
        }
        jac_last = Some(j);
        let rw: Vec<f64> = (0..f.len())
            .map(|i| (prob.d[i] - f[i]) * prob.w[i])
            .collect();
        let (dm, g) = gn_step(&jw, &rw, &prob.reg, prob.lambda, &m, set.solver)?;
        drop(jw);
        let phi0 = prob.objective(&f, &m);
        let slope = -2.0 * g.iter().zip(&dm).map(|(a, b)| a * b).sum::<f64>();
        if cancel.load(Ordering::Relaxed) {
            return Err(InversionError::Cancelled { iterations: it });
        }
        // The full step is evaluated with its Jacobian (which includes the response): when it
        // is accepted, as it usually is, the next iteration needs no separate forward run.
        let m1: Vec<f64> = m.iter().zip(&dm).map(|(a, b)| a + b).collect();
        let full = prob.op.jacobian(&prob.rho(&m1)).ok().map(|(resp, j1)| {
            let f1: Vec<f64> = resp
                .rhoa_ohm_m
                .iter()
                .map(|v| v.abs().max(1e-300).ln())
                .collect();
            let phi1 = prob.objective(&f1, &m1);
            (f1, phi1, j1)
        });
        let (phi1, accepted) = match full {
            Some((f1, phi1, j1)) if phi1.is_finite() && phi1 <= phi0 + 1e-4 * slope => {
                (phi1, Some((f1, j1)))
            }
            Some((_, phi1, _)) => (phi1, None),
            None => (f64::INFINITY, None),
        };
        let eval = |mt: &[f64]| -> Option<(Vec<f64>, f64)> {
            let ft = log_response(prob.op, &prob.rho(mt)).ok()?;
            let phi = prob.objective(&ft, mt);
            phi.is_finite().then_some((ft, phi))
        };
        let (tau, m_new, f_new) = if let Some((f1, j1)) = accepted {
            let shorter = shorter_tau(phi0, slope, phi1).and_then(|tau| {
                let mt: Vec<f64> = m.iter().zip(&dm).map(|(a, b)| a + tau * b).collect();
                let (ft, phit) = eval(&mt)?;
                (phit < phi1).then_some((tau, mt, ft))
            });
            match shorter {
                Some(x) => x,
                None => {
                    jac_cur = Some(j1);
                    (1.0, m1, f1)
                }
            }
        } else {
            match line_search(&eval, &m, &dm, phi0, slope, phi1) {
                Some(x) => x,
                None => {
                    stop = StopReason::NoDescent;
                    break;
                }
            }
        };
        it += 1;
        let chi_new = chi2(&prob.d, &f_new, &prob.w);
        m = m_new;
        f = f_new;
        history.push(prob.record(it, &f, &m, tau, ti.elapsed().as_secs_f64()));
        report(progress, it, chi_new);
        let improvement = (chi - chi_new) / chi;
        chi = chi_new;
        if chi <= set.target_chi2 {
            stop = StopReason::TargetReached;
            break;
        }
        if improvement * 100.0 < set.min_dchi2_percent {
            stop = StopReason::Plateau;
            break;
        }
    }
    Ok(GnRun {
        m,
        f,
        chi2: chi,
        history,
        stop,
        // Coverage from the Jacobian at the final model when the last step computed it,
        // else from the last iteration's.
        jac: jac_cur.or(jac_last),
        iterations: it,
    })
}

/// Coverage c_j = Σ_i |J_ij| / A_j (module docs).
pub fn coverage(jac: &Array2<f64>, area_m2: &[f64]) -> Vec<f64> {
    jac.columns()
        .into_iter()
        .zip(area_m2)
        .map(|(c, a)| c.iter().map(|v| v.abs()).sum::<f64>() / a.max(1e-12))
        .collect()
}

/// The median of the finite values ([`crate::methods::shared::stats::median`]), NaN when
/// there is none.
pub fn median(v: &[f64]) -> f64 {
    crate::methods::shared::stats::median(v).unwrap_or(f64::NAN)
}

/// A survey's data on a discretisation: observed ρa (k_model·R for resistances), errors.
#[derive(Clone)]
pub(crate) struct Observed {
    pub rhoa: Vec<f64>,
    pub err: Vec<f64>,
}

/// Observed ρa = k·R (or the file's ρa) for the data of `ds` with the factors `k`.
pub(crate) fn observed_rhoa(ds: &DataSet, k: &[f64]) -> Vec<f64> {
    ds.value
        .iter()
        .zip(&ds.kind)
        .zip(k)
        .map(|((v, kind), k)| match kind {
            ValueKind::Resistance => v * k,
            ValueKind::ApparentResistivity => *v,
        })
        .collect()
}

/// The discretisation of one survey's prepared data, with data whose ρa = k·R is not
/// positive left out (and counted in `ds.dropped`).
pub(crate) fn discretise_data(
    positions: &[[f64; 2]],
    topography: &[[f64; 2]],
    ds: &mut DataSet,
    params: &InversionParams,
    interfaces: &[Interface],
) -> Result<(Discretisation, Observed), InversionError> {
    let mesh_params = params.mesh.clone().unwrap_or_else(|| {
        default_mesh_params(
            positions.len(),
            auto_para_depth_m(positions, &ds.quadrupoles),
        )
    });
    let mut disc = discretise(
        positions,
        topography,
        &ds.quadrupoles,
        &mesh_params,
        interfaces,
        params.z_weight,
        None,
    )?;
    let k = disc.op.geometric_factors().to_vec();
    let rhoa = observed_rhoa(ds, &k);
    let keep: Vec<bool> = rhoa.iter().map(|v| v.is_finite() && *v > 0.0).collect();
    let n_bad = keep.iter().filter(|k| !**k).count();
    let flat = positions
        .iter()
        .all(|p| (p[1] - positions[0][1]).abs() < 1e-9);
    if !flat && ds.kind.contains(&ValueKind::ApparentResistivity) {
        ds.notes.push(
            "some data are apparent resistivities without R or k: used as the file gives them, although with topography their geometric factor may differ from the numerical one".into(),
        );
    }
    if n_bad > 0 {
        ds.dropped
            .push(("ρa = k·R not positive (sign or geometry)".into(), n_bad));
        ds.retain(&keep);
        if ds.is_empty() {
            return Err(InversionError::NoData(
                "no datum has a positive apparent resistivity".into(),
            ));
        }
        let k2: Vec<f64> = k.iter().zip(&keep).filter(|p| *p.1).map(|p| *p.0).collect();
        disc = discretise(
            positions,
            topography,
            &ds.quadrupoles,
            &mesh_params,
            interfaces,
            params.z_weight,
            Some(k2),
        )?;
    }
    let k = disc.op.geometric_factors().to_vec();
    let rhoa = observed_rhoa(ds, &k);
    Ok((
        disc,
        Observed {
            rhoa,
            err: ds.err.clone(),
        },
    ))
}

/// Invert one survey (see the module docs). `interfaces` shape the mesh and cut the
/// smoothness (a seismic refractor, say); `progress` is told the fraction done, `cancel` is
/// checked between iterations.
pub fn invert_survey(
    survey: &Survey,
    params: &InversionParams,
    interfaces: &[Interface],
    progress: Progress,
    cancel: &AtomicBool,
) -> Result<InversionResult, InversionError> {
    params.validate()?;
    let t0 = Instant::now();
    progress(0.0, "preparing the data");
    let mut ds = prepare_data(survey, params)?;
    let positions = survey.line_positions();
    progress(0.02, "building the mesh and the forward operator");
    let (disc, obs) = discretise_data(&positions, &survey.topography, &mut ds, params, interfaces)?;
    let mut notes = survey_notes(survey, &ds);
    if !interfaces.is_empty() {
        notes.push(format!(
            "{} interface(s) honoured by the mesh; {} smoothness constraints across them left out",
            interfaces.len(),
            disc.n_cut_by_interfaces
        ));
    }
    let mut res = invert_on(&disc, &ds, &obs, params, progress, cancel)?;
    if params.outlier_threshold > 0.0 {
        let keep = outlier_mask(
            &res.rhoa_obs_ohm_m,
            &res.rhoa_pred_ohm_m,
            &ds.err,
            params.outlier_threshold,
        );
        let n_out = keep.iter().filter(|k| !**k).count();
        if n_out > 0 {
            progress(0.5, &format!("{n_out} outliers removed; inverting again"));
            let first_chi2 = res.chi2;
            ds.retain(&keep);
            ds.dropped
                .push(("outlier after a first inversion".into(), n_out));
            let k: Vec<f64> = disc
                .op
                .geometric_factors()
                .iter()
                .zip(&keep)
                .filter(|p| *p.1)
                .map(|p| *p.0)
                .collect();
            let mesh_params = params.mesh.clone().unwrap_or_else(|| {
                default_mesh_params(
                    positions.len(),
                    auto_para_depth_m(&positions, &survey.quadrupoles),
                )
            });
            let disc2 = discretise(
                &positions,
                &survey.topography,
                &ds.quadrupoles,
                &mesh_params,
                interfaces,
                params.z_weight,
                Some(k),
            )?;
            let obs2 = Observed {
                rhoa: observed_rhoa(&ds, disc2.op.geometric_factors()),
                err: ds.err.clone(),
            };
            res = invert_on(&disc2, &ds, &obs2, params, progress, cancel)?;
            notes.push(format!(
                "outlier rejection: {n_out} data with a normalised residual above {} robust standard deviations removed after a first inversion (χ² {first_chi2:.2}); the inversion was run again",
                params.outlier_threshold
            ));
        } else {
            notes.push(format!(
                "outlier rejection: no datum above {} robust standard deviations",
                params.outlier_threshold
            ));
        }
    }
    res.notes.splice(0..0, notes);
    res.seconds = t0.elapsed().as_secs_f64();
    Ok(res)
}

/// The image an inversion makes of a model (Day-Lewis, Singha & Binley 2005, J. Geophys.
/// Res. 110, B08206: a geophysical image is the true property smoothed by the inversion's
/// resolution, so a model is compared with the field image through the same inversion):
/// the apparent resistivities `rhoa_pred_ohm_m` a model predicts on the quadrupoles of the
/// `fitted` data set, with its errors, inverted with `params` (outlier rejection off: the
/// predicted data have none) on the mesh the field data were inverted on.
#[allow(clippy::too_many_arguments)]
pub fn invert_predicted(
    positions: &[[f64; 2]],
    topography: &[[f64; 2]],
    fitted: &DataSet,
    rhoa_pred_ohm_m: &[f64],
    params: &InversionParams,
    interfaces: &[Interface],
    progress: Progress,
    cancel: &AtomicBool,
) -> Result<InversionResult, InversionError> {
    if rhoa_pred_ohm_m.len() != fitted.len() {
        return Err(InversionError::BadParams(format!(
            "{} predicted data for {} fitted data",
            rhoa_pred_ohm_m.len(),
            fitted.len()
        )));
    }
    let params = InversionParams {
        outlier_threshold: 0.0,
        ..params.clone()
    };
    params.validate()?;
    let mut ds = fitted.clone();
    ds.value = rhoa_pred_ohm_m.to_vec();
    ds.kind = vec![ValueKind::ApparentResistivity; ds.len()];
    let (disc, obs) = discretise_data(positions, topography, &mut ds, &params, interfaces)?;
    invert_on(&disc, &ds, &obs, &params, progress, cancel)
}

/// Which data to keep after an inversion: `false` for a normalised residual
/// r_i = |ln(obs_i/pred_i)|/ε_i above max(`threshold`·1.4826·median r, 3) (a robust
/// standard deviation; Rousseeuw & Croux 1993), at most the 10 % largest.
pub fn outlier_mask(obs: &[f64], pred: &[f64], err: &[f64], threshold: f64) -> Vec<bool> {
    let r: Vec<f64> = (0..obs.len())
        .map(|i| ((obs[i] / pred[i]).ln() / err[i]).abs())
        .collect();
    let sigma = 1.4826 * median(&r);
    let limit = (threshold * sigma).max(3.0);
    let mut idx: Vec<usize> = (0..r.len()).filter(|&i| !(r[i] <= limit)).collect();
    idx.sort_by(|&a, &b| r[b].total_cmp(&r[a]));
    idx.truncate(r.len() / 10);
    let mut keep = vec![true; r.len()];
    for i in idx {
        keep[i] = false;
    }
    keep
}

/// Notes about the survey worth repeating with the inversion.
fn survey_notes(survey: &Survey, ds: &DataSet) -> Vec<String> {
    let mut notes = ds.notes.clone();
    if !ds.dropped.is_empty() {
        notes.push(format!(
            "{} of {} data left out: {}",
            ds.n_read - ds.len() - ds.n_reciprocal_merged,
            ds.n_read,
            ds.dropped
                .iter()
                .map(|(r, c)| format!("{c} {r}"))
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    if !survey.is_flat_line() {
        notes.push(
            "topography: geometric factors computed numerically (1 Ω·m model on the same mesh)"
                .into(),
        );
    }
    notes
}

/// Invert prepared data on a discretisation (the part of [`invert_survey`] after meshing;
/// time-lapse schemes call it with modified data).
pub(crate) fn invert_on(
    disc: &Discretisation,
    ds: &DataSet,
    obs: &Observed,
    params: &InversionParams,
    progress: Progress,
    cancel: &AtomicBool,
) -> Result<InversionResult, InversionError> {
    let t0 = Instant::now();
    let start = params
        .start_ohm_m
        .unwrap_or_else(|| median(&obs.rhoa))
        .max(params.lower_ohm_m * 1.01 + 1e-9);
    let start = match params.upper_ohm_m {
        Some(u) if start >= u => 0.5 * (params.lower_ohm_m + u),
        _ => start,
    };
    let tr = Transform::of(params);
    let np = disc.section.n_params();
    let m0 = vec![tr.m(start); np];
    let m_ref = vec![tr.m(params.reference_ohm_m.unwrap_or(start)); np];
    let d: Vec<f64> = obs.rhoa.iter().map(|v| v.ln()).collect();
    let w: Vec<f64> = obs.err.iter().map(|e| 1.0 / e).collect();
    let reg = Regularisation {
        constraints: disc.constraints.clone(),
        alpha_s: params.alpha_s,
        m_ref,
    };
    let run_at = |lambda: f64,
                  progress: &mut dyn FnMut(f64, &str),
                  frac: (f64, f64)|
     -> Result<(GnRun, f64), InversionError> {
        let prob = GnProblem {
            op: &disc.op,
            d: d.clone(),
            w: w.clone(),
            tr,
            reg: reg.clone(),
            lambda,
        };
        let run = gauss_newton(
            &prob,
            m0.clone(),
            GnSettings::of(params),
            progress,
            cancel,
            frac,
        )?;
        Ok((run, lambda))
    };
    let auto = params.lambda_mode == LambdaMode::Auto;
    let first_span = if auto { (0.05, 0.45) } else { (0.05, 0.95) };
    let (first, _) = run_at(params.lambda, progress, first_span)?;
    let mut trials = vec![LambdaTrial {
        lambda: params.lambda,
        chi2: first.chi2,
        iterations: first.iterations,
        chosen: true,
    }];
    let mut chosen = first;
    let mut chosen_lambda = params.lambda;
    let mut user_run: Option<(GnRun, f64)> = None;
    if auto {
        let target = params.target_chi2;
        let ok = |c: f64| (c / target - 1.0).abs() <= params.lambda_tolerance;
        let mut pts: Vec<(f64, f64)> = vec![(params.lambda.ln(), chosen.chi2.max(1e-12).ln())];
        let mut best_gap = (chosen.chi2 / target).ln().abs();
        let mut k = 0;
        while !ok(chosen.chi2) && k < params.max_lambda_trials {
            if cancel.load(Ordering::Relaxed) {
                return Err(InversionError::Cancelled { iterations: 0 });
            }
            let (ll, lc) = pts[pts.len() - 1];
            let next_ll = if pts.len() >= 2 {
                let (l0, c0) = pts[pts.len() - 2];
                let slope = if (ll - l0).abs() > 1e-9 {
                    ((lc - c0) / (ll - l0)).clamp(0.1, 3.0)
                } else {
                    0.5
                };
                ll + (target.ln() - lc) / slope
            } else if lc > target.ln() {
                ll - 2.0_f64.ln() * 2.0
            } else {
                ll + 2.0_f64.ln() * 2.0
            };
            let lambda = next_ll.exp().clamp(1e-4, 1e6);
            let span = 0.45 + 0.5 * k as f64 / params.max_lambda_trials as f64;
            let span_end = 0.45 + 0.5 * (k + 1) as f64 / params.max_lambda_trials as f64;
            let (run, lam) = run_at(lambda, progress, (span, span_end))?;
            pts.push((lambda.ln(), run.chi2.max(1e-12).ln()));
            trials.push(LambdaTrial {
                lambda: lam,
                chi2: run.chi2,
                iterations: run.iterations,
                chosen: false,
            });
            let gap = (run.chi2 / target).ln().abs();
            if gap < best_gap {
                best_gap = gap;
                let prev = std::mem::replace(&mut chosen, run);
                if user_run.is_none() {
                    user_run = Some((prev, params.lambda));
                }
                chosen_lambda = lam;
            }
            k += 1;
        }
        for t in &mut trials {
            t.chosen = t.lambda == chosen_lambda;
        }
    }
    let mut result = finish_result(disc, ds, obs, params, chosen, chosen_lambda, start, &tr)?;
    result.lambda_trials = if auto { trials } else { Vec::new() };
    if let Some((run, lam)) = user_run {
        let mut u = finish_result(disc, ds, obs, params, run, lam, start, &tr)?;
        u.notes.clear();
        result.notes.push(format!(
            "automatic λ: chose λ = {:.3} (χ² {:.3}); the run at the user's λ = {lam} (χ² {:.3}) is kept for comparison",
            chosen_lambda, result.chi2, u.chi2
        ));
        result.user_lambda_run = Some(Box::new(u));
    }
    result.seconds = t0.elapsed().as_secs_f64();
    progress(1.0, &format!("done: χ² {:.3}", result.chi2));
    Ok(result)
}

/// Assemble an [`InversionResult`] from a Gauss–Newton run (coverage from its last
/// Jacobian, or one at the final model when no iteration ran).
#[allow(clippy::too_many_arguments)]
pub(crate) fn finish_result(
    disc: &Discretisation,
    ds: &DataSet,
    obs: &Observed,
    params: &InversionParams,
    run: GnRun,
    lambda: f64,
    start: f64,
    tr: &Transform,
) -> Result<InversionResult, InversionError> {
    let rho: Vec<f64> = run.m.iter().map(|&v| tr.rho(v)).collect();
    let jac = match run.jac {
        Some(j) => j,
        None => disc.op.jacobian(&rho)?.1,
    };
    let cov = coverage(&jac, &disc.section.param_area_m2);
    let pred: Vec<f64> = run.f.iter().map(|v| v.exp()).collect();
    let mut notes = Vec::new();
    if !rho.iter().all(|r| r.is_finite() && *r > 0.0) {
        notes.push("some resistivities are not finite".into());
    }
    Ok(InversionResult {
        section: disc.section.clone(),
        coverage: cov,
        data: ds.clone(),
        k_m: disc.op.geometric_factors().to_vec(),
        rhoa_obs_ohm_m: obs.rhoa.clone(),
        rrms_percent: rrms_percent(&obs.rhoa, &pred),
        rhoa_pred_ohm_m: pred,
        chi2: run.chi2,
        chi2_history: run.history.iter().map(|h| h.chi2).collect(),
        iterations: run.iterations,
        lambda,
        history: run.history,
        stop_reason: run.stop,
        start_ohm_m: start,
        n_data: ds.len(),
        n_cells: disc.section.n_params(),
        interface_used: !disc.section.interfaces.is_empty(),
        n_constraints_cut: disc.n_cut_by_interfaces,
        params: params.clone(),
        lambda_trials: Vec::new(),
        user_lambda_run: None,
        seconds: 0.0,
        notes,
        rho_ohm_m: rho,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::methods::ert::survey::{Electrode, Format};

    pub(crate) fn no_progress() -> impl FnMut(f64, &str) {
        |_, _| {}
    }

    #[test]
    fn transforms_invert_each_other_and_respect_bounds() {
        let t = Transform { lo: 1.0, hi: 1e4 };
        for rho in [1.5, 10.0, 300.0, 9999.0] {
            assert!((t.rho(t.m(rho)) / rho - 1.0).abs() < 1e-12);
            // ∂ ln ρ/∂m by central difference.
            let h = 1e-6;
            let fd = (t.rho(t.m(rho) + h).ln() - t.rho(t.m(rho) - h).ln()) / (2.0 * h);
            assert!((fd / t.dlnrho_dm(rho) - 1.0).abs() < 1e-6);
        }
        assert!(t.rho(50.0) <= 1e4 && t.rho(-50.0) >= 1.0);
        let plain = Transform {
            lo: 0.0,
            hi: f64::INFINITY,
        };
        assert!((plain.m(100.0) - 100f64.ln()).abs() < 1e-15);
        assert_eq!(plain.dlnrho_dm(100.0), 1.0);
    }

    #[test]
    fn cg_and_cholesky_agree_on_a_regularised_system() {
        // A random-ish 30 × 12 Jacobian with a chain of constraints: both solvers must give
        // the same Gauss–Newton step to 1e-6 relative.
        let (nd, n) = (30, 12);
        let jw = Array2::from_shape_fn((nd, n), |(i, j)| {
            ((i * 7 + j * 13) % 11) as f64 / 11.0 - 0.3
        });
        let rw: Vec<f64> = (0..nd).map(|i| (i as f64 * 0.37).sin()).collect();
        let reg = Regularisation {
            constraints: (0..n - 1).map(|i| (i, i + 1, 1.0)).collect(),
            alpha_s: 0.01,
            m_ref: vec![0.0; n],
        };
        let m = vec![0.1; n];
        let (a, _) = gn_step(&jw, &rw, &reg, 2.0, &m, Solver::Direct).unwrap();
        let (b, _) = gn_step(&jw, &rw, &reg, 2.0, &m, Solver::Cg).unwrap();
        let norm = a.iter().map(|v| v * v).sum::<f64>().sqrt();
        let diff = a
            .iter()
            .zip(&b)
            .map(|(x, y)| (x - y).powi(2))
            .sum::<f64>()
            .sqrt();
        assert!(diff / norm < 1e-6, "{diff} vs {norm}");
    }

    /// A dipole–dipole line of `n` electrodes `dx` apart (separations 1–6), no data.
    pub(crate) fn line_survey(n: usize, dx: f64) -> Survey {
        let mut s = Survey::empty(Format::PlainCsv);
        s.electrodes = (0..n)
            .map(|i| Electrode::at(i as f64 * dx, 0.0, 0.0))
            .collect();
        for a in 0..n {
            for sep in 1..=6 {
                let (b, m, nn) = (a + 1, a + 1 + sep, a + 2 + sep);
                if nn < n {
                    s.quadrupoles.push(Quadrupole::new(a, b, m, nn));
                }
            }
        }
        s.valid = vec![true; s.quadrupoles.len()];
        s
    }

    /// `line_survey(n, dx)` with the data of a `rho` Ω·m half-space (our own forward on the
    /// mesh of `params`) and 2 % errors.
    pub(crate) fn half_space_survey(
        n: usize,
        dx: f64,
        rho: f64,
        params: &InversionParams,
    ) -> Survey {
        let mut s = line_survey(n, dx);
        let mut p = params.clone();
        p.error_source = ErrorSource::Fixed;
        p.relative_error = 0.02;
        let mut t = s.clone();
        t.rhoa_ohm_m = Some(vec![rho; t.n_data()]);
        let mut ds = prepare_data(&t, &p).unwrap();
        let (disc, _) = discretise_data(&s.line_positions(), &[], &mut ds, &p, &[]).unwrap();
        let resp = disc
            .op
            .response(&vec![rho; disc.section.n_params()])
            .unwrap();
        s.rhoa_ohm_m = Some(resp.rhoa_ohm_m);
        s.err = Some(vec![0.02; s.n_data()]);
        s
    }

    #[test]
    fn a_homogeneous_half_space_is_recovered_at_once() {
        // Data of a 50 Ω·m half-space (our own forward), 2 % errors: the homogeneous start
        // model at the median ρa already fits to χ² ≪ 1, so no iteration runs and the model
        // is that half-space within the forward model's 0.5 % accuracy (geophysics.md §5.1.1).
        let params = InversionParams {
            mesh: Some(default_mesh_params(16, 4.0)),
            ..Default::default()
        };
        let s = half_space_survey(16, 1.0, 50.0, &params);
        let flag = AtomicBool::new(false);
        let mut pr = no_progress();
        let r = invert_survey(&s, &params, &[], &mut pr, &flag).unwrap();
        assert_eq!(r.iterations, 0);
        assert_eq!(r.stop_reason, StopReason::TargetReached);
        assert!(r.chi2 < 0.1, "{}", r.chi2);
        assert!(
            r.rho_ohm_m.iter().all(|v| (v / 50.0 - 1.0).abs() < 0.005),
            "start model is the median ρa"
        );
        assert!(r.coverage.iter().all(|c| c.is_finite() && *c >= 0.0));
        assert_eq!(r.n_cells, r.section.n_params());
    }
}
