//! The DuckDB backend behind the engine's port.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use dogana::{
    Date, FromWire, Ledger, LedgerRows, LogicalType, Outcome, Receipt, Timestamp, Value, Wire,
};
use dogana_receiver::sql::{ident_list, keys_outside_query, quote_ident, whole_staged_rows};
use dogana_receiver::{
    Backend, Batch, Column, Datum, KeysFrom, KeysOutside, Layout, Open, ReceiptRow, Step,
    StoreError, Txn,
};
use duckdb::types::{TimeUnit, Value as DValue};
use duckdb::{params_from_iter, AccessMode, Config, Connection};

use crate::columns::Columns;
use crate::stream::{Batches, Registered, FUNCTION};

/// The TEMP tables staging a delivery to `table`, unquoted (for the appender): its live rows
/// and its tombstones' keys.
fn staging_names(table: &str) -> (String, String) {
    (
        format!("dogana_stage_rows__{table}"),
        format!("dogana_stage_tombstones__{table}"),
    )
}

/// The same, as SQL names.
fn staging(table: &str) -> (String, String) {
    let (r, t) = staging_names(table);
    (
        format!("temp.main.{}", quote_ident(&r)),
        format!("temp.main.{}", quote_ident(&t)),
    )
}

/// The columns of a delivery's TEMP staging tables: its rows' (`c0…`) and its tombstones'
/// keys (`k0…`), in their staging types.
fn staging_columns(layout: &Layout) -> (String, String) {
    let list = |v: Vec<String>, none: &str| {
        if v.is_empty() {
            format!("{none} VARCHAR")
        } else {
            v.join(", ")
        }
    };
    let rows = layout
        .types
        .iter()
        .enumerate()
        .map(|(i, t)| format!("c{i} {}", staging_type(t.as_deref())))
        .collect();
    let keys = layout
        .key
        .iter()
        .enumerate()
        .map(|(i, (_, t))| format!("k{i} {}", staging_type(t.as_deref())))
        .collect();
    (list(rows, "c_none"), list(keys, "k_none"))
}

/// The name of every table a whole-table delivery is staged in, in the main database: the
/// prefix, the table, then the process and a number of its own (one per staging).
const WHOLE_PREFIX: &str = "dogana_whole__";

static WHOLE_SEQ: AtomicU64 = AtomicU64::new(1);

/// A delivery to a table staged whole: its rows in a new table of the published columns,
/// named for it, which the commit renames in place of the published table.
#[derive(Debug, Clone)]
struct Whole {
    /// The staging table's name in `main`, unquoted.
    name: String,
    /// Its columns, as the published table has them.
    columns: Vec<Column>,
}

/// The store's own tables, index and views, one statement each (DuckDB runs several
/// statements of one call outside one transaction).
///
/// A ledger is kept region by region (`dogana_ledger_regions`, ordered by
/// [`dogana::LedgerRows`]' order-preserving keys as BLOBs, which DuckDB compares bytewise, and
/// keyed by one column, the table's name, a NUL and that key: see [`region_key`]) with
/// its head, tail, publication id and identity in `dogana_ledger_heads`, so a delivery writes
/// the regions it changed, not the whole document (issue 16). The view
/// `dogana_ledgers(table_name, document)` gives the document as the reference's loader keeps
/// it (LOADER-10), and `dogana_regions` one row per region, with the columns and values of the
/// reference's view over the document (LOADER-11).
const SCHEMA: [&str; 6] = [
    "CREATE TABLE IF NOT EXISTS dogana_ledger_heads (
        table_name     VARCHAR PRIMARY KEY,
        identity       VARCHAR NOT NULL,
        publication_id VARCHAR,
        head           VARCHAR NOT NULL,
        tail           VARCHAR NOT NULL
    )",
    "CREATE TABLE IF NOT EXISTS dogana_ledger_regions (
        region_key BLOB PRIMARY KEY,
        table_name VARCHAR NOT NULL,
        low        BLOB NOT NULL,
        region     VARCHAR NOT NULL
    )",
    "CREATE TABLE IF NOT EXISTS dogana_receipts (
        table_name        VARCHAR NOT NULL,
        seq               BIGINT NOT NULL,
        identity          VARCHAR NOT NULL,
        manifest_identity VARCHAR NOT NULL,
        outcome           VARCHAR NOT NULL CHECK (outcome IN ('accepted', 'rejected')),
        accepted_order    BIGINT CHECK ((outcome = 'accepted') = (accepted_order IS NOT NULL)),
        document          VARCHAR NOT NULL
    )",
    "CREATE INDEX IF NOT EXISTS dogana_receipts_by_manifest
        ON dogana_receipts (table_name, manifest_identity)",
    // the document, byte for byte: LedgerRows::document's spelling, regions in key order
    "CREATE OR REPLACE VIEW dogana_ledgers AS
SELECT h.table_name,
       h.head || coalesce((SELECT string_agg(r.region, ',' ORDER BY r.low)
                           FROM dogana_ledger_regions r
                           WHERE r.table_name = h.table_name), '')
              || h.tail AS document
FROM dogana_ledger_heads h",
    // the reference's view ("Ledger JSON"): its columns, types and values, over the rows
    "CREATE OR REPLACE VIEW dogana_regions AS
select r.table_name,
       h.publication_id,
       (row_number() over (partition by r.table_name order by r.low) - 1)::integer as region_index,
       json_extract(r.region, '$.low') as low,
       json_extract(r.region, '$.high') as high,
       json_extract(r.region, '$.low_open')::boolean as low_open,
       json_extract(r.region, '$.high_open')::boolean as high_open,
       json_extract_string(r.region, '$.complete_as_of.\"$datetime\"')::timestamptz as complete_as_of,
       json_extract_string(r.region, '$.deletions_as_of.\"$datetime\"')::timestamptz as deletions_as_of
from dogana_ledger_regions r join dogana_ledger_heads h on h.table_name = r.table_name",
];

/// How the DuckDB backend waits.
#[derive(Debug, Clone)]
pub struct DuckDbOptions {
    lock_timeout: Duration,
}

impl Default for DuckDbOptions {
    fn default() -> Self {
        DuckDbOptions {
            lock_timeout: Duration::from_secs(60),
        }
    }
}

impl DuckDbOptions {
    /// The defaults: wait up to 60 s for another writer.
    pub fn new() -> DuckDbOptions {
        DuckDbOptions::default()
    }

    /// How long to wait for another process's file lock, or another handle's write lock in
    /// this process, before refusing with [`StoreError::Locked`].
    pub fn lock_timeout(mut self, timeout: Duration) -> DuckDbOptions {
        self.lock_timeout = timeout;
        self
    }
}

/// The one database instance this process keeps for a file, shared by every handle on it.
struct Instance {
    path: PathBuf,
    root: Mutex<Connection>,
    writable: bool,
    /// Whether a handle holds the write lock.
    writing: Mutex<bool>,
    freed: Condvar,
}

fn instances() -> &'static Mutex<HashMap<PathBuf, Weak<Instance>>> {
    static MAP: OnceLock<Mutex<HashMap<PathBuf, Weak<Instance>>>> = OnceLock::new();
    MAP.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The dogana backend on one DuckDB database file. Use it through
/// [`Store`](crate::Store), the engine over it.
pub struct DuckDb {
    conn: Connection,
    instance: Arc<Instance>,
    options: DuckDbOptions,
    holding: bool,
    /// The tables this handle stages whole deliveries in, by published table.
    whole: HashMap<String, Whole>,
    /// Whether the store keeps its ledgers region by region (every store opened for writing
    /// is converted to it); else they are read as the documents of the earlier layout.
    rows: bool,
    /// The TEMP staging tables this handle's connection keeps, by published table.
    kept: HashMap<String, Kept>,
}

/// A TEMP staging pair kept for the next delivery to the same table with the same layout:
/// made once, then emptied, so that a small delivery leaves the catalog alone. Any change to
/// it (a TEMP table made or dropped) makes DuckDB bind every prepared statement again at its
/// next use, which was an eighth of a small delivery's time (bench/duckdb.md).
#[derive(Debug)]
struct Kept {
    /// The columns they were made with, rows then tombstones, as in their CREATE.
    columns: (String, String),
    /// Rows (live and tombstones) staged since they were last emptied.
    staged: u64,
    /// Rows deleted from them since they were made: DuckDB keeps a deleted row's space in
    /// a TEMP table until the table is dropped.
    dead: u64,
}

/// Kept staging tables holding this many deleted and staged rows are dropped, not emptied
/// (made again by the next delivery): the catalog change costs little beside such a staging.
const DROP_KEPT_FROM: u64 = 4096;

impl std::fmt::Debug for DuckDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DuckDb({})", self.instance.path.display())
    }
}

fn duck(e: duckdb::Error) -> StoreError {
    StoreError::backend("duckdb", e)
}

trait Duck<T> {
    fn duck(self) -> Result<T, StoreError>;
}

impl<T> Duck<T> for duckdb::Result<T> {
    fn duck(self) -> Result<T, StoreError> {
        self.map_err(duck)
    }
}

/// The DuckDB column type a declared type name is published as.
///
/// ```
/// assert_eq!(dogana_duckdb::duckdb_type(Some("datetime")), "TIMESTAMPTZ");
/// assert_eq!(dogana_duckdb::duckdb_type(Some("decimal(12,2)")), "DECIMAL(12,2)");
/// assert_eq!(dogana_duckdb::duckdb_type(None), "VARCHAR");
/// ```
pub fn duckdb_type(type_name: Option<&str>) -> String {
    let Some(name) = type_name else {
        return "VARCHAR".into();
    };
    match LogicalType::from_name(name) {
        Some(LogicalType::Int) => "BIGINT".into(),
        Some(LogicalType::Float) => "DOUBLE".into(),
        Some(LogicalType::Bool) => "BOOLEAN".into(),
        Some(LogicalType::Date) => "DATE".into(),
        Some(LogicalType::Datetime) => "TIMESTAMPTZ".into(),
        Some(LogicalType::Str) => "VARCHAR".into(),
        None => match decimal(name) {
            Some((p, s)) => format!("DECIMAL({p},{s})"),
            None => "VARCHAR".into(),
        },
    }
}

/// `decimal(p,s)` with 1 ≤ p ≤ 38 and 0 ≤ s ≤ p.
fn decimal(name: &str) -> Option<(u32, u32)> {
    let inner = name.trim().strip_prefix("decimal(")?.strip_suffix(')')?;
    let (p, s) = inner.split_once(',')?;
    let (p, s): (u32, u32) = (p.trim().parse().ok()?, s.trim().parse().ok()?);
    ((1..=38).contains(&p) && s <= p).then_some((p, s))
}

/// The staging column type: the logical types typed, everything else text (the rows reader
/// does not parse it; the published column's type converts it on insert).
fn staging_type(type_name: Option<&str>) -> &'static str {
    match type_name.and_then(LogicalType::from_name) {
        Some(LogicalType::Int) => "BIGINT",
        Some(LogicalType::Float) => "DOUBLE",
        Some(LogicalType::Bool) => "BOOLEAN",
        Some(LogicalType::Date) => "DATE",
        Some(LogicalType::Datetime) => "TIMESTAMPTZ",
        _ => "VARCHAR",
    }
}

/// DuckDB's catalog error for a table that does not exist.
fn is_no_such_table(e: &duckdb::Error) -> bool {
    let m = e.to_string();
    m.starts_with("Catalog Error: Table with name") && m.contains("does not exist")
}

fn is_lock_error(e: &duckdb::Error) -> bool {
    let m = e.to_string();
    m.contains("Could not set lock") || m.contains("Conflicting lock")
}

fn canonical(path: &Path) -> PathBuf {
    if let Ok(p) = path.canonicalize() {
        return p;
    }
    match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) => {
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            dir.canonicalize()
                .map(|d| d.join(name))
                .unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    }
}

impl Open for DuckDb {
    type Options = DuckDbOptions;

    /// Opens the file's one instance in this process (or joins it), waiting for another
    /// process's lock up to the options' timeout. For writing, creates the store's tables and
    /// view; for reading, changes nothing and refuses a file that is not a dogana store.
    fn open(path: &Path, options: &DuckDbOptions, write: bool) -> Result<DuckDb, StoreError> {
        let shown = path.display().to_string();
        let exists = path.exists();
        if exists && path.is_dir() {
            return Err(StoreError::NotAStore(format!(
                "{shown} is a directory; name the DuckDB database file"
            )));
        }
        if !exists && !write {
            return Err(StoreError::NotAStore(format!("{shown} does not exist")));
        }
        let key = canonical(path);
        let mut fresh = false;
        let instance = {
            let mut map = instances()
                .lock()
                .map_err(|_| StoreError::Corrupt("the instance map was poisoned".into()))?;
            match map.get(&key).and_then(Weak::upgrade) {
                Some(i) if write && !i.writable => {
                    return Err(StoreError::backend(
                        "duckdb",
                        format!("{shown} is open for reading only in this process"),
                    ))
                }
                Some(i) => i,
                None => {
                    let root = connect(path, write, options)?;
                    if write {
                        // the whole-table staging's source (src/stream.rs), in this
                        // instance's catalog of functions
                        root.register_table_function::<Batches>(FUNCTION).duck()?;
                    }
                    fresh = true;
                    let i = Arc::new(Instance {
                        path: key.clone(),
                        root: Mutex::new(root),
                        writable: write,
                        writing: Mutex::new(false),
                        freed: Condvar::new(),
                    });
                    map.insert(key, Arc::downgrade(&i));
                    i
                }
            }
        };
        let conn = instance
            .root
            .lock()
            .map_err(|_| StoreError::Corrupt("a DuckDB instance was poisoned".into()))?
            .try_clone()
            .duck()?;
        // ICU's time zone, when the library has it: datetimes are instants in UTC
        let _ = conn.execute("SET TimeZone = 'UTC'", []);
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        let mut db = DuckDb {
            conn,
            instance,
            options: options.clone(),
            holding: false,
            whole: HashMap::new(),
            rows: false,
            kept: HashMap::new(),
        };
        if write {
            db.create_schema()?;
            if fresh {
                db.drop_leftovers()?;
            }
        } else {
            db.check_store(&shown)?;
        }
        Ok(db)
    }
}

/// Opens the file, retrying while another process holds DuckDB's lock.
fn connect(path: &Path, write: bool, options: &DuckDbOptions) -> Result<Connection, StoreError> {
    let started = Instant::now();
    let mode = if write {
        AccessMode::ReadWrite
    } else {
        AccessMode::ReadOnly
    };
    loop {
        let config = Config::default().access_mode(mode.clone()).duck()?;
        let opened = {
            let _creating = CreationLock::take(path, started, options)?;
            Connection::open_with_flags(path, config)
        };
        match opened {
            Ok(c) => return Ok(c),
            Err(e) if is_lock_error(&e) => {
                if started.elapsed() >= options.lock_timeout {
                    return Err(StoreError::Locked {
                        store: path.display().to_string(),
                        holder: format!("{e}; waited {:?}", options.lock_timeout),
                    });
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => {
                let m = e.to_string();
                if is_torn_block(&m) {
                    return Err(StoreError::Corrupt(format!(
                        "{}: {TORN_BLOCK} ({m})",
                        path.display()
                    )));
                }
                if m.contains("not a valid DuckDB database") || m.contains("Invalid Input Error") {
                    return Err(StoreError::NotAStore(format!(
                        "{} is not a DuckDB database: {m}",
                        path.display()
                    )));
                }
                return Err(duck(e));
            }
        }
    }
}

/// What the refusal of a store whose block DuckDB cannot read says (`lib.rs`, "A checkpoint
/// killed in its metadata write").
pub(crate) const TORN_BLOCK: &str = "DuckDB refuses the file, a block of it failing its \
    checksum. The likely cause: DuckDB rewrites its metadata block in place at each \
    checkpoint, and a process killed or a machine losing power during that write leaves it \
    half old, half new. No delivery was half done (each commits whole), but DuckDB reads \
    nothing of this file: restore it from a copy";

/// Whether DuckDB's error on opening a file is a block failing its checksum.
fn is_torn_block(message: &str) -> bool {
    message.contains("Corrupt database file") && message.contains("checksum")
}

/// An exclusive `flock` on the database file's directory, held only while DuckDB opens the
/// file.
///
/// DuckDB creates a new database file empty and writes its header after; another process
/// opening the file in between is refused with "not a valid DuckDB database file" instead of
/// waiting for the lock. Every dogana process opens its DuckDB files under this lock, so it
/// meets a file either absent or whole. The lock is on the directory, not the file: a
/// process closing any descriptor of a file drops every POSIX lock it holds on it, DuckDB's
/// own among them, so dogana never opens or closes one of the database file's own.
struct CreationLock(Option<std::fs::File>);

impl CreationLock {
    fn take(
        path: &Path,
        started: Instant,
        options: &DuckDbOptions,
    ) -> Result<CreationLock, StoreError> {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        // a directory this process cannot open (no read permission) is opened unguarded:
        // the race above is then DuckDB's alone, as for any other DuckDB client
        let Ok(handle) = std::fs::File::open(dir) else {
            return Ok(CreationLock(None));
        };
        loop {
            match handle.try_lock() {
                Ok(()) => return Ok(CreationLock(Some(handle))),
                Err(std::fs::TryLockError::WouldBlock) => {
                    if started.elapsed() >= options.lock_timeout {
                        return Err(StoreError::Locked {
                            store: path.display().to_string(),
                            holder: format!(
                                "another process opening a database in {}; waited {:?}",
                                dir.display(),
                                options.lock_timeout
                            ),
                        });
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                // a file system without flock: unguarded, as above
                Err(std::fs::TryLockError::Error(_)) => return Ok(CreationLock(None)),
            }
        }
    }
}

impl Drop for CreationLock {
    fn drop(&mut self) {
        if let Some(h) = &self.0 {
            let _ = h.unlock();
        }
    }
}

/// What a store's catalog holds of dogana's tables and views.
#[derive(Debug, Clone, Copy)]
struct Catalog {
    /// `dogana_ledger_heads` and `dogana_ledger_regions`: ledgers kept region by region.
    rows: bool,
    /// `dogana_ledger_regions` has its one-column key, `region_key` (stores written before it
    /// are keyed by `(table_name, low)` and read alike; a writer converts them).
    keyed: bool,
    /// The table `dogana_ledgers` of documents: the layout of earlier versions.
    documents: bool,
    receipts: bool,
    /// The views `dogana_ledgers` and `dogana_regions`, counted.
    views: i64,
}

/// The statements writing a ledger's head, prepared once per connection (its cache): an
/// UPDATE, and an INSERT when it changed no row. DuckDB runs an `ON CONFLICT` upsert at about
/// twice the cost of either (bench/duckdb.md).
const UPDATE_HEAD: &str = "UPDATE dogana_ledger_heads
     SET identity = ?2, publication_id = ?3, head = ?4, tail = ?5 WHERE table_name = ?1";
const INSERT_HEAD: &str =
    "INSERT INTO dogana_ledger_heads (table_name, identity, publication_id, head, tail)
     VALUES (?1, ?2, ?3, ?4, ?5)";

/// How many prepared statements a connection keeps (the driver's default is 16, fewer than
/// one delivery uses).
const STATEMENT_CACHE: usize = 128;

/// More regions than this are written through the appender and one `INSERT … SELECT`
/// (a whole ledger, a conversion) rather than one statement of their values.
const BULK_REGIONS: usize = 64;

/// The TEMP table a bulk write of regions is appended to, in this connection's `temp` catalog.
const LEDGER_STAGE: &str = "dogana_ledger_stage";

/// [`region_key`] in SQL, of a table name bound as the statement's first parameter and a
/// column `low`.
const REGION_KEY_SQL: &str = "encode(?1) || '\\x00'::BLOB || low";

/// The one-column key of a region row: the table's name, a NUL, then the region's
/// order-preserving key. A name has no control character (CONTRACT-40), so the first NUL ends
/// it and no two (table, key) pairs meet. DuckDB finds a row by this key through its index;
/// a filter on the two columns `(table_name, low)` of the earlier compound key read every
/// region row of the table (bench/apply.md).
fn region_key(table: &str, low: &[u8]) -> Vec<u8> {
    let mut key = Vec::with_capacity(table.len() + 1 + low.len());
    key.extend_from_slice(table.as_bytes());
    key.push(0);
    key.extend_from_slice(low);
    key
}

impl DuckDb {
    fn catalog(&self) -> Result<Catalog, StoreError> {
        let (rows, documents, receipts, keyed): (i64, i64, i64, i64) = self
            .conn
            .query_row(
                "SELECT count(*) FILTER (WHERE table_name IN ('dogana_ledger_heads', 'dogana_ledger_regions')),
                        count(*) FILTER (WHERE table_name = 'dogana_ledgers'),
                        count(*) FILTER (WHERE table_name = 'dogana_receipts'),
                        (SELECT count(*) FROM duckdb_columns()
                         WHERE database_name = current_database() AND schema_name = 'main'
                         AND table_name = 'dogana_ledger_regions' AND column_name = 'region_key')
                 FROM duckdb_tables()
                 WHERE database_name = current_database() AND schema_name = 'main'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .duck()?;
        let views: i64 = self
            .conn
            .query_row(
                "SELECT count(*) FROM duckdb_views()
                 WHERE database_name = current_database() AND schema_name = 'main'
                 AND view_name IN ('dogana_ledgers', 'dogana_regions')",
                [],
                |r| r.get(0),
            )
            .duck()?;
        Ok(Catalog {
            rows: rows == 2,
            keyed: keyed == 1,
            documents: documents == 1,
            receipts: receipts == 1,
            views,
        })
    }

    /// Writes the store's tables and views, converting a store of the earlier layout (a
    /// `dogana_ledgers` table of documents) to ledger rows: one transaction, under this
    /// instance's write lock (DuckDB's file lock keeps other processes out). A document that
    /// does not read back stops it, naming its table, and changes nothing.
    fn create_schema(&mut self) -> Result<(), StoreError> {
        let c = self.catalog()?;
        if c.rows && c.keyed && c.receipts && !c.documents && c.views == 2 {
            self.rows = true;
            return Ok(());
        }
        self.begin(Txn::Write, &[])?;
        // decided again under the lock: another handle may have made or converted it
        match self.create_schema_locked() {
            Ok(()) => self.commit()?,
            Err(e) => {
                self.rollback();
                return Err(e);
            }
        }
        self.rows = true;
        Ok(())
    }

    fn create_schema_locked(&mut self) -> Result<(), StoreError> {
        let mut ledgers: Vec<(String, Ledger)> = Vec::new();
        let catalog = self.catalog()?;
        if catalog.rows && !catalog.keyed {
            self.rekey_regions()?;
        }
        if catalog.documents {
            let documents: Vec<(String, String)> = {
                let mut stmt = self
                    .conn
                    .prepare(
                        "SELECT table_name, document FROM main.dogana_ledgers ORDER BY table_name",
                    )
                    .duck()?;
                let rows = stmt
                    .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                    .duck()?
                    .collect::<Result<Vec<_>, _>>()
                    .duck()?;
                rows
            };
            for (table, document) in documents {
                let cannot = |why: String| {
                    StoreError::Corrupt(format!(
                        "the stored ledger of {table:?} {why}, so the store cannot be converted to this version's layout; nothing was changed"
                    ))
                };
                if ledgers.last().is_some_and(|(t, _)| *t == table) {
                    let n = ledgers.iter().filter(|(t, _)| *t == table).count() + 1;
                    return Err(cannot(format!("has {n} ledger rows")));
                }
                let ledger = Ledger::from_json(&document)
                    .map_err(|e| cannot(format!("does not read back ({e})")))?;
                ledgers.push((table, ledger));
            }
            self.run("DROP VIEW IF EXISTS main.dogana_regions", &[])?;
            self.run("DROP TABLE main.dogana_ledgers", &[])?;
        }
        for sql in SCHEMA {
            self.run(sql, &[])?;
        }
        for (table, ledger) in &ledgers {
            self.write_whole_ledger(table, ledger)?;
        }
        Ok(())
    }

    /// Gives the region rows of a store written before [`region_key`] their one-column key:
    /// a keyed copy of the rows replaces the table (DuckDB cannot change a primary key in
    /// place), inside the caller's write transaction, so a kill leaves the old table or the
    /// new one. The views over the table are dropped first and made again by [`SCHEMA`].
    fn rekey_regions(&mut self) -> Result<(), StoreError> {
        for sql in [
            "DROP VIEW IF EXISTS main.dogana_regions",
            "DROP VIEW IF EXISTS main.dogana_ledgers",
            "CREATE TABLE main.dogana_ledger_regions_keyed (
                region_key BLOB PRIMARY KEY,
                table_name VARCHAR NOT NULL,
                low        BLOB NOT NULL,
                region     VARCHAR NOT NULL
            )",
            "INSERT INTO main.dogana_ledger_regions_keyed
             SELECT encode(table_name) || '\\x00'::BLOB || low, table_name, low, region
             FROM main.dogana_ledger_regions ORDER BY table_name, low",
            "DROP TABLE main.dogana_ledger_regions",
            "ALTER TABLE main.dogana_ledger_regions_keyed RENAME TO dogana_ledger_regions",
        ] {
            self.run(sql, &[])?;
        }
        Ok(())
    }

    /// Stores a ledger as the stored one changed by `rows` (see
    /// [`Backend::save_ledger_rows`]): the head written, the gone regions deleted, the new and
    /// changed ones upserted. Inside the caller's write transaction.
    fn write_ledger_rows(
        &mut self,
        table: &str,
        identity: &str,
        rows: &LedgerRows,
    ) -> Result<(), StoreError> {
        self.write_head(table, identity, rows)?;
        // one statement for each kind of change, not one per region: DuckDB plans and runs
        // each statement at a cost far above its few rows'
        for keys in rows.removed.chunks(BULK_REGIONS) {
            let sql = format!(
                "DELETE FROM dogana_ledger_regions WHERE region_key IN ({})",
                (0..keys.len())
                    .map(|i| format!("?{}", i + 1))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            let params: Vec<DValue> = keys
                .iter()
                .map(|k| DValue::Blob(region_key(table, k)))
                .collect();
            let deleted = self
                .conn
                .prepare_cached(&sql)
                .and_then(|mut s| s.execute(params_from_iter(params)))
                .duck()?;
            if deleted != keys.len() {
                return Err(StoreError::Corrupt(format!(
                    "deleting {} regions of the ledger of {table:?} changed {deleted} rows",
                    keys.len()
                )));
            }
        }
        if rows.changed.len() + rows.added.len() > BULK_REGIONS {
            return self.write_regions_bulk(table, rows.upserted(), false);
        }
        // parameters: the table's name, then for each region its row key, its key and its text
        let values = |regions: &[(Vec<u8>, String)]| {
            let list: Vec<String> = (0..regions.len())
                .map(|i| format!("(?{}, ?{}, ?{})", 3 * i + 2, 3 * i + 3, 3 * i + 4))
                .collect();
            let mut params = vec![DValue::Text(table.into())];
            for (key, region) in regions {
                params.push(DValue::Blob(region_key(table, key)));
                params.push(DValue::Blob(key.clone()));
                params.push(DValue::Text(region.clone()));
            }
            (list.join(", "), params)
        };
        // the regions whose key is stored updated in place, the new ones inserted: an
        // `ON CONFLICT` upsert costs DuckDB about twice either (bench/duckdb.md)
        for (regions, what) in [(&rows.changed, "updating"), (&rows.added, "adding")] {
            if regions.is_empty() {
                continue;
            }
            let (sql, params) = if what == "updating" {
                // the row keys named in a filter, which DuckDB answers from the key's index:
                // a join with a VALUES list, or a filter on the earlier compound key, read
                // every region row of the table (bench/apply.md)
                let cases: String = (0..regions.len())
                    .map(|i| format!(" WHEN ?{} THEN ?{}", 2 * i + 1, 2 * i + 2))
                    .collect();
                let keys: Vec<String> = (0..regions.len())
                    .map(|i| format!("?{}", 2 * i + 1))
                    .collect();
                let mut params = Vec::with_capacity(2 * regions.len());
                for (key, region) in regions.iter() {
                    params.push(DValue::Blob(region_key(table, key)));
                    params.push(DValue::Text(region.clone()));
                }
                let sql = format!(
                    "UPDATE dogana_ledger_regions SET region = CASE region_key{cases} END
                     WHERE region_key IN ({})",
                    keys.join(", ")
                );
                (sql, params)
            } else {
                let (list, params) = values(regions);
                let sql = format!(
                    "INSERT INTO dogana_ledger_regions (region_key, table_name, low, region)
                     SELECT k, ?1, low, region FROM (VALUES {list}) v(k, low, region)"
                );
                (sql, params)
            };
            let written = self
                .conn
                .prepare_cached(&sql)
                .and_then(|mut s| s.execute(params_from_iter(params)))
                .duck()?;
            if written != regions.len() {
                return Err(StoreError::Corrupt(format!(
                    "{what} {} regions of the ledger of {table:?} changed {written} rows",
                    regions.len()
                )));
            }
        }
        Ok(())
    }

    /// Stores `ledger` whole: every region row of `table` replaced (those of the regions it
    /// keeps updated in place, not deleted and inserted again: see the crate's Decisions).
    pub(crate) fn write_whole_ledger(
        &mut self,
        table: &str,
        ledger: &Ledger,
    ) -> Result<(), StoreError> {
        let rows = ledger.region_rows_since(None);
        self.write_head(table, &ledger.identity(), &rows)?;
        self.write_regions_bulk(table, rows.added.iter(), true)
    }

    fn write_head(
        &mut self,
        table: &str,
        identity: &str,
        rows: &LedgerRows,
    ) -> Result<(), StoreError> {
        let params = duckdb::params![table, identity, rows.publication_id, rows.head, rows.tail];
        let mut changed = self
            .conn
            .prepare_cached(UPDATE_HEAD)
            .and_then(|mut s| s.execute(params))
            .duck()?;
        if changed == 0 {
            changed = self
                .conn
                .prepare_cached(INSERT_HEAD)
                .and_then(|mut s| s.execute(params))
                .duck()?;
        }
        if changed != 1 {
            return Err(StoreError::Corrupt(format!(
                "saving the ledger head of {table:?} changed {changed} rows, not one"
            )));
        }
        Ok(())
    }

    /// Upserts many regions of `table` in one statement, from a TEMP table the appender
    /// fills; with `replace`, the table's other regions are deleted first.
    fn write_regions_bulk<'a>(
        &mut self,
        table: &str,
        regions: impl Iterator<Item = &'a (Vec<u8>, String)>,
        replace: bool,
    ) -> Result<(), StoreError> {
        let mut count = 0;
        let stage = format!("temp.main.{}", quote_ident(LEDGER_STAGE));
        self.run(
            &format!("CREATE OR REPLACE TEMP TABLE {LEDGER_STAGE} (low BLOB NOT NULL, region VARCHAR NOT NULL)"),
            &[],
        )?;
        {
            let mut app = self
                .conn
                .appender_to_catalog_and_db(LEDGER_STAGE, "temp", "main")
                .duck()?;
            for (key, region) in regions {
                app.append_row(duckdb::params![key, region]).duck()?;
                count += 1;
            }
            app.flush().duck()?;
        }
        let t = [DValue::Text(table.into())];
        if replace {
            self.run(
                &format!(
                    "DELETE FROM dogana_ledger_regions
                     WHERE table_name = ? AND low NOT IN (SELECT low FROM {stage})"
                ),
                &t,
            )?;
        }
        let changed = self.run(
            &format!(
                "INSERT INTO dogana_ledger_regions (region_key, table_name, low, region)
                 SELECT {REGION_KEY_SQL}, ?1, low, region FROM {stage}
                 ON CONFLICT (region_key) DO UPDATE SET region = excluded.region"
            ),
            &t,
        )?;
        self.run(&format!("DROP TABLE {stage}"), &[])?;
        if changed != count {
            return Err(StoreError::Corrupt(format!(
                "saving the {count} regions of the ledger of {table:?} changed {changed} rows"
            )));
        }
        Ok(())
    }

    /// Drops the tables a killed process staged whole deliveries in. Only for the instance
    /// this process has just opened for writing: DuckDB's file lock keeps every other process
    /// out, and no other handle of this process has staged anything yet.
    fn drop_leftovers(&mut self) -> Result<(), StoreError> {
        let names: Vec<String> = {
            let mut stmt = self
                .conn
                .prepare(
                    "SELECT table_name FROM duckdb_tables()
                     WHERE database_name = current_database() AND schema_name = 'main'",
                )
                .duck()?;
            let all = stmt
                .query_map([], |r| r.get::<_, String>(0))
                .duck()?
                .collect::<Result<Vec<_>, _>>()
                .duck()?;
            all.into_iter()
                .filter(|n| n.starts_with(WHOLE_PREFIX))
                .collect()
        };
        if names.is_empty() {
            return Ok(());
        }
        self.begin(Txn::Write, &[])?;
        for n in &names {
            if let Err(e) = self.run(&format!("DROP TABLE main.{}", quote_ident(n)), &[]) {
                self.rollback();
                return Err(e);
            }
        }
        self.commit()
    }

    /// Refuses a file without dogana's tables, and notes which layout its ledgers are in.
    fn check_store(&mut self, shown: &str) -> Result<(), StoreError> {
        let c = self.catalog()?;
        if !(c.rows || c.documents) || !c.receipts {
            return Err(StoreError::NotAStore(format!(
                "{shown} is a DuckDB database without dogana's tables (dogana_ledger_heads and dogana_ledger_regions, or dogana_ledgers; dogana_receipts)"
            )));
        }
        // a store of the earlier layout is read as it is, through `dogana_ledgers`, which a
        // writer's conversion replaces with a view of the same columns
        self.rows = c.rows;
        Ok(())
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.instance.path
    }

    /// This handle's connection, for reading. Writing to the store's tables behind its back
    /// breaks what `verify` checks.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Another handle on the same instance (a cloned connection).
    pub fn try_clone(&self) -> Result<DuckDb, StoreError> {
        let conn = self.conn.try_clone().duck()?;
        let _ = conn.execute("SET TimeZone = 'UTC'", []);
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        Ok(DuckDb {
            conn,
            instance: self.instance.clone(),
            options: self.options.clone(),
            holding: false,
            whole: HashMap::new(),
            rows: self.rows,
            kept: HashMap::new(),
        })
    }

    /// One statement, checked.
    fn run(&self, sql: &str, params: &[DValue]) -> Result<usize, StoreError> {
        self.conn
            .execute(sql, params_from_iter(params.iter()))
            .duck()
    }

    fn take_write_lock(&mut self) -> Result<(), StoreError> {
        if !self.instance.writable {
            return Err(StoreError::backend(
                "duckdb",
                format!(
                    "{} was opened for reading only",
                    self.instance.path.display()
                ),
            ));
        }
        let deadline = Instant::now() + self.options.lock_timeout;
        let mut writing = self
            .instance
            .writing
            .lock()
            .map_err(|_| StoreError::Corrupt("the write lock was poisoned".into()))?;
        while *writing {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(StoreError::Locked {
                    store: self.instance.path.display().to_string(),
                    holder: format!(
                        "another handle in this process is writing; waited {:?}",
                        self.options.lock_timeout
                    ),
                });
            }
            writing = self
                .instance
                .freed
                .wait_timeout(writing, left)
                .map_err(|_| StoreError::Corrupt("the write lock was poisoned".into()))?
                .0;
        }
        *writing = true;
        self.holding = true;
        Ok(())
    }

    fn release_write_lock(&mut self) {
        if self.holding {
            self.holding = false;
            if let Ok(mut w) = self.instance.writing.lock() {
                *w = false;
            }
            self.instance.freed.notify_one();
        }
    }

    /// The TEMP table of the tombstones' keys (`k0…`) of a delivery to `table`.
    fn create_tombstones(&mut self, table: &str, layout: &Layout) -> Result<(), StoreError> {
        self.drop_kept(table)?;
        let stombs = quote_ident(&staging_names(table).1);
        let keys = staging_columns(layout).1;
        self.run(&format!("CREATE TEMP TABLE {stombs} ({keys})"), &[])?;
        Ok(())
    }

    /// Drops the kept staging tables of `table`, if there are.
    fn drop_kept(&mut self, table: &str) -> Result<(), StoreError> {
        if self.kept.remove(table).is_some() {
            let (srows, stombs) = staging(table);
            self.run(&format!("DROP TABLE IF EXISTS {srows}"), &[])?;
            self.run(&format!("DROP TABLE IF EXISTS {stombs}"), &[])?;
        }
        Ok(())
    }

    /// Empties the kept staging tables of `table` when rows were staged in them since they
    /// were last emptied; drops them instead when they have held many rows
    /// ([`DROP_KEPT_FROM`]).
    fn empty_kept(&mut self, table: &str) -> Result<(), StoreError> {
        let Some(kept) = self.kept.get_mut(table) else {
            return Ok(());
        };
        if kept.staged == 0 {
            return Ok(());
        }
        if kept.dead + kept.staged >= DROP_KEPT_FROM {
            return self.drop_kept(table);
        }
        kept.dead += kept.staged;
        kept.staged = 0;
        let (srows, stombs) = staging(table);
        let emptied = self
            .conn
            .execute_batch(&format!("DELETE FROM {srows}; DELETE FROM {stombs};"))
            .duck();
        if emptied.is_err() {
            // what they hold is unknown now: made again by the next delivery
            self.kept.remove(table);
        }
        emptied
    }

    /// The staged live rows of `table` as SQL: the TEMP table, or the whole-table staging
    /// table's columns renamed `c0…` as the TEMP table's are.
    fn staged_rows(&self, table: &str) -> String {
        match self.whole.get(table) {
            None => staging(table).0,
            Some(w) => whole_staged_rows(&w.columns, &w.name),
        }
    }

    /// Whether renaming `staged` in place of the published `table` keeps what the table is:
    /// the same columns (names, types, order, NOT NULL) and nothing built on it (an index or a
    /// constraint someone added).
    fn same_table(&self, table: &str, staged: &str) -> Result<bool, StoreError> {
        let shape = |t: &str| -> Result<Vec<(String, String, String)>, StoreError> {
            let mut stmt = self
                .conn
                .prepare_cached(
                    "SELECT column_name, data_type, is_nullable FROM information_schema.columns
                     WHERE table_schema = 'main' AND table_catalog = current_database()
                     AND table_name = ? ORDER BY ordinal_position",
                )
                .duck()?;
            let rows = stmt
                .query_map([t], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .duck()?
                .collect::<Result<Vec<_>, _>>()
                .duck()?;
            Ok(rows)
        };
        if shape(table)? != shape(staged)? {
            return Ok(false);
        }
        let built: i64 = self
            .conn
            .query_row(
                "SELECT (SELECT count(*) FROM duckdb_indexes()
                         WHERE database_name = current_database() AND schema_name = 'main'
                         AND table_name = ?1)
                      + (SELECT count(*) FROM duckdb_constraints()
                         WHERE database_name = current_database() AND schema_name = 'main'
                         AND table_name = ?1 AND constraint_type <> 'NOT NULL')",
                [table],
                |r| r.get(0),
            )
            .duck()?;
        Ok(built == 0)
    }

    /// The published table's columns and their types, in order; none when there is no such
    /// table. From `duckdb_columns()`, which `information_schema.columns` is a view over:
    /// the view costs some milliseconds a call, a fifth of a small delivery.
    fn published_types(&self, table: &str) -> Result<Vec<(String, String)>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT column_name, data_type FROM duckdb_columns()
                 WHERE database_name = current_database() AND schema_name = 'main'
                 AND table_name = ? ORDER BY column_index",
            )
            .duck()?;
        let rows = stmt
            .query_map([table], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
            })
            .duck()?
            .collect::<Result<Vec<_>, _>>()
            .duck()?;
        Ok(rows)
    }
}

impl Drop for DuckDb {
    fn drop(&mut self) {
        if self.holding {
            let _ = self.conn.execute_batch("ROLLBACK");
            self.release_write_lock();
        }
        // a decision never committed leaves nothing behind
        for w in self.whole.values() {
            let _ = self.conn.execute(
                &format!("DROP TABLE IF EXISTS main.{}", quote_ident(&w.name)),
                [],
            );
        }
    }
}

/// A protocol value as DuckDB binds it (window bounds).
fn value_duck(v: &Value) -> DValue {
    match Datum::of_value(v, false) {
        Datum::Int(i) => DValue::BigInt(i),
        Datum::Text(s) => DValue::Text(s),
        Datum::Date(d) => DValue::Date32(d.days_since_epoch() as i32),
        Datum::Datetime(t) => DValue::Timestamp(TimeUnit::Microsecond, t.as_micros()),
        Datum::Real(x) => DValue::Double(x),
        Datum::Bool(b) => DValue::Boolean(b),
        Datum::Null => DValue::Null,
    }
}

fn micros(unit: TimeUnit, v: i64) -> i64 {
    match unit {
        TimeUnit::Second => v.saturating_mul(1_000_000),
        TimeUnit::Millisecond => v.saturating_mul(1_000),
        TimeUnit::Microsecond => v,
        TimeUnit::Nanosecond => v / 1_000,
    }
}

fn duck_datum(v: DValue) -> Datum {
    match v {
        DValue::Null => Datum::Null,
        DValue::Boolean(b) => Datum::Bool(b),
        DValue::TinyInt(i) => Datum::Int(i.into()),
        DValue::SmallInt(i) => Datum::Int(i.into()),
        DValue::Int(i) => Datum::Int(i.into()),
        DValue::BigInt(i) => Datum::Int(i),
        DValue::UTinyInt(i) => Datum::Int(i.into()),
        DValue::USmallInt(i) => Datum::Int(i.into()),
        DValue::UInt(i) => Datum::Int(i.into()),
        DValue::Float(x) => Datum::Real(x.into()),
        DValue::Double(x) => Datum::Real(x),
        DValue::Text(s) => Datum::Text(s),
        DValue::Date32(d) => Date::from_days_since_epoch(d.into())
            .map_or_else(|| Datum::Text(format!("day {d}")), Datum::Date),
        DValue::Timestamp(unit, v) => Timestamp::from_micros(micros(unit, v))
            .map_or_else(|| Datum::Text(format!("instant {v}")), Datum::Datetime),
        other => Datum::Text(format!("{other:?}")),
    }
}

impl Backend for DuckDb {
    const TEXT_TIMES: bool = false;

    fn begin(&mut self, txn: Txn, _tables: &[&str]) -> Result<(), StoreError> {
        if txn == Txn::Write {
            self.take_write_lock()?;
        }
        if let Err(e) = self.conn.execute_batch("BEGIN TRANSACTION") {
            self.release_write_lock();
            return Err(duck(e));
        }
        Ok(())
    }

    fn commit(&mut self) -> Result<(), StoreError> {
        let r = self.conn.execute_batch("COMMIT").duck();
        self.release_write_lock();
        r
    }

    fn rollback(&mut self) {
        let _ = self.conn.execute_batch("ROLLBACK");
        // the rollback may undo the staging tables' making or filling: made again by the
        // next delivery (CREATE OR REPLACE, since they may still be there)
        self.kept.clear();
        self.release_write_lock();
    }

    fn ledger(&mut self, table: &str) -> Result<Option<String>, StoreError> {
        if !self.rows {
            let mut stmt = self
                .conn
                .prepare_cached("SELECT document FROM dogana_ledgers WHERE table_name = ?")
                .duck()?;
            let mut docs = stmt
                .query_map([table], |r| r.get::<_, String>(0))
                .duck()?
                .collect::<Result<Vec<_>, _>>()
                .duck()?;
            if docs.len() > 1 {
                return Err(StoreError::Corrupt(format!(
                    "{} ledger rows for table {table:?}",
                    docs.len()
                )));
            }
            return Ok(docs.pop());
        }
        let ends: Vec<(String, String)> = self
            .conn
            .prepare_cached("SELECT head, tail FROM dogana_ledger_heads WHERE table_name = ?")
            .and_then(|mut s| {
                s.query_map([table], |r| Ok((r.get(0)?, r.get(1)?)))?
                    .collect::<Result<Vec<_>, _>>()
            })
            .duck()?;
        let Some((head, tail)) = ends.into_iter().next() else {
            return Ok(None);
        };
        // assembled as the rows are read: LedgerRows::document's spelling, regions in key
        // order (BLOBs compare bytewise), comma-separated
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT region FROM dogana_ledger_regions WHERE table_name = ? ORDER BY low",
            )
            .duck()?;
        let mut rows = stmt.query([table]).duck()?;
        let mut document = head;
        let mut first = true;
        while let Some(row) = rows.next().duck()? {
            if !first {
                document.push(',');
            }
            first = false;
            match row.get_ref(0).duck()? {
                duckdb::types::ValueRef::Text(t) => document.push_str(
                    std::str::from_utf8(t)
                        .map_err(|e| StoreError::Corrupt(format!("a region of {table:?}: {e}")))?,
                ),
                other => {
                    return Err(StoreError::Corrupt(format!(
                        "a region of {table:?} is {:?}, not text",
                        other.data_type()
                    )))
                }
            }
        }
        document.push_str(&tail);
        Ok(Some(document))
    }

    fn keeps_ledger_rows(&self) -> bool {
        self.rows
    }

    fn ledger_identity(&mut self, table: &str) -> Result<Option<String>, StoreError> {
        if !self.rows {
            return Ok(None);
        }
        let ids: Vec<String> = self
            .conn
            .prepare_cached("SELECT identity FROM dogana_ledger_heads WHERE table_name = ?")
            .and_then(|mut s| {
                s.query_map([table], |r| r.get(0))?
                    .collect::<Result<Vec<_>, _>>()
            })
            .duck()?;
        Ok(ids.into_iter().next())
    }

    fn save_ledger_rows(
        &mut self,
        table: &str,
        identity: &str,
        rows: &LedgerRows,
    ) -> Result<(), StoreError> {
        self.write_ledger_rows(table, identity, rows)
    }

    fn accepted_receipt(
        &mut self,
        table: &str,
        manifest: &str,
    ) -> Result<Option<String>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT document FROM dogana_receipts
                 WHERE table_name = ? AND manifest_identity = ? AND outcome = 'accepted'
                 ORDER BY accepted_order LIMIT 1",
            )
            .duck()?;
        let doc = stmt
            .query_map([table, manifest], |r| r.get::<_, String>(0))
            .duck()?
            .next()
            .transpose()
            .duck()?;
        Ok(doc)
    }

    fn receipts(&mut self, table: &str) -> Result<Vec<ReceiptRow>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT seq, identity, manifest_identity, outcome, accepted_order, document
                 FROM dogana_receipts WHERE table_name = ? ORDER BY seq",
            )
            .duck()?;
        let rows = stmt
            .query_map([table], |r| {
                Ok(ReceiptRow {
                    seq: r.get(0)?,
                    identity: r.get(1)?,
                    manifest_identity: r.get(2)?,
                    outcome: r.get(3)?,
                    accepted_order: r.get(4)?,
                    document: r.get(5)?,
                })
            })
            .duck()?
            .collect::<Result<Vec<_>, _>>()
            .duck()?;
        Ok(rows)
    }

    fn tables(&mut self) -> Result<Vec<String>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                if self.rows {
                    // the heads, not the view: a view's row would assemble every document
                    "SELECT table_name FROM dogana_ledger_heads UNION SELECT table_name FROM dogana_receipts ORDER BY 1"
                } else {
                    "SELECT table_name FROM dogana_ledgers UNION SELECT table_name FROM dogana_receipts ORDER BY 1"
                },
            )
            .duck()?;
        let names = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .duck()?
            .collect::<Result<Vec<_>, _>>()
            .duck()?;
        Ok(names)
    }

    /// The columns of the table's one-row-less result: DuckDB binds the table alone, where
    /// a lookup in `duckdb_columns()` lists every column of every table and view (about four
    /// times the cost; bench/duckdb.md). No such table is DuckDB's catalog error, which
    /// leaves the transaction usable.
    fn published_columns(&mut self, table: &str) -> Result<Option<Vec<String>>, StoreError> {
        let sql = format!("SELECT * FROM main.{} LIMIT 0", quote_ident(table));
        let mut stmt = match self.conn.prepare_cached(&sql) {
            Ok(s) => s,
            Err(e) if is_no_such_table(&e) => return Ok(None),
            Err(e) => return Err(duck(e)),
        };
        // the driver knows a result's columns once it has run; a kept statement is bound
        // again when the catalog changed, and meets a table dropped since then
        match stmt.query([]).and_then(|mut rows| rows.next().map(|_| ())) {
            Ok(()) => Ok(Some(stmt.column_names())),
            Err(e) if is_no_such_table(&e) => Ok(None),
            Err(e) => Err(duck(e)),
        }
    }

    /// Empties the TEMP staging tables this handle keeps for `table` when they have the
    /// layout's columns; else makes them.
    fn stage_create(&mut self, table: &str, layout: &Layout) -> Result<(), StoreError> {
        let columns = staging_columns(layout);
        if self.kept.get(table).is_some_and(|k| k.columns == columns) {
            return self.empty_kept(table);
        }
        self.kept.remove(table);
        let (srows, stombs) = staging(table);
        self.run(
            &format!("CREATE OR REPLACE TEMP TABLE {srows} ({})", columns.0),
            &[],
        )?;
        self.run(
            &format!("CREATE OR REPLACE TEMP TABLE {stombs} ({})", columns.1),
            &[],
        )?;
        self.kept.insert(
            table.to_owned(),
            Kept {
                columns,
                staged: 0,
                dead: 0,
            },
        );
        Ok(())
    }

    /// Stages the live rows in a new table of the published columns in the main database
    /// (`dogana_whole__…`), when their staging types are the published types (a decimal
    /// column is staged as text: not whole); the tombstones' keys in their TEMP table. The
    /// table is written in the decision's transaction and dropped by `stage_clear` unless
    /// the commit renamed it: saves the TEMP table's copy of every row and the copy from it.
    fn stage_create_whole(
        &mut self,
        table: &str,
        layout: &Layout,
        columns: &[Column],
    ) -> Result<bool, StoreError> {
        let fits = self.instance.writable
            && layout.fits_whole(columns)
            && columns
                .iter()
                .all(|c| staging_type(c.ty.as_deref()) == duckdb_type(c.ty.as_deref()));
        if !fits {
            self.stage_create(table, layout)?;
            return Ok(false);
        }
        let name = format!(
            "{WHOLE_PREFIX}{table}__{}_{}",
            std::process::id(),
            WHOLE_SEQ.fetch_add(1, Ordering::Relaxed)
        );
        // NOT NULL only at publication: a null key is the keys check's to refuse
        let defs: Vec<String> = columns
            .iter()
            .map(|c| format!("{} {}", quote_ident(&c.name), duckdb_type(c.ty.as_deref())))
            .collect();
        self.run(
            &format!(
                "CREATE TABLE main.{} ({})",
                quote_ident(&name),
                defs.join(", ")
            ),
            &[],
        )?;
        self.whole.insert(
            table.to_owned(),
            Whole {
                name,
                columns: columns.to_vec(),
            },
        );
        self.create_tombstones(table, layout)?;
        Ok(true)
    }

    fn replace_with_staged(&mut self, table: &str, keep: bool) -> Result<(), StoreError> {
        let w = self.whole.get(table).cloned().ok_or_else(|| {
            StoreError::Corrupt(format!("no whole-table staging of {table:?} to publish"))
        })?;
        let (t, staged) = (quote_ident(table), quote_ident(&w.name));
        for c in w.columns.iter().filter(|c| c.key) {
            self.run(
                &format!(
                    "ALTER TABLE main.{staged} ALTER COLUMN {} SET NOT NULL",
                    quote_ident(&c.name)
                ),
                &[],
            )?;
        }
        if keep && !self.same_table(table, &w.name)? {
            // the published table keeps its own columns and what is built on it
            let names = ident_list(w.columns.iter().map(|c| c.name.as_str()), "");
            self.run(&format!("DELETE FROM main.{t}"), &[])?;
            self.run(
                &format!("INSERT INTO main.{t} ({names}) SELECT {names} FROM main.{staged}"),
                &[],
            )?;
            return Ok(());
        }
        self.run(&format!("DROP TABLE IF EXISTS main.{t}"), &[])?;
        self.run(&format!("ALTER TABLE main.{staged} RENAME TO {t}"), &[])?;
        Ok(())
    }

    fn stage_batch(
        &mut self,
        table: &str,
        layout: &Layout,
        batch: &Batch,
    ) -> Result<(), StoreError> {
        let (srows, stombs) = staging_names(table);
        let row_types: Vec<&str> = layout
            .types
            .iter()
            .map(|t| staging_type(t.as_deref()))
            .collect();
        let key_types: Vec<&str> = layout
            .key
            .iter()
            .map(|(_, t)| staging_type(t.as_deref()))
            .collect();
        let mut live = Columns::new(&row_types, batch.len());
        let mut dead = Columns::new(&key_types, 0);
        for row in batch.rows() {
            if row.tombstone {
                dead.push(&row);
            } else {
                live.push(&row);
            }
        }
        let srows = match self.whole.get(table) {
            Some(w) => (w.name.as_str(), "main"),
            None => (srows.as_str(), "temp"),
        };
        if let Some(kept) = self.kept.get_mut(table) {
            kept.staged += batch.len() as u64;
        }
        for (columns, (name, db)) in [(&mut live, srows), (&mut dead, (stombs.as_str(), "temp"))] {
            if columns.len() == 0 {
                continue;
            }
            let batch = columns
                .finish()
                .map_err(|e| StoreError::backend("duckdb", e))?;
            let mut app = if db == "temp" {
                self.conn.appender_to_catalog_and_db(name, "temp", "main")
            } else {
                self.conn.appender_to_db(name, "main")
            }
            .duck()?;
            app.append_record_batch(batch).duck()?;
            app.flush().duck()?;
        }
        Ok(())
    }

    /// A whole-table staging is one `INSERT … SELECT` from the batches (src/stream.rs), which
    /// DuckDB runs on all its threads; any other staging appends batch by batch.
    fn stage_batches(
        &mut self,
        table: &str,
        layout: &Layout,
        batches: Box<dyn Iterator<Item = Batch> + Send>,
    ) -> Result<(), StoreError> {
        let Some(name) = self.whole.get(table).map(|w| w.name.clone()) else {
            for batch in batches {
                self.stage_batch(table, layout, &batch)?;
            }
            return Ok(());
        };
        let row_types: Vec<&'static str> = layout
            .types
            .iter()
            .map(|t| staging_type(t.as_deref()))
            .collect();
        let key_types: Vec<&'static str> = layout
            .key
            .iter()
            .map(|(_, t)| staging_type(t.as_deref()))
            .collect();
        let source = Registered::new(row_types, key_types, batches);
        // without it DuckDB inserts from one thread (a table function has no batch order)
        self.run("SET preserve_insertion_order = false", &[])?;
        let inserted = self.run(
            &format!(
                "INSERT INTO main.{} SELECT * FROM {FUNCTION}({})",
                quote_ident(&name),
                source.id
            ),
            &[],
        );
        let reset = self.run("RESET preserve_insertion_order", &[]);
        let inserted = inserted?;
        reset?;
        let (dead, emitted) = source.finish();
        drop(source);
        if inserted as u64 != emitted {
            return Err(StoreError::Corrupt(format!(
                "staging {table:?} inserted {inserted} rows of {emitted}"
            )));
        }
        if !dead.is_empty() {
            let stombs = staging_names(table).1;
            let mut app = self
                .conn
                .appender_to_catalog_and_db(&stombs, "temp", "main")
                .duck()?;
            for batch in dead {
                app.append_record_batch(batch).duck()?;
            }
            app.flush().duck()?;
        }
        Ok(())
    }

    fn stage_clear(&mut self, table: &str) -> Result<(), StoreError> {
        if self.kept.contains_key(table) {
            // kept for the next delivery, emptied
            return self.empty_kept(table);
        }
        let (srows, stombs) = staging(table);
        self.run(&format!("DROP TABLE IF EXISTS {srows}"), &[])?;
        self.run(&format!("DROP TABLE IF EXISTS {stombs}"), &[])?;
        if let Some(w) = self.whole.get(table) {
            // gone already when the commit renamed it in place of the published table
            let sql = format!("DROP TABLE IF EXISTS main.{}", quote_ident(&w.name));
            self.run(&sql, &[])?;
            self.whole.remove(table);
        }
        Ok(())
    }

    fn keys_outside(
        &mut self,
        table: &str,
        q: &KeysOutside<'_>,
    ) -> Result<(u64, Option<Vec<Datum>>), StoreError> {
        let stombs = staging(table).1;
        let hits = keys_outside_query(table, q, &self.staged_rows(table), &stombs);
        let bounds = [value_duck(&q.window.low), value_duck(&q.window.high)];
        let count: i64 = self
            .conn
            .query_row(
                &format!("SELECT count(*) FROM ({hits})"),
                params_from_iter(bounds.iter()),
                |r| r.get(0),
            )
            .duck()?;
        if count == 0 {
            return Ok((0, None));
        }
        let first: Vec<DValue> = self
            .conn
            .query_row(
                &format!("{hits} LIMIT 1"),
                params_from_iter(bounds.iter()),
                |r| (0..=q.key.len()).map(|i| r.get::<_, DValue>(i)).collect(),
            )
            .duck()?;
        Ok((
            count as u64,
            Some(first.into_iter().map(duck_datum).collect()),
        ))
    }

    fn execute(&mut self, table: &str, step: Step<'_>) -> Result<(), StoreError> {
        let srows = self.staged_rows(table);
        let stombs = staging(table).1;
        let t = quote_ident(table);
        match step {
            Step::Create(columns) => {
                let defs: Vec<String> = columns
                    .iter()
                    .map(|c: &Column| {
                        let ty = duckdb_type(c.ty.as_deref());
                        let name = quote_ident(&c.name);
                        if c.key {
                            format!("{name} {ty} NOT NULL")
                        } else {
                            format!("{name} {ty}")
                        }
                    })
                    .collect();
                self.run(&format!("CREATE TABLE main.{t} ({})", defs.join(", ")), &[])?;
            }
            Step::Drop => {
                self.run(&format!("DROP TABLE main.{t}"), &[])?;
            }
            // no index to drop or build: DuckDB scans and hash-joins
            Step::BeginBulk(_) | Step::Indexes(_) => {}
            Step::DeleteAll => {
                self.run(&format!("DELETE FROM main.{t}"), &[])?;
            }
            Step::DeleteWindow(column, window) => {
                let w = quote_ident(column);
                self.run(
                    &format!("DELETE FROM main.{t} WHERE {w} >= ?1 AND {w} <= ?2"),
                    &[value_duck(&window.low), value_duck(&window.high)],
                )?;
            }
            Step::DeleteKeys(key, from) => {
                let (source, staging): (Vec<String>, &str) = match from {
                    KeysFrom::Tombstones => (
                        (0..key.len()).map(|i| format!("k{i}")).collect(),
                        stombs.as_str(),
                    ),
                    KeysFrom::Rows(at) => {
                        (at.iter().map(|i| format!("c{i}")).collect(), srows.as_str())
                    }
                };
                let on: Vec<String> = key
                    .iter()
                    .zip(&source)
                    .map(|(k, s)| format!("main.{t}.{} = s.{s}", quote_ident(k)))
                    .collect();
                self.run(
                    &format!(
                        "DELETE FROM main.{t} USING (SELECT DISTINCT {} FROM {staging}) s WHERE {}",
                        source.join(", "),
                        on.join(" AND ")
                    ),
                    &[],
                )?;
            }
            Step::InsertStaged(layout) => {
                if layout.loaded.is_empty() {
                    return Ok(());
                }
                let cols: Vec<String> = (0..layout.loaded.len()).map(|i| format!("c{i}")).collect();
                self.run(
                    &format!(
                        "INSERT INTO main.{t} ({}) SELECT {} FROM {srows}",
                        ident_list(layout.loaded.iter().map(String::as_str), ""),
                        cols.join(", ")
                    ),
                    &[],
                )?;
            }
        }
        Ok(())
    }

    fn save_ledger(&mut self, table: &str, document: &str) -> Result<(), StoreError> {
        if self.rows {
            return self.write_whole_ledger(table, &Ledger::from_json(document)?);
        }
        let params = [DValue::Text(document.into()), DValue::Text(table.into())];
        let changed = self.run(
            "UPDATE dogana_ledgers SET document = ?1 WHERE table_name = ?2",
            &params,
        )?;
        let changed = if changed == 0 {
            self.run(
                "INSERT INTO dogana_ledgers (document, table_name) VALUES (?1, ?2)",
                &params,
            )?
        } else {
            changed
        };
        if changed != 1 {
            return Err(StoreError::Corrupt(format!(
                "saving the ledger of {table:?} changed {changed} rows, not one"
            )));
        }
        Ok(())
    }

    fn save_receipt(&mut self, table: &str, receipt: &Receipt) -> Result<(), StoreError> {
        let accepted = receipt.outcome() == Outcome::Accepted;
        // numbered in the statement that saves it: one statement, not a read and a write
        let changed = self
            .conn
            .prepare_cached(
                "INSERT INTO dogana_receipts
                 (table_name, seq, identity, manifest_identity, outcome, accepted_order, document)
                 SELECT ?1, coalesce(max(seq), 0) + 1, ?2, ?3, ?4,
                        CASE WHEN ?5 THEN coalesce(max(accepted_order), 0) + 1 END, ?6
                 FROM dogana_receipts WHERE table_name = ?1",
            )
            .and_then(|mut s| {
                s.execute(duckdb::params![
                    table,
                    receipt.identity(),
                    receipt.manifest().identity(),
                    receipt.outcome().name(),
                    accepted,
                    receipt.to_json(),
                ])
            })
            .duck()?;
        if changed != 1 {
            return Err(StoreError::Corrupt(format!(
                "saving a receipt of {table:?} changed {changed} rows, not one"
            )));
        }
        Ok(())
    }

    fn read_rows(
        &mut self,
        table: &str,
        columns: &[String],
    ) -> Result<Vec<Vec<Datum>>, StoreError> {
        let types: HashMap<String, String> = self.published_types(table)?.into_iter().collect();
        // types the driver does not read natively are read as their text
        let select: Vec<String> = columns
            .iter()
            .map(|c| {
                let q = quote_ident(c);
                match types.get(c).map(String::as_str) {
                    Some(t) if t.starts_with("DECIMAL") => format!("CAST({q} AS VARCHAR)"),
                    _ => q,
                }
            })
            .collect();
        let mut stmt = self
            .conn
            .prepare(&format!(
                "SELECT {} FROM main.{} ORDER BY rowid",
                select.join(", "),
                quote_ident(table)
            ))
            .duck()?;
        let rows = stmt
            .query_map([], |r| {
                (0..columns.len())
                    .map(|i| r.get::<_, DValue>(i).map(duck_datum))
                    .collect::<Result<Vec<_>, _>>()
            })
            .duck()?
            .collect::<Result<Vec<_>, _>>()
            .duck()?;
        Ok(rows)
    }

    fn group_of(&mut self, table: &str) -> Result<Option<Vec<String>>, StoreError> {
        let exists: i64 = self
            .conn
            .query_row(
                "SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'main' AND table_name = 'dogana_groups'",
                [],
                |r| r.get(0),
            )
            .duck()?;
        if exists == 0 {
            return Ok(None);
        }
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT table_name FROM dogana_groups WHERE group_id =
                 (SELECT group_id FROM dogana_groups WHERE table_name = ?) ORDER BY table_name",
            )
            .duck()?;
        let tables = stmt
            .query_map([table.to_ascii_lowercase()], |r| r.get::<_, String>(0))
            .duck()?
            .collect::<Result<Vec<_>, _>>()
            .duck()?;
        Ok(if tables.is_empty() {
            None
        } else {
            Some(tables)
        })
    }

    fn save_group(&mut self, tables: &[String]) -> Result<(), StoreError> {
        // the group's first table names it; one row per table, so a table has one group
        self.run(
            "CREATE TABLE IF NOT EXISTS dogana_groups (
                table_name VARCHAR NOT NULL,
                group_id   VARCHAR NOT NULL
             )",
            &[],
        )?;
        let Some(id) = tables.first() else {
            return Ok(());
        };
        for t in tables {
            let p = [DValue::Text(t.clone()), DValue::Text(id.clone())];
            self.run("DELETE FROM dogana_groups WHERE table_name = ?1", &p[..1])?;
            self.run(
                "INSERT INTO dogana_groups (table_name, group_id) VALUES (?1, ?2)",
                &p,
            )?;
        }
        Ok(())
    }
}

/// The columns of table or view `table` (schema `main`) in the DuckDB database at `path`, in
/// order, each with its type as DuckDB spells it (`information_schema.columns`: `BIGINT`,
/// `DECIMAL(12,2)`, `TIMESTAMP WITH TIME ZONE`…); None when the database holds no such table.
/// The file is opened read-only (waiting for a writer's lock as a reader of the store does)
/// and nothing in it changes; it need not be a dogana store.
pub fn table_columns(
    path: &Path,
    table: &str,
) -> Result<Option<Vec<(String, String)>>, StoreError> {
    if !path.is_file() {
        return Err(StoreError::NotAStore(format!(
            "{} does not exist",
            path.display()
        )));
    }
    let conn = connect(path, false, &DuckDbOptions::default())?;
    let mut stmt = conn
        .prepare(
            "SELECT column_name, data_type FROM information_schema.columns
             WHERE table_schema = 'main' AND table_name = ? ORDER BY ordinal_position",
        )
        .duck()?;
    let cols = stmt
        .query_map([table], |r| Ok((r.get(0)?, r.get(1)?)))
        .and_then(|rows| rows.collect::<Result<Vec<(String, String)>, _>>())
        .duck()?;
    Ok(if cols.is_empty() { None } else { Some(cols) })
}
