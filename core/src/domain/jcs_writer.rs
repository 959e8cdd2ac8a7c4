//! RFC 8785 (JCS) written straight from a value's `Serialize`, without building a
//! `serde_json::Value` first.
//!
//! Going through a `Value` allocates every string and every object of an event twice (the
//! value, then the sorted entries) and was most of what sealing and checking an event cost
//! (the two, with their SHA-256, were ~33% of `perf`'s samples of 64 sessions appending at
//! once). This writer emits the same bytes
//! in one pass: members are written as they come, and an object whose members did not come in
//! UTF-16 key order (a `serde_json::Value` map, a flattened struct) is put in order at its end
//! by copying its members' byte ranges.
//!
//! It covers what events hold: objects, arrays, strings, booleans, null and integers within
//! ±2^53. Anything else (a float, a larger integer, bytes, a duplicate key, a key that is
//! not a string or an integer, a raw JSON value) makes it give up with [`Unsupported`], and
//! the caller takes the `Value` path, which is the reference: the two are tested equal on
//! arbitrary values and on every event of the fixtures (`canonical.rs`).

use std::cmp::Ordering;
use std::fmt;

use serde::ser::{self, Serialize};

use super::canonical::utf16_order;

/// The value holds something this writer leaves to the general path.
#[derive(Debug)]
pub(crate) struct Unsupported;

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a value the direct JCS writer leaves to the general path")
    }
}

impl std::error::Error for Unsupported {}

impl ser::Error for Unsupported {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Unsupported
    }
}

type Done = Result<(), Unsupported>;

/// The JCS bytes of `value`, or `None` when it holds something this writer does not cover.
pub(crate) fn to_jcs<T: Serialize + ?Sized>(value: &T) -> Option<Vec<u8>> {
    let mut w = Writer {
        out: Vec::with_capacity(2048),
        keys: String::new(),
        members: Vec::new(),
        scratch: Vec::new(),
        order: Vec::new(),
    };
    value.serialize(&mut w).ok()?;
    Some(w.out)
}

/// Integers JCS writes as their digits (beyond this, as the double they round to).
const SAFE: u64 = 1 << 53;

/// One member of an object being written.
struct Member {
    /// Its key, unescaped, in `Writer::keys`.
    key: (usize, usize),
    /// Its bytes (`"key":value`) in `Writer::out`.
    bytes: (usize, usize),
}

/// The output, and the members of the objects open in it (a stack: an inner object's
/// members and keys sit above the outer's and are dropped when it ends).
struct Writer {
    out: Vec<u8>,
    keys: String,
    members: Vec<Member>,
    /// Where an object's members are put in order ([`Object::close`]).
    scratch: Vec<u8>,
    order: Vec<usize>,
}

impl Writer {
    fn string(&mut self, s: &str) -> Done {
        serde_json::to_writer(&mut self.out, s).map_err(|_| Unsupported)
    }

    fn unsigned(&mut self, v: u64) -> Done {
        if v > SAFE {
            return Err(Unsupported);
        }
        serde_json::to_writer(&mut self.out, &v).map_err(|_| Unsupported)
    }

    fn signed(&mut self, v: i64) -> Done {
        if v.unsigned_abs() > SAFE {
            return Err(Unsupported);
        }
        serde_json::to_writer(&mut self.out, &v).map_err(|_| Unsupported)
    }

    fn open_object(&mut self) -> Object<'_> {
        self.out.push(b'{');
        Object {
            body: self.out.len(),
            first: self.members.len(),
            keys: self.keys.len(),
            key: None,
            w: self,
        }
    }

    /// `{"variant":` of an enum variant written as a one-member object.
    fn open_variant(&mut self, variant: &str) -> Done {
        self.out.push(b'{');
        self.string(variant)?;
        self.out.push(b':');
        Ok(())
    }
}

/// The unescaped text of a key kept in `Writer::keys`.
fn key_of(w: &Writer, key: (usize, usize)) -> &str {
    w.keys.get(key.0..key.1).unwrap_or_default()
}

/// An object being written.
struct Object<'a> {
    w: &'a mut Writer,
    /// Where its members start in the output (after `{`).
    body: usize,
    /// Its first member in `Writer::members`.
    first: usize,
    /// Where its keys start in `Writer::keys`.
    keys: usize,
    /// The key of the member whose value comes next, in `Writer::keys`.
    key: Option<(usize, usize)>,
}

impl<'a> Object<'a> {
    fn member<T: Serialize + ?Sized>(&mut self, key: (usize, usize), value: &T) -> Done {
        if self.w.members.len() > self.first {
            self.w.out.push(b',');
        }
        let start = self.w.out.len();
        let text = self.w.keys.get(key.0..key.1).ok_or(Unsupported)?;
        serde_json::to_writer(&mut self.w.out, text).map_err(|_| Unsupported)?;
        self.w.out.push(b':');
        value.serialize(&mut *self.w)?;
        self.w.members.push(Member {
            key,
            bytes: (start, self.w.out.len()),
        });
        Ok(())
    }

    fn named_member<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Done {
        let start = self.w.keys.len();
        self.w.keys.push_str(key);
        self.member((start, self.w.keys.len()), value)
    }

    /// Closes the object (members in key order; a duplicate key gives up) and hands the
    /// writer back.
    fn close(self) -> Result<&'a mut Writer, Unsupported> {
        let Object {
            w,
            body,
            first,
            keys,
            ..
        } = self;
        let mut sorted = true;
        for pair in w.members.get(first..).unwrap_or_default().windows(2) {
            match utf16_order(key_of(w, pair[0].key), key_of(w, pair[1].key)) {
                Ordering::Less => {}
                Ordering::Equal => return Err(Unsupported),
                Ordering::Greater => sorted = false,
            }
        }
        if !sorted {
            // The members' bytes, copied out in key order, then back (one scratch buffer and
            // one order for the whole value: an inner object is closed before its outer).
            let mut order = std::mem::take(&mut w.order);
            order.clear();
            order.extend(first..w.members.len());
            order.sort_by(|a, b| {
                utf16_order(key_of(w, w.members[*a].key), key_of(w, w.members[*b].key))
            });
            if order
                .windows(2)
                .any(|p| key_of(w, w.members[p[0]].key) == key_of(w, w.members[p[1]].key))
            {
                return Err(Unsupported);
            }
            let mut scratch = std::mem::take(&mut w.scratch);
            scratch.clear();
            for (i, m) in order.iter().enumerate() {
                if i > 0 {
                    scratch.push(b',');
                }
                let (from, to) = w.members[*m].bytes;
                scratch.extend_from_slice(w.out.get(from..to).ok_or(Unsupported)?);
            }
            w.out.truncate(body);
            w.out.extend_from_slice(&scratch);
            w.scratch = scratch;
            w.order = order;
        }
        w.out.push(b'}');
        w.members.truncate(first);
        w.keys.truncate(keys);
        Ok(w)
    }
}

impl ser::SerializeMap for Object<'_> {
    type Ok = ();
    type Error = Unsupported;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Done {
        let start = self.w.keys.len();
        key.serialize(KeyWriter(&mut self.w.keys))?;
        self.key = Some((start, self.w.keys.len()));
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Done {
        let key = self.key.take().ok_or(Unsupported)?;
        self.member(key, value)
    }

    fn end(self) -> Done {
        self.close().map(drop)
    }
}

impl ser::SerializeStruct for Object<'_> {
    type Ok = ();
    type Error = Unsupported;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Done {
        self.named_member(key, value)
    }

    fn end(self) -> Done {
        self.close().map(drop)
    }
}

/// A struct variant: `{"variant":{…}}`.
struct VariantObject<'a>(Object<'a>);

impl ser::SerializeStructVariant for VariantObject<'_> {
    type Ok = ();
    type Error = Unsupported;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Done {
        self.0.named_member(key, value)
    }

    fn end(self) -> Done {
        self.0.close()?.out.push(b'}');
        Ok(())
    }
}

/// An array being written (a sequence, a tuple), closed by `]`, and by `]}` for a tuple
/// variant (`{"variant":[…]}`).
struct Array<'a> {
    w: &'a mut Writer,
    first: bool,
    variant: bool,
}

impl Array<'_> {
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Done {
        if !std::mem::take(&mut self.first) {
            self.w.out.push(b',');
        }
        value.serialize(&mut *self.w)
    }

    fn close(self) -> Done {
        self.w.out.push(b']');
        if self.variant {
            self.w.out.push(b'}');
        }
        Ok(())
    }
}

/// The four array-shaped parts of serde's data model, each an [`Array`]'s element and end.
macro_rules! array_of {
    ($($part:ident :: $element:ident),*) => {$(
        impl ser::$part for Array<'_> {
            type Ok = ();
            type Error = Unsupported;

            fn $element<T: Serialize + ?Sized>(&mut self, value: &T) -> Done {
                self.element(value)
            }

            fn end(self) -> Done {
                self.close()
            }
        }
    )*};
}

array_of!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl<'a> ser::Serializer for &'a mut Writer {
    type Ok = ();
    type Error = Unsupported;
    type SerializeSeq = Array<'a>;
    type SerializeTuple = Array<'a>;
    type SerializeTupleStruct = Array<'a>;
    type SerializeTupleVariant = Array<'a>;
    type SerializeMap = Object<'a>;
    type SerializeStruct = Object<'a>;
    type SerializeStructVariant = VariantObject<'a>;

    fn serialize_bool(self, v: bool) -> Done {
        self.out
            .extend_from_slice(if v { b"true" } else { b"false" });
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Done {
        self.signed(v.into())
    }
    fn serialize_i16(self, v: i16) -> Done {
        self.signed(v.into())
    }
    fn serialize_i32(self, v: i32) -> Done {
        self.signed(v.into())
    }
    fn serialize_i64(self, v: i64) -> Done {
        self.signed(v)
    }
    fn serialize_u8(self, v: u8) -> Done {
        self.unsigned(v.into())
    }
    fn serialize_u16(self, v: u16) -> Done {
        self.unsigned(v.into())
    }
    fn serialize_u32(self, v: u32) -> Done {
        self.unsigned(v.into())
    }
    fn serialize_u64(self, v: u64) -> Done {
        self.unsigned(v)
    }
    fn serialize_f32(self, _: f32) -> Done {
        Err(Unsupported)
    }
    fn serialize_f64(self, _: f64) -> Done {
        Err(Unsupported)
    }
    fn serialize_char(self, v: char) -> Done {
        self.string(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Done {
        self.string(v)
    }
    fn serialize_bytes(self, _: &[u8]) -> Done {
        Err(Unsupported)
    }
    fn serialize_none(self) -> Done {
        self.out.extend_from_slice(b"null");
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Done {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Done {
        self.serialize_none()
    }
    fn serialize_unit_struct(self, _: &'static str) -> Done {
        self.serialize_none()
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Done {
        self.string(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Done {
        // serde_json's raw JSON text travels as this newtype: the general path parses it.
        if name.starts_with("$serde_json") {
            return Err(Unsupported);
        }
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Done {
        self.open_variant(variant)?;
        value.serialize(&mut *self)?;
        self.out.push(b'}');
        Ok(())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Array<'a>, Unsupported> {
        self.out.push(b'[');
        Ok(Array {
            w: self,
            first: true,
            variant: false,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<Array<'a>, Unsupported> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Array<'a>, Unsupported> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Array<'a>, Unsupported> {
        self.open_variant(variant)?;
        self.out.push(b'[');
        Ok(Array {
            w: self,
            first: true,
            variant: true,
        })
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Object<'a>, Unsupported> {
        Ok(self.open_object())
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Object<'a>, Unsupported> {
        Ok(self.open_object())
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<VariantObject<'a>, Unsupported> {
        self.open_variant(variant)?;
        Ok(VariantObject(self.open_object()))
    }
}

/// Writes a map key, unescaped, into `Writer::keys`: a string, or an integer as its digits
/// (as serde_json turns integer keys into strings); anything else gives up.
struct KeyWriter<'a>(&'a mut String);

impl KeyWriter<'_> {
    fn digits(self, v: impl fmt::Display) -> Done {
        use std::fmt::Write as _;
        write!(self.0, "{v}").map_err(|_| Unsupported)
    }
}

impl ser::Serializer for KeyWriter<'_> {
    type Ok = ();
    type Error = Unsupported;
    type SerializeSeq = ser::Impossible<(), Unsupported>;
    type SerializeTuple = ser::Impossible<(), Unsupported>;
    type SerializeTupleStruct = ser::Impossible<(), Unsupported>;
    type SerializeTupleVariant = ser::Impossible<(), Unsupported>;
    type SerializeMap = ser::Impossible<(), Unsupported>;
    type SerializeStruct = ser::Impossible<(), Unsupported>;
    type SerializeStructVariant = ser::Impossible<(), Unsupported>;

    fn serialize_str(self, v: &str) -> Done {
        self.0.push_str(v);
        Ok(())
    }
    fn serialize_char(self, v: char) -> Done {
        self.0.push(v);
        Ok(())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Done {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, value: &T) -> Done {
        value.serialize(self)
    }
    fn serialize_i8(self, v: i8) -> Done {
        self.digits(v)
    }
    fn serialize_i16(self, v: i16) -> Done {
        self.digits(v)
    }
    fn serialize_i32(self, v: i32) -> Done {
        self.digits(v)
    }
    fn serialize_i64(self, v: i64) -> Done {
        self.digits(v)
    }
    fn serialize_u8(self, v: u8) -> Done {
        self.digits(v)
    }
    fn serialize_u16(self, v: u16) -> Done {
        self.digits(v)
    }
    fn serialize_u32(self, v: u32) -> Done {
        self.digits(v)
    }
    fn serialize_u64(self, v: u64) -> Done {
        self.digits(v)
    }
    fn serialize_bool(self, _: bool) -> Done {
        Err(Unsupported)
    }
    fn serialize_f32(self, _: f32) -> Done {
        Err(Unsupported)
    }
    fn serialize_f64(self, _: f64) -> Done {
        Err(Unsupported)
    }
    fn serialize_bytes(self, _: &[u8]) -> Done {
        Err(Unsupported)
    }
    fn serialize_none(self) -> Done {
        Err(Unsupported)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Done {
        Err(Unsupported)
    }
    fn serialize_unit(self) -> Done {
        Err(Unsupported)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Done {
        Err(Unsupported)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Done {
        Err(Unsupported)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStruct, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Unsupported> {
        Err(Unsupported)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code
    use std::collections::BTreeMap;

    use serde::Serialize;
    use serde_json::Value;

    use super::to_jcs;
    use crate::domain::canonical::{Canonical, to_canonical_vec};
    use crate::domain::event::Event;

    /// The reference: through a `Value`.
    fn by_value<T: Serialize>(v: &T) -> String {
        let value = serde_json::to_value(v).unwrap();
        String::from_utf8(to_canonical_vec(&value, Canonical::Jcs)).unwrap()
    }

    fn direct<T: Serialize>(v: &T) -> Option<String> {
        to_jcs(v).map(|b| String::from_utf8(b).unwrap())
    }

    /// Fields declared out of key order, every kind of enum variant, options, chars, unit,
    /// integer map keys, nested maps: written directly, and equal to the reference.
    #[test]
    fn out_of_order_fields_and_every_variant_equal_the_value_path() {
        #[derive(Serialize)]
        enum E {
            Unit,
            New(u8),
            Tuple(u8, &'static str),
            Struct { z: u8, a: Option<u8> },
        }
        #[derive(Serialize)]
        struct Inner {
            zeta: Vec<E>,
            alpha: char,
            #[serde(rename = "é")]
            accent: (),
            #[serde(rename = "\u{e000}")]
            private: bool,
            #[serde(rename = "😀")]
            astral: i64,
        }
        #[derive(Serialize)]
        struct Outer {
            m: BTreeMap<u32, Inner>,
            #[serde(flatten)]
            flat: BTreeMap<String, Value>,
            b: Option<String>,
            a: &'static str,
        }
        let inner = Inner {
            zeta: vec![
                E::Unit,
                E::New(7),
                E::Tuple(1, "x\"\n\u{1}"),
                E::Struct { z: 1, a: None },
            ],
            alpha: 'q',
            accent: (),
            private: true,
            astral: -(1 << 53),
        };
        let mut flat = BTreeMap::new();
        flat.insert(
            "c".to_owned(),
            serde_json::json!({"y": [1, {"b": 2, "a": 1}], "x": null}),
        );
        flat.insert("aa".to_owned(), Value::from("flat"));
        let outer = Outer {
            m: BTreeMap::from([
                (10, inner),
                (
                    9,
                    Inner {
                        zeta: vec![],
                        alpha: '😀',
                        accent: (),
                        private: false,
                        astral: 0,
                    },
                ),
            ]),
            flat,
            b: None,
            a: "last field, first key",
        };
        assert_eq!(direct(&outer).unwrap(), by_value(&outer));
    }

    /// What it leaves to the general path: floats, integers beyond 2^53, bytes, a key
    /// twice, a key that is neither a string nor an integer.
    #[test]
    fn gives_up_on_what_it_does_not_cover() {
        assert!(direct(&0.5_f64).is_none());
        assert!(direct(&((1_u64 << 53) + 1)).is_none());
        assert!(direct(&(-(1_i64 << 53) - 1)).is_none());
        assert!(direct(&serde_bytes_like()).is_none());
        assert!(direct(&BTreeMap::from([(true, 1)])).is_none());
        #[derive(Serialize)]
        struct Twice {
            a: u8,
            #[serde(flatten)]
            more: BTreeMap<String, u8>,
        }
        let twice = Twice {
            a: 1,
            more: BTreeMap::from([("a".to_owned(), 2)]),
        };
        assert!(direct(&twice).is_none());
        // The limits themselves are written.
        assert_eq!(direct(&(1_u64 << 53)).unwrap(), "9007199254740992");
        assert_eq!(direct(&(-(1_i64 << 53))).unwrap(), "-9007199254740992");
    }

    fn serde_bytes_like() -> impl Serialize {
        struct Bytes;
        impl Serialize for Bytes {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(b"ab")
            }
        }
        Bytes
    }

    /// Every event of the format fixtures (formats 2 to 4) is written directly, not by the
    /// general path, and to the bytes stored for it.
    #[test]
    fn every_fixture_event_is_written_directly_to_its_stored_bytes() {
        let mut n = 0;
        for file in [
            include_str!("../../../fixtures/events/format-2.jsonl"),
            include_str!("../../../fixtures/events/format-3.jsonl"),
            include_str!("../../../fixtures/events/format-4.jsonl"),
        ] {
            for line in file.lines().filter(|l| !l.trim().is_empty()) {
                let event = Event::decode(line.as_bytes()).unwrap();
                assert_eq!(direct(&event).as_deref(), Some(line), "seq {}", event.seq);
                n += 1;
            }
        }
        assert!(n > 30, "{n} fixture events");
    }
}
