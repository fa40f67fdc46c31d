//! The one way tests find the real field data in `../shared`.
//!
//! The data live beside the repository (`../shared/data`, `../shared/oracles`,
//! `../shared/bench`), never inside it. On a user's machine they are absent, and tests
//! that need them skip with a printed reason; with `HGX_REQUIRE_FIELD_DATA=1` (set by
//! `.ci/run`) a missing file fails the test instead, so CI cannot pass by skipping.
//!
//! Test support, not the product's API: the library's unit tests include this file
//! (`src/lib.rs`, `cfg(test)`), and each integration test or bench that reads field data
//! includes it as `#[macro_use] #[path = "…/support/field_data.rs"] mod field_data;`.

// Each including crate uses a part of it.
#![allow(dead_code, unused_macros)]

use std::path::{Path, PathBuf};

/// The environment variable that turns a missing field-data file into a test failure.
pub const REQUIRE_ENV: &str = "HGX_REQUIRE_FIELD_DATA";

/// `../shared` relative to the crate root (where `Cargo.toml` is).
pub fn shared_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("shared")
}

/// Whether a missing field-data file must fail the test (`HGX_REQUIRE_FIELD_DATA=1`).
pub fn required() -> bool {
    std::env::var(REQUIRE_ENV).is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true"))
}

/// A file under `../shared/<area>/<rel>` (`area` is `data`, `oracles` or `bench`), or `None`
/// when it is absent and absence is allowed — in which case the reason is printed so the
/// skipped test says why.
///
/// # Panics
/// When the file is absent and [`REQUIRE_ENV`] is set: that is the point of the variable.
pub fn shared_file(area: &str, rel: &str) -> Option<PathBuf> {
    let path = shared_root().join(area).join(rel);
    if path.exists() {
        return Some(path);
    }
    if required() {
        panic!(
            "field data required ({REQUIRE_ENV}=1) but missing: {}",
            path.display()
        );
    }
    eprintln!(
        "skipping: field data not found at {} (set {REQUIRE_ENV}=1 to make this a failure)",
        path.display()
    );
    None
}

/// A file under `../shared/data`.
pub fn data(rel: &str) -> Option<PathBuf> {
    shared_file("data", rel)
}

/// A file under `../shared/oracles`.
pub fn oracle(rel: &str) -> Option<PathBuf> {
    shared_file("oracles", rel)
}

/// A file under `../shared/bench`.
pub fn bench(rel: &str) -> Option<PathBuf> {
    shared_file("bench", rel)
}

/// The oracle JSON at `rel`, parsed; `None` when absent (and allowed to be).
///
/// # Panics
/// When the file exists and is not JSON: a broken oracle is a broken test.
pub fn oracle_json(rel: &str) -> Option<serde_json::Value> {
    let path = oracle(rel)?;
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read oracle {}: {e}", path.display()));
    Some(
        serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("oracle {} is not JSON: {e}", path.display())),
    )
}

/// Skip the current test (return early) when a field-data file is absent.
///
/// ```ignore
/// let path = require_data!("ert/gimli/gallery.dat");
/// ```
#[macro_export]
macro_rules! require_data {
    ($rel:expr) => {
        match $crate::field_data::data($rel) {
            Some(p) => p,
            None => return,
        }
    };
}

/// Skip the current test when an oracle file is absent; evaluates to the parsed JSON.
#[macro_export]
macro_rules! require_oracle {
    ($rel:expr) => {
        match $crate::field_data::oracle_json($rel) {
            Some(v) => v,
            None => return,
        }
    };
}
