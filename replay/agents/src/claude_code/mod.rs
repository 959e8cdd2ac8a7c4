//! planlog inside Claude Code, through its hooks: every plan tool call recorded as it runs,
//! the plan put back into the model's context after a compaction, a resume, a clear or a
//! fork, and, when enforcing, the calls planlog's rules refuse blocked with planlog's message.
//!
//! | module | what |
//! |---|---|
//! | `input` | what Claude Code sends a hook ([`HookInput`]) |
//! | `deadline` | the time a hook's work must be done by ([`Deadline`]) |
//! | `line_file` | files of framed lines beside the store: locked, never a foreign file |
//! | `spool` | hook writes waiting for the store ([`Spool`]), and those it refuses for good ([`DeadLetters`]) |
//! | `capture` | where a hook's writes go ([`Target`]), and the records they make (with import's semantics) |
//! | `write_path` | the one ordered way a hook writes: drain first, spool on any failure ([`WritePath`]) |
//! | `check` | the rules enforced before a plan tool runs (`PreToolUse`, when enforcing: [`check()`]) |
//! | [`restore`] | the plan as context (`SessionStart`, `UserPromptSubmit`); compactions; forks |
//! | `ordered_json` | JSON that keeps its key order, for files people keep ([`Json`]) |
//! | [`settings`] | installing the hooks into Claude Code's settings, and taking them out |
//!
//! The `planlog hook claude-code` command wires these to stdin, the store and exit codes; it
//! never breaks the agent: whatever fails is a warning on stderr and exit 0, and every write
//! is stored, spooled or (refused for good) kept in the dead letters within the hook's budget.
//! Only a call the rules refuse while enforcing exits 2 (the message for the model on
//! stderr).

mod capture;
mod check;
mod deadline;
mod input;
mod line_file;
mod ordered_json;
pub mod restore;
pub mod settings;
mod spool;
mod write_path;

pub use capture::Target;
pub use check::{PLAN_TOOLS, check};
pub use deadline::Deadline;
pub use input::{ForeignHost, HookInput, NotHookInput};
pub use line_file::frame;
pub use ordered_json::Json;
pub use spool::{Compaction, DeadLetter, DeadLetters, Entry, Kind, Spool};
pub use write_path::{Drained, SPOOL_RESERVE, WritePath, Written};
