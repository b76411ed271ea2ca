//! Concurrency: several writers (threads with their own connections, and processes) deliver to
//! one store at once. No receipt is lost, every acceptance continues the head it was published
//! on (a decision made against an old head is made again, RECV-10), and the published rows are
//! exactly what the accepted deliveries give when replayed one by one in publication order.
//! A reader meanwhile always sees rows with the ledger that describes them (RECV-13).
//!
//! rule: RECV-10, RECV-11, RECV-12, RECV-13, RECV-09, LOADER-08

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use dogana::{Manifest, Outcome, Receipt, Timestamp, Window, Wire};
use dogana_sqlite::conformance::{date, orders, orders_csv, sha, ts, Order};
use dogana_sqlite::Store;

const CHILD: &str = "DOGANA_SQLITE_CONCURRENCY_CHILD";
const WORKERS: usize = 4;

#[derive(Clone)]
struct Job {
    file: PathBuf,
    manifest: Manifest,
}

fn now() -> Timestamp {
    ts("2026-11-01T00:00:00Z")
}

/// A base full read, then per worker: windows over its own days, changes, and a full — so
/// some deliveries commute, some conflict and some are refused depending on the order.
fn jobs(dir: &Path, write: bool) -> (Job, Vec<Vec<Job>>) {
    let c = orders();
    let make = |name: &str, rows: Vec<Order<'_>>, m: &dyn Fn(String, u64, u64) -> Manifest| {
        let text = orders_csv(&rows);
        let file = dir.join(name);
        if write {
            std::fs::write(&file, &text).unwrap();
        }
        let live = rows.iter().filter(|r| !r.4).count() as u64;
        let tombs = rows.iter().filter(|r| r.4).count() as u64;
        Job {
            file,
            manifest: m(sha(&text), live, tombs),
        }
    };
    let days = [
        "2026-10-01",
        "2026-10-02",
        "2026-10-03",
        "2026-10-04",
        "2026-10-05",
        "2026-10-06",
        "2026-10-07",
        "2026-10-08",
    ];
    let base_rows: Vec<Order<'_>> = (0..80)
        .map(|i| (i as i64, days[i % 8], "2026-10-01T10:00:00Z", "1.00", false))
        .collect();
    let base = make("base.csv", base_rows, &|h, n, _| {
        c.manifest("full", ts("2026-10-10T06:00:00Z"))
            .rows(n)
            .content_hash(h)
            .build()
            .unwrap()
    });
    let mut per = Vec::new();
    for w in 0..WORKERS {
        let mut list = Vec::new();
        for (k, d) in [days[2 * w], days[2 * w + 1]].into_iter().enumerate() {
            let at = format!("2026-10-1{}T06:00:00Z", 1 + k);
            let amount = ["2.00", "3.00"][k];
            let rows: Vec<Order<'_>> = (0..80)
                .filter(|i| days[(*i % 8) as usize] == d && i % 3 != k as i64)
                .map(|i| (i, d, "2026-10-10T10:00:00Z", amount, false))
                .collect();
            list.push(make(&format!("w{w}-{k}.csv"), rows, &|h, n, _| {
                c.manifest("window", ts(&at))
                    .window(Window::new(date(d), date(d)))
                    .rows(n)
                    .content_hash(h)
                    .build()
                    .unwrap()
            }));
        }
        // changes: worker w updates its ids and deletes one; since is the base's instant
        let at = format!("2026-10-1{}T07:00:00Z", 1 + w);
        let mut rows: Vec<Order<'_>> = (0..80)
            .filter(|i| (*i as usize) % WORKERS == w && i % 5 != 0)
            .map(|i| {
                (
                    i,
                    days[(i % 8) as usize],
                    "2026-10-10T12:00:00Z",
                    "4.00",
                    false,
                )
            })
            .collect();
        rows.push((w as i64 * 5, "", "", "", true));
        list.push(make(&format!("c{w}.csv"), rows, &|h, n, t| {
            c.manifest("changes", ts(&at))
                .since(ts("2026-10-10T06:00:00Z"))
                .rows(n)
                .tombstones(t)
                .content_hash(h)
                .build()
                .unwrap()
        }));
        // a full at a distinct instant
        let at = format!("2026-10-2{w}T06:00:00Z");
        let rows: Vec<Order<'_>> = (0..(40 + w as i64 * 10))
            .map(|i| {
                (
                    i,
                    days[(i % 8) as usize],
                    "2026-10-19T10:00:00Z",
                    "5.00",
                    false,
                )
            })
            .collect();
        list.push(make(&format!("f{w}.csv"), rows, &|h, n, _| {
            c.manifest("full", ts(&at))
                .rows(n)
                .content_hash(h)
                .build()
                .unwrap()
        }));
        per.push(list);
    }
    (base, per)
}

fn deliver(store: &mut Store, job: &Job) -> Receipt {
    deliver_counting(store, job).0
}

fn deliver_counting(store: &mut Store, job: &Job) -> (Receipt, u32) {
    let d = store
        .deliver(
            &job.file,
            &orders(),
            &job.manifest,
            now(),
            Some("concurrency"),
        )
        .expect("no operational error (busy timeout, ...)");
    (d.receipt, d.redecided)
}

/// Checks the invariants after concurrent deliveries of `all` (the base first).
fn check(dir: &Path, path: &Path, all: &[Job]) {
    let mut store = Store::open(path).unwrap();
    let report = store.verify("orders").unwrap();
    assert!(report.ok(), "{:?}", report.problems);
    let stored = store.receipts("orders").unwrap();
    // no receipt lost: every manifest was decided once (distinct manifests: no replay)
    assert_eq!(stored.len(), all.len(), "one stored receipt per delivery");
    let mut manifests: Vec<String> = stored
        .iter()
        .map(|r| r.receipt.manifest().identity())
        .collect();
    manifests.sort();
    let mut sent: Vec<String> = all.iter().map(|j| j.manifest.identity()).collect();
    sent.sort();
    assert_eq!(manifests, sent);
    // every acceptance continues the previous one's head
    let accepted: Vec<&Receipt> = stored
        .iter()
        .map(|r| &r.receipt)
        .filter(|r| r.outcome() == Outcome::Accepted)
        .collect();
    let mut head: Option<&str> = None;
    for r in &accepted {
        assert_eq!(
            r.base_publication_id(),
            head,
            "an acceptance published on an old head"
        );
        head = Some(r.publication_id());
    }
    // the rows are what the accepted deliveries give one by one, in publication order
    let replay_dir = dir.join("sequential");
    std::fs::create_dir_all(&replay_dir).unwrap();
    let mut sequential = Store::open(replay_dir.join("store.db")).unwrap();
    for r in &accepted {
        let job = all
            .iter()
            .find(|j| j.manifest.identity() == r.manifest().identity())
            .unwrap();
        let d = deliver(&mut sequential, job);
        assert_eq!(d.outcome(), Outcome::Accepted);
        assert_eq!(d.publication_id(), r.publication_id());
    }
    let a = store.read_consistent_rows("orders").unwrap();
    let b = sequential.read_consistent_rows("orders").unwrap();
    let sorted = |mut v: Vec<Vec<rusqlite::types::Value>>| {
        v.sort_by_key(|r| format!("{r:?}"));
        v
    };
    assert_eq!(sorted(a.rows), sorted(b.rows));
    assert_eq!(a.ledger, b.ledger);
    eprintln!(
        "{} deliveries: {} accepted, {} rejected",
        all.len(),
        accepted.len(),
        all.len() - accepted.len()
    );
}

fn fresh(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dogana-sqlite-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn threads_with_their_own_connections() {
    if std::env::var(CHILD).is_ok() {
        return;
    }
    let dir = fresh("threads");
    let path = dir.join("store.db");
    let (base, per) = jobs(&dir, true);
    let mut all = vec![base.clone()];
    all.extend(per.iter().flatten().cloned());
    Store::open(&path).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    // a reader: every snapshot's rows are those its ledger describes
    let reader = {
        let (path, stop) = (path.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut store = Store::open(&path).unwrap();
            let mut reads = 0;
            while !stop.load(Ordering::Relaxed) {
                // rule: RECV-13 — rows and ledger from one committed state
                let (ledger, count, receipts_head) = store
                    .read_consistent("orders", |conn, ledger| {
                        // -1: not published yet
                        let count: i64 = conn
                            .query_row("SELECT count(*) FROM main.orders", [], |r| r.get(0))
                            .unwrap_or(-1);
                        let head: Option<String> = conn
                            .query_row(
                                "SELECT json_extract(document, '$.publication_id') FROM dogana_receipts
                                 WHERE table_name = 'orders' AND outcome = 'accepted'
                                 ORDER BY accepted_order DESC LIMIT 1",
                                [],
                                |r| r.get(0),
                            )
                            .ok();
                        Ok((ledger.cloned(), count, head))
                    })
                    .unwrap();
                assert_eq!(
                    ledger
                        .as_ref()
                        .and_then(|l| l.publication_id().map(str::to_owned)),
                    receipts_head,
                    "the ledger read is the last acceptance's"
                );
                assert_eq!(
                    ledger.is_some(),
                    count >= 0,
                    "rows without a ledger or the reverse"
                );
                reads += 1;
            }
            reads
        })
    };
    let mut store = Store::open(&path).unwrap();
    deliver(&mut store, &base);
    let writers: Vec<_> = per
        .into_iter()
        .map(|list| {
            let path = path.clone();
            std::thread::spawn(move || {
                let mut store = Store::open(&path).unwrap();
                list.iter()
                    .map(|job| deliver_counting(&mut store, job).1)
                    .sum::<u32>()
            })
        })
        .collect();
    let redecided: u32 = writers.into_iter().map(|w| w.join().unwrap()).sum();
    eprintln!("threads: {redecided} decisions were made again (RECV-10)");
    stop.store(true, Ordering::Relaxed);
    let reads = reader.join().unwrap();
    assert!(reads > 0);
    check(&dir, &path, &all);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A child process: delivers worker `i`'s jobs.
#[test]
fn concurrency_child() {
    let Ok(spec) = std::env::var(CHILD) else {
        return;
    };
    let (dir, i) = spec.rsplit_once('|').unwrap();
    let dir = PathBuf::from(dir);
    let (_, per) = jobs(&dir, false);
    let mut store = Store::open(dir.join("store.db")).unwrap();
    for job in &per[i.parse::<usize>().unwrap()] {
        deliver(&mut store, job);
    }
}

#[test]
fn processes_at_once() {
    if std::env::var(CHILD).is_ok() {
        return;
    }
    let dir = fresh("processes");
    let path = dir.join("store.db");
    let (base, per) = jobs(&dir, true);
    let mut all = vec![base.clone()];
    all.extend(per.iter().flatten().cloned());
    let mut store = Store::open(&path).unwrap();
    deliver(&mut store, &base);
    drop(store);
    let children: Vec<_> = (0..WORKERS)
        .map(|i| {
            Command::new(std::env::current_exe().unwrap())
                .args([
                    "concurrency_child",
                    "--exact",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env(CHILD, format!("{}|{i}", dir.display()))
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success(), "a child failed");
    }
    check(&dir, &path, &all);
    let _ = std::fs::remove_dir_all(&dir);
}
