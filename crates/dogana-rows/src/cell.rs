//! Typed cells and the parsers of CSV text into them.

use std::borrow::Cow;
use std::fmt;

use dogana::{Date, LogicalType, Timestamp};

/// One value of a row.
///
/// The bound columns (key, window, cursor, deleted) are parsed as the contract's `types` say.
/// Other columns are given as the file has them: CSV text as [`Cell::Str`] (or
/// [`Cell::Null`] when empty), NDJSON values by their JSON type, Parquet values by their
/// column type.
///
/// ```
/// use dogana::LogicalType;
/// use dogana_rows::Cell;
/// assert_eq!(Cell::parse("42", LogicalType::Int), Ok(Cell::Int(42)));
/// assert_eq!(Cell::parse("", LogicalType::Int), Ok(Cell::Null));
/// assert!(Cell::parse("2026-10-26T00:00:00", LogicalType::Datetime).is_err()); // naive: refused
/// assert_eq!(Cell::parse("1", LogicalType::Bool), Ok(Cell::Bool(true)));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Cell<'a> {
    /// No value: an empty CSV field, a JSON `null` or a missing NDJSON key.
    Null,
    /// An integer.
    Int(i64),
    /// A binary64 number.
    Float(f64),
    /// A string (borrowed from the record when it can be).
    Str(Cow<'a, str>),
    /// A boolean.
    Bool(bool),
    /// A calendar date.
    Date(Date),
    /// A UTC instant (an offset in the file is normalized to UTC).
    Datetime(Timestamp),
}

impl Cell<'_> {
    /// Whether the cell is [`Cell::Null`].
    pub fn is_null(&self) -> bool {
        matches!(self, Cell::Null)
    }

    /// The cell with its string owned.
    pub fn into_owned(self) -> Cell<'static> {
        match self {
            Cell::Null => Cell::Null,
            Cell::Int(i) => Cell::Int(i),
            Cell::Float(f) => Cell::Float(f),
            Cell::Str(s) => Cell::Str(Cow::Owned(s.into_owned())),
            Cell::Bool(b) => Cell::Bool(b),
            Cell::Date(d) => Cell::Date(d),
            Cell::Datetime(t) => Cell::Datetime(t),
        }
    }

    /// Parses CSV text as a value of `ty`, the way bound columns are parsed: an empty text is
    /// null; `int` is `-?[0-9]+` within i64; `float` is Rust's (and Python's) decimal or
    /// exponent notation of a finite number (`nan`, `inf` and numbers beyond binary64 are
    /// refused, as [`ColumnType::check`](crate::ColumnType::check) refuses them); `bool` is `true`/`false` (also `True`/`False`,
    /// `TRUE`/`FALSE`), `1`/`0` or `t`/`f`; `date` is `YYYY-MM-DD`; `datetime` is RFC 3339 with
    /// `Z` or a `±HH:MM` offset, `T` or a space between date and time, at most six fractional
    /// digits. A datetime without an offset is refused (CHECK-17).
    pub fn parse(text: &str, ty: LogicalType) -> Result<Cell<'_>, String> {
        Ok(match parse_typed(text.as_bytes(), ty)? {
            Typed::Text => Cell::Str(Cow::Borrowed(text)),
            t => t.to_cell(""),
        })
    }
}

impl fmt::Display for Cell<'_> {
    /// Values as the protocol writes them; strings quoted with Rust's escapes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cell::Null => f.write_str("null"),
            Cell::Int(i) => write!(f, "{i}"),
            Cell::Float(x) => write!(f, "{x}"),
            Cell::Str(s) => write!(f, "{s:?}"),
            Cell::Bool(b) => write!(f, "{b}"),
            Cell::Date(d) => write!(f, "{d}"),
            Cell::Datetime(t) => write!(f, "{t}"),
        }
    }
}

/// A parsed bound value without a lifetime: strings stay in the record ([`Typed::Text`]), so
/// one `Vec<Typed>` serves every row without allocating.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Typed {
    Null,
    Int(i64),
    Float(f64),
    Bool(bool),
    Date(Date),
    Datetime(Timestamp),
    /// A string: the record's text for this column.
    Text,
    /// A bound value that did not parse as its type.
    Bad,
}

impl Typed {
    pub(crate) fn to_cell(self, text: &str) -> Cell<'_> {
        match self {
            Typed::Null | Typed::Bad => Cell::Null,
            Typed::Int(i) => Cell::Int(i),
            Typed::Float(x) => Cell::Float(x),
            Typed::Bool(b) => Cell::Bool(b),
            Typed::Date(d) => Cell::Date(d),
            Typed::Datetime(t) => Cell::Datetime(t),
            Typed::Text => Cell::Str(Cow::Borrowed(text)),
        }
    }
}

/// Shows a field in an error message: quoted, escaped, and cut after 40 characters with its
/// length ([`dogana::quoted_bytes`]), whatever its size.
pub(crate) fn show(bytes: &[u8]) -> String {
    dogana::quoted_bytes(bytes, 40)
}

/// Up to eight ASCII digits into their value, all at once; None if one is not a digit.
#[inline]
fn digits8(d: &[u8]) -> Option<u64> {
    // the digits in the high bytes, '0's below, built in a register (no store to reload)
    let mut v: u64 = 0x3030_3030_3030_3030;
    for &c in d {
        v = (v >> 8) | (u64::from(c) << 56);
    }
    swar8(v)
}

/// Eight ASCII digits in a little-endian word, the first in the lowest byte, into their value.
#[inline(always)]
fn swar8(v: u64) -> Option<u64> {
    // every byte in 0x30..=0x39: high nibble 3, and still so after adding 6
    if (v & 0xf0f0_f0f0_f0f0_f0f0) != 0x3030_3030_3030_3030
        || (v.wrapping_add(0x0606_0606_0606_0606) & 0xf0f0_f0f0_f0f0_f0f0) != 0x3030_3030_3030_3030
    {
        return None;
    }
    let v = (v & 0x0f0f_0f0f_0f0f_0f0f).wrapping_mul(2561) >> 8;
    let v = (v & 0x00ff_00ff_00ff_00ff).wrapping_mul(6_553_601) >> 16;
    Some((v & 0x0000_ffff_0000_ffff).wrapping_mul(42_949_672_960_001) >> 32)
}

/// [`parse_int`] of `data[a..b]`, reading the field with one 8-byte load when the buffer has
/// eight bytes from `a` on.
#[inline(always)]
pub(crate) fn parse_int_in(data: &[u8], a: usize, b: usize) -> Option<i64> {
    let n = b - a;
    if (1..=8).contains(&n) {
        if let Some(w) = data.get(a..a + 8) {
            let w = u64::from_le_bytes(w.try_into().expect("8 bytes"));
            // the field's n bytes up to the high end, '0's below
            let v = (w << (8 * (8 - n)))
                | 0x3030_3030_3030_3030u64
                    .checked_shr(8 * n as u32)
                    .unwrap_or(0);
            if let Some(v) = swar8(v) {
                return Some(v as i64);
            }
        }
    }
    parse_int(&data[a..b])
}

/// `-?[0-9]+` into an i64, by hand (the standard parser also takes `+` and is slower).
#[inline]
pub(crate) fn parse_int(b: &[u8]) -> Option<i64> {
    let (neg, digits) = match b.first()? {
        b'-' => (true, &b[1..]),
        _ => (false, b),
    };
    let v = match digits.len() {
        1..=8 => digits8(digits)?,
        9..=16 => {
            let split = digits.len() - 8;
            digits8(&digits[..split])? * 100_000_000 + digits8(&digits[split..])?
        }
        17..=19 => {
            let (a, rest) = digits.split_at(digits.len() - 16);
            let (b, c) = rest.split_at(8);
            // 19 digits never overflow u64
            (digits8(a)? * 100_000_000 + digits8(b)?) * 100_000_000 + digits8(c)?
        }
        _ => return None,
    };
    if neg {
        if v <= i64::MAX as u64 + 1 {
            Some((v as i64).wrapping_neg())
        } else {
            None
        }
    } else {
        i64::try_from(v).ok()
    }
}

/// A digit's value, or 10 or more for any other byte.
#[inline(always)]
fn dig(c: u8) -> u32 {
    u32::from(c.wrapping_sub(b'0'))
}

/// The ASCII digits of a little-endian word, in the bytes `digits` marks (0xff), as their
/// values, every other byte 0; None if one of those bytes is not a digit.
#[inline(always)]
fn digit_bytes(w: u64, digits: u64) -> Option<u64> {
    let d = (w ^ 0x3030_3030_3030_3030) & digits;
    // a digit is now 0..=9 and adding 0x76 leaves its high bit clear; any other byte has it
    // set, before or after (no byte carries into the next: 0x7f + 0x76 < 0x100)
    let over = (((d & 0x7f7f_7f7f_7f7f_7f7f) + 0x7676_7676_7676_7676) | d) & 0x8080_8080_8080_8080;
    (over & digits == 0).then_some(d)
}

/// Byte k of the result is `10 * d[k] + d[k + 1]`, for digit values `d` (at most 99: no carry).
#[inline(always)]
fn digit_pairs(d: u64) -> u64 {
    d * 10 + (d >> 8)
}

/// `YYYY-MM-` in a little-endian word: (year, month), unchecked beyond being digits.
#[inline(always)]
fn year_month(w: u64) -> Option<(u32, u32)> {
    // the dashes in bytes 4 and 7, digits in 0 to 3, 5 and 6
    if w & 0xff00_00ff_0000_0000 != 0x2d00_002d_0000_0000 {
        return None;
    }
    let p = digit_pairs(digit_bytes(w, 0x00ff_ff00_ffff_ffff)?);
    let year = (p & 0xff) * 100 + ((p >> 16) & 0xff);
    Some((year as u32, ((p >> 40) & 0xff) as u32))
}

/// Two ASCII digits' value, or None.
#[inline(always)]
fn two_digits(a: u8, b: u8) -> Option<u32> {
    let (a, b) = (dig(a), dig(b));
    (a < 10 && b < 10).then_some(a * 10 + b)
}

/// `YYYY-MM-DD`, exactly ten bytes.
#[inline]
pub(crate) fn parse_date(b: &[u8]) -> Option<Date> {
    let s: &[u8; 10] = b.try_into().ok()?;
    let (year, month) = year_month(u64::from_le_bytes(s[..8].try_into().ok()?))?;
    let day = two_digits(s[8], s[9])?;
    Date::from_days_since_epoch(day_number(year, month, day)?)
}

/// The day number (days from 1970-01-01) of a valid date of years 1 to 9999, else None.
#[inline(always)]
fn day_number(year: u32, month: u32, day: u32) -> Option<i64> {
    let (first, len) = month_start(year, month)?;
    (day >= 1 && day <= len).then_some(first + i64::from(day) - 1)
}

/// Years whose months [`MONTHS`] holds: 1900 to 2155.
const TABLE_FROM: u32 = 1900;
const TABLE_YEARS: u32 = 256;

/// For each month of the table's years: the day number of its first day, plus 2^20 (so it is
/// positive), shifted left by 5, and its length in the low 5 bits. One lookup replaces the
/// calendar arithmetic for the dates deliveries hold.
static MONTHS: [u32; (TABLE_YEARS * 12) as usize] = {
    let mut table = [0u32; (TABLE_YEARS * 12) as usize];
    let mut i = 0;
    while i < table.len() {
        let (year, month) = (TABLE_FROM + i as u32 / 12, i as u32 % 12 + 1);
        let first = days_from_civil(year as i64, month, 1) + (1 << 20);
        table[i] = ((first as u32) << 5) | month_days(year, month);
        i += 1;
    }
    table
};

/// The day number of a month's first day and the month's length; None for a month that is not
/// 1 to 12 or a year that is not 1 to 9999.
#[inline(always)]
fn month_start(year: u32, month: u32) -> Option<(i64, u32)> {
    if !(1..=12).contains(&month) {
        return None;
    }
    let at = year.wrapping_sub(TABLE_FROM);
    if at < TABLE_YEARS {
        let entry = MONTHS[(at * 12 + month - 1) as usize];
        return Some((i64::from(entry >> 5) - (1 << 20), entry & 31));
    }
    if year == 0 || year > 9999 {
        return None;
    }
    Some((
        days_from_civil(i64::from(year), month, 1),
        month_days(year, month),
    ))
}

/// The days in a month.
const fn month_days(year: u32, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        _ => 28,
    }
}

/// Days from 1970-01-01 of a date of years 1 to 9999 (Howard Hinnant's algorithm, as the
/// core's calendar, in unsigned arithmetic: the year before March of year 1 is 0, never
/// negative, so the divisions by constants compile to multiplications).
#[inline(always)]
const fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = year as u32 - (month <= 2) as u32;
    let era = y / 400;
    let yoe = y - era * 400;
    let doy = (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era as i64 * 146_097 + doe as i64 - 719_468
}

/// RFC 3339 with an offset, by hand for the common forms (`...:SS` then `Z`, `±HH:MM`, or a
/// fraction of up to six digits then one of them). Returns `Err(true)` when the text has no
/// offset, `Err(false)` for any other malformation.
#[inline]
pub(crate) fn parse_datetime(b: &[u8]) -> Result<Timestamp, bool> {
    let Some(s) = b.first_chunk::<19>() else {
        return Err(false);
    };
    let word = |at: usize| u64::from_le_bytes(s[at..at + 8].try_into().expect("8 bytes"));
    let (year, month) = year_month(word(0)).ok_or(false)?;
    // `DDTHH:MM`: digits in bytes 0, 1, 3, 4, 6 and 7, the colon in 5, T or a space in 2
    let w = word(8);
    let sep = (w >> 16) & 0xff;
    if (w >> 40) & 0xff != u64::from(b':') || !(sep == u64::from(b'T') || sep == u64::from(b' ')) {
        return Err(false);
    }
    let p = digit_pairs(digit_bytes(w, 0xffff_00ff_ff00_ffff).ok_or(false)?);
    let (day, hh, mm) = (
        (p & 0xff) as u32,
        ((p >> 24) & 0xff) as u32,
        ((p >> 48) & 0xff) as u32,
    );
    if s[16] != b':' {
        return Err(false);
    }
    let ss = two_digits(s[17], s[18]).ok_or(false)?;
    let days = day_number(year, month, day).ok_or(false)?;
    if hh > 23 || mm > 59 || ss > 59 {
        return Err(false);
    }
    let mut at = 19;
    let mut frac: i64 = 0;
    if b.get(at) == Some(&b'.') {
        at += 1;
        let start = at;
        while at < b.len() && b[at].is_ascii_digit() {
            frac = frac * 10 + i64::from(b[at] - b'0');
            at += 1;
        }
        let n = at - start;
        if n == 0 || n > 6 {
            return Err(false);
        }
        frac *= 10i64.pow((6 - n) as u32);
    }
    let offset_minutes: i64 = match b.get(at) {
        Some(b'Z') if b.len() == at + 1 => 0,
        Some(&sign @ (b'+' | b'-')) if b.len() == at + 6 && b[at + 3] == b':' => {
            let oh = two_digits(b[at + 1], b[at + 2]).ok_or(false)?;
            let om = two_digits(b[at + 4], b[at + 5]).ok_or(false)?;
            if oh > 23 || om > 59 {
                return Err(false);
            }
            let total = i64::from(oh * 60 + om);
            if sign == b'-' {
                -total
            } else {
                total
            }
        }
        None => return Err(true),
        _ => return Err(false),
    };
    let local = days * 86_400_000_000
        + (i64::from(hh) * 3600 + i64::from(mm) * 60 + i64::from(ss)) * 1_000_000
        + frac;
    Timestamp::from_micros(local - offset_minutes * 60_000_000).ok_or(false)
}

/// The spellings of a bool: see [`Cell::parse`].
#[inline]
pub(crate) fn parse_bool(b: &[u8]) -> Option<bool> {
    match b {
        b"true" | b"True" | b"TRUE" | b"1" | b"t" => Some(true),
        b"false" | b"False" | b"FALSE" | b"0" | b"f" => Some(false),
        _ => None,
    }
}

/// [`parse_typed`] of the field `data[a..b]`, whose buffer may be read past the field.
#[inline(always)]
pub(crate) fn parse_typed_in(
    data: &[u8],
    a: usize,
    b: usize,
    ty: LogicalType,
) -> Result<Typed, String> {
    match parse_fast(data, a, b, ty) {
        // parsed again, for the reason
        Typed::Bad => parse_typed(&data[a..b], ty),
        t => Ok(t),
    }
}

/// [`parse_typed_in`] without the reason: [`Typed::Bad`] for a value that does not parse.
/// The hot path of the CSV reader.
#[inline(always)]
pub(crate) fn parse_fast(data: &[u8], a: usize, b: usize, ty: LogicalType) -> Typed {
    if a == b {
        return Typed::Null;
    }
    let field = &data[a..b];
    let parsed = match ty {
        LogicalType::Int => parse_int_in(data, a, b).map(Typed::Int),
        LogicalType::Date => parse_date(field).map(Typed::Date),
        LogicalType::Datetime => parse_datetime(field).ok().map(Typed::Datetime),
        LogicalType::Bool => parse_bool(field).map(Typed::Bool),
        _ => parse_typed(field, ty).ok(),
    };
    parsed.unwrap_or(Typed::Bad)
}

/// Parses one CSV field as `ty`; empty is null. The error says what was expected.
#[inline]
pub(crate) fn parse_typed(b: &[u8], ty: LogicalType) -> Result<Typed, String> {
    if b.is_empty() {
        return Ok(Typed::Null);
    }
    let bad = |what: &str| format!("{} is not {what}", show(b));
    match ty {
        LogicalType::Int => parse_int(b).map(Typed::Int).ok_or_else(|| {
            let digits = b.strip_prefix(b"-").unwrap_or(b);
            let significant = digits.iter().skip_while(|&&d| d == b'0').count();
            if significant >= 19 && digits.iter().all(u8::is_ascii_digit) {
                crate::ndjson::int_out_of_range(b)
            } else {
                bad("an int (-?[0-9]+ within 64 bits)")
            }
        }),
        LogicalType::Date => parse_date(b)
            .map(Typed::Date)
            .ok_or_else(|| bad("a date (YYYY-MM-DD)")),
        LogicalType::Datetime => parse_datetime(b).map(Typed::Datetime).map_err(|naive| {
            if naive {
                format!(
                    "{} has no UTC offset; a datetime in a read carries Z or ±HH:MM (CHECK-17)",
                    show(b)
                )
            } else {
                bad("an RFC 3339 datetime with a UTC offset")
            }
        }),
        LogicalType::Bool => parse_bool(b)
            .map(Typed::Bool)
            .ok_or_else(|| bad("a bool (true/false, 1/0 or t/f)")),
        LogicalType::Float => match std::str::from_utf8(b).ok().map(str::parse::<f64>) {
            Some(Ok(x)) if x.is_finite() => Ok(Typed::Float(x)),
            Some(Ok(_)) => Err(bad(
                "a finite number; a float is never a NaN or an infinity",
            )),
            _ => Err(bad("a float")),
        },
        LogicalType::Str => match std::str::from_utf8(b) {
            Ok(_) => Ok(Typed::Text),
            Err(_) => Err(format!("{} is not valid UTF-8", show(b))),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ints() {
        assert_eq!(parse_int(b"0"), Some(0));
        assert_eq!(parse_int(b"-42"), Some(-42));
        assert_eq!(parse_int(b"007"), Some(7));
        assert_eq!(parse_int(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_int(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_int(b"9223372036854775808"), None);
        assert_eq!(parse_int(b"99999999999999999999"), None);
        assert_eq!(
            parse_int(b"1234567890123456789"),
            Some(1_234_567_890_123_456_789)
        );
        assert_eq!(parse_int(b"-000000000000000000001"), None);
        assert_eq!(parse_int(b"12345678"), Some(12_345_678));
        assert_eq!(parse_int(b"123456789"), Some(123_456_789));
        assert_eq!(parse_int(b"1234567890123456"), Some(1_234_567_890_123_456));
        assert_eq!(
            parse_int(b"12345678901234567"),
            Some(12_345_678_901_234_567)
        );
        for n in [
            0i64,
            9,
            10,
            99_999_999,
            100_000_000,
            -7,
            i64::MAX,
            i64::MIN + 1,
            4_294_967_296,
        ] {
            assert_eq!(parse_int(n.to_string().as_bytes()), Some(n));
        }
        for bad in [
            &b"12a4"[..],
            b"1/",
            b"1:",
            b"12345678/",
            b"9223372036854775808",
        ] {
            assert_eq!(parse_int(bad), None, "{bad:?}");
        }
        for bad in [&b""[..], b"-", b"+1", b"1.0", b" 1", b"1e3", b"0x1"] {
            assert_eq!(parse_int(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn ints_in_a_buffer() {
        let data = b"1234567,-5,12345678,123456789,x1,,0";
        let mut at = 0;
        let want = [
            Some(1_234_567),
            Some(-5),
            Some(12_345_678),
            Some(123_456_789),
            None,
            None,
            Some(0),
        ];
        for (field, want) in data.split(|&c| c == b',').zip(want) {
            let (a, b) = (at, at + field.len());
            assert_eq!(
                parse_int_in(data, a, b).filter(|_| a < b),
                want,
                "{:?}",
                &data[a..b]
            );
            assert_eq!(parse_int(field), want);
            at = b + 1;
        }
    }

    #[test]
    fn dates() {
        assert_eq!(parse_date(b"2026-10-26"), "2026-10-26".parse().ok());
        assert_eq!(parse_date(b"2024-02-29"), "2024-02-29".parse().ok());
        let mut d = Date::MIN;
        while let Some(next) = d.checked_add_days(7) {
            assert_eq!(parse_date(d.to_string().as_bytes()), Some(d));
            d = next;
        }
        // every day around both ends of the month table, and the domain's ends
        for (from, to) in [
            ("1898-12-01", "1901-03-01"),
            ("2154-12-01", "2157-03-01"),
            ("0001-01-01", "0001-03-01"),
            ("9999-11-01", "9999-12-31"),
        ] {
            let (mut d, to): (Date, Date) = (from.parse().unwrap(), to.parse().unwrap());
            while d <= to {
                assert_eq!(parse_date(d.to_string().as_bytes()), Some(d), "{d}");
                let t = format!("{d}T12:00:00Z");
                assert_eq!(parse_datetime(t.as_bytes()).ok(), t.parse().ok(), "{t}");
                match d.checked_add_days(1) {
                    Some(next) => d = next,
                    None => break,
                }
            }
        }
        for bad in [
            &b"2026-02-29"[..],
            b"2026-1-26",
            b"2026-10-26T",
            b"0000-01-01",
            b"2026/10/26",
        ] {
            assert_eq!(parse_date(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn datetimes_agree_with_the_core() {
        // rule: CHECK-17
        for ok in [
            "2026-10-26T06:00:00Z",
            "2026-10-26T06:00:00+02:00",
            "2026-10-26T06:00:00.5-04:30",
            "2026-10-26T06:00:00.123456Z",
            "0001-01-01T00:00:00Z",
            "9999-12-31T23:59:59.999999Z",
            "2024-02-29T23:59:59+14:00",
        ] {
            let core: Timestamp = ok.parse().unwrap();
            assert_eq!(parse_datetime(ok.as_bytes()), Ok(core), "{ok}");
        }
        assert_eq!(
            parse_datetime(b"2026-10-26 06:00:00Z"),
            Ok("2026-10-26T06:00:00Z".parse().unwrap())
        );
        assert_eq!(parse_datetime(b"2026-10-26T06:00:00"), Err(true));
        assert_eq!(parse_datetime(b"2026-10-26T06:00:00.25"), Err(true));
        for bad in [
            "2026-10-26T06:00:00z",
            "2026-10-26T24:00:00Z",
            "2026-10-26T06:00:60Z",
            "2026-10-26T06:00:00.1234567Z",
            "2026-10-26T06:00:00.Z",
            "2026-10-26T06:00:00+0200",
            "2026-10-26T06:00:00+24:00",
            "2026-02-30T06:00:00Z",
            "0001-01-01T00:00:00+01:00",
            "2026-10-26",
        ] {
            assert_eq!(parse_datetime(bad.as_bytes()), Err(false), "{bad}");
        }
    }

    #[test]
    fn one_wrong_byte_is_refused_as_the_core_refuses_it() {
        // rule: CHECK-17
        // every byte of a date and a datetime replaced by every other byte: the word-at-a-time
        // parsers accept exactly what the core's parsers accept, with the same value
        for good in ["2024-02-29", "1999-12-31"] {
            for i in 0..good.len() {
                for c in 0..=255u8 {
                    let mut v = good.as_bytes().to_vec();
                    v[i] = c;
                    let core = std::str::from_utf8(&v)
                        .ok()
                        .and_then(|t| t.parse::<Date>().ok());
                    assert_eq!(parse_date(&v), core, "{v:?}");
                }
            }
        }
        for good in ["2024-02-29T23:59:58Z", "2026-10-26T06:07:08.5+02:30"] {
            for i in 0..good.len() {
                for c in 0..=255u8 {
                    let mut v = good.as_bytes().to_vec();
                    v[i] = c;
                    let Ok(text) = std::str::from_utf8(&v) else {
                        assert!(parse_datetime(&v).is_err(), "{v:?}");
                        continue;
                    };
                    // the core takes only T; a space is the reader's own spelling
                    let core = text.replacen(' ', "T", 1).parse::<Timestamp>().ok();
                    assert_eq!(parse_datetime(&v).ok(), core, "{text:?}");
                }
            }
        }
    }

    #[test]
    fn bools() {
        for t in ["true", "True", "TRUE", "1", "t"] {
            assert_eq!(parse_bool(t.as_bytes()), Some(true));
        }
        for f in ["false", "False", "FALSE", "0", "f"] {
            assert_eq!(parse_bool(f.as_bytes()), Some(false));
        }
        for bad in ["yes", "no", "2", " true", "tRUE", "T", "F"] {
            assert_eq!(parse_bool(bad.as_bytes()), None, "{bad}");
        }
    }
}
