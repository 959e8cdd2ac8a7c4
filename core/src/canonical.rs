//! The canonical encoding of events and their SHA-256 hash chain.
//!
//! Canonical form: compact JSON, object keys sorted by their UTF-8 bytes at every depth,
//! strings escaped as serde_json escapes them. The sort is done here, explicitly, so that the
//! encoding does not depend on whether some crate in the build enables serde_json's
//! `preserve_order` feature.
//!
//! SHA-256 because an auditor can recompute it with any standard tool, and its cost (well
//! under a microsecond for a typical event) is nothing next to an fsync.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// A SHA-256 digest, written as 64 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Hash([u8; 32]);

/// Text that is not 64 hex digits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a SHA-256 hash (expected 64 hex digits): {0:?}")]
pub struct HashParseError(String);

impl Hash {
    /// SHA-256 of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Self(Sha256::digest(bytes).into())
    }

    /// A hash from its raw digest bytes.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// The raw digest.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl fmt::Display for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Hash({self})")
    }
}

impl TryFrom<String> for Hash {
    type Error = HashParseError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        let bytes = s.as_bytes();
        if bytes.len() != 64 {
            return Err(HashParseError(s));
        }
        let mut out = [0u8; 32];
        for (i, pair) in bytes.chunks_exact(2).enumerate() {
            let hex = |c: u8| match c {
                b'0'..=b'9' => Some(c - b'0'),
                b'a'..=b'f' => Some(c - b'a' + 10),
                _ => None,
            };
            match (hex(pair[0]), hex(pair[1])) {
                (Some(h), Some(l)) => out[i] = h << 4 | l,
                _ => return Err(HashParseError(s)),
            }
        }
        Ok(Self(out))
    }
}

impl From<Hash> for String {
    fn from(h: Hash) -> Self {
        h.to_string()
    }
}

/// Writes `value` in canonical form (sorted keys, compact).
pub fn to_canonical_vec(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    write_value(&mut out, value);
    out
}

fn write_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.push(b'{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_scalar(out, &Value::String(k.clone()));
                out.push(b':');
                write_value(out, v);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(out, v);
            }
            out.push(b']');
        }
        scalar => write_scalar(out, scalar),
    }
}

fn write_scalar(out: &mut Vec<u8>, scalar: &Value) {
    // Invariant: serializing a scalar Value (null, bool, number, string) into a Vec cannot
    // fail; serde_json only errors on IO or on non-string map keys, and neither occurs here.
    if serde_json::to_writer(&mut *out, scalar).is_err() {
        out.extend_from_slice(b"null");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_sorted_at_every_depth() {
        let v: Value =
            serde_json::from_str(r#"{"b":1,"a":{"z":[{"y":1,"x":2}],"c":"é\n"}}"#).unwrap();
        assert_eq!(
            String::from_utf8(to_canonical_vec(&v)).unwrap(),
            r#"{"a":{"c":"é\n","z":[{"x":2,"y":1}]},"b":1}"#
        );
    }

    #[test]
    fn hash_round_trips_through_hex() {
        let h = Hash::of(b"abc");
        assert_eq!(
            h.to_string(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(Hash::try_from(h.to_string()), Ok(h));
        assert!(Hash::try_from("zz".repeat(32)).is_err());
    }
}
