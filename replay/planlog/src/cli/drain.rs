//! `planlog drain`: stores what waits beside the store because the store could not take it
//! when it happened (locked, full or unreachable), in order: the agents' hook calls (as the
//! next hook call would) and the plan calls of `planlog mcp` servers that exited before
//! they could store them (as the next server would). Hook calls the store refuses for good
//! go to the dead letters; server calls it refuses for good stay in their spool. Both are
//! reported by `planlog verify`. Exit 0 when nothing waits any more, 1 when something still
//! waits (the message says why).

use std::sync::Arc;

use planlog_agents::hook::{DeadLetters, Deadline, Spool, WritePath};
use planlog_core::PlanSink;
use planlog_import::HistoryCache;
use planlog_store::host::{PlanFiles, SystemEnv};

use crate::mcp::spool::McpSpool;
use crate::support::failure::Failure;
use crate::support::open::Store;

/// Arguments of `planlog drain`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Started by a hook whose store needed work longer than a hook may do
    /// (`hook::catch_up`): one such process per store (another leaves at once), and the
    /// store is opened for writing, so brought up to date, even when nothing waits.
    #[arg(long, hide = true)]
    in_background: bool,
}

pub(crate) fn run(store: &Store, args: Args) -> Result<(), Failure> {
    let spool = Spool::beside(&store.path);
    let servers = McpSpool::beside(&store.path);
    // Another background catch-up of this store runs: it does the work and the drain.
    let _one_at_a_time = if args.in_background {
        let Some(guard) = crate::hook::catch_up::hold(&store.path) else {
            return Ok(());
        };
        Some(guard)
    } else {
        None
    };
    if spool.looks_empty() && servers.looks_empty() && !args.in_background {
        eprintln!(
            "planlog: nothing waits in {} or {}",
            spool.path().display(),
            servers.path().display()
        );
        return Ok(());
    }
    let log = store.for_writing()?;
    let mut still = Vec::new();
    if !spool.looks_empty() {
        let path = WritePath::new(
            Ok(&*log),
            &SystemEnv,
            spool.clone(),
            DeadLetters::beside(&store.path),
            Deadline::none(),
        )
        .with_history(HistoryCache::beside(&store.path));
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
        if let Some(why) = drained.stopped {
            still.push(format!(
                "hook calls still wait in {}: {why}",
                spool.path().display()
            ));
        }
    }
    if !servers.looks_empty() {
        let files: Arc<dyn PlanSink> = Arc::new(PlanFiles::beside(&store.path));
        let drained = servers.drain(&log, Some(&files), &Deadline::none());
        eprintln!(
            "planlog: stored {} plan calls of planlog mcp servers from {}",
            drained.stored,
            servers.path().display()
        );
        still.extend(drained.problems(servers.path()));
    }
    if still.is_empty() {
        Ok(())
    } else {
        Err(Failure::no(still.join("\n")))
    }
}
