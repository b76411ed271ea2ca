//! The public API around the checks: formats, hashing, files, the row callback.

mod common;

use std::io::Read;

use common::*;
use dogana_rows::{
    check_file, check_rows, check_rows_with, sha256_bytes, sha256_file, Cell, Format,
    HashingReader, Options, RowsError,
};

fn temp(name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("dogana-rows-{}-{name}", std::process::id()));
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn formats_come_from_extensions_or_are_named() {
    // rule: CHECK-08
    assert_eq!(Format::from_path("a.csv"), Some(Format::Csv));
    assert_eq!(Format::from_path("a.NDJSON"), Some(Format::Ndjson));
    assert_eq!(Format::from_path("a.jsonl"), Some(Format::Ndjson));
    assert_eq!(Format::from_path("a.parquet"), Some(Format::Parquet));
    assert_eq!(Format::from_path("a.json"), None);
    assert_eq!(Format::from_path("csv"), None);
    assert!("xlsx".parse::<Format>().is_err());
}

#[test]
fn check_file_detects_the_format_and_refuses_an_unknown_one() {
    // rule: CHECK-08
    let c = orders();
    let text = "id,order_date,deleted\n1,2026-10-26,false\n";
    let path = temp("delivery.csv", text.as_bytes());
    let m = full(&c, 1)
        .content_hash(sha256_bytes(text.as_bytes()))
        .build()
        .unwrap();
    let r = check_file(&path, None, &c, &m, &Options::new()).unwrap();
    assert_failed(&r, &[]);
    let odd = temp("delivery.txt", text.as_bytes());
    assert!(matches!(
        check_file(&odd, None, &c, &m, &Options::new()),
        Err(RowsError::Unsupported(_))
    ));
    let r = check_file(&odd, Some(Format::Csv), &c, &m, &Options::new()).unwrap();
    assert_failed(&r, &[]);
    assert_eq!(sha256_file(&path).unwrap(), sha256_bytes(text.as_bytes()));
    std::fs::remove_file(path).unwrap();
    std::fs::remove_file(odd).unwrap();
}

#[test]
fn the_hashing_reader_hashes_what_passes_through() {
    // rule: CHECK-08
    let data = vec![7u8; 3_000_001];
    let mut r = HashingReader::new(&data[..]);
    let mut head = [0u8; 10];
    r.read_exact(&mut head).unwrap();
    assert_eq!(r.drain().unwrap(), 2_999_991);
    assert_eq!(r.bytes_read(), 3_000_001);
    assert_eq!(r.finish(), sha256_bytes(&data));
}

#[test]
fn the_content_hash_covers_bytes_after_the_last_row() {
    // rule: CHECK-08
    let c = orders();
    let text = "id,order_date,deleted\n1,2026-10-26,false\n\n\n";
    let r = run(
        text,
        Format::Csv,
        &c,
        full(&c, 1).content_hash(sha256_bytes(text.as_bytes())),
    )
    .unwrap();
    assert_failed(&r, &[]);
    assert_eq!(r.bytes, text.len() as u64);
}

#[test]
fn the_callback_sees_every_column_typed_or_raw() {
    // rule: CHECK-06
    let c = orders();
    let text = "id,order_date,updated_at,amount,customer,deleted\n\
                7,2026-10-26,2026-10-26T12:00:00+02:00,120,\"Doe, J\",false\n9,,,,,true\n";
    let mut rows = Vec::new();
    let r = check_rows_with(
        text.as_bytes(),
        Format::Csv,
        &c,
        &changes(&c, 1, 1).build().unwrap(),
        &Options::new(),
        |row| {
            let cells: Vec<Cell<'static>> = row.cells().map(Cell::into_owned).collect();
            rows.push((
                row.line(),
                row.is_tombstone(),
                cells,
                row.raw(3).map(|s| s.into_owned()),
            ));
            Ok::<(), std::io::Error>(())
        },
    )
    .unwrap();
    assert_failed(&r, &[]);
    assert_eq!(rows.len(), 2);
    let (line, tomb, cells, raw) = &rows[0];
    assert_eq!((*line, *tomb), (2, false));
    assert_eq!(
        cells,
        &[
            Cell::Int(7),
            Cell::Date(date("2026-10-26")),
            Cell::Datetime(ts("2026-10-26T10:00:00Z")),
            Cell::Str("120".into()),
            Cell::Str("Doe, J".into()),
            Cell::Bool(false),
        ]
    );
    assert_eq!(raw.as_deref(), Some("120"));
    let (line, tomb, cells, raw) = &rows[1];
    assert_eq!((*line, *tomb), (3, true));
    assert_eq!(cells[1], Cell::Null);
    assert_eq!(raw.as_deref(), Some(""));
}

#[test]
fn a_callback_error_stops_the_check() {
    // rule: GATE-25
    let c = orders();
    let text = "id,order_date,deleted\n1,2026-10-26,false\n2,2026-10-26,false\n";
    let mut calls = 0;
    let err = check_rows_with(
        text.as_bytes(),
        Format::Csv,
        &c,
        &full(&c, 2).build().unwrap(),
        &Options::new(),
        |_| {
            calls += 1;
            Err("the staging table is full")
        },
    )
    .unwrap_err();
    assert_eq!(calls, 1);
    assert!(matches!(err, RowsError::Callback(_)));
    assert_eq!(
        err.to_string(),
        "the row callback failed: the staging table is full"
    );
}

#[test]
fn rows_that_do_not_parse_are_not_handed_to_the_callback() {
    // rule: CHECK-06
    let c = orders();
    let text = "id,order_date,deleted\nx,2026-10-26,false\n2,2026-10-26,false\n";
    let mut lines = Vec::new();
    let r = check_rows_with(
        text.as_bytes(),
        Format::Csv,
        &c,
        &full(&c, 2).build().unwrap(),
        &Options::new(),
        |row| {
            lines.push(row.line());
            Ok::<(), RowsError>(())
        },
    )
    .unwrap();
    assert_failed(&r, &["parse"]);
    assert_eq!(lines, [3]);
}

#[test]
fn a_manifest_for_another_shape_is_an_error_not_a_check() {
    // rule: LOADER-03
    let c = orders();
    let other = dogana::Contract::builder("orders", ["id"])
        .shape("nightly", dogana::Shape::full())
        .column("id", dogana::LogicalType::Int)
        .build()
        .unwrap();
    let m = other.manifest("nightly", ts(T)).rows(0).build().unwrap();
    let err = check_rows(&b"id\n"[..], Format::Csv, &c, &m, &Options::new()).unwrap_err();
    assert!(matches!(err, RowsError::Manifest(_)), "{err}");
}

#[test]
fn reading_errors_are_io_errors() {
    // rule: GATE-25
    struct Broken;
    impl Read for Broken {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk on fire"))
        }
    }
    let c = orders();
    let m = full(&c, 0).build().unwrap();
    for threads in [false, true] {
        let err = check_rows(
            Broken,
            Format::Csv,
            &c,
            &m,
            &Options::new().hash_in_thread(threads),
        )
        .unwrap_err();
        assert!(matches!(err, RowsError::Io(_)), "{err}");
        let err = check_rows(
            Broken,
            Format::Ndjson,
            &c,
            &m,
            &Options::new().hash_in_thread(threads),
        )
        .unwrap_err();
        assert!(matches!(err, RowsError::Io(_)), "{err}");
    }
}

#[cfg(not(feature = "parquet"))]
#[test]
fn parquet_needs_the_feature() {
    // rule: CHECK-01
    let c = orders();
    let m = full(&c, 0).build().unwrap();
    let err = check_rows(&b"PAR1"[..], Format::Parquet, &c, &m, &Options::new()).unwrap_err();
    assert!(matches!(err, RowsError::Unsupported(_)), "{err}");
}

#[test]
fn a_keyless_table_has_no_key_check() {
    // rule: CONTRACT-25
    let c = dogana::Contract::builder("events", Vec::<String>::new())
        .shape("full", dogana::Shape::full())
        .build()
        .unwrap();
    let m = c.manifest("full", ts(T)).rows(2).build().unwrap();
    let r = check_rows(&b"what\nx\nx\n"[..], Format::Csv, &c, &m, &Options::new()).unwrap();
    assert_failed(&r, &[]);
    assert_eq!(detail(&r, "keys"), "not applicable: the table is keyless");
}

#[test]
fn a_large_int_key_set_finds_the_first_repeat() {
    // rule: CHECK-09
    let c = orders();
    let mut text = String::from("id,order_date,deleted\n");
    for i in 0..200_000u64 {
        text.push_str(&format!(
            "{},2026-10-26,false\n",
            i * 2_654_435_761 % 1_000_003
        ));
    }
    // repeat two earlier keys, the one first seen later first
    let key = |i: u64| i * 2_654_435_761 % 1_000_003;
    text.push_str(&format!("{},2026-10-26,false\n", key(12_345)));
    text.push_str(&format!("{},2026-10-26,false\n", key(1)));
    let r = run(&text, Format::Csv, &c, full(&c, 200_002)).unwrap();
    assert_failed(&r, &["keys"]);
    assert_eq!(
        detail(&r, "keys"),
        format!(
            "line 200002, key id={}: a key an earlier row already has (and 1 more repeated keys)",
            12_345u64 * 2_654_435_761 % 1_000_003
        )
    );
    assert_eq!(r.distinct_keys, 200_000);
}
