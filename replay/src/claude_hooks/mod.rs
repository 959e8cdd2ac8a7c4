//! planlog inside Claude Code, through its hooks: every plan tool call recorded as it runs,
//! the calls planlog's rules refuse blocked with planlog's message, and the plan put back
//! into the model's context after a compaction, a resume, a clear or a fork.
//!
//! | module | what |
//! |---|---|
//! | [`input`] | what Claude Code sends a hook |
//! | [`mod@check`] | the rules enforced before a plan tool runs (`PreToolUse`) |
//! | [`capture`] | where a hook's calls go, and the records they make (with import's semantics) |
//! | [`restore`] | the plan as context (`SessionStart`, `UserPromptSubmit`); forks |
//! | [`spool`] | hook calls that could not be stored, kept beside the store until they can |
//! | [`settings`] | installing the hooks into Claude Code's settings, and taking them out |
//!
//! The `planlog hook claude-code` command wires these to stdin, the store and exit codes; it
//! never breaks the agent: whatever fails is a warning on stderr and exit 0, except a call
//! the rules refuse (exit 2, the message for the model on stderr).

pub mod capture;
pub mod check;
pub mod input;
pub mod restore;
pub mod settings;
pub mod spool;

pub use check::{PLAN_TOOLS, check};
