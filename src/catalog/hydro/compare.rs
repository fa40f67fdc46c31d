//! `compare_model_output`: the hydrological model against the run's geophysical answers —
//! its water table along the line against the water-table answer (and each method's
//! evidence), and its water content on the ERT section's covered cells against the ERT
//! water content, by 1 m depth band, with the correlation over cells.
//!
//! **Agreement is judged against the geophysics' own uncertainty.** A difference agrees when
//! |Δ| ≤ k·σ (k = `hydro_params.agreement_sigmas`, 2 by default) with σ the geophysical
//! uncertainty (the answer's, or the Monte Carlo σ(θ) of the conversion) combined with the
//! model's sampling resolution; a difference without an uncertainty is shown, not judged.

use serde::Serialize;

use super::model::HydroModel;
use crate::catalog::answers::Answer;
use crate::catalog::ert::{ErtModel, ErtWaterContent};
use crate::methods::ert::interpret::covered_cells;
use crate::methods::ert::inversion::median;
use crate::methods::ert::mesh::interp;

/// The verdict of one comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Within the uncertainty.
    Agree,
    /// Outside it.
    Disagree,
    /// Nothing to compare (said why).
    NotCompared,
}

impl Verdict {
    /// The word the report uses.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Agree => "agree",
            Verdict::Disagree => "disagree",
            Verdict::NotCompared => "not compared",
        }
    }
}

/// The model's water table at one point of the line.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct WaterTableAt {
    /// Distance along the line, m.
    pub x_m: f64,
    /// Ground elevation there (the ERT section's surface), m.
    pub surface_z_m: f64,
    /// The model's water-table elevation, m.
    pub z_m: f64,
    /// Its depth below the ground, m.
    pub depth_m: f64,
}

/// One method's water table against the model's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MethodDifference {
    /// The method.
    pub method: String,
    /// Where the model was sampled for it: the method's own positions along the line (its
    /// soundings, sites, traces or profiles), or the ERT electrodes when it gives none.
    pub sampled_at: String,
    /// The model's water-table depth there (median), m.
    pub model_depth_m: f64,
    /// Its water-table depth, m.
    pub depth_m: f64,
    /// Its uncertainty, m (NaN: none).
    pub sigma_m: f64,
    /// Model minus method, m.
    pub difference_m: f64,
    /// The verdict.
    pub verdict: Verdict,
}

/// The water table compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WaterTableComparison {
    /// The model's water table at the electrodes over the grid.
    pub profile: Vec<WaterTableAt>,
    /// Median model depth, m.
    pub model_depth_m: f64,
    /// The model's resolution of it, m (one standard deviation).
    pub model_sigma_m: f64,
    /// The geophysical answer's depth and uncertainty, m.
    pub answer_depth_m: Option<f64>,
    /// Its uncertainty, m.
    pub answer_sigma_m: Option<f64>,
    /// Model minus answer, m.
    pub difference_m: Option<f64>,
    /// Per method.
    pub methods: Vec<MethodDifference>,
    /// The verdict on the answer.
    pub verdict: Verdict,
    /// Why it was not compared, when it was not.
    pub reason: Option<String>,
}

/// One depth band of the water content compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BandComparison {
    /// Top of the band below the ground, m.
    pub depth_top_m: f64,
    /// Its bottom, m.
    pub depth_bottom_m: f64,
    /// Covered ERT cells in the band that the model covers too.
    pub n_cells: usize,
    /// Median model θ, m³/m³.
    pub model_theta: f64,
    /// Median θ of the model's image (its predicted data inverted as the field data were).
    pub model_image_theta: Option<f64>,
    /// Median ERT θ, m³/m³.
    pub ert_theta: f64,
    /// Median Monte Carlo σ(θ) of the ERT conversion, m³/m³.
    pub ert_sigma: f64,
    /// Model (its image when made) minus ERT, m³/m³.
    pub difference: f64,
    /// The verdict.
    pub verdict: Verdict,
}

/// The water content compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WaterContentComparison {
    /// By 1 m depth band.
    pub bands: Vec<BandComparison>,
    /// Pearson's r of model and ERT θ over the cells compared (NaN when undefined).
    pub correlation: f64,
    /// Cells compared.
    pub n_cells: usize,
    /// Per compared cell: (ERT parameter index, model (image) θ − ERT θ).
    pub cell_differences: Vec<(usize, f64)>,
    /// Whether the model's image was compared (else the model as it is).
    pub through_image: bool,
    /// The verdict: agree when at least two thirds of the bands agree.
    pub verdict: Verdict,
    /// Why it was not compared, when it was not.
    pub reason: Option<String>,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelComparison {
    /// The water table.
    pub water_table: WaterTableComparison,
    /// The water content.
    pub water_content: WaterContentComparison,
    /// Agree only when every part compared agrees; not compared when nothing was.
    pub verdict: Verdict,
    /// One paragraph.
    pub sentence: String,
}

/// Pearson's correlation coefficient r = cov(a, b) / (σa σb).
pub fn pearson(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    if n < 3 {
        return f64::NAN;
    }
    let ma = a.iter().take(n).sum::<f64>() / n as f64;
    let mb = b.iter().take(n).sum::<f64>() / n as f64;
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(b).take(n) {
        sab += (x - ma) * (y - mb);
        saa += (x - ma).powi(2);
        sbb += (y - mb).powi(2);
    }
    if saa <= 0.0 || sbb <= 0.0 {
        return f64::NAN;
    }
    sab / (saa * sbb).sqrt()
}

/// The verdict on a difference `d` with standard deviation `sigma` at `k` σ.
fn judge(d: f64, sigma: f64, k: f64) -> Verdict {
    if !d.is_finite() || !sigma.is_finite() || sigma <= 0.0 {
        Verdict::NotCompared
    } else if d.abs() <= k * sigma {
        Verdict::Agree
    } else {
        Verdict::Disagree
    }
}

/// The model's vertical resolution under the line: a cell thickness / √12 (uniform within
/// a cell) for a saturation water table; the heads' and pressure's own water table carry no
/// sampling error of the model (their uncertainty is the model's, which it does not give).
fn model_sigma_m(m: &HydroModel) -> f64 {
    use super::model::WaterTableSource;
    match m.water_table_source() {
        Some(WaterTableSource::Saturation) => {
            let ncpl = m.grid.delr.len() * m.grid.delc.len();
            let dz: Vec<f64> = (0..m.grid.nlay())
                .filter_map(|l| {
                    let top = if l == 0 {
                        m.grid.top.first().copied()
                    } else {
                        m.grid.botm.get((l - 1) * ncpl).copied()
                    }?;
                    Some(top - m.grid.botm.get(l * ncpl)?)
                })
                .collect();
            median(&dz) / 12f64.sqrt()
        }
        _ => 0.0,
    }
}

/// The water table compared at the electrodes of `ert` with `answer` (the run's
/// water-table answer, when it has one).
pub fn water_table(
    m: &HydroModel,
    ert: &ErtModel,
    answer: Option<&Answer>,
    k: f64,
) -> WaterTableComparison {
    let section = ert.section();
    let profile: Vec<WaterTableAt> = section
        .electrodes_xz
        .iter()
        .filter_map(|e| {
            let surface = interp(&section.surface_xz, e[0]);
            let z = m.water_table_z(e[0])?;
            Some(WaterTableAt {
                x_m: e[0],
                surface_z_m: surface,
                z_m: z,
                depth_m: surface - z,
            })
        })
        .collect();
    let depths: Vec<f64> = profile.iter().map(|p| p.depth_m).collect();
    let model_depth_m = if depths.is_empty() {
        f64::NAN
    } else {
        median(&depths)
    };
    let model_sigma_m = model_sigma_m(m);
    let mut out = WaterTableComparison {
        profile,
        model_depth_m,
        model_sigma_m,
        answer_depth_m: None,
        answer_sigma_m: None,
        difference_m: None,
        methods: Vec::new(),
        verdict: Verdict::NotCompared,
        reason: None,
    };
    if depths.is_empty() {
        out.reason = Some("the model gives no water table under the ERT electrodes (the line is outside its grid, or its columns are dry)".into());
        return out;
    }
    let Some(a) = answer.filter(|a| a.value.is_some()) else {
        out.reason = Some(
            "the run has no geophysical water-table answer (the goal did not ask, or no method gave one)"
                .into(),
        );
        return out;
    };
    let value = a.value.unwrap_or(f64::NAN);
    let sigma = a.uncertainty.unwrap_or(f64::NAN);
    let d = model_depth_m - value;
    out.answer_depth_m = Some(value);
    out.answer_sigma_m = a.uncertainty;
    out.difference_m = Some(d);
    out.verdict = judge(d, sigma.hypot(model_sigma_m), k);
    if out.verdict == Verdict::NotCompared {
        out.reason = Some(
            "the water-table answer carries no uncertainty to judge the difference against".into(),
        );
    }
    out.methods = a
        .evidence
        .iter()
        .map(|e| {
            let xs = method_positions(a, &e.method);
            let at_sites: Vec<f64> = xs
                .iter()
                .filter_map(|&x| Some(interp(&section.surface_xz, x) - m.water_table_z(x)?))
                .collect();
            let (model_depth, sampled_at) = if at_sites.is_empty() {
                (model_depth_m, "the ERT electrodes".to_string())
            } else {
                (
                    median(&at_sites),
                    format!("its {} position(s) along the line", at_sites.len()),
                )
            };
            let d = model_depth - e.value;
            MethodDifference {
                method: e.method.clone(),
                sampled_at,
                model_depth_m: model_depth,
                depth_m: e.value,
                sigma_m: e.uncertainty,
                difference_m: d,
                verdict: judge(d, e.uncertainty.hypot(model_sigma_m), k),
            }
        })
        .collect();
    out
}

/// The positions along the line (m) at which `method` read its water table: its profile in
/// the answer's details (`profiles[].x_m`, [`crate::catalog::answers`]).
fn method_positions(a: &Answer, method: &str) -> Vec<f64> {
    a.details["profiles"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["method"] == method)
        .flat_map(|p| p["x_m"].as_array().cloned().unwrap_or_default())
        .filter_map(|x| x.as_f64())
        .collect()
}

/// One compared cell: (parameter, depth m, model θ, model-image θ, ERT θ, ERT σ(θ)).
type Row = (usize, f64, f64, Option<f64>, f64, f64);

/// The water content compared on the ERT section's covered cells (first survey). With the
/// model's image (`image_theta`, [`super::forward`]) the verdict compares like with like:
/// the image's θ against the ERT θ; without it, the model's own θ (sharper than any
/// inversion, so it differs at every contrast — said in the sentence).
pub fn water_content(
    m: &HydroModel,
    ert: &ErtModel,
    wc: Option<&ErtWaterContent>,
    image_theta: Option<&[f64]>,
    min_coverage: f64,
    k: f64,
) -> WaterContentComparison {
    let mut out = WaterContentComparison {
        bands: Vec::new(),
        correlation: f64::NAN,
        n_cells: 0,
        cell_differences: Vec::new(),
        through_image: image_theta.is_some(),
        verdict: Verdict::NotCompared,
        reason: None,
    };
    if !m.has_water_content() {
        out.reason = Some("the model holds no water content (a saturation file and a porosity, or heads with hydro_params.unsaturated_saturation)".into());
        return out;
    }
    let Some(first) = wc.and_then(|w| w.steps.first()) else {
        out.reason = Some(
            "the run has no ERT water content (the petrophysical conversion did not run)".into(),
        );
        return out;
    };
    let rows = compared_cells(m, ert, first, image_theta, min_coverage);
    if rows.is_empty() {
        out.reason = Some("no covered ERT cell lies inside the model's grid along the line".into());
        return out;
    }
    out.bands = bands(&rows, k);
    let judged_theta = |r: &Row| r.3.unwrap_or(r.2);
    let a: Vec<f64> = rows.iter().map(judged_theta).collect();
    let b: Vec<f64> = rows.iter().map(|r| r.4).collect();
    out.correlation = pearson(&a, &b);
    out.n_cells = rows.len();
    out.cell_differences = rows.iter().map(|r| (r.0, judged_theta(r) - r.4)).collect();
    let judged: Vec<&BandComparison> = out
        .bands
        .iter()
        .filter(|b| b.verdict != Verdict::NotCompared)
        .collect();
    let agreeing = judged
        .iter()
        .filter(|b| b.verdict == Verdict::Agree)
        .count();
    out.verdict = if judged.is_empty() {
        out.reason = Some("no band carries an uncertainty to judge against".into());
        Verdict::NotCompared
    } else if 3 * agreeing >= 2 * judged.len() {
        Verdict::Agree
    } else {
        Verdict::Disagree
    };
    out
}

/// The covered ERT cells inside the model, with both water contents.
fn compared_cells(
    m: &HydroModel,
    ert: &ErtModel,
    first: &crate::methods::petro::WaterContent,
    image_theta: Option<&[f64]>,
    min_coverage: f64,
) -> Vec<Row> {
    let section = ert.section();
    let covered = covered_cells(ert.coverage(), min_coverage);
    let (mean, std) = (&first.water_content.mean, &first.water_content.std);
    let mut rows = Vec::new();
    for j in 0..section.n_params() {
        if !covered.get(j).copied().unwrap_or(false) {
            continue;
        }
        let c = section.param_centroid_m[j];
        let (Some(theta_m), Some(&theta_e), Some(&sigma)) =
            (m.water_content(c[0], c[1]), mean.get(j), std.get(j))
        else {
            continue;
        };
        let image = image_theta
            .and_then(|t| t.get(j).copied())
            .filter(|v| v.is_finite());
        if theta_e.is_finite() {
            rows.push((j, section.param_depth_m(j), theta_m, image, theta_e, sigma));
        }
    }
    rows
}

/// 1 m depth bands from the ground: medians of each column, judged image (or model) − ERT.
fn bands(rows: &[Row], k: f64) -> Vec<BandComparison> {
    let max_depth = rows.iter().map(|r| r.1).fold(0.0, f64::max);
    let n_bands = (max_depth.min(30.0).ceil() as usize).max(1);
    let mut out = Vec::new();
    for b in 0..n_bands {
        let (top, bottom) = (b as f64, b as f64 + 1.0);
        let in_band: Vec<&Row> = rows.iter().filter(|r| r.1 >= top && r.1 < bottom).collect();
        if in_band.is_empty() {
            continue;
        }
        let col =
            |f: &dyn Fn(&Row) -> f64| median(&in_band.iter().map(|r| f(r)).collect::<Vec<_>>());
        let (tm, te, se) = (col(&|r| r.2), col(&|r| r.4), col(&|r| r.5));
        let image = in_band
            .iter()
            .all(|r| r.3.is_some())
            .then(|| col(&|r| r.3.unwrap_or(f64::NAN)));
        let d = image.unwrap_or(tm) - te;
        out.push(BandComparison {
            depth_top_m: top,
            depth_bottom_m: bottom,
            n_cells: in_band.len(),
            model_theta: tm,
            model_image_theta: image,
            ert_theta: te,
            ert_sigma: se,
            difference: d,
            verdict: judge(d, se, k),
        });
    }
    out
}

/// Both comparisons and their joint verdict and sentence.
pub fn compare(
    m: &HydroModel,
    ert: &ErtModel,
    answer: Option<&Answer>,
    wc: Option<&ErtWaterContent>,
    image_theta: Option<&[f64]>,
    min_coverage: f64,
    k: f64,
) -> ModelComparison {
    let wt = water_table(m, ert, answer, k);
    let w = water_content(m, ert, wc, image_theta, min_coverage, k);
    let parts = [wt.verdict, w.verdict];
    let verdict = if parts.contains(&Verdict::Disagree) {
        Verdict::Disagree
    } else if parts.contains(&Verdict::Agree) {
        Verdict::Agree
    } else {
        Verdict::NotCompared
    };
    let n = crate::catalog::kit::format::num;
    let wt_words = match (wt.answer_depth_m, wt.difference_m) {
        (Some(a), Some(d)) => format!(
            "Water table: the model's is {} m deep (median along the line), the geophysics' {} ± {} m; difference {} m — they {} (within {} σ).",
            n(wt.model_depth_m),
            n(a),
            n(wt.answer_sigma_m.unwrap_or(f64::NAN)),
            n(d),
            wt.verdict.word(),
            k
        ),
        _ => format!(
            "Water table: not compared ({}).",
            wt.reason.clone().unwrap_or_default()
        ),
    };
    let wc_words = if w.verdict == Verdict::NotCompared {
        format!(
            "Water content: not compared ({}).",
            w.reason.clone().unwrap_or_default()
        )
    } else {
        let agreeing = w
            .bands
            .iter()
            .filter(|b| b.verdict == Verdict::Agree)
            .count();
        format!(
            "Water content ({}): {agreeing} of {} depth bands agree within {k} σ of the ERT conversion's Monte Carlo spread over {} covered cells, correlation r = {} — they {}.",
            if w.through_image {
                "the model's image, its predicted data inverted as the field data were, against the ERT's"
            } else {
                "the model as it is against the ERT's, which is smoothed by the inversion: expect differences at every contrast"
            },
            w.bands.len(),
            w.n_cells,
            n(w.correlation),
            w.verdict.word()
        )
    };
    ModelComparison {
        sentence: format!(
            "The hydrological model and the geophysics {}. {wt_words} {wc_words}",
            verdict.word()
        ),
        water_table: wt,
        water_content: w,
        verdict,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pearson_is_one_for_a_line_and_undefined_without_spread() {
        let a = [1.0, 2.0, 3.0, 4.0];
        let b = [3.0, 5.0, 7.0, 9.0];
        assert!((pearson(&a, &b) - 1.0).abs() < 1e-12);
        let c = [9.0, 7.0, 5.0, 3.0];
        assert!((pearson(&a, &c) + 1.0).abs() < 1e-12);
        assert!(pearson(&a, &[1.0; 4]).is_nan());
    }

    #[test]
    fn a_difference_is_judged_against_its_sigma_and_not_without_one() {
        assert_eq!(judge(0.9, 0.5, 2.0), Verdict::Agree);
        assert_eq!(judge(1.1, 0.5, 2.0), Verdict::Disagree);
        assert_eq!(judge(-1.1, 0.5, 2.0), Verdict::Disagree);
        assert_eq!(judge(0.1, f64::NAN, 2.0), Verdict::NotCompared);
        assert_eq!(judge(0.1, 0.0, 2.0), Verdict::NotCompared);
    }
}
