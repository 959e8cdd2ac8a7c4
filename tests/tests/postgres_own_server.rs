//! PostgreSQL tests that need a server of their own (`OwnCluster`), so other tests keep the
//! shared one: the server killed under planlog, an outage seen by the library, and a server
//! that asks for a password.
//!
//! The server killed: a child process appends from four threads while this test kills the
//! server with SIGKILL (postmaster and backends at once) and starts it again, several times.
//! Every append the child acknowledged survives the server's crash recovery, each session is
//! still a contiguous hash chain, and the child recovers by itself (its appends go on after
//! each restart, on new connections).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use planlog_core::testkit::{assert_chain, sid};
use planlog_core::{EventLog, Seq};
use planlog_store::PgLog;
use planlog_tests::OwnCluster;

/// Highest acknowledged (seq, hash) per session, and how many acknowledgements in all.
type Acks = Arc<Mutex<(HashMap<String, (u64, String)>, u64)>>;

fn acked_count(acks: &Acks) -> u64 {
    acks.lock().unwrap().1
}

/// Waits until the child acknowledges more than `than`; false after `within`.
fn wait_for_acks(acks: &Acks, than: u64, within: Duration) -> bool {
    let start = Instant::now();
    while acked_count(acks) <= than {
        if start.elapsed() > within {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

/// Ends the child and panics with `what`, what the child said on stderr and the server's log.
fn fail(
    child: &mut std::process::Child,
    stderr: std::thread::JoinHandle<String>,
    cluster: &OwnCluster,
    what: &str,
) -> ! {
    let _ = child.kill();
    let _ = child.wait();
    let stderr = stderr.join().unwrap_or_default();
    let tail: Vec<&str> = stderr.lines().rev().take(30).collect();
    panic!(
        "{what}; the child's last words:\n{}\nthe server's log:\n{}",
        tail.into_iter().rev().collect::<Vec<_>>().join("\n"),
        cluster.server_log()
    );
}

#[test]
fn killing_the_server_loses_no_acknowledged_append_and_clients_recover() {
    let Some(cluster) = OwnCluster::start() else {
        return;
    };
    drop(PgLog::open(&cluster.url).unwrap()); // the tables, before the child races for them
    let mut child = Command::new(env!("CARGO_BIN_EXE_crash_child"))
        .args([cluster.url.as_str(), "4", "tolerant"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read on a thread of its own: a child whose stderr pipe fills up blocks.
    let errors = {
        let mut pipe = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut pipe, &mut text);
            text
        })
    };
    let acks: Acks = Arc::default();
    let stdout = child.stdout.take().unwrap();
    let reader = {
        let acks = Arc::clone(&acks);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let parts: Vec<&str> = line.split(' ').collect();
                assert_eq!(parts[0], "append", "{line}");
                let seq: u64 = parts[2].parse().unwrap();
                let mut acks = acks.lock().unwrap();
                let entry = acks
                    .0
                    .entry(parts[1].to_owned())
                    .or_insert((0, String::new()));
                if seq > entry.0 {
                    *entry = (seq, parts[3].to_owned());
                }
                acks.1 += 1;
            }
        })
    };
    if !wait_for_acks(&acks, 20, Duration::from_secs(30)) {
        fail(
            &mut child,
            errors,
            &cluster,
            "no acknowledged append before the first kill",
        );
    }
    let crashes = 4;
    for round in 0..crashes {
        std::thread::sleep(Duration::from_millis(150 + 97 * round));
        cluster.kill();
        let at_kill = acked_count(&acks);
        std::thread::sleep(Duration::from_millis(300));
        // Nothing is acknowledged while the server is down.
        assert!(
            acked_count(&acks) <= at_kill + 4,
            "round {round}: appends acknowledged with the server down"
        );
        cluster.start_server();
        if !wait_for_acks(&acks, acked_count(&acks) + 10, Duration::from_secs(30)) {
            fail(
                &mut child,
                errors,
                &cluster,
                &format!("no acknowledged append within 30 s of restart {round}"),
            );
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    reader.join().unwrap();
    let stderr = errors.join().unwrap();
    assert!(!stderr.contains("panicked"), "the child panicked: {stderr}");
    assert!(
        stderr.contains("retry after"),
        "the child never saw the server go away: the test tested nothing"
    );

    let log = PgLog::open(&cluster.url).unwrap();
    let (acked, total) = acks.lock().unwrap().clone();
    assert_eq!(acked.len(), 4, "every thread acknowledged appends");
    for (s, (seq, hash)) in &acked {
        let events = log.read(&sid(s), Seq::FIRST, None).unwrap();
        assert_chain(&events);
        let at = usize::try_from(*seq - 1).unwrap();
        assert!(
            events.len() > at,
            "{s}: acknowledged seq {seq}, {} stored",
            events.len()
        );
        assert_eq!(
            &events[at].hash.to_string(),
            hash,
            "{s}: stored as acknowledged"
        );
    }
    eprintln!("server crash test: {crashes} server kills, {total} acknowledged appends, none lost");
}

/// The library's fail-open path on a real outage: while the server is down, a PlanSession
/// answers the model and keeps the calls in memory; once the server is back, the next call
/// stores them first, in order, each once.
#[test]
fn a_session_keeps_its_calls_while_the_server_is_down_and_stores_them_after() {
    use planlog_core::{PlanSession, WriteStatus};
    let Some(cluster) = OwnCluster::start() else {
        return;
    };
    let log: Arc<dyn EventLog> = Arc::new(PgLog::open(&cluster.url).unwrap());
    let mut s = PlanSession::builder(Arc::clone(&log), Arc::new(planlog_store::host::SystemEnv))
        .open(&sid("outage"))
        .unwrap();
    let item = |n: usize| {
        serde_json::json!({"steps": [{"id": n.to_string(), "content": format!("item {n}"), "status": "in_progress"}]})
            .to_string()
    };
    let mut statuses = Vec::new();
    for n in 0..6 {
        if n == 2 {
            cluster.kill();
        }
        if n == 4 {
            cluster.start_server();
        }
        let out = s.plan_write(Some(&format!("call-{n}")), None, &item(n));
        assert!(!out.result().is_error, "call {n}: {}", out.result().content);
        statuses.push(matches!(out.status(), WriteStatus::Unsaved(_)));
    }
    assert_eq!(
        statuses,
        [false, false, true, true, false, false],
        "calls 2 and 3 waited in memory"
    );
    assert_eq!(s.unsaved(), 0);
    let events = log.read(&sid("outage"), Seq::FIRST, None).unwrap();
    assert_chain(&events);
    let calls: Vec<&str> = events
        .iter()
        .filter_map(|e| e.call_id.as_ref().map(|c| c.as_str()))
        .collect();
    assert_eq!(
        calls,
        ["call-0", "call-1", "call-2", "call-3", "call-4", "call-5"]
    );
    let head = log.head(&sid("outage")).unwrap().unwrap();
    assert_eq!(
        log.state_at(&sid("outage"), head.seq).unwrap().plan.len(),
        6
    );
}

/// A server that asks for a password: a URL without one finds it in the password file (as
/// psql does), and a password file others may read is ignored; no message shows a password.
#[test]
fn the_password_comes_from_the_password_file_and_never_shows() {
    let Some(cluster) = OwnCluster::start_with(Some("s3cret-pw")) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let pgpass = dir.path().join("pgpass");
    let port = cluster
        .url
        .rsplit_once(':')
        .unwrap()
        .1
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    std::fs::write(
        &pgpass,
        format!("127.0.0.1:{port}:postgres:planlog:s3cret-pw\n"),
    )
    .unwrap();
    let open_with = |mode: u32| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(mode)).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_plan_writer"))
            .args([cluster.url.as_str(), "pw", "0", "1"])
            .env("PGPASSFILE", &pgpass)
            .env_remove("PGPASSWORD")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (stdout, stderr) = open_with(0o600);
    assert!(
        stdout.starts_with("ready"),
        "connected with the file's password: {stderr}"
    );
    // Readable by others: ignored, so the server refuses the connection.
    let (stdout, stderr) = open_with(0o644);
    assert!(!stdout.contains("ready"), "{stdout}");
    assert!(stderr.contains("password"), "says why: {stderr}");
    assert!(!stderr.contains("s3cret-pw"), "{stderr}");
    // A wrong password given in the URL is refused without being shown.
    let wrong = cluster.url.replace("planlog@", "planlog:wrong-pw@");
    let err = PgLog::open(&wrong).unwrap_err().to_string();
    assert!(err.contains("password authentication failed"), "{err}");
    assert!(!err.contains("wrong-pw"), "{err}");
}
