//! The rules a task write keeps: plan_write's where they apply (a cancelled task is not
//! completed directly, no dependency problem is added, the limits), worded for task calls.

use serde_json::Value;

use crate::domain::decide::{DependencyProblem, new_dependency_problem};
use crate::domain::ids::ItemId;
use crate::domain::limits::{
    MAX_CONTENT_LEN, MAX_DESCRIPTION_LEN, MAX_METADATA_BYTES, MAX_OWNER_LEN, MAX_PLAN_ITEMS,
};
use crate::domain::plan::{Plan, PlanItem, PlanStatus};
use crate::domain::rejection::{Rejection, RejectionCode, UNCHANGED, quote};

/// A refusal of a task call (no item named: task calls name their task in the message).
pub(crate) fn task_rejection(code: RejectionCode, message: String) -> Rejection {
    Rejection::new(code, None, message)
}

/// How messages name a task: `task #3`.
pub(crate) fn task_name(id: &ItemId) -> String {
    format!("task #{}", quote(id.as_str()).trim_matches('"'))
}

/// The rules a task write must keep, worded for task calls: a cancelled task is not completed
/// directly; the plan and each field within their limits; no dependency problem added.
pub fn task_rules(before: &Plan, after: &Plan, submitted: &[PlanItem]) -> Option<Rejection> {
    for item in submitted {
        let prior = before.get(&item.id).map(|i| i.status);
        if prior == Some(PlanStatus::Cancelled) && item.status == PlanStatus::Completed {
            return Some(task_rejection(
                RejectionCode::CancelledToCompleted,
                format!(
                    "{} was cancelled and cannot be marked completed directly. {UNCHANGED} If you are doing it after all, set it to in_progress first, then completed.",
                    task_name(&item.id)
                ),
            ));
        }
        let len = item.content.chars().count();
        if item.content.trim().is_empty() {
            return Some(task_rejection(
                RejectionCode::EmptyContent,
                format!(
                    "The subject of {} is empty. {UNCHANGED} Give it a subject: what to do, in a few words.",
                    task_name(&item.id)
                ),
            ));
        }
        if len > MAX_CONTENT_LEN {
            return Some(task_rejection(
                RejectionCode::ContentTooLong,
                format!(
                    "The subject of {} is {len} characters; the limit is {MAX_CONTENT_LEN}. {UNCHANGED} Keep the subject short and put details in \"description\".",
                    task_name(&item.id)
                ),
            ));
        }
        let too_long = |field: &str, len: usize, max: usize| {
            (len > max).then(|| {
                task_rejection(
                    RejectionCode::FieldTooLong,
                    format!(
                        "{}: {field:?} is {len} long; the limit is {max}. {UNCHANGED} Shorten it.",
                        task_name(&item.id)
                    ),
                )
            })
        };
        let metadata_len = item
            .metadata
            .as_ref()
            .map_or(0, |m| Value::Object(m.clone()).to_string().len());
        if let Some(r) = too_long(
            "description",
            item.description.as_deref().map_or(0, |d| d.chars().count()),
            MAX_DESCRIPTION_LEN,
        )
        .or_else(|| {
            too_long(
                "owner",
                item.owner.as_deref().map_or(0, |o| o.chars().count()),
                MAX_OWNER_LEN,
            )
        })
        .or_else(|| too_long("metadata", metadata_len, MAX_METADATA_BYTES))
        {
            return Some(r);
        }
    }
    if after.len() > MAX_PLAN_ITEMS {
        return Some(Rejection::plan_too_large(after.len()));
    }
    match new_dependency_problem(before, after)? {
        DependencyProblem::SelfBlocked(id) => Some(task_rejection(
            RejectionCode::SelfBlocked,
            format!(
                "{} cannot be blocked by itself. {UNCHANGED} Leave it out of \"addBlockedBy\".",
                task_name(&id)
            ),
        )),
        DependencyProblem::UnknownBlocker { item, blocker } => Some(task_rejection(
            RejectionCode::UnknownBlocker,
            format!(
                "{} cannot wait for {}: there is no such task. {UNCHANGED} Call task_list for the ids, or create that task first.",
                task_name(&item),
                task_name(&blocker)
            ),
        )),
        DependencyProblem::Cycle(cycle) => {
            let path: Vec<String> = cycle.iter().chain(cycle.first()).map(task_name).collect();
            Some(task_rejection(
                RejectionCode::DependencyCycle,
                format!(
                    "That would make tasks wait for each other in a circle, so none could start: {}. {UNCHANGED} Decide which comes first and leave out the edge that closes the circle.",
                    path.join(" waits for ")
                ),
            ))
        }
    }
}
