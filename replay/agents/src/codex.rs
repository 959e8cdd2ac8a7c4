//! planlog inside OpenAI's Codex CLI, through its hooks (`hooks.json`): every `update_plan`
//! call recorded as it runs, in the session an import of its rollout writes (`cx-<id>`), and
//! the plan put back into the model's context after a resume, a clear or a compaction
//! (`SessionStart`'s `additionalContext`). Codex's hook payloads use Claude Code's field names,
//! so [`crate::hook`] reads them; what is Codex's own is here.

/// The plan tools whose calls a Codex hook records.
pub const PLAN_TOOLS: [&str; 1] = ["update_plan"];

use planlog_import::{Op, Record};
use serde_json::Value;

use crate::hook::{Entry, Target};

/// The record of Codex's `PostToolUse` for `update_plan` (`None` for any other input), the
/// record an import of the rollout makes of that call.
pub(crate) fn ran(entry: &Entry, target: &Target, tool: &str) -> Option<Record> {
    let input = &entry.input;
    // Codex runs PostToolUse only for a call it applied; the response is the text the
    // model read ("Plan updated").
    if tool != "update_plan" || input.hook_event_name != "PostToolUse" {
        return None;
    }
    let read = match &input.tool_response {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    Some(planlog_import::codex_record(
        input.tool_input.clone().unwrap_or(Value::Null),
        read,
        entry.call(target, Op::List(Vec::new())),
    ))
}
