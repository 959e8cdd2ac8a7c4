//! Fail-open writes: a log that fails N times then recovers loses nothing and stores every
//! call once, in order; a failure that outlives close is reported by it; and only storage
//! failures are kept in memory: a lost race with another writer is decided again, never
//! parked, and an unsaved call whose place another writer took is decided again after it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering::SeqCst};

use planlog_core::testkit::{FaultyLog, assert_chain, sid};
use planlog_core::{
    EventLog, MemoryLog, PlanSession, Seq, TestEnv, WriteStatus, events::EventBody,
};
use planlog_tests::TempStore;
use serde_json::json;

fn item(id: &str, status: &str) -> String {
    json!({"steps": [{"id": id, "content": format!("item {id}"), "status": status}]}).to_string()
}

fn open(log: Arc<dyn EventLog>) -> PlanSession {
    PlanSession::builder(log, Arc::new(TestEnv::default())).open_or_fresh(&sid("s1"))
}

fn unsaved(status: &WriteStatus) -> bool {
    matches!(status, WriteStatus::Unsaved(_))
}

#[test]
fn failing_three_times_then_recovering_stores_every_call_once_in_order() {
    let TempStore {
        log: redb,
        dir: _dir,
    } = TempStore::new();
    let log = Arc::new(FaultyLog::new(redb));
    let mut s = open(log.clone());
    for n in 0..8 {
        if n == 2 {
            log.fail_next(3, false);
        }
        let outcome = s.plan_write(
            Some(&format!("call-{n}")),
            None,
            &item(&n.to_string(), "in_progress"),
        );
        assert!(!outcome.result().is_error, "call {n}");
        // Calls 2, 3 and 4 fail and wait in memory; call 5 stores them first.
        assert_eq!(
            unsaved(outcome.status()),
            (2..5).contains(&n),
            "call {n}: {:?}",
            outcome.status()
        );
        assert_eq!(s.unsaved(), if (2..5).contains(&n) { n - 1 } else { 0 });
    }
    s.close().unwrap();
    let stored = log.read(&sid("s1"), Seq::FIRST, None).unwrap();
    assert_chain(&stored);
    let calls: Vec<&str> = stored
        .iter()
        .filter_map(|e| e.call_id.as_ref().map(|c| c.as_str()))
        .collect();
    let expected: Vec<String> = (0..8).map(|n| format!("call-{n}")).collect();
    assert_eq!(
        calls,
        expected.iter().map(String::as_str).collect::<Vec<_>>()
    );
    assert_eq!(planlog_core::fold(&stored).plan, s.plan());
    assert_eq!(log.failures.load(std::sync::atomic::Ordering::SeqCst), 3);
}

#[test]
fn a_failure_that_lands_anyway_is_not_stored_twice() {
    let TempStore {
        log: redb,
        dir: _dir,
    } = TempStore::new();
    let log = Arc::new(FaultyLog::new(redb));
    let mut s = open(log.clone());
    s.plan_write(Some("c0"), None, &item("0", "in_progress"))
        .durable()
        .unwrap();
    log.fail_next(2, true);
    for n in 1..5 {
        let outcome = s.plan_write(
            Some(&format!("c{n}")),
            None,
            &item(&n.to_string(), "in_progress"),
        );
        assert!(!outcome.result().is_error);
    }
    s.close().unwrap();
    let stored = log.read(&sid("s1"), Seq::FIRST, None).unwrap();
    assert_chain(&stored);
    assert_eq!(stored.len(), 6, "session_started and five calls, each once");
    assert_eq!(planlog_core::fold(&stored).plan, s.plan());
}

#[test]
fn close_reports_a_failure_that_never_recovers_and_keeps_the_calls() {
    let log = Arc::new(FaultyLog::new(MemoryLog::new()));
    let mut s = open(log.clone());
    s.plan_write(Some("c0"), None, &item("0", "in_progress"))
        .durable()
        .unwrap();
    log.fail_next(usize::MAX, false);
    for n in 1..4 {
        let outcome = s.plan_write(
            Some(&format!("c{n}")),
            None,
            &item(&n.to_string(), "pending"),
        );
        assert!(unsaved(outcome.status()));
    }
    let err = s.close().unwrap_err();
    assert!(err.to_string().contains("no space left"), "{err}");
    assert_eq!(s.unsaved(), 3);
    // The disk comes back: the same session stores what it kept, in order.
    log.fail_next(0, false);
    s.close().unwrap();
    let stored = log.read(&sid("s1"), Seq::FIRST, None).unwrap();
    assert_chain(&stored);
    assert_eq!(stored.len(), 5);
    assert_eq!(planlog_core::fold(&stored).plan, s.plan());
}

#[test]
fn a_lost_race_is_decided_again_not_parked() {
    let log: Arc<dyn EventLog> = Arc::new(MemoryLog::new());
    let mut a = open(log.clone());
    let mut b = open(log.clone());
    a.plan_write(Some("a1"), None, &item("a", "in_progress"))
        .durable()
        .unwrap();
    // b has not seen a's events: its next write catches up first (session_started adopted).
    let out = b.plan_write(Some("b1"), None, &item("b", "in_progress"));
    assert_eq!(out.status(), &WriteStatus::Stored(Seq::new(3).unwrap()));
    assert_eq!(b.unsaved(), 0);
    // a is now stale: its write lands after b's, against the plan holding both items.
    let out = a.plan_write(Some("a2"), None, &item("c", "pending"));
    assert_eq!(out.status(), &WriteStatus::Stored(Seq::new(4).unwrap()));
    assert_eq!(a.unsaved(), 0);
    let stored = log.read(&sid("s1"), Seq::FIRST, None).unwrap();
    assert_chain(&stored);
    assert_eq!(
        stored
            .iter()
            .filter(|e| e.body.kind() == "session_started")
            .count(),
        1
    );
    let ids: Vec<String> = a.plan().items().iter().map(|i| i.id.to_string()).collect();
    assert_eq!(
        ids,
        ["a", "b", "c"],
        "started items of both writers are kept"
    );
    // The result a got is the plan recorded at seq 4.
    assert_eq!(out.result().content, stored[3].plan().unwrap().to_json());
}

/// An [`Env`] that counts the back-off pauses asked of it.
#[derive(Default)]
struct CountingPauses {
    env: TestEnv,
    pauses: AtomicU32,
}

impl planlog_core::Env for CountingPauses {
    fn now(&self) -> planlog_core::Timestamp {
        self.env.now()
    }

    fn new_ulid(&self) -> ulid::Ulid {
        self.env.new_ulid()
    }

    fn pause(&self, _attempt: u32) {
        self.pauses.fetch_add(1, SeqCst);
    }
}

#[test]
fn a_call_asks_the_log_for_its_head_only_after_another_writer_moved_it() {
    let log = Arc::new(FaultyLog::new(MemoryLog::new()));
    let env = Arc::new(CountingPauses::default());
    let dynlog: Arc<dyn EventLog> = log.clone();
    let mut a = PlanSession::builder(dynlog.clone(), env.clone()).open_or_fresh(&sid("s1"));
    let mut b = PlanSession::builder(dynlog, env.clone()).open_or_fresh(&sid("s1"));
    a.plan_write(Some("a1"), None, &item("a", "in_progress"))
        .durable()
        .unwrap();
    b.plan_write(Some("b1"), None, &item("b", "in_progress"))
        .durable()
        .unwrap();
    // a's next calls, with nobody else writing, are decided on what a stored: no lookups.
    let heads = log.heads.load(SeqCst);
    a.plan_write(Some("a2"), None, &item("c", "pending"))
        .durable()
        .unwrap();
    let after_race = log.heads.load(SeqCst);
    assert_eq!(after_race - heads, 1, "the lost race caught up once");
    assert_eq!(
        env.pauses.load(SeqCst),
        0,
        "a call that could not have seen the other write backed off"
    );
    // Decided again after b's write: b's started item is kept beside a's.
    let ids = |s: &PlanSession| -> Vec<String> {
        s.plan().items().iter().map(|i| i.id.to_string()).collect()
    };
    assert_eq!(ids(&a), ["a", "b", "c"]);
    for n in 3..6 {
        a.plan_write(
            Some(&format!("a{n}")),
            None,
            &item(&format!("d{n}"), "pending"),
        )
        .durable()
        .unwrap();
    }
    assert_eq!(
        log.heads.load(SeqCst),
        after_race,
        "a call looked up a head nobody had moved"
    );
    assert_eq!(ids(&a), ["a", "b", "d5"]);
    // A read records nothing, so nothing would refuse a stale answer: it looks first.
    b.plan_write(Some("b2"), None, &item("e", "in_progress"))
        .durable()
        .unwrap();
    let read = a.plan_write(None, None, "{}");
    assert!(
        read.result().content.contains("\"e\""),
        "{}",
        read.result().content
    );
    assert_eq!(ids(&a), ["a", "b", "e"]);
    let stored = log.read(&sid("s1"), Seq::FIRST, None).unwrap();
    assert_chain(&stored);
    assert_eq!(planlog_core::fold(&stored).plan, a.plan());
}

#[test]
fn an_unsaved_call_whose_place_was_taken_is_decided_again_after_the_other_writer() {
    let TempStore { log: redb, dir } = TempStore::new();
    let shared = Arc::new(FaultyLog::new(redb));
    let faulty: Arc<dyn EventLog> = shared.clone();
    let mut a = open(faulty);
    a.plan_write(Some("a0"), None, &item("x", "pending"))
        .durable()
        .unwrap();
    shared.fail_next(1, false);
    // a's storage fails: its call completes x in memory only.
    let kept = a.plan_write(Some("a1"), None, &item("x", "in_progress"));
    assert!(unsaved(kept.status()));
    // Meanwhile another writer, with its own handle on the store, cancels x.
    let healthy: Arc<dyn EventLog> =
        Arc::new(planlog_store::RedbLog::open(dir.path().join("planlog.redb")).unwrap());
    let mut b = open(healthy);
    b.plan_write(Some("b1"), None, &item("x", "cancelled"))
        .durable()
        .unwrap();
    // a's next call stores its kept call first, decided again after b's event.
    let next = a.plan_write(Some("a2"), None, &item("y", "pending"));
    assert_eq!(next.status(), &WriteStatus::Stored(Seq::new(5).unwrap()));
    let stored = shared.read(&sid("s1"), Seq::FIRST, None).unwrap();
    assert_chain(&stored);
    let calls: Vec<&str> = stored
        .iter()
        .filter_map(|e| e.call_id.as_ref().map(|c| c.as_str()))
        .collect();
    assert_eq!(calls, ["a0", "b1", "a1", "a2"][..]);
    assert_eq!(stored.len(), 5);
    // a1 was decided again after b1 (cancelled -> in_progress is allowed).
    assert!(matches!(stored[3].body, EventBody::PlanWritten(_)));
    assert_eq!(
        stored[3].plan().unwrap().items()[0].status,
        planlog_core::PlanStatus::InProgress
    );
    assert_eq!(planlog_core::fold(&stored).plan, a.plan());
}
