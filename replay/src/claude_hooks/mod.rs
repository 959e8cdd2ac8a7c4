//! planlog inside Claude Code, through its hooks: every plan tool call recorded as it runs,
//! the plan put back into the model's context after a compaction, a resume, a clear or a
//! fork, and, when enforcing, the calls planlog's rules refuse blocked with planlog's message.
//!
//! | module | what |
//! |---|---|
//! | [`input`] | what Claude Code sends a hook |
//! | [`deadline`] | the time a hook's work must be done by |
//! | [`line_file`] | files of framed lines beside the store: locked, never a foreign file |
//! | [`spool`] | hook writes waiting for the store (the spool), and those it refuses for good (the dead letters) |
//! | [`capture`] | where a hook's writes go, and the records they make (with import's semantics) |
//! | [`write_path`] | the one ordered way a hook writes: drain first, spool on any failure |
//! | [`mod@check`] | the rules enforced before a plan tool runs (`PreToolUse`, when enforcing) |
//! | [`restore`] | the plan as context (`SessionStart`, `UserPromptSubmit`); forks |
//! | [`ordered_json`] | JSON that keeps its key order, for files people keep |
//! | [`settings`] | installing the hooks into Claude Code's settings, and taking them out |
//!
//! The `planlog hook claude-code` command wires these to stdin, the store and exit codes; it
//! never breaks the agent: whatever fails is a warning on stderr and exit 0, and every write
//! is stored, spooled or (refused for good) kept in the dead letters within the hook's budget.
//! Only a call the rules refuse while enforcing exits 2 (the message for the model on
//! stderr).

pub mod capture;
pub mod check;
pub mod deadline;
pub mod input;
pub mod line_file;
pub mod ordered_json;
pub mod restore;
pub mod settings;
pub mod spool;
pub mod write_path;

pub use check::{PLAN_TOOLS, check};
