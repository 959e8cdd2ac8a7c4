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
