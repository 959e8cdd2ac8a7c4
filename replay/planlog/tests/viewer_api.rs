//! `planlog ui` without a browser: the JSON API, and the security rules tried with requests
//! that break them (another Host, a write from another origin or without the token, a
//! read-only viewer, bad ids and seqs, store text that looks like markup).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

mod common;
use common::Planlog;

/// A running `planlog ui`.
struct Viewer {
    child: Child,
    port: u16,
}

impl Drop for Viewer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn viewer(p: &Planlog, extra: &[&str]) -> Viewer {
    let mut child = p
        .command()
        .args(["ui", "--port", "0"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(p.dir.path().join("ui.err")).unwrap())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .trim()
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches('/')
        .parse()
        .unwrap();
    Viewer { child, port }
}

struct Reply {
    status: u16,
    headers: String,
    body: String,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

/// One raw HTTP/1.1 request (so every header is ours to set, or to forge).
fn request(port: u16, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut text = format!(
        "{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        text.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    for (k, v) in headers {
        text.push_str(&format!("{k}: {v}\r\n"));
    }
    text.push_str("\r\n");
    text.push_str(body);
    stream.write_all(text.as_bytes()).unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    // The answers are small: un-chunk if needed.
    let body = if head.to_lowercase().contains("transfer-encoding: chunked") {
        let mut out = String::new();
        let mut rest = body;
        while let Some((size, after)) = rest.split_once("\r\n") {
            let n = usize::from_str_radix(size.trim(), 16).unwrap();
            if n == 0 {
                break;
            }
            out.push_str(&after[..n]);
            rest = &after[n + 2..];
        }
        out
    } else {
        body.to_owned()
    };
    Reply {
        status,
        headers: head.to_lowercase(),
        body,
    }
}

fn get(port: u16, path: &str) -> Reply {
    request(port, "GET", path, &[], "")
}

/// The token the page carries.
fn token(port: u16) -> String {
    let page = get(port, "/").body;
    let at = page.find("name=\"planlog-token\" content=\"").unwrap() + 30;
    page[at..at + 26].to_owned()
}

/// `planlog sessions --json` (one object per line).
fn listed(p: &Planlog) -> Vec<Value> {
    p.ok(&["sessions", "--json", "--oldest-first"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The demo's session ids (main, fork).
fn demo(p: &Planlog) -> (String, String) {
    p.ok(&["demo"]);
    let ids: Vec<String> = listed(p)
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_owned())
        .collect();
    (ids[0].clone(), ids[1].clone())
}

/// The hits of a search, once the index holds every event of the store (it catches up in
/// the background; the answer says how far it is).
fn search(port: u16, q: &str) -> Vec<Value> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let r = get(port, &format!("/api/search?q={q}"));
        assert_eq!(r.status, 200, "{}", r.body);
        let v = r.json();
        if v["indexed"] == v["events"] && v["events"].as_u64() > Some(0) {
            return v["hits"].as_array().unwrap().clone();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the index never caught up: {v}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn the_api_serves_sessions_events_and_plans_as_the_cli_prints_them() {
    let p = Planlog::new();
    let (main, fork) = demo(&p);
    let v = viewer(&p, &[]);
    let sessions = get(v.port, "/api/sessions").json();
    assert_eq!(sessions.as_array().unwrap().len(), 2);
    assert_eq!(
        sessions[1]["origin"],
        json!({"type": "fork", "parent": main, "at": 3})
    );
    let page = get(v.port, &format!("/api/sessions/{main}/events")).json();
    assert_eq!(
        (page["last"].as_u64(), page["from"].as_u64()),
        (Some(5), Some(1))
    );
    assert_eq!(page["plan_before"], json!([]));
    let events = page["events"].as_array().unwrap();
    assert_eq!(events.len(), 5);
    assert!(
        events
            .iter()
            .all(|e| e["seq"].is_u64() && e["kind"].is_string())
    );
    let rejected = events
        .iter()
        .find(|e| e["kind"] == "write_rejected")
        .unwrap();
    assert_eq!(rejected["code"], "bulk_completion");
    // The call as the agent sent it and the text the model read, beside what planlog derived.
    assert_eq!(rejected["call"]["tool"], "plan_write");
    assert_eq!(rejected["call"]["result"]["is_error"], true);
    assert_eq!(rejected["call"]["result"]["text"], rejected["message"]);
    let sent: Value =
        serde_json::from_str(rejected["call"]["arguments"].as_str().unwrap()).unwrap();
    assert!(sent["steps"].is_array(), "{sent}");
    assert!(rejected.get("result").is_none(), "no synthesized result");
    let written = events.iter().find(|e| e["kind"] == "plan_written").unwrap();
    assert_eq!(written["call"]["result"]["is_error"], false);
    assert!(written["submitted"].is_array() && written["semantics"] == "merge");
    for seq in 1..=5 {
        let api = get(v.port, &format!("/api/sessions/{main}/plan?at={seq}")).json();
        let cli: Value =
            serde_json::from_str(&p.ok(&["show", &main, "--json", "--at", &seq.to_string()]))
                .unwrap();
        assert_eq!(api, cli, "seq {seq}");
    }
    let now = get(v.port, &format!("/api/sessions/{fork}/plan")).json();
    assert_eq!(
        now,
        serde_json::from_str::<Value>(&p.ok(&["show", &fork, "--json"])).unwrap()
    );
    let hits = search(v.port, "table%20TESTS");
    assert!(
        hits.iter()
            .any(|h| h["session"] == main.as_str() && h["type"] == "item"),
        "{hits:?}"
    );
    let refused = search(v.port, "bulk%20completion");
    assert_eq!(
        (refused[0]["type"].as_str(), refused[0]["seq"].as_u64()),
        (Some("refusal"), Some(4)),
        "{refused:?}"
    );
    // A fork from the page's own origin, with its token.
    let t = token(v.port);
    let origin = format!("http://127.0.0.1:{}", v.port);
    let r = request(
        v.port,
        "POST",
        &format!("/api/sessions/{main}/fork"),
        &[
            ("Origin", &origin),
            ("X-Planlog-Token", &t),
            ("Content-Type", "application/json"),
        ],
        r#"{"at": 2, "label": "from the api"}"#,
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let new = r.json()["id"].as_str().unwrap().to_owned();
    let all = listed(&p);
    let created = all.iter().find(|s| s["id"] == new.as_str()).unwrap();
    assert_eq!(
        created["origin"],
        json!({"type": "fork", "parent": main, "at": 2})
    );
    assert_eq!(created["label"], "from the api");
}

#[test]
fn requests_that_break_the_rules_are_refused_with_json_and_write_nothing() {
    let p = Planlog::new();
    let (main, _) = demo(&p);
    let before = p.ok(&["sessions", "--json"]);
    let v = viewer(&p, &[]);
    // DNS rebinding: a page on another site reaching the port by a name of its own.
    for host in [
        "evil.example:80",
        &format!("evil.example:{}", v.port),
        "127.0.0.1:1",
    ] {
        let r = request(v.port, "GET", "/api/sessions", &[("Host", host)], "");
        assert_eq!(r.status, 403, "Host {host}");
        assert!(r.json()["error"].as_str().unwrap().contains("Host"));
    }
    assert_eq!(
        request(
            v.port,
            "GET",
            "/api/sessions",
            &[("Host", &format!("localhost:{}", v.port))],
            ""
        )
        .status,
        200
    );
    // Writes from another origin, without the token, or with a wrong one.
    let t = token(v.port);
    let own = format!("http://127.0.0.1:{}", v.port);
    let path = format!("/api/sessions/{main}/fork");
    let body = r#"{"at": 2}"#;
    for headers in [
        vec![],
        vec![
            ("Origin", "http://evil.example"),
            ("X-Planlog-Token", t.as_str()),
        ],
        vec![("Origin", own.as_str())],
        vec![
            ("Origin", own.as_str()),
            ("X-Planlog-Token", "01AAAAAAAAAAAAAAAAAAAAAAAA"),
        ],
    ] {
        let r = request(v.port, "POST", &path, &headers, body);
        assert_eq!(r.status, 403, "{headers:?}: {}", r.body);
    }
    // Bad ids, seqs and bodies: 400 or 404, JSON, never a crash.
    let ok = |h: &[(&str, &str)]| -> Vec<(String, String)> {
        h.iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    };
    let good = ok(&[("Origin", &own), ("X-Planlog-Token", &t)]);
    let good: Vec<(&str, &str)> = good.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    for (method, path, body, status) in [
        (
            "GET",
            "/api/sessions/has%20space/events".to_owned(),
            "",
            400,
        ),
        ("GET", "/api/sessions/nosuch/events".to_owned(), "", 404),
        ("GET", format!("/api/sessions/{main}/plan?at=0"), "", 400),
        ("GET", format!("/api/sessions/{main}/plan?at=abc"), "", 400),
        ("GET", format!("/api/sessions/{main}/plan?at=99"), "", 404),
        ("GET", "/api/search".to_owned(), "", 400),
        ("GET", "/api/nothing".to_owned(), "", 404),
        (
            "POST",
            format!("/api/sessions/{main}/fork"),
            "not json",
            400,
        ),
        (
            "POST",
            format!("/api/sessions/{main}/fork"),
            r#"{"at": 99}"#,
            404,
        ),
        (
            "POST",
            format!("/api/sessions/{main}/fork"),
            r#"{"at": -1}"#,
            400,
        ),
        (
            "POST",
            "/api/sessions/nosuch/fork".to_owned(),
            r#"{"at": 1}"#,
            404,
        ),
    ] {
        let r = request(
            v.port,
            method,
            &path,
            if method == "POST" { &good } else { &[] },
            body,
        );
        assert_eq!(r.status, status, "{method} {path} {body}: {}", r.body);
        assert!(r.json()["error"].is_string(), "{path}");
    }
    assert_eq!(p.ok(&["sessions", "--json"]), before, "nothing was written");
    // A read-only viewer offers no fork and refuses it.
    let ro = viewer(&p, &["--read-only"]);
    assert!(get(ro.port, "/").body.contains("content=\"read-only\""));
    let t = token(ro.port);
    let own = format!("http://127.0.0.1:{}", ro.port);
    let r = request(
        ro.port,
        "POST",
        &path,
        &[("Origin", &own), ("X-Planlog-Token", &t)],
        body,
    );
    assert_eq!(r.status, 403);
    assert!(r.json()["error"].as_str().unwrap().contains("read-only"));
    assert_eq!(p.ok(&["sessions", "--json"]), before);
}

#[test]
fn store_text_never_reaches_the_page_as_markup() {
    let p = Planlog::new();
    let hostile = "<img src=x onerror=alert(1)><script>alert(2)</script>";
    let id = p.ok(&["new", "--label", hostile]).trim().to_owned();
    let r = p.write(
        &id,
        "c1",
        json!({"steps": [{"id": "1", "content": hostile, "status": "in_progress"}]}),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = viewer(&p, &[]);
    let page = get(v.port, "/");
    assert!(
        page.headers
            .contains("content-security-policy: default-src 'none'; script-src 'self'"),
        "{}",
        page.headers
    );
    assert!(!page.headers.contains("unsafe-inline"));
    assert!(!page.body.contains("alert"), "the page holds no store data");
    let api = get(v.port, &format!("/api/sessions/{id}/events"));
    assert!(api.headers.contains("content-type: application/json"));
    assert!(
        api.body.contains("\\u003c") || api.body.contains("<img"),
        "data is JSON, shown as text by the page"
    );
    // The export inlines the data with every '<' escaped, under a hash-only CSP.
    let html = p.ok(&["export", &id, "--format", "html"]);
    assert!(
        !html.contains("<img") && !html.contains("<script>alert"),
        "the inlined data cannot open an element"
    );
    assert!(html.contains("script-src 'sha256-"));
}

/// Opens the live stream (`GET /api/stream`) and returns a channel of its `data:` lines.
fn stream(port: u16) -> std::sync::mpsc::Receiver<String> {
    let mut conn = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        conn,
        "GET /api/stream HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n\r\n"
    )
    .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(conn).lines() {
            let Ok(line) = line else { break };
            if let Some(data) = line.strip_prefix("data: ")
                && tx.send(data.to_owned()).is_err()
            {
                break;
            }
        }
    });
    rx
}

/// Sends Ctrl-C (SIGINT) and waits up to `within` for the viewer to exit; its exit code.
fn interrupt(v: &mut Viewer, within: std::time::Duration) -> Option<i32> {
    let ok = Command::new("kill")
        .args(["-INT", &v.child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
    let start = std::time::Instant::now();
    while start.elapsed() < within {
        if let Some(status) = v.child.try_wait().unwrap() {
            return status.code();
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    None
}

#[test]
fn ctrl_c_stops_the_viewer_even_with_a_live_page_open() {
    let p = Planlog::new();
    p.sample();
    let mut v = viewer(&p, &[]);
    let _live = stream(v.port);
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(
        interrupt(&mut v, std::time::Duration::from_secs(5)),
        Some(0),
        "the viewer did not stop within 5 s of Ctrl-C"
    );
}

#[test]
fn a_hook_call_reaches_the_live_stream_at_once() {
    // A hook appends to the journal alone (the index catches up once 16 records wait), so
    // the watcher must look at the journal: the index's file does not move. The catalogue
    // is read every 5 s whatever the files say, so three calls 1.5 s apart could not all
    // be seen in time through that alone.
    use common::claude::{post, session, todos};
    let p = Planlog::new();
    let call = |n: usize| {
        let status = |i: usize| if i < n { "completed" } else { "in_progress" };
        let list: Vec<(String, &str)> = (0..3).map(|i| (format!("Step {i}"), status(i))).collect();
        let list: Vec<(&str, &str)> = list.iter().map(|(c, s)| (c.as_str(), *s)).collect();
        let r = p.hook(
            &post("TodoWrite", &format!("toolu_{n}"), todos(&list), json!({})),
            &[],
            &[],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
    };
    call(0);
    let v = viewer(&p, &[]);
    let live = stream(v.port);
    std::thread::sleep(std::time::Duration::from_millis(300));
    // No other command runs meanwhile: one that opened the store could index it, and the
    // index's file would move.
    let mut before = 0;
    for n in 1..=3 {
        call(n);
        let message = live
            .recv_timeout(std::time::Duration::from_millis(1500))
            .unwrap_or_else(|_| panic!("hook call {n} was not announced within 1.5 s"));
        let message: Value = serde_json::from_str(&message).unwrap();
        assert_eq!(message["id"], session().as_str());
        let events = message["events"].as_u64().unwrap();
        assert!(events > before, "{message}");
        before = events;
    }
    let history = p.ok(&["history", &session(), "--json"]);
    assert_eq!(history.lines().count() as u64, before, "{history}");
}

#[test]
fn the_viewer_serves_a_postgres_store_and_follows_appends() {
    let Some(db) = planlog_tests::TempPg::new() else {
        return;
    };
    let p = Planlog::on(&db.url);
    let id = p.sample();
    let mut v = viewer(&p, &[]);
    let listed = get(v.port, "/api/sessions").json();
    assert_eq!(listed[0]["id"], id.as_str(), "{listed}");
    let plan = get(v.port, &format!("/api/sessions/{id}/plan?at=2")).json();
    assert_eq!(
        plan,
        serde_json::from_str::<Value>(&p.ok(&["show", &id, "--json", "--at", "2"])).unwrap()
    );
    let live = stream(v.port);
    std::thread::sleep(std::time::Duration::from_millis(300));
    let step = json!({"steps": [{"id": "5", "content": "Written elsewhere", "status": "pending"}]});
    assert_eq!(p.write(&id, "elsewhere", step).code, 0);
    let message = live
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("the live stream announced the append");
    let message: Value = serde_json::from_str(&message).unwrap();
    assert_eq!(message["id"], id.as_str());
    assert_eq!(message["events"], 6);
    assert_eq!(
        interrupt(&mut v, std::time::Duration::from_secs(5)),
        Some(0)
    );
    let stderr = std::fs::read_to_string(p.dir.path().join("ui.err")).unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// The summary once the index holds all of the session.
fn summary(port: u16, id: &str, buckets: u64) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let v = get(
            port,
            &format!("/api/sessions/{id}/summary?buckets={buckets}"),
        )
        .json();
        if v["indexed"] == v["last"] {
            return v;
        }
        assert!(std::time::Instant::now() < deadline, "never indexed: {v}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn a_long_session_is_served_a_window_at_a_time_with_its_marks_and_search() {
    let p = Planlog::new();
    let file = p.dir.path().join("long.jsonl");
    common::long_transcript(&file, 600);
    let id = p
        .ok(&["import", "claude-code", file.to_str().unwrap()])
        .trim()
        .to_owned();
    let history: Vec<Value> = p
        .ok(&["history", &id, "--json"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let last = history.len() as u64;
    let kinds = |kind: &str| -> Vec<u64> {
        history
            .iter()
            .filter(|h| h["kind"] == kind)
            .map(|h| h["seq"].as_u64().unwrap())
            .collect()
    };
    let refusals = kinds("write_rejected");
    let compactions = kinds("context_compacted");
    let flagged: Vec<u64> = history
        .iter()
        .filter(|h| h["flags"].as_array().is_some_and(|f| !f.is_empty()))
        .map(|h| h["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(
        (refusals.len(), compactions.len(), flagged.len()),
        (12, 1, 1)
    );
    let fork = p.ok(&["fork", &id, "--at", "100"]).trim().to_owned();
    let v = viewer(&p, &[]);

    // Windows: the default, one in the middle (with the plan before it), the maximum.
    let first = get(v.port, &format!("/api/sessions/{id}/events")).json();
    assert_eq!(first["events"].as_array().unwrap().len(), 200);
    assert_eq!(first["last"].as_u64(), Some(last));
    let mid = get(
        v.port,
        &format!("/api/sessions/{id}/events?from=250&limit=20"),
    )
    .json();
    let seqs: Vec<u64> = mid["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, (250..270).collect::<Vec<_>>());
    let cli: Value = serde_json::from_str(&p.ok(&["show", &id, "--json", "--at", "249"])).unwrap();
    assert_eq!(mid["plan_before"], cli);
    let most = get(
        v.port,
        &format!("/api/sessions/{id}/events?from=1&limit=5000"),
    )
    .json();
    assert_eq!(
        most["events"].as_array().unwrap().len(),
        1000.min(last as usize)
    );
    let tail = get(
        v.port,
        &format!("/api/sessions/{id}/events?from={last}&limit=10"),
    )
    .json();
    assert_eq!(tail["events"].as_array().unwrap().len(), 1);
    assert_eq!(
        get(
            v.port,
            &format!("/api/sessions/{id}/events?from={}", last + 1)
        )
        .status,
        404
    );
    assert_eq!(
        get(v.port, &format!("/api/sessions/{id}/events?from=x")).status,
        400
    );
    let one = get(v.port, &format!("/api/sessions/{id}")).json();
    assert_eq!(
        (one["events"].as_u64(), one["forks"][0]["id"].as_str()),
        (Some(last), Some(fork.as_str()))
    );

    // The summary: every mark counted in its bucket and listed where it is; the fork.
    let s = summary(v.port, &id, 10);
    let buckets = s["buckets"].as_array().unwrap();
    assert_eq!(buckets.len(), 10);
    assert_eq!(
        (buckets[0]["from"].as_u64(), buckets[9]["to"].as_u64()),
        (Some(1), Some(last))
    );
    let count = |kind: &str| {
        buckets
            .iter()
            .map(|b| b[kind].as_u64().unwrap())
            .sum::<u64>()
    };
    assert_eq!(
        (count("refusal"), count("compaction"), count("flag")),
        (12, 1, 1)
    );
    let size = buckets[0]["to"].as_u64().unwrap();
    for seq in &refusals {
        let b = &buckets[((seq - 1) / size) as usize];
        assert!(
            b["refusal"].as_u64().unwrap() >= 1,
            "refusal at {seq} not in {b}"
        );
    }
    let listed = |kind: &str| -> Vec<u64> {
        s["marks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["kind"] == kind)
            .map(|m| m["seq"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(listed("refusal"), refusals);
    assert_eq!(listed("compaction"), compactions);
    assert_eq!(listed("flag"), flagged);
    assert_eq!(s["forks"][0]["origin"]["at"], 100);

    // Next and previous refusal or flag, from anywhere.
    let mut wanted: Vec<u64> = refusals.iter().chain(&flagged).copied().collect();
    wanted.sort_unstable();
    let mark = |q: &str| {
        get(
            v.port,
            &format!("/api/sessions/{id}/marks?{q}&kinds=refusal,flag"),
        )
        .json()["mark"]
            .clone()
    };
    assert_eq!(mark("after=0")["seq"].as_u64(), Some(wanted[0]));
    assert_eq!(
        mark(&format!("after={}", wanted[0]))["seq"].as_u64(),
        Some(wanted[1])
    );
    assert_eq!(
        mark(&format!("before={}", wanted[1]))["seq"].as_u64(),
        Some(wanted[0])
    );
    assert_eq!(
        mark(&format!("before={}", last + 1))["seq"].as_u64(),
        wanted.last().copied()
    );
    assert_eq!(
        mark(&format!("after={}", wanted.last().unwrap())),
        Value::Null
    );
    assert_eq!(mark(&format!("after={}", flagged[0] - 1))["kind"], "flag");
    assert_eq!(
        get(
            v.port,
            &format!("/api/sessions/{id}/marks?after=1&kinds=nonsense")
        )
        .status,
        400
    );
    assert_eq!(
        get(v.port, &format!("/api/sessions/{id}/marks")).status,
        400
    );

    // Search: per item and session, with the session's name and the seqs; refusals too.
    let hits = search(v.port, "task%2042%20step%203");
    let item: Vec<&Value> = hits
        .iter()
        .filter(|h| h["session"] == id.as_str())
        .collect();
    assert_eq!(item.len(), 1, "{hits:?}");
    assert_eq!(
        (item[0]["type"].as_str(), item[0]["name"].as_str()),
        (Some("item"), Some("The long one"))
    );
    let texts = item[0]["texts"].as_array().unwrap();
    assert_eq!(texts[0]["content"], "Task 42 step 3");
    let (lo, hi) = (
        texts[0]["first"].as_u64().unwrap(),
        texts[0]["last"].as_u64().unwrap(),
    );
    for (seq, there) in [(lo, true), (hi, true), (lo - 1, false), (hi + 1, false)] {
        let plan: Value =
            serde_json::from_str(&p.ok(&["show", &id, "--json", "--at", &seq.to_string()]))
                .unwrap();
        let has = plan
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["content"] == "Task 42 step 3");
        assert_eq!(has, there, "seq {seq}: {plan}");
    }
    let refused = search(v.port, "call%20149%20was%20refused");
    assert!(
        refused
            .iter()
            .any(|h| h["type"] == "refusal" && h["seq"].as_u64() == Some(refusals[2])),
        "{refused:?}"
    );
    assert!(search(v.port, "bulk").iter().any(|h| h["type"] == "flag"));

    // Kept up to date: a new session's write is found, a deleted session's items are not.
    let new = p.ok(&["new"]).trim().to_owned();
    let r = p.write(&new, "c1", json!({"steps": [{"id": "1", "content": "Polish the zebra crossing", "status": "pending"}]}));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !search(v.port, "zebra")
        .iter()
        .any(|h| h["session"] == new.as_str())
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the new write was never indexed"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    p.ok(&["delete", &new, "--yes"]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !search(v.port, "zebra").is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the deleted session is still found"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[test]
fn an_index_file_planlog_did_not_write_is_left_alone() {
    let p = Planlog::new();
    let (main, _) = demo(&p);
    let index = p.db().with_file_name(format!(
        "{}.index.redb",
        p.db().file_stem().unwrap().to_string_lossy()
    ));
    std::fs::write(&index, "my own notes, not a database\n").unwrap();
    let v = viewer(&p, &[]);
    let hits = search(v.port, "table%20TESTS");
    assert!(
        hits.iter().any(|h| h["session"] == main.as_str()),
        "{hits:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&index).unwrap(),
        "my own notes, not a database\n"
    );
    let err = std::fs::read_to_string(p.dir.path().join("ui.err")).unwrap();
    assert!(
        err.contains("cannot be used") && err.contains("temporary"),
        "{err}"
    );
}

#[test]
fn two_viewers_on_one_store_both_search_and_follow_writes() {
    let p = Planlog::new();
    let (main, _) = demo(&p);
    let first = viewer(&p, &[]);
    let second = viewer(&p, &["--read-only"]);
    for v in [&first, &second] {
        let hits = search(v.port, "table%20TESTS");
        assert!(
            hits.iter().any(|h| h["session"] == main.as_str()),
            "{hits:?}"
        );
    }
    // The second could not have the index file the first holds: it says so and uses its own.
    let err = std::fs::read_to_string(p.dir.path().join("ui.err")).unwrap();
    assert!(err.contains("temporary"), "{err}");
    let r = p.write(
        &main,
        "both",
        json!({"steps": [{"id": "9", "content": "Seen by both viewers", "status": "pending"}]}),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    for v in [&first, &second] {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !search(v.port, "seen%20by%20both")
            .iter()
            .any(|h| h["session"] == main.as_str())
        {
            assert!(
                std::time::Instant::now() < deadline,
                "a viewer never indexed the write"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}
