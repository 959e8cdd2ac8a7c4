//! `planlog ui` and the HTML export in a real browser: Debian's chromium, driven through
//! chromedriver (WebDriver). The session list, stepping the scrubber (the plan at each seq as
//! `planlog show --at` prints it), the refused attempt, a fork from the page, a write by
//! another process showing up live, store text that looks like markup, and the export opened
//! from `file://`. Screenshots go to `target/viewer-screenshots/`.
//!
//! Without chromium and chromedriver the test says SKIPPED, unless
//! `PLANLOG_REQUIRE_BROWSER=1` (set by `.ci/run`, which installs them), where it fails.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

mod common;
use common::Planlog;

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// chromedriver and a headless chromium session, or `None` (SKIPPED) when they are absent.
async fn browser(profile: &Path) -> Option<(Killed, Client)> {
    if !Path::new(CHROMIUM).exists() || !Path::new(CHROMEDRIVER).exists() {
        assert!(
            std::env::var_os("PLANLOG_REQUIRE_BROWSER").is_none(),
            "PLANLOG_REQUIRE_BROWSER is set but {CHROMIUM} or {CHROMEDRIVER} is missing (apt-get install chromium chromium-driver)"
        );
        eprintln!(
            "SKIPPED: no {CHROMIUM} and {CHROMEDRIVER} here (apt-get install chromium chromium-driver)"
        );
        return None;
    }
    let port = free_port();
    let driver = Killed(
        Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "chromedriver did not start"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".to_owned(),
        json!({"binary": CHROMIUM, "args": [
            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--window-size=1400,1000", format!("--user-data-dir={}", profile.display())
        ]}),
    );
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    let client = ClientBuilder::new(connector)
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{port}"))
        .await
        .unwrap();
    Some((driver, client))
}

/// Runs `script` (a JS expression) until it gives true, for up to 10 s.
async fn until(c: &Client, script: &str, what: &str) {
    let started = Instant::now();
    loop {
        let v = c
            .execute(&format!("return !!({script});"), vec![])
            .await
            .unwrap();
        if v == Value::Bool(true) {
            return;
        }
        if started.elapsed() > Duration::from_secs(10) {
            let body = c
                .execute("return document.body.innerText;", vec![])
                .await
                .unwrap();
            panic!("timed out waiting for {what} ({script}); the page says: {body}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn js(c: &Client, script: &str) -> Value {
    c.execute(script, vec![]).await.unwrap()
}

/// The plan the page shows: `[[id, status, content], …]`.
async fn shown_plan(c: &Client) -> Value {
    js(c, "return [...document.querySelectorAll('#plan-table tr')].map(r => [r.dataset.item, r.querySelector('.status').title, r.querySelector('.content').firstChild.textContent]);").await
}

/// What `planlog show --json --at` prints, in the page's shape.
fn cli_plan(p: &Planlog, session: &str, seq: u64) -> Value {
    let v: Value =
        serde_json::from_str(&p.ok(&["show", session, "--json", "--at", &seq.to_string()]))
            .unwrap();
    Value::Array(
        v.as_array()
            .unwrap()
            .iter()
            .map(|i| json!([i["id"], i["status"], i["content"]]))
            .collect(),
    )
}

fn listed(p: &Planlog) -> Vec<Value> {
    p.ok(&["sessions", "--json", "--oldest-first"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Steps the open session from seq 1 to `last` with the keyboard and the buttons, checking
/// the plan at each seq against the CLI.
async fn step_through(c: &Client, p: &Planlog, session: &str, last: u64) {
    let body = c.find(Locator::Css("body")).await.unwrap();
    body.send_keys(&fantoccini::key::Key::Home.to_string())
        .await
        .unwrap();
    until(
        c,
        "document.getElementById('seq-label').textContent.startsWith('seq 1 of')",
        "seq 1",
    )
    .await;
    for seq in 1..=last {
        until(
            c,
            &format!("document.getElementById('seq-label').textContent === 'seq {seq} of {last}'"),
            "the seq",
        )
        .await;
        assert_eq!(
            shown_plan(c).await,
            cli_plan(p, session, seq),
            "plan at seq {seq}"
        );
        if seq < last {
            if seq % 2 == 0 {
                c.find(Locator::Css("#next"))
                    .await
                    .unwrap()
                    .click()
                    .await
                    .unwrap();
            } else {
                body.send_keys(&fantoccini::key::Key::Right.to_string())
                    .await
                    .unwrap();
            }
        }
    }
}

fn screenshot_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/viewer-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test(flavor = "current_thread")]
async fn the_viewer_in_a_real_browser() {
    let p = Planlog::new();
    let Some((_driver, c)) = browser(&p.dir.path().join("profile")).await else {
        return;
    };
    p.ok(&["demo"]);
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/imports/claude-small.jsonl");
    p.ok(&["import", fixture.to_str().unwrap()]);
    let sessions = listed(&p);
    assert_eq!(sessions.len(), 4);
    let by_label = |label: &str| {
        sessions
            .iter()
            .find(|s| s["label"].as_str().is_some_and(|l| l.starts_with(label)))
            .map(|s| s["id"].as_str().unwrap().to_owned())
            .unwrap()
    };
    let (main, fork) = (by_label("planlog demo"), by_label("demo fork"));
    let mut ui = Killed(
        Command::new(env!("CARGO_BIN_EXE_planlog"))
            .arg("--db")
            .arg(p.db())
            .args(["ui", "--port", "0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut url = String::new();
    BufReader::new(ui.0.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    let url = url.trim().to_owned();

    // The list: every session, the fork drawn under its parent.
    c.goto(&url).await.unwrap();
    until(
        &c,
        "document.querySelectorAll('#session-list li').length === 4",
        "the session list",
    )
    .await;
    let ids = js(&c, "return [...document.querySelectorAll('#session-list li')].map(li => li.dataset.id).sort();").await;
    let mut want: Vec<String> = sessions
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_owned())
        .collect();
    want.sort();
    assert_eq!(ids, json!(want));
    assert_eq!(
        js(
            &c,
            &format!(
                "return !!document.querySelector('li[data-id=\"{main}\"] li[data-id=\"{fork}\"]');"
            )
        )
        .await,
        json!(true)
    );

    // Time travel through the demo session.
    c.find(Locator::Css(&format!("a[data-id=\"{main}\"]")))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    c.wait()
        .for_element(Locator::Css("#scrubber"))
        .await
        .unwrap();
    step_through(&c, &p, &main, 5).await;

    // The refused bulk completion is marked, and shows what was refused and why.
    assert_eq!(
        js(
            &c,
            "return document.querySelector('.mark.kind-write_rejected').dataset.seq;"
        )
        .await,
        json!("4")
    );
    // Where the demo's fork left: named under the title, and marked on the timeline.
    let forks = js(&c, "return document.getElementById('forks').textContent;").await;
    assert!(forks.as_str().unwrap().ends_with("at seq 3"), "{forks}");
    assert_eq!(
        js(
            &c,
            "return document.querySelector('.fork-mark').dataset.fork;"
        )
        .await,
        json!(fork)
    );
    c.find(Locator::Css(".mark.kind-write_rejected"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    until(
        &c,
        "document.getElementById('seq-label').textContent === 'seq 4 of 5'",
        "seq 4",
    )
    .await;
    let kind = c
        .find(Locator::Css("#event-kind"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(kind.contains("refused (bulk_completion)"), "{kind}");
    let result = c
        .find(Locator::Css("#result"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(result.contains("bulk completion"), "{result}");
    // The call as sent, the result read and what planlog derived, each under its heading;
    // and when the event came, in the session and after the one before.
    let headings = js(
        &c,
        "return [...document.querySelectorAll('#event h3')].map(h => h.textContent);",
    )
    .await;
    let headings: Vec<&str> = headings
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_str().unwrap())
        .collect();
    for want in [
        "The call as sent: plan_write",
        "Result the model read (an error)",
        "What planlog derived: refused (bulk_completion)",
    ] {
        assert!(headings.contains(&want), "{headings:?}");
    }
    let sent = js(
        &c,
        "return document.getElementById('call-arguments').textContent;",
    )
    .await;
    assert!(
        sent.as_str().unwrap().starts_with("{\"steps\":["),
        "the arguments as sent: {sent}"
    );
    let when = js(
        &c,
        "return document.getElementById('event-when').textContent;",
    )
    .await;
    assert!(
        when.as_str().unwrap().contains("into the session")
            && when.as_str().unwrap().contains("after the event before"),
        "{when}"
    );
    let shots = screenshot_dir();
    std::fs::write(shots.join("time-travel.png"), c.screenshot().await.unwrap()).unwrap();
    js(
        &c,
        "document.getElementById('lives').scrollIntoView(); return 0;",
    )
    .await;
    let lives = c.find(Locator::Css("#lives")).await.unwrap();
    std::fs::write(
        shots.join("lifelines.png"),
        lives.screenshot().await.unwrap(),
    )
    .unwrap();
    assert!(
        js(
            &c,
            "return document.querySelectorAll('#lifelines .seg').length;"
        )
        .await
        .as_u64()
        .unwrap()
            > 5
    );

    // A fork from the page, at seq 3.
    c.find(Locator::Css(".mark[data-seq=\"3\"]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    until(
        &c,
        "document.getElementById('seq-label').textContent === 'seq 3 of 5'",
        "seq 3",
    )
    .await;
    c.find(Locator::Css("#fork-label"))
        .await
        .unwrap()
        .send_keys("from the browser")
        .await
        .unwrap();
    c.find(Locator::Css("#fork-button"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    until(&c, &format!("location.hash.startsWith('#/s/') && !location.hash.includes('{main}') && document.getElementById('session-title')"), "the new fork's page").await;
    let made = listed(&p)
        .into_iter()
        .find(|s| s["label"] == "from the browser")
        .expect("the fork exists");
    assert_eq!(
        made["origin"],
        json!({"type": "fork", "parent": main, "at": 3})
    );
    let href = js(
        &c,
        "return document.getElementById('parent-link').getAttribute('href');",
    )
    .await;
    assert_eq!(href, json!(format!("#/s/{main}/3")));

    // Live: another process writes; the open page follows.
    c.goto(&format!("{url}#/s/{main}")).await.unwrap();
    until(&c, "document.getElementById('seq-label') && document.getElementById('seq-label').textContent === 'seq 5 of 5'", "the end of the session").await;
    let r = p.write(&main, "live-1", json!({"steps": [{"id": "live", "content": "Written while the page was open", "status": "pending"}]}));
    assert_eq!(r.code, 0, "{}", r.stderr);
    until(
        &c,
        "document.getElementById('seq-label').textContent === 'seq 6 of 6'",
        "the new event, live",
    )
    .await;
    assert!(
        shown_plan(&c)
            .await
            .to_string()
            .contains("Written while the page was open")
    );

    // Store text that looks like markup is text.
    let hostile = "<img src=x onerror=window.pwned=1><b>bold</b>";
    let bad = p.ok(&["new", "--label", hostile]).trim().to_owned();
    p.write(
        &bad,
        "h1",
        json!({"steps": [{"id": "1", "content": hostile, "status": "in_progress"}]}),
    );
    c.goto(&format!("{url}#/s/{bad}")).await.unwrap();
    // Only the hash changes, so the last session's table is there at first: wait for this
    // session's (its text shows the markup as text; were it markup, this never comes).
    until(
        &c,
        "document.getElementById('plan-table') && document.getElementById('plan-table').textContent.includes('onerror=window.pwned')",
        "the hostile session",
    )
    .await;
    assert_eq!(shown_plan(&c).await, json!([["1", "in_progress", hostile]]));
    assert_eq!(js(&c, "return document.querySelectorAll('#app img, #app b').length + (window.pwned ? 100 : 0);").await, json!(0));
    assert_eq!(
        js(
            &c,
            "return document.getElementById('session-title').textContent;"
        )
        .await,
        json!(hostile)
    );

    // The HTML export from file://: the same plans at each step, no server.
    let file = p.dir.path().join("main.html");
    std::fs::write(&file, p.ok(&["export", &main, "--format", "html"])).unwrap();
    drop(ui);
    c.goto(&format!("file://{}", file.display())).await.unwrap();
    c.wait()
        .for_element(Locator::Css("#scrubber"))
        .await
        .unwrap();
    step_through(&c, &p, &main, 6).await;
    assert_eq!(
        js(&c, "return document.getElementById('fork-button');").await,
        Value::Null,
        "no fork in a file"
    );
    c.close().await.unwrap();
}
