//! The statistics of an Add action (Delta's `stats`: numRecords, minValues, maxValues,
//! nullCount), written from the rows of the file, and read back to skip files.
//!
//! A bound is written only where every Delta reader reads it as we mean it: integers as JSON
//! numbers, dates as `YYYY-MM-DD`, text of at most 32 characters (Spark cuts longer strings
//! and widens the maximum). Floats, timestamps and booleans get no bounds (NaN, and readers
//! differ on a timestamp's precision there). A missing bound is always safe: a reader then
//! reads the file.

use std::cmp::Ordering;

use bytes::Bytes;
use dogana::Date;
use dogana_lake::layout::ColumnDef;
use dogana_receiver::{Datum, StoreError};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::statistics::Statistics;
use serde_json::{json, Map, Value};

/// The longest text written as a bound.
const TEXT_BOUND: usize = 32;

/// The `stats` JSON of one Parquet file of `columns` (the file's bytes), from its footer's
/// column statistics: every row group's bounds folded, a bound kept only when every row
/// group has an exact one.
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
        let mut lo: Option<Datum> = None;
        let mut hi: Option<Datum> = None;
        let mut boundable = true;
        for g in meta.row_groups() {
            let Some(st) = g.columns().get(i).and_then(|c| c.statistics()) else {
                boundable = false;
                continue;
            };
            n += st.null_count_opt().unwrap_or(0);
            if g.num_rows() as u64 == st.null_count_opt().unwrap_or(0) {
                continue; // a group of NULLs only has no bounds
            }
            let pair = match st {
                Statistics::Int64(v) if st.min_is_exact() && st.max_is_exact() => v
                    .min_opt()
                    .zip(v.max_opt())
                    .map(|(a, b)| (Datum::Int(*a), Datum::Int(*b))),
                Statistics::Int32(v)
                    if st.min_is_exact()
                        && st.max_is_exact()
                        && matches!(c.ty.as_deref(), Some("date")) =>
                {
                    v.min_opt()
                        .zip(v.max_opt())
                        .and_then(|(a, b)| Some((Datum::Date(day(*a)?), Datum::Date(day(*b)?))))
                }
                Statistics::ByteArray(v) if st.min_is_exact() && st.max_is_exact() => {
                    v.min_opt().zip(v.max_opt()).and_then(|(a, b)| {
                        let (a, b) = (a.as_utf8().ok()?, b.as_utf8().ok()?);
                        (a.chars().count() <= TEXT_BOUND && b.chars().count() <= TEXT_BOUND)
                            .then(|| (Datum::Text(a.to_owned()), Datum::Text(b.to_owned())))
                    })
                }
                _ => None,
            };
            match pair {
                Some((a, b)) => {
                    if lo
                        .as_ref()
                        .is_none_or(|l| compare(&a, l) == Some(Ordering::Less))
                    {
                        lo = Some(a);
                    }
                    if hi
                        .as_ref()
                        .is_none_or(|h| compare(&b, h) == Some(Ordering::Greater))
                    {
                        hi = Some(b);
                    }
                }
                None => boundable = false,
            }
        }
        nulls.insert(c.name.clone(), json!(n));
        if boundable {
            if let (Some(l), Some(h)) = (lo.as_ref().and_then(bound), hi.as_ref().and_then(bound)) {
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

fn bound(v: &Datum) -> Option<Value> {
    Some(match v {
        Datum::Int(i) => json!(i),
        Datum::Date(d) => json!(d.to_string()),
        Datum::Text(s) => json!(s),
        _ => return None,
    })
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
            Datum::Text(_) => Datum::Text(b.as_str()?.to_owned()),
            _ => return None,
        })
    };
    Some((read("minValues")?, read("maxValues")?))
}

/// Two values of one kind compared (None: incomparable kinds, or NULL).
pub fn compare(a: &Datum, b: &Datum) -> Option<Ordering> {
    match (a, b) {
        (Datum::Int(x), Datum::Int(y)) => Some(x.cmp(y)),
        (Datum::Real(x), Datum::Real(y)) => x.partial_cmp(y),
        (Datum::Int(x), Datum::Real(y)) => (*x as f64).partial_cmp(y),
        (Datum::Real(x), Datum::Int(y)) => x.partial_cmp(&(*y as f64)),
        (Datum::Text(x), Datum::Text(y)) => Some(x.cmp(y)),
        (Datum::Date(x), Datum::Date(y)) => Some(x.cmp(y)),
        (Datum::Datetime(x), Datum::Datetime(y)) => Some(x.cmp(y)),
        (Datum::Bool(x), Datum::Bool(y)) => Some(x.cmp(y)),
        _ => None,
    }
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
    fn bounds_written_are_read_back_and_long_text_gets_none() {
        let cols = [col("id", "int"), col("day", "date"), col("note", "str")];
        let d = |s: &str| Datum::Date(s.parse().unwrap());
        let rows = vec![
            vec![Datum::Int(7), d("2026-10-02"), Datum::Text("a".repeat(40))],
            vec![Datum::Int(-2), d("2026-09-30"), Datum::Null],
        ];
        let mut w = PartWriter::new("t", &cols).unwrap();
        w.write(&rows).unwrap();
        let s = of_parquet(&cols, &w.finish().unwrap()).unwrap();
        assert_eq!(
            bounds(Some(&s), "id", &Datum::Int(0)),
            Some((Datum::Int(-2), Datum::Int(7)))
        );
        assert_eq!(
            bounds(Some(&s), "day", &d("2000-01-01")),
            Some((d("2026-09-30"), d("2026-10-02")))
        );
        assert_eq!(bounds(Some(&s), "note", &Datum::Text(String::new())), None);
        let v: Value = serde_json::from_str(&s).unwrap();
        assert_eq!(v["nullCount"]["note"], json!(1));
        assert_eq!(v["numRecords"], json!(2));
    }
}
