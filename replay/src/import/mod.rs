//! Importing recorded sessions: Claude Code transcripts (TodoWrite), Codex CLI rollouts
//! (update_plan), and planlog's own jsonl export.
//!
//! A source is parsed into [`SourceSession`]s of [`SourceCall`]s (one per plan tool call, in
//! file order), then turned into planlog events: per source session a `session_started`
//! (origin `import`), then one `plan_written` per call with `semantics: replace`, the source's
//! call id, timestamp and turn. The plan after each call is exactly the list that call set;
//! item ids are derived ([`ids`]). Calls that break planlog's rules are recorded as they
//! happened; `history` and `verify` flag them. Everything is appended in one atomic batch.

pub mod claude_code;
pub mod codex;
pub mod ids;
pub mod planlog;

use planlog_core::{
    CallId, Env, EventLog, LogError, Plan, PlanItem, PlanStatus, SessionId, Timestamp,
    events::{
        Event, EventBody, EventDraft, Origin, Placement, PlanWritten, SessionStarted,
        WriteSemantics,
    },
};

use ids::ItemIds;

/// One todo item as the source recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceTodo {
    /// The source's own id, when it has one.
    pub id: Option<String>,
    /// The text.
    pub content: String,
    /// The status.
    pub status: PlanStatus,
}

/// One plan tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceCall {
    /// The tool call id.
    pub call_id: Option<String>,
    /// When, if the source says.
    pub at: Option<Timestamp>,
    /// The agent turn (1-based count of user prompts in its session).
    pub turn: Option<u64>,
    /// The whole list the call set.
    pub todos: Vec<SourceTodo>,
    /// The line it was read from (1-based).
    pub line: usize,
}

/// One session of the source (a conversation, or a sub-agent sidechain).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SourceSession {
    /// The source's session id.
    pub source_session: Option<String>,
    /// Index of the parent session in the parsed list, for sidechains.
    pub parent: Option<usize>,
    /// When it started, if known.
    pub started: Option<Timestamp>,
    /// Its plan calls, in file order.
    pub calls: Vec<SourceCall>,
}

/// A line that could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadLine {
    /// 1-based line number.
    pub line: usize,
    /// Why.
    pub why: String,
}

/// A parsed source file.
#[derive(Debug, Clone, Default)]
pub struct Parsed {
    /// Sessions, main sessions first (in order of first appearance), then sidechains.
    pub sessions: Vec<SourceSession>,
    /// Lines that could not be used.
    pub bad_lines: Vec<BadLine>,
}

/// Why an import wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The file has unusable lines (the user must fix it or pass `--skip-bad-lines`).
    #[error("{file}: line {}: {}{}; nothing was imported", .lines[0].line, .lines[0].why, if .lines.len() > 1 { format!(" (and {} more bad lines)", .lines.len() - 1) } else { String::new() })]
    BadLines {
        /// The file.
        file: String,
        /// The bad lines.
        lines: Vec<BadLine>,
    },
    /// The file could not be read.
    #[error("cannot read {file}: {detail}")]
    Read {
        /// The file.
        file: String,
        /// Why.
        detail: String,
    },
    /// A planlog export holds a history that could never have been written (verify's checks).
    #[error("{file}: {problem}{}; nothing was imported", if *.more > 0 { format!(" (and {} more problems)", .more) } else { String::new() })]
    Forged {
        /// The file.
        file: String,
        /// The first problem found.
        problem: String,
        /// How many more.
        more: usize,
    },
    /// A planlog export holds a session that already exists here.
    #[error("session {0} already exists in this store")]
    Exists(SessionId),
    /// The store refused the batch.
    #[error(transparent)]
    Store(#[from] LogError),
}

/// What an import created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Imported {
    /// The sessions created, main session first.
    pub sessions: Vec<SessionId>,
    /// Plan calls imported.
    pub calls: usize,
    /// Bad lines skipped (with `--skip-bad-lines`).
    pub skipped: Vec<BadLine>,
}

/// Turns parsed sessions into events and appends them in one batch.
///
/// # Errors
/// [`ImportError::BadLines`] when the parse found bad lines and `skip_bad_lines` is off;
/// [`ImportError::Store`] when the batch is refused (then nothing was written).
pub fn import_parsed(
    log: &dyn EventLog,
    env: &dyn Env,
    source: &str,
    file: &str,
    parsed: Parsed,
    skip_bad_lines: bool,
) -> Result<Imported, ImportError> {
    if !parsed.bad_lines.is_empty() && !skip_bad_lines {
        return Err(ImportError::BadLines {
            file: file.to_owned(),
            lines: parsed.bad_lines,
        });
    }
    for bad in &parsed.bad_lines {
        tracing::warn!(file, line = bad.line, why = %bad.why, "skipping a bad line");
    }
    let mut sessions = parsed.sessions;
    // Keep main sessions that have calls or a sidechain with calls, and sidechains with calls;
    // always keep the first main session so the import names at least one session.
    let has_calls: Vec<bool> = sessions.iter().map(|s| !s.calls.is_empty()).collect();
    let keep: Vec<bool> = (0..sessions.len())
        .map(|i| {
            i == 0
                || has_calls[i]
                || sessions
                    .iter()
                    .enumerate()
                    .any(|(j, s)| s.parent == Some(i) && has_calls[j])
        })
        .collect();
    let ids: Vec<SessionId> = sessions
        .iter()
        .map(|_| SessionId::from_ulid(env.new_ulid()))
        .collect();
    let mut events = Vec::new();
    let mut created = Vec::new();
    let mut calls = 0;
    let file_name = std::path::Path::new(file)
        .file_name()
        .map_or_else(|| file.to_owned(), |n| n.to_string_lossy().into_owned());
    for (i, session) in sessions.iter_mut().enumerate() {
        if !keep[i] {
            continue;
        }
        let id = ids[i].clone();
        let start_at = session
            .started
            .or_else(|| session.calls.iter().find_map(|c| c.at))
            .unwrap_or_else(|| env.now());
        let origin = Origin::Import {
            source: source.to_owned(),
            source_session: session.source_session.clone(),
            parent: session.parent.map(|p| ids[p].clone()),
        };
        let first = Event::seal(
            Placement::after(None, id.clone(), env.new_ulid(), start_at),
            EventDraft::new(EventBody::SessionStarted(SessionStarted {
                origin,
                label: Some(format!("imported from {file_name}")),
                plan: Plan::new(),
                plan_mode: false,
            })),
        );
        let mut last = first.clone();
        events.push(first);
        let mut item_ids = ItemIds::new();
        let mut seen_calls = std::collections::HashSet::new();
        for call in &session.calls {
            let assigned = item_ids.assign(
                &call
                    .todos
                    .iter()
                    .map(|t| (t.id.clone(), t.content.clone()))
                    .collect::<Vec<_>>(),
            );
            let items: Vec<PlanItem> = assigned
                .into_iter()
                .zip(&call.todos)
                .map(|(id, t)| PlanItem::new(id, t.content.clone(), t.status))
                .collect();
            // A call id the source repeats would be taken for a retry: keep only the first.
            let call_id = call
                .call_id
                .as_ref()
                .and_then(|c| CallId::new(c.clone()).ok())
                .filter(|c| seen_calls.insert(c.clone()));
            let body = EventBody::PlanWritten(PlanWritten {
                semantics: WriteSemantics::Replace,
                submitted: items.clone(),
                plan: Plan::from_items(items),
                explanation: None,
                source: None,
            });
            let at = call.at.unwrap_or(last.at);
            let event = Event::seal(
                Placement::after(Some(&last), id.clone(), env.new_ulid(), at),
                EventDraft {
                    turn: call.turn,
                    call_id,
                    body,
                },
            );
            last = event.clone();
            events.push(event);
            calls += 1;
        }
        created.push(id);
    }
    log.append_all(&events)?;
    Ok(Imported {
        sessions: created,
        calls,
        skipped: parsed.bad_lines,
    })
}

/// The JSON values of a jsonl text with their 1-based line numbers; blank lines are skipped,
/// CRLF endings accepted, and lines that are not JSON recorded in `bad`.
pub(crate) fn json_lines<'a>(
    text: &'a str,
    bad: &'a mut Vec<BadLine>,
) -> impl Iterator<Item = (usize, serde_json::Value)> + 'a {
    text.split('\n').enumerate().filter_map(move |(n, raw)| {
        let raw = raw.trim_end_matches('\r');
        if raw.trim().is_empty() {
            return None;
        }
        match serde_json::from_str(raw) {
            Ok(v) => Some((n + 1, v)),
            Err(e) => {
                bad.push(BadLine {
                    line: n + 1,
                    why: format!("not JSON ({e})"),
                });
                None
            }
        }
    })
}

/// The todos of one call: each entry's text is under `text_key` (`content` for Claude Code,
/// `step` for Codex), its status under `status`, and its own id (old Claude Code) under `id`.
pub(crate) fn todos_from(
    list: &[serde_json::Value],
    text_key: &str,
    what: &str,
) -> Result<Vec<SourceTodo>, String> {
    use serde_json::Value;
    list.iter()
        .enumerate()
        .map(|(i, t)| {
            let field = |key: &str| {
                t.get(key)
                    .and_then(Value::as_str)
                    .ok_or_else(|| format!("{what} {} has no {key:?} string", i + 1))
            };
            let id = match t.get("id") {
                Some(Value::String(s)) => Some(s.clone()),
                Some(Value::Number(n)) => Some(n.to_string()),
                _ => None,
            };
            Ok(SourceTodo {
                id,
                content: field(text_key)?.to_owned(),
                status: status_of(field("status")?)?,
            })
        })
        .collect()
}

/// Parses a status word of a source (the same four words planlog uses).
pub(crate) fn status_of(word: &str) -> Result<PlanStatus, String> {
    PlanStatus::from_wire(word).ok_or_else(|| {
        format!(
            "unknown todo status {word:?} (expected pending, in_progress, completed or cancelled)"
        )
    })
}
