//! `planlog verify`: proves what a log says. Hash chain intact, seqs contiguous, every
//! recorded result equal to re-running the rules on the recorded submission, every fork's
//! first plan equal to its parent's at the fork seq, and the store's derived tables (catalogue,
//! state index) equal to what the events say.

use planlog_core::{
    Event, EventBody, EventLog, Origin, Seq, SessionId, SessionState, WriteSemantics, apply,
    execute_plan_write, is_cut_submission,
};
use serde_json::Value;

use crate::audit::flags_of;

/// Something wrong, at a session and (when known) a seq.
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
    /// Damage or inconsistency: `verify` exits 1 when there is any.
    pub problems: Vec<Finding>,
    /// Facts an auditor should see that are not damage (imported calls that broke the rules).
    pub notes: Vec<Finding>,
    /// Sessions checked.
    pub sessions: usize,
    /// Events checked.
    pub events: u64,
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

/// Events read at a time: verify's memory stays bounded whatever the session's length.
const CHUNK: u64 = 2000;

/// Verifies one session into `report`; `tick` is called once per event checked.
pub fn verify_session(
    log: &dyn EventLog,
    id: &SessionId,
    report: &mut Report,
    tick: &mut dyn FnMut(u64),
) {
    report.sessions += 1;
    let info = match log.session(id) {
        Ok(Some(info)) => info,
        Ok(None) => return report.problem(id, None, "not in the catalogue"),
        Err(e) => return report.problem(id, None, format!("catalogue entry unreadable: {e}")),
    };
    let mut state = SessionState::default();
    let mut prev: Option<Event> = None;
    let mut from = 1u64;
    // Read in chunks up to the catalogue's count, then on until the log really ends (a
    // catalogue that undercounts must not hide events).
    while let (Ok(start), Ok(end)) = (Seq::new(from), Seq::new(from + CHUNK - 1)) {
        let chunk = match log.read(id, start, Some(end)) {
            Ok(chunk) => chunk,
            Err(e) => {
                // Name the damaged events one by one, then stop: what follows cannot be chained.
                let mut named = false;
                for n in from..=(from + CHUNK - 1).min(info.events.max(from)) {
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
        let done = (chunk.len() as u64) < CHUNK;
        for e in chunk {
            report.events += 1;
            tick(1);
            check_event(log, id, &e, &state, prev.as_ref(), report);
            state = apply(state, &e.body);
            match log.state_at(id, e.seq) {
                Ok(indexed) if indexed == state => {}
                Ok(_) => report.problem(
                    id,
                    Some(e.seq.get()),
                    "the state index disagrees with the events",
                ),
                Err(err) => report.problem(
                    id,
                    Some(e.seq.get()),
                    format!("state index unreadable: {err}"),
                ),
            }
            prev = Some(e);
        }
        if done {
            break;
        }
        from += CHUNK;
    }
    match &prev {
        None => report.problem(id, None, "listed in the catalogue but has no events"),
        Some(last) => {
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

/// Chain, seq and rule checks of one event, given the state and event before it.
fn check_event(
    log: &dyn EventLog,
    id: &SessionId,
    e: &Event,
    state: &SessionState,
    prev: Option<&Event>,
    report: &mut Report,
) {
    let seq = e.seq.get();
    let expected = prev.map_or(1, |p| p.seq.get() + 1);
    if seq != expected {
        report.problem(id, Some(seq), format!("seq gap: expected {expected}"));
    }
    if e.prev != prev.map(|p| p.hash) {
        report.problem(
            id,
            Some(seq),
            "hash chain broken: prev is not the hash of the event before",
        );
    }
    if !e.hash_is_valid() {
        report.problem(id, Some(seq), "hash does not match the content");
    }
    check_rules(log, id, e, state, prev.is_none(), report);
}

/// Re-runs the rules on what the event records.
fn check_rules(
    log: &dyn EventLog,
    id: &SessionId,
    e: &Event,
    before: &SessionState,
    first: bool,
    report: &mut Report,
) {
    let seq = Some(e.seq.get());
    match &e.body {
        EventBody::SessionStarted(s) => {
            if !first {
                report.problem(id, seq, "session_started after the first event");
            }
            if let Origin::Fork { parent, at } = &s.origin {
                match log.state_at(parent, *at) {
                    Ok(parent_state)
                        if parent_state.plan == s.plan && parent_state.plan_mode == s.plan_mode => {
                    }
                    Ok(_) => report.problem(
                        id,
                        seq,
                        format!("fork's first plan differs from {parent} at seq {at}"),
                    ),
                    Err(err) => report.note(id, seq, format!("fork lineage not checkable: {err}")),
                }
            }
        }
        EventBody::PlanWritten(w) => match w.semantics {
            WriteSemantics::Merge => {
                let args = serde_json::json!({ "steps": w.submitted }).to_string();
                let rerun = execute_plan_write(&before.plan, &args);
                match rerun.plan {
                    Some(plan) if plan == w.plan => {}
                    Some(_) => report.problem(
                        id,
                        seq,
                        "recorded plan differs from re-running plan_write on the submission",
                    ),
                    None => report.problem(
                        id,
                        seq,
                        format!(
                            "recorded as accepted, but the rules reject it: {}",
                            rerun.result.content
                        ),
                    ),
                }
            }
            WriteSemantics::Replace => {
                if w.plan.items() != w.submitted.as_slice() {
                    report.problem(
                        id,
                        seq,
                        "imported whole-list write whose plan is not the submitted list",
                    );
                }
                for flag in flags_of(&before.plan, &e.body) {
                    report.note(
                        id,
                        seq,
                        format!("imported call broke planlog's rules: {}", flag.describe()),
                    );
                }
            }
        },
        EventBody::WriteRejected(r) => {
            let raw = match &r.submitted {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            // A cut excerpt of an oversized or unparsable submission cannot be re-run.
            if is_cut_submission(&r.submitted) {
                return;
            }
            let rerun = execute_plan_write(&before.plan, &raw);
            match rerun.event {
                Some(EventBody::WriteRejected(again)) if again.code == r.code => {}
                _ => report.problem(
                    id,
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
    }
}
