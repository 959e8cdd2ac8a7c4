//! JSON that keeps its keys in the order they were written, for editing files people keep
//! (a settings file under version control must not come back re-sorted). Objects are lists
//! of entries in document order; a file is written back with the indentation it had.
//!
//! serde_json's own `Value` sorts keys unless its `preserve_order` feature is on, and that
//! feature would change map order for every crate in the build, event canonicalisation
//! included; this small type keeps the choice local.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

/// A JSON value whose objects keep their key order.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as serde_json reads it.
    Number(serde_json::Number),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Json>),
    /// An object: its entries in document order.
    Object(Vec<(String, Json)>),
}

impl Json {
    /// A string value.
    pub fn str(s: impl Into<String>) -> Json {
        Json::String(s.into())
    }

    /// An object of `entries`, in this order.
    pub fn object<const N: usize>(entries: [(&str, Json); N]) -> Json {
        Json::Object(
            entries
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        )
    }

    /// The value under `key` (the last one, as JSON readers take it), for an object.
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(entries) => entries.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value under `key`, for changing it.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Json> {
        match self {
            Json::Object(entries) => entries
                .iter_mut()
                .rev()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// Sets `key` to `value`: in place when the key is there, else at the end. `false` when
    /// this is not an object.
    pub fn set(&mut self, key: &str, value: Json) -> bool {
        match self {
            Json::Object(entries) => {
                match entries.iter_mut().rev().find(|(k, _)| k == key) {
                    Some((_, v)) => *v = value,
                    None => entries.push((key.to_owned(), value)),
                }
                true
            }
            _ => false,
        }
    }

    /// Takes every entry under `key` out of an object; the last one's value.
    pub fn remove(&mut self, key: &str) -> Option<Json> {
        match self {
            Json::Object(entries) => {
                let mut last = None;
                entries.retain_mut(|(k, v)| {
                    if k == key {
                        last = Some(std::mem::replace(v, Json::Null));
                        false
                    } else {
                        true
                    }
                });
                last
            }
            _ => None,
        }
    }

    /// The object's entries, for changing them.
    pub fn entries_mut(&mut self) -> Option<&mut Vec<(String, Json)>> {
        match self {
            Json::Object(entries) => Some(entries),
            _ => None,
        }
    }

    /// The array's elements, for changing them.
    pub fn array_mut(&mut self) -> Option<&mut Vec<Json>> {
        match self {
            Json::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The string, for a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    /// What kind of value this is, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Number(_) => "a number",
            Json::String(_) => "a string",
            Json::Array(_) => "an array",
            Json::Object(_) => "an object",
        }
    }

    /// Reads JSON text.
    ///
    /// # Errors
    /// serde_json's error (with its line and column) when the text is not JSON.
    pub fn parse(text: &str) -> Result<Json, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// The value as JSON text, pretty-printed with `indent` per level.
    pub fn render(&self, indent: &str) -> String {
        let mut out = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
        let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
        // Invariant: every Json value serialises (string keys, no non-finite numbers).
        match self.serialize(&mut ser) {
            Ok(()) => String::from_utf8(out).unwrap_or_default(),
            Err(_) => String::new(),
        }
    }
}

/// The indentation a JSON text uses: that of its first indented line (two spaces when it has
/// none).
pub(crate) fn indentation(text: &str) -> String {
    text.lines()
        .skip(1)
        .find_map(|l| {
            let indent: String = l.chars().take_while(|c| *c == ' ' || *c == '\t').collect();
            (!indent.is_empty() && indent.len() < l.len()).then_some(indent)
        })
        .unwrap_or_else(|| "  ".to_owned())
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => s.serialize_unit(),
            Json::Bool(b) => s.serialize_bool(*b),
            Json::Number(n) => n.serialize(s),
            Json::String(v) => s.serialize_str(v),
            Json::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Json::Object(entries) => {
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Json, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Json, E> {
        Ok(Json::Number(v.into()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Json, E> {
        Ok(Json::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Json, E> {
        serde_json::Number::from_f64(v)
            .map(Json::Number)
            .ok_or_else(|| E::custom("a number JSON cannot hold"))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Json, E> {
        Ok(Json::String(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Json, E> {
        Ok(Json::String(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut entries = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Json>()? {
            entries.push((k, v));
        }
        Ok(Json::Object(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_keep_their_order_and_the_file_its_indentation() {
        let text = "{\n    \"zeta\": 1,\n    \"alpha\": {\"b\": true, \"a\": [1, 2.5, null]},\n    \"mid\": \"x\"\n}";
        let mut v = Json::parse(text).unwrap();
        assert_eq!(v.render(&indentation(text)), text.replace("{\"b\": true, \"a\": [1, 2.5, null]}", "{\n        \"b\": true,\n        \"a\": [\n            1,\n            2.5,\n            null\n        ]\n    }"));
        v.set("alpha", Json::str("replaced"));
        v.set("new", Json::Null);
        let keys: Vec<&str> = match &v {
            Json::Object(e) => e.iter().map(|(k, _)| k.as_str()).collect(),
            _ => panic!(),
        };
        assert_eq!(keys, ["zeta", "alpha", "mid", "new"]);
        assert_eq!(v.remove("zeta"), Some(Json::Number(1.into())));
        assert_eq!(indentation("{\n\t\"a\": 1\n}"), "\t");
        assert_eq!(indentation("{}"), "  ");
    }
}
