//! ERT inversion on real data (acceptance items of issue #6; tolerances from the issue and
//! ../shared/reference/geophysics.md §5.1.3).

#[macro_use]
#[path = "support/field_data.rs"]
mod field_data;

use hydrogeo_studio::methods::ert::inversion::{
    ErrorSource, InversionParams, default_mesh_params, invert_survey,
};
use hydrogeo_studio::methods::ert::readers::{Instrument, read_survey};
use std::sync::atomic::AtomicBool;

fn quiet() -> impl FnMut(f64, &str) {
    |_, _| {}
}

#[test]
fn gallery_reaches_chi2_one_and_matches_simpeg() {
    // gallery.dat (21 electrodes, 116 data, the file's 1–2 % errors). Acceptance: χ² ≤ 1.1
    // within 15 iterations, predicted ρa rrms ≤ 1.5 %, median |Δlog10 ρ| ≤ 0.15 against the
    // SimPEG model (ert_gallery_simpeg_model.json: cells) where SimPEG's coverage exceeds
    // 1e-3 of its maximum.
    let p = require_data!("ert/gimli/gallery.dat");
    let oracle = require_oracle!("ert_gallery_simpeg_model.json");
    let s = read_survey(&p, Instrument::Auto).unwrap();
    let flag = AtomicBool::new(false);
    let mut pr = quiet();
    // pyGIMLi's own unit test of this file (test_Managers.py): λ = 10, paraDX = 0.3 (three
    // cells per 2 m electrode spacing here), fine cells at the surface; our parameter depth
    // 12 m covers SimPEG's 11.2 m deep mesh.
    let mut mesh = default_mesh_params(21, 12.0);
    mesh.n_between = 3;
    mesh.first_layer_fraction = 0.25;
    let params = InversionParams {
        lambda: 10.0,
        mesh: Some(mesh),
        ..Default::default()
    };
    let r = invert_survey(&s, &params, &[], &mut pr, &flag).unwrap();
    println!(
        "gallery: {} data, {} cells, χ² {:?}, rrms {:.3} %, {} iterations, stop {:?}, {:.2} s",
        r.n_data, r.n_cells, r.chi2_history, r.rrms_percent, r.iterations, r.stop_reason, r.seconds
    );
    println!("notes: {:?}", r.notes);
    let cells = oracle["cells"].as_array().unwrap();
    let cov_max = cells
        .iter()
        .map(|c| c["coverage"].as_f64().unwrap())
        .fold(0.0, f64::max);
    let mut diffs = Vec::new();
    let mut outside = 0;
    for c in cells {
        if c["coverage"].as_f64().unwrap() <= 1e-3 * cov_max {
            continue;
        }
        let (x, z) = (c["x_m"].as_f64().unwrap(), c["z_m"].as_f64().unwrap());
        match r.section.param_at(x, z) {
            Some(j) => {
                diffs.push((r.rho_ohm_m[j].log10() - c["log10_rho"].as_f64().unwrap()).abs())
            }
            None => outside += 1,
        }
    }
    diffs.sort_by(f64::total_cmp);
    let med = diffs[diffs.len() / 2];
    println!(
        "SimPEG comparison: {} cells compared, {outside} outside our parameter domain, median |Δlog10 ρ| = {med:.4}, 90 % {:.4}",
        diffs.len(),
        diffs[diffs.len() * 9 / 10]
    );
    assert!(r.chi2 <= 1.1, "χ² {}", r.chi2);
    assert!(r.iterations <= 15);
    assert!(r.rrms_percent <= 1.5, "rrms {}", r.rrms_percent);
    assert!(med <= 0.15, "median |Δlog10 ρ| {med}");
    assert!(
        outside * 10 < diffs.len(),
        "most SimPEG cells lie in our domain"
    );
}

#[test]
fn fielddataline2_with_topography_converges() {
    // fielddataline2.dat: 72 electrodes on 8.7 m of relief, 936 data. Acceptance: χ² ≤ 1.5.
    let p = require_data!("ert/phgx/Bert/fielddataline2.dat");
    let s = read_survey(&p, Instrument::Auto).unwrap();
    let flag = AtomicBool::new(false);
    let mut pr = quiet();
    // The file's err column holds stacking errors in percent (median below 1 %), which field
    // data never fit; the test uses 5 % relative error, the peer studio's default
    // (peer-studio.md §2.8), and a 20 m deep parameter domain (about 0.3 × the line).
    let mut mesh = default_mesh_params(72, 20.0);
    mesh.depth_growth = 1.3;
    let params = InversionParams {
        error_source: ErrorSource::Fixed,
        relative_error: 0.05,
        mesh: Some(mesh),
        ..Default::default()
    };
    let r = invert_survey(&s, &params, &[], &mut pr, &flag).unwrap();
    assert!(
        r.section.surface_xz.iter().any(|p| p[1] < -8.0),
        "the real surface is in the section"
    );
    println!(
        "fielddataline2: {} data, {} cells, χ² {:?}, rrms {:.3} %, {} iterations, stop {:?}, {:.2} s",
        r.n_data, r.n_cells, r.chi2_history, r.rrms_percent, r.iterations, r.stop_reason, r.seconds
    );
    println!("notes: {:?}", r.notes);
    assert!(r.chi2 <= 1.5, "χ² {}", r.chi2);
}

#[test]
fn evaluation_retries_an_underfit_model_with_half_the_lambda() {
    // gallery.dat at pyGIMLi's default λ = 20 on our default mesh stops at χ² ≈ 2.1
    // (underfit: data-fit score 60 − 10·(χ² − 1.5) < 60, so it fails); the evaluation inverts
    // again with λ = 10 (quality::retry_lambda), which fits (χ² < 1.5), and keeps that one.
    use hydrogeo_studio::methods::ert::evaluation::{EvaluationSettings, evaluate};
    let p = require_data!("ert/gimli/gallery.dat");
    let s = read_survey(&p, Instrument::Auto).unwrap();
    let flag = AtomicBool::new(false);
    let params = InversionParams::default();
    let mut pr = quiet();
    let first = invert_survey(&s, &params, &[], &mut pr, &flag).unwrap();
    let q0 = hydrogeo_studio::methods::ert::evaluation::Assessable::assess(&first, 70.0);
    assert!(
        first.chi2 > 1.5 && !q0.passed,
        "χ² {} score {}",
        first.chi2,
        q0.score
    );
    let ev = evaluate(
        first,
        params.lambda,
        &EvaluationSettings::default(),
        |lambda| {
            let mut pr = quiet();
            invert_survey(
                &s,
                &InversionParams {
                    lambda,
                    ..params.clone()
                },
                &[],
                &mut pr,
                &flag,
            )
        },
    )
    .unwrap();
    println!("{} | {:?}", ev.why_kept, ev.attempts);
    assert_eq!(ev.attempts[0].lambda, 20.0);
    assert_eq!(ev.attempts[1].lambda, 10.0);
    assert!(ev.replaced && ev.attempts[1].kept);
    assert!(ev.kept.chi2 <= 1.5 && ev.quality.passed, "{:?}", ev.quality);
    assert!(ev.quality.component("plausibility").unwrap() >= 70.0);
}

#[test]
fn a_strong_shallow_conductor_is_fitted_at_lambda_20_as_pygimli_fits_it() {
    // The baseline survey of the 2 m water-table truth of the answers issue
    // (tests/answers_truths.rs): a 653 Ω·m top 2 m thick, a 13 Ω·m plume of radius 5.5 m at
    // 6.5 m depth (50:1 against the top). pyGIMLi 1.6 (ERTManager.invert(lam=20), numerical
    // geometric factors, the file's 2 % errors; run here 2026-12-04) reaches χ² 1.17 in 4
    // iterations, ρ 6.9–1323 Ω·m. Our Gauss–Newton used to accept a full first step that
    // decreased the objective by 15 % (its quadratic model promised far more) and ended on a
    // plateau at χ² 79 with cells of 24 000 Ω·m. Tolerance: χ² ≤ 2 (the data-fit band that
    // still scores ≥ 60), and ρ within a factor 1.5 of pyGIMLi's range at both ends.
    let tmp = tempfile::tempdir().unwrap();
    let d = hydrogeo_studio::example::Truth::default();
    let truth = hydrogeo_studio::example::Truth {
        water_table_depth_m: 2.0,
        plume: hydrogeo_studio::example::Plume {
            x_m: 62.0,
            depth_m: 6.5,
            radius_m: [5.5, 4.5, 3.5, 2.5],
            ..d.plume.clone()
        },
        ..d
    };
    hydrogeo_studio::example::write_project_from(&truth, tmp.path()).unwrap();
    let s = read_survey(&tmp.path().join("ert/2024-05-01.dat"), Instrument::Auto).unwrap();
    let flag = AtomicBool::new(false);
    let mut pr = quiet();
    let r = invert_survey(&s, &InversionParams::default(), &[], &mut pr, &flag).unwrap();
    let (lo, hi) = r
        .rho_ohm_m
        .iter()
        .fold((f64::MAX, 0.0f64), |a, &b| (a.0.min(b), a.1.max(b)));
    eprintln!(
        "χ² {:.3} after {} iterations ({:?}), ρ {lo:.1}–{hi:.1} Ω·m; history {:?}",
        r.chi2, r.iterations, r.stop_reason, r.chi2_history
    );
    assert!(r.chi2 <= 2.0, "χ² {}", r.chi2);
    assert!((lo / 6.87).max(6.87 / lo) <= 1.5, "ρ min {lo}");
    assert!((hi / 1323.2).max(1323.2 / hi) <= 1.5, "ρ max {hi}");
}
