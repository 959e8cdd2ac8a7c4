//! Plan mode with a reviewer that takes its time (a UI task asked over a channel), and a fork
//! at a seq that tries another route. The session is free while the user decides.
use planlog_core::plan_mode::ReviewOutcome;
use planlog_core::{PlanSession, Seq, SessionId};
use planlog_store::RedbLog;
use planlog_store::host::{AsyncPlanSession, SystemEnv};
use tokio::sync::{mpsc, oneshot};

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let log = RedbLog::open(dir.path().join("planlog.redb"))?;
    let plan = AsyncPlanSession::open(
        PlanSession::builder(log, SystemEnv),
        &SessionId::new("reviewed")?,
    )
    .await?;

    // The user's UI: shows each plan and answers when the person decides.
    let (ask, mut questions) = mpsc::channel::<(String, oneshot::Sender<ReviewOutcome>)>(1);
    let ui = tokio::spawn(async move {
        while let Some((plan_text, answer)) = questions.recv().await {
            println!("review requested:\n{plan_text}");
            let _ = answer.send(ReviewOutcome::Approve);
        }
    });

    plan.set_plan_mode(true).await?; // the user typed /plan
    plan.before_request().await?; // the model's next request is in plan mode
    let call = r##"{"plan": "# Loader refactor\n1. Split parsing from IO\n2. Add tests"}"##;
    let pending = match plan.begin_review(call).await? {
        Ok(pending) => pending,
        Err(refused) => return Err(refused.result.content.into()),
    };
    // While the person reads, the session is free: the agent can still read its plan.
    let (answer, answered) = oneshot::channel();
    ask.send((pending.plan().to_owned(), answer)).await?;
    assert!(plan.plan_text().is_empty());
    let outcome = answered.await?;
    let exit = plan.finish_review(pending, outcome).await?;
    assert_eq!(exit.result.content, r#"{"approved":true}"#);
    plan.before_request().await?; // plan mode ends at the next request boundary
    assert!(!plan.plan_mode().await?.active);

    // Two writes, then a fork at the first one to try another route.
    let write = |id: &str, content: &str| {
        format!(r#"{{"steps":[{{"id":"{id}","content":"{content}","status":"in_progress"}}]}}"#)
    };
    plan.plan_write(Some("c1"), Some(2), &write("1", "Split parsing from IO"))
        .await?
        .durable()?;
    plan.plan_write(Some("c2"), Some(2), &write("2", "Add tests"))
        .await?
        .durable()?;
    // The log so far: 1 session_started, 2 plan mode on, 3 plan mode off, 4 and 5 the writes.
    let after_first = Seq::new(4)?;
    let then = plan.state_at(after_first).await??; // time travel: one lookup
    assert_eq!(then.plan.len(), 1);
    let fork = plan.fork_at(after_first, Some("JSON first")).await?;
    fork.plan_write(Some("f1"), Some(1), &write("j", "Support JSON first"))
        .await?
        .durable()?;
    assert_eq!(
        fork.plan().len(),
        2,
        "the fork kept item 1 and added its own"
    );
    assert_eq!(plan.plan().len(), 2, "the parent is untouched");

    drop(ask);
    ui.await?;
    Ok(())
}
