//! A full read staged whole: its rows go straight into a new table of the main database
//! (`dogana_whole__…`), which the commit renames in place of the published table; a refusal,
//! a decision never committed and a killed process leave no such table behind.

use dogana::Outcome;
use dogana_duckdb::Store;
use dogana_receiver::conformance::{now, orders, orders_csv, sha, ts, Order};

fn dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("dogana-duckdb-whole-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn full(
    d: &std::path::Path,
    name: &str,
    at: &str,
    rows: &[Order<'_>],
    declared: u64,
) -> (std::path::PathBuf, dogana::Manifest) {
    let text = orders_csv(rows);
    let file = d.join(name);
    std::fs::write(&file, &text).unwrap();
    let m = orders()
        .manifest("full", ts(at))
        .rows(declared)
        .content_hash(sha(&text))
        .build()
        .unwrap();
    (file, m)
}

const BASE: [Order<'static>; 3] = [
    (1, "2026-10-01", "2026-10-01T10:00:00Z", "10.00", false),
    (2, "2026-10-02", "2026-10-02T10:00:00Z", "20.00", false),
    (3, "2026-10-03", "2026-10-03T10:00:00Z", "30.00", false),
];

const NEXT: [Order<'static>; 2] = [
    (2, "2026-10-02", "2026-10-10T10:00:00Z", "21.00", false),
    (4, "2026-10-04", "2026-10-10T11:00:00Z", "40.00", false),
];

/// The main database's tables as (name, oid), sorted by name.
fn tables(store: &Store) -> Vec<(String, i64)> {
    let conn = store.backend().connection();
    let mut stmt = conn
        .prepare(
            "SELECT table_name, table_oid FROM duckdb_tables()
             WHERE database_name = current_database() AND schema_name = 'main' ORDER BY 1",
        )
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap()
}

fn staging_tables(store: &Store) -> Vec<(String, i64)> {
    tables(store)
        .into_iter()
        .filter(|(n, _)| n.starts_with("dogana_whole__"))
        .collect()
}

fn oid(store: &Store, table: &str) -> i64 {
    tables(store)
        .into_iter()
        .find(|(n, _)| n == table)
        .map(|(_, o)| o)
        .unwrap_or_else(|| panic!("no table {table}"))
}

fn count(store: &Store, sql: &str) -> i64 {
    store
        .backend()
        .connection()
        .query_row(sql, [], |r| r.get(0))
        .unwrap()
}

#[test]
fn a_full_read_is_published_by_renaming_the_table_it_was_staged_in() {
    // rule: PLAN-03 — the staged table, holding exactly the checked rows, becomes the table
    let d = dir("renamed");
    let mut store = Store::open(d.join("s.duckdb")).unwrap();
    let (f1, m1) = full(&d, "1.csv", "2026-10-10T06:00:00Z", &BASE, 3);
    assert!(store
        .deliver(&f1, &orders(), &m1, now(), None)
        .unwrap()
        .accepted());
    let (f2, m2) = full(&d, "2.csv", "2026-10-11T06:00:00Z", &NEXT, 2);
    let decision = store.decide(&f2, &orders(), &m2, now(), None).unwrap();
    let staged = staging_tables(&store);
    assert_eq!(staged.len(), 1, "{staged:?}");
    let (name, staged_oid) = staged[0].clone();
    assert!(name.starts_with("dogana_whole__orders__"), "{name}");
    let q = format!("SELECT count(*) FROM main.\"{name}\"");
    assert_eq!(count(&store, &q), 2);
    // no TEMP table of the live rows: they went straight into the staged table
    assert_eq!(
        count(
            &store,
            "SELECT count(*) FROM duckdb_tables()
             WHERE database_name = 'temp' AND table_name = 'dogana_stage_rows__orders'"
        ),
        0
    );
    let old = oid(&store, "orders");
    let d2 = store.commit(decision).unwrap();
    assert_eq!(d2.receipt.outcome(), Outcome::Accepted);
    assert_eq!(oid(&store, "orders"), staged_oid, "renamed, not copied");
    assert_ne!(staged_oid, old);
    assert!(staging_tables(&store).is_empty());
    let rows = store.read_consistent_rows("orders").unwrap();
    assert_eq!(
        rows.columns,
        ["id", "order_date", "updated_at", "amount"],
        "the deleted column is not published"
    );
    let ids: Vec<Option<String>> = rows.rows.iter().map(|r| r[0].render()).collect();
    assert_eq!(ids, [Some("2".to_owned()), Some("4".to_owned())]);
    assert_eq!(
        count(
            &store,
            "SELECT count(*) FROM information_schema.columns
             WHERE table_name = 'orders' AND column_name = 'id' AND is_nullable = 'NO'"
        ),
        1,
        "the key column is NOT NULL, as a created table's"
    );
    assert!(store.verify("orders").unwrap().ok());
}

#[test]
fn a_refused_full_read_leaves_the_published_table_and_no_staging_table() {
    // rule: RECV-08 — the rows check fails after staging: the old table stays, the staged goes
    let d = dir("refused");
    let mut store = Store::open(d.join("s.duckdb")).unwrap();
    let (f1, m1) = full(&d, "1.csv", "2026-10-10T06:00:00Z", &BASE, 3);
    assert!(store
        .deliver(&f1, &orders(), &m1, now(), None)
        .unwrap()
        .accepted());
    let before = store.read_consistent_rows("orders").unwrap();
    let old = oid(&store, "orders");
    let (f2, m2) = full(&d, "2.csv", "2026-10-11T06:00:00Z", &NEXT, 5);
    let r = store.deliver(&f2, &orders(), &m2, now(), None).unwrap();
    assert_eq!(r.receipt.outcome(), Outcome::Rejected);
    assert!(r.receipt.failures().any(|c| c.name() == "rows"));
    assert_eq!(oid(&store, "orders"), old);
    assert_eq!(store.read_consistent_rows("orders").unwrap(), before);
    assert!(staging_tables(&store).is_empty());
    assert!(store.verify("orders").unwrap().ok());
}

#[test]
fn a_decision_never_committed_leaves_no_staging_table() {
    // rule: RECV-06 — staging never publishes; closing the handle drops what it staged
    let d = dir("uncommitted");
    let path = d.join("s.duckdb");
    let mut store = Store::open(&path).unwrap();
    let (f1, m1) = full(&d, "1.csv", "2026-10-10T06:00:00Z", &BASE, 3);
    let decision = store.decide(&f1, &orders(), &m1, now(), None).unwrap();
    assert_eq!(staging_tables(&store).len(), 1);
    drop(decision);
    drop(store);
    let store = Store::open(&path).unwrap();
    assert!(staging_tables(&store).is_empty());
}

#[test]
fn a_staging_table_a_killed_process_left_is_dropped_when_the_file_is_next_opened() {
    // rule: RECV-09 — a crash between the decision and the commit leaves the old state only
    let d = dir("killed");
    let path = d.join("s.duckdb");
    let mut store = Store::open(&path).unwrap();
    let (f1, m1) = full(&d, "1.csv", "2026-10-10T06:00:00Z", &BASE, 3);
    assert!(store
        .deliver(&f1, &orders(), &m1, now(), None)
        .unwrap()
        .accepted());
    let before = store.read_consistent_rows("orders").unwrap();
    // what a process killed after its decision's commit leaves in the file
    store
        .backend()
        .connection()
        .execute_batch(
            "CREATE TABLE main.\"dogana_whole__orders__1_1\" (id BIGINT);
             INSERT INTO main.\"dogana_whole__orders__1_1\" VALUES (9)",
        )
        .unwrap();
    drop(store);
    let mut store = Store::open(&path).unwrap();
    assert!(staging_tables(&store).is_empty());
    assert_eq!(store.read_consistent_rows("orders").unwrap(), before);
    assert!(store.verify("orders").unwrap().ok());
}

#[test]
fn an_index_on_the_published_table_survives_a_full_read() {
    // rule: PLAN-03 — a table something is built on keeps it: its rows are replaced in place
    let d = dir("index");
    let mut store = Store::open(d.join("s.duckdb")).unwrap();
    let (f1, m1) = full(&d, "1.csv", "2026-10-10T06:00:00Z", &BASE, 3);
    assert!(store
        .deliver(&f1, &orders(), &m1, now(), None)
        .unwrap()
        .accepted());
    store
        .backend()
        .connection()
        .execute("CREATE INDEX by_amount ON orders (amount)", [])
        .unwrap();
    let old = oid(&store, "orders");
    let (f2, m2) = full(&d, "2.csv", "2026-10-11T06:00:00Z", &NEXT, 2);
    assert!(store
        .deliver(&f2, &orders(), &m2, now(), None)
        .unwrap()
        .accepted());
    assert_eq!(oid(&store, "orders"), old);
    assert_eq!(
        count(
            &store,
            "SELECT count(*) FROM duckdb_indexes() WHERE index_name = 'by_amount'"
        ),
        1
    );
    assert_eq!(store.read_consistent_rows("orders").unwrap().rows.len(), 2);
    assert!(staging_tables(&store).is_empty());
    assert!(store.verify("orders").unwrap().ok());
}
