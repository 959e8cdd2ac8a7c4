//! Reading a log as history: what each write changed, each item's life, the difference
//! between two points, and what an audit flags. Everything is derived from the events, never
//! stored.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write as _;

use planlog_core::events::{
    Event, EventBody, Origin, SessionDescription, SourceLine, ToolCall, WriteSemantics,
};
use planlog_core::render::{
    NAMED_ITEM_CHARS, named_item, one_line, push_named_item, push_quoted, shortened, shown_id,
};
use planlog_core::rules::{Breach, anti_cheat_breaches, blocked_starts, limit_breaches};
use planlog_core::{ItemId, Plan, PlanStatus, Seq, SessionState, apply, apply_owned};

use crate::checkpoints::{Anchors, Compared, no_earlier};
use serde::Serialize;

/// One item's change between two plans.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "change", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Transition {
    /// A new item.
    Added {
        /// Its id.
        id: ItemId,
        /// Its status.
        status: PlanStatus,
        /// Its content.
        content: String,
        /// What it waits for from the start.
        blocked_by: Vec<ItemId>,
        /// Its owner from the start.
        owner: Option<String>,
    },
    /// Its status changed.
    Status {
        /// Its id.
        id: ItemId,
        /// Its content.
        content: String,
        /// Before.
        from: PlanStatus,
        /// After.
        to: PlanStatus,
    },
    /// Its content was edited.
    Edited {
        /// Its id.
        id: ItemId,
        /// The content before.
        was: String,
        /// The new content.
        content: String,
    },
    /// The items it waits for changed.
    Blockers {
        /// Its id.
        id: ItemId,
        /// Its content.
        content: String,
        /// Before.
        from: Vec<ItemId>,
        /// After.
        to: Vec<ItemId>,
    },
    /// Its owner changed.
    Owner {
        /// Its id.
        id: ItemId,
        /// Its content.
        content: String,
        /// Before.
        from: Option<String>,
        /// After.
        to: Option<String>,
    },
    /// Its description, active form or metadata changed.
    Details {
        /// Its id.
        id: ItemId,
        /// Its content.
        content: String,
        /// Which fields.
        fields: Vec<&'static str>,
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
    /// The item it is about.
    pub fn id(&self) -> &ItemId {
        match self {
            Transition::Added { id, .. }
            | Transition::Status { id, .. }
            | Transition::Edited { id, .. }
            | Transition::Blockers { id, .. }
            | Transition::Owner { id, .. }
            | Transition::Details { id, .. }
            | Transition::Dropped { id, .. } => id,
        }
    }

    /// The item's text (the new one when it was edited).
    pub fn content(&self) -> &str {
        match self {
            Transition::Added { content, .. }
            | Transition::Status { content, .. }
            | Transition::Edited { content, .. }
            | Transition::Blockers { content, .. }
            | Transition::Owner { content, .. }
            | Transition::Details { content, .. }
            | Transition::Dropped { content, .. } => content,
        }
    }

    /// One short text naming the item by its id and its text, shortened, e.g.
    /// `3 "Write the tests": pending -> completed`. An id that is not plain letters, digits,
    /// `_ - .` is quoted, so it cannot pass for the punctuation around it.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        self.describe_into(&mut out);
        out
    }

    /// [`Transition::describe`], added to `out`.
    fn describe_into(&self, out: &mut String) {
        match self {
            Transition::Edited { id, was, .. } => push_named_item(out, id.as_str(), was),
            other => push_named_item(out, other.id().as_str(), other.content()),
        }
        out.push_str(": ");
        self.change_into(out);
    }

    /// What changed, without the item (`pending -> completed`), added to `out`.
    fn change_into(&self, out: &mut String) {
        // Writing to a String cannot fail.
        let _ = match self {
            Transition::Added {
                status,
                blocked_by,
                owner,
                ..
            } => write!(
                out,
                "new {status}{}",
                start_extras(blocked_by, owner.as_deref())
            ),
            Transition::Status { from, to, .. } => write!(out, "{from} -> {to}"),
            Transition::Edited { content, .. } => {
                out.push_str("edited to ");
                push_quoted(out, &shortened(content, NAMED_ITEM_CHARS));
                Ok(())
            }
            Transition::Blockers { from, to, .. } => {
                write!(out, "blocked by {} -> {}", id_list(from), id_list(to))
            }
            Transition::Owner { from, to, .. } => write!(
                out,
                "owner {} -> {}",
                owner(from.as_deref()),
                owner(to.as_deref())
            ),
            Transition::Details { fields, .. } => write!(out, "{} edited", fields.join(", ")),
            Transition::Dropped { status, .. } => write!(out, "{status} -> dropped"),
        };
    }

    /// The changes of one write, one text per item (its changes named once, in order):
    /// `1 "Parse": edited to "Parse YAML", pending -> in_progress`.
    pub fn describe_all(changes: &[Transition]) -> Vec<String> {
        changes
            .chunk_by(|a, b| a.id() == b.id())
            .map(|one_item| {
                let mut text = String::new();
                Self::describe_item(one_item, &mut text);
                text
            })
            .collect()
    }

    /// [`Transition::describe_all`] joined with `; `, added to `out`.
    fn describe_all_into(changes: &[Transition], out: &mut String) {
        for (k, one_item) in changes.chunk_by(|a, b| a.id() == b.id()).enumerate() {
            if k > 0 {
                out.push_str("; ");
            }
            Self::describe_item(one_item, out);
        }
    }

    /// One item's consecutive changes, the item named once, added to `out`.
    fn describe_item(changes: &[Transition], out: &mut String) {
        let Some((first, rest)) = changes.split_first() else {
            return;
        };
        first.describe_into(out);
        for t in rest {
            out.push_str(", ");
            t.change_into(out);
        }
    }

    /// The line an item's life shows for it.
    fn life_step(&self) -> String {
        match self {
            Transition::Added {
                status,
                blocked_by,
                owner,
                ..
            } => format!(
                "appeared as {status}{}",
                start_extras(blocked_by, owner.as_deref())
            ),
            Transition::Status { from, to, .. } => format!("{from} -> {to}"),
            Transition::Edited { content, .. } => {
                format!("content edited: {:?}", one_line(content))
            }
            Transition::Blockers { from, to, .. } => {
                format!("blocked by {} -> {}", id_list(from), id_list(to))
            }
            Transition::Owner { from, to, .. } => {
                format!(
                    "owner {} -> {}",
                    owner(from.as_deref()),
                    owner(to.as_deref())
                )
            }
            Transition::Details { fields, .. } => format!("{} edited", fields.join(", ")),
            Transition::Dropped { status, .. } => format!("dropped while {status}"),
        }
    }
}

/// An item id as audit lines show it (see [`shown_id`]).
pub fn shown(id: &ItemId) -> std::borrow::Cow<'_, str> {
    shown_id(id.as_str())
}

/// `[2, 3]` (ids shown as [`shown`] shows them), `[]` when empty.
fn id_list(ids: &[ItemId]) -> String {
    let shown: Vec<String> = ids.iter().map(|id| shown(id).into_owned()).collect();
    format!("[{}]", shown.join(", "))
}

/// A new item's blockers and owner, as a suffix (empty when it has none).
fn start_extras(blocked_by: &[ItemId], owner: Option<&str>) -> String {
    let mut out = String::new();
    if !blocked_by.is_empty() {
        out.push_str(&format!(", blocked by {}", id_list(blocked_by)));
    }
    if owner.is_some() {
        out.push_str(&format!(", owner {}", self::owner(owner)));
    }
    out
}

/// An owner as audit lines show it: quoted, `none` when unset.
fn owner(owner: Option<&str>) -> String {
    owner.map_or_else(|| "none".to_owned(), |o| format!("{:?}", one_line(o)))
}

/// What changed from `before` to `after`, in `after`'s order, then the dropped items.
pub fn transitions(before: &Plan, after: &Plan) -> Vec<Transition> {
    let old = before.finder();
    let new = after.finder();
    let mut out = Vec::new();
    for item in after.items() {
        let Some(prev) = old.get(&item.id) else {
            out.push(Transition::Added {
                id: item.id.clone(),
                status: item.status,
                content: item.content.clone(),
                blocked_by: item.blockers().to_vec(),
                owner: item.owner.clone(),
            });
            continue;
        };
        if prev.content != item.content {
            out.push(Transition::Edited {
                id: item.id.clone(),
                was: prev.content.clone(),
                content: item.content.clone(),
            });
        }
        if prev.status != item.status {
            out.push(Transition::Status {
                id: item.id.clone(),
                content: item.content.clone(),
                from: prev.status,
                to: item.status,
            });
        }
        if prev.blockers() != item.blockers() {
            out.push(Transition::Blockers {
                id: item.id.clone(),
                content: item.content.clone(),
                from: prev.blockers().to_vec(),
                to: item.blockers().to_vec(),
            });
        }
        if prev.owner != item.owner {
            out.push(Transition::Owner {
                id: item.id.clone(),
                content: item.content.clone(),
                from: prev.owner.clone(),
                to: item.owner.clone(),
            });
        }
        let fields: Vec<&'static str> = [
            ("description", prev.description != item.description),
            ("active form", prev.active_form != item.active_form),
            ("metadata", prev.metadata != item.metadata),
        ]
        .into_iter()
        .filter_map(|(name, changed)| changed.then_some(name))
        .collect();
        if !fields.is_empty() {
            out.push(Transition::Details {
                id: item.id.clone(),
                content: item.content.clone(),
                fields,
            });
        }
    }
    for item in before.items() {
        if new.get(&item.id).is_none() {
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
    /// What an audit flags (rule breaches of imported calls, items started while blocked).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
    /// Anything else worth a word (origin, label, mode, a checkpoint).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The agent's own explanation of the change (Codex).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explanation: Option<String>,
    /// Where an imported event was read from (line), and what the importer noted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The call as the agent sent it and what the model read back (format 4).
    #[serde(rename = "tool_call", skip_serializing_if = "Option::is_none")]
    pub call: Option<ToolCall>,
    /// The exact text put back into the agent's context (`plan_restored`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// How a checkpoint differs from the plan it belongs with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub differs: Option<String>,
    /// What of the text the model read the line shows: none when the line says it already
    /// (a refusal's message; a plan_write result's plan, though not what it says after it).
    #[serde(skip)]
    read: Option<String>,
}

impl HistoryEntry {
    /// The one-line text form.
    pub fn line(&self) -> String {
        let mut line = String::with_capacity(256);
        // Writing to a String cannot fail.
        let _ = write!(line, "{:>4}  {}  {:<15}", self.seq, self.at, self.kind);
        if let Some(turn) = self.turn {
            let _ = write!(line, " turn {turn}");
        }
        if let Some(call) = &self.call_id {
            let _ = write!(line, " [{call}]");
        }
        if let Some(source) = &self.source {
            let _ = write!(line, " ({source})");
        }
        if let Some(note) = &self.note {
            line.push_str("  ");
            line.push_str(note);
        }
        if !self.transitions.is_empty() {
            line.push_str("  ");
            Transition::describe_all_into(&self.transitions, &mut line);
        }
        if let Some(explanation) = &self.explanation {
            line.push_str("  explanation: ");
            push_quoted(&mut line, explanation);
        }
        if let Some(reason) = &self.reason {
            line.push_str("  ");
            line.push_str(reason);
        }
        if let Some(call) = &self.call {
            line.push_str("  via ");
            line.push_str(&one_line(&call.tool));
            if let Some(text) = &self.read {
                line.push_str(": ");
                push_quoted(&mut line, &shortened(text, 60));
            }
        }
        for flag in &self.flags {
            line.push_str("  FLAG ");
            line.push_str(flag);
        }
        match one_line(&line) {
            // Already one safe line (the usual case): the text itself, not a copy.
            Cow::Borrowed(_) => line,
            Cow::Owned(safe) => safe,
        }
    }
}

/// What an audit flags about a recorded write that moved the plan from `before` to its
/// plan: for imported writes (recorded as they happened) their anti-cheat and limit
/// breaches; for every write, items started or completed while their blockers were not.
pub fn flags_of(before: &Plan, body: &EventBody) -> Vec<Breach> {
    let EventBody::PlanWritten(w) = body else {
        return Vec::new();
    };
    let mut flags = match w.semantics {
        WriteSemantics::Replace | WriteSemantics::Upsert => {
            let mut f = anti_cheat_breaches(before, &w.submitted);
            f.extend(limit_breaches(&w.plan));
            f
        }
        WriteSemantics::Merge | WriteSemantics::Remove => Vec::new(),
    };
    flags.extend(blocked_starts(before, &w.plan));
    flags
}

/// The history of a whole log: one entry per event.
pub fn history(events: &[Event]) -> Vec<HistoryEntry> {
    history_from(SessionState::default(), events, &no_earlier)
}

/// How a session began, in words.
fn origin_note(origin: &Origin) -> String {
    match origin {
        Origin::New => "new session".to_owned(),
        Origin::Fork { parent, at } => format!("fork of {parent} at seq {at}"),
        Origin::SubAgent { parent } => format!("sub-agent of {parent}"),
        Origin::Import {
            source,
            source_session,
            parent,
            cwd,
            transcript,
        } => {
            let mut t = if cwd.is_some() || transcript.is_some() {
                format!("captured live from {source}")
            } else {
                format!("imported from {source}")
            };
            if let Some(s) = source_session {
                t.push_str(&format!(" session {s}"));
            }
            if let Some(p) = parent {
                t.push_str(&format!(" (sub-agent of {p})"));
            }
            if let Some(c) = cwd {
                t.push_str(&format!(" in {}", one_line(c)));
            }
            t
        }
    }
}

/// The history of a stretch of a log, given the state before its first event; `earlier`
/// gives the plan at a seq before the stretch (a checkpoint is compared with the plan it
/// belongs with, see [`checkpoint_differences`](crate::checkpoint_differences)).
pub fn history_from(
    before: SessionState,
    events: &[Event],
    earlier: &dyn Fn(Seq) -> Option<Plan>,
) -> Vec<HistoryEntry> {
    let mut state = before;
    history_through(&mut state, events.to_vec(), earlier)
}

/// [`history_from`] for a reader that goes on after `events`: `state` (the state before
/// them) is left as the state after them, and the events are taken: their plans and tool
/// calls move into the state and the entries instead of being copied.
pub fn history_through(
    state: &mut SessionState,
    events: Vec<Event>,
    earlier: &dyn Fn(Seq) -> Option<Plan>,
) -> Vec<HistoryEntry> {
    let mut anchors = Anchors::new(&events, earlier);
    let mut out = Vec::with_capacity(events.len());
    for mut e in events {
        let mut entry = entry_of(&e, state, &anchors);
        entry.read = read_not_shown(&e.body);
        entry.call = e.body.take_tool_call();
        out.push(entry);
        *state = apply_owned(std::mem::take(state), e.body);
        anchors.passed(e.seq, &state.plan);
    }
    out
}

/// The text the model read, less what a history line says already: a refusal's message, or
/// the plan a plan_write answers with (what follows it is kept).
fn read_not_shown(body: &EventBody) -> Option<String> {
    let text = body.tool_call()?.result.as_ref()?.text.as_deref()?;
    match body {
        EventBody::WriteRejected(r) if text.contains(r.message.as_str()) => None,
        // The plan is a JSON array: a text that does not open one cannot start with it (and
        // the plan is not encoded for the many tools that answer with a sentence).
        EventBody::PlanWritten(_) if !text.starts_with('[') => Some(text.to_owned()),
        EventBody::PlanWritten(w) => match text.strip_prefix(w.plan.to_json().as_str()) {
            Some(rest) => Some(rest.trim())
                .filter(|r| !r.is_empty())
                .map(str::to_owned),
            None => Some(text.to_owned()),
        },
        _ => Some(text.to_owned()),
    }
}

/// A flag of a write that moved the plan from `before`, naming items by id and text.
pub fn describe_flag(flag: &Breach, before: &Plan, body: &EventBody) -> String {
    let after = body.plan();
    flag.describe_with(
        &|id: &ItemId| match after.and_then(|p| p.get(id)).or_else(|| before.get(id)) {
            Some(item) => named_item(id.as_str(), &item.content),
            None => shown(id).into_owned(),
        },
    )
}

/// The history entry of `e`, given the state before it.
fn entry_of(e: &Event, state: &SessionState, anchors: &Anchors<'_>) -> HistoryEntry {
    let mut entry = HistoryEntry {
        seq: e.seq.get(),
        id: e.id.to_string(),
        at: e.at.to_string(),
        kind: e.body.kind(),
        turn: e.turn,
        call_id: e.call_id.as_ref().map(ToString::to_string),
        transitions: Vec::new(),
        reason: None,
        flags: flags_of(&state.plan, &e.body)
            .iter()
            .map(|b| describe_flag(b, &state.plan, &e.body))
            .collect(),
        note: None,
        explanation: None,
        source: None,
        call: None,
        text: None,
        differs: None,
        read: None,
    };
    // Line 0 is the whole source (a task folder's snapshot): only its note is shown.
    let source_of = |line: u64, note: &Option<String>| match (line, note) {
        (0, Some(n)) => n.clone(),
        (0, None) => String::new(),
        (_, Some(n)) => format!("line {line}; {n}"),
        (_, None) => format!("line {line}"),
    };
    let source = |s: Option<&SourceLine>| {
        s.map(|s| source_of(s.line, &s.note))
            .filter(|s| !s.is_empty())
    };
    match &e.body {
        EventBody::SessionStarted(s) => {
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
            entry.note = Some(format!("{}{label}{plan}", origin_note(&s.origin)));
        }
        EventBody::PlanWritten(w) => {
            entry.note = match w.semantics {
                WriteSemantics::Merge => None,
                WriteSemantics::Replace => Some("(replaced whole list)".to_owned()),
                WriteSemantics::Upsert => Some("(set items)".to_owned()),
                WriteSemantics::Remove => Some("(removed items)".to_owned()),
            };
            entry.transitions = transitions(&state.plan, &w.plan);
            entry.explanation = w.explanation.clone();
            entry.source = source(w.source.as_ref());
        }
        EventBody::WriteRejected(r) => {
            entry.reason = Some(format!("rejected: {}: {}", r.code.as_str(), r.message));
            entry.source = source(r.source.as_ref());
        }
        EventBody::ModeSelected(m) => {
            entry.note = Some(format!("plan mode {}", if m.active { "on" } else { "off" }));
        }
        EventBody::CheckpointSeen(c) => {
            let against = c
                .against
                .map(|s| format!(" (the plan at seq {s}, the source's call before it)"))
                .unwrap_or_default();
            entry.note = Some(match anchors.compare(&state.plan, c) {
                Compared::Agrees => format!("{} items, as imported{against}", c.items.len()),
                Compared::Differs(d) => {
                    let note = format!(
                        "{} items, DIFFERS from the imported plan{against}: {d}",
                        c.items.len()
                    );
                    entry.differs = Some(d);
                    note
                }
                Compared::Unknown(seq) => format!(
                    "{} items, not compared: the plan at seq {seq} could not be read",
                    c.items.len()
                ),
            });
            entry.source = source(Some(&c.source));
        }
        EventBody::SessionDescribed(d) => entry.note = Some(describe_session(d)),
        EventBody::ContextCompacted(c) => {
            let mut parts = Vec::new();
            if let Some(t) = &c.trigger {
                parts.push(one_line(t).into_owned());
            }
            match (c.tokens_before, c.tokens_after) {
                (Some(b), Some(a)) => parts.push(format!("{b} -> {a} tokens")),
                (Some(b), None) => parts.push(format!("{b} tokens before")),
                (None, Some(a)) => parts.push(format!("{a} tokens after")),
                (None, None) => {}
            }
            entry.note = Some(if parts.is_empty() {
                "the agent's context was compacted".to_owned()
            } else {
                format!("the agent's context was compacted ({})", parts.join("; "))
            });
            entry.source = source(c.source.as_ref());
        }
        EventBody::PlanRestored(r) => {
            entry.note = Some(format!(
                "the plan was put back into the agent's context after {}: {} characters",
                one_line(&r.after),
                r.text.chars().count()
            ));
            entry.text = Some(r.text.clone());
        }
    }
    entry
}

/// A session's description in words: `"Fix the login bug" · claude-code 2.1.3 (cli) ·
/// project /home/me/app · branch main · model claude-opus-4`.
pub fn describe_session(d: &SessionDescription) -> String {
    let mut parts = Vec::new();
    if let Some(t) = &d.title {
        parts.push(format!("{:?}", shortened(t, 80).as_ref()));
    }
    if let Some(a) = &d.agent {
        let mut agent = one_line(a).into_owned();
        if let Some(v) = &d.agent_version {
            agent.push_str(&format!(" {}", one_line(v)));
        }
        if let Some(e) = &d.entrypoint {
            agent.push_str(&format!(" ({})", one_line(e)));
        }
        parts.push(agent);
    }
    for (word, value) in [
        ("project", &d.project),
        ("branch", &d.branch),
        ("model", &d.model),
    ] {
        if let Some(v) = value {
            parts.push(format!("{word} {}", one_line(v)));
        }
    }
    if let Some(p) = &d.first_prompt {
        parts.push(format!(
            "first prompt {:?}",
            shortened(p, NAMED_ITEM_CHARS).as_ref()
        ));
    }
    format!("described: {}", parts.join(" · "))
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
    let mut lives = ItemLives::default();
    for e in events {
        lives.observe(e);
    }
    lives.finish()
}

/// Item lives built one event at a time (memory grows with the items, not the events).
#[derive(Debug, Default)]
pub struct ItemLives {
    lives: Vec<ItemLife>,
    index: HashMap<ItemId, usize>,
    state: SessionState,
}

impl ItemLives {
    /// Takes the next event into account.
    pub fn observe(&mut self, e: &Event) {
        let next = apply(self.state.clone(), &e.body);
        if next.plan != self.state.plan {
            for t in transitions(&self.state.plan, &next.plan) {
                let seq = e.seq.get();
                if let Transition::Added { id, content, .. } = &t {
                    // An id that left the plan and comes back continues its life.
                    let i = match self.index.get(id) {
                        Some(&i) => i,
                        None => {
                            self.lives.push(ItemLife {
                                id: id.clone(),
                                first_content: content.clone(),
                                steps: Vec::new(),
                                end: String::new(),
                            });
                            self.index.insert(id.clone(), self.lives.len() - 1);
                            self.lives.len() - 1
                        }
                    };
                    self.lives[i].steps.push((seq, t.life_step()));
                    continue;
                }
                // Every other change is of an item already in the plan, so already seen.
                if let Some(&i) = self.index.get(t.id()) {
                    self.lives[i].steps.push((seq, t.life_step()));
                }
            }
        }
        self.state = next;
    }

    /// Takes the steps gathered since the last call out of the lives: (the life's index in
    /// order of first appearance, its new steps), so a caller can keep them elsewhere and
    /// memory holds the items, not their histories. [`ItemLives::finish`] then returns lives
    /// whose `steps` hold only what was not taken.
    pub fn take_steps(&mut self) -> Vec<(usize, Vec<(u64, String)>)> {
        self.lives
            .iter_mut()
            .enumerate()
            .filter(|(_, life)| !life.steps.is_empty())
            .map(|(i, life)| (i, std::mem::take(&mut life.steps)))
            .collect()
    }

    /// The lives, each with how it ended (or stands now).
    pub fn finish(mut self) -> Vec<ItemLife> {
        for life in &mut self.lives {
            life.end = match self.state.plan.get(&life.id) {
                Some(item) if item.status.is_active() => format!("still {}", item.status),
                Some(item) => format!("ended {}", item.status),
                None => "dropped from the plan".to_owned(),
            };
        }
        self.lives
    }
}

/// The differences between two states, as lines.
pub fn diff(a: &SessionState, b: &SessionState) -> Vec<String> {
    let mut out: Vec<String> = transitions(&a.plan, &b.plan)
        .into_iter()
        .map(|t| match &t {
            Transition::Added {
                id,
                status,
                content,
                blocked_by,
                owner,
            } => format!(
                "+ {} [{status}] {}{}",
                shown(id),
                one_line(content),
                start_extras(blocked_by, owner.as_deref())
            ),
            Transition::Dropped {
                id,
                status,
                content,
            } => format!("- {} [{status}] {}", shown(id), one_line(content)),
            Transition::Edited { id, was, content } => format!(
                "~ {} content: {}",
                named_item(id.as_str(), was),
                one_line(content)
            ),
            other => format!(
                "~ {} {}",
                named_item(other.id().as_str(), other.content()),
                other.life_step()
            ),
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code
    use std::sync::Arc;

    use planlog_core::testkit::sid;
    use planlog_core::{EventLog, MemoryLog, PlanSession, TestEnv};

    use super::*;

    /// Reading a session chunk by chunk with `history_through` leaves the state the fold
    /// gives, and the entries of reading it whole (anchors and state carried across chunks):
    /// writes, refusals (a bulk completion, a cancelled item completed), a plan-mode change,
    /// each entry carrying its event's tool call.
    #[test]
    fn history_through_in_chunks_is_the_whole_history_and_the_fold() {
        let log = Arc::new(MemoryLog::new());
        let id = sid("through");
        let mut s =
            PlanSession::builder(log.clone(), Arc::new(TestEnv::default())).open_or_fresh(&id);
        let calls = [
            r#"{"todos":[{"id":"1","content":"Parse","status":"in_progress"},{"id":"2","content":"Test","status":"pending"},{"id":"3","content":"Ship","status":"pending"}]}"#,
            r#"{"todos":[{"id":"1","content":"Parse","status":"completed"},{"id":"2","content":"Test","status":"completed"},{"id":"3","content":"Ship","status":"completed"}]}"#,
            r#"{"todos":[{"id":"1","content":"Parse","status":"completed"},{"id":"2","content":"Test","status":"in_progress"},{"id":"3","content":"Ship","status":"cancelled"}]}"#,
            r#"{"todos":[{"id":"1","content":"Parse","status":"completed"},{"id":"2","content":"Test","status":"completed"},{"id":"3","content":"Ship","status":"completed"}]}"#,
            r#"{"todos":[{"id":"2","content":"Test again","status":"in_progress"}],"merge":true}"#,
        ];
        for (k, call) in calls.iter().enumerate() {
            let _ = s.plan_write(Some(&format!("c{k}")), Some(k as u64), call);
        }
        let _ = s.set_plan_mode(true);
        let _ = s.plan_write(Some("c9"), None, calls[0]);
        let events = log.read(&id, Seq::FIRST, None).unwrap();
        assert!(events.iter().any(|e| e.body.kind() == "write_rejected"));
        assert!(events.iter().any(|e| e.body.tool_call().is_some()));
        let folded = events
            .iter()
            .fold(SessionState::default(), |st, e| apply(st, &e.body));
        let lines = |h: &[HistoryEntry]| -> Vec<String> {
            h.iter()
                .map(|e| format!("{} {:?}", e.line(), e.call))
                .collect()
        };
        let whole = history(&events);
        for (entry, event) in whole.iter().zip(&events) {
            assert_eq!(entry.seq, event.seq.get());
            assert_eq!(entry.call.as_ref(), event.body.tool_call());
        }
        assert_eq!(whole.len(), events.len());
        for chunk in [1, 2, 3] {
            let (mut state, mut through) = (SessionState::default(), Vec::new());
            for part in events.chunks(chunk) {
                through.extend(history_through(&mut state, part.to_vec(), &no_earlier));
            }
            assert_eq!(state, folded, "chunks of {chunk}");
            assert_eq!(lines(&through), lines(&whole), "chunks of {chunk}");
        }
    }
}
