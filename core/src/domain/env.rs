//! [`Env`]: the clock and id source a host lends to core. Core never reads a clock or a random
//! number generator itself, so tests and replays can be exact.

use std::sync::atomic::{AtomicU64, Ordering};

use super::time::Timestamp;

/// Time and fresh ids, provided by the host.
pub trait Env: Send + Sync {
    /// The current time.
    fn now(&self) -> Timestamp;
    /// A fresh ULID (for event and session ids).
    fn new_ulid(&self) -> ulid::Ulid;

    /// Waits a little before retry number `attempt` (from 1) of an append that lost a race
    /// with another writer. Hosts sleep a short, random, growing time so racing writers spread
    /// out; the default only yields the thread (deterministic tests and replays).
    fn pause(&self, attempt: u32) {
        let _ = attempt;
        std::thread::yield_now();
    }
}

/// A deterministic [`Env`] for tests, scenarios and demos: time starts at `start` and moves
/// one second per call; ids count up.
#[derive(Debug)]
pub struct TestEnv {
    start_ms: i64,
    ticks: AtomicU64,
    ids: AtomicU64,
}

impl TestEnv {
    /// Starts the clock at `start`.
    pub fn new(start: Timestamp) -> Self {
        Self {
            start_ms: start.as_millis(),
            ticks: AtomicU64::new(0),
            ids: AtomicU64::new(0),
        }
    }
}

impl Default for TestEnv {
    fn default() -> Self {
        // 2026-01-01T00:00:00Z
        Self::new(Timestamp::from_millis(1_767_225_600_000))
    }
}

impl Env for TestEnv {
    fn now(&self) -> Timestamp {
        let t = self.ticks.fetch_add(1, Ordering::SeqCst);
        Timestamp::from_millis(self.start_ms + i64::try_from(t).unwrap_or(i64::MAX / 2) * 1000)
    }

    fn new_ulid(&self) -> ulid::Ulid {
        let n = self.ids.fetch_add(1, Ordering::SeqCst) + 1;
        let ms = u64::try_from(self.start_ms).unwrap_or(0) + n;
        ulid::Ulid::from_parts(ms, u128::from(n))
    }
}

impl<E: Env + ?Sized> Env for std::sync::Arc<E> {
    fn now(&self) -> Timestamp {
        (**self).now()
    }

    fn new_ulid(&self) -> ulid::Ulid {
        (**self).new_ulid()
    }

    fn pause(&self, attempt: u32) {
        (**self).pause(attempt);
    }
}
