//! Crash-test child: appends plan writes to a store in a loop, from several threads (one
//! session each), and prints `session seq hash` for every acknowledged append. The parent
//! kills it with SIGKILL at a random moment and checks that everything acknowledged is there.
//!
//! Usage: `crash_child STORE THREADS`
#![allow(clippy::unwrap_used, clippy::expect_used)] // test support binary: a panic is a finding

use std::io::Write;
use std::sync::{Arc, Mutex};

use planlog_core::conformance::{item, seal_after, sid, started, written};
use planlog_core::{EventLog, Origin, PlanStatus};
use planlog_store::RedbLog;

fn main() {
    let mut args = std::env::args().skip(1);
    let store = args.next().expect("usage: crash_child STORE THREADS");
    let threads: usize = args.next().and_then(|t| t.parse().ok()).unwrap_or(1);
    let log = Arc::new(RedbLog::open(&store).expect("open store"));
    let out = Arc::new(Mutex::new(std::io::stdout()));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let log = Arc::clone(&log);
            let out = Arc::clone(&out);
            std::thread::spawn(move || {
                let s = sid(&format!("crash{t}"));
                let mut last = log.last(&s).unwrap();
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
                    let stored = log.append(&e).unwrap().into_event();
                    assert_eq!(stored, e);
                    {
                        let mut out = out.lock().unwrap();
                        writeln!(out, "{} {} {}", s, stored.seq, stored.hash).unwrap();
                        out.flush().unwrap();
                    }
                    last = Some(stored);
                }
            })
        })
        .collect();
    // The writers never stop: the parent ends this process with SIGKILL. A writer that
    // panics (a finding) ends it too, with the panic message on stderr.
    for h in handles {
        if h.join().is_err() {
            std::process::exit(101);
        }
    }
}
