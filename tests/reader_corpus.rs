//! Issue 22, item 6: every file in `../shared/data` through the `read` path
//! (`catalog::read_summary`, what `hydrogeo-studio read <file>` prints), with the counts of
//! the oracle tables in `../shared/oracles` where they have them. Counts are compared exactly.
//!
//! Provenance of the reference numbers (see `../shared/oracles/README.md`):
//! - `ert_parsers.json`: pyGIMLi 1.6.1 `DataContainerERT`, ResIPy 3.6.6 parsers (or its
//!   shim run), and the oracle's own plain-Python count — the block used is named per file;
//! - `mt_tf.json`: mtpy-v2 2.1.4 on mt-metadata 1.0.12 (`other_files`: numpy.loadtxt);
//! - `seismic.json`: pyGIMLi `DataContainer(fn, 's g')`;
//! - `gpr_readers.json`: readgssi 0.0.22 / GPRPy (git 0031b5cc);
//! - `tdem_rhoa.json`: the oracle's gate table of the TEM-FAST file.
//!
//! Every file must be listed below: a file added to the data without an entry fails the
//! test until someone says what `read` should make of it.

#[macro_use]
#[path = "support/field_data.rs"]
mod field_data;

use hydrogeo_studio::catalog::read_summary;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// What `read` must make of a file.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// ERT data (or an electrode table): `ert_parsers.json`, `files[path]` then this block
    /// ("" = the entry itself); n_electrodes and n_data (n_quadrupoles) must match.
    Ert(&'static str),
    /// MT: `mt_tf.json`, `files[name]` (or `other_files[name]` when true): n_periods.
    Mt(bool),
    /// Seismic travel times: `seismic.json`, `files[name]` or
    /// `other_unified_traveltime_files_phgx[path]` (true): picks, shots, geophones, sensors.
    Seismic(bool),
    /// GPR: `gpr_readers.json`, `files["gprpy/<name>"]` (a `.HD` header: its `.DT1`'s
    /// entry): traces and samples per trace.
    Gpr,
    /// TDEM TEM-FAST: the number of gates of `tdem_rhoa.json`.
    TemFast,
    /// Read by this method; the oracles have no count for it.
    Reads(&'static str),
    /// Not something `read` reads, for this reason: it must say so (an error), never
    /// pretend to be a format.
    Refused(&'static str),
}

use Expect::*;

const DOC: Expect = Refused("documentation, not a data file");
const GEO: Expect = Refused("a PyRefra geometry side file, read with picks.dat, not alone");

/// Every file of `../shared/data`.
const CORPUS: &[(&str, Expect)] = &[
    ("PHGX_EXAMPLES_README.md", DOC),
    ("PHGX_FILES.txt", DOC),
    ("README.md", DOC),
    ("ert/README.txt", DOC),
    ("ert/gimli/bedrock.dat", Ert("pygimli")),
    (
        "ert/gimli/bedrock.txt",
        Refused("a reference model section 'x z rho' (the oracle's kind), not ERT data"),
    ),
    ("ert/gimli/gallery.dat", Ert("pygimli")),
    ("ert/gimli/modeltank.shm", Ert("pygimli")),
    // pyGIMLi merges the file's duplicated sensor (515); the file and the own count keep 516.
    ("ert/gimli/reciprocal.ohm", Ert("own_count")),
    ("ert/gimli/schleizTDIP.dat", Ert("pygimli")),
    ("ert/phgx/Bert/fielddataline2.dat", Ert("pygimli")),
    ("ert/phgx/DAS/20171105_1418.Data", Ert("resipy/shim_run")),
    ("ert/phgx/DAS/20171107_1417.Data", Ert("resipy/shim_run")),
    ("ert/phgx/DAS/acknowledgement.txt", DOC),
    ("ert/phgx/DAS/electrodes.dat", Ert("")),
    ("ert/phgx/E4D/2021-10-08_1400.ohm", Ert("own_count")),
    ("ert/phgx/E4D/2021-12-08_1230.ohm", Ert("own_count")),
    ("ert/phgx/E4D/acknowlegement.txt", DOC),
    ("ert/resipy/dc-2d_elec.csv", Ert("")),
    ("ert/resipy/dc-2d_protocol.dat", Ert("resipy")),
    ("ert/resipy/dc-2d_syscal-normal-only.csv", Ert("resipy")),
    ("ert/resipy/dc-2d_syscal.csv", Ert("resipy")),
    ("ert/resipy/ip-2d_syscal.csv", Ert("resipy")),
    ("ert/resipy/parser_ARESII.2dm", Ert("resipy")),
    ("ert/resipy/parser_DAS-1_2D_DC.data", Ert("resipy/shim_run")),
    ("ert/resipy/parser_Lippmann_1.tx0", Ert("resipy")),
    ("ert/resipy/parser_abem-lund-norm.ohm", Ert("resipy")),
    ("ert/resipy/parser_bgs-prime2.tab", Ert("resipy")),
    ("ert/resipy/parser_electraWenner.ele", Ert("resipy")),
    ("ert/resipy/parser_ohmpi.csv", Ert("resipy")),
    ("ert/resipy/parser_res2dinv-dd.dat", Ert("resipy")),
    ("ert/resipy/parser_res2dinv-wenner32.dat", Ert("resipy")),
    ("ert/resipy/parser_sting_2D_noIP.stg", Ert("resipy")),
    ("ert/resipy/parser_syscal-bin.bin", Ert("resipy")),
    ("ert/resipy/parser_syscal-bin.csv", Ert("resipy")),
    ("gpr/README.txt", DOC),
    ("gpr/gprpy/GSSI_FILE____032.DZT", Gpr),
    ("gpr/gprpy/GSSI_FILE____032.txt", Reads("gpr")),
    ("gpr/gprpy/SnS_ComOffs_GPS.xyz", Reads("gpr")),
    ("gpr/gprpy/SnS_ComOffs_XLINE00.DT1", Gpr),
    ("gpr/gprpy/SnS_ComOffs_XLINE00.HD", Gpr),
    ("gpr/gprpy/SnS_WARR_XLINE00.DT1", Gpr),
    ("gpr/gprpy/SnS_WARR_XLINE00.HD", Gpr),
    ("gravmag/README_gravity.txt", DOC),
    ("gravmag/README_magnetic.txt", DOC),
    ("gravmag/gimli_hartousov_profile.txt", Reads("gravmag")),
    (
        "gravmag/harmonica_britain-magnetic.csv.xz",
        Reads("gravmag"),
    ),
    // gravmag_trend.json counts a lon/lat subset (1,531 stations), not the file.
    (
        "gravmag/harmonica_south-africa-gravity.ast.xz",
        Reads("gravmag"),
    ),
    ("gravmag/phgx/acknowledgement.txt", DOC),
    (
        "gravmag/phgx/britain_aeromagnetic_anomaly.csv",
        Reads("gravmag"),
    ),
    (
        "gravmag/phgx/bushveld_gravity_disturbance.csv",
        Reads("gravmag"),
    ),
    ("mt/NMX20.xml", Mt(false)),
    ("mt/README.txt", DOC),
    ("mt/occam_aushield_Cull1985.dat", Mt(true)),
    (
        "mt/occam_aushield_Cull1985.mod",
        Refused("an Occam 1D model file (layers, a result), not data; no reader reads models"),
    ),
    ("mt/phgx_acknowledgement.txt", DOC),
    ("mt/tf_edi_metronix.edi", Mt(false)),
    ("mt/tf_edi_no_error.edi", Mt(false)),
    ("mt/tf_edi_phoenix.edi", Mt(false)),
    ("mt/tf_edi_spectra_in.edi", Mt(false)),
    ("mt/tf_jfile.j", Mt(false)),
    ("mt/tf_zmm.zmm", Mt(false)),
    ("mt/tf_zss_tipper.zss", Mt(false)),
    ("seismic/README.txt", DOC),
    ("seismic/gimli_koenigsee.sgt", Seismic(false)),
    ("seismic/phgx/location.txt", Reads("seismic")),
    ("seismic/phgx/srtfieldline2.dat", Seismic(true)),
    // Unified layout with the tokens 'g s err t valid': travel times, not ERT (issue 22).
    ("seismic/phgx/synthetic_seismic_data.dat", Seismic(true)),
    (
        "seismic/pyrefra_example/PyRefra.config",
        Refused("PyRefra's program settings, not data"),
    ),
    ("seismic/pyrefra_example/README.md", DOC),
    ("seismic/pyrefra_example/Rec_00001.seg2", Reads("seismic")),
    ("seismic/pyrefra_example/picks.dat", Reads("seismic")),
    ("seismic/pyrefra_example/receivers.geo", GEO),
    ("seismic/pyrefra_example/shots.geo", GEO),
    ("seismic/refrapy_field_example_01.sgt", Seismic(false)),
    ("tdem/README.txt", DOC),
    ("tdem/TEMfastLangeoog.tem", TemFast),
    ("tdem/phgx/EastRiver_VTEM/acknowledgement.txt", DOC),
    (
        "tdem/phgx/EastRiver_VTEM/eastriver_vtem_area.csv",
        Reads("tdem"),
    ),
    (
        "tdem/phgx/EastRiver_VTEM/eastriver_vtem_area_geometry.csv",
        Reads("tdem"),
    ),
    (
        "tdem/phgx/EastRiver_VTEM/eastriver_vtem_line22030_usgs_resistivity.csv",
        Refused("the USGS inverted resistivity model of the line (a result), not data"),
    ),
    ("tdem/phgx/acknowledgement.txt", DOC),
    ("tdem/phgx/joint_synthetic_tdem.csv", Reads("tdem")),
    ("tdem/phgx/skytem_bhmar_geometry.csv", Reads("tdem")),
    ("tdem/phgx/skytem_bhmar_tdem.csv", Reads("tdem")),
    ("tdem/readme.txt", DOC),
];

/// Every file under `dir`, as paths relative to `root` with '/' separators.
fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(root, &p, out);
        } else if let Ok(rel) = p.strip_prefix(root) {
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
}

/// `value[a][b]…` for a path "a/b" ("" = the value itself).
fn at<'a>(value: &'a Value, path: &str) -> &'a Value {
    path.split('/')
        .filter(|k| !k.is_empty())
        .fold(value, |v, k| &v[k])
}

/// (summary key, oracle value) pairs the summary of `rel` must match.
fn expected_counts(rel: &str, expect: Expect, oracles: &Oracles) -> Vec<(&'static str, Value)> {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    match expect {
        Ert(block) => {
            let b = at(&oracles.ert["files"][rel], block);
            let mut v = vec![("n_electrodes", b["n_electrodes"].clone())];
            if !block.is_empty() {
                v.push(("n_data", b["n_quadrupoles"].clone()));
            }
            v
        }
        Mt(other) => {
            let table = if other { "other_files" } else { "files" };
            vec![("n_periods", oracles.mt[table][name]["n_periods"].clone())]
        }
        Seismic(other) => {
            let e = if other {
                &oracles.seismic["other_unified_traveltime_files_phgx"][rel]
            } else {
                &oracles.seismic["files"][name]
            };
            vec![
                ("n_data", e["n_picks"].clone()),
                ("n_shots", e["n_shots"].clone()),
                ("n_geophones", e["n_geophones"].clone()),
                ("n_sensors", e["n_sensor_points"].clone()),
            ]
        }
        Gpr => {
            let entry = format!("gprpy/{}", name.replace(".HD", ".DT1"));
            let e = &oracles.gpr["files"][entry.as_str()];
            vec![
                ("n_traces", e["traces"].clone()),
                ("n_samples", e["samples_per_trace"].clone()),
            ]
        }
        TemFast => vec![(
            "n_gates_total",
            Value::from(oracles.tdem["gates"].as_array().map_or(0, Vec::len)),
        )],
        Reads(_) | Refused(_) => Vec::new(),
    }
}

struct Oracles {
    ert: Value,
    mt: Value,
    seismic: Value,
    gpr: Value,
    tdem: Value,
}

fn oracles() -> Option<Oracles> {
    Some(Oracles {
        ert: field_data::oracle_json("ert_parsers.json")?,
        mt: field_data::oracle_json("mt_tf.json")?,
        seismic: field_data::oracle_json("seismic.json")?,
        gpr: field_data::oracle_json("gpr_readers.json")?,
        tdem: field_data::oracle_json("tdem_rhoa.json")?,
    })
}

/// The method `read` must report for an expectation (`None` for a refusal).
fn method_of(expect: Expect) -> Option<&'static str> {
    Some(match expect {
        Ert(_) => "ert",
        Mt(_) => "mt",
        Seismic(_) => "seismic",
        Gpr => "gpr",
        TemFast => "tdem",
        Reads(m) => m,
        Refused(_) => return None,
    })
}

/// One file: the problems found (empty when it reads as expected).
fn check(rel: &str, path: &Path, expect: Expect, oracles: &Oracles) -> Vec<String> {
    let got = read_summary(path);
    let Some(method) = method_of(expect) else {
        let why = if let Refused(why) = expect { why } else { "" };
        return match got {
            Ok(v) => vec![format!(
                "{rel}: read as {} ({}) but it is {why}",
                v["method"],
                v.get("format_name")
                    .or_else(|| v.get("format"))
                    .unwrap_or(&Value::Null)
            )],
            Err(_) => Vec::new(),
        };
    };
    let v = match got {
        Ok(v) => v,
        Err(e) => return vec![format!("{rel}: {e:#}")],
    };
    let mut problems = Vec::new();
    if v["method"] != method {
        problems.push(format!("{rel}: method {} instead of {method}", v["method"]));
    }
    for (key, want) in expected_counts(rel, expect, oracles) {
        if want.is_null() {
            problems.push(format!("{rel}: the oracle has no value for {key}"));
        } else if v[key].as_u64() != want.as_u64() {
            problems.push(format!(
                "{rel}: {key} = {} but the oracle says {want}",
                v[key]
            ));
        }
    }
    problems
}

#[test]
fn every_file_of_the_shared_data_reads_with_the_oracle_counts_or_is_refused_by_name() {
    let Some(readme) = field_data::data("README.md") else {
        return;
    };
    let Some(oracles) = oracles() else {
        return;
    };
    let root: PathBuf = readme.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut files = Vec::new();
    walk(&root, &root, &mut files);
    files.sort();
    let listed: Vec<&str> = CORPUS.iter().map(|(p, _)| *p).collect();
    let unlisted: Vec<&String> = files
        .iter()
        .filter(|f| !listed.contains(&f.as_str()))
        .collect();
    assert!(unlisted.is_empty(), "files without an entry: {unlisted:?}");
    let mut problems = Vec::new();
    let mut n_counted = 0;
    for (rel, expect) in CORPUS {
        let Some(path) = field_data::data(rel) else {
            continue;
        };
        if !matches!(expect, Reads(_) | Refused(_)) {
            n_counted += 1;
        }
        problems.extend(check(rel, &path, *expect, &oracles));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // 28 ERT, 9 MT, 4 seismic, 5 GPR, 1 TEM-FAST files carry oracle counts.
    assert_eq!(n_counted, 47);
}

#[test]
fn a_refused_file_or_a_wrong_count_is_reported() {
    // The check itself can fail: a document read as data, a wrong count, a wrong method.
    let Some(oracles) = oracles() else {
        return;
    };
    let Some(gallery) = field_data::data("ert/gimli/gallery.dat") else {
        return;
    };
    assert!(check("x", &gallery, Refused("pretend"), &oracles)[0].contains("read as"));
    let wrong = check("ert/gimli/bedrock.dat", &gallery, Ert("pygimli"), &oracles);
    assert!(
        wrong.iter().any(|p| p.contains("n_data = 116")),
        "{wrong:?}"
    );
    assert!(check("x", &gallery, Reads("mt"), &oracles)[0].contains("method"));
}
