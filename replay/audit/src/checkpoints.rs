//! Comparing a checkpoint (a list the agent's own record showed, Claude Code's
//! `task_reminder`) with the plan it belongs with.
//!
//! A checkpoint belongs with the plan after the last call that came before it in its source.
//! That is the event before it, unless the calls came another way: a hook recorded them live,
//! and a later import of the transcript appended the checkpoints after all of them. Such a
//! checkpoint names that call's seq (`against`), and is compared with the plan there
//! ([`Anchors`]).
//!
//! One list is no difference although it looks like one: Claude Code clears a list whose
//! items are all completed, so its next reminder is empty while the plan keeps them
//! completed.

use std::collections::{HashMap, HashSet};

use planlog_core::events::{CheckpointSeen, Event, EventBody};
use planlog_core::{EventLog, Plan, PlanItem, PlanStatus, Seq, SessionId};

use crate::history::{Transition, transitions};

/// How a checkpoint compares with its plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Compared {
    /// They agree.
    Agrees,
    /// They differ: the differences as one text.
    Differs(String),
    /// The plan it belongs with (at this seq) could not be read.
    Unknown(u64),
}

/// The differences between a checkpoint and the plan it belongs with, as one text (`None`
/// when they agree). Items the checkpoint does not cover (`besides`) are left out; of the
/// optional fields, the ones a checkpoint item does not show (a Claude Code `task_reminder`
/// shows no owner or metadata) are not compared; `blocked_by` always is. An empty checkpoint
/// agrees with a plan whose items are all completed (Claude Code clears a finished list).
pub fn checkpoint_differences(plan: &Plan, checkpoint: &CheckpointSeen) -> Option<String> {
    let seen = Plan::from_items(checkpoint.items.clone());
    let shown: Vec<PlanItem> = plan
        .items()
        .iter()
        .filter(|it| !checkpoint.besides.contains(&it.id))
        .map(|it| {
            let mut it = it.clone();
            if let Some(c) = seen.get(&it.id) {
                if c.description.is_none() {
                    it.description = None;
                }
                if c.active_form.is_none() {
                    it.active_form = None;
                }
                if c.owner.is_none() {
                    it.owner = None;
                }
                if c.metadata.is_none() {
                    it.metadata = None;
                }
            }
            it
        })
        .collect();
    if seen.is_empty() && shown.iter().all(|i| i.status == PlanStatus::Completed) {
        return None;
    }
    let differences = Transition::describe_all(&transitions(&Plan::from_items(shown), &seen));
    (!differences.is_empty()).then(|| differences.join("; "))
}

/// The plans checkpoints belong with, while a stretch of a session is read in order: the
/// plan before each checkpoint, or the one at the seq it names (`against`), kept as the
/// stretch passes it, else looked up (it is before the stretch).
pub struct Anchors<'a> {
    wanted: HashSet<Seq>,
    kept: HashMap<Seq, Plan>,
    earlier: &'a dyn Fn(Seq) -> Option<Plan>,
}

impl<'a> Anchors<'a> {
    /// For reading `events` in order; `earlier` gives the plan at a seq before them.
    pub fn new(events: &[Event], earlier: &'a dyn Fn(Seq) -> Option<Plan>) -> Self {
        let wanted = events
            .iter()
            .filter_map(|e| match &e.body {
                EventBody::CheckpointSeen(c) => c.against,
                _ => None,
            })
            .collect();
        Self {
            wanted,
            kept: HashMap::new(),
            earlier,
        }
    }

    /// The event at `seq` was read, leaving `plan`.
    pub fn passed(&mut self, seq: Seq, plan: &Plan) {
        if self.wanted.contains(&seq) {
            self.kept.insert(seq, plan.clone());
        }
    }

    /// How `checkpoint` compares with the plan it belongs with (`current`: the plan before
    /// it).
    pub fn compare(&self, current: &Plan, checkpoint: &CheckpointSeen) -> Compared {
        let looked_up;
        let plan = match checkpoint.against {
            None => current,
            Some(seq) => match self.kept.get(&seq) {
                Some(p) => p,
                None => match (self.earlier)(seq) {
                    Some(p) => {
                        looked_up = p;
                        &looked_up
                    }
                    None => return Compared::Unknown(seq.get()),
                },
            },
        };
        match checkpoint_differences(plan, checkpoint) {
            None => Compared::Agrees,
            Some(d) => Compared::Differs(d),
        }
    }
}

/// Looks up plans of session `id` in `log` at seqs before a stretch being read.
pub fn plans_in<'a>(log: &'a dyn EventLog, id: &'a SessionId) -> impl Fn(Seq) -> Option<Plan> + 'a {
    move |seq| log.state_at(id, seq).ok().map(|s| s.plan)
}

/// No plan before the stretch (it starts at the session's first event).
pub fn no_earlier(_: Seq) -> Option<Plan> {
    None
}
