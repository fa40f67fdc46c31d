//! What a run tells anyone listening: one serde enum, appended to the journal and sent to the
//! studio. Code under review travels in its own field, never inside prose.

use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use super::step::{FigureRef, StepStatus};

/// One step of the route still ahead, as the timeline draws it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RouteStep {
    /// Tool name.
    pub tool: String,
    /// Imperative label ("Run ERT inversion").
    pub label: String,
    /// Studio module key (`ert`, `seismic`, `em`, `mt`, `gravmag`, `gpr`, `report`, `project`).
    pub module: String,
}

/// One option of a question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuestionOption {
    /// What comes back when this option is chosen.
    pub id: String,
    /// Short label for a button.
    pub label: String,
    /// What choosing it will actually do.
    #[serde(default)]
    pub detail: String,
}

impl QuestionOption {
    /// An option with a detail line.
    pub fn new(id: &str, label: &str, detail: &str) -> Self {
        QuestionOption {
            id: id.into(),
            label: label.into(),
            detail: detail.into(),
        }
    }
}

/// What a step-by-step approval may answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Run the step.
    Proceed,
    /// Leave it out (recorded as skipped) and choose again.
    Skip,
    /// End the run here.
    Stop,
}

/// Who answered a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnsweredBy {
    /// A person chose it.
    User,
    /// An answer came that matched no option, so the default was taken.
    Default,
    /// Nobody could be asked (headless, no terminal): the safe default was taken.
    NobodyAsked,
    /// The window closed while the request was open: the safe default was taken.
    ClosedWithoutAnswer,
}

impl AnsweredBy {
    /// The word used in the journal and `result.json`.
    pub fn word(self) -> &'static str {
        match self {
            AnsweredBy::User => "user",
            AnsweredBy::Default => "default",
            AnsweredBy::NobodyAsked => "nobody_asked",
            AnsweredBy::ClosedWithoutAnswer => "closed_without_answer",
        }
    }

    /// Whether a person gave this answer.
    pub fn is_user(self) -> bool {
        self == AnsweredBy::User
    }
}

/// Everything a run reports, in order. Serialised with a `"event"` tag, one per journal line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The run has started: what it was asked and where it writes.
    RunStarted {
        /// The user's request in their words.
        goal: String,
        /// The run folder.
        run_dir: String,
        /// `auto` or `step_by_step`.
        mode: String,
        /// `provider · model`, or `no model` (dependency order).
        decider: String,
    },
    /// The route ahead as things stand (dependency order from the current state).
    Route {
        /// Steps taken so far.
        step: usize,
        /// The steps still between the run and its report.
        ahead: Vec<RouteStep>,
    },
    /// A step is about to run.
    StepStarted {
        /// 1-based step number.
        step: usize,
        /// Tool name.
        tool: String,
        /// Imperative label.
        label: String,
        /// Studio module key.
        module: String,
        /// Why it was chosen.
        reason: String,
    },
    /// A long step reporting how far it is.
    Progress {
        /// The step it belongs to.
        step: usize,
        /// 0–1.
        fraction: f64,
        /// What it is doing now ("iteration 4, χ² 3.1").
        detail: String,
    },
    /// A step has ended.
    StepFinished {
        /// 1-based step number.
        step: usize,
        /// Tool name.
        tool: String,
        /// Imperative label.
        label: String,
        /// Studio module key.
        module: String,
        /// ok | failed | blocked | skipped | interrupted.
        status: StepStatus,
        /// What it found.
        summary: String,
        /// Why it failed, was blocked or skipped.
        error: String,
        /// Artifacts it made.
        produced: Vec<String>,
        /// Figures it drew.
        figures: Vec<FigureRef>,
        /// Wall time.
        seconds: f64,
    },
    /// The model's reasoning so far while it decides (cumulative, throttled).
    Thought {
        /// The reasoning text received so far.
        text: String,
    },
    /// Journal only: what the model added to the reasoning of the [`Event::Thought`] just
    /// before it. The journal stores deltas (a 5 MB reasoning streamed in small parts would
    /// otherwise be written out again with every part); [`crate::runtime::journal::replay`]
    /// folds them back into one cumulative `Thought`.
    ThoughtMore {
        /// The text added since the previous thought event.
        text: String,
    },
    /// Tokens and cost after a model call.
    Usage {
        /// `provider · model`.
        model: String,
        /// Tokens sent in this call.
        tokens_in: u64,
        /// Tokens received in this call.
        tokens_out: u64,
        /// Estimated cost of this call in US dollars (0 when no price is known).
        cost_usd: f64,
        /// Run totals so far.
        run_tokens_in: u64,
        /// Run totals so far.
        run_tokens_out: u64,
        /// Run totals so far.
        run_cost_usd: f64,
        /// Model calls so far in this run.
        run_calls: u64,
    },
    /// A choice put to the user.
    Question {
        /// Answer with this id.
        id: u64,
        /// The question, with its evidence.
        question: String,
        /// The choices.
        options: Vec<QuestionOption>,
        /// The option taken when nobody answers.
        default: String,
    },
    /// A step-by-step approval request.
    ApprovalNeeded {
        /// Answer with this id.
        id: u64,
        /// The step it would be.
        step: usize,
        /// Tool name.
        tool: String,
        /// Imperative label.
        label: String,
        /// Studio module key.
        module: String,
        /// Why the controller chose it.
        reason: String,
        /// Whether running it cannot be undone (writes over a product, runs code).
        irreversible: bool,
    },
    /// Generated code awaiting a person's decision. The code is its own field.
    ScriptReview {
        /// Answer with this id.
        id: u64,
        /// What the script is for, in two sentences.
        purpose: String,
        /// Input key and path for every file it may read.
        inputs: Vec<(String, String)>,
        /// The source, exactly as it would run.
        code: String,
        /// `python` or `python-adapter`.
        language: String,
        /// The sandbox protections active on this machine, one phrase each.
        protections: Vec<String>,
    },
    /// The answer to a question, approval or script review.
    Answered {
        /// The request's id.
        id: u64,
        /// The option id, verdict or `run`/`decline`.
        answer: String,
        /// A person, or the safe default.
        by: AnsweredBy,
    },
    /// The run is holding before its next step.
    Paused {
        /// Steps taken so far.
        step: usize,
    },
    /// The run goes on.
    Resumed {
        /// Steps taken so far.
        step: usize,
    },
    /// The user's notes were read by a decision.
    NoteHeard {
        /// The notes, in order.
        notes: Vec<String>,
        /// Settings changed because of them (`key: old -> new`).
        changes: Vec<String>,
        /// What the decision made of them (or why they could not be followed).
        response: String,
    },
    /// A warning the user should see (deduplicated by the run).
    Warning {
        /// The warning.
        text: String,
    },
    /// The run has ended.
    RunEnded {
        /// finished | exhausted | stopped | step_limit | broke.
        ended: String,
        /// success | incomplete | stopped.
        status: String,
        /// Why it is not a success, when it is not.
        reasons: Vec<String>,
        /// The report, when one was written.
        report: Option<String>,
    },
}

/// A listener: receives every event in order, on the run's thread. It must not block for
/// long (the studio's listener only sends on a channel).
pub type Listener = Box<dyn FnMut(&Event) + Send>;

/// Fans every event out to any number of listeners. Cheap to clone (shared).
#[derive(Clone, Default)]
pub struct EventBus {
    listeners: Arc<Mutex<Vec<Listener>>>,
}

impl std::fmt::Debug for EventBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventBus").finish_non_exhaustive()
    }
}

impl EventBus {
    /// A bus with no listeners.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a listener.
    pub fn subscribe(&self, listener: Listener) {
        self.lock().push(listener);
    }

    /// Send `event` to every listener, in subscription order. A listener that panics is
    /// dropped from the bus: a display must not stop a run.
    pub fn emit(&self, event: &Event) {
        let mut listeners = self.lock();
        let mut broken = Vec::new();
        for (i, l) in listeners.iter_mut().enumerate() {
            let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| l(event))).is_ok();
            if !ok {
                broken.push(i);
            }
        }
        for i in broken.into_iter().rev() {
            drop(listeners.remove(i));
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Listener>> {
        // A poisoned lock only means a listener panicked mid-call; the list is still valid.
        self.listeners.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A listener that appends to a shared vector, for tests and replay.
pub fn collect(into: Arc<Mutex<Vec<Event>>>) -> Listener {
    Box::new(move |e| {
        into.lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(e.clone());
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_round_trip_through_json_with_a_tag() {
        let e = Event::ScriptReview {
            id: 3,
            purpose: "Rewrite the electrode table.".into(),
            inputs: vec![("electrode_file".into(), "/p/e.csv".into())],
            code: "def main(inputs, out):\n    return {}".into(),
            language: "python".into(),
            protections: vec!["landlock".into()],
        };
        let text = serde_json::to_string(&e).unwrap();
        assert!(text.starts_with("{\"event\":\"script_review\""), "{text}");
        assert_eq!(serde_json::from_str::<Event>(&text).unwrap(), e);
    }

    #[test]
    fn a_panicking_listener_is_dropped_and_others_still_hear() {
        let bus = EventBus::new();
        let seen = Arc::new(Mutex::new(Vec::new()));
        bus.subscribe(Box::new(|_| panic!("display broke")));
        bus.subscribe(collect(seen.clone()));
        bus.emit(&Event::Thought { text: "a".into() });
        bus.emit(&Event::Thought { text: "b".into() });
        assert_eq!(seen.lock().unwrap().len(), 2);
    }
}
