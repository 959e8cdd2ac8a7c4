//! planlog inside Claude Code, through its hooks: every plan tool call recorded as it runs,
//! the plan put back into the model's context after a compaction, a resume, a clear or a
//! fork, and, when enforcing, the calls planlog's rules refuse blocked with planlog's message.
//!
//! What is Claude Code's own; what every agent's hooks share is in [`crate::hook`].
//!
//! | module | what |
//! |---|---|
//! | `foreign` | other agents' payloads that reach Claude Code's hooks ([`ForeignHost`]) |
//! | `ran` | the record of a plan tool call that ran, as an import makes it |
//! | `ordered_json` | JSON that keeps its key order, for files people keep ([`Json`]) |
//!
//! The `planlog hook claude-code` command wires these to stdin, the store and exit codes; it
//! never breaks the agent: whatever fails is a warning on stderr and exit 0, and every write
//! is stored, spooled or (refused for good) kept in the dead letters within the hook's budget.
//! Only a call the rules refuse while enforcing exits 2 (the message for the model on
//! stderr).

mod foreign;
mod ordered_json;
mod ran;

/// The tools the hooks handle.
pub const PLAN_TOOLS: [&str; 3] = ["TodoWrite", "TaskCreate", "TaskUpdate"];

pub use foreign::ForeignHost;
pub use ordered_json::Json;
pub(crate) use ordered_json::indentation;
pub(crate) use ran::ran;
