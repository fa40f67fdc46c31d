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
