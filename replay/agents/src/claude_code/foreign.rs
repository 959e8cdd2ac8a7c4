//! [`ForeignHost`]: payloads that reach Claude Code's hooks from other agents.

use serde_json::Value;

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
