//! Claude Code transcripts (`~/.claude/projects/*/<session>.jsonl`): TodoWrite calls.
//!
//! A plan call is an `assistant` line whose `message.content[]` holds
//! `{type: "tool_use", name: "TodoWrite", id, input: {todos: [{content, status, id?}]}}`.
//! Replay uses `input.todos` (what the model set), never `toolUseResult.newTodos` (which some
//! versions re-sort). Sessions: each `sessionId` is one session, in order of first appearance;
//! sidechain lines (`isSidechain: true`) belong to the sub-agent whose chain of `parentUuid`s
//! they are on, each such chain its own session, linked to its `sessionId`'s session. A turn
//! is a user prompt (a `user` line with text, not a tool result, not meta, not a compaction
//! summary).

use std::collections::HashMap;

use planlog_core::Timestamp;
use serde_json::Value;

use super::{BadLine, Parsed, SourceCall, SourceSession, SourceTodo, json_lines, todos_from};

/// Parses a Claude Code transcript.
pub fn parse(text: &str) -> Parsed {
    let mut parsed = Parsed::default();
    let mut main_index: HashMap<String, usize> = HashMap::new();
    let mut side_index: HashMap<String, usize> = HashMap::new();
    let mut mains: Vec<SourceSession> = Vec::new();
    let mut sides: Vec<(String, SourceSession)> = Vec::new(); // (sessionId, session)
    // uuid -> root uuid of its sidechain, for sidechain lines seen so far.
    let mut side_root: HashMap<String, String> = HashMap::new();
    let mut turns: HashMap<String, u64> = HashMap::new();
    let mut bad = Vec::new();
    for (line_no, v) in json_lines(text, &mut bad) {
        let Some(obj) = v.as_object() else {
            parsed.bad_lines.push(BadLine {
                line: line_no,
                why: "not a JSON object".into(),
            });
            continue;
        };
        let sid = obj
            .get("sessionId")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let at = obj
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(|t| Timestamp::parse(t).ok());
        let sidechain = obj
            .get("isSidechain")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let key = if sidechain {
            let uuid = obj
                .get("uuid")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            let parent = obj.get("parentUuid").and_then(Value::as_str);
            let root = parent
                .and_then(|p| side_root.get(p).cloned())
                .unwrap_or_else(|| uuid.clone());
            side_root.insert(uuid, root.clone());
            root
        } else {
            sid.clone()
        };
        let kind = obj.get("type").and_then(Value::as_str).unwrap_or("");
        // Lines without a session (summaries, file snapshots) start none.
        if sid.is_empty() && kind != "assistant" && !sidechain {
            continue;
        }
        // Every sessionId gets a main session, also when only its sidechains are seen.
        if !main_index.contains_key(&sid) {
            main_index.insert(sid.clone(), mains.len());
            mains.push(SourceSession {
                source_session: (!sid.is_empty()).then(|| sid.clone()),
                started: at,
                ..SourceSession::default()
            });
        }
        if sidechain && !side_index.contains_key(&key) {
            side_index.insert(key.clone(), sides.len());
            sides.push((
                sid.clone(),
                SourceSession {
                    source_session: Some(format!("{sid}/sidechain/{key}")),
                    started: at,
                    ..SourceSession::default()
                },
            ));
        }
        if kind == "user" && is_prompt(obj) {
            *turns.entry(key.clone()).or_insert(0) += 1;
        }
        if kind != "assistant" {
            continue;
        }
        let Some(content) = obj
            .get("message")
            .and_then(|m| m.get("content"))
            .and_then(Value::as_array)
        else {
            continue;
        };
        for block in content {
            if block.get("type").and_then(Value::as_str) != Some("tool_use")
                || block.get("name").and_then(Value::as_str) != Some("TodoWrite")
            {
                continue;
            }
            match todos_of(block.get("input")) {
                Ok(todos) => {
                    let call = SourceCall {
                        call_id: block.get("id").and_then(Value::as_str).map(str::to_owned),
                        at,
                        turn: turns.get(&key).copied(),
                        todos,
                        line: line_no,
                    };
                    let session = if sidechain {
                        &mut sides[side_index[&key]].1
                    } else {
                        &mut mains[main_index[&key]]
                    };
                    session.calls.push(call);
                }
                Err(why) => parsed.bad_lines.push(BadLine {
                    line: line_no,
                    why: format!("TodoWrite call: {why}"),
                }),
            }
        }
    }
    parsed.bad_lines.extend(bad);
    parsed.bad_lines.sort_by_key(|b| b.line);
    let n_main = mains.len();
    parsed.sessions = mains;
    for (sid, mut side) in sides {
        side.parent = main_index.get(&sid).copied().filter(|i| *i < n_main);
        parsed.sessions.push(side);
    }
    parsed
}

fn is_prompt(obj: &serde_json::Map<String, Value>) -> bool {
    if obj.get("isMeta").and_then(Value::as_bool) == Some(true)
        || obj.get("isCompactSummary").and_then(Value::as_bool) == Some(true)
    {
        return false;
    }
    match obj.get("message").and_then(|m| m.get("content")) {
        Some(Value::String(_)) => true,
        Some(Value::Array(blocks)) => {
            blocks
                .iter()
                .any(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                && !blocks
                    .iter()
                    .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
        }
        _ => false,
    }
}

fn todos_of(input: Option<&Value>) -> Result<Vec<SourceTodo>, String> {
    let todos = input
        .and_then(|i| i.get("todos"))
        .and_then(Value::as_array)
        .ok_or_else(|| "no \"todos\" array in its input".to_owned())?;
    todos_from(todos, "content", "todo")
}
