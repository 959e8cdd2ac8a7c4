//! A hook on a store that needs long work before it can take a call (an index lost, far
//! behind or damaged over a long journal; a store of the older layout to upgrade): the hook
//! answers without doing it, its call waiting in the spool, and `planlog drain
//! --in-background`, started by the hook, does the work and stores what waits, in order.
//! Under the faults users meet: the background process killed, another one already running,
//! the agent's calls going on meanwhile. Nothing is lost, and `verify` ends clean.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::time::{Duration, Instant};

use planlog_agents::hook::Spool;
use planlog_core::EventLog;
use planlog_store::{JournaledLog, RedbLog, journal_path};
use serde_json::{Value, json};

mod common;
use common::Planlog;
use common::catch_up::{index_lost_over_a_long_journal, lock_path, long_history, until_drained};
use common::claude::{post, session, todos};

fn todo_call(id: &str, item: &str) -> Value {
    post("TodoWrite", id, todos(&[(item, "in_progress")]), json!({}))
}

/// The id of the background process a hook's message names ("(process N)").
fn background_pid(stderr: &str) -> i32 {
    let at = stderr
        .find("(process ")
        .unwrap_or_else(|| panic!("no background process named: {stderr}"));
    stderr[at + 9..]
        .split(')')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no process id in: {stderr}"))
}

/// Whether process `pid` is gone (or a zombie no one has reaped yet).
fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// The hook's call after the store's work is done: stored at once, no spool.
fn stored_at_once(p: &Planlog, id: &str) {
    let r = p.hook(&todo_call(id, id), &[], &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stderr.contains("waits in"), "{}", r.stderr);
}

#[test]
fn an_index_lost_over_a_long_journal_is_rebuilt_in_the_background_even_when_killed() {
    let p = Planlog::new();
    let db = p.db();
    let history = index_lost_over_a_long_journal(&db);
    // The journal locked, as a long import in another process holds it: no background
    // catch-up can finish while the test holds it.
    let journal = std::fs::File::options()
        .read(true)
        .write(true)
        .open(journal_path(&db))
        .unwrap();
    journal.lock().unwrap();

    let first = p.hook(&todo_call("toolu_1", "One"), &[], &[]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert!(
        first.stderr.contains("needs its index built from")
            && first.stderr.contains("waits in")
            && first.stderr.contains("in the background"),
        "{}",
        first.stderr
    );
    // The hook answered while the work cannot have been done: the call waits.
    assert!(!Spool::beside(&db).looks_empty());
    // The background process killed, as a user's `kill` or a reboot would.
    let pid = background_pid(&first.stderr);
    assert!(!gone(pid), "the background catch-up ended under the lock");
    std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    let t = Instant::now();
    while !gone(pid) {
        assert!(t.elapsed() < Duration::from_secs(10), "kill -KILL {pid}");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!Spool::beside(&db).looks_empty(), "the call was lost");

    // The next call: the index the killed process began is far behind; the same again.
    let second = p.hook(&todo_call("toolu_2", "Two"), &[], &[]);
    assert_eq!(second.code, 0, "{}", second.stderr);
    assert!(
        second.stderr.contains("waits in") && second.stderr.contains("in the background"),
        "{}",
        second.stderr
    );
    journal.unlock().unwrap();
    until_drained(&db);
    assert_eq!(p.call_ids(&session()), ["toolu_1", "toolu_2"]);
    stored_at_once(&p, "toolu_3");
    assert_eq!(p.call_ids(&session()), ["toolu_1", "toolu_2", "toolu_3"]);
    let log = JournaledLog::options().read_only(true).open(&db).unwrap();
    assert_eq!(
        log.head(&history[0].session).unwrap().map(|h| h.seq.get()),
        Some(2_600)
    );
    drop(log);
    p.verify_clean();
}

#[test]
fn a_store_of_the_older_layout_too_long_to_upgrade_in_a_hook_is_upgraded_in_the_background() {
    let p = Planlog::new();
    let db = p.db();
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    RedbLog::open(&db)
        .unwrap()
        .append_all(&long_history())
        .unwrap();
    let r = p.hook(&todo_call("toolu_1", "One"), &[], &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("an upgrade from store format 2") && r.stderr.contains("waits in"),
        "{}",
        r.stderr
    );
    until_drained(&db);
    assert!(journal_path(&db).exists(), "the store was not upgraded");
    assert_eq!(p.call_ids(&session()), ["toolu_1"]);
    stored_at_once(&p, "toolu_2");
    p.verify_clean();
}

/// While a store of the older layout too long to upgrade in a hook waits for its upgrade
/// (here the background catch-up cannot start: the test holds its lock), the plan still
/// comes back after a compaction, read from the store as it is (reading needs no upgrade),
/// as long as no plan call of the session waits in the spool. With one waiting, the stored
/// plan is behind it: nothing is put back, and the hook says why. Once what waits is
/// stored, the plan that comes back has it. (Before, nothing came back while the store
/// waited.)
#[test]
fn the_plan_comes_back_after_compaction_while_the_store_waits_for_its_upgrade() {
    use planlog_core::events::Origin;
    use planlog_core::testkit::{item, seal_after, sid, started, written};

    let p = Planlog::new();
    let db = p.db();
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    let s = sid(&session());
    // Made as the hooks make a Claude Code session: the import of that session.
    let origin = Origin::Import {
        source: "claude-code".to_owned(),
        source_session: Some(session().trim_start_matches("cc-").to_owned()),
        parent: None,
        cwd: None,
        transcript: None,
    };
    let first = seal_after(None, &s, None, started(origin));
    let plan = written(vec![item(
        "1",
        "Fix the bug",
        planlog_core::PlanStatus::InProgress,
    )]);
    let second = seal_after(Some(&first), &s, Some("toolu_0"), plan);
    {
        let log = RedbLog::open(&db).unwrap();
        log.append_all(&[first, second]).unwrap();
        log.append_all(&long_history()).unwrap();
    }
    let lock = std::fs::File::create(lock_path(&db)).unwrap();
    lock.lock().unwrap();
    let compact = || {
        let mut v = common::claude::common("SessionStart");
        v["source"] = json!("compact");
        v
    };

    let r = p.hook(&compact(), &[], &[]);
    assert!(
        r.stderr.contains("an upgrade from store format 2"),
        "{}",
        r.stderr
    );
    assert!(r.context().contains("Fix the bug"), "{}", r.stdout);

    let r = p.hook(&todo_call("toolu_1", "One"), &[], &[]);
    assert!(r.stderr.contains("waits in"), "{}", r.stderr);
    let r = p.hook(&compact(), &[], &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "", "a plan put back behind a waiting call");
    assert!(
        r.stderr
            .contains("1 plan calls of this session wait in the spool"),
        "{}",
        r.stderr
    );
    assert!(!journal_path(&db).exists(), "upgraded under the lock");

    lock.unlock().unwrap();
    drop(lock);
    let drained = p.run(&["drain"], None);
    assert_eq!(drained.code, 0, "{}", drained.stderr);
    let r = p.hook(&compact(), &[], &[]);
    let context = r.context();
    assert!(
        context.contains("One") && !context.contains("Fix the bug"),
        "{context}\n{}\n{}",
        drained.stderr,
        p.ok(&["history", &session()])
    );
    // On record, in order: the first compaction and what was put back (stored from the
    // spool), the call, the compaction met while nothing could be put back, the last
    // compaction and what was put back.
    let ids = p.call_ids(&session());
    let shape: Vec<&str> = ids
        .iter()
        .map(|id| id.split(':').next().unwrap_or_default())
        .collect();
    assert_eq!(
        shape,
        [
            "toolu_0", "compact", "restore", "toolu_1", "compact", "compact", "restore"
        ],
        "{ids:?}"
    );
    p.verify_clean();
}

/// One background catch-up per store: one started while another holds the lock leaves at
/// once, storing nothing; the one after stores what waits.
#[test]
fn a_background_catch_up_leaves_at_once_while_another_runs() {
    let p = Planlog::new();
    assert_eq!(p.hook(&todo_call("toolu_1", "One"), &[], &[]).code, 0);
    let db = p.db();
    {
        let _held = common::hold_write_lock(&db);
        let r = p.hook(&todo_call("toolu_2", "Two"), &[], &[]);
        assert!(r.stderr.contains("waits in"), "{}", r.stderr);
    }
    let lock = std::fs::File::create(lock_path(&db)).unwrap();
    lock.lock().unwrap();
    let r = p.run(&["drain", "--in-background"], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        !Spool::beside(&db).looks_empty(),
        "it drained under the lock"
    );
    assert_eq!(p.call_ids(&session()), ["toolu_1"]);
    lock.unlock().unwrap();
    let r = p.run(&["drain", "--in-background"], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(Spool::beside(&db).looks_empty());
    assert_eq!(p.call_ids(&session()), ["toolu_1", "toolu_2"]);
}
