//! A view: the index as one read transaction saw it, and the journal's records past its
//! position (the tail), per session. Every read answers from a view, and so does every
//! append's check, with the round's own appends added as they are accepted.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use planlog_core::events::{Event, Hash, Head};
use planlog_core::log::{Slot, check_placement};
use planlog_core::{LogError, Seq, SessionId, SessionInfo, UserError};
use redb::ReadTransaction;

use super::index::{IndexRead, expect_event};
use super::recent::Recent;
use super::tail::{Entry, Item, Tail};
use crate::codec::{corrupt, marks_of};
use crate::journal::{Record, SharedJournal};

type Result<T> = std::result::Result<T, LogError>;

/// Plan-carrying seqs, and mode-setting seqs with the mode each set.
type Marks = (Vec<u64>, Vec<(u64, bool)>);

/// One session's records past the index.
#[derive(Debug, Default)]
struct Overlay {
    /// Deleted past the index (the tombstone's first hash), or started anew: what the index
    /// holds for the session no longer counts.
    reset: Option<Option<Hash>>,
    /// Its last event past the index.
    head: Option<Head>,
    /// Call ids recorded past the index by events not kept (a streamed batch's); those of
    /// kept events are found among them.
    calls: HashMap<String, u64>,
    /// Its events past the index, in order (none kept for a streamed batch's checks).
    events: Vec<Arc<Event>>,
}

impl Overlay {
    fn add(&mut self, item: &Item, keep: bool) {
        match item {
            Item::Event(e) => {
                if e.seq == Seq::FIRST {
                    // A new session, or a deleted one restored: nothing before counts.
                    self.reset = Some(None);
                    self.calls.clear();
                    self.events.clear();
                }
                self.head = Some(Head::of(e));
                if keep {
                    self.events.push(Arc::clone(e));
                } else if let Some(call) = &e.call_id {
                    self.calls.insert(call.as_str().to_owned(), e.seq.get());
                }
            }
            Item::Delete { first, .. } => {
                self.reset = Some(*first);
                self.head = None;
                self.calls.clear();
                self.events.clear();
            }
        }
    }

    /// The seq of its event past the index that records `call`.
    fn find_call(&self, call: &str) -> Option<u64> {
        self.calls.get(call).copied().or_else(|| {
            self.events
                .iter()
                .rev()
                .find(|e| e.call_id.as_ref().is_some_and(|c| c.as_str() == call))
                .map(|e| e.seq.get())
        })
    }

    /// Its kept events at or before `seq`, newest first.
    fn back_from(&self, seq: u64) -> impl Iterator<Item = &Arc<Event>> {
        self.events.iter().rev().filter(move |e| e.seq.get() <= seq)
    }
}

/// What an append's check found.
pub(super) enum Verdict {
    /// Append it.
    Place,
    /// Its call is recorded already, as this event.
    Duplicate(Arc<Event>),
}

/// Adds `item` to its session's overlay in `overlays`.
fn add_to(overlays: &mut HashMap<SessionId, Overlay>, item: &Item, keep: bool) {
    let session = item.session();
    match overlays.get_mut(session) {
        Some(overlay) => overlay.add(item, keep),
        None => overlays.entry(session.clone()).or_default().add(item, keep),
    }
}

/// Which sessions a view answers for: every one, or those named (a view for one read, or
/// one round of appends, skips the records of other sessions instead of gathering them).
pub(super) type Scope = Option<HashSet<SessionId>>;

/// The index at one snapshot, and the records past it.
pub(super) struct View<'a> {
    txn: Arc<ReadTransaction>,
    p: &'a str,
    journal: &'a SharedJournal,
    recent: &'a Recent,
    overlays: HashMap<SessionId, Overlay>,
    scope: Scope,
}

impl<'a> View<'a> {
    /// A view of `txn`'s index for the sessions of `scope`; the records after its position
    /// are given to it next ([`View::take`]), in order.
    pub(super) fn new(
        txn: Arc<ReadTransaction>,
        p: &'a str,
        journal: &'a SharedJournal,
        recent: &'a Recent,
        scope: Scope,
    ) -> Self {
        Self {
            txn,
            p,
            journal,
            recent,
            overlays: HashMap::new(),
            scope,
        }
    }

    /// Takes the next record past the index's position (read and kept when its session is
    /// in scope; `path` names the journal in errors).
    pub(super) fn take(&mut self, entry: &Entry, path: &str) -> Result<()> {
        if self.covers(entry.item.session()) {
            let item = entry.item.read(entry.at, path)?;
            self.add(&item, true);
        }
        Ok(())
    }

    /// Takes the records of `tail` past journal position `position` (at or after the tail's
    /// base) that are about its sessions: those only are visited.
    pub(super) fn take_tail(&mut self, tail: &Tail, position: u64, path: &str) -> Result<()> {
        let Self {
            scope, overlays, ..
        } = self;
        let Some(sessions) = scope else {
            for entry in tail.since(position).into_iter().flatten() {
                let item = entry.item.read(entry.at, path)?;
                add_to(overlays, &item, true);
            }
            return Ok(());
        };
        // A session at a time: its overlay found once, sized once.
        for session in sessions.iter() {
            let records = tail.of_session_since(session, position);
            if records.len() == 0 {
                continue;
            }
            let overlay = overlays.entry(session.clone()).or_default();
            overlay.events.reserve(records.len());
            for entry in records {
                let item = entry.item.read(entry.at, path)?;
                overlay.add(&item, true);
            }
        }
        Ok(())
    }

    /// Whether the view answers for `session` (every session when it has no scope).
    pub(super) fn in_scope(scope: &Scope, session: &SessionId) -> bool {
        scope.as_ref().is_none_or(|s| s.contains(session))
    }

    /// Whether the view answers for `session`.
    fn covers(&self, session: &SessionId) -> bool {
        Self::in_scope(&self.scope, session)
    }

    /// The records past the index for `session` (a session outside the scope is a bug of
    /// the caller's, and answered as if the index were all).
    fn overlay(&self, session: &SessionId) -> Option<&Overlay> {
        debug_assert!(
            self.covers(session),
            "a view asked about {session} outside its scope"
        );
        self.overlays.get(session)
    }

    /// Adds a record after those the view has (an append accepted in this round); `keep`
    /// keeps its event for reads (a streamed batch keeps only heads and call ids).
    pub(super) fn add(&mut self, item: &Item, keep: bool) {
        add_to(&mut self.overlays, item, keep);
    }

    fn index(&self) -> IndexRead<'_> {
        IndexRead {
            txn: &self.txn,
            p: self.p,
        }
    }

    /// Whether what the index holds for `session` counts.
    fn indexed(&self, session: &SessionId) -> bool {
        self.overlay(session).is_none_or(|o| o.reset.is_none())
    }

    /// Where `session` stands.
    pub(super) fn slot(&self, session: &SessionId) -> Result<Slot> {
        match self.overlay(session) {
            Some(Overlay { head: Some(h), .. }) => Ok(Slot::Live(*h)),
            Some(Overlay {
                reset: Some(first), ..
            }) => Ok(Slot::Retired { first: *first }),
            _ => self.index().slot(session),
        }
    }

    /// The seq of the event recording `call` in `session`.
    pub(super) fn find_call(&self, session: &SessionId, call: &str) -> Result<Option<u64>> {
        if let Some(seq) = self.overlay(session).and_then(|o| o.find_call(call)) {
            return Ok(Some(seq));
        }
        if self.indexed(session) {
            self.index().find_call(session, call)
        } else {
            Ok(None)
        }
    }

    /// The seq of `session`'s last event (`None`: no such live session).
    pub(super) fn last_seq(&self, session: &SessionId) -> Result<Option<u64>> {
        match self.slot(session)? {
            Slot::Live(h) => Ok(Some(h.seq.get())),
            Slot::Free | Slot::Retired { .. } => Ok(None),
        }
    }

    /// Reads the event whose frame starts at `at`, checking it is `(session, seq)` (one
    /// read lately comes from [`Recent`]).
    fn read_at(&self, session: &SessionId, seq: u64, at: u64) -> Result<Event> {
        if let Some(e) = self.recent.get(at)
            && e.session == *session
            && e.seq.get() == seq
        {
            return Ok(Event::clone(&e));
        }
        let bytes = self
            .journal
            .read_record(at)
            .map_err(|e| corrupt(self.p, session, seq, e.to_string()))?;
        let record = Record::decode(&bytes).map_err(|why| corrupt(self.p, session, seq, why))?;
        let event = expect_event(self.p, session, seq, record)?;
        self.recent.put(at, bytes.len(), &event);
        Ok(event)
    }

    /// Event `seq` of `session`.
    pub(super) fn event(&self, session: &SessionId, seq: u64) -> Result<Option<Event>> {
        if let Some(e) = self
            .overlay(session)
            .and_then(|o| o.events.iter().find(|e| e.seq.get() == seq))
        {
            return Ok(Some(Event::clone(e)));
        }
        if !self.indexed(session) {
            return Ok(None);
        }
        match self.index().locations(session, seq..=seq)?.first() {
            Some(&(_, at)) => self.read_at(session, seq, at).map(Some),
            None => Ok(None),
        }
    }

    /// Events `from..=to` of `session`.
    pub(super) fn read(&self, session: &SessionId, from: u64, to: u64) -> Result<Vec<Event>> {
        if self.last_seq(session)?.is_none() {
            return Err(UserError::UnknownSession(session.clone()).into());
        }
        let mut out = Vec::new();
        if to < from {
            return Ok(out);
        }
        let overlay = self.overlay(session);
        if self.indexed(session) {
            let places = self.index().locations(session, from..=to)?;
            if let [(seq, at)] = places[..] {
                // One event (the last, the first): through `read_at` and what it keeps.
                out.push(self.read_at(session, seq, at)?);
            } else {
                self.read_places(session, from, &places, &mut out)?;
            }
        }
        if let Some(o) = overlay {
            let past = o
                .events
                .iter()
                .filter(|e| (from..=to).contains(&e.seq.get()));
            for e in past {
                if out.last().is_none_or(|l: &Event| l.seq < e.seq) {
                    out.push(Event::clone(e));
                }
            }
        }
        Ok(out)
    }

    /// The events at `places` (seq and frame position, in order), read in as few system
    /// calls as their closeness allows, each decoded and checked, pushed onto `out`.
    fn read_places(
        &self,
        session: &SessionId,
        from: u64,
        places: &[(u64, u64)],
        out: &mut Vec<Event>,
    ) -> Result<()> {
        let ats: Vec<u64> = places.iter().map(|&(_, at)| at).collect();
        out.reserve(places.len());
        let mut failed = None;
        let read = self.journal.read_records(&ats, &mut |k, bytes| {
            let seq = places[k].0;
            let event = Record::decode(bytes)
                .map_err(|why| corrupt(self.p, session, seq, why))
                .and_then(|record| expect_event(self.p, session, seq, record));
            match event {
                Ok(e) => {
                    out.push(e);
                    Ok(())
                }
                Err(e) => {
                    failed = Some(e);
                    Err(crate::journal::JournalError::Io(std::io::Error::other(
                        "stopped",
                    )))
                }
            }
        });
        match (failed, read) {
            (Some(e), _) => Err(e),
            (None, Err(e)) => {
                let seq = places.get(out.len()).map_or(from, |p| p.0);
                Err(corrupt(self.p, session, seq, e.to_string()))
            }
            (None, Ok(())) => Ok(()),
        }
    }

    /// The catalogue entry of `session`.
    pub(super) fn info(&self, session: &SessionId) -> Result<Option<SessionInfo>> {
        let mut info = if self.indexed(session) {
            self.index().info(session)?
        } else {
            None
        };
        if let Some(o) = self.overlay(session) {
            if o.head.is_none() {
                return Ok(None);
            }
            for e in &o.events {
                info = match info {
                    Some(mut i) if e.seq != Seq::FIRST => {
                        i.observe(e);
                        Some(i)
                    }
                    _ => SessionInfo::from_first(e),
                };
            }
        }
        Ok(info)
    }

    /// Every session's catalogue entry, by id.
    pub(super) fn infos(&self) -> Result<Vec<SessionInfo>> {
        debug_assert!(self.scope.is_none(), "every session asked of a scoped view");
        let mut out: Vec<SessionInfo> = self
            .index()
            .infos()?
            .into_iter()
            .filter(|i| !self.overlays.contains_key(&i.id))
            .collect();
        for session in self.overlays.keys() {
            if let Some(info) = self.info(session)? {
                out.push(info);
            }
        }
        out.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(out)
    }

    /// The last plan-carrying seq at or before `seq`.
    pub(super) fn plan_before(&self, session: &SessionId, seq: u64) -> Result<Option<u64>> {
        if let Some(o) = self.overlay(session)
            && let Some(e) = o.back_from(seq).find(|e| marks_of(&e.body).0)
        {
            return Ok(Some(e.seq.get()));
        }
        if self.indexed(session) {
            self.index().plan_before(session, seq)
        } else {
            Ok(None)
        }
    }

    /// The plan mode at `seq`.
    pub(super) fn mode_before(&self, session: &SessionId, seq: u64) -> Result<bool> {
        if let Some(o) = self.overlay(session)
            && let Some(mode) = o.back_from(seq).find_map(|e| marks_of(&e.body).1)
        {
            return Ok(mode);
        }
        if self.indexed(session) {
            Ok(self.index().mode_before(session, seq)?.unwrap_or(false))
        } else {
            Ok(false)
        }
    }

    /// The plan-carrying seqs, and the mode-setting seqs with their modes, in `from..=to`.
    pub(super) fn marks(&self, session: &SessionId, from: u64, to: u64) -> Result<Marks> {
        let (mut plans, mut modes) = if self.indexed(session) && from <= to {
            (
                self.index().plan_marks(session, from..=to)?,
                self.index().mode_marks(session, from..=to)?,
            )
        } else {
            (Vec::new(), Vec::new())
        };
        if let Some(o) = self.overlay(session) {
            for e in o
                .events
                .iter()
                .filter(|e| (from..=to).contains(&e.seq.get()))
            {
                let seq = e.seq.get();
                let (plan, mode) = marks_of(&e.body);
                if plan && plans.last().is_none_or(|l| *l < seq) {
                    plans.push(seq);
                }
                if let Some(m) = mode
                    && modes.last().is_none_or(|l| l.0 < seq)
                {
                    modes.push((seq, m));
                }
            }
        }
        Ok((plans, modes))
    }

    /// An append's checks: its call recorded already, else its place in its session.
    ///
    /// # Errors
    /// As [`check_placement`].
    pub(super) fn check(&self, event: &Event) -> Result<Verdict> {
        if let Some(call) = &event.call_id
            && let Some(seq) = self.find_call(&event.session, call.as_str())?
        {
            let recorded = self.event(&event.session, seq)?.ok_or_else(|| {
                corrupt(
                    self.p,
                    &event.session,
                    seq,
                    "a call id points at a missing event".into(),
                )
            })?;
            return Ok(Verdict::Duplicate(Arc::new(recorded)));
        }
        check_placement(event, self.slot(&event.session)?)?;
        Ok(Verdict::Place)
    }

    /// [`View::check`] for a streamed batch, whose events are not kept: a repeated call is
    /// an error naming the recorded seq.
    ///
    /// # Errors
    /// As [`check_placement`]; [`LogError::InvalidEvent`] for a repeated call.
    pub(super) fn check_streamed(&self, event: &Event) -> Result<()> {
        if let Some(call) = &event.call_id
            && let Some(seq) = self.find_call(&event.session, call.as_str())?
        {
            return Err(LogError::InvalidEvent {
                session: event.session.clone(),
                seq,
                reason: "a streamed event repeats a recorded call id".to_owned(),
            });
        }
        check_placement(event, self.slot(&event.session)?)
    }
}
