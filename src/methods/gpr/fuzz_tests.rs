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
