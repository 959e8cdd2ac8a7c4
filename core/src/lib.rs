//! planlog-core: the plan-keeping engine for LLM agents, pure. No filesystem, database,
//! clock or randomness: times and ids come in from the host.
//!
//! A session's plan is the fold of its event log. A plan_write call is decided against the
//! current plan (anti-cheat, the merge, limits) into an event or a refusal, sealed into an
//! [`Event`] (hash-chained) and appended to an [`EventLog`]; [`apply`] folds it into the
//! [`SessionState`]. [`PlanSession`] is what an agent loop calls.
//!
//! # Module map
//!
//! The crate has two layers and a test kit. Each layer's modules are private; what a user
//! needs is re-exported here.
//!
//! | module | what |
//! |---|---|
//! | `domain` | the plan, its rules and its record: ids, time, limits, text, plan, call, rejection, decide, event, canonical hash, write, state, errors, env, the `EventLog` port and `MemoryLog` |
//! | `agent` | the agent-loop layer, also pure: `PlanSession` and its write path, plan mode, auto-continue, injection, rendering, tool declarations |
//! | [`testkit`] | (feature `testkit`) the conformance suite every `EventLog` must pass, and `FaultyLog` |
//!
//! Layering rule: `agent` uses `domain`, never the other way; within `domain`, each module
//! uses only the modules listed before it in `domain`'s map.

mod agent;
mod domain;

#[cfg(feature = "testkit")]
pub mod testkit;

pub use domain::call::WriteCall;
pub use domain::canonical::{Canonical, Hash, HashParseError, to_canonical_vec};
pub use domain::decide::{Breach, Decision, anti_cheat_breaches, decide, merge};
pub use domain::env::{Env, TestEnv};
pub use domain::error::{LogError, OperatorError, StorageError, UserError};
pub use domain::event::{
    DecodeError, Event, EventBody, EventDraft, FORMAT_VERSION, Head, ModeSelected, Origin,
    Placement, PlanWritten, SessionStarted, WriteRejected, WriteSemantics,
};
pub use domain::ids::{CallId, EventId, IdError, ItemId, Seq, SessionId};
pub use domain::limits::{
    KEPT_SUBMISSION_CHARS, MAX_ARGUMENTS_BYTES, MAX_CALL_ID_LEN, MAX_CONTENT_LEN, MAX_ITEM_ID_LEN,
    MAX_PLAN_ITEMS, MAX_SESSION_ID_LEN,
};
pub use domain::log::{Appended, EventLog, SessionInfo, Slot, check_append};
pub use domain::memory_log::MemoryLog;
pub use domain::plan::{Plan, PlanItem, PlanStatus, Progress};
pub use domain::rejection::{Rejection, RejectionCode};
pub use domain::state::{SessionState, apply, fold, fold_bodies};
pub use domain::text::{is_unsafe_char, one_line, shown_id};
pub use domain::time::{Timestamp, TimestampError};
pub use domain::write::{Execution, ToolResult, execute_plan_write, is_cut_submission};

pub use agent::auto_continue::{AutoContinue, CONTINUE_PROMPT, RunEnd, STALL_LIMIT};
pub use agent::render::{
    PLAN_HEADER, Style, injection_text, render_block, render_markdown, status_bar,
};
pub use agent::session::{
    DelegationError, PlanSession, RequestStart, SessionOptions, WriteError, WriteOutcome,
    WriteStatus,
};
pub use agent::shared_plan::SharedPlan;
pub use agent::sink::PlanSink;
pub use agent::tool::{
    PLAN_WRITE, PLAN_WRITE_DESCRIPTION, PLANNING_GUIDELINE, ToolSpec, plan_write_schema,
};
pub use agent::view::inject_plan;

/// Plan mode (from deepseek-harness): its config, what a selection did, `exit_plan_mode` and
/// its review, and the `/plan` command.
pub mod plan_mode {
    pub use crate::agent::plan_mode::{
        CommandReply, ConfigError, EXIT_PLAN_MODE, ExitResult, ModeView, NOTICE_ENTERED,
        NOTICE_LEFT, POLICY_SECTION_NAME, POLICY_SECTION_ORDER, PlanCommand, PlanModeConfig,
        PlanReview, ReviewOutcome, SetOutcome, exit_plan_mode_spec, parse_plan_command,
    };
}

/// The examples in ARCHITECTURE.md, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../ARCHITECTURE.md")]
pub struct ArchitectureDoctests;
