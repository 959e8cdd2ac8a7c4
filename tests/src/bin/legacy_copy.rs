//! Copies one session of a store into a new store of the redb layout (store format 2, as
//! before the journal), event for event: the same session in both layouts, to measure
//! reads side by side (BENCHMARKS.md § One million events).
//!
//! Usage: `legacy_copy STORE SESSION OUT`
#![allow(clippy::unwrap_used, clippy::expect_used)] // measurement tool

use planlog_core::{EventLog, Seq, SessionId};
use planlog_store::{JournaledLog, RedbLog};

fn main() {
    let mut args = std::env::args().skip(1);
    let usage = "usage: legacy_copy STORE SESSION OUT";
    let (store, session, out) = (
        args.next().expect(usage),
        args.next().expect(usage),
        args.next().expect(usage),
    );
    let from = JournaledLog::options()
        .read_only(true)
        .open(&store)
        .unwrap();
    let to = RedbLog::open(&out).unwrap();
    let session = SessionId::new(session).unwrap();
    let mut copied = 0;
    for chunk in from.scan(&session, Seq::FIRST) {
        let events = chunk.unwrap();
        to.append_all(&events).unwrap();
        copied += events.len();
    }
    eprintln!("{copied} events copied");
}
