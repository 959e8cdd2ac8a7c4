//! Builds a large store for limit and memory measurements (BENCHMARKS.md § Limits):
//! one session of EVENTS 8-item plan writes plus SESSIONS small sessions.
//!
//! Usage: `make_store STORE EVENTS SESSIONS`
#![allow(clippy::unwrap_used, clippy::expect_used)] // measurement tool

use planlog_core::testkit::{item, seal_after, sid, started, written};
use planlog_core::{
    EventLog, PlanStatus,
    events::{Event, Origin},
};
use planlog_store::RedbLog;

fn main() {
    let mut args = std::env::args().skip(1);
    let store = args
        .next()
        .expect("usage: make_store STORE EVENTS SESSIONS");
    let events: u64 = args.next().and_then(|n| n.parse().ok()).unwrap_or(100_000);
    let sessions: u64 = args.next().and_then(|n| n.parse().ok()).unwrap_or(10_000);
    let log = RedbLog::open(&store).unwrap();
    let long = sid("long");
    let mut batch: Vec<Event> = Vec::new();
    let mut last: Option<Event> = None;
    for n in 0..events {
        let body = if n == 0 {
            started(Origin::New)
        } else {
            written(
                (0..8)
                    .map(|i| {
                        item(
                            &i.to_string(),
                            &format!("Implement part {i} (write {n})"),
                            if i < 4 && n > 1 {
                                PlanStatus::Completed
                            } else {
                                PlanStatus::InProgress
                            },
                        )
                    })
                    .collect(),
            )
        };
        let e = seal_after(last.as_ref(), &long, Some(&format!("c{n}")), body);
        last = Some(e.clone());
        batch.push(e);
        if batch.len() == 5000 {
            log.append_all(&batch).unwrap();
            batch.clear();
        }
    }
    for k in 0..sessions {
        let s = sid(&format!("small{k}"));
        let first = seal_after(None, &s, None, started(Origin::New));
        let second = seal_after(
            Some(&first),
            &s,
            Some("c1"),
            written(vec![item("1", "one item", PlanStatus::InProgress)]),
        );
        batch.push(first);
        batch.push(second);
        if batch.len() >= 5000 {
            log.append_all(&batch).unwrap();
            batch.clear();
        }
    }
    log.append_all(&batch).unwrap();
    println!("{store}: {events} events in one session, {sessions} more sessions");
}
