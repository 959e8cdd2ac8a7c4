//! given/when/then harness for plan_write: `given(events).when(call).then_*(...)`.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

use planlog_core::{
    ItemId, Plan, PlanItem, PlanStatus, SessionState,
    events::{EventBody, PlanWritten, WriteSemantics, fold_bodies},
    rules::{Execution, RejectionCode, execute_plan_write},
};
use serde_json::Value;

/// An item from (id, content, status).
pub fn it(id: &str, content: &str, status: &str) -> PlanItem {
    PlanItem::new(
        ItemId::new(id).unwrap(),
        content,
        PlanStatus::from_wire(status).unwrap(),
    )
}

/// A plan from (id, content, status) triples.
pub fn plan(items: &[(&str, &str, &str)]) -> Plan {
    Plan::from_items(items.iter().map(|(i, c, s)| it(i, c, s)).collect())
}

/// A recorded write that left the plan as `items`.
pub fn wrote(items: &[(&str, &str, &str)]) -> EventBody {
    let p = plan(items);
    EventBody::PlanWritten(PlanWritten {
        semantics: WriteSemantics::Merge,
        submitted: p.items().to_vec(),
        plan: p,
        explanation: None,
        source: None,
        ids_issued: None,
        tool_call: None,
    })
}

/// The state after these events.
pub fn given(events: &[EventBody]) -> Given {
    Given {
        state: fold_bodies(events),
    }
}

pub struct Given {
    state: SessionState,
}

impl Given {
    /// Runs plan_write with these arguments.
    pub fn when(self, args: Value) -> Then {
        self.when_raw(&args.to_string())
    }

    /// Runs plan_write with this raw argument text.
    pub fn when_raw(self, args: &str) -> Then {
        let exec = execute_plan_write(&self.state.plan, args);
        Then {
            before: self.state.plan,
            exec,
        }
    }
}

pub struct Then {
    pub before: Plan,
    pub exec: Execution,
}

impl Then {
    /// The call was accepted and left exactly this plan (recorded as `plan_written`, returned
    /// to the model as the JSON array).
    pub fn then_plan(self, expected: &[(&str, &str, &str)]) -> Self {
        let expected = plan(expected);
        assert!(
            !self.exec.result.is_error,
            "expected success, got: {}",
            self.exec.result.content
        );
        match &self.exec.event {
            Some(EventBody::PlanWritten(w)) => assert_eq!(w.plan, expected),
            other => panic!("expected a plan_written event, got {other:?}"),
        }
        assert_eq!(self.exec.plan.as_ref(), Some(&expected));
        // The whole plan as a JSON array, then (when the merge removed items the call left
        // out) a paragraph naming each of them.
        let (json, removed) = match self.exec.result.content.split_once("\n\n") {
            Some((json, note)) => (json, Some(note)),
            None => (self.exec.result.content.as_str(), None),
        };
        let returned: Vec<PlanItem> = serde_json::from_str(json).unwrap();
        assert_eq!(returned, expected.items());
        let gone: Vec<&PlanItem> = self
            .before
            .items()
            .iter()
            .filter(|i| expected.get(&i.id).is_none())
            .collect();
        match removed {
            None => assert!(
                gone.is_empty(),
                "the result names no removed item: {gone:?}"
            ),
            Some(note) => {
                assert!(
                    note.starts_with("Removed, because this call left them out"),
                    "{note}"
                );
                for item in gone {
                    assert!(
                        note.contains(&format!("{} ({}", item.id, item.status)),
                        "{note}"
                    );
                }
            }
        }
        self
    }

    /// The call was a read: no event, the current plan returned.
    pub fn then_read(self) -> Self {
        assert!(!self.exec.result.is_error, "{}", self.exec.result.content);
        assert_eq!(self.exec.event, None, "a read records nothing");
        assert_eq!(self.exec.plan, None);
        assert_eq!(self.exec.result.content, self.before.to_json());
        self
    }

    /// The call was rejected with `code`: an error result, a `write_rejected` event, no new
    /// plan. Returns the message for further checks.
    /// The result ends with `text` (after the plan).
    pub fn then_result_says(self, text: &str) -> Self {
        assert!(
            self.exec.result.content.ends_with(&format!("\n\n{text}")),
            "{}",
            self.exec.result.content
        );
        self
    }

    pub fn then_rejected(self, code: RejectionCode) -> String {
        assert!(
            self.exec.result.is_error,
            "expected a rejection, got: {}",
            self.exec.result.content
        );
        assert_eq!(self.exec.plan, None, "a rejected call changes nothing");
        match &self.exec.event {
            Some(EventBody::WriteRejected(r)) => {
                assert_eq!(r.code, code, "message: {}", r.message);
                assert_eq!(r.message, self.exec.result.content);
            }
            other => panic!("expected a write_rejected event, got {other:?}"),
        }
        assert!(self.exec.result.content.contains("Nothing was changed."));
        self.exec.result.content
    }

    /// The submission recorded in the rejection event.
    pub fn submitted(&self) -> Option<&Value> {
        match &self.exec.event {
            Some(EventBody::WriteRejected(r)) => Some(&r.submitted),
            _ => None,
        }
    }
}

impl Then {
    /// The plan the call left (it must have been accepted).
    pub fn plan(&self) -> &Plan {
        assert!(
            !self.exec.result.is_error,
            "expected success, got: {}",
            self.exec.result.content
        );
        self.exec.plan.as_ref().unwrap()
    }
}
