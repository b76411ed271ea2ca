//! Dates, UTC instants and durations, in the ranges the protocol allows.
//!
//! The protocol's datetimes are UTC instants at microsecond resolution between
//! `0001-01-01T00:00:00Z` and `9999-12-31T23:59:59.999999Z`, and its dates run from
//! `0001-01-01` to `9999-12-31` (DOMAIN-09, DOMAIN-12). A value outside those ranges cannot
//! be built, and a datetime without a UTC offset cannot be parsed (TRUST-09).
//!
//! The calendar arithmetic is the proleptic Gregorian calendar that Python's `datetime`
//! uses, so that two implementations agree to the microsecond. Why it is written here and not
//! taken from a crate is recorded in `docs/decisions.md` (the grammar we accept is stricter
//! than any crate's RFC 3339 parser, and the arithmetic is twenty lines).

use std::fmt;

const MICROS_PER_SECOND: i64 = 1_000_000;
const MICROS_PER_DAY: i64 = 86_400 * MICROS_PER_SECOND;

/// Days from 1970-01-01 to the given proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i32, month: u32, day: u32) -> i64 {
    let y = i64::from(year) - i64::from(month <= 2);
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The proleptic Gregorian date of a day count from 1970-01-01.
fn civil_from_days(days: i64) -> (i32, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = (yoe + era * 400 + i64::from(month <= 2)) as i32;
    (year, month, day)
}

fn days_in_month(year: i32, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        _ => 28,
    }
}

/// Why a date, datetime or duration text or value was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeError {
    message: String,
}

impl TimeError {
    fn new(message: impl Into<String>) -> Self {
        TimeError {
            message: message.into(),
        }
    }
}

impl fmt::Display for TimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TimeError {}

/// A calendar date between 0001-01-01 and 9999-12-31.
///
/// ```
/// use dogana::Date;
/// let d: Date = "2026-10-19".parse().unwrap();
/// assert_eq!(d.to_string(), "2026-10-19");
/// assert_eq!(d.checked_add_days(-29).unwrap().to_string(), "2026-09-20");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    /// Days since 1970-01-01.
    days: i32,
}

impl Date {
    /// 0001-01-01, the first date of the domain.
    pub const MIN: Date = Date { days: -719_162 };
    /// 9999-12-31, the last date of the domain.
    pub const MAX: Date = Date { days: 2_932_896 };

    /// The date of a year, month and day, if it exists and lies in the domain.
    pub fn from_ymd(year: i32, month: u32, day: u32) -> Result<Date, TimeError> {
        if !(1..=9999).contains(&year) {
            return Err(TimeError::new(format!(
                "year {year} is outside 0001..9999 (DOMAIN-12)"
            )));
        }
        if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
            return Err(TimeError::new(format!(
                "{year:04}-{month:02}-{day:02} is not a calendar date"
            )));
        }
        Ok(Date {
            days: days_from_civil(year, month, day) as i32,
        })
    }

    /// Days since 1970-01-01 (negative before).
    pub fn days_since_epoch(self) -> i64 {
        i64::from(self.days)
    }

    /// The date `days` after 1970-01-01, if in the domain.
    pub fn from_days_since_epoch(days: i64) -> Option<Date> {
        if days < i64::from(Date::MIN.days) || days > i64::from(Date::MAX.days) {
            None
        } else {
            Some(Date { days: days as i32 })
        }
    }

    /// Year, month and day.
    pub fn ymd(self) -> (i32, u32, u32) {
        civil_from_days(i64::from(self.days))
    }

    /// The date `n` days later (or earlier for negative `n`), if still in the domain.
    pub fn checked_add_days(self, n: i64) -> Option<Date> {
        Date::from_days_since_epoch(i64::from(self.days).checked_add(n)?)
    }

    /// The instant this date starts at, in UTC.
    pub fn start(self) -> Timestamp {
        Timestamp {
            micros: i64::from(self.days) * MICROS_PER_DAY,
        }
    }
}

impl Date {
    /// Appends `YYYY-MM-DD`, as `Display` writes it, without the formatting machinery: a
    /// ledger's identity writes two or three dates per region.
    pub(crate) fn push_to(self, out: &mut String) {
        let (y, m, d) = self.ymd();
        // The domain's years are 1 to 9999: four digits.
        push_digits(out, y.unsigned_abs(), 4);
        out.push('-');
        push_digits(out, m, 2);
        out.push('-');
        push_digits(out, d, 2);
    }
}

/// Appends `n` as exactly `width` decimal digits (`n < 10^width`).
fn push_digits(out: &mut String, mut n: u32, width: usize) {
    let mut buf = [b'0'; 10];
    for b in buf[..width].iter_mut().rev() {
        *b = b'0' + (n % 10) as u8;
        n /= 10;
    }
    out.push_str(std::str::from_utf8(&buf[..width]).expect("ASCII digits"));
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::with_capacity(10);
        self.push_to(&mut out);
        f.write_str(&out)
    }
}

/// Reads exactly `n` ASCII digits.
fn digits(b: &[u8], at: usize, n: usize) -> Option<u32> {
    let s = b.get(at..at + n)?;
    s.iter().try_fold(0u32, |acc, c| {
        c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0'))
    })
}

fn parse_ymd(b: &[u8]) -> Option<(i32, u32, u32)> {
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    Some((digits(b, 0, 4)? as i32, digits(b, 5, 2)?, digits(b, 8, 2)?))
}

impl std::str::FromStr for Date {
    type Err = TimeError;

    /// Parses `YYYY-MM-DD`, nothing more and nothing less.
    fn from_str(s: &str) -> Result<Date, TimeError> {
        let b = s.as_bytes();
        match parse_ymd(b) {
            Some((y, m, d)) if b.len() == 10 => Date::from_ymd(y, m, d),
            _ => Err(TimeError::new(format!(
                "{} is not a date of the form YYYY-MM-DD",
                dogana_json::Quoted::new(s, dogana_json::SHOWN)
            ))),
        }
    }
}

/// A UTC instant at microsecond resolution between 0001-01-01T00:00:00Z and
/// 9999-12-31T23:59:59.999999Z.
///
/// Parsing requires a UTC offset (`Z` or `±HH:MM`) and normalizes to UTC, so equal instants
/// written with different offsets are equal values (DOMAIN-08). Display writes the protocol's
/// form: UTC with `+00:00`, and six fractional digits only when the microseconds are not zero.
///
/// ```
/// use dogana::Timestamp;
/// let a: Timestamp = "2026-10-18T02:00:00+02:00".parse().unwrap();
/// let b: Timestamp = "2026-10-18T00:00:00Z".parse().unwrap();
/// assert_eq!(a, b);
/// assert_eq!(a.to_string(), "2026-10-18T00:00:00+00:00");
/// assert!("2026-10-18T00:00:00".parse::<Timestamp>().is_err()); // no offset: refused
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp {
    /// Microseconds since 1970-01-01T00:00:00Z.
    micros: i64,
}

impl Timestamp {
    /// 0001-01-01T00:00:00Z.
    pub const MIN: Timestamp = Timestamp {
        micros: -719_162 * MICROS_PER_DAY,
    };
    /// 9999-12-31T23:59:59.999999Z.
    pub const MAX: Timestamp = Timestamp {
        micros: 2_932_897 * MICROS_PER_DAY - 1,
    };

    /// The instant `micros` microseconds after 1970-01-01T00:00:00Z, if in the domain.
    pub fn from_micros(micros: i64) -> Option<Timestamp> {
        (Timestamp::MIN.micros..=Timestamp::MAX.micros)
            .contains(&micros)
            .then_some(Timestamp { micros })
    }

    /// Microseconds since 1970-01-01T00:00:00Z.
    pub fn as_micros(self) -> i64 {
        self.micros
    }

    /// The UTC calendar date of this instant.
    pub fn date(self) -> Date {
        Date {
            days: self.micros.div_euclid(MICROS_PER_DAY) as i32,
        }
    }

    /// The instant `d` later, if still in the domain.
    pub fn checked_add(self, d: Duration) -> Option<Timestamp> {
        let sum = i128::from(self.micros) + d.as_micros();
        i64::try_from(sum).ok().and_then(Timestamp::from_micros)
    }

    /// The instant `d` earlier, if still in the domain.
    pub fn checked_sub(self, d: Duration) -> Option<Timestamp> {
        let diff = i128::from(self.micros) - d.as_micros();
        i64::try_from(diff).ok().and_then(Timestamp::from_micros)
    }

    /// The elapsed time from `earlier` to `self`, or `None` when `earlier` is later.
    pub fn since(self, earlier: Timestamp) -> Option<Duration> {
        let d = i128::from(self.micros) - i128::from(earlier.micros);
        Duration::from_micros(d).ok()
    }

    /// The next representable instant (one microsecond later), if any.
    pub fn successor(self) -> Option<Timestamp> {
        Timestamp::from_micros(self.micros + 1)
    }

    /// The previous representable instant (one microsecond earlier), if any.
    pub fn predecessor(self) -> Option<Timestamp> {
        Timestamp::from_micros(self.micros - 1)
    }
}

impl Timestamp {
    /// Appends the RFC 3339 text `Display` writes, without the formatting machinery: a
    /// ledger's identity writes two per region.
    pub(crate) fn push_to(self, out: &mut String) {
        let within = self.micros.rem_euclid(MICROS_PER_DAY);
        let secs = (within / MICROS_PER_SECOND) as u32;
        let frac = (within % MICROS_PER_SECOND) as u32;
        self.date().push_to(out);
        out.push('T');
        push_digits(out, secs / 3600, 2);
        out.push(':');
        push_digits(out, secs / 60 % 60, 2);
        out.push(':');
        push_digits(out, secs % 60, 2);
        if frac != 0 {
            out.push('.');
            push_digits(out, frac, 6);
        }
        out.push_str("+00:00");
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::with_capacity(32);
        self.push_to(&mut out);
        f.write_str(&out)
    }
}

impl std::str::FromStr for Timestamp {
    type Err = TimeError;

    /// Parses RFC 3339 as the protocol restricts it: `YYYY-MM-DDTHH:MM:SS`, an optional
    /// fraction of one to six digits, then `Z` or `±HH:MM`. Lowercase `t`/`z`, a space for
    /// `T`, a leap second, seven or more fractional digits and a missing offset are refused
    /// (WIRE-10, WIRE-13, WIRE-15).
    fn from_str(s: &str) -> Result<Timestamp, TimeError> {
        let bad = |why: &str| {
            TimeError::new(format!(
                "{} is not an RFC 3339 datetime with a UTC offset: {why}",
                dogana_json::Quoted::new(s, dogana_json::SHOWN)
            ))
        };
        let b = s.as_bytes();
        let (y, mo, d) = parse_ymd(b).ok_or_else(|| bad("expected YYYY-MM-DD"))?;
        if b.get(10) != Some(&b'T') {
            return Err(bad("expected an uppercase 'T' after the date"));
        }
        let (hh, mm, ss) = match (
            digits(b, 11, 2),
            b.get(13),
            digits(b, 14, 2),
            b.get(16),
            digits(b, 17, 2),
        ) {
            (Some(h), Some(b':'), Some(m), Some(b':'), Some(s)) => (h, m, s),
            _ => return Err(bad("expected HH:MM:SS after 'T'")),
        };
        if hh > 23 || mm > 59 || ss > 59 {
            return Err(bad("hour, minute or second out of range (no leap seconds)"));
        }
        let mut at = 19;
        let mut frac: i64 = 0;
        if b.get(at) == Some(&b'.') {
            let start = at + 1;
            let mut end = start;
            while end < b.len() && b[end].is_ascii_digit() {
                end += 1;
            }
            let n = end - start;
            if n == 0 {
                return Err(bad("a '.' must be followed by digits"));
            }
            if n > 6 {
                return Err(bad(
                    "more than six fractional digits would lose precision (WIRE-13)",
                ));
            }
            frac = i64::from(digits(b, start, n).unwrap_or(0)) * 10i64.pow((6 - n) as u32);
            at = end;
        }
        let offset_minutes: i64 = match b.get(at) {
            Some(b'Z') if b.len() == at + 1 => 0,
            Some(sign @ (b'+' | b'-')) if b.len() == at + 6 && b[at + 3] == b':' => {
                let (oh, om) = match (digits(b, at + 1, 2), digits(b, at + 4, 2)) {
                    (Some(h), Some(m)) if h <= 23 && m <= 59 => (h, m),
                    _ => return Err(bad("offset out of range")),
                };
                let total = i64::from(oh * 60 + om);
                if *sign == b'-' {
                    -total
                } else {
                    total
                }
            }
            None => return Err(bad("a UTC offset (Z or ±HH:MM) is required (TRUST-09)")),
            _ => return Err(bad("expected Z or ±HH:MM at the end")),
        };
        let date = Date::from_ymd(y, mo, d).map_err(|e| bad(&e.message))?;
        let local = i64::from(date.days) * MICROS_PER_DAY
            + (i64::from(hh) * 3600 + i64::from(mm) * 60 + i64::from(ss)) * MICROS_PER_SECOND
            + frac;
        let utc = local - offset_minutes * 60 * MICROS_PER_SECOND;
        Timestamp::from_micros(utc).ok_or_else(|| {
            bad("outside 0001-01-01T00:00:00Z..9999-12-31T23:59:59.999999Z after conversion to UTC (WIRE-14)")
        })
    }
}

/// A nonnegative span of time at microsecond resolution, up to Python's `timedelta.max`.
///
/// A duration with a fractional second must be exactly representable on the wire as a binary64
/// number of seconds whose shortest form has at most six fractional digits (WIRE-12, WIRE-15);
/// other durations cannot be built, so writing one never rounds.
///
/// ```
/// use dogana::Duration;
/// let week = Duration::from_days(7).unwrap();
/// assert_eq!(week.as_micros(), 604_800_000_000);
/// assert!(Duration::from_micros(-1).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration {
    micros: i128,
}

impl Duration {
    /// Zero.
    pub const ZERO: Duration = Duration { micros: 0 };
    /// 999999999 days, 23:59:59: the largest duration the wire carries exactly.
    /// (Python's `timedelta.max` has a further .999999 s that no binary64 number of seconds
    /// spells exactly; no two instants of the domain are that far apart, so as a limit it
    /// means the same thing: nothing expires.)
    pub const MAX: Duration = Duration {
        micros: 86_399_999_999_999 * 1_000_000,
    };

    /// A duration of `micros` microseconds; refused when negative, beyond [`Duration::MAX`],
    /// or when its seconds are not exactly representable on the wire.
    pub fn from_micros(micros: i128) -> Result<Duration, TimeError> {
        if micros < 0 {
            return Err(TimeError::new(format!(
                "a duration is nonnegative, not {micros} microseconds (WIRE-12)"
            )));
        }
        if micros > Duration::MAX.micros {
            return Err(TimeError::new(format!(
                "{micros} microseconds exceeds the largest duration, 999999999 days 23:59:59 (WIRE-14)"
            )));
        }
        if micros % 1_000_000 != 0 {
            let secs = micros as f64 / 1e6;
            if (secs * 1e6).round() as i128 != micros {
                return Err(TimeError::new(format!(
                    "{micros} microseconds has no exact binary64 number of seconds (WIRE-12)"
                )));
            }
        }
        Ok(Duration { micros })
    }

    /// A whole number of seconds.
    pub fn from_seconds(seconds: i64) -> Result<Duration, TimeError> {
        Duration::from_micros(i128::from(seconds) * 1_000_000)
    }

    /// A whole number of days.
    pub fn from_days(days: i64) -> Result<Duration, TimeError> {
        Duration::from_micros(i128::from(days) * i128::from(MICROS_PER_DAY))
    }

    /// Reads a wire `$seconds` number: nonnegative, and integral or with exactly representable
    /// microseconds. A number that would round is refused (WIRE-13).
    pub fn from_seconds_f64(seconds: f64) -> Result<Duration, TimeError> {
        if !seconds.is_finite() || seconds < 0.0 {
            return Err(TimeError::new(format!(
                "a duration is a finite nonnegative number of seconds, not {seconds} (WIRE-12)"
            )));
        }
        let micros = (seconds * 1e6).round();
        if micros > Duration::MAX.micros as f64 {
            return Err(TimeError::new(format!(
                "{seconds} seconds exceeds the largest duration (WIRE-14)"
            )));
        }
        let micros = micros as i128;
        if micros as f64 / 1e6 != seconds {
            return Err(TimeError::new(format!(
                "{seconds} seconds is not a whole number of microseconds and would round (WIRE-13)"
            )));
        }
        Duration::from_micros(micros)
    }

    /// The length in microseconds.
    pub fn as_micros(self) -> i128 {
        self.micros
    }

    /// Whole seconds, when the duration has no fraction.
    pub fn whole_seconds(self) -> Option<i64> {
        (self.micros % 1_000_000 == 0).then_some((self.micros / 1_000_000) as i64)
    }

    /// The length in seconds as a binary64 number (exact, by construction).
    pub fn as_seconds_f64(self) -> f64 {
        self.micros as f64 / 1e6
    }

    /// Whole days, when the duration is a whole number of days.
    pub fn whole_days(self) -> Option<i64> {
        let per_day = i128::from(MICROS_PER_DAY);
        (self.micros % per_day == 0).then(|| (self.micros / per_day) as i64)
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.whole_seconds() {
            Some(s) => write!(f, "{s}s"),
            None => write!(f, "{}s", self.as_seconds_f64()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // rule: WIRE-20 — datetimes are written in UTC with +00:00, dates as YYYY-MM-DD
    #[test]
    fn the_hand_written_texts_are_the_formatted_ones() {
        let formatted = |t: Timestamp| {
            let (y, m, d) = t.date().ymd();
            let within = t.micros.rem_euclid(MICROS_PER_DAY);
            let (secs, frac) = (within / MICROS_PER_SECOND, within % MICROS_PER_SECOND);
            let f = if frac == 0 {
                String::new()
            } else {
                format!(".{frac:06}")
            };
            format!(
                "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}{f}+00:00",
                secs / 3600,
                secs / 60 % 60,
                secs % 60
            )
        };
        let (lo, hi) = (Timestamp::MIN.micros, Timestamp::MAX.micros);
        // The ends, and points spread over the domain with every kind of fraction.
        let step = (hi - lo) / 100_003;
        let points = (0..=100_003i64)
            .map(|i| lo + i * step)
            .chain([lo, lo + 1, hi - 1, hi, 0, -1, 1, 999_999, 1_000_000])
            .chain((0..7).map(|k| 1_767_225_600_000_000 + 10i64.pow(k)));
        for micros in points {
            let t = Timestamp::from_micros(micros.clamp(lo, hi)).unwrap();
            assert_eq!(t.to_string(), formatted(t));
            let (y, m, d) = t.date().ymd();
            assert_eq!(t.date().to_string(), format!("{y:04}-{m:02}-{d:02}"));
        }
    }

    fn ts(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn domain_ends_are_pythons() {
        // rule: DOMAIN-12
        assert_eq!(Date::MIN.to_string(), "0001-01-01");
        assert_eq!(Date::MAX.to_string(), "9999-12-31");
        assert_eq!(Timestamp::MIN.to_string(), "0001-01-01T00:00:00+00:00");
        assert_eq!(
            Timestamp::MAX.to_string(),
            "9999-12-31T23:59:59.999999+00:00"
        );
        assert!(Date::MAX.checked_add_days(1).is_none());
        assert!(Timestamp::MAX.successor().is_none());
        assert!(Timestamp::MIN.predecessor().is_none());
    }

    #[test]
    fn offsets_normalize_to_utc() {
        // rule: DOMAIN-08
        assert_eq!(
            ts("2026-10-18T02:00:00+02:00"),
            ts("2026-10-18T00:00:00+00:00")
        );
        assert_eq!(ts("2026-10-18T00:00:00Z"), ts("2026-10-17T19:30:00-04:30"));
        // A DST fold: 02:30 at +02:00 and 02:30 at +01:00 are an hour apart.
        let a = ts("2026-10-25T02:30:00+02:00");
        let b = ts("2026-10-25T02:30:00+01:00");
        assert_eq!(b.since(a).unwrap(), Duration::from_seconds(3600).unwrap());
    }

    #[test]
    fn naive_datetime_is_refused() {
        // rule: TRUST-09
        let err = "2026-10-18T00:00:00".parse::<Timestamp>().unwrap_err();
        assert!(err.to_string().contains("offset"), "{err}");
    }

    #[test]
    fn microsecond_resolution_and_display() {
        // rule: DOMAIN-09
        let t = ts("2026-10-18T00:00:00.5Z");
        assert_eq!(t.to_string(), "2026-10-18T00:00:00.500000+00:00");
        assert_eq!(t.successor().unwrap().as_micros() - t.as_micros(), 1);
        // rule: WIRE-13
        assert!("2026-10-18T00:00:00.1234567Z".parse::<Timestamp>().is_err());
    }

    #[test]
    fn grammar_is_strict() {
        // rule: WIRE-15
        for bad in [
            "2026-10-18t00:00:00Z",
            "2026-10-18T00:00:00z",
            "2026-10-18 00:00:00Z",
            "2026-10-18T00:00:60Z",
            "2026-10-18T00:00:00.Z",
            "2026-10-18T00:00:00+2400",
            "2026-02-30T00:00:00Z",
            "2026-10-18T00:00:00+24:00",
        ] {
            assert!(bad.parse::<Timestamp>().is_err(), "{bad} accepted");
        }
        assert_eq!(ts("2026-10-18T00:00:00-00:00"), ts("2026-10-18T00:00:00Z"));
    }

    #[test]
    fn overflow_after_conversion_is_refused() {
        // rule: WIRE-14
        assert!("0001-01-01T00:00:00+01:00".parse::<Timestamp>().is_err());
        assert!("9999-12-31T23:59:59-00:01".parse::<Timestamp>().is_err());
    }

    #[test]
    fn calendar_round_trips_every_day() {
        let mut d = Date::MIN;
        let mut n = 0;
        while let Some(next) = d.checked_add_days(1) {
            let (y, m, dd) = next.ymd();
            assert_eq!(Date::from_ymd(y, m, dd).unwrap(), next);
            assert!(next > d);
            d = next;
            n += 1;
        }
        assert_eq!(d, Date::MAX);
        assert_eq!(n, 3_652_058);
    }

    #[test]
    fn durations_refuse_rounding() {
        // rule: WIRE-12
        assert!(Duration::from_seconds_f64(-1.0).is_err());
        assert_eq!(
            Duration::from_seconds_f64(0.5).unwrap().as_micros(),
            500_000
        );
        assert!(Duration::from_seconds_f64(0.0000001).is_err());
        assert!(Duration::from_seconds_f64(1e20).is_err());
        assert_eq!(
            Duration::from_seconds_f64(604800.0).unwrap(),
            Duration::from_days(7).unwrap()
        );
    }
}
