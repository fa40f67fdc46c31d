//! A project from a folder of data files (issue 24): every file in the folder is put to the
//! readers ([`super::read_summary`]), each recognised file gets the input role its method
//! reads it under, and `project.json` is written beside the data. The data files are only
//! read; an existing `project.json` is never overwritten.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::kit::keys;
use super::kit::methods::by_id;
use crate::runtime::project::PROJECT_FILE;

/// The most files a folder scan reads (a folder of thousands is not a survey: it is refused
/// by name rather than read for minutes).
pub const MAX_SCANNED_FILES: usize = 400;

/// How deep a scan goes below the folder (the example keeps each method in a sub-folder).
pub const MAX_SCAN_DEPTH: usize = 3;

/// Why a folder could not become a project.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NewProjectError {
    /// The folder cannot be listed.
    #[error("{path}: cannot list the folder: {message}")]
    Unreadable {
        /// The folder.
        path: PathBuf,
        /// The system's message.
        message: String,
    },
    /// More files than a scan reads.
    #[error(
        "{path}: more than {MAX_SCANNED_FILES} files; choose the folder that holds the survey's files"
    )]
    TooMany {
        /// The folder.
        path: PathBuf,
    },
    /// A project file is already there (it is never overwritten).
    #[error("{path} exists already; open it instead (it is never overwritten)")]
    Exists {
        /// The existing project file.
        path: PathBuf,
    },
    /// No file was given a role.
    #[error("{path}: no file in the folder was recognised by a reader")]
    Nothing {
        /// The folder.
        path: PathBuf,
    },
    /// The project file could not be written.
    #[error("{path}: cannot write the project: {message}")]
    Write {
        /// The project file.
        path: PathBuf,
        /// The system's message.
        message: String,
    },
}

/// One file of the folder and what the readers made of it.
#[derive(Debug, Clone, PartialEq)]
pub struct ScannedFile {
    /// The file, relative to the folder.
    pub path: PathBuf,
    /// The method whose reader recognised it (`None`: no reader did).
    pub method: Option<String>,
    /// The format the reader named, or why no reader took it.
    pub format: String,
    /// The input role it goes under (editable before the project is written; `None`: left
    /// out).
    pub role: Option<String>,
}

/// Read every file under `dir` (to [`MAX_SCAN_DEPTH`], skipping hidden entries, `runs/` and
/// `project.json`) and give each recognised one its role. Files in the order of their paths.
pub fn scan_folder(dir: &Path) -> Result<Vec<ScannedFile>, NewProjectError> {
    let mut files = Vec::new();
    list(dir, dir, 0, &mut files)?;
    files.sort();
    let mut out: Vec<ScannedFile> = files.into_iter().map(|rel| scan_file(dir, rel)).collect();
    settle_single_roles(&mut out);
    Ok(out)
}

/// The files under `dir`, relative to `root`.
fn list(
    root: &Path,
    dir: &Path,
    depth: usize,
    out: &mut Vec<PathBuf>,
) -> Result<(), NewProjectError> {
    let unreadable = |e: std::io::Error| NewProjectError::Unreadable {
        path: dir.to_path_buf(),
        message: e.to_string(),
    };
    for entry in std::fs::read_dir(dir).map_err(unreadable)? {
        let entry = entry.map_err(unreadable)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name == PROJECT_FILE || (depth == 0 && name == "runs") {
            continue;
        }
        // The entry's own type: a link is not followed (a link cycle would never end).
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if kind.is_dir() && depth < MAX_SCAN_DEPTH {
            list(root, &path, depth + 1, out)?;
        } else if kind.is_file() {
            if out.len() >= MAX_SCANNED_FILES {
                return Err(NewProjectError::TooMany {
                    path: root.to_path_buf(),
                });
            }
            if let Ok(rel) = path.strip_prefix(root) {
                out.push(rel.to_path_buf());
            }
        }
    }
    Ok(())
}

fn scan_file(dir: &Path, rel: PathBuf) -> ScannedFile {
    match super::read_summary(&dir.join(&rel)) {
        Ok(summary) => {
            let method = summary
                .get("method")
                .and_then(Value::as_str)
                .map(str::to_string);
            let format = summary
                .get("format")
                .and_then(Value::as_str)
                .unwrap_or("recognised")
                .to_string();
            ScannedFile {
                role: role_for(&summary).map(str::to_string),
                path: rel,
                method,
                format,
            }
        }
        Err(e) => ScannedFile {
            path: rel,
            method: None,
            format: format!("not read: {}", last_cause(&e)),
            role: None,
        },
    }
}

/// The error's innermost sentence, without the path the table already shows.
fn last_cause(e: &anyhow::Error) -> String {
    let text = e.root_cause().to_string();
    match text.split_once(": ") {
        Some((head, tail)) if head.contains('/') || head.contains('\\') => tail.to_string(),
        _ => text,
    }
}

/// The role a file goes under, from its reader's summary: the method's main role, refined by
/// what the file holds (raw shot gathers, a geophone table, a TDEM geometry table).
pub fn role_for(summary: &Value) -> Option<&'static str> {
    let method = by_id(summary.get("method")?.as_str()?)?;
    let format = summary.get("format").and_then(Value::as_str).unwrap_or("");
    let kind = summary.get("kind").and_then(Value::as_str).unwrap_or("");
    Some(match method.id {
        "seismic" if format.starts_with("SEG-Y") => keys::SEGY_FILE,
        "seismic" if format.starts_with("SEG-2") => keys::SEG2_FILES,
        "seismic" if kind.contains("geophone") => keys::GEOPHONE_FILE,
        "tdem" if format == "geometry_table" => keys::TDEM_GEOMETRY_FILE,
        _ => method.main_role,
    })
}

/// A role that takes one file keeps the first; the others are left out (said in the table).
fn settle_single_roles(files: &mut [ScannedFile]) {
    let mut taken: Vec<String> = Vec::new();
    for f in files.iter_mut() {
        let Some(role) = f.role.clone() else {
            continue;
        };
        if role.ends_with("_files") {
            continue;
        }
        if taken.contains(&role) {
            f.format = format!("{} (left out: {role} takes one file)", f.format);
            f.role = None;
        } else {
            taken.push(role);
        }
    }
}

/// The project JSON for `goal` and the files' roles (paths relative to the folder, `/`
/// separated).
pub fn project_json(goal: &str, files: &[ScannedFile]) -> Value {
    let mut inputs = Map::new();
    for f in files {
        let Some(role) = &f.role else {
            continue;
        };
        let path = Value::from(
            f.path
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/"),
        );
        if role.ends_with("_files") {
            let entry = inputs
                .entry(role.clone())
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(a) = entry {
                a.push(path);
            }
        } else {
            inputs.insert(role.clone(), path);
        }
    }
    serde_json::json!({"goal": goal.trim(), "inputs": inputs, "config": {}})
}

/// Write `dir/project.json` for `goal` and `files`; never over an existing one. Returns its
/// path.
pub fn write_project(
    dir: &Path,
    goal: &str,
    files: &[ScannedFile],
) -> Result<PathBuf, NewProjectError> {
    let path = dir.join(PROJECT_FILE);
    if files.iter().all(|f| f.role.is_none()) {
        return Err(NewProjectError::Nothing {
            path: dir.to_path_buf(),
        });
    }
    let text = serde_json::to_string_pretty(&project_json(goal, files)).unwrap_or_default();
    let write_err = |e: std::io::Error| NewProjectError::Write {
        path: path.clone(),
        message: e.to_string(),
    };
    // create_new: a project.json that appeared meanwhile is not overwritten either.
    let mut f = match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(NewProjectError::Exists { path });
        }
        Err(e) => return Err(write_err(e)),
    };
    use std::io::Write;
    f.write_all(text.as_bytes())
        .and_then(|()| f.write_all(b"\n"))
        .and_then(|()| f.sync_all())
        .map_err(write_err)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bundled example's data without its project file.
    fn example_data() -> tempfile::TempDir {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/example");
        let tmp = tempfile::tempdir().unwrap();
        copy(&src, tmp.path());
        std::fs::remove_file(tmp.path().join(PROJECT_FILE)).unwrap();
        tmp
    }

    fn copy(src: &Path, dst: &Path) {
        std::fs::create_dir_all(dst).unwrap();
        for e in std::fs::read_dir(src).unwrap().flatten() {
            if e.file_name() == "runs" {
                continue;
            }
            let to = dst.join(e.file_name());
            if e.path().is_dir() {
                copy(&e.path(), &to);
            } else {
                std::fs::copy(e.path(), to).unwrap();
            }
        }
    }

    #[test]
    fn the_examples_files_get_the_roles_of_its_project() {
        let tmp = example_data();
        let files = scan_folder(tmp.path()).unwrap();
        let v = project_json("Where is the water table?", &files);
        // The bundled project.json, written by hand, is the reference.
        let bundled: Value = serde_json::from_str(
            &std::fs::read_to_string(
                Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/example/project.json"),
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(v["inputs"], bundled["inputs"], "{files:#?}");
        let truth = files
            .iter()
            .find(|f| f.path == Path::new("truth.json"))
            .unwrap();
        assert_eq!(truth.role, None, "not data: {truth:?}");
        assert!(truth.format.starts_with("not read: "), "{truth:?}");
    }

    #[test]
    fn the_project_is_written_once_and_never_over_an_existing_one() {
        let tmp = example_data();
        let files = scan_folder(tmp.path()).unwrap();
        let before = std::fs::read(tmp.path().join("ert/2024-05-01.dat")).unwrap();
        let p = write_project(tmp.path(), "  Where is the water table? ", &files).unwrap();
        let project = crate::runtime::Project::load(tmp.path()).unwrap();
        assert_eq!(project.goal, "Where is the water table?");
        assert_eq!(project.inputs["ert_files"].as_array().unwrap().len(), 4);
        assert_eq!(
            write_project(tmp.path(), "again", &files),
            Err(NewProjectError::Exists { path: p.clone() })
        );
        assert_eq!(
            crate::runtime::Project::load(tmp.path()).unwrap().goal,
            "Where is the water table?",
            "the first project stays"
        );
        assert_eq!(
            std::fs::read(tmp.path().join("ert/2024-05-01.dat")).unwrap(),
            before,
            "the data are only read"
        );
    }

    #[test]
    fn a_folder_of_nothing_recognisable_is_refused_by_name() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("notes.txt"), "field notes\n").unwrap();
        let files = scan_folder(tmp.path()).unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(
            write_project(tmp.path(), "goal", &files),
            Err(NewProjectError::Nothing {
                path: tmp.path().to_path_buf()
            })
        );
        assert!(!tmp.path().join(PROJECT_FILE).exists());
    }

    #[test]
    fn a_second_file_for_a_one_file_role_is_left_out_and_said() {
        let tmp = example_data();
        std::fs::copy(
            tmp.path().join("gpr/line1.dzt"),
            tmp.path().join("gpr/line2.dzt"),
        )
        .unwrap();
        let files = scan_folder(tmp.path()).unwrap();
        let second = files
            .iter()
            .find(|f| f.path == Path::new("gpr/line2.dzt"))
            .unwrap();
        assert_eq!(second.role, None);
        assert!(
            second.format.contains("left out: gpr_file takes one file"),
            "{second:?}"
        );
        let v = project_json("g", &files);
        assert_eq!(v["inputs"]["gpr_file"], "gpr/line1.dzt");
    }
}
