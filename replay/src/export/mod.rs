//! `planlog export`: a session as one JSON document, jsonl (one canonical event per line,
//! importable with `import planlog`), a markdown report, or the time-travel viewer as one
//! self-contained HTML file. One file (or folder, for the viewer) per format.

mod json;
mod jsonl;
mod markdown;
pub mod viewer;

use planlog_core::{SessionInfo, events::Event};

/// Export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
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
pub fn export(info: &SessionInfo, events: &[Event], format: Format) -> String {
    match format {
        Format::Jsonl => jsonl::render(events),
        Format::Json => json::render(info, events),
        Format::Markdown => markdown::render(info, events),
        Format::Html => viewer::html(info, events),
    }
}
