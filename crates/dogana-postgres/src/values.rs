//! Values on the wire: the staged values as binary COPY writes them, and the published ones
//! read back as [`Datum`]s.

use std::error::Error;

use bytes::BytesMut;
use dogana::{Date, Timestamp, Value};
use dogana_receiver::{Datum, Staged};
use postgres::types::{to_sql_checked, FromSql, IsNull, ToSql, Type};

/// Days from 1970-01-01 (dogana's epoch) to 2000-01-01 (Postgres's).
const PG_EPOCH_DAYS: i64 = 10_957;
/// Microseconds from 1970-01-01 to 2000-01-01.
const PG_EPOCH_MICROS: i64 = PG_EPOCH_DAYS * 86_400_000_000;

type BoxError = Box<dyn Error + Sync + Send>;

/// One value in Postgres's binary format, for the column type it was chosen for.
#[derive(Debug, Clone)]
pub(crate) enum Pg<'a> {
    Null,
    Int(i64),
    Real(f64),
    Bool(bool),
    Text(&'a str),
    /// Text made for the staging column (an NDJSON value of an untyped column).
    Owned(String),
    /// Days since 2000-01-01.
    Date(i32),
    /// Microseconds since 2000-01-01 UTC.
    Timestamptz(i64),
}

impl Pg<'_> {
    pub(crate) fn date(d: Date) -> Pg<'static> {
        Pg::Date((d.days_since_epoch() - PG_EPOCH_DAYS) as i32)
    }

    pub(crate) fn timestamptz(t: Timestamp) -> Pg<'static> {
        Pg::Timestamptz(t.as_micros() - PG_EPOCH_MICROS)
    }
}

impl ToSql for Pg<'_> {
    fn to_sql(&self, _ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        match self {
            Pg::Null => return Ok(IsNull::Yes),
            Pg::Int(v) => out.extend_from_slice(&v.to_be_bytes()),
            Pg::Real(v) => out.extend_from_slice(&v.to_be_bytes()),
            Pg::Bool(v) => out.extend_from_slice(&[u8::from(*v)]),
            Pg::Text(s) => out.extend_from_slice(s.as_bytes()),
            Pg::Owned(s) => out.extend_from_slice(s.as_bytes()),
            Pg::Date(v) => out.extend_from_slice(&v.to_be_bytes()),
            Pg::Timestamptz(v) => out.extend_from_slice(&v.to_be_bytes()),
        }
        Ok(IsNull::No)
    }

    /// Every value is written for the column type it was chosen for (see [`staged`]); the
    /// statements that bind window bounds cast their parameters to that type.
    fn accepts(_ty: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

/// The staging column type of a declared type name: the logical types typed, everything else
/// text (the rows reader does not parse it; inserting casts it to the published type).
pub(crate) fn staging_type(type_name: Option<&str>) -> Type {
    use dogana::LogicalType as L;
    match type_name.and_then(L::from_name) {
        Some(L::Int) => Type::INT8,
        Some(L::Float) => Type::FLOAT8,
        Some(L::Bool) => Type::BOOL,
        Some(L::Date) => Type::DATE,
        Some(L::Datetime) => Type::TIMESTAMPTZ,
        _ => Type::TEXT,
    }
}

/// A staged value for a staging column of type `ty`; a value of another kind (only in a
/// delivery some check refuses: what it stages is never published) is staged as NULL.
pub(crate) fn staged<'a>(v: Staged<'a>, ty: &Type) -> Pg<'a> {
    match v {
        Staged::Null => Pg::Null,
        Staged::Int(i) if *ty == Type::INT8 => Pg::Int(i),
        Staged::Int(i) if *ty == Type::FLOAT8 => Pg::Real(i as f64),
        Staged::Real(x) if *ty == Type::FLOAT8 => Pg::Real(x),
        Staged::Bool(b) if *ty == Type::BOOL => Pg::Bool(b),
        Staged::Date(d) if *ty == Type::DATE => Pg::date(d),
        Staged::Datetime(t) if *ty == Type::TIMESTAMPTZ => Pg::timestamptz(t),
        Staged::Text(s) if *ty == Type::TEXT => Pg::Text(s),
        // an untyped column of a JSON file: its value as text
        Staged::Int(i) if *ty == Type::TEXT => Pg::Owned(i.to_string()),
        Staged::Real(x) if *ty == Type::TEXT => Pg::Owned(x.to_string()),
        Staged::Bool(b) if *ty == Type::TEXT => Pg::Owned(b.to_string()),
        Staged::Date(d) if *ty == Type::TEXT => Pg::Owned(d.to_string()),
        Staged::Datetime(t) if *ty == Type::TEXT => Pg::Owned(t.to_string()),
        _ => Pg::Null,
    }
}

/// A protocol value (a window bound) as a parameter, with the cast its placeholder takes.
pub(crate) fn bound(v: &Value) -> (Pg<'_>, &'static str) {
    match v {
        Value::Int(i) => (Pg::Int(*i), "int8"),
        Value::Str(s) => (Pg::Text(s), "text"),
        Value::Date(d) => (Pg::date(*d), "date"),
        Value::Datetime(t) => (Pg::timestamptz(*t), "timestamptz"),
    }
}

/// A DATE read back.
#[derive(Debug)]
pub(crate) struct PgDate(pub(crate) Datum);

impl<'a> FromSql<'a> for PgDate {
    fn from_sql(_ty: &Type, raw: &'a [u8]) -> Result<PgDate, BoxError> {
        let days = i32::from_be_bytes(raw.try_into()?);
        Ok(PgDate(
            Date::from_days_since_epoch(i64::from(days) + PG_EPOCH_DAYS).map_or_else(
                || {
                    Datum::Text(match days {
                        i32::MAX => "infinity".into(),
                        i32::MIN => "-infinity".into(),
                        d => format!("day {d} of Postgres"),
                    })
                },
                Datum::Date,
            ),
        ))
    }

    fn accepts(ty: &Type) -> bool {
        *ty == Type::DATE
    }
}

/// A TIMESTAMPTZ read back.
#[derive(Debug)]
pub(crate) struct PgTimestamptz(pub(crate) Datum);

impl<'a> FromSql<'a> for PgTimestamptz {
    fn from_sql(_ty: &Type, raw: &'a [u8]) -> Result<PgTimestamptz, BoxError> {
        let micros = i64::from_be_bytes(raw.try_into()?);
        Ok(PgTimestamptz(
            micros
                .checked_add(PG_EPOCH_MICROS)
                .and_then(Timestamp::from_micros)
                .map_or_else(
                    || {
                        Datum::Text(match micros {
                            i64::MAX => "infinity".into(),
                            i64::MIN => "-infinity".into(),
                            m => format!("instant {m} of Postgres"),
                        })
                    },
                    Datum::Datetime,
                ),
        ))
    }

    fn accepts(ty: &Type) -> bool {
        *ty == Type::TIMESTAMPTZ
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epochs_are_postgres_s() {
        let d: Date = "2000-01-01".parse().unwrap();
        assert!(matches!(Pg::date(d), Pg::Date(0)));
        let t: Timestamp = "2000-01-01T00:00:01Z".parse().unwrap();
        assert!(matches!(Pg::timestamptz(t), Pg::Timestamptz(1_000_000)));
        let PgDate(back) = PgDate::from_sql(&Type::DATE, &(-1i32).to_be_bytes()).unwrap();
        assert_eq!(back, Datum::Date("1999-12-31".parse().unwrap()));
    }
}
