//! The journal shared by processes, each with two writing threads (`SharedJournal`): every
//! append of every process is there, each writer's in its order, nothing twice; and with
//! writers killed (SIGKILL) at random moments, round after round on the same file, every
//! append a writer saw acknowledged is there, each writer's records are a prefix of what it
//! appended (a batch all or nothing), and the next writers go on after what the dead left.
//! Rounds: `PLANLOG_JOURNAL_KILL_ROUNDS` (10 by default).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::process::{Command, Stdio};

use planlog_store::journal::SharedJournal;
use serde_json::Value;

const CHILD: &str = "PLANLOG_JOURNAL_CHILD";

/// In a child process (`CHILD` = `<path> <writer> <appends>`): two threads append records
/// `{"w","t","n"}` (every third append a batch of three), printing `acked w t n` for the last
/// record of each append once it returns.
#[test]
fn child_writer() {
    let Ok(spec) = std::env::var(CHILD) else {
        return;
    };
    let words: Vec<&str> = spec.split(' ').collect();
    let (path, writer, appends) = (
        words[0].to_owned(),
        words[1].parse::<u64>().unwrap(),
        words[2].parse::<u64>().unwrap(),
    );
    let (journal, _) = SharedJournal::open(std::path::Path::new(&path)).unwrap();
    let out = std::sync::Mutex::new(std::io::stdout());
    std::thread::scope(|s| {
        for t in 0..2u64 {
            let (journal, out) = (&journal, &out);
            s.spawn(move || {
                let mut n = 0u64;
                for a in 0..appends {
                    let size = if a % 3 == 2 { 3 } else { 1 };
                    let records: Vec<Vec<u8>> = (0..size)
                        .map(|k| format!(r#"{{"w":{writer},"t":{t},"n":{}}}"#, n + k).into_bytes())
                        .collect();
                    let refs: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
                    journal.append(&refs).unwrap();
                    n += size;
                    let mut out = out.lock().unwrap();
                    writeln!(out, "acked {writer} {t} {}", n - 1).unwrap();
                    out.flush().unwrap();
                }
            });
        }
    });
}

/// Spawns a writer process.
fn spawn(path: &std::path::Path, writer: u64, appends: u64) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_writer", "--nocapture", "--test-threads=1"])
        .env(CHILD, format!("{} {writer} {appends}", path.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Each (writer, thread)'s record numbers, in journal order.
fn by_writer(path: &std::path::Path) -> BTreeMap<(u64, u64), Vec<u64>> {
    let (_, opened) = SharedJournal::open(path).unwrap();
    let mut seen: BTreeMap<(u64, u64), Vec<u64>> = BTreeMap::new();
    for r in &opened.records {
        let v: Value = serde_json::from_slice(&r.data).unwrap();
        seen.entry((v["w"].as_u64().unwrap(), v["t"].as_u64().unwrap()))
            .or_default()
            .push(v["n"].as_u64().unwrap());
    }
    seen
}

#[test]
fn every_append_of_every_process_is_there_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal");
    let children: Vec<_> = (0..4).map(|w| spawn(&path, w, 60)).collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let seen = by_writer(&path);
    assert_eq!(seen.len(), 8);
    for (who, ns) in seen {
        // 60 appends, every third a batch of three: 100 records, 0 to 99 in order.
        assert_eq!(ns, (0..100).collect::<Vec<_>>(), "{who:?}");
    }
}

#[test]
fn writers_killed_at_any_moment_lose_nothing_they_were_told_was_kept() {
    let rounds: u64 = std::env::var("PLANLOG_JOURNAL_KILL_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(10);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal");
    let mut acked: BTreeMap<(u64, u64), u64> = BTreeMap::new();
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    for round in 0..rounds {
        let mut children: Vec<_> = (0..3)
            .map(|w| spawn(&path, round * 10 + w, 1_000_000))
            .collect();
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        std::thread::sleep(std::time::Duration::from_millis(30 + seed % 200));
        for c in &mut children {
            c.kill().unwrap();
        }
        for mut c in children {
            let _ = c.wait();
            for line in std::io::BufReader::new(c.stdout.take().unwrap()).lines() {
                let line = line.unwrap();
                let w: Vec<&str> = line.split(' ').collect();
                if w.first() == Some(&"acked") && w.len() == 4 {
                    let key = (w[1].parse().unwrap(), w[2].parse().unwrap());
                    let n: u64 = w[3].parse().unwrap();
                    let e = acked.entry(key).or_insert(n);
                    *e = (*e).max(n);
                }
            }
        }
        let seen = by_writer(&path);
        for (who, last) in &acked {
            let ns = seen.get(who).cloned().unwrap_or_default();
            assert!(
                ns.len() as u64 > *last,
                "round {round}: {who:?} was told {last} was kept, the journal has {}",
                ns.len()
            );
        }
        for (who, ns) in &seen {
            assert_eq!(
                *ns,
                (0..ns.len() as u64).collect::<Vec<_>>(),
                "round {round}: {who:?} is not a prefix of what it appended"
            );
            // A batch all or nothing: each writer's records end where an append ended
            // (appends end at n = 0, 1, 4, 5, 6, 9, …: every third one is a batch of three).
            let count = ns.len() as u64;
            assert!(
                count % 5 != 3 && count % 5 != 4,
                "round {round}: {who:?} ends inside a batch ({count} records)"
            );
        }
    }
}
