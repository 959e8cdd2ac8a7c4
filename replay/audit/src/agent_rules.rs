//! What verify asks of the agents whose calls a log records, without knowing any of them:
//! how an agent's own tool refuses a call, whether a change was read right from the call as
//! the agent sent it, and what an agent's hook puts back into its context. The binary passes
//! the rules of the agents it knows (`planlog-agents`); without them ([`NoAgentRules`]) those
//! checks are skipped, never failed.

use planlog_core::events::ToolCall;
use planlog_core::rules::RejectionCode;
use planlog_core::{Plan, PlanItem};
use serde_json::Value;

/// How a recorded call's arguments compare with what was derived from them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Agreement {
    /// They agree.
    Agrees,
    /// They do not: what differs.
    Differs(String),
    /// Not read again (a tool these rules do not know, arguments kept as an excerpt).
    NotChecked,
}

/// The agent-specific checks verify runs.
pub trait AgentRules: Send + Sync {
    /// The refusal an agent's own rules (a hook's check before the tool runs) give a call of
    /// `tool` with `submitted` against `plan`: `Some(None)` when they allow it, `None` when
    /// these rules do not know the tool.
    fn refusal(&self, plan: &Plan, tool: &str, submitted: &Value) -> Option<Option<RejectionCode>>;

    /// Whether `submitted`, the items an import derived from `call`, is what the call's
    /// arguments say.
    fn agreement(&self, call: &ToolCall, submitted: &[PlanItem]) -> Agreement;

    /// The text an agent's hook puts back into its context for `plan` of session `session`:
    /// `Some(None)` when it puts back nothing, `None` when these rules do not know.
    fn restore_text(&self, plan: &Plan, session: &str) -> Option<Option<String>>;
}

/// No agent's rules: verify skips the checks that need them.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoAgentRules;

impl AgentRules for NoAgentRules {
    fn refusal(&self, _: &Plan, _: &str, _: &Value) -> Option<Option<RejectionCode>> {
        None
    }

    fn agreement(&self, _: &ToolCall, _: &[PlanItem]) -> Agreement {
        Agreement::NotChecked
    }

    fn restore_text(&self, _: &Plan, _: &str) -> Option<Option<String>> {
        None
    }
}
