//! [`MemoryLog`]: an [`EventLog`] in memory. Sub-agents plan on one (never flushed), and
//! tests use it as the reference backend.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, PoisonError};

use super::canonical::Hash;
use super::error::{LogError, UserError};
use super::event::Event;
use super::event::Head;
use super::ids::{CallId, Seq, SessionId};
use super::log::{Appended, EventLog, SessionInfo, Slot, check_append};

/// An in-memory event log. Everything is lost when it is dropped, by design.
#[derive(Debug, Default)]
pub struct MemoryLog {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    sessions: BTreeMap<SessionId, MemSession>,
    /// Retired ids, with the first event hash of the session deleted under each.
    deleted: HashMap<SessionId, Hash>,
}

#[derive(Debug, Clone)]
struct MemSession {
    events: Vec<Event>,
    calls: HashMap<CallId, usize>,
    info: SessionInfo,
}

impl MemoryLog {
    /// An empty log.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // Every mutation below completes before it can panic (push after checks), so a
        // poisoned lock still guards consistent data.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Inner {
    fn append(&mut self, event: &Event) -> Result<Appended, LogError> {
        let inner = self;
        let session = inner.sessions.get(&event.session);
        if let (Some(s), Some(call)) = (session, &event.call_id)
            && let Some(&i) = s.calls.get(call)
        {
            return Ok(Appended::Duplicate(std::sync::Arc::new(
                s.events[i].clone(),
            )));
        }
        let slot = inner.slot(&event.session);
        check_append(event, slot)?;
        if slot.is_restored_by(event) {
            inner.deleted.remove(&event.session);
        }
        match inner.sessions.get_mut(&event.session) {
            Some(s) => {
                if let Some(call) = &event.call_id {
                    s.calls.insert(call.clone(), s.events.len());
                }
                s.info.observe(event);
                s.events.push(event.clone());
            }
            None => {
                let info =
                    SessionInfo::from_first(event).ok_or_else(|| LogError::InvalidEvent {
                        session: event.session.clone(),
                        seq: event.seq.get(),
                        reason: "the first event of a session must be session_started".to_owned(),
                    })?;
                let calls = event.call_id.iter().map(|c| (c.clone(), 0)).collect();
                inner.sessions.insert(
                    event.session.clone(),
                    MemSession {
                        events: vec![event.clone()],
                        calls,
                        info,
                    },
                );
            }
        }
        Ok(Appended::Stored(std::sync::Arc::new(event.clone())))
    }
}

impl Inner {
    fn slot(&self, session: &SessionId) -> Slot {
        match (self.sessions.get(session), self.deleted.get(session)) {
            (Some(s), _) => s
                .events
                .last()
                .map_or(Slot::Free, |e| Slot::Live(Head::of(e))),
            (None, Some(first)) => Slot::Retired {
                first: Some(*first),
            },
            (None, None) => Slot::Free,
        }
    }
}

impl EventLog for MemoryLog {
    fn append(&self, event: &Event) -> Result<Appended, LogError> {
        self.lock().append(event)
    }

    fn append_all(&self, events: &[Event]) -> Result<Vec<Appended>, LogError> {
        let mut inner = self.lock();
        // Validate against a scratch copy of the touched sessions, then commit by swapping.
        let mut scratch = Inner {
            sessions: BTreeMap::new(),
            deleted: inner.deleted.clone(),
        };
        for e in events {
            if let Some(s) = inner.sessions.get(&e.session) {
                scratch
                    .sessions
                    .entry(e.session.clone())
                    .or_insert_with(|| s.clone());
            }
        }
        let results = events
            .iter()
            .map(|e| scratch.append(e))
            .collect::<Result<Vec<_>, _>>()?;
        inner.sessions.extend(scratch.sessions);
        inner.deleted = scratch.deleted;
        Ok(results)
    }

    fn read(
        &self,
        session: &SessionId,
        from: Seq,
        to: Option<Seq>,
    ) -> Result<Vec<Event>, LogError> {
        let inner = self.lock();
        let s = inner
            .sessions
            .get(session)
            .ok_or_else(|| UserError::UnknownSession(session.clone()))?;
        let start = usize::try_from(from.get() - 1)
            .unwrap_or(usize::MAX)
            .min(s.events.len());
        let end = to
            .map_or(s.events.len(), |t| {
                usize::try_from(t.get()).unwrap_or(usize::MAX)
            })
            .min(s.events.len())
            .max(start);
        Ok(s.events[start..end].to_vec())
    }

    fn last(&self, session: &SessionId) -> Result<Option<Event>, LogError> {
        Ok(self
            .lock()
            .sessions
            .get(session)
            .and_then(|s| s.events.last().cloned()))
    }

    fn find_call(&self, session: &SessionId, call: &CallId) -> Result<Option<Seq>, LogError> {
        Ok(self.lock().sessions.get(session).and_then(|s| {
            s.calls
                .get(call)
                .and_then(|&i| s.events.get(i))
                .map(|e| e.seq)
        }))
    }

    fn head(&self, session: &SessionId) -> Result<Option<Head>, LogError> {
        match self.lock().slot(session) {
            Slot::Free => Ok(None),
            Slot::Live(head) => Ok(Some(head)),
            Slot::Retired { .. } => Err(UserError::SessionDeleted(session.clone()).into()),
        }
    }

    fn session(&self, session: &SessionId) -> Result<Option<SessionInfo>, LogError> {
        Ok(self.lock().sessions.get(session).map(|s| s.info.clone()))
    }

    fn sessions(&self) -> Result<Vec<SessionInfo>, LogError> {
        Ok(self
            .lock()
            .sessions
            .values()
            .map(|s| s.info.clone())
            .collect())
    }

    fn delete(&self, session: &SessionId) -> Result<(), LogError> {
        let mut inner = self.lock();
        let Some(removed) = inner.sessions.remove(session) else {
            return Err(UserError::UnknownSession(session.clone()).into());
        };
        // Invariant: a session in the map has at least its session_started event.
        if let Some(first) = removed.events.first() {
            inner.deleted.insert(session.clone(), first.hash);
        }
        Ok(())
    }
}
