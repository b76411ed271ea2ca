//! How `Ledger::apply` scales with the number of regions (results in bench/apply.md).
//!
//! One ledger receives N disjoint daily window deliveries: a complete window shape over a date
//! window column, one day each, in increasing produced_at, so after k deliveries the ledger
//! has k + 2 regions (one per day, and an unknown region on each side). The issue requires the
//! time per apply at 100,000 regions to stay within 3x of the time at 1,000; the ledger keeps
//! its points in a persistent ordered map, so apply is O(log n + k).
//!
//! Groups (every manifest is built before the timed part):
//! - `apply_loop/N`, `transition_loop/N`: `ledger = ledger.apply(&m)?` (or `.transition(&m)?.0`)
//!   for N deliveries from a new ledger; criterion's throughput line gives applies per second,
//!   so time per apply = loop time / N.
//! - `apply_at/N`, `transition_at/N`: one more delivery applied to a ledger that already holds
//!   N deliveries (N + 2 regions): the marginal time per apply at that size.
//! - `gate_evaluate_at/N`: `Gate::evaluate` of one more delivery at that size. This is not
//!   apply: a receipt names the identity of the ledger it leaves, and a ledger's identity hashes
//!   every region by the protocol's definition (LEDGER-15), so it is O(n).
//!
//! Run with `cargo bench -p dogana --bench apply`. `DOGANA_BENCH_SIZES=1000,10000` limits the
//! sizes (default 1000,10000,100000).

use std::hint::black_box;
use std::time::Duration as StdDuration;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use dogana::{Contract, Date, Gate, Ledger, LogicalType, Manifest, Shape, Timestamp, Window};

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

fn fill(c: &Contract, ms: &[Manifest]) -> Ledger {
    let mut ledger = Ledger::new(c.clone());
    for m in ms {
        ledger = ledger
            .apply(m)
            .expect("disjoint later windows are admitted");
    }
    ledger
}

fn bench(cr: &mut Criterion) {
    let c = contract();
    let sizes = sizes();
    let largest = sizes.iter().copied().max().unwrap_or(0);
    // One more manifest than the largest size, for the marginal measurements.
    let ms = manifests(&c, largest + 1);

    let mut group = cr.benchmark_group("apply_loop");
    group.sample_size(10);
    group.warm_up_time(StdDuration::from_secs(1));
    for &n in &sizes {
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, &n| {
            b.iter_batched(
                || Ledger::new(c.clone()),
                |mut ledger| {
                    for m in &ms[..n] {
                        ledger = ledger.apply(m).expect("admitted");
                    }
                    ledger
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();

    let mut group = cr.benchmark_group("transition_loop");
    group.sample_size(10);
    group.warm_up_time(StdDuration::from_secs(1));
    for &n in &sizes {
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, &n| {
            b.iter_batched(
                || Ledger::new(c.clone()),
                |mut ledger| {
                    for m in &ms[..n] {
                        let (next, transition) = ledger.transition(m).expect("admitted");
                        black_box(transition);
                        ledger = next;
                    }
                    ledger
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();

    // Marginal cost at each size: the ledgers are built once, outside the timed part.
    let bases: Vec<(usize, Ledger)> = sizes.iter().map(|&n| (n, fill(&c, &ms[..n]))).collect();
    for (n, base) in &bases {
        assert_eq!(
            base.region_count(),
            n + 2,
            "one region per day, unknown on each side"
        );
    }

    let mut group = cr.benchmark_group("apply_at");
    group.warm_up_time(StdDuration::from_secs(1));
    group.measurement_time(StdDuration::from_secs(3));
    for (n, base) in &bases {
        let next = &ms[*n];
        group.bench_with_input(BenchmarkId::from_parameter(n), base, |b, base| {
            b.iter(|| base.apply(black_box(next)).expect("admitted"))
        });
    }
    group.finish();

    let mut group = cr.benchmark_group("transition_at");
    group.warm_up_time(StdDuration::from_secs(1));
    group.measurement_time(StdDuration::from_secs(3));
    for (n, base) in &bases {
        let next = &ms[*n];
        group.bench_with_input(BenchmarkId::from_parameter(n), base, |b, base| {
            b.iter(|| base.transition(black_box(next)).expect("admitted"))
        });
    }
    group.finish();

    // Not apply: Gate::evaluate also computes the identity of the ledger it leaves, O(n).
    let mut group = cr.benchmark_group("gate_evaluate_at");
    group.sample_size(10);
    group.warm_up_time(StdDuration::from_secs(1));
    for (n, base) in &bases {
        let next = &ms[*n];
        let now = next.produced_at();
        group.bench_with_input(BenchmarkId::from_parameter(n), base, |b, base| {
            b.iter(|| {
                let receipt = Gate::evaluate(base, black_box(next), &[], now, None, &[]);
                assert!(receipt.accepted());
                receipt
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
