//! planlog-store: where planlog meets the operating system. The durable event log on redb,
//! the real clock, the markdown plan file, the default store location, and
//! [`AsyncPlanSession`] for async hosts.
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
//! - The durable log: [`RedbLog`] (`RedbLog::open(path)`, or [`RedbLog::options`] for a
//!   read-only or integrity-checked open), or [`PgLog`] (`PgLog::open(url)`) for a store
//!   shared by many machines; [`StoreAddress`] opens either from what a user typed. Give it to
//!   `planlog_core::PlanSession::builder`.
//! - The host's clock and ids: [`SystemEnv`].
//! - The markdown plan file beside the store: [`PlanFiles`], a `PlanSink`.
//! - An async host (tokio or any executor): [`AsyncPlanSession`].
//! - Where the store lives when the user does not say: [`location`].
//!
//! Everything here blocks on file IO (see `planlog_core::PlanSession`, § Blocking), except
//! [`AsyncPlanSession`], which runs it on a thread of its own.
//!
//! # Module map
//!
//! | module | what |
//! |---|---|
//! | `redb` | [`RedbLog`], the `EventLog` in one redb file ([`OpenOptions`], group commit, tables, reopening after errors) |
//! | `postgres` | [`PgLog`], the `EventLog` in a PostgreSQL database (schema and migrations, a connection pool, errors) |
//! | `codec` | the stored forms of events and catalogue entries (both backends) |
//! | `address` | [`StoreAddress`]: a store named by a path or a `postgres://` URL, opened either way |
//! | `async_session` | [`AsyncPlanSession`]: a session on a thread of its own, driven with futures |
//! | `plan_file` | [`PlanFiles`], the markdown plan file sink |
//! | `background_sink` | [`BackgroundSink`]: a sink's work off the reply path, on a thread of its own |
//! | [`location`] | the default store path |
//! | `system_env` | [`SystemEnv`]: the real clock, random ULIDs and jittered waits |

mod address;
mod async_session;
mod background_sink;
mod codec;
pub mod location;
mod plan_file;
mod postgres;
mod redb;
mod system_env;

pub use address::{StoreAddress, UnknownScheme};
pub use async_session::{AsyncPlanSession, SessionGone, StartError};
pub use background_sink::BackgroundSink;
pub use plan_file::{PlanFileError, PlanFiles};
pub use postgres::{PG_SCHEMA_VERSION, PgLog, SCHEMES as POSTGRES_SCHEMES};
pub use redb::{CommitStats, OpenOptions, REDB_STORE_FORMAT as STORE_FORMAT, RedbLog};
pub use system_env::SystemEnv;
