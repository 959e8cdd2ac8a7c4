//! Codex CLI rollouts: update_plan calls.
//!
//! Current rollouts are `{timestamp, type, payload}` lines: a `session_meta` first (its
//! `payload.id` is the session; `forked_from_id` names the parent of a fork), plan updates as
//! `response_item` payloads `{type: "function_call", name: "update_plan", arguments: "<JSON
//! {explanation?, plan: [{step, status}]}>", call_id}`, their results as `function_call_output`
//! payloads with the same `call_id` (`failed to parse function arguments: …` when Codex
//! refused the call), user prompts as `event_msg` payloads of type `user_message`. Older
//! rollouts (2025) start with a bare header `{id, timestamp, ...}`, then `{"record_type":
//! "state"}` lines and bare items without timestamps, sometimes with CRLF line endings; there
//! a turn is a user `message` item that is not an injected context block (`<...>` or
//! `# AGENTS.md`). One file is one session.
//!
//! - Each call keeps the call as sent (the `arguments` string as it is) and the output text.
//! - What the session is: `session_meta`'s `cwd`, `cli_version`, `originator` and
//!   `git.branch`, `turn_context`'s `model`, and the first prompt ([`super::describe`]).
//! - A `compacted` line is a compaction (no trigger or token counts in the rollout).

use crate::BadList;
use serde_json::Value;

use planlog_core::events::{ToolCall, ToolCallResult};

use super::describe::Described;
use super::lines::{JsonLines, Line};
use super::pairing::Pairing;
use super::record::{BadLine, Op, Record, SourceCall, SourceSession, Stamp, Todo, status_of, text};
use super::{Emit, Input, Stopped};

/// An update_plan call waiting for its output.
struct Pending {
    arguments: Option<Value>,
    call: SourceCall,
}

struct Parser {
    key: Option<String>,
    turn: u64,
    saw_user_events: bool,
    pairing: Pairing<Pending>,
    described: Described,
}

impl Default for Parser {
    fn default() -> Self {
        Self {
            key: None,
            turn: 0,
            saw_user_events: false,
            pairing: Pairing::default(),
            described: Described::of("codex"),
        }
    }
}

/// Parses a Codex rollout into records.
///
/// # Errors
/// [`Stopped`] when the reader of the records went away.
pub(crate) fn parse(input: Input<'_>, emit: &mut Emit<'_>) -> Result<(), Stopped> {
    let reader = match input.open() {
        Ok(r) => r,
        Err(e) => return emit.unreadable(&e),
    };
    let mut p = Parser::default();
    for line in JsonLines::new(reader) {
        match line {
            Err(e) => return emit.unreadable(&e),
            Ok(Line::Bad(bad) | Line::TooLong(bad)) => emit.send(Record::Bad(bad))?,
            Ok(Line::Cut(n)) => emit.send(Record::Cut(n))?,
            Ok(Line::Json(n, v)) => {
                p.line(n, &v, input, emit)?;
                p.describe(n, &v, emit)?;
            }
        }
    }
    // Calls whose results are not written yet wait for the next import.
    p.pairing.leave_all(|c| c.call.line, emit)
}

impl Parser {
    /// The session key: the rollout's id, or (no header) the file's name.
    fn session(
        &mut self,
        id: Option<String>,
        parent: Option<String>,
        started: Option<planlog_core::Timestamp>,
        input: Input<'_>,
        emit: &mut Emit<'_>,
    ) -> Result<String, Stopped> {
        if let Some(k) = &self.key {
            return Ok(k.clone());
        }
        let key = id.unwrap_or_else(|| input.file_name());
        self.key = Some(key.clone());
        emit.send(Record::Session(SourceSession {
            key: key.clone(),
            parent,
            started,
            label: None,
            cwd: None,
            transcript: None,
        }))?;
        Ok(key)
    }

    fn line(
        &mut self,
        n: u64,
        v: &Value,
        input: Input<'_>,
        emit: &mut Emit<'_>,
    ) -> Result<(), Stopped> {
        if !v.is_object() {
            return emit.send(Record::Bad(BadLine {
                line: n,
                why: "not a JSON object".into(),
            }));
        }
        let at = Stamp::parse(v.get("timestamp").and_then(Value::as_str));
        let (kind, item) = match (v.get("type").and_then(Value::as_str), v.get("payload")) {
            (Some(kind), Some(payload)) => (kind, payload),
            // Old format: state records, the header, and bare items.
            (None, _) if v.get("record_type").is_some() => return Ok(()),
            (None, _) if v.get("id").is_some() && v.get("timestamp").is_some() => {
                self.session(text(v, "id"), None, at.known(), input, emit)?;
                return Ok(());
            }
            (Some(_), None) => ("response_item", v),
            (None, _) => return Ok(()),
        };
        match kind {
            "compacted" => {
                let key = self.session(None, None, at.known(), input, emit)?;
                let call = SourceCall {
                    session: key.clone(),
                    line: n,
                    call_id: Some(format!("compact:line-{n}")),
                    at,
                    turn: (self.turn > 0).then_some(self.turn),
                    op: Op::Compacted {
                        trigger: None,
                        tokens_before: None,
                        tokens_after: None,
                        since: None,
                    },
                    explanation: None,
                    notes: Vec::new(),
                    tool_call: None,
                };
                self.pairing.ready(&key, Record::Call(call), emit)?;
            }
            "session_meta" => {
                let started = Stamp::parse(item.get("timestamp").and_then(Value::as_str))
                    .known()
                    .or(at.known());
                self.session(
                    text(item, "id"),
                    text(item, "forked_from_id"),
                    started,
                    input,
                    emit,
                )?;
            }
            "event_msg" if item.get("type").and_then(Value::as_str) == Some("user_message") => {
                self.saw_user_events = true;
                self.prompt(emit)?;
            }
            "response_item" => match item.get("type").and_then(Value::as_str) {
                Some("message")
                    if !self.saw_user_events
                        && item.get("role").and_then(Value::as_str) == Some("user")
                        && is_prompt(item) =>
                {
                    self.prompt(emit)?;
                }
                Some("function_call")
                    if item.get("name").and_then(Value::as_str) == Some("update_plan") =>
                {
                    let key = self.session(None, None, at.known(), input, emit)?;
                    let call = SourceCall {
                        session: key.clone(),
                        line: n,
                        call_id: text(item, "call_id"),
                        at,
                        turn: (self.turn > 0).then_some(self.turn),
                        op: Op::List(Vec::new()),
                        explanation: None,
                        notes: Vec::new(),
                        tool_call: None,
                    };
                    let pending = Pending {
                        arguments: item.get("arguments").cloned(),
                        call,
                    };
                    match text(item, "call_id") {
                        Some(id) => self.pairing.wait(&key, id, pending, |_| None, emit)?,
                        None => {
                            self.pairing.ready(&key, settle(pending, None), emit)?;
                        }
                    }
                }
                Some("function_call_output") => {
                    if let Some(id) = item.get("call_id").and_then(Value::as_str) {
                        let output = output_of(item.get("output"));
                        self.pairing
                            .settle(id, |c| Some(settle(c, Some(output))), emit)?;
                    }
                }
                _ => {}
            },
            _ => {}
        }
        Ok(())
    }

    /// What line `v` says of the session; recorded when that changed.
    fn describe(&mut self, n: u64, v: &Value, emit: &mut Emit<'_>) -> Result<(), Stopped> {
        let Some(key) = self.key.clone() else {
            return Ok(());
        };
        // Old rollouts' items are bare: the line is the item.
        let (kind, payload) = match (v.get("type").and_then(Value::as_str), v.get("payload")) {
            (Some(kind), Some(payload)) => (Some(kind), payload),
            (Some(_), None) => (Some("response_item"), v),
            (None, _) => (None, v),
        };
        let d = &mut self.described;
        let field = |k: &str| payload.get(k).and_then(Value::as_str);
        match kind {
            Some("session_meta") => {
                Described::set(&mut d.now.project, field("cwd"));
                Described::set(&mut d.now.agent_version, field("cli_version"));
                Described::set(&mut d.now.entrypoint, field("originator"));
                let branch = payload
                    .get("git")
                    .and_then(|g| g.get("branch"))
                    .and_then(Value::as_str);
                Described::set(&mut d.now.branch, branch);
            }
            Some("turn_context") => {
                Described::set(&mut d.now.model, field("model"));
                Described::set(&mut d.now.project, field("cwd"));
            }
            Some("event_msg") if field("type") == Some("user_message") => {
                if let Some(m) = field("message") {
                    d.first_prompt(m);
                }
            }
            Some("response_item")
                if !self.saw_user_events
                    && field("type") == Some("message")
                    && field("role") == Some("user")
                    && is_prompt(payload) =>
            {
                if let Some(t) = first_text(payload) {
                    d.first_prompt(t);
                }
            }
            _ => {}
        }
        let at = Stamp::parse(v.get("timestamp").and_then(Value::as_str));
        match self.described.record(&key, n, at) {
            Some(r) => self.pairing.ready(&key, r, emit),
            None => Ok(()),
        }
    }

    fn prompt(&mut self, emit: &mut Emit<'_>) -> Result<(), Stopped> {
        self.turn += 1;
        if let Some(key) = self.key.clone() {
            self.pairing
                .settle_session(&key, |c| Some(settle(c, None)), emit)?;
        }
        Ok(())
    }
}

/// A function call's output: `(failed, text)`.
fn output_of(output: Option<&Value>) -> (bool, String) {
    let (text, success) = match output {
        Some(Value::String(s)) => (s.clone(), None),
        Some(o @ Value::Object(_)) => (
            o.get("content")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            o.get("success").and_then(Value::as_bool),
        ),
        _ => (String::new(), None),
    };
    let failed = success == Some(false) || text.starts_with("failed to parse function arguments");
    (failed, text)
}

/// The first text of a message item.
fn first_text(item: &Value) -> Option<&str> {
    item.get("content")
        .and_then(Value::as_array)
        .and_then(|blocks| {
            blocks
                .iter()
                .find_map(|b| b.get("text").and_then(Value::as_str))
        })
}

fn is_prompt(item: &Value) -> bool {
    let text = first_text(item).unwrap_or("");
    let t = text.trim_start();
    !t.is_empty() && !t.starts_with('<') && !t.starts_with("# AGENTS.md")
}

/// The record of one `update_plan` call as a Codex hook sees it (PostToolUse runs only for a
/// call Codex applied): its arguments as the hook got them (parsed), the text the model read
/// (`"Plan updated"`), and the call made of the hook's session, id and time (`call`). The same
/// record an import of the rollout makes of that call.
pub fn update_plan_record(arguments: Value, read: String, call: SourceCall) -> Record {
    settle(
        Pending {
            arguments: Some(arguments),
            call,
        },
        Some((false, read)),
    )
}

/// The record of a call, now that its output (or the lack of one) is known.
fn settle(pending: Pending, output: Option<(bool, String)>) -> Record {
    let Pending {
        arguments,
        mut call,
    } = pending;
    call.tool_call = Some(ToolCall {
        tool: "update_plan".to_owned(),
        arguments: match &arguments {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        },
        result: output.as_ref().map(|(failed, text)| ToolCallResult {
            is_error: *failed,
            text: Some(text.clone()),
            structured: None,
        }),
    });
    let submitted = arguments.clone().unwrap_or(Value::Null);
    if let Some((true, text)) = &output {
        return Record::Call(SourceCall {
            op: Op::Refused {
                submitted,
                error: text.clone(),
            },
            ..call
        });
    }
    match plan_of(arguments.as_ref(), &mut call.notes) {
        Ok((explanation, todos)) => {
            if output.is_none() {
                call.notes
                    .push("the rollout holds no output for this call".to_owned());
            }
            Record::Call(SourceCall {
                op: Op::List(todos),
                explanation,
                ..call
            })
        }
        // Codex parses the arguments itself and refuses what it cannot read: without an
        // output saying so, the call is still one it could not have applied.
        Err(why) if output.is_none() => Record::Call(SourceCall {
            op: Op::Refused {
                submitted,
                error: format!("update_plan arguments planlog cannot read either: {why}"),
            },
            ..call
        }),
        Err(why) => Record::Bad(BadLine {
            line: call.line,
            why: format!("update_plan call: {why}, yet Codex accepted it"),
        }),
    }
}

/// The explanation and the steps of update_plan arguments (a JSON string, or an object).
/// The steps of an `update_plan` call's arguments (a JSON object, or its text), as the
/// importer reads them.
///
/// # Errors
/// [`BadList`] when they hold no readable plan.
pub fn update_plan_items(arguments: &Value, notes: &mut Vec<String>) -> Result<Vec<Todo>, BadList> {
    plan_of(Some(arguments), notes).map(|(_, todos)| todos)
}

pub(crate) fn plan_of(
    arguments: Option<&Value>,
    notes: &mut Vec<String>,
) -> Result<(Option<String>, Vec<Todo>), BadList> {
    let parsed;
    let args = match arguments {
        Some(Value::String(s)) => {
            parsed = serde_json::from_str::<Value>(s).map_err(|e| BadList::NotJson {
                detail: e.to_string(),
            })?;
            &parsed
        }
        Some(obj @ Value::Object(_)) => obj,
        _ => return Err(BadList::NoArguments),
    };
    let todos = BadList::list(args, "plan", "")?
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let step = BadList::text(s, "step", i + 1, "step")?;
            let word = BadList::text(s, "step", i + 1, "status")?;
            let (status, note) = status_of(word);
            notes.extend(note);
            Ok(Todo {
                content: step.to_owned(),
                status,
                ..Todo::default()
            })
        })
        .collect::<Result<Vec<_>, BadList>>()?;
    Ok((
        text(args, "explanation").filter(|e| !e.trim().is_empty()),
        todos,
    ))
}
