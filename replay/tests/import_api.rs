//! The import library on its own: what the parsers read from each fixture, a session id that
//! belongs to another session, and imports racing in one process.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::sync::Arc;

use planlog_core::testkit::{seal_after, started};
use planlog_core::{EventLog, MemoryLog, Seq, SessionId, TestEnv, events::Origin};
use planlog_replay::import::{
    self, Format, ImportError, ImportOptions, Input, Record,
    record::{Op, Stamp},
};

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures/imports")
            .join(name),
    )
    .unwrap()
}

fn calls(format: Format, name: &str) -> Vec<import::record::SourceCall> {
    let bytes = fixture(name);
    import::records(
        format,
        Input::Bytes {
            name,
            bytes: &bytes,
        },
    )
    .into_iter()
    .filter_map(|r| match r {
        Record::Call(c) => Some(c),
        _ => None,
    })
    .collect()
}

#[test]
fn claude_code_task_calls_are_read_with_their_results() {
    let calls = calls(Format::ClaudeCode, "claude-tasks.jsonl");
    let ops: Vec<String> = calls
        .iter()
        .map(|c| match &c.op {
            Op::List(t) => format!("list {}", t.len()),
            Op::Create(t) => format!("create {}", t.id.as_deref().unwrap_or("?")),
            Op::Update { id, .. } => format!("update {id}"),
            Op::Delete { id } => format!("delete {id}"),
            Op::Refused { .. } => "refused".to_owned(),
            Op::Checkpoint(t) => format!("checkpoint {}", t.len()),
            Op::Snapshot(t) => format!("snapshot {}", t.len()),
            Op::Blocked { .. } => "blocked".to_owned(),
        })
        .collect();
    assert_eq!(
        ops,
        [
            "checkpoint 0",
            "list 1",
            "create 1",
            "create 2",
            "create 3", // the id read from the result text (no toolUseResult)
            "update 2",
            "update 3", // task_id, a number
            "update 1", // id
            "refused",  // success: false
            "update 1",
            "create 4",
            "delete 4",
            "update 3",
            "update 2",
            "checkpoint 3",
            "refused", // is_error
            "checkpoint 3",
            "refused", // no result
        ]
    );
    assert!(calls.iter().all(|c| matches!(c.at, Stamp::At(_))));
    let Op::Update { patch, .. } = &calls[13].op else {
        panic!("expected an update")
    };
    assert_eq!(patch.add_blocks, ["3"]);
    assert_eq!(patch.owner.as_deref(), Some("tester"));
}

#[test]
fn a_session_id_held_by_another_session_is_never_written_into() {
    let log = MemoryLog::new();
    let id = SessionId::new("cx-019a0000-0000-7000-8000-000000000001").unwrap();
    let mine = seal_after(None, &id, None, started(Origin::New));
    log.append(&mine).unwrap();
    let bytes = fixture("codex-new.jsonl");
    let got = import::import(
        &log,
        &TestEnv::default(),
        Format::Codex,
        Input::Bytes {
            name: "codex-new.jsonl",
            bytes: &bytes,
        },
        ImportOptions::default(),
    );
    assert!(
        matches!(&got, Err(ImportError::Clash { session, .. }) if *session == id),
        "{got:?}"
    );
    assert_eq!(log.read(&id, Seq::FIRST, None).unwrap(), [mine]);
}

#[test]
fn imports_racing_in_one_process_record_each_call_once() {
    let log = Arc::new(MemoryLog::new());
    let bytes = fixture("claude-tasks.jsonl");
    std::thread::scope(|s| {
        for _ in 0..4 {
            let log = Arc::clone(&log);
            let bytes = &bytes;
            s.spawn(move || {
                import::import(
                    &*log,
                    &TestEnv::default(),
                    Format::ClaudeCode,
                    Input::Bytes {
                        name: "claude-tasks.jsonl",
                        bytes,
                    },
                    ImportOptions::default(),
                )
                .unwrap();
            });
        }
    });
    let id = SessionId::new("cc-7a1c0de5-0000-4000-8000-00000000c0de").unwrap();
    let events = log.read(&id, Seq::FIRST, None).unwrap();
    assert_eq!(events.len(), 19);
    planlog_core::testkit::assert_chain(&events);
}
