//! What every parser yields, in file order: source sessions, their plan calls (already paired
//! with the result the agent's tool gave), and the lines that could not be used. The writer
//! turns these into events; parsers know nothing of planlog's log.

use planlog_core::{PlanStatus, Timestamp};
use serde_json::{Map, Value};

/// One record of a source, in file order.
// Records pass through a short channel one at a time; boxing calls would only add allocations.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    /// A source session was seen (before any of its calls).
    Session(SourceSession),
    /// A plan call of a session seen before.
    Call(SourceCall),
    /// A line that could not be used.
    Bad(BadLine),
    /// The source could not be read on (an IO error): the import stops, nothing is written.
    Unreadable(String),
    /// The source ends in the middle of its last line (it is still being written): that line
    /// is left for the next import. Its 1-based number.
    Cut(u64),
    /// Calls whose results the source does not hold yet (it is still being written) are left
    /// for the next import, with what follows them in their session.
    Deferred {
        /// The session's key.
        session: String,
        /// How many records were left (the calls waiting, and those behind them).
        records: usize,
        /// The line of the first call left.
        line: u64,
    },
    /// The source holds no conversation to import (why, for people): no session is written.
    NoConversation(String),
}

/// A session of the source: a conversation, a sub-agent's sidechain, a task list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceSession {
    /// Its key, unique within the format (the source's session id; for sidechains the main
    /// session's id and the agent's). The planlog session id is derived from it.
    pub key: String,
    /// The key of the session it is a sub-agent or fork of.
    pub parent: Option<String>,
    /// When it started, if the source says.
    pub started: Option<Timestamp>,
    /// A label for people (`imported from <file>` when `None`).
    pub label: Option<String>,
    /// The agent's working folder, when known (live capture).
    pub cwd: Option<String>,
    /// The agent's transcript, when known (live capture).
    pub transcript: Option<String>,
}

impl SourceSession {
    /// A main session with just a key.
    pub fn main(key: impl Into<String>, started: Option<Timestamp>) -> Self {
        Self {
            key: key.into(),
            parent: None,
            started,
            label: None,
            cwd: None,
            transcript: None,
        }
    }
}

/// When a call happened, as far as the source says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stamp {
    /// The source gives no time (old Codex rollouts): the previous event's time is used.
    Missing,
    /// The source's time could not be read (the text): the previous event's time is used
    /// and the event notes it.
    Unreadable(String),
    /// The source's time.
    At(Timestamp),
}

impl Stamp {
    /// Reads an RFC 3339 text (`None`: missing).
    pub fn parse(text: Option<&str>) -> Self {
        match text {
            None => Self::Missing,
            Some(t) => {
                Timestamp::parse(t).map_or_else(|_| Self::Unreadable(t.to_owned()), Self::At)
            }
        }
    }

    /// Reads epoch milliseconds (opencode).
    pub fn millis(value: Option<&Value>) -> Self {
        match value {
            None | Some(Value::Null) => Self::Missing,
            Some(v) => match v.as_i64() {
                Some(ms) => Self::At(Timestamp::from_millis(ms)),
                None => Self::Unreadable(v.to_string()),
            },
        }
    }

    /// The time, when known.
    pub fn known(&self) -> Option<Timestamp> {
        match self {
            Self::At(t) => Some(*t),
            Self::Missing | Self::Unreadable(_) => None,
        }
    }
}

/// One item as a source recorded it.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Todo {
    /// The source's own id (task ids; old Claude Code and opencode todo ids).
    pub id: Option<String>,
    /// The text (Claude's `content`/`subject`, Codex's `step`, Gemini's `description`).
    pub content: String,
    /// The status, mapped onto planlog's four (`blocked` and words planlog does not know become
    /// `pending`, with a note saying so).
    pub status: PlanStatus,
    /// A longer description (Claude Code tasks).
    pub description: Option<String>,
    /// The present-continuous form (`activeForm`).
    pub active_form: Option<String>,
    /// The owner (Claude Code tasks).
    pub owner: Option<String>,
    /// Ids of items that must finish first.
    pub blocked_by: Option<Vec<String>>,
    /// Anything else worth keeping verbatim (opencode's `priority`, Claude's `metadata`).
    pub metadata: Option<Map<String, Value>>,
}

impl From<&planlog_core::PlanItem> for Todo {
    /// An item as a source would have recorded it (its id, and every field it has).
    fn from(item: &planlog_core::PlanItem) -> Self {
        Todo {
            id: Some(item.id.to_string()),
            content: item.content.clone(),
            status: item.status,
            description: item.description.clone(),
            active_form: item.active_form.clone(),
            owner: item.owner.clone(),
            blocked_by: item
                .blocked_by
                .as_ref()
                .map(|b| b.iter().map(ToString::to_string).collect()),
            metadata: item.metadata.clone(),
        }
    }
}

/// The named fields a Claude Code `TaskUpdate` changed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TaskPatch {
    /// A new subject.
    pub subject: Option<String>,
    /// A new description.
    pub description: Option<String>,
    /// A new active form.
    pub active_form: Option<String>,
    /// A new owner (empty: no owner).
    pub owner: Option<String>,
    /// A new status (`deleted` is [`Op::Delete`]).
    pub status: Option<PlanStatus>,
    /// Tasks this one now blocks (each gains this one in its `blocked_by`).
    pub add_blocks: Vec<String>,
    /// Tasks that now block this one.
    pub add_blocked_by: Vec<String>,
    /// Every task that blocks this one, replacing the list (Gemini's tracker).
    pub blocked_by: Option<Vec<String>>,
    /// Metadata keys merged in; a `null` value deletes the key.
    pub metadata: Option<Map<String, Value>>,
}

/// What a call did, as the source's tool reported it.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// The whole list was set (TodoWrite, update_plan, todowrite, write_todos).
    List(Vec<Todo>),
    /// One task was created, with the id the tool's result gave.
    Create(Todo),
    /// Named fields of one task changed.
    Update {
        /// The task.
        id: String,
        /// What changed.
        patch: TaskPatch,
    },
    /// A task was deleted.
    Delete {
        /// The task.
        id: String,
    },
    /// The agent's tool refused the call (or it has no result): the list did not change.
    Refused {
        /// The input as recorded.
        submitted: Value,
        /// The tool's error text (or why there is none).
        error: String,
    },
    /// planlog refused the call before the agent's tool ran (a Claude Code hook).
    Blocked {
        /// The tool's input.
        submitted: Value,
        /// planlog's rule and message.
        rejection: planlog_core::rules::Rejection,
        /// The agent's tool (`TodoWrite`, `TaskCreate`, `TaskUpdate`).
        tool: String,
    },
    /// A full snapshot of the list the source recorded (Claude Code's `task_reminder`).
    Checkpoint(Vec<Todo>),
    /// What the session is, as the source names it so far (a title line, the project, the
    /// model): recorded when it differs from what was recorded last.
    Describe(planlog_core::events::SessionDescription),
    /// The agent's context was compacted.
    Compacted {
        /// `manual` or `auto`, when the source says.
        trigger: Option<String>,
        /// Tokens before, when the source says.
        tokens_before: Option<u64>,
        /// Tokens after, when the source says.
        tokens_after: Option<u64>,
        /// When the source records no compaction, only its effect (Gemini CLI: a model
        /// answer whose prompt is less than half the one before), the time of the last sight
        /// of the context before it: a compaction a hook recorded between then and this
        /// record's time is this one.
        since: Option<planlog_core::Timestamp>,
    },
    /// planlog put the plan back into the agent's context (a Claude Code hook).
    Restored {
        /// After what (`compact`, `resume`, `clear`, `fork`, `prompt`).
        after: String,
        /// The exact text.
        text: String,
        /// The seq whose plan it shows.
        plan_at: planlog_core::Seq,
    },
    /// A task folder as it is now: the plan becomes this list unless it already is.
    Snapshot(Vec<Todo>),
}

/// One plan call (or checkpoint) of a source session.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceCall {
    /// The key of its session.
    pub session: String,
    /// The 1-based line (or record) it was read from.
    pub line: u64,
    /// The source's call id (re-imports skip calls already recorded by it).
    pub call_id: Option<String>,
    /// When.
    pub at: Stamp,
    /// The agent turn (1-based count of user prompts in its session).
    pub turn: Option<u64>,
    /// What it did.
    pub op: Op,
    /// The agent's own note on why the plan changed (Codex's `explanation`).
    pub explanation: Option<String>,
    /// What the parser had to note (an unknown status, no result recorded, …).
    pub notes: Vec<String>,
    /// The call as the agent sent it and what came back, when the source holds them.
    pub tool_call: Option<planlog_core::events::ToolCall>,
}

/// A line that could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadLine {
    /// 1-based line number (0: the whole source, e.g. a file of a task folder).
    pub line: u64,
    /// Why.
    pub why: String,
}

/// Maps a source's status word onto planlog's four. `blocked` (Gemini) and words planlog
/// does not know become `pending`, with a note saying so.
pub(crate) fn status_of(word: &str) -> (PlanStatus, Option<String>) {
    match PlanStatus::from_wire(word) {
        Some(s) => (s, None),
        None if word == "blocked" => (
            PlanStatus::Pending,
            Some("status \"blocked\" in the source, kept as pending".to_owned()),
        ),
        None => (
            PlanStatus::Pending,
            Some(format!(
                "unknown status {:?} in the source, kept as pending",
                planlog_core::render::one_line(word)
            )),
        ),
    }
}

/// A source id that may be a JSON string or number (Claude Code task ids arrive as both).
pub(crate) fn id_text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A string field of a JSON object.
pub(crate) fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// How a whole-list tool's input reads as a list.
pub(crate) type ReadList = fn(&Value, &mut Vec<String>) -> Result<Vec<Todo>, crate::BadList>;

/// The record of one call of the whole-list tool `tool` (its input `args`, read by `todos_of`):
/// the text the model read (when known) and, for a call that failed, its error (a refusal),
/// made into `call` (the session, id, time and turn; its `op` is replaced). A list planlog
/// cannot read is a [`Record::Bad`] naming the call's line.
pub(crate) fn list_call(
    tool: &str,
    args: Value,
    read: Option<String>,
    error: Option<String>,
    mut call: SourceCall,
    todos_of: ReadList,
) -> Record {
    let arguments = args.to_string();
    let op = match error {
        None => match todos_of(&args, &mut call.notes) {
            Ok(todos) => Op::List(todos),
            Err(why) => {
                return Record::Bad(BadLine {
                    line: call.line,
                    why: format!("{tool} call: {why}"),
                });
            }
        },
        Some(error) => Op::Refused {
            submitted: args,
            error,
        },
    };
    call.tool_call = Some(planlog_core::events::ToolCall {
        tool: tool.to_owned(),
        arguments,
        result: Some(planlog_core::events::ToolCallResult {
            is_error: matches!(op, Op::Refused { .. }),
            text: read,
            structured: None,
        }),
    });
    call.op = op;
    Record::Call(call)
}
