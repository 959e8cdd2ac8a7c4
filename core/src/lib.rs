//! planlog-core: the plan-keeping engine for LLM agents, pure. An agent keeps its working plan
//! with one tool, `plan_write`; planlog makes every call an immutable, hash-chained event in
//! the session's log, and the plan is the fold of that log. No filesystem, database, clock or
//! randomness here: the log and the clock come from the host (`planlog-store` has the durable
//! log, the real clock and an async wrapper).
//!
//! A [`PlanSession`] is synchronous: its methods that reach the log block the calling thread
//! (they are marked **Blocks**); async hosts use `planlog_store::host::AsyncPlanSession`, which runs
//! the session on a thread of its own.
//!
//! # Quick start
//!
//! An agent loop with a scripted model, on the in-memory log (swap in
//! `planlog_store::RedbLog` and `SystemEnv` for a durable one):
//!
//! ```
//! use planlog_core::{MemoryLog, PlanSession, SessionId, TestEnv};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let id = SessionId::new("my-project")?;
//! let mut plan = PlanSession::builder(MemoryLog::new(), TestEnv::default()).open(&id)?;
//! let tools = plan.tools(); // declare these to the model (plan_write, and exit_plan_mode in plan mode)
//! # assert_eq!(tools[0].name, "plan_write");
//! let mut history = vec!["user: add YAML config loading".to_owned()];
//!
//! // Before every model request: the request boundary, then the view with the plan injected.
//! if let Some(notice) = plan.before_request().notice {
//!     history.push(notice);
//! }
//! let _request = plan.inject(&history, |text| format!("user: {text}")); // send; keep `history`
//!
//! // The model calls plan_write: the event is stored before the result exists.
//! let args = r#"{"steps":[{"id":"1","content":"Write the parser","status":"in_progress"}]}"#;
//! let result = plan.plan_write(Some("call_1"), Some(1), args).durable()?; // `?`: not stored
//! history.push(format!("tool: {}", result.content));
//! plan.turn_closed();
//! assert!(plan.plan_text().contains("[>] Write the parser"));
//! # Ok(()) }
//! ```
//!
//! # Which type do I need
//!
//! - An agent loop: [`PlanSession`], started with [`PlanSession::builder`]; its calls return
//!   [`WriteOutcome`] (the model's [`ToolResult`] and whether the log holds it).
//! - Declaring the tool to a model: [`PlanSession::tools`] gives [`ToolSpec`]s, with
//!   `to_openai` / `to_anthropic` / `to_mcp`; results convert the same way.
//! - A log: [`MemoryLog`] here (tests, sub-agents), `planlog_store::RedbLog` for the durable
//!   one; both are [`EventLog`]s. Times and ids: [`TestEnv`] here, `planlog_store::host::SystemEnv`.
//! - Showing the plan: [`render`] (injection text, terminal block, markdown), [`SharedPlan`]
//!   for UI threads, [`PlanSink`] to be fed after writes.
//! - Plan mode: [`plan_mode`] and [`PlanSession::begin_review`].
//! - Reading a log yourself: [`events`] (the record), [`rules`] (what plan_write decides),
//!   [`SessionState`] and [`apply`]; audit and verify live in `planlog-audit`, import in `planlog-import`.
//! - Writing a new log backend: [`EventLog`], [`log::check_append`], and the `testkit` feature.
//!
//! # Module map
//!
//! The code has two layers and a test kit; their modules are private and what users need is
//! re-exported here and in the grouped modules below.
//!
//! | code | what |
//! |---|---|
//! | `domain` | the plan, its rules and its record: ids, time, limits, text, plan, call, rejection, decide, event, canonical hash, write, state, errors, env, the `EventLog` port and `MemoryLog` |
//! | `agent` | the agent-loop layer, also pure: `PlanSession` (builder, write path, outcome, plan mode), auto-continue, injection, rendering, tool declarations |
//! | `testkit` | (feature `testkit`) the conformance suite every `EventLog` must pass, and `FaultyLog` |
//!
//! Layering rule: `agent` uses `domain`, never the other way; inside each, a module uses only
//! the modules listed before it in its layer's map.
//!
//! Semver: options are set through builders ([`SessionBuilder`]) and the enums that will grow
//! ([`WriteStatus`], [`WriteError`], [`OperatorError`]) are `#[non_exhaustive]`, so adding an
//! option or a case is not a breaking change. Event and plan structs are the stored format:
//! they change only with a new event format.

mod agent;
mod domain;

#[cfg(feature = "testkit")]
pub mod testkit;

pub use agent::session::{
    CallTool, DelegationError, IntoSharedLog, PendingReview, PlanSession, RequestStart,
    SessionBuilder, UnsavedCall, WriteError, WriteOutcome, WriteStatus,
};
pub use agent::shared_plan::SharedPlan;
pub use agent::sink::PlanSink;
pub use agent::tool::ToolSpec;
pub use domain::env::{Env, TestEnv};
pub use domain::error::{LogError, OperatorError, StorageError, UserError};
pub use domain::ids::{CallId, EventId, IdError, ItemId, Seq, SessionId};
pub use domain::log::{EventLog, IndexEntry, SessionInfo, index_entries};
pub use domain::memory_log::MemoryLog;
pub use domain::plan::{ItemFinder, Plan, PlanItem, PlanStatus, Progress};
pub use domain::scan::{Chunks, ReadRange};
pub use domain::state::{SessionState, apply, apply_owned, fold};
pub use domain::time::{Timestamp, TimestampError};
pub use domain::write::ToolResult;

/// The record: events, their envelope and kinds, and the hash chain.
pub mod events {
    pub use crate::domain::canonical::{Canonical, Hash, HashParseError, to_canonical_vec};
    pub use crate::domain::event::{
        CheckpointSeen, ContextCompacted, DecodeError, EVENT_FORMAT, Event, EventBody, EventDraft,
        Head, ModeSelected, Origin, Placement, PlanRestored, PlanWritten, SessionDescription,
        SessionStarted, SourceLine, ToolCall, ToolCallResult, WriteRejected, WriteSemantics,
    };
    pub use crate::domain::sealed::SealedEvent;
    pub use crate::domain::state::{
        fold_bodies, highest_numeric_id, ids_issued_after, ids_issued_for, stamp_ids_issued,
    };
}

/// What plan_write decides: argument parsing, anti-cheat, the merge, and one call worked out
/// into its result and event (what `verify` re-runs).
pub mod rules {
    pub use crate::domain::call::WriteCall;
    pub use crate::domain::decide::{
        Breach, Decision, DependencyProblem, anti_cheat_breaches, blocked_starts, decide,
        limit_breaches, merge, new_dependency_problem, remove, upsert,
    };
    pub use crate::domain::rejection::{Rejection, RejectionCode};
    pub use crate::domain::write::{
        Execution, excerpt_of, execute_plan_write, is_cut_submission, is_cut_text,
    };
}

/// Task calls (one item per call): the call, its rules and its decision (planlog's own
/// terms), and the task tools as agents call them (Claude Code's Tasks schemas: reading the
/// arguments, the results, one call run).
pub mod tasks {
    pub use crate::agent::task_tool::{
        TaskTool, execute_task_tool, parse_task_call, task_json, write_result,
    };
    pub use crate::domain::task::{
        NewTask, TaskCall, TaskChange, TaskStatus, TaskWrite, apply_change, decide_task_write,
        is_ready, next_task_id, task_rules, with_blocker,
    };
}

/// For log backends: the append checks every backend makes, and what they see.
pub mod log {
    pub use crate::domain::event::Head;
    pub use crate::domain::log::{
        Appended, EventLog, SessionInfo, Slot, check_append, check_encoded, check_placement,
        repeated_in_stream, streamed_count,
    };
}

/// Every limit planlog enforces.
pub mod limits {
    pub use crate::domain::limits::*;
}

/// Showing a plan: to the model (the injection text), to people (the terminal block, the
/// status bar, the markdown file), safely (every model text on one line).
pub mod render {
    pub use crate::agent::render::{
        PLAN_HEADER, Style, injection_text, item_line, render_block, render_markdown, status_bar,
    };
    pub use crate::agent::view::inject_plan;
    pub use crate::domain::text::{
        NAMED_ITEM_CHARS, is_unsafe_char, named_item, one_line, push_named_item, push_quoted,
        shortened, shown_id,
    };
}

/// The plan_write tool as declared to a model.
pub mod tool {
    pub use crate::agent::task_tool::{task_tool_spec, task_tool_specs};
    pub use crate::agent::tool::{
        PLAN_WRITE, PLAN_WRITE_DESCRIPTION, PLANNING_GUIDELINE, PLANNING_GUIDELINE_MCP, ToolSpec,
        plan_write_schema,
    };
}

/// Plan mode (from deepseek-harness): its config, what a selection did, `exit_plan_mode` and
/// its review, and the `/plan` command.
pub mod plan_mode {
    pub use crate::agent::plan_mode::{
        CommandReply, ConfigError, EXIT_PLAN_MODE, ExitResult, ModeView, NOTICE_ENTERED,
        NOTICE_LEFT, POLICY_SECTION_NAME, POLICY_SECTION_ORDER, PlanCommand, PlanModeConfig,
        PlanReview, ReviewOutcome, SetOutcome, exit_plan_mode_spec, parse_plan_command,
    };
    pub use crate::agent::session::PendingReview;
}

/// harness9's auto-continue: keep the agent going while the plan has active items.
pub mod auto_continue {
    pub use crate::agent::auto_continue::{AutoContinue, CONTINUE_PROMPT, RunEnd, STALL_LIMIT};
}

/// The examples in ARCHITECTURE.md, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../ARCHITECTURE.md")]
pub struct ArchitectureDoctests;
