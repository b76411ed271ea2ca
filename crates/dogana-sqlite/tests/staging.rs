//! The staging area between deliveries: a handle keeps its TEMP staging tables from one
//! delivery to the next (emptied, made again when the layout changes), and reads a small file
//! on the calling thread; neither may let one delivery's rows reach another's table.

use std::path::{Path, PathBuf};

use dogana::{Manifest, Outcome, Window};
use dogana_receiver::conformance::{date, orders, orders_csv, sha, ts, Order};
use dogana_sqlite::{Datum, DeliverOptions, Store};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "dogana-sqlite-staging-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn now() -> dogana::Timestamp {
    ts("2026-11-01T00:00:00Z")
}

/// A window read of `text` (declaring `rows` rows) over `low..=high`, as a file in `d`.
fn window(
    d: &Path,
    name: &str,
    text: &str,
    rows: u64,
    (low, high): (&str, &str),
    at: &str,
) -> (PathBuf, Manifest) {
    let file = d.join(name);
    std::fs::write(&file, text).unwrap();
    let m = orders()
        .manifest("window", ts(at))
        .window(Window::new(date(low), date(high)))
        .rows(rows)
        .content_hash(sha(text))
        .build()
        .unwrap();
    (file, m)
}

fn order(id: i64, day: &str) -> Order<'_> {
    (id, day, "2026-10-20T10:00:00Z", "1.00", false)
}

fn ids(store: &mut Store) -> Vec<i64> {
    let mut v: Vec<i64> = store
        .read_consistent_rows("orders")
        .unwrap()
        .rows
        .iter()
        .map(|r| match r[0] {
            Datum::Int(i) => i,
            ref other => panic!("an id {other:?}"),
        })
        .collect();
    v.sort_unstable();
    v
}

fn outcome(store: &mut Store, (file, m): &(PathBuf, Manifest)) -> Outcome {
    store
        .deliver(file, &orders(), m, now(), None)
        .unwrap()
        .receipt
        .outcome()
}

#[test]
fn rows_staged_for_a_refused_or_failed_delivery_never_reach_a_later_one() {
    // rule: RECV-08 — a rejection's staged rows are never published, nor left for the next
    let d = dir("refused");
    let mut store = Store::open(d.join("s.db")).unwrap();
    let first = orders_csv(&[order(1, "2026-10-01"), order(2, "2026-10-02")]);
    let w = window(
        &d,
        "a.csv",
        &first,
        2,
        ("2026-10-01", "2026-10-02"),
        "2026-10-21T06:00:00Z",
    );
    assert_eq!(outcome(&mut store, &w), Outcome::Accepted);
    // two rows where the manifest declares one: refused, its rows staged all the same
    let text = orders_csv(&[order(3, "2026-10-03"), order(4, "2026-10-03")]);
    let w = window(
        &d,
        "b.csv",
        &text,
        1,
        ("2026-10-03", "2026-10-03"),
        "2026-10-21T07:00:00Z",
    );
    assert_eq!(outcome(&mut store, &w), Outcome::Rejected);
    // a decision that fails after staging (a column type for a column the file lacks):
    // rolled back
    let text = orders_csv(&[order(7, "2026-10-04")]);
    let (file, m) = window(
        &d,
        "c.csv",
        &text,
        1,
        ("2026-10-04", "2026-10-04"),
        "2026-10-21T08:00:00Z",
    );
    let options = DeliverOptions::new().column_type("price", "int");
    assert!(store
        .deliver_with(&file, &orders(), &m, now(), None, &options)
        .is_err());
    // the next deliveries publish their own rows only
    let text = orders_csv(&[order(5, "2026-10-05")]);
    let five = window(
        &d,
        "d.csv",
        &text,
        1,
        ("2026-10-05", "2026-10-05"),
        "2026-10-21T09:00:00Z",
    );
    assert_eq!(outcome(&mut store, &five), Outcome::Accepted);
    assert_eq!(ids(&mut store), vec![1, 2, 5]);
    // a replay stages its rows and publishes nothing
    let replay = store
        .deliver(&five.0, &orders(), &five.1, now(), None)
        .unwrap();
    assert!(replay.replayed());
    let text = orders_csv(&[order(6, "2026-10-06")]);
    let w = window(
        &d,
        "e.csv",
        &text,
        1,
        ("2026-10-06", "2026-10-06"),
        "2026-10-21T10:00:00Z",
    );
    assert_eq!(outcome(&mut store, &w), Outcome::Accepted);
    assert_eq!(ids(&mut store), vec![1, 2, 5, 6]);
    assert!(store.verify("orders").unwrap().ok());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_staging_layout_that_changes_between_deliveries_is_staged_as_its_own() {
    // rule: RECV-06 — each delivery's rows staged in its own columns, whatever came before
    let d = dir("layout");
    let mut store = Store::open(d.join("s.db")).unwrap();
    let text = orders_csv(&[order(1, "2026-10-01")]);
    let w = window(
        &d,
        "a.csv",
        &text,
        1,
        ("2026-10-01", "2026-10-01"),
        "2026-10-21T06:00:00Z",
    );
    assert_eq!(outcome(&mut store, &w), Outcome::Accepted);
    // a file without the amount column: three columns staged, not four, and refused
    let text = "id,order_date,updated_at,deleted\n2,2026-10-02,2026-10-20T10:00:00Z,false\n";
    let w = window(
        &d,
        "b.csv",
        text,
        1,
        ("2026-10-02", "2026-10-02"),
        "2026-10-21T07:00:00Z",
    );
    let r = store.deliver(&w.0, &orders(), &w.1, now(), None).unwrap();
    assert_eq!(r.receipt.outcome(), Outcome::Rejected);
    assert!(
        r.receipt.failures().any(|c| c.name() == "columns"),
        "{:?}",
        r.receipt.failures().collect::<Vec<_>>()
    );
    // four columns again, with the amount in its place
    let text = orders_csv(&[(3, "2026-10-03", "2026-10-20T10:00:00Z", "3.25", false)]);
    let w = window(
        &d,
        "c.csv",
        &text,
        1,
        ("2026-10-03", "2026-10-03"),
        "2026-10-21T08:00:00Z",
    );
    assert_eq!(outcome(&mut store, &w), Outcome::Accepted);
    // a whole-table read (staged in its own table) between two window reads
    let text = orders_csv(&[order(1, "2026-10-01"), order(3, "2026-10-03")]);
    std::fs::write(d.join("f.csv"), &text).unwrap();
    let m = orders()
        .manifest("full", ts("2026-10-21T09:00:00Z"))
        .rows(2)
        .content_hash(sha(&text))
        .build()
        .unwrap();
    assert_eq!(
        outcome(&mut store, &(d.join("f.csv"), m)),
        Outcome::Accepted
    );
    let text = orders_csv(&[(4, "2026-10-04", "2026-10-20T10:00:00Z", "4.50", false)]);
    let w = window(
        &d,
        "g.csv",
        &text,
        1,
        ("2026-10-04", "2026-10-04"),
        "2026-10-21T10:00:00Z",
    );
    assert_eq!(outcome(&mut store, &w), Outcome::Accepted);
    let snapshot = store.read_consistent_rows("orders").unwrap();
    let amount = snapshot.columns.iter().position(|c| c == "amount").unwrap();
    let mut rows: Vec<(Datum, Datum)> = snapshot
        .rows
        .iter()
        .map(|r| (r[0].clone(), r[amount].clone()))
        .collect();
    rows.sort_by_key(|(id, _)| match id {
        Datum::Int(i) => *i,
        _ => i64::MAX,
    });
    assert_eq!(
        rows.iter().map(|(id, _)| id.clone()).collect::<Vec<_>>(),
        vec![Datum::Int(1), Datum::Int(3), Datum::Int(4)]
    );
    assert_ne!(rows[2].1, Datum::Null, "the amount is staged in its column");
    assert!(store.verify("orders").unwrap().ok());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_file_above_the_small_size_is_checked_and_staged_as_a_small_one() {
    // rule: RECV-06 — the same checks and rows, read on the calling thread or beside it
    let d = dir("large");
    let mut store = Store::open(d.join("s.db")).unwrap();
    let many: Vec<Order<'_>> = (1..=3000).map(|i| order(i, "2026-10-01")).collect();
    let text = orders_csv(&many);
    assert!(text.len() > 64 << 10, "above the small size");
    let w = window(
        &d,
        "large.csv",
        &text,
        3000,
        ("2026-10-01", "2026-10-01"),
        "2026-10-21T06:00:00Z",
    );
    assert_eq!(outcome(&mut store, &w), Outcome::Accepted);
    assert_eq!(ids(&mut store), (1..=3000).collect::<Vec<_>>());
    // one repeated key, in a large file and in a small one: the same check fails
    let failing = |store: &mut Store, name: &str, rows: &[Order<'_>], at: &str| {
        let text = orders_csv(rows);
        let w = window(
            &d,
            name,
            &text,
            rows.len() as u64,
            ("2026-10-02", "2026-10-02"),
            at,
        );
        let r = store.deliver(&w.0, &orders(), &w.1, now(), None).unwrap();
        assert_eq!(r.receipt.outcome(), Outcome::Rejected);
        (
            text.len(),
            r.receipt.failures().cloned().collect::<Vec<_>>(),
        )
    };
    let mut large: Vec<Order<'_>> = (5001..=8000).map(|i| order(i, "2026-10-02")).collect();
    large.push(order(5001, "2026-10-02"));
    let small = [order(5001, "2026-10-02"), order(5001, "2026-10-02")];
    let (big, on_thread) = failing(&mut store, "l.csv", &large, "2026-10-21T07:00:00Z");
    let (little, here) = failing(&mut store, "s.csv", &small, "2026-10-21T08:00:00Z");
    assert!(big > 64 << 10 && little < 64 << 10);
    let names = |v: &[dogana::Check]| v.iter().map(|c| c.name().to_owned()).collect::<Vec<_>>();
    assert_eq!(names(&on_thread), vec!["keys".to_owned()]);
    assert_eq!(names(&here), names(&on_thread));
    assert_eq!(ids(&mut store), (1..=3000).collect::<Vec<_>>());
    assert!(store.verify("orders").unwrap().ok());
    let _ = std::fs::remove_dir_all(&d);
}
