//! The [`EventLog`] port: where a session's events are kept. Nothing here names a storage
//! engine; `MemoryLog` (here) and `RedbLog` (planlog-store) implement it and pass the same
//! conformance suite.

use serde::{Deserialize, Serialize};

use crate::error::{LogError, UserError};
use crate::event::{Event, EventBody, FORMAT_VERSION, Origin};
use crate::ids::{Seq, SessionId};
use crate::plan::Progress;
use crate::state::{SessionState, fold};
use crate::time::Timestamp;

/// The result of an append.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Appended {
    /// The event was stored (durably, for durable logs) at its seq.
    Stored(Event),
    /// An event with the same call id was already in the session; nothing new was stored and
    /// this is the recorded one (the first write wins).
    Duplicate(Event),
}

impl Appended {
    /// The event as recorded.
    pub fn event(&self) -> &Event {
        match self {
            Appended::Stored(e) | Appended::Duplicate(e) => e,
        }
    }

    /// Consumes into the recorded event.
    pub fn into_event(self) -> Event {
        match self {
            Appended::Stored(e) | Appended::Duplicate(e) => e,
        }
    }
}

/// A catalogue entry: what a session is, derived from its events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionInfo {
    /// The session.
    pub id: SessionId,
    /// How it began (its parent and fork seq, for forks).
    pub origin: Origin,
    /// Its label, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Time of its first event.
    pub created: Timestamp,
    /// Time of its last event.
    pub updated: Timestamp,
    /// Number of events (= its last seq).
    pub events: u64,
    /// The current plan's counts.
    pub progress: Progress,
    /// Whether plan mode is on now.
    pub plan_mode: bool,
}

impl SessionInfo {
    /// The entry for a session whose first event is `first`, or `None` when `first` is not a
    /// `session_started`.
    pub fn from_first(first: &Event) -> Option<Self> {
        match &first.body {
            EventBody::SessionStarted(s) => Some(Self {
                id: first.session.clone(),
                origin: s.origin.clone(),
                label: s.label.clone(),
                created: first.at,
                updated: first.at,
                events: first.seq.get(),
                progress: s.plan.progress(),
                plan_mode: s.plan_mode,
            }),
            EventBody::PlanWritten(_)
            | EventBody::WriteRejected(_)
            | EventBody::ModeSelected(_) => None,
        }
    }

    /// Updates the entry with an event appended after the ones it has seen.
    pub fn observe(&mut self, event: &Event) {
        self.events = event.seq.get();
        self.updated = event.at;
        match &event.body {
            EventBody::SessionStarted(s) => {
                self.progress = s.plan.progress();
                self.plan_mode = s.plan_mode;
            }
            EventBody::PlanWritten(w) => self.progress = w.plan.progress(),
            EventBody::WriteRejected(_) => {}
            EventBody::ModeSelected(m) => self.plan_mode = m.active,
        }
    }
}

/// A store of per-session, append-only, hash-chained event logs.
///
/// Implementations must be safe to share between threads and must check every append with
/// [`check_append`] (after the call-id lookup), so that every backend enforces the same
/// invariants: dense seqs, an unbroken hash chain, `session_started` first and only first,
/// no writes to deleted sessions, and idempotency by call id.
pub trait EventLog: Send + Sync {
    /// Appends a sealed event at the end of its session's log.
    ///
    /// If the event has a call id already recorded in the session, nothing is written and the
    /// recorded event is returned as [`Appended::Duplicate`]. Durable implementations return
    /// only once the event is durable.
    ///
    /// # Errors
    /// [`LogError::Conflict`] when `event.seq` is not last + 1; [`LogError::InvalidEvent`]
    /// for a bad hash, a broken chain link or a misplaced `session_started`;
    /// [`UserError::UnknownSession`] / [`UserError::SessionDeleted`] for a missing session;
    /// [`LogError::Operator`] when storage fails. In every error case nothing is written.
    fn append(&self, event: &Event) -> Result<Appended, LogError>;

    /// Appends several sealed events atomically and durably in one commit: either every one
    /// is stored (or recognised as a duplicate call), or, on the first error, none is.
    /// Imports and forks use it; so do benchmarks that build long logs.
    ///
    /// # Errors
    /// As [`EventLog::append`], for the first event that fails; nothing is written then.
    fn append_all(&self, events: &[Event]) -> Result<Vec<Appended>, LogError>;

    /// Events `from..=to` of a session (`to = None`: to the end). Seqs past the end are
    /// simply not returned.
    ///
    /// # Errors
    /// [`UserError::UnknownSession`] when the session does not exist; operator errors.
    fn read(&self, session: &SessionId, from: Seq, to: Option<Seq>)
    -> Result<Vec<Event>, LogError>;

    /// The last event of a session, or `None` when there is no such session.
    ///
    /// # Errors
    /// Operator errors.
    fn last(&self, session: &SessionId) -> Result<Option<Event>, LogError>;

    /// The catalogue entry of one session, or `None`.
    ///
    /// # Errors
    /// Operator errors.
    fn session(&self, session: &SessionId) -> Result<Option<SessionInfo>, LogError>;

    /// Every session, ordered by id (ULIDs: by creation time).
    ///
    /// # Errors
    /// Operator errors.
    fn sessions(&self) -> Result<Vec<SessionInfo>, LogError>;

    /// Deletes a session and all its events. Its id can never be written again.
    ///
    /// # Errors
    /// [`UserError::UnknownSession`] when there is no such session; operator errors.
    fn delete(&self, session: &SessionId) -> Result<(), LogError>;

    /// The state after event `at`. The default folds the prefix; durable stores override it
    /// with a lookup whose cost does not grow with the log.
    ///
    /// # Errors
    /// [`UserError::UnknownSession`], [`UserError::SeqOutOfRange`]; operator errors.
    fn state_at(&self, session: &SessionId, at: Seq) -> Result<SessionState, LogError> {
        let events = self.read(session, Seq::FIRST, Some(at))?;
        let last = events.last().map_or(0, |e| e.seq.get());
        if last < at.get() {
            return Err(UserError::SeqOutOfRange {
                session: session.clone(),
                seq: at.get(),
                last,
            }
            .into());
        }
        Ok(fold(&events))
    }
}

/// Where a session's log ends: its last seq and that event's hash. Enough to check an append.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    /// The last seq.
    pub seq: Seq,
    /// The last event's hash.
    pub hash: crate::canonical::Hash,
}

impl Head {
    /// The head a log has once `event` is its last event.
    pub fn of(event: &Event) -> Self {
        Self {
            seq: event.seq,
            hash: event.hash,
        }
    }
}

/// The checks every [`EventLog::append`] makes once it knows where the session's log ends.
///
/// # Errors
/// As documented on [`EventLog::append`].
pub fn check_append(event: &Event, last: Option<Head>, deleted: bool) -> Result<(), LogError> {
    let invalid = |reason: &str| LogError::InvalidEvent {
        session: event.session.clone(),
        seq: event.seq.get(),
        reason: reason.to_owned(),
    };
    if deleted {
        return Err(UserError::SessionDeleted(event.session.clone()).into());
    }
    if event.format != FORMAT_VERSION {
        return Err(invalid("events are appended in the current format only"));
    }
    if !event.hash_is_valid() {
        return Err(invalid("its hash does not match its content"));
    }
    let is_start = matches!(event.body, EventBody::SessionStarted(_));
    match last {
        None if event.seq != Seq::FIRST => {
            Err(UserError::UnknownSession(event.session.clone()).into())
        }
        None if !is_start => Err(invalid(
            "the first event of a session must be session_started",
        )),
        None if event.prev.is_some() => {
            Err(invalid("the first event of a session has no prev hash"))
        }
        None => Ok(()),
        Some(last) if event.seq != last.seq.next() => Err(LogError::Conflict {
            session: event.session.clone(),
            expected: last.seq.next().get(),
            found: event.seq.get(),
        }),
        Some(last) if event.prev != Some(last.hash) => Err(invalid(
            "its prev hash is not the hash of the session's last event",
        )),
        Some(_) if is_start => Err(invalid("session_started may only be the first event")),
        Some(_) => Ok(()),
    }
}
