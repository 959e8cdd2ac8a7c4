//! `planlog history SESSION`: one line per event (or one JSON object per line), read in
//! chunks so memory does not grow with the session.

use planlog_audit::history_through;
use planlog_core::{Seq, SessionState};

use super::{json_line, last_seq};
use crate::support::failure::{Failure, find_session};
use crate::support::open::Store;
use crate::support::output::Out;

/// Arguments of `planlog history`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The session: its id, or any unique beginning of it.
    session: String,
    /// One JSON object per line.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(store: &Store, args: Args) -> Result<(), Failure> {
    let log = store.for_reading()?;
    let id = find_session(&*log, &args.session)?;
    last_seq(&*log, &id)?;
    let mut out = Out::new();
    let mut state = SessionState::default();
    let earlier = planlog_audit::plans_in(&*log, &id);
    let total = log.session(&id)?.map_or(0, |s| s.events);
    let bar = crate::support::progress::events("history", total);
    let mut failed: Option<Failure> = None;
    planlog_audit::read_ahead(&*log, &id, Seq::FIRST, &mut |events| {
        let written = (|| -> Result<(), Failure> {
            let events = events?;
            bar.inc(events.len() as u64);
            for entry in history_through(&mut state, events, &earlier) {
                if args.json {
                    out.line(json_line(&entry)?)?;
                } else {
                    out.line(entry.line())?;
                }
            }
            Ok(())
        })();
        written.map_err(|e| failed = Some(e)).is_ok()
    });
    bar.finish_and_clear();
    if let Some(e) = failed {
        return Err(e);
    }
    Ok(out.finish()?)
}
