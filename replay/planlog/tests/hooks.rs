//! `planlog hook claude-code`, driven as Claude Code drives it: the real binary, one process
//! per hook event, stdin shaped as Claude Code sends it (REFERENCE-FORMATS.md § 2).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use serde_json::{Value, json};

mod common;
use common::claude::{SID, common, post, session, todos, tool_event};
use common::{Planlog, hold_write_lock};

#[test]
fn a_todowrite_sequence_is_the_plan_the_agent_had_after_each_call() {
    let p = Planlog::new();
    let lists: [&[(&str, &str)]; 3] = [
        &[("Read the code", "in_progress"), ("Fix the bug", "pending")],
        &[
            ("Read the code", "completed"),
            ("Fix the bug", "in_progress"),
            ("Add a test", "pending"),
        ],
        &[("Fix the bug", "completed"), ("Add a test", "in_progress")],
    ];
    for (n, list) in lists.iter().enumerate() {
        let input = todos(list);
        let r = p.hook(
            &post(
                "TodoWrite",
                &format!("toolu_{n}"),
                input.clone(),
                json!({"oldTodos": [], "newTodos": input["todos"]}),
            ),
            &[],
            &[],
        );
        assert_eq!((r.code, r.stdout.as_str()), (0, ""), "{}", r.stderr);
        let plan: Vec<(String, String)> = p
            .plan_of(&session())
            .into_iter()
            .map(|(_, c, s)| (c, s))
            .collect();
        let want: Vec<(String, String)> = list
            .iter()
            .map(|(c, s)| ((*c).to_owned(), (*s).to_owned()))
            .collect();
        assert_eq!(plan, want, "after call {n}");
    }
    let history = p.ok(&["history", &session()]);
    assert!(
        history.contains("captured live from claude-code session"),
        "{history}"
    );
    assert!(history.contains("in /work/app"), "{history}");
    assert_eq!(p.run(&["verify"], None).code, 0);
}

/// A whole list continues the last one's item ids when events that are not plan writes (a
/// prompt's) came after it: the hook finds that list a few events back in the store.
#[test]
fn a_todowrite_after_a_prompt_continues_the_last_lists_ids() {
    let p = Planlog::new();
    let call = |n: usize, list: &[(&str, &str)]| {
        let input = todos(list);
        let r = p.hook(
            &post("TodoWrite", &format!("toolu_{n}"), input.clone(), json!({})),
            &[],
            &[],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
    };
    call(
        0,
        &[("Read the code", "in_progress"), ("Fix the bug", "pending")],
    );
    let mut prompt = common("UserPromptSubmit");
    prompt["prompt"] = json!("go on");
    assert_eq!(p.hook(&prompt, &[], &[]).code, 0);
    let history = p.ok(&["history", &session()]);
    assert!(
        !history.lines().last().unwrap().contains("plan_written"),
        "the prompt put an event after the plan write: {history}"
    );
    call(
        1,
        &[
            ("Read the code", "completed"),
            ("Fix the bug", "in_progress"),
        ],
    );
    let history = p.ok(&["history", &session()]);
    let last = history.lines().last().unwrap();
    assert!(
        last.contains("t1 \"Read the code\": in_progress -> completed")
            && last.contains("t2 \"Fix the bug\": pending -> in_progress"),
        "{history}"
    );
}

/// A list whose ids the last list alone cannot give (an item reworded, an item brought back)
/// is read with the session's history, which the hook keeps beside the store between calls
/// (`<store>.history`, owner only): an item dropped two calls before the cache was last
/// written comes back with its old id, and `planlog delete` removes what was kept.
#[test]
fn a_list_needing_the_history_gets_it_through_the_kept_history_and_delete_removes_it() {
    let p = Planlog::new();
    let lists: [&[(&str, &str)]; 5] = [
        &[("Read the code", "in_progress"), ("Fix the bug", "pending")],
        // reworded: the history is read and kept
        &[
            ("Read the code", "in_progress"),
            ("Fix the parser bug", "pending"),
        ],
        // statuses only, then one dropped: no history needed
        &[
            ("Read the code", "completed"),
            ("Fix the parser bug", "pending"),
        ],
        &[("Fix the parser bug", "in_progress")],
        // brought back: the kept history and the two calls since say it was t1
        &[
            ("Fix the parser bug", "completed"),
            ("Read the code", "pending"),
        ],
    ];
    for (n, list) in lists.iter().enumerate() {
        let input = todos(list);
        let r = p.hook(
            &post("TodoWrite", &format!("toolu_{n}"), input, json!({})),
            &[],
            &[],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let ids: Vec<(String, String)> = p
        .plan_of(&session())
        .into_iter()
        .map(|(id, c, _)| (id, c))
        .collect();
    assert_eq!(
        ids,
        [
            ("t2".to_owned(), "Fix the parser bug".to_owned()),
            ("t1".to_owned(), "Read the code".to_owned())
        ]
    );
    let mut kept = p.db().into_os_string();
    kept.push(".history");
    let files: Vec<_> = std::fs::read_dir(&kept)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let mode = std::fs::metadata(&files[0]).unwrap();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode.permissions()) & 0o777,
        0o600
    );
    assert!(
        std::fs::read_to_string(&files[0])
            .unwrap()
            .contains("Read the code")
    );
    p.ok(&["delete", &session(), "--yes"]);
    assert!(
        !files[0].exists(),
        "the deleted session's item texts stay behind"
    );
}

#[test]
fn a_tasks_sequence_records_creates_updates_refusals_deletes_and_sub_agents() {
    let p = Planlog::new();
    let calls = [
        post(
            "TaskCreate",
            "t1",
            json!({"subject": "Parse", "description": "the config", "activeForm": "Parsing"}),
            json!({"task": {"id": "1", "subject": "Parse"}}),
        ),
        post(
            "TaskCreate",
            "t2",
            json!({"subject": "Test", "description": "the parser"}),
            json!({"task": {"id": "2", "subject": "Test"}}),
        ),
        post(
            "TaskUpdate",
            "t3",
            json!({"taskId": "2", "addBlockedBy": ["1"]}),
            json!({"success": true, "taskId": "2", "updatedFields": ["blockedBy"]}),
        ),
        post(
            "TaskUpdate",
            "t4",
            json!({"taskId": "1", "status": "in_progress", "owner": "main"}),
            json!({"success": true, "taskId": "1", "updatedFields": ["status", "owner"], "statusChange": {"from": "pending", "to": "in_progress"}}),
        ),
        post(
            "TaskUpdate",
            "t5",
            json!({"taskId": "9", "status": "completed"}),
            json!({"success": false, "taskId": "9", "updatedFields": [], "error": "Task not found"}),
        ),
        post(
            "TaskCreate",
            "t6",
            json!({"subject": "Drop me", "description": ""}),
            json!({"task": {"id": "3", "subject": "Drop me"}}),
        ),
        post(
            "TaskUpdate",
            "t7",
            json!({"taskId": "3", "status": "deleted"}),
            json!({"success": true, "taskId": "3", "updatedFields": ["deleted"], "statusChange": {"from": "pending", "to": "deleted"}}),
        ),
    ];
    for c in &calls {
        let r = p.hook(c, &[], &[]);
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let mut failure = tool_event(
        "PostToolUseFailure",
        "TaskUpdate",
        "t8",
        json!({"taskId": "1", "status": "completed"}),
    );
    failure["error"] = json!("TaskCompleted hook: tests fail");
    failure["is_interrupt"] = json!(false);
    assert_eq!(p.hook(&failure, &[], &[]).code, 0);
    // Claude Code may run a hook twice: the same tool_use_id is one call.
    assert_eq!(p.hook(&calls[1], &[], &[]).code, 0);
    // A sub-agent's call goes to a child session.
    let mut sub = post(
        "TodoWrite",
        "s1",
        todos(&[("Run the suite", "in_progress")]),
        json!({"oldTodos": [], "newTodos": []}),
    );
    sub["agent_id"] = json!("a7f3");
    sub["agent_type"] = json!("general-purpose");
    assert_eq!(p.hook(&sub, &[], &[]).code, 0);

    assert_eq!(
        p.plan_of(&session()),
        [
            ("1".to_owned(), "Parse".to_owned(), "in_progress".to_owned()),
            ("2".to_owned(), "Test".to_owned(), "pending".to_owned()),
        ]
    );
    let history = p.ok(&["history", &session()]);
    assert!(
        history.contains("2 \"Test\": blocked by [] -> [1]"),
        "{history}"
    );
    assert!(
        history.contains("rejected: source_refused: Task not found"),
        "{history}"
    );
    assert!(
        history.contains("rejected: source_refused: TaskCompleted hook: tests fail"),
        "{history}"
    );
    assert!(
        history.contains("3 \"Drop me\": pending -> dropped"),
        "{history}"
    );
    assert_eq!(history.matches("[t2]").count(), 1, "{history}");
    let sessions = p.ok(&["sessions"]);
    assert!(
        sessions.contains(&format!("sub-agent of {}", session())),
        "{sessions}"
    );
    assert_eq!(p.run(&["verify"], None).code, 0);
}

/// A transcript holding `lines` (as Claude Code writes them), for a hook to catch up from.
fn transcript(p: &Planlog, lines: &[Value]) -> String {
    let path = p.dir.path().join(format!("{SID}.jsonl"));
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn prompt_line(text: &str) -> Value {
    json!({"type": "user", "uuid": "u0", "sessionId": SID, "timestamp": "2026-01-01T10:00:00.000Z", "message": {"role": "user", "content": text}})
}

/// A PreToolUse of a TodoWrite completing two new items at once, its transcript at `path`.
fn bulk_before(path: &str) -> Value {
    let mut bulk = tool_event(
        "PreToolUse",
        "TodoWrite",
        "toolu_b",
        todos(&[("Read the code", "completed"), ("Fix the bug", "completed")]),
    );
    bulk["transcript_path"] = json!(path);
    bulk
}

#[test]
fn by_default_a_call_the_rules_refuse_runs_and_is_recorded_and_flagged() {
    let p = Planlog::new();
    let input = todos(&[("a", "completed"), ("b", "completed")]);
    let pre = tool_event("PreToolUse", "TodoWrite", "toolu_b", input.clone());
    let r = p.hook(&pre, &[], &[]);
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (0, ""),
        "never blocked by default"
    );
    assert!(
        !p.db().exists(),
        "a PreToolUse without --enforce opens nothing"
    );
    // Settings written by older versions pass --audit-only: still accepted.
    assert_eq!(p.hook(&pre, &["--audit-only"], &[]).code, 0);
    let r = p.hook(&post("TodoWrite", "toolu_b", input, json!({})), &[], &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let history = p.ok(&["history", &session()]);
    assert!(history.contains("FLAG bulk completion"), "{history}");
}

#[test]
fn when_enforcing_a_refused_call_is_blocked_named_by_its_text_and_recorded() {
    let p = Planlog::new();
    let path = transcript(&p, &[prompt_line("do a and b")]);
    let bulk = bulk_before(&path);
    let r = p.hook(&bulk, &["--enforce"], &[]);
    assert_eq!(r.code, 2, "exit 2 blocks the call: {}", r.stderr);
    assert!(
        r.stderr.starts_with(
            r#"Rejected as a bulk completion: item 1 ("Read the code"), item 2 ("Fix the bug") go straight to completed"#
        ),
        "{}",
        r.stderr
    );
    assert!(r.stdout.is_empty());
    let history = p.ok(&["history", &session()]);
    assert!(
        history.contains("write_rejected  [toolu_b]  rejected: bulk_completion"),
        "{history}"
    );
    // A call the rules allow passes and records nothing yet (PostToolUse will).
    let mut fine = tool_event(
        "PreToolUse",
        "TodoWrite",
        "toolu_c",
        todos(&[("Read the code", "in_progress")]),
    );
    fine["transcript_path"] = json!(path);
    let r = p.hook(&fine, &["--enforce"], &[]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    // A dependency cycle among tasks planlog knows is refused; an unknown blocker is not
    // (planlog may not have seen the whole list).
    for (id, input, response) in [
        (
            "k1",
            json!({"subject": "A"}),
            json!({"task": {"id": "1", "subject": "A"}}),
        ),
        (
            "k2",
            json!({"subject": "B"}),
            json!({"task": {"id": "2", "subject": "B"}}),
        ),
        (
            "k3",
            json!({"taskId": "2", "addBlockedBy": ["1"]}),
            json!({"success": true, "taskId": "2"}),
        ),
    ] {
        let tool = if id == "k3" {
            "TaskUpdate"
        } else {
            "TaskCreate"
        };
        assert_eq!(p.hook(&post(tool, id, input, response), &[], &[]).code, 0);
    }
    let mut cycle = tool_event(
        "PreToolUse",
        "TaskUpdate",
        "k4",
        json!({"taskId": "1", "addBlockedBy": ["2"]}),
    );
    cycle["transcript_path"] = json!(path);
    let r = p.hook(&cycle, &["--enforce"], &[]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("in a circle"), "{}", r.stderr);
    let mut unknown = tool_event(
        "PreToolUse",
        "TaskUpdate",
        "k5",
        json!({"taskId": "1", "addBlockedBy": ["40"]}),
    );
    unknown["transcript_path"] = json!(path);
    let r = p.hook(&unknown, &["--enforce"], &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // verify re-runs the hook's rules on each recorded refusal.
    assert_eq!(p.run(&["verify"], None).code, 0);
}

#[test]
fn when_enforcing_a_transcript_the_agent_writes_a_moment_later_is_waited_for() {
    // The agent writes its transcript behind its calls: at the first call that would be
    // refused it may not be there yet. The hook waits a moment for it (300 ms at most),
    // then judges against the whole plan: blocked, not allowed blind.
    let p = Planlog::new();
    let path = p.dir.path().join(format!("{SID}.jsonl"));
    let bulk = bulk_before(&path.display().to_string());
    let writer = {
        let path = path.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(150));
            let temp = path.with_extension("writing");
            std::fs::write(&temp, format!("{}\n", prompt_line("do a and b"))).unwrap();
            std::fs::rename(&temp, &path).unwrap();
        })
    };
    let r = p.hook(&bulk, &["--enforce"], &[]);
    writer.join().unwrap();
    assert_eq!(
        r.code, 2,
        "blocked once the transcript was there: {}",
        r.stderr
    );
    assert!(
        r.stderr.starts_with("Rejected as a bulk completion"),
        "{}",
        r.stderr
    );
}

#[test]
fn when_enforcing_a_session_begun_before_install_is_caught_up_from_its_transcript_first() {
    let p = Planlog::new();
    // Claude Code ran two TodoWrites before planlog's hooks were installed.
    let list = |n: u32, items: &[(&str, &str)]| {
        let input = todos(items);
        [
            json!({"type": "assistant", "uuid": format!("a{n}"), "sessionId": SID, "timestamp": "2026-01-01T10:00:00.000Z",
                "message": {"role": "assistant", "content": [{"type": "tool_use", "id": format!("toolu_old{n}"), "name": "TodoWrite", "input": input}]}}),
            json!({"type": "user", "uuid": format!("r{n}"), "sessionId": SID, "timestamp": "2026-01-01T10:00:01.000Z",
                "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("toolu_old{n}"), "content": "ok"}]}}),
        ]
    };
    let mut lines = vec![prompt_line("fix it")];
    lines.extend(list(
        1,
        &[
            ("Read", "in_progress"),
            ("Fix", "pending"),
            ("Test", "pending"),
        ],
    ));
    lines.extend(list(
        2,
        &[
            ("Read", "completed"),
            ("Fix", "in_progress"),
            ("Test", "pending"),
        ],
    ));
    let path = transcript(&p, &lines);
    // The next call lists the item finished long ago and completes two that were started:
    // no bulk completion, once planlog knows what the agent had.
    let mut next = tool_event(
        "PreToolUse",
        "TodoWrite",
        "toolu_new",
        todos(&[
            ("Read", "completed"),
            ("Fix", "completed"),
            ("Test", "in_progress"),
        ]),
    );
    next["transcript_path"] = json!(path);
    let r = p.hook(&next, &["--enforce"], &[]);
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (0, ""),
        "caught up, then allowed"
    );
    let history = p.ok(&["history", &session()]);
    assert!(
        history.contains("[toolu_old1]") && history.contains("[toolu_old2]"),
        "{history}"
    );
    // Against a plan planlog cannot know whole (no transcript to read), a refusal is allowed
    // and said, never blocked.
    let mut blind = tool_event(
        "PreToolUse",
        "TodoWrite",
        "toolu_x",
        todos(&[("New 1", "completed"), ("New 2", "completed")]),
    );
    blind["transcript_path"] = json!(p.dir.path().join("missing.jsonl"));
    let r = p.hook(&blind, &["--enforce"], &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("could not check the call against the whole plan"),
        "{}",
        r.stderr
    );
}

/// Calls the hooks missed (a disk so full that the spool could not take them, a hook that
/// did not run) are read from the transcript before a call that would otherwise be flagged:
/// the record holds each completion where the agent made it, not one bulk completion of
/// them all at the next call.
#[test]
fn calls_the_hooks_missed_are_read_from_the_transcript_before_a_call_would_be_flagged() {
    let p = Planlog::new();
    let steps = ["Read", "Plan", "Fix", "Test", "Ship"];
    // Call n completes the first n steps and starts the next.
    let list = |n: usize| {
        todos(
            &steps
                .iter()
                .enumerate()
                .map(|(k, s)| {
                    let status = match k.cmp(&n) {
                        std::cmp::Ordering::Less => "completed",
                        std::cmp::Ordering::Equal => "in_progress",
                        std::cmp::Ordering::Greater => "pending",
                    };
                    (*s, status)
                })
                .collect::<Vec<_>>(),
        )
    };
    let call = |n: usize, result: bool| {
        let mut lines = vec![
            json!({"type": "assistant", "uuid": format!("a{n}"), "sessionId": SID, "timestamp": format!("2026-01-01T10:0{n}:00.000Z"),
            "message": {"role": "assistant", "content": [{"type": "tool_use", "id": format!("toolu_{n}"), "name": "TodoWrite", "input": list(n)}]}}),
        ];
        if result {
            lines.push(json!({"type": "user", "uuid": format!("r{n}"), "sessionId": SID, "timestamp": format!("2026-01-01T10:0{n}:01.000Z"),
                "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("toolu_{n}"), "content": "ok"}]}}));
        }
        lines
    };
    let mut lines = vec![prompt_line("ship it")];
    for n in 0..4 {
        lines.extend(call(n, true));
    }
    // The call whose hook runs now: in the transcript, its result not yet.
    lines.extend(call(4, false));
    let path = transcript(&p, &lines);
    let hook = |n: usize| {
        let mut v = post("TodoWrite", &format!("toolu_{n}"), list(n), json!({}));
        v["transcript_path"] = json!(path);
        let r = p.hook(&v, &[], &[]);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "call {n}");
    };
    // The hooks ran for the first call, missed the next three, and run for the fifth.
    hook(0);
    hook(4);
    let history = p.ok(&["history", &session()]);
    assert!(!history.contains("FLAG"), "{history}");
    let order: Vec<usize> = (0..5)
        .map(|n| {
            history
                .find(&format!("[toolu_{n}]"))
                .unwrap_or_else(|| panic!("toolu_{n} recorded: {history}"))
        })
        .collect();
    assert!(
        order.windows(2).all(|w| w[0] < w[1]),
        "in the agent's order: {history}"
    );
    assert_eq!(history.matches("[toolu_4]").count(), 1, "{history}");
    assert_eq!(
        p.plan_of(&session())
            .last()
            .map(|(_, _, status)| status.clone()),
        Some("in_progress".to_owned())
    );
    assert_eq!(p.run(&["verify"], None).code, 0);
    // Without a transcript to read, a call that breaks the rules is recorded and flagged
    // as before.
    let mut blind = post(
        "TodoWrite",
        "toolu_x",
        todos(&[("New 1", "completed"), ("New 2", "completed")]),
        json!({}),
    );
    blind["session_id"] = json!("0d5e7a1c-0000-4000-8000-00000000b11d");
    blind["transcript_path"] = json!(p.dir.path().join("missing.jsonl"));
    assert_eq!(p.hook(&blind, &[], &[]).code, 0);
    let history = p.ok(&["history", "cc-0d5e7a1c-0000-4000-8000-00000000b11d"]);
    assert!(history.contains("FLAG bulk completion"), "{history}");
}

#[test]
fn the_plan_comes_back_after_compaction_resume_clear_and_fork_and_on_prompts() {
    let p = Planlog::new();
    let start = |source: &str| {
        let mut v = common("SessionStart");
        v["source"] = json!(source);
        v["model"] = json!("claude-opus-4-8");
        v
    };
    // Nothing to restore yet, and nothing created for it (nor at the session's end).
    let r = p.hook(&start("compact"), &[], &[]);
    assert_eq!((r.code, r.stdout.as_str(), r.stderr.as_str()), (0, "", ""));
    assert_eq!(p.hook(&common("SessionEnd"), &[], &[]).code, 0);
    assert!(
        !p.db().exists(),
        "no store for a session that never planned"
    );
    p.hook(
        &post(
            "TodoWrite",
            "toolu_1",
            todos(&[
                ("Read the code", "completed"),
                ("Fix the bug", "in_progress"),
            ]),
            json!({}),
        ),
        &[],
        &[],
    );
    // The transcript holds the call and, once compacted, the boundary line.
    let main_transcript = p.dir.path().join(format!("{SID}.jsonl"));
    let todo_input = todos(&[
        ("Read the code", "completed"),
        ("Fix the bug", "in_progress"),
    ]);
    std::fs::write(
        &main_transcript,
        [
            json!({"type": "user", "uuid": "u0", "sessionId": SID, "timestamp": "2026-11-30T10:00:00.000Z", "message": {"role": "user", "content": "fix the bug"}}),
            json!({"type": "assistant", "uuid": "a1", "sessionId": SID, "timestamp": "2026-11-30T10:00:01.000Z", "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "TodoWrite", "input": todo_input}]}}),
            json!({"type": "user", "uuid": "r1", "sessionId": SID, "timestamp": "2026-11-30T10:00:02.000Z", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "Todos have been modified successfully."}]}}),
            // Stamped now: a boundary from long ago is no compaction a hook is called for.
            json!({"type": "system", "subtype": "compact_boundary", "uuid": "cb-1", "parentUuid": null, "sessionId": SID, "timestamp": chrono_now(), "content": "Conversation compacted", "compactMetadata": {"trigger": "auto", "preTokens": 155000, "postTokens": 9000}}),
            json!({"type": "user", "uuid": "s1", "sessionId": SID, "isCompactSummary": true, "timestamp": "2026-11-30T10:05:01.000Z", "message": {"role": "user", "content": "This session is being continued..."}}),
        ]
        .map(|v| v.to_string())
        .join("\n")
            + "\n",
    )
    .unwrap();
    let mut restored = Vec::new();
    for source in ["compact", "resume", "clear"] {
        let mut input = start(source);
        input["transcript_path"] = json!(main_transcript.to_str().unwrap());
        let r = p.hook(&input, &[], &[]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let out: Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(out["hookSpecificOutput"]["hookEventName"], "SessionStart");
        restored.push(
            out["hookSpecificOutput"]["additionalContext"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    assert!(restored.windows(2).all(|w| w[0] == w[1]));
    // The whole list, completed items too (a TodoWrite must send them again), and progress.
    insta::assert_snapshot!("restore_todowrite", restored[0]);
    assert_eq!(
        p.hook(&start("startup"), &[], &[]).stdout,
        "",
        "startup is not a restore"
    );
    let mut prompt = common("UserPromptSubmit");
    prompt["prompt"] = json!("go on");
    let r = p.hook(&prompt, &[], &[]);
    let out: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        out["hookSpecificOutput"]["hookEventName"],
        "UserPromptSubmit"
    );
    // On record: the compaction, as the transcript's boundary line says it, then each text
    // put back, exactly as Claude Code got it, and the seq whose plan it shows.
    let history = p.ok(&["history", &session()]);
    assert!(
        history.contains(
            "context_compacted [compact:cb-1]  the agent's context was compacted (auto; 155000 -> 9000 tokens)"
        ),
        "{history}"
    );
    let entries: Vec<Value> = p
        .ok(&["history", &session(), "--json"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = entries
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "session_started",
            "session_described",
            "plan_written",
            // SessionStart names the model.
            "session_described",
            "context_compacted",
            "plan_restored",
            "plan_restored",
            "plan_restored",
            "plan_restored"
        ],
        "{history}"
    );
    let texts: Vec<&str> = entries
        .iter()
        .filter(|e| e["kind"] == "plan_restored")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts[..3],
        restored.iter().map(String::as_str).collect::<Vec<_>>()[..]
    );
    assert_eq!(
        texts[3],
        out["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap()
    );
    for after in ["compact", "resume", "clear", "prompt"] {
        assert!(
            history.contains(&format!("put back into the agent's context after {after}")),
            "{history}"
        );
    }
    let v = p.run(&["verify"], None);
    assert_eq!(v.code, 0, "{}", v.stdout);
    assert!(
        v.stdout
            .contains("on record: 1 compactions of an agent's context, 4 plans put back into one"),
        "{}",
        v.stdout
    );
    // The transcript imported later adds what the hooks could not see, and nothing twice:
    // the call and the compaction were recorded by the hooks.
    let r = p.run(&["import", main_transcript.to_str().unwrap()], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let again = p.ok(&["history", &session()]);
    assert_eq!(again.matches("context_compacted").count(), 1, "{again}");
    assert_eq!(again.matches("[toolu_1]").count(), 1, "{again}");
    assert_eq!(p.run(&["verify"], None).code, 0);
    // A fork: a new session id whose transcript starts with the parent's lines.
    let fork_sid = "0d5e7a1c-0000-4000-8000-00000000f0f0";
    let transcript = p.dir.path().join("fork.jsonl");
    std::fs::write(
        &transcript,
        [
            json!({"type": "user", "uuid": "u1", "sessionId": SID, "message": {"role": "user", "content": "Fix the bug"}}).to_string(),
            json!({"type": "user", "uuid": "u2", "sessionId": fork_sid, "message": {"role": "user", "content": "try another way"}}).to_string(),
        ]
        .join("\n"),
    )
    .unwrap();
    let mut fork = start("fork");
    fork["session_id"] = json!(fork_sid);
    fork["transcript_path"] = json!(transcript.to_str().unwrap());
    let r = p.hook(&fork, &[], &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out: Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(
        out["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap()
            .contains("Fix the bug")
    );
    let fork_history = p.ok(&["history", &format!("cc-{fork_sid}")]);
    assert!(
        fork_history.contains(&format!(
            "continued from session {} at seq {} (a Claude Code fork)",
            session(),
            p.ok(&["sessions", "--json", "--oldest-first"])
                .lines()
                .map(|l| serde_json::from_str::<Value>(l).unwrap())
                .find(|s| s["id"] == session().as_str())
                .unwrap()["events"]
        )),
        "{fork_history}"
    );
    // Once everything is done, nothing is injected.
    p.hook(
        &post(
            "TodoWrite",
            "toolu_2",
            todos(&[("Read the code", "completed"), ("Fix the bug", "completed")]),
            json!({}),
        ),
        &[],
        &[],
    );
    assert_eq!(p.hook(&start("compact"), &[], &[]).stdout, "");
    assert_eq!(p.run(&["verify"], None).code, 0);
}

#[test]
fn a_shared_task_list_is_one_session_for_every_agent_on_it() {
    let p = Planlog::new();
    let team = [("CLAUDE_CODE_TASK_LIST_ID", "team-list")];
    p.hook(
        &post(
            "TaskCreate",
            "a1",
            json!({"subject": "Plan"}),
            json!({"task": {"id": "1", "subject": "Plan"}}),
        ),
        &[],
        &team,
    );
    let mut other = post(
        "TaskUpdate",
        "b1",
        json!({"taskId": "1", "status": "in_progress", "owner": "agent-b"}),
        json!({"success": true, "taskId": "1"}),
    );
    other["session_id"] = json!("another-session");
    p.hook(&other, &[], &team);
    assert_eq!(
        p.plan_of("ct-team-list"),
        [("1".to_owned(), "Plan".to_owned(), "in_progress".to_owned())]
    );
    assert!(!p.ok(&["sessions"]).contains("cc-"));
}

#[test]
fn a_locked_store_or_a_full_disk_spools_the_call_and_nothing_is_lost() {
    let p = Planlog::new();
    // The store exists and has a session.
    p.hook(
        &post(
            "TodoWrite",
            "toolu_1",
            todos(&[("One", "in_progress")]),
            json!({}),
        ),
        &[],
        &[],
    );
    // Locked: the hook answers at once (exit 0, a warning) and spools the call.
    let lock = hold_write_lock(&p.db());
    let started = std::time::Instant::now();
    let r = p.hook(
        &post(
            "TodoWrite",
            "toolu_2",
            todos(&[("One", "completed"), ("Two", "in_progress")]),
            json!({}),
        ),
        &[],
        &[],
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(3));
    assert_eq!(r.code, 0);
    assert!(
        r.stderr.contains("waits in") && r.stderr.contains("hook-spool"),
        "{}",
        r.stderr
    );
    drop(lock);
    // The next hook call stores the spooled call first, then its own: in order.
    let r = p.hook(
        &post(
            "TodoWrite",
            "toolu_3",
            todos(&[("Two", "completed"), ("Three", "in_progress")]),
            json!({}),
        ),
        &[],
        &[],
    );
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    let history = p.ok(&["history", &session()]);
    let order: Vec<usize> = ["[toolu_1]", "[toolu_2]", "[toolu_3]"]
        .iter()
        .map(|c| history.find(c).unwrap())
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{history}");
    // A full disk (a file-size limit at the store's size, SIGXFSZ ignored: the store cannot
    // grow, a small file can still be written): spooled too.
    let big = common::big_list();
    let big_list: Vec<(&str, &str)> = big.iter().map(|(c, s)| (c.as_str(), *s)).collect();
    let input = post("TodoWrite", "toolu_4", todos(&big_list), json!({}));
    let out = p.hook_on_a_full_disk(&input, &[]);
    let stderr = &out.stderr;
    assert_eq!(out.code, 0, "{stderr}");
    assert!(stderr.contains("waits in"), "{stderr}");
    assert!(!p.ok(&["history", &session()]).contains("[toolu_4]"));
    // `planlog verify` only reads: it reports the call that waits (exit 1) and stores nothing.
    let v = p.run(&["verify"], None);
    assert_eq!(v.code, 1, "{}{}", v.stdout, v.stderr);
    assert!(
        v.stdout
            .contains("problem: 1 Claude Code hook calls wait in")
            && v.stdout.contains("run `planlog drain`"),
        "{}",
        v.stdout
    );
    assert!(!p.ok(&["history", &session()]).contains("[toolu_4]"));
    // The disk frees up: `planlog drain` stores what waited, and verify is clean again.
    let d = p.run(&["drain"], None);
    assert_eq!(d.code, 0, "{}", d.stderr);
    assert!(d.stderr.contains("stored 1 hook calls"), "{}", d.stderr);
    assert!(p.ok(&["history", &session()]).contains("[toolu_4]"));
    let v = p.run(&["verify"], None);
    assert_eq!(v.code, 0, "{}{}", v.stdout, v.stderr);
}

#[test]
fn the_restored_plan_of_tasks_carries_their_ids_and_progress() {
    let p = Planlog::new();
    let creates = [
        ("Read the code", "1"),
        ("Fetch the data", "2"),
        ("Deploy", "3"),
    ];
    for (n, (subject, id)) in creates.iter().enumerate() {
        p.hook(
            &post(
                "TaskCreate",
                &format!("c{n}"),
                json!({"subject": subject, "description": "", "activeForm": subject}),
                json!({"task": {"id": id, "subject": subject}}),
            ),
            &[],
            &[],
        );
    }
    for (n, (id, status)) in [("1", "completed"), ("2", "in_progress")]
        .iter()
        .enumerate()
    {
        p.hook(
            &post(
                "TaskUpdate",
                &format!("u{n}"),
                json!({"taskId": id, "status": status}),
                json!({"success": true, "taskId": id}),
            ),
            &[],
            &[],
        );
    }
    p.hook(
        &post(
            "TaskUpdate",
            "u9",
            json!({"taskId": "3", "addBlockedBy": ["2"]}),
            json!({"success": true, "taskId": "3"}),
        ),
        &[],
        &[],
    );
    let mut compact = common("SessionStart");
    compact["source"] = json!("compact");
    let text = p.hook(&compact, &[], &[]).context();
    assert!(text.contains("[>] #2 Fetch the data"), "{text}");
    insta::assert_snapshot!("restore_tasks", text);
}

#[test]
fn bad_input_and_other_events_exit_0_and_write_nothing() {
    let p = Planlog::new();
    for stdin in [
        &b"not json"[..],
        b"",
        b"{\"hook_event_name\": \"PostToolUse\"}",
        b"[1,2]",
    ] {
        let r = p.hook_raw(stdin, &[], &[]);
        assert_eq!(r.code, 0);
        assert!(r.stderr.starts_with("planlog hook: "), "{}", r.stderr);
        assert!(r.stdout.is_empty());
    }
    let bash = post(
        "Bash",
        "toolu_x",
        json!({"command": "ls"}),
        json!({"stdout": ""}),
    );
    let r = p.hook(&bash, &[], &[]);
    assert_eq!((r.code, r.stdout.as_str(), r.stderr.as_str()), (0, "", ""));
    let mut stop = common("Stop");
    stop["stop_hook_active"] = json!(false);
    assert_eq!(p.hook(&stop, &[], &[]).code, 0);
    assert!(!p.db().exists() || p.ok(&["sessions", "--json"]).trim().is_empty());
}

/// The agent may write its transcript's first lines after its first hook ran (a transcript
/// still being written): the session is described from the hook input then, and the next
/// call reads the head again and records the first prompt.
#[test]
fn a_transcript_written_after_the_first_hook_still_names_the_session() {
    let p = Planlog::new();
    let path = p.dir.path().join(format!("{SID}.jsonl"));
    let call = |id: &str, items: &[(&str, &str)]| {
        let mut input = post("TodoWrite", id, todos(items), json!({}));
        input["transcript_path"] = json!(path.to_str().unwrap());
        input
    };
    let described = || -> Value {
        let listed = p.run(&["sessions", "--json"], None);
        let line = listed
            .stdout
            .lines()
            .find(|l| l.contains(&session()))
            .unwrap()
            .to_owned();
        serde_json::from_str::<Value>(&line).unwrap()["description"].clone()
    };
    // The first call: no transcript on disk yet.
    p.hook(&call("toolu_1", &[("Read", "in_progress")]), &[], &[]);
    assert!(described()["first_prompt"].is_null(), "{}", described());
    // The agent has written its first lines by the next call.
    transcript(&p, &[prompt_line("plan the shop")]);
    p.hook(&call("toolu_2", &[("Read", "completed")]), &[], &[]);
    assert_eq!(
        described()["first_prompt"],
        "plan the shop",
        "{}",
        described()
    );
    // Once the head is on record, later calls do not add it again.
    let before = p
        .run(&["history", &session(), "--json"], None)
        .stdout
        .lines()
        .count();
    p.hook(&call("toolu_3", &[("Fix", "in_progress")]), &[], &[]);
    let history = p.run(&["history", &session(), "--json"], None).stdout;
    assert_eq!(history.lines().count(), before + 1, "{history}");
    assert_eq!(p.run(&["verify"], None).code, 0);
}

#[test]
fn hooks_and_a_later_import_of_the_transcript_meet_in_one_session() {
    let p = Planlog::new();
    let first = todos(&[("Read", "in_progress"), ("Fix", "pending")]);
    p.hook(
        &post("TodoWrite", "toolu_1", first.clone(), json!({})),
        &[],
        &[],
    );
    // The transcript holds that call and one the hooks missed (installed later, say).
    let second = todos(&[("Read", "completed"), ("Fix", "in_progress")]);
    let line = |uuid: &str, kind: &str, message: Value| {
        json!({"type": kind, "uuid": uuid, "sessionId": SID, "timestamp": "2026-11-30T10:00:00.000Z", "message": message}).to_string()
    };
    let transcript = [
        line("u0", "user", json!({"role": "user", "content": "fix it"})),
        line("a1", "assistant", json!({"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "TodoWrite", "input": first}]})),
        line("r1", "user", json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]})),
        line("a2", "assistant", json!({"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_2", "name": "TodoWrite", "input": second}]})),
        line("r2", "user", json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_2", "content": "ok"}]})),
    ]
    .join("\n");
    let file = p.dir.path().join(format!("{SID}.jsonl"));
    std::fs::write(&file, transcript).unwrap();
    let r = p.run(&["import", file.to_str().unwrap()], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout.trim(), session());
    assert!(
        r.stderr
            .contains("2 events appended (1 calls were there already)"),
        "{}",
        r.stderr
    );
    assert_eq!(
        p.plan_of(&session())
            .iter()
            .map(|(_, _, s)| s.as_str())
            .collect::<Vec<_>>(),
        ["completed", "in_progress"]
    );
    assert_eq!(p.run(&["verify"], None).code, 0);
}

/// The README's workflow with the Tasks tools: hooks record each call live, and a later
/// import of the transcript adds its `task_reminder` checkpoints. Each checkpoint is compared
/// with the plan after the call that came before it in the transcript (not with the plan at
/// the end), and the empty reminder Claude Code writes once every task is done is no
/// difference: verify has nothing to say, and no time is called out of order.
#[test]
fn hooks_then_an_import_with_checkpoints_is_one_coherent_history() {
    let p = Planlog::new();
    let create = |id: &str, n: &str, subject: &str| {
        post(
            "TaskCreate",
            id,
            json!({"subject": subject, "description": subject}),
            json!({"task": {"id": n, "subject": subject}}),
        )
    };
    let update = |id: &str, n: &str, status: &str| {
        post(
            "TaskUpdate",
            id,
            json!({"taskId": n, "status": status}),
            json!({"success": true, "taskId": n, "updatedFields": ["status"]}),
        )
    };
    let calls = [
        create("c1", "1", "Parse"),
        create("c2", "2", "Test"),
        update("u1", "1", "in_progress"),
        update("u2", "1", "completed"),
        update("u3", "2", "in_progress"),
        update("u4", "2", "completed"),
    ];
    for c in &calls {
        let r = p.hook(c, &[], &[]);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{c}");
    }
    // The transcript: each call, its result, and a reminder after some of them, as Claude
    // Code writes it (an hour before the hooks ran, as a transcript read later is).
    let mut lines = vec![
        json!({"type": "user", "uuid": "u0", "sessionId": SID, "timestamp": "2026-11-30T09:00:00.000Z", "version": "2.1.332", "cwd": "/work/app", "gitBranch": "main", "message": {"role": "user", "content": "parse and test"}}),
    ];
    let task = |n: &str, subject: &str, status: &str| json!({"id": n, "subject": subject, "description": subject, "status": status, "blocks": [], "blockedBy": []});
    let reminders: [(usize, Vec<Value>); 4] = [
        (
            1,
            vec![task("1", "Parse", "pending"), task("2", "Test", "pending")],
        ),
        (
            3,
            vec![
                task("1", "Parse", "completed"),
                task("2", "Test", "pending"),
            ],
        ),
        (
            4,
            vec![
                task("1", "Parse", "completed"),
                task("2", "Test", "in_progress"),
            ],
        ),
        // Every task done: Claude Code's next reminder is empty.
        (5, vec![]),
    ];
    for (n, c) in calls.iter().enumerate() {
        let at = format!("2026-11-30T09:0{n}:00.000Z");
        let id = c["tool_use_id"].as_str().unwrap();
        lines.push(json!({"type": "assistant", "uuid": format!("a{n}"), "sessionId": SID, "timestamp": at, "message": {"role": "assistant", "model": "claude-opus-4-8", "content": [{"type": "tool_use", "id": id, "name": c["tool_name"], "input": c["tool_input"]}]}}));
        lines.push(json!({"type": "user", "uuid": format!("r{n}"), "sessionId": SID, "timestamp": at, "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "done"}]}, "toolUseResult": c["tool_response"]}));
        for (after, items) in &reminders {
            if *after == n {
                lines.push(json!({"type": "attachment", "uuid": format!("m{n}"), "sessionId": SID, "timestamp": at, "attachment": {"type": "task_reminder", "itemCount": items.len(), "content": items}}));
            }
        }
    }
    let file = p.dir.path().join(format!("{SID}.jsonl"));
    std::fs::write(
        &file,
        lines
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join("\n")
            + "\n",
    )
    .unwrap();
    let r = p.run(&["import", file.to_str().unwrap()], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("(6 calls were there already)"),
        "{}",
        r.stderr
    );
    let history = p.ok(&["history", &session()]);
    assert_eq!(history.matches("checkpoint_seen").count(), 4, "{history}");
    assert!(!history.contains("DIFFERS"), "{history}");
    assert!(!history.contains("earlier than"), "{history}");
    // Each compared with the plan after the call before it in the transcript.
    for seq in [4, 6, 7] {
        assert!(
            history.contains(&format!("as imported (the plan at seq {seq}")),
            "{history}"
        );
    }
    let v = p.run(&["verify"], None);
    assert_eq!(v.code, 0, "{}", v.stdout);
    assert!(
        !v.stdout.lines().any(|l| l.starts_with("note:")),
        "{}",
        v.stdout
    );
    // A checkpoint that does not match the plan it belongs with still says so.
    let mut wrong = lines.clone();
    wrong.push(json!({"type": "attachment", "uuid": "m-wrong", "sessionId": SID, "timestamp": "2026-11-30T09:09:00.000Z", "attachment": {"type": "task_reminder", "itemCount": 1, "content": [task("1", "Parse", "pending")]}}));
    std::fs::write(
        &file,
        wrong
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join("\n")
            + "\n",
    )
    .unwrap();
    assert_eq!(p.run(&["import", file.to_str().unwrap()], None).code, 0);
    let v = p.run(&["verify"], None);
    assert!(
        v.stdout.contains(
            "differs from the imported plan at seq 8: 1 \"Parse\": completed -> pending; 2 \"Test\": completed -> dropped"
        ),
        "{}",
        v.stdout
    );
}

/// Claude Code writes a compaction's boundary line only after its `SessionStart` hooks ran:
/// the hook records the compaction without it, and the import of the transcript takes the
/// boundary for that compaction by its time (a boundary long before it is another one).
#[test]
fn a_compaction_recorded_before_its_boundary_line_is_not_recorded_twice() {
    let p = Planlog::new();
    p.hook(
        &post(
            "TodoWrite",
            "toolu_1",
            todos(&[("Read", "completed"), ("Fix", "in_progress")]),
            json!({}),
        ),
        &[],
        &[],
    );
    let transcript = p.dir.path().join(format!("{SID}.jsonl"));
    let call = json!({"type": "assistant", "uuid": "a1", "sessionId": SID, "timestamp": "2026-11-30T10:00:01.000Z", "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "TodoWrite", "input": todos(&[("Read", "completed"), ("Fix", "in_progress")])}]}});
    let result = json!({"type": "user", "uuid": "r1", "sessionId": SID, "timestamp": "2026-11-30T10:00:02.000Z", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]}});
    std::fs::write(&transcript, format!("{call}\n{result}\n")).unwrap();
    let mut start = common("SessionStart");
    start["source"] = json!("compact");
    start["transcript_path"] = json!(transcript.to_str().unwrap());
    let r = p.hook(&start, &[], &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let history = p.ok(&["history", &session()]);
    assert!(
        history.contains("context_compacted [compact:hook-"),
        "{history}"
    );
    // Then Claude Code writes the boundary, stamped as the compaction ended (now); and an
    // older one, from a compaction no hook saw.
    let now = chrono_now();
    let boundary = |uuid: &str, at: &str| json!({"type": "system", "subtype": "compact_boundary", "uuid": uuid, "parentUuid": null, "sessionId": SID, "timestamp": at, "content": "Conversation compacted", "compactMetadata": {"trigger": "manual", "preTokens": 12000}});
    std::fs::write(
        &transcript,
        format!(
            "{}\n{call}\n{result}\n{}\n",
            boundary("cb-old", "2026-11-30T09:00:00.000Z"),
            boundary("cb-new", &now)
        ),
    )
    .unwrap();
    let r = p.run(&["import", transcript.to_str().unwrap()], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let history = p.ok(&["history", &session()]);
    assert_eq!(history.matches("context_compacted").count(), 2, "{history}");
    assert!(history.contains("[compact:cb-old]"), "{history}");
    assert!(!history.contains("[compact:cb-new]"), "{history}");
    // Again: nothing new.
    let r = p.run(&["import", transcript.to_str().unwrap()], None);
    assert!(r.stderr.contains("nothing new"), "{}", r.stderr);
    assert_eq!(p.run(&["verify"], None).code, 0);
}

/// Now, as Claude Code stamps its lines (UTC, milliseconds).
fn chrono_now() -> String {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    planlog_core::Timestamp::from_millis(ms).to_string()
}

/// Copilot CLI and Cursor also run the hooks in Claude Code's settings files. Their payloads
/// (REFERENCE-AGENTS.md §4.2, §5) are not Claude Code sessions: nothing is recorded, nothing
/// is blocked or put back, and stderr says whose payload it was. A real Claude Code payload
/// beside them is still recorded.
#[test]
fn copilot_and_cursor_payloads_in_claude_codes_hooks_are_never_a_claude_code_session() {
    let p = Planlog::new();
    let list = todos(&[("Read the code", "in_progress")]);
    // Cursor, with a session id as well (the worst case): its TodoWrite merges by id.
    let mut cursor = post("TodoWrite", "call_ab12\nctc_cd34", list.clone(), json!({}));
    cursor["conversation_id"] = json!("7d0e41c2-aaaa-bbbb-cccc-0123456789ab");
    cursor["cursor_version"] = json!("2026.07.23-e383d2b");
    cursor["generation_id"] = json!("c41a");
    cursor["workspace_roots"] = json!(["/work/app"]);
    cursor["transcript_path"] = Value::Null;
    // Copilot CLI, Claude-compatible dialect: snake_case fields, an ISO timestamp, no transcript.
    let copilot_pascal = json!({
        "session_id": SID, "hook_event_name": "PostToolUse", "timestamp": "2026-12-01T10:11:12.345Z",
        "cwd": "/work/app", "tool_name": "TodoWrite", "tool_args": list.clone(), "tool_input": list.clone(),
        "tool_result": {"result_type": "success", "text_result_for_llm": "ok"}
    });
    // Copilot CLI's own dialect: camelCase fields, an epoch-ms timestamp.
    let copilot_camel = json!({
        "sessionId": SID, "timestamp": 1_764_583_511_204_u64, "cwd": "/work/app",
        "toolName": "TodoWrite", "toolArgs": list.to_string(),
        "toolResult": {"resultType": "success", "textResultForLlm": "ok"}
    });
    // Gemini CLI, with Claude Code's hooks copied by `gemini hooks migrate`.
    let gemini = json!({
        "session_id": "6f1c2a90-5b7e-4c1d-9e2f-0a1b2c3d4e5f", "hook_event_name": "AfterTool",
        "transcript_path": "/home/u/.gemini/tmp/app/chats/session-2026-12-01T10-02-6f1c2a90.jsonl",
        "cwd": "/work/app", "timestamp": "2026-12-01T10:05:11.204Z", "tool_name": "TodoWrite",
        "tool_input": list.clone(), "tool_response": {"llmContent": "ok"}
    });
    let mut gemini_post = gemini.clone();
    gemini_post["hook_event_name"] = json!("PostToolUse");
    for (who, payload) in [
        ("Cursor", &cursor),
        ("Copilot CLI", &copilot_pascal),
        ("Copilot CLI", &copilot_camel),
        ("Gemini CLI", &gemini),
        ("Gemini CLI", &gemini_post),
    ] {
        for flags in [&[][..], &["--enforce"][..]] {
            let r = p.hook(payload, flags, &[]);
            assert_eq!((r.code, r.stdout.as_str()), (0, ""), "{who}: {}", r.stderr);
            assert!(
                r.stderr.contains(who) && r.stderr.contains("nothing recorded"),
                "{who}: {}",
                r.stderr
            );
        }
        let mut start = payload.clone();
        start["hook_event_name"] = json!("SessionStart");
        start["source"] = json!("compact");
        assert_eq!(
            p.hook(&start, &[], &[]).stdout,
            "",
            "{who}: nothing put back"
        );
    }
    assert!(!p.db().exists(), "no session was made of them");
    // Claude Code's own payload is recorded as before.
    let r = p.hook(&post("TodoWrite", "toolu_1", list, json!({})), &[], &[]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert_eq!(p.plan_of(&session()).len(), 1);
}

/// `planlog hook codex` with Codex's payloads (REFERENCE-AGENTS.md §1.3, as the real Codex
/// 0.169 sends them, see `codex_live.rs`): `update_plan` recorded in the rollout's session
/// (`cx-<session id>`), spooled behind a locked store with its agent and drained in order;
/// enforcing blocks a bulk completion once the rollout is caught up (and allows, saying why,
/// when the rollout cannot be read); another agent's tool is not Codex's.
#[test]
fn codex_hooks_record_update_plan_in_the_rollouts_session_and_spool_it_with_its_agent() {
    let p = Planlog::new();
    let sid = "019b2c4e-7d1a-7f30-9c55-3e8a1b2c4d5e";
    let call = |id: &str, steps: &[(&str, &str)]| {
        json!({
            "session_id": sid, "turn_id": "019b2c4f-0a11-7e20-8d41-aa0b1c2d3e4f",
            "transcript_path": format!("/home/u/.codex/sessions/2026/12/01/rollout-2026-12-01T10-02-03-{sid}.jsonl"),
            "cwd": "/src/app", "hook_event_name": "PostToolUse", "model": "gpt-5.5",
            "permission_mode": "default", "tool_name": "update_plan",
            "tool_input": {"plan": steps.iter().map(|(s, st)| json!({"step": s, "status": st})).collect::<Vec<_>>()},
            "tool_response": "Plan updated", "tool_use_id": id
        })
    };
    let codex = |input: &Value, flags: &[&str]| {
        p.hook_of("codex", input.to_string().as_bytes(), flags, &[])
    };
    let r = codex(
        &call("call_1", &[("Parse", "in_progress"), ("Test", "pending")]),
        &[],
    );
    assert_eq!((r.code, r.stdout.as_str(), r.stderr.as_str()), (0, "", ""));
    let lock = hold_write_lock(&p.db());
    let r = codex(
        &call("call_2", &[("Parse", "completed"), ("Test", "in_progress")]),
        &[],
    );
    assert_eq!(r.code, 0);
    assert!(r.stderr.contains("waits in"), "{}", r.stderr);
    drop(lock);
    // verify names what waits as what it is: Codex's, for the rollout's session.
    let v = p.run(&["verify"], None);
    assert_eq!(v.code, 1, "{}{}", v.stdout, v.stderr);
    assert!(
        v.stdout.contains("problem: 1 Codex hook calls wait in")
            && v.stdout.contains(&format!("sessions cx-{sid}")),
        "{}",
        v.stdout
    );
    p.ok(&["drain"]);
    let session = format!("cx-{sid}");
    let history = p.ok(&["history", &session]);
    assert!(
        history.contains("captured live from codex session"),
        "{history}"
    );
    let (one, two) = (
        history.find("[call_1]").unwrap(),
        history.find("[call_2]").unwrap(),
    );
    assert!(one < two, "{history}");
    assert!(
        history.contains("via update_plan: \"Plan updated\"")
            || history.contains("\"Plan updated\""),
        "{history}"
    );
    let plan: Vec<(String, String)> = p
        .plan_of(&session)
        .into_iter()
        .map(|(_, c, s)| (c, s))
        .collect();
    assert_eq!(
        plan,
        [
            ("Parse".to_owned(), "completed".to_owned()),
            ("Test".to_owned(), "in_progress".to_owned())
        ]
    );
    // Enforcing: a bulk completion is refused against the plan planlog has, but the rollout
    // named in the payload cannot be read to make sure planlog has all of it: allowed, said.
    let four = [
        ("Parse", "completed"),
        ("Test", "in_progress"),
        ("Ship", "pending"),
        ("Doc", "pending"),
    ];
    assert_eq!(codex(&call("call_5", &four), &[]).code, 0);
    let all_done = [
        ("Parse", "completed"),
        ("Test", "completed"),
        ("Ship", "completed"),
        ("Doc", "completed"),
    ];
    let mut pre = call("call_3", &all_done);
    pre["hook_event_name"] = json!("PreToolUse");
    let r = codex(&pre, &["--enforce"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, ""));
    assert!(
        r.stderr
            .contains("could not check the call against the whole plan"),
        "{}",
        r.stderr
    );
    // With the rollout there (caught up first): blocked, exit 2, the reason for the model on
    // stderr, the refusal on record.
    let dir = tempfile::tempdir().unwrap();
    let rollout = dir
        .path()
        .join(format!("rollout-2026-12-01T10-02-03-{sid}.jsonl"));
    std::fs::write(
        &rollout,
        format!(
            "{}\n",
            json!({"timestamp": "2026-12-01T10:02:03.000Z", "type": "session_meta",
                "payload": {"id": sid, "timestamp": "2026-12-01T10:02:03.000Z", "cli_version": "0.169.0"}})
        ),
    )
    .unwrap();
    pre["transcript_path"] = json!(rollout.to_str().unwrap());
    let r = codex(&pre, &["--enforce"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("bulk"), "{}", r.stderr);
    let history = p.ok(&["history", &session]);
    assert!(
        history.contains("write_rejected") && history.contains("[call_3]"),
        "{history}"
    );
    // Claude Code's tool is not Codex's: nothing recorded.
    let mut other = call("call_4", &[]);
    other["tool_name"] = json!("TodoWrite");
    assert_eq!(codex(&other, &[]).code, 0);
    assert!(!p.ok(&["history", &session]).contains("[call_4]"));
    assert_eq!(p.run(&["verify"], None).code, 0);
}

/// `planlog hook gemini` with Gemini CLI's payloads (REFERENCE-AGENTS.md §2.2, as the real
/// Gemini CLI 0.61 sends them, see `gemini_live.rs`): `write_todos` recorded from `AfterTool`
/// in the recording's session (`gm-<session id>`), a failed call as a refusal; the plan back
/// on `SessionStart` (resume, clear) and, after a compression the user asked for, on the next
/// `BeforeAgent` only; an automatic `PreCompress` (Gemini fires one before every model call)
/// no compaction; stdout only ever pure JSON or nothing (Gemini shows any other text to the
/// user), exit 0 throughout.
#[test]
fn gemini_hooks_record_write_todos_and_put_the_plan_back_when_gemini_lets_them() {
    let p = Planlog::new();
    let sid = "6f1c2a90-5b7e-4c1d-9e2f-0a1b2c3d4e5f";
    let session = format!("gm-{sid}");
    let base = |event: &str| {
        json!({"session_id": sid, "transcript_path": "", "cwd": "/src/app",
            "hook_event_name": event, "timestamp": "2026-12-01T10:05:11.204Z"})
    };
    let todos = |list: &[(&str, &str)]| json!({"todos": list.iter().map(|(d, s)| json!({"description": d, "status": s})).collect::<Vec<_>>()});
    let after_tool = |list: &[(&str, &str)], error: Option<&str>| {
        let mut v = base("AfterTool");
        v["tool_name"] = json!("write_todos");
        v["tool_input"] = todos(list);
        v["tool_response"] = match error {
            None => {
                json!({"llmContent": "Successfully updated the todo list.", "returnDisplay": todos(list)})
            }
            Some(e) => json!({"llmContent": e, "returnDisplay": e, "error": e}),
        };
        v
    };
    let gemini = |input: &Value, flags: &[&str]| {
        let r = p.hook_of("gemini", input.to_string().as_bytes(), flags, &[]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(
            r.stdout.is_empty() || serde_json::from_str::<Value>(&r.stdout).is_ok(),
            "stdout is JSON or nothing: {}",
            r.stdout
        );
        r
    };
    // A session starting, a prompt, an automatic PreCompress: nothing to do, no store made.
    let mut start = base("SessionStart");
    start["source"] = json!("startup");
    for input in [start, base("BeforeAgent"), {
        let mut v = base("PreCompress");
        v["trigger"] = json!("auto");
        v
    }] {
        assert_eq!(gemini(&input, &[]).stdout, "");
    }
    assert!(!p.db().exists());
    // Another tool's AfterTool is not recorded.
    let mut shell = base("AfterTool");
    shell["tool_name"] = json!("run_shell_command");
    shell["tool_input"] = json!({"command": "ls"});
    gemini(&shell, &[]);
    assert!(!p.db().exists());

    let r = gemini(
        &after_tool(
            &[("Parse <input>", "in_progress"), ("Test", "pending")],
            None,
        ),
        &[],
    );
    assert_eq!((r.stdout.as_str(), r.stderr.as_str()), ("", ""));
    let history = p.ok(&["history", &session]);
    assert!(
        history.contains("captured live from gemini session") && history.contains("[hook:"),
        "{history}"
    );
    assert!(
        history.contains("via write_todos: \"Successfully updated the todo list.\""),
        "{history}"
    );
    // A failed call: a refusal, the plan as it was.
    gemini(
        &after_tool(
            &[("Parse <input>", "in_progress"), ("Test", "in_progress")],
            Some("Invalid parameters: Only one task can be \"in_progress\" at a time."),
        ),
        &[],
    );
    let history = p.ok(&["history", &session]);
    assert!(history.contains("write_rejected"), "{history}");
    assert_eq!(p.plan_of(&session)[1].2, "pending");
    // PreToolUse-like BeforeTool without --enforce: nothing.
    let mut before = base("BeforeTool");
    before["tool_name"] = json!("write_todos");
    before["tool_input"] = todos(&[("Parse <input>", "completed"), ("Test", "completed")]);
    assert_eq!(gemini(&before, &[]).stdout, "");

    // An automatic PreCompress is no compaction: the next prompt gets nothing.
    let mut auto = base("PreCompress");
    auto["trigger"] = json!("auto");
    gemini(&auto, &[]);
    assert_eq!(gemini(&base("BeforeAgent"), &[]).stdout, "");
    assert!(!p.ok(&["history", &session]).contains("context_compacted"));
    // /compress: marked, and the next prompt gets the plan, once.
    let mut manual = base("PreCompress");
    manual["trigger"] = json!("manual");
    assert_eq!(gemini(&manual, &[]).stdout, "");
    let r = gemini(&base("BeforeAgent"), &[]);
    let out: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(out["hookSpecificOutput"]["hookEventName"], "BeforeAgent");
    let text = out["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    // In write_todos's words, with no angle bracket for Gemini to escape.
    assert!(
        text.contains("[in_progress] Parse &lt;input&gt;\n[pending] Test")
            && text.contains("write_todos replaces the list")
            && !text.contains('<')
            && !text.contains('>'),
        "{text}"
    );
    assert_eq!(gemini(&base("BeforeAgent"), &[]).stdout, "");
    let history = p.ok(&["history", &session]);
    assert!(
        history.contains("context_compacted") && history.contains("plan_restored"),
        "{history}"
    );
    // Resumed, cleared: the plan back at the session's start.
    for source in ["resume", "clear"] {
        let mut start = base("SessionStart");
        start["source"] = json!(source);
        let r = gemini(&start, &[]);
        let out: Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(out["hookSpecificOutput"]["hookEventName"], "SessionStart");
    }
    assert_eq!(p.run(&["verify"], None).code, 0);
}

/// Gemini runs no hook after a compression it decides on its own: at the next prompt
/// (`BeforeAgent`) planlog reads the recording, where the compression is the history rewritten
/// as a summary (a `$set.messages` of new messages, as Gemini CLI 0.61 writes it), records it,
/// and puts the plan back, once. A compression the user asked for (`/compress`, marked by
/// `PreCompress`) shows in the recording too, and stays one compaction.
#[test]
fn gemini_hooks_put_the_plan_back_after_a_compression_gemini_ran_on_its_own() {
    let p = Planlog::new();
    let sid = "8a2b3c4d-6e7f-4a1b-9c2d-3e4f5a6b7c8d";
    let session = format!("gm-{sid}");
    let dir = tempfile::tempdir().unwrap();
    let recording = dir.path().join("session-2026-12-01T10-00-8a2b3c4d.jsonl");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let at = |s: i64| planlog_core::Timestamp::from_millis(now + s * 1000).to_string();
    let list = json!({"todos": [{"description": "Pin the toolchain", "status": "in_progress"},
        {"description": "Fix the warnings", "status": "pending"}]});
    let answer = |id: &str, s: i64, tokens: u64| {
        json!({"id": id, "timestamp": at(s), "type": "gemini", "content": "", "model": "gemini-2.5-pro",
            "tokens": {"input": tokens, "output": 10, "cached": 0, "thoughts": 0, "tool": 0, "total": tokens + 10}})
    };
    let append = |lines: &[Value]| {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&recording)
            .unwrap();
        for l in lines {
            writeln!(f, "{l}").unwrap();
        }
    };
    let mut planned = answer("g1", -59, 120_000);
    planned["toolCalls"] = json!([{"id": "wt-1", "name": "write_todos", "args": list,
        "status": "success", "timestamp": at(-59)}]);
    append(&[
        json!({"sessionId": sid, "projectHash": "app", "startTime": at(-61), "lastUpdated": at(-61), "kind": "main"}),
        json!({"id": "u1", "timestamp": at(-60), "type": "user", "content": [{"text": "Port the build"}]}),
        planned,
    ]);
    let base = |event: &str| {
        json!({"session_id": sid, "transcript_path": recording, "cwd": "/src/app",
            "hook_event_name": event, "timestamp": at(0)})
    };
    let gemini = |input: &Value| {
        let r = p.hook_of("gemini", input.to_string().as_bytes(), &[], &[]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        r
    };
    let mut after = base("AfterTool");
    after["tool_name"] = json!("write_todos");
    after["tool_input"] = list.clone();
    after["tool_response"] =
        json!({"llmContent": "Successfully updated the todo list.", "returnDisplay": list});
    gemini(&after);
    // The next prompt, nothing compressed: nothing put back.
    assert_eq!(gemini(&base("BeforeAgent")).stdout, "");
    // Gemini compresses on its own (an automatic PreCompress, as before every model call):
    // the history becomes a summary and what it keeps, under new ids.
    let mut auto = base("PreCompress");
    auto["trigger"] = json!("auto");
    gemini(&auto);
    let rewritten = |first: i64, ids: [&str; 2]| {
        json!({"$set": {"messages": [
            {"id": ids[0], "timestamp": at(first), "type": "user", "content": [{"text": "<state_snapshot>Porting.</state_snapshot>"}]},
            {"id": ids[1], "timestamp": at(first), "type": "gemini", "content": [{"text": "Got it. Thanks for the additional context!"}]}]}})
    };
    append(&[
        answer("g2", -30, 610_000),
        json!({"id": "u2", "timestamp": at(-20), "type": "user", "content": [{"text": "Go on"}]}),
        json!({"$set": {"sessionId": sid}}),
        rewritten(-15, ["s1", "s2"]),
        answer("g3", -10, 190_000),
    ]);
    let r = gemini(&base("BeforeAgent"));
    let out: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(out["hookSpecificOutput"]["hookEventName"], "BeforeAgent");
    let text = out["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        text.contains("[in_progress] Pin the toolchain\n[pending] Fix the warnings"),
        "{text}"
    );
    let history = p.ok(&["history", &session]);
    assert_eq!(history.matches("context_compacted").count(), 1, "{history}");
    assert!(
        history.contains("[compact:s1]") && history.contains("610000 tokens before"),
        "{history}"
    );
    assert_eq!(history.matches("plan_restored").count(), 1, "{history}");
    assert_eq!(
        history.matches("plan_written").count(),
        1,
        "the hook's call and the recording's are one: {history}"
    );
    assert_eq!(gemini(&base("BeforeAgent")).stdout, "", "put back once");

    // /compress: marked by its PreCompress, put back at the next prompt; the answer after it
    // shows it in the recording, and it stays one compaction.
    append(&[answer("g4", -5, 650_000)]);
    let mut manual = base("PreCompress");
    manual["trigger"] = json!("manual");
    gemini(&manual);
    assert!(
        gemini(&base("BeforeAgent"))
            .stdout
            .contains("additionalContext")
    );
    append(&[rewritten(5, ["s3", "s4"]), answer("g5", 6, 100_000)]);
    assert_eq!(gemini(&base("BeforeAgent")).stdout, "");
    let history = p.ok(&["history", &session]);
    assert_eq!(history.matches("context_compacted").count(), 2, "{history}");
    assert_eq!(history.matches("plan_restored").count(), 2, "{history}");
    assert_eq!(p.run(&["verify"], None).code, 0);
}

/// `planlog hook copilot` with Copilot CLI's camelCase payloads (REFERENCE-AGENTS.md §4.2, the
/// event named by the command, as `planlog install copilot` writes it) and the todo table its
/// `sql` tool edits (§4.4, in `~/.copilot/session-state/<id>/session.db`, unconfirmed): each
/// call that changes the table records the list with Copilot's ids and dependencies in
/// `cp-<session id>`; a call that changes nothing, or touches no todo table, records nothing;
/// two items done at once are recorded and flagged; a compaction is on record, and the plan
/// goes back at the next `notification` (the one event whose output Copilot reads), once; no
/// database is a warning, never a failure.
#[test]
fn copilot_hooks_record_the_todo_table_after_each_sql_call() {
    let p = Planlog::new();
    let sid = "a3c1e2f0-4b5d-4e6f-8a7b-9c0d1e2f3a4b";
    let session = format!("cp-{sid}");
    let home = p.dir.path().join("home");
    let home_str = home.to_str().unwrap().to_owned();
    let copilot = |event: &str, payload: &Value| {
        let r = p.hook_of(
            "copilot",
            payload.to_string().as_bytes(),
            &["--event", event],
            &[("HOME", home_str.as_str()), ("COPILOT_HOME", "")],
        );
        assert_eq!((r.code, r.stdout.as_str()), (0, ""), "{}", r.stderr);
        r
    };
    let sql = |query: &str, result: &str| {
        json!({"sessionId": sid, "timestamp": 1_764_583_511_204_u64, "cwd": "/src/app",
            "toolName": "sql", "toolArgs": json!({"query": query}).to_string(),
            "toolResult": {"resultType": "success", "textResultForLlm": result}})
    };
    // No database yet: said, nothing recorded.
    let r = copilot("postToolUse", &sql("SELECT * FROM todos", "0 rows"));
    assert!(r.stderr.contains("is not there"), "{}", r.stderr);
    assert!(!p.db().exists());
    let dir = home.join(".copilot/session-state").join(sid);
    std::fs::create_dir_all(&dir).unwrap();
    let db = rusqlite::Connection::open(dir.join("session.db")).unwrap();
    db.execute_batch(
        "CREATE TABLE todos (id TEXT PRIMARY KEY, title TEXT NOT NULL, description TEXT,
             status TEXT DEFAULT 'pending', created_at TEXT DEFAULT CURRENT_TIMESTAMP, updated_at TEXT);
         CREATE TABLE todo_deps (todo_id TEXT, depends_on TEXT, PRIMARY KEY (todo_id, depends_on));",
    )
    .unwrap();
    let run = |query: &str| {
        db.execute_batch(query).unwrap();
        copilot("postToolUse", &sql(query, "ok"))
    };
    let r = run("INSERT INTO todos (id, title, status, created_at) VALUES
           ('parser-tests', 'Write parser tests', 'in_progress', '2026-12-01 10:00:00'),
           ('parser', 'Implement parser', 'pending', '2026-12-01 10:00:01'),
           ('docs', 'Document it', 'pending', '2026-12-01 10:00:02'),
           ('release', 'Release it', 'pending', '2026-12-01 10:00:03');
         INSERT INTO todo_deps VALUES ('parser', 'parser-tests');");
    assert_eq!(r.stderr, "");
    let history = p.ok(&["history", &session]);
    assert!(
        history.contains("captured live from copilot session")
            && history.contains("parser-tests \"Write parser tests\": new in_progress")
            && history
                .contains("parser \"Implement parser\": new pending, blocked by [parser-tests]")
            && history.contains("via sql: \"ok\""),
        "{history}"
    );
    // The same call again (a retry), a read, a call on another table: nothing new.
    copilot(
        "postToolUse",
        &sql("SELECT * FROM todos WHERE status = 'pending'", "2 rows"),
    );
    run("CREATE TABLE notes (x TEXT); INSERT INTO notes VALUES ('a');");
    assert_eq!(
        p.ok(&["history", &session]).matches("plan_written").count(),
        1
    );
    run("UPDATE todos SET status = 'done' WHERE id = 'parser-tests'");
    run("UPDATE todos SET status = 'in_progress' WHERE id = 'parser'");
    // Two never started, done at once: recorded as Copilot's table says, and flagged.
    run("UPDATE todos SET status = 'done' WHERE id IN ('docs', 'release')");
    let history = p.ok(&["history", &session]);
    assert_eq!(history.matches("plan_written").count(), 4, "{history}");
    assert!(
        history.contains("parser-tests \"Write parser tests\": in_progress -> completed"),
        "{history}"
    );
    assert!(
        history
            .lines()
            .last()
            .unwrap()
            .to_lowercase()
            .contains("bulk completion"),
        "{history}"
    );
    let shown = p.ok(&["show", &session]);
    assert!(shown.contains("3. ✔ Document it"), "{shown}");
    // A notification before any compaction: nothing.
    let notification = json!({"sessionId": sid, "timestamp": 1_764_583_650_000_u64, "cwd": "/src/app",
        "message": "Copilot is waiting for your input", "notificationType": "idle"});
    let r = p.hook_of(
        "copilot",
        notification.to_string().as_bytes(),
        &["--event", "notification"],
        &[("HOME", home_str.as_str())],
    );
    assert_eq!((r.code, r.stdout.as_str()), (0, ""), "{}", r.stderr);
    // A compaction (Copilot ignores what preCompact prints: nothing there), then the plan
    // goes back at the next notification, once, with Copilot's ids.
    let r = copilot(
        "preCompact",
        &json!({"sessionId": sid, "timestamp": 1_764_583_600_000_u64, "cwd": "/src/app",
            "transcriptPath": "/home/u/.copilot/session-state/x/events.jsonl", "trigger": "auto",
            "customInstructions": ""}),
    );
    assert_eq!(r.stderr, "");
    let r = p.hook_of(
        "copilot",
        notification.to_string().as_bytes(),
        &["--event", "notification"],
        &[("HOME", home_str.as_str())],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out: Value = serde_json::from_str(&r.stdout).unwrap();
    let text = out["additionalContext"].as_str().unwrap();
    assert!(
        text.contains("#parser-tests") && text.contains("#release") && text.contains("sql tool"),
        "{text}"
    );
    let again = p.hook_of(
        "copilot",
        notification.to_string().as_bytes(),
        &["--event", "notification"],
        &[("HOME", home_str.as_str())],
    );
    assert_eq!(again.stdout, "", "put back once");
    copilot(
        "sessionEnd",
        &json!({"sessionId": sid, "timestamp": 1_764_583_700_000_u64, "cwd": "/src/app", "reason": "complete"}),
    );
    let history = p.ok(&["history", &session]);
    assert_eq!(history.matches("context_compacted").count(), 1, "{history}");
    assert_eq!(history.matches("plan_restored").count(), 1, "{history}");
    // A session id that is not a plain name reads nothing outside Copilot's folder.
    let mut odd = sql("SELECT * FROM todos", "ok");
    odd["sessionId"] = json!("../../etc");
    let r = copilot("postToolUse", &odd);
    assert!(r.stderr.contains("names no folder"), "{}", r.stderr);
    let r = p.run(&["verify"], None);
    assert_eq!(r.code, 0, "{}", r.stdout);
}

/// `planlog hook copilot --enforce` before a `sql` call runs (`preToolUse`): the call is run
/// on a copy of Copilot's database and the list it would leave judged against the table as it
/// stands; two todos never started done at once are refused as Copilot's `permissionDecision`
/// with the reason, on record, the real table untouched; a step at a time passes. Statements
/// that reach outside the copy (`ATTACH`, `VACUUM INTO`), or run past the time given, are not
/// judged: allowed, with a warning, and nothing is written outside.
#[test]
fn copilot_enforcing_runs_the_call_on_a_copy_and_refuses_a_bulk_completion() {
    let p = Planlog::new();
    let sid = "b4d2e3f1-5c6e-4f70-9b8c-0d1e2f3a4b5c";
    let session = format!("cp-{sid}");
    let home = p.dir.path().join("home");
    let home_str = home.to_str().unwrap().to_owned();
    let dir = home.join(".copilot/session-state").join(sid);
    std::fs::create_dir_all(&dir).unwrap();
    let db = rusqlite::Connection::open(dir.join("session.db")).unwrap();
    db.execute_batch(
        "CREATE TABLE todos (id TEXT PRIMARY KEY, title TEXT NOT NULL, status TEXT DEFAULT 'pending',
             created_at TEXT DEFAULT CURRENT_TIMESTAMP);
         INSERT INTO todos (id, title, status, created_at) VALUES
           ('tests', 'Write the tests', 'in_progress', '1'), ('docs', 'Document it', 'pending', '2'),
           ('release', 'Release it', 'pending', '3');",
    )
    .unwrap();
    let before = |query: &str| {
        let payload = json!({"sessionId": sid, "timestamp": 1_764_583_511_204_u64, "cwd": "/src/app",
            "toolName": "sql", "toolArgs": json!({"query": query}).to_string()});
        let r = p.hook_of(
            "copilot",
            payload.to_string().as_bytes(),
            &["--enforce", "--event", "preToolUse"],
            &[("HOME", home_str.as_str())],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        r
    };
    let table = || -> Vec<(String, String)> {
        let mut stmt = db
            .prepare("SELECT id, status FROM todos ORDER BY created_at")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    let was = table();
    let r = before("UPDATE todos SET status = 'done' WHERE id IN ('docs', 'release')");
    let out: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(out["permissionDecision"], "deny", "{}", r.stdout);
    let reason = out["permissionDecisionReason"].as_str().unwrap();
    assert!(
        reason.contains("bulk completion") && reason.contains("docs") && reason.contains("release"),
        "{reason}"
    );
    assert_eq!(table(), was, "the real table is only read");
    let history = p.ok(&["history", &session]);
    assert_eq!(history.matches("write_rejected").count(), 1, "{history}");
    // A step at a time: allowed, nothing said.
    let r = before("UPDATE todos SET status = 'done' WHERE id = 'tests'");
    assert_eq!((r.stdout.as_str(), r.stderr.as_str()), ("", ""));
    // Reaching outside the copy, or running too long: not judged, allowed, said.
    let outside = p.dir.path().join("outside.db");
    for query in [
        format!(
            "ATTACH DATABASE '{}' AS x; CREATE TABLE x.todos (id TEXT); UPDATE todos SET status = 'done'",
            outside.display()
        ),
        format!(
            "VACUUM INTO '{}'; UPDATE todos SET status = 'done'",
            outside.display()
        ),
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n, todos"
            .to_owned(),
    ] {
        let r = before(&query);
        assert_eq!(r.stdout, "", "{query}");
        assert!(r.stderr.contains("it is allowed"), "{query}: {}", r.stderr);
        assert!(!outside.exists(), "{query}");
    }
    assert_eq!(table(), was);
    assert_eq!(
        p.ok(&["history", &session])
            .matches("write_rejected")
            .count(),
        1
    );
}

/// `planlog hook opencode` with what planlog's plugin sends (Claude Code's field names, from
/// opencode's `tool.execute.after` and `experimental.session.compacting`, see
/// `opencode_live.rs`): a todowrite recorded in `oc-<session id>` by its call id, with the text
/// the model read; a compaction answers the plan as JSON for the plugin to add, and is on
/// record; one for a session planlog has not seen answers nothing. Enforcing: a todowrite
/// about to run (`tool.execute.before`, with opencode's list as it stands) that the rules refuse
/// is blocked (exit 2, the reason on stderr, the refusal on record) only when planlog's record
/// lists what opencode lists; when it does not, or no list came, the call is allowed.
#[test]
fn opencode_plugin_payloads_record_todowrite_and_answer_the_plan_at_compaction() {
    let p = Planlog::new();
    let sid = "ses_3f2a9c0d1effk2Lq";
    let session = format!("oc-{sid}");
    let opencode = |input: &Value, flags: &[&str]| {
        let r = p.hook_of("opencode", input.to_string().as_bytes(), flags, &[]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        r
    };
    let compacting = json!({"hook_event_name": "PreCompact", "session_id": sid, "cwd": "/src/app", "source": "compact"});
    assert_eq!(opencode(&compacting, &[]).stdout, "");
    let todos = json!({"todos": [{"content": "Write parser tests", "status": "in_progress", "priority": "high"},
        {"content": "Implement parser", "status": "pending", "priority": "medium"}]});
    let after = json!({"hook_event_name": "PostToolUse", "session_id": sid, "cwd": "/src/app",
        "tool_name": "todowrite", "tool_input": todos, "tool_use_id": "call_1",
        "tool_response": {"output": "[2 todos]", "metadata": {"todos": todos["todos"]}}});
    let r = opencode(&after, &[]);
    assert_eq!((r.stdout.as_str(), r.stderr.as_str()), ("", ""));
    let history = p.ok(&["history", &session]);
    assert!(
        history.contains("[call_1]") && history.contains("via todowrite: \"[2 todos]\""),
        "{history}"
    );
    // Sent twice (a retried plugin call): recorded once.
    opencode(&after, &[]);
    assert_eq!(
        p.ok(&["history", &session]).matches("plan_written").count(),
        1
    );
    let r = opencode(&compacting, &[]);
    let out: Value = serde_json::from_str(&r.stdout).unwrap();
    let text = out["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        text.contains("[>] Write parser tests\n[ ] Implement parser")
            && text.contains("todowrite replaces the list"),
        "{text}"
    );
    let history = p.ok(&["history", &session]);
    assert!(
        history.contains("context_compacted") && history.contains("plan_restored"),
        "{history}"
    );

    // Enforcing. Two items completed at once that were never started, opencode's list being
    // what planlog recorded: refused before it runs, with the items named, and on record.
    let bulk = json!({"todos": [{"content": "Write parser tests", "status": "in_progress", "priority": "high"},
        {"content": "Implement parser", "status": "completed", "priority": "medium"},
        {"content": "Ship the parser", "status": "completed", "priority": "low"}]});
    let now = json!([{"id": "a1", "content": "Write parser tests", "status": "in_progress", "priority": "high"},
        {"id": "a2", "content": "Implement parser", "status": "pending", "priority": "medium"}]);
    let before = |input: &Value, now: Option<&Value>| {
        let mut b = json!({"hook_event_name": "PreToolUse", "session_id": sid, "cwd": "/src/app",
            "tool_name": "todowrite", "tool_input": input, "tool_use_id": "call_2"});
        if let Some(now) = now {
            b["todos_now"] = now.clone();
        }
        p.hook_of("opencode", b.to_string().as_bytes(), &["--enforce"], &[])
    };
    let r = before(&bulk, Some(&now));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("Implement parser") && r.stderr.contains("Ship the parser"),
        "{}",
        r.stderr
    );
    let history = p.ok(&["history", &session]);
    assert_eq!(history.matches("write_rejected").count(), 1, "{history}");
    // Without --enforce, the same call is not judged.
    let mut unjudged = after.clone();
    unjudged["hook_event_name"] = json!("PreToolUse");
    unjudged["tool_input"] = bulk.clone();
    assert_eq!(opencode(&unjudged, &[]).stderr, "");
    // A step at a time passes.
    let step = json!({"todos": [{"content": "Write parser tests", "status": "completed", "priority": "high"},
        {"content": "Implement parser", "status": "in_progress", "priority": "medium"}]});
    let r = before(&step, Some(&now));
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    // opencode's list is not planlog's record (a call planlog missed), or none came: the
    // call is allowed, and the warning says why.
    let moved = json!([{"content": "Write parser tests", "status": "completed"},
        {"content": "Implement parser", "status": "pending"}]);
    let r = before(&bulk, Some(&moved));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("missed a call"), "{}", r.stderr);
    let r = before(&bulk, None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("no todo list"), "{}", r.stderr);
    let history = p.ok(&["history", &session]);
    assert_eq!(history.matches("write_rejected").count(), 1, "{history}");
    assert_eq!(p.run(&["verify"], None).code, 0);
}

/// Gemini CLI's task tracker through `AfterTool` (payloads as Gemini 0.61 sends them; the
/// results' words from its source): a create takes the id its result names, with its
/// dependencies; an update replaces them and maps the tracker's statuses; an added dependency
/// adds one; a result that is not the tool's success (`Task … not found.`, an error) is a
/// refusal that changes nothing; the plan goes back as tasks with their ids.
#[test]
fn gemini_tracker_calls_become_tasks_with_the_trackers_ids_and_dependencies() {
    let p = Planlog::new();
    let sid = "7a2b3c4d-5e6f-4a1b-8c2d-3e4f5a6b7c8d";
    let session = format!("gm-{sid}");
    let after = |tool: &str, input: Value, llm: &str, error: Option<&str>| {
        let mut response = json!({"llmContent": llm, "returnDisplay": {"todos": []}});
        if let Some(e) = error {
            response["error"] = json!({"message": e, "type": "execution_failed"});
        }
        let v = json!({"session_id": sid, "transcript_path": "", "cwd": "/src/app",
            "hook_event_name": "AfterTool", "timestamp": "2026-12-01T10:05:11.204Z",
            "tool_name": tool, "tool_input": input, "tool_response": response});
        let r = p.hook_of("gemini", v.to_string().as_bytes(), &[], &[]);
        assert_eq!((r.code, r.stdout.as_str()), (0, ""), "{}", r.stderr);
    };
    after(
        "tracker_create_task",
        json!({"title": "Write parser tests", "description": "every rule", "type": "task"}),
        "Created task a1b2c3: Write parser tests",
        None,
    );
    after(
        "tracker_create_task",
        json!({"title": "Implement parser", "description": "", "type": "task", "dependencies": ["a1b2c3"]}),
        "Created task d4e5f6: Implement parser",
        None,
    );
    after(
        "tracker_create_task",
        json!({"title": "Document parser", "description": "", "type": "task"}),
        "Created task 0f9e8d: Document parser",
        None,
    );
    after(
        "tracker_update_task",
        json!({"id": "a1b2c3", "status": "in_progress"}),
        "Updated task a1b2c3. Status: in_progress",
        None,
    );
    after(
        "tracker_add_dependency",
        json!({"taskId": "0f9e8d", "dependencyId": "d4e5f6"}),
        "Linked 0f9e8d -> d4e5f6.",
        None,
    );
    after(
        "tracker_update_task",
        json!({"id": "d4e5f6", "dependencies": []}),
        "Updated task d4e5f6. Status: open",
        None,
    );
    // Refusals: the tracker's "not found" (no error field) and an error.
    after(
        "tracker_update_task",
        json!({"id": "ffffff", "status": "closed"}),
        "Task ffffff not found.",
        None,
    );
    after(
        "tracker_add_dependency",
        json!({"taskId": "a1b2c3", "dependencyId": "a1b2c3"}),
        "Error: Task a1b2c3 cannot depend on itself.",
        Some("Task cannot depend on itself"),
    );
    let tasks: Value = serde_json::from_str(&p.ok(&["show", &session, "--json"])).unwrap();
    let by_id = |id: &str| {
        tasks
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("no task {id}: {tasks}"))
    };
    assert_eq!(by_id("a1b2c3")["status"], "in_progress");
    assert_eq!(by_id("a1b2c3")["metadata"]["tracker"]["type"], "task");
    assert!(
        by_id("d4e5f6")
            .get("blocked_by")
            .is_none_or(|b| b.as_array().unwrap().is_empty()),
        "the update replaced its dependencies: {tasks}"
    );
    assert_eq!(by_id("0f9e8d")["blocked_by"], json!(["d4e5f6"]));
    let history = p.ok(&["history", &session]);
    assert_eq!(history.matches("write_rejected").count(), 2, "{history}");
    // Put back as tasks with the tracker's ids.
    let mut start = json!({"session_id": sid, "transcript_path": "", "cwd": "/src/app",
        "hook_event_name": "SessionStart", "source": "resume"});
    start["timestamp"] = json!("2026-12-01T10:06:00.000Z");
    let r = p.hook_of("gemini", start.to_string().as_bytes(), &[], &[]);
    let out: Value = serde_json::from_str(&r.stdout).unwrap();
    let text = out["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        text.contains("tracker_update_task")
            && text.contains("[in_progress] #a1b2c3 Write parser tests"),
        "{text}"
    );
    assert_eq!(p.run(&["verify"], None).code, 0);
}

/// `planlog hook cursor` with Cursor's payloads as third-party captures show them
/// (REFERENCE-AGENTS.md §5: `conversation_id`, `workspace_roots`, `tool_output` a JSON string,
/// a `tool_use_id` that may hold a newline): `TodoWrite` with `merge: false` sets the list, with
/// `merge: true` changes the items it names by id; the plan goes back at `sessionStart` as
/// `additional_context`, with the ids the model names items by; `preCompact` is on record.
#[test]
fn cursor_todo_writes_replace_or_merge_by_id_and_the_plan_comes_back_at_session_start() {
    let p = Planlog::new();
    let cid = "7d0e41c2-9a1b-4c2d-8e3f-0a1b2c3d4e5f";
    let session = format!("cu-{cid}");
    let base = |event: &str| {
        json!({"conversation_id": cid, "generation_id": "c41a", "hook_event_name": event,
            "cursor_version": "2026.07.23-e383d2b", "workspace_roots": ["/src/app"],
            "transcript_path": null, "model": "claude-4.5-sonnet"})
    };
    let todo = |input: Value, call: &str| {
        let mut v = base("postToolUse");
        v["tool_name"] = json!("TodoWrite");
        v["tool_input"] = input;
        v["tool_output"] = json!("{\"success\":true}");
        v["duration"] = json!(12.4);
        v["tool_use_id"] = json!(call);
        let r = p.hook_of("cursor", v.to_string().as_bytes(), &[], &[]);
        assert_eq!((r.code, r.stdout.as_str()), (0, ""), "{}", r.stderr);
    };
    todo(
        json!({"merge": false, "todos": [
            {"id": "parser-tests", "content": "Write parser tests", "status": "in_progress"},
            {"id": "parser", "content": "Implement parser", "status": "pending"}]}),
        "call_ab12\nctc_cd34",
    );
    todo(
        json!({"merge": true, "todos": [
            {"id": "parser-tests", "status": "completed"},
            {"id": "parser", "status": "in_progress"},
            {"id": "docs", "content": "Document parser", "status": "pending"}]}),
        "call_ef56",
    );
    assert_eq!(
        p.plan_of(&session),
        [
            (
                "parser-tests".to_owned(),
                "Write parser tests".to_owned(),
                "completed".to_owned()
            ),
            (
                "parser".to_owned(),
                "Implement parser".to_owned(),
                "in_progress".to_owned()
            ),
            (
                "docs".to_owned(),
                "Document parser".to_owned(),
                "pending".to_owned()
            ),
        ]
    );
    let history = p.ok(&["history", &session]);
    assert!(
        history.contains("captured live from cursor session") && history.contains("via TodoWrite"),
        "{history}"
    );
    // Another tool: nothing.
    let mut shell = base("postToolUse");
    shell["tool_name"] = json!("Shell");
    shell["tool_input"] = json!({"command": "ls"});
    assert_eq!(
        p.hook_of("cursor", shell.to_string().as_bytes(), &[], &[])
            .code,
        0
    );
    // A compaction, then the conversation starts again: the plan, with ids, as Cursor reads it.
    assert_eq!(
        p.hook_of(
            "cursor",
            base("preCompact").to_string().as_bytes(),
            &[],
            &[]
        )
        .stdout,
        ""
    );
    let r = p.hook_of(
        "cursor",
        base("sessionStart").to_string().as_bytes(),
        &[],
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out: Value = serde_json::from_str(&r.stdout).unwrap();
    let text = out["additional_context"].as_str().unwrap();
    assert!(
        text.contains("[>] #parser Implement parser") && text.contains("merge: true"),
        "{text}"
    );
    let history = p.ok(&["history", &session]);
    assert!(
        history.contains("context_compacted") && history.contains("plan_restored"),
        "{history}"
    );
    // The same payload through Claude Code's hooks (Cursor runs those too): skipped, and the
    // warning names Cursor's own install.
    let mut through_claude = base("postToolUse");
    through_claude["tool_name"] = json!("TodoWrite");
    through_claude["session_id"] = json!(cid);
    let r = p.hook_raw(through_claude.to_string().as_bytes(), &[], &[]);
    assert!(r.stderr.contains("planlog install cursor"), "{}", r.stderr);
    assert_eq!(p.run(&["verify"], None).code, 0);
}
