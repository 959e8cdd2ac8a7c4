//! The pure decision: a plan_write call against the current plan gives either the new plan
//! (to be recorded as a `plan_written` event) or a [`Rejection`].
//!
//! Rules (REFERENCE-BEHAVIOUR.md § plan_write): anti-cheat over the submitted steps in order,
//! then the merge that never loses started work, then the 200-item limit on the result.

use std::collections::{HashMap, HashSet};

use super::call::WriteCall;
use super::ids::ItemId;
use super::limits::MAX_PLAN_ITEMS;
use super::plan::{Plan, PlanItem, PlanStatus};
use super::rejection::Rejection;

/// What a plan_write call does to the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// A read: nothing changes; the result is the current plan.
    Read,
    /// A write: record `submitted` and the merged `plan`.
    Write {
        /// The steps as the model sent them (validated).
        submitted: Vec<PlanItem>,
        /// The plan after the merge.
        plan: Plan,
    },
}

/// Decides a plan_write call against the current plan. Pure: same inputs, same answer.
///
/// # Errors
/// A [`Rejection`] when anti-cheat refuses the call or the merged plan would exceed
/// [`MAX_PLAN_ITEMS`] items. The plan is then unchanged.
pub fn decide(current: &Plan, call: &WriteCall) -> Result<Decision, Rejection> {
    let steps = match call {
        WriteCall::Read => return Ok(Decision::Read),
        WriteCall::Write(steps) => steps,
    };
    if let Some(breach) = anti_cheat_breaches(current, steps).into_iter().next() {
        return Err(breach.into_rejection());
    }
    let plan = merge(current, steps);
    if plan.len() > MAX_PLAN_ITEMS {
        return Err(Rejection::plan_too_large(plan.len()));
    }
    Ok(Decision::Write {
        submitted: steps.clone(),
        plan,
    })
}

/// A breach of the anti-cheat rules by a list of submitted steps.
///
/// `decide` rejects on the first finding; `verify` and `history` report them for imported
/// calls, which are recorded as they happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Breach {
    /// A cancelled item was submitted as completed (1-based step index and id).
    CancelledToCompleted {
        /// Position of the step in the call, from 1.
        position: usize,
        /// The item.
        id: ItemId,
    },
    /// More than one new or pending item went straight to completed.
    BulkCompletion {
        /// Each direct completion: position in the call (from 1) and id.
        completions: Vec<(usize, ItemId)>,
    },
}

impl Breach {
    /// The rejection `decide` gives for this finding.
    pub fn into_rejection(self) -> Rejection {
        match self {
            Breach::CancelledToCompleted { position, id } => {
                Rejection::cancelled_to_completed(position, id.as_str())
            }
            Breach::BulkCompletion { completions } => {
                let named: Vec<(usize, &str)> = completions
                    .iter()
                    .map(|(i, id)| (*i, id.as_str()))
                    .collect();
                Rejection::bulk_completion(&named)
            }
        }
    }

    /// One line for audit output, e.g. `bulk completion of 3 items (2, 3, 4)`; ids shown as
    /// [`shown_id`](super::text::shown_id) shows them.
    pub fn describe(&self) -> String {
        use super::text::shown_id;
        match self {
            Breach::CancelledToCompleted { id, .. } => {
                format!("cancelled -> completed ({})", shown_id(id.as_str()))
            }
            Breach::BulkCompletion { completions } => {
                let ids: Vec<_> = completions
                    .iter()
                    .map(|(_, id)| shown_id(id.as_str()))
                    .collect();
                format!(
                    "bulk completion of {} items ({})",
                    ids.len(),
                    ids.join(", ")
                )
            }
        }
    }
}

/// The anti-cheat findings of `steps` against `prev`, in harness9's order: the first
/// cancelled->completed step (harness9 returns at once when it meets one), then the bulk
/// completion (checked after the walk).
///
/// A step passes when its status is not `completed` (reopening is allowed) or when its prior
/// item was `in_progress` or `completed`; `completed` with no prior item or a `pending` one is
/// a *direct completion*; more than one of those is a bulk completion.
pub fn anti_cheat_breaches(prev: &Plan, steps: &[PlanItem]) -> Vec<Breach> {
    let prior: HashMap<&ItemId, PlanStatus> =
        prev.items().iter().map(|it| (&it.id, it.status)).collect();
    let mut direct = Vec::new();
    let mut breaches = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        if step.status != PlanStatus::Completed {
            continue;
        }
        match prior.get(&step.id) {
            None | Some(PlanStatus::Pending) => direct.push((i + 1, step.id.clone())),
            Some(PlanStatus::Cancelled) => {
                if breaches.is_empty() {
                    breaches.push(Breach::CancelledToCompleted {
                        position: i + 1,
                        id: step.id.clone(),
                    });
                }
            }
            Some(PlanStatus::InProgress | PlanStatus::Completed) => {}
        }
    }
    if direct.len() > 1 {
        breaches.push(Breach::BulkCompletion {
            completions: direct,
        });
    }
    breaches
}

/// harness9's `mergeWithPreservedCompleted`: walk the previous plan in order; a resubmitted
/// id takes its new content and status at its old position; an omitted `in_progress` or
/// `completed` item is kept as it was; an omitted `pending` or `cancelled` item is dropped;
/// then brand-new ids are appended in submission order.
pub fn merge(prev: &Plan, steps: &[PlanItem]) -> Plan {
    let submitted: HashMap<&ItemId, &PlanItem> = steps.iter().map(|s| (&s.id, s)).collect();
    let known: HashSet<&ItemId> = prev.items().iter().map(|it| &it.id).collect();
    let mut out = Vec::with_capacity(prev.len() + steps.len());
    for old in prev.items() {
        match submitted.get(&old.id) {
            Some(new) => out.push((*new).clone()),
            None if old.status.is_started() => out.push(old.clone()),
            None => {}
        }
    }
    out.extend(steps.iter().filter(|s| !known.contains(&s.id)).cloned());
    Plan::from_items(out)
}
