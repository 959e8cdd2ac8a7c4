//! Timestamps. Core never reads a clock: the host passes the time in.
//!
//! A [`Timestamp`] is milliseconds since the Unix epoch, written in events as an RFC 3339
//! UTC string with exactly three fraction digits (`2026-11-29T19:34:14.123Z`) so a log is
//! readable by eye. Parsing and formatting are jiff's (which never reads a clock unless
//! asked to), except for that exact form within the years 1000..=9998, which every event
//! holds and [`civil`] reads and writes directly (the same results, tested against jiff).

use std::fmt;

use serde::{Deserialize, Serialize};

mod civil;

/// A point in time, in milliseconds since 1970-01-01T00:00:00Z, within the years
/// -9999..=9999.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Timestamp(i64);

/// A timestamp text that is not RFC 3339.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not an RFC 3339 timestamp (expected e.g. 2026-11-29T19:34:14.123Z): {reason}")]
pub struct TimestampError {
    /// The text that failed to parse.
    pub text: String,
    /// Why.
    pub reason: String,
}

impl Timestamp {
    /// The earliest representable time, in milliseconds (jiff's range: -9999-01-02).
    const MIN_MS: i64 = -377_705_023_201_000;
    /// The latest representable time, in milliseconds (jiff's range: 9999-12-30T22:00Z).
    const MAX_MS: i64 = 253_402_207_200_000;

    /// From milliseconds since the epoch, clamped to the representable range (about the
    /// years -9999..=9999).
    pub fn from_millis(ms: i64) -> Self {
        Self(ms.clamp(Self::MIN_MS, Self::MAX_MS))
    }

    /// Milliseconds since the epoch.
    pub fn as_millis(self) -> i64 {
        self.0
    }

    /// Parses RFC 3339 (`YYYY-MM-DDTHH:MM:SS[.fff…](Z|±HH:MM)`); fractions beyond
    /// milliseconds are truncated.
    ///
    /// # Errors
    /// [`TimestampError`] when `text` is not of that form or names an impossible date.
    pub fn parse(text: &str) -> Result<Self, TimestampError> {
        if let Some(ms) = civil::parse(text.as_bytes()) {
            return Ok(Self::from_millis(ms));
        }
        text.parse::<jiff::Timestamp>()
            .map(|t| Self::from_millis(t.as_millisecond()))
            .map_err(|e| TimestampError {
                text: text.to_owned(),
                reason: e.to_string(),
            })
    }

    fn jiff(self) -> jiff::Timestamp {
        match jiff::Timestamp::from_millisecond(self.0) {
            Ok(t) => t,
            // Invariant: every constructor clamps to [MIN_MS, MAX_MS], jiff's own range.
            Err(e) => panic!(
                "invariant broken: timestamp {} ms outside jiff's range ({e})",
                self.0
            ),
        }
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match civil::format(self.0) {
            Some(text) => f.write_str(text.as_str()),
            None => write!(f, "{}", self.jiff().strftime("%Y-%m-%dT%H:%M:%S%.3fZ")),
        }
    }
}

impl TryFrom<String> for Timestamp {
    type Error = TimestampError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        Self::parse(&s)
    }
}

impl From<Timestamp> for String {
    fn from(t: Timestamp) -> Self {
        t.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_parses_round_trip() {
        for text in [
            "1970-01-01T00:00:00.000Z",
            "2026-11-29T19:34:14.123Z",
            "2024-02-29T23:59:59.999Z",
            "1969-12-31T23:59:59.999Z",
        ] {
            let t = Timestamp::parse(text).unwrap();
            assert_eq!(t.to_string(), text);
        }
    }

    #[test]
    fn parses_offsets_and_long_fractions() {
        let a = Timestamp::parse("2025-06-21T05:35:36.123456+02:00").unwrap();
        assert_eq!(a.to_string(), "2025-06-21T03:35:36.123Z");
        let b = Timestamp::parse("2025-06-21T03:35:36Z").unwrap();
        assert_eq!(b.as_millis() % 1000, 0);
    }

    #[test]
    fn refuses_impossible_dates() {
        for bad in [
            "2025-02-29T00:00:00Z",
            "2025-13-01T00:00:00Z",
            "2025-04-31T00:00:00Z",
            "yesterday",
            "2025-01-01T00:00:00",
            "2025-01-01T00:00:00.Z",
        ] {
            assert!(Timestamp::parse(bad).is_err(), "{bad}");
        }
        assert!(Timestamp::parse("2024-02-29T00:00:00Z").is_ok());
        assert!(Timestamp::parse("2025-12-31T00:00:00Z").is_ok());
    }

    /// The direct path reads and writes exactly what jiff does: random instants over the
    /// years it covers and past its edges, and texts it must refuse or leave to jiff.
    #[test]
    fn the_direct_path_agrees_with_jiff() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let edges = [
            0,
            -1,
            951_782_400_000,     // 2000-02-29
            -30_610_224_000_000, // 1000-01-01
            -30_610_224_000_001,
            253_370_764_799_999, // 9998-12-31T23:59:59.999Z
            253_370_764_800_000,
            Timestamp::MIN_MS,
            Timestamp::MAX_MS,
        ];
        let span = (Timestamp::MAX_MS - Timestamp::MIN_MS) as u64;
        let randoms = (0..20_000).map(|_| Timestamp::MIN_MS + (next() % span) as i64);
        for ms in edges.into_iter().chain(randoms) {
            let t = Timestamp::from_millis(ms);
            let jiff = t.jiff().strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string();
            assert_eq!(t.to_string(), jiff, "{ms}");
            // (jiff cannot read back all it writes before year 0; neither can planlog.)
            let back = jiff
                .parse::<jiff::Timestamp>()
                .ok()
                .map(|t| t.as_millisecond());
            let ours = Timestamp::parse(&jiff).ok().map(Timestamp::as_millis);
            assert_eq!(ours, back, "{jiff}");
            if (0..=253_370_764_799_999).contains(&ms) {
                assert_eq!(ours, Some(ms), "{jiff}");
            }
        }
        for text in [
            "2025-02-29T00:00:00.000Z",
            "2024-02-30T00:00:00.000Z",
            "2025-00-10T00:00:00.000Z",
            "2025-01-00T00:00:00.000Z",
            "2025-01-01T24:00:00.000Z",
            "2025-01-01T23:60:00.000Z",
            "2025-01-01T23:59:60.000Z",
            "2025-01-01T23:59:59.00xZ",
            "2025-01-01 23:59:59.000Z",
            "2025-01-01T23:59:59.000z",
            "+025-01-01T23:59:59.000Z",
            "2025-01-01T23:59:59.000+00:00",
            "0999-01-01T00:00:00.000Z",
            "9999-01-01T00:00:00.000Z",
        ] {
            let ours = Timestamp::parse(text).map(Timestamp::as_millis).ok();
            let jiff = text
                .parse::<jiff::Timestamp>()
                .ok()
                .map(|t| Timestamp::from_millis(t.as_millisecond()).as_millis());
            assert_eq!(ours, jiff, "{text}");
        }
    }

    #[test]
    fn out_of_range_millis_are_clamped_and_still_print() {
        let far = Timestamp::from_millis(i64::MAX);
        assert!(far.to_string().starts_with("9999-12-"), "{far}");
        assert_eq!(Timestamp::parse(&far.to_string()), Ok(far));
    }
}
