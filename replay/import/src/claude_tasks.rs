//! Claude Code task folders (`~/.claude/tasks/<list-id>/`): one pretty-printed JSON file per
//! task, `<n>.json` = `{id, subject, description, activeForm?, owner?, status, blocks,
//! blockedBy, metadata?}`, plus `.highwatermark` and `.lock` (ignored).
//!
//! The folder is one snapshot: a session named after the list id (`ct-<list-id>`) whose plan
//! becomes the tasks, ordered by id, in one `replace` event (no call id: a snapshot is no
//! call). Importing the folder again appends one event when the tasks changed, none when they
//! did not, so a nightly import keeps the history the tool itself deletes. The event's time
//! is the newest task file's modification time. Files that are not task files are bad lines
//! (named by file; `--skip-bad-lines` leaves them out).

use std::path::Path;

use serde_json::Value;

use super::claude_code::task_todo;
use super::record::{BadLine, Op, Record, SourceCall, SourceSession, Stamp, Todo};
use super::{Emit, Input, Stopped};

/// Largest task file read (a task is a few fields; its metadata at most 16 KiB).
const MAX_TASK_FILE_BYTES: u64 = 1024 * 1024;

/// A task file's bytes (`None`: over the limit), read without following a link.
pub(crate) fn read_task_file(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read;
    use std::os::unix::fs::MetadataExt;
    let seen = std::fs::symlink_metadata(path)?;
    let file = super::detect::open_regular(path)?;
    let opened = file.metadata()?;
    if !seen.is_file() || (seen.dev(), seen.ino()) != (opened.dev(), opened.ino()) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "replaced by a link while the folder was read",
        ));
    }
    let mut bytes = Vec::new();
    file.take(MAX_TASK_FILE_BYTES + 1).read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= MAX_TASK_FILE_BYTES).then_some(bytes))
}

/// Parses a task folder into one session and one snapshot.
///
/// # Errors
/// [`Stopped`] when the reader of the records went away.
pub(crate) fn parse(input: Input<'_>, emit: &mut Emit<'_>) -> Result<(), Stopped> {
    let Some(dir) = input.path() else {
        return emit.send(Record::Unreadable(
            "a Claude Code task folder is read from disk, not from bytes".to_owned(),
        ));
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => return emit.unreadable(&e),
    };
    let mut files = Vec::new();
    for entry in entries {
        match entry {
            Ok(e) => {
                let path = e.path();
                let hidden = path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .is_none_or(|n| n.starts_with('.'));
                // Links are not followed, and only regular files are read (a FIFO never ends).
                let regular = e.file_type().is_ok_and(|t| t.is_file());
                if !hidden && path.extension().is_some_and(|x| x == "json") && regular {
                    files.push(path);
                }
            }
            Err(e) => return emit.unreadable(&e),
        }
    }
    files.sort();
    let key = list_id(dir);
    emit.send(Record::Session(SourceSession {
        key: key.clone(),
        parent: None,
        started: None,
        label: Some(format!("Claude Code task list {key}")),
        cwd: None,
        transcript: None,
    }))?;
    let mut todos: Vec<Todo> = Vec::new();
    let mut notes = Vec::new();
    // The folder's own time moves when a task file is deleted.
    let mut newest = std::fs::metadata(dir).ok().and_then(|m| m.modified().ok());
    for path in &files {
        let name = path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let bytes = match read_task_file(path) {
            Ok(Some(b)) => b,
            Ok(None) => {
                emit.send(Record::Bad(BadLine {
                    line: 0,
                    why: format!(
                        "{name}: over {} KiB, not a task file",
                        MAX_TASK_FILE_BYTES / 1024
                    ),
                }))?;
                continue;
            }
            // A task deleted while the folder is read: gone, as in the next snapshot.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return emit.unreadable(&e),
        };
        let task: Value = match serde_json::from_slice(&bytes) {
            Ok(v) => v,
            Err(e) => {
                emit.send(Record::Bad(BadLine {
                    line: 0,
                    why: format!("{name}: not JSON ({e})"),
                }))?;
                continue;
            }
        };
        if task.get("id").is_none() || task.get("subject").is_none() {
            emit.send(Record::Bad(BadLine {
                line: 0,
                why: format!("{name}: not a task (no \"id\" and \"subject\")"),
            }))?;
            continue;
        }
        if let Some(m) = std::fs::metadata(path).ok().and_then(|m| m.modified().ok()) {
            newest = newest.max(Some(m));
        }
        todos.push(task_todo(&task, &mut notes));
    }
    todos.sort_by_key(order_key);
    let at = newest
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .and_then(|d| i64::try_from(d.as_millis()).ok())
        .map_or(Stamp::Missing, |ms| {
            Stamp::At(planlog_core::Timestamp::from_millis(ms))
        });
    emit.send(Record::Call(SourceCall {
        session: key,
        line: 0,
        call_id: None,
        at,
        turn: None,
        op: Op::Snapshot(todos),
        explanation: None,
        notes,
        tool_call: None,
    }))
}

/// Tasks by numeric id, then by id text.
fn order_key(t: &Todo) -> (u64, String) {
    let id = t.id.clone().unwrap_or_default();
    (id.parse().unwrap_or(u64::MAX), id)
}

/// The list id: the folder's name.
fn list_id(dir: &Path) -> String {
    let canonical = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    canonical
        .file_name()
        .map_or_else(|| "tasks".to_owned(), |n| n.to_string_lossy().into_owned())
}
