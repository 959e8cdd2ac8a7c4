//! The PostgreSQL server's disk fills up under planlog, then frees up. planlog's tables are
//! moved to a tablespace on a small tmpfs (mounting needs root: the test says SKIPPED
//! otherwise; CI runs as root), and appends go on until the server refuses one. The refusal is
//! a storage-full operator error naming the store; every acknowledged append is there; a
//! batch (an import) that does not fit leaves nothing; once the filesystem grows, the same
//! handle appends again.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::process::Command;

use planlog_core::testkit::{assert_chain, item, seal_after, sid, started, written};
use planlog_core::{
    EventLog, LogError, PlanStatus, Seq,
    events::{Event, Origin},
};
use planlog_store::PgLog;

fn next(s: &str, last: Option<&Event>) -> Event {
    let id = sid(s);
    match last {
        None => seal_after(None, &id, None, started(Origin::New)),
        Some(prev) => {
            let n = prev.seq.get();
            let plan = (0..8)
                .map(|i| {
                    item(
                        &i.to_string(),
                        &format!("step {i} of write {n}, with enough words to take some room"),
                        PlanStatus::Pending,
                    )
                })
                .collect();
            seal_after(last, &id, Some(&format!("call-{n}")), written(plan))
        }
    }
}

fn sh(args: &[&str]) {
    let status = Command::new(args[0]).args(&args[1..]).status().unwrap();
    assert!(status.success(), "{args:?}");
}

/// Unmounts the small filesystem even when the test fails.
struct Mount(std::path::PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_on_the_server_refuses_cleanly_and_appends_resume_when_it_frees_up() {
    let Some(pg) = planlog_tests::TempPg::new() else {
        return;
    };
    let root = Command::new("id").arg("-u").output().unwrap();
    if String::from_utf8_lossy(&root.stdout).trim() != "0" {
        eprintln!("SKIPPED: mounting a small filesystem needs root");
        return;
    }
    let user = std::env::var("PLANLOG_TEST_PG_USER").unwrap_or_else(|_| "postgres".into());
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small");
    std::fs::create_dir(&small).unwrap();
    let small_s = small.display().to_string();
    sh(&["mount", "-t", "tmpfs", "-o", "size=6m", "tmpfs", &small_s]);
    let _mount = Mount(small.clone());
    sh(&["chown", &user, &small_s]);
    let space = format!("ts_{}", ulid::Ulid::new().to_string().to_lowercase());
    pg.execute(&format!("CREATE TABLESPACE {space} LOCATION '{small_s}'"));
    pg.execute(&format!(
        "ALTER TABLE ALL IN TABLESPACE pg_default SET TABLESPACE {space};
         ALTER INDEX ALL IN TABLESPACE pg_default SET TABLESPACE {space};"
    ));

    let log = PgLog::open(&pg.url).unwrap();
    let mut last: Option<Event> = None;
    let refusal = loop {
        let e = next("filling", last.as_ref());
        match log.append(&e) {
            Ok(_) => last = Some(e),
            Err(err) => break err,
        }
        assert!(
            last.as_ref().unwrap().seq.get() < 50_000,
            "6 MB never filled up"
        );
    };
    let acked = last.clone().unwrap();
    let message = refusal.to_string();
    assert!(
        matches!(&refusal, LogError::Operator(op) if op.io_kind() == Some(std::io::ErrorKind::StorageFull)),
        "a storage-full operator error: {refusal:?}"
    );
    assert!(
        message.contains(&pg.url.replace("postgres://", "")),
        "names the store: {message}"
    );
    eprintln!("disk full after {} appends: {message}", acked.seq.get());
    // Everything acknowledged is there, whole.
    let events = log.read(&sid("filling"), Seq::FIRST, None).unwrap();
    assert_eq!(events.last(), Some(&acked));
    assert_chain(&events);
    // A batch that does not fit leaves nothing of itself.
    let mut batch = Vec::new();
    for _ in 0..400 {
        let e = next("imported", batch.last());
        batch.push(e);
    }
    assert!(
        log.append_all(&batch).is_err(),
        "400 events fit in a full disk?"
    );
    assert!(
        log.session(&sid("imported")).unwrap().is_none(),
        "half an import"
    );
    // The disk frees up: the same handle appends again, the chain goes on.
    sh(&["mount", "-o", "remount,size=64m", &small_s]);
    let e = next("filling", Some(&acked));
    log.append(&e).unwrap();
    assert!(log.append_all(&batch).is_ok());
    let events = log.read(&sid("filling"), Seq::FIRST, None).unwrap();
    assert_eq!(events.last(), Some(&e));
    assert_chain(&events);
    drop(log);
    let url = pg.url.clone();
    drop(pg);
    let admin = format!("{}/postgres", url.rsplit_once('/').unwrap().0);
    let mut c = postgres::Client::connect(&admin, postgres::NoTls).unwrap();
    c.batch_execute(&format!("DROP TABLESPACE IF EXISTS {space}"))
        .unwrap();
}
