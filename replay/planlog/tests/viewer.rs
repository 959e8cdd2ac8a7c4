//! `planlog ui` and the HTML export in a real browser: Debian's chromium, driven through
//! chromedriver (WebDriver). The session list, stepping the scrubber (the plan at each seq as
//! `planlog show --at` prints it), the refused attempt, a fork from the page, a write by
//! another process showing up live, store text that looks like markup, and the export opened
//! from `file://`; and a long session a window at a time (the minimap's marks, next/previous
//! refusal, jumps and steps across windows, zoom, search as you type, a windowed HTML export).
//! Screenshots go to `target/viewer-screenshots/`.
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

/// Clicks the element `css` selects.
async fn click(c: &Client, css: &str) {
    c.find(Locator::Css(css))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

/// The text of the element `css` selects.
async fn text_of(c: &Client, css: &str) -> String {
    c.find(Locator::Css(css))
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
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
                click(c, "#next").await;
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
    let (ui, url) = serve(&p, &[]);

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
    click(&c, &format!("a[data-id=\"{main}\"]")).await;
    until(
        &c,
        "document.getElementById('scrubber')",
        "the session page",
    )
    .await;
    step_through(&c, &p, &main, 5).await;

    // The refused bulk completion is marked on the minimap, and shows what was refused and why.
    until(
        &c,
        "!!document.querySelector('#minimap .mk-refusal')",
        "the minimap's marks",
    )
    .await;
    assert_eq!(
        js(
            &c,
            "return [...document.querySelectorAll('#minimap .mk-refusal')].map(m => m.dataset.from);"
        )
        .await,
        json!(["4"])
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
    // From the end, "previous refusal or flag" lands on it.
    click(&c, "#prev-mark").await;
    until(
        &c,
        "document.getElementById('seq-label').textContent === 'seq 4 of 5'",
        "seq 4",
    )
    .await;
    let kind = text_of(&c, "#event-kind").await;
    assert!(kind.contains("refused (bulk_completion)"), "{kind}");
    let result = text_of(&c, "#result").await;
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

    // A fork from the page, at seq 3, once confirmed.
    click(&c, "#lifelines .seg[data-seq=\"3\"]").await;
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
    click(&c, "#fork-button").await;
    let question = text_of(&c, "#fork-question").await;
    assert!(question.contains("seq 3"), "{question}");
    assert_eq!(
        listed(&p).len(),
        4,
        "nothing forked before the confirmation"
    );
    click(&c, "#fork-confirm").await;
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

/// `planlog ui` (with `extra` arguments) on the store `p` names: the process and the page's URL.
fn serve(p: &Planlog, extra: &[&str]) -> (Killed, String) {
    let mut ui = Killed(
        p.command()
            .args(["ui", "--port", "0"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut url = String::new();
    BufReader::new(ui.0.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    (ui, url.trim().to_owned())
}

/// The seq the page shows.
async fn shown_seq(c: &Client) -> u64 {
    let label = js(
        c,
        "return document.getElementById('seq-label').textContent;",
    )
    .await;
    label
        .as_str()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap()
}

/// Waits for the page to show `seq` and checks its plan against the CLI's.
async fn shows(c: &Client, p: &Planlog, session: &str, seq: u64, last: u64) {
    until(
        c,
        &format!("(document.getElementById('seq-label') || {{}}).textContent === 'seq {seq} of {last}' && document.getElementById('plan')"),
        &format!("seq {seq}"),
    )
    .await;
    assert_eq!(
        shown_plan(c).await,
        cli_plan(p, session, seq),
        "plan at seq {seq}"
    );
}

/// A long session's page: the end first, the minimap's marks as the API counts them, next
/// and previous refusal or flag, a jump to the middle, steps across the edge of the window the
/// page holds, zoom; then search as you type from the list. Prints how long steps took.
async fn walk_long_session(c: &Client, p: &Planlog, url: &str, session: &str) {
    let info = listed(p).into_iter().find(|s| s["id"] == session).unwrap();
    let last = info["events"].as_u64().unwrap();
    c.goto(&format!("{url}#/s/{session}")).await.unwrap();
    shows(c, p, session, last, last).await;
    // The minimap, once the index has the session: one tick per bucket with refusals, as many
    // refusals in them as the API's summary counts.
    let deadline = Instant::now() + Duration::from_secs(600);
    while js(
        c,
        "return document.getElementById('minimap-note').textContent;",
    )
    .await
        != json!("")
    {
        assert!(
            Instant::now() < deadline,
            "the minimap never got the whole session"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let ticks = js(c, "return [...document.querySelectorAll('#minimap .mk-refusal')].map(m => Number(m.dataset.count)).reduce((a, b) => a + b, 0);").await;
    let summary = js(c, "return fetch(location.origin + '/api/sessions/' + encodeURIComponent(location.hash.split('/')[2]) + '/summary?buckets=400').then(r => r.json());").await;
    let counted: u64 = summary["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["refusal"].as_u64().unwrap())
        .sum();
    assert!(counted > 0);
    assert_eq!(ticks.as_u64(), Some(counted));
    // Next and previous refusal or flag, by key and by button.
    let body = c.find(Locator::Css("body")).await.unwrap();
    body.send_keys(&fantoccini::key::Key::Home.to_string())
        .await
        .unwrap();
    shows(c, p, session, 1, last).await;
    let marks = |after: u64| {
        let s = summary.clone();
        s["marks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["kind"] == "refusal" || m["kind"] == "flag")
            .map(|m| m["seq"].as_u64().unwrap())
            .find(|seq| *seq > after)
    };
    let first = marks(1).unwrap();
    body.send_keys("]").await.unwrap();
    shows(c, p, session, first, last).await;
    let second = marks(first).unwrap();
    click(c, "#next-mark").await;
    shows(c, p, session, second, last).await;
    let kind = js(
        c,
        "return document.getElementById('event-kind').textContent;",
    )
    .await;
    assert!(
        kind.as_str().unwrap().contains("refused")
            || js(
                c,
                "return document.querySelector('#event dd.rejected') !== null;"
            )
            .await
                == json!(true),
        "{kind}"
    );
    click(c, "#prev-mark").await;
    shows(c, p, session, first, last).await;
    // The middle, by the scrubber, then steps across the window's edge (a page of seqs each).
    let mid = last / 2;
    js(c, &format!("const s = document.getElementById('scrubber'); s.value = {mid}; s.dispatchEvent(new Event('input')); return 0;")).await;
    shows(c, p, session, mid, last).await;
    let mut seq = mid;
    for _ in 0..6 {
        body.send_keys(&fantoccini::key::Key::PageDown.to_string())
            .await
            .unwrap();
        seq = (seq + 50).min(last);
        shows(c, p, session, seq, last).await;
    }
    // Steps one at a time: how long a step takes to render (printed, not asserted: speed is
    // measured in BENCHMARKS.md).
    let timing = js(c, "const t0 = performance.now(); for (let i = 0; i < 20; i++) document.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowRight'})); return (performance.now() - t0) / 20;").await;
    eprintln!("a step at seq {seq} of {last}: {timing} ms");
    shows(c, p, session, (seq + 20).min(last), last).await;
    assert_eq!(shown_seq(c).await, (seq + 20).min(last));
    // Zoom: more seqs in the lifelines.
    let before = js(
        c,
        "return document.querySelectorAll('#lifelines .seg').length;",
    )
    .await
    .as_u64()
    .unwrap();
    click(c, "#zoom-out").await;
    until(
        c,
        "document.getElementById('zoom-label').textContent.includes('(100 of')",
        "zoomed out",
    )
    .await;
    let after = js(
        c,
        "return document.querySelectorAll('#lifelines .seg').length;",
    )
    .await
    .as_u64()
    .unwrap();
    assert!(after > before, "{before} -> {after}");
    // Search as you type, from the list: a text of the session, no Enter.
    c.goto(&format!("{url}#/")).await.unwrap();
    until(c, "document.getElementById('search')", "the list").await;
    let plan = cli_plan(p, session, mid);
    let text = plan[0][2].as_str().unwrap().to_owned();
    c.find(Locator::Css("#search"))
        .await
        .unwrap()
        .send_keys(&text)
        .await
        .unwrap();
    until(c, &format!("[...document.querySelectorAll('#results li.hit')].some(li => li.dataset.session === '{session}')"), "search hits").await;
    let link = js(c, &format!("return [...document.querySelectorAll('#results li.hit')].find(li => li.dataset.session === '{session}').querySelector('a').getAttribute('href');")).await;
    let at: u64 = link
        .as_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(at <= mid, "{link}");
    assert!(
        cli_plan(p, session, at).to_string().contains(&text),
        "{link}"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_long_session_in_a_real_browser() {
    // A 3,000-call import; or, for BENCHMARKS.md § One million events, a store of your own:
    // `PLANLOG_MILLION_STORE=STORE PLANLOG_MILLION_SESSION=ID cargo test -p planlog --test
    // viewer a_long_session -- --nocapture` (it prints how long steps took).
    let (p, id) = match (
        std::env::var("PLANLOG_MILLION_STORE"),
        std::env::var("PLANLOG_MILLION_SESSION"),
    ) {
        (Ok(store), Ok(session)) => (Planlog::on(&store), session),
        _ => {
            let p = Planlog::new();
            let file = p.dir.path().join("long.jsonl");
            common::long_transcript(&file, 3_000);
            let id = p
                .ok(&["import", "claude-code", file.to_str().unwrap()])
                .trim()
                .to_owned();
            (p, id)
        }
    };
    let Some((_driver, c)) = browser(&p.dir.path().join("profile")).await else {
        return;
    };
    let (_ui, url) = serve(&p, &["--read-only"]);
    walk_long_session(&c, &p, &url, &id).await;
    // A window of it as one file: from seq 1000 to the end, starting from the plan before.
    // (At most 5,000 events: seqs 1000 to 5999, or to the end.)
    let file = p.dir.path().join("window.html");
    let r = p.run(&["export", &id, "--format", "html", "--from", "1000"], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("the page holds seqs 1000 to"),
        "{}",
        r.stderr
    );
    std::fs::write(&file, &r.stdout).unwrap();
    let last = listed(&p)
        .into_iter()
        .find(|s| s["id"] == id.as_str())
        .unwrap()["events"]
        .as_u64()
        .unwrap();
    let to = last.min(5_999);
    c.goto(&format!("file://{}", file.display())).await.unwrap();
    shows(&c, &p, &id, to, to).await;
    let note = js(
        &c,
        "return document.getElementById('window-note').textContent;",
    )
    .await;
    assert!(
        note.as_str()
            .unwrap()
            .contains(&format!("seqs 1000 to {to} of the session's {last} events")),
        "{note}"
    );
    let body = c.find(Locator::Css("body")).await.unwrap();
    body.send_keys(&fantoccini::key::Key::Home.to_string())
        .await
        .unwrap();
    shows(&c, &p, &id, 1000, to).await;
    body.send_keys(&fantoccini::key::Key::Right.to_string())
        .await
        .unwrap();
    shows(&c, &p, &id, 1001, to).await;
    let refused = p.run(&["export", &id, "--from", "5"], None);
    assert!(
        refused.code != 0 && refused.stderr.contains("--format html only"),
        "{}",
        refused.stderr
    );
    let past = p.run(
        &[
            "export",
            &id,
            "--format",
            "html",
            "--from",
            &(last + 1).to_string(),
        ],
        None,
    );
    assert!(past.code != 0 && past.stdout.is_empty(), "{}", past.stderr);
    c.close().await.unwrap();
}
