//! The SQLite backend: one database file holding published tables, their ledgers and every
//! receipt, behind the engine's port.

use std::path::{Path, PathBuf};
use std::time::Duration;

use dogana::{Contract, FromWire, Ledger, LedgerRows, Outcome, Receipt, Wire};
use dogana_receiver::sql::{ident_list, keys_outside_query, quote_ident, row_value};
use dogana_receiver::{
    Backend, Batch, Column, Datum, KeysFrom, KeysOutside, Layout, Open, ReceiptRow, Staged, Step,
    StoreError, Txn,
};
use rusqlite::types::{ToSqlOutput, Value as SqlValue, ValueRef};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};

use crate::sql::sql_type;

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
    for (key, region) in &rows.upserted {
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
}

fn sqlite(e: rusqlite::Error) -> StoreError {
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
            let conn = Connection::open_with_flags(
                path,
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
            .sql()?;
            conn.busy_timeout(options.busy_timeout).sql()?;
            match store_objects(&conn) {
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
            })
        }
    }
}

impl Sqlite {
    fn open_for_writing(path: &Path, options: &StoreOptions) -> Result<Sqlite, StoreError> {
        let shown = path.display().to_string();
        let conn = Connection::open(path).sql()?;
        conn.busy_timeout(options.busy_timeout).sql()?;
        match store_objects(&conn) {
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
        let mode: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
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
        Ok(Sqlite {
            conn,
            path: path.to_path_buf(),
            options: options.clone(),
            write: true,
            rows: true,
        })
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

    /// The published table's indexes, as (name, DDL): a UNIQUE index on the key, which
    /// upserts, tombstones and the keys_elsewhere check use, and an index on the window
    /// column, which replace_window uses (unless [`StoreOptions::window_index`] is off).
    fn indexes(&self, contract: &Contract) -> Vec<(String, String)> {
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
        if let (Some(w), true) = (contract.window_column(), self.options.window_index) {
            if key.first().map(String::as_str) != Some(w) {
                let name = quote_ident(&format!("dogana_window__{table}"));
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
        self.conn.execute_batch(sql).map_err(|e| match e {
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
        })
    }

    fn commit(&mut self) -> Result<(), StoreError> {
        self.conn.execute_batch("COMMIT").sql()
    }

    fn rollback(&mut self) {
        let _ = self.conn.execute_batch("ROLLBACK");
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
        let (srows, stombs) = staging(table);
        // columns without a declared type: values keep the storage class they are bound with
        let cols: Vec<String> = (0..layout.loaded.len()).map(|i| format!("c{i}")).collect();
        let keys: Vec<String> = (0..layout.key.len()).map(|i| format!("k{i}")).collect();
        let or_none = |v: &[String], none: &str| {
            if v.is_empty() {
                none.to_owned()
            } else {
                v.join(", ")
            }
        };
        self.conn
            .execute_batch(&format!(
                "CREATE TABLE {srows} ({}); CREATE TABLE {stombs} ({});",
                or_none(&cols, "c_none"),
                or_none(&keys, "k_none")
            ))
            .sql()
    }

    fn stage_batch(
        &mut self,
        table: &str,
        layout: &Layout,
        batch: &Batch,
    ) -> Result<(), StoreError> {
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

    fn stage_clear(&mut self, table: &str) -> Result<(), StoreError> {
        let (srows, stombs) = staging(table);
        self.conn
            .execute_batch(&format!(
                "DROP TABLE IF EXISTS {srows}; DROP TABLE IF EXISTS {stombs};"
            ))
            .sql()
    }

    fn keys_outside(
        &mut self,
        table: &str,
        q: &KeysOutside<'_>,
    ) -> Result<(u64, Option<Vec<Datum>>), StoreError> {
        let (srows, stombs) = staging(table);
        let hits = keys_outside_query(table, q, &srows, &stombs);
        let lo = datum_sql(&Datum::of_value(&q.window.low, true));
        let hi = datum_sql(&Datum::of_value(&q.window.high, true));
        let count: i64 = self
            .conn
            .query_row(
                &format!("SELECT count(*) FROM ({hits})"),
                params![lo, hi],
                |r| r.get(0),
            )
            .sql()?;
        if count == 0 {
            return Ok((0, None));
        }
        let first: Vec<SqlValue> = self
            .conn
            .query_row(&format!("{hits} LIMIT 1"), params![lo, hi], |r| {
                (0..=q.key.len()).map(|i| r.get(i)).collect()
            })
            .sql()?;
        Ok((
            count as u64,
            Some(first.into_iter().map(sql_datum).collect()),
        ))
    }

    fn execute(&mut self, table: &str, step: Step<'_>) -> Result<(), StoreError> {
        let (srows, stombs) = staging(table);
        let t = quote_ident(table);
        match step {
            Step::Create(columns) => self.create_table(table, columns).sql(),
            Step::Drop => self
                .conn
                .execute_batch(&format!("DROP TABLE main.{t}"))
                .sql(),
            // a bulk load appends rows in file order, then builds each index with one sort:
            // several times faster than keeping them up to date row by row
            Step::BeginBulk(contract) => {
                for (name, _) in self.indexes(contract) {
                    self.conn
                        .execute_batch(&format!("DROP INDEX IF EXISTS main.{name}"))
                        .sql()?;
                }
                Ok(())
            }
            Step::Indexes(contract) => {
                for (_, ddl) in self.indexes(contract) {
                    self.conn.execute_batch(&ddl).sql()?;
                }
                Ok(())
            }
            Step::DeleteAll => self
                .conn
                .execute(&format!("DELETE FROM main.{t}"), [])
                .map(drop)
                .sql(),
            Step::DeleteWindow(column, window) => {
                let lo = datum_sql(&Datum::of_value(&window.low, true));
                let hi = datum_sql(&Datum::of_value(&window.high, true));
                self.conn
                    .execute(
                        &format!(
                            "DELETE FROM main.{t} WHERE {w} >= ?1 AND {w} <= ?2",
                            w = quote_ident(column)
                        ),
                        params![lo, hi],
                    )
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
                self.conn
                    .execute(
                        &format!(
                            "DELETE FROM main.{t} WHERE {} IN (SELECT {} FROM {staging})",
                            row_value(&published),
                            source.join(", ")
                        ),
                        [],
                    )
                    .map(drop)
                    .sql()
            }
            Step::InsertStaged(layout) => {
                if layout.loaded.is_empty() {
                    return Ok(());
                }
                let cols: Vec<String> = (0..layout.loaded.len()).map(|i| format!("c{i}")).collect();
                self.conn
                    .execute(
                        &format!(
                            "INSERT INTO main.{t} ({}) SELECT {} FROM {srows}",
                            ident_list(layout.loaded.iter().map(String::as_str), ""),
                            cols.join(", ")
                        ),
                        [],
                    )
                    .map(drop)
                    .sql()
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
