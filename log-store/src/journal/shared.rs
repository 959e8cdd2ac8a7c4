//! A journal file shared by the threads of a process and by processes, the way an agent's
//! MCP server, its hooks and the CLI share a store.
//!
//! - **Across processes**: a writer takes an advisory lock on the file (`flock`), reads what
//!   others appended since it last looked ([`Journal::catch_up`], which cuts a frame a dead
//!   writer tore), writes its frames at the end, and lets go. The sync comes after, outside
//!   the lock, so processes' syncs overlap instead of queueing behind the lock.
//! - **Within a process**: group commit. An append joins a queue; the first thread to find
//!   no round under way leads one for the whole queue: one lock, one catch-up, one write of
//!   every queued append's frames, then, with the lock let go, one sync. The others wait for
//!   the round their append was in.
//! - An append returns only after a sync that began after its write ended: acknowledged
//!   appends are durable, and since a sync covers every byte written to the file before it,
//!   the journal's durable part is a prefix.

use std::collections::HashMap;
use std::fs::File;
use std::path::Path;
use std::sync::{Condvar, Mutex, MutexGuard};

use super::{FileStorage, Journal, JournalError, Opened, check_sizes};

/// A journal file shared by threads and processes.
#[derive(Debug)]
pub struct SharedJournal {
    state: Mutex<State>,
    synced: Condvar,
    /// The same file, synced by a leader without holding `state`.
    sync_handle: File,
}

#[derive(Debug)]
struct State {
    journal: Journal<FileStorage>,
    /// Appends waiting for a round: their ticket and records.
    queue: Vec<(u64, Vec<Vec<u8>>)>,
    next_ticket: u64,
    /// A round is under way (its leader may not hold the mutex while it syncs).
    leading: bool,
    /// How each ended round ended, by ticket, until its append takes it.
    done: HashMap<u64, Result<(), JournalError>>,
}

impl SharedJournal {
    /// Opens (or creates) the journal at `path`: its records, a torn tail cut.
    ///
    /// # Errors
    /// [`JournalError::Io`], [`JournalError::Damaged`].
    pub fn open(path: &Path) -> Result<(Self, Opened), JournalError> {
        let storage = FileStorage::open(path)?;
        let sync_handle = storage.file().try_clone()?;
        storage.file().lock()?;
        let opened = Journal::open(storage);
        let (journal, opened) = match opened {
            Ok(o) => o,
            Err(e) => {
                // The lock goes with the file; nothing else to undo.
                return Err(e);
            }
        };
        journal.storage().file().unlock()?;
        Ok((
            Self {
                state: Mutex::new(State {
                    journal,
                    queue: Vec::new(),
                    next_ticket: 0,
                    leading: false,
                    done: HashMap::new(),
                }),
                synced: Condvar::new(),
                sync_handle,
            },
            opened,
        ))
    }

    /// The state; a thread that panicked holding it left nothing half done that a write does
    /// not redo (the lock is the file's, the end is re-read under it).
    fn state(&self) -> MutexGuard<'_, State> {
        self.state
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
        let mut st = self.state();
        let ticket = st.next_ticket;
        st.next_ticket += 1;
        st.queue
            .push((ticket, records.iter().map(|r| r.to_vec()).collect()));
        loop {
            if let Some(result) = st.done.remove(&ticket) {
                return result;
            }
            if st.leading {
                st = self
                    .synced
                    .wait(st)
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                continue;
            }
            // Lead a round for every append queued now.
            st.leading = true;
            let round = std::mem::take(&mut st.queue);
            let written = Self::write_round(&mut st.journal, &round);
            let outcome = match written {
                Ok(end) => {
                    drop(st);
                    let synced = self.sync_handle.sync_data();
                    st = self.state();
                    synced.map(|()| end).map_err(JournalError::from)
                }
                Err(e) => Err(e),
            };
            if let Ok(end) = &outcome {
                st.journal.synced(*end);
            }
            for (t, _) in &round {
                let result = match &outcome {
                    Ok(_) => Ok(()),
                    Err(e) => Err(e.again()),
                };
                st.done.insert(*t, result);
            }
            st.leading = false;
            self.synced.notify_all();
        }
    }

    /// Under the file's lock: what others appended read, then every append of `round` written
    /// in one write. The journal's end after it.
    fn write_round(
        journal: &mut Journal<FileStorage>,
        round: &[(u64, Vec<Vec<u8>>)],
    ) -> Result<u64, JournalError> {
        journal.storage().file().lock()?;
        let result = journal.catch_up().and_then(|_| {
            let mut out = Vec::new();
            for (_, records) in round {
                let refs: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
                journal.encode(&refs, &mut out);
            }
            journal.write_encoded(&out)
        });
        let unlocked = journal.storage().file().unlock();
        result?;
        unlocked?;
        Ok(journal.end())
    }

    /// Reads what other processes appended since this one last looked.
    ///
    /// # Errors
    /// As [`Journal::catch_up`].
    pub fn catch_up(&self) -> Result<Vec<Vec<u8>>, JournalError> {
        let mut st = self.state();
        st.journal.storage().file().lock()?;
        let result = st.journal.catch_up();
        st.journal.storage().file().unlock()?;
        result
    }
}
