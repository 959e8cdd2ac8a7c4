//! planlog-agents: planlog inside the agents people run, one module per agent, and the
//! agents' rules `verify` re-checks their calls with ([`Rules`]).
//!
//! # Module map
//!
//! | module | what |
//! |---|---|
//! | [`hook`] | what every agent's hooks share: the input, the deadline, the spool and dead letters, the ordered write path, capture with the import's semantics, the plan put back into the context |
//! | [`codex`] | Codex CLI's own: its plan tool |
//! | [`claude_code`] | Claude Code's own: the rules before a plan tool runs, other agents' payloads in its hooks, installing into its settings |
//! | `rules` | the agents' rules for `verify` ([`Rules`]): how their tools refuse a call, how a call as sent reads, what a hook puts back |

pub mod claude_code;
pub mod codex;
pub mod hook;
mod rules;

pub use rules::Rules;
