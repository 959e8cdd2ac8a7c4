//! Concurrency: 32 threads appending to one session and to 32 sessions of one redb store:
//! no lost, duplicated or reordered events.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::collections::HashSet;
use std::sync::Arc;
use std::thread;

use planlog_core::testkit::{assert_chain, item, seal_after, sid, started, written};
use planlog_core::{EventLog, LogError, PlanStatus, Seq, events::Origin, log::Appended};
use planlog_tests::TempStore;

const THREADS: usize = 32;
const PER_THREAD: usize = 8;

#[test]
fn thirty_two_threads_on_one_session_lose_and_duplicate_nothing() {
    let store = Arc::new(TempStore::new());
    let s = sid("shared");
    store
        .log
        .append(&seal_after(None, &s, None, started(Origin::New)))
        .unwrap();
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let store = Arc::clone(&store);
            let s = s.clone();
            thread::spawn(move || {
                let mut acked = Vec::new();
                for i in 0..PER_THREAD {
                    let call = format!("t{t}-{i}");
                    loop {
                        let last = store.log.last(&s).unwrap();
                        let body = written(vec![item(&call, "x", PlanStatus::InProgress)]);
                        let e = seal_after(last.as_ref(), &s, Some(&call), body);
                        match store.log.append(&e) {
                            Ok(Appended::Stored(e)) => {
                                acked.push(e);
                                break;
                            }
                            Ok(Appended::Duplicate(_)) => {
                                panic!("call {call} was never sent before")
                            }
                            Err(LogError::Conflict { .. }) => continue,
                            Err(other) => panic!("{other}"),
                        }
                    }
                }
                acked
            })
        })
        .collect();
    let acked: Vec<_> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    let stored = store.log.read(&s, Seq::FIRST, None).unwrap();
    assert_chain(&stored);
    assert_eq!(stored.len(), 1 + THREADS * PER_THREAD);
    for e in &acked {
        assert_eq!(
            &stored[e.seq.get() as usize - 1],
            &**e,
            "acknowledged event is stored as acked"
        );
    }
    let calls: HashSet<_> = stored.iter().filter_map(|e| e.call_id.clone()).collect();
    assert_eq!(
        calls.len(),
        THREADS * PER_THREAD,
        "every call stored exactly once"
    );
    // Each thread's own events are in the order it appended them.
    for t in 0..THREADS {
        let mine: Vec<String> = stored
            .iter()
            .filter_map(|e| e.call_id.as_ref().map(|c| c.to_string()))
            .filter(|c| c.starts_with(&format!("t{t}-")))
            .collect();
        let expected: Vec<String> = (0..PER_THREAD).map(|i| format!("t{t}-{i}")).collect();
        assert_eq!(mine, expected);
    }
}

#[test]
fn thirty_two_threads_on_thirty_two_sessions_keep_every_log_whole() {
    let store = Arc::new(TempStore::new());
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let store = Arc::clone(&store);
            thread::spawn(move || {
                let s = sid(&format!("s{t}"));
                let mut sealed = vec![seal_after(None, &s, None, started(Origin::New))];
                store.log.append(&sealed[0]).unwrap();
                for i in 0..PER_THREAD {
                    let body = written(vec![item(&i.to_string(), "x", PlanStatus::InProgress)]);
                    let e = seal_after(sealed.last(), &s, Some(&format!("c{i}")), body);
                    assert!(matches!(store.log.append(&e).unwrap(), Appended::Stored(_)));
                    sealed.push(e);
                }
                (s, sealed)
            })
        })
        .collect();
    for h in handles {
        let (s, sealed) = h.join().unwrap();
        assert_eq!(store.log.read(&s, Seq::FIRST, None).unwrap(), sealed);
    }
    assert_eq!(store.log.sessions().unwrap().len(), THREADS);
    let stats = store.log.commit_stats();
    assert_eq!(stats.appends, (THREADS * (PER_THREAD + 1)) as u64);
    eprintln!(
        "group commit: {} appends in {} commits",
        stats.appends, stats.commits
    );
}
