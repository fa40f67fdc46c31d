//! Tests on the real transfer functions in `../shared/data/mt` against mt-metadata's numbers
//! in `../shared/oracles/mt_tf.json` (see the oracle README for how they were produced).

use std::path::Path;

use super::tf::{Component, TfFormat, rhoa_ohm_m};
use super::*;
use crate::{require_data, require_oracle};

fn oracle_files() -> Option<serde_json::Value> {
    crate::field_data::oracle_json("mt_tf.json")
}

/// Every staged TF file reads; periods, counts, impedance/tipper presence and ρa/φ at the
/// oracle's points (first, middle and last period of each of xy and yx) equal mt-metadata's.
/// Tolerance 1e-8 relative for ρa and φ (issue 8 acceptance), except the Z-file: mt-metadata
/// stores Z-file transfer functions as complex64 (`ZMM.initialize_arrays`), so its numbers
/// carry float32 rounding (≈6e-8 relative in Z); there our Z rounded to float32 must equal the
/// oracle's Z exactly and ρa/φ recomputed from it must agree to 1e-12.
#[test]
fn every_staged_file_matches_mt_metadata() {
    let Some(oracle) = oracle_files() else {
        return;
    };
    let files = oracle["files"].as_object().expect("files object");
    let mut worst: f64 = 0.0;
    let mut n_points = 0;
    assert!(files.len() >= 8, "the oracle lists {} files", files.len());
    for (name, o) in files {
        let rel = o["file"].as_str().unwrap().trim_start_matches("mt/");
        let path = require_data!(&format!("mt/{rel}"));
        let tf = read_transfer_function(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            tf.n_periods(),
            o["n_periods"].as_u64().unwrap() as usize,
            "{name}"
        );
        let pmin = o["period_min_s"].as_f64().unwrap();
        let pmax = o["period_max_s"].as_f64().unwrap();
        assert!(
            ((tf.period_s[0] - pmin) / pmin).abs() < 1e-12,
            "{name}: {} vs {pmin}",
            tf.period_s[0]
        );
        let last = *tf.period_s.last().unwrap();
        assert!(
            ((last - pmax) / pmax).abs() < 1e-12,
            "{name}: {last} vs {pmax}"
        );
        assert_eq!(
            tf.tipper.is_some(),
            o["tipper_present"].as_bool().unwrap(),
            "{name} tipper"
        );
        assert_eq!(
            tf.z_mv_km_nt.is_some(),
            o["impedance_present"].as_bool().unwrap(),
            "{name} impedance"
        );
        let is_zfile = tf.format == TfFormat::EmtfZFile;
        for (mode, comp) in [("xy", Component::Xy), ("yx", Component::Yx)] {
            let Some(points) = o["modes"][mode].as_array() else {
                continue;
            };
            let z = tf.impedance(comp).unwrap();
            for pt in points {
                let t = pt["period_s"].as_f64().unwrap();
                let k = tf
                    .period_s
                    .iter()
                    .position(|p| ((p - t) / t).abs() < 1e-12)
                    .unwrap_or_else(|| panic!("{name}: period {t} not found"));
                let zo = pt["Z_mV_km_nT"].as_array().unwrap();
                let (zr, zi) = (zo[0].as_f64().unwrap(), zo[1].as_f64().unwrap());
                let rho_o = pt["rho_a_ohmm"].as_f64().unwrap();
                let phs_o = pt["phase_deg"].as_f64().unwrap();
                let ours = z[k];
                if is_zfile {
                    assert_eq!((ours.re as f32) as f64, zr, "{name} {mode} Re Z at {t}");
                    assert_eq!((ours.im as f32) as f64, zi, "{name} {mode} Im Z at {t}");
                    let r32 = num_complex::Complex64::new(
                        (ours.re as f32) as f64,
                        (ours.im as f32) as f64,
                    );
                    let rho = rhoa_ohm_m(r32, tf.period_s[k]);
                    assert!(((rho - rho_o) / rho_o).abs() < 1e-12, "{name} {mode} ρa");
                    // Our own (float64) value differs from the oracle's by its float32 rounding.
                    let rho64 = rhoa_ohm_m(ours, tf.period_s[k]);
                    assert!(
                        ((rho64 - rho_o) / rho_o).abs() < 3e-7,
                        "{name} {mode} ρa float64"
                    );
                } else {
                    let rho = rhoa_ohm_m(ours, tf.period_s[k]);
                    let phs = phase_deg(ours);
                    worst = worst
                        .max(((rho - rho_o) / rho_o).abs())
                        .max(((phs - phs_o) / phs_o).abs());
                    n_points += 1;
                    assert!(
                        ((rho - rho_o) / rho_o).abs() < 1e-8,
                        "{name} {mode} ρa {rho} vs {rho_o}"
                    );
                    assert!(
                        ((phs - phs_o) / phs_o).abs() < 1e-8,
                        "{name} {mode} φ {phs} vs {phs_o}"
                    );
                }
            }
        }
    }
    eprintln!(
        "mt-metadata oracle: {n_points} points outside Z-files, worst relative ρa/φ difference {worst:e}"
    );
}

/// The summary JSON names the format, counts and units, and the detected sign convention;
/// non-MT files are not claimed.
#[test]
fn read_summary_describes_the_files() {
    let edi = require_data!("mt/tf_edi_metronix.edi");
    let s = read_summary(&edi).unwrap().unwrap();
    assert_eq!(s["format"], "SEG EDI (impedance)");
    assert_eq!(s["n_periods"], 73);
    assert_eq!(s["format_guessed"], false);
    assert!(
        s["sign_convention"]
            .as_str()
            .unwrap()
            .starts_with("e^{+iωt}"),
        "{s}"
    );
    let j = require_data!("mt/tf_jfile.j");
    let s = read_summary(&j).unwrap().unwrap();
    // BIRRP's phases: xy in the fourth quadrant, yx in the second → e^{-iωt}.
    assert!(
        s["sign_convention"]
            .as_str()
            .unwrap()
            .starts_with("e^{-iωt}"),
        "{s}"
    );
    assert!(
        s["impedance_units_in_file"]
            .as_str()
            .unwrap()
            .contains("checked: field units"),
        "{s}"
    );
    let cull = require_data!("mt/occam_aushield_Cull1985.dat");
    let s = read_summary(&cull).unwrap().unwrap();
    assert_eq!(s["n_periods"], 23);
    let not_mt = require_data!("ert/gimli/gallery.dat");
    assert!(read_summary(&not_mt).is_none());
    assert!(read_summary(Path::new("/nonexistent/file.dat")).is_none());
    assert!(matches!(
        read_summary(Path::new("/nonexistent/file.edi")),
        Some(Err(_))
    ));
}

/// The Cull (1985) data (Constable et al. 1987, Table 5) as read: 23 periods, ρa = 10^col2;
/// first/middle/last against the oracle's `other_files` block to 1e-12.
#[test]
fn cull_table_reads() {
    let oracle = require_oracle!("mt_tf.json");
    let path = require_data!("mt/occam_aushield_Cull1985.dat");
    let s = read_sounding_table(&path).unwrap();
    let o = &oracle["other_files"]["occam_aushield_Cull1985.dat"];
    assert_eq!(s.period_s.len(), o["n_periods"].as_u64().unwrap() as usize);
    for pt in o["first_mid_last"].as_array().unwrap() {
        let t = pt["period_s"].as_f64().unwrap();
        let k = s
            .period_s
            .iter()
            .position(|p| (p - t).abs() < 1e-12 * t)
            .unwrap();
        let r = pt["rho_a_ohmm"].as_f64().unwrap();
        assert!(((s.curves[0].rhoa_ohm_m[k] - r) / r).abs() < 1e-12);
        assert_eq!(s.curves[0].phase_deg[k], pt["phase_deg"].as_f64().unwrap());
    }
}

/// A 1D-looking real site and the dimensionality verdict: every staged impedance file gives
/// finite indicators at most periods and a verdict with shares that add up to 1.
#[test]
fn dimensionality_of_the_staged_sites() {
    for f in [
        "mt/tf_edi_metronix.edi",
        "mt/tf_edi_phoenix.edi",
        "mt/tf_edi_spectra_in.edi",
        "mt/NMX20.xml",
        "mt/tf_zmm.zmm",
    ] {
        let path = require_data!(f);
        let tf = read_transfer_function(&path).unwrap();
        let d = dimensionality(&tf);
        assert_ne!(d.verdict, DimensionalityVerdict::NotAssessable, "{f}");
        let total = d.share_1d + d.share_2d + d.share_3d;
        assert!((total - 1.0).abs() < 1e-12, "{f}");
        let n_ok = d.class.iter().filter(|c| c.is_some()).count();
        assert!(
            n_ok * 10 >= tf.n_periods() * 9,
            "{f}: only {n_ok} of {} periods assessed",
            tf.n_periods()
        );
        eprintln!("{f}: {}", d.sentence);
    }
}

fn print_history(r: &OccamResult) {
    for h in &r.history {
        eprintln!(
            "  it {:2} phase {} rms {:.4} rough {:.4} mu {:.3e} step {} trials {} {:.2e}s",
            h.iteration,
            h.phase,
            h.rms,
            h.roughness,
            h.lambda,
            h.step_length,
            h.n_trials,
            h.seconds
        );
    }
    eprintln!("  stop: {} (n_forward {})", r.stop_reason, r.n_forward);
}

/// Issue 8 acceptance: the Cull (1985) data (Constable et al. 1987, Table 5, errors as given)
/// reach RMS ≤ 1.0 with Occam within 10 iterations, and the final μ is the largest that meets
/// it: the same linearised step with μ × 1.5 gives RMS > 1.0.
#[test]
fn occam_fits_the_cull_data_at_rms_1() {
    let path = require_data!("mt/occam_aushield_Cull1985.dat");
    let s = read_sounding_table(&path).unwrap();
    let opts = OccamOptions::default();
    let r = invert_occam(&s, &opts, None, None).unwrap();
    print_history(&r);
    eprintln!("{:?}", r.notes);
    assert!(r.rms <= 1.0, "RMS {}", r.rms);
    let first_at_target = r
        .history
        .iter()
        .find(|h| h.rms <= 1.0)
        .map(|h| h.iteration)
        .unwrap();
    assert!(
        first_at_target <= 10,
        "first reached RMS 1 at iteration {first_at_target}"
    );
    assert!(r.iterations <= 10, "{} iterations", r.iterations);
    let (_, rms_larger) = occam_trial(&s, &opts, &r.last_linearization, 1.5 * r.lambda).unwrap();
    eprintln!(
        "Cull: RMS {} after {} iterations (first at target: {first_at_target}), μ {:.4e}; μ×1.5 → RMS {rms_larger}",
        r.rms, r.iterations, r.lambda
    );
    assert!(rms_larger > 1.0, "μ × 1.5 gives RMS {rms_larger}");
    let (_, rms_same) = occam_trial(&s, &opts, &r.last_linearization, r.lambda).unwrap();
    assert!(
        (rms_same - r.rms).abs() < 1e-9,
        "the trial reproduces the last step"
    );
}

/// The benchmark problem (../shared/bench/mt_3layer.csv, its 40-layer mesh 10·1.2^i m, start
/// 100 Ω·m, errors as in the file): the numpy textbook Occam reached χ² 0.998 in 5 iterations
/// with roughness 0.512 (mt_3layer_truth.json, occam_reference). Ours must reach χ² ≤ 1 in at
/// most 8 iterations with a roughness no larger than 1.1 × 0.512 (it is the smoothest model at
/// the target, so it should not be rougher), and resistivity at 100 m / 1 km / 3 km within a
/// factor 1.5 of theirs (111.8 / 8.63 / 83.4 Ω·m).
#[test]
fn occam_on_the_benchmark_problem() {
    let Some(csv) = crate::field_data::bench("mt_3layer.csv") else {
        return;
    };
    let Some(truth) = crate::field_data::bench("mt_3layer_truth.json") else {
        return;
    };
    let truth: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(truth).unwrap()).unwrap();
    let s = read_sounding_table(&csv).unwrap();
    let thick: Vec<f64> = truth["inversion_model"]["thickness_m_top_down"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(thick.len(), 39);
    let opts = OccamOptions {
        thickness_m: Some(thick),
        start_resistivity_ohm_m: Some(100.0),
        ..OccamOptions::default()
    };
    let r = invert_occam(&s, &opts, None, None).unwrap();
    print_history(&r);
    let reference = &truth["occam_reference"]["this_export_run"];
    let ref_rough = reference["roughness"].as_f64().unwrap();
    assert!(r.chi2 <= 1.0, "χ² {}", r.chi2);
    assert!(r.iterations <= 8, "{} iterations", r.iterations);
    assert!(
        r.roughness <= 1.1 * ref_rough,
        "roughness {} vs numpy Occam {ref_rough}",
        r.roughness
    );
    let at = |depth: f64| {
        let tops = r.model.depth_top_m();
        let k = tops.iter().rposition(|&t| t <= depth).unwrap();
        r.model.resistivity_ohm_m[k]
    };
    let theirs =
        truth["occam_reference"]["benchmark_runs"]["run1_default"]["occam_rho_at_100m_1km_3km"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect::<Vec<_>>();
    for (d, t) in [100.0, 1000.0, 3000.0].iter().zip(&theirs) {
        let ours = at(*d);
        eprintln!("  ρ at {d} m: ours {ours:.3}, numpy Occam {t:.3}");
        assert!(ours / t < 1.5 && t / ours < 1.5, "at {d} m: {ours} vs {t}");
    }
}

/// Every staged impedance file inverts in det mode with a 5 % floor: the misfit never rises
/// from one iteration to the next, the run ends with a stated reason, and the evaluation
/// gives a score with a sentence (field data need not reach RMS 1 with a 1D model; the
/// report states the χ²).
#[test]
fn occam_runs_on_every_staged_site() {
    for f in [
        "mt/tf_edi_metronix.edi",
        "mt/tf_edi_no_error.edi",
        "mt/tf_edi_phoenix.edi",
        "mt/tf_edi_spectra_in.edi",
        "mt/NMX20.xml",
        "mt/tf_zmm.zmm",
        "mt/tf_jfile.j",
    ] {
        let path = require_data!(f);
        let tf = read_transfer_function(&path).unwrap();
        let s = sounding_from_tf(&tf, &SoundingOptions::default()).unwrap();
        let r = invert_occam(&s, &OccamOptions::default(), None, None).unwrap();
        assert!(r.chi2.is_finite() && r.iterations >= 1, "{f}");
        for w in r.chi2_history.windows(2) {
            assert!(
                w[1] <= w[0] * (1.0 + 1e-9) || w[1] <= 1.0,
                "{f}: χ² rose {w:?}"
            );
        }
        let d = dimensionality(&tf);
        let both = sounding_from_tf(
            &tf,
            &SoundingOptions {
                mode: OccamMode::Both,
                z_error_floor_percent: 5.0,
            },
        )
        .unwrap();
        let ind = static_shift_indicator(&both);
        let ev = evaluate_mt_inversion(&s, &r, ind.as_ref(), Some(&d));
        assert!(ev.quality_score.is_finite());
        eprintln!("{f}: {} | {}", ev.summary, r.stop_reason);
    }
}
