//! `verify` finds a damaged state index (the marks behind `state_at`) on both durable stores:
//! a plan mark removed, a plan mark added where no plan is, a mode mark flipped. Each is
//! reported at the seq where the index and the events first disagree; an intact store is
//! clean. The index is compared a chunk at a time without decoding events, so this is what
//! keeps that fast path honest.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use planlog_audit::{Report, verify_session};
use planlog_core::testkit::{item, seal_after, sid, started, written};
use planlog_core::{
    EventLog, PlanStatus,
    events::{Event, EventBody, ModeSelected, Origin},
};

/// A session of `n` events: writes, with plan mode switched on at seq 10 and off at seq 20.
fn fill(log: &dyn EventLog, n: u64) {
    let s = sid("damaged");
    let mut last: Option<Event> = None;
    for k in 1..=n {
        let body = match k {
            1 => started(Origin::New),
            10 => EventBody::ModeSelected(ModeSelected { active: true }),
            20 => EventBody::ModeSelected(ModeSelected { active: false }),
            _ => written(vec![item(
                "1",
                &format!("write {k}"),
                PlanStatus::InProgress,
            )]),
        };
        let e = seal_after(last.as_ref(), &s, Some(&format!("c{k}")), body);
        log.append(&e).unwrap();
        last = Some(e);
    }
}

/// The seqs verify reports index problems at.
fn index_problems(log: &dyn EventLog) -> Vec<u64> {
    let mut report = Report::default();
    let agents: std::sync::Arc<dyn planlog_audit::AgentRules> =
        std::sync::Arc::new(planlog_agents::Rules);
    verify_session(log, &sid("damaged"), &agents, &mut report, &mut |_| {});
    report
        .problems
        .iter()
        .filter(|p| p.to_string().contains("state index"))
        .map(|p| p.seq.unwrap_or(0))
        .collect()
}

#[test]
fn a_damaged_redb_index_is_found_where_it_breaks() {
    const PLAN_MARKS: redb::TableDefinition<(&str, u64), ()> =
        redb::TableDefinition::new("plan_marks");
    const MODE_MARKS: redb::TableDefinition<(&str, u64), bool> =
        redb::TableDefinition::new("mode_marks");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("planlog.redb");
    fill(&planlog_store::RedbLog::open(&path).unwrap(), 2_500);
    assert!(index_problems(&planlog_store::RedbLog::open(&path).unwrap()).is_empty());
    let edit = |f: &dyn Fn(&redb::WriteTransaction)| {
        let db = redb::Database::builder()
            .set_concurrency_mode(redb::ConcurrencyMode::MultiWriter)
            .open(&path)
            .unwrap();
        let txn = db.begin_write().unwrap();
        f(&txn);
        txn.commit().unwrap();
    };
    // A plan mark gone (seq 2,100: the second chunk).
    edit(&|txn| {
        txn.open_table(PLAN_MARKS)
            .unwrap()
            .remove(("damaged", 2_100))
            .unwrap();
    });
    let found = index_problems(&planlog_store::RedbLog::open(&path).unwrap());
    assert_eq!(found.first(), Some(&2_100), "{found:?}");
    edit(&|txn| {
        txn.open_table(PLAN_MARKS)
            .unwrap()
            .insert(("damaged", 2_100), ())
            .unwrap();
        // A plan mark on the mode change at seq 10, which carries no plan.
        txn.open_table(PLAN_MARKS)
            .unwrap()
            .insert(("damaged", 10), ())
            .unwrap();
    });
    let found = index_problems(&planlog_store::RedbLog::open(&path).unwrap());
    assert_eq!(found.first(), Some(&10), "{found:?}");
    edit(&|txn| {
        txn.open_table(PLAN_MARKS)
            .unwrap()
            .remove(("damaged", 10))
            .unwrap();
        // Plan mode off where it was switched on.
        txn.open_table(MODE_MARKS)
            .unwrap()
            .insert(("damaged", 10), false)
            .unwrap();
    });
    let found = index_problems(&planlog_store::RedbLog::open(&path).unwrap());
    assert_eq!(found.first(), Some(&10), "{found:?}");
    assert_eq!(
        found.last(),
        Some(&19),
        "until the next mode change: {found:?}"
    );
}

#[test]
fn a_damaged_postgres_index_is_found_where_it_breaks() {
    let Some(pg) = planlog_tests::TempPg::new() else {
        return;
    };
    fill(&pg.log, 2_500);
    assert!(index_problems(&pg.log).is_empty());
    pg.execute("DELETE FROM planlog_plan_marks WHERE session = 'damaged' AND seq = 2100");
    assert_eq!(index_problems(&pg.log).first(), Some(&2_100));
    pg.execute(
        "INSERT INTO planlog_plan_marks VALUES ('damaged', 2100), ('damaged', 10);
         UPDATE planlog_mode_marks SET active = false WHERE session = 'damaged' AND seq = 10;",
    );
    let found = index_problems(&pg.log);
    assert_eq!(found.first(), Some(&10), "{found:?}");
}
