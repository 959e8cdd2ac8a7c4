//! [`Recent`]: the events a handle read from the journal lately, decoded, by where their
//! frames start. A frame once committed is never rewritten (compaction needs the store to
//! itself), so a position names one event for the handle's life. A hook call asks for the
//! session's last event three or four times (the head, the plan, the import's checks);
//! decoding it (JSON and its SHA-256) is ~12 µs each time.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use planlog_core::events::Event;

/// How many events are kept.
const KEPT: usize = 8;

/// Records larger than this are not kept: memory stays within `KEPT` times it.
const LARGEST: usize = 64 * 1024;

/// The last [`KEPT`] events read from the journal, by frame position.
#[derive(Debug, Default)]
pub(super) struct Recent {
    events: Mutex<VecDeque<(u64, Arc<Event>)>>,
}

impl Recent {
    /// The event whose frame starts at `at`, if it was read lately.
    pub(super) fn get(&self, at: u64) -> Option<Arc<Event>> {
        let events = self.events.lock().unwrap_or_else(PoisonError::into_inner);
        events
            .iter()
            .find(|(p, _)| *p == at)
            .map(|(_, e)| Arc::clone(e))
    }

    /// Keeps `event`, read from the frame at `at` whose record was `bytes` long.
    pub(super) fn put(&self, at: u64, bytes: usize, event: &Event) {
        if bytes > LARGEST {
            return;
        }
        let mut events = self.events.lock().unwrap_or_else(PoisonError::into_inner);
        if events.iter().any(|(p, _)| *p == at) {
            return;
        }
        if events.len() == KEPT {
            events.pop_front();
        }
        events.push_back((at, Arc::new(event.clone())));
    }
}

#[cfg(test)]
mod tests {
    use planlog_core::testkit::{seal_after, sid, written};

    use super::*;

    #[test]
    fn keeps_the_last_few_and_nothing_large() {
        let recent = Recent::default();
        let s = sid("01JHAAAAAAAAAAAAAAAAAAAAAA");
        let mut last = None;
        for at in 0..(KEPT as u64 + 2) {
            let e = seal_after(last.as_ref(), &s, None, written(vec![]));
            recent.put(at * 100, 500, &e);
            last = Some(e);
        }
        assert!(recent.get(0).is_none() && recent.get(100).is_none());
        assert_eq!(
            recent.get(KEPT as u64 * 100 + 100).as_deref(),
            last.as_ref()
        );
        let big = seal_after(last.as_ref(), &s, None, written(vec![]));
        recent.put(5_000, LARGEST + 1, &big);
        assert!(recent.get(5_000).is_none());
    }
}
