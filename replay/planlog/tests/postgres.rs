//! The `planlog` command on a PostgreSQL store (`--db postgres://…`), each test on a fresh
//! database of the test server (`.ci/with-postgres`; without it each test says SKIPPED):
//! every command answers as on a file store, `copy` moves sessions both ways byte for byte and
//! refuses other content, the hooks and the MCP server record there, and each failure a user
//! meets (the server unreachable, a permission missing, a newer planlog's tables, an unknown
//! scheme) is a one-line error naming the store, never its password, with nothing written.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use planlog_tests::TempPg;
use serde_json::{Value, json};

mod common;
use common::Planlog;

/// `text` with `id` and every timestamp replaced, to compare two stores' answers.
fn same_shape(text: &str, id: &str) -> String {
    let text = text.replace(id, "<id>");
    let times = regex::Regex::new(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z").unwrap();
    times.replace_all(&text, "<time>").into_owned()
}

/// The ids `planlog sessions --json` lists (one object per line).
fn session_ids(p: &Planlog) -> Vec<String> {
    p.ok(&["sessions", "--json", "--oldest-first"])
        .lines()
        .map(|line| {
            let v: Value = serde_json::from_str(line).unwrap();
            v["id"].as_str().unwrap().to_owned()
        })
        .collect()
}

#[test]
fn every_command_answers_on_postgres_as_on_a_file() {
    let Some(db) = TempPg::new() else {
        return;
    };
    let (pg, file) = (Planlog::on(&db.url), Planlog::new());
    let (a, b) = (pg.sample(), file.sample());
    for args in [
        vec!["show"],
        vec!["show", "--json"],
        vec!["show", "--at", "3"],
        vec!["show", "--inject"],
        vec!["history"],
        vec!["items"],
        vec!["replay"],
        vec!["diff", "2", "5"],
        vec!["export", "--format", "markdown"],
    ] {
        let on = |p: &Planlog, id: &str| {
            let mut all = vec![args[0], id];
            all.extend(&args[1..]);
            same_shape(&p.ok(&all), id)
        };
        assert_eq!(on(&pg, &a), on(&file, &b), "planlog {args:?}");
    }
    // A fork, listed under its parent; verify is clean; a delete retires the id.
    let fork = pg.ok(&["fork", &a, "--at", "3"]).trim().to_owned();
    assert_eq!(
        same_shape(&pg.ok(&["show", &fork, "--json"]), &fork),
        same_shape(&pg.ok(&["show", &a, "--at", "3", "--json"]), &a)
    );
    assert_eq!(session_ids(&pg), vec![a.clone(), fork.clone()]);
    assert!(pg.ok(&["sessions"]).contains(&fork));
    assert!(
        pg.ok(&["verify"]).contains(" 0 problems"),
        "verify is clean"
    );
    pg.ok(&["delete", &fork, "--yes"]);
    assert_eq!(session_ids(&pg), vec![a.clone()]);
    let step = json!({"steps": [{"id": "1", "content": "reuse", "status": "pending"}]});
    let reused = pg.write(&fork, "reuse", step);
    assert_eq!(
        reused.code, 2,
        "a deleted id is not reused: {}",
        reused.stdout
    );
    assert!(reused.stderr.contains("was deleted"), "{}", reused.stderr);
    // The demo runs on it too.
    let demo = pg.run(&["demo"], None);
    assert_eq!(demo.code, 0, "{}", demo.stderr);
    assert!(
        session_ids(&pg).len() >= 3,
        "the demo's sessions are listed"
    );
    assert_eq!(pg.run(&["verify"], None).code, 0);
}

/// Every session's canonical events (`export --format jsonl`), by id.
fn exports(p: &Planlog) -> Vec<(String, String)> {
    session_ids(p)
        .into_iter()
        .map(|id| {
            let events = p.ok(&["export", &id, "--format", "jsonl"]);
            (id, events)
        })
        .collect()
}

#[test]
fn copy_moves_every_session_to_postgres_and_back_byte_for_byte() {
    let Some(db) = TempPg::new() else {
        return;
    };
    let (source, pg, back) = (Planlog::new(), Planlog::on(&db.url), Planlog::new());
    assert_eq!(source.run(&["demo"], None).code, 0);
    source.sample();
    let from = source.store_arg();
    let to_pg = pg.run(&["copy", "--from", &from, "--to", &db.url], None);
    assert_eq!(to_pg.code, 0, "{}", to_pg.stderr);
    let to_file = back.run(
        &["copy", "--from", &db.url, "--to", &back.store_arg()],
        None,
    );
    assert_eq!(to_file.code, 0, "{}", to_file.stderr);
    let original = exports(&source);
    assert!(original.len() >= 3, "the demo's sessions and the sample");
    assert_eq!(exports(&pg), original, "file -> postgres: same events");
    assert_eq!(exports(&back), original, "postgres -> file: same events");
    for p in [&source, &pg, &back] {
        let r = p.run(&["verify"], None);
        assert_eq!(r.code, 0, "verify after copy: {}{}", r.stdout, r.stderr);
    }
    // Copying again changes nothing; a session grown at the source brings only what is new.
    let id = original.last().unwrap().0.clone();
    let step =
        json!({"steps": [{"id": "9", "content": "Written after the copy", "status": "pending"}]});
    assert_eq!(source.write(&id, "late", step).code, 0);
    let again = pg.run(&["copy", "--from", &from, "--to", &db.url], None);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(exports(&pg), exports(&source));
}

#[test]
fn copy_refuses_a_session_the_destination_holds_with_other_content() {
    let Some(db) = TempPg::new() else {
        return;
    };
    let (source, pg) = (Planlog::new(), Planlog::on(&db.url));
    let id = source.sample();
    assert_eq!(
        pg.run(
            &["copy", "--from", &source.store_arg(), "--to", &db.url],
            None
        )
        .code,
        0
    );
    // Both sides go on differently from the same prefix.
    let step = |c: &str| json!({"steps": [{"id": "9", "content": c, "status": "pending"}]});
    assert_eq!(source.write(&id, "x", step("at the source")).code, 0);
    assert_eq!(pg.write(&id, "y", step("in the database")).code, 0);
    let before = exports(&pg);
    let r = pg.run(
        &["copy", "--from", &source.store_arg(), "--to", &db.url],
        None,
    );
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains(&id), "names the session: {}", r.stderr);
    assert_eq!(exports(&pg), before, "the destination is unchanged");
}

#[test]
fn the_hooks_record_to_postgres_and_restore_from_it() {
    let Some(db) = TempPg::new() else {
        return;
    };
    let pg = Planlog::on(&db.url);
    let sid = "0d5e7a1c-0000-4000-8000-0000000000p9";
    let base = json!({
        "session_id": sid,
        "transcript_path": format!("/home/u/.claude/projects/-w/{sid}.jsonl"),
        "cwd": "/w",
        "permission_mode": "default",
    });
    let todos = json!([
        {"content": "Read the schema", "status": "in_progress", "activeForm": "Reading the schema"},
        {"content": "Write the migration", "status": "pending", "activeForm": "Writing the migration"}
    ]);
    let mut post = base.clone();
    post["hook_event_name"] = json!("PostToolUse");
    post["tool_name"] = json!("TodoWrite");
    post["tool_use_id"] = json!("toolu_01");
    post["tool_input"] = json!({"todos": todos});
    post["tool_response"] = json!({"oldTodos": [], "newTodos": todos});
    let r = pg.hook(&post, &[], &[]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{}", r.stdout);
    let session = format!("cc-{sid}");
    let plan: Value = serde_json::from_str(&pg.ok(&["show", &session, "--json"])).unwrap();
    assert_eq!(plan[0]["content"], "Read the schema");
    assert_eq!(plan[0]["status"], "in_progress");
    // After a compaction, the plan comes back from the database.
    let mut start = base.clone();
    start["hook_event_name"] = json!("SessionStart");
    start["source"] = json!("compact");
    let context = pg.hook(&start, &[], &[]).context();
    for line in [
        "Progress: 0 of 2 done (1 in progress, 1 pending).",
        "[>] Read the schema",
        "[ ] Write the migration",
    ] {
        assert!(context.contains(line), "{context}");
    }
}

#[test]
fn the_mcp_server_records_to_postgres() {
    let Some(db) = TempPg::new() else {
        return;
    };
    let pg = Planlog::on(&db.url);
    let mut server = pg
        .command()
        .args(["mcp", "--session", "mcp-on-pg"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = server.stdin.take().unwrap();
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let send = |stdin: &mut std::process::ChildStdin, v: Value| writeln!(stdin, "{v}").unwrap();
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}}),
    );
    let init: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(init["id"], 1, "{init}");
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "plan_write",
        "arguments": {"steps": [{"id": "1", "content": "Ship it", "status": "in_progress"}]}}}),
    );
    let reply = loop {
        let v: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
        if v["id"] == 2 {
            break v;
        }
    };
    assert_eq!(reply["result"]["isError"], false, "{reply}");
    drop(stdin);
    assert!(server.wait().unwrap().success());
    let plan: Value = serde_json::from_str(&pg.ok(&["show", "mcp-on-pg", "--json"])).unwrap();
    assert_eq!(plan[0]["content"], "Ship it");
}

#[test]
fn an_unreachable_server_is_a_one_line_error_without_the_password() {
    // Nothing listens on port 1 of the loopback.
    let url = "postgres://planlog:sekrit@127.0.0.1:1/planlog";
    let p = Planlog::on(url);
    for args in [vec!["sessions"], vec!["new"], vec!["show", "x"]] {
        let r = p.run(&args, None);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert_eq!(r.stderr.trim_end().lines().count(), 1, "{}", r.stderr);
        assert!(
            r.stderr.contains("postgres://planlog@127.0.0.1:1/planlog"),
            "names the store: {}",
            r.stderr
        );
        assert!(r.stderr.contains("refused"), "says why: {}", r.stderr);
        assert!(!r.stderr.contains("sekrit"), "{}", r.stderr);
    }
}

#[test]
fn a_missing_permission_is_a_clear_error_and_writes_nothing() {
    let Some(db) = TempPg::new() else {
        return;
    };
    let owner = Planlog::on(&db.url);
    let id = owner.sample();
    let before = exports(&owner);
    // A role that may read planlog's tables and nothing more: reads work, writes are refused.
    let role = db.role("reader");
    db.execute(&format!(
        "GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}"
    ));
    let reader = Planlog::on(&db.url_as(&role, "sekrit"));
    assert_eq!(
        same_shape(&reader.ok(&["show", &id]), &id),
        same_shape(&owner.ok(&["show", &id]), &id)
    );
    let step = json!({"steps": [{"id": "9", "content": "not allowed", "status": "pending"}]});
    let r = reader.write(&id, "denied", step);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("permission denied"), "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!("{role}@")),
        "names the store: {}",
        r.stderr
    );
    assert!(!r.stderr.contains("sekrit"), "{}", r.stderr);
    assert_eq!(exports(&owner), before, "nothing written");
    // A role that may not even create planlog's tables, on a database without them.
    let Some(empty) = TempPg::new() else {
        return;
    };
    let role = empty.role("nobody");
    let nobody = Planlog::on(&empty.url_as(&role, "sekrit"));
    let r = nobody.run(&["new"], None);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(r.stderr.contains("permission denied"), "{}", r.stderr);
    assert!(!r.stderr.contains("sekrit"), "{}", r.stderr);
}

#[test]
fn tables_of_a_newer_planlog_are_refused_untouched() {
    let Some(db) = TempPg::new() else {
        return;
    };
    let p = Planlog::on(&db.url);
    p.sample();
    db.execute("INSERT INTO planlog_migrations (version) VALUES (99)");
    for args in [vec!["sessions"], vec!["new"]] {
        let r = p.run(&args, None);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stdout);
        assert!(r.stderr.contains("99"), "says which version: {}", r.stderr);
        assert!(r.stderr.contains("newer"), "{}", r.stderr);
    }
    db.execute("DELETE FROM planlog_migrations WHERE version = 99");
    assert_eq!(session_ids(&p).len(), 1, "nothing was changed");
}

#[test]
fn an_unknown_scheme_is_refused_with_the_schemes_planlog_knows() {
    let p = Planlog::on("mysql://root@localhost/plans");
    let r = p.run(&["sessions"], None);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(r.stderr.contains("mysql://"), "{}", r.stderr);
    assert!(r.stderr.contains("postgres://"), "{}", r.stderr);
    assert!(
        !p.dir.path().join("mysql:").exists() && !std::path::Path::new("mysql:").exists(),
        "no file was created for it"
    );
}

#[test]
fn a_hook_spools_what_it_cannot_store_while_the_server_is_down_and_drains_it_after() {
    let Some(cluster) = planlog_tests::OwnCluster::start() else {
        return;
    };
    let pg = Planlog::on(&cluster.url);
    let sid = "0d5e7a1c-0000-4000-8000-00000000d0wn";
    let call = |n: usize, list: &[(&str, &str)]| {
        let todos: Vec<Value> = list
            .iter()
            .map(|(c, s)| json!({"content": c, "status": s, "activeForm": format!("Doing: {c}")}))
            .collect();
        json!({
            "session_id": sid, "transcript_path": "/t.jsonl", "cwd": "/w",
            "permission_mode": "default", "hook_event_name": "PostToolUse",
            "tool_name": "TodoWrite", "tool_use_id": format!("toolu_{n}"),
            "tool_input": {"todos": todos},
            "tool_response": {"oldTodos": [], "newTodos": todos},
        })
    };
    let lists: [&[(&str, &str)]; 3] = [
        &[("Plan", "in_progress"), ("Build", "pending")],
        &[("Plan", "completed"), ("Build", "in_progress")],
        &[
            ("Plan", "completed"),
            ("Build", "completed"),
            ("Ship", "pending"),
        ],
    ];
    let r = pg.hook(&call(0, lists[0]), &[], &[]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    cluster.kill();
    let r = pg.hook(&call(1, lists[1]), &[], &[]);
    assert_eq!(r.code, 0, "a hook never breaks the agent: {}", r.stderr);
    assert!(
        r.stderr.contains("waits in"),
        "says where it kept it: {}",
        r.stderr
    );
    assert!(!r.stderr.contains("lost"), "{}", r.stderr);
    cluster.start_server();
    let r = pg.hook(&call(2, lists[2]), &[], &[]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "drained and stored");
    let session = format!("cc-{sid}");
    assert_eq!(
        pg.call_ids(&session),
        ["toolu_0", "toolu_1", "toolu_2"],
        "in the order they ran"
    );
    let plan: Value = serde_json::from_str(&pg.ok(&["show", &session, "--json"])).unwrap();
    assert_eq!(plan.as_array().unwrap().len(), 3);
    assert_eq!(pg.run(&["verify"], None).code, 0);
}

#[test]
fn a_hook_does_not_wait_for_a_transaction_holding_its_sessions_row() {
    let Some(db) = TempPg::new() else {
        return;
    };
    let pg = Planlog::on(&db.url);
    let sid = "0d5e7a1c-0000-4000-8000-0000000010ck";
    let call = |n: usize, item: &str| {
        json!({"session_id": sid, "hook_event_name": "PostToolUse", "tool_name": "TodoWrite", "tool_use_id": format!("toolu_{n}"),
            "tool_input": {"todos": [{"content": item, "status": "in_progress", "activeForm": item}]}, "tool_response": {}})
    };
    assert_eq!(pg.hook(&call(0, "One"), &[], &[]).code, 0);
    // Another client (a long import, say) holds the session's head row.
    let held = db.hold(&format!(
        "SELECT * FROM planlog_sessions WHERE session = 'cc-{sid}' FOR UPDATE"
    ));
    let started = std::time::Instant::now();
    let r = pg.hook(&call(1, "Two"), &[], &[]);
    let took = started.elapsed();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("waits in"),
        "spooled, not waited for: {}",
        r.stderr
    );
    assert!(
        took < std::time::Duration::from_millis(1500),
        "the hook took {took:?}"
    );
    drop(held);
    assert_eq!(pg.hook(&call(2, "Three"), &[], &[]).code, 0);
    let history = pg.ok(&["history", &format!("cc-{sid}")]);
    let at: Vec<usize> = ["[toolu_0]", "[toolu_1]", "[toolu_2]"]
        .iter()
        .map(|c| history.find(c).unwrap())
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{history}");
}
