//! The long work a hook leaves to a process of its own: a store whose index must be rebuilt
//! or brought up to date over a long journal, or a store of the older layout to upgrade,
//! takes seconds that grow with the history (a million events: 10-15 s here, BENCHMARKS.md),
//! longer than a hook may take (its [`super::BUDGET`]; the agent kills it at its own
//! timeout, 10 s as installed). So a hook opens the store with a limit
//! ([`crate::support::open::SHORT_WORK`]); past
//! it, the open changes nothing, the call waits in the spool, and the hook starts `planlog
//! drain --in-background` ([`start`]): a process of its own (its own process group, no
//! terminal, its output nowhere), which opens the store with no limit, so it does the work,
//! then stores what waits in the spool, in order. The next hook calls find the store ready. As `git gc
//! --auto` detaches itself, this leaves the agent's call alone.
//!
//! One such process runs per store at a time: it holds a lock on `<store>.catch-up.lock`
//! ([`hold`], [`Guard`]) for its life, and one that cannot take it leaves at once.

use std::fs::{File, OpenOptions, TryLockError};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::open::beside;

/// Starts `planlog --db STORE drain --in-background` as a process of its own; its id, or
/// why it could not be started.
pub(crate) fn start(store: &Path) -> Result<u32, String> {
    let program =
        std::env::current_exe().map_err(|e| format!("cannot find planlog's own program ({e})"))?;
    let child = Command::new(program)
        .arg("--db")
        .arg(store)
        .args(["drain", "--in-background"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Out of the hook's process group: an agent that stops the hook's group at its
        // timeout, or a terminal that hangs up, leaves it running.
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start `planlog drain` ({e})"))?;
    Ok(child.id())
}

/// Held for its life by the one background catch-up of a store (a lock on
/// `<store>.catch-up.lock`); `None` inside when the lock file could not be opened or
/// locked (a folder in its place, no permission): the catch-up runs unguarded (two at once
/// only wait for each other's index transactions), with a warning.
pub(crate) struct Guard {
    _lock: Option<File>,
}

/// The guard of the store at `store`; `None` when another process holds it.
pub(crate) fn hold(store: &Path) -> Option<Guard> {
    let path = beside(store, ".catch-up.lock");
    // Only opened and locked: planlog never writes it, so a file of someone else's that
    // sits there keeps its bytes.
    let file = match OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
    {
        Ok(file) => file,
        Err(error) => {
            tracing::warn!(lock = %path.display(), %error, "cannot open the catch-up's lock file; catching up without it");
            return Some(Guard { _lock: None });
        }
    };
    match file.try_lock() {
        Ok(()) => Some(Guard { _lock: Some(file) }),
        Err(TryLockError::WouldBlock) => None,
        Err(TryLockError::Error(error)) => {
            tracing::warn!(lock = %path.display(), %error, "cannot lock the catch-up's lock file; catching up without it");
            Some(Guard { _lock: None })
        }
    }
}
