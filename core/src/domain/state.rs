//! The fold: a session's state is its events applied in order. `apply` is total and
//! infallible; every rule was enforced before the event was made.

use serde::{Deserialize, Serialize};

use super::event::{Event, EventBody};
use super::plan::Plan;

/// What a session's log folds to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionState {
    /// The current plan.
    pub plan: Plan,
    /// Whether plan mode is on (the last `mode_selected`, false when none).
    pub plan_mode: bool,
}

/// Folds one event into the state. Whole-value events replace; rejections change nothing.
pub fn apply(state: SessionState, body: &EventBody) -> SessionState {
    match body {
        EventBody::SessionStarted(s) => SessionState {
            plan: s.plan.clone(),
            plan_mode: s.plan_mode,
        },
        EventBody::PlanWritten(w) => SessionState {
            plan: w.plan.clone(),
            ..state
        },
        EventBody::WriteRejected(_) | EventBody::CheckpointSeen(_) => state,
        EventBody::ModeSelected(m) => SessionState {
            plan_mode: m.active,
            ..state
        },
    }
}

/// Folds a whole (prefix of a) log.
pub fn fold<'a>(events: impl IntoIterator<Item = &'a Event>) -> SessionState {
    events
        .into_iter()
        .fold(SessionState::default(), |s, e| apply(s, &e.body))
}

/// Folds event bodies (no envelopes), e.g. in tests and when replaying drafts.
pub fn fold_bodies<'a>(bodies: impl IntoIterator<Item = &'a EventBody>) -> SessionState {
    bodies.into_iter().fold(SessionState::default(), apply)
}
