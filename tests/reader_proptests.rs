//! Property tests at depth, one real file per reader family (issue 19's fuzz acceptance):
//! a cut at any byte and any set of bit flips of a real file of `../shared/data`, read
//! through `catalog::read_summary`, never panics, and a refusal names the file and a cause.
//! The number of cases is `PROPTEST_CASES` (CI bounds it in `.ci/run`; 32 here otherwise).

#[macro_use]
#[path = "support/field_data.rs"]
mod field_data;

use std::path::{Path, PathBuf};

use hydrogeo_studio::catalog::read_summary;
use proptest::prelude::*;

/// One file per family: ERT, TDEM, MT, gravity/magnetics, seismic, GPR.
const FAMILIES: &[&str] = &[
    "ert/resipy/dc-2d_syscal.csv",
    "tdem/TEMfastLangeoog.tem",
    "mt/tf_zmm.zmm",
    "gravmag/phgx/bushveld_gravity_disturbance.csv",
    "seismic/gimli_koenigsee.sgt",
    "gpr/gprpy/GSSI_FILE____032.DZT",
];

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(32)
}

/// The originals present (each absent one is reported by the field-data helper).
fn originals() -> Vec<(PathBuf, Vec<u8>)> {
    FAMILIES
        .iter()
        .filter_map(|rel| field_data::data(rel))
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect()
}

/// Write `bytes` under the original's name in a fresh folder and read it: `Err` describes a
/// refusal that does not name the file (a panic fails the test by itself).
fn read_variant(original: &Path, bytes: &[u8]) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    let name = original.file_name().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    match read_summary(&path) {
        Ok(_) => Ok(()),
        Err(e) => {
            let e = format!("{e:#}");
            let name = name.to_string_lossy();
            let cause = e.split_once(name.as_ref()).map(|(_, r)| r.trim().len() > 2);
            if cause == Some(true) {
                Ok(())
            } else {
                Err(format!(
                    "{}: refusal without file or cause: {e}",
                    original.display()
                ))
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn a_cut_at_any_byte(at in any::<prop::sample::Index>()) {
        for (path, bytes) in originals() {
            let cut = at.index(bytes.len() + 1);
            let r = read_variant(&path, &bytes[..cut]);
            prop_assert!(r.is_ok(), "{}", r.unwrap_err());
        }
    }

    #[test]
    fn any_bit_flips(flips in prop::collection::vec((any::<prop::sample::Index>(), 0u8..8), 1..24)) {
        for (path, bytes) in originals() {
            let mut b = bytes.clone();
            for (i, bit) in &flips {
                let k = i.index(b.len());
                b[k] ^= 1 << bit;
            }
            let r = read_variant(&path, &b);
            prop_assert!(r.is_ok(), "{}", r.unwrap_err());
        }
    }
}
