//! What the user can tell a run while it works: hold it, let it go on, stop it, and notes.
//!
//! * Pause takes effect before the next step; the running step runs to its end (an
//!   inversion stopped half-way leaves nothing anyone can use).
//! * A note reaches the controller with its next decision, is added to the transcript the
//!   model reads, and that decision may change adjustable settings to follow it — never a
//!   file, never code. A run with no model to read notes says so.
//! * Stop ends the run at its next checkpoint and raises the cancel flag long tools check.
//!
//! Every method takes `&self` and is safe to call from another thread (the studio's UI).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

#[derive(Debug, Default)]
struct State {
    paused: bool,
    stopped: bool,
    notes: Vec<String>,
}

/// Pause, resume, stop and notes for one run. Clones share the same state.
#[derive(Debug, Clone, Default)]
pub struct Steering {
    state: Arc<(Mutex<State>, Condvar)>,
    cancel: Arc<AtomicBool>,
}

impl Steering {
    /// Fresh steering: running, no notes.
    pub fn new() -> Self {
        Self::default()
    }

    /// Raise `flag` on stop (instead of the steering's own), so a long step can end early.
    pub fn with_cancel_flag(mut self, flag: Arc<AtomicBool>) -> Self {
        self.cancel = flag;
        self
    }

    /// The flag raised on stop; give it to the run so long steps see it.
    pub fn cancel_flag(&self) -> Arc<AtomicBool> {
        self.cancel.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // The state is plain data; a poisoned lock still holds a valid state.
        self.state.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Hold the run before its next step.
    pub fn pause(&self) {
        self.lock().paused = true;
        self.state.1.notify_all();
    }

    /// Let it go on.
    pub fn resume(&self) {
        self.lock().paused = false;
        self.state.1.notify_all();
    }

    /// End the run at its next checkpoint (and ask a running step to stop early).
    pub fn stop(&self) {
        self.lock().stopped = true;
        self.cancel.store(true, Ordering::Relaxed);
        self.state.1.notify_all();
    }

    /// Queue a note for the controller's next decision.
    pub fn say(&self, text: &str) {
        let t = text.trim();
        if !t.is_empty() {
            self.lock().notes.push(t.to_string());
        }
    }

    /// The notes not yet read, oldest first; each is returned once.
    pub fn take_notes(&self) -> Vec<String> {
        std::mem::take(&mut self.lock().notes)
    }

    /// Whether the run is held.
    pub fn paused(&self) -> bool {
        self.lock().paused
    }

    /// Whether a stop was asked for.
    pub fn stopped(&self) -> bool {
        self.lock().stopped
    }

    /// Wait here while paused. `false` when the run should stop instead. `on_pause` is called
    /// once when a wait begins and `on_resume` once when it ends by a resume.
    pub fn checkpoint(&self, mut on_pause: impl FnMut(), mut on_resume: impl FnMut()) -> bool {
        let mut st = self.lock();
        if st.stopped {
            return false;
        }
        if !st.paused {
            return true;
        }
        drop(st);
        on_pause();
        st = self.lock();
        while st.paused && !st.stopped {
            st = match self.state.1.wait_timeout(st, Duration::from_millis(250)) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
        let go_on = !st.stopped;
        drop(st);
        if go_on {
            on_resume();
        }
        go_on
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_are_read_once_and_stop_ends_the_checkpoint() {
        // Seed 001, Steering example.
        let steer = Steering::new();
        steer.say("use lambda 20");
        assert_eq!(steer.take_notes(), vec!["use lambda 20".to_string()]);
        assert!(steer.take_notes().is_empty());
        assert!(steer.checkpoint(|| {}, || {}));
        steer.stop();
        assert!(!steer.checkpoint(|| {}, || {}));
    }

    #[test]
    fn pause_holds_until_resume_from_another_thread() {
        let steer = Steering::new();
        steer.pause();
        let other = steer.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            other.resume();
        });
        let mut paused = 0;
        let mut resumed = 0;
        let t0 = std::time::Instant::now();
        assert!(steer.checkpoint(|| paused += 1, || resumed += 1));
        assert!(
            t0.elapsed() >= Duration::from_millis(90),
            "it waited for the resume"
        );
        assert_eq!((paused, resumed), (1, 1));
        t.join().unwrap();
    }

    #[test]
    fn stop_while_paused_ends_the_wait_and_raises_the_flag() {
        let flag = Arc::new(AtomicBool::new(false));
        let steer = Steering::new().with_cancel_flag(flag.clone());
        steer.pause();
        let other = steer.clone();
        let t = std::thread::spawn(move || other.stop());
        assert!(!steer.checkpoint(|| {}, || {}));
        assert!(flag.load(Ordering::Relaxed));
        t.join().unwrap();
    }
}
