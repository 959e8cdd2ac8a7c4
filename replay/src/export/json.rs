//! json: one document holding the catalogue entry and every event.

use planlog_core::{SessionInfo, events::Event};
use serde::Serialize;

#[derive(Serialize)]
struct Document<'a> {
    session: &'a SessionInfo,
    events: &'a [Event],
}

pub(super) fn render(info: &SessionInfo, events: &[Event]) -> String {
    match serde_json::to_string_pretty(&Document {
        session: info,
        events,
    }) {
        Ok(text) => text + "\n",
        // Invariant: catalogue entries and events are plain data with string keys.
        Err(e) => panic!("invariant broken: a session export is not plain JSON data ({e})"),
    }
}
