//! The one form every event's time takes, `YYYY-MM-DDTHH:MM:SS.mmmZ`, read and written
//! without a date library: a history line and a decoded event each hold one, and jiff's
//! general formatter and parser were a measurable part of reading a long session. Only the
//! years 1000..=9998 are taken (four digits, well inside the representable range); anything
//! else is left to jiff, so the two paths never disagree (tested in the parent module).

/// Milliseconds in a day.
const DAY_MS: i64 = 86_400_000;
/// Days from 0000-03-01 to 1970-01-01 (Howard Hinnant's `days_from_civil` epoch shift).
const EPOCH_SHIFT: i64 = 719_468;
/// Days in 400 Gregorian years.
const ERA_DAYS: i64 = 146_097;
/// The form, a `0` standing for any digit.
const SHAPE: &[u8; 24] = b"0000-00-00T00:00:00.000Z";

/// The text of a time whose year is in 1000..=9998.
pub(super) struct Text([u8; 24]);

impl Text {
    /// The text.
    pub(super) fn as_str(&self) -> &str {
        // Only ASCII digits and the form's punctuation are ever written into it, so this
        // never falls back to the empty string.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

/// `ms` since the epoch as `YYYY-MM-DDTHH:MM:SS.mmmZ`, when its year is in 1000..=9998.
pub(super) fn format(ms: i64) -> Option<Text> {
    let days = ms.div_euclid(DAY_MS);
    let in_day = ms.rem_euclid(DAY_MS);
    let (year, month, day) = civil_from_days(days);
    if !(1000..=9998).contains(&year) {
        return None;
    }
    let mut out = *SHAPE;
    let mut put = |at: usize, width: usize, mut n: i64| {
        for slot in out[at..at + width].iter_mut().rev() {
            // `n % 10` is 0..=9 for the non-negative fields written here.
            *slot = b'0' + (n % 10) as u8;
            n /= 10;
        }
    };
    put(0, 4, year);
    put(5, 2, month);
    put(8, 2, day);
    put(11, 2, in_day / 3_600_000);
    put(14, 2, in_day / 60_000 % 60);
    put(17, 2, in_day / 1000 % 60);
    put(20, 3, in_day % 1000);
    Some(Text(out))
}

/// The milliseconds of `text` when it is exactly `YYYY-MM-DDTHH:MM:SS.mmmZ`, a real date
/// and time (no leap second) in the years 1000..=9998; `None` otherwise (jiff decides).
pub(super) fn parse(text: &[u8]) -> Option<i64> {
    if text.len() != SHAPE.len() {
        return None;
    }
    let fits = text.iter().zip(SHAPE).all(|(&b, &s)| {
        if s == b'0' {
            b.is_ascii_digit()
        } else {
            b == s
        }
    });
    if !fits {
        return None;
    }
    let num = |from: usize, to: usize| {
        text[from..to]
            .iter()
            .fold(0i64, |n, &d| n * 10 + i64::from(d - b'0'))
    };
    let (year, month, day) = (num(0, 4), num(5, 7), num(8, 10));
    let (hour, minute, second, milli) = (num(11, 13), num(14, 16), num(17, 19), num(20, 23));
    let real = (1000..=9998).contains(&year)
        && (1..=12).contains(&month)
        && (1..=days_in_month(year, month)).contains(&day)
        && hour < 24
        && minute < 60
        && second < 60;
    real.then(|| {
        days_from_civil(year, month, day) * DAY_MS
            + ((hour * 60 + minute) * 60 + second) * 1000
            + milli
    })
}

/// Days in `month` of `year` (Gregorian).
fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Howard Hinnant's `civil_from_days`: the proleptic Gregorian date of a day number.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + EPOCH_SHIFT;
    let era = z.div_euclid(ERA_DAYS);
    let doe = z.rem_euclid(ERA_DAYS);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Howard Hinnant's `days_from_civil`: the day number of a proleptic Gregorian date.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year.rem_euclid(400);
    let mp = if month > 2 { month - 3 } else { month + 9 };
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * ERA_DAYS + doe - EPOCH_SHIFT
}
