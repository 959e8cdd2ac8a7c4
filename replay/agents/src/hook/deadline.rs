//! A point in time a hook's work must be done by. A hook answers Claude Code within a fixed
//! budget whatever happens around it (a store locked by a long import, a spool with thousands
//! of calls, a transcript that never ends), so every wait it makes asks its deadline how long
//! it may take.

use std::time::{Duration, Instant};

/// When the work must be done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline {
    end: Instant,
}

impl Deadline {
    /// `budget` from now.
    pub fn after(budget: Duration) -> Self {
        Self {
            end: Instant::now() + budget,
        }
    }

    /// A deadline so far away that nothing waits for it (explicit commands such as
    /// `planlog drain`, which a person runs and may stop).
    pub fn none() -> Self {
        Self::after(Duration::from_secs(24 * 60 * 60))
    }

    /// The time left (zero once passed).
    pub fn left(&self) -> Duration {
        self.end.saturating_duration_since(Instant::now())
    }

    /// Whether it has passed.
    pub fn passed(&self) -> bool {
        Instant::now() >= self.end
    }

    /// The time left, but at most `most` (a wait that must also leave room for what follows).
    pub fn at_most(&self, most: Duration) -> Duration {
        self.left().min(most)
    }

    /// A deadline that ends `reserve` earlier (room kept for a step that must still run, such
    /// as spooling the call when the store could not take it).
    pub fn keeping(&self, reserve: Duration) -> Self {
        Self {
            end: self.end.checked_sub(reserve).unwrap_or(self.end),
        }
    }

    /// The instant it ends.
    pub fn instant(&self) -> Instant {
        self.end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_left_shrinks_to_zero_and_a_reserve_ends_earlier() {
        let d = Deadline::after(Duration::from_millis(50));
        assert!(!d.passed());
        assert!(d.left() <= Duration::from_millis(50));
        assert_eq!(
            d.at_most(Duration::from_millis(5)),
            Duration::from_millis(5)
        );
        let early = d.keeping(Duration::from_millis(50));
        assert!(early.passed());
        std::thread::sleep(Duration::from_millis(60));
        assert!(d.passed());
        assert_eq!(d.left(), Duration::ZERO);
    }
}
