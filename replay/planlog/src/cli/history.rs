//! `planlog history SESSION`: one line per event (or one JSON object per line), read in
//! chunks so memory does not grow with the session.

use planlog_audit::history_through;
use planlog_core::events::Event;
use planlog_core::{LogError, Seq, SessionState};

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
    let earlier = planlog_audit::plans_in(&*log, &id);
    let total = log.session(&id)?.map_or(0, |s| s.events);
    let bar = crate::support::progress::events("history", total);
    // Each chunk's lines are made on the thread that read it, from the state before the
    // chunk (the store's state at a seq), so its events are decoded, read and freed there.
    let lines = |events: Result<Vec<Event>, LogError>| -> Result<(usize, String), Failure> {
        let events = events?;
        let Some(first) = events.first() else {
            return Ok((0, String::new()));
        };
        let mut state = match Seq::new(first.seq.get() - 1) {
            Ok(before) => log.state_at(&id, before)?,
            Err(_) => SessionState::default(),
        };
        let count = events.len();
        let mut text = String::with_capacity(count * 160);
        for entry in history_through(&mut state, events, &earlier) {
            if args.json {
                text.push_str(&json_line(&entry)?);
            } else {
                text.push_str(&entry.line());
            }
            text.push('\n');
        }
        Ok((count, text))
    };
    let mut failed: Option<Failure> = None;
    planlog_audit::read_ahead_map(&*log, &id, Seq::FIRST, &lines, &mut |made| {
        let written = made.and_then(|(count, text)| {
            bar.inc(count as u64);
            Ok(out.raw(text)?)
        });
        written.map_err(|e| failed = Some(e)).is_ok()
    });
    bar.finish_and_clear();
    if let Some(e) = failed {
        return Err(e);
    }
    Ok(out.finish()?)
}
