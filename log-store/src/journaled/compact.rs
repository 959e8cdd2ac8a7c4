//! Reclaiming space: the journal rewritten without what no reader can see any more, while no
//! other process has the store open.
//!
//! - **What goes.** A deleted session's records before its last tombstone (the tombstone
//!   stays: the id stays retired), earlier tombstones of the same session, and the frames of
//!   batches never committed. Every other record is copied byte for byte, in order, so every
//!   hash chain, seq and call id reads as before.
//! - **Who may be open meanwhile: nobody.** Every process that opens a journaled store holds a
//!   shared lock on the store's users file (`<journal>.users`) while it is open; compaction
//!   takes it exclusively, and refuses when it cannot. A process that opens the store during a
//!   compaction waits for it (at most its lock wait).
//! - **Crash safety.** The new journal is written beside the old one (`<journal>.compacting`)
//!   and synced, and its index built beside the old index (`<index>.compacting`, reading the
//!   new journal through a link); a failure there (a full disk) removes them and changes
//!   nothing. Then the old index is removed (it locates records by their place in the old
//!   journal), the new journal renamed over the old one, the new index renamed into place,
//!   each folder synced. Killed at any point, the store opens with the old journal or the new
//!   one, whole, with its own index or none (opening builds it from the journal).
//! - **The user's files**: the journal keeps its mode and owner, and a symbolic link to it
//!   stays a link (the file it points to is replaced). A journal or index with other hard
//!   links is refused: replacing it would cut them.

use std::collections::HashMap;
use std::fs::{File, OpenOptions as FileOptions};
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use planlog_core::{LogError, OperatorError, SessionId, StorageError};

use super::{journal_beside, with_suffix};
use crate::journal::{
    FileStorage, Journal, JournalError, Located, Record, lock_within, starts_like_a_journal,
    sync_folder_of,
};
use crate::redb::errors::io;

type Result<T> = std::result::Result<T, LogError>;

/// What a compaction did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Compacted {
    /// The journal file's size before, in bytes (its records and the zeros kept past them).
    pub before: u64,
    /// Its size after.
    pub after: u64,
    /// Records copied.
    pub kept: u64,
    /// Records left out (a deleted session's events, superseded tombstones).
    pub dropped: u64,
    /// Deleted sessions (each keeps one tombstone: its id stays retired).
    pub sessions: usize,
}

/// The users file of the store whose index is at `index`: every open handle holds a shared
/// lock on it, compaction an exclusive one.
pub fn users_path(index: &Path) -> PathBuf {
    users_beside(&super::resolved(index))
}

/// [`users_path`] of an index path already resolved (no look at the file system).
pub(super) fn users_beside(index: &Path) -> PathBuf {
    with_suffix(&journal_beside(index), ".users")
}

/// The shared lock an open handle holds on the users file for its lifetime (`None` for a
/// handle that may only read and finds no users file it can open: it reads a snapshot and
/// writes nothing, so a compaction cannot lose its work). Waits for a compaction at most
/// `wait` (`None`: as long as it takes).
pub(super) fn hold_shared(
    index: &Path,
    read_only: bool,
    wait: Option<Duration>,
) -> Result<Option<File>> {
    let path = users_beside(index);
    let shown = path.display().to_string();
    if !read_only && let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        // A new store: its folder, as the index would make it (owner only).
        crate::redb::create_private_dir(dir)
            .map_err(|e| io(&shown, "creating the store's folder", e))?;
    }
    let opened = FileOptions::new()
        .read(true)
        .write(!read_only)
        .create(!read_only)
        .truncate(false)
        .open(&path);
    let file = match opened {
        Ok(f) => f,
        Err(_) if read_only => return Ok(None),
        Err(e) => return Err(io(&shown, "opening the store's users file", e)),
    };
    match file.try_lock_shared() {
        Ok(()) => return Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => {
            tracing::warn!(store = %index.display(), "the store is being compacted (`planlog compact`); waiting for it to finish");
        }
        Err(std::fs::TryLockError::Error(e)) => {
            return Err(io(&shown, "locking the store's users file", e));
        }
    }
    let started = Instant::now();
    match lock_within(&file, wait, true) {
        Ok(()) => Ok(Some(file)),
        Err(JournalError::Io(e)) if e.kind() == std::io::ErrorKind::WouldBlock => {
            Err(OperatorError::Locked {
                path: shown,
                waited_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            }
            .into())
        }
        Err(e) => Err(super::journal_err(
            &shown,
            "locking the store's users file",
            e,
        )),
    }
}

/// Rewrites the journal of the store whose index is at `index` without the records no reader
/// can see (module docs), then rebuilds the index. Nothing else may have the store open.
///
/// # Errors
/// [`OperatorError::Io`] when another process has the store open (nothing changed), when a
/// file has other hard links, or when the disk refuses (a full disk while writing the new
/// journal leaves the store as it was); [`OperatorError::Corrupt`] for a damaged journal.
pub(super) fn compact(index: &Path) -> Result<Compacted> {
    let shown = index.display().to_string();
    let refuse = |why: String| -> LogError {
        OperatorError::Io {
            path: shown.clone(),
            action: "compacting".to_owned(),
            source: StorageError::message(why),
        }
        .into()
    };
    let users = FileOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(users_beside(index))
        .map_err(|e| io(&shown, "opening the store's users file", e))?;
    match users.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            return Err(refuse(
                "another process has the store open (an agent's MCP server or hook, `planlog ui`, another command): close them and run it again; nothing was changed".to_owned(),
            ));
        }
        Err(std::fs::TryLockError::Error(e)) => {
            return Err(io(&shown, "locking the store's users file", e));
        }
    }
    let link = journal_beside(index);
    // A link to the journal stays a link: the file it names is the one replaced.
    let journal = std::fs::canonicalize(&link).map_err(|e| io(&shown, "finding the journal", e))?;
    let jshown = journal.display().to_string();
    for file in [&journal, &index.to_path_buf()] {
        let links = match std::fs::metadata(file) {
            Ok(m) => m.nlink(),
            // An index lost (or removed by a compaction killed before its end): rebuilt.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && file == index => continue,
            Err(e) => return Err(io(&shown, "reading the store's files", e)),
        };
        if links > 1 {
            return Err(refuse(format!(
                "{} has {links} hard links, which replacing it would cut; copy the store (`planlog copy`) to compact it, or remove the other links",
                file.display()
            )));
        }
    }
    // No writer either (a process of the store's users holds the journal's lock only
    // while it writes; none is open, but the lock is what writers agree on).
    let held = File::open(&journal).map_err(|e| io(&jshown, "opening the journal", e))?;
    held.lock()
        .map_err(|e| io(&jshown, "locking the journal", e))?;
    let journal_err = |action: &str, e: JournalError| super::journal_err(&jshown, action, e);

    // First pass: where each deleted session's last tombstone lies.
    let mut last_tombstone: HashMap<SessionId, u64> = HashMap::new();
    let mut records = 0u64;
    let storage = FileStorage::open(&journal).map_err(|e| io(&jshown, "opening the journal", e))?;
    let (old, _) = Journal::open_with(storage, 0, false, &mut |r: Located| {
        records += 1;
        if Record::is_tombstone(&r.data) {
            let session = Record::session_of(&r.data)
                .map_err(|why| JournalError::Damaged { at: r.at, why })?;
            last_tombstone.insert(session, r.at);
        }
        Ok(())
    })
    .map_err(|e| journal_err("reading the journal", e))?;
    let before = old.allocated();
    drop(old);

    // Second pass: the live records into a new journal beside the old one (same folder,
    // same file system: it is renamed over it), synced every MiB (a frame carries what its
    // writer knew synced, so damage to an earlier frame is told from a torn tail); then its
    // index, built beside the old index, through a link to it. Nothing of the store changes
    // until both are whole and synced.
    let fresh = with_suffix(&journal, ".compacting");
    let new_index = with_suffix(index, ".compacting");
    let temps = [
        fresh.clone(),
        new_index.clone(),
        journal_beside(&new_index),
        users_beside(&new_index),
    ];
    // A compaction killed before its renames left some of them: never read, made again. A
    // file planlog did not write there is left alone, and compaction refuses.
    for (k, temp) in temps.iter().enumerate() {
        let Ok(meta) = std::fs::symlink_metadata(temp) else {
            continue;
        };
        let ours = match k {
            0 => meta.is_file() && head_of(temp).is_some_and(|h| starts_like_a_journal(&h)),
            // redb's magic, or a file redb had not written its header into yet.
            1 => {
                meta.is_file()
                    && head_of(temp)
                        .is_some_and(|h| h.starts_with(b"redb") || h.iter().all(|b| *b == 0))
            }
            2 => meta.is_symlink(),
            _ => meta.is_file() && meta.len() == 0,
        };
        if !ours {
            return Err(refuse(format!(
                "{} is in the way and is not a file planlog wrote; move it and run it again",
                temp.display()
            )));
        }
        std::fs::remove_file(temp).map_err(|e| io(&temp.display().to_string(), "removing", e))?;
    }
    let remove_temps = || {
        for temp in &temps {
            let _ = std::fs::remove_file(temp);
        }
    };
    let (kept, after) = match copy_live(&journal, &fresh, &last_tombstone) {
        Ok(done) => done,
        Err(e) => {
            remove_temps();
            return Err(journal_err("writing the compacted journal", e));
        }
    };
    let built = (|| {
        keep_owner_and_mode(&journal, &fresh).map_err(|e| {
            io(
                &jshown,
                "giving the new journal the old one's owner and mode",
                e,
            )
        })?;
        std::os::unix::fs::symlink(&fresh, journal_beside(&new_index))
            .map_err(|e| io(&shown, "linking the new journal to its new index", e))?;
        drop(
            super::JournaledLog::options()
                .indexing(super::Indexing::Eager)
                .open(&new_index)?,
        );
        if index.exists() {
            keep_owner_and_mode(index, &new_index).map_err(|e| {
                io(
                    &shown,
                    "giving the new index the old one's owner and mode",
                    e,
                )
            })?;
        }
        Ok::<(), LogError>(())
    })();
    if let Err(e) = built {
        remove_temps();
        return Err(e);
    }

    // The switch. The old index goes first (it locates records by their place in the old
    // journal): killed after, the store has a journal, old or new, and no index, which
    // opening rebuilds from it.
    if index.exists() {
        std::fs::remove_file(index).map_err(|e| io(&shown, "removing the old index", e))?;
        sync_folder_of(index).map_err(|e| io(&shown, "syncing the index's folder", e))?;
    }
    std::fs::rename(&fresh, &journal)
        .map_err(|e| io(&jshown, "putting the compacted journal in place", e))?;
    sync_folder_of(&journal).map_err(|e| io(&jshown, "syncing the journal's folder", e))?;
    std::fs::rename(&new_index, index)
        .map_err(|e| io(&shown, "putting the new index in place", e))?;
    sync_folder_of(index).map_err(|e| io(&shown, "syncing the index's folder", e))?;
    remove_temps();
    drop(held);
    drop(users);
    Ok(Compacted {
        before,
        after,
        kept,
        dropped: records - kept,
        sessions: last_tombstone.len(),
    })
}

/// Copies the records of `journal` that `last_tombstone` leaves live into a new journal at
/// `fresh`, synced: how many, and its size.
fn copy_live(
    journal: &Path,
    fresh: &Path,
    last_tombstone: &HashMap<SessionId, u64>,
) -> std::result::Result<(u64, u64), JournalError> {
    const CHUNK: usize = 1 << 20;
    let (mut out_journal, _) = Journal::open(FileStorage::open(fresh)?)?;
    let mut out = Vec::with_capacity(CHUNK + 4096);
    let mut kept = 0u64;
    let read = FileStorage::open_read_only(journal)?;
    Journal::open_with(read, 0, true, &mut |r: Located| {
        // The last tombstone of a session stays (the id stays retired); what came before it
        // is gone, and what came after (the same session restored) stays. Nothing deleted:
        // every record stays, none needs reading.
        let live = last_tombstone.is_empty() || {
            let session = Record::session_of(&r.data)
                .map_err(|why| JournalError::Damaged { at: r.at, why })?;
            last_tombstone.get(&session).is_none_or(|at| r.at >= *at)
        };
        if !live {
            return Ok(());
        }
        out_journal.encode(&[r.data.as_slice()], &mut out);
        kept += 1;
        if out.len() >= CHUNK {
            out_journal.write_encoded(&out)?;
            out_journal.sync()?;
            out.clear();
        }
        Ok(())
    })?;
    out_journal.write_encoded(&out)?;
    out_journal.sync()?;
    out_journal.release_zeros()?;
    Ok((kept, out_journal.allocated()))
}

/// The first bytes of the file at `path` (up to 64 KiB), or `None` when it cannot be read.
fn head_of(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read as _;
    let mut head = Vec::new();
    File::open(path)
        .ok()?
        .take(64 * 1024)
        .read_to_end(&mut head)
        .ok()?;
    Some(head)
}

/// Gives `new` the owner and the permissions of `old`.
fn keep_owner_and_mode(old: &Path, new: &Path) -> std::io::Result<()> {
    let was = std::fs::metadata(old)?;
    let now = std::fs::metadata(new)?;
    if (was.uid(), was.gid()) != (now.uid(), now.gid()) {
        std::os::unix::fs::chown(new, Some(was.uid()), Some(was.gid()))?;
    }
    std::fs::set_permissions(new, was.permissions())?;
    File::open(new)?.sync_all()
}
