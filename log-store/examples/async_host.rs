//! An async agent host on a multi-thread tokio runtime: the session runs on a thread of its
//! own (no `spawn_blocking`), two tasks write to it at once, and a sub-agent plans in memory.
use planlog_core::{PlanSession, SessionId};
use planlog_store::RedbLog;
use planlog_store::host::{AsyncPlanSession, SystemEnv};

fn step(id: &str, content: &str, status: &str) -> String {
    format!(r#"{{"steps":[{{"id":"{id}","content":"{content}","status":"{status}"}}]}}"#)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let log = RedbLog::open(dir.path().join("planlog.redb"))?;
    let builder = PlanSession::builder(log, SystemEnv);
    let plan = AsyncPlanSession::open(builder, &SessionId::new("async-demo")?).await?;

    // The agent loop awaits; nothing blocks the runtime's threads.
    let start = plan.before_request().await?;
    assert!(start.notice.is_none());
    let _request = plan.inject(&["user: refactor the loader".to_owned()], |t| t);
    plan.plan_write(
        Some("c1"),
        Some(1),
        &step("1", "Split the loader", "in_progress"),
    )
    .await?
    .durable()?;

    // Clones drive the same session; concurrent calls are recorded one after the other.
    let (a, b) = (plan.clone(), plan.clone());
    let left = tokio::spawn(async move {
        a.plan_write(
            Some("c2"),
            Some(1),
            &step("2", "Write tests", "in_progress"),
        )
        .await
    });
    let right = tokio::spawn(async move {
        // Both items are started: the merge keeps started items a call omits, so the plan
        // holds both whichever call is recorded first (an omitted pending item would go).
        b.plan_write(
            Some("c3"),
            Some(1),
            &step("3", "Update docs", "in_progress"),
        )
        .await
    });
    left.await??.durable()?;
    right.await??.durable()?;
    assert_eq!(plan.plan().len(), 3);

    // A sub-agent plans on its own in-memory log; it never blocks, so drive it directly.
    let mut child = plan.delegate(&["read_file", "plan_write"]).await??;
    child
        .plan_write(None, None, &step("t1", "List error cases", "in_progress"))
        .durable()?;
    assert_eq!(plan.plan().len(), 3, "the parent's plan is untouched");

    plan.turn_closed().await?;
    println!("{}", plan.plan_text());
    Ok(())
}
