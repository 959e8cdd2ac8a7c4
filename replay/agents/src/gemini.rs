//! planlog inside Gemini CLI, through the hooks of its `settings.json`: every `write_todos`
//! call and every change through the task tracker's tools recorded as it runs (`AfterTool`), in the session an import of its chat recording
//! writes (`gm-<id>`), and the plan put back into the model's context after a resume or a
//! clear (`SessionStart`) and after a compression the user asked for (`PreCompress` with
//! trigger `manual` marks it; the next `BeforeAgent` puts the plan back, since Gemini runs no
//! hook after compressing). Gemini's payloads use Claude Code's field names, so
//! [`crate::hook`] reads them; what is Gemini's own is here.
//!
//! Traps, seen with Gemini CLI 0.61: `AfterTool` carries no call id (an import finds a call
//! the hook recorded by its tool, arguments and time); `PreCompress` with trigger `auto` fires
//! before every model call whether or not anything is compressed, so it is no compaction;
//! `<` and `>` in what a hook adds are escaped; any exit code of 2 or more with text blocks
//! the call, so planlog exits 0 on every error of its own.

/// The plan tools whose calls a Gemini CLI hook records: `write_todos` (Gemini 2 models) and
/// the task tracker's tools that change tasks (`experimental.taskTracker`, Gemini 3 models).
pub const PLAN_TOOLS: [&str; 4] = [
    "write_todos",
    "tracker_create_task",
    "tracker_update_task",
    "tracker_add_dependency",
];

/// The tool matcher of planlog's `AfterTool` hook: a JavaScript regular expression Gemini
/// tests unanchored, so anchored here.
pub const TOOL_MATCHER: &str =
    "^(write_todos|tracker_create_task|tracker_update_task|tracker_add_dependency)$";

/// The tool matcher of planlog's `BeforeTool` hook (enforcing): the whole-list tool, whose
/// rules planlog checks before it runs.
pub const GUARD_MATCHER: &str = "^(write_todos)$";

/// How long Gemini waits for planlog's hook, in milliseconds (Gemini's unit).
pub const TIMEOUT_MS: u64 = 10_000;

use planlog_import::{Op, Record};
use serde_json::Value;

use crate::hook::{Entry, Target};

/// The record of Gemini CLI's `AfterTool` for `write_todos` or a tracker tool (every call
/// that ran, a failed one with `tool_response.error`): the record an import of the recording makes of it, but
/// for its call id (the hook gets none; an import finds the call by its arguments and time).
pub(crate) fn ran(entry: &Entry, target: &Target, tool: &str) -> Option<Record> {
    let input = &entry.input;
    let tracker = planlog_import::TRACKER_TOOLS.contains(&tool);
    if !(tool == "write_todos" || tracker) || input.hook_event_name != "AfterTool" {
        return None;
    }
    let response = input.tool_response.as_ref();
    let text = |key: &str| {
        response
            .and_then(|r| r.get(key))
            .filter(|v| !v.is_null())
            .map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
    };
    let error = text("error");
    if tracker {
        return Some(planlog_import::tracker_record(
            tool,
            input.tool_input.clone().unwrap_or(Value::Null),
            text("llmContent"),
            error,
            entry.call(target, Op::List(Vec::new())),
        ));
    }
    Some(planlog_import::gemini_record(
        input.tool_input.clone().unwrap_or(Value::Null),
        text("llmContent"),
        error,
        entry.call(target, Op::List(Vec::new())),
    ))
}
