//! [`Opening`]: the session a server serves, ready when the server starts or, on a store
//! that needs long work first (an index to rebuild, an upgrade), once that work is done
//! while the server already answers its client: an agent gives a starting MCP server a few
//! seconds (Codex: 10 s) before it gives up on it, and on a large store that work takes
//! longer. Calls that need the session wait for it, at most [`CALL_WAIT`].

use std::sync::Arc;
use std::time::Duration;

use planlog_core::{EventLog, SessionId};
use planlog_store::host::AsyncPlanSession;
use tokio::sync::watch;

/// How long a call that needs the session waits for a store still opening, before it is
/// answered that nothing was recorded yet: below the minute agents give a tool call
/// (Codex's default `tool_timeout_sec` is 60).
pub(crate) const CALL_WAIT: Duration = Duration::from_secs(45);

/// The session and the store it is kept in, once open.
#[derive(Clone)]
pub(crate) struct Opened {
    /// The session, on a thread of its own.
    pub(crate) session: AsyncPlanSession,
    /// Its store (for the spool, at the end).
    pub(crate) log: Arc<dyn EventLog>,
}

/// What opening has come to so far: `None` while it runs.
type State = Option<Result<Opened, String>>;

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
    pub(crate) fn finish(self, result: Result<Opened, String>) {
        // No receiver left: the server is gone, and nobody waits.
        let _ = self.0.send(Some(result));
    }
}

impl Opening {
    /// A session open already.
    pub(crate) fn ready(opened: Opened) -> Self {
        let id = opened.session.id().clone();
        let (_tx, state) = watch::channel(Some(Ok(opened)));
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
    pub(crate) fn now(&self) -> Option<Opened> {
        match &*self.state.borrow() {
            Some(Ok(opened)) => Some(opened.clone()),
            _ => None,
        }
    }

    /// The session, waiting for it at most [`CALL_WAIT`].
    ///
    /// # Errors
    /// What to tell the client: the store is still being opened (nothing recorded), or it
    /// could not be.
    pub(crate) async fn get(&self) -> Result<Opened, String> {
        let mut state = self.state.clone();
        let waited = tokio::time::timeout(CALL_WAIT, state.wait_for(Option::is_some)).await;
        match waited {
            Err(_) => Err(format!(
                "planlog's store is not open yet: {} (started when this server did; it can take minutes on a long history). Nothing was recorded: make this call again in a minute",
                self.why
            )),
            // The sender dropped without a word: opening stopped.
            Ok(Err(_)) => Err(
                "planlog's store could not be opened (opening stopped); nothing was recorded"
                    .to_owned(),
            ),
            Ok(Ok(done)) => match &*done {
                Some(Ok(opened)) => Ok(opened.clone()),
                Some(Err(e)) => Err(format!(
                    "planlog's store could not be opened: {e}; nothing was recorded"
                )),
                None => Err("planlog's store is not open yet; nothing was recorded".to_owned()),
            },
        }
    }
}
