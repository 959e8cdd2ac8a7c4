//! What an import keeps of a call too large to keep whole. The agent's record is kept as it
//! was, rule breaches flagged; but one call must never make an event that takes gigabytes to
//! store, show or verify. An item's text longer than [`MAX_IMPORTED_TEXT_CHARS`] is kept as
//! an excerpt with its full size and SHA-256 (as live plan_write keeps a long refused
//! submission); metadata larger than that is replaced by a note of its size and hash; a
//! refused call's input larger than that is kept as an excerpt of its JSON text. Each cut is
//! noted on the event.

use std::fmt::{self, Display};

use planlog_core::events::ToolCall;
use planlog_core::limits::{KEPT_SUBMISSION_CHARS, MAX_IMPORTED_TEXT_CHARS};
use planlog_core::rules::excerpt_of;
use serde_json::Value;

use super::record::{Op, TaskPatch, Todo};

/// Bounds every text of `op`, noting each cut in `notes`.
pub(crate) fn bound_op(op: &mut Op, notes: &mut Vec<String>) {
    match op {
        Op::List(todos) | Op::Checkpoint(todos) | Op::Snapshot(todos) => {
            for (n, t) in todos.iter_mut().enumerate() {
                bound_todo(t, &Item(n + 1), notes);
            }
        }
        Op::Create(t) => bound_todo(t, &"the task", notes),
        Op::Update { patch, .. } => bound_patch(patch, notes),
        Op::Refused { submitted, .. } | Op::Blocked { submitted, .. } => {
            let text = submitted.to_string();
            if text.len() > MAX_IMPORTED_TEXT_CHARS {
                notes.push(format!(
                    "the refused call's input was {} bytes: kept as an excerpt with its SHA-256",
                    text.len()
                ));
                *submitted = Value::String(excerpt_of(&text, KEPT_SUBMISSION_CHARS));
            }
        }
        Op::Describe(d) => {
            for (field, what) in [
                (&mut d.title, "the title"),
                (&mut d.agent, "the agent"),
                (&mut d.agent_version, "the agent's version"),
                (&mut d.entrypoint, "the entry point"),
                (&mut d.project, "the project"),
                (&mut d.branch, "the branch"),
                (&mut d.model, "the model"),
                (&mut d.first_prompt, "the first prompt"),
            ] {
                bound_opt(field, &what, notes);
            }
        }
        Op::Restored { text, .. } => bound_text(text, &"the restored text", notes),
        Op::Delete { .. } | Op::Compacted { .. } => {}
    }
}

/// Bounds the texts of a call as sent and of its result, noting each cut in `notes`.
pub(crate) fn bound_tool_call(call: &mut Option<ToolCall>, notes: &mut Vec<String>) {
    let Some(call) = call else {
        return;
    };
    bound_text(&mut call.arguments, &"the call's arguments", notes);
    if let Some(result) = &mut call.result {
        bound_opt(&mut result.text, &"the call's result", notes);
        if let Some(structured) = &result.structured {
            let text = structured.to_string();
            if text.len() > MAX_IMPORTED_TEXT_CHARS {
                notes.push(format!(
                    "the call's structured result was {} bytes: kept as an excerpt of its JSON text with its SHA-256",
                    text.len()
                ));
                result.structured = Some(Value::String(excerpt_of(&text, KEPT_SUBMISSION_CHARS)));
            }
        }
    }
}

/// "item N", written only when a note needs it (every call of an import, and of `verify`,
/// passes through here).
struct Item(usize);

impl Display for Item {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "item {}", self.0)
    }
}

/// "{whose}'s {part}", written only when a note needs it.
struct Part<'a>(&'a dyn Display, &'static str);

impl Display for Part<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}'s {}", self.0, self.1)
    }
}

fn bound_text(text: &mut String, what: &dyn Display, notes: &mut Vec<String>) {
    // Characters are at most four bytes: a shorter text needs no count.
    if text.len() > MAX_IMPORTED_TEXT_CHARS && text.chars().count() > MAX_IMPORTED_TEXT_CHARS {
        notes.push(format!(
            "{what} was {} bytes: kept as an excerpt of {MAX_IMPORTED_TEXT_CHARS} characters with its SHA-256",
            text.len()
        ));
        *text = excerpt_of(text, MAX_IMPORTED_TEXT_CHARS);
    }
}

fn bound_opt(text: &mut Option<String>, what: &dyn Display, notes: &mut Vec<String>) {
    if let Some(t) = text {
        bound_text(t, what, notes);
    }
}

fn bound_metadata(
    metadata: &mut Option<serde_json::Map<String, Value>>,
    what: &dyn Display,
    notes: &mut Vec<String>,
) {
    let Some(m) = metadata else {
        return;
    };
    // A map of string keys always serializes; were it not to, nothing would be cut.
    let text = serde_json::to_string(&*m).unwrap_or_default();
    if text.len() > MAX_IMPORTED_TEXT_CHARS {
        notes.push(format!(
            "{what}'s metadata was {} bytes: replaced by its size and SHA-256",
            text.len()
        ));
        let mut kept = serde_json::Map::new();
        kept.insert(
            "planlog_cut".to_owned(),
            Value::String(excerpt_of(&text, 0)),
        );
        *metadata = Some(kept);
    }
}

fn bound_todo(todo: &mut Todo, what: &dyn Display, notes: &mut Vec<String>) {
    bound_text(&mut todo.content, &Part(what, "content"), notes);
    bound_opt(&mut todo.description, &Part(what, "description"), notes);
    bound_opt(&mut todo.active_form, &Part(what, "active form"), notes);
    bound_opt(&mut todo.owner, &Part(what, "owner"), notes);
    bound_metadata(&mut todo.metadata, what, notes);
}

fn bound_patch(patch: &mut TaskPatch, notes: &mut Vec<String>) {
    bound_opt(&mut patch.subject, &"the new subject", notes);
    bound_opt(&mut patch.description, &"the new description", notes);
    bound_opt(&mut patch.active_form, &"the new active form", notes);
    bound_opt(&mut patch.owner, &"the new owner", notes);
    bound_metadata(&mut patch.metadata, &"the update", notes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_texts_are_cut_with_their_size_and_hash_and_short_ones_kept() {
        let long = "é".repeat(MAX_IMPORTED_TEXT_CHARS + 10);
        let mut op = Op::List(vec![
            Todo {
                content: long.clone(),
                ..Todo::default()
            },
            Todo {
                content: "short".to_owned(),
                ..Todo::default()
            },
        ]);
        let mut notes = Vec::new();
        bound_op(&mut op, &mut notes);
        let Op::List(todos) = op else { panic!() };
        assert!(todos[0].content.starts_with(&"é".repeat(100)));
        assert!(
            todos[0]
                .content
                .contains(&format!("{} bytes in all, sha256 ", long.len()))
        );
        assert!(todos[0].content.chars().count() < MAX_IMPORTED_TEXT_CHARS + 120);
        assert_eq!(todos[1].content, "short");
        assert_eq!(notes.len(), 1);
        assert!(notes[0].starts_with("item 1's content was"), "{notes:?}");
    }
}
