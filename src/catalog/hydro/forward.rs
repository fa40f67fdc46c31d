//! `forward_model_output`: does the hydrological model explain the ERT data?
//!
//! Phases: (1) the measured data the inversion fitted (the single survey, or the baseline of a
//! time-lapse series) and the inversion's own χ²; (2) the model's state (φ, S) at each
//! parameter cell of the inversion's section → resistivity by the run's petrophysical relation,
//! Waxman & Smits (1968) eq. 5, ρ = F*/(σw·Sⁿ + B·Qv·Sⁿ⁻¹) with F* = a·φ⁻ᵐ (B·Qv = 0: Archie
//! 1942), the relation's parameters at their prior centres and at `forward_realizations`
//! Monte Carlo draws; cells the model does not cover keep the inverted resistivity (counted);
//! (3) the 2.5D forward on the survey's own quadrupoles, on the inversion's own mesh and with
//! its geometric factors; (4) χ² = mean(((ln ρa_obs − ln ρa_model)/ε)²), the inversion's
//! definition, and the verdict: the model explains the data when its χ² is at most
//! `chi2_ratio_max` × max(χ²_inversion, 1).

use serde::Serialize;

use super::compare::Verdict;
use super::model::HydroModel;
use crate::catalog::ert::ErtModel;
use crate::methods::ert::fem::{ForwardOperator, ForwardSettings, parameter_map};
use crate::methods::ert::inversion::{ModelSection, chi2, median};
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

/// Phase 2: resistivity per parameter cell (Ω·m) of the model's state under the relation of
/// each region (`draw[region]`); cells without a model state keep `fallback`. Returns the
/// resistivities and how many cells the model gave.
pub fn model_resistivity(
    m: &HydroModel,
    section: &ModelSection,
    region: &[usize],
    draw: &[[f64; 6]],
    fallback: &[f64],
) -> (Vec<f64>, usize) {
    let mut from_model = 0;
    let rho = (0..section.n_params())
        .map(|j| {
            let c = section.param_centroid_m[j];
            let p = region.get(j).and_then(|r| draw.get(*r));
            match (m.state_at(c[0], c[1]), p) {
                (Some((phi, s)), Some(p)) => {
                    let (ws, rho_w) = relation(p);
                    let sigma = waxman_smits_conductivity_s_per_m(phi, s, rho_w, &ws);
                    if sigma.is_finite() && sigma > 0.0 {
                        from_model += 1;
                        1.0 / sigma
                    } else {
                        fallback.get(j).copied().unwrap_or(f64::NAN)
                    }
                }
                _ => fallback.get(j).copied().unwrap_or(f64::NAN),
            }
        })
        .collect();
    (rho, from_model)
}

/// What the forward found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ForwardComparison {
    /// Which data ("the survey", "the baseline survey (…)").
    pub data: String,
    /// Number of data.
    pub n_data: usize,
    /// χ² of the model's prediction at the relation's central parameters.
    pub chi2_model: f64,
    /// χ² of each Monte Carlo draw of the relation.
    pub chi2_draws: Vec<f64>,
    /// The inversion's χ² on the same data.
    pub chi2_inversion: f64,
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
    /// ρa of the inverted model, Ω·m.
    pub rhoa_inversion_ohm_m: Vec<f64>,
    /// The model's resistivity per parameter cell (central parameters), Ω·m.
    pub rho_model_ohm_m: Vec<f64>,
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
}

/// Phases 1–4 (module docs). `progress(fraction, what)`; `cancelled()` stops between forwards.
pub fn forward(
    m: &HydroModel,
    ert: &ErtModel,
    inp: &ForwardInputs<'_>,
    progress: &mut dyn FnMut(f64, &str),
    cancelled: &dyn Fn() -> bool,
) -> anyhow::Result<ForwardComparison> {
    let data = fitted(ert)?;
    let section = ert.section();
    let (fine, parent) = section.mesh.refine_h2();
    let (map, _) = parameter_map(&section.mesh, &parent);
    let op = ForwardOperator::new(
        fine,
        map,
        &section.electrodes_xz,
        data.quadrupoles,
        &ForwardSettings {
            geometric_factors: Some(data.k_m.to_vec()),
            ..ForwardSettings::default()
        },
    )?;
    let centres: Vec<[f64; 6]> = inp.priors.iter().map(|p| p.centres()).collect();
    let draws: Vec<Vec<[f64; 6]>> = inp
        .priors
        .iter()
        .map(|p| p.draws(inp.n_draws, inp.seed))
        .collect();
    let d: Vec<f64> = data.rhoa_obs_ohm_m.iter().map(|v| v.ln()).collect();
    let w: Vec<f64> = data.err.iter().map(|e| 1.0 / e).collect();
    let misfit = |rho: &[f64]| -> anyhow::Result<(f64, Vec<f64>)> {
        let r = op.response(rho)?;
        let f: Vec<f64> = r.rhoa_ohm_m.iter().map(|v| v.ln()).collect();
        Ok((chi2(&d, &f, &w), r.rhoa_ohm_m))
    };
    progress(
        0.1,
        "the model's resistivity forwarded at the relation's central values",
    );
    let (rho_model, n_from_model) =
        model_resistivity(m, section, inp.region, &centres, data.rho_ohm_m);
    if n_from_model == 0 {
        anyhow::bail!(
            "no cell of the ERT section lies inside the model's grid along the line (check hydro_params.line_origin, line_azimuth_deg and elevation_shift_m)"
        );
    }
    let (chi2_model, rhoa_model) = misfit(&rho_model)?;
    let (_, rhoa_inv) = misfit(data.rho_ohm_m)?;
    let mut chi2_draws = Vec::with_capacity(inp.n_draws);
    for i in 0..inp.n_draws {
        if cancelled() {
            anyhow::bail!(
                "cancelled after {i} of {} Monte Carlo forwards",
                inp.n_draws
            );
        }
        progress(
            0.2 + 0.8 * i as f64 / inp.n_draws.max(1) as f64,
            &format!("Monte Carlo forward {} of {}", i + 1, inp.n_draws),
        );
        let draw: Vec<[f64; 6]> = draws.iter().filter_map(|r| r.get(i).copied()).collect();
        let (rho, _) = model_resistivity(m, section, inp.region, &draw, data.rho_ohm_m);
        chi2_draws.push(misfit(&rho)?.0);
    }
    let limit = inp.chi2_ratio_max * data.chi2.max(1.0);
    let verdict = if !chi2_model.is_finite() {
        Verdict::NotCompared
    } else if chi2_model <= limit {
        Verdict::Agree
    } else {
        Verdict::Disagree
    };
    let n_kept = section.n_params() - n_from_model;
    let sentence = sentence(&data, chi2_model, &chi2_draws, limit, verdict, n_kept);
    Ok(ForwardComparison {
        data: data.label.clone(),
        n_data: d.len(),
        chi2_model,
        chi2_draws,
        chi2_inversion: data.chi2,
        chi2_limit: limit,
        verdict,
        n_cells_from_model: n_from_model,
        n_cells_kept: n_kept,
        rhoa_obs_ohm_m: data.rhoa_obs_ohm_m.to_vec(),
        rhoa_model_ohm_m: rhoa_model,
        rhoa_inversion_ohm_m: rhoa_inv,
        rho_model_ohm_m: rho_model,
        sentence,
    })
}

/// The verdict in words.
fn sentence(
    data: &Fitted<'_>,
    chi2_model: f64,
    draws: &[f64],
    limit: f64,
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
        "Forwarded through the run's petrophysical relation onto the quadrupoles of {}, the model's water content predicts data with χ² = {}{spread}, against the inversion's {} (limit {}): {what}.{kept}",
        data.label,
        n(chi2_model),
        n(data.chi2),
        n(limit)
    )
}
