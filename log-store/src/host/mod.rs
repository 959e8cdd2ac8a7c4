//! Host adapters: what a program embedding planlog needs around an [`EventLog`] that is not the
//! log itself. None of them depends on which store is underneath; they live apart from the
//! stores so that the stores stay one concept each.
//!
//! | module | what |
//! |---|---|
//! | `system_env` | [`SystemEnv`]: the real clock, random ULIDs and jittered waits |
//! | `plan_file` | [`PlanFiles`], the markdown plan file sink beside a redb store |
//! | `background_sink` | [`BackgroundSink`]: a sink's work off the reply path, on a thread of its own |
//! | `async_session` | [`AsyncPlanSession`]: a session on a thread of its own, driven with futures |
//! | [`location`] | where the store lives when the user does not say |
//!
//! [`EventLog`]: planlog_core::EventLog

mod async_session;
mod background_sink;
pub mod location;
mod plan_file;
mod system_env;

pub use async_session::{AsyncPlanSession, SessionGone, StartError};
pub use background_sink::BackgroundSink;
pub use plan_file::{PlanFileError, PlanFiles};
pub use system_env::SystemEnv;
