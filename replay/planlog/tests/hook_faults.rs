//! `planlog hook claude-code` under the faults users meet: a spool line cut by a failed write,
//! a call the store refuses for good, a file planlog did not write where the spool goes,
//! calls without a tool call id, a store that can be read but not written, a store locked
//! while many hooks run at once, a transcript that never ends, a FIFO where the transcript
//! should be, input over the limit, hooks at once sharing the history cache. Each
//! time: no call lost, none merged with another, the order kept, every hook within its
//! budget, and `verify` saying what is not in the log.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::os::unix::ffi::OsStrExt;
use std::process::Command;
use std::time::{Duration, Instant};

use planlog_agents::hook::{Entry, Kind, frame};
use serde_json::{Value, json};

mod common;
use common::claude::{SID, common, post, session, todos};
use common::{Planlog, Run, hold_index_write_lock, hold_write_lock};

/// The spool beside the test store.
fn spool(p: &Planlog) -> std::path::PathBuf {
    let mut name = p.db().into_os_string();
    name.push(".hook-spool");
    name.into()
}

fn dead(p: &Planlog) -> std::path::PathBuf {
    let mut name = p.db().into_os_string();
    name.push(".hook-dead");
    name.into()
}

fn todo_call(id: &str, item: &str) -> Value {
    post("TodoWrite", id, todos(&[(item, "in_progress")]), json!({}))
}

/// One spool line for the hook input `input`, as planlog writes it.
fn spool_line(input: &Value, at: &str) -> String {
    let entry = Entry::new(
        ulid::Ulid::new(),
        input.clone(),
        serde_json::from_value(input.clone()).unwrap(),
        None,
        planlog_core::Timestamp::parse(at).unwrap(),
        Kind::Ran,
    );
    format!("{}\n", frame(&entry.to_json()))
}

const HEADER: &str = "{\"planlog\":\"hook spool\",\"version\":2}\n";

/// A compaction holds the store alone (its users lock, taken here as `planlog compact`
/// takes it): a hook call does not wait for it past its budget, exits 0 with the call
/// spooled, and the next call stores both in order.
#[test]
fn a_hook_call_during_a_compaction_is_spooled_not_blocked() {
    let p = Planlog::new();
    assert_eq!(p.hook(&todo_call("toolu_1", "One"), &[], &[]).code, 0);
    let users = std::fs::File::open(planlog_store::users_path(&p.db())).unwrap();
    users.lock().unwrap();
    let started = std::time::Instant::now();
    let r = p.hook(&todo_call("toolu_2", "Two"), &[], &[]);
    let took = started.elapsed();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("waits in"), "{}", r.stderr);
    assert!(
        took < std::time::Duration::from_secs(5),
        "the hook waited {took:?}"
    );
    users.unlock().unwrap();
    assert_eq!(p.hook(&todo_call("toolu_3", "Three"), &[], &[]).code, 0);
    assert_eq!(p.call_ids(&session()), ["toolu_1", "toolu_2", "toolu_3"]);
}

#[test]
fn a_spool_line_cut_by_a_failed_write_is_never_merged_with_the_next_call() {
    let p = Planlog::new();
    assert_eq!(p.hook(&todo_call("toolu_1", "One"), &[], &[]).code, 0);
    // A complete entry, then a write that failed part way (no newline), as a full disk leaves.
    let waiting = spool_line(&todo_call("toolu_2", "Two"), "2026-12-01T10:00:00.000Z");
    let cut = &spool_line(&todo_call("toolu_x", "Lost"), "2026-12-01T10:00:01.000Z")[..40];
    std::fs::write(spool(&p), format!("{HEADER}{waiting}{cut}")).unwrap();
    // The store is locked: this call is spooled after the cut line, on a line of its own.
    let lock = hold_write_lock(&p.db());
    let r = p.hook(&todo_call("toolu_3", "Three"), &[], &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("waits in"), "{}", r.stderr);
    drop(lock);
    let r = p.hook(&todo_call("toolu_4", "Four"), &[], &[]);
    assert_eq!(r.code, 0);
    assert!(
        r.stderr.contains("moved to the dead letters"),
        "{}",
        r.stderr
    );
    assert_eq!(
        p.call_ids(&session()),
        ["toolu_1", "toolu_2", "toolu_3", "toolu_4"]
    );
    // The cut line is kept as a dead letter, and verify says a call was lost there.
    let v = p.run(&["verify"], None);
    assert_eq!(v.code, 1, "{}", v.stdout);
    assert!(
        v.stdout.contains("a spool line cut by a failed write"),
        "{}",
        v.stdout
    );
    assert!(
        std::fs::read_to_string(dead(&p))
            .unwrap()
            .contains("a hook write to the spool was cut part way")
    );
}

#[test]
fn a_call_the_store_refuses_for_good_goes_to_the_dead_letters_and_blocks_nothing() {
    let p = Planlog::new();
    assert_eq!(p.hook(&todo_call("toolu_1", "One"), &[], &[]).code, 0);
    assert_eq!(p.run(&["delete", &session(), "--yes"], None).code, 0);
    // The retired session's next call waits in the spool (written there directly, as a hook
    // that met a locked store would have), ahead of another session's calls.
    let mut other = todo_call("toolu_o1", "Other");
    other["session_id"] = json!("another-session");
    std::fs::write(
        spool(&p),
        format!(
            "{HEADER}{}{}",
            spool_line(&todo_call("toolu_2", "Two"), "2026-12-01T10:00:00.000Z"),
            spool_line(&other, "2026-12-01T10:00:01.000Z")
        ),
    )
    .unwrap();
    let mut next = todo_call("toolu_o2", "Other, next");
    next["session_id"] = json!("another-session");
    let r = p.hook(&next, &[], &[]);
    assert_eq!(r.code, 0);
    assert!(!r.stderr.contains("waits in"), "{}", r.stderr);
    assert_eq!(
        p.call_ids("cc-another-session"),
        ["toolu_o1", "toolu_o2"],
        "the calls behind the refused one are stored, in order"
    );
    // A new call of the retired session goes to the dead letters too.
    let r = p.hook(&todo_call("toolu_3", "Three"), &[], &[]);
    assert_eq!(r.code, 0);
    assert!(
        r.stderr.contains("refuses this call for good"),
        "{}",
        r.stderr
    );
    let v = p.run(&["verify"], None);
    assert_eq!(v.code, 1, "{}", v.stdout);
    let refused: Vec<&str> = v
        .stdout
        .lines()
        .filter(|l| l.contains("refused for good"))
        .collect();
    assert_eq!(refused.len(), 2, "{}", v.stdout);
    assert!(refused[0].contains("call toolu_2") && refused[0].contains("was deleted"));
    assert!(refused[1].contains("call toolu_3"));
}

#[test]
fn a_file_planlog_did_not_write_at_the_spools_path_is_moved_aside_and_kept() {
    for foreign in [
        &b"my notes about the project\n"[..],
        b"{\"planlog\":\"hook sp",
        b"\xff\xfe binary \x00\n",
    ] {
        let p = Planlog::new();
        assert_eq!(p.hook(&todo_call("toolu_1", "One"), &[], &[]).code, 0);
        std::fs::write(spool(&p), foreign).unwrap();
        // Even with the store free, the spool is looked at first: the hook goes on.
        let r = p.hook(&todo_call("toolu_2", "Two"), &[], &[]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_eq!(p.call_ids(&session()), ["toolu_1", "toolu_2"]);
        let aside: Vec<_> = std::fs::read_dir(p.db().parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|f| f.to_string_lossy().contains(".hook-spool.foreign-"))
            .collect();
        assert_eq!(aside.len(), 1, "{aside:?}");
        assert_eq!(std::fs::read(&aside[0]).unwrap(), foreign, "kept as it was");
        assert!(
            r.stderr.contains("was not planlog's hook spool"),
            "{}",
            r.stderr
        );
    }
    // A link where the spool goes is not followed: its target is never read or written.
    let p = Planlog::new();
    assert_eq!(p.hook(&todo_call("toolu_1", "One"), &[], &[]).code, 0);
    let target = p.dir.path().join("passwd");
    std::fs::write(&target, "root:x:0:0:root:/root:/bin/sh\n").unwrap();
    std::os::unix::fs::symlink(&target, spool(&p)).unwrap();
    let lock = hold_write_lock(&p.db());
    assert_eq!(p.hook(&todo_call("toolu_2", "Two"), &[], &[]).code, 0);
    drop(lock);
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "root:x:0:0:root:/root:/bin/sh\n"
    );
    assert_eq!(p.hook(&todo_call("toolu_3", "Three"), &[], &[]).code, 0);
    assert_eq!(p.call_ids(&session()), ["toolu_1", "toolu_2", "toolu_3"]);
}

#[test]
fn a_hook_gives_way_to_another_process_indexing_and_its_call_is_stored_once() {
    // Every 16 records past the index, a hook brings the index up to date. When another
    // process holds the index's write transaction (its indexing thread, during a slow
    // sync), the hook's append is durable already: it gives way, says nothing and spools
    // nothing. (A hook's own process: a warm hook server's kept handle tries again after
    // a pause, `hook_server.rs`.)
    let p = Planlog::new();
    let off = [("PLANLOG_HOOK_SERVER", "off")];
    assert_eq!(p.hook(&todo_call("toolu_0", "Zero"), &[], &off).code, 0);
    let lock = hold_index_write_lock(&p.db());
    let ids: Vec<String> = (1..=40).map(|n| format!("toolu_{n}")).collect();
    for id in &ids {
        let started = std::time::Instant::now();
        let r = p.hook(&todo_call(id, id), &[], &off);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{id}");
        // Within its 1 s budget (and the debug build's start): one that gave way does not
        // wait at its end for the index's open it gave up on (its thread, still waiting for
        // the lock, has written nothing).
        assert!(
            started.elapsed() < std::time::Duration::from_millis(1_500),
            "{id} took {:?}",
            started.elapsed()
        );
    }
    assert!(!spool(&p).exists(), "nothing was spooled");
    let mut want = vec!["toolu_0".to_owned()];
    want.extend(ids);
    // A command that reads, opened meanwhile, reads them all from the journal.
    assert_eq!(p.call_ids(&session()), want);
    drop(lock);
    // The next call finds them waiting and indexes them all.
    let store = || {
        planlog_store::JournaledLog::options()
            .read_only(true)
            .open(p.db())
            .unwrap()
    };
    let waiting = store();
    let (from, to) = (waiting.index_position().unwrap(), waiting.journal_end());
    drop(waiting);
    assert!(from < to, "records wait past the index");
    assert_eq!(p.hook(&todo_call("toolu_41", "Last"), &[], &off).code, 0);
    let reached = store().index_position().unwrap();
    assert!(reached >= to, "indexed to {reached}, not past {to}");
    want.push("toolu_41".to_owned());
    assert_eq!(p.call_ids(&session()), want);
}

#[test]
fn calls_without_a_tool_call_id_are_each_recorded() {
    let p = Planlog::new();
    for item in ["One", "Two", "Three"] {
        let mut call = todo_call("x", item);
        call.as_object_mut().unwrap().remove("tool_use_id");
        let r = p.hook(&call, &[], &[]);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    }
    let ids = p.call_ids(&session());
    assert_eq!(ids.len(), 3, "{ids:?}");
    assert!(ids.iter().all(|i| i.starts_with("hook:")), "{ids:?}");

    assert_eq!(p.plan_of(&session())[0].1, "Three");
}

#[test]
fn a_call_spooled_on_a_full_disk_keeps_the_time_it_ran() {
    let p = Planlog::new();
    let big = common::big_list();
    let list: Vec<(&str, &str)> = big.iter().map(|(c, s)| (c.as_str(), *s)).collect();
    assert_eq!(p.hook(&todo_call("toolu_1", "One"), &[], &[]).code, 0);
    let ran_at = planlog_core::Timestamp::parse(&now_rfc3339()).unwrap();
    let r = p.hook_on_a_full_disk(&post("TodoWrite", "toolu_2", todos(&list), json!({})), &[]);
    assert_eq!(r.code, 0);
    assert!(r.stderr.contains("waits in"), "{}", r.stderr);
    std::thread::sleep(Duration::from_millis(1200));
    assert_eq!(p.run(&["drain"], None).code, 0);
    assert_eq!(p.call_ids(&session()), ["toolu_1", "toolu_2"]);
    let last: Value = serde_json::from_str(
        p.ok(&["history", &session(), "--json"])
            .lines()
            .last()
            .unwrap(),
    )
    .unwrap();
    let at = planlog_core::Timestamp::parse(last["at"].as_str().unwrap()).unwrap();
    assert!(
        (at.as_millis() - ran_at.as_millis()).abs() < 1000,
        "stamped when it ran ({ran_at}), not when it was drained: {at}"
    );
    assert_eq!(p.run(&["verify"], None).code, 0);
}

fn now_rfc3339() -> String {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    planlog_core::Timestamp::from_millis(i64::try_from(ms).unwrap()).to_string()
}

#[test]
fn a_forks_first_plan_waits_in_order_when_the_store_is_locked() {
    let p = Planlog::new();
    let big = common::big_list();
    let mut list: Vec<(&str, &str)> = big.iter().map(|(c, s)| (c.as_str(), *s)).collect();
    list.insert(0, ("Fix the bug", "in_progress"));
    let first = post("TodoWrite", "toolu_1", todos(&list), json!({}));
    assert_eq!(p.hook(&first, &[], &[]).code, 0);
    let fork_sid = "0d5e7a1c-0000-4000-8000-00000000f0f0";
    let transcript = p.dir.path().join("fork.jsonl");
    std::fs::write(
        &transcript,
        format!(
            "{}\n",
            json!({"type": "user", "uuid": "u1", "sessionId": SID, "message": {"role": "user", "content": "Fix the bug"}})
        ),
    )
    .unwrap();
    let mut fork = common("SessionStart");
    fork["source"] = json!("fork");
    fork["session_id"] = json!(fork_sid);
    fork["transcript_path"] = json!(transcript);
    // Readable, not writable: the fork's start is spooled; the plan still comes back.

    let r = p.hook_on_a_full_disk(&fork, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("Fix the bug"), "{}", r.stdout);
    assert!(r.stderr.contains("waits in"), "{}", r.stderr);
    let mut next = todo_call("toolu_f1", "Fix the bug another way");
    next["session_id"] = json!(fork_sid);
    assert_eq!(p.hook(&next, &[], &[]).code, 0);
    let fork_session = format!("cc-{fork_sid}");
    let history = p.ok(&["history", &fork_session]);
    let started = history.find("continued from session").unwrap();
    let then = history.find("[toolu_f1]").unwrap();
    assert!(started < then, "{history}");
}

#[test]
fn many_hooks_at_once_behind_a_long_spool_each_end_within_the_budget_and_lose_nothing() {
    let p = Planlog::new();
    assert_eq!(p.hook(&todo_call("toolu_first", "First"), &[], &[]).code, 0);
    let n = 5_000;
    let mut text = String::from(HEADER);
    for i in 0..n {
        text.push_str(&spool_line(
            &todo_call(&format!("spool_{i:05}"), &format!("item {i}")),
            "2026-12-01T10:00:00.000Z",
        ));
    }
    std::fs::write(spool(&p), text).unwrap();
    let runs: Vec<(Duration, Run)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..5)
            .map(|k| {
                let p = &p;
                s.spawn(move || {
                    let started = Instant::now();
                    let r = p.hook(
                        &todo_call(&format!("live_{k}"), &format!("live {k}")),
                        &[],
                        &[],
                    );
                    (started.elapsed(), r)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let took: Vec<Duration> = runs.iter().map(|(t, _)| *t).collect();
    eprintln!("five hooks behind {n} spooled calls took {took:?}");
    for (took, r) in &runs {
        assert_eq!(r.code, 0, "{}", r.stderr);
        // The budget is 1 s; the margin is for starting a process on a loaded machine.
        assert!(
            *took < Duration::from_millis(1500),
            "a hook took {took:?}: {}",
            r.stderr
        );
    }
    // Whatever did not fit in the hooks' budget is stored by `planlog drain`, in order.
    let d = p.run(&["drain"], None);
    assert_eq!(d.code, 0, "{}", d.stderr);
    let ids = p.call_ids(&session());
    assert_eq!(ids.len(), 1 + n + 5, "every call stored once");
    let spooled: Vec<&String> = ids.iter().filter(|i| i.starts_with("spool_")).collect();
    assert!(
        spooled.windows(2).all(|w| w[0] < w[1]),
        "spooled calls kept their order"
    );
    let last_spooled = ids.iter().position(|i| i == "spool_04999").unwrap();
    assert!(
        ids.iter()
            .enumerate()
            .filter(|(_, i)| i.starts_with("live_"))
            .all(|(at, _)| at > last_spooled),
        "a live call never jumps ahead of calls spooled before it"
    );
}

#[test]
fn a_fork_whose_transcript_never_ends_is_read_within_bounds() {
    let p = Planlog::new();
    assert_eq!(p.hook(&todo_call("toolu_1", "One"), &[], &[]).code, 0);
    let mut fork = common("SessionStart");
    fork["source"] = json!("fork");
    fork["session_id"] = json!("0d5e7a1c-0000-4000-8000-00000000dead");
    fork["transcript_path"] = json!("/dev/zero");
    let started = Instant::now();
    let r = p.hook(&fork, &[], &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn hook_input_over_the_limit_is_said_to_be_too_large() {
    let p = Planlog::new();
    let mut big = vec![b' '; 17 * 1024 * 1024];
    big[0] = b'{';
    let r = p.hook_raw(&big, &[], &[]);
    assert_eq!(r.code, 0);
    assert!(
        r.stderr.contains("over planlog's limit of 16 MiB"),
        "{}",
        r.stderr
    );
}

#[test]
fn verify_only_reads_what_waits_in_the_spool() {
    let p = Planlog::new();
    assert_eq!(p.hook(&todo_call("toolu_1", "One"), &[], &[]).code, 0);
    let spooled = format!(
        "{HEADER}{}",
        spool_line(&todo_call("toolu_2", "Two"), "2026-12-01T10:00:00.000Z")
    );
    std::fs::write(spool(&p), &spooled).unwrap();
    let before = p.ok(&["export", &session(), "--format", "jsonl"]);
    let v = p.run(&["verify"], None);
    assert_eq!(v.code, 1, "{}", v.stdout);
    assert!(
        v.stdout.contains("1 Claude Code hook calls wait"),
        "{}",
        v.stdout
    );
    let after = p.ok(&["export", &session(), "--format", "jsonl"]);
    assert!(before == after, "verify stored nothing");
    let now = std::fs::read_to_string(spool(&p)).unwrap();
    assert!(now == spooled, "the spool is unchanged");
    assert!(!dead(&p).exists());
}

#[test]
fn a_closed_stdout_does_not_crash_the_hook_nor_lose_what_it_recorded() {
    use std::io::Write as _;
    let p = Planlog::new();
    p.hook(
        &post(
            "TodoWrite",
            "toolu_1",
            todos(&[("Read the code", "in_progress")]),
            json!({}),
        ),
        &[],
        &[],
    );
    let mut start = common("SessionStart");
    start["source"] = json!("compact");
    // The agent went away: nobody reads what the hook answers.
    let mut child = p
        .command()
        .args(["hook", "claude-code"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    child
        .stdin
        .take()
        .unwrap()
        .write_all(start.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains("could not answer"),
        "the hook says why the answer went nowhere: {stderr}"
    );
    // What it put back is on record all the same.
    let history = p.ok(&["history", &session()]);
    assert!(history.contains("plan_restored"), "{history}");
}

/// A FIFO where the agent says its transcript is (a file planlog did not write, where it
/// looks): opening it for reading would wait for a writer for ever, and the agent with it.
/// Every hook that reads the transcript (the call's session description, a restore after a
/// compaction, a fork's parent, an enforcing hook's catch-up) reads nothing from it and
/// answers at once.
#[test]
fn a_fifo_as_the_transcript_never_holds_a_hook() {
    let p = Planlog::new();
    let fifo = p.dir.path().join("transcript.jsonl");
    common::mkfifo(&fifo);
    let with_fifo = |mut v: Value| {
        v["transcript_path"] = json!(fifo.to_str().unwrap());
        v
    };
    let mut compact = common("SessionStart");
    compact["source"] = json!("compact");
    let mut fork = common("SessionStart");
    fork["source"] = json!("fork");
    fork["session_id"] = json!("0d5e7a1c-0000-4000-8000-00000000f1f0");
    let pre = common::claude::tool_event(
        "PreToolUse",
        "TodoWrite",
        "toolu_2",
        todos(&[("One", "completed")]),
    );
    for (what, input, flags) in [
        ("PostToolUse", todo_call("toolu_1", "One"), &[][..]),
        ("SessionStart compact", compact, &[][..]),
        ("SessionStart fork", fork, &[][..]),
        ("PreToolUse, enforcing", pre, &["--enforce"][..]),
    ] {
        let input = with_fifo(input);
        let started = Instant::now();
        let r = common::before_a_fifo_holds(&fifo, what, || p.hook(&input, flags, &[]));
        assert!(r.code == 0 || r.code == 2, "{what}: {}", r.stderr);
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{what}: {:?}",
            started.elapsed()
        );
    }
    // The call was recorded.
    assert!(p.call_ids(&session()).contains(&"toolu_1".to_owned()));
}

/// Files planlog did not write where the plan files go (a file where their folder would be,
/// then one where the session's plan file would be): each left as it was, the call stored,
/// and the hook says on stderr that the plan file is stale and why (a file where the folder
/// goes was once said only as the OS's "File exists").
#[test]
fn a_file_in_the_plan_files_way_is_left_alone_and_said() {
    let p = Planlog::new();
    let folder = p.db().with_extension("plans");
    std::fs::create_dir_all(folder.parent().unwrap()).unwrap();
    std::fs::write(&folder, "my notes\n").unwrap();
    let r = p.hook(&todo_call("toolu_1", "One"), &[], &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("could not write the plan file")
            && r.stderr
                .contains("was not written by planlog; it is left alone"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read_to_string(&folder).unwrap(), "my notes\n");
    std::fs::remove_file(&folder).unwrap();
    std::fs::create_dir(&folder).unwrap();
    let file = folder.join(format!("{}.md", session()));
    std::fs::write(&file, "the user's own plan\n").unwrap();
    let r = p.hook(&todo_call("toolu_2", "Two"), &[], &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("it is left alone"), "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "the user's own plan\n"
    );
    assert_eq!(p.call_ids(&session()), ["toolu_1", "toolu_2"]);
}

/// No place for the store (no `--db`, no `PLANLOG_DB`, not in a git repository, no `HOME`):
/// the hook says the call is not recorded and exits 0. It exited 2, which for a PreToolUse
/// hook blocks the agent's tool call.
#[test]
fn a_hook_with_no_place_for_the_store_never_blocks_the_agent() {
    let dir = tempfile::tempdir().unwrap();
    for event in ["PreToolUse", "PostToolUse"] {
        let input =
            common::claude::tool_event(event, "TodoWrite", "toolu_1", todos(&[("One", "pending")]));
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_planlog"));
        c.args(["hook", "claude-code"])
            .current_dir(dir.path())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default());
        let out = common::run_child(c, input.to_string().as_bytes());
        let stderr = &out.stderr;
        assert_eq!(out.code, 0, "{event}: {stderr}");
        assert!(
            stderr.contains("cannot find a place for the planlog store")
                && stderr.contains("this call is not recorded"),
            "{event}: {stderr}"
        );
    }
}

/// A hook command line this planlog does not know (a flag or an agent from another version of
/// planlog, as settings written by a newer one and read by an older one have): said, exit 0.
/// It was clap's usage error, exit 2, which for a PreToolUse hook blocks the tool call.
#[test]
fn a_hook_command_line_of_another_version_never_blocks_the_agent() {
    let p = Planlog::new();
    let pre = common::claude::tool_event(
        "PreToolUse",
        "TodoWrite",
        "toolu_1",
        todos(&[("One", "pending")]),
    );
    for args in [
        &["hook", "claude-code", "--a-flag-of-later"][..],
        &["hook", "an-agent-of-later"][..],
    ] {
        let r = p.run(args, Some(&pre.to_string()));
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("this call is not recorded")
                && r.stderr.contains("`planlog install` again"),
            "{args:?}: {}",
            r.stderr
        );
    }
    // A store path that is not UTF-8 before `hook` in such a line: said the same way. The
    // words were read with `std::env::args`, which panics on one (exit 101).
    let mut c = Command::new(env!("CARGO_BIN_EXE_planlog"));
    c.arg("--db")
        .arg(std::ffi::OsStr::from_bytes(b"/nowhere/st\xffore.redb"))
        .args(["hook", "claude-code", "--a-flag-of-later"])
        .env_remove("PLANLOG_DB")
        .env("NO_COLOR", "1");
    let r = common::run_child(c, pre.to_string().as_bytes());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("this call is not recorded"),
        "{}",
        r.stderr
    );
    // Outside hooks a usage error is still one.
    assert_eq!(p.run(&["no-such-command"], None).code, 2);
}

/// The list of call `i` of the test below: the same four items, one of them reworded, one
/// dropped, one added or one brought back, as `i` says (each call's list stands alone, so
/// any order of the calls is a history).
fn reworded_list(i: usize) -> Value {
    let mut items: Vec<(String, &str)> = ["Read the code", "Fix the bug", "Add a test", "Ship it"]
        .iter()
        .map(|t| ((*t).to_owned(), "pending"))
        .collect();
    match i % 4 {
        0 => items[1].0 = format!("Fix the bug, take {i}"),
        1 => {
            items.remove(2);
        }
        2 => items.push((format!("Step {i}"), "pending")),
        _ => items[0].1 = "completed",
    }
    let list: Vec<(&str, &str)> = items.iter().map(|(t, s)| (t.as_str(), *s)).collect();
    todos(&list)
}

/// Each plan event's call id and plan (ids, texts, statuses), in log order.
fn plans(p: &Planlog) -> Vec<(String, Value)> {
    p.ok(&["export", &session(), "--format", "jsonl"])
        .lines()
        .filter_map(|l| {
            let e = serde_json::from_str::<Value>(l).ok()?;
            (e["kind"] == "plan_written").then(|| {
                (
                    e["call_id"].as_str().unwrap_or("").to_owned(),
                    e["data"]["plan"].clone(),
                )
            })
        })
        .collect()
}

/// Hooks rewording one session's list from three processes at once share its history cache
/// (`<store>.history/`): what they record is what the same calls give one at a time, in the
/// order the store took them, with no cache at all.
#[test]
fn hooks_at_once_sharing_the_history_cache_record_what_calls_one_at_a_time_would() {
    let calls = 24;
    let p = Planlog::new();
    std::thread::scope(|s| {
        for t in 0..3 {
            let p = &p;
            s.spawn(move || {
                for i in (t..calls).step_by(3) {
                    let input = post(
                        "TodoWrite",
                        &format!("toolu_{i:02}"),
                        reworded_list(i),
                        json!({}),
                    );
                    let r = p.hook(&input, &[], &[]);
                    assert_eq!(r.code, 0, "{}", r.stderr);
                }
            });
        }
    });
    // Anything a locked store left in the spool.
    let d = p.run(&["drain"], None);
    assert_eq!(d.code, 0, "{}", d.stderr);
    let order = p.call_ids(&session());
    assert_eq!(order.len(), calls, "every call stored once: {order:?}");
    let mut kept = p.db().into_os_string();
    kept.push(".history");
    assert!(
        std::fs::read_dir(&kept).unwrap().count() == 1,
        "the calls kept the session's history"
    );

    // The same calls one at a time, in that order, on a store whose cache folder a file of
    // the user's blocks.
    let q = Planlog::new();
    std::fs::create_dir_all(q.db().parent().unwrap()).unwrap();
    let mut blocked = q.db().into_os_string();
    blocked.push(".history");
    std::fs::write(&blocked, "my notes\n").unwrap();
    for id in &order {
        let i: usize = id.strip_prefix("toolu_").unwrap().parse().unwrap();
        let r = q.hook(
            &post("TodoWrite", id, reworded_list(i), json!({})),
            &[],
            &[],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    assert_eq!(std::fs::read_to_string(&blocked).unwrap(), "my notes\n");
    let (shared, alone) = (plans(&p), plans(&q));
    assert_eq!(shared.len(), calls);
    assert_eq!(shared, alone);
    assert_eq!(p.run(&["verify"], None).code, 0);
}
