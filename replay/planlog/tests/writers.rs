//! Many writers on one session, as users run them: several `planlog write` processes at once,
//! two `planlog mcp` servers on one session, a storage failure that clears, a deleted id, a
//! reused call id, a server that never gets a client, an import racing a write. Every
//! accepted write is in the log, nothing is answered "could not be saved" unless storage
//! really failed, and `verify` is clean afterwards.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

mod common;
use common::mcp_lines::Mcp;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

fn planlog(db: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_planlog"));
    c.arg("--db")
        .arg(db)
        .env_remove("PLANLOG_DB")
        .env("NO_COLOR", "1");
    c
}

/// Runs a command with `stdin`; returns (exit code, stdout, stderr).
fn run(mut c: Command, stdin: &str) -> (i32, String, String) {
    let mut child = c
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = child.stdin.take().unwrap();
    if let Err(e) = pipe.write_all(stdin.as_bytes()) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    drop(pipe);
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn write(db: &Path, session: &str, call: &str, args: &Value) -> (i32, String, String) {
    let mut c = planlog(db);
    c.args(["write", session, "--call-id", call]);
    run(c, &args.to_string())
}

fn ok(db: &Path, args: &[&str]) -> String {
    let mut c = planlog(db);
    c.args(args);
    let (code, out, err) = run(c, "");
    assert_eq!(code, 0, "planlog {args:?}: {err}");
    out
}

fn item(id: &str, status: &str) -> Value {
    json!({"steps": [{"id": id, "content": format!("item {id}"), "status": status}]})
}

fn plan_ids(db: &Path, session: &str) -> Vec<String> {
    let plan: Value = serde_json::from_str(&ok(db, &["show", session, "--json"])).unwrap();
    plan.as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap().to_owned())
        .collect()
}

fn kinds(db: &Path, session: &str) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for line in ok(db, &["history", session, "--json"]).lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        *counts
            .entry(v["kind"].as_str().unwrap().to_owned())
            .or_default() += 1;
    }
    counts
}

#[test]
fn eight_processes_of_twenty_five_writes_each_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planlog.redb");
    let (n, m) = (8, 25);
    let handles: Vec<_> = (0..n)
        .map(|p| {
            let db = db.clone();
            std::thread::spawn(move || {
                for i in 0..m {
                    let id = format!("p{p}-{i}");
                    let (code, out, err) = write(&db, "shared", &id, &item(&id, "in_progress"));
                    assert_eq!(code, 0, "{id}: {err}");
                    assert!(out.contains(&id), "{id}: the result holds the call's item");
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let counts = kinds(&db, "shared");
    assert_eq!(counts["plan_written"], n * m);
    assert_eq!(counts["session_started"], 1);
    assert_eq!(counts.get("write_rejected"), None);
    assert_eq!(
        plan_ids(&db, "shared").len(),
        n * m,
        "every item in the plan"
    );
    let history = ok(&db, &["history", "shared", "--json"]);
    let mut calls: Vec<String> = history
        .lines()
        .filter_map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["call_id"]
                .as_str()
                .map(str::to_owned)
        })
        .collect();
    calls.sort();
    calls.dedup();
    assert_eq!(calls.len(), n * m, "each call id once");
    assert!(ok(&db, &["verify"]).contains("0 problems"));
}

#[test]
fn forty_processes_writing_at_once_all_land() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planlog.redb");
    let children: Vec<(String, Child)> = (0..40)
        .map(|i| {
            let id = format!("c{i}");
            let mut c = planlog(&db);
            c.args(["write", "fresh", "--call-id", &id])
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::piped());
            let mut child = c.spawn().unwrap();
            let mut stdin = child.stdin.take().unwrap();
            stdin
                .write_all(item(&id, "in_progress").to_string().as_bytes())
                .unwrap();
            (id, child)
        })
        .collect();
    for (id, child) in children {
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{id}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The session was new: one creation won, the others adopted it.
    assert_eq!(kinds(&db, "fresh")["session_started"], 1);
    assert_eq!(plan_ids(&db, "fresh").len(), 40);
    assert!(ok(&db, &["verify"]).contains("0 problems"));
}

#[test]
fn two_mcp_servers_on_one_session_lose_nothing_and_see_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planlog.redb");
    // Driven alternately first: each write lands after the other's.
    let mut a = Mcp::serve(&db, "shared", dir.path().join("a.err"));
    let mut b = Mcp::serve(&db, "shared", dir.path().join("b.err"));
    for i in 0..5 {
        for (name, server) in [("a", &mut a), ("b", &mut b)] {
            let id = format!("{name}{i}");
            let (err, text) = server.call(json!(i + 1), "plan_write", item(&id, "in_progress"));
            assert!(!err, "{id}: {text}");
            assert!(text.contains(&format!("\"{id}\"")), "{id}: {text}");
        }
    }
    // Then concurrently, from two threads.
    let threads: Vec<_> = [("a", a), ("b", b)]
        .into_iter()
        .map(|(name, mut server)| {
            std::thread::spawn(move || {
                for i in 5..20 {
                    let id = format!("{name}{i}");
                    let (err, text) =
                        server.call(json!(i + 1), "plan_write", item(&id, "in_progress"));
                    assert!(!err, "{id}: {text}");
                    assert!(!text.contains("could not be saved"), "{id}: {text}");
                }
                server
            })
        })
        .collect();
    let mut servers: Vec<Mcp> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    // Each server's read mode and plan://current show the other's items.
    for server in &mut servers {
        let (_, text) = server.call(json!(100), "plan_write", json!({}));
        let plan: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(plan.as_array().unwrap().len(), 40, "{text}");
        let current = server.request(
            json!(101),
            "resources/read",
            json!({"uri": "plan://current"}),
        );
        let text = current["result"]["contents"][0]["text"].as_str().unwrap();
        assert!(
            text.contains("[>] item a19") && text.contains("[>] item b19"),
            "{text}"
        );
    }
    for server in servers {
        let (code, stderr) = server.stop();
        assert_eq!(code, 0, "{stderr}");
        assert!(
            !stderr.contains("lost") && !stderr.contains("conflict"),
            "{stderr}"
        );
    }
    assert_eq!(kinds(&db, "shared")["plan_written"], 40);
    assert!(ok(&db, &["verify"]).contains("0 problems"));
}

#[test]
fn a_subscriber_hears_of_another_writers_change_on_its_next_request() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planlog.redb");
    let mut a = Mcp::serve(&db, "shared", dir.path().join("a.err"));
    let r = a.request(
        json!(1),
        "resources/subscribe",
        json!({"uri": "plan://current"}),
    );
    assert!(r["result"].is_object(), "{r}");
    let (code, _, err) = write(&db, "shared", "cli-1", &item("from-cli", "in_progress"));
    assert_eq!(code, 0, "{err}");
    let read = a.request(json!(2), "resources/read", json!({"uri": "plan://current"}));
    assert!(
        read["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("[>] item from-cli")
    );
    // The notification may trail the response by a moment.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !a
        .notes
        .iter()
        .any(|n| n["method"] == "notifications/resources/updated")
    {
        assert!(
            std::time::Instant::now() < deadline,
            "no update notification: {:?}",
            a.notes
        );
        if let Ok(v) = a.lines.recv_timeout(Duration::from_millis(100)) {
            a.notes.push(v);
        }
    }
    assert_eq!(a.stop().0, 0);
}

/// A store in `dir` whose session `session` holds one write, served by `planlog mcp` under a
/// file-size limit at the store's size, which stands in for a full disk (EFBIG; SIGXFSZ
/// ignored so a write fails instead of killing it), after a write of 60 items of ~1.9 KB
/// each, ids `<prefix>-0`…, that had to grow the store's files and is kept unsaved.
fn an_unsaved_write_on_a_full_disk(dir: &Path, session: &str, prefix: &str) -> (PathBuf, Mcp) {
    let db = dir.join("planlog.redb");
    let (code, _, err) = write(&db, session, "c0", &item("0", "in_progress"));
    assert_eq!(code, 0, "{err}");
    let size = std::fs::metadata(&db).unwrap().len();
    let mut c = common::under_file_size_limit(&db, size, &["mcp", "--session", session]);
    c.env_remove("PLANLOG_DB");
    let mut server = Mcp::start(c, dir.join("server.err"));
    let big = json!({"steps": (0..60).map(|i| json!({"id": format!("{prefix}-{i}"), "content": format!("{prefix} {i} {}", common::noise(1900, i)), "status": "in_progress"})).collect::<Vec<_>>()});
    let (error, text) = server.call(json!(1), "plan_write", big);
    assert!(
        error && text.contains("could not be saved to disk yet"),
        "{text}"
    );
    (db, server)
}

#[test]
fn a_storage_failure_that_clears_costs_no_write() {
    let dir = tempfile::tempdir().unwrap();
    let (db, mut server) = an_unsaved_write_on_a_full_disk(dir.path(), "live", "a");
    let (err2, text2) = server.call(json!(2), "plan_write", json!({}));
    assert!(err2 || text2.contains("a-59"), "{text2}");
    // The disk frees up.
    common::lift_file_size_limit(server.child.id());
    let (err3, text3) = server.call(json!(3), "plan_write", item("after", "in_progress"));
    assert!(!err3, "{text3}");
    assert!(
        text3.contains("a-59") && text3.contains("\"after\""),
        "{text3}"
    );
    let (code, stderr) = server.stop();
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("are lost"), "{stderr}");
    let ids = plan_ids(&db, "live");
    assert!(ids.contains(&"a-0".to_owned()) && ids.contains(&"after".to_owned()));
    assert!(ok(&db, &["verify"]).contains("0 problems"));
}

/// The disk stays full until the client goes away: the call the store could not take is
/// kept in the spool beside it (not lost with the server), and stored once there is room.
#[test]
fn a_disk_still_full_at_exit_keeps_the_unsaved_call_in_the_spool() {
    let dir = tempfile::tempdir().unwrap();
    let (db, server) = an_unsaved_write_on_a_full_disk(dir.path(), "full", "b");
    // The client goes away while the disk is still full.
    let (code, stderr) = server.stop();
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("mcp-spool"), "{stderr}");
    assert!(!plan_ids(&db, "full").contains(&"b-0".to_owned()));
    let mut c = planlog(&db);
    c.arg("verify");
    let (code, verified, _) = run(c, "");
    assert_eq!(code, 1, "{verified}");
    assert!(
        verified.contains("plan calls of planlog mcp servers wait"),
        "{verified}"
    );
    // Room again: drain stores it.
    ok(&db, &["drain"]);
    let ids = plan_ids(&db, "full");
    assert!(
        ids.contains(&"b-0".to_owned()) && ids.contains(&"b-59".to_owned()),
        "{ids:?}"
    );
    assert!(ok(&db, &["verify"]).contains("0 problems"));
}

/// An index commit that fails with room on the disk (a quota, a file-size limit: what
/// `statvfs` does not see) leaves redb's handle failed; the server opens it again and every
/// write is saved, under the limit and after it is lifted. The limit (100,000 bytes, SIGXFSZ
/// ignored) leaves the journal room (its 64 KiB of kept zeros) but stops the index from
/// growing past its first ~73 KiB. Without the renewal (tried), every write from the second
/// on answered "not saved" ("Previous I/O error"), after the limit was lifted too (by hand:
/// 44 of the 45 waited in the server's spool when it stopped).
#[test]
fn an_index_commit_that_fails_with_room_on_the_disk_costs_no_write() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planlog.redb");
    let mut c = common::under_file_size_limit(&db, 100_000, &["mcp", "--session", "quota"]);
    c.env_remove("PLANLOG_DB").env("NO_COLOR", "1");
    let mut server = Mcp::start(c, dir.path().join("server.err"));
    let write = |server: &mut Mcp, k: usize| {
        let steps = json!([{"id": "1", "content": "Work", "status": "in_progress"},
            {"id": "2", "content": format!("Step {k} {}", common::noise(400, k as u64)), "status": "pending"}]);
        let (error, text) = server.call(json!(k + 1), "plan_write", json!({"steps": steps}));
        assert!(
            !error && !text.contains("could not be saved"),
            "write {k}: {text}"
        );
    };
    for k in 0..40 {
        write(&mut server, k);
        // The server's indexing round after each write (~50 ms).
        std::thread::sleep(Duration::from_millis(60));
    }
    common::lift_file_size_limit(server.child.id());
    for k in 40..45 {
        write(&mut server, k);
        std::thread::sleep(Duration::from_millis(60));
    }
    let (code, said) = server.stop();
    assert_eq!(code, 0, "{said}");
    // The failure this test is about happened, and the handle was opened again.
    assert!(
        said.contains("File too large") && said.contains("it was opened again"),
        "no index commit failed under the limit: {said}"
    );
    assert!(
        !Path::new(&format!("{}.mcp-spool", db.display())).exists(),
        "nothing left unsaved: {said}"
    );
    let verified = ok(&db, &["verify"]);
    assert!(
        verified.contains("46 events checked: 0 problems"),
        "{verified}"
    );
    assert_eq!(plan_ids(&db, "quota"), ["1", "2"]);
}

#[test]
fn a_deleted_id_is_retired_and_its_export_restores_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planlog.redb");
    assert_eq!(write(&db, "live", "c1", &item("1", "in_progress")).0, 0);
    let export = ok(&db, &["export", "live", "--format", "jsonl"]);
    let file = dir.path().join("live.jsonl");
    std::fs::write(&file, &export).unwrap();
    ok(&db, &["delete", "live", "--yes"]);
    // A server on the retired id refuses to start, writes nothing, says what to do.
    let mut c = planlog(&db);
    c.args(["mcp", "--session", "live"]);
    let (code, _, err) = run(c, "");
    assert_eq!(code, 2);
    assert!(
        err.contains("retired") && err.contains("planlog import planlog"),
        "{err}"
    );
    let (code, _, err) = write(&db, "live", "c2", &item("2", "pending"));
    assert_eq!(code, 2);
    assert!(err.contains("retired"), "{err}");
    // Restoring the session from its own export brings it back whole.
    let mut c = planlog(&db);
    c.args(["import", "planlog"]).arg(&file);
    let (code, out, err) = run(c, "");
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), "live");
    assert_eq!(ok(&db, &["export", "live", "--format", "jsonl"]), export);
    assert_eq!(write(&db, "live", "c2", &item("2", "pending")).0, 0);
    assert!(ok(&db, &["verify"]).contains("0 problems"));
}

#[test]
fn json_rpc_ids_100_and_string_100_are_different_calls() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planlog.redb");
    let mut s = Mcp::serve(&db, "ids", dir.path().join("s.err"));
    let (e1, _) = s.call(json!(100), "plan_write", item("n", "in_progress"));
    let (e2, t2) = s.call(json!("100"), "plan_write", item("s", "in_progress"));
    assert!(!e1 && !e2, "{t2}");
    assert!(
        t2.contains("\"n\"") && t2.contains("\"s\""),
        "both applied: {t2}"
    );
    // The same request again (same id, same arguments) is applied once.
    let (e3, t3) = s.call(json!(100), "plan_write", item("n", "in_progress"));
    assert!(!e3);
    assert!(
        !t3.contains("\"s\""),
        "the recorded answer of the first call: {t3}"
    );
    // The same id with other arguments is refused, nothing written.
    let (e4, t4) = s.call(json!(100), "plan_write", item("other", "pending"));
    assert!(e4 && t4.contains("already used"), "{t4}");
    assert_eq!(s.stop().0, 0);
    assert_eq!(kinds(&db, "ids")["plan_written"], 2);
}

#[test]
fn a_server_that_never_gets_a_client_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planlog.redb");
    let mut c = planlog(&db);
    c.args(["mcp", "--session", "probe"]);
    let (code, _, _) = run(c, "");
    assert_eq!(code, 2, "no client: the server could not run");
    let mut c = planlog(&db);
    c.args(["mcp", "--new"]);
    assert_eq!(run(c, "").0, 2);
    assert!(
        ok(&db, &["sessions", "--json"]).trim().is_empty(),
        "no session was created"
    );
}

#[test]
fn an_import_racing_a_write_into_the_same_session_corrupts_neither() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("source.redb");
    assert_eq!(
        write(&source, "race", "s1", &item("from-export", "in_progress")).0,
        0
    );
    let file = dir.path().join("race.jsonl");
    std::fs::write(&file, ok(&source, &["export", "race", "--format", "jsonl"])).unwrap();
    for round in 0..6 {
        // The store does not exist yet: both processes create it.
        let db = dir.path().join(format!("r{round}.redb"));
        let importer = {
            let (db, file) = (db.clone(), file.clone());
            std::thread::spawn(move || {
                let mut c = planlog(&db);
                c.args(["import", "planlog"]).arg(&file);
                run(c, "")
            })
        };
        let (wcode, _, werr) = write(&db, "race", "w1", &item("from-write", "in_progress"));
        let (icode, _, ierr) = importer.join().unwrap();
        assert_eq!(wcode, 0, "the write always lands: {werr}");
        let ids = plan_ids(&db, "race");
        if icode == 0 {
            // The import created the session first; the write landed after it.
            assert_eq!(ids, ["from-export", "from-write"], "round {round}");
        } else {
            assert_eq!(icode, 2, "{ierr}");
            assert!(
                ierr.contains("already exists") || ierr.contains("conflict"),
                "{ierr}"
            );
            assert_eq!(ids, ["from-write"], "round {round}: nothing of the import");
        }
        assert!(ok(&db, &["verify"]).contains("0 problems"));
    }
}

/// `planlog --db STORE` run in `work` with its data folder there (a database's local
/// sidecars stay in the test's folder).
fn planlog_in(store: &str, work: &Path) -> Command {
    let mut c = planlog(Path::new(store));
    c.current_dir(work).env("XDG_DATA_HOME", work.join("data"));
    c
}

/// A subscribed client that sends nothing hears of another process's write on its own.
fn an_idle_subscriber_hears_of_another_writers_change(store: &str, work: &Path) {
    let mut c = planlog_in(store, work);
    c.args(["mcp", "--session", "watched"]);
    let mut a = Mcp::start(c, work.join("a.err"));
    let r = a.request(
        json!(1),
        "resources/subscribe",
        json!({"uri": "plan://current"}),
    );
    assert!(r["result"].is_object(), "{r}");
    let mut c = planlog_in(store, work);
    c.args(["write", "watched", "--call-id", "cli-1"]);
    let (code, _, err) = run(c, &item("from-cli", "in_progress").to_string());
    assert_eq!(code, 0, "{err}");
    // No request from the client: the server must speak first.
    let note = a
        .lines
        .recv_timeout(Duration::from_secs(10))
        .unwrap_or_else(|_| {
            panic!(
                "no update notification within 10 s: {}",
                std::fs::read_to_string(work.join("a.err")).unwrap_or_default()
            )
        });
    assert_eq!(note["method"], "notifications/resources/updated", "{note}");
    assert_eq!(note["params"]["uri"], "plan://current");
    let read = a.request(json!(2), "resources/read", json!({"uri": "plan://current"}));
    assert!(
        read["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("[>] item from-cli"),
        "{read}"
    );
    assert_eq!(a.stop().0, 0);
}

#[test]
fn an_idle_subscriber_hears_of_another_process_write_on_a_file_store() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planlog.redb").display().to_string();
    an_idle_subscriber_hears_of_another_writers_change(&db, dir.path());
}

#[test]
fn an_idle_subscriber_hears_of_another_machines_write_on_postgres() {
    let Some(pg) = planlog_tests::TempPg::new() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    an_idle_subscriber_hears_of_another_writers_change(&pg.url, dir.path());
}

/// `planlog mcp` writes the plan file off the reply path: after the client goes away every
/// file holds the session's last plan.
#[test]
fn the_mcp_plan_file_holds_the_last_plan_once_the_server_stops() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planlog.redb");
    let mut a = Mcp::serve(&db, "filed", dir.path().join("a.err"));
    for n in 0..30 {
        let (is_error, text) = a.call(
            json!(n + 1),
            "plan_write",
            item(&format!("i{n}"), "pending"),
        );
        assert!(!is_error, "{text}");
    }
    assert_eq!(a.stop().0, 0);
    let file = std::fs::read_to_string(dir.path().join("planlog.plans").join("filed.md")).unwrap();
    let shown = ok(&db, &["show", "filed", "--markdown"]);
    assert!(
        file.ends_with(&shown),
        "the file is the last plan:\n{file}\n---\n{shown}"
    );
    assert!(file.contains("item i29"), "{file}");
}

#[test]
fn an_mcp_server_started_by_claude_code_keeps_its_tasks_in_the_session_its_hooks_restore() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planlog.redb");
    let sid = "5e55a1d0-0000-4000-8000-00000000c0de";
    let mut c = planlog(&db);
    c.args(["mcp", "--claude-code", "--tools", "tasks"])
        .env("CLAUDE_CODE_SESSION_ID", sid);
    let mut server = Mcp::start(c, dir.path().join("mcp.err"));
    let (error, text) = server.call(
        json!(1),
        "task_create",
        json!({"subject": "Fetch the data", "description": "from the API"}),
    );
    assert!(!error, "{text}");
    let (error, text) = server.call(
        json!(2),
        "task_update",
        json!({"taskId": "1", "status": "in_progress"}),
    );
    assert!(!error, "{text}");
    assert_eq!(server.stop().0, 0);
    // Claude Code compacts: the hooks put back the plan the MCP tools kept.
    let mut hook = planlog(&db);
    hook.args(["hook", "claude-code"]);
    let start = json!({"session_id": sid, "hook_event_name": "SessionStart", "source": "compact"});
    let (code, out, err) = run(hook, &start.to_string());
    assert_eq!(code, 0, "{err}");
    let context: Value = serde_json::from_str(&out).unwrap();
    let text = context["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(text.contains("[>] #1 Fetch the data"), "{text}");
    // And a task call the hooks record lands in the same session.
    let mut hook = planlog(&db);
    hook.args(["hook", "claude-code"]);
    let post = json!({"session_id": sid, "hook_event_name": "PostToolUse", "tool_name": "TaskUpdate", "tool_use_id": "toolu_9",
        "tool_input": {"taskId": "1", "status": "completed"}, "tool_response": {"success": true, "taskId": "1"}});
    let (code, _, err) = run(hook, &post.to_string());
    assert_eq!(code, 0, "{err}");
    let session = format!("cc-{sid}");
    let history = ok(&db, &["history", &session]);
    assert!(history.contains("(captured live)"), "{history}");
    assert!(history.contains("[toolu_9]"), "{history}");
    assert!(ok(&db, &["verify"]).contains("0 problems"));
    // Without Claude Code's variable the server says what to do.
    let mut c = planlog(&db);
    c.args(["mcp", "--claude-code"])
        .env_remove("CLAUDE_CODE_SESSION_ID");
    let (code, _, err) = run(c, "");
    assert_eq!(code, 2);
    assert!(err.contains("CLAUDE_CODE_SESSION_ID is not set"), "{err}");
}
