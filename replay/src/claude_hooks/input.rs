//! What Claude Code sends a hook on stdin (the common fields, and the ones of the events
//! planlog handles), read leniently: unknown keys are ignored, and every field but the event
//! name and the session id may be missing.

use serde::Deserialize;
use serde_json::Value;

/// One hook call's input.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct HookInput {
    /// `PreToolUse`, `PostToolUse`, `PostToolUseFailure`, `SessionStart`, `UserPromptSubmit`, …
    pub hook_event_name: String,
    /// Claude Code's session id.
    pub session_id: String,
    /// The session's transcript file.
    #[serde(default)]
    pub transcript_path: Option<String>,
    /// The working folder.
    #[serde(default)]
    pub cwd: Option<String>,
    /// The tool (tool events).
    #[serde(default)]
    pub tool_name: Option<String>,
    /// The tool's input (tool events).
    #[serde(default)]
    pub tool_input: Option<Value>,
    /// The tool call's id (tool events).
    #[serde(default)]
    pub tool_use_id: Option<String>,
    /// The tool's structured result (`PostToolUse`).
    #[serde(default)]
    pub tool_response: Option<Value>,
    /// The error (`PostToolUseFailure`).
    #[serde(default)]
    pub error: Option<String>,
    /// `startup`, `resume`, `clear`, `compact` or `fork` (`SessionStart`).
    #[serde(default)]
    pub source: Option<String>,
    /// Set inside a sub-agent.
    #[serde(default)]
    pub agent_id: Option<String>,
}

impl HookInput {
    /// Reads a hook's stdin.
    ///
    /// # Errors
    /// What is wrong with it, in one line.
    pub fn parse(bytes: &[u8]) -> Result<Self, String> {
        serde_json::from_slice(bytes).map_err(|e| format!("not a Claude Code hook input: {e}"))
    }
}
