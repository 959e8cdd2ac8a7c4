//! The write path of one session: decide, append, catch up with other writers and decide
//! again after a lost race, and keep in memory only what storage failed to take.
//!
//! A session may share its log with other writers (threads, processes, hosts). A call is
//! first decided against the state the recorder last stored (or, before it has stored
//! anything, after catching up), sealed after that head and appended: the log accepts it
//! only right after that head. If another writer appended first ([`LogError::Conflict`]) the
//! recorder catches up (one [`EventLog::head`] lookup and, when the log moved, one
//! [`EventLog::state_at`] lookup at the new head) and decides the *same call* again (the
//! rules may now accept it differently or refuse it), up to [`MAX_ATTEMPTS`] times. A call
//! that records nothing (a read, a start of a session that exists) has no append to refuse
//! it: it catches up before it answers, and is decided again if the log had moved, so it
//! shows the log as it is. What the
//! caller gets back is always the decision that was recorded, against the state it was
//! recorded after.
//!
//! Only a storage failure keeps a call in memory ("unsaved", fail-open): it is decided
//! against the last state the session knows and waits, in order. Every later call (and
//! `close`) drains the queue first: an attempt that landed after all is recognised by its
//! hash, one whose place is still free is appended as it is, and when another writer took
//! its place meanwhile the queue is decided again after the new head ("rebased"). A stale
//! event is never retried unchanged and never dropped.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::agent::task_tool::{TaskTool, execute_task_tool};
use crate::domain::env::Env;
use crate::domain::error::{LogError, UserError};
use crate::domain::event::{
    Event, EventBody, EventDraft, Head, ModeSelected, Placement, SessionStarted,
};
use crate::domain::ids::{CallId, SessionId};
use crate::domain::log::{Appended, EventLog};
use crate::domain::sealed::SealedEvent;
use crate::domain::state::{SessionState, apply, stamp_ids_issued};
use crate::domain::time::Timestamp;
use crate::domain::write::{ToolResult, execute_plan_write};

/// Most attempts one call makes against writers that keep winning the race.
pub(crate) const MAX_ATTEMPTS: u32 = 200;

/// What a session asks its log to record.
#[derive(Debug, Clone)]
pub(crate) enum Command {
    /// Create the session.
    Start(SessionStarted),
    /// A plan_write call, kept as the model sent it so it can be decided again.
    Write(String),
    /// A task tool's write (create, update), kept as sent.
    Task(TaskTool, String),
    /// A plan-mode selection.
    Mode(bool),
}

/// A command with the turn and tool call it belongs to.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    pub(crate) command: Command,
    pub(crate) turn: Option<u64>,
    pub(crate) call_id: Option<CallId>,
}

impl Call {
    pub(crate) fn new(command: Command) -> Self {
        Self {
            command,
            turn: None,
            call_id: None,
        }
    }

    /// The event body this call records against `state`, and for a write the result the
    /// model gets. `None` for a plan_write that is a read (reads record nothing; whether a
    /// call reads depends on its arguments only, never on the state).
    fn decide(&self, state: &SessionState) -> Option<(EventDraft, Option<ToolResult>)> {
        let (body, result) = match &self.command {
            Command::Start(start) => (EventBody::SessionStarted(start.clone()), None),
            Command::Mode(active) => (
                EventBody::ModeSelected(ModeSelected { active: *active }),
                None,
            ),
            Command::Write(arguments) => {
                let execution = execute_plan_write(&state.plan, arguments);
                let mut body = execution.event?;
                stamp_ids_issued(state, &mut body);
                (body, Some(execution.result))
            }
            Command::Task(tool, arguments) => {
                let execution = execute_task_tool(state, *tool, arguments);
                let mut body = execution.event?;
                stamp_ids_issued(state, &mut body);
                (body, Some(execution.result))
            }
        };
        let draft = EventDraft {
            turn: self.turn,
            call_id: self.call_id.clone(),
            body,
        };
        Some((draft, result))
    }
}

/// How a call ended up in the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Landing {
    /// Durably stored.
    Stored,
    /// Its call id was already recorded (by this or another writer); `event` is that record.
    Duplicate,
    /// Storage failed; kept in memory and retried on the next call and on close.
    Unsaved(LogError),
}

/// The outcome of recording one call.
#[derive(Debug, Clone)]
pub(crate) struct Recorded {
    /// The event as recorded (or, when unsaved, as it waits in memory).
    pub(crate) event: Arc<Event>,
    /// For a plan_write decided here: the result for the model.
    pub(crate) result: Option<ToolResult>,
    /// Where it is.
    pub(crate) landing: Landing,
}

/// Whether a storage failure may keep the call in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OnFailure {
    /// Keep it in memory, in order, and report it unsaved (plan_write).
    KeepInMemory,
    /// Report the error; nothing is kept (plan-mode selections, which stay pending instead,
    /// and a session that must exist before its id is handed out).
    Refuse,
}

/// A call storage could not take yet, with its last sealed attempt.
#[derive(Debug, Clone)]
struct Unsaved {
    call: Call,
    attempt: Event,
    /// The storage error that kept it here.
    error: LogError,
}

/// One session's view of its log and its queue of unsaved calls.
pub(crate) struct Recorder {
    log: Arc<dyn EventLog>,
    env: Arc<dyn Env>,
    id: SessionId,
    /// The stored log as last seen: where it ends, the state there, and the time of its
    /// last event (when known).
    stored: Option<Head>,
    stored_state: SessionState,
    stored_at: Option<Timestamp>,
    /// Calls storage could not take yet, oldest first.
    unsaved: VecDeque<Unsaved>,
    /// `stored_state` with the unsaved attempts applied: what the session shows.
    state: SessionState,
    /// How to create the session when it does not exist yet (on first use).
    start: Option<SessionStarted>,
}

impl Recorder {
    /// A recorder for a session whose stored log ends at `stored` with `state` there; `start`
    /// creates the session on first use when it does not exist.
    pub(crate) fn new(
        log: Arc<dyn EventLog>,
        env: Arc<dyn Env>,
        id: SessionId,
        stored: Option<(Head, SessionState)>,
        start: Option<SessionStarted>,
    ) -> Self {
        let (stored, state) = match stored {
            Some((head, state)) => (Some(head), state),
            None => (None, SessionState::default()),
        };
        Self {
            log,
            env,
            id,
            stored,
            stored_state: state.clone(),
            stored_at: None,
            unsaved: VecDeque::new(),
            state,
            start,
        }
    }

    /// The log the session records into.
    pub(crate) fn log(&self) -> &Arc<dyn EventLog> {
        &self.log
    }

    /// The state the session shows (stored, plus anything unsaved).
    pub(crate) fn state(&self) -> &SessionState {
        &self.state
    }

    /// The time of the last stored event, when this session appended it or caught up to it.
    pub(crate) fn stored_at(&self) -> Option<Timestamp> {
        self.stored_at
    }

    /// Where the log ends, counting unsaved events (what the next event is sealed after).
    pub(crate) fn head(&self) -> Option<Head> {
        self.unsaved
            .back()
            .map(|u| Head::of(&u.attempt))
            .or(self.stored)
    }

    /// True when the session exists in the log (as last seen).
    pub(crate) fn exists(&self) -> bool {
        self.stored.is_some()
    }

    pub(crate) fn unsaved_len(&self) -> usize {
        self.unsaved.len()
    }

    /// How the session is created, while the log does not have it yet.
    pub(crate) fn pending_start(&self) -> Option<SessionStarted> {
        if self.stored.is_some() {
            return None;
        }
        self.start.clone()
    }

    /// Empties the queue of unsaved calls, handing each over with the time its attempt was
    /// sealed at; the session shows its stored state again.
    pub(crate) fn take_unsaved(&mut self) -> Vec<(Call, Timestamp)> {
        self.state = self.stored_state.clone();
        self.unsaved
            .drain(..)
            .map(|u| (u.call, u.attempt.at))
            .collect()
    }

    /// The unsaved event recorded for `call_id`, if any, with the error that keeps it here.
    pub(crate) fn unsaved_call(&self, call_id: &CallId) -> Option<(&Event, &LogError)> {
        self.unsaved
            .iter()
            .find(|u| u.attempt.call_id.as_ref() == Some(call_id))
            .map(|u| (&u.attempt, &u.error))
    }

    /// Brings the session up to date with the log: drains unsaved calls when there are any,
    /// otherwise catches up with what other writers appended. Returns true when the shown
    /// state changed.
    ///
    /// # Errors
    /// Storage errors (unsaved calls stay queued), and [`UserError::SessionDeleted`] /
    /// [`UserError::SessionReplaced`] when the session is gone or was replaced.
    pub(crate) fn sync(&mut self) -> Result<bool, LogError> {
        let before = self.state.clone();
        self.update()?;
        Ok(self.state != before)
    }

    /// [`Recorder::sync`] without saying whether the shown state changed (so without a copy
    /// of it to compare).
    ///
    /// # Errors
    /// As [`Recorder::sync`].
    pub(crate) fn update(&mut self) -> Result<(), LogError> {
        if self.unsaved.is_empty() {
            self.catch_up()
        } else {
            self.flush()
        }
    }

    /// For a blind attempt that records nothing: catches up, and says whether the log was
    /// still where this recorder had stored it, so that the attempt's answer stands. An
    /// error says no: the next attempt catches up again and meets it there.
    fn unmoved(&mut self) -> bool {
        let before = self.stored;
        self.catch_up().is_ok() && self.stored == before
    }

    /// Catches the stored view up with the log's head. Only meaningful with nothing unsaved
    /// (the shown state is then the stored state).
    fn catch_up(&mut self) -> Result<(), LogError> {
        let head = self.log.head(&self.id)?;
        if head == self.stored {
            return Ok(());
        }
        let Some(head) = head else {
            // We had seen the session, and now the log has no such session (nor a tombstone).
            return Err(self.replaced());
        };
        if let Some(ours) = self.stored {
            // The log must still hold what we saw, and only have grown after it.
            let still_ours = head.seq > ours.seq
                && self
                    .log
                    .read(&self.id, ours.seq, Some(ours.seq))?
                    .first()
                    .is_some_and(|e| e.hash == ours.hash);
            if !still_ours {
                return Err(self.replaced());
            }
        }
        let state = self.log.state_at(&self.id, head.seq)?;
        self.stored_at = self
            .log
            .read(&self.id, head.seq, Some(head.seq))?
            .first()
            .map(|e| e.at);
        self.stored = Some(head);
        self.start = None;
        self.stored_state = state;
        if self.unsaved.is_empty() {
            self.state = self.stored_state.clone();
        }
        Ok(())
    }

    fn replaced(&self) -> LogError {
        UserError::SessionReplaced {
            session: self.id.clone(),
            seq: self.stored.map_or(0, |h| h.seq.get()),
        }
        .into()
    }

    fn seal(&self, after: Option<Head>, draft: EventDraft) -> Event {
        self.sealed(after, draft).into_event()
    }

    /// [`Recorder::seal`], the event's canonical bytes kept for the store.
    fn sealed(&self, after: Option<Head>, draft: EventDraft) -> SealedEvent {
        let placement =
            Placement::after_head(after, self.id.clone(), self.env.new_ulid(), self.env.now());
        SealedEvent::seal(placement, draft)
    }

    /// Records `call`: catches up, decides, appends; decides again after a lost race.
    /// Creates the session first (in the same atomic append) when it does not exist yet.
    /// Returns `None` for a plan_write that is a read.
    ///
    /// # Errors
    /// User errors (session deleted or replaced), the last conflict when every attempt lost
    /// its race, and storage errors with [`OnFailure::Refuse`].
    pub(crate) fn record(
        &mut self,
        call: Call,
        on_failure: OnFailure,
    ) -> Result<Option<Recorded>, LogError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            // The first attempt of a session this recorder has seen stored, with nothing
            // unsaved, decides against what it last stored without asking the log: an
            // append lands only right after the head it was sealed after, so if another
            // writer moved the log meanwhile it is refused as a conflict and the next
            // attempt catches up first. (That saves a head lookup per call: an index
            // snapshot and a look at the journal's end, on the model's reply path.)
            let blind = attempt == 1 && self.unsaved.is_empty() && self.stored.is_some();
            if !blind {
                match self.update() {
                    Ok(()) => {}
                    Err(error) if is_storage(&error) && on_failure == OnFailure::KeepInMemory => {
                        return Ok(self.keep(call, error));
                    }
                    Err(error) => return Err(error),
                }
            }
            // The events to append, and the result each gives the model.
            let mut events: Vec<SealedEvent> = Vec::with_capacity(2);
            let mut results: Vec<Option<ToolResult>> = Vec::with_capacity(2);
            let mut head = self.stored;
            // The state the call is decided against: the stored one, or that of the session
            // this append creates.
            let mut created = None;
            if head.is_none() {
                let start = match &call.command {
                    Command::Start(start) => start.clone(),
                    _ => self.start.clone().ok_or_else(|| {
                        LogError::from(UserError::UnknownSession(self.id.clone()))
                    })?,
                };
                let first = self.sealed(None, EventDraft::new(EventBody::SessionStarted(start)));
                head = Some(Head::of(first.event()));
                created = Some(apply(SessionState::default(), &first.event().body));
                events.push(first);
                results.push(None);
            }
            let state = created.as_ref().unwrap_or(&self.stored_state);
            match &call.command {
                // The session exists already (someone else created it): adopt it.
                Command::Start(_) if events.is_empty() => {
                    // Adopted as the log has it now: a blind attempt looks first.
                    if blind && !self.unmoved() {
                        continue;
                    }
                    return Ok(None);
                }
                Command::Start(_) => {}
                Command::Write(_) | Command::Task(..) | Command::Mode(_) => {
                    let Some((draft, result)) = call.decide(state) else {
                        // A read records nothing, so no append would tell a stale state
                        // from the log's: it shows the log as it is now. A blind one looks
                        // after deciding, and is decided again only if the log had moved.
                        if blind && !self.unmoved() {
                            continue;
                        }
                        return Ok(None);
                    };
                    events.push(self.sealed(head, draft));
                    results.push(result);
                }
            }
            let appended = match <[SealedEvent; 1]>::try_from(events) {
                Ok([only]) => self.log.append_sealed(only).map(|a| vec![a]),
                Err(events) => {
                    let events: Vec<Event> =
                        events.into_iter().map(SealedEvent::into_event).collect();
                    self.log.append_all(&events)
                }
            };
            match appended {
                Ok(landed) => {
                    let mut recorded = None;
                    for (result, appended) in results.into_iter().zip(landed) {
                        recorded = Some(match appended {
                            Appended::Stored(e) => {
                                self.advance(&e);
                                Recorded {
                                    event: e,
                                    result,
                                    landing: Landing::Stored,
                                }
                            }
                            Appended::Duplicate(e) => {
                                // Another writer (or an earlier try) recorded this call: show
                                // the log as it is now.
                                if let Err(error) = self.catch_up() {
                                    tracing::warn!(session = %self.id, %error, "could not catch up after a repeated call id");
                                }
                                Recorded {
                                    event: e,
                                    result: None,
                                    landing: Landing::Duplicate,
                                }
                            }
                        });
                    }
                    return Ok(recorded);
                }
                Err(LogError::Conflict { .. }) if attempt < MAX_ATTEMPTS => {
                    // A blind attempt lost to a write it could not have seen: catch up at
                    // once. Later attempts lost a race, and back off.
                    if !blind {
                        self.env.pause(attempt);
                    }
                }
                Err(error) if is_storage(&error) && on_failure == OnFailure::KeepInMemory => {
                    return Ok(self.keep(call, error));
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// The stored log grew by `event` (appended by us).
    fn advance(&mut self, event: &Event) {
        self.stored = Some(Head::of(event));
        self.stored_at = Some(event.at);
        self.start = None;
        self.stored_state = apply(std::mem::take(&mut self.stored_state), &event.body);
        if self.unsaved.is_empty() {
            self.state = self.stored_state.clone();
        }
    }

    /// Storage failed: decide `call` against what the session shows and keep it in memory.
    fn keep(&mut self, call: Call, error: LogError) -> Option<Recorded> {
        if self.stored.is_none()
            && !self
                .unsaved
                .iter()
                .any(|u| matches!(u.call.command, Command::Start(_)))
            && let Some(start) = self.start.clone()
        {
            let start = Call::new(Command::Start(start));
            let (draft, _) = start.decide(&self.state)?;
            let attempt = self.seal(None, draft);
            self.state = apply(std::mem::take(&mut self.state), &attempt.body);
            self.unsaved.push_back(Unsaved {
                call: start,
                attempt,
                error: error.clone(),
            });
        }
        if matches!(call.command, Command::Start(_)) {
            return self.unsaved.back().map(|u| Recorded {
                event: Arc::new(u.attempt.clone()),
                result: None,
                landing: Landing::Unsaved(error),
            });
        }
        let (draft, result) = call.decide(&self.state)?;
        let attempt = self.seal(self.head(), draft);
        tracing::warn!(
            session = %self.id, seq = attempt.seq.get(), unsaved = self.unsaved.len() + 1, %error,
            "the log could not store the event; the session goes on in memory and stores it on the next call or on close"
        );
        self.state = apply(std::mem::take(&mut self.state), &attempt.body);
        self.unsaved.push_back(Unsaved {
            call,
            attempt: attempt.clone(),
            error: error.clone(),
        });
        Some(Recorded {
            event: Arc::new(attempt),
            result,
            landing: Landing::Unsaved(error),
        })
    }

    /// Stores every unsaved call, in order.
    ///
    /// # Errors
    /// The first error that stops it; what is not stored stays queued, in order.
    pub(crate) fn flush(&mut self) -> Result<(), LogError> {
        let mut lost_races = 0;
        while let Some(front) = self.unsaved.front() {
            let attempt = front.attempt.clone();
            let head = self.log.head(&self.id)?;
            let landed = match head {
                Some(h) if h == Head::of(&attempt) => true,
                Some(h) if h.seq > attempt.seq => self
                    .log
                    .read(&self.id, attempt.seq, Some(attempt.seq))?
                    .first()
                    .is_some_and(|e| e.hash == attempt.hash),
                _ => false,
            };
            if landed {
                self.unsaved.pop_front();
                self.advance(&attempt);
                continue;
            }
            let place_is_free = match head {
                None => attempt.prev.is_none(),
                Some(h) => attempt.prev == Some(h.hash) && attempt.seq == h.seq.next(),
            };
            let result = if place_is_free {
                self.log.append(&attempt)
            } else {
                Err(LogError::Conflict {
                    session: self.id.clone(),
                    expected: head.map_or(1, |h| h.seq.get() + 1),
                    found: attempt.seq.get(),
                })
            };
            match result {
                Ok(Appended::Stored(stored)) => {
                    self.unsaved.pop_front();
                    self.advance(&stored);
                }
                Ok(Appended::Duplicate(_)) => {
                    // Another writer recorded this very call meanwhile: it is done.
                    self.unsaved.pop_front();
                    self.rebase()?;
                }
                Err(LogError::Conflict { .. }) => {
                    lost_races += 1;
                    if lost_races > MAX_ATTEMPTS {
                        return result.map(|_| ());
                    }
                    if lost_races > 1 {
                        self.env.pause(lost_races);
                    }
                    self.rebase()?;
                }
                Err(error) => return Err(error),
            }
        }
        Ok(())
    }

    /// Another writer took the place of the unsaved calls: catch the stored view up and
    /// decide every unsaved call again, in order, after the new head.
    fn rebase(&mut self) -> Result<(), LogError> {
        let queued = std::mem::take(&mut self.unsaved);
        self.state = self.stored_state.clone();
        let caught_up = self.catch_up();
        // Whatever happened, the queue comes back (re-decided when the catch-up worked).
        let mut state = self.stored_state.clone();
        let mut head = self.stored;
        for old in queued {
            if caught_up.is_err() {
                self.unsaved.push_back(old);
                continue;
            }
            if matches!(old.call.command, Command::Start(_)) && head.is_some() {
                // Someone else created the session: adopt it.
                continue;
            }
            let Some((draft, _)) = old.call.decide(&state) else {
                continue;
            };
            if draft.body.kind() != old.attempt.body.kind()
                || draft.body.plan() != old.attempt.body.plan()
            {
                tracing::warn!(
                    session = %self.id, call = ?old.call.call_id,
                    "an unsaved call was decided again after another writer's events and now has another outcome; the log records the new one"
                );
            }
            let attempt = self.seal(head, draft);
            head = Some(Head::of(&attempt));
            state = apply(state, &attempt.body);
            self.unsaved.push_back(Unsaved {
                call: old.call,
                attempt,
                error: old.error,
            });
        }
        if caught_up.is_ok() {
            self.state = state;
        } else {
            self.state = self
                .unsaved
                .iter()
                .fold(self.stored_state.clone(), |s, u| apply(s, &u.attempt.body));
        }
        caught_up
    }
}

/// True for errors of the storage itself (the operator's to fix), as opposed to a lost race
/// or a request about a session that is not there.
pub(crate) fn is_storage(error: &LogError) -> bool {
    matches!(error, LogError::Operator(_))
}
