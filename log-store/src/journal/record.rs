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
        if let Some(session) =
            session_near_the_end(bytes).and_then(|s| SessionId::new(s.to_owned()).ok())
        {
            return Ok(session);
        }
        session_read_whole(bytes)
    }

    /// The session the record is about.
    pub fn session(&self) -> &SessionId {
        match self {
            Record::Event(e) => &e.session,
            Record::Delete { session, .. } => session,
        }
    }
}

/// The `session` member of an event's canonical bytes, found without reading the rest:
/// canonical members are sorted, and `session` sorts second to last among an event's, so
/// its key is the last `"session":"` in the bytes (those bytes never occur inside a JSON
/// string, where every quote is escaped). `None` (the caller then reads the bytes whole)
/// when the last such key is not a member of the top-level object (a member of a nested
/// one, in bytes laid out otherwise), or its value holds an escape.
///
/// Under the journal's lock a writer reads the session of every record other processes
/// appended (`journaled::entry_of`): read whole, an event costs ~3 µs there, most of a
/// record's share of the lock (BENCHMARKS.md § "What a writer holds the lock for").
fn session_near_the_end(bytes: &[u8]) -> Option<&str> {
    const KEY: &[u8] = b"\"session\":\"";
    let at = bytes.windows(KEY.len()).rposition(|w| w == KEY)?;
    // A key comes after the object's `{` or a member's `,` (canonical bytes have no spaces).
    if !matches!(bytes.get(at.checked_sub(1)?), Some(b',' | b'{')) || bytes.first() != Some(&b'{') {
        return None;
    }
    let start = at + KEY.len();
    let len = bytes[start..]
        .iter()
        .position(|&b| b == b'"' || b == b'\\')?;
    let after = start + len;
    if bytes[after] != b'"' || !closes_at_the_end(&bytes[after + 1..]) {
        return None;
    }
    std::str::from_utf8(&bytes[start..after]).ok()
}

/// The `session` member of an event's bytes, read as JSON (the rest passed over).
fn session_read_whole(bytes: &[u8]) -> Result<SessionId, String> {
    #[derive(serde::Deserialize)]
    struct Head {
        session: String,
    }
    let head: Head =
        serde_json::from_slice(bytes).map_err(|e| format!("not an event planlog can read: {e}"))?;
    SessionId::new(head.session).map_err(|e| format!("an event of no valid session: {e}"))
}

/// Whether `rest`, what follows a member of the top-level object, closes that object with
/// its last byte and not before: so the member was the top-level object's own (the
/// member of an object nested `d` deep meets `d` closing brackets after it, the first of
/// them before the last byte).
fn closes_at_the_end(rest: &[u8]) -> bool {
    let (mut depth, mut in_string, mut escaped) = (1usize, false, false);
    for (i, &b) in rest.iter().enumerate() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1 == rest.len();
                }
            }
            _ => {}
        }
    }
    false
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

    /// The session found near the end of the bytes is the session JSON reads, or none is
    /// found and JSON is read: for events planlog writes, and for bytes laid out otherwise
    /// (`session` nested after the top-level one, inside strings, in keys with escaped
    /// quotes, with escapes in its value, or missing).
    #[test]
    fn the_session_near_the_end_is_the_one_json_reads_or_none() {
        use planlog_core::events::Origin;
        use planlog_core::testkit::{eight_items, seal_after, started, written};
        let s = SessionId::new("01JSESSIONAAAAAAAAAAAAAAAA".to_owned()).unwrap();
        let first = seal_after(None, &s, None, started(Origin::New));
        let second = seal_after(Some(&first), &s, Some("call-1"), written(eight_items(3)));
        for e in [&first, &second] {
            let bytes = e.encode();
            assert_eq!(
                session_near_the_end(&bytes),
                Some(s.as_str()),
                "found, not read"
            );
            assert_eq!(Record::session_of(&bytes).unwrap(), s);
        }
        let cases: [(&str, Option<&str>); 10] = [
            (r#"{"a":{"session":"x"},"session":"y","turn":1}"#, Some("y")),
            (r#"{"session":"y","z":{"session":"x"}}"#, None),
            (r#"{"session":"y","z":[{"session":"x"}],"zz":1}"#, None),
            (r#"{"a":"\"session\":\"x\"","session":"y"}"#, Some("y")),
            (r#"{"session":"y","z":"\"session\":\"x\""}"#, Some("y")),
            (r#"{"session":"y","z":{"b\"session":"x"}}"#, None),
            (r#"{"session":"a\u0062c"}"#, None),
            (r#"{"session":"y"}x"#, None),
            (r#"{"session":"y","t":"}"}"#, Some("y")),
            (r#"{"nosession":"y"}"#, None),
        ];
        for (json, near_the_end) in cases {
            let bytes = json.as_bytes();
            assert_eq!(session_near_the_end(bytes), near_the_end, "{json}");
            // Whichever way it is found, the answer is JSON's.
            assert_eq!(
                Record::session_of(bytes).ok(),
                session_read_whole(bytes).ok(),
                "{json}"
            );
        }
        assert_eq!(
            Record::session_of(br#"{"session":"a\u0062c"}"#)
                .unwrap()
                .as_str(),
            "abc"
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
