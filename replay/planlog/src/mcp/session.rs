//! [`Served`]: the session a server serves, run where its store allows.
//!
//! A file store's session runs on the server's own thread, inline: a call blocks the
//! (single-threaded) runtime for its append's write and sync, and nothing is handed to
//! another thread and back. Each such hand-off wakes a sleeping thread, and on a virtual
//! machine a core that sat idle through an `fdatasync` takes tens of microseconds to wake
//! (BENCHMARKS.md § "MCP on one thread"). A stdio server has one client and answers its
//! calls one at a time either way (the session takes one call at a time); what waits
//! meanwhile is reading the next request off stdin.
//!
//! A PostgreSQL store's session runs on a thread of its own ([`AsyncPlanSession`]): its
//! blocking client starts a runtime of its own, which cannot happen inside the server's.

use std::sync::{Mutex, PoisonError};

use planlog_core::{LogError, Plan, PlanSession, SessionId};
use planlog_store::host::{AsyncPlanSession, SessionGone};

/// The session a server serves.
pub(crate) enum Served {
    /// On the server's thread (a file store).
    Here {
        /// The session; the lock is only ever taken by the server's one thread.
        session: Mutex<PlanSession>,
        /// Its id.
        id: SessionId,
    },
    /// On a thread of its own (a PostgreSQL store).
    Thread(AsyncPlanSession),
}

impl Served {
    /// Serves `session` on the server's thread.
    pub(crate) fn here(session: PlanSession) -> Self {
        let id = session.id().clone();
        Self::Here {
            session: Mutex::new(session),
            id,
        }
    }

    /// Runs `f` on the session and returns its answer.
    ///
    /// # Errors
    /// [`SessionGone`] when `f` panicked (the session goes on for later calls, as on a
    /// thread of its own) or the session's thread has stopped.
    pub(crate) async fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut PlanSession) -> R + Send + 'static,
    ) -> Result<R, SessionGone> {
        match self {
            Served::Here { session, .. } => {
                let mut session = session.lock().unwrap_or_else(PoisonError::into_inner);
                let call = std::panic::AssertUnwindSafe(|| f(&mut session));
                std::panic::catch_unwind(call).map_err(|_| {
                    tracing::warn!("a plan session call panicked; its caller gets SessionGone");
                    SessionGone
                })
            }
            Served::Thread(session) => session.call(f).await,
        }
    }

    /// Closes the session: stores anything a failed append left in memory.
    ///
    /// # Errors
    /// [`SessionGone`]; the inner result as [`PlanSession::close`].
    pub(crate) async fn close(&self) -> Result<Result<(), LogError>, SessionGone> {
        self.call(PlanSession::close).await
    }

    /// The session's id.
    pub(crate) fn id(&self) -> &SessionId {
        match self {
            Served::Here { id, .. } => id,
            Served::Thread(session) => session.id(),
        }
    }

    /// A copy of the current plan.
    pub(crate) fn plan(&self) -> Plan {
        match self {
            Served::Here { session, .. } => {
                session.lock().unwrap_or_else(PoisonError::into_inner).plan()
            }
            Served::Thread(session) => session.plan(),
        }
    }
}

impl std::fmt::Debug for Served {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Served").field("id", self.id()).finish()
    }
}
