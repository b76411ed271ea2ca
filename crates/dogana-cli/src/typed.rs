//! Option values typed by the contract (CLI-08): times, window bounds, checkpoints, positions,
//! and the durations of `--limit-days` and the TOML contract.

use dogana::{
    Checkpoint, Contract, Date, Duration, LogicalType, Position, Shape, Since, Timestamp, Value,
    Window,
};

use dogana_codes as codes;

use crate::refusal::{refuse, Refusal, Result};

/// A refusal of `option`'s value `text`, naming both.
fn bad(option: &str, text: &str, message: String) -> Refusal {
    Refusal::new(codes::OPTION_INVALID, message).at(option, text)
}

const MICROS_PER_SECOND: i128 = 1_000_000;
const MICROS_PER_DAY: i128 = 86_400 * MICROS_PER_SECOND;

/// Whether `text` looks like an RFC 3339 datetime that only lacks its offset.
fn is_naive(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() >= 19
        && matches!(b.get(10), Some(b'T' | b't' | b' '))
        && !text.ends_with(['Z', 'z'])
        && !b[19..].iter().any(|c| matches!(c, b'+' | b'-'))
}

/// A TIME argument: RFC 3339 with a UTC offset (CLI-10). A naive time is a declaration the
/// protocol refuses (TRUST-09), so it is a refusal (exit 1), not a usage error (CLI-14).
pub fn time(option: &str, text: &str) -> Result<Timestamp> {
    match text.parse::<Timestamp>() {
        Ok(t) => Ok(t),
        Err(_) if is_naive(text) => {
            // The example is the same time in UTC, spelled as the protocol reads it.
            let example = format!("{}T{}Z", &text[..10], &text[11..]);
            Err(bad(
                option,
                text,
                format!(
                    "{option} {text:?} has no UTC offset, so it names no instant (CLI-10); \
                     write it with Z or ±HH:MM, as in {example}"
                ),
            ))
        }
        Err(e) => Err(bad(
            option,
            text,
            format!("{option}: {e}; write a time like 2026-10-26T06:00:00Z"),
        )),
    }
}

/// A value of the given logical type, as a window bound.
pub fn value(option: &str, text: &str, ty: LogicalType, column: &str) -> Result<Value> {
    let wrong = |what: &str, example: &str| -> Result<Value> {
        Err(bad(
            option,
            text,
            format!(
                "{option} {text:?} is not {what}, and the window column {column:?} is {ty}; \
                 write {example}"
            ),
        ))
    };
    const RFC3339: &str = "RFC 3339 with Z or ±HH:MM, as in 2026-10-26T06:00:00Z";
    match ty {
        LogicalType::Int => match text.parse::<i64>() {
            Ok(i) => Ok(Value::Int(i)),
            Err(_) => wrong("an integer", "an integer such as 42"),
        },
        LogicalType::Str => Ok(Value::Str(text.to_owned())),
        LogicalType::Date => match text.parse::<Date>() {
            Ok(d) => Ok(Value::Date(d)),
            Err(_) => wrong("a date", "YYYY-MM-DD, as in 2026-10-26"),
        },
        LogicalType::Datetime => match text.parse::<Timestamp>() {
            Ok(t) => Ok(Value::Datetime(t)),
            Err(_) if is_naive(text) => wrong("a datetime with a UTC offset", RFC3339),
            Err(_) => wrong("a datetime", RFC3339),
        },
        LogicalType::Float | LogicalType::Bool => {
            refuse!(
                codes::OPTION_INVALID,
                "the window column {column:?} is {ty}, which cannot bound a window"
            )
        }
    }
}

/// `--window LOW HIGH`, typed by the contract's window column (CLI-08, CLI-23).
pub fn window(contract: &Contract, bounds: &[String], hint: &str) -> Result<Window> {
    let (Some(column), Some(ty)) = (contract.window_column(), contract.window_type()) else {
        refuse!(
            codes::OPTION_INVALID,
            "table {:?} has no window column, so there is no window to declare; {hint}",
            contract.table()
        )
    };
    let [low, high] = bounds else {
        refuse!(
            codes::OPTION_INVALID,
            "--window takes two values, LOW and HIGH"
        )
    };
    Ok(Window::new(
        value("--window LOW", low, ty, column)?,
        value("--window HIGH", high, ty, column)?,
    ))
}

/// `--since X`, typed by the shape's checkpoint (CLI-08).
pub fn since(shape_name: &str, shape: &Shape, text: &str) -> Result<Since> {
    match shape.checkpoint() {
        Checkpoint::None => refuse!(
            codes::OPTION_INVALID,
            "shape {shape_name:?} is a complete read, so it starts at no checkpoint; \
             drop --since, or name a shape of changes"
        ),
        Checkpoint::Timestamp => Ok(Since::Time(time("--since", text)?)),
        Checkpoint::Generation => Ok(Since::Position(Position::Token(text.to_owned()))),
        Checkpoint::Sequence => match text.parse::<i64>() {
            Ok(n) => Ok(Since::Position(Position::Sequence(n))),
            Err(_) => refuse!(
                codes::OPTION_INVALID,
                "--since {text:?} is not an integer, and shape {shape_name:?} reads a sequence; \
                 write the log position the read starts after, such as 41"
            ),
        },
    }
}

/// `--generation X`, typed by the table's kind of position (CLI-08, MAN-12).
pub fn generation(contract: &Contract, text: &str) -> Result<Position> {
    if contract.positions_are_integers() {
        match text.parse::<i64>() {
            Ok(n) => Ok(Position::Sequence(n)),
            Err(_) => refuse!(
                codes::OPTION_INVALID,
                "--generation {text:?} is not an integer, and table {:?} has sequence shapes, \
                 so its positions are integers (MAN-12); write the log position the read ends at",
                contract.table()
            ),
        }
    } else {
        Ok(Position::Token(text.to_owned()))
    }
}

/// A nonnegative decimal number times `unit` microseconds, exactly; refused when it is not a
/// whole number of microseconds.
fn decimal_micros(text: &str, unit: i128) -> std::result::Result<i128, String> {
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !(digits(int) || int.is_empty() && digits(frac)) || !(frac.is_empty() || digits(frac)) {
        return Err(format!("{text:?} is not a nonnegative decimal number"));
    }
    if int.len() + frac.len() > 30 {
        return Err(format!("{text:?} has too many digits"));
    }
    let scale = 10i128.pow(frac.len() as u32);
    let mantissa: i128 = format!("{int}{frac}").parse().map_err(|e| format!("{e}"))?;
    let micros = mantissa
        .checked_mul(unit)
        .ok_or_else(|| format!("{text:?} is too large"))?;
    if micros % scale != 0 {
        return Err(format!("{text:?} is not a whole number of microseconds"));
    }
    Ok(micros / scale)
}

/// `--limit-days DAYS`: a nonnegative number of days, maybe fractional (CLI-22). Rounded to the
/// nearest microsecond; a limit beyond the largest duration expires nothing, like
/// [`Duration::MAX`]. A bad value is a usage error (exit 2): it does not depend on any document.
pub fn limit_days(text: &str) -> std::result::Result<Duration, String> {
    let bad = || format!("{text:?} is not a nonnegative number of days, such as 2 or 1.5");
    let days: f64 = text.trim().parse().map_err(|_| bad())?;
    if days.is_nan() || days < 0.0 {
        return Err(bad());
    }
    // Exact when the decimal is (most limits: "2", "1.5", "0.25"); else the nearest µs.
    let micros = match decimal_micros(text.trim(), MICROS_PER_DAY) {
        Ok(m) => m,
        Err(_) if days.is_finite() => (days * MICROS_PER_DAY as f64).round() as i128,
        Err(_) => Duration::MAX.as_micros(),
    };
    if micros >= Duration::MAX.as_micros() {
        return Ok(Duration::MAX);
    }
    Duration::from_micros(micros)
        .or_else(|_| Duration::from_micros(micros / MICROS_PER_SECOND * MICROS_PER_SECOND))
        .map_err(|e| format!("{}: {e}", bad()))
}

/// A duration in the TOML contract: a number of seconds, or a string of one or more
/// `<number><unit>` parts with units `d`, `h`, `m`, `s` (`"3d"`, `"12h"`, `"1d12h"`, `"1.5h"`,
/// `"90s"`); a bare number in a string is seconds. Exact, never rounded.
pub fn duration(text: &str) -> std::result::Result<Duration, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("an empty duration".into());
    }
    if text.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        let micros = decimal_micros(text, MICROS_PER_SECOND)?;
        return Duration::from_micros(micros).map_err(|e| e.to_string());
    }
    let mut total: i128 = 0;
    let mut rest = text;
    while !rest.is_empty() {
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(|| format!("{text:?}: {rest:?} has no unit (d, h, m or s)"))?;
        let (number, tail) = rest.split_at(end);
        let unit_char = tail.chars().next().expect("end is inside rest");
        let unit = match unit_char {
            'd' => MICROS_PER_DAY,
            'h' => 3600 * MICROS_PER_SECOND,
            'm' => 60 * MICROS_PER_SECOND,
            's' => MICROS_PER_SECOND,
            other => {
                return Err(format!(
                    "{text:?}: unknown unit {other:?}; use d, h, m or s, as in \"3d\" or \"1d12h\""
                ))
            }
        };
        if number.is_empty() {
            return Err(format!("{text:?}: a unit needs a number before it"));
        }
        total = total
            .checked_add(decimal_micros(number, unit)?)
            .ok_or_else(|| format!("{text:?} is too large"))?;
        rest = &tail[unit_char.len_utf8()..];
    }
    Duration::from_micros(total).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        let s = |t: &str| duration(t).map(|d| d.as_micros() / 1_000_000);
        assert_eq!(s("3d"), Ok(3 * 86_400));
        assert_eq!(s("12h"), Ok(43_200));
        assert_eq!(s("1d12h"), Ok(129_600));
        assert_eq!(s("90s"), Ok(90));
        assert_eq!(s("90m"), Ok(5_400));
        assert_eq!(s("1.5h"), Ok(5_400));
        assert_eq!(s("604800"), Ok(604_800));
        assert_eq!(duration("0.5s").unwrap().as_micros(), 500_000);
        assert!(duration("3w").is_err());
        assert!(duration("d").is_err());
        assert!(duration("3").is_ok());
        assert!(duration("-3d").is_err());
        assert!(duration("0.0000001s").is_err());
    }

    #[test]
    fn limits() {
        // rule: CLI-22
        assert_eq!(limit_days("2").unwrap(), Duration::from_days(2).unwrap());
        assert_eq!(limit_days("1.5").unwrap().as_micros(), 129_600_000_000);
        assert_eq!(limit_days("0").unwrap(), Duration::ZERO);
        assert_eq!(limit_days("1e12").unwrap(), Duration::MAX);
        assert!(limit_days("-1").is_err());
        assert!(limit_days("two").is_err());
        assert!(limit_days("nan").is_err());
        assert_eq!(limit_days("inf").unwrap(), Duration::MAX);
    }

    #[test]
    fn naive_times_are_named() {
        // rule: CLI-10
        assert!(is_naive("2026-10-26T06:00:00"));
        assert!(is_naive("2026-10-26T06:00:00.5"));
        assert!(!is_naive("2026-10-26T06:00:00Z"));
        assert!(!is_naive("2026-10-26T06:00:00-02:00"));
        assert!(!is_naive("2026-10-26"));
        let e = time("--at", "2026-10-26T06:00:00").unwrap_err();
        assert!(e.to_string().contains("has no UTC offset"), "{e}");
        let e = time("--at", "2026-10-26 06:00:00").unwrap_err();
        assert!(e.to_string().ends_with("as in 2026-10-26T06:00:00Z"), "{e}");
    }
}
