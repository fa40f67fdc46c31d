//! `forward_model_output`: does the hydrological model explain the ERT data?
//!
//! Phases: (1) the measured data the inversion fitted (the single survey, or the baseline of a
//! time-lapse series) and the inversion's own χ²; (2) the model's state (φ, S) at each
//! parameter cell of the inversion's section → resistivity by the run's petrophysical relation,
//! Waxman & Smits (1968) eq. 5, ρ = F*/(σw·Sⁿ + B·Qv·Sⁿ⁻¹) with F* = a·φ⁻ᵐ (B·Qv = 0: Archie
//! 1942), the relation's parameters at their prior centres and at `forward_realizations`
//! Monte Carlo draws; cells the model does not cover keep the inverted resistivity (counted);
//! (3) the 2.5D forward on the survey's own quadrupoles, on the inversion's parameter mesh
//! refined [`REFINEMENTS`] times ([`ForwardMesh`]), the model sampled at each fine cell's
//! centroid; (4) χ² = mean(((ln ρa_obs − ln ρa_model)/ε')²), the inversion's definition with
//! the model's forward error e (`model_error_fraction`) added in quadrature to each datum's
//! error, ε' = √(ε² + e²), and the verdict: the model explains the data when its χ² is at most
//! `chi2_ratio_max` × max(χ²', 1), χ²' the inverted model's on the same mesh with the same
//! errors — the fit of the best model known through the same operator; (5) the model's *image*: its predicted data
//! inverted as the field data were ([`invert_predicted`], Day-Lewis et al. 2005), which the
//! comparison of water contents uses, since a sharp model and a smooth image differ at every
//! contrast whether or not the model is right.

use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;

use super::compare::Verdict;
use super::model::HydroModel;
use crate::catalog::ert::ErtModel;
use crate::methods::ert::fem::{ForwardOperator, ForwardSettings, parameter_map};
use crate::methods::ert::inversion::{
    DataSet, InversionParams, InversionResult, ModelSection, chi2, invert_predicted, median,
};
use crate::methods::ert::survey::Quadrupole;
use crate::methods::petro::PetroPrior;
use crate::methods::petro::relations::{Archie, WaxmanSmits, waxman_smits_conductivity_s_per_m};

/// The data the inversion fitted, as the forward needs them.
struct Fitted<'a> {
    quadrupoles: &'a [Quadrupole],
    k_m: &'a [f64],
    rhoa_obs_ohm_m: &'a [f64],
    err: &'a [f64],
    chi2: f64,
    rho_ohm_m: &'a [f64],
    label: String,
    /// The prepared data set and settings of the inversion, for the model's image.
    dataset: Option<(&'a DataSet, &'a InversionParams)>,
}

/// Phase 1: the single survey's data, or the baseline's of a series.
fn fitted(model: &ErtModel) -> anyhow::Result<Fitted<'_>> {
    let f = match model {
        ErtModel::Single(r) => Fitted {
            quadrupoles: &r.data.quadrupoles,
            k_m: &r.k_m,
            rhoa_obs_ohm_m: &r.rhoa_obs_ohm_m,
            err: &r.data.err,
            chi2: r.chi2,
            rho_ohm_m: &r.rho_ohm_m,
            label: "the survey".into(),
            dataset: Some((&r.data, &r.params)),
        },
        ErtModel::TimeLapse(t) => {
            let s = t
                .steps
                .first()
                .ok_or_else(|| anyhow::anyhow!("the time-lapse model has no time step"))?;
            Fitted {
                quadrupoles: &t.quadrupoles,
                k_m: &t.k_m,
                rhoa_obs_ohm_m: &s.rhoa_obs_ohm_m,
                err: &s.err,
                chi2: s.chi2,
                rho_ohm_m: &s.rho_ohm_m,
                label: format!("the baseline survey ({})", s.label),
                dataset: t.baseline.as_ref().map(|b| (&b.data, &b.params)),
            }
        }
    };
    let n = f.quadrupoles.len();
    if [f.k_m.len(), f.rhoa_obs_ohm_m.len(), f.err.len()]
        .iter()
        .any(|l| *l != n)
        || n == 0
    {
        anyhow::bail!(
            "the inversion's data are inconsistent ({} quadrupoles, {} geometric factors, {} observations, {} errors); nothing to forward",
            n,
            f.k_m.len(),
            f.rhoa_obs_ohm_m.len(),
            f.err.len()
        );
    }
    Ok(f)
}

/// The petrophysical relation of one parameter draw (order of [`PetroPrior::centres`]):
/// Waxman–Smits with a, m, n and B·Qv, and ρw.
fn relation(p: &[f64; 6]) -> (WaxmanSmits, f64) {
    (
        WaxmanSmits {
            archie: Archie {
                a: p[3],
                m: p[1],
                n: p[2],
            },
            surface_conductivity_s_per_m: p[5],
        },
        p[4],
    )
}

/// H2 refinements of the inversion's parameter mesh for the model's forward: a model is
/// sharper than an inversion (a water table, 0.5 m layers), and on the inversion's own
/// forward mesh the 2.5D solution of a sharp model is biased low by several per cent
/// (measured on the example's truth: median ρa ratio 0.934 on one level, 0.962 on two,
/// 0.985 on three); two levels (16 cells per parameter cell) is the compromise of cost.
const REFINEMENTS: usize = 3;

/// The forward mesh of a model: the parameter mesh refined [`REFINEMENTS`] times, each cell
/// its own resistivity, with the inversion parameter each cell lies in (background cells:
/// the parameter they are prolonged from, [`parameter_map`]).
pub struct ForwardMesh {
    /// The operator (one parameter per cell).
    pub op: ForwardOperator,
    /// Inversion parameter of each cell.
    pub param_of_cell: Vec<usize>,
    /// Each cell's centroid (x, z), m.
    pub centroids: Vec<[f64; 2]>,
}

impl ForwardMesh {
    /// Refine `section`'s mesh and build the operator for `quadrupoles` (geometric factors
    /// numerical on this mesh where the line is not flat, so its own discretisation error
    /// cancels as in the inversion).
    pub fn new(section: &ModelSection, quadrupoles: &[Quadrupole]) -> anyhow::Result<Self> {
        let mut mesh = section.mesh.clone();
        let mut parent: Vec<usize> = (0..mesh.n_cells()).collect();
        for _ in 0..REFINEMENTS {
            let (fine, p) = mesh.refine_h2();
            parent = p
                .iter()
                .map(|c| parent.get(*c).copied().unwrap_or(0))
                .collect();
            mesh = fine;
        }
        let (param_of_cell, _) = parameter_map(&section.mesh, &parent);
        let centroids = mesh.centroids();
        let n = mesh.n_cells();
        let op = ForwardOperator::new(
            mesh,
            (0..n).collect(),
            &section.electrodes_xz,
            quadrupoles,
            &ForwardSettings::default(),
        )?;
        Ok(ForwardMesh {
            op,
            param_of_cell,
            centroids,
        })
    }

    /// A per-parameter resistivity on every cell.
    pub fn prolong(&self, rho_param: &[f64]) -> Vec<f64> {
        self.param_of_cell
            .iter()
            .map(|j| rho_param.get(*j).copied().unwrap_or(f64::NAN))
            .collect()
    }
}

/// Phase 2: resistivity per cell of the forward mesh (Ω·m): the model's state (φ, S) at the
/// cell's centroid under the relation of its parameter's region (`draw[region]`), or
/// `fallback` (the inverted resistivity) where the model says nothing. Also per inversion
/// parameter, for the figure: the mean conductivity of its cells, and whether most of them
/// came from the model.
pub fn model_resistivity(
    m: &HydroModel,
    mesh: &ForwardMesh,
    region: &[usize],
    draw: &[[f64; 6]],
    fallback: &[f64],
) -> (Vec<f64>, Vec<f64>, Vec<bool>) {
    let n_params = fallback.len();
    let mut sum_sigma = vec![0.0; n_params];
    let (mut n_cells, mut n_model) = (vec![0usize; n_params], vec![0usize; n_params]);
    let rho: Vec<f64> = mesh
        .centroids
        .iter()
        .zip(&mesh.param_of_cell)
        .map(|(c, &j)| {
            let keep = fallback.get(j).copied().unwrap_or(f64::NAN);
            let sigma = region
                .get(j)
                .and_then(|r| draw.get(*r))
                .zip(m.state_at(c[0], c[1]))
                .map(|(p, (phi, s))| {
                    let (ws, rho_w) = relation(p);
                    waxman_smits_conductivity_s_per_m(phi, s, rho_w, &ws)
                })
                .filter(|s| s.is_finite() && *s > 0.0);
            let rho = sigma.map_or(keep, |s| 1.0 / s);
            if j < n_params {
                n_cells[j] += 1;
                n_model[j] += usize::from(sigma.is_some());
                sum_sigma[j] += 1.0 / rho;
            }
            rho
        })
        .collect();
    let per_param = (0..n_params)
        .map(|j| {
            if n_cells[j] == 0 {
                fallback[j]
            } else {
                n_cells[j] as f64 / sum_sigma[j]
            }
        })
        .collect();
    let from_model = (0..n_params).map(|j| 2 * n_model[j] > n_cells[j]).collect();
    (rho, per_param, from_model)
}

/// What the forward found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ForwardComparison {
    /// Which data ("the survey", "the baseline survey (…)").
    pub data: String,
    /// Number of data.
    pub n_data: usize,
    /// χ² of the model's prediction at the relation's central parameters (errors ε', module
    /// docs).
    pub chi2_model: f64,
    /// χ² of each Monte Carlo draw of the relation.
    pub chi2_draws: Vec<f64>,
    /// The inversion's χ² on the same data.
    pub chi2_inversion: f64,
    /// The inverted model's χ² on the model's (refined) forward mesh with the same errors:
    /// the fit of the best model known, through the same operator — the reference the model
    /// is judged against (or 1, whichever is larger).
    pub chi2_reference: f64,
    /// The model's forward error added to the data's, relative (`model_error_fraction`).
    pub model_error_fraction: f64,
    /// The largest χ² that still explains the data.
    pub chi2_limit: f64,
    /// Agree: the model explains the data; disagree: it does not.
    pub verdict: Verdict,
    /// Parameter cells whose resistivity came from the model.
    pub n_cells_from_model: usize,
    /// Cells outside the model's grid (or masked) that kept the inverted resistivity.
    pub n_cells_kept: usize,
    /// Measured ρa, Ω·m.
    pub rhoa_obs_ohm_m: Vec<f64>,
    /// ρa the model predicts (central parameters), Ω·m.
    pub rhoa_model_ohm_m: Vec<f64>,
    /// ρa of the inverted model on the same forward mesh, Ω·m.
    pub rhoa_inversion_ohm_m: Vec<f64>,
    /// The model's resistivity per parameter cell (central parameters), Ω·m.
    pub rho_model_ohm_m: Vec<f64>,
    /// The model's image: its predicted data inverted as the field data were
    /// ([`invert_predicted`]); `None` when the inversion's data set is not held (a time-lapse
    /// series without its baseline inversion) or the image could not be made (said in
    /// `notes`).
    #[serde(skip)]
    pub image: Option<Box<InversionResult>>,
    /// The mean water content of the image per cell, m³/m³ (the tool converts it as it
    /// converted the field model).
    pub image_theta: Option<Vec<f64>>,
    /// What was noticed.
    pub notes: Vec<String>,
    /// One paragraph.
    pub sentence: String,
}

/// Inputs of [`forward`] besides the model.
pub struct ForwardInputs<'a> {
    /// The petrophysical prior of each region and each cell's region.
    pub priors: &'a [PetroPrior],
    /// The region of each parameter cell.
    pub region: &'a [usize],
    /// Monte Carlo draws besides the centres.
    pub n_draws: usize,
    /// Their seed.
    pub seed: u64,
    /// `hydro_params.chi2_ratio_max`.
    pub chi2_ratio_max: f64,
    /// `hydro_params.model_error_fraction`.
    pub model_error_fraction: f64,
    /// The survey's topography (for the image's mesh).
    pub topography: &'a [[f64; 2]],
}

/// Phases 1–5 (module docs). `progress(fraction, what)`; `cancel` stops between forwards
/// and the image's iterations.
pub fn forward(
    m: &HydroModel,
    ert: &ErtModel,
    inp: &ForwardInputs<'_>,
    progress: &mut dyn FnMut(f64, &str),
    cancel: &AtomicBool,
) -> anyhow::Result<ForwardComparison> {
    let data = fitted(ert)?;
    let section = ert.section();
    progress(
        0.02,
        "refining the inversion's mesh for the model's forward",
    );
    let mesh = ForwardMesh::new(section, data.quadrupoles)?;
    let centres: Vec<[f64; 6]> = inp.priors.iter().map(|p| p.centres()).collect();
    let draws: Vec<Vec<[f64; 6]>> = inp
        .priors
        .iter()
        .map(|p| p.draws(inp.n_draws, inp.seed))
        .collect();
    let d: Vec<f64> = data.rhoa_obs_ohm_m.iter().map(|v| v.ln()).collect();
    let e_model = inp.model_error_fraction;
    let w: Vec<f64> = data
        .err
        .iter()
        .map(|e| 1.0 / (e * e + e_model * e_model).sqrt())
        .collect();
    let misfit = |rho: &[f64]| -> anyhow::Result<(f64, Vec<f64>)> {
        let r = mesh.op.response(rho)?;
        let f: Vec<f64> = r.rhoa_ohm_m.iter().map(|v| v.ln()).collect();
        Ok((chi2(&d, &f, &w), r.rhoa_ohm_m))
    };
    progress(
        0.1,
        "the model's resistivity forwarded at the relation's central values",
    );
    let (rho_cells, rho_model, from_model) =
        model_resistivity(m, &mesh, inp.region, &centres, data.rho_ohm_m);
    let n_from_model = from_model.iter().filter(|b| **b).count();
    if n_from_model == 0 {
        anyhow::bail!(
            "no cell of the ERT section lies inside the model's grid along the line (check hydro_params.line_origin, line_azimuth_deg and elevation_shift_m)"
        );
    }
    let (chi2_model, rhoa_model) = misfit(&rho_cells)?;
    progress(
        0.2,
        "the inverted model on the same forward mesh, for reference",
    );
    let (chi2_reference, rhoa_inv) = misfit(&mesh.prolong(data.rho_ohm_m))?;
    let mut chi2_draws = Vec::with_capacity(inp.n_draws);
    for i in 0..inp.n_draws {
        if cancel.load(Ordering::Relaxed) {
            anyhow::bail!(
                "cancelled after {i} of {} Monte Carlo forwards",
                inp.n_draws
            );
        }
        progress(
            0.25 + 0.6 * i as f64 / inp.n_draws.max(1) as f64,
            &format!("Monte Carlo forward {} of {}", i + 1, inp.n_draws),
        );
        let draw: Vec<[f64; 6]> = draws.iter().filter_map(|r| r.get(i).copied()).collect();
        let (rho, _, _) = model_resistivity(m, &mesh, inp.region, &draw, data.rho_ohm_m);
        chi2_draws.push(misfit(&rho)?.0);
    }
    let limit = inp.chi2_ratio_max * chi2_reference.max(1.0);
    let verdict = if !chi2_model.is_finite() {
        Verdict::NotCompared
    } else if chi2_model <= limit {
        Verdict::Agree
    } else {
        Verdict::Disagree
    };
    let n_kept = section.n_params() - n_from_model;
    progress(
        0.9,
        "the model's image: its predicted data inverted as the field data were",
    );
    let mut notes = Vec::new();
    let image = image(
        &data,
        section,
        inp.topography,
        &rhoa_model,
        cancel,
        &mut notes,
    );
    let sentence = sentence(
        &data,
        chi2_model,
        &chi2_draws,
        (chi2_reference, limit, e_model),
        verdict,
        n_kept,
    );
    Ok(ForwardComparison {
        data: data.label.clone(),
        n_data: d.len(),
        chi2_model,
        chi2_draws,
        chi2_inversion: data.chi2,
        chi2_reference,
        chi2_limit: limit,
        model_error_fraction: e_model,
        verdict,
        n_cells_from_model: n_from_model,
        n_cells_kept: n_kept,
        rhoa_obs_ohm_m: data.rhoa_obs_ohm_m.to_vec(),
        rhoa_model_ohm_m: rhoa_model,
        rhoa_inversion_ohm_m: rhoa_inv,
        rho_model_ohm_m: rho_model,
        image,
        image_theta: None,
        notes,
        sentence,
    })
}

/// Phase 5: the model's image ([`invert_predicted`]) on the field inversion's mesh; `None`
/// with a note when it cannot be made or its mesh is not the field model's.
fn image(
    data: &Fitted<'_>,
    section: &ModelSection,
    topography: &[[f64; 2]],
    rhoa_model: &[f64],
    cancel: &AtomicBool,
    notes: &mut Vec<String>,
) -> Option<Box<InversionResult>> {
    let Some((ds, params)) = data.dataset else {
        notes.push("the inversion's prepared data are not held (a time-lapse series without its baseline inversion): the model's image was not made, and its water content is compared as it is".into());
        return None;
    };
    match invert_predicted(
        &section.electrodes_xz,
        topography,
        ds,
        rhoa_model,
        params,
        &section.interfaces,
        &mut |_, _| {},
        cancel,
    ) {
        Ok(r) if r.section.n_params() == section.n_params() => Some(Box::new(r)),
        Ok(r) => {
            notes.push(format!(
                "the model's image was inverted on {} cells, not the field model's {}: not used",
                r.section.n_params(),
                section.n_params()
            ));
            None
        }
        Err(e) => {
            notes.push(format!("the model's image could not be inverted: {e}"));
            None
        }
    }
}

/// The verdict in words.
fn sentence(
    data: &Fitted<'_>,
    chi2_model: f64,
    draws: &[f64],
    (reference, limit, e_model): (f64, f64, f64),
    verdict: Verdict,
    n_kept: usize,
) -> String {
    let n = crate::catalog::kit::format::num;
    let spread = if draws.is_empty() {
        String::new()
    } else {
        let (lo, hi) = crate::catalog::kit::format::range(draws);
        format!(
            " (the petrophysical relation's Monte Carlo draws give {} to {}, median {})",
            n(lo),
            n(hi),
            n(median(draws))
        )
    };
    let what = match verdict {
        Verdict::Agree => "the hydrological model explains the measured ERT data",
        Verdict::Disagree => "the hydrological model does not explain the measured ERT data",
        Verdict::NotCompared => "the model's prediction could not be judged",
    };
    let kept = if n_kept > 0 {
        format!(
            " {n_kept} cell(s) of the section lie outside the model and keep the inverted resistivity."
        )
    } else {
        String::new()
    };
    format!(
        "Forwarded through the run's petrophysical relation onto the quadrupoles of {}, the model's water content predicts data with χ² = {}{spread}, against the inverted model's {} through the same forward (limit {}; both with a {} % model error added to the data's errors; the inversion's own χ² {}): {what}.{kept}",
        data.label,
        n(chi2_model),
        n(reference),
        n(limit),
        n(100.0 * e_model),
        n(data.chi2)
    )
}
