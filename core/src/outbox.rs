//! [`Outbox`]: fail-open appends that never lose an event.
//!
//! When an append fails (disk full, IO error, a lock held too long), the session goes on in
//! memory: the event stays here, in order, and is retried before the next append and on
//! close. Each failure logs a `tracing` warning; a failure that outlives `close` is reported
//! by it.

use std::collections::VecDeque;

use crate::error::LogError;
use crate::event::Event;
use crate::log::{Appended, EventLog};

/// Sealed events not yet stored, oldest first.
#[derive(Debug, Default)]
pub struct Outbox {
    pending: VecDeque<Event>,
}

impl Outbox {
    /// An empty outbox.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of events waiting to be stored.
    pub fn len(&self) -> usize {
        self.pending.len()
    }

    /// True when everything is stored.
    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    /// The newest unsaved event: the next event must be sealed after it.
    pub fn newest(&self) -> Option<&Event> {
        self.pending.back()
    }

    /// The unsaved events, oldest first.
    pub fn pending(&self) -> impl Iterator<Item = &Event> {
        self.pending.iter()
    }

    /// Queues `event` behind any unsaved ones and tries to store them all, in order.
    ///
    /// # Errors
    /// The storage error when `event` (or one before it) could not be stored; it stays queued
    /// and a warning has been logged. The caller goes on in memory.
    pub fn append(&mut self, log: &dyn EventLog, event: Event) -> Result<Appended, LogError> {
        if let Err(err) = self.flush(log) {
            self.pending.push_back(event);
            return Err(err);
        }
        store_one(log, &event).inspect_err(|err| {
            tracing::warn!(
                session = %event.session,
                seq = event.seq.get(),
                error = %err,
                "append failed; the session goes on in memory and retries on the next append and on close"
            );
            self.pending.push_back(event.clone());
        })
    }

    /// Stores `event` now, after any unsaved ones, without queueing it on failure (for
    /// selections that must stay pending rather than be half-recorded).
    ///
    /// # Errors
    /// The storage error; `event` is not kept.
    pub fn store_now(&mut self, log: &dyn EventLog, event: &Event) -> Result<Appended, LogError> {
        self.flush(log)?;
        store_one(log, event)
    }

    /// Stores every unsaved event, in order.
    ///
    /// # Errors
    /// The storage error of the first event that still cannot be stored (a warning has been
    /// logged); that event and those after it stay queued.
    pub fn flush(&mut self, log: &dyn EventLog) -> Result<(), LogError> {
        while let Some(front) = self.pending.front() {
            match store_one(log, front) {
                Ok(_) => {
                    self.pending.pop_front();
                }
                Err(err) => {
                    tracing::warn!(
                        session = %front.session,
                        seq = front.seq.get(),
                        unsaved = self.pending.len(),
                        error = %err,
                        "retrying unsaved events failed; they stay in memory, in order"
                    );
                    return Err(err);
                }
            }
        }
        Ok(())
    }
}

/// Appends one event; when the append errors, checks whether an earlier attempt landed after
/// all (an ambiguous failure) so the event is never stored twice.
fn store_one(log: &dyn EventLog, event: &Event) -> Result<Appended, LogError> {
    match log.append(event) {
        Ok(appended) => Ok(appended),
        Err(err) => {
            let landed = log
                .read(&event.session, event.seq, Some(event.seq))
                .ok()
                .and_then(|mut v| v.pop())
                .filter(|stored| stored.hash == event.hash);
            landed.map(Appended::Stored).ok_or(err)
        }
    }
}
