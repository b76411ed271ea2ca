//! The statistics of an Add action (Delta's `stats`: numRecords, minValues, maxValues,
//! nullCount), written from the rows of the file, and read back to skip files.
//!
//! Every plain column gets bounds in the form Delta writers give them (delta-rs and Spark):
//! integers and finite floats as JSON numbers, booleans, dates as `YYYY-MM-DD`, instants to
//! the millisecond (`…T10:00:00.000Z`, the upper bound rounded up), text cut to 32 characters
//! (the upper bound then followed by U+10FFFF). A bound must hold every value of the file: a
//! reader skips a file whose bounds exclude its filter, and the `deltalake` package also skips
//! one whose bounds of the filtered column are missing.

use bytes::Bytes;
use dogana::Date;
use dogana_lake::layout::ColumnDef;
use dogana_receiver::{Datum, StoreError};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::statistics::Statistics;
use serde_json::{json, Map, Value};

/// The longest text written as a bound (Spark's cut).
const TEXT_BOUND: usize = 32;

/// A column's bounds as Delta writes them, from Parquet's statistics of one row group.
#[derive(Debug, Clone, PartialEq)]
enum Bound {
    Int(i64),
    Float(f64),
    Bool(bool),
    /// Days after 1970-01-01.
    Date(i32),
    /// Microseconds after 1970-01-01T00:00:00Z.
    Micros(i64),
    Text(String),
}

impl Bound {
    fn less(&self, other: &Bound) -> bool {
        match (self, other) {
            (Bound::Int(a), Bound::Int(b)) => a < b,
            (Bound::Float(a), Bound::Float(b)) => a < b,
            (Bound::Bool(a), Bound::Bool(b)) => a < b,
            (Bound::Date(a), Bound::Date(b)) => a < b,
            (Bound::Micros(a), Bound::Micros(b)) => a < b,
            (Bound::Text(a), Bound::Text(b)) => a < b,
            _ => false,
        }
    }

    /// The JSON a Delta reader reads: numbers, booleans, `YYYY-MM-DD`, an instant to the
    /// millisecond (Delta's precision: a lower bound rounded down, an upper one up), text
    /// cut to 32 characters (an upper bound cut is followed by U+10FFFF, above any
    /// continuation).
    fn json(&self, upper: bool) -> Option<Value> {
        Some(match self {
            Bound::Int(i) => json!(i),
            Bound::Float(x) if x.is_finite() => json!(x),
            Bound::Float(_) => return None,
            Bound::Bool(b) => json!(b),
            Bound::Date(d) => json!(day(*d)?.to_string()),
            Bound::Micros(us) => {
                let ms = if upper {
                    us.div_euclid(1000) + i64::from(us.rem_euclid(1000) != 0)
                } else {
                    us.div_euclid(1000)
                };
                let t = chrono::DateTime::from_timestamp_millis(ms)?;
                json!(t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
            }
            Bound::Text(t) if t.chars().count() <= TEXT_BOUND => json!(t),
            Bound::Text(t) => {
                let mut cut: String = t.chars().take(TEXT_BOUND).collect();
                if upper {
                    cut.push('\u{10FFFF}');
                }
                json!(cut)
            }
        })
    }
}

/// The bounds one row group's statistics give a column of declared type `ty` (None: no
/// statistics, or NULLs only). Inexact Parquet bounds are still bounds (a cut minimum is a
/// prefix, a cut maximum is raised), so they are kept.
fn group_bounds(ty: Option<&str>, st: &Statistics) -> Option<(Bound, Bound)> {
    use dogana::LogicalType as L;
    let kind = ty.and_then(L::from_name);
    match st {
        Statistics::Int64(v) => {
            let (a, b) = (*v.min_opt()?, *v.max_opt()?);
            match kind {
                Some(L::Datetime) => Some((Bound::Micros(a), Bound::Micros(b))),
                Some(L::Int) => Some((Bound::Int(a), Bound::Int(b))),
                _ => None,
            }
        }
        Statistics::Int32(v) if kind == Some(L::Date) => {
            Some((Bound::Date(*v.min_opt()?), Bound::Date(*v.max_opt()?)))
        }
        Statistics::Double(v) => Some((Bound::Float(*v.min_opt()?), Bound::Float(*v.max_opt()?))),
        Statistics::Boolean(v) => Some((Bound::Bool(*v.min_opt()?), Bound::Bool(*v.max_opt()?))),
        Statistics::ByteArray(v) => {
            let lo = v.min_opt()?.as_utf8().ok()?.to_owned();
            let hi = v.max_opt()?.as_utf8().ok()?.to_owned();
            Some((Bound::Text(lo), Bound::Text(hi)))
        }
        _ => None,
    }
}

/// The `stats` JSON of one Parquet file of `columns` (the file's bytes), from its footer's
/// column statistics, every row group's bounds folded. Every column gets bounds unless it
/// holds NULLs only, or a row group gives none: Delta readers (the `deltalake` package among
/// them) skip a file whose statistics lack the bounds of a column they filter on.
pub fn of_parquet(columns: &[ColumnDef], bytes: &Bytes) -> Result<String, StoreError> {
    let reader = SerializedFileReader::new(bytes.clone())
        .map_err(|e| StoreError::Corrupt(format!("a Parquet file just written: {e}")))?;
    let meta = reader.metadata();
    let rows: i64 = meta.row_groups().iter().map(|g| g.num_rows()).sum();
    let mut min = Map::new();
    let mut max = Map::new();
    let mut nulls = Map::new();
    for (i, c) in columns.iter().enumerate() {
        let mut n = 0u64;
        let mut lo: Option<Bound> = None;
        let mut hi: Option<Bound> = None;
        let mut boundable = true;
        for g in meta.row_groups() {
            let Some(st) = g.columns().get(i).and_then(|c| c.statistics()) else {
                boundable = false;
                continue;
            };
            let group_nulls = st.null_count_opt().unwrap_or(0);
            n += group_nulls;
            if g.num_rows() as u64 == group_nulls {
                continue; // a group of NULLs only has no bounds
            }
            match group_bounds(c.ty.as_deref(), st) {
                Some((a, b)) => {
                    if lo.as_ref().is_none_or(|l| a.less(l)) {
                        lo = Some(a);
                    }
                    if hi.as_ref().is_none_or(|h| h.less(&b)) {
                        hi = Some(b);
                    }
                }
                None => boundable = false,
            }
        }
        nulls.insert(c.name.clone(), json!(n));
        if boundable {
            if let (Some(l), Some(h)) = (
                lo.as_ref().and_then(|b| b.json(false)),
                hi.as_ref().and_then(|b| b.json(true)),
            ) {
                min.insert(c.name.clone(), l);
                max.insert(c.name.clone(), h);
            }
        }
    }
    Ok(json!({
        "numRecords": rows,
        "minValues": min,
        "maxValues": max,
        "nullCount": nulls,
    })
    .to_string())
}

/// The date `days` after 1970-01-01 (Parquet's DATE).
fn day(days: i32) -> Option<Date> {
    Date::from_ymd(1970, 1, 1)
        .ok()?
        .checked_add_days(i64::from(days))
}

/// The least and greatest value of `column` a file's `stats` records, as data of the kind
/// `like` is (None: no usable bound).
pub fn bounds(stats: Option<&str>, column: &str, like: &Datum) -> Option<(Datum, Datum)> {
    let v: Value = serde_json::from_str(stats?).ok()?;
    let read = |side: &str| -> Option<Datum> {
        let b = v.get(side)?.get(column)?;
        Some(match like {
            Datum::Int(_) => Datum::Int(b.as_i64()?),
            Datum::Real(_) => Datum::Real(b.as_f64()?),
            Datum::Date(_) => Datum::Date(b.as_str()?.parse::<Date>().ok()?),
            Datum::Datetime(_) => {
                let t = chrono::DateTime::parse_from_rfc3339(b.as_str()?).ok()?;
                Datum::Datetime(dogana::Timestamp::from_micros(t.timestamp_micros())?)
            }
            Datum::Text(_) => Datum::Text(b.as_str()?.to_owned()),
            _ => return None,
        })
    };
    Some((read("minValues")?, read("maxValues")?))
}

/// How many NULLs of `column` a file's `stats` counts (None: not recorded).
pub fn nulls(stats: Option<&str>, column: &str) -> Option<u64> {
    let v: Value = serde_json::from_str(stats?).ok()?;
    v.get("nullCount")?.get(column)?.as_u64()
}

#[cfg(test)]
mod tests {
    use super::*;
    use dogana_lake::parts::PartWriter;

    fn col(name: &str, ty: &str) -> ColumnDef {
        ColumnDef {
            name: name.into(),
            ty: Some(ty.into()),
            key: false,
        }
    }

    #[test]
    fn every_plain_column_gets_bounds_that_hold_its_values() {
        let cols = [
            col("id", "int"),
            col("day", "date"),
            col("at", "datetime"),
            col("x", "float"),
            col("ok", "bool"),
            col("note", "str"),
            col("none", "str"),
        ];
        let d = |s: &str| Datum::Date(s.parse().unwrap());
        let t = |s: &str| Datum::Datetime(s.parse().unwrap());
        let rows = vec![
            vec![
                Datum::Int(7),
                d("2026-10-02"),
                t("2026-10-25T06:00:00.000500+00:00"),
                Datum::Real(0.5),
                Datum::Bool(true),
                Datum::Text("a".repeat(40)),
                Datum::Null,
            ],
            vec![
                Datum::Int(-2),
                d("2026-09-30"),
                t("2026-10-25T07:00:00.000001+00:00"),
                Datum::Real(-1.5),
                Datum::Bool(true),
                Datum::Null,
                Datum::Null,
            ],
        ];
        let mut w = PartWriter::new("t", &cols).unwrap();
        w.write(&rows).unwrap();
        let s = of_parquet(&cols, &w.finish().unwrap()).unwrap();
        let v: Value = serde_json::from_str(&s).unwrap();
        assert_eq!(
            bounds(Some(&s), "id", &Datum::Int(0)),
            Some((Datum::Int(-2), Datum::Int(7)))
        );
        assert_eq!(
            bounds(Some(&s), "day", &d("2000-01-01")),
            Some((d("2026-09-30"), d("2026-10-02")))
        );
        // to the millisecond: the minimum rounded down, the maximum up
        assert_eq!(v["minValues"]["at"], json!("2026-10-25T06:00:00.000Z"));
        assert_eq!(v["maxValues"]["at"], json!("2026-10-25T07:00:00.001Z"));
        assert_eq!(v["minValues"]["x"], json!(-1.5));
        assert_eq!(v["maxValues"]["ok"], json!(true));
        // a long text cut to 32 characters, the maximum raised above any continuation
        assert_eq!(v["minValues"]["note"], json!("a".repeat(32)));
        assert_eq!(
            v["maxValues"]["note"],
            json!(format!("{}\u{10FFFF}", "a".repeat(32)))
        );
        // NULLs only: no bounds, and the count says why
        assert!(v["minValues"].get("none").is_none());
        assert_eq!(v["nullCount"]["note"], json!(1));
        assert_eq!(v["nullCount"]["none"], json!(2));
        assert_eq!(v["numRecords"], json!(2));
    }
}
