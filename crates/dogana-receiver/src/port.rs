//! The port: what a storage backend does for the engine. The engine decides; a backend only
//! reads and writes what it is told, inside the transactions the engine opens.
//!
//! ```text
//!            Store<B>  (engine.rs: replay → preflight → stage + check → evaluate → commit)
//!               │ calls, inside begin(Read|Write) … commit/rollback
//!               ▼
//!         trait Backend  ◄── dogana-sqlite::Sqlite, dogana-duckdb::DuckDb, dogana-postgres::Postgres,
//!                            dogana-lake::Lake, dogana-delta::Delta
//! ```

use dogana::{Contract, LedgerRows, Receipt, Window};

use crate::batch::{Batch, Datum};
use crate::StoreError;

/// A transaction the engine asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Txn {
    /// Reads one committed state; staging may write the backend's private staging area.
    Read,
    /// The table's write lock (waiting a bounded time for another writer), then reads the
    /// current state: what is decided in it cannot be stale.
    Write,
}

/// One stored receipt as the backend keeps it: the document and the columns beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceiptRow {
    /// Its place among the table's receipts, from 1.
    pub seq: i64,
    /// The receipt's identity, as stored beside the document.
    pub identity: String,
    /// The manifest's identity, as stored beside the document.
    pub manifest_identity: String,
    /// `accepted` or `rejected`, as stored beside the document.
    pub outcome: String,
    /// Its place among the acceptances, from 1 (None for a rejection).
    pub accepted_order: Option<i64>,
    /// The receipt's canonical JSON.
    pub document: String,
}

/// The staged rows' columns: `c{i}` holds `loaded[i]`, and the tombstones' `k{i}` the key
/// column `key[i]`. Types are the declared type names (the contract's for bound columns, the
/// receiver's column types for the others, None: untyped text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// The staged (published) columns, in file order, without the deleted column.
    pub loaded: Vec<String>,
    /// The declared type name of each staged column.
    pub types: Vec<Option<String>>,
    /// The key columns a tombstone names, with their declared types.
    pub key: Vec<(String, Option<String>)>,
}

impl Layout {
    /// Whether the staged columns can go straight into a new table of the published
    /// `columns` ([`Backend::stage_create_whole`]): the same names in the same order, none
    /// that the `columns` check refuses (empty, with NUL, equal but for letter case), which
    /// no table could have; those are staged as usual, for the check to refuse them.
    pub fn fits_whole(&self, columns: &[Column]) -> bool {
        let mut folded: Vec<String> = columns.iter().map(|c| c.name.to_lowercase()).collect();
        folded.sort_unstable();
        folded.dedup();
        !columns.is_empty()
            && folded.len() == columns.len()
            && columns
                .iter()
                .all(|c| !c.name.is_empty() && !c.name.contains('\0'))
            && columns.len() == self.loaded.len()
            && columns.iter().zip(&self.loaded).all(|(c, l)| &c.name == l)
    }

    /// The staged column holding `name`, if the file has it.
    pub fn column_of(&self, name: &str) -> Option<usize> {
        self.loaded.iter().position(|c| c == name)
    }
}

/// A published column: its name, declared type name (None: text) and whether it is a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// The column's name.
    pub name: String,
    /// Its declared type name: `int`, `float`, `bool`, `str`, `date`, `datetime`,
    /// `decimal(p,s)`; None for an untyped column.
    pub ty: Option<String>,
    /// Whether it is part of the key (NOT NULL).
    pub key: bool,
}

/// Where the keys of a [`Step::DeleteKeys`] come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeysFrom<'a> {
    /// The staged live rows: key column `i` of the published table is staged column `at[i]`.
    Rows(&'a [usize]),
    /// The staged tombstones' key columns `k0…`.
    Tombstones,
}

/// One step of executing a plan on the published table (PLAN-03 to PLAN-08), in the order
/// the engine gives them, inside the write transaction.
#[derive(Debug, Clone, Copy)]
pub enum Step<'a> {
    /// Create the published table.
    Create(&'a [Column]),
    /// Drop the published table (a complete whole-table delivery of another row schema).
    Drop,
    /// A whole-table load follows: drop what slows a bulk insert (indexes).
    BeginBulk(&'a Contract),
    /// The plan is done: make sure the table's indexes exist.
    Indexes(&'a Contract),
    /// Delete every published row.
    DeleteAll,
    /// Delete the published rows whose `column` lies in `window`.
    DeleteWindow(&'a str, &'a Window),
    /// Delete the published rows whose key (these columns) the staged rows or tombstones name.
    DeleteKeys(&'a [String], KeysFrom<'a>),
    /// Insert every staged live row (staged columns, named as the layout says).
    InsertStaged(&'a Layout),
}

/// The published rows outside a window whose key the staged rows or tombstones name
/// (CHECK-16).
#[derive(Debug, Clone, Copy)]
pub struct KeysOutside<'a> {
    /// The key columns.
    pub key: &'a [String],
    /// Staged column of each key column, for the live rows.
    pub staged_key: &'a [usize],
    /// The window column.
    pub column: &'a str,
    /// The delivery's window.
    pub window: &'a Window,
}

/// A storage backend: one implementation per database. Every method but `begin` runs inside
/// a transaction the engine opened, and must not commit on its own. Identifiers it writes
/// into SQL are quoted; values are bound.
pub trait Backend {
    /// Whether staged dates and datetimes arrive as the protocol's text (`YYYY-MM-DD`,
    /// `…+00:00`) rather than typed.
    const TEXT_TIMES: bool;
    /// Opens a transaction; a `Write` one waits (bounded) for the write lock of `tables`
    /// (sorted, so a backend locking table by table takes the locks in one fixed order).
    fn begin(&mut self, txn: Txn, tables: &[&str]) -> Result<(), StoreError>;
    /// Commits; an error means nothing was committed.
    fn commit(&mut self) -> Result<(), StoreError>;
    /// Rolls back, ignoring errors (the transaction may already be gone).
    fn rollback(&mut self);
    /// The stored ledger document of `table`.
    fn ledger(&mut self, table: &str) -> Result<Option<String>, StoreError>;
    /// The first accepted receipt of this manifest identity, answered without reading the
    /// table's history (an index).
    fn accepted_receipt(
        &mut self,
        table: &str,
        manifest: &str,
    ) -> Result<Option<String>, StoreError>;
    /// Every receipt of `table`, by `seq`.
    fn receipts(&mut self, table: &str) -> Result<Vec<ReceiptRow>, StoreError>;
    /// The tables with a stored ledger, sorted.
    fn tables(&mut self) -> Result<Vec<String>, StoreError>;
    /// The published table's columns in order; None when it does not exist.
    fn published_columns(&mut self, table: &str) -> Result<Option<Vec<String>>, StoreError>;
    /// Creates the (private, empty) staging area of one delivery to `table` (one per table:
    /// the tables of a group are staged side by side).
    fn stage_create(&mut self, table: &str, layout: &Layout) -> Result<(), StoreError>;
    /// [`Backend::stage_create`] for a delivery that, accepted, replaces every published row
    /// (a complete whole-table read): answers true when the live rows go straight into a new
    /// table of `columns` (what [`Step::Create`] makes), which [`Backend::replace_with_staged`]
    /// then publishes. By default, `stage_create` and false.
    fn stage_create_whole(
        &mut self,
        table: &str,
        layout: &Layout,
        columns: &[Column],
    ) -> Result<bool, StoreError> {
        let _ = columns;
        self.stage_create(table, layout).map(|()| false)
    }
    /// Publishes what `stage_create_whole` staged, as `Drop`/`Create` (unless `keep`: then
    /// `DeleteAll`, the table keeping its columns' types and order) and `InsertStaged` would.
    fn replace_with_staged(&mut self, table: &str, keep: bool) -> Result<(), StoreError> {
        let _ = (table, keep);
        Err(StoreError::Unavailable(
            "this backend stages no whole table".into(),
        ))
    }
    /// Stages a batch of rows and tombstones for `table`.
    fn stage_batch(
        &mut self,
        table: &str,
        layout: &Layout,
        batch: &Batch,
    ) -> Result<(), StoreError>;
    /// Stages every batch of a delivery to `table`, in the order given, as `stage_batch`
    /// each (the default). A backend may read them on its own threads: the iterator blocks
    /// until the reading thread has checked the next batch, and ends with the file.
    fn stage_batches(
        &mut self,
        table: &str,
        layout: &Layout,
        batches: Box<dyn Iterator<Item = Batch> + Send>,
    ) -> Result<(), StoreError> {
        for batch in batches {
            self.stage_batch(table, layout, &batch)?;
        }
        Ok(())
    }
    /// Removes the staging area of `table`, if any; or empties it, for a backend that keeps
    /// it for the next delivery (SQLite's TEMP tables).
    fn stage_clear(&mut self, table: &str) -> Result<(), StoreError>;
    /// How many published rows lie outside the window with a key staged for `table`, and the
    /// first one's key values followed by its window value.
    fn keys_outside(
        &mut self,
        table: &str,
        q: &KeysOutside<'_>,
    ) -> Result<(u64, Option<Vec<Datum>>), StoreError>;
    /// Executes one step of a plan on the published table (from the table's staging area).
    fn execute(&mut self, table: &str, step: Step<'_>) -> Result<(), StoreError>;
    /// Stores `document` as the table's ledger (insert or replace).
    fn save_ledger(&mut self, table: &str, document: &str) -> Result<(), StoreError>;
    /// Whether the backend keeps ledgers region by region ([`Backend::save_ledger_rows`])
    /// with their identity beside them ([`Backend::ledger_identity`]), so that a delivery
    /// writes the regions it changed instead of the whole document. By default, false.
    fn keeps_ledger_rows(&self) -> bool {
        false
    }
    /// The identity stored beside `table`'s ledger, written with it in one transaction;
    /// None when there is no ledger, or the backend keeps none (the engine then reads the
    /// document).
    fn ledger_identity(&mut self, table: &str) -> Result<Option<String>, StoreError> {
        let _ = table;
        Ok(None)
    }
    /// Stores the ledger of this `identity` as the stored one changed by `rows` (head and
    /// tail replaced, regions upserted and removed by key); [`Backend::ledger`] then answers
    /// its document. Called only when [`Backend::keeps_ledger_rows`].
    fn save_ledger_rows(
        &mut self,
        table: &str,
        identity: &str,
        rows: &LedgerRows,
    ) -> Result<(), StoreError> {
        let _ = (table, identity, rows);
        Err(StoreError::Unavailable(
            "this backend keeps ledgers as whole documents".into(),
        ))
    }
    /// Appends a receipt: the next `seq`, and for an acceptance the next `accepted_order`.
    fn save_receipt(&mut self, table: &str, receipt: &Receipt) -> Result<(), StoreError>;
    /// Every published row of these columns, in the table's order.
    fn read_rows(&mut self, table: &str, columns: &[String])
        -> Result<Vec<Vec<Datum>>, StoreError>;
    /// The tables of the group `table` was delivered in (lowercase, sorted), if any.
    fn group_of(&mut self, table: &str) -> Result<Option<Vec<String>>, StoreError> {
        let _ = table;
        Err(StoreError::Unavailable(
            "this backend does not deliver groups of tables yet".into(),
        ))
    }
    /// Records that these tables (lowercase, sorted) are delivered together.
    fn save_group(&mut self, tables: &[String]) -> Result<(), StoreError> {
        let _ = tables;
        Err(StoreError::Unavailable(
            "this backend does not deliver groups of tables yet".into(),
        ))
    }
}
