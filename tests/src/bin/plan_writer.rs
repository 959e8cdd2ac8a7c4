//! A writer process for the many-processes tests: opens SESSION on STORE (a path or a
//! `postgres://` URL), prints `ready`, waits for a line on stdin (so every writer starts at
//! once), then makes CALLS plan_write calls, each adding an item of its own
//! (`p<WRITER>-<i>`, call id the same), and prints each outcome as one JSON line:
//! `{"call", "is_error", "content", "seq"}` (`seq` null when nothing was stored).
//!
//! Usage: `plan_writer STORE SESSION WRITER CALLS`
#![allow(clippy::unwrap_used, clippy::expect_used)] // test support binary: a panic is a finding

use std::io::{BufRead, Write};
use std::sync::Arc;

use planlog_core::{PlanSession, SessionId, WriteStatus};
use planlog_store::StoreAddress;
use planlog_store::host::SystemEnv;
use serde_json::json;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [store, session, writer, calls] = &args[..] else {
        panic!("usage: plan_writer STORE SESSION WRITER CALLS");
    };
    let calls: usize = calls.parse().unwrap();
    let log = StoreAddress::parse(store).unwrap().open().unwrap();
    let mut plan = PlanSession::builder(log, Arc::new(SystemEnv))
        .open(&SessionId::new(session.clone()).unwrap())
        .unwrap();
    let mut out = std::io::stdout().lock();
    writeln!(out, "ready").unwrap();
    out.flush().unwrap();
    let mut go = String::new();
    std::io::stdin().lock().read_line(&mut go).unwrap();
    for i in 0..calls {
        let call = format!("p{writer}-{i}");
        let args = json!({"steps": [{"id": call, "content": format!("item {i} of process {writer}"), "status": "in_progress"}]});
        let outcome = plan.plan_write(Some(&call), None, &args.to_string());
        let seq = match outcome.status() {
            WriteStatus::Stored(seq) => Some(seq.get()),
            _ => None,
        };
        let line = json!({
            "call": call,
            "is_error": outcome.result().is_error,
            "content": outcome.result().content,
            "seq": seq,
        });
        writeln!(out, "{line}").unwrap();
    }
    out.flush().unwrap();
}
