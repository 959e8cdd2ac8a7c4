//! `planlog demo`: a scripted agent session against the store, narrated, ending with the
//! commands to try on what it wrote.

use std::sync::Arc;

use planlog_core::{PlanSession, Seq, SessionId};
use planlog_store::host::{PlanFiles, SystemEnv};
use serde_json::json;

use crate::support::failure::Failure;
use crate::support::open::Store;
use crate::support::output::{Out, style};

/// The plan as the terminal block, in the colour stdout gets.
fn block(plan: &planlog_core::Plan) -> String {
    planlog_core::render::render_block(plan, style())
}

fn steps(items: &[(&str, &str, &str)]) -> String {
    let steps: Vec<_> = items
        .iter()
        .map(|(id, content, status)| json!({"id": id, "content": content, "status": status}))
        .collect();
    json!({ "steps": steps }).to_string()
}

/// One plan_write of the scripted agent; the demo stops if the store cannot keep it.
fn demo_write(
    session: &mut PlanSession,
    call_id: Option<&str>,
    turn: Option<u64>,
    args: &str,
) -> Result<planlog_core::ToolResult, Failure> {
    session
        .plan_write(call_id, turn, args)
        .durable()
        .map_err(|e| Failure::cannot_run(format!("the demo could not record a plan write: {e}")))
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs the demo on `store`.
pub(crate) fn run(store: &Store) -> Result<(), Failure> {
    let path = store.path.as_path();
    let log = store.for_writing()?;
    let files = PlanFiles::beside(path);
    // The agent's session: resumed from the log whenever the "process" starts.
    let start = |id: &SessionId| {
        PlanSession::builder(Arc::clone(&log), SystemEnv)
            .label("planlog demo")
            .sink(files.clone())
            .open(id)
    };
    let id = SessionId::from_ulid(ulid::Ulid::new());
    let mut out = Out::new();
    let db = store.shown();
    out.line(format!(
        "planlog demo: a scripted agent session, recorded in {db}\n"
    ))?;

    let mut agent = start(&id)?;
    out.line(format!(
        "1. Session {id} starts. The task: \"add YAML config loading\". The agent drafts a plan:"
    ))?;
    let plan = [
        (
            "parser",
            "Create parser.go for config parsing",
            "in_progress",
        ),
        ("load", "Implement the load logic", "pending"),
        ("tests", "Write table tests for load", "pending"),
        ("docs", "Document the config format in README", "pending"),
    ];
    demo_write(&mut agent, Some("call_1"), Some(1), &steps(&plan))?;
    out.line(indent(&block(&agent.plan())))?;

    out.line("\n2. It finishes the parser and starts on the loader (each write is durable before the model sees the result):")?;
    demo_write(
        &mut agent,
        Some("call_2"),
        Some(2),
        &steps(&[
            ("parser", plan[0].1, "completed"),
            ("load", plan[1].1, "in_progress"),
            plan[2],
            plan[3],
        ]),
    )?;
    out.line(indent(&block(&agent.plan())))?;

    out.line("\n3. The model tries to mark the three remaining items completed at once (two were never started):")?;
    let forged = demo_write(
        &mut agent,
        Some("call_3"),
        Some(3),
        &steps(&[
            ("load", plan[1].1, "completed"),
            ("tests", plan[2].1, "completed"),
            ("docs", plan[3].1, "completed"),
        ]),
    )?;
    out.line(format!(
        "    refused (the model gets this as an error result):\n    {}",
        forged.content
    ))?;
    out.line("    The plan is unchanged; the attempt is in the log as write_rejected.")?;

    out.line(
        "\n4. The process crashes (no close). A new process opens the session and replays its log.",
    )?;
    std::mem::forget(agent);
    let mut agent = start(&id)?;
    out.line(
        "    Injected into the first request after the restart (never into the stored history):",
    )?;
    out.line(indent(&agent.plan_text()))?;

    out.line(
        "\n5. The agent delegates the tests to a sub-agent, which plans on its own in-memory log:",
    )?;
    let mut child = agent
        .delegate(&["read_file", "write_file", "plan_write"])
        .map_err(|e| Failure::cannot_run(e.to_string()))?;
    demo_write(
        &mut child,
        None,
        None,
        &steps(&[
            ("t1", "List the load error cases", "completed"),
            ("t2", "Write one table test per case", "in_progress"),
        ]),
    )?;
    out.line(indent(&block(&child.plan())))?;
    let stored = log.sessions()?.len();
    drop(child);
    out.line(format!("    Its plan died with it: the parent's plan is untouched and the store still holds {stored} session(s) of the demo's making so far."))?;

    out.line("\n6. Back in the main session, the loader is done and the tests start:")?;
    demo_write(
        &mut agent,
        Some("call_4"),
        Some(4),
        &steps(&[
            ("load", plan[1].1, "completed"),
            ("tests", plan[2].1, "in_progress"),
            plan[3],
        ]),
    )?;
    out.line(indent(&block(&agent.plan())))?;
    agent.close()?;

    let at = Seq::new(3).map_err(|e| Failure::cannot_run(e.to_string()))?;
    out.line(format!(
        "\n7. Fork the session at seq {at} (after the parser was done) to try another route:"
    ))?;
    let mut fork = agent.fork_at(at, Some("demo fork: JSON first"))?;
    demo_write(
        &mut fork,
        Some("fork_1"),
        Some(1),
        &steps(&[
            ("load", plan[1].1, "cancelled"),
            plan[2],
            plan[3],
            ("json", "Support JSON config first", "in_progress"),
        ]),
    )?;
    fork.close()?;
    out.line(format!("    fork {} (the parent is untouched):", fork.id()))?;
    out.line(indent(&block(&fork.plan())))?;

    let events = log.head(&id)?.map_or(0, |h| h.seq.get());
    out.line(format!("\nThe demo session has {events} events. Try:"))?;
    for cmd in [
        "sessions".to_owned(),
        format!("history {id}"),
        format!("show {id} --at 3"),
        format!("items {id}"),
        format!("diff {id} 2 {events}"),
        format!("replay {id}"),
        format!("history {}", fork.id()),
        "verify".to_owned(),
    ] {
        out.line(format!("    planlog --db {db} {cmd}"))?;
    }
    out.line(format!("    cat {}", files.path_for(&id).display()))?;
    out.line("(with cargo: cargo run -q --bin planlog -- --db ... COMMAND)")?;
    out.line(format!(
        "\nOr see it: `planlog --db {db} ui --open` serves a time-travel view of these sessions\nin the browser (step through the events, the refused bulk completion is marked in red,\nthe fork hangs under its parent)."
    ))?;
    Ok(())
}
