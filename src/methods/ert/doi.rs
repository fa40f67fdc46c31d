//! The depth of investigation index of an ERT model (Oldenburg & Li 1999, "Estimating depth
//! of investigation in dc resistivity and IP surveys", Geophysics 64(2), 403–416, eq. 4).
//!
//! The survey is inverted twice more, each time with a homogeneous reference model (also the
//! start model) a factor [`REFERENCE_FACTOR`] below and above the first inversion's start
//! model and a small smallness weight α_s, at the first inversion's λ:
//!
//!   R_j = (m1_j − m2_j) / (m_r1 − m_r2),   m = ln ρ.
//!
//! Where the data determine cell j both inversions agree whatever the reference (R ≈ 0);
//! where they do not, each inversion returns its own reference (R ≈ 1). Cells with
//! R ≤ [`DOI_CUTOFF`] are taken as determined (Oldenburg & Li's 0.1 to 0.2; the lower value).
//! The depth of investigation is the depth above which the determined cells under the middle
//! of the line lie: the 90th percentile of their depths. A check that does not come from the
//! misfit: an interpretation below it rests on the reference model, not on the data.

use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};

use super::inversion::{InversionError, InversionResult, LambdaMode, Progress, invert_survey};
use super::mesh::Interface;
use super::survey::Survey;

/// R at or below which a cell is determined by the data.
pub const DOI_CUTOFF: f64 = 0.1;
/// The two reference models are the start model divided and multiplied by this.
pub const REFERENCE_FACTOR: f64 = 10.0;
/// The smallness weight of the two DOI inversions (when the first had none).
pub const DOI_ALPHA_S: f64 = 0.01;

/// The DOI index of a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DoiIndex {
    /// R per parameter cell (dimensionless; 0 determined, 1 the reference's).
    pub r: Vec<f64>,
    /// The two reference resistivities, Ω·m.
    pub reference_ohm_m: [f64; 2],
    /// The smallness weight used.
    pub alpha_s: f64,
    /// Depth above which the determined cells under the middle of the line lie, m; `None`
    /// when no cell there is determined.
    pub doi_depth_m: Option<f64>,
    /// Share of the cells under the middle of the line that are determined (0–1).
    pub determined_share: f64,
}

impl DoiIndex {
    /// Whether cell j is determined by the data (R ≤ [`DOI_CUTOFF`]).
    pub fn determined(&self, j: usize) -> bool {
        self.r.get(j).is_some_and(|r| r.abs() <= DOI_CUTOFF)
    }
}

/// The DOI index of `base` (the inversion of `survey` with `interfaces`): two inversions more
/// (module docs), each reported through `progress` as half of the work.
pub fn doi_index(
    survey: &Survey,
    base: &InversionResult,
    interfaces: &[Interface],
    progress: Progress,
    cancel: &AtomicBool,
) -> Result<DoiIndex, InversionError> {
    // 1. The two settings: the first inversion's, at its λ, with a reference each side.
    let rho0 = base.start_ohm_m;
    let refs = [rho0 / REFERENCE_FACTOR, rho0 * REFERENCE_FACTOR];
    let alpha_s = if base.params.alpha_s > 0.0 {
        base.params.alpha_s
    } else {
        DOI_ALPHA_S
    };
    // 2. The two inversions (the same mesh: it depends on the electrodes and the settings).
    let mut models = Vec::with_capacity(2);
    for (k, rho_ref) in refs.iter().enumerate() {
        let mut p = base.params.clone();
        p.lambda = base.lambda;
        p.lambda_mode = LambdaMode::Fixed;
        p.outlier_threshold = 0.0;
        p.alpha_s = alpha_s;
        p.reference_ohm_m = Some(*rho_ref);
        p.start_ohm_m = Some(*rho_ref);
        let mut sub = |f: f64, what: &str| {
            progress(
                0.5 * (k as f64 + f),
                &format!("depth of investigation, reference {rho_ref:.3} Ω·m: {what}"),
            )
        };
        let r = invert_survey(survey, &p, interfaces, &mut sub, cancel)?;
        if r.rho_ohm_m.len() != base.rho_ohm_m.len() {
            return Err(InversionError::Solve(format!(
                "the depth-of-investigation inversions used another mesh ({} cells, the model {})",
                r.rho_ohm_m.len(),
                base.rho_ohm_m.len()
            )));
        }
        models.push(r.rho_ohm_m);
    }
    // 3. R (eq. 4 of Oldenburg & Li 1999), in ln ρ.
    let dm_ref = refs[0].ln() - refs[1].ln();
    let r: Vec<f64> = models[0]
        .iter()
        .zip(&models[1])
        .map(|(a, b)| (a.ln() - b.ln()) / dm_ref)
        .collect();
    // 4. The depth of investigation under the middle half of the line.
    let (doi_depth_m, determined_share) = depth_of_investigation(base, &r);
    Ok(DoiIndex {
        r,
        reference_ohm_m: refs,
        alpha_s,
        doi_depth_m,
        determined_share,
    })
}

/// The 90th percentile of the depths of the determined cells whose centres lie under the
/// middle half of the electrode spread, and the share of those cells that are determined.
fn depth_of_investigation(base: &InversionResult, r: &[f64]) -> (Option<f64>, f64) {
    let s = &base.section;
    let xs: Vec<f64> = s.param_centroid_m.iter().map(|c| c[0]).collect();
    let (x0, x1) = s
        .electrodes_xz
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), e| {
            (a.min(e[0]), b.max(e[0]))
        });
    let (lo, hi) = (x0 + 0.25 * (x1 - x0), x1 - 0.25 * (x1 - x0));
    let middle: Vec<usize> = (0..r.len())
        .filter(|&j| xs[j] >= lo && xs[j] <= hi)
        .collect();
    if middle.is_empty() {
        return (None, 0.0);
    }
    let mut depths: Vec<f64> = middle
        .iter()
        .filter(|&&j| r[j].abs() <= DOI_CUTOFF)
        .map(|&j| s.param_depth_m(j))
        .collect();
    let share = depths.len() as f64 / middle.len() as f64;
    if depths.is_empty() {
        return (None, share);
    }
    depths.sort_by(f64::total_cmp);
    let k = ((0.9 * depths.len() as f64).ceil() as usize).clamp(1, depths.len()) - 1;
    (Some(depths[k]), share)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::ert::inversion::InversionParams;
    use crate::methods::ert::inversion::default_mesh_params;
    use crate::methods::ert::inversion::tests::{half_space_survey, no_progress};

    #[test]
    fn a_half_space_is_determined_near_the_surface_and_not_at_depth() {
        // Data of a 50 Ω·m half-space, 16 electrodes 1 m apart (dipole–dipole, n ≤ 6), cells
        // under the middle half of the line: the shallow ones are fixed by the data whatever
        // the reference (R ≈ 0), the deep ones lean towards their reference. The depth of
        // investigation of such a spread is a fraction of its 15 m length (Oldenburg & Li
        // 1999: about 0.1–0.3 of it; measured 2.2 m); accepted between 1 and 6 m.
        let params = InversionParams {
            mesh: Some(default_mesh_params(16, 8.0)),
            ..Default::default()
        };
        let s = half_space_survey(16, 1.0, 50.0, &params);
        let flag = AtomicBool::new(false);
        let base = invert_survey(&s, &params, &[], &mut no_progress(), &flag).unwrap();
        let doi = doi_index(&s, &base, &[], &mut no_progress(), &flag).unwrap();
        assert_eq!(doi.r.len(), base.rho_ohm_m.len());
        let [lo, hi] = doi.reference_ohm_m;
        assert!((lo * REFERENCE_FACTOR / base.start_ohm_m - 1.0).abs() < 1e-12);
        assert!((hi / REFERENCE_FACTOR / base.start_ohm_m - 1.0).abs() < 1e-12);
        let mean_r = |keep: &dyn Fn(f64) -> bool| {
            let v: Vec<f64> = (0..doi.r.len())
                .filter(|&j| {
                    let x = base.section.param_centroid_m[j][0];
                    (3.75..=11.25).contains(&x) && keep(base.section.param_depth_m(j))
                })
                .map(|j| doi.r[j].abs())
                .collect();
            v.iter().sum::<f64>() / v.len().max(1) as f64
        };
        let (shallow, deep) = (mean_r(&|z| z < 0.75), mean_r(&|z| z > 6.0));
        assert!(shallow < DOI_CUTOFF, "shallow mean R {shallow}");
        // Below the mesh's depth R does not reach 1 (the smoothness ties the deepest cells to
        // those above; Oldenburg & Li 1999 §"The DOI index"): measured 0.34 under the middle.
        assert!(deep > 3.0 * DOI_CUTOFF, "deep mean R {deep}");
        let d = doi.doi_depth_m.expect("some cells are determined");
        assert!((1.0..=6.0).contains(&d), "DOI {d} m");
        assert!(doi.determined_share > 0.0 && doi.determined_share < 1.0);
    }
}
