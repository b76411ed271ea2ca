//! The type a receiver declares for a column, as its data contract writes it (CONTRACT-16,
//! CONTRACT-19): one of the six logical types or `decimal(p,s)`, parsed once and refused when
//! mistyped, and the check of one value against it.

use std::fmt;
use std::str::FromStr;

use dogana::{quoted, LogicalType, NAME_MAX, SHOWN};

use crate::cell::{parse_bool, parse_date, parse_datetime, parse_int, Cell};

/// The largest precision of `decimal(p,s)`: 38 digits, as SQL Server, Snowflake, BigQuery's
/// BIGNUMERIC-free NUMERIC and Parquet's 16-byte decimals allow.
pub const DECIMAL_MAX_PRECISION: u8 = 38;

/// A column's type in the receiver's column list: one of the six logical types, or an exact
/// decimal of `precision` digits, `scale` of them after the point (1 <= p <= 38, 0 <= s <= p).
///
/// It is parsed from the spelling the column hash uses (CONTRACT-16), exactly: `int`, `float`,
/// `str`, `bool`, `date`, `datetime`, `decimal(12,2)` (no spaces, no leading zeros), and
/// displays as that spelling again. A mistyped type is refused with a message naming the value
/// and the forms allowed:
///
/// ```
/// use dogana_rows::ColumnType;
/// let t: ColumnType = "decimal(12,2)".parse().unwrap();
/// assert_eq!(t, ColumnType::Decimal { precision: 12, scale: 2 });
/// assert_eq!(t.to_string(), "decimal(12,2)");
/// let e = "flaot".parse::<ColumnType>().unwrap_err();
/// assert_eq!(
///     e.to_string(),
///     "\"flaot\" is not a column type: a column type is int, float, str, bool, date, datetime \
///      or decimal(p,s) with 1 <= p <= 38 and 0 <= s <= p, as in decimal(12,2) (CONTRACT-16)"
/// );
/// assert!("decimal(2,5)".parse::<ColumnType>().unwrap_err().to_string()
///     .contains("its scale 5 is more than its precision 2"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ColumnType {
    /// A signed 64-bit integer.
    Int,
    /// A finite binary64 number.
    Float,
    /// A UTF-8 string.
    Str,
    /// A boolean.
    Bool,
    /// A calendar date.
    Date,
    /// An instant with a UTC offset.
    Datetime,
    /// An exact decimal: at most `precision` digits, `scale` of them after the point.
    Decimal {
        /// Digits in all, 1 to 38.
        precision: u8,
        /// Digits after the point, 0 to `precision`.
        scale: u8,
    },
}

/// Why a text is not a [`ColumnType`]: the message names the text and the forms allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnTypeError(String);

impl fmt::Display for ColumnTypeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ColumnTypeError {}

/// The forms a column type takes, for messages.
const FORMS: &str = "a column type is int, float, str, bool, date, datetime or decimal(p,s) \
                     with 1 <= p <= 38 and 0 <= s <= p, as in decimal(12,2) (CONTRACT-16)";

/// Digits without a sign or a leading zero (but `0` itself), as a number up to 255.
fn small_number(text: &str) -> Option<u8> {
    let ok = !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'));
    ok.then(|| text.parse().ok()).flatten()
}

impl FromStr for ColumnType {
    type Err = ColumnTypeError;

    fn from_str(text: &str) -> Result<ColumnType, ColumnTypeError> {
        if let Some(t) = LogicalType::from_name(text) {
            return Ok(ColumnType::from(t));
        }
        let bad = |why: &str| {
            ColumnTypeError(format!(
                "{} is not a column type{why}: {FORMS}",
                quoted(text, SHOWN)
            ))
        };
        let Some(inner) = text
            .strip_prefix("decimal(")
            .and_then(|r| r.strip_suffix(')'))
        else {
            return Err(bad(""));
        };
        let Some((p, s)) = inner.split_once(',') else {
            return Err(bad(""));
        };
        let (Some(precision), Some(scale)) = (small_number(p), small_number(s)) else {
            return Err(bad(
                ": its precision and scale are numbers without spaces, signs or leading zeros",
            ));
        };
        if !(1..=DECIMAL_MAX_PRECISION).contains(&precision) {
            return Err(bad(&format!(
                ": its precision {precision} is not between 1 and {DECIMAL_MAX_PRECISION}"
            )));
        }
        if scale > precision {
            return Err(bad(&format!(
                ": its scale {scale} is more than its precision {precision}"
            )));
        }
        Ok(ColumnType::Decimal { precision, scale })
    }
}

impl fmt::Display for ColumnType {
    /// The spelling the column hash takes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ColumnType::Decimal { precision, scale } => write!(f, "decimal({precision},{scale})"),
            t => f.write_str(t.logical().map_or("", LogicalType::name)),
        }
    }
}

impl From<LogicalType> for ColumnType {
    fn from(t: LogicalType) -> ColumnType {
        match t {
            LogicalType::Int => ColumnType::Int,
            LogicalType::Float => ColumnType::Float,
            LogicalType::Str => ColumnType::Str,
            LogicalType::Bool => ColumnType::Bool,
            LogicalType::Date => ColumnType::Date,
            LogicalType::Datetime => ColumnType::Datetime,
        }
    }
}

impl ColumnType {
    /// The logical type, for the six; None for a decimal (stored exactly, as its text).
    pub fn logical(self) -> Option<LogicalType> {
        Some(match self {
            ColumnType::Int => LogicalType::Int,
            ColumnType::Float => LogicalType::Float,
            ColumnType::Str => LogicalType::Str,
            ColumnType::Bool => LogicalType::Bool,
            ColumnType::Date => LogicalType::Date,
            ColumnType::Datetime => LogicalType::Datetime,
            ColumnType::Decimal { .. } => return None,
        })
    }

    /// Checks one value of a delivered file written as text (a CSV field) against the type;
    /// an empty text is null and always passes. The error says what the value is not, the
    /// value quoted and cut:
    ///
    /// - `int`: `-?[0-9]+` within 64 bits; `bool`, `date`, `datetime` as the bound columns
    ///   read them ([`Cell::parse`]); a datetime without an offset is refused (CHECK-17).
    /// - `float`: decimal or exponent notation of a **finite** number; `nan`, `inf` and a
    ///   number too large for binary64 are refused, never stored as null (a SQLite REAL
    ///   column turns a NaN into NULL).
    /// - `decimal(p,s)`: `[+-]?[0-9]*(\.[0-9]*)?` with at least one digit and no exponent, at
    ///   most `s` digits after the point and `p - s` before it (leading zeros not counted),
    ///   as SQL's `numeric(p,s)` holds it: never rounded.
    /// - `str`: any text.
    ///
    /// ```
    /// use dogana_rows::ColumnType;
    /// let money: ColumnType = "decimal(5,2)".parse().unwrap();
    /// assert!(money.check("-123.45").is_ok() && money.check("007.5").is_ok());
    /// assert_eq!(
    ///     money.check("1234.5").unwrap_err(),
    ///     "\"1234.5\" is not a decimal(5,2): 4 digits before the point, and decimal(5,2) holds at most 3"
    /// );
    /// assert!(money.check("1.234").is_err());
    /// let float: ColumnType = "float".parse().unwrap();
    /// assert!(float.check("nan").unwrap_err().contains("not a finite number"));
    /// ```
    pub fn check(self, text: &str) -> Result<(), String> {
        if text.is_empty() {
            return Ok(());
        }
        let b = text.as_bytes();
        let shown = || quoted(text, SHOWN);
        let ok = match self {
            ColumnType::Str => true,
            ColumnType::Int => parse_int(b).is_some(),
            ColumnType::Bool => parse_bool(b).is_some(),
            ColumnType::Date => parse_date(b).is_some(),
            ColumnType::Datetime => match parse_datetime(b) {
                Ok(_) => true,
                Err(true) => {
                    return Err(format!(
                        "{} has no UTC offset; a datetime in a read carries Z or ±HH:MM (CHECK-17)",
                        shown()
                    ))
                }
                Err(false) => false,
            },
            ColumnType::Float => return check_float(text),
            ColumnType::Decimal { precision, scale } => {
                return check_decimal(text, precision, scale)
            }
        };
        if ok {
            Ok(())
        } else {
            Err(format!("{} is not {}", shown(), self.described()))
        }
    }

    /// [`check`](ColumnType::check) for a value that arrived typed (an NDJSON or Parquet
    /// cell): a string is checked as text; a number, bool, date or datetime must be of the
    /// column's type (an integer is also a float and a decimal; a float is a decimal written
    /// in its shortest form).
    pub fn check_cell(self, cell: &Cell<'_>) -> Result<(), String> {
        let wrong = |what: &str| Err(format!("{what} is not {}", self.described()));
        match (self, cell) {
            (_, Cell::Null) => Ok(()),
            (_, Cell::Str(s)) => self.check(s),
            (ColumnType::Int | ColumnType::Float, Cell::Int(_)) => Ok(()),
            (ColumnType::Decimal { .. }, Cell::Int(i)) => self.check(&i.to_string()),
            (ColumnType::Float, Cell::Float(x)) if x.is_finite() => Ok(()),
            (ColumnType::Float, Cell::Float(x)) => Err(format!(
                "{x} is not a finite number; a float column holds finite numbers"
            )),
            (ColumnType::Decimal { .. }, Cell::Float(x)) if x.is_finite() => {
                self.check(&format!("{x}"))
            }
            (ColumnType::Bool, Cell::Bool(_))
            | (ColumnType::Date, Cell::Date(_))
            | (ColumnType::Datetime, Cell::Datetime(_)) => Ok(()),
            (_, Cell::Int(i)) => wrong(&format!("the integer {i}")),
            (_, Cell::Float(x)) => wrong(&format!("the number {x}")),
            (_, Cell::Bool(b)) => wrong(&format!("the bool {b}")),
            (_, Cell::Date(d)) => wrong(&format!("the date {d}")),
            (_, Cell::Datetime(t)) => wrong(&format!("the datetime {t}")),
        }
    }

    /// What a value of the type is, for messages: `an int (-?[0-9]+ within 64 bits)`.
    fn described(self) -> String {
        match self {
            ColumnType::Int => "an int (-?[0-9]+ within 64 bits)".into(),
            ColumnType::Float => "a finite float".into(),
            ColumnType::Str => "a string".into(),
            ColumnType::Bool => "a bool (true/false, 1/0 or t/f)".into(),
            ColumnType::Date => "a date (YYYY-MM-DD)".into(),
            ColumnType::Datetime => "an RFC 3339 datetime with a UTC offset".into(),
            t @ ColumnType::Decimal { .. } => format!("a {t}"),
        }
    }
}

fn check_float(text: &str) -> Result<(), String> {
    match text.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(()),
        Ok(_) => Err(format!(
            "{} is not a finite number; a float column holds finite numbers, and a NaN or an \
             infinity is refused rather than stored as null",
            quoted(text, SHOWN)
        )),
        Err(_) => Err(format!("{} is not a float", quoted(text, SHOWN))),
    }
}

fn check_decimal(text: &str, precision: u8, scale: u8) -> Result<(), String> {
    let t = ColumnType::Decimal { precision, scale };
    let bad = |why: String| Err(format!("{} is not a {t}{why}", quoted(text, SHOWN)));
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    let (int, frac) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    if int.len() + frac.len() == 0
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return bad(": a decimal is written [+-]digits[.digits], without an exponent".into());
    }
    let int_digits = int.trim_start_matches('0').len();
    let most_before = usize::from(precision - scale);
    if frac.len() > usize::from(scale) {
        return bad(format!(
            ": {} digits after the point, and {t} holds at most {scale}",
            frac.len()
        ));
    }
    if int_digits > most_before {
        return bad(format!(
            ": {int_digits} digits before the point, and {t} holds at most {most_before}"
        ));
    }
    Ok(())
}

/// The receiver's column list (its data contract: ODCS, dbt model or column list), each
/// column once, in order, with its checked type. Build it with [`ColumnTypes::push`] or
/// [`ColumnTypes::parse`], which refuse a repeated name, then give it to
/// [`Options::column_types`](crate::Options::column_types).
///
/// ```
/// use dogana_rows::ColumnTypes;
/// let list = ColumnTypes::parse([("amount", "decimal(12,2)"), ("customer", "str")]).unwrap();
/// assert_eq!(list.absent_from(&["id".into(), "amount".into()]), ["customer"]);
/// let e = ColumnTypes::parse([("amount", "float"), ("amount", "str")]).unwrap_err();
/// assert_eq!(e.to_string(), "column \"amount\" is typed twice, as float and as str; a column has one type");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ColumnTypes(Vec<(String, ColumnType)>);

impl ColumnTypes {
    /// An empty list.
    pub fn new() -> ColumnTypes {
        ColumnTypes::default()
    }

    /// Adds the next column; refuses a name already listed, an empty one or one longer than
    /// [`NAME_MAX`] bytes.
    pub fn push(&mut self, name: &str, ty: ColumnType) -> Result<(), ColumnTypeError> {
        if name.is_empty() || name.len() > NAME_MAX {
            return Err(ColumnTypeError(format!(
                "column name {} is not a name: a column name is 1 to {NAME_MAX} bytes (CONTRACT-48)",
                quoted(name, SHOWN)
            )));
        }
        if let Some((_, first)) = self.0.iter().find(|(n, _)| n == name) {
            return Err(ColumnTypeError(format!(
                "column {} is typed twice, as {first} and as {ty}; a column has one type",
                quoted(name, SHOWN)
            )));
        }
        self.0.push((name.to_owned(), ty));
        Ok(())
    }

    /// A list from `(name, type)` texts, each type parsed as [`ColumnType`]; the first
    /// problem is the error, naming the column.
    pub fn parse<N: AsRef<str>, T: AsRef<str>>(
        pairs: impl IntoIterator<Item = (N, T)>,
    ) -> Result<ColumnTypes, ColumnTypeError> {
        let mut list = ColumnTypes::new();
        for (name, ty) in pairs {
            let (name, ty) = (name.as_ref(), ty.as_ref());
            let parsed = ty
                .parse::<ColumnType>()
                .map_err(|e| ColumnTypeError(format!("column {}: {e}", quoted(name, SHOWN))))?;
            list.push(name, parsed)?;
        }
        Ok(list)
    }

    /// The columns and their types, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, ColumnType)> {
        self.0.iter().map(|(n, t)| (n.as_str(), *t))
    }

    /// The type of a listed column.
    pub fn get(&self, name: &str) -> Option<ColumnType> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, t)| *t)
    }

    /// How many columns are listed.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether no column is listed.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The listed columns a file's header lacks, in list order: a receiver refuses to load a
    /// CSV or Parquet file under a list that names a column the file does not have (the list
    /// or the file is wrong, and loading would fill the column with nulls).
    pub fn absent_from(&self, header: &[String]) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(n, _)| !header.iter().any(|h| h == n))
            .map(|(n, _)| n.as_str())
            .collect()
    }
}

impl<'a> IntoIterator for &'a ColumnTypes {
    type Item = (&'a str, ColumnType);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (String, ColumnType)>,
        fn(&'a (String, ColumnType)) -> (&'a str, ColumnType),
    >;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(n, t)| (n.as_str(), *t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_reads_back() {
        // rule: CONTRACT-16, DOMAIN-05
        for t in LogicalType::ALL {
            let c: ColumnType = t.name().parse().unwrap();
            assert_eq!((c.logical(), c.to_string().as_str()), (Some(t), t.name()));
        }
        for (text, p, s) in [
            ("decimal(1,0)", 1, 0),
            ("decimal(38,38)", 38, 38),
            ("decimal(12,2)", 12, 2),
        ] {
            let c: ColumnType = text.parse().unwrap();
            assert_eq!(
                c,
                ColumnType::Decimal {
                    precision: p,
                    scale: s
                }
            );
            assert_eq!(c.to_string(), text);
        }
    }

    #[test]
    fn mistyped_types_are_refused_by_name() {
        // rule: CONTRACT-16
        for bad in [
            "flaot",
            "money",
            "Int",
            "",
            "decimal",
            "decimal()",
            "decimal(12)",
            "decimal(12, 2)",
            "decimal( 12,2)",
            "decimal(012,2)",
            "decimal(-1,0)",
            "decimal(+5,1)",
            "decimal(0,0)",
            "decimal(39,2)",
            "decimal(2,5)",
            "decimal(300,2)",
            "DECIMAL(12,2)",
            "decimal(12,2) ",
        ] {
            let e = bad.parse::<ColumnType>().unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("{bad:?} is not a column type")),
                "{e}"
            );
            assert!(e.ends_with(FORMS), "{e}");
        }
        let e = "x"
            .repeat(1 << 20)
            .parse::<ColumnType>()
            .unwrap_err()
            .to_string();
        assert!(e.len() < 400, "{e}");
    }

    #[test]
    fn decimal_values_are_checked_against_precision_and_scale() {
        let t = ColumnType::Decimal {
            precision: 5,
            scale: 2,
        };
        for ok in [
            "0", "-0", "+1", "999.99", "-999.99", "000999.9", ".5", "5.", "0.00", "",
        ] {
            assert_eq!(t.check(ok), Ok(()), "{ok}");
        }
        for bad in [
            "1000", "1.234", "1e3", "abc", "-", ".", "1.2.3", "١٢", " 1", "1,5", "nan",
        ] {
            assert!(t.check(bad).is_err(), "{bad}");
        }
        let whole = ColumnType::Decimal {
            precision: 3,
            scale: 0,
        };
        assert!(whole.check("999").is_ok() && whole.check("1.0").is_err());
    }

    #[test]
    fn floats_are_finite() {
        // decided: a NaN or an infinity fails the value check (never silently null)
        for bad in ["nan", "NaN", "inf", "-inf", "infinity", "1e400"] {
            let e = ColumnType::Float.check(bad).unwrap_err();
            assert!(e.contains("not a finite number"), "{e}");
        }
        for ok in ["1.5", "-2e10", "0", "1e308"] {
            assert_eq!(ColumnType::Float.check(ok), Ok(()));
        }
        let e = ColumnType::Float
            .check_cell(&Cell::Float(f64::NAN))
            .unwrap_err();
        assert!(e.contains("not a finite number"), "{e}");
    }

    #[test]
    fn other_types_check_as_the_bound_columns_parse() {
        // rule: CHECK-17
        assert!(ColumnType::Int.check("12").is_ok() && ColumnType::Int.check("1.0").is_err());
        assert!(ColumnType::Bool.check("t").is_ok() && ColumnType::Bool.check("yes").is_err());
        assert!(ColumnType::Date.check("2026-02-29").is_err());
        let e = ColumnType::Datetime
            .check("2026-10-26T06:00:00")
            .unwrap_err();
        assert!(e.contains("CHECK-17"), "{e}");
        assert!(ColumnType::Str.check("anything\u{1b}").is_ok());
        assert!(ColumnType::Int.check_cell(&Cell::Bool(true)).is_err());
        assert!(ColumnType::Decimal {
            precision: 4,
            scale: 1
        }
        .check_cell(&Cell::Float(123.4))
        .is_ok());
    }

    #[test]
    fn a_list_names_each_column_once() {
        let e = ColumnTypes::parse([("amount", "flaot")])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("column \"amount\": \"flaot\" is not a column type"),
            "{e}"
        );
        let list = ColumnTypes::parse([("b", "int"), ("a", "decimal(3,1)")]).unwrap();
        let names: Vec<_> = list.iter().map(|(n, t)| format!("{n} {t}")).collect();
        assert_eq!(names, ["b int", "a decimal(3,1)"]);
        assert!(ColumnTypes::parse([("", "int")]).is_err());
    }
}
