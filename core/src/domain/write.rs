//! One plan_write call worked out against a plan: the raw argument text in, the result the
//! model gets and the event to record out. Pure; `PlanSession` records what this decides,
//! and `verify` re-runs it to prove recorded results.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::call::WriteCall;
use super::decide::{Decision, decide};
use super::event::{EventBody, PlanWritten, WriteRejected, WriteSemantics};
use super::limits::{KEPT_SUBMISSION_CHARS, MAX_ARGUMENTS_BYTES};
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

/// Runs plan_write's rules on `arguments` (the raw JSON text) against `current`. Pure.
pub fn execute_plan_write(current: &Plan, arguments: &str) -> Execution {
    if arguments.len() > MAX_ARGUMENTS_BYTES {
        let rejection = Rejection::arguments_too_large(arguments.len());
        return rejected(kept_text(arguments), &rejection);
    }
    let value = if arguments.trim().is_empty() {
        // Some hosts send an empty string for "no arguments": that is a read.
        Value::Object(serde_json::Map::new())
    } else {
        match serde_json::from_str::<Value>(arguments) {
            Ok(value) => value,
            Err(e) => {
                return rejected(
                    kept_text(arguments),
                    &Rejection::invalid_json(&e.to_string()),
                );
            }
        }
    };
    let call = match WriteCall::from_value(&value) {
        Ok(call) => call,
        Err(rejection) => return rejected(value, &rejection),
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
                content: plan.to_json(),
            },
            event: Some(EventBody::PlanWritten(PlanWritten {
                semantics: WriteSemantics::Merge,
                submitted,
                plan: plan.clone(),
            })),
            plan: Some(plan),
        },
        Err(rejection) => rejected(value, &rejection),
    }
}

fn rejected(submitted: Value, rejection: &Rejection) -> Execution {
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

/// The submission as a string, cut to a size worth keeping in the log.
fn kept_text(arguments: &str) -> Value {
    if arguments.chars().count() <= KEPT_SUBMISSION_CHARS {
        Value::String(arguments.to_owned())
    } else {
        let cut: String = arguments.chars().take(KEPT_SUBMISSION_CHARS).collect();
        Value::String(format!("{cut}… [cut: {} {CUT_MARK}", arguments.len()))
    }
}

/// The end of a kept submission that was cut to size.
const CUT_MARK: &str = "bytes in all]";

/// True when a `write_rejected` submission is a cut excerpt (of oversized or unparsable
/// arguments), so re-running plan_write on it cannot reproduce the rejection.
pub fn is_cut_submission(submitted: &Value) -> bool {
    submitted
        .as_str()
        .is_some_and(|s| s.chars().count() > KEPT_SUBMISSION_CHARS && s.ends_with(CUT_MARK))
}
