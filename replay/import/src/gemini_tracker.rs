//! Gemini CLI's task tracker (`experimental.taskTracker`, the tools Gemini 3 models plan
//! with): `tracker_create_task`, `tracker_update_task` and `tracker_add_dependency` calls as
//! task calls, each task keeping the tracker's id (six hex characters) and its dependencies.
//!
//! - A create is a task with the id its result names (`Created task <id>: <title>`), its title,
//!   description and dependencies; its `type` and `parentId` kept in its metadata (`tracker`).
//! - An update sets what it sends; its `dependencies` replace the task's list.
//! - An added dependency adds one blocker (`Linked <task> -> <dependency>.`).
//! - Statuses: `open` is pending, `closed` completed, `blocked` pending (with a note).
//! - A call whose result is not the tool's success text (an error, `Task … not found.`) changed
//!   nothing: it is the tool's refusal, with that text.
//!
//! Shared by the importer (a recording's tool calls) and Gemini's `AfterTool` hook.

use planlog_core::PlanStatus;
use planlog_core::events::{ToolCall, ToolCallResult};
use serde_json::{Map, Value, json};

use super::record::{BadLine, Op, Record, SourceCall, TaskPatch, Todo, text};

/// The tracker tools that change tasks (the others only read).
pub const TRACKER_TOOLS: [&str; 3] = [
    "tracker_create_task",
    "tracker_update_task",
    "tracker_add_dependency",
];

/// The success text each tool's result starts with.
fn success_prefix(tool: &str) -> &'static str {
    match tool {
        "tracker_create_task" => "Created task ",
        "tracker_update_task" => "Updated task ",
        _ => "Linked ",
    }
}

/// A tracker status as planlog's, with a note when it is not one of planlog's.
fn status(word: &str, notes: &mut Vec<String>) -> PlanStatus {
    match word {
        "in_progress" => PlanStatus::InProgress,
        "closed" => PlanStatus::Completed,
        "open" => PlanStatus::Pending,
        other => {
            notes.push(format!(
                "the tracker's status {other:?} is kept as pending (planlog has no such status)"
            ));
            PlanStatus::Pending
        }
    }
}

/// The ids in `args[key]` (a list of strings).
fn ids(args: &Value, key: &str) -> Option<Vec<String>> {
    args.get(key)?.as_array().map(|list| {
        list.iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect()
    })
}

/// The record of one tracker call `tool` with `args`: the text the model read (`read`) and, for
/// a call that failed, its error; made into `call` (its `op` is replaced). A create whose
/// result names no id is a [`Record::Bad`] naming the call's line.
pub fn tracker_record(
    tool: &str,
    args: Value,
    read: Option<String>,
    error: Option<String>,
    mut call: SourceCall,
) -> Record {
    let arguments = args.to_string();
    let succeeded = error.is_none()
        && read
            .as_deref()
            .is_some_and(|r| r.starts_with(success_prefix(tool)));
    let op = if succeeded {
        match tool {
            "tracker_create_task" => {
                let id = read
                    .as_deref()
                    .and_then(|r| r.strip_prefix("Created task "))
                    .and_then(|r| r.split(':').next())
                    .map(str::trim)
                    .filter(|id| !id.is_empty());
                let Some(id) = id else {
                    return Record::Bad(BadLine {
                        line: call.line,
                        why: "tracker_create_task: its result names no task id".to_owned(),
                    });
                };
                let mut tracker = Map::new();
                for key in ["type", "parentId"] {
                    if let Some(v) = args.get(key).filter(|v| !v.is_null()) {
                        tracker.insert(key.to_owned(), v.clone());
                    }
                }
                Op::Create(Todo {
                    id: Some(id.to_owned()),
                    content: text(&args, "title").unwrap_or_default(),
                    status: PlanStatus::Pending,
                    description: text(&args, "description"),
                    blocked_by: ids(&args, "dependencies").filter(|d| !d.is_empty()),
                    metadata: Some(Map::from_iter([("tracker".to_owned(), json!(tracker))])),
                    ..Todo::default()
                })
            }
            "tracker_update_task" => Op::Update {
                id: text(&args, "id").unwrap_or_default(),
                patch: TaskPatch {
                    subject: text(&args, "title"),
                    description: text(&args, "description"),
                    status: text(&args, "status").map(|w| status(&w, &mut call.notes)),
                    blocked_by: ids(&args, "dependencies"),
                    ..TaskPatch::default()
                },
            },
            _ => Op::Update {
                id: text(&args, "taskId").unwrap_or_default(),
                patch: TaskPatch {
                    add_blocked_by: text(&args, "dependencyId").into_iter().collect(),
                    ..TaskPatch::default()
                },
            },
        }
    } else {
        Op::Refused {
            submitted: args,
            error: error
                .or_else(|| read.clone())
                .unwrap_or_else(|| format!("{tool} gave no result")),
        }
    };
    call.tool_call = Some(ToolCall {
        tool: tool.to_owned(),
        arguments,
        result: Some(ToolCallResult {
            is_error: !succeeded,
            text: read,
            structured: None,
        }),
    });
    call.op = op;
    Record::Call(call)
}
