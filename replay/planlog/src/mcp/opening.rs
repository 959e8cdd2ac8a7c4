//! [`Opening`]: the session a server serves, ready when the server starts or, on a store
//! that needs long work first (an index to rebuild, an upgrade), once that work is done
//! while the server already answers its client: an agent gives a starting MCP server a few
//! seconds (Codex: 10 s) before it gives up on it, and on a large store that work takes
//! longer. Calls that need the session wait for it, at most [`CALL_WAIT`]; the store is
//! opened by [`open_later`]'s thread. Either way the server closes the store on its own
//! thread before it returns ([`Kept`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use planlog_core::{EventLog, LogError, OperatorError, PlanSink, SessionId};
use planlog_store::host::AsyncPlanSession;
use tokio::sync::watch;

use super::spool::McpSpool;
use super::{JOURNAL_WAIT, Target, drain_spool};
use crate::support::failure::Failure;
use crate::support::open::Store;

/// How long a call that needs the session waits for a store still opening, before it is
/// answered that nothing was recorded yet: below the minute agents give a tool call
/// (Codex's default `tool_timeout_sec` is 60).
pub(crate) const CALL_WAIT: Duration = Duration::from_secs(45);

/// What opening has come to so far: `None` while it runs.
type State = Option<Result<AsyncPlanSession, String>>;

/// The session of a server, ready or on its way.
pub(crate) struct Opening {
    id: SessionId,
    state: watch::Receiver<State>,
    /// Why it is not ready yet, for the answer of a call that waited in vain.
    why: String,
}

/// The end of an [`Opening`] that says how opening went.
pub(crate) struct Done(watch::Sender<State>);

impl Done {
    /// Opening went as `result` says (an error: what to tell the client).
    pub(crate) fn finish(self, result: Result<AsyncPlanSession, String>) {
        self.say(result);
    }

    /// Opening has come to `result` for now: an error that opening goes on trying to get
    /// past (calls meanwhile are answered with it at once).
    fn say(&self, result: Result<AsyncPlanSession, String>) {
        // No receiver left: the server is gone, and nobody waits.
        let _ = self.0.send(Some(result));
    }
}

/// How long the thread opening a store waits before it tries again after a storage error
/// (a full disk, a file that may not grow): the disk may free up.
const RETRY: Duration = Duration::from_secs(5);

impl Opening {
    /// A session open already.
    pub(crate) fn ready(session: AsyncPlanSession) -> Self {
        let id = session.id().clone();
        let (_tx, state) = watch::channel(Some(Ok(session)));
        Self {
            id,
            state,
            why: String::new(),
        }
    }

    /// Session `id`, to be opened by whoever holds the [`Done`] (`why`: the work it waits
    /// for, as a call that waited in vain is told).
    pub(crate) fn later(id: SessionId, why: String) -> (Self, Done) {
        let (tx, state) = watch::channel(None);
        (Self { id, state, why }, Done(tx))
    }

    /// The session's id.
    pub(crate) fn id(&self) -> &SessionId {
        &self.id
    }

    /// The session when it is open now, else `None` (not yet, or it could not be opened).
    pub(crate) fn now(&self) -> Option<AsyncPlanSession> {
        match &*self.state.borrow() {
            Some(Ok(session)) => Some(session.clone()),
            _ => None,
        }
    }

    /// The session, waiting for it at most [`CALL_WAIT`].
    ///
    /// # Errors
    /// What to tell the client: the store is still being opened (nothing recorded), or it
    /// could not be.
    pub(crate) async fn get(&self) -> Result<AsyncPlanSession, String> {
        let mut state = self.state.clone();
        let Ok(waited) = tokio::time::timeout(CALL_WAIT, state.wait_for(Option::is_some)).await
        else {
            return Err(format!(
                "planlog's store is not open yet: {} (started when this server did; it can take minutes on a long history). Nothing was recorded: make this call again in a minute",
                self.why
            ));
        };
        // `Err`: the sender dropped without a word (opening stopped).
        match waited.as_deref() {
            Ok(Some(Ok(session))) => Ok(session.clone()),
            Ok(Some(Err(e))) => Err(format!(
                "planlog's store could not be opened: {e}; nothing was recorded"
            )),
            Ok(None) | Err(_) => Err(
                "planlog's store could not be opened (opening stopped); nothing was recorded"
                    .to_owned(),
            ),
        }
    }
}

/// The store a server opened, closed on the server's own thread before it returns: the
/// session's thread holds it too, and lets go only once the server is gone; a store whose
/// last holder is a thread still dropping it as the process ends is left marked open in
/// its index file (the next writer repairs the whole file).
#[derive(Clone, Default)]
pub(super) struct Kept(Arc<std::sync::Mutex<Option<Arc<dyn EventLog>>>>);

/// How long a server that ends waits for its session's thread to let go of the store.
const CLOSE_WAIT: Duration = Duration::from_secs(5);

impl Kept {
    /// The store, once kept.
    pub(super) fn log(&self) -> Option<Arc<dyn EventLog>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    pub(super) fn keep(&self, log: &Arc<dyn EventLog>) {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Arc::clone(log));
    }

    /// Waits (at most [`CLOSE_WAIT`]) until no other holder is left, then closes the store.
    pub(super) fn close(&self) {
        let Some(log) = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
        else {
            return;
        };
        let until = std::time::Instant::now() + CLOSE_WAIT;
        while Arc::strong_count(&log) > 1 && std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_millis(2));
        }
        if Arc::strong_count(&log) > 1 {
            tracing::warn!(
                "the session's thread still holds the store after {CLOSE_WAIT:?}; ending without closing it here"
            );
        }
        drop(log);
    }
}

/// The thread that opens the store for a server that answers meanwhile
/// ([`Opening::later`]).
pub(super) struct Opener {
    thread: std::thread::JoinHandle<()>,
    wanted: Arc<AtomicBool>,
}

impl Opener {
    /// Stops it retrying, and waits for the work under way.
    pub(super) fn finish(self) {
        self.wanted.store(false, Ordering::SeqCst);
        if self.thread.join().is_err() {
            tracing::warn!("the thread opening the store stopped with a panic");
        }
    }
}

/// Opens `store` without a limit on its work, on a thread of its own, waiting for another
/// process's lock on its journal as long as that lasts, and trying again every [`RETRY`]
/// after a storage error (each call meanwhile told why nothing was recorded); stores what
/// waits in the spool first, then opens the session and says how it went through `done`.
pub(super) fn open_later(
    store: Store,
    target: Target,
    spool: Arc<McpSpool>,
    files: Arc<dyn PlanSink>,
    (done, kept): (Done, Kept),
) -> Opener {
    let wanted = Arc::new(AtomicBool::new(true));
    let still = Arc::clone(&wanted);
    let thread = std::thread::spawn(move || {
        let mut said_last = String::new();
        let log = loop {
            match store.for_serving(JOURNAL_WAIT, None) {
                Err(LogError::Operator(OperatorError::Locked { .. }))
                    if still.load(Ordering::SeqCst) =>
                {
                    tracing::info!(store = %store.shown(), "the store's journal is still held by another process; waiting for it");
                }
                Err(e @ LogError::Operator(OperatorError::Io { .. }))
                    if still.load(Ordering::SeqCst) =>
                {
                    let said = Failure::from(e).message;
                    if said != said_last {
                        eprintln!(
                            "planlog mcp: the store could not be opened: {said}; trying again every {} s",
                            RETRY.as_secs()
                        );
                    }
                    done.say(Err(format!(
                        "{said} (planlog tries again every {} s)",
                        RETRY.as_secs()
                    )));
                    said_last = said;
                    let until = std::time::Instant::now() + RETRY;
                    while still.load(Ordering::SeqCst) && std::time::Instant::now() < until {
                        std::thread::sleep(Duration::from_millis(50));
                    }
                }
                other => break other,
            }
        };
        let log = match log {
            Ok(log) => log,
            Err(e) => {
                let said = Failure::from(e).message;
                eprintln!("planlog mcp: the store could not be opened: {said}");
                done.finish(Err(said));
                return;
            }
        };
        kept.keep(&log);
        drain_spool(&spool, &log, &files, JOURNAL_WAIT);
        // The session opens on a runtime of this thread's own: the server's may be gone.
        let opened = tokio::runtime::Builder::new_current_thread()
            .build()
            .map_err(|e| format!("cannot start the async runtime: {e}"))
            .and_then(|rt| {
                rt.block_on(target.open(log, &store.path))
                    .map_err(|f| f.message)
            });
        match &opened {
            Ok(_) => eprintln!(
                "planlog mcp: the store is open; serving session {}",
                target.id
            ),
            Err(said) => eprintln!("planlog mcp: the session could not be opened: {said}"),
        }
        done.finish(opened);
    });
    Opener { thread, wanted }
}
