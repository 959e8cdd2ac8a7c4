//! planlog-store: the durable event logs, a journal with a redb index (embedded, the
//! default), or PostgreSQL (a database shared by many machines), and the host adapters
//! around them: the real clock, the
//! markdown plan file, the default store location, and an async session.
//!
//! # Quick start
//!
//! A synchronous agent host on the durable store (`examples/sync_host.rs`, run as a test):
//!
//! ```
#![doc = include_str!("../examples/sync_host.rs")]
//! ```
//!
//! # Which type do I need
//!
//! - The durable log: [`JournaledLog`] (`JournaledLog::open(path)`; [`JournaledLog::options`]
//!   for read-only opens, how the index is kept up to date, and
//!   [`JournaledOptions::open_any`], which also opens, or upgrades, a store of the older
//!   layout, [`RedbLog`]), or `PgLog` (`PgLog::open(url)`) for a store shared by many
//!   machines; [`StoreAddress`] opens any of them from what a user typed. Give it to
//!   `planlog_core::PlanSession::builder`.
//! - The host's clock and ids: [`host::SystemEnv`].
//! - The markdown plan file beside the store: [`host::PlanFiles`], a `PlanSink`.
//! - An async host (tokio or any executor): [`host::AsyncPlanSession`].
//! - Where the store lives when the user does not say: [`host::location`].
//!
//! Everything here blocks on file IO (see `planlog_core::PlanSession`, § Blocking), except
//! [`host::AsyncPlanSession`], which runs it on a thread of its own.
//!
//! # Module map
//!
//! | module | what |
//! |---|---|
//! | `journaled` | [`JournaledLog`], the `EventLog` whose record is the journal and whose index is redb (the default file store; upgrades from the redb layout) |
//! | `redb` | [`RedbLog`], the `EventLog` in one redb file, the older layout ([`OpenOptions`], group commit, tables, reopening after errors) |
//! | `postgres` | `PgLog`, the `EventLog` in a PostgreSQL database (schema and migrations, a connection pool, errors); behind the `postgres` feature |
//! | `group_commit` | concurrent appends sharing one durable commit (the redb store's, the journal's) |
//! | `codec` | the stored forms of events and catalogue entries (both backends) |
//! | `address` | [`StoreAddress`]: a store named by a path or a `postgres://` URL, opened either way; URLs without their passwords |
//! | [`journal`] | the journal, the store of record: framed records (events and tombstones), batches, torn tails cut, damage refused; a simulated disk that loses power |
//! | `wake_later` | helper threads' wake-ups held back until a call's answer is out (the async session's calls) |
//! | [`host`] | what a host needs around a log: [`host::SystemEnv`], [`host::PlanFiles`], [`host::BackgroundSink`], [`host::AsyncPlanSession`], [`host::location`] |
//!
//! # Features
//!
//! - `postgres` (default): `PgLog` and `postgres://` addresses, with the
//!   rust-postgres client (which brings tokio). Without it the crate builds with redb alone,
//!   and [`StoreAddress::open`] of a URL says this build cannot open PostgreSQL stores.
//! - `bench`: the benchmarks' SQLite peer.

mod address;
mod codec;
mod group_commit;
pub mod host;
pub mod journal;
mod journaled;
#[cfg(feature = "postgres")]
mod postgres;
mod redb;
mod wake_later;

pub use address::{SCHEMES as POSTGRES_SCHEMES, StoreAddress, UnknownScheme};
pub use journaled::{
    Compacted, Indexing, JournaledLog, JournaledOptions, LAZY_LIMIT, journal_path, users_path,
};
#[cfg(feature = "postgres")]
pub use postgres::{PG_SCHEMA_VERSION, PgLog};
pub use redb::{
    CommitStats, OpenOptions, REDB_STORE_FORMAT as STORE_FORMAT, RedbLog, settle_abandoned_opens,
};
