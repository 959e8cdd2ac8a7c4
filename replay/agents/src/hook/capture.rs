//! What a hook records, as the records an import of the transcript would make, into the
//! session the call belongs to: the call the agent just ran (each agent reads its own: the
//! `ran` of `crate::claude_code`, `crate::codex`, `crate::gemini`, `crate::opencode`,
//! `crate::cursor`), the call planlog refused, a compaction, what was put back, or a fork's
//! first plan. Imports and hooks therefore meet in one session: the same session id, the same
//! call ids (`tool_use_id`), so importing the transcript later adds only what the hooks
//! missed (Gemini's hooks get no call id: an import finds those calls by their arguments and
//! time).
//!
//! Every record is made from a spool [`Entry`], whether it is stored at once or later: its
//! time is the entry's (when the hook ran), and a call without a tool call id gets the call
//! id `hook:<entry id>`, so two such calls never pass for one and storing one twice records
//! it once.

use planlog_core::events::{ToolCall, ToolCallResult};
use planlog_core::rules::Rejection;
use planlog_core::{Env, EventLog, LogError, SessionId, Timestamp};
use serde_json::Value;

use super::agent::Agent;
use super::input::HookInput;
use super::spool::{Compaction, Entry, Kind};
use planlog_import::Described;
use planlog_import::{FileReport, HistoryCache, session_id, write_records};
use planlog_import::{ImportError, SourceFormat};
use planlog_import::{Op, Record, SourceCall, SourceSession, Stamp, Todo};

/// The planlog session a hook's calls go to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `claude-code` (a session) or `claude-code-tasks` (a shared list).
    pub format: SourceFormat,
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
        Target::of_agent(Agent::ClaudeCode, input, list_id)
    }

    /// Where the calls of `agent`'s hook input go: for Claude Code as [`Target::of`]; for
    /// Codex its session (`cx-<session id>`, the session an import of its rollout writes), a
    /// sub-agent's calls to a child of it (Codex gives a sub-agent's hooks the parent's
    /// session id and the sub-agent's `agent_id`).
    pub fn of_agent(agent: Agent, input: &HookInput, list_id: Option<&str>) -> Target {
        if agent != Agent::ClaudeCode {
            let (key, parent) = match &input.agent_id {
                Some(sub) => (
                    format!("{}/agent-{sub}", input.session_id),
                    Some(input.session_id.clone()),
                ),
                None => (input.session_id.clone(), None),
            };
            return Target {
                format: agent.format(),
                key,
                parent,
            };
        }
        match (list_id.filter(|l| !l.trim().is_empty()), &input.agent_id) {
            (Some(list), _) => Target {
                format: SourceFormat::ClaudeCodeTasks,
                key: list.to_owned(),
                parent: None,
            },
            (None, Some(agent)) => Target {
                format: SourceFormat::ClaudeCode,
                key: format!("{}/agent-{agent}", input.session_id),
                parent: Some(input.session_id.clone()),
            },
            (None, None) => Target {
                format: SourceFormat::ClaudeCode,
                key: input.session_id.clone(),
                parent: None,
            },
        }
    }

    /// The main Claude Code session `session` (a fork's parent).
    pub fn main(session: &str) -> Target {
        Target {
            format: SourceFormat::ClaudeCode,
            key: session.to_owned(),
            parent: None,
        }
    }

    /// Its planlog session id.
    pub fn session_id(&self) -> SessionId {
        session_id(self.format, &self.key)
    }

    /// The label of the session it creates.
    pub fn label(&self) -> String {
        let agent = self.agent().name();
        match (self.format, &self.parent) {
            (SourceFormat::ClaudeCodeTasks, _) => {
                format!("Claude Code task list {} (captured live)", self.key)
            }
            (_, Some(parent)) => {
                format!("a sub-agent of {agent} session {parent} (captured live)")
            }
            _ => format!("{agent} session {} (captured live)", self.key),
        }
    }

    /// Whose session it is.
    pub fn agent(&self) -> Agent {
        match self.format {
            SourceFormat::Codex => Agent::Codex,
            SourceFormat::Gemini => Agent::Gemini,
            SourceFormat::Opencode => Agent::Opencode,
            SourceFormat::Cursor => Agent::Cursor,
            SourceFormat::Copilot => Agent::Copilot,
            _ => Agent::ClaudeCode,
        }
    }

    /// The session record that announces it.
    fn session(&self, input: &HookInput, at: Timestamp) -> SourceSession {
        SourceSession {
            key: self.key.clone(),
            parent: self.parent.clone(),
            started: Some(at),
            label: Some(self.label()),
            cwd: input.cwd.clone(),
            transcript: input.transcript_path.clone(),
        }
    }
}

impl Entry {
    /// Where its records go.
    pub fn target(&self) -> Target {
        Target::of_agent(self.agent, &self.input, self.list_id.as_deref())
    }

    /// Its call id: the tool call's, else one of its own (a compaction's is its boundary
    /// line's, as an import of the transcript names it).
    pub fn call_id(&self) -> String {
        match (&self.kind, &self.input.tool_use_id) {
            (Kind::Fork { parent, seq }, _) => format!("fork:{parent}@{}", seq.get()),
            (Kind::Compacted(c), _) => c.call_id(&self.id),
            (Kind::Restored { .. }, _) => format!("restore:{}", self.id),
            (_, Some(id)) if !id.trim().is_empty() => id.clone(),
            _ => format!("hook:{}", self.id),
        }
    }

    /// The call of `target`'s session this entry makes, with `op`.
    pub(crate) fn call(&self, target: &Target, op: Op) -> SourceCall {
        SourceCall {
            session: target.key.clone(),
            line: 0,
            call_id: Some(self.call_id()),
            at: Stamp::At(self.at),
            turn: None,
            op,
            explanation: None,
            notes: Vec::new(),
            tool_call: None,
        }
    }
}

/// The records of `entry` (`Ok(None)`: nothing to record: not a plan tool, or a fork whose
/// session has begun already or whose parent has no plan). A fork reads its parent's plan
/// from `log`.
///
/// # Errors
/// A store error while reading a fork's parent.
pub(super) fn records(entry: &Entry, log: &dyn EventLog) -> Result<Option<Vec<Record>>, LogError> {
    let records = records_of(entry, log)?;
    let Some(mut list) = records else {
        return Ok(None);
    };
    // What the hook knows of the session comes after its start (the writer records it only
    // when it says something new); a session the hooks begin also gets what the head of its
    // transcript says (Claude Code's version, the branch, the first prompt). The head is
    // read again by later calls while none of that is on record: the agent may not have
    // written its transcript's first lines yet when its first hook ran (a transcript still
    // being written), and the first prompt would otherwise never be recorded.
    if !matches!(entry.kind, Kind::Fork { .. }) {
        let target = entry.target();
        let read_head = log.session(&target.session_id())?.is_none_or(|info| {
            info.description
                .as_ref()
                .is_none_or(|d| d.agent_version.is_none() && d.first_prompt.is_none())
        });
        list.insert(1, describe(entry, &target, read_head));
    }
    Ok(Some(list))
}

/// The record of a compaction a hook saw.
fn compacted(entry: &Entry, target: &Target, c: &Compaction) -> Record {
    let mut call = entry.call(
        target,
        Op::Compacted {
            trigger: c.trigger.clone(),
            tokens_before: c.tokens_before,
            tokens_after: c.tokens_after,
            since: None,
        },
    );
    call.call_id = Some(c.call_id(&entry.id));
    Record::Call(call)
}

/// How much of a transcript's head a hook reads for what it says of its session.
pub(super) const DESCRIBE_HEAD_BYTES: u64 = 64 * 1024;

/// What a hook input says of its session: the agent, the project folder, and (at
/// `SessionStart`) the model and the title; with `read_head` (a session the hooks begin, or
/// one whose transcript's head is not on record yet), what the first
/// [`DESCRIBE_HEAD_BYTES`] of its transcript say, read as an import reads them.
fn describe(entry: &Entry, target: &Target, read_head: bool) -> Record {
    let input = &entry.input;
    let mut d = Described::of(entry.agent.word());
    if read_head
        && target.format == entry.agent.format()
        && target.parent.is_none()
        && let Some(head) = transcript_head(input, entry.agent.format())
    {
        d.now = head;
    }
    Described::set(&mut d.now.project, input.cwd.as_deref());
    Described::set(&mut d.now.model, input.model.as_deref());
    d.title(input.session_title.as_deref());
    let mut call = entry.call(target, Op::Describe(d.now));
    call.call_id = Some(format!("describe:hook-{}", entry.id));
    Record::Call(call)
}

/// What the head of the session's transcript says of it (a regular file, its first
/// [`DESCRIBE_HEAD_BYTES`]), as the importer of `format` reads it.
fn transcript_head(
    input: &HookInput,
    format: SourceFormat,
) -> Option<planlog_core::events::SessionDescription> {
    use std::io::Read;
    let path = std::path::Path::new(input.transcript_path.as_deref()?);
    let file = planlog_import::open_regular(path).ok()?;
    let mut bytes = Vec::new();
    file.take(DESCRIBE_HEAD_BYTES)
        .read_to_end(&mut bytes)
        .ok()?;
    planlog_import::records(
        format,
        planlog_import::Input::Bytes {
            name: "transcript",
            bytes: &bytes,
        },
    )
    .into_iter()
    .rev()
    .find_map(|r| match r {
        Record::Call(SourceCall {
            session,
            op: Op::Describe(d),
            ..
        }) if session == input.session_id => Some(d),
        _ => None,
    })
}

fn records_of(entry: &Entry, log: &dyn EventLog) -> Result<Option<Vec<Record>>, LogError> {
    let target = entry.target();
    let session = Record::Session(target.session(&entry.input, entry.at));
    Ok(match &entry.kind {
        Kind::Ran => ran(entry, &target, log)?.map(|r| vec![session, r]),
        Kind::Blocked(rejection) => {
            let mut call = entry.call(&target, blocked_op(&entry.input, rejection));
            call.tool_call = Some(ToolCall {
                tool: entry.input.tool_name.clone().unwrap_or_default(),
                arguments: entry.input.arguments(),
                // What planlog told Claude Code, which shows it to the model as the reason.
                result: Some(ToolCallResult {
                    is_error: true,
                    text: Some(rejection.message.clone()),
                    structured: None,
                }),
            });
            Some(vec![session, Record::Call(call)])
        }
        // What happened to the agent's context is recorded in a session planlog has; no
        // session is made for it.
        Kind::Compacted(_) | Kind::Restored { .. } if log.head(&target.session_id())?.is_none() => {
            None
        }
        Kind::Compacted(c) => Some(vec![session, compacted(entry, &target, c)]),
        Kind::Restored {
            after,
            text,
            plan_at,
            compaction,
        } => {
            let mut list = vec![session];
            list.extend(compaction.as_ref().map(|c| compacted(entry, &target, c)));
            list.push(Record::Call(entry.call(
                &target,
                Op::Restored {
                    after: after.clone(),
                    text: text.clone(),
                    plan_at: *plan_at,
                },
            )));
            Some(list)
        }
        Kind::Fork { parent, seq } => {
            if log.head(&target.session_id())?.is_some() {
                return Ok(None);
            }
            let plan = match log.state_at(parent, *seq) {
                Ok(state) => state.plan,
                // The parent is gone (deleted since): the fork starts empty.
                Err(LogError::User(e)) => {
                    tracing::warn!(%parent, error = %e, "the fork's parent cannot be read; the fork starts empty");
                    return Ok(None);
                }
                Err(e) => return Err(e),
            };
            if plan.is_empty() {
                return Ok(None);
            }
            let mut call = entry.call(
                &target,
                Op::Snapshot(plan.items().iter().map(Todo::from).collect()),
            );
            call.explanation = Some(format!(
                "continued from session {parent} at seq {} (a Claude Code fork)",
                seq.get()
            ));
            Some(vec![session, Record::Call(call)])
        }
    })
}

/// The record of an input saying a plan tool ran (`None` for any other input): each agent
/// reads its own (`crate::<agent>::ran`).
fn ran(entry: &Entry, target: &Target, log: &dyn EventLog) -> Result<Option<Record>, LogError> {
    let Some(tool) = entry.input.tool_name.as_deref() else {
        return Ok(None);
    };
    Ok(match entry.agent {
        Agent::ClaudeCode => crate::claude_code::ran(entry, target, tool),
        Agent::Codex => crate::codex::ran(entry, target, tool),
        Agent::Gemini => crate::gemini::ran(entry, target, tool),
        Agent::Opencode => crate::opencode::ran(entry, target, tool),
        Agent::Cursor => return crate::cursor::ran(entry, target, log),
        Agent::Copilot => crate::copilot::ran(entry, target, tool),
    })
}

fn blocked_op(input: &HookInput, rejection: &Rejection) -> Op {
    Op::Blocked {
        submitted: input.tool_input.clone().unwrap_or(Value::Null),
        rejection: rejection.clone(),
        tool: input.tool_name.clone().unwrap_or_default(),
    }
}

/// Writes `records` (of one format) into `log` in one transaction, keeping what it derives
/// from a session's history in `history`.
///
/// # Errors
/// As an import: a store error, or a session id held by a session that is not this one's.
pub(super) fn write(
    log: &dyn EventLog,
    env: &dyn Env,
    format: SourceFormat,
    records: &[Record],
    history: Option<&HistoryCache>,
) -> Result<FileReport, ImportError> {
    let (name, label) = match format {
        SourceFormat::Codex => ("a Codex hook", "captured live from Codex"),
        SourceFormat::Gemini => ("a Gemini CLI hook", "captured live from Gemini CLI"),
        SourceFormat::Opencode => ("planlog's opencode plugin", "captured live from opencode"),
        SourceFormat::Cursor => ("a Cursor hook", "captured live from Cursor"),
        SourceFormat::Copilot => ("a Copilot CLI hook", "captured live from Copilot CLI"),
        _ => ("a Claude Code hook", "captured live from Claude Code"),
    };
    write_records(log, env, format, name, label, records, history)
}
