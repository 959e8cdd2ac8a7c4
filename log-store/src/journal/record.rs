//! What a journal record means to the store: an event, as its canonical bytes (exactly what
//! its hash covers, so a journal checks without anything else), or a tombstone (a session
//! deleted, its id retired).
//!
//! A tombstone starts with a zero byte, which no event's canonical JSON does:
//! `\0tombstone {"session":"…","first":"<hash of its first event>"|null}`.

use planlog_core::SessionId;
use planlog_core::events::{Event, Hash};

/// What a record says.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    /// An event appended.
    Event(Box<Event>),
    /// A session deleted: its events are gone from here on, its id retired, except for the
    /// same session restored whole (its first event's hash is `first`).
    Delete {
        /// The session.
        session: SessionId,
        /// Its first event's hash, when known.
        first: Option<Hash>,
    },
}

const TOMBSTONE: &[u8] = b"\0tombstone ";

/// The record of `session`'s deletion.
pub fn tombstone(session: &SessionId, first: Option<Hash>) -> Vec<u8> {
    let body = serde_json::json!({ "session": session.as_str(), "first": first });
    let mut out = TOMBSTONE.to_vec();
    out.extend_from_slice(body.to_string().as_bytes());
    out
}

impl Record {
    /// Reads a record: an event (its hash checked) or a tombstone.
    ///
    /// # Errors
    /// What is wrong with it, in words.
    pub fn decode(bytes: &[u8]) -> Result<Record, String> {
        if let Some(body) = bytes.strip_prefix(TOMBSTONE) {
            #[derive(serde::Deserialize)]
            struct Tomb {
                session: String,
                first: Option<Hash>,
            }
            let t: Tomb = serde_json::from_slice(body)
                .map_err(|e| format!("a tombstone planlog cannot read: {e}"))?;
            let session = SessionId::new(t.session)
                .map_err(|e| format!("a tombstone for no valid session: {e}"))?;
            return Ok(Record::Delete {
                session,
                first: t.first,
            });
        }
        Event::decode(bytes)
            .map(|e| Record::Event(Box::new(e)))
            .map_err(|e| format!("not an event planlog can read: {e}"))
    }

    /// Whether the bytes are a tombstone's (read no further).
    pub fn is_tombstone(bytes: &[u8]) -> bool {
        bytes.starts_with(TOMBSTONE)
    }

    /// The session a record is about, read without the rest of it (no hash checked, the
    /// event's body passed over): what a writer needs of another writer's records whose
    /// sessions it is not writing.
    ///
    /// # Errors
    /// What is wrong with it, in words.
    pub fn session_of(bytes: &[u8]) -> Result<SessionId, String> {
        if bytes.starts_with(TOMBSTONE) {
            return Record::decode(bytes).map(|r| r.session().clone());
        }
        #[derive(serde::Deserialize)]
        struct Head {
            session: String,
        }
        let head: Head = serde_json::from_slice(bytes)
            .map_err(|e| format!("not an event planlog can read: {e}"))?;
        SessionId::new(head.session).map_err(|e| format!("an event of no valid session: {e}"))
    }

    /// The session the record is about.
    pub fn session(&self) -> &SessionId {
        match self {
            Record::Event(e) => &e.session,
            Record::Delete { session, .. } => session,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_tombstone_reads_back_and_is_never_an_event() {
        let s = SessionId::new("01JTOMB".to_owned()).unwrap();
        let h = Hash::of(b"first");
        for first in [Some(h), None] {
            let bytes = tombstone(&s, first);
            assert_eq!(bytes[0], 0);
            assert_eq!(
                Record::decode(&bytes).unwrap(),
                Record::Delete {
                    session: s.clone(),
                    first
                }
            );
        }
        let mut bad = tombstone(&s, None);
        bad.truncate(bad.len() - 2);
        assert!(Record::decode(&bad).unwrap_err().contains("tombstone"));
        assert!(Record::decode(b"{}").unwrap_err().contains("not an event"));
        assert_eq!(Record::session_of(&tombstone(&s, Some(h))).unwrap(), s);
        assert!(
            Record::session_of(b"{}")
                .unwrap_err()
                .contains("not an event")
        );
    }

    /// The session read alone is the session of the record read whole.
    #[test]
    fn the_session_read_alone_is_the_records() {
        use planlog_core::events::Origin;
        use planlog_core::testkit::{seal_after, started};
        let s = SessionId::new("01JSESSIONAAAAAAAAAAAAAAAA".to_owned()).unwrap();
        let e = seal_after(None, &s, Some("call-1"), started(Origin::New));
        let bytes = e.encode();
        assert_eq!(Record::session_of(&bytes).unwrap(), s);
        assert_eq!(Record::decode(&bytes).unwrap().session(), &s);
    }
}
