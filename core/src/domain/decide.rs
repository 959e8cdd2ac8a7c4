//! The pure decision: a plan_write call against the current plan gives either the new plan
//! (to be recorded as a `plan_written` event) or a [`Rejection`].
//!
//! Rules (REFERENCE-BEHAVIOUR.md § plan_write): anti-cheat over the submitted items in order,
//! then the merge that never loses started work, then the dependency rules and the 200-item
//! limit on the result. Also here: the whole-item operations imports record (`upsert`,
//! `remove`), and the [`Breach`]es audit views flag.

use std::collections::{HashMap, HashSet};

use super::call::WriteCall;
use super::ids::ItemId;
use super::limits::{MAX_CONTENT_LEN, MAX_PLAN_ITEMS};
use super::plan::{Plan, PlanItem, PlanStatus};
use super::rejection::Rejection;
use super::text::chars_beyond;

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
    if let Some(rejection) = anti_cheat_breaches(current, steps)
        .iter()
        .find_map(Breach::rejection)
    {
        return Err(rejection);
    }
    let plan = merge(current, steps);
    if plan.len() > MAX_PLAN_ITEMS {
        return Err(Rejection::plan_too_large(plan.len()));
    }
    if let Some(rejection) = dependency_rejection(current, &plan) {
        return Err(rejection);
    }
    Ok(Decision::Write {
        submitted: steps.clone(),
        plan,
    })
}

/// Something an audit flags about a recorded write. The anti-cheat ones refuse a live call;
/// imported calls are recorded as they happened, so every kind is flagged there; starting an
/// item before its blockers are done is allowed but always flagged.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Breach {
    /// A cancelled item was submitted as completed.
    CancelledToCompleted {
        /// Position of the item in the call, from 1.
        position: usize,
        /// The item.
        id: ItemId,
    },
    /// More than one new or pending item went straight to completed.
    BulkCompletion {
        /// Each direct completion: position in the call (from 1) and id.
        completions: Vec<(usize, ItemId)>,
    },
    /// The plan holds more items than the limit (imports only).
    TooManyItems {
        /// How many.
        count: usize,
    },
    /// An item's content is longer than the limit (imports only).
    ContentTooLong {
        /// The item.
        id: ItemId,
        /// Its length in characters.
        len: usize,
    },
    /// An item's content is empty (imports only).
    EmptyContent {
        /// The item.
        id: ItemId,
    },
    /// An item was started or completed while items it is blocked by were not completed.
    StartedWhileBlocked {
        /// The item.
        id: ItemId,
        /// Its blockers not completed at that point.
        blockers: Vec<ItemId>,
    },
}

impl Breach {
    /// The rejection a live plan_write gets for this breach, for the anti-cheat ones.
    pub fn rejection(&self) -> Option<Rejection> {
        match self {
            Breach::CancelledToCompleted { position, id } => {
                Some(Rejection::cancelled_to_completed(*position, id.as_str()))
            }
            Breach::BulkCompletion { completions } => {
                let named: Vec<(usize, &str)> = completions
                    .iter()
                    .map(|(i, id)| (*i, id.as_str()))
                    .collect();
                Some(Rejection::bulk_completion(&named))
            }
            Breach::TooManyItems { .. }
            | Breach::ContentTooLong { .. }
            | Breach::EmptyContent { .. }
            | Breach::StartedWhileBlocked { .. } => None,
        }
    }

    /// One line for audit output, e.g. `bulk completion of 3 items (2, 3, 4)`; ids shown as
    /// [`shown_id`](super::text::shown_id) shows them.
    pub fn describe(&self) -> String {
        self.describe_with(&|id| super::text::shown_id(id.as_str()).into_owned())
    }

    /// [`Breach::describe`] with items named by `name` (an audit names them by their text
    /// too: `bulk completion of 2 items (t3 "Add tests", t7 "Ship it")`).
    pub fn describe_with(&self, name: &dyn Fn(&ItemId) -> String) -> String {
        let ids =
            |list: &[ItemId]| -> String { list.iter().map(name).collect::<Vec<_>>().join(", ") };
        match self {
            Breach::CancelledToCompleted { id, .. } => {
                format!("cancelled -> completed ({})", name(id))
            }
            Breach::BulkCompletion { completions } => {
                let list: Vec<ItemId> = completions.iter().map(|(_, id)| id.clone()).collect();
                format!("bulk completion of {} items ({})", list.len(), ids(&list))
            }
            Breach::TooManyItems { count } => {
                format!("{count} items, over the limit of {MAX_PLAN_ITEMS}")
            }
            Breach::ContentTooLong { id, len } => format!(
                "content of {} is {len} characters, over the limit of {MAX_CONTENT_LEN}",
                name(id)
            ),
            Breach::EmptyContent { id } => format!("empty content ({})", name(id)),
            Breach::StartedWhileBlocked { id, blockers } => format!(
                "started while blocked: {} waits for {}",
                name(id),
                ids(blockers)
            ),
        }
    }
}

/// The limit breaches of a plan an import recorded as it was (live calls are refused
/// before they could record one).
pub fn limit_breaches(plan: &Plan) -> Vec<Breach> {
    let mut out = Vec::new();
    if plan.len() > MAX_PLAN_ITEMS {
        out.push(Breach::TooManyItems { count: plan.len() });
    }
    for item in plan.items() {
        if item.content.trim().is_empty() {
            out.push(Breach::EmptyContent {
                id: item.id.clone(),
            });
        } else if let Some(len) = chars_beyond(&item.content, MAX_CONTENT_LEN) {
            out.push(Breach::ContentTooLong {
                id: item.id.clone(),
                len,
            });
        }
    }
    out
}

/// Items a write moved to `in_progress` or `completed` (from another status, or new) while
/// some of their blockers were not completed in the resulting plan.
pub fn blocked_starts(before: &Plan, after: &Plan) -> Vec<Breach> {
    after
        .items()
        .iter()
        .filter(|item| {
            item.status.is_started() && before.get(&item.id).is_none_or(|b| b.status != item.status)
        })
        .filter_map(|item| {
            let open = after.open_blockers(item);
            (!open.is_empty()).then(|| Breach::StartedWhileBlocked {
                id: item.id.clone(),
                blockers: open.into_iter().cloned().collect(),
            })
        })
        .collect()
}

/// The anti-cheat findings of `steps` against `prev`, in harness9's order: the first
/// cancelled->completed step (harness9 returns at once when it meets one), then the bulk
/// completion (checked after the walk).
///
/// A step passes when its status is not `completed` (reopening is allowed) or when its prior
/// item was `in_progress` or `completed`; `completed` with no prior item or a `pending` one is
/// a *direct completion*; more than one of those is a bulk completion.
pub fn anti_cheat_breaches(prev: &Plan, steps: &[PlanItem]) -> Vec<Breach> {
    let prior = prev.finder();
    let mut direct = Vec::new();
    let mut breaches = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        if step.status != PlanStatus::Completed {
            continue;
        }
        match prior.get(&step.id).map(|it| it.status) {
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
///
/// The optional fields of a resubmitted item: a field it sends replaces the old value (an
/// empty string, list or object clears it), a field it leaves out keeps the old value.
pub fn merge(prev: &Plan, steps: &[PlanItem]) -> Plan {
    let submitted: HashMap<&ItemId, &PlanItem> = steps.iter().map(|s| (&s.id, s)).collect();
    let known: HashSet<&ItemId> = prev.items().iter().map(|it| &it.id).collect();
    let mut out = Vec::with_capacity(prev.len() + steps.len());
    for old in prev.items() {
        match submitted.get(&old.id) {
            Some(new) => out.push(combine(Some(old), new)),
            None if old.status.is_started() => out.push(old.clone()),
            None => {}
        }
    }
    out.extend(
        steps
            .iter()
            .filter(|s| !known.contains(&s.id))
            .map(|s| combine(None, s)),
    );
    Plan::from_items(out)
}

/// `new` over `old`: its id, content and status; each optional field it sends (empty clears),
/// else the old one.
fn combine(old: Option<&PlanItem>, new: &PlanItem) -> PlanItem {
    fn text(new: &Option<String>, old: Option<&Option<String>>) -> Option<String> {
        match new {
            Some(s) if s.is_empty() => None,
            Some(s) => Some(s.clone()),
            None => old.cloned().flatten(),
        }
    }
    let mut item = PlanItem::new(new.id.clone(), new.content.clone(), new.status);
    item.description = text(&new.description, old.map(|o| &o.description));
    item.active_form = text(&new.active_form, old.map(|o| &o.active_form));
    item.owner = text(&new.owner, old.map(|o| &o.owner));
    item.blocked_by = match &new.blocked_by {
        Some(list) if list.is_empty() => None,
        Some(list) => Some(list.clone()),
        None => old.and_then(|o| o.blocked_by.clone()),
    };
    item.metadata = match &new.metadata {
        Some(map) if map.is_empty() => None,
        Some(map) => Some(map.clone()),
        None => old.and_then(|o| o.metadata.clone()),
    };
    item
}

/// Whole items set as they are (imports of per-item task tools): each replaces the item with
/// its id in place, or is appended when new. Items must already be normalised.
pub fn upsert(prev: &Plan, items: &[PlanItem]) -> Plan {
    let mut out = prev.items().to_vec();
    for item in items {
        match out.iter_mut().find(|it| it.id == item.id) {
            Some(slot) => *slot = item.clone(),
            None => out.push(item.clone()),
        }
    }
    Plan::from_items(out)
}

/// Items removed (a deleted task): gone from the plan, and from every other item's
/// `blocked_by`.
pub fn remove(prev: &Plan, ids: &[ItemId]) -> Plan {
    let out = prev
        .items()
        .iter()
        .filter(|it| !ids.contains(&it.id))
        .map(|it| {
            let kept: Vec<ItemId> = it
                .blockers()
                .iter()
                .filter(|b| !ids.contains(b))
                .cloned()
                .collect();
            it.clone().with_blocked_by(kept)
        })
        .collect();
    Plan::from_items(out)
}

/// The dependency problems of a plan.
struct DependencyProblems {
    /// (item, blocker) pairs naming an item not in the plan.
    unknown: HashSet<(ItemId, ItemId)>,
    /// Items blocked by themselves.
    selfish: HashSet<ItemId>,
    /// One cycle, if there is any.
    cycle: Option<Vec<ItemId>>,
}

/// What is wrong with `plan`'s dependencies.
fn dependency_problems(plan: &Plan) -> DependencyProblems {
    let mut unknown = HashSet::new();
    let mut selfish = HashSet::new();
    for item in plan.items() {
        for b in item.blockers() {
            if *b == item.id {
                selfish.insert(item.id.clone());
            } else if plan.get(b).is_none() {
                unknown.insert((item.id.clone(), b.clone()));
            }
        }
    }
    DependencyProblems {
        unknown,
        selfish,
        cycle: find_cycle(plan),
    }
}

/// A cycle of two or more items through `blocked_by`, if there is one (depth-first search,
/// at most 200 items).
fn find_cycle(plan: &Plan) -> Option<Vec<ItemId>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    let index: HashMap<&ItemId, usize> = plan
        .items()
        .iter()
        .enumerate()
        .map(|(i, it)| (&it.id, i))
        .collect();
    let mut marks = vec![Mark::New; plan.len()];
    let mut path: Vec<usize> = Vec::new();
    fn visit(
        i: usize,
        plan: &Plan,
        index: &HashMap<&ItemId, usize>,
        marks: &mut Vec<Mark>,
        path: &mut Vec<usize>,
    ) -> Option<Vec<usize>> {
        marks[i] = Mark::Open;
        path.push(i);
        for b in plan.items()[i].blockers() {
            let Some(&j) = index.get(b) else { continue };
            if j == i {
                continue; // self-blocking is its own problem
            }
            match marks[j] {
                Mark::Open => {
                    let start = path.iter().position(|&p| p == j).unwrap_or(0);
                    return Some(path[start..].to_vec());
                }
                Mark::New => {
                    if let Some(c) = visit(j, plan, index, marks, path) {
                        return Some(c);
                    }
                }
                Mark::Done => {}
            }
        }
        path.pop();
        marks[i] = Mark::Done;
        None
    }
    for i in 0..plan.len() {
        if marks[i] == Mark::New
            && let Some(cycle) = visit(i, plan, &index, &mut marks, &mut path)
        {
            return Some(
                cycle
                    .into_iter()
                    .map(|i| plan.items()[i].id.clone())
                    .collect(),
            );
        }
    }
    None
}

/// A dependency problem a call would bring into a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DependencyProblem {
    /// The item is blocked by itself.
    SelfBlocked(ItemId),
    /// The item is blocked by an id that is not in the plan.
    UnknownBlocker {
        /// The blocked item.
        item: ItemId,
        /// The id it waits for.
        blocker: ItemId,
    },
    /// These items block each other in a circle, in order.
    Cycle(Vec<ItemId>),
}

/// The first dependency problem `after` has that `before` did not (a call is refused only
/// for what it breaks, not for what an import left behind).
pub fn new_dependency_problem(before: &Plan, after: &Plan) -> Option<DependencyProblem> {
    let was = dependency_problems(before);
    let now = dependency_problems(after);
    if let Some(item) = after
        .items()
        .iter()
        .find(|it| now.selfish.contains(&it.id) && !was.selfish.contains(&it.id))
    {
        return Some(DependencyProblem::SelfBlocked(item.id.clone()));
    }
    let mut unknown: Vec<&(ItemId, ItemId)> = now.unknown.difference(&was.unknown).collect();
    unknown.sort();
    if let Some((item, blocker)) = unknown.first() {
        return Some(DependencyProblem::UnknownBlocker {
            item: item.clone(),
            blocker: blocker.clone(),
        });
    }
    match (now.cycle, was.cycle) {
        (Some(cycle), None) => Some(DependencyProblem::Cycle(cycle)),
        _ => None,
    }
}

/// [`new_dependency_problem`] in plan_write's words.
fn dependency_rejection(before: &Plan, after: &Plan) -> Option<Rejection> {
    Some(match new_dependency_problem(before, after)? {
        DependencyProblem::SelfBlocked(item) => Rejection::self_blocked(item.as_str()),
        DependencyProblem::UnknownBlocker { item, blocker } => {
            Rejection::unknown_blocker(item.as_str(), blocker.as_str())
        }
        DependencyProblem::Cycle(cycle) => {
            let ids: Vec<&str> = cycle.iter().map(ItemId::as_str).collect();
            Rejection::dependency_cycle(&ids)
        }
    })
}
