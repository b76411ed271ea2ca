//! The concurrency harness: several writers (threads with their own handles, and processes)
//! deliver to one store at once. No receipt is lost, every acceptance continues the head it
//! was published on (a decision made against an old head is made again, RECV-10), and the
//! published rows are exactly what the accepted deliveries give when replayed one by one in
//! publication order. A reader meanwhile always sees rows with the ledger that describes them
//! (RECV-13): every snapshot it takes equals the sequential replay's rows after that
//! publication.
//!
//! ```ignore
//! #[test]
//! fn threads() { dogana_receiver::concurrency::threads::<Sqlite>("sqlite"); }
//! #[test]
//! fn concurrency_child() { dogana_receiver::concurrency::child::<Sqlite>("DOGANA_SQLITE_CC"); }
//! #[test]
//! fn processes() {
//!     dogana_receiver::concurrency::processes::<Sqlite>("DOGANA_SQLITE_CC", "concurrency_child");
//! }
//! ```
//!
//! rule: RECV-10, RECV-11, RECV-12, RECV-13, RECV-09, LOADER-08

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use dogana::{Manifest, Outcome, Receipt, Timestamp, Window, Wire};

use crate::conformance::{date, orders, orders_csv, sha, ts, Harness, Order};
use crate::{Datum, Store};

/// How many writers run at once.
pub const WORKERS: usize = 4;

/// One delivery.
#[derive(Debug, Clone)]
pub struct Job {
    /// The file.
    pub file: PathBuf,
    /// Its manifest.
    pub manifest: Manifest,
}

fn now() -> Timestamp {
    ts("2026-11-01T00:00:00Z")
}

/// A base full read, then per worker: windows over its own days, changes, and a full — so
/// some deliveries commute, some conflict and some are refused depending on the order.
pub fn jobs(dir: &Path, write: bool) -> (Job, Vec<Vec<Job>>) {
    let c = orders();
    let make = |name: &str, rows: Vec<Order<'_>>, m: &dyn Fn(String, u64, u64) -> Manifest| {
        let text = orders_csv(&rows);
        let file = dir.join(name);
        if write {
            std::fs::write(&file, &text).expect("writes a delivery");
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
            .expect("manifest")
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
                    .expect("manifest")
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
                .expect("manifest")
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
                .expect("manifest")
        }));
        per.push(list);
    }
    (base, per)
}

fn deliver<B: Harness>(store: &mut Store<B>, job: &Job) -> (Receipt, u32) {
    let d = store
        .deliver(
            &job.file,
            &orders(),
            &job.manifest,
            now(),
            Some("concurrency"),
        )
        .expect("no operational error (a lock wait, ...)");
    (d.receipt, d.redecided)
}

fn sorted_rows(rows: &[Vec<Datum>]) -> Vec<Vec<Option<String>>> {
    let mut v: Vec<Vec<Option<String>>> = rows
        .iter()
        .map(|r| r.iter().map(Datum::render).collect())
        .collect();
    v.sort();
    v
}

/// What a reader saw: each publication id with the rows read beside that ledger.
type Seen = BTreeSet<(Option<String>, Vec<Vec<Option<String>>>)>;

/// Checks the invariants after concurrent deliveries of `all` (the base first), and that
/// every snapshot a reader took is the rows of its publication.
fn check<B: Harness>(dir: &Path, all: &[Job], seen: &Seen) {
    let mut store = Store::new(B::create(&dir.join("store")).expect("opens"));
    let report = store.verify("orders").expect("verify");
    assert!(report.ok(), "{:?}", report.problems);
    let stored = store.receipts("orders").expect("receipts");
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
    let mut sequential = Store::new(B::create(&dir.join("sequential")).expect("opens"));
    let mut after: BTreeMap<Option<String>, Vec<Vec<Option<String>>>> = BTreeMap::new();
    after.insert(None, Vec::new());
    for r in &accepted {
        let job = all
            .iter()
            .find(|j| j.manifest.identity() == r.manifest().identity())
            .expect("a sent job");
        let (d, _) = deliver(&mut sequential, job);
        assert_eq!(d.outcome(), Outcome::Accepted);
        assert_eq!(d.publication_id(), r.publication_id());
        let s = sequential.read_consistent_rows("orders").expect("reads");
        after.insert(Some(r.publication_id().to_owned()), sorted_rows(&s.rows));
    }
    let a = store.read_consistent_rows("orders").expect("reads");
    let b = sequential.read_consistent_rows("orders").expect("reads");
    assert_eq!(sorted_rows(&a.rows), sorted_rows(&b.rows));
    assert_eq!(a.ledger, b.ledger);
    // rule: RECV-13 — every snapshot's rows are those its ledger describes
    for (publication, rows) in seen {
        assert_eq!(
            after.get(publication),
            Some(rows),
            "a reader saw rows that publication {publication:?} does not describe"
        );
    }
    eprintln!(
        "{} deliveries: {} accepted, {} rejected; the reader saw {} distinct states",
        all.len(),
        accepted.len(),
        all.len() - accepted.len(),
        seen.len()
    );
}

fn fresh(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("dogana-concurrency-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    dir
}

/// Writer threads, each with its own handle ([`Harness::reopen`]), and a reader thread.
pub fn threads<B: Harness + Send + 'static>(name: &str) {
    let dir = fresh(&format!("{name}-threads"));
    let (base, per) = jobs(&dir, true);
    let mut all = vec![base.clone()];
    all.extend(per.iter().flatten().cloned());
    let mut store = Store::new(B::create(&dir.join("store")).expect("opens"));
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let backend = store.backend().reopen().expect("a reader's handle");
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut store = Store::new(backend);
            let mut seen = Seen::new();
            let mut reads = 0;
            while !stop.load(Ordering::Relaxed) {
                let s = store.read_consistent_rows("orders").expect("reads");
                let publication = s
                    .ledger
                    .as_ref()
                    .and_then(|l| l.publication_id().map(str::to_owned));
                seen.insert((publication, sorted_rows(&s.rows)));
                reads += 1;
            }
            (reads, seen)
        })
    };
    deliver(&mut store, &base);
    let writers: Vec<_> = per
        .into_iter()
        .map(|list| {
            let backend = store.backend().reopen().expect("a writer's handle");
            std::thread::spawn(move || {
                let mut store = Store::new(backend);
                list.iter()
                    .map(|job| deliver(&mut store, job).1)
                    .sum::<u32>()
            })
        })
        .collect();
    let redecided: u32 = writers
        .into_iter()
        .map(|w| w.join().expect("a writer"))
        .sum();
    eprintln!("threads: {redecided} decisions were made again (RECV-10)");
    stop.store(true, Ordering::Relaxed);
    let (reads, seen) = reader.join().expect("the reader");
    assert!(reads > 0);
    drop(store);
    check::<B>(&dir, &all, &seen);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A child process: delivers worker `i`'s jobs. Does nothing unless started by [`processes`].
pub fn child<B: Harness>(env: &str) {
    let Ok(spec) = std::env::var(env) else {
        return;
    };
    let (dir, i) = spec.rsplit_once('|').expect("dir|worker");
    let dir = PathBuf::from(dir);
    let (_, per) = jobs(&dir, false);
    let mut store = Store::new(B::create(&dir.join("store")).expect("opens"));
    for job in &per[i.parse::<usize>().expect("a worker number")] {
        deliver(&mut store, job);
    }
}

/// [`WORKERS`] processes at once (the test named `child_test` calls [`child`] with `env`):
/// first on a store one delivery made, then on a file none of them finds, so that they race
/// to create the store.
pub fn processes<B: Harness>(env: &str, child_test: &str) {
    if std::env::var(env).is_ok() {
        return;
    }
    for made_before in [true, false] {
        let dir = fresh(&format!("{env}-processes-{made_before}"));
        let (base, per) = jobs(&dir, true);
        let mut all = Vec::new();
        if made_before {
            let mut store = Store::new(B::create(&dir.join("store")).expect("opens"));
            deliver(&mut store, &base);
            all.push(base.clone());
        }
        all.extend(per.iter().flatten().cloned());
        let children: Vec<_> = (0..WORKERS)
            .map(|i| {
                Command::new(std::env::current_exe().expect("the test binary"))
                    .args([child_test, "--exact", "--nocapture", "--test-threads=1"])
                    .env(env, format!("{}|{i}", dir.display()))
                    .stdout(std::process::Stdio::null())
                    .spawn()
                    .expect("spawns a child")
            })
            .collect();
        for mut c in children {
            assert!(
                c.wait().expect("waits").success(),
                "a child failed (store made before: {made_before})"
            );
        }
        check::<B>(&dir, &all, &Seen::new());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
