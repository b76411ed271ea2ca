//! Crash safety: a child process delivers a sequence of files (full, window, changes with
//! tombstones, full, window changes) into one store and is SIGKILLed at random instants,
//! 240 times; after every kill the store holds exactly the state after some prefix of the
//! sequence (rows, ledger and receipts together: never a mixture) and verify passes.
//!
//! rule: RECV-09 — rows, ledger and receipt change in one atomic step
//! rule: TRUST-07 — the receiver saves rows and ledger in one commit: no state mixes them
//! rule: RECV-12, RECOVERY-01 — verify after every kill
//! rule: RECV-02 — the child re-delivers the whole sequence; what was committed replays

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use dogana::{Contract, Receipt, Timestamp, Window, Wire};
use dogana_sqlite::conformance::{date, orders, orders_csv, sha, ts, Order};
use dogana_sqlite::Store;

const CHILD: &str = "DOGANA_SQLITE_CRASH_CHILD";
const KILLS: usize = 240;
const ROWS: i64 = 600;

struct Step {
    file: PathBuf,
    manifest: dogana::Manifest,
}

fn day(i: i64) -> String {
    format!("2026-10-{:02}", 1 + i % 9)
}

/// The sequence, its files written into `dir` when `write`.
fn sequence(dir: &Path, write: bool) -> Vec<Step> {
    let c = orders();
    let mut steps = Vec::new();
    let mut add =
        |name: &str, text: String, build: &dyn Fn(&Contract, String) -> dogana::Manifest| {
            let file = dir.join(name);
            if write {
                std::fs::write(&file, &text).unwrap();
            }
            steps.push(Step {
                file,
                manifest: build(&c, sha(&text)),
            });
        };
    let amounts = |k: i64| (1..=ROWS).map(move |i| (i, format!("{}.{k:02}", i * 10)));
    // 1. full
    let rows: Vec<(i64, String, String)> = amounts(1).map(|(i, a)| (i, day(i), a)).collect();
    let text = csv(&rows, "2026-10-01T10:00:00Z", &[]);
    add("1-full.csv", text, &|c, h| {
        c.manifest("full", ts("2026-10-10T06:00:00Z"))
            .rows(ROWS as u64)
            .content_hash(h)
            .build()
            .unwrap()
    });
    // 2. window [10-03, 10-04]: every row of those days, new amounts, a third of them dropped
    let rows: Vec<(i64, String, String)> = amounts(2)
        .map(|(i, a)| (i, day(i), a))
        .filter(|(i, d, _)| (d == "2026-10-03" || d == "2026-10-04") && i % 3 != 0)
        .collect();
    let n = rows.len() as u64;
    let text = csv(&rows, "2026-10-10T10:00:00Z", &[]);
    add("2-window.csv", text, &|c, h| {
        c.manifest("window", ts("2026-10-11T06:00:00Z"))
            .window(Window::new(date("2026-10-03"), date("2026-10-04")))
            .rows(n)
            .content_hash(h)
            .build()
            .unwrap()
    });
    // 3. changes with tombstones: even ids updated, ids divisible by 7 deleted
    let rows: Vec<(i64, String, String)> = amounts(3)
        .map(|(i, a)| (i, day(i), a))
        .filter(|(i, _, _)| i % 2 == 0 && i % 7 != 0)
        .collect();
    let tombs: Vec<i64> = (1..=ROWS).filter(|i| i % 7 == 0).collect();
    let (n, t) = (rows.len() as u64, tombs.len() as u64);
    let text = csv(&rows, "2026-10-11T10:00:00Z", &tombs);
    add("3-changes.csv", text, &|c, h| {
        c.manifest("changes", ts("2026-10-12T06:00:00Z"))
            .since(ts("2026-10-10T06:00:00Z"))
            .rows(n)
            .tombstones(t)
            .content_hash(h)
            .build()
            .unwrap()
    });
    // 4. full again, fewer rows
    let rows: Vec<(i64, String, String)> = amounts(4)
        .map(|(i, a)| (i, day(i), a))
        .filter(|(i, _, _)| i % 5 != 0)
        .collect();
    let n = rows.len() as u64;
    let text = csv(&rows, "2026-10-12T10:00:00Z", &[]);
    add("4-full.csv", text, &|c, h| {
        c.manifest("full", ts("2026-10-13T06:00:00Z"))
            .rows(n)
            .content_hash(h)
            .build()
            .unwrap()
    });
    // 5. window changes with tombstones over [10-05, 10-05]
    let rows: Vec<(i64, String, String)> = amounts(5)
        .map(|(i, a)| (i, day(i), a))
        .filter(|(i, d, _)| d == "2026-10-05" && i % 5 != 0 && i % 2 == 1)
        .collect();
    let tombs: Vec<i64> = (1..=ROWS)
        .filter(|i| day(*i) == "2026-10-05" && i % 5 != 0 && i % 2 == 0)
        .collect();
    let (n, t) = (rows.len() as u64, tombs.len() as u64);
    let text = csv(&rows, "2026-10-13T10:00:00Z", &tombs);
    add("5-window-changes.csv", text, &|c, h| {
        c.manifest("window_changes", ts("2026-10-14T06:00:00Z"))
            .window(Window::new(date("2026-10-05"), date("2026-10-05")))
            .since(ts("2026-10-13T06:00:00Z"))
            .rows(n)
            .tombstones(t)
            .content_hash(h)
            .build()
            .unwrap()
    });
    steps
}

fn csv(rows: &[(i64, String, String)], updated: &str, tombs: &[i64]) -> String {
    let live: Vec<Order<'_>> = rows
        .iter()
        .map(|(i, d, a)| (*i, d.as_str(), updated, a.as_str(), false))
        .collect();
    let mut text = orders_csv(&live);
    for t in tombs {
        text.push_str(&format!("{t},,,,true\n"));
    }
    text
}

fn now() -> Timestamp {
    ts("2026-11-01T00:00:00Z")
}

fn run(dir: &Path, store: &mut Store) -> Vec<Receipt> {
    sequence(dir, false)
        .iter()
        .map(|s| {
            let d = store
                .deliver(&s.file, &orders(), &s.manifest, now(), Some("crash"))
                .expect("delivers");
            assert!(
                d.accepted(),
                "{:?}",
                d.receipt.failures().collect::<Vec<_>>()
            );
            d.receipt
        })
        .collect()
}

/// The child: delivers the whole sequence (what is committed replays). Does nothing unless
/// started by the parent.
#[test]
fn crash_child() {
    let Ok(dir) = std::env::var(CHILD) else {
        return;
    };
    let dir = PathBuf::from(dir);
    let mut store = Store::open(dir.join("store.db")).expect("opens");
    run(&dir, &mut store);
}

#[derive(Debug, PartialEq)]
struct State {
    rows: Vec<Vec<rusqlite::types::Value>>,
    ledger: Option<String>,
    receipts: Vec<String>,
}

fn state(store: &mut Store) -> State {
    let snapshot = store.read_consistent_rows("orders").expect("reads");
    let mut rows = snapshot.rows;
    rows.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
    State {
        rows,
        ledger: snapshot.ledger.map(|l| l.to_json()),
        receipts: store
            .receipts("orders")
            .expect("receipts")
            .iter()
            .map(|r| r.receipt.identity())
            .collect(),
    }
}

fn remove_store(dir: &Path) {
    for f in [
        "store.db",
        "store.db-wal",
        "store.db-shm",
        "store.db-journal",
    ] {
        let _ = std::fs::remove_file(dir.join(f));
    }
}

fn spawn(dir: &Path) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["crash_child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawns the child")
}

#[test]
fn sigkill_at_random_points_leaves_old_or_new_state() {
    if std::env::var(CHILD).is_ok() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("dogana-sqlite-crash-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let steps = sequence(&dir, true).len();

    // the states after each prefix of the sequence, from an uninterrupted run, and a copy of
    // the store in each (closed, so the copy is its one file)
    let reference = dir.join("reference");
    std::fs::create_dir_all(&reference).unwrap();
    let snapshot = |k: usize| dir.join(format!("snapshot-{k}.db"));
    let mut expected = Vec::new();
    for (k, s) in std::iter::once(None)
        .chain(sequence(&dir, false).into_iter().map(Some))
        .enumerate()
    {
        let mut store = Store::open(reference.join("store.db")).unwrap();
        if let Some(s) = s {
            let d = store
                .deliver(&s.file, &orders(), &s.manifest, now(), Some("crash"))
                .unwrap();
            assert!(
                d.accepted(),
                "{:?}",
                d.receipt.failures().collect::<Vec<_>>()
            );
        }
        expected.push(state(&mut store));
        drop(store);
        std::fs::copy(reference.join("store.db"), snapshot(k)).unwrap();
    }
    let start_from = |k: usize| {
        remove_store(&dir);
        std::fs::copy(snapshot(k), dir.join("store.db")).unwrap();
    };
    // how long a child takes from each prefix to the end
    let durations: Vec<Duration> = (0..steps)
        .map(|k| {
            start_from(k);
            let started = Instant::now();
            assert!(
                spawn(&dir).wait().unwrap().success(),
                "the child runs to the end"
            );
            let took = started.elapsed();
            let mut store = Store::open(dir.join("store.db")).unwrap();
            assert_eq!(state(&mut store), expected[steps]);
            took
        })
        .collect();

    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    eprintln!("crash test: seed {seed}; a child from each prefix to the end takes {durations:?}");
    let mut rng = seed;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let budget = Instant::now();
    let mut reached = vec![0usize; expected.len()];
    for kill in 0..KILLS {
        // from every prefix in turn, killed at a uniform instant of the child's run
        let from = kill % steps;
        start_from(from);
        let delay = Duration::from_micros(next() % (durations[from].as_micros() as u64 + 1));
        let mut child = spawn(&dir);
        std::thread::sleep(delay);
        child.kill().expect("SIGKILL"); // std sends SIGKILL on Unix
        child.wait().unwrap();
        let mut store = Store::open(dir.join("store.db")).expect("the store opens after a kill");
        let now_state = state(&mut store);
        let at = expected
            .iter()
            .position(|e| *e == now_state)
            .unwrap_or_else(|| {
                panic!(
                    "kill {kill} (seed {seed}, from step {from}, after {delay:?}): the store holds a state of no prefix: {} receipts",
                    now_state.receipts.len()
                )
            });
        assert!(
            at >= from,
            "kill {kill}: the store went back from step {from} to {at}"
        );
        let report = store.verify("orders").expect("verify runs");
        assert!(
            report.ok(),
            "kill {kill} (seed {seed}): {:?}",
            report.problems
        );
        reached[at] += 1;
    }
    eprintln!(
        "crash test: {KILLS} kills in {:?}; states found after a kill, by step: {reached:?}",
        budget.elapsed()
    );
    // kills landed before, between and after the deliveries
    assert!(
        reached.iter().filter(|&&n| n > 0).count() >= 4,
        "{reached:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
