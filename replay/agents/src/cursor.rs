//! planlog inside Cursor, through its hooks (`.cursor/hooks.json`, `~/.cursor/hooks.json`):
//! every todo list change recorded as it runs (`postToolUse` of `TodoWrite`, older
//! `todo_write`), in `cu-<conversation id>`; the plan put back when a conversation starts
//! again (`sessionStart`, whose `additional_context` Cursor honours); a compaction recorded
//! (`preCompact`; no hook runs after it).
//!
//! No primary source for Cursor is stored (REFERENCE-AGENTS.md §5): payloads are read as
//! third-party captures show them, leniently, and [`normalize`] turns them into Claude Code's
//! field names for [`crate::hook`]. Cursor's todo tool takes `{merge, todos: [{id, content,
//! status}]}`: `merge: false` sets the whole list, `merge: true` changes the items it names by
//! id ([`merged`]). Whether Cursor runs `postToolUse` for it, and under which name, is not
//! confirmed: `planlog doctor` says so.

use planlog_core::{Plan, PlanStatus};
use serde_json::Value;

use planlog_import::Todo;

/// The plan tools whose calls a Cursor hook records.
pub const PLAN_TOOLS: [&str; 2] = ["TodoWrite", "todo_write"];

/// The matcher of planlog's `postToolUse` entry.
pub const TOOL_MATCHER: &str = "TodoWrite|todo_write";

/// Cursor's payload in Claude Code's field names: `session_id` from `conversation_id` (or
/// `session_id`), `cwd` from the first of `workspace_roots`, `tool_response` from
/// `tool_output` (a JSON string, parsed when it is JSON). Everything else is kept.
pub fn normalize(mut payload: Value) -> Value {
    let Some(obj) = payload.as_object_mut() else {
        return payload;
    };
    if !obj.contains_key("session_id")
        && let Some(id) = obj.get("conversation_id").cloned()
    {
        obj.insert("session_id".to_owned(), id);
    }
    if !obj.contains_key("cwd")
        && let Some(root) = obj
            .get("workspace_roots")
            .and_then(Value::as_array)
            .and_then(|r| r.first())
            .cloned()
    {
        obj.insert("cwd".to_owned(), root);
    }
    if let Some(output) = obj.get("tool_output").cloned() {
        let parsed = match &output {
            Value::String(s) => serde_json::from_str(s).unwrap_or(output),
            _ => output,
        };
        obj.insert("tool_response".to_owned(), parsed);
    }
    // Cursor's transcript path is always null in its CLI; a non-string is no path.
    if obj.get("transcript_path").is_some_and(|p| !p.is_string()) {
        obj.remove("transcript_path");
    }
    payload
}

/// The list a todo call leaves: with `merge` false its `todos`; with `merge` true `plan`'s
/// items, each named by id changed (`content`, `status` when given), new ids added at the end.
/// `None` when the input holds no `todos` list.
pub fn merged(input: &Value, plan: &Plan, notes: &mut Vec<String>) -> Option<Vec<Todo>> {
    let todos = input.get("todos")?.as_array()?;
    let merge = input.get("merge").and_then(Value::as_bool) == Some(true);
    let text = |t: &Value, key: &str| t.get(key).and_then(Value::as_str).map(str::to_owned);
    let status = |t: &Value, notes: &mut Vec<String>| {
        let word = text(t, "status")?;
        Some(PlanStatus::from_wire(&word).unwrap_or_else(|| {
            notes.push(format!("unknown status {word:?}, kept as pending"));
            PlanStatus::Pending
        }))
    };
    if !merge {
        return Some(
            todos
                .iter()
                .map(|t| Todo {
                    id: text(t, "id"),
                    content: text(t, "content").unwrap_or_default(),
                    status: status(t, notes).unwrap_or(PlanStatus::Pending),
                    ..Todo::default()
                })
                .collect(),
        );
    }
    let mut list: Vec<Todo> = plan.items().iter().map(Todo::from).collect();
    for t in todos {
        let id = text(t, "id");
        match list
            .iter_mut()
            .find(|item| item.id.is_some() && item.id == id)
        {
            Some(item) => {
                if let Some(content) = text(t, "content") {
                    item.content = content;
                }
                if let Some(s) = status(t, notes) {
                    item.status = s;
                }
            }
            None => list.push(Todo {
                id,
                content: text(t, "content").unwrap_or_default(),
                status: status(t, notes).unwrap_or(PlanStatus::Pending),
                ..Todo::default()
            }),
        }
    }
    Some(list)
}

use planlog_core::events::{ToolCall, ToolCallResult};
use planlog_core::{EventLog, LogError};
use planlog_import::{Op, Record};

use crate::hook::{Entry, Target};

/// The record of Cursor's `postToolUse` for its todo tool: the list it leaves (with `merge`,
/// the session's plan as `log` has it, changed by id), the call as sent and its output.
pub(crate) fn ran(
    entry: &Entry,
    target: &Target,
    log: &dyn EventLog,
) -> Result<Option<Record>, LogError> {
    let input = &entry.input;
    let tool = input.tool_name.as_deref().unwrap_or_default();
    if !PLAN_TOOLS.contains(&tool) || input.hook_event_name != "postToolUse" {
        return Ok(None);
    }
    let id = target.session_id();
    let plan = match log.head(&id)? {
        Some(head) => log.state_at(&id, head.seq)?.plan,
        None => planlog_core::Plan::new(),
    };
    let args = input.tool_input.clone().unwrap_or(Value::Null);
    let mut notes = Vec::new();
    let Some(list) = merged(&args, &plan, &mut notes) else {
        return Ok(None);
    };
    let mut call = entry.call(target, Op::List(list));
    call.notes = notes;
    call.tool_call = Some(ToolCall {
        tool: tool.to_owned(),
        arguments: input.arguments(),
        result: input.tool_response.as_ref().map(|r| ToolCallResult {
            is_error: false,
            text: Some(match r {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            }),
            structured: None,
        }),
    });
    Ok(Some(Record::Call(call)))
}
