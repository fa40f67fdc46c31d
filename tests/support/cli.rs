//! The built binary for the CLI tests, with no model whatever the machine's environment says.
#![allow(dead_code)]

use std::process::{Command, Output};

/// `hydrogeo-studio` with the model's environment cleared: the run follows dependency order.
pub fn studio() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hydrogeo-studio"));
    c.env_remove("HGX_PROVIDER")
        .env_remove("HGX_BASE_URL")
        .env("HGX_API_KEY_ENV", "HGX_TEST_NO_SUCH_KEY")
        .env("HGX_BASE_URL", "http://127.0.0.1:9/v1");
    c
}

/// Status, stdout and stderr, for assertion messages.
pub fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}
