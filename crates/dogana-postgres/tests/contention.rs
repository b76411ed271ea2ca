//! Writers at once: eight processes delivering to one table never lose a receipt nor publish
//! on an old head (the advisory lock serializes them; a stale decision is made again,
//! RECV-10); writers of different tables do not wait on each other.
//!
//! rule: RECV-10, RECV-11, RECV-12, LOADER-08

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use dogana::{Manifest, Outcome, Window, Wire};
use dogana_postgres::{Postgres, Store};
use dogana_receiver::conformance::{
    date, orders, orders_csv, orders_named, sha, ts, Harness, Order,
};

const CHILD: &str = "DOGANA_POSTGRES_CONTENTION_CHILD";
const PROCESSES: usize = 8;
const DAYS: [&str; 8] = [
    "2026-10-01",
    "2026-10-02",
    "2026-10-03",
    "2026-10-04",
    "2026-10-05",
    "2026-10-06",
    "2026-10-07",
    "2026-10-08",
];

fn now() -> dogana::Timestamp {
    ts("2026-11-01T00:00:00Z")
}

/// The base full delivery, then per process: a window over its own day and a changes
/// delivery of its own ids (each with its own produced_at).
fn jobs(dir: &Path, write: bool) -> (PathBuf, Manifest, Vec<Vec<(PathBuf, Manifest)>>) {
    let c = orders();
    let file = |name: &str, rows: &[Order<'_>]| {
        let text = orders_csv(rows);
        let path = dir.join(name);
        if write {
            std::fs::write(&path, &text).expect("writes");
        }
        (path, sha(&text))
    };
    let base: Vec<Order<'_>> = (0..160)
        .map(|i| (i as i64, DAYS[i % 8], "2026-10-01T10:00:00Z", "1.00", false))
        .collect();
    let (base_file, h) = file("base.csv", &base);
    let base_manifest = c
        .manifest("full", ts("2026-10-10T06:00:00Z"))
        .rows(160)
        .content_hash(h)
        .build()
        .expect("manifest");
    let mut per = Vec::new();
    for (p, day) in DAYS.iter().copied().enumerate().take(PROCESSES) {
        let rows: Vec<Order<'_>> = (0..160)
            .filter(|i| i % 8 == p as i64)
            .map(|i| (i, day, "2026-10-10T10:00:00Z", "2.00", false))
            .collect();
        let (f1, h1) = file(&format!("w{p}.csv"), &rows);
        let m1 = c
            .manifest("window", ts(&format!("2026-10-11T06:{p:02}:00Z")))
            .window(Window::new(date(day), date(day)))
            .rows(rows.len() as u64)
            .content_hash(h1)
            .build()
            .expect("manifest");
        let rows: Vec<Order<'_>> = (0..160)
            .filter(|i| i % 8 == p as i64 && i % 3 == 0)
            .map(|i| (i, day, "2026-10-10T12:00:00Z", "3.00", false))
            .collect();
        let (f2, h2) = file(&format!("c{p}.csv"), &rows);
        let m2 = c
            .manifest("changes", ts(&format!("2026-10-12T06:{p:02}:00Z")))
            .since(ts("2026-10-10T06:00:00Z"))
            .rows(rows.len() as u64)
            .content_hash(h2)
            .build()
            .expect("manifest");
        per.push(vec![(f1, m1), (f2, m2)]);
    }
    (base_file, base_manifest, per)
}

/// A child process: delivers process `i`'s jobs. Does nothing unless the parent started it.
#[test]
fn contention_child() {
    let Ok(spec) = std::env::var(CHILD) else {
        return;
    };
    let (dir, i) = spec.rsplit_once('|').expect("dir|i");
    let dir = PathBuf::from(dir);
    let (_, _, per) = jobs(&dir, false);
    let mut store = Store::new(Postgres::create(&dir.join("store")).expect("opens"));
    for (file, manifest) in &per[i.parse::<usize>().expect("a number")] {
        store
            .deliver(file, &orders(), manifest, now(), Some("contention"))
            .expect("no operational error");
    }
}

#[test]
fn eight_processes_on_one_table_lose_no_receipt_and_publish_on_the_head() {
    if std::env::var(CHILD).is_ok() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("dogana-pg-contention-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a folder");
    let (base_file, base, per) = jobs(&dir, true);
    let mut store = Store::new(Postgres::create(&dir.join("store")).expect("opens"));
    store
        .deliver(&base_file, &orders(), &base, now(), Some("contention"))
        .expect("the base");
    let started = Instant::now();
    let children: Vec<_> = (0..PROCESSES)
        .map(|i| {
            Command::new(std::env::current_exe().expect("the test binary"))
                .args([
                    "contention_child",
                    "--exact",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env(CHILD, format!("{}|{i}", dir.display()))
                .stdout(std::process::Stdio::null())
                .spawn()
                .expect("spawns")
        })
        .collect();
    for mut c in children {
        assert!(c.wait().expect("waits").success(), "a child failed");
    }
    eprintln!("{PROCESSES} processes delivered in {:?}", started.elapsed());
    let report = store.verify("orders").expect("verify");
    assert!(report.ok(), "{:?}", report.problems);
    let stored = store.receipts("orders").expect("receipts");
    // rule: RECV-11 — one receipt per delivery, none lost
    assert_eq!(stored.len(), 1 + 2 * PROCESSES);
    let mut sent: Vec<String> = std::iter::once(base.identity())
        .chain(per.iter().flatten().map(|(_, m)| m.identity()))
        .collect();
    sent.sort();
    let mut got: Vec<String> = stored
        .iter()
        .map(|r| r.receipt.manifest().identity())
        .collect();
    got.sort();
    assert_eq!(got, sent);
    // rule: RECV-10 — every acceptance continues the previous one's head
    let mut head: Option<String> = None;
    let mut accepted = 0;
    for r in stored.iter().map(|r| &r.receipt) {
        if r.outcome() == Outcome::Accepted {
            assert_eq!(
                r.base_publication_id(),
                head.as_deref(),
                "an acceptance published on an old head"
            );
            head = Some(r.publication_id().to_owned());
            accepted += 1;
        }
    }
    eprintln!("{} receipts, {accepted} accepted", stored.len());
    assert!(accepted > 1, "deliveries were published");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn writers_of_different_tables_do_not_wait_on_each_other() {
    if std::env::var(CHILD).is_ok() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("dogana-pg-tables-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a folder");
    let store_dir = dir.join("store");
    let setup = Store::new(Postgres::create(&store_dir).expect("opens"));
    let schema = setup.backend().schema().to_owned();
    // 20,000 rows per table: each delivery's commit takes a while
    let write = |table: &str| {
        let c = orders_named(table, "id", "order_date");
        let rows: Vec<Order<'_>> = (0..20_000)
            .map(|i| (i as i64, DAYS[i % 8], "2026-10-01T10:00:00Z", "1.00", false))
            .collect();
        let text = orders_csv(&rows);
        let path = dir.join(format!("{table}.csv"));
        std::fs::write(&path, &text).expect("writes");
        let m = c
            .manifest("full", ts("2026-10-10T06:00:00Z"))
            .rows(20_000)
            .content_hash(sha(&text))
            .build()
            .expect("manifest");
        (path, c, m)
    };
    let a = write("table_a");
    let b = write("table_b");
    // each writer's session, opened before the lock is taken
    let store_a = Store::new(setup.backend().reopen().expect("a session"));
    let store_b = Store::new(setup.backend().reopen().expect("a session"));
    drop(setup);
    // another session holds table_a's write lock for four seconds
    let hold = Duration::from_secs(4);
    let mut holder = dogana_postgres::postgres::Client::connect(
        &dogana_postgres::harness::test_url().expect("DOGANA_PG_URL"),
        dogana_postgres::postgres::NoTls,
    )
    .expect("the server");
    let (locked_tx, locked_rx) = std::sync::mpsc::channel();
    let holding = std::thread::spawn(move || {
        let mut tx = holder.transaction().expect("a transaction");
        tx.execute(
            "SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))",
            &[&schema, &"table_a"],
        )
        .expect("the lock");
        locked_tx.send(()).expect("sends");
        std::thread::sleep(hold + Duration::from_millis(100));
        tx.commit().expect("commits");
    });
    locked_rx.recv().expect("the lock is held");
    let t0 = Instant::now();
    let deliver = |(path, c, m): (PathBuf, dogana::Contract, Manifest), mut store: Store| {
        std::thread::spawn(move || {
            let start = t0.elapsed();
            let d = store
                .deliver(&path, &c, &m, now(), Some("tables"))
                .expect("delivers");
            assert!(d.accepted());
            (start, t0.elapsed())
        })
    };
    let ta = deliver(a, store_a);
    let tb = deliver(b, store_b);
    let (a_start, a_end) = ta.join().expect("a");
    let (b_start, b_end) = tb.join().expect("b");
    holding.join().expect("the holder");
    eprintln!(
        "table_a (its lock held by another session for {hold:?}): {a_start:?} .. {a_end:?}; table_b: {b_start:?} .. {b_end:?}"
    );
    // table_b's delivery ran while table_a's writer waited: their intervals overlap, and
    // table_b did not wait for the lock of table_a
    assert!(b_start < a_end && a_start < b_end, "the deliveries overlap");
    assert!(b_end < hold, "table_b waited for table_a's lock");
    assert!(a_end >= hold, "table_a's writer waited for its lock");
    let _ = std::fs::remove_dir_all(&dir);
}
