//! [`PgLog`]: the event log in a PostgreSQL database (`postgres://` stores), for many agents
//! on many machines sharing one store.
//!
//! | module | what |
//! |---|---|
//! | `schema` | the tables, their migrations and version check |
//! | `pool` | a process's connections |
//! | `errors` | PostgreSQL failures as planlog's operator errors; the URL without its password |
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
mod pool;
mod schema;

use std::time::Duration;

use planlog_core::{
    CallId, EventLog, LogError, OperatorError, Seq, SessionId, SessionInfo, SessionState,
    UserError,
    events::{Event, EventBody, Hash, Head},
    log::{Appended, Slot, check_append},
};
use postgres::fallible_iterator::FallibleIterator;
use postgres::{Config, Transaction};

pub(crate) use errors::redacted;
use errors::{is_race, pg_err};
use pool::Pool;
pub use schema::PG_SCHEMA_VERSION;
use schema::Schema;

use crate::codec::{corrupt, decode_event, decode_info, encode_info};

type Result<T> = std::result::Result<T, LogError>;

/// The URL schemes a PostgreSQL store may be named by.
pub const SCHEMES: [&str; 2] = ["postgres", "postgresql"];

/// The durable event log in a PostgreSQL database.
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

    /// [`PgLog::open`], giving up on reaching the server after `wait` (hooks, which must
    /// answer quickly, spool what they cannot store).
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
        if let Some(wait) = wait {
            config.connect_timeout(wait);
        }
        let log = Self {
            pool: Pool::new(config.clone()),
            config,
            shown,
        };
        let mut conn = log.pool.get().map_err(|e| log.err("connecting", &e))?;
        let client = conn.client();
        let mut tx = client.transaction().map_err(|e| log.err("opening", &e))?;
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

    /// Runs `f` in one transaction on a pooled connection, committed when it succeeds.
    fn tx<T>(&self, action: &str, f: impl FnOnce(&mut Transaction<'_>) -> Result<T>) -> Result<T> {
        let mut conn = self.pool.get().map_err(|e| self.err("connecting", &e))?;
        let client = conn.client();
        let mut tx = client.transaction().map_err(|e| self.err(action, &e))?;
        tx.batch_execute("SET LOCAL synchronous_commit = on")
            .map_err(|e| self.err(action, &e))?;
        let out = f(&mut tx)?;
        tx.commit().map_err(|e| self.err(action, &e))?;
        Ok(out)
    }

    /// Reads with one connection (no explicit transaction: each query sees committed data).
    fn read_with<T>(&self, f: impl FnOnce(&mut postgres::Client) -> Result<T>) -> Result<T> {
        let mut conn = self.pool.get().map_err(|e| self.err("connecting", &e))?;
        f(conn.client())
    }

    /// Blocks until some session gets new events (a `NOTIFY planlog` from any writer on any
    /// machine), or `timeout`; returns the sessions announced.
    ///
    /// # Errors
    /// The server cannot be reached.
    pub fn wait_for_change(&self, timeout: Duration) -> Result<Vec<SessionId>> {
        let mut conn = self.pool.get().map_err(|e| self.err("connecting", &e))?;
        let client = conn.client();
        client
            .batch_execute("LISTEN planlog")
            .map_err(|e| self.err("listening", &e))?;
        let mut out = Vec::new();
        {
            let mut notes = client.notifications();
            let mut it = notes.timeout_iter(timeout);
            while let Some(n) = it.next().map_err(|e| self.err("listening", &e))? {
                if let Ok(id) = SessionId::new(n.payload().to_owned()) {
                    out.push(id);
                }
                if !out.is_empty() {
                    break;
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

/// Where a session stands, read in `tx` (its row locked when `lock`).
fn slot_in(
    tx: &mut Transaction<'_>,
    shown: &str,
    session: &SessionId,
    lock: bool,
) -> Result<(Slot, Option<Vec<u8>>)> {
    let s = session.as_str();
    let e = |err: postgres::Error| pg_err(shown, "reading heads", &err);
    if let Some(row) = tx
        .query_opt(
            "SELECT first_hash FROM planlog_tombstones WHERE session = $1",
            &[&s],
        )
        .map_err(e)?
    {
        let first: Option<Vec<u8>> = row.get(0);
        let first = first.and_then(|b| {
            <[u8; 32]>::try_from(b.as_slice())
                .ok()
                .map(Hash::from_bytes)
        });
        return Ok((Slot::Retired { first }, None));
    }
    let sql = if lock {
        "SELECT seq, hash, info FROM planlog_sessions WHERE session = $1 FOR UPDATE"
    } else {
        "SELECT seq, hash, info FROM planlog_sessions WHERE session = $1"
    };
    match tx.query_opt(sql, &[&s]).map_err(e)? {
        None => Ok((Slot::Free, None)),
        Some(row) => {
            let seq: i64 = row.get(0);
            let hash: Vec<u8> = row.get(1);
            let info: Vec<u8> = row.get(2);
            let seq = u64::try_from(seq)
                .ok()
                .and_then(|n| Seq::new(n).ok())
                .ok_or_else(|| corrupt(shown, session, 0, "a head with seq 0".into()))?;
            let hash = <[u8; 32]>::try_from(hash.as_slice()).map_err(|_| {
                corrupt(
                    shown,
                    session,
                    seq.get(),
                    "a head hash that is not 32 bytes".into(),
                )
            })?;
            Ok((
                Slot::Live(Head {
                    seq,
                    hash: Hash::from_bytes(hash),
                }),
                Some(info),
            ))
        }
    }
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

/// Validates and writes one event in `tx`.
fn append_in(tx: &mut Transaction<'_>, shown: &str, event: &Event) -> Result<Appended> {
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
    // A session being created has no row to lock yet: creators race on its keys instead.
    let (slot, info) = slot_in(tx, shown, &event.session, true).map_err(|err| match err {
        LogError::Operator(OperatorError::Io { ref source, .. })
            if source.to_string().contains("(40P01)") =>
        {
            lost_race(event)
        }
        other => other,
    })?;
    if let Some(call) = &event.call_id
        && let Some(row) = tx
            .query_opt(
                "SELECT seq, body FROM planlog_events WHERE session = $1 AND call_id = $2",
                &[&s, &call.as_str()],
            )
            .map_err(e("reading call ids"))?
    {
        let seq: i64 = row.get(0);
        let body: Vec<u8> = row.get(1);
        return Ok(Appended::Duplicate(decode_event(
            shown,
            &event.session,
            u64::try_from(seq).unwrap_or(0),
            &body,
        )?));
    }
    check_append(event, slot)?;
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
    let seq = seq_i64(event.seq.get());
    let call = event.call_id.as_ref().map(CallId::as_str);
    tx.execute(
        "INSERT INTO planlog_events (session, seq, call_id, body) VALUES ($1, $2, $3, $4)",
        &[&s, &seq, &call, &event.encode()],
    )
    .map_err(e("writing the event"))?;
    let hash = event.hash.as_bytes().to_vec();
    let info = encode_info(&info);
    if matches!(slot, Slot::Live(_)) {
        tx.execute(
            "UPDATE planlog_sessions SET seq = $2, hash = $3, info = $4 WHERE session = $1",
            &[&s, &seq, &hash, &info],
        )
        .map_err(e("writing heads"))?;
    } else {
        tx.execute(
            "INSERT INTO planlog_sessions (session, seq, hash, info) VALUES ($1, $2, $3, $4)",
            &[&s, &seq, &hash, &info],
        )
        .map_err(e("writing heads"))?;
    }
    match &event.body {
        EventBody::SessionStarted(start) => {
            tx.execute(
                "INSERT INTO planlog_plan_marks (session, seq) VALUES ($1, $2)",
                &[&s, &seq],
            )
            .map_err(e("writing marks"))?;
            tx.execute(
                "INSERT INTO planlog_mode_marks (session, seq, active) VALUES ($1, $2, $3)",
                &[&s, &seq, &start.plan_mode],
            )
            .map_err(e("writing marks"))?;
        }
        EventBody::PlanWritten(_) => {
            tx.execute(
                "INSERT INTO planlog_plan_marks (session, seq) VALUES ($1, $2)",
                &[&s, &seq],
            )
            .map_err(e("writing marks"))?;
        }
        EventBody::ModeSelected(m) => {
            tx.execute(
                "INSERT INTO planlog_mode_marks (session, seq, active) VALUES ($1, $2, $3)",
                &[&s, &seq, &m.active],
            )
            .map_err(e("writing marks"))?;
        }
        EventBody::WriteRejected(_) | EventBody::CheckpointSeen(_) => {}
    }
    tx.execute("SELECT pg_notify('planlog', $1)", &[&s])
        .map_err(e("announcing the event"))?;
    Ok(Appended::Stored(event.clone()))
}

impl PgLog {
    /// Appends a batch in one transaction, committed before it returns; another writer's win
    /// (a key taken first, a deadlock between two batches) is [`LogError::Conflict`].
    fn batch(&self, events: &mut dyn Iterator<Item = Result<Event>>) -> Result<Vec<Appended>> {
        let mut conn = self.pool.get().map_err(|e| self.err("connecting", &e))?;
        let client = conn.client();
        let mut tx = client
            .transaction()
            .map_err(|e| self.err("appending", &e))?;
        tx.batch_execute("SET LOCAL synchronous_commit = on")
            .map_err(|e| self.err("appending", &e))?;
        let mut out = Vec::new();
        let mut first: Option<Event> = None;
        for event in events {
            // Any error drops the transaction: nothing of the batch is kept.
            let event = event?;
            out.push(append_in(&mut tx, &self.shown, &event)?);
            first.get_or_insert(event);
        }
        match tx.commit() {
            Ok(()) => Ok(out),
            Err(e) if is_race(&e) => {
                Err(first.map_or_else(|| self.err("committing appends", &e), |ev| lost_race(&ev)))
            }
            Err(e) => Err(self.err("committing appends", &e)),
        }
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
        let appended = self.batch(events)?;
        if let Some(dup) = appended
            .iter()
            .find(|a| matches!(a, Appended::Duplicate(_)))
        {
            // Nothing was committed: the whole batch is refused.
            let e = dup.event();
            return Err(LogError::InvalidEvent {
                session: e.session.clone(),
                seq: e.seq.get(),
                reason: "a streamed event repeats a recorded call id".to_owned(),
            });
        }
        Ok(appended.len() as u64)
    }

    fn find_call(&self, session: &SessionId, call: &CallId) -> Result<Option<Seq>> {
        self.read_with(|c| {
            let row = c
                .query_opt(
                    "SELECT seq FROM planlog_events WHERE session = $1 AND call_id = $2",
                    &[&session.as_str(), &call.as_str()],
                )
                .map_err(|e| self.err("reading call ids", &e))?;
            Ok(row
                .and_then(|r| u64::try_from(r.get::<_, i64>(0)).ok())
                .and_then(|n| Seq::new(n).ok()))
        })
    }

    fn read(&self, session: &SessionId, from: Seq, to: Option<Seq>) -> Result<Vec<Event>> {
        self.read_with(|c| {
            let s = session.as_str();
            // One snapshot: the catalogue and the events agree.
            let mut tx = c
                .build_transaction()
                .isolation_level(postgres::IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()
                .map_err(|e| self.err("reading events", &e))?;
            if tx
                .query_opt("SELECT 1 FROM planlog_sessions WHERE session = $1", &[&s])
                .map_err(|e| self.err("reading events", &e))?
                .is_none()
            {
                return Err(UserError::UnknownSession(session.clone()).into());
            }
            let end = seq_i64(to.map_or(u64::MAX, Seq::get));
            let rows = tx
                .query(
                    "SELECT seq, body FROM planlog_events WHERE session = $1 AND seq >= $2 AND seq <= $3 ORDER BY seq",
                    &[&s, &seq_i64(from.get()), &end],
                )
                .map_err(|e| self.err("reading events", &e))?;
            let out = rows
                .iter()
                .map(|r| {
                    let seq: i64 = r.get(0);
                    let body: Vec<u8> = r.get(1);
                    decode_event(&self.shown, session, u64::try_from(seq).unwrap_or(0), &body)
                })
                .collect::<Result<Vec<_>>>()?;
            tx.commit().map_err(|e| self.err("reading events", &e))?;
            Ok(out)
        })
    }

    fn last(&self, session: &SessionId) -> Result<Option<Event>> {
        self.read_with(|c| {
            let row = c
                .query_opt(
                    "SELECT e.seq, e.body FROM planlog_sessions s JOIN planlog_events e ON e.session = s.session AND e.seq = s.seq WHERE s.session = $1",
                    &[&session.as_str()],
                )
                .map_err(|e| self.err("reading events", &e))?;
            row.map(|r| {
                let seq: i64 = r.get(0);
                let body: Vec<u8> = r.get(1);
                decode_event(&self.shown, session, u64::try_from(seq).unwrap_or(0), &body)
            })
            .transpose()
        })
    }

    fn head(&self, session: &SessionId) -> Result<Option<Head>> {
        let shown = self.shown.clone();
        self.tx("reading heads", |tx| {
            match slot_in(tx, &shown, session, false)?.0 {
                Slot::Free => Ok(None),
                Slot::Live(head) => Ok(Some(head)),
                Slot::Retired { .. } => Err(UserError::SessionDeleted(session.clone()).into()),
            }
        })
    }

    fn session(&self, session: &SessionId) -> Result<Option<SessionInfo>> {
        self.read_with(|c| {
            let row = c
                .query_opt(
                    "SELECT info FROM planlog_sessions WHERE session = $1",
                    &[&session.as_str()],
                )
                .map_err(|e| self.err("reading the catalogue", &e))?;
            row.map(|r| decode_info(&self.shown, session.as_str(), &r.get::<_, Vec<u8>>(0)))
                .transpose()
        })
    }

    fn sessions(&self) -> Result<Vec<SessionInfo>> {
        self.read_with(|c| {
            let rows = c
                .query(
                    "SELECT session, info FROM planlog_sessions ORDER BY session",
                    &[],
                )
                .map_err(|e| self.err("reading the catalogue", &e))?;
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

    fn state_at(&self, session: &SessionId, at: Seq) -> Result<SessionState> {
        self.read_with(|c| {
            let s = session.as_str();
            let e = |err: postgres::Error| self.err("reading state", &err);
            let mut tx = c
                .build_transaction()
                .isolation_level(postgres::IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()
                .map_err(e)?;
            let Some(row) = tx
                .query_opt("SELECT seq FROM planlog_sessions WHERE session = $1", &[&s])
                .map_err(e)?
            else {
                return Err(UserError::UnknownSession(session.clone()).into());
            };
            let last = u64::try_from(row.get::<_, i64>(0)).unwrap_or(0);
            if at.get() > last {
                return Err(UserError::SeqOutOfRange { session: session.clone(), seq: at.get(), last }.into());
            }
            let at_i = seq_i64(at.get());
            // The last plan-carrying event at or before the seq, and the last mode set: one
            // index lookup each.
            let plan_row = tx
                .query_opt(
                    "SELECT e.seq, e.body FROM planlog_events e WHERE e.session = $1 AND e.seq = (SELECT MAX(seq) FROM planlog_plan_marks WHERE session = $1 AND seq <= $2)",
                    &[&s, &at_i],
                )
                .map_err(e)?
                .ok_or_else(|| corrupt(&self.shown, session, at.get(), "no plan-carrying event at or before this seq".into()))?;
            let event = decode_event(&self.shown, session, u64::try_from(plan_row.get::<_, i64>(0)).unwrap_or(0), &plan_row.get::<_, Vec<u8>>(1))?;
            let plan = event
                .plan()
                .cloned()
                .ok_or_else(|| corrupt(&self.shown, session, event.seq.get(), "a plan mark points at an event without a plan".into()))?;
            let plan_mode = tx
                .query_opt(
                    "SELECT active FROM planlog_mode_marks WHERE session = $1 AND seq <= $2 ORDER BY seq DESC LIMIT 1",
                    &[&s, &at_i],
                )
                .map_err(e)?
                .is_some_and(|r| r.get::<_, bool>(0));
            tx.commit().map_err(e)?;
            Ok(SessionState { plan, plan_mode })
        })
    }
}
