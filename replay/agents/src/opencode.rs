//! planlog inside opencode, through a plugin (code, not configuration): opencode loads
//! `.opencode/plugins/planlog.ts` (or `~/.config/opencode/plugins/`), which forwards each
//! `todowrite` call (`tool.execute.after`, with its call id) and each compaction
//! (`experimental.session.compacting`) to `planlog hook opencode` as hook input in Claude
//! Code's field names, so [`crate::hook`] reads it. Calls are recorded in the session an import
//! of the session's export writes (`oc-<session id>`), by the export's call ids; the plan goes
//! into the compaction's context, so the summary the model goes on from keeps it. opencode has
//! no session-start hook (and keeps its todo list itself across a resume).
//!
//! The plugin's source is [`PLUGIN_SOURCE`] (`replay/agents/opencode/planlog.ts`);
//! [`plugin`] fills in the command.
//!
//! Enforcing (`planlog install opencode --enforce`): the plugin sends each `todowrite` about to
//! run (`tool.execute.before`) with opencode's own todo list as it stands (read from
//! opencode's server), and throws planlog's refusal, which opencode gives the model as the
//! tool's error. planlog cannot read opencode's record within a hook's time, so that list is
//! its catch-up: a refusal stands only when planlog's record lists the same items
//! ([`same_list`]); otherwise the call is allowed, and recorded once it has run.

/// The plan tools whose calls an opencode hook records.
pub const PLAN_TOOLS: [&str; 1] = ["todowrite"];

/// The plugin's source, with `__PLANLOG_COMMAND__` to fill in.
pub const PLUGIN_SOURCE: &str = include_str!("../opencode/planlog.ts");

/// The file name install writes in opencode's plugin folder.
pub const PLUGIN_FILE: &str = "planlog.ts";

/// The plugin that runs `command` (argv: `planlog hook opencode …`).
pub fn plugin(command: &[String]) -> String {
    // A list of strings always serializes.
    let argv = serde_json::to_string(command).unwrap_or_else(|_| "[]".to_owned());
    PLUGIN_SOURCE.replace("__PLANLOG_COMMAND__", &argv)
}

/// Whether `text` is a plugin file planlog wrote (install replaces and uninstall removes only
/// those).
pub fn is_planlog_plugin(text: &str) -> bool {
    text.starts_with("// planlog's opencode plugin:")
}

use planlog_core::Plan;
use planlog_import::{Op, Record};
use serde_json::{Value, json};

use crate::hook::{Entry, Target};

/// The record of a `todowrite` planlog's plugin saw run (`PostToolUse`; `None` for any other
/// input), the record an import of the export makes of that call.
pub(crate) fn ran(entry: &Entry, target: &Target, tool: &str) -> Option<Record> {
    let input = &entry.input;
    // planlog's plugin sends `tool.execute.after`: the call ran, `output` is what the
    // model read.
    if tool != "todowrite" || input.hook_event_name != "PostToolUse" {
        return None;
    }
    let read = input
        .tool_response
        .as_ref()
        .and_then(|r| r.get("output"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    Some(planlog_import::opencode_record(
        input.tool_input.clone().unwrap_or(Value::Null),
        read,
        None,
        entry.call(target, Op::List(Vec::new())),
    ))
}

/// Whether `plan`, planlog's record of an opencode session, lists what opencode's own todo
/// list `now` lists: the same texts and statuses in the same order, read as an import reads
/// them. `Err` says why planlog cannot vouch for its record (no list sent, or a call it
/// missed), so an enforcing hook allows the call instead of judging it.
///
/// # Errors
/// The reason, in words for the warning the hook prints.
pub fn same_list(plan: &Plan, now: Option<&Value>) -> Result<(), String> {
    let now = now.ok_or("the plugin sent no todo list to check planlog's record against")?;
    let listed = planlog_import::todowrite_items(&json!({ "todos": now }), &mut Vec::new())
        .map_err(|e| format!("opencode's todo list is not one planlog reads: {e}"))?;
    let same = listed.len() == plan.len()
        && listed
            .iter()
            .zip(plan.items())
            .all(|(t, item)| t.content == item.content && t.status == item.status);
    if same {
        Ok(())
    } else {
        Err(format!(
            "planlog's record of this session ({} items) is not opencode's list ({} items): it missed a call",
            plan.len(),
            listed.len()
        ))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code
    use super::*;
    use planlog_core::PlanStatus;
    use planlog_core::testkit::item;

    #[test]
    fn the_record_is_vouched_for_only_when_it_lists_what_opencode_lists() {
        let plan = Plan::from_items(vec![
            item("t1", "Write parser tests", PlanStatus::Completed),
            item("t2", "Implement parser", PlanStatus::InProgress),
        ]);
        let now = json!([
            {"id": "x", "content": "Write parser tests", "status": "completed", "priority": "high"},
            {"id": "y", "content": "Implement parser", "status": "in_progress", "priority": "low"}
        ]);
        assert_eq!(same_list(&plan, Some(&now)), Ok(()));
        // A status planlog did not see change, an item it did not see, the order changed.
        let moved = json!([
            {"content": "Write parser tests", "status": "completed"},
            {"content": "Implement parser", "status": "completed"}
        ]);
        assert!(
            same_list(&plan, Some(&moved))
                .unwrap_err()
                .contains("missed a call")
        );
        let more = json!([
            {"content": "Write parser tests", "status": "completed"},
            {"content": "Implement parser", "status": "in_progress"},
            {"content": "Ship", "status": "pending"}
        ]);
        assert!(
            same_list(&plan, Some(&more))
                .unwrap_err()
                .contains("(3 items)")
        );
        let swapped = json!([
            {"content": "Implement parser", "status": "in_progress"},
            {"content": "Write parser tests", "status": "completed"}
        ]);
        assert!(same_list(&plan, Some(&swapped)).is_err());
        // Nothing sent, or not a list: never vouched for.
        assert!(same_list(&plan, None).unwrap_err().contains("no todo list"));
        assert!(same_list(&plan, Some(&json!("x"))).is_err());
        assert_eq!(same_list(&Plan::new(), Some(&json!([]))), Ok(()));
    }
}
