//! planlog-audit: reading a planlog log as an auditor does. Everything here is derived from
//! the events, never stored, and knows no agent: the checks that need an agent's own rules
//! come in through [`AgentRules`].
//!
//! # Module map
//!
//! | module | what |
//! |---|---|
//! | `history` | each event in words ([`HistoryEntry`]: items named by id and text, flags, compactions, restores, the call as sent), item lives ([`ItemLives`]), diffs |
//! | `read_ahead` | a session read and decoded on threads of its own while the caller works ([`read_ahead`]), or worked on there too ([`read_ahead_map`]) |
//! | `checkpoints` | a checkpoint compared with the plan it belongs with ([`Anchors`]) |
//! | `verify` | re-proving a log: hash chains, seqs, call ids, recorded results re-run, origins, fork lineage, the store's derived tables ([`SessionCheck`], [`verify_session`]) |
//! | `agent_rules` | what verify asks of the agents' rules ([`AgentRules`]) |

mod agent_rules;
mod checkpoints;
mod history;
mod read_ahead;
mod verify;

pub use agent_rules::{AgentRules, Agreement, NoAgentRules};
pub use checkpoints::{Anchors, Compared, checkpoint_differences, no_earlier, plans_in};
pub use history::{
    HistoryEntry, ItemLife, ItemLives, Transition, describe_flag, describe_session, diff, flags_of,
    history, history_from, history_through, item_lives, shown, transitions,
};
pub use read_ahead::{read_ahead, read_ahead_map};
pub use verify::{Finding, Report, SessionCheck, StateLookup, verify_session};
