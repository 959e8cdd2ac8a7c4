//! Decoding an event's bytes without serde's buffering: the derived `Deserialize` of
//! [`Event`] has to read the whole object into serde's intermediate `Content` first (its body
//! is flattened, and `data` comes before `kind`), which was half of every read. Canonical
//! bytes (all a store holds) sort their keys, so `kind` is found from the end and `data` read
//! straight into its type in the one pass over the object. Anything this does not take
//! (another key order, a kind it does not know) goes to the derived path, so the two agree by
//! construction on every event this path accepts (tested here and in `tests/events.rs`).

use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};

use super::event::{Event, EventBody};

/// The event in `bytes`, or `None` when this path does not take them.
pub(crate) fn fast(bytes: &[u8]) -> Option<Event> {
    one_pass(bytes)
}

/// Canonical bytes sort their keys, so `kind` follows `data`: it is found from the end (the
/// members after `data` are plain strings and numbers, whose quotes are escaped), and the body
/// is then read in the one pass over the object, straight into its kind's type. A guess that
/// is wrong (bytes in another order, whose last `"kind":"` is inside the body) reads another
/// kind than the guess and gives `None`.
fn one_pass(bytes: &[u8]) -> Option<Event> {
    const KEY: &[u8] = b"\"kind\":\"";
    let at = bytes.windows(KEY.len()).rposition(|w| w == KEY)? + KEY.len();
    let len = bytes.get(at..)?.iter().position(|&b| b == b'"')?;
    let guess = std::str::from_utf8(bytes.get(at..at + len)?).ok()?;
    // Checked as UTF-8 once, here: reading from a `&str`, serde_json checks no string again.
    let text = std::str::from_utf8(bytes).ok()?;
    let mut de = serde_json::Deserializer::from_str(text);
    let event = EventSeed { kind: guess }.deserialize(&mut de).ok()??;
    de.end().ok()?;
    Some(event)
}

/// Reads an event object whose kind is `kind`; `Ok(None)` when it turns out otherwise.
struct EventSeed<'k> {
    kind: &'k str,
}

/// The members of a stored event.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum Member {
    Format,
    Session,
    Seq,
    Id,
    At,
    Turn,
    CallId,
    Prev,
    Hash,
    Kind,
    Data,
    #[serde(other)]
    Other,
}

impl<'de> DeserializeSeed<'de> for EventSeed<'_> {
    type Value = Option<Event>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for EventSeed<'_> {
    type Value = Option<Event>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a stored event")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut format, mut session, mut seq, mut id, mut at) = (None, None, None, None, None);
        let (mut turn, mut call_id, mut prev, mut hash, mut kind, mut body) =
            (None, None, None, None, None, None);
        while let Some(member) = map.next_key::<Member>()? {
            match member {
                Member::Format => once(&mut format, map.next_value()?, "format")?,
                Member::Session => once(&mut session, map.next_value()?, "session")?,
                Member::Seq => once(&mut seq, map.next_value()?, "seq")?,
                Member::Id => once(&mut id, map.next_value()?, "id")?,
                Member::At => once(&mut at, map.next_value()?, "at")?,
                Member::Turn => once(&mut turn, map.next_value()?, "turn")?,
                Member::CallId => once(&mut call_id, map.next_value()?, "call_id")?,
                Member::Prev => once(&mut prev, map.next_value()?, "prev")?,
                Member::Hash => once(&mut hash, map.next_value()?, "hash")?,
                Member::Kind => once(&mut kind, map.next_value::<&str>()?, "kind")?,
                Member::Data => {
                    let read = map.next_value_seed(BodySeed { kind: self.kind })?;
                    once(&mut body, read, "data")?;
                }
                // As the derived path does: members it does not know are passed over.
                Member::Other => {
                    map.next_value::<de::IgnoredAny>()?;
                }
            }
        }
        if kind != Some(self.kind) {
            return Ok(None);
        }
        let (Some(format), Some(session), Some(seq), Some(id), Some(at), Some(hash), Some(body)) =
            (format, session, seq, id, at, hash, body.flatten())
        else {
            return Ok(None);
        };
        Ok(Some(Event {
            format,
            session,
            seq,
            id,
            at,
            turn: turn.flatten(),
            call_id: call_id.flatten(),
            prev: prev.flatten(),
            hash,
            body,
        }))
    }
}

/// Fills `slot`, or fails when the member came twice (as the derived path does).
fn once<T, E: de::Error>(slot: &mut Option<T>, value: T, name: &'static str) -> Result<(), E> {
    match slot.replace(value) {
        Some(_) => Err(E::duplicate_field(name)),
        None => Ok(()),
    }
}

/// Reads `data` as the body of the guessed kind (`None` for a kind this path does not know).
struct BodySeed<'k> {
    kind: &'k str,
}

impl<'de> DeserializeSeed<'de> for BodySeed<'_> {
    type Value = Option<EventBody>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        Ok(Some(match self.kind {
            "session_started" => EventBody::SessionStarted(Deserialize::deserialize(d)?),
            "plan_written" => EventBody::PlanWritten(Deserialize::deserialize(d)?),
            "write_rejected" => EventBody::WriteRejected(Deserialize::deserialize(d)?),
            "mode_selected" => EventBody::ModeSelected(Deserialize::deserialize(d)?),
            "checkpoint_seen" => EventBody::CheckpointSeen(Deserialize::deserialize(d)?),
            "session_described" => EventBody::SessionDescribed(Deserialize::deserialize(d)?),
            "context_compacted" => EventBody::ContextCompacted(Deserialize::deserialize(d)?),
            "plan_restored" => EventBody::PlanRestored(Deserialize::deserialize(d)?),
            _ => return Ok(None),
        }))
    }
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
            let canonical = derived.encode();
            let fast = fast(&canonical).unwrap_or_else(|| panic!("not taken: {line}"));
            assert_eq!(fast, derived, "{line}");
            kinds.insert(derived.body.kind());
        }
        assert_eq!(kinds.len(), 8, "every kind is in the fixtures: {kinds:?}");
        // Bytes in another order, whose last `"kind":"` is an item's metadata: the guess is
        // wrong, so this path gives up, and `Event::decode` takes the derived one.
        let odd = r#"{"kind":"plan_written","data":{"plan":[{"content":"a","id":"1","metadata":{"kind":"mode_selected"},"status":"pending"}],"submitted":[]},"at":"2026-01-01T00:00:00.000Z","format":4,"hash":"0000000000000000000000000000000000000000000000000000000000000000","id":"01M6AWY6909WTX8WBFN7BE4F44","prev":null,"seq":1,"session":"s"}"#;
        assert!(fast(odd.as_bytes()).is_none());
        assert_eq!(
            serde_json::from_str::<Event>(odd).unwrap().body.kind(),
            "plan_written"
        );
        // A member twice is refused, as the derived path refuses it.
        let twice = odd.replace(r#""seq":1,"#, r#""seq":1,"seq":2,"#);
        assert!(fast(twice.as_bytes()).is_none());
        assert!(serde_json::from_str::<Event>(&twice).is_err());
        assert!(fast(b"{\"kind\":\"something_new\"}").is_none());
    }
}
