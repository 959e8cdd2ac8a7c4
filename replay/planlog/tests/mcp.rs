//! `planlog mcp` driven by a real MCP client (rmcp's), as a child process: initialize, list
//! tools, write, a refused bulk completion, a read, a repeated call id, garbage; then the
//! server is killed and `planlog history` must show every acknowledged write.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::Stdio;

use planlog_core::{EventLog, ToolSpec};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ReadResourceRequestParams};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};

mod common;
use common::mcp_lines::Mcp;

fn args(v: Value) -> serde_json::Map<String, Value> {
    v.as_object().unwrap().clone()
}

fn text(result: &rmcp::model::CallToolResult) -> String {
    serde_json::to_value(&result.content).unwrap()[0]["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn history(db: &Path, session: &str) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_planlog"))
        .arg("--db")
        .arg(db)
        .args(["history", session])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A one-item plan whose item has `status`.
fn parser_plan(status: &str) -> Value {
    json!({"steps": [{"id": "a", "content": "Write the parser", "status": status}]})
}

/// Another process's lock on the store's journal, as a streamed batch holds it.
fn hold_journal(db: &Path) -> std::fs::File {
    let journal = std::fs::File::options()
        .read(true)
        .write(true)
        .open(planlog_store::journal_path(db))
        .unwrap();
    journal.lock().unwrap();
    journal
}

/// `planlog --db DB COMMAND`, run to its end.
fn planlog_on(db: &Path, command: &str) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_planlog"))
        .arg("--db")
        .arg(db)
        .arg(command)
        .output()
        .unwrap()
}

#[tokio::test(flavor = "current_thread")]
async fn an_mcp_client_plans_through_planlog_and_every_acknowledged_write_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planlog.redb");
    let (transport, _stderr) = TokioChildProcess::builder(
        tokio::process::Command::new(env!("CARGO_BIN_EXE_planlog")).configure(|c| {
            c.arg("--db")
                .arg(&db)
                .args(["mcp", "--session", "mcp-test"])
                .env("NO_COLOR", "1");
        }),
    )
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let client = ().serve(transport).await.unwrap();

    // The tools, with exactly the library tool's schema, and a description that says the
    // model reads the plan itself (an MCP server cannot inject it).
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["plan_write", "plan_history"]);
    let spec = ToolSpec::plan_write_mcp();
    assert!(!spec.description.contains("shown to you on every turn"));
    let instructions = client
        .peer_info()
        .and_then(|i| i.instructions.clone())
        .unwrap_or_default();
    assert!(
        instructions.contains("does not\n  put it into your context"),
        "{instructions}"
    );
    assert_eq!(
        Value::Object((*tools[0].input_schema).clone()),
        spec.input_schema
    );
    assert_eq!(
        tools[0].description.as_deref(),
        Some(spec.description.as_str())
    );

    // A write.
    let write = |call: Value| CallToolRequestParams::new("plan_write").with_arguments(args(call));
    let steps = json!({"steps": [{"id": "1", "content": "Write the parser", "status": "in_progress"}, {"id": "2", "content": "Test it", "status": "pending"}]});
    let ok = client.call_tool(write(steps.clone())).await.unwrap();
    assert_eq!(ok.is_error, Some(false));
    assert!(text(&ok).contains("Write the parser"));

    // A refused bulk completion: an error result the model can correct, the plan unchanged.
    let forged = client
        .call_tool(write(json!({"steps": [{"id": "2", "content": "Test it", "status": "completed"}, {"id": "3", "content": "Ship", "status": "completed"}]})))
        .await
        .unwrap();
    assert_eq!(forged.is_error, Some(true));
    assert!(text(&forged).contains("bulk completion"));

    // A read.
    let read = client
        .call_tool(CallToolRequestParams::new("plan_write"))
        .await
        .unwrap();
    assert_eq!(text(&read), text(&ok));

    // The resources.
    let current = client
        .read_resource(ReadResourceRequestParams::new("plan://current"))
        .await
        .unwrap();
    let current = serde_json::to_value(&current.contents).unwrap();
    assert!(
        current[0]["text"]
            .as_str()
            .unwrap()
            .contains("[>] Write the parser")
    );

    // A repeated client-supplied call id is applied once.
    let mut with_id = write(
        json!({"steps": [{"id": "1", "content": "Write the parser", "status": "completed"}]}),
    );
    with_id.meta = Some(serde_json::from_value(json!({"call_id": "client-call-7"})).unwrap());
    let first = client.call_tool(with_id.clone()).await.unwrap();
    let again = client.call_tool(with_id).await.unwrap();
    assert_eq!(text(&first), text(&again));

    // Garbage: an unknown tool, arguments of 10 MB. Errors, nothing written, still serving.
    assert!(
        client
            .call_tool(CallToolRequestParams::new("rm_rf"))
            .await
            .is_err()
    );
    let huge = write(
        json!({"steps": [{"id": "x", "content": "y".repeat(10 * 1024 * 1024), "status": "pending"}]}),
    );
    assert!(client.call_tool(huge).await.is_err());
    let history_tool = client
        .call_tool(CallToolRequestParams::new("plan_history"))
        .await
        .unwrap();
    let lines = text(&history_tool);
    assert_eq!(
        lines.lines().count(),
        4,
        "started, write, rejected, the call-id write: {lines}"
    );
    // A window reads only its events, and says what the whole history says there.
    let mut window = CallToolRequestParams::new("plan_history");
    window.arguments = Some(json!({"from": 2, "limit": 2}).as_object().unwrap().clone());
    let window = text(&client.call_tool(window).await.unwrap());
    assert_eq!(
        window.lines().collect::<Vec<_>>(),
        lines.lines().skip(1).take(2).collect::<Vec<_>>()
    );
    let mut past = CallToolRequestParams::new("plan_history");
    past.arguments = Some(json!({"from": 99}).as_object().unwrap().clone());
    assert_eq!(
        text(&client.call_tool(past).await.unwrap()),
        "(no events in that range)"
    );

    // Kill the server (no goodbye) and audit from the outside.
    drop(client);
    let audit = history(&db, "mcp-test");
    assert_eq!(audit.lines().count(), 4, "{audit}");
    assert!(audit.contains("write_rejected") && audit.contains("[client-call-7]"));
    assert!(!audit.contains("yyyy"), "the oversized call wrote nothing");
}

#[test]
fn raw_garbage_on_stdin_does_not_stop_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_planlog"))
        .arg("--db")
        .arg(dir.path().join("planlog.redb"))
        .args(["mcp", "--new"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |line: &str| {
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    };
    send(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#,
    );
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    send("this is not json {{{");
    send(r#"{"jsonrpc":"2.0","id":2,"method":"no/such/method"}"#);
    send(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"plan_write","arguments":"not an object"}}"#,
    );
    send(
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"plan_write","arguments":{}}}"#,
    );
    send(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"arguments":{}}}"#);
    let mut by_id = std::collections::HashMap::new();
    let mut line = String::new();
    while by_id.len() < 5 {
        line.clear();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "the server stopped"
        );
        let v: Value = serde_json::from_str(&line).unwrap();
        if let Some(id) = v["id"].as_u64() {
            by_id.insert(id, v);
        }
    }
    assert!(
        by_id[&2]["error"].is_object(),
        "unknown method: an error response"
    );
    // Invalid params (-32602) with a reason, not "method not found".
    assert_eq!(by_id[&3]["error"]["code"], -32602, "{}", by_id[&3]);
    assert!(
        by_id[&3]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("arguments must be a JSON object"),
        "{}",
        by_id[&3]
    );
    assert_eq!(by_id[&5]["error"]["code"], -32602, "{}", by_id[&5]);
    assert!(
        by_id[&5]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("name is missing")
    );
    assert_eq!(
        by_id[&2]["error"]["code"], -32601,
        "an unknown method is still -32601"
    );
    assert_eq!(
        by_id[&4]["result"]["content"][0]["text"], "[]",
        "and it still serves"
    );
    drop(stdin);
    child.kill().unwrap();
    child.wait().unwrap();
}

/// A task-tools server on `session` of `db`, with an rmcp client.
async fn task_server(
    db: &Path,
    session: &str,
) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    let (transport, _stderr) = TokioChildProcess::builder(
        tokio::process::Command::new(env!("CARGO_BIN_EXE_planlog")).configure(|c| {
            c.arg("--db")
                .arg(db)
                .args(["mcp", "--session", session, "--tools", "tasks"])
                .env("NO_COLOR", "1");
        }),
    )
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    ().serve(transport).await.unwrap()
}

#[tokio::test(flavor = "current_thread")]
async fn task_tools_over_mcp_keep_claude_codes_shapes_and_planlogs_rules() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planlog.redb");
    let client = task_server(&db, "tasks-test").await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "task_create",
            "task_update",
            "task_get",
            "task_list",
            "task_claim",
            "task_release",
            "plan_history"
        ]
    );
    assert!(
        tools[0]
            .description
            .as_deref()
            .unwrap()
            .contains("call task_list when you start")
    );
    let instructions = client
        .peer_info()
        .and_then(|i| i.instructions.clone())
        .unwrap_or_default();
    assert!(
        instructions.contains("call task_list when you start"),
        "{instructions}"
    );
    let call =
        |name: &'static str, v: Value| CallToolRequestParams::new(name).with_arguments(args(v));

    let created = client
        .call_tool(call(
            "task_create",
            json!({"subject": "Parse", "activeForm": "Parsing"}),
        ))
        .await
        .unwrap();
    assert_eq!(created.is_error, Some(false));
    assert!(
        text(&created).starts_with("Task #1 created successfully: Parse"),
        "{}",
        text(&created)
    );
    client
        .call_tool(call("task_create", json!({"subject": "Test"})))
        .await
        .unwrap();
    let blocked = client
        .call_tool(call(
            "task_update",
            json!({"taskId": "2", "addBlockedBy": ["1"]}),
        ))
        .await
        .unwrap();
    assert_eq!(blocked.is_error, Some(false), "{}", text(&blocked));
    let cycle = client
        .call_tool(call(
            "task_update",
            json!({"taskId": "1", "addBlockedBy": ["2"]}),
        ))
        .await
        .unwrap();
    assert_eq!(cycle.is_error, Some(true));
    assert!(text(&cycle).contains("in a circle"), "{}", text(&cycle));
    let got = client
        .call_tool(call("task_get", json!({"taskId": "1"})))
        .await
        .unwrap();
    let got: Value = serde_json::from_str(&text(&got)).unwrap();
    assert_eq!(got["task"]["blocks"], json!(["2"]));
    let list = client
        .call_tool(call("task_list", json!({})))
        .await
        .unwrap();
    let list: Value = serde_json::from_str(&text(&list)).unwrap();
    assert_eq!(list["tasks"].as_array().unwrap().len(), 2);
    // plan_write is not offered on a tasks-only server.
    assert!(
        client
            .call_tool(call("plan_write", json!({})))
            .await
            .is_err()
    );
    client.cancel().await.unwrap();
    let history = history(&db, "tasks-test");
    assert_eq!(
        history.lines().count(),
        5,
        "started, two creates, an edge, one refusal; reads write nothing:\n{history}"
    );
    assert!(history.contains("rejected: dependency_cycle"), "{history}");
}

#[tokio::test(flavor = "current_thread")]
async fn two_servers_on_one_task_list_both_land_every_update() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planlog.redb");
    let a = std::sync::Arc::new(task_server(&db, "team").await);
    let b = std::sync::Arc::new(task_server(&db, "team").await);
    // Both agents create tasks at once, many times: every call lands, ids never clash.
    let mut calls = tokio::task::JoinSet::new();
    for (who, client) in [("a", &a), ("b", &b)] {
        for i in 0..15 {
            let client = std::sync::Arc::clone(client);
            calls.spawn(async move {
                let request = CallToolRequestParams::new("task_create")
                    .with_arguments(args(json!({"subject": format!("{who}{i}")})));
                client.call_tool(request).await
            });
        }
    }
    while let Some(r) = calls.join_next().await {
        let r = r.unwrap().unwrap();
        assert_eq!(r.is_error, Some(false), "{}", text(&r));
    }
    // Both update the same task at the same moment: both land, in some order.
    let update = |v: Value| CallToolRequestParams::new("task_update").with_arguments(args(v));
    let (x, y) = tokio::join!(
        a.call_tool(update(json!({"taskId": "1", "owner": "agent-a"}))),
        b.call_tool(update(json!({"taskId": "1", "status": "in_progress"})))
    );
    assert_eq!(x.unwrap().is_error, Some(false));
    assert_eq!(y.unwrap().is_error, Some(false));
    let list = b
        .call_tool(CallToolRequestParams::new("task_list").with_arguments(args(json!({}))))
        .await
        .unwrap();
    let list: Value = serde_json::from_str(&text(&list)).unwrap();
    let tasks = list["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 30, "{list}");
    let mut ids: Vec<u64> = tasks
        .iter()
        .map(|t| t["id"].as_str().unwrap().parse().unwrap())
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (1..=30).collect::<Vec<u64>>());
    let one = tasks.iter().find(|t| t["id"] == "1").unwrap();
    assert_eq!(
        (one["owner"].as_str(), one["status"].as_str()),
        (Some("agent-a"), Some("in_progress"))
    );
    for client in [a, b] {
        std::sync::Arc::into_inner(client)
            .unwrap()
            .cancel()
            .await
            .unwrap();
    }
    let verify = std::process::Command::new(env!("CARGO_BIN_EXE_planlog"))
        .arg("--db")
        .arg(&db)
        .arg("verify")
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stdout)
    );
}

/// While another process holds the store's journal (a long import's streamed batch holds it
/// for the whole batch), a plan_write waits for it, but the server goes on answering what
/// needs no store: `ping` and `tools/list` come back while the lock is held. (A server that
/// stops answering is killed by its client.) Held past the server's wait, the write is
/// answered from memory, said to be unsaved, and stored by the next call.
#[test]
fn a_server_answers_while_another_process_holds_the_journal() {
    use std::time::Duration;

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planlog.redb");
    let mut server = Mcp::serve(&db, "held", dir.path().join("server.err"));
    let (error, text) = server.call(json!(1), "plan_write", parser_plan("pending"));
    assert!(!error, "{text}");

    // Another process's lock on the journal, as a streamed batch holds it.
    let journal = hold_journal(&db);
    let call = |id: u64, method: &str, params: Value| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    server.send(&call(
        2,
        "tools/call",
        json!({"name": "plan_write", "arguments": parser_plan("in_progress")}),
    ));
    server.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}));
    server.send(&call(4, "tools/list", json!({})));
    assert!(
        server
            .answer_within(&json!(3), Duration::from_secs(10))
            .is_some(),
        "no answer to ping while the journal is held"
    );
    let listed = server
        .answer_within(&json!(4), Duration::from_secs(10))
        .expect("no answer to tools/list while the journal is held");
    assert_eq!(listed["result"]["tools"][0]["name"], "plan_write");
    assert!(
        !server.answered(&json!(2)),
        "the write was answered while the journal was held"
    );
    // Held longer than the server waits for it (5 s), the write is answered without the
    // store: kept in memory, and the model told so.
    let waiting = server
        .answer_within(&json!(2), Duration::from_secs(20))
        .expect("no answer to the write while the journal stayed held");
    assert_eq!(waiting["result"]["isError"], true, "{waiting}");
    let text = waiting["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("could not be saved to disk yet") && text.contains("locked"),
        "{text}"
    );
    assert!(text.contains("in_progress"), "the plan shown: {text}");
    // Once the lock is let go, the next call stores the one kept in memory, then itself.
    journal.unlock().unwrap();
    assert!(!history(&db, "held").contains("in_progress"));
    let (error, text) = server.call(json!(5), "plan_write", parser_plan("completed"));
    assert!(!error, "{text}");
    assert_eq!(server.stop().0, 0);
    let shown = history(&db, "held");
    let (kept, next) = (
        shown.find("in_progress").expect("the kept write is stored"),
        shown.find("completed").expect("the next write is stored"),
    );
    assert!(kept < next, "stored in the order written: {shown}");
}

/// A server closes its store before it exits: the session's thread holds the store too and
/// lets go of it only once the server is gone, and a process that ends while that thread
/// still closes it leaves the index marked open in its file (redb then refuses a read-only
/// handle, and the next writer repairs the whole file: seconds on a large store).
#[test]
fn a_server_leaves_its_index_closed_when_it_exits() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planlog.redb");
    for round in 0..10 {
        let mut server = Mcp::serve(&db, "closed", dir.path().join("server.err"));
        let status = ["pending", "in_progress"][round % 2];
        let (error, text) = server.call(json!(1), "plan_write", parser_plan(status));
        assert!(!error, "{text}");
        let (code, said) = server.stop();
        assert_eq!(code, 0, "{said}");
        assert!(
            common::catch_up::index_closed_cleanly(&db),
            "round {round}: the index was left open in its file"
        );
    }
}

/// A server on a store that needs long work before it can serve (here its index, lost, to be
/// rebuilt from 5 MB of journal, more than a server does before answering; the journal held
/// meanwhile by another process, as a long import holds it) answers its client at once:
/// an agent gives a starting server a few seconds (Codex: 10) and an upgrade or rebuild of a
/// long history takes longer. `initialize` and `tools/list` come back; a plan_write waits for
/// the store and is stored once the work is done. (Before, the server waited 5 s for the
/// lock and exited 2.)
#[test]
fn a_server_on_a_store_that_needs_long_work_answers_at_once_and_its_calls_wait_for_it() {
    use std::time::{Duration, Instant};

    use planlog_store::JournaledLog;

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planlog.redb");
    common::catch_up::index_lost_over_a_long_journal(&db);
    let journal = hold_journal(&db);

    let started = Instant::now();
    let stderr = dir.path().join("server.err");
    let mut server = Mcp::serve(&db, "waits", stderr.clone());
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "initialize answered after {:?}",
        started.elapsed()
    );
    let listed = server.request(json!(1), "tools/list", json!({}));
    assert_eq!(listed["result"]["tools"][0]["name"], "plan_write");
    server.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "plan_write", "arguments": parser_plan("pending")}}));
    std::thread::sleep(Duration::from_millis(1_500));
    assert!(
        !server.answered(&json!(2)),
        "the write was answered before the store was open"
    );
    journal.unlock().unwrap();
    drop(journal);
    let answer = server
        .answer_within(&json!(2), Duration::from_secs(30))
        .expect("no answer to the write once the store could open");
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    let (error, text) = server.call(json!(3), "plan_write", parser_plan("in_progress"));
    assert!(!error, "{text}");
    let (code, said) = server.stop();
    assert_eq!(code, 0, "{said}");
    assert!(
        said.contains("needs its index built from") && said.contains("the store is open"),
        "{said}"
    );
    let shown = history(&db, "waits");
    assert!(
        shown.contains("pending") && shown.contains("pending -> in_progress"),
        "{shown}"
    );
    assert!(
        common::catch_up::index_closed_cleanly(&db),
        "the server left the index open in its file"
    );
    let log = JournaledLog::options().read_only(true).open(&db).unwrap();
    assert_eq!(
        log.sessions().unwrap().len(),
        2,
        "the long history and the served session"
    );
}

/// A disk that fills and frees under a server still opening its store (a store of the
/// older layout, to upgrade: its journal written whole; the server's files may not grow
/// past 1 MB, as on a full disk): each call meanwhile is told why nothing was recorded,
/// and the server tries again until it can; once the disk frees up, the store is upgraded,
/// calls are stored, and the index is left closed.
#[test]
fn a_server_whose_store_cannot_be_opened_for_want_of_room_tries_again_until_it_can() {
    use std::time::{Duration, Instant};

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planlog.redb");
    planlog_store::RedbLog::open(&db)
        .unwrap()
        .append_all(&common::catch_up::long_history())
        .unwrap();
    let command = common::under_file_size_limit(&db, 1_000_000, &["mcp", "--session", "room"]);
    let mut server = Mcp::start(command, dir.path().join("server.err"));
    let (error, text) = server.call(json!(1), "plan_write", parser_plan("pending"));
    assert!(error, "{text}");
    assert!(
        text.contains("could not be opened") && text.contains("tries again every 5 s"),
        "{text}"
    );
    common::lift_file_size_limit(server.child.id());
    let until = Instant::now() + Duration::from_secs(30);
    let mut id = 2;
    let stored = loop {
        let (error, text) = server.call(json!(id), "plan_write", parser_plan("pending"));
        if !error {
            break text;
        }
        assert!(Instant::now() < until, "still not stored: {text}");
        id += 1;
        std::thread::sleep(Duration::from_millis(500));
    };
    assert!(stored.contains("pending"), "{stored}");
    let (code, said) = server.stop();
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("trying again every 5 s"), "{said}");
    assert!(
        history(&db, "room").contains("\"Write the parser\": new pending"),
        "{}",
        history(&db, "room")
    );
    assert!(common::catch_up::index_closed_cleanly(&db));
    assert_eq!(planlog_on(&db, "verify").status.code(), Some(0));
}

/// A server whose client goes away while the journal is still held keeps its unsaved call
/// in the spool beside the store (never lost with the process); `planlog verify` reports it,
/// `planlog drain` stores it once, with the time it was made, and the next server on the
/// store finds it stored already when a crash kept it in the spool after storing it.
#[test]
fn a_server_that_exits_with_the_journal_held_keeps_its_unsaved_call_for_the_next() {
    use std::time::Duration;

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planlog.redb");
    let spool = dir.path().join("planlog.redb.mcp-spool");
    let mut server = Mcp::serve(&db, "spooled", dir.path().join("a.err"));
    let (error, text) = server.call(json!(1), "plan_write", parser_plan("pending"));
    assert!(!error, "{text}");

    let journal = hold_journal(&db);
    let made = std::time::SystemTime::now();
    server.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "plan_write", "arguments": parser_plan("in_progress")}}));
    let waiting = server
        .answer_within(&json!(2), Duration::from_secs(20))
        .expect("no answer to the write while the journal stayed held");
    let answered = std::time::SystemTime::now();
    assert!(
        waiting["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("could not be saved to disk yet"),
        "{waiting}"
    );
    // The client goes away while the journal is still held.
    let (code, stderr) = server.stop();
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("1 plan calls could not be stored") && stderr.contains("mcp-spool"),
        "{stderr}"
    );
    journal.unlock().unwrap();
    drop(journal);
    assert!(!history(&db, "spooled").contains("in_progress"));

    // verify says the record is not complete, and how to finish it.
    let out = planlog_on(&db, "verify");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("1 plan calls of planlog mcp servers wait") && said.contains("spooled"),
        "{said}"
    );

    // A crash between storing and forgetting is played by keeping a copy of the spool.
    let copy = std::fs::read(&spool).unwrap();
    let out = planlog_on(&db, "drain");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shown = history(&db, "spooled");
    assert_eq!(
        shown.matches("pending -> in_progress").count(),
        1,
        "{shown}"
    );
    // Recorded at the time the server decided it (after its wait for the lock, before its
    // answer), not the time it was drained (over 5 s later: the server's close waited too).
    let log = planlog_store::JournaledLog::open(&db).unwrap();
    let events = log
        .read(
            &planlog_core::SessionId::new("spooled").unwrap(),
            planlog_core::Seq::FIRST,
            None,
        )
        .unwrap();
    assert_eq!(events.len(), 3);
    let ms = |t: std::time::SystemTime| {
        t.duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
    };
    let at = events[2].at.as_millis();
    assert!(
        (ms(made)..=ms(answered)).contains(&at),
        "sent at {}, answered at {}, recorded at {at}",
        ms(made),
        ms(answered)
    );
    drop(log);
    std::fs::write(&spool, copy).unwrap();

    // The next server stores what waits before it serves: found stored already, forgotten.
    let mut next = Mcp::serve(&db, "spooled", dir.path().join("b.err"));
    let (error, text) = next.call(json!(1), "plan_write", parser_plan("completed"));
    assert!(!error, "{text}");
    let (code, stderr) = next.stop();
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("stored 1 plan calls that waited"),
        "{stderr}"
    );
    let shown = history(&db, "spooled");
    assert_eq!(
        shown.matches("pending -> in_progress").count(),
        1,
        "{shown}"
    );
    let (kept, next) = (
        shown.find("pending -> in_progress").unwrap(),
        shown.find("in_progress -> completed").unwrap(),
    );
    assert!(kept < next, "{shown}");
    let out = planlog_on(&db, "verify");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// A plan_write's and a task call's arguments are recorded as the client sent them (its
/// spacing, its key order, its escapes), not as a parse of them written out again; and the
/// calls are decided on what they say.
#[test]
fn tool_arguments_are_recorded_as_the_client_sent_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planlog.redb");
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_planlog"));
    c.arg("--db").arg(&db).env_remove("PLANLOG_DB").args([
        "mcp",
        "--session",
        "as-sent",
        "--tools",
        "all",
    ]);
    let mut mcp = Mcp::start(c, dir.path().join("stderr"));
    let plan = r#"{ "steps" : [ {"status":"in_progress",  "content":"Write the parser \u00e9", "id":"a"} ] }"#;
    let task = r#"{"subject":"Ship \"it\"","description":"x"}"#;
    for (id, name, arguments) in [(1, "plan_write", plan), (2, "task_create", task)] {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{arguments}}}}}"#
        );
        mcp.stdin.write_all(line.as_bytes()).unwrap();
        mcp.stdin.write_all(b"\n").unwrap();
        mcp.stdin.flush().unwrap();
        let answer = mcp.answer_within(&json!(id), std::time::Duration::from_secs(30));
        let answer = answer.expect("an answer");
        assert_eq!(answer["result"]["isError"], false, "{answer}");
    }
    let (code, stderr) = mcp.stop();
    assert_eq!(code, 0, "{stderr}");
    let log = planlog_store::JournaledLog::options().open(&db).unwrap();
    let session = planlog_core::SessionId::new("as-sent").unwrap();
    let events = log.read(&session, planlog_core::Seq::FIRST, None).unwrap();
    let sent: Vec<(String, String)> = events
        .iter()
        .filter_map(|e| match &e.body {
            planlog_core::events::EventBody::PlanWritten(w) => w.tool_call.as_ref(),
            _ => None,
        })
        .map(|c| (c.tool.clone(), c.arguments.clone()))
        .collect();
    assert_eq!(
        sent,
        [
            ("plan_write".to_owned(), plan.to_owned()),
            ("task_create".to_owned(), task.to_owned())
        ]
    );
    let last = planlog_core::fold(&events).plan;
    let contents: Vec<&str> = last.items().iter().map(|i| i.content.as_str()).collect();
    assert_eq!(contents, ["Write the parser é", "Ship \"it\""]);
}
