//! The chat: a tool-using assistant that drives the studio, with every call shown as a card to
//! approve or reject before it runs.
//!
//! Two modes, like the studio: **Step by step** — the assistant proposes each action and the
//! person approves it (or rejects it, or approves it with a note); **Auto to report** — the goal
//! goes to the controller and the chat narrates each finished step. The loop itself is
//! [`crate::llm::harness`]; it runs on a worker thread, and each tool call comes to the UI
//! thread to be approved and carried out against the panels (the only way the chat touches
//! the studio is the panels' `describe` / `apply`).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crossbeam_channel::{Receiver, Sender, unbounded};
use egui::{Color32, RichText};
use serde_json::{Value, json};

use crate::llm::harness::{
    AgentEvent, ChatMessage, ChatModel, ChatTool, Harness, Role, ToolCall, ToolOutcome,
};

/// The system prompt of the studio's assistant.
pub const SYSTEM: &str = "You help a hydrogeophysicist process field data in HydroGeo Studio. You act only through the tools you are given: list the modules, open one, describe the open module, apply one of its actions, read the studio's state, inspect a product, or advance the run by one step. The person approves every call before it runs; a call they decline comes back as declined, which is not an error — ask or choose differently. An action that failed comes back as an ordinary result ending in a status line: read it and fix the cause. A result saying nothing was found is an answer, not an error: do not repeat the same call. A long action answers \"started\": say so and wait for the person rather than calling it again. Never invent numbers: every number you state must come from a tool result. Keep answers short.";

/// The tools the assistant has, with their argument schemas.
pub fn tool_specs() -> Vec<(String, String, Value)> {
    vec![
        ("list_modules".into(), "The studio's modules (Project, ERT, Seismic, EM, MT, Grav/Mag, GPR, Report) with their keys.".into(), json!({"type": "object", "properties": {}})),
        ("open_module".into(), "Bring a module to the front; returns its description (actions, arguments, state).".into(), json!({"type": "object", "properties": {"module": {"type": "string"}}, "required": ["module"]})),
        ("describe_module".into(), "The open module's actions, their arguments and its state.".into(), json!({"type": "object", "properties": {}})),
        ("apply_action".into(), "Carry out one action of a module with arguments.".into(), json!({"type": "object", "properties": {"module": {"type": "string"}, "action": {"type": "string"}, "args": {"type": "object"}}, "required": ["module", "action"]})),
        ("read_state".into(), "The studio's state: the project and its goal, whether a run is going on, the steps so far, the products made.".into(), json!({"type": "object", "properties": {}})),
        ("inspect_product".into(), "The numbers a product of the current run holds (read-only).".into(), json!({"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]})),
        ("run_step".into(), "Advance the run by one step: start a step-by-step run if none is going on, or approve the step it is waiting on.".into(), json!({"type": "object", "properties": {}})),
        ("get_answers".into(), "The answers to the goal's questions the current run computed (water table, bedrock, change, water content): each with its value, unit, uncertainty, where, the evidence per method (value, uncertainty, how, the product or figure), their agreement and status; unanswered questions with the reason.".into(), json!({"type": "object", "properties": {}})),
        ("find_data_files".into(), "Find the data files in the project folder that a reader recognises, optionally for one method (ert, seismic, tdem, mt, gravmag, gpr).".into(), json!({"type": "object", "properties": {"method": {"type": "string"}}})),
        ("read_data_file".into(), "Summarise one data file (method, counts, ranges, units) as the readers see it; the path is relative to the project folder.".into(), json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})),
    ]
}

/// A call waiting for the person, and where its outcome goes.
pub struct PendingCall {
    /// The call.
    pub call: ToolCall,
    reply: Option<Sender<ToolOutcome>>,
}

impl std::fmt::Debug for PendingCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingCall")
            .field("call", &self.call)
            .finish()
    }
}

impl PendingCall {
    /// Send the outcome (once).
    pub fn answer(&mut self, outcome: ToolOutcome) {
        if let Some(tx) = self.reply.take() {
            let _ = tx.send(outcome);
        }
    }
}

impl Drop for PendingCall {
    fn drop(&mut self) {
        // The chat went away: no result is recorded for this call (it will read back as
        // interrupted in the next request).
        if let Some(tx) = self.reply.take() {
            let _ = tx.send(ToolOutcome::Abandoned);
        }
    }
}

/// What the worker tells the chat.
enum FromWorker {
    Event(AgentEvent),
    Call(ToolCall, Sender<ToolOutcome>),
    Done(Vec<ChatMessage>),
}

/// Makes the chat's model from the current settings (tests inject scripted ones).
pub type ChatModelMaker = Arc<dyn Fn() -> Option<Box<dyn ChatModel>> + Send + Sync>;

/// Chat mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChatMode {
    /// Approve each action.
    StepByStep,
    /// Hand the goal to the controller and narrate.
    Auto,
}

/// The chat panel's state.
pub struct ChatPanel {
    /// The record of the conversation.
    pub messages: Vec<ChatMessage>,
    /// Narration lines (auto mode) and notices, each with the number of messages there were
    /// when it came: drawn in that order among the messages, so the newest is at the bottom.
    pub narration: Vec<(usize, String)>,
    /// The text being typed.
    pub input: String,
    /// A note to attach to an approval.
    pub approval_note: String,
    /// Messages sent while the assistant works, not yet read.
    pub queued: Arc<Mutex<Vec<String>>>,
    /// The mode.
    pub mode: ChatMode,
    /// The call waiting for approval.
    pub pending: Option<PendingCall>,
    /// The app asked to start an auto run with this goal.
    pub auto_goal: Option<String>,
    /// The current run was started from the chat ("Narrated auto run"): its finished steps
    /// are narrated here. A run started by the window's buttons stays in the timeline.
    pub narrate_run: bool,
    model: ChatModelMaker,
    worker: Option<Receiver<FromWorker>>,
    working: bool,
    /// Where the conversation is saved.
    pub save_path: Option<PathBuf>,
}

impl std::fmt::Debug for ChatPanel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatPanel")
            .field("messages", &self.messages.len())
            .finish_non_exhaustive()
    }
}

impl ChatPanel {
    /// A new chat with its model maker.
    pub fn new(model: ChatModelMaker) -> ChatPanel {
        ChatPanel {
            messages: Vec::new(),
            narration: Vec::new(),
            narrate_run: false,
            input: String::new(),
            approval_note: String::new(),
            queued: Arc::new(Mutex::new(Vec::new())),
            mode: ChatMode::StepByStep,
            pending: None,
            auto_goal: None,
            model,
            worker: None,
            working: false,
            save_path: None,
        }
    }

    /// Whether the assistant is working.
    pub fn working(&self) -> bool {
        self.working
    }

    /// Send what was typed: a new prompt, or — while the assistant works — a steering message
    /// shown as queued until it is read.
    pub fn send(&mut self) {
        let text = self.input.trim().to_string();
        if text.is_empty() {
            return;
        }
        self.input.clear();
        if self.mode == ChatMode::Auto {
            self.messages.push(ChatMessage::user(&text));
            self.auto_goal = Some(text);
            return;
        }
        if self.working {
            self.queued
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(text);
            return;
        }
        let Some(model) = (self.model)() else {
            self.messages.push(ChatMessage::user(&text));
            self.narrate(
                "No model is connected, so the assistant cannot answer. Set one in Settings (or HGX_MODEL and a key), or use Auto to report, which runs without one.",
            );
            return;
        };
        let (tx, rx) = unbounded::<FromWorker>();
        let opening = self.messages.clone();
        let queued = self.queued.clone();
        let tools: Vec<ChatTool> = tool_specs()
            .into_iter()
            .map(|(name, description, parameters)| {
                let tx = tx.clone();
                ChatTool {
                    name,
                    description,
                    parameters,
                    execute: Box::new(move |_args| ToolOutcome::Error("proxy".into())),
                }
                .with_proxy(tx)
            })
            .collect();
        let tx2 = tx.clone();
        std::thread::spawn(move || {
            let mut h = Harness::new(model, SYSTEM, tools, &opening);
            h.max_turns = Some(24);
            let mut steer =
                move || std::mem::take(&mut *queued.lock().unwrap_or_else(|p| p.into_inner()));
            let tx3 = tx2.clone();
            crate::llm::harness::run_agent(
                h.model.as_mut(),
                &h.system,
                &mut h.messages,
                &mut h.tools,
                &text,
                crate::llm::harness::RunLimits {
                    max_turns: h.max_turns,
                    steering: Some(&mut steer),
                    ..Default::default()
                },
                &mut |e| {
                    let _ = tx3.send(FromWorker::Event(e));
                },
            );
            let _ = tx2.send(FromWorker::Done(h.messages));
        });
        self.worker = Some(rx);
        self.working = true;
    }

    /// Take in what the worker sent. Returns a tool call that needs the person, if one came.
    pub fn poll(&mut self) {
        let Some(rx) = &self.worker else { return };
        let msgs: Vec<FromWorker> = rx.try_iter().collect();
        for m in msgs {
            match m {
                FromWorker::Event(AgentEvent::MessageEnd(msg)) => {
                    if msg.role == Role::User {
                        let mut q = self.queued.lock().unwrap_or_else(|p| p.into_inner());
                        if let Some(i) = q.iter().position(|t| *t == msg.content) {
                            q.remove(i);
                        }
                    }
                    self.messages.push(msg);
                }
                FromWorker::Event(_) => {}
                FromWorker::Call(call, reply) => {
                    self.pending = Some(PendingCall {
                        call,
                        reply: Some(reply),
                    });
                }
                FromWorker::Done(record) => {
                    self.messages = record;
                    self.working = false;
                    self.save();
                }
            }
        }
        if !self.working {
            self.worker = None;
        }
    }

    /// Save the conversation (messages, tool calls, results) as JSON.
    pub fn save(&self) {
        if let Some(p) = &self.save_path {
            if let Some(d) = p.parent() {
                let _ = std::fs::create_dir_all(d);
            }
            // Temp file + rename, as for the run's own records: a crash mid-save leaves
            // the previous conversation whole, never a cut JSON file.
            let _ = crate::runtime::run_folder::write_file_atomic(
                p,
                serde_json::to_string_pretty(&json!({"messages": self.messages}))
                    .unwrap_or_default()
                    .as_bytes(),
            );
        }
    }

    /// Reopen a saved conversation.
    pub fn reopen(&mut self, path: &std::path::Path) -> Result<(), String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let v: Value =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        self.messages = serde_json::from_value(v["messages"].clone())
            .map_err(|e| format!("{}: {e}", path.display()))?;
        self.save_path = Some(path.to_path_buf());
        Ok(())
    }

    /// Add a narration line or notice after the messages so far.
    pub fn narrate(&mut self, text: &str) {
        self.narration.push((self.messages.len(), text.to_string()));
    }

    /// Draw the chat. The app carries out approved calls (it owns the panels): this returns
    /// `Some((call, note))` when the person approved one, and answers rejections itself.
    pub fn ui(&mut self, ui: &mut egui::Ui) -> Option<(ToolCall, String)> {
        let mut approved = None;
        ui.horizontal(|ui| {
            ui.label("Chat mode:");
            ui.selectable_value(&mut self.mode, ChatMode::StepByStep, "Action by action")
                .on_hover_text("The assistant proposes each action; you approve or reject it.");
            ui.selectable_value(&mut self.mode, ChatMode::Auto, "Narrated auto run")
                .on_hover_text("Your message becomes the goal of an Auto to report run; each finished step is narrated here.");
        });
        egui::Panel::bottom("chat_input").show(ui, |ui| {
            if let Some(p) = &mut self.pending {
                egui::Frame::group(ui.style())
                    .stroke(egui::Stroke::new(2.0, Color32::from_rgb(40, 110, 200)))
                    .show(ui, |ui| {
                        ui.label(
                            RichText::new(format!("The assistant wants to call {}", p.call.name))
                                .strong(),
                        );
                        ui.monospace(p.call.arguments.to_string());
                        let l = ui.label("Note with the approval:");
                        ui.text_edit_singleline(&mut self.approval_note)
                            .labelled_by(l.id);
                        ui.horizontal(|ui| {
                            if ui.button("Approve").clicked() {
                                approved =
                                    Some((p.call.clone(), std::mem::take(&mut self.approval_note)));
                            }
                            if ui.button("Reject").clicked() {
                                let note = std::mem::take(&mut self.approval_note);
                                p.answer(ToolOutcome::Declined(note));
                            }
                        });
                    });
            }
            let queued = self
                .queued
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
            for q in queued {
                ui.small(format!("queued: {q}"));
            }
            ui.horizontal(|ui| {
                let l = ui.label("Message:");
                let edit = ui
                    .add(
                        egui::TextEdit::singleline(&mut self.input)
                            .hint_text("a goal, a question, or a note"),
                    )
                    .labelled_by(l.id);
                let enter = edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                if ui.button("Send").clicked() || enter {
                    self.send();
                }
            });
        });
        if self.pending.as_ref().is_some_and(|p| p.reply.is_none()) {
            self.pending = None;
        }
        egui::ScrollArea::vertical()
            .id_salt("chat_scroll")
            .stick_to_bottom(true)
            .auto_shrink([false, false])
            .show(ui, |ui| {
                // Messages and narration in the order they came: the newest at the bottom.
                let mut lines = self.narration.iter().peekable();
                for (i, m) in self.messages.iter().enumerate() {
                    while let Some((_, n)) = lines.next_if(|(at, _)| *at <= i) {
                        ui.label(n);
                    }
                    message_ui(ui, m, i);
                }
                for (_, n) in lines {
                    ui.label(n);
                }
                if self.working && self.pending.is_none() {
                    ui.horizontal(|ui| {
                        ui.spinner();
                        ui.small("The assistant is working…");
                    });
                }
            });
        approved
    }
}

/// One message of the record: the person's, the assistant's text with a card per tool call
/// it made, or a tool's result as a card with a one-line summary and the details folded.
fn message_ui(ui: &mut egui::Ui, m: &ChatMessage, i: usize) {
    match m.role {
        Role::User => {
            ui.label(RichText::new(format!("You: {}", m.content)).strong());
        }
        Role::Assistant if m.stop_reason == "error" => {
            ui.colored_label(Color32::from_rgb(190, 60, 40), &m.content);
        }
        Role::Assistant => {
            if !m.content.is_empty() {
                ui.label(format!("Assistant: {}", m.content));
            }
            for c in &m.tool_calls {
                egui::Frame::group(ui.style()).show(ui, |ui| {
                    ui.horizontal_wrapped(|ui| {
                        ui.label(RichText::new(format!("⚙ {}", c.name)).strong());
                        ui.small(one_line(&arguments_text(&c.arguments), 90));
                    });
                });
            }
        }
        Role::Tool => {
            let colour = if m.is_error {
                Color32::from_rgb(190, 60, 40)
            } else {
                Color32::GRAY
            };
            let first = one_line(&m.content, 90);
            egui::CollapsingHeader::new(RichText::new(format!("result: {first}")).color(colour))
                .id_salt(("chat_result", i))
                .show(ui, |ui| {
                    let full: String = m.content.chars().take(4000).collect();
                    ui.label(RichText::new(full).monospace().small());
                });
        }
    }
}

/// A tool call's arguments as `key: value, …` (strings unquoted), not raw JSON.
fn arguments_text(args: &serde_json::Value) -> String {
    match args.as_object() {
        Some(m) if !m.is_empty() => m
            .iter()
            .map(|(k, v)| match v {
                serde_json::Value::String(s) => format!("{k}: {s}"),
                other => format!("{k}: {other}"),
            })
            .collect::<Vec<_>>()
            .join(", "),
        Some(_) => "no arguments".into(),
        None => args.to_string(),
    }
}

/// The first line of `text`, at most `max` characters (an ellipsis when cut).
fn one_line(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or("").trim();
    let cut = line.chars().count() > max || text.lines().nth(1).is_some();
    let mut out: String = line.chars().take(max).collect();
    if cut {
        out.push('…');
    }
    out
}

trait Proxy {
    fn with_proxy(self, tx: Sender<FromWorker>) -> ChatTool;
}

impl Proxy for ChatTool {
    /// Replace the tool's body by a round trip to the UI: the call waits for the person.
    fn with_proxy(mut self, tx: Sender<FromWorker>) -> ChatTool {
        let name = self.name.clone();
        let mut n = 0u64;
        self.execute = Box::new(move |args| {
            n += 1;
            let (rtx, rrx) = unbounded::<ToolOutcome>();
            let call = ToolCall {
                id: format!("{name}-{n}"),
                name: name.clone(),
                arguments: args.clone(),
            };
            if tx.send(FromWorker::Call(call, rtx)).is_err() {
                return ToolOutcome::Abandoned;
            }
            rrx.recv().unwrap_or(ToolOutcome::Abandoned)
        });
        self
    }
}
