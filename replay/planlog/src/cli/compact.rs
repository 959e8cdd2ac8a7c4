//! `planlog compact`: reclaims the space of deleted sessions in a file store. Their records
//! stay in the journal after `planlog delete` (a deletion is a tombstone record); this
//! rewrites the journal without them, while no other process has the store open, and
//! rebuilds the index.

use planlog_store::{JournaledLog, journal_path};

use crate::support::failure::Failure;
use crate::support::open::Store;

/// Arguments of `planlog compact`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

pub(crate) fn run(store: &Store, _args: Args) -> Result<(), Failure> {
    let path = store.journaled_file("compact")?;
    let size = std::fs::metadata(journal_path(path)).map_or(0, |m| m.len());
    eprintln!(
        "planlog: compacting {} ({size} bytes of journal: it reads the journal twice and writes the records kept)",
        path.display()
    );
    let done = JournaledLog::compact(path)?;
    eprintln!(
        "planlog: compacted {}: the journal went from {} to {} bytes ({} records of {} deleted sessions removed, {} kept); the index was rebuilt",
        path.display(),
        done.before,
        done.after,
        done.dropped,
        done.sessions,
        done.kept
    );
    Ok(())
}
