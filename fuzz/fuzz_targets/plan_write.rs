//! plan_write against a deliberately naive model: argument parsing, decide and apply on
//! structured call sequences (compared with the model), and on raw argument text (must never
//! panic, must never change the plan when rejected).
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use planlog_core::{Plan, events::EventBody, rules::execute_plan_write};
use serde_json::json;

#[derive(Debug, Arbitrary)]
struct Step {
    id: u8,
    content: u8,
    status: u8,
}

#[derive(Debug, Arbitrary)]
enum Call {
    Steps(Vec<Step>),
    Raw(String),
}

type Item = (String, String, String);

const STATUSES: [&str; 5] = ["pending", "in_progress", "completed", "cancelled", "done"];

/// The rules, written the slow obvious way. None = rejected.
///
/// Deliberately independent of the naive model in `core/tests/properties.rs` (two models
/// written separately are less likely to share a misreading); change both when a rule
/// changes.
fn naive(prev: &[Item], steps: &[Item]) -> Option<Vec<Item>> {
    if steps.iter().any(|s| !STATUSES[..4].contains(&s.2.as_str())) {
        return None;
    }
    for (i, s) in steps.iter().enumerate() {
        if steps[..i].iter().any(|t| t.0 == s.0) {
            return None;
        }
    }
    let status_of = |id: &str| prev.iter().find(|p| p.0 == id).map(|p| p.2.as_str());
    let mut direct = 0;
    for s in steps.iter().filter(|s| s.2 == "completed") {
        match status_of(&s.0) {
            None | Some("pending") => direct += 1,
            Some("cancelled") => return None,
            _ => {}
        }
    }
    if direct > 1 {
        return None;
    }
    let mut out: Vec<Item> = Vec::new();
    for p in prev {
        match steps.iter().find(|s| s.0 == p.0) {
            Some(s) => out.push(s.clone()),
            None if p.2 == "in_progress" || p.2 == "completed" => out.push(p.clone()),
            None => {}
        }
    }
    out.extend(steps.iter().filter(|s| !prev.iter().any(|p| p.0 == s.0)).cloned());
    (out.len() <= 200).then_some(out)
}

fn items(plan: &Plan) -> Vec<Item> {
    plan.items().iter().map(|i| (i.id.to_string(), i.content.clone(), i.status.as_str().to_owned())).collect()
}

fuzz_target!(|calls: Vec<Call>| {
    let mut plan = Plan::new();
    for call in calls.into_iter().take(32) {
        let before = plan.clone();
        match call {
            Call::Steps(steps) => {
                let steps: Vec<Item> = steps
                    .iter()
                    .take(12)
                    .map(|s| (format!("i{}", s.id % 8), format!("c{}", s.content % 3), STATUSES[usize::from(s.status) % 5].to_owned()))
                    .collect();
                let args = json!({ "steps": steps.iter().map(|(i, c, s)| json!({"id": i, "content": c, "status": s})).collect::<Vec<_>>() }).to_string();
                let exec = execute_plan_write(&plan, &args);
                let expected = if steps.is_empty() { Some(items(&plan)) } else { naive(&items(&plan), &steps) };
                match (&exec.plan, expected) {
                    (Some(next), Some(want)) => {
                        assert_eq!(items(next), want, "diverged from the naive model");
                        plan = next.clone();
                    }
                    (None, Some(want)) if steps.is_empty() => assert_eq!(items(&plan), want),
                    (None, None) => assert!(exec.result.is_error),
                    (got, want) => panic!("diverged: got {got:?}, model says {want:?}"),
                }
            }
            Call::Raw(text) => {
                let exec = execute_plan_write(&plan, &text);
                match (&exec.event, &exec.plan) {
                    (Some(EventBody::PlanWritten(w)), Some(next)) => {
                        assert_eq!(&w.plan, next);
                        plan = next.clone();
                    }
                    (Some(EventBody::WriteRejected(_)), None) => assert!(exec.result.is_error),
                    (None, None) => assert!(!exec.result.is_error),
                    other => panic!("inconsistent execution: {other:?}"),
                }
            }
        }
        if plan != before {
            // Ids stay unique.
            let mut ids: Vec<_> = plan.items().iter().map(|i| &i.id).collect();
            ids.sort();
            ids.dedup();
            assert_eq!(ids.len(), plan.len());
        }
    }
});
