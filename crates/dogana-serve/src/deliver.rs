//! One delivery, as the service and the landing folder make it: the store opened for writing,
//! the engine's `deliver_with` (the same order, gate and receipts as `dogana deliver`), and the
//! answer a sender reads.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dogana::{Manifest, Outcome, Receipt, Timestamp, Wire};
use dogana_receiver::{Delivery, GroupDelivery, Part};
use dogana_stores::Spec;

use crate::contracts::TableContract;
use crate::error::ApiError;

/// The receiver's clock, in the protocol's domain.
pub fn now() -> Timestamp {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .ok()
        .and_then(|d| i64::try_from(d.as_micros()).ok())
        .and_then(Timestamp::from_micros)
        .expect("the system clock is inside the protocol's domain")
}

/// Write handles of the store, kept open between deliveries: a Postgres connection, a lake's
/// object-store client and runtime, a SQLite connection are opened once, not per delivery.
/// A handle goes back to the pool only after a decision the engine completed; one that met an
/// error is dropped (a broken connection is never reused). DuckDB keeps none: its write handle
/// holds the file's lock, which other processes (a `dogana verify`) must get between
/// deliveries.
pub struct Writers {
    store: Spec,
    lock_timeout: Duration,
    keep: usize,
    idle: std::sync::Mutex<Vec<dogana_stores::Opened>>,
}

impl Writers {
    /// A pool over `store` keeping at most `keep` idle handles.
    pub fn new(store: Spec, lock_timeout: Duration, keep: usize) -> Writers {
        let keep = if store.backend() == dogana_stores::Backend::DuckDb {
            0
        } else {
            keep
        };
        Writers {
            store,
            lock_timeout,
            keep,
            idle: std::sync::Mutex::new(Vec::new()),
        }
    }

    fn take(&self) -> Result<dogana_stores::Opened, ApiError> {
        let kept = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        match kept {
            Some(handle) => Ok(handle),
            None => {
                let options = dogana_stores::OpenOptions::new().lock_timeout(self.lock_timeout);
                dogana_stores::open_with(&self.store, true, &options)
                    .map_err(|e| ApiError::store("opening the store", &e))
            }
        }
    }

    /// Runs `work` on a handle, and keeps the handle when `work` succeeded.
    fn with<T>(
        &self,
        work: impl FnOnce(&mut dogana_stores::Opened) -> Result<T, dogana_receiver::StoreError>,
        what: &str,
    ) -> Result<T, ApiError> {
        let mut handle = self.take()?;
        let done = work(&mut handle).map_err(|e| ApiError::store(what, &e))?;
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        if idle.len() < self.keep {
            idle.push(handle);
        }
        Ok(done)
    }

    /// Delivers `file` under `table`'s contract, the receipt's `source` being the sender.
    /// Blocking: the store's write lock is waited for up to the pool's lock timeout; a
    /// decision made on a head that moved is made again inside (RECV-10), never shown to the
    /// sender.
    pub fn deliver(
        &self,
        table: &TableContract,
        manifest: &Manifest,
        file: &Path,
        sender: &str,
    ) -> Result<Delivery, ApiError> {
        self.with(
            |store| {
                store.deliver_with(
                    file,
                    &table.contract,
                    manifest,
                    now(),
                    Some(sender),
                    &table.options,
                )
            },
            "delivering",
        )
    }

    /// Delivers one file per table as one group ("Tables together"): the group is the tables
    /// the request names, each under its contract; every table's receipt is committed in one
    /// step, or none. A group whose tables overlap another the store holds is refused by the
    /// store.
    pub fn deliver_group(
        &self,
        parts: &[(std::sync::Arc<TableContract>, Part)],
        sender: &str,
    ) -> Result<GroupDelivery, ApiError> {
        let group =
            dogana::Group::new(parts.iter().map(|(c, _)| c.contract.clone())).map_err(|e| {
                let p = e.problem();
                ApiError::new(
                    axum::http::StatusCode::BAD_REQUEST,
                    dogana_codes::GROUP_INVALID,
                    p.rule,
                    format!("the group is refused: {}", p.reason),
                )
                .at(p.field.clone(), &p.value)
            })?;
        let parts: Vec<Part> = parts.iter().map(|(_, p)| p.clone()).collect();
        self.with(
            |store| store.deliver_group(&group, &parts, now(), Some(sender)),
            "delivering the group",
        )
    }
}

/// Opens the store for reading only; None when it is a file, or a lake folder (`file://`),
/// that does not exist yet (the first delivery creates it: nothing is claimed before).
pub fn open_reader(store: &Spec) -> Result<Option<dogana_stores::Opened>, ApiError> {
    let local = match store {
        Spec::Lake(url) => url.strip_prefix("file://").map(Path::new),
        other => other.path(),
    };
    if local.is_some_and(|p| !p.exists()) {
        return Ok(None);
    }
    dogana_stores::open(store, false)
        .map(Some)
        .map_err(|e| ApiError::store("opening the store", &e))
}

/// The answer to a decided delivery: `{"outcome", "redecided", "receipt", "failed_checks"}`,
/// the receipt as its wire document.
pub fn answer(delivery: &Delivery) -> serde_json::Value {
    receipt_answer(&delivery.receipt, delivery.redecided)
}

/// The answer to a decided group: `{"outcome", "redecided", "receipts": [answer per table]}`,
/// the outcome being the group's (every table's is the same).
pub fn group_answer(delivery: &GroupDelivery) -> serde_json::Value {
    let outcome = delivery
        .receipts
        .first()
        .map_or("rejected", |r| outcome_name(r.outcome()));
    let receipts: Vec<serde_json::Value> = delivery
        .receipts
        .iter()
        .map(|r| receipt_answer(r, delivery.redecided))
        .collect();
    serde_json::json!({
        "outcome": outcome,
        "redecided": delivery.redecided,
        "receipts": receipts,
    })
}

fn receipt_answer(receipt: &Receipt, redecided: u32) -> serde_json::Value {
    let failed: Vec<serde_json::Value> = receipt
        .failures()
        .map(|c| serde_json::json!({"name": c.name(), "detail": c.detail()}))
        .collect();
    serde_json::json!({
        "outcome": outcome_name(receipt.outcome()),
        "receipt_identity": receipt.identity(),
        "redecided": redecided,
        "receipt": receipt.to_value(),
        "failed_checks": failed,
    })
}

/// `accepted`, `rejected` or `replayed`.
pub fn outcome_name(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Accepted => "accepted",
        Outcome::Rejected => "rejected",
        Outcome::Replayed => "replayed",
    }
}
