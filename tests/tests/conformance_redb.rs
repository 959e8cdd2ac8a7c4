//! The EventLog conformance suite against the durable redb log.

planlog_core::eventlog_conformance!(planlog_tests::TempStore::new);
