//! The staging area between deliveries: a handle keeps its TEMP staging tables from one
//! delivery to the next, so that a delivery runs no DDL (whose catalog writes made its
//! commits wait for WAL flushes), empties them after each delivery (with DELETE when small,
//! TRUNCATE when large), and makes them again after a rollback.

use std::path::{Path, PathBuf};

use dogana::Outcome;
use dogana_postgres::{DeliverOptions, Postgres, Store};
use dogana_receiver::conformance::{large_window_of_day, orders, ts, window_of_day, Harness};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dogana-pg-staging-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// This session's TEMP table staging the live rows: its oid, its file and its row count.
fn staging_table(store: &mut Store) -> Option<(i64, i64, i64)> {
    let client = store.backend_mut().client();
    let row = client
        .query_opt(
            "SELECT c.relname::text, c.oid::bigint, pg_relation_filenode(c.oid)::bigint
             FROM pg_class c
             WHERE c.relnamespace = pg_my_temp_schema() AND c.relname LIKE 'dogana_stage_rows__%'",
            &[],
        )
        .unwrap()?;
    let name: String = row.get(0);
    let count: i64 = client
        .query_one(&format!("SELECT count(*) FROM pg_temp.\"{name}\""), &[])
        .unwrap()
        .get(0);
    Some((row.get(1), row.get(2), count))
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
    // rule: RECV-06 — staged in the session's own tables, emptied once the delivery is done
    let d = dir("kept");
    let mut store = Store::new(Postgres::create(&d).unwrap());
    assert_eq!(deliver_day(&mut store, &d, 1), Outcome::Accepted);
    let (oid, file, rows) = staging_table(&mut store).expect("a staging table");
    assert_eq!(rows, 0, "emptied after the delivery");
    assert_eq!(deliver_day(&mut store, &d, 2), Outcome::Accepted);
    assert_eq!(
        staging_table(&mut store),
        Some((oid, file, 0)),
        "the same table, the same file, empty"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_large_staging_is_truncated_and_a_small_one_deleted() {
    // rule: RECV-06 — a large delivery's rows leave with a new file, not as dead rows
    let d = dir("truncated");
    let mut store = Store::new(Postgres::create(&d).unwrap());
    assert_eq!(deliver_day(&mut store, &d, 1), Outcome::Accepted);
    let (oid, small, _) = staging_table(&mut store).expect("a staging table");
    let (file, m) = large_window_of_day(&d, 2, 5000);
    let d1 = store
        .deliver(&file, &orders(), &m, ts("2026-11-01T00:00:00Z"), None)
        .unwrap();
    assert!(d1.receipt.accepted(), "{:?}", d1.receipt);
    let (same, large, rows) = staging_table(&mut store).expect("a staging table");
    assert_eq!((same, rows), (oid, 0), "the same table, empty");
    assert_ne!(large, small, "truncated: a new file");
    assert_eq!(deliver_day(&mut store, &d, 3), Outcome::Accepted);
    assert_eq!(
        staging_table(&mut store),
        Some((oid, large, 0)),
        "a small delivery deletes its rows and keeps the file"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn after_a_rolled_back_delivery_the_staging_tables_are_made_again() {
    // rule: RECV-06, RECV-08 — a rollback may have undone the emptying: nothing is trusted
    let d = dir("rollback");
    let mut store = Store::new(Postgres::create(&d).unwrap());
    assert_eq!(deliver_day(&mut store, &d, 1), Outcome::Accepted);
    let (oid, _, _) = staging_table(&mut store).expect("a staging table");
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
    let (again, _, rows) = staging_table(&mut store).expect("a staging table");
    assert_ne!(again, oid, "made again");
    assert_eq!(rows, 0);
    let mut ids: Vec<String> = store
        .read_consistent_rows("orders")
        .unwrap()
        .rows
        .iter()
        .map(|r| format!("{:?}", r[0]))
        .collect();
    ids.sort();
    assert_eq!(ids, ["Int(1)", "Int(3)"], "day 2's row was never published");
    let _ = std::fs::remove_dir_all(&d);
}
