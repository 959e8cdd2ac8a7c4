//! Encoding an event, side by side in one run: the canonical bytes (RFC 8785) and the hash of
//! a typical event (an 8-item plan_write), written directly (`Event::encode`,
//! `Event::compute_hash`) against the reference path through a `serde_json::Value`
//! (`to_canonical_vec`), which every event took before. The two give the same bytes (checked
//! here, and tested in the crate); the ratio is what this measures.
//!
//! `cargo bench -p planlog-core --bench encode --features testkit`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // benchmark code: a failure ends the run

use std::time::{Duration, Instant};

use planlog_core::events::{Canonical, Hash, Origin, to_canonical_vec};
use planlog_core::testkit::{eight_items, seal_after, sid, started, written};

const ROUNDS: usize = 15;
const PER_ROUND: usize = 2_000;

fn main() {
    let s = sid("bench");
    let first = seal_after(None, &s, None, started(Origin::New));
    let event = seal_after(Some(&first), &s, Some("call-1"), written(eight_items(1)));
    let by_value = || to_canonical_vec(&serde_json::to_value(&event).unwrap(), Canonical::Jcs);
    let hash_by_value = || {
        let mut v = serde_json::to_value(&event).unwrap();
        v.as_object_mut().unwrap().remove("hash");
        Hash::of(&to_canonical_vec(&v, Canonical::Jcs))
    };
    assert_eq!(event.encode(), by_value(), "the two paths give other bytes");
    assert_eq!(event.compute_hash(), hash_by_value());
    assert_eq!(event.compute_hash(), event.hash);

    let time = |f: &dyn Fn()| {
        let t = Instant::now();
        for _ in 0..PER_ROUND {
            f();
        }
        t.elapsed() / PER_ROUND as u32
    };
    let (mut enc_new, mut enc_old, mut hash_new, mut hash_old) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        enc_new.push(time(&|| drop(std::hint::black_box(event.encode()))));
        enc_old.push(time(&|| drop(std::hint::black_box(by_value()))));
        hash_new.push(time(&|| {
            std::hint::black_box(event.compute_hash());
        }));
        hash_old.push(time(&|| {
            std::hint::black_box(hash_by_value());
        }));
    }
    let median = |mut v: Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let bytes = event.encode().len();
    for (what, new, old) in [
        ("encode", median(enc_new), median(enc_old)),
        ("hash", median(hash_new), median(hash_old)),
    ] {
        println!(
            "{what} ({bytes} bytes): direct {new:?}, through a Value {old:?} ({:.2} x faster; medians of {ROUNDS} rounds of {PER_ROUND})",
            old.as_secs_f64() / new.as_secs_f64()
        );
    }
}
