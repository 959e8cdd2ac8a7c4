//! `planlog items SESSION`: each item's life. The session is read 2,000 events at a time and
//! each item's steps wait in a temporary file (`support::spill`) until the items are printed,
//! so memory holds the items, not the session.

use planlog_audit::{ItemLives, shown};
use planlog_core::{Seq, render::one_line};

use super::last_seq;
use crate::support::failure::{Failure, find_session};
use crate::support::open::Store;
use crate::support::output::Out;
use crate::support::spill::Spill;

/// Arguments of `planlog items`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The session: its id, or any unique beginning of it.
    session: String,
}

pub(crate) fn run(store: &Store, args: Args) -> Result<(), Failure> {
    let log = store.for_reading()?;
    let id = find_session(&*log, &args.session)?;
    last_seq(&*log, &id)?;
    let spilled = |e: std::io::Error| {
        Failure::cannot_run(format!(
            "cannot keep the items' steps in a temporary file: {e} (set TMPDIR to a folder with room)"
        ))
    };
    let mut spill = Spill::new().map_err(spilled)?;
    let mut lives = ItemLives::default();
    for events in log.scan(&id, Seq::FIRST) {
        let events = events?;
        for e in &events {
            lives.observe(e);
        }
        for (i, steps) in lives.take_steps() {
            for (seq, what) in steps {
                spill.push(i, seq, &what).map_err(spilled)?;
            }
        }
    }
    let lives = lives.finish();
    let mut out = Out::new();
    if lives.is_empty() {
        out.line("(no items)")?;
    }
    for (i, life) in lives.iter().enumerate() {
        out.line(format!(
            "{} {:?}",
            shown(&life.id),
            one_line(&life.first_content)
        ))?;
        let mut failed = None;
        spill
            .each(i, &mut |seq, what| {
                out.line(format!("  seq {seq:>4}  {what}")).map_err(|e| {
                    failed = Some(e);
                    std::io::Error::other("output failed")
                })
            })
            .map_err(|e| match failed.take() {
                Some(output) => Failure::from(output),
                None => spilled(e),
            })?;
        out.line(format!("  {}", life.end))?;
    }
    Ok(out.finish()?)
}
