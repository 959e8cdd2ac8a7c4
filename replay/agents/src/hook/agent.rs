//! [`Agent`]: whose hook a call is, which decides where its writes go and how its plan tool
//! calls read.

use planlog_import::SourceFormat;

/// An agent whose hooks planlog speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Agent {
    /// Claude Code (`TodoWrite`, the Tasks tools).
    #[default]
    ClaudeCode,
    /// OpenAI's Codex CLI (`update_plan`).
    Codex,
    /// Google's Gemini CLI (`write_todos`).
    Gemini,
    /// opencode (`todowrite`), through planlog's plugin.
    Opencode,
    /// Cursor (`TodoWrite`).
    Cursor,
    /// GitHub Copilot CLI (its `sql` tool's `todos` table).
    Copilot,
}

impl Agent {
    /// Every agent whose hooks planlog speaks.
    pub const ALL: [Agent; 6] = [
        Agent::ClaudeCode,
        Agent::Codex,
        Agent::Gemini,
        Agent::Opencode,
        Agent::Cursor,
        Agent::Copilot,
    ];

    /// Its word in commands and files (`claude-code`, `codex`, `gemini`).
    pub fn word(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::Opencode => "opencode",
            Agent::Cursor => "cursor",
            Agent::Copilot => "copilot",
        }
    }

    /// The agent named `word`.
    pub fn from_word(word: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|a| a.word() == word)
    }

    /// Its name, as people know it.
    pub fn name(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "Claude Code",
            Agent::Codex => "Codex",
            Agent::Gemini => "Gemini CLI",
            Agent::Opencode => "opencode",
            Agent::Cursor => "Cursor",
            Agent::Copilot => "Copilot CLI",
        }
    }

    /// The source format of its recordings: a session its hooks capture is the session an
    /// import of its recording writes (`cc-<id>`, `cx-<id>`).
    pub fn format(self) -> SourceFormat {
        match self {
            Agent::ClaudeCode => SourceFormat::ClaudeCode,
            Agent::Codex => SourceFormat::Codex,
            Agent::Gemini => SourceFormat::Gemini,
            Agent::Opencode => SourceFormat::Opencode,
            Agent::Cursor => SourceFormat::Cursor,
            Agent::Copilot => SourceFormat::Copilot,
        }
    }

    /// Its plan tools: the calls its hooks record.
    pub fn plan_tools(self) -> &'static [&'static str] {
        match self {
            Agent::ClaudeCode => &crate::claude_code::PLAN_TOOLS,
            Agent::Codex => &crate::codex::PLAN_TOOLS,
            Agent::Gemini => &crate::gemini::PLAN_TOOLS,
            Agent::Opencode => &crate::opencode::PLAN_TOOLS,
            Agent::Cursor => &crate::cursor::PLAN_TOOLS,
            Agent::Copilot => &crate::copilot::PLAN_TOOLS,
        }
    }
}
