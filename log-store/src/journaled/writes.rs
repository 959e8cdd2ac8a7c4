//! The writes of a [`super::JournaledLog`], each under the journal's lock: what other
//! processes appended read first, every append checked against the index and the records
//! past it, the accepted ones written, the lock let go, then one sync. A write is
//! acknowledged only after that sync. A round of single appends is checked before the lock
//! and only looked at again under it ([`Inner::commit_round`]); batches, streamed batches
//! and deletions are checked under it.

use std::collections::HashSet;
use std::sync::Arc;

use planlog_core::events::Event;
use planlog_core::log::{Appended, Slot, check_encoded};
use planlog_core::{LogError, OperatorError, SessionId, UserError};

use super::tail::{Entry, Item, KEEP, Lazy};
use super::view::{Verdict, View};
use super::{Inner, Result, journal_err};
use crate::group_commit::BatchResults;
use crate::journal::{check_sizes, tombstone};

std::thread_local! {
    /// The log whose streamed batch this thread is writing, holding its journal (its
    /// address; 0 for none).
    static STREAMING: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Marks this thread as writing a streamed batch of `inner` until dropped.
struct Streaming;

impl Streaming {
    fn enter(inner: &Inner) -> Self {
        STREAMING.with(|s| s.set(std::ptr::from_ref(inner) as usize));
        Streaming
    }
}

impl Drop for Streaming {
    fn drop(&mut self) {
        STREAMING.with(|s| s.set(0));
    }
}

impl Inner {
    /// Whether this thread holds the journal for a streamed batch of this log.
    pub(super) fn streaming_here(&self) -> bool {
        STREAMING.with(|s| s.get() == std::ptr::from_ref(self) as usize)
    }
}

/// An append handed to the group commit: the event and its canonical bytes.
pub(super) type Encoded = (Arc<Event>, Vec<u8>);

/// An append of a round: its ticket, its event and the event's canonical bytes.
type Pending = (u64, Encoded);

/// How many bytes of a streamed batch are written at once.
const STREAM_WRITE: usize = 1 << 20;

impl Inner {
    fn refuse_read_only(&self) -> Result<()> {
        if self.read_only {
            return Err(OperatorError::ReadOnly {
                path: self.shown.clone(),
            }
            .into());
        }
        Ok(())
    }

    /// Makes the journal durable up to `end`.
    fn sync(&self, end: u64) -> Result<()> {
        self.journal
            .sync_upto(end)
            .map_err(|e| journal_err(&self.shown, "syncing the journal", e))
    }

    /// Checks a round's appends against `view`, in order, each accepted one added to it:
    /// a verdict per append.
    fn decide(view: &mut View<'_>, round: &[Pending]) -> Vec<Result<Verdict>> {
        round
            .iter()
            .map(|(_, (event, _))| {
                let verdict = view.check(event);
                if let Ok(Verdict::Place) = verdict {
                    view.add(&Item::Event(Arc::clone(event)), true);
                }
                verdict
            })
            .collect()
    }

    /// A round's verdicts reached before the journal's lock, from the index and the tail as
    /// this process has read them (up to tail position `seen`): still right under the lock
    /// unless a record read since is about one of the round's sessions. `None` when they
    /// could not be reached (the check under the lock then says why).
    fn decide_early(
        &self,
        round: &[Pending],
        scope: &HashSet<SessionId>,
    ) -> Option<(u64, Vec<Result<Verdict>>)> {
        let mut tail = self.tail();
        let seen = tail.end();
        let mut view = self.view_in(&mut tail, Some(scope.clone()), true).ok()?;
        drop(tail);
        Some((seen, Self::decide(&mut view, round)))
    }

    /// One group-commit round of single appends (each event with its canonical bytes): each
    /// checked, then under the journal's lock the accepted ones written, then one sync, then
    /// each append's answer. A round that answers with recorded calls syncs too: the records
    /// it answered with may be another writer's that are not durable yet.
    ///
    /// The checks run before the lock, so that other processes' writes wait only for the
    /// catch-up and the write. Under the lock, the records read since the checks (another
    /// process's, or another thread's of this one) are looked at: when one is about a
    /// session of the round, or the tail no longer reaches back to where the checks stopped,
    /// the round is checked again there, against everything.
    pub(super) fn commit_round(&self, round: Vec<Pending>) -> BatchResults<Result<Appended>> {
        let tickets: Vec<u64> = round.iter().map(|(t, _)| *t).collect();
        let all = |e: LogError| tickets.iter().map(|t| (*t, Err(e.clone()))).collect();
        if let Err(e) = self.refuse_read_only() {
            return all(e);
        }
        let scope: HashSet<SessionId> = round.iter().map(|(_, (e, _))| e.session.clone()).collect();
        let early = self.decide_early(&round, &scope);
        let written = self.locked("appending", |journal, held| {
            let tail = held.tail();
            let verdicts = match early {
                Some((seen, verdicts)) if !tail.touched_since(seen, &scope) => verdicts,
                _ => match self.view_in(tail, Some(scope), true) {
                    Ok(mut view) => Self::decide(&mut view, &round),
                    Err(e) => return Ok(Err(e)),
                },
            };
            let start = journal.end();
            let mut out = Vec::new();
            let mut answers = Vec::new();
            let mut placed = Vec::new();
            for ((ticket, (event, bytes)), verdict) in round.into_iter().zip(verdicts) {
                match verdict {
                    Ok(Verdict::Duplicate(recorded)) => {
                        answers.push((ticket, Ok(Appended::Duplicate(recorded))));
                    }
                    Ok(Verdict::Place) => {
                        let at = out.len();
                        journal.encode(&[bytes.as_slice()], &mut out);
                        placed.push((ticket, start + at as u64, start + out.len() as u64, event));
                    }
                    Err(e) => answers.push((ticket, Err(e))),
                }
            }
            journal.write_encoded(&out)?;
            for (_, at, upto, event) in &placed {
                tail.push(Entry {
                    at: *at,
                    upto: *upto,
                    item: Lazy::Read(Item::Event(Arc::clone(event))),
                });
            }
            Ok(Ok((answers, placed)))
        });
        let ((answers, placed), end) = match written {
            Ok(done) => done,
            Err(e) => return all(e),
        };
        let duplicates = answers
            .iter()
            .any(|(_, a)| matches!(a, Ok(Appended::Duplicate(_))));
        let synced = if placed.is_empty() && !duplicates {
            Ok(())
        } else {
            self.sync(end)
        };
        let mut results = Vec::with_capacity(answers.len() + placed.len());
        for (ticket, answer) in answers {
            results.push(match (&synced, answer) {
                (Err(e), Ok(Appended::Duplicate(_))) => (ticket, Err(e.clone())),
                (_, answer) => (ticket, answer),
            });
        }
        for (ticket, _, _, event) in placed {
            let result = match &synced {
                Ok(()) => Ok(Appended::Stored(event)),
                Err(e) => Err(e.clone()),
            };
            results.push((ticket, result));
        }
        results
    }

    /// Appends `events` as one batch: all stored (or recognised as recorded calls), or none.
    pub(super) fn append_batch(&self, events: &[Event]) -> Result<Vec<Appended>> {
        self.refuse_read_only()?;
        let encoded = events
            .iter()
            .map(check_encoded)
            .collect::<Result<Vec<_>>>()?;
        let refs: Vec<&[u8]> = encoded.iter().map(Vec::as_slice).collect();
        check_sizes(&refs).map_err(|e| journal_err(&self.shown, "appending", e))?;
        let scope = Some(events.iter().map(|e| e.session.clone()).collect());
        let (appended, end) = self.locked("appending", |journal, held| {
            let tail = held.tail();
            let mut view = match self.view_in(tail, scope, true) {
                Ok(v) => v,
                Err(e) => return Ok(Err(e)),
            };
            let mut appended = Vec::with_capacity(events.len());
            let mut records = Vec::new();
            let mut placed = Vec::new();
            for (event, bytes) in events.iter().zip(&refs) {
                match view.check(event) {
                    Ok(Verdict::Duplicate(recorded)) => {
                        appended.push(Appended::Duplicate(recorded))
                    }
                    Ok(Verdict::Place) => {
                        let shared = Arc::new(event.clone());
                        view.add(&Item::Event(Arc::clone(&shared)), true);
                        records.push(*bytes);
                        appended.push(Appended::Stored(Arc::clone(&shared)));
                        placed.push(shared);
                    }
                    Err(e) => return Ok(Err(e)),
                }
            }
            drop(view);
            let start = journal.end();
            let mut out = Vec::new();
            let starts = journal.encode(&records, &mut out);
            journal.write_encoded(&out)?;
            let upto = journal.end();
            for (at, event) in starts.into_iter().zip(placed) {
                tail.push(Entry {
                    at: start + at as u64,
                    upto,
                    item: Lazy::Read(Item::Event(event)),
                });
            }
            Ok(Ok(appended))
        })?;
        if appended.iter().any(|a| matches!(a, Appended::Stored(_))) {
            self.sync(end)?;
        }
        Ok(appended)
    }

    /// Appends what `events` yields (each event with its canonical bytes, checked by the
    /// caller or sealed with them) as one batch, written as it comes and committed at the
    /// end: all stored, or, on the first error, none (what was written is cut).
    pub(super) fn append_stream(
        &self,
        events: &mut dyn Iterator<Item = Result<(Event, Vec<u8>)>>,
    ) -> Result<u64> {
        self.refuse_read_only()?;
        let (stored, end) = self.locked("appending", |journal, held| {
            let mut view = match self.view_in(held.tail(), None, true) {
                Ok(v) => v,
                Err(e) => return Ok(Err(e)),
            };
            held.release();
            // The caller's iterator may read this log (an import seals each event after
            // the last): those reads are answered without the journal's lock, which this
            // thread holds, and without the records this batch has not committed.
            let _streaming = Streaming::enter(self);
            let start = journal.end();
            let batch = journal.begin_batch();
            let mut out = Vec::new();
            let mut stored = 0u64;
            let mut kept = Vec::new();
            let mut failed = None;
            for event in events {
                let checked = event.and_then(|(e, bytes)| {
                    check_sizes(&[bytes.as_slice()])
                        .map_err(|x| journal_err(&self.shown, "appending", x))?;
                    view.check_streamed(&e)?;
                    Ok((e, bytes))
                });
                let (event, bytes) = match checked {
                    Ok(c) => c,
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                };
                let at = journal.end() + out.len() as u64;
                journal.encode_part(batch, &bytes, &mut out);
                let event = Arc::new(event);
                view.add(&Item::Event(Arc::clone(&event)), false);
                if kept.len() <= KEEP {
                    kept.push((at, event));
                }
                stored += 1;
                if out.len() >= STREAM_WRITE {
                    if let Err(e) = journal.write_encoded(&out) {
                        journal.cut_to(start)?;
                        return Err(e);
                    }
                    out.clear();
                }
            }
            drop(view);
            if let Some(e) = failed {
                journal.cut_to(start)?;
                return Ok(Err(e));
            }
            if stored == 0 {
                return Ok(Ok(0));
            }
            journal.encode_commit(batch, &mut out);
            if let Err(e) = journal.write_encoded(&out) {
                journal.cut_to(start)?;
                return Err(e);
            }
            let upto = journal.end();
            let tail = held.tail();
            if kept.len() > KEEP {
                tail.restart_at(upto);
            } else {
                for (at, event) in kept {
                    tail.push(Entry {
                        at,
                        upto,
                        item: Lazy::Read(Item::Event(event)),
                    });
                }
            }
            Ok(Ok(stored))
        })?;
        if stored > 0 {
            self.sync(end)?;
        }
        if stored as usize > KEEP {
            self.index_now()?;
        }
        Ok(stored)
    }

    /// Deletes `session`: a tombstone record.
    pub(super) fn delete(&self, session: &SessionId) -> Result<()> {
        self.refuse_read_only()?;
        let ((), end) = self.locked("deleting a session", |journal, held| {
            let tail = held.tail();
            let view = match self.view_in(tail, super::one(session), true) {
                Ok(v) => v,
                Err(e) => return Ok(Err(e)),
            };
            let first = match view.slot(session) {
                Ok(Slot::Live(_)) => match view.event(session, 1) {
                    Ok(first) => first.map(|e| e.hash),
                    Err(e) => return Ok(Err(e)),
                },
                Ok(Slot::Free | Slot::Retired { .. }) => {
                    return Ok(Err(UserError::UnknownSession(session.clone()).into()));
                }
                Err(e) => return Ok(Err(e)),
            };
            drop(view);
            let record = tombstone(session, first);
            let start = journal.end();
            let mut out = Vec::new();
            journal.encode(&[record.as_slice()], &mut out);
            journal.write_encoded(&out)?;
            tail.push(Entry {
                at: start,
                upto: journal.end(),
                item: Lazy::Read(Item::Delete {
                    session: session.clone(),
                    first,
                }),
            });
            Ok(Ok(()))
        })?;
        self.sync(end)
    }
}
