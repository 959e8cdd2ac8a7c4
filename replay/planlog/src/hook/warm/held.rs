//! The store's handle a warm server keeps between calls.
//!
//! A hook's own process opens the store for its one call: redb's header and page cache, the
//! journal's frames past the index read and decoded. A server that kept nothing would do
//! the same for every call. It keeps the handle instead, as `planlog mcp` keeps its own: a
//! handle reads what other processes appended since (the journal past what it has seen,
//! under the journal's lock), so it is as current as a fresh one.
//!
//! What a handle cannot see is its files changing under it: the store deleted (and perhaps
//! made again), an index rebuilt into a new file, a backup copied over it. So each call
//! first compares the files' identities (device and inode of the index and the journal)
//! with those the handle was opened on, and the journal's length with the last one seen
//! (it only grows, but for a torn tail cut or a file copied over it), and opens again when
//! the files differ or the journal is shorter. A call on files that do not exist yet (the
//! first call of a store) does not keep its handle.
//!
//! A kept handle is let go after [`HOLD`] without a call: an open handle holds the store's
//! users lock (`planlog compact` waits for no one else to have the store open, and asks the
//! server to let go first: [`super::let_go`]) and, while fewer than 16 records lie past it,
//! one index snapshot (redb cannot reuse the pages later index commits free while it is
//! held).

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use planlog_agents::hook::Deadline;
use planlog_core::{EventLog, LogError};
use planlog_store::{Indexing, JournaledLog};

use crate::support::open::Store;

/// A file's identity: its device and inode.
type Identity = (u64, u64);

/// A store's files as a call finds them.
#[derive(Debug, Clone, Copy)]
struct Files {
    index: Identity,
    journal: Identity,
    /// The journal's length.
    length: u64,
}

impl Files {
    /// The store's files; `None` while one of them does not exist.
    fn of(store: &Path) -> Option<Self> {
        let index = std::fs::metadata(store).ok()?;
        let journal = std::fs::metadata(planlog_store::journal_path(store)).ok()?;
        Some(Self {
            index: (index.dev(), index.ino()),
            journal: (journal.dev(), journal.ino()),
            length: journal.len(),
        })
    }

    /// Whether a handle opened on `then` still reads these files.
    fn still(&self, then: &Files) -> bool {
        self.index == then.index && self.journal == then.journal && self.length >= then.length
    }
}

/// How long a kept handle outlives the last call that used it.
pub(super) const HOLD: Duration = Duration::from_secs(60);

/// A kept handle, the files it last read, and when a call last took it.
struct Kept {
    files: Files,
    log: Arc<JournaledLog>,
    used: Instant,
}

/// The kept handle, if any.
#[derive(Default)]
pub(super) struct Held {
    slot: Mutex<Option<Kept>>,
}

impl Held {
    /// The store's handle: the kept one when its files are still the store's, else one
    /// opened now as a hook's process opens it ([`crate::hook::open_file`]) but indexed
    /// after the calls' answers ([`Held::index_when_behind`]), kept for the next calls when
    /// the files exist.
    pub(super) fn open(
        &self,
        store: &Store,
        deadline: &Deadline,
    ) -> Result<Arc<dyn EventLog>, LogError> {
        let now = Files::of(&store.path);
        {
            let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
            if let (Some(now), Some(kept)) = (now, slot.as_mut())
                && now.still(&kept.files)
            {
                kept.files = now;
                kept.used = Instant::now();
                return Ok(Arc::clone(&kept.log) as Arc<dyn EventLog>);
            }
        }
        let log = crate::hook::open_file(store, deadline, Indexing::Deferred).map(Arc::new);
        let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
        // Taken before the open: files replaced meanwhile are found out by the next call.
        *slot = match (&log, now) {
            (Ok(log), Some(files)) => Some(Kept {
                files,
                log: Arc::clone(log),
                used: Instant::now(),
            }),
            _ => None,
        };
        log.map(|log| log as Arc<dyn EventLog>)
    }

    /// Brings the index up to date when enough records wait past it
    /// ([`JournaledLog::index_when_behind`]): called after a call's answer, so that the
    /// catch-up's syncs (every 16th call, ~2.6 ms) are off the agent's path.
    pub(super) fn index_when_behind(&self) {
        let kept = self
            .slot
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .map(|kept| Arc::clone(&kept.log));
        if let Some(log) = kept {
            log.index_when_behind();
        }
    }

    /// Lets the kept handle go when no call has taken it for [`HOLD`] by `now`.
    pub(super) fn close_if_unused(&self, now: Instant) {
        let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
        if slot
            .as_ref()
            .is_some_and(|kept| now.saturating_duration_since(kept.used) >= HOLD)
        {
            let kept = slot.take();
            drop(slot);
            drop(kept);
        }
    }

    /// Lets the kept handle go (the server ends, or `planlog compact` asks): the store's
    /// files are closed once the calls running with it end.
    pub(super) fn close(&self) {
        let kept = self
            .slot
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        drop(kept);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code
    use std::sync::Arc;

    use planlog_core::EventLog;
    use planlog_core::testkit::{seed, sid};

    use super::*;

    /// A store with a session on disk, and a kept handle of it taken by one call.
    fn taken(dir: &Path) -> (Held, std::sync::Weak<dyn EventLog>) {
        let path = dir.join("planlog.redb");
        {
            let log = JournaledLog::open(&path).unwrap();
            seed(&log, &sid("01JGAAAAAAAAAAAAAAAAAAAAAA"), 2);
        }
        let held = Held::default();
        let store = Store::file(path, true);
        let log = held.open(&store, &Deadline::none()).unwrap();
        let weak = Arc::downgrade(&log);
        drop(log);
        (held, weak)
    }

    #[test]
    fn a_kept_handle_outlives_its_call_and_is_let_go_after_its_hold() {
        let dir = tempfile::tempdir().unwrap();
        let (held, weak) = taken(dir.path());
        let taken_at = Instant::now();
        // Kept between calls, up to its hold.
        held.close_if_unused(taken_at);
        held.close_if_unused(taken_at + HOLD - Duration::from_secs(1));
        assert!(weak.upgrade().is_some(), "let go before its hold");
        // Past it, closed: nothing of it is left to hold the store's files.
        held.close_if_unused(taken_at + HOLD + Duration::from_millis(1));
        assert!(weak.upgrade().is_none(), "still kept past its hold");
    }

    #[test]
    fn a_call_taking_the_handle_starts_its_hold_again() {
        let dir = tempfile::tempdir().unwrap();
        let (held, weak) = taken(dir.path());
        std::thread::sleep(Duration::from_millis(20));
        let store = Store::file(dir.path().join("planlog.redb"), true);
        drop(held.open(&store, &Deadline::none()).unwrap());
        let again = Instant::now();
        // Counted from the second call, not the first.
        held.close_if_unused(again + HOLD - Duration::from_millis(10));
        assert!(
            weak.upgrade().is_some(),
            "the second call's use was not counted"
        );
        held.close_if_unused(again + HOLD + Duration::from_millis(1));
        assert!(weak.upgrade().is_none());
    }
}
