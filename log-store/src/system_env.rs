//! [`SystemEnv`]: the real clock and random ULIDs, for hosts and the CLI.

use planlog_core::{Env, Timestamp};

/// The system clock and fresh random ULIDs.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemEnv;

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
}
