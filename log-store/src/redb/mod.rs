//! [`RedbLog`]: the durable [`EventLog`] in one redb file.
//!
//! | module | what |
//! |---|---|
//! | `open` | [`OpenOptions`], the read-write or read-only handle, reopening after errors |
//! | `abandoned` | writable opens given up on, waited for at exit ([`settle_abandoned_opens`]) |
//! | `schema` | the tables and the store format |
//! | `tables` | one append's checks and writes; where a session stands |
//! | `packing` | an event's row: its canonical JSON, LZ4-compressed (store format 2) |
//! | `errors` | redb errors and panics as operator errors |

mod abandoned;
pub(crate) mod errors;
mod open;
pub(crate) mod packing;
pub(crate) mod schema;
mod tables;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use planlog_core::events::ids_issued_after;
use planlog_core::{
    CallId, EventLog, LogError, OperatorError, Seq, SessionId, SessionInfo, SessionState,
    UserError,
    events::{Event, Head},
    log::{Appended, Slot},
};
use redb::{ReadTransaction, ReadableTable, WriteTransaction};

use crate::codec::{corrupt, decode_info};
use crate::group_commit::{BatchResults, GroupCommit};
use errors::{Result, guard, redb_err};

use schema::{
    CALLS, DELETED, EVENTS, FORMAT_KEY, HEADS, META, MODE_MARKS, PLAN_MARKS, SESSIONS,
    STORE_FORMAT, TOMBSTONES,
};
use tables::{Tables, open_events, open_plan_marks, slot_in};

pub use crate::group_commit::CommitStats;
pub use abandoned::settle_abandoned_opens;
pub use open::OpenOptions;
pub(crate) use open::{Handle, create_private_dir};
pub use schema::STORE_FORMAT as REDB_STORE_FORMAT;

/// A durable event log: one redb file holding the catalogue and every session's events.
///
/// The file is opened in redb's multi-writer mode, so several processes (an agent appending,
/// the CLI reading or forking, several MCP servers) can have it open at once; redb serialises
/// their write transactions. Every append is committed with `Durability::Immediate` before
/// it returns; concurrent appends share commits ([`CommitStats`]).
///
/// After a storage error (a full disk, a file-size limit) redb refuses every later operation
/// on the same handle ("previous I/O error"); `RedbLog` then opens the file again on its next
/// operation, so a transient failure costs only the operations made while it lasted.
///
/// Every method blocks the calling thread on file IO (an append waits for its fsync; opening
/// may wait up to the lock timeout). From async code, call it through
/// `spawn_blocking`, or drive a session through [`AsyncPlanSession`](crate::host::AsyncPlanSession).
pub struct RedbLog {
    db: RwLock<Arc<Handle>>,
    /// Set after a storage error: the next operation reopens the file first.
    reopen: AtomicBool,
    path: PathBuf,
    options: OpenOptions,
    /// Appends waiting for a commit: each event with its canonical bytes, checked and
    /// encoded by the appending thread before it queued.
    commits: GroupCommit<(Event, Vec<u8>), Result<Appended>>,
    /// Nanoseconds group-commit leaders spent writing rows, and committing.
    writing_ns: AtomicU64,
    committing_ns: AtomicU64,
}

impl std::fmt::Debug for RedbLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedbLog")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl RedbLog {
    /// Opens (creating if needed, with its folder) the store at `path` with default options.
    /// Blocks while another program holds the file exclusively, up to 5 s.
    ///
    /// # Errors
    /// As [`OpenOptions::open`].
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::options().open(path)
    }

    /// Options to open a store with: `RedbLog::options().read_only(true).open(path)`.
    pub fn options() -> OpenOptions {
        OpenOptions::default()
    }

    fn from_handle(handle: Handle, path: PathBuf, options: OpenOptions) -> Result<Self> {
        let log = Self {
            db: RwLock::new(Arc::new(handle)),
            reopen: AtomicBool::new(false),
            path,
            options,
            commits: GroupCommit::default(),
            writing_ns: AtomicU64::new(0),
            committing_ns: AtomicU64::new(0),
        };
        log.init_schema()?;
        Ok(log)
    }

    /// The store file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// True when opened for reading only.
    pub fn is_read_only(&self) -> bool {
        self.options.is_read_only()
    }

    /// Commit counters since this handle was opened.
    pub fn commit_stats(&self) -> CommitStats {
        let nanos = |n: &AtomicU64| std::time::Duration::from_nanos(n.load(Ordering::Relaxed));
        CommitStats {
            writing: nanos(&self.writing_ns),
            committing: nanos(&self.committing_ns),
            ..self.commits.stats()
        }
    }

    fn shown(&self) -> String {
        self.path.display().to_string()
    }

    /// Runs `f` on the database (reopened first after a storage error), turning a panic
    /// inside redb into an error, and marking the handle for reopening when `f` fails with a
    /// storage error.
    fn run<T>(&self, f: impl FnOnce(&Handle) -> Result<T>) -> Result<T> {
        let p = self.shown();
        let db = self.database()?;
        let result = guard(&p, || f(&db));
        if let Err(LogError::Operator(OperatorError::Io { .. } | OperatorError::Corrupt { .. })) =
            &result
        {
            self.reopen.store(true, Ordering::SeqCst);
        }
        result
    }

    /// The open database; after a storage error, a freshly opened one.
    fn database(&self) -> Result<Arc<Handle>> {
        if self.reopen.load(Ordering::SeqCst) {
            let mut slot = self.db.write().unwrap_or_else(PoisonError::into_inner);
            if self.reopen.load(Ordering::SeqCst) {
                let fresh = self.options.handle(&self.path)?;
                tracing::info!(store = %self.path.display(), "reopened the store after a storage error");
                *slot = Arc::new(fresh);
                self.reopen.store(false, Ordering::SeqCst);
            }
            return Ok(Arc::clone(&slot));
        }
        // The lock only guards swapping the handle; a panic cannot leave it half-swapped.
        Ok(Arc::clone(
            &self.db.read().unwrap_or_else(PoisonError::into_inner),
        ))
    }

    /// Checks (and on first use writes) the store format; upgrades older layouts.
    fn init_schema(&self) -> Result<()> {
        let p = self.shown();
        let found = self.reading(|txn| match txn.open_table(META) {
            Ok(t) => Ok(t
                .get(FORMAT_KEY)
                .map_err(|e| redb_err(&p, "reading the format", e))?
                .map(|v| v.value())),
            Err(redb::TableError::TableDoesNotExist(_)) => Ok(None),
            Err(e) => Err(redb_err(&p, "reading the format", e)),
        })?;
        if found.is_none() && self.is_journal_index()? {
            return Err(OperatorError::NotAStore {
                path: p,
                detail: "the index of a journaled store: open it with JournaledLog".to_owned(),
            }
            .into());
        }
        match found {
            Some(STORE_FORMAT) => Ok(()),
            Some(newer) if newer > STORE_FORMAT => Err(OperatorError::NewerFormat {
                path: p,
                found: newer,
                supported: STORE_FORMAT,
            }
            .into()),
            // Format 1 rows (plain JSON) read as they are under format 2: the upgrade only
            // records that rows written from now on may be compressed. A read-only handle
            // writes nothing and reads format 1 as it is.
            Some(1) if self.is_read_only() => Ok(()),
            Some(1) => self.write(
                |txn| {
                    let mut meta = txn.open_table(META)?;
                    if meta
                        .get(FORMAT_KEY)?
                        .is_some_and(|v| v.value() < STORE_FORMAT)
                    {
                        meta.insert(FORMAT_KEY, STORE_FORMAT)?;
                    }
                    Ok(())
                },
                "upgrading the store format",
            ),
            // Older layouts upgrade here, oldest first. Format 1 is the first one.
            Some(older) => Err(OperatorError::OlderFormat {
                path: p,
                found: format!("planlog store format {older}"),
            }
            .into()),
            None if self.is_read_only() => Err(OperatorError::NotAStore {
                path: p,
                detail: "a redb file without planlog's tables".to_owned(),
            }
            .into()),
            None => self.write(
                |txn| {
                    let mut meta = txn.open_table(META)?;
                    if meta.get(FORMAT_KEY)?.is_none() {
                        meta.insert(FORMAT_KEY, STORE_FORMAT)?;
                    }
                    drop(meta);
                    // Creates every table, so readers never meet a missing one.
                    drop(Tables::open(txn)?);
                    Ok(())
                },
                "initialising the store",
            ),
        }
    }

    /// Whether the file is a journaled store's index (its `meta` has an index format).
    fn is_journal_index(&self) -> Result<bool> {
        let p = self.shown();
        self.reading(|txn| match txn.open_table(META) {
            Ok(t) => Ok(t
                .get(crate::journaled::INDEX_FORMAT_KEY)
                .map_err(|e| redb_err(&p, "reading the format", e))?
                .is_some()),
            Err(redb::TableError::TableDoesNotExist(_)) => Ok(false),
            Err(e) => Err(redb_err(&p, "reading the format", e)),
        })
    }

    /// Runs `f` in one durable write transaction.
    fn write<T>(
        &self,
        f: impl FnOnce(&WriteTransaction) -> std::result::Result<T, redb::Error>,
        action: &str,
    ) -> Result<T> {
        let p = self.shown();
        self.run(|db| {
            let txn = db.begin_write(&p, action)?;
            let out = f(&txn).map_err(|e| redb_err(&p, action, e))?;
            txn.commit().map_err(|e| redb_err(&p, action, e))?;
            Ok(out)
        })
    }

    /// Runs `f` in one read transaction.
    fn reading<T>(&self, f: impl FnOnce(&ReadTransaction) -> Result<T>) -> Result<T> {
        let p = self.shown();
        self.run(|db| f(&db.begin_read(&p, "starting a read")?))
    }

    /// Writes one batch of appends in one transaction (the group-commit leader's work).
    fn commit_batch(&self, batch: Vec<(u64, (Event, Vec<u8>))>) -> BatchResults<Result<Appended>> {
        let p = self.shown();
        let tickets: Vec<u64> = batch.iter().map(|(t, _)| *t).collect();
        let outcome = self.run(|db| {
            let txn = db.begin_write(&p, "appending")?;
            let started = std::time::Instant::now();
            let mut results = Vec::with_capacity(batch.len());
            {
                let mut tables = Tables::open(&txn).map_err(|e| redb_err(&p, "appending", e))?;
                for (ticket, (event, row)) in batch {
                    let r = tables.append_packed(&event, &row, &p);
                    if let Err(LogError::Operator(e)) = r {
                        // A storage failure dooms the transaction: nothing of the batch is kept.
                        return Err(LogError::Operator(e));
                    }
                    results.push((ticket, r));
                }
            }
            let written = std::time::Instant::now();
            txn.commit()
                .map_err(|e| redb_err(&p, "committing appends", e))?;
            let elapsed = |from: std::time::Instant, to: std::time::Instant| {
                u64::try_from(to.duration_since(from).as_nanos()).unwrap_or(u64::MAX)
            };
            let done = std::time::Instant::now();
            self.writing_ns
                .fetch_add(elapsed(started, written), Ordering::Relaxed);
            self.committing_ns
                .fetch_add(elapsed(written, done), Ordering::Relaxed);
            Ok(results)
        });
        match outcome {
            Ok(results) => results,
            Err(e) => tickets.into_iter().map(|t| (t, Err(e.clone()))).collect(),
        }
    }

    fn decode(&self, session: &SessionId, seq: u64, row: &[u8]) -> Result<Event> {
        packing::decode_row(&self.shown(), session, seq, row)
    }

    fn info_in(&self, txn: &ReadTransaction, session: &SessionId) -> Result<Option<SessionInfo>> {
        let p = self.shown();
        let table = match txn.open_table(SESSIONS) {
            Ok(t) => t,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(None),
            Err(e) => return Err(redb_err(&p, "reading the catalogue", e)),
        };
        let Some(bytes) = table
            .get(session.as_str())
            .map_err(|e| redb_err(&p, "reading the catalogue", e))?
        else {
            return Ok(None);
        };
        decode_info(&p, session.as_str(), bytes.value()).map(Some)
    }

    fn last_seq_in(&self, txn: &ReadTransaction, session: &SessionId) -> Result<Option<u64>> {
        let p = self.shown();
        let events = txn
            .open_table(EVENTS)
            .map_err(|e| redb_err(&p, "reading events", e))?;
        let mut range = events
            .range((session.as_str(), 0)..=(session.as_str(), u64::MAX))
            .map_err(|e| redb_err(&p, "reading events", e))?;
        match range.next_back() {
            Some(entry) => Ok(Some(
                entry
                    .map_err(|e| redb_err(&p, "reading events", e))?
                    .0
                    .value()
                    .1,
            )),
            None => Ok(None),
        }
    }

    fn event_in(
        &self,
        txn: &ReadTransaction,
        session: &SessionId,
        seq: u64,
    ) -> Result<Option<Event>> {
        let p = self.shown();
        let events = txn
            .open_table(EVENTS)
            .map_err(|e| redb_err(&p, "reading events", e))?;
        let got = events
            .get((session.as_str(), seq))
            .map_err(|e| redb_err(&p, "reading events", e))?;
        got.map(|bytes| self.decode(session, seq, bytes.value()))
            .transpose()
    }
}

impl EventLog for RedbLog {
    fn append(&self, event: &Event) -> Result<Appended> {
        let p = self.shown();
        // The content checks and the encoding run here, in parallel across appending
        // threads, not in the leader's write transaction.
        let row = packing::pack(&planlog_core::log::check_encoded(event)?);
        let missing = || {
            Err(OperatorError::Io {
                path: p.clone(),
                action: "group commit".to_owned(),
                source: planlog_core::StorageError::message(
                    "the commit returned no result for this append",
                ),
            }
            .into())
        };
        self.commits.submit((event.clone(), row), missing, |batch| {
            self.commit_batch(batch)
        })
    }

    fn append_all(&self, events: &[Event]) -> Result<Vec<Appended>> {
        let p = self.shown();
        self.run(|db| {
            let txn = db.begin_write(&p, "appending")?;
            let results = {
                let mut tables = Tables::open(&txn).map_err(|e| redb_err(&p, "appending", e))?;
                events
                    .iter()
                    .map(|e| tables.append(e, &p))
                    .collect::<Result<Vec<_>>>()
            };
            match results {
                Ok(results) => {
                    txn.commit()
                        .map_err(|e| redb_err(&p, "committing appends", e))?;
                    Ok(results)
                }
                Err(e) => {
                    // Dropping the transaction aborts it: nothing of the batch is kept.
                    drop(txn);
                    Err(e)
                }
            }
        })
    }

    fn append_iter(&self, events: &mut dyn Iterator<Item = Result<Event>>) -> Result<u64> {
        let p = self.shown();
        self.run(|db| {
            let txn = db.begin_write(&p, "appending")?;
            let stored = {
                let mut tables = Tables::open(&txn).map_err(|e| redb_err(&p, "appending", e))?;
                let mut stored = 0u64;
                let mut outcome = Ok(());
                for event in events {
                    let appended = event.and_then(|e| tables.append(&e, &p));
                    match appended {
                        Ok(Appended::Stored(_)) => stored += 1,
                        Ok(Appended::Duplicate(e)) => {
                            outcome = Err(planlog_core::log::repeated_in_stream(&e));
                            break;
                        }
                        Err(e) => {
                            outcome = Err(e);
                            break;
                        }
                    }
                }
                outcome.map(|()| stored)
            };
            match stored {
                Ok(stored) => {
                    txn.commit()
                        .map_err(|e| redb_err(&p, "committing appends", e))?;
                    Ok(stored)
                }
                // Dropping the transaction aborts it: nothing of the batch is kept.
                Err(e) => Err(e),
            }
        })
    }

    fn find_call(&self, session: &SessionId, call: &CallId) -> Result<Option<Seq>> {
        let p = self.shown();
        self.reading(|txn| {
            let calls = txn
                .open_table(CALLS)
                .map_err(|e| redb_err(&p, "reading call ids", e))?;
            let found = calls
                .get((session.as_str(), call.as_str()))
                .map_err(|e| redb_err(&p, "reading call ids", e))?;
            Ok(found.and_then(|seq| Seq::new(seq.value()).ok()))
        })
    }

    fn read(&self, session: &SessionId, from: Seq, to: Option<Seq>) -> Result<Vec<Event>> {
        let p = self.shown();
        self.reading(|txn| {
            if self.info_in(txn, session)?.is_none() {
                return Err(UserError::UnknownSession(session.clone()).into());
            }
            let end = to.map_or(u64::MAX, Seq::get);
            if end < from.get() {
                return Ok(Vec::new());
            }
            let events = txn
                .open_table(EVENTS)
                .map_err(|e| redb_err(&p, "reading events", e))?;
            let range = events
                .range((session.as_str(), from.get())..=(session.as_str(), end))
                .map_err(|e| redb_err(&p, "reading events", e))?;
            let mut out = Vec::new();
            for entry in range {
                let (key, bytes) = entry.map_err(|e| redb_err(&p, "reading events", e))?;
                out.push(self.decode(session, key.value().1, bytes.value())?);
            }
            Ok(out)
        })
    }

    fn last(&self, session: &SessionId) -> Result<Option<Event>> {
        self.reading(|txn| match self.last_seq_in(txn, session)? {
            Some(seq) => self.event_in(txn, session, seq),
            None => Ok(None),
        })
    }

    fn head(&self, session: &SessionId) -> Result<Option<Head>> {
        let p = self.shown();
        self.reading(|txn| match slot_in(txn, session, &p)? {
            Slot::Free => Ok(None),
            Slot::Live(head) => Ok(Some(head)),
            Slot::Retired { .. } => Err(UserError::SessionDeleted(session.clone()).into()),
        })
    }

    fn session(&self, session: &SessionId) -> Result<Option<SessionInfo>> {
        self.reading(|txn| self.info_in(txn, session))
    }

    fn sessions(&self) -> Result<Vec<SessionInfo>> {
        let p = self.shown();
        self.reading(|txn| {
            let table = txn
                .open_table(SESSIONS)
                .map_err(|e| redb_err(&p, "reading the catalogue", e))?;
            let mut out = Vec::new();
            for entry in table
                .iter()
                .map_err(|e| redb_err(&p, "reading the catalogue", e))?
            {
                let (key, bytes) = entry.map_err(|e| redb_err(&p, "reading the catalogue", e))?;
                out.push(decode_info(&p, key.value(), bytes.value())?);
            }
            Ok(out)
        })
    }

    fn delete(&self, session: &SessionId) -> Result<()> {
        let p = self.shown();
        let id = session.as_str();
        let existed = self.write(
            |txn| {
                let mut sessions = txn.open_table(SESSIONS)?;
                let existed = sessions.remove(id)?.is_some();
                if existed {
                    // The tombstone keeps the first event's hash: only the same session,
                    // restored from its export, may take the id again.
                    let first = open_events(txn)?.get((id, 1))?.map(|row| {
                        packing::decode_row(&p, session, 1, row.value()).map(|e| *e.hash.as_bytes())
                    });
                    if let Some(Ok(first)) = first {
                        txn.open_table(TOMBSTONES)?.insert(id, first)?;
                    }
                    let range = (id, 0)..=(id, u64::MAX);
                    open_events(txn)?.retain_in(range.clone(), |_, _| false)?;
                    open_plan_marks(txn)?.retain_in(range.clone(), |_, _| false)?;
                    txn.open_table(MODE_MARKS)?.retain_in(range, |_, _| false)?;
                    txn.open_table(CALLS)?
                        .retain_in((id, "")..(id, "\u{10FFFF}\u{10FFFF}"), |_, _| false)?;
                    txn.open_table(HEADS)?.remove(id)?;
                    txn.open_table(DELETED)?.insert(id, 0)?;
                }
                Ok(existed)
            },
            "deleting a session",
        )?;
        if existed {
            tracing::info!(session = %session, store = %p, "session deleted");
            Ok(())
        } else {
            Err(UserError::UnknownSession(session.clone()).into())
        }
    }

    fn read_checks_hashes(&self) -> bool {
        // Every event read goes through `Event::decode`, which refuses a hash mismatch.
        true
    }

    fn state_index(
        &self,
        session: &SessionId,
        from: Seq,
        to: Seq,
    ) -> Result<Option<Vec<planlog_core::IndexEntry>>> {
        let p = self.shown();
        self.reading(|txn| {
            let Some(last) = self.last_seq_in(txn, session)? else {
                return Err(UserError::UnknownSession(session.clone()).into());
            };
            let to = Seq::new(to.get().min(last)).unwrap_or(to);
            if from > to {
                return Ok(Some(Vec::new()));
            }
            let id = session.as_str();
            const DOING: &str = "reading the state index";
            let plans = txn
                .open_table(PLAN_MARKS)
                .map_err(|x| redb_err(&p, DOING, x))?;
            let modes = txn
                .open_table(MODE_MARKS)
                .map_err(|x| redb_err(&p, DOING, x))?;
            let plan_before = match plans
                .range((id, 1)..=(id, from.get()))
                .map_err(|x| redb_err(&p, DOING, x))?
                .next_back()
            {
                Some(entry) => {
                    Seq::new(entry.map_err(|x| redb_err(&p, DOING, x))?.0.value().1).ok()
                }
                None => None,
            };
            let mode_before = match modes
                .range((id, 1)..=(id, from.get()))
                .map_err(|x| redb_err(&p, DOING, x))?
                .next_back()
            {
                Some(entry) => entry.map_err(|x| redb_err(&p, DOING, x))?.1.value(),
                None => false,
            };
            let after = (id, from.get() + 1)..=(id, to.get());
            let mut plan_marks = Vec::new();
            for entry in plans
                .range(after.clone())
                .map_err(|x| redb_err(&p, DOING, x))?
            {
                if let Ok(seq) = Seq::new(entry.map_err(|x| redb_err(&p, DOING, x))?.0.value().1) {
                    plan_marks.push(seq);
                }
            }
            let mut mode_marks = Vec::new();
            for entry in modes.range(after).map_err(|x| redb_err(&p, DOING, x))? {
                let entry = entry.map_err(|x| redb_err(&p, DOING, x))?;
                if let Ok(seq) = Seq::new(entry.0.value().1) {
                    mode_marks.push((seq, entry.1.value()));
                }
            }
            Ok(Some(planlog_core::index_entries(
                from,
                to,
                plan_before,
                mode_before,
                plan_marks,
                mode_marks,
            )))
        })
    }

    fn state_at(&self, session: &SessionId, at: Seq) -> Result<SessionState> {
        let p = self.shown();
        self.reading(|txn| {
            let Some(last) = self.last_seq_in(txn, session)? else {
                return Err(UserError::UnknownSession(session.clone()).into());
            };
            if at.get() > last {
                return Err(UserError::SeqOutOfRange {
                    session: session.clone(),
                    seq: at.get(),
                    last,
                }
                .into());
            }
            let id = session.as_str();
            let marks = txn
                .open_table(PLAN_MARKS)
                .map_err(|e| redb_err(&p, "reading state", e))?;
            let plan_seq = match marks
                .range((id, 1)..=(id, at.get()))
                .map_err(|e| redb_err(&p, "reading state", e))?
                .next_back()
            {
                Some(entry) => {
                    entry
                        .map_err(|e| redb_err(&p, "reading state", e))?
                        .0
                        .value()
                        .1
                }
                None => {
                    return Err(corrupt(
                        &p,
                        session,
                        at.get(),
                        "no plan-carrying event at or before this seq".into(),
                    ));
                }
            };
            let modes = txn
                .open_table(MODE_MARKS)
                .map_err(|e| redb_err(&p, "reading state", e))?;
            let plan_mode = match modes
                .range((id, 1)..=(id, at.get()))
                .map_err(|e| redb_err(&p, "reading state", e))?
                .next_back()
            {
                Some(entry) => entry
                    .map_err(|e| redb_err(&p, "reading state", e))?
                    .1
                    .value(),
                None => false,
            };
            let event = self.event_in(txn, session, plan_seq)?.ok_or_else(|| {
                corrupt(
                    &p,
                    session,
                    plan_seq,
                    "a plan mark points at a missing event".into(),
                )
            })?;
            let plan = event.plan().cloned().ok_or_else(|| {
                corrupt(
                    &p,
                    session,
                    plan_seq,
                    "a plan mark points at an event without a plan".into(),
                )
            })?;
            Ok(SessionState {
                plan,
                plan_mode,
                ids_issued: ids_issued_after(&event.body),
            })
        })
    }
}
