//! Property tests of the hydrological-model readers (issue 26, item 1), in the pattern of
//! `reader_proptests.rs`: arbitrary bytes, a cut at any byte and bit flips of every file of
//! `tests/data/hydro` (flopy's and ParFlow's public examples) and of files generated here
//! never panic; a refusal is a typed [`HydroError`] naming the file and, for anything but an
//! I/O failure, a byte offset inside the file; and a generated file with no damage reads back
//! its values exactly. The number of cases is `PROPTEST_CASES` (32 here otherwise).

use std::path::{Path, PathBuf};

use hydrogeo_studio::catalog::read_summary;
use hydrogeo_studio::methods::hydro::layered::{Encoding, RecordLayout, write_layered};
use hydrogeo_studio::methods::hydro::{HydroError, MaskOptions, Precision, grb, heads, pfb, ucn};
use ndarray::Array3;
use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(32)
}

const FILES: &[&str] = &[
    "freyberg_mf2005.hds",
    "crnknic_nwt.hds",
    "testsfr2_double.hds",
    "freyberg_mf6.hds",
    "tri_model_mf6.hds",
    "ex3_mfusg.ddn",
    "p07_mt3dms.ucn",
    "gwt_mst03_mf6.ucn",
    "freyberg_mf6.dis.grb",
    "tri_model_mf6.disv.grb",
    "default_single.out.press.00000.pfb",
    "clm_slope.out.satur.00001.pfb",
];

fn originals() -> Vec<(PathBuf, Vec<u8>)> {
    FILES
        .iter()
        .map(|n| {
            let p = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/data/hydro")
                .join(n);
            let b = std::fs::read(&p).unwrap();
            (p, b)
        })
        .collect()
}

/// Every parser on `bytes` under the name `name`: `Err` describes a refusal that is not
/// typed as it should be (a panic fails the test by itself).
fn parse_all(name: &str, bytes: &[u8]) -> Result<(), String> {
    let path = Path::new(name);
    let opts = MaskOptions::default();
    let check = |r: Result<(), HydroError>| -> Result<(), String> {
        match r {
            Ok(()) => Ok(()),
            Err(e) => {
                let offset_ok = e.offset().is_some_and(|o| o <= bytes.len());
                let text = e.to_string();
                if e.file() == path
                    && offset_ok
                    && text.starts_with(name)
                    && text.len() > name.len() + 10
                {
                    Ok(())
                } else {
                    Err(format!("untyped or unplaced refusal: {e:?}"))
                }
            }
        }
    };
    check(heads::parse_heads(path, bytes, &opts).map(|_| ()))?;
    check(ucn::parse_ucn(path, bytes, &opts).map(|_| ()))?;
    check(grb::parse_grb(path, bytes).map(|_| ()))?;
    check(pfb::parse_pfb(path, bytes).map(|_| ()))?;
    Ok(())
}

/// Through the `read` command's path, under the original's name in a fresh folder.
fn read_variant(original: &Path, bytes: &[u8]) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    let name = original.file_name().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    match read_summary(&path) {
        Ok(v) => {
            if v["method"] == "hydro" {
                Ok(())
            } else {
                Err(format!("{}: read by {}", original.display(), v["method"]))
            }
        }
        Err(e) => {
            let e = format!("{e:#}");
            let name = name.to_string_lossy();
            if e.contains(name.as_ref()) && e.contains("at byte") {
                Ok(())
            } else {
                Err(format!(
                    "{}: refusal without file or offset: {e}",
                    original.display()
                ))
            }
        }
    }
}

fn enc(layout: bool, double: bool, big_endian: bool) -> Encoding {
    Encoding {
        layout: if layout {
            RecordLayout::Mt3d
        } else {
            RecordLayout::Modflow
        },
        precision: if double {
            Precision::Double
        } else {
            Precision::Single
        },
        big_endian,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn arbitrary_bytes_are_refused_typed_or_read(bytes in prop::collection::vec(any::<u8>(), 0..3000)) {
        let r = parse_all("any.bin", &bytes);
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
    }

    #[test]
    fn a_cut_at_any_byte_of_every_example(at in any::<prop::sample::Index>()) {
        for (path, bytes) in originals() {
            let cut = at.index(bytes.len() + 1);
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let r = parse_all(&name, &bytes[..cut]).and_then(|_| read_variant(&path, &bytes[..cut]));
            prop_assert!(r.is_ok(), "cut at {cut}: {}", r.unwrap_err());
        }
    }

    #[test]
    fn bit_flips_in_every_example(flips in prop::collection::vec((any::<prop::sample::Index>(), 0u8..8), 1..24)) {
        for (path, bytes) in originals() {
            let mut b = bytes.clone();
            for (i, bit) in &flips {
                let k = i.index(b.len());
                b[k] ^= 1 << bit;
            }
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let r = parse_all(&name, &b).and_then(|_| read_variant(&path, &b));
            prop_assert!(r.is_ok(), "{}", r.unwrap_err());
        }
    }

    /// Generated heads / UCN files of any shape and encoding read back exactly, and their
    /// damaged copies are refused typed.
    #[test]
    fn generated_layered_files_round_trip_and_damage_is_typed(
        nrow in 1usize..5, ncol in 1usize..6, nlay in 1i32..4, ntimes in 1usize..4,
        mt3d in any::<bool>(), double in any::<bool>(), be in any::<bool>(),
        seed in any::<u32>(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6),
    ) {
        let e = enc(mt3d, double, be);
        let mut recs = Vec::new();
        for t in 0..ntimes {
            for k in 1..=nlay {
                let vals: Vec<f64> = (0..nrow * ncol)
                    .map(|c| ((seed as usize + 7 * c + 13 * t) % 997) as f64 * 0.5 - 100.0)
                    .collect();
                recs.push((t as i32 + 1, t as i32 + 1, 1, 1.0 + t as f64, 2.0 * (t as f64 + 1.0), "HEAD", k, vals));
            }
        }
        let bytes = write_layered(e, nrow, ncol, &recs);
        let out = heads::parse_heads(Path::new("g.hds"), &bytes, &MaskOptions::default()).unwrap();
        prop_assert_eq!(out.records.len(), ntimes);
        prop_assert_eq!((out.nlay, out.nrow, out.ncol), (nlay as usize, nrow, ncol));
        prop_assert_eq!((out.precision, out.big_endian), (e.precision, be));
        for (t, r) in out.records.iter().enumerate() {
            for k in 0..nlay as usize {
                let want = &recs[t * nlay as usize + k].7;
                let got: Vec<f64> = r.values.index_axis(ndarray::Axis(0), k).iter().copied().collect();
                prop_assert_eq!(&got, want);
            }
        }
        let mut b = bytes.clone();
        for (i, v) in &flips {
            let k = i.index(b.len());
            b[k] = *v;
        }
        let r = parse_all("g.hds", &b);
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
    }

    /// Generated `.pfb` files of any shape and process split put together exactly; damaged
    /// copies are refused typed.
    #[test]
    fn generated_pfb_files_round_trip_and_damage_is_typed(
        nx in 1usize..7, ny in 1usize..6, nz in 1usize..5,
        p in 1usize..4, q in 1usize..3, r in 1usize..3,
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6),
    ) {
        let (p, q, r) = (p.min(nx), q.min(ny), r.min(nz));
        let v = Array3::from_shape_fn((nz, ny, nx), |(k, j, i)| (k * 100 + j * 10 + i) as f64 + 0.125);
        let bytes = pfb::write_pfb([1.0, 2.0, 3.0], [0.5, 0.5, 0.25], &v, (p, q, r));
        let got = pfb::parse_pfb(Path::new("g.pfb"), &bytes).unwrap();
        prop_assert_eq!(got.subgrids.len(), p * q * r);
        prop_assert_eq!(&got.values, &v);
        let mut b = bytes.clone();
        for (i, x) in &flips {
            let k = i.index(b.len());
            b[k] = *x;
        }
        let res = parse_all("g.pfb", &b);
        prop_assert!(res.is_ok(), "{}", res.unwrap_err());
    }
}
