//! The agent loop. Knows nothing of egui or of geophysics.
//!
//! A run holds artifacts (the data, behind [`Product`]) apart from steps (the record). The
//! controller reads the transcript, takes one tool from the menu of runnable tools — forced
//! when there is only one, by a [`Decide`] (the model) when there is a choice, in dependency
//! order when there is no model — runs it, records what it found, and chooses again, until the
//! finish artifact (the report) exists. Every event is journalled before the run goes on.

pub mod absence;
pub mod confine;
pub mod context;
pub mod controller;
pub mod decide;
pub mod events;
pub mod interaction;
pub mod journal;
pub mod offers;
pub mod product;
pub mod project;
#[cfg(test)]
mod proptests;
pub mod recovery;
pub mod rules;
pub mod run_folder;
#[cfg(test)]
mod sandbox_escapes;
pub mod scratch;
pub mod script_record;
pub mod session;
pub mod steering;
pub mod step;
pub mod tool;
pub mod toolbox;
pub mod untrusted;

pub use context::{Ended, RunContext};
pub use controller::{
    Mode, RunOptions, drive, forced_choice, next_by_policy, route_ahead, run_controller,
};
pub use decide::{Choice, Decide, DecideError, Decision, DecisionRequest, ModelEvent};
pub use events::{Event, EventBus, QuestionOption, RouteStep, Verdict};
pub use interaction::Interaction;
pub use product::{JsonProduct, Product, SharedProduct};
pub use project::Project;
pub use rules::{RecoveryRules, TableRole};
pub use steering::Steering;
pub use step::{Step, StepStatus};
pub use tool::{Outputs, Registry, Tool, ToolResult, invoke};
