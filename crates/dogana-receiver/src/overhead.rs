//! What a delivery costs outside its rows, against SHA-256 of the ledger it leaves (issue 16):
//! the workload of every backend's `overhead_bench` example (bench/sqlite.md and
//! bench/postgres.md, "Per delivery, outside the rows"), written once.
//!
//! [`run`]: a store whose `orders` ledger holds N disjoint one-day windows (N + 2 regions),
//! then ROUNDS deliveries of a one-row window for the next day, each timed from
//! `deliver_with` to its return (replay lookup, ledger load, staging the row, checks,
//! `Gate::evaluate`, the write transaction re-reading the head, follow, save of ledger and
//! receipt, COMMIT). Alternating with each delivery: SHA-256 of the canonical document of the
//! ledger it leaves, the reference.
//!
//! Then ROUNDS times the ledger's part alone of the next day's delivery, the list
//! ("replay lookup, ledger load, follow, save"): in one write transaction, the replay lookup,
//! the stored ledger, `Gate::evaluate`, `follow`, and the save of the ledger and the receipt,
//! through the backend as a delivery does them — then rolled back (no COMMIT, so no flush to
//! disk), leaving the store as it was. It alternates with SHA-256 of the document of the
//! ledger it would have left. Each of its steps is timed too ([`Lap`], [`Overhead::laps`]),
//! so a figure says where a backend's time goes: what the 1.25x leaves above the hash
//! (a quarter of it) can be set against the cheapest step a backend has.

use std::path::Path;
use std::time::Instant;

use dogana::{Contract, Date, FromWire, Ledger, LogicalType, Shape, Timestamp, Window, Wire};

use crate::{Backend, DeliverOptions, Store, Txn};

/// The medians of a [`run`].
#[derive(Debug, Clone, Copy)]
pub struct Overhead {
    /// Regions of the ledger the deliveries were decided on (N + 2).
    pub regions: usize,
    /// The ledger's canonical document, in bytes.
    pub document_bytes: usize,
    /// Median time of a delivery, in seconds.
    pub delivery: f64,
    /// Median time of the reference hash, in seconds.
    pub hash: f64,
    /// Median of the rounds' ratios of delivery to hash.
    pub ratio: f64,
    /// The least delivery time over the least hash time.
    pub least_ratio: f64,
    /// Median time of the ledger's part of a delivery, in seconds.
    pub ledger_part: f64,
    /// Median time of its reference hash, in seconds.
    pub ledger_hash: f64,
    /// Median of the rounds' ratios of the ledger's part to its hash.
    pub ledger_ratio: f64,
    /// The least time of the ledger's part over the least hash time.
    pub ledger_least_ratio: f64,
    /// Median time of each step of the ledger's part, in seconds, in [`Lap::ALL`]'s order.
    pub laps: [f64; Lap::ALL.len()],
}

/// A step of the ledger's part of a delivery ([`run`]), in the order it runs (its discriminant
/// is its place in [`Lap::ALL`]): each is timed from the end of the one before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lap {
    /// The write transaction begun (a lock, a lease, round trips).
    Begin,
    /// The replay lookup by manifest identity (RECV-01).
    Replay,
    /// The stored ledger, as the write transaction reads it (its identity, at least).
    Stored,
    /// The ledger the decision is made on, as the read transaction loads it.
    Load,
    /// `Gate::evaluate`, which names the ledger it leaves by its identity.
    Evaluate,
    /// `Ledger::follow`.
    Follow,
    /// The ledger's save (its changed rows, pages or document).
    SaveLedger,
    /// The receipt's save.
    SaveReceipt,
    /// The transaction rolled back.
    End,
}

impl Lap {
    /// Every step, in order.
    pub const ALL: [Lap; 9] = [
        Lap::Begin,
        Lap::Replay,
        Lap::Stored,
        Lap::Load,
        Lap::Evaluate,
        Lap::Follow,
        Lap::SaveLedger,
        Lap::SaveReceipt,
        Lap::End,
    ];

    /// A short name, as [`Overhead`]'s display prints it.
    pub fn name(self) -> &'static str {
        match self {
            Lap::Begin => "begin",
            Lap::Replay => "replay lookup",
            Lap::Stored => "stored ledger",
            Lap::Load => "load",
            Lap::Evaluate => "evaluate",
            Lap::Follow => "follow",
            Lap::SaveLedger => "save ledger",
            Lap::SaveReceipt => "save receipt",
            Lap::End => "rollback",
        }
    }
}

impl std::fmt::Display for Overhead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "regions {}: delivery {:.3} ms, SHA-256 of the ledger document {:.3} ms ({} bytes), ratio median {:.2}, least-time ratio {:.2}; the ledger's part {:.3} ms, SHA-256 {:.3} ms, ratio median {:.2}, least-time ratio {:.2}",
            self.regions,
            self.delivery * 1e3,
            self.hash * 1e3,
            self.document_bytes,
            self.ratio,
            self.least_ratio,
            self.ledger_part * 1e3,
            self.ledger_hash * 1e3,
            self.ledger_ratio,
            self.ledger_least_ratio
        )?;
        write!(f, "\n  the ledger's part by step, median µs:")?;
        for (lap, took) in Lap::ALL.iter().zip(self.laps) {
            write!(f, " {} {:.0};", lap.name(), took * 1e6)?;
        }
        write!(
            f,
            " a quarter of its hash (what 1.25x leaves above it) {:.0}",
            self.ledger_hash * 0.25e6
        )
    }
}

fn contract() -> Contract {
    Contract::builder("orders", ["id"])
        .shape("daily", Shape::window())
        .window_column("order_date")
        .column("id", LogicalType::Int)
        .column("order_date", LogicalType::Date)
        .build()
        .expect("a valid contract")
}

fn day(i: usize) -> Date {
    Date::from_ymd(2000, 1, 1)
        .expect("a date")
        .checked_add_days(i as i64)
        .expect("in the date domain")
}

fn at(i: usize) -> Timestamp {
    let t0: Timestamp = "2026-01-01T00:00:00Z".parse().expect("a datetime");
    Timestamp::from_micros(t0.as_micros() + i as i64 * 1_000_000).expect("in the domain")
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Runs the workload on `store` (new, empty), writing its one-row files in `dir`. Panics on
/// any failure: it is a benchmark's body.
pub fn run<B: Backend>(store: &mut Store<B>, n: usize, rounds: usize, dir: &Path) -> Overhead {
    let c = contract();
    let file = dir.join("one.csv");
    // the one-row window of day i, produced at second i
    let window = |i: usize| {
        c.manifest("daily", at(i))
            .window(Window::new(day(i), day(i)))
            .rows(1)
            .build()
            .expect("a manifest")
    };
    let deliver = |store: &mut Store<B>, i: usize| {
        std::fs::write(&file, format!("id,order_date\n{i},{}\n", day(i))).expect("writes");
        let m = window(i);
        let d = store
            .deliver_with(&file, &c, &m, at(i + 1), None, &DeliverOptions::new())
            .expect("delivers");
        assert!(d.receipt.accepted(), "{:?}", d.receipt);
    };
    // the table and its first receipt, then the ledger of n windows saved in its place
    deliver(store, 0);
    let mut ledger = Ledger::new(c.clone());
    for i in 0..n {
        ledger = ledger.apply(&window(i)).expect("disjoint later windows");
    }
    let b = store.backend_mut();
    b.begin(Txn::Write, &["orders"]).expect("begins");
    b.save_ledger("orders", &ledger.to_json()).expect("saves");
    b.commit().expect("commits");
    let (mut ratios, mut hashes, mut delivers) = (Vec::new(), Vec::new(), Vec::new());
    for r in 0..=rounds {
        let t = Instant::now();
        deliver(store, n + r);
        let delivered = t.elapsed().as_secs_f64();
        // the reference: the document of the ledger this delivery left, hashed
        let doc = {
            let b = store.backend_mut();
            b.begin(Txn::Read, &["orders"]).expect("begins");
            let d = b.ledger("orders").expect("reads").expect("a ledger");
            b.commit().expect("ends");
            d
        };
        assert_eq!(Ledger::from_json(&doc).expect("parses").to_json(), doc);
        let t = Instant::now();
        let digest = dogana_rows::sha256_bytes(doc.as_bytes());
        let hashed = t.elapsed().as_secs_f64();
        std::hint::black_box(digest);
        if r == 0 {
            continue; // the first delivery reads the document saved behind the engine's back
        }
        ratios.push(delivered / hashed);
        hashes.push(hashed);
        delivers.push(delivered);
    }
    // the ledger's part of the next day's delivery, rolled back each time
    let next = window(n + rounds + 1);
    let (mut part_ratios, mut part_hashes, mut parts) = (Vec::new(), Vec::new(), Vec::new());
    let mut laps: Vec<Vec<f64>> = vec![Vec::new(); Lap::ALL.len()];
    for r in 0..=rounds {
        let mut round = [0.0; Lap::ALL.len()];
        let t = Instant::now();
        let mut last = t;
        let left = store
            .ledger_part(&c, &next, at(n + rounds + 2), &mut |lap| {
                let now = Instant::now();
                round[lap as usize] = (now - last).as_secs_f64();
                last = now;
            })
            .expect("the ledger's part");
        let took = t.elapsed().as_secs_f64();
        let doc = left.to_json();
        let t = Instant::now();
        let digest = dogana_rows::sha256_bytes(doc.as_bytes());
        let hashed = t.elapsed().as_secs_f64();
        std::hint::black_box(digest);
        if r == 0 {
            continue; // the first reads what the last delivery's rollback-free path kept
        }
        part_ratios.push(took / hashed);
        part_hashes.push(hashed);
        parts.push(took);
        for (all, took) in laps.iter_mut().zip(round) {
            all.push(took);
        }
    }
    let least = |xs: &[f64]| xs.iter().copied().fold(f64::MAX, f64::min);
    Overhead {
        regions: n + 2,
        document_bytes: ledger.to_json().len(),
        delivery: median(delivers.clone()),
        hash: median(hashes.clone()),
        ratio: median(ratios),
        least_ratio: least(&delivers) / least(&hashes),
        ledger_part: median(parts.clone()),
        ledger_hash: median(part_hashes.clone()),
        ledger_ratio: median(part_ratios),
        ledger_least_ratio: least(&parts) / least(&part_hashes),
        laps: std::array::from_fn(|i| median(laps[i].clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::Lap;

    #[test]
    fn each_lap_is_its_place_in_all() {
        for (i, lap) in Lap::ALL.iter().enumerate() {
            assert_eq!(*lap as usize, i, "{}", lap.name());
        }
    }
}
