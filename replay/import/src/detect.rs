//! Telling a source's format from its content, and finding the sources under a folder.
//!
//! A jsonl file is placed by its first lines (up to [`LINES_LOOKED_AT`]): planlog events
//! carry `kind`/`session`/`seq`/`hash`; Codex lines are `{timestamp, type, payload}` (or, in
//! 2025, a bare `{id, timestamp}` header and `record_type` lines); Gemini's first line is
//! `{sessionId, projectHash, startTime}` and later lines may be `$set`/`$rewindTo`; Claude
//! Code lines have a `type` of its own (`user`, `assistant`, `summary`,
//! `file-history-snapshot`, …) with a `sessionId`, `uuid`, `leafUuid` or `messageId`. A file
//! whose first line is not a whole JSON value is a JSON document: an opencode export
//! (`messages` of `parts`, `ses_` ids) or an old Gemini recording (`sessionId` and
//! `projectHash`). A folder holding task files (`<n>.json` with `id`, `subject`, `status`, or
//! a `.highwatermark`) is a Claude Code task folder.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::lines::{JsonLines, Line};
use super::{Found, SourceFormat};

/// How many non-blank lines of a jsonl file are looked at.
pub(crate) const LINES_LOOKED_AT: usize = 50;

/// How much of a JSON document is looked at.
const DOCUMENT_HEAD: u64 = 256 * 1024;

const CLAUDE_TYPES: &[&str] = &[
    "user",
    "assistant",
    "system",
    "attachment",
    "summary",
    "file-history-snapshot",
    "queue-operation",
    "last-prompt",
    "permission-mode",
    "custom-title",
    "ai-title",
    "agent-name",
    "progress",
    "pr-link",
];

const CODEX_TYPES: &[&str] = &[
    "session_meta",
    "response_item",
    "event_msg",
    "turn_context",
    "compacted",
];

/// The format of one jsonl line, when it tells (`first`: it is the file's first line).
pub(crate) fn classify_line(v: &Value, first: bool) -> Option<SourceFormat> {
    let o = v.as_object()?;
    let has = |k: &str| o.contains_key(k);
    let kind = o.get("type").and_then(Value::as_str);
    if has("kind") && has("session") && has("seq") && has("hash") {
        return Some(SourceFormat::Planlog);
    }
    if has("$set") || has("$rewindTo") || (has("sessionId") && has("projectHash")) {
        return Some(SourceFormat::Gemini);
    }
    if (kind.is_some_and(|k| CODEX_TYPES.contains(&k)) && has("payload")) || has("record_type") {
        return Some(SourceFormat::Codex);
    }
    if first && kind.is_none() && has("id") && has("timestamp") {
        return Some(SourceFormat::Codex);
    }
    if kind.is_some_and(|k| CLAUDE_TYPES.contains(&k))
        && (has("sessionId") || has("uuid") || has("leafUuid") || has("messageId"))
    {
        return Some(SourceFormat::ClaudeCode);
    }
    None
}

/// Why a file or folder has no format planlog knows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnknownFormat {
    /// It cannot be read.
    #[error("cannot read it: {detail}")]
    Unreadable {
        /// The operating system's words.
        detail: String,
    },
    /// A device, a FIFO or a socket.
    #[error("{}", NOT_REGULAR)]
    NotRegular,
    /// A folder that is not a task folder (a folder to walk is given to [`walk`]).
    #[error("a folder without task files (give a file, or a folder to walk)")]
    FolderWithoutTasks,
    /// Nothing in it.
    #[error("it is empty")]
    Empty,
    /// A JSON document of no format planlog knows.
    #[error("a JSON document that is neither an opencode export nor a Gemini CLI recording")]
    UnknownDocument,
    /// Lines, none of a format planlog knows.
    #[error("{}", if *.looked == 1 { "its only line is not a line of a format planlog knows".to_owned() } else { format!("none of its first {} lines is a line of a format planlog knows", .looked) })]
    NoKnownLine {
        /// How many lines were looked at.
        looked: usize,
    },
}

/// The format of a JSON document from its first bytes.
fn classify_document(head: &str) -> Result<SourceFormat, UnknownFormat> {
    let has = |k: &str| head.contains(k);
    if has("\"sessionId\"") && has("\"projectHash\"") {
        return Ok(SourceFormat::Gemini);
    }
    if has("\"messages\"") && (has("\"parts\"") || has("\"ses_")) {
        return Ok(SourceFormat::Opencode);
    }
    Err(UnknownFormat::UnknownDocument)
}

/// The format of a file or folder.
///
/// # Errors
/// Why it has none planlog knows (or cannot be read).
pub fn detect(path: &Path) -> Result<SourceFormat, UnknownFormat> {
    if path.is_dir() {
        return if is_task_folder(path) {
            Ok(SourceFormat::ClaudeCodeTasks)
        } else {
            Err(UnknownFormat::FolderWithoutTasks)
        };
    }
    let unreadable = |e: std::io::Error| UnknownFormat::Unreadable {
        detail: e.to_string(),
    };
    let file = open_regular(path).map_err(unreadable)?;
    let mut looked = 0;
    for line in JsonLines::new(std::io::BufReader::new(file)) {
        match line.map_err(unreadable)? {
            Line::Json(_, v) => {
                if let Some(f) = classify_line(&v, looked == 0) {
                    return Ok(f);
                }
            }
            // The first line is not a whole JSON value: a JSON document.
            // Too long to read: tells nothing; look at the next lines.
            Line::TooLong(_) => continue,
            Line::Bad(_) | Line::Cut(_) if looked == 0 => return document(path),
            Line::Bad(_) | Line::Cut(_) => {}
        }
        looked += 1;
        if looked >= LINES_LOOKED_AT {
            break;
        }
    }
    if looked == 0 {
        return Err(UnknownFormat::Empty);
    }
    if looked == 1
        && let Ok(f) = document(path)
    {
        // A whole document on one line.
        return Ok(f);
    }
    Err(UnknownFormat::NoKnownLine { looked })
}

fn document(path: &Path) -> Result<SourceFormat, UnknownFormat> {
    let mut head = Vec::new();
    open_regular(path)
        .and_then(|f| f.take(DOCUMENT_HEAD).read_to_end(&mut head))
        .map_err(|e| UnknownFormat::Unreadable {
            detail: e.to_string(),
        })?;
    classify_document(&String::from_utf8_lossy(&head))
}

/// The format of bytes in memory (the same rules as [`detect`] for a file).
///
/// # Errors
/// Why they have none planlog knows.
pub fn detect_bytes(bytes: &[u8]) -> Result<SourceFormat, UnknownFormat> {
    let mut looked = 0;
    for line in JsonLines::new(bytes) {
        match line.map_err(|e| UnknownFormat::Unreadable {
            detail: e.to_string(),
        })? {
            Line::Json(_, v) => {
                if let Some(f) = classify_line(&v, looked == 0) {
                    return Ok(f);
                }
            }
            Line::TooLong(_) => continue,
            Line::Bad(_) | Line::Cut(_) if looked == 0 => {
                let end = bytes.len().min(DOCUMENT_HEAD as usize);
                return classify_document(&String::from_utf8_lossy(&bytes[..end]));
            }
            Line::Bad(_) | Line::Cut(_) => {}
        }
        looked += 1;
        if looked >= LINES_LOOKED_AT {
            break;
        }
    }
    if looked == 0 {
        return Err(UnknownFormat::Empty);
    }
    classify_document(&String::from_utf8_lossy(bytes))
        .map_err(|_| UnknownFormat::NoKnownLine { looked })
}

/// Whether a folder is a Claude Code task folder: it has a `.highwatermark`, or its first
/// JSON files are tasks.
pub fn is_task_folder(dir: &Path) -> bool {
    if dir.join(".highwatermark").is_file() {
        return true;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    let mut json: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    json.sort();
    !json.is_empty()
        && json.iter().take(3).all(|p| {
            super::claude_tasks::read_task_file(p)
                .ok()
                .flatten()
                .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
                .is_some_and(|v| {
                    v.get("id").is_some() && v.get("subject").is_some() && v.get("status").is_some()
                })
        })
}

/// Why a path that is neither a file nor a folder is not imported.
pub const NOT_REGULAR: &str = "it is not a regular file or a folder (a device, a FIFO or a socket, whose reading may never end)";

/// The text of `path` when it is a regular file ([`open_regular`]): settings and configs a
/// command reads are read without waiting on a FIFO put where they go.
///
/// # Errors
/// As [`open_regular`], and reading (`InvalidData` when it is not UTF-8).
pub fn read_regular(path: &Path) -> std::io::Result<String> {
    let mut text = String::new();
    std::io::Read::read_to_string(&mut open_regular(path)?, &mut text)?;
    Ok(text)
}

/// Opens `path` (following links) for reading when it is a regular file: an error of kind
/// `InvalidInput` ([`NOT_REGULAR`]) otherwise. It never blocks: a FIFO is opened without
/// waiting for a writer (`O_NONBLOCK`, which changes nothing for a regular file's reads),
/// then refused. A hook reads the path its agent gives it (a transcript), and a FIFO there
/// would otherwise hold the agent for as long as its hook timeout.
///
/// # Errors
/// The file cannot be opened, or is not a regular file.
pub fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            NOT_REGULAR,
        ));
    }
    Ok(file)
}

/// The sources under `path`: the path itself when it is a file or a task folder, else every
/// regular `.jsonl`/`.json` file and task folder below it (hidden entries, links, devices and
/// FIFOs are left out), sorted by path text, each with its detected format.
///
/// # Errors
/// The folder cannot be listed.
pub fn walk(path: &Path) -> Result<Vec<Found>, std::io::Error> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_dir() && !meta.is_file() {
        // A device, a FIFO, a socket: reading one may never end.
        return Ok(vec![Found {
            path: path.to_path_buf(),
            format: Err(UnknownFormat::NotRegular),
        }]);
    }
    if !meta.is_dir() || is_task_folder(path) {
        return Ok(vec![Found {
            path: path.to_path_buf(),
            format: detect(path),
        }]);
    }
    let mut found = Vec::new();
    let mut dirs = vec![path.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let mut entries: Vec<std::fs::DirEntry> =
            std::fs::read_dir(&dir)?.filter_map(Result::ok).collect();
        entries.sort_by_key(std::fs::DirEntry::path);
        for entry in entries {
            let p = entry.path();
            let hidden = p
                .file_name()
                .and_then(|n| n.to_str())
                .is_none_or(|n| n.starts_with('.'));
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if hidden || kind.is_symlink() {
                continue;
            }
            if kind.is_dir() {
                if is_task_folder(&p) {
                    found.push(Found {
                        path: p,
                        format: Ok(SourceFormat::ClaudeCodeTasks),
                    });
                } else {
                    dirs.push(p);
                }
            } else if kind.is_file() && p.extension().is_some_and(|x| x == "jsonl" || x == "json") {
                let format = detect(&p);
                found.push(Found { path: p, format });
            }
        }
    }
    // By path text, so a transcript (`<session>.jsonl`) comes before its sub-agents'
    // folder (`<session>/subagents/`): a main session is imported before its sub-agents.
    found.sort_by(|a, b| a.path.as_os_str().cmp(b.path.as_os_str()));
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str) -> Option<SourceFormat> {
        classify_line(&serde_json::from_str(text).unwrap(), false)
    }

    #[test]
    fn lines_tell_their_format() {
        assert_eq!(
            line(r#"{"type":"summary","summary":"x","leafUuid":"u"}"#),
            Some(SourceFormat::ClaudeCode)
        );
        assert_eq!(
            line(r#"{"timestamp":"t","type":"session_meta","payload":{}}"#),
            Some(SourceFormat::Codex)
        );
        assert_eq!(
            line(r#"{"sessionId":"s","projectHash":"h","startTime":"t"}"#),
            Some(SourceFormat::Gemini)
        );
        assert_eq!(
            line(r#"{"format":2,"session":"s","seq":1,"id":"x","at":"t","hash":"h","kind":"k"}"#),
            Some(SourceFormat::Planlog)
        );
        assert_eq!(line(r#"{"type":"message","role":"user"}"#), None);
        assert_eq!(
            classify_line(&serde_json::json!({"id": "x", "timestamp": "t"}), true),
            Some(SourceFormat::Codex)
        );
    }

    #[test]
    fn documents_and_nothing() {
        assert_eq!(
            detect_bytes(b"{\n  \"info\": {\"id\": \"ses_1\"},\n  \"messages\": []\n}"),
            Ok(SourceFormat::Opencode)
        );
        assert_eq!(
            detect_bytes(
                b"{\n \"sessionId\": \"s\",\n \"projectHash\": \"h\",\n \"messages\": []\n}"
            ),
            Ok(SourceFormat::Gemini)
        );
        assert!(detect_bytes(b"").is_err());
        assert!(detect_bytes(b"{\"hello\": 1}\n").is_err());
        assert!(detect_bytes(b"hello world\n").is_err());
    }
}
