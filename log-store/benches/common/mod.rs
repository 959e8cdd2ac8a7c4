//! What the store benchmarks share: the typical event they append (an 8-item plan_write) and
//! percentiles.
#![allow(dead_code)] // each benchmark uses part of it

use std::time::Duration;

use planlog_core::testkit::{eight_items, sealed_after, started, written};
use planlog_core::{
    EventLog, SessionId,
    events::{Event, Origin, SealedEvent},
};

/// The session's next typical event after `last`: its start, then 8-item plan_writes.
pub(crate) fn next_event(s: &SessionId, last: Option<&Event>) -> Event {
    next_sealed(s, last).into_event()
}

/// [`next_event`] sealed with its canonical bytes, as planlog's writers (the recorder, imports
/// and hooks) hand events to a store ([`EventLog::append_sealed`]).
pub(crate) fn next_sealed(s: &SessionId, last: Option<&Event>) -> SealedEvent {
    let n = last.map_or(0, |e| e.seq.get());
    match last {
        None => sealed_after(None, s, None, started(Origin::New)),
        Some(_) => sealed_after(last, s, Some(&format!("call-{n}")), written(eight_items(n))),
    }
}

pub(crate) fn pct(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

pub(crate) fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// Appends a session of `len` typical events to `log`, 5,000 per batch.
pub(crate) fn build_session(log: &dyn EventLog, s: &SessionId, len: u64) {
    let mut last: Option<Event> = None;
    let mut chunk: Vec<Event> = Vec::new();
    for _ in 0..len {
        let e = next_event(s, chunk.last().or(last.as_ref()));
        chunk.push(e);
        if chunk.len() == 5000 {
            log.append_all(&chunk).unwrap();
            last = chunk.pop();
            chunk.clear();
        }
    }
    if !chunk.is_empty() {
        log.append_all(&chunk).unwrap();
    }
}

/// A fixed xorshift sequence of numbers in `1..=n`: the same lookups in every run.
pub(crate) fn seeded_rand() -> impl FnMut(u64) -> u64 {
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    move |n: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % n + 1
    }
}
