//! Validated identifiers: sessions, items, sequence numbers, tool calls and events.
//!
//! Every id validates on construction, so a value of one of these types is always
//! safe to use as a map key, a file name component (sessions) or a log key.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::limits::{MAX_CALL_ID_LEN, MAX_ITEM_ID_LEN, MAX_SESSION_ID_LEN};

/// Why an id was refused. The message names the rule, so the caller can say what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    /// The id was empty or only whitespace.
    #[error("the {kind} is empty; give a non-empty id")]
    Empty {
        /// Which kind of id.
        kind: &'static str,
    },
    /// The id was longer than its limit.
    #[error("the {kind} is {len} characters long; the limit is {max}")]
    TooLong {
        /// Which kind of id.
        kind: &'static str,
        /// Its length in characters.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The id holds a character that is not allowed.
    #[error("the {kind} contains {found:?}; {allowed}")]
    BadChar {
        /// Which kind of id.
        kind: &'static str,
        /// The first offending character.
        found: char,
        /// What is allowed instead.
        allowed: &'static str,
    },
    /// A sequence number was zero.
    #[error("sequence numbers start at 1; 0 is not a valid seq")]
    ZeroSeq,
}

/// The id of one session's log.
///
/// 1 to 64 characters of `A-Z a-z 0-9 _ -`. No dot, slash or control character can
/// appear, so a session id used as a file name can never leave its folder.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(try_from = "String")]
pub struct SessionId(String);

impl SessionId {
    /// Validates `s` as a session id.
    ///
    /// # Errors
    /// [`IdError`] when `s` is empty, longer than [`MAX_SESSION_ID_LEN`] or holds a character
    /// other than ASCII letters, digits, `_` and `-`.
    pub fn new(s: impl Into<String>) -> Result<Self, IdError> {
        let s = s.into();
        const KIND: &str = "session id";
        if s.is_empty() {
            return Err(IdError::Empty { kind: KIND });
        }
        if let Some(len) = super::text::chars_beyond(&s, MAX_SESSION_ID_LEN) {
            return Err(IdError::TooLong {
                kind: KIND,
                len,
                max: MAX_SESSION_ID_LEN,
            });
        }
        if let Some(found) = s
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
        {
            return Err(IdError::BadChar {
                kind: KIND,
                found,
                allowed: "use only ASCII letters, digits, '_' and '-'",
            });
        }
        Ok(Self(s))
    }

    /// A fresh session id from a ULID the caller generated (core has no randomness).
    pub fn from_ulid(id: ulid::Ulid) -> Self {
        // Invariant: a ULID renders as 26 Crockford base-32 characters, all alphanumeric.
        Self(id.to_string())
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for SessionId {
    type Error = IdError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        Self::new(s)
    }
}

/// Written as its text, borrowed (serde's `into` would copy it for every write).
impl Serialize for SessionId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl From<SessionId> for String {
    fn from(id: SessionId) -> Self {
        id.0
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&self.0)
    }
}

/// The id of one plan item, chosen by the model.
///
/// Non-empty, not only whitespace, at most [`MAX_ITEM_ID_LEN`] characters, no control
/// characters (ids are printed in history lines, so they must not be able to break a line).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(try_from = "String")]
pub struct ItemId(String);

impl ItemId {
    /// The id written as the decimal digits of `n` (task ids).
    pub(crate) fn from_number(n: u64) -> Self {
        // Invariant: decimal digits are non-empty, short and printable: a valid item id.
        Self(n.to_string())
    }

    /// Validates `s` as an item id.
    ///
    /// # Errors
    /// [`IdError`] when `s` is empty or whitespace, too long, or holds a control character.
    pub fn new(s: impl Into<String>) -> Result<Self, IdError> {
        let s = s.into();
        const KIND: &str = "item id";
        if s.trim().is_empty() {
            return Err(IdError::Empty { kind: KIND });
        }
        if let Some(len) = super::text::chars_beyond(&s, MAX_ITEM_ID_LEN) {
            return Err(IdError::TooLong {
                kind: KIND,
                len,
                max: MAX_ITEM_ID_LEN,
            });
        }
        if let Some(found) = super::text::first_unsafe_char(&s) {
            return Err(IdError::BadChar {
                kind: KIND,
                found,
                allowed: "ids may not hold control, line-breaking or bidi characters",
            });
        }
        Ok(Self(s))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for ItemId {
    type Error = IdError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        Self::new(s)
    }
}

/// Written as its text, borrowed (serde's `into` would copy it for every write).
impl Serialize for ItemId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl From<ItemId> for String {
    fn from(id: ItemId) -> Self {
        id.0
    }
}

impl fmt::Display for ItemId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&self.0)
    }
}

/// A position in one session's log: 1 for the first event, then dense (no gaps).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "u64", into = "u64")]
pub struct Seq(u64);

impl Seq {
    /// The first event of every session.
    pub const FIRST: Seq = Seq(1);

    /// Validates `n` as a seq.
    ///
    /// # Errors
    /// [`IdError::ZeroSeq`] for 0.
    pub fn new(n: u64) -> Result<Self, IdError> {
        if n == 0 {
            Err(IdError::ZeroSeq)
        } else {
            Ok(Self(n))
        }
    }

    /// The number.
    pub fn get(self) -> u64 {
        self.0
    }

    /// The seq after this one.
    pub fn next(self) -> Seq {
        Seq(self.0.saturating_add(1))
    }

    /// The seq before this one, if any.
    pub fn prev(self) -> Option<Seq> {
        if self.0 > 1 {
            Some(Seq(self.0 - 1))
        } else {
            None
        }
    }
}

impl TryFrom<u64> for Seq {
    type Error = IdError;
    fn try_from(n: u64) -> Result<Self, Self::Error> {
        Self::new(n)
    }
}

impl From<Seq> for u64 {
    fn from(s: Seq) -> Self {
        s.0
    }
}

impl fmt::Display for Seq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The id of one tool call as the host (or the MCP client) named it. Used for idempotency:
/// a call id appended twice to one session is recorded once.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(try_from = "String")]
pub struct CallId(String);

impl CallId {
    /// Validates `s` as a call id.
    ///
    /// # Errors
    /// [`IdError`] when empty, longer than [`MAX_CALL_ID_LEN`] or holding a control character.
    pub fn new(s: impl Into<String>) -> Result<Self, IdError> {
        let s = s.into();
        const KIND: &str = "call id";
        if s.trim().is_empty() {
            return Err(IdError::Empty { kind: KIND });
        }
        if let Some(len) = super::text::chars_beyond(&s, MAX_CALL_ID_LEN) {
            return Err(IdError::TooLong {
                kind: KIND,
                len,
                max: MAX_CALL_ID_LEN,
            });
        }
        if let Some(found) = super::text::first_unsafe_char(&s) {
            return Err(IdError::BadChar {
                kind: KIND,
                found,
                allowed: "call ids may not hold control, line-breaking or bidi characters",
            });
        }
        Ok(Self(s))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for CallId {
    type Error = IdError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        Self::new(s)
    }
}

/// Written as its text, borrowed (serde's `into` would copy it for every write).
impl Serialize for CallId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl From<CallId> for String {
    fn from(id: CallId) -> Self {
        id.0
    }
}

impl fmt::Display for CallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&self.0)
    }
}

/// The globally unique id of one event (a ULID the caller generated).
pub type EventId = ulid::Ulid;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_cannot_name_paths() {
        for bad in ["", "../x", "a/b", "a\0b", ".", "..", "a.b", &"x".repeat(65)] {
            assert!(SessionId::new(bad).is_err(), "{bad:?} must be refused");
        }
        assert_eq!(
            SessionId::new("01JDX_abc-9").map(|s| s.to_string()),
            Ok("01JDX_abc-9".into())
        );
    }

    #[test]
    fn ulid_session_ids_validate() {
        let id = SessionId::from_ulid(ulid::Ulid::from_parts(1, 2));
        assert!(SessionId::new(id.as_str()).is_ok());
    }

    #[test]
    fn item_ids_refuse_blank_long_and_control() {
        assert!(ItemId::new("  ").is_err());
        assert!(ItemId::new("a\nb").is_err());
        assert!(ItemId::new("\u{202e}x").is_err());
        assert!(ItemId::new("x".repeat(129)).is_err());
        assert!(ItemId::new("x".repeat(128)).is_ok());
    }

    #[test]
    fn seq_starts_at_one() {
        assert_eq!(Seq::new(0), Err(IdError::ZeroSeq));
        assert_eq!(Seq::FIRST.next().get(), 2);
        assert_eq!(Seq::FIRST.prev(), None);
        assert!(serde_json::from_str::<Seq>("0").is_err());
    }
}
