//! The SQLite backend: one database file holding published tables, their ledgers and every
//! receipt, behind the engine's port.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dogana::{Contract, FromWire, Ledger, LedgerRows, Outcome, Receipt, Wire};
use dogana_receiver::sql::{
    ident_list, keys_outside_query, quote_ident, row_value, whole_staged_rows,
};
use dogana_receiver::{
    Backend, Batch, Column, Datum, KeysFrom, KeysOutside, Layout, Open, ReceiptRow, Row, Staged,
    Step, StoreError, Txn,
};
use rusqlite::types::{ToSqlOutput, Value as SqlValue, ValueRef};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};

use dogana::LogicalType;

use crate::sql::sql_type;

/// The prefix of every table a whole-table delivery is staged in, in the main database: the
/// prefix, the table, `__`, then the token of the handle that staged it.
const WHOLE_PREFIX: &str = "dogana_whole__";

/// The page cache while a whole table is staged and while indexes are built, in MiB (it bounds
/// the sorter's runs).
const SORT_MIB: u32 = 32;

/// The most parameters, and rows, one statement of a whole-table staging binds.
const WHOLE_PARAMS: usize = 512;
const WHOLE_ROWS: usize = 64;

/// Binds `rows` (each `width` values) to `stmt`, whose VALUES hold as many rows, runs it and
/// answers how many rows it left out (`OR IGNORE`).
fn insert_rows(
    stmt: &mut rusqlite::CachedStatement<'_>,
    rows: &[Row<'_>],
    width: usize,
    buf: &mut String,
) -> Result<usize, StoreError> {
    for (r, row) in rows.iter().enumerate() {
        for k in 0..row.len() {
            let v = staged_sql(row.get(k), buf);
            stmt.raw_bind_parameter(r * width + k + 1, ToSqlOutput::Borrowed(v))
                .sql()?;
        }
    }
    let inserted = stmt.raw_execute().sql()?;
    Ok(rows.len().saturating_sub(inserted))
}

/// The statements a connection keeps prepared: a delivery runs about twenty (rusqlite keeps
/// 16 by default, and a delivery would then prepare most of them again), a few more per
/// table and staging layout.
const STATEMENTS: usize = 64;

/// Numbers the write handles of this process, for their tokens.
static HANDLE_SEQ: AtomicU64 = AtomicU64::new(1);

/// A delivery to a table staged whole: its live rows in a new table of the published columns
/// in `main`, which the commit renames in place of the published table.
#[derive(Debug)]
struct Whole {
    /// The staging table's name in `main`, unquoted.
    name: String,
    /// Its columns, as the published table will have them.
    columns: Vec<Column>,
    /// None until the first batch chose the layout and created the table.
    layout: Option<WholeLayout>,
    /// The last key staged, in the rowid layout.
    last_key: Option<i64>,
    /// Why the staged table does not hold every staged row (a key the rowid or NOT NULL
    /// refused): the engine's checks refuse such a delivery, and it is never published.
    spoiled: Option<String>,
}

/// An index or trigger a user built on a published table, which a full read builds again on
/// the table it publishes.
#[derive(Debug)]
struct UserObject {
    /// `index` or `trigger`.
    kind: String,
    name: String,
    /// Its `CREATE` statement as `sqlite_master` keeps it (naming the published table).
    sql: String,
}

/// Why a full read could not be published: an index or trigger a user built on the published
/// table could not be built again on the delivered rows (a UNIQUE index two of them violate,
/// a collation or function this connection lacks). The delivery failed and nothing changed:
/// the table, its rows, its ledger and what is built on it are as they were, and no receipt
/// was stored (an operational failure, GATE-25). It reaches the caller as
/// [`StoreError::Backend`] of backend `sqlite`, whose source downcasts to it:
///
/// ```
/// # fn why(e: &dogana_sqlite::StoreError) -> Option<String> {
/// use dogana_sqlite::{StoreError, UserObjectError};
/// if let StoreError::Backend { source, .. } = e {
///     if let Some(u) = source.downcast_ref::<UserObjectError>() {
///         return Some(format!("{} {:?} on {:?}", u.kind(), u.name(), u.table()));
///     }
/// }
/// # None }
/// ```
#[derive(Debug)]
pub struct UserObjectError {
    table: String,
    kind: String,
    name: String,
    source: rusqlite::Error,
}

impl UserObjectError {
    /// The published table.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// `index` or `trigger`.
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// The index's or trigger's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// SQLite's error building it: for a UNIQUE index the rows violate, a constraint
    /// violation.
    pub fn sqlite_error(&self) -> &rusqlite::Error {
        &self.source
    }
}

impl std::fmt::Display for UserObjectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (kind, name, table) = (&self.kind, &self.name, &self.table);
        write!(
            f,
            "the full read of table {table:?} was not published: the {kind} {name:?} built on the table cannot be built again on the delivered rows ({}); nothing changed: drop or change the {kind}, or deliver rows it accepts",
            self.source
        )
    }
}

impl std::error::Error for UserObjectError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// How a whole-table staging lays the rows out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WholeLayout {
    /// The single int key, staged column `usize`, is the `INTEGER PRIMARY KEY` (the rowid):
    /// the first batch's keys ascended, so the rows append in key order, with no key index.
    Rowid(usize),
    /// Rows in arrival order, the key (if any) NOT NULL, indexed after the load.
    Arrival,
}

/// The lease of a write handle that stages whole tables: an exclusive lock on a file beside
/// the database, `<db>-dogana-<token>.lock`, held as long as the handle lives. A staging table
/// whose token's file is missing or unlocked belongs to a process that is gone.
#[derive(Debug)]
struct Lease {
    token: String,
    path: PathBuf,
    _file: File,
}

/// How old an unlocked lease file must be before it is taken for a dead handle's: far more
/// than the instant between a handle creating its file and locking it.
const DEAD_LEASE_AGE: std::time::Duration = std::time::Duration::from_secs(10);

/// The lock file of the handle `token` of the store at `db`.
fn lease_path(db: &Path, token: &str) -> PathBuf {
    let mut name = db.file_name().unwrap_or_default().to_os_string();
    name.push(format!("-dogana-{token}.lock"));
    db.with_file_name(name)
}

/// The TEMP tables staging a delivery to `table`: its live rows and its tombstones' keys.
fn staging(table: &str) -> (String, String) {
    (
        format!(
            "temp.{}",
            quote_ident(&format!("dogana_stage_rows__{table}"))
        ),
        format!(
            "temp.{}",
            quote_ident(&format!("dogana_stage_tombstones__{table}"))
        ),
    )
}

/// The store's own tables and views; a contract's table may not be named like them.
///
/// A ledger is kept region by region (`dogana_ledger_regions`, keyed by
/// [`dogana::LedgerRows`]' order-preserving keys) with its head, tail and identity in
/// `dogana_ledger_heads`, so a delivery writes the regions it changed, not the whole document
/// (issue 16). The view `dogana_ledgers(table_name, document)` gives the document as the
/// reference's loader keeps it (LOADER-10), and `dogana_regions` one row per region.
const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS dogana_ledger_heads (
    table_name     TEXT PRIMARY KEY NOT NULL,
    identity       TEXT NOT NULL,
    publication_id TEXT,
    head           TEXT NOT NULL,
    tail           TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS dogana_ledger_regions (
    table_name TEXT NOT NULL,
    low        BLOB NOT NULL,
    region     TEXT NOT NULL,
    PRIMARY KEY (table_name, low)
) WITHOUT ROWID;
CREATE VIEW IF NOT EXISTS dogana_ledgers AS
SELECT h.table_name,
       h.head || coalesce((SELECT group_concat(region, ',')
                           FROM (SELECT region FROM dogana_ledger_regions r
                                 WHERE r.table_name = h.table_name ORDER BY r.low)), '')
              || h.tail AS document
FROM dogana_ledger_heads h;
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
SELECT r.table_name,
       h.publication_id,
       row_number() OVER (PARTITION BY r.table_name ORDER BY r.low) - 1 AS region_index,
       r.region -> '$.low' AS low,
       r.region -> '$.high' AS high,
       json_extract(r.region, '$.low_open') AS low_open,
       json_extract(r.region, '$.high_open') AS high_open,
       json_extract(r.region, '$.complete_as_of."$datetime"') AS complete_as_of,
       json_extract(r.region, '$.deletions_as_of."$datetime"') AS deletions_as_of
FROM dogana_ledger_regions r JOIN dogana_ledger_heads h ON h.table_name = r.table_name;
"#;

/// Whether the store keeps its ledgers region by region (every store this version made or
/// opened for writing), rather than as whole documents in a `dogana_ledgers` table (stores
/// of earlier versions, opened for reading).
fn keeps_rows(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE name = 'dogana_ledger_heads' AND type = 'table'",
        [],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n == 1)
}

/// Runs `step` again while SQLite answers SQLITE_BUSY without waiting, for up to `timeout`.
///
/// SQLite's busy handler is not called where waiting could deadlock: several processes
/// opening a new database at once, each holding a shared lock of its rollback journal and
/// wanting the exclusive one that `PRAGMA journal_mode = WAL` needs, are answered "database
/// is locked" at once (the concurrency suite's processes found it about once in 50 runs).
/// Trying again after the others moved on is what the handler would have done.
fn while_busy<T>(
    timeout: Duration,
    mut step: impl FnMut() -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    let started = std::time::Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        match step() {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy && started.elapsed() < timeout =>
            {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            other => return other,
        }
    }
}

/// Writes the store's tables and views, converting the ledgers of a store made by an earlier
/// version (a `dogana_ledgers` table of documents) to rows; inside the caller's write
/// transaction. A document that does not read back stops the conversion, naming its table.
fn create_schema(conn: &Connection) -> Result<(), StoreError> {
    let old: bool = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name = 'dogana_ledgers' AND type = 'table'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .sql()?
        == 1;
    let mut documents: Vec<(String, String)> = Vec::new();
    if old {
        let mut stmt = conn
            .prepare("SELECT table_name, document FROM dogana_ledgers ORDER BY table_name")
            .sql()?;
        documents = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .and_then(|rows| rows.collect::<Result<_, _>>())
            .sql()?;
        conn.execute_batch("DROP VIEW IF EXISTS dogana_regions; DROP TABLE dogana_ledgers;")
            .sql()?;
    }
    conn.execute_batch(SCHEMA).sql()?;
    for (table, document) in documents {
        let ledger = Ledger::from_json(&document).map_err(|e| {
            StoreError::Corrupt(format!(
                "the stored ledger of {table:?} does not read back, so the store cannot be converted to this version's layout: {e}"
            ))
        })?;
        write_ledger_rows(
            conn,
            &table,
            &ledger.identity(),
            &ledger.region_rows_since(None),
        )?;
    }
    Ok(())
}

/// Stores a ledger as the stored one changed by `rows` (see [`Backend::save_ledger_rows`]).
pub(crate) fn write_ledger_rows(
    conn: &Connection,
    table: &str,
    identity: &str,
    rows: &LedgerRows,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO dogana_ledger_heads (table_name, identity, publication_id, head, tail)
         VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (table_name) DO UPDATE SET identity = excluded.identity,
             publication_id = excluded.publication_id, head = excluded.head, tail = excluded.tail",
    )
    .and_then(|mut s| {
        s.execute(params![
            table,
            identity,
            rows.publication_id,
            rows.head,
            rows.tail
        ])
    })
    .sql()?;
    if !rows.removed.is_empty() {
        let mut delete = conn
            .prepare_cached("DELETE FROM dogana_ledger_regions WHERE table_name = ?1 AND low = ?2")
            .sql()?;
        for key in &rows.removed {
            delete.execute(params![table, key]).sql()?;
        }
    }
    let mut upsert = conn
        .prepare_cached(
            "INSERT INTO dogana_ledger_regions (table_name, low, region) VALUES (?1, ?2, ?3)
             ON CONFLICT (table_name, low) DO UPDATE SET region = excluded.region",
        )
        .sql()?;
    for (key, region) in rows.upserted() {
        upsert.execute(params![table, key, region]).sql()?;
    }
    Ok(())
}

/// Stores `ledger` whole: every region row of `table` replaced.
pub(crate) fn write_whole_ledger(
    conn: &Connection,
    table: &str,
    ledger: &Ledger,
) -> Result<(), StoreError> {
    conn.prepare_cached("DELETE FROM dogana_ledger_regions WHERE table_name = ?1")
        .and_then(|mut s| s.execute([table]))
        .sql()?;
    write_ledger_rows(
        conn,
        table,
        &ledger.identity(),
        &ledger.region_rows_since(None),
    )
}

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
    /// index on the window column built when a window first needs it.
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

    /// Whether a window replacement may build an index on the published table's window
    /// column (default true), which it deletes by: the first one after a full read builds
    /// it, unless an index already leads with that column. Without it the deletion scans.
    ///
    /// ```
    /// use dogana_sqlite::StoreOptions;
    /// let options = StoreOptions::new().window_index(false); // every window deletion scans
    /// # let _ = options;
    /// ```
    pub fn window_index(mut self, yes: bool) -> StoreOptions {
        self.window_index = yes;
        self
    }
}

/// The dogana backend on one SQLite database file. Use it through
/// [`Store`](crate::Store), the engine over it.
#[derive(Debug)]
pub struct Sqlite {
    conn: Connection,
    path: PathBuf,
    options: StoreOptions,
    write: bool,
    /// The ledgers are kept region by region ([`keeps_rows`]).
    rows: bool,
    /// The transaction open, as the engine asked for it (a read one becomes a write one when a
    /// whole-table staging takes the write lock).
    txn: Option<Txn>,
    /// The whole-table stagings of this handle, by published table.
    whole: HashMap<String, Whole>,
    /// This handle's lease, once it staged a whole table.
    lease: Option<Lease>,
    /// The TEMP staging tables this connection holds, by published table: made once per
    /// layout and emptied between deliveries, since DDL costs a delivery of a few rows more
    /// than its rows do (and expires the cached statements). Forgotten on a rollback, which
    /// may have undone their creation.
    temp: HashMap<String, TempStaging>,
}

/// A pair of TEMP staging tables ([`staging`]) this connection holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct TempStaging {
    /// The live rows' columns `c0…`.
    rows: usize,
    /// The tombstones' key columns `k0…`.
    keys: usize,
    /// Whether a row may have been staged since they were last emptied.
    dirty: bool,
}

fn sqlite(e: rusqlite::Error) -> StoreError {
    // a full disk is transient: nothing was committed, and the same call succeeds once
    // there is room
    if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull) {
        return StoreError::transient("sqlite", dogana_codes::DISK_FULL, e);
    }
    StoreError::backend("sqlite", e)
}

/// `sqlite` errors of the engine's port, converted.
trait Sql<T> {
    fn sql(self) -> Result<T, StoreError>;
}

impl<T> Sql<T> for rusqlite::Result<T> {
    fn sql(self) -> Result<T, StoreError> {
        self.map_err(sqlite)
    }
}

/// Whether the database holds the store's four objects; `Some(n)` counts them, `None` when
/// it is not a SQLite database at all.
fn store_objects(conn: &Connection) -> Result<i64, rusqlite::Error> {
    conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE name IN
         ('dogana_ledgers', 'dogana_receipts', 'dogana_receipts_by_manifest', 'dogana_regions')",
        [],
        |r| r.get(0),
    )
}

impl Open for Sqlite {
    type Options = StoreOptions;

    /// For writing: WAL mode, the options' synchronous level, busy timeout and cache, and the
    /// store's tables and `dogana_regions` view. For reading: the file opened read-only, and
    /// nothing in it changed.
    fn open(path: &Path, options: &StoreOptions, write: bool) -> Result<Sqlite, StoreError> {
        let shown = path.display().to_string();
        if write {
            Sqlite::open_for_writing(path, options)
        } else {
            if !path.is_file() {
                return Err(StoreError::NotAStore(format!("{shown} does not exist")));
            }
            let mut conn = Connection::open_with_flags(
                path,
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
            .sql()?;
            let mut objects = store_objects(&conn);
            if objects.as_ref().is_err_and(cannot_share_wal) {
                // A WAL database in a directory this user cannot write (an auditor's copy, a
                // read-only mount): SQLite cannot make the -shm file its readers share. With
                // no -wal file beside it, every committed row is in the database file, which
                // is then read as immutable: no lock, no -shm, nothing written. A -wal file
                // left there holds commits the file lacks: refused, saying so.
                conn = immutable(path)?;
                objects = store_objects(&conn);
            }
            conn.busy_timeout(options.busy_timeout).sql()?;
            conn.set_prepared_statement_cache_capacity(STATEMENTS);
            match objects {
                Ok(4) => {}
                Ok(_) => {
                    return Err(StoreError::NotAStore(format!(
                        "{shown} is a SQLite database without dogana's tables (dogana_ledgers, dogana_receipts)"
                    )))
                }
                Err(rusqlite::Error::SqliteFailure(e, _))
                    if e.code == rusqlite::ErrorCode::NotADatabase =>
                {
                    return Err(StoreError::NotAStore(format!(
                        "{shown} is not a SQLite database"
                    )))
                }
                Err(e) => return Err(sqlite(e)),
            }
            let rows = keeps_rows(&conn).sql()?;
            Ok(Sqlite {
                conn,
                path: path.to_path_buf(),
                options: options.clone(),
                write: false,
                rows,
                txn: None,
                whole: HashMap::new(),
                lease: None,
                temp: HashMap::new(),
            })
        }
    }
}

/// Whether a read-only connection failed because SQLite could not open or create the -shm
/// file WAL readers share (`SQLITE_READONLY_CANTINIT`, `SQLITE_CANTOPEN`).
fn cannot_share_wal(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::ReadOnly | rusqlite::ErrorCode::CannotOpen)
    )
}

/// The database at `path` opened as immutable (read-only, no locks, no -shm): only when no
/// -wal file (or an empty one) is beside it, so the file holds every committed row.
fn immutable(path: &Path) -> Result<Connection, StoreError> {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    if std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0) {
        return Err(StoreError::backend(
            "sqlite",
            format!(
                "{} cannot be read here: its directory is not writable, so SQLite cannot open its write-ahead log, and {} holds commits the database file does not have yet; open it once where it can be written (any dogana reader checkpoints it), or copy it with sqlite3 .backup",
                path.display(),
                std::path::Path::new(&wal).display()
            ),
        ));
    }
    let mut uri = String::from("file:");
    for b in path.to_string_lossy().bytes() {
        match b {
            b'%' | b'?' | b'#' => uri.push_str(&format!("%{b:02X}")),
            b => uri.push(char::from(b)),
        }
    }
    uri.push_str("?immutable=1");
    Connection::open_with_flags(
        uri,
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI,
    )
    .sql()
}

impl Sqlite {
    fn open_for_writing(path: &Path, options: &StoreOptions) -> Result<Sqlite, StoreError> {
        let shown = path.display().to_string();
        let conn = Connection::open(path).sql()?;
        conn.busy_timeout(options.busy_timeout).sql()?;
        conn.set_prepared_statement_cache_capacity(STATEMENTS);
        match while_busy(options.busy_timeout, || store_objects(&conn)) {
            Ok(_) => {}
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::NotADatabase =>
            {
                return Err(StoreError::NotAStore(format!(
                    "{shown} is not a SQLite database"
                )))
            }
            Err(e) => return Err(sqlite(e)),
        }
        if let Some(size) = options.page_size {
            // takes effect only on a database without pages yet
            conn.execute_batch(&format!("PRAGMA page_size = {size}"))
                .sql()?;
        }
        // WAL: readers see one committed state while a writer works, and a commit is one
        // append to the log, atomic after a crash (RECV-09, RECV-13).
        let mode: String = while_busy(options.busy_timeout, || {
            conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        })
        .sql()?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::Corrupt(format!(
                "{shown} cannot use WAL mode (journal_mode is {mode})"
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
        ))
        .sql()?;
        if store_objects(&conn).sql()? < 4 || !keeps_rows(&conn).sql()? {
            conn.execute_batch("BEGIN IMMEDIATE").sql()?;
            // another writer may have made or converted it meanwhile: decided under the lock
            let made = (|| {
                if !keeps_rows(&conn).sql()? {
                    create_schema(&conn)?;
                }
                conn.execute_batch("COMMIT").sql()
            })();
            if let Err(e) = made {
                let _ = conn.execute_batch("ROLLBACK");
                return Err(e);
            }
        }
        let mut store = Sqlite {
            conn,
            path: path.to_path_buf(),
            options: options.clone(),
            write: true,
            rows: true,
            txn: None,
            whole: HashMap::new(),
            lease: None,
            temp: HashMap::new(),
        };
        // the lock files killed processes left beside the database, whether or not they
        // staged anything
        store.remove_dead_lease_files();
        // what a killed process staged is dropped by the next writer: here when the lock is
        // free (a writer busy for longer leaves it to the next whole-table staging)
        if !store.leftovers()?.is_empty() && store.conn.execute_batch("BEGIN IMMEDIATE").is_ok() {
            match store.drop_leftovers() {
                Ok(()) => store.conn.execute_batch("COMMIT").sql()?,
                Err(e) => {
                    store.rollback();
                    return Err(e);
                }
            }
        }
        Ok(store)
    }

    /// The whole-table staging tables in `main` whose handle is gone: its lock file missing
    /// or not locked (flock is released when a process dies, however it dies).
    fn leftovers(&self) -> Result<Vec<String>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT name FROM main.sqlite_master WHERE type = 'table' AND name LIKE ?1")
            .sql()?;
        let names = stmt
            .query_map([format!("{WHOLE_PREFIX}%")], |r| r.get::<_, String>(0))
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .sql()?;
        let mine = self.lease.as_ref().map(|l| l.token.as_str());
        Ok(names
            .into_iter()
            .filter(|n| {
                // LIKE's `_` matches any character
                let Some(token) = n
                    .strip_prefix(WHOLE_PREFIX)
                    .and_then(|rest| rest.rsplit_once("__"))
                    .map(|(_, t)| t)
                else {
                    return false;
                };
                if Some(token) == mine {
                    return false;
                }
                match File::open(lease_path(&self.path, token)) {
                    Err(_) => true,
                    Ok(f) => match f.try_lock() {
                        Ok(()) => true,
                        Err(std::fs::TryLockError::WouldBlock) => false,
                        // a file system without flock: nothing tells a live handle from a
                        // dead one, so nothing is dropped
                        Err(std::fs::TryLockError::Error(_)) => false,
                    },
                }
            })
            .collect())
    }

    /// Removes the lease files (`<db>-dogana-<token>.lock`) of handles that are gone: a file
    /// no process holds locked (flock is released when a process dies, however it dies) and
    /// written more than [`DEAD_LEASE_AGE`] ago, so that a handle between creating its file
    /// and locking it is never taken for dead. A staging table of such a token is a
    /// leftover either way ([`Sqlite::leftovers`]). Best effort: a file that cannot be
    /// listed, opened or removed is left.
    fn remove_dead_lease_files(&self) {
        let Some(name) = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
        else {
            return;
        };
        let dir = match self.path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let prefix = format!("{name}-dogana-");
        let mine = self.lease.as_ref().map(|l| l.path.clone());
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return;
        };
        for e in entries.flatten() {
            let file_name = e.file_name().to_string_lossy().into_owned();
            if !(file_name.starts_with(&prefix) && file_name.ends_with(".lock")) {
                continue;
            }
            let path = e.path();
            if Some(&path) == mine.as_ref() {
                continue;
            }
            let old = e
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > DEAD_LEASE_AGE));
            if !old {
                continue;
            }
            let Ok(f) = File::open(&path) else { continue };
            // locked by nobody: its process is dead; removed while this handle holds it
            if f.try_lock().is_ok() {
                let _ = std::fs::remove_file(&path);
            }
        }
    }

    /// Drops the [`Sqlite::leftovers`] and their lock files; inside a write transaction.
    fn drop_leftovers(&mut self) -> Result<(), StoreError> {
        for name in self.leftovers()? {
            drop_main_table(&self.conn, &name).sql()?;
            if let Some((_, token)) = name.rsplit_once("__") {
                let _ = std::fs::remove_file(lease_path(&self.path, token));
            }
        }
        Ok(())
    }

    /// This handle's token, taking its lease (the locked file) the first time.
    fn lease(&mut self) -> Result<String, StoreError> {
        if let Some(l) = &self.lease {
            return Ok(l.token.clone());
        }
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let token = format!(
            "{}x{nanos}x{}",
            std::process::id(),
            HANDLE_SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let path = lease_path(&self.path, &token);
        let file = File::create(&path)?;
        file.lock()?;
        self.lease = Some(Lease {
            token: token.clone(),
            path,
            _file: file,
        });
        Ok(token)
    }

    /// Creates the whole-table staging table of `table`, its layout chosen from the first
    /// batch: the rowid layout when the key is one int column and the batch's live keys
    /// ascend.
    fn create_whole(&mut self, table: &str, first: Option<&Batch>) -> Result<(), StoreError> {
        let Some(w) = self.whole.get_mut(table) else {
            return Ok(());
        };
        if w.layout.is_some() {
            return Ok(());
        }
        let keys: Vec<usize> = (0..w.columns.len()).filter(|&i| w.columns[i].key).collect();
        let int_key = match keys.as_slice() {
            [k] if w.columns[*k].ty.as_deref().and_then(LogicalType::from_name)
                == Some(LogicalType::Int) =>
            {
                Some(*k)
            }
            _ => None,
        };
        let ascending = |k: usize| {
            let mut last: Option<i64> = None;
            let mut any = false;
            for row in first.into_iter().flat_map(|b| b.rows()) {
                if row.tombstone {
                    continue;
                }
                match row.get(k) {
                    Staged::Int(i) if last.is_none_or(|l| l < i) => last = Some(i),
                    _ => return false,
                }
                any = true;
            }
            any
        };
        let layout = match int_key {
            Some(k) if ascending(k) => WholeLayout::Rowid(k),
            _ => WholeLayout::Arrival,
        };
        let defs: Vec<String> = w
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let ty = sql_type(c.ty.as_deref().unwrap_or("str"));
                let name = quote_ident(&c.name);
                match layout {
                    WholeLayout::Rowid(k) if k == i => format!("{name} INTEGER PRIMARY KEY"),
                    _ if c.key => format!("{name} {ty} NOT NULL"),
                    _ => format!("{name} {ty}"),
                }
            })
            .collect();
        w.layout = Some(layout);
        let sql = format!(
            "CREATE TABLE main.{} ({})",
            quote_ident(&w.name),
            defs.join(", ")
        );
        self.conn.execute_batch(&sql).sql()
    }

    /// The staged live rows of `table` as SQL: the TEMP table, or the whole-table staging
    /// table's columns renamed `c0…` as the TEMP table's are.
    fn staged_rows(&mut self, table: &str) -> Result<String, StoreError> {
        self.create_whole(table, None)?;
        Ok(match self.whole.get(table) {
            None => staging(table).0,
            Some(w) => whole_staged_rows(&w.columns, &w.name),
        })
    }

    /// Whether the published `table`'s key is its rowid (an `INTEGER PRIMARY KEY`, which a
    /// whole-table staging of ascending keys makes): it needs no key index then.
    fn key_is_rowid(&self, table: &str, key: &[String]) -> rusqlite::Result<bool> {
        let [key] = key else {
            return Ok(false);
        };
        let pk: Vec<(String, String)> = self
            .conn
            .prepare_cached("SELECT name, type FROM pragma_table_info(?1, 'main') WHERE pk > 0")?
            .query_map([table], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        Ok(matches!(pk.as_slice(), [(n, t)] if n == key && t.eq_ignore_ascii_case("INTEGER")))
    }

    /// Sets the main database's page cache, in MiB.
    fn cache(&self, mib: u32) -> Result<(), StoreError> {
        self.run_cached(&format!(
            "PRAGMA main.cache_size = -{}",
            u64::from(mib) * 1024
        ))
    }

    /// The published table's columns with their declared types, in order.
    fn published_types(&self, table: &str) -> rusqlite::Result<Vec<(String, String)>> {
        self.conn
            .prepare_cached("SELECT name, type FROM pragma_table_info(?1, 'main') ORDER BY cid")?
            .query_map([table], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect()
    }

    /// Stages a batch of a whole-table staging: live rows into the staging table (created
    /// from the first batch), tombstones into their TEMP table. A row the table refuses (a
    /// repeated or non-integer rowid key, a null key) is left out and spoils the staging:
    /// the keys and values checks refuse that delivery, and a spoiled staging is never
    /// published, so no constraint error stops the staging half way.
    fn stage_whole_batch(
        &mut self,
        table: &str,
        layout: &Layout,
        batch: &Batch,
    ) -> Result<(), StoreError> {
        self.create_whole(table, Some(batch))?;
        let (_, stombs) = staging(table);
        let w = self
            .whole
            .get_mut(table)
            .ok_or_else(|| StoreError::Corrupt(format!("no whole-table staging of {table:?}")))?;
        let width = layout.loaded.len().max(1);
        let one = format!("({})", vec!["?"; width].join(", "));
        let insert = |n: usize| {
            format!(
                "INSERT OR IGNORE INTO main.{} VALUES {}",
                quote_ident(&w.name),
                vec![one.as_str(); n].join(", ")
            )
        };
        // several rows a statement: the statement's cursor stays open from row to row, so an
        // ascending rowid appends without a seek from the root, and the per-statement work
        // is shared
        let chunk = (WHOLE_PARAMS / width).clamp(1, WHOLE_ROWS);
        let mut many = self.conn.prepare_cached(&insert(chunk)).sql()?;
        let mut single = self.conn.prepare_cached(&insert(1)).sql()?;
        let mut tombs = self
            .conn
            .prepare_cached(&format!(
                "INSERT INTO {stombs} VALUES ({})",
                vec!["?"; layout.key.len().max(1)].join(", ")
            ))
            .sql()?;
        let rowid = match w.layout {
            Some(WholeLayout::Rowid(k)) => Some(k),
            _ => None,
        };
        let mut buf = String::new();
        let mut pending: Vec<Row<'_>> = Vec::with_capacity(chunk);
        let mut refused = 0usize;
        for row in batch.rows() {
            if row.tombstone {
                if row.is_empty() {
                    tombs.raw_bind_parameter(1, rusqlite::types::Null).sql()?;
                }
                for k in 0..row.len() {
                    let v = staged_sql(row.get(k), &mut buf);
                    tombs
                        .raw_bind_parameter(k + 1, ToSqlOutput::Borrowed(v))
                        .sql()?;
                }
                tombs.raw_execute().sql()?;
                continue;
            }
            if let Some(k) = rowid {
                match row.get(k) {
                    // a key below the last goes in at its place: correct, only slower
                    Staged::Int(i) => w.last_key = Some(i),
                    other => {
                        if w.spoiled.is_none() {
                            w.spoiled = Some(format!("a key {other:?} that is no integer"));
                        }
                        continue;
                    }
                }
            }
            pending.push(row);
            if pending.len() == chunk {
                refused += insert_rows(&mut many, &pending, width, &mut buf)?;
                pending.clear();
            }
        }
        for row in &pending {
            refused += insert_rows(&mut single, std::slice::from_ref(row), width, &mut buf)?;
        }
        if refused > 0 && w.spoiled.is_none() {
            w.spoiled = Some(format!("{refused} rows with a repeated or null key"));
        }
        Ok(())
    }

    /// Runs one statement without parameters, prepared once per connection (a delivery's
    /// statements differ by table and layout only).
    fn run_cached(&self, sql: &str) -> Result<(), StoreError> {
        self.cached(sql).sql()
    }

    /// Whether the main database has an index of this name.
    fn index_exists(&self, name: &str) -> rusqlite::Result<bool> {
        self.conn
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM main.sqlite_master WHERE type = 'index' AND name = ?1)",
            )?
            .query_row([name], |r| r.get(0))
    }

    /// [`Sqlite::run_cached`], SQLite's error as it is.
    fn cached(&self, sql: &str) -> rusqlite::Result<()> {
        self.conn
            .prepare_cached(sql)
            .and_then(|mut s| s.execute([]))
            .map(drop)
    }

    /// Empties the TEMP staging tables of `table` that this handle holds (a `DELETE` without
    /// a `WHERE`: SQLite frees their pages as a `DROP` would, without touching the schema).
    fn empty_temp(&mut self, table: &str) -> Result<(), StoreError> {
        if !self.temp.get(table).is_some_and(|t| t.dirty) {
            return Ok(());
        }
        let (srows, stombs) = staging(table);
        for name in [srows, stombs] {
            self.run_cached(&format!("DELETE FROM {name}"))?;
        }
        if let Some(t) = self.temp.get_mut(table) {
            t.dirty = false;
        }
        Ok(())
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The SQLite connection, for reading. Writing to the store's tables behind its back
    /// breaks what `verify` checks.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Runs `read` with the stored ledger document of `table` inside one read transaction, so
    /// that whatever it reads of the published rows is the state that ledger describes
    /// (RECV-13).
    pub fn read_consistent<T>(
        &mut self,
        table: &str,
        read: impl FnOnce(&Connection, Option<&str>) -> rusqlite::Result<T>,
    ) -> Result<T, StoreError> {
        self.conn.execute_batch("BEGIN DEFERRED").sql()?;
        let result = (|| {
            let doc = self.ledger(table)?;
            read(&self.conn, doc.as_deref()).sql()
        })();
        match result {
            Ok(v) => {
                self.conn.execute_batch("COMMIT").sql()?;
                Ok(v)
            }
            Err(e) => {
                self.rollback();
                Err(e)
            }
        }
    }

    fn create_table(&self, table: &str, columns: &[Column]) -> rusqlite::Result<()> {
        let defs: Vec<String> = columns
            .iter()
            .map(|c| {
                let ty = sql_type(c.ty.as_deref().unwrap_or("str"));
                let name = quote_ident(&c.name);
                if c.key {
                    format!("{name} {ty} NOT NULL")
                } else {
                    format!("{name} {ty}")
                }
            })
            .collect();
        self.conn.execute_batch(&format!(
            "CREATE TABLE main.{} ({})",
            quote_ident(table),
            defs.join(", ")
        ))
    }

    /// The UNIQUE index on the published table's key, as (name, DDL), which upserts,
    /// tombstones and the keys_elsewhere check use; none when the table is keyless or the key
    /// is the rowid (`rowid_key`).
    fn key_index(&self, contract: &Contract, rowid_key: bool) -> Option<(String, String)> {
        let key = contract.key();
        if key.is_empty() || rowid_key {
            return None;
        }
        let table = contract.table();
        let name = Sqlite::key_index_name(table);
        let ddl = format!(
            "CREATE UNIQUE INDEX IF NOT EXISTS main.{} ON {} ({})",
            quote_ident(&name),
            quote_ident(table),
            ident_list(key.iter().map(String::as_str), "")
        );
        Some((name, ddl))
    }

    /// The name of the UNIQUE index dogana builds on a published table's key.
    fn key_index_name(table: &str) -> String {
        format!("dogana_key__{table}")
    }

    /// The name of the index dogana builds on a published table's window column.
    fn window_index_name(table: &str) -> String {
        format!("dogana_window__{table}")
    }

    /// The indexes and triggers a user built on the published `table`, as `sqlite_master`
    /// keeps them (indexes first, each kind in creation order): every one with a `CREATE`
    /// statement (an autoindex has none) except dogana's own, the key and window indexes.
    fn user_objects(&self, table: &str) -> Result<Vec<UserObject>, StoreError> {
        self.conn
            .prepare_cached(
                "SELECT type, name, sql FROM main.sqlite_master
                 WHERE type IN ('index', 'trigger') AND tbl_name = ?1 COLLATE NOCASE
                   AND sql IS NOT NULL AND name COLLATE NOCASE NOT IN (?2, ?3)
                 ORDER BY type = 'trigger', rowid",
            )
            .and_then(|mut s| {
                s.query_map(
                    params![
                        table,
                        Sqlite::key_index_name(table),
                        Sqlite::window_index_name(table)
                    ],
                    |r| {
                        Ok(UserObject {
                            kind: r.get(0)?,
                            name: r.get(1)?,
                            sql: r.get(2)?,
                        })
                    },
                )?
                .collect()
            })
            .sql()
    }

    /// Builds `objects` ([`Sqlite::user_objects`]) again on the published `table`, in the
    /// caller's transaction, indexes with the small sort cache as dogana's own. The first that
    /// fails stops it with a [`UserObjectError`] naming it.
    fn rebuild_user_objects(&self, table: &str, objects: &[UserObject]) -> Result<(), StoreError> {
        if objects.is_empty() {
            return Ok(()); // most stores: one lookup
        }
        let sorts = objects.iter().any(|o| o.kind == "index");
        if sorts {
            self.cache(self.options.cache_mib.min(SORT_MIB))?;
        }
        let built = objects.iter().try_for_each(|o| {
            self.conn.execute_batch(&o.sql).map_err(|source| {
                StoreError::backend(
                    "sqlite",
                    UserObjectError {
                        table: table.to_owned(),
                        kind: o.kind.clone(),
                        name: o.name.clone(),
                        source,
                    },
                )
            })
        });
        let restored = if sorts {
            self.cache(self.options.cache_mib)
        } else {
            Ok(())
        };
        built.and(restored)
    }

    /// Makes sure the window `column` of the published `table` leads an index before a
    /// window's rows are deleted by it (see docs/decisions.md, "SQLite builds the window index
    /// when a window first needs it"): an index of the user's or the rowid serves as well;
    /// else `dogana_window__<table>` is built, with the small sort cache, in the delivery's
    /// transaction. Nothing is built when [`StoreOptions::window_index`] is off.
    fn ensure_window_index(&self, table: &str, column: &str) -> Result<(), StoreError> {
        if !self.options.window_index {
            return Ok(());
        }
        let led: bool = self
            .conn
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM pragma_index_list(?1, 'main') l
                   JOIN pragma_index_info(l.name, 'main') i ON i.seqno = 0 WHERE i.name = ?2)
                 OR EXISTS (SELECT 1 FROM pragma_table_info(?1, 'main')
                   WHERE name = ?2 AND pk = 1 AND upper(type) = 'INTEGER'
                   AND (SELECT count(*) FROM pragma_table_info(?1, 'main') WHERE pk > 0) = 1)",
            )
            .and_then(|mut s| s.query_row(params![table, column], |r| r.get(0)))
            .sql()?;
        if led {
            return Ok(());
        }
        self.cache(self.options.cache_mib.min(SORT_MIB))?;
        let built = self.conn.execute_batch(&format!(
            "CREATE INDEX main.{} ON {} ({})",
            quote_ident(&Sqlite::window_index_name(table)),
            quote_ident(table),
            quote_ident(column)
        ));
        self.cache(self.options.cache_mib)?;
        built.sql()
    }
}

impl Drop for Sqlite {
    /// Drops what this handle staged whole and never published, then its lease.
    fn drop(&mut self) {
        if self.txn.is_some() {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
        for w in self.whole.values() {
            let _ = drop_main_table(&self.conn, &w.name);
        }
        if let Some(l) = &self.lease {
            let _ = std::fs::remove_file(&l.path);
        }
    }
}

/// Drops the table `name` of the main database, if it exists (a whole-table staging).
fn drop_main_table(conn: &Connection, name: &str) -> rusqlite::Result<()> {
    conn.execute_batch(&format!("DROP TABLE IF EXISTS main.{}", quote_ident(name)))
}

/// A datum as SQLite binds it: dates and datetimes as the protocol's text.
fn datum_sql(v: &Datum) -> SqlValue {
    match v {
        Datum::Null => SqlValue::Null,
        Datum::Int(i) => SqlValue::Integer(*i),
        Datum::Real(x) => SqlValue::Real(*x),
        Datum::Bool(b) => SqlValue::Integer(i64::from(*b)),
        Datum::Text(s) => SqlValue::Text(s.clone()),
        Datum::Date(d) => SqlValue::Text(d.to_string()),
        Datum::Datetime(t) => SqlValue::Text(t.to_string()),
    }
}

fn sql_datum(v: SqlValue) -> Datum {
    match v {
        SqlValue::Null => Datum::Null,
        SqlValue::Integer(i) => Datum::Int(i),
        SqlValue::Real(x) => Datum::Real(x),
        SqlValue::Text(s) => Datum::Text(s),
        SqlValue::Blob(b) => Datum::Text(format!("<{} bytes>", b.len())),
    }
}

fn staged_sql<'a>(v: Staged<'a>, buf: &'a mut String) -> ValueRef<'a> {
    match v {
        Staged::Null => ValueRef::Null,
        Staged::Int(i) => ValueRef::Integer(i),
        Staged::Real(x) => ValueRef::Real(x),
        Staged::Bool(b) => ValueRef::Integer(i64::from(b)),
        Staged::Text(s) => ValueRef::Text(s.as_bytes()),
        // TEXT_TIMES: the engine formats them; kept for completeness
        Staged::Date(d) => {
            *buf = d.to_string();
            ValueRef::Text(buf.as_bytes())
        }
        Staged::Datetime(t) => {
            *buf = t.to_string();
            ValueRef::Text(buf.as_bytes())
        }
    }
}

impl Backend for Sqlite {
    const TEXT_TIMES: bool = true;

    fn begin(&mut self, txn: Txn, _tables: &[&str]) -> Result<(), StoreError> {
        let sql = match txn {
            Txn::Read => "BEGIN DEFERRED",
            Txn::Write if !self.write => {
                return Err(StoreError::backend(
                    "sqlite",
                    format!("{} was opened for reading only", self.path.display()),
                ))
            }
            Txn::Write => "BEGIN IMMEDIATE",
        };
        self.cached(sql).map_err(|e| match e {
            rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::DatabaseBusy => {
                StoreError::Locked {
                    store: self.path.display().to_string(),
                    holder: format!(
                        "another connection holds the write lock; waited {:?}",
                        self.options.busy_timeout
                    ),
                }
            }
            e => sqlite(e),
        })?;
        self.txn = Some(txn);
        Ok(())
    }

    fn commit(&mut self) -> Result<(), StoreError> {
        self.run_cached("COMMIT")?;
        self.txn = None;
        Ok(())
    }

    fn rollback(&mut self) {
        let _ = self.conn.execute_batch("ROLLBACK");
        self.txn = None;
        self.temp.clear();
    }

    fn ledger(&mut self, table: &str) -> Result<Option<String>, StoreError> {
        if !self.rows {
            return self
                .conn
                .prepare_cached("SELECT document FROM dogana_ledgers WHERE table_name = ?1")
                .and_then(|mut s| s.query_row([table], |r| r.get(0)).optional())
                .sql();
        }
        let ends: Option<(String, String)> = self
            .conn
            .prepare_cached("SELECT head, tail FROM dogana_ledger_heads WHERE table_name = ?1")
            .and_then(|mut s| {
                s.query_row([table], |r| Ok((r.get(0)?, r.get(1)?)))
                    .optional()
            })
            .sql()?;
        let Some((head, tail)) = ends else {
            return Ok(None);
        };
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT region FROM dogana_ledger_regions WHERE table_name = ?1 ORDER BY low",
            )
            .sql()?;
        // assembled as the rows are read (the document is held once, not beside its rows);
        // LedgerRows::document's spelling: regions in key order, comma-separated
        let (count, bytes): (i64, i64) = self
            .conn
            .prepare_cached(
                "SELECT count(*), coalesce(sum(octet_length(region)), 0)
                 FROM dogana_ledger_regions WHERE table_name = ?1",
            )
            .and_then(|mut s| s.query_row([table], |r| Ok((r.get(0)?, r.get(1)?))))
            .sql()?;
        let size = head.len() + tail.len() + (bytes + count) as usize;
        let mut document = String::with_capacity(size);
        document.push_str(&head);
        let mut rows = stmt.query([table]).sql()?;
        let mut first = true;
        while let Some(row) = rows.next().sql()? {
            if !first {
                document.push(',');
            }
            first = false;
            document.push_str(
                row.get_ref(0)
                    .and_then(|v| v.as_str().map_err(Into::into))
                    .sql()?,
            );
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
        self.conn
            .prepare_cached("SELECT identity FROM dogana_ledger_heads WHERE table_name = ?1")
            .and_then(|mut s| s.query_row([table], |r| r.get(0)).optional())
            .sql()
    }

    fn save_ledger_rows(
        &mut self,
        table: &str,
        identity: &str,
        rows: &LedgerRows,
    ) -> Result<(), StoreError> {
        write_ledger_rows(&self.conn, table, identity, rows)
    }

    fn accepted_receipt(
        &mut self,
        table: &str,
        manifest: &str,
    ) -> Result<Option<String>, StoreError> {
        self.conn
            .prepare_cached(
                "SELECT document FROM dogana_receipts
                 WHERE table_name = ?1 AND manifest_identity = ?2 AND outcome = 'accepted'
                 ORDER BY accepted_order LIMIT 1",
            )
            .and_then(|mut s| s.query_row([table, manifest], |r| r.get(0)).optional())
            .sql()
    }

    fn receipts(&mut self, table: &str) -> Result<Vec<ReceiptRow>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT seq, identity, manifest_identity, outcome, accepted_order, document
                 FROM dogana_receipts WHERE table_name = ?1 ORDER BY seq",
            )
            .sql()?;
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
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .sql()?;
        Ok(rows)
    }

    fn tables(&mut self) -> Result<Vec<String>, StoreError> {
        // the heads, not the view: a view's row would assemble every document
        let sql = if self.rows {
            "SELECT table_name FROM dogana_ledger_heads UNION SELECT table_name FROM dogana_receipts ORDER BY 1"
        } else {
            "SELECT table_name FROM dogana_ledgers UNION SELECT table_name FROM dogana_receipts ORDER BY 1"
        };
        let mut stmt = self.conn.prepare_cached(sql).sql()?;
        let names = stmt
            .query_map([], |r| r.get(0))
            .and_then(|rows| rows.collect::<Result<Vec<String>, _>>())
            .sql()?;
        Ok(names)
    }

    fn published_columns(&mut self, table: &str) -> Result<Option<Vec<String>>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT name FROM pragma_table_info(?1, 'main')")
            .sql()?;
        let cols = stmt
            .query_map([table], |r| r.get(0))
            .and_then(|rows| rows.collect::<Result<Vec<String>, _>>())
            .sql()?;
        Ok(if cols.is_empty() { None } else { Some(cols) })
    }

    fn stage_create(&mut self, table: &str, layout: &Layout) -> Result<(), StoreError> {
        let want = TempStaging {
            rows: layout.loaded.len(),
            keys: layout.key.len(),
            dirty: false,
        };
        if self.temp.get(table).map(|t| (t.rows, t.keys)) == Some((want.rows, want.keys)) {
            return self.empty_temp(table);
        }
        let (srows, stombs) = staging(table);
        // columns without a declared type: values keep the storage class they are bound with
        let cols: Vec<String> = (0..want.rows).map(|i| format!("c{i}")).collect();
        let keys: Vec<String> = (0..want.keys).map(|i| format!("k{i}")).collect();
        let or_none = |v: &[String], none: &str| {
            if v.is_empty() {
                none.to_owned()
            } else {
                v.join(", ")
            }
        };
        // another layout's, or unknown to this handle: a decision that failed after a group's
        // staging took the write lock may have left TEMP tables committed
        self.temp.remove(table);
        self.conn
            .execute_batch(&format!(
                "DROP TABLE IF EXISTS {srows}; DROP TABLE IF EXISTS {stombs};
                 CREATE TABLE {srows} ({}); CREATE TABLE {stombs} ({});",
                or_none(&cols, "c_none"),
                or_none(&keys, "k_none")
            ))
            .sql()?;
        self.temp.insert(table.to_owned(), want);
        Ok(())
    }

    fn stage_batch(
        &mut self,
        table: &str,
        layout: &Layout,
        batch: &Batch,
    ) -> Result<(), StoreError> {
        if self.whole.contains_key(table) {
            return self.stage_whole_batch(table, layout, batch);
        }
        if let Some(t) = self.temp.get_mut(table) {
            t.dirty = true;
        }
        let (srows, stombs) = staging(table);
        let marks = |n: usize| vec!["?"; n.max(1)].join(", ");
        let mut rows = self
            .conn
            .prepare_cached(&format!(
                "INSERT INTO {srows} VALUES ({})",
                marks(layout.loaded.len())
            ))
            .sql()?;
        let mut tombs = self
            .conn
            .prepare_cached(&format!(
                "INSERT INTO {stombs} VALUES ({})",
                marks(layout.key.len())
            ))
            .sql()?;
        let mut buf = String::new();
        for row in batch.rows() {
            let stmt = if row.tombstone { &mut tombs } else { &mut rows };
            if row.is_empty() {
                stmt.raw_bind_parameter(1, rusqlite::types::Null).sql()?;
            }
            for k in 0..row.len() {
                let v = staged_sql(row.get(k), &mut buf);
                stmt.raw_bind_parameter(k + 1, ToSqlOutput::Borrowed(v))
                    .sql()?;
            }
            stmt.raw_execute().sql()?;
        }
        Ok(())
    }

    /// Empties the staging area of `table` (its TEMP tables kept for the next delivery when
    /// this handle made them, else dropped), and drops a whole-table staging of it.
    fn stage_clear(&mut self, table: &str) -> Result<(), StoreError> {
        if self.temp.contains_key(table) {
            self.empty_temp(table)?;
        } else {
            let (srows, stombs) = staging(table);
            self.conn
                .execute_batch(&format!(
                    "DROP TABLE IF EXISTS {srows}; DROP TABLE IF EXISTS {stombs};"
                ))
                .sql()?;
        }
        if let Some(w) = self.whole.remove(table) {
            // gone already when the commit renamed it in place of the published table
            drop_main_table(&self.conn, &w.name).sql()?;
            if self.whole.is_empty() {
                self.cache(self.options.cache_mib)?;
            }
        }
        Ok(())
    }

    /// Stages the live rows in a new table of the published columns in `main`
    /// (`dogana_whole__…`), the tombstones' keys in their TEMP table. Writing `main` takes
    /// the write lock: the read transaction the engine opened is committed (it wrote nothing
    /// but TEMP tables) and a write one begun, which waits for another writer as long as a
    /// commit does, and the staged table is committed with the decision. When the lock
    /// cannot be had in that time, staged in TEMP tables as usual. See docs/decisions.md.
    fn stage_create_whole(
        &mut self,
        table: &str,
        layout: &Layout,
        columns: &[Column],
    ) -> Result<bool, StoreError> {
        let fits = self.write && self.txn.is_some() && layout.fits_whole(columns);
        if !fits {
            self.stage_create(table, layout)?;
            return Ok(false);
        }
        if self.txn == Some(Txn::Read) {
            self.conn.execute_batch("COMMIT").sql()?;
            self.txn = None;
            if self.conn.execute_batch("BEGIN IMMEDIATE").is_err() {
                self.conn.execute_batch("BEGIN DEFERRED").sql()?;
                self.txn = Some(Txn::Read);
                self.stage_create(table, layout)?;
                return Ok(false);
            }
            self.txn = Some(Txn::Write);
        }
        self.drop_leftovers()?;
        if let Some(w) = self.whole.remove(table) {
            // a staging of this handle that no stage_clear ended
            drop_main_table(&self.conn, &w.name).sql()?;
        }
        let token = self.lease()?;
        // the staging appends (in key or arrival order): every page is written once, and a
        // small cache does
        self.cache(self.options.cache_mib.min(SORT_MIB))?;
        let (srows, stombs) = staging(table);
        let keys: Vec<String> = (0..layout.key.len()).map(|i| format!("k{i}")).collect();
        self.temp.remove(table);
        self.conn
            .execute_batch(&format!(
                "DROP TABLE IF EXISTS {srows}; DROP TABLE IF EXISTS {stombs};
                 CREATE TABLE {stombs} ({});",
                if keys.is_empty() {
                    "k_none".to_owned()
                } else {
                    keys.join(", ")
                }
            ))
            .sql()?;
        self.whole.insert(
            table.to_owned(),
            Whole {
                name: format!("{WHOLE_PREFIX}{table}__{token}"),
                columns: columns.to_vec(),
                layout: None,
                last_key: None,
                spoiled: None,
            },
        );
        Ok(true)
    }

    fn replace_with_staged(&mut self, table: &str, keep: bool) -> Result<(), StoreError> {
        self.create_whole(table, None)?;
        let w = self.whole.get(table).ok_or_else(|| {
            StoreError::Corrupt(format!("no whole-table staging of {table:?} to publish"))
        })?;
        if let Some(why) = &w.spoiled {
            return Err(StoreError::Corrupt(format!(
                "the whole-table staging of {table:?} is not every staged row ({why}); the checks should have refused it"
            )));
        }
        let (t, staged) = (quote_ident(table), quote_ident(&w.name));
        let types: Vec<(String, String)> = w
            .columns
            .iter()
            .map(|c| {
                (
                    c.name.clone(),
                    sql_type(c.ty.as_deref().unwrap_or("str")).to_owned(),
                )
            })
            .collect();
        if keep && self.published_types(table).sql()? != types {
            // the published table keeps its own columns and what is built on it
            let names = ident_list(w.columns.iter().map(|c| c.name.as_str()), "");
            self.conn
                .execute_batch(&format!(
                    "DELETE FROM main.{t};
                     INSERT INTO main.{t} ({names}) SELECT {names} FROM main.{staged};
                     DROP TABLE main.{staged};"
                ))
                .sql()?;
            return Ok(());
        }
        // what a user built on the table goes with it: read here and built again on the new
        // one, in this transaction (a failure rolls the whole delivery back). A table of
        // another row schema (not `keep`, RECOVERY-04) is new, as `Step::Drop` makes it.
        let objects = if keep {
            self.user_objects(table)?
        } else {
            Vec::new()
        };
        // legacy: the rename neither checks nor rewrites the views naming the table, which
        // name the published table before and after
        self.conn
            .execute_batch(&format!(
                "DROP TABLE IF EXISTS main.{t};
                 PRAGMA legacy_alter_table = ON;
                 ALTER TABLE main.{staged} RENAME TO {t};
                 PRAGMA legacy_alter_table = OFF;"
            ))
            .sql()?;
        self.rebuild_user_objects(table, &objects)
    }

    fn keys_outside(
        &mut self,
        table: &str,
        q: &KeysOutside<'_>,
    ) -> Result<(u64, Option<Vec<Datum>>), StoreError> {
        let (_, stombs) = staging(table);
        let srows = self.staged_rows(table)?;
        let hits = keys_outside_query(table, q, &srows, &stombs);
        let lo = datum_sql(&Datum::of_value(&q.window.low, true));
        let hi = datum_sql(&Datum::of_value(&q.window.high, true));
        let count: i64 = self
            .conn
            .prepare_cached(&format!("SELECT count(*) FROM ({hits})"))
            .and_then(|mut s| s.query_row(params![lo, hi], |r| r.get(0)))
            .sql()?;
        if count == 0 {
            return Ok((0, None));
        }
        let first: Vec<SqlValue> = self
            .conn
            .prepare_cached(&format!("{hits} LIMIT 1"))
            .and_then(|mut s| {
                s.query_row(params![lo, hi], |r| {
                    (0..=q.key.len()).map(|i| r.get(i)).collect()
                })
            })
            .sql()?;
        Ok((
            count as u64,
            Some(first.into_iter().map(sql_datum).collect()),
        ))
    }

    fn execute(&mut self, table: &str, step: Step<'_>) -> Result<(), StoreError> {
        let (_, stombs) = staging(table);
        let srows = match step {
            Step::DeleteKeys(..) | Step::InsertStaged(_) => self.staged_rows(table)?,
            _ => String::new(),
        };
        let t = quote_ident(table);
        match step {
            Step::Create(columns) => self.create_table(table, columns).sql(),
            Step::Drop => self
                .conn
                .execute_batch(&format!("DROP TABLE main.{t}"))
                .sql(),
            // a bulk load appends rows in file order, then builds each index with one sort:
            // several times faster than keeping them up to date row by row
            // the window index goes too, and is built again when a window needs it
            Step::BeginBulk(contract) => {
                let key = self.key_index(contract, false).map(|(name, _)| name);
                let window = Sqlite::window_index_name(contract.table());
                for name in key.iter().chain([&window]) {
                    self.conn
                        .execute_batch(&format!("DROP INDEX IF EXISTS main.{}", quote_ident(name)))
                        .sql()?;
                }
                Ok(())
            }
            Step::Indexes(contract) => {
                let rowid = self.key_is_rowid(table, contract.key()).sql()?;
                // SQLite's sorter sizes each in-memory run by the page cache, and keeps one
                // per sorting thread and one filling: a smaller cache while the indexes are
                // built bounds their memory (a few more runs to merge cost little)
                let Some((name, ddl)) = self.key_index(contract, rowid) else {
                    return Ok(());
                };
                if self.index_exists(&name).sql()? {
                    return Ok(()); // most deliveries: a lookup, not three statements parsed
                }
                self.cache(self.options.cache_mib.min(SORT_MIB))?;
                let built = self.conn.execute_batch(&ddl);
                self.cache(self.options.cache_mib)?;
                built.sql()
            }
            Step::DeleteAll => self.run_cached(&format!("DELETE FROM main.{t}")),
            Step::DeleteWindow(column, window) => {
                self.ensure_window_index(table, column)?;
                let lo = datum_sql(&Datum::of_value(&window.low, true));
                let hi = datum_sql(&Datum::of_value(&window.high, true));
                self.conn
                    .prepare_cached(&format!(
                        "DELETE FROM main.{t} WHERE {w} >= ?1 AND {w} <= ?2",
                        w = quote_ident(column)
                    ))
                    .and_then(|mut s| s.execute(params![lo, hi]))
                    .map(drop)
                    .sql()
            }
            Step::DeleteKeys(key, from) => {
                let published: Vec<String> = key.iter().map(|k| quote_ident(k)).collect();
                let (source, staging): (Vec<String>, &str) = match from {
                    KeysFrom::Tombstones => (
                        (0..key.len()).map(|i| format!("k{i}")).collect(),
                        stombs.as_str(),
                    ),
                    KeysFrom::Rows(at) => {
                        (at.iter().map(|i| format!("c{i}")).collect(), srows.as_str())
                    }
                };
                self.run_cached(&format!(
                    "DELETE FROM main.{t} WHERE {} IN (SELECT {} FROM {staging})",
                    row_value(&published),
                    source.join(", ")
                ))
            }
            Step::InsertStaged(layout) => {
                if layout.loaded.is_empty() {
                    return Ok(());
                }
                let cols: Vec<String> = (0..layout.loaded.len()).map(|i| format!("c{i}")).collect();
                self.run_cached(&format!(
                    "INSERT INTO main.{t} ({}) SELECT {} FROM {srows}",
                    ident_list(layout.loaded.iter().map(String::as_str), ""),
                    cols.join(", ")
                ))
            }
        }
    }

    fn save_ledger(&mut self, table: &str, document: &str) -> Result<(), StoreError> {
        if self.rows {
            return write_whole_ledger(&self.conn, table, &Ledger::from_json(document)?);
        }
        self.conn
            .prepare_cached(
                "INSERT INTO dogana_ledgers (table_name, document) VALUES (?1, ?2)
                 ON CONFLICT (table_name) DO UPDATE SET document = excluded.document",
            )
            .and_then(|mut s| s.execute(params![table, document]))
            .map(drop)
            .sql()
    }

    fn save_receipt(&mut self, table: &str, receipt: &Receipt) -> Result<(), StoreError> {
        let accepted = receipt.outcome() == Outcome::Accepted;
        self.conn
            .prepare_cached(
                "INSERT INTO dogana_receipts
                 (table_name, seq, identity, manifest_identity, outcome, accepted_order, document)
                 VALUES (?1,
                         (SELECT coalesce(max(seq), 0) + 1 FROM dogana_receipts WHERE table_name = ?1),
                         ?2, ?3, ?4,
                         CASE WHEN ?5 THEN (SELECT coalesce(max(accepted_order), 0) + 1
                                            FROM dogana_receipts WHERE table_name = ?1) END,
                         ?6)",
            )
            .and_then(|mut s| {
                s.execute(params![
                    table,
                    receipt.identity(),
                    receipt.manifest().identity(),
                    receipt.outcome().name(),
                    accepted,
                    receipt.to_json()
                ])
            })
            .map(drop)
            .sql()
    }

    fn read_rows(
        &mut self,
        table: &str,
        columns: &[String],
    ) -> Result<Vec<Vec<Datum>>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(&format!(
                "SELECT {} FROM main.{} ORDER BY rowid",
                ident_list(columns.iter().map(String::as_str), ""),
                quote_ident(table)
            ))
            .sql()?;
        let mut q = stmt.query([]).sql()?;
        let mut rows = Vec::new();
        while let Some(r) = q.next().sql()? {
            rows.push(
                (0..columns.len())
                    .map(|i| r.get::<_, SqlValue>(i).map(sql_datum))
                    .collect::<Result<Vec<_>, _>>()
                    .sql()?,
            );
        }
        Ok(rows)
    }

    fn group_of(&mut self, table: &str) -> Result<Option<Vec<String>>, StoreError> {
        let exists: i64 = self
            .conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name = 'dogana_groups'",
                [],
                |r| r.get(0),
            )
            .sql()?;
        if exists == 0 {
            return Ok(None);
        }
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT table_name FROM dogana_groups WHERE group_id =
                 (SELECT group_id FROM dogana_groups WHERE table_name = ?1) ORDER BY table_name",
            )
            .sql()?;
        let tables = stmt
            .query_map([table.to_ascii_lowercase()], |r| r.get::<_, String>(0))
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .sql()?;
        Ok(if tables.is_empty() {
            None
        } else {
            Some(tables)
        })
    }

    fn save_group(&mut self, tables: &[String]) -> Result<(), StoreError> {
        // the group's first table names it; one row per table, so a table has one group
        self.conn
            .execute_batch(
                "CREATE TABLE IF NOT EXISTS dogana_groups (
                    table_name TEXT PRIMARY KEY NOT NULL,
                    group_id   TEXT NOT NULL
                 )",
            )
            .sql()?;
        let Some(id) = tables.first() else {
            return Ok(());
        };
        for t in tables {
            self.conn
                .execute(
                    "INSERT INTO dogana_groups (table_name, group_id) VALUES (?1, ?2)
                     ON CONFLICT (table_name) DO UPDATE SET group_id = excluded.group_id",
                    [t, id],
                )
                .sql()?;
        }
        Ok(())
    }
}

/// The columns of table or view `table` in the SQLite database at `path`, in order, each with
/// its declared type as written (`pragma_table_info`; empty for a column declared without
/// one); None when the database holds no such table. The file is opened read-only and nothing
/// in it changes; it need not be a dogana store.
pub fn table_columns(
    path: &Path,
    table: &str,
) -> Result<Option<Vec<(String, String)>>, StoreError> {
    let shown = path.display().to_string();
    if !path.is_file() {
        return Err(StoreError::NotAStore(format!("{shown} does not exist")));
    }
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .sql()?;
    let read = || -> rusqlite::Result<Vec<(String, String)>> {
        let mut stmt =
            conn.prepare("SELECT name, type FROM pragma_table_info(?1, 'main') ORDER BY cid")?;
        let rows = stmt.query_map([table], |r| Ok((r.get(0)?, r.get(1)?)))?;
        rows.collect()
    };
    match read() {
        Ok(cols) if cols.is_empty() => Ok(None),
        Ok(cols) => Ok(Some(cols)),
        Err(rusqlite::Error::SqliteFailure(e, _))
            if e.code == rusqlite::ErrorCode::NotADatabase =>
        {
            Err(StoreError::NotAStore(format!(
                "{shown} is not a SQLite database"
            )))
        }
        Err(e) => Err(sqlite(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn busy() -> rusqlite::Error {
        rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
            Some("database is locked".into()),
        )
    }

    #[test]
    fn a_step_answered_busy_is_tried_again_until_the_timeout() {
        // not a protocol rule: what lets the concurrency suite's processes open a new store at once
        let mut tries = 0;
        let done = while_busy(Duration::from_secs(5), || {
            tries += 1;
            if tries < 3 {
                Err(busy())
            } else {
                Ok(tries)
            }
        });
        assert_eq!(done.unwrap(), 3);
        let started = std::time::Instant::now();
        let gave_up = while_busy(Duration::from_millis(30), || Err::<(), _>(busy()));
        assert!(matches!(
            gave_up,
            Err(rusqlite::Error::SqliteFailure(e, _)) if e.code == rusqlite::ErrorCode::DatabaseBusy
        ));
        assert!(started.elapsed() >= Duration::from_millis(30));
        let other = while_busy(Duration::from_secs(5), || {
            Err::<(), _>(rusqlite::Error::InvalidQuery)
        });
        assert!(matches!(other, Err(rusqlite::Error::InvalidQuery)));
    }
}
