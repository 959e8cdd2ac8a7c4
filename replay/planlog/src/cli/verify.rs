//! `planlog verify [SESSION]`: redb's own check of every page, every session's events (see
//! `planlog_audit::verify_session`), and the hook calls that are not in the log: those waiting in
//! the spool (`planlog drain` stores them) and those the store refused for good (the dead
//! letters). It only reads. Exit 1 when anything is wrong.

use planlog_audit::{Report, verify_session};
use planlog_core::{LogError, OperatorError, UserError};

use super::session_id;
use crate::support::failure::Failure;
use crate::support::open::Store;
use crate::support::output::Out;

/// Arguments of `planlog verify`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Only this session.
    session: Option<String>,
}

pub(crate) fn run(store: &Store, args: Args) -> Result<(), Failure> {
    let only = args.session.as_deref().map(session_id).transpose()?;
    let mut report = Report::default();
    let mut out = Out::new();
    let mut file_damaged = false;
    store.must_exist()?;
    // First redb's own check of every page, then the events themselves.
    let log = match store.open_reading(true) {
        Ok(log) => log,
        Err(LogError::Operator(OperatorError::Corrupt { detail, .. })) => {
            out.line(format!(
                "problem: store file {}: damaged ({detail})",
                store.shown()
            ))?;
            file_damaged = true;
            store.open_reading(false).map_err(|e| {
                Failure::no(format!(
                    "the store cannot be opened to name the damage: {e}"
                ))
            })?
        }
        Err(e) => return Err(e.into()),
    };
    let sessions: Vec<_> =
        match &only {
            Some(id) => vec![log.session(id)?.ok_or_else(|| {
                Failure::from(LogError::from(UserError::UnknownSession(id.clone())))
            })?],
            None => log.sessions()?,
        };
    let total: u64 = sessions.iter().map(|s| s.events).sum();
    let bar = crate::support::progress::events("verifying", total);
    // The agents' own rules re-check what their hooks refused and how their calls read.
    let agents: std::sync::Arc<dyn planlog_audit::AgentRules> =
        std::sync::Arc::new(planlog_agents::Rules);
    for info in &sessions {
        verify_session(&*log, &info.id, &agents, &mut report, &mut |n| bar.inc(n));
    }
    bar.finish_and_clear();
    let cuts = cut_findings(store);
    for note in &report.notes {
        out.line(format!("note: {note}"))?;
    }
    for note in &cuts {
        out.line(format!("note: {note}"))?;
    }
    for problem in &report.problems {
        out.line(format!("problem: {problem}"))?;
    }
    let hooks = hook_findings(store);
    for problem in &hooks {
        out.line(format!("problem: {problem}"))?;
    }
    let problems = report.problems.len() + hooks.len() + usize::from(file_damaged);
    let context = if report.compactions + report.restores > 0 {
        format!(
            "; on record: {} compactions of an agent's context, {} plans put back into one",
            report.compactions, report.restores
        )
    } else {
        String::new()
    };
    out.line(format!(
        "{} sessions, {} events checked: {problems} problems, {} notes{context}",
        report.sessions,
        report.events,
        report.notes.len() + cuts.len()
    ))?;
    out.finish()?;
    if problems == 0 {
        Ok(())
    } else {
        Err(Failure::no(""))
    }
}

/// The journal's tail cuts whose bytes were kept beside it: each a note (a crash's torn
/// write is cut as a matter of course; damage to the last write looks the same, and only the
/// one who knows what was written can tell).
fn cut_findings(store: &Store) -> Vec<String> {
    let journal = planlog_store::journal_path(&store.path);
    if !journal.is_file() {
        return Vec::new();
    }
    match planlog_store::journal::cuts_kept_beside(&journal) {
        Ok(kept) => kept
            .into_iter()
            .map(|(file, at)| {
                format!(
                    "the journal's tail was cut at byte {at} (a torn write a crash left, or damage to the last write, which looks the same); the bytes cut are kept in {}: if a session lacks events you know were written, keep that file and restore from a backup or an export",
                    file.display()
                )
            })
            .collect(),
        Err(e) => vec![format!(
            "the folder of {} could not be read for the journal's cut tails: {e}",
            journal.display()
        )],
    }
}

/// The hook writes and server calls that are not in the log: each is a problem (the record
/// is not complete). Read without locking or writing.
fn hook_findings(store: &Store) -> Vec<String> {
    use planlog_agents::hook::{DeadLetters, Spool};
    let mut out = Vec::new();
    let spool = Spool::beside(&store.path);
    match spool.census() {
        Ok(c) => {
            if c.entries > 0 {
                out.push(format!(
                    "{} {} hook calls wait in {} (the store could not take them when they ran{}; sessions {}): run `planlog drain` to store them",
                    c.entries,
                    c.agents.keys().copied().collect::<Vec<_>>().join(" and "),
                    spool.path().display(),
                    c.oldest.map(|t| format!(", the oldest at {t}")).unwrap_or_default(),
                    c.sessions.keys().cloned().collect::<Vec<_>>().join(", ")
                ));
            }
            if c.torn > 0 {
                out.push(format!(
                    "{} lines of {} were cut by a failed write: the calls they held are not stored (`planlog drain` moves them to the dead letters; importing the transcript recovers the calls)",
                    c.torn,
                    spool.path().display()
                ));
            }
        }
        Err(e) => out.push(format!("the hook spool cannot be read: {e}")),
    }
    let servers = crate::mcp::spool::McpSpool::beside(&store.path);
    match servers.census() {
        Ok(c) => {
            if c.calls > 0 {
                out.push(format!(
                    "{} plan calls of planlog mcp servers wait in {} (the store could not take them before the server exited{}; sessions {}): run `planlog drain` to store them",
                    c.calls,
                    servers.path().display(),
                    c.oldest.map(|t| format!(", the oldest made at {t}")).unwrap_or_default(),
                    c.sessions.keys().cloned().collect::<Vec<_>>().join(", ")
                ));
            }
            if c.torn > 0 {
                out.push(format!(
                    "{} lines of {} were cut by a failed write: the calls they held are not stored",
                    c.torn,
                    servers.path().display()
                ));
            }
        }
        Err(e) => out.push(format!("the planlog mcp spool cannot be read: {e}")),
    }
    let dead = DeadLetters::beside(&store.path);
    match dead.list() {
        Ok(letters) => {
            for letter in letters {
                out.push(format!(
                    "a hook write the store refused for good, kept in {}: {}",
                    dead.path().display(),
                    letter.describe()
                ));
            }
        }
        Err(e) => out.push(format!("the hook dead letters cannot be read: {e}")),
    }
    out
}
