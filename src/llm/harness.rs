//! The chat's agent loop: a model that acts only through tools, with the loop discipline the
//! seeds teach.
//!
//! * A command or action that fails is an **ordinary result** with a status line at its end
//!   ("Action exited with status failed: …"); a **tool error** (`is_error`) means the tool itself
//!   could not do its job. The model reads the failure and fixes it instead of giving up.
//! * A tool call with no recorded result (the chat was closed, the app crashed, the call was
//!   cancelled) is repaired in the next request as an **error** result saying no result was
//!   recorded, that it may not have run or may have run partly, and to check before repeating
//!   it — never as success. The record itself is not rewritten.
//! * The turn limit is checked *before* a model call, so no call is left without a result; the
//!   limit is reported in the record.
//! * Each conversation copies the opening it is given: two conversations never share messages,
//!   and an app-wide opening is never mutated.
//! * Messages the user sends while the assistant works are steering (read before the next model
//!   request) or follow-ups (after the turn).
//! * A tool that looked and found nothing returns an [`Absence`]: what was looked for (never the
//!   caller's words), what was covered, what was not, that asking again returns the same — with
//!   a fixed note. A tool that could not look returns an error. The two never share a shape.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub use crate::runtime::absence::{ABSENCE_NOTE, Absence, AbsenceError, TryInsteadTool};

/// The text a missing result is repaired with.
pub const INTERRUPTED: &str = "Tool call interrupted: no result was recorded. It may not have run, or may have run partly; check before repeating it.";

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The person.
    User,
    /// The model.
    Assistant,
    /// A tool's result.
    Tool,
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call's id (the result refers to it).
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// Its arguments.
    pub arguments: Value,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// Who.
    pub role: Role,
    /// Text.
    pub content: String,
    /// Calls (assistant messages).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// The call this answers (tool results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// A tool error (the tool could not do its job), as opposed to an ordinary result.
    #[serde(default)]
    pub is_error: bool,
    /// `end`, `tool_use`, or `error` (an assistant message that stands for a failure of the
    /// loop itself, not sent to the model).
    #[serde(default)]
    pub stop_reason: String,
}

impl ChatMessage {
    /// A user message.
    pub fn user(text: &str) -> ChatMessage {
        ChatMessage {
            role: Role::User,
            content: text.to_string(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            is_error: false,
            stop_reason: String::new(),
        }
    }

    /// An assistant message (text and calls).
    pub fn assistant(text: &str, calls: Vec<ToolCall>) -> ChatMessage {
        let stop = if calls.is_empty() { "end" } else { "tool_use" };
        ChatMessage {
            role: Role::Assistant,
            content: text.to_string(),
            tool_calls: calls,
            tool_call_id: None,
            is_error: false,
            stop_reason: stop.into(),
        }
    }

    /// A tool result.
    pub fn result(id: &str, content: &str, is_error: bool) -> ChatMessage {
        ChatMessage {
            role: Role::Tool,
            content: content.to_string(),
            tool_calls: Vec::new(),
            tool_call_id: Some(id.to_string()),
            is_error,
            stop_reason: String::new(),
        }
    }

    /// A loop failure recorded as an assistant message (kept in the record, never sent).
    pub fn loop_error(text: &str) -> ChatMessage {
        ChatMessage {
            stop_reason: "error".into(),
            ..ChatMessage::assistant(text, Vec::new())
        }
    }
}

/// `U A[c1] R(c1) A` — the shape of a record, for tests and logs.
pub fn shape(messages: &[ChatMessage]) -> String {
    messages
        .iter()
        .map(|m| match m.role {
            Role::User => "U".to_string(),
            Role::Tool => format!("R({})", m.tool_call_id.clone().unwrap_or_default()),
            Role::Assistant if m.stop_reason == "error" => "A(error)".into(),
            Role::Assistant if m.tool_calls.is_empty() => "A".into(),
            Role::Assistant => format!(
                "A[{}]",
                m.tool_calls
                    .iter()
                    .map(|c| c.id.as_str())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The messages as the model should see them: loop errors left out, and every call without a
/// result answered by an error result saying so, placed right after the call's message. The
/// record is not changed.
pub fn repair_tool_history(messages: &[ChatMessage]) -> Vec<ChatMessage> {
    let mut out: Vec<ChatMessage> = Vec::new();
    let mut i = 0;
    while i < messages.len() {
        let m = &messages[i];
        if m.role == Role::Assistant && m.stop_reason == "error" {
            i += 1;
            continue;
        }
        out.push(m.clone());
        i += 1;
        if m.role == Role::Assistant && !m.tool_calls.is_empty() {
            let mut results: Vec<ChatMessage> = Vec::new();
            while i < messages.len() && messages[i].role == Role::Tool {
                results.push(messages[i].clone());
                i += 1;
            }
            for c in &m.tool_calls {
                match results
                    .iter()
                    .position(|r| r.tool_call_id.as_deref() == Some(c.id.as_str()))
                {
                    Some(k) => out.push(results.remove(k)),
                    None => out.push(ChatMessage::result(&c.id, INTERRUPTED, true)),
                }
            }
        }
    }
    out
}

/// Older tool results longer than this are summarised in the context sent to the model.
const OLD_RESULT_CHARS: usize = 600;
/// Messages sent at most.
const WINDOW: usize = 60;

/// The context for the next request: repaired, windowed (recent turns whole, the window cut on
/// a user message, older tool results shortened).
pub fn context_for_model(messages: &[ChatMessage]) -> Vec<ChatMessage> {
    let repaired = repair_tool_history(messages);
    let start = if repaired.len() > WINDOW {
        let from = repaired.len() - WINDOW;
        (from..repaired.len())
            .find(|&i| repaired[i].role == Role::User)
            .unwrap_or(from)
    } else {
        0
    };
    let n = repaired.len();
    repaired
        .into_iter()
        .enumerate()
        .skip(start)
        .map(|(i, mut m)| {
            if m.role == Role::Tool && i + 12 < n && m.content.chars().count() > OLD_RESULT_CHARS {
                let head: String = m.content.chars().take(OLD_RESULT_CHARS).collect();
                m.content = format!("{head}… [an older result, shortened to save context]");
            }
            m
        })
        .collect()
}

/// A tool the model can call.
pub struct ChatTool {
    /// Its name.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON schema of its arguments.
    pub parameters: Value,
    /// Carry it out; the outcome becomes the result message.
    pub execute: Box<dyn FnMut(&Value) -> ToolOutcome + Send>,
}

impl std::fmt::Debug for ChatTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatTool")
            .field("name", &self.name)
            .finish()
    }
}

/// The spec of a tool as a provider wants it.
pub fn tool_specs(tools: &[ChatTool]) -> Vec<Value> {
    tools
        .iter()
        .map(|t| json!({"name": t.name, "description": t.description, "parameters": t.parameters}))
        .collect()
}

/// What came of a tool call.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutcome {
    /// The tool did its job; what it did may itself have failed (say so in a status line).
    Ok(String),
    /// The tool looked and found nothing.
    Absent(Absence),
    /// The tool itself could not do its job.
    Error(String),
    /// The user declined the call before it ran (an ordinary result, not an error).
    Declined(String),
    /// No result will be recorded (the chat was closed): the call stays open in the record.
    Abandoned,
}

impl ToolOutcome {
    /// The outcome of a search that found nothing: the absence, or — when it could not be
    /// made (no `what`, no ground checked) — an error, since a tool that cannot say what it
    /// covered could not look.
    pub fn absent(absence: Result<Absence, AbsenceError>) -> ToolOutcome {
        match absence {
            Ok(a) => ToolOutcome::Absent(a),
            Err(e) => ToolOutcome::Error(e.to_string()),
        }
    }
}

/// The result message for a call's outcome (`None`: nothing is recorded).
pub fn result_message(call: &ToolCall, outcome: ToolOutcome) -> Option<ChatMessage> {
    match outcome {
        ToolOutcome::Ok(text) => Some(ChatMessage::result(&call.id, &text, false)),
        ToolOutcome::Absent(a) => Some(ChatMessage::result(
            &call.id,
            &a.to_json().to_string(),
            false,
        )),
        ToolOutcome::Error(e) => Some(ChatMessage::result(&call.id, &e, true)),
        ToolOutcome::Declined(note) => {
            let text = if note.trim().is_empty() {
                "Declined by the user; the action was not carried out.".to_string()
            } else {
                format!(
                    "Declined by the user; the action was not carried out. The user said: {note}"
                )
            };
            Some(ChatMessage::result(&call.id, &text, false))
        }
        ToolOutcome::Abandoned => None,
    }
}

/// Run one tool call against `tools`.
pub fn run_tool(tools: &mut [ChatTool], call: &ToolCall) -> ToolOutcome {
    match tools.iter_mut().find(|t| t.name == call.name) {
        Some(t) => (t.execute)(&call.arguments),
        None => ToolOutcome::Error(format!(
            "There is no tool called {}. The tools are: {}.",
            call.name,
            tools
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// A model that can use tools.
pub trait ChatModel: Send {
    /// The reply to `messages` (already repaired and windowed) under `system`, with `tools`.
    fn complete(
        &mut self,
        system: &str,
        messages: &[ChatMessage],
        tools: &[Value],
    ) -> Result<ChatMessage, String>;
}

/// Everything the loop reports.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentEvent {
    /// The loop started.
    AgentStart,
    /// A turn started.
    TurnStart,
    /// A message was added to the record.
    MessageEnd(ChatMessage),
    /// A tool call is about to run.
    ToolStart(ToolCall),
    /// A tool call ended (with its result, or none when abandoned).
    ToolEnd(ToolCall, Option<ChatMessage>),
    /// A turn ended.
    TurnEnd,
    /// The loop ended.
    AgentEnd,
}

/// Limits and queues for one run of the loop.
#[derive(Default)]
pub struct RunLimits<'a> {
    /// Turns (model calls) allowed; checked before each call.
    pub max_turns: Option<usize>,
    /// Steering messages: read before each model request.
    pub steering: Option<&'a mut dyn FnMut() -> Vec<String>>,
    /// Follow-ups: read after each turn that ended without calls.
    pub follow_ups: Option<&'a mut dyn FnMut() -> Vec<String>>,
    /// Whether to stop (the user pressed Stop): checked between calls.
    pub stop: Option<&'a dyn Fn() -> bool>,
}

/// Run the loop on `messages` (the record, appended to) from `prompt` until the model answers
/// without calls and nothing is queued, or a limit is reached.
pub fn run_agent(
    model: &mut dyn ChatModel,
    system: &str,
    messages: &mut Vec<ChatMessage>,
    tools: &mut [ChatTool],
    prompt: &str,
    limits: RunLimits<'_>,
    on_event: &mut dyn FnMut(AgentEvent),
) {
    let RunLimits {
        max_turns,
        mut steering,
        mut follow_ups,
        stop,
    } = limits;
    let ask = |q: &mut Option<&mut dyn FnMut() -> Vec<String>>| -> Vec<String> {
        q.as_mut().map(|f| f()).unwrap_or_default()
    };
    let stopped = || stop.is_some_and(|s| s());
    on_event(AgentEvent::AgentStart);
    let mut turn = 0usize;
    let mut pending: Vec<String> = vec![prompt.to_string()];
    pending.extend(ask(&mut steering));
    let specs = tool_specs(tools);
    'outer: while !pending.is_empty() {
        let mut calls_made = true;
        while calls_made || !pending.is_empty() {
            // The limit is checked before the call, so no call is ever left without a result.
            if max_turns.is_some_and(|m| turn >= m) {
                let m = max_turns.unwrap_or(0);
                for p in pending.drain(..) {
                    let msg = ChatMessage::user(&p);
                    messages.push(msg.clone());
                    on_event(AgentEvent::MessageEnd(msg));
                }
                let msg = ChatMessage::loop_error(&format!("Agent stopped after max_turns={m}"));
                messages.push(msg.clone());
                on_event(AgentEvent::MessageEnd(msg));
                break 'outer;
            }
            if stopped() {
                let msg = ChatMessage::loop_error("Stopped by the user.");
                messages.push(msg.clone());
                on_event(AgentEvent::MessageEnd(msg));
                break 'outer;
            }
            turn += 1;
            on_event(AgentEvent::TurnStart);
            for p in pending.drain(..) {
                let msg = ChatMessage::user(&p);
                messages.push(msg.clone());
                on_event(AgentEvent::MessageEnd(msg));
            }
            let reply = match model.complete(system, &context_for_model(messages), &specs) {
                Ok(r) => r,
                Err(e) => {
                    let msg =
                        ChatMessage::loop_error(&format!("The model could not be reached: {e}"));
                    messages.push(msg.clone());
                    on_event(AgentEvent::MessageEnd(msg));
                    on_event(AgentEvent::TurnEnd);
                    break 'outer;
                }
            };
            messages.push(reply.clone());
            on_event(AgentEvent::MessageEnd(reply.clone()));
            calls_made = !reply.tool_calls.is_empty();
            for call in &reply.tool_calls {
                on_event(AgentEvent::ToolStart(call.clone()));
                let outcome = if stopped() {
                    ToolOutcome::Declined("the user stopped the assistant".into())
                } else {
                    run_tool(tools, call)
                };
                let abandoned = outcome == ToolOutcome::Abandoned;
                let result = result_message(call, outcome);
                if let Some(r) = &result {
                    messages.push(r.clone());
                    on_event(AgentEvent::MessageEnd(r.clone()));
                }
                on_event(AgentEvent::ToolEnd(call.clone(), result));
                if abandoned {
                    // The chat went away mid-call: nothing more is asked or run. The call stays
                    // open in the record and is repaired as interrupted in the next request.
                    on_event(AgentEvent::AgentEnd);
                    return;
                }
            }
            on_event(AgentEvent::TurnEnd);
            pending = ask(&mut steering);
        }
        pending = ask(&mut follow_ups);
    }
    on_event(AgentEvent::AgentEnd);
}

/// A conversation: its own copy of the opening, its record, its model and tools.
pub struct Harness {
    /// The model.
    pub model: Box<dyn ChatModel>,
    /// The system prompt.
    pub system: String,
    /// The tools.
    pub tools: Vec<ChatTool>,
    /// The record.
    pub messages: Vec<ChatMessage>,
    /// Turn limit per prompt.
    pub max_turns: Option<usize>,
}

impl Harness {
    /// A conversation starting from a COPY of `opening` (an app-wide opening is never
    /// mutated, and two conversations never share messages).
    pub fn new(
        model: Box<dyn ChatModel>,
        system: &str,
        tools: Vec<ChatTool>,
        opening: &[ChatMessage],
    ) -> Harness {
        Harness {
            model,
            system: system.to_string(),
            tools,
            messages: opening.to_vec(),
            max_turns: None,
        }
    }

    /// Send `prompt` and run the loop.
    pub fn prompt(&mut self, prompt: &str, on_event: &mut dyn FnMut(AgentEvent)) {
        run_agent(
            self.model.as_mut(),
            &self.system,
            &mut self.messages,
            &mut self.tools,
            prompt,
            RunLimits {
                max_turns: self.max_turns,
                ..Default::default()
            },
            on_event,
        );
    }
}

#[cfg(test)]
mod tests;
