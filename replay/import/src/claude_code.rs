//! Claude Code transcripts (`~/.claude/projects/<project>/<session>.jsonl`): both plan systems.
//!
//! - **TodoWrite**: an `assistant` line's `tool_use` block `{name: "TodoWrite", id, input:
//!   {todos: [{content, status, activeForm?, id?, priority?}]}}` sets the whole list (replayed
//!   from the input, never from `toolUseResult.newTodos`, which some versions re-sort).
//! - **Tasks** (2.1.16+): `TaskCreate {subject, description, activeForm?, metadata?}` adds one
//!   task whose id exists only in the result (`toolUseResult.task.id`, or the text `Task #N
//!   created`); `TaskUpdate {taskId, status?, subject?, description?, activeForm?, owner?,
//!   addBlocks?, addBlockedBy?, metadata?}` changes one (status `deleted` removes it).
//!   Repaired key names are read too (`id`/`task_id` for `taskId`, `active_form`), and ids
//!   may be numbers. `TaskGet`/`TaskList` are reads; `TaskStop`/`TaskOutput` are not plan
//!   tools.
//! - A call is paired with its result (a later `user` line's `tool_result` block with the same
//!   `tool_use_id`, plus the line's `toolUseResult`): an error result (`is_error`, a string
//!   `toolUseResult`, `success: false`) is the source's refusal. A task call without a result
//!   is one too (it may not have run); a TodoWrite without one is kept, with a note.
//! - `attachment` lines of type `task_reminder` are full snapshots of the task list:
//!   checkpoints (but an empty one that names a `statusKeeper`: 2.1 hides the list then).
//! - Sessions: each `sessionId`; sidechain lines (`isSidechain: true`) belong to a sub-agent:
//!   the one their `agentId` names (2.1), else the chain of `parentUuid`s they are on (1.x).
//!   A turn is a prompt the user typed (text, not a tool result, not meta, not a compaction
//!   summary, not text Claude Code put in the user's place: `<task-notification>`, local
//!   command output, bash-mode input and output, system reminders).
//! - Each call keeps the call as sent (the `input` object's text as the line has it, byte for
//!   byte) and the text the model read (the `tool_result` block's content; a list of blocks
//!   is their texts joined by newlines).
//! - What a main session is: its title (`custom-title`, else `ai-title`, else a `summary`
//!   line, which titles the file's first session), `version`, `entrypoint`, `cwd`,
//!   `gitBranch`, the model (`message.model`) and the first prompt; recorded where it changes
//!   ([`super::describe`]).
//! - A `system` line of subtype `compact_boundary` is a compaction (`compactMetadata`:
//!   `trigger`, `preTokens`, `postTokens`).

use crate::BadList;
use std::collections::{HashMap, HashSet};

use serde_json::Value;

use planlog_core::events::{ToolCall, ToolCallResult};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::describe::{Described, Descriptions};
use super::lines::{JsonLines, Line};
use super::pairing::Pairing;
use super::record::{
    BadLine, Op, Record, SourceCall, SourceSession, Stamp, TaskPatch, Todo, id_text, status_of,
    text,
};
use super::{Emit, Input, Stopped};

/// The plan tools of a Claude Code transcript.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tool {
    TodoWrite,
    TaskCreate,
    TaskUpdate,
}

impl Tool {
    fn name(self) -> &'static str {
        match self {
            Tool::TodoWrite => "TodoWrite",
            Tool::TaskCreate => "TaskCreate",
            Tool::TaskUpdate => "TaskUpdate",
        }
    }

    fn of(name: &str) -> Option<Tool> {
        match name {
            "TodoWrite" => Some(Tool::TodoWrite),
            "TaskCreate" => Some(Tool::TaskCreate),
            "TaskUpdate" => Some(Tool::TaskUpdate),
            _ => None,
        }
    }
}

/// A call waiting for its result.
struct Pending {
    tool: Tool,
    input: Value,
    /// The input's text as the source has it.
    arguments: String,
    call: SourceCall,
}

/// What the tool answered.
struct Outcome {
    error: bool,
    /// The error or answer, without the `<tool_use_error>` wrapper.
    text: String,
    /// The text the model read, as it was.
    read: String,
    structured: Option<Value>,
}

/// A session's titles, from the weakest: a `summary` line, an `ai-title`, a `custom-title`.
#[derive(Default)]
struct Titles {
    summary: Option<String>,
    ai: Option<String>,
    custom: Option<String>,
}

struct Parser {
    announced: HashSet<String>,
    side_root: HashMap<String, String>,
    turns: HashMap<String, u64>,
    pairing: Pairing<Pending>,
    described: Descriptions,
    titles: HashMap<String, Titles>,
    /// The last `summary` line's text, and the file's first main session.
    summary: Option<String>,
    first_main: Option<String>,
}

impl Default for Parser {
    fn default() -> Self {
        Self {
            announced: HashSet::new(),
            side_root: HashMap::new(),
            turns: HashMap::new(),
            pairing: Pairing::default(),
            described: Descriptions::new("claude-code"),
            titles: HashMap::new(),
            summary: None,
            first_main: None,
        }
    }
}

/// A line's content blocks, each kept as its text (a block's `input` is read from here
/// byte for byte).
#[derive(Deserialize)]
struct RawLine<'a> {
    #[serde(borrow)]
    message: Option<RawMessage<'a>>,
}

#[derive(Deserialize)]
struct RawMessage<'a> {
    #[serde(borrow, default)]
    content: Option<Vec<RawBlock<'a>>>,
}

#[derive(Deserialize)]
struct RawBlock<'a> {
    #[serde(default)]
    id: Option<String>,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
}

/// The text of the `input` of the `tool_use` block `id` in `raw` (the line's text), as the
/// line has it.
fn raw_input(raw: &str, id: Option<&str>, index: usize) -> Option<String> {
    let line: RawLine<'_> = serde_json::from_str(raw).ok()?;
    let blocks = line.message?.content?;
    let block = match id {
        Some(id) => blocks.into_iter().find(|b| b.id.as_deref() == Some(id))?,
        None => blocks.into_iter().nth(index)?,
    };
    Some(block.input?.get().to_owned())
}

/// Parses a Claude Code transcript into records.
///
/// # Errors
/// [`Stopped`] when the reader of the records went away.
pub(crate) fn parse(input: Input<'_>, emit: &mut Emit<'_>) -> Result<(), Stopped> {
    let reader = match input.open() {
        Ok(r) => r,
        Err(e) => return emit.unreadable(&e),
    };
    let mut p = Parser::default();
    let mut lines = JsonLines::new(reader);
    while let Some(line) = lines.next() {
        match line {
            Err(e) => return emit.unreadable(&e),
            Ok(Line::Bad(bad) | Line::TooLong(bad)) => emit.send(Record::Bad(bad))?,
            Ok(Line::Cut(n)) => emit.send(Record::Cut(n))?,
            Ok(Line::Json(n, v)) => p.line(n, &v, &lines.last_text(), emit)?,
        }
    }
    // Calls whose results are not written yet wait for the next import.
    p.pairing.leave_all(|c| c.call.line, emit)
}

impl Parser {
    fn line(&mut self, n: u64, v: &Value, raw: &str, emit: &mut Emit<'_>) -> Result<(), Stopped> {
        let kind = v.get("type").and_then(Value::as_str);
        if kind == Some("summary") {
            return self.summary(n, v, emit);
        }
        let Some(sid) = v.get("sessionId").and_then(Value::as_str) else {
            // File snapshots and other metadata lines belong to no session.
            return Ok(());
        };
        let at = Stamp::parse(v.get("timestamp").and_then(Value::as_str));
        let key = self.key(sid, v);
        // A sub-agent's lines name its main session; the writer links (or stands in for) it.
        if key == sid && self.announced.insert(key.clone()) {
            emit.send(Record::Session(SourceSession::main(sid, at.known())))?;
            if self.first_main.is_none() {
                self.first_main = Some(key.clone());
                let summary = self.summary.clone();
                self.titles.entry(key.clone()).or_default().summary = summary;
            }
        }
        if key != sid && self.announced.insert(key.clone()) {
            emit.send(Record::Session(SourceSession {
                key: key.clone(),
                parent: Some(sid.to_owned()),
                started: at.known(),
                label: None,
                cwd: None,
                transcript: None,
            }))?;
        }
        match kind {
            Some("user") => self.user(&key, v, emit)?,
            Some("assistant") => self.assistant(&key, n, &at, v, raw, emit)?,
            Some("attachment") => self.attachment(&key, n, &at, v, emit)?,
            Some("system")
                if v.get("subtype").and_then(Value::as_str) == Some("compact_boundary") =>
            {
                self.compacted(&key, n, &at, v, emit)?;
            }
            Some("custom-title") => {
                self.titles.entry(key.clone()).or_default().custom = text(v, "customTitle");
            }
            Some("ai-title") => self.titles.entry(key.clone()).or_default().ai = text(v, "aiTitle"),
            _ => {}
        }
        self.describe(&key, n, at, v, emit)?;
        Ok(())
    }

    /// A `summary` line: the title of the file's first session.
    fn summary(&mut self, n: u64, v: &Value, emit: &mut Emit<'_>) -> Result<(), Stopped> {
        self.summary = text(v, "summary");
        if let Some(first) = self.first_main.clone() {
            self.titles.entry(first.clone()).or_default().summary = self.summary.clone();
            self.describe(&first, n, Stamp::Missing, &Value::Null, emit)?;
        }
        Ok(())
    }

    /// What line `v` of main session `key` says of it; recorded when that changed.
    fn describe(
        &mut self,
        key: &str,
        n: u64,
        at: Stamp,
        v: &Value,
        emit: &mut Emit<'_>,
    ) -> Result<(), Stopped> {
        let title = self.titles.get(key).and_then(|t| {
            t.custom
                .as_deref()
                .or(t.ai.as_deref())
                .or(t.summary.as_deref())
        });
        let d = self.described.of(key);
        d.title(title);
        Described::set(
            &mut d.now.agent_version,
            v.get("version").and_then(Value::as_str),
        );
        Described::set(
            &mut d.now.entrypoint,
            v.get("entrypoint").and_then(Value::as_str),
        );
        Described::set(&mut d.now.project, v.get("cwd").and_then(Value::as_str));
        Described::set(
            &mut d.now.branch,
            v.get("gitBranch").and_then(Value::as_str),
        );
        let message = v.get("message");
        if v.get("type").and_then(Value::as_str) == Some("assistant") {
            let model = message.and_then(|m| m.get("model")).and_then(Value::as_str);
            // Claude Code's stand-in for an answer the API did not give.
            Described::set(&mut d.now.model, model.filter(|m| *m != "<synthetic>"));
        }
        if v.get("type").and_then(Value::as_str) == Some("user")
            && let Some(prompt) = prompt_text(v, message.and_then(|m| m.get("content")))
        {
            d.first_prompt(&prompt);
        }
        match d.record(key, n, at) {
            Some(r) => self.pairing.ready(key, r, emit),
            None => Ok(()),
        }
    }

    /// A `compact_boundary` line.
    fn compacted(
        &mut self,
        key: &str,
        n: u64,
        at: &Stamp,
        v: &Value,
        emit: &mut Emit<'_>,
    ) -> Result<(), Stopped> {
        let meta = v.get("compactMetadata").unwrap_or(&Value::Null);
        let op = Op::Compacted {
            trigger: text(meta, "trigger"),
            tokens_before: meta.get("preTokens").and_then(Value::as_u64),
            tokens_after: meta.get("postTokens").and_then(Value::as_u64),
            since: None,
        };
        let call = self.line_record(key, n, at, v, "compact", op, Vec::new());
        self.pairing.ready(key, Record::Call(call), emit)
    }

    /// A record of what line `n` (`v`) shows, not a call: its call id is `<kind>:<the line's
    /// uuid>` (or `<kind>:line-N`), so a re-import knows it.
    #[allow(clippy::too_many_arguments)] // the line's place, and what it says
    fn line_record(
        &self,
        key: &str,
        n: u64,
        at: &Stamp,
        v: &Value,
        kind: &str,
        op: Op,
        notes: Vec<String>,
    ) -> SourceCall {
        SourceCall {
            session: key.to_owned(),
            line: n,
            call_id: Some(match text(v, "uuid") {
                Some(u) => format!("{kind}:{u}"),
                None => format!("{kind}:line-{n}"),
            }),
            at: at.clone(),
            turn: self.turns.get(key).copied(),
            op,
            explanation: None,
            notes,
            tool_call: None,
        }
    }

    /// The session key of a line: its `sessionId`, or its sub-agent's.
    fn key(&mut self, sid: &str, v: &Value) -> String {
        if v.get("isSidechain").and_then(Value::as_bool) != Some(true) {
            return sid.to_owned();
        }
        if let Some(agent) = v.get("agentId").and_then(Value::as_str) {
            return format!("{sid}/agent-{agent}");
        }
        let uuid = text(v, "uuid").unwrap_or_default();
        let root = v
            .get("parentUuid")
            .and_then(Value::as_str)
            .and_then(|p| self.side_root.get(p).cloned())
            .unwrap_or_else(|| uuid.clone());
        self.side_root.insert(uuid, root.clone());
        format!("{sid}/sidechain-{root}")
    }

    fn user(&mut self, key: &str, v: &Value, emit: &mut Emit<'_>) -> Result<(), Stopped> {
        let content = v.get("message").and_then(|m| m.get("content"));
        if prompt_text(v, content).is_some() {
            *self.turns.entry(key.to_owned()).or_insert(0) += 1;
            // A result always comes before the next prompt: what still waits has none.
            return self.pairing.settle_session(key, |c| settle(c, None), emit);
        }
        let Some(blocks) = content.and_then(Value::as_array) else {
            return Ok(());
        };
        let results: Vec<&Value> = blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
            .collect();
        for block in &results {
            let Some(id) = block.get("tool_use_id").and_then(Value::as_str) else {
                continue;
            };
            if !self.pairing.is_waiting(id) {
                continue;
            }
            let structured = (results.len() == 1)
                .then(|| v.get("toolUseResult"))
                .flatten();
            let outcome = Outcome {
                error: block.get("is_error").and_then(Value::as_bool) == Some(true)
                    || structured.is_some_and(Value::is_string)
                    || structured
                        .and_then(|s| s.get("success"))
                        .and_then(Value::as_bool)
                        == Some(false),
                text: result_text(block.get("content"), structured),
                read: read_text(block.get("content")),
                structured: structured.filter(|s| s.is_object()).cloned(),
            };
            self.pairing
                .settle(id, |c| settle(c, Some(outcome)), emit)?;
        }
        Ok(())
    }

    fn assistant(
        &mut self,
        key: &str,
        n: u64,
        at: &Stamp,
        v: &Value,
        raw: &str,
        emit: &mut Emit<'_>,
    ) -> Result<(), Stopped> {
        let Some(blocks) = v
            .get("message")
            .and_then(|m| m.get("content"))
            .and_then(Value::as_array)
        else {
            return Ok(());
        };
        for (index, block) in blocks.iter().enumerate() {
            if block.get("type").and_then(Value::as_str) != Some("tool_use") {
                continue;
            }
            let Some(tool) = block.get("name").and_then(Value::as_str).and_then(Tool::of) else {
                continue;
            };
            let tool_id = text(block, "id");
            let call = SourceCall {
                session: key.to_owned(),
                line: n,
                call_id: tool_id.clone(),
                at: at.clone(),
                turn: self.turns.get(key).copied(),
                op: Op::List(Vec::new()),
                explanation: None,
                notes: Vec::new(),
                tool_call: None,
            };
            let input = block.get("input").cloned().unwrap_or(Value::Null);
            let arguments =
                raw_input(raw, tool_id.as_deref(), index).unwrap_or_else(|| input.to_string());
            let pending = Pending {
                tool,
                input,
                arguments,
                call,
            };
            match tool_id {
                Some(id) => self.pairing.wait(key, id, pending, |_| None, emit)?,
                // A call without an id can never be paired: settled as unanswered.
                None => {
                    if let Some(r) = settle(pending, None) {
                        self.pairing.ready(key, r, emit)?;
                    }
                }
            }
        }
        Ok(())
    }

    fn attachment(
        &mut self,
        key: &str,
        n: u64,
        at: &Stamp,
        v: &Value,
        emit: &mut Emit<'_>,
    ) -> Result<(), Stopped> {
        let Some(a) = v.get("attachment") else {
            return Ok(());
        };
        if a.get("type").and_then(Value::as_str) != Some("task_reminder") {
            return Ok(());
        }
        let mut notes = Vec::new();
        let todos: Vec<Todo> = a
            .get("content")
            .and_then(Value::as_array)
            .map(|list| list.iter().map(|t| task_todo(t, &mut notes)).collect())
            .unwrap_or_default();
        // Claude Code 2.1 also sends an empty reminder when something else keeps the tasks'
        // status (`statusKeeper`) and the list is hidden: that shows no list at all.
        if todos.is_empty() && a.get("statusKeeper").is_some() {
            return Ok(());
        }
        let call = self.line_record(key, n, at, v, "reminder", Op::Checkpoint(todos), notes);
        self.pairing.ready(key, Record::Call(call), emit)
    }
}

/// Text Claude Code puts in the user's place, which no one typed: a background task's
/// notice, a local command's output, bash mode's input and output, reminders.
const NOT_TYPED: &[&str] = &[
    "<task-notification>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<system-reminder>",
    "<user-prompt-submit-hook>",
];

/// The text of a `user` line when it is a prompt the user typed (a slash command counts:
/// the user typed it).
fn prompt_text(v: &Value, content: Option<&Value>) -> Option<String> {
    if v.get("isMeta").and_then(Value::as_bool) == Some(true)
        || v.get("isCompactSummary").and_then(Value::as_bool) == Some(true)
    {
        return None;
    }
    let text = match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => {
            let kind = |k: &str| {
                blocks
                    .iter()
                    .any(|b| b.get("type").and_then(Value::as_str) == Some(k))
            };
            if !kind("text") || kind("tool_result") {
                return None;
            }
            blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n")
        }
        _ => return None,
    };
    let start = text.trim_start();
    if NOT_TYPED.iter().any(|tag| start.starts_with(tag)) {
        return None;
    }
    Some(text)
}

/// The text the model read for a result: the content as it was (a list of blocks: their
/// texts joined by newlines).
fn read_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The text the model saw for a result, without the `<tool_use_error>` wrapper.
fn result_text(content: Option<&Value>, structured: Option<&Value>) -> String {
    let raw = match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    let raw = if raw.trim().is_empty() {
        match structured {
            Some(Value::String(s)) => s.clone(),
            Some(s) => s
                .get("error")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            None => raw,
        }
    } else {
        raw
    };
    raw.trim()
        .trim_start_matches("<tool_use_error>")
        .trim_end_matches("</tool_use_error>")
        .trim()
        .to_owned()
}

/// The record of one plan tool call, given the tool's result: `Some((failed, text,
/// structured))`, or `None` when there is none (a Claude Code hook builds its call this way).
/// `None` when the tool is not a plan tool.
/// The record keeps `tool_call` as given (a hook knows the call as sent and the tool's
/// structured answer, not the text the model read).
pub fn call_record(
    tool_name: &str,
    input: Value,
    call: SourceCall,
    result: Option<(bool, String, Option<Value>)>,
) -> Option<Record> {
    let tool = Tool::of(tool_name)?;
    let tool_call = call.tool_call.clone();
    let outcome = result.map(|(error, text, structured)| Outcome {
        error,
        text,
        read: String::new(),
        structured,
    });
    let arguments = input.to_string();
    let record = settle(
        Pending {
            tool,
            input,
            arguments,
            call,
        },
        outcome,
    );
    match record {
        Some(Record::Call(c)) => Some(Record::Call(SourceCall { tool_call, ..c })),
        other => other,
    }
}

const NO_RESULT: &str = "the transcript holds no result for this call (it may not have run)";

/// The record of a call, now that its result (or the lack of one) is known.
fn settle(pending: Pending, outcome: Option<Outcome>) -> Option<Record> {
    let Pending {
        tool,
        input,
        arguments,
        mut call,
    } = pending;
    call.tool_call = Some(ToolCall {
        tool: tool.name().to_owned(),
        arguments,
        result: outcome.as_ref().map(|o| ToolCallResult {
            is_error: o.error,
            text: Some(o.read.clone()),
            structured: None,
        }),
    });
    let refused = |call: SourceCall, input: Value, error: String| {
        Some(Record::Call(SourceCall {
            op: Op::Refused {
                submitted: input,
                error,
            },
            ..call
        }))
    };
    let bad = |line: u64, why: String| Some(Record::Bad(BadLine { line, why }));
    match (tool, outcome) {
        (_, Some(o)) if o.error => {
            let error = match o.structured.as_ref().and_then(|s| s.get("error")) {
                Some(Value::String(e)) if o.text.is_empty() => e.clone(),
                _ if o.text.is_empty() => "the tool reported an error".to_owned(),
                _ => o.text,
            };
            refused(call, input, error)
        }
        (Tool::TodoWrite, outcome) => match todos_of(&input, &mut call.notes) {
            Ok(todos) => {
                if outcome.is_none() {
                    call.notes.push(NO_RESULT.to_owned());
                }
                Some(Record::Call(SourceCall {
                    op: Op::List(todos),
                    ..call
                }))
            }
            Err(why) => bad(call.line, format!("TodoWrite call: {why}")),
        },
        (_, None) => refused(call, input, NO_RESULT.to_owned()),
        (Tool::TaskCreate, Some(o)) => {
            let task = o.structured.as_ref().and_then(|s| s.get("task"));
            let id = id_text(task.and_then(|t| t.get("id"))).or_else(|| created_id(&o.text));
            let Some(id) = id else {
                return bad(
                    call.line,
                    "TaskCreate call: its result gives no task id".to_owned(),
                );
            };
            let mut todo = task_fields(&input);
            todo.id = Some(id);
            if todo.content.is_empty()
                && let Some(s) = task.and_then(|t| t.get("subject")).and_then(Value::as_str)
            {
                todo.content = s.to_owned();
            }
            Some(Record::Call(SourceCall {
                op: Op::Create(todo),
                ..call
            }))
        }
        (Tool::TaskUpdate, Some(o)) => {
            let id = ["taskId", "id", "task_id"]
                .iter()
                .find_map(|k| id_text(input.get(*k)))
                .or_else(|| id_text(o.structured.as_ref().and_then(|s| s.get("taskId"))));
            let Some(id) = id else {
                return bad(
                    call.line,
                    "TaskUpdate call: no taskId in its input".to_owned(),
                );
            };
            let status = input.get("status").and_then(Value::as_str);
            if status == Some("deleted") {
                return Some(Record::Call(SourceCall {
                    op: Op::Delete { id },
                    ..call
                }));
            }
            let patch = task_patch(&input, status, &mut call.notes);
            Some(Record::Call(SourceCall {
                op: Op::Update { id, patch },
                ..call
            }))
        }
    }
}

/// The id in a TaskCreate result text (`Task #3 created successfully: …`).
fn created_id(text: &str) -> Option<String> {
    let rest = text.trim().strip_prefix("Task #")?;
    let id: String = rest.chars().take_while(|c| !c.is_whitespace()).collect();
    (!id.is_empty() && rest[id.len()..].trim_start().starts_with("created")).then_some(id)
}

/// A string field under its name or its repaired (snake case) name.
fn either(v: &Value, camel: &str, snake: &str) -> Option<String> {
    text(v, camel).or_else(|| text(v, snake))
}

/// A list of ids (strings or numbers).
fn id_list(v: &Value, camel: &str, snake: &str) -> Vec<String> {
    v.get(camel)
        .or_else(|| v.get(snake))
        .and_then(Value::as_array)
        .map(|l| l.iter().filter_map(|x| id_text(Some(x))).collect())
        .unwrap_or_default()
}

/// The fields of a TaskCreate input.
fn task_fields(input: &Value) -> Todo {
    Todo {
        content: text(input, "subject").unwrap_or_default(),
        description: text(input, "description"),
        active_form: either(input, "activeForm", "active_form"),
        metadata: input.get("metadata").and_then(Value::as_object).cloned(),
        ..Todo::default()
    }
}

/// The changes of a TaskUpdate input.
fn task_patch(input: &Value, status: Option<&str>, notes: &mut Vec<String>) -> TaskPatch {
    TaskPatch {
        subject: text(input, "subject"),
        description: text(input, "description"),
        active_form: either(input, "activeForm", "active_form"),
        owner: text(input, "owner"),
        status: status.map(|w| {
            let (s, note) = status_of(w);
            notes.extend(note);
            s
        }),
        add_blocks: id_list(input, "addBlocks", "add_blocks"),
        add_blocked_by: id_list(input, "addBlockedBy", "add_blocked_by"),
        blocked_by: None,
        metadata: input.get("metadata").and_then(Value::as_object).cloned(),
    }
}

/// One task of a `task_reminder` (or a task file): `{id, subject, description, activeForm,
/// status, owner, blockedBy, metadata}`.
pub(crate) fn task_todo(t: &Value, notes: &mut Vec<String>) -> Todo {
    let (status, note) = status_of(t.get("status").and_then(Value::as_str).unwrap_or("pending"));
    notes.extend(note);
    let blocked_by = id_list(t, "blockedBy", "blocked_by");
    Todo {
        id: id_text(t.get("id")),
        content: text(t, "subject").unwrap_or_default(),
        status,
        description: text(t, "description"),
        active_form: either(t, "activeForm", "active_form"),
        owner: text(t, "owner"),
        blocked_by: (!blocked_by.is_empty()).then_some(blocked_by),
        metadata: t.get("metadata").and_then(Value::as_object).cloned(),
    }
}

/// The todos of a TodoWrite input. Old versions' `priority` is kept in metadata.
///
/// # Errors
/// [`BadList`]: no `todos` array, or a todo without its content or status.
pub fn todos_of(input: &Value, notes: &mut Vec<String>) -> Result<Vec<Todo>, BadList> {
    BadList::list(input, "todos", " in its input")?
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let content = BadList::text(t, "todo", i + 1, "content")?;
            let word = BadList::text(t, "todo", i + 1, "status")?;
            let (status, note) = status_of(word);
            notes.extend(note);
            let metadata = t.get("priority").map(|p| {
                let mut m = serde_json::Map::new();
                m.insert("priority".to_owned(), p.clone());
                m
            });
            Ok(Todo {
                id: id_text(t.get("id")),
                content: content.to_owned(),
                status,
                active_form: either(t, "activeForm", "active_form"),
                metadata,
                ..Todo::default()
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_created_id_is_read_from_the_result_text() {
        assert_eq!(
            created_id("Task #12 created successfully: Ship it").as_deref(),
            Some("12")
        );
        assert_eq!(created_id("Task #12 updated"), None);
        assert_eq!(created_id("Updated task #3 status"), None);
    }
}
