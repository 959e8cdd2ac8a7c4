//! opencode exports (`opencode export [sessionID]`): one JSON document `{info, messages:
//! [{info, parts}]}`, read a message at a time.
//!
//! - The session is `info.id` (`ses_…`; a message's `info.sessionID` when the document's
//!   `info` comes later), `info.parentID` its parent, `info.time.created` (epoch ms) its start.
//! - A `todowrite` call is a part `{type: "tool", tool: "todowrite", callID, state}`; a
//!   `completed` state set the whole list to `state.input.todos` (`[{content, status,
//!   priority, id?}]`; `priority` is kept in the item's metadata, and the `cancelled` status
//!   is planlog's); an `error` state is the tool's refusal (`state.error`); `pending` and
//!   `running` states never ran to the end and are skipped.
//! - A turn is a message whose `info.role` is `user`. A call's line is the line its message
//!   starts on.
//! - Each call keeps the call as sent (the JSON of `state.input`: the export holds no text of
//!   its own) and the text the model read (`state.output`, or `state.error`).
//! - What the session is: `info.title`, `info.directory`, `info.version`, a message's
//!   `modelID`, the first user message's text ([`super::describe`]).

use crate::BadList;
use serde_json::Value;

use super::describe::Described;
use super::document::{self, Ended, Fields};
use super::record::{
    BadLine, Op, Record, SourceCall, SourceSession, Stamp, Todo, list_call, status_of, text,
};
use super::{Emit, Input, Stopped};

struct Export<'e, 'a> {
    emit: &'e mut Emit<'a>,
    key: Option<String>,
    turn: u64,
    saw_document: bool,
    described: Described,
}

/// Parses an opencode export into records.
///
/// # Errors
/// [`Stopped`] when the reader of the records went away.
pub(crate) fn parse(input: Input<'_>, emit: &mut Emit<'_>) -> Result<(), Stopped> {
    let reader = match input.open() {
        Ok(r) => r,
        Err(e) => return emit.unreadable(&e),
    };
    let mut export = Export {
        emit,
        key: None,
        turn: 0,
        saw_document: false,
        described: Described::of("opencode"),
    };
    match document::stream(reader, &mut export) {
        Ok(()) if export.saw_document => Ok(()),
        Ok(()) => export.emit.send(Record::Bad(BadLine {
            line: 0,
            why: "no \"info\" or \"messages\" in the document: not an opencode export".to_owned(),
        })),
        Err(Ended::Stopped) => Err(Stopped),
        Err(Ended::Bad(bad)) => export.emit.send(Record::Bad(bad)),
        Err(Ended::Io(e)) => export.emit.unreadable(&e),
    }
}

impl Export<'_, '_> {
    fn session(&mut self, info: &Value) -> Result<Option<String>, Stopped> {
        if let Some(k) = &self.key {
            return Ok(Some(k.clone()));
        }
        let key = text(info, "id")
            .filter(|id| id.starts_with("ses"))
            .or_else(|| text(info, "sessionID"));
        let Some(key) = key else {
            return Ok(None);
        };
        self.key = Some(key.clone());
        let is_session = text(info, "id").as_deref() == Some(key.as_str());
        self.emit.send(Record::Session(SourceSession {
            key: key.clone(),
            parent: is_session.then(|| text(info, "parentID")).flatten(),
            started: is_session
                .then(|| Stamp::millis(info.get("time").and_then(|t| t.get("created"))).known())
                .flatten(),
            label: None,
            cwd: None,
            transcript: None,
        }))?;
        Ok(Some(key))
    }

    /// What the document's `info` says of the session; recorded when that changed.
    fn describe_session(&mut self, line: u64, info: &Value) -> Result<(), Stopped> {
        let Some(key) = self.key.clone() else {
            return Ok(());
        };
        let field = |k: &str| info.get(k).and_then(Value::as_str);
        let d = &mut self.described;
        d.title(field("title"));
        Described::set(&mut d.now.project, field("directory"));
        Described::set(&mut d.now.agent_version, field("version"));
        let at = Stamp::millis(info.get("time").and_then(|t| t.get("updated")));
        match self.described.record(&key, line, at) {
            Some(r) => self.emit.send(r),
            None => Ok(()),
        }
    }

    fn message(&mut self, line: u64, message: &Value) -> Result<(), Stopped> {
        let info = message.get("info").unwrap_or(&Value::Null);
        let Some(key) = self.session(info)? else {
            return Ok(());
        };
        let user = info.get("role").and_then(Value::as_str) == Some("user");
        if user {
            self.turn += 1;
        }
        let Some(parts) = message.get("parts").and_then(Value::as_array) else {
            return self.describe_message(&key, line, info, user, &[]);
        };
        self.describe_message(&key, line, info, user, parts)?;
        for part in parts {
            if part.get("type").and_then(Value::as_str) != Some("tool")
                || part.get("tool").and_then(Value::as_str) != Some("todowrite")
            {
                continue;
            }
            let state = part.get("state").unwrap_or(&Value::Null);
            let (read, error) = match state.get("status").and_then(Value::as_str) {
                Some("completed") => (text(state, "output"), None),
                Some("error") => {
                    let error = text(state, "error");
                    (
                        error.clone(),
                        Some(error.unwrap_or_else(|| "the tool reported an error".to_owned())),
                    )
                }
                _ => continue,
            };
            let time = state.get("time").and_then(|t| t.get("start"));
            let at = match Stamp::millis(time) {
                Stamp::Missing => Stamp::millis(info.get("time").and_then(|t| t.get("created"))),
                known => known,
            };
            let call = SourceCall {
                session: key.clone(),
                line,
                call_id: text(part, "callID").or_else(|| text(part, "id")),
                at,
                turn: (self.turn > 0).then_some(self.turn),
                op: Op::List(Vec::new()),
                explanation: None,
                notes: Vec::new(),
                tool_call: None,
            };
            let input = state.get("input").cloned().unwrap_or(Value::Null);
            self.emit.send(todowrite_record(input, read, error, call))?;
        }
        Ok(())
    }

    /// What a message says of the session (its model, the first prompt).
    fn describe_message(
        &mut self,
        key: &str,
        line: u64,
        info: &Value,
        user: bool,
        parts: &[Value],
    ) -> Result<(), Stopped> {
        let d = &mut self.described;
        Described::set(
            &mut d.now.model,
            info.get("modelID").and_then(Value::as_str),
        );
        if user
            && let Some(t) = parts
                .iter()
                .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
                .find_map(|p| p.get("text").and_then(Value::as_str))
        {
            d.first_prompt(t);
        }
        let at = Stamp::millis(info.get("time").and_then(|t| t.get("created")));
        match self.described.record(key, line, at) {
            Some(r) => self.emit.send(r),
            None => Ok(()),
        }
    }
}

impl Fields for Export<'_, '_> {
    fn streams(&self, key: &str) -> bool {
        key == "messages"
    }

    fn field(&mut self, key: &str, value: Value) -> Result<(), Stopped> {
        if key == "info" {
            self.saw_document = true;
            self.session(&value)?;
            self.describe_session(0, &value)?;
        }
        Ok(())
    }

    fn element(&mut self, _key: &str, line: u64, value: Value) -> Result<(), Stopped> {
        self.saw_document = true;
        self.message(line, &value)
    }
}

/// The record of one `todowrite` call: its input, the text the model read (when known) and,
/// for a call that failed, its error (a refusal), made into `call` (the session, call id, time
/// and turn; its `op` is replaced). The importer makes every call's record with it, and
/// planlog's opencode plugin (through `planlog hook opencode`) the record of the call it saw,
/// so the two agree. A list planlog cannot read is a [`Record::Bad`] naming the call's line.
pub fn todowrite_record(
    args: Value,
    read: Option<String>,
    error: Option<String>,
    call: SourceCall,
) -> Record {
    list_call("todowrite", args, read, error, call, todos_of)
}

/// The todos of a todowrite input.
///
/// # Errors
/// [`BadList`] when they are not such a list.
pub fn todos_of(input: &Value, notes: &mut Vec<String>) -> Result<Vec<Todo>, BadList> {
    BadList::list(input, "todos", " in its input")?
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let content = BadList::text(t, "todo", i + 1, "content")?;
            let (status, note) = status_of(t.get("status").and_then(Value::as_str).unwrap_or(""));
            notes.extend(note);
            let metadata = t.get("priority").map(|p| {
                let mut m = serde_json::Map::new();
                m.insert("priority".to_owned(), p.clone());
                m
            });
            Ok(Todo {
                id: super::record::id_text(t.get("id")),
                content: content.to_owned(),
                status,
                metadata,
                ..Todo::default()
            })
        })
        .collect()
}
