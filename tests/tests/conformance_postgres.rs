//! The conformance suite on the PostgreSQL log: every check, each on a fresh database of the
//! test server (`.ci/with-postgres`; without it each test says SKIPPED).

planlog_core::eventlog_conformance!(optional planlog_tests::TempPg::new);

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use planlog_core::EventLog;
use planlog_core::testkit::{seed, sid};
use planlog_store::PgLog;

/// A live view on one connection hears appends made on another (another machine, as far as
/// the server can tell).
#[test]
fn appends_elsewhere_are_announced() {
    let Some(pg) = planlog_tests::TempPg::new() else {
        return;
    };
    let listener = PgLog::open(&pg.url).unwrap();
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (url, done) = (pg.url.clone(), Arc::clone(&done));
        std::thread::spawn(move || {
            let log = PgLog::open(&url).unwrap();
            // Appends until the listener has heard one (it may start listening after the
            // first), each to a session of its own.
            let mut n = 0;
            while !done.load(std::sync::atomic::Ordering::SeqCst) && n < 200 {
                seed(&log, &sid(&format!("announced-{n}")), 1);
                n += 1;
                std::thread::sleep(Duration::from_millis(25));
            }
            n
        })
    };
    let start = Instant::now();
    let heard = listener.wait_for_change(Duration::from_secs(10)).unwrap();
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let written = writer.join().unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "heard nothing in 10 s ({written} appends made)"
    );
    assert!(!heard.is_empty());
    for id in &heard {
        assert!(id.as_str().starts_with("announced-"), "{id}");
        assert!(
            listener.session(id).unwrap().is_some(),
            "{id} is there to read"
        );
    }
    // The writer may have been mid-append when told to stop, so an announcement or two may
    // still arrive; each is a real one. Once those are told, with nothing appended, a wait
    // ends at its timeout with nothing heard.
    let mut late = 0;
    loop {
        let heard = listener
            .wait_for_change(Duration::from_millis(200))
            .unwrap();
        if heard.is_empty() {
            break;
        }
        for id in &heard {
            assert!(id.as_str().starts_with("announced-"), "{id}");
        }
        late += 1;
        assert!(
            late <= 3,
            "still hearing announcements after the writer stopped: {heard:?}"
        );
    }
}

/// Eight processes' first opens of a new database at once create planlog's tables once.
#[test]
fn opens_racing_on_a_new_database_create_the_tables_once() {
    let Some(pg) = planlog_tests::TempPg::new() else {
        return;
    };
    pg.execute(
        "DROP TABLE planlog_events, planlog_sessions, planlog_plan_marks, planlog_mode_marks, planlog_tombstones, planlog_migrations",
    );
    let barrier = Arc::new(Barrier::new(8));
    let handles: Vec<_> = (0..8)
        .map(|t| {
            let (url, barrier) = (pg.url.clone(), Arc::clone(&barrier));
            std::thread::spawn(move || {
                barrier.wait();
                let log = PgLog::open(&url).unwrap();
                seed(&log, &sid(&format!("opener-{t}")), 2);
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let log = PgLog::open(&pg.url).unwrap();
    assert_eq!(log.sessions().unwrap().len(), 8);
}

/// Connections the server dropped while they sat in the pool (an administrator, an idle
/// timeout, a proxy) cost the caller nothing: the next read or append connects again.
#[test]
fn connections_dropped_by_the_server_are_replaced_without_an_error() {
    let Some(pg) = planlog_tests::TempPg::new() else {
        return;
    };
    let log = PgLog::open(&pg.url).unwrap();
    let written = seed(&log, &sid("dropped"), 3);
    // Fill the pool with a few idle connections.
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                log.read(&sid("dropped"), planlog_core::Seq::FIRST, None)
                    .unwrap()
            });
        }
    });
    let kill = |pg: &planlog_tests::TempPg| {
        pg.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE datname = current_database() AND pid <> pg_backend_pid()",
        );
    };
    kill(&pg);
    assert_eq!(
        log.read(&sid("dropped"), planlog_core::Seq::FIRST, None)
            .unwrap(),
        written
    );
    kill(&pg);
    let next = planlog_core::testkit::seal_after(
        written.last(),
        &sid("dropped"),
        Some("after-drop"),
        planlog_core::testkit::written(vec![]),
    );
    log.append(&next).unwrap();
    kill(&pg);
    assert_eq!(log.last(&sid("dropped")).unwrap(), Some(next.clone()));
    kill(&pg);
    assert_eq!(log.head(&sid("dropped")).unwrap().unwrap().seq, next.seq);
}
