//! Answers to the goal's questions: the questions read from the goal ([`questions`]), one
//! interpretation step per kind (`interpret_water_table`, `interpret_bedrock`,
//! `interpret_change`, `interpret_water_content`) that turns the run's products into a value
//! with evidence per method and their agreement (the science is in `methods::*::interpret`),
//! and `answer_questions`, which gathers them into the `answers` artifact `result.json`, the
//! report's **Answers** section and the chat read.

pub mod answer;
pub mod evidence;
pub mod questions;
pub mod report;
pub mod settings;
pub mod tools;

pub use answer::{Agreement, Answer, Answers, Evidence, Status};
pub use questions::{Question, QuestionKind, answerable_kinds, questions};
pub use settings::AnswerSettings;
pub use tools::collect;

use super::kit::{keys, register_all};
use crate::runtime::tool::RegistryError;
use crate::runtime::{Registry, RunContext, Tool, ToolResult};

/// The module name the answer steps carry (the report and the fusion step wait for method
/// steps, not for these; the report waits for these).
pub const MODULE: &str = "answers";

/// Whether the goal asks a question of `kind`.
fn asks(ctx: &RunContext, kind: QuestionKind) -> bool {
    questions(&ctx.goal).iter().any(|q| q.kind == kind)
}

/// Whether an interpretation step can still run.
pub fn interpretation_pending(ctx: &RunContext) -> bool {
    super::shared_registry()
        .tools()
        .iter()
        .any(|t| t.module == MODULE && t.name != "answer_questions" && t.available(ctx))
}

/// An interpretation step for `kind`: runs once every method step is done.
fn interpretation(
    name: &str,
    description: &str,
    label: &str,
    kind: QuestionKind,
    produces: &'static str,
    handler: fn(&mut RunContext) -> ToolResult,
) -> Tool {
    Tool::new(name, description, handler)
        .produces(&[produces])
        .label(label)
        .module(MODULE)
        .when(move |ctx| asks(ctx, kind) && !super::reporting::method_steps_pending(ctx))
}

/// Register the interpretation steps and the gathering step (after the methods).
pub fn register(reg: &mut Registry) -> Result<(), RegistryError> {
    use QuestionKind::*;
    register_all(
        reg,
        [
            interpretation(
                "interpret_water_table",
                "Answer the goal's water-table question from every method's products: the seismic 1450–1600 m/s velocity contour, the ERT model's strongest downward resistivity decrease, the GPR line's strongest flat reflector; each with its uncertainty, and their agreement.",
                "Interpret the water table",
                WaterTableDepth,
                keys::ANSWER_WATER_TABLE,
                tools::interpret_water_table,
            ),
            interpretation(
                "interpret_bedrock",
                "Answer the goal's bedrock / interface depth question: the depth profile of the seismic threshold-velocity contour (2000 m/s unless answers_params says otherwise) along the line.",
                "Interpret the bedrock depth",
                BedrockDepth,
                keys::ANSWER_BEDROCK,
                tools::interpret_bedrock,
            ),
            interpretation(
                "interpret_change",
                "Answer the goal's change-over-time question from the time-lapse ERT model: where the change is (centroid, extent), how large (median and max %), how it evolved, and whether the data require it.",
                "Interpret the change between surveys",
                Change,
                keys::ANSWER_CHANGE,
                tools::interpret_change,
            ),
            interpretation(
                "interpret_water_content",
                "Answer the goal's water-content question: the ERT water content per depth (and at the asked depth) with its Monte Carlo spread.",
                "Interpret the water content",
                WaterContent,
                keys::ANSWER_WATER_CONTENT,
                tools::interpret_water_content,
            ),
            Tool::new(
                "answer_questions",
                "Gather the answers to every question of the goal (and say which could not be answered and why). Run after the interpretation steps, before the report.",
                tools::answer_questions,
            )
            .produces(&[keys::ANSWERS])
            .label("Answer the questions")
            .module(MODULE)
            .when(|ctx| {
                !questions(&ctx.goal).is_empty()
                    && !super::reporting::method_steps_pending(ctx)
                    && !interpretation_pending(ctx)
            }),
        ],
    )
}
