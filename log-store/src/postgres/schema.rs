//! The tables, created on first use and versioned. `planlog_migrations` records every
//! migration applied; a database whose highest version is newer than this planlog knows is
//! refused, an older one is upgraded in one transaction (under an advisory lock, so processes
//! opening a new database at once apply each migration once).
//!
//! Version 1:
//!
//! | table | key | what |
//! |---|---|---|
//! | `planlog_events` | (session, seq) | each event's canonical bytes; `call_id` unique per session |
//! | `planlog_sessions` | session | the head (last seq and hash) and the catalogue entry; its row lock orders a session's appends |
//! | `planlog_plan_marks` | (session, seq) | which seqs carry a plan (state-at-seq is one index lookup) |
//! | `planlog_mode_marks` | (session, seq) | which seqs set plan mode, and to what |
//! | `planlog_tombstones` | session | deleted ids, with the first event's hash (only a restore may take the id) |

use postgres::Transaction;

/// Every migration, in order: (version, SQL).
const MIGRATIONS: &[(i32, &str)] = &[(
    1,
    "CREATE TABLE planlog_events (
        session text NOT NULL,
        seq bigint NOT NULL CHECK (seq >= 1),
        call_id text,
        body bytea NOT NULL,
        PRIMARY KEY (session, seq)
    );
    CREATE UNIQUE INDEX planlog_events_call ON planlog_events (session, call_id) WHERE call_id IS NOT NULL;
    CREATE TABLE planlog_sessions (
        session text PRIMARY KEY,
        seq bigint NOT NULL,
        hash bytea NOT NULL,
        info bytea NOT NULL
    );
    CREATE TABLE planlog_plan_marks (session text NOT NULL, seq bigint NOT NULL, PRIMARY KEY (session, seq));
    CREATE TABLE planlog_mode_marks (session text NOT NULL, seq bigint NOT NULL, active boolean NOT NULL, PRIMARY KEY (session, seq));
    CREATE TABLE planlog_tombstones (session text PRIMARY KEY, first_hash bytea);",
)];

/// The schema version this planlog writes.
pub const PG_SCHEMA_VERSION: i32 = 1;

/// What opening found.
pub(super) enum Schema {
    /// Up to date (after upgrading from `from`, when it was older).
    Current {
        /// The version found (0: a new database).
        from: i32,
    },
    /// Written by a newer planlog.
    Newer(i32),
}

/// The highest migration applied (0: none, or no migrations table).
fn applied(tx: &mut Transaction<'_>) -> Result<i32, postgres::Error> {
    let exists: bool = tx
        .query_one("SELECT to_regclass('planlog_migrations') IS NOT NULL", &[])?
        .get(0);
    if !exists {
        return Ok(0);
    }
    Ok(tx
        .query_one(
            "SELECT COALESCE(MAX(version), 0) FROM planlog_migrations",
            &[],
        )?
        .get(0))
}

/// Brings the schema up to date in `tx` (the caller commits). A database already up to date
/// is only read, so a role that may read and write rows but not create tables can use it.
pub(super) fn migrate(tx: &mut Transaction<'_>) -> Result<Schema, postgres::Error> {
    let found = applied(tx)?;
    if found > PG_SCHEMA_VERSION {
        return Ok(Schema::Newer(found));
    }
    if found == PG_SCHEMA_VERSION {
        return Ok(Schema::Current { from: found });
    }
    // One process migrates at a time; the others wait, then find it done.
    tx.execute("SELECT pg_advisory_xact_lock(7420310241)", &[])?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS planlog_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
    )?;
    let found = applied(tx)?;
    if found > PG_SCHEMA_VERSION {
        return Ok(Schema::Newer(found));
    }
    for (version, sql) in MIGRATIONS.iter().filter(|(v, _)| *v > found) {
        tx.batch_execute(sql)?;
        tx.execute(
            "INSERT INTO planlog_migrations (version) VALUES ($1)",
            &[version],
        )?;
    }
    Ok(Schema::Current { from: found })
}
