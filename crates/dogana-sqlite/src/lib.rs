//! # dogana-sqlite: a dogana receiver on SQLite
//!
//! A [`Store`] is one SQLite database file holding, per table:
//!
//! - the **published table**, named as the contract's table (a quoted identifier), with the
//!   file's columns except the deleted column, which is never published (PLAN-14). Bound
//!   columns take the contract's type (`int` INTEGER, `float` REAL, `str`, `date` and
//!   `datetime` TEXT, see [`sql_type`]); the others TEXT, or the type a
//!   [`DeliverOptions::column_type`] gives. Key columns are NOT NULL; the first window
//!   replacement gives the window column an index `dogana_window__<table>` unless one already
//!   leads with it (see [`StoreOptions::window_index`]), and it lasts until a full read. A full read
//!   (complete, whole table) publishes a new table: when its key is one `int` column whose
//!   values arrived ascending, that column is the `INTEGER PRIMARY KEY` (the rowid, rows in
//!   key order); otherwise rows are kept in arrival order (rowid) and the key has a UNIQUE
//!   index `dogana_key__<table>`. Later deliveries work on either layout. Indexes and
//!   triggers a user built on the published table are built again on the table a full read
//!   publishes, in its transaction; when one cannot be (a UNIQUE index the new rows violate)
//!   the delivery fails with a [`UserObjectError`] and changes nothing.
//! - its **ledger**, the view `dogana_ledgers(table_name, document)` with `document` the
//!   ledger's canonical JSON (LOADER-10), kept region by region in `dogana_ledger_regions` with
//!   its head, tail and identity in `dogana_ledger_heads`, so that a delivery writes only the
//!   regions it changed (a store of the earlier layout, one document per table, is converted
//!   when first opened for writing); and the view **`dogana_regions`**, one row per region
//!   (LOADER-11, LOADER-12): `table_name`, `publication_id`, `region_index`, `low` and `high`
//!   as JSON text, `low_open` and `high_open` as 0/1, `complete_as_of` and `deletions_as_of` as
//!   the `$datetime` text (SQLite has no timestamptz; the text is in UTC and sorts as time).
//!   SQL `min` ignores nulls: require every region's date non-null before aggregating
//!   (LOADER-13).
//! - every **receipt**, `dogana_receipts(table_name, seq, identity, manifest_identity, outcome,
//!   accepted_order, document)`: accepted and rejected alike, the accepted ones numbered in
//!   publication order (RECV-11). A replay stores nothing.
//!
//! [`Store`] is the delivery engine of `dogana-receiver` over this crate's [`Sqlite`] backend:
//! the protocol's order (replay lookup, preflight, staging with the row checks, the receiver's
//! own checks, evaluate, one commit that re-reads the head), the receiver's checks
//! (`values`, `columns`, `keys_elsewhere`) and the decisions every backend shares are written
//! there once. Here rows are staged in TEMP tables of the store's connection, or, for a full
//! read, in a new table of the main database that the commit renames in place of the
//! published one; the commit is one `BEGIN IMMEDIATE` transaction.
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
//! - **A full read is staged whole, under the write lock** (`dogana_whole__<table>__<token>`
//!   in the main database, committed with the decision, renamed in at commit): each row is
//!   written once, and the key index is saved when the keys arrive ascending (the rowid). The
//!   staging waits for the write lock as a commit does, and other writers wait for it; a
//!   staging left by a killed process is dropped by the next writer (each staging handle
//!   holds a `flock` on `<db>-dogana-<token>.lock`). See docs/decisions.md.
//! - **A UNIQUE key index rather than an `INTEGER PRIMARY KEY`** for unordered keys: a bulk
//!   load appends rows in file order and sorts only the keys, where a rowid key would sort
//!   whole rows (or insert them at random places). Upserts, tombstones and `keys_elsewhere`
//!   use the index (or the rowid).
//! - **Readers** read rows and ledger in one transaction: [`Store::read_consistent_rows`],
//!   or [`Sqlite::read_consistent`] for a query of one's own (RECV-13). A store opened with
//!   `Store::open_read_only` changes nothing in the file (no table, no journal mode).
//! - **Identifiers** are always quoted ([`quote_ident`]), values always bound.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod catalog;
mod harness;
mod sql;
mod store;

pub use sql::sql_type;
pub use store::{table_columns, Sqlite, StoreOptions, Synchronous, UserObjectError};

/// The delivery engine over SQLite: open it with `Store::open(path)`.
///
/// ```
/// use dogana::{Contract, LogicalType, Shape, Timestamp};
/// use dogana_sqlite::Store;
/// let dir = std::env::temp_dir().join(format!("dogana-sqlite-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let file = dir.join("orders.csv");
/// std::fs::write(&file, "id,amount\n1,10\n2,20\n")?;
/// let contract = Contract::builder("orders", ["id"])
///     .shape("full", Shape::full())
///     .column("id", LogicalType::Int)
///     .build()?;
/// let at: Timestamp = "2026-10-26T06:00:00Z".parse()?;
/// let manifest = contract.manifest("full", at).rows(2).build()?;
///
/// let mut store = Store::open(dir.join("store.db"))?;
/// let delivery = store.deliver(&file, &contract, &manifest, at, Some("doc"))?;
/// assert!(delivery.accepted() && !delivery.replayed());
/// let again = store.deliver(&file, &contract, &manifest, at, Some("doc"))?;
/// assert!(again.replayed());
/// assert!(store.verify("orders")?.ok());
/// let snapshot = store.read_consistent_rows("orders")?;
/// assert_eq!(snapshot.rows.len(), 2);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub type Store = dogana_receiver::Store<Sqlite>;

pub use dogana_receiver::sql::quote_ident;
pub use dogana_receiver::{
    Datum, Decision, DeliverOptions, Delivery, Format, Snapshot, StoreError, StoredReceipt,
    VerifyReport,
};
pub use rusqlite;
