//! Fail-open appends: a log that fails N times then recovers loses nothing, stores every
//! event once, in order; a failure that outlives close is reported by it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use planlog_core::conformance::{FaultyLog, assert_chain, item, seal_after, sid, started, written};
use planlog_core::{Event, EventLog, Origin, Outbox, PlanStatus, Seq};
use planlog_tests::TempStore;

/// Seals the next event after whatever is newest: unsaved in the outbox, else stored.
fn next(log: &dyn EventLog, outbox: &Outbox, n: usize) -> Event {
    let s = sid("s1");
    let last = outbox.newest().cloned().or_else(|| log.last(&s).unwrap());
    let body = match &last {
        None => started(Origin::New),
        Some(_) => written(vec![item(&n.to_string(), "x", PlanStatus::InProgress)]),
    };
    seal_after(last.as_ref(), &s, Some(&format!("call-{n}")), body)
}

#[test]
fn failing_three_times_then_recovering_stores_every_event_once_in_order() {
    let TempStore {
        log: redb,
        dir: _dir,
    } = TempStore::new();
    let log = FaultyLog::new(redb);
    let mut outbox = Outbox::new();
    let mut sealed = Vec::new();
    for n in 0..8 {
        if n == 2 {
            log.fail_next(3, false);
        }
        let e = next(&log, &outbox, n);
        sealed.push(e.clone());
        let result = outbox.append(&log, e);
        // Appends 2, 3 and 4 fail and stay queued; append 5 retries them first.
        assert_eq!(
            result.is_err(),
            (2..5).contains(&n),
            "append {n}: {result:?}"
        );
        assert_eq!(outbox.len(), if (2..5).contains(&n) { n - 1 } else { 0 });
    }
    outbox.flush(&log).unwrap();
    let stored = log.read(&sid("s1"), Seq::FIRST, None).unwrap();
    assert_eq!(stored, sealed);
    assert_chain(&stored);
    assert_eq!(log.failures.load(std::sync::atomic::Ordering::SeqCst), 3);
}

#[test]
fn a_failure_that_lands_anyway_is_not_stored_twice() {
    let TempStore {
        log: redb,
        dir: _dir,
    } = TempStore::new();
    let log = FaultyLog::new(redb);
    let mut outbox = Outbox::new();
    let mut sealed = Vec::new();
    for n in 0..5 {
        if n == 1 {
            log.fail_next(2, true);
        }
        let e = next(&log, &outbox, n);
        sealed.push(e.clone());
        // The write landed, so the outbox sees it stored despite the error.
        outbox.append(&log, e).unwrap();
    }
    let stored = log.read(&sid("s1"), Seq::FIRST, None).unwrap();
    assert_eq!(stored, sealed);
}

#[test]
fn close_reports_a_failure_that_never_recovers_and_keeps_the_events() {
    let log = FaultyLog::new(planlog_core::MemoryLog::new());
    let mut outbox = Outbox::new();
    outbox.append(&log, next(&log, &outbox, 0)).unwrap();
    log.fail_next(usize::MAX, false);
    for n in 1..4 {
        assert!(outbox.append(&log, next(&log, &outbox, n)).is_err());
    }
    let err = outbox.flush(&log).unwrap_err();
    assert!(err.to_string().contains("no space left"), "{err}");
    assert_eq!(outbox.len(), 3);
    let seqs: Vec<u64> = outbox.pending().map(|e| e.seq.get()).collect();
    assert_eq!(seqs, [2, 3, 4]);
    // The disk comes back: the same outbox drains.
    log.fail_next(0, false);
    outbox.flush(&log).unwrap();
    assert_chain(&log.read(&sid("s1"), Seq::FIRST, None).unwrap());
    assert_eq!(log.last(&sid("s1")).unwrap().unwrap().seq.get(), 4);
}
