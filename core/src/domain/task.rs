//! Task calls: one item per call, with the schemas of Claude Code's Tasks tools
//! (`TaskCreate`, `TaskUpdate`, `TaskGet`, `TaskList`), which planlog's MCP server also offers
//! (`task_create`, …). Parsing is lenient the way Claude Code is (repaired key names, ids as
//! numbers); the rules are plan_write's where they apply (a cancelled task is not completed
//! directly, no dependency problem is added, the limits), worded for task calls.
//!
//! A create is recorded as an `upsert` of the new item, an update as an `upsert` of every
//! item it changed (`addBlocks` changes the other item), a delete as a `remove`.

use serde_json::{Map, Value, json};

use super::decide::{DependencyProblem, new_dependency_problem, remove, upsert};
use super::event::{EventBody, PlanWritten, WriteRejected, WriteSemantics};
use super::ids::ItemId;
use super::limits::{
    MAX_ARGUMENTS_BYTES, MAX_CONTENT_LEN, MAX_DESCRIPTION_LEN, MAX_METADATA_BYTES, MAX_OWNER_LEN,
    MAX_PLAN_ITEMS,
};
use super::plan::{Plan, PlanItem, PlanStatus};
use super::rejection::{Rejection, RejectionCode, UNCHANGED, json_type, quote};
use super::state::{SessionState, highest_numeric_id};
use super::write::{Execution, ToolResult};

/// The task tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskTool {
    /// Add one task (`task_create`, Claude Code's `TaskCreate`).
    Create,
    /// Change or delete one task (`task_update`, `TaskUpdate`).
    Update,
    /// Read one task (`task_get`, `TaskGet`).
    Get,
    /// Read every task (`task_list`, `TaskList`).
    List,
}

impl TaskTool {
    /// Every task tool.
    pub const ALL: [TaskTool; 4] = [
        TaskTool::Create,
        TaskTool::Update,
        TaskTool::Get,
        TaskTool::List,
    ];

    /// The tool named `name`, in planlog's (`task_create`) or Claude Code's (`TaskCreate`)
    /// spelling.
    pub fn from_name(name: &str) -> Option<TaskTool> {
        TaskTool::ALL
            .into_iter()
            .find(|t| t.name() == name || t.claude_name() == name)
    }

    /// planlog's name (MCP).
    pub fn name(self) -> &'static str {
        match self {
            TaskTool::Create => "task_create",
            TaskTool::Update => "task_update",
            TaskTool::Get => "task_get",
            TaskTool::List => "task_list",
        }
    }

    /// Claude Code's name.
    pub fn claude_name(self) -> &'static str {
        match self {
            TaskTool::Create => "TaskCreate",
            TaskTool::Update => "TaskUpdate",
            TaskTool::Get => "TaskGet",
            TaskTool::List => "TaskList",
        }
    }

    /// True for the tools that change the plan.
    pub fn writes(self) -> bool {
        matches!(self, TaskTool::Create | TaskTool::Update)
    }
}

/// A new task.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NewTask {
    /// What to do.
    pub subject: String,
    /// More detail.
    pub description: Option<String>,
    /// Shown while in progress.
    pub active_form: Option<String>,
    /// Kept as it is.
    pub metadata: Option<Map<String, Value>>,
}

/// A status a task update sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskStatus {
    /// One of the plan's statuses.
    Set(PlanStatus),
    /// The task is deleted (it leaves the plan and every other task's `blocked_by`).
    Deleted,
}

/// What a task update changes; absent fields are kept.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TaskChange {
    /// A new subject.
    pub subject: Option<String>,
    /// A new description.
    pub description: Option<String>,
    /// A new active form.
    pub active_form: Option<String>,
    /// A new owner (empty: none).
    pub owner: Option<String>,
    /// A new status.
    pub status: Option<TaskStatus>,
    /// Tasks this one now blocks (each gains this one in its `blocked_by`).
    pub add_blocks: Vec<ItemId>,
    /// Tasks that now block this one.
    pub add_blocked_by: Vec<ItemId>,
    /// Metadata keys merged in; a `null` value deletes the key.
    pub metadata: Option<Map<String, Value>>,
}

/// One task call, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskCall {
    /// Add a task.
    Create(NewTask),
    /// Change or delete a task.
    Update {
        /// The task.
        id: ItemId,
        /// What changes.
        change: TaskChange,
    },
    /// Read a task.
    Get {
        /// The task.
        id: ItemId,
    },
    /// Read every task.
    List,
}

/// `item` with `change` applied (all but a `Deleted` status; no rule is checked here).
pub fn apply_change(mut item: PlanItem, change: &TaskChange) -> PlanItem {
    if let Some(s) = &change.subject {
        item.content = s.clone();
    }
    if let Some(d) = &change.description {
        item = item.with_description(d.clone());
    }
    if let Some(a) = &change.active_form {
        item = item.with_active_form(a.clone());
    }
    if let Some(o) = &change.owner {
        item = item.with_owner(o.clone());
    }
    if let Some(TaskStatus::Set(s)) = change.status {
        item.status = s;
    }
    for b in &change.add_blocked_by {
        item = with_blocker(item, b);
    }
    if let Some(changes) = &change.metadata {
        let mut map = item.metadata.clone().unwrap_or_default();
        for (k, v) in changes {
            if v.is_null() {
                map.remove(k);
            } else {
                map.insert(k.clone(), v.clone());
            }
        }
        item = item.with_metadata(map);
    }
    item
}

/// `item`, also waiting for `blocker` (once).
pub fn with_blocker(item: PlanItem, blocker: &ItemId) -> PlanItem {
    if item.blockers().contains(blocker) {
        return item;
    }
    let mut list = item.blockers().to_vec();
    list.push(blocker.clone());
    item.with_blocked_by(list)
}

/// The id the next created task gets: one more than the highest numeric id the session has
/// ever had ([`SessionState::ids_issued`]; "1" for the first), so a deleted task's id is
/// never given again. `None` when no number is left (the session reached
/// [`MAX_TASK_NUMBER`](crate::domain::limits::MAX_TASK_NUMBER)).
pub fn next_task_id(state: &SessionState) -> Option<ItemId> {
    let highest = state.ids_issued.max(highest_numeric_id(&state.plan));
    highest
        .checked_add(1)
        .filter(|n| *n <= crate::domain::limits::MAX_TASK_NUMBER)
        .map(ItemId::from_number)
}

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
                    metadata: metadata(true)?,
                },
            })
        }
        TaskTool::Get => Ok(TaskCall::Get { id: task_id()? }),
        TaskTool::List => Ok(TaskCall::List),
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

fn task_rejection(code: RejectionCode, message: String) -> Rejection {
    Rejection::new(code, None, message)
}

fn task_name(id: &ItemId) -> String {
    format!("task #{}", quote(id.as_str()).trim_matches('"'))
}

/// The rules a task write must keep, worded for task calls: a cancelled task is not completed
/// directly; the plan and each field within their limits; no dependency problem added.
pub fn task_rules(before: &Plan, after: &Plan, submitted: &[PlanItem]) -> Option<Rejection> {
    for item in submitted {
        let prior = before.get(&item.id).map(|i| i.status);
        if prior == Some(PlanStatus::Cancelled) && item.status == PlanStatus::Completed {
            return Some(task_rejection(
                RejectionCode::CancelledToCompleted,
                format!(
                    "{} was cancelled and cannot be marked completed directly. {UNCHANGED} If you are doing it after all, set it to in_progress first, then completed.",
                    task_name(&item.id)
                ),
            ));
        }
        let len = item.content.chars().count();
        if item.content.trim().is_empty() {
            return Some(task_rejection(
                RejectionCode::EmptyContent,
                format!(
                    "The subject of {} is empty. {UNCHANGED} Give it a subject: what to do, in a few words.",
                    task_name(&item.id)
                ),
            ));
        }
        if len > MAX_CONTENT_LEN {
            return Some(task_rejection(
                RejectionCode::ContentTooLong,
                format!(
                    "The subject of {} is {len} characters; the limit is {MAX_CONTENT_LEN}. {UNCHANGED} Keep the subject short and put details in \"description\".",
                    task_name(&item.id)
                ),
            ));
        }
        let too_long = |field: &str, len: usize, max: usize| {
            (len > max).then(|| {
                task_rejection(
                    RejectionCode::FieldTooLong,
                    format!(
                        "{}: {field:?} is {len} long; the limit is {max}. {UNCHANGED} Shorten it.",
                        task_name(&item.id)
                    ),
                )
            })
        };
        let metadata_len = item
            .metadata
            .as_ref()
            .map_or(0, |m| Value::Object(m.clone()).to_string().len());
        if let Some(r) = too_long(
            "description",
            item.description.as_deref().map_or(0, |d| d.chars().count()),
            MAX_DESCRIPTION_LEN,
        )
        .or_else(|| {
            too_long(
                "owner",
                item.owner.as_deref().map_or(0, |o| o.chars().count()),
                MAX_OWNER_LEN,
            )
        })
        .or_else(|| too_long("metadata", metadata_len, MAX_METADATA_BYTES))
        {
            return Some(r);
        }
    }
    if after.len() > MAX_PLAN_ITEMS {
        return Some(Rejection::plan_too_large(after.len()));
    }
    match new_dependency_problem(before, after)? {
        DependencyProblem::SelfBlocked(id) => Some(task_rejection(
            RejectionCode::SelfBlocked,
            format!(
                "{} cannot be blocked by itself. {UNCHANGED} Leave it out of \"addBlockedBy\".",
                task_name(&id)
            ),
        )),
        DependencyProblem::UnknownBlocker { item, blocker } => Some(task_rejection(
            RejectionCode::UnknownBlocker,
            format!(
                "{} cannot wait for {}: there is no such task. {UNCHANGED} Call task_list for the ids, or create that task first.",
                task_name(&item),
                task_name(&blocker)
            ),
        )),
        DependencyProblem::Cycle(cycle) => {
            let path: Vec<String> = cycle.iter().chain(cycle.first()).map(task_name).collect();
            Some(task_rejection(
                RejectionCode::DependencyCycle,
                format!(
                    "That would make tasks wait for each other in a circle, so none could start: {}. {UNCHANGED} Decide which comes first and leave out the edge that closes the circle.",
                    path.join(" waits for ")
                ),
            ))
        }
    }
}

/// What a task write does: the semantics, the items submitted, the plan after, and the
/// result the caller gets (Claude Code's result shape).
#[derive(Debug, Clone, PartialEq)]
pub struct TaskWrite {
    /// `upsert` or `remove`.
    pub semantics: WriteSemantics,
    /// The whole items set (or, for a remove, the items as they were).
    pub submitted: Vec<PlanItem>,
    /// The plan after.
    pub plan: Plan,
    /// The result (`{task: {id, subject}}`, `{success, taskId, updatedFields, statusChange?}`).
    pub result: Value,
    /// The result as one line for a model.
    pub text: String,
}

/// Decides a task write (create or update) against the session's state `before`.
///
/// # Errors
/// A [`Rejection`] when the task is unknown or a rule is broken; the plan is unchanged.
pub fn decide_task_write(before: &SessionState, call: &TaskCall) -> Result<TaskWrite, Rejection> {
    let current = &before.plan;
    match call {
        TaskCall::Create(new) => {
            let Some(id) = next_task_id(before) else {
                return Err(task_rejection(
                    RejectionCode::NoTaskIdLeft,
                    format!(
                        "No task id is left: this session has used the highest number a task id can be ({}). {UNCHANGED} Start a new session for more tasks.",
                        crate::domain::limits::MAX_TASK_NUMBER
                    ),
                ));
            };
            let mut item = PlanItem::new(id.clone(), new.subject.clone(), PlanStatus::Pending);
            if let Some(d) = &new.description {
                item = item.with_description(d.clone());
            }
            if let Some(a) = &new.active_form {
                item = item.with_active_form(a.clone());
            }
            if let Some(m) = &new.metadata {
                item = item.with_metadata(m.clone());
            }
            let plan = upsert(current, std::slice::from_ref(&item));
            if let Some(r) = task_rules(current, &plan, std::slice::from_ref(&item)) {
                return Err(r);
            }
            Ok(TaskWrite {
                semantics: WriteSemantics::Upsert,
                text: format!("Task #{id} created successfully: {}", new.subject),
                result: json!({"task": {"id": id.as_str(), "subject": new.subject}}),
                submitted: vec![item],
                plan,
            })
        }
        TaskCall::Update { id, change } => {
            let Some(old) = current.get(id).cloned() else {
                return Err(task_rejection(
                    RejectionCode::UnknownTask,
                    format!(
                        "There is no {}. {UNCHANGED} Call task_list for the ids of the tasks.",
                        task_name(id)
                    ),
                ));
            };
            let fields = updated_fields(change);
            if change.status == Some(TaskStatus::Deleted) {
                let plan = remove(current, std::slice::from_ref(id));
                return Ok(TaskWrite {
                    semantics: WriteSemantics::Remove,
                    text: format!("Updated task #{id} deleted"),
                    result: json!({"success": true, "taskId": id.as_str(), "updatedFields": ["deleted"], "statusChange": {"from": old.status.as_str(), "to": "deleted"}}),
                    submitted: vec![old],
                    plan,
                });
            }
            let new = apply_change(old.clone(), change);
            let mut submitted = vec![new.clone()];
            for other in &change.add_blocks {
                match current.get(other) {
                    Some(o) => submitted.push(with_blocker(o.clone(), id)),
                    None => {
                        return Err(task_rejection(
                            RejectionCode::UnknownBlocker,
                            format!(
                                "{} cannot block {}: there is no such task. {UNCHANGED} Call task_list for the ids.",
                                task_name(id),
                                task_name(other)
                            ),
                        ));
                    }
                }
            }
            let plan = upsert(current, &submitted);
            if let Some(r) = task_rules(current, &plan, &submitted) {
                return Err(r);
            }
            let mut result =
                json!({"success": true, "taskId": id.as_str(), "updatedFields": fields});
            if old.status != new.status {
                result["statusChange"] =
                    json!({"from": old.status.as_str(), "to": new.status.as_str()});
            }
            Ok(TaskWrite {
                semantics: WriteSemantics::Upsert,
                text: format!("Updated task #{id} {}", fields.join(", ")),
                result,
                submitted,
                plan,
            })
        }
        TaskCall::Get { .. } | TaskCall::List => Err(task_rejection(
            RejectionCode::UnknownArgument,
            "task_get and task_list only read.".to_owned(),
        )),
    }
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
        TaskCall::List => read(json!({"tasks": current.items().iter().map(|i| {
            let mut t = json!({"id": i.id.as_str(), "subject": i.content, "status": i.status.as_str(), "blockedBy": i.blockers().iter().map(ItemId::as_str).collect::<Vec<_>>()});
            if let Some(o) = &i.owner { t["owner"] = json!(o); }
            t
        }).collect::<Vec<_>>()})),
        TaskCall::Create(_) | TaskCall::Update { .. } => match decide_task_write(before, &call) {
            Ok(w) => Execution {
                result: ToolResult {
                    is_error: false,
                    content: format!("{}\n{}", w.text, w.result),
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
