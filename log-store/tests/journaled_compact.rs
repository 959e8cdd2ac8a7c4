//! Reclaiming the space of deleted sessions (`JournaledLog::compact`): what they wrote is gone
//! from the disk, every answer about the rest is what it was, the ids stay retired; it
//! refuses while the store is open elsewhere; the user's files keep their mode and links;
//! killed at any moment (SIGKILL, in a child process), it leaves the store whole.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use planlog_core::testkit::{item, seal_after, seed, sid, started, written};
use planlog_core::{EventLog, LogError, PlanStatus, UserError, events::Event, events::Origin};
use planlog_store::journal::{FileStorage, Journal};
use planlog_store::{Indexing, JournaledLog, journal_path, users_path};

mod common;
use common::{everything, same};

const SECRET: &str = "hunter2-the-deleted-secret";
const CHILD: &str = "PLANLOG_COMPACT_CHILD";

/// Sessions kept, a session with a secret deleted, a session deleted then restored whole:
/// the deleted session's events, and the restored one's.
fn fill(path: &Path) -> (Vec<Event>, Vec<Event>) {
    let log = JournaledLog::options()
        .indexing(Indexing::Eager)
        .open(path)
        .unwrap();
    seed(&log, &sid("01JKEEPAAAAAAAAAAAAAAAAAAA"), 40);
    let gone = sid("01JGONEAAAAAAAAAAAAAAAAAAA");
    let first = seal_after(None, &gone, None, started(Origin::New));
    let secret = seal_after(
        Some(&first),
        &gone,
        Some("call-secret"),
        written(vec![item("1", SECRET, PlanStatus::Pending)]),
    );
    log.append(&first).unwrap();
    log.append(&secret).unwrap();
    log.delete(&gone).unwrap();
    let back = seed(&log, &sid("01JBACKAAAAAAAAAAAAAAAAAAA"), 5);
    log.delete(&back[0].session).unwrap();
    log.append_all(&back).unwrap();
    seed(&log, &sid("01JKEEPBBBBBBBBBBBBBBBBBBB"), 30);
    (vec![first, secret], back)
}

fn journal_bytes(path: &Path) -> Vec<u8> {
    std::fs::read(journal_path(path)).unwrap()
}

/// Whether a record of the journal (as stored, decompressed) holds `needle`.
fn contains(path: &Path, needle: &str) -> bool {
    let storage = FileStorage::open_read_only(&journal_path(path)).unwrap();
    let (_, opened) = Journal::open_at(storage, 0, true).unwrap();
    opened
        .records
        .iter()
        .any(|r| r.data.windows(needle.len()).any(|w| w == needle.as_bytes()))
}

#[test]
fn the_deleted_sessions_bytes_go_and_every_answer_about_the_rest_stays() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("planlog.redb");
    let (gone, back) = fill(&path);
    let before = everything(&JournaledLog::open(&path).unwrap());
    let size = journal_bytes(&path).len() as u64;
    assert!(contains(&path, SECRET), "the secret was written");
    // A compaction killed before its renames left copies behind (the start of a journal,
    // the start of an index): made again. A file planlog did not write there is refused
    // and left as it is.
    let user = dir.path().join("planlog.redb.journal.compacting");
    std::fs::write(&user, b"a user's notes, not a journal").unwrap();
    let refused = JournaledLog::compact(&path).unwrap_err().to_string();
    assert!(refused.contains("not a file planlog wrote"), "{refused}");
    assert_eq!(
        std::fs::read(&user).unwrap(),
        b"a user's notes, not a journal"
    );
    let storage = FileStorage::open(&user).unwrap();
    std::fs::write(&user, b"").unwrap();
    let (mut stale, _) = Journal::open(storage).unwrap();
    stale.append(&[b"half a compaction".as_slice()]).unwrap();
    std::fs::write(
        dir.path().join("planlog.redb.compacting"),
        b"redb\x1a half an index",
    )
    .unwrap();

    let done = JournaledLog::compact(&path).unwrap();
    assert_eq!(done.before, size);
    assert!(done.after < done.before, "{done:?}");
    // The deleted session's 2 events and the restored one's 6 from before its deletion;
    // both tombstones stay (the one before the restore is still its session's last).
    assert_eq!(done.dropped, 2 + 6, "{done:?}");
    assert_eq!(done.sessions, 2);
    let bytes = journal_bytes(&path);
    assert_eq!(bytes.len() as u64, done.after);
    assert!(
        !contains(&path, SECRET),
        "the deleted session's text is gone from the disk"
    );
    for left in [
        "planlog.redb.compacting",
        "planlog.redb.compacting.journal",
        "planlog.redb.compacting.journal.users",
        "planlog.redb.journal.compacting",
    ] {
        assert!(!dir.path().join(left).exists(), "{left} left behind");
    }

    let log = JournaledLog::open(&path).unwrap();
    same(&before, &everything(&log));
    assert_eq!(log.index_position().unwrap(), log.journal_end());
    // The deleted id stays retired: a new session under it is refused, the same session
    // restored whole is taken back.
    assert!(matches!(
        log.head(&gone[0].session),
        Err(LogError::User(UserError::SessionDeleted(_)))
    ));
    let other = seal_after(
        None,
        &gone[0].session,
        Some("another"),
        started(Origin::New),
    );
    assert!(
        log.append(&other).is_err(),
        "a retired id took a new session"
    );
    log.append_all(&gone).unwrap();
    assert_eq!(log.read(&gone[0].session, gone[0].seq, None).unwrap(), gone);
    // The restored session reads as it did, and appends go on after it.
    assert_eq!(log.read(&back[0].session, back[0].seq, None).unwrap(), back);
    let next = seal_after(
        back.last(),
        &back[0].session,
        Some("after"),
        written(vec![]),
    );
    log.append(&next).unwrap();
    drop(log);
    // Compacting again changes nothing readers see, and drops nothing more.
    let before = everything(&JournaledLog::open(&path).unwrap());
    let again = JournaledLog::compact(&path).unwrap();
    assert_eq!(again.dropped, 0, "{again:?}");
    same(&before, &everything(&JournaledLog::open(&path).unwrap()));
}

#[test]
fn it_refuses_while_the_store_is_open_elsewhere_and_an_opener_waits_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("planlog.redb");
    fill(&path);
    let open = JournaledLog::open(&path).unwrap();
    let bytes = journal_bytes(&path);
    let refused = JournaledLog::compact(&path).unwrap_err().to_string();
    assert!(
        refused.contains("another process has the store open"),
        "{refused}"
    );
    assert_eq!(journal_bytes(&path), bytes, "nothing changed");
    drop(open);

    // While a compaction holds the store, an opener waits (here at most 50 ms) and says so.
    let users = std::fs::File::open(users_path(&path)).unwrap();
    users.lock().unwrap();
    let waited = JournaledLog::options()
        .lock_wait(Duration::from_millis(50))
        .open(&path)
        .unwrap_err()
        .to_string();
    assert!(waited.contains("locked by another process"), "{waited}");
    users.unlock().unwrap();
    JournaledLog::compact(&path).unwrap();
}

#[test]
fn the_journal_keeps_its_mode_a_link_to_it_stays_a_link_and_hard_links_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("planlog.redb");
    fill(&path);
    // The journal moved to another folder, a symbolic link left in its place.
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let real = elsewhere.join("real.journal");
    std::fs::rename(journal_path(&path), &real).unwrap();
    std::os::unix::fs::symlink(&real, journal_path(&path)).unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    let before = everything(&JournaledLog::open(&path).unwrap());
    let size = std::fs::metadata(&real).unwrap().len();

    let done = JournaledLog::compact(&path).unwrap();
    assert!(journal_path(&path).is_symlink(), "the link stays a link");
    let meta = std::fs::metadata(&real).unwrap();
    assert_eq!(meta.len(), done.after);
    assert!(meta.len() < size);
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    let index = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(index, 0o640);
    same(&before, &everything(&JournaledLog::open(&path).unwrap()));

    // A hard link to the journal would be cut: refused, nothing changed.
    std::fs::hard_link(&real, dir.path().join("a-hard-link")).unwrap();
    let bytes = std::fs::read(&real).unwrap();
    let refused = JournaledLog::compact(&path).unwrap_err().to_string();
    assert!(refused.contains("hard links"), "{refused}");
    assert_eq!(std::fs::read(&real).unwrap(), bytes);
}

/// A store left with its journal and no index (a compaction killed after removing the old
/// index, or an index lost): compacted as any other, its index built.
#[test]
fn a_store_without_its_index_is_compacted_too() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("planlog.redb");
    fill(&path);
    let before = everything(&JournaledLog::open(&path).unwrap());
    std::fs::remove_file(&path).unwrap();
    let done = JournaledLog::compact(&path).unwrap();
    assert_eq!(done.dropped, 2 + 6, "{done:?}");
    assert!(path.exists(), "the index was built");
    same(&before, &everything(&JournaledLog::open(&path).unwrap()));
}

/// In a child process (`CHILD` = the store's path): compacts it.
#[test]
fn child_compacts() {
    let Ok(path) = std::env::var(CHILD) else {
        return;
    };
    JournaledLog::compact(&path).unwrap();
}

#[test]
fn a_compaction_killed_at_any_moment_leaves_the_store_whole() {
    let dir = tempfile::tempdir().unwrap();
    let pristine = dir.path().join("pristine");
    std::fs::create_dir(&pristine).unwrap();
    let path = pristine.join("planlog.redb");
    let log = JournaledLog::options()
        .indexing(Indexing::Eager)
        .open(&path)
        .unwrap();
    for k in 0..40 {
        let s = sid(&format!("01JSESSION{k:016}"));
        seed(&log, &s, 40);
        if k % 3 == 0 {
            log.delete(&s).unwrap();
        }
    }
    let before = everything(&log);
    drop(log);
    // How long a whole compaction takes here, to kill within it.
    let timing = dir.path().join("timing");
    copy_store(&pristine, &timing);
    let started = std::time::Instant::now();
    JournaledLog::compact(timing.join("planlog.redb")).unwrap();
    let whole = started.elapsed().as_micros() as u64 + 20_000;

    // A fixed sequence of kill delays spread over the whole compaction (xorshift, seeded).
    let mut state = 26_u64;
    let mut below = |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let (mut killed, mut finished) = (0, 0);
    for round in 0..12 {
        let store = dir.path().join(format!("round-{round}"));
        copy_store(&pristine, &store);
        let path = store.join("planlog.redb");
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "child_compacts",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, &path)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(below(whole)));
        let _ = child.kill();
        let status = child.wait().unwrap();
        if status.success() {
            finished += 1;
        } else {
            killed += 1;
        }
        let log = JournaledLog::open(&path).unwrap();
        same(&before, &everything(&log));
        drop(log);
        // And a compaction after it finishes the work.
        JournaledLog::compact(&path).unwrap();
        same(&before, &everything(&JournaledLog::open(&path).unwrap()));
    }
    println!("{killed} compactions killed, {finished} finished (a whole one: {whole} µs)");
    assert!(killed > 0, "no compaction was killed ({finished} finished)");
}

fn copy_store(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for name in ["planlog.redb", "planlog.redb.journal"] {
        std::fs::copy(from.join(name), to.join(name)).unwrap();
    }
}
