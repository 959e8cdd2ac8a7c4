//! Files written by earlier versions must open in every later one. `fixtures/stores/v1.redb`
//! (a store) and `fixtures/events/format-1.jsonl` (its events, one per line) were written by
//! store format 1 / event format 1. Regenerate them only when adding a new format:
//! `PLANLOG_WRITE_FIXTURES=1 cargo test -p planlog-tests --test format_fixtures`, and keep the
//! old files.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::path::PathBuf;

use planlog_core::testkit::{assert_chain, item, seal_after, sid, started, written};
use planlog_core::{
    EventLog, PlanStatus, Seq,
    events::{
        Event, EventBody, ModeSelected, Origin, PlanWritten, SessionStarted, WriteRejected,
        WriteSemantics,
    },
    fold,
    rules::RejectionCode,
};
use planlog_store::RedbLog;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("fixtures")
}

/// Every kind of event and origin, deterministically.
fn write_sample(log: &dyn EventLog) {
    let main = sid("01JDXMAINSESSION0000000000");
    let mut e = vec![seal_after(None, &main, None, started(Origin::New))];
    let push = |e: &mut Vec<Event>, call: Option<&str>, body: EventBody| {
        let ev = seal_after(e.last(), &main, call, body);
        log.append(&ev).unwrap();
        e.push(ev);
    };
    log.append(&e[0]).unwrap();
    push(
        &mut e,
        Some("call_1"),
        written(vec![
            item("1", "Create parser.go", PlanStatus::InProgress),
            item("2", "Implement load", PlanStatus::Pending),
        ]),
    );
    push(
        &mut e,
        Some("call_2"),
        EventBody::WriteRejected(WriteRejected {
            submitted: serde_json::json!({"steps": [{"id": "1", "content": "Create parser.go", "status": "completed"}, {"id": "3", "content": "Ship", "status": "completed"}]}),
            code: RejectionCode::BulkCompletion,
            message: "Rejected as a bulk completion".into(),
            position: Some(2),
        }),
    );
    push(
        &mut e,
        None,
        EventBody::ModeSelected(ModeSelected { active: true }),
    );
    push(
        &mut e,
        Some("call_3"),
        written(vec![
            item("1", "Create parser.go", PlanStatus::Completed),
            item("2", "Implement load", PlanStatus::InProgress),
        ]),
    );
    let fork = sid("01JDXFORKSESSION0000000000");
    let state = fold(&e[..3]);
    log.append(&seal_after(
        None,
        &fork,
        None,
        EventBody::SessionStarted(SessionStarted {
            origin: Origin::Fork {
                parent: main.clone(),
                at: Seq::new(3).unwrap(),
            },
            label: Some("try the other parser".into()),
            plan: state.plan,
            plan_mode: state.plan_mode,
        }),
    ))
    .unwrap();
    let imported = sid("01JDXIMPORTSESSION00000000");
    let first = seal_after(
        None,
        &imported,
        None,
        started(Origin::Import {
            source: "claude-code".into(),
            source_session: Some("5c0375b4-57a5-4f26-b12d-d022ee4e51b7".into()),
            parent: None,
        }),
    );
    log.append(&first).unwrap();
    let items = vec![
        item("t1", "Read the code", PlanStatus::Completed),
        item("t2", "Fix it", PlanStatus::Completed),
    ];
    log.append(&seal_after(
        Some(&first),
        &imported,
        Some("toolu_01"),
        EventBody::PlanWritten(PlanWritten {
            semantics: WriteSemantics::Replace,
            submitted: items.clone(),
            plan: planlog_core::Plan::from_items(items),
        }),
    ))
    .unwrap();
}

fn summary(log: &dyn EventLog) -> String {
    let mut out = String::new();
    for info in log.sessions().unwrap() {
        let events = log.read(&info.id, Seq::FIRST, None).unwrap();
        assert_chain(&events);
        for n in 1..=events.len() {
            let at = Seq::new(n as u64).unwrap();
            assert_eq!(log.state_at(&info.id, at).unwrap(), fold(&events[..n]));
        }
        let kinds: Vec<&str> = events.iter().map(|e| e.body.kind()).collect();
        out.push_str(&format!(
            "{} origin={:?} events={} done={}/{} mode={} last={}\n  {}\n",
            info.id,
            info.origin,
            info.events,
            info.progress.completed,
            info.progress.total(),
            info.plan_mode,
            events.last().unwrap().hash,
            kinds.join(" ")
        ));
    }
    out
}

#[test]
fn the_format_1_store_still_opens_and_reads_the_same() {
    let committed = fixtures().join("stores").join("v1.redb");
    if std::env::var_os("PLANLOG_WRITE_FIXTURES").is_some() {
        let _ = std::fs::remove_file(&committed);
        let log = RedbLog::open(&committed).unwrap();
        write_sample(&log);
        let mut lines = String::new();
        for info in log.sessions().unwrap() {
            for e in log.read(&info.id, Seq::FIRST, None).unwrap() {
                lines.push_str(&String::from_utf8(e.encode()).unwrap());
                lines.push('\n');
            }
        }
        std::fs::write(fixtures().join("events").join("format-1.jsonl"), lines).unwrap();
    }
    // Open a copy: opening may repair or upgrade, and the committed file must stay as written.
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("v1.redb");
    std::fs::copy(&committed, &copy).unwrap();
    let log = RedbLog::open(&copy).unwrap();
    insta::assert_snapshot!(summary(&log));
    // And it takes new writes: a session written by format 1 goes on.
    let main = sid("01JDXMAINSESSION0000000000");
    let last = log.last(&main).unwrap();
    let next = seal_after(
        last.as_ref(),
        &main,
        Some("call_4"),
        written(vec![item("1", "Create parser.go", PlanStatus::Completed)]),
    );
    log.append(&next).unwrap();
    assert_chain(&log.read(&main, Seq::FIRST, None).unwrap());
}

#[test]
fn format_1_events_still_decode() {
    let text = std::fs::read_to_string(fixtures().join("events").join("format-1.jsonl")).unwrap();
    let events: Vec<Event> = text
        .lines()
        .map(|l| Event::decode(l.as_bytes()).unwrap())
        .collect();
    assert_eq!(events.len(), 8);
    for e in &events {
        assert_eq!(e.format, 1);
        assert_eq!(
            Event::decode(&e.encode()).unwrap(),
            *e,
            "re-encoding is stable"
        );
    }
}

#[test]
fn a_fresh_store_written_now_matches_the_fixture() {
    // Writing the same sample today gives byte-identical events: the format has not drifted.
    let store = planlog_tests::TempStore::new();
    write_sample(&store.log);
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("v1.redb");
    std::fs::copy(fixtures().join("stores").join("v1.redb"), &copy).unwrap();
    assert_eq!(summary(&store.log), summary(&RedbLog::open(&copy).unwrap()));
}
