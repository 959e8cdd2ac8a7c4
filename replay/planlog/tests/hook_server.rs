//! The warm hook server (`planlog hook-server`): a hook's process hands its call to the
//! store's server when one listens, and runs it itself otherwise; under the faults users
//! meet (the server stopped mid-call or killed, its store deleted, planlog upgraded under
//! it, many hooks at once, a process of another configuration), every call is on record
//! once, and the agent reads what a call in its own process would have printed.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod common;
use common::claude::{common as event, post, session, todos};
use common::{Planlog, Run, run_child};

fn todo_call(id: &str, items: &[(&str, &str)]) -> Value {
    post("TodoWrite", id, todos(items), json!({}))
}

fn compacted() -> Value {
    let mut v = event("SessionStart");
    v["source"] = json!("compact");
    v
}

/// The ids of the running hook servers of the store at `db` (its command line names it).
fn servers(db: &Path) -> Vec<u32> {
    let db = db.display().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let Ok(line) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
                return false;
            };
            let words: Vec<&[u8]> = line.split(|b| *b == 0).collect();
            words.contains(&db.as_bytes())
                && words.contains(&b"hook-server".as_slice())
                && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .unwrap_or_default()
                    .rsplit(')')
                    .next()
                    .is_some_and(|rest| rest.trim_start().starts_with('Z'))
        })
        .collect()
}

/// Waits (at most 10 s) until `until` holds of the store's servers.
fn wait_for(db: &Path, what: &str, until: impl Fn(&[u32]) -> bool) -> Vec<u32> {
    let started = Instant::now();
    loop {
        let found = servers(db);
        if until(&found) {
            return found;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "waited 10 s for {what}: {found:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The store's one server, once it listens (its socket is bound before it reads a request,
/// and a connection before then is refused; a short pause covers the bind).
fn the_server(db: &Path) -> u32 {
    let found = wait_for(db, "a hook server", |s| s.len() == 1);
    std::thread::sleep(Duration::from_millis(200));
    found[0]
}

fn signal(pid: u32, name: &str) {
    assert!(
        Command::new("kill")
            .args([format!("-{name}"), pid.to_string()])
            .status()
            .unwrap()
            .success()
    );
}

/// The first call of a store, in its own process (no server listens yet), then the server it
/// started, once it listens.
fn serving(p: &Planlog, first: &Value) -> u32 {
    let r = p.hook(first, &[], &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    the_server(&p.db())
}

/// A hook call whose own process may open at most four files (stdin, stdout, stderr and one
/// more): enough to hand the call to a server, not to open the store itself.
fn hook_with_no_files(p: &Planlog, input: &Value) -> Run {
    hook_with_no_files_env(p, input, &[])
}

/// [`hook_with_no_files`] with `env` set.
fn hook_with_no_files_env(p: &Planlog, input: &Value, env: &[(&str, &str)]) -> Run {
    let mut c = Command::new("prlimit");
    c.arg("--nofile=4:4")
        .arg(env!("CARGO_BIN_EXE_planlog"))
        .arg("--db")
        .arg(p.db())
        .args(["hook", "claude-code"])
        .env_remove("CLAUDE_CODE_TASK_LIST_ID")
        .env_remove("PLANLOG_HOOK_SERVER")
        .envs(env.iter().copied());
    run_child(c, input.to_string().as_bytes())
}

#[test]
fn the_first_call_starts_a_server_and_the_next_ones_are_its_with_the_same_answers() {
    let p = Planlog::new();
    assert!(servers(&p.db()).is_empty());
    let r = p.hook(
        &todo_call("toolu_1", &[("Build", "in_progress"), ("Ship", "pending")]),
        &[],
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    the_server(&p.db());
    // A process that cannot open the store's files gets its call stored: the server did it.
    let r = hook_with_no_files(
        &p,
        &todo_call("toolu_2", &[("Build", "completed"), ("Ship", "pending")]),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(p.call_ids(&session()), ["toolu_1", "toolu_2"]);
    // What the agent reads after a compaction: the same from the server as from the hook's
    // own process (the compaction marks differ only in their ids).
    let warm = hook_with_no_files(&p, &compacted());
    assert_eq!(warm.code, 0, "{}", warm.stderr);
    let cold = p.hook(&compacted(), &[], &[("PLANLOG_HOOK_SERVER", "off")]);
    assert_eq!(cold.code, 0, "{}", cold.stderr);
    assert!(
        warm.stdout.contains("[x] Build") && warm.stdout.contains("[ ] Ship"),
        "{}",
        warm.stdout
    );
    assert_eq!(warm.stdout, cold.stdout);
    assert_eq!(warm.stderr, cold.stderr);
    // Bad input: the same warning, exit 0, from the server.
    let warm = hook_with_no_files(&p, &json!({"not": "a hook"}));
    let cold = p.hook(
        &json!({"not": "a hook"}),
        &[],
        &[("PLANLOG_HOOK_SERVER", "off")],
    );
    assert_eq!((warm.code, &warm.stderr), (0, &cold.stderr));
    assert!(warm.stderr.contains("nothing recorded"), "{}", warm.stderr);
    p.verify_clean();
}

/// A refusal while enforcing, judged against the session's transcript named by a path
/// relative to the agent's working folder: exit 2 and the rejection on stderr, from the
/// server (whose own working folder is `/`) as from the hook's own process.
#[test]
fn a_refusal_while_enforcing_is_exit_2_and_its_message_from_the_server_too() {
    let refused = |warm: bool| {
        let p = Planlog::new();
        let off: &[(&str, &str)] = if warm {
            &[]
        } else {
            &[("PLANLOG_HOOK_SERVER", "off")]
        };
        // Another session's call makes the store (and, warm, the server).
        let mut other = todo_call("toolu_0", &[("Other", "in_progress")]);
        other["session_id"] = json!("0d5e7a1c-0000-4000-8000-0000000000ff");
        assert_eq!(p.hook(&other, &[], off).code, 0);
        if warm {
            the_server(&p.db());
        }
        let name = format!("{}.jsonl", common::claude::SID);
        let prompt = json!({"type": "user", "uuid": "u0", "sessionId": common::claude::SID, "timestamp": "2026-01-01T10:00:00.000Z", "message": {"role": "user", "content": "do a and b"}});
        std::fs::write(p.dir.path().join(&name), format!("{prompt}\n")).unwrap();
        let done = [("Read the code", "completed"), ("Fix the bug", "completed")];
        let mut pre =
            common::claude::tool_event("PreToolUse", "TodoWrite", "toolu_b", todos(&done));
        pre["transcript_path"] = json!(name);
        let mut c = Command::new("prlimit");
        c.arg(if warm {
            "--nofile=4:4"
        } else {
            "--nofile=1024"
        })
        .arg(env!("CARGO_BIN_EXE_planlog"))
        .arg("--db")
        .arg(p.db())
        .args(["hook", "claude-code", "--enforce"])
        .current_dir(p.dir.path())
        .envs(off.iter().copied());
        let r = run_child(c, pre.to_string().as_bytes());
        let history = p.ok(&["history", &session()]);
        assert!(
            history.contains("write_rejected  [toolu_b]  rejected: bulk_completion"),
            "{history}"
        );
        r
    };
    let (warm, cold) = (refused(true), refused(false));
    assert_eq!(cold.code, 2, "{}", cold.stderr);
    assert!(
        cold.stderr.starts_with("Rejected as a bulk completion"),
        "{}",
        cold.stderr
    );
    assert_eq!(
        (warm.code, &warm.stdout, &warm.stderr),
        (cold.code, &cold.stdout, &cold.stderr)
    );
}

#[test]
fn a_server_stopped_mid_call_is_killed_and_its_call_runs_in_its_process_once() {
    let p = Planlog::new();
    let server = serving(&p, &todo_call("toolu_1", &[("Build", "in_progress")]));
    /// Lets the server go on however the test ends (a stopped one would never end).
    struct Stopped(u32);
    impl Drop for Stopped {
        fn drop(&mut self) {
            let _ = Command::new("kill")
                .args(["-CONT", &self.0.to_string()])
                .status();
        }
    }
    signal(server, "STOP");
    let _stopped = Stopped(server);
    // The call waits for the server until its deadline, then runs in its own process with
    // what is left of its 1 s (the plan call spooled or stored), and kills the stuck server:
    // left there, it would take every later call's budget too.
    let started = Instant::now();
    let r = p.hook(
        &todo_call("toolu_2", &[("Build", "completed"), ("Test", "pending")]),
        &[],
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        started.elapsed() < Duration::from_millis(1_500),
        "{:?}",
        started.elapsed()
    );
    wait_for(&p.db(), "the stuck server to be killed", |s| {
        !s.contains(&server)
    });
    // The next call runs in its own process, whole: the plan put back has the call before.
    let restored = p.hook(&compacted(), &[], &[]);
    assert_eq!(restored.code, 0, "{}", restored.stderr);
    assert!(
        restored.stdout.contains("[x] Build") && restored.stdout.contains("[ ] Test"),
        "{}{}",
        restored.stdout,
        restored.stderr
    );
    // And a new server takes the calls after it.
    let new = the_server(&p.db());
    assert_ne!(new, server);
    let next = hook_with_no_files(
        &p,
        &todo_call(
            "toolu_3",
            &[("Build", "completed"), ("Test", "in_progress")],
        ),
    );
    assert_eq!(next.code, 0, "{}", next.stderr);
    let ids = p.call_ids(&session());
    let restores = ids.iter().filter(|id| id.starts_with("restore:")).count();
    assert_eq!(restores, 1, "{ids:?}");
    let plan_calls: Vec<_> = ids.iter().filter(|id| id.starts_with("toolu_")).collect();
    assert_eq!(plan_calls, ["toolu_1", "toolu_2", "toolu_3"], "{ids:?}");
    p.verify_clean();
}

#[test]
fn a_killed_server_is_replaced_by_the_next_call_and_nothing_is_lost() {
    let p = Planlog::new();
    let first = serving(&p, &todo_call("toolu_1", &[("Build", "in_progress")]));
    signal(first, "KILL");
    wait_for(&p.db(), "the killed server to go", |s| s.is_empty());
    // No server: the call runs in its own process, then starts another server.
    let r = p.hook(&todo_call("toolu_2", &[("Build", "completed")]), &[], &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let second = the_server(&p.db());
    assert_ne!(first, second);
    let r = hook_with_no_files(
        &p,
        &todo_call("toolu_3", &[("Build", "completed"), ("Test", "pending")]),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(p.call_ids(&session()), ["toolu_1", "toolu_2", "toolu_3"]);
    p.verify_clean();
}

#[test]
fn hooks_at_once_share_one_server_and_every_call_is_stored() {
    let p = Planlog::new();
    serving(&p, &todo_call("toolu_0", &[("Start", "in_progress")]));
    // Sixteen sessions, each with a call of its own, at once.
    let runs: Vec<Run> = std::thread::scope(|s| {
        let calls: Vec<_> = (0..16)
            .map(|k| {
                let p = &p;
                s.spawn(move || {
                    let mut call = todo_call(&format!("toolu_{k}"), &[("Work", "in_progress")]);
                    call["session_id"] = json!(format!("0d5e7a1c-0000-4000-8000-0000000000{k:02}"));
                    hook_with_no_files(p, &call)
                })
            })
            .collect();
        calls.into_iter().map(|c| c.join().unwrap()).collect()
    });
    for r in &runs {
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(r.stderr.is_empty(), "{}", r.stderr);
    }
    for k in 0..16 {
        let id = format!("cc-0d5e7a1c-0000-4000-8000-0000000000{k:02}");
        assert_eq!(p.call_ids(&id), [format!("toolu_{k}")], "{id}");
    }
    assert_eq!(servers(&p.db()).len(), 1);
    p.verify_clean();
}

#[test]
fn a_process_of_another_configuration_runs_its_call_itself() {
    let p = Planlog::new();
    let server = serving(&p, &todo_call("toolu_1", &[("Build", "in_progress")]));
    // Another lock timeout: the server refuses the call. A process that can open one file
    // at a time then cannot store it, only keep it in the spool: the server did not run it.
    let other = [("PLANLOG_LOCK_TIMEOUT_MS", "1234")];
    let r = hook_with_no_files_env(&p, &todo_call("toolu_x", &[("Build", "completed")]), &other);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("waits in"), "said: {}", r.stderr);
    assert_eq!(p.call_ids(&session()), ["toolu_1"]);
    // With its files, such a process stores what waits, then its own call.
    let r = p.hook(
        &todo_call("toolu_2", &[("Build", "completed")]),
        &[],
        &[("PLANLOG_LOCK_TIMEOUT_MS", "1234")],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(p.call_ids(&session()), ["toolu_1", "toolu_x", "toolu_2"]);
    // It started no second server, and the first one still serves.
    assert_eq!(servers(&p.db()), [server]);
    let r = hook_with_no_files(
        &p,
        &todo_call("toolu_3", &[("Build", "completed"), ("Test", "pending")]),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        p.call_ids(&session()),
        ["toolu_1", "toolu_x", "toolu_2", "toolu_3"]
    );
}

#[test]
fn no_server_is_started_when_turned_off_or_for_a_session_that_never_planned() {
    let p = Planlog::new();
    // A prompt in a session that never planned: no store, no server.
    let r = p.hook(&event("UserPromptSubmit"), &[], &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!p.db().exists());
    std::thread::sleep(Duration::from_millis(300));
    assert!(servers(&p.db()).is_empty());
    // Turned off: the call is stored in its own process, and no server starts.
    let r = p.hook(
        &todo_call("toolu_1", &[("Build", "in_progress")]),
        &[],
        &[("PLANLOG_HOOK_SERVER", "off")],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    std::thread::sleep(Duration::from_millis(300));
    assert!(servers(&p.db()).is_empty());
    assert_eq!(p.call_ids(&session()), ["toolu_1"]);
}

#[test]
fn a_server_ends_when_its_store_s_folder_is_deleted() {
    let p = Planlog::new();
    assert_eq!(
        p.hook(&todo_call("toolu_1", &[("Build", "in_progress")]), &[], &[])
            .code,
        0
    );
    let db = p.db();
    the_server(&db);
    std::fs::remove_dir_all(db.parent().unwrap()).unwrap();
    wait_for(&db, "the server to end", |s| s.is_empty());
}

#[test]
fn a_server_ends_when_planlog_is_upgraded_under_it_and_the_new_build_serves() {
    let p = Planlog::new();
    // planlog installed as a copy, then installed again over it (a new file in its place).
    let bin = p.dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let installed = bin.join("planlog");
    std::fs::copy(env!("CARGO_BIN_EXE_planlog"), &installed).unwrap();
    let call = |id: &str, items: &[(&str, &str)]| {
        let mut c = Command::new(&installed);
        c.arg("--db").arg(p.db()).args(["hook", "claude-code"]);
        let r = run_child(c, todo_call(id, items).to_string().as_bytes());
        assert_eq!(r.code, 0, "{}", r.stderr);
    };
    call("toolu_1", &[("Build", "in_progress")]);
    let old = the_server(&p.db());
    let staged = bin.join("planlog.new");
    std::fs::copy(env!("CARGO_BIN_EXE_planlog"), &staged).unwrap();
    std::fs::rename(&staged, &installed).unwrap();
    // The old server ends on its own; the next call starts the new build's.
    wait_for(&p.db(), "the old server to end", |s| !s.contains(&old));
    call("toolu_2", &[("Build", "completed")]);
    let new = the_server(&p.db());
    assert_ne!(old, new);
    call("toolu_3", &[("Build", "completed"), ("Ship", "pending")]);
    assert_eq!(p.call_ids(&session()), ["toolu_1", "toolu_2", "toolu_3"]);
}

/// The server keeps its store's handle between calls; a store deleted and made again under
/// it (the same folder, new files) gets the next call, not the deleted files.
#[test]
fn a_store_deleted_and_made_again_under_the_server_gets_the_next_calls() {
    let p = Planlog::new();
    let server = serving(&p, &todo_call("toolu_1", &[("Build", "in_progress")]));
    let r = hook_with_no_files(
        &p,
        &todo_call("toolu_2", &[("Build", "completed"), ("Ship", "pending")]),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Every file of the store's removed, the folder kept; another session makes a new store.
    let folder = p.db().parent().unwrap().to_path_buf();
    for entry in std::fs::read_dir(&folder).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            std::fs::remove_dir_all(&path).unwrap();
        } else {
            std::fs::remove_file(&path).unwrap();
        }
    }
    let mut other = todo_call("toolu_9", &[("Other", "in_progress")]);
    other["session_id"] = json!("0d5e7a1c-0000-4000-8000-0000000000ff");
    assert_eq!(
        p.hook(&other, &[], &[("PLANLOG_HOOK_SERVER", "off")]).code,
        0
    );
    let r = hook_with_no_files(&p, &todo_call("toolu_3", &[("Ship", "in_progress")]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(servers(&p.db()), [server], "the same server served it");
    assert_eq!(p.call_ids(&session()), ["toolu_3"]);
    p.verify_clean();
}

/// Another process's writes between the server's calls are read by its kept handle: the
/// server's next call judges against them, and the plan it puts back has them.
#[test]
fn what_other_processes_wrote_between_calls_is_what_the_server_reads() {
    let p = Planlog::new();
    serving(
        &p,
        &todo_call("toolu_1", &[("Build", "in_progress"), ("Ship", "pending")]),
    );
    assert_eq!(
        hook_with_no_files(
            &p,
            &todo_call("toolu_2", &[("Build", "completed"), ("Ship", "pending")])
        )
        .code,
        0
    );
    // Calls in their own processes, many of them (past the index's lazy limit).
    for k in 3..40 {
        let items = [
            ("Build", "completed"),
            ("Ship", if k % 2 == 0 { "pending" } else { "in_progress" }),
        ];
        let r = p.hook(
            &todo_call(&format!("toolu_{k}"), &items),
            &[],
            &[("PLANLOG_HOOK_SERVER", "off")],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let r = hook_with_no_files(&p, &compacted());
    assert_eq!(r.code, 0, "{}", r.stderr);
    // The last of them (toolu_39) left Ship in progress.
    assert!(
        r.stdout.contains("[x] Build") && r.stdout.contains("[>] Ship"),
        "{}",
        r.stdout
    );
    let cold = p.hook(&compacted(), &[], &[("PLANLOG_HOOK_SERVER", "off")]);
    assert_eq!(r.stdout, cold.stdout);
    let ids = p.call_ids(&session());
    let plan_calls: Vec<_> = ids
        .iter()
        .filter(|id| id.starts_with("toolu_"))
        .cloned()
        .collect();
    let expected: Vec<String> = (1..40).map(|k| format!("toolu_{k}")).collect();
    assert_eq!(plan_calls, expected);
    p.verify_clean();
}

/// The disk fills under the server and frees again (a file-size limit on the server's
/// process, lifted part way): the call it cannot store waits in the spool, said to the
/// agent, and the next call after the disk frees stores both, in order.
#[test]
fn a_disk_that_fills_under_the_server_and_frees_loses_no_call() {
    let p = Planlog::new();
    let off = [("PLANLOG_HOOK_SERVER", "off")];
    assert_eq!(
        p.hook(
            &todo_call("toolu_1", &[("Build", "in_progress"), ("Ship", "pending")]),
            &[],
            &off
        )
        .code,
        0
    );
    // No write may reach past the journal's last record (a file-size limit applies to the
    // offset written, whatever the file's length: the journal keeps zeros past its end).
    let full = planlog_store::JournaledLog::options()
        .read_only(true)
        .open(p.db())
        .unwrap()
        .journal_end();
    let mut server = common::under_file_size_limit(&p.db(), full, &["hook-server"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = the_server(&p.db());
    let r = hook_with_no_files(
        &p,
        &todo_call("toolu_2", &[("Build", "completed"), ("Ship", "pending")]),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("waits in"),
        "the call waits in the spool: {}",
        r.stderr
    );
    assert_eq!(p.call_ids(&session()), ["toolu_1"]);
    // The plan after a compaction, meanwhile: the stored one is behind the call that waits,
    // and is not put back (a plan put back must be the plan).
    let r = hook_with_no_files(&p, &compacted());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "", "no plan behind a waiting call is put back");
    assert!(r.stderr.contains("wait in the spool"), "{}", r.stderr);
    common::lift_file_size_limit(pid);
    let r = hook_with_no_files(
        &p,
        &todo_call(
            "toolu_3",
            &[("Build", "completed"), ("Ship", "in_progress")],
        ),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    // Everything that waited stored in order: the call, then the compaction (on record
    // though nothing was put back).
    let ids = p.call_ids(&session());
    assert_eq!(ids[..2], ["toolu_1", "toolu_2"], "{ids:?}");
    assert!(ids[2].starts_with("compact:hook-"), "{ids:?}");
    assert_eq!(ids[3..], ["toolu_3"], "{ids:?}");
    p.verify_clean();
    signal(pid, "KILL");
    server.wait().unwrap();
}

/// The server's kept handle gives way while another process writes the index (its calls
/// stored, none waiting for the index), and once that process is done a call after the
/// pause brings the index up to date: its records do not pile up past the index for the
/// server's whole life.
#[test]
fn the_server_gives_way_to_another_process_indexing_then_indexes_again() {
    let p = Planlog::new();
    serving(&p, &todo_call("toolu_0", &[("Zero", "in_progress")]));
    let lock = common::hold_index_write_lock(&p.db());
    for n in 1..=40 {
        let started = Instant::now();
        let r = hook_with_no_files(
            &p,
            &todo_call(&format!("toolu_{n}"), &[("Zero", "in_progress")]),
        );
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "toolu_{n}");
        assert!(
            started.elapsed() < Duration::from_millis(1_500),
            "toolu_{n} took {:?}",
            started.elapsed()
        );
    }
    drop(lock);
    let position = || {
        let log = planlog_store::JournaledLog::options()
            .read_only(true)
            .open(p.db())
            .unwrap();
        (log.index_position().unwrap(), log.journal_end())
    };
    let (from, to) = position();
    assert!(from < to, "records wait past the index");
    // Past the pause (2 s), the next call indexes them all, once it has answered (the
    // catch-up is off the call's path): soon after, not at once.
    std::thread::sleep(Duration::from_millis(2_100));
    assert_eq!(
        hook_with_no_files(&p, &todo_call("toolu_41", &[("Zero", "completed")])).code,
        0
    );
    let started = Instant::now();
    let reached = loop {
        let (reached, _) = position();
        if reached >= to || started.elapsed() > Duration::from_secs(5) {
            break reached;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(reached >= to, "indexed to {reached}, not past {to}");
    let want: Vec<String> = (0..=41).map(|n| format!("toolu_{n}")).collect();
    assert_eq!(p.call_ids(&session()), want);
}

/// `planlog compact` needs the store alone: a warm server holding it lets it go when asked,
/// the compaction runs, and the server's next call opens the compacted store.
#[test]
fn compact_asks_the_server_to_let_the_store_go_and_its_next_call_reads_the_new_files() {
    let p = Planlog::new();
    let server = serving(&p, &todo_call("toolu_1", &[("Build", "in_progress")]));
    assert_eq!(
        hook_with_no_files(
            &p,
            &todo_call("toolu_2", &[("Build", "completed"), ("Ship", "pending")])
        )
        .code,
        0
    );
    let gone = p.ok(&["new"]).trim().to_owned();
    p.ok(&["delete", &gone, "--yes"]);
    let r = p.run(&["compact"], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("compacted"), "{}", r.stderr);
    assert_eq!(servers(&p.db()), [server], "the server goes on");
    let r = hook_with_no_files(&p, &todo_call("toolu_3", &[("Ship", "in_progress")]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(p.call_ids(&session()), ["toolu_1", "toolu_2", "toolu_3"]);
    p.verify_clean();
}

/// The server brings the index up to date after it has answered (its handle never indexes
/// in the writing call): after 40 served calls, the index has been caught up in passing to
/// within the lazy limit's worth of the journal's end. (That no call waits for it is a
/// matter of time, measured in BENCHMARKS.md, not in a debug build.)
#[test]
fn the_server_catches_the_index_up_after_its_answers() {
    let p = Planlog::new();
    serving(&p, &todo_call("toolu_0", &[("Zero", "in_progress")]));
    for n in 1..=40 {
        let r = hook_with_no_files(
            &p,
            &todo_call(&format!("toolu_{n}"), &[("Zero", "in_progress")]),
        );
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "toolu_{n}");
    }
    let started = Instant::now();
    loop {
        let log = planlog_store::JournaledLog::options()
            .read_only(true)
            .open(p.db())
            .unwrap();
        let (indexed, end) = (log.index_position().unwrap(), log.journal_end());
        drop(log);
        // Indexed in passing: some catch-up ran (the first call's records alone are
        // under the limit), and what is past the index is under the limit's worth.
        if indexed > 0 && end - indexed < 16 * 2_000 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the index stayed at {indexed} of {end}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
