//! The statistics of an Add action (Delta's `stats`: numRecords, minValues, maxValues,
//! nullCount), written from the rows of the file, and read back to skip files.
//!
//! A bound is written only where every Delta reader reads it as we mean it: integers and
//! finite floats as JSON numbers, dates as `YYYY-MM-DD`, text of at most 32 characters
//! (Spark cuts longer strings and widens the maximum). Timestamps and booleans get no bounds
//! (readers differ on a timestamp's precision there). A missing bound is always safe: a
//! reader then reads the file.

use std::cmp::Ordering;

use dogana::Date;
use dogana_lake::layout::ColumnDef;
use dogana_receiver::Datum;
use serde_json::{json, Map, Value};

/// The longest text written as a bound.
const TEXT_BOUND: usize = 32;

/// The `stats` JSON of a file holding `rows` of `columns`.
pub fn of_rows(columns: &[ColumnDef], rows: &[Vec<Datum>]) -> String {
    let mut min = Map::new();
    let mut max = Map::new();
    let mut nulls = Map::new();
    for (i, c) in columns.iter().enumerate() {
        let mut n = 0u64;
        let mut lo: Option<&Datum> = None;
        let mut hi: Option<&Datum> = None;
        let mut boundable = true;
        for r in rows {
            let v = &r[i];
            match v {
                Datum::Null => n += 1,
                Datum::Int(_) | Datum::Date(_) => {}
                Datum::Real(x) if x.is_finite() => {}
                Datum::Text(s) if s.chars().count() <= TEXT_BOUND => {}
                _ => boundable = false,
            }
            if matches!(v, Datum::Null) || !boundable {
                continue;
            }
            if lo.is_none_or(|l| compare(v, l) == Some(Ordering::Less)) {
                lo = Some(v);
            }
            if hi.is_none_or(|h| compare(v, h) == Some(Ordering::Greater)) {
                hi = Some(v);
            }
        }
        nulls.insert(c.name.clone(), json!(n));
        if boundable {
            if let (Some(l), Some(h)) = (lo.and_then(bound), hi.and_then(bound)) {
                min.insert(c.name.clone(), l);
                max.insert(c.name.clone(), h);
            }
        }
    }
    json!({
        "numRecords": rows.len(),
        "minValues": min,
        "maxValues": max,
        "nullCount": nulls,
    })
    .to_string()
}

fn bound(v: &Datum) -> Option<Value> {
    Some(match v {
        Datum::Int(i) => json!(i),
        Datum::Real(x) => json!(x),
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

    fn col(name: &str) -> ColumnDef {
        ColumnDef {
            name: name.into(),
            ty: None,
            key: false,
        }
    }

    #[test]
    fn bounds_written_are_read_back_and_long_text_gets_none() {
        let cols = [col("id"), col("note")];
        let rows = vec![
            vec![Datum::Int(7), Datum::Text("a".repeat(40))],
            vec![Datum::Int(-2), Datum::Null],
        ];
        let s = of_rows(&cols, &rows);
        assert_eq!(
            bounds(Some(&s), "id", &Datum::Int(0)),
            Some((Datum::Int(-2), Datum::Int(7)))
        );
        assert_eq!(bounds(Some(&s), "note", &Datum::Text(String::new())), None);
        let v: Value = serde_json::from_str(&s).unwrap();
        assert_eq!(v["nullCount"]["note"], json!(1));
        assert_eq!(v["numRecords"], json!(2));
    }
}
