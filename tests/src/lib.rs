//! Shared helpers of the workspace-level integration tests.
//!
//! | module | what |
//! |---|---|
//! | `scenario` | the scripted-model scenario runner behind `tests/scenarios.rs` |
//! | (root) | [`TempStore`]: a redb store in a temporary folder |
//!
//! Binaries: `crash_child` (the SIGKILL test's victim), `make_store` (builds large stores
//! for the limits in BENCHMARKS.md).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test support code

pub mod scenario;

use planlog_core::EventLog;
use planlog_store::RedbLog;

/// A [`RedbLog`] in a temporary folder that lives as long as it does.
pub struct TempStore {
    /// The log.
    pub log: RedbLog,
    /// The folder (deleted on drop).
    pub dir: tempfile::TempDir,
}

impl TempStore {
    /// A fresh, empty store.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let log = RedbLog::open(dir.path().join("planlog.redb")).unwrap();
        Self { log, dir }
    }
}

impl Default for TempStore {
    fn default() -> Self {
        Self::new()
    }
}

impl AsRef<dyn EventLog> for TempStore {
    fn as_ref(&self) -> &(dyn EventLog + 'static) {
        &self.log
    }
}
