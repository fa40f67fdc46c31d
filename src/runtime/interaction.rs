//! The person on the other side of a run: approvals, questions and script reviews.
//!
//! The runtime announces every request as an event first (so a journal and a timeline show
//! it), then asks the [`Interaction`] for the answer and records it. `None` from any method
//! means nobody was there; the runtime then takes the safe default — stop for an approval,
//! the stated default for a question, decline for a script — because silence is not consent.

use serde::{Deserialize, Serialize};

use super::events::{AnsweredBy, QuestionOption, Verdict};

/// A step-by-step approval request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    /// The request id (also in the `ApprovalNeeded` event).
    pub id: u64,
    /// The step it would be.
    pub step: usize,
    /// Tool name.
    pub tool: String,
    /// Imperative label.
    pub label: String,
    /// Studio module key.
    pub module: String,
    /// Why the controller chose it.
    pub reason: String,
    /// Whether it cannot be undone.
    pub irreversible: bool,
}

/// A question with options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionRequest {
    /// The request id.
    pub id: u64,
    /// The question, stating its evidence.
    pub question: String,
    /// The choices; the answer must be one of their ids.
    pub options: Vec<QuestionOption>,
    /// The id taken when nobody answers.
    pub default: String,
}

/// Generated code put to the user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScriptRequest {
    /// The request id.
    pub id: u64,
    /// What it is for.
    pub purpose: String,
    /// Input key and path for every file it may read.
    pub inputs: Vec<(String, String)>,
    /// The source.
    pub code: String,
    /// `python` or `python-adapter`.
    pub language: String,
    /// Sandbox protections active on this machine.
    pub protections: Vec<String>,
}

/// A person's decision on a script.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScriptAnswer {
    /// Run it (only ever `true` by an explicit yes).
    pub run: bool,
    /// The source as the person edited it before approving, when they did.
    pub edited_source: Option<String>,
}

/// Whoever answers a run's requests: the studio's dialogs, a terminal, a test script.
pub trait Interaction: Send + Sync {
    /// Proceed, skip or stop before a step; `None` when nobody is there.
    fn approve(&self, request: &ApprovalRequest) -> Option<Verdict>;
    /// The chosen option id; `None` when nobody is there.
    fn ask(&self, request: &QuestionRequest) -> Option<String>;
    /// The decision on a script; `None` when nobody is there (treated as decline).
    fn review_script(&self, request: &ScriptRequest) -> Option<ScriptAnswer>;
    /// Why the last request got no answer: nobody could be asked (the default), or the
    /// window closed with it open.
    fn absent(&self) -> AnsweredBy {
        AnsweredBy::NobodyAsked
    }
}

/// Nobody is there: every request resolves to its safe default.
#[derive(Debug, Clone, Copy, Default)]
pub struct Nobody;

impl Interaction for Nobody {
    fn approve(&self, _: &ApprovalRequest) -> Option<Verdict> {
        None
    }
    fn ask(&self, _: &QuestionRequest) -> Option<String> {
        None
    }
    fn review_script(&self, _: &ScriptRequest) -> Option<ScriptAnswer> {
        None
    }
}

/// A closure answering one kind of request.
pub type Answerer<R, A> = Box<dyn Fn(&R) -> Option<A> + Send + Sync>;

/// Answers from closures, for tests and for the chat.
pub struct Scripted {
    /// Approval answers.
    pub approve: Answerer<ApprovalRequest, Verdict>,
    /// Question answers.
    pub ask: Answerer<QuestionRequest, String>,
    /// Script decisions.
    pub review: Answerer<ScriptRequest, ScriptAnswer>,
}

impl Default for Scripted {
    fn default() -> Self {
        Scripted {
            approve: Box::new(|_| None),
            ask: Box::new(|_| None),
            review: Box::new(|_| None),
        }
    }
}

impl Interaction for Scripted {
    fn approve(&self, request: &ApprovalRequest) -> Option<Verdict> {
        (self.approve)(request)
    }
    fn ask(&self, request: &QuestionRequest) -> Option<String> {
        (self.ask)(request)
    }
    fn review_script(&self, request: &ScriptRequest) -> Option<ScriptAnswer> {
        (self.review)(request)
    }
}
