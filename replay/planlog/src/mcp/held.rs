//! [`HeldArguments`]: the arguments of a `plan_write` or task call, taken out of the request
//! line before rmcp parses it and handed to the handler as the client sent them.
//!
//! rmcp parses a request's arguments into a map (buffering them in serde's `Content` first),
//! and the session wants them as text: parsing them there and writing them back out cost a
//! plan_write ~8 µs on the reply path in traced runs (BENCHMARKS.md), and recorded the
//! arguments re-serialized rather than as sent. The framing layer leaves a token in their
//! place (`{"planlog/held":"<token>"}`); the handler takes the text back by it. A token is
//! this process's random prefix and a number, so a client's own arguments name one that is
//! held only by guessing that prefix.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value};

/// The key of the token left in place of held arguments.
const KEY: &str = "planlog/held";

/// At most this many are held: a request rmcp never hands to the handler (it refused it)
/// would otherwise keep its arguments for ever; the oldest goes first.
const MOST: usize = 64;

/// Arguments held for the handler, shared by the framing layer and the server.
#[derive(Debug, Clone)]
pub(crate) struct HeldArguments(Arc<Mutex<Held>>);

#[derive(Debug)]
struct Held {
    prefix: String,
    next: u64,
    texts: VecDeque<(String, String)>,
}

impl HeldArguments {
    /// An empty hold, its tokens' prefix random for this process.
    pub(crate) fn new() -> Self {
        use std::hash::{BuildHasher as _, RandomState};
        let prefix = format!("{:016x}", RandomState::new().hash_one(std::process::id()));
        Self(Arc::new(Mutex::new(Held {
            prefix,
            next: 0,
            texts: VecDeque::new(),
        })))
    }

    /// Holds `text` (a JSON object as the client sent it); returns what stands in its place
    /// in the request: a JSON object naming the token.
    pub(crate) fn hold(&self, text: &str) -> String {
        let mut held = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        held.next += 1;
        let token = format!("{}-{}", held.prefix, held.next);
        if held.texts.len() >= MOST {
            held.texts.pop_front();
            tracing::warn!("dropped held tool arguments whose request never reached the handler");
        }
        held.texts.push_back((token.clone(), text.to_owned()));
        format!("{{\"{KEY}\":\"{token}\"}}")
    }

    /// The text held for `arguments` when they are a token standing for it (taken out of the
    /// hold); `None` for arguments the client sent as they are.
    pub(crate) fn take(&self, arguments: Option<&Map<String, Value>>) -> Option<String> {
        let map = arguments?;
        let token = match (map.len(), map.get(KEY)) {
            (1, Some(Value::String(token))) => token,
            _ => return None,
        };
        let mut held = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let at = held.texts.iter().position(|(t, _)| t == token)?;
        held.texts.remove(at).map(|(_, text)| text)
    }

    /// How many are held (tests).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .texts
            .len()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code

    use super::*;

    fn map(text: &str) -> Map<String, Value> {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn held_text_comes_back_once_by_its_token_and_nothing_else_does() {
        let held = HeldArguments::new();
        let sent = r#"{"steps": [ {"id":"a","content":"x","status":"pending"} ]}"#;
        let token = held.hold(sent);
        assert_eq!(held.take(Some(&map(&token))), Some(sent.to_owned()));
        assert_eq!(held.take(Some(&map(&token))), None, "taken once");
        // A client's own arguments, even shaped like a token, are not held text.
        let other = held.hold("{}");
        let forged = format!(r#"{{"{KEY}":"0000000000000000-1"}}"#);
        assert_eq!(held.take(Some(&map(&forged))), None);
        let with_more = other.replace('}', r#","steps":[]}"#);
        assert_eq!(held.take(Some(&map(&with_more))), None);
        assert_eq!(held.take(None), None);
        assert_eq!(held.len(), 1);
    }

    #[test]
    fn what_is_held_stays_bounded() {
        let held = HeldArguments::new();
        let first = held.hold("{\"n\":0}");
        for n in 1..=MOST {
            held.hold(&format!("{{\"n\":{n}}}"));
        }
        assert_eq!(held.len(), MOST);
        assert_eq!(held.take(Some(&map(&first))), None, "the oldest went first");
    }
}
