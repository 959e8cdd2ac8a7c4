//! Many writers on one session, in one process: several `PlanSession`s on one log (memory and
//! redb), threads writing at once. No write is lost or refused, each call id is recorded once,
//! and any interleaving is equivalent to some serial order: every recorded result equals
//! deciding its call against the state before it (which `verify` re-proves), and every writer
//! got back exactly what was recorded for its call.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::collections::HashSet;
use std::sync::{Arc, Barrier};

use planlog_audit::{Report, verify_session};
use planlog_core::testkit::sid;
use planlog_core::{
    EventLog, MemoryLog, PlanSession, Seq, TestEnv, ToolResult, WriteStatus, events::EventBody,
};
use planlog_tests::TempStore;
use proptest::prelude::*;
use serde_json::json;

/// One call's id, the result its writer got, and what was stored.
type Outcome = (String, ToolResult, WriteStatus);

/// Runs `writers` threads, each with its own session on `log`, each making `calls` (one
/// list of plan_write arguments per thread). Returns (call id, outcome) of every call.
fn race(log: Arc<dyn EventLog>, calls: Vec<Vec<String>>) -> Vec<(String, ToolResult, WriteStatus)> {
    let env = Arc::new(TestEnv::default());
    let barrier = Arc::new(Barrier::new(calls.len()));
    let handles: Vec<_> = calls
        .into_iter()
        .enumerate()
        .map(|(w, list)| {
            let (log, env, barrier) = (Arc::clone(&log), Arc::clone(&env), Arc::clone(&barrier));
            std::thread::spawn(move || {
                let mut s = PlanSession::builder(log, env).open(&sid("shared")).unwrap();
                barrier.wait();
                list.into_iter()
                    .enumerate()
                    .map(|(i, args)| {
                        let call = format!("w{w}-{i}");
                        let outcome = s.plan_write(Some(&call), None, &args);
                        (call, outcome.result().clone(), outcome.status().clone())
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect()
}

/// Every outcome is durable and is what the log recorded for its call; the log re-verifies.
fn check(log: &dyn EventLog, outcomes: &[(String, ToolResult, WriteStatus)]) {
    let events = log.read(&sid("shared"), Seq::FIRST, None).unwrap();
    assert_eq!(
        events
            .iter()
            .filter(|e| e.body.kind() == "session_started")
            .count(),
        1,
        "one session_started however many writers created the session"
    );
    let mut seen = HashSet::new();
    for e in &events {
        if let Some(call) = &e.call_id {
            assert!(seen.insert(call.clone()), "call id {call} recorded twice");
        }
    }
    for (call, result, status) in outcomes {
        let WriteStatus::Stored(seq) = status else {
            panic!("{call}: {status:?} ({})", result.content)
        };
        let event = &events[usize::try_from(seq.get() - 1).unwrap()];
        assert_eq!(
            event.call_id.as_ref().map(|c| c.as_str()),
            Some(call.as_str())
        );
        let expected = match &event.body {
            // The answer as recorded with the call.
            EventBody::PlanWritten(w) => (
                false,
                w.tool_call
                    .as_ref()
                    .and_then(|c| c.result.as_ref())
                    .and_then(|r| r.text.clone())
                    .unwrap_or_default(),
            ),
            EventBody::WriteRejected(r) => (true, r.message.clone()),
            other => panic!("{call} recorded as {}", other.kind()),
        };
        assert_eq!(
            (result.is_error, result.content.clone()),
            expected,
            "{call}"
        );
    }
    assert_eq!(seen.len(), outcomes.len(), "every call recorded");
    let mut report = Report::default();
    let agents: std::sync::Arc<dyn planlog_audit::AgentRules> =
        std::sync::Arc::new(planlog_agents::Rules);
    verify_session(log, &sid("shared"), &agents, &mut report, &mut |_| {});
    assert!(report.problems.is_empty(), "{:?}", report.problems);
}

fn own_items(writers: usize, calls: usize) -> Vec<Vec<String>> {
    (0..writers)
        .map(|w| {
            (0..calls)
                .map(|i| {
                    json!({"steps": [{"id": format!("w{w}-{i}"), "content": format!("item {i} of writer {w}"), "status": "in_progress"}]})
                        .to_string()
                })
                .collect()
        })
        .collect()
}

fn every_item_survives(log: Arc<dyn EventLog>) {
    let (writers, calls) = (8, 25);
    let outcomes = race(Arc::clone(&log), own_items(writers, calls));
    check(&*log, &outcomes);
    let state = log
        .state_at(
            &sid("shared"),
            log.head(&sid("shared")).unwrap().unwrap().seq,
        )
        .unwrap();
    assert_eq!(
        state.plan.len(),
        writers * calls,
        "the final plan holds every item"
    );
    assert_eq!(
        log.session(&sid("shared")).unwrap().unwrap().events,
        1 + (writers * calls) as u64
    );
}

#[test]
fn eight_sessions_on_one_memory_log_lose_no_write() {
    every_item_survives(Arc::new(MemoryLog::new()));
}

#[test]
fn eight_sessions_on_one_redb_log_lose_no_write() {
    let store = TempStore::new();
    let TempStore { log, dir: _dir } = store;
    every_item_survives(Arc::new(log));
}

#[test]
fn eight_sessions_with_their_own_redb_handles_lose_no_write() {
    // Like eight processes: each writer opens the store itself.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("planlog.redb");
    let first: Arc<dyn EventLog> = Arc::new(planlog_store::RedbLog::open(&path).unwrap());
    let env = Arc::new(TestEnv::default());
    let barrier = Arc::new(Barrier::new(8));
    let handles: Vec<_> = own_items(8, 10)
        .into_iter()
        .enumerate()
        .map(|(w, list)| {
            let (path, env, barrier) = (path.clone(), Arc::clone(&env), Arc::clone(&barrier));
            std::thread::spawn(move || {
                let log: Arc<dyn EventLog> = Arc::new(planlog_store::RedbLog::open(&path).unwrap());
                let mut s = PlanSession::builder(log, env).open(&sid("shared")).unwrap();
                barrier.wait();
                list.into_iter()
                    .enumerate()
                    .map(|(i, args)| {
                        let call = format!("w{w}-{i}");
                        let outcome = s.plan_write(Some(&call), None, &args);
                        (call, outcome.result().clone(), outcome.status().clone())
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let outcomes: Vec<_> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    check(&*first, &outcomes);
    assert_eq!(
        first
            .session(&sid("shared"))
            .unwrap()
            .unwrap()
            .progress
            .in_progress,
        80
    );
}

/// One random call: items drawn from a small set of ids, so writers fight over the same items
/// (completions, cancellations, bulk completions that must be refused, reads).
fn call() -> impl Strategy<Value = String> {
    let status = prop::sample::select(vec!["pending", "in_progress", "completed", "cancelled"]);
    let step = (0..6u8, status).prop_map(|(id, status)| {
        json!({"id": id.to_string(), "content": format!("item {id}"), "status": status})
    });
    prop::collection::vec(step, 0..4).prop_map(|steps| {
        let mut seen = HashSet::new();
        let steps: Vec<_> = steps
            .into_iter()
            .filter(|s| seen.insert(s["id"].clone()))
            .collect();
        json!({ "steps": steps }).to_string()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Any interleaving of racing writers is equivalent to a serial order of their calls.
    #[test]
    fn racing_writers_are_serialisable(
        calls in prop::collection::vec(prop::collection::vec(call(), 1..8), 2..5),
        durable in any::<bool>(),
    ) {
        let store;
        let log: Arc<dyn EventLog> = if durable {
            store = TempStore::new();
            Arc::new(planlog_store::RedbLog::open(store.dir.path().join("planlog.redb")).unwrap())
        } else {
            Arc::new(MemoryLog::new())
        };
        let outcomes = race(Arc::clone(&log), calls);
        // Reads record nothing; every other call is stored, as decided.
        let written: Vec<_> = outcomes
            .into_iter()
            .filter(|(_, _, status)| *status != WriteStatus::Read)
            .collect();
        if !written.is_empty() {
            check(&*log, &written);
        }
    }
}

/// Runs `writers` `plan_writer` processes on `store`, on the session `session(w)` of each,
/// each making `calls` calls, all released at once; returns each process's session and
/// outcomes.
fn processes(
    store: &str,
    writers: usize,
    calls: usize,
    session: impl Fn(usize) -> String,
) -> Vec<(String, Vec<Outcome>)> {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};
    let mut children: Vec<_> = (0..writers)
        .map(|w| {
            let mut child = Command::new(env!("CARGO_BIN_EXE_plan_writer"))
                .args([store, &session(w), &w.to_string(), &calls.to_string()])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
            assert_eq!(lines.next().unwrap().unwrap(), "ready");
            (w, child, lines)
        })
        .collect();
    for (_, child, _) in &mut children {
        writeln!(child.stdin.as_mut().unwrap()).unwrap();
    }
    children
        .into_iter()
        .map(|(w, mut child, lines)| {
            let outcomes = lines
                .map(|line| {
                    let v: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
                    let status = match v["seq"].as_u64() {
                        Some(seq) => WriteStatus::Stored(Seq::new(seq).unwrap()),
                        None => panic!("process {w}: a call stored nothing: {v}"),
                    };
                    let result = ToolResult {
                        is_error: v["is_error"].as_bool().unwrap(),
                        content: v["content"].as_str().unwrap().to_owned(),
                    };
                    (v["call"].as_str().unwrap().to_owned(), result, status)
                })
                .collect::<Vec<_>>();
            assert!(child.wait().unwrap().success(), "process {w} failed");
            assert_eq!(outcomes.len(), calls, "process {w} answered every call");
            (session(w), outcomes)
        })
        .collect()
}

/// Eight processes on one session: every write lands, each as recorded (`check`).
fn eight_processes_on_one_session(store: &str) {
    let (writers, calls) = (8, 12);
    let outcomes: Vec<_> = processes(store, writers, calls, |_| "shared".to_owned())
        .into_iter()
        .flat_map(|(_, o)| o)
        .collect();
    let log = planlog_store::StoreAddress::parse(store)
        .unwrap()
        .open()
        .unwrap();
    check(&*log, &outcomes);
    let head = log.head(&sid("shared")).unwrap().unwrap();
    assert_eq!(head.seq.get(), 1 + (writers * calls) as u64);
    assert_eq!(
        log.state_at(&sid("shared"), head.seq).unwrap().plan.len(),
        writers * calls,
        "the final plan holds every process's items"
    );
}

/// Eight processes on eight sessions: each session whole, every write accepted.
fn eight_processes_on_eight_sessions(store: &str) {
    let calls = 12;
    let results = processes(store, 8, calls, |w| format!("own-{w}"));
    let log = planlog_store::StoreAddress::parse(store)
        .unwrap()
        .open()
        .unwrap();
    for (session, outcomes) in results {
        let events = log.read(&sid(&session), Seq::FIRST, None).unwrap();
        planlog_core::testkit::assert_chain(&events);
        assert_eq!(events.len(), 1 + calls, "{session}");
        for (i, (call, result, status)) in outcomes.iter().enumerate() {
            assert!(!result.is_error, "{call}: {}", result.content);
            assert_eq!(
                *status,
                WriteStatus::Stored(Seq::new(i as u64 + 2).unwrap())
            );
            assert_eq!(
                events[i + 1].call_id.as_ref().map(|c| c.as_str()),
                Some(call.as_str())
            );
        }
    }
}

#[test]
fn eight_processes_on_one_redb_session_lose_no_write() {
    let dir = tempfile::tempdir().unwrap();
    eight_processes_on_one_session(&dir.path().join("planlog.redb").display().to_string());
}

#[test]
fn eight_processes_on_eight_redb_sessions_keep_every_log_whole() {
    let dir = tempfile::tempdir().unwrap();
    eight_processes_on_eight_sessions(&dir.path().join("planlog.redb").display().to_string());
}

#[test]
fn eight_sessions_on_one_postgres_log_lose_no_write() {
    let Some(pg) = planlog_tests::TempPg::new() else {
        return;
    };
    every_item_survives(Arc::new(planlog_store::PgLog::open(&pg.url).unwrap()));
}

#[test]
fn eight_processes_on_one_postgres_session_lose_no_write() {
    let Some(pg) = planlog_tests::TempPg::new() else {
        return;
    };
    eight_processes_on_one_session(&pg.url);
}

#[test]
fn eight_processes_on_eight_postgres_sessions_keep_every_log_whole() {
    let Some(pg) = planlog_tests::TempPg::new() else {
        return;
    };
    eight_processes_on_eight_sessions(&pg.url);
}
