//! Shared helpers of the workspace-level integration tests.
//!
//! | module | what |
//! |---|---|
//! | `scenario` | the scripted-model scenario runner behind `tests/scenarios.rs` |
//! | (root) | [`TempStore`]: a redb store in a temporary folder; [`TempPg`]: a fresh database on the test PostgreSQL server |
//!
//! Binaries: `crash_child` (the SIGKILL test's victim), `make_store` (builds large stores
//! for the limits in BENCHMARKS.md).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test support code

pub mod scenario;

use planlog_core::EventLog;
use planlog_store::{PgLog, RedbLog};

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

/// The test PostgreSQL server's URL (`PLANLOG_TEST_POSTGRES`, set by `.ci/with-postgres`), or
/// `None` after printing SKIPPED: except that CI (`PLANLOG_REQUIRE_POSTGRES`) fails instead.
pub fn postgres_url() -> Option<String> {
    match std::env::var("PLANLOG_TEST_POSTGRES") {
        Ok(url) => Some(url),
        Err(_) => {
            assert!(
                std::env::var_os("PLANLOG_REQUIRE_POSTGRES").is_none(),
                "PLANLOG_REQUIRE_POSTGRES is set but PLANLOG_TEST_POSTGRES is not: run under .ci/with-postgres"
            );
            eprintln!("SKIPPED: no PLANLOG_TEST_POSTGRES (run the tests under .ci/with-postgres)");
            None
        }
    }
}

/// A fresh database on the test PostgreSQL server, dropped with this value.
pub struct TempPg {
    /// The log on it.
    pub log: PgLog,
    /// Its URL.
    pub url: String,
    admin: String,
    name: String,
}

impl TempPg {
    /// A new database (`None`: no test server, see [`postgres_url`]).
    pub fn new() -> Option<Self> {
        let admin = postgres_url()?;
        let name = format!("planlog_t_{}", ulid::Ulid::new().to_string().to_lowercase());
        let mut client = postgres::Client::connect(&admin, postgres::NoTls).unwrap();
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .unwrap();
        let url = format!("{}/{name}", admin.rsplit_once('/').unwrap().0);
        let log = PgLog::open(&url).unwrap();
        Some(Self {
            log,
            url,
            admin,
            name,
        })
    }
}

impl Drop for TempPg {
    fn drop(&mut self) {
        if let Ok(mut c) = postgres::Client::connect(&self.admin, postgres::NoTls) {
            let _ = c.batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ));
        }
    }
}

impl AsRef<dyn EventLog> for TempPg {
    fn as_ref(&self) -> &(dyn EventLog + 'static) {
        &self.log
    }
}
