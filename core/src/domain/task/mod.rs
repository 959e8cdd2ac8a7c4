//! Tasks: a plan changed one item per call. What a call says ([`TaskCall`]), the rules a task
//! write keeps, and what it does to the plan, in planlog's own terms. No vendor's schema is
//! here: reading a call's JSON (Claude Code's Tasks tools, planlog's `task_*` MCP tools) and
//! the result a model reads are the agent layer's (`agent::task_tool`), so that what verify
//! re-proves does not change when a vendor renames a field.
//!
//! A create is recorded as an `upsert` of the new item, an update as an `upsert` of every
//! item it changed (`addBlocks` changes the other item), a delete as a `remove`. A claim (an
//! open, unowned task that waits for nothing gets its owner and starts) and a release (only by
//! its holder: free again, or handed over) are `upsert`s of the task; a claim of a task held by
//! someone else is refused, naming the holder, and that refusal is on record like any other.
//! Two agents racing for one task cannot both win: each write is decided against the plan it
//! is appended after, and an append that loses the race is decided again.
//!
//! | module | what |
//! |---|---|
//! | `types` | a task call and its parts; applying a change to an item; the next task id; ready work |
//! | `rules` | the rules a task write keeps, worded for task calls |
//! | `decide` | one create, update, claim or release decided against the session's state |

mod decide;
mod rules;
mod types;

pub use decide::{TaskWrite, decide_task_write};
pub(crate) use rules::task_rejection;
pub use rules::task_rules;
pub use types::{
    NewTask, TaskCall, TaskChange, TaskStatus, apply_change, is_ready, next_task_id, with_blocker,
};
