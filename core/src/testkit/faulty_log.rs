//! [`FaultyLog`]: an [`EventLog`] wrapper that fails on purpose, for fail-open tests, and
//! counts the head lookups asked of it and the events read from it.

use crate::domain::error::LogError;
use crate::domain::event::{Event, Head};
use crate::domain::ids::{Seq, SessionId};
use crate::domain::log::{Appended, EventLog, SessionInfo};
use crate::domain::state::SessionState;

/// A log that fails on purpose: the next `n` appends fail with an IO error (nothing
/// written), or, in "lands then fails" mode, are written and then reported as failed (an
/// ambiguous failure, as when a commit succeeds but the acknowledgement is lost).
#[derive(Debug)]
pub struct FaultyLog<L> {
    inner: L,
    fail_next: std::sync::atomic::AtomicUsize,
    land_then_fail: std::sync::atomic::AtomicBool,
    /// How many appends failed so far.
    pub failures: std::sync::atomic::AtomicUsize,
    /// How many head lookups were asked for so far.
    pub heads: std::sync::atomic::AtomicUsize,
    /// How many events `read` has handed back so far.
    pub events_read: std::sync::atomic::AtomicUsize,
}

impl<L: EventLog> FaultyLog<L> {
    /// Wraps `inner`; no faults until [`FaultyLog::fail_next`].
    pub fn new(inner: L) -> Self {
        Self {
            inner,
            fail_next: 0.into(),
            land_then_fail: false.into(),
            failures: 0.into(),
            heads: 0.into(),
            events_read: 0.into(),
        }
    }

    /// Makes the next `n` appends fail; with `land`, each is written before it "fails".
    pub fn fail_next(&self, n: usize, land: bool) {
        use std::sync::atomic::Ordering::SeqCst;
        self.land_then_fail.store(land, SeqCst);
        self.fail_next.store(n, SeqCst);
    }

    /// The wrapped log.
    pub fn inner(&self) -> &L {
        &self.inner
    }
}

impl<L: EventLog> EventLog for FaultyLog<L> {
    fn append(&self, event: &Event) -> Result<Appended, LogError> {
        use std::sync::atomic::Ordering::SeqCst;
        let fail = self
            .fail_next
            .fetch_update(SeqCst, SeqCst, |n| n.checked_sub(1))
            .is_ok();
        if !fail {
            return self.inner.append(event);
        }
        self.failures.fetch_add(1, SeqCst);
        if self.land_then_fail.load(SeqCst) {
            self.inner.append(event)?;
        }
        Err(crate::domain::error::OperatorError::Io {
            path: "faulty-log".into(),
            action: "appending".into(),
            source: crate::domain::error::StorageError::new(std::io::Error::new(
                std::io::ErrorKind::StorageFull,
                "injected fault: no space left on device",
            )),
        }
        .into())
    }

    fn append_all(&self, events: &[Event]) -> Result<Vec<Appended>, LogError> {
        events.iter().map(|e| self.append(e)).collect()
    }

    fn read(
        &self,
        session: &SessionId,
        from: Seq,
        to: Option<Seq>,
    ) -> Result<Vec<Event>, LogError> {
        let events = self.inner.read(session, from, to)?;
        self.events_read
            .fetch_add(events.len(), std::sync::atomic::Ordering::SeqCst);
        Ok(events)
    }

    fn last(&self, session: &SessionId) -> Result<Option<Event>, LogError> {
        self.inner.last(session)
    }

    fn find_call(
        &self,
        session: &SessionId,
        call: &crate::domain::ids::CallId,
    ) -> Result<Option<Seq>, LogError> {
        self.inner.find_call(session, call)
    }

    fn head(&self, session: &SessionId) -> Result<Option<Head>, LogError> {
        self.heads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.inner.head(session)
    }

    fn session(&self, session: &SessionId) -> Result<Option<SessionInfo>, LogError> {
        self.inner.session(session)
    }

    fn sessions(&self) -> Result<Vec<SessionInfo>, LogError> {
        self.inner.sessions()
    }

    fn delete(&self, session: &SessionId) -> Result<(), LogError> {
        self.inner.delete(session)
    }

    fn state_at(&self, session: &SessionId, at: Seq) -> Result<SessionState, LogError> {
        self.inner.state_at(session, at)
    }
}
