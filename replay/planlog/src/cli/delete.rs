//! `planlog delete SESSION`: delete a session and its events; its id is retired.

use std::io::IsTerminal;

use planlog_core::{LogError, UserError};
use planlog_import::HistoryCache;
use planlog_store::host::{PlanFileError, PlanFiles};

use super::session_id;
use crate::support::failure::Failure;
use crate::support::open::Store;
use crate::support::output::Out;

/// Arguments of `planlog delete`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The session.
    session: String,
    /// Do not ask.
    #[arg(long)]
    yes: bool,
}

pub(crate) fn run(store: &Store, args: Args) -> Result<(), Failure> {
    let id = session_id(&args.session)?;
    let log = store.for_writing()?;
    let info = log
        .session(&id)?
        .ok_or_else(|| Failure::from(LogError::from(UserError::UnknownSession(id.clone()))))?;
    if !args.yes {
        if !std::io::stdin().is_terminal() {
            return Err(Failure::cannot_run(format!(
                "refusing to delete session {id} without --yes when not run interactively"
            )));
        }
        eprint!(
            "Delete session {id} and its {} events? This cannot be undone: the id {id} is retired (nothing can be written under it again; only this same session, restored from an export made with `planlog export {id} --format jsonl`, can take it back). [y/N] ",
            info.events
        );
        let mut answer = String::new();
        std::io::stdin()
            .read_line(&mut answer)
            .map_err(|e| Failure::cannot_run(format!("cannot read the answer: {e}")))?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            return Err(Failure::cannot_run("not deleted"));
        }
    }
    log.delete(&id)?;
    match PlanFiles::beside(&store.path).remove(&id) {
        Ok(()) => {}
        Err(PlanFileError::NotOurs(path)) => tracing::warn!(
            file = %path.display(),
            "a file planlog did not write sits where the deleted session's plan file would be; it was left alone"
        ),
        Err(error) => {
            tracing::warn!(%error, "could not remove the deleted session's plan file")
        }
    }
    // It holds the session's item texts.
    let history = HistoryCache::beside(&store.path);
    if let Err(error) = history.forget(&id) {
        tracing::warn!(
            %error,
            dir = %history.dir().display(),
            "could not remove what was kept of the deleted session's history"
        );
    }
    let mut out = Out::new();
    out.line(format!("deleted {id}"))?;
    if planlog_store::journal_path(&store.path).exists() {
        eprintln!(
            "planlog: no reader sees its events any more; their bytes stay in the store's journal until `planlog compact` (run it while no agent or viewer has the store open)"
        );
    }
    Ok(out.finish()?)
}
