//! planlog's own jsonl export (`planlog export SESSION --format jsonl`): one canonical event
//! per line, imported as is, so the session is identical (same id, events and hashes).
//!
//! Three streaming passes over the file. The first decodes every line (a line that does not
//! decode, or whose hash does not match, refuses the file: every later event of its session
//! chains to it, so it cannot be skipped) and notes the fork points other sessions start
//! from; the second folds each session and keeps its state at those points (a fork may come
//! before its parent in the file); the third runs verify's checks on each event (a history
//! that could never have been written is refused) and streams it into the store in one
//! transaction. A session already in
//! the store must be a prefix of the file's (same hashes): its events are skipped and the
//! rest appended, so importing the same export twice is a no-op.

use std::collections::{HashMap, HashSet};

use planlog_core::{
    EventLog, Seq, SessionId, SessionState,
    events::{Event, EventBody, Origin},
};

use super::lines::{JsonLines, Line};
use super::record::BadLine;
use super::writer::{FileReport, SessionReport, stop};
use super::{ImportError, ImportOptions, Input, SourceFormat};
use planlog_audit::{Report, SessionCheck};

/// Imports a jsonl export.
///
/// # Errors
/// A line that does not decode, a session without its first event, a forged history, a
/// session that exists here with another history, or a batch the store refuses. Nothing is
/// written then.
pub(crate) fn import(
    log: &dyn EventLog,
    input: Input<'_>,
    _options: ImportOptions,
) -> Result<FileReport, ImportError> {
    let file = input.shown();
    let plan = first_pass(log, input, &file)?;
    let mut checks: HashMap<SessionId, SessionCheck> = HashMap::new();
    let saved = fork_states(input, &file, &plan.fork_points)?;
    let mut report = Report::default();
    let mut failure: Option<ImportError> = None;
    let mut reports: Vec<SessionReport> = plan
        .order
        .iter()
        .map(|id| SessionReport {
            id: id.clone(),
            key: id.to_string(),
            parent: None,
            created: !plan.present.contains_key(id),
            calls: 0,
            already: 0,
            no_plan: true,
            stand_in: false,
        })
        .collect();
    let reader = input.open().map_err(|e| ImportError::Read {
        file: file.clone(),
        detail: e.to_string(),
    })?;
    let mut lines = JsonLines::new(reader);
    let mut events = std::iter::from_fn(|| {
        loop {
            // Yielding an error (never just ending) aborts the store's transaction.
            if failure.is_some() {
                return Some(Err(stop()));
            }
            let e = match lines.next()? {
                // The first pass decoded every line already.
                Ok(Line::Json(_, v)) => match Event::decode(v.to_string().as_bytes()) {
                    Ok(e) => e,
                    Err(_) => continue,
                },
                Ok(Line::Bad(_) | Line::Cut(_) | Line::TooLong(_)) => continue,
                Err(e) => {
                    failure = Some(ImportError::Read {
                        file: file.clone(),
                        detail: e.to_string(),
                    });
                    return Some(Err(stop()));
                }
            };
            let check = checks
                .entry(e.session.clone())
                .or_insert_with(|| SessionCheck::new(e.session.clone()));
            let lookup = |parent: &SessionId, at: Seq| match saved.get(&(parent.clone(), at)) {
                Some(state) => Ok(state.clone()),
                // A parent in the file has every fork point in it saved: this one is past
                // its end.
                None => match plan.file_last.get(parent) {
                    Some(last) if !plan.present.contains_key(parent) => {
                        Err(planlog_core::UserError::SeqOutOfRange {
                            session: parent.clone(),
                            seq: at.get(),
                            last: last.get(),
                        }
                        .into())
                    }
                    _ => log.state_at(parent, at),
                },
            };
            check.check(&e, &lookup, &mut report);
            if let Some(problem) = report.problems.first() {
                failure = Some(ImportError::Forged {
                    file: file.clone(),
                    problem: problem.to_string(),
                    more: report.problems.len() - 1,
                });
                return Some(Err(stop()));
            }
            let r = reports.iter_mut().find(|r| r.id == e.session);
            if let Some(r) = r {
                if let EventBody::SessionStarted(s) = &e.body {
                    r.parent = s.origin.parent().cloned();
                } else {
                    r.no_plan = false;
                }
                if plan
                    .present
                    .get(&e.session)
                    .is_some_and(|last| e.seq <= *last)
                {
                    r.already += 1;
                    continue;
                }
                if e.seq > Seq::FIRST {
                    r.calls += 1;
                }
            }
            return Some(Ok(e));
        }
    });
    let appended = log.append_iter(&mut events);
    if let Some(f) = failure {
        return Err(f);
    }
    appended?;
    Ok(FileReport {
        format: SourceFormat::Planlog,
        sessions: reports,
        skipped: Vec::new(),
        unfinished: super::Unfinished::default(),
        no_conversation: None,
    })
}

/// What the first pass learned.
struct FirstPass {
    /// Sessions in file order.
    order: Vec<SessionId>,
    /// Sessions already in the store, with the seq they end at there.
    present: HashMap<SessionId, Seq>,
    /// (parent, seq) pairs forks in the file start from.
    fork_points: HashSet<(SessionId, Seq)>,
    /// Each session's last seq in the file.
    file_last: HashMap<SessionId, Seq>,
}

fn first_pass(log: &dyn EventLog, input: Input<'_>, file: &str) -> Result<FirstPass, ImportError> {
    let read_error = |e: std::io::Error| ImportError::Read {
        file: file.to_owned(),
        detail: e.to_string(),
    };
    let reader = input.open().map_err(read_error)?;
    let mut pass = FirstPass {
        order: Vec::new(),
        present: HashMap::new(),
        fork_points: HashSet::new(),
        file_last: HashMap::new(),
    };
    // Per session: the file's last (seq, hash), and whether the store's last event was met.
    let mut file_last: HashMap<SessionId, (Seq, planlog_core::events::Hash)> = HashMap::new();
    let mut met: HashSet<SessionId> = HashSet::new();
    for line in JsonLines::new(reader) {
        let (n, v) = match line.map_err(read_error)? {
            Line::Json(n, v) => (n, v),
            Line::Bad(bad) | Line::TooLong(bad) => return Err(unskippable(file, bad)),
            Line::Cut(n) => {
                return Err(unskippable(
                    file,
                    BadLine {
                        line: n,
                        why: "the last line is cut (the export was still being written, or cut off); export the session again".to_owned(),
                    },
                ));
            }
        };
        let raw = v.to_string();
        let e = Event::decode(raw.as_bytes()).map_err(|err| {
            unskippable(
                file,
                BadLine {
                    line: n,
                    why: match err {
                        planlog_core::events::DecodeError::HashMismatch => "the event does not match its hash: the file was changed after it was exported; export the session again".to_owned(),
                        other => other.to_string(),
                    },
                },
            )
        })?;
        if !file_last.contains_key(&e.session) {
            pass.order.push(e.session.clone());
            let present = log.last(&e.session)?;
            if let Some(last) = &present {
                pass.present.insert(e.session.clone(), last.seq);
            }
            if e.seq != Seq::FIRST {
                return Err(ImportError::Cut {
                    file: file.to_owned(),
                    session: e.session.clone(),
                    first: e.seq.get(),
                });
            }
        }
        file_last.insert(e.session.clone(), (e.seq, e.hash));
        if let Some(last) = pass.present.get(&e.session).copied()
            && e.seq == last
        {
            let stored = log.read(&e.session, last, Some(last))?;
            if stored.first().map(|s| s.hash) != Some(e.hash) {
                return Err(ImportError::Exists(e.session.clone()));
            }
            met.insert(e.session.clone());
        }
        if let EventBody::SessionStarted(s) = &e.body
            && let Origin::Fork { parent, at } = &s.origin
        {
            pass.fork_points.insert((parent.clone(), *at));
        }
    }
    // A session the store holds more of than the file: the file must be an older export of it.
    for id in pass.present.keys().filter(|id| !met.contains(*id)) {
        let Some((seq, hash)) = file_last.get(id).copied() else {
            continue;
        };
        let stored = log.read(id, seq, Some(seq))?;
        if stored.first().map(|s| s.hash) != Some(hash) {
            return Err(ImportError::Exists(id.clone()));
        }
    }
    pass.file_last = file_last
        .into_iter()
        .map(|(id, (seq, _))| (id, seq))
        .collect();
    Ok(pass)
}

/// The second pass: each session folded, its state kept at the fork points.
fn fork_states(
    input: Input<'_>,
    file: &str,
    points: &HashSet<(SessionId, Seq)>,
) -> Result<HashMap<(SessionId, Seq), SessionState>, ImportError> {
    let mut saved = HashMap::new();
    if points.is_empty() {
        return Ok(saved);
    }
    let read_error = |e: std::io::Error| ImportError::Read {
        file: file.to_owned(),
        detail: e.to_string(),
    };
    let mut states: HashMap<SessionId, SessionState> = HashMap::new();
    for line in JsonLines::new(input.open().map_err(read_error)?) {
        let Line::Json(_, v) = line.map_err(read_error)? else {
            continue;
        };
        let Ok(e) = Event::decode(v.to_string().as_bytes()) else {
            continue;
        };
        let state = states.remove(&e.session).unwrap_or_default();
        let state = planlog_core::apply(state, &e.body);
        if points.contains(&(e.session.clone(), e.seq)) {
            saved.insert((e.session.clone(), e.seq), state.clone());
        }
        states.insert(e.session, state);
    }
    Ok(saved)
}

fn unskippable(file: &str, line: BadLine) -> ImportError {
    ImportError::BadLine {
        file: file.to_owned(),
        line,
        skippable: false,
    }
}
