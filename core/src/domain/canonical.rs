//! The canonical encoding of events and their SHA-256 hash chain.
//!
//! An event's hash is the SHA-256 of its canonical JSON without the `hash` field. Which
//! canonical form depends on the event's format (it is part of the format):
//!
//! - **format 2 on: RFC 8785, the JSON Canonicalization Scheme (JCS)**, as implemented by the
//!   `serde_json_canonicalizer` crate: object keys sorted by their UTF-16 code units, numbers
//!   in ECMAScript form, minimal string escapes. Tested here against the RFC's published
//!   examples.
//! - **format 1: "planlog v1"**, written by hand before JCS was adopted: compact JSON, keys
//!   sorted by their UTF-8 bytes, numbers and strings as serde_json writes them. It equals JCS
//!   for every value without a number beyond 2^53 in magnitude, a fraction below 10^-6 written
//!   plainly by JCS (serde_json writes `1e-6`), a whole float of 21+ digits, or `-0.0`, and
//!   without object keys mixing characters above U+FFFF with ones in U+E000..U+FFFF; a
//!   format-1 event can differ only in a refused submission holding such a value (tested
//!   below). Format-1 events keep being
//!   checked with it, since their hashes were made with it.
//!
//! SHA-256 because an auditor can recompute it with any standard tool, and its cost (well
//! under a microsecond for a typical event) is nothing next to an fsync.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// A SHA-256 digest, written as 64 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
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

    /// SHA-256 of the concatenation of `parts`, without building it.
    pub fn of_parts(parts: &[&[u8]]) -> Self {
        let mut hasher = Sha256::new();
        for part in parts {
            hasher.update(part);
        }
        Self(hasher.finalize().into())
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
        let text = self.hex();
        // Invariant: hex digits are ASCII, so valid UTF-8.
        f.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?)
    }
}

impl fmt::Debug for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Hash({self})")
    }
}

impl Hash {
    /// The hash whose 64 lowercase hex digits `text` is.
    fn parse_hex(text: &str) -> Option<Self> {
        let bytes = text.as_bytes();
        if bytes.len() != 64 {
            return None;
        }
        // Each byte's digit value, 0xFF for a byte that is not a lowercase hex digit; a
        // hash's 64 digits are looked up without a branch, and any bad one seen at the end.
        const DIGIT: [u8; 256] = {
            let mut t = [0xFF; 256];
            let mut i = 0;
            while i < 10 {
                t[b'0' as usize + i] = i as u8;
                i += 1;
            }
            let mut i = 0;
            while i < 6 {
                t[b'a' as usize + i] = 10 + i as u8;
                i += 1;
            }
            t
        };
        let mut out = [0u8; 32];
        let mut seen = 0u8;
        for (slot, pair) in out.iter_mut().zip(bytes.chunks_exact(2)) {
            let (high, low) = (DIGIT[usize::from(pair[0])], DIGIT[usize::from(pair[1])]);
            seen |= high | low;
            *slot = high << 4 | low;
        }
        (seen < 16).then_some(Self(out))
    }
}

impl TryFrom<String> for Hash {
    type Error = HashParseError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        Self::parse_hex(&s).ok_or(HashParseError(s))
    }
}

/// Read from its 64 hex digits as they stand in the input (no copy of the text).
impl<'de> Deserialize<'de> for Hash {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Digits;
        impl serde::de::Visitor<'_> for Digits {
            type Value = Hash;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a SHA-256 hash: 64 lowercase hex digits")
            }

            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Hash, E> {
                Hash::parse_hex(text).ok_or_else(|| E::custom(HashParseError(text.to_owned())))
            }
        }
        d.deserialize_str(Digits)
    }
}

impl Hash {
    /// Its 64 lowercase hex digits, formatted on the stack.
    pub(crate) fn hex(&self) -> [u8; 64] {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut text = [0u8; 64];
        for (i, b) in self.0.iter().enumerate() {
            text[2 * i] = HEX[usize::from(b >> 4)];
            text[2 * i + 1] = HEX[usize::from(b & 0xf)];
        }
        text
    }
}

/// Written as its 64 hex digits, formatted on the stack.
impl Serialize for Hash {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let text = self.hex();
        // Invariant: hex digits are ASCII, so valid UTF-8.
        s.serialize_str(std::str::from_utf8(&text).map_err(serde::ser::Error::custom)?)
    }
}

impl From<Hash> for String {
    fn from(h: Hash) -> Self {
        h.to_string()
    }
}

/// Which canonical JSON an encoding uses (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Canonical {
    /// Event format 1: keys by UTF-8 bytes, serde_json's number text.
    PlanlogV1,
    /// Event format 2 on: RFC 8785.
    Jcs,
}

/// Writes `value` in the canonical form `scheme`.
pub fn to_canonical_vec(value: &Value, scheme: Canonical) -> Vec<u8> {
    match scheme {
        Canonical::Jcs => {
            let mut out = Vec::with_capacity(512);
            write_jcs(&mut out, value);
            out
        }
        Canonical::PlanlogV1 => {
            let mut out = Vec::with_capacity(256);
            write_v1(&mut out, value);
            out
        }
    }
}

/// `value`'s canonical bytes in the form `scheme`: RFC 8785 written straight from the value
/// ([`jcs_writer`](super::jcs_writer)) when it holds only what that writer covers, otherwise
/// (and for format 1's form) through a `serde_json::Value` and [`to_canonical_vec`].
pub(crate) fn canonical_bytes<T: Serialize + ?Sized>(
    value: &T,
    scheme: Canonical,
    what: &str,
) -> Vec<u8> {
    if scheme == Canonical::Jcs
        && let Some(bytes) = super::jcs_writer::to_jcs(value)
    {
        return bytes;
    }
    to_canonical_vec(&plain_value(value, what), scheme)
}

/// Serializes plain data (ids, numbers, strings, plans, JSON values) into a JSON value.
///
/// Invariant: every type planlog serializes is plain data with string map keys, for which
/// serde_json cannot fail. A failure means the invariant broke; it fails loudly, naming
/// `what`, rather than produce a plausible wrong value.
pub(crate) fn plain_value<T: Serialize + ?Sized>(value: &T, what: &str) -> Value {
    match serde_json::to_value(value) {
        Ok(v) => v,
        Err(e) => panic!("invariant broken: {what} is not plain JSON data ({e})"),
    }
}

/// [`plain_value`], as compact JSON text.
pub(crate) fn plain_json<T: Serialize + ?Sized>(value: &T, what: &str) -> String {
    match serde_json::to_string(value) {
        Ok(v) => v,
        Err(e) => panic!("invariant broken: {what} is not plain JSON data ({e})"),
    }
}

/// RFC 8785 by the crate, for one value (the reference; [`write_jcs`] uses it for numbers).
fn jcs_by_the_crate(value: &Value) -> Vec<u8> {
    match serde_json_canonicalizer::to_vec(value) {
        Ok(bytes) => bytes,
        // Invariant: a serde_json Value has string keys and finite numbers only, the two
        // things JCS can refuse; a failure here must never be hashed as something else.
        Err(e) => panic!("invariant broken: a JSON value JCS cannot encode ({e})"),
    }
}

/// RFC 8785 written directly (the crate goes through an allocation per property, which made
/// hashing most of an import's time): compact, keys sorted by UTF-16 code units, strings
/// escaped as serde_json escapes them (the same minimal escapes JCS asks for), integers within
/// ±2^53 as their digits, every other number as the crate writes it. Tested against the crate
/// on arbitrary values.
fn write_jcs(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| utf16_order(a.0, b.0));
            out.push(b'{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(plain_json(k.as_str(), "an object key").as_bytes());
                out.push(b':');
                write_jcs(out, v);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_jcs(out, v);
            }
            out.push(b']');
        }
        Value::Number(n) => {
            const SAFE: u64 = 1 << 53;
            match (n.as_u64(), n.as_i64()) {
                (Some(u), _) if u <= SAFE => out.extend_from_slice(u.to_string().as_bytes()),
                (_, Some(i)) if i.unsigned_abs() <= SAFE => {
                    out.extend_from_slice(i.to_string().as_bytes());
                }
                _ => out.extend_from_slice(&jcs_by_the_crate(value)),
            }
        }
        scalar => out.extend_from_slice(plain_json(scalar, "a JSON scalar").as_bytes()),
    }
}

/// Orders keys by their UTF-16 code units, as RFC 8785 sorts them (the same as byte order
/// unless one key has a character above U+FFFF where the other has one in U+E000..U+FFFF).
pub(crate) fn utf16_order(a: &str, b: &str) -> std::cmp::Ordering {
    if a.is_ascii() && b.is_ascii() {
        a.cmp(b)
    } else {
        a.encode_utf16().cmp(b.encode_utf16())
    }
}

fn write_v1(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.push(b'{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(plain_json(k.as_str(), "an object key").as_bytes());
                out.push(b':');
                write_v1(out, v);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_v1(out, v);
            }
            out.push(b']');
        }
        scalar => out.extend_from_slice(plain_json(scalar, "a JSON scalar").as_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jcs(text: &str) -> String {
        let v: Value = serde_json::from_str(text).unwrap();
        String::from_utf8(to_canonical_vec(&v, Canonical::Jcs)).unwrap()
    }

    /// RFC 8785 § 3.2.2 / 3.2.3: the sample object and its canonical form.
    #[test]
    fn jcs_matches_the_rfc_sample() {
        let input = r#"{
          "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
          "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
          "literals": [null, true, false]
        }"#;
        assert_eq!(
            jcs(input),
            r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#
        );
    }

    /// RFC 8785 § 3.2.3: property sorting by UTF-16 code units.
    #[test]
    fn jcs_sorts_keys_by_utf16_as_the_rfc_does() {
        let input = r#"{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}"#;
        let out: Value = serde_json::from_str(&jcs(input)).unwrap();
        let text = jcs(input);
        let order: Vec<usize> = ["\\r", "\"1\"", "\u{80}", "ö", "€", "😀", "\u{fb33}"]
            .iter()
            .map(|k| text.find(k).unwrap())
            .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{text}");
        assert_eq!(out.as_object().unwrap().len(), 7);
    }

    /// RFC 8785 Appendix B: IEEE 754 doubles and their canonical text.
    #[test]
    fn jcs_numbers_match_the_rfc_table() {
        for (bits, expected) in [
            (0x0000000000000000u64, "0"),
            (0x8000000000000000, "0"),
            (0x0000000000000001, "5e-324"),
            (0x8000000000000001, "-5e-324"),
            (0x7fefffffffffffff, "1.7976931348623157e+308"),
            (0xffefffffffffffff, "-1.7976931348623157e+308"),
            (0x4340000000000000, "9007199254740992"),
            (0xc340000000000000, "-9007199254740992"),
            (0x4430000000000000, "295147905179352830000"),
            (0x44b52d02c7e14af5, "9.999999999999997e+22"),
            (0x44b52d02c7e14af6, "1e+23"),
            (0x44b52d02c7e14af7, "1.0000000000000001e+23"),
            (0x444b1ae4d6e2ef4e, "999999999999999700000"),
            (0x444b1ae4d6e2ef4f, "999999999999999900000"),
            (0x444b1ae4d6e2ef50, "1e+21"),
            (0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"),
            (0x3eb0c6f7a0b5ed8d, "0.000001"),
            (0x41b3de4355555553, "333333333.3333332"),
            (0x41b3de4355555554, "333333333.33333325"),
            (0x41b3de4355555555, "333333333.3333333"),
            (0x41b3de4355555556, "333333333.3333334"),
            (0x41b3de4355555557, "333333333.33333343"),
            (0xbecbf647612f3696, "-0.0000033333333333333333"),
            (0x43143ff3c1cb0959, "1424953923781206.2"),
        ] {
            let v = Value::from(f64::from_bits(bits));
            let got = String::from_utf8(to_canonical_vec(&v, Canonical::Jcs)).unwrap();
            assert_eq!(got, expected, "{bits:016x}");
        }
    }

    #[test]
    fn v1_sorts_keys_at_every_depth() {
        let v: Value =
            serde_json::from_str(r#"{"b":1,"a":{"z":[{"y":1,"x":2}],"c":"é\n"}}"#).unwrap();
        assert_eq!(
            String::from_utf8(to_canonical_vec(&v, Canonical::PlanlogV1)).unwrap(),
            r#"{"a":{"c":"é\n","z":[{"x":2,"y":1}]},"b":1}"#
        );
    }

    fn arbitrary_json() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let key = prop_oneof![
            "[a-z]{0,4}",
            "\\PC{0,3}",
            Just("\u{e000}".to_owned()),
            Just("😀".to_owned()),
            Just("\u{1}\"\\".to_owned()),
        ];
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            prop_oneof![
                Just(1e-7),
                Just(1e21),
                Just(-0.0),
                Just(0.5),
                Just(123456789012345680000.0)
            ]
            .prop_map(Value::from),
            prop_oneof![
                Just(Value::from(9_007_199_254_740_992_u64)),
                Just(Value::from(9_007_199_254_740_993_u64)),
                Just(Value::from(-9_007_199_254_740_993_i64)),
                Just(Value::from(u64::MAX)),
                Just(Value::from(i64::MIN)),
            ],
            "\\PC{0,6}".prop_map(Value::from),
            Just(Value::from("\u{7f}\u{1f}\n\t\u{2028}")),
        ];
        leaf.prop_recursive(4, 48, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::btree_map(key.clone(), inner, 0..5)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #[test]
        fn the_direct_jcs_writer_equals_the_reference_crate(v in arbitrary_json()) {
            proptest::prop_assert_eq!(
                String::from_utf8(to_canonical_vec(&v, Canonical::Jcs)).unwrap(),
                String::from_utf8(jcs_by_the_crate(&v)).unwrap()
            );
        }
    }

    /// Whether a value holds only what the direct writer covers (no float, no integer
    /// beyond 2^53).
    fn covered(v: &Value) -> bool {
        match v {
            Value::Number(n) => {
                n.as_u64().is_some_and(|u| u <= 1 << 53)
                    || n.as_i64().is_some_and(|i| i.unsigned_abs() <= 1 << 53)
            }
            Value::Array(items) => items.iter().all(covered),
            Value::Object(map) => map.values().all(covered),
            _ => true,
        }
    }

    proptest::proptest! {
        /// The writer used for events gives the reference's bytes, and gives up only on
        /// what it does not cover.
        #[test]
        fn the_streaming_writer_equals_the_value_path(v in arbitrary_json()) {
            let reference = to_canonical_vec(&v, Canonical::Jcs);
            match super::super::jcs_writer::to_jcs(&v) {
                Some(bytes) => proptest::prop_assert_eq!(
                    String::from_utf8(bytes).unwrap(),
                    String::from_utf8(reference).unwrap()
                ),
                None => proptest::prop_assert!(!covered(&v), "gave up on {v}"),
            }
        }
    }

    #[test]
    fn v1_equals_jcs_except_for_the_documented_cases() {
        let same = r#"{"steps":[{"id":"1","content":"Write it \u0001 é 😀","status":"pending"}],"n":9007199254740991,"neg":-3,"t":true,"x":null}"#;
        let v: Value = serde_json::from_str(same).unwrap();
        assert_eq!(
            to_canonical_vec(&v, Canonical::PlanlogV1),
            to_canonical_vec(&v, Canonical::Jcs)
        );
        for differs in [
            r#"{"n":0.000001}"#,
            r#"{"n":123456789012345680000.0}"#,
            r#"{"n":-0.0}"#,
            r#"{"n":9007199254740993}"#,
            r#"{"\ue000":1,"😀":2}"#,
        ] {
            let v: Value = serde_json::from_str(differs).unwrap();
            assert_ne!(
                to_canonical_vec(&v, Canonical::PlanlogV1),
                to_canonical_vec(&v, Canonical::Jcs),
                "{differs}"
            );
        }
    }

    #[test]
    #[should_panic(expected = "invariant broken: a test map is not plain JSON data")]
    fn data_that_is_not_plain_json_fails_loudly_instead_of_hashing_as_null() {
        // A map with non-string keys is the one thing serde_json refuses; the old code hashed
        // such an event as `null`.
        let map: std::collections::BTreeMap<(u8, u8), u8> = [((1, 2), 3)].into();
        let _ = plain_value(&map, "a test map");
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
        // Read from JSON text (borrowed) and from a `Value` (owned) alike; anything but 64
        // lowercase hex digits is refused, saying what a hash is.
        let quoted = format!("\"{h}\"");
        assert_eq!(serde_json::from_str::<Hash>(&quoted).unwrap(), h);
        let value = serde_json::Value::String(h.to_string());
        assert_eq!(serde_json::from_value::<Hash>(value).unwrap(), h);
        for bad in [
            h.to_string().to_uppercase(),
            h.to_string()[1..].to_owned(),
            format!("{h}0"),
            "g".repeat(64),
        ] {
            let err = serde_json::from_str::<Hash>(&format!("\"{bad}\"")).unwrap_err();
            assert!(err.to_string().contains("64 hex digits"), "{err}");
        }
        assert!(serde_json::from_str::<Hash>("12").is_err());
    }
}
