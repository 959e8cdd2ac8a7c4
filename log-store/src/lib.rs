//! planlog-store: durable event logs.
//!
//! # Module map
//!
//! | module | what |
//! |---|---|
//! | `redb_log` | [`RedbLog`], the [`planlog_core::EventLog`] in one redb file |
//! | `group_commit` | concurrent appends sharing one durable commit ([`CommitStats`]) |
//! | `codec` | stored forms: events (self-checking by hash), catalogue entries with a checksum |
//! | `location` | the default store path ([`resolve_store_path`]) |
//! | `plan_file` | [`PlanFiles`], the markdown plan file sink |
//! | `system_env` | [`SystemEnv`]: the real clock and random ULIDs |
//! | `schema` | the redb tables and [`STORE_FORMAT`] |

mod codec;
mod group_commit;
mod location;
mod plan_file;
mod redb_log;
mod schema;
mod system_env;

pub use group_commit::CommitStats;
pub use location::{LocationEnv, NoLocation, REPO_DIR, STORE_FILE, git_root, resolve_store_path};
pub use plan_file::PlanFiles;
pub use redb_log::{OpenOptions, RedbLog};
pub use schema::STORE_FORMAT;
pub use system_env::SystemEnv;
