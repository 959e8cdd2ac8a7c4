//! What an import keeps about a session's history beyond its plan: the item id assigner of
//! whole lists ([`ItemIds`]), the last checkpoint the source showed (the base of an update
//! to a task created elsewhere), and the ids the last whole list set (what a task checkpoint
//! does not cover).
//!
//! A new session starts with nothing. A session imported before (a source that grew, a
//! session the hooks captured) gets it back from its stored events ([`Fold::replay`]: the
//! last [`REPLAY_WINDOW`] of them, or only those after what the
//! [history cache](super::history_cache) kept), so the next call is read exactly as one
//! import of the whole source would read it: the same item ids, the same notes. It is built
//! only when a call needs it (a whole list, a checkpoint, an update to a task the plan
//! lacks), so a hook recording a task call never reads the session's history. A whole list
//! whose items all keep their ids by what the last list alone says
//! ([`keep_all`](super::ids::keep_all): status changes, the common call) does not need it
//! either.

use std::collections::HashSet;

use planlog_core::events::{Event, EventBody, Head, WriteSemantics};
use planlog_core::{EventLog, ItemId, LogError, Seq, SessionId};

use super::history_cache::Saved;
use super::ids::{ItemIds, Listed};
use super::record::Todo;

/// How many of a session's last events are read back: all of a session up to this length,
/// so the next call continues exactly as one import of the whole source would; for a longer
/// session, the assigner starts from the plan before these events (ids continue after its
/// highest `t<N>`; items dropped before them are not remembered), so reading back costs the
/// same on a session of a million events.
pub(crate) const REPLAY_WINDOW: u64 = 2_000;

/// The history-derived state of one session.
#[derive(Debug, Default, Clone)]
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
}

/// The derived state as reading a session's events back builds it, event by event.
#[derive(Debug, Default)]
pub(crate) struct Fold {
    /// The state.
    pub derived: Derived,
    /// The ids of the plan after the last event taken: an upsert of another id created a task.
    pub plan_ids: HashSet<ItemId>,
}

impl Fold {
    /// The state after the event `head` of session `id`: from what `saved` kept, when the
    /// session's event at its seq still has its hash (reading only the events after it, none
    /// when it is `head`), else from the session's last [`REPLAY_WINDOW`] events.
    ///
    /// # Errors
    /// Store errors.
    pub(crate) fn replay(
        log: &dyn EventLog,
        id: &SessionId,
        head: Head,
        saved: Option<Saved>,
    ) -> Result<Self, LogError> {
        if let Some(saved) = saved
            && saved.seq <= head.seq
            && head.seq.get() - saved.seq.get() <= REPLAY_WINDOW
        {
            let mut fold = saved.fold;
            if (saved.seq, saved.hash) == (head.seq, head.hash) {
                return Ok(fold);
            }
            let events = log.read(id, saved.seq, Some(head.seq))?;
            if let Some((first, rest)) = events.split_first()
                && (first.seq, first.hash) == (saved.seq, saved.hash)
            {
                rest.iter().for_each(|e| fold.take(e));
                return Ok(fold);
            }
            tracing::debug!(session = %id, "the kept history is not this session's; reading it");
        }
        let mut fold = Fold::default();
        let first = head.seq.get().saturating_sub(REPLAY_WINDOW) + 1;
        let from = match (Seq::new(first), Seq::new(first.saturating_sub(1))) {
            // A longer session: start from the plan before the window.
            (Ok(from), Ok(before)) => {
                let plan = log.state_at(id, before)?.plan;
                fold.derived.item_ids = ItemIds::resume(&plan);
                fold.plan_ids = plan.items().iter().map(|i| i.id.clone()).collect();
                from
            }
            _ => Seq::FIRST,
        };
        for event in log.read(id, from, Some(head.seq))? {
            fold.take(&event);
        }
        Ok(fold)
    }

    /// Takes in the session's next event.
    pub(crate) fn take(&mut self, event: &Event) {
        match &event.body {
            EventBody::PlanWritten(w) => {
                match w.semantics {
                    WriteSemantics::Replace => {
                        self.derived.apply(Effect::Listed(
                            w.submitted.iter().map(Listed::from).collect(),
                        ));
                    }
                    WriteSemantics::Upsert => {
                        for item in &w.submitted {
                            if !self.plan_ids.contains(&item.id) {
                                self.derived.apply(Effect::Created(item.id.clone()));
                            }
                        }
                    }
                    WriteSemantics::Merge | WriteSemantics::Remove => {}
                }
                self.plan_ids = w.plan.items().iter().map(|i| i.id.clone()).collect();
            }
            EventBody::CheckpointSeen(c) => {
                self.derived.checkpoint = c.items.iter().map(Todo::from).collect();
            }
            _ => {}
        }
    }
}
