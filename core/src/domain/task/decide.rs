//! One task write (create or update) decided against the session's state: the plan after, or
//! why it is refused.

use super::rules::{task_name, task_rejection, task_rules};
use super::types::{TaskCall, TaskStatus, apply_change, next_task_id, with_blocker};
use crate::domain::decide::{remove, upsert};
use crate::domain::event::WriteSemantics;
use crate::domain::ids::ItemId;
use crate::domain::plan::{Plan, PlanItem, PlanStatus};
use crate::domain::rejection::{Rejection, RejectionCode, UNCHANGED, quote};
use crate::domain::state::SessionState;

/// What a task write does: the semantics, the items submitted, the plan after, and the task
/// the call named as it was.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskWrite {
    /// `upsert` or `remove`.
    pub semantics: WriteSemantics,
    /// The whole items set (or, for a remove, the items as they were). The first is the task
    /// the call named (the new one, for a create).
    pub submitted: Vec<PlanItem>,
    /// The plan after.
    pub plan: Plan,
    /// The task the call named, before the call (`None` for a create).
    pub was: Option<PlanItem>,
}

/// The task `id` of `plan`, or the refusal that names no such task.
fn known(plan: &Plan, id: &ItemId) -> Result<PlanItem, Rejection> {
    plan.get(id).cloned().ok_or_else(|| {
        task_rejection(
            RejectionCode::UnknownTask,
            format!(
                "There is no {}. {UNCHANGED} Call task_list for the ids of the tasks.",
                task_name(id)
            ),
        )
    })
}

/// The write of `item` (which was `old`) into `plan`, within the task rules.
fn upserted(plan: &Plan, item: PlanItem, old: PlanItem) -> Result<TaskWrite, Rejection> {
    let after = upsert(plan, std::slice::from_ref(&item));
    if let Some(r) = task_rules(plan, &after, std::slice::from_ref(&item)) {
        return Err(r);
    }
    Ok(TaskWrite {
        semantics: WriteSemantics::Upsert,
        submitted: vec![item],
        plan: after,
        was: Some(old),
    })
}

/// Decides a task write (create or update) against the session's state `before`.
///
/// # Errors
/// A [`Rejection`] when the task is unknown or a rule is broken; the plan is unchanged.
pub fn decide_task_write(before: &SessionState, call: &TaskCall) -> Result<TaskWrite, Rejection> {
    let current = &before.plan;
    match call {
        TaskCall::Create(new) => {
            let Some(id) = next_task_id(before) else {
                return Err(task_rejection(
                    RejectionCode::NoTaskIdLeft,
                    format!(
                        "No task id is left: this session has used the highest number a task id can be ({}). {UNCHANGED} Start a new session for more tasks.",
                        crate::domain::limits::MAX_TASK_NUMBER
                    ),
                ));
            };
            let mut item = PlanItem::new(id.clone(), new.subject.clone(), PlanStatus::Pending);
            if let Some(d) = &new.description {
                item = item.with_description(d.clone());
            }
            if let Some(a) = &new.active_form {
                item = item.with_active_form(a.clone());
            }
            if let Some(m) = &new.metadata {
                item = item.with_metadata(m.clone());
            }
            let plan = upsert(current, std::slice::from_ref(&item));
            if let Some(r) = task_rules(current, &plan, std::slice::from_ref(&item)) {
                return Err(r);
            }
            Ok(TaskWrite {
                semantics: WriteSemantics::Upsert,
                submitted: vec![item],
                plan,
                was: None,
            })
        }
        TaskCall::Update { id, change } => {
            let old = known(current, id)?;
            if change.status == Some(TaskStatus::Deleted) {
                let plan = remove(current, std::slice::from_ref(id));
                return Ok(TaskWrite {
                    semantics: WriteSemantics::Remove,
                    submitted: vec![old.clone()],
                    plan,
                    was: Some(old),
                });
            }
            let mut submitted = vec![apply_change(old.clone(), change)];
            for other in &change.add_blocks {
                match current.get(other) {
                    Some(o) => submitted.push(with_blocker(o.clone(), id)),
                    None => {
                        return Err(task_rejection(
                            RejectionCode::UnknownBlocker,
                            format!(
                                "{} cannot block {}: there is no such task. {UNCHANGED} Call task_list for the ids.",
                                task_name(id),
                                task_name(other)
                            ),
                        ));
                    }
                }
            }
            let plan = upsert(current, &submitted);
            if let Some(r) = task_rules(current, &plan, &submitted) {
                return Err(r);
            }
            Ok(TaskWrite {
                semantics: WriteSemantics::Upsert,
                submitted,
                plan,
                was: Some(old),
            })
        }
        TaskCall::Claim { id, owner } => {
            let old = known(current, id)?;
            if !old.status.is_active() {
                return Err(task_rejection(
                    RejectionCode::TaskNotOpen,
                    format!(
                        "{} is {}: there is nothing to claim. {UNCHANGED}",
                        task_name(id),
                        old.status.as_str()
                    ),
                ));
            }
            let holder = old.owner.as_deref().filter(|o| !o.is_empty());
            if holder.is_some_and(|h| h != owner) {
                return Err(task_rejection(
                    RejectionCode::TaskHeld,
                    format!(
                        "{} is held by {}. {UNCHANGED} Claim another task (task_list with \"ready\": true lists the free ones), or ask its holder to hand it over (task_release with \"to\").",
                        task_name(id),
                        quote(holder.unwrap_or_default())
                    ),
                ));
            }
            let waiting = current.open_blockers(&old);
            if !waiting.is_empty() {
                let names: Vec<String> = waiting.iter().map(|b| task_name(b)).collect();
                return Err(task_rejection(
                    RejectionCode::TaskWaiting,
                    format!(
                        "{} waits for {}, not completed yet. {UNCHANGED} Claim a ready task instead (task_list with \"ready\": true).",
                        task_name(id),
                        names.join(", ")
                    ),
                ));
            }
            let mut item = old.clone();
            item.owner = Some(owner.clone());
            item.status = PlanStatus::InProgress;
            Ok(upserted(current, item, old)?)
        }
        TaskCall::Release { id, owner, to } => {
            let old = known(current, id)?;
            let holder = old.owner.as_deref().filter(|o| !o.is_empty());
            if holder != Some(owner.as_str()) {
                let held = match holder {
                    Some(h) => format!("it is held by {}", quote(h)),
                    None => "nobody holds it".to_owned(),
                };
                return Err(task_rejection(
                    RejectionCode::NotTaskHolder,
                    format!(
                        "{} cannot be released by {}: {held}. {UNCHANGED}",
                        task_name(id),
                        quote(owner)
                    ),
                ));
            }
            let mut item = old.clone();
            match to.as_deref().filter(|t| !t.is_empty()) {
                // Handed over: the new holder goes on with it.
                Some(to) => item.owner = Some(to.to_owned()),
                // Given up: free again.
                None => {
                    item.owner = None;
                    if item.status == PlanStatus::InProgress {
                        item.status = PlanStatus::Pending;
                    }
                }
            }
            Ok(upserted(current, item, old)?)
        }
        TaskCall::Get { .. } | TaskCall::List { .. } => Err(task_rejection(
            RejectionCode::UnknownArgument,
            "task_get and task_list only read.".to_owned(),
        )),
    }
}
