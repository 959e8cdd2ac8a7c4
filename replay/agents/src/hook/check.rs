//! The rules a hook enforces before an agent runs a plan tool (Claude Code's `PreToolUse`,
//! Codex's `PreToolUse`, Gemini CLI's `BeforeTool`): what plan_write would refuse, worked out
//! on the call as if it had run.
//!
//! - A whole list (`TodoWrite`, Codex's `update_plan`, Gemini's `write_todos`), read as its
//!   importer reads it, against the plan (item ids derived as an import derives them): a bulk
//!   completion (each item named by its position and its text, since list items have no ids
//!   the model can see) or a cancelled item completed is refused.
//! - `TaskCreate`, `TaskUpdate`: the task rules (a cancelled task completed, a task blocked by
//!   itself, a dependency cycle, the limits).
//!
//! Not refused, because planlog may not have seen the whole list (hooks installed in the
//! middle of a session, a list shared with an agent without the hooks): an update of a task
//! planlog does not know, a blocker it does not know. Those calls are recorded when they have
//! run, and flagged there. Input the tool itself will refuse is left to the tool.

use planlog_core::rules::{Breach, Rejection, RejectionCode, anti_cheat_breaches};
use planlog_core::tasks::{TaskTool, decide_task_write, parse_task_call};
use planlog_core::{Plan, PlanItem, SessionState};
use serde_json::Value;

use planlog_import::{ItemIds, Sent, Todo};

/// The tools [`check`] knows the rules of.
pub const CHECKED_TOOLS: [&str; 6] = [
    "TodoWrite",
    "TaskCreate",
    "TaskUpdate",
    "update_plan",
    "write_todos",
    "todowrite",
];

/// planlog's refusal of a call of `tool` with `input` against `plan`, if its rules refuse it.
pub fn check(plan: &Plan, tool: &str, input: &Value) -> Option<Rejection> {
    let notes = &mut Vec::new();
    let list = match tool {
        "TodoWrite" => planlog_import::todo_write_items(input, notes).ok(),
        "update_plan" => planlog_import::update_plan_items(input, notes).ok(),
        "write_todos" => planlog_import::write_todos_items(input, notes).ok(),
        "todowrite" => planlog_import::todowrite_items(input, notes).ok(),
        "TaskCreate" | "TaskUpdate" => return check_task(plan, tool, input),
        _ => return None,
    };
    check_list(plan, &list?)
}

/// The refusal of a whole list `todos` against `plan`.
fn check_list(plan: &Plan, todos: &[Todo]) -> Option<Rejection> {
    let ids = ItemIds::resume(plan).assign(
        &todos
            .iter()
            .map(|t| Sent {
                source: t.id.clone(),
                content: t.content.clone(),
                status: t.status,
            })
            .collect::<Vec<_>>(),
    );
    let items: Vec<PlanItem> = ids
        .into_iter()
        .zip(todos)
        .map(|(id, t)| PlanItem::new(id, t.content.clone(), t.status))
        .collect();
    anti_cheat_breaches(plan, &items)
        .into_iter()
        .find_map(|b| match b {
            // List items have no ids the model can see: named by position and
            // text.
            Breach::BulkCompletion { completions } => {
                let named: Vec<(usize, &str)> = completions
                    .iter()
                    .filter_map(|(i, _)| Some((*i, todos.get(i.checked_sub(1)?)?.content.as_str())))
                    .collect();
                Some(Rejection::bulk_completion_by_text(&named))
            }
            other => other.rejection(),
        })
}

/// The refusal of a task tool call (Claude Code's `TaskCreate`, `TaskUpdate`).
fn check_task(plan: &Plan, tool: &str, input: &Value) -> Option<Rejection> {
    let tool = TaskTool::from_name(tool)?;
    let call = parse_task_call(tool, input).ok()?;
    // Claude Code numbers its own tasks: only the rules matter here, not the id the
    // next create would get in a planlog session.
    let state = SessionState {
        plan: plan.clone(),
        ..SessionState::default()
    };
    decide_task_write(&state, &call).err().filter(|r| {
        !matches!(
            r.code,
            RejectionCode::UnknownTask
                | RejectionCode::UnknownBlocker
                | RejectionCode::NoTaskIdLeft
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use planlog_core::PlanStatus;
    use planlog_core::testkit::item;
    use serde_json::json;

    #[test]
    fn a_todowrite_bulk_completion_is_refused_by_position() {
        let plan = Plan::new();
        let r = check(
            &plan,
            "TodoWrite",
            &json!({"todos": [
                {"content": "a", "status": "completed", "activeForm": "a"},
                {"content": "b", "status": "completed", "activeForm": "b"}
            ]}),
        )
        .unwrap();
        assert_eq!(r.code, RejectionCode::BulkCompletion);
        assert!(
            r.message.contains(r#"item 1 ("a"), item 2 ("b")"#),
            "{}",
            r.message
        );
        assert!(
            !r.message.contains("t1"),
            "derived ids mean nothing to the model"
        );
    }

    #[test]
    fn task_updates_are_refused_for_cycles_but_not_for_what_planlog_may_not_know() {
        let plan = Plan::from_items(vec![
            item("1", "a", PlanStatus::Pending),
            item("2", "b", PlanStatus::Pending)
                .with_blocked_by(vec![planlog_core::ItemId::new("1").unwrap()]),
        ]);
        let cycle = check(
            &plan,
            "TaskUpdate",
            &json!({"taskId": "1", "addBlockedBy": ["2"]}),
        );
        assert_eq!(cycle.map(|r| r.code), Some(RejectionCode::DependencyCycle));
        assert_eq!(
            check(
                &plan,
                "TaskUpdate",
                &json!({"taskId": "9", "status": "completed"})
            ),
            None
        );
        assert_eq!(
            check(
                &plan,
                "TaskUpdate",
                &json!({"taskId": "1", "addBlockedBy": ["7"]})
            ),
            None
        );
        assert_eq!(
            check(
                &plan,
                "TaskUpdate",
                &json!({"taskId": "1", "status": "in_progress"})
            ),
            None
        );
        assert_eq!(check(&plan, "Bash", &json!({"command": "ls"})), None);
    }
}
