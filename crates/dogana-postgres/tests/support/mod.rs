//! What the fault and contention tests share: the crash harness's sequence, its states after
//! each prefix (a reference schema and a snapshot of it after each), and the server script.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use dogana::{Receipt, Wire};
use dogana_postgres::{Postgres, Store};
use dogana_receiver::conformance::{orders, ts, Harness};
use dogana_receiver::crash::{sequence, Step};
use dogana_receiver::Datum;

/// Rows, ledger and receipts of the orders table.
#[derive(Debug, PartialEq)]
pub struct State {
    pub rows: Vec<Vec<Option<String>>>,
    pub ledger: Option<String>,
    pub receipts: Vec<String>,
}

pub fn open(dir: &Path) -> Store {
    Store::new(Postgres::create(dir).expect("the store opens"))
}

pub fn state(store: &mut Store) -> State {
    let s = store.read_consistent_rows("orders").expect("reads");
    let mut rows: Vec<Vec<Option<String>>> = s
        .rows
        .iter()
        .map(|r| r.iter().map(Datum::render).collect())
        .collect();
    rows.sort();
    State {
        rows,
        ledger: s.ledger.map(|l| l.to_json()),
        receipts: store
            .receipts("orders")
            .expect("receipts")
            .iter()
            .map(|r| r.receipt.identity())
            .collect(),
    }
}

pub fn deliver(store: &mut Store, s: &Step) -> Result<Receipt, String> {
    store
        .deliver(
            &s.file,
            &orders(),
            &s.manifest,
            ts("2026-11-01T00:00:00Z"),
            Some("faults"),
        )
        .map(|d| d.receipt)
        .map_err(|e| e.to_string())
}

/// A folder for one test, with the sequence's files, the state after each prefix and a
/// snapshot of the store after each (`snapshot-K`).
pub struct Prefixes {
    pub dir: PathBuf,
    pub steps: Vec<Step>,
    pub expected: Vec<State>,
}

impl Prefixes {
    pub fn new(name: &str) -> Prefixes {
        let dir = std::env::temp_dir().join(format!("dogana-pg-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a folder");
        let steps = sequence(&dir, true);
        let reference = dir.join("reference");
        let mut expected = Vec::new();
        for k in 0..=steps.len() {
            let mut store = open(&reference);
            if k > 0 {
                deliver(&mut store, &steps[k - 1]).expect("an uninterrupted delivery");
            }
            expected.push(state(&mut store));
            drop(store);
            Postgres::copy_store(&reference, &dir.join(format!("snapshot-{k}")))
                .expect("a snapshot");
        }
        Prefixes {
            dir,
            steps,
            expected,
        }
    }

    /// The store folder, holding the state after `k` deliveries.
    pub fn start_from(&self, k: usize) -> PathBuf {
        let store = self.dir.join("store");
        Postgres::copy_store(&self.dir.join(format!("snapshot-{k}")), &store)
            .expect("a copy of a snapshot");
        store
    }

    /// Which prefix the store holds (panics when none).
    pub fn which(&self, store: &mut Store, what: &str) -> usize {
        let now = state(store);
        self.expected
            .iter()
            .position(|e| *e == now)
            .unwrap_or_else(|| {
                panic!(
                    "{what}: the store holds a state of no prefix ({} receipts)",
                    now.receipts.len()
                )
            })
    }
}

impl Drop for Prefixes {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// `bash scripts/postgres.sh ACTION` (crash, resume).
pub fn server(action: &str) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/postgres.sh");
    let status = Command::new("bash")
        .arg(script)
        .arg(action)
        .status()
        .expect("runs scripts/postgres.sh");
    assert!(status.success(), "scripts/postgres.sh {action} failed");
}

/// A small xorshift generator, seeded from the clock (the seed is printed).
pub fn rng(what: &str) -> impl FnMut() -> u64 {
    let mut x = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
        | 1;
    eprintln!("{what}: seed {x}");
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}
