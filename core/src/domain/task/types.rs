//! A task call and its parts, what a change does to one item, and the id the next task gets.

use serde_json::{Map, Value};

use crate::domain::ids::ItemId;
use crate::domain::plan::{Plan, PlanItem, PlanStatus};
use crate::domain::state::{SessionState, highest_numeric_id};

/// A new task.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NewTask {
    /// What to do.
    pub subject: String,
    /// More detail.
    pub description: Option<String>,
    /// Shown while in progress.
    pub active_form: Option<String>,
    /// Kept as it is.
    pub metadata: Option<Map<String, Value>>,
}

/// A status a task update sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskStatus {
    /// One of the plan's statuses.
    Set(PlanStatus),
    /// The task is deleted (it leaves the plan and every other task's `blocked_by`).
    Deleted,
}

/// What a task update changes; absent fields are kept.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TaskChange {
    /// A new subject.
    pub subject: Option<String>,
    /// A new description.
    pub description: Option<String>,
    /// A new active form.
    pub active_form: Option<String>,
    /// A new owner (empty: none).
    pub owner: Option<String>,
    /// A new status.
    pub status: Option<TaskStatus>,
    /// Tasks this one now blocks (each gains this one in its `blocked_by`).
    pub add_blocks: Vec<ItemId>,
    /// Tasks that now block this one.
    pub add_blocked_by: Vec<ItemId>,
    /// Every task that blocks this one, replacing the list (Gemini CLI's tracker_update_task
    /// sends its whole `dependencies`); applied before `add_blocked_by`.
    pub blocked_by: Option<Vec<ItemId>>,
    /// Metadata keys merged in; a `null` value deletes the key.
    pub metadata: Option<Map<String, Value>>,
}

/// One task call, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskCall {
    /// Add a task.
    Create(NewTask),
    /// Change or delete a task.
    Update {
        /// The task.
        id: ItemId,
        /// What changes.
        change: TaskChange,
    },
    /// Read a task.
    Get {
        /// The task.
        id: ItemId,
    },
    /// Read every task (`ready`: only the ready ones: pending, unowned, every blocker
    /// completed).
    List {
        /// Only ready work.
        ready: bool,
    },
    /// Take an unowned, open task that waits for nothing: it gets `owner` and starts (in
    /// progress). Claiming a task one holds already changes nothing.
    Claim {
        /// The task.
        id: ItemId,
        /// Who claims it.
        owner: String,
    },
    /// Give a held task up (back to pending, unowned) or, with `to`, hand it over (the new
    /// holder goes on with it). Only its holder can.
    Release {
        /// The task.
        id: ItemId,
        /// Who holds it.
        owner: String,
        /// Who gets it, when it is handed over.
        to: Option<String>,
    },
}

/// Whether `item` is ready work in `plan`: pending, owned by nobody, and every task it waits
/// for completed.
pub fn is_ready(plan: &Plan, item: &PlanItem) -> bool {
    item.status == PlanStatus::Pending
        && item.owner.as_deref().is_none_or(str::is_empty)
        && plan.open_blockers(item).is_empty()
}

/// `item` with `change` applied (all but a `Deleted` status; no rule is checked here).
pub fn apply_change(mut item: PlanItem, change: &TaskChange) -> PlanItem {
    if let Some(s) = &change.subject {
        item.content = s.clone();
    }
    if let Some(d) = &change.description {
        item = item.with_description(d.clone());
    }
    if let Some(a) = &change.active_form {
        item = item.with_active_form(a.clone());
    }
    if let Some(o) = &change.owner {
        item = item.with_owner(o.clone());
    }
    if let Some(TaskStatus::Set(s)) = change.status {
        item.status = s;
    }
    if let Some(list) = &change.blocked_by {
        item = item.with_blocked_by(list.clone());
    }
    for b in &change.add_blocked_by {
        item = with_blocker(item, b);
    }
    if let Some(changes) = &change.metadata {
        let mut map = item.metadata.clone().unwrap_or_default();
        for (k, v) in changes {
            if v.is_null() {
                map.remove(k);
            } else {
                map.insert(k.clone(), v.clone());
            }
        }
        item = item.with_metadata(map);
    }
    item
}

/// `item`, also waiting for `blocker` (once).
pub fn with_blocker(item: PlanItem, blocker: &ItemId) -> PlanItem {
    if item.blockers().contains(blocker) {
        return item;
    }
    let mut list = item.blockers().to_vec();
    list.push(blocker.clone());
    item.with_blocked_by(list)
}

/// The id the next created task gets: one more than the highest numeric id the session has
/// ever had ([`SessionState::ids_issued`]; "1" for the first), so a deleted task's id is
/// never given again. `None` when no number is left (the session reached
/// [`MAX_TASK_NUMBER`](crate::domain::limits::MAX_TASK_NUMBER)).
pub fn next_task_id(state: &SessionState) -> Option<ItemId> {
    let highest = state.ids_issued.max(highest_numeric_id(&state.plan));
    highest
        .checked_add(1)
        .filter(|n| *n <= crate::domain::limits::MAX_TASK_NUMBER)
        .map(ItemId::from_number)
}
