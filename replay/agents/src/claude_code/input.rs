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
    /// The model (`SessionStart`, when Claude Code says).
    #[serde(default)]
    pub model: Option<String>,
    /// The session's title (`SessionStart`, when it has one).
    #[serde(default)]
    pub session_title: Option<String>,
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

    /// The tool's input as sent: its text as Claude Code wrote it, else its JSON.
    pub fn arguments(&self) -> String {
        match (&self.tool_input_text, &self.tool_input) {
            (Some(text), _) => text.clone(),
            (None, Some(v)) => v.to_string(),
            (None, None) => "null".to_owned(),
        }
    }
}

/// Another agent whose payloads may reach Claude Code's hooks: Copilot CLI and Cursor run the
/// hooks in Claude Code's settings files (REFERENCE-AGENTS.md §4.1, §5), and Gemini CLI runs
/// them once `gemini hooks migrate` copied them. Their payloads are not Claude Code sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForeignHost {
    /// Cursor (it reads `~/.claude/settings.json`).
    Cursor,
    /// GitHub Copilot CLI (it reads `.claude/settings.json` and `.claude/settings.local.json`).
    CopilotCli,
    /// Gemini CLI (hooks copied from Claude Code's settings by `gemini hooks migrate`).
    GeminiCli,
}

impl ForeignHost {
    /// The agent's name, as people know it.
    pub fn name(self) -> &'static str {
        match self {
            ForeignHost::Cursor => "Cursor",
            ForeignHost::CopilotCli => "Copilot CLI",
            ForeignHost::GeminiCli => "Gemini CLI",
        }
    }

    /// Whose payload `raw` is, when it is another agent's: Cursor's carry `cursor_version`,
    /// `conversation_id`, `generation_id` or `workspace_roots`; Copilot CLI's are camelCase
    /// (`sessionId`, `toolName`, `toolArgs`, …), or, in its Claude-compatible dialect, carry
    /// `tool_args`/`tool_result`, or a `timestamp` without a `transcript_path`; Gemini CLI's
    /// name events Claude Code has no such name for (`AfterTool`, `BeforeAgent`, …), or carry a
    /// `timestamp` and a recording under a `.gemini` folder. Claude Code's own payloads have none
    /// of these.
    pub fn of(raw: &Value) -> Option<ForeignHost> {
        let has = |key: &str| raw.get(key).is_some();
        if [
            "cursor_version",
            "conversation_id",
            "generation_id",
            "workspace_roots",
        ]
        .into_iter()
        .any(has)
        {
            return Some(ForeignHost::Cursor);
        }
        let camel = [
            "sessionId",
            "hookEventName",
            "toolName",
            "toolArgs",
            "toolResult",
        ];
        if camel.into_iter().any(has)
            || has("tool_args")
            || has("tool_result")
            || (has("timestamp") && !has("transcript_path"))
        {
            return Some(ForeignHost::CopilotCli);
        }
        let event = raw.get("hook_event_name").and_then(Value::as_str);
        let gemini_event = event.is_some_and(|e| {
            [
                "BeforeTool",
                "AfterTool",
                "BeforeAgent",
                "AfterAgent",
                "BeforeModel",
                "AfterModel",
                "BeforeToolSelection",
                "PreCompress",
            ]
            .contains(&e)
        });
        let gemini_recording = has("timestamp")
            && raw
                .get("transcript_path")
                .and_then(Value::as_str)
                .is_some_and(|p| p.contains("/.gemini/"));
        if gemini_event || gemini_recording {
            return Some(ForeignHost::GeminiCli);
        }
        None
    }
}
