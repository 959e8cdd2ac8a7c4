//! json: one document holding the catalogue entry and every event (pretty-printed, two-space
//! indentation). Written whole by [`render`], or piece by piece ([`head`], [`event`], [`TAIL`])
//! with the same bytes.

use planlog_core::{SessionInfo, events::Event};
use serde::Serialize;

/// `value` pretty-printed, every line after the first indented by `indent`.
fn pretty_at(value: &impl Serialize, indent: &str) -> String {
    match serde_json::to_string_pretty(value) {
        // Pretty JSON escapes newlines inside strings: its line breaks are all structure.
        Ok(text) => text.replace('\n', &format!("\n{indent}")),
        // Invariant: catalogue entries and events are plain data with string keys.
        Err(e) => panic!("invariant broken: a session export is not plain JSON data ({e})"),
    }
}

pub(super) fn render(info: &SessionInfo, events: &[Event]) -> String {
    let mut out = head(info);
    for (i, e) in events.iter().enumerate() {
        out.push_str(&event(e, i == 0));
    }
    out.push_str(TAIL);
    out
}

/// Up to the events array's opening bracket.
pub(super) fn head(info: &SessionInfo) -> String {
    format!(
        "{{\n  \"session\": {},\n  \"events\": [",
        pretty_at(info, "  ")
    )
}

/// One element of the events array (`first`: no comma before it).
pub(super) fn event(e: &Event, first: bool) -> String {
    format!(
        "{}\n    {}",
        if first { "" } else { "," },
        pretty_at(e, "    ")
    )
}

/// After the last event.
pub(super) const TAIL: &str = "\n  ]\n}\n";

#[cfg(test)]
mod tests {
    use super::*;
    use planlog_core::testkit::{item, seal_after, sid, started, written};
    use planlog_core::{PlanStatus, events::Origin};

    #[derive(Serialize)]
    struct Document<'a> {
        session: &'a SessionInfo,
        events: &'a [Event],
    }

    #[test]
    fn pieces_make_the_same_document_serde_json_makes() {
        let s = sid("doc");
        let first = seal_after(None, &s, None, started(Origin::New));
        let second = seal_after(
            Some(&first),
            &s,
            Some("c1"),
            written(vec![item("1", "a \"quoted\"\nline", PlanStatus::Pending)]),
        );
        let events = vec![first.clone(), second];
        let info = planlog_core::SessionInfo::from_first(&first).unwrap();
        let whole = serde_json::to_string_pretty(&Document {
            session: &info,
            events: &events,
        })
        .unwrap()
            + "\n";
        assert_eq!(render(&info, &events), whole);
    }
}
