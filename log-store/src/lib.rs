//! planlog-store: durable event logs (redb). Work in progress: see issue 3.
