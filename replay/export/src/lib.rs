//! planlog-export: a session as one JSON document, jsonl (one canonical event per line,
//! importable with `import planlog`), a markdown report, or the time-travel viewer as one
//! self-contained HTML file: [`export`] whole, or [`export_to`] a piece at a time.
//!
//! # Module map
//!
//! | module | what |
//! |---|---|
//! | `json`, `jsonl`, `markdown` | one file per format |
//! | [`viewer`] | the time-travel viewer: its page, script and style, and the data it reads (what `planlog ui` serves, and what the HTML export inlines) |

mod json;
mod jsonl;
mod markdown;
pub mod viewer;

use planlog_core::{EventLog, LogError, Seq, SessionInfo, SessionState, apply, events::Event};

/// What an export writes: planlog's JSON document, its event lines (JSONL, which `import`
/// takes back), or markdown for people.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExportFormat {
    /// One JSON document: the catalogue entry and every event.
    Json,
    /// One canonical event per line (round-trips through `import planlog`).
    Jsonl,
    /// A human-readable report: the plan file and the history.
    Markdown,
    /// The time-travel viewer with the session's data inlined (no network; works from
    /// `file://`).
    Html,
}

/// Renders `events` of the session `info` in `format`.
pub fn export(info: &SessionInfo, events: &[Event], format: ExportFormat) -> String {
    match format {
        ExportFormat::Jsonl => jsonl::render(events),
        ExportFormat::Json => json::render(info, events),
        ExportFormat::Markdown => markdown::render(info, events),
        ExportFormat::Html => viewer::html(info, events),
    }
}

/// Why [`export_to`] stopped.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The session could not be read.
    #[error(transparent)]
    Log(#[from] LogError),
    /// The output could not be written (`emit` failed).
    #[error("could not write the export: {0}")]
    Output(#[source] std::io::Error),
}

/// Writes the export of the session `info` in `format` piece by piece through `emit`, reading
/// the log a chunk at a time ([`EventLog::scan`]): memory stays flat in the session's length, in every
/// format. The text is exactly [`export`]'s.
///
/// # Errors
/// [`ExportError::Log`] when the log cannot be read; [`ExportError::Output`] when `emit`
/// fails (nothing more is written).
pub fn export_to(
    log: &dyn EventLog,
    info: &SessionInfo,
    format: ExportFormat,
    emit: &mut dyn FnMut(&str) -> std::io::Result<()>,
) -> Result<(), ExportError> {
    let mut put = |text: &str| emit(text).map_err(ExportError::Output);
    let id = &info.id;
    let earlier = planlog_audit::plans_in(log, id);
    match format {
        ExportFormat::Html => {
            put(&viewer::html_head(info))?;
            let mut first = true;
            chunks(log, info, &mut |events, before| {
                for v in viewer::event_values(before, events, &earlier) {
                    put(&viewer::html_event(&v, first))?;
                    first = false;
                }
                Ok(())
            })?;
            put(&viewer::html_tail(info))
        }
        ExportFormat::Jsonl => chunks(log, info, &mut |events, _| {
            events.iter().try_for_each(|e| put(&jsonl::line(e)))
        }),
        ExportFormat::Json => {
            put(&json::head(info))?;
            let mut first = true;
            chunks(log, info, &mut |events, _| {
                for e in events {
                    put(&json::event(e, first))?;
                    first = false;
                }
                Ok(())
            })?;
            put(json::TAIL)
        }
        ExportFormat::Markdown => {
            let last = log.head(id)?.ok_or_else(|| {
                LogError::from(planlog_core::UserError::UnknownSession(id.clone()))
            })?;
            let now = log.state_at(id, last.seq)?;
            let updated = log
                .read(id, last.seq, Some(last.seq))?
                .last()
                .map_or(info.updated, |e| e.at);
            put(&markdown::head(&now, info, updated))?;
            chunks(log, info, &mut |events, before| {
                put(&markdown::lines(before, events, &earlier))
            })?;
            put(markdown::TAIL)
        }
    }
}

/// What [`chunks`] calls with each chunk of events and the state before it.
type ChunkFn<'a> = dyn FnMut(&[Event], SessionState) -> Result<(), ExportError> + 'a;

/// Calls `f` with each chunk of the session's events and the state before it.
fn chunks(log: &dyn EventLog, info: &SessionInfo, f: &mut ChunkFn<'_>) -> Result<(), ExportError> {
    let mut state = SessionState::default();
    for events in log.scan(&info.id, Seq::FIRST) {
        let events = events?;
        f(&events, state.clone())?;
        for e in &events {
            state = apply(state, &e.body);
        }
    }
    Ok(())
}
