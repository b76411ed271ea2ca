//! `GET /metrics`: the Prometheus text of what the service did.
//!
//! Labels carry only table names the contracts folder holds and the protocol's outcome and
//! check names, so a sender cannot grow the series by sending names.

use std::sync::atomic::AtomicI64;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct Outcome {
    pub table: String,
    /// accepted, rejected, replayed, or refused (nothing decided).
    pub outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct Table {
    pub table: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct Refusal {
    pub table: String,
    pub check: String,
}

/// Every series the service keeps.
pub(crate) struct Metrics {
    registry: Registry,
    pub deliveries: Family<Outcome, Counter>,
    pub bytes: Family<Table, Counter>,
    pub rows: Family<Table, Counter>,
    pub refusals: Family<Refusal, Counter>,
    pub upload_seconds: Family<Table, Histogram>,
    pub wait_seconds: Family<Table, Histogram>,
    pub decision_seconds: Family<Table, Histogram>,
    pub commit_seconds: Family<Table, Histogram>,
    pub in_flight: Gauge<i64, AtomicI64>,
}

fn seconds() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 16))
}

impl Metrics {
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("dogana");
        let deliveries = Family::<Outcome, Counter>::default();
        registry.register(
            "deliveries",
            "Deliveries answered, by table and outcome (refused: nothing was decided)",
            deliveries.clone(),
        );
        let bytes = Family::<Table, Counter>::default();
        registry.register(
            "delivered_bytes",
            "Bytes of delivered files staged",
            bytes.clone(),
        );
        let rows = Family::<Table, Counter>::default();
        registry.register(
            "delivered_rows",
            "Rows of accepted deliveries",
            rows.clone(),
        );
        let refusals = Family::<Refusal, Counter>::default();
        registry.register(
            "failed_checks",
            "Checks failed by rejected deliveries, by table and check",
            refusals.clone(),
        );
        let upload_seconds =
            Family::<Table, Histogram>::new_with_constructor(seconds as fn() -> Histogram);
        registry.register(
            "upload_seconds",
            "Time to receive and stage a delivery's file",
            upload_seconds.clone(),
        );
        let wait_seconds =
            Family::<Table, Histogram>::new_with_constructor(seconds as fn() -> Histogram);
        registry.register(
            "wait_seconds",
            "Time a staged delivery waited for a slot of its table (--max-concurrent)",
            wait_seconds.clone(),
        );
        let decision_seconds =
            Family::<Table, Histogram>::new_with_constructor(seconds as fn() -> Histogram);
        registry.register(
            "decision_seconds",
            "Time the engine took to decide a delivery: open the store, stage and check the rows, the gate",
            decision_seconds.clone(),
        );
        let commit_seconds =
            Family::<Table, Histogram>::new_with_constructor(seconds as fn() -> Histogram);
        registry.register(
            "commit_seconds",
            "Time the engine took to commit a decided delivery (the write lock's wait and any decision made again included)",
            commit_seconds.clone(),
        );
        let in_flight = Gauge::<i64, AtomicI64>::default();
        registry.register(
            "deliveries_in_flight",
            "Deliveries being staged or decided",
            in_flight.clone(),
        );
        Metrics {
            registry,
            deliveries,
            bytes,
            rows,
            refusals,
            upload_seconds,
            wait_seconds,
            decision_seconds,
            commit_seconds,
            in_flight,
        }
    }

    /// The OpenMetrics text.
    pub fn text(&self) -> String {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry)
            .expect("writing to a String");
        out
    }
}
