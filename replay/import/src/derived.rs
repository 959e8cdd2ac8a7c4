//! What an import keeps about a session's history beyond its plan: the item id assigner of
//! whole lists ([`ItemIds`]), the last checkpoint the source showed (the base of an update
//! to a task created elsewhere), and the ids the last whole list set (what a task checkpoint
//! does not cover).
//!
//! A new session starts with nothing. A session imported before (a source that grew, a
//! session the hooks captured) gets it back from its stored events ([`Derived::replay`],
//! the last [`REPLAY_WINDOW`] of them), so the next call is read exactly as one import of the
//! whole source would read it: the same item ids, the same notes. It is built only when a call needs it (a whole list, a
//! checkpoint, an update to a task the plan lacks), so a hook recording a task call never
//! reads the session's history. A whole list whose items all keep their ids by what the last
//! list alone says ([`keep_all`](super::ids::keep_all): status changes, the common call) does
//! not need it either.

use std::collections::HashSet;

use planlog_core::events::{EventBody, WriteSemantics};
use planlog_core::{EventLog, ItemId, LogError, Seq, SessionId};

use super::ids::{ItemIds, Listed};
use super::record::Todo;

/// How many of a session's last events are read back: all of a session up to this length,
/// so the next call continues exactly as one import of the whole source would; for a longer
/// session, the assigner starts from the plan before these events (ids continue after its
/// highest `t<N>`; items dropped before them are not remembered), so reading back costs the
/// same on a session of a million events.
pub(crate) const REPLAY_WINDOW: u64 = 2_000;

/// The history-derived state of one session.
#[derive(Debug, Default)]
pub(crate) struct Derived {
    /// Ids for whole lists.
    pub item_ids: ItemIds,
    /// The items of the last checkpoint.
    pub checkpoint: Vec<Todo>,
    /// Ids the last whole list set (tasks created since are not among them).
    pub list_ids: HashSet<ItemId>,
}

/// A change an import makes to a session's derived state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Effect {
    /// A whole list was written, with these ids, texts and statuses.
    Listed(Vec<Listed>),
    /// A task was created: it is not one of the last list's items.
    Created(ItemId),
}

impl Derived {
    /// Applies `effect`.
    pub(crate) fn apply(&mut self, effect: Effect) {
        match effect {
            Effect::Listed(items) => {
                self.item_ids.observe(&items);
                self.list_ids = items.into_iter().map(|i| i.id).collect();
            }
            Effect::Created(id) => {
                self.list_ids.remove(&id);
            }
        }
    }

    /// The state after events 1..=`upto` of session `id` (its last [`REPLAY_WINDOW`] events
    /// read back).
    ///
    /// # Errors
    /// Store errors.
    pub(crate) fn replay(log: &dyn EventLog, id: &SessionId, upto: Seq) -> Result<Self, LogError> {
        let mut derived = Derived::default();
        let mut plan_ids: HashSet<ItemId> = HashSet::new();
        let first = upto.get().saturating_sub(REPLAY_WINDOW) + 1;
        let from = match (Seq::new(first), Seq::new(first.saturating_sub(1))) {
            // A longer session: start from the plan before the window.
            (Ok(from), Ok(before)) => {
                let plan = log.state_at(id, before)?.plan;
                derived.item_ids = ItemIds::resume(&plan);
                plan_ids = plan.items().iter().map(|i| i.id.clone()).collect();
                from
            }
            _ => Seq::FIRST,
        };
        for event in log.read(id, from, Some(upto))? {
            match &event.body {
                EventBody::PlanWritten(w) => {
                    match w.semantics {
                        WriteSemantics::Replace => {
                            derived.apply(Effect::Listed(
                                w.submitted.iter().map(Listed::from).collect(),
                            ));
                        }
                        WriteSemantics::Upsert => {
                            for item in &w.submitted {
                                if !plan_ids.contains(&item.id) {
                                    derived.apply(Effect::Created(item.id.clone()));
                                }
                            }
                        }
                        WriteSemantics::Merge | WriteSemantics::Remove => {}
                    }
                    plan_ids = w.plan.items().iter().map(|i| i.id.clone()).collect();
                }
                EventBody::CheckpointSeen(c) => {
                    derived.checkpoint = c.items.iter().map(Todo::from).collect();
                }
                _ => {}
            }
        }
        Ok(derived)
    }
}
