//! The EventLog conformance suite against the journaled log, indexed each way a process may
//! index it: on its own thread (reads meet the index and the journal past it, racing the
//! thread), lazily (nearly everything is read from the journal past the index), and
//! eagerly (nearly everything from the index).

mod background {
    planlog_core::eventlog_conformance!(planlog_tests::TempJournaled::new);
}

mod lazy {
    planlog_core::eventlog_conformance!(|| planlog_tests::TempJournaled::indexed(
        planlog_store::Indexing::Lazy
    ));
}

mod eager {
    planlog_core::eventlog_conformance!(|| planlog_tests::TempJournaled::indexed(
        planlog_store::Indexing::Eager
    ));
}
