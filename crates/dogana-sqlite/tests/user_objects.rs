//! What a user builds on a published table (an index, a trigger) outlives a full read, which
//! publishes a new table: the backend builds it again on that table in the delivery's
//! transaction, or fails the delivery, changing nothing, when it cannot.

use std::path::{Path, PathBuf};

use dogana::Wire;
use dogana_receiver::conformance::{date, orders, orders_csv, sha, ts, Order};
use dogana_sqlite::rusqlite::{self, Connection};
use dogana_sqlite::{DeliverOptions, Store, StoreError, UserObjectError};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dogana-sqlite-user-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn now() -> dogana::Timestamp {
    ts("2026-11-01T00:00:00Z")
}

fn order<'a>(id: i64, day: &'a str, amount: &'a str) -> Order<'a> {
    (id, day, "2026-10-20T10:00:00Z", amount, false)
}

/// Ascending keys: published with the key as rowid.
fn base() -> Vec<Order<'static>> {
    vec![
        order(1, "2026-10-01", "10.50"),
        order(2, "2026-10-02", "20.25"),
        order(3, "2026-10-03", "30.00"),
    ]
}

/// A full read of `rows` of `orders`, as a file in `d`.
fn full(d: &Path, name: &str, rows: &[Order<'_>], at: &str) -> (PathBuf, dogana::Manifest) {
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

fn accept_with(store: &mut Store, (file, m): &(PathBuf, dogana::Manifest), o: &DeliverOptions) {
    let r = store
        .deliver_with(file, &orders(), m, now(), None, o)
        .unwrap();
    assert!(
        r.receipt.accepted(),
        "{:?}",
        r.receipt.failures().collect::<Vec<_>>()
    );
}

fn accept(store: &mut Store, delivery: &(PathBuf, dogana::Manifest)) {
    accept_with(store, delivery, &DeliverOptions::new());
}

/// A store in a fresh folder `name` whose `orders` table holds [`base`] from a first full
/// read, and the user's own connection to its file.
fn published(name: &str) -> (PathBuf, Store, Connection) {
    let d = dir(name);
    let path = d.join("s.db");
    let mut store = Store::open(&path).unwrap();
    accept(
        &mut store,
        &full(&d, "a.csv", &base(), "2026-10-10T06:00:00Z"),
    );
    let conn = user(&path);
    (d, store, conn)
}

/// The user's own connection to the store's file.
fn user(path: &Path) -> Connection {
    Connection::open(path).unwrap()
}

fn strings(conn: &Connection, sql: &str) -> Vec<String> {
    let mut stmt = conn.prepare(sql).unwrap();
    let v = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    v
}

/// The main database's schema: every object's type, name, table and DDL.
fn schema(conn: &Connection) -> Vec<String> {
    strings(
        conn,
        "SELECT type || ' ' || name || ' ' || tbl_name || ' ' || coalesce(sql, '')
         FROM main.sqlite_master ORDER BY type, name",
    )
}

fn ddl(conn: &Connection, name: &str) -> Option<String> {
    conn.query_row(
        "SELECT sql FROM main.sqlite_master WHERE name = ?1",
        [name],
        |r| r.get(0),
    )
    .ok()
}

fn integrity(conn: &Connection) -> Vec<String> {
    strings(conn, "PRAGMA main.integrity_check")
}

fn indexes_of_orders(conn: &Connection) -> Vec<String> {
    strings(
        conn,
        "SELECT name FROM pragma_index_list('orders', 'main') ORDER BY name",
    )
}

#[test]
fn a_users_index_survives_a_full_read_and_indexes_the_new_rows() {
    // rule: PLAN-03 — replace_all replaces the published rows: an index a user built on the
    // table stays, and holds the new rows
    let (d, mut store, conn) = published("index");
    conn.execute_batch(
        "CREATE INDEX by_amount ON orders (amount);
         CREATE UNIQUE INDEX one_per_day ON orders (order_date) WHERE order_date IS NOT NULL;",
    )
    .unwrap();
    let before = (ddl(&conn, "by_amount"), ddl(&conn, "one_per_day"));
    // unordered keys: the key gets dogana's index, the user's are built beside it
    let rows = [
        order(5, "2026-10-05", "50.00"),
        order(4, "2026-10-04", "40.00"),
        order(6, "2026-10-06", "60.00"),
    ];
    accept(
        &mut store,
        &full(&d, "b.csv", &rows, "2026-10-11T06:00:00Z"),
    );
    assert_eq!(
        indexes_of_orders(&conn),
        vec!["by_amount", "dogana_key__orders", "one_per_day"]
    );
    assert_eq!((ddl(&conn, "by_amount"), ddl(&conn, "one_per_day")), before);
    assert_eq!(integrity(&conn), vec!["ok"]);
    // read through the index: the new rows, and only them
    assert_eq!(
        strings(
            &conn,
            "SELECT amount FROM orders INDEXED BY by_amount WHERE amount > '' ORDER BY amount"
        ),
        vec!["40.00", "50.00", "60.00"]
    );
    let plan: Vec<String> = conn
        .prepare("EXPLAIN QUERY PLAN SELECT id FROM orders WHERE amount = '40.00'")
        .unwrap()
        .query_map([], |r| r.get::<_, String>(3))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let plan = plan.join(" ");
    assert!(plan.contains("by_amount"), "{plan}");
    // ascending keys again (the rowid layout): still there
    accept(
        &mut store,
        &full(&d, "c.csv", &base(), "2026-10-12T06:00:00Z"),
    );
    assert_eq!(indexes_of_orders(&conn), vec!["by_amount", "one_per_day"]);
    assert_eq!(integrity(&conn), vec!["ok"]);
    assert!(store.verify("orders").unwrap().ok());
    drop(conn);
    drop(store);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_users_trigger_survives_a_full_read_and_fires_on_later_deliveries() {
    // rule: RECV-07 — the plan is executed on the published table, and what a user built on
    // it keeps working through the next deliveries
    let (d, mut store, conn) = published("trigger");
    conn.execute_batch(
        "CREATE TABLE audit (id INTEGER);
         CREATE TRIGGER log_orders AFTER INSERT ON orders BEGIN
             INSERT INTO audit VALUES (new.id);
         END;",
    )
    .unwrap();
    let before = ddl(&conn, "log_orders");
    assert!(before.is_some());
    accept(
        &mut store,
        &full(&d, "b.csv", &base(), "2026-10-11T06:00:00Z"),
    );
    assert_eq!(ddl(&conn, "log_orders"), before);
    // a window delivery inserts into the published table: the trigger fires
    let text = orders_csv(&[order(7, "2026-10-01", "7.00")]);
    let file = d.join("w.csv");
    std::fs::write(&file, &text).unwrap();
    let m = orders()
        .manifest("window", ts("2026-10-12T06:00:00Z"))
        .window(dogana::Window::new(date("2026-10-01"), date("2026-10-01")))
        .rows(1)
        .content_hash(sha(&text))
        .build()
        .unwrap();
    accept(&mut store, &(file, m));
    let audited: Vec<i64> = conn
        .prepare("SELECT id FROM audit ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(audited, vec![7]);
    assert!(store.verify("orders").unwrap().ok());
    drop(conn);
    drop(store);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_users_unique_index_the_new_rows_violate_fails_the_full_read_and_changes_nothing() {
    // rule: RECV-09, GATE-25 — rows, ledger and receipt change in one step or not at all; a
    // receiver's own failure is an error, not a rejected receipt
    let (d, mut store, conn) = published("unique");
    conn.execute_batch("CREATE UNIQUE INDEX one_per_day ON orders (order_date)")
        .unwrap();
    let rows = store.read_consistent_rows("orders").unwrap();
    let ledger = store.ledger("orders").unwrap().unwrap().to_json();
    let receipts = store.receipts("orders").unwrap().len();
    let objects = schema(&conn);
    // two orders of one day: a valid delivery that the user's index refuses
    let same_day = [
        order(1, "2026-10-01", "1.00"),
        order(2, "2026-10-01", "2.00"),
    ];
    let (file, m) = full(&d, "b.csv", &same_day, "2026-10-11T06:00:00Z");
    let err = store
        .deliver(&file, &orders(), &m, now(), None)
        .expect_err("the user's UNIQUE index refuses the rows");
    let StoreError::Backend { backend, source } = &err else {
        panic!("not a backend error: {err:?}");
    };
    assert_eq!(*backend, "sqlite");
    let why = source
        .downcast_ref::<UserObjectError>()
        .unwrap_or_else(|| panic!("not a UserObjectError: {err:?}"));
    assert_eq!(
        (why.kind(), why.name(), why.table()),
        ("index", "one_per_day", "orders")
    );
    assert!(matches!(
        why.sqlite_error(),
        rusqlite::Error::SqliteFailure(e, _) if e.code == rusqlite::ErrorCode::ConstraintViolation
    ));
    let shown = err.to_string();
    assert!(
        shown.contains("one_per_day") && shown.contains("\"orders\""),
        "{shown}"
    );
    // nothing changed: rows, ledger, receipts, the index, no staging left behind
    assert_eq!(
        store.read_consistent_rows("orders").unwrap().rows,
        rows.rows
    );
    assert_eq!(store.ledger("orders").unwrap().unwrap().to_json(), ledger);
    assert_eq!(store.receipts("orders").unwrap().len(), receipts);
    assert_eq!(schema(&conn), objects);
    assert_eq!(integrity(&conn), vec!["ok"]);
    assert!(store.verify("orders").unwrap().ok());
    // without the index, the same delivery is published
    conn.execute_batch("DROP INDEX one_per_day").unwrap();
    accept(&mut store, &(file, m));
    assert_eq!(store.read_consistent_rows("orders").unwrap().rows.len(), 2);
    drop(conn);
    drop(store);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_full_read_into_a_table_of_other_column_types_keeps_the_table() {
    // rule: PLAN-03 — the published table keeps its own columns' types, and what is built on
    // it, its rows replaced in place
    let d = dir("keep");
    let path = d.join("s.db");
    let mut store = Store::open(&path).unwrap();
    let real = DeliverOptions::new().column_type("amount", "float");
    accept_with(
        &mut store,
        &full(&d, "a.csv", &base(), "2026-10-10T06:00:00Z"),
        &real,
    );
    let conn = user(&path);
    conn.execute_batch("CREATE INDEX by_amount ON orders (amount)")
        .unwrap();
    let amount_type = |conn: &Connection| -> String {
        conn.query_row(
            "SELECT type FROM pragma_table_info('orders', 'main') WHERE name = 'amount'",
            [],
            |r| r.get(0),
        )
        .unwrap()
    };
    assert_eq!(amount_type(&conn), "REAL");
    // delivered as text this time: the published column stays REAL
    let rows = [order(4, "2026-10-04", "40.00")];
    accept(
        &mut store,
        &full(&d, "b.csv", &rows, "2026-10-11T06:00:00Z"),
    );
    assert_eq!(amount_type(&conn), "REAL");
    assert_eq!(indexes_of_orders(&conn), vec!["by_amount"]);
    assert_eq!(integrity(&conn), vec!["ok"]);
    let amounts: Vec<f64> = conn
        .prepare("SELECT amount FROM orders")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(amounts, vec![40.0]);
    drop(conn);
    drop(store);
    let _ = std::fs::remove_dir_all(&d);
}
