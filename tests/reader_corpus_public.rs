//! Issue 22, item 6, the public half: the example and test files of the reference projects
//! (`tests/data/corpus/<project>/`, byte-identical copies, sources in
//! `tests/data/corpus/PROVENANCE.md`) through the `read` path (`catalog::read_summary`, what
//! `hydrogeo-studio read <file>` prints), with the counts the reference tool of each project
//! gives for them (`tests/oracles/corpus_counts.json`, made by `tests/oracles/corpus_counts.py`:
//! pyGIMLi 1.6.1, ResIPy 3.6.6, mt_metadata 1.0.12, GPRPy git 0031b5cc, ObsPy 1.5.1, the tool
//! named per entry). Counts are compared exactly.
//!
//! The files are in the repository, so nothing is skipped. Every file must be listed below: a
//! file added to the corpus without an entry fails the test.

use hydrogeo_studio::catalog::read_summary;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// What `read` must make of a file, and which counts of its oracle entry it must match.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// ERT data: n_electrodes and n_data.
    Ert,
    /// ERT data of a pole array whose remote poles the reference tool counts as electrodes
    /// (ResIPy places them at ±999999): n_electrodes + n_remote_poles, and n_data.
    ErtRemotesCounted,
    /// MT transfer functions: n_periods.
    Mt,
    /// Seismic travel times: picks (n_data), shots, geophones, sensors.
    TravelTimes,
    /// Raw seismic gathers (SEG-2, SEG-Y): traces over all gathers, samples per trace.
    Gathers,
    /// GPR: traces and samples per trace.
    Gpr,
    /// TDEM soundings: soundings and gates over all soundings.
    Tdem,
}

use Expect::*;

/// Every file of `tests/data/corpus`: (path, expectation, where it comes from).
const CORPUS: &[(&str, Expect, &str)] = &[
    (
        "gimli/crosshole2d.dat",
        Ert,
        "gimli-org/example-data ert/crosshole2d.dat",
    ),
    (
        "gimli/hollow_limetree.ohm",
        Ert,
        "gimli-org/example-data ert/hollow_limetree.ohm",
    ),
    ("gimli/lake.ohm", Ert, "gimli-org/example-data ert/lake.ohm"),
    (
        "gimli/schleizFDIP.dat",
        Ert,
        "gimli-org/example-data IP/schleizFDIP.dat",
    ),
    (
        "gimli/slagdump.ohm",
        Ert,
        "gimli-org/example-data ert/slagdump.ohm",
    ),
    (
        "gimli/struct.dat",
        Ert,
        "gimli-org/example-data ert/struct.dat",
    ),
    (
        "gimli/koenigsee.sgt",
        TravelTimes,
        "gimli-org/example-data traveltime/koenigsee.sgt",
    ),
    (
        "gimli/TerraTEMStade.usf",
        Tdem,
        "gimli-org/example-data TDEM/TerraTEMStade.usf",
    ),
    (
        "resipy/BERT_IP_2D.dat",
        Ert,
        "hkexgroup/resipy src/examples/parser/BERT_IP_2D.dat",
    ),
    (
        "resipy/abem-lund-recip.ohm",
        Ert,
        "hkexgroup/resipy src/examples/parser/abem-lund-recip.ohm",
    ),
    (
        "resipy/electra_missing_measurements.ele",
        Ert,
        "hkexgroup/resipy src/examples/parser/electra_missing_measurements.ele",
    ),
    (
        "resipy/protocol.dat",
        Ert,
        "hkexgroup/resipy src/examples/dc-2d/protocol.dat",
    ),
    (
        "resipy/res2dinv-ga.dat",
        Ert,
        "hkexgroup/resipy src/examples/parser/res2dinv-ga.dat",
    ),
    (
        "resipy/res2dinv_PoleDipole.DAT",
        ErtRemotesCounted,
        "hkexgroup/resipy src/examples/parser/res2dinv_PoleDipole.DAT",
    ),
    (
        "resipy/res2dinv_PolePole.DAT",
        Ert,
        "hkexgroup/resipy src/examples/parser/res2dinv_PolePole.DAT",
    ),
    (
        "resipy/syscal-new-format.csv",
        Ert,
        "hkexgroup/resipy src/examples/parser/syscal-new-format.csv",
    ),
    (
        "mt_metadata/tf_edi_cgg.edi",
        Mt,
        "kujaku11/mt_metadata mt_metadata/data/transfer_functions/tf_edi_cgg.edi",
    ),
    (
        "mt_metadata/tf_edi_empower.edi",
        Mt,
        "kujaku11/mt_metadata mt_metadata/data/transfer_functions/tf_edi_empower.edi",
    ),
    (
        "mt_metadata/tf_edi_quantec.edi",
        Mt,
        "kujaku11/mt_metadata mt_metadata/data/transfer_functions/tf_edi_quantec.edi",
    ),
    (
        "mt_metadata/tf_edi_rho_only.edi",
        Mt,
        "kujaku11/mt_metadata mt_metadata/data/transfer_functions/tf_edi_rho_only.edi",
    ),
    (
        "mt_metadata/tf_edi_spectra_out.edi",
        Mt,
        "kujaku11/mt_metadata mt_metadata/data/transfer_functions/tf_edi_spectra_out.edi",
    ),
    (
        "gprpy/XLINE00.DT1",
        Gpr,
        "NSGeophysics/GPRPy gprpy/exampledata/SnS/WARR/XLINE00.DT1",
    ),
    (
        "gprpy/XLINE00.HD",
        Gpr,
        "NSGeophysics/GPRPy gprpy/exampledata/SnS/WARR/XLINE00.HD",
    ),
    (
        "obspy/20180307_031245000.0.seg2",
        Gathers,
        "obspy/obspy obspy/io/seg2/tests/data/20180307_031245000.0.seg2",
    ),
    (
        "obspy/one_trace_year_11.sgy",
        Gathers,
        "obspy/obspy obspy/io/segy/tests/data/one_trace_year_11.sgy",
    ),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests")
}

/// Every file under `dir`, as paths relative to `base` with '/' separators.
fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(base, &p, out);
        } else if let Ok(rel) = p.strip_prefix(base) {
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
}

fn oracle() -> Value {
    let path = root().join("oracles").join("corpus_counts.json");
    let text = std::fs::read_to_string(&path).expect("tests/oracles/corpus_counts.json");
    serde_json::from_str(&text).expect("corpus_counts.json is JSON")
}

/// The counts of a summary as (key, value), in the oracle's keys.
fn counts(v: &Value, expect: Expect) -> Vec<(&'static str, Option<u64>)> {
    let keys: &[&'static str] = match expect {
        Ert => &["n_electrodes", "n_data"],
        ErtRemotesCounted => {
            let remotes = v["n_remote_poles"].as_u64().unwrap_or(0);
            let electrodes = v["n_electrodes"].as_u64().map(|n| n + remotes);
            return vec![
                ("n_electrodes", electrodes),
                ("n_data", v["n_data"].as_u64()),
            ];
        }
        Mt => &["n_periods"],
        TravelTimes => &["n_data", "n_shots", "n_geophones", "n_sensors"],
        Gpr => &["n_traces", "n_samples"],
        Tdem => &["n_soundings", "n_gates_total"],
        Gathers => {
            // The gathers of the file: traces summed, one sample count shared by all.
            let gathers = v["gathers"].as_array().cloned().unwrap_or_default();
            let traces = gathers.iter().map(|g| g["n_traces"].as_u64()).sum();
            let mut samples: Vec<Option<u64>> =
                gathers.iter().map(|g| g["n_samples"].as_u64()).collect();
            samples.dedup();
            let samples = if samples.len() == 1 { samples[0] } else { None };
            return vec![("n_traces", traces), ("n_samples", samples)];
        }
    };
    keys.iter().map(|k| (*k, v[*k].as_u64())).collect()
}

/// The method `read` must report for an expectation.
fn method_of(expect: Expect) -> &'static str {
    match expect {
        Ert | ErtRemotesCounted => "ert",
        Mt => "mt",
        TravelTimes | Gathers => "seismic",
        Gpr => "gpr",
        Tdem => "tdem",
    }
}

/// One file: the problems found (empty when it reads with the oracle's counts).
fn check(rel: &str, source: &str, expect: Expect, oracle: &Value) -> Vec<String> {
    let want = &oracle["files"][rel];
    if want.is_null() {
        return vec![format!("{rel} ({source}): no entry in corpus_counts.json")];
    }
    let tool = want["tool"].as_str().unwrap_or("?");
    let v = match read_summary(&root().join("data").join("corpus").join(rel)) {
        Ok(v) => v,
        Err(e) => return vec![format!("{rel} ({source}): {e:#}; {tool} reads it")],
    };
    let method = method_of(expect);
    let mut problems = Vec::new();
    if v["method"] != method {
        problems.push(format!(
            "{rel} ({source}): method {} instead of {method}",
            v["method"]
        ));
    }
    for (key, got) in counts(&v, expect) {
        let Some(w) = want[key].as_u64() else {
            problems.push(format!("{rel}: corpus_counts.json has no {key}"));
            continue;
        };
        if got != Some(w) {
            let got = got.map_or("nothing".into(), |g| g.to_string());
            problems.push(format!(
                "{rel} ({source}): {key} = {got} but {tool} says {w}"
            ));
        }
    }
    problems
}

#[test]
fn every_public_corpus_file_reads_with_the_reference_tools_counts() {
    let oracle = oracle();
    let base = root().join("data").join("corpus");
    let mut files = Vec::new();
    walk(&base, &base, &mut files);
    files.retain(|f| f != "PROVENANCE.md");
    files.sort();
    let listed: Vec<&str> = CORPUS.iter().map(|(p, _, _)| *p).collect();
    let unlisted: Vec<&String> = files
        .iter()
        .filter(|f| !listed.contains(&f.as_str()))
        .collect();
    assert!(unlisted.is_empty(), "files without an entry: {unlisted:?}");
    let missing: Vec<&&str> = listed
        .iter()
        .filter(|p| !files.iter().any(|f| f == *p))
        .collect();
    assert!(missing.is_empty(), "entries without a file: {missing:?}");
    let provenance =
        std::fs::read_to_string(base.join("PROVENANCE.md")).expect("corpus PROVENANCE.md");
    let mut problems = Vec::new();
    for (rel, expect, source) in CORPUS {
        if !provenance.contains(&format!("`{rel}`")) {
            problems.push(format!("{rel}: not in PROVENANCE.md"));
        }
        problems.extend(check(rel, source, *expect, &oracle));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert_eq!(CORPUS.len(), 25);
}

#[test]
fn a_wrong_count_or_method_is_reported() {
    // The check itself can fail: counts of another file, another method.
    let oracle = oracle();
    let wrong = check("gimli/lake.ohm", "x", Ert, &{
        let mut o = oracle.clone();
        o["files"]["gimli/lake.ohm"]["n_data"] = Value::from(1u64);
        o
    });
    assert!(wrong.iter().any(|p| p.contains("n_data")), "{wrong:?}");
    let other = check("gimli/lake.ohm", "x", Mt, &oracle);
    assert!(other.iter().any(|p| p.contains("method")), "{other:?}");
}
