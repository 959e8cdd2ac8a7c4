//! What a hook records: the call Claude Code just ran (`PostToolUse`, `PostToolUseFailure`)
//! or the call planlog refused (`PreToolUse`), as the records an import of the transcript
//! would make, into the session the call belongs to. Imports and hooks therefore meet in one
//! session: the same session id, the same call ids (`tool_use_id`), so importing the
//! transcript later adds only what the hooks missed.

use planlog_core::rules::Rejection;
use planlog_core::{Env, EventLog, SessionId, Timestamp};
use serde_json::Value;

use super::input::HookInput;
use crate::import::claude_code::call_record;
use crate::import::record::{Op, Record, SourceCall, SourceSession, Stamp};
use crate::import::writer::{FileReport, session_id, write_records};
use crate::import::{Format, ImportError};

/// The planlog session a hook's calls go to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `claude-code` (a session) or `claude-code-tasks` (a shared list).
    pub format: Format,
    /// The source key: the shared list's id, Claude Code's session id, or
    /// `<session>/agent-<agent id>` for a sub-agent.
    pub key: String,
    /// A sub-agent's main session key.
    pub parent: Option<String>,
}

impl Target {
    /// Where `input`'s calls go: the shared task list when `CLAUDE_CODE_TASK_LIST_ID` is set
    /// (`list_id`; every agent on the list writes one session, `ct-<list id>`, the session a
    /// folder import of that list also writes), else Claude Code's session (`cc-<session
    /// id>`), a sub-agent's calls to a child of it.
    pub fn of(input: &HookInput, list_id: Option<&str>) -> Target {
        match (list_id.filter(|l| !l.trim().is_empty()), &input.agent_id) {
            (Some(list), _) => Target {
                format: Format::ClaudeCodeTasks,
                key: list.to_owned(),
                parent: None,
            },
            (None, Some(agent)) => Target {
                format: Format::ClaudeCode,
                key: format!("{}/agent-{agent}", input.session_id),
                parent: Some(input.session_id.clone()),
            },
            (None, None) => Target {
                format: Format::ClaudeCode,
                key: input.session_id.clone(),
                parent: None,
            },
        }
    }

    /// Its planlog session id.
    pub fn session_id(&self) -> SessionId {
        session_id(self.format, &self.key)
    }

    /// The label of the session it creates.
    fn label(&self) -> String {
        match (self.format, &self.parent) {
            (Format::ClaudeCodeTasks, _) => {
                format!("Claude Code task list {} (captured live)", self.key)
            }
            (_, Some(parent)) => {
                format!("a sub-agent of Claude Code session {parent} (captured live)")
            }
            _ => format!("Claude Code session {} (captured live)", self.key),
        }
    }

    /// The session record that announces it.
    pub(crate) fn session(&self, input: &HookInput, now: Timestamp) -> SourceSession {
        SourceSession {
            key: self.key.clone(),
            parent: self.parent.clone(),
            started: Some(now),
            label: Some(self.label()),
            cwd: input.cwd.clone(),
            transcript: input.transcript_path.clone(),
        }
    }
}

fn call(target: &Target, input: &HookInput, now: Timestamp, op: Op) -> SourceCall {
    SourceCall {
        session: target.key.clone(),
        line: 0,
        call_id: input.tool_use_id.clone(),
        at: Stamp::At(now),
        turn: None,
        op,
        explanation: None,
        notes: Vec::new(),
    }
}

/// The records of a `PostToolUse` or `PostToolUseFailure` input for a plan tool (`None` for
/// any other input).
pub fn ran(input: &HookInput, target: &Target, now: Timestamp) -> Option<Vec<Record>> {
    let tool = input.tool_name.as_deref()?;
    let result = match input.hook_event_name.as_str() {
        "PostToolUse" => {
            let response = input.tool_response.clone();
            let failed = response.as_ref().is_some_and(|r| {
                r.is_string() || r.get("success").and_then(Value::as_bool) == Some(false)
            });
            let text = match &response {
                Some(Value::String(s)) => s.clone(),
                Some(r) => r
                    .get("error")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                None => String::new(),
            };
            (failed, text, response.filter(Value::is_object))
        }
        "PostToolUseFailure" => (
            true,
            input
                .error
                .clone()
                .unwrap_or_else(|| "the tool failed".to_owned()),
            None,
        ),
        _ => return None,
    };
    let placeholder = call(target, input, now, Op::List(Vec::new()));
    let record = call_record(
        tool,
        input.tool_input.clone().unwrap_or(Value::Null),
        placeholder,
        Some(result),
    )?;
    Some(vec![Record::Session(target.session(input, now)), record])
}

/// The records of a `PreToolUse` call planlog refused.
pub fn blocked(
    input: &HookInput,
    target: &Target,
    now: Timestamp,
    rejection: Rejection,
) -> Vec<Record> {
    let op = Op::Blocked {
        submitted: input.tool_input.clone().unwrap_or(Value::Null),
        rejection,
        tool: input.tool_name.clone().unwrap_or_default(),
    };
    vec![
        Record::Session(target.session(input, now)),
        Record::Call(call(target, input, now, op)),
    ]
}

/// Writes `records` (one hook's) into `log` in one transaction.
///
/// # Errors
/// As an import: a store error, or a session id held by a session that is not this one's.
pub fn write(
    log: &dyn EventLog,
    env: &dyn Env,
    target: &Target,
    records: &[Record],
) -> Result<FileReport, ImportError> {
    write_records(
        log,
        env,
        target.format,
        "a Claude Code hook",
        &target.label(),
        records,
    )
}

/// Why spooled hook calls were not all stored.
#[derive(Debug, thiserror::Error)]
pub enum SpoolError {
    /// The spool could not be read or emptied.
    #[error("the hook spool: {0}")]
    Io(#[from] std::io::Error),
    /// The store refused (it is still locked or full): the spool keeps everything.
    #[error(transparent)]
    Store(#[from] ImportError),
}

/// Stores every spooled hook call in `log`, oldest first ([`super::spool::Spool::drain`]).
/// A call the store can never take (its session id held by another session) is dropped with
/// a warning rather than blocking the spool forever.
///
/// # Errors
/// The first storage failure; everything stays spooled then.
pub fn store_spooled(
    log: &dyn EventLog,
    env: &dyn Env,
    spool: &super::spool::Spool,
) -> Result<usize, SpoolError> {
    spool.drain(|entry| {
        let target = Target::of(&entry.input, entry.list_id.as_deref());
        let Some(records) = ran(&entry.input, &target, env.now()) else {
            return Ok(());
        };
        match write(log, env, &target, &records) {
            Ok(_) => Ok(()),
            Err(ImportError::Store(e)) => Err(SpoolError::Store(ImportError::Store(e))),
            Err(other) => {
                tracing::warn!(spool = %spool.path().display(), call = ?entry.input.tool_use_id, error = %other, "dropping a spooled hook call the store can never take");
                Ok(())
            }
        }
    })
}
