//! `planlog export`: a session as JSON, jsonl (one canonical event per line, importable with
//! `planlog import planlog`) or a markdown report.

use planlog_core::{Event, SessionInfo, fold, render_markdown};

use crate::audit::history;

/// Export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One JSON document: the catalogue entry and every event.
    Json,
    /// One canonical event per line (round-trips through `planlog import planlog`).
    Jsonl,
    /// A human-readable report: the plan file and the history.
    Markdown,
}

/// Renders `events` of the session `info` in `format`.
pub fn export(info: &SessionInfo, events: &[Event], format: Format) -> String {
    match format {
        Format::Jsonl => {
            let mut out = String::new();
            for e in events {
                out.push_str(&String::from_utf8_lossy(&e.encode()));
                out.push('\n');
            }
            out
        }
        Format::Json => {
            let doc = serde_json::json!({ "session": info, "events": events });
            // Invariant: catalogue entries and events are plain data with string keys.
            serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
        }
        Format::Markdown => {
            let state = fold(events);
            let updated = events.last().map_or(info.updated, |e| e.at);
            let mut out = render_markdown(&state.plan, &info.id, updated);
            out.push_str("\n## History\n\n```text\n");
            for entry in history(events) {
                out.push_str(&entry.line());
                out.push('\n');
            }
            out.push_str("```\n");
            out
        }
    }
}
