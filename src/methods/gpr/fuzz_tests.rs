//! No reader panics on arbitrary bytes or on arbitrary mutations of real files: every parse
//! returns `Ok` or `Err`.

use std::path::Path;

use proptest::prelude::*;

use super::*;

fn cfg() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        ..ProptestConfig::default()
    }
}

/// A DZT header with plausible fields followed by `tail`, so the fuzzer gets past the header
/// checks and exercises the data path.
fn dzt_with(nsamp: u16, bits: u16, nchan: u16, rh_data: u16, tail: &[u8]) -> Vec<u8> {
    let mut b = vec![0u8; 1024];
    b[2..4].copy_from_slice(&rh_data.to_le_bytes());
    b[4..6].copy_from_slice(&nsamp.to_le_bytes());
    b[6..8].copy_from_slice(&bits.to_le_bytes());
    b[26..30].copy_from_slice(&10.0f32.to_le_bytes());
    b[52..54].copy_from_slice(&nchan.to_le_bytes());
    b.extend_from_slice(tail);
    b
}

proptest! {
    #![proptest_config(cfg())]

    #[test]
    fn dzt_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
        let _ = dzt::parse_dzt(Path::new("f.dzt"), &bytes, 0);
    }

    #[test]
    fn dzt_structured_never_panics(
        nsamp in 0u16..600, bits in prop_oneof![Just(8u16), Just(16), Just(32), any::<u16>()],
        nchan in 0u16..20, rh_data in any::<u16>(), chan in 0usize..4,
        tail in proptest::collection::vec(any::<u8>(), 0..6000),
    ) {
        let b = dzt_with(nsamp, bits, nchan, rh_data, &tail);
        if let Ok(l) = dzt::parse_dzt(Path::new("f.dzt"), &b, chan) {
            prop_assert_eq!(l.data.dim(), (l.n_samples, l.n_traces));
            prop_assert_eq!(l.positions_m.len(), l.n_traces);
        }
    }

    #[test]
    fn dt1_never_panics(
        hd in "[ -~\n]{0,400}",
        bytes in proptest::collection::vec(any::<u8>(), 0..3000),
        npts in 0u32..3000,
    ) {
        let _ = dt1::parse_dt1(Path::new("f.DT1"), Path::new("f.HD"), &hd, &bytes);
        let hd2 = format!("1234\nx\ny\nNUMBER OF PTS/TRC  = {npts}\nTOTAL TIME WINDOW  = 50\nPOSITION UNITS = ft\n{hd}");
        if let Ok(l) = dt1::parse_dt1(Path::new("f.DT1"), Path::new("f.HD"), &hd2, &bytes) {
            prop_assert_eq!(l.data.dim(), (l.n_samples, l.n_traces));
        }
    }

    #[test]
    fn mala_never_panics(
        rad in "[ -~\n]{0,300}",
        bytes in proptest::collection::vec(any::<u8>(), 0..2000),
        ns in 0u32..100, bits in prop_oneof![Just(16u32), Just(32)],
    ) {
        let _ = mala::parse_mala(Path::new("f.rd3"), Path::new("f.rad"), &rad, &bytes, bits);
        let rad2 = format!("SAMPLES:{ns}\nFREQUENCY:1000\n{rad}");
        let _ = mala::parse_mala(Path::new("f.rd3"), Path::new("f.rad"), &rad2, &bytes, bits);
    }

    #[test]
    fn segy_never_panics(
        bytes in proptest::collection::vec(any::<u8>(), 0..5000),
        code in any::<u16>(), ns in any::<u16>(), dt in any::<u16>(), rev in any::<u8>(),
        next in any::<i16>(),
    ) {
        let _ = segy::parse_segy(Path::new("f.sgy"), &bytes, segy::SegyOptions::default());
        let mut b = vec![0u8; 3600];
        b[3216..3218].copy_from_slice(&dt.to_be_bytes());
        b[3220..3222].copy_from_slice(&ns.to_be_bytes());
        b[3224..3226].copy_from_slice(&code.to_be_bytes());
        b[3500] = rev;
        b[3504..3506].copy_from_slice(&next.to_be_bytes());
        b.extend_from_slice(&bytes);
        let _ = segy::parse_segy(Path::new("f.sgy"), &b, segy::SegyOptions::default());
    }

    #[test]
    fn side_files_never_panic(text in "[ -~\n\t]{0,600}", nmea in "(\\$G[PN]GGA,[0-9.,NSEWM]{0,60}\n|\\$GSSIS,[0-9]{0,5},1\n){0,8}") {
        let _ = sidefiles::parse_topography(Path::new("t.txt"), &text);
        let _ = sidefiles::parse_gps(Path::new("t.gps"), &text);
        let _ = sidefiles::parse_gps(Path::new("t.dzg"), &nmea);
    }
}

/// Random byte flips and truncations of a real file.
fn mutate(original: &[u8], flips: &[(usize, u8)], keep: usize) -> Vec<u8> {
    let mut b = original.to_vec();
    for (at, v) in flips {
        if !b.is_empty() {
            let i = at % b.len();
            b[i] = *v;
        }
    }
    b.truncate(keep.min(b.len()));
    b
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Mutations of the real DZT, mostly in the header (where they matter).
    #[test]
    fn real_dzt_mutations_never_panic(
        flips in proptest::collection::vec((0usize..1200, any::<u8>()), 1..12),
        keep in 0usize..1_100_000,
    ) {
        let Some(p) = crate::field_data::data("gpr/gprpy/GSSI_FILE____032.DZT") else { return Ok(()); };
        let original = std::fs::read(p).unwrap();
        let b = mutate(&original, &flips, keep);
        let _ = dzt::parse_dzt(Path::new("m.dzt"), &b, 0);
    }

    /// Mutations of the real WARR DT1 and its HD text.
    #[test]
    fn real_dt1_mutations_never_panic(
        flips in proptest::collection::vec((0usize..700_000, any::<u8>()), 1..12),
        hd_flips in proptest::collection::vec((0usize..800, 32u8..127), 0..6),
        keep in 0usize..700_000,
    ) {
        let Some(p) = crate::field_data::data("gpr/gprpy/SnS_WARR_XLINE00.DT1") else { return Ok(()); };
        let original = std::fs::read(&p).unwrap();
        let hd = std::fs::read(p.with_extension("HD")).unwrap();
        let b = mutate(&original, &flips, keep);
        let hd = mutate(&hd, &hd_flips, usize::MAX);
        let hd = String::from_utf8_lossy(&hd);
        let _ = dt1::parse_dt1(Path::new("m.DT1"), Path::new("m.HD"), &hd, &b);
    }

    /// Mutations of the real topography table.
    #[test]
    fn real_topography_mutations_never_panic(
        flips in proptest::collection::vec((0usize..1000, any::<u8>()), 1..8),
        keep in 0usize..1000,
    ) {
        let Some(p) = crate::field_data::data("gpr/gprpy/GSSI_FILE____032.txt") else { return Ok(()); };
        let original = std::fs::read(p).unwrap();
        let b = mutate(&original, &flips, keep);
        let _ = sidefiles::parse_topography(Path::new("m.txt"), &String::from_utf8_lossy(&b));
    }
}

/// The summary of the real files: format, counts and the claims made.
#[test]
fn read_summary_claims_radar_files_only() {
    let dzt = crate::require_data!("gpr/gprpy/GSSI_FILE____032.DZT");
    let s = read_summary(&dzt).unwrap().unwrap();
    assert_eq!(s["format"], "gssi_dzt");
    assert_eq!(s["n_traces"], 1040);
    assert_eq!(s["format_guessed"], false);
    let topo = crate::require_data!("gpr/gprpy/GSSI_FILE____032.txt");
    let t = read_summary(&topo).unwrap().unwrap();
    assert_eq!(t["n_points"], 39);
    assert_eq!(t["format_guessed"], true);
    let gps = crate::require_data!("gpr/gprpy/SnS_ComOffs_GPS.xyz");
    let g = read_summary(&gps).unwrap().unwrap();
    assert_eq!(g["n_points"], 103);
    assert_eq!(g["has_coordinates"], true);
    let hd = crate::require_data!("gpr/gprpy/SnS_WARR_XLINE00.HD");
    assert_eq!(read_summary(&hd).unwrap().unwrap()["n_traces"], 164);
    assert!(read_summary(Path::new("survey.edi")).is_none());
    assert!(read_summary(Path::new("/nonexistent/notes.txt")).is_none());
}

fn small_line(ns: usize, ntr: usize, seed: u64) -> GprLine {
    let data = ndarray::Array2::from_shape_fn((ns, ntr), |(i, j)| {
        let h = (i as u64 * 31 + j as u64 * 17 + seed).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        ((h >> 40) as f64 / (1u64 << 24) as f64) - 0.5 + ricker(i as f64 * 0.1 - 3.0, 0.4)
    });
    GprLine {
        file: "fuzz.dzt".into(),
        format: GprFormat::GssiDzt,
        format_guessed: false,
        data,
        n_samples: ns,
        n_traces: ntr,
        sample_interval_ns: 0.1,
        time_window_ns: ns as f64 * 0.1,
        time_zero_sample: 0.0,
        positions_m: (0..ntr).map(|j| j as f64 * 0.05).collect(),
        positions_guessed: false,
        antenna: None,
        antenna_frequency_mhz: Some(400.0),
        antenna_separation_m: Some(0.1),
        header_permittivity: Some(6.0),
        header_samples: 2,
        marks: vec![],
        survey_kind: SurveyKind::CommonOffset,
        survey_kind_guessed: true,
        header: serde_json::Value::Null,
        notes: vec![],
    }
}

fn step<T>(v: Option<T>, off: bool) -> process::Step<T> {
    match (v, off) {
        (_, true) => process::Step::Off,
        (Some(v), false) => process::Step::Set(v),
        (None, false) => process::Step::Default,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Processing parameters are user data too (they come from a JSON config): any values
    /// give Ok or Err, never a panic.
    #[test]
    fn processing_never_panics(
        ns in 2usize..80, ntr in 1usize..40, seed in any::<u64>(),
        dewow in proptest::option::of(0usize..200), dewow_off in any::<bool>(),
        agc in proptest::option::of(0usize..200), agc_off in any::<bool>(),
        tpow in proptest::option::of(-2.0f64..20.0),
        bp in proptest::option::of((-100.0f64..3000.0, -100.0f64..6000.0, 0usize..10)),
        bg in proptest::option::of(0usize..60), bg_off in any::<bool>(),
        tz in proptest::option::of(-5.0f64..100.0), tz_thr in proptest::option::of(-0.5f64..1.5),
        v in proptest::option::of(-0.5f64..0.5), migrate in any::<bool>(),
        topo in proptest::option::of(proptest::collection::vec((-10.0f64..10.0, -1e3f64..1e3), 0..6)),
    ) {
        let line = small_line(ns, ntr, seed);
        let time_zero = match (tz, tz_thr) {
            (Some(s), _) => process::Step::Set(process::TimeZeroMethod::Sample(s)),
            (None, Some(t)) => process::Step::Set(process::TimeZeroMethod::FirstBreak(
                timezero::TimeZeroParams { threshold_fraction: t, ..Default::default() })),
            _ => process::Step::Default,
        };
        let topography = topo.map(|pts| {
            let mut pts = pts;
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            pts.dedup_by(|a, b| a.0 == b.0);
            sidefiles::Topography {
                file: "t.txt".into(),
                distance_m: pts.iter().map(|p| p.0).collect(),
                elevation_m: pts.iter().map(|p| p.1).collect(),
                local_xy_m: None, trace_index: None, notes: vec![],
            }
        });
        let params = process::ProcessingParams {
            time_zero,
            dewow_window_samples: step(dewow, dewow_off),
            bandpass: step(bp.map(|(l, h, o)| bandpass::BandpassParams { low_mhz: l, high_mhz: h, order: o }), false),
            background: step(bg.map(|t| filters::BackgroundWindow::Running { traces: t }), bg_off),
            tpow_power: step(tpow, false),
            agc_window_samples: step(agc, agc_off),
            migrate,
        };
        let v = v.map(|v| velocity::VelocitySource::Request { velocity_m_per_ns: v });
        if let Ok(p) = process::process_line(&line, &params, v.as_ref(), topography.as_ref()) {
            prop_assert_eq!(p.data.dim(), (p.n_samples, p.n_traces));
            prop_assert_eq!(p.vertical_axis().len(), p.n_samples);
        }
    }
}
