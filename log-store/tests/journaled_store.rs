//! The journaled store as its users meet it: two handles (two processes' worth) on one
//! store see each other's appends before any index has them; the index lost, behind or
//! damaged loses nothing; damage to the journal is an error naming its byte, never skipped.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::path::Path;

use planlog_core::testkit::{seal_after, seed, sid, started};
use planlog_core::{
    EventLog, LogError, OperatorError, Seq, UserError,
    events::{Event, Origin},
};
use planlog_store::{Indexing, JournaledLog, journal_path};

mod common;
use common::{everything, same};

/// The store at `path`, its index brought up to date with every write.
fn eager(path: &Path) -> JournaledLog {
    JournaledLog::options()
        .indexing(Indexing::Eager)
        .open(path)
        .unwrap()
}

/// The store at `path`, indexed only once enough records wait (as a hook's).
fn lazy(path: &Path) -> JournaledLog {
    JournaledLog::options()
        .indexing(Indexing::Lazy)
        .open(path)
        .unwrap()
}

/// Three sessions, one deleted, written through `log`.
fn fill(log: &dyn EventLog) -> Vec<Event> {
    let a = seed(log, &sid("01JAAAAAAAAAAAAAAAAAAAAAAA"), 6);
    seed(log, &sid("01JBBBBBBBBBBBBBBBBBBBBBBB"), 3);
    let gone = seed(log, &sid("01JCCCCCCCCCCCCCCCCCCCCCCC"), 2);
    log.delete(&gone[0].session).unwrap();
    a
}

#[test]
fn a_second_handle_reads_what_the_first_appended_before_any_index_has_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("planlog.redb");
    let (a, b) = (lazy(&path), lazy(&path));
    let events = fill(&a);
    assert_eq!(
        a.index_position().unwrap(),
        0,
        "a lazy writer indexed nothing"
    );
    assert_eq!(everything(&a), everything(&b));
    let gone = sid("01JCCCCCCCCCCCCCCCCCCCCCCC");
    assert!(matches!(
        b.head(&gone),
        Err(LogError::User(UserError::SessionDeleted(_)))
    ));
    // The second handle appends after the first's events: its check saw them.
    let next = seal_after(
        events.last(),
        &events[0].session,
        Some("from-b"),
        started(Origin::New),
    );
    assert!(b.append(&next).is_err(), "session_started twice is refused");
    let next = seal_after(
        events.last(),
        &events[0].session,
        Some("from-b"),
        planlog_core::testkit::written(vec![]),
    );
    b.append(&next).unwrap();
    assert_eq!(a.last(&events[0].session).unwrap(), Some(next.clone()));
    // The first handle's stale head is a conflict, not a fork of the chain.
    let stale = seal_after(
        events.last(),
        &events[0].session,
        Some("from-a"),
        planlog_core::testkit::written(vec![]),
    );
    assert!(matches!(a.append(&stale), Err(LogError::Conflict { .. })));
    // Indexed now (by the second handle, a lazy writer that found the index made and
    // reads it through a read-only handle): the same answers, from the index.
    let before = everything(&a);
    b.index_now().unwrap();
    assert_eq!(a.index_position().unwrap(), a.journal_end());
    assert_eq!(everything(&b), before);
    assert_eq!(everything(&a), before);
}

#[test]
fn a_lazy_writer_indexes_once_enough_records_wait() {
    // A hook's process: a handle for each call. The call that finds LAZY_LIMIT records
    // past the index brings the index up to date (it opens the index for writing then:
    // that open must be given the time it takes).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("planlog.redb");
    let session = sid("01JDDDDDDDDDDDDDDDDDDDDDDD");
    let mut events = seed(&lazy(&path), &session, 1);
    assert_eq!(lazy(&path).index_position().unwrap(), 0);
    for n in 1..=planlog_store::LAZY_LIMIT {
        let log = lazy(&path);
        let next = seal_after(
            events.last(),
            &session,
            Some(&format!("call-{n}")),
            planlog_core::testkit::written(vec![]),
        );
        log.append(&next).unwrap();
        events.push(next);
    }
    // Indexed by the call that found 16 waiting; the last call's record waits.
    let log = lazy(&path);
    let position = log.index_position().unwrap();
    assert!(
        position > 0 && position < log.journal_end(),
        "indexed to {position} of {}",
        log.journal_end()
    );
    assert_eq!(log.last(&session).unwrap().as_ref(), events.last());
}

#[test]
fn a_lost_index_is_rebuilt_from_the_journal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("planlog.redb");
    let log = eager(&path);
    fill(&log);
    let before = everything(&log);
    assert_eq!(log.index_position().unwrap(), log.journal_end());
    drop(log);
    std::fs::remove_file(&path).unwrap();
    // Opened for reading only, it cannot rebuild: it says so and what to run, and creates
    // nothing.
    let Err(refused) = JournaledLog::options().read_only(true).open(&path) else {
        panic!("a read-only open without an index succeeded");
    };
    let said = refused.to_string();
    assert!(
        said.contains("missing beside its journal") && said.contains("planlog reindex"),
        "{said}"
    );
    assert!(!path.exists());
    let log = JournaledLog::open(&path).unwrap();
    assert_eq!(everything(&log), before);
    let gone = sid("01JCCCCCCCCCCCCCCCCCCCCCCC");
    assert!(matches!(
        log.head(&gone),
        Err(LogError::User(UserError::SessionDeleted(_)))
    ));
}

#[test]
fn an_index_left_behind_catches_up_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("planlog.redb");
    let log = eager(&path);
    let a = seed(&log, &sid("01JAAAAAAAAAAAAAAAAAAAAAAA"), 2);
    drop(log);
    let old = dir.path().join("old-index");
    std::fs::copy(&path, &old).unwrap();
    let log = eager(&path);
    let mut last = a.last().cloned();
    for i in 0..5 {
        let e = seal_after(
            last.as_ref(),
            &a[0].session,
            Some(&format!("more-{i}")),
            planlog_core::testkit::written(vec![]),
        );
        log.append(&e).unwrap();
        last = Some(e);
    }
    let d = seed(&log, &sid("01JDDDDDDDDDDDDDDDDDDDDDDD"), 3);
    log.delete(&d[0].session).unwrap();
    seed(&log, &sid("01JEEEEEEEEEEEEEEEEEEEEEEE"), 2);
    let before = everything(&log);
    drop(log);
    std::fs::copy(&old, &path).unwrap();
    let log = lazy(&path);
    assert!(log.index_position().unwrap() < log.journal_end());
    assert_eq!(everything(&log), before);
    log.index_now().unwrap();
    assert_eq!(everything(&log), before);
}

#[test]
fn a_damaged_index_is_set_aside_and_rebuilt_and_a_foreign_file_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("planlog.redb");
    let log = eager(&path);
    fill(&log);
    let before = everything(&log);
    drop(log);
    let mut bytes = std::fs::read(&path).unwrap();
    let len = bytes.len();
    for b in &mut bytes[len / 4..len / 2] {
        *b = 0xA5;
    }
    std::fs::write(&path, &bytes).unwrap();
    // Damage found on opening rebuilds at once; damage found later by a read is an error
    // that says the journal is whole and how to rebuild.
    let opened = JournaledLog::open(&path);
    let rebuilt = match opened.map(|log| {
        let seen = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            log.sessions()
                .and_then(|_| log.read(&sid("01JAAAAAAAAAAAAAAAAAAAAAAA"), Seq::FIRST, None))
        }));
        (log, seen)
    }) {
        Ok((log, Ok(Ok(_)))) => Some(log),
        Ok((_, Ok(Err(e)))) => {
            assert!(e.to_string().contains("planlog reindex"), "{e}");
            None
        }
        Ok((_, Err(_))) => panic!("a read of a damaged index panicked"),
        Err(e) => panic!("opening a damaged index: {e}"),
    };
    let log = match rebuilt {
        Some(log) => log,
        None => JournaledLog::reindex(&path, JournaledLog::options()).unwrap(),
    };
    assert_eq!(everything(&log), before);
    let kept: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".replaced-"))
        .collect();
    assert!(
        kept.len() <= 1,
        "the damaged index is kept beside the store"
    );

    // A file planlog did not write, where the index goes: an error, the file untouched.
    let other = tempfile::tempdir().unwrap();
    let foreign = other.path().join("planlog.redb");
    std::fs::write(&foreign, b"my notes, not a database").unwrap();
    std::fs::write(journal_path(&foreign), b"").unwrap();
    let err = JournaledLog::open(&foreign).unwrap_err();
    assert!(
        matches!(err, LogError::Operator(OperatorError::NotAStore { .. })),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&foreign).unwrap(),
        b"my notes, not a database"
    );
    // Nothing made beside it.
    assert!(!planlog_store::users_path(&foreign).exists());
    let beside: Vec<_> = std::fs::read_dir(other.path()).unwrap().collect();
    assert_eq!(beside.len(), 2, "{beside:?}");
}

#[test]
fn damage_inside_the_journal_is_an_error_naming_its_byte_and_nothing_is_cut() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("planlog.redb");
    let log = lazy(&path);
    let events = seed(&log, &sid("01JAAAAAAAAAAAAAAAAAAAAAAA"), 8);
    let end = log.journal_end();
    drop(log);
    std::fs::remove_file(&path).unwrap();
    let jpath = journal_path(&path);
    let mut bytes = std::fs::read(&jpath).unwrap();
    // A third of the way into the records (the file goes on with zeros kept past them).
    let at = usize::try_from(end).unwrap() / 3;
    bytes[at] ^= 0x40;
    std::fs::write(&jpath, &bytes).unwrap();
    let err = JournaledLog::open(&path).unwrap_err();
    let LogError::Operator(OperatorError::Corrupt { detail, .. }) = &err else {
        panic!("{err}")
    };
    assert!(detail.contains("damaged at byte"), "{detail}");
    assert_eq!(std::fs::read(&jpath).unwrap(), bytes, "nothing was cut");
    assert!(events.len() > 3);
}

/// Damage inside the records an index already places: the damaged session's read says the
/// journal or the index is wrong there and what to run; a rebuild, which finds the journal
/// damaged, changes nothing: the index goes back and every other session reads as before.
#[test]
fn a_rebuild_that_meets_damage_in_the_journal_puts_the_index_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("planlog.redb");
    let log = eager(&path);
    let a = seed(&log, &sid("01JAAAAAAAAAAAAAAAAAAAAAAA"), 6);
    let b = seed(&log, &sid("01JBBBBBBBBBBBBBBBBBBBBBBB"), 3);
    let end = log.journal_end();
    assert_eq!(log.index_position().unwrap(), end);
    drop(log);
    let jpath = journal_path(&path);
    let mut bytes = std::fs::read(&jpath).unwrap();
    // Inside the first session's records (its 6 come before the other's 3).
    bytes[usize::try_from(end).unwrap() / 4] ^= 0x40;
    std::fs::write(&jpath, &bytes).unwrap();
    let index = std::fs::read(&path).unwrap();

    let log = lazy(&path);
    assert_eq!(log.read(&b[0].session, Seq::FIRST, None).unwrap(), b);
    let err = log.read(&a[0].session, Seq::FIRST, None).unwrap_err();
    let said = err.to_string();
    assert!(
        said.contains("the journal is damaged there, or the index is wrong")
            && said.contains("planlog reindex"),
        "{said}"
    );
    // Every way to meet the damage says what to run once.
    let LogError::Operator(OperatorError::Corrupt { seq: Some(seq), .. }) = &err else {
        panic!("{err}")
    };
    // A stream whose reading fails inside the store's write (as a hook's decided events):
    // the error passes the store twice.
    let mut reading = std::iter::once_with(|| {
        log.read(&a[0].session, Seq::FIRST, None)
            .map(|events| events[0].clone())
    });
    for said in [
        said.clone(),
        log.state_at(&a[0].session, *seq).unwrap_err().to_string(),
        log.append_iter(&mut reading).unwrap_err().to_string(),
    ] {
        assert_eq!(said.matches("planlog reindex").count(), 1, "{said}");
    }
    drop(log);

    let Err(refused) = JournaledLog::reindex(&path, JournaledLog::options()) else {
        panic!("a rebuild over a damaged journal succeeded");
    };
    assert!(refused.to_string().contains("damaged at byte"), "{refused}");
    // Compared whole, not printed: the files are tens of KiB.
    assert!(
        std::fs::read(&path).unwrap() == index,
        "the index is not as it was"
    );
    assert!(
        std::fs::read(&jpath).unwrap() == bytes,
        "the journal changed"
    );
    let log = lazy(&path);
    assert_eq!(log.read(&b[0].session, Seq::FIRST, None).unwrap(), b);
    assert_eq!(log.read(&a[0].session, Seq::FIRST, None).unwrap_err(), err);
}

/// Not a file where the journal goes (a folder), or a file where the store's folder goes:
/// each is an error that says what is in the way, and nothing is made beside it.
#[test]
fn a_folder_where_the_journal_goes_or_a_file_where_the_folder_goes_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("planlog.redb");
    std::fs::create_dir(journal_path(&path)).unwrap();
    let said = JournaledLog::open(&path).unwrap_err().to_string();
    assert!(said.contains("it is not a file"), "{said}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "only the folder: {left:?}");

    let file = dir.path().join("notes");
    std::fs::write(&file, "mine").unwrap();
    let said = JournaledLog::open(file.join("planlog.redb"))
        .unwrap_err()
        .to_string();
    assert!(
        said.contains(&format!("{} is a file, not a folder", file.display())),
        "{said}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
}

#[test]
fn a_torn_tail_is_cut_and_every_acknowledged_append_stays() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("planlog.redb");
    let log = lazy(&path);
    let events = seed(&log, &sid("01JAAAAAAAAAAAAAAAAAAAAAAA"), 5);
    let end = log.journal_end();
    drop(log);
    let jpath = journal_path(&path);
    // A write torn by a crash: half a frame where the next frame goes, over the zeros the
    // journal keeps past its end.
    let mut torn = std::fs::read(&jpath).unwrap();
    let frame_start = usize::try_from(end).unwrap();
    let half = torn[..40].to_vec();
    torn[frame_start..frame_start + 40].copy_from_slice(&half);
    std::fs::write(&jpath, &torn).unwrap();
    let log = lazy(&path);
    assert_eq!(
        log.read(&events[0].session, Seq::FIRST, None).unwrap(),
        events
    );
    assert_eq!(std::fs::metadata(&jpath).unwrap().len(), end);
    assert_eq!(frame_start as u64, end);
    // What was cut is kept beside the journal, its zeros left out.
    let kept = kept_cuts(dir.path());
    assert_eq!(kept.len(), 1, "{kept:?}");
    let name = kept[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with(&format!("planlog.redb.journal.cut-at-{end}-")),
        "{name}"
    );
    let mut want = half;
    while want.last() == Some(&0) {
        want.pop();
    }
    assert_eq!(std::fs::read(&kept[0]).unwrap(), want);
}

/// The files a cut of the journal's tail left beside it in `dir`.
fn kept_cuts(dir: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains(".journal.cut-at-"))
        .collect()
}

/// Damage inside the last write, with no index to vouch for it, looks like a torn write
/// (no later frame says it was synced): it is cut, and its bytes, acknowledged records
/// among them, are kept beside the journal, never destroyed.
#[test]
fn damage_to_the_last_write_is_cut_like_a_torn_one_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("planlog.redb");
    let log = lazy(&path);
    let session = sid("01JAAAAAAAAAAAAAAAAAAAAAAA");
    let events = seed(&log, &session, 3);
    let before = log.journal_end();
    // The last write: one more event, acknowledged (written, then synced).
    let last = seal_after(
        events.last(),
        &session,
        Some("c-last"),
        planlog_core::testkit::written(Vec::new()),
    );
    log.append(&last).unwrap();
    let end = log.journal_end();
    drop(log);
    std::fs::remove_file(&path).unwrap();
    let jpath = journal_path(&path);
    let mut bytes = std::fs::read(&jpath).unwrap();
    let original = bytes[usize::try_from(before).unwrap()..usize::try_from(end).unwrap()].to_vec();
    bytes[usize::try_from(before + (end - before) / 2).unwrap()] ^= 0x40;
    std::fs::write(&jpath, &bytes).unwrap();

    let log = lazy(&path);
    assert_eq!(log.read(&session, Seq::FIRST, None).unwrap(), events);
    assert_eq!(log.journal_end(), before);
    let kept = kept_cuts(dir.path());
    assert_eq!(kept.len(), 1, "{kept:?}");
    let copy = std::fs::read(&kept[0]).unwrap();
    assert_eq!(copy.len(), original.len());
    let differ = copy.iter().zip(&original).filter(|(a, b)| a != b).count();
    assert_eq!(
        differ, 1,
        "the copy is the bytes cut, the damaged one included"
    );
}

/// An import's iterator reads the log while its batch is written (it seals each event after
/// the last): the reads are answered, from what was committed before the batch.
#[test]
fn a_streamed_batch_whose_iterator_reads_the_log_does_not_wait_for_itself() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("planlog.redb");
    let log = lazy(&path);
    let other = seed(&log, &sid("01JOTHERAAAAAAAAAAAAAAAAAA"), 2);
    let s = sid("01JSTREAMAAAAAAAAAAAAAAAAA");
    let mut last: Option<Event> = None;
    let mut n = 0;
    let mut events = std::iter::from_fn(|| {
        n += 1;
        if n > 4 {
            return None;
        }
        // A read of the log from inside the batch: what was there before it.
        assert_eq!(log.last(&other[0].session).unwrap().as_ref(), other.last());
        assert_eq!(log.head(&s).unwrap(), None);
        let body = if last.is_none() {
            started(Origin::New)
        } else {
            planlog_core::testkit::written(vec![])
        };
        let e = seal_after(last.as_ref(), &s, Some(&format!("s{n}")), body);
        last = Some(e.clone());
        Some(Ok(e))
    });
    assert_eq!(log.append_iter(&mut events).unwrap(), 4);
    assert_eq!(log.read(&s, Seq::FIRST, None).unwrap().len(), 4);
}

/// A batch longer than an index transaction's share (an import): indexed whole whichever
/// way the index is built (after the write, on opening with the index lost, by a second
/// handle catching up), never cut at the share with its position past the batch.
#[test]
fn a_batch_longer_than_an_index_transaction_is_indexed_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("planlog.redb");
    let n = 2 * 4096 + 7;
    let s = sid("01JLONGBATCHAAAAAAAAAAAAAA");
    let log = lazy(&path);
    let other = lazy(&path);
    seed(&log, &sid("01JBEFOREAAAAAAAAAAAAAAAAA"), 3);
    let mut last: Option<Event> = None;
    let mut k = 0;
    let mut events = std::iter::from_fn(|| {
        k += 1;
        if k > n {
            return None;
        }
        let body = if last.is_none() {
            started(Origin::New)
        } else {
            planlog_core::testkit::written(vec![])
        };
        let e = seal_after(last.as_ref(), &s, Some(&format!("c{k}")), body);
        last = Some(e.clone());
        Some(Ok(e))
    });
    assert_eq!(log.append_iter(&mut events).unwrap(), n as u64);
    seed(&log, &sid("01JAFTERAAAAAAAAAAAAAAAAAA"), 2);
    let before = everything(&log);
    assert_eq!(log.read(&s, Seq::FIRST, None).unwrap().len(), n);
    // A second handle that had the store open before the batch reads it whole.
    same(&everything(&other), &before);
    other.index_now().unwrap();
    same(&everything(&other), &before);
    drop((log, other));
    // The index lost: rebuilt on opening.
    std::fs::remove_file(&path).unwrap();
    let log = lazy(&path);
    same(&everything(&log), &before);
    drop(log);
    // Rebuilt by `reindex`.
    let log = JournaledLog::reindex(&path, JournaledLog::options()).unwrap();
    same(&everything(&log), &before);
}

/// A record with a good checksum that is not one planlog wrote (another program appended
/// it): the next append and read of a handle that meets it are errors naming its byte,
/// never a panic, and nothing is written.
#[test]
fn a_foreign_record_with_a_good_checksum_is_an_error_naming_its_byte() {
    use planlog_store::journal::{FileStorage, Journal};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("planlog.redb");
    let log = lazy(&path);
    let a = sid("01JAAAAAAAAAAAAAAAAAAAAAAA");
    let events = seed(&log, &a, 3);
    let jpath = journal_path(&path);
    let at = {
        let (mut journal, _) = Journal::open(FileStorage::open(&jpath).unwrap()).unwrap();
        let at = journal.end();
        journal.append(&[b"not an event at all"]).unwrap();
        at
    };
    let before = std::fs::read(&jpath).unwrap();
    let next = seal_after(
        events.last(),
        &a,
        Some("after-the-foreign-record"),
        planlog_core::testkit::written(vec![]),
    );
    for err in [
        log.append(&next).unwrap_err(),
        log.read(&a, Seq::FIRST, None).unwrap_err(),
    ] {
        let LogError::Operator(OperatorError::Corrupt { detail, .. }) = &err else {
            panic!("{err}")
        };
        assert!(detail.contains(&format!("byte {at}")), "{detail}");
    }
    assert_eq!(
        std::fs::read(&jpath).unwrap(),
        before,
        "nothing was written"
    );
}

#[test]
fn an_append_checked_before_another_handle_wrote_is_checked_again_under_the_lock() {
    // A writer checks its appends before it takes the journal's lock, from what it has read;
    // a record about the same session that another process wrote meanwhile must send the
    // check round again, under the lock.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("planlog.redb");
    let (a, b) = (lazy(&path), lazy(&path));
    let s = sid("01JDDDDDDDDDDDDDDDDDDDDDDD");
    assert!(b.last(&s).unwrap().is_none(), "b has read the store: empty");
    let first = seal_after(None, &s, Some("a-1"), started(Origin::New));
    a.append(&first).unwrap();
    // b has not read the store since: its first event for the session is a rival of a's.
    let rival = seal_after(None, &s, Some("b-1"), started(Origin::New));
    assert!(
        b.append(&rival).is_err(),
        "a second first event is refused, not written beside a's"
    );
    // An event after a's, which b had not read when it was handed in, is placed after it.
    let next = seal_after(
        Some(&first),
        &s,
        Some("b-2"),
        planlog_core::testkit::written(vec![]),
    );
    let c = lazy(&path);
    let stale_then = c.last(&s).unwrap();
    assert_eq!(stale_then.as_ref(), Some(&first));
    b.append(&next).unwrap();
    // And c, which read before b's append, sees its own stale head refused.
    let stale = seal_after(
        Some(&first),
        &s,
        Some("c-2"),
        planlog_core::testkit::written(vec![]),
    );
    assert!(matches!(c.append(&stale), Err(LogError::Conflict { .. })));
    assert_eq!(a.read(&s, Seq::FIRST, None).unwrap(), vec![first, next]);
}

#[test]
fn the_indexing_thread_indexes_every_burst_of_writes() {
    // The indexing thread is woken by the first write after each of its rounds; writes
    // made while a round is pending are indexed by that round.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("planlog.redb");
    let log = JournaledLog::open(&path).unwrap();
    let indexed = |log: &JournaledLog| {
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while log.index_position().unwrap() < log.journal_end() {
            assert!(
                std::time::Instant::now() < until,
                "the index stayed behind the journal"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    };
    for (k, burst) in [1, 40, 3].into_iter().enumerate() {
        seed(&log, &sid(&format!("01JEEEEEEEEEEEEEEEEEEEEEE{k}")), burst);
        indexed(&log);
    }
}

#[test]
fn a_lazy_reader_on_its_kept_snapshot_reads_what_others_append_index_and_delete() {
    // A hook's reads share one index snapshot; another process meanwhile appends, indexes
    // each write at once, deletes a session and starts one. Every answer is the writer's.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("planlog.redb");
    let writer = eager(&path);
    let (a, b) = (
        sid("01JFAAAAAAAAAAAAAAAAAAAAAA"),
        sid("01JFBBBBBBBBBBBBBBBBBBBBBB"),
    );
    let mut events = seed(&writer, &a, 4);
    seed(&writer, &b, 2);
    let reader = lazy(&path);
    same(&everything(&reader), &everything(&writer));
    for n in 0..3 * planlog_store::LAZY_LIMIT {
        let next = seal_after(
            events.last(),
            &a,
            Some(&format!("w-{n}")),
            planlog_core::testkit::written(vec![]),
        );
        writer.append(&next).unwrap();
        events.push(next.clone());
        if n == 20 {
            writer.delete(&b).unwrap();
        }
        if n == 30 {
            seed(&writer, &sid("01JFCCCCCCCCCCCCCCCCCCCCCC"), 3);
        }
        assert_eq!(writer.index_position().unwrap(), writer.journal_end());
        assert_eq!(reader.last(&a).unwrap().as_ref(), Some(&next));
        assert_eq!(reader.head(&a).unwrap(), writer.head(&a).unwrap());
        assert_eq!(
            reader.state_at(&a, next.seq).unwrap(),
            writer.state_at(&a, next.seq).unwrap()
        );
        assert_eq!(
            reader
                .find_call(&a, next.call_id.as_ref().unwrap())
                .unwrap(),
            Some(next.seq)
        );
        if n % 10 == 0 {
            same(&everything(&reader), &everything(&writer));
        }
    }
    assert!(matches!(
        reader.head(&b),
        Err(LogError::User(UserError::SessionDeleted(_)))
    ));
    same(&everything(&reader), &everything(&writer));
}

/// Another process's records past the index, of every kind (a plan written, refused,
/// restored; the mode chosen; a session described; checkpoints and compactions): every
/// answer a lazily indexed reader gives after each append (the head, the catalogue entry,
/// the state, call ids, the last event) is the in-memory log's, as the writer's is (whose
/// events are in its tail as it appended them).
#[test]
fn a_reader_of_others_records_of_every_kind_answers_as_the_in_memory_log_does() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("planlog.redb");
    let (writer, reader) = (lazy(&path), lazy(&path));
    let reference = planlog_core::MemoryLog::new();
    let events: Vec<Event> = include_str!("../../fixtures/events/format-4.jsonl")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| Event::decode(l.as_bytes()).unwrap())
        .collect();
    let mut kinds = std::collections::BTreeSet::new();
    for e in &events {
        writer.append(e).unwrap();
        reference.append(e).unwrap();
        kinds.insert(e.body.kind());
        let s = &e.session;
        for log in [&writer as &dyn EventLog, &reader] {
            assert_eq!(log.head(s).unwrap(), reference.head(s).unwrap());
            assert_eq!(log.session(s).unwrap(), reference.session(s).unwrap());
            assert_eq!(
                log.state_at(s, e.seq).unwrap(),
                reference.state_at(s, e.seq).unwrap()
            );
            if let Some(call) = &e.call_id {
                assert_eq!(log.find_call(s, call).unwrap(), Some(e.seq));
            }
            assert_eq!(log.last(s).unwrap().as_ref(), Some(e));
        }
    }
    assert_eq!(kinds.len(), 8, "every kind: {kinds:?}");
    // The in-memory log keeps no state index: the last comparisons are between the
    // handles, and with a handle that reads it all from the index.
    let answers = everything(&writer);
    same(&everything(&reader), &answers);
    reader.index_now().unwrap();
    same(&everything(&eager(&path)), &answers);
}
