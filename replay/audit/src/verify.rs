//! `planlog verify`: proves what a log says. Hash chain intact, seqs contiguous, each call id
//! recorded once, every recorded result equal to re-running the rules on the recorded
//! submission, every session's first event and writes allowed by its origin, every fork's
//! first plan equal to its parent's at the fork seq, and the store's derived tables
//! (catalogue, state index) equal to what the events say.
//!
//! What each origin may hold (a breach is a problem, `verify` exits 1):
//!
//! | origin | first event | writes |
//! |---|---|---|
//! | `new` | empty plan, plan mode off | plan_write (`merge`), re-run exactly |
//! | `fork` | the parent's plan and mode at the fork seq; the parent is another session and has that seq | plan_write (`merge`) |
//! | `import` | empty plan, plan mode off | imported calls (`replace`, `upsert`, `remove`: re-run exactly; rule breaches are notes), the source's refusals, `checkpoint_seen` (compared with the plan; a difference is a note), and later plan_write calls |
//! | `sub_agent` | never in a durable store (sub-agents plan in memory only) | - |

use std::collections::HashSet;
use std::sync::Arc;

use planlog_core::events::{Event, EventBody, Origin, WriteSemantics, ids_issued_for};
use planlog_core::limits::SCAN_CHUNK;
use planlog_core::rules::{
    Breach, RejectionCode, execute_plan_write, is_cut_submission, is_cut_text, remove, upsert,
};
use planlog_core::tasks::{TaskTool, execute_task_tool, task_rules};
use planlog_core::{
    CallId, EventLog, LogError, Plan, Seq, SessionId, SessionState, UserError, apply,
};
use serde_json::Value;

use crate::agent_rules::{AgentRules, Agreement, NoAgentRules};
use crate::checkpoints::checkpoint_differences;
use crate::history::{describe_flag, flags_of};

/// Something worth reporting, at a session and (when known) a seq.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The session.
    pub session: SessionId,
    /// The seq, when one event is to blame.
    pub seq: Option<u64>,
    /// What.
    pub what: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.seq {
            Some(seq) => write!(f, "session {} seq {seq}: {}", self.session, self.what),
            None => write!(f, "session {}: {}", self.session, self.what),
        }
    }
}

/// What a verification found.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Damage, forgery or inconsistency: `verify` exits 1 when there is any.
    pub problems: Vec<Finding>,
    /// Facts an auditor should see that are not damage (imported calls that broke the rules).
    pub notes: Vec<Finding>,
    /// Sessions checked.
    pub sessions: usize,
    /// Events checked.
    pub events: u64,
    /// Compactions of an agent's context on record (`context_compacted`).
    pub compactions: u64,
    /// Plans put back into an agent's context on record (`plan_restored`).
    pub restores: u64,
}

impl Report {
    fn problem(&mut self, session: &SessionId, seq: Option<u64>, what: impl Into<String>) {
        self.problems.push(Finding {
            session: session.clone(),
            seq,
            what: what.into(),
        });
    }

    fn note(&mut self, session: &SessionId, seq: Option<u64>, what: impl Into<String>) {
        self.notes.push(Finding {
            session: session.clone(),
            seq,
            what: what.into(),
        });
    }
}

/// Looks up a session's state at a seq (the fork parents' states).
pub type StateLookup<'a> = dyn Fn(&SessionId, Seq) -> Result<SessionState, LogError> + 'a;

/// The checks of one session's events, fed in order (so memory stays bounded whatever the
/// session's length): chain, seqs, call ids, origin, rules.
pub struct SessionCheck {
    id: SessionId,
    state: SessionState,
    prev: Option<Event>,
    origin: Option<Origin>,
    calls: HashSet<CallId>,
    /// Whether each event's hash is recomputed (off when the log's reads already did).
    hashes: bool,
    /// The agents' rules (none by default).
    agents: Arc<dyn AgentRules>,
}

impl std::fmt::Debug for SessionCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionCheck")
            .field("id", &self.id)
            .field("state", &self.state)
            .field("last", &self.prev.as_ref().map(|e| e.seq))
            .finish_non_exhaustive()
    }
}

impl SessionCheck {
    /// A check of session `id`, before its first event.
    pub fn new(id: SessionId) -> Self {
        Self {
            id,
            state: SessionState::default(),
            prev: None,
            origin: None,
            calls: HashSet::new(),
            hashes: true,
            agents: Arc::new(NoAgentRules),
        }
    }

    /// Checks agents' calls with `agents`' rules too (a hook's refusals, calls as sent, the
    /// text put back): without them those checks are skipped.
    #[must_use]
    pub fn with_agents(mut self, agents: Arc<dyn AgentRules>) -> Self {
        self.agents = agents;
        self
    }

    /// Skips recomputing each event's hash: for events a log's read has just decoded, which
    /// checked it ([`EventLog::read_checks_hashes`]); every other check still runs.
    #[must_use]
    pub fn hashes_checked_on_read(mut self) -> Self {
        self.hashes = false;
        self
    }

    /// The state after the events checked so far.
    pub fn state(&self) -> &SessionState {
        &self.state
    }

    /// The last event checked.
    pub fn last(&self) -> Option<&Event> {
        self.prev.as_ref()
    }

    /// Checks the next event; `parents` gives fork parents' states.
    pub fn check(&mut self, e: &Event, parents: &StateLookup<'_>, report: &mut Report) {
        self.check_owned(e.clone(), parents, report);
    }

    /// [`SessionCheck::check`], keeping the event (as the last one checked) without a copy.
    pub fn check_owned(&mut self, e: Event, parents: &StateLookup<'_>, report: &mut Report) {
        let id = self.id.clone();
        let seq = e.seq.get();
        report.events += 1;
        if e.session != id {
            report.problem(
                &id,
                Some(seq),
                format!("event of session {} in this session's log", e.session),
            );
        }
        let expected = self.prev.as_ref().map_or(1, |p| p.seq.get() + 1);
        if seq != expected {
            report.problem(&id, Some(seq), format!("seq gap: expected {expected}"));
        }
        if e.prev != self.prev.as_ref().map(|p| p.hash) {
            report.problem(
                &id,
                Some(seq),
                "hash chain broken: prev is not the hash of the event before",
            );
        }
        if self.hashes && !e.hash_is_valid() {
            report.problem(&id, Some(seq), "hash does not match the content");
        }
        if let Some(call) = &e.call_id
            && !self.calls.insert(call.clone())
        {
            report.problem(
                &id,
                Some(seq),
                format!("call id {call} is recorded twice (a call is applied once)"),
            );
        }
        self.check_body(&e, parents, report);
        self.check_tool_call(&e, report);
        self.check_ids_issued(&e, report);
        self.state = apply(std::mem::take(&mut self.state), &e.body);
        self.prev = Some(e);
    }

    /// A plan-carrying event's `ids_issued` (format 3) is what its history gives: none
    /// before format 3, none for a session's first event but a fork's (checked with the
    /// lineage), else the session's highest id so far when its own plan no longer has it.
    fn check_ids_issued(&self, e: &Event, report: &mut Report) {
        let Some(plan) = e.body.plan() else { return };
        let recorded = e.body.ids_issued();
        let expected = match &e.body {
            EventBody::SessionStarted(s) if matches!(s.origin, Origin::Fork { .. }) => return,
            EventBody::SessionStarted(_) => None,
            _ if e.format < 3 => None,
            _ => ids_issued_for(&self.state, plan),
        };
        if recorded != expected {
            let shown = |v: Option<u64>| v.map_or("none".to_owned(), |n| n.to_string());
            report.problem(
                &self.id,
                Some(e.seq.get()),
                format!(
                    "records task ids issued up to {}, but the session's history gives {}",
                    shown(recorded),
                    shown(expected)
                ),
            );
        }
    }

    fn check_body(&mut self, e: &Event, parents: &StateLookup<'_>, report: &mut Report) {
        let id = self.id.clone();
        let seq = Some(e.seq.get());
        match &e.body {
            EventBody::SessionStarted(s) => {
                if self.prev.is_some() {
                    report.problem(&id, seq, "session_started after the first event");
                }
                self.origin = Some(s.origin.clone());
                let empty = s.plan.is_empty() && !s.plan_mode;
                match &s.origin {
                    Origin::New | Origin::Import { .. } if !empty => report.problem(
                        &id,
                        seq,
                        format!(
                            "a session of origin {} must start with an empty plan and plan mode off, but starts with {} items",
                            origin_name(&s.origin),
                            s.plan.len()
                        ),
                    ),
                    Origin::New | Origin::Import { .. } => {}
                    Origin::SubAgent { .. } => report.problem(
                        &id,
                        seq,
                        "a sub-agent session in a durable log (sub-agents plan in memory only)",
                    ),
                    Origin::Fork { parent, .. } if *parent == id => {
                        report.problem(&id, seq, "a fork of itself");
                    }
                    Origin::Fork { parent, at } => match parents(parent, *at) {
                        Ok(p)
                            if p.plan == s.plan
                                && p.plan_mode == s.plan_mode
                                && ids_issued_for(&p, &s.plan) == s.ids_issued => {}
                        Ok(_) => report.problem(
                            &id,
                            seq,
                            format!("fork's first state (plan, plan mode or task ids issued) differs from {parent} at seq {at}"),
                        ),
                        Err(LogError::User(UserError::SeqOutOfRange { last, .. })) => {
                            report.problem(
                                &id,
                                seq,
                                format!(
                                    "a fork of {parent} at seq {at}, but {parent} has only {last} events"
                                ),
                            );
                        }
                        Err(err) => report.note(
                            &id,
                            seq,
                            format!("fork lineage not checkable (parent {parent}): {err}"),
                        ),
                    },
                }
            }
            EventBody::PlanWritten(w) => {
                let imported = matches!(self.origin, Some(Origin::Import { .. }));
                let expected = match w.semantics {
                    WriteSemantics::Merge => {
                        let args = serde_json::json!({ "steps": w.submitted }).to_string();
                        let rerun = execute_plan_write(&self.state.plan, &args);
                        match rerun.plan {
                            Some(plan) => Some(plan),
                            None => {
                                report.problem(
                                    &id,
                                    seq,
                                    format!(
                                        "recorded as accepted, but the rules reject it: {}",
                                        rerun.result.content
                                    ),
                                );
                                None
                            }
                        }
                    }
                    WriteSemantics::Replace => Some(Plan::from_items(w.submitted.clone())),
                    WriteSemantics::Upsert => Some(upsert(&self.state.plan, &w.submitted)),
                    WriteSemantics::Remove => {
                        let ids: Vec<_> = w.submitted.iter().map(|i| i.id.clone()).collect();
                        Some(remove(&self.state.plan, &ids))
                    }
                };
                match w.semantics {
                    WriteSemantics::Replace if !imported => report.problem(
                        &id,
                        seq,
                        "a whole-list (imported) write in a session that was not imported",
                    ),
                    // A task tool's write in a live session: its rules must hold.
                    WriteSemantics::Upsert | WriteSemantics::Remove if !imported => {
                        if let Some(expected) = &expected
                            && let Some(r) = task_rules(&self.state.plan, expected, &w.submitted)
                                .filter(|_| w.semantics == WriteSemantics::Upsert)
                        {
                            report.problem(
                                &id,
                                seq,
                                format!(
                                    "recorded as accepted, but the task rules refuse it: {}",
                                    r.message
                                ),
                            );
                        }
                    }
                    _ => {}
                }
                if let Some(expected) = expected
                    && expected != w.plan
                {
                    report.problem(
                        &id,
                        seq,
                        match w.semantics {
                            WriteSemantics::Merge => {
                                "recorded plan differs from re-running plan_write on the submission"
                            }
                            WriteSemantics::Replace => {
                                "imported whole-list write whose plan is not the submitted list"
                            }
                            WriteSemantics::Upsert | WriteSemantics::Remove => {
                                "imported item write whose plan is not the previous plan with those items set or removed"
                            }
                        },
                    );
                }
                for flag in flags_of(&self.state.plan, &e.body) {
                    let said = describe_flag(&flag, &self.state.plan, &e.body);
                    let what = if matches!(flag, Breach::StartedWhileBlocked { .. }) {
                        said
                    } else {
                        format!("imported call broke planlog's rules: {said}")
                    };
                    report.note(&id, seq, what);
                }
            }
            EventBody::WriteRejected(r) if r.code == RejectionCode::SourceRefused => {
                // The recorded agent's own refusal: nothing to re-run, allowed in imports only.
                if !matches!(self.origin, Some(Origin::Import { .. })) {
                    report.problem(
                        &id,
                        seq,
                        "an imported agent's refusal in a session that was not imported",
                    );
                }
            }
            EventBody::WriteRejected(r) if r.tool.is_some() => {
                let tool = r.tool.as_deref().unwrap_or_default();
                let raw = match &r.submitted {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                let again = match TaskTool::from_name(tool) {
                    Some(t) if t.name() == tool => {
                        match execute_task_tool(&self.state, t, &raw).event {
                            Some(EventBody::WriteRejected(again)) => Some(again.code),
                            _ => None,
                        }
                    }
                    // An agent's own tool a hook refused: the hook's check again.
                    _ => match self.agents.refusal(&self.state.plan, tool, &r.submitted) {
                        Some(code) => code,
                        None => {
                            return report.note(
                                &id,
                                seq,
                                format!(
                                    "a refused {tool} call, not re-checked: no rules for that agent's tool here"
                                ),
                            );
                        }
                    },
                };
                if again != Some(r.code) {
                    report.problem(
                        &id,
                        seq,
                        format!(
                            "recorded as a refused {tool} call ({}), but its rules now give {}",
                            r.code.as_str(),
                            again.map_or("no refusal".to_owned(), |c| c.as_str().to_owned())
                        ),
                    );
                }
            }
            EventBody::WriteRejected(r) => {
                // A cut excerpt of an oversized or unparsable submission cannot be re-run.
                if is_cut_submission(&r.submitted) {
                    return;
                }
                let raw = match &r.submitted {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                let rerun = execute_plan_write(&self.state.plan, &raw);
                match rerun.event {
                    Some(EventBody::WriteRejected(again)) if again.code == r.code => {}
                    _ => report.problem(
                        &id,
                        seq,
                        format!(
                            "recorded as rejected ({}), but re-running the rules gives: {}",
                            r.code.as_str(),
                            rerun.result.content
                        ),
                    ),
                }
            }
            EventBody::ModeSelected(_) => {}
            EventBody::CheckpointSeen(c) => {
                if !matches!(self.origin, Some(Origin::Import { .. })) {
                    report.problem(&id, seq, "a checkpoint in a session that was not imported");
                    return;
                }
                let plan = match self.plan_at(c.against, e, parents) {
                    Ok(plan) => plan,
                    Err(why) => return report.problem(&id, seq, format!("a checkpoint {why}")),
                };
                if let Some(d) = checkpoint_differences(&plan, c) {
                    let against = c
                        .against
                        .map(|a| format!(" at seq {a}"))
                        .unwrap_or_default();
                    report.note(
                        &id,
                        seq,
                        format!(
                            "the source's own list at line {} differs from the imported plan{against}: {d}",
                            c.source.line
                        ),
                    );
                }
            }
            EventBody::SessionDescribed(_) | EventBody::ContextCompacted(_) => {
                if matches!(e.body, EventBody::ContextCompacted(_)) {
                    report.compactions += 1;
                }
                if !matches!(self.origin, Some(Origin::Import { .. })) {
                    report.problem(
                        &id,
                        seq,
                        format!(
                            "a {} event in a session that was not imported or captured live",
                            e.body.kind()
                        ),
                    );
                }
            }
            EventBody::PlanRestored(r) => {
                report.restores += 1;
                if !matches!(self.origin, Some(Origin::Import { .. })) {
                    report.problem(
                        &id,
                        seq,
                        "a plan_restored event in a session that was not captured live",
                    );
                    return;
                }
                let plan = match self.plan_at(Some(r.plan_at), e, parents) {
                    Ok(plan) => plan,
                    Err(why) => {
                        return report.problem(&id, seq, format!("a restored plan {why}"));
                    }
                };
                // The text is made by this version's renderer: another version's may differ
                // in its words, so a difference is a note.
                if let Some(made) = self.agents.restore_text(&plan, id.as_str())
                    && made.as_deref() != Some(r.text.as_str())
                {
                    report.note(
                        &id,
                        seq,
                        format!(
                            "the text put back into the context is not the one this version makes of the plan at seq {}",
                            r.plan_at
                        ),
                    );
                }
            }
        }
    }

    /// The plan at `at` (`None`: before `e`), which must be before `e`.
    fn plan_at(
        &self,
        at: Option<Seq>,
        e: &Event,
        parents: &StateLookup<'_>,
    ) -> Result<Plan, String> {
        match at {
            None => Ok(self.state.plan.clone()),
            Some(a) if a >= e.seq => Err(format!("names seq {a}, which is not before it")),
            Some(a) if Some(a) == self.prev.as_ref().map(|p| p.seq) => Ok(self.state.plan.clone()),
            Some(a) => parents(&self.id, a)
                .map(|s| s.plan)
                .map_err(|err| format!("names seq {a}, whose plan cannot be read: {err}")),
        }
    }

    /// A call as sent and its result (format 4): a live call's result is what re-running its
    /// tool on the call gives; an imported call's derived items are what its arguments say,
    /// and an applied call's result is no error.
    fn check_tool_call(&self, e: &Event, report: &mut Report) {
        let Some(call) = e.body.tool_call() else {
            return;
        };
        let (id, seq) = (&self.id, Some(e.seq.get()));
        if e.format < 4 {
            report.problem(
                id,
                seq,
                format!("a recorded tool call in an event of format {}", e.format),
            );
        }
        let result = call.result.as_ref();
        if matches!(self.origin, Some(Origin::Import { .. })) {
            match &e.body {
                EventBody::PlanWritten(w) => {
                    if result.is_some_and(|r| r.is_error) {
                        report.problem(
                            id,
                            seq,
                            "recorded as applied, but the call's recorded result is an error",
                        );
                    }
                    if let Agreement::Differs(d) = self.agents.agreement(call, &w.submitted) {
                        report.problem(
                            id,
                            seq,
                            format!("the recorded change is not what the call as sent says: {d}"),
                        );
                    }
                }
                EventBody::WriteRejected(r)
                    if r.code == RejectionCode::SourceRefused
                        && result.is_some_and(|r| !r.is_error) =>
                {
                    report.problem(
                        id,
                        seq,
                        "recorded as the agent's refusal, but the call's recorded result is no error",
                    );
                }
                _ => {}
            }
            return;
        }
        if is_cut_text(&call.arguments) {
            return;
        }
        let rerun = match TaskTool::from_name(&call.tool) {
            _ if call.tool == "plan_write" => execute_plan_write(&self.state.plan, &call.arguments),
            Some(tool) if tool.name() == call.tool => {
                execute_task_tool(&self.state, tool, &call.arguments)
            }
            _ => {
                return report.problem(
                    id,
                    seq,
                    format!(
                        "a live call of a tool planlog does not have: {:?}",
                        call.tool
                    ),
                );
            }
        };
        let same = result.is_some_and(|r| {
            r.is_error == rerun.result.is_error
                && r.text.as_deref() == Some(rerun.result.content.as_str())
        }) && rerun.event.as_ref().and_then(EventBody::submission)
            == e.body.submission();
        if !same {
            report.problem(
                id,
                seq,
                format!(
                    "the recorded call and result are not what re-running {} on the call as sent gives",
                    call.tool
                ),
            );
        }
    }
}

fn origin_name(origin: &Origin) -> &'static str {
    match origin {
        Origin::New => "new",
        Origin::Fork { .. } => "fork",
        Origin::SubAgent { .. } => "sub_agent",
        Origin::Import { .. } => "import",
    }
}

/// Threads reading (and decoding) chunks while the caller's thread checks them.
const READERS: usize = 2;

/// Verifies one session of `log` into `report`, with `agents`' rules for agents' calls;
/// `tick` is called once per event checked.
pub fn verify_session(
    log: &dyn EventLog,
    id: &SessionId,
    agents: &Arc<dyn AgentRules>,
    report: &mut Report,
    tick: &mut dyn FnMut(u64),
) {
    report.sessions += 1;
    let info = match log.session(id) {
        Ok(Some(info)) => info,
        Ok(None) => return report.problem(id, None, "not in the catalogue"),
        Err(e) => return report.problem(id, None, format!("catalogue entry unreadable: {e}")),
    };
    let parents = |parent: &SessionId, at: Seq| log.state_at(parent, at);
    let mut check = SessionCheck::new(id.clone()).with_agents(Arc::clone(agents));
    if log.read_checks_hashes() {
        // Its reads decoded every event and checked its hash: once is enough.
        check = check.hashes_checked_on_read();
    }
    // The last plan-carrying event so far: what the state index must name.
    let mut plan_from: Option<Seq> = None;
    // A reader thread reads (and decodes, and hash-checks) the next chunk and its state
    // index while this one checks the last: two chunks in flight at most.
    std::thread::scope(|scope| {
        // Two readers take alternate chunks (decoding is most of the work), and this thread
        // checks them in order.
        let readers: Vec<_> = (0..READERS)
            .map(|first| {
                let (tx, rx) = std::sync::mpsc::sync_channel::<Chunk>(1);
                scope.spawn(move || read_chunks(log, id, &tx, first, READERS));
                rx
            })
            .collect();
        for k in 0.. {
            let Ok(Chunk {
                from,
                events,
                index,
            }) = readers[k % READERS].recv()
            else {
                break;
            };
            let chunk = match events {
                Ok(chunk) => chunk,
                Err(e) => {
                    // Name the damaged events one by one, then stop: what follows cannot be
                    // chained.
                    let mut named = false;
                    for n in from..=(from + SCAN_CHUNK - 1).min(info.events.max(from)) {
                        let Ok(seq) = Seq::new(n) else { continue };
                        if let Err(err) = log.read(id, seq, Some(seq)) {
                            report.problem(id, Some(n), format!("cannot be read: {err}"));
                            named = true;
                        }
                    }
                    if !named {
                        report.problem(id, Some(from), format!("cannot be read: {e}"));
                    }
                    return;
                }
            };
            let ended = (chunk.len() as u64) < SCAN_CHUNK;
            check_chunk(
                log,
                id,
                chunk,
                index,
                &mut check,
                &mut plan_from,
                report,
                tick,
                &parents,
            );
            if ended {
                break;
            }
        }
    });
    match check.last() {
        None => report.problem(id, None, "listed in the catalogue but has no events"),
        Some(last) => {
            let state = check.state();
            if info.events != last.seq.get()
                || info.progress != state.plan.progress()
                || info.plan_mode != state.plan_mode
            {
                report.problem(
                    id,
                    None,
                    "catalogue entry disagrees with the events (count, progress or mode)",
                );
            }
        }
    }
}

/// One chunk as the reader thread read it: its first seq, its events, and the state index
/// over them (`None`: nothing was read).
struct Chunk {
    from: u64,
    events: Result<Vec<Event>, planlog_core::LogError>,
    index: Option<Result<Option<Vec<planlog_core::IndexEntry>>, planlog_core::LogError>>,
}

/// Reads chunks `first`, `first + step`, … of the session ([`EventLog::scan`], strided) into
/// `tx` until the log ends, an error, or the checker stops listening. The scan reads on until
/// the log really ends (a catalogue that undercounts must not hide events); a reader past the
/// end sends an empty chunk, so the checker, taking the readers in turn, sees the end.
fn read_chunks(
    log: &dyn EventLog,
    id: &SessionId,
    tx: &std::sync::mpsc::SyncSender<Chunk>,
    first: usize,
    step: usize,
) {
    let mut chunks = log.scan(id, Seq::FIRST).strided(first, step);
    loop {
        let from = chunks.position();
        let events = chunks.next().unwrap_or_else(|| Ok(Vec::new()));
        let (done, index) = match &events {
            Ok(chunk) => (
                (chunk.len() as u64) < SCAN_CHUNK,
                match (chunk.first(), chunk.last()) {
                    (Some(a), Some(b)) => Some(log.state_index(id, a.seq, b.seq)),
                    _ => None,
                },
            ),
            Err(_) => (true, None),
        };
        if tx
            .send(Chunk {
                from,
                events,
                index,
            })
            .is_err()
            || done
        {
            return;
        }
    }
}

/// Checks one chunk: each event in order, and the state index against the events.
#[allow(clippy::too_many_arguments)] // the checker's state, threaded through
fn check_chunk(
    log: &dyn EventLog,
    id: &SessionId,
    chunk: Vec<Event>,
    index: Option<Result<Option<Vec<planlog_core::IndexEntry>>, planlog_core::LogError>>,
    check: &mut SessionCheck,
    plan_from: &mut Option<Seq>,
    report: &mut Report,
    tick: &mut dyn FnMut(u64),
    parents: &StateLookup<'_>,
) {
    // The store's state index for the chunk, read without decoding events: each seq must
    // name the last plan-carrying event at or before it, and the mode then. A log that
    // keeps none (or whose index cannot be read) is checked seq by seq with `state_at`.
    let index = match (chunk.first(), index) {
        (Some(a), Some(index)) => match index {
            Ok(Some(index)) if index.len() == chunk.len() => Some(index),
            Ok(Some(_)) => {
                report.problem(
                    id,
                    Some(a.seq.get()),
                    "the state index does not cover the events",
                );
                None
            }
            Ok(None) => None,
            Err(err) => {
                report.problem(
                    id,
                    Some(a.seq.get()),
                    format!("state index unreadable: {err}"),
                );
                None
            }
        },
        _ => None,
    };
    let count = chunk.len();
    for (i, e) in chunk.into_iter().enumerate() {
        tick(1);
        let (seq, carries_plan) = (e.seq, e.plan().is_some());
        check.check_owned(e, parents, report);
        let e_seq = seq;
        if carries_plan {
            *plan_from = Some(seq);
        }
        let by_index = index.as_ref().map(|index| {
            let entry = index[i];
            entry.seq == e_seq
                && entry.plan_from == *plan_from
                && entry.plan_mode == check.state().plan_mode
        });
        // Without an index, and at the end of each chunk (the state the index's entry
        // leads to, as `state_at` reads it), the state itself is compared.
        let whole = if by_index.is_none() || i + 1 == count {
            match log.state_at(id, e_seq) {
                Ok(indexed) => Some(indexed == *check.state()),
                Err(err) => {
                    report.problem(
                        id,
                        Some(e_seq.get()),
                        format!("state index unreadable: {err}"),
                    );
                    continue;
                }
            }
        } else {
            None
        };
        if by_index == Some(false) || whole == Some(false) {
            report.problem(
                id,
                Some(e_seq.get()),
                "the state index disagrees with the events",
            );
        }
    }
}
