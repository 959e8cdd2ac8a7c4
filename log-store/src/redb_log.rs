//! [`RedbLog`]: the durable [`EventLog`] in one redb file.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::{Duration, Instant};

use planlog_core::{
    Appended, Event, EventBody, EventLog, Hash, Head, LogError, OperatorError, Seq, SessionId,
    SessionInfo, SessionState, Slot, UserError, check_append,
};
use redb::{
    ConcurrencyMode, Database, DatabaseError, ReadTransaction, ReadableDatabase, ReadableTable,
    Table, WriteTransaction,
};

use crate::codec::{corrupt, decode_event, decode_info, encode_info};
use crate::group_commit::{BatchResults, CommitStats, GroupCommit};
use crate::schema::{
    CALLS, DELETED, EVENTS, FORMAT_KEY, HEADS, META, MODE_MARKS, PLAN_MARKS, SESSIONS,
    STORE_FORMAT, TOMBSTONES,
};

/// How a [`RedbLog`] is opened.
#[derive(Debug, Clone)]
pub struct OpenOptions {
    /// How long to keep retrying while another program holds the file exclusively.
    pub lock_timeout: Duration,
    /// Run redb's full integrity check (reads the whole file) while opening.
    pub check_integrity: bool,
}

impl Default for OpenOptions {
    fn default() -> Self {
        Self {
            lock_timeout: Duration::from_secs(5),
            check_integrity: false,
        }
    }
}

/// A durable event log: one redb file holding the catalogue and every session's events.
///
/// The file is opened in redb's multi-writer mode, so several processes (an agent appending,
/// the CLI reading or forking) can have it open at once; redb serialises their write
/// transactions. Every append is committed with `Durability::Immediate` before it returns;
/// concurrent appends share commits ([`GroupCommit`](crate::CommitStats)).
///
/// After a storage error (a full disk, a file-size limit) redb refuses every later operation
/// on the same handle ("previous I/O error"); `RedbLog` then opens the file again on its next
/// operation, so a transient failure costs only the operations made while it lasted.
pub struct RedbLog {
    db: RwLock<Arc<Database>>,
    /// Set after a storage error: the next operation reopens the file first.
    reopen: AtomicBool,
    path: PathBuf,
    commits: GroupCommit,
}

impl std::fmt::Debug for RedbLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedbLog")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

type Result<T> = std::result::Result<T, LogError>;

impl RedbLog {
    /// Opens (creating if needed, with its folder) the store at `path` with default options.
    ///
    /// # Errors
    /// [`OperatorError::Locked`] when another program holds the file for longer than the lock
    /// timeout; [`OperatorError::NewerFormat`]; [`OperatorError::Corrupt`] when the file is
    /// not a readable store; [`OperatorError::Io`] otherwise.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(path, &OpenOptions::default())
    }

    /// Opens the store at `path` with `options`.
    ///
    /// # Errors
    /// As [`RedbLog::open`].
    pub fn open_with(path: impl AsRef<Path>, options: &OpenOptions) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let shown = path.display().to_string();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            create_private_dir(dir).map_err(|e| io(&shown, "creating the store folder", e))?;
        }
        let started = Instant::now();
        let mut delay = Duration::from_millis(5);
        let db = loop {
            let attempt = open_database(&path, options.check_integrity);
            match attempt {
                Ok(db) => break db,
                Err(LogError::Operator(OperatorError::Locked { .. }))
                    if started.elapsed() < options.lock_timeout =>
                {
                    std::thread::sleep(delay);
                    delay = (delay * 2).min(Duration::from_millis(200));
                }
                Err(LogError::Operator(OperatorError::Locked { path, .. })) => {
                    let waited_ms =
                        u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
                    return Err(OperatorError::Locked { path, waited_ms }.into());
                }
                Err(e) => return Err(e),
            }
        };
        let log = Self {
            db: RwLock::new(Arc::new(db)),
            reopen: AtomicBool::new(false),
            path,
            commits: GroupCommit::default(),
        };
        log.init_schema()?;
        Ok(log)
    }

    /// The store file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Commit counters since this handle was opened.
    pub fn commit_stats(&self) -> CommitStats {
        self.commits.stats()
    }

    fn shown(&self) -> String {
        self.path.display().to_string()
    }

    /// Runs `f` on the database (reopened first after a storage error), turning a panic
    /// inside redb into an error, and marking the handle for reopening when `f` fails with a
    /// storage error.
    fn run<T>(&self, f: impl FnOnce(&Database) -> Result<T>) -> Result<T> {
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
    fn database(&self) -> Result<Arc<Database>> {
        if self.reopen.load(Ordering::SeqCst) {
            let mut slot = self.db.write().unwrap_or_else(PoisonError::into_inner);
            if self.reopen.load(Ordering::SeqCst) {
                let fresh = open_database(&self.path, false)?;
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
        let found = self.run(|db| {
            let txn = db
                .begin_read()
                .map_err(|e| redb_err(&p, "reading the format", e))?;
            match txn.open_table(META) {
                Ok(t) => Ok(t
                    .get(FORMAT_KEY)
                    .map_err(|e| redb_err(&p, "reading the format", e))?
                    .map(|v| v.value())),
                Err(redb::TableError::TableDoesNotExist(_)) => Ok(None),
                Err(e) => Err(redb_err(&p, "reading the format", e)),
            }
        })?;
        match found {
            Some(STORE_FORMAT) => Ok(()),
            Some(newer) if newer > STORE_FORMAT => Err(OperatorError::NewerFormat {
                path: p,
                found: newer,
                supported: STORE_FORMAT,
            }
            .into()),
            // Older layouts upgrade here, oldest first. Format 1 is the first one.
            Some(older) => Err(OperatorError::Corrupt {
                path: p,
                session: None,
                seq: None,
                detail: format!("unknown store format {older}"),
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

    /// Runs `f` in one durable write transaction.
    fn write<T>(
        &self,
        f: impl FnOnce(&WriteTransaction) -> std::result::Result<T, redb::Error>,
        action: &str,
    ) -> Result<T> {
        let p = self.shown();
        self.run(|db| {
            let txn = db.begin_write().map_err(|e| redb_err(&p, action, e))?;
            let out = f(&txn).map_err(|e| redb_err(&p, action, e))?;
            txn.commit().map_err(|e| redb_err(&p, action, e))?;
            Ok(out)
        })
    }

    /// Runs `f` in one read transaction.
    fn reading<T>(&self, f: impl FnOnce(&ReadTransaction) -> Result<T>) -> Result<T> {
        let p = self.shown();
        self.run(|db| {
            let txn = db
                .begin_read()
                .map_err(|e| redb_err(&p, "starting a read", e))?;
            f(&txn)
        })
    }

    /// Writes one batch of appends in one transaction (the group-commit leader's work).
    fn commit_batch(&self, batch: Vec<(u64, Event)>) -> BatchResults {
        let p = self.shown();
        let tickets: Vec<u64> = batch.iter().map(|(t, _)| *t).collect();
        let outcome = self.run(|db| {
            let txn = db.begin_write().map_err(|e| redb_err(&p, "appending", e))?;
            let mut results = Vec::with_capacity(batch.len());
            {
                let mut tables = Tables::open(&txn).map_err(|e| redb_err(&p, "appending", e))?;
                for (ticket, event) in batch {
                    let r = tables.append(&event, &p);
                    if let Err(LogError::Operator(e)) = r {
                        // A storage failure dooms the transaction: nothing of the batch is kept.
                        return Err(LogError::Operator(e));
                    }
                    results.push((ticket, r));
                }
            }
            txn.commit()
                .map_err(|e| redb_err(&p, "committing appends", e))?;
            Ok(results)
        });
        match outcome {
            Ok(results) => results,
            Err(e) => tickets.into_iter().map(|t| (t, Err(e.clone()))).collect(),
        }
    }

    fn decode(&self, session: &SessionId, seq: u64, bytes: &[u8]) -> Result<Event> {
        decode_event(&self.shown(), session, seq, bytes)
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
        self.commits
            .submit(event, &p, |batch| self.commit_batch(batch))
    }

    fn append_all(&self, events: &[Event]) -> Result<Vec<Appended>> {
        let p = self.shown();
        self.run(|db| {
            let txn = db.begin_write().map_err(|e| redb_err(&p, "appending", e))?;
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
                    let first = open_events(txn)?
                        .get((id, 1))?
                        .map(|bytes| Event::decode(bytes.value()).map(|e| *e.hash.as_bytes()));
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
            Ok(SessionState { plan, plan_mode })
        })
    }
}

/// The tables an append touches, open in one write transaction.
struct Tables<'t> {
    events: Table<'t, (&'static str, u64), &'static [u8]>,
    sessions: Table<'t, &'static str, &'static [u8]>,
    calls: Table<'t, (&'static str, &'static str), u64>,
    plan_marks: Table<'t, (&'static str, u64), ()>,
    mode_marks: Table<'t, (&'static str, u64), bool>,
    deleted: Table<'t, &'static str, u64>,
    tombstones: Table<'t, &'static str, [u8; 32]>,
    heads: Table<'t, &'static str, (u64, [u8; 32])>,
}

fn open_events(
    txn: &WriteTransaction,
) -> std::result::Result<Table<'_, (&'static str, u64), &'static [u8]>, redb::TableError> {
    txn.open_table(EVENTS)
}

fn open_plan_marks(
    txn: &WriteTransaction,
) -> std::result::Result<Table<'_, (&'static str, u64), ()>, redb::TableError> {
    txn.open_table(PLAN_MARKS)
}

impl<'t> Tables<'t> {
    fn open(txn: &'t WriteTransaction) -> std::result::Result<Self, redb::TableError> {
        Ok(Self {
            events: open_events(txn)?,
            sessions: txn.open_table(SESSIONS)?,
            calls: txn.open_table(CALLS)?,
            plan_marks: open_plan_marks(txn)?,
            mode_marks: txn.open_table(MODE_MARKS)?,
            deleted: txn.open_table(DELETED)?,
            tombstones: txn.open_table(TOMBSTONES)?,
            heads: txn.open_table(HEADS)?,
        })
    }

    /// Validates and inserts one event. Errors other than `LogError::Operator` leave the
    /// transaction untouched (all checks come before the first insert).
    fn append(&mut self, event: &Event, p: &str) -> Result<Appended> {
        let s = event.session.as_str();
        let e = |action: &str| {
            let action = action.to_owned();
            move |err: redb::StorageError| redb_err(p, &action, err)
        };
        if let Some(call) = &event.call_id
            && let Some(seq) = self
                .calls
                .get((s, call.as_str()))
                .map_err(e("reading call ids"))?
        {
            let seq = seq.value();
            let bytes = self
                .events
                .get((s, seq))
                .map_err(e("reading events"))?
                .ok_or_else(|| {
                    corrupt(
                        p,
                        &event.session,
                        seq,
                        "a call id points at a missing event".into(),
                    )
                })?;
            let recorded = decode_event(p, &event.session, seq, bytes.value())?;
            return Ok(Appended::Duplicate(recorded));
        }
        let slot = slot_from(
            &self.heads,
            &self.events,
            &self.deleted,
            Some(&self.tombstones),
            &event.session,
            p,
        )?;
        check_append(event, slot)?;
        if slot.is_restored_by(event) {
            self.deleted.remove(s).map_err(e("writing deletions"))?;
            self.tombstones.remove(s).map_err(e("writing deletions"))?;
        }
        let last = match slot {
            Slot::Live(head) => Some(head),
            Slot::Free | Slot::Retired { .. } => None,
        };
        let info = match &last {
            None => SessionInfo::from_first(event).ok_or_else(|| LogError::InvalidEvent {
                session: event.session.clone(),
                seq: event.seq.get(),
                reason: "the first event of a session must be session_started".to_owned(),
            })?,
            Some(_) => {
                let bytes = self
                    .sessions
                    .get(s)
                    .map_err(e("reading the catalogue"))?
                    .ok_or_else(|| {
                        corrupt(
                            p,
                            &event.session,
                            event.seq.get(),
                            "events without a catalogue entry".into(),
                        )
                    })?;
                let mut info = decode_info(p, s, bytes.value())?;
                info.observe(event);
                info
            }
        };
        let seq = event.seq.get();
        let info_bytes = encode_info(&info);
        self.events
            .insert((s, seq), event.encode().as_slice())
            .map_err(e("writing the event"))?;
        self.sessions
            .insert(s, info_bytes.as_slice())
            .map_err(e("writing the catalogue"))?;
        self.heads
            .insert(s, (seq, *event.hash.as_bytes()))
            .map_err(e("writing heads"))?;
        if let Some(call) = &event.call_id {
            self.calls
                .insert((s, call.as_str()), seq)
                .map_err(e("writing call ids"))?;
        }
        match &event.body {
            EventBody::SessionStarted(start) => {
                self.plan_marks
                    .insert((s, seq), ())
                    .map_err(e("writing marks"))?;
                self.mode_marks
                    .insert((s, seq), start.plan_mode)
                    .map_err(e("writing marks"))?;
            }
            EventBody::PlanWritten(_) => {
                self.plan_marks
                    .insert((s, seq), ())
                    .map_err(e("writing marks"))?;
            }
            EventBody::ModeSelected(m) => {
                self.mode_marks
                    .insert((s, seq), m.active)
                    .map_err(e("writing marks"))?;
            }
            EventBody::WriteRejected(_) => {}
        }
        Ok(Appended::Stored(event.clone()))
    }
}

/// Where `session` stands, from the heads, events, deletions and tombstones tables (of a
/// read or a write transaction; `tombstones` is `None` in stores that predate it).
fn slot_from<H, E, D, T>(
    heads: &H,
    events: &E,
    deleted: &D,
    tombstones: Option<&T>,
    session: &SessionId,
    p: &str,
) -> Result<Slot>
where
    H: ReadableTable<&'static str, (u64, [u8; 32])>,
    E: ReadableTable<(&'static str, u64), &'static [u8]>,
    D: ReadableTable<&'static str, u64>,
    T: ReadableTable<&'static str, [u8; 32]>,
{
    let s = session.as_str();
    let e = |action: &'static str| move |err: redb::StorageError| redb_err(p, action, err);
    if deleted.get(s).map_err(e("reading deletions"))?.is_some() {
        let first = match tombstones {
            Some(t) => t
                .get(s)
                .map_err(e("reading deletions"))?
                .map(|h| Hash::from_bytes(h.value())),
            None => None,
        };
        return Ok(Slot::Retired { first });
    }
    if let Some(h) = heads.get(s).map_err(e("reading heads"))? {
        let (seq, hash) = h.value();
        let seq = Seq::new(seq).map_err(|_| corrupt(p, session, 0, "a head with seq 0".into()))?;
        return Ok(Slot::Live(Head {
            seq,
            hash: Hash::from_bytes(hash),
        }));
    }
    // No head: a new session, or a store written before heads were kept (read the last
    // event instead; the next append records the head).
    let mut range = events
        .range((s, 0)..=(s, u64::MAX))
        .map_err(e("reading events"))?;
    match range.next_back() {
        Some(entry) => {
            let (key, bytes) = entry.map_err(e("reading events"))?;
            let last = decode_event(p, session, key.value().1, bytes.value())?;
            Ok(Slot::Live(Head::of(&last)))
        }
        None => Ok(Slot::Free),
    }
}

/// Where `session` stands, read in a read transaction.
fn slot_in(txn: &ReadTransaction, session: &SessionId, p: &str) -> Result<Slot> {
    let open_err = |e: redb::TableError| redb_err(p, "reading heads", e);
    let heads = txn.open_table(HEADS).map_err(open_err)?;
    let events = txn.open_table(EVENTS).map_err(open_err)?;
    let deleted = txn.open_table(DELETED).map_err(open_err)?;
    let tombstones = match txn.open_table(TOMBSTONES) {
        Ok(t) => Some(t),
        Err(redb::TableError::TableDoesNotExist(_)) => None,
        Err(e) => return Err(open_err(e)),
    };
    slot_from(&heads, &events, &deleted, tombstones.as_ref(), session, p)
}

/// Opens (creating if needed) the redb file in multi-writer mode.
fn open_database(path: &Path, check_integrity: bool) -> Result<Database> {
    let shown = path.display().to_string();
    guard(&shown, || {
        let mut builder = Database::builder();
        builder
            .set_concurrency_mode(ConcurrencyMode::MultiWriter)
            .set_cache_size(64 * 1024 * 1024)
            .set_check_integrity_on_open(check_integrity);
        builder.create(path).map_err(|e| db_error(&shown, e))
    })
}

/// Runs `f`, turning a panic inside redb (a damaged file can cause one) into an error.
fn guard<T>(path: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(panic) => {
            let detail = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "the storage engine panicked".to_owned());
            tracing::warn!(store = path, %detail, "storage engine panicked; reporting the store as damaged");
            Err(OperatorError::Corrupt {
                path: path.to_owned(),
                session: None,
                seq: None,
                detail,
            }
            .into())
        }
    }
}

fn io(path: &str, action: &str, e: std::io::Error) -> LogError {
    OperatorError::Io {
        path: path.to_owned(),
        action: action.to_owned(),
        detail: e.to_string(),
    }
    .into()
}

fn db_error(path: &str, e: DatabaseError) -> LogError {
    match e {
        DatabaseError::DatabaseAlreadyOpen | DatabaseError::LockProtocolMismatch => {
            OperatorError::Locked {
                path: path.to_owned(),
                waited_ms: 0,
            }
            .into()
        }
        DatabaseError::UpgradeRequired(v) => OperatorError::Io {
            path: path.to_owned(),
            action: "opening".to_owned(),
            detail: format!(
                "the file is in redb file format {v}, older than this planlog reads; open it with the planlog version that wrote it and export its sessions (planlog export)"
            ),
        }
        .into(),
        other => redb_err(path, "opening", other),
    }
}

/// Maps any redb error to an operator error naming the file and the action.
fn redb_err(path: &str, action: &str, e: impl Into<redb::Error>) -> LogError {
    let e: redb::Error = e.into();
    match e {
        redb::Error::Corrupted(detail) => OperatorError::Corrupt {
            path: path.to_owned(),
            session: None,
            seq: None,
            detail,
        }
        .into(),
        redb::Error::Io(io_err) if io_err.kind() == std::io::ErrorKind::InvalidData => {
            OperatorError::Corrupt {
                path: path.to_owned(),
                session: None,
                seq: None,
                detail: format!("not a planlog store ({io_err})"),
            }
            .into()
        }
        other => OperatorError::Io {
            path: path.to_owned(),
            action: action.to_owned(),
            detail: other.to_string(),
        }
        .into(),
    }
}

/// Creates `dir` (and parents) readable by the owner only.
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}
