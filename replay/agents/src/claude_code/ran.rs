//! What a Claude Code hook records of a plan tool call that ran (`PostToolUse`,
//! `PostToolUseFailure`): the record an import of the transcript makes of it.

use planlog_core::events::{ToolCall, ToolCallResult};
use planlog_import::claude_code_record as call_record;
use planlog_import::{Op, Record};
use serde_json::Value;

use crate::hook::{Entry, Target};

/// The record of a `PostToolUse` or `PostToolUseFailure` input for a plan tool (`None` for
/// any other input).
pub(crate) fn ran(entry: &Entry, target: &Target, tool: &str) -> Option<Record> {
    let input = &entry.input;
    let (result, seen) = match input.hook_event_name.as_str() {
        "PostToolUse" => {
            let response = input.tool_response.clone();
            let failed = response.as_ref().is_some_and(|r| {
                r.is_string() || r.get("success").and_then(Value::as_bool) == Some(false)
            });
            let text = match &response {
                Some(Value::String(s)) => s.clone(),
                Some(r) => r
                    .get("error")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                None => String::new(),
            };
            // A hook sees the tool's structured answer, not the text the model read.
            let seen = ToolCallResult {
                is_error: failed,
                text: None,
                structured: response.clone(),
            };
            ((failed, text, response.filter(Value::is_object)), seen)
        }
        "PostToolUseFailure" => {
            let error = input
                .error
                .clone()
                .unwrap_or_else(|| "the tool failed".to_owned());
            let seen = ToolCallResult {
                is_error: true,
                text: input.error.clone(),
                structured: None,
            };
            ((true, error, None), seen)
        }
        _ => return None,
    };
    let mut call = entry.call(target, Op::List(Vec::new()));
    call.tool_call = Some(ToolCall {
        tool: tool.to_owned(),
        arguments: input.arguments(),
        result: Some(seen),
    });
    call_record(
        tool,
        input.tool_input.clone().unwrap_or(Value::Null),
        call,
        Some(result),
    )
}
