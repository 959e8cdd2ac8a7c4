//! Codex CLI rollouts: update_plan calls.
//!
//! Current rollouts are `{timestamp, type, payload}` lines: a `session_meta` first (its
//! `payload.id` is the session), plan updates as `response_item` payloads
//! `{type: "function_call", name: "update_plan", arguments: "<JSON {plan:[{step, status}]}>",
//! call_id}`, user prompts as `event_msg` payloads of type `user_message`. Older rollouts
//! (2025) start with a bare header `{id, timestamp, ...}`, then `{"record_type": "state"}` lines
//! and bare items without timestamps, sometimes with CRLF line endings; there a turn is a user
//! `message` item that is not an injected context block (`<...>` or `# AGENTS.md`). One file is
//! one session.

use planlog_core::Timestamp;
use serde_json::Value;

use super::{BadLine, Parsed, SourceCall, SourceSession, SourceTodo, json_lines, todos_from};

/// Parses a Codex rollout.
pub fn parse(text: &str) -> Parsed {
    let mut parsed = Parsed::default();
    let mut session = SourceSession::default();
    let mut turn = 0u64;
    let mut last_at: Option<Timestamp> = None;
    let mut saw_user_events = false;
    let mut bad = Vec::new();
    for (line_no, v) in json_lines(text, &mut bad) {
        if !v.is_object() {
            parsed.bad_lines.push(BadLine {
                line: line_no,
                why: "not a JSON object".into(),
            });
            continue;
        }
        let at = v
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(|t| Timestamp::parse(t).ok());
        if at.is_some() {
            last_at = at;
        }
        let (kind, item) = match (v.get("type").and_then(Value::as_str), v.get("payload")) {
            (Some(kind), Some(payload)) => (kind, payload),
            // Old format: the header, state records, and bare items.
            (None, _) if v.get("record_type").is_some() => continue,
            (None, _)
                if line_no == 1 || (v.get("id").is_some() && v.get("instructions").is_some()) =>
            {
                session.source_session = v.get("id").and_then(Value::as_str).map(str::to_owned);
                session.started = at;
                continue;
            }
            (Some(_), None) => ("response_item", &v),
            (None, _) => continue,
        };
        match kind {
            "session_meta" => {
                session.source_session = item.get("id").and_then(Value::as_str).map(str::to_owned);
                session.started = item
                    .get("timestamp")
                    .and_then(Value::as_str)
                    .and_then(|t| Timestamp::parse(t).ok())
                    .or(at);
            }
            "event_msg" if item.get("type").and_then(Value::as_str) == Some("user_message") => {
                saw_user_events = true;
                turn += 1;
            }
            "response_item" => match item.get("type").and_then(Value::as_str) {
                Some("message")
                    if !saw_user_events
                        && item.get("role").and_then(Value::as_str) == Some("user")
                        && is_prompt(item) =>
                {
                    turn += 1;
                }
                Some("function_call")
                    if item.get("name").and_then(Value::as_str) == Some("update_plan") =>
                {
                    match plan_of(item.get("arguments")) {
                        Ok(todos) => session.calls.push(SourceCall {
                            call_id: item
                                .get("call_id")
                                .and_then(Value::as_str)
                                .map(str::to_owned),
                            at: at.or(last_at),
                            turn: (turn > 0).then_some(turn),
                            todos,
                            line: line_no,
                        }),
                        Err(why) => parsed.bad_lines.push(BadLine {
                            line: line_no,
                            why: format!("update_plan call: {why}"),
                        }),
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }
    parsed.bad_lines.extend(bad);
    parsed.bad_lines.sort_by_key(|b| b.line);
    parsed.sessions.push(session);
    parsed
}

fn is_prompt(item: &Value) -> bool {
    let text = item
        .get("content")
        .and_then(Value::as_array)
        .and_then(|blocks| {
            blocks
                .iter()
                .find_map(|b| b.get("text").and_then(Value::as_str))
        })
        .unwrap_or("");
    let t = text.trim_start();
    !t.is_empty() && !t.starts_with('<') && !t.starts_with("# AGENTS.md")
}

fn plan_of(arguments: Option<&Value>) -> Result<Vec<SourceTodo>, String> {
    let args: Value = match arguments {
        Some(Value::String(s)) => {
            serde_json::from_str(s).map_err(|e| format!("arguments are not JSON ({e})"))?
        }
        Some(obj @ Value::Object(_)) => obj.clone(),
        _ => return Err("no arguments".into()),
    };
    let plan = args
        .get("plan")
        .and_then(Value::as_array)
        .ok_or_else(|| "no \"plan\" array".to_owned())?;
    todos_from(plan, "step", "step")
}
