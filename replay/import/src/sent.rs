//! A call as the agent sent it, read again: `verify` holds what an import derived from a call
//! (its `submitted` items) to the call's recorded arguments.

use planlog_audit::Agreement;
use planlog_core::PlanItem;
use planlog_core::events::ToolCall;
use serde_json::Value;

use super::bounds::bound_op;
use super::record::{Op, Todo, id_text};

/// Whether every item a merging todo call names (by `id`) is in `submitted` with the content
/// and status the call gives it.
fn merge_agreement(args: &Value, submitted: &[PlanItem]) -> Agreement {
    let Some(todos) = args.get("todos").and_then(Value::as_array) else {
        return Agreement::Differs("the call's arguments hold no \"todos\" list".to_owned());
    };
    for t in todos {
        let Some(id) = id_text(t.get("id")) else {
            return Agreement::Differs("a merged todo has no id".to_owned());
        };
        let Some(item) = submitted.iter().find(|i| i.id.as_str() == id) else {
            return Agreement::Differs(format!(
                "the call changes todo {id:?}, the record has no such item"
            ));
        };
        if let Some(content) = t.get("content").and_then(Value::as_str)
            && content != item.content
        {
            return Agreement::Differs(format!(
                "todo {id:?}: the call says {content:?}, the record {:?}",
                item.content
            ));
        }
        if let Some(status) = t.get("status").and_then(Value::as_str)
            && planlog_core::PlanStatus::from_wire(status).is_some_and(|s| s != item.status)
        {
            return Agreement::Differs(format!(
                "todo {id:?}: the call says {status}, the record {}",
                item.status.as_str()
            ));
        }
    }
    Agreement::Agrees
}

/// Whether `submitted`, the items an import derived from `call`, is what the call's
/// arguments say: the same texts and statuses in order for a whole list (`TodoWrite`,
/// `update_plan`, `todowrite`, `write_todos`), the same subject for `TaskCreate`, the same
/// task for `TaskUpdate`. Texts are compared as the import keeps them (a long one as its
/// excerpt).
pub fn agreement(call: &ToolCall, submitted: &[PlanItem]) -> Agreement {
    if planlog_core::rules::is_cut_text(&call.arguments) {
        return Agreement::NotChecked;
    }
    let Ok(args) = serde_json::from_str::<Value>(&call.arguments) else {
        return Agreement::Differs("the call's arguments are not JSON".to_owned());
    };
    let mut notes = Vec::new();
    // Cursor's todo tool with `merge: true` names only the items it changes, by id.
    if matches!(call.tool.as_str(), "TodoWrite" | "todo_write")
        && args.get("merge").and_then(Value::as_bool) == Some(true)
    {
        return merge_agreement(&args, submitted);
    }
    let listed = match call.tool.as_str() {
        "TodoWrite" | "todo_write" => super::claude_code::todos_of(&args, &mut notes),
        "update_plan" => {
            super::codex::plan_of(Some(&Value::String(call.arguments.clone())), &mut notes)
                .map(|(_, todos)| todos)
        }
        "todowrite" => super::opencode::todos_of(&args, &mut notes),
        "write_todos" => super::gemini::todos_of(&args, &mut notes),
        "TaskCreate" => {
            let subject = args.get("subject").and_then(Value::as_str).unwrap_or("");
            return same_text(subject, submitted.first().map(|i| i.content.as_str()));
        }
        "TaskUpdate" => {
            let id = ["taskId", "id", "task_id"]
                .iter()
                .find_map(|k| id_text(args.get(*k)));
            return match (id, submitted.first()) {
                (Some(id), Some(item)) if id == item.id.as_str() => Agreement::Agrees,
                (id, item) => Agreement::Differs(format!(
                    "the call names task {id:?}, the record task {:?}",
                    item.map(|i| i.id.as_str())
                )),
            };
        }
        _ => return Agreement::NotChecked,
    };
    let todos = match listed {
        Ok(t) => t,
        Err(why) => return Agreement::Differs(format!("the call's arguments: {why}")),
    };
    let mut op = Op::List(todos);
    bound_op(&mut op, &mut notes);
    let Op::List(todos) = op else {
        return Agreement::NotChecked;
    };
    if todos.len() != submitted.len() {
        return Agreement::Differs(format!(
            "the call lists {} items, the record {}",
            todos.len(),
            submitted.len()
        ));
    }
    for (n, (sent, kept)) in todos.iter().zip(submitted).enumerate() {
        if !same(sent, kept) {
            return Agreement::Differs(format!(
                "item {} is {:?} ({}) in the call, {:?} ({}) in the record",
                n + 1,
                sent.content,
                sent.status,
                kept.content,
                kept.status
            ));
        }
    }
    Agreement::Agrees
}

fn same(sent: &Todo, kept: &PlanItem) -> bool {
    sent.content == kept.content && sent.status == kept.status
}

fn same_text(sent: &str, kept: Option<&str>) -> Agreement {
    let mut op = Op::Create(Todo {
        content: sent.to_owned(),
        ..Todo::default()
    });
    bound_op(&mut op, &mut Vec::new());
    match (op, kept) {
        (Op::Create(t), Some(k)) if t.content == k => Agreement::Agrees,
        (_, k) => Agreement::Differs(format!(
            "the call's subject is {sent:?}, the record's {k:?}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use planlog_core::{ItemId, PlanStatus};

    use super::*;

    fn item(id: &str, content: &str, status: PlanStatus) -> PlanItem {
        PlanItem::new(ItemId::new(id.to_owned()).unwrap(), content, status)
    }

    fn call(tool: &str, arguments: &str) -> ToolCall {
        ToolCall {
            tool: tool.to_owned(),
            arguments: arguments.to_owned(),
            result: None,
        }
    }

    #[test]
    fn a_list_agrees_only_when_texts_and_statuses_match_in_order() {
        let sent = call(
            "update_plan",
            r#"{"plan":[{"step":"a","status":"completed"},{"step":"b","status":"pending"}]}"#,
        );
        let kept = [
            item("t1", "a", PlanStatus::Completed),
            item("t2", "b", PlanStatus::Pending),
        ];
        assert_eq!(agreement(&sent, &kept), Agreement::Agrees);
        let wrong = [
            item("t1", "a", PlanStatus::Completed),
            item("t2", "b", PlanStatus::InProgress),
        ];
        assert!(matches!(agreement(&sent, &wrong), Agreement::Differs(d) if d.contains("item 2")));
        assert!(matches!(
            agreement(&sent, &kept[..1]),
            Agreement::Differs(_)
        ));
    }

    #[test]
    fn a_merging_todo_call_agrees_when_every_item_it_names_is_as_it_says() {
        let sent = call(
            "TodoWrite",
            r#"{"merge":true,"todos":[{"id":"a","status":"completed"},{"id":"c","content":"C","status":"pending"}]}"#,
        );
        let kept = [
            item("a", "A", PlanStatus::Completed),
            item("b", "B", PlanStatus::InProgress),
            item("c", "C", PlanStatus::Pending),
        ];
        assert_eq!(agreement(&sent, &kept), Agreement::Agrees);
        let not_done = [item("a", "A", PlanStatus::InProgress), kept[2].clone()];
        assert!(
            matches!(agreement(&sent, &not_done), Agreement::Differs(d) if d.contains("\"a\""))
        );
        assert!(
            matches!(agreement(&sent, &kept[..2]), Agreement::Differs(d) if d.contains("no such item"))
        );
    }

    #[test]
    fn task_calls_are_checked_by_subject_and_id() {
        let created = call("TaskCreate", r#"{"subject":"Ship it","description":"d"}"#);
        assert_eq!(
            agreement(&created, &[item("1", "Ship it", PlanStatus::Pending)]),
            Agreement::Agrees
        );
        assert!(matches!(
            agreement(&created, &[item("1", "Other", PlanStatus::Pending)]),
            Agreement::Differs(_)
        ));
        let updated = call("TaskUpdate", r#"{"taskId":2,"status":"completed"}"#);
        assert_eq!(
            agreement(&updated, &[item("2", "x", PlanStatus::Completed)]),
            Agreement::Agrees
        );
        assert!(matches!(
            agreement(&updated, &[item("3", "x", PlanStatus::Completed)]),
            Agreement::Differs(_)
        ));
        assert_eq!(
            agreement(&call("plan_write", "{}"), &[]),
            Agreement::NotChecked
        );
    }
}
