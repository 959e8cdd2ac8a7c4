//! One plan_write call worked out against a plan: the raw argument text in, the result the
//! model gets and the event to record out. Pure; `PlanSession` records what this decides,
//! and `verify` re-runs it to prove recorded results.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::call::WriteCall;
use super::decide::{Decision, decide};
use super::event::{EventBody, PlanWritten, WriteRejected, WriteSemantics};
use super::event::{ToolCall, ToolCallResult};
use super::limits::{KEPT_SUBMISSION_CHARS, MAX_ARGUMENTS_BYTES, MAX_IMPORTED_TEXT_CHARS};
use super::plan::Plan;
use super::rejection::Rejection;

/// What goes back to the model for one tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResult {
    /// True for an error result the model should correct.
    pub is_error: bool,
    /// The text: the plan as a JSON array, or the rejection message.
    pub content: String,
}

/// One plan_write call worked out against the current plan: the result for the model, and
/// the event to record (none for reads).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Execution {
    /// What the model gets back.
    pub result: ToolResult,
    /// The event to append before the result is returned (`plan_written` or
    /// `write_rejected`); `None` for a read.
    pub event: Option<EventBody>,
    /// The new plan when the call wrote one.
    pub plan: Option<Plan>,
}

/// Runs plan_write's rules on `arguments` (the raw JSON text) against `current`. Pure. The
/// event records the call as sent and its result ([`ToolCall`]).
pub fn execute_plan_write(current: &Plan, arguments: &str) -> Execution {
    with_tool_call(
        decide_plan_write(current, arguments),
        "plan_write",
        arguments,
    )
}

/// Records on `execution`'s event (when it has one) the call of `tool` with `arguments`, as
/// sent, and the result the model gets.
pub(crate) fn with_tool_call(mut execution: Execution, tool: &str, arguments: &str) -> Execution {
    let call = ToolCall {
        tool: tool.to_owned(),
        // Characters are at most four bytes: a shorter text needs no count.
        arguments: if arguments.len() > MAX_IMPORTED_TEXT_CHARS
            && arguments.chars().count() > MAX_IMPORTED_TEXT_CHARS
        {
            excerpt_of(arguments, MAX_IMPORTED_TEXT_CHARS)
        } else {
            arguments.to_owned()
        },
        result: Some(ToolCallResult {
            is_error: execution.result.is_error,
            text: Some(execution.result.content.clone()),
            structured: None,
        }),
    };
    match &mut execution.event {
        Some(EventBody::PlanWritten(w)) => w.tool_call = Some(call),
        Some(EventBody::WriteRejected(r)) => r.tool_call = Some(call),
        _ => {}
    }
    execution
}

fn decide_plan_write(current: &Plan, arguments: &str) -> Execution {
    if arguments.len() > MAX_ARGUMENTS_BYTES {
        let rejection = Rejection::arguments_too_large(arguments.len());
        return rejected(arguments, None, &rejection);
    }
    let value = if arguments.trim().is_empty() {
        // Some hosts send an empty string for "no arguments": that is a read.
        Value::Object(serde_json::Map::new())
    } else {
        match serde_json::from_str::<Value>(arguments) {
            Ok(value) => value,
            Err(e) => {
                return rejected(arguments, None, &Rejection::invalid_json(&e.to_string()));
            }
        }
    };
    let call = match WriteCall::from_value(&value) {
        Ok(call) => call,
        Err(rejection) => return rejected(arguments, Some(value), &rejection),
    };
    match decide(current, &call) {
        Ok(Decision::Read) => Execution {
            result: ToolResult {
                is_error: false,
                content: current.to_json(),
            },
            event: None,
            plan: None,
        },
        Ok(Decision::Write { submitted, plan }) => Execution {
            result: ToolResult {
                is_error: false,
                content: written_result(current, &plan),
            },
            event: Some(EventBody::PlanWritten(PlanWritten {
                semantics: WriteSemantics::Merge,
                submitted,
                plan: plan.clone(),
                explanation: None,
                source: None,
                ids_issued: None,
                tool_call: None,
            })),
            plan: Some(plan),
        },
        Err(rejection) => rejected(arguments, Some(value), &rejection),
    }
}

/// What a write answers: the whole plan as a JSON array, then, when the merge removed items
/// the call left out (pending and cancelled ones), a paragraph naming them and saying how to
/// keep them, so a model that meant a partial update learns what it lost.
fn written_result(before: &Plan, after: &Plan) -> String {
    let removed: Vec<String> = before
        .items()
        .iter()
        .filter(|i| after.get(&i.id).is_none())
        .map(|i| {
            format!(
                "{} ({}, {:?})",
                super::text::shown_id(i.id.as_str()),
                i.status,
                super::text::shortened(&i.content, super::text::NAMED_ITEM_CHARS).as_ref()
            )
        })
        .collect();
    if removed.is_empty() {
        return after.to_json();
    }
    format!(
        "{}\n\nRemoved, because this call left them out (pending and cancelled items you leave out are removed; in_progress and completed ones are kept): {}. To keep an item, send it again.",
        after.to_json(),
        removed.join(", ")
    )
}

/// A refusal of `arguments` (`parsed` when they were JSON). The submission is kept whole when
/// it is short; a longer one is kept as an excerpt with its full size and SHA-256, so refused
/// megabytes do not grow the store.
fn rejected(arguments: &str, parsed: Option<Value>, rejection: &Rejection) -> Execution {
    let submitted = if arguments.chars().count() > KEPT_SUBMISSION_CHARS {
        excerpt(arguments)
    } else {
        parsed.unwrap_or_else(|| Value::String(arguments.to_owned()))
    };
    Execution {
        result: ToolResult {
            is_error: true,
            content: rejection.message.clone(),
        },
        event: Some(EventBody::WriteRejected(WriteRejected::new(
            submitted, rejection,
        ))),
        plan: None,
    }
}

/// The opening of the mark that ends an excerpt.
const CUT_OPEN: &str = "… [cut: ";

/// The first [`KEPT_SUBMISSION_CHARS`] characters of `arguments`, then
/// `… [cut: N bytes in all, sha256 HEX]`.
fn excerpt(arguments: &str) -> Value {
    Value::String(excerpt_of(arguments, KEPT_SUBMISSION_CHARS))
}

/// The first `keep` characters of `text`, then `… [cut: N bytes in all, sha256 HEX]`: a text
/// too long to keep whole, kept recognisably (its size and hash name the whole).
pub fn excerpt_of(text: &str, keep: usize) -> String {
    let cut: String = text.chars().take(keep).collect();
    let hash = super::canonical::Hash::of(text.as_bytes());
    format!("{cut}{CUT_OPEN}{} bytes in all, sha256 {hash}]", text.len())
}

/// True when `text` is an excerpt [`excerpt_of`] made of a longer text (its end names the
/// whole text's size and SHA-256).
pub fn is_cut_text(text: &str) -> bool {
    text.ends_with(']')
        && text
            .rfind(CUT_OPEN)
            .is_some_and(|i| text[i..].contains(" bytes in all, sha256 "))
}

/// True when a `write_rejected` submission is an excerpt of a longer one, so re-running
/// plan_write on it cannot reproduce the rejection. (Format-1 events written before
/// 2026-11-30 end their excerpt with `bytes in all]`, without the hash.)
pub fn is_cut_submission(submitted: &Value) -> bool {
    submitted.as_str().is_some_and(|s| {
        s.chars().count() > KEPT_SUBMISSION_CHARS
            && s.ends_with(']')
            && s.rfind(CUT_OPEN)
                .is_some_and(|i| s[i..].contains(" bytes in all"))
    })
}
