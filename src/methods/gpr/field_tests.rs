//! Readers and processing checked against the oracles in `../shared/oracles` on the real files
//! in `../shared/data/gpr` (run with `HGX_REQUIRE_FIELD_DATA=1` so they cannot skip).

use std::path::Path;

use serde_json::Value;

use super::*;

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn fvec(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(f).collect()
}

/// GSSI DZT against `gpr_readers.json` → `files["gprpy/GSSI_FILE____032.DZT"]`:
/// shape, header fields and sample values **exactly** (GPRPy's signed values and readgssi's
/// raw words = signed + 32768), and Σ|x| of the signed data (881 370 253, exact in f64).
#[test]
fn dzt_matches_oracle_exactly() {
    let path = crate::require_data!("gpr/gprpy/GSSI_FILE____032.DZT");
    let oracle = crate::require_oracle!("gpr_readers.json");
    let o = &oracle["files"]["gprpy/GSSI_FILE____032.DZT"];
    let line = dzt::read_dzt(&path).unwrap();
    assert_eq!(
        line.n_samples,
        o["samples_per_trace"].as_u64().unwrap() as usize
    );
    assert_eq!(line.n_traces, o["traces"].as_u64().unwrap() as usize);
    assert_eq!((line.n_samples, line.n_traces), (512, 1040));
    assert_eq!(line.time_window_ns, f(&o["time_window_ns"]));
    assert_eq!(
        line.sample_interval_ns,
        f(&o["sample_interval_ns"]["range_over_nsamp"])
    );
    assert_eq!(line.header_permittivity, Some(f(&o["epsr"])));
    assert_eq!(line.antenna.as_deref(), o["antenna"].as_str());
    assert_eq!(
        line.antenna_frequency_mhz,
        Some(f(&o["antenna_frequency_MHz"]))
    );
    let h = &line.header;
    let raw = &o["raw_header_fields"];
    for key in [
        "rh_tag", "rh_nsamp", "rh_bits", "rh_zero", "rh_npass", "rh_nchan",
    ] {
        assert_eq!(h[key].as_f64(), raw[key].as_f64(), "{key}");
    }
    for key in [
        "rhf_sps",
        "rhf_spm",
        "rhf_mpm",
        "rhf_position",
        "rhf_range",
        "rhf_epsr",
        "rhf_top",
        "rhf_depth",
    ] {
        // The oracle holds the float32 widened to float64: exact equality.
        assert_eq!(h[key].as_f64(), raw[key].as_f64(), "{key}");
    }
    assert_eq!(
        h["data_offset"].as_f64(),
        raw["rh_data(offset to data, bytes)"].as_f64()
    );
    assert_eq!(h["rh_antname"].as_str(), raw["rh_antname"].as_str());
    assert_eq!(line.sum_abs(), f(&o["sum_abs_signed"]));
    let (lo, hi) = line
        .data
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
    assert_eq!((lo, hi), (f(&o["min_signed"]), f(&o["max_signed"])));
    let t0: Vec<f64> = (0..5).map(|i| line.data[[i, 0]]).collect();
    assert_eq!(t0, fvec(&o["trace0_samples0_4_signed"]));
    let t100: Vec<f64> = (100..105).map(|i| line.data[[i, 100]]).collect();
    assert_eq!(t100, fvec(&o["trace100_samples100_104_signed"]));
    let offset = f(&o["readgssi_minus_gprpy"][0]);
    let raw0: Vec<f64> = t0.iter().map(|v| v + offset).collect();
    assert_eq!(raw0, fvec(&o["trace0_samples0_4_raw_unsigned_readgssi"]));
    let raw100: Vec<f64> = t100.iter().map(|v| v + offset).collect();
    assert_eq!(
        raw100,
        fvec(&o["trace100_samples100_104_raw_unsigned_readgssi"])
    );
    // Marks every 100 scans (the second scan-header word is 0x6400 on those scans).
    assert_eq!(line.marks, (0..11).map(|k| k * 100).collect::<Vec<_>>());
}

/// Every DT1/HD pair in `gpr_readers.json`: shape, HD values (time window, time zero,
/// frequency, separation in m), Σ|x| and sample values exactly.
#[test]
fn dt1_files_match_oracle_exactly() {
    let oracle = crate::require_oracle!("gpr_readers.json");
    let files = oracle["files"].as_object().unwrap();
    let mut checked = 0;
    for (name, o) in files {
        if !name.ends_with(".DT1") {
            continue;
        }
        let rel = format!("gpr/{name}");
        let path = crate::require_data!(&rel);
        let line = dt1::read_dt1(&path).unwrap();
        assert_eq!(
            line.n_samples as u64,
            o["samples_per_trace"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            line.n_traces as u64,
            o["traces"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(line.time_window_ns, f(&o["time_window_ns"]), "{name}");
        assert_eq!(line.time_zero_sample, f(&o["timezero_at_point"]), "{name}");
        assert_eq!(
            line.sample_interval_ns,
            f(&o["sample_interval_ns"]["window_over_npts"]),
            "{name}"
        );
        assert_eq!(
            line.antenna_frequency_mhz,
            Some(f(&o["antenna_frequency_MHz"])),
            "{name}"
        );
        let sep = line.antenna_separation_m.unwrap();
        assert!(
            (sep - f(&o["antenna_separation_gprpy_m"])).abs() < 1e-12,
            "{name}: {sep}"
        );
        assert_eq!(line.sum_abs(), f(&o["sum_abs"]), "{name}");
        let (lo, hi) = line
            .data
            .iter()
            .fold((f64::MAX, f64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
        assert_eq!((lo, hi), (f(&o["min"]), f(&o["max"])), "{name}");
        let t0: Vec<f64> = (0..5).map(|i| line.data[[i, 0]]).collect();
        assert_eq!(t0, fvec(&o["trace0_samples0_4"]), "{name}");
        if line.n_traces > 100 {
            let t100: Vec<f64> = (100..105).map(|i| line.data[[i, 100]]).collect();
            assert_eq!(t100, fvec(&o["trace100_samples100_104"]), "{name}");
        }
        let th = &o["trace0_header_floats"];
        assert_eq!(
            line.header["trace0_header_floats"][6].as_f64(),
            th["float6_time_window_per_spec_ns"].as_f64()
        );
        checked += 1;
    }
    assert_eq!(checked, 2, "the oracle lists two DT1 files");
}

/// The WARR file is recognised as a WARR gather from its name (a guess, flagged).
#[test]
fn warr_kind_is_a_flagged_guess() {
    let path = crate::require_data!("gpr/gprpy/SnS_WARR_XLINE00.DT1");
    let line = dt1::read_dt1(&path).unwrap();
    assert_eq!(line.survey_kind, SurveyKind::Warr);
    assert!(line.survey_kind_guessed);
    assert!(
        line.notes
            .iter()
            .any(|n| n.contains("inferred from the file name"))
    );
    // Reading through the HD gives the same line.
    let via_hd = dt1::read_dt1(&Path::new(&path).with_extension("HD")).unwrap();
    assert_eq!(via_hd.data, line.data);
}

/// Pairwise sum (numpy's reduction order is close to this; either way the rounding is far
/// below the 1e-9 tolerance).
fn pairwise(v: &[f64]) -> f64 {
    if v.len() <= 128 {
        v.iter().sum()
    } else {
        let m = v.len() / 2;
        pairwise(&v[..m]) + pairwise(&v[m..])
    }
}

/// numpy statistics over all values: mean, std (ddof 0), min, max; C (row-major) order.
fn stats(a: &ndarray::Array2<f64>) -> [f64; 4] {
    let v: Vec<f64> = a.iter().copied().collect();
    let n = v.len() as f64;
    let mean = pairwise(&v) / n;
    let dev: Vec<f64> = v.iter().map(|x| (x - mean) * (x - mean)).collect();
    let std = (pairwise(&dev) / n).sqrt();
    let (lo, hi) = v
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    [mean, std, lo, hi]
}

/// Relative difference with an absolute floor of `floor` (for values near zero).
fn rel(a: f64, b: f64, floor: f64) -> f64 {
    (a - b).abs() / b.abs().max(floor)
}

fn check_step(name: &str, got: &ndarray::Array2<f64>, want: &Value, tol: f64) {
    let s = stats(got);
    let keys = ["mean", "std", "min", "max"];
    let scale = f(&want["std"]);
    let mut worst = 0.0f64;
    for (k, v) in keys.iter().zip(s) {
        // The mean is near zero for the later steps: judge it against the spread (std).
        let floor = if *k == "mean" { scale } else { 0.0 };
        let r = rel(v, f(&want[*k]), floor);
        assert!(r < tol, "{name} {k}: {v} vs {} (rel {r:e})", want[*k]);
        worst = worst.max(r);
    }
    let t500: Vec<f64> = (100..105).map(|i| got[[i, 500]]).collect();
    for (g, w) in t500.iter().zip(fvec(&want["trace500_samples100_104"])) {
        let r = rel(*g, w, 0.0);
        assert!(r < tol, "{name} trace 500: {g} vs {w} (rel {r:e})");
        worst = worst.max(r);
    }
    eprintln!("{name}: worst relative difference {worst:.2e} (tolerance {tol:e})");
}

/// GPRPy chain dewow(10) → remMeanTrace(20) → tpowGain(1.5) → agcGain(25) on the DZT,
/// against `gpr_processing.json` → `steps`: mean/std/min/max and trace 500 samples
/// 100–104 after every step to **1e-9 relative** (the tolerance; the mean is judged
/// relative to the std because it is near zero). tpow uses GPRPy's time vector
/// `linspace(0, 48, 512)` ns, as the oracle did.
#[test]
fn gprpy_chain_matches_oracle() {
    let path = crate::require_data!("gpr/gprpy/GSSI_FILE____032.DZT");
    let oracle = crate::require_oracle!("gpr_processing.json");
    let steps = &oracle["steps"];
    let line = dzt::read_dzt(&path).unwrap();
    check_step("input", &line.data, &steps["input_signed"], 1e-12);
    let d1 = filters::dewow(line.data.view(), 10).unwrap();
    check_step("dewow", &d1, &steps["1_dewow(10)"], 1e-9);
    let d2 =
        filters::remove_background(d1.view(), filters::BackgroundWindow::Running { traces: 20 })
            .unwrap();
    check_step("remMeanTrace", &d2, &steps["2_remMeanTrace(20)"], 1e-9);
    let n = line.n_samples;
    let twtt: Vec<f64> = (0..n).map(|i| 48.0 * i as f64 / (n - 1) as f64).collect();
    let d3 = filters::tpow_gain(d2.view(), &twtt, 1.5).unwrap();
    check_step("tpow", &d3, &steps["3_tpowGain(1.5)"], 1e-9);
    let d4 = filters::agc_gain(d3.view(), 25).unwrap();
    check_step("agc", &d4, &steps["4_agcGain(25) (after tpowGain)"], 1e-9);
    let d5 = filters::agc_gain(d2.view(), 25).unwrap();
    check_step(
        "agc without tpow",
        &d5,
        &steps["agcGain(25) applied to the remMeanTrace output (no tpow)"],
        1e-9,
    );
}

/// Zero-phase Butterworth band-pass 100–800 MHz, order 1, on the signed raw trace 500,
/// against obspy (`gpr_processing.json` → `obspy_bandpass_trace500`) for all three sampling
/// rates: samples 100–104, std and mean within **1e-6 relative** (the tolerance).
#[test]
fn bandpass_matches_obspy() {
    let path = crate::require_data!("gpr/gprpy/GSSI_FILE____032.DZT");
    let oracle = crate::require_oracle!("gpr_processing.json");
    let line = dzt::read_dzt(&path).unwrap();
    let cases = oracle["obspy_bandpass_trace500"].as_object().unwrap();
    assert_eq!(cases.len(), 3);
    for (name, o) in cases {
        let fs = f(&o["fs_Hz"]);
        let sos = bandpass::butterworth_bandpass_sos(100e6, 800e6, fs, 1).unwrap();
        let mut x: Vec<f64> = line.data.column(500).to_vec();
        bandpass::filtfilt_obspy(&sos, &mut x);
        let mut worst = 0.0f64;
        for (g, w) in x[100..105].iter().zip(fvec(&o["samples100_104"])) {
            assert!(rel(*g, w, 0.0) < 1e-6, "{name}: {g} vs {w}");
            worst = worst.max(rel(*g, w, 0.0));
        }
        let n = x.len() as f64;
        let mean = x.iter().sum::<f64>() / n;
        let std = (x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt();
        assert!(rel(std, f(&o["std"]), 0.0) < 1e-6, "{name}: std {std}");
        assert!(rel(mean, f(&o["mean"]), 0.0) < 1e-6, "{name}: mean {mean}");
        worst = worst
            .max(rel(std, f(&o["std"]), 0.0))
            .max(rel(mean, f(&o["mean"]), 0.0));
        eprintln!("band-pass {name}: worst relative difference {worst:.2e} (tolerance 1e-6)");
    }
    // The line's own sampling (range/nsamp, the GSSI definition) is the first case.
    let fs_line = 1e9 / line.sample_interval_ns;
    assert_eq!(fs_line, f(&cases["fs = nsamp/range = 512/48 ns"]["fs_Hz"]));
}

/// Velocity analysis of the real WARR gather (dewow 25 samples, defaults otherwise). No
/// oracle number exists for it (GPRPy's stacked-amplitude maximum was not exported), so the
/// check is physical plausibility: a pick exists, below the air-wave exclusion, with a
/// velocity in 0.06–0.16 m/ns (εr 3.5–25, the range of unsaturated to saturated sediments;
/// Davis & Annan 1989, Table 1), and the guesses it rests on are stated.
#[test]
fn warr_semblance_velocity_is_plausible() {
    let path = crate::require_data!("gpr/gprpy/SnS_WARR_XLINE00.DT1");
    let mut line = dt1::read_dt1(&path).unwrap();
    line.data = filters::dewow(line.data.view(), 25).unwrap();
    let a = velocity::analyse_gather(&line, &velocity::GatherAnalysisParams::default()).unwrap();
    let p = a.pick.clone().expect("a hyperbola in the WARR gather");
    eprintln!("WARR pick: {p:?}; notes {:?}", a.notes);
    assert!((0.06..=0.16).contains(&p.velocity_m_per_ns), "{p:?}");
    assert!(p.t0_ns >= 30.0 && p.semblance > 0.2, "{p:?}");
    assert!(a.notes.iter().any(|n| n.contains("a guess")));
    let v = velocity::resolve_velocity(&velocity::VelocitySource::Semblance(p)).unwrap();
    assert!(v.statement.contains("semblance"));
}

/// The whole chain on the real DZT. Without a velocity the line stays in two-way time and
/// says why; with the header's εr (6, the instrument setting) it is migrated and converted
/// to depth with v = c/√6 = 0.12239 m/ns; with the GPRPy topography file it ends in
/// elevation. Outputs (.npz, recipe JSON, PNG) are written and read back.
#[test]
fn dzt_chain_end_to_end() {
    let path = crate::require_data!("gpr/gprpy/GSSI_FILE____032.DZT");
    let topo_path = crate::require_data!("gpr/gprpy/GSSI_FILE____032.txt");
    let line = dzt::read_dzt(&path).unwrap();

    let params = process::ProcessingParams::default();
    let timeline = process::process_line(&line, &params, None, None).unwrap();
    assert_eq!(timeline.domain, process::Domain::TwoWayTime);
    let why = timeline.why_two_way_time.clone().unwrap();
    assert!(why.contains("no velocity"), "{why}");
    let steps: Vec<(&str, bool)> = timeline
        .recipe
        .steps
        .iter()
        .map(|s| (s.step.as_str(), s.applied))
        .collect();
    assert_eq!(
        steps,
        vec![
            ("blank_scan_header_samples", true),
            ("time_zero", true),
            ("dewow", true),
            ("bandpass", true),
            ("background_removal", true),
            ("tpow_gain", false),
            ("migration", false),
            ("agc_gain", true),
            ("time_to_depth", false),
            ("topographic_correction", false),
        ]
    );
    // Trace 500 (signed): samples 49–51 are 251, 494, 977 and its peak |a| is 12100 (sample
    // 70), so 5 % (605) is crossed at 50 + (605 − 494)/(977 − 494) = 50.2298 (hand value).
    let picks = timezero::pick_first_breaks(line.data.view(), 0.05, 2);
    assert!(
        (picks[500].unwrap() - (50.0 + 111.0 / 483.0)).abs() < 1e-12,
        "{:?}",
        picks[500]
    );
    let tz = &timeline.recipe.steps[1];
    assert!(tz.detail.contains("first break at 50."), "{}", tz.detail);
    assert_eq!(timeline.n_samples, 512 - 50);
    eprintln!("time zero: {}", tz.detail);

    let header_v = line.header_velocity_source();
    let depth = process::process_line(&line, &params, header_v.as_ref(), None).unwrap();
    assert_eq!(depth.domain, process::Domain::Depth);
    let v = depth.velocity.as_ref().unwrap();
    assert!((v.velocity_m_per_ns - 0.299_792_458 / 6f64.sqrt()).abs() < 1e-15);
    assert!(v.statement.contains("instrument"));
    // Depth step = v·dt/2 exactly.
    assert!(
        (depth.vertical_step - v.velocity_m_per_ns * line.sample_interval_ns / 2.0).abs() < 1e-15
    );
    assert!(
        depth
            .recipe
            .steps
            .iter()
            .any(|s| s.step == "migration" && s.applied)
    );

    let topo = sidefiles::read_topography(&topo_path).unwrap();
    let elev = process::process_line(&line, &params, header_v.as_ref(), Some(&topo)).unwrap();
    assert_eq!(elev.recipe.steps[9].chosen_by, "user");
    assert_eq!(elev.recipe.steps[8].chosen_by, "header");
    assert_eq!(elev.domain, process::Domain::Elevation);
    // The topography rises from 18.749 m to ~19.9 m over the line: the top row is the
    // highest surface under a trace (the line is 20.8 m long, the table 23.9 m).
    let top = elev.vertical_first;
    assert!(top > 19.0 && top < 20.0, "{top}");
    assert!(elev.n_samples > depth.n_samples);

    let dir = tempfile::tempdir().unwrap();
    let npz = dir.path().join("line.npz");
    elev.write_npz(&npz).unwrap();
    let bytes = std::fs::read(&npz).unwrap();
    let expected_data = 10 + 118 + 8 * elev.n_samples * elev.n_traces;
    assert!(bytes.len() > expected_data);
    assert!(bytes.windows(15).any(|w| w == b"elevation_m.npy"));
    let recipe = dir.path().join("recipe.json");
    elev.write_recipe_json(&recipe).unwrap();
    let back: process::Recipe =
        serde_json::from_str(&std::fs::read_to_string(&recipe).unwrap()).unwrap();
    assert_eq!(back, elev.recipe);
    let png = dir.path().join("line.png");
    elev.write_radargram_png(&png, 0.99).unwrap();
    let img = image::open(&png).unwrap().to_luma8();
    assert_eq!(
        (img.width() as usize, img.height() as usize),
        (elev.n_traces, elev.n_samples)
    );
}

/// A velocity outside 0.01–0.3 m/ns is refused with the reason, before any processing.
#[test]
fn out_of_range_velocity_is_refused() {
    let path = crate::require_data!("gpr/gprpy/SnS_ComOffs_XLINE00.DT1");
    let line = dt1::read_dt1(&path).unwrap();
    let params = process::ProcessingParams::default();
    let v = velocity::VelocitySource::Request {
        velocity_m_per_ns: 0.5,
    };
    let e = process::process_line(&line, &params, Some(&v), None).unwrap_err();
    assert!(matches!(e, GprError::VelocityRefused { .. }), "{e}");
    assert!(e.to_string().contains("speed of light"), "{e}");
    // The pulseEKKO line uses the header's time zero (3.18 samples) by default.
    let p = process::process_line(&line, &params, None, None).unwrap();
    assert_eq!(p.recipe.steps[0].step, "time_zero");
    assert_eq!(p.recipe.steps[0].chosen_by, "header");
    assert_eq!(p.n_samples, 1500 - 3);
    assert!(
        (p.vertical_first + 0.18 * 0.8).abs() < 1e-12,
        "{}",
        p.vertical_first
    );
}
