//! A store whose history is longer than a hook takes in at once (`support::open::SHORT_WORK`,
//! 4 MiB), and waiting for the background catch-up a hook starts on it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use planlog_agents::hook::Spool;
use planlog_core::EventLog;
use planlog_core::testkit::{item, noise, seal_after, sid, started, written};
use planlog_core::{
    PlanStatus,
    events::{Event, Origin},
};

/// A session of 2,600 writes of two steps of ~1,000 bytes that do not compress: ~5.3 MB
/// of journal, over the most a hook's open takes in.
pub(crate) fn long_history() -> Vec<Event> {
    let s = sid("01JLLLLLLLLLLLLLLLLLLLLLLL");
    let mut last = seal_after(None, &s, None, started(Origin::New));
    let mut all = vec![last.clone()];
    for k in 1..2_600 {
        let body = written(vec![
            item(
                "1",
                &format!("step {k} {}", noise(1_000, k)),
                PlanStatus::InProgress,
            ),
            item(
                "2",
                &format!("then {k} {}", noise(1_000, k + 5_000)),
                PlanStatus::Pending,
            ),
        ]);
        last = seal_after(Some(&last), &s, Some(&format!("c{k}")), body);
        all.push(last.clone());
    }
    all
}

/// Writes `events` into a journaled store at `db` (its folder made), the index up to date.
pub(crate) fn journaled(db: &Path, events: &[Event]) {
    if let Some(dir) = db.parent() {
        std::fs::create_dir_all(dir).unwrap();
    }
    planlog_store::JournaledLog::options()
        .indexing(planlog_store::Indexing::Eager)
        .open(db)
        .unwrap()
        .append_all(events)
        .unwrap();
}

/// A store at `db` whose index was lost beside a journal of [`long_history`] (the history
/// returned): more than a hook or a starting server rebuilds before answering.
pub(crate) fn index_lost_over_a_long_journal(db: &Path) -> Vec<Event> {
    let history = long_history();
    journaled(db, &history);
    std::fs::remove_file(db).unwrap();
    history
}

/// Whether the redb file at `db` was left closed: redb refuses a read-only handle
/// (`RepairAborted`) to a file a writable one was left open in (the next writer then
/// repairs the whole file).
pub(crate) fn index_closed_cleanly(db: &Path) -> bool {
    redb::Database::builder()
        .set_concurrency_mode(redb::ConcurrencyMode::MultiWriter)
        .open_read_only(db)
        .is_ok()
}

/// The lock file a background catch-up of the store at `db` holds.
pub(crate) fn lock_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(".catch-up.lock");
    name.into()
}

/// Waits (at most two minutes) until nothing waits in the store's spool and no background
/// catch-up holds its lock.
pub(crate) fn until_drained(db: &Path) {
    let spool = Spool::beside(db);
    let lock = lock_path(db);
    let started = Instant::now();
    loop {
        let idle = std::fs::File::open(&lock)
            .map(|f| {
                let free = f.try_lock().is_ok();
                let _ = f.unlock();
                free
            })
            .unwrap_or(true);
        if spool.looks_empty() && idle {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the background catch-up did not store what waits in {}",
            spool.path().display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
