//! Background work started from a panel's Run button: the same method functions a catalog
//! tool calls, on a thread of their own, with a progress bar and Cancel. The UI polls; it
//! never waits.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crossbeam_channel::{Receiver, unbounded};

enum Msg<T> {
    Progress(f64, String),
    Done(Result<T, String>),
}

/// A job in flight (or finished, with its result).
pub struct Job<T> {
    rx: Receiver<Msg<T>>,
    cancel: Arc<AtomicBool>,
    /// What it is doing.
    pub title: String,
    /// 0–1.
    pub fraction: f64,
    /// The latest progress text.
    pub detail: String,
    /// The result, once it has finished.
    pub result: Option<Result<T, String>>,
}

impl<T> std::fmt::Debug for Job<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job")
            .field("title", &self.title)
            .field("fraction", &self.fraction)
            .finish()
    }
}

impl<T: Send + 'static> Job<T> {
    /// Run `work` on a thread. It receives a progress callback `(fraction, detail)` and the
    /// cancel flag to check between iterations; the UI is woken after every message.
    pub fn spawn(
        ctx: &egui::Context,
        title: &str,
        work: impl FnOnce(&mut dyn FnMut(f64, &str), &AtomicBool) -> Result<T, String> + Send + 'static,
    ) -> Job<T> {
        let (tx, rx) = unbounded();
        let cancel = Arc::new(AtomicBool::new(false));
        let cancel2 = cancel.clone();
        let ctx2 = ctx.clone();
        std::thread::spawn(move || {
            let tx2 = tx.clone();
            let ctx3 = ctx2.clone();
            let mut progress = move |f: f64, d: &str| {
                let _ = tx2.send(Msg::Progress(f, d.to_string()));
                ctx3.request_repaint();
            };
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                work(&mut progress, &cancel2)
            }))
            .unwrap_or_else(|_| Err("the computation failed unexpectedly (internal error)".into()));
            let _ = tx.send(Msg::Done(outcome));
            ctx2.request_repaint();
        });
        Job {
            rx,
            cancel,
            title: title.to_string(),
            fraction: 0.0,
            detail: String::new(),
            result: None,
        }
    }

    /// Take in what the thread reported. Returns `true` once finished.
    pub fn poll(&mut self) -> bool {
        for m in self.rx.try_iter() {
            match m {
                Msg::Progress(f, d) => {
                    self.fraction = f.clamp(0.0, 1.0);
                    self.detail = d;
                }
                Msg::Done(r) => self.result = Some(r),
            }
        }
        self.result.is_some()
    }

    /// Ask it to stop at its next check.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// Whether Cancel was pressed.
    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// The progress bar and Cancel button while it runs.
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        if self.result.is_some() {
            return;
        }
        ui.horizontal(|ui| {
            ui.add(
                egui::ProgressBar::new(self.fraction as f32)
                    .desired_width(260.0)
                    .text(format!("{}: {}", self.title, self.detail)),
            );
            if ui
                .add_enabled(!self.cancelled(), egui::Button::new("Cancel"))
                .clicked()
            {
                self.cancel();
            }
        });
    }
}
