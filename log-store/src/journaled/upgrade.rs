//! Upgrading a redb store (store formats 1 and 2, every event in its own `events` table) to
//! a journaled store, in place, on its first read-write open by a command that writes.
//!
//! All in one redb write transaction, so no other writer of the old layout appends
//! meanwhile: every event is read from `events` (each checked against its hash) and written
//! to a new journal as one batch, deleted sessions as tombstones after them; the journal is
//! synced; then, in the same transaction, each event's place goes into `locations`, heads
//! are recorded for every session, `events` is dropped and the file becomes an index at the
//! journal's end. A crash before the commit leaves the old store whole (the next open
//! upgrades again, cutting the journal it had begun); after it, the journaled store. The
//! redb file is changed in place: it keeps its mode, owner and links; the journal is made
//! with the file's mode.

use std::path::Path;

use planlog_core::events::Hash;
use planlog_core::{LogError, OperatorError, SessionId};
use redb::ReadableTable;

use super::index::{INDEX_FORMAT, INDEX_FORMAT_KEY, LOCATIONS, POSITION_KEY};
use super::{Result, journal_beside, journal_err};
use crate::journal::{FileStorage, Journal, tombstone};
use crate::redb::Handle;
use crate::redb::errors::{io, redb_err};
use crate::redb::packing::{decode_row, unpack};
use crate::redb::schema::{DELETED, EVENTS, FORMAT_KEY, HEADS, META, TOMBSTONES};

/// Bytes of the batch written at once.
const WRITE: usize = 1 << 20;

/// The store format of the redb file behind `handle`, when it is a store of the old layout
/// (`None`: a journaled store's index, or a new file).
pub(super) fn legacy_format(handle: &Handle, p: &str) -> Result<Option<u64>> {
    let txn = handle.begin_read(p, "reading the format")?;
    match txn.open_table(META) {
        Ok(t) => Ok(t
            .get(FORMAT_KEY)
            .map_err(|e| redb_err(p, "reading the format", e))?
            .map(|v| v.value())),
        Err(redb::TableError::TableDoesNotExist(_)) => Ok(None),
        Err(e) => Err(redb_err(p, "reading the format", e)),
    }
}

/// Upgrades the store of the old layout at `path` (open as `handle`) to a journaled store.
pub(super) fn upgrade(path: &Path, handle: &Handle) -> Result<()> {
    let p = path.display().to_string();
    let jpath = journal_beside(path);
    let shown_journal = jpath.display().to_string();
    let doing = "upgrading the store";
    let txn = handle.begin_write(&p, doing)?;
    // Another process may have upgraded it while this one waited for the transaction.
    let format = txn
        .open_table(META)
        .map_err(|e| redb_err(&p, doing, e))?
        .get(FORMAT_KEY)
        .map_err(|e| redb_err(&p, doing, e))?
        .map(|v| v.value());
    let Some(format) = format else {
        return Ok(());
    };
    if format > crate::redb::schema::STORE_FORMAT {
        return Err(OperatorError::NewerFormat {
            path: p,
            found: format,
            supported: crate::redb::schema::STORE_FORMAT,
        }
        .into());
    }
    let storage = FileStorage::open(&jpath).map_err(|e| io(&shown_journal, doing, e))?;
    keep_mode(path, &jpath);
    storage
        .file()
        .lock()
        .map_err(|e| io(&shown_journal, doing, e))?;
    // On an error the transaction is dropped, which leaves the old store as it was.
    let end = write_journal(&txn, storage, &p, &shown_journal)?;
    let mut meta = txn.open_table(META).map_err(|e| redb_err(&p, doing, e))?;
    meta.remove(FORMAT_KEY)
        .map_err(|e| redb_err(&p, doing, e))?;
    meta.insert(INDEX_FORMAT_KEY, INDEX_FORMAT)
        .map_err(|e| redb_err(&p, doing, e))?;
    meta.insert(POSITION_KEY, end)
        .map_err(|e| redb_err(&p, doing, e))?;
    drop(meta);
    txn.delete_table(EVENTS)
        .map_err(|e| redb_err(&p, doing, e))?;
    txn.commit().map_err(|e| redb_err(&p, doing, e))?;
    tracing::info!(store = %p, journal = %shown_journal, from = format, "upgraded the store: its events are now a journal, and the redb file its index");
    Ok(())
}

/// Writes every event of the old store, and a tombstone for each deleted session, to a
/// fresh journal as one batch, recording each event's place and each session's head in the
/// transaction; syncs it. The journal's end.
fn write_journal(
    txn: &redb::WriteTransaction,
    storage: FileStorage,
    p: &str,
    shown_journal: &str,
) -> Result<u64> {
    let doing = "upgrading the store";
    let e = |x: redb::Error| redb_err(p, doing, x);
    let je = |x| journal_err(shown_journal, doing, x);
    // What an interrupted upgrade began is cut: the old store is still the record.
    let mut storage = storage;
    crate::journal::Storage::truncate(&mut storage, 0).map_err(|x| io(shown_journal, doing, x))?;
    let (mut journal, _) = Journal::open(storage).map_err(je)?;
    let batch = journal.begin_batch();
    let mut out = Vec::new();
    let mut records = 0u64;
    {
        let events = txn.open_table(EVENTS).map_err(|x| e(x.into()))?;
        let mut locations = txn.open_table(LOCATIONS).map_err(|x| e(x.into()))?;
        let mut heads = txn.open_table(HEADS).map_err(|x| e(x.into()))?;
        for entry in events.iter().map_err(|x| e(x.into()))? {
            let (key, row) = entry.map_err(|x| e(x.into()))?;
            let (s, seq) = key.value();
            let session = SessionId::new(s).map_err(|x| corrupt_key(p, s, &x.to_string()))?;
            let event = decode_row(p, &session, seq, row.value())?;
            let canonical = unpack(row.value()).map_err(|why| corrupt_key(p, s, &why))?;
            let at = journal.end() + out.len() as u64;
            journal.encode_part(batch, &canonical, &mut out);
            locations.insert((s, seq), at).map_err(|x| e(x.into()))?;
            heads
                .insert(s, (seq, *event.hash.as_bytes()))
                .map_err(|x| e(x.into()))?;
            records += 1;
            if out.len() >= WRITE {
                journal.write_encoded(&out).map_err(je)?;
                out.clear();
            }
        }
        let deleted = txn.open_table(DELETED).map_err(|x| e(x.into()))?;
        let tombstones = txn.open_table(TOMBSTONES).map_err(|x| e(x.into()))?;
        for entry in deleted.iter().map_err(|x| e(x.into()))? {
            let (key, _) = entry.map_err(|x| e(x.into()))?;
            let s = key.value();
            let session = SessionId::new(s).map_err(|x| corrupt_key(p, s, &x.to_string()))?;
            let first = tombstones
                .get(s)
                .map_err(|x| e(x.into()))?
                .map(|h| Hash::from_bytes(h.value()));
            journal.encode_part(batch, &tombstone(&session, first), &mut out);
            records += 1;
        }
    }
    if records > 0 {
        journal.encode_commit(batch, &mut out);
    }
    journal.write_encoded(&out).map_err(je)?;
    journal.sync().map_err(je)?;
    // The journal's name must survive a crash too.
    if let Err(x) = crate::journal::sync_folder_of(Path::new(shown_journal)) {
        tracing::warn!(journal = shown_journal, error = %x, "could not sync the store's folder after making its journal");
    }
    Ok(journal.end())
}

fn corrupt_key(p: &str, session: &str, why: &str) -> LogError {
    OperatorError::Corrupt {
        path: p.to_owned(),
        session: None,
        seq: None,
        detail: format!("an event of session {session:?} that cannot be upgraded: {why}"),
    }
    .into()
}

/// Gives the new journal the store file's permissions (a store kept private stays so).
fn keep_mode(store: &Path, journal: &Path) {
    if let Ok(meta) = std::fs::metadata(store)
        && let Err(e) = std::fs::set_permissions(journal, meta.permissions())
    {
        tracing::warn!(journal = %journal.display(), error = %e, "could not give the journal the store's permissions");
    }
}
