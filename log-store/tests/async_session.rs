//! AsyncPlanSession: calls run on the session's own thread; a panicking call loses only its
//! answer; dropping the last handle closes the session (storing what storage did not take).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::sync::Arc;

use planlog_core::testkit::{FaultyLog, sid};
use planlog_core::{EventLog, MemoryLog, PlanSession, Seq, TestEnv};
use planlog_store::host::{AsyncPlanSession, SessionGone};

const WRITE: &str = r#"{"steps":[{"id":"1","content":"Write it","status":"in_progress"}]}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_call_loses_its_answer_not_the_session() {
    let plan = AsyncPlanSession::open(
        PlanSession::builder(MemoryLog::new(), TestEnv::default()),
        &sid("s"),
    )
    .await
    .unwrap();
    let gone = plan
        .call(|_| -> u8 { panic!("a host bug") })
        .await
        .unwrap_err();
    assert_eq!(gone, SessionGone);
    let outcome = plan.plan_write(Some("c1"), None, WRITE).await.unwrap();
    assert!(outcome.is_durable());
    assert_eq!(plan.plan().len(), 1);
    assert!(plan.plan_text().contains("[>] Write it"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_last_handle_stores_what_was_unsaved() {
    let log = Arc::new(FaultyLog::new(MemoryLog::new()));
    let plan = AsyncPlanSession::open(
        PlanSession::builder(Arc::clone(&log), TestEnv::default()),
        &sid("s"),
    )
    .await
    .unwrap();
    plan.plan_write(
        Some("c0"),
        None,
        "{\"steps\":[{\"id\":\"0\",\"content\":\"a\",\"status\":\"in_progress\"}]}",
    )
    .await
    .unwrap()
    .durable()
    .unwrap();
    log.fail_next(1, false);
    let kept = plan.plan_write(Some("c1"), None, WRITE).await.unwrap();
    assert!(!kept.is_durable(), "storage failed once: kept in memory");
    let clone = plan.clone();
    drop(plan);
    drop(clone);
    // The session's thread closes the session after the last handle goes.
    let mut stored = 0;
    for _ in 0..200 {
        stored = log.read(&sid("s"), Seq::FIRST, None).unwrap().len();
        if stored == 3 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(stored, 3, "session_started, c0, and the unsaved c1");
}
