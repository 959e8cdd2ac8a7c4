//! The agents' rules for `verify` ([`planlog_audit::AgentRules`]): a refusal a hook made is
//! re-checked with that agent's own check, a call as sent is read again with its importer,
//! and the text a hook put back is made again.

use planlog_audit::{AgentRules, Agreement};
use planlog_core::events::ToolCall;
use planlog_core::rules::RejectionCode;
use planlog_core::{Plan, PlanItem};
use serde_json::Value;

use crate::hook;

/// The rules of every agent planlog knows.
#[derive(Debug, Clone, Copy, Default)]
pub struct Rules;

impl AgentRules for Rules {
    fn refusal(&self, plan: &Plan, tool: &str, submitted: &Value) -> Option<Option<RejectionCode>> {
        hook::CHECKED_TOOLS
            .contains(&tool)
            .then(|| hook::check(plan, tool, submitted).map(|r| r.code))
    }

    fn agreement(&self, call: &ToolCall, submitted: &[PlanItem]) -> Agreement {
        planlog_import::agreement(call, submitted)
    }

    fn restore_text(&self, plan: &Plan, session: &str) -> Option<Option<String>> {
        Some(hook::restore::restore_text(plan, session))
    }
}
