//! The conformance suite on the PostgreSQL log: every check, each on a fresh database of the
//! test server (`.ci/with-postgres`; without it each test says SKIPPED).

planlog_core::eventlog_conformance!(optional planlog_tests::TempPg::new);
