//! Decoding an event's bytes without serde's buffering: the derived `Deserialize` of
//! [`Event`] has to read the whole object into serde's intermediate `Content` first (its body
//! is flattened, and `data` comes before `kind`), which was half of every read. Here the body
//! is kept as raw JSON until `kind` is known, then read straight into its type. Anything this
//! does not take (another shape, a kind it does not know) goes to the derived path, so the
//! two agree by construction on every event this path accepts (tested in `tests/events.rs`).

use serde::Deserialize;
use serde_json::value::RawValue;

use super::canonical::Hash;
use super::event::{Event, EventBody};
use super::ids::{CallId, EventId, Seq, SessionId};
use super::time::Timestamp;

/// An event as stored, its body not read yet.
#[derive(Deserialize)]
struct Stored<'a> {
    format: u32,
    session: SessionId,
    seq: Seq,
    id: EventId,
    at: Timestamp,
    #[serde(default)]
    turn: Option<u64>,
    #[serde(default)]
    call_id: Option<CallId>,
    prev: Option<Hash>,
    hash: Hash,
    kind: &'a str,
    #[serde(borrow)]
    data: &'a RawValue,
}

/// The event in `bytes`, or `None` when this path does not take them.
pub(crate) fn fast(bytes: &[u8]) -> Option<Event> {
    let s: Stored<'_> = serde_json::from_slice(bytes).ok()?;
    let data = s.data.get();
    let body = match s.kind {
        "session_started" => EventBody::SessionStarted(serde_json::from_str(data).ok()?),
        "plan_written" => EventBody::PlanWritten(serde_json::from_str(data).ok()?),
        "write_rejected" => EventBody::WriteRejected(serde_json::from_str(data).ok()?),
        "mode_selected" => EventBody::ModeSelected(serde_json::from_str(data).ok()?),
        "checkpoint_seen" => EventBody::CheckpointSeen(serde_json::from_str(data).ok()?),
        "session_described" => EventBody::SessionDescribed(serde_json::from_str(data).ok()?),
        "context_compacted" => EventBody::ContextCompacted(serde_json::from_str(data).ok()?),
        "plan_restored" => EventBody::PlanRestored(serde_json::from_str(data).ok()?),
        _ => return None,
    };
    Some(Event {
        format: s.format,
        session: s.session,
        seq: s.seq,
        id: s.id,
        at: s.at,
        turn: s.turn,
        call_id: s.call_id,
        prev: s.prev,
        hash: s.hash,
        body,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code
    use super::*;

    /// Every event of the format fixtures (each format, every kind): this path takes it and
    /// reads exactly what the derived path reads.
    #[test]
    fn the_fast_path_reads_what_the_derived_one_does() {
        let files = [
            include_str!("../../../fixtures/events/format-1.jsonl"),
            include_str!("../../../fixtures/events/format-2.jsonl"),
            include_str!("../../../fixtures/events/format-3.jsonl"),
            include_str!("../../../fixtures/events/format-4.jsonl"),
        ];
        let mut kinds = std::collections::BTreeSet::new();
        for line in files
            .iter()
            .flat_map(|f| f.lines())
            .filter(|l| !l.trim().is_empty())
        {
            let derived: Event = serde_json::from_str(line).unwrap();
            let fast = fast(line.as_bytes()).unwrap_or_else(|| panic!("not taken: {line}"));
            assert_eq!(fast, derived, "{line}");
            kinds.insert(derived.body.kind());
        }
        assert_eq!(kinds.len(), 8, "every kind is in the fixtures: {kinds:?}");
        assert!(fast(b"{\"kind\":\"something_new\"}").is_none());
    }
}
