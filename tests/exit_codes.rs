//! The CLI's documented exit codes (README, "Exit codes"), through the built binary:
//! 0 success, 1 incomplete or stopped, 2 bad input, 3 internal (the run's files could not be
//! written). Issue 19 item 5: a full disk used to leave a zero-byte report.md and result.json
//! and exit 0.

mod support;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output};
use support::cli::{studio, text};

fn code(out: &Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

/// A project whose one input does not exist: the run ends `incomplete` quickly, with a
/// report that says so.
fn missing_input_project(dir: &Path) {
    std::fs::write(
        dir.join("project.json"),
        r#"{"goal": "Map the gravity anomaly", "inputs": {"gravmag_file": "missing.csv"}}"#,
    )
    .unwrap();
}

#[test]
fn help_is_success() {
    let out = studio().arg("--help").output().unwrap();
    assert_eq!(code(&out), 0, "{}", text(&out));
}

#[test]
fn bad_input_exits_2_naming_the_cause() {
    let out = studio()
        .args(["run", "/nonexistent/hgx-project"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2, "{}", text(&out));
    assert!(
        text(&out).contains("/nonexistent/hgx-project"),
        "{}",
        text(&out)
    );
    let out = studio().args(["run", "--no-such-option"]).output().unwrap();
    assert_eq!(code(&out), 2, "{}", text(&out));
    assert!(text(&out).contains("--no-such-option"), "{}", text(&out));
    let out = studio().arg("frobnicate").output().unwrap();
    assert_eq!(code(&out), 2, "{}", text(&out));
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.dat");
    std::fs::write(&junk, "not a survey\n").unwrap();
    let out = studio().arg("read").arg(&junk).output().unwrap();
    assert_eq!(code(&out), 2, "{}", text(&out));
}

#[test]
fn an_incomplete_run_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    missing_input_project(dir.path());
    let out = studio().arg("run").arg(dir.path()).output().unwrap();
    assert_eq!(code(&out), 1, "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or_default();
    assert!(last.starts_with("incomplete: "), "{}", text(&out));
}

/// RLIMIT_FSIZE stands in for a full disk: every write past `bytes` fails with EFBIG (and
/// SIGXFSZ is ignored, so the write returns an error instead of killing the process).
fn with_file_size_limit(c: &mut Command, bytes: u64) {
    // SAFETY: between fork and exec only async-signal-safe calls (setrlimit, signal) are made.
    unsafe {
        c.pre_exec(move || {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let lim = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[test]
fn a_run_whose_result_cannot_be_written_exits_3_and_leaves_no_empty_file() {
    let dir = tempfile::tempdir().unwrap();
    missing_input_project(dir.path());
    let runs = dir.path().join("runs");
    let mut c = studio();
    c.arg("run").arg(dir.path()).arg("--out").arg(&runs);
    // run.json (~600 bytes) fits; result.json and the report (several kB) do not.
    with_file_size_limit(&mut c, 1500);
    let out = c.output().unwrap();
    assert_eq!(code(&out), 3, "{}", text(&out));
    assert!(text(&out).contains("result.json"), "{}", text(&out));
    let run_dir = std::fs::read_dir(&runs)
        .unwrap()
        .next()
        .expect("a run folder")
        .unwrap()
        .path();
    for entry in std::fs::read_dir(&run_dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        assert!(!name.ends_with(".tmp"), "temporary file left: {name}");
        let meta = entry.metadata().unwrap();
        if meta.is_file() && name != "journal.jsonl" {
            assert!(meta.len() > 0, "{name} is empty");
        }
    }
}
