//! planlog's own jsonl export (`planlog export SESSION --format jsonl`): one canonical event
//! per line. Imported as is, so the session is identical (same id, events and hashes).

use std::collections::BTreeMap;

use planlog_core::{EventLog, MemoryLog, SessionId, events::Event};

use super::{BadLine, ImportError, Imported};
use crate::verify::{Report, SessionCheck};

/// Runs verify's checks on the events about to be imported (fork parents looked up in the
/// file first, then in the store): a history that could never have been written is refused.
fn refuse_forgeries(log: &dyn EventLog, file: &str, events: &[Event]) -> Result<(), ImportError> {
    let batch = MemoryLog::new();
    // Chains and seqs are checked by the store's append; here only what verify adds.
    let _ = batch.append_all(events);
    let parents = |parent: &SessionId, at| match batch.session(parent) {
        Ok(Some(_)) => batch.state_at(parent, at),
        _ => log.state_at(parent, at),
    };
    let mut report = Report::default();
    let mut check: Option<SessionCheck> = None;
    for e in events {
        if check
            .as_ref()
            .is_none_or(|c| c.last().is_some_and(|l| l.session != e.session))
        {
            check = Some(SessionCheck::new(e.session.clone()));
        }
        if let Some(c) = check.as_mut() {
            c.check(e, &parents, &mut report);
        }
    }
    match report.problems.first() {
        None => Ok(()),
        Some(first) => Err(ImportError::Forged {
            file: file.to_owned(),
            problem: first.to_string(),
            more: report.problems.len() - 1,
        }),
    }
}

/// Imports a jsonl export.
///
/// # Errors
/// Bad lines (events that do not decode, including a hash mismatch), a session that already
/// exists, or a batch the store refuses (a broken chain). Nothing is written then.
pub fn import(
    log: &dyn EventLog,
    file: &str,
    text: &str,
    skip_bad_lines: bool,
) -> Result<Imported, ImportError> {
    let mut events: Vec<Event> = Vec::new();
    let mut bad = Vec::new();
    for (n, raw) in text.split('\n').enumerate() {
        let raw = raw.trim_end_matches('\r');
        if raw.trim().is_empty() {
            continue;
        }
        match Event::decode(raw.as_bytes()) {
            Ok(e) => events.push(e),
            Err(e) => bad.push(BadLine {
                line: n + 1,
                why: e.to_string(),
            }),
        }
    }
    if !bad.is_empty() && !skip_bad_lines {
        return Err(ImportError::BadLines {
            file: file.to_owned(),
            lines: bad,
        });
    }
    let mut order: Vec<SessionId> = Vec::new();
    let mut by_session: BTreeMap<SessionId, Vec<Event>> = BTreeMap::new();
    for e in events {
        if !by_session.contains_key(&e.session) {
            order.push(e.session.clone());
        }
        by_session.entry(e.session.clone()).or_default().push(e);
    }
    for id in &order {
        if log.session(id)?.is_some() {
            return Err(ImportError::Exists(id.clone()));
        }
    }
    let all: Vec<Event> = order
        .iter()
        .flat_map(|id| by_session.remove(id).unwrap_or_default())
        .collect();
    refuse_forgeries(log, file, &all)?;
    let calls = all.iter().filter(|e| e.seq.get() > 1).count();
    log.append_all(&all)?;
    Ok(Imported {
        sessions: order,
        calls,
        skipped: bad,
    })
}
