//! What every agent's hooks share: the input they get, the time they have, the files of lines
//! beside the store (the spool and the dead letters), the one ordered way a hook writes, where
//! its writes go and the records they make (with the import's semantics), and the plan put
//! back into the model's context.
//!
//! | module | what |
//! |---|---|
//! | `agent` | whose hook a call is ([`Agent`]) |
//! | `check` | the rules enforced before a plan tool runs, when enforcing ([`check()`]) |
//! | `input` | what an agent sends a hook ([`HookInput`]: Claude Code's field names, which Codex shares) |
//! | `deadline` | the time a hook's work must be done by ([`Deadline`]) |
//! | `line_file` | files of framed lines beside the store ([`LineFile`]: the hook spool, the dead letters, `planlog mcp`'s spool): locked, never a foreign file |
//! | `spool` | hook writes waiting for the store ([`Spool`]), and those it refuses for good ([`DeadLetters`]) |
//! | `capture` | where a hook's writes go ([`Target`]), and the records they make (with import's semantics) |
//! | `write_path` | the one ordered way a hook writes: drain first, spool on any failure ([`WritePath`]) |
//! | [`restore`] | the plan as context (`SessionStart`, `UserPromptSubmit`); compactions; forks |

mod agent;
mod capture;
mod check;
mod deadline;
mod input;
mod line_file;
pub mod restore;
mod spool;
mod write_path;

pub use agent::Agent;
pub use capture::Target;
pub use check::{CHECKED_TOOLS, check};
pub use deadline::Deadline;
pub use input::{HookInput, NotHookInput};
pub use line_file::{Line, LineFile, LineFileError, ReadLine, frame};
pub use spool::{Compaction, DeadLetter, DeadLetters, Entry, Kind, Spool};
pub use write_path::{Drained, SPOOL_RESERVE, WritePath, Written};
