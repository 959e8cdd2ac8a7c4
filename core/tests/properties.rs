//! Property tests: random plan_write call sequences against a deliberately naive model.
//!
//! For every sequence: the fold of the emitted events equals the state decide saw; ids stay
//! unique; existing items never move; no started item disappears; at most one direct
//! completion per accepted call; a rejected call changes nothing; and accept/reject and the
//! resulting plan agree with the naive model.
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // test code

use planlog_core::{
    Plan, PlanItem, PlanStatus,
    events::{EventBody, fold_bodies},
    rules::execute_plan_write,
};
use proptest::prelude::*;
use serde_json::{Value, json};

/// The naive model: the rules as the reference page states them, written the slow,
/// obvious way with plain vectors of (id, content, status) strings.
///
/// Deliberately independent of the one in `fuzz/fuzz_targets/plan_write.rs`: two models
/// written separately from the reference page are less likely to share a misreading with
/// each other and with `decide`. Keep them apart; change both when a rule changes.
mod naive {
    pub type Item = (String, String, String);

    /// None when rejected, else the new plan.
    pub fn write(prev: &[Item], steps: &[Item]) -> Option<Vec<Item>> {
        let status_of = |id: &str| prev.iter().find(|p| p.0 == id).map(|p| p.2.as_str());
        let mut direct = 0;
        for s in steps {
            if s.2 != "completed" {
                continue;
            }
            match status_of(&s.0) {
                None | Some("pending") => direct += 1,
                Some("cancelled") => return None,
                _ => {}
            }
        }
        if direct > 1 {
            return None;
        }
        let mut out = Vec::new();
        for p in prev {
            if let Some(s) = steps.iter().find(|s| s.0 == p.0) {
                out.push(s.clone());
            } else if p.2 == "in_progress" || p.2 == "completed" {
                out.push(p.clone());
            }
        }
        for s in steps {
            if !prev.iter().any(|p| p.0 == s.0) {
                out.push(s.clone());
            }
        }
        if out.len() > 200 { None } else { Some(out) }
    }
}

fn to_naive(plan: &Plan) -> Vec<naive::Item> {
    plan.items()
        .iter()
        .map(|i| {
            (
                i.id.to_string(),
                i.content.clone(),
                i.status.as_str().to_owned(),
            )
        })
        .collect()
}

fn step_strategy() -> impl Strategy<Value = naive::Item> {
    (
        prop::sample::select(vec!["a", "b", "c", "d", "e", "f", "g"]),
        prop::sample::select(vec!["write", "test", "ship"]),
        prop::sample::select(vec!["pending", "in_progress", "completed", "cancelled"]),
    )
        .prop_map(|(i, c, s)| (i.to_owned(), c.to_owned(), s.to_owned()))
}

/// A call: a list of steps with unique ids (duplicates are an input error tested elsewhere),
/// or an empty list (a read).
fn call_strategy() -> impl Strategy<Value = Vec<naive::Item>> {
    prop::collection::vec(step_strategy(), 0..6).prop_map(|mut steps| {
        let mut seen = std::collections::HashSet::new();
        steps.retain(|s| seen.insert(s.0.clone()));
        steps
    })
}

fn args(steps: &[naive::Item]) -> String {
    let steps: Vec<Value> = steps
        .iter()
        .map(|(i, c, s)| json!({"id": i, "content": c, "status": s}))
        .collect();
    json!({ "steps": steps }).to_string()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_call_sequences_match_the_naive_model(calls in prop::collection::vec(call_strategy(), 1..25)) {
        let mut events: Vec<EventBody> = Vec::new();
        let mut model: Vec<naive::Item> = Vec::new();
        for steps in calls {
            let before = fold_bodies(&events).plan;
            prop_assert_eq!(to_naive(&before), model.clone(), "fold of events equals the model");
            let exec = execute_plan_write(&before, &args(&steps));
            if steps.is_empty() {
                prop_assert!(exec.event.is_none() && !exec.result.is_error, "empty steps is a read");
                prop_assert_eq!(exec.result.content, before.to_json());
                continue;
            }
            let expected = naive::write(&model, &steps);
            match (&exec.event, expected) {
                (Some(EventBody::PlanWritten(w)), Some(next)) => {
                    prop_assert_eq!(to_naive(&w.plan), next.clone());
                    check_invariants(&before, &w.plan, &w.submitted)?;
                    // The whole plan, and a word on what the merge removed, if anything.
                    let removed = before.items().iter().any(|i| w.plan.get(&i.id).is_none());
                    prop_assert!(exec.result.content.starts_with(&w.plan.to_json()));
                    prop_assert_eq!(exec.result.content.len() > w.plan.to_json().len(), removed);
                    model = next;
                }
                (Some(EventBody::WriteRejected(r)), None) => {
                    prop_assert!(exec.result.is_error);
                    prop_assert!(r.code.is_anti_cheat(), "only anti-cheat rejects well-formed calls here: {:?}", r.code);
                }
                (got, want) => prop_assert!(false, "diverged: got {:?}, model says {:?}", got, want),
            }
            // A rejected call's event folds to no change; an accepted one to the new plan.
            if let Some(e) = exec.event {
                events.push(e);
            }
        }
        prop_assert_eq!(to_naive(&fold_bodies(&events).plan), model);
    }
}

fn check_invariants(
    before: &Plan,
    after: &Plan,
    submitted: &[PlanItem],
) -> Result<(), TestCaseError> {
    // Ids stay unique.
    let mut ids: Vec<_> = after.items().iter().map(|i| &i.id).collect();
    ids.sort();
    ids.dedup();
    prop_assert_eq!(ids.len(), after.len(), "ids unique");
    // Existing items never move: survivors keep their relative order and come first.
    let survivors: Vec<_> = before
        .items()
        .iter()
        .filter(|i| after.get(&i.id).is_some())
        .map(|i| &i.id)
        .collect();
    let head: Vec<_> = after
        .items()
        .iter()
        .take(survivors.len())
        .map(|i| &i.id)
        .collect();
    prop_assert_eq!(
        survivors,
        head,
        "existing items keep their order, before new ones"
    );
    // No started item disappears.
    for old in before.items().iter().filter(|i| i.status.is_started()) {
        prop_assert!(
            after.get(&old.id).is_some(),
            "started item {} vanished",
            old.id
        );
    }
    // At most one direct completion per accepted call.
    let direct = submitted
        .iter()
        .filter(|s| s.status == PlanStatus::Completed)
        .filter(|s| {
            before
                .get(&s.id)
                .is_none_or(|p| p.status == PlanStatus::Pending)
        })
        .count();
    prop_assert!(direct <= 1, "{} direct completions accepted", direct);
    Ok(())
}
