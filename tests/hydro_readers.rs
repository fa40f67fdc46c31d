//! Issue 26, item 1: the hydrological-model readers against the reference readers, and on
//! small files written here for the cases the public examples do not hold.
//!
//! Oracles: `tests/oracles/hydro/<file>.json`, made by `tests/oracles/hydro/make_oracles.py`
//! with flopy 3.11.0 (`flopy.utils.HeadFile`, `HeadFile(..., precision='double')`,
//! `UcnFile`, `flopy.mf6.utils.MfGrdFile`) and pftools 1.3.15 (`parflow.tools.io.read_pfb`,
//! `ParflowBinaryReader`). Data: `tests/data/hydro/`, copied unchanged from the public
//! example data of flopy (github.com/modflowpy/flopy, `examples/data/`, commit e626aca7,
//! CC0 / USGS public domain) and ParFlow (github.com/parflow/parflow, `test/correct_output/`,
//! commit acbc2e75, LGPL-2.1); `tests/data/hydro/PROVENANCE.md` gives each file's path.
//!
//! Tolerance: shape, record counts, step numbers and names exactly; times and cell values
//! exactly (`==` on f64: a single-precision real widened to f64 is exact in both readers, a
//! double is read as is); the sum of the active values of the last time to 1e-12 relative
//! (the summation order differs from numpy's pairwise sum).

use std::path::{Path, PathBuf};

use hydrogeo_studio::catalog::read_summary;
use hydrogeo_studio::methods::hydro::layered::{Encoding, RecordLayout, write_layered};
use hydrogeo_studio::methods::hydro::{
    self, GridShape, GridType, HydroError, HydroFormat, LayerOrder, MaskOptions, ModelOutput,
    Precision, grb, heads, pfb, ucn,
};
use ndarray::Array3;
use serde_json::Value;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/hydro")
        .join(name)
}

fn oracle(name: &str) -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/oracles/hydro")
        .join(format!("{name}.json"));
    serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

fn u(v: &Value) -> usize {
    v.as_u64().unwrap() as usize
}

fn rel_close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs().max(1e-300)
}

/// The record and cell checks shared by heads, UCN and ParFlow outputs.
fn check_cells(out: &ModelOutput, o: &Value) {
    for c in o["cells"].as_array().unwrap() {
        let t = u(&c["time_index"]);
        let idx = [u(&c["layer"]), u(&c["row"]), u(&c["col"])];
        let rec = &out.records[t];
        assert_eq!(
            rec.values[idx],
            f(&c["value"]),
            "{}: {} at time {t}, cell {idx:?}",
            o["file"],
            c["name"]
        );
        assert!(rec.active[idx], "{}: {} masked", o["file"], c["name"]);
    }
    let last = out.records.last().unwrap();
    let (sum, n) = last
        .values
        .iter()
        .zip(last.active.iter())
        .filter(|(_, a)| **a)
        .fold((0.0, 0usize), |(s, n), (v, _)| (s + v, n + 1));
    assert_eq!(n, u(&o["last_time_active_count"]), "{}", o["file"]);
    assert!(
        rel_close(sum, f(&o["last_time_active_sum"]), 1e-12),
        "{}: active sum {sum} against {}",
        o["file"],
        o["last_time_active_sum"]
    );
    assert_eq!(
        out.mask_counts.total(),
        u(&o["masked_total"]),
        "{}",
        o["file"]
    );
}

/// A heads / drawdown / concentration file against flopy's reading of it.
fn check_layered(name: &str, out: &ModelOutput) {
    let o = oracle(name);
    let precision = match o["precision"].as_str().unwrap() {
        "single" => Precision::Single,
        _ => Precision::Double,
    };
    assert_eq!(out.precision, precision, "{name}");
    let shape: Vec<usize> = o["shape"].as_array().unwrap().iter().map(u).collect();
    assert_eq!(vec![out.nlay, out.nrow, out.ncol], shape, "{name}");
    assert_eq!(out.layer_order, LayerOrder::TopFirst);
    assert_eq!(out.n_layer_records, u(&o["n_layer_records"]), "{name}");
    let times: Vec<Vec<f64>> = out
        .records
        .iter()
        .map(|r| {
            let mut t = Vec::new();
            if let Some(n) = r.ntrans {
                t.push(n as f64);
            }
            t.extend([
                r.kstp.unwrap() as f64,
                r.kper.unwrap() as f64,
                r.totim.unwrap(),
            ]);
            t
        })
        .collect();
    let want: Vec<Vec<f64>> = o["times"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_array().unwrap().iter().map(f).collect())
        .collect();
    assert_eq!(
        times, want,
        "{name}: ([ntrans,] kstp, kper, totim) per time"
    );
    assert_eq!(out.records[0].quantity, o["text"].as_str().unwrap());
    if let Some(p) = o["first_record"].get("pertim") {
        assert_eq!(out.records[0].pertim, Some(f(p)), "{name}: PERTIM");
    }
    check_cells(out, &o);
    // The `read` command recognises it and says the same.
    let s = read_summary(&data(name)).unwrap();
    assert_eq!(s["method"], "hydro");
    assert_eq!(s["precision"], o["precision"]);
    assert_eq!(s["n_times"], want.len());
    assert_eq!(s["n_layer_records"], o["n_layer_records"]);
}

/// MODFLOW-2005 single precision: flopy `examples/data/freyberg/freyberg.githds` (1 layer,
/// 40 × 20; the model's HNOFLO is 999, passed as the caller's `hnoflo`: 95 inactive cells).
#[test]
fn modflow_2005_single_freyberg_equals_flopy() {
    let path = data("freyberg_mf2005.hds");
    let opts = MaskOptions {
        hnoflo: Some(999.0),
        ..MaskOptions::default()
    };
    let out = heads::read_heads(&path, &opts).unwrap();
    assert_eq!(out.format, HydroFormat::ModflowBinary);
    assert_eq!(out.mask_counts.hnoflo, 95);
    check_layered("freyberg_mf2005.hds", &out);
    // Without the model's HNOFLO, 999 is an ordinary value (and the summary's maximum).
    let plain = heads::read_heads(&path, &MaskOptions::default()).unwrap();
    assert_eq!(plain.mask_counts.total(), 0);
    assert_eq!(plain.active_range().unwrap().1, 999.0);
}

/// MODFLOW-2000/2005 single precision, 5 layers × 12 times: flopy `examples/data/mp6/EXAMPLE.HED`.
#[test]
fn modflow_single_multilayer_transient_equals_flopy() {
    let out = heads::read_heads(&data("mp6_example.hed"), &MaskOptions::default()).unwrap();
    assert_eq!(out.records.len(), 12);
    check_layered("mp6_example.hed", &out);
}

/// MODFLOW-NWT single precision, 3 × 650, 3 times: flopy
/// `examples/data/mt3d_test/mfnwt_mt3dusgs/sft_crnkNic/CrnkNic.hds`.
#[test]
fn modflow_nwt_single_equals_flopy() {
    let out = heads::read_heads(&data("crnknic_nwt.hds"), &MaskOptions::default()).unwrap();
    check_layered("crnknic_nwt.hds", &out);
}

/// MODFLOW-2005 double precision, 7 × 100, 12 times: flopy
/// `examples/data/preserve_unitnums/testsfr2.hds` (`HeadFile(precision='double')`).
#[test]
fn modflow_2005_double_equals_flopy() {
    let out = heads::read_heads(&data("testsfr2_double.hds"), &MaskOptions::default()).unwrap();
    assert_eq!(out.precision, Precision::Double);
    check_layered("testsfr2_double.hds", &out);
}

/// MODFLOW 6 heads (double) with its DIS grid: flopy `examples/data/mf6-freyberg/freyberg.hds`
/// and `freyberg.dis.grb`. The 95 inactive cells hold 1e30 in the heads and IDOMAIN 0 in the
/// grid: the same cells.
#[test]
fn modflow6_dis_heads_and_grid_equal_flopy() {
    let out = heads::read_heads(&data("freyberg_mf6.hds"), &MaskOptions::default()).unwrap();
    assert_eq!(out.mask_counts.inactive_1e30, 95);
    check_layered("freyberg_mf6.hds", &out);
    let g = check_grb("freyberg_mf6.dis.grb");
    let idomain = g.idomain.as_ref().unwrap();
    let masked: Vec<bool> = out.records[0].active.iter().map(|a| !a).collect();
    let inactive: Vec<bool> = idomain.iter().map(|d| *d <= 0).collect();
    assert_eq!(masked, inactive, "1e30 exactly where IDOMAIN is 0");
}

/// MODFLOW 6 heads on a DISV grid (4 layers × 200 cells, NROW 1): flopy
/// `examples/data/mf6/test003_gwftri_disv/tri_model.hds` and `tri_model.disv.grb`.
#[test]
fn modflow6_disv_heads_and_grid_equal_flopy() {
    let out = heads::read_heads(&data("tri_model_mf6.hds"), &MaskOptions::default()).unwrap();
    assert_eq!((out.nrow, out.ncol), (1, 200));
    check_layered("tri_model_mf6.hds", &out);
    let g = check_grb("tri_model_mf6.disv.grb");
    assert_eq!(g.nlay, Some(out.nlay));
    let GridShape::Disv { ncpl, .. } = g.shape else {
        panic!("not DISV")
    };
    assert_eq!(ncpl, out.ncol);
}

/// Drawdown, single precision, 2 layers of 100 × 100 (MODFLOW-USG on a structured grid
/// writes MODFLOW-2005's records): flopy
/// `examples/data/mfusg_test/03_conduit_confined/output/ex3.ddn` (`HeadFile(text='drawdown')`).
#[test]
fn drawdown_equals_flopy() {
    let out = heads::read_heads(&data("ex3_mfusg.ddn"), &MaskOptions::default()).unwrap();
    assert_eq!(out.records[0].quantity, "DRAWDOWN");
    check_layered("ex3_mfusg.ddn", &out);
}

/// MT3DMS single precision, 8 layers of 15 × 21: flopy
/// `examples/data/mt3d_test/mf2005mt3d/P07/MT3D001.UCN` (`UcnFile`).
#[test]
fn mt3dms_ucn_equals_flopy() {
    let out = ucn::read_ucn(&data("p07_mt3dms.ucn"), &MaskOptions::default()).unwrap();
    assert_eq!(out.format, HydroFormat::Mt3dUcn);
    assert_eq!(out.records[0].ntrans, Some(29));
    check_layered("p07_mt3dms.ucn", &out);
}

/// A MODFLOW 6 GWT `.ucn` (MODFLOW's layout, double, 28 times of one cell): flopy
/// `examples/data/mf6/create_tests/test_transport/expected_output/gwt_mst03.ucn`
/// (`HeadFile(text='concentration', precision='double')`).
#[test]
fn modflow6_gwt_ucn_equals_flopy() {
    let out = ucn::read_ucn(&data("gwt_mst03_mf6.ucn"), &MaskOptions::default()).unwrap();
    assert_eq!(out.format, HydroFormat::ModflowBinary);
    check_layered("gwt_mst03_mf6.ucn", &out);
}

fn check_grb(name: &str) -> hydro::GrbFile {
    let o = oracle(name);
    let g = grb::read_grb(&data(name)).unwrap();
    assert_eq!(g.grid_type.name(), o["grid_type"].as_str().unwrap());
    assert_eq!(g.ncells, u(&o["ncells"]));
    assert_eq!(g.nlay, Some(u(&o["nlay"])));
    assert_eq!(g.nja, u(&o["nja"]));
    assert_eq!(
        [g.xorigin, g.yorigin, g.angrot],
        [f(&o["xorigin"]), f(&o["yorigin"]), f(&o["angrot"])]
    );
    let names: Vec<&str> = g.arrays.iter().map(|a| a.name.as_str()).collect();
    let want: Vec<&str> = o["arrays"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(names, want);
    assert_eq!(g.top[0], f(&o["top_first"]));
    assert_eq!(*g.top.last().unwrap(), f(&o["top_last"]));
    assert_eq!(g.ia[0] as usize, u(&o["ia_first"]));
    assert_eq!(*g.ia.last().unwrap() as usize, u(&o["ia_last"]));
    assert_eq!(
        g.ja.iter().map(|v| *v as i64).sum::<i64>(),
        o["ja_sum"].as_i64().unwrap()
    );
    assert_eq!(g.n_active(), u(&o["idomain_active"]));
    for c in o["cells"].as_array().unwrap() {
        assert_eq!(
            g.botm[u(&c["cell"])],
            f(&c["botm"]),
            "{name}: {}",
            c["name"]
        );
    }
    match &g.shape {
        GridShape::Dis {
            nrow,
            ncol,
            delr,
            delc,
        } => {
            assert_eq!((*nrow, *ncol), (u(&o["nrow"]), u(&o["ncol"])));
            assert_eq!(delr[0], f(&o["delr_first"]));
            assert_eq!(*delc.last().unwrap(), f(&o["delc_last"]));
        }
        GridShape::Disv {
            ncpl,
            vertices,
            cellx,
            celly,
            javert,
            ..
        } => {
            assert_eq!(*ncpl, u(&o["ncpl"]));
            assert_eq!(vertices.len(), u(&o["nvert"]));
            assert_eq!(javert.len(), u(&o["njavert"]));
            let v = |k: &str| [f(&o[k][0]), f(&o[k][1])];
            assert_eq!(vertices[0], v("vertex_first"));
            assert_eq!(*vertices.last().unwrap(), v("vertex_last"));
            assert_eq!(cellx[ncpl / 2], f(&o["cellx_middle"]));
            assert_eq!(celly[ncpl / 2], f(&o["celly_middle"]));
            assert_eq!(
                javert.iter().map(|v| *v as i64).sum::<i64>(),
                o["javert_sum"].as_i64().unwrap()
            );
        }
        GridShape::Disu => panic!("{name}: DISU"),
    }
    let s = read_summary(&data(name)).unwrap();
    assert_eq!(s["format"], "mf6_grb");
    assert_eq!(s["grid"]["type"], o["grid_type"]);
    g
}

fn check_pfb(name: &str, quantity: &str, index: u32) {
    let o = oracle(name);
    let p = pfb::read_pfb(&data(name)).unwrap();
    let shape: Vec<usize> = o["shape"].as_array().unwrap().iter().map(u).collect();
    let (nz, ny, nx) = p.values.dim();
    assert_eq!(vec![nz, ny, nx], shape, "{name}: (nz, ny, nx)");
    assert_eq!(p.subgrids.len(), u(&o["n_subgrids"]));
    let three = |k: &str| [f(&o[k][0]), f(&o[k][1]), f(&o[k][2])];
    assert_eq!(p.origin, three("origin"));
    assert_eq!(p.spacing, three("spacing"));
    let out = p.into_output(&MaskOptions::default());
    assert_eq!(out.layer_order, LayerOrder::BottomFirst);
    assert_eq!(out.records[0].quantity, quantity);
    assert_eq!(out.records[0].output_index, Some(index));
    check_cells(&out, &o);
    let s = read_summary(&data(name)).unwrap();
    assert_eq!(s["format"], "parflow_pfb");
    assert_eq!(s["grid"]["nlay"], nz);
}

/// ParFlow pressure written by a 2 × 2 × 2-process run (8 subgrids of 9|9 × 8|7 × 4): ParFlow
/// `test/correct_output/default_single.out.press.00000.pfb`, against pftools' `read_pfb`.
#[test]
fn parflow_pressure_with_eight_subgrids_equals_pftools() {
    check_pfb("default_single.out.press.00000.pfb", "press", 0);
}

/// ParFlow saturation of a 2-subgrid run (5 × 5 × 10): ParFlow
/// `test/correct_output/clm_output/clm_slope.out.satur.00001.pfb`, against pftools.
#[test]
fn parflow_saturation_with_two_subgrids_equals_pftools() {
    check_pfb("clm_slope.out.satur.00001.pfb", "satur", 1);
}

// ---- Files written here --------------------------------------------------------------------

fn enc(layout: RecordLayout, precision: Precision, big_endian: bool) -> Encoding {
    Encoding {
        layout,
        precision,
        big_endian,
    }
}

type Rec = (i32, i32, i32, f64, f64, &'static str, i32, Vec<f64>);

/// Two times of a 2-layer, 3 × 4 model; values exact in single precision.
fn two_times() -> Vec<Rec> {
    let layer = |base: f64| (0..12).map(|i| base + 0.25 * i as f64).collect::<Vec<_>>();
    vec![
        (1, 1, 1, 10.0, 10.0, "HEAD", 1, layer(100.0)),
        (1, 1, 1, 10.0, 10.0, "HEAD", 2, layer(90.0)),
        (2, 5, 2, 2.5, 12.5, "HEAD", 1, layer(99.0)),
        (2, 5, 2, 2.5, 12.5, "HEAD", 2, layer(89.0)),
    ]
}

#[test]
fn single_and_double_precision_and_both_byte_orders_are_told_apart_and_read_alike() {
    let dir = tempfile::tempdir().unwrap();
    let mut seen = Vec::new();
    for (precision, big_endian, size) in [
        (Precision::Single, false, 4 * (44 + 48)),
        (Precision::Double, false, 4 * (52 + 96)),
        (Precision::Single, true, 4 * (44 + 48)),
        (Precision::Double, true, 4 * (52 + 96)),
    ] {
        let bytes = write_layered(
            enc(RecordLayout::Modflow, precision, big_endian),
            3,
            4,
            &two_times(),
        );
        assert_eq!(bytes.len(), size);
        let path = dir.path().join("m.hds");
        std::fs::write(&path, &bytes).unwrap();
        let out = heads::read_heads(&path, &MaskOptions::default()).unwrap();
        assert_eq!((out.precision, out.big_endian), (precision, big_endian));
        assert_eq!((out.nlay, out.nrow, out.ncol), (2, 3, 4));
        assert_eq!(out.n_layer_records, 4);
        assert_eq!(out.records.len(), 2);
        let r = &out.records[1];
        assert_eq!(
            (r.kstp, r.kper, r.pertim, r.totim),
            (Some(5), Some(2), Some(2.5), Some(12.5))
        );
        assert_eq!(r.values[[1, 2, 3]], 89.0 + 0.25 * 11.0);
        seen.push(
            out.records
                .iter()
                .map(|r| r.values.clone())
                .collect::<Vec<_>>(),
        );
    }
    assert!(
        seen.windows(2).all(|w| w[0] == w[1]),
        "all four encodings give the same values"
    );
}

#[test]
fn mt3d_and_modflow_layouts_are_told_apart_whichever_reader_is_asked() {
    for layout in [RecordLayout::Mt3d, RecordLayout::Modflow] {
        for precision in [Precision::Single, Precision::Double] {
            let bytes = write_layered(enc(layout, precision, false), 3, 4, &two_times());
            let want = match layout {
                RecordLayout::Mt3d => HydroFormat::Mt3dUcn,
                RecordLayout::Modflow => HydroFormat::ModflowBinary,
            };
            let a =
                heads::parse_heads(Path::new("x.hds"), &bytes, &MaskOptions::default()).unwrap();
            let b = ucn::parse_ucn(Path::new("x.ucn"), &bytes, &MaskOptions::default()).unwrap();
            assert_eq!(
                (a.format, b.format),
                (want, want),
                "{layout:?} {precision:?}"
            );
            assert_eq!(a.precision, precision);
            let r = &b.records[1];
            match layout {
                RecordLayout::Mt3d => {
                    // NTRANS, KSTP, KPER = 2, 5, 2 and TIME2 = 12.5.
                    assert_eq!(
                        (r.ntrans, r.kstp, r.kper, r.totim),
                        (Some(2), Some(5), Some(2), Some(12.5))
                    );
                    assert_eq!(r.pertim, None);
                }
                RecordLayout::Modflow => {
                    assert_eq!(
                        (r.ntrans, r.kstp, r.kper, r.pertim),
                        (None, Some(5), Some(2), Some(2.5))
                    );
                }
            }
        }
    }
}

#[test]
fn dry_inactive_and_the_callers_values_are_masked_and_counted() {
    // One time, one layer of 3 × 4: two HNOFLO 1e30, one MODFLOW 6 dry -1e30, one -999.99,
    // one HDRY-like 1e20, one of the model's HDRY (-888) and one of its HNOFLO (999.5).
    let mut v: Vec<f64> = (0..12).map(|i| 10.0 + i as f64).collect();
    v[0] = 1e30;
    v[1] = 1e30;
    v[2] = -1e30;
    v[3] = -999.99;
    v[4] = 1e20;
    v[5] = -888.0;
    v[6] = 999.5;
    for precision in [Precision::Single, Precision::Double] {
        let bytes = write_layered(
            enc(RecordLayout::Modflow, precision, false),
            3,
            4,
            &[(0, 1, 1, 1.0, 1.0, "HEAD", 1, v.clone())],
        );
        let opts = MaskOptions {
            hnoflo: Some(999.5),
            hdry: Some(-888.0),
            ..MaskOptions::default()
        };
        let out = heads::parse_heads(Path::new("dry.hds"), &bytes, &opts).unwrap();
        let c = out.mask_counts;
        assert_eq!(
            (
                c.inactive_1e30,
                c.minus_999_99,
                c.dry_1e20,
                c.hdry,
                c.hnoflo,
                c.total()
            ),
            (3, 1, 1, 1, 1, 7),
            "{precision:?}"
        );
        assert_eq!(out.n_active(), 5);
        assert_eq!(out.active_range(), Some((17.0, 21.0)));
        assert!(!out.records[0].active[[0, 0, 0]] && out.records[0].active[[0, 1, 3]]);
        let s = out.summary();
        assert_eq!(s["masked"]["inactive_1e30"], 3);
        assert_eq!(s["masked"]["hdry"], 1);
        assert_eq!(s["masked_total"], 7);
        assert_eq!(s["active_min"], 17.0);
        // Without the model's values, -888 and 999.5 are heads like any other.
        let plain =
            heads::parse_heads(Path::new("dry.hds"), &bytes, &MaskOptions::default()).unwrap();
        assert_eq!(plain.mask_counts.total(), 5);
        assert_eq!(plain.active_range(), Some((-888.0, 999.5)));
    }
}

#[test]
fn a_layer_a_time_did_not_write_is_masked_as_not_written() {
    let mut recs = two_times();
    recs.remove(3); // time 2 has layer 1 only
    let bytes = write_layered(
        enc(RecordLayout::Modflow, Precision::Single, false),
        3,
        4,
        &recs,
    );
    let out = heads::parse_heads(Path::new("part.hds"), &bytes, &MaskOptions::default()).unwrap();
    assert_eq!((out.records.len(), out.nlay), (2, 2));
    assert_eq!(out.mask_counts.not_written, 12);
    assert!(out.records[1].values[[1, 0, 0]].is_nan());
    assert!(!out.records[1].active[[1, 0, 0]]);
}

#[test]
fn a_cut_file_is_refused_at_the_record_it_cuts() {
    // Written: records of 44 + 48 bytes; the fourth record's data starts at 3·92 + 44 = 320.
    let bytes = write_layered(
        enc(RecordLayout::Modflow, Precision::Single, false),
        3,
        4,
        &two_times(),
    );
    let cut = &bytes[..bytes.len() - 10];
    let e = heads::parse_heads(Path::new("cut.hds"), cut, &MaskOptions::default()).unwrap_err();
    let HydroError::Truncated {
        offset,
        place,
        available,
        ..
    } = &e
    else {
        panic!("{e}")
    };
    assert_eq!((*offset, *available), (320, 38));
    assert!(place.contains("record 4"), "{place}");
    assert!(
        e.to_string()
            .starts_with("cut.hds: record 4 data (ILAY 2) at byte 320"),
        "{e}"
    );
    // A real file cut inside its 7th time (60 layer records of 44 + 2500 bytes).
    let real = std::fs::read(data("mp6_example.hed")).unwrap();
    let at = 30 * 2544 + 44 + 1000;
    let e = heads::parse_heads(
        Path::new("EXAMPLE.HED"),
        &real[..at],
        &MaskOptions::default(),
    )
    .unwrap_err();
    assert_eq!(e.offset(), Some(30 * 2544 + 44), "{e}");
    // Through the `read` command's path the offset survives.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("cut.hds");
    std::fs::write(&p, &real[..at]).unwrap();
    let msg = format!("{:#}", read_summary(&p).unwrap_err());
    assert!(
        msg.contains("cut.hds") && msg.contains("at byte 76364"),
        "{msg}"
    );
    // A cut header: the walk stops at the header, not inside the data.
    let e = heads::parse_heads(
        Path::new("h.hds"),
        &bytes[..92 + 20],
        &MaskOptions::default(),
    )
    .unwrap_err();
    assert_eq!(e.offset(), Some(92), "{e}");
}

#[test]
fn broken_headers_are_refused_naming_the_field() {
    let good = write_layered(
        enc(RecordLayout::Modflow, Precision::Single, false),
        3,
        4,
        &two_times(),
    );
    // The second record's name made of control bytes: every encoding fails; the furthest
    // one (the right one, at record 2's name, byte 92 + 16) is reported.
    let mut b = good.clone();
    b[92 + 16..92 + 32].copy_from_slice(&[1u8; 16]);
    let e = heads::parse_heads(Path::new("t.hds"), &b, &MaskOptions::default()).unwrap_err();
    assert_eq!(e.offset(), Some(108), "{e}");
    assert!(
        e.to_string().contains("printable ASCII") && e.to_string().contains("\\x01"),
        "{e}"
    );
    // NCOL × NROW changing between records.
    let mut b = good.clone();
    b[92 + 32..92 + 36].copy_from_slice(&6i32.to_le_bytes());
    b[92 + 36..92 + 40].copy_from_slice(&2i32.to_le_bytes());
    let e = heads::parse_heads(Path::new("t.hds"), &b, &MaskOptions::default()).unwrap_err();
    assert!(
        e.to_string()
            .contains("NCOL × NROW = 4 × 3, as in record 1"),
        "{e}"
    );
    // A Fortran sequential file (record markers around a 44-byte header).
    let mut seq = 44u32.to_le_bytes().to_vec();
    seq.extend_from_slice(&good[..44]);
    seq.extend_from_slice(&44u32.to_le_bytes());
    seq.extend_from_slice(&good[44..92]);
    let e = heads::parse_heads(Path::new("s.hds"), &seq, &MaskOptions::default()).unwrap_err();
    assert!(e.to_string().contains("sequential unformatted"), "{e}");
    // An empty file.
    let e = heads::parse_heads(Path::new("e.hds"), &[], &MaskOptions::default()).unwrap_err();
    assert!(matches!(e, HydroError::Truncated { offset: 0, .. }), "{e}");
}

fn cube(nz: usize, ny: usize, nx: usize) -> Array3<f64> {
    Array3::from_shape_fn((nz, ny, nx), |(k, j, i)| {
        -3.0 + 0.5 * k as f64 + 0.01 * j as f64 + 1e-4 * i as f64
    })
}

#[test]
fn a_pfb_of_twelve_subgrids_is_put_together_cell_for_cell() {
    let v = cube(3, 7, 5);
    let bytes = pfb::write_pfb([0.0, 10.0, -5.0], [2.0, 3.0, 0.5], &v, (2, 3, 2));
    let p = pfb::parse_pfb(Path::new("run.out.press.00003.pfb"), &bytes).unwrap();
    assert_eq!(p.subgrids.len(), 12);
    assert_eq!(p.n, [5, 7, 3]);
    assert_eq!(p.subgrids[1].start, [3, 0, 0], "x split 3 | 2");
    assert_eq!(p.values, v);
    assert!(pfb::sniff(&bytes, bytes.len() as u64));
    let out = p.into_output(&MaskOptions::default());
    assert_eq!((out.nlay, out.nrow, out.ncol), (3, 7, 5));
    assert_eq!(out.records[0].output_index, Some(3));
    assert_eq!(out.records[0].quantity, "press");
}

/// Subgrid 1 of the 2 × 1 × 1 split starts at x = 3 of 5 cells; moved to x = 4 its 2 cells
/// reach x = 6.
#[test]
fn a_pfb_subgrid_outside_the_grid_or_overlapping_or_leaving_a_gap_is_refused() {
    let v = cube(1, 2, 5);
    let good = pfb::write_pfb([0.0; 3], [1.0; 3], &v, (2, 1, 1));
    let second = 64 + 36 + 3 * 2 * 8;
    let mut b = good.clone();
    b[second..second + 4].copy_from_slice(&4i32.to_be_bytes());
    let e = pfb::parse_pfb(Path::new("out.pfb"), &b).unwrap_err();
    let HydroError::Subgrid {
        subgrid, offset, ..
    } = &e
    else {
        panic!("{e}")
    };
    assert_eq!((*subgrid, *offset), (1, second));
    assert!(
        e.to_string().contains("ix = 4, nx = 2") && e.to_string().contains("NX = 5"),
        "{e}"
    );
    // Moved to x = 2: it overlaps subgrid 0 at cell (2, 0, 0).
    b[second..second + 4].copy_from_slice(&2i32.to_be_bytes());
    let e = pfb::parse_pfb(Path::new("out.pfb"), &b).unwrap_err();
    assert!(
        e.to_string().contains("(2, 0, 0) given a second time"),
        "{e}"
    );
    // A negative start.
    b[second..second + 4].copy_from_slice(&(-1i32).to_be_bytes());
    assert!(matches!(
        pfb::parse_pfb(Path::new("out.pfb"), &b),
        Err(HydroError::Subgrid { subgrid: 1, .. })
    ));
    // One subgrid of 3 cells in a grid of 5 (the file padded to the grid's size): a gap.
    let mut gap = good[..64].to_vec();
    gap[60..64].copy_from_slice(&1i32.to_be_bytes());
    for w in [0, 0, 0, 3, 2, 1, 0, 0, 0] {
        gap.extend(i32::to_be_bytes(w));
    }
    gap.extend(vec![0u8; 10 * 8]);
    let e = pfb::parse_pfb(Path::new("out.pfb"), &gap).unwrap_err();
    assert!(
        e.to_string()
            .contains("4 cells given by none, the first (i, j, k) = (3, 0, 0)"),
        "{e}"
    );
    // Cut inside subgrid 1's values.
    let e = pfb::parse_pfb(Path::new("out.pfb"), &good[..good.len() - 8]).unwrap_err();
    assert!(
        matches!(e, HydroError::Truncated { offset, .. } if offset == second + 36),
        "{e}"
    );
    assert_eq!(
        pfb::parse_pfb(Path::new("out.pfb"), &good).unwrap().values,
        v
    );
}

#[test]
fn a_dis_grid_written_here_reads_back_and_broken_ones_are_refused() {
    let (nlay, nrow, ncol) = (2, 3, 4);
    let top = vec![10.0; 12];
    let botm: Vec<f64> = (0..24).map(|c| if c < 12 { 5.0 } else { 0.0 }).collect();
    let bytes = grb::write_dis_grb(
        (nlay, nrow, ncol),
        (1000.0, 2000.0, 30.0),
        &[1.0, 2.0, 3.0, 4.0],
        &[5.0, 6.0, 7.0],
        &top,
        &botm,
        &[0, 13],
    );
    let g = grb::parse_grb(Path::new("m.dis.grb"), &bytes).unwrap();
    assert_eq!(g.grid_type, GridType::Dis);
    assert_eq!(
        (g.ncells, g.nlay, g.angrot, g.yorigin),
        (24, Some(2), 30.0, 2000.0)
    );
    assert_eq!(g.n_active(), 22);
    assert_eq!(g.idomain.as_ref().unwrap()[13], 0);
    let GridShape::Dis { delr, delc, .. } = &g.shape else {
        panic!()
    };
    assert_eq!((delr[3], delc[2]), (4.0, 7.0));
    // IA has 25 entries and JA one per cell plus its neighbours.
    assert_eq!(g.ia.len(), 25);
    assert_eq!(*g.ia.last().unwrap() as usize, g.nja + 1);
    // Cut inside the last array (IDOMAIN).
    let e = grb::parse_grb(Path::new("m.dis.grb"), &bytes[..bytes.len() - 4]).unwrap_err();
    let idomain_at = g
        .arrays
        .iter()
        .find(|a| a.name == "IDOMAIN")
        .unwrap()
        .offset;
    assert!(
        matches!(&e, HydroError::Truncated { offset, place, .. } if *offset == idomain_at && place.contains("IDOMAIN")),
        "{e}"
    );
    // IA that decreases.
    let ia_at = g.arrays.iter().find(|a| a.name == "IA").unwrap().offset;
    let mut b = bytes.clone();
    b[ia_at + 8..ia_at + 12].copy_from_slice(&0i32.to_le_bytes());
    let e = grb::parse_grb(Path::new("m.dis.grb"), &b).unwrap_err();
    assert_eq!(e.offset(), Some(ia_at + 8), "{e}");
    // Not a grid file.
    let e = grb::parse_grb(Path::new("m.dis.grb"), b"GRID XYZ").unwrap_err();
    assert!(e.to_string().contains("header line 1"), "{e}");
}

#[test]
fn files_are_recognised_by_content_under_other_names() {
    let dir = tempfile::tempdir().unwrap();
    for (src, name, kind) in [
        (
            "freyberg_mf2005.hds",
            "freyberg.githds",
            hydro::HydroFileKind::Heads,
        ),
        ("p07_mt3dms.ucn", "MT3D001", hydro::HydroFileKind::Ucn),
        (
            "tri_model_mf6.disv.grb",
            "flow_grid",
            hydro::HydroFileKind::Grb,
        ),
        (
            "default_single.out.press.00000.pfb",
            "press_00000",
            hydro::HydroFileKind::Pfb,
        ),
    ] {
        let p = dir.path().join(name);
        std::fs::copy(data(src), &p).unwrap();
        assert_eq!(hydro::file_kind(&p), Some(kind), "{name}");
        let s = read_summary(&p).unwrap();
        assert_eq!(s["method"], "hydro", "{name}");
    }
    // A text file is none of them.
    let p = dir.path().join("notes.dat");
    std::fs::write(&p, "HEAD 1 2 3\n").unwrap();
    assert_eq!(hydro::file_kind(&p), None);
}

/// The Freyberg MODFLOW-2005 model writes HNOFLO 999, which no default mask knows: the
/// summary says so rather than pass it off as a head.
#[test]
fn the_summary_points_at_an_unmasked_no_data_value() {
    let s = read_summary(&data("freyberg_mf2005.hds")).unwrap();
    let notes = s["notes"].to_string();
    assert!(notes.contains("999 is in 95 of the 800 cells"), "{notes}");
    let opts = MaskOptions {
        hnoflo: Some(999.0),
        ..MaskOptions::default()
    };
    let out = heads::read_heads(&data("freyberg_mf2005.hds"), &opts).unwrap();
    assert_eq!(out.suspected_no_data(), None);
    // Saturation's many 1.0 values are not suspected.
    let p = pfb::read_pfb(&data("clm_slope.out.satur.00001.pfb")).unwrap();
    assert_eq!(
        p.into_output(&MaskOptions::default()).suspected_no_data(),
        None
    );
}

/// Issue 26, item 2: the freyberg MODFLOW 6 grid (40 rows × 20 columns of 250, unrotated)
/// places points where flopy does — oracle: flopy 3.11 `MfGrdFile(...).modelgrid.intersect`
/// gave (17, 4) for (1234, 5678), (0, 0) for (10, 9990) and (39, 19) for (4990, 10). A line
/// from (125, 125) to the east crosses the first row of cells column by column.
#[test]
fn the_freyberg_grid_places_points_where_flopy_does() {
    use hydrogeo_studio::methods::hydro::geometry::{Line, StructuredGrid};
    let g =
        StructuredGrid::from_grb(&grb::read_grb(&data("freyberg_mf6.dis.grb")).unwrap()).unwrap();
    assert_eq!(g.row_col(1234.0, 5678.0), Some((17, 4)));
    assert_eq!(g.row_col(10.0, 9990.0), Some((0, 0)));
    assert_eq!(g.row_col(4990.0, 10.0), Some((39, 19)));
    assert_eq!(g.row_col(5010.0, 10.0), None);
    let line = Line {
        origin_xy: [125.0, 125.0],
        azimuth_deg: 90.0,
    };
    let cols: Vec<Option<(usize, usize)>> = (0..4)
        .map(|k| {
            let p = line.point(250.0 * k as f64);
            g.row_col(p[0], p[1])
        })
        .collect();
    assert_eq!(
        cols,
        vec![Some((39, 0)), Some((39, 1)), Some((39, 2)), Some((39, 3))]
    );
    // The DISV grid is not a structured one: refused by name.
    let e = StructuredGrid::from_grb(&grb::read_grb(&data("tri_model_mf6.disv.grb")).unwrap())
        .unwrap_err()
        .to_string();
    assert!(e.contains("DISV"), "{e}");
}

/// Issue 26, item 2: a ParFlow grid's cells in the same frame — the centre of the bottom,
/// south-west cell (k, j, i) = (0, 0, 0) is the last layer's last row, first column, and maps
/// back to array index (0, 0, 0); the top north-east cell likewise.
#[test]
fn a_parflow_grid_maps_world_points_to_its_own_array_index() {
    use hydrogeo_studio::methods::hydro::geometry::StructuredGrid;
    let p = pfb::read_pfb(&data("default_single.out.press.00000.pfb")).unwrap();
    let g = StructuredGrid::from_pfb(&p);
    let [x0, y0, z0] = p.origin;
    let [dx, dy, dz] = p.spacing;
    let [nx, ny, nz] = p.n;
    let first = g
        .locate(x0 + 0.5 * dx, y0 + 0.5 * dy, z0 + 0.5 * dz)
        .unwrap();
    assert_eq!(first, (nz - 1, ny - 1, 0));
    assert_eq!(g.pfb_index(first), [0, 0, 0]);
    let last = g
        .locate(
            x0 + (nx as f64 - 0.5) * dx,
            y0 + (ny as f64 - 0.5) * dy,
            z0 + (nz as f64 - 0.5) * dz,
        )
        .unwrap();
    assert_eq!(last, (0, 0, nx - 1));
    assert_eq!(g.pfb_index(last), [nz - 1, ny - 1, nx - 1]);
    assert_eq!(g.locate(x0 - dx, y0, z0), None);
}

/// Issue 26 (heads → water table along a line): a line south-east from the centre of the
/// freyberg cell (row 0, column 0) meets cell (19, 19) at 19·250·√2; the heads there are
/// flopy's (27.261621838443 and 17.287123787972064, `tests/oracles/hydro/freyberg_mf6.hds.json`,
/// exact), the depths 35 − head below the model's top of 35.
#[test]
fn the_freyberg_heads_give_the_water_table_along_a_line_as_flopy_reads_them() {
    use hydrogeo_studio::methods::hydro::geometry::{Line, StructuredGrid, water_table_along};
    let g =
        StructuredGrid::from_grb(&grb::read_grb(&data("freyberg_mf6.dis.grb")).unwrap()).unwrap();
    let heads = heads::read_heads(&data("freyberg_mf6.hds"), &MaskOptions::default()).unwrap();
    let line = Line {
        origin_xy: [125.0, 9875.0],
        azimuth_deg: 135.0,
    };
    let far = 19.0 * 250.0 * 2f64.sqrt();
    let wt = water_table_along(
        &g,
        &heads.records[0],
        heads.layer_order,
        &line,
        &[0.0, far],
        &|_| 35.0,
    );
    let a = wt[0].unwrap();
    let b = wt[1].unwrap();
    assert_eq!(a.head, 27.261621838443);
    assert_eq!(b.head, 17.287123787972064);
    assert_eq!((a.layer, b.layer), (0, 0));
    assert!((a.depth - (35.0 - 27.261621838443)).abs() < 1e-12);
}
