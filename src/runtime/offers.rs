//! Code a model writes, put to the person: temporary scripts and generated readers for
//! coordinate tables. Each is checked before anyone is asked, shown in the review dialog
//! (purpose, inputs, code as separate fields), run only on an explicit yes — nobody there is
//! no — and kept in `scripts/<n>/` with its source, the edited version if the person changed
//! it, its purpose, inputs, what it printed and returned, the files it wrote and the decision.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::context::RunContext;
use super::decide::{CodeKind, CodeProposal, CodeRequest, Decide, ModelEvent};
use super::scratch::{self, Kind};
pub use super::script_record::ScriptRecord;

/// Fixes the model may write for an approved script that failed, each put to the person again.
pub const MAX_SCRIPT_FIXES: usize = 1;

/// The first lines of a file (or what kind of thing it is), for a model and a person.
pub fn preview(path: &Path, lines: usize, max_bytes: usize) -> String {
    if path.is_dir() {
        let mut names: Vec<String> = std::fs::read_dir(path)
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names.truncate(25);
        return format!("(folder) {}", names.join(", "));
    }
    let Ok(bytes) = std::fs::read(path) else {
        return "(unreadable)".into();
    };
    let head = &bytes[..bytes.len().min(max_bytes)];
    if head.contains(&0) {
        return format!("(binary, {} bytes)", bytes.len());
    }
    String::from_utf8_lossy(head)
        .lines()
        .take(lines)
        .collect::<Vec<_>>()
        .join("\n")
}

/// What a script (and the diagnosis) is told it may read (seed 000, `input_paths`): the run's
/// input files that exist, by key (`key[i]` for a list), then the files the run's steps have
/// written so far, by product (`product` for one file, `product.<file name>` for several).
pub fn input_files(ctx: &RunContext) -> Vec<(String, PathBuf)> {
    let mut out = given_input_files(ctx);
    for key in ctx.artifact_keys() {
        let Some(p) = ctx.product(&key) else {
            continue;
        };
        let files: Vec<PathBuf> = p.files().into_iter().filter(|f| f.is_file()).collect();
        let many = files.len() > 1;
        for f in files {
            let name = if many {
                format!(
                    "{key}.{}",
                    f.file_name()
                        .map(|n| n.to_string_lossy())
                        .unwrap_or_default()
                )
            } else {
                key.clone()
            };
            if !out.iter().any(|(k, _)| *k == name) {
                out.push((name, f));
            }
        }
    }
    out
}

/// The run's input files, by key (`key[i]` for lists), that exist.
pub fn given_input_files(ctx: &RunContext) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for key in ctx.input_roles().keys() {
        let paths = ctx.input_paths(key);
        let many = paths.len() > 1 || key.ends_with("_files");
        for (i, p) in paths.into_iter().enumerate() {
            if p.exists() {
                out.push((
                    if many {
                        format!("{key}[{i}]")
                    } else {
                        key.clone()
                    },
                    p,
                ));
            }
        }
    }
    out
}

fn samples(inputs: &[(String, PathBuf)]) -> String {
    let s: String = inputs
        .iter()
        .map(|(k, p)| format!("- {k}: {}\n{}\n", p.display(), preview(p, 12, 1500)))
        .collect();
    if s.is_empty() {
        "(none)".into()
    } else {
        s.chars().take(6000).collect()
    }
}

fn next_folder(ctx: &RunContext) -> (usize, PathBuf) {
    let n = ctx.scripts.len() + 1;
    let base = ctx
        .output_dir
        .clone()
        .unwrap_or_else(std::env::temp_dir)
        .join("scripts");
    (n, base.join(n.to_string()))
}

/// Save the script's record in its folder. The script ran in that folder and may have left a
/// link named like one of these files: each is written through the atomic writer, which
/// replaces a link instead of writing through it (issue 19).
pub(crate) fn save_record(r: &ScriptRecord) {
    use super::run_folder::write_file_atomic;
    let _ = std::fs::create_dir_all(&r.folder);
    let mut files: Vec<(&str, String)> = vec![
        ("proposed.py", r.proposed.clone()),
        ("purpose.txt", r.purpose.clone()),
        ("printed.txt", r.printed.clone()),
        (
            "record.json",
            serde_json::to_string_pretty(r).unwrap_or_default(),
        ),
    ];
    if let Some(e) = &r.edited {
        files.push(("edited.py", e.clone()));
    }
    for (name, text) in files {
        let _ = write_file_atomic(&r.folder.join(name), text.as_bytes());
    }
}

/// Ask the model for code; a draft that breaks a rule is sent back once with the reason.
fn write_checked(
    decider: &mut dyn Decide,
    mut request: CodeRequest,
    kind: Kind,
    notes: &mut Vec<String>,
) -> Result<CodeProposal, String> {
    let mut last = String::from("no code was written");
    for _ in 0..2 {
        let mut on_event = |e: ModelEvent| {
            if let ModelEvent::Note(n) = e {
                notes.push(n);
            }
        };
        let proposal = match decider.write_code(&request, &mut on_event) {
            None => return Err("there is no model to write it".into()),
            Some(Err(e)) => return Err(e.to_string()),
            Some(Ok(p)) => p,
        };
        match scratch::check(&proposal.code, kind) {
            Ok(_) => return Ok(proposal),
            Err(why) => {
                last = why.clone();
                request.previous = Some((
                    proposal.code,
                    format!("It was refused before anyone was asked: {why}"),
                ));
                request.previous_ran = false;
            }
        }
    }
    Err(last)
}

/// The outcome of an offer.
#[derive(Debug, Clone, PartialEq)]
pub enum Offer {
    /// It ran and succeeded.
    Ran(ScriptRecord),
    /// It ran and failed (after any fix the person approved).
    Failed(ScriptRecord),
    /// Nobody said yes (declined, or nobody there).
    Declined(ScriptRecord),
    /// It could not be offered: no model, no Python, or the code broke the rules twice.
    NotOffered(String),
}

/// Offer a temporary script for `task` (a failed step's way past its cause, or something no
/// step does). The run is never changed here; the caller decides what a success means.
pub fn offer_script(
    ctx: &mut RunContext,
    decider: &mut dyn Decide,
    kind: CodeKind,
    tool: &str,
    error: &str,
    task: &str,
    intro: &str,
) -> Offer {
    if scratch::python().is_none() {
        let why = "there is no Python on this machine, so no script can run".to_string();
        ctx.note(&format!(
            "A temporary script was considered ({task}), but {why}; it was recorded as not run."
        ));
        return Offer::NotOffered(why);
    }
    let inputs = input_files(ctx);
    let request = CodeRequest {
        kind,
        transcript: ctx.transcript(12),
        tool: tool.to_string(),
        error: error.chars().take(800).collect(),
        task: task.to_string(),
        samples: samples(&inputs),
        columns: String::new(),
        contract: scratch::SCRIPT_CONTRACT.to_string(),
        previous: None,
        previous_ran: false,
    };
    let mut notes = Vec::new();
    let mut proposal = match write_checked(decider, request.clone(), Kind::Script, &mut notes) {
        Ok(p) => p,
        Err(why) => {
            for n in notes {
                ctx.note(&n);
            }
            ctx.note(&format!(
                "A temporary script ({task}) could not be written: {why}."
            ));
            return Offer::NotOffered(why);
        }
    };
    let mut intro = intro.to_string();
    let mut last: Option<ScriptRecord> = None;
    for attempt in 0..=MAX_SCRIPT_FIXES {
        let (n, folder) = next_folder(ctx);
        let shown_inputs: Vec<(String, String)> = inputs
            .iter()
            .map(|(k, p)| (k.clone(), p.display().to_string()))
            .collect();
        let purpose = format!("{intro} {}", proposal.purpose).trim().to_string();
        let (answer, by) = ctx.review_script(
            &purpose,
            shown_inputs,
            &proposal.code,
            "python",
            scratch::protections(),
        );
        let mut record = ScriptRecord {
            n,
            kind: match kind {
                CodeKind::Task => "task",
                _ => "script",
            }
            .into(),
            purpose: purpose.clone(),
            proposed: proposal.code.clone(),
            edited: answer.edited_source.clone().filter(|e| *e != proposal.code),
            decision: if answer.run { "run" } else { "decline" }.into(),
            by,
            status: "declined".into(),
            result: Value::Null,
            files: Vec::new(),
            printed: String::new(),
            error: String::new(),
            folder: folder.clone(),
        };
        if !answer.run {
            save_record(&record);
            ctx.scripts.push(record.clone());
            return Offer::Declined(record);
        }
        let source = record
            .edited
            .clone()
            .unwrap_or_else(|| proposal.code.clone());
        if record.edited.is_some()
            && let Err(why) = scratch::check(&source, Kind::Script)
        {
            record.status = "refused".into();
            record.error = format!("The edited script was checked again and refused: {why}");
            save_record(&record);
            ctx.scripts.push(record.clone());
            ctx.note(&record.error);
            return Offer::Failed(record);
        }
        let run = run_approved(ctx, &source, &inputs, &folder, task, &purpose, attempt);
        record.status = run.status.clone();
        record.result = run.result.clone();
        record.files = run.files.clone();
        record.printed = run.printed.clone();
        record.error = run.error.clone();
        let failed = run.status != "ok";
        save_record(&record);
        ctx.scripts.push(record.clone());
        if !failed {
            return Offer::Ran(record);
        }
        last = Some(record.clone());
        if attempt >= MAX_SCRIPT_FIXES {
            break;
        }
        let mut fix = request.clone();
        fix.previous = Some((
            source.clone(),
            format!("{}\nIt printed:\n{}", run.error, run.printed),
        ));
        fix.previous_ran = true;
        match write_checked(decider, fix, Kind::Script, &mut notes) {
            Ok(p) if p.code.trim() != source.trim() => {
                intro = format!(
                    "The script you approved failed ({}). It has been fixed.",
                    last_line(&run.error)
                );
                proposal = p;
            }
            _ => {
                ctx.note(&format!(
                    "The approved temporary script failed ({}), and no different fix could be written.",
                    last_line(&run.error)
                ));
                break;
            }
        }
    }
    for n in notes {
        ctx.note(&n);
    }
    match last {
        Some(r) => Offer::Failed(r),
        None => Offer::NotOffered("nothing ran".into()),
    }
}

/// Run an approved script as a step of the run (`attempt` 0 = as first approved, then a
/// fix), recording it done or failed with what it returned and wrote.
fn run_approved(
    ctx: &mut RunContext,
    source: &str,
    inputs: &[(String, PathBuf)],
    folder: &Path,
    task: &str,
    purpose: &str,
    attempt: usize,
) -> scratch::ScriptRun {
    let step = ctx.begin("temporary_script", task);
    step.label = if attempt == 0 {
        "Run an approved temporary script".into()
    } else {
        "Run the fixed temporary script".into()
    };
    step.module = "project".into();
    step.purpose = purpose.to_string();
    let run = scratch::run_script(source, inputs, folder, scratch::DEFAULT_TIMEOUT);
    let summary = if run.status == "ok" {
        format!(
            "The approved script ran in {:.1} s{}{} (kept in {}).",
            run.seconds,
            if run.result.is_null() {
                String::new()
            } else {
                format!(" and returned {}", short(&run.result))
            },
            if run.files.is_empty() {
                String::new()
            } else {
                format!("; it wrote {}", run.files.join(", "))
            },
            folder.display()
        )
    } else {
        String::new()
    };
    let failed = run.status != "ok";
    ctx.finish(
        &summary,
        if failed {
            super::step::StepStatus::Failed
        } else {
            super::step::StepStatus::Ok
        },
        &if failed {
            format!(
                "The approved script {}: {}",
                run.status.replace('_', " "),
                last_line(&run.error)
            )
        } else {
            String::new()
        },
    );
    run
}

/// Offer a generated reader for the coordinate table under `file_key`. On success the rows are
/// written as a plain table in the run folder (`adapted/<name>.txt`), which stands in for the
/// user's file (untouched) from then on. Returns the new path. An approved reader that fails
/// is sent back once with its failure (seed 001 `ADAPTER_RETRY`), and the fix is put to the
/// person again.
pub fn offer_reader(
    ctx: &mut RunContext,
    decider: &mut dyn Decide,
    file_key: &str,
    error: &str,
) -> Result<PathBuf, String> {
    let Some((columns, meaning)) = ctx
        .recovery
        .table(file_key)
        .map(|t| (t.columns, t.meaning.clone()))
    else {
        return Err(format!(
            "{file_key} is not a coordinate table a reader may be written for"
        ));
    };
    let path = ctx
        .input_path(file_key)
        .ok_or_else(|| format!("the run has no {file_key}"))?;
    if scratch::python().is_none() {
        let why = "there is no Python on this machine, so no reader can run".to_string();
        ctx.note(&format!(
            "A generated reader for {} was considered, but {why}.",
            path.display()
        ));
        return Err(why);
    }
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut request = CodeRequest {
        kind: CodeKind::Reader,
        transcript: ctx.transcript(12),
        tool: String::new(),
        error: error.chars().take(800).collect(),
        task: format!("Read the table in {} ({file_key}).", path.display()),
        samples: preview(&path, 12, 1200),
        columns: meaning.to_string(),
        contract: READER_CONTRACT.into(),
        previous: None,
        previous_ran: false,
    };
    let table = Table {
        key: file_key,
        path: &path,
        text: &text,
        columns,
        meaning: &meaning,
    };
    let mut last = String::new();
    for attempt in 0..=MAX_SCRIPT_FIXES {
        let mut notes = Vec::new();
        let written = write_checked(decider, request.clone(), Kind::Adapter, &mut notes);
        for n in notes {
            ctx.note(&n);
        }
        let proposal = match written {
            Ok(p) => p,
            Err(why) if attempt == 0 => return Err(why),
            Err(why) => return Err(format!("{last}; no fix could be written ({why})")),
        };
        let source = match review_reader(ctx, &table, error, &proposal, attempt)? {
            Some(source) => source,
            None => return Err("the generated reader was not approved".into()),
        };
        match run_reader(ctx, &table, &source) {
            Ok(target) => return Ok(target),
            Err(e) => {
                last = format!("the approved reader failed: {e}");
                request.previous = Some((source, e));
                request.previous_ran = true;
            }
        }
    }
    Err(last)
}

/// What a generated reader must be, as the model is told.
const READER_CONTRACT: &str = "Write one function `def adapt(text):` that takes the file's text and returns a list of rows, each a list of numbers. No imports, no file or network access (never `open(`); only the text you are given and plain builtins (len, float, int, str, range, enumerate, zip, min, max, sum, sorted, list, dict, set, tuple, abs, round, any, all, map, filter, isinstance).";

/// The coordinate table a reader is written for.
struct Table<'a> {
    key: &'a str,
    path: &'a Path,
    text: &'a str,
    columns: usize,
    meaning: &'a str,
}

/// Put a reader to the person. `Ok(Some(source))` to run (edited or not), `Ok(None)` declined
/// (recorded), `Err` an edited reader that the checks refuse (recorded).
fn review_reader(
    ctx: &mut RunContext,
    table: &Table<'_>,
    error: &str,
    proposal: &CodeProposal,
    attempt: usize,
) -> Result<Option<String>, String> {
    let (n, folder) = next_folder(ctx);
    let head = if attempt == 0 {
        format!(
            "{} could not be read ({}).",
            table.path.display(),
            error.chars().take(200).collect::<String>()
        )
    } else {
        format!(
            "The reader you approved for {} failed; the model has fixed it.",
            table.path.display()
        )
    };
    let purpose = format!(
        "{head} This reader turns it into {}. {}",
        table.meaning, proposal.purpose
    );
    let (answer, by) = ctx.review_script(
        &purpose,
        vec![(table.key.to_string(), table.path.display().to_string())],
        &proposal.code,
        "python-adapter",
        scratch::protections(),
    );
    let mut record = ScriptRecord {
        n,
        kind: "reader".into(),
        purpose,
        proposed: proposal.code.clone(),
        edited: answer.edited_source.clone().filter(|e| *e != proposal.code),
        decision: if answer.run { "run" } else { "decline" }.into(),
        by,
        status: "declined".into(),
        result: Value::Null,
        files: Vec::new(),
        printed: String::new(),
        error: String::new(),
        folder,
    };
    if !answer.run {
        save_record(&record);
        ctx.scripts.push(record);
        return Ok(None);
    }
    let source = record
        .edited
        .clone()
        .unwrap_or_else(|| proposal.code.clone());
    if record.edited.is_some()
        && let Err(why) = scratch::check(&source, Kind::Adapter)
    {
        record.status = "refused".into();
        record.error = format!("The edited reader was checked again and refused: {why}");
        save_record(&record);
        let e = record.error.clone();
        ctx.scripts.push(record);
        return Err(e);
    }
    record.status = "approved".into();
    ctx.scripts.push(record);
    Ok(Some(source))
}

/// Run the approved reader (the last script record) and, on success, put its table in place of
/// the user's file for the rest of the run.
fn run_reader(ctx: &mut RunContext, table: &Table<'_>, source: &str) -> Result<PathBuf, String> {
    let Some(mut record) = ctx.scripts.pop() else {
        return Err("no reader was recorded".into());
    };
    let rows = scratch::run_adapter(source, table.text, table.columns, &record.folder);
    let out = rows.and_then(|rows| {
        let target = write_rows(ctx, table.path, &rows)?;
        record.status = "ok".into();
        record.result = json!({"rows": rows.len(), "columns": table.columns});
        record.files = vec![target.display().to_string()];
        let n = record.n;
        ctx.substitute_input(
            table.key,
            &target,
            &format!("rewritten by a generated reader you approved (scripts/{n})"),
        )?;
        ctx.note(&format!(
            "{} was read by code a model wrote and you approved (scripts/{n}); it produced {} rows, written to {}. Your file is unchanged.",
            table.path.display(),
            rows.len(),
            target.display()
        ));
        Ok(target)
    });
    if let Err(e) = &out {
        record.status = "failed".into();
        record.error = e.clone();
    }
    save_record(&record);
    ctx.scripts.push(record);
    out
}

/// The rows as a plain whitespace table in `adapted/` of the run folder.
fn write_rows(ctx: &RunContext, path: &Path, rows: &[Vec<f64>]) -> Result<PathBuf, String> {
    let dir = ctx
        .output_dir
        .clone()
        .unwrap_or_else(std::env::temp_dir)
        .join("adapted");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "table".into());
    let target = dir.join(format!("{name}.txt"));
    let body: String = rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|v| format!("{v}"))
                .collect::<Vec<_>>()
                .join(" ")
                + "\n"
        })
        .collect();
    std::fs::write(&target, body).map_err(|e| e.to_string())?;
    Ok(target)
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 300 {
        s.chars().take(300).collect::<String>() + "…"
    } else {
        s
    }
}

/// The line of an error that says what went wrong: a traceback's last.
pub fn last_line(error: &str) -> String {
    error
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("no message")
        .chars()
        .take(300)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::decide::ScriptedDecider;
    use crate::runtime::events::AnsweredBy;
    use crate::runtime::interaction::{ScriptAnswer, Scripted};
    use std::sync::Arc;

    #[test]
    fn a_script_is_told_only_the_files_that_exist_and_what_the_steps_wrote() {
        // Seed 000, input_paths: a missing file is left out (`{}` for a run whose only input
        // is nowhere), a list is spelled out as key[0], key[1], and files the steps wrote
        // follow by product.
        let tmp = tempfile::tempdir().unwrap();
        let cfg = serde_json::json!({"data_file": "nowhere.dat", "lambda": 5});
        let nowhere = RunContext::new("goal").with_inputs(cfg.as_object().unwrap(), tmp.path());
        assert!(input_files(&nowhere).is_empty());
        for f in ["a.dat", "b.dat", "fig.png"] {
            std::fs::write(tmp.path().join(f), "1").unwrap();
        }
        let cfg = serde_json::json!({"data_file": "nowhere.dat", "ert_files": ["a.dat", "b.dat"]});
        let mut ctx = RunContext::new("goal").with_inputs(cfg.as_object().unwrap(), tmp.path());
        let fig = tmp.path().join("fig.png").display().to_string();
        ctx.put_value(
            "ert_figure",
            crate::runtime::product::JsonProduct::new("a figure", serde_json::json!({"png": fig})),
        );
        let names: Vec<String> = input_files(&ctx).into_iter().map(|(k, _)| k).collect();
        assert_eq!(names, vec!["ert_files[0]", "ert_files[1]", "ert_figure"]);
    }

    fn ctx_with(dir: &Path, answer: Option<ScriptAnswer>) -> RunContext {
        std::fs::write(
            dir.join("electrodes.txt"),
            "# my odd format\nE1; 0.0 m; 100.0 m\nE2; 1.0 m; 100.5 m\n",
        )
        .unwrap();
        let inputs = json!({"station_file": "electrodes.txt"});
        let out = dir.join("run");
        std::fs::create_dir_all(&out).unwrap();
        let a = answer.clone();
        let mut ctx = RunContext::new("goal")
            .with_inputs(inputs.as_object().unwrap(), dir)
            .with_output_dir(&out)
            .with_interaction(Arc::new(Scripted {
                review: Box::new(move |_| a.clone()),
                ..Default::default()
            }));
        ctx.recovery.tables.push(crate::runtime::TableRole {
            role: "station_file".into(),
            columns: 3,
            meaning: "3 columns: number (index), x (m), elevation (m)".into(),
        });
        ctx
    }

    const READER: &str = "def adapt(text):\n    rows = []\n    for line in text.splitlines():\n        if line.startswith('#') or not line.strip():\n            continue\n        parts = [p.strip().split(' ')[0] for p in line.split(';')]\n        rows.append([float(parts[0][1:]), float(parts[1]), float(parts[2])])\n    return rows\n";

    #[test]
    fn an_approved_reader_rewrites_the_table_into_the_run_folder_and_leaves_the_file() {
        if scratch::python().is_none() {
            return eprintln!("skipping: no python3");
        }
        let tmp = tempfile::tempdir().unwrap();
        let mut ctx = ctx_with(
            tmp.path(),
            Some(ScriptAnswer {
                run: true,
                edited_source: None,
            }),
        );
        let mut d = ScriptedDecider::default();
        d.code.push_back(Ok(CodeProposal {
            purpose: "Splits on semicolons.".into(),
            code: READER.into(),
        }));
        let new = offer_reader(
            &mut ctx,
            &mut d,
            "station_file",
            "expected numbers, found 'E1;'",
        )
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(&new).unwrap(),
            "1 0 100\n2 1 100.5\n"
        );
        assert!(new.starts_with(tmp.path().join("run")));
        assert_eq!(ctx.input_path("station_file").unwrap(), new);
        assert!(
            std::fs::read_to_string(tmp.path().join("electrodes.txt"))
                .unwrap()
                .starts_with("# my odd format")
        );
        assert_eq!(ctx.scripts[0].decision, "run");
        assert_eq!(ctx.scripts[0].by, AnsweredBy::User);
        assert!(ctx.scripts[0].folder.join("proposed.py").exists());
        // The model saw the first lines of the file, not its path's contents elsewhere.
        assert!(d.code_requests[0].samples.contains("E1; 0.0 m"));
    }

    #[test]
    fn nobody_there_declines_and_nothing_runs() {
        let tmp = tempfile::tempdir().unwrap();
        let mut ctx = ctx_with(tmp.path(), None);
        let mut d = ScriptedDecider::default();
        d.code.push_back(Ok(CodeProposal {
            purpose: "p".into(),
            code: READER.into(),
        }));
        if scratch::python().is_none() {
            return eprintln!("skipping: no python3");
        }
        assert!(offer_reader(&mut ctx, &mut d, "station_file", "e").is_err());
        assert_eq!(ctx.scripts[0].decision, "decline");
        assert_eq!(ctx.scripts[0].by, AnsweredBy::NobodyAsked);
        assert!(!tmp.path().join("run/adapted").exists());
    }

    #[test]
    fn an_edited_script_is_checked_again_and_both_versions_are_kept() {
        if scratch::python().is_none() {
            return eprintln!("skipping: no python3");
        }
        let tmp = tempfile::tempdir().unwrap();
        let edited = "import os\ndef main(inputs, out):\n    return {}\n".to_string();
        let mut ctx = ctx_with(
            tmp.path(),
            Some(ScriptAnswer {
                run: true,
                edited_source: Some(edited.clone()),
            }),
        );
        let mut d = ScriptedDecider::default();
        d.code.push_back(Ok(CodeProposal {
            purpose: "Counts rows.".into(),
            code: "def main(inputs, out):\n    return {'n': 1}\n".into(),
        }));
        let r = offer_script(
            &mut ctx,
            &mut d,
            CodeKind::Task,
            "",
            "",
            "count the rows",
            "",
        );
        let Offer::Failed(rec) = r else {
            panic!("{r:?}")
        };
        assert_eq!(rec.status, "refused");
        assert_eq!(rec.edited.as_deref(), Some(edited.as_str()));
        assert!(rec.proposed.contains("'n': 1"));
        assert!(rec.folder.join("edited.py").exists() && rec.folder.join("proposed.py").exists());
    }

    #[test]
    fn a_failed_script_gets_one_fix_which_is_approved_again() {
        if scratch::python().is_none() {
            return eprintln!("skipping: no python3");
        }
        let tmp = tempfile::tempdir().unwrap();
        let mut ctx = ctx_with(
            tmp.path(),
            Some(ScriptAnswer {
                run: true,
                edited_source: None,
            }),
        );
        let mut d = ScriptedDecider::default();
        d.code.push_back(Ok(CodeProposal {
            purpose: "v1".into(),
            code: "def main(inputs, out):\n    return 1 / 0\n".into(),
        }));
        d.code.push_back(Ok(CodeProposal {
            purpose: "v2".into(),
            code: "def main(inputs, out):\n    return {'ok': True}\n".into(),
        }));
        let r = offer_script(
            &mut ctx,
            &mut d,
            CodeKind::Task,
            "",
            "",
            "check something",
            "",
        );
        let Offer::Ran(rec) = r else { panic!("{r:?}") };
        assert_eq!(rec.result["ok"], true);
        assert_eq!(ctx.scripts.len(), 2, "two offers, two approvals");
        assert_eq!(ctx.scripts[0].status, "failed");
        assert!(
            d.code_requests[1]
                .previous
                .as_ref()
                .unwrap()
                .1
                .contains("ZeroDivisionError")
        );
        let steps: Vec<&str> = ctx.steps.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(
            steps,
            vec![
                "Run an approved temporary script",
                "Run the fixed temporary script"
            ]
        );
    }
}
