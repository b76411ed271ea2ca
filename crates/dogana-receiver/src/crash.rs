//! The crash harness: a child process delivers a sequence of files (full, window, changes with
//! tombstones, full, window changes) into one store and is SIGKILLed at random instants; after
//! every kill the store holds exactly the state after some prefix of the sequence (rows,
//! ledger and receipts together: never a mixture) and verify passes.
//!
//! A backend's test file instantiates it with two tests, the parent and the child (the child
//! does nothing unless the parent started it):
//!
//! ```ignore
//! #[test]
//! fn crash_child() { dogana_receiver::crash::child::<Sqlite>("DOGANA_SQLITE_CRASH"); }
//! #[test]
//! fn sigkill_at_random_points() {
//!     dogana_receiver::crash::parent::<Sqlite>("DOGANA_SQLITE_CRASH", "crash_child", 240);
//! }
//! ```
//!
//! The store lives in its own folder (`Harness::create(dir)`), which the harness copies whole
//! to take a snapshot of a closed store (`Harness::copy_store`: a server's store copies what it
//! keeps on the server).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use dogana::{Contract, Manifest, Receipt, Timestamp, Window, Wire};

use crate::conformance::{date, orders, orders_csv, sha, ts, Harness, Order};
use crate::Store;

const ROWS: i64 = 600;

/// One delivery of the sequence.
#[derive(Debug, Clone)]
pub struct Step {
    /// The file.
    pub file: PathBuf,
    /// Its manifest.
    pub manifest: Manifest,
}

fn day(i: i64) -> String {
    format!("2026-10-{:02}", 1 + i % 9)
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

/// The sequence over the orders contract, one delivery of every kind; its files are written
/// into `dir` when `write`.
pub fn sequence(dir: &Path, write: bool) -> Vec<Step> {
    let c = orders();
    let mut steps = Vec::new();
    let mut add = |name: &str, text: String, build: &dyn Fn(&Contract, String) -> Manifest| {
        let file = dir.join(name);
        if write {
            std::fs::write(&file, &text).expect("writes a delivery");
        }
        steps.push(Step {
            file,
            manifest: build(&c, sha(&text)),
        });
    };
    let amounts = |k: i64| (1..=ROWS).map(move |i| (i, format!("{}.{k:02}", i * 10)));
    // 1. full
    let rows: Vec<(i64, String, String)> = amounts(1).map(|(i, a)| (i, day(i), a)).collect();
    add(
        "1-full.csv",
        csv(&rows, "2026-10-01T10:00:00Z", &[]),
        &|c, h| {
            c.manifest("full", ts("2026-10-10T06:00:00Z"))
                .rows(ROWS as u64)
                .content_hash(h)
                .build()
                .expect("manifest")
        },
    );
    // 2. window [10-03, 10-04]: every row of those days, new amounts, a third of them dropped
    let rows: Vec<(i64, String, String)> = amounts(2)
        .map(|(i, a)| (i, day(i), a))
        .filter(|(i, d, _)| (d == "2026-10-03" || d == "2026-10-04") && i % 3 != 0)
        .collect();
    let n = rows.len() as u64;
    add(
        "2-window.csv",
        csv(&rows, "2026-10-10T10:00:00Z", &[]),
        &|c, h| {
            c.manifest("window", ts("2026-10-11T06:00:00Z"))
                .window(Window::new(date("2026-10-03"), date("2026-10-04")))
                .rows(n)
                .content_hash(h)
                .build()
                .expect("manifest")
        },
    );
    // 3. changes with tombstones: even ids updated, ids divisible by 7 deleted
    let rows: Vec<(i64, String, String)> = amounts(3)
        .map(|(i, a)| (i, day(i), a))
        .filter(|(i, _, _)| i % 2 == 0 && i % 7 != 0)
        .collect();
    let tombs: Vec<i64> = (1..=ROWS).filter(|i| i % 7 == 0).collect();
    let (n, t) = (rows.len() as u64, tombs.len() as u64);
    add(
        "3-changes.csv",
        csv(&rows, "2026-10-11T10:00:00Z", &tombs),
        &|c, h| {
            c.manifest("changes", ts("2026-10-12T06:00:00Z"))
                .since(ts("2026-10-10T06:00:00Z"))
                .rows(n)
                .tombstones(t)
                .content_hash(h)
                .build()
                .expect("manifest")
        },
    );
    // 4. full again, fewer rows
    let rows: Vec<(i64, String, String)> = amounts(4)
        .map(|(i, a)| (i, day(i), a))
        .filter(|(i, _, _)| i % 5 != 0)
        .collect();
    let n = rows.len() as u64;
    add(
        "4-full.csv",
        csv(&rows, "2026-10-12T10:00:00Z", &[]),
        &|c, h| {
            c.manifest("full", ts("2026-10-13T06:00:00Z"))
                .rows(n)
                .content_hash(h)
                .build()
                .expect("manifest")
        },
    );
    // 5. window changes with tombstones over [10-05, 10-05]
    let rows: Vec<(i64, String, String)> = amounts(5)
        .map(|(i, a)| (i, day(i), a))
        .filter(|(i, d, _)| d == "2026-10-05" && i % 5 != 0 && i % 2 == 1)
        .collect();
    let tombs: Vec<i64> = (1..=ROWS)
        .filter(|i| day(*i) == "2026-10-05" && i % 5 != 0 && i % 2 == 0)
        .collect();
    let (n, t) = (rows.len() as u64, tombs.len() as u64);
    add(
        "5-window-changes.csv",
        csv(&rows, "2026-10-13T10:00:00Z", &tombs),
        &|c, h| {
            c.manifest("window_changes", ts("2026-10-14T06:00:00Z"))
                .window(Window::new(date("2026-10-05"), date("2026-10-05")))
                .since(ts("2026-10-13T06:00:00Z"))
                .rows(n)
                .tombstones(t)
                .content_hash(h)
                .build()
                .expect("manifest")
        },
    );
    steps
}

fn now() -> Timestamp {
    ts("2026-11-01T00:00:00Z")
}

fn deliver<B: Harness>(store: &mut Store<B>, s: &Step) -> Receipt {
    let d = store
        .deliver(&s.file, &orders(), &s.manifest, now(), Some("crash"))
        .expect("delivers");
    assert!(
        d.accepted(),
        "{:?}",
        d.receipt.failures().collect::<Vec<_>>()
    );
    d.receipt
}

/// What a kill loop runs: a sequence of steps, each one commit, and the state to compare.
struct Scenario<B: Harness> {
    /// How many steps there are; writes their files into the folder when asked.
    write: fn(&Path, bool) -> usize,
    /// Runs step `k`, whose files are in the folder.
    step: fn(&mut Store<B>, &Path, usize),
    /// Everything the store holds that a step changes.
    state: fn(&mut Store<B>) -> State,
    /// The tables to verify.
    tables: &'static [&'static str],
}

fn single<B: Harness>() -> Scenario<B> {
    Scenario {
        write: |dir, write| sequence(dir, write).len(),
        step: |store, dir, k| {
            let s = &sequence(dir, false)[k];
            deliver(store, s);
        },
        state: |store| state(store, &["orders"]),
        tables: &["orders"],
    }
}

/// The child: delivers the whole sequence (what is committed replays). Does nothing unless
/// the parent started it with `env` set to the folder.
pub fn child<B: Harness>(env: &str) {
    run_child(env, single::<B>());
}

fn run_child<B: Harness>(env: &str, scenario: Scenario<B>) {
    let Ok(dir) = std::env::var(env) else {
        return;
    };
    let dir = PathBuf::from(dir);
    let mut store = Store::new(B::create(&dir.join("store")).expect("opens"));
    let steps = (scenario.write)(&dir, false);
    for k in 0..steps {
        (scenario.step)(&mut store, &dir, k);
    }
}

/// Per table: its rows, its ledger and its receipts' identities.
type State = Vec<(Vec<Vec<Option<String>>>, Option<String>, Vec<String>)>;

fn state<B: Harness>(store: &mut Store<B>, tables: &[&str]) -> State {
    tables
        .iter()
        .map(|t| {
            let snapshot = store.read_consistent_rows(t).expect("reads");
            let mut rows: Vec<Vec<Option<String>>> = snapshot
                .rows
                .iter()
                .map(|r| r.iter().map(crate::Datum::render).collect())
                .collect();
            rows.sort();
            let receipts = store
                .receipts(t)
                .expect("receipts")
                .iter()
                .map(|r| r.receipt.identity())
                .collect();
            (rows, snapshot.ledger.map(|l| l.to_json()), receipts)
        })
        .collect()
}

fn spawn(env: &str, child_test: &str, dir: &Path) -> std::process::Child {
    Command::new(std::env::current_exe().expect("the test binary"))
        .args([child_test, "--exact", "--nocapture", "--test-threads=1"])
        .env(env, dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawns the child")
}

/// The parent: `kills` SIGKILLs of the child (the test named `child_test`, which calls
/// [`child`] with the same `env`) at uniform instants of its run, from every prefix of the
/// sequence in turn — and before them, from each prefix, one kill at once and one after the
/// whole run, so every state is reached.
///
/// rule: RECV-09 — rows, ledger and receipt change in one atomic step
/// rule: TRUST-07 — the receiver saves rows and ledger in one commit: no state mixes them
pub fn parent<B: Harness>(env: &str, child_test: &str, kills: usize) {
    kill_loop(env, child_test, kills, single::<B>(), false);
}

/// [`parent`], and after each kill and its checks the rest of the sequence delivered by this
/// process on the store as the kill left it, which must reach the last state. A write after
/// recovery is what meets an index the database's recovery left out of step with its rows
/// (a key its index misses, or one it holds twice): the engine's writes check the rows they
/// change, and such a store fails them.
pub fn parent_then_on<B: Harness>(env: &str, child_test: &str, kills: usize) {
    kill_loop(env, child_test, kills, single::<B>(), true);
}

fn kill_loop<B: Harness>(
    env: &str,
    child_test: &str,
    kills: usize,
    scenario: Scenario<B>,
    then_on: bool,
) {
    if std::env::var(env).is_ok() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("dogana-crash-{env}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let store_dir = dir.join("store");
    let steps = (scenario.write)(&dir, true);
    let open = |d: &Path| Store::new(B::create(d).expect("the store opens"));

    // the states after each prefix of the sequence, from an uninterrupted run, and a copy of
    // the (closed) store after each
    let reference = dir.join("reference");
    let snapshot = |k: usize| dir.join(format!("snapshot-{k}"));
    let mut expected = Vec::new();
    for k in 0..=steps {
        let mut store = open(&reference);
        if k > 0 {
            (scenario.step)(&mut store, &dir, k - 1);
        }
        expected.push((scenario.state)(&mut store));
        drop(store);
        B::copy_store(&reference, &snapshot(k)).expect("a snapshot of the store");
    }
    let start_from =
        |k: usize| B::copy_store(&snapshot(k), &store_dir).expect("a copy of a snapshot");
    // how long a child takes from each prefix to the end
    let durations: Vec<Duration> = (0..steps)
        .map(|k| {
            start_from(k);
            let started = Instant::now();
            assert!(
                spawn(env, child_test, &dir)
                    .wait()
                    .expect("waits")
                    .success(),
                "the child runs to the end"
            );
            let took = started.elapsed();
            assert_eq!((scenario.state)(&mut open(&store_dir)), expected[steps]);
            took
        })
        .collect();

    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
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
    let mut torn = Vec::new();
    // `kills` at random, after the fixed ones
    for kill in 0..kills + 2 * steps {
        let from = kill % steps;
        start_from(from);
        // the first kill from each prefix lands at once (the prefix's own state) and the next
        // after the child's whole run (the last state), so every state is reached however few
        // the kills (on a server 30, where the random ones can miss the narrow ends); the
        // rest at random inside the run
        let delay = if kill < steps {
            Duration::ZERO
        } else if kill < 2 * steps {
            durations[from] * 3 / 2
        } else {
            Duration::from_micros(next() % (durations[from].as_micros() as u64 + 1))
        };
        let mut child = spawn(env, child_test, &dir);
        std::thread::sleep(delay);
        child.kill().expect("SIGKILL"); // std sends SIGKILL on Unix
        child.wait().expect("waits");
        let mut store = match B::create(&store_dir) {
            Ok(b) => Store::new(b),
            Err(e) if B::torn_by_its_database(&e) => {
                eprintln!("crash test: kill {kill} (seed {seed}, from step {from}, after {delay:?}) tore the database's own write: {e}");
                torn.push(kill);
                continue;
            }
            Err(e) => panic!(
                "kill {kill} (seed {seed}, from step {from}, after {delay:?}): the store does not open: {e}"
            ),
        };
        let now_state = (scenario.state)(&mut store);
        let at = expected
            .iter()
            .position(|e| *e == now_state)
            .unwrap_or_else(|| {
                panic!(
                    "kill {kill} (seed {seed}, from step {from}, after {delay:?}): the store holds a state of no prefix: {} receipts",
                    now_state.iter().map(|t| t.2.len()).sum::<usize>()
                )
            });
        assert!(
            at >= from,
            "kill {kill}: the store went back from step {from} to {at}"
        );
        // rule: RECV-12, RECOVERY-01 — verify after every kill
        for t in scenario.tables {
            let report = store.verify(t).expect("verify runs");
            assert!(
                report.ok(),
                "kill {kill} (seed {seed}): {t}: {:?}",
                report.problems
            );
        }
        reached[at] += 1;
        if then_on {
            for k in at..steps {
                (scenario.step)(&mut store, &dir, k);
            }
            assert_eq!(
                (scenario.state)(&mut store),
                expected[steps],
                "kill {kill} (seed {seed}, from step {from}, after {delay:?}): the rest of the sequence from step {at} did not reach the last state"
            );
        }
    }
    eprintln!(
        "crash test: {kills} kills at random and {} at fixed points in {:?}; states found after a kill, by step: {reached:?}; stores the database itself refused: {torn:?}",
        2 * steps,
        budget.elapsed()
    );
    // a torn write of the database's own is rare (a kill inside one write of a checkpoint):
    // many of them is a defect of the backend's, not the database's
    assert!(
        torn.len() * 50 <= kills + 2 * steps,
        "kills {torn:?} of {} left a store its database refuses (seed {seed})",
        kills + 2 * steps
    );
    // kills landed before, between and after the deliveries
    assert!(
        reached.iter().filter(|&&n| n > 0).count() >= 4,
        "{reached:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The group scenario: invoices and lines delivered together, three times, each a full read
/// of both at one instant; every commit writes both tables.
fn grouped<B: Harness>() -> Scenario<B> {
    Scenario {
        write: |dir, write| group_steps(dir, write).len(),
        step: |store, dir, k| {
            let (group, parts) = &group_steps(dir, false)[k];
            let d = store
                .deliver_group(group, parts, now(), Some("crash"))
                .expect("delivers");
            assert!(d.accepted(), "{:?}", d.receipts);
        },
        state: |store| state(store, &["invoices", "lines"]),
        tables: &["invoices", "lines"],
    }
}

fn group_steps(dir: &Path, write: bool) -> Vec<(dogana::Group, Vec<crate::Part>)> {
    use dogana::{LogicalType, Shape};
    let contract = |t: &str| {
        Contract::builder(t, ["id"])
            .shape("full", Shape::full())
            .column("id", LogicalType::Int)
            .build()
            .expect("a contract")
    };
    let (i, l) = (contract("invoices"), contract("lines"));
    let group = dogana::Group::new([i.clone(), l.clone()]).expect("a group");
    (0..3)
        .map(|k| {
            let at = ts(&format!("2026-10-1{k}T06:00:00Z"));
            let parts = [(&i, 300 + k * 50), (&l, 900 - k * 100)]
                .iter()
                .map(|(c, n)| {
                    let mut text = String::from("id,amount\n");
                    for id in 0..*n {
                        text.push_str(&format!("{id},{k}.{id}\n"));
                    }
                    let file = dir.join(format!("{}-{k}.csv", c.table()));
                    if write {
                        std::fs::write(&file, &text).expect("writes a delivery");
                    }
                    crate::Part {
                        file,
                        manifest: c
                            .manifest("full", at)
                            .rows(*n as u64)
                            .content_hash(sha(&text))
                            .build()
                            .expect("manifest"),
                        options: crate::DeliverOptions::new(),
                    }
                })
                .collect();
            (group.clone(), parts)
        })
        .collect()
}

/// The group child: delivers the group sequence. Does nothing unless started by
/// [`group_parent`].
pub fn group_child<B: Harness>(env: &str) {
    run_child(env, grouped::<B>());
}

/// The group kill loop: a group commit killed at random points leaves every table old or
/// every table new (GROUP-16).
///
/// rule: GROUP-16 — every table's rows, ledger and receipt in one commit, or nothing
pub fn group_parent<B: Harness>(env: &str, child_test: &str, kills: usize) {
    kill_loop(env, child_test, kills, grouped::<B>(), false);
}
