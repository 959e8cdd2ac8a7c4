//! `planlog verify [SESSION]`: first the Claude Code hook calls waiting in the spool are
//! stored (when the store can be written), then redb's own check of every page, then every
//! session's events (see `planlog_replay::verify`). Exit 1 when anything is wrong.

use planlog_core::{LogError, OperatorError, UserError};
use planlog_replay::verify::{Report, verify_session};

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
    store_spooled_hook_calls(store);
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
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template("verifying {bar:30} {pos}/{len} events")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    for info in &sessions {
        verify_session(&*log, &info.id, &mut report, &mut |n| bar.inc(n));
    }
    bar.finish_and_clear();
    for note in &report.notes {
        out.line(format!("note: {note}"))?;
    }
    for problem in &report.problems {
        out.line(format!("problem: {problem}"))?;
    }
    let problems = report.problems.len() + usize::from(file_damaged);
    out.line(format!(
        "{} sessions, {} events checked: {problems} problems, {} notes",
        report.sessions,
        report.events,
        report.notes.len()
    ))?;
    out.finish()?;
    if problems == 0 {
        Ok(())
    } else {
        Err(Failure::no(""))
    }
}

/// Stores the hook calls waiting in the spool beside the store, saying so on stderr; a store
/// that still cannot take them is a warning (verify goes on, read-only if need be).
fn store_spooled_hook_calls(store: &Store) {
    use planlog_replay::claude_hooks::{capture::store_spooled, spool::Spool};
    let spool = Spool::beside(&store.path);
    if !spool.path().exists() {
        return;
    }
    let log = match store.open_reading(false) {
        Ok(log) => log,
        Err(e) => {
            tracing::warn!(spool = %spool.path().display(), error = %e, "hook calls wait in the spool; the store cannot be opened to store them");
            return;
        }
    };
    match store_spooled(&*log, &planlog_store::SystemEnv, &spool) {
        Ok(0) => {}
        Ok(n) => eprintln!(
            "planlog: stored {n} Claude Code hook calls that were waiting in {}",
            spool.path().display()
        ),
        Err(e) => {
            tracing::warn!(spool = %spool.path().display(), error = %e, "hook calls still wait in the spool")
        }
    }
}
