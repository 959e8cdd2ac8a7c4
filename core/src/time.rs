//! Timestamps. Core never reads a clock: the host passes the time in.
//!
//! A [`Timestamp`] is milliseconds since the Unix epoch, written in events as an RFC 3339
//! UTC string with milliseconds (`2026-11-29T19:34:14.123Z`) so a log is readable by eye.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A point in time, in milliseconds since 1970-01-01T00:00:00Z.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Timestamp(i64);

/// A timestamp text that is not RFC 3339.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not an RFC 3339 timestamp (expected e.g. 2026-11-29T19:34:14.123Z)")]
pub struct TimestampError {
    /// The text that failed to parse.
    pub text: String,
}

impl Timestamp {
    /// From milliseconds since the epoch.
    pub fn from_millis(ms: i64) -> Self {
        Self(ms)
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
        parse_rfc3339(text).ok_or_else(|| TimestampError {
            text: text.to_owned(),
        })
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0.rem_euclid(1000);
        let secs = self.0.div_euclid(1000);
        let days = secs.div_euclid(86_400);
        let sod = secs.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        write!(
            f,
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{ms:03}Z",
            sod / 3600,
            (sod / 60) % 60,
            sod % 60
        )
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

/// Days since the epoch to (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// (year, month, day) to days since the epoch (inverse of [`civil_from_days`]).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn parse_rfc3339(s: &str) -> Option<Timestamp> {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = s.get(r)?;
        if part.bytes().all(|c| c.is_ascii_digit()) {
            part.parse().ok()
        } else {
            None
        }
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || d < 1 || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let (mo, d) = (mo as u32, d as u32);
    let dim = match mo {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if d > dim {
        return None;
    }
    let mut i = 19;
    let mut ms = 0i64;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            if i - start < 3 {
                ms = ms * 10 + i64::from(b[i] - b'0');
            }
            i += 1;
        }
        if i == start {
            return None;
        }
        for _ in (i - start)..3 {
            ms *= 10;
        }
    }
    let offset_secs = match b.get(i)? {
        b'Z' | b'z' if i + 1 == b.len() => 0,
        sign @ (b'+' | b'-') if i + 6 == b.len() && b[i + 3] == b':' => {
            let (oh, om) = (num(i + 1..i + 3)?, num(i + 4..i + 6)?);
            if oh > 23 || om > 59 {
                return None;
            }
            let off = oh * 3600 + om * 60;
            if *sign == b'+' { off } else { -off }
        }
        _ => return None,
    };
    let secs = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + sec.min(59) - offset_secs;
    Some(Timestamp(secs * 1000 + ms))
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
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
}
