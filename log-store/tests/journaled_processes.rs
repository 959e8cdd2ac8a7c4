//! The journaled store shared by processes that are killed (SIGKILL) at random moments,
//! round after round on one store: each process's threads append to sessions of their own
//! and, racing every other writer, to one shared session; one in ten sessions is deleted.
//! Every append a writer saw acknowledged is there afterwards; every session is an
//! unbroken chain in the journal (checked without redb); and the index the processes kept
//! up to date answers as an index rebuilt from the journal alone does.
//! Rounds: `PLANLOG_JOURNALED_KILL_ROUNDS` (10 by default; CI sets 50).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use planlog_core::testkit::{seal_after, sid, started, written};
use planlog_core::{EventLog, LogError, Seq, SessionId, events::Origin, log::Appended};
use planlog_store::journal::{FileStorage, Journal, Record, check_chains};
use planlog_store::{Indexing, JournaledLog, journal_path};

mod common;
use common::everything;

const CHILD: &str = "PLANLOG_JOURNALED_CHILD";
const SHARED: &str = "shared";

/// Appends to `session` after its last event, retrying while others get there first.
fn append_racing(log: &JournaledLog, session: &SessionId, call: &str) -> Option<u64> {
    loop {
        let last = match log.last(session) {
            Ok(last) => last,
            Err(e) => panic!("reading {session}: {e}"),
        };
        let body = if last.is_none() {
            started(Origin::New)
        } else {
            written(vec![])
        };
        let e = seal_after(last.as_ref(), session, Some(call), body);
        match log.append(&e) {
            Ok(Appended::Stored(e)) => return Some(e.seq.get()),
            Ok(Appended::Duplicate(e)) => return Some(e.seq.get()),
            Err(LogError::Conflict { .. }) => continue,
            // Another writer started the session first (its seq 1 is taken).
            Err(LogError::InvalidEvent { .. }) if last.is_none() => continue,
            Err(e) => panic!("appending to {session}: {e}"),
        }
    }
}

/// In a child process (`CHILD` = `<path> <writer>`): two threads append until killed,
/// printing `acked <session> <seq> <call>` once each append returns.
#[test]
fn child_writer() {
    let Ok(spec) = std::env::var(CHILD) else {
        return;
    };
    let (path, writer) = spec.split_once(' ').unwrap();
    let log = JournaledLog::open(path).unwrap();
    let out = std::sync::Mutex::new(std::io::stdout());
    std::thread::scope(|s| {
        for t in 0..2u64 {
            let (log, out) = (&log, &out);
            s.spawn(move || {
                let shared = sid(SHARED);
                for generation in 0.. {
                    let own = sid(&format!("w{writer}-t{t}-g{generation}"));
                    for n in 0..20u64 {
                        let (session, call) = if n % 4 == 3 {
                            (&shared, format!("w{writer}-t{t}-g{generation}-n{n}"))
                        } else {
                            (&own, format!("n{n}"))
                        };
                        let seq = append_racing(log, session, &call).unwrap();
                        let mut out = out.lock().unwrap();
                        writeln!(out, "acked {session} {seq} {call}").unwrap();
                        out.flush().unwrap();
                    }
                    if generation % 10 == 9 {
                        log.delete(&own).unwrap();
                        let mut out = out.lock().unwrap();
                        writeln!(out, "deleted {own}").unwrap();
                        out.flush().unwrap();
                    }
                }
            });
        }
    });
}

fn spawn(path: &Path, writer: u64) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_writer", "--nocapture", "--test-threads=1"])
        .env(CHILD, format!("{} {writer}", path.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn writers_killed_at_any_moment_lose_nothing_and_the_index_agrees_with_the_journal() {
    let rounds: u64 = std::env::var("PLANLOG_JOURNALED_KILL_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(10);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("planlog.redb");
    // (session, seq) -> call, for every acknowledged append; deleted sessions.
    let mut acked: BTreeMap<(String, u64), String> = BTreeMap::new();
    let mut deleted = Vec::new();
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    for round in 0..rounds {
        let mut children: Vec<_> = (0..3).map(|w| spawn(&path, round * 10 + w)).collect();
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        std::thread::sleep(std::time::Duration::from_millis(40 + seed % 200));
        for c in &mut children {
            c.kill().unwrap();
        }
        for mut c in children {
            let _ = c.wait();
            for line in std::io::BufReader::new(c.stdout.take().unwrap()).lines() {
                let line = line.unwrap();
                let w: Vec<&str> = line.split(' ').collect();
                match w.as_slice() {
                    ["acked", session, seq, call] => {
                        acked.insert(
                            ((*session).to_owned(), seq.parse().unwrap()),
                            (*call).to_owned(),
                        );
                    }
                    ["deleted", session] => deleted.push((*session).to_owned()),
                    _ => {}
                }
            }
        }
    }
    assert!(
        acked.len() > 50,
        "the writers got going: {} appends",
        acked.len()
    );
    let log = JournaledLog::options()
        .indexing(Indexing::Lazy)
        .open(&path)
        .unwrap();
    // The journal alone: whole chains.
    let (_, opened) = Journal::open(FileStorage::open(&journal_path(&path)).unwrap()).unwrap();
    let chains = check_chains(&opened.records).unwrap();
    assert!(chains.events as usize >= acked.len());
    // A delete can be durable with its child killed before it said so: the journal's
    // tombstones say which sessions were deleted.
    let tombstoned: Vec<String> = opened
        .records
        .iter()
        .filter_map(|r| match Record::decode(&r.data) {
            Ok(Record::Delete { session, .. }) => Some(session.as_str().to_owned()),
            _ => None,
        })
        .collect();
    for session in &deleted {
        assert!(tombstoned.contains(session), "{session} was deleted");
    }
    for ((session, seq), call) in &acked {
        if tombstoned.contains(session) {
            continue;
        }
        let got = log
            .read(&sid(session), Seq::new(*seq).unwrap(), Seq::new(*seq).ok())
            .unwrap();
        assert_eq!(
            got.first()
                .and_then(|e| e.call_id.as_ref())
                .map(|c| c.as_str()),
            Some(call.as_str()),
            "{session} seq {seq} was acknowledged"
        );
    }
    for session in &deleted {
        assert!(log.head(&sid(session)).is_err(), "{session} was deleted");
    }
    // The index the writers kept, against one rebuilt from the journal alone.
    log.index_now().unwrap();
    let kept = everything(&log);
    let fresh = tempfile::tempdir().unwrap();
    let copy = fresh.path().join("planlog.redb");
    std::fs::copy(journal_path(&path), journal_path(&copy)).unwrap();
    let rebuilt = JournaledLog::open(&copy).unwrap();
    assert_eq!(kept, everything(&rebuilt));
}
