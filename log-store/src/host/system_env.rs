//! [`SystemEnv`]: the real clock, random ULIDs and jittered waits, for hosts and the CLI.

use std::time::Duration;

use planlog_core::{Env, Timestamp};

/// The system clock, fresh random ULIDs, and real (randomised) waits between retries.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemEnv;

/// The longest wait between two retries of a raced append.
const MAX_PAUSE: Duration = Duration::from_millis(40);

impl Env for SystemEnv {
    fn now(&self) -> Timestamp {
        let ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        Timestamp::from_millis(ms)
    }

    fn new_ulid(&self) -> ulid::Ulid {
        ulid::Ulid::new()
    }

    /// "Full jitter": a random wait between 0 and min(250 µs * 2^attempt, 40 ms).
    fn pause(&self, attempt: u32) {
        let cap = Duration::from_micros(250u64 << attempt.min(8)).min(MAX_PAUSE);
        // The random part of a fresh ULID is 80 bits from the OS generator.
        let random = (ulid::Ulid::new().random() & u128::from(u64::MAX)) as u64;
        let micros = u64::try_from(cap.as_micros()).unwrap_or(u64::MAX).max(1);
        std::thread::sleep(Duration::from_micros(random % micros));
    }
}
