//! planlog-store: durable event logs.
//!
//! # Module map
//!
//! | module | what |
//! |---|---|
//! | `redb_log` | [`RedbLog`], the [`planlog_core::EventLog`] in one redb file |
//! | `group_commit` | concurrent appends sharing one durable commit ([`CommitStats`]) |
//! | `codec` | stored forms: events (self-checking by hash), catalogue entries with a checksum |
//! | `schema` | the redb tables and [`STORE_FORMAT`] |

mod codec;
mod group_commit;
mod redb_log;
mod schema;

pub use group_commit::CommitStats;
pub use redb_log::{OpenOptions, RedbLog};
pub use schema::STORE_FORMAT;
