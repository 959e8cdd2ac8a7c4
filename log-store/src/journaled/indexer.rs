//! Bringing the index up to date with the journal: [`Inner::index_now`] (any writable
//! process, in batches of [`INDEX_BATCH`] records, each one redb transaction that also
//! records the journal position it reaches), and [`Indexer`], the thread that does it after
//! each write of a long-lived process, off the acknowledgement path.

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;

use planlog_core::OperatorError;

use super::tail::Entry;
use super::{Inner, Result, index};
use crate::redb::Handle;
use crate::redb::errors::redb_err;

/// Most records one index transaction applies.
pub(super) const INDEX_BATCH: usize = 4096;

/// How long the indexing thread lets writes gather before it indexes them.
const GATHER: std::time::Duration = std::time::Duration::from_millis(50);

impl Inner {
    /// The records past journal position `position`: the tail's, and the journal's where the
    /// tail does not reach back so far.
    pub(super) fn past(&self, tail: &super::Tail, position: u64) -> Result<Vec<Entry>> {
        match tail.since(position) {
            Some(past) => Ok(past),
            None => {
                let mut past = self.journal_between(position, tail.base())?;
                past.extend(tail.since(tail.base()).unwrap_or_default());
                Ok(past)
            }
        }
    }

    /// Brings the index up to date with what this process has read of the journal.
    ///
    /// # Errors
    /// Operator errors; [`OperatorError::ReadOnly`] when opened for reading only.
    pub(super) fn index_now(&self) -> Result<()> {
        self.index_up_to_date(true)
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
        let p = &self.shown;
        // No index entry without its record: only what is durable in the journal is
        // indexed, and another process's frames may not be synced yet. One sync makes
        // everything this process has read durable.
        let durable = self.journal.end();
        self.journal
            .sync_upto(durable)
            .map_err(|e| super::journal_err(p, "syncing the journal", e))?;
        // A lazily indexed writer reads through a read-only handle: it opens a writable one
        // for this.
        let writable;
        let target = if self.index.is_writable() {
            &self.index
        } else {
            writable = self.index_options.open_handle(&self.path)?;
            &writable
        };
        loop {
            let (applied, offered, upto) = index_batch(target, p, wait, |position| {
                let tail = self.tail();
                Ok(self
                    .past(&tail, position)?
                    .into_iter()
                    .filter(|e| e.upto <= durable)
                    .collect())
            })?;
            if applied > 0 {
                self.tail().indexed_to(upto);
            }
            if applied == offered {
                return Ok(());
            }
        }
    }
}

/// One index transaction: of the records `pick` gives for the index's position (in journal
/// order, all durable), the first [`INDEX_BATCH`] (a batch's records all together) applied,
/// and the journal position they reach recorded. How many were applied, of how many
/// offered, and that position.
pub(super) fn index_batch(
    handle: &Handle,
    p: &str,
    wait: bool,
    pick: impl FnOnce(u64) -> Result<Vec<Entry>>,
) -> Result<(usize, usize, u64)> {
    let txn = if wait {
        handle.begin_write(p, "indexing")?
    } else {
        match handle.try_begin_write(p, "indexing")? {
            Some(txn) => txn,
            None => return Ok((0, 0, 0)),
        }
    };
    let position = index::position_in_write(&txn, p)?;
    let past = pick(position)?;
    let Some(last) = past.iter().take(INDEX_BATCH).next_back() else {
        // Nothing to index: the transaction is dropped, which aborts it.
        return Ok((0, 0, position));
    };
    let upto = last.upto;
    let mut applied = 0;
    for entry in past.iter().take_while(|e| e.upto <= upto) {
        index::apply(&txn, entry.at, &entry.item, p)?;
        applied += 1;
    }
    index::set_position(&txn, upto, p)?;
    txn.commit().map_err(|e| redb_err(p, "indexing", e))?;
    Ok((applied, past.len(), upto))
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
                    if let Err(e) = inner.index_up_to_date(stop) {
                        tracing::warn!(store = %inner.shown, error = %e, "could not bring the index up to date; the journal keeps every record, and the next write or open tries again");
                    }
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

    /// Asks the thread to index what was just written.
    pub(super) fn wake(&self) {
        let (lock, wake) = &*self.signal;
        lock.lock().unwrap_or_else(PoisonError::into_inner).pending = true;
        wake.notify_one();
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
