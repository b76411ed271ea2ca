//! # dogana-duckdb: a dogana receiver on DuckDB
//!
//! A [`Store`] is the delivery engine of `dogana-receiver` over one DuckDB database file,
//! holding per table:
//!
//! - the **published table**, named as the contract's table, with the file's columns except
//!   the deleted column, which is never published (PLAN-14). Columns take their declared
//!   type: `int` BIGINT, `float` DOUBLE, `bool` BOOLEAN, `str` VARCHAR, `date` DATE,
//!   `datetime` TIMESTAMPTZ, `decimal(p,s)` DECIMAL(p,s); untyped columns VARCHAR.
//! - its **ledger**: the view `dogana_ledgers(table_name, document)` with the ledger's
//!   canonical JSON (LOADER-10), over the ledger kept region by region in
//!   `dogana_ledger_regions(table_name, low BLOB, region)` with its head, tail, publication
//!   id and identity in `dogana_ledger_heads`, so that a delivery writes only the regions it
//!   changed (a store of the earlier layout, a `dogana_ledgers` table of documents, is read as
//!   it is and converted when first opened for writing); and the view **`dogana_regions`**
//!   with the columns and values of the reference's DuckDB view over the document
//!   (timestamptz dates; LOADER-11 to LOADER-13).
//! - every **receipt**, `dogana_receipts(table_name, seq, identity, manifest_identity,
//!   outcome, accepted_order, document)`, accepted and rejected alike (RECV-11).
//!
//! ## Decisions (the DuckDB traps)
//!
//! - **One database instance per file per process.** Opening one file twice in a process
//!   gives two instances that can silently lose each other's writes. Every handle on a file
//!   clones a connection of the one instance this process keeps for it (held while any
//!   handle lives); writers within the process take the instance's write lock in turn.
//! - **One writing process per file.** DuckDB locks the file for the process that opens it;
//!   another process waits, retrying, up to [`DuckDbOptions::lock_timeout`] (60 s by default)
//!   and then refuses with [`StoreError::Locked`] naming the holder DuckDB reports. Nothing is
//!   written meanwhile, and nothing is lost.
//! - **Every statement is checked, one at a time.** A failed statement aborts DuckDB's
//!   transaction while a later COMMIT may still report success; several statements sent in
//!   one call are not one transaction in DuckDB 2.0. So the backend sends one statement per
//!   call, turns the first error into a rollback, and checks that saving the ledger changed
//!   exactly the rows it names (the head, and the regions deleted, updated and added).
//! - **A ledger is kept region by region** (issue 16): the document is O(regions) (24 MB at
//!   100,000), and a delivery changes a few of them; rewriting it also logged it whole in
//!   DuckDB's WAL, past the 16 MB that makes DuckDB checkpoint, at every delivery.
//!   `Ledger::region_rows_since` names the rows a delivery changed, and which of them have a
//!   stored key; they are written with one prepared statement per kind of change, since
//!   DuckDB plans and runs each statement at a cost far above a few rows': the head updated
//!   (inserted when it changed no row), the gone regions deleted (`region_key IN (…)`), the
//!   changed ones updated by key (`SET region = CASE region_key WHEN … END WHERE region_key
//!   IN (…)`), the new ones inserted from a `VALUES` list.
//! - **A region row's key is one column**, `region_key`: the table's name, a NUL (a name has
//!   no control character, so the first NUL ends it) and the region's key, beside the
//!   `table_name` and `low` columns the views and the reads order by. DuckDB answers a filter
//!   on it from its index; with the earlier compound key `(table_name, low)` the same filter
//!   scanned every region row of the table: the update of one region took 2.6 to 2.9 ms at
//!   100,000 regions against 0.47 ms at 1,000 (bench/apply.md), a probe on DuckDB 1.5.6 at
//!   100,000 rows 2.3 ms against 0.64 ms keyed. A join with a `VALUES` list scanned them too.
//!   A writer opening a store whose region rows have the compound key copies them into a
//!   keyed table that replaces it, in one transaction; a reader reads either layout as it
//!   is. A report of DuckDB indexes left stale after a writer killed with a pending WAL
//!   (duckdb/duckdb#23848) weighed against the key: the crash test delivers the rest of its
//!   sequence on the store every one of its 200 kills leaves, so an index out of step with its
//!   rows would fail an update (it checks the rows it changed) or an insert (a duplicate).
//! - More than 64 regions at once,
//!   as a whole ledger or a conversion writes them, are appended to a TEMP table and upserted
//!   in one `INSERT … SELECT … ON CONFLICT`, which needs a PRIMARY KEY, so the store's own
//!   two ledger tables have one (`table_name`; `region_key`), unlike a published
//!   table. An `ON CONFLICT` upsert costs DuckDB about twice an UPDATE or an INSERT of the
//!   same rows (bench/duckdb.md), so the few rows of a delivery are not upserted. A kept
//!   region's text is updated in place (not its key), and a whole ledger deletes only the
//!   regions it no longer has, so no key is deleted and inserted again in one transaction
//!   (the false duplicate below).
//!   The region keys are BLOBs, which DuckDB compares bytewise, the keys' order, so the view's
//!   `string_agg(region, ',' ORDER BY low)` is the document `Wire::to_json` writes. The engine
//!   reads the identity beside the head and answers from the ledger it keeps before reading
//!   a region. The earlier layout is converted in one transaction under the instance's write
//!   lock, DuckDB's file lock keeping every other process out; a document that does not read
//!   back, or two for one table, stops it and changes nothing. A handle opened for reading
//!   on the earlier layout reads `dogana_ledgers` whole, which a conversion replaces by a view
//!   of the same columns; DuckDB binds views' names when they are queried, so a user's view
//!   over either name reads on after it.
//! - **No PRIMARY KEY or UNIQUE constraint on a published table.** Deleting and re-inserting
//!   one key in one transaction can raise a false duplicate-key error under such a
//!   constraint; the engine's `keys` check already proves a delivery's keys unique, and the
//!   plan deletes every key it inserts. Key columns are NOT NULL.
//! - **Staging in TEMP tables** through DuckDB's appender, typed as the published columns
//!   (text for types the rows reader does not parse): private to the connection, gone after
//!   a crash. Every connection runs with `TimeZone = 'UTC'`, so a datetime is the instant the
//!   file gave. A handle keeps its two staging tables for a table from one delivery to the
//!   next of the same layout and empties them with DELETE after each, so that a small
//!   delivery changes nothing in the catalog: any change there (a TEMP table made or dropped)
//!   makes DuckDB bind every prepared statement again at its next use, an eighth of a small
//!   delivery's time. After 4,096 rows staged in them they are dropped instead (DuckDB keeps a
//!   deleted row's space until the table goes) and made again by the next delivery; a
//!   rollback forgets them (it may have undone their making), and the next delivery makes
//!   them with `CREATE OR REPLACE`.
//! - **The published columns are those of a `SELECT * … LIMIT 0`** of the table, which binds
//!   that table alone; `information_schema.columns` or `duckdb_columns()` list every column of
//!   every table and view in the catalog first, 2 to 4 ms a call, a fifth of a small
//!   delivery. A table that does not exist is DuckDB's catalog error, which leaves the
//!   transaction usable. A receipt is numbered in the statement that saves it.
//! - **A full read is staged whole and swapped in.** A delivery that, accepted, replaces every
//!   row stages its live rows straight into a new table of the published columns in the main
//!   database, `dogana_whole__{table}__{pid}_{n}`, written and committed in the decision's
//!   transaction; the commit's transaction sets the key columns NOT NULL, drops the published
//!   table and renames the staged one in its place, beside the ledger and the receipt (old or
//!   new after a crash). So no row is written twice. A refusal, a replay, a failed commit or a
//!   handle closed without committing drops it; a process killed in between leaves it in the
//!   file, and the next process to open the file for writing drops every `dogana_whole__`
//!   table (DuckDB's file lock keeps every other process out then). A published table with an
//!   index or a constraint someone added, or other column types or order, keeps them: its rows
//!   are replaced from the staged table instead. A column staged as text (`decimal(p,s)`) is
//!   not staged whole.
//! - **A whole staging is one parallel `INSERT … SELECT`** from the engine's batches, through
//!   a table function (`dogana_batches`, src/stream.rs) that every DuckDB thread reads, so
//!   its row groups are converted and compressed on every core instead of on the
//!   connection's thread alone. The batches and their conversion are the appender's; the
//!   staged table's row order is not the file's (`preserve_insertion_order` is off for that
//!   one statement, else DuckDB inserts from one thread).
//! - **A checkpoint killed in its metadata write.** DuckDB 1.5.6 rewrites its metadata
//!   block (256 KiB, the file's first block) in place at every checkpoint, while the header
//!   still in force points into it; a process killed in that one write (Linux stops a write
//!   between pages for a fatal signal), or a machine losing power then, leaves the block
//!   half old, half new, and DuckDB then refuses the whole file: "Corrupt database file:
//!   computed checksum … in block at location 12288". No delivery is half done by it: each
//!   commits whole, and the file holds no mixture of two states; it holds nothing DuckDB
//!   reads. Opening it is refused with [`StoreError::Corrupt`] saying so; the file needs
//!   restoring from a copy. The checkpoints are DuckDB's (at close, and past 16 MB of WAL),
//!   so the window is short: the crash test met it about once in a thousand kills, counts
//!   such kills apart and fails when they are more than one in fifty
//!   (`Harness::torn_by_its_database`); `tests/torn_checkpoint.rs` builds such a file from
//!   two checkpoints and fails once DuckDB opens it, when this note can go.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod backend;
mod columns;
pub mod harness;
mod stream;

pub use backend::{duckdb_type, table_columns, DuckDb, DuckDbOptions};

/// The delivery engine over DuckDB: open it with `Store::open(path)`.
///
/// ```
/// use dogana::{Contract, LogicalType, Shape, Timestamp};
/// use dogana_duckdb::Store;
/// let dir = std::env::temp_dir().join(format!("dogana-duckdb-doc-{}", std::process::id()));
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
/// let mut store = Store::open(dir.join("store.duckdb"))?;
/// assert!(store.deliver(&file, &contract, &manifest, at, Some("doc"))?.accepted());
/// assert!(store.deliver(&file, &contract, &manifest, at, Some("doc"))?.replayed());
/// assert!(store.verify("orders")?.ok());
/// assert_eq!(store.read_consistent_rows("orders")?.rows.len(), 2);
/// # drop(store);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub type Store = dogana_receiver::Store<DuckDb>;

pub use dogana_receiver::{
    Datum, Decision, DeliverOptions, Delivery, Format, Snapshot, StoreError, StoredReceipt,
    VerifyReport,
};
pub use duckdb;
