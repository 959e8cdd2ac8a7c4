//! `planlog items SESSION`: each item's life.

use planlog_core::{Seq, render::one_line};
use planlog_replay::audit::{item_lives, shown};

use super::{last_seq, session_id};
use crate::support::failure::Failure;
use crate::support::open::Store;
use crate::support::output::Out;

/// Arguments of `planlog items`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The session.
    session: String,
}

pub(crate) fn run(store: &Store, args: Args) -> Result<(), Failure> {
    let id = session_id(&args.session)?;
    let log = store.for_reading()?;
    last_seq(&*log, &id)?;
    let events = log.read(&id, Seq::FIRST, None)?;
    let mut out = Out::new();
    let lives = item_lives(&events);
    if lives.is_empty() {
        out.line("(no items)")?;
    }
    for life in lives {
        out.line(format!(
            "{} {:?}",
            shown(&life.id),
            one_line(&life.first_content)
        ))?;
        for (seq, what) in &life.steps {
            out.line(format!("  seq {seq:>4}  {what}"))?;
        }
        out.line(format!("  {}", life.end))?;
    }
    Ok(out.finish()?)
}
