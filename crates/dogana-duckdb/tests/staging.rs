//! The staging area between deliveries: a handle keeps its TEMP staging tables from one
//! delivery to the next, so that a small delivery leaves the catalog alone (a change to it
//! makes DuckDB bind every prepared statement again), empties them after each delivery,
//! drops them after a large one, and makes them again after a rollback.

use std::path::{Path, PathBuf};

use dogana::Outcome;
use dogana_duckdb::{DeliverOptions, Store};
use dogana_receiver::conformance::{large_window_of_day, orders, ts, window_of_day};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "dogana-duckdb-staging-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// This handle's TEMP tables staging the live rows of `orders`: each one's oid and row count.
fn staging_tables(store: &Store) -> Vec<(i64, i64)> {
    let conn = store.backend().connection();
    let oids: Vec<i64> = conn
        .prepare(
            "SELECT table_oid FROM duckdb_tables()
             WHERE database_name = 'temp' AND table_name = 'dogana_stage_rows__orders'",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    oids.into_iter()
        .map(|oid| {
            let n: i64 = conn
                .query_row(
                    "SELECT count(*) FROM temp.main.dogana_stage_rows__orders",
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            (oid, n)
        })
        .collect()
}

fn deliver_day(store: &mut Store, d: &Path, day: u32) -> Outcome {
    let (file, m) = window_of_day(d, day, 6);
    store
        .deliver(&file, &orders(), &m, ts("2026-11-01T00:00:00Z"), None)
        .unwrap()
        .receipt
        .outcome()
}

#[test]
fn a_delivery_keeps_its_staging_tables_for_the_next_and_leaves_them_empty() {
    // rule: RECV-06 — staged in the handle's own tables, emptied once the delivery is done
    let d = dir("kept");
    let mut store = Store::open(d.join("s.duckdb")).unwrap();
    assert_eq!(deliver_day(&mut store, &d, 1), Outcome::Accepted);
    let kept = staging_tables(&store);
    assert_eq!(kept.len(), 1, "one staging table kept: {kept:?}");
    assert_eq!(kept[0].1, 0, "emptied after the delivery");
    assert_eq!(deliver_day(&mut store, &d, 2), Outcome::Accepted);
    assert_eq!(staging_tables(&store), kept, "the same table, empty");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_large_staging_is_dropped_and_made_again_by_the_next_delivery() {
    // rule: RECV-06 — a large delivery's rows do not stay as deleted rows in a kept table
    let d = dir("large");
    let mut store = Store::open(d.join("s.duckdb")).unwrap();
    assert_eq!(deliver_day(&mut store, &d, 1), Outcome::Accepted);
    let small = staging_tables(&store);
    let (file, m) = large_window_of_day(&d, 2, 5000);
    let d1 = store
        .deliver(&file, &orders(), &m, ts("2026-11-01T00:00:00Z"), None)
        .unwrap();
    assert!(d1.receipt.accepted(), "{:?}", d1.receipt);
    assert_eq!(
        staging_tables(&store),
        [],
        "dropped after 5,000 staged rows"
    );
    assert_eq!(deliver_day(&mut store, &d, 3), Outcome::Accepted);
    let again = staging_tables(&store);
    assert_eq!(again.len(), 1, "made again: {again:?}");
    assert_ne!(again, small, "a new table");
    let published = store.read_consistent_rows("orders").unwrap().rows.len();
    assert_eq!(published, 1 + 5000 + 1, "days 1 and 3, and the large day 2");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn after_a_rolled_back_delivery_the_staging_tables_are_made_again() {
    // rule: RECV-06, RECV-08 — a rollback may have undone the staging: nothing is trusted
    let d = dir("rollback");
    let mut store = Store::open(d.join("s.duckdb")).unwrap();
    assert_eq!(deliver_day(&mut store, &d, 1), Outcome::Accepted);
    let kept = staging_tables(&store);
    // a decision that fails after staging (a type for a column the file lacks): rolled back
    let (file, m) = window_of_day(&d, 2, 6);
    let options = DeliverOptions::new().column_type("price", "int");
    assert!(store
        .deliver_with(
            &file,
            &orders(),
            &m,
            ts("2026-11-01T00:00:00Z"),
            None,
            &options
        )
        .is_err());
    assert_eq!(deliver_day(&mut store, &d, 3), Outcome::Accepted);
    let again = staging_tables(&store);
    assert_eq!(again.len(), 1, "{again:?}");
    assert_ne!(again, kept, "made again");
    assert_eq!(again[0].1, 0);
    let rows = store.read_consistent_rows("orders").unwrap().rows.len();
    assert_eq!(rows, 2, "days 1 and 3: day 2's rows were never published");
    let _ = std::fs::remove_dir_all(&d);
}
