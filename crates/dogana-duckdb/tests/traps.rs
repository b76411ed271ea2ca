//! The known DuckDB traps, each with a test: one instance per file per process; a failed
//! statement mid-commit leaves nothing behind; no key constraint that a delete-and-reinsert
//! trips over; exactly the expected ledger row changes.

use dogana::Outcome;
use dogana_duckdb::Store;
use dogana_receiver::conformance::{now, orders, orders_csv, sha, ts, Order};

fn dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("dogana-duckdb-traps-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn full(
    d: &std::path::Path,
    name: &str,
    at: &str,
    rows: &[Order<'_>],
) -> (std::path::PathBuf, dogana::Manifest) {
    let text = orders_csv(rows);
    let file = d.join(name);
    std::fs::write(&file, &text).unwrap();
    let m = orders()
        .manifest("full", ts(at))
        .rows(rows.len() as u64)
        .content_hash(sha(&text))
        .build()
        .unwrap();
    (file, m)
}

fn changes(
    d: &std::path::Path,
    name: &str,
    since: &str,
    at: &str,
    rows: &[Order<'_>],
) -> (std::path::PathBuf, dogana::Manifest) {
    let text = orders_csv(rows);
    let file = d.join(name);
    std::fs::write(&file, &text).unwrap();
    let m = orders()
        .manifest("changes", ts(at))
        .since(ts(since))
        .rows(rows.iter().filter(|r| !r.4).count() as u64)
        .tombstones(rows.iter().filter(|r| r.4).count() as u64)
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

#[test]
fn two_handles_on_one_file_share_one_instance_and_lose_nothing() {
    // rule: RECV-09, RECV-11
    let d = dir("instance");
    let path = d.join("s.duckdb");
    let mut a = Store::open(&path).unwrap();
    let mut b = Store::open(&path).unwrap();
    let (f1, m1) = full(&d, "1.csv", "2026-10-10T06:00:00Z", &BASE);
    assert!(a
        .deliver(&f1, &orders(), &m1, now(), None)
        .unwrap()
        .accepted());
    // the other handle sees the commit at once: the same instance, not a second one
    assert_eq!(b.read_consistent_rows("orders").unwrap().rows.len(), 3);
    let (f2, m2) = changes(
        &d,
        "2.csv",
        "2026-10-10T06:00:00Z",
        "2026-10-11T06:00:00Z",
        &[(4, "2026-10-04", "2026-10-10T11:00:00Z", "40.00", false)],
    );
    assert!(b
        .deliver(&f2, &orders(), &m2, now(), None)
        .unwrap()
        .accepted());
    assert_eq!(a.read_consistent_rows("orders").unwrap().rows.len(), 4);
    drop((a, b));
    // reopened from the file: both writes are there
    let mut c = Store::open(&path).unwrap();
    assert_eq!(c.read_consistent_rows("orders").unwrap().rows.len(), 4);
    assert_eq!(c.receipts("orders").unwrap().len(), 2);
    assert!(c.verify("orders").unwrap().ok());
}

#[test]
fn a_statement_failing_mid_commit_leaves_the_old_state() {
    // rule: RECV-09 — the plan's DELETE ran, its INSERT failed: nothing of it remains
    let d = dir("midcommit");
    let path = d.join("s.duckdb");
    let mut store = Store::open(&path).unwrap();
    let (f1, m1) = full(&d, "1.csv", "2026-10-10T06:00:00Z", &BASE);
    assert!(store
        .deliver(&f1, &orders(), &m1, now(), None)
        .unwrap()
        .accepted());
    // behind the store's back: an index that the next full read's rows violate
    store
        .backend()
        .connection()
        .execute("CREATE UNIQUE INDEX trap ON orders (amount)", [])
        .unwrap();
    let before = store.read_consistent_rows("orders").unwrap();
    let receipts = store.receipts("orders").unwrap().len();
    let (f2, m2) = full(
        &d,
        "2.csv",
        "2026-10-11T06:00:00Z",
        &[
            (1, "2026-10-01", "2026-10-10T10:00:00Z", "99.00", false),
            (2, "2026-10-02", "2026-10-10T10:00:00Z", "99.00", false),
        ],
    );
    let e = store
        .deliver(&f2, &orders(), &m2, now(), None)
        .map(|d| d.receipt)
        .expect_err("the commit fails");
    assert!(e.to_string().contains("duckdb"), "{e}");
    assert_eq!(store.read_consistent_rows("orders").unwrap(), before);
    assert_eq!(store.receipts("orders").unwrap().len(), receipts);
    assert!(store.verify("orders").unwrap().ok());
    drop(store);
    let mut again = Store::open(&path).unwrap();
    assert_eq!(again.read_consistent_rows("orders").unwrap(), before);
}

#[test]
fn an_upserted_key_is_deleted_and_reinserted_without_a_false_duplicate() {
    // rule: PLAN-05
    let d = dir("upsert");
    let path = d.join("s.duckdb");
    let mut store = Store::open(&path).unwrap();
    let (f1, m1) = full(&d, "1.csv", "2026-10-10T06:00:00Z", &BASE);
    assert!(store
        .deliver(&f1, &orders(), &m1, now(), None)
        .unwrap()
        .accepted());
    let constraints: i64 = store
        .backend()
        .connection()
        .query_row(
            "SELECT count(*) FROM duckdb_constraints() WHERE table_name = 'orders'
             AND constraint_type IN ('PRIMARY KEY', 'UNIQUE')",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(constraints, 0, "no key constraint on a published table");
    // the same key twice in a row of upserts, in one transaction each
    for (k, at) in ["2026-10-11T06:00:00Z", "2026-10-12T06:00:00Z"]
        .iter()
        .enumerate()
    {
        let since = if k == 0 {
            "2026-10-10T06:00:00Z"
        } else {
            "2026-10-11T06:00:00Z"
        };
        let amount = ["21.00", "22.00"][k];
        let updated = ["2026-10-10T12:00:00Z", "2026-10-11T12:00:00Z"][k];
        let (f, m) = changes(
            &d,
            &format!("c{k}.csv"),
            since,
            at,
            &[(2, "2026-10-02", updated, amount, false)],
        );
        let r = store.deliver(&f, &orders(), &m, now(), None).unwrap();
        assert_eq!(
            r.receipt.outcome(),
            Outcome::Accepted,
            "{:?}",
            r.receipt.failures().collect::<Vec<_>>()
        );
    }
    let s = store.read_consistent_rows("orders").unwrap();
    assert_eq!(s.rows.len(), 3);
    assert!(store.verify("orders").unwrap().ok());
}

#[test]
fn a_second_ledger_row_is_refused_by_its_key() {
    // rule: RECV-12 — one ledger per table: the heads' and the regions' primary keys refuse
    // a second row, so no reader ever chooses between two (a store of the earlier layout
    // with two is refused when converted: tests/ledger_rows.rs)
    let d = dir("ledgerrow");
    let path = d.join("s.duckdb");
    let mut store = Store::open(&path).unwrap();
    let (f1, m1) = full(&d, "1.csv", "2026-10-10T06:00:00Z", &BASE);
    assert!(store
        .deliver(&f1, &orders(), &m1, now(), None)
        .unwrap()
        .accepted());
    let conn = store.backend().connection();
    for table in ["dogana_ledger_heads", "dogana_ledger_regions"] {
        let e = conn
            .execute(
                &format!("INSERT INTO {table} SELECT * FROM {table} WHERE table_name = 'orders'"),
                [],
            )
            .expect_err("refused");
        assert!(e.to_string().contains("uplicate key"), "{e}");
    }
    let (f2, m2) = full(&d, "2.csv", "2026-10-11T06:00:00Z", &BASE);
    assert!(store
        .deliver(&f2, &orders(), &m2, now(), None)
        .unwrap()
        .accepted());
    assert!(store.verify("orders").unwrap().ok());
}

#[test]
fn a_file_that_is_not_a_duckdb_database_is_refused_and_unchanged() {
    let d = dir("notduck");
    let path = d.join("s.duckdb");
    std::fs::write(&path, b"id,amount\n1,2\n").unwrap();
    let e = Store::open(&path).expect_err("refused");
    assert!(e.to_string().contains("not a DuckDB database"), "{e}");
    assert_eq!(std::fs::read(&path).unwrap(), b"id,amount\n1,2\n");
    let e = Store::open_read_only(d.join("missing.duckdb")).expect_err("refused");
    assert!(e.to_string().contains("does not exist"), "{e}");
    assert!(!d.join("missing.duckdb").exists());
}
