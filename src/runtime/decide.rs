//! Who chooses the next step: a trait the model client implements (`llm`), and that tests
//! implement with a script. The runtime never sees a prompt or an HTTP request: it hands over
//! what a decision needs and gets a decision, or an error saying why there is none.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Everything a decision is made from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DecisionRequest {
    /// The run so far ([`crate::runtime::RunContext::transcript`]).
    pub transcript: String,
    /// The menu, one line per runnable tool.
    pub menu: String,
    /// The names on the menu.
    pub menu_names: Vec<String>,
    /// Whether "done" is a valid answer (the finish artifact exists).
    pub done_allowed: bool,
    /// The artifact that must exist before "done".
    pub finish: String,
    /// Notes the user has just sent (empty when none).
    pub notes: Vec<String>,
    /// The settings a note may change, with their current values.
    pub adjustable: Map<String, Value>,
    /// In flexible mode: what the model may do besides the next step (`None` otherwise).
    pub toolbox: Option<String>,
}

/// An off-route action the model puts to the user (flexible mode).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Proposal {
    /// Run a tool the route has not scheduled.
    Extra {
        /// The tool.
        tool: String,
    },
    /// Run a finished step again with other settings (its downstream steps are reopened).
    Redo {
        /// The tool.
        tool: String,
        /// The settings to change first.
        #[serde(default)]
        settings: Map<String, Value>,
    },
    /// Change settings.
    Settings {
        /// The changes.
        changes: Map<String, Value>,
    },
    /// Leave route steps out.
    Skip {
        /// The tools.
        tools: Vec<String>,
    },
    /// A temporary script for something no step does.
    Script {
        /// What it is to do.
        task: String,
    },
    /// A question for the user.
    Question {
        /// The question.
        question: String,
        /// The choices.
        options: Vec<String>,
        /// The option the model recommends: the default when nobody answers (the first
        /// option when it names none of them).
        #[serde(default)]
        recommend: Option<String>,
    },
}

/// What the decider chose.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Choice {
    /// Run this tool (it may not be on the menu: the controller checks).
    Tool(String),
    /// Finish the run.
    Done,
    /// Look at a product's numbers (read-only; flexible mode).
    Inspect(String),
    /// Put an off-route action to the user (flexible mode).
    Propose(Proposal),
}

/// A decision with its reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// Why, in one sentence (shown while it streams).
    pub why: String,
    /// What to do.
    pub choice: Choice,
    /// Settings to change because of the user's notes (adjustable keys only are applied).
    pub settings: Map<String, Value>,
    /// Flexible mode: the steps the model means to run after this one, in order. They run
    /// without a new request while each is on the menu and the step before it succeeded
    /// (seed 001, `_follow_plan`); empty when it wants to see a result first.
    #[serde(default)]
    pub then: Vec<String>,
}

impl Decision {
    /// Run `tool` because `why`.
    pub fn tool(tool: &str, why: &str) -> Self {
        Decision {
            why: why.into(),
            choice: Choice::Tool(tool.into()),
            settings: Map::new(),
            then: Vec::new(),
        }
    }

    /// Finish because `why`.
    pub fn done(why: &str) -> Self {
        Decision {
            why: why.into(),
            choice: Choice::Done,
            settings: Map::new(),
            then: Vec::new(),
        }
    }
}

/// A failed step put to the model for a diagnosis.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiagnosisRequest {
    /// The run so far (last steps).
    pub transcript: String,
    /// The tool that failed.
    pub tool: String,
    /// What it is for.
    pub purpose: String,
    /// Its error.
    pub error: String,
    /// The adjustable settings and their current values (only these may change).
    pub settings: Map<String, Value>,
    /// Coordinate-file input keys a generated reader could be written for.
    pub adaptable: Vec<String>,
    /// The run's input files by key.
    pub inputs: Map<String, Value>,
    /// Notes the user sent while the step ran (empty when none): the retry is the next step
    /// that uses the settings they may change.
    #[serde(default)]
    pub notes: Vec<String>,
}

/// What the model said about a failure, before the runtime filters it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Diagnosis {
    /// One sentence on why it failed.
    pub cause: String,
    /// `retry` | `adapt` | `script` | `give_up`.
    pub action: String,
    /// Settings to change for a retry.
    pub changes: Map<String, Value>,
    /// For `adapt`: the coordinate file to write a reader for.
    pub file_key: String,
    /// For `script`: the input the script's output stands in for.
    pub replaces: String,
    /// For `script`: what it will do.
    pub purpose: String,
    /// Why this should work.
    pub why: String,
}

/// What kind of code is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CodeKind {
    /// A temporary script `def main(inputs, out)` to get a failed step past its cause.
    Script,
    /// A temporary script for something no step does.
    Task,
    /// A reader `def adapt(text)` for a coordinate table in an unexpected layout.
    Reader,
}

/// A request for code.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CodeRequest {
    /// What kind.
    pub kind: CodeKind,
    /// The run so far.
    pub transcript: String,
    /// The step that failed (empty for a task).
    pub tool: String,
    /// The error it failed with (empty for a task).
    pub error: String,
    /// What the code is to do (the diagnosis's purpose, or the task).
    pub task: String,
    /// The inputs it receives, with the first lines of each text file.
    pub samples: String,
    /// For a reader: the number of columns the table must have, and what they are.
    pub columns: String,
    /// The rules code must follow.
    pub contract: String,
    /// A previous version that failed and how (for a fix).
    pub previous: Option<(String, String)>,
    /// Whether that previous version was approved and run (its failure is the run's), rather
    /// than refused by the checks before anyone was asked.
    pub previous_ran: bool,
}

/// Code the model wrote.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CodeProposal {
    /// What it does, in two sentences a scientist can check.
    pub purpose: String,
    /// The source.
    pub code: String,
}

/// Something the model reports while it works.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelEvent {
    /// The reasoning received so far (cumulative).
    Thought(String),
    /// A call's tokens and estimated cost.
    Usage {
        /// Tokens sent.
        tokens_in: u64,
        /// Tokens received.
        tokens_out: u64,
        /// Estimated US dollars.
        cost_usd: f64,
    },
    /// Something the run should note (a retry after a rate limit, a fallback).
    Note(String),
}

/// Why there is no decision.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DecideError {
    /// The model could not be reached or answered with an error.
    #[error("the model could not be reached: {0}")]
    Unreachable(String),
    /// The model answered, but not with a usable decision.
    #[error("the model's answer could not be used: {0}")]
    Unusable(String),
}

/// A chooser of steps.
pub trait Decide: Send {
    /// `provider · model`, for the timeline and the report.
    fn describe(&self) -> String;

    /// Choose the next step. `on_event` receives reasoning as it streams and usage after.
    fn decide(
        &mut self,
        request: &DecisionRequest,
        on_event: &mut dyn FnMut(ModelEvent),
    ) -> Result<Decision, DecideError>;

    /// Say why a step failed and what to change. `None` when this decider cannot diagnose
    /// (then the step stays failed).
    fn diagnose(
        &mut self,
        _request: &DiagnosisRequest,
        _on_event: &mut dyn FnMut(ModelEvent),
    ) -> Option<Result<Diagnosis, DecideError>> {
        None
    }

    /// Write code (a script or a reader). `None` when this decider cannot.
    fn write_code(
        &mut self,
        _request: &CodeRequest,
        _on_event: &mut dyn FnMut(ModelEvent),
    ) -> Option<Result<CodeProposal, DecideError>> {
        None
    }

    /// Ask for text with a free prompt: `None` when not supported.
    fn complete(
        &mut self,
        _prompt: &str,
        _on_event: &mut dyn FnMut(ModelEvent),
    ) -> Option<Result<String, DecideError>> {
        None
    }
}

/// A decider that replays a fixed list of answers (for tests and replays). When the list is
/// used up every further call is unusable, which sends the run to dependency order.
#[derive(Debug, Clone, Default)]
pub struct ScriptedDecider {
    /// Answers in order.
    pub answers: std::collections::VecDeque<Result<Decision, DecideError>>,
    /// Diagnoses in order.
    pub diagnoses: std::collections::VecDeque<Result<Diagnosis, DecideError>>,
    /// Code in order.
    pub code: std::collections::VecDeque<Result<CodeProposal, DecideError>>,
    /// Every code request it was given.
    pub code_requests: Vec<CodeRequest>,
    /// Every request it was given.
    pub seen: Vec<DecisionRequest>,
}

impl ScriptedDecider {
    /// A decider that answers these, in order.
    pub fn new(answers: Vec<Result<Decision, DecideError>>) -> Self {
        ScriptedDecider {
            answers: answers.into(),
            ..Default::default()
        }
    }
}

impl Decide for ScriptedDecider {
    fn describe(&self) -> String {
        "scripted".into()
    }

    fn decide(
        &mut self,
        request: &DecisionRequest,
        on_event: &mut dyn FnMut(ModelEvent),
    ) -> Result<Decision, DecideError> {
        self.seen.push(request.clone());
        let answer = self.answers.pop_front().unwrap_or_else(|| {
            Err(DecideError::Unusable(
                "the script has no more answers".into(),
            ))
        });
        if let Ok(d) = &answer {
            on_event(ModelEvent::Thought(d.why.clone()));
        }
        answer
    }

    fn diagnose(
        &mut self,
        _request: &DiagnosisRequest,
        _on_event: &mut dyn FnMut(ModelEvent),
    ) -> Option<Result<Diagnosis, DecideError>> {
        self.diagnoses.pop_front()
    }

    fn write_code(
        &mut self,
        request: &CodeRequest,
        _on_event: &mut dyn FnMut(ModelEvent),
    ) -> Option<Result<CodeProposal, DecideError>> {
        self.code_requests.push(request.clone());
        self.code.pop_front()
    }
}
