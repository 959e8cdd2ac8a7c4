//! A hook's process ends with `_exit`, skipping the C library's exit handlers
//! (`support/exit.rs`). What that must never skip, checked through the binary: the store
//! closed (redb's clean close written by the hooks that indexed in passing, so no later
//! open has to repair the index), every call on record, and the answer on stdout whole.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use serde_json::json;

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
    // Enough calls, each in its own process, for hooks to index in passing (each time the
    // records past the index reach LAZY_LIMIT) and for calls to follow those that did.
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
    let ids = p.call_ids(&session());
    let expected: Vec<String> = (0..calls).map(|c| format!("toolu_{c}")).collect();
    assert_eq!(ids, expected);
    // The plan put back after a compaction: one JSON document, every item in it.
    let mut start = common("SessionStart");
    start["source"] = json!("compact");
    let context = p.hook(&start, &[], &[]).context();
    assert!(items.iter().all(|item| context.contains(item.as_str())));
}
