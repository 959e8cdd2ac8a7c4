//! A journal file shared by the threads of a process and by processes, the way an agent's
//! MCP server, its hooks and the CLI share a store.
//!
//! - **Across processes**: a writer takes an advisory lock on the file (`flock`), reads what
//!   others appended since it last looked ([`Journal::catch_up`], which cuts a frame a dead
//!   writer tore), writes its frames at the end, and lets go. The sync comes after, outside
//!   the lock, so processes' syncs overlap instead of queueing behind the lock.
//! - **Within a process**: group commit (`crate::group_commit`, as the redb store's). An
//!   append joins a queue; the first thread to find no round under way leads one for the
//!   whole queue: one lock, one catch-up, one write of every queued append's frames, then,
//!   with the lock let go, one sync. Only the round's waiters and the next leader are woken.
//! - An append returns only after a sync that began after its write ended: acknowledged
//!   appends are durable, and since a sync covers every byte written to the file before it,
//!   the journal's durable part is a prefix.

use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use crate::group_commit::{BatchResults, GroupCommit};

use super::lock_wait::LockWaiter;
use super::{FileStorage, Journal, JournalError, Located, Opened, check_sizes};

/// A journal file shared by threads and processes.
pub struct SharedJournal {
    journal: Mutex<Journal<FileStorage>>,
    /// Appends waiting for a round, and the round's leader.
    commits: GroupCommit<Vec<Vec<u8>>, Result<(), JournalError>>,
    /// The same file, synced by a round's leader without holding `journal`.
    sync_handle: File,
    /// How much of the journal a sync of this process has covered: the largest `end` given
    /// to a [`SharedJournal::sync_upto`] that succeeded (0 until one has). Not the journal's
    /// own `durable` (what its frames claim was synced), which starts at what it found at
    /// open, though another process may not have synced those records yet.
    synced: AtomicU64,
    /// The same file again, for reading records without holding `journal`.
    reader: FileStorage,
    /// Waits for another process's lock within its bound (`None`: as long as it takes).
    waiter: Option<LockWaiter>,
}

impl std::fmt::Debug for SharedJournal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedJournal").finish_non_exhaustive()
    }
}

impl SharedJournal {
    /// Opens (or creates) the journal at `path`: its records, a torn tail cut.
    ///
    /// # Errors
    /// [`JournalError::Io`], [`JournalError::Damaged`].
    pub fn open(path: &Path) -> Result<(Self, Opened), JournalError> {
        Self::open_at(path, 0, false)
    }

    /// Opens the journal at `path` reading it from byte `from` (created when missing unless
    /// `read_only`, which passes a torn tail over instead of cutting it).
    ///
    /// # Errors
    /// As [`Journal::open_at`]; `NotFound` read-only without a journal.
    pub fn open_at(
        path: &Path,
        from: u64,
        read_only: bool,
    ) -> Result<(Self, Opened), JournalError> {
        let mut records = Vec::new();
        let (journal, mut opened) = Self::open_with(path, from, read_only, None, &mut |r| {
            records.push(r);
            Ok(())
        })?;
        opened.records = records;
        Ok((journal, opened))
    }

    /// [`SharedJournal::open_at`] giving each committed record to `on` as it is read, under
    /// the journal's lock (no other process writes meanwhile), waiting for that lock at most
    /// `wait` (`None`: as long as it takes), which later writes wait too.
    ///
    /// # Errors
    /// As [`SharedJournal::open_at`], and `on`'s.
    pub fn open_with(
        path: &Path,
        from: u64,
        read_only: bool,
        wait: Option<std::time::Duration>,
        on: &mut dyn FnMut(Located) -> Result<(), JournalError>,
    ) -> Result<(Self, Opened), JournalError> {
        let storage = if read_only {
            FileStorage::open_read_only(path)?
        } else {
            FileStorage::open(path)?
        };
        let sync_handle = storage.file().try_clone()?;
        let reader = FileStorage::from_file(storage.file().try_clone()?);
        let waiter = wait.map(|wait| LockWaiter::new(path, wait));
        lock(storage.file(), waiter.as_ref())?;
        // On an error the lock goes with the file; nothing else to undo.
        let (journal, opened) = Journal::open_with(storage, from, read_only, on)?;
        journal.storage().file().unlock()?;
        Ok((
            Self {
                journal: Mutex::new(journal),
                commits: GroupCommit::default(),
                sync_handle,
                synced: AtomicU64::new(0),
                reader,
                waiter,
            },
            opened,
        ))
    }

    /// The journal; a thread that panicked holding it left nothing half done that a write
    /// does not redo (the lock is the file's, the end is re-read under it).
    fn journal(&self) -> MutexGuard<'_, Journal<FileStorage>> {
        self.journal
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Appends `records` (one, or a batch) and returns once they are durable.
    ///
    /// # Errors
    /// [`JournalError::Io`] (not acknowledged), [`JournalError::Damaged`] (found while reading
    /// what others appended), [`JournalError::TooLarge`].
    pub fn append(&self, records: &[&[u8]]) -> Result<(), JournalError> {
        check_sizes(records)?;
        if records.is_empty() {
            return Ok(());
        }
        let missing = || {
            Err(JournalError::Io(std::io::Error::other(
                "the journal's group commit gave this append no result",
            )))
        };
        self.commits.submit(
            records.iter().map(|r| r.to_vec()).collect(),
            missing,
            |round| self.commit_round(round),
        )
    }

    /// A round's leader: every append of `round` written under the file's lock, then one sync
    /// outside it.
    fn commit_round(
        &self,
        round: Vec<(u64, Vec<Vec<u8>>)>,
    ) -> BatchResults<Result<(), JournalError>> {
        let written = self.locked(
            &mut (),
            |(), _| Ok(()),
            |journal, ()| {
                let mut out = Vec::new();
                for (_, records) in &round {
                    let refs: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
                    journal.encode(&refs, &mut out);
                }
                journal.write_encoded(&out)
            },
        );
        let outcome = written.and_then(|((), end)| self.sync_upto(end));
        round
            .iter()
            .map(|(t, _)| {
                let result = match &outcome {
                    Ok(()) => Ok(()),
                    Err(e) => Err(e.again()),
                };
                (*t, result)
            })
            .collect()
    }

    /// Runs `f` under the file's lock, after giving `state` what other writers appended
    /// since this process last looked (`other`, a record at a time): what `f` writes lands
    /// after it, and no other process writes meanwhile. The journal's end after `f` comes
    /// back with `f`'s answer; nothing `f` wrote is durable before
    /// [`SharedJournal::sync_upto`] that end.
    ///
    /// # Errors
    /// As [`Journal::catch_up`], and `other`'s and `f`'s.
    pub(crate) fn locked<St, T>(
        &self,
        state: &mut St,
        mut other: impl FnMut(&mut St, Located) -> Result<(), JournalError>,
        f: impl FnOnce(&mut Journal<FileStorage>, &mut St) -> Result<T, JournalError>,
    ) -> Result<(T, u64), JournalError> {
        let mut journal = self.journal();
        lock(journal.storage().file(), self.waiter.as_ref())?;
        let result = journal
            .catch_up_with(&mut |r| other(state, r))
            .and_then(|()| f(&mut journal, state));
        let unlocked = journal.storage().file().unlock();
        let out = result?;
        unlocked?;
        Ok((out, journal.end()))
    }

    /// Makes the journal durable up to `end` (at least): one `fdatasync`, without holding
    /// the journal, so other threads' writes go on meanwhile.
    ///
    /// # Errors
    /// [`JournalError::Io`].
    pub(crate) fn sync_upto(&self, end: u64) -> Result<(), JournalError> {
        self.sync_handle.sync_data()?;
        self.journal().synced(end);
        self.synced.fetch_max(end, Ordering::AcqRel);
        Ok(())
    }

    /// [`SharedJournal::sync_upto`] `end`, unless a sync of this process has covered it
    /// already (its own appends' sync covers every byte written before it began): what the
    /// indexer needs before it indexes records up to `end`.
    ///
    /// # Errors
    /// [`JournalError::Io`].
    pub(crate) fn durable_upto(&self, end: u64) -> Result<(), JournalError> {
        if self.synced.load(Ordering::Acquire) >= end {
            return Ok(());
        }
        self.sync_upto(end)
    }

    /// Reads what other processes appended since this one last looked.
    ///
    /// # Errors
    /// As [`Journal::catch_up`].
    pub fn catch_up(&self) -> Result<Vec<Located>, JournalError> {
        let mut others = Vec::new();
        self.locked(
            &mut others,
            |others, r| {
                others.push(r);
                Ok(())
            },
            |_, _| Ok(()),
        )?;
        Ok(others)
    }

    /// The record whose frame starts at `at`.
    ///
    /// # Errors
    /// As [`Journal::read_record`].
    pub fn read_record(&self, at: u64) -> Result<Vec<u8>, JournalError> {
        // A frame once committed is never rewritten: reading it needs neither lock.
        super::read_record_in(&self.reader, at)
    }

    /// The records whose frames start at `ats`, each given to `on` with its index in `ats`
    /// (records close together read in one go); no lock, as for
    /// [`SharedJournal::read_record`].
    ///
    /// # Errors
    /// As [`Journal::read_record`], and `on`'s.
    pub fn read_records(
        &self,
        ats: &[u64],
        on: &mut super::EachRecord<'_>,
    ) -> Result<(), JournalError> {
        super::read_records_in(&self.reader, ats, on)
    }

    /// Reads the committed records between `from` and `to` (frame boundaries this process
    /// has read past), giving each to `on`; frames once committed are never rewritten, so no
    /// lock is taken.
    ///
    /// # Errors
    /// As [`Journal::catch_up`].
    pub fn read_between(
        &self,
        from: u64,
        to: u64,
        on: &mut dyn FnMut(Located) -> Result<(), JournalError>,
    ) -> Result<(), JournalError> {
        super::read_between_in(&self.reader, from, to, on)
    }

    /// Where this process has read the journal to.
    pub fn end(&self) -> u64 {
        self.journal().end()
    }
}

/// Takes the advisory lock on `file`: within `waiter`'s bound, or as long as it takes.
fn lock(file: &File, waiter: Option<&LockWaiter>) -> Result<(), JournalError> {
    match waiter {
        Some(waiter) => waiter.lock(file),
        None => Ok(file.lock()?),
    }
}

/// Takes an advisory lock on `file`, exclusive or `shared`, waiting at most `wait` (`None`:
/// as long as it takes): an error of kind `WouldBlock` when another process held it all
/// that time.
pub(crate) fn lock_within(
    file: &File,
    wait: Option<std::time::Duration>,
    shared: bool,
) -> Result<(), JournalError> {
    let Some(wait) = wait else {
        if shared {
            file.lock_shared()?;
        } else {
            file.lock()?;
        }
        return Ok(());
    };
    let started = std::time::Instant::now();
    let mut pause = std::time::Duration::from_millis(1);
    loop {
        let attempt = if shared {
            file.try_lock_shared()
        } else {
            file.try_lock()
        };
        match attempt {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::WouldBlock) if started.elapsed() < wait => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(std::time::Duration::from_millis(20));
            }
            Err(std::fs::TryLockError::WouldBlock) => return Err(held_for(started)),
            Err(std::fs::TryLockError::Error(e)) => return Err(e.into()),
        }
    }
}

/// The error of a wait for another process's lock that ran out (kind `WouldBlock`).
pub(super) fn held_for(started: std::time::Instant) -> JournalError {
    JournalError::Io(std::io::Error::new(
        std::io::ErrorKind::WouldBlock,
        format!(
            "another process has held the lock for {} ms",
            started.elapsed().as_millis()
        ),
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code

    use super::*;

    /// This process's sync covers its own appends and what it read before them, and
    /// nothing another handle wrote after: a record read since is synced before the indexer
    /// may count it durable.
    #[test]
    fn a_sync_of_this_process_covers_only_what_was_written_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal");
        let (ours, _) = SharedJournal::open(&path).unwrap();
        let (theirs, _) = SharedJournal::open(&path).unwrap();
        assert_eq!(ours.synced.load(Ordering::Acquire), 0);
        // An append's sync covers it (what the indexer then skips syncing again).
        ours.append(&[b"ours"]).unwrap();
        let after_ours = ours.end();
        assert_eq!(ours.synced.load(Ordering::Acquire), after_ours);
        // Another handle (another process) writes a frame and has not synced it yet.
        theirs
            .locked(
                &mut (),
                |(), _| Ok(()),
                |journal, ()| journal.write(&[b"theirs, not synced"]),
            )
            .unwrap();
        let others = ours.catch_up().unwrap();
        assert_eq!(others.len(), 1);
        assert!(ours.end() > after_ours);
        assert_eq!(ours.synced.load(Ordering::Acquire), after_ours);
        // Not covered: synced now.
        ours.durable_upto(ours.end()).unwrap();
        assert_eq!(ours.synced.load(Ordering::Acquire), ours.end());
    }
}
