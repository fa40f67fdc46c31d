//! `hydrogeo-studio slurm PROJECT --parts N …`: the two batch scripts that run a split
//! project on a Slurm cluster — `job.sbatch`, an array job whose task `i` runs
//! `run PROJECT --part i/N`, and `merge.sbatch`, submitted with `--dependency=afterany:` on the
//! array so it runs once every task has ended, however it ended — and their submission.

use std::path::{Path, PathBuf};
use std::process::Command;

/// What the scripts are made from.
#[derive(Debug, Clone, PartialEq)]
pub struct SlurmOptions {
    /// The program each task runs (this binary, by its absolute path).
    pub program: PathBuf,
    /// The project, by its absolute path.
    pub project: PathBuf,
    /// Parts in all (array tasks `0..n_parts`).
    pub n_parts: usize,
    /// `--partition`.
    pub partition: Option<String>,
    /// `--time` (HH:MM:SS).
    pub time: Option<String>,
    /// `--cpus-per-task`.
    pub cpus: Option<usize>,
    /// Further `#SBATCH` lines, as given.
    pub extra: Vec<String>,
    /// The folder of this submission: the scripts, `parts/`, `merged/`, `slurm/` (logs).
    pub dir: PathBuf,
}

/// Why the scripts could not be written or submitted.
#[derive(Debug, thiserror::Error)]
pub enum SlurmError {
    /// A value the scripts cannot carry.
    #[error("{what}: expected {expected}, found '{found}'")]
    Value {
        /// The option.
        what: String,
        /// What is accepted.
        expected: String,
        /// What was given.
        found: String,
    },
    /// Writing a script failed.
    #[error("{path}: cannot write: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// `sbatch` could not be started or refused the script.
    #[error("sbatch {script}: {message}")]
    Submit {
        /// The script.
        script: PathBuf,
        /// What went wrong (sbatch's own message when it answered).
        message: String,
    },
}

/// `text` quoted for a POSIX shell.
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

fn check(opts: &SlurmOptions) -> Result<(), SlurmError> {
    let bad = |what: &str, expected: &str, found: &str| SlurmError::Value {
        what: what.into(),
        expected: expected.into(),
        found: found.into(),
    };
    if opts.n_parts == 0 {
        return Err(bad("--parts", "at least 1", "0"));
    }
    if let Some(t) = &opts.time {
        let fields: Vec<&str> = t.split(':').collect();
        if fields.len() != 3
            || fields
                .iter()
                .any(|f| f.is_empty() || !f.chars().all(|c| c.is_ascii_digit()))
        {
            return Err(bad("--time", "HH:MM:SS", t));
        }
    }
    for (what, v) in [("--partition", &opts.partition)] {
        if let Some(v) = v
            && (v.is_empty() || v.chars().any(|c| c.is_whitespace() || c == '\''))
        {
            return Err(bad(what, "a partition name without spaces or quotes", v));
        }
    }
    for a in &opts.extra {
        if a.contains('\n') || !a.starts_with('-') {
            return Err(bad(
                "--sbatch-arg",
                "one sbatch option on one line, starting with '-' (e.g. --mem=4G)",
                a,
            ));
        }
    }
    Ok(())
}

fn header(opts: &SlurmOptions, name: &str, log: &str) -> String {
    let mut s = format!(
        "#!/bin/bash\n# Written by `hydrogeo-studio slurm` for {}.\n#SBATCH --job-name={name}\n#SBATCH --output={}\n",
        opts.project.display(),
        opts.dir.join("slurm").join(log).display()
    );
    if let Some(p) = &opts.partition {
        s.push_str(&format!("#SBATCH --partition={p}\n"));
    }
    if let Some(t) = &opts.time {
        s.push_str(&format!("#SBATCH --time={t}\n"));
    }
    if let Some(c) = opts.cpus {
        s.push_str(&format!("#SBATCH --cpus-per-task={c}\n"));
    }
    for a in &opts.extra {
        s.push_str(&format!("#SBATCH {a}\n"));
    }
    s
}

/// The folder the parts' run folders are written under.
pub fn parts_dir(dir: &Path) -> PathBuf {
    dir.join("parts")
}

/// The folder the merged run folder is written under.
pub fn merged_dir(dir: &Path) -> PathBuf {
    dir.join("merged")
}

/// The array job: task `$SLURM_ARRAY_TASK_ID` runs that part.
pub fn job_script(opts: &SlurmOptions) -> String {
    let mut s = header(opts, "hgx-parts", "part-%a.out");
    s.push_str(&format!(
        "#SBATCH --array=0-{}\n",
        opts.n_parts.saturating_sub(1)
    ));
    s.push_str(&format!(
        "\n# One part of {n}; its run folder goes under parts/part-<i>-of-{n}/. A part that fails is\n# recorded in its run folder, and the merge names it.\nexec {} run {} --part \"$SLURM_ARRAY_TASK_ID/{n}\" --out {}\n",
        shell_quote(&opts.program.display().to_string()),
        shell_quote(&opts.project.display().to_string()),
        shell_quote(&parts_dir(&opts.dir).display().to_string()),
        n = opts.n_parts,
    ));
    s
}

/// The merge job (submitted with `--dependency=afterany:<array job>`).
pub fn merge_script(opts: &SlurmOptions) -> String {
    let mut s = header(opts, "hgx-merge", "merge.out");
    s.push_str(&format!(
        "\n# Submitted with --dependency=afterany:<the array job>: it runs when every part has ended,\n# however it ended; a missing or failed part is named in the report's Not delivered.\nexec {} merge {} --out {}\n",
        shell_quote(&opts.program.display().to_string()),
        shell_quote(&parts_dir(&opts.dir).display().to_string()),
        shell_quote(&merged_dir(&opts.dir).display().to_string()),
    ));
    s
}

/// Write `job.sbatch` and `merge.sbatch` into `opts.dir` (and its `slurm/` log folder).
pub fn write_scripts(opts: &SlurmOptions) -> Result<(PathBuf, PathBuf), SlurmError> {
    check(opts)?;
    let w = |path: &Path, text: &str| -> Result<(), SlurmError> {
        let err = |source| SlurmError::Write {
            path: path.to_path_buf(),
            source,
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(err)?;
        }
        std::fs::write(path, text).map_err(|source| SlurmError::Write {
            path: path.to_path_buf(),
            source,
        })
    };
    let job = opts.dir.join("job.sbatch");
    let merge = opts.dir.join("merge.sbatch");
    w(&job, &job_script(opts))?;
    w(&merge, &merge_script(opts))?;
    std::fs::create_dir_all(opts.dir.join("slurm")).map_err(|source| SlurmError::Write {
        path: opts.dir.join("slurm"),
        source,
    })?;
    Ok((job, merge))
}

/// `sbatch --parsable [args] script`: the job id it printed.
pub fn sbatch(script: &Path, args: &[String]) -> Result<String, SlurmError> {
    let fail = |message: String| SlurmError::Submit {
        script: script.to_path_buf(),
        message,
    };
    let out = Command::new("sbatch")
        .arg("--parsable")
        .args(args)
        .arg(script)
        .output()
        .map_err(|e| fail(format!("cannot run sbatch ({e}); is Slurm installed here?")))?;
    if !out.status.success() {
        return Err(fail(format!(
            "exited with {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    // `--parsable` prints `id` or `id;cluster`.
    let text = String::from_utf8_lossy(&out.stdout);
    let id = text
        .trim()
        .split(';')
        .next()
        .unwrap_or_default()
        .to_string();
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
        return Err(fail(format!("expected a job id, found '{}'", text.trim())));
    }
    Ok(id)
}

/// Submit the array job, then the merge depending on it with `afterany`: (array id, merge id).
pub fn submit(job: &Path, merge: &Path) -> Result<(String, String), SlurmError> {
    let array = sbatch(job, &[])?;
    let merge_id = sbatch(merge, &[format!("--dependency=afterany:{array}")])?;
    Ok((array, merge_id))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> SlurmOptions {
        SlurmOptions {
            program: "/opt/hgx/hydrogeo-studio".into(),
            project: "/data/my project/project.json".into(),
            n_parts: 3,
            partition: Some("short".into()),
            time: Some("01:30:00".into()),
            cpus: Some(2),
            extra: vec!["--mem=4G".into()],
            dir: "/data/runs/slurm-1".into(),
        }
    }

    #[test]
    fn the_array_runs_each_part_and_the_merge_reads_every_part() {
        let o = opts();
        let job = job_script(&o);
        assert!(job.contains("#SBATCH --array=0-2\n"), "{job}");
        assert!(job.contains("#SBATCH --partition=short\n"));
        assert!(job.contains("#SBATCH --time=01:30:00\n"));
        assert!(job.contains("#SBATCH --cpus-per-task=2\n"));
        assert!(job.contains("#SBATCH --mem=4G\n"));
        assert!(
            job.contains(
                "exec '/opt/hgx/hydrogeo-studio' run '/data/my project/project.json' --part \"$SLURM_ARRAY_TASK_ID/3\" --out '/data/runs/slurm-1/parts'"
            ),
            "{job}"
        );
        let merge = merge_script(&o);
        assert!(!merge.contains("--array"), "{merge}");
        assert!(
            merge.contains(
                "exec '/opt/hgx/hydrogeo-studio' merge '/data/runs/slurm-1/parts' --out '/data/runs/slurm-1/merged'"
            ),
            "{merge}"
        );
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }

    #[test]
    fn bad_values_are_refused_before_anything_is_written() {
        let mut o = opts();
        o.time = Some("90 minutes".into());
        let e = check(&o).unwrap_err().to_string();
        assert!(e.contains("HH:MM:SS") && e.contains("90 minutes"), "{e}");
        let mut o = opts();
        o.extra = vec!["mem=4G\n#SBATCH --x".into()];
        assert!(check(&o).is_err());
    }
}
