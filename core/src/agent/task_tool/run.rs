//! One task tool call run: the arguments read, the call decided, the result a model reads
//! and the event that records it.

use serde_json::{Map, Value, json};

use super::TaskTool;
use super::wire::{parse_task_call, task_json, write_result};
use crate::domain::event::{EventBody, PlanWritten, WriteRejected};
use crate::domain::ids::ItemId;
use crate::domain::limits::MAX_ARGUMENTS_BYTES;
use crate::domain::rejection::{Rejection, RejectionCode, UNCHANGED};
use crate::domain::state::SessionState;
use crate::domain::task::{TaskCall, decide_task_write, is_ready, task_rejection};
use crate::domain::write::{Execution, ToolResult};

/// Runs a task tool on `arguments` (the raw JSON text) against the session's state
/// `before`. Pure: reads give no event; a write gives `plan_written` (`upsert`/`remove`) or
/// `write_rejected` naming the tool, recording the call as sent and its result.
pub fn execute_task_tool(before: &SessionState, tool: TaskTool, arguments: &str) -> Execution {
    crate::domain::write::with_tool_call(
        decide_task_tool(before, tool, arguments),
        tool.name(),
        arguments,
    )
}

fn decide_task_tool(before: &SessionState, tool: TaskTool, arguments: &str) -> Execution {
    let current = &before.plan;
    let refused = |submitted: Value, rejection: Rejection| Execution {
        result: ToolResult {
            is_error: true,
            content: rejection.message.clone(),
        },
        event: Some(EventBody::WriteRejected(WriteRejected {
            tool: Some(tool.name().to_owned()),
            ..WriteRejected::new(submitted, &rejection)
        })),
        plan: None,
    };
    if arguments.len() > MAX_ARGUMENTS_BYTES {
        return refused(
            Value::String(format!("{} bytes", arguments.len())),
            Rejection::arguments_too_large(arguments.len()),
        );
    }
    let value = if arguments.trim().is_empty() {
        Value::Object(Map::new())
    } else {
        match serde_json::from_str::<Value>(arguments) {
            Ok(v) => v,
            Err(e) => {
                return refused(
                    Value::String(arguments.to_owned()),
                    task_rejection(
                        RejectionCode::InvalidJson,
                        format!(
                            "The {} arguments are not valid JSON ({e}). {UNCHANGED}",
                            tool.name()
                        ),
                    ),
                );
            }
        }
    };
    let call = match parse_task_call(tool, &value) {
        Ok(c) => c,
        Err(r) if tool.writes() => return refused(value, r),
        Err(r) => {
            return Execution {
                result: ToolResult {
                    is_error: true,
                    content: r.message,
                },
                event: None,
                plan: None,
            };
        }
    };
    let read = |v: Value| Execution {
        result: ToolResult {
            is_error: false,
            content: v.to_string(),
        },
        event: None,
        plan: None,
    };
    match &call {
        TaskCall::Get { id } => {
            read(json!({"task": current.get(id).map(|i| task_json(current, i))}))
        }
        TaskCall::List { ready } => read(
            json!({"tasks": current.items().iter().filter(|i| !*ready || is_ready(current, i)).map(|i| {
            let mut t = json!({"id": i.id.as_str(), "subject": i.content, "status": i.status.as_str(), "blockedBy": i.blockers().iter().map(ItemId::as_str).collect::<Vec<_>>()});
            if let Some(o) = &i.owner { t["owner"] = json!(o); }
            t
        }).collect::<Vec<_>>()}),
        ),
        TaskCall::Create(_)
        | TaskCall::Update { .. }
        | TaskCall::Claim { .. }
        | TaskCall::Release { .. } => match decide_task_write(before, &call) {
            Ok(w) => Execution {
                result: {
                    let (result, text) = write_result(&call, &w);
                    ToolResult {
                        is_error: false,
                        content: format!("{text}\n{result}"),
                    }
                },
                event: Some(EventBody::PlanWritten(PlanWritten {
                    semantics: w.semantics,
                    submitted: w.submitted,
                    plan: w.plan.clone(),
                    explanation: None,
                    source: None,
                    ids_issued: None,
                    tool_call: None,
                })),
                plan: Some(w.plan),
            },
            Err(r) => refused(value, r),
        },
    }
}
