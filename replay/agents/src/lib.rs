//! planlog-agents: planlog inside the agents people run, one module per agent, and the
//! agents' rules `verify` re-checks their calls with ([`Rules`]).
//!
//! # Module map
//!
//! | module | what |
//! |---|---|
//! | [`hook`] | what every agent's hooks share: the input, the deadline, the spool and dead letters, the ordered write path, capture with the import's semantics, the plan put back into the context |
//! | [`codex`] | Codex CLI's own: its plan tool |
//! | [`gemini`] | Gemini CLI's own: its plan tool, its hook matcher and timeout |
//! | [`cursor`] | Cursor's own: its todo tool (merges by id), its payloads in Claude Code's names |
//! | [`opencode`] | opencode's own: its plan tool, and the plugin that forwards its events |
//! | [`copilot`] | Copilot CLI's own: its todo table read after each `sql` call, its payloads in Claude Code's names |
//! | [`claude_code`] | Claude Code's own: the rules before a plan tool runs, other agents' payloads in its hooks, installing into its settings |
//! | [`settings`] | installing the hooks into an agent's hooks file (Claude Code, Codex, Gemini CLI), and taking them out |
//! | [`doctor`] | what `planlog doctor` finds of each agent on the machine: version, plan tools, hooks and whether they run, the store |
//! | `rules` | the agents' rules for `verify` ([`Rules`]): how their tools refuse a call, how a call as sent reads, what a hook puts back |

pub mod claude_code;
pub mod codex;
pub mod copilot;
pub mod cursor;
pub mod doctor;
pub mod gemini;
pub mod hook;
pub mod opencode;
mod rules;
pub mod settings;

pub use rules::Rules;
