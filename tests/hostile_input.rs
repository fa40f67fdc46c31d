//! Issue 19's hostile-input suite: generated variants of real files of `../shared/data`
//! (truncations, bit flips, random bytes, UTF-16, NaN/inf, a FIFO, links, a huge sparse file)
//! read through `catalog::read_summary` — the `read` command's path. Every case must end
//! (each runs on a thread with a bound; passing the bound is reported as a hang, it is not a
//! speed measurement), none may panic, and every refusal must name the file and say why.
//! The originals are only read: variants are written to a temporary folder.

#[macro_use]
#[path = "support/field_data.rs"]
mod field_data;

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use hydrogeo_studio::catalog::read_summary;

/// One file of each reader family.
const FILES: &[&str] = &[
    "ert/resipy/dc-2d_syscal.csv",
    "ert/resipy/parser_ohmpi.csv",
    "ert/resipy/parser_Lippmann_1.tx0",
    "ert/resipy/parser_bgs-prime2.tab",
    "ert/resipy/parser_ARESII.2dm",
    "ert/resipy/parser_DAS-1_2D_DC.data",
    "ert/resipy/parser_syscal-bin.bin",
    "ert/gimli/gallery.dat",
    "tdem/TEMfastLangeoog.tem",
    "tdem/phgx/EastRiver_VTEM/eastriver_vtem_area.csv",
    "mt/tf_edi_phoenix.edi",
    "mt/tf_zmm.zmm",
    "mt/NMX20.xml",
    "gravmag/phgx/bushveld_gravity_disturbance.csv",
    "seismic/gimli_koenigsee.sgt",
    "seismic/pyrefra_example/Rec_00001.seg2",
    "gpr/gprpy/GSSI_FILE____032.DZT",
    "gpr/gprpy/SnS_ComOffs_XLINE00.DT1",
];

/// Longer than any reader takes on these files; reaching it is a hang.
const BOUND: Duration = Duration::from_secs(120);

/// What reading one variant came to.
enum Outcome {
    Read,
    Refused(String),
}

/// Read `path` on a thread: `Err` names a panic or a hang.
fn read_bounded(path: &Path) -> Result<Outcome, String> {
    let (tx, rx) = mpsc::channel();
    let p = path.to_path_buf();
    std::thread::spawn(move || {
        let r = match read_summary(&p) {
            Ok(_) => Outcome::Read,
            Err(e) => Outcome::Refused(format!("{e:#}")),
        };
        let _ = tx.send(r);
    });
    match rx.recv_timeout(BOUND) {
        Ok(o) => Ok(o),
        Err(mpsc::RecvTimeoutError::Timeout) => Err(format!("no answer within {BOUND:?} (a hang)")),
        Err(mpsc::RecvTimeoutError::Disconnected) => Err("the reader panicked".into()),
    }
}

/// Read one variant and check the rules; returns a failure description or `None`.
fn check(case: &str, path: &Path) -> Option<String> {
    match read_bounded(path) {
        Err(e) => Some(format!("{case}: {e}")),
        Ok(Outcome::Read) => None,
        Ok(Outcome::Refused(e)) => {
            let name = path.file_name()?.to_string_lossy().into_owned();
            let has_cause = e
                .split_once(&name)
                .is_some_and(|(_, rest)| rest.trim().len() > 2);
            (!has_cause).then(|| format!("{case}: the refusal must name {name} and a cause: {e}"))
        }
    }
}

/// A small deterministic generator (xorshift64*), so every run makes the same variants.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// The first number of every third line (comma-separated) replaced by a non-finite spelling.
fn non_finite(text: &str) -> String {
    let spellings = ["nan", "inf", "-inf", "1e999", "NaN"];
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if i % 3 == 2 {
            let mut done = false;
            let replaced: Vec<String> = line
                .split(',')
                .map(|tok| {
                    let t = tok.trim();
                    if !done && t.parse::<f64>().is_ok() && !t.is_empty() {
                        done = true;
                        tok.replace(t, spellings[i % spellings.len()])
                    } else {
                        tok.to_string()
                    }
                })
                .collect();
            out.push_str(&replaced.join(","));
        } else {
            out.push_str(line);
        }
    }
    out
}

/// The byte variants of one file: (case name, bytes).
fn variants(bytes: &[u8], seed: u64) -> Vec<(String, Vec<u8>)> {
    let mut rng = Rng(seed | 1);
    let mut v = Vec::new();
    for (label, at) in [
        ("a third", bytes.len() / 3),
        ("two thirds", bytes.len() * 2 / 3),
        ("one byte short", bytes.len().saturating_sub(1)),
        ("empty", 0),
    ] {
        v.push((format!("truncated to {label}"), bytes[..at].to_vec()));
    }
    for k in 0..6 {
        let mut b = bytes.to_vec();
        for _ in 0..(1 + k * 4) {
            if !b.is_empty() {
                let i = rng.below(b.len());
                b[i] ^= 1 << rng.below(8);
            }
        }
        v.push((format!("bit flips #{k}"), b));
    }
    let random: Vec<u8> = (0..4096).map(|_| rng.next() as u8).collect();
    v.push(("random bytes".into(), random));
    let text = String::from_utf8_lossy(bytes);
    let mut utf16 = vec![0xFF, 0xFE];
    utf16.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    v.push(("UTF-16 with BOM".into(), utf16));
    let mut bom = vec![0xEF, 0xBB, 0xBF];
    bom.extend_from_slice(bytes);
    v.push(("UTF-8 BOM".into(), bom));
    v.push(("NaN and inf values".into(), non_finite(&text).into_bytes()));
    v
}

/// Files beside `src` with its stem (a DT1's `.HD` header), copied whole into `dir`: the
/// variant is of the data file only.
fn copy_sidecars(src: &Path, dir: &Path) {
    let (Some(parent), Some(stem)) = (src.parent(), src.file_stem()) else {
        return;
    };
    let Ok(rd) = std::fs::read_dir(parent) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p != src && p.file_stem() == Some(stem) && p.is_file() {
            let _ = std::fs::copy(&p, dir.join(e.file_name()));
        }
    }
}

fn originals() -> Vec<PathBuf> {
    FILES
        .iter()
        .filter_map(|rel| field_data::data(rel))
        .collect()
}

#[test]
fn generated_variants_of_real_files_never_panic_or_hang_and_refusals_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut cases = 0;
    for (n, src) in originals().iter().enumerate() {
        let bytes = std::fs::read(src).unwrap();
        let name = src.file_name().unwrap();
        for (k, (case, b)) in variants(&bytes, 0x9E37_79B9 + n as u64)
            .into_iter()
            .enumerate()
        {
            let sub = dir.path().join(format!("{n}-{k}"));
            std::fs::create_dir_all(&sub).unwrap();
            let path = sub.join(name);
            std::fs::write(&path, b).unwrap();
            copy_sidecars(src, &sub);
            cases += 1;
            failures.extend(check(&format!("{} {case}", src.display()), &path));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {cases} cases:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn fifos_devices_links_and_huge_files_are_refused_by_type_or_size() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut failures = Vec::new();
    let mut refused = |case: &str, path: &Path, words: &str| match read_bounded(path) {
        Ok(Outcome::Refused(e)) if e.contains(words) => {}
        Ok(Outcome::Refused(e)) => failures.push(format!("{case}: expected '{words}': {e}")),
        Ok(Outcome::Read) => failures.push(format!("{case}: was read")),
        Err(e) => failures.push(format!("{case}: {e}")),
    };
    for ext in ["dat", "csv", "edi", "DZT", "sgy"] {
        let fifo = d.join(format!("pipe.{ext}"));
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo only creates a file.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        refused(&format!("FIFO .{ext}"), &fifo, "not a regular file");
        let zero = d.join(format!("zero.{ext}"));
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        refused(
            &format!("link to /dev/zero .{ext}"),
            &zero,
            "not a regular file",
        );
        // Sparse: 5 GiB long, no blocks on disk.
        let huge = d.join(format!("huge.{ext}"));
        std::fs::File::create(&huge)
            .unwrap()
            .set_len(5 << 30)
            .unwrap();
        refused(&format!("5 GiB sparse .{ext}"), &huge, "bytes");
        let (a, b) = (
            d.join(format!("loop_a.{ext}")),
            d.join(format!("loop_b.{ext}")),
        );
        std::os::unix::fs::symlink(&b, &a).unwrap();
        std::os::unix::fs::symlink(&a, &b).unwrap();
        refused(&format!("link loop .{ext}"), &a, "loop_a");
        let dangling = d.join(format!("dangling.{ext}"));
        std::os::unix::fs::symlink(d.join("nowhere"), &dangling).unwrap();
        refused(&format!("dangling link .{ext}"), &dangling, "dangling");
    }
    refused("a folder", d, "folder");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_link_to_a_real_file_reads_like_the_file() {
    let Some(src) = originals().into_iter().next() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join(src.file_name().unwrap());
    std::os::unix::fs::symlink(&src, &link).unwrap();
    let direct = read_summary(&src).map_err(|e| e.to_string());
    let linked = read_summary(&link).map_err(|e| e.to_string());
    assert!(direct.is_ok(), "{direct:?}");
    assert!(linked.is_ok(), "{linked:?}");
}
