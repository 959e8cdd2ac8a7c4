//! `planlog drain`: stores the agents' hook calls waiting in the spool beside the store
//! (the store was locked, full or unreachable when they ran), in order, as the next hook call
//! would. Calls the store refuses for good go to the dead letters (`planlog verify` reports
//! them). Exit 0 when nothing waits any more, 1 when calls still wait (the store still
//! refuses them; the message says why).

use planlog_agents::hook::{DeadLetters, Deadline, Spool, WritePath};
use planlog_store::host::SystemEnv;

use crate::support::failure::Failure;
use crate::support::open::Store;

/// Arguments of `planlog drain`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

pub(crate) fn run(store: &Store, _args: Args) -> Result<(), Failure> {
    let spool = Spool::beside(&store.path);
    if spool.looks_empty() {
        eprintln!("planlog: no hook calls wait in {}", spool.path().display());
        return Ok(());
    }
    let log = store.for_writing()?;
    let path = WritePath::new(
        Ok(&*log),
        &SystemEnv,
        spool.clone(),
        DeadLetters::beside(&store.path),
        Deadline::none(),
    );
    let drained = path.drain();
    eprintln!(
        "planlog: stored {} hook calls from {}{}",
        drained.stored,
        spool.path().display(),
        if drained.dead > 0 {
            format!(
                "; {} the store refuses for good were moved to {} (`planlog verify` lists them)",
                drained.dead,
                DeadLetters::beside(&store.path).path().display()
            )
        } else {
            String::new()
        }
    );
    match drained.stopped {
        None => Ok(()),
        Some(why) => Err(Failure::no(format!(
            "hook calls still wait in {}: {why}",
            spool.path().display()
        ))),
    }
}
