//! markdown: the plan file's text, then the history.

use planlog_core::{SessionInfo, events::Event, fold, render::render_markdown};

use crate::audit::history;

pub(super) fn render(info: &SessionInfo, events: &[Event]) -> String {
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
