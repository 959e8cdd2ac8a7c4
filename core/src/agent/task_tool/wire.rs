//! The task tools' JSON: reading a call's arguments the lenient way Claude Code does (repaired
//! key names, ids as numbers) and the results in Claude Code's shapes, which planlog's
//! `task_*` MCP tools share.

use serde_json::{Map, Value, json};

use super::TaskTool;
use crate::domain::ids::ItemId;
use crate::domain::plan::{Plan, PlanItem, PlanStatus};
use crate::domain::rejection::{Rejection, RejectionCode, UNCHANGED, json_type, quote};
use crate::domain::task::{NewTask, TaskCall, TaskChange, TaskStatus, TaskWrite, task_rejection};

/// Parses a task tool's arguments.
///
/// # Errors
/// A [`Rejection`] worded for task calls.
pub fn parse_task_call(tool: TaskTool, args: &Value) -> Result<TaskCall, Rejection> {
    let Some(obj) = args.as_object() else {
        return Err(task_rejection(
            RejectionCode::ArgumentsNotObject,
            format!(
                "The {} arguments must be a JSON object, but got {}. {UNCHANGED}",
                tool.name(),
                json_type(args)
            ),
        ));
    };
    let text = |keys: &[&str]| -> Result<Option<String>, Rejection> {
        match keys.iter().find_map(|k| obj.get(*k).map(|v| (*k, v))) {
            None | Some((_, Value::Null)) => Ok(None),
            Some((_, Value::String(s))) => Ok(Some(s.clone())),
            Some((k, other)) => Err(task_rejection(
                RejectionCode::FieldNotString,
                format!(
                    "{}: {k:?} must be a string, but got {}. {UNCHANGED}",
                    tool.name(),
                    json_type(other)
                ),
            )),
        }
    };
    let metadata = |allow_null: bool| -> Result<Option<Map<String, Value>>, Rejection> {
        match obj.get("metadata") {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Object(m)) => {
                if !allow_null && m.values().any(Value::is_null) {
                    let mut m = m.clone();
                    m.retain(|_, v| !v.is_null());
                    return Ok(Some(m));
                }
                Ok(Some(m.clone()))
            }
            Some(other) => Err(task_rejection(
                RejectionCode::MetadataNotObject,
                format!(
                    "{}: \"metadata\" must be a JSON object, but got {}. {UNCHANGED}",
                    tool.name(),
                    json_type(other)
                ),
            )),
        }
    };
    let task_id = || -> Result<ItemId, Rejection> {
        let raw = ["taskId", "id", "task_id"]
            .iter()
            .find_map(|k| obj.get(*k))
            .ok_or_else(|| {
                task_rejection(
                    RejectionCode::MissingField,
                    format!(
                        "{} needs \"taskId\", the id of the task (see task_list). {UNCHANGED}",
                        tool.name()
                    ),
                )
            })?;
        id_of(raw).ok_or_else(|| {
            task_rejection(
                RejectionCode::UnknownTask,
                format!(
                    "{}: \"taskId\" must be a task id such as \"3\", but got {}. {UNCHANGED}",
                    tool.name(),
                    json_type(raw)
                ),
            )
        })
    };
    let ids = |keys: [&str; 2]| -> Result<Vec<ItemId>, Rejection> {
        let Some((key, v)) = keys.iter().find_map(|k| obj.get(*k).map(|v| (*k, v))) else {
            return Ok(Vec::new());
        };
        let Value::Array(list) = v else {
            return Err(task_rejection(
                RejectionCode::FieldNotList,
                format!(
                    "{}: {key:?} must be a list of task ids, such as [\"1\", \"2\"], but got {}. {UNCHANGED}",
                    tool.name(),
                    json_type(v)
                ),
            ));
        };
        list.iter()
            .map(|x| {
                id_of(x).ok_or_else(|| {
                    task_rejection(
                        RejectionCode::BadBlocker,
                        format!(
                            "{}: every {key:?} entry must be a task id such as \"1\". {UNCHANGED}",
                            tool.name()
                        ),
                    )
                })
            })
            .collect()
    };
    match tool {
        TaskTool::Create => {
            let subject = text(&["subject"])?.ok_or_else(|| {
                task_rejection(
                    RejectionCode::MissingField,
                    format!(
                        "task_create needs \"subject\": what to do, in a few words. {UNCHANGED}"
                    ),
                )
            })?;
            Ok(TaskCall::Create(NewTask {
                subject,
                description: text(&["description"])?,
                active_form: text(&["activeForm", "active_form"])?,
                metadata: metadata(false)?,
            }))
        }
        TaskTool::Update => {
            let id = task_id()?;
            let status = match text(&["status"])? {
                None => None,
                Some(word) if word == "deleted" => Some(TaskStatus::Deleted),
                Some(word) => Some(TaskStatus::Set(PlanStatus::from_wire(&word).ok_or_else(
                    || {
                        task_rejection(
                            RejectionCode::UnknownStatus,
                            format!(
                                "task_update: status {} is not one of pending, in_progress, completed, deleted. {UNCHANGED}",
                                quote(&word)
                            ),
                        )
                    },
                )?)),
            };
            Ok(TaskCall::Update {
                id,
                change: TaskChange {
                    subject: text(&["subject"])?,
                    description: text(&["description"])?,
                    active_form: text(&["activeForm", "active_form"])?,
                    owner: text(&["owner"])?,
                    status,
                    add_blocks: ids(["addBlocks", "add_blocks"])?,
                    add_blocked_by: ids(["addBlockedBy", "add_blocked_by"])?,
                    blocked_by: None,
                    metadata: metadata(true)?,
                },
            })
        }
        TaskTool::Get => Ok(TaskCall::Get { id: task_id()? }),
        TaskTool::List => Ok(TaskCall::List {
            ready: match obj.get("ready") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(b)) => *b,
                Some(other) => {
                    return Err(task_rejection(
                        RejectionCode::FieldNotString,
                        format!(
                            "task_list: \"ready\" must be true or false, but got {}. {UNCHANGED}",
                            json_type(other)
                        ),
                    ));
                }
            },
        }),
        TaskTool::Claim | TaskTool::Release => {
            let id = task_id()?;
            let owner = text(&["owner"])?
                .filter(|o| !o.trim().is_empty())
                .ok_or_else(|| {
                    task_rejection(
                        RejectionCode::MissingField,
                        format!(
                            "{} needs \"owner\": who you are (your agent's name), so that others see who holds the task. {UNCHANGED}",
                            tool.name()
                        ),
                    )
                })?;
            if tool == TaskTool::Claim {
                return Ok(TaskCall::Claim { id, owner });
            }
            Ok(TaskCall::Release {
                id,
                owner,
                to: text(&["to"])?.filter(|t| !t.trim().is_empty()),
            })
        }
    }
}

/// A task id given as a string or a number.
fn id_of(v: &Value) -> Option<ItemId> {
    let text = match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => return None,
    };
    ItemId::new(text).ok()
}

/// The names of the fields an update sets, as Claude Code lists them.
fn updated_fields(change: &TaskChange) -> Vec<&'static str> {
    let mut out = Vec::new();
    if change.subject.is_some() {
        out.push("subject");
    }
    if change.description.is_some() {
        out.push("description");
    }
    if change.active_form.is_some() {
        out.push("activeForm");
    }
    if change.owner.is_some() {
        out.push("owner");
    }
    if change.status.is_some() {
        out.push("status");
    }
    if !change.add_blocks.is_empty() {
        out.push("blocks");
    }
    if !change.add_blocked_by.is_empty() {
        out.push("blockedBy");
    }
    if change.metadata.is_some() {
        out.push("metadata");
    }
    out
}

/// A task as `task_get` shows it: `{id, subject, description, activeForm?, status, owner?,
/// blocks, blockedBy, metadata?}`.
pub fn task_json(plan: &Plan, item: &PlanItem) -> Value {
    let mut v = json!({
        "id": item.id.as_str(),
        "subject": item.content,
        "description": item.description.clone().unwrap_or_default(),
        "status": item.status.as_str(),
        "blocks": plan.blocks(&item.id).iter().map(|i| i.as_str()).collect::<Vec<_>>(),
        "blockedBy": item.blockers().iter().map(ItemId::as_str).collect::<Vec<_>>(),
    });
    if let Some(a) = &item.active_form {
        v["activeForm"] = json!(a);
    }
    if let Some(o) = &item.owner {
        v["owner"] = json!(o);
    }
    if let Some(m) = &item.metadata {
        v["metadata"] = Value::Object(m.clone());
    }
    v
}

/// The result of a task write as the model reads it, in Claude Code's shapes: the JSON
/// (`{task: {id, subject}}` for a create; `{success, taskId, updatedFields, statusChange?}`
/// for an update or delete) and the line before it.
pub fn write_result(call: &TaskCall, write: &TaskWrite) -> (Value, String) {
    let named = write.submitted.first();
    let id = named.map_or("", |i| i.id.as_str());
    let owner = named.and_then(|i| i.owner.as_deref()).unwrap_or_default();
    match (call, &write.was) {
        (TaskCall::Claim { .. }, _) => (
            json!({"success": true, "taskId": id, "owner": owner, "status": "in_progress"}),
            format!("Claimed task #{id}: it is yours ({owner}) and in progress"),
        ),
        (TaskCall::Release { to: Some(to), .. }, _) => (
            json!({"success": true, "taskId": id, "owner": to}),
            format!("Handed task #{id} over to {to}"),
        ),
        (TaskCall::Release { .. }, _) => (
            json!({"success": true, "taskId": id, "owner": null, "status": named.map_or("", |i| i.status.as_str())}),
            format!("Released task #{id}: nobody holds it now"),
        ),
        (TaskCall::Update { change, .. }, Some(old)) => {
            if change.status == Some(TaskStatus::Deleted) {
                return (
                    json!({"success": true, "taskId": id, "updatedFields": ["deleted"], "statusChange": {"from": old.status.as_str(), "to": "deleted"}}),
                    format!("Updated task #{id} deleted"),
                );
            }
            let fields = updated_fields(change);
            let mut result = json!({"success": true, "taskId": id, "updatedFields": fields});
            if let Some(new) = named
                && old.status != new.status
            {
                result["statusChange"] =
                    json!({"from": old.status.as_str(), "to": new.status.as_str()});
            }
            (result, format!("Updated task #{id} {}", fields.join(", ")))
        }
        _ => {
            let subject = named.map_or("", |i| i.content.as_str());
            (
                json!({"task": {"id": id, "subject": subject}}),
                format!("Task #{id} created successfully: {subject}"),
            )
        }
    }
}
