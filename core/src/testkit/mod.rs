//! The conformance suite every [`EventLog`] implementation must pass (feature
//! `conformance`). Each check is a function over a fresh, empty log; the
//! [`eventlog_conformance!`](crate::eventlog_conformance) macro turns them into one
//! `#[test]` each:
//!
//! ```text
//! planlog_core::eventlog_conformance!(|| planlog_core::MemoryLog::new());
//! ```
//!
//! The factory returns anything that is `AsRef<dyn EventLog>` (so a durable log can keep
//! its temporary folder alive beside it). These are test helpers: they panic on failure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use crate::domain::canonical::Hash;
use crate::domain::error::{LogError, UserError};
use crate::domain::event::{
    Event, EventBody, EventDraft, ModeSelected, Origin, Placement, PlanWritten, SessionStarted,
    WriteSemantics,
};
use crate::domain::ids::{CallId, ItemId, Seq, SessionId};
use crate::domain::limits::SCAN_CHUNK;
use crate::domain::log::{Appended, EventLog};
use crate::domain::memory_log::MemoryLog;
use crate::domain::plan::{Plan, PlanItem, PlanStatus};
use crate::domain::sealed::SealedEvent;
use crate::domain::state::fold;
use crate::domain::time::Timestamp;

mod faulty_log;

pub use faulty_log::FaultyLog;

impl AsRef<dyn EventLog> for MemoryLog {
    fn as_ref(&self) -> &(dyn EventLog + 'static) {
        self
    }
}

/// Generates one `#[test]` per conformance check, each on a fresh log from `$make`. With
/// `optional`, `$make` returns an `Option` and a `None` ends the test at once (a backend
/// whose server is not there: the maker says SKIPPED, or fails when the run requires it).
#[macro_export]
macro_rules! eventlog_conformance {
    (optional $make:expr) => {
        $crate::eventlog_conformance!(@list $make);
    };
    ($make:expr) => {
        $crate::eventlog_conformance!(@list (|| ::core::option::Option::Some(($make)())));
    };
    (@list $make:expr) => {
        $crate::eventlog_conformance!(@each $make;
            append_then_read_round_trips,
            first_event_must_be_session_started,
            seq_gap_is_a_conflict_and_writes_nothing,
            racing_append_at_same_seq_conflicts,
            broken_prev_hash_is_refused,
            tampered_event_is_refused,
            duplicate_call_id_returns_recorded_event,
            sealed_appends_are_checked_as_appends,
            call_ids_are_scoped_to_their_session,
            unknown_session_reads_and_appends,
            delete_removes_everything_and_forbids_reuse,
            a_deleted_session_comes_back_only_restored_whole_from_its_export,
            head_is_the_last_event_or_none,
            catalogue_tracks_progress_mode_and_lineage,
            state_at_equals_fold_of_prefix,
            state_index_agrees_with_state_at,
            read_ranges_are_inclusive_and_clipped,
            sessions_are_isolated,
            session_started_only_first,
            append_all_is_atomic,
            find_call_finds_recorded_calls_in_their_session_only,
            append_iter_streams_atomically,
            sealed_streams_are_checked_as_streams,
            scan_reads_the_whole_session_a_chunk_at_a_time
        );
    };
    (@each $make:expr; $($check:ident),* $(,)?) => {
        $(
            #[test]
            fn $check() {
                let ::core::option::Option::Some(holder) = ($make)() else {
                    return;
                };
                let log: &dyn $crate::EventLog = ::core::convert::AsRef::as_ref(&holder);
                $crate::testkit::$check(log);
            }
        )*
    };
}

/// A session id for tests.
pub fn sid(s: &str) -> SessionId {
    SessionId::new(s).unwrap()
}

/// An item for tests.
pub fn item(id: &str, content: &str, status: PlanStatus) -> PlanItem {
    PlanItem::new(ItemId::new(id).unwrap(), content, status)
}

/// `len` letters that do not compress (a fixed pseudo-random sequence from `seed`): content
/// that really grows a store, whose records are compressed.
pub fn noise(len: usize, seed: u64) -> String {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            char::from(b'a' + (x % 26) as u8)
        })
        .collect()
}

/// The benchmarks' typical plan: 8 items, 4 completed, 1 in progress, 3 pending; `n` (the
/// write's number) in each text, so each write differs.
pub fn eight_items(n: u64) -> Vec<PlanItem> {
    (0..8)
        .map(|i| {
            let status = match i {
                0..=3 => PlanStatus::Completed,
                4 => PlanStatus::InProgress,
                _ => PlanStatus::Pending,
            };
            item(
                &format!("step-{i}"),
                &format!("Implement part {i} of the config loader (write {n})"),
                status,
            )
        })
        .collect()
}

/// Seals `body` after `last`, with ids and times derived from the seq (deterministic).
pub fn seal_after(
    last: Option<&Event>,
    session: &SessionId,
    call: Option<&str>,
    body: EventBody,
) -> Event {
    sealed_after(last, session, call, body).into_event()
}

/// [`seal_after`], the event's canonical bytes kept ([`EventLog::append_sealed`]).
pub fn sealed_after(
    last: Option<&Event>,
    session: &SessionId,
    call: Option<&str>,
    body: EventBody,
) -> SealedEvent {
    let seq = last.map_or(1, |e| e.seq.get() + 1);
    let placement = Placement::after(
        last,
        session.clone(),
        ulid::Ulid::from_parts(1_700_000_000_000 + seq, u128::from(seq)),
        Timestamp::from_millis(1_700_000_000_000 + i64::try_from(seq).unwrap() * 1000),
    );
    let draft = EventDraft {
        turn: Some(seq),
        call_id: call.map(|c| CallId::new(c).unwrap()),
        body,
    };
    SealedEvent::seal(placement, draft)
}

/// A placement of `session` after `last` whose link to the event before is `prev` instead
/// (a broken link, or a link to another session's event).
fn placed_with_prev(last: Option<&Event>, session: &SessionId, prev: Hash) -> Placement {
    let mut placement = Placement::after(
        last,
        session.clone(),
        ulid::Ulid::from_parts(9, 9),
        Timestamp::from_millis(0),
    );
    placement.prev = Some(prev);
    placement
}

/// A `session_started` body.
pub fn started(origin: Origin) -> EventBody {
    EventBody::SessionStarted(SessionStarted {
        origin,
        label: None,
        plan: Plan::new(),
        plan_mode: false,
        ids_issued: None,
    })
}

/// A `plan_written` body setting the plan to `items`.
pub fn written(items: Vec<PlanItem>) -> EventBody {
    EventBody::PlanWritten(PlanWritten {
        semantics: WriteSemantics::Merge,
        submitted: items.clone(),
        plan: Plan::from_items(items),
        explanation: None,
        source: None,
        ids_issued: None,
        tool_call: None,
    })
}

/// Every event of every session in `log`, encoded, sessions in id order: two logs hold the
/// same history exactly when these are equal.
pub fn every_event(log: &dyn EventLog) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = log
        .sessions()
        .unwrap()
        .into_iter()
        .map(|s| {
            let events = log.read(&s.id, Seq::FIRST, None).unwrap();
            let encoded = events
                .iter()
                .map(|e| String::from_utf8_lossy(&e.encode()).into_owned())
                .collect();
            (s.id.to_string(), encoded)
        })
        .collect();
    out.sort();
    out
}

/// Appends a new session with `n` plan writes; returns its events.
pub fn seed(log: &dyn EventLog, session: &SessionId, n: usize) -> Vec<Event> {
    let mut events: Vec<Event> = Vec::new();
    let first = seal_after(None, session, None, started(Origin::New));
    log.append(&first).unwrap();
    events.push(first);
    for i in 0..n {
        let items = (0..=i)
            .map(|j| {
                item(
                    &j.to_string(),
                    &format!("step {j}"),
                    if j < i {
                        PlanStatus::Completed
                    } else {
                        PlanStatus::InProgress
                    },
                )
            })
            .collect();
        let e = seal_after(
            events.last(),
            session,
            Some(&format!("call-{i}")),
            written(items),
        );
        assert!(matches!(log.append(&e).unwrap(), Appended::Stored(_)));
        events.push(e);
    }
    events
}

pub fn append_then_read_round_trips(log: &dyn EventLog) {
    let s = sid("s1");
    let events = seed(log, &s, 3);
    assert_eq!(log.read(&s, Seq::FIRST, None).unwrap(), events);
    assert_eq!(log.last(&s).unwrap().as_ref(), events.last());
}

pub fn first_event_must_be_session_started(log: &dyn EventLog) {
    let s = sid("s1");
    let e = seal_after(
        None,
        &s,
        None,
        written(vec![item("1", "a", PlanStatus::Pending)]),
    );
    assert!(matches!(log.append(&e), Err(LogError::InvalidEvent { .. })));
    assert_eq!(log.last(&s).unwrap(), None);
    assert!(log.session(&s).unwrap().is_none());
}

pub fn seq_gap_is_a_conflict_and_writes_nothing(log: &dyn EventLog) {
    let s = sid("s1");
    let events = seed(log, &s, 1);
    let next = seal_after(events.last(), &s, None, written(vec![]));
    let skipped = seal_after(Some(&next), &s, None, written(vec![]));
    match log.append(&skipped) {
        Err(LogError::Conflict {
            expected, found, ..
        }) => assert_eq!((expected, found), (3, 4)),
        other => panic!("expected a conflict, got {other:?}"),
    }
    assert_eq!(log.read(&s, Seq::FIRST, None).unwrap(), events);
}

pub fn racing_append_at_same_seq_conflicts(log: &dyn EventLog) {
    let s = sid("s1");
    let events = seed(log, &s, 1);
    let a = seal_after(
        events.last(),
        &s,
        None,
        written(vec![item("a", "A", PlanStatus::Pending)]),
    );
    let b = seal_after(
        events.last(),
        &s,
        None,
        written(vec![item("b", "B", PlanStatus::Pending)]),
    );
    log.append(&a).unwrap();
    assert!(matches!(
        log.append(&b),
        Err(LogError::Conflict {
            expected: 4,
            found: 3,
            ..
        })
    ));
    assert_eq!(log.last(&s).unwrap(), Some(a));
}

pub fn broken_prev_hash_is_refused(log: &dyn EventLog) {
    let s = sid("s1");
    let events = seed(log, &s, 1);
    let placement = placed_with_prev(events.last(), &s, events[0].hash);
    let e = Event::seal(placement, EventDraft::new(written(vec![])));
    assert!(matches!(log.append(&e), Err(LogError::InvalidEvent { .. })));
    assert_eq!(log.read(&s, Seq::FIRST, None).unwrap(), events);
}

pub fn tampered_event_is_refused(log: &dyn EventLog) {
    let s = sid("s1");
    let events = seed(log, &s, 1);
    let mut e = seal_after(
        events.last(),
        &s,
        None,
        written(vec![item("1", "honest", PlanStatus::Pending)]),
    );
    e.body = written(vec![item("1", "forged", PlanStatus::Completed)]);
    assert!(matches!(log.append(&e), Err(LogError::InvalidEvent { .. })));
    assert_eq!(log.read(&s, Seq::FIRST, None).unwrap(), events);
}

pub fn duplicate_call_id_returns_recorded_event(log: &dyn EventLog) {
    let s = sid("s1");
    let events = seed(log, &s, 2);
    // A retry of call-1 (whose ack was lost) comes with a stale seq and other content.
    let retry = seal_after(events.last(), &s, Some("call-1"), written(vec![]));
    match log.append(&retry).unwrap() {
        Appended::Duplicate(recorded) => assert_eq!(*recorded, events[2]),
        Appended::Stored(_) => panic!("a duplicate call id must not be stored twice"),
    }
    assert_eq!(log.read(&s, Seq::FIRST, None).unwrap(), events);
}

/// An event sealed with its bytes ([`EventLog::append_sealed`]) is checked as
/// [`EventLog::append`] checks one: stored in its place, a gap or a lost race refused, a
/// broken link refused, a recorded call id answered with the recorded event; nothing
/// written when refused.
pub fn sealed_appends_are_checked_as_appends(log: &dyn EventLog) {
    let s = sid("s1");
    let nothing = sealed_after(None, &s, None, written(vec![]));
    assert!(matches!(
        log.append_sealed(nothing),
        Err(LogError::InvalidEvent { .. })
    ));
    assert!(log.session(&s).unwrap().is_none());
    let mut events = seed(log, &s, 1);
    let next = sealed_after(
        events.last(),
        &s,
        Some("call-9"),
        written(vec![item("a", "A", PlanStatus::Pending)]),
    );
    let lost = sealed_after(events.last(), &s, None, written(vec![]));
    let beyond = seal_after(Some(next.event()), &s, None, written(vec![]));
    let gap = sealed_after(Some(&beyond), &s, None, written(vec![]));
    let stored = log.append_sealed(next.clone()).unwrap();
    assert_eq!(
        stored,
        Appended::Stored(std::sync::Arc::new(next.event().clone()))
    );
    events.push(next.event().clone());
    assert!(matches!(
        log.append_sealed(lost),
        Err(LogError::Conflict {
            expected: 4,
            found: 3,
            ..
        })
    ));
    assert!(matches!(
        log.append_sealed(gap),
        Err(LogError::Conflict {
            expected: 4,
            found: 5,
            ..
        })
    ));
    let placement = placed_with_prev(events.last(), &s, events[0].hash);
    let unlinked = SealedEvent::seal(placement, EventDraft::new(written(vec![])));
    assert!(matches!(
        log.append_sealed(unlinked),
        Err(LogError::InvalidEvent { .. })
    ));
    let retry = sealed_after(events.last(), &s, Some("call-9"), written(vec![]));
    match log.append_sealed(retry).unwrap() {
        Appended::Duplicate(recorded) => assert_eq!(*recorded, events[2]),
        Appended::Stored(_) => panic!("a duplicate call id must not be stored twice"),
    }
    assert_eq!(log.read(&s, Seq::FIRST, None).unwrap(), events);
}

pub fn call_ids_are_scoped_to_their_session(log: &dyn EventLog) {
    let (a, b) = (sid("a"), sid("b"));
    seed(log, &a, 1);
    let b_events = seed(log, &b, 1);
    assert_eq!(log.read(&b, Seq::FIRST, None).unwrap(), b_events);
    assert_eq!(
        b_events[1].call_id.as_ref().map(CallId::as_str),
        Some("call-0")
    );
}

pub fn unknown_session_reads_and_appends(log: &dyn EventLog) {
    let s = sid("nobody");
    assert_eq!(log.last(&s).unwrap(), None);
    assert_eq!(log.session(&s).unwrap(), None);
    assert!(matches!(
        log.read(&s, Seq::FIRST, None),
        Err(LogError::User(UserError::UnknownSession(_)))
    ));
    let other = seed(log, &sid("other"), 0);
    let placement = placed_with_prev(other.last(), &s, other[0].hash);
    let e = Event::seal(placement, EventDraft::new(written(vec![])));
    assert!(matches!(
        log.append(&e),
        Err(LogError::User(UserError::UnknownSession(_)))
    ));
    assert!(matches!(
        log.delete(&s),
        Err(LogError::User(UserError::UnknownSession(_)))
    ));
}

pub fn delete_removes_everything_and_forbids_reuse(log: &dyn EventLog) {
    let (s, keep) = (sid("doomed"), sid("kept"));
    let events = seed(log, &s, 3);
    let kept = seed(log, &keep, 2);
    log.delete(&s).unwrap();
    assert_eq!(log.last(&s).unwrap(), None);
    assert_eq!(log.session(&s).unwrap(), None);
    assert!(log.read(&s, Seq::FIRST, None).is_err());
    assert_eq!(log.sessions().unwrap().len(), 1);
    assert_eq!(log.read(&keep, Seq::FIRST, None).unwrap(), kept);
    // A new session under the retired id is refused.
    let other = EventBody::SessionStarted(SessionStarted {
        origin: Origin::New,
        label: Some("someone else".into()),
        plan: Plan::new(),
        plan_mode: false,
        ids_issued: None,
    });
    let again = seal_after(None, &s, None, other);
    assert!(matches!(
        log.append(&again),
        Err(LogError::User(UserError::SessionDeleted(_)))
    ));
    assert!(matches!(
        log.head(&s),
        Err(LogError::User(UserError::SessionDeleted(_)))
    ));
    let late = seal_after(events.last(), &s, None, written(vec![]));
    assert!(log.append(&late).is_err());
    assert_eq!(log.last(&s).unwrap(), None);
}

pub fn a_deleted_session_comes_back_only_restored_whole_from_its_export(log: &dyn EventLog) {
    let s = sid("doomed");
    let events = seed(log, &s, 3);
    log.delete(&s).unwrap();
    // Its own events, first one included, bring it back (as `import planlog` does).
    let stored = log.append_all(&events).unwrap();
    assert!(stored.iter().all(|a| matches!(a, Appended::Stored(_))));
    assert_eq!(log.read(&s, Seq::FIRST, None).unwrap(), events);
    assert_eq!(
        log.head(&s).unwrap(),
        events.last().map(crate::domain::event::Head::of)
    );
    // Restored, it is an ordinary session again: deleted again, retired again.
    log.delete(&s).unwrap();
    assert!(log.head(&s).is_err());
}

pub fn head_is_the_last_event_or_none(log: &dyn EventLog) {
    let s = sid("s1");
    assert_eq!(log.head(&s).unwrap(), None);
    let events = seed(log, &s, 2);
    assert_eq!(
        log.head(&s).unwrap(),
        events.last().map(crate::domain::event::Head::of)
    );
}

pub fn catalogue_tracks_progress_mode_and_lineage(log: &dyn EventLog) {
    let parent = sid("parent");
    let events = seed(log, &parent, 2);
    let mode = seal_after(
        events.last(),
        &parent,
        None,
        EventBody::ModeSelected(ModeSelected { active: true }),
    );
    log.append(&mode).unwrap();
    let info = log.session(&parent).unwrap().unwrap();
    assert_eq!(info.events, 4);
    assert_eq!(
        (
            info.progress.completed,
            info.progress.in_progress,
            info.progress.total()
        ),
        (1, 1, 2)
    );
    assert!(info.plan_mode);
    assert_eq!(info.created, events[0].at);
    assert_eq!(info.updated, mode.at);
    let child = sid("child");
    let fork = seal_after(
        None,
        &child,
        None,
        started(Origin::Fork {
            parent: parent.clone(),
            at: Seq::new(2).unwrap(),
        }),
    );
    log.append(&fork).unwrap();
    let list = log.sessions().unwrap();
    let ids: Vec<&str> = list.iter().map(|i| i.id.as_str()).collect();
    assert_eq!(ids, ["child", "parent"]);
    assert_eq!(list[0].origin.parent(), Some(&parent));
    assert_eq!(list[0].origin.fork_seq(), Seq::new(2).ok());
}

pub fn state_at_equals_fold_of_prefix(log: &dyn EventLog) {
    let s = sid("s1");
    let mut events = seed(log, &s, 4);
    let mode = seal_after(
        events.last(),
        &s,
        None,
        EventBody::ModeSelected(ModeSelected { active: true }),
    );
    log.append(&mode).unwrap();
    events.push(mode);
    // The highest item removed: the write records the ids issued (format 3), and the state
    // at every later seq, read from that one event, knows them.
    let mut removed = written(vec![item("0", "step 0", PlanStatus::Completed)]);
    removed.set_ids_issued(Some(3));
    let removed = seal_after(events.last(), &s, Some("call-removed"), removed);
    log.append(&removed).unwrap();
    events.push(removed);
    let off = seal_after(
        events.last(),
        &s,
        None,
        EventBody::ModeSelected(ModeSelected { active: false }),
    );
    log.append(&off).unwrap();
    events.push(off);
    for n in 1..=events.len() {
        let at = Seq::new(n as u64).unwrap();
        assert_eq!(
            log.state_at(&s, at).unwrap(),
            fold(&events[..n]),
            "state at seq {n}"
        );
    }
    assert_eq!(fold(&events).ids_issued, 3);
    let past = Seq::new(events.len() as u64 + 1).unwrap();
    assert!(matches!(
        log.state_at(&s, past),
        Err(LogError::User(UserError::SeqOutOfRange { .. }))
    ));
}

/// A log's state index (when it keeps one) names, for every seq, the event whose plan
/// `state_at` returns and the mode it returns; ranges are clipped to the log's end.
pub fn state_index_agrees_with_state_at(log: &dyn EventLog) {
    let s = sid("s1");
    let mut events = seed(log, &s, 3);
    for active in [true, false, true] {
        let e = seal_after(
            events.last(),
            &s,
            None,
            EventBody::ModeSelected(ModeSelected { active }),
        );
        log.append(&e).unwrap();
        events.push(e);
        let w = seal_after(
            events.last(),
            &s,
            Some(&format!("w{}", events.len())),
            written(vec![item("x", "after a mode change", PlanStatus::Pending)]),
        );
        log.append(&w).unwrap();
        events.push(w);
    }
    let q = |n: usize| Seq::new(n as u64).unwrap();
    let last = events.len();
    for (from, to) in [(1, last), (1, 1), (3, 6), (5, last + 10), (last, last)] {
        let Some(index) = log.state_index(&s, q(from), q(to)).unwrap() else {
            return; // this log keeps no index: state_at folds the events
        };
        let expected: Vec<usize> = (from..=to.min(last)).collect();
        assert_eq!(
            index
                .iter()
                .map(|e| e.seq.get() as usize)
                .collect::<Vec<_>>(),
            expected,
            "{from}..={to}"
        );
        for entry in index {
            let n = entry.seq.get() as usize;
            let plan_from = entry
                .plan_from
                .expect("a plan-carrying event at or before every seq");
            let state = log.state_at(&s, entry.seq).unwrap();
            assert_eq!(
                events[plan_from.get() as usize - 1].plan(),
                Some(&state.plan),
                "seq {n}: the plan named by the index is the state's"
            );
            assert!(
                events[plan_from.get() as usize..n]
                    .iter()
                    .all(|e| e.plan().is_none()),
                "seq {n}: no plan-carrying event between {plan_from} and it"
            );
            assert_eq!(entry.plan_mode, state.plan_mode, "seq {n}");
        }
    }
    assert!(
        log.state_index(&s, q(last + 1), q(last + 5))
            .unwrap()
            .is_none_or(|v| v.is_empty())
    );
    assert!(matches!(
        log.state_index(&sid("nobody"), q(1), q(3)),
        Ok(None) | Err(LogError::User(UserError::UnknownSession(_)))
    ));
}

pub fn read_ranges_are_inclusive_and_clipped(log: &dyn EventLog) {
    let s = sid("s1");
    let events = seed(log, &s, 5);
    let q = |n| Seq::new(n).unwrap();
    assert_eq!(log.read(&s, q(2), Some(q(4))).unwrap(), events[1..4]);
    assert_eq!(log.read(&s, q(5), None).unwrap(), events[4..]);
    assert_eq!(log.read(&s, q(6), Some(q(60))).unwrap(), events[5..]);
    assert!(log.read(&s, q(7), None).unwrap().is_empty());
    assert!(log.read(&s, q(4), Some(q(2))).unwrap().is_empty());
}

pub fn sessions_are_isolated(log: &dyn EventLog) {
    let (a, b) = (sid("a"), sid("b"));
    let ea = seed(log, &a, 3);
    let eb = seed(log, &b, 1);
    assert_eq!(log.read(&a, Seq::FIRST, None).unwrap(), ea);
    assert_eq!(log.read(&b, Seq::FIRST, None).unwrap(), eb);
    assert_eq!(log.session(&b).unwrap().unwrap().events, 2);
}

pub fn session_started_only_first(log: &dyn EventLog) {
    let s = sid("s1");
    let events = seed(log, &s, 1);
    let again = seal_after(events.last(), &s, None, started(Origin::New));
    assert!(matches!(
        log.append(&again),
        Err(LogError::InvalidEvent { .. })
    ));
    let twice = seal_after(None, &s, None, started(Origin::New));
    assert!(log.append(&twice).is_err());
    assert_eq!(log.read(&s, Seq::FIRST, None).unwrap(), events);
}

/// Checks that `events` are a whole, valid log: seqs 1..=n, each hash valid, each linked to
/// the one before.
pub fn assert_chain(events: &[Event]) {
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e.seq.get(), i as u64 + 1, "seqs are dense from 1");
        assert!(e.hash_is_valid(), "hash of seq {} is valid", e.seq);
        let prev = i.checked_sub(1).map(|j| events[j].hash);
        assert_eq!(e.prev, prev, "seq {} links to the event before it", e.seq);
    }
}

pub fn append_all_is_atomic(log: &dyn EventLog) {
    let (a, b) = (sid("a"), sid("b"));
    let a0 = seal_after(None, &a, None, started(Origin::New));
    let a1 = seal_after(
        Some(&a0),
        &a,
        Some("c1"),
        written(vec![item("1", "x", PlanStatus::Pending)]),
    );
    let b0 = seal_after(None, &b, None, started(Origin::New));
    let stored = log
        .append_all(&[a0.clone(), a1.clone(), b0.clone()])
        .unwrap();
    assert_eq!(stored.len(), 3);
    assert_eq!(log.read(&a, Seq::FIRST, None).unwrap(), [a0, a1.clone()]);
    // A batch whose last event conflicts writes nothing, not even its good first events.
    let a2 = seal_after(Some(&a1), &a, None, written(vec![]));
    let b1 = seal_after(Some(&b0), &b, None, written(vec![]));
    let stale = seal_after(
        Some(&a1),
        &a,
        None,
        written(vec![item("2", "y", PlanStatus::Pending)]),
    );
    assert!(log.append_all(&[b1, a2, stale]).is_err());
    assert_eq!(log.last(&a).unwrap(), Some(a1));
    assert_eq!(log.last(&b).unwrap(), Some(b0));
    // A repeated call id inside a batch is a duplicate, not a second event.
    let retry = seal_after(
        log.last(&a).unwrap().as_ref(),
        &a,
        Some("c1"),
        written(vec![]),
    );
    assert!(matches!(
        log.append_all(&[retry]).unwrap()[0],
        Appended::Duplicate(_)
    ));
}

pub fn find_call_finds_recorded_calls_in_their_session_only(log: &dyn EventLog) {
    let s = sid("s1");
    let events = seed(log, &s, 2);
    let call = CallId::new("call-1").unwrap();
    assert_eq!(log.find_call(&s, &call).unwrap(), Some(events[2].seq));
    assert_eq!(log.find_call(&sid("other"), &call).unwrap(), None);
    assert_eq!(
        log.find_call(&s, &CallId::new("never").unwrap()).unwrap(),
        None
    );
}

pub fn append_iter_streams_atomically(log: &dyn EventLog) {
    let (a, b) = (sid("a"), sid("b"));
    let a0 = seal_after(None, &a, None, started(Origin::New));
    let a1 = seal_after(
        Some(&a0),
        &a,
        Some("c1"),
        written(vec![item("1", "x", PlanStatus::Pending)]),
    );
    let b0 = seal_after(None, &b, None, started(Origin::New));
    let mut ok = vec![Ok(a0.clone()), Ok(a1.clone()), Ok(b0.clone())].into_iter();
    assert_eq!(log.append_iter(&mut ok).unwrap(), 3);
    assert_eq!(log.read(&a, Seq::FIRST, None).unwrap(), [a0, a1.clone()]);
    // An error from the stream (a bad line) writes nothing, not even the good events.
    let b1 = seal_after(Some(&b0), &b, None, written(vec![]));
    let failing = LogError::InvalidEvent {
        session: b.clone(),
        seq: 2,
        reason: "test".into(),
    };
    let mut bad = vec![Ok(b1), Err(failing)].into_iter();
    assert!(log.append_iter(&mut bad).is_err());
    assert_eq!(log.last(&b).unwrap(), Some(b0.clone()));
    // A recorded call id in the stream is refused (callers skip recorded calls first).
    let retry = seal_after(Some(&a1), &a, Some("c1"), written(vec![]));
    let mut dup = vec![Ok(retry)].into_iter();
    assert!(log.append_iter(&mut dup).is_err());
    assert_eq!(log.last(&a).unwrap(), Some(a1));
}

/// A stream of events sealed with their bytes ([`EventLog::append_sealed_iter`]) is checked
/// as [`EventLog::append_iter`] checks one: all stored, or on the first misplaced, unlinked or
/// repeated event, or an error from the stream, none.
pub fn sealed_streams_are_checked_as_streams(log: &dyn EventLog) {
    let (a, b) = (sid("a"), sid("b"));
    let a0 = sealed_after(None, &a, None, started(Origin::New));
    let a1 = sealed_after(
        Some(a0.event()),
        &a,
        Some("c1"),
        written(vec![item("1", "x", PlanStatus::Pending)]),
    );
    let b0 = sealed_after(None, &b, None, started(Origin::New));
    let want_a = vec![a0.event().clone(), a1.event().clone()];
    let b0_event = b0.event().clone();
    let mut ok = vec![Ok(a0), Ok(a1), Ok(b0)].into_iter();
    assert_eq!(log.append_sealed_iter(&mut ok).unwrap(), 3);
    assert_eq!(log.read(&a, Seq::FIRST, None).unwrap(), want_a);
    let a1 = &want_a[1];
    let refused: Vec<(&str, Vec<Result<SealedEvent, LogError>>)> = vec![
        // A good event, then one that is not placed after it.
        (
            "a gap",
            vec![
                Ok(sealed_after(Some(a1), &a, None, written(vec![]))),
                Ok(sealed_after(Some(a1), &a, None, written(vec![]))),
            ],
        ),
        (
            "a broken link",
            vec![Ok(SealedEvent::seal(
                placed_with_prev(Some(a1), &a, want_a[0].hash),
                EventDraft::new(written(vec![])),
            ))],
        ),
        (
            "a recorded call id",
            vec![Ok(sealed_after(Some(a1), &a, Some("c1"), written(vec![])))],
        ),
        (
            "a new session not begun by session_started",
            vec![Ok(sealed_after(None, &sid("c"), None, written(vec![])))],
        ),
        (
            "an error from the stream",
            vec![
                Ok(sealed_after(Some(&b0_event), &b, None, written(vec![]))),
                Err(LogError::InvalidEvent {
                    session: b.clone(),
                    seq: 2,
                    reason: "test".into(),
                }),
            ],
        ),
    ];
    for (what, events) in refused {
        let mut events = events.into_iter();
        assert!(log.append_sealed_iter(&mut events).is_err(), "{what}");
        assert_eq!(log.read(&a, Seq::FIRST, None).unwrap(), want_a, "{what}");
        assert_eq!(log.last(&b).unwrap().as_ref(), Some(&b0_event), "{what}");
        assert!(log.session(&sid("c")).unwrap().is_none(), "{what}");
    }
}

/// Appends a session of `n` events (a start, then small plan writes) in one commit.
fn long_session(log: &dyn EventLog, session: &SessionId, n: usize) -> Vec<Event> {
    let mut events = vec![seal_after(None, session, None, started(Origin::New))];
    for i in 1..n {
        let body = written(vec![item(
            "1",
            &format!("step {i}"),
            PlanStatus::InProgress,
        )]);
        events.push(seal_after(events.last(), session, None, body));
    }
    log.append_all(&events).unwrap();
    events
}

pub fn scan_reads_the_whole_session_a_chunk_at_a_time(log: &dyn EventLog) {
    let chunk = SCAN_CHUNK as usize;
    let s = sid("scanned");
    let events = long_session(log, &s, 2 * chunk + 5);
    let chunks: Vec<Vec<Event>> = log.scan(&s, Seq::FIRST).map(Result::unwrap).collect();
    assert_eq!(
        chunks.iter().map(Vec::len).collect::<Vec<_>>(),
        [chunk, chunk, 5]
    );
    assert!(
        chunks.concat() == events,
        "the chunks are the session, in order"
    );
    let one_by_one: Vec<Event> = log
        .scan(&s, Seq::FIRST)
        .events()
        .map(Result::unwrap)
        .collect();
    assert!(one_by_one == events, "the events, one by one");
    // Strided: two readers share the scan out, each reading every other chunk.
    let odd: Vec<Vec<Event>> = log
        .scan(&s, Seq::FIRST)
        .strided(1, 2)
        .map(Result::unwrap)
        .collect();
    assert_eq!(odd.len(), 1);
    assert!(odd[0] == events[chunk..2 * chunk]);
    let even: Vec<usize> = log
        .scan(&s, Seq::FIRST)
        .strided(0, 2)
        .map(|c| c.unwrap().len())
        .collect();
    assert_eq!(even, [chunk, 5]);
    // From a seq: the rest of the session.
    let tail: Vec<Vec<Event>> = log
        .scan(&s, Seq::new(2 * SCAN_CHUNK + 1).unwrap())
        .map(Result::unwrap)
        .collect();
    assert!(tail.concat() == events[2 * chunk..]);
    assert_eq!(
        log.scan(&s, Seq::new(10 * SCAN_CHUNK).unwrap()).count(),
        0,
        "nothing past the end"
    );
    // A session of exactly one chunk: one chunk, then the empty read ends the scan.
    let exact = sid("exact");
    long_session(log, &exact, chunk);
    assert_eq!(
        log.scan(&exact, Seq::FIRST)
            .map(|c| c.unwrap().len())
            .collect::<Vec<_>>(),
        [chunk]
    );
    // No such session: one error, then nothing.
    let nobody = sid("missing");
    let mut missing = log.scan(&nobody, Seq::FIRST);
    assert!(matches!(
        missing.next(),
        Some(Err(LogError::User(UserError::UnknownSession(_))))
    ));
    assert!(missing.next().is_none());
    let mut missing = log.scan(&nobody, Seq::FIRST).events();
    assert!(matches!(missing.next(), Some(Err(_))));
    assert!(missing.next().is_none());
}
