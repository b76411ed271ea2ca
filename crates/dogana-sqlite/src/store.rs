//! The store: one SQLite database holding published tables, their ledgers and every receipt.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use dogana::{
    Action, ActionKind, Check, Contract, Coverage, FromWire, Gate, Ledger, Manifest, Outcome,
    Receipt, Timestamp, Wire,
};
use dogana_rows::{sha256_file, Format, RowReport};
use rusqlite::types::Value as SqlValue;
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

use crate::sql::{ident_list, quote_ident, row_value, sql_type, value_sql};
use crate::stage::{self, Staged, ROWS, TOMBSTONES};
use crate::StoreError;

/// The store's own tables and view; a contract's table may not be named like them.
const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS dogana_ledgers (
    table_name TEXT PRIMARY KEY NOT NULL,
    document   TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS dogana_receipts (
    table_name        TEXT NOT NULL,
    seq               INTEGER NOT NULL,
    identity          TEXT NOT NULL,
    manifest_identity TEXT NOT NULL,
    outcome           TEXT NOT NULL CHECK (outcome IN ('accepted', 'rejected')),
    accepted_order    INTEGER CHECK ((outcome = 'accepted') = (accepted_order IS NOT NULL)),
    document          TEXT NOT NULL,
    PRIMARY KEY (table_name, seq),
    UNIQUE (table_name, accepted_order)
);
CREATE INDEX IF NOT EXISTS dogana_receipts_by_manifest
    ON dogana_receipts (table_name, manifest_identity);
CREATE VIEW IF NOT EXISTS dogana_regions AS
SELECT l.table_name,
       json_extract(l.document, '$.publication_id') AS publication_id,
       CAST(r.key AS INTEGER) AS region_index,
       r.value -> '$.low' AS low,
       r.value -> '$.high' AS high,
       json_extract(r.value, '$.low_open') AS low_open,
       json_extract(r.value, '$.high_open') AS high_open,
       json_extract(r.value, '$.complete_as_of."$datetime"') AS complete_as_of,
       json_extract(r.value, '$.deletions_as_of."$datetime"') AS deletions_as_of
FROM dogana_ledgers l, json_each(l.document, '$.regions') r;
"#;

static HANDLES: AtomicU64 = AtomicU64::new(1);

/// How the store writes. See the crate documentation for why these defaults.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    busy_timeout: Duration,
    synchronous: Synchronous,
    cache_mib: u32,
    window_index: bool,
    page_size: Option<u32>,
}

/// SQLite's `PRAGMA synchronous` in WAL mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Synchronous {
    /// Every commit is synced: an answered receipt survives a power loss (the default).
    Full,
    /// Commits are synced at checkpoints: atomic after a crash of the process or the machine,
    /// but a power loss may undo the last commits, whose receipts were already answered.
    Normal,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            busy_timeout: Duration::from_secs(60),
            synchronous: Synchronous::Full,
            cache_mib: 128,
            window_index: true,
            page_size: None,
        }
    }
}

impl StoreOptions {
    /// The defaults: a 60 s busy timeout, `synchronous = FULL`, a 128 MiB page cache, an
    /// index on the window column.
    pub fn new() -> StoreOptions {
        StoreOptions::default()
    }

    /// How long a writer waits for another one before failing with SQLITE_BUSY.
    pub fn busy_timeout(mut self, timeout: Duration) -> StoreOptions {
        self.busy_timeout = timeout;
        self
    }

    /// `PRAGMA synchronous`.
    pub fn synchronous(mut self, synchronous: Synchronous) -> StoreOptions {
        self.synchronous = synchronous;
        self
    }

    /// The page cache of the connection, in MiB (`PRAGMA cache_size`).
    pub fn cache_mib(mut self, mib: u32) -> StoreOptions {
        self.cache_mib = mib.max(1);
        self
    }

    /// The page size of a store created by this open (`PRAGMA page_size`, a power of two
    /// from 512 to 65536); an existing store keeps its own. SQLite's default is 4096.
    pub fn page_size(mut self, bytes: u32) -> StoreOptions {
        self.page_size = Some(bytes);
        self
    }

    /// Whether a published table gets an index on its window column (default true), which
    /// `replace_window` deletes and the `keys_elsewhere` check use. Without it they scan.
    pub fn window_index(mut self, yes: bool) -> StoreOptions {
        self.window_index = yes;
        self
    }
}

/// How to read one delivered file.
#[derive(Debug, Clone)]
pub struct DeliverOptions {
    pub(crate) format: Option<Format>,
    pub(crate) delimiter: u8,
    pub(crate) column_types: BTreeMap<String, String>,
    pub(crate) hash_in_thread: bool,
}

impl Default for DeliverOptions {
    fn default() -> Self {
        DeliverOptions {
            format: None,
            delimiter: b',',
            column_types: BTreeMap::new(),
            hash_in_thread: true,
        }
    }
}

impl DeliverOptions {
    /// The format from the file's extension, comma-separated CSV, no column types.
    pub fn new() -> DeliverOptions {
        DeliverOptions::default()
    }

    /// The file's format, whatever its extension.
    pub fn format(mut self, format: Format) -> DeliverOptions {
        self.format = Some(format);
        self
    }

    /// The CSV delimiter.
    pub fn delimiter(mut self, delimiter: u8) -> DeliverOptions {
        self.delimiter = delimiter;
        self
    }

    /// The type of a column the contract does not bind, from the data contract: one of the six
    /// type names or `decimal(p,s)`. It serves the column hash (CHECK-07) and the published
    /// column's SQL type ([`sql_type`](crate::sql_type)); values of an `int`, `float`, `bool`,
    /// `date` or `datetime` column are converted, and one that does not parse fails the
    /// `values` check. Bound columns always take the contract's type.
    pub fn column_type(mut self, column: impl Into<String>, ty: impl Into<String>) -> Self {
        self.column_types.insert(column.into(), ty.into());
        self
    }

    /// Whether SHA-256 runs in a second thread while rows are parsed (default true).
    pub fn hash_in_thread(mut self, yes: bool) -> DeliverOptions {
        self.hash_in_thread = yes;
        self
    }

    pub(crate) fn rows_options(&self) -> dogana_rows::Options {
        dogana_rows::Options::new()
            .delimiter(self.delimiter)
            .hash_in_thread(self.hash_in_thread)
            .column_types(stage::rows_types(&self.column_types))
    }
}

/// One delivery to decide.
#[derive(Debug, Clone)]
pub(crate) struct Job {
    pub(crate) file: PathBuf,
    pub(crate) contract: Contract,
    pub(crate) manifest: Manifest,
    pub(crate) now: Timestamp,
    pub(crate) source: Option<String>,
    pub(crate) options: DeliverOptions,
}

impl Job {
    pub(crate) fn format(&self) -> Result<Format, StoreError> {
        stage::format_of(&self.file, self.options.format)
    }

    fn source(&self) -> Option<&str> {
        self.source.as_deref()
    }
}

/// What a delivery came to.
#[derive(Debug, Clone)]
pub struct Delivery {
    /// The receipt: accepted or rejected and stored, or the original acceptance answered again
    /// as `replayed` (nothing stored).
    pub receipt: Receipt,
    /// How many times the decision was made again because the published chain head moved
    /// between deciding and committing (RECV-10).
    pub redecided: u32,
    /// What reading the rows found, when they were read: not for a replay nor a delivery the
    /// preflight refused.
    pub report: Option<RowReport>,
}

impl Delivery {
    /// Whether the delivery was a replay of an accepted one (RECV-02).
    pub fn replayed(&self) -> bool {
        self.receipt.replayed()
    }

    /// Whether the rows are published (accepted now, or a replay of an acceptance).
    pub fn accepted(&self) -> bool {
        self.receipt.accepted()
    }
}

/// A decision not yet committed: the first phase of [`Store::deliver`]. The staged rows stay in
/// the handle's TEMP tables until [`Store::commit`], which decides again if the chain head
/// moved meanwhile (RECV-10). One decision per handle is outstanding: a later
/// [`Store::decide`] replaces it.
#[derive(Debug)]
pub struct Decision {
    handle: u64,
    stage: u64,
    job: Job,
    verdict: Verdict,
    staged: Option<Staged>,
}

impl Decision {
    /// The receipt decided (a replay's is the original answered as `replayed`).
    pub fn receipt(&self) -> &Receipt {
        match &self.verdict {
            Verdict::Replay(r) => r,
            Verdict::Decided { receipt, .. } => receipt,
        }
    }

    /// Whether the delivery is a replay, which commits nothing.
    pub fn is_replay(&self) -> bool {
        matches!(self.verdict, Verdict::Replay(_))
    }
}

#[derive(Debug, Clone)]
enum Verdict {
    Replay(Receipt),
    Decided {
        receipt: Receipt,
        ledger: Ledger,
        table: TablePlan,
    },
}

/// What the published table needs before the plan runs.
#[derive(Debug, Clone, PartialEq)]
enum TablePlan {
    /// Nothing: it exists with fitting columns (or nothing is published).
    Keep,
    /// Create it with these columns and SQL types.
    Create(Vec<(String, &'static str)>),
    /// Drop it and create it with these columns: a complete whole-table delivery of another
    /// row schema (RECOVERY-04).
    Recreate(Vec<(String, &'static str)>),
}

/// One stored receipt.
#[derive(Debug, Clone)]
pub struct StoredReceipt {
    /// Its place among the table's receipts, from 1.
    pub seq: i64,
    /// Its place among the table's acceptances, from 1, for an accepted receipt.
    pub accepted_order: Option<i64>,
    /// The receipt.
    pub receipt: Receipt,
}

/// What [`Store::verify`] found (RECV-12, RECOVERY-01).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyReport {
    /// The table.
    pub table: String,
    /// How many receipts are stored.
    pub receipts: usize,
    /// How many of them are acceptances.
    pub accepted: usize,
    /// The identity of the stored ledger, if one is stored.
    pub stored: Option<String>,
    /// The identity of the ledger folded from the accepted receipts, if the fold succeeded.
    pub rebuilt: Option<String>,
    /// Every difference found; empty when the store is consistent.
    pub problems: Vec<String>,
}

impl VerifyReport {
    /// Whether nothing was found wrong.
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// A published table read with its ledger from one committed state (RECV-13).
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// The ledger the rows were published under (None: nothing stored yet).
    pub ledger: Option<Ledger>,
    /// The published columns (empty when no table is published).
    pub columns: Vec<String>,
    /// Every row, in rowid order.
    pub rows: Vec<Vec<SqlValue>>,
}

/// A dogana receiver on one SQLite database file.
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
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: PathBuf,
    options: StoreOptions,
    handle: u64,
    stage: u64,
}

/// A transaction on a shared connection: rolled back unless committed.
struct Txn<'c> {
    conn: &'c Connection,
    open: bool,
}

impl<'c> Txn<'c> {
    fn begin(conn: &'c Connection, behavior: TransactionBehavior) -> rusqlite::Result<Txn<'c>> {
        conn.execute_batch(match behavior {
            TransactionBehavior::Immediate => "BEGIN IMMEDIATE",
            TransactionBehavior::Exclusive => "BEGIN EXCLUSIVE",
            _ => "BEGIN DEFERRED",
        })?;
        Ok(Txn { conn, open: true })
    }

    fn commit(mut self) -> rusqlite::Result<()> {
        self.open = false;
        if let Err(e) = self.conn.execute_batch("COMMIT") {
            let _ = self.conn.execute_batch("ROLLBACK");
            return Err(e);
        }
        Ok(())
    }
}

impl Drop for Txn<'_> {
    fn drop(&mut self) {
        if self.open {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }
}

/// Refuses table names the store cannot publish under.
fn check_table_name(table: &str) -> Result<(), StoreError> {
    let lower = table.to_ascii_lowercase();
    if table.is_empty() {
        return Err(StoreError::TableName("the table name is empty".into()));
    }
    if table.contains('\0') {
        return Err(StoreError::TableName(format!(
            "{table:?} contains a NUL character, which no SQLite identifier can"
        )));
    }
    if lower.starts_with("dogana_") || lower.starts_with("sqlite_") {
        return Err(StoreError::TableName(format!(
            "{table:?}: names beginning with dogana_ or sqlite_ belong to the store and to SQLite"
        )));
    }
    Ok(())
}

/// The bound columns the published table always has: the key and the window column.
fn bound_published(contract: &Contract) -> Vec<String> {
    let mut v: Vec<String> = contract.key().to_vec();
    if let Some(w) = contract.window_column() {
        if !v.iter().any(|k| k == w) {
            v.push(w.to_owned());
        }
    }
    v
}

fn window_index_name(table: &str) -> String {
    quote_ident(&format!("dogana_window__{table}"))
}

fn is_replace_all(contract: &Contract, manifest: &Manifest) -> bool {
    contract
        .shape(manifest.shape())
        .is_some_and(|s| s.is_complete() && s.coverage() == Coverage::Table)
}

fn show_sql(v: &SqlValue) -> String {
    match v {
        SqlValue::Null => "null".into(),
        SqlValue::Integer(i) => i.to_string(),
        SqlValue::Real(x) => x.to_string(),
        SqlValue::Text(s) => format!("{s:?}"),
        SqlValue::Blob(b) => format!("<{} bytes>", b.len()),
    }
}

impl Store {
    /// Opens (or creates) the store at `path` with the default [`StoreOptions`].
    pub fn open(path: impl AsRef<Path>) -> Result<Store, StoreError> {
        Store::open_with(path, StoreOptions::default())
    }

    /// Opens (or creates) the store at `path`: WAL mode, the options' synchronous level,
    /// busy timeout and cache, and the store's tables and `dogana_regions` view.
    pub fn open_with(path: impl AsRef<Path>, options: StoreOptions) -> Result<Store, StoreError> {
        let path = path.as_ref().to_path_buf();
        let conn = Connection::open(&path)?;
        conn.busy_timeout(options.busy_timeout)?;
        if let Some(size) = options.page_size {
            // takes effect only on a database without pages yet
            conn.execute_batch(&format!("PRAGMA page_size = {size}"))?;
        }
        // WAL: readers see one committed state while a writer works, and a commit is one
        // append to the log, atomic after a crash (RECV-09, RECV-13).
        let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::Corrupt(format!(
                "{} cannot use WAL mode (journal_mode is {mode})",
                path.display()
            )));
        }
        let sync = match options.synchronous {
            Synchronous::Full => "FULL",
            Synchronous::Normal => "NORMAL",
        };
        conn.execute_batch(&format!(
            "PRAGMA synchronous = {sync};
             PRAGMA cache_size = -{};
             PRAGMA temp.cache_size = -{};
             PRAGMA temp_store = FILE;
             PRAGMA journal_size_limit = 67108864;
             PRAGMA foreign_keys = OFF;
             PRAGMA threads = {};",
            u64::from(options.cache_mib) * 1024,
            // staging appends: a small cache does
            u64::from(options.cache_mib.min(64)) * 1024,
            std::thread::available_parallelism().map_or(1, |n| n.get().min(4)),
        ))?;
        let ready: i64 = conn.query_row(
            "SELECT count(*) FROM sqlite_master WHERE name IN
             ('dogana_ledgers', 'dogana_receipts', 'dogana_receipts_by_manifest', 'dogana_regions')",
            [],
            |r| r.get(0),
        )?;
        if ready < 4 {
            let txn = Txn::begin(&conn, TransactionBehavior::Immediate)?;
            conn.execute_batch(SCHEMA)?;
            txn.commit()?;
        }
        Ok(Store {
            conn,
            path,
            options,
            handle: HANDLES.fetch_add(1, Ordering::Relaxed),
            stage: 0,
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The SQLite connection, for reading. Writing to the store's tables behind its back
    /// breaks what [`Store::verify`] checks.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Delivers one file: decides it and commits the decision, as the protocol orders
    /// (RECV-01 to RECV-10). See [`Store::decide`] and [`Store::commit`].
    pub fn deliver(
        &mut self,
        file: impl AsRef<Path>,
        contract: &Contract,
        manifest: &Manifest,
        now: Timestamp,
        source: Option<&str>,
    ) -> Result<Delivery, StoreError> {
        self.deliver_with(
            file,
            contract,
            manifest,
            now,
            source,
            &DeliverOptions::default(),
        )
    }

    /// [`Store::deliver`] with options for reading the file.
    pub fn deliver_with(
        &mut self,
        file: impl AsRef<Path>,
        contract: &Contract,
        manifest: &Manifest,
        now: Timestamp,
        source: Option<&str>,
        options: &DeliverOptions,
    ) -> Result<Delivery, StoreError> {
        let decision = self.decide_with(file, contract, manifest, now, source, options)?;
        self.commit(decision)
    }

    /// Phase one of a delivery, in the protocol's order: (1) an accepted receipt of the same
    /// manifest makes a replay, answered once a declared content_hash matches the bytes, and a
    /// repeated manifest over other bytes is refused (RECV-01 to RECV-04); (2) the ledger and
    /// `Gate::preflight`, whose failure is recorded with `Gate::reject` and reads no row
    /// (RECV-05); (3) the rows staged in TEMP tables while dogana-rows checks them, then the
    /// receiver's own checks, then `Gate::evaluate` (RECV-06). Nothing is written to the store;
    /// the ledger and the published rows are read in one read transaction.
    pub fn decide(
        &mut self,
        file: impl AsRef<Path>,
        contract: &Contract,
        manifest: &Manifest,
        now: Timestamp,
        source: Option<&str>,
    ) -> Result<Decision, StoreError> {
        self.decide_with(
            file,
            contract,
            manifest,
            now,
            source,
            &DeliverOptions::default(),
        )
    }

    /// [`Store::decide`] with options for reading the file.
    pub fn decide_with(
        &mut self,
        file: impl AsRef<Path>,
        contract: &Contract,
        manifest: &Manifest,
        now: Timestamp,
        source: Option<&str>,
        options: &DeliverOptions,
    ) -> Result<Decision, StoreError> {
        check_table_name(contract.table())?;
        let job = Job {
            file: file.as_ref().to_path_buf(),
            contract: contract.clone(),
            manifest: manifest.clone(),
            now,
            source: source.map(str::to_owned),
            options: options.clone(),
        };
        job.format()?;
        self.stage += 1;
        let mut staged = None;
        let txn = Txn::begin(&self.conn, TransactionBehavior::Deferred)?;
        let verdict = decide_in(&self.conn, &job, &mut staged)?;
        txn.commit()?;
        Ok(Decision {
            handle: self.handle,
            stage: self.stage,
            job,
            verdict,
            staged,
        })
    }

    /// Phase two: in one `BEGIN IMMEDIATE` transaction, re-reads the stored chain head; if it
    /// is no longer the decision's `base_publication_id`, the decision is stale and is made
    /// again from the replay lookup on, under the lock, never rebased (RECV-10). Then, for an
    /// acceptance, executes the plan from the staged rows on the published table and saves
    /// `ledger.follow(receipt)` and the receipt (RECV-07, RECV-09); for a rejection, saves the
    /// receipt alone (RECV-08); a replay commits nothing (RECV-02). Every receipt is kept, the
    /// accepted ones numbered in publication order (RECV-11).
    pub fn commit(&mut self, decision: Decision) -> Result<Delivery, StoreError> {
        if decision.handle != self.handle || decision.stage != self.stage {
            return Err(StoreError::ForeignDecision);
        }
        let Decision {
            job,
            mut verdict,
            mut staged,
            ..
        } = decision;
        let report = |staged: &Option<Staged>| staged.as_ref().map(|s| s.report.clone());
        if let Verdict::Replay(receipt) = verdict {
            stage::clear(&self.conn)?;
            return Ok(Delivery {
                receipt,
                redecided: 0,
                report: report(&staged),
            });
        }
        let table = job.contract.table().to_owned();
        let txn = Txn::begin(&self.conn, TransactionBehavior::Immediate)?;
        let head = stored_head(&self.conn, &table)?;
        let mut redecided = 0;
        let base = match &verdict {
            Verdict::Decided { receipt, .. } => receipt.base_publication_id().map(str::to_owned),
            Verdict::Replay(_) => unreachable!("answered above"),
        };
        if head != base {
            // rule: RECV-10 — stale: decided again under the lock, from step 1
            verdict = decide_in(&self.conn, &job, &mut staged)?;
            redecided += 1;
        }
        let receipt = match verdict {
            Verdict::Replay(receipt) => {
                drop(txn);
                stage::clear(&self.conn)?;
                return Ok(Delivery {
                    receipt,
                    redecided,
                    report: report(&staged),
                });
            }
            Verdict::Decided {
                receipt,
                ledger,
                table: plan,
            } => {
                if receipt.outcome() == Outcome::Accepted {
                    let staged = staged
                        .as_ref()
                        .ok_or_else(|| StoreError::Corrupt("an acceptance without rows".into()))?;
                    let next = ledger.follow(&receipt)?;
                    publish(&self.conn, &self.options, &job, staged, &receipt, &plan)?;
                    save_ledger(&self.conn, &table, &next)?;
                }
                save_receipt(&self.conn, &table, &receipt)?;
                receipt
            }
        };
        txn.commit()?;
        stage::clear(&self.conn)?;
        Ok(Delivery {
            receipt,
            redecided,
            report: report(&staged),
        })
    }

    /// Every receipt of `table`, in the order they were stored.
    pub fn receipts(&self, table: &str) -> Result<Vec<StoredReceipt>, StoreError> {
        receipts(&self.conn, table)
    }

    /// The stored ledger of `table` (None before its first acceptance).
    pub fn ledger(&self, table: &str) -> Result<Option<Ledger>, StoreError> {
        stored_ledger(&self.conn, table)
    }

    /// The tables with a stored ledger.
    pub fn tables(&self) -> Result<Vec<String>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT table_name FROM dogana_ledgers ORDER BY table_name")?;
        let names = stmt
            .query_map([], |r| r.get(0))?
            .collect::<Result<Vec<String>, _>>()?;
        Ok(names)
    }

    /// Rebuilds the ledger of `table` from its stored accepted receipts with
    /// `Ledger::from_receipts` and compares it with the stored one (RECV-12, RECOVERY-01); also
    /// checks the receipts' bookkeeping (identities, outcomes, publication order). Rows cannot
    /// be checked: a rebuilt ledger recovers no rows (RECOVERY-02).
    pub fn verify(&mut self, table: &str) -> Result<VerifyReport, StoreError> {
        let txn = Txn::begin(&self.conn, TransactionBehavior::Deferred)?;
        let report = verify(&self.conn, table)?;
        txn.commit()?;
        Ok(report)
    }

    /// Runs `read` with the ledger of `table` inside one read transaction, so that whatever it
    /// reads of the published rows is the state that ledger describes (RECV-13). A reader that
    /// reads rows and ledger in two transactions can straddle a commit.
    pub fn read_consistent<T>(
        &mut self,
        table: &str,
        read: impl FnOnce(&Connection, Option<&Ledger>) -> rusqlite::Result<T>,
    ) -> Result<T, StoreError> {
        let txn = Txn::begin(&self.conn, TransactionBehavior::Deferred)?;
        let ledger = stored_ledger(&self.conn, table)?;
        let value = read(&self.conn, ledger.as_ref())?;
        txn.commit()?;
        Ok(value)
    }

    /// Every published row of `table` with its ledger, read in one transaction (RECV-13).
    pub fn read_consistent_rows(&mut self, table: &str) -> Result<Snapshot, StoreError> {
        self.read_consistent(table, |conn, ledger| {
            let columns = published_columns(conn, table)?.unwrap_or_default();
            let mut rows = Vec::new();
            if !columns.is_empty() {
                let mut stmt = conn.prepare(&format!(
                    "SELECT {} FROM main.{} ORDER BY rowid",
                    ident_list(columns.iter().map(String::as_str), ""),
                    quote_ident(table)
                ))?;
                let mut q = stmt.query([])?;
                while let Some(r) = q.next()? {
                    rows.push(
                        (0..columns.len())
                            .map(|i| r.get::<_, SqlValue>(i))
                            .collect::<Result<Vec<_>, _>>()?,
                    );
                }
            }
            Ok(Snapshot {
                ledger: ledger.cloned(),
                columns,
                rows,
            })
        })
    }
}

/// The published table's columns, in order; None when it does not exist.
pub(crate) fn published_columns(
    conn: &Connection,
    table: &str,
) -> rusqlite::Result<Option<Vec<String>>> {
    let mut stmt = conn.prepare_cached("SELECT name FROM pragma_table_info(?1, 'main')")?;
    let cols = stmt
        .query_map([table], |r| r.get(0))?
        .collect::<Result<Vec<String>, _>>()?;
    Ok(if cols.is_empty() { None } else { Some(cols) })
}

fn stored_document(conn: &Connection, table: &str) -> rusqlite::Result<Option<String>> {
    conn.prepare_cached("SELECT document FROM dogana_ledgers WHERE table_name = ?1")?
        .query_row([table], |r| r.get(0))
        .optional()
}

fn stored_ledger(conn: &Connection, table: &str) -> Result<Option<Ledger>, StoreError> {
    match stored_document(conn, table)? {
        None => Ok(None),
        Some(doc) => Ok(Some(Ledger::from_json(&doc)?)),
    }
}

fn stored_head(conn: &Connection, table: &str) -> Result<Option<String>, StoreError> {
    Ok(stored_ledger(conn, table)?.and_then(|l| l.publication_id().map(str::to_owned)))
}

/// The ledger a decision is made against: the stored one, moved to the given contract when
/// it evolved (EVOL), or a new one.
fn load_ledger(conn: &Connection, contract: &Contract) -> Result<Ledger, StoreError> {
    let table = contract.table();
    let ledger = match stored_ledger(conn, table)? {
        Some(l) => l,
        None => {
            let accepted: i64 = conn
                .prepare_cached(
                    "SELECT count(*) FROM dogana_receipts WHERE table_name = ?1 AND outcome = 'accepted'",
                )?
                .query_row([table], |r| r.get(0))?;
            if accepted > 0 {
                return Err(StoreError::Corrupt(format!(
                    "table {table:?} has {accepted} accepted receipts and no stored ledger; rebuild it with Ledger::from_receipts (RECOVERY-01)"
                )));
            }
            // a table name that differs only in letter case names the same SQLite table
            let other: Option<String> = conn
                .prepare_cached(
                    "SELECT table_name FROM dogana_ledgers WHERE table_name = ?1 COLLATE NOCASE AND table_name <> ?1",
                )?
                .query_row([table], |r| r.get(0))
                .optional()?;
            if let Some(other) = other {
                return Err(StoreError::TableName(format!(
                    "{table:?} and the stored table {other:?} differ only in letter case, which SQLite identifiers ignore"
                )));
            }
            return Ok(Ledger::new(contract.clone()));
        }
    };
    if ledger.contract() == contract {
        return Ok(ledger);
    }
    ledger
        .with_contract(contract.clone())
        .map_err(StoreError::Contract)
}

fn accepted_receipt(
    conn: &Connection,
    table: &str,
    manifest_identity: &str,
) -> Result<Option<Receipt>, StoreError> {
    let doc: Option<String> = conn
        .prepare_cached(
            "SELECT document FROM dogana_receipts
             WHERE table_name = ?1 AND manifest_identity = ?2 AND outcome = 'accepted'
             ORDER BY accepted_order LIMIT 1",
        )?
        .query_row([table, manifest_identity], |r| r.get(0))
        .optional()?;
    match doc {
        None => Ok(None),
        Some(d) => Ok(Some(Receipt::from_json(&d)?)),
    }
}

/// Steps 1 to 3 of the receiver, inside a transaction the caller holds (read or write).
fn decide_in(
    conn: &Connection,
    job: &Job,
    staged: &mut Option<Staged>,
) -> Result<Verdict, StoreError> {
    let table = job.contract.table();
    let manifest = &job.manifest;
    // step 1 — rule: RECV-01, LOADER-01
    if let Some(original) = accepted_receipt(conn, table, &manifest.identity())? {
        let replay = || -> Result<Verdict, StoreError> {
            // rule: RECV-02 — the original receipt, answered as replayed; no row is read
            Ok(Verdict::Replay(original.as_replay()?))
        };
        let Some(declared) = manifest.content_hash() else {
            return replay();
        };
        let actual = match staged {
            Some(s) => s.report.content_sha256.clone(),
            None => sha256_file(&job.file)?,
        };
        if actual == declared {
            return replay();
        }
        // rule: RECV-03 — a repeated manifest over other bytes is refused
        let ledger = load_ledger(conn, &job.contract)?;
        let check = Check::fail(
            "content_hash",
            format!(
                "the bytes hash to {actual}, not to the declared {declared}; this manifest was accepted before (receipt {}), and a repeated manifest over other bytes is refused (RECV-03)",
                original.identity()
            ),
        );
        let receipt = Gate::reject(&ledger, manifest, &[check], job.now, job.source());
        return Ok(Verdict::Decided {
            receipt,
            ledger,
            table: TablePlan::Keep,
        });
    }
    // step 2 — rule: RECV-05, LOADER-02
    let ledger = load_ledger(conn, &job.contract)?;
    let core = Gate::preflight(&ledger, manifest, job.now);
    if core.iter().any(|c| !c.passed()) {
        let receipt = Gate::reject(&ledger, manifest, &[], job.now, job.source());
        return Ok(Verdict::Decided {
            receipt,
            ledger,
            table: TablePlan::Keep,
        });
    }
    // step 3 — rule: RECV-06, LOADER-03
    if staged.is_none() {
        *staged = Some(stage::stage(conn, job)?);
    }
    let s = staged.as_ref().expect("staged above");
    let published = published_columns(conn, table)?;
    let (columns, plan) = columns_check(job, s, published.as_deref());
    let elsewhere = keys_elsewhere(conn, job, s, published.is_some())?;
    let mut outcomes = s.report.checks.clone();
    outcomes.push(s.values.clone());
    outcomes.push(columns);
    outcomes.push(elsewhere);
    // rule: LOADER-04
    let receipt = Gate::evaluate(&ledger, manifest, &outcomes, job.now, job.source(), &[]);
    Ok(Verdict::Decided {
        receipt,
        ledger,
        table: plan,
    })
}

/// The published column types: the contract's for bound columns, the receiver's for the
/// others, TEXT by default.
fn column_sql_type(job: &Job, column: &str) -> &'static str {
    match job.contract.types().get(column) {
        Some(t) => sql_type(t.name()),
        None => job
            .options
            .column_types
            .get(column)
            .map_or("TEXT", |t| sql_type(t)),
    }
}

/// The receiver's `columns` check: the file's columns fit the published table, or the
/// delivery replaces the table whole (RECOVERY-04).
fn columns_check(job: &Job, staged: &Staged, published: Option<&[String]>) -> (Check, TablePlan) {
    let fail = |d: String| (Check::fail("columns", d), TablePlan::Keep);
    let mut folded: BTreeMap<String, &str> = BTreeMap::new();
    for c in &staged.loaded {
        if c.contains('\0') {
            return fail(format!(
                "column {c:?} contains a NUL character, which no SQLite identifier can"
            ));
        }
        if let Some(prev) = folded.insert(c.to_ascii_lowercase(), c) {
            if prev != c {
                return fail(format!(
                    "columns {prev:?} and {c:?} differ only in letter case, which SQLite identifiers ignore"
                ));
            }
        }
    }
    let mut wanted: Vec<String> = staged.loaded.clone();
    for b in bound_published(&job.contract) {
        if !wanted.contains(&b) {
            wanted.push(b);
        }
    }
    let typed: Vec<(String, &'static str)> = wanted
        .iter()
        .map(|c| (c.clone(), column_sql_type(job, c)))
        .collect();
    let names = |v: &[String]| {
        v.iter()
            .map(|c| format!("{c:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(published) = published else {
        return (
            Check::pass(
                "columns",
                format!("the table is created with columns {}", names(&wanted)),
            ),
            TablePlan::Create(typed),
        );
    };
    let have: BTreeSet<&str> = published.iter().map(String::as_str).collect();
    let want: BTreeSet<&str> = wanted.iter().map(String::as_str).collect();
    if is_replace_all(&job.contract, &job.manifest) {
        return if have == want {
            (
                Check::pass("columns", "the file's columns are the published table's"),
                TablePlan::Keep,
            )
        } else {
            (
                Check::pass(
                    "columns",
                    format!(
                        "a complete whole-table delivery publishes columns {} in place of {} (RECOVERY-04)",
                        names(&wanted),
                        names(published)
                    ),
                ),
                TablePlan::Recreate(typed),
            )
        };
    }
    let extra: Vec<String> = staged
        .loaded
        .iter()
        .filter(|c| !have.contains(c.as_str()))
        .cloned()
        .collect();
    if !extra.is_empty() {
        return fail(format!(
            "the published table has no column {}; a changed row schema needs a complete whole-table delivery (RECOVERY-04)",
            names(&extra)
        ));
    }
    // NDJSON names only the keys its rows carry, and a missing key is null; CSV and Parquet
    // name every column
    let lacking: Vec<String> = published
        .iter()
        .filter(|c| !staged.loaded.contains(c))
        .cloned()
        .collect();
    let ndjson = matches!(job.format(), Ok(Format::Ndjson));
    if !lacking.is_empty() && !ndjson && staged.report.records > 0 {
        return fail(format!(
            "the file lacks the published column {}; a changed row schema needs a complete whole-table delivery (RECOVERY-04)",
            names(&lacking)
        ));
    }
    (
        Check::pass(
            "columns",
            "the file's columns are among the published table's",
        ),
        TablePlan::Keep,
    )
}

/// The receiver's CHECK-16: a window delivery carries no key (live or tombstoned) already
/// published outside its window, in any region, known or unknown (PLAN-12 decided: every
/// published row counts). Named `keys_elsewhere`.
fn keys_elsewhere(
    conn: &Connection,
    job: &Job,
    staged: &Staged,
    table_exists: bool,
) -> Result<Check, StoreError> {
    let name = "keys_elsewhere";
    let contract = &job.contract;
    let (Some(window), Some(wcol)) = (job.manifest.window(), contract.window_column()) else {
        return Ok(Check::pass(
            name,
            "not applicable: a whole-table delivery may move keys between regions",
        ));
    };
    if contract.is_keyless() {
        return Ok(Check::pass(
            name,
            "not applicable: a keyless table's rows have no identity",
        ));
    }
    if !table_exists {
        return Ok(Check::pass(name, "no row is published yet"));
    }
    let key = contract.key();
    let staged_keys: Option<Vec<usize>> = key.iter().map(|k| staged.column_of(k)).collect();
    let Some(staged_keys) = staged_keys else {
        return Ok(Check::pass(
            name,
            "not applicable: the file has no key column (see the keys check)",
        ));
    };
    let t = quote_ident(contract.table());
    let w = quote_ident(wcol);
    let on_rows: Vec<String> = key
        .iter()
        .zip(&staged_keys)
        .map(|(k, i)| format!("p.{} = s.c{i}", quote_ident(k)))
        .collect();
    let on_tombs: Vec<String> = key
        .iter()
        .enumerate()
        .map(|(i, k)| format!("p.{} = s.k{i}", quote_ident(k)))
        .collect();
    let pk = ident_list(key.iter().map(String::as_str), "p.");
    let outside = format!("(p.{w} IS NULL OR p.{w} < ?1 OR p.{w} > ?2)");
    let hits = format!(
        "SELECT {pk}, p.{w} FROM {ROWS} s JOIN main.{t} p ON {} WHERE {outside}
         UNION ALL
         SELECT {pk}, p.{w} FROM {TOMBSTONES} s JOIN main.{t} p ON {} WHERE {outside}",
        on_rows.join(" AND "),
        on_tombs.join(" AND ")
    );
    let (lo, hi) = (value_sql(&window.low), value_sql(&window.high));
    let count: i64 = conn.query_row(
        &format!("SELECT count(*) FROM ({hits})"),
        params![lo, hi],
        |r| r.get(0),
    )?;
    if count == 0 {
        return Ok(Check::pass(
            name,
            format!("no key of the read is published outside {window}"),
        ));
    }
    let mut stmt = conn.prepare(&format!("{hits} LIMIT 1"))?;
    let first: Vec<SqlValue> = stmt.query_row(params![lo, hi], |r| {
        (0..=key.len()).map(|i| r.get(i)).collect()
    })?;
    let keys: Vec<String> = key
        .iter()
        .zip(&first)
        .map(|(k, v)| format!("{k}={}", show_sql(v)))
        .collect();
    let more = if count > 1 {
        format!(" (and {} more keys)", count - 1)
    } else {
        String::new()
    };
    Ok(Check::fail(
        name,
        format!(
            "key {} is already published with {wcol} {}, outside {window}: a window delivery cannot move a key out of the region that keeps its claim (CHECK-16){more}",
            keys.join(", "),
            show_sql(&first[key.len()])
        ),
    ))
}

/// Creates the published table: a rowid table (rows in arrival order), key columns NOT NULL;
/// its indexes come from [`indexes`].
fn create_table(
    conn: &Connection,
    contract: &Contract,
    columns: &[(String, &'static str)],
) -> rusqlite::Result<()> {
    let key = contract.key();
    let defs: Vec<String> = columns
        .iter()
        .map(|(c, ty)| {
            if key.contains(c) {
                format!("{} {ty} NOT NULL", quote_ident(c))
            } else {
                format!("{} {ty}", quote_ident(c))
            }
        })
        .collect();
    conn.execute_batch(&format!(
        "CREATE TABLE main.{} ({})",
        quote_ident(contract.table()),
        defs.join(", ")
    ))
}

/// The published table's indexes, as (name, DDL): a UNIQUE index on the key, which upserts,
/// tombstones and the keys_elsewhere check use, and an index on the window column, which
/// replace_window uses (unless [`StoreOptions::window_index`] is off).
fn indexes(options: &StoreOptions, contract: &Contract) -> Vec<(String, String)> {
    let table = contract.table();
    let mut v = Vec::new();
    let key = contract.key();
    if !key.is_empty() {
        let name = quote_ident(&format!("dogana_key__{table}"));
        v.push((
            name.clone(),
            format!(
                "CREATE UNIQUE INDEX IF NOT EXISTS main.{name} ON {} ({})",
                quote_ident(table),
                ident_list(key.iter().map(String::as_str), "")
            ),
        ));
    }
    if let (Some(w), true) = (contract.window_column(), options.window_index) {
        if key.first().map(String::as_str) != Some(w) {
            let name = window_index_name(table);
            v.push((
                name.clone(),
                format!(
                    "CREATE INDEX IF NOT EXISTS main.{name} ON {} ({})",
                    quote_ident(table),
                    quote_ident(w)
                ),
            ));
        }
    }
    v
}

/// Executes the plan from the staged rows (PLAN-03 to PLAN-08, LOADER-07). The deleted column
/// was never staged, so it is never published (PLAN-14).
///
/// A complete whole-table delivery drops the indexes, inserts the rows in arrival order and
/// builds each index with one sort, which is several times faster for a large read than
/// keeping them up to date row by row, or than sorting whole rows into a rowid key.
fn publish(
    conn: &Connection,
    options: &StoreOptions,
    job: &Job,
    staged: &Staged,
    receipt: &Receipt,
    plan: &TablePlan,
) -> Result<(), StoreError> {
    let contract = &job.contract;
    let t = quote_ident(contract.table());
    let actions: &[Action] = receipt
        .transition()
        .map(|tr| tr.plan().actions())
        .unwrap_or_default();
    match plan {
        TablePlan::Keep => {}
        TablePlan::Create(cols) => create_table(conn, contract, cols)?,
        TablePlan::Recreate(cols) => {
            conn.execute_batch(&format!("DROP TABLE main.{t}"))?;
            create_table(conn, contract, cols)?;
        }
    }
    let indexes = indexes(options, contract);
    if actions.iter().any(|a| a.kind() == ActionKind::ReplaceAll) {
        for (name, _) in &indexes {
            conn.execute_batch(&format!("DROP INDEX IF EXISTS main.{name}"))?;
        }
    }
    let cols: Vec<String> = (0..staged.loaded.len()).map(|i| format!("c{i}")).collect();
    let insert = if cols.is_empty() {
        None
    } else {
        Some(format!(
            "INSERT INTO main.{t} ({}) SELECT {} FROM {ROWS}",
            ident_list(staged.loaded.iter().map(String::as_str), ""),
            cols.join(", ")
        ))
    };
    let insert = |conn: &Connection| -> rusqlite::Result<()> {
        if let Some(sql) = &insert {
            conn.execute(sql, [])?;
        }
        Ok(())
    };
    // delete the published rows whose key a staged table names
    let delete_keys = |conn: &Connection, action: &Action, from: &str| -> rusqlite::Result<()> {
        let key = action.key();
        if key.is_empty() {
            return Ok(()); // rule: PLAN-08 — keyless: no key matching
        }
        let published: Vec<String> = key.iter().map(|k| quote_ident(k)).collect();
        let source: Option<Vec<String>> = if from == TOMBSTONES {
            Some((0..key.len()).map(|i| format!("k{i}")).collect())
        } else {
            key.iter()
                .map(|k| staged.column_of(k).map(|i| format!("c{i}")))
                .collect()
        };
        let Some(source) = source else {
            return Ok(()); // no key column staged: no row to match
        };
        conn.execute(
            &format!(
                "DELETE FROM main.{t} WHERE {} IN (SELECT {} FROM {from})",
                row_value(&published),
                source.join(", ")
            ),
            [],
        )?;
        Ok(())
    };
    for action in actions {
        match action.kind() {
            // rule: PLAN-03
            ActionKind::ReplaceAll => {
                if plan == &TablePlan::Keep {
                    conn.execute(&format!("DELETE FROM main.{t}"), [])?;
                }
                insert(conn)?;
            }
            // rule: PLAN-04, PLAN-08
            ActionKind::ReplaceWindow => {
                let window = action.window().ok_or_else(|| {
                    StoreError::Corrupt("a replace_window action without a window".into())
                })?;
                let wcol = contract.window_column().ok_or_else(|| {
                    StoreError::Corrupt("a replace_window action without a window column".into())
                })?;
                conn.execute(
                    &format!(
                        "DELETE FROM main.{t} WHERE {w} >= ?1 AND {w} <= ?2",
                        w = quote_ident(wcol)
                    ),
                    params![value_sql(&window.low), value_sql(&window.high)],
                )?;
                delete_keys(conn, action, ROWS)?;
                insert(conn)?;
            }
            // rule: PLAN-05
            ActionKind::Upsert => {
                delete_keys(conn, action, ROWS)?;
                insert(conn)?;
            }
            // rule: PLAN-06
            ActionKind::Tombstone => delete_keys(conn, action, TOMBSTONES)?,
            // rule: PLAN-07
            ActionKind::Append => insert(conn)?,
        }
    }
    // after a bulk load this builds each index in one sort; otherwise they are there already
    // (or the table was created outside the store)
    for (_, ddl) in &indexes {
        conn.execute_batch(ddl)?;
    }
    Ok(())
}

fn save_ledger(conn: &Connection, table: &str, ledger: &Ledger) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO dogana_ledgers (table_name, document) VALUES (?1, ?2)
         ON CONFLICT (table_name) DO UPDATE SET document = excluded.document",
    )?
    .execute(params![table, ledger.to_json()])?;
    Ok(())
}

fn save_receipt(conn: &Connection, table: &str, receipt: &Receipt) -> rusqlite::Result<()> {
    let accepted = receipt.outcome() == Outcome::Accepted;
    conn.prepare_cached(
        "INSERT INTO dogana_receipts
         (table_name, seq, identity, manifest_identity, outcome, accepted_order, document)
         VALUES (?1,
                 (SELECT coalesce(max(seq), 0) + 1 FROM dogana_receipts WHERE table_name = ?1),
                 ?2, ?3, ?4,
                 CASE WHEN ?5 THEN (SELECT coalesce(max(accepted_order), 0) + 1
                                    FROM dogana_receipts WHERE table_name = ?1) END,
                 ?6)",
    )?
    .execute(params![
        table,
        receipt.identity(),
        receipt.manifest().identity(),
        receipt.outcome().name(),
        accepted,
        receipt.to_json()
    ])?;
    Ok(())
}

struct Row {
    seq: i64,
    identity: String,
    manifest_identity: String,
    outcome: String,
    accepted_order: Option<i64>,
    document: String,
}

fn receipt_rows(conn: &Connection, table: &str) -> rusqlite::Result<Vec<Row>> {
    let mut stmt = conn.prepare_cached(
        "SELECT seq, identity, manifest_identity, outcome, accepted_order, document
         FROM dogana_receipts WHERE table_name = ?1 ORDER BY seq",
    )?;
    let rows = stmt
        .query_map([table], |r| {
            Ok(Row {
                seq: r.get(0)?,
                identity: r.get(1)?,
                manifest_identity: r.get(2)?,
                outcome: r.get(3)?,
                accepted_order: r.get(4)?,
                document: r.get(5)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

fn receipts(conn: &Connection, table: &str) -> Result<Vec<StoredReceipt>, StoreError> {
    receipt_rows(conn, table)?
        .into_iter()
        .map(|r| {
            Ok(StoredReceipt {
                seq: r.seq,
                accepted_order: r.accepted_order,
                receipt: Receipt::from_json(&r.document)?,
            })
        })
        .collect()
}

fn verify(conn: &Connection, table: &str) -> Result<VerifyReport, StoreError> {
    let mut problems = Vec::new();
    let rows = receipt_rows(conn, table)?;
    let mut accepted: Vec<Receipt> = Vec::new();
    let mut next_order = 1;
    for row in &rows {
        let receipt = match Receipt::from_json(&row.document) {
            Ok(r) => r,
            Err(e) => {
                problems.push(format!("receipt {} does not read back: {e}", row.seq));
                continue;
            }
        };
        if receipt.identity() != row.identity {
            problems.push(format!(
                "receipt {}: its identity column differs from its document",
                row.seq
            ));
        }
        if receipt.manifest().identity() != row.manifest_identity {
            problems.push(format!(
                "receipt {}: its manifest_identity column differs from its document",
                row.seq
            ));
        }
        if receipt.outcome().name() != row.outcome {
            problems.push(format!(
                "receipt {}: its outcome column differs from its document",
                row.seq
            ));
        }
        if receipt.table() != table {
            problems.push(format!(
                "receipt {} is filed under {table:?} but is of table {:?}",
                row.seq,
                receipt.table()
            ));
        }
        if receipt.outcome() == Outcome::Accepted {
            if row.accepted_order != Some(next_order) {
                problems.push(format!(
                    "receipt {}: accepted_order {:?} where {next_order} follows (RECV-11)",
                    row.seq, row.accepted_order
                ));
            }
            next_order += 1;
            accepted.push(receipt);
        } else if row.accepted_order.is_some() {
            problems.push(format!(
                "receipt {}: a rejection with an accepted_order",
                row.seq
            ));
        }
    }
    let stored = match stored_document(conn, table)? {
        None => None,
        Some(doc) => match Ledger::from_json(&doc) {
            Ok(l) => Some(l),
            Err(e) => {
                problems.push(format!("the stored ledger does not read back: {e}"));
                None
            }
        },
    };
    let contract = stored
        .as_ref()
        .map(|l| l.contract().clone())
        .or_else(|| accepted.last().map(|r| r.contract().clone()));
    let rebuilt = match &contract {
        None => None,
        Some(c) => match Ledger::from_receipts(c.clone(), &accepted) {
            Ok(l) => Some(l),
            Err(e) => {
                problems.push(format!(
                    "the accepted receipts do not fold into a ledger (RECV-20): {e}"
                ));
                None
            }
        },
    };
    match (&stored, &rebuilt) {
        (None, Some(_)) if !accepted.is_empty() => problems.push(format!(
            "{} accepted receipts and no stored ledger",
            accepted.len()
        )),
        (Some(s), Some(r)) if s != r || s.to_json() != r.to_json() => problems.push(format!(
            "the stored ledger {} differs from the fold of the accepted receipts {} (RECV-12)",
            s.identity(),
            r.identity()
        )),
        _ => {}
    }
    if !accepted.is_empty() && published_columns(conn, table)?.is_none() {
        problems.push(format!(
            "{} accepted receipts and no published table {table:?}",
            accepted.len()
        ));
    }
    Ok(VerifyReport {
        table: table.to_owned(),
        receipts: rows.len(),
        accepted: accepted.len(),
        stored: stored.as_ref().map(Wire::identity),
        rebuilt: rebuilt.as_ref().map(Wire::identity),
        problems,
    })
}
