//! Crash-test child: works on a store in a loop and prints every acknowledged operation on
//! stdout. The parent kills it with SIGKILL at a random moment and checks that everything
//! acknowledged is there (and everything deleted is gone).
//!
//! Usage: `crash_child STORE THREADS [mixed RUN | tolerant]` (STORE: a path or a
//! `postgres://` URL; RUN: a number unique to this child, so the ids it makes never collide
//! with an earlier child's; process ids are reused)
//!
//! - appends: THREADS threads append plan writes, one session each (`crashN`), printing
//!   `append SESSION SEQ HASH`;
//! - with `mixed`, one more thread forks `crash0` (`fork ID HASH`), deletes its older forks
//!   (`deleting ID` before, `delete ID` after) and imports two-session batches atomically (`import ID1 ID2`);
//! - a conflict (another writer took the seq: on PostgreSQL, the previous child's last commit
//!   may land after it was killed) is caught up with, as every writer does;
//! - with `tolerant`, a failed append (the PostgreSQL server killed under it) is not a
//!   finding: the appender waits, re-reads the session's end and goes on (`retry` on stderr).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test support binary: a panic is a finding

use std::io::Write;
use std::sync::{Arc, Mutex};

use planlog_core::testkit::{item, seal_after, sid, started, written};
use planlog_core::{
    EventLog, PlanStatus, SessionId,
    events::{Event, Origin},
};
use planlog_store::StoreAddress;

fn say(out: &Mutex<std::io::Stdout>, line: String) {
    let mut out = out.lock().unwrap();
    writeln!(out, "{line}").unwrap();
    out.flush().unwrap();
}

fn appender(log: Arc<dyn EventLog>, out: Arc<Mutex<std::io::Stdout>>, t: usize, tolerant: bool) {
    let s = sid(&format!("crash{t}"));
    let mut last = reread(&*log, &s, tolerant);
    loop {
        let n = last.as_ref().map_or(0, |e| e.seq.get());
        let body = match last {
            None => started(Origin::New),
            Some(_) => written(
                (0..8)
                    .map(|i| {
                        item(
                            &i.to_string(),
                            &format!("step {i} of write {n}"),
                            if i < 4 {
                                PlanStatus::Completed
                            } else {
                                PlanStatus::Pending
                            },
                        )
                    })
                    .collect(),
            ),
        };
        let e = seal_after(last.as_ref(), &s, Some(&format!("call-{n}")), body);
        let stored = match log.append(&e) {
            Ok(a) => a.into_event(),
            // Another writer took the place: on PostgreSQL the server may still commit what
            // the previous (killed) child sent just before it died. Catch up, as every
            // writer does.
            Err(planlog_core::LogError::Conflict { .. }) => {
                last = reread(&*log, &s, tolerant);
                continue;
            }
            Err(err) if tolerant => {
                eprintln!("retry after: {err}");
                std::thread::sleep(std::time::Duration::from_millis(50));
                last = reread(&*log, &s, tolerant);
                continue;
            }
            Err(err) => panic!("append failed: {err}"),
        };
        assert_eq!(stored, e);
        say(&out, format!("append {} {} {}", s, stored.seq, stored.hash));
        last = Some(stored);
    }
}

/// The session's last event; when `tolerant`, retried until the store answers.
fn reread(log: &dyn EventLog, s: &SessionId, tolerant: bool) -> Option<Event> {
    loop {
        match log.last(s) {
            Ok(last) => return last,
            Err(err) if tolerant => {
                eprintln!("retry after: {err}");
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            Err(err) => panic!("reading {s} failed: {err}"),
        }
    }
}

fn mixer(log: Arc<dyn EventLog>, out: Arc<Mutex<std::io::Stdout>>, run: u64) {
    let parent = sid("crash0");
    let mut forks: Vec<SessionId> = Vec::new();
    for k in 0u64.. {
        // Fork the live session at its current end.
        if let Some(last) = log.last(&parent).unwrap() {
            let state = log.state_at(&parent, last.seq).unwrap();
            let id = sid(&format!("fork-{run}-{k}"));
            let first = seal_after(
                None,
                &id,
                None,
                planlog_core::events::EventBody::SessionStarted(
                    planlog_core::events::SessionStarted {
                        origin: Origin::Fork {
                            parent: parent.clone(),
                            at: last.seq,
                        },
                        label: None,
                        plan: state.plan,
                        plan_mode: state.plan_mode,
                        ids_issued: None,
                    },
                ),
            );
            log.append(&first).unwrap();
            say(&out, format!("fork {id} {}", first.hash));
            forks.push(id);
        }
        // Delete the oldest fork once there are a few.
        if forks.len() > 3 {
            let doomed = forks.remove(0);
            // Announced first: a kill between the delete and its acknowledgement may leave
            // the fork either way, and the parent must know which fork that can be.
            say(&out, format!("deleting {doomed}"));
            log.delete(&doomed).unwrap();
            say(&out, format!("delete {doomed}"));
        }
        // Import two sessions of 20 events each, atomically.
        let ids = [
            sid(&format!("imp-{run}-{k}-a")),
            sid(&format!("imp-{run}-{k}-b")),
        ];
        let mut batch: Vec<Event> = Vec::new();
        for id in &ids {
            let mut prev = seal_after(
                None,
                id,
                None,
                started(Origin::Import {
                    source: "crash".into(),
                    source_session: None,
                    parent: None,
                    cwd: None,
                    transcript: None,
                }),
            );
            batch.push(prev.clone());
            for i in 0..19 {
                prev = seal_after(
                    Some(&prev),
                    id,
                    Some(&format!("c{i}")),
                    written(vec![item("1", &format!("v{i}"), PlanStatus::InProgress)]),
                );
                batch.push(prev.clone());
            }
        }
        log.append_all(&batch).unwrap();
        say(&out, format!("import {} {}", ids[0], ids[1]));
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let store = args
        .next()
        .expect("usage: crash_child STORE THREADS [mixed RUN]");
    let threads: usize = args.next().and_then(|t| t.parse().ok()).unwrap_or(1);
    let mode = args.next();
    let mixed = mode.as_deref() == Some("mixed");
    let tolerant = mode.as_deref() == Some("tolerant");
    let run: u64 = args.next().and_then(|r| r.parse().ok()).unwrap_or(0);
    let log = StoreAddress::parse(&store)
        .expect("a store path or URL")
        .open()
        .expect("open store");
    let out = Arc::new(Mutex::new(std::io::stdout()));
    let mut handles: Vec<_> = (0..threads)
        .map(|t| {
            let (log, out) = (Arc::clone(&log), Arc::clone(&out));
            std::thread::spawn(move || appender(log, out, t, tolerant))
        })
        .collect();
    if mixed {
        let (log, out) = (Arc::clone(&log), Arc::clone(&out));
        handles.push(std::thread::spawn(move || mixer(log, out, run)));
    }
    // The workers never stop: the parent ends this process with SIGKILL. A worker that
    // panics (a finding) ends it too, with the panic message on stderr.
    for h in handles {
        if h.join().is_err() {
            std::process::exit(101);
        }
    }
}
