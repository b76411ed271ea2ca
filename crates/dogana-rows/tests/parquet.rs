//! The row checks on Parquet deliveries (feature `parquet`).
#![cfg(feature = "parquet")]

mod common;

use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Date32Array, Decimal128Array, Float64Array, Int64Array, RecordBatch,
    StringArray, TimestampMicrosecondArray,
};
use common::*;
use dogana_rows::{check_rows, check_rows_with, sha256_bytes, Cell, Format, Options, RowsError};

/// A Parquet file of `orders` rows: (id, day, cursor micros, tombstone).
fn parquet(
    rows: &[(i64, Option<i32>, Option<i64>, bool)],
    tz: Option<&str>,
    decimal: bool,
) -> Vec<u8> {
    let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.0)));
    let days: ArrayRef = Arc::new(Date32Array::from_iter(rows.iter().map(|r| r.1)));
    let mut at = TimestampMicrosecondArray::from_iter(rows.iter().map(|r| r.2));
    if let Some(tz) = tz {
        at = at.with_timezone(tz);
    }
    let amount: ArrayRef = if decimal {
        Arc::new(
            Decimal128Array::from_iter_values(rows.iter().map(|r| i128::from(r.0) * 100))
                .with_precision_and_scale(12, 2)
                .unwrap(),
        )
    } else {
        Arc::new(Float64Array::from_iter_values(
            rows.iter().map(|r| r.0 as f64 / 2.0),
        ))
    };
    let customer: ArrayRef = Arc::new(StringArray::from_iter_values(
        rows.iter().map(|r| format!("c{}", r.0)),
    ));
    let deleted: ArrayRef = Arc::new(BooleanArray::from_iter(rows.iter().map(|r| Some(r.3))));
    let batch = RecordBatch::try_from_iter([
        ("id", ids),
        ("order_date", days),
        ("updated_at", Arc::new(at) as ArrayRef),
        ("amount", amount),
        ("customer", customer),
        ("deleted", deleted),
    ])
    .unwrap();
    let mut out = Vec::new();
    let mut w = parquet::arrow::ArrowWriter::try_new(&mut out, batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    out
}

fn day() -> i32 {
    date("2026-10-26").days_since_epoch() as i32
}

fn at(s: &str) -> i64 {
    ts(s).as_micros()
}

#[test]
fn an_honest_parquet_delivery_passes_with_the_files_own_types() {
    // rule: CHECK-18
    // rule: CONTRACT-19
    let c = orders_hashed();
    let bytes = parquet(
        &[
            (1, Some(day()), Some(at("2026-10-26T10:00:00Z")), false),
            (9, None, None, true),
        ],
        Some("UTC"),
        false,
    );
    let m = changes(&c, 1, 1)
        .content_hash(sha256_bytes(&bytes))
        .build()
        .unwrap();
    // no column list: Parquet types the columns itself
    let r = check_rows(&bytes[..], Format::Parquet, &c, &m, &Options::new()).unwrap();
    assert_failed(&r, &[]);
    assert_eq!(r.column_hash.as_deref(), c.schema_hash());
    assert_eq!((r.live, r.tombstones, r.bytes), (1, 1, bytes.len() as u64));
}

#[test]
fn a_decimal_column_hashes_as_decimal() {
    // rule: CONTRACT-16
    let bytes = parquet(
        &[(1, Some(day()), Some(at("2026-10-26T10:00:00Z")), false)],
        Some("+02:00"),
        true,
    );
    let mut cols = COLUMNS;
    cols[3] = ("amount", "decimal(12,2)");
    let c = orders_builder()
        .schema_hash(dogana::column_hash(&cols))
        .build()
        .unwrap();
    let m = changes(&c, 1, 0).build().unwrap();
    let r = check_rows(&bytes[..], Format::Parquet, &c, &m, &Options::new()).unwrap();
    assert_failed(&r, &[]);
}

#[test]
fn repeated_keys_fail_keys() {
    // rule: CHECK-09
    let c = orders();
    let bytes = parquet(
        &[
            (1, Some(day()), Some(at("2026-10-26T10:00:00Z")), false),
            (1, None, None, true),
        ],
        Some("UTC"),
        false,
    );
    let m = changes(&c, 1, 1).build().unwrap();
    let r = check_rows(&bytes[..], Format::Parquet, &c, &m, &Options::new()).unwrap();
    assert_failed(&r, &["keys"]);
    assert_eq!(
        detail(&r, "keys"),
        "line 2, key id=1: a key an earlier row already has"
    );
}

#[test]
fn a_timestamp_without_a_time_zone_fails_parse() {
    // rule: CHECK-17
    let c = orders();
    let bytes = parquet(
        &[(1, Some(day()), Some(at("2026-10-26T10:00:00Z")), false)],
        None,
        false,
    );
    let m = changes(&c, 1, 0).build().unwrap();
    let r = check_rows(&bytes[..], Format::Parquet, &c, &m, &Options::new()).unwrap();
    assert_failed(&r, &["parse"]);
    assert!(
        detail(&r, "parse").contains("(CHECK-17)"),
        "{}",
        detail(&r, "parse")
    );
}

#[test]
fn a_file_that_is_not_parquet_fails_parse() {
    // rule: CHECK-08
    let c = orders();
    let m = full(&c, 0).build().unwrap();
    let r = check_rows(&b"id\n"[..], Format::Parquet, &c, &m, &Options::new()).unwrap();
    assert_failed(&r, &["parse"]);
}

#[test]
fn a_footer_placing_a_column_chunk_outside_the_file_fails_parse_without_a_panic() {
    // rule: CHECK-08 — a damaged file is refused, naming where it is damaged. The file is the
    // fuzz target parquet_rows's first find: a seed of DuckDB's whose footer gives a column
    // chunk a negative offset, on which the parquet crate asserts instead of returning an error.
    let bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/negative-chunk-offset.parquet"
    ))
    .unwrap();
    let c = orders();
    let m = changes(&c, 0, 0).build().unwrap();
    let r = check_rows(&bytes[..], Format::Parquet, &c, &m, &Options::new()).unwrap();
    assert_failed(&r, &["parse"]);
    let why = detail(&r, "parse");
    assert!(
        why.contains("damaged") && why.contains("outside the file's"),
        "{why}"
    );
}

#[test]
fn the_callback_sees_parquet_values() {
    // rule: CHECK-06
    let c = orders();
    let bytes = parquet(
        &[(4, Some(day()), Some(at("2026-10-26T10:00:00Z")), false)],
        Some("UTC"),
        false,
    );
    let m = changes(&c, 1, 0).build().unwrap();
    let mut seen = Vec::new();
    check_rows_with(
        &bytes[..],
        Format::Parquet,
        &c,
        &m,
        &Options::new(),
        |row| {
            seen.extend(row.cells().map(Cell::into_owned));
            Ok::<(), RowsError>(())
        },
    )
    .unwrap();
    assert_eq!(
        seen,
        [
            Cell::Int(4),
            Cell::Date(date("2026-10-26")),
            Cell::Datetime(ts("2026-10-26T10:00:00Z")),
            Cell::Float(2.0),
            Cell::Str("c4".into()),
            Cell::Bool(false),
        ]
    );
}
