//! Bad input and bad files at the store layer: invalid session ids, a newer format, a file
//! locked by another program, truncated and byte-flipped files. Each is a clear error that
//! names the file; nothing panics; nothing false is shown.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::time::{Duration, Instant};

use planlog_core::testkit::{seed, sid};
use planlog_core::{EventLog, LogError, OperatorError, Seq, SessionId, events::Event};
use planlog_store::RedbLog;
use redb::{ReadableDatabase, ReadableTable};

fn fresh_store_with_events() -> (tempfile::TempDir, std::path::PathBuf, Vec<Event>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("planlog.redb");
    let log = RedbLog::open(&path).unwrap();
    let events = seed(&log, &sid("victim"), 20);
    drop(log);
    (dir, path, events)
}

#[test]
fn invalid_session_ids_are_refused_before_reaching_the_store() {
    for bad in ["", &"x".repeat(65), "../x", "a/b", "a\0b", "..", "a b"] {
        let err = SessionId::new(bad).unwrap_err();
        assert!(!err.to_string().is_empty());
    }
}

#[test]
fn a_newer_store_format_is_refused_with_a_clear_error() {
    let (_dir, path, _) = fresh_store_with_events();
    {
        let db = redb::Database::builder()
            .set_concurrency_mode(redb::ConcurrencyMode::MultiWriter)
            .open(&path)
            .unwrap();
        let txn = db.begin_write().unwrap();
        txn.open_table(redb::TableDefinition::<&str, u64>::new("meta"))
            .unwrap()
            .insert("store_format", 99)
            .unwrap();
        txn.commit().unwrap();
    }
    let err = RedbLog::open(&path).unwrap_err();
    assert!(
        matches!(
            err,
            LogError::Operator(OperatorError::NewerFormat { found: 99, .. })
        ),
        "{err}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains(&path.display().to_string()) && msg.contains("a newer planlog is needed"),
        "{msg}"
    );
}

/// Writable or read-only (a read-only open runs on the calling thread, without the opener
/// thread a writable one has): a file another program holds exclusively is retried until the
/// timeout, then `Locked`, naming it; once let go, it opens and nothing was lost.
#[test]
fn a_file_held_exclusively_by_another_program_gives_a_locked_error_naming_it() {
    let (_dir, path, _) = fresh_store_with_events();
    for read_only in [false, true] {
        // Another program opens the file the default (exclusive) way and keeps it.
        let holder = redb::Database::create(&path).unwrap();
        let started = Instant::now();
        let err = RedbLog::options()
            .read_only(read_only)
            .lock_timeout(Duration::from_millis(300))
            .open(&path)
            .unwrap_err();
        assert!(
            started.elapsed() >= Duration::from_millis(300),
            "read-only {read_only}: it retried for the timeout"
        );
        match &err {
            LogError::Operator(OperatorError::Locked {
                path: p, waited_ms, ..
            }) => {
                assert_eq!(*p, path.display().to_string());
                assert!(*waited_ms >= 300);
            }
            other => panic!("read-only {read_only}: expected Locked, got {other}"),
        }
        assert!(
            err.to_string().contains("locked by another process"),
            "{err}"
        );
        drop(holder);
        let log = RedbLog::options().read_only(read_only).open(&path).unwrap();
        assert_eq!(log.last(&sid("victim")).unwrap().unwrap().seq.get(), 21);
    }
}

#[test]
fn a_truncated_file_is_a_clear_error_naming_the_file() {
    let (_dir, path, events) = fresh_store_with_events();
    let len = std::fs::metadata(&path).unwrap().len();
    for keep in [0u64, 100, 4096, len / 2, len - 1] {
        let copy = path.with_extension(format!("cut{keep}"));
        std::fs::copy(&path, &copy).unwrap();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&copy)
            .unwrap()
            .set_len(keep)
            .unwrap();
        let opened = RedbLog::open(&copy);
        if keep == 0 {
            // An empty file is damage, never a new store written over it.
            let e = opened.expect_err("an empty store file must not open");
            assert!(e.to_string().contains("empty (0 bytes)"), "{e}");
            assert_eq!(std::fs::metadata(&copy).unwrap().len(), 0, "left as it is");
            continue;
        }
        match opened {
            Err(e) => assert!(e.to_string().contains(&copy.display().to_string()), "{e}"),
            // A cut in unused space may still open: then what it shows must be true.
            Ok(log) => match log.read(&sid("victim"), Seq::FIRST, None) {
                Ok(read) => assert_eq!(read, events, "cut at {keep} showed false events"),
                Err(e) => assert!(e.to_string().contains(&copy.display().to_string()), "{e}"),
            },
        }
    }
}

#[test]
fn byte_flips_anywhere_give_errors_or_the_true_events_never_a_panic() {
    let (_dir, path, events) = fresh_store_with_events();
    let original = std::fs::read(&path).unwrap();
    let mut detected = 0;
    let step = (original.len() / 97).max(1);
    for offset in (0..original.len()).step_by(step) {
        let mut bytes = original.clone();
        bytes[offset] ^= 0x5a;
        let copy = path.with_extension(format!("flip{offset}"));
        std::fs::write(&copy, &bytes).unwrap();
        let outcome = RedbLog::open(&copy).and_then(|log| {
            let read = log.read(&sid("victim"), Seq::FIRST, None)?;
            let info = log.session(&sid("victim"))?;
            Ok((read, info))
        });
        match outcome {
            Ok((read, info)) => {
                assert_eq!(read, events, "flip at {offset} changed what is shown");
                assert_eq!(
                    info.map(|i| i.events),
                    Some(21),
                    "flip at {offset} changed the catalogue"
                );
            }
            Err(e) => {
                detected += 1;
                assert!(
                    e.to_string().contains(&copy.display().to_string()),
                    "flip at {offset}: {e}"
                );
            }
        }
        std::fs::remove_file(&copy).unwrap();
    }
    eprintln!(
        "byte flips: {detected} of {} detected as damage, the rest hit unused bytes",
        original.len().div_ceil(step)
    );
}

/// The raw `events` row of (`session`, `seq`), and a function writing one back.
fn with_event_row(
    path: &std::path::Path,
    session: &str,
    seq: u64,
    edit: impl FnOnce(&mut Vec<u8>),
) {
    let db = redb::Database::builder()
        .set_concurrency_mode(redb::ConcurrencyMode::MultiWriter)
        .open(path)
        .unwrap();
    let table = redb::TableDefinition::<(&str, u64), &[u8]>::new("events");
    let txn = db.begin_write().unwrap();
    {
        let mut events = txn.open_table(table).unwrap();
        let mut row = events
            .get((session, seq))
            .unwrap()
            .unwrap()
            .value()
            .to_vec();
        edit(&mut row);
        events.insert((session, seq), row.as_slice()).unwrap();
    }
    txn.commit().unwrap();
}

#[test]
fn a_damaged_compressed_row_is_an_error_naming_the_event() {
    let (_dir, path, _) = fresh_store_with_events();
    // Seq 15 holds 15 items: compressed (store format 2).
    let mut first = 0;
    with_event_row(&path, "victim", 15, |row| {
        first = row[0];
        let mid = row.len() / 2;
        row[mid] ^= 0x5A;
        row.truncate(row.len() - 3);
    });
    assert_eq!(first, 0x01, "the row was compressed");
    let log = RedbLog::open(&path).unwrap();
    let err = log.read(&sid("victim"), Seq::FIRST, None).unwrap_err();
    match &err {
        LogError::Operator(OperatorError::Corrupt { session, seq, .. }) => {
            assert_eq!(session.as_ref(), Some(&sid("victim")));
            assert_eq!(*seq, Seq::new(15).ok());
        }
        other => panic!("expected a damaged-store error, got {other}"),
    }
    // The events before it still read; the state before it too.
    assert_eq!(
        log.read(&sid("victim"), Seq::FIRST, Seq::new(14).ok())
            .unwrap()
            .len(),
        14
    );
    assert!(log.state_at(&sid("victim"), Seq::new(14).unwrap()).is_ok());
}

#[test]
fn a_format_1_store_reads_as_it_is_and_is_upgraded_by_a_writer_only() {
    let meta = |path: &std::path::Path| -> u64 {
        let db = redb::Database::builder()
            .set_concurrency_mode(redb::ConcurrencyMode::MultiWriter)
            .open(path)
            .unwrap();
        let txn = db.begin_read().unwrap();
        let table = txn
            .open_table(redb::TableDefinition::<&str, u64>::new("meta"))
            .unwrap();
        table.get("store_format").unwrap().unwrap().value()
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.redb");
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/stores");
    std::fs::copy(fixtures.join("v1.redb"), &path).unwrap();
    assert_eq!(meta(&path), 1);
    // A reader writes nothing: still format 1, and every event reads.
    {
        let reader = RedbLog::options().read_only(true).open(&path).unwrap();
        let sessions = reader.sessions().unwrap();
        assert!(!sessions.is_empty());
        for s in &sessions {
            assert_eq!(
                reader.read(&s.id, Seq::FIRST, None).unwrap().len() as u64,
                s.events
            );
        }
    }
    assert_eq!(meta(&path), 1);
    // A writer upgrades it in place: format 2 recorded, old rows as they were (plain JSON),
    // new rows compressed, all of it read back.
    let log = RedbLog::open(&path).unwrap();
    let main = sid("01JDXMAINSESSION0000000000");
    let before = log.read(&main, Seq::FIRST, None).unwrap();
    let next = planlog_core::testkit::seal_after(
        before.last(),
        &main,
        Some("after-upgrade"),
        planlog_core::testkit::written(
            (0..12)
                .map(|i| {
                    planlog_core::testkit::item(
                        &i.to_string(),
                        "a step long enough to be worth compressing",
                        planlog_core::PlanStatus::Pending,
                    )
                })
                .collect(),
        ),
    );
    log.append(&next).unwrap();
    drop(log);
    assert_eq!(meta(&path), planlog_store::STORE_FORMAT);
    let mut rows = Vec::new();
    with_event_row(&path, main.as_str(), 1, |row| rows.push(row[0]));
    with_event_row(&path, main.as_str(), next.seq.get(), |row| {
        rows.push(row[0])
    });
    assert_eq!(rows, [b'{', 0x01]);
    let log = RedbLog::open(&path).unwrap();
    let after = log.read(&main, Seq::FIRST, None).unwrap();
    assert_eq!(after[..before.len()], before[..]);
    assert_eq!(after.last(), Some(&next));
}
