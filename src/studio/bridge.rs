//! The worker bridge: the controller runs on its own thread; events come to the UI on one
//! crossbeam channel (the worker wakes the UI with `request_repaint` after each send), commands
//! go back on another. The UI thread never waits on the worker.
//!
//! A request that needs an answer (approval, question, script review) carries an id and is
//! answered exactly once: by the person, or — when the window closes, the run is stopped or
//! the channel is dropped — with its safe default (stop, the stated default, decline).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, unbounded};

use crate::runtime::decide::Decide;
use crate::runtime::events::{Event, Verdict};
use crate::runtime::interaction::{
    ApprovalRequest, Interaction, QuestionRequest, ScriptAnswer, ScriptRequest,
};
use crate::runtime::session::{RunOutcome, RunSpec, SessionError};
use crate::runtime::{Registry, SharedProduct, Steering};

/// What the UI tells a running run.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Run the step awaiting approval `id`.
    Proceed {
        /// The approval request's id.
        id: u64,
    },
    /// Leave out the step awaiting approval `id`.
    Skip {
        /// The approval request's id.
        id: u64,
    },
    /// End the run: the running step is asked to stop early, and any open request is answered
    /// with its safe default.
    Stop,
    /// The window closed: stop the run; every open request resolves to its safe default,
    /// recorded as `closed_without_answer` (never as the person's answer).
    Close,
    /// Stop at the step awaiting approval `id` (the approval dialog's "Stop here").
    StopAt {
        /// The approval request's id.
        id: u64,
    },
    /// Answer question `id` with option `option`.
    Answer {
        /// The question's id.
        id: u64,
        /// The chosen option id.
        option: String,
    },
    /// A note for the controller's next decision.
    Note(String),
    /// Hold before the next step.
    Pause,
    /// Go on.
    Resume,
    /// Decide on script `id`: run it (possibly edited) or not.
    ScriptDecision {
        /// The script review's id.
        id: u64,
        /// Run it.
        run: bool,
        /// The person's edited source, when they changed it.
        edited_source: Option<String>,
    },
}

/// An answer routed to the waiting request.
#[derive(Debug, Clone, PartialEq)]
enum Reply {
    Approval(u64, Verdict),
    Option(u64, String),
    Script(u64, ScriptAnswer),
    /// Stop: every open request gets its safe default.
    StopAll,
    /// The window closed: every open request gets its safe default, answered by nobody.
    Closed,
}

/// The worker's side of the requests: waits for the reply with the matching id; a dropped
/// channel or a stop is the safe default.
struct BridgeInteraction {
    replies: Mutex<Receiver<Reply>>,
    /// Set once a wait found the window gone: later defaults are `closed_without_answer`.
    closed: std::sync::atomic::AtomicBool,
}

/// How a wait ended.
enum Waited<T> {
    /// The answer.
    Got(T),
    /// The user stopped the run.
    Stopped,
    /// The UI went away.
    Gone,
}

impl BridgeInteraction {
    fn wait<T>(&self, id: u64, pick: impl Fn(Reply) -> Option<T>) -> Waited<T> {
        let rx = self.replies.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            match rx.recv_timeout(std::time::Duration::from_millis(200)) {
                Ok(Reply::StopAll) => return Waited::Stopped,
                Ok(Reply::Closed) => {
                    self.closed.store(true, std::sync::atomic::Ordering::SeqCst);
                    return Waited::Gone;
                }
                Ok(r) => {
                    let matches = match &r {
                        Reply::Approval(i, _) | Reply::Option(i, _) | Reply::Script(i, _) => {
                            *i == id
                        }
                        Reply::StopAll | Reply::Closed => false,
                    };
                    if matches && let Some(t) = pick(r) {
                        return Waited::Got(t);
                    }
                    // A stale answer to a request that is no longer open: ignored.
                }
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => {
                    self.closed.store(true, std::sync::atomic::Ordering::SeqCst);
                    return Waited::Gone;
                }
            }
        }
    }
}

impl Interaction for BridgeInteraction {
    fn approve(&self, request: &ApprovalRequest) -> Option<Verdict> {
        match self.wait(request.id, |r| match r {
            Reply::Approval(_, v) => Some(v),
            _ => None,
        }) {
            Waited::Got(v) => Some(v),
            Waited::Stopped => Some(Verdict::Stop),
            Waited::Gone => None,
        }
    }

    fn ask(&self, request: &QuestionRequest) -> Option<String> {
        match self.wait(request.id, |r| match r {
            Reply::Option(_, o) => Some(o),
            _ => None,
        }) {
            Waited::Got(o) => Some(o),
            Waited::Stopped | Waited::Gone => None,
        }
    }

    fn review_script(&self, request: &ScriptRequest) -> Option<ScriptAnswer> {
        match self.wait(request.id, |r| match r {
            Reply::Script(_, a) => Some(a),
            _ => None,
        }) {
            Waited::Got(a) => Some(a),
            Waited::Stopped => Some(ScriptAnswer {
                run: false,
                edited_source: None,
            }),
            Waited::Gone => None,
        }
    }

    fn absent(&self) -> crate::runtime::events::AnsweredBy {
        if self.closed.load(std::sync::atomic::Ordering::SeqCst) {
            crate::runtime::events::AnsweredBy::ClosedWithoutAnswer
        } else {
            crate::runtime::events::AnsweredBy::NobodyAsked
        }
    }
}

/// Products as the run makes them, for the module panels to draw while the run goes on.
#[derive(Debug, Clone, Default)]
pub struct Shelf {
    items: Arc<Mutex<Vec<(String, SharedProduct)>>>,
}

impl Shelf {
    /// Put (or replace) a product.
    pub fn put(&self, key: &str, product: SharedProduct) {
        let mut items = self.items.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(slot) = items.iter_mut().find(|(k, _)| k == key) {
            slot.1 = product;
        } else {
            items.push((key.to_string(), product));
        }
    }

    /// The product under `key`.
    pub fn get(&self, key: &str) -> Option<SharedProduct> {
        let items = self.items.lock().unwrap_or_else(|p| p.into_inner());
        items.iter().find(|(k, _)| k == key).map(|(_, p)| p.clone())
    }

    /// All keys.
    pub fn keys(&self) -> Vec<String> {
        let items = self.items.lock().unwrap_or_else(|p| p.into_inner());
        items.iter().map(|(k, _)| k.clone()).collect()
    }

    /// Forget everything (a new run).
    pub fn clear(&self) {
        self.items.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}

/// A run going on in the background.
pub struct RunHandle {
    /// Events from the run, in order.
    pub events: Receiver<Event>,
    commands: Sender<Command>,
    join: Option<JoinHandle<Result<RunOutcome, SessionError>>>,
    /// Products as they are made.
    pub shelf: Shelf,
    /// Where the run writes (known once `RunStarted` arrives; also here for convenience).
    pub run_dir: Arc<Mutex<Option<PathBuf>>>,
}

impl std::fmt::Debug for RunHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunHandle").finish_non_exhaustive()
    }
}

/// Something that builds the decider inside the worker (a model client is made there, never
/// on the UI thread).
pub type DeciderFactory = Box<dyn FnOnce() -> Option<Box<dyn Decide>> + Send>;

impl RunHandle {
    /// Start a run of `spec` over `registry` on a worker thread. `wake` is called after every
    /// event (the UI passes `ctx.request_repaint`).
    pub fn start(
        mut spec: RunSpec,
        registry: Arc<Registry>,
        decider: DeciderFactory,
        wake: Arc<dyn Fn() + Send + Sync>,
    ) -> RunHandle {
        let (event_tx, event_rx) = unbounded::<Event>();
        let (command_tx, command_rx) = unbounded::<Command>();
        let (reply_tx, reply_rx) = unbounded::<Reply>();
        let steering = Steering::new();
        spec.steering = steering.clone();
        spec.interaction = Some(Arc::new(BridgeInteraction {
            replies: Mutex::new(reply_rx),
            closed: std::sync::atomic::AtomicBool::new(false),
        }));
        let wake2 = wake.clone();
        spec.listeners.push(Box::new(move |e: &Event| {
            // The UI may have gone; a run with nobody listening still writes its journal.
            let _ = event_tx.send(e.clone());
            wake2();
        }));
        let shelf = Shelf::default();
        let run_dir = Arc::new(Mutex::new(None));
        // The command dispatcher: steering commands act at once; answers go to the waiting
        // request. When the UI drops its sender, the run is stopped and requests get defaults.
        let steer2 = steering.clone();
        std::thread::spawn(move || {
            for c in command_rx.iter() {
                match c {
                    Command::Pause => steer2.pause(),
                    Command::Resume => steer2.resume(),
                    Command::Note(t) => steer2.say(&t),
                    Command::Stop => {
                        steer2.stop();
                        let _ = reply_tx.send(Reply::StopAll);
                    }
                    Command::Close => {
                        steer2.stop();
                        let _ = reply_tx.send(Reply::Closed);
                    }
                    Command::StopAt { id } => {
                        let _ = reply_tx.send(Reply::Approval(id, Verdict::Stop));
                    }
                    Command::Proceed { id } => {
                        let _ = reply_tx.send(Reply::Approval(id, Verdict::Proceed));
                    }
                    Command::Skip { id } => {
                        let _ = reply_tx.send(Reply::Approval(id, Verdict::Skip));
                    }
                    Command::Answer { id, option } => {
                        let _ = reply_tx.send(Reply::Option(id, option));
                    }
                    Command::ScriptDecision {
                        id,
                        run,
                        edited_source,
                    } => {
                        let _ =
                            reply_tx.send(Reply::Script(id, ScriptAnswer { run, edited_source }));
                    }
                }
            }
            // The UI dropped its sender: nobody is there to answer any more.
            steer2.stop();
            let _ = reply_tx.send(Reply::Closed);
        });
        let shelf2 = shelf.clone();
        let dir2 = run_dir.clone();
        let join = std::thread::Builder::new()
            .name("hydrogeo-run".into())
            .spawn(move || {
                let mut decider = decider();
                let shelf3 = shelf2.clone();
                spec.listeners.push(Box::new(move |e: &Event| {
                    if let Event::RunStarted { run_dir, .. } = e {
                        *dir2.lock().unwrap_or_else(|p| p.into_inner()) =
                            Some(PathBuf::from(run_dir));
                    }
                }));
                let result = crate::runtime::session::run_with_shelf(
                    spec,
                    &registry,
                    decider.as_deref_mut(),
                    Arc::new(move |key: &str, p: SharedProduct| shelf3.put(key, p)),
                );
                wake();
                result
            })
            .ok();
        RunHandle {
            events: event_rx,
            commands: command_tx,
            join,
            shelf,
            run_dir,
        }
    }

    /// A sender for commands (dialogs keep one to answer their request).
    pub fn sender(&self) -> Sender<Command> {
        self.commands.clone()
    }

    /// Send a command (never blocks).
    pub fn send(&self, command: Command) {
        let _ = self.commands.send(command);
    }

    /// Whether the worker has finished.
    pub fn finished(&self) -> bool {
        self.join.as_ref().is_none_or(JoinHandle::is_finished)
    }

    /// The outcome, once finished (takes it; `None` before the end or when taken).
    pub fn take_outcome(&mut self) -> Option<Result<RunOutcome, SessionError>> {
        if !self.finished() {
            return None;
        }
        self.join.take().and_then(|j| j.join().ok())
    }
}

impl Drop for RunHandle {
    fn drop(&mut self) {
        // Closing the window: stop the run; every open request resolves to its safe default.
        let _ = self.commands.send(Command::Close);
    }
}
