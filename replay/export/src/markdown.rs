//! markdown: the plan file's text, then the history. Written whole by [`render`], or piece by
//! piece ([`head`], [`lines`], [`TAIL`]) with the same bytes.

use planlog_core::{
    SessionInfo, SessionState, Timestamp, events::Event, fold, render::render_markdown,
};

use planlog_audit::{history_from, no_earlier};

pub(super) fn render(info: &SessionInfo, events: &[Event]) -> String {
    let state = fold(events);
    let updated = events.last().map_or(info.updated, |e| e.at);
    let mut out = head(&state, info, updated);
    out.push_str(&lines(SessionState::default(), events, &no_earlier));
    out.push_str(TAIL);
    out
}

/// The plan file's text as it stands after the last event, and the history's heading.
pub(super) fn head(now: &SessionState, info: &SessionInfo, updated: Timestamp) -> String {
    let mut out = render_markdown(&now.plan, &info.id, updated);
    out.push_str("\n## History\n\n```text\n");
    out
}

/// The history lines of `events`, given the state before the first (and the plans before
/// it, for checkpoints that belong with one).
pub(super) fn lines(
    before: SessionState,
    events: &[Event],
    earlier: &dyn Fn(planlog_core::Seq) -> Option<planlog_core::Plan>,
) -> String {
    let mut out = String::new();
    for entry in history_from(before, events, earlier) {
        out.push_str(&entry.line());
        out.push('\n');
    }
    out
}

/// After the history.
pub(super) const TAIL: &str = "```\n";
