//! One tool invocation and what came of it: the record, kept apart from the data.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// A step's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    /// It ran and concluded something.
    Ok,
    /// It ran and failed; the error says why.
    Failed,
    /// It never ran because something it needed was absent or it was not on offer — a fact
    /// about the run, not an error in the tool.
    Blocked,
    /// It was left out (by the user, or because no tool of that name exists).
    Skipped,
    /// It started and never finished (the process ended, or it was cancelled): it may have
    /// run, or run partly. Never reported as done.
    Interrupted,
}

impl StepStatus {
    /// The tag a transcript line starts with.
    pub fn tag(self) -> &'static str {
        match self {
            StepStatus::Ok => "done",
            StepStatus::Failed => "FAILED",
            StepStatus::Blocked => "blocked",
            StepStatus::Skipped => "skipped",
            StepStatus::Interrupted => "INTERRUPTED",
        }
    }

    /// The word for people.
    pub fn word(self) -> &'static str {
        match self {
            StepStatus::Ok => "ok",
            StepStatus::Failed => "failed",
            StepStatus::Blocked => "blocked",
            StepStatus::Skipped => "skipped",
            StepStatus::Interrupted => "interrupted",
        }
    }
}

/// How a step came to be chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecidedBy {
    /// Only one tool was on the menu.
    Forced,
    /// The model chose it.
    Model,
    /// Dependency order (no model, or the model's answer was unusable).
    #[default]
    Policy,
    /// A recovery retried it.
    Recovery,
    /// A person chose it (chat, proposal).
    User,
}

/// A figure a step drew, with its caption.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FigureRef {
    /// The PNG in the run folder.
    pub path: PathBuf,
    /// What it shows, with units.
    pub caption: String,
}

/// One tool invocation and what came of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// The tool's name.
    pub tool: String,
    /// Why this step was chosen, in the controller's words.
    pub reason: String,
    /// Its outcome.
    pub status: StepStatus,
    /// One or two sentences of what the tool concluded — not its output data.
    pub summary: String,
    /// Why it failed, was blocked or skipped.
    pub error: String,
    /// Artifacts it stored.
    pub produced: Vec<String>,
    /// Figures it drew.
    pub figures: Vec<FigureRef>,
    /// Wall time.
    pub seconds: f64,
    /// What implements it (for the plan).
    pub agent: String,
    /// The tool's label ("Run ERT inversion").
    pub label: String,
    /// What the tool is for, in its own words (distinct from `reason`).
    pub purpose: String,
    /// Studio module key.
    pub module: String,
    /// How it was chosen.
    pub decided_by: DecidedBy,
}

impl Step {
    /// A new open step.
    pub fn new(tool: &str, reason: &str) -> Self {
        Step {
            tool: tool.to_string(),
            reason: reason.to_string(),
            status: StepStatus::Ok,
            summary: String::new(),
            error: String::new(),
            produced: Vec::new(),
            figures: Vec::new(),
            seconds: 0.0,
            agent: String::new(),
            label: String::new(),
            purpose: String::new(),
            module: String::new(),
            decided_by: DecidedBy::Policy,
        }
    }

    /// The label, or the tool's name when there is none.
    pub fn label_or_tool(&self) -> &str {
        if self.label.is_empty() {
            &self.tool
        } else {
            &self.label
        }
    }

    /// The step as one line of transcript:
    /// `[done] load_ert (chosen because: …) -> found …`.
    pub fn line(&self) -> String {
        let because = if self.reason.is_empty() {
            String::new()
        } else {
            format!(" (chosen because: {})", self.reason)
        };
        let outcome = match self.status {
            StepStatus::Ok => self.summary.clone(),
            _ if !self.error.is_empty() => self.error.clone(),
            _ => self.summary.clone(),
        };
        format!(
            "[{}] {}{} -> {}",
            self.status.tag(),
            self.tool,
            because,
            outcome
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_reads_as_one_transcript_line() {
        let mut s = Step::new("invert_ert", "the data are loaded");
        s.summary = "Converged to χ² 1.02 in 6 iterations.".into();
        assert_eq!(
            s.line(),
            "[done] invert_ert (chosen because: the data are loaded) -> Converged to χ² 1.02 in 6 iterations."
        );
        s.status = StepStatus::Failed;
        s.error = "no electrodes".into();
        assert_eq!(
            s.line(),
            "[FAILED] invert_ert (chosen because: the data are loaded) -> no electrodes"
        );
    }
}
