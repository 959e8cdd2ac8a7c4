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
/// fails (nothing more is written). `done` hears how many more events were written, a chunk
/// at a time (a progress bar).
pub fn export_to(
    log: &dyn EventLog,
    info: &SessionInfo,
    format: ExportFormat,
    emit: &mut dyn FnMut(&str) -> std::io::Result<()>,
    done: &mut dyn FnMut(u64),
) -> Result<(), ExportError> {
    let mut put = |text: &str| emit(text).map_err(ExportError::Output);
    let id = &info.id;
    let earlier = planlog_audit::plans_in(log, id);
    match format {
        ExportFormat::Html => {
            put(&viewer::html_head(info))?;
            let mut first = true;
            chunks(log, info, done, &mut |events, before| {
                for v in viewer::event_values(before, events, &earlier) {
                    put(&viewer::html_event(&v, first))?;
                    first = false;
                }
                Ok(())
            })?;
            put(&viewer::html_tail(info))
        }
        ExportFormat::Jsonl => chunks(log, info, done, &mut |events, _| {
            events.iter().try_for_each(|e| put(&jsonl::line(e)))
        }),
        ExportFormat::Json => {
            put(&json::head(info))?;
            let mut first = true;
            chunks(log, info, done, &mut |events, _| {
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
            chunks(log, info, done, &mut |events, before| {
                put(&markdown::lines(before, events, &earlier))
            })?;
            put(markdown::TAIL)
        }
    }
}

/// The most events a one-file HTML page holds: a longer session is exported a window at a
/// time ([`export_html_window`]). At about 6 KB per event (each with its plan, the call as
/// sent and its result) that is a page of some 30 MB that a browser opens in a few seconds.
pub const HTML_MAX_EVENTS: u64 = 5_000;

/// Writes the viewer's one-file page of the session's seqs `from..=to` through `emit` (at most
/// [`HTML_MAX_EVENTS`] of them; `to` is cut to that and to the session's end), a chunk at a
/// time: the page steps through those seqs, starting from the plan before `from`, and says
/// which part of the session it holds. Returns the last seq written.
///
/// # Errors
/// As [`export_to`]; a `from` past the session's end is [`planlog_core::UserError::SeqOutOfRange`].
pub fn export_html_window(
    log: &dyn EventLog,
    info: &SessionInfo,
    from: Seq,
    to: Seq,
    emit: &mut dyn FnMut(&str) -> std::io::Result<()>,
    done: &mut dyn FnMut(u64),
) -> Result<Seq, ExportError> {
    let mut put = |text: &str| emit(text).map_err(ExportError::Output);
    let id = &info.id;
    if from.get() > info.events {
        return Err(LogError::from(planlog_core::UserError::SeqOutOfRange {
            session: id.clone(),
            seq: from.get(),
            last: info.events,
        })
        .into());
    }
    let last = to
        .get()
        .min(info.events)
        .min(from.get() + HTML_MAX_EVENTS - 1)
        .max(from.get());
    let to = Seq::new(last).map_err(LogError::from)?;
    let before = match Seq::new(from.get() - 1) {
        Ok(at) => log.state_at(id, at)?,
        Err(_) => SessionState::default(),
    };
    let plan_before = before.plan.clone();
    let earlier = planlog_audit::plans_in(log, id);
    put(&viewer::html_head(info))?;
    let mut first = true;
    chunks_in(log, info, from, to, before, done, &mut |events, state| {
        for v in viewer::event_values(state, events, &earlier) {
            put(&viewer::html_event(&v, first))?;
            first = false;
        }
        Ok(())
    })?;
    put(&viewer::html_window_tail(info, &plan_before, from, to))?;
    Ok(to)
}

/// What [`chunks`] calls with each chunk of events and the state before it.
type ChunkFn<'a> = dyn FnMut(&[Event], SessionState) -> Result<(), ExportError> + 'a;

/// Calls `f` with each chunk of the session's events and the state before it, then `done`
/// with its length.
fn chunks(
    log: &dyn EventLog,
    info: &SessionInfo,
    done: &mut dyn FnMut(u64),
    f: &mut ChunkFn<'_>,
) -> Result<(), ExportError> {
    let last = Seq::new(info.events).unwrap_or(Seq::FIRST);
    chunks_in(
        log,
        info,
        Seq::FIRST,
        last,
        SessionState::default(),
        done,
        f,
    )
}

/// [`chunks`] over the seqs `from..=to`, `state` being the state before `from`.
fn chunks_in(
    log: &dyn EventLog,
    info: &SessionInfo,
    from: Seq,
    to: Seq,
    mut state: SessionState,
    done: &mut dyn FnMut(u64),
    f: &mut ChunkFn<'_>,
) -> Result<(), ExportError> {
    // Read and decoded ahead on threads of their own while `f` writes the last chunk.
    let mut result = Ok(());
    planlog_audit::read_ahead(log, &info.id, from, &mut |events| {
        let step = (|| -> Result<bool, ExportError> {
            let mut events = events?;
            events.retain(|e| e.seq <= to);
            if events.is_empty() {
                return Ok(false);
            }
            f(&events, state.clone())?;
            done(events.len() as u64);
            for e in &events {
                state = apply(std::mem::take(&mut state), &e.body);
            }
            Ok(true)
        })();
        step.unwrap_or_else(|e| {
            result = Err(e);
            false
        })
    });
    result
}
