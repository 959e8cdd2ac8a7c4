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
//! [`plugin`] fills in the command. No enforcing: planlog could not bring the plan up to date
//! from opencode's own record within a hook's time.

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

use planlog_import::{Op, Record};
use serde_json::Value;

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
