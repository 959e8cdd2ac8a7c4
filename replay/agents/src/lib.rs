//! planlog-agents: planlog inside the agents people run, one module per agent, and the
//! agents' rules `verify` re-checks their calls with ([`Rules`]).
//!
//! # Module map
//!
//! | module | what |
//! |---|---|
//! | [`claude_code`] | Claude Code's hooks: what a hook gets, the rules before a plan tool runs, capture with the import's semantics, the plan put back into the context, the spool, installing into its settings |
//! | `rules` | the agents' rules for `verify` ([`Rules`]): how their tools refuse a call, how a call as sent reads, what a hook puts back |

pub mod claude_code;
mod rules;

pub use rules::Rules;
