//! Putting the plan back into Claude Code's context: after a compaction, a resume, a clear or
//! a fork (`SessionStart`), and, when installed for it, before every prompt
//! (`UserPromptSubmit`). The context is planlog's injection text (the header and the active
//! items, what `planlog show --inject` prints), sent as the hook's `additionalContext`.
//!
//! A fork starts a new Claude Code session id. Its transcript begins with the parent's lines,
//! which carry the parent's session id: when the fork has no plan of its own yet and its
//! parent has one, the fork's session is created with the parent's plan (one `replace`
//! event whose explanation names the parent session and seq). Without a transcript to read,
//! or a parent planlog knows, the fork starts empty.

use std::io::BufRead;

use planlog_core::render::injection_text;
use planlog_core::{Env, EventLog, LogError, Seq, Timestamp};
use serde_json::{Value, json};

use super::capture::Target;
use super::input::HookInput;
use crate::import::record::{Op, Record, SourceCall, Stamp, Todo};
use crate::import::{Format, ImportError};

/// Claude Code caps `additionalContext` at this many characters.
pub const MAX_CONTEXT_CHARS: usize = 10_000;

/// How many lines of a fork's transcript are read for its parent's session id.
const FORK_LINES: usize = 5_000;

/// The context for `target`'s session: its injection text when it has active items.
///
/// # Errors
/// Store errors.
pub fn context(log: &dyn EventLog, target: &Target) -> Result<Option<String>, LogError> {
    let id = target.session_id();
    let Some(head) = log.head(&id)? else {
        return Ok(None);
    };
    let plan = log.state_at(&id, head.seq)?.plan;
    let text = injection_text(&plan);
    Ok((!text.trim().is_empty()).then(|| cap(&text, &id.to_string())))
}

/// The text cut to Claude Code's limit, saying where the rest is.
fn cap(text: &str, session: &str) -> String {
    if text.chars().count() <= MAX_CONTEXT_CHARS {
        return text.to_owned();
    }
    let tail = format!(
        "\n… (cut at {MAX_CONTEXT_CHARS} characters; the whole plan: planlog show {session})"
    );
    let keep = MAX_CONTEXT_CHARS.saturating_sub(tail.chars().count());
    let mut out: String = text.chars().take(keep).collect();
    out.push_str(&tail);
    out
}

/// The hook output that adds `text` to the model's context for `event`.
pub fn output(event: &str, text: &str) -> String {
    json!({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}).to_string()
}

/// The parent session id of a forked session: the first `sessionId` in its transcript that
/// is not its own.
pub fn fork_parent(input: &HookInput) -> Option<String> {
    let path = input.transcript_path.as_deref()?;
    let file = std::fs::File::open(path).ok()?;
    std::io::BufReader::new(file)
        .lines()
        .take(FORK_LINES)
        .map_while(Result::ok)
        .filter_map(|l| serde_json::from_str::<Value>(&l).ok())
        .find_map(|v| {
            v.get("sessionId")
                .and_then(Value::as_str)
                .filter(|s| *s != input.session_id)
                .map(str::to_owned)
        })
}

/// For a forked session without a plan: its parent's plan, as the first write of its own.
/// `Ok(false)` when there is nothing to continue from.
///
/// # Errors
/// Store errors.
pub fn continue_fork(
    log: &dyn EventLog,
    env: &dyn Env,
    input: &HookInput,
    target: &Target,
    now: Timestamp,
) -> Result<bool, ImportError> {
    if target.format != Format::ClaudeCode || log.head(&target.session_id())?.is_some() {
        return Ok(false);
    }
    let Some(parent) = fork_parent(input) else {
        return Ok(false);
    };
    let from = Target {
        format: Format::ClaudeCode,
        key: parent,
        parent: None,
    };
    let parent_id = from.session_id();
    let Some(head) = log.head(&parent_id)? else {
        return Ok(false);
    };
    let plan = log.state_at(&parent_id, head.seq)?.plan;
    if plan.is_empty() {
        return Ok(false);
    }
    let todos: Vec<Todo> = plan.items().iter().map(todo_of).collect();
    let records = vec![
        Record::Session(target.session(input, now)),
        Record::Call(SourceCall {
            session: target.key.clone(),
            line: 0,
            call_id: None,
            at: Stamp::At(now),
            turn: None,
            op: Op::Snapshot(todos),
            explanation: Some(format!(
                "continued from session {parent_id} at seq {} (a Claude Code fork)",
                Seq::get(head.seq)
            )),
            notes: Vec::new(),
        }),
    ];
    super::capture::write(log, env, target, &records)?;
    Ok(true)
}

fn todo_of(item: &planlog_core::PlanItem) -> Todo {
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
