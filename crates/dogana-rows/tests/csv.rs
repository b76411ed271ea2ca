//! The row checks on CSV deliveries: one test per check (pass and fail) and per kind of bad
//! input.

mod common;

use common::*;
use dogana::{Contract, Deletions, LogicalType, Shape};
use dogana_rows::{check_rows, sha256_bytes, Format, Options, RowsError, CHECK_NAMES};

const HEADER: &str = "id,order_date,updated_at,amount,customer,deleted\n";

fn file(rows: &[&str]) -> String {
    let mut s = HEADER.to_owned();
    for r in rows {
        s.push_str(r);
        s.push('\n');
    }
    s
}

#[test]
fn concepts_tombstone_example_passes() {
    // rule: CHECK-06
    // rule: CHECK-11
    // The concepts' example: a tombstone whose other values are empty.
    let contract = Contract::builder("orders", ["id"])
        .shape("changes", Shape::changes(Deletions::Tombstone))
        .shape("window", Shape::window())
        .window_column("order_date")
        .deleted_column("deleted")
        .column("id", LogicalType::Int)
        .column("order_date", LogicalType::Date)
        .column("deleted", LogicalType::Bool)
        .build()
        .unwrap();
    let text = "id,order_date,amount,deleted\n7,2026-10-26,120,false\n9,,,true\n";
    let r = csv(
        text,
        &contract,
        changes(&contract, 1, 1).content_hash(sha256_bytes(text.as_bytes())),
    );
    assert_failed(&r, &[]);
    assert_eq!((r.live, r.tombstones, r.distinct_keys), (1, 1, 2));
    assert_eq!(r.columns, ["id", "order_date", "amount", "deleted"]);
    let names: Vec<&str> = r.checks.iter().map(|c| c.name()).collect();
    assert_eq!(names, CHECK_NAMES);
}

#[test]
fn rows_pass_when_counts_match() {
    // rule: CHECK-02
    let c = orders();
    let r = csv(
        &file(&[
            "1,2026-10-26,2026-10-26T10:00:00Z,1.5,ann,false",
            "2,,,,,true",
        ]),
        &c,
        changes(&c, 1, 1),
    );
    assert_failed(&r, &[]);
    assert_eq!(
        detail(&r, "rows"),
        "1 live rows and 1 tombstones, as declared"
    );
}

#[test]
fn rows_fail_on_one_live_row_too_many() {
    // rule: CHECK-02
    let c = orders();
    let r = csv(
        &file(&[
            "1,2026-10-26,2026-10-26T10:00:00Z,1.5,ann,false",
            "2,2026-10-26,2026-10-26T11:00:00Z,1.5,bob,false",
        ]),
        &c,
        changes(&c, 1, 0),
    );
    assert_failed(&r, &["rows"]);
    assert_eq!(
        detail(&r, "rows"),
        "the read holds 2 live rows and 0 tombstones; the manifest declares 1 and 0; \
         first live row beyond the declared count: line 3, key id=2"
    );
}

#[test]
fn rows_fail_on_a_missing_tombstone() {
    // rule: CHECK-02
    let c = orders();
    let r = csv(
        &file(&["1,2026-10-26,2026-10-26T10:00:00Z,1.5,ann,false"]),
        &c,
        changes(&c, 1, 1),
    );
    assert_failed(&r, &["rows"]);
}

#[test]
fn deleted_passes_with_true_and_false() {
    // rule: CHECK-03
    let c = orders();
    let r = csv(
        &file(&["1,2026-10-26,2026-10-26T10:00:00Z,1,a,false", "2,,,,,true"]),
        &c,
        changes(&c, 1, 1),
    );
    assert!(r.check("deleted").unwrap().passed());
    assert_eq!(detail(&r, "deleted"), "no null value in deleted");
}

#[test]
fn null_deleted_fails_deleted_and_the_row_count() {
    // rule: CHECK-03
    let c = orders();
    let r = csv(
        &file(&[
            "1,2026-10-26,2026-10-26T10:00:00Z,1,a,false",
            "2,2026-10-26,2026-10-26T11:00:00Z,1,b,",
        ]),
        &c,
        changes(&c, 2, 0),
    );
    assert_failed(&r, &["rows", "deleted"]);
    assert_eq!(
        detail(&r, "deleted"),
        "line 3, key id=2: the deleted column deleted is null"
    );
    assert!(
        detail(&r, "rows").contains("1 rows are neither"),
        "{}",
        detail(&r, "rows")
    );
}

#[test]
fn omitted_deleted_column_makes_every_row_live() {
    // rule: CHECK-04
    let c = orders();
    let text = "id,order_date,updated_at\n1,2026-10-26,2026-10-26T10:00:00Z\n";
    let r = csv(text, &c, changes(&c, 1, 0));
    assert_failed(&r, &[]);
    assert_eq!(
        detail(&r, "deleted"),
        "the file has no deleted column deleted: every row is live (CHECK-04)"
    );
}

#[test]
fn a_tombstone_in_a_shape_without_tombstones_fails_deleted() {
    // rule: CHECK-05
    let c = orders();
    let m = c.manifest("upserts", ts(T)).since(ts(SINCE)).rows(1);
    let r = csv(
        &file(&["1,2026-10-26,2026-10-26T10:00:00Z,1,a,false", "2,,,,,true"]),
        &c,
        m,
    );
    assert_failed(&r, &["rows", "deleted"]);
    assert_eq!(
        detail(&r, "deleted"),
        "line 3, key id=2: a tombstone, and the shape delivers none (CHECK-05)"
    );
}

#[test]
fn a_tombstone_value_present_must_have_its_type() {
    // rule: CHECK-06
    let c = orders();
    let r = csv(&file(&["2,yesterday,,,,true"]), &c, changes(&c, 0, 1));
    assert_failed(&r, &["parse"]);
    assert_eq!(
        detail(&r, "parse"),
        "line 2, key id=2, column order_date: \"yesterday\" is not a date (YYYY-MM-DD)"
    );
}

#[test]
fn keys_pass_when_unique() {
    // rule: CHECK-09
    let c = orders();
    let r = csv(
        &file(&["1,2026-10-26,,1,a,false", "2,2026-10-26,,1,a,false"]),
        &c,
        full(&c, 2),
    );
    assert_failed(&r, &[]);
    assert_eq!(detail(&r, "keys"), "2 keys, non-null and unique");
}

#[test]
fn keys_fail_on_a_repeated_key_live_or_tombstoned() {
    // rule: CHECK-09
    let c = orders();
    let r = csv(
        &file(&[
            "1,2026-10-26,2026-10-26T10:00:00Z,1,a,false",
            "2,2026-10-26,2026-10-26T10:00:00Z,1,a,false",
            "1,,,,,true",
            "2,,,,,true",
        ]),
        &c,
        changes(&c, 2, 2),
    );
    assert_failed(&r, &["keys"]);
    assert_eq!(
        detail(&r, "keys"),
        "line 4, key id=1: a key an earlier row already has (and 1 more repeated keys)"
    );
}

#[test]
fn keys_fail_on_a_null_key() {
    // rule: CHECK-09
    let c = orders();
    let r = csv(&file(&[",2026-10-26,,1,a,false"]), &c, full(&c, 1));
    assert_failed(&r, &["keys"]);
    assert_eq!(detail(&r, "keys"), "line 2: the key column id is null");
}

#[test]
fn composite_and_string_keys_are_exact() {
    // rule: CHECK-09
    let c = Contract::builder("lines", ["invoice", "line"])
        .shape("full", Shape::full())
        .column("invoice", LogicalType::Str)
        .column("line", LogicalType::Int)
        .build()
        .unwrap();
    let ok = "invoice,line\nab,1\na,1\nb,1\nab,2\n\"a,b\",1\n";
    let r = check_rows(
        ok.as_bytes(),
        Format::Csv,
        &c,
        &c.manifest("full", ts(T)).rows(5).build().unwrap(),
        &Options::new(),
    )
    .unwrap();
    assert_failed(&r, &[]);
    assert_eq!(r.distinct_keys, 5);
    let dup = "invoice,line\nab,1\nb,2\nab,1\n";
    let r = check_rows(
        dup.as_bytes(),
        Format::Csv,
        &c,
        &c.manifest("full", ts(T)).rows(3).build().unwrap(),
        &Options::new(),
    )
    .unwrap();
    assert_failed(&r, &["keys"]);
    assert_eq!(
        detail(&r, "keys"),
        "line 4, key (invoice=\"ab\", line=1): a key an earlier row already has"
    );
}

#[test]
fn datetime_keys_compare_as_instants() {
    // rule: CHECK-09
    // rule: DOMAIN-08
    let c = Contract::builder("ticks", ["at"])
        .shape("full", Shape::full())
        .column("at", LogicalType::Datetime)
        .build()
        .unwrap();
    let text = "at\n2026-10-26T02:00:00+02:00\n2026-10-26T00:00:00Z\n";
    let r = check_rows(
        text.as_bytes(),
        Format::Csv,
        &c,
        &c.manifest("full", ts(T)).rows(2).build().unwrap(),
        &Options::new(),
    )
    .unwrap();
    assert_failed(&r, &["keys"]);
    assert_eq!(
        detail(&r, "keys"),
        "line 3, key at=2026-10-26T00:00:00+00:00: a key an earlier row already has"
    );
}

#[test]
fn window_passes_inside_the_window() {
    // rule: CHECK-10
    let c = orders();
    let r = csv(
        &file(&["1,2026-10-20,,1,a,false", "2,2026-10-26,,1,a,false"]),
        &c,
        window(&c, "2026-10-20", "2026-10-26", 2),
    );
    assert_failed(&r, &[]);
}

#[test]
fn window_fails_outside_the_window() {
    // rule: CHECK-10
    let c = orders();
    let r = csv(
        &file(&[
            "1,2026-10-20,,1,a,false",
            "2,2026-10-27,,1,a,false",
            "3,2026-10-19,,1,a,false",
        ]),
        &c,
        window(&c, "2026-10-20", "2026-10-26", 3),
    );
    assert_failed(&r, &["window"]);
    assert_eq!(
        detail(&r, "window"),
        "line 3, key id=2: window value 2026-10-27 is outside the window [2026-10-20, 2026-10-26] \
         (and 1 more values outside the window)"
    );
}

#[test]
fn window_fails_on_a_null_live_value_even_for_the_whole_table() {
    // rule: CHECK-10
    let c = orders();
    let r = csv(&file(&["1,,,1,a,false"]), &c, full(&c, 1));
    assert_failed(&r, &["window"]);
    assert_eq!(
        detail(&r, "window"),
        "line 2, key id=1: the window value is null"
    );
}

#[test]
fn a_tombstone_window_value_may_be_null_but_not_outside() {
    // rule: CHECK-11
    let c = orders();
    let m = |c: &Contract| {
        c.manifest("wchanges", ts(T))
            .since(ts(SINCE))
            .window(dogana::Window::new(date("2026-10-20"), date("2026-10-26")))
            .rows(0)
            .tombstones(1)
    };
    let r = csv(&file(&["9,,,,,true"]), &c, m(&c));
    assert_failed(&r, &[]);
    let r = csv(&file(&["9,2026-10-27,,,,true"]), &c, m(&c));
    assert_failed(&r, &["window"]);
}

#[test]
fn cursor_passes_inside_since_produced_at() {
    // rule: CHECK-12
    let c = orders();
    let r = csv(
        &file(&[
            "1,2026-10-26,2026-10-26T00:00:00.000001Z,1,a,false",
            "2,2026-10-26,2026-10-27T00:00:00Z,1,a,false",
            "3,2026-10-26,2026-10-27T02:00:00+02:00,1,a,false",
        ]),
        &c,
        changes(&c, 3, 0),
    );
    assert_failed(&r, &[]);
}

#[test]
fn cursor_fails_at_since_or_after_produced_at() {
    // rule: CHECK-12
    let c = orders();
    let r = csv(
        &file(&[
            "1,2026-10-26,2026-10-26T00:00:00Z,1,a,false",
            "2,2026-10-26,2026-10-27T00:00:00.000001Z,1,a,false",
        ]),
        &c,
        changes(&c, 2, 0),
    );
    assert_failed(&r, &["cursor"]);
    assert_eq!(
        detail(&r, "cursor"),
        "line 2, key id=1: the cursor 2026-10-26T00:00:00+00:00 is outside \
         (2026-10-26T00:00:00+00:00, 2026-10-27T00:00:00+00:00] (and 1 more rows)"
    );
}

#[test]
fn cursor_fails_on_a_null_live_cursor() {
    // rule: CHECK-12
    let c = orders();
    let r = csv(&file(&["1,2026-10-26,,1,a,false"]), &c, changes(&c, 1, 0));
    assert_failed(&r, &["cursor"]);
    assert_eq!(
        detail(&r, "cursor"),
        "line 2, key id=1: a live row's cursor is null"
    );
}

#[test]
fn int_cursor_of_a_sequence_read_is_in_since_generation() {
    // rule: CHECK-13
    let c = sequenced();
    let ok = "id,seq,deleted\n1,11,false\n2,20,false\n";
    let r = check_rows(
        ok.as_bytes(),
        Format::Csv,
        &c,
        &seq_manifest(&c, 10, 20, 2, 0),
        &Options::new(),
    )
    .unwrap();
    assert_failed(&r, &[]);
    let bad = "id,seq,deleted\n1,10,false\n2,21,false\n";
    let r = check_rows(
        bad.as_bytes(),
        Format::Csv,
        &c,
        &seq_manifest(&c, 10, 20, 2, 0),
        &Options::new(),
    )
    .unwrap();
    assert_failed(&r, &["cursor"]);
    assert_eq!(
        detail(&r, "cursor"),
        "line 2, key id=1: the cursor 10 is outside (10, 20] (and 1 more rows)"
    );
}

#[test]
fn a_tombstone_cursor_is_null_or_inside() {
    // rule: CHECK-14
    let c = sequenced();
    let ok = "id,seq,deleted\n1,,true\n2,15,true\n";
    let r = check_rows(
        ok.as_bytes(),
        Format::Csv,
        &c,
        &seq_manifest(&c, 10, 20, 0, 2),
        &Options::new(),
    )
    .unwrap();
    assert_failed(&r, &[]);
    let bad = "id,seq,deleted\n1,,true\n2,25,true\n";
    let r = check_rows(
        bad.as_bytes(),
        Format::Csv,
        &c,
        &seq_manifest(&c, 10, 20, 0, 2),
        &Options::new(),
    )
    .unwrap();
    assert_failed(&r, &["cursor"]);
    assert_eq!(
        detail(&r, "cursor"),
        "line 3, key id=2: a tombstone's cursor 25 is outside (10, 20]"
    );
}

#[test]
fn cursor_is_not_applicable_without_a_cursor_column_or_for_a_complete_read() {
    // rule: CHECK-15
    let c = orders();
    let r = csv(
        &file(&["1,2026-10-26,2030-01-01T00:00:00Z,1,a,false"]),
        &c,
        full(&c, 1),
    );
    assert_failed(&r, &[]);
    assert_eq!(
        detail(&r, "cursor"),
        "not applicable: a complete read is not a read of changes"
    );
    let keyed = Contract::builder("t", ["id"])
        .shape("changes", Shape::changes(Deletions::None))
        .column("id", LogicalType::Int)
        .build()
        .unwrap();
    let m = keyed
        .manifest("changes", ts(T))
        .since(ts(SINCE))
        .rows(1)
        .build()
        .unwrap();
    let r = check_rows(
        "id,updated_at\n1,1999-01-01T00:00:00Z\n".as_bytes(),
        Format::Csv,
        &keyed,
        &m,
        &Options::new(),
    )
    .unwrap();
    assert_failed(&r, &[]);
    assert_eq!(
        detail(&r, "cursor"),
        "not applicable: the contract has no cursor column (CHECK-15)"
    );
}

#[test]
fn schema_hash_passes_for_the_declared_columns() {
    // rule: CHECK-07
    // rule: CONTRACT-18
    let c = orders_hashed();
    let r = csv(&file(&["1,2026-10-26,,1.5,ann,false"]), &c, full(&c, 1));
    assert_failed(&r, &[]);
    assert_eq!(r.column_hash.as_deref(), c.schema_hash());
}

#[test]
fn schema_hash_fails_for_other_columns() {
    // rule: CHECK-07
    let c = orders_hashed();
    let text = "id,order_date,updated_at,customer,amount,deleted\n1,2026-10-26,,ann,1.5,false\n";
    let r = csv(text, &c, full(&c, 1));
    assert_failed(&r, &["schema_hash"]);
    assert!(detail(&r, "schema_hash").starts_with(
        "the loaded columns (id int, order_date date, updated_at datetime, customer str, amount float) hash to "
    ), "{}", detail(&r, "schema_hash"));
}

#[test]
fn schema_hash_fails_for_a_column_the_receiver_does_not_know() {
    // rule: CHECK-07
    let c = orders_hashed();
    let text =
        "id,order_date,updated_at,amount,customer,note,deleted\n1,2026-10-26,,1.5,ann,hi,false\n";
    let r = csv(text, &c, full(&c, 1));
    assert_failed(&r, &["schema_hash"]);
    assert_eq!(
        detail(&r, "schema_hash"),
        "the file has columns the receiver's column list does not name: note"
    );
}

#[test]
fn schema_hash_without_column_types_is_the_receivers_error() {
    // rule: CHECK-07
    let c = orders_hashed();
    let m = full(&c, 1).build().unwrap();
    let err = check_rows(
        file(&["1,2026-10-26,,1.5,ann,false"]).as_bytes(),
        Format::Csv,
        &c,
        &m,
        &Options::new(),
    )
    .unwrap_err();
    assert!(
        matches!(err, RowsError::ColumnTypesRequired(ref cols) if cols == &["amount", "customer"]),
        "{err}"
    );
}

#[test]
fn schema_hash_is_not_applicable_without_a_declared_hash() {
    // rule: CONTRACT-20
    let c = orders();
    let r = check_rows(
        file(&["1,2026-10-26,,1.5,ann,false"]).as_bytes(),
        Format::Csv,
        &c,
        &full(&c, 1).build().unwrap(),
        &Options::new(),
    )
    .unwrap();
    assert_failed(&r, &[]);
    assert_eq!(
        detail(&r, "schema_hash"),
        "not applicable: the contract declares no schema_hash"
    );
}

#[test]
fn content_hash_passes_for_the_declared_bytes() {
    // rule: CHECK-08
    let c = orders();
    let text = file(&["1,2026-10-26,,1.5,ann,false"]);
    let r = csv(
        &text,
        &c,
        full(&c, 1).content_hash(sha256_bytes(text.as_bytes())),
    );
    assert_failed(&r, &[]);
    assert_eq!(r.content_sha256, sha256_bytes(text.as_bytes()));
    assert_eq!(r.bytes, text.len() as u64);
}

#[test]
fn content_hash_fails_for_other_bytes() {
    // rule: CHECK-08
    let c = orders();
    let text = file(&["1,2026-10-26,,1.5,ann,false"]);
    let r = csv(&text, &c, full(&c, 1).content_hash(sha256_bytes(b"other")));
    assert_failed(&r, &["content_hash"]);
}

#[test]
fn naive_datetime_fails_parse() {
    // rule: CHECK-17
    let c = orders();
    let r = csv(
        &file(&["1,2026-10-26,2026-10-26T10:00:00,1,a,false"]),
        &c,
        changes(&c, 1, 0),
    );
    assert_failed(&r, &["parse"]);
    assert_eq!(
        detail(&r, "parse"),
        "line 2, key id=1, column updated_at: \"2026-10-26T10:00:00\" has no UTC offset; \
         a datetime in a read carries Z or ±HH:MM (CHECK-17)"
    );
}

#[test]
fn a_value_that_does_not_parse_as_its_type_fails_parse() {
    // rule: CHECK-06
    let c = orders();
    let r = csv(&file(&["x1,2026-10-26,,1,a,false"]), &c, full(&c, 1));
    assert_failed(&r, &["parse"]);
    assert_eq!(
        detail(&r, "parse"),
        "line 2, column id: \"x1\" is not an int (-?[0-9]+ within 64 bits)"
    );
    let r = csv(&file(&["1,2026-10-26,,1,a,maybe"]), &c, full(&c, 1));
    assert_failed(&r, &["parse", "rows"]);
}

#[test]
fn a_ragged_row_fails_parse() {
    // rule: CHECK-02
    let c = orders();
    let r = csv(
        &file(&["1,2026-10-26,,1,a,false", "2,2026-10-26,,1,false"]),
        &c,
        full(&c, 2),
    );
    assert_failed(&r, &["parse", "rows"]);
    assert_eq!(
        detail(&r, "parse"),
        "line 3: 5 fields where the header has 6 (a ragged or truncated row)"
    );
}

#[test]
fn a_truncated_file_fails() {
    // rule: TRUST-03
    let c = orders();
    let whole = file(&["1,2026-10-26,,1,a,false", "2,2026-10-26,,1,b,false"]);
    let cut = &whole[..whole.len() - 9];
    let r = csv(
        cut,
        &c,
        full(&c, 2).content_hash(sha256_bytes(whole.as_bytes())),
    );
    assert_failed(&r, &["parse", "rows", "content_hash"]);
    assert!(
        detail(&r, "parse").starts_with("line 3: 4 fields"),
        "{}",
        detail(&r, "parse")
    );
}

#[test]
fn invalid_utf8_fails_parse() {
    // rule: CHECK-06
    let c = orders();
    let mut bytes = file(&[]).into_bytes();
    bytes.extend_from_slice(b"1,2026-10-26,,1,caf\xe9,false\n");
    let r = check_rows(
        &bytes[..],
        Format::Csv,
        &c,
        &full(&c, 1).build().unwrap(),
        &options(),
    )
    .unwrap();
    assert_failed(&r, &["parse"]);
    assert_eq!(
        detail(&r, "parse"),
        "line 2, key id=1, column customer: not valid UTF-8: \"caf\u{fffd}\""
    );
}

#[test]
fn a_missing_key_column_fails_keys() {
    // rule: CHECK-09
    let c = orders();
    let text = "order_date,deleted\n2026-10-26,false\n";
    let r = csv(text, &c, full(&c, 1));
    assert_failed(&r, &["keys"]);
    assert_eq!(detail(&r, "keys"), "the file has no key column id");
}

#[test]
fn a_missing_window_or_cursor_column_fails_its_check() {
    // rule: CHECK-10
    // rule: CHECK-12
    let c = orders();
    let r = csv("id,deleted\n1,false\n", &c, changes(&c, 1, 0));
    assert_failed(&r, &["window", "cursor"]);
    assert_eq!(
        detail(&r, "window"),
        "the file has no window column order_date"
    );
    assert_eq!(
        detail(&r, "cursor"),
        "the file has no cursor column updated_at"
    );
}

#[test]
fn an_empty_file_fails_parse() {
    // rule: CHECK-02
    let c = orders();
    let r = csv("", &c, full(&c, 0));
    assert_failed(&r, &["parse"]);
    assert_eq!(
        detail(&r, "parse"),
        "the file is empty: a CSV delivery begins with a header row"
    );
}

#[test]
fn a_header_only_file_is_an_honest_empty_read() {
    // rule: CHECK-18
    let c = orders_hashed();
    let r = csv(HEADER, &c, changes(&c, 0, 0));
    assert_failed(&r, &[]);
}

#[test]
fn a_repeated_header_column_fails_parse() {
    // rule: CHECK-07
    let c = orders();
    let r = csv("id,id,order_date\n1,2,2026-10-26\n", &c, full(&c, 1));
    assert_failed(&r, &["parse"]);
    assert_eq!(
        detail(&r, "parse"),
        "line 1: column id appears twice in the header"
    );
}

#[test]
fn quoted_fields_bom_and_crlf_are_read() {
    // rule: CHECK-18
    let c = orders_hashed();
    let text = "\u{feff}id,order_date,updated_at,amount,customer,deleted\r\n\
                1,2026-10-26,,1.5,\"Doe, \"\"J\"\"\nline two\",false\r\n\
                2,2026-10-26,,1.5,plain,false\r\n";
    let r = csv(
        text,
        &c,
        full(&c, 2).content_hash(sha256_bytes(text.as_bytes())),
    );
    assert_failed(&r, &[]);
    assert_eq!(r.columns[0], "id");
}

#[test]
fn hashing_in_one_thread_or_two_gives_the_same_report() {
    // rule: CHECK-08
    let c = orders();
    let mut text = HEADER.to_owned();
    for i in 0..50_000 {
        if i % 7 == 0 {
            // quoted fields spanning lines, some across the 1 MiB chunks
            text.push_str(&format!(
                "{i},2026-10-26,2026-10-26T10:00:00Z,1.5,\"c{i},\n\"\"{}\"\"\",false\r\n",
                "x".repeat(i % 300)
            ));
        } else {
            text.push_str(&format!(
                "{i},2026-10-26,2026-10-26T10:00:00Z,1.5,c{i},false\n"
            ));
        }
    }
    let m = changes(&c, 50_000, 0)
        .content_hash(sha256_bytes(text.as_bytes()))
        .build()
        .unwrap();
    let one = check_rows(
        text.as_bytes(),
        Format::Csv,
        &c,
        &m,
        &options().hash_in_thread(false),
    )
    .unwrap();
    let mut two = check_rows(text.as_bytes(), Format::Csv, &c, &m, &options()).unwrap();
    assert_failed(&one, &[]);
    assert_eq!(one.records, 50_000);
    // the key set's layout depends on its random seed
    two.key_set_bytes = one.key_set_bytes;
    assert_eq!(one, two);
}

#[test]
fn one_thread_or_two_find_the_same_faults_and_rows() {
    // rule: CHECK-06
    // rule: CHECK-09
    // A file of several chunks with faults of every kind, some at chunk boundaries; a slow
    // callback lets the second thread run ahead (and parse values for the calling thread).
    let c = orders();
    let mut text = HEADER.to_owned();
    for i in 0..60_000u64 {
        let row = match i % 997 {
            1 => format!("{i},2026-13-26,2026-10-26T10:00:00Z,1.5,c{i},false"),
            2 => format!("{i},2026-10-26,2026-10-26T10:00:00,1.5,c{i},false"),
            3 => format!("{},2026-10-26,2026-10-26T10:00:00Z,1.5,c{i},false", i - 3),
            4 => format!("{i},2026-10-26,2026-10-26T10:00:00Z,1.5"),
            5 => format!("x{i},2026-10-26,2026-10-26T10:00:00+02:00,1.5,c{i},maybe"),
            6 => format!("{i},2026-10-26,2026-10-26T10:00:00Z,1.5,\"c\n{i}\",true"),
            7 => format!("{i},,,1.5,\u{e9},"),
            _ => format!("{i},2026-10-26,2026-10-26T10:00:00.5-01:30,1.5,c{i},false"),
        };
        text.push_str(&row);
        text.push_str(if i % 5 == 0 { "\r\n" } else { "\n" });
    }
    let m = changes(&c, 59_000, 60).build().unwrap();
    let run = |threads: bool| {
        let mut rows = Vec::new();
        let report = dogana_rows::check_rows_with(
            text.as_bytes(),
            Format::Csv,
            &c,
            &m,
            &options().hash_in_thread(threads),
            |row| {
                let cells: Vec<String> = row.cells().map(|c| format!("{c:?}")).collect();
                rows.push((row.line(), row.is_tombstone(), cells));
                Ok::<(), RowsError>(())
            },
        )
        .unwrap();
        (report, rows)
    };
    let (one, rows_one) = run(false);
    let (mut two, rows_two) = run(true);
    assert!(!one.passed());
    assert!(one.records >= 59_900, "{}", one.records);
    two.key_set_bytes = one.key_set_bytes;
    assert_eq!(one, two);
    assert_eq!(rows_one, rows_two);
    // without a callback, clean rows are counted from their parsed values: the same report
    let mut clean = check_rows(text.as_bytes(), Format::Csv, &c, &m, &options()).unwrap();
    clean.key_set_bytes = one.key_set_bytes;
    assert_eq!(one, clean);
}

#[test]
fn a_semicolon_delimiter_can_be_named() {
    // rule: CHECK-18
    let c = orders();
    let text = "id;order_date;deleted\n1;2026-10-26;false\n";
    let r = check_rows(
        text.as_bytes(),
        Format::Csv,
        &c,
        &full(&c, 1).build().unwrap(),
        &Options::new().delimiter(b';'),
    )
    .unwrap();
    assert_failed(&r, &[]);
}

#[test]
fn repeats_on_one_line_are_reported_the_same_every_time() {
    // rule: CHECK-09
    // bare CRs end records inside one line: two keys repeated on line 3; the report names the
    // smaller key, whatever the random seed of the key set (found by the csv_rows fuzz target)
    let c = orders();
    let text = format!(
        "{HEADER}7,2026-10-26,,1.5,a,false\r2,2026-10-26,,1.5,b,false\n\
         7,2026-10-26,,1.5,c,false\r2,2026-10-26,,1.5,d,false\n"
    );
    for _ in 0..16 {
        let r = csv(&text, &c, full(&c, 4));
        assert_eq!(
            r.check("keys").unwrap().detail(),
            "line 3, key id=2: a key an earlier row already has (and 1 more repeated keys)"
        );
    }
}

#[test]
fn a_file_that_ends_inside_quotes_is_truncated() {
    // rule: CHECK-02, TRUST-03
    let c = orders();
    let ok = "1,2026-10-26,,1,a,false\n";
    // the quote opens on line 3 and the file ends inside it
    let text = format!("{HEADER}{ok}2,2026-10-26,,1,\"Doe, J\n");
    for one_thread in [false, true] {
        let r = check_rows(
            text.as_bytes(),
            Format::Csv,
            &c,
            &full(&c, 2).build().unwrap(),
            &options().hash_in_thread(!one_thread),
        )
        .unwrap();
        assert_failed(&r, &["parse", "rows"]);
        assert_eq!(
            detail(&r, "parse"),
            "line 3: the file ends inside the quoted field opened on line 3: the file is \
             truncated, or that quote is never closed"
        );
        assert_eq!(r.records, 2);
    }
    // closed, the same file passes
    let closed = format!("{HEADER}{ok}2,2026-10-26,,1,\"Doe, J\",false");
    assert_failed(&csv(&closed, &c, full(&c, 2)), &[]);
}

#[test]
fn an_unterminated_quote_mid_file_names_the_line_it_opened_on() {
    // rule: CHECK-02
    let c = orders();
    // a record of line 3 whose second quoted field opens on line 4 and never closes: the
    // rows after it are swallowed into it
    let text = format!(
        "{HEADER}1,2026-10-26,,1,a,false\n2,2026-10-26,,\"1\n.5\",\"b,false\n3,2026-10-26,,1,c,false\n4,2026-10-26,,1,d,false\n"
    );
    let r = csv(&text, &c, full(&c, 4));
    assert_failed(&r, &["parse", "rows"]);
    assert!(
        detail(&r, "parse")
            .starts_with("line 3: the file ends inside the quoted field opened on line 4:"),
        "{}",
        detail(&r, "parse")
    );
    // a quote inside an unquoted field is a plain byte, and a doubled quote a quote
    let fine = format!("{HEADER}1,2026-10-26,,1,a\"b,false\n2,2026-10-26,,1,\"x\"\"\",false\n");
    assert_failed(&csv(&fine, &c, full(&c, 2)), &[]);
}

#[test]
fn a_header_that_ends_inside_quotes_is_no_header() {
    // rule: CHECK-02
    let c = orders();
    let r = csv("\"id,order_date\n1,2026-10-26\n", &c, full(&c, 1));
    assert_failed(&r, &["parse", "rows"]);
    assert_eq!(
        detail(&r, "parse"),
        "line 1: the file ends inside the quoted field opened on line 1: the file is \
         truncated, or that quote is never closed"
    );
}

#[test]
fn a_first_line_of_megabytes_is_no_header_and_is_not_held() {
    // rule: TRUST-07 (what a sender controls is bounded), CHECK-08
    let c = orders();
    for quoted in [false, true] {
        let mut text = if quoted {
            "\"".to_owned()
        } else {
            String::new()
        };
        text.push_str(&"a".repeat(3 << 20));
        text.push_str("\n1\n");
        let m = full(&c, 1).content_hash(sha256_bytes(text.as_bytes()));
        for one_thread in [false, true] {
            let r = check_rows(
                text.as_bytes(),
                Format::Csv,
                &c,
                &m.clone().build().unwrap(),
                &options().hash_in_thread(!one_thread),
            )
            .unwrap();
            // every byte is still hashed
            assert_failed(&r, &["parse", "rows"]);
            assert!(
                detail(&r, "parse").starts_with(
                    "line 1: the first line is longer than 1048576 bytes, and a header names \
                     columns of at most 1024 bytes each"
                ),
                "{}",
                detail(&r, "parse")
            );
            assert!(r.columns.is_empty());
        }
    }
    // a column name over 1,024 bytes, in a header that is not too long
    let name = "n".repeat(5000);
    let r = csv(&format!("id,{name}\n1,x\n"), &c, full(&c, 1));
    assert_eq!(
        detail(&r, "parse"),
        format!(
            "line 1: the name of column 2 is \"{}…\" (5000 bytes): a column name is at most \
             1024 bytes (CONTRACT-48)",
            "n".repeat(64)
        )
    );
}

#[test]
fn a_long_bad_value_is_shown_cut_with_its_length() {
    // rule: CHECK-06, TRUST-07
    let c = orders();
    let bad = "x".repeat(1 << 20);
    let r = csv(
        &file(&[&format!("{bad},2026-10-26,,1,a,false")]),
        &c,
        full(&c, 1),
    );
    assert_eq!(
        detail(&r, "parse"),
        format!(
            "line 2, column id: \"{}…\" (1048576 bytes) is not an int (-?[0-9]+ within 64 bits)",
            "x".repeat(40)
        )
    );
}

#[test]
fn an_integer_too_large_for_an_int_key_says_so() {
    // rule: CHECK-06, WIRE-25
    let c = orders();
    let r = csv(
        &file(&["99999999999999999999,2026-10-26,,1,a,false"]),
        &c,
        full(&c, 1),
    );
    assert_eq!(
        detail(&r, "parse"),
        "line 2, column id: \"99999999999999999999\" is an integer outside the 64-bit range of \
         an int (-9223372036854775808 to 9223372036854775807); type larger keys as str (WIRE-25)"
    );
}
