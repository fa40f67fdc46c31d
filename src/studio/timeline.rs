//! The live timeline: the goal, the route ahead "as things stand", a card per step (label,
//! module, the controller's reason, a running clock, what it found or why it failed, its
//! figures), the model's reasoning streaming into a "choosing the next step" card, the user's
//! notes and what the run did with them, and a finish card.
//!
//! The state is built only from [`Event`]s, so a past run replays from its journal exactly as
//! it was seen live — and a step that started and never finished shows as interrupted.

use std::path::Path;
use std::time::Instant;

use egui::{Color32, RichText};

use super::images::ImageCache;
use crate::runtime::events::{Event, RouteStep};
use crate::runtime::step::{FigureRef, StepStatus};

/// One step card.
#[derive(Debug, Clone)]
pub struct Card {
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
    /// `None` while running.
    pub status: Option<StepStatus>,
    /// What it found.
    pub summary: String,
    /// Why it failed / was skipped.
    pub error: String,
    /// Its figures.
    pub figures: Vec<FigureRef>,
    /// Wall time when finished.
    pub seconds: f64,
    /// When it started (live runs; `None` in a replay).
    pub started: Option<Instant>,
    /// Progress, 0–1, and what it is doing.
    pub progress: Option<(f64, String)>,
}

/// A note the user sent and what became of it.
#[derive(Debug, Clone, PartialEq)]
pub struct NoteCard {
    /// The text.
    pub text: String,
    /// `None` while queued; what the run did with it once read.
    pub response: Option<String>,
    /// Settings it changed.
    pub changes: Vec<String>,
}

/// How the run ended, for the finish card.
#[derive(Debug, Clone, PartialEq)]
pub struct Finish {
    /// finished | exhausted | stopped | step_limit | broke.
    pub ended: String,
    /// success | incomplete | stopped.
    pub status: String,
    /// Why not a success.
    pub reasons: Vec<String>,
    /// The report, when written.
    pub report: Option<String>,
}

/// The timeline's state.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    /// The goal.
    pub goal: String,
    /// The run folder.
    pub run_dir: String,
    /// Who chooses steps.
    pub decider: String,
    /// The route ahead as things stand.
    pub route: Vec<RouteStep>,
    /// Step cards in order.
    pub cards: Vec<Card>,
    /// The model's reasoning while it chooses the next step (cleared when a step starts).
    pub thinking: Option<String>,
    /// Notes and their fate.
    pub notes: Vec<NoteCard>,
    /// Warnings, in order.
    pub warnings: Vec<String>,
    /// Paused before the next step.
    pub paused: bool,
    /// Pause was pressed while a step runs: the run pauses when it ends.
    pub pause_asked: bool,
    /// Tokens and cost so far.
    pub tokens_in: u64,
    /// Tokens out so far.
    pub tokens_out: u64,
    /// US$ so far.
    pub cost_usd: f64,
    /// The finish card, once the run ended.
    pub finish: Option<Finish>,
    /// Whether this is a replay of a past run.
    pub replay: bool,
}

impl Timeline {
    /// A new timeline for a run about to start.
    pub fn new() -> Self {
        Self::default()
    }

    /// Rebuild a timeline from a journal.
    pub fn replay(path: &Path) -> Result<Timeline, crate::runtime::journal::JournalError> {
        let r = crate::runtime::journal::replay(path)?;
        let mut t = Timeline {
            replay: true,
            ..Default::default()
        };
        for e in &r.events {
            t.apply(e);
        }
        t.close_interrupted();
        Ok(t)
    }

    /// A note the user typed (queued until a decision reads it).
    pub fn queue_note(&mut self, text: &str) {
        self.notes.push(NoteCard {
            text: text.to_string(),
            response: None,
            changes: Vec::new(),
        });
    }

    /// Cards still running when the run is over are interrupted: they may have run partly.
    pub fn close_interrupted(&mut self) {
        for c in &mut self.cards {
            if c.status.is_none() {
                c.status = Some(StepStatus::Interrupted);
                c.error = crate::runtime::journal::INTERRUPTED_NOTE.to_string();
            }
        }
    }

    /// Fold one event into the state.
    pub fn apply(&mut self, event: &Event) {
        match event {
            Event::RunStarted {
                goal,
                run_dir,
                decider,
                ..
            } => {
                self.goal = goal.clone();
                self.run_dir = run_dir.clone();
                self.decider = decider.clone();
            }
            Event::Route { ahead, .. } => self.route = ahead.clone(),
            Event::StepStarted {
                step,
                tool,
                label,
                module,
                reason,
            } => {
                self.thinking = None;
                // The route's first node is now running.
                if self.route.first().is_some_and(|r| &r.tool == tool) {
                    self.route.remove(0);
                }
                self.cards.push(Card {
                    step: *step,
                    tool: tool.clone(),
                    label: label.clone(),
                    module: module.clone(),
                    reason: reason.clone(),
                    status: None,
                    summary: String::new(),
                    error: String::new(),
                    figures: Vec::new(),
                    seconds: 0.0,
                    started: (!self.replay).then(Instant::now),
                    progress: None,
                });
            }
            Event::Progress {
                fraction, detail, ..
            } => {
                if let Some(c) = self.cards.iter_mut().rev().find(|c| c.status.is_none()) {
                    c.progress = Some((*fraction, detail.clone()));
                }
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
                let open = self
                    .cards
                    .iter_mut()
                    .rev()
                    .find(|c| c.status.is_none() && &c.tool == tool);
                match open {
                    Some(c) => {
                        c.status = Some(*status);
                        c.summary = summary.clone();
                        c.error = error.clone();
                        c.figures = figures.clone();
                        c.seconds = *seconds;
                        c.progress = None;
                    }
                    None => self.cards.push(Card {
                        // A step that never started (blocked, skipped at approval).
                        step: *step,
                        tool: tool.clone(),
                        label: label.clone(),
                        module: module.clone(),
                        reason: String::new(),
                        status: Some(*status),
                        summary: summary.clone(),
                        error: error.clone(),
                        figures: figures.clone(),
                        seconds: *seconds,
                        started: None,
                        progress: None,
                    }),
                }
            }
            Event::Thought { text } => self.thinking = Some(text.clone()),
            Event::ThoughtMore { text } => {
                self.thinking.get_or_insert_with(String::new).push_str(text)
            }
            Event::Usage {
                run_tokens_in,
                run_tokens_out,
                run_cost_usd,
                ..
            } => {
                self.tokens_in = *run_tokens_in;
                self.tokens_out = *run_tokens_out;
                self.cost_usd = *run_cost_usd;
            }
            Event::NoteHeard {
                notes,
                changes,
                response,
            } => self.notes_heard(notes, changes, response),
            Event::Warning { text } => self.warnings.push(text.clone()),
            Event::Paused { .. } => {
                self.paused = true;
                self.pause_asked = false;
            }
            Event::Resumed { .. } => self.paused = false,
            Event::RunEnded {
                ended,
                status,
                reasons,
                report,
            } => {
                self.thinking = None;
                self.paused = false;
                self.pause_asked = false;
                self.route.clear();
                self.close_interrupted();
                self.finish = Some(Finish {
                    ended: ended.clone(),
                    status: status.clone(),
                    reasons: reasons.clone(),
                    report: report.clone(),
                });
            }
            Event::Question { .. }
            | Event::ApprovalNeeded { .. }
            | Event::ScriptReview { .. }
            | Event::Answered { .. } => {}
        }
    }

    /// The run read `notes`: each queued card gets what the run made of it (a note typed
    /// elsewhere gets a card of its own).
    fn notes_heard(&mut self, notes: &[String], changes: &[String], response: &str) {
        for n in notes {
            match self
                .notes
                .iter_mut()
                .find(|c| c.response.is_none() && &c.text == n)
            {
                Some(c) => {
                    c.response = Some(response.to_string());
                    c.changes = changes.to_vec();
                }
                None => self.notes.push(NoteCard {
                    text: n.clone(),
                    response: Some(response.to_string()),
                    changes: changes.to_vec(),
                }),
            }
        }
    }

    /// Whether a step is running.
    pub fn running(&self) -> bool {
        self.cards.iter().any(|c| c.status.is_none())
    }

    /// Counts of cards by status: (ok, failed, skipped or blocked, interrupted).
    pub fn counts(&self) -> (usize, usize, usize, usize) {
        let mut n = (0, 0, 0, 0);
        for c in &self.cards {
            match c.status {
                Some(StepStatus::Ok) => n.0 += 1,
                Some(StepStatus::Failed) => n.1 += 1,
                Some(StepStatus::Skipped | StepStatus::Blocked) => n.2 += 1,
                Some(StepStatus::Interrupted) => n.3 += 1,
                None => {}
            }
        }
        n
    }

    /// The finish card's headline.
    pub fn finish_headline(&self) -> Option<String> {
        let f = self.finish.as_ref()?;
        Some(match (f.status.as_str(), f.report.is_some()) {
            ("success", _) => "Report ready".to_string(),
            ("stopped", _) => "Stopped".to_string(),
            (_, true) => "Report ready — needs review".to_string(),
            _ => "Could not finish".to_string(),
        })
    }

    /// Draw the timeline. Returns the module key of a card the user clicked, if any.
    pub fn ui(&mut self, ui: &mut egui::Ui, images: &mut ImageCache) -> Option<String> {
        let mut clicked = None;
        if !self.goal.is_empty() {
            ui.label(RichText::new(format!("Goal: {}", self.goal)).strong());
        }
        if !self.decider.is_empty() {
            ui.small(format!("Steps chosen by: {}", self.decider));
        }
        self.route_ui(ui);
        ui.separator();
        egui::ScrollArea::vertical()
            .id_salt("timeline_scroll")
            .stick_to_bottom(true)
            .auto_shrink([false, false])
            .show(ui, |ui| {
                for c in &self.cards {
                    if card_ui(ui, c, images) {
                        clicked = Some(c.module.clone());
                    }
                }
                if let Some(t) = &self.thinking {
                    egui::Frame::group(ui.style()).show(ui, |ui| {
                        ui.label(RichText::new("Choosing the next step…").italics());
                        ui.label(t);
                    });
                }
                if self.paused {
                    ui.colored_label(
                        Color32::from_rgb(200, 140, 0),
                        "Paused before the next step",
                    );
                } else if self.pause_asked {
                    ui.colored_label(Color32::from_rgb(200, 140, 0), "Pausing after this step…");
                }
                for n in &self.notes {
                    egui::Frame::group(ui.style()).show(ui, |ui| {
                        ui.label(format!("Note: {}", n.text));
                        match &n.response {
                            None => ui.small("queued — read before the next decision"),
                            Some(r) => ui.small(format!("read: {r}")),
                        };
                        for ch in &n.changes {
                            ui.small(format!("changed {ch}"));
                        }
                    });
                }
                if let Some(f) = &self.finish {
                    self.finish_ui(ui, f);
                }
            });
        clicked
    }

    fn route_ui(&self, ui: &mut egui::Ui) {
        if self.route.is_empty() && self.cards.is_empty() {
            return;
        }
        ui.horizontal_wrapped(|ui| {
            ui.small("Route as things stand:");
            for c in &self.cards {
                let (word, colour) = status_mark(c.status);
                dot(ui, colour, true).on_hover_text(format!("{}: {word}", c.label));
            }
            for r in &self.route {
                dot(ui, Color32::GRAY, false).on_hover_text(format!("ahead: {}", r.label));
            }
            if let Some(r) = self.route.first() {
                ui.small(format!("next: {}", r.label));
            }
        });
    }

    fn finish_ui(&self, ui: &mut egui::Ui, f: &Finish) {
        let (ok, failed, skipped, interrupted) = self.counts();
        let colour = match f.status.as_str() {
            "success" => Color32::from_rgb(40, 140, 60),
            "stopped" => Color32::from_rgb(200, 140, 0),
            _ => Color32::from_rgb(190, 60, 40),
        };
        egui::Frame::group(ui.style()).stroke(egui::Stroke::new(2.0, colour)).show(ui, |ui| {
            ui.label(RichText::new(self.finish_headline().unwrap_or_default()).strong().color(colour));
            ui.small(format!(
                "{ok} done, {failed} failed, {skipped} skipped or blocked, {interrupted} interrupted — run {}",
                f.status
            ));
            for r in &f.reasons {
                ui.label(format!("• {r}"));
            }
            if let Some(rep) = &f.report {
                ui.small(format!("Report: {rep}"));
            }
        });
    }
}

/// The word and colour of a status (the colour is drawn as a dot: no font is needed for it).
fn status_mark(status: Option<StepStatus>) -> (&'static str, Color32) {
    match status {
        None => ("running", Color32::from_rgb(40, 110, 200)),
        Some(StepStatus::Ok) => ("done", Color32::from_rgb(40, 140, 60)),
        Some(StepStatus::Failed) => ("failed", Color32::from_rgb(190, 60, 40)),
        Some(StepStatus::Skipped) => ("skipped", Color32::GRAY),
        Some(StepStatus::Blocked) => ("blocked", Color32::GRAY),
        Some(StepStatus::Interrupted) => ("interrupted", Color32::from_rgb(200, 140, 0)),
    }
}

/// A status dot: filled for a step taken, hollow for one ahead.
fn dot(ui: &mut egui::Ui, colour: Color32, filled: bool) -> egui::Response {
    let (rect, response) = ui.allocate_exact_size(egui::vec2(12.0, 12.0), egui::Sense::hover());
    let c = rect.center();
    if filled {
        ui.painter().circle_filled(c, 5.0, colour);
    } else {
        ui.painter()
            .circle_stroke(c, 4.5, egui::Stroke::new(1.5, colour));
    }
    response
}

/// One card. Returns whether it was clicked.
fn card_ui(ui: &mut egui::Ui, c: &Card, images: &mut ImageCache) -> bool {
    let (word, colour) = status_mark(c.status);
    let r = egui::Frame::group(ui.style())
        .show(ui, |ui| {
            ui.set_width(ui.available_width());
            ui.horizontal(|ui| {
                dot(ui, colour, true).on_hover_text(word);
                ui.label(RichText::new(format!("{}. {}", c.step, c.label)).strong());
                if !c.module.is_empty() {
                    ui.small(format!("[{}]", c.module));
                }
                ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                    let secs = match (c.status, c.started) {
                        (None, Some(t)) => t.elapsed().as_secs_f64(),
                        _ => c.seconds,
                    };
                    ui.small(format!("{secs:.1} s"));
                });
            });
            if !c.reason.is_empty() {
                ui.small(format!("why: {}", c.reason));
            }
            if let Some((f, d)) = &c.progress {
                ui.add(egui::ProgressBar::new(*f as f32).text(d.as_str()));
            }
            match c.status {
                None if c.started.is_some() => {
                    ui.spinner();
                }
                None => {
                    ui.small("running");
                }
                Some(StepStatus::Ok) => {
                    ui.label(&c.summary);
                }
                Some(StepStatus::Interrupted) => {
                    ui.colored_label(colour, format!("interrupted: {}", c.error));
                }
                Some(s) => {
                    ui.colored_label(
                        colour,
                        format!(
                            "{}: {}",
                            s.word(),
                            if c.error.is_empty() {
                                &c.summary
                            } else {
                                &c.error
                            }
                        ),
                    );
                }
            }
            if !c.figures.is_empty() {
                ui.horizontal_wrapped(|ui| {
                    for f in &c.figures {
                        images.show(ui, &f.path, &f.caption, egui::vec2(150.0, 90.0));
                    }
                });
            }
        })
        .response;
    r.interact(egui::Sense::click()).clicked()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn started(step: usize, tool: &str) -> Event {
        Event::StepStarted {
            step,
            tool: tool.into(),
            label: tool.into(),
            module: "ert".into(),
            reason: "r".into(),
        }
    }

    #[test]
    fn events_build_cards_route_and_finish() {
        let mut t = Timeline::new();
        t.apply(&Event::Route {
            step: 0,
            ahead: vec![
                RouteStep {
                    tool: "load".into(),
                    label: "Load".into(),
                    module: "ert".into(),
                },
                RouteStep {
                    tool: "report".into(),
                    label: "Report".into(),
                    module: "report".into(),
                },
            ],
        });
        t.apply(&started(1, "load"));
        assert_eq!(t.route.len(), 1, "the running step left the route");
        assert!(t.running());
        t.queue_note("use lambda 5");
        t.apply(&Event::NoteHeard {
            notes: vec!["use lambda 5".into()],
            changes: vec!["inversion_params: 20 -> 5".into()],
            response: "ok".into(),
        });
        assert_eq!(t.notes.len(), 1);
        assert_eq!(t.notes[0].response.as_deref(), Some("ok"));
        t.apply(&Event::RunEnded {
            ended: "stopped".into(),
            status: "stopped".into(),
            reasons: vec![],
            report: None,
        });
        assert_eq!(t.cards[0].status, Some(StepStatus::Interrupted));
        assert_eq!(t.finish_headline().as_deref(), Some("Stopped"));
    }
}
