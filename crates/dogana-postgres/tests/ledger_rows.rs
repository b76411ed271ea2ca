//! The Postgres store keeps each ledger region by region, with its identity beside it: a
//! delivery writes the regions it changed, readers still see the reference's document and
//! regions, a store of the earlier layout (one document per table) is read as it is and
//! converted when opened for writing, and an identity that does not match the regions is found.

use std::path::{Path, PathBuf};

use dogana::{Ledger, Outcome, Wire};
use dogana_postgres::harness::test_url;
use dogana_postgres::postgres::{Client, NoTls};
use dogana_postgres::{Postgres, PostgresOptions, Store, StoreError};
use dogana_receiver::conformance::{deliver_window_of_day, now, orders, orders_csv, ts, Harness};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dogana-pg-rows-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A store in the folder's own (new, empty) schema, and the schema's name.
fn create(d: &Path) -> (Store, String) {
    let backend = Postgres::create(d).expect("the store opens");
    let schema = backend.schema().to_owned();
    (Store::new(backend), schema)
}

fn url(schema: &str) -> String {
    let url = test_url().expect("the test server");
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}schema={schema}")
}

/// Opens the store of `schema` again, for writing or for reading only.
fn connect(schema: &str, write: bool) -> Result<Store, StoreError> {
    Postgres::connect(&url(schema), &PostgresOptions::default(), write).map(Store::new)
}

fn admin() -> Client {
    Client::connect(&test_url().expect("the test server"), NoTls).expect("the test server")
}

/// Delivers [`window_of_day`] of `day` at 06:`day`.
fn deliver_day(store: &mut Store, d: &Path, day: u32) -> Outcome {
    deliver_window_of_day(store, d, day, 6).unwrap()
}

fn deliver_day_err(store: &mut Store, d: &Path, day: u32) -> StoreError {
    deliver_window_of_day(store, d, day, 7).unwrap_err()
}

/// `pg_class.relkind` of one of the schema's objects (`r` a table, `v` a view), if it exists.
fn kind(schema: &str, name: &str) -> Option<String> {
    admin()
        .query_opt(
            "SELECT c.relkind::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = $1 AND c.relname = $2",
            &[&schema, &name],
        )
        .unwrap()
        .map(|r| r.get(0))
}

/// The stored document of `orders`, as a reader of `dogana_ledgers` sees it.
fn document(schema: &str) -> String {
    admin()
        .query_one(
            &format!("SELECT document FROM {schema}.dogana_ledgers WHERE table_name = 'orders'"),
            &[],
        )
        .unwrap()
        .get(0)
}

/// Every row of `dogana_regions`, as text, in order.
fn regions_view(schema: &str) -> Vec<Vec<Option<String>>> {
    admin()
        .query(
            &format!(
                "SELECT table_name, publication_id, region_index::text AS idx, low::text, high::text,
                        low_open::text, high_open::text, complete_as_of::text,
                        deletions_as_of::text
                 FROM {schema}.dogana_regions ORDER BY table_name, region_index"
            ),
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (0..9).map(|i| r.get(i)).collect())
        .collect()
}

#[test]
fn a_delivery_writes_the_regions_it_changed_not_the_ledger() {
    // rule: RECV-09 — the ledger saved with the acceptance is the ledger followed
    let d = dir("few");
    let (mut store, schema) = create(&d);
    for day in (1..=27).step_by(2) {
        assert_eq!(deliver_day(&mut store, &d, day), Outcome::Accepted);
    }
    let regions = store.ledger("orders").unwrap().unwrap().region_count();
    assert!(regions > 25, "{regions} regions");
    assert_eq!(deliver_day(&mut store, &d, 28), Outcome::Accepted);
    // a row written (inserted, or updated: a new version) in a transaction carries its id in
    // xmin, and the delivery's commit wrote the head: the region rows with the head's xmin are
    // the ones this delivery wrote. Rewriting the ledger whole would give every row it.
    let mut admin = admin();
    let row = admin
        .query_one(
            &format!(
                "SELECT (SELECT count(*) FROM {schema}.dogana_ledger_regions r
                         WHERE r.table_name = h.table_name AND r.xmin = h.xmin),
                        (SELECT count(*) FROM {schema}.dogana_ledger_regions r
                         WHERE r.table_name = h.table_name)
                 FROM {schema}.dogana_ledger_heads h WHERE h.table_name = 'orders'"
            ),
            &[],
        )
        .unwrap();
    let (written, stored): (i64, i64) = (row.get(0), row.get(1));
    let ledger = store.ledger("orders").unwrap().unwrap();
    assert_eq!(stored as usize, ledger.region_count());
    assert!(
        (1..=3).contains(&written),
        "{written} region rows written for a ledger of {stored} regions"
    );
    // rule: LOADER-10 — dogana_ledgers(table_name, document), document = ledger.to_json()
    assert_eq!(document(&schema), ledger.to_json());
    let identity: String = admin
        .query_one(
            &format!(
                "SELECT identity FROM {schema}.dogana_ledger_heads WHERE table_name = 'orders'"
            ),
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(identity, ledger.identity());
    // rule: LOADER-11 — one row per region, in order
    let view = regions_view(&schema);
    assert_eq!(view.len(), ledger.region_count());
    assert!(view
        .iter()
        .enumerate()
        .all(|(i, r)| r[2].as_deref() == Some(i.to_string().as_str())));
    assert!(store.verify("orders").unwrap().ok());
}

#[test]
fn the_view_is_the_canonical_document_through_a_history() {
    // rule: LOADER-10 — byte for byte, after every kind of change: a window, a region split
    // and merged, a complete replacement
    let d = dir("history");
    let (mut store, schema) = create(&d);
    for day in [5, 1, 9, 3, 7, 2, 4, 6, 8] {
        assert_eq!(deliver_day(&mut store, &d, day), Outcome::Accepted);
        let ledger = store.ledger("orders").unwrap().unwrap();
        assert_eq!(document(&schema), ledger.to_json(), "after day {day}");
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
    let ledger = store.ledger("orders").unwrap().unwrap();
    assert_eq!(document(&schema), ledger.to_json());
    assert_eq!(regions_view(&schema).len(), ledger.region_count());
    assert!(store.verify("orders").unwrap().ok());
}

/// Turns a store into the layout of earlier versions: `dogana_ledgers` a table of documents
/// and `dogana_regions` the view over them, as those versions made them.
fn to_earlier_layout(schema: &str) {
    let s = schema;
    admin()
        .batch_execute(&format!(
            "BEGIN;
             CREATE TABLE {s}.documents AS SELECT table_name, document FROM {s}.dogana_ledgers;
             DROP VIEW {s}.dogana_regions;
             DROP VIEW {s}.dogana_ledgers;
             DROP TABLE {s}.dogana_ledger_regions;
             DROP TABLE {s}.dogana_ledger_heads;
             CREATE TABLE {s}.dogana_ledgers (
                 table_name TEXT PRIMARY KEY,
                 document   TEXT NOT NULL
             );
             INSERT INTO {s}.dogana_ledgers SELECT table_name, document FROM {s}.documents;
             DROP TABLE {s}.documents;
             CREATE VIEW {s}.dogana_regions AS
             SELECT l.table_name,
                    l.document::jsonb ->> 'publication_id' AS publication_id,
                    (r.ordinality - 1)::integer AS region_index,
                    r.value -> 'low' AS low,
                    r.value -> 'high' AS high,
                    (r.value ->> 'low_open')::boolean AS low_open,
                    (r.value ->> 'high_open')::boolean AS high_open,
                    (r.value -> 'complete_as_of' ->> '$datetime')::timestamptz AS complete_as_of,
                    (r.value -> 'deletions_as_of' ->> '$datetime')::timestamptz AS deletions_as_of
             FROM {s}.dogana_ledgers l,
                  jsonb_array_elements(l.document::jsonb -> 'regions') WITH ORDINALITY AS r(value, ordinality);
             COMMIT;"
        ))
        .unwrap();
}

#[test]
fn a_store_of_the_earlier_layout_is_read_and_converted() {
    // rule: LOADER-10 — dogana_ledgers(table_name, document) in either layout
    let d = dir("convert");
    let (mut store, schema) = create(&d);
    for day in [1, 3, 5] {
        assert_eq!(deliver_day(&mut store, &d, day), Outcome::Accepted);
    }
    let ledger = store.ledger("orders").unwrap().unwrap();
    let regions = regions_view(&schema);
    drop(store);
    to_earlier_layout(&schema);
    assert_eq!(kind(&schema, "dogana_ledgers").as_deref(), Some("r"));
    // rule: LOADER-11 — the earlier view and this one give the same rows
    assert_eq!(regions_view(&schema), regions);
    // read as it is, nothing changed
    let mut reader = connect(&schema, false).unwrap();
    assert_eq!(reader.ledger("orders").unwrap().unwrap(), ledger);
    assert!(reader.verify("orders").unwrap().ok());
    drop(reader);
    assert_eq!(kind(&schema, "dogana_ledgers").as_deref(), Some("r"));
    assert_eq!(kind(&schema, "dogana_ledger_heads"), None);
    // converted when opened for writing, then delivered to
    let mut store = connect(&schema, true).unwrap();
    assert_eq!(kind(&schema, "dogana_ledgers").as_deref(), Some("v"));
    assert_eq!(kind(&schema, "dogana_ledger_heads").as_deref(), Some("r"));
    assert_eq!(store.ledger("orders").unwrap().unwrap(), ledger);
    assert_eq!(document(&schema), ledger.to_json());
    assert_eq!(regions_view(&schema), regions);
    let identity: String = admin()
        .query_one(
            &format!(
                "SELECT identity FROM {schema}.dogana_ledger_heads WHERE table_name = 'orders'"
            ),
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(identity, ledger.identity());
    assert_eq!(deliver_day(&mut store, &d, 7), Outcome::Accepted);
    assert!(store.verify("orders").unwrap().ok());
    assert_eq!(
        document(&schema),
        store.ledger("orders").unwrap().unwrap().to_json()
    );
}

#[test]
fn a_reader_of_the_earlier_layout_reads_on_after_a_writer_converts_it() {
    // rule: RECV-13 — a reader opened before the conversion reads one committed state after it
    let d = dir("reader");
    let (mut store, schema) = create(&d);
    for day in [1, 3] {
        assert_eq!(deliver_day(&mut store, &d, day), Outcome::Accepted);
    }
    drop(store);
    to_earlier_layout(&schema);
    let mut reader = connect(&schema, false).unwrap();
    let mut writer = connect(&schema, true).unwrap();
    assert_eq!(deliver_day(&mut writer, &d, 5), Outcome::Accepted);
    let ledger = writer.ledger("orders").unwrap().unwrap();
    assert_eq!(reader.ledger("orders").unwrap().unwrap(), ledger);
    assert!(reader.verify("orders").unwrap().ok());
}

#[test]
fn an_unreadable_document_stops_the_conversion_and_changes_nothing() {
    // rule: RECOVERY-01 — a damaged ledger is reported, never silently replaced
    let d = dir("unreadable");
    let (mut store, schema) = create(&d);
    assert_eq!(deliver_day(&mut store, &d, 1), Outcome::Accepted);
    drop(store);
    to_earlier_layout(&schema);
    let damaged = "{\"kind\": \"Ledger\"}";
    admin()
        .execute(
            &format!("UPDATE {schema}.dogana_ledgers SET document = $1"),
            &[&damaged],
        )
        .unwrap();
    let e = connect(&schema, true).unwrap_err();
    assert!(
        matches!(&e, StoreError::Corrupt(m) if m.contains("\"orders\"") && m.contains("cannot be converted")),
        "{e}"
    );
    assert_eq!(kind(&schema, "dogana_ledgers").as_deref(), Some("r"));
    assert_eq!(kind(&schema, "dogana_regions").as_deref(), Some("v"));
    assert_eq!(kind(&schema, "dogana_ledger_heads"), None);
    assert_eq!(kind(&schema, "dogana_ledger_regions"), None);
    assert_eq!(document(&schema), damaged);
}

#[test]
fn a_view_of_the_users_over_the_earlier_table_stops_the_conversion_one_over_the_regions_lives_on() {
    // rule: LOADER-10 — what users built on dogana_ledgers is never dropped behind their back
    let d = dir("dependent");
    let (mut store, schema) = create(&d);
    assert_eq!(deliver_day(&mut store, &d, 1), Outcome::Accepted);
    let ledger = store.ledger("orders").unwrap().unwrap();
    drop(store);
    to_earlier_layout(&schema);
    // a view over dogana_regions lives on (the view is replaced in place); one over the
    // table dogana_ledgers, which becomes a view, stops the conversion
    admin()
        .batch_execute(&format!(
            "CREATE VIEW {schema}.my_regions AS SELECT table_name, region_index, low
             FROM {schema}.dogana_regions;
             CREATE VIEW {schema}.my_ledgers AS SELECT table_name FROM {schema}.dogana_ledgers"
        ))
        .unwrap();
    let e = connect(&schema, true).unwrap_err();
    assert!(
        matches!(&e, StoreError::Corrupt(m) if m.contains("my_ledgers") && m.contains("nothing was changed")),
        "{e}"
    );
    assert_eq!(kind(&schema, "dogana_ledgers").as_deref(), Some("r"));
    assert_eq!(kind(&schema, "dogana_ledger_heads"), None);
    admin()
        .batch_execute(&format!("DROP VIEW {schema}.my_ledgers"))
        .unwrap();
    let mut store = connect(&schema, true).unwrap();
    assert_eq!(kind(&schema, "dogana_ledgers").as_deref(), Some("v"));
    assert_eq!(store.ledger("orders").unwrap().unwrap(), ledger);
    let mine: i64 = admin()
        .query_one(&format!("SELECT count(*) FROM {schema}.my_regions"), &[])
        .unwrap()
        .get(0);
    assert_eq!(mine as usize, ledger.region_count());
}

#[test]
fn an_identity_that_does_not_match_the_regions_is_found() {
    // rule: RECV-12 — verify compares what is stored; a delivery does not build on it
    let d = dir("identity");
    let (mut store, schema) = create(&d);
    for day in [1, 3] {
        assert_eq!(deliver_day(&mut store, &d, day), Outcome::Accepted);
    }
    let other = Ledger::new(orders()).identity();
    admin()
        .execute(
            &format!(
                "UPDATE {schema}.dogana_ledger_heads SET identity = $1 WHERE table_name = 'orders'"
            ),
            &[&other],
        )
        .unwrap();
    drop(store);
    let mut store = connect(&schema, true).unwrap();
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

#[test]
fn writers_opening_an_earlier_store_at_once_convert_it_once() {
    // rule: RECV-13 — one committed state: the conversion is one transaction under the lock
    let d = dir("race");
    let (mut store, schema) = create(&d);
    for day in [1, 3] {
        assert_eq!(deliver_day(&mut store, &d, day), Outcome::Accepted);
    }
    let ledger = store.ledger("orders").unwrap().unwrap();
    drop(store);
    to_earlier_layout(&schema);
    let opened: Vec<Ledger> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    let mut store = connect(&schema, true).unwrap();
                    store.ledger("orders").unwrap().unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(opened.iter().all(|l| *l == ledger));
    let heads: i64 = admin()
        .query_one(
            &format!("SELECT count(*) FROM {schema}.dogana_ledger_heads"),
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(heads, 1);
    let mut store = connect(&schema, true).unwrap();
    assert!(store.verify("orders").unwrap().ok());
    assert_eq!(deliver_day(&mut store, &d, 5), Outcome::Accepted);
}
