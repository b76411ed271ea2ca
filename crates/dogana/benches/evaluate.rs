//! `Gate::evaluate`, `Ledger::follow` and `Ledger::identity` against a bare SHA-256 of the
//! canonical bytes of the ledger the decision leaves, in the same run (results in
//! bench/apply.md). The issue requires each to cost at most 1.25x the bare hash at 1,000,
//! 10,000 and 100,000 regions.
//!
//! The workload is `apply.rs`'s: N disjoint one-day window deliveries to a date-windowed
//! table, so the ledger has N + 2 regions, then one more delivery is decided. In each group
//! `evaluate_vs_sha256/N`:
//!
//! - `sha256`: `Sha256::digest` of `next.to_json()`, the canonical document (WIRE-17) of the
//!   ledger the delivery leaves, the bytes built before the timed part;
//! - `evaluate`: `Gate::evaluate` of that delivery, which builds the next ledger and its
//!   identity (LEDGER-15);
//! - `follow`: `Ledger::follow` of that receipt read back from its JSON, as a receiver that
//!   rebuilds a ledger from its receipts follows them: it applies the manifest again and
//!   hashes the result. (A receipt fresh from the gate, followed on the ledger it was decided
//!   on, gives the ledger the gate left without either; that is `follow_fresh`.)
//! - `identity`: the identity of the next ledger, its cache emptied before each timed call.
//! - `identity_cold` (alternating rounds only): the identity of the next ledger just read from
//!   its canonical document, whose regions have no bytes yet: every region is written.
//!
//! The base ledger's identity is computed before the timed part, as the decision that left it
//! did in a receiver, and its regions keep their cached bytes and runs between iterations:
//! each decision writes the bytes of the regions it touches and the runs that hold them.
//!
//! Before criterion's groups, the same four are timed in alternating rounds, and the median of
//! each round's ratio to `sha256` is printed (`ratios/N`): on a machine shared with other
//! builds, wall times of separate groups drift by more than the margin being measured, while
//! neighbouring blocks of calls (each about 2 ms or one call) see about the same machine. The
//! least time of each is printed too: the least disturbed run.
//!
//! `receipt_documents/N` times what a receiver writes of each receipt it gives: its canonical
//! document and its identity, of a receipt fresh from the gate (a new one each iteration, so its
//! kept identity does not answer). `direct` is `Receipt::to_json` and `Receipt::identity`, written
//! without a JSON tree; `generic` the reference path, `dogana_json::canonical(&r.to_value())`
//! and SHA-256 of `dogana_json::jcs(&r.identity_dict())`. The receipt (its size printed) does
//! not grow with the ledger: its transition holds the regions over the delivered day.
//!
//! Run with `cargo bench -p dogana --bench evaluate`. `DOGANA_BENCH_SIZES=1000,10000` limits
//! the sizes (default 1000,10000,100000).

use std::hint::black_box;
use std::time::{Duration as StdDuration, Instant};

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use dogana::{
    Contract, Date, FromWire, Gate, Ledger, LogicalType, Manifest, Receipt, Shape, Timestamp,
    Window, Wire,
};
use sha2::{Digest, Sha256};

fn contract() -> Contract {
    Contract::builder("orders", ["id"])
        .shape("full", Shape::full())
        .shape("daily", Shape::window())
        .window_column("order_date")
        .column("id", LogicalType::Int)
        .column("order_date", LogicalType::Date)
        .build()
        .expect("a valid contract")
}

/// `n` disjoint one-day windows starting 2000-01-01, produced one second apart.
fn manifests(c: &Contract, n: usize) -> Vec<Manifest> {
    let first = Date::from_ymd(2000, 1, 1).expect("a date");
    let t0: Timestamp = "2026-01-01T00:00:00Z".parse().expect("a datetime");
    (0..n)
        .map(|i| {
            let day = first
                .checked_add_days(i as i64)
                .expect("in the date domain");
            let t = Timestamp::from_micros(t0.as_micros() + i as i64 * 1_000_000)
                .expect("in the datetime domain");
            c.manifest("daily", t)
                .window(Window::new(day, day))
                .rows(100)
                .build()
                .expect("a valid manifest")
        })
        .collect()
}

fn sizes() -> Vec<usize> {
    std::env::var("DOGANA_BENCH_SIZES")
        .ok()
        .map(|s| {
            s.split(',')
                .map(|n| {
                    n.trim()
                        .parse()
                        .expect("DOGANA_BENCH_SIZES: comma-separated sizes")
                })
                .collect()
        })
        .unwrap_or_else(|| vec![1_000, 10_000, 100_000])
}

/// Wall time of `reps` calls of `f`, per call, in nanoseconds.
fn per_call(reps: usize, mut f: impl FnMut()) -> f64 {
    let start = Instant::now();
    for _ in 0..reps {
        f();
    }
    start.elapsed().as_nanos() as f64 / reps as f64
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Alternating rounds of the four measurements; prints each one's median time and the median
/// of its per-round ratio to the bare hash.
fn ratios(n: usize, base: &Ledger, m: &Manifest, next: &Ledger, canonical: &[u8]) {
    let c = base.contract().clone();
    let now = m.produced_at();
    let receipt = Receipt::from_json(&Gate::evaluate(base, m, &[], now, None, &[]).to_json())
        .expect("a receipt reads back");
    // Blocks of about 2 ms at 1 GB/s.
    let reps = (2_000_000 / canonical.len()).max(1);
    let rounds = if n >= 100_000 { 41 } else { 201 };
    let mut times: [Vec<f64>; 5] = Default::default();
    let doc = next.to_json();
    for _ in 0..rounds {
        let fresh: Vec<Ledger> = (0..reps)
            .map(|_| next.with_contract(c.clone()).expect("the same contract"))
            .collect();
        let sha = per_call(reps, || {
            black_box(Sha256::digest(black_box(canonical)));
        });
        let evaluate = per_call(reps, || {
            black_box(Gate::evaluate(base, black_box(m), &[], now, None, &[]));
        });
        let follow = per_call(reps, || {
            black_box(base.follow(black_box(&receipt)).expect("follows"));
        });
        let mut fresh = fresh.into_iter();
        let identity = per_call(reps, || {
            black_box(fresh.next().expect("one per call").identity());
        });
        let read: Vec<Ledger> = (0..reps)
            .map(|_| Ledger::from_slice_fast(doc.as_bytes()).expect("a canonical document"))
            .collect();
        let mut read = read.into_iter();
        let cold = per_call(reps, || {
            black_box(read.next().expect("one per call").identity());
        });
        for (t, x) in times
            .iter_mut()
            .zip([sha, evaluate, follow, identity, cold])
        {
            t.push(x);
        }
    }
    let ratio = |i: usize| median(times[i].iter().zip(&times[0]).map(|(x, s)| x / s).collect());
    let least = |i: usize| times[i].iter().copied().fold(f64::INFINITY, f64::min);
    println!(
        "ratios/{n}: {} bytes, {rounds} rounds of {reps} calls; median per call: sha256 {:.1} us, evaluate {:.1} us, follow {:.1} us, identity {:.1} us, identity_cold {:.1} us; median of the rounds' ratios to sha256: evaluate {:.3}, follow {:.3}, identity {:.3}, identity_cold {:.3}; least per call: sha256 {:.1} us, evaluate {:.1} us ({:.3}), follow {:.1} us ({:.3}), identity {:.1} us ({:.3}), identity_cold {:.1} us ({:.3})",
        canonical.len(),
        median(times[0].clone()) / 1e3,
        median(times[1].clone()) / 1e3,
        median(times[2].clone()) / 1e3,
        median(times[3].clone()) / 1e3,
        median(times[4].clone()) / 1e3,
        ratio(1),
        ratio(2),
        ratio(3),
        ratio(4),
        least(0) / 1e3,
        least(1) / 1e3,
        least(1) / least(0),
        least(2) / 1e3,
        least(2) / least(0),
        least(3) / 1e3,
        least(3) / least(0),
        least(4) / 1e3,
        least(4) / least(0),
    );
}

fn bench(cr: &mut Criterion) {
    let c = contract();
    let sizes = sizes();
    let largest = sizes.iter().copied().max().unwrap_or(0);
    let ms = manifests(&c, largest + 1);
    for &n in &sizes {
        let mut base = Ledger::new(c.clone());
        for m in &ms[..n] {
            base = base.apply(m).expect("disjoint later windows are admitted");
        }
        assert_eq!(base.region_count(), n + 2);
        let m = &ms[n];
        let now = m.produced_at();
        let next = base.apply(m).expect("admitted");
        let canonical = next.to_json().into_bytes();
        // The base as a receiver holds it: the previous decision computed its identity (the
        // ledger that decision left), which wrote its regions' bytes and their runs.
        let _ = base.identity();
        let fresh = Gate::evaluate(&base, m, &[], now, None, &[]);
        assert!(fresh.accepted());
        assert_eq!(fresh.ledger_identity(), next.identity());
        let receipt = Receipt::from_json(&fresh.to_json()).expect("a receipt reads back");
        ratios(n, &base, m, &next, &canonical);

        let mut group = cr.benchmark_group(format!("evaluate_vs_sha256/{n}"));
        group.warm_up_time(StdDuration::from_secs(1));
        group.measurement_time(StdDuration::from_secs(if n >= 100_000 { 8 } else { 3 }));
        if n >= 100_000 {
            group.sample_size(30);
        }
        group.throughput(Throughput::Bytes(canonical.len() as u64));
        group.bench_function(BenchmarkId::from_parameter("sha256"), |b| {
            b.iter(|| Sha256::digest(black_box(&canonical)))
        });
        group.bench_function(BenchmarkId::from_parameter("evaluate"), |b| {
            b.iter(|| Gate::evaluate(&base, black_box(m), &[], now, None, &[]))
        });
        group.bench_function(BenchmarkId::from_parameter("follow"), |b| {
            b.iter(|| base.follow(black_box(&receipt)).expect("follows"))
        });
        group.bench_function(BenchmarkId::from_parameter("follow_fresh"), |b| {
            b.iter(|| base.follow(black_box(&fresh)).expect("follows"))
        });
        group.bench_function(BenchmarkId::from_parameter("identity"), |b| {
            b.iter_batched(
                // A new contract value empties the identity cache and nothing else.
                || next.with_contract(c.clone()).expect("the same contract"),
                |l| l.identity(),
                BatchSize::PerIteration,
            )
        });
        group.finish();

        let mut group = cr.benchmark_group(format!("receipt_documents/{n}"));
        group.warm_up_time(StdDuration::from_secs(1));
        group.measurement_time(StdDuration::from_secs(3));
        // Read from its document: a new value, its identity not yet kept.
        let doc = fresh.to_json();
        println!(
            "receipt_documents/{n}: {} bytes, {} regions in its transition",
            doc.len(),
            fresh.transition().map_or(0, |t| t.regions().len())
        );
        let new_receipt = || Receipt::from_json(&doc).expect("a receipt reads back");
        group.bench_function(BenchmarkId::from_parameter("direct"), |b| {
            b.iter_batched(
                new_receipt,
                |r| (r.to_json(), r.identity()),
                BatchSize::SmallInput,
            )
        });
        group.bench_function(BenchmarkId::from_parameter("generic"), |b| {
            b.iter_batched(
                new_receipt,
                |r| {
                    let doc = dogana_json::canonical(&r.to_value());
                    let id = Sha256::digest(dogana_json::jcs(&r.identity_dict()));
                    (doc, id)
                },
                BatchSize::SmallInput,
            )
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
