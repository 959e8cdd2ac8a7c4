//! `planlog reindex`: rebuilds a file store's index (the redb file) from its journal, the
//! store of record. The old index is moved aside, not deleted. Opening a store does this on
//! its own when it finds the index damaged; this is for an index found damaged later (a read
//! says so), or for an operator who wants it done now.

use planlog_store::{Indexing, JournaledLog, journal_path};

use crate::support::failure::Failure;
use crate::support::open::Store;

/// Arguments of `planlog reindex`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

pub(crate) fn run(store: &Store, _args: Args) -> Result<(), Failure> {
    let path = store.journaled_file("rebuild")?;
    let journal = journal_path(path);
    let log = JournaledLog::reindex(path, JournaledLog::options().indexing(Indexing::Eager))?;
    let sessions = planlog_core::EventLog::sessions(&log)?.len();
    eprintln!(
        "planlog: rebuilt the index {} from the journal {} ({} bytes): {sessions} sessions; the old index was moved aside beside it (.replaced-<time>)",
        path.display(),
        journal.display(),
        log.journal_end()
    );
    Ok(())
}
