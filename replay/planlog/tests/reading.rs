//! Commands that only read leave the store's files as they found them, and end with
//! nothing of the store still open: a writable redb handle records itself in the file, and
//! a process that ends while one is open leaves the file needing a repair (seconds on a
//! large store, and a hook then leaves its call to the background).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

mod common;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::catch_up::{
    index_closed_cleanly, index_lost_over_a_long_journal, journaled, long_history,
};
use common::{Planlog, hold_index_write_lock};
use planlog_core::EventLog;
use planlog_store::{JournaledLog, journal_path};

/// Every file in the store's folder, with its bytes.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut all: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    all.sort();
    all
}

#[test]
fn reading_commands_write_nothing_to_the_store() {
    let p = Planlog::new();
    let id = p.sample();
    let dir = p.db().parent().unwrap().to_path_buf();
    let before = files(&dir);
    assert!(
        before.iter().any(|(n, _)| n.ends_with(".journal")),
        "a journaled store: {:?}",
        before.iter().map(|(n, _)| n).collect::<Vec<_>>()
    );
    for args in [
        vec!["sessions"],
        vec!["show", &id],
        vec!["history", &id],
        vec!["items", &id],
        vec!["tasks", &id],
        vec!["diff", &id, "1", "3"],
        vec!["replay", &id],
        vec!["export", &id, "--format", "jsonl"],
    ] {
        p.ok(&args);
        let after = files(&dir);
        let changed: Vec<_> = before
            .iter()
            .zip(&after)
            .filter(|(b, a)| b != a)
            .map(|(b, _)| b.0.clone())
            .collect();
        assert_eq!(
            before.len(),
            after.len(),
            "planlog {args:?} made or removed files: {:?}",
            after.iter().map(|(n, _)| n).collect::<Vec<_>>()
        );
        assert!(changed.is_empty(), "planlog {args:?} wrote to {changed:?}");
    }
}

/// A store whose index lags its journal by more than a reader holds in memory (an index
/// restored from a copy): a reader opens it read-write to bring it up to date, and while
/// another process writes the index it reads it read-only, giving up its writable open.
/// That open still ends in the file when the other process's write is over: the reader
/// waits for it before it exits, and leaves the file closed.
#[test]
fn a_reader_that_gave_up_its_writable_open_waits_for_it_at_exit() {
    let p = Planlog::new();
    let db = p.db();
    let history = long_history();
    let session = history[0].session.to_string();
    journaled(&db, &history[..1]);
    let early = db.with_extension("early");
    std::fs::copy(&db, &early).unwrap();
    journaled(&db, &history[1..]);
    std::fs::rename(&early, &db).unwrap();
    assert!(std::fs::metadata(journal_path(&db)).unwrap().len() > 5_000_000);

    let lock = hold_index_write_lock(&db);
    let started = Instant::now();
    let mut child = p
        .command()
        .args(["sessions"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // It answers read-only, then waits for the open it gave up on.
    std::thread::sleep(Duration::from_millis(1_000));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the reader ended while its writable open still waited for the index's lock"
    );
    drop(lock);
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(&session) && stdout.contains("2600"),
        "every event read (past the index too): {stdout}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "it waited at most its bound: {:?}",
        started.elapsed()
    );
    assert!(
        index_closed_cleanly(&db),
        "the index was left open in the file"
    );
    let log = JournaledLog::options().read_only(true).open(&db).unwrap();
    assert_eq!(log.sessions().unwrap()[0].events, 2_600);
}

/// A command whose open has long work to do first (here an index lost beside 5 MB of
/// journal, rebuilt) says so on stderr before it does it, as a command silent for seconds
/// looks hung; one that has none says nothing.
#[test]
fn a_command_says_so_before_long_work_on_the_store() {
    let p = Planlog::new();
    index_lost_over_a_long_journal(&p.db());
    let r = p.run(&["sessions"], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("needs its index built from")
            && r.stderr
                .contains(" MB of journal first; this can take a while"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.contains("2600"), "{}", r.stdout);
    let again = p.run(&["sessions"], None);
    assert_eq!(again.stderr, "", "nothing to say once the index is there");
    assert_eq!(again.stdout, r.stdout);
}

/// A store another program holds exclusively (its redb file opened the default way) is an
/// error naming the lock once the lock timeout has passed, not after waiting it out again
/// for each way of opening tried (with a timeout of 3 s: 19 s before, 12.8 s at the head
/// before this session).
#[test]
fn a_store_held_by_another_program_is_a_locked_error_after_one_wait() {
    let p = Planlog::new();
    p.sample();
    let holder = redb::Database::create(p.db()).unwrap();
    let started = Instant::now();
    let out = p
        .command()
        .arg("sessions")
        .env("PLANLOG_LOCK_TIMEOUT_MS", "1000")
        .output()
        .unwrap();
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("locked by another process"), "{stderr}");
    assert!(
        took >= Duration::from_millis(1_000) && took < Duration::from_millis(1_900),
        "waited {took:?} for a lock timeout of 1 s: {stderr}"
    );
    drop(holder);
    assert!(p.ok(&["sessions"]).contains("sample"));
}
