//! planlog-core: the domain of planlog, pure. No filesystem, database, clock or randomness:
//! times and ids come in from the caller.
//!
//! A session's plan is the fold of its event log. A plan_write call is parsed
//! ([`WriteCall`]), decided against the current plan ([`decide`]: anti-cheat, merge, limits)
//! into an event body or a [`Rejection`], sealed into an [`Event`] (hash-chained) and
//! appended to an [`EventLog`]; [`apply`] folds it into the [`SessionState`].
//!
//! # Module map
//!
//! | module | what |
//! |---|---|
//! | `ids` | validated ids: [`SessionId`], [`ItemId`], [`Seq`], [`CallId`] |
//! | `time` | [`Timestamp`] (RFC 3339 text, given by the caller) |
//! | `plan` | [`PlanItem`], [`PlanStatus`], [`Plan`], [`Progress`] |
//! | `call` | parsing plan_write arguments with the strict input checks |
//! | `rejection` | [`Rejection`]: what the model did wrong and what to do |
//! | `decide` | [`decide`], the anti-cheat rules and the merge |
//! | `event` | the [`Event`] envelope and kinds, encode/decode, format version |
//! | `canonical` | canonical JSON and the SHA-256 [`Hash`] chain |
//! | `state` | [`SessionState`], [`apply`], [`fold`] |
//! | `store` | [`PlanStore`], the thread-safe current plan |
//! | `render` | injection text, terminal block, status bar, markdown file |
//! | `tool` | the plan_write [`ToolSpec`], guideline text and [`execute_plan_write`] |
//! | `log` | the [`EventLog`] port, [`SessionInfo`], [`check_append`] |
//! | `memory_log` | [`MemoryLog`] |
//! | `env` | [`Env`]: the host's clock and id source; [`StepEnv`] for tests |
//! | `session` | [`PlanSession`] (restore, plan_write, injection, delegation, plan mode), auto-continue |
//! | `sink` | [`PlanSink`], fed after successful writes |
//! | `error` | [`LogError`] split by who acts: [`UserError`], [`OperatorError`] |
//! | `conformance` | (feature `conformance`) the suite every `EventLog` must pass |

mod call;
mod canonical;
mod decide;
mod env;
mod error;
mod event;
mod ids;
mod log;
mod memory_log;
mod plan;
mod rejection;
pub mod render;
pub mod session;
mod sink;
mod state;
mod store;
mod time;
mod tool;

#[cfg(feature = "conformance")]
pub mod conformance;

pub use call::WriteCall;
pub use canonical::{Hash, HashParseError, to_canonical_vec};
pub use decide::{Decision, Finding, anti_cheat_findings, decide, merge};
pub use env::{Env, StepEnv};
pub use error::{LogError, OperatorError, UserError};
pub use event::{
    DecodeError, Event, EventBody, EventDraft, FORMAT_VERSION, ModeSelected, Origin, Placement,
    PlanWritten, SessionStarted, WriteRejected, WriteSemantics,
};
pub use ids::{
    CallId, EventId, IdError, ItemId, MAX_CALL_ID_LEN, MAX_ITEM_ID_LEN, MAX_SESSION_ID_LEN, Seq,
    SessionId,
};
pub use log::{Appended, EventLog, Head, SessionInfo, Slot, check_append};
pub use memory_log::MemoryLog;
pub use plan::{MAX_CONTENT_LEN, MAX_PLAN_ITEMS, Plan, PlanItem, PlanStatus, Progress};
pub use rejection::{Rejection, RejectionCode};
pub use render::{PLAN_HEADER, Style, format_plan, render_block, render_markdown, status_bar};
pub use session::{
    DelegationError, PlanSession, SessionOptions, StepStart, WriteError, WriteOutcome, WriteStatus,
};
pub use sink::PlanSink;
pub use state::{SessionState, apply, fold, fold_bodies};
pub use store::PlanStore;
pub use time::{Timestamp, TimestampError};
pub use tool::{
    Execution, MAX_ARGUMENTS_BYTES, PLAN_WRITE, PLAN_WRITE_DESCRIPTION, PLANNING_GUIDELINE,
    ToolResult, ToolSpec, execute_plan_write, is_cut_submission, plan_write_schema,
};

/// The examples in ARCHITECTURE.md, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../ARCHITECTURE.md")]
pub struct ArchitectureDoctests;
