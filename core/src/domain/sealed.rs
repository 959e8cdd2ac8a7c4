//! [`SealedEvent`]: an event sealed in this process together with its canonical bytes, so
//! that a store takes those bytes as they are instead of encoding and hashing the event again.

use super::canonical::Hash;
use super::event::{Event, EventDraft, Placement, hash_member};

/// An event and its canonical bytes (what [`Event::encode`] gives), made together by
/// [`SealedEvent::seal`]. Its fields are private: nothing can change the event after its
/// bytes were written, so the two always agree, and a store may trust the bytes and the hash
/// without checking them again ([`EventLog::append_sealed`]).
///
/// [`EventLog::append_sealed`]: crate::EventLog::append_sealed
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealedEvent {
    event: Event,
    bytes: Vec<u8>,
}

impl SealedEvent {
    /// Seals `draft` at `placement`: its canonical bytes encoded once, hashed less their
    /// `hash` member, and the hash written into both the event and the bytes (its 64 hex
    /// digits take the placeholder's place: same length, same position).
    pub fn seal(placement: Placement, draft: EventDraft) -> Self {
        // Placed in the current format, encoded as RFC 8785, whose `hash` member
        // `hash_member` finds.
        let mut event = Event::placed(placement, draft);
        let mut bytes = event.encode();
        let Some((start, end)) = hash_member(&bytes) else {
            // Not reached with canonical bytes; hashed the long way rather than trusted.
            event.hash = event.compute_hash();
            let bytes = event.encode();
            return Self { event, bytes };
        };
        let hash = Hash::of_parts(&[&bytes[..start], &bytes[end..]]);
        bytes[end - 65..end - 1].copy_from_slice(&hash.hex());
        event.hash = hash;
        debug_assert_eq!(
            bytes,
            event.encode(),
            "sealed bytes are the event's encoding"
        );
        Self { event, bytes }
    }

    /// The event.
    pub fn event(&self) -> &Event {
        &self.event
    }

    /// Its canonical bytes, hash included.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The event, its bytes let go.
    pub fn into_event(self) -> Event {
        self.event
    }

    /// The event and its bytes.
    pub fn into_parts(self) -> (Event, Vec<u8>) {
        (self.event, self.bytes)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code

    use super::*;
    use crate::domain::event::Origin;
    use crate::testkit::{item, sid, started, written};
    use crate::{CallId, PlanStatus, Timestamp};

    fn placement(after: Option<&Event>) -> Placement {
        Placement::after(
            after,
            sid("01JGAAAAAAAAAAAAAAAAAAAAAA"),
            ulid::Ulid::from_parts(1_700_000_000_000, 9),
            Timestamp::from_millis(1_700_000_000_000),
        )
    }

    /// The bytes are the event's own encoding, and the hash the one its content gives,
    /// for events with text that JSON escapes and keys that sort around `hash`.
    #[test]
    fn the_bytes_and_the_hash_are_those_of_the_event() {
        let first = SealedEvent::seal(placement(None), EventDraft::new(started(Origin::New)));
        assert_eq!(first.bytes(), first.event().encode());
        assert!(first.event().hash_is_valid());
        let body = written(vec![
            item(
                "a",
                "Quote \" and backslash \\ and \"hash\":\"x\"",
                PlanStatus::Pending,
            ),
            item("b", "Ünïcödé ✓ \u{1F600} \n tab\t", PlanStatus::InProgress),
        ]);
        let mut draft = EventDraft::new(body);
        draft.turn = Some(3);
        draft.call_id = Some(CallId::new("call-hash").unwrap());
        let second = SealedEvent::seal(placement(Some(first.event())), draft);
        assert_eq!(second.bytes(), second.event().encode());
        assert!(second.event().hash_is_valid());
        assert_eq!(second.event().prev, Some(first.event().hash));
        // What a store reads back is the same event.
        assert_eq!(&Event::decode(second.bytes()).unwrap(), second.event());
    }
}
