//! What only DuckDB shows of a ledger kept region by region: the WAL a delivery leaves (the
//! regions it changed, not the document), BLOB keys ordering the regions as the document does,
//! the reference's `dogana_regions` over the region rows, and what a store of the earlier
//! layout (one document per table) with two documents for a table or a user's views over it
//! comes to. What every backend keeping its ledgers region by region does is in the
//! conformance suite (`conformance_suite!(...; ledger_rows)`).

use std::path::{Path, PathBuf};

use dogana::{Contract, Ledger, LogicalType, Outcome, Shape, Timestamp, Window, Wire};
use dogana_duckdb::duckdb::Connection;
use dogana_duckdb::harness::REFERENCE_REGIONS;
use dogana_duckdb::{Store, StoreError};
use dogana_receiver::conformance::{
    deliver_window_of_day, now, orders, orders_csv, ts, LedgerRowsHarness,
};
use dogana_receiver::{Backend, Txn};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dogana-duckdb-rows-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Delivers [`window_of_day`] of `day` at 06:`day`.
fn deliver_day(store: &mut Store, d: &Path, day: u32) -> Outcome {
    deliver_window_of_day(store, d, day, 6).unwrap()
}

/// The stored document of `table`, as a reader of `dogana_ledgers` sees it.
fn document(conn: &Connection, table: &str) -> String {
    conn.query_row(
        "SELECT document FROM dogana_ledgers WHERE table_name = ?",
        [table],
        |r| r.get(0),
    )
    .unwrap()
}

/// Every row of a regions query, as text, in order, with its column types.
fn regions_of(conn: &Connection, from: &str) -> (Vec<String>, Vec<Vec<Option<String>>>) {
    let types = {
        let mut s = conn
            .prepare(&format!("SELECT column_type FROM (DESCRIBE {from})"))
            .unwrap();
        s.query_map([], |r| r.get::<_, String>(0))
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap()
    };
    let mut s = conn
        .prepare(&format!(
            "SELECT table_name, publication_id, region_index::varchar, low::varchar,
                    high::varchar, low_open::varchar, high_open::varchar,
                    complete_as_of::varchar, deletions_as_of::varchar
             FROM ({from}) ORDER BY table_name, region_index"
        ))
        .unwrap();
    let rows = s
        .query_map([], |r| {
            (0..9)
                .map(|i| r.get::<_, Option<String>>(i))
                .collect::<Result<Vec<_>, _>>()
        })
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    (types, rows)
}

fn view_rows(conn: &Connection) -> (Vec<String>, Vec<Vec<Option<String>>>) {
    regions_of(conn, "SELECT * FROM dogana_regions")
}

/// Whether `name` is a table (`BASE TABLE`), a view (`VIEW`) or nothing, in the main schema.
fn kind(conn: &Connection, name: &str) -> Option<String> {
    let mut s = conn
        .prepare(
            "SELECT table_type FROM information_schema.tables
             WHERE table_schema = 'main' AND table_catalog = current_database() AND table_name = ?",
        )
        .unwrap();
    s.query_map([name], |r| r.get::<_, String>(0))
        .unwrap()
        .next()
        .map(Result::unwrap)
}

/// The WAL's size: what the commits since the last checkpoint wrote.
fn wal(path: &Path) -> u64 {
    let mut name = path.as_os_str().to_owned();
    name.push(".wal");
    std::fs::metadata(PathBuf::from(name)).map_or(0, |m| m.len())
}

/// A one-row window a day, as `dogana_receiver::overhead`'s workload delivers.
fn daily() -> Contract {
    Contract::builder("days", ["id"])
        .shape("daily", Shape::window())
        .window_column("order_date")
        .column("id", LogicalType::Int)
        .column("order_date", LogicalType::Date)
        .build()
        .unwrap()
}

fn day(i: usize) -> dogana::Date {
    dogana::Date::from_ymd(2000, 1, 1)
        .unwrap()
        .checked_add_days(i as i64)
        .unwrap()
}

fn at(i: usize) -> Timestamp {
    Timestamp::from_micros(ts("2026-01-01T00:00:00Z").as_micros() + i as i64 * 1_000_000).unwrap()
}

fn daily_window(i: usize) -> dogana::Manifest {
    daily()
        .manifest("daily", at(i))
        .window(Window::new(day(i), day(i)))
        .rows(1)
        .build()
        .unwrap()
}

fn deliver_daily(store: &mut Store, d: &Path, i: usize) {
    let file = d.join("one.csv");
    std::fs::write(&file, format!("id,order_date\n{i},{}\n", day(i))).unwrap();
    let r = store
        .deliver(&file, &daily(), &daily_window(i), at(i + 1), None)
        .unwrap();
    assert!(r.accepted(), "{:?}", r.receipt);
}

#[test]
fn a_delivery_logs_the_regions_it_changed_not_the_document() {
    // rule: RECV-09 — the ledger saved with the acceptance is the ledger followed
    let d = dir("few");
    let path = d.join("s.duckdb");
    let mut store = Store::open(&path).unwrap();
    // a ledger of 2,002 regions, saved behind the engine's back as overhead_bench does
    let n = 2000;
    deliver_daily(&mut store, &d, 0);
    let mut ledger = Ledger::new(daily());
    for i in 0..n {
        ledger = ledger.apply(&daily_window(i)).unwrap();
    }
    let b = store.backend_mut();
    b.begin(Txn::Write, &["days"]).unwrap();
    b.save_ledger("days", &ledger.to_json()).unwrap();
    b.commit().unwrap();
    let conn = store.backend().connection().try_clone().unwrap();
    let rowids = |conn: &Connection| -> Vec<(Vec<u8>, i64, String)> {
        let mut s = conn
            .prepare(
                "SELECT low, rowid, region FROM dogana_ledger_regions
                 WHERE table_name = 'days' ORDER BY low",
            )
            .unwrap();
        s.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap()
    };
    let before = rowids(&conn);
    assert_eq!(before.len(), n + 2);
    conn.execute_batch("CHECKPOINT").unwrap();
    let empty = wal(&path);
    deliver_daily(&mut store, &d, n);
    let written = wal(&path) - empty;
    assert!(
        written > 0,
        "the delivery's commit is in the WAL, not checkpointed"
    );
    let ledger = store.ledger("days").unwrap().unwrap();
    let doc = ledger.to_json();
    // the published row, the receipt, the head and the regions around the new window: far
    // fewer bytes than the document (the earlier layout logged it whole, every delivery)
    assert!(
        (written as usize) < doc.len() / 8,
        "{written} bytes logged for a document of {} bytes",
        doc.len()
    );
    // every region the delivery did not change is the same row, never deleted and
    // inserted again
    let after = rowids(&conn);
    assert_eq!(after.len(), ledger.region_count());
    let changed = after.iter().filter(|r| !before.contains(r)).count();
    assert!((1..=3).contains(&changed), "{changed} region rows written");
    // rule: LOADER-10 — dogana_ledgers(table_name, document), document = ledger.to_json()
    assert_eq!(document(&conn, "days"), doc);
    let identity: String = conn
        .query_row(
            "SELECT identity FROM dogana_ledger_heads WHERE table_name = 'days'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(identity, ledger.identity());
    // rule: LOADER-11 — one row per region, in order, as the reference's view gives them
    let view = view_rows(&conn);
    assert_eq!(view.1.len(), ledger.region_count());
    assert_eq!(view, regions_of(&conn, REFERENCE_REGIONS));
    assert_eq!(document(&conn, "days"), doc);
}

#[test]
fn blob_keys_order_the_regions_as_the_document_does() {
    // rule: LOADER-10 — DuckDB compares BLOBs bytewise (unsigned, a prefix first), the
    // keys' order, so the view's string_agg(region, ',' ORDER BY low) is Wire::to_json
    let d = dir("keys");
    let store = Store::open(d.join("s.duckdb")).unwrap();
    let conn = store.backend().connection();
    let mut keys: Vec<Vec<u8>> = vec![
        vec![],
        vec![0],
        vec![0, 0],
        vec![1],
        vec![1, 0x7f],
        vec![1, 0x80],
        vec![1, 0xff],
        vec![1, 0xff, 0],
        vec![0x80],
        vec![0xff],
        "é".as_bytes().to_vec(),
        "\u{1F600}".as_bytes().to_vec(),
    ];
    conn.execute_batch("CREATE TEMP TABLE k (low BLOB, label VARCHAR)")
        .unwrap();
    for (i, k) in keys.iter().enumerate().rev() {
        conn.execute(
            "INSERT INTO k VALUES (?, ?)",
            dogana_duckdb::duckdb::params![k, i.to_string()],
        )
        .unwrap();
    }
    let by_duckdb: String = conn
        .query_row(
            "SELECT string_agg(label, ',' ORDER BY low) FROM k",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let labels: Vec<(Vec<u8>, String)> = keys
        .drain(..)
        .enumerate()
        .map(|(i, k)| (k, i.to_string()))
        .collect();
    let mut sorted = labels.clone();
    sorted.sort();
    let by_rust: Vec<&str> = sorted.iter().map(|(_, l)| l.as_str()).collect();
    assert_eq!(by_duckdb, by_rust.join(","));

    // and on ledgers of every key type: negative and positive integers, strings beyond ASCII
    let mut store = store;
    let int = Contract::builder("ints", ["id"])
        .shape("w", Shape::window())
        .window_column("n")
        .column("id", LogicalType::Int)
        .column("n", LogicalType::Int)
        .build()
        .unwrap();
    let s = Contract::builder("strs", ["id"])
        .shape("w", Shape::window())
        .window_column("s")
        .column("id", LogicalType::Int)
        .column("s", LogicalType::Str)
        .build()
        .unwrap();
    let mut ledgers = vec![];
    let mut l = Ledger::new(int.clone());
    for (i, n) in [-(1i64 << 53) + 1, -300, -1, 0, 1, 255, 256, (1 << 53) - 1]
        .into_iter()
        .enumerate()
    {
        let m = int
            .manifest("w", at(i))
            .window(Window::new(dogana::Value::Int(n), dogana::Value::Int(n)))
            .rows(0)
            .build()
            .unwrap();
        l = l.apply(&m).unwrap();
    }
    ledgers.push(("ints", l));
    let mut l = Ledger::new(s.clone());
    for (i, v) in ["", "a", "ab", "b", "z\u{7f}", "é", "\u{1F600}", "\u{FFFD}"]
        .into_iter()
        .enumerate()
    {
        let v = dogana::Value::Str(v.into());
        let m = s
            .manifest("w", at(i))
            .window(Window::new(v.clone(), v))
            .rows(0)
            .build()
            .unwrap();
        l = l.apply(&m).unwrap();
    }
    ledgers.push(("strs", l));
    for (table, ledger) in &ledgers {
        let b = store.backend_mut();
        b.begin(Txn::Write, &[table]).unwrap();
        b.save_ledger(table, &ledger.to_json()).unwrap();
        b.commit().unwrap();
        let doc = ledger.to_json();
        assert_eq!(document(store.backend().connection(), table), doc);
        let b = store.backend_mut();
        b.begin(Txn::Read, &[table]).unwrap();
        assert_eq!(b.ledger(table).unwrap().unwrap(), doc);
        b.commit().unwrap();
    }
    let conn = store.backend().connection();
    assert_eq!(view_rows(conn), regions_of(conn, REFERENCE_REGIONS));
}

#[test]
fn the_reference_regions_over_the_region_rows_through_a_history() {
    // rule: LOADER-11 — the reference's rows, over the region rows, after every kind of
    // change: a window, a region split and merged, a complete replacement
    let d = dir("history");
    let mut store = Store::open(d.join("s.duckdb")).unwrap();
    for day in [5, 1, 9, 3, 7, 2, 4, 6, 8] {
        assert_eq!(deliver_day(&mut store, &d, day), Outcome::Accepted);
        let conn = store.backend().connection();
        assert_eq!(
            view_rows(conn),
            regions_of(conn, REFERENCE_REGIONS),
            "after day {day}"
        );
    }
    let file = d.join("full.csv");
    std::fs::write(
        &file,
        orders_csv(&[(1, "2026-10-01", "2026-10-01T10:00:00Z", "2.00", false)]),
    )
    .unwrap();
    let m = orders()
        .manifest("full", ts("2026-10-27T06:00:00Z"))
        .rows(1)
        .build()
        .unwrap();
    let delivery = store.deliver(&file, &orders(), &m, now(), None).unwrap();
    assert_eq!(delivery.receipt.outcome(), Outcome::Accepted);
    let conn = store.backend().connection();
    assert_eq!(view_rows(conn), regions_of(conn, REFERENCE_REGIONS));
}

/// Turns the store into the layout of earlier versions (the harness's, with the documents it
/// holds: `dogana_regions` the reference's view over them), and closes it.
fn to_earlier_layout(mut store: Store) {
    let b = store.backend_mut();
    let documents = b.documents().unwrap();
    b.to_earlier_layout(&documents).unwrap();
}

/// A raw connection on a closed store, for a look and a change behind its back.
fn raw(path: &Path) -> Connection {
    Connection::open(path).unwrap()
}

#[test]
fn two_documents_for_one_table_stop_the_conversion_and_change_nothing() {
    // rule: RECV-12 — a second ledger row is found, never silently chosen between
    let d = dir("second");
    let path = d.join("s.duckdb");
    let mut store = Store::open(&path).unwrap();
    assert_eq!(deliver_day(&mut store, &d, 1), Outcome::Accepted);
    to_earlier_layout(store);
    raw(&path)
        .execute(
            "INSERT INTO dogana_ledgers SELECT * FROM dogana_ledgers WHERE table_name = 'orders'",
            [],
        )
        .unwrap();
    let mut reader = Store::open_read_only(&path).unwrap();
    let e = reader.ledger("orders").unwrap_err();
    assert!(e.to_string().contains("2 ledger rows"), "{e}");
    drop(reader);
    let e = Store::open(&path).unwrap_err();
    assert!(
        matches!(&e, StoreError::Corrupt(m) if m.contains("2 ledger rows") && m.contains("nothing was changed")),
        "{e}"
    );
    let conn = raw(&path);
    assert_eq!(kind(&conn, "dogana_ledgers").as_deref(), Some("BASE TABLE"));
    assert_eq!(kind(&conn, "dogana_ledger_heads"), None);
    let n: i64 = conn
        .query_row("SELECT count(*) FROM dogana_ledgers", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 2);
}

#[test]
fn a_view_of_the_users_over_the_earlier_table_reads_on_after_the_conversion() {
    // rule: LOADER-10 — what users built on dogana_ledgers and dogana_regions keeps reading:
    // DuckDB binds a view's names when it is queried, and the conversion leaves objects of
    // the same names and columns
    let d = dir("dependent");
    let path = d.join("s.duckdb");
    let mut store = Store::open(&path).unwrap();
    assert_eq!(deliver_day(&mut store, &d, 1), Outcome::Accepted);
    let ledger = store.ledger("orders").unwrap().unwrap();
    to_earlier_layout(store);
    {
        let conn = raw(&path);
        conn.execute(
            "CREATE VIEW my_regions AS SELECT table_name, region_index, low FROM dogana_regions",
            [],
        )
        .unwrap();
        conn.execute(
            "CREATE VIEW my_ledgers AS SELECT table_name, document FROM dogana_ledgers",
            [],
        )
        .unwrap();
    }
    let store = Store::open(&path).unwrap();
    let conn = store.backend().connection();
    assert_eq!(kind(conn, "dogana_ledgers").as_deref(), Some("VIEW"));
    let mine: i64 = conn
        .query_row("SELECT count(*) FROM my_regions", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mine as usize, ledger.region_count());
    let doc: String = conn
        .query_row("SELECT document FROM my_ledgers", [], |r| r.get(0))
        .unwrap();
    assert_eq!(doc, ledger.to_json());
}

/// Rebuilds the store's region rows as versions before the one-column key wrote them: keyed
/// by `(table_name, low)`, no `region_key`.
fn to_compound_key(path: &Path) {
    let conn = raw(path);
    conn.execute_batch(
        "BEGIN;
         DROP VIEW dogana_regions;
         DROP VIEW dogana_ledgers;
         CREATE TABLE compound (
             table_name VARCHAR NOT NULL,
             low        BLOB NOT NULL,
             region     VARCHAR NOT NULL,
             PRIMARY KEY (table_name, low)
         );
         INSERT INTO compound SELECT table_name, low, region FROM dogana_ledger_regions;
         DROP TABLE dogana_ledger_regions;
         ALTER TABLE compound RENAME TO dogana_ledger_regions;
         COMMIT;",
    )
    .unwrap();
}

fn columns_of_regions(conn: &Connection) -> Vec<String> {
    let mut s = conn
        .prepare("SELECT column_name FROM (DESCRIBE dogana_ledger_regions)")
        .unwrap();
    s.query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap()
}

#[test]
fn region_rows_keyed_by_two_columns_are_read_as_they_are_and_rekeyed_by_a_writer() {
    // rule: RECV-12 — a store an earlier version wrote reads the same ledger, and verify
    // passes on it before and after a writer gives its region rows their one-column key
    let d = dir("rekey");
    let path = d.join("s.duckdb");
    let mut store = Store::open(&path).unwrap();
    for i in 0..70 {
        deliver_daily(&mut store, &d, i);
    }
    let ledger = store.ledger("days").unwrap().unwrap();
    drop(store);
    to_compound_key(&path);
    assert_eq!(
        columns_of_regions(&raw(&path)),
        ["table_name", "low", "region"]
    );

    // a reader neither needs nor makes the new key
    let mut reader = Store::open_read_only(&path).unwrap();
    assert_eq!(reader.ledger("days").unwrap().as_ref(), Some(&ledger));
    assert!(reader.verify("days").unwrap().ok());
    drop(reader);
    assert_eq!(
        columns_of_regions(&raw(&path)),
        ["table_name", "low", "region"]
    );

    // a writer rekeys, and the ledger, the reference's views and later deliveries agree
    let mut store = Store::open(&path).unwrap();
    assert_eq!(
        columns_of_regions(store.backend().connection()),
        ["region_key", "table_name", "low", "region"]
    );
    assert_eq!(store.ledger("days").unwrap().as_ref(), Some(&ledger));
    let conn = store.backend().connection();
    assert_eq!(document(conn, "days"), ledger.to_json());
    assert_eq!(view_rows(conn), regions_of(conn, REFERENCE_REGIONS));
    for i in 70..75 {
        deliver_daily(&mut store, &d, i);
    }
    assert!(store.verify("days").unwrap().ok());
    let regions = store.ledger("days").unwrap().unwrap().region_count() as i64;
    let keyed: i64 = store
        .backend()
        .connection()
        .query_row(
            "SELECT count(DISTINCT region_key) FROM dogana_ledger_regions
             WHERE region_key = encode(table_name) || '\\x00'::BLOB || low",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(keyed, regions);
}
