//! Gemini CLI chat recordings (`~/.gemini/tmp/<project>/chats/session-*.json[l]`): write_todos
//! calls, and the task tracker's calls (`gemini_tracker`).
//!
//! - Two shapes: before v0.39 one JSON document `{sessionId, projectHash, startTime,
//!   messages: [...]}` (read a message at a time); from v0.39 JSONL whose first line is that
//!   metadata without `messages`, then message records, `{"$set": {...}}` metadata patches
//!   (a `$set.messages` is the whole message list again) and `{"$rewindTo": "<message id>"}`
//!   (that message and everything after it are gone).
//! - A message `{id, timestamp, type, toolCalls?}` re-appended with the same id replaces the
//!   earlier one: that is how a tool call's status lands. A call counts once, when a record
//!   shows it `success` (the list became `args.todos`, `[{description, status}]`; `blocked`
//!   is kept as pending with a note), `error` or `cancelled` (the source's refusal); earlier
//!   statuses (`scheduled`, `executing`, …) are skipped.
//! - When a rewind (or a `$set.messages`) drops messages that held write_todos calls, the list
//!   goes back to the last call that survives: one `replace` event, with call id
//!   `rewind:<line>` and a note saying so. A `$set.messages` counts once the lines of `$set`
//!   end: on resume Gemini CLI 0.61 writes a list of only the session's context, then the
//!   whole list again (its messages without their `toolCalls`), and that drops nothing.
//! - A sub-agent's recording lives in `chats/<parent session id>/`: the folder names its parent.
//! - Gemini CLI 0.61 starts each run with a recording of its own (metadata and the session's
//!   context) before a resume goes on in the session's first file; a resume in a later minute
//!   leaves that start as a second file under the same id. A file of context alone beside an
//!   earlier recording of its session is no conversation ([`Record::NoConversation`]): no
//!   session is written for it (it would say the session started at the resume).
//! - A turn is a `user` message (counted once per message id).
//! - Each call keeps the call as sent (the JSON of `args`: the recording holds no text of its
//!   own) and the text the model read (the `functionResponse`'s `output` or `error` in
//!   `result`, when the recording has it).
//! - Compactions (Gemini runs no hook after one): a compression, automatic or `/compress`,
//!   rewrites the history as a summary and the messages it keeps, under new ids, so the
//!   recording shows it as a `$set.messages` that both drops messages and lists messages never
//!   seen before (seen with Gemini CLI 0.61). That is a compaction (call id
//!   `compact:<the first new message's id>`, the prompt's size before it from the last
//!   answer's `tokens.input`), not a reset: the calls it drops stand. A compaction a hook
//!   recorded between the last answer and it (`/compress`) is the same one.
//! - What the session is: the project (the `<project>` folder of `tmp/<project>/chats/`, else
//!   `projectHash`), a message's `model`, the first user message that is not Gemini's own
//!   `<session_context>` ([`super::describe`]).

use crate::BadList;
use std::collections::{HashMap, HashSet};
use std::io::BufRead;

use serde_json::Value;

use super::describe::Described;
use super::document::{self, Ended, Fields};
use super::gemini_tracker::{TRACKER_TOOLS, tracker_record};
use super::lines::{JsonLines, Line};
use super::record::{
    BadLine, Op, Record, SourceCall, SourceSession, Stamp, Todo, list_call, status_of, text,
};
use super::{Emit, Input, Stopped};

/// A write_todos call that set the list.
struct Applied {
    ordinal: u64,
    line: u64,
    todos: Vec<Todo>,
}

struct Recording<'e, 'a> {
    emit: &'e mut Emit<'a>,
    input: Input<'e>,
    key: Option<String>,
    /// message id -> its ordinal, in order of first sight.
    ordinals: HashMap<String, u64>,
    next_ordinal: u64,
    turn: u64,
    counted: HashSet<String>,
    applied: Vec<Applied>,
    saw_metadata: bool,
    /// The message ids of the last `$set.messages` and its line, until a line that is not a
    /// `$set` says it stands.
    reset: Option<(u64, HashSet<String>)>,
    /// A document's top-level fields seen before its messages.
    head: serde_json::Map<String, Value>,
    described: Described,
    /// The last model answer seen: its prompt's size in tokens (when recorded) and its time.
    answer: (Option<u64>, Option<planlog_core::Timestamp>),
    /// A JSONL recording's metadata line, held until a line shows a conversation: the
    /// session is written only then (or at the end, for a file of metadata alone).
    pending: Option<Value>,
    /// While the metadata was held, a `$set.messages` listed Gemini's own context only.
    context_only: bool,
}

/// Parses a Gemini CLI chat recording into records.
///
/// # Errors
/// [`Stopped`] when the reader of the records went away.
pub(crate) fn parse(input: Input<'_>, emit: &mut Emit<'_>) -> Result<(), Stopped> {
    let jsonl = match first_line_is_json(input) {
        Ok(j) => j,
        Err(e) => return emit.unreadable(&e),
    };
    let reader = match input.open() {
        Ok(r) => r,
        Err(e) => return emit.unreadable(&e),
    };
    let mut rec = Recording {
        emit,
        input,
        key: None,
        ordinals: HashMap::new(),
        next_ordinal: 0,
        turn: 0,
        counted: HashSet::new(),
        applied: Vec::new(),
        saw_metadata: false,
        reset: None,
        head: serde_json::Map::new(),
        described: Described::of("gemini"),
        answer: (None, None),
        pending: None,
        context_only: false,
    };
    if jsonl {
        for line in JsonLines::new(reader) {
            match line {
                Err(e) => return rec.emit.unreadable(&e),
                Ok(Line::Bad(bad) | Line::TooLong(bad)) => rec.emit.send(Record::Bad(bad))?,
                Ok(Line::Cut(n)) => rec.emit.send(Record::Cut(n))?,
                Ok(Line::Json(n, v)) => rec.line(n, v)?,
            }
        }
        rec.settle_reset()?;
        return rec.ended_unopened();
    }
    let streamed = document::stream(reader, &mut rec);
    if streamed.is_ok() {
        rec.document_head()?;
    }
    match streamed {
        Ok(()) if rec.saw_metadata => Ok(()),
        Ok(()) => rec.emit.send(Record::Bad(BadLine {
            line: 0,
            why: "no \"sessionId\" in the document: not a Gemini CLI chat recording".to_owned(),
        })),
        Err(Ended::Stopped) => Err(Stopped),
        Err(Ended::Bad(bad)) => rec.emit.send(Record::Bad(bad)),
        Err(Ended::Io(e)) => rec.emit.unreadable(&e),
    }
}

/// Whether the first non-blank line is a whole JSON value (JSONL) or the start of a document.
/// A first line cut where the file ends (a recording still being written) counts as JSONL:
/// the import leaves it for the next one. At most one line's limit is read.
fn first_line_is_json(input: Input<'_>) -> Result<bool, std::io::Error> {
    use std::io::Read;
    let mut reader = input.open()?.take(super::lines::MAX_LINE_BYTES as u64);
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            return Ok(true);
        }
        if !line.iter().all(u8::is_ascii_whitespace) {
            return Ok(!line.ends_with(b"\n") || serde_json::from_slice::<Value>(&line).is_ok());
        }
    }
}

impl Recording<'_, '_> {
    /// A document's session, from the fields seen before its messages (or all of them).
    fn document_head(&mut self) -> Result<(), Stopped> {
        if self.key.is_some() || self.head.is_empty() {
            return Ok(());
        }
        let head = Value::Object(std::mem::take(&mut self.head));
        self.metadata(&head)
    }

    fn metadata(&mut self, v: &Value) -> Result<(), Stopped> {
        if self.key.is_some() {
            return Ok(());
        }
        let Some(key) = text(v, "sessionId") else {
            return Ok(());
        };
        self.saw_metadata = true;
        self.key = Some(key.clone());
        let started = Stamp::parse(v.get("startTime").and_then(Value::as_str));
        self.emit.send(Record::Session(SourceSession {
            key: key.clone(),
            parent: self.parent_from_folder(),
            started: started.known(),
            label: None,
            cwd: None,
            transcript: None,
        }))?;
        let project = self.project_from_folder().or_else(|| {
            v.get("projectHash")
                .and_then(Value::as_str)
                .map(str::to_owned)
        });
        Described::set(&mut self.described.now.project, project.as_deref());
        match self.described.record(&key, 1, started) {
            Some(r) => self.emit.send(r),
            None => Ok(()),
        }
    }

    /// `tmp/<project>/chats/<session>.json[l]`: the project (a sub-agent's recording is one
    /// folder deeper).
    fn project_from_folder(&self) -> Option<String> {
        let path = self.input.path()?;
        let mut folder = path.parent()?;
        if folder.file_name()?.to_str()? != "chats" {
            folder = folder.parent()?;
        }
        if folder.file_name()?.to_str()? != "chats" {
            return None;
        }
        let project = folder.parent()?;
        (project.parent()?.file_name()?.to_str()? == "tmp")
            .then(|| project.file_name()?.to_str().map(str::to_owned))
            .flatten()
    }

    /// `chats/<parent session id>/<session>.jsonl`: the parent's id.
    fn parent_from_folder(&self) -> Option<String> {
        let path = self.input.path()?;
        let folder = path.parent()?;
        let grand = folder.parent()?.file_name()?.to_str()?;
        let name = folder.file_name()?.to_str()?;
        (grand == "chats"
            && name.len() >= 8
            && name.chars().all(|c| c.is_ascii_hexdigit() || c == '-'))
        .then(|| name.to_owned())
    }

    /// A tracker call of message `m` (line `n`), once it has ended.
    fn tracker(&mut self, n: u64, key: &str, call: &Value, m: &Value) -> Result<(), Stopped> {
        let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
        let Some((source, error)) = self.ended(n, key, call, m) else {
            return Ok(());
        };
        let args = call.get("args").cloned().unwrap_or(Value::Null);
        self.emit
            .send(tracker_record(name, args, model_read(call), error, source))
    }

    /// A tool call of message `m` (line `n`) that has ended, made into the call of session
    /// `key` (its `op` a placeholder), with its error when it failed; `None` for a call
    /// without an id or not ended yet.
    fn ended(
        &self,
        n: u64,
        key: &str,
        call: &Value,
        m: &Value,
    ) -> Option<(SourceCall, Option<String>)> {
        let call_id = text(call, "id")?;
        let error = match call.get("status").and_then(Value::as_str) {
            Some("success") => None,
            Some(status @ ("error" | "cancelled")) => {
                Some(result_text(call).unwrap_or_else(|| format!("the call ended {status}")))
            }
            _ => return None,
        };
        let at = match call.get("timestamp").and_then(Value::as_str) {
            Some(t) => Stamp::parse(Some(t)),
            None => Stamp::parse(m.get("timestamp").and_then(Value::as_str)),
        };
        let source = SourceCall {
            session: key.to_owned(),
            line: n,
            call_id: Some(call_id),
            at,
            turn: (self.turn > 0).then_some(self.turn),
            op: Op::List(Vec::new()),
            explanation: None,
            notes: Vec::new(),
            tool_call: None,
        };
        Some((source, error))
    }

    /// Drops what the last `$set.messages` left out, now that no later one replaces it.
    fn settle_reset(&mut self) -> Result<(), Stopped> {
        let Some((n, keep)) = self.reset.take() else {
            return Ok(());
        };
        let dropped: HashSet<u64> = self
            .ordinals
            .iter()
            .filter(|(id, _)| !keep.contains(id.as_str()))
            .map(|(_, o)| *o)
            .collect();
        self.drop_where(n, |o| dropped.contains(&o), "the message list was reset")
    }

    /// Writes the session of the metadata line held back, now that the recording shows a
    /// conversation.
    fn open(&mut self) -> Result<(), Stopped> {
        match self.pending.take() {
            Some(v) => self.metadata(&v),
            None => Ok(()),
        }
    }

    /// The end of a JSONL recording whose session was never written. Gemini CLI 0.61 starts
    /// every run with a fresh recording (`session-<minute>-<id>.jsonl`): its metadata, then a
    /// `$set.messages` of the session's context. A resume then goes on in the session's own
    /// file, so a resume in a later minute than the session began leaves that start behind as
    /// a file of its own, under the same session id and the resume's time. Written as the
    /// session, it would say the session started then. So a file of context alone, beside an
    /// earlier recording of the same session, is no conversation and says so; any other
    /// (a session just begun, a transcript's head) is the session.
    fn ended_unopened(&mut self) -> Result<(), Stopped> {
        let Some(pending) = &self.pending else {
            return Ok(());
        };
        let first =
            text(pending, "sessionId").and_then(|key| earlier_recording(self.input.path()?, &key));
        match first {
            Some(first) if self.context_only => {
                self.pending = None;
                self.emit.send(Record::NoConversation(format!(
                    "it holds Gemini CLI's metadata and the session's context, no conversation: \
                     Gemini leaves such a file when a session is resumed, and the session's \
                     recording is {}",
                    first.display()
                )))
            }
            _ => self.open(),
        }
    }

    fn line(&mut self, n: u64, v: Value) -> Result<(), Stopped> {
        if let Some(set) = v.get("$set") {
            if let Some(messages) = set.get("messages").and_then(Value::as_array) {
                if self.pending.is_some() {
                    if messages.iter().all(is_context) {
                        self.context_only = true;
                    } else {
                        self.open()?;
                    }
                }
                let keep: HashSet<String> = messages
                    .iter()
                    .filter_map(|m| m.get("id").and_then(Value::as_str))
                    .map(str::to_owned)
                    .collect();
                let fresh = messages.iter().find(|m| {
                    m.get("id")
                        .and_then(Value::as_str)
                        .is_some_and(|id| !self.ordinals.contains_key(id))
                });
                let drops = self.ordinals.keys().any(|id| !keep.contains(id));
                match fresh {
                    Some(first) if drops => {
                        self.reset = None;
                        self.compressed(n, first)?;
                        // The summary stands for the messages it replaced: their calls stay
                        // applied whatever later drops the new history (ordinal 0 is never
                        // dropped), and they are no longer messages a reset can miss.
                        let gone: HashSet<u64> = self
                            .ordinals
                            .iter()
                            .filter(|(id, _)| !keep.contains(id.as_str()))
                            .map(|(_, o)| *o)
                            .collect();
                        for a in &mut self.applied {
                            if gone.contains(&a.ordinal) {
                                a.ordinal = 0;
                            }
                        }
                        self.ordinals.retain(|id, _| keep.contains(id));
                    }
                    _ => self.reset = Some((n, keep)),
                }
                for m in messages {
                    self.message(n, m)?;
                }
            }
            return Ok(());
        }
        // A resume's metadata line is part of the resume's `$set`s.
        let metadata = v.get("sessionId").is_some() && v.get("type").is_none();
        if metadata && self.pending.is_some() {
            return Ok(());
        }
        if self.key.is_none() && metadata {
            self.saw_metadata = true;
            self.pending = Some(v);
            return Ok(());
        }
        if !metadata {
            self.open()?;
            self.settle_reset()?;
        }
        if let Some(target) = v.get("$rewindTo").and_then(Value::as_str) {
            if let Some(&from) = self.ordinals.get(target) {
                let why = format!("the conversation was rewound to message {target:?}");
                self.drop_where(n, |o| o >= from, &why)?;
                self.ordinals.retain(|_, o| *o < from);
            }
            return Ok(());
        }
        self.message(n, &v)
    }

    /// Drops the applied calls whose message ordinal `gone` says is gone; when any was, the
    /// list goes back to the last surviving call's.
    fn drop_where(&mut self, n: u64, gone: impl Fn(u64) -> bool, why: &str) -> Result<(), Stopped> {
        let before = self.applied.len();
        self.applied.retain(|a| !gone(a.ordinal));
        if self.applied.len() == before {
            return Ok(());
        }
        let Some(key) = self.key.clone() else {
            return Ok(());
        };
        let (todos, note) = match self.applied.last() {
            Some(a) => (
                a.todos.clone(),
                format!("{why}: the list is again the one set at line {}", a.line),
            ),
            None => (
                Vec::new(),
                format!("{why}: no write_todos call is left, the list is empty again"),
            ),
        };
        self.emit.send(Record::Call(SourceCall {
            session: key,
            line: n,
            call_id: Some(format!("rewind:{n}")),
            at: Stamp::Missing,
            turn: (self.turn > 0).then_some(self.turn),
            op: Op::List(todos),
            explanation: None,
            notes: vec![note],
            tool_call: None,
        }))
    }

    fn message(&mut self, n: u64, m: &Value) -> Result<(), Stopped> {
        let Some(id) = text(m, "id") else {
            return Ok(());
        };
        let first_sight = !self.ordinals.contains_key(&id);
        let ordinal = match self.ordinals.get(&id) {
            Some(o) => *o,
            None => {
                self.next_ordinal += 1;
                self.ordinals.insert(id.clone(), self.next_ordinal);
                self.next_ordinal
            }
        };
        if m.get("type").and_then(Value::as_str) == Some("gemini") && first_sight {
            self.answer = (
                None,
                Stamp::parse(m.get("timestamp").and_then(Value::as_str)).known(),
            );
        }
        if let Some(prompt) = m
            .get("tokens")
            .and_then(|t| t.get("input"))
            .and_then(Value::as_u64)
        {
            self.answer.0 = Some(prompt);
        }
        if m.get("type").and_then(Value::as_str) == Some("user") && self.counted.insert(id.clone())
        {
            self.turn += 1;
            // Gemini CLI opens every session with a message of its own (the date, the OS, the
            // folders): not the user's prompt.
            if let Some(prompt) = message_text(m).filter(|p| !p.starts_with("<session_context>")) {
                self.described.first_prompt(&prompt);
            }
        }
        Described::set(
            &mut self.described.now.model,
            m.get("model").and_then(Value::as_str),
        );
        if let Some(key) = self.key.clone() {
            let at = Stamp::parse(m.get("timestamp").and_then(Value::as_str));
            if let Some(r) = self.described.record(&key, n, at) {
                self.emit.send(r)?;
            }
        }
        let Some(calls) = m.get("toolCalls").and_then(Value::as_array) else {
            return Ok(());
        };
        let Some(key) = self.key.clone() else {
            return Ok(());
        };
        for call in calls {
            let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
            if TRACKER_TOOLS.contains(&name) {
                self.tracker(n, &key, call, m)?;
                continue;
            }
            if name != "write_todos" {
                continue;
            }
            let Some((source, error)) = self.ended(n, &key, call, m) else {
                continue;
            };
            let args = call.get("args").cloned().unwrap_or(Value::Null);
            let record = write_todos_record(args, model_read(call), error, source);
            if let Record::Call(SourceCall {
                op: Op::List(todos),
                ..
            }) = &record
            {
                self.applied.push(Applied {
                    ordinal,
                    line: n,
                    todos: todos.clone(),
                });
            }
            // The same call re-appended is one call: the writer skips a call id seen before.
            self.emit.send(record)?;
        }
        Ok(())
    }
}

impl Recording<'_, '_> {
    /// Gemini's history rewritten at line `n` as a summary and what it kept, `first` the
    /// first message never seen before: the compaction.
    fn compressed(&mut self, n: u64, first: &Value) -> Result<(), Stopped> {
        let (Some(key), Some(id)) = (self.key.clone(), text(first, "id")) else {
            return Ok(());
        };
        let (before, since) = self.answer;
        self.emit.send(Record::Call(SourceCall {
            session: key,
            line: n,
            call_id: Some(format!("compact:{id}")),
            at: Stamp::parse(first.get("timestamp").and_then(Value::as_str)),
            turn: (self.turn > 0).then_some(self.turn),
            op: Op::Compacted {
                trigger: None,
                tokens_before: before,
                tokens_after: None,
                since,
            },
            explanation: None,
            notes: vec![
                "Gemini rewrote the history as a summary and the messages it kept (a compression)"
                    .to_owned(),
            ],
            tool_call: None,
        }))
    }
}

impl Fields for Recording<'_, '_> {
    fn streams(&self, key: &str) -> bool {
        key == "messages"
    }

    fn field(&mut self, key: &str, value: Value) -> Result<(), Stopped> {
        if matches!(key, "sessionId" | "startTime") {
            self.head.insert(key.to_owned(), value);
        }
        Ok(())
    }

    fn element(&mut self, _key: &str, line: u64, value: Value) -> Result<(), Stopped> {
        self.document_head()?;
        self.message(line, &value)
    }
}

/// The JSONL recording of session `key` in `path`'s folder named for an earlier minute than
/// `path` (`session-<minute>-<first 8 of the id>.jsonl`, its metadata naming `key`).
fn earlier_recording(path: &std::path::Path, key: &str) -> Option<std::path::PathBuf> {
    let name = path.file_name()?.to_str()?;
    let tail = key.get(..8)?;
    let mut earlier: Vec<std::path::PathBuf> = std::fs::read_dir(path.parent()?)
        .ok()?
        .flatten()
        .filter(|e| {
            e.file_name().to_str().is_some_and(|n| {
                n.starts_with("session-") && n.ends_with(&format!("-{tail}.jsonl")) && n < name
            })
        })
        .map(|e| e.path())
        .collect();
    earlier.sort();
    earlier
        .into_iter()
        .find(|p| recording_of(p).as_deref() == Some(key))
}

/// The session id a JSONL recording's first line names, read within one line's limit.
fn recording_of(path: &std::path::Path) -> Option<String> {
    use std::io::Read;
    let mut head = Vec::new();
    std::io::BufReader::new(super::detect::open_regular(path).ok()?)
        .take(super::lines::MAX_LINE_BYTES as u64)
        .read_until(b'\n', &mut head)
        .ok()?;
    let v: Value = serde_json::from_slice(&head).ok()?;
    text(&v, "sessionId")
}

/// Whether a message is Gemini CLI's own context, not the conversation: a user message that
/// Gemini itself would not resume (`<session_context>`, `<hook_context>`, or no text).
fn is_context(m: &Value) -> bool {
    m.get("type").and_then(Value::as_str) == Some("user")
        && message_text(m).is_none_or(|t| {
            let t = t.trim();
            t.is_empty() || t.starts_with("<session_context>") || t.starts_with("<hook_context>")
        })
}

/// The text of a user message (a string, or its parts' texts).
fn message_text(m: &Value) -> Option<String> {
    match m.get("content")? {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        }
        _ => None,
    }
}

/// What the model read of a call: its `functionResponse`'s `output` (or `error`), when the
/// recording has it.
fn model_read(call: &Value) -> Option<String> {
    let parts = call.get("result")?.as_array()?;
    parts.iter().find_map(|p| {
        let response = p.get("functionResponse")?.get("response")?;
        response
            .get("output")
            .or_else(|| response.get("error"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    })
}

/// What a failed call answered (its display text, else its raw result).
fn result_text(call: &Value) -> Option<String> {
    if let Some(s) = call.get("resultDisplay").and_then(Value::as_str)
        && !s.trim().is_empty()
    {
        return Some(s.to_owned());
    }
    match call.get("result") {
        None | Some(Value::Null) => None,
        Some(r) => Some(r.to_string()),
    }
}

/// The record of one `write_todos` call: its arguments, the text the model read (when known)
/// and, for a call that failed, its error (a refusal), made into `call`
/// (the session, id, time and turn; its `op` is replaced). The importer makes every call's
/// record with it, and a Gemini CLI hook (`AfterTool`) the record of the call it saw, so the
/// two agree. A list planlog cannot read is a [`Record::Bad`] naming the call's line.
pub fn write_todos_record(
    args: Value,
    read: Option<String>,
    error: Option<String>,
    call: SourceCall,
) -> Record {
    list_call("write_todos", args, read, error, call, todos_of)
}

/// The todos of a write_todos call: `[{description, status}]`.
///
/// # Errors
/// [`BadList`] when they are not such a list.
pub fn todos_of(args: &Value, notes: &mut Vec<String>) -> Result<Vec<Todo>, BadList> {
    BadList::list(args, "todos", " in its arguments")?
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let content = BadList::text(t, "todo", i + 1, "description")?;
            let (status, note) = status_of(t.get("status").and_then(Value::as_str).unwrap_or(""));
            notes.extend(note);
            Ok(Todo {
                content: content.to_owned(),
                status,
                ..Todo::default()
            })
        })
        .collect()
}
