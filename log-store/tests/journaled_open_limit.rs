//! An open with a limit on its work (`JournaledOptions::catch_up_limit`, as a hook opens a
//! store): past the limit, whatever the work (an index lost, damaged or far behind, a store
//! of the older layout to upgrade), the open fails with `OperatorError::NeedsTime` before
//! any of it and leaves every file as it was; a later open without the limit does the work
//! and loses nothing; within the limit the store opens as ever.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::Path;

use planlog_core::testkit::{item, noise, seal_after, sid, started, written};
use planlog_core::{
    EventLog, LogError, OperatorError, PlanStatus,
    events::{Event, Origin},
};
use planlog_store::{Indexing, JournaledLog, JournaledOptions, RedbLog};

mod common;
use common::{everything, same};

/// The limit the tests open with: 4 x the zeros a journal keeps past its end.
const LIMIT: u64 = 256 * 1024;

fn limited() -> JournaledOptions {
    JournaledLog::options()
        .indexing(Indexing::Lazy)
        .catch_up_limit(LIMIT)
}

/// `n` events of one session, each with ~1,900 bytes of text that does not compress:
/// `n = 200` is ~400 KB of journal, over [`LIMIT`].
fn events(n: usize) -> Vec<Event> {
    let s = sid("01JAAAAAAAAAAAAAAAAAAAAAAA");
    let mut last = seal_after(None, &s, None, started(Origin::New));
    let mut all = vec![last.clone()];
    for k in 1..n {
        let body = written(vec![item(
            "1",
            &format!("write {k} {}", noise(1_900, k as u64)),
            PlanStatus::InProgress,
        )]);
        last = seal_after(Some(&last), &s, Some(&format!("c{k}")), body);
        all.push(last.clone());
    }
    all
}

/// Every file in `dir`: its length and a hash of its bytes.
fn files(dir: &Path) -> BTreeMap<String, (usize, u64)> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let bytes = std::fs::read(e.path()).unwrap();
            let mut h = std::hash::DefaultHasher::new();
            bytes.hash(&mut h);
            (
                e.file_name().to_string_lossy().into_owned(),
                (bytes.len(), h.finish()),
            )
        })
        .collect()
}

/// The work a refused open names, or a panic saying what the open did instead.
fn work_refused(opened: Result<JournaledLog, LogError>) -> String {
    match opened {
        Err(LogError::Operator(OperatorError::NeedsTime { work, .. })) => work,
        Err(e) => panic!("refused for another reason: {e}"),
        Ok(_) => panic!("opened past its limit"),
    }
}

/// Opens the store at `path` in `dir` with the limit: the work it refused, every file in
/// `dir` as it was (`unchanged` checks them).
fn refused(
    dir: &Path,
    path: &Path,
    unchanged: fn(&Path, BTreeMap<String, (usize, u64)>),
) -> String {
    let untouched = files(dir);
    let work = work_refused(limited().open(path));
    unchanged(dir, untouched);
    work
}

/// The files in `dir` are `untouched`.
fn unchanged(dir: &Path, untouched: BTreeMap<String, (usize, u64)>) {
    assert_eq!(files(dir), untouched, "the refused open changed a file");
}

/// A store of the older layout (format 2) at `path` with 200 of [`events`]; what it reads.
fn older_layout(path: &Path) -> Vec<String> {
    let log = RedbLog::open(path).unwrap();
    log.append_all(&events(200)).unwrap();
    everything(&log)
}

/// The files in `dir` are `untouched` but for the one an open of the older layout may
/// leave: the empty lock file every open of a journaled store takes
/// (`<store>.journal.users`), made before the store's layout is read.
fn unchanged_but_the_users_lock(dir: &Path, untouched: BTreeMap<String, (usize, u64)>) {
    let mut after = files(dir);
    if let Some((len, _)) = after.remove("planlog.redb.journal.users") {
        assert_eq!(len, 0);
    }
    assert_eq!(after, untouched, "the refused open changed a file");
}

/// A journaled store of `events` at `path`, its index up to date.
fn journaled(path: &Path, events: &[Event]) -> Vec<String> {
    let log = JournaledLog::options()
        .indexing(Indexing::Eager)
        .open(path)
        .unwrap();
    log.append_all(events).unwrap();
    let all = everything(&log);
    assert_eq!(log.index_position().unwrap(), log.journal_end());
    all
}

#[test]
fn an_index_lost_over_the_limit_is_left_for_an_open_without_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("planlog.redb");
    let before = journaled(&path, &events(200));
    std::fs::remove_file(&path).unwrap();
    let work = refused(dir.path(), &path, unchanged);
    assert!(
        work.starts_with("its index built from ") && work.ends_with(" MB of journal"),
        "{work}"
    );
    // Without the limit the index is built; with it, the store then opens.
    same(&everything(&JournaledLog::open(&path).unwrap()), &before);
    same(&everything(&limited().open(&path).unwrap()), &before);
}

#[test]
fn an_index_far_behind_is_left_and_one_a_little_behind_catches_up() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("planlog.redb");
    let all = events(210);
    journaled(&path, &all[..5]);
    let old = dir.path().join("old-index");
    std::fs::copy(&path, &old).unwrap();
    let before = journaled(&path, &all[5..]);
    std::fs::copy(&old, &path).unwrap();
    std::fs::remove_file(&old).unwrap();
    let work = refused(dir.path(), &path, unchanged);
    assert!(
        work.starts_with("its index brought up to date from"),
        "{work}"
    );
    // An open without the limit catches up, so the next limited open has nothing to do.
    same(&everything(&JournaledLog::open(&path).unwrap()), &before);
    let log = limited().open(&path).unwrap();
    assert_eq!(log.index_position().unwrap(), log.journal_end());
    same(&everything(&log), &before);
    drop(log);

    // Ten writes behind (~20 KB): within the limit, the limited open reads them.
    let more: Vec<Event> = {
        let s = sid("01JBBBBBBBBBBBBBBBBBBBBBBB");
        let mut last = seal_after(None, &s, None, started(Origin::New));
        let mut out = vec![last.clone()];
        for k in 1..10 {
            let body = written(vec![item("1", &noise(2000, 900 + k), PlanStatus::Pending)]);
            last = seal_after(Some(&last), &s, Some(&format!("b{k}")), body);
            out.push(last.clone());
        }
        out
    };
    std::fs::copy(&path, &old).unwrap();
    let after = {
        let log = JournaledLog::open(&path).unwrap();
        log.append_all(&more).unwrap();
        everything(&log)
    };
    std::fs::copy(&old, &path).unwrap();
    let log = limited().open(&path).unwrap();
    assert!(log.index_position().unwrap() < log.journal_end());
    same(&everything(&log), &after);
}

#[test]
fn a_damaged_index_over_the_limit_is_not_set_aside() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("planlog.redb");
    let before = journaled(&path, &events(200));
    // Every page past redb's header damaged: the index's position cannot be read.
    let mut bytes = std::fs::read(&path).unwrap();
    for b in &mut bytes[4096..] {
        *b = 0xA5;
    }
    std::fs::write(&path, &bytes).unwrap();
    let untouched = files(dir.path());
    // Read through a read-only handle first (as a hook reads it), the damage made redb
    // panic: now it is found as damage, and the work of rebuilding is named.
    let work = refused(dir.path(), &path, unchanged);
    assert!(work.starts_with("its damaged index rebuilt from"), "{work}");
    // Opened for reading only, it is an error that says so, not a panic.
    match JournaledLog::options().read_only(true).open(&path) {
        Err(LogError::Operator(OperatorError::Corrupt { .. })) => {}
        Err(e) => panic!("a read-only open of a damaged index: {e}"),
        Ok(_) => panic!("a read-only open of a damaged index succeeded"),
    }
    unchanged(dir.path(), untouched);
    // A lazily indexed open without a limit sets it aside and rebuilds it.
    let log = JournaledLog::options()
        .indexing(Indexing::Lazy)
        .open(&path)
        .unwrap();
    same(&everything(&log), &before);
}

#[test]
fn a_store_of_the_older_layout_over_the_limit_is_not_upgraded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("planlog.redb");
    let before = older_layout(&path);
    let work = refused(dir.path(), &path, unchanged_but_the_users_lock);
    assert!(work.starts_with("an upgrade from store format 2"), "{work}");
    // Upgraded by an open without the limit, then opened within it.
    same(&everything(&JournaledLog::open(&path).unwrap()), &before);
    same(&everything(&limited().open(&path).unwrap()), &before);
}

/// A redb file a process did not close (redb's "recovery required" flag in its header, as a
/// process killed with the file open leaves it): redb repairs it on a writable open,
/// reading the whole file, and refuses it to a read-only handle. Over the limit, that is
/// work refused like the rest.
#[test]
fn a_file_left_needing_a_repair_over_the_limit_is_not_repaired() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("planlog.redb");
    let before = older_layout(&path);
    // redb's header: the "god byte" at offset 9, whose bit 2 says a repair is needed.
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[9] |= 2;
    std::fs::write(&path, &bytes).unwrap();
    let work = refused(dir.path(), &path, unchanged_but_the_users_lock);
    assert!(work.starts_with("a check of its"), "{work}");
    same(&everything(&JournaledLog::open(&path).unwrap()), &before);
}
