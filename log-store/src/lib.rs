//! planlog-store: durable planlog event logs.
//!
//! # Module map
//!
//! | module | what |
//! |---|---|
//! | `redb` | [`RedbLog`], the [`planlog_core::EventLog`] in one redb file ([`OpenOptions`], group commit, codec, tables) |
//! | `location` | the default store path ([`resolve_store_path`]) |
//! | `plan_file` | [`PlanFiles`], the markdown plan file sink |
//! | `system_env` | [`SystemEnv`]: the real clock, random ULIDs and jittered waits |

mod location;
mod plan_file;
mod redb;
mod system_env;

pub use location::{LocationEnv, NoLocation, REPO_DIR, STORE_FILE, git_root, resolve_store_path};
pub use plan_file::{PlanFileError, PlanFiles};
pub use redb::{CommitStats, OpenOptions, REDB_STORE_FORMAT as STORE_FORMAT, RedbLog};
pub use system_env::SystemEnv;
