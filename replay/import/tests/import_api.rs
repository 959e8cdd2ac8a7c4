//! The import library on its own: what the parsers read from each fixture, a session id that
//! belongs to another session, and imports racing in one process.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::sync::Arc;

use planlog_core::testkit::{every_event, seal_after, started};
use planlog_core::{EventLog, MemoryLog, Seq, SessionId, TestEnv, events::Origin};
use planlog_import::{
    self as import, ImportError, ImportOptions, Input, Op, Record, SourceFormat, Stamp,
};

mod common;
use common::fixture;

fn calls(format: SourceFormat, name: &str) -> Vec<import::SourceCall> {
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
    // What the transcript says of the session is not a call.
    let calls: Vec<_> = calls(SourceFormat::ClaudeCode, "claude-tasks.jsonl")
        .into_iter()
        .filter(|c| !matches!(c.op, Op::Describe(_)))
        .collect();
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
            Op::Describe(_) => "describe".to_owned(),
            Op::Compacted { .. } => "compacted".to_owned(),
            Op::Restored { .. } => "restored".to_owned(),
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
        SourceFormat::Codex,
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
                    SourceFormat::ClaudeCode,
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
    // Its start, what it is, and the transcript's 18 calls and checkpoints, each once.
    assert_eq!(events.len(), 20);
    planlog_core::testkit::assert_chain(&events);
}

fn import_bytes(
    log: &MemoryLog,
    format: SourceFormat,
    name: &str,
    bytes: &[u8],
) -> import::FileReport {
    import::import(
        log,
        &TestEnv::default(),
        format,
        Input::Bytes { name, bytes },
        ImportOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{name} ({} bytes): {e}", bytes.len()))
}

#[test]
fn a_transcript_imported_as_it_grows_gives_the_history_of_one_import_of_the_whole() {
    for (format, name) in [
        (SourceFormat::ClaudeCode, "claude-small.jsonl"),
        (SourceFormat::ClaudeCode, "claude-tasks.jsonl"),
        (SourceFormat::Codex, "codex-new.jsonl"),
        (SourceFormat::Codex, "codex-old-crlf.jsonl"),
        (SourceFormat::Codex, "codex-explain.jsonl"),
        (SourceFormat::Gemini, "gemini-session.jsonl"),
        (SourceFormat::ClaudeCode, "history-ids.jsonl"),
    ] {
        let whole = if name == "history-ids.jsonl" {
            history_ids_transcript()
        } else {
            fixture(name)
        };
        let once = MemoryLog::new();
        import_bytes(&once, format, name, &whole);
        assert!(
            every_event(&once)
                .iter()
                .any(|(_, events)| events.len() > 2),
            "{name}: the whole file has calls"
        );
        // The file as a writer appends it: after each line, and in the middle of each line.
        let mut cuts = Vec::new();
        let mut start = 0;
        for (i, b) in whole.iter().enumerate() {
            if *b == b'\n' {
                cuts.push(start + (i - start) / 2);
                cuts.push(i + 1);
                start = i + 1;
            }
        }
        cuts.push(whole.len());
        let grown = MemoryLog::new();
        let mut left_over = 0;
        for cut in cuts {
            let report = import_bytes(&grown, format, name, &whole[..cut]);
            left_over += usize::from(report.unfinished.any());
        }
        assert!(
            left_over > 0,
            "{name}: some prefix must leave something for later"
        );
        assert_eq!(every_event(&grown), every_event(&once), "{name}");
    }
}

#[test]
fn a_task_created_before_its_result_is_written_is_recorded_once_the_result_is() {
    let sid = "9a9a9a9a-0000-4000-8000-000000000001";
    let line = |v: serde_json::Value| format!("{v}\n");
    let call = line(
        serde_json::json!({"type": "assistant", "uuid": "a1", "sessionId": sid, "timestamp": "2026-12-01T10:00:00.000Z",
        "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "TaskCreate", "input": {"subject": "Ship it"}}]}}),
    );
    let result = line(
        serde_json::json!({"type": "user", "uuid": "r1", "sessionId": sid, "timestamp": "2026-12-01T10:00:01.000Z", "toolUseResult": {"task": {"id": "1", "subject": "Ship it"}},
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "Task #1 created successfully: Ship it"}]}}),
    );
    let log = MemoryLog::new();
    let first = import_bytes(&log, SourceFormat::ClaudeCode, "t.jsonl", call.as_bytes());
    assert_eq!(first.unfinished.waiting, [(1, 1)]);
    let id = SessionId::new(format!("cc-{sid}")).unwrap();
    assert_eq!(
        log.read(&id, Seq::FIRST, None).unwrap().len(),
        1,
        "only the session so far"
    );
    let grown = format!("{call}{result}");
    let second = import_bytes(&log, SourceFormat::ClaudeCode, "t.jsonl", grown.as_bytes());
    assert!(!second.unfinished.any());
    let events = log.read(&id, Seq::FIRST, None).unwrap();
    assert_eq!(events.len(), 2);
    let plan = log.state_at(&id, Seq::new(2).unwrap()).unwrap().plan;
    assert_eq!(plan.items()[0].content, "Ship it");
}

/// TodoWrite lists whose item ids depend on history, not only on the list before: an item
/// dropped and brought back gets its id again; a new item after a drop gets a new number.
fn history_ids_transcript() -> Vec<u8> {
    let sid = "1d1d1d1d-0000-4000-8000-000000000001";
    let lists: [&[(&str, &str)]; 5] = [
        &[
            ("Write the parser", "in_progress"),
            ("Test the parser", "pending"),
        ],
        &[("Write the parser", "in_progress")],
        &[
            ("Write the parser", "completed"),
            ("Document it", "pending"),
        ],
        &[
            ("Write the parser", "completed"),
            ("Test the parser", "in_progress"),
        ],
        &[("Test the parser", "completed"), ("Ship", "pending")],
    ];
    let mut out = String::new();
    for (n, list) in lists.iter().enumerate() {
        let todos: Vec<serde_json::Value> = list
            .iter()
            .map(|(c, s)| serde_json::json!({"content": c, "status": s, "activeForm": c}))
            .collect();
        let at = format!("2026-12-01T10:00:0{n}.000Z");
        out.push_str(&format!("{}\n", serde_json::json!({"type": "assistant", "uuid": format!("a{n}"), "sessionId": sid, "timestamp": at,
            "message": {"role": "assistant", "content": [{"type": "tool_use", "id": format!("toolu_{n}"), "name": "TodoWrite", "input": {"todos": todos}}]}})));
        out.push_str(&format!("{}\n", serde_json::json!({"type": "user", "uuid": format!("r{n}"), "sessionId": sid, "timestamp": at,
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("toolu_{n}"), "content": "ok"}]}})));
    }
    out.into_bytes()
}

#[test]
fn a_task_id_above_2_pow_53_is_stored_as_it_is_meant_and_never_numbered_again() {
    let sid = "b1b1b1b1-0000-4000-8000-000000000053";
    let big = "9007199254740993"; // 2^53 + 1: a double cannot hold it
    let line = |v: serde_json::Value| format!("{v}\n");
    let call = |n: u32, tool: &str, input: serde_json::Value, result: serde_json::Value| {
        line(
            serde_json::json!({"type": "assistant", "uuid": format!("a{n}"), "sessionId": sid, "timestamp": "2026-12-01T10:00:00.000Z",
            "message": {"role": "assistant", "content": [{"type": "tool_use", "id": format!("toolu_{n}"), "name": tool, "input": input}]}}),
        ) + &line(
            serde_json::json!({"type": "user", "uuid": format!("r{n}"), "sessionId": sid, "timestamp": "2026-12-01T10:00:01.000Z", "toolUseResult": result,
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("toolu_{n}"), "content": "ok"}]}}),
        )
    };
    let text = call(
        1,
        "TaskCreate",
        serde_json::json!({"subject": "Small"}),
        serde_json::json!({"task": {"id": "7", "subject": "Small"}}),
    ) + &call(
        2,
        "TaskCreate",
        serde_json::json!({"subject": "Big"}),
        serde_json::json!({"task": {"id": big, "subject": "Big"}}),
    ) + &call(
        3,
        "TaskUpdate",
        serde_json::json!({"taskId": big, "status": "deleted"}),
        serde_json::json!({"success": true, "taskId": big}),
    );
    let log = MemoryLog::new();
    import_bytes(&log, SourceFormat::ClaudeCode, "big.jsonl", text.as_bytes());
    let id = SessionId::new(format!("cc-{sid}")).unwrap();
    let events = log.read(&id, Seq::FIRST, None).unwrap();
    for e in &events {
        let stored = planlog_core::events::Event::decode(&e.encode()).unwrap();
        assert_eq!(&stored, e, "what a store keeps is what was written");
    }
    let mut report = planlog_audit::Report::default();
    let agents: std::sync::Arc<dyn planlog_audit::AgentRules> =
        std::sync::Arc::new(planlog_audit::NoAgentRules);
    planlog_audit::verify_session(&log, &id, &agents, &mut report, &mut |_| {});
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    // The next id planlog gives is after the highest it can number exactly, never the big one.
    let head = log.head(&id).unwrap().unwrap();
    let state = log.state_at(&id, head.seq).unwrap();
    let next = planlog_core::tasks::next_task_id(&state).unwrap();
    assert_eq!(next.as_str(), "8");
}

/// A turn is a prompt the user typed: Claude Code's background task notices and local
/// command output, which stand in the user's place, are not counted.
#[test]
fn turns_count_the_prompts_the_user_typed() {
    let sid = "7e7e7e7e-0000-4000-8000-000000000001";
    let user = |uuid: &str, content: serde_json::Value| serde_json::json!({"type": "user", "uuid": uuid, "sessionId": sid, "timestamp": "2026-11-01T10:00:00.000Z", "message": {"role": "user", "content": content}});
    let todo = |uuid: &str, id: &str| serde_json::json!({"type": "assistant", "uuid": uuid, "sessionId": sid, "timestamp": "2026-11-01T10:00:01.000Z", "message": {"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "TodoWrite", "input": {"todos": [{"content": "Fix it", "status": "in_progress"}]}}]}});
    let result = |uuid: &str, id: &str| {
        user(
            uuid,
            serde_json::json!([{"type": "tool_result", "tool_use_id": id, "content": "ok"}]),
        )
    };
    let lines = [
        user("u1", serde_json::json!("fix the build")),
        todo("a1", "t1"),
        result("r1", "t1"),
        user(
            "u2",
            serde_json::json!(
                "<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n</task-notification>"
            ),
        ),
        user(
            "u3",
            serde_json::json!([{"type": "text", "text": "<local-command-stdout>ok</local-command-stdout>"}]),
        ),
        todo("a2", "t2"),
        result("r2", "t2"),
        user(
            "u4",
            serde_json::json!("<command-name>/review</command-name>"),
        ),
        todo("a3", "t3"),
        result("r3", "t3"),
    ];
    let text = lines.map(|l| l.to_string()).join("\n");
    let turns: Vec<Option<u64>> = import::records(
        SourceFormat::ClaudeCode,
        Input::Bytes {
            name: "turns.jsonl",
            bytes: text.as_bytes(),
        },
    )
    .into_iter()
    .filter_map(|r| match r {
        Record::Call(c) if matches!(c.op, Op::List(_)) => Some(c.turn),
        _ => None,
    })
    .collect();
    // The notice and the command output are no turns; a slash command the user typed is.
    assert_eq!(turns, [Some(1), Some(1), Some(2)]);
}

/// An empty `task_reminder` is a checkpoint (the list is empty), unless it names a
/// `statusKeeper`: Claude Code 2.1 then hides the list, and the reminder shows nothing.
#[test]
fn a_hidden_task_list_is_no_checkpoint() {
    let sid = "5ee5ee5e-0000-4000-8000-000000000001";
    let reminder = |uuid: &str, extra: serde_json::Value| {
        let mut a = serde_json::json!({"type": "task_reminder", "content": [], "itemCount": 0});
        if let (Some(a), Some(extra)) = (a.as_object_mut(), extra.as_object()) {
            a.extend(extra.clone());
        }
        serde_json::json!({"type": "attachment", "uuid": uuid, "sessionId": sid, "timestamp": "2026-11-01T10:00:00.000Z", "attachment": a})
    };
    let text = [
        reminder("m1", serde_json::json!({})),
        reminder("m2", serde_json::json!({"statusKeeper": "app"})),
    ]
    .map(|l| l.to_string())
    .join("\n");
    let checkpoints: Vec<String> = import::records(
        SourceFormat::ClaudeCode,
        Input::Bytes {
            name: "hidden.jsonl",
            bytes: text.as_bytes(),
        },
    )
    .into_iter()
    .filter_map(|r| match r {
        Record::Call(c) if matches!(c.op, Op::Checkpoint(_)) => c.call_id,
        _ => None,
    })
    .collect();
    assert_eq!(checkpoints, ["reminder:m1"]);
}
