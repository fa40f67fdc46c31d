//! Time-lapse inversion of two or more surveys of one line, by four schemes.
//!
//! All surveys are first matched on the quadrupoles they share (electrodes matched by
//! position; current/potential polarity aligned), so every model lives on one mesh and one
//! forward operator; how many data each survey lost to the matching is reported.
//!
//! * **simultaneous** (4D; Kim et al. 2009, eq. 6; pyGIMLi `TimelapseERT.fullInversion`):
//!   one objective over all models m_1…m_T,
//!   Σ_t ‖D_t(d_t − f(m_t))‖² + λ Σ_t ‖W C (m_t − m_ref)‖² + α Σ_t ‖m_{t+1} − m_t‖²,
//!   solved by Gauss–Newton; the block-tridiagonal normal equations by conjugate gradients
//!   preconditioned with the Cholesky factors of the diagonal blocks.
//! * **difference** (LaBrecque & Yang 2001, eq. 6–8): the baseline d_0 is inverted to m_0;
//!   each later survey inverts the data d_0' = d_t − d_0 + f(m_0) starting from m_0 and
//!   regularised towards m_0, ‖W C (m − m_0)‖², so systematic errors common to both surveys
//!   cancel and only the change is structured by the regularisation.
//! * **ratio** (Daily et al. 1992): the data d_t − d_0 + f(m_hom) (log of ρa_t/ρa_0 times the
//!   homogeneous response) are inverted from the homogeneous model; the model divided by
//!   m_hom is the ratio of resistivities, applied to the baseline model.
//! * **independent**: every survey inverted on its own (same mesh, same data set).
//!
//! With logarithmic data and model these are exact identities for unchanged data: a survey
//! against itself gives no change (the start model already fits, χ² = 0).

use super::inversion::{
    DataSet, Discretisation, GnProblem, GnSettings, InversionError, InversionParams,
    InversionResult, IterationRecord, ModelSection, Observed, Progress, Regularisation, StopReason,
    Transform, ValueKind, chi2, coverage, discretise, gauss_newton, invert_on, log_response,
    median, normal_matrix, observed_rhoa, pcg, prepare_data, rrms_percent, shorter_tau,
};
use super::mesh::Interface;
use super::survey::{Quadrupole, Survey};
use ndarray::Array2;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// A time-lapse scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeLapseMethod {
    /// One objective over all surveys with temporal smoothness α (4D).
    Simultaneous,
    /// LaBrecque & Yang (2001) difference inversion against the baseline.
    Difference,
    /// Inversion of ρa_t/ρa_0 ratios.
    Ratio,
    /// Every survey on its own.
    Independent,
}

impl TimeLapseMethod {
    /// The names of the implemented schemes.
    pub const NAMES: [&'static str; 4] = ["simultaneous", "difference", "ratio", "independent"];

    /// The scheme a request names; an unknown one is an error that names the implemented
    /// ones ("4d", "joint", "temporal" are the simultaneous scheme; "labrecque" difference).
    pub fn parse(name: &str) -> Result<Self, InversionError> {
        let n = name.trim().to_ascii_lowercase().replace(['-', ' '], "_");
        Ok(match n.as_str() {
            "simultaneous"
            | "4d"
            | "simultaneous_4d"
            | "joint"
            | "temporal"
            | "temporal_constraint"
            | "full" => TimeLapseMethod::Simultaneous,
            "difference" | "labrecque" | "labrecque_yang" | "difference_inversion" => {
                TimeLapseMethod::Difference
            }
            "ratio" | "ratio_inversion" => TimeLapseMethod::Ratio,
            "independent" | "separate" | "individual" => TimeLapseMethod::Independent,
            _ => {
                return Err(InversionError::TimeLapse(format!(
                    "time-lapse method '{name}' is not implemented; the implemented ones are {}",
                    Self::NAMES.join(", ")
                )));
            }
        })
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            TimeLapseMethod::Simultaneous => "simultaneous",
            TimeLapseMethod::Difference => "difference",
            TimeLapseMethod::Ratio => "ratio",
            TimeLapseMethod::Independent => "independent",
        }
    }

    /// One sentence for a report.
    pub fn describe(self) -> &'static str {
        match self {
            TimeLapseMethod::Simultaneous => {
                "simultaneous (4D) inversion of all surveys with temporal smoothness α between consecutive models (Kim et al. 2009)"
            }
            TimeLapseMethod::Difference => {
                "difference inversion against the baseline (LaBrecque & Yang 2001)"
            }
            TimeLapseMethod::Ratio => {
                "ratio inversion of ρa_t/ρa_0 applied to the baseline model (Daily et al. 1992)"
            }
            TimeLapseMethod::Independent => "independent inversion of every survey on one mesh",
        }
    }
}

/// How one survey fared in the matching.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SurveyMatch {
    /// The survey's label (file name or date).
    pub label: String,
    /// Usable data after preparation.
    pub n_usable: usize,
    /// Of those, not measured by every survey (left out).
    pub n_dropped: usize,
    /// Electrodes with no counterpart in the baseline survey.
    pub n_unmatched_electrodes: usize,
}

/// The common data set of all surveys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatchReport {
    /// Quadrupoles measured by every survey.
    pub n_common: usize,
    /// Per survey.
    pub surveys: Vec<SurveyMatch>,
}

impl MatchReport {
    /// "812 quadrupoles in common; dropped 12 (a.dat), 0 (b.dat)".
    pub fn sentence(&self) -> String {
        format!(
            "{} quadrupoles in common; dropped {}",
            self.n_common,
            self.surveys
                .iter()
                .map(|s| format!("{} of {} ({})", s.n_dropped, s.n_usable, s.label))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

/// One survey's model in a time-lapse result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimeStep {
    /// Label (file name).
    pub label: String,
    /// Survey time (ISO 8601) when known.
    pub time: Option<String>,
    /// Resistivity per parameter, Ω·m.
    pub rho_ohm_m: Vec<f64>,
    /// Change against the baseline, percent: 100 (ρ_t/ρ_0 − 1).
    pub change_percent: Vec<f64>,
    /// Observed ρa, Ω·m.
    pub rhoa_obs_ohm_m: Vec<f64>,
    /// Predicted ρa of this model (for difference/ratio: of the inverted data), Ω·m.
    pub rhoa_pred_ohm_m: Vec<f64>,
    /// Relative errors.
    pub err: Vec<f64>,
    /// χ² of this step's data.
    pub chi2: f64,
    /// χ² history of this step.
    pub chi2_history: Vec<f64>,
    /// Relative rms, percent.
    pub rrms_percent: f64,
    /// Iterations of this step's inversion (joint for simultaneous).
    pub iterations: usize,
    /// Median |ρa_t/ρa_0 − 1| of the matched data against the baseline survey, percent
    /// (0 for the baseline).
    #[serde(default)]
    pub data_change_median_percent: f64,
    /// χ² of the hypothesis "nothing changed": Σ_i (ln(ρa_t,i/ρa_0,i)/ε_t,i)² / N with this
    /// survey's relative errors ε (0 for the baseline). At or below 1 the data do not require
    /// any change, and a scheme that reports one is fitting noise.
    #[serde(default)]
    pub chi2_no_change: f64,
}

impl TimeStep {
    /// Whether the data of this step are explained by the baseline's data within their errors.
    pub fn change_within_errors(&self) -> bool {
        self.chi2_no_change <= 1.0
    }
}

/// A time-lapse inversion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimeLapseResult {
    /// The scheme used.
    pub method: TimeLapseMethod,
    /// The shared geometry.
    pub section: ModelSection,
    /// The common quadrupoles (baseline electrode indices).
    pub quadrupoles: Vec<Quadrupole>,
    /// Geometric factors, m.
    pub k_m: Vec<f64>,
    /// Every survey's model, baseline first.
    pub steps: Vec<TimeStep>,
    /// Coverage of the baseline model.
    pub coverage: Vec<f64>,
    /// χ² over all data of all surveys (the joint misfit for the simultaneous scheme).
    pub chi2: f64,
    /// Joint χ² history (simultaneous) or the baseline's (others).
    pub chi2_history: Vec<f64>,
    /// Iterations of the joint run, or summed over the steps.
    pub iterations: usize,
    /// Every iteration of the joint run (simultaneous) or of the baseline.
    pub history: Vec<IterationRecord>,
    /// Why the (joint or baseline) iterations ended.
    pub stop_reason: StopReason,
    /// λ.
    pub lambda: f64,
    /// Temporal regularisation α (simultaneous).
    pub alpha: f64,
    /// How the surveys were matched.
    pub matching: MatchReport,
    /// The baseline inversion (difference, ratio, independent).
    pub baseline: Option<Box<InversionResult>>,
    /// Data per survey.
    pub n_data: usize,
    /// Parameter cells.
    pub n_cells: usize,
    /// Settings used.
    pub params: InversionParams,
    /// Seconds.
    pub seconds: f64,
    /// What was noticed and decided.
    pub notes: Vec<String>,
    /// The index of each step's survey among the surveys given (baseline 0; the later
    /// surveys inverted, [`invert_time_lapse_epochs`]). Empty in results written before it
    /// existed: then step i is survey i.
    #[serde(default)]
    pub survey_index: Vec<usize>,
}

impl TimeLapseResult {
    /// The index among the surveys given of step `i`'s survey.
    pub fn survey_index_of(&self, i: usize) -> usize {
        self.survey_index.get(i).copied().unwrap_or(i)
    }
}

/// The label of a survey: its file name, else "survey N".
pub fn survey_label(s: &Survey, i: usize) -> String {
    s.source_file
        .as_ref()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| format!("survey {}", i + 1))
}

type Key = (
    (Option<usize>, Option<usize>),
    (Option<usize>, Option<usize>),
);

/// Canonical key of a quadrupole (current and potential pairs sorted) and the sign of R
/// relative to that orientation (swapping A↔B or M↔N flips R).
fn key_of(q: [Option<usize>; 4]) -> (Key, f64) {
    let [a, b, m, n] = q;
    let (ab, s1) = if a <= b {
        ((a, b), 1.0)
    } else {
        ((b, a), -1.0)
    };
    let (mn, s2) = if m <= n {
        ((m, n), 1.0)
    } else {
        ((n, m), -1.0)
    };
    ((ab, mn), s1 * s2)
}

/// Surveys matched on their common quadrupoles.
pub struct Matched {
    /// Baseline electrode positions (along the line, elevation), m.
    pub positions: Vec<[f64; 2]>,
    /// Baseline topography.
    pub topography: Vec<[f64; 2]>,
    /// Every survey's data on the common quadrupoles (baseline orientation and indices).
    pub data: Vec<DataSet>,
    /// The matching report.
    pub report: MatchReport,
}

/// Prepare every survey ([`prepare_data`]) and keep the quadrupoles all of them measured.
pub fn match_surveys(
    surveys: &[Survey],
    params: &InversionParams,
) -> Result<Matched, InversionError> {
    if surveys.len() < 2 {
        return Err(InversionError::TimeLapse(format!(
            "time-lapse needs two or more surveys, got {}",
            surveys.len()
        )));
    }
    let base = &surveys[0];
    let prepared: Vec<DataSet> = surveys
        .iter()
        .map(|s| prepare_data(s, params))
        .collect::<Result<_, _>>()?;
    // Electrode maps onto the baseline, by position.
    let bpos: Vec<[f64; 3]> = base
        .electrodes
        .iter()
        .map(|e| [e.x_m, e.y_m, e.z_m])
        .collect();
    let line = base.line_positions();
    let spacing = line
        .windows(2)
        .map(|w| (w[1][0] - w[0][0]).abs())
        .filter(|d| *d > 0.0)
        .fold(f64::INFINITY, f64::min);
    let tol = if spacing.is_finite() {
        (0.01 * spacing).max(1e-6)
    } else {
        1e-3
    };
    let mut maps: Vec<Vec<Option<usize>>> = Vec::new();
    let mut unmatched = Vec::new();
    for s in surveys {
        let map: Vec<Option<usize>> = s
            .electrodes
            .iter()
            .map(|e| {
                bpos.iter().position(|p| {
                    (p[0] - e.x_m).abs() <= tol
                        && (p[1] - e.y_m).abs() <= tol
                        && (p[2] - e.z_m).abs() <= tol
                })
            })
            .collect();
        unmatched.push(map.iter().filter(|m| m.is_none()).count());
        maps.push(map);
    }
    // Keyed data per survey: key → (index in its DataSet, sign).
    let mut keyed: Vec<HashMap<Key, (usize, f64)>> = Vec::new();
    for (t, ds) in prepared.iter().enumerate() {
        let mut h = HashMap::new();
        for (i, q) in ds.quadrupoles.iter().enumerate() {
            let mapped = [q.a, q.b, q.m, q.n].map(|e| e.map(|e| maps[t].get(e).copied().flatten()));
            if mapped.iter().any(|e| matches!(e, Some(None))) {
                continue; // an electrode with no counterpart in the baseline
            }
            let q4 = mapped.map(|e| e.flatten());
            let (k, sg) = key_of(q4);
            h.entry(k).or_insert((i, sg));
        }
        keyed.push(h);
    }
    // Common keys in baseline order.
    let mut common: Vec<(Key, Quadrupole)> = Vec::new();
    for q in &prepared[0].quadrupoles {
        let (k, _) = key_of([q.a, q.b, q.m, q.n]);
        if keyed.iter().all(|h| h.contains_key(&k)) && !common.iter().any(|c| c.0 == k) {
            common.push((k, *q));
        }
    }
    if common.is_empty() {
        return Err(InversionError::TimeLapse(
            "the surveys share no quadrupole (electrodes matched by position)".into(),
        ));
    }
    let mut data = Vec::new();
    let mut report = MatchReport {
        n_common: common.len(),
        surveys: Vec::new(),
    };
    for (t, ds) in prepared.iter().enumerate() {
        let mut out = DataSet {
            quadrupoles: common.iter().map(|c| c.1).collect(),
            value: Vec::with_capacity(common.len()),
            kind: Vec::with_capacity(common.len()),
            err: Vec::with_capacity(common.len()),
            source_index: Vec::with_capacity(common.len()),
            ..ds.clone()
        };
        for (k, _) in &common {
            let (i, sg) = keyed[t][k];
            let (_, sg0) = keyed[0][k];
            let v = match ds.kind[i] {
                ValueKind::Resistance => ds.value[i] * sg * sg0,
                ValueKind::ApparentResistivity => ds.value[i],
            };
            out.value.push(v);
            out.kind.push(ds.kind[i]);
            out.err.push(ds.err[i]);
            out.source_index.push(ds.source_index[i]);
        }
        let dropped = ds.len() - common.len();
        if dropped > 0 {
            out.dropped
                .push(("not measured by every survey".into(), dropped));
        }
        report.surveys.push(SurveyMatch {
            label: survey_label(&surveys[t], t),
            n_usable: ds.len(),
            n_dropped: dropped,
            n_unmatched_electrodes: unmatched[t],
        });
        data.push(out);
    }
    Ok(Matched {
        positions: line,
        topography: base.topography.clone(),
        data,
        report,
    })
}

/// The discretisation of matched surveys; data whose ρa is not positive in any survey are
/// left out of all of them.
fn discretise_matched(
    m: &mut Matched,
    params: &InversionParams,
    interfaces: &[Interface],
) -> Result<(Discretisation, Vec<Observed>), InversionError> {
    let mesh_params = params.mesh.clone().unwrap_or_else(|| {
        super::inversion::default_mesh_params(
            m.positions.len(),
            super::inversion::auto_para_depth_m(&m.positions, &m.data[0].quadrupoles),
        )
    });
    let build = |quads: &[Quadrupole], k: Option<Vec<f64>>| {
        discretise(
            &m.positions,
            &m.topography,
            quads,
            &mesh_params,
            interfaces,
            params.z_weight,
            k,
        )
    };
    let mut disc = build(&m.data[0].quadrupoles, None)?;
    let k = disc.op.geometric_factors().to_vec();
    let keep: Vec<bool> = (0..k.len())
        .map(|i| {
            m.data.iter().all(|ds| {
                let v = observed_rhoa(ds, &k)[i];
                v.is_finite() && v > 0.0
            })
        })
        .collect();
    let n_bad = keep.iter().filter(|k| !**k).count();
    if n_bad > 0 {
        for ds in &mut m.data {
            ds.retain(&keep);
            ds.dropped
                .push(("ρa not positive in one of the surveys".into(), n_bad));
        }
        m.report.n_common -= n_bad;
        if m.report.n_common == 0 {
            return Err(InversionError::NoData(
                "no common quadrupole has a positive apparent resistivity in every survey".into(),
            ));
        }
        let k2: Vec<f64> = k.iter().zip(&keep).filter(|p| *p.1).map(|p| *p.0).collect();
        disc = build(&m.data[0].quadrupoles, Some(k2))?;
    }
    let k = disc.op.geometric_factors().to_vec();
    let obs = m
        .data
        .iter()
        .map(|ds| Observed {
            rhoa: observed_rhoa(ds, &k),
            err: ds.err.clone(),
        })
        .collect();
    Ok((disc, obs))
}

/// Invert two or more surveys of one line with the chosen scheme (module docs); `alpha` is
/// the temporal regularisation of the simultaneous scheme.
pub fn invert_time_lapse(
    surveys: &[Survey],
    method: TimeLapseMethod,
    params: &InversionParams,
    alpha: f64,
    progress: Progress,
    cancel: &AtomicBool,
) -> Result<TimeLapseResult, InversionError> {
    let every: Vec<usize> = (1..surveys.len()).collect();
    invert_time_lapse_epochs(surveys, &every, method, params, alpha, progress, cancel)
}

/// Check `epochs` (the later surveys to invert, 0-based survey indices) against `n` surveys
/// and the scheme: strictly increasing, each in 1..n, and every one for the simultaneous
/// scheme, which solves all surveys together.
fn check_epochs(epochs: &[usize], n: usize, method: TimeLapseMethod) -> Result<(), InversionError> {
    let bad = |why: String| Err(InversionError::TimeLapse(why));
    if let Some(e) = epochs.iter().find(|&&e| e == 0 || e >= n) {
        return bad(format!(
            "time_lapse_epochs: expected survey indices 1 to {} (0 is the baseline, always inverted), found {e}",
            n.saturating_sub(1)
        ));
    }
    if epochs.windows(2).any(|w| w[0] >= w[1]) {
        return bad(format!(
            "time_lapse_epochs: expected increasing survey indices without repeats, found {epochs:?}"
        ));
    }
    if method == TimeLapseMethod::Simultaneous && epochs.len() + 1 != n {
        return bad(format!(
            "time_lapse_epochs: the simultaneous scheme inverts every survey together; {} of {} later surveys asked for (use difference, ratio or independent to invert some)",
            epochs.len(),
            n.saturating_sub(1)
        ));
    }
    Ok(())
}

/// [`invert_time_lapse`] of the baseline and the later surveys `epochs` only (0-based survey
/// indices, increasing). The surveys are matched on the quadrupoles *all* of them measured, so
/// an epoch's model is the same whichever other epochs are inverted with it (difference, ratio
/// and independent schemes: each later survey is inverted against the baseline alone).
pub fn invert_time_lapse_epochs(
    surveys: &[Survey],
    epochs: &[usize],
    method: TimeLapseMethod,
    params: &InversionParams,
    alpha: f64,
    progress: Progress,
    cancel: &AtomicBool,
) -> Result<TimeLapseResult, InversionError> {
    params.validate()?;
    check_epochs(epochs, surveys.len(), method)?;
    if !(alpha.is_finite() && alpha >= 0.0) {
        return Err(InversionError::BadParams(format!(
            "temporal_regularization = {alpha} (must be ≥ 0)"
        )));
    }
    let t0 = Instant::now();
    progress(0.0, "matching the surveys");
    let mut matched = match_surveys(surveys, params)?;
    progress(0.02, "building the mesh and the forward operator");
    let (mut disc, mut obs) = discretise_matched(&mut matched, params, &[])?;
    let mut outlier_note = None;
    if params.outlier_threshold > 0.0 {
        // Every survey inverted once on its own; a datum that is an outlier in any survey
        // is removed from all of them (the data sets must stay identical).
        let mut keep = vec![true; matched.data[0].len()];
        for t in 0..surveys.len() {
            let mut sub = |f: f64, d: &str| {
                progress(
                    0.02 + 0.3 * (t as f64 + f) / surveys.len() as f64,
                    &format!("outlier check {}: {d}", t + 1),
                )
            };
            let r = invert_on(&disc, &matched.data[t], &obs[t], params, &mut sub, cancel)?;
            let m = super::inversion::outlier_mask(
                &r.rhoa_obs_ohm_m,
                &r.rhoa_pred_ohm_m,
                &matched.data[t].err,
                params.outlier_threshold,
            );
            for (k, m) in keep.iter_mut().zip(m) {
                *k &= m;
            }
        }
        let n_out = keep.iter().filter(|k| !**k).count();
        outlier_note = Some(format!(
            "outlier rejection: {n_out} data with a normalised residual above {} robust standard deviations in a separate inversion of any survey removed from all surveys",
            params.outlier_threshold
        ));
        if n_out > 0 {
            let k: Vec<f64> = disc
                .op
                .geometric_factors()
                .iter()
                .zip(&keep)
                .filter(|p| *p.1)
                .map(|p| *p.0)
                .collect();
            for ds in &mut matched.data {
                ds.retain(&keep);
                ds.dropped
                    .push(("outlier in one of the surveys".into(), n_out));
            }
            matched.report.n_common -= n_out;
            let mesh_params = params.mesh.clone().unwrap_or_else(|| {
                super::inversion::default_mesh_params(
                    matched.positions.len(),
                    super::inversion::auto_para_depth_m(
                        &matched.positions,
                        &matched.data[0].quadrupoles,
                    ),
                )
            });
            disc = discretise(
                &matched.positions,
                &matched.topography,
                &matched.data[0].quadrupoles,
                &mesh_params,
                &[],
                params.z_weight,
                Some(k),
            )?;
            obs = matched
                .data
                .iter()
                .map(|ds| Observed {
                    rhoa: observed_rhoa(ds, disc.op.geometric_factors()),
                    err: ds.err.clone(),
                })
                .collect();
        }
    }
    let labels: Vec<String> = (0..surveys.len())
        .map(|i| survey_label(&surveys[i], i))
        .collect();
    let times: Vec<Option<String>> = surveys
        .iter()
        .map(|s| s.survey_time.as_ref().map(|t| t.iso()))
        .collect();
    let mut notes = vec![format!("matching: {}", matched.report.sentence())];
    notes.extend(outlier_note);
    for (i, ds) in matched.data.iter().enumerate() {
        if ds.error_is_default {
            notes.push(format!(
                "{}: DEFAULT ERRORS ({}), no error column and too few reciprocals",
                labels[i], ds.error_source
            ));
        }
    }
    // The surveys this run inverts: the baseline, then the epochs asked for.
    let chosen: Vec<usize> = std::iter::once(0).chain(epochs.iter().copied()).collect();
    if chosen.len() < surveys.len() {
        notes.push(format!(
            "{} of {} later surveys inverted against the baseline (time_lapse_epochs): {}",
            epochs.len(),
            surveys.len() - 1,
            epochs
                .iter()
                .map(|&t| labels[t].as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
        matched.data = chosen.iter().map(|&t| matched.data[t].clone()).collect();
        obs = chosen.iter().map(|&t| obs[t].clone()).collect();
    }
    let labels: Vec<String> = chosen.iter().map(|&t| labels[t].clone()).collect();
    let times: Vec<Option<String>> = chosen.iter().map(|&t| times[t].clone()).collect();
    let t_steps = chosen.len();
    let mut res = match method {
        TimeLapseMethod::Simultaneous => {
            simultaneous(&disc, &matched, &obs, params, alpha, progress, cancel)?
        }
        TimeLapseMethod::Independent => {
            let mut runs = Vec::new();
            for t in 0..t_steps {
                let span = (t as f64 / t_steps as f64, (t + 1) as f64 / t_steps as f64);
                let mut sub = |f: f64, d: &str| {
                    progress(
                        span.0 + (span.1 - span.0) * f,
                        &format!("{}: {d}", labels[t]),
                    )
                };
                runs.push(invert_on(
                    &disc,
                    &matched.data[t],
                    &obs[t],
                    params,
                    &mut sub,
                    cancel,
                )?);
            }
            from_runs(method, &disc, &matched, runs, params)
        }
        TimeLapseMethod::Difference | TimeLapseMethod::Ratio => relative(
            method, &disc, &matched, &obs, params, progress, cancel, &labels,
        )?,
    };
    for (t, step) in res.steps.iter_mut().enumerate() {
        step.label = labels[t].clone();
        step.time = times[t].clone();
    }
    res.notes.splice(0..0, notes);
    res.survey_index = chosen;
    res.seconds = t0.elapsed().as_secs_f64();
    progress(1.0, &format!("done: χ² {:.3}", res.chi2));
    Ok(res)
}

/// Changes against the first model, percent, and how much the data themselves changed
/// ([`TimeStep::data_change_median_percent`], [`TimeStep::chi2_no_change`]).
fn changes(steps: &mut [TimeStep]) {
    let Some((base, base_rhoa)) = steps
        .first()
        .map(|s| (s.rho_ohm_m.clone(), s.rhoa_obs_ohm_m.clone()))
    else {
        return;
    };
    for (t, s) in steps.iter_mut().enumerate() {
        s.change_percent = s
            .rho_ohm_m
            .iter()
            .zip(&base)
            .map(|(r, b)| 100.0 * (r / b - 1.0))
            .collect();
        if t == 0 {
            continue;
        }
        let ratio: Vec<f64> = s
            .rhoa_obs_ohm_m
            .iter()
            .zip(&base_rhoa)
            .map(|(a, b)| (a / b).ln())
            .collect();
        let rel: Vec<f64> = ratio.iter().map(|l| 100.0 * l.exp_m1().abs()).collect();
        s.data_change_median_percent = if rel.is_empty() { 0.0 } else { median(&rel) };
        s.chi2_no_change = if ratio.is_empty() {
            0.0
        } else {
            ratio
                .iter()
                .zip(&s.err)
                .map(|(l, e)| (l / e).powi(2))
                .sum::<f64>()
                / ratio.len() as f64
        };
    }
}

fn step_of(r: &InversionResult) -> TimeStep {
    TimeStep {
        label: String::new(),
        time: None,
        rho_ohm_m: r.rho_ohm_m.clone(),
        change_percent: Vec::new(),
        rhoa_obs_ohm_m: r.rhoa_obs_ohm_m.clone(),
        rhoa_pred_ohm_m: r.rhoa_pred_ohm_m.clone(),
        err: r.data.err.clone(),
        chi2: r.chi2,
        chi2_history: r.chi2_history.clone(),
        rrms_percent: r.rrms_percent,
        iterations: r.iterations,
        data_change_median_percent: 0.0,
        chi2_no_change: 0.0,
    }
}

/// χ² over all steps' data.
fn joint_chi2(steps: &[TimeStep]) -> f64 {
    let n: usize = steps.iter().map(|s| s.err.len()).sum();
    steps
        .iter()
        .map(|s| s.chi2 * s.err.len() as f64)
        .sum::<f64>()
        / n.max(1) as f64
}

fn from_runs(
    method: TimeLapseMethod,
    disc: &Discretisation,
    matched: &Matched,
    runs: Vec<InversionResult>,
    params: &InversionParams,
) -> TimeLapseResult {
    let mut steps: Vec<TimeStep> = runs.iter().map(step_of).collect();
    changes(&mut steps);
    let base = runs.into_iter().next();
    let b = base.as_ref();
    TimeLapseResult {
        method,
        section: disc.section.clone(),
        quadrupoles: matched.data[0].quadrupoles.clone(),
        k_m: disc.op.geometric_factors().to_vec(),
        chi2: joint_chi2(&steps),
        iterations: steps.iter().map(|s| s.iterations).sum(),
        steps,
        coverage: b.map(|b| b.coverage.clone()).unwrap_or_default(),
        chi2_history: b.map(|b| b.chi2_history.clone()).unwrap_or_default(),
        history: b.map(|b| b.history.clone()).unwrap_or_default(),
        stop_reason: b.map_or(StopReason::MaxIterations, |b| b.stop_reason),
        lambda: params.lambda,
        alpha: 0.0,
        matching: matched.report.clone(),
        n_data: matched.data[0].len(),
        n_cells: disc.section.n_params(),
        params: params.clone(),
        seconds: 0.0,
        notes: Vec::new(),
        survey_index: Vec::new(),
        baseline: base.map(Box::new),
    }
}

/// Difference (LaBrecque & Yang 2001) and ratio schemes: baseline first, then every later
/// survey relative to it.
#[allow(clippy::too_many_arguments)]
fn relative(
    method: TimeLapseMethod,
    disc: &Discretisation,
    matched: &Matched,
    obs: &[Observed],
    params: &InversionParams,
    progress: Progress,
    cancel: &AtomicBool,
    labels: &[String],
) -> Result<TimeLapseResult, InversionError> {
    let t_steps = obs.len();
    let mut sub0 = |f: f64, d: &str| progress(f / t_steps as f64, &format!("{}: {d}", labels[0]));
    let base = invert_on(disc, &matched.data[0], &obs[0], params, &mut sub0, cancel)?;
    let tr = Transform::of(params);
    let m0: Vec<f64> = base.rho_ohm_m.iter().map(|&r| tr.m(r)).collect();
    let f0: Vec<f64> = base.rhoa_pred_ohm_m.iter().map(|v| v.ln()).collect();
    let d0: Vec<f64> = obs[0].rhoa.iter().map(|v| v.ln()).collect();
    let np = disc.section.n_params();
    // Ratio: the homogeneous model and its response.
    let rho_hom = median(&obs[0].rhoa);
    let m_hom = vec![tr.m(rho_hom); np];
    let f_hom = if method == TimeLapseMethod::Ratio {
        log_response(&disc.op, &vec![rho_hom; np])?
    } else {
        Vec::new()
    };
    let mut steps = vec![step_of(&base)];
    for t in 1..t_steps {
        let span = (t as f64 / t_steps as f64, (t + 1) as f64 / t_steps as f64);
        let mut sub = |f: f64, d: &str| {
            progress(
                span.0 + (span.1 - span.0) * f,
                &format!("{}: {d}", labels[t]),
            )
        };
        let dt: Vec<f64> = obs[t].rhoa.iter().map(|v| v.ln()).collect();
        let (anchor_f, start) = match method {
            TimeLapseMethod::Ratio => (&f_hom, &m_hom),
            _ => (&f0, &m0),
        };
        let d: Vec<f64> = (0..dt.len()).map(|i| dt[i] - d0[i] + anchor_f[i]).collect();
        let prob = GnProblem {
            op: &disc.op,
            d: d.clone(),
            w: obs[t].err.iter().map(|e| 1.0 / e).collect(),
            tr,
            reg: Regularisation {
                constraints: disc.constraints.clone(),
                alpha_s: params.alpha_s,
                m_ref: start.clone(),
            },
            lambda: params.lambda,
        };
        let run = gauss_newton(
            &prob,
            start.clone(),
            GnSettings::of(params),
            &mut sub,
            cancel,
            (0.0, 1.0),
        )?;
        let pred_rel: Vec<f64> = run.f.clone();
        let model_t: Vec<f64> = match method {
            TimeLapseMethod::Ratio => run
                .m
                .iter()
                .zip(&base.rho_ohm_m)
                .map(|(&m, &b)| b * tr.rho(m) / rho_hom)
                .collect(),
            _ => run.m.iter().map(|&m| tr.rho(m)).collect(),
        };
        // Predicted ρa_t implied by the relative fit: exp(f_rel − anchor + d0).
        let pred: Vec<f64> = (0..dt.len())
            .map(|i| (pred_rel[i] - anchor_f[i] + d0[i]).exp())
            .collect();
        steps.push(TimeStep {
            label: String::new(),
            time: None,
            rho_ohm_m: model_t,
            change_percent: Vec::new(),
            rhoa_obs_ohm_m: obs[t].rhoa.clone(),
            rrms_percent: rrms_percent(&obs[t].rhoa, &pred),
            rhoa_pred_ohm_m: pred,
            err: obs[t].err.clone(),
            chi2: run.chi2,
            chi2_history: run.history.iter().map(|h| h.chi2).collect(),
            iterations: run.iterations,
            data_change_median_percent: 0.0,
            chi2_no_change: 0.0,
        });
    }
    changes(&mut steps);
    let mut res = from_runs(method, disc, matched, vec![base], params);
    res.chi2 = joint_chi2(&steps);
    res.iterations = steps.iter().map(|s| s.iterations).sum();
    res.steps = steps;
    Ok(res)
}

/// The simultaneous (4D) scheme of the module docs.
fn simultaneous(
    disc: &Discretisation,
    matched: &Matched,
    obs: &[Observed],
    params: &InversionParams,
    alpha: f64,
    progress: Progress,
    cancel: &AtomicBool,
) -> Result<TimeLapseResult, InversionError> {
    use faer::linalg::solvers::Solve;
    let t_steps = obs.len();
    let np = disc.section.n_params();
    let tr = Transform::of(params);
    let all: Vec<f64> = obs.iter().flat_map(|o| o.rhoa.iter().copied()).collect();
    let start = params.start_ohm_m.unwrap_or_else(|| median(&all));
    let m_ref = vec![tr.m(params.reference_ohm_m.unwrap_or(start)); np];
    let reg = Regularisation {
        constraints: disc.constraints.clone(),
        alpha_s: params.alpha_s,
        m_ref,
    };
    let d: Vec<Vec<f64>> = obs
        .iter()
        .map(|o| o.rhoa.iter().map(|v| v.ln()).collect())
        .collect();
    let w: Vec<Vec<f64>> = obs
        .iter()
        .map(|o| o.err.iter().map(|e| 1.0 / e).collect())
        .collect();
    let lambda = params.lambda;
    let n_total: usize = d.iter().map(Vec::len).sum();
    let rho_of = |m: &[f64]| -> Vec<f64> { m.iter().map(|&v| tr.rho(v)).collect() };
    let temporal = |ms: &[Vec<f64>]| -> f64 {
        ms.windows(2)
            .map(|p| {
                p[1].iter()
                    .zip(&p[0])
                    .map(|(a, b)| (a - b).powi(2))
                    .sum::<f64>()
            })
            .sum()
    };
    let objective = |fs: &[Vec<f64>], ms: &[Vec<f64>]| -> f64 {
        let mut phi = 0.0;
        for t in 0..t_steps {
            phi += chi2(&d[t], &fs[t], &w[t]) * d[t].len() as f64 + lambda * reg.phi(&ms[t]);
        }
        phi + alpha * temporal(ms)
    };
    let joint = |fs: &[Vec<f64>]| -> f64 {
        (0..t_steps)
            .map(|t| chi2(&d[t], &fs[t], &w[t]) * d[t].len() as f64)
            .sum::<f64>()
            / n_total as f64
    };
    let t0 = Instant::now();
    let mut ms: Vec<Vec<f64>> = vec![vec![tr.m(start); np]; t_steps];
    let mut fs: Vec<Vec<f64>> = Vec::new();
    for m in &ms {
        fs.push(log_response(&disc.op, &rho_of(m))?);
    }
    let record = |it: usize, fs: &[Vec<f64>], ms: &[Vec<f64>], tau: f64, secs: f64| {
        let obs_all: Vec<f64> = d.iter().flatten().map(|v| v.exp()).collect();
        let pred_all: Vec<f64> = fs.iter().flatten().map(|v| v.exp()).collect();
        IterationRecord {
            iteration: it,
            chi2: joint(fs),
            phi_m: ms.iter().map(|m| reg.phi(m)).sum::<f64>(),
            lambda,
            step_length: tau,
            rrms_percent: Some(rrms_percent(&obs_all, &pred_all)),
            seconds: secs,
            ..Default::default()
        }
    };
    let mut history = vec![record(0, &fs, &ms, 0.0, t0.elapsed().as_secs_f64())];
    let mut step_hist: Vec<Vec<f64>> = (0..t_steps)
        .map(|t| vec![chi2(&d[t], &fs[t], &w[t])])
        .collect();
    let mut chi = joint(&fs);
    let mut jac_cur: Option<Vec<Array2<f64>>> = None;
    let mut jac_last: Option<Vec<Array2<f64>>> = None;
    let mut stop = StopReason::MaxIterations;
    let mut it = 0;
    let max_it = params.max_iterations;
    progress(0.05, &format!("iteration 0: joint χ² {chi:.3}"));
    while it < max_it {
        if chi <= params.target_chi2 {
            stop = StopReason::TargetReached;
            break;
        }
        if cancel.load(Ordering::Relaxed) {
            return Err(InversionError::Cancelled { iterations: it });
        }
        let ti = Instant::now();
        let js = match jac_cur.take() {
            Some(j) => j,
            None => ms
                .iter()
                .map(|m| disc.op.jacobian(&rho_of(m)).map(|r| r.1))
                .collect::<Result<Vec<_>, _>>()?,
        };
        // Weighted Jacobians, gradient and the diagonal blocks.
        let mut g: Vec<f64> = Vec::with_capacity(t_steps * np);
        let mut blocks = Vec::with_capacity(t_steps);
        for t in 0..t_steps {
            let rho = rho_of(&ms[t]);
            let mut jw = js[t].clone();
            for (jc, mut col) in jw.columns_mut().into_iter().enumerate() {
                let s = tr.dlnrho_dm(rho[jc]);
                for (i, v) in col.iter_mut().enumerate() {
                    *v *= w[t][i] * s;
                }
            }
            let rw: Vec<f64> = (0..d[t].len())
                .map(|i| (d[t][i] - fs[t][i]) * w[t][i])
                .collect();
            let jtr = jw.t().dot(&ndarray::ArrayView1::from(&rw[..]));
            let dref: Vec<f64> = ms[t].iter().zip(&reg.m_ref).map(|(a, b)| a - b).collect();
            let rr = reg.apply(&dref);
            let n_nb = usize::from(t > 0) + usize::from(t + 1 < t_steps);
            for j in 0..np {
                let mut tg = 0.0;
                if t > 0 {
                    tg += ms[t][j] - ms[t - 1][j];
                }
                if t + 1 < t_steps {
                    tg += ms[t][j] - ms[t + 1][j];
                }
                g.push(jtr[j] - lambda * rr[j] - alpha * tg);
            }
            let a = normal_matrix(&jw, &reg, lambda, alpha * n_nb as f64)?;
            let llt = a
                .llt(faer::Side::Lower)
                .map_err(|e| InversionError::Solve(format!("Cholesky failed: {e:?}")))?;
            blocks.push((a, llt));
        }
        jac_last = Some(js);
        let apply = |x: &[f64]| -> Vec<f64> {
            let mut y = vec![0.0; x.len()];
            for t in 0..t_steps {
                let xt = faer::Mat::<f64>::from_fn(np, 1, |i, _| x[t * np + i]);
                let yt = &blocks[t].0 * &xt;
                for i in 0..np {
                    y[t * np + i] = yt[(i, 0)];
                    if t > 0 {
                        y[t * np + i] -= alpha * x[(t - 1) * np + i];
                    }
                    if t + 1 < t_steps {
                        y[t * np + i] -= alpha * x[(t + 1) * np + i];
                    }
                }
            }
            y
        };
        let precond = |r: &[f64]| -> Vec<f64> {
            let mut z = vec![0.0; r.len()];
            for t in 0..t_steps {
                let mut b = faer::Mat::<f64>::from_fn(np, 1, |i, _| r[t * np + i]);
                blocks[t].1.solve_in_place(&mut b);
                for i in 0..np {
                    z[t * np + i] = b[(i, 0)];
                }
            }
            z
        };
        let dm = pcg(&apply, &precond, &g, 1e-8, 500);
        drop(blocks);
        let phi0 = objective(&fs, &ms);
        let slope = -2.0 * g.iter().zip(&dm).map(|(a, b)| a * b).sum::<f64>();
        let at = |tau: f64| -> Vec<Vec<f64>> {
            (0..t_steps)
                .map(|t| (0..np).map(|j| ms[t][j] + tau * dm[t * np + j]).collect())
                .collect()
        };
        if cancel.load(Ordering::Relaxed) {
            return Err(InversionError::Cancelled { iterations: it });
        }
        // Full step with its Jacobians; else backtracking with forward runs only.
        let m1 = at(1.0);
        let full: Option<(Vec<Vec<f64>>, Vec<Array2<f64>>)> = m1
            .iter()
            .map(|m| disc.op.jacobian(&rho_of(m)).ok())
            .collect::<Option<Vec<_>>>()
            .map(|v| {
                let f: Vec<Vec<f64>> = v
                    .iter()
                    .map(|(r, _)| {
                        r.rhoa_ohm_m
                            .iter()
                            .map(|x| x.abs().max(1e-300).ln())
                            .collect()
                    })
                    .collect();
                (f, v.into_iter().map(|(_, j)| j).collect())
            });
        let mut accepted: Option<(f64, Vec<Vec<f64>>, Vec<Vec<f64>>)> = None;
        let mut phi1 = f64::INFINITY;
        if let Some((f1, j1)) = full {
            phi1 = objective(&f1, &m1);
            if phi1.is_finite() && phi1 <= phi0 + 1e-4 * slope {
                // As in the single-survey Gauss–Newton: a full step far short of its
                // quadratic model's promise is compared with the parabola's step.
                let shorter = shorter_tau(phi0, slope, phi1).and_then(|tau| {
                    let mt = at(tau);
                    let ft: Vec<Vec<f64>> = mt
                        .iter()
                        .map(|m| log_response(&disc.op, &rho_of(m)).ok())
                        .collect::<Option<_>>()?;
                    let phit = objective(&ft, &mt);
                    (phit < phi1).then_some((tau, mt, ft))
                });
                if shorter.is_some() {
                    accepted = shorter;
                } else {
                    jac_cur = Some(j1);
                    accepted = Some((1.0, m1, f1));
                }
            }
        }
        if accepted.is_none() {
            let mut tau = if phi1.is_finite() && phi1 - phi0 - slope > 0.0 {
                (-slope / (2.0 * (phi1 - phi0 - slope))).clamp(0.05, 0.8)
            } else {
                0.25
            };
            for _ in 0..6 {
                let mt = at(tau);
                let ft: Option<Vec<Vec<f64>>> = mt
                    .iter()
                    .map(|m| log_response(&disc.op, &rho_of(m)).ok())
                    .collect();
                if let Some(ft) = ft {
                    let phit = objective(&ft, &mt);
                    if phit < phi0 {
                        accepted = Some((tau, mt, ft));
                        break;
                    }
                }
                tau *= 0.5;
            }
        }
        let Some((tau, m_new, f_new)) = accepted else {
            stop = StopReason::NoDescent;
            break;
        };
        it += 1;
        ms = m_new;
        fs = f_new;
        let chi_new = joint(&fs);
        history.push(record(it, &fs, &ms, tau, ti.elapsed().as_secs_f64()));
        for t in 0..t_steps {
            step_hist[t].push(chi2(&d[t], &fs[t], &w[t]));
        }
        progress(
            0.05 + 0.9 * it as f64 / max_it as f64,
            &format!("iteration {it}: joint χ² {chi_new:.3}"),
        );
        let improvement = (chi - chi_new) / chi;
        chi = chi_new;
        if chi <= params.target_chi2 {
            stop = StopReason::TargetReached;
            break;
        }
        if improvement * 100.0 < params.min_dchi2_percent {
            stop = StopReason::Plateau;
            break;
        }
    }
    let js = match jac_cur.or(jac_last) {
        Some(j) => j,
        None => vec![disc.op.jacobian(&rho_of(&ms[0]))?.1],
    };
    let cov = coverage(&js[0], &disc.section.param_area_m2);
    let mut steps: Vec<TimeStep> = (0..t_steps)
        .map(|t| {
            let pred: Vec<f64> = fs[t].iter().map(|v| v.exp()).collect();
            TimeStep {
                label: String::new(),
                time: None,
                rho_ohm_m: rho_of(&ms[t]),
                change_percent: Vec::new(),
                rhoa_obs_ohm_m: obs[t].rhoa.clone(),
                rrms_percent: rrms_percent(&obs[t].rhoa, &pred),
                rhoa_pred_ohm_m: pred,
                err: obs[t].err.clone(),
                chi2: chi2(&d[t], &fs[t], &w[t]),
                chi2_history: step_hist[t].clone(),
                iterations: it,
                data_change_median_percent: 0.0,
                chi2_no_change: 0.0,
            }
        })
        .collect();
    changes(&mut steps);
    Ok(TimeLapseResult {
        method: TimeLapseMethod::Simultaneous,
        section: disc.section.clone(),
        quadrupoles: matched.data[0].quadrupoles.clone(),
        k_m: disc.op.geometric_factors().to_vec(),
        steps,
        coverage: cov,
        chi2: chi,
        chi2_history: history.iter().map(|h| h.chi2).collect(),
        iterations: it,
        history,
        stop_reason: stop,
        lambda,
        alpha,
        matching: matched.report.clone(),
        baseline: None,
        n_data: matched.data[0].len(),
        n_cells: np,
        params: params.clone(),
        seconds: 0.0,
        notes: vec![format!(
            "start model {start:.1} Ω·m for every survey (median ρa of all surveys); α = {alpha}"
        )],
        survey_index: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_methods_name_the_implemented_ones() {
        let e = TimeLapseMethod::parse("background_constrained").unwrap_err();
        let msg = e.to_string();
        for n in TimeLapseMethod::NAMES {
            assert!(msg.contains(n), "{msg}");
        }
        assert_eq!(
            TimeLapseMethod::parse("4D").unwrap(),
            TimeLapseMethod::Simultaneous
        );
        assert_eq!(
            TimeLapseMethod::parse("LaBrecque-Yang").unwrap(),
            TimeLapseMethod::Difference
        );
    }

    #[test]
    fn keys_ignore_polarity_and_report_its_sign() {
        let (k1, s1) = key_of([Some(1), Some(0), Some(2), Some(3)]);
        let (k2, s2) = key_of([Some(0), Some(1), Some(2), Some(3)]);
        let (k3, s3) = key_of([Some(1), Some(0), Some(3), Some(2)]);
        assert_eq!(k1, k2);
        assert_eq!(k1, k3);
        assert_eq!((s1, s2, s3), (-1.0, 1.0, 1.0));
    }
}
