//! The SQLite store keeps each ledger region by region, with its identity beside it: a
//! delivery writes the regions it changed, readers still see the reference's document, a
//! store of the earlier layout (one document per table) is converted when opened for writing,
//! and an identity that does not match the regions is found.

use std::path::{Path, PathBuf};

use dogana::{Ledger, Outcome, Wire};
use dogana_receiver::conformance::{deliver_window_of_day, orders};
use dogana_sqlite::rusqlite::Connection;
use dogana_sqlite::{Store, StoreError};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dogana-sqlite-rows-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Delivers [`window_of_day`] of `day` at 06:`day`.
fn deliver_day(store: &mut Store, d: &Path, day: u32) -> Outcome {
    deliver_window_of_day(store, d, day, 6).unwrap()
}

#[test]
fn a_delivery_writes_the_regions_it_changed_not_the_ledger() {
    // rule: RECV-09 — the ledger saved with the acceptance is the ledger followed
    let d = dir("few");
    let mut store = Store::open(d.join("s.db")).unwrap();
    for day in (1..=27).step_by(2) {
        assert_eq!(deliver_day(&mut store, &d, day), Outcome::Accepted);
    }
    let regions = store.ledger("orders").unwrap().unwrap().region_count();
    assert!(regions > 25, "{regions} regions");
    let changes = |store: &Store| store.backend().connection().total_changes();
    let before = changes(&store);
    assert_eq!(deliver_day(&mut store, &d, 28), Outcome::Accepted);
    // the staged row, the published row, the receipt, the head and the few regions around
    // the new window: far fewer rows than the ledger has regions
    let written = changes(&store) - before;
    assert!(
        written < 12,
        "{written} rows written for a ledger of {regions} regions"
    );
    let conn = store.backend().connection();
    let document: String = conn
        .query_row(
            "SELECT document FROM dogana_ledgers WHERE table_name = 'orders'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let ledger = store.ledger("orders").unwrap().unwrap();
    assert_eq!(document, ledger.to_json());
    assert!(store.verify("orders").unwrap().ok());
}

/// Turns a store into the layout of earlier versions: `dogana_ledgers` a table of documents.
fn to_earlier_layout(path: &Path) {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(
        r#"
        BEGIN;
        CREATE TABLE documents AS SELECT table_name, document FROM dogana_ledgers;
        DROP VIEW dogana_regions;
        DROP VIEW dogana_ledgers;
        DROP TABLE dogana_ledger_regions;
        DROP TABLE dogana_ledger_heads;
        CREATE TABLE dogana_ledgers (
            table_name TEXT PRIMARY KEY NOT NULL,
            document   TEXT NOT NULL
        );
        INSERT INTO dogana_ledgers SELECT table_name, document FROM documents;
        DROP TABLE documents;
        CREATE VIEW dogana_regions AS
        SELECT l.table_name,
               json_extract(l.document, '$.publication_id') AS publication_id,
               CAST(r.key AS INTEGER) AS region_index,
               r.value -> '$.low' AS low,
               r.value -> '$.high' AS high,
               json_extract(r.value, '$.low_open') AS low_open,
               json_extract(r.value, '$.high_open') AS high_open,
               json_extract(r.value, '$.complete_as_of."$datetime"') AS complete_as_of,
               json_extract(r.value, '$.deletions_as_of."$datetime"') AS deletions_as_of
        FROM dogana_ledgers l, json_each(l.document, '$.regions') r;
        COMMIT;
        "#,
    )
    .unwrap();
}

fn object_type(path: &Path, name: &str) -> Option<String> {
    let conn = Connection::open(path).unwrap();
    conn.query_row(
        "SELECT type FROM sqlite_master WHERE name = ?1",
        [name],
        |r| r.get(0),
    )
    .ok()
}

#[test]
fn a_store_of_the_earlier_layout_is_read_and_converted() {
    // rule: LOADER-10 — dogana_ledgers(table_name, document) in either layout
    let d = dir("convert");
    let path = d.join("s.db");
    let mut store = Store::open(&path).unwrap();
    for day in [1, 3, 5] {
        assert_eq!(deliver_day(&mut store, &d, day), Outcome::Accepted);
    }
    let ledger = store.ledger("orders").unwrap().unwrap();
    let regions: i64 = store
        .backend()
        .connection()
        .query_row("SELECT count(*) FROM dogana_regions", [], |r| r.get(0))
        .unwrap();
    drop(store);
    to_earlier_layout(&path);
    assert_eq!(
        object_type(&path, "dogana_ledgers").as_deref(),
        Some("table")
    );
    // read as it is
    let mut reader = Store::open_read_only(&path).unwrap();
    assert_eq!(reader.ledger("orders").unwrap().unwrap(), ledger);
    assert!(reader.verify("orders").unwrap().ok());
    drop(reader);
    assert_eq!(
        object_type(&path, "dogana_ledgers").as_deref(),
        Some("table")
    );
    // converted when opened for writing, then delivered to
    let mut store = Store::open(&path).unwrap();
    assert_eq!(
        object_type(&path, "dogana_ledgers").as_deref(),
        Some("view")
    );
    assert_eq!(store.ledger("orders").unwrap().unwrap(), ledger);
    let conn = store.backend().connection();
    let identity: String = conn
        .query_row(
            "SELECT identity FROM dogana_ledger_heads WHERE table_name = 'orders'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(identity, ledger.identity());
    let after: i64 = conn
        .query_row("SELECT count(*) FROM dogana_regions", [], |r| r.get(0))
        .unwrap();
    assert_eq!(after, regions);
    assert_eq!(deliver_day(&mut store, &d, 7), Outcome::Accepted);
    assert!(store.verify("orders").unwrap().ok());
}

#[test]
fn an_unreadable_document_stops_the_conversion_and_changes_nothing() {
    // rule: RECOVERY-01 — a damaged ledger is reported, never silently replaced
    let d = dir("unreadable");
    let path = d.join("s.db");
    let mut store = Store::open(&path).unwrap();
    assert_eq!(deliver_day(&mut store, &d, 1), Outcome::Accepted);
    drop(store);
    to_earlier_layout(&path);
    Connection::open(&path)
        .unwrap()
        .execute(
            "UPDATE dogana_ledgers SET document = '{\"kind\": \"Ledger\"}'",
            [],
        )
        .unwrap();
    let e = Store::open(&path).unwrap_err();
    assert!(
        matches!(&e, StoreError::Corrupt(m) if m.contains("\"orders\"") && m.contains("cannot be converted")),
        "{e}"
    );
    assert_eq!(
        object_type(&path, "dogana_ledgers").as_deref(),
        Some("table")
    );
    assert_eq!(object_type(&path, "dogana_ledger_heads"), None);
}

#[test]
fn an_identity_that_does_not_match_the_regions_is_found() {
    // rule: RECV-12 — verify compares what is stored; a delivery does not build on it
    let d = dir("identity");
    let path = d.join("s.db");
    let mut store = Store::open(&path).unwrap();
    for day in [1, 3] {
        assert_eq!(deliver_day(&mut store, &d, day), Outcome::Accepted);
    }
    let other = Ledger::new(orders()).identity();
    store
        .backend()
        .connection()
        .execute(
            "UPDATE dogana_ledger_heads SET identity = ?1 WHERE table_name = 'orders'",
            [&other],
        )
        .unwrap();
    drop(store);
    // a new process: nothing kept answers for the identity
    let mut store = Store::open(&path).unwrap();
    let report = store.verify("orders").unwrap();
    assert!(
        report.problems.iter().any(|p| p.contains(&other)),
        "{:?}",
        report.problems
    );
    let receipts = store.receipts("orders").unwrap().len();
    let e = deliver_day_err(&mut store, &d, 5);
    assert!(
        matches!(&e, StoreError::Corrupt(m) if m.contains(&other)),
        "{e}"
    );
    assert_eq!(store.receipts("orders").unwrap().len(), receipts);
}

fn deliver_day_err(store: &mut Store, d: &Path, day: u32) -> StoreError {
    deliver_window_of_day(store, d, day, 7).unwrap_err()
}

#[test]
fn writers_opening_an_earlier_store_at_once_convert_it_once() {
    // rule: RECV-13 — one committed state: the conversion is one transaction under the lock
    let d = dir("race");
    let path = d.join("s.db");
    let mut store = Store::open(&path).unwrap();
    for day in [1, 3] {
        assert_eq!(deliver_day(&mut store, &d, day), Outcome::Accepted);
    }
    let ledger = store.ledger("orders").unwrap().unwrap();
    drop(store);
    to_earlier_layout(&path);
    let opened: Vec<Ledger> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    let mut store = Store::open(&path).unwrap();
                    store.ledger("orders").unwrap().unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(opened.iter().all(|l| *l == ledger));
    let mut store = Store::open(&path).unwrap();
    let heads: i64 = store
        .backend()
        .connection()
        .query_row("SELECT count(*) FROM dogana_ledger_heads", [], |r| r.get(0))
        .unwrap();
    assert_eq!(heads, 1);
    assert!(store.verify("orders").unwrap().ok());
    assert_eq!(deliver_day(&mut store, &d, 5), Outcome::Accepted);
}
