//! planlog inside OpenAI's Codex CLI, through its hooks (`hooks.json`): every `update_plan`
//! call recorded as it runs, in the session an import of its rollout writes (`cx-<id>`), and
//! the plan put back into the model's context after a resume, a clear or a compaction
//! (`SessionStart`'s `additionalContext`). Codex's hook payloads use Claude Code's field names,
//! so [`crate::hook`] reads them; what is Codex's own is here.

/// The plan tools whose calls a Codex hook records.
pub const PLAN_TOOLS: [&str; 1] = ["update_plan"];
