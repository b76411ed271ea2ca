//! SQL text: identifiers are always quoted, values always bound (never spliced into SQL).

use std::fmt::Write as _;

use dogana::{Date, LogicalType, Timestamp, Value};
use dogana_rows::Cell;
use rusqlite::types::{ToSqlOutput, Value as SqlValue, ValueRef};

/// `name` as an SQL identifier: in double quotes, an embedded double quote doubled. Every
/// table, column and index name the store writes into SQL passes through here.
///
/// ```
/// assert_eq!(dogana_sqlite::quote_ident("orders"), r#""orders""#);
/// assert_eq!(dogana_sqlite::quote_ident(r#"a"b; --"#), r#""a""b; --""#);
/// ```
pub fn quote_ident(name: &str) -> String {
    let mut s = String::with_capacity(name.len() + 2);
    s.push('"');
    for c in name.chars() {
        if c == '"' {
            s.push('"');
        }
        s.push(c);
    }
    s.push('"');
    s
}

/// The SQLite column type a column of this type name is published as: `int` and `bool` as
/// INTEGER, `float` as REAL, everything else (`str`, `date`, `datetime`, `decimal(p,s)`,
/// unknown names) as TEXT. Dates are `YYYY-MM-DD` and datetimes the protocol's UTC form
/// (`2026-10-26T06:00:00+00:00`, six fractional digits when not zero), so text order is time
/// order; a decimal stays exact as its text.
pub fn sql_type(type_name: &str) -> &'static str {
    match LogicalType::from_name(type_name) {
        Some(LogicalType::Int | LogicalType::Bool) => "INTEGER",
        Some(LogicalType::Float) => "REAL",
        _ => "TEXT",
    }
}

/// A bound value as it is stored: the SQL form of a protocol value (window bounds).
pub(crate) fn value_sql(v: &Value) -> SqlValue {
    match v {
        Value::Int(i) => SqlValue::Integer(*i),
        Value::Str(s) => SqlValue::Text(s.clone()),
        Value::Date(d) => SqlValue::Text(d.to_string()),
        Value::Datetime(t) => SqlValue::Text(t.to_string()),
    }
}

/// Binds one cell, formatting dates and datetimes into `buf` (reused across rows).
pub(crate) fn cell_sql<'c>(cell: &'c Cell<'_>, buf: &'c mut String) -> ToSqlOutput<'c> {
    match cell {
        Cell::Null => ToSqlOutput::Borrowed(ValueRef::Null),
        Cell::Int(i) => ToSqlOutput::Borrowed(ValueRef::Integer(*i)),
        Cell::Float(x) => ToSqlOutput::Borrowed(ValueRef::Real(*x)),
        Cell::Bool(b) => ToSqlOutput::Borrowed(ValueRef::Integer(i64::from(*b))),
        Cell::Str(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
        Cell::Date(d) => {
            buf.clear();
            push_date(buf, *d);
            ToSqlOutput::Borrowed(ValueRef::Text(buf.as_bytes()))
        }
        Cell::Datetime(t) => {
            buf.clear();
            push_datetime(buf, *t);
            ToSqlOutput::Borrowed(ValueRef::Text(buf.as_bytes()))
        }
    }
}

fn push_digits(buf: &mut String, v: u32, width: usize) {
    let mut digits = [b'0'; 10];
    let mut v = v;
    for i in (0..width).rev() {
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
    }
    buf.push_str(std::str::from_utf8(&digits[..width]).unwrap_or_default());
}

/// `YYYY-MM-DD`, as `Date`'s Display writes it (without the formatting machinery: this runs
/// once per value of a bulk load).
fn push_date(buf: &mut String, d: Date) {
    let (y, m, day) = d.ymd();
    if !(0..=9999).contains(&y) {
        let _ = write!(buf, "{d}");
        return;
    }
    push_digits(buf, y as u32, 4);
    buf.push('-');
    push_digits(buf, m, 2);
    buf.push('-');
    push_digits(buf, day, 2);
}

/// The protocol's UTC form, as `Timestamp`'s Display writes it.
fn push_datetime(buf: &mut String, t: Timestamp) {
    const DAY: i64 = 86_400_000_000;
    push_date(buf, t.date());
    let within = t.as_micros().rem_euclid(DAY);
    let (secs, frac) = (within / 1_000_000, within % 1_000_000);
    buf.push('T');
    push_digits(buf, (secs / 3600) as u32, 2);
    buf.push(':');
    push_digits(buf, (secs / 60 % 60) as u32, 2);
    buf.push(':');
    push_digits(buf, (secs % 60) as u32, 2);
    if frac != 0 {
        buf.push('.');
        push_digits(buf, frac as u32, 6);
    }
    buf.push_str("+00:00");
}

/// A comma-separated list of quoted identifiers, each prefixed.
pub(crate) fn ident_list<'a>(names: impl IntoIterator<Item = &'a str>, prefix: &str) -> String {
    names
        .into_iter()
        .map(|n| format!("{prefix}{}", quote_ident(n)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `(a, b)` for several columns, `a` for one: the left side of a row-value `IN`.
pub(crate) fn row_value(items: &[String]) -> String {
    if items.len() == 1 {
        items[0].clone()
    } else {
        format!("({})", items.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_quoted() {
        assert_eq!(quote_ident(""), "\"\"");
        assert_eq!(quote_ident("\"\""), "\"\"\"\"\"\"");
        assert_eq!(quote_ident("a b;c"), "\"a b;c\"");
    }

    #[test]
    fn fast_formats_are_display() {
        for t in [
            "0001-01-01T00:00:00Z",
            "1969-12-31T23:59:59.999999Z",
            "1970-01-01T00:00:00Z",
            "2026-10-18T02:00:00.5+02:00",
            "2024-02-29T23:59:59.000001Z",
            "9999-12-31T23:59:59.999999Z",
        ] {
            let t: Timestamp = t.parse().unwrap();
            let mut buf = String::new();
            push_datetime(&mut buf, t);
            assert_eq!(buf, t.to_string());
            buf.clear();
            push_date(&mut buf, t.date());
            assert_eq!(buf, t.date().to_string());
        }
    }

    #[test]
    fn datetime_text_sorts_as_time() {
        let a: dogana::Timestamp = "2026-10-18T00:00:00Z".parse().unwrap();
        let b: dogana::Timestamp = "2026-10-18T00:00:00.000001Z".parse().unwrap();
        let c: dogana::Timestamp = "2026-10-18T00:00:00.999999Z".parse().unwrap();
        let d: dogana::Timestamp = "2026-10-18T00:00:01Z".parse().unwrap();
        let texts: Vec<String> = [a, b, c, d].iter().map(|t| t.to_string()).collect();
        let mut sorted = texts.clone();
        sorted.sort();
        assert_eq!(texts, sorted);
    }
}
