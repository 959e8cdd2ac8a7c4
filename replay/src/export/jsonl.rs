//! jsonl: one canonical event per line, exactly the bytes the store holds.

use planlog_core::events::Event;

pub(super) fn render(events: &[Event]) -> String {
    let mut out = String::new();
    for e in events {
        // Canonical JSON is UTF-8 text by construction (serde_json writes only UTF-8).
        out.push_str(&String::from_utf8_lossy(&e.encode()));
        out.push('\n');
    }
    out
}
