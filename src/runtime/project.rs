//! The project file: a goal, the input roles (files the user chose), and settings.
//!
//! ```json
//! { "goal": "Where is the water table, and how did the plume change?",
//!   "inputs": { "ert_files": ["ert/2024-05-01.dat"], "seismic_file": "seismic/line1.sgt" },
//!   "config": { "inversion_params": { "lambda": 20 } } }
//! ```
//!
//! Input roles are the keys ending in `_file`, `_files` or `_dir`, with paths relative to the
//! project file. A project is a folder holding `project.json`, or the file itself.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::context::{RunContext, is_input_role};

/// The file name looked for in a project folder.
pub const PROJECT_FILE: &str = "project.json";

/// Why a project could not be opened.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProjectError {
    /// No such file or folder, or it could not be read.
    #[error("{path}: cannot read the project: {message}")]
    Io {
        /// What was opened.
        path: PathBuf,
        /// The system's message.
        message: String,
    },
    /// The file is not the expected JSON.
    #[error("{path}, line {line}: expected {expected}, found {found}")]
    Malformed {
        /// The project file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What the format needs.
        expected: String,
        /// What is there.
        found: String,
    },
}

/// An opened project.
#[derive(Debug, Clone, PartialEq)]
pub struct Project {
    /// The project file.
    pub file: PathBuf,
    /// The folder input paths are relative to.
    pub dir: PathBuf,
    /// The question, in the user's words.
    pub goal: String,
    /// Input roles as written (relative paths).
    pub inputs: Map<String, Value>,
    /// Settings.
    pub config: Map<String, Value>,
}

/// The largest project file read (projects are a few kB; data files are referenced, not inlined).
const MAX_PROJECT_BYTES: u64 = 16 * 1024 * 1024;

impl Project {
    /// Open a project file, or the `project.json` in a folder.
    pub fn load(path: &Path) -> Result<Project, ProjectError> {
        let file = if path.is_dir() {
            path.join(PROJECT_FILE)
        } else {
            path.to_path_buf()
        };
        let io = |message: String| ProjectError::Io {
            path: file.clone(),
            message,
        };
        // A FIFO or a device would block or never end; a huge file is not a project.
        if path.is_dir() && !file.exists() {
            return Err(io(format!(
                "there is no {PROJECT_FILE} in this folder; make one from its data files with File → New project from folder… or `hydrogeo-studio new <folder> --goal \"…\"`"
            )));
        }
        let meta = std::fs::metadata(&file).map_err(|e| io(e.to_string()))?;
        if !meta.is_file() {
            return Err(io(
                "not a regular file (a project is a JSON text file)".into()
            ));
        }
        if meta.len() > MAX_PROJECT_BYTES {
            return Err(io(format!(
                "{} bytes; a project file is at most {MAX_PROJECT_BYTES} bytes",
                meta.len()
            )));
        }
        let text = std::fs::read_to_string(&file).map_err(|e| io(e.to_string()))?;
        Project::parse(&text, &file)
    }

    /// Parse project JSON; `file` names it in errors and anchors relative paths.
    pub fn parse(text: &str, file: &Path) -> Result<Project, ProjectError> {
        // Editors on Windows write a byte-order mark; it is not part of the JSON.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let malformed = |line: usize, expected: &str, found: String| ProjectError::Malformed {
            path: file.to_path_buf(),
            line,
            expected: expected.to_string(),
            found,
        };
        // The line a key is written on, for errors about its value.
        let line_of = |key: &str| {
            let quoted = format!("\"{key}\"");
            text.lines()
                .position(|l| l.contains(&quoted))
                .map_or(1, |i| i + 1)
        };
        let value: Value = serde_json::from_str(text).map_err(|e| {
            malformed(
                e.line(),
                "a JSON object with \"goal\", \"inputs\" and \"config\"",
                format!("invalid JSON ({e})"),
            )
        })?;
        let Value::Object(mut root) = value else {
            return Err(malformed(1, "a JSON object", kind(&value).into()));
        };
        let goal = match root.remove("goal") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s,
            Some(other) => {
                return Err(malformed(
                    line_of("goal"),
                    "\"goal\" as text",
                    kind(&other).into(),
                ));
            }
        };
        let mut inputs = match root.remove("inputs") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => m,
            Some(other) => {
                return Err(malformed(
                    line_of("inputs"),
                    "\"inputs\" as an object of file roles",
                    kind(&other).into(),
                ));
            }
        };
        let mut config = match root.remove("config") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => m,
            Some(other) => {
                return Err(malformed(
                    line_of("config"),
                    "\"config\" as an object of settings",
                    kind(&other).into(),
                ));
            }
        };
        // A flat project (roles and settings at the top level) is read too.
        for (k, v) in root {
            if is_input_role(&k) {
                inputs.insert(k, v);
            } else {
                config.insert(k, v);
            }
        }
        // Roles written under config are moved to inputs; a non-role key under inputs is an error.
        let roles_in_config: Vec<String> = config
            .keys()
            .filter(|k| is_input_role(k))
            .cloned()
            .collect();
        for k in roles_in_config {
            if let Some(v) = config.remove(&k) {
                inputs.insert(k, v);
            }
        }
        for (k, v) in &inputs {
            if !is_input_role(k) {
                return Err(malformed(
                    line_of(k),
                    "input roles named *_file, *_files or *_dir",
                    format!("\"{k}\" under inputs"),
                ));
            }
            let ok = match v {
                Value::String(_) | Value::Null => true,
                Value::Array(a) => a.iter().all(Value::is_string),
                _ => false,
            };
            if !ok {
                return Err(malformed(
                    line_of(k),
                    &format!("\"{k}\" as a path or a list of paths"),
                    kind(v).into(),
                ));
            }
        }
        let dir = file
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        Ok(Project {
            file: file.to_path_buf(),
            dir,
            goal,
            inputs,
            config,
        })
    }

    /// A run context for this project.
    pub fn context(&self) -> RunContext {
        RunContext::new(&self.goal)
            .with_inputs(&self.inputs, &self.dir)
            .with_config(self.config.clone())
    }

    /// The inputs named here that do not exist on disk (key, resolved path).
    pub fn missing_inputs(&self) -> Vec<(String, PathBuf)> {
        let ctx = self.context();
        ctx.input_roles()
            .keys()
            .flat_map(|k| ctx.input_paths(k).into_iter().map(move |p| (k.clone(), p)))
            .filter(|(_, p)| !p.exists())
            .collect()
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a true/false value",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_design_example_parses_into_roles_and_settings() {
        let text = r#"{ "goal": "Where is the water table, and how did the plume change?",
          "inputs": { "ert_files": ["ert/2024-05-01.dat", "ert/2024-06-01.dat"],
                      "electrode_file": "ert/electrodes.csv",
                      "seismic_file": "seismic/line1.sgt" },
          "config": { "inversion_params": { "lambda": 20 }, "gpr_velocity_m_per_ns": 0.1 } }"#;
        let p = Project::parse(text, Path::new("/data/site/project.json")).unwrap();
        assert_eq!(p.dir, PathBuf::from("/data/site"));
        let ctx = p.context();
        assert_eq!(
            ctx.input_paths("ert_files"),
            vec![
                PathBuf::from("/data/site/ert/2024-05-01.dat"),
                PathBuf::from("/data/site/ert/2024-06-01.dat")
            ]
        );
        assert_eq!(ctx.config["inversion_params"]["lambda"], 20);
        assert!(!ctx.config.contains_key("seismic_file"));
    }

    /// Issue 19: a byte-order mark was "invalid JSON at line 1 column 1"; a FIFO blocked the
    /// read for ever.
    #[test]
    fn a_byte_order_mark_is_accepted_and_a_fifo_is_refused_by_type() {
        let p = Project::parse("\u{feff}{\"goal\": \"g\"}", Path::new("p.json")).unwrap();
        assert_eq!(p.goal, "g");
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("project.json");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo only creates a file.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = Project::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
    }

    #[test]
    fn errors_name_the_file_line_and_what_was_expected() {
        let e = Project::parse("{\n \"goal\": 3,\n}", Path::new("p.json"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("p.json, line 3: expected a JSON object"),
            "{e}"
        );
        let e = Project::parse(r#"{"inputs": {"lambda": 3}}"#, Path::new("p.json"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("input roles named") && e.contains("\"lambda\""),
            "{e}"
        );
        let e = Project::parse(r#"{"goal": 3}"#, Path::new("p.json"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "p.json, line 1: expected \"goal\" as text, found a number"
        );
    }
}
