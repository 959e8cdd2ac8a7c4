//! Reading a log as history: what each write changed, each item's life, and the difference
//! between two points.

use std::collections::HashMap;

use planlog_core::{
    ItemId, Plan, PlanStatus, SessionState, apply,
    events::{Event, EventBody, Origin, WriteSemantics},
    render::{one_line, shown_id},
    rules::{Breach, anti_cheat_breaches},
};
use serde::Serialize;

/// One item's change between two plans.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum Transition {
    /// A new item.
    Added {
        /// Its id.
        id: ItemId,
        /// Its status.
        status: PlanStatus,
        /// Its content.
        content: String,
    },
    /// Its status changed.
    Status {
        /// Its id.
        id: ItemId,
        /// Before.
        from: PlanStatus,
        /// After.
        to: PlanStatus,
    },
    /// Its content was edited.
    Edited {
        /// Its id.
        id: ItemId,
        /// The new content.
        content: String,
    },
    /// It left the plan (an omitted pending or cancelled item, or an imported list without it).
    Dropped {
        /// Its id.
        id: ItemId,
        /// Its last status.
        status: PlanStatus,
        /// Its last content.
        content: String,
    },
}

impl Transition {
    /// One short text, e.g. `3: pending -> completed`. An id that is not plain letters,
    /// digits, `_ - .` is quoted, so it cannot pass for the punctuation around it.
    pub fn describe(&self) -> String {
        match self {
            Transition::Added { id, status, .. } => format!("{}: new {status}", shown(id)),
            Transition::Status { id, from, to } => format!("{}: {from} -> {to}", shown(id)),
            Transition::Edited { id, .. } => format!("{}: edited", shown(id)),
            Transition::Dropped { id, status, .. } => {
                format!("{}: {status} -> dropped", shown(id))
            }
        }
    }
}

/// An item id as audit lines show it (see [`shown_id`]).
pub fn shown(id: &ItemId) -> std::borrow::Cow<'_, str> {
    shown_id(id.as_str())
}

/// What changed from `before` to `after`, in `after`'s order, then the dropped items.
pub fn transitions(before: &Plan, after: &Plan) -> Vec<Transition> {
    let old: HashMap<&ItemId, (&String, PlanStatus)> = before
        .items()
        .iter()
        .map(|i| (&i.id, (&i.content, i.status)))
        .collect();
    let mut out = Vec::new();
    for item in after.items() {
        match old.get(&item.id) {
            None => out.push(Transition::Added {
                id: item.id.clone(),
                status: item.status,
                content: item.content.clone(),
            }),
            Some((content, status)) => {
                if *content != &item.content {
                    out.push(Transition::Edited {
                        id: item.id.clone(),
                        content: item.content.clone(),
                    });
                }
                if *status != item.status {
                    out.push(Transition::Status {
                        id: item.id.clone(),
                        from: *status,
                        to: item.status,
                    });
                }
            }
        }
    }
    for item in before.items() {
        if after.get(&item.id).is_none() {
            out.push(Transition::Dropped {
                id: item.id.clone(),
                status: item.status,
                content: item.content.clone(),
            });
        }
    }
    out
}

/// One event as an auditor reads it, with the state before it.
#[derive(Debug, Clone, Serialize)]
pub struct HistoryEntry {
    /// Its seq.
    pub seq: u64,
    /// Its ULID.
    pub id: String,
    /// When.
    pub at: String,
    /// Its kind.
    pub kind: &'static str,
    /// The agent turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn: Option<u64>,
    /// The tool call id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// For writes: what changed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub transitions: Vec<Transition>,
    /// For rejections: the reason code and message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Anti-cheat breaches recorded as they happened (imported calls).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
    /// Anything else worth a word (origin, label, mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl HistoryEntry {
    /// The one-line text form.
    pub fn line(&self) -> String {
        let mut line = format!("{:>4}  {}  {:<15}", self.seq, self.at, self.kind);
        if let Some(turn) = self.turn {
            line.push_str(&format!(" turn {turn}"));
        }
        if let Some(call) = &self.call_id {
            line.push_str(&format!(" [{call}]"));
        }
        if let Some(note) = &self.note {
            line.push_str(&format!("  {note}"));
        }
        if !self.transitions.is_empty() {
            let parts: Vec<String> = self.transitions.iter().map(Transition::describe).collect();
            line.push_str(&format!("  {}", parts.join(", ")));
        }
        if let Some(reason) = &self.reason {
            line.push_str(&format!("  {reason}"));
        }
        for flag in &self.flags {
            line.push_str(&format!("  FLAG {flag}"));
        }
        one_line(&line).into_owned()
    }
}

/// The anti-cheat breaches of a recorded write (imported calls are recorded as they happened).
pub fn flags_of(before: &Plan, body: &EventBody) -> Vec<Breach> {
    match body {
        EventBody::PlanWritten(w) if w.semantics == WriteSemantics::Replace => {
            anti_cheat_breaches(before, &w.submitted)
        }
        _ => Vec::new(),
    }
}

/// The history of a whole log: one entry per event.
pub fn history(events: &[Event]) -> Vec<HistoryEntry> {
    history_from(SessionState::default(), events)
}

/// The history of a stretch of a log, given the state before its first event.
pub fn history_from(before: SessionState, events: &[Event]) -> Vec<HistoryEntry> {
    let mut state = before;
    let mut out = Vec::with_capacity(events.len());
    for e in events {
        let (transitions, reason, note) = match &e.body {
            EventBody::SessionStarted(s) => {
                let origin = match &s.origin {
                    Origin::New => "new session".to_owned(),
                    Origin::Fork { parent, at } => format!("fork of {parent} at seq {at}"),
                    Origin::SubAgent { parent } => format!("sub-agent of {parent}"),
                    Origin::Import {
                        source,
                        source_session,
                        parent,
                    } => {
                        let mut t = format!("imported from {source}");
                        if let Some(s) = source_session {
                            t.push_str(&format!(" session {s}"));
                        }
                        if let Some(p) = parent {
                            t.push_str(&format!(" (sub-agent of {p})"));
                        }
                        t
                    }
                };
                let label = s
                    .label
                    .as_ref()
                    .map(|l| format!(" \"{l}\""))
                    .unwrap_or_default();
                let plan = if s.plan.is_empty() {
                    String::new()
                } else {
                    format!(" with {} items", s.plan.len())
                };
                (Vec::new(), None, Some(format!("{origin}{label}{plan}")))
            }
            EventBody::PlanWritten(w) => {
                let note = (w.semantics == WriteSemantics::Replace)
                    .then(|| "(replaced whole list)".to_owned());
                (transitions(&state.plan, &w.plan), None, note)
            }
            EventBody::WriteRejected(r) => (
                Vec::new(),
                Some(format!("rejected: {}: {}", r.code.as_str(), r.message)),
                None,
            ),
            EventBody::ModeSelected(m) => (
                Vec::new(),
                None,
                Some(format!("plan mode {}", if m.active { "on" } else { "off" })),
            ),
        };
        let flags = flags_of(&state.plan, &e.body)
            .iter()
            .map(Breach::describe)
            .collect();
        out.push(HistoryEntry {
            seq: e.seq.get(),
            id: e.id.to_string(),
            at: e.at.to_string(),
            kind: e.body.kind(),
            turn: e.turn,
            call_id: e.call_id.as_ref().map(ToString::to_string),
            transitions,
            reason,
            flags,
            note,
        });
        state = apply(state, &e.body);
    }
    out
}

/// One item's life through a log.
#[derive(Debug, Clone, Serialize)]
pub struct ItemLife {
    /// The item.
    pub id: ItemId,
    /// Its first content.
    pub first_content: String,
    /// (seq, what happened), in order.
    pub steps: Vec<(u64, String)>,
    /// How it ended (or stands now).
    pub end: String,
}

/// Every item's life, in order of first appearance.
pub fn item_lives(events: &[Event]) -> Vec<ItemLife> {
    let mut lives: Vec<ItemLife> = Vec::new();
    let mut index: HashMap<ItemId, usize> = HashMap::new();
    let mut state = SessionState::default();
    for e in events {
        let next = apply(state.clone(), &e.body);
        if next.plan != state.plan {
            for t in transitions(&state.plan, &next.plan) {
                let seq = e.seq.get();
                if let Transition::Added {
                    id,
                    status,
                    content,
                } = &t
                {
                    // An id that left the plan and comes back continues its life.
                    let i = *index.entry(id.clone()).or_insert_with(|| {
                        lives.push(ItemLife {
                            id: id.clone(),
                            first_content: content.clone(),
                            steps: Vec::new(),
                            end: String::new(),
                        });
                        lives.len() - 1
                    });
                    lives[i].steps.push((seq, format!("appeared as {status}")));
                    continue;
                }
                let (id, text) = match &t {
                    Transition::Status { id, from, to } => (id, format!("{from} -> {to}")),
                    Transition::Edited { id, content } => {
                        (id, format!("content edited: {:?}", one_line(content)))
                    }
                    Transition::Dropped { id, status, .. } => {
                        (id, format!("dropped while {status}"))
                    }
                    Transition::Added { .. } => continue,
                };
                // Every other change is of an item already in the plan, so already seen.
                if let Some(&i) = index.get(id) {
                    lives[i].steps.push((seq, text));
                }
            }
        }
        state = next;
    }
    for life in &mut lives {
        life.end = match state.plan.get(&life.id) {
            Some(item) if item.status.is_active() => format!("still {}", item.status),
            Some(item) => format!("ended {}", item.status),
            None => "dropped from the plan".to_owned(),
        };
    }
    lives
}

/// The differences between two states, as lines.
pub fn diff(a: &SessionState, b: &SessionState) -> Vec<String> {
    let mut out: Vec<String> = transitions(&a.plan, &b.plan)
        .into_iter()
        .map(|t| match t {
            Transition::Added {
                id,
                status,
                content,
            } => format!("+ {} [{status}] {}", shown(&id), one_line(&content)),
            Transition::Dropped {
                id,
                status,
                content,
            } => format!("- {} [{status}] {}", shown(&id), one_line(&content)),
            Transition::Status { id, from, to } => format!("~ {} {from} -> {to}", shown(&id)),
            Transition::Edited { id, content } => {
                format!("~ {} content: {}", shown(&id), one_line(&content))
            }
        })
        .collect();
    if a.plan_mode != b.plan_mode {
        out.push(format!(
            "~ plan mode {} -> {}",
            on_off(a.plan_mode),
            on_off(b.plan_mode)
        ));
    }
    out
}

fn on_off(b: bool) -> &'static str {
    if b { "on" } else { "off" }
}
