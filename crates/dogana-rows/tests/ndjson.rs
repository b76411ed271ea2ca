//! The row checks on NDJSON deliveries.

mod common;

use common::*;
use dogana_rows::{check_rows, sha256_bytes, Format, Options, RowsError};

fn lines(rows: &[&str]) -> String {
    let mut s = String::new();
    for r in rows {
        s.push_str(r);
        s.push('\n');
    }
    s
}

const LIVE: &str = r#"{"id":1,"order_date":"2026-10-26","updated_at":"2026-10-26T10:00:00Z","amount":1.5,"customer":"ann","deleted":false}"#;
const TOMB: &str =
    r#"{"id":9,"order_date":null,"updated_at":null,"amount":null,"customer":null,"deleted":true}"#;

#[test]
fn an_honest_ndjson_delivery_passes_every_check() {
    // rule: CHECK-18
    let c = orders_hashed();
    let text = lines(&[LIVE, TOMB]);
    let r = ndjson(
        &text,
        &c,
        changes(&c, 1, 1).content_hash(sha256_bytes(text.as_bytes())),
    );
    assert_failed(&r, &[]);
    assert_eq!(
        r.columns,
        [
            "id",
            "order_date",
            "updated_at",
            "amount",
            "customer",
            "deleted"
        ]
    );
    assert_eq!(r.column_hash.as_deref(), c.schema_hash());
}

#[test]
fn rows_fail_when_counts_differ() {
    // rule: CHECK-02
    let c = orders();
    let r = ndjson(&lines(&[LIVE, TOMB]), &c, changes(&c, 2, 1));
    assert_failed(&r, &["rows"]);
    assert_eq!(
        detail(&r, "rows"),
        "the read holds 1 live rows and 1 tombstones; the manifest declares 2 and 1"
    );
}

#[test]
fn an_explicit_null_deleted_fails() {
    // rule: CHECK-03
    let c = orders();
    let r = ndjson(
        &lines(&[
            r#"{"id":1,"order_date":"2026-10-26","updated_at":"2026-10-26T10:00:00Z","deleted":null}"#,
        ]),
        &c,
        changes(&c, 1, 0),
    );
    assert_failed(&r, &["rows", "deleted"]);
    assert_eq!(
        detail(&r, "deleted"),
        "line 1, key id=1: the deleted column deleted is null"
    );
}

#[test]
fn a_line_without_the_deleted_key_is_live() {
    // rule: CHECK-04
    let c = orders();
    let r = ndjson(
        &lines(&[
            r#"{"id":1,"order_date":"2026-10-26","updated_at":"2026-10-26T10:00:00Z"}"#,
            TOMB,
        ]),
        &c,
        changes(&c, 1, 1),
    );
    assert_failed(&r, &[]);
}

#[test]
fn a_tombstone_in_a_shape_without_tombstones_fails_deleted() {
    // rule: CHECK-05
    let c = orders();
    let m = c.manifest("upserts", ts(T)).since(ts(SINCE)).rows(1);
    let r = ndjson(&lines(&[LIVE, TOMB]), &c, m);
    assert_failed(&r, &["rows", "deleted"]);
}

#[test]
fn schema_hash_fails_for_a_key_the_column_list_does_not_name() {
    // rule: CHECK-07
    let c = orders_hashed();
    let r = ndjson(
        &lines(&[
            r#"{"id":1,"order_date":"2026-10-26","updated_at":"2026-10-26T10:00:00Z","note":"x","deleted":false}"#,
        ]),
        &c,
        full(&c, 1),
    );
    assert_failed(&r, &["schema_hash"]);
    assert_eq!(
        detail(&r, "schema_hash"),
        "the file has columns the receiver's column list does not name: note"
    );
}

#[test]
fn ndjson_columns_hash_in_the_column_lists_order() {
    // rule: CHECK-07
    // rule: CONTRACT-16
    // keys in another order, and a column of nulls left out: the same columns
    let c = orders_hashed();
    let r = ndjson(
        &lines(&[
            r#"{"deleted":false,"customer":"a","updated_at":"2026-10-26T10:00:00Z","order_date":"2026-10-26","id":1}"#,
        ]),
        &c,
        changes(&c, 1, 0),
    );
    assert_failed(&r, &[]);
    assert_eq!(r.column_hash.as_deref(), c.schema_hash());
    // the list in another order is another hash
    let swapped = Options::new().column_types([
        ("id", "int"),
        ("order_date", "date"),
        ("updated_at", "datetime"),
        ("customer", "str"),
        ("amount", "float"),
    ]);
    let r = check_rows(
        lines(&[LIVE]).as_bytes(),
        Format::Ndjson,
        &c,
        &changes(&c, 1, 0).build().unwrap(),
        &swapped,
    )
    .unwrap();
    assert_failed(&r, &["schema_hash"]);
}

#[test]
fn schema_hash_of_an_empty_ndjson_read_passes() {
    // rule: CHECK-07
    // rule: CHECK-18
    let c = orders_hashed();
    let r = ndjson("", &c, changes(&c, 0, 0));
    assert_failed(&r, &[]);
    assert_eq!(r.column_hash.as_deref(), c.schema_hash());
    let m = changes(&c, 0, 0).build().unwrap();
    let r = check_rows(&b""[..], Format::Ndjson, &c, &m, &Options::new()).unwrap();
    assert_failed(&r, &[]);
    assert_eq!(
        detail(&r, "schema_hash"),
        "the read has no rows, so the file names no columns"
    );
}

#[test]
fn content_hash_fails_for_other_bytes() {
    // rule: CHECK-08
    let c = orders();
    let r = ndjson(
        &lines(&[LIVE]),
        &c,
        changes(&c, 1, 0).content_hash(sha256_bytes(b"x")),
    );
    assert_failed(&r, &["content_hash"]);
}

#[test]
fn keys_fail_on_repeats_and_nulls() {
    // rule: CHECK-09
    let c = orders();
    let r = ndjson(
        &lines(&[LIVE, LIVE, r#"{"id":null,"deleted":true}"#]),
        &c,
        changes(&c, 2, 1),
    );
    assert_failed(&r, &["keys"]);
    assert_eq!(
        detail(&r, "keys"),
        "line 3: the key column id is null; line 2, key id=1: a key an earlier row already has"
    );
}

#[test]
fn window_fails_outside_the_window() {
    // rule: CHECK-10
    let c = orders();
    let r = ndjson(
        &lines(&[LIVE]),
        &c,
        window(&c, "2026-10-20", "2026-10-25", 1),
    );
    assert_failed(&r, &["window"]);
}

#[test]
fn a_tombstone_may_omit_its_window_value() {
    // rule: CHECK-11
    let c = orders();
    let r = ndjson(
        &lines(&[r#"{"id":9,"deleted":true}"#]),
        &c,
        changes(&c, 0, 1),
    );
    assert_failed(&r, &[]);
}

#[test]
fn cursor_fails_outside_the_interval() {
    // rule: CHECK-12
    let c = orders();
    let r = ndjson(
        &lines(&[
            r#"{"id":1,"order_date":"2026-10-26","updated_at":"2026-10-28T00:00:00+01:00","deleted":false}"#,
        ]),
        &c,
        changes(&c, 1, 0),
    );
    assert_failed(&r, &["cursor"]);
}

#[test]
fn int_cursor_and_tombstone_cursor() {
    // rule: CHECK-13
    // rule: CHECK-14
    let c = sequenced();
    let ok = lines(&[
        r#"{"id":1,"seq":12,"deleted":false}"#,
        r#"{"id":2,"seq":null,"deleted":true}"#,
    ]);
    let r = check_rows(
        ok.as_bytes(),
        Format::Ndjson,
        &c,
        &seq_manifest(&c, 10, 20, 1, 1),
        &Options::new(),
    )
    .unwrap();
    assert_failed(&r, &[]);
    let bad = lines(&[
        r#"{"id":1,"seq":12,"deleted":false}"#,
        r#"{"id":2,"seq":21,"deleted":true}"#,
    ]);
    let r = check_rows(
        bad.as_bytes(),
        Format::Ndjson,
        &c,
        &seq_manifest(&c, 10, 20, 1, 1),
        &Options::new(),
    )
    .unwrap();
    assert_failed(&r, &["cursor"]);
}

#[test]
fn a_naive_datetime_fails_parse() {
    // rule: CHECK-17
    let c = orders();
    let r = ndjson(
        &lines(&[
            r#"{"id":1,"order_date":"2026-10-26","updated_at":"2026-10-26T10:00:00","deleted":false}"#,
        ]),
        &c,
        changes(&c, 1, 0),
    );
    assert_failed(&r, &["parse"]);
    assert!(
        detail(&r, "parse").contains("no UTC offset"),
        "{}",
        detail(&r, "parse")
    );
}

#[test]
fn a_value_of_the_wrong_json_type_fails_parse() {
    // rule: CHECK-06
    let c = orders();
    let r = ndjson(
        &lines(&[r#"{"id":"1","order_date":"2026-10-26","deleted":false}"#]),
        &c,
        full(&c, 1),
    );
    assert_failed(&r, &["parse"]);
    assert_eq!(
        detail(&r, "parse"),
        "line 1, column id: \"\\\"1\\\"\" is not an int"
    );
}

#[test]
fn tagged_dates_and_integral_floats_are_accepted() {
    // rule: CHECK-18
    let c = orders();
    let r = ndjson(
        &lines(&[
            r#"{"id":1.0,"order_date":{"$date":"2026-10-26"},"updated_at":{"$datetime":"2026-10-26T10:00:00Z"},"deleted":false}"#,
        ]),
        &c,
        changes(&c, 1, 0),
    );
    assert_failed(&r, &[]);
}

#[test]
fn a_line_that_is_not_json_fails_parse() {
    // rule: CHECK-02
    let c = orders();
    let r = ndjson(
        &lines(&[LIVE, "id,order_date", "[1,2]"]),
        &c,
        changes(&c, 1, 0),
    );
    assert_failed(&r, &["parse"]);
    assert!(
        detail(&r, "parse").starts_with("line 2: not one JSON object"),
        "{}",
        detail(&r, "parse")
    );
    assert!(
        detail(&r, "parse").ends_with("(and 1 more problems)"),
        "{}",
        detail(&r, "parse")
    );
}

#[test]
fn a_truncated_last_line_fails_parse() {
    // rule: TRUST-03
    let c = orders();
    let whole = lines(&[LIVE, LIVE.replace("\"id\":1", "\"id\":2").as_str()]);
    let cut = &whole[..whole.len() - 20];
    let r = ndjson(cut, &c, changes(&c, 2, 0));
    assert_failed(&r, &["parse", "rows"]);
    assert!(
        detail(&r, "parse").contains("(a truncated last line)"),
        "{}",
        detail(&r, "parse")
    );
}

#[test]
fn invalid_utf8_fails_parse() {
    // rule: CHECK-06
    let c = orders();
    let mut bytes = LIVE.replace("ann", "AAA").into_bytes();
    let at = bytes.windows(3).position(|w| w == b"AAA").unwrap();
    bytes[at] = 0xff;
    bytes.push(b'\n');
    let r = check_rows(
        &bytes[..],
        Format::Ndjson,
        &c,
        &changes(&c, 1, 0).build().unwrap(),
        &options(),
    )
    .unwrap();
    assert_failed(&r, &["parse", "rows"]);
}

#[test]
fn a_repeated_key_in_one_object_fails_parse() {
    // rule: CHECK-02
    let c = orders();
    let r = ndjson(
        &lines(&[r#"{"id":1,"id":2,"order_date":"2026-10-26","deleted":false}"#]),
        &c,
        full(&c, 1),
    );
    assert_failed(&r, &["parse", "rows"]);
    assert_eq!(
        detail(&r, "parse"),
        "line 1: key \"id\" appears twice in the object"
    );
}

#[test]
fn a_missing_key_is_a_null_key() {
    // rule: CHECK-09
    let c = orders();
    let r = ndjson(
        &lines(&[r#"{"order_date":"2026-10-26","deleted":false}"#]),
        &c,
        full(&c, 1),
    );
    assert_failed(&r, &["keys"]);
    assert_eq!(detail(&r, "keys"), "line 1: the key column id is null");
}

#[test]
fn blank_lines_and_crlf_are_skipped() {
    // rule: CHECK-18
    let c = orders();
    let text = format!("{LIVE}\r\n\r\n   \n{TOMB}");
    let r = ndjson(&text, &c, changes(&c, 1, 1));
    assert_failed(&r, &[]);
}

#[test]
fn the_callback_gets_json_values_and_typed_bound_columns() {
    // rule: CHECK-06
    let c = orders();
    let text = lines(&[
        r#"{"id":1,"order_date":"2026-10-26","updated_at":"2026-10-26T12:00:00+02:00","amount":1.5,"customer":"a\"b","tags":[1,2],"deleted":false}"#,
    ]);
    let mut seen = Vec::new();
    let r = dogana_rows::check_rows_with(
        text.as_bytes(),
        Format::Ndjson,
        &c,
        &changes(&c, 1, 0).build().unwrap(),
        &Options::new(),
        |row| {
            seen.push(format!("{row:?}"));
            assert_eq!(row.raw(5).as_deref(), Some("[1,2]"));
            assert_eq!(row.raw(4).as_deref(), Some("a\"b"));
            Ok::<(), RowsError>(())
        },
    )
    .unwrap();
    assert_failed(&r, &[]);
    assert_eq!(
        seen,
        [
            r#"{"id": Some(Int(1)), "order_date": Some(Date(Date { days: 20752 })), "updated_at": Some(Datetime(Timestamp { micros: 1793008800000000 })), "amount": Some(Float(1.5)), "customer": Some(Str("a\"b")), "tags": Some(Str("[1,2]")), "deleted": Some(Bool(false))}"#
        ]
    );
}

#[test]
fn a_byte_order_mark_is_named() {
    // rule: CHECK-06
    let c = orders();
    let text = format!("\u{feff}{}", lines(&[LIVE]));
    let r = ndjson(&text, &c, changes(&c, 1, 0));
    assert_failed(&r, &["parse", "rows"]);
    assert_eq!(
        detail(&r, "parse"),
        "line 1: the line starts with a byte order mark (U+FEFF, the bytes EF BB BF), which \
         JSON text does not have (RFC 8259 section 8.1): write the file without one"
    );
}

#[test]
fn an_integer_too_large_for_an_int_key_says_so_as_written() {
    // rule: CHECK-06, WIRE-25
    let c = orders();
    for (written, shown) in [
        ("9223372036854775808", "\"9223372036854775808\""),
        (
            "123456789012345678901234567890",
            "\"123456789012345678901234567890\"",
        ),
        ("-9.3e18", "\"-9.3e18\""),
    ] {
        let line = LIVE.replace("\"id\":1", &format!("\"id\": {written}"));
        let r = ndjson(&lines(&[&line]), &c, changes(&c, 1, 0));
        assert_eq!(
            detail(&r, "parse"),
            format!(
                "line 1, column id: {shown} is an integer outside the 64-bit range of an int \
                 (-9223372036854775808 to 9223372036854775807); type larger keys as str (WIRE-25)"
            )
        );
    }
    // a fraction is not an integer at all
    let line = LIVE.replace("\"id\":1", "\"id\":1.5");
    let r = ndjson(&lines(&[&line]), &c, changes(&c, 1, 0));
    assert!(
        detail(&r, "parse").contains("\"1.5\" is not an int"),
        "{}",
        detail(&r, "parse")
    );
}

#[test]
fn a_key_of_megabytes_is_cut() {
    // rule: CONTRACT-48, TRUST-07
    let c = orders();
    let key = "k".repeat(1 << 20);
    let line = LIVE.replace("\"amount\"", &format!("\"{key}\""));
    let r = ndjson(&lines(&[&line]), &c, changes(&c, 1, 0));
    assert_eq!(
        detail(&r, "parse"),
        format!(
            "line 1: key \"{}…\" (1048576 bytes) is not a column name: a column name is at most \
             1024 bytes (CONTRACT-48)",
            "k".repeat(64)
        )
    );
    assert!(!r.columns.contains(&key));
}
