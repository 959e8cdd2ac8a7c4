//! The [`EventLog`] port: where a session's events are kept. Nothing here names a storage
//! engine; `MemoryLog` (here) and `RedbLog` (planlog-store) implement it and pass the same
//! conformance suite.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::error::{LogError, UserError};
use super::event::Head;
use super::event::{EVENT_FORMAT, Event, EventBody, Origin, SessionDescription};
use super::ids::{CallId, Seq, SessionId};
use super::plan::Progress;
use super::scan::Chunks;
use super::sealed::SealedEvent;
use super::state::{SessionState, apply};
use super::time::Timestamp;

/// The result of an append. The event is shared: a store that keeps it in memory (a tail,
/// a cache) hands back that copy rather than another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Appended {
    /// The event was stored (durably, for durable logs) at its seq.
    Stored(Arc<Event>),
    /// An event with the same call id was already in the session; nothing new was stored and
    /// this is the recorded one (the first write wins).
    Duplicate(Arc<Event>),
}

impl Appended {
    /// The event as recorded.
    pub fn event(&self) -> &Event {
        match self {
            Appended::Stored(e) | Appended::Duplicate(e) => e,
        }
    }

    /// Consumes into the recorded event (copied when the store still shares it).
    pub fn into_event(self) -> Event {
        match self {
            Appended::Stored(e) | Appended::Duplicate(e) => Arc::unwrap_or_clone(e),
        }
    }
}

/// A catalogue entry: what a session is, derived from its events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
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
    /// What the session is, as its source names it (its latest `session_described`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<SessionDescription>,
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
                description: None,
            }),
            EventBody::PlanWritten(_)
            | EventBody::WriteRejected(_)
            | EventBody::ModeSelected(_)
            | EventBody::CheckpointSeen(_)
            | EventBody::SessionDescribed(_)
            | EventBody::ContextCompacted(_)
            | EventBody::PlanRestored(_) => None,
        }
    }

    /// The name people know the session by: its title (from its source), else its first
    /// prompt, else its label.
    pub fn name(&self) -> Option<&str> {
        let d = self.description.as_ref();
        d.and_then(|d| d.title.as_deref())
            .or_else(|| d.and_then(|d| d.first_prompt.as_deref()))
            .or(self.label.as_deref())
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
            EventBody::SessionDescribed(d) => self.description = Some(d.clone()),
            EventBody::WriteRejected(_)
            | EventBody::CheckpointSeen(_)
            | EventBody::ContextCompacted(_)
            | EventBody::PlanRestored(_) => {}
            EventBody::ModeSelected(m) => self.plan_mode = m.active,
        }
    }
}

/// A store of per-session, append-only, hash-chained event logs.
///
/// Implementations must be safe to share between threads and must check every append with
/// [`check_append`] (after the call-id lookup), so that every backend enforces the same
/// invariants: dense seqs, an unbroken hash chain, `session_started` first and only first,
/// no writes to deleted sessions (but the restore of the same session), and idempotency by
/// call id.
///
/// Several writers (threads, processes, hosts) may append to one session at once: the log
/// lets exactly one of two appends at the same seq win and refuses the other with
/// [`LogError::Conflict`]; the loser catches up ([`EventLog::head`], then
/// [`EventLog::state_at`]) and decides again. `PlanSession` does this for its callers.
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

    /// [`EventLog::append`] of an event sealed in this process: a store that keeps
    /// canonical bytes takes the ones sealed with it, without encoding and hashing the event
    /// again (they cannot disagree: see [`SealedEvent`]). The default appends the event.
    ///
    /// # Errors
    /// As [`EventLog::append`].
    fn append_sealed(&self, sealed: SealedEvent) -> Result<Appended, LogError> {
        self.append(sealed.event())
    }

    /// Appends several sealed events atomically and durably in one commit: either every one
    /// is stored (or recognised as a duplicate call), or, on the first error, none is.
    /// Imports and forks use it; so do benchmarks that build long logs.
    ///
    /// # Errors
    /// As [`EventLog::append`], for the first event that fails; nothing is written then.
    fn append_all(&self, events: &[Event]) -> Result<Vec<Appended>, LogError>;

    /// Appends the events `events` yields atomically and durably in one commit, without
    /// holding them all (imports stream through it): either every one is stored, or, on the
    /// first error (from the iterator or the log), none is. A call id already recorded is an
    /// error here ([`LogError::InvalidEvent`]): the caller skips recorded calls
    /// ([`EventLog::find_call`]) before sealing. The default collects and calls
    /// [`EventLog::append_all`]; durable logs stream.
    ///
    /// # Errors
    /// The first error; nothing is written then.
    fn append_iter(
        &self,
        events: &mut dyn Iterator<Item = Result<Event, LogError>>,
    ) -> Result<u64, LogError> {
        let events: Vec<Event> = events.collect::<Result<_, _>>()?;
        streamed_count(&self.append_all(&events)?)
    }

    /// Appends a stream of events sealed in this process as [`EventLog::append_iter`] does:
    /// all or none. A store may take each one's bytes as they are, as
    /// [`EventLog::append_sealed`] does; placement, links and call ids are checked as for any
    /// append. The default appends the events.
    ///
    /// # Errors
    /// As [`EventLog::append_iter`].
    fn append_sealed_iter(
        &self,
        events: &mut dyn Iterator<Item = Result<SealedEvent, LogError>>,
    ) -> Result<u64, LogError> {
        let mut plain = events.map(|e| e.map(SealedEvent::into_event));
        self.append_iter(&mut plain)
    }

    /// The seq of the event recording call `call` in `session`, if the call is recorded.
    ///
    /// # Errors
    /// Operator errors.
    fn find_call(&self, session: &SessionId, call: &CallId) -> Result<Option<Seq>, LogError>;

    /// Events `from..=to` of a session (`to = None`: to the end). Seqs past the end are
    /// simply not returned.
    ///
    /// # Errors
    /// [`UserError::UnknownSession`] when the session does not exist; operator errors.
    fn read(&self, session: &SessionId, from: Seq, to: Option<Seq>)
    -> Result<Vec<Event>, LogError>;

    /// The session's events from `from` to its end, [`SCAN_CHUNK`] at a time: how every
    /// reader of a whole session reads it, in memory that does not grow with the session. The
    /// default reads each chunk with [`EventLog::read`]; a store may override it.
    ///
    /// The first chunk is an error ([`UserError::UnknownSession`]) when there is no such
    /// session; a session with no event at or after `from` gives no chunk.
    ///
    /// [`SCAN_CHUNK`]: crate::limits::SCAN_CHUNK
    fn scan<'a>(&'a self, session: &'a SessionId, from: Seq) -> Chunks<'a> {
        Chunks::new(Box::new(move |a, b| self.read(session, a, Some(b))), from)
    }

    /// The last event of a session, or `None` when there is no such session.
    ///
    /// # Errors
    /// Operator errors.
    fn last(&self, session: &SessionId) -> Result<Option<Event>, LogError>;

    /// Where a session's log ends (its last seq and that event's hash), without decoding any
    /// event: the cheap check a writer makes before deciding a call. `None` when no session has
    /// this id.
    ///
    /// # Errors
    /// [`UserError::SessionDeleted`] when the session was deleted (its id is retired);
    /// operator errors.
    fn head(&self, session: &SessionId) -> Result<Option<Head>, LogError>;

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

    /// Deletes a session and all its events. Its id is retired: nothing can be appended under
    /// it again, except the same session restored whole from its export (an append whose
    /// first event is the deleted session's first event, byte for byte).
    ///
    /// # Errors
    /// [`UserError::UnknownSession`] when there is no such session; operator errors.
    fn delete(&self, session: &SessionId) -> Result<(), LogError>;

    /// Whether [`EventLog::read`] checks every event's hash as it decodes it (durable stores
    /// decode stored bytes with `Event::decode`, which does; the default says no), so a
    /// checker of what it read need not compute each hash again.
    fn read_checks_hashes(&self) -> bool {
        false
    }

    /// The state index over `from..=to` (up to the log's end): for each seq, the seq of the
    /// event whose plan is in force there and the plan mode then, which is what
    /// [`EventLog::state_at`] looks up, read without decoding any event. `None` (the default)
    /// when this log keeps no such index (its `state_at` folds the events). `verify` compares
    /// it with the events, a chunk at a time.
    ///
    /// # Errors
    /// [`UserError::UnknownSession`]; operator errors.
    fn state_index(
        &self,
        session: &SessionId,
        from: Seq,
        to: Seq,
    ) -> Result<Option<Vec<IndexEntry>>, LogError> {
        let _ = (session, from, to);
        Ok(None)
    }

    /// The state after event `at`. The default folds the prefix; durable stores override it
    /// with a lookup whose cost does not grow with the log.
    ///
    /// # Errors
    /// [`UserError::UnknownSession`], [`UserError::SeqOutOfRange`]; operator errors.
    fn state_at(&self, session: &SessionId, at: Seq) -> Result<SessionState, LogError> {
        // A chunk at a time, so the fold's memory does not grow with the prefix.
        let mut state = SessionState::default();
        let mut last = 0;
        for event in self.scan(session, Seq::FIRST).events() {
            let event = event?;
            if event.seq > at {
                break;
            }
            last = event.seq.get();
            state = apply(state, &event.body);
        }
        if last < at.get() {
            return Err(UserError::SeqOutOfRange {
                session: session.clone(),
                seq: at.get(),
                last,
            }
            .into());
        }
        Ok(state)
    }
}

/// What [`EventLog::append_iter`] answers for a batch `append_all`-style appends gave: how
/// many were stored, or, when one repeats a recorded call id (nothing may be committed then),
/// [`repeated_in_stream`] for it.
///
/// # Errors
/// [`LogError::InvalidEvent`] for the first repeated call.
pub fn streamed_count(appended: &[Appended]) -> Result<u64, LogError> {
    match appended
        .iter()
        .find(|a| matches!(a, Appended::Duplicate(_)))
    {
        Some(dup) => Err(repeated_in_stream(dup.event())),
        None => Ok(appended.len() as u64),
    }
}

/// The error for a streamed event whose call id is already recorded (as `recorded`).
pub fn repeated_in_stream(recorded: &Event) -> LogError {
    LogError::InvalidEvent {
        session: recorded.session.clone(),
        seq: recorded.seq.get(),
        reason: "a streamed event repeats a recorded call id".to_owned(),
    }
}

/// One seq of a log's state index ([`EventLog::state_index`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexEntry {
    /// The seq described.
    pub seq: Seq,
    /// The last plan-carrying event at or before it (`None`: the index has none, damage).
    pub plan_from: Option<Seq>,
    /// Plan mode at that seq.
    pub plan_mode: bool,
}

/// Builds [`IndexEntry`]s for `from..=to` from a store's marks: the last plan mark and mode
/// at or before `from` (`plan_before`, `mode_before`), then the plan marks and mode marks
/// after `from` up to `to`, each in ascending seq order.
pub fn index_entries(
    from: Seq,
    to: Seq,
    plan_before: Option<Seq>,
    mode_before: bool,
    plan_marks: impl IntoIterator<Item = Seq>,
    mode_marks: impl IntoIterator<Item = (Seq, bool)>,
) -> Vec<IndexEntry> {
    let mut plans = plan_marks.into_iter().peekable();
    let mut modes = mode_marks.into_iter().peekable();
    let (mut plan_from, mut plan_mode) = (plan_before, mode_before);
    let mut out = Vec::new();
    for n in from.get()..=to.get() {
        let Ok(seq) = Seq::new(n) else { continue };
        if n > from.get() {
            while plans.peek().is_some_and(|p| p.get() <= n) {
                plan_from = plans.next();
            }
            while modes.peek().is_some_and(|(m, _)| m.get() <= n) {
                plan_mode = modes.next().is_some_and(|(_, active)| active);
            }
        }
        out.push(IndexEntry {
            seq,
            plan_from,
            plan_mode,
        });
    }
    out
}

/// Where a session id stands in a log, as an append sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// No session has this id (and none was deleted under it).
    Free,
    /// A live session whose log ends here.
    Live(Head),
    /// A deleted session: the id is retired. `first` is the hash of the deleted session's
    /// first event when the store kept it (stores written before 2026-11-30 did not): only
    /// that same session, restored from its export, may take the id again.
    Retired {
        /// The deleted session's first event hash.
        first: Option<super::canonical::Hash>,
    },
}

impl Slot {
    /// True when `event` is the first event of the very session that was deleted under this
    /// id: appending it restores that session (and un-retires the id).
    pub fn is_restored_by(&self, event: &Event) -> bool {
        matches!(self, Slot::Retired { first: Some(first) } if event.seq == Seq::FIRST && *first == event.hash)
    }
}

/// The checks every [`EventLog::append`] makes once it knows where the session's log ends.
///
/// # Errors
/// As documented on [`EventLog::append`].
pub fn check_append(event: &Event, slot: Slot) -> Result<(), LogError> {
    if let Slot::Retired { .. } = slot
        && !slot.is_restored_by(event)
    {
        return Err(UserError::SessionDeleted(event.session.clone()).into());
    }
    check_format(event)?;
    if !event.hash_is_valid() {
        return Err(invalid(event, "its hash does not match its content"));
    }
    check_placement(event, slot)
}

/// The checks of [`check_append`] that need no store (the format, the hash), done while
/// encoding the event once: its canonical bytes, ready to store. A store calls this before
/// it takes its write lock, then [`check_placement`] under it.
///
/// # Errors
/// [`LogError::InvalidEvent`] for a format this planlog does not write or read, or a hash
/// that does not match the content.
pub fn check_encoded(event: &Event) -> Result<Vec<u8>, LogError> {
    check_format(event)?;
    event
        .encode_checked()
        .ok_or_else(|| invalid(event, "its hash does not match its content"))
}

fn invalid(event: &Event, reason: &str) -> LogError {
    LogError::InvalidEvent {
        session: event.session.clone(),
        seq: event.seq.get(),
        reason: reason.to_owned(),
    }
}

fn check_format(event: &Event) -> Result<(), LogError> {
    if event.format == 0 || event.format > EVENT_FORMAT {
        // Older formats are accepted: restoring an old export appends its events as they were
        // written (each keeps its format and hash scheme).
        return Err(invalid(
            event,
            "its format is not one this planlog writes or reads",
        ));
    }
    Ok(())
}

/// The checks of [`check_append`] against where the session stands (a deleted id, the next
/// seq, the prev hash, `session_started` first and only first), for an event whose content
/// [`check_encoded`] already checked.
///
/// # Errors
/// As [`check_append`].
pub fn check_placement(event: &Event, slot: Slot) -> Result<(), LogError> {
    let invalid = |reason: &str| invalid(event, reason);
    let last = match slot {
        Slot::Free => None,
        Slot::Live(head) => Some(head),
        Slot::Retired { .. } if slot.is_restored_by(event) => None,
        Slot::Retired { .. } => {
            return Err(UserError::SessionDeleted(event.session.clone()).into());
        }
    };
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
