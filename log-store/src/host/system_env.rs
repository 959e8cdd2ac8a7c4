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
        fresh_ulid()
    }

    /// "Full jitter": a random wait between 0 and min(250 µs * 2^attempt, 40 ms).
    fn pause(&self, attempt: u32) {
        let cap = Duration::from_micros(250u64 << attempt.min(8)).min(MAX_PAUSE);
        // The random part of a fresh ULID is 80 bits from the OS generator.
        let random = (fresh_ulid().random() & u128::from(u64::MAX)) as u64;
        let micros = u64::try_from(cap.as_micros()).unwrap_or(u64::MAX).max(1);
        std::thread::sleep(Duration::from_micros(random % micros));
    }
}

/// A fresh ULID: this millisecond and 80 random bits read from the OS. (`Ulid::new` draws them
/// from rand's thread-local generator, whose first use asks std for the CPU's features:
/// `cpuid`s that each trap on a virtual machine; with the same probe gone from the journal's
/// checksum, ~0.07 ms per hook call here, BENCHMARKS.md.) Should the OS refuse, `Ulid::new`
/// makes it.
fn fresh_ulid() -> ulid::Ulid {
    let mut random = [0u8; 16];
    if getrandom::fill(&mut random[6..]).is_err() {
        return ulid::Ulid::new();
    }
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    ulid::Ulid::from_parts(ms, u128::from_be_bytes(random))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fresh ids are of this millisecond, differ, and carry 80 random bits.
    #[test]
    fn fresh_ulids_are_of_now_and_differ() {
        let before = SystemEnv.now().as_millis();
        let ids: Vec<ulid::Ulid> = (0..64).map(|_| SystemEnv.new_ulid()).collect();
        let after = SystemEnv.now().as_millis();
        for id in &ids {
            let ms = i64::try_from(id.timestamp_ms()).unwrap();
            assert!(
                (before..=after).contains(&ms),
                "{ms} outside {before}..={after}"
            );
        }
        let distinct: std::collections::HashSet<_> = ids.iter().collect();
        assert_eq!(distinct.len(), ids.len());
        // 64 ids whose random parts never set a bit above the 80th, and set some below it.
        assert!(ids.iter().all(|id| id.random() >> 80 == 0));
        assert!(ids.iter().any(|id| id.random() >> 64 != 0));
    }
}
