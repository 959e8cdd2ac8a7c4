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
    /// The highest numeric item id this session has ever had (0 when none): the current
    /// plan's, or a removed item's. `task_create` gives the next number, so an id is never
    /// given twice, even after the task that had it was deleted (Claude Code's task lists
    /// keep a `.highwatermark` for the same reason). Known from the last plan-carrying event
    /// alone (its plan and its recorded `ids_issued`), so a state-at-seq lookup finds it.
    #[serde(default)]
    pub ids_issued: u64,
}

/// Folds one event into the state. Whole-value events replace; rejections change nothing.
pub fn apply(state: SessionState, body: &EventBody) -> SessionState {
    match body {
        EventBody::SessionStarted(s) => SessionState {
            plan: s.plan.clone(),
            plan_mode: s.plan_mode,
            ids_issued: ids_issued_after(body),
        },
        EventBody::PlanWritten(w) => SessionState {
            plan: w.plan.clone(),
            ids_issued: ids_issued_after(body),
            ..state
        },
        EventBody::WriteRejected(_)
        | EventBody::CheckpointSeen(_)
        | EventBody::SessionDescribed(_)
        | EventBody::ContextCompacted(_)
        | EventBody::PlanRestored(_) => state,
        EventBody::ModeSelected(m) => SessionState {
            plan_mode: m.active,
            ..state
        },
    }
}

/// [`apply`] taking the body: a plan it carries is moved into the state, not copied (for a
/// reader done with the event, such as `history`).
pub fn apply_owned(state: SessionState, body: EventBody) -> SessionState {
    let ids_issued = ids_issued_after(&body);
    match body {
        EventBody::SessionStarted(s) => SessionState {
            plan: s.plan,
            plan_mode: s.plan_mode,
            ids_issued,
        },
        EventBody::PlanWritten(w) => SessionState {
            plan: w.plan,
            ids_issued,
            ..state
        },
        other => apply(state, &other),
    }
}

/// The highest numeric id among `plan`'s items that planlog numbers from (0 when none is a
/// number up to [`MAX_TASK_NUMBER`](crate::domain::limits::MAX_TASK_NUMBER)).
pub fn highest_numeric_id(plan: &Plan) -> u64 {
    plan.items()
        .iter()
        .filter_map(|i| i.id.as_str().parse::<u64>().ok())
        .filter(|n| *n <= crate::domain::limits::MAX_TASK_NUMBER)
        .max()
        .unwrap_or(0)
}

/// [`SessionState::ids_issued`] after a plan-carrying event, from that event alone: its
/// recorded `ids_issued` or its plan's highest numeric id, whichever is higher (0 for
/// events without a plan). A state-at-seq lookup, which reads only that event, uses it.
pub fn ids_issued_after(body: &EventBody) -> u64 {
    body.plan().map_or(0, |plan| {
        highest_numeric_id(plan).max(body.ids_issued().unwrap_or(0))
    })
}

/// The `ids_issued` an event leaving `plan`, written after `before`, must record: the
/// session's highest id so far when it is higher than every id in `plan`, else none (the
/// plan shows it).
pub fn ids_issued_for(before: &SessionState, plan: &Plan) -> Option<u64> {
    (before.ids_issued > highest_numeric_id(plan)).then_some(before.ids_issued)
}

/// Sets on a plan-carrying `body` the `ids_issued` it must record after `before`
/// ([`ids_issued_for`]); other events are left as they are. Every writer of plan-carrying
/// events calls it (a live write, an import); a fork's first event gets the parent's.
pub fn stamp_ids_issued(before: &SessionState, body: &mut EventBody) {
    if let Some(plan) = body.plan() {
        let issued = ids_issued_for(before, plan);
        body.set_ids_issued(issued);
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
