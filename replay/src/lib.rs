//! planlog-replay: time travel, audit and the `planlog` binary. Work in progress: see issue 5.
