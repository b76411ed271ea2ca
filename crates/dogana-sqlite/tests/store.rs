//! What is particular to the SQLite store: its tables and view, the two-phase API, column
//! types, value order in SQL, NDJSON.
//!
//! rule: LOADER-09 — this crate is the reference loader on SQLite

use std::path::PathBuf;

use dogana::{Contract, Deletions, LogicalType, Outcome, Shape, Window, Wire};
use dogana_receiver::conformance::{date, orders, orders_csv, sha, ts, Order};
use dogana_sqlite::{DeliverOptions, Store, StoreError};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dogana-sqlite-store-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn base() -> Vec<Order<'static>> {
    vec![
        (1, "2026-10-01", "2026-10-01T10:00:00Z", "10.50", false),
        (2, "2026-10-02", "2026-10-02T10:00:00Z", "20.25", false),
        (3, "2026-10-03", "2026-10-03T10:00:00Z", "30.00", false),
    ]
}

fn now() -> dogana::Timestamp {
    ts("2026-11-01T00:00:00Z")
}

#[test]
fn the_regions_view_shows_the_stored_ledger() {
    // rule: LOADER-10, LOADER-11, LOADER-12, LOADER-13
    let d = dir("view");
    let mut store = Store::open(d.join("s.db")).unwrap();
    let file = d.join("w.csv");
    let text = orders_csv(&base()[1..]);
    std::fs::write(&file, &text).unwrap();
    let m = orders()
        .manifest("window", ts("2026-10-26T06:00:00Z"))
        .window(Window::new(date("2026-10-02"), date("2026-10-03")))
        .rows(2)
        .content_hash(sha(&text))
        .build()
        .unwrap();
    let r = store.deliver(&file, &orders(), &m, now(), None).unwrap();
    assert_eq!(r.receipt.outcome(), Outcome::Accepted);
    let stored = store.ledger("orders").unwrap().unwrap().to_json();
    let conn = store.backend().connection();
    let doc: String = conn
        .query_row(
            "SELECT document FROM dogana_ledgers WHERE table_name = 'orders'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(doc, stored);
    let mut stmt = conn
        .prepare(
            "SELECT table_name, publication_id, region_index, low, high, low_open, high_open,
                    complete_as_of, deletions_as_of
             FROM dogana_regions ORDER BY region_index",
        )
        .unwrap();
    type Row = (
        String,
        String,
        i64,
        Option<String>,
        Option<String>,
        i64,
        i64,
        Option<String>,
        Option<String>,
    );
    let rows: Vec<Row> = stmt
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
                r.get(7)?,
                r.get(8)?,
            ))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(rows.len(), 3);
    let head = r.receipt.publication_id().to_owned();
    assert!(rows.iter().all(|r| r.0 == "orders" && r.1 == head));
    assert_eq!(rows[0].2, 0);
    assert_eq!(rows[0].3.as_deref(), Some("null"));
    assert_eq!(rows[1].3.as_deref(), Some(r#"{"$date":"2026-10-02"}"#));
    assert_eq!(rows[1].4.as_deref(), Some(r#"{"$date":"2026-10-03"}"#));
    assert_eq!((rows[1].5, rows[1].6), (0, 0));
    assert_eq!(rows[1].7.as_deref(), Some("2026-10-26T06:00:00+00:00"));
    assert_eq!(rows[1].8.as_deref(), Some("2026-10-26T06:00:00+00:00"));
    assert_eq!(rows[0].7, None, "unknown regions have null dates");
    // LOADER-13: min ignores nulls; a reader requires every date non-null first
    let (unknown, min): (i64, Option<String>) = conn
        .query_row(
            "SELECT count(*) FILTER (WHERE complete_as_of IS NULL), min(complete_as_of) FROM dogana_regions",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(
        (unknown, min.as_deref()),
        (2, Some("2026-10-26T06:00:00+00:00"))
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn deciding_touches_nothing_and_commit_checks_the_decision() {
    // rule: RECV-06, RECV-09
    let d = dir("two-phase");
    let path = d.join("s.db");
    let mut a = Store::open(&path).unwrap();
    let mut b = Store::open(&path).unwrap();
    let file = d.join("f.csv");
    let text = orders_csv(&base());
    std::fs::write(&file, &text).unwrap();
    let m = orders()
        .manifest("full", ts("2026-10-10T06:00:00Z"))
        .rows(3)
        .content_hash(sha(&text))
        .build()
        .unwrap();
    let decision = a.decide(&file, &orders(), &m, now(), None).unwrap();
    assert_eq!(decision.receipt().outcome(), Outcome::Accepted);
    // nothing is published or recorded before the commit, for any reader
    assert!(b.read_consistent_rows("orders").unwrap().rows.is_empty());
    assert!(b.receipts("orders").unwrap().is_empty());
    assert!(b.ledger("orders").unwrap().is_none());
    // a decision commits only on the handle that made it, and only the latest one
    let other = b.decide(&file, &orders(), &m, now(), None).unwrap();
    assert!(matches!(a.commit(other), Err(StoreError::ForeignDecision)));
    let replaced = a.decide(&file, &orders(), &m, now(), None).unwrap();
    assert!(matches!(
        a.commit(decision),
        Err(StoreError::ForeignDecision)
    ));
    let done = a.commit(replaced).unwrap();
    assert_eq!(done.redecided, 0);
    assert_eq!(b.read_consistent_rows("orders").unwrap().rows.len(), 3);
    // a replay is decided as one and commits nothing
    let replay = b.decide(&file, &orders(), &m, now(), None).unwrap();
    assert!(replay.is_replay());
    assert!(b.commit(replay).unwrap().replayed());
    assert_eq!(b.receipts("orders").unwrap().len(), 1);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn published_columns_are_typed() {
    // rule: PLAN-14, LOADER-07
    let d = dir("types");
    let mut store = Store::open(d.join("s.db")).unwrap();
    let file = d.join("f.csv");
    let text = orders_csv(&base());
    std::fs::write(&file, &text).unwrap();
    let m = orders()
        .manifest("full", ts("2026-10-10T06:00:00Z"))
        .rows(3)
        .content_hash(sha(&text))
        .build()
        .unwrap();
    let options = DeliverOptions::new().column_type("amount", "float");
    let r = store
        .deliver_with(&file, &orders(), &m, now(), None, &options)
        .unwrap();
    assert!(r.accepted());
    let conn = store.backend().connection();
    let types: Vec<(String, String)> = conn
        .prepare("SELECT name, type FROM pragma_table_info('orders')")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let types: Vec<(&str, &str)> = types
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    assert_eq!(
        types,
        [
            ("id", "INTEGER"),
            ("order_date", "TEXT"),
            ("updated_at", "TEXT"),
            ("amount", "REAL")
        ]
    );
    let row: (String, String, String, String) = conn
        .query_row(
            "SELECT typeof(id), typeof(order_date), updated_at, typeof(amount) FROM orders WHERE id = 2",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!(
        row,
        (
            "integer".into(),
            "text".into(),
            "2026-10-02T10:00:00+00:00".into(),
            "real".into()
        )
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// Windows compare in SQL as the protocol orders values: datetimes with fractions, strings by
/// code point.
#[test]
fn sql_order_is_the_protocol_order() {
    // rule: DOMAIN-08, DOMAIN-09, DOMAIN-10, PLAN-04
    let d = dir("order");
    let mut store = Store::open(d.join("s.db")).unwrap();
    let c = Contract::builder("ev", ["k"])
        .shape("full", Shape::full())
        .shape("window", Shape::window())
        .window_column("at")
        .column("k", LogicalType::Str)
        .column("at", LogicalType::Datetime)
        .build()
        .unwrap();
    let full = "k,at\na,2026-10-01T00:00:00Z\nb,2026-10-01T00:00:00.5Z\nc,2026-10-01T02:00:00+02:00\nd,2026-10-01T00:00:01Z\n";
    let file = d.join("full.csv");
    std::fs::write(&file, full).unwrap();
    let m = c
        .manifest("full", ts("2026-10-10T06:00:00Z"))
        .rows(4)
        .build()
        .unwrap();
    assert!(store
        .deliver(&file, &c, &m, now(), None)
        .unwrap()
        .accepted());
    // [00:00:00.000001, 00:00:00.999999] holds b only; c is 00:00:00 in UTC
    let w = "k,at\nb,2026-10-01T00:00:00.75Z\n";
    let file = d.join("w.csv");
    std::fs::write(&file, w).unwrap();
    let m = c
        .manifest("window", ts("2026-10-11T06:00:00Z"))
        .window(Window::new(
            ts("2026-10-01T00:00:00.000001Z"),
            ts("2026-10-01T00:00:00.999999Z"),
        ))
        .rows(1)
        .build()
        .unwrap();
    let r = store.deliver(&file, &c, &m, now(), None).unwrap();
    assert!(
        r.accepted(),
        "{:?}",
        r.receipt.failures().collect::<Vec<_>>()
    );
    let rows = store.read_consistent_rows("ev").unwrap();
    let mut got: Vec<String> = rows.rows.iter().map(|r| format!("{:?}", r)).collect();
    got.sort();
    assert_eq!(
        got,
        [
            r#"[Text("a"), Text("2026-10-01T00:00:00+00:00")]"#,
            r#"[Text("b"), Text("2026-10-01T00:00:00.750000+00:00")]"#,
            r#"[Text("c"), Text("2026-10-01T00:00:00+00:00")]"#,
            r#"[Text("d"), Text("2026-10-01T00:00:01+00:00")]"#,
        ]
    );
    // string windows: code-point order, "é" (U+00E9) after "z"
    let c = Contract::builder("words", ["w"])
        .shape("full", Shape::full())
        .shape("window", Shape::window())
        .window_column("w")
        .column("w", LogicalType::Str)
        .build()
        .unwrap();
    let file = d.join("words.csv");
    std::fs::write(&file, "w\na\nz\n\u{e9}\nZ\n").unwrap();
    let m = c
        .manifest("full", ts("2026-10-10T06:00:00Z"))
        .rows(4)
        .build()
        .unwrap();
    assert!(store
        .deliver(&file, &c, &m, now(), None)
        .unwrap()
        .accepted());
    let file = d.join("words-w.csv");
    std::fs::write(&file, "w\n").unwrap();
    let m = c
        .manifest("window", ts("2026-10-11T06:00:00Z"))
        .window(Window::new("b", "\u{ff}"))
        .rows(0)
        .build()
        .unwrap();
    assert!(store
        .deliver(&file, &c, &m, now(), None)
        .unwrap()
        .accepted());
    let rows = store.read_consistent_rows("words").unwrap();
    let mut got: Vec<String> = rows.rows.iter().map(|r| format!("{:?}", r[0])).collect();
    got.sort();
    assert_eq!(got, [r#"Text("Z")"#, r#"Text("a")"#]);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn ndjson_deliveries() {
    // rule: CHECK-04, PLAN-05, PLAN-06
    let d = dir("ndjson");
    let mut store = Store::open(d.join("s.db")).unwrap();
    let c = Contract::builder("orders", ["id"])
        .shape("full", Shape::full())
        .shape("changes", Shape::changes(Deletions::Tombstone))
        .cursor_column("updated_at")
        .deleted_column("deleted")
        .column("id", LogicalType::Int)
        .column("updated_at", LogicalType::Datetime)
        .column("deleted", LogicalType::Bool)
        .build()
        .unwrap();
    let full = r#"{"id":1,"updated_at":"2026-10-01T10:00:00Z","note":"x","n":1.5}
{"id":2,"updated_at":"2026-10-01T10:00:00Z","note":"y","n":2}
"#;
    let file = d.join("full.ndjson");
    std::fs::write(&file, full).unwrap();
    let m = c
        .manifest("full", ts("2026-10-10T06:00:00Z"))
        .rows(2)
        .build()
        .unwrap();
    assert!(store
        .deliver(&file, &c, &m, now(), None)
        .unwrap()
        .accepted());
    // a changes read whose lines lack "n": null there; a tombstone
    let changes = r#"{"id":1,"updated_at":"2026-10-10T10:00:00Z","note":"x2"}
{"id":2,"deleted":true}
"#;
    let file = d.join("c.jsonl");
    std::fs::write(&file, changes).unwrap();
    let m = c
        .manifest("changes", ts("2026-10-11T06:00:00Z"))
        .since(ts("2026-10-10T06:00:00Z"))
        .rows(1)
        .tombstones(1)
        .build()
        .unwrap();
    let r = store.deliver(&file, &c, &m, now(), None).unwrap();
    assert!(
        r.accepted(),
        "{:?}",
        r.receipt.failures().collect::<Vec<_>>()
    );
    let rows = store.read_consistent_rows("orders").unwrap();
    assert_eq!(rows.columns, ["id", "updated_at", "note", "n"]);
    assert_eq!(rows.rows.len(), 1);
    assert_eq!(format!("{:?}", rows.rows[0][2]), r#"Text("x2")"#);
    assert_eq!(format!("{:?}", rows.rows[0][3]), "Null");
    assert!(store.verify("orders").unwrap().ok());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn an_unknown_format_is_an_error_and_records_nothing() {
    // rule: GATE-25
    let d = dir("format");
    let mut store = Store::open(d.join("s.db")).unwrap();
    let file = d.join("orders.txt");
    std::fs::write(&file, orders_csv(&base())).unwrap();
    let m = orders()
        .manifest("full", ts("2026-10-10T06:00:00Z"))
        .rows(3)
        .build()
        .unwrap();
    assert!(matches!(
        store.deliver(&file, &orders(), &m, now(), None),
        Err(StoreError::Format(_))
    ));
    assert!(store.receipts("orders").unwrap().is_empty());
    let r = store
        .deliver_with(
            &file,
            &orders(),
            &m,
            now(),
            None,
            &DeliverOptions::new().format(dogana_sqlite::Format::Csv),
        )
        .unwrap();
    assert!(r.accepted());
    let _ = std::fs::remove_dir_all(&d);
}

/// A full read of these rows as a file in `d` and its manifest.
fn full(
    d: &std::path::Path,
    name: &str,
    rows: &[Order<'_>],
    at: &str,
) -> (PathBuf, dogana::Manifest) {
    let file = d.join(name);
    let text = orders_csv(rows);
    std::fs::write(&file, &text).unwrap();
    let m = orders()
        .manifest("full", ts(at))
        .rows(rows.len() as u64)
        .content_hash(sha(&text))
        .build()
        .unwrap();
    (file, m)
}

/// The DDL of `name` in the store's main database, if it exists.
fn ddl(store: &Store, name: &str) -> Option<String> {
    store
        .backend()
        .connection()
        .query_row(
            "SELECT sql FROM main.sqlite_master WHERE name = ?1",
            [name],
            |r| r.get(0),
        )
        .ok()
}

/// The whole-table staging tables in the store's main database.
fn staged_tables(store: &Store) -> Vec<String> {
    names(
        store,
        "SELECT name FROM main.sqlite_master WHERE name LIKE 'dogana\\_whole\\_\\_%' ESCAPE '\\'",
    )
}

/// The first column of every row `sql` selects from the store's database.
fn names(store: &Store, sql: &str) -> Vec<String> {
    let conn = store.backend().connection();
    let mut stmt = conn.prepare(sql).unwrap();
    let names = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    names
}

/// Delivers `file` as `m` of `orders`, which must be accepted.
fn accept(store: &mut Store, file: &std::path::Path, m: &dogana::Manifest) {
    let r = store.deliver(file, &orders(), m, now(), None).unwrap();
    assert!(
        r.receipt.accepted(),
        "{:?}",
        r.receipt.failures().collect::<Vec<_>>()
    );
}

fn ids(store: &mut Store) -> Vec<i64> {
    let mut v: Vec<i64> = store
        .read_consistent_rows("orders")
        .unwrap()
        .rows
        .iter()
        .map(|r| match r[0] {
            dogana_sqlite::Datum::Int(i) => i,
            ref other => panic!("an id {other:?}"),
        })
        .collect();
    v.sort_unstable();
    v
}

#[test]
fn a_full_read_of_ascending_keys_is_published_with_the_key_as_rowid() {
    // rule: PLAN-03 — the rows staged whole become the published table, the key its rowid
    let d = dir("rowid");
    let mut store = Store::open(d.join("s.db")).unwrap();
    let (file, m) = full(&d, "f.csv", &base(), "2026-10-10T06:00:00Z");
    let r = store.deliver(&file, &orders(), &m, now(), None).unwrap();
    assert_eq!(r.receipt.outcome(), Outcome::Accepted);
    let table = ddl(&store, "orders").unwrap();
    assert!(table.contains("\"id\" INTEGER PRIMARY KEY"), "{table}");
    assert_eq!(ddl(&store, "dogana_key__orders"), None, "no key index");
    assert_eq!(
        ddl(&store, "dogana_window__orders"),
        None,
        "the window index waits for a window"
    );
    assert!(staged_tables(&store).is_empty());
    assert_eq!(ids(&mut store), vec![1, 2, 3]);
    // rule: PLAN-05, PLAN-06 — later changes work on the rowid layout
    let text = orders_csv(&[
        (2, "2026-10-02", "2026-10-20T10:00:00Z", "99.00", false),
        (9, "2026-10-05", "2026-10-20T10:00:00Z", "9.00", false),
        (3, "2026-10-03", "2026-10-20T10:00:00Z", "", true),
    ]);
    let file = d.join("c.csv");
    std::fs::write(&file, &text).unwrap();
    let m = orders()
        .manifest("changes", ts("2026-10-26T06:00:00Z"))
        .since(ts("2026-10-10T06:00:00Z"))
        .rows(2)
        .tombstones(1)
        .content_hash(sha(&text))
        .build()
        .unwrap();
    let r = store.deliver(&file, &orders(), &m, now(), None).unwrap();
    assert_eq!(
        r.receipt.outcome(),
        Outcome::Accepted,
        "{:?}",
        r.receipt.failures().collect::<Vec<_>>()
    );
    assert_eq!(ids(&mut store), vec![1, 2, 9]);
    // rule: PLAN-04 — and a window replacement
    let text = orders_csv(&[(4, "2026-10-01", "2026-10-01T11:00:00Z", "4.00", false)]);
    let file = d.join("w.csv");
    std::fs::write(&file, &text).unwrap();
    let m = orders()
        .manifest("window", ts("2026-10-27T06:00:00Z"))
        .window(Window::new(date("2026-10-01"), date("2026-10-01")))
        .rows(1)
        .content_hash(sha(&text))
        .build()
        .unwrap();
    let r = store.deliver(&file, &orders(), &m, now(), None).unwrap();
    assert_eq!(
        r.receipt.outcome(),
        Outcome::Accepted,
        "{:?}",
        r.receipt.failures().collect::<Vec<_>>()
    );
    assert_eq!(ids(&mut store), vec![2, 4, 9]);
    assert!(ddl(&store, "dogana_window__orders").is_some());
    assert!(store.verify("orders").unwrap().ok());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_full_read_of_unordered_keys_keeps_arrival_order_and_a_key_index() {
    // rule: PLAN-03 — keys not ascending in the first batch: rows in arrival order
    let d = dir("arrival");
    let mut store = Store::open(d.join("s.db")).unwrap();
    let mut rows = base();
    rows.swap(0, 2);
    let (file, m) = full(&d, "f.csv", &rows, "2026-10-10T06:00:00Z");
    let r = store.deliver(&file, &orders(), &m, now(), None).unwrap();
    assert_eq!(r.receipt.outcome(), Outcome::Accepted);
    let table = ddl(&store, "orders").unwrap();
    assert!(!table.contains("PRIMARY KEY"), "{table}");
    assert!(ddl(&store, "dogana_key__orders").is_some());
    let order: Vec<i64> = store
        .read_consistent_rows("orders")
        .unwrap()
        .rows
        .iter()
        .map(|r| match r[0] {
            dogana_sqlite::Datum::Int(i) => i,
            _ => 0,
        })
        .collect();
    assert_eq!(order, vec![3, 2, 1]);
    assert!(store.verify("orders").unwrap().ok());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_key_descending_after_the_first_batch_is_still_published() {
    // rule: PLAN-03 — the rowid layout chosen from the first batch holds every row after it
    let d = dir("descend");
    let mut store = Store::open(d.join("s.db")).unwrap();
    let n = 5000i64;
    // ascending past the first batch (4096 rows), then the rest descending below them
    let rows: Vec<Order<'_>> = (0..n)
        .map(|i| {
            let id = if i < 4500 { 1000 + i } else { n - i };
            (id, "2026-10-01", "2026-10-01T10:00:00Z", "1.00", false)
        })
        .collect();
    let (file, m) = full(&d, "f.csv", &rows, "2026-10-10T06:00:00Z");
    let r = store.deliver(&file, &orders(), &m, now(), None).unwrap();
    assert_eq!(r.receipt.outcome(), Outcome::Accepted);
    assert!(ddl(&store, "orders")
        .unwrap()
        .contains("\"id\" INTEGER PRIMARY KEY"));
    let mut want: Vec<i64> = rows.iter().map(|r| r.0).collect();
    want.sort_unstable();
    assert_eq!(ids(&mut store), want);
    assert!(store.verify("orders").unwrap().ok());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_repeated_or_bad_key_in_an_ascending_full_read_is_refused_by_the_checks() {
    // rule: CHECK-09 — a repeated key is the keys check's to refuse, not a constraint's
    let d = dir("repeated");
    let mut store = Store::open(d.join("s.db")).unwrap();
    let (file, m) = full(&d, "f.csv", &base(), "2026-10-10T06:00:00Z");
    assert!(store
        .deliver(&file, &orders(), &m, now(), None)
        .unwrap()
        .accepted());
    let mut twice = base();
    twice.insert(2, (2, "2026-10-02", "2026-10-02T11:00:00Z", "1.00", false));
    let (file, m) = full(&d, "twice.csv", &twice, "2026-10-11T06:00:00Z");
    let r = store.deliver(&file, &orders(), &m, now(), None).unwrap();
    assert_eq!(r.receipt.outcome(), Outcome::Rejected);
    assert!(
        r.receipt.failures().any(|c| c.name() == "keys"),
        "{:?}",
        r.receipt.failures().collect::<Vec<_>>()
    );
    // a key that is no integer: the values' parse refuses it
    let file = d.join("bad.csv");
    let text = "id,order_date,updated_at,amount,deleted\n1,2026-10-01,2026-10-01T10:00:00Z,1,false\nx,2026-10-01,2026-10-01T10:00:00Z,1,false\n";
    std::fs::write(&file, text).unwrap();
    let m = orders()
        .manifest("full", ts("2026-10-12T06:00:00Z"))
        .rows(2)
        .content_hash(sha(text))
        .build()
        .unwrap();
    let r = store.deliver(&file, &orders(), &m, now(), None).unwrap();
    assert_eq!(r.receipt.outcome(), Outcome::Rejected);
    // the published rows stay the first delivery's, and nothing staged is left
    assert_eq!(ids(&mut store), vec![1, 2, 3]);
    assert!(staged_tables(&store).is_empty());
    assert!(store.verify("orders").unwrap().ok());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_staging_table_of_a_dead_handle_is_dropped_and_a_live_ones_kept() {
    // rule: RECV-09 — what a killed process staged is dropped by the next writer
    let d = dir("leftover");
    let path = d.join("s.db");
    let mut a = Store::open(&path).unwrap();
    a.backend()
        .connection()
        .execute_batch("CREATE TABLE main.dogana_whole__orders__1x2x3 (id INTEGER)")
        .unwrap();
    // a live handle's staging, committed with its decision, is kept
    let (file, m) = full(&d, "a.csv", &base(), "2026-10-11T06:00:00Z");
    let decision = a.decide(&file, &orders(), &m, now(), None).unwrap();
    assert_eq!(decision.receipt().outcome(), Outcome::Accepted);
    let staged = staged_tables(&Store::open(&path).unwrap());
    assert_eq!(staged.len(), 1, "{staged:?}");
    assert_ne!(staged[0], "dogana_whole__orders__1x2x3");
    // another writer publishes meanwhile: the decision is made again, from its own staging
    let mut b = Store::open(&path).unwrap();
    let (file_b, m_b) = full(&d, "b.csv", &base()[..2], "2026-10-10T06:00:00Z");
    assert!(b
        .deliver(&file_b, &orders(), &m_b, now(), None)
        .unwrap()
        .accepted());
    assert_eq!(staged_tables(&b), staged);
    let done = a.commit(decision).unwrap();
    assert_eq!(done.redecided, 1);
    assert!(done.accepted());
    assert_eq!(ids(&mut b), vec![1, 2, 3]);
    assert!(staged_tables(&b).is_empty());
    // a handle dropped between decision and commit leaves nothing either
    let (file, m) = full(&d, "c.csv", &base()[..1], "2026-10-12T06:00:00Z");
    let decision = b.decide(&file, &orders(), &m, now(), None).unwrap();
    assert_eq!(staged_tables(&b).len(), 1);
    drop(decision);
    drop(b);
    assert!(staged_tables(&a).is_empty());
    let leases = std::fs::read_dir(&d)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".lock")
        })
        .count();
    assert_eq!(leases, 1, "a's lease alone");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_view_on_the_published_table_survives_a_full_read() {
    // rule: PLAN-03 — the table renamed in place of the old one is what the view reads
    let d = dir("view-survives");
    let mut store = Store::open(d.join("s.db")).unwrap();
    let (file, m) = full(&d, "f.csv", &base(), "2026-10-10T06:00:00Z");
    assert!(store
        .deliver(&file, &orders(), &m, now(), None)
        .unwrap()
        .accepted());
    store
        .backend()
        .connection()
        .execute_batch("CREATE VIEW big AS SELECT id FROM orders WHERE id > 1")
        .unwrap();
    let (file, m) = full(&d, "g.csv", &base()[1..], "2026-10-11T06:00:00Z");
    let r = store.deliver(&file, &orders(), &m, now(), None).unwrap();
    assert!(
        r.accepted(),
        "{:?}",
        r.receipt.failures().collect::<Vec<_>>()
    );
    let n: i64 = store
        .backend()
        .connection()
        .query_row("SELECT count(*) FROM big", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 2);
    assert!(store.verify("orders").unwrap().ok());
    let _ = std::fs::remove_dir_all(&d);
}

/// A one-day window delivery of `orders` replacing 2026-10-01, as a file in `d`.
fn window_of_first_day(d: &std::path::Path, at: &str) -> (PathBuf, dogana::Manifest) {
    let text = orders_csv(&[(4, "2026-10-01", "2026-10-01T11:00:00Z", "4.00", false)]);
    let file = d.join("w.csv");
    std::fs::write(&file, &text).unwrap();
    let m = orders()
        .manifest("window", ts(at))
        .window(Window::new(date("2026-10-01"), date("2026-10-01")))
        .rows(1)
        .content_hash(sha(&text))
        .build()
        .unwrap();
    (file, m)
}

/// The names of the indexes on the published `orders` table.
fn indexes_of_orders(store: &Store) -> Vec<String> {
    names(
        store,
        "SELECT name FROM pragma_index_list('orders', 'main') ORDER BY name",
    )
}

#[test]
fn the_window_index_is_built_by_the_first_window_and_dropped_by_a_full_read() {
    // rule: PLAN-04 — a window replacement deletes by the window column, through an index
    let d = dir("window-index");
    let mut store = Store::open(d.join("s.db")).unwrap();
    let (file, m) = full(&d, "f.csv", &base(), "2026-10-10T06:00:00Z");
    accept(&mut store, &file, &m);
    assert_eq!(indexes_of_orders(&store), Vec::<String>::new());
    let (file, m) = window_of_first_day(&d, "2026-10-11T06:00:00Z");
    accept(&mut store, &file, &m);
    assert_eq!(indexes_of_orders(&store), vec!["dogana_window__orders"]);
    assert_eq!(ids(&mut store), vec![2, 3, 4]);
    // rule: PLAN-03 — a full read publishes a new table, without it until a window comes
    let (file, m) = full(&d, "g.csv", &base(), "2026-10-12T06:00:00Z");
    accept(&mut store, &file, &m);
    assert_eq!(indexes_of_orders(&store), Vec::<String>::new());
    assert!(store.verify("orders").unwrap().ok());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn an_index_of_the_users_on_the_window_column_serves_and_none_is_built_when_told() {
    // rule: PLAN-04 — the window's rows found through the user's own index
    let d = dir("window-index-user");
    let mut store = Store::open(d.join("s.db")).unwrap();
    let (file, m) = full(&d, "f.csv", &base(), "2026-10-10T06:00:00Z");
    accept(&mut store, &file, &m);
    store
        .backend()
        .connection()
        .execute_batch("CREATE INDEX mine ON orders (order_date, amount)")
        .unwrap();
    let (file, m) = window_of_first_day(&d, "2026-10-11T06:00:00Z");
    accept(&mut store, &file, &m);
    assert_eq!(indexes_of_orders(&store), vec!["mine"]);
    drop(store);
    // rule: PLAN-04 — and with window_index(false), the deletion scans and nothing is built
    let d = dir("window-index-off");
    let options = dogana_sqlite::StoreOptions::new().window_index(false);
    let mut store = Store::open_with(d.join("s.db"), options).unwrap();
    let (file, m) = full(&d, "f.csv", &base(), "2026-10-10T06:00:00Z");
    accept(&mut store, &file, &m);
    let (file, m) = window_of_first_day(&d, "2026-10-11T06:00:00Z");
    accept(&mut store, &file, &m);
    assert_eq!(indexes_of_orders(&store), Vec::<String>::new());
    assert_eq!(ids(&mut store), vec![2, 3, 4]);
    let _ = std::fs::remove_dir_all(&d);
}
