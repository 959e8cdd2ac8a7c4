//! Reading one big JSON document (an opencode export, an old Gemini recording) without holding
//! it: the top-level object's fields are handed over one by one, and the arrays a format
//! names (its messages) one element at a time, so memory holds one message. Each element
//! comes with the line it starts on.

use std::cell::Cell;
use std::io::Read;
use std::rc::Rc;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::Stopped;
use super::record::BadLine;

/// What a format does with the parts of a document.
pub(crate) trait Fields {
    /// Whether the array under `key` is handed over element by element.
    fn streams(&self, key: &str) -> bool;
    /// A top-level field (not streamed).
    ///
    /// # Errors
    /// [`Stopped`] when the records' reader went away.
    fn field(&mut self, key: &str, value: Value) -> Result<(), Stopped>;
    /// An element of the streamed array under `key`, and the (1-based) line it starts on.
    ///
    /// # Errors
    /// [`Stopped`] when the records' reader went away.
    fn element(&mut self, key: &str, line: u64, value: Value) -> Result<(), Stopped>;
}

/// How reading a document ended early.
pub(crate) enum Ended {
    /// The records' reader went away.
    Stopped,
    /// The document is not JSON, or its top level is not an object.
    Bad(BadLine),
    /// The source could not be read.
    Io(std::io::Error),
}

/// Streams `reader`'s top-level object through `fields`.
///
/// # Errors
/// [`Ended`].
pub(crate) fn stream(reader: impl Read, fields: &mut dyn Fields) -> Result<(), Ended> {
    let mut stopped = false;
    let position = Rc::new(Position::default());
    let mut de = serde_json::Deserializer::from_reader(Counting {
        inner: reader,
        position: Rc::clone(&position),
    });
    let result = Top {
        fields,
        stopped: &mut stopped,
        position: &position,
    }
    .deserialize(&mut de)
    .and_then(|()| de.end());
    match result {
        Ok(()) => Ok(()),
        Err(_) if stopped => Err(Ended::Stopped),
        Err(e) if e.is_io() => Err(Ended::Io(std::io::Error::other(e.to_string()))),
        Err(e) => Err(Ended::Bad(BadLine {
            line: e.line() as u64,
            why: format!("not valid JSON here ({e})"),
        })),
    }
}

/// Where the reader is: the lines read so far, and the line the next element starts on.
#[derive(Default)]
struct Position {
    newlines: Cell<u64>,
    /// Set when an element ended: the next significant byte starts the next one.
    waiting: Cell<bool>,
    start: Cell<u64>,
}

/// A reader that counts lines as serde_json takes bytes (it takes them one at a time).
struct Counting<R> {
    inner: R,
    position: Rc<Position>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let p = &self.position;
        for &b in &buf[..n] {
            match b {
                b'\n' => p.newlines.set(p.newlines.get() + 1),
                b' ' | b'\t' | b'\r' | b',' | b':' | b'[' => {}
                _ if p.waiting.get() => {
                    p.waiting.set(false);
                    p.start.set(p.newlines.get() + 1);
                }
                _ => {}
            }
        }
        Ok(n)
    }
}

struct Top<'f> {
    fields: &'f mut dyn Fields,
    stopped: &'f mut bool,
    position: &'f Position,
}

impl<'de> DeserializeSeed<'de> for Top<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Top<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if self.fields.streams(&key) {
                self.position.waiting.set(true);
                map.next_value_seed(Elements {
                    key: &key,
                    fields: &mut *self.fields,
                    stopped: &mut *self.stopped,
                    position: self.position,
                })?;
            } else {
                let value: Value = map.next_value()?;
                if self.fields.field(&key, value).is_err() {
                    *self.stopped = true;
                    return Err(de::Error::custom("stopped"));
                }
            }
        }
        Ok(())
    }
}

struct Elements<'f> {
    key: &'f str,
    fields: &'f mut dyn Fields,
    stopped: &'f mut bool,
    position: &'f Position,
}

impl<'de> DeserializeSeed<'de> for Elements<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Elements<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(value) = seq.next_element::<Value>()? {
            let line = self.position.start.get();
            self.position.waiting.set(true);
            if self.fields.element(self.key, line, value).is_err() {
                *self.stopped = true;
                return Err(de::Error::custom("stopped"));
            }
        }
        Ok(())
    }

    // Anything else under a streamed key is not what the format expects: skipped whole.
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(())
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Seen(Vec<String>);

    impl Fields for Seen {
        fn streams(&self, key: &str) -> bool {
            key == "messages"
        }
        fn field(&mut self, key: &str, value: Value) -> Result<(), Stopped> {
            self.0.push(format!("{key}={value}"));
            Ok(())
        }
        fn element(&mut self, key: &str, line: u64, value: Value) -> Result<(), Stopped> {
            self.0.push(format!("{key}@{line}={value}"));
            if value == "stop" {
                Err(Stopped)
            } else {
                Ok(())
            }
        }
    }

    #[test]
    fn fields_and_elements_arrive_in_document_order() {
        let doc = b"{\"info\": {\"id\": 1},\n \"messages\": [\n  1,\n\n  {\n \"a\": 2}],\n \"other\": null, \"messages\": 7}";
        let mut seen = Seen::default();
        assert!(stream(&doc[..], &mut seen).is_ok());
        assert_eq!(
            seen.0,
            [
                "info={\"id\":1}",
                "messages@3=1",
                "messages@5={\"a\":2}",
                "other=null"
            ]
        );
    }

    #[test]
    fn a_stop_and_a_syntax_error_end_the_read_differently() {
        let mut seen = Seen::default();
        let stopped = stream(&br#"{"messages": ["stop", 2]}"#[..], &mut seen);
        assert!(matches!(stopped, Err(Ended::Stopped)));
        let broken = stream(&b"{\"messages\": [1,\n\n oops]}"[..], &mut Seen::default());
        assert!(matches!(broken, Err(Ended::Bad(b)) if b.line == 3));
        let not_object = stream(&b"[1, 2]"[..], &mut Seen::default());
        assert!(matches!(not_object, Err(Ended::Bad(_))));
    }
}
