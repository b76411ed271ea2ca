//! # dogana-receiver: the delivery engine
//!
//! The receiver's side of the protocol ("The receiver" in the protocol, "A loader" in the
//! reference), written once, over a small [`Backend`] port that each database implements
//! (`dogana-sqlite`, `dogana-duckdb`, ...). A [`Store`] does, for one delivered file, in this
//! order:
//!
//! 1. **replay lookup** by manifest identity (RECV-01): an accepted receipt of the same
//!    manifest is answered again as `replayed` once a declared content_hash matches the
//!    bytes (RECV-02); a repeated manifest over other bytes is refused (RECV-03);
//! 2. **`Gate::preflight`** against the stored ledger; a failure is recorded with
//!    `Gate::reject` and reads no row (RECV-05);
//! 3. **staging**: the rows go into the backend's private staging area while dogana-rows
//!    checks them in the same streaming pass (RECV-06), the published table untouched; then
//!    the receiver's own checks (`values`, `columns`, `keys_elsewhere`) and
//!    **`Gate::evaluate`**;
//! 4. **one write transaction** that re-reads the chain head, decides again from step 1 if
//!    it moved (RECV-10, never a rebase), executes the plan and saves
//!    `ledger.follow(receipt)` with the receipt — or the rejection alone (RECV-07 to RECV-09).
//!
//! Every receipt is kept; the stored ledger is always the fold of the accepted receipts,
//! which [`Store::verify`] checks (RECV-12).
//!
//! ## The receiver's checks
//!
//! After dogana-rows' eight (`parse`, `rows`, `deleted`, `keys`, `window`, `cursor`,
//! `schema_hash`, `content_hash`), every receipt of a delivery whose rows were read carries:
//!
//! | name | what it compares |
//! | --- | --- |
//! | `values` | values of columns the receiver types beyond the contract parse as that type |
//! | `columns` | the file's columns fit the published table: the same set (NDJSON: a subset), or a complete whole-table delivery that replaces the table with its columns (RECOVERY-04); no empty name, no two names equal but for ASCII case, no NUL |
//! | `keys_elsewhere` | a window delivery carries no key, live or tombstoned, already published outside its window (CHECK-16) |
//!
//! The details are written here, not by a backend, so every backend refuses with the same
//! words.
//!
//! ## Decisions
//!
//! - **A stale decision is made again under the write lock**: `commit` re-reads the head
//!   inside the write transaction; if it moved, steps 1 to 3 run again there (the staged rows
//!   are reused; the row checks depend only on the manifest and contract), so the new decision
//!   cannot be stale in turn. The redo starts from the replay lookup, so two concurrent
//!   deliveries of one manifest give one acceptance and one replay.
//! - **CHECK-16 (`keys_elsewhere`) looks at every published row** outside the window, whatever
//!   its region's state (PLAN-12 decided: every published row counts): the published table,
//!   not the ledger, knows where a key is.
//! - **The plan is executed as steps** ([`Step`]): the engine maps the protocol's five actions
//!   and their keyless variants to deletes and inserts once; a backend only writes each step
//!   in its SQL.
//! - **Table names** are any string but an empty one, one with NUL, one beginning with
//!   `dogana_` or `sqlite_`, or one differing from a stored table only in ASCII case
//!   ([`StoreError::TableName`]).
//! - **A contract that changes a fixed field** is an error ([`StoreError::Contract`]), not a
//!   receipt: the delivery is not at fault, the receiver's configuration is.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod batch;
pub mod concurrency;
pub mod conformance;
pub mod crash;
mod engine;
mod error;
mod ledger_cache;
pub mod overhead;
mod port;
pub mod sql;
mod stage;

pub use batch::{key_text, Batch, Datum, Row, Staged};
pub use engine::{
    AnyStore, Decision, DeliverOptions, Delivery, GroupDecision, GroupDelivery, Open, Part,
    Snapshot, Store, StoredReceipt, Timing, VerifyReport,
};
pub use error::{transient_io, StoreError};
pub use port::{Backend, Column, KeysFrom, KeysOutside, Layout, ReceiptRow, Step, Txn};

pub use dogana_rows::Format;
