//! # dogana-sqlite: a dogana receiver on SQLite
//!
//! A [`Store`] is one SQLite database file holding, per table:
//!
//! - the **published table**, named as the contract's table (a quoted identifier), with the
//!   file's columns except the deleted column, which is never published (PLAN-14). Bound
//!   columns take the contract's type (`int` INTEGER, `float` REAL, `str`, `date` and
//!   `datetime` TEXT, see [`sql_type`]); the others TEXT, or the type a
//!   [`DeliverOptions::column_type`] gives. Rows are kept in arrival order (rowid) with key
//!   columns NOT NULL; the key has a UNIQUE index `dogana_key__<table>` and the window column
//!   an index `dogana_window__<table>` (see [`StoreOptions::window_index`]). A complete
//!   whole-table delivery drops both, inserts, and builds each with one sort.
//! - its **ledger**, `dogana_ledgers(table_name, document)` with `document` the ledger's
//!   canonical JSON (LOADER-10), and the view **`dogana_regions`**, one row per region
//!   (LOADER-11, LOADER-12): `table_name`, `publication_id`, `region_index`, `low` and `high`
//!   as JSON text, `low_open` and `high_open` as 0/1, `complete_as_of` and `deletions_as_of` as
//!   the `$datetime` text (SQLite has no timestamptz; the text is in UTC and sorts as time).
//!   SQL `min` ignores nulls: require every region's date non-null before aggregating
//!   (LOADER-13).
//! - every **receipt**, `dogana_receipts(table_name, seq, identity, manifest_identity, outcome,
//!   accepted_order, document)`: accepted and rejected alike, the accepted ones numbered in
//!   publication order (RECV-11). A replay stores nothing.
//!
//! [`Store::deliver`] follows the protocol's order (RECV-01 to RECV-10): replay lookup,
//! `Gate::preflight`, rows staged in TEMP tables while dogana-rows checks them (the published
//! table is not touched), the receiver's own checks, `Gate::evaluate`, then one `BEGIN
//! IMMEDIATE` transaction that re-reads the chain head, decides again if it moved, executes the
//! plan, and saves the ledger and the receipt. [`Store::decide`] and [`Store::commit`] are the
//! two phases, for a caller (or a test) that wants to see between them.
//!
//! ## The receiver's checks
//!
//! After dogana-rows' eight (`parse`, `rows`, `deleted`, `keys`, `window`, `cursor`,
//! `schema_hash`, `content_hash`), every receipt of a delivery whose rows were read carries:
//!
//! | name | what it compares |
//! | --- | --- |
//! | `values` | values of columns the receiver types beyond the contract parse as that type |
//! | `columns` | the file's columns fit the published table: the same set (NDJSON: a subset), or a complete whole-table delivery that replaces the table with its columns (RECOVERY-04); no two names equal but for ASCII case, no NUL |
//! | `keys_elsewhere` | a window delivery carries no key, live or tombstoned, already published outside its window (CHECK-16) |
//!
//! A repeated manifest over other bytes is refused with a failed `content_hash` check
//! (RECV-03).
//!
//! ## Decisions
//!
//! - **WAL and `synchronous = FULL`.** WAL lets readers read one committed state while a
//!   writer works, and makes a commit one append to the log: after a crash the store holds the
//!   old state or the new one (RECV-09). FULL syncs the log at every commit, so a receipt the
//!   receiver answered survives a power loss too; NORMAL ([`Synchronous::Normal`]) is as
//!   atomic but may lose the last commits on power loss. One sync per delivery is nothing
//!   next to loading its rows.
//! - **Staging in TEMP tables** of the store's connection: never seen by other connections,
//!   gone after a crash, no lock on the store while the rows are read. A second thread parses
//!   and checks (dogana-rows, which hashes on a third) while the connection's thread inserts.
//! - **A UNIQUE key index rather than an `INTEGER PRIMARY KEY`**: a bulk load appends rows in
//!   file order and sorts only the keys, where a rowid key would sort whole rows (or insert
//!   them at random places) for an unordered file. Upserts, tombstones and `keys_elsewhere`
//!   use the index.
//! - **A stale decision is made again under the write lock**: `commit` re-reads the head
//!   inside `BEGIN IMMEDIATE`; if it moved, steps 1 to 3 run again there (the staged rows are
//!   reused; the row checks depend only on the manifest and contract), so the new decision
//!   cannot be stale in turn. The redo starts from the replay lookup, so two concurrent
//!   deliveries of one manifest give one acceptance and one replay. [`Delivery::redecided`]
//!   counts it.
//! - **CHECK-16 (`keys_elsewhere`) looks at every published row** outside the window, whatever
//!   its region's state (PLAN-12): the published table, not the ledger, knows where a key is.
//! - **Readers** read rows and ledger in one transaction: [`Store::read_consistent`] (RECV-13).
//! - **Table names** are any string but an empty one, one with NUL, one beginning with
//!   `dogana_` or `sqlite_`, or one differing from a stored table only in ASCII case
//!   ([`StoreError::TableName`]). Column names may be anything but NUL or a case-insensitive
//!   repeat (the `columns` check). Identifiers are always quoted ([`quote_ident`]) and values
//!   always bound.
//! - **A contract that changes a fixed field** is an error ([`StoreError::Contract`]), not a
//!   receipt: the delivery is not at fault, the receiver's configuration is.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod conformance;
mod error;
mod sql;
mod stage;
mod store;

pub use error::StoreError;
pub use sql::{quote_ident, sql_type};
pub use store::{
    Decision, DeliverOptions, Delivery, Snapshot, Store, StoreOptions, StoredReceipt, Synchronous,
    VerifyReport,
};

pub use dogana_rows::Format;
pub use rusqlite;
