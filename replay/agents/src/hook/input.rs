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
    /// `manual` or `auto` (Gemini CLI's `PreCompress`).
    #[serde(default)]
    pub trigger: Option<String>,
    /// Set inside a sub-agent.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The model (`SessionStart`, when Claude Code says).
    #[serde(default)]
    pub model: Option<String>,
    /// The session's title (`SessionStart`, when it has one).
    #[serde(default)]
    pub session_title: Option<String>,
    /// The agent's own plan as it stands before this call (planlog's opencode plugin sends
    /// opencode's todo list with `PreToolUse`): the witness an enforcing hook checks its record
    /// against before it judges.
    #[serde(default)]
    pub todos_now: Option<Value>,
    /// The agent's plan as it would be after this call (Copilot CLI's todo table with the
    /// call's statements run on a copy, see [`crate::copilot::todos_after`]): what an
    /// enforcing hook judges.
    #[serde(default)]
    pub todos_after: Option<Value>,
    /// `tool_input` as Claude Code wrote it, byte for byte (set by [`HookInput::parse`]; a
    /// spooled entry keeps it).
    #[serde(skip)]
    pub tool_input_text: Option<String>,
}

/// `tool_input`'s text.
#[derive(Deserialize)]
struct RawToolInput<'a> {
    #[serde(borrow, default)]
    tool_input: Option<&'a serde_json::value::RawValue>,
}

/// A hook's stdin that is not a Claude Code hook input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a Claude Code hook input: {detail}")]
pub struct NotHookInput {
    /// What the JSON parser found wrong.
    pub detail: String,
}

impl HookInput {
    /// Reads a hook's stdin.
    ///
    /// # Errors
    /// [`NotHookInput`], saying what is wrong with it in one line.
    pub fn parse(bytes: &[u8]) -> Result<Self, NotHookInput> {
        let mut input: Self = serde_json::from_slice(bytes).map_err(|e| NotHookInput {
            detail: e.to_string(),
        })?;
        input.tool_input_text = serde_json::from_slice::<RawToolInput<'_>>(bytes)
            .ok()
            .and_then(|r| r.tool_input)
            .map(|r| r.get().to_owned());
        Ok(input)
    }

    /// With a relative `transcript_path` read from `cwd`, the agent's working folder (the
    /// hook's, which may run in another process: a warm `planlog hook-server`). Agents send
    /// absolute paths; a relative one would otherwise name a file of whichever folder the
    /// reader happens to run in.
    #[must_use]
    pub fn with_transcript_from(mut self, cwd: &std::path::Path) -> Self {
        if let Some(path) = &self.transcript_path
            && !path.is_empty()
            && std::path::Path::new(path).is_relative()
        {
            self.transcript_path = Some(cwd.join(path).to_string_lossy().into_owned());
        }
        self
    }

    /// The tool's input as sent: its text as Claude Code wrote it, else its JSON.
    pub fn arguments(&self) -> String {
        match (&self.tool_input_text, &self.tool_input) {
            (Some(text), _) => text.clone(),
            (None, Some(v)) => v.to_string(),
            (None, None) => "null".to_owned(),
        }
    }
}
