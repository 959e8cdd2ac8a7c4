//! A hook's process ends with `_exit`, skipping the C library's exit handlers
//! (`support/exit.rs`). What that must never skip, checked through the binary: the store
//! closed (redb's clean close written by the hooks that indexed in passing, so no later
//! open has to repair the index), every call on record, and the answer on stdout whole.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use serde_json::{Value, json};

mod common;
use common::Planlog;
use common::claude::{common, post, session, todos};

#[test]
fn hook_processes_close_the_index_cleanly_and_answer_whole() {
    let p = Planlog::new();
    // Items that fill most of what an answer may hold (10,000 characters).
    let items: Vec<String> = (0..20)
        .map(|k| format!("Step {k}: {}", "a long description of the step ".repeat(12)))
        .collect();
    // Enough calls for hooks to index in passing more than once (each time the records past
    // the index reach LAZY_LIMIT), each in its own process.
    let calls = 3 * planlog_store::LAZY_LIMIT + 1;
    for call in 0..calls {
        let list: Vec<(&str, &str)> = items
            .iter()
            .enumerate()
            .map(|(k, c)| {
                (
                    c.as_str(),
                    if k < call % 20 {
                        "completed"
                    } else {
                        "pending"
                    },
                )
            })
            .collect();
        let r = p.hook(
            &post(
                "TodoWrite",
                &format!("toolu_{call}"),
                todos(&list),
                json!({}),
            ),
            &[],
            &[],
        );
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "call {call}");
    }
    // The index opened read-only, which cannot repair: a writable handle a hook left open at
    // its process's end (say, the one it indexed in passing with) would fail this open.
    let log = planlog_store::JournaledLog::options()
        .read_only(true)
        .open(p.db())
        .unwrap_or_else(|e| panic!("the index is not as a clean close leaves it: {e}"));
    // Hooks indexed: the index reflects records past the journal's start.
    assert!(log.index_position().unwrap() > 0);
    drop(log);
    // Every call is on record, in order.
    let history = p.ok(&["history", &session(), "--json"]);
    let ids: Vec<String> = history
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        // What the hook knows of the session is no call.
        .filter(|entry| entry["kind"] != "session_described")
        .filter_map(|entry| entry["call_id"].as_str().map(str::to_owned))
        .collect();
    let expected: Vec<String> = (0..calls).map(|c| format!("toolu_{c}")).collect();
    assert_eq!(ids, expected);
    // The plan put back after a compaction: one JSON document, every item in it.
    let mut start = common("SessionStart");
    start["source"] = json!("compact");
    let r = p.hook(&start, &[], &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out: Value = serde_json::from_str(&r.stdout).unwrap();
    let context = out["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(items.iter().all(|item| context.contains(item.as_str())));
}
