//! Requests that need a person's answer: step approval, questions, script review. Queued and
//! shown one at a time (never stacked, so a click cannot land on the wrong one). Each is
//! answered exactly once: by a button, by Escape (the safe answer; never for an approval, whose
//! Stop is only the Stop button — and a click outside never answers), or — when the dialog is
//! dropped because the window closes or the run ends — with its safe default, from `Drop`.

use std::collections::VecDeque;

use crossbeam_channel::Sender;
use egui::{Color32, RichText, text::LayoutJob};

use super::bridge::Command;
use crate::runtime::events::{Event, QuestionOption};

/// What is being asked.
#[derive(Debug, Clone, PartialEq)]
pub enum Ask {
    /// Proceed / skip / stop before a step.
    Approval {
        /// Step number.
        step: usize,
        /// Label.
        label: String,
        /// Module.
        module: String,
        /// Why the controller chose it.
        reason: String,
        /// Whether it cannot be undone (the default button is then not Proceed).
        irreversible: bool,
    },
    /// A question with options.
    Question {
        /// The question.
        question: String,
        /// The options.
        options: Vec<QuestionOption>,
        /// The default option's id.
        default: String,
    },
    /// Generated code to read before it may run.
    Script {
        /// What it is for.
        purpose: String,
        /// Inputs with their paths.
        inputs: Vec<(String, String)>,
        /// The code.
        code: String,
        /// Sandbox protections active here.
        protections: Vec<String>,
        /// The person is editing it.
        editing: bool,
        /// The edited text.
        edited: String,
    },
}

/// A request awaiting its one answer.
pub struct Pending {
    /// The request id.
    pub id: u64,
    /// What is asked.
    pub ask: Ask,
    reply: Option<Sender<Command>>,
}

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending")
            .field("id", &self.id)
            .field("ask", &self.ask)
            .finish()
    }
}

impl Pending {
    /// A request answered through `reply`.
    pub fn new(id: u64, ask: Ask, reply: Sender<Command>) -> Pending {
        Pending {
            id,
            ask,
            reply: Some(reply),
        }
    }

    /// Send the answer; later calls do nothing (exactly once).
    pub fn answer(&mut self, command: Command) {
        if let Some(tx) = self.reply.take() {
            let _ = tx.send(command);
        }
    }

    /// Whether it has been answered.
    pub fn answered(&self) -> bool {
        self.reply.is_none()
    }

    /// The safe default: stop before a step, the stated default option, do not run code.
    pub fn safe_default(&self) -> Command {
        match &self.ask {
            Ask::Approval { .. } => Command::StopAt { id: self.id },
            Ask::Question { default, .. } => Command::Answer {
                id: self.id,
                option: default.clone(),
            },
            Ask::Script { .. } => Command::ScriptDecision {
                id: self.id,
                run: false,
                edited_source: None,
            },
        }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if !self.answered() {
            let d = self.safe_default();
            self.answer(d);
        }
    }
}

/// The queue of open requests.
#[derive(Debug, Default)]
pub struct Dialogs {
    queue: VecDeque<Pending>,
}

impl Dialogs {
    /// No open requests.
    pub fn new() -> Self {
        Self::default()
    }

    /// Queue the request an event carries (approvals, questions, script reviews), answered
    /// through `reply`; a later `Answered` event for it removes it (answered elsewhere).
    pub fn on_event(&mut self, event: &Event, reply: &Sender<Command>) {
        let ask = match event {
            Event::ApprovalNeeded {
                id,
                step,
                label,
                module,
                reason,
                irreversible,
                ..
            } => Some((
                *id,
                Ask::Approval {
                    step: *step,
                    label: label.clone(),
                    module: module.clone(),
                    reason: reason.clone(),
                    irreversible: *irreversible,
                },
            )),
            Event::Question {
                id,
                question,
                options,
                default,
            } => Some((
                *id,
                Ask::Question {
                    question: question.clone(),
                    options: options.clone(),
                    default: default.clone(),
                },
            )),
            Event::ScriptReview {
                id,
                purpose,
                inputs,
                code,
                protections,
                ..
            } => Some((
                *id,
                Ask::Script {
                    purpose: purpose.clone(),
                    inputs: inputs.clone(),
                    code: code.clone(),
                    protections: protections.clone(),
                    editing: false,
                    edited: code.clone(),
                },
            )),
            Event::Answered { id, .. } => {
                // Answered (by us or by a default): forget it without answering again.
                if let Some(pos) = self.queue.iter().position(|p| p.id == *id)
                    && let Some(mut p) = self.queue.remove(pos)
                {
                    p.reply = None;
                }
                None
            }
            _ => None,
        };
        if let Some((id, ask)) = ask {
            self.queue.push_back(Pending::new(id, ask, reply.clone()));
        }
    }

    /// How many requests are open.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// Whether none are.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// The request shown now.
    pub fn current(&self) -> Option<&Pending> {
        self.queue.front()
    }

    /// Answer every open request with its safe default (window closing, run stopped).
    pub fn decline_all(&mut self) {
        self.queue.clear();
    }

    /// Show the front request as a modal. Answered requests leave the queue.
    pub fn ui(&mut self, ctx: &egui::Context) {
        let Some(front) = self.queue.front_mut() else {
            return;
        };
        let id = front.id;
        let mut answer: Option<Command> = None;
        let escape = ctx.input(|i| i.key_pressed(egui::Key::Escape));
        // An approval is a window, not a modal: while it waits the panels, the timeline and
        // the note box stay usable (issue 18). Only its buttons answer it. Questions and
        // script reviews are modal: they need the answer before anything else happens.
        let is_approval = matches!(front.ask, Ask::Approval { .. });
        let nothing_focused = ctx.memory(|m| m.focused().is_none());
        let draw = |ui: &mut egui::Ui| {
            ui.set_max_width(760.0);
            answer = match front.ask {
                Ask::Approval { .. } => approval_ui(ui, &mut front.ask, id, nothing_focused),
                Ask::Question { .. } => question_ui(ui, &mut front.ask, id),
                Ask::Script { .. } => script_ui(ui, &mut front.ask, id),
            };
        };
        if is_approval {
            egui::Window::new("Approve the next step")
                .id(egui::Id::NULL.with(("hgx_request", id)))
                .collapsible(false)
                .resizable(false)
                .anchor(egui::Align2::CENTER_TOP, egui::vec2(0.0, 48.0))
                .show(ctx, draw);
        } else {
            egui::Modal::new(egui::Id::NULL.with(("hgx_request", id))).show(ctx, draw);
        }
        // A click outside the dialog never answers it (egui's `should_close` would), and
        // Escape is not Stop: an approval is answered only by its buttons.
        let escape_answers = !matches!(front.ask, Ask::Approval { .. });
        if answer.is_none() && escape && escape_answers {
            answer = Some(front.safe_default());
        }
        if let Some(a) = answer {
            front.answer(a);
            self.queue.pop_front();
        }
    }
}

/// The approval of the next step: Proceed, Skip or Stop here (only its buttons answer it).
fn approval_ui(
    ui: &mut egui::Ui,
    ask: &mut Ask,
    id: u64,
    nothing_focused: bool,
) -> Option<Command> {
    let Ask::Approval {
        step,
        label,
        module,
        reason,
        irreversible,
    } = ask
    else {
        return None;
    };
    let mut answer = None;
    ui.heading(format!("Next step {step}: {label}"));
    ui.small(format!("module: {module}"));
    ui.label(format!("Why: {reason}"));
    if *irreversible {
        ui.colored_label(
            Color32::from_rgb(190, 60, 40),
            "This step cannot be undone.",
        );
    }
    ui.horizontal(|ui| {
        let proceed = ui.button("Proceed");
        let skip = ui.button("Skip");
        let stop = ui.button("Stop here");
        // The keyboard goes to the safe answer only when nothing else has
        // it: taking it every frame would make the note box unusable.
        if nothing_focused {
            if !*irreversible {
                proceed.request_focus();
            } else {
                skip.request_focus();
            }
        }
        if proceed.clicked() {
            answer = Some(Command::Proceed { id });
        }
        if skip.clicked() {
            answer = Some(Command::Skip { id });
        }
        if stop.clicked() {
            answer = Some(Command::StopAt { id });
        }
    });
    answer
}

/// A question from the run: one button per option, the default marked.
fn question_ui(ui: &mut egui::Ui, ask: &mut Ask, id: u64) -> Option<Command> {
    let Ask::Question {
        question,
        options,
        default,
    } = ask
    else {
        return None;
    };
    let mut answer = None;
    ui.heading("A question from the run");
    ui.label(question.as_str());
    ui.add_space(6.0);
    for o in options.iter() {
        let text = if o.id == *default {
            format!("{} (default)", o.label)
        } else {
            o.label.clone()
        };
        if ui.button(text).clicked() {
            answer = Some(Command::Answer {
                id,
                option: o.id.clone(),
            });
        }
        if !o.detail.is_empty() {
            ui.small(&o.detail);
        }
    }
    answer
}

/// The review of a generated script: its purpose, inputs, protections and code; Run script only on an explicit press.
fn script_ui(ui: &mut egui::Ui, ask: &mut Ask, id: u64) -> Option<Command> {
    let Ask::Script {
        purpose,
        inputs,
        code,
        protections,
        editing,
        edited,
    } = ask
    else {
        return None;
    };
    let mut answer = None;
    ui.heading("Review a generated script");
    ui.label(
        RichText::new(
            "It runs only if you press Run script. Do not run is the default, and Escape declines.",
        )
        .italics(),
    );
    ui.label(format!("Purpose: {purpose}"));
    if !inputs.is_empty() {
        ui.label("Reads:");
        for (k, p) in inputs.iter() {
            ui.monospace(format!("  {k}: {p}"));
        }
    }
    ui.label(format!(
        "Protections on this machine: {}",
        if protections.is_empty() {
            "none".to_string()
        } else {
            protections.join("; ")
        }
    ));
    egui::ScrollArea::vertical()
        .max_height(360.0)
        .id_salt("script_code")
        .show(ui, |ui| {
            if *editing {
                let label = ui.label("Edited source:");
                ui.add(
                    egui::TextEdit::multiline(edited)
                        .code_editor()
                        .desired_width(f32::INFINITY)
                        .desired_rows(16),
                )
                .labelled_by(label.id);
            } else {
                ui.label(python_job(code, ui.style()));
            }
        });
    ui.horizontal(|ui| {
        let decline = ui.button("Do not run");
        // The safe answer has the keyboard, except while the person edits
        // the source: taking the focus back every frame would make the
        // editor impossible to type in.
        if !*editing {
            decline.request_focus();
        }
        if decline.clicked() {
            answer = Some(Command::ScriptDecision {
                id,
                run: false,
                edited_source: None,
            });
        }
        let edit_label = if *editing {
            "Show original"
        } else {
            "Edit before running"
        };
        if ui.button(edit_label).clicked() {
            *editing = !*editing;
        }
        if ui.button("Run script").clicked() {
            let changed = *editing && edited != code;
            answer = Some(Command::ScriptDecision {
                id,
                run: true,
                edited_source: changed.then(|| edited.clone()),
            });
        }
    });
    answer
}

/// Python source with keywords, strings, comments and numbers coloured.
pub fn python_job(code: &str, style: &egui::Style) -> LayoutJob {
    const KEYWORDS: &[&str] = &[
        "def", "return", "import", "from", "as", "for", "in", "if", "elif", "else", "while",
        "with", "try", "except", "finally", "raise", "not", "and", "or", "is", "None", "True",
        "False", "lambda", "pass", "break", "continue", "class", "yield",
    ];
    let font = egui::TextStyle::Monospace.resolve(style);
    let plain = style.visuals.text_color();
    let fmt = |c: Color32| egui::TextFormat::simple(font.clone(), c);
    let mut job = LayoutJob::default();
    for line in code.split_inclusive('\n') {
        let (body, comment) = match find_comment(line) {
            Some(i) => (&line[..i], &line[i..]),
            None => (line, ""),
        };
        let mut rest = body;
        while !rest.is_empty() {
            let c = rest.chars().next().unwrap_or(' ');
            if c == '"' || c == '\'' {
                let end = rest[1..].find(c).map_or(rest.len(), |i| i + 2);
                job.append(&rest[..end], 0.0, fmt(Color32::from_rgb(180, 100, 30)));
                rest = &rest[end..];
            } else if c.is_alphabetic() || c == '_' {
                let end = rest
                    .find(|ch: char| !(ch.is_alphanumeric() || ch == '_'))
                    .unwrap_or(rest.len());
                let word = &rest[..end];
                let colour = if KEYWORDS.contains(&word) {
                    Color32::from_rgb(160, 60, 180)
                } else {
                    plain
                };
                job.append(word, 0.0, fmt(colour));
                rest = &rest[end..];
            } else if c.is_ascii_digit() {
                let end = rest
                    .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '.'))
                    .unwrap_or(rest.len());
                job.append(&rest[..end], 0.0, fmt(Color32::from_rgb(30, 120, 160)));
                rest = &rest[end..];
            } else {
                let end = rest.char_indices().nth(1).map_or(rest.len(), |(i, _)| i);
                job.append(&rest[..end], 0.0, fmt(plain));
                rest = &rest[end..];
            }
        }
        if !comment.is_empty() {
            job.append(comment, 0.0, fmt(Color32::from_rgb(100, 130, 100)));
        }
    }
    job
}

/// The byte offset of a `#` comment outside strings.
fn find_comment(line: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '#') => return Some(i),
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), ch) if ch == q => quote = None,
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dropped_request_is_answered_once_with_its_safe_default() {
        let (tx, rx) = crossbeam_channel::unbounded();
        let mut d = Dialogs::new();
        d.on_event(
            &Event::ScriptReview {
                id: 7,
                purpose: "p".into(),
                inputs: vec![],
                code: "def main(inputs, out):\n    return {}".into(),
                language: "python".into(),
                protections: vec![],
            },
            &tx,
        );
        d.on_event(
            &Event::ApprovalNeeded {
                id: 8,
                step: 2,
                tool: "t".into(),
                label: "T".into(),
                module: "ert".into(),
                reason: "r".into(),
                irreversible: false,
            },
            &tx,
        );
        drop(d);
        let got: Vec<Command> = rx.try_iter().collect();
        assert_eq!(
            got,
            vec![
                Command::ScriptDecision {
                    id: 7,
                    run: false,
                    edited_source: None
                },
                Command::StopAt { id: 8 }
            ]
        );
    }

    #[test]
    fn answering_twice_sends_once() {
        let (tx, rx) = crossbeam_channel::unbounded();
        let mut p = Pending::new(
            1,
            Ask::Question {
                question: "q".into(),
                options: vec![],
                default: "a".into(),
            },
            tx,
        );
        p.answer(Command::Answer {
            id: 1,
            option: "b".into(),
        });
        p.answer(Command::Answer {
            id: 1,
            option: "c".into(),
        });
        drop(p);
        assert_eq!(rx.try_iter().count(), 1);
    }

    #[test]
    fn comments_are_found_outside_strings() {
        assert_eq!(find_comment("x = '#not' # yes"), Some(11));
        assert_eq!(find_comment("x = 1"), None);
    }
}
