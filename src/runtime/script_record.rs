//! The record of one offer of generated code (its own file, so that the run's context can
//! hold the records without depending on the code that makes the offers).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::events::AnsweredBy;

/// What became of one offer of code, for the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScriptRecord {
    /// 1-based number; the folder is `scripts/<n>/`.
    pub n: usize,
    /// `script`, `task` or `reader`.
    pub kind: String,
    /// What it was for.
    pub purpose: String,
    /// The source as the model wrote it.
    pub proposed: String,
    /// The source as the person edited it, when they did.
    pub edited: Option<String>,
    /// `run` or `decline`, and who decided (a person, or the default when nobody was there).
    pub decision: String,
    /// Who decided.
    pub by: AnsweredBy,
    /// `ok`, `failed`, `timed_out`, `declined`, `refused` (checks), `not_run` (no Python).
    pub status: String,
    /// What it returned (a script) or how many rows (a reader).
    pub result: Value,
    /// Files it wrote, relative to its folder's `out/`.
    pub files: Vec<String>,
    /// The end of what it printed.
    pub printed: String,
    /// Why it failed or was refused.
    pub error: String,
    /// Its folder.
    pub folder: PathBuf,
}
