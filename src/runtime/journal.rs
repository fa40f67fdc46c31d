//! The journal: every event appended to `journal.jsonl` in the run folder and flushed before
//! the run goes on, so a crash loses nothing that happened — and the reading back, in which a
//! step that started and never finished is *interrupted* (it may have run, or run partly),
//! never done.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::events::{Event, Listener};
use super::step::{FigureRef, StepStatus};

/// The file name of a run's journal.
pub const JOURNAL_FILE: &str = "journal.jsonl";

/// Why a journal could not be opened or read.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// The file could not be opened, written or read.
    #[error("journal {path}: {source}")]
    Io {
        /// The journal file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A line in the middle of the journal is not an event.
    #[error("journal {path}, line {line}: expected an event as JSON, found {found}")]
    Malformed {
        /// The journal file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What was there.
        found: String,
    },
}

/// Appends events to a journal file, one JSON object per line, each written and flushed
/// before the listener returns.
#[derive(Debug)]
pub struct Journal {
    file: File,
    path: PathBuf,
    failed: bool,
    /// The text of the thought events since the last other event (what a following
    /// cumulative `Thought` is compared with to journal only its delta).
    thought: String,
}

impl Journal {
    /// Open (create or append to) `path`.
    pub fn open(path: &Path) -> Result<Self, JournalError> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|source| JournalError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        Ok(Journal {
            file,
            path: path.to_path_buf(),
            failed: false,
            thought: String::new(),
        })
    }

    /// The event as the journal stores it: a cumulative `Thought` that extends the one before
    /// becomes a `ThoughtMore` with only the new text, so the journal grows with the text
    /// streamed, not with its square.
    fn delta(&mut self, event: &Event) -> Option<Event> {
        let Event::Thought { text } = event else {
            self.thought.clear();
            return None;
        };
        let added = if self.thought.is_empty() {
            None
        } else {
            text.strip_prefix(self.thought.as_str())
        };
        let more = added.map(|added| Event::ThoughtMore {
            text: added.to_string(),
        });
        if let Some(Event::ThoughtMore { text: added }) = &more {
            self.thought.push_str(added);
        } else {
            self.thought.clone_from(text);
        }
        more
    }

    /// Write one event; the line is complete on disk (in the kernel's hands) when this returns.
    pub fn append(&mut self, event: &Event) -> Result<(), JournalError> {
        let delta = self.delta(event);
        let event = delta.as_ref().unwrap_or(event);
        let mut line = serde_json::to_string(event).unwrap_or_else(|e| {
            // Serialising our own enum cannot fail for valid f64s; a NaN in a payload is the
            // only way, and it is recorded rather than lost.
            format!("{{\"event\":\"warning\",\"text\":\"an event could not be journalled: {e}\"}}")
        });
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|_| self.file.flush())
            .map_err(|source| JournalError::Io {
                path: self.path.clone(),
                source,
            })
    }

    /// This journal as an event listener. A write failure is reported once on stderr and the
    /// run goes on (losing the record is bad; losing the run as well would be worse).
    pub fn into_listener(mut self) -> Listener {
        Box::new(move |e| {
            if let Err(err) = self.append(e)
                && !self.failed
            {
                self.failed = true;
                eprintln!("warning: {err}; the journal of this run is incomplete");
            }
        })
    }
}

/// A step as the journal shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayedStep {
    /// 1-based step number.
    pub step: usize,
    /// Tool name.
    pub tool: String,
    /// Label.
    pub label: String,
    /// Module key.
    pub module: String,
    /// Why it was chosen.
    pub reason: String,
    /// Its status; `interrupted` when it started and the journal never saw it end.
    pub status: StepStatus,
    /// What it found.
    pub summary: String,
    /// Why it failed / was blocked / skipped / interrupted.
    pub error: String,
    /// Figures it drew.
    pub figures: Vec<FigureRef>,
    /// Wall time (0 when interrupted).
    pub seconds: f64,
}

/// A run read back from its journal.
#[derive(Debug, Clone, Default)]
pub struct Replay {
    /// Every event, in order.
    pub events: Vec<Event>,
    /// The steps, finished or interrupted.
    pub steps: Vec<ReplayedStep>,
    /// The goal, from `run_started`.
    pub goal: String,
    /// How it ended, when it did (`None`: the process ended without saying).
    pub ended: Option<String>,
    /// The last line was cut off mid-write (a crash); it was ignored.
    pub truncated_tail: bool,
}

/// The message an interrupted step carries.
pub const INTERRUPTED_NOTE: &str = "The run ended while this step was running; no result was recorded. It may have run, or run partly.";

/// Read a journal back. A step with a start and no finish is interrupted; an incomplete last
/// line (a crash mid-write) is ignored and reported, a broken line before it is an error.
pub fn replay(path: &Path) -> Result<Replay, JournalError> {
    let text = std::fs::read_to_string(path).map_err(|source| JournalError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut out = Replay::default();
    let lines: Vec<&str> = text.split('\n').collect();
    let last_complete = text.ends_with('\n');
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Event>(line) {
            Ok(e) => fold_thought(&mut out.events, e),
            Err(_) if i == lines.len() - 1 && !last_complete => out.truncated_tail = true,
            Err(_) => {
                return Err(JournalError::Malformed {
                    path: path.to_path_buf(),
                    line: i + 1,
                    found: line.chars().take(80).collect(),
                });
            }
        }
    }
    out.steps = steps_of(&out.events);
    for e in &out.events {
        match e {
            Event::RunStarted { goal, .. } => out.goal = goal.clone(),
            Event::RunEnded { ended, .. } => out.ended = Some(ended.clone()),
            _ => {}
        }
    }
    Ok(out)
}

/// Append `e`, folding a `ThoughtMore` into the `Thought` just before it (the cumulative
/// reasoning the run emitted); one without a `Thought` before it becomes one.
fn fold_thought(events: &mut Vec<Event>, e: Event) {
    match (events.last_mut(), e) {
        (Some(Event::Thought { text }), Event::ThoughtMore { text: more }) => text.push_str(&more),
        (_, Event::ThoughtMore { text }) => events.push(Event::Thought { text }),
        (_, e) => events.push(e),
    }
}

/// The steps a sequence of events describes.
pub fn steps_of(events: &[Event]) -> Vec<ReplayedStep> {
    let mut steps: Vec<ReplayedStep> = Vec::new();
    let mut open: Option<ReplayedStep> = None;
    for e in events {
        match e {
            Event::StepStarted {
                step,
                tool,
                label,
                module,
                reason,
            } => {
                if let Some(s) = open.take() {
                    steps.push(s);
                }
                open = Some(ReplayedStep {
                    step: *step,
                    tool: tool.clone(),
                    label: label.clone(),
                    module: module.clone(),
                    reason: reason.clone(),
                    status: StepStatus::Interrupted,
                    summary: String::new(),
                    error: INTERRUPTED_NOTE.into(),
                    figures: Vec::new(),
                    seconds: 0.0,
                });
            }
            Event::StepFinished {
                step,
                tool,
                label,
                module,
                status,
                summary,
                error,
                figures,
                seconds,
                ..
            } => {
                let reason = match open.take() {
                    Some(s) if s.tool == *tool => s.reason,
                    Some(s) => {
                        steps.push(s);
                        String::new()
                    }
                    None => String::new(),
                };
                steps.push(ReplayedStep {
                    step: *step,
                    tool: tool.clone(),
                    label: label.clone(),
                    module: module.clone(),
                    reason,
                    status: *status,
                    summary: summary.clone(),
                    error: error.clone(),
                    figures: figures.clone(),
                    seconds: *seconds,
                });
            }
            _ => {}
        }
    }
    if let Some(s) = open {
        steps.push(s);
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::context::RunContext;
    use crate::runtime::controller::{RunOptions, drive};
    use crate::runtime::product::JsonProduct;
    use crate::runtime::tool::{Outputs, Registry, Tool};

    #[test]
    fn a_run_killed_mid_step_reads_back_as_interrupted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(JOURNAL_FILE);
        // The "kill": the process ends inside the second tool. We simulate it by a tool that
        // never returns to the loop — the journal stops after its StepStarted.
        let mut reg = Registry::new();
        reg.register(
            Tool::new("load", "Load.", |_| {
                Ok((
                    "Loaded 3 files.".into(),
                    Outputs::new().with("data", JsonProduct::new("d", serde_json::Value::Null)),
                ))
            })
            .produces(&["data"]),
        )
        .unwrap();
        reg.register(
            Tool::new("invert", "Invert.", |_| panic!("process killed")).requires(&["data"]),
        )
        .unwrap();
        let mut ctx = RunContext::new("goal");
        let journal = Journal::open(&path).unwrap();
        ctx.events.subscribe(journal.into_listener());
        // Drop everything after the second StepStarted, as a kill would.
        let events = {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                drive(&mut ctx, &reg, None, &RunOptions::default());
            }));
            replay(&path).unwrap().events
        };
        let cut: Vec<Event> = {
            let mut seen_starts = 0;
            let mut v = Vec::new();
            for e in events {
                let is_start = matches!(e, Event::StepStarted { .. });
                v.push(e);
                if is_start {
                    seen_starts += 1;
                    if seen_starts == 2 {
                        break;
                    }
                }
            }
            v
        };
        let killed = dir.path().join("killed.jsonl");
        let mut text: String = cut
            .iter()
            .map(|e| serde_json::to_string(e).unwrap() + "\n")
            .collect();
        text.push_str("{\"event\":\"progress\",\"st"); // a line cut mid-write
        std::fs::write(&killed, text).unwrap();
        let r = replay(&killed).unwrap();
        assert!(r.truncated_tail);
        assert_eq!(r.steps.len(), 2);
        assert_eq!(r.steps[0].status, StepStatus::Ok);
        assert_eq!(r.steps[0].summary, "Loaded 3 files.");
        assert_eq!(r.steps[1].tool, "invert");
        assert_eq!(r.steps[1].status, StepStatus::Interrupted);
        assert!(r.steps[1].error.contains("may have run, or run partly"));
    }

    #[test]
    fn every_event_is_on_disk_when_the_listener_returns() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(JOURNAL_FILE);
        let mut j = Journal::open(&path).unwrap();
        j.append(&Event::Thought { text: "a".into() }).unwrap();
        // Read with a separate handle while the writer is still open.
        assert_eq!(replay(&path).unwrap().events.len(), 1);
    }

    #[test]
    fn a_streamed_reasoning_is_journalled_as_deltas_and_read_back_whole() {
        // Issue 19: a 5 MB streamed `why` made a 545 MB journal, each thought event holding
        // the whole text so far. 1 MB streamed in 1 KiB parts, as the throttle emits it
        // cumulatively, would be ~500 MB that way; as deltas it is the text once plus one
        // line of JSON per part (bound: 3 MB, from the issue's acceptance).
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(JOURNAL_FILE);
        let mut j = Journal::open(&path).unwrap();
        let part: String = "why ".repeat(256);
        let mut so_far = String::new();
        while so_far.len() < 1_000_000 {
            so_far.push_str(&part);
            j.append(&Event::Thought {
                text: so_far.clone(),
            })
            .unwrap();
        }
        j.append(&Event::Warning { text: "w".into() }).unwrap();
        // A new decision's reasoning starts afresh, whatever it shares with the last one.
        j.append(&Event::Thought { text: "why".into() }).unwrap();
        let size = std::fs::metadata(&path).unwrap().len();
        assert!(size < 3_000_000, "journal is {size} bytes for 1 MB of text");
        assert!(size > 1_000_000, "the text itself must be there ({size})");
        let events = replay(&path).unwrap().events;
        assert_eq!(
            events.len(),
            3,
            "one cumulative thought, the warning, the new one"
        );
        assert!(matches!(&events[0], Event::Thought { text } if *text == so_far));
        assert!(matches!(&events[2], Event::Thought { text } if text == "why"));
    }

    #[test]
    fn a_thought_that_does_not_extend_the_last_is_journalled_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(JOURNAL_FILE);
        let mut j = Journal::open(&path).unwrap();
        for t in ["abc", "abcdef", "xyz"] {
            j.append(&Event::Thought { text: t.into() }).unwrap();
        }
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"thought_more\""), "{text}");
        let events = replay(&path).unwrap().events;
        assert!(
            matches!(&events[0], Event::Thought { text } if text == "abcdef"),
            "{events:?}"
        );
        assert!(
            matches!(&events[1], Event::Thought { text } if text == "xyz"),
            "{events:?}"
        );
    }

    #[test]
    fn a_broken_line_in_the_middle_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(JOURNAL_FILE);
        std::fs::write(&path, "{\"event\":\"thought\",\"text\":\"a\"}\nnot json\n{\"event\":\"thought\",\"text\":\"b\"}\n").unwrap();
        let e = replay(&path).unwrap_err().to_string();
        assert!(e.contains("line 2"), "{e}");
    }
}
