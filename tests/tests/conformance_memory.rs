//! The EventLog conformance suite against the in-memory log.
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // test code

planlog_core::eventlog_conformance!(planlog_core::MemoryLog::new);
