//! Records into events. The writer keeps, per source session, where its log ends and its
//! plan; each record becomes at most one event (a session's `session_started` comes with its
//! first call), sealed at once and streamed to the store.
//!
//! - Session ids: `<prefix>-<source id>`, or `<prefix>-<hash>` when the source id is not
//!   usable as a session id ([`session_id`]). Event ids are derived from the session, seq and
//!   time, so importing the same file into two stores gives byte-identical sessions, and a
//!   deleted imported session can be imported again (it is restored: same first event).
//! - A source session already in the store (an earlier import) gets only the calls whose
//!   call ids it has not recorded; a call id seen twice in one source is one call.
//! - Whole lists (`replace`) get item ids from [`ItemIds`](super::ids::ItemIds); task calls
//!   keep the source's ids (`upsert`, `remove`); the source's refusals are `write_rejected`
//!   with code `source_refused`; checkpoints are `checkpoint_seen`.
//! - Times: the source's, noted when unreadable (the previous event's time is used) or
//!   earlier than the previous event's (kept as the source says).
//! - Every main source session gets a session, also without plan calls; a sub-agent's only
//!   when it made plan calls. A sub-agent's parent missing from the store is created (empty)
//!   first, so the lineage holds; importing the parent's source later fills it.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::mpsc;

use planlog_core::render::one_line;
use planlog_core::{
    CallId, Env, EventLog, ItemId, LogError, Plan, PlanItem, PlanStatus, Seq, SessionId,
    SessionState, Timestamp, apply,
    events::{
        CheckpointSeen, ContextCompacted, Event, EventBody, EventDraft, Head, Origin, Placement,
        PlanRestored, PlanWritten, SealedEvent, SessionDescription, SessionStarted, SourceLine,
        ToolCall, WriteRejected, WriteSemantics, stamp_ids_issued,
    },
    rules::{RejectionCode, remove, upsert},
    tasks::{TaskChange, TaskStatus, apply_change, with_blocker},
};
use sha2::{Digest, Sha256};

use super::bounds::{bound_op, bound_tool_call};
use super::derived::{Derived, Effect, Fold};
use super::history_cache::HistoryCache;
use super::hooked::Hooked;
use super::ids::{Listed, Sent, keep_all};
use super::record::{BadLine, Op, Record, SourceCall, SourceSession, Stamp, TaskPatch, Todo};
use super::{ImportError, ImportOptions, Input, SourceFormat};

/// What an import did to one source session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionReport {
    /// The planlog session.
    pub id: SessionId,
    /// The source session's key.
    pub key: String,
    /// Its parent (a sub-agent's main session), when it has one.
    pub parent: Option<SessionId>,
    /// True when this import created it (false: it was imported before).
    pub created: bool,
    /// Events appended for its calls and checkpoints.
    pub calls: usize,
    /// Calls skipped because the session had recorded them already (a re-import).
    pub already: usize,
    /// True when the session holds no plan call at all after the import.
    pub no_plan: bool,
    /// True when the source only names this session as a sub-agent's parent: it was created
    /// empty (`created`) or merely linked to; its own source fills it when imported.
    pub stand_in: bool,
}

/// What an import of one source did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileReport {
    /// The format read.
    pub format: SourceFormat,
    /// Its sessions, in order of first appearance (a main session before its sub-agents).
    pub sessions: Vec<SessionReport>,
    /// Lines skipped (with [`ImportOptions::skip_bad_lines`]).
    pub skipped: Vec<BadLine>,
    /// The source is still being written: what was left for the next import.
    pub unfinished: Unfinished,
    /// The source holds no conversation, and why: nothing was written for it.
    pub no_conversation: Option<String>,
}

/// What an import of a source still being written left for the next import of it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Unfinished {
    /// The last line, cut where the file ends.
    pub cut_line: Option<u64>,
    /// Calls waiting for results the source does not hold yet (with what followed them in
    /// their sessions): (the line of the first, how many records).
    pub waiting: Vec<(u64, usize)>,
}

impl Unfinished {
    /// Whether anything was left.
    pub fn any(&self) -> bool {
        self.cut_line.is_some() || !self.waiting.is_empty()
    }
}

impl FileReport {
    /// Events appended in all.
    pub fn calls(&self) -> usize {
        self.sessions.iter().map(|s| s.calls).sum()
    }
}

/// The planlog session id of a source session.
pub fn session_id(format: SourceFormat, key: &str) -> SessionId {
    let prefix = format.session_prefix();
    if let Ok(id) = SessionId::new(format!("{prefix}-{key}")) {
        return id;
    }
    let digest = Sha256::digest(format!("{}\n{key}", format.word()).as_bytes());
    let hex: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    // Invariant: a short prefix, '-' and 32 hex digits is a valid session id.
    SessionId::new(format!("{prefix}-{hex}"))
        .unwrap_or_else(|_| SessionId::from_ulid(ulid::Ulid::nil()))
}

/// The event id of an imported event: its time, and bits of the hash of its place.
fn event_id(session: &SessionId, seq: Seq, at: Timestamp) -> ulid::Ulid {
    let digest = Sha256::digest(format!("{session}\n{}", seq.get()).as_bytes());
    let mut bits = [0u8; 16];
    bits.copy_from_slice(&digest[..16]);
    let random = u128::from_be_bytes(bits) & ((1u128 << 80) - 1);
    let ms = u64::try_from(at.as_millis()).unwrap_or(0);
    ulid::Ulid::from_parts(ms, random)
}

/// Runs one import: the parser on its own thread, the writer streaming into the store. Bytes
/// already in memory are parsed on this thread first (their records are no larger than they
/// are), which spares starting a thread per import (the hook's, the fuzzer's).
pub(crate) fn write(
    log: &dyn EventLog,
    env: &dyn Env,
    format: SourceFormat,
    input: Input<'_>,
    options: ImportOptions,
) -> Result<FileReport, ImportError> {
    let progress = options.progress;
    let mut writer = Writer::new(
        log,
        env,
        format,
        input.shown(),
        format!("imported from {}", input.file_name()),
        options,
    );
    let appended = if let Input::Bytes { .. } = input {
        let mut records = super::records(format, input).into_iter();
        let mut events = std::iter::from_fn(|| writer.next_event(&mut records));
        log.append_sealed_iter(&mut events)
    } else {
        std::thread::scope(|scope| {
            let (tx, rx) = mpsc::sync_channel::<Record>(256);
            let parser = scope.spawn(move || {
                super::progress::counted(progress, || {
                    super::parse(format, input, &mut |r| tx.send(r).is_ok());
                });
            });
            let appended = {
                // `records` owns the receiver and drops it before the parser is joined, so a
                // writer that stops early ends the parser (its next send fails).
                let mut records = rx.into_iter();
                let mut events = std::iter::from_fn(|| writer.next_event(&mut records));
                log.append_sealed_iter(&mut events)
            };
            // Joined here rather than by the scope's end: a join waits until the thread has
            // exited and freed its thread-locals, where the scope only waits for the closure to
            // return (a leak checker looking right after an import saw the thread-locals).
            if let Err(panic) = parser.join() {
                std::panic::resume_unwind(panic);
            }
            appended
        })
    };
    if let Some(failure) = writer.failure.take() {
        return Err(failure);
    }
    appended?;
    writer.keep_history();
    Ok(writer.report())
}

/// Writes records made elsewhere (a Claude Code hook's one call) as one transaction, reading
/// the source again after a lost race as [`super::import`] does. `name` names the source in
/// messages; `label` labels the sessions it creates; `history` is where what is derived from
/// a session's history is kept between calls ([`ImportOptions::history`]).
///
/// # Errors
/// As [`super::import`].
pub fn write_records(
    log: &dyn EventLog,
    env: &dyn Env,
    format: SourceFormat,
    name: &str,
    label: &str,
    records: &[Record],
    history: Option<&HistoryCache>,
) -> Result<FileReport, ImportError> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        let mut writer = Writer::new(
            log,
            env,
            format,
            name.to_owned(),
            label.to_owned(),
            ImportOptions {
                history: history.cloned(),
                ..ImportOptions::default()
            },
        );
        let mut stream = records.iter().cloned();
        let appended = {
            let mut events = std::iter::from_fn(|| writer.next_event(&mut stream));
            log.append_sealed_iter(&mut events)
        };
        if let Some(failure) = writer.failure.take() {
            return Err(failure);
        }
        match appended {
            Ok(_) => {
                writer.keep_history();
                return Ok(writer.report());
            }
            Err(LogError::Conflict { .. }) if attempt < super::CONFLICT_ATTEMPTS => {
                env.pause(attempt as u32);
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// Where a session's log ends, and its plan.
struct Live {
    head: Head,
    last_at: Timestamp,
    /// The session's state after `head` (its plan, and the ids it has issued).
    state: SessionState,
}

struct Slot {
    id: SessionId,
    source: SourceSession,
    live: Option<Live>,
    existed: bool,
    seen_calls: HashSet<CallId>,
    /// What the import derives from the session's history; for a session stored before, built
    /// from its events (up to `base`) the first time a call needs it.
    derived: Option<Derived>,
    /// The session's last stored event when this import began (`None`: a new session).
    base: Option<Head>,
    /// The derived state as reading the stored events back would give it, once the import
    /// has read them (or what the history cache kept): kept up with every event this import
    /// appends to the session, and saved in the cache once they are stored. `None` when the
    /// history was not needed, or when this import had appended to the session before it was
    /// (those events are not in it).
    folded: Option<Fold>,
    /// What this import did to the derived state before it was built (applied once it is).
    since_base: Vec<Effect>,
    /// The session's last whole list, when known without `derived`.
    last_list: LastList,
    /// Its description as last recorded (a new one is recorded only when it differs).
    description: Option<SessionDescription>,
    /// What hooks recorded in the session without the source's ids (compactions without
    /// their boundary line, calls without a call id); read once, when needed.
    hooked: Option<Hooked>,
    /// What the source said of a sub-agent session not made yet (it is made for a plan call).
    held: Option<SourceCall>,
    /// The seq of the last call of the source this import found recorded already (by a
    /// hook), while no call was appended after it: checkpoints that follow it in the source
    /// belong with the plan there.
    anchor: Option<Seq>,
    report: SessionReport,
}

struct Writer<'a> {
    log: &'a dyn EventLog,
    env: &'a dyn Env,
    format: SourceFormat,
    file: String,
    label: String,
    options: ImportOptions,
    slots: HashMap<String, Slot>,
    order: Vec<String>,
    out: VecDeque<SealedEvent>,
    skipped: Vec<BadLine>,
    unfinished: Unfinished,
    no_conversation: Option<String>,
    failure: Option<ImportError>,
    finished: bool,
}

/// What an import yields to abort the store's transaction when it failed itself (the real
/// error is kept aside): ending the stream instead would commit what came before.
pub(crate) fn stop() -> LogError {
    LogError::InvalidEvent {
        session: SessionId::from_ulid(ulid::Ulid::nil()),
        seq: 0,
        reason: "the import stopped".to_owned(),
    }
}

impl<'a> Writer<'a> {
    fn new(
        log: &'a dyn EventLog,
        env: &'a dyn Env,
        format: SourceFormat,
        file: String,
        label: String,
        options: ImportOptions,
    ) -> Self {
        Self {
            log,
            env,
            format,
            file,
            label,
            options,
            slots: HashMap::new(),
            order: Vec::new(),
            out: VecDeque::new(),
            skipped: Vec::new(),
            unfinished: Unfinished::default(),
            no_conversation: None,
            failure: None,
            finished: false,
        }
    }

    fn report(&self) -> FileReport {
        FileReport {
            format: self.format,
            sessions: self
                .order
                .iter()
                .filter_map(|k| self.slots.get(k))
                .filter(|s| s.existed || s.live.is_some())
                // A session this source only names as a parent, and did not create.
                .filter(|s| !s.report.stand_in || s.report.created)
                .map(|s| s.report.clone())
                .collect(),
            skipped: self.skipped.clone(),
            unfinished: self.unfinished.clone(),
            no_conversation: self.no_conversation.clone(),
        }
    }

    /// The next event to append, pulling records as needed.
    fn next_event(
        &mut self,
        records: &mut impl Iterator<Item = Record>,
    ) -> Option<Result<SealedEvent, LogError>> {
        loop {
            if self.failure.is_some() {
                return Some(Err(stop()));
            }
            if let Some(e) = self.out.pop_front() {
                return Some(Ok(e));
            }
            if self.finished {
                return None;
            }
            if self
                .options
                .deadline
                .is_some_and(|d| std::time::Instant::now() >= d)
            {
                self.failure = Some(ImportError::TimedOut {
                    file: self.file.clone(),
                });
                continue;
            }
            let step = match records.next() {
                Some(record) => self.take(record),
                None => {
                    self.finished = true;
                    self.finish()
                }
            };
            match step {
                Ok(()) => {}
                Err(Step::Failed(e)) => self.failure = Some(e),
                Err(Step::Store(e)) => return Some(Err(e)),
            }
        }
    }

    fn take(&mut self, record: Record) -> Result<(), Step> {
        match record {
            Record::Session(s) => self.session(s),
            Record::Call(c) => self.call(c),
            Record::Bad(bad) => self.bad(bad),
            Record::Cut(line) => {
                self.unfinished.cut_line = Some(line);
                Ok(())
            }
            Record::Deferred { records, line, .. } => {
                self.unfinished.waiting.push((line, records));
                Ok(())
            }
            Record::NoConversation(why) => {
                self.no_conversation = Some(why);
                Ok(())
            }
            Record::Unreadable(detail) => Err(Step::Failed(ImportError::Read {
                file: self.file.clone(),
                detail,
            })),
        }
    }

    fn bad(&mut self, bad: BadLine) -> Result<(), Step> {
        if self.options.skip_bad_lines {
            tracing::warn!(file = %self.file, line = bad.line, why = %bad.why, "skipping a bad line");
            self.skipped.push(bad);
            Ok(())
        } else {
            Err(Step::Failed(ImportError::BadLine {
                file: self.file.clone(),
                line: bad,
                skippable: true,
            }))
        }
    }

    /// A source session seen: look it up in the store (a re-import) or prepare it.
    fn session(&mut self, source: SourceSession) -> Result<(), Step> {
        if self.slots.contains_key(&source.key) {
            return Ok(());
        }
        if let Some(parent) = &source.parent
            && !self.slots.contains_key(parent)
        {
            let mut main = SourceSession::main(parent.clone(), source.started);
            main.label = Some(format!("the parent of a sub-agent; {}", self.label));
            self.session(main)?;
            if let Some(slot) = self.slots.get_mut(parent) {
                slot.report.stand_in = true;
            }
        }
        let id = session_id(self.format, &source.key);
        let parent = source
            .parent
            .as_ref()
            .and_then(|p| self.slots.get(p))
            .map(|p| p.id.clone());
        let mut slot = Slot {
            id: id.clone(),
            live: None,
            existed: false,
            seen_calls: HashSet::new(),
            derived: Some(Derived::default()),
            base: None,
            folded: None,
            since_base: Vec::new(),
            last_list: LastList::Unknown,
            description: None,
            hooked: None,
            held: None,
            anchor: None,
            report: SessionReport {
                id: id.clone(),
                key: source.key.clone(),
                parent,
                created: false,
                calls: 0,
                already: 0,
                no_plan: true,
                stand_in: false,
            },
            source,
        };
        if let Some(last) = self.log.last(&id).map_err(Step::Store)? {
            let first = self
                .log
                .read(&id, Seq::FIRST, Some(Seq::FIRST))
                .map_err(Step::Store)?;
            let ours = first.first().is_some_and(|e| {
                matches!(&e.body, EventBody::SessionStarted(s) if matches!(&s.origin,
                    Origin::Import { source, source_session, .. }
                        if source == self.format.word() && source_session.as_deref() == Some(slot.source.key.as_str())))
            });
            if !ours {
                return Err(Step::Failed(ImportError::Clash {
                    session: id,
                    format: self.format,
                    key: slot.source.key,
                }));
            }
            let state = self.log.state_at(&id, last.seq).map_err(Step::Store)?;
            slot.description = self
                .log
                .session(&id)
                .map_err(Step::Store)?
                .and_then(|info| info.description);
            slot.derived = None;
            slot.base = Some(Head::of(&last));
            slot.report.no_plan = state.plan.is_empty() && !is_plan_event(&last.body);
            slot.existed = true;
            slot.live = Some(Live {
                head: Head::of(&last),
                last_at: last.at,
                state,
            });
        }
        self.order.push(slot.source.key.clone());
        self.slots.insert(slot.source.key.clone(), slot);
        Ok(())
    }

    /// Appends `session_started` for a session not in the store yet (its parent's first).
    fn start(&mut self, key: &str, at: Option<Timestamp>) -> Result<(), Step> {
        let Some(slot) = self.slots.get(key) else {
            return Ok(());
        };
        if slot.live.is_some() {
            return Ok(());
        }
        if let Some(parent) = slot.source.parent.clone() {
            self.start(&parent, at)?;
        }
        let Some(slot) = self.slots.get(key) else {
            return Ok(());
        };
        let at = slot.source.started.or(at).unwrap_or_else(|| self.env.now());
        let parent = slot.report.parent.clone();
        let body = EventBody::SessionStarted(SessionStarted {
            origin: Origin::Import {
                source: self.format.word().to_owned(),
                source_session: Some(slot.source.key.clone()),
                parent,
                cwd: slot.source.cwd.clone(),
                transcript: slot.source.transcript.clone(),
            },
            label: Some(
                slot.source
                    .label
                    .clone()
                    .unwrap_or_else(|| self.label.clone()),
            ),
            plan: Plan::new(),
            plan_mode: false,
            ids_issued: None,
        });
        let id = slot.id.clone();
        let sealed = SealedEvent::seal(
            Placement::after_head(None, id.clone(), event_id(&id, Seq::FIRST, at), at),
            EventDraft::new(body),
        );
        let event = sealed.event();
        if let Some(slot) = self.slots.get_mut(key) {
            slot.live = Some(Live {
                head: Head::of(event),
                last_at: at,
                state: apply(SessionState::default(), &event.body),
            });
            slot.report.created = true;
        }
        self.out.push_back(sealed);
        Ok(())
    }

    fn call(&mut self, mut call: SourceCall) -> Result<(), Step> {
        bound_op(&mut call.op, &mut call.notes);
        bound_tool_call(&mut call.tool_call, &mut call.notes);
        if !self.slots.contains_key(&call.session) {
            self.session(SourceSession::main(call.session.clone(), None))?;
        }
        if let Some(slot) = self.slots.get_mut(&call.session) {
            // A sub-agent's session is made only for a plan call: what the source says of it
            // waits for one (the latest says everything the earlier ones did).
            if slot.live.is_none() && slot.source.parent.is_some() {
                if matches!(call.op, Op::Describe(_)) {
                    slot.held = Some(call);
                    return Ok(());
                }
                if let Some(held) = slot.held.take() {
                    // Started first, so the held description is recorded, not held again.
                    self.start(&call.session, held.at.known().or(call.at.known()))?;
                    self.call(held)?;
                }
            }
        }
        if let Some(slot) = self.slots.get_mut(&call.session) {
            slot.report.stand_in = false;
        }
        let call_id = call
            .call_id
            .as_ref()
            .and_then(|c| CallId::new(c.clone()).ok())
            .or_else(|| CallId::new(format!("line:{}", call.line)).ok());
        // A task folder's snapshot is no call: it is compared with the plan instead. A snapshot
        // a hook read after a call (Copilot's todo table) is that call's.
        let snapshot = matches!(call.op, Op::Snapshot(_));
        let call_id = if snapshot && call.call_id.is_none() {
            None
        } else {
            call_id
        };
        {
            let Some(slot) = self.slots.get_mut(&call.session) else {
                return Ok(());
            };
            if let Some(c) = &call_id {
                if !slot.seen_calls.insert(c.clone()) {
                    return Ok(());
                }
                if slot.existed
                    && let Some(seq) = self.log.find_call(&slot.id, c).map_err(Step::Store)?
                {
                    if !matches!(
                        call.op,
                        Op::Describe(_) | Op::Compacted { .. } | Op::Restored { .. }
                    ) {
                        slot.report.already += 1;
                    }
                    // What follows it in the source belongs with the plan it left (a hook
                    // recorded it, or an earlier import): a call's seq, or the seq a recorded
                    // checkpoint belongs with. Events that leave the plan as it was move
                    // nothing.
                    match call.op {
                        Op::Describe(_) | Op::Compacted { .. } | Op::Restored { .. } => {}
                        Op::Checkpoint(_) => {
                            let against = self
                                .log
                                .read(&slot.id, seq, Some(seq))
                                .map_err(Step::Store)?
                                .into_iter()
                                .find_map(|e| match e.body {
                                    EventBody::CheckpointSeen(c) => c.against,
                                    _ => None,
                                });
                            slot.anchor = Some(against.unwrap_or(seq));
                        }
                        _ => slot.anchor = Some(seq),
                    }
                    return Ok(());
                }
                // A compaction a hook recorded without its boundary line (Claude Code writes
                // the line after its hooks ran) is this boundary's when it was recorded
                // right after the boundary's time.
                // One a source infers (Gemini) is a hook's recorded between the last sight of
                // the context before it and its own time.
                if slot.existed
                    && let Op::Compacted { since, .. } = &call.op
                    && !c.as_str().starts_with("compact:hook-")
                    && let Some(at) = call.at.known()
                    && hooked(self.log, slot)
                        .map_err(Step::Store)?
                        .compaction(at, *since)
                {
                    return Ok(());
                }
                // A call a hook recorded without the source's call id (Gemini CLI's hooks
                // get none) is this call when its tool, arguments and time agree.
                if slot.existed
                    && self.format.hooks_lack_call_ids()
                    && !c.as_str().starts_with("hook:")
                    && let (Some(tool_call), Some(at)) = (&call.tool_call, call.at.known())
                    && let Some(seq) = hooked(self.log, slot)
                        .map_err(Step::Store)?
                        .call(tool_call, at)
                {
                    slot.report.already += 1;
                    slot.anchor = Some(seq);
                    return Ok(());
                }
            }
        }
        self.start(&call.session, call.at.known())?;
        let Some(slot) = self.slots.get_mut(&call.session) else {
            return Ok(());
        };
        let Some(live) = slot.live.as_ref() else {
            return Ok(());
        };
        let mut notes = call.notes.clone();
        // A call recorded before (by a hook) stands for where the source is; what follows it
        // in the source is older than the events recorded after it, and that is no surprise.
        let anchored = slot.anchor.filter(|a| *a != live.head.seq);
        let at = match &call.at {
            Stamp::At(t) if *t < live.last_at && anchored.is_some() => *t,
            Stamp::At(t) if *t < live.last_at => {
                notes.push(format!(
                    "the source's time {t} is earlier than the previous event's ({})",
                    live.last_at
                ));
                *t
            }
            Stamp::At(t) => *t,
            Stamp::Unreadable(text) => {
                notes.push(format!(
                    "unreadable timestamp {:?} in the source; the previous event's time is used",
                    one_line(text)
                ));
                live.last_at
            }
            Stamp::Missing => {
                notes.push(
                    "the source gives no time for this line; the previous event's time is shown"
                        .to_owned(),
                );
                live.last_at
            }
        };
        let plan = live.state.plan.clone();
        // A list whose items all keep their ids by what the last list alone says needs no
        // history (the common call: statuses change, items stay).
        let kept = match &call.op {
            Op::List(todos) if slot.derived.is_none() => {
                let sent = sent_list(todos);
                last_list(self.log, slot)
                    .map_err(Step::Store)?
                    .and_then(|prev| keep_all(prev, &sent))
            }
            _ => None,
        };
        let needs_history = match &call.op {
            Op::List(_) => kept.is_none(),
            Op::Checkpoint(_) => true,
            Op::Update { id, .. } | Op::Delete { id } => {
                item_id(id).is_none_or(|i| plan.get(&i).is_none())
            }
            Op::Create(_)
            | Op::Refused { .. }
            | Op::Blocked { .. }
            | Op::Snapshot(_)
            | Op::Describe(_)
            | Op::Compacted { .. }
            | Op::Restored { .. } => false,
        };
        if needs_history && slot.derived.is_none() {
            let mut derived = match slot.base {
                Some(base) => {
                    let saved = self.options.history.as_ref().and_then(|h| h.load(&slot.id));
                    let fold =
                        Fold::replay(self.log, &slot.id, base, saved).map_err(Step::Store)?;
                    let moved = slot.live.as_ref().is_some_and(|l| l.head != base);
                    if self.options.history.is_some() && !moved {
                        let derived = fold.derived.clone();
                        slot.folded = Some(fold);
                        derived
                    } else {
                        fold.derived
                    }
                }
                None => Derived::default(),
            };
            for effect in slot.since_base.drain(..) {
                derived.apply(effect);
            }
            slot.derived = Some(derived);
        }
        let (key, turn, line) = (call.session, call.turn, call.line);
        let said = Said {
            explanation: call.explanation,
            tool_call: call.tool_call,
        };
        let plan_change = matches!(
            call.op,
            Op::List(_) | Op::Create(_) | Op::Update { .. } | Op::Delete { .. } | Op::Snapshot(_)
        );
        let body = match build(slot, &plan, call.op, kept, said, line, &mut notes) {
            Ok(Some(body)) => body,
            Ok(None) => return Ok(()),
            Err(bad) => return self.bad(bad),
        };
        let body = match body {
            EventBody::CheckpointSeen(c) => EventBody::CheckpointSeen(CheckpointSeen {
                against: anchored,
                ..c
            }),
            other => other,
        };
        if plan_change {
            // Appended at the end: what follows it belongs after it.
            slot.anchor = None;
        }
        self.seal(&key, at, turn, call_id, body);
        Ok(())
    }

    /// Seals `body` as the next event of `key`.
    fn seal(
        &mut self,
        key: &str,
        at: Timestamp,
        turn: Option<u64>,
        call_id: Option<CallId>,
        body: EventBody,
    ) {
        let Some(slot) = self.slots.get_mut(key) else {
            return;
        };
        let Some(live) = slot.live.as_mut() else {
            return;
        };
        let seq = live.head.seq.next();
        let mut body = body;
        stamp_ids_issued(&live.state, &mut body);
        let sealed = SealedEvent::seal(
            Placement::after_head(
                Some(live.head),
                slot.id.clone(),
                event_id(&slot.id, seq, at),
                at,
            ),
            EventDraft {
                turn,
                call_id,
                body,
            },
        );
        let event = sealed.event();
        live.state = apply(std::mem::take(&mut live.state), &event.body);
        live.head = Head::of(event);
        live.last_at = at;
        if let Some(fold) = slot.folded.as_mut() {
            fold.take(event);
        }
        slot.report.calls += 1;
        slot.report.no_plan &= !is_plan_event(&event.body);
        self.out.push_back(sealed);
    }

    /// Saves in the history cache what reading each session's events back would give now
    /// that they are stored (for the sessions whose history this import read).
    fn keep_history(&self) {
        let Some(cache) = &self.options.history else {
            return;
        };
        for slot in self.slots.values() {
            if let (Some(fold), Some(live)) = (&slot.folded, &slot.live) {
                cache.save(&slot.id, live.head, fold);
            }
        }
    }

    /// The source ended: every main session gets a session, also without calls.
    fn finish(&mut self) -> Result<(), Step> {
        let mains: Vec<String> = self
            .order
            .iter()
            .filter(|k| {
                self.slots
                    .get(*k)
                    .is_some_and(|s| s.source.parent.is_none() && s.live.is_none())
            })
            .cloned()
            .collect();
        for key in mains {
            self.start(&key, None)?;
        }
        Ok(())
    }
}

/// What hooks recorded in `slot`'s stored session without the source's ids, read on first
/// use.
fn hooked<'s>(log: &dyn EventLog, slot: &'s mut Slot) -> Result<&'s mut Hooked, LogError> {
    if slot.hooked.is_none() {
        slot.hooked = Some(Hooked::read(log, &slot.id, slot.base.map(|h| h.seq))?);
    }
    // Set just above when it was not.
    Ok(slot.hooked.get_or_insert_default())
}

/// What is known of a session's last whole list without reading its history.
enum LastList {
    /// Not looked at yet.
    Unknown,
    /// The stored session does not end with a whole list (a task call, a checkpoint, none).
    NotAList,
    /// Its items' ids, texts and statuses.
    Known(Vec<Listed>),
}

/// How many of a stored session's last events are read for its last plan write (events
/// after it that leave the plan as it was: refusals, checkpoints, descriptions, compactions,
/// restores).
const LAST_LIST_WINDOW: u64 = 16;

/// The last whole list of `slot`'s session: the one this import wrote, else the stored
/// session's last plan write when that is a whole list, among its last [`LAST_LIST_WINDOW`]
/// events (read once: the last event alone first, which answers when the session's last
/// call was a plan write, as a hook's usually was; the window only when it does not).
fn last_list<'s>(log: &dyn EventLog, slot: &'s mut Slot) -> Result<Option<&'s [Listed]>, LogError> {
    if matches!(slot.last_list, LastList::Unknown) {
        let last = slot.live.as_ref().map_or(0, |live| live.head.seq.get());
        let read = |from: u64, to: u64| -> Result<Vec<Event>, LogError> {
            match (Seq::new(from.max(1)), Seq::new(to)) {
                (Ok(from), Ok(to)) if from <= to => log.read(&slot.id, from, Some(to)),
                _ => Ok(Vec::new()),
            }
        };
        let found = match list_in(&read(last, last)?) {
            Some(found) => Some(found),
            None => list_in(&read(
                last.saturating_sub(LAST_LIST_WINDOW - 1),
                last.saturating_sub(1),
            )?),
        };
        slot.last_list = found.unwrap_or(LastList::NotAList);
    }
    Ok(match &slot.last_list {
        LastList::Known(list) => Some(list),
        LastList::Unknown | LastList::NotAList => None,
    })
}

/// What the last of `window`'s events that says (a plan write, or the session's start) says
/// of the last whole list; `None` when none does.
fn list_in(window: &[Event]) -> Option<LastList> {
    window.iter().rev().find_map(|e| match &e.body {
        EventBody::PlanWritten(w) if w.semantics == WriteSemantics::Replace => Some(
            LastList::Known(w.submitted.iter().map(Listed::from).collect()),
        ),
        // A task call, or the session's start: the last plan is no whole list.
        EventBody::PlanWritten(_) | EventBody::SessionStarted(_) => Some(LastList::NotAList),
        _ => None,
    })
}

/// Why the writer stopped: the import failed (the user must act), or the store did.
enum Step {
    Failed(ImportError),
    Store(LogError),
}

/// The source line of an event, with the notes joined.
fn source_line(line: u64, notes: &[String]) -> SourceLine {
    SourceLine {
        line,
        note: (!notes.is_empty()).then(|| notes.join("; ")),
    }
}

/// A whole list's items as the id assigner reads them.
fn sent_list(todos: &[Todo]) -> Vec<Sent> {
    todos
        .iter()
        .map(|t| Sent {
            source: t.id.clone(),
            content: t.content.clone(),
            status: t.status,
        })
        .collect()
}

/// An item id from a source's task id (`None` when not usable as one).
fn item_id(text: &str) -> Option<ItemId> {
    ItemId::new(text.to_owned()).ok()
}

/// A plan item from a source's todo, under `id`.
fn item(id: ItemId, todo: &Todo) -> PlanItem {
    let mut item = PlanItem::new(id, todo.content.clone(), todo.status);
    if let Some(d) = &todo.description {
        item = item.with_description(d.clone());
    }
    if let Some(a) = &todo.active_form {
        item = item.with_active_form(a.clone());
    }
    if let Some(o) = &todo.owner {
        item = item.with_owner(o.clone());
    }
    if let Some(b) = &todo.blocked_by {
        item = item.with_blocked_by(b.iter().filter_map(|b| item_id(b)).collect());
    }
    if let Some(m) = &todo.metadata {
        item = item.with_metadata(m.clone());
    }
    item
}

/// Items with the source's ids (checkpoints, task folders); items without a usable id are
/// left out and noted.
fn items_with_ids(todos: &[Todo], notes: &mut Vec<String>) -> Vec<PlanItem> {
    let mut seen = HashSet::new();
    todos
        .iter()
        .filter_map(|t| {
            let id =
                t.id.as_deref()
                    .and_then(item_id)
                    .filter(|id| seen.insert(id.clone()));
            if id.is_none() {
                notes.push(format!(
                    "an item without a usable id left out: {:?}",
                    one_line(&t.content)
                ));
            }
            id.map(|id| item(id, t))
        })
        .collect()
}

/// The item a task update or delete starts from: the plan's, else the last checkpoint's,
/// else a stand-in (noted: the task was created outside what this source recorded).
fn task_base(slot: &Slot, plan: &Plan, id: &ItemId, notes: &mut Vec<String>) -> PlanItem {
    if let Some(it) = plan.get(id) {
        return it.clone();
    }
    if let Some(t) = slot
        .derived
        .iter()
        .flat_map(|d| &d.checkpoint)
        .find(|t| t.id.as_deref() == Some(id.as_str()))
    {
        notes.push(format!(
            "task #{id} was not created in this source; taken from the source's last list"
        ));
        return item(id.clone(), t);
    }
    notes.push(format!(
        "task #{id} was not created in this source and no list of the source shows it"
    ));
    PlanItem::new(id.clone(), format!("task #{id}"), PlanStatus::Pending)
}

/// The source's changes as a task change: ids that are not usable as item ids are left out
/// (noted), blockers the source never created are noted.
fn task_change(patch: TaskPatch, plan: &Plan, notes: &mut Vec<String>) -> TaskChange {
    let mut ids = |list: Vec<String>, what: &str| -> Vec<ItemId> {
        list.iter()
            .filter_map(|b| {
                let id = item_id(b);
                if id.is_none() {
                    notes.push(format!(
                        "{what} an id that is not usable as one, left out: {:?}",
                        one_line(b)
                    ));
                }
                id
            })
            .collect()
    };
    let add_blocked_by = ids(patch.add_blocked_by, "blocked by");
    let add_blocks = ids(patch.add_blocks, "blocks");
    let blocked_by = patch.blocked_by.map(|list| ids(list, "blocked by"));
    for b in add_blocked_by.iter().chain(blocked_by.iter().flatten()) {
        if plan.get(b).is_none() {
            notes.push(format!(
                "blocked by task #{b}, which this source never created"
            ));
        }
    }
    TaskChange {
        subject: patch.subject,
        description: patch.description,
        active_form: patch.active_form,
        owner: patch.owner,
        status: patch.status.map(TaskStatus::Set),
        add_blocks,
        add_blocked_by,
        blocked_by,
        metadata: patch.metadata,
    }
}

/// Whether an event is about the plan (a call, a refusal, a checkpoint), not about the
/// session (its start, its description, a compaction, a restore).
fn is_plan_event(body: &EventBody) -> bool {
    matches!(
        body,
        EventBody::PlanWritten(_) | EventBody::WriteRejected(_) | EventBody::CheckpointSeen(_)
    )
}

/// `said` over `before`: each field `said` gives replaces `before`'s.
fn merge_description(before: &SessionDescription, said: SessionDescription) -> SessionDescription {
    let pick = |new: Option<String>, old: &Option<String>| new.or_else(|| old.clone());
    SessionDescription {
        title: pick(said.title, &before.title),
        agent: pick(said.agent, &before.agent),
        agent_version: pick(said.agent_version, &before.agent_version),
        entrypoint: pick(said.entrypoint, &before.entrypoint),
        project: pick(said.project, &before.project),
        branch: pick(said.branch, &before.branch),
        model: pick(said.model, &before.model),
        first_prompt: pick(said.first_prompt, &before.first_prompt),
    }
}

/// What the agent said with a call, kept on its event.
struct Said {
    /// Its own note on why the plan changed (Codex's `explanation`).
    explanation: Option<String>,
    /// The call as sent and what came back.
    tool_call: Option<ToolCall>,
}

/// The event body of one call (`Ok(None)`: nothing to record; `Err`: a bad line).
fn build(
    slot: &mut Slot,
    plan: &Plan,
    op: Op,
    kept: Option<Vec<ItemId>>,
    said: Said,
    line: u64,
    notes: &mut Vec<String>,
) -> Result<Option<EventBody>, BadLine> {
    let Said {
        explanation,
        tool_call,
    } = said;
    let source = |notes: &[String]| {
        // Line 0 is the whole source (a task folder): only worth keeping with a note.
        (line > 0 || !notes.is_empty()).then(|| source_line(line, notes))
    };
    let written = |semantics,
                   submitted: Vec<PlanItem>,
                   after: Plan,
                   notes: &[String],
                   explanation,
                   tool_call| {
        EventBody::PlanWritten(PlanWritten {
            semantics,
            submitted,
            plan: after,
            explanation,
            source: source(notes),
            // Set by `seal`, which knows the session's state.
            ids_issued: None,
            tool_call,
        })
    };
    let unusable = |what: &str, id: &str| BadLine {
        line,
        why: format!(
            "the {what} task's id {:?} is not usable as an item id",
            one_line(id)
        ),
    };
    Ok(Some(match op {
        Op::List(todos) => {
            let sent = sent_list(&todos);
            let ids = match (kept, slot.derived.as_mut()) {
                (Some(ids), _) => ids,
                (None, Some(derived)) => derived.item_ids.assign(&sent),
                (None, None) => Derived::default().item_ids.assign(&sent),
            };
            let items: Vec<PlanItem> = ids
                .into_iter()
                .zip(&todos)
                .map(|(id, t)| item(id, t))
                .collect();
            let listed: Vec<Listed> = items.iter().map(Listed::from).collect();
            slot.last_list = LastList::Known(listed.clone());
            match slot.derived.as_mut() {
                // `assign` has observed the list already; observing it again changes nothing.
                Some(derived) => derived.apply(Effect::Listed(listed)),
                None => slot.since_base.push(Effect::Listed(listed)),
            }
            written(
                WriteSemantics::Replace,
                items.clone(),
                Plan::from_items(items),
                notes,
                explanation,
                tool_call,
            )
        }
        Op::Snapshot(todos) => {
            let items = items_with_ids(&todos, notes);
            if items == plan.items() {
                return Ok(None);
            }
            written(
                WriteSemantics::Replace,
                items.clone(),
                Plan::from_items(items),
                notes,
                explanation,
                tool_call,
            )
        }
        Op::Create(todo) => {
            let raw = todo.id.clone().unwrap_or_default();
            let Some(id) = item_id(&raw) else {
                return Err(unusable("created", &raw));
            };
            if plan.get(&id).is_some() {
                notes.push(format!("task #{id} created again; the new one replaces it"));
            }
            match slot.derived.as_mut() {
                Some(d) => d.apply(Effect::Created(id.clone())),
                None => slot.since_base.push(Effect::Created(id.clone())),
            }
            let created = item(id, &todo);
            let after = upsert(plan, std::slice::from_ref(&created));
            written(
                WriteSemantics::Upsert,
                vec![created],
                after,
                notes,
                None,
                tool_call,
            )
        }
        Op::Update { id, patch } => {
            let Some(id) = item_id(&id) else {
                return Err(unusable("updated", &id));
            };
            let base = task_base(slot, plan, &id, notes);
            let change = task_change(patch, plan, notes);
            let mut submitted = vec![apply_change(base, &change)];
            for other in &change.add_blocks {
                match plan.get(other) {
                    Some(o) => submitted.push(with_blocker(o.clone(), &id)),
                    None => notes.push(format!(
                        "blocks task #{other}, which this source never created (left out)"
                    )),
                }
            }
            let after = upsert(plan, &submitted);
            written(
                WriteSemantics::Upsert,
                submitted,
                after,
                notes,
                None,
                tool_call,
            )
        }
        Op::Delete { id } => {
            let Some(id) = item_id(&id) else {
                return Err(unusable("deleted", &id));
            };
            let gone = task_base(slot, plan, &id, notes);
            let after = remove(plan, std::slice::from_ref(&id));
            written(
                WriteSemantics::Remove,
                vec![gone],
                after,
                notes,
                None,
                tool_call,
            )
        }
        Op::Refused { submitted, error } => EventBody::WriteRejected(WriteRejected {
            submitted,
            code: RejectionCode::SourceRefused,
            message: error,
            position: None,
            source: Some(source_line(line, notes)),
            tool: None,
            tool_call,
        }),
        Op::Blocked {
            submitted,
            rejection,
            tool,
        } => EventBody::WriteRejected(WriteRejected {
            tool: Some(tool),
            source: source(notes),
            tool_call,
            ..WriteRejected::new(submitted, &rejection)
        }),
        Op::Checkpoint(todos) => {
            let items = items_with_ids(&todos, notes);
            let derived = slot.derived.get_or_insert_with(Derived::default);
            derived.checkpoint = todos;
            let besides = plan
                .items()
                .iter()
                .filter(|i| derived.list_ids.contains(&i.id))
                .map(|i| i.id.clone())
                .collect();
            EventBody::CheckpointSeen(CheckpointSeen {
                items,
                source: source_line(line, notes),
                besides,
                // Set by `call`, which knows where the source's calls were recorded.
                against: None,
            })
        }
        Op::Describe(said) => {
            // What the source says now, over what was recorded: a field it does not say
            // keeps its value.
            let before = slot.description.clone().unwrap_or_default();
            let merged = merge_description(&before, said);
            if merged == before || merged.is_empty() {
                return Ok(None);
            }
            slot.description = Some(merged.clone());
            EventBody::SessionDescribed(merged)
        }
        Op::Compacted {
            trigger,
            tokens_before,
            tokens_after,
            since: _,
        } => EventBody::ContextCompacted(ContextCompacted {
            trigger,
            tokens_before,
            tokens_after,
            source: source(notes),
        }),
        Op::Restored {
            after,
            text,
            plan_at,
        } => EventBody::PlanRestored(PlanRestored {
            after,
            text,
            plan_at,
        }),
    }))
}
