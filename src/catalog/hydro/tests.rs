//! The hydrological-model tools' pieces on the example's synthetic ParFlow output (written
//! from the truth, so every expected number is the truth's own: water table 4 m below a
//! surface at 102 − 0.02·x m, φ 0.35, S 0.45 above the water table).

use std::path::PathBuf;

use super::model::{WaterTableSource, load};
use super::settings::HydroSettings;
use crate::example::{Truth, hydro};

fn written(truth: &Truth) -> (tempfile::TempDir, Vec<PathBuf>) {
    let dir = tempfile::tempdir().expect("dir");
    let files = hydro::write(truth, dir.path())
        .expect("written")
        .into_iter()
        .map(|f| dir.path().join(f))
        .collect();
    (dir, files)
}

fn settings() -> HydroSettings {
    HydroSettings {
        line_origin: Some([0.0, 0.0]),
        ..HydroSettings::default()
    }
}

#[test]
fn the_models_water_table_and_water_content_are_the_truths_along_the_line() {
    let truth = Truth::default();
    let (_d, files) = written(&truth);
    let m = load(&files, None, &settings(), None).expect("loads");
    assert_eq!(m.water_table_source(), Some(WaterTableSource::Pressure));
    assert!(m.has_water_content());
    for x in [1.0, 21.0, 47.0, 93.0] {
        // Hydrostatic ψ is linear in z, so the ψ = 0 crossing is exact (1e-9 m).
        let want = truth.surface_z(x) - truth.water_table_depth_m;
        let got = m.water_table_z(x).expect("a water table");
        assert!((got - want).abs() < 1e-9, "x {x}: {got} vs {want}");
        let above = m.water_content(x, want + 1.0).expect("θ above");
        assert!((above - 0.35 * 0.45).abs() < 1e-12, "{above}");
        let below = m.water_content(x, want - 1.0).expect("θ below");
        assert!((below - 0.35).abs() < 1e-12, "{below}");
    }
    // Beyond the grid's 136 m the model says nothing rather than a number.
    assert_eq!(m.water_table_z(137.0), None);
    assert_eq!(m.water_content(50.0, 39.0), None);
}

#[test]
fn a_line_placed_beside_the_grid_finds_no_water_table() {
    let (_d, files) = written(&Truth::default());
    let s = HydroSettings {
        line_origin: Some([0.0, 20.0]),
        ..HydroSettings::default()
    };
    let m = load(&files, None, &s, None).expect("loads");
    assert_eq!(m.water_table_z(10.0), None);
}

#[test]
fn bad_settings_and_files_are_refused_naming_them() {
    let bad = HydroSettings {
        porosity: Some(1.5),
        ..HydroSettings::default()
    };
    let e = bad.validate().expect_err("porosity above one");
    assert!(e.to_string().contains("hydro_params.porosity"), "{e}");
    let bad = HydroSettings {
        chi2_ratio_max: 0.5,
        ..HydroSettings::default()
    };
    assert!(bad.validate().is_err());
    let bad = HydroSettings {
        model_error_fraction: -0.01,
        ..HydroSettings::default()
    };
    let e = bad.validate().expect_err("a negative model error");
    assert!(e.to_string().contains("model_error_fraction"), "{e}");

    let (d, files) = written(&Truth::default());
    // Only the porosity file: nothing a water table or water content comes from.
    let e = load(&files[2..], None, &settings(), None).expect_err("porosity alone");
    assert!(e.to_string().contains("none of the files holds"), "{e}");
    // A MODFLOW heads file needs its grid file.
    let heads = d.path().join("model.hds");
    std::fs::write(&heads, [0u8; 8]).expect("write");
    assert!(load(&[heads], None, &settings(), None).is_err());
}
