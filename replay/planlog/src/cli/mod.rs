//! The `planlog` command line: the argument grammar and one file per command.
//!
//! Exit codes mean one thing each: 0 success; 1 the answer is "no" (plan_write rejected the
//! call, `verify` found problems); 2 the command could not run (usage, IO, store, bad input),
//! with a one-line message on stderr saying what to do, and nothing written.

mod compact;
mod copy;
mod delete;
mod demo;
mod diff;
mod doctor;
mod drain;
mod export;
mod fork;
mod history;
mod import;
mod install;
mod items;
mod new;
mod reindex;
mod replay;
mod sessions;
mod show;
mod tasks;
mod verify;
mod write;

use clap::Subcommand;
use planlog_core::{LogError, Seq, SessionId, UserError};

use crate::support::failure::Failure;
pub(crate) use crate::support::failure::session_id;
use crate::support::open::Store;

/// The CLI's commands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Create a session and print its id.
    New(new::Args),
    /// Apply one plan_write argument object read from stdin, as the tool would.
    Write(write::Args),
    /// Show the plan (now, or after event SEQ).
    Show(show::Args),
    /// The tasks now: who holds each, what each waits for (`--ready`: only work free to claim).
    Tasks(tasks::Args),
    /// One line per event: what each write changed, each rejection's reason.
    History(history::Args),
    /// Each item's life: when it appeared, every change, how it ended.
    Items(items::Args),
    /// What changed between two seqs.
    Diff(diff::Args),
    /// Step through the events, printing the plan after each.
    Replay(replay::Args),
    /// Start a new session from a session's state at a seq; print its id.
    Fork(fork::Args),
    /// List sessions (oldest first) with lineage and progress.
    Sessions(sessions::Args),
    /// Check hash chains, seqs, recorded results, origins, forks and the store's indexes.
    Verify(verify::Args),
    /// Store what waits beside the store because the store could not take it then, in
    /// order: the agents' hook calls, and plan calls of `planlog mcp` servers that exited
    /// before they could store them.
    Drain(drain::Args),
    /// For each agent on this machine: its version, its plan tools, planlog's hooks (installed?
    /// would they run?) and their store. Exit 1 with what to do when something stops capture.
    Doctor(doctor::Args),
    /// Rebuild a file store's index from its journal (the old index is kept beside it).
    Reindex(reindex::Args),
    /// Reclaim the space of deleted sessions in a file store: the journal rewritten without
    /// their records (nothing else may have the store open), the index rebuilt.
    Compact(compact::Args),
    /// Delete a session and all its events; its id is retired (only the same session,
    /// restored from its export, can take it again).
    Delete(delete::Args),
    /// Import recorded sessions (prints the id of each session created, main first).
    Import(import::Args),
    /// Export a session.
    Export(export::Args),
    /// Copy sessions between stores (a file and a postgres:// database, either way), events
    /// byte for byte; a session the destination holds with other content is refused.
    Copy(copy::Args),
    /// Install planlog's hooks into an agent's settings (Claude Code's settings, Codex's
    /// hooks.json): every plan change recorded, the plan restored after compaction.
    Install(install::Args),
    /// Remove planlog's hooks from an agent's settings, and nothing else.
    Uninstall(install::Args),
    /// Run a scripted agent session against the store and show what planlog recorded.
    Demo,
}

/// Runs one CLI command on `store`.
pub(crate) fn run(store: &Store, command: Command) -> Result<(), Failure> {
    match command {
        Command::New(args) => new::run(store, args),
        Command::Write(args) => write::run(store, args),
        Command::Show(args) => show::run(store, args),
        Command::Tasks(args) => tasks::run(store, args),
        Command::History(args) => history::run(store, args),
        Command::Items(args) => items::run(store, args),
        Command::Diff(args) => diff::run(store, args),
        Command::Replay(args) => replay::run(store, args),
        Command::Fork(args) => fork::run(store, args),
        Command::Sessions(args) => sessions::run(store, args),
        Command::Verify(args) => verify::run(store, args),
        Command::Drain(args) => drain::run(store, args),
        Command::Doctor(args) => doctor::run(args),
        Command::Reindex(args) => reindex::run(store, args),
        Command::Compact(args) => compact::run(store, args),
        Command::Delete(args) => delete::run(store, args),
        Command::Import(args) => import::run(store, args),
        Command::Export(args) => export::run(store, args),
        Command::Copy(args) => copy::run(store, args),
        Command::Install(args) => install::run(store, args, install::Action::Install),
        Command::Uninstall(args) => install::run(store, args, install::Action::Uninstall),
        Command::Demo => demo::run(store),
    }
}

/// The last seq of an existing session, from the catalogue (one lookup, whatever its length).
fn last_seq(log: &dyn planlog_core::EventLog, id: &SessionId) -> Result<u64, Failure> {
    log.session(id)?
        .map(|info| info.events)
        .ok_or_else(|| Failure::from(LogError::from(UserError::UnknownSession(id.clone()))))
}

/// `n` as a seq of a session whose last seq is `last`.
fn check_seq(id: &SessionId, n: u64, last: u64) -> Result<Seq, Failure> {
    match Seq::new(n) {
        Ok(seq) if n <= last => Ok(seq),
        _ => Err(LogError::from(UserError::SeqOutOfRange {
            session: id.clone(),
            seq: n,
            last,
        })
        .into()),
    }
}

/// One JSON line for scripts. Invariant: what the CLI prints as JSON is plain data with
/// string keys; a failure is reported, never printed as an empty line.
fn json_line(value: &impl serde::Serialize) -> Result<String, Failure> {
    serde_json::to_string(value)
        .map_err(|e| Failure::cannot_run(format!("internal error: output is not JSON ({e})")))
}
