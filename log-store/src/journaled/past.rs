//! The records past the index: what other processes appended, read into the tail under the
//! journal's lock before anything is checked or written there ([`Inner::locked`]), and the
//! records a view or the indexer needs past the index's position, from the tail or, where
//! the tail does not reach back, from the journal a record at a time ([`Inner::view_in`]).

use std::sync::{Arc, MutexGuard, PoisonError};

use redb::ReadTransaction;

use crate::journal::{FileStorage, Journal, JournalError, Located};
use crate::redb::Handle;

use super::tail::{Entry, Tail};
use super::view::{self, View};
use super::{
    Indexing, Inner, KEPT_LIMIT, LAZY_LIMIT, Result, Snapshot, entry_of, index, journal_beside,
    journal_err,
};

/// The tail as [`Inner::locked`] holds it while the journal is locked: taken after the
/// journal (the one order of the two), and let go early by a writer whose caller reads the
/// log meanwhile (a streamed batch's iterator).
pub(super) struct Held<'a> {
    inner: &'a Inner,
    tail: Option<MutexGuard<'a, Tail>>,
    bad: Option<planlog_core::LogError>,
}

impl Held<'_> {
    /// The tail, taken if it is not held.
    pub(super) fn tail(&mut self) -> &mut Tail {
        let inner = self.inner;
        self.tail.get_or_insert_with(|| inner.tail())
    }

    /// Lets go of the tail (the journal stays locked).
    pub(super) fn release(&mut self) {
        self.tail = None;
    }
}

impl Inner {
    /// The tail.
    pub(super) fn tail(&self) -> MutexGuard<'_, Tail> {
        // A panic holding the tail leaves whole entries: pushes and pops are single calls.
        self.tail.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `f` under the journal's lock with the tail, after adding to it what other
    /// processes appended since this one last looked (so `f`'s checks see them, and a
    /// writer of this process that takes the journal after this finds them in the tail).
    /// The journal's end after `f` comes back with `f`'s answer; `action` names the work
    /// in errors.
    pub(super) fn locked<T>(
        &self,
        action: &str,
        f: impl FnOnce(
            &mut Journal<FileStorage>,
            &mut Held<'_>,
        ) -> std::result::Result<Result<T>, JournalError>,
    ) -> Result<(T, u64)> {
        let shown = journal_beside(&self.path).display().to_string();
        let mut held = Held {
            inner: self,
            tail: None,
            bad: None,
        };
        let out = self.journal.locked(
            &mut held,
            |held: &mut Held<'_>, r: Located| match entry_of(r, &shown) {
                Ok(entry) => {
                    held.tail().push(entry);
                    Ok(())
                }
                Err(e) => {
                    held.bad = Some(e);
                    Err(JournalError::Io(std::io::Error::other(
                        "a record could not be read",
                    )))
                }
            },
            f,
        );
        match out {
            Ok((Ok(answer), end)) => Ok((answer, end)),
            Ok((Err(e), _)) => Err(e),
            Err(e) => Err(held
                .bad
                .take()
                .unwrap_or_else(|| journal_err(&self.shown, action, e))),
        }
    }

    /// The journal's records between positions `from` and `to`, read from the file, each
    /// given to `on`.
    pub(super) fn journal_between(
        &self,
        from: u64,
        to: u64,
        on: &mut dyn FnMut(&Entry) -> Result<()>,
    ) -> Result<()> {
        let shown = journal_beside(&self.path).display().to_string();
        let mut failed = None;
        let read =
            self.journal
                .read_between(from, to, &mut |r| match entry_of(r, &shown)
                    .and_then(|entry| on(&entry))
                {
                    Ok(()) => Ok(()),
                    Err(e) => {
                        failed = Some(e);
                        Err(JournalError::Io(std::io::Error::other("stopped")))
                    }
                });
        match (failed, read) {
            (Some(e), _) => Err(e),
            (None, Err(e)) => Err(journal_err(&self.shown, "reading the journal", e)),
            (None, Ok(())) => Ok(()),
        }
    }

    /// A view over the index and `tail` (read from the journal where the tail does not
    /// reach back to the index's position), for a write's checks (`writing`) or a read.
    pub(super) fn view_in<'a>(
        &'a self,
        tail: &mut Tail,
        scope: view::Scope,
        writing: bool,
    ) -> Result<View<'a>> {
        let (txn, position) = self.snapshot(tail, writing)?;
        // Records of the scope's sessions that other processes appended are read once, in
        // the tail, for this view and the next.
        let shown = journal_beside(&self.path).display().to_string();
        tail.read_where(scope.as_ref(), &shown)?;
        let mut view = View::new(txn, &self.shown, &self.journal, &self.recent, scope);
        // Where the tail does not reach back to the index's position, the records between
        // are read from the journal, a record at a time: a long gap is never held.
        if position < tail.base() {
            self.journal_between(position, tail.base(), &mut |entry| view.take(entry, &shown))?;
        }
        view.take_tail(tail, position.max(tail.base()), &shown)?;
        tail.indexed_to(position);
        Ok(view)
    }

    /// The index snapshot a view is built on, and the journal position it reflects. Each
    /// fresh one is a redb read transaction (the index's header read again under a
    /// byte-range lock: about ten system calls and a page or two; ~7 µs a round in a profile
    /// of 8 writing processes, 18 µs in one traced MCP plan_write).
    /// A view of an older snapshot plus the records past its position answers as a newer
    /// one would, so some processes keep one while the tail still reaches back to it and
    /// holds fewer records than a bound:
    ///
    /// - a lazily indexed process (a hook: a dozen reads in one short call) keeps the first
    ///   it takes, for every view, while fewer than [`LAZY_LIMIT`] records lie past it;
    /// - a process indexed in the background (an MCP server, eight agents' servers on one
    ///   store) keeps the one its writes' checks take, while fewer than [`KEPT_LIMIT`]
    ///   records lie past it. Reads use it while it is kept, but never keep one: the
    ///   indexing round each write starts lets it go (`Indexer`), so it lives ~50 ms past
    ///   a process's last write, however long the process then only reads or idles.
    ///
    /// Holding it keeps redb from reusing the pages later index commits free, for that
    /// short life only; it is let go when this process indexes (`forget_snapshot`).
    fn snapshot(&self, tail: &Tail, writing: bool) -> Result<(Arc<ReadTransaction>, u64)> {
        let (limit, keep_new) = match self.indexing {
            Indexing::Eager => return self.fresh_snapshot(),
            Indexing::Lazy | Indexing::Deferred => (LAZY_LIMIT, true),
            Indexing::Background => (KEPT_LIMIT, writing),
        };
        let mut kept = self.snapshot.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(s) = kept.as_ref()
            && s.position >= tail.base()
            && tail.len() < limit
        {
            return Ok((Arc::clone(&s.txn), s.position));
        }
        let (txn, position) = self.fresh_snapshot()?;
        *kept = keep_new.then(|| Snapshot {
            txn: Arc::clone(&txn),
            position,
        });
        Ok((txn, position))
    }

    /// A new read transaction of the index, and the position it reflects.
    /// A handle redb has failed (a write of this process's that did not complete) is
    /// opened again, and the read tried once more on the new one.
    fn fresh_snapshot(&self) -> Result<(Arc<ReadTransaction>, u64)> {
        let read = |handle: &Handle| {
            let txn = handle.begin_read(&self.shown, "reading")?;
            let position = index::IndexRead {
                txn: &txn,
                p: &self.shown,
            }
            .position()?;
            Ok((Arc::new(txn), position))
        };
        let used = self.index.get();
        match read(&used) {
            Err(_) if self.index.renew_if_failed(&used) => read(&self.index.get()),
            other => other,
        }
    }

    /// Lets go of a kept index snapshot: the index has moved on (this process indexed, or
    /// found another had).
    pub(super) fn forget_snapshot(&self) {
        *self.snapshot.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// A view of everything acknowledged so far, anywhere, about the sessions of `scope`.
    pub(super) fn view(&self, scope: view::Scope) -> Result<View<'_>> {
        if !self.streaming_here() {
            // What others appended goes into the tail while the journal is held. (A thread
            // writing a streamed batch holds the journal already, and nothing new can
            // arrive: taking it again would wait for ever.)
            self.locked("reading the journal", |_, _| Ok(Ok(())))?;
        }
        let mut tail = self.tail();
        self.view_in(&mut tail, scope, false)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code

    use planlog_core::EventLog;
    use planlog_core::log::Appended;
    use planlog_core::testkit::{seal_after, seed, sid, written};

    use super::*;
    use crate::JournaledLog;

    /// A store with one session of three events written by an eagerly indexed handle, and a
    /// second handle on it indexed as `indexing`: (the first, the second, the session, its
    /// events).
    fn two_handles(
        path: &std::path::Path,
        indexing: Indexing,
    ) -> (
        JournaledLog,
        JournaledLog,
        planlog_core::SessionId,
        Vec<planlog_core::events::Event>,
    ) {
        let eager = JournaledLog::options()
            .indexing(Indexing::Eager)
            .open(path)
            .unwrap();
        let session = sid("01JGAAAAAAAAAAAAAAAAAAAAAA");
        let events = seed(&eager, &session, 2);
        let second = JournaledLog::options()
            .indexing(indexing)
            .open(path)
            .unwrap();
        (eager, second, session, events)
    }

    /// Appends to `log` the next event of `session` after `events`, recording `call`: the
    /// store's answer, the event added to `events` when stored.
    fn append_next(
        log: &JournaledLog,
        session: &planlog_core::SessionId,
        events: &mut Vec<planlog_core::events::Event>,
        call: &str,
    ) -> Appended {
        let next = seal_after(events.last(), session, Some(call), written(vec![]));
        let appended = log.append(&next).unwrap();
        if matches!(appended, Appended::Stored(_)) {
            events.push(next);
        }
        appended
    }

    /// The position of the index snapshot `log` keeps, if it keeps one.
    fn kept(log: &JournaledLog) -> Option<u64> {
        let kept = log.inner.snapshot.lock().unwrap();
        kept.as_ref().map(|s| s.position)
    }

    /// A handle indexed in the background keeps the snapshot its writes' checks take, and
    /// its next writes share it while the index moves on elsewhere; a call another process
    /// recorded past that snapshot is still found (a duplicate, not a second event); reads
    /// never keep one; and the indexing round each write wakes lets it go, whether the
    /// write was stored or refused.
    #[test]
    fn a_background_writer_keeps_its_checks_snapshot_until_its_indexing_round() {
        let dir = tempfile::tempdir().unwrap();
        let (other, writer, session, mut events) =
            two_handles(&dir.path().join("planlog.redb"), Indexing::Background);
        // Reads take fresh snapshots and keep none.
        assert_eq!(
            writer.head(&session).unwrap().unwrap().seq,
            events.last().unwrap().seq
        );
        assert_eq!(kept(&writer), None);
        let mut shared = 0;
        let started = std::time::Instant::now();
        for n in 0..20 {
            // The other process appends and indexes between this writer's appends.
            append_next(&other, &session, &mut events, &format!("o-{n}"));
            let before = kept(&writer);
            let mine = append_next(&writer, &session, &mut events, &format!("w-{n}"));
            assert!(matches!(mine, Appended::Stored(_)));
            let after = kept(&writer);
            if before.is_some() && after == before {
                shared += 1;
                assert!(after.unwrap() < other.index_position().unwrap());
            }
            // A call the other process recorded past the kept snapshot is a duplicate.
            match append_next(&writer, &session, &mut events, &format!("o-{n}")) {
                Appended::Duplicate(recorded) => {
                    assert_eq!(
                        recorded.call_id.as_ref().unwrap().as_str(),
                        format!("o-{n}")
                    );
                    assert_eq!(recorded.seq.get(), events.last().unwrap().seq.get() - 1);
                }
                Appended::Stored(e) => panic!("a recorded call stored again as seq {}", e.seq),
            }
        }
        // An indexing round lets the snapshot go ~50 ms after a write, so how many rounds
        // share one depends on the disk's speed: on a slow one, at least one pair; when the
        // twenty rounds took under 50 ms (at most one indexing round between them), all but
        // the first (no snapshot kept before it) and the one or two a round fell between.
        let took = started.elapsed();
        assert!(shared >= 1, "the kept snapshot was never shared");
        if took < std::time::Duration::from_millis(50) {
            assert!(shared >= 17, "shared {shared} times of 20 in {took:?}");
        }
        let let_go = |log: &JournaledLog| {
            let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
            while kept(log).is_some() {
                assert!(
                    std::time::Instant::now() < until,
                    "the kept snapshot was never let go"
                );
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        };
        let_go(&writer);
        // A refused write (a seq already taken) keeps its checks' snapshot no longer.
        let stale = seal_after(
            events.get(events.len() - 2),
            &session,
            Some("late"),
            written(vec![]),
        );
        assert!(writer.append(&stale).is_err());
        let_go(&writer);
        assert_eq!(writer.last(&session).unwrap().as_ref(), events.last());
    }

    /// A lazily indexed handle's views share one index snapshot while the index moves on
    /// elsewhere, and take a new one before LAZY_LIMIT records lie past it: what it holds
    /// past the index stays bounded however long it reads.
    #[test]
    fn a_lazy_handle_keeps_its_snapshot_a_bounded_while() {
        let dir = tempfile::tempdir().unwrap();
        let (writer, reader, session, mut events) =
            two_handles(&dir.path().join("planlog.redb"), Indexing::Lazy);
        let mut reused = 0;
        for n in 0..4 * LAZY_LIMIT {
            append_next(&writer, &session, &mut events, &format!("w-{n}"));
            assert_eq!(
                reader.head(&session).unwrap().unwrap().seq,
                events.last().unwrap().seq
            );
            let position = kept(&reader).unwrap();
            if position < writer.index_position().unwrap() {
                reused += 1;
            }
            assert!(
                reader.inner.tail().len() < LAZY_LIMIT,
                "{} records held past the snapshot",
                reader.inner.tail().len()
            );
        }
        assert!(
            reused >= 3 * LAZY_LIMIT,
            "the snapshot was reused {reused} times"
        );
        // A handle that indexes lets its snapshot go, and reads on.
        let next = seal_after(events.last(), &session, Some("last"), written(vec![]));
        reader.append(&next).unwrap();
        reader.head(&session).unwrap();
        assert!(kept(&reader).is_some());
        reader.index_now().unwrap();
        assert!(kept(&reader).is_none());
        assert_eq!(reader.last(&session).unwrap(), Some(next));
    }
}
