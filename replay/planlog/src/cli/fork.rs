//! `planlog fork SESSION --at SEQ | --at-turn N`: a new session from that state, lineage
//! recorded; prints its id.

use planlog_core::{PlanSession, Seq};
use planlog_store::host::{PlanFiles, SystemEnv};

use super::{check_seq, last_seq};
use crate::support::failure::{Failure, find_session};
use crate::support::open::Store;
use crate::support::output::Out;

/// Arguments of `planlog fork`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The session to fork: its id, or any unique beginning of it.
    session: String,
    /// Fork after this event.
    #[arg(long, conflicts_with = "at_turn", required_unless_present = "at_turn")]
    at: Option<u64>,
    /// Fork after the last event of this turn.
    #[arg(long)]
    at_turn: Option<u64>,
    /// A label for the fork.
    #[arg(long)]
    label: Option<String>,
}

pub(crate) fn run(store: &Store, args: Args) -> Result<(), Failure> {
    let log = store.for_writing()?;
    let id = find_session(&*log, &args.session)?;
    let last = last_seq(&*log, &id)?;
    let seq = match (args.at, args.at_turn) {
        (Some(n), _) => check_seq(&id, n, last)?,
        (None, Some(turn)) => {
            // Read a chunk at a time: the highest turn, and the last event of turn `turn` or
            // before.
            let mut last_turn = None;
            let mut at_turn = None;
            for e in log.scan(&id, Seq::FIRST).events() {
                let e = e?;
                if let Some(t) = e.turn {
                    last_turn = last_turn.max(Some(t));
                    if t <= turn {
                        at_turn = Some(e.seq);
                    }
                }
            }
            match last_turn {
                Some(max) if turn <= max => at_turn.ok_or_else(|| {
                    Failure::cannot_run(format!(
                        "session {id} has no event in turn {turn} or before; use --at SEQ"
                    ))
                })?,
                Some(max) => {
                    return Err(Failure::cannot_run(format!(
                        "session {id} has turns up to {max}, not {turn}; give --at-turn {max} or less, or --at SEQ"
                    )));
                }
                None => {
                    return Err(Failure::cannot_run(format!(
                        "session {id} records no turns; use --at SEQ"
                    )));
                }
            }
        }
        (None, None) => return Err(Failure::cannot_run("give --at SEQ or --at-turn N")),
    };
    let mut builder = PlanSession::builder(log, SystemEnv).sink(PlanFiles::beside(&store.path));
    if let Some(label) = args.label {
        builder = builder.label(label);
    }
    let fork = builder.fork(&id, seq)?;
    let mut out = Out::new();
    out.line(fork.id().as_str())?;
    Ok(out.finish()?)
}
