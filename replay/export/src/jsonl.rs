//! jsonl: one canonical event per line, exactly the bytes the store holds.

use planlog_core::events::Event;

pub(super) fn render(events: &[Event]) -> String {
    events.iter().map(line).collect()
}

/// One event's line: its canonical JSON and a newline.
pub(super) fn line(event: &Event) -> String {
    // Canonical JSON is UTF-8 text by construction (serde_json writes only UTF-8).
    let mut out = String::from_utf8_lossy(&event.encode()).into_owned();
    out.push('\n');
    out
}
