//! `planlog replay SESSION`: step through the events, with the plan after each.

use planlog_audit::history_from;
use planlog_core::{Seq, SessionState, apply, render::render_block};

use super::{check_seq, last_seq};
use crate::support::failure::{Failure, find_session};
use crate::support::open::Store;
use crate::support::output::{Out, style};

/// Arguments of `planlog replay`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The session: its id, or any unique beginning of it.
    session: String,
    /// First seq.
    #[arg(long)]
    from: Option<u64>,
    /// Last seq.
    #[arg(long)]
    to: Option<u64>,
}

pub(crate) fn run(store: &Store, args: Args) -> Result<(), Failure> {
    let log = store.for_reading()?;
    let id = find_session(&*log, &args.session)?;
    let last = last_seq(&*log, &id)?;
    let from = args
        .from
        .map(|n| check_seq(&id, n, last))
        .transpose()?
        .unwrap_or(Seq::FIRST);
    let to = args.to.map(|n| check_seq(&id, n, last)).transpose()?;
    if let Some(to) = to
        && to < from
    {
        return Err(Failure::cannot_run(format!(
            "--from {from} is after --to {to}; give --from SEQ no later than --to SEQ"
        )));
    }
    let before = match from.prev() {
        Some(p) => log.state_at(&id, p)?,
        None => SessionState::default(),
    };
    let mut out = Out::new();
    let earlier = planlog_audit::plans_in(&*log, &id);
    let mut state = before;
    for events in log.scan(&id, from) {
        let mut events = events?;
        events.retain(|e| to.is_none_or(|to| e.seq <= to));
        let entries = history_from(state.clone(), &events, &earlier);
        for (e, entry) in events.iter().zip(entries) {
            state = apply(state, &e.body);
            out.line(entry.line())?;
            for line in render_block(&state.plan, style()).lines() {
                out.line(format!("      {line}"))?;
            }
            if state.plan_mode {
                out.line("      (plan mode on)")?;
            }
        }
        if to.is_some_and(|to| events.last().is_none_or(|e| e.seq >= to)) {
            break;
        }
    }
    Ok(out.finish()?)
}
