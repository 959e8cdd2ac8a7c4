//! Bringing the index up to date with the journal: [`Inner::index_now`] (any writable
//! process, through a [`Feed`]: transactions of [`INDEX_BATCH`] records or more, each also
//! recording the journal position it reaches), and [`Indexer`], the thread that does it
//! after each write of a long-lived process, off the acknowledgement path.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;

use planlog_core::OperatorError;

use redb::WriteTransaction;

use super::tail::{Entry, Item};
use super::{Inner, Result, index, room};
use crate::redb::Handle;
use crate::redb::errors::redb_err;

/// Most records one index transaction applies.
pub(super) const INDEX_BATCH: usize = 4096;

/// Records read and held before they are applied together (the index's tables opened once
/// for them): a bound on what a feed holds, however long a batch.
const APPLY_RUN: usize = 256;

/// How long indexing that gives way waits to open the index for writing (an open takes a
/// few milliseconds; it waits for the whole of another process's write transaction).
const GIVE_WAY_OPEN: std::time::Duration = std::time::Duration::from_millis(50);

/// How long indexing in passing that gave way (another process held the index) waits
/// before it tries again: longer than a hook's process lives, so a hook tries once; a
/// long-lived lazily indexed handle (a warm hook server's) tries again after it, so its
/// records past the index do not pile up for its whole life.
pub(super) const GIVE_WAY_PAUSE: std::time::Duration = std::time::Duration::from_secs(2);

/// How long the indexing thread lets writes gather before it indexes them.
const GATHER: std::time::Duration = std::time::Duration::from_millis(50);

impl Inner {
    /// Brings the index up to date with what this process has read of the journal.
    ///
    /// # Errors
    /// Operator errors; [`OperatorError::ReadOnly`] when opened for reading only.
    pub(super) fn index_now(&self) -> Result<()> {
        self.index_up_to_date(true)
    }

    /// Brings the index up to date on the way (at open, after a lazily indexed write),
    /// giving way to another thread or process that is writing the index (it is indexing,
    /// or will), and only saying so when it fails: the journal holds every record and
    /// reads answer from it past the index, so neither the open nor a write that is already
    /// durable fails for want of an index (ARCHITECTURE.md § "Nothing fails for want of an
    /// index").
    pub(super) fn index_in_passing(&self) {
        let paused = self
            .gave_way
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .is_some_and(|at| at.elapsed() < GIVE_WAY_PAUSE);
        if !paused {
            self.index_or_warn(false);
        }
    }

    /// [`Inner::index_up_to_date`], a failure said as a warning (the journal keeps every
    /// record; the next write or open tries again).
    fn index_or_warn(&self, wait: bool) {
        if let Err(e) = self.index_up_to_date(wait) {
            tracing::warn!(store = %self.shown, error = %e, "could not bring the index up to date; the journal keeps every record, and the next write or open tries again");
        }
    }

    /// [`Inner::index_now`]; with `wait` false, it gives way (does nothing) while another
    /// thread or process writes the index: that one is indexing, and the next round comes.
    pub(super) fn index_up_to_date(&self, wait: bool) -> Result<()> {
        if self.read_only {
            return Err(OperatorError::ReadOnly {
                path: self.shown.clone(),
            }
            .into());
        }
        // Too little room on the disk for the transaction: the index waits, untried (a
        // commit that failed part way would leave the handle failed and the file needing a
        // repair; `room`). What it would index is taken as the journal past the tail's
        // start (the index's position, unless the tail has started again past it).
        let behind = self.journal.end().saturating_sub(self.tail().base());
        if let Err(no_room) = room::for_indexing(&self.path, behind) {
            if !self.short_of_room.swap(true, Ordering::Relaxed) {
                tracing::warn!(store = %self.shown, %no_room, "the disk is nearly full: the index is left behind (the journal keeps every record, and reads take them from it); the next write or open after the disk frees brings it up to date");
            }
            return Ok(());
        }
        self.short_of_room.store(false, Ordering::Relaxed);
        let used = self.index.get();
        let indexed = self.index_with(&used, wait);
        if indexed.is_err() && used.is_writable() {
            // A failed commit fails the handle reads go through too: it is opened again.
            self.forget_snapshot();
            self.index.renew_if_failed(&used);
        }
        indexed
    }

    /// [`Inner::index_up_to_date`] through `index` (the store's handle: used when writable,
    /// else a writable one is opened beside it).
    fn index_with(&self, index: &Handle, wait: bool) -> Result<()> {
        let p = &self.shown;
        // A lazily indexed writer reads through a read-only handle: it opens a writable one
        // for this.
        let writable;
        let target = if index.is_writable() {
            index
        } else {
            // Opening for writing waits while another process writes the index: one that
            // gives way waits only as long as an open takes.
            let options = if wait {
                self.index.options().clone()
            } else {
                let brief = self.index.options().timeout().min(GIVE_WAY_OPEN);
                self.index.options().clone().lock_timeout(brief)
            };
            match options.open_handle(&self.path) {
                Ok(handle) => writable = handle,
                Err(planlog_core::LogError::Operator(OperatorError::Locked { .. })) if !wait => {
                    *self
                        .gave_way
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner) =
                        Some(std::time::Instant::now());
                    return Ok(());
                }
                Err(e) => return Err(e),
            }
            &writable
        };
        // The index's write transaction first: a process that finds another indexing gives
        // way before it pays for a sync.
        let Some(mut feed) = Feed::begin(target, p, wait)? else {
            return Ok(());
        };
        // No index entry without its record: only what is durable in the journal is
        // indexed, and another process's frames may not be synced yet. One sync makes
        // everything this process has read durable; none is needed when this process's
        // last sync (its own appends') began after all of it was written.
        let durable = self.journal.end();
        if feed.position() >= durable {
            // Another process indexed it all already.
            self.forget_snapshot();
            return Ok(());
        }
        self.journal
            .durable_upto(durable)
            .map_err(|e| super::journal_err(p, "syncing the journal", e))?;
        // The tail's records are copied (shared events) so that writers of this process,
        // which need the tail, do not wait for the index; where the tail does not reach
        // back to the index, the journal is read a record at a time.
        let (base, from_tail): (u64, Vec<Entry>) = {
            let tail = self.tail();
            let since = feed.position().max(tail.base());
            let copied = tail.since(since).into_iter().flatten().cloned().collect();
            (tail.base(), copied)
        };
        if feed.position() < base {
            self.journal_between(feed.position(), base, &mut |entry| feed.feed(entry))?;
        }
        for entry in from_tail.iter().filter(|e| e.upto <= durable) {
            feed.feed(entry)?;
        }
        let reached = feed.finish()?;
        self.forget_snapshot();
        self.tail().indexed_to(reached);
        Ok(())
    }
}

/// Index transactions fed the journal's records in order from the index's position: each
/// applies at least [`INDEX_BATCH`] records (a batch's records always in one, however many:
/// fed a record at a time, at most [`APPLY_RUN`] held before they are applied) and records
/// the journal position it reaches. Records the index has already (another process indexed
/// them meanwhile) are passed over.
pub(super) struct Feed<'h> {
    handle: &'h Handle,
    p: &'h str,
    txn: Option<WriteTransaction>,
    /// The index's position: as the transaction found it, then where its records reach.
    position: u64,
    /// The journal position the last record applied is visible at (its batch's end).
    group: Option<u64>,
    /// Records applied in this transaction (held ones included).
    applied: usize,
    /// Records of this transaction read and not yet applied, with where their frames start.
    held: Vec<(u64, Item)>,
}

impl<'h> Feed<'h> {
    /// Begins the first transaction; `None` when `wait` is false and another thread or
    /// process is writing the index.
    pub(super) fn begin(handle: &'h Handle, p: &'h str, wait: bool) -> Result<Option<Self>> {
        let txn = if wait {
            handle.begin_write(p, "indexing")?
        } else {
            match handle.try_begin_write(p, "indexing")? {
                Some(txn) => txn,
                None => return Ok(None),
            }
        };
        let position = index::position_in_write(&txn, p)?;
        Ok(Some(Self {
            handle,
            p,
            txn: Some(txn),
            position,
            group: None,
            applied: 0,
            held: Vec::new(),
        }))
    }

    /// Where the index stands (the position its next record starts from).
    pub(super) fn position(&self) -> u64 {
        self.group.unwrap_or(self.position)
    }

    /// Applies the next record.
    pub(super) fn feed(&mut self, entry: &Entry) -> Result<()> {
        if entry.upto <= self.position {
            return Ok(());
        }
        if let Some(group) = self.group
            && entry.upto != group
            && self.applied >= INDEX_BATCH
        {
            // The records before this one are whole batches: commit them.
            self.commit(group)?;
        }
        let txn = match self.txn.take() {
            Some(txn) => txn,
            None => {
                let txn = self.handle.begin_write(self.p, "indexing")?;
                self.position = index::position_in_write(&txn, self.p)?;
                let indexed = entry.upto <= self.position;
                if indexed {
                    self.txn = Some(txn);
                    return Ok(());
                }
                txn
            }
        };
        let txn = self.txn.insert(txn);
        let item = entry.item.read(entry.at, self.p)?.into_owned();
        self.held.push((entry.at, item));
        if self.held.len() >= APPLY_RUN {
            index::apply_all(txn, &self.held, self.p)?;
            self.held.clear();
        }
        self.applied += 1;
        self.group = Some(entry.upto);
        Ok(())
    }

    fn commit(&mut self, upto: u64) -> Result<()> {
        if let Some(txn) = self.txn.take() {
            index::apply_all(&txn, &self.held, self.p)?;
            self.held.clear();
            index::set_position(&txn, upto, self.p)?;
            txn.commit().map_err(|e| redb_err(self.p, "indexing", e))?;
        }
        self.position = upto;
        self.group = None;
        self.applied = 0;
        Ok(())
    }

    /// Commits what was applied: the position the index reaches (unchanged when nothing
    /// was; the transaction is then dropped, which aborts it).
    pub(super) fn finish(mut self) -> Result<u64> {
        if let Some(group) = self.group {
            self.commit(group)?;
        }
        Ok(self.position)
    }
}

#[derive(Default)]
struct Signal {
    pending: bool,
    stop: bool,
}

/// The indexing thread of a long-lived process.
pub(super) struct Indexer {
    signal: Arc<(Mutex<Signal>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl Indexer {
    /// Starts the thread.
    pub(super) fn start(inner: Arc<Inner>) -> Self {
        let signal = Arc::new((Mutex::new(Signal::default()), Condvar::new()));
        let theirs = Arc::clone(&signal);
        let thread = std::thread::Builder::new()
            .name("planlog-indexer".to_owned())
            .spawn(move || {
                let (lock, wake) = &*theirs;
                loop {
                    let mut s = lock.lock().unwrap_or_else(PoisonError::into_inner);
                    while !s.pending && !s.stop {
                        s = wake.wait(s).unwrap_or_else(PoisonError::into_inner);
                    }
                    // Let writes gather: one index transaction (and its syncs) for many
                    // appends, not one each; a stop ends the wait.
                    let deadline = std::time::Instant::now() + GATHER;
                    while !s.stop {
                        let left = deadline.saturating_duration_since(std::time::Instant::now());
                        if left.is_zero() {
                            break;
                        }
                        s = wake
                            .wait_timeout(s, left)
                            .unwrap_or_else(PoisonError::into_inner)
                            .0;
                    }
                    let stop = s.stop;
                    s.pending = false;
                    drop(s);
                    inner.index_or_warn(stop);
                    // The snapshot the writes' checks kept, let go whatever the round did
                    // (indexed, gave way to another process, failed): it lives no longer
                    // than the round its write woke (`past::snapshot`).
                    inner.forget_snapshot();
                    if stop {
                        break;
                    }
                }
            });
        match thread {
            Ok(thread) => Self {
                signal,
                thread: Some(thread),
            },
            Err(e) => {
                tracing::warn!(error = %e, "could not start the indexing thread; the index is brought up to date when the store is next opened");
                Self {
                    signal,
                    thread: None,
                }
            }
        }
    }

    /// Asks the thread to index what was just written. Only the first write since its last
    /// round wakes it: while a round is pending (the thread gathering writes, or not woken
    /// yet) the round to come indexes this write too, and waking the thread for each append
    /// cost a cross-CPU wake-up per append (`strace`: a ~50 µs `futex` wake after each sync).
    pub(super) fn wake(&self) {
        let lock = &self.signal.0;
        let mut signal = lock.lock().unwrap_or_else(PoisonError::into_inner);
        if !signal.pending {
            signal.pending = true;
            drop(signal);
            // The round to come is recorded; the thread itself may wake once the caller's
            // answer is out (`wake_later`).
            let signal = Arc::clone(&self.signal);
            crate::wake_later::wake(move || signal.1.notify_one());
        }
    }

    /// Indexes what is left, then ends the thread.
    pub(super) fn stop(mut self) {
        let (lock, wake) = &*self.signal;
        lock.lock().unwrap_or_else(PoisonError::into_inner).stop = true;
        wake.notify_one();
        if let Some(thread) = self.thread.take()
            && thread.join().is_err()
        {
            tracing::warn!("the indexing thread panicked; the journal keeps every record");
        }
    }
}
