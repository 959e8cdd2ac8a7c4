//! A synchronous agent host on the durable store: plan, progress, a refused bulk
//! completion, a crash and a restart that restores the plan by replay.
use planlog_core::{PlanSession, SessionId};
use planlog_store::RedbLog;
use planlog_store::host::{PlanFiles, SystemEnv};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?; // your project's `.planlog/` in real life
    let path = dir.path().join("planlog.redb");
    let log = std::sync::Arc::new(RedbLog::open(&path)?); // Blocks: waits for other processes' locks
    let id = SessionId::new("yaml-config")?;
    let start = || {
        PlanSession::builder(log.clone(), SystemEnv)
            .sink(PlanFiles::beside(&path)) // the markdown plan file, rewritten after writes
            .open(&id) // resumed if it exists; created by its first write otherwise
    };
    let mut plan = start()?;
    let mut model_view = vec!["user: add YAML config loading".to_owned()];

    // Each step: the request boundary, the view with the plan injected, the model's call.
    let calls = [
        r#"{"steps":[{"id":"parse","content":"Write the parser","status":"in_progress"},
                     {"id":"load","content":"Implement load","status":"pending"},
                     {"id":"docs","content":"Document it","status":"pending"}]}"#,
        r#"{"steps":[{"id":"parse","content":"Write the parser","status":"completed"},
                     {"id":"load","content":"Implement load","status":"in_progress"}]}"#,
        // A bulk completion: refused, recorded, and the model is told why.
        r#"{"steps":[{"id":"load","content":"Implement load","status":"completed"},
                     {"id":"docs","content":"Document it","status":"completed"},
                     {"id":"ship","content":"Ship it","status":"completed"}]}"#,
    ];
    for (turn, args) in calls.iter().enumerate() {
        if let Some(notice) = plan.before_request().notice {
            model_view.push(notice);
        }
        let _request = plan.inject(&model_view, |text| format!("user: {text}"));
        // Blocks until durable; `durable()?` fails when storage did not take it.
        let result = plan
            .plan_write(Some(&format!("call-{turn}")), Some(1), args)
            .durable()?;
        model_view.push(format!("tool: {}", result.content));
        println!(
            "call {turn}: {}",
            if result.is_error { "refused" } else { "stored" }
        );
    }
    plan.turn_closed();

    // The process dies without closing; a new one replays the log.
    std::mem::forget(plan);
    let plan = start()?;
    println!("after the restart the model sees:\n{}", plan.plan_text());
    assert!(plan.plan_text().contains("[>] Implement load"));
    println!(
        "plan file: {}",
        PlanFiles::beside(&path).path_for(&id).display()
    );
    Ok(())
}
