//! [`PgLog`]: the event log in a PostgreSQL database (`postgres://` stores), for many agents
//! on many machines sharing one store.
//!
//! | module | what |
//! |---|---|
//! | `schema` | the tables, their migrations and version check |
//! | `pool` | a process's connections |
//! | `errors` | PostgreSQL failures as planlog's operator errors |
//! | `password` | the password from `PGPASSWORD` or `~/.pgpass` when the URL has none, as psql finds it |
//!
//! An append is one transaction, committed before it returns (durable under the server's
//! synchronous commit, which planlog sets on for its connections): the session's row in
//! `planlog_sessions` is locked (`FOR UPDATE`), so appends to one session are ordered and
//! appends to different sessions never wait for each other; the same `check_append` rules as
//! every log; a duplicate call id answers with the recorded event. Two creators of one session
//! race on its primary keys: the loser gets [`LogError::Conflict`], as a writer that lost the
//! race for the next seq does. Each commit notifies `planlog` with the session id (`NOTIFY`),
//! so live views elsewhere follow ([`PgLog::wait_for_change`]).

mod errors;
mod password;
mod pool;
mod schema;

use std::time::Duration;

use planlog_core::events::ids_issued_after;
use planlog_core::{
    CallId, EventLog, LogError, OperatorError, Seq, SessionId, SessionInfo, SessionState,
    UserError,
    events::{Event, EventBody, Hash, Head},
    log::{Appended, Slot, check_encoded, check_placement},
};
use postgres::fallible_iterator::FallibleIterator;
use postgres::{Config, Transaction};

use errors::{is_race, pg_err, stale};
use pool::{Conn, Pool, Prepared};
pub use schema::PG_SCHEMA_VERSION;
use schema::Schema;

use crate::address::redacted;
use crate::codec::{corrupt, decode_event, decode_info, encode_info};

type Result<T> = std::result::Result<T, LogError>;

/// The durable event log in a PostgreSQL database.
///
/// Its calls block (rust-postgres's blocking client runs a small runtime of its own), so in
/// async code open, use and drop it outside the executor's threads: hand it to an
/// `AsyncPlanSession` (which runs the session on a thread of its own), or call it from
/// `spawn_blocking`. Opening or dropping it on an async task panics.
pub struct PgLog {
    shown: String,
    pool: Pool,
    config: Config,
}

impl std::fmt::Debug for PgLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgLog")
            .field("store", &self.shown)
            .finish_non_exhaustive()
    }
}

impl PgLog {
    /// Connects to the database at `url` (`postgres://user[:password]@host[:port]/dbname`,
    /// or any form rust-postgres reads), creating planlog's tables on first use and upgrading
    /// older ones.
    ///
    /// # Errors
    /// The URL is malformed, the server cannot be reached, a permission is missing
    /// ([`OperatorError::Io`], naming the URL without its password), or the database was
    /// written by a newer planlog ([`OperatorError::NewerFormat`]).
    pub fn open(url: &str) -> Result<Self> {
        Self::open_config(url, None)
    }

    /// [`PgLog::open`], giving up on reaching the server after `wait`, and on any statement
    /// or lock after `wait` too (`statement_timeout`, `lock_timeout`): hooks, which must answer
    /// quickly, spool what they cannot store rather than wait for an import that holds a
    /// session's row.
    ///
    /// # Errors
    /// As [`PgLog::open`].
    pub fn open_within(url: &str, wait: Duration) -> Result<Self> {
        Self::open_config(url, Some(wait))
    }

    fn open_config(url: &str, wait: Option<Duration>) -> Result<Self> {
        let shown = redacted(url);
        let mut config: Config = url.parse().map_err(|e: postgres::Error| {
            LogError::from(OperatorError::NotAStore {
                path: shown.clone(),
                detail: format!("not a PostgreSQL URL: {e}"),
            })
        })?;
        password::fill(&mut config);
        if let Some(wait) = wait {
            config.connect_timeout(wait);
        }
        let log = Self {
            pool: Pool::new(config.clone(), wait),
            config,
            shown,
        };
        let mut conn = log.pool.get().map_err(|e| log.err("connecting", &e))?;
        let mut tx = conn
            .conn()
            .client
            .transaction()
            .map_err(|e| log.err("opening", &e))?;
        match schema::migrate(&mut tx).map_err(|e| log.err("creating planlog's tables", &e))? {
            Schema::Newer(found) => {
                return Err(OperatorError::NewerFormat {
                    path: log.shown.clone(),
                    found: u64::try_from(found).unwrap_or(0),
                    supported: u64::try_from(PG_SCHEMA_VERSION).unwrap_or(0),
                }
                .into());
            }
            Schema::Current { from } if from > 0 && from < PG_SCHEMA_VERSION => {
                tracing::info!(store = %log.shown, from, to = PG_SCHEMA_VERSION, "upgraded the store's tables");
            }
            Schema::Current { .. } => {}
        }
        tx.commit()
            .map_err(|e| log.err("creating planlog's tables", &e))?;
        drop(conn);
        Ok(log)
    }

    /// The store's URL, without its password.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    fn err(&self, action: &str, e: &postgres::Error) -> LogError {
        pg_err(&self.shown, action, e)
    }

    /// Runs `f` in one transaction on a pooled connection, committed (synchronously: the
    /// pool's connections have `synchronous_commit` on) when it succeeds.
    fn tx<T>(&self, action: &str, f: impl FnOnce(&mut Transaction<'_>) -> Result<T>) -> Result<T> {
        self.in_transaction(action, |tx, _| f(tx), |e| self.err(action, e))
    }

    /// Runs `f` in a transaction on a pooled connection (with its prepared statements),
    /// committed when `f` succeeds. A pooled connection the server closed while it sat idle
    /// (a restart, an idle timeout, an administrator) fails at `BEGIN`, before anything was
    /// sent: it is replaced by a fresh one, once.
    fn in_transaction<T>(
        &self,
        action: &str,
        f: impl FnOnce(&mut Transaction<'_>, &mut Prepared) -> Result<T>,
        commit_failed: impl FnOnce(&postgres::Error) -> LogError,
    ) -> Result<T> {
        let mut pooled = self.pool.get().map_err(|e| self.err("connecting", &e))?;
        let mut retried = false;
        loop {
            let Conn { client, prepared } = pooled.conn();
            match client.transaction() {
                Ok(mut tx) => {
                    let out = f(&mut tx, prepared)?;
                    return tx.commit().map(|()| out).map_err(|e| commit_failed(&e));
                }
                Err(e) if !retried && stale(&e) => {
                    tracing::debug!(store = %self.shown, error = %e, "a pooled connection was closed by the server; connecting again");
                    retried = true;
                }
                Err(e) => return Err(self.err(action, &e)),
            }
            drop(pooled);
            self.pool.discard_idle();
            pooled = self.pool.get().map_err(|e| self.err("connecting", &e))?;
        }
    }

    /// Reads with one connection, no explicit transaction: each read is one statement, which
    /// sees one snapshot of committed data. A read that failed because the server had closed
    /// the pooled connection is run again, once, on a fresh one (reads may run twice).
    fn read_with<T>(&self, f: impl Fn(&mut Conn) -> Result<T>) -> Result<T> {
        let mut pooled = self.pool.get().map_err(|e| self.err("connecting", &e))?;
        match f(pooled.conn()) {
            Err(LogError::Operator(op))
                if pooled.conn().client.is_closed()
                    || matches!(
                        op.io_kind(),
                        Some(
                            std::io::ErrorKind::ConnectionAborted
                                | std::io::ErrorKind::ConnectionReset
                                | std::io::ErrorKind::BrokenPipe
                                | std::io::ErrorKind::UnexpectedEof
                        )
                    ) =>
            {
                drop(pooled);
                self.pool.discard_idle();
                let mut pooled = self.pool.get().map_err(|e| self.err("connecting", &e))?;
                f(pooled.conn())
            }
            other => other,
        }
    }

    /// Runs the prepared `sql` with `params` on `conn`; its rows.
    fn query(
        &self,
        conn: &mut Conn,
        action: &str,
        sql: &'static str,
        params: &[&(dyn postgres::types::ToSql + Sync)],
    ) -> Result<Vec<postgres::Row>> {
        let statement = conn
            .prepared
            .get(&mut conn.client, sql)
            .map_err(|e| self.err(action, &e))?;
        conn.client
            .query(&statement, params)
            .map_err(|e| self.err(action, &e))
    }

    /// Blocks until some session gets new events (a `NOTIFY planlog` from any writer on any
    /// machine), or `timeout`; returns the sessions announced.
    ///
    /// # Errors
    /// The server cannot be reached.
    pub fn wait_for_change(&self, timeout: Duration) -> Result<Vec<SessionId>> {
        let mut conn = self.pool.get().map_err(|e| self.err("connecting", &e))?;
        let client = &mut conn.conn().client;
        client
            .batch_execute("LISTEN planlog")
            .map_err(|e| self.err("listening", &e))?;
        let mut out = Vec::new();
        {
            let mut notes = client.notifications();
            {
                let mut it = notes.timeout_iter(timeout);
                while let Some(n) = it.next().map_err(|e| self.err("listening", &e))? {
                    if let Ok(id) = SessionId::new(n.payload().to_owned()) {
                        out.push(id);
                        break;
                    }
                }
            }
            // What has already arrived comes along, so it is not left on the pooled connection
            // to wake the next wait for a change it has already been told of.
            let mut pending = notes.iter();
            while let Some(n) = pending.next().map_err(|e| self.err("listening", &e))? {
                if let Ok(id) = SessionId::new(n.payload().to_owned())
                    && !out.contains(&id)
                {
                    out.push(id);
                }
            }
        }
        client
            .batch_execute("UNLISTEN planlog")
            .map_err(|e| self.err("listening", &e))?;
        Ok(out)
    }

    /// The connection settings (host, database, user), for messages and tools.
    pub fn config(&self) -> &Config {
        &self.config
    }
}

/// A session's head row locked for this transaction, and the recorded event of `call`
/// when there is one: one round trip on the common path.
const LOCK_HEAD: &str = "SELECT seq, hash, info, (SELECT e.seq FROM planlog_events e WHERE e.session = $1 AND e.call_id = $2) FROM planlog_sessions WHERE session = $1 FOR UPDATE";
/// Whether a session id is retired, and the first hash that may take it again.
const TOMBSTONE: &str = "SELECT first_hash FROM planlog_tombstones WHERE session = $1";
/// A session's head, or its tombstone, in one statement (one snapshot).
const HEAD: &str = "SELECT s.seq, s.hash, t.session IS NOT NULL, t.first_hash FROM (SELECT $1::text AS k) q LEFT JOIN planlog_sessions s ON s.session = q.k LEFT JOIN planlog_tombstones t ON t.session = q.k";
/// The recorded event of a call id.
const BY_CALL: &str = "SELECT seq, body FROM planlog_events WHERE session = $1 AND call_id = $2";
/// Writes one event to a live session: the event, its marks, the head, the announcement.
const WRITE_LIVE: &str = "WITH ev AS (INSERT INTO planlog_events (session, seq, call_id, body) VALUES ($1::text, $2::bigint, $3::text, $4::bytea)), \
    pm AS (INSERT INTO planlog_plan_marks (session, seq) SELECT $1::text, $2::bigint WHERE $5::boolean), \
    mm AS (INSERT INTO planlog_mode_marks (session, seq, active) SELECT $1::text, $2::bigint, $7::boolean WHERE $6::boolean), \
    hd AS (UPDATE planlog_sessions SET seq = $2::bigint, hash = $8::bytea, info = $9::bytea WHERE session = $1::text) \
    SELECT pg_notify('planlog', $1::text)";
/// [`WRITE_LIVE`] for a session's first event: its head row is created (two creators race on
/// the keys; the loser gets a unique violation).
const WRITE_NEW: &str = "WITH ev AS (INSERT INTO planlog_events (session, seq, call_id, body) VALUES ($1::text, $2::bigint, $3::text, $4::bytea)), \
    pm AS (INSERT INTO planlog_plan_marks (session, seq) SELECT $1::text, $2::bigint WHERE $5::boolean), \
    mm AS (INSERT INTO planlog_mode_marks (session, seq, active) SELECT $1::text, $2::bigint, $7::boolean WHERE $6::boolean), \
    hd AS (INSERT INTO planlog_sessions (session, seq, hash, info) VALUES ($1::text, $2::bigint, $8::bytea, $9::bytea)) \
    SELECT pg_notify('planlog', $1::text)";

/// A head's seq and hash as stored.
fn head_from(shown: &str, session: &SessionId, seq: i64, hash: &[u8]) -> Result<Head> {
    let seq = u64::try_from(seq)
        .ok()
        .and_then(|n| Seq::new(n).ok())
        .ok_or_else(|| corrupt(shown, session, 0, "a head with seq 0".into()))?;
    let hash = <[u8; 32]>::try_from(hash).map_err(|_| {
        corrupt(
            shown,
            session,
            seq.get(),
            "a head hash that is not 32 bytes".into(),
        )
    })?;
    Ok(Head {
        seq,
        hash: Hash::from_bytes(hash),
    })
}

/// A tombstone's first hash as stored.
fn retired(first: Option<Vec<u8>>) -> Slot {
    let first = first.and_then(|b| {
        <[u8; 32]>::try_from(b.as_slice())
            .ok()
            .map(Hash::from_bytes)
    });
    Slot::Retired { first }
}

fn seq_i64(seq: u64) -> i64 {
    i64::try_from(seq).unwrap_or(i64::MAX)
}

/// Another writer won the race for `event`'s place (a key it took first, a deadlock between
/// two batches): the caller catches up and decides again.
fn lost_race(event: &Event) -> LogError {
    LogError::Conflict {
        session: event.session.clone(),
        expected: event.seq.get() + 1,
        found: event.seq.get(),
    }
}

/// Validates and writes one event in `tx`: two round trips (lock the head and look up the
/// call id; write everything), three for a new session (its tombstone is looked up too).
fn append_in(
    tx: &mut Transaction<'_>,
    prepared: &mut Prepared,
    shown: &str,
    event: &Event,
) -> Result<Appended> {
    let s = event.session.as_str();
    let e = |action: &'static str| {
        move |err: postgres::Error| {
            if is_race(&err) {
                lost_race(event)
            } else {
                pg_err(shown, action, &err)
            }
        }
    };
    // The content checks and the one encoding, before the head's row is locked.
    let bytes = check_encoded(event)?;
    let call = event.call_id.as_ref().map(CallId::as_str);
    let lock = prepared.get(tx, LOCK_HEAD).map_err(e("reading heads"))?;
    let row = tx
        .query_opt(&lock, &[&s, &call])
        .map_err(e("reading heads"))?;
    let (slot, info, duplicate) = match row {
        Some(row) => {
            let head = head_from(shown, &event.session, row.get(0), &row.get::<_, Vec<u8>>(1))?;
            (
                Slot::Live(head),
                Some(row.get::<_, Vec<u8>>(2)),
                row.get::<_, Option<i64>>(3),
            )
        }
        None => {
            // A live session has no tombstone (a restore removes it): only a session without
            // a head may be a retired one.
            let tomb = prepared.get(tx, TOMBSTONE).map_err(e("reading heads"))?;
            match tx.query_opt(&tomb, &[&s]).map_err(e("reading heads"))? {
                Some(row) => (retired(row.get(0)), None, None),
                None => (Slot::Free, None, None),
            }
        }
    };
    if duplicate.is_some()
        && let Some(call) = call
    {
        let by_call = prepared.get(tx, BY_CALL).map_err(e("reading call ids"))?;
        if let Some(row) = tx
            .query_opt(&by_call, &[&s, &call])
            .map_err(e("reading call ids"))?
        {
            let seq: i64 = row.get(0);
            let body: Vec<u8> = row.get(1);
            return Ok(Appended::Duplicate(std::sync::Arc::new(decode_event(
                shown,
                &event.session,
                u64::try_from(seq).unwrap_or(0),
                &body,
            )?)));
        }
    }
    check_placement(event, slot)?;
    if slot.is_restored_by(event) {
        tx.execute("DELETE FROM planlog_tombstones WHERE session = $1", &[&s])
            .map_err(e("writing deletions"))?;
    }
    let info = match (&slot, info) {
        (Slot::Live(_), Some(bytes)) => {
            let mut info = decode_info(shown, s, &bytes)?;
            info.observe(event);
            info
        }
        _ => SessionInfo::from_first(event).ok_or_else(|| LogError::InvalidEvent {
            session: event.session.clone(),
            seq: event.seq.get(),
            reason: "the first event of a session must be session_started".to_owned(),
        })?,
    };
    let (plan_mark, mode_mark) = match &event.body {
        EventBody::SessionStarted(start) => (true, Some(start.plan_mode)),
        EventBody::PlanWritten(_) => (true, None),
        EventBody::ModeSelected(m) => (false, Some(m.active)),
        EventBody::WriteRejected(_)
        | EventBody::CheckpointSeen(_)
        | EventBody::SessionDescribed(_)
        | EventBody::ContextCompacted(_)
        | EventBody::PlanRestored(_) => (false, None),
    };
    let sql = if matches!(slot, Slot::Live(_)) {
        WRITE_LIVE
    } else {
        WRITE_NEW
    };
    let write = prepared.get(tx, sql).map_err(e("writing the event"))?;
    tx.execute(
        &write,
        &[
            &s,
            &seq_i64(event.seq.get()),
            &call,
            &bytes,
            &plan_mark,
            &mode_mark.is_some(),
            &mode_mark.unwrap_or(false),
            &event.hash.as_bytes().as_slice(),
            &encode_info(&info),
        ],
    )
    .map_err(e("writing the event"))?;
    Ok(Appended::Stored(std::sync::Arc::new(event.clone())))
}

impl PgLog {
    /// Appends a batch in one transaction, committed before it returns; another writer's win
    /// (a key taken first, a deadlock between two batches) is [`LogError::Conflict`].
    fn batch(&self, events: &mut dyn Iterator<Item = Result<Event>>) -> Result<Vec<Appended>> {
        let first: std::cell::RefCell<Option<Event>> = std::cell::RefCell::default();
        self.in_transaction(
            "appending",
            |tx, prepared| {
                let mut out = Vec::new();
                for event in events {
                    // Any error drops the transaction: nothing of the batch is kept.
                    let event = event?;
                    out.push(append_in(tx, prepared, &self.shown, &event)?);
                    first.borrow_mut().get_or_insert(event);
                }
                Ok(out)
            },
            // A commit refused because another writer won is a conflict to catch up with.
            |e| match first.borrow().as_ref() {
                Some(ev) if is_race(e) => lost_race(ev),
                _ => self.err("committing appends", e),
            },
        )
    }
}

impl EventLog for PgLog {
    fn append(&self, event: &Event) -> Result<Appended> {
        let mut one = std::iter::once(Ok(event.clone()));
        let mut out = self.batch(&mut one)?;
        out.pop().ok_or_else(|| LogError::InvalidEvent {
            session: event.session.clone(),
            seq: event.seq.get(),
            reason: "the append gave no answer".to_owned(),
        })
    }

    fn append_all(&self, events: &[Event]) -> Result<Vec<Appended>> {
        self.batch(&mut events.iter().cloned().map(Ok))
    }

    fn append_iter(&self, events: &mut dyn Iterator<Item = Result<Event>>) -> Result<u64> {
        // A repeated call id: nothing was committed, the whole batch is refused.
        planlog_core::log::streamed_count(&self.batch(events)?)
    }

    fn find_call(&self, session: &SessionId, call: &CallId) -> Result<Option<Seq>> {
        self.read_with(|c| {
            let rows = self.query(
                c,
                "reading call ids",
                BY_CALL,
                &[&session.as_str(), &call.as_str()],
            )?;
            Ok(rows
                .first()
                .and_then(|r| u64::try_from(r.get::<_, i64>(0)).ok())
                .and_then(|n| Seq::new(n).ok()))
        })
    }

    fn read(&self, session: &SessionId, from: Seq, to: Option<Seq>) -> Result<Vec<Event>> {
        const EVENTS: &str = "SELECT seq, body FROM planlog_events WHERE session = $1 AND seq >= $2 AND seq <= $3 ORDER BY seq";
        const EXISTS: &str = "SELECT 1 FROM planlog_sessions WHERE session = $1";
        self.read_with(|c| {
            let s = session.as_str();
            let end = seq_i64(to.map_or(u64::MAX, Seq::get));
            // One statement: one snapshot of the session's events.
            let rows = self.query(
                c,
                "reading events",
                EVENTS,
                &[&s, &seq_i64(from.get()), &end],
            )?;
            if rows.is_empty() && self.query(c, "reading events", EXISTS, &[&s])?.is_empty() {
                return Err(UserError::UnknownSession(session.clone()).into());
            }
            rows.iter()
                .map(|r| {
                    let seq: i64 = r.get(0);
                    let body: Vec<u8> = r.get(1);
                    decode_event(&self.shown, session, u64::try_from(seq).unwrap_or(0), &body)
                })
                .collect()
        })
    }

    fn last(&self, session: &SessionId) -> Result<Option<Event>> {
        const LAST: &str = "SELECT e.seq, e.body FROM planlog_sessions s JOIN planlog_events e ON e.session = s.session AND e.seq = s.seq WHERE s.session = $1";
        self.read_with(|c| {
            let rows = self.query(c, "reading events", LAST, &[&session.as_str()])?;
            rows.first()
                .map(|r| {
                    let seq: i64 = r.get(0);
                    let body: Vec<u8> = r.get(1);
                    decode_event(&self.shown, session, u64::try_from(seq).unwrap_or(0), &body)
                })
                .transpose()
        })
    }

    fn head(&self, session: &SessionId) -> Result<Option<Head>> {
        self.read_with(|c| {
            let rows = self.query(c, "reading heads", HEAD, &[&session.as_str()])?;
            let Some(row) = rows.first() else {
                return Ok(None);
            };
            match (
                row.get::<_, Option<i64>>(0),
                row.get::<_, Option<Vec<u8>>>(1),
            ) {
                (Some(seq), Some(hash)) => head_from(&self.shown, session, seq, &hash).map(Some),
                _ if row.get::<_, bool>(2) => {
                    Err(UserError::SessionDeleted(session.clone()).into())
                }
                _ => Ok(None),
            }
        })
    }

    fn session(&self, session: &SessionId) -> Result<Option<SessionInfo>> {
        const INFO: &str = "SELECT info FROM planlog_sessions WHERE session = $1";
        self.read_with(|c| {
            let rows = self.query(c, "reading the catalogue", INFO, &[&session.as_str()])?;
            rows.first()
                .map(|r| decode_info(&self.shown, session.as_str(), &r.get::<_, Vec<u8>>(0)))
                .transpose()
        })
    }

    fn sessions(&self) -> Result<Vec<SessionInfo>> {
        const ALL: &str = "SELECT session, info FROM planlog_sessions ORDER BY session";
        self.read_with(|c| {
            let rows = self.query(c, "reading the catalogue", ALL, &[])?;
            rows.iter()
                .map(|r| decode_info(&self.shown, &r.get::<_, String>(0), &r.get::<_, Vec<u8>>(1)))
                .collect()
        })
    }

    fn delete(&self, session: &SessionId) -> Result<()> {
        let s = session.as_str();
        let existed = self.tx("deleting a session", |tx| {
            let e = |err: postgres::Error| self.err("deleting a session", &err);
            if tx
                .query_opt("SELECT 1 FROM planlog_sessions WHERE session = $1 FOR UPDATE", &[&s])
                .map_err(e)?
                .is_none()
            {
                return Ok(false);
            }
            // The tombstone keeps the first event's hash: only the same session, restored
            // from its export, may take the id again.
            let first = tx
                .query_opt("SELECT body FROM planlog_events WHERE session = $1 AND seq = 1", &[&s])
                .map_err(e)?
                .and_then(|r| Event::decode(&r.get::<_, Vec<u8>>(0)).ok())
                .map(|ev| ev.hash.as_bytes().to_vec());
            for sql in [
                "DELETE FROM planlog_events WHERE session = $1",
                "DELETE FROM planlog_plan_marks WHERE session = $1",
                "DELETE FROM planlog_mode_marks WHERE session = $1",
                "DELETE FROM planlog_sessions WHERE session = $1",
            ] {
                tx.execute(sql, &[&s]).map_err(e)?;
            }
            tx.execute(
                "INSERT INTO planlog_tombstones (session, first_hash) VALUES ($1, $2) ON CONFLICT (session) DO UPDATE SET first_hash = EXCLUDED.first_hash",
                &[&s, &first],
            )
            .map_err(e)?;
            tx.execute("SELECT pg_notify('planlog', $1)", &[&s]).map_err(e)?;
            Ok(true)
        })?;
        if existed {
            tracing::info!(session = %session, store = %self.shown, "session deleted");
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
        // One statement (one snapshot): the head's seq, the marks at or before `from`, and
        // every mark after it up to `to`, as arrays.
        const INDEX: &str = "SELECT s.seq, \
            (SELECT MAX(k.seq) FROM planlog_plan_marks k WHERE k.session = $1 AND k.seq <= $2), \
            (SELECT m.active FROM planlog_mode_marks m WHERE m.session = $1 AND m.seq <= $2 ORDER BY m.seq DESC LIMIT 1), \
            ARRAY(SELECT k.seq FROM planlog_plan_marks k WHERE k.session = $1 AND k.seq > $2 AND k.seq <= $3 ORDER BY k.seq), \
            ARRAY(SELECT m.seq FROM planlog_mode_marks m WHERE m.session = $1 AND m.seq > $2 AND m.seq <= $3 ORDER BY m.seq), \
            ARRAY(SELECT m.active FROM planlog_mode_marks m WHERE m.session = $1 AND m.seq > $2 AND m.seq <= $3 ORDER BY m.seq) \
            FROM planlog_sessions s WHERE s.session = $1";
        self.read_with(|c| {
            let rows = self.query(
                c,
                "reading the state index",
                INDEX,
                &[&session.as_str(), &seq_i64(from.get()), &seq_i64(to.get())],
            )?;
            let Some(row) = rows.first() else {
                return Err(UserError::UnknownSession(session.clone()).into());
            };
            let last = u64::try_from(row.get::<_, i64>(0)).unwrap_or(0);
            let to = Seq::new(to.get().min(last)).unwrap_or(to);
            if from > to {
                return Ok(Some(Vec::new()));
            }
            let seq = |n: i64| u64::try_from(n).ok().and_then(|n| Seq::new(n).ok());
            let plan_before = row.get::<_, Option<i64>>(1).and_then(seq);
            let mode_before = row.get::<_, Option<bool>>(2).unwrap_or(false);
            let plans: Vec<i64> = row.get(3);
            let mode_seqs: Vec<i64> = row.get(4);
            let mode_active: Vec<bool> = row.get(5);
            Ok(Some(planlog_core::index_entries(
                from,
                to,
                plan_before,
                mode_before,
                plans.into_iter().filter_map(seq),
                mode_seqs
                    .into_iter()
                    .zip(mode_active)
                    .filter_map(|(n, a)| seq(n).map(|s| (s, a))),
            )))
        })
    }

    fn state_at(&self, session: &SessionId, at: Seq) -> Result<SessionState> {
        // One statement (one snapshot): the head's seq, the last plan-carrying event at or
        // before the seq, and the last mode set; one index lookup each.
        const STATE: &str = "SELECT s.seq, p.seq, p.body, \
            (SELECT m.active FROM planlog_mode_marks m WHERE m.session = $1 AND m.seq <= $2 ORDER BY m.seq DESC LIMIT 1) \
            FROM planlog_sessions s LEFT JOIN LATERAL (SELECT e.seq, e.body FROM planlog_events e WHERE e.session = $1 \
            AND e.seq = (SELECT MAX(k.seq) FROM planlog_plan_marks k WHERE k.session = $1 AND k.seq <= $2)) p ON true \
            WHERE s.session = $1";
        self.read_with(|c| {
            let rows = self.query(
                c,
                "reading state",
                STATE,
                &[&session.as_str(), &seq_i64(at.get())],
            )?;
            let Some(row) = rows.first() else {
                return Err(UserError::UnknownSession(session.clone()).into());
            };
            let last = u64::try_from(row.get::<_, i64>(0)).unwrap_or(0);
            if at.get() > last {
                return Err(UserError::SeqOutOfRange {
                    session: session.clone(),
                    seq: at.get(),
                    last,
                }
                .into());
            }
            let (Some(seq), Some(body)) = (
                row.get::<_, Option<i64>>(1),
                row.get::<_, Option<Vec<u8>>>(2),
            ) else {
                return Err(corrupt(
                    &self.shown,
                    session,
                    at.get(),
                    "no plan-carrying event at or before this seq".into(),
                ));
            };
            let event = decode_event(&self.shown, session, u64::try_from(seq).unwrap_or(0), &body)?;
            let plan = event.plan().cloned().ok_or_else(|| {
                corrupt(
                    &self.shown,
                    session,
                    event.seq.get(),
                    "a plan mark points at an event without a plan".into(),
                )
            })?;
            let plan_mode = row.get::<_, Option<bool>>(3).unwrap_or(false);
            Ok(SessionState {
                plan,
                plan_mode,
                ids_issued: ids_issued_after(&event.body),
            })
        })
    }
}
