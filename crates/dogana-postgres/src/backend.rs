//! The Postgres backend behind the engine's port.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use dogana::{FromWire, Ledger, LedgerRows, LogicalType, Outcome, Receipt, Wire};
use dogana_receiver::sql::{ident_list, keys_outside_query_in, quote_ident, KeysOutsideSql};
use dogana_receiver::{
    Backend, Batch, Column, Datum, KeysFrom, KeysOutside, Layout, Open, ReceiptRow, Step,
    StoreError, Txn,
};
use postgres::binary_copy::BinaryCopyInWriter;
use postgres::error::SqlState;
use postgres::types::{ToSql, Type};
use postgres::{Client, GenericClient, NoTls, Row, SimpleQueryMessage, Statement};
use sha2::{Digest, Sha256};

use crate::conninfo::Target;
use crate::values::{bound, staged, staging_type, Pg, PgDate, PgTimestamptz};

/// Postgres's identifier limit, in bytes: a longer name is silently truncated, so it is refused.
const MAX_IDENT: usize = 63;

/// How the Postgres backend connects and waits.
#[derive(Debug, Clone)]
pub struct PostgresOptions {
    schema: Option<String>,
    lock_timeout: Duration,
}

impl Default for PostgresOptions {
    fn default() -> Self {
        PostgresOptions {
            schema: None,
            lock_timeout: Duration::from_secs(60),
        }
    }
}

impl PostgresOptions {
    /// The defaults: the URL's schema (else `public`), a 60 s wait for another writer.
    pub fn new() -> PostgresOptions {
        PostgresOptions::default()
    }

    /// The schema holding the store's tables, when the URL names none (`?schema=NAME` wins).
    pub fn schema(mut self, schema: impl Into<String>) -> PostgresOptions {
        self.schema = Some(schema.into());
        self
    }

    /// How long a writer waits for another writer of the same table (its advisory lock) before
    /// refusing with [`StoreError::Locked`].
    pub fn lock_timeout(mut self, timeout: Duration) -> PostgresOptions {
        self.lock_timeout = timeout;
        self
    }
}

/// The dogana backend on one schema of a Postgres database. Use it through
/// [`Store`](crate::Store), the engine over it.
pub struct Postgres {
    client: Client,
    target: Target,
    schema: String,
    options: PostgresOptions,
    write: bool,
    /// Whether the store keeps its ledgers region by region (every store a writer of this
    /// version opened), rather than as whole documents in a `dogana_ledgers` table (a store of
    /// an earlier version, opened for reading).
    rows: bool,
    /// Staging tables analysed in this transaction (temp tables are not auto-analysed).
    analysed: Vec<String>,
    /// The statements this session has prepared, by their text.
    prepared: Prepared,
    /// The TEMP staging tables this session keeps, by the table they stage for.
    kept: HashMap<String, Kept>,
    /// The published tables' columns read in this transaction, by table.
    types: HashMap<String, Vec<(String, String)>>,
}

/// The statements a session has prepared, by their text: a statement prepared once is bound
/// and executed in one round trip, where an unprepared one takes two (parse, then execute)
/// and is planned again each time. Only statements whose result columns cannot change type
/// are kept (those over dogana's own tables, counts and writes), since Postgres refuses to
/// run a prepared statement whose result type changed; the published rows are read
/// unprepared.
#[derive(Default)]
pub(crate) struct Prepared(HashMap<String, Statement>);

impl Prepared {
    /// A session delivering to many tables prepares statements per table: beyond this many,
    /// they are all dropped and prepared again as they are used.
    const MOST: usize = 256;

    fn get(&mut self, client: &mut impl GenericClient, sql: &str) -> Result<Statement, StoreError> {
        if let Some(s) = self.0.get(sql) {
            return Ok(s.clone());
        }
        let statement = client.prepare(sql).pg()?;
        if self.0.len() >= Self::MOST {
            self.0.clear();
        }
        self.0.insert(sql.to_owned(), statement.clone());
        Ok(statement)
    }
}

/// A staging table pair kept for the next delivery to the same table with the same layout:
/// made once, then emptied, so that a delivery runs no DDL (whose catalog writes made every
/// transaction staging rows wait for a WAL flush at its commit, and whose drop at the end
/// was a third flushed commit). Emptying a TEMP table with DELETE writes no WAL at all.
#[derive(Debug)]
struct Kept {
    /// The columns it was made with, as in its CREATE.
    columns: String,
    /// Live rows staged since it was last emptied.
    rows: u64,
    /// Tombstones staged since it was last emptied.
    tombstones: u64,
    /// Rows deleted (dead, awaiting a vacuum that never comes to TEMP tables) since the
    /// tables were made or last truncated.
    dead: u64,
}

/// Fewer staged rows than this are emptied with DELETE (no WAL, no flush at commit); more,
/// with TRUNCATE (a new file: a catalog write, but the dead rows gone).
const TRUNCATE_FROM: u64 = 4096;

/// A staging table with fewer rows than this is not analysed: the planner's estimate for a
/// table never analysed (at least ten pages' worth of rows) already plans the joins over it
/// as index lookups, and ANALYZE writes the catalog, so the transaction's commit would wait
/// for a WAL flush.
const ANALYZE_FROM: u64 = 1000;

impl std::fmt::Debug for Postgres {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Postgres({}, schema {:?})",
            self.target.shown(),
            self.schema
        )
    }
}

/// An error of the server or the connection, in one line (no password: the server never
/// echoes one, and the URL is shown without it).
#[derive(Debug)]
pub(crate) struct PgError(String);

impl std::fmt::Display for PgError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PgError {}

/// The error and its sources, in one line.
fn chain(e: &postgres::Error) -> String {
    let mut s = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(c) = source {
        let m = c.to_string();
        if !s.contains(&m) {
            s.push_str(&format!(": {m}"));
        }
        source = c.source();
    }
    s.replace(['\n', '\r'], " ")
}

/// The error in one line: the server's message, code, detail and hint, or the client's error
/// and its sources, saying so when the connection is lost.
pub(crate) fn one_line(e: &postgres::Error) -> String {
    let text = match e.as_db_error() {
        Some(db) => {
            let mut s = format!("{} ({})", db.message(), db.code().code());
            if let Some(d) = db.detail() {
                s.push_str(&format!(": {d}"));
            }
            if let Some(h) = db.hint() {
                s.push_str(&format!(" (hint: {h})"));
            }
            s
        }
        None => {
            let mut s = chain(e);
            // a closed connection, or a socket that failed under a read or write (the
            // server stopped mid-message: "Broken pipe", "Connection reset")
            if e.is_closed() || lost_socket(e) {
                s.push_str(" (the connection to the server is lost: nothing of this delivery was committed unless its receipt is stored; deliver again)");
            }
            s
        }
    };
    text.replace(['\n', '\r'], " ")
}

/// Whether the error is the socket failing (an I/O error somewhere in its chain).
fn lost_socket(e: &postgres::Error) -> bool {
    let mut source = std::error::Error::source(e);
    while let Some(c) = source {
        if c.downcast_ref::<std::io::Error>().is_some() {
            return true;
        }
        source = c.source();
    }
    false
}

fn pg(e: postgres::Error) -> StoreError {
    match transient(&e) {
        Some(code) => StoreError::transient("postgres", code, PgError(one_line(&e))),
        None => StoreError::backend("postgres", PgError(one_line(&e))),
    }
}

/// The transient code of a failure retrying later can fix: a connection closed or lost, a
/// server shutting down, starting or out of connections (CONNECTION_LOST), a full disk
/// (DISK_FULL). Anything else the server refused is not transient.
fn transient(e: &postgres::Error) -> Option<dogana_codes::Code> {
    match e.as_db_error().map(|d| d.code()) {
        Some(c) if *c == SqlState::DISK_FULL => Some(dogana_codes::DISK_FULL),
        Some(c)
            if *c == SqlState::ADMIN_SHUTDOWN
                || *c == SqlState::CRASH_SHUTDOWN
                || *c == SqlState::CANNOT_CONNECT_NOW
                || *c == SqlState::TOO_MANY_CONNECTIONS =>
        {
            Some(dogana_codes::CONNECTION_LOST)
        }
        Some(_) => None,
        None if e.is_closed() || lost_socket(e) => Some(dogana_codes::CONNECTION_LOST),
        None => None,
    }
}

fn plain(m: String) -> StoreError {
    StoreError::backend("postgres", PgError(m))
}

trait Pgx<T> {
    fn pg(self) -> Result<T, StoreError>;
}

impl<T> Pgx<T> for Result<T, postgres::Error> {
    fn pg(self) -> Result<T, StoreError> {
        self.map_err(pg)
    }
}

/// The Postgres column type a declared type name is published as.
///
/// ```
/// assert_eq!(dogana_postgres::postgres_type(Some("float")), "DOUBLE PRECISION");
/// assert_eq!(dogana_postgres::postgres_type(Some("decimal(12,2)")), "NUMERIC(12,2)");
/// assert_eq!(dogana_postgres::postgres_type(None), "TEXT");
/// ```
pub fn postgres_type(type_name: Option<&str>) -> String {
    let Some(name) = type_name else {
        return "TEXT".into();
    };
    match LogicalType::from_name(name) {
        Some(LogicalType::Int) => "BIGINT".into(),
        Some(LogicalType::Float) => "DOUBLE PRECISION".into(),
        Some(LogicalType::Bool) => "BOOLEAN".into(),
        Some(LogicalType::Date) => "DATE".into(),
        Some(LogicalType::Datetime) => "TIMESTAMPTZ".into(),
        Some(LogicalType::Str) => "TEXT".into(),
        None => match decimal(name) {
            Some((p, s)) => format!("NUMERIC({p},{s})"),
            None => "TEXT".into(),
        },
    }
}

/// `decimal(p,s)` with 1 ≤ p ≤ 1000 and 0 ≤ s ≤ p.
fn decimal(name: &str) -> Option<(u32, u32)> {
    let inner = name.trim().strip_prefix("decimal(")?.strip_suffix(')')?;
    let (p, s) = inner.split_once(',')?;
    let (p, s): (u32, u32) = (p.trim().parse().ok()?, s.trim().parse().ok()?);
    ((1..=1000).contains(&p) && s <= p).then_some((p, s))
}

/// A short stable name part for a table: Postgres names are at most 63 bytes, and the
/// staging tables' and the key index's names must stay distinct per table.
pub(crate) fn tag(table: &str) -> String {
    let d = Sha256::digest(table.as_bytes());
    d.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// The TEMP tables staging a delivery to `table`: its live rows and its tombstones' keys.
fn staging(table: &str) -> (String, String) {
    let t = tag(table);
    (
        format!(
            "pg_temp.{}",
            quote_ident(&format!("dogana_stage_rows__{t}"))
        ),
        format!(
            "pg_temp.{}",
            quote_ident(&format!("dogana_stage_tombstones__{t}"))
        ),
    )
}

/// The published table's key index.
fn key_index(table: &str) -> String {
    format!("dogana_key__{}", tag(table))
}

/// The store's own tables, index and views in schema `s` (quoted), in the order they are made,
/// but for the view `dogana_ledgers` ([`ledgers_view_sql`], made after them).
///
/// A ledger is kept region by region (`dogana_ledger_regions`, keyed by
/// [`dogana::LedgerRows`]' order-preserving keys, which BYTEA compares bytewise) with its head,
/// tail, publication id and identity in `dogana_ledger_heads`, so a delivery writes the regions
/// it changed, not the whole document (issue 16). The view `dogana_ledgers(table_name,
/// document)` assembles the document byte for byte as `Wire::to_json` writes it (LOADER-10),
/// and `dogana_regions` gives one row per region (LOADER-11).
fn schema_sql(s: &str) -> Vec<String> {
    vec![
        format!(
            "CREATE TABLE IF NOT EXISTS {s}.dogana_ledger_heads (
                table_name     TEXT PRIMARY KEY,
                identity       TEXT NOT NULL,
                publication_id TEXT,
                head           TEXT NOT NULL,
                tail           TEXT NOT NULL
            )"
        ),
        format!(
            "CREATE TABLE IF NOT EXISTS {s}.dogana_ledger_regions (
                table_name TEXT NOT NULL,
                low        BYTEA NOT NULL,
                region     TEXT NOT NULL,
                PRIMARY KEY (table_name, low)
            )"
        ),
        format!(
            "CREATE TABLE IF NOT EXISTS {s}.dogana_receipts (
                table_name        TEXT NOT NULL,
                seq               BIGINT NOT NULL,
                identity          TEXT NOT NULL,
                manifest_identity TEXT NOT NULL,
                outcome           TEXT NOT NULL CHECK (outcome IN ('accepted', 'rejected')),
                accepted_order    BIGINT CHECK ((outcome = 'accepted') = (accepted_order IS NOT NULL)),
                document          TEXT NOT NULL,
                PRIMARY KEY (table_name, seq),
                UNIQUE (table_name, accepted_order)
            )"
        ),
        format!(
            "CREATE INDEX IF NOT EXISTS dogana_receipts_by_manifest
                ON {s}.dogana_receipts (table_name, manifest_identity)"
        ),
        // the tables delivered together (Store::deliver_group): one row per table, lowercase
        format!(
            "CREATE TABLE IF NOT EXISTS {s}.dogana_groups (
                table_name TEXT PRIMARY KEY,
                group_id   TEXT NOT NULL
            )"
        ),
        // the reference's DuckDB view, in Postgres's jsonb (region_index from 0, in key
        // order), read from the region rows rather than the assembled document
        format!(
            "CREATE OR REPLACE VIEW {s}.dogana_regions AS
SELECT r.table_name,
       h.publication_id,
       (row_number() OVER (PARTITION BY r.table_name ORDER BY r.low) - 1)::integer AS region_index,
       r.region::jsonb -> 'low' AS low,
       r.region::jsonb -> 'high' AS high,
       (r.region::jsonb ->> 'low_open')::boolean AS low_open,
       (r.region::jsonb ->> 'high_open')::boolean AS high_open,
       (r.region::jsonb -> 'complete_as_of' ->> '$datetime')::timestamptz AS complete_as_of,
       (r.region::jsonb -> 'deletions_as_of' ->> '$datetime')::timestamptz AS deletions_as_of
FROM {s}.dogana_ledger_regions r JOIN {s}.dogana_ledger_heads h ON h.table_name = r.table_name"
        ),
    ]
}

/// The view `dogana_ledgers(table_name, document)` of schema `s` (quoted) over the region rows.
fn ledgers_view_sql(s: &str) -> String {
    // string_agg's ORDER BY is part of the aggregate (unlike SQLite's group_concat over an
    // ordered subquery): the regions in key order, comma-separated, as LedgerRows::document
    format!(
        "CREATE OR REPLACE VIEW {s}.dogana_ledgers AS
SELECT h.table_name,
       h.head || coalesce((SELECT string_agg(r.region, ',' ORDER BY r.low)
                           FROM {s}.dogana_ledger_regions r
                           WHERE r.table_name = h.table_name), '') || h.tail AS document
FROM {s}.dogana_ledger_heads h"
    )
}

/// Stores a ledger of `table` as the stored one changed by `rows` (see
/// [`Backend::save_ledger_rows`]), in schema `s` (quoted): the head replaced, the removed
/// regions deleted and the upserted ones written, one statement each.
pub(crate) fn write_ledger_rows(
    client: &mut impl GenericClient,
    prepared: &mut Prepared,
    s: &str,
    table: &str,
    identity: &str,
    rows: &LedgerRows,
) -> Result<(), StoreError> {
    let head = prepared.get(
        client,
        &format!(
            "INSERT INTO {s}.dogana_ledger_heads (table_name, identity, publication_id, head, tail)
             VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (table_name) DO UPDATE SET identity = excluded.identity,
                 publication_id = excluded.publication_id, head = excluded.head,
                 tail = excluded.tail"
        ),
    )?;
    let changed = client
        .execute(
            &head,
            &[
                &table,
                &identity,
                &rows.publication_id,
                &rows.head,
                &rows.tail,
            ],
        )
        .pg()?;
    if changed != 1 {
        return Err(StoreError::Corrupt(format!(
            "saving the ledger head of {table:?} changed {changed} rows, not one"
        )));
    }
    if !rows.removed.is_empty() {
        let keys: Vec<&[u8]> = rows.removed.iter().map(Vec::as_slice).collect();
        let delete = prepared.get(
            client,
            &format!(
                "DELETE FROM {s}.dogana_ledger_regions WHERE table_name = $1 AND low = ANY($2)"
            ),
        )?;
        client.execute(&delete, &[&table, &keys]).pg()?;
    }
    if !(rows.changed.is_empty() && rows.added.is_empty()) {
        let (keys, regions): (Vec<&[u8]>, Vec<&str>) = rows
            .upserted()
            .map(|(k, r)| (k.as_slice(), r.as_str()))
            .unzip();
        let upsert = prepared.get(
            client,
            &format!(
                "INSERT INTO {s}.dogana_ledger_regions (table_name, low, region)
                 SELECT $1, k, r FROM unnest($2::bytea[], $3::text[]) AS u(k, r)
                 ON CONFLICT (table_name, low) DO UPDATE SET region = excluded.region"
            ),
        )?;
        client.execute(&upsert, &[&table, &keys, &regions]).pg()?;
    }
    Ok(())
}

/// Stores `ledger` whole as `table`'s, in schema `s` (quoted): every region row replaced.
pub(crate) fn write_whole_ledger(
    client: &mut impl GenericClient,
    prepared: &mut Prepared,
    s: &str,
    table: &str,
    ledger: &Ledger,
) -> Result<(), StoreError> {
    client
        .execute(
            &format!("DELETE FROM {s}.dogana_ledger_regions WHERE table_name = $1"),
            &[&table],
        )
        .pg()?;
    write_ledger_rows(
        client,
        prepared,
        s,
        table,
        &ledger.identity(),
        &ledger.region_rows_since(None),
    )
}

/// The statement taking the advisory lock of a table of schema `schema` (or of the schema
/// itself: [`SCHEMA_LOCK`]), its names written as literals so that it goes in the one round
/// trip that begins the transaction.
fn lock_sql(schema: &str, table: &str) -> String {
    format!(
        "SELECT pg_advisory_xact_lock(hashtext({}), hashtext({}));",
        quote_literal(schema),
        quote_literal(table)
    )
}

/// A string literal of standard SQL (the session sets `standard_conforming_strings`, so a
/// backslash is itself): its quotes doubled.
///
/// ```text
/// it's → 'it''s'
/// ```
fn quote_literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}
/// The second key of the schema's own lock (no table is named `dogana_…`).
const SCHEMA_LOCK: &str = "dogana_schema";

/// `pg_class.relkind` of a view.
const VIEW: i8 = b'v' as i8;

/// Whether a `pg_class.relkind` is a table's (plain or partitioned).
fn is_table(kind: Option<&i8>) -> bool {
    matches!(kind, Some(k) if *k == b'r' as i8 || *k == b'p' as i8)
}

impl Open for Postgres {
    type Options = PostgresOptions;

    /// `path` is the store's URL (`postgres://…`); see [`Postgres::connect`].
    fn open(path: &Path, options: &PostgresOptions, write: bool) -> Result<Postgres, StoreError> {
        Postgres::connect(&path.to_string_lossy(), options, write)
    }
}

impl Postgres {
    /// Connects to the store a URL names: `postgres://USER[:PASSWORD]@HOST[:PORT]/DB?schema=NAME`,
    /// what it leaves out taken from `PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`, `PGDATABASE`
    /// and `~/.pgpass` (or `PGPASSFILE`) as libpq takes them. The schema must exist. A writer
    /// creates dogana's tables and view in it; a reader (`write` false) changes nothing and
    /// refuses a schema without dogana's tables ([`StoreError::NotAStore`]). Every error names
    /// the store without its password, and what to fix.
    pub fn connect(
        url: &str,
        options: &PostgresOptions,
        write: bool,
    ) -> Result<Postgres, StoreError> {
        let mut target = Target::from_url(url).map_err(plain)?;
        let schema = target
            .schema
            .clone()
            .or_else(|| options.schema.clone())
            .unwrap_or_else(|| "public".into());
        target.schema = Some(schema.clone());
        let client = session(&target, write)?;
        let mut db = Postgres {
            client,
            target,
            schema,
            options: options.clone(),
            write,
            rows: false,
            analysed: Vec::new(),
            prepared: Prepared::default(),
            kept: HashMap::new(),
            types: HashMap::new(),
        };
        db.check_schema()?;
        if write {
            db.create_schema()?;
        }
        db.rows = db.keeps_rows()?;
        db.check_tables()?;
        Ok(db)
    }

    /// The store as messages show it: its URL without the password.
    pub fn shown(&self) -> String {
        self.target.shown()
    }

    /// The schema holding the store.
    pub fn schema(&self) -> &str {
        &self.schema
    }

    /// This handle's client, for reading what the engine does not model (and for tests).
    /// Writing to the store's tables behind its back breaks what `verify` checks.
    pub fn client(&mut self) -> &mut Client {
        &mut self.client
    }

    /// Another handle on the same store: a new connection (a new session).
    pub fn try_clone(&self) -> Result<Postgres, StoreError> {
        Ok(Postgres {
            client: session(&self.target, self.write)?,
            target: self.target.clone(),
            schema: self.schema.clone(),
            options: self.options.clone(),
            write: self.write,
            rows: self.rows,
            analysed: Vec::new(),
            prepared: Prepared::default(),
            kept: HashMap::new(),
            types: HashMap::new(),
        })
    }

    /// Replaces a lost session with a new one; what the old one kept (its prepared
    /// statements, its TEMP staging tables) went with it.
    fn new_session(&mut self) -> Result<(), StoreError> {
        self.client = session(&self.target, self.write)?;
        self.prepared = Prepared::default();
        self.kept.clear();
        self.analysed.clear();
        self.types.clear();
        Ok(())
    }

    /// The server's process id of this session (for `pg_terminate_backend` in tests).
    pub fn backend_pid(&mut self) -> Result<i32, StoreError> {
        let row = self.client.query_one("SELECT pg_backend_pid()", &[]).pg()?;
        Ok(row.get(0))
    }

    fn s(&self) -> String {
        quote_ident(&self.schema)
    }

    fn qualified(&self, table: &str) -> String {
        format!("{}.{}", self.s(), quote_ident(table))
    }

    fn context(&self) -> String {
        format!(
            "database {:?} on {} as user {:?}",
            self.target.dbname,
            self.target.server(),
            self.target.user
        )
    }

    fn check_schema(&mut self) -> Result<(), StoreError> {
        let row = self
            .client
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1),
                        has_schema_privilege(current_user, (SELECT oid FROM pg_namespace WHERE nspname = $1), 'USAGE'),
                        has_schema_privilege(current_user, (SELECT oid FROM pg_namespace WHERE nspname = $1), 'CREATE')",
                &[&self.schema],
            )
            .pg()?;
        let (exists, usage, create): (bool, Option<bool>, Option<bool>) =
            (row.get(0), row.get(1), row.get(2));
        let (s, user) = (&self.schema, &self.target.user);
        if !exists {
            let m = format!(
                "schema {s:?} does not exist in {}: create it (CREATE SCHEMA {}) or name an existing one with ?schema=NAME",
                self.context(),
                quote_ident(s)
            );
            return Err(if self.write {
                plain(m)
            } else {
                StoreError::NotAStore(m)
            });
        }
        if usage != Some(true) {
            return Err(plain(format!(
                "role {user:?} may not use schema {s:?} in {}: GRANT USAGE{} ON SCHEMA {} TO {}",
                self.context(),
                if self.write { ", CREATE" } else { "" },
                quote_ident(s),
                quote_ident(user)
            )));
        }
        if self.write && create != Some(true) {
            return Err(plain(format!(
                "role {user:?} may not create tables in schema {s:?} in {}: GRANT CREATE ON SCHEMA {} TO {}, or name a schema it owns",
                self.context(),
                quote_ident(s),
                quote_ident(user)
            )));
        }
        Ok(())
    }

    /// The kind (`pg_class.relkind`: `r` a table, `v` a view, ...) of each of these objects
    /// of the schema that exists.
    fn kinds(&mut self, names: &[&str]) -> Result<HashMap<String, i8>, StoreError> {
        let rows = self
            .client
            .query(
                "SELECT c.relname::text, c.relkind FROM pg_class c
                 JOIN pg_namespace n ON n.oid = c.relnamespace
                 WHERE n.nspname = $1 AND c.relname = ANY($2)",
                &[&self.schema, &names],
            )
            .pg()?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    /// Whether dogana's ledgers (a table of documents, or the view over the region rows) and
    /// receipts exist in the schema.
    fn has_tables(&mut self) -> Result<bool, StoreError> {
        let k = self.kinds(&["dogana_ledgers", "dogana_receipts"])?;
        Ok(is_table(k.get("dogana_receipts"))
            && (is_table(k.get("dogana_ledgers")) || k.get("dogana_ledgers") == Some(&VIEW)))
    }

    /// Whether the store keeps its ledgers region by region (`dogana_ledger_heads` exists).
    fn keeps_rows(&mut self) -> Result<bool, StoreError> {
        let k = self.kinds(&["dogana_ledger_heads"])?;
        Ok(is_table(k.get("dogana_ledger_heads")))
    }

    /// Makes what the schema lacks of dogana's tables and views, converting the ledgers of a
    /// store made by an earlier version (a `dogana_ledgers` table of documents) to region rows:
    /// one transaction under the schema's lock, decided again under it (another writer may
    /// have made or converted the store meanwhile).
    fn create_schema(&mut self) -> Result<(), StoreError> {
        if self.schema_made()? {
            return Ok(());
        }
        self.begin(Txn::Write, &[])?;
        // decided again under the lock: a writer that made the store meanwhile may be
        // delivering already, reading the views that `CREATE OR REPLACE VIEW` would lock
        match self
            .schema_made()
            .and_then(|made| if made { Ok(()) } else { self.make_schema() })
        {
            Ok(()) => self.commit(),
            Err(e) => {
                self.rollback();
                Err(e)
            }
        }
    }

    /// Whether the schema holds every table and view of this version's layout.
    fn schema_made(&mut self) -> Result<bool, StoreError> {
        let k = self.kinds(&[
            "dogana_ledger_heads",
            "dogana_ledger_regions",
            "dogana_receipts",
            "dogana_groups",
            "dogana_ledgers",
            "dogana_regions",
        ])?;
        Ok([
            "dogana_ledger_heads",
            "dogana_ledger_regions",
            "dogana_receipts",
            "dogana_groups",
        ]
        .iter()
        .all(|t| is_table(k.get(*t)))
            && ["dogana_ledgers", "dogana_regions"]
                .iter()
                .all(|v| k.get(*v) == Some(&VIEW)))
    }

    /// [`Postgres::create_schema`]'s work, inside its transaction.
    fn make_schema(&mut self) -> Result<(), StoreError> {
        let s = self.s();
        let earlier = is_table(self.kinds(&["dogana_ledgers"])?.get("dogana_ledgers"));
        let mut documents: Vec<(String, String)> = Vec::new();
        if earlier {
            // no writer of an earlier version may change a document between this read and
            // the drop: it waits (lock_timeout) and then finds the view
            self.client
                .batch_execute(&format!(
                    "LOCK TABLE {s}.dogana_ledgers IN ACCESS EXCLUSIVE MODE"
                ))
                .pg()?;
            documents = self
                .client
                .query(
                    &format!(
                        "SELECT table_name, document FROM {s}.dogana_ledgers
                         ORDER BY table_name COLLATE \"C\""
                    ),
                    &[],
                )
                .pg()?
                .iter()
                .map(|r| (r.get(0), r.get(1)))
                .collect();
        }
        // dogana_regions is replaced in place (the same columns, now over the region rows),
        // so that views of the user's over it live on
        for sql in schema_sql(&s) {
            self.client.batch_execute(&sql).pg()?;
        }
        if earlier {
            let dropped = self
                .client
                .batch_execute(&format!("DROP TABLE {s}.dogana_ledgers"));
            if let Err(e) = dropped {
                if e.code() == Some(&SqlState::DEPENDENT_OBJECTS_STILL_EXIST) {
                    return Err(StoreError::Corrupt(format!(
                        "schema {:?} of {} keeps its ledgers in the earlier layout, and converting it to this version's means replacing the table dogana_ledgers by a view, which objects of yours depend on ({}): drop them (a dbt run makes its views again) and open the store for writing again; nothing was changed",
                        self.schema,
                        self.context(),
                        one_line(&e)
                    )));
                }
                return Err(pg(e));
            }
        }
        self.client.batch_execute(&ledgers_view_sql(&s)).pg()?;
        for (table, document) in documents {
            let ledger = Ledger::from_json(&document).map_err(|e| {
                StoreError::Corrupt(format!(
                    "the stored ledger of {table:?} in schema {:?} does not read back, so the store cannot be converted to this version's layout (nothing was changed): {e}",
                    self.schema
                ))
            })?;
            write_ledger_rows(
                &mut self.client,
                &mut self.prepared,
                &s,
                &table,
                &ledger.identity(),
                &ledger.region_rows_since(None),
            )?;
        }
        Ok(())
    }

    fn check_tables(&mut self) -> Result<(), StoreError> {
        if !self.has_tables()? {
            return Err(StoreError::NotAStore(format!(
                "schema {:?} of {} has no dogana tables (dogana_ledgers, dogana_receipts)",
                self.schema,
                self.context()
            )));
        }
        let privileges = if self.write {
            "SELECT, INSERT, UPDATE"
        } else {
            "SELECT"
        };
        // what the handle reads and writes: a writer the region rows and their heads (and the
        // view, which it reads documents from), a reader the documents (the table of an
        // earlier store, or the view) and the heads' identities
        let mut names = vec!["dogana_ledgers", "dogana_receipts"];
        if self.rows {
            names.push("dogana_ledger_heads");
        }
        if self.write {
            names.push("dogana_ledger_regions");
        }
        let mut privileged: Vec<(String, &str)> = names
            .iter()
            .map(|n| {
                let p = match *n {
                    "dogana_ledger_regions" if self.write => "SELECT, INSERT, UPDATE, DELETE",
                    "dogana_ledgers" if self.rows => "SELECT",
                    _ => privileges,
                };
                (self.qualified(n), p)
            })
            .collect();
        // a writer made dogana_groups when it connected; a reader of an older store may not
        // find it, and reads no group then
        if self.write
            || self
                .kinds(&["dogana_groups"])?
                .contains_key("dogana_groups")
        {
            privileged.push((self.qualified("dogana_groups"), privileges));
        }
        let mut missing = Vec::new();
        for (table, p) in &privileged {
            let held: bool = self
                .client
                .query_one("SELECT has_table_privilege($1, $2)", &[table, p])
                .pg()?
                .get(0);
            if !held {
                missing.push(format!("GRANT {p} ON {table}"));
            }
        }
        if !missing.is_empty() {
            return Err(plain(format!(
                "role {:?} may not {} dogana's tables in schema {:?} of {}: {} TO {}",
                self.target.user,
                if self.write { "write" } else { "read" },
                self.schema,
                self.context(),
                missing.join(", "),
                quote_ident(&self.target.user)
            )));
        }
        Ok(())
    }

    /// Runs one statement and answers how many rows it changed: without parameters, as a
    /// simple query (one round trip); with them, prepared once per session.
    fn run(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64, StoreError> {
        if params.is_empty() {
            let messages = self.client.simple_query(sql).pg()?;
            return Ok(messages
                .iter()
                .find_map(|m| match m {
                    SimpleQueryMessage::CommandComplete(n) => Some(*n),
                    _ => None,
                })
                .unwrap_or(0));
        }
        let statement = self.prepared.get(&mut self.client, sql)?;
        self.client.execute(&statement, params).pg()
    }

    /// The rows of a query whose result columns' types never change, prepared once per
    /// session (see [`Prepared`]).
    fn query(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, StoreError> {
        let statement = self.prepared.get(&mut self.client, sql)?;
        self.client.query(&statement, params).pg()
    }

    /// The published table's columns with their types as Postgres writes them, read once per
    /// transaction (a step that makes or drops the table forgets them).
    fn published_types(&mut self, table: &str) -> Result<Vec<(String, String)>, StoreError> {
        if let Some(types) = self.types.get(table) {
            return Ok(types.clone());
        }
        let schema = self.schema.clone();
        // the table's oid looked up by name first: a prepared statement is planned
        // generically after its fifth run, and a generic plan of a join on the names hashes
        // all of pg_attribute (about 2 ms a delivery, where the index lookup on attrelid this
        // plan makes takes 0.05 ms)
        let rows = self.query(
            "SELECT a.attname::text, format_type(a.atttypid, a.atttypmod)
             FROM pg_attribute a
             JOIN pg_class c ON c.oid = a.attrelid
             WHERE a.attrelid = to_regclass(format('%I.%I', $1::text, $2::text))
               AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
               AND a.attnum > 0 AND NOT a.attisdropped
             ORDER BY a.attnum",
            &[&schema, &table],
        )?;
        let types: Vec<(String, String)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
        self.types.insert(table.to_owned(), types.clone());
        Ok(types)
    }

    /// Analyses a staging table of `table` (its tombstones' or its rows') once per
    /// transaction, before a join plans over it, when it holds enough rows for its statistics
    /// to matter ([`ANALYZE_FROM`]).
    fn analyse(&mut self, table: &str, tombstones: bool) -> Result<(), StoreError> {
        let (srows, stombs) = staging(table);
        let staging = if tombstones { stombs } else { srows };
        let staged =
            self.kept.get(table).map_or(
                u64::MAX,
                |k| {
                    if tombstones {
                        k.tombstones
                    } else {
                        k.rows
                    }
                },
            );
        if staged >= ANALYZE_FROM && !self.analysed.contains(&staging) {
            self.client
                .batch_execute(&format!("ANALYZE {staging}"))
                .pg()?;
            self.analysed.push(staging);
        }
        Ok(())
    }

    /// Empties the kept staging tables of `table`, if rows were staged in them since they
    /// were last emptied: with DELETE when few rows are dead in them, else TRUNCATE.
    fn empty_staging(&mut self, table: &str) -> Result<(), StoreError> {
        let Some(kept) = self.kept.get_mut(table) else {
            return Ok(());
        };
        let staged = kept.rows + kept.tombstones;
        if staged == 0 {
            return Ok(());
        }
        let (srows, stombs) = staging(table);
        let sql = if kept.dead + staged >= TRUNCATE_FROM {
            kept.dead = 0;
            format!("TRUNCATE {srows}, {stombs}")
        } else {
            kept.dead += staged;
            format!("DELETE FROM {srows}; DELETE FROM {stombs};")
        };
        kept.rows = 0;
        kept.tombstones = 0;
        if let Err(e) = self.client.batch_execute(&sql) {
            // what they hold is unknown now: made again by the next delivery
            self.kept.remove(table);
            return Err(pg(e));
        }
        Ok(())
    }

    fn copy(
        &mut self,
        into: &str,
        columns: &[String],
        types: &[Type],
        rows: &mut dyn Iterator<Item = Vec<Pg<'_>>>,
    ) -> Result<(), StoreError> {
        let statement = self.prepared.get(
            &mut self.client,
            &format!(
                "COPY {into} ({}) FROM STDIN (FORMAT binary)",
                columns.join(", ")
            ),
        )?;
        let sink = self.client.copy_in(&statement).pg()?;
        let mut writer = BinaryCopyInWriter::new(sink, types);
        for row in rows {
            writer.write_raw(row.iter()).pg()?;
        }
        writer.finish().pg()?;
        Ok(())
    }
}

impl Postgres {
    /// Opens a transaction of this kind (see the crate's Decisions), taking the write locks.
    fn open_txn(&mut self, txn: Txn, tables: &[&str]) -> Result<(), StoreError> {
        match txn {
            Txn::Read if self.write => self
                .client
                .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
                .pg(),
            Txn::Read => self
                .client
                .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                .pg(),
            Txn::Write => {
                if !self.write {
                    return Err(plain(format!(
                        "{} was opened for reading only",
                        self.shown()
                    )));
                }
                let keys: Vec<&str> = if tables.is_empty() {
                    vec![SCHEMA_LOCK]
                } else {
                    tables.to_vec()
                };
                // one round trip: the transaction, its lock wait and every lock, in order
                let mut sql = format!(
                    "BEGIN ISOLATION LEVEL READ COMMITTED; SET LOCAL lock_timeout = {};",
                    self.options.lock_timeout.as_millis().max(1)
                );
                for table in &keys {
                    sql.push_str(&lock_sql(&self.schema, table));
                }
                if let Err(e) = self.client.batch_execute(&sql) {
                    let locked = e.code() == Some(&SqlState::LOCK_NOT_AVAILABLE);
                    self.rollback();
                    if locked {
                        let which = if keys.len() == 1 {
                            format!("table {:?}", keys[0])
                        } else {
                            format!("one of the tables {keys:?}")
                        };
                        return Err(StoreError::Locked {
                            store: self.shown(),
                            holder: format!(
                                "another writer of {which} holds its advisory lock; waited {:?}",
                                self.options.lock_timeout
                            ),
                        });
                    }
                    return Err(pg(e));
                }
                Ok(())
            }
        }
    }
}

/// A writer's session on the server a URL names, whatever its schema holds (the test harness
/// creates schemas through it).
/// A writer's session with the server a parsed URL names (the catalog's).
pub(crate) fn session_of(target: &Target) -> Result<Client, StoreError> {
    session(target, true)
}

pub(crate) fn raw_session(url: &str) -> Result<Client, StoreError> {
    session(&Target::from_url(url).map_err(plain)?, true)
}

/// A new session: connected, with the session's settings; a reader's transactions are read
/// only.
fn session(target: &Target, write: bool) -> Result<Client, StoreError> {
    let mut client = target
        .config()
        .connect(NoTls)
        .map_err(|e| connect_error(target, &e))?;
    let mut setup = String::from(
        "SET TimeZone = 'UTC'; SET client_min_messages = warning; SET DateStyle = 'ISO'; SET standard_conforming_strings = on;",
    );
    if !write {
        setup.push_str(" SET default_transaction_read_only = on;");
    }
    client.batch_execute(&setup).pg()?;
    Ok(client)
}

/// A failed connection as one line naming what to fix.
fn connect_error(target: &Target, e: &postgres::Error) -> StoreError {
    let (server, user, db) = (target.server(), &target.user, &target.dbname);
    let m = if let Some(d) = e.as_db_error() {
        let code = d.code();
        if *code == SqlState::INVALID_PASSWORD
            || *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
        {
            format!(
                "the server at {server} refused user {user:?} ({}): correct the user or the password (in the URL, PGPASSWORD or ~/.pgpass; this one came from {})",
                d.message(),
                target.password_from
            )
        } else if *code == SqlState::INVALID_CATALOG_NAME {
            format!(
                "database {db:?} does not exist on {server}: create it (createdb {db}) or name another in the URL"
            )
        } else if *code == SqlState::INSUFFICIENT_PRIVILEGE {
            format!(
                "user {user:?} may not connect to database {db:?} on {server} ({}): GRANT CONNECT ON DATABASE {} TO {}",
                d.message(),
                quote_ident(db),
                quote_ident(user)
            )
        } else {
            format!(
                "connecting to database {db:?} on {server} as {user:?} failed: {}",
                one_line(e)
            )
        }
    } else {
        let text = chain(e);
        if text.contains("password missing") {
            format!(
                "the server at {server} asks a password of user {user:?}, and none was given: put it in the URL, PGPASSWORD or ~/.pgpass"
            )
        } else {
            // no answer at all: the server is down or unreachable, which retrying can fix
            return StoreError::transient(
                "postgres",
                dogana_codes::CONNECTION_LOST,
                PgError(format!(
                    "cannot reach the Postgres server at {server} ({text}): start it, or correct the host and port (in the URL, PGHOST, PGPORT)"
                )),
            );
        }
    };
    match transient(e) {
        Some(code) => StoreError::transient("postgres", code, PgError(m)),
        None => plain(m),
    }
}

/// Reads value `i` of a row of the published table, as selected by `read_rows`.
fn datum(row: &Row, i: usize, kind: ReadAs) -> Result<Datum, postgres::Error> {
    Ok(match kind {
        ReadAs::Int => row
            .try_get::<_, Option<i64>>(i)?
            .map_or(Datum::Null, Datum::Int),
        ReadAs::Real => row
            .try_get::<_, Option<f64>>(i)?
            .map_or(Datum::Null, Datum::Real),
        ReadAs::Bool => row
            .try_get::<_, Option<bool>>(i)?
            .map_or(Datum::Null, Datum::Bool),
        ReadAs::Date => row
            .try_get::<_, Option<PgDate>>(i)?
            .map_or(Datum::Null, |d| d.0),
        ReadAs::Datetime => row
            .try_get::<_, Option<PgTimestamptz>>(i)?
            .map_or(Datum::Null, |d| d.0),
        ReadAs::Text => row
            .try_get::<_, Option<String>>(i)?
            .map_or(Datum::Null, Datum::Text),
    })
}

#[derive(Debug, Clone, Copy)]
enum ReadAs {
    Int,
    Real,
    Bool,
    Date,
    Datetime,
    Text,
}

/// How a published column of this Postgres type is selected and read.
fn read_as(pg_type: &str) -> (ReadAs, Option<&'static str>) {
    match pg_type {
        "bigint" => (ReadAs::Int, None),
        "integer" | "smallint" => (ReadAs::Int, Some("int8")),
        "double precision" => (ReadAs::Real, None),
        "real" => (ReadAs::Real, Some("float8")),
        "boolean" => (ReadAs::Bool, None),
        "date" => (ReadAs::Date, None),
        "timestamp with time zone" => (ReadAs::Datetime, None),
        "text" => (ReadAs::Text, None),
        _ => (ReadAs::Text, Some("text")),
    }
}

impl Backend for Postgres {
    const TEXT_TIMES: bool = false;

    fn begin(&mut self, txn: Txn, tables: &[&str]) -> Result<(), StoreError> {
        if self.client.is_closed() {
            // the session was lost (a restarted server, a terminated backend): a delivery
            // starts on a new one; its staging tables went with the old one
            self.new_session()?;
        }
        self.analysed.clear();
        self.types.clear();
        match self.open_txn(txn, tables) {
            // a session lost since the last call shows only now: nothing was done in this
            // transaction yet, so it starts again on a new session
            Err(e)
                if self.client.is_closed()
                    || self.client.is_valid(Duration::from_secs(5)).is_err() =>
            {
                self.new_session()?;
                if txn == Txn::Write && !tables.is_empty() {
                    // the staged rows went with the lost session's TEMP tables
                    return Err(plain(format!(
                        "the session was lost after the rows were staged ({e}); nothing was committed: deliver again"
                    )));
                }
                self.open_txn(txn, tables)
            }
            r => r,
        }
    }

    fn commit(&mut self) -> Result<(), StoreError> {
        self.types.clear();
        self.client.batch_execute("COMMIT").pg()
    }

    fn rollback(&mut self) {
        self.types.clear();
        // the rollback may undo the staging tables' making or emptying: they are made
        // again by the next delivery
        self.kept.clear();
        let _ = self.client.batch_execute("ROLLBACK");
    }

    fn ledger(&mut self, table: &str) -> Result<Option<String>, StoreError> {
        // the view assembles the region rows (or, in a store of the earlier layout, the table
        // holds the document): one statement, in the transaction's snapshot
        let sql = format!(
            "SELECT document FROM {}.dogana_ledgers WHERE table_name = $1",
            self.s()
        );
        let rows = self.query(&sql, &[&table])?;
        Ok(rows.first().map(|r| r.get(0)))
    }

    fn accepted_receipt(
        &mut self,
        table: &str,
        manifest: &str,
    ) -> Result<Option<String>, StoreError> {
        let sql = format!(
            "SELECT document FROM {}.dogana_receipts
             WHERE table_name = $1 AND manifest_identity = $2 AND outcome = 'accepted'
             ORDER BY accepted_order LIMIT 1",
            self.s()
        );
        let rows = self.query(&sql, &[&table, &manifest])?;
        Ok(rows.first().map(|r| r.get(0)))
    }

    fn receipts(&mut self, table: &str) -> Result<Vec<ReceiptRow>, StoreError> {
        let sql = format!(
            "SELECT seq, identity, manifest_identity, outcome, accepted_order, document
             FROM {}.dogana_receipts WHERE table_name = $1 ORDER BY seq",
            self.s()
        );
        let rows = self.query(&sql, &[&table])?;
        Ok(rows
            .iter()
            .map(|r| ReceiptRow {
                seq: r.get(0),
                identity: r.get(1),
                manifest_identity: r.get(2),
                outcome: r.get(3),
                accepted_order: r.get(4),
                document: r.get(5),
            })
            .collect())
    }

    fn tables(&mut self) -> Result<Vec<String>, StoreError> {
        let s = self.s();
        let ledgers = if self.rows {
            "dogana_ledger_heads"
        } else {
            "dogana_ledgers"
        };
        let sql = format!(
            "SELECT table_name FROM (SELECT table_name FROM {s}.{ledgers}
             UNION SELECT table_name FROM {s}.dogana_receipts) t
             ORDER BY table_name COLLATE \"C\""
        );
        let rows = self.query(&sql, &[])?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    fn published_columns(&mut self, table: &str) -> Result<Option<Vec<String>>, StoreError> {
        let cols: Vec<String> = self
            .published_types(table)?
            .into_iter()
            .map(|(c, _)| c)
            .collect();
        Ok(if cols.is_empty() { None } else { Some(cols) })
    }

    fn stage_create(&mut self, table: &str, layout: &Layout) -> Result<(), StoreError> {
        if table.len() > MAX_IDENT {
            return Err(StoreError::TableName(format!(
                "{table:?} is {} bytes long; Postgres names are at most {MAX_IDENT} bytes",
                table.len()
            )));
        }
        if let Some(c) = layout.loaded.iter().find(|c| c.len() > MAX_IDENT) {
            return Err(plain(format!(
                "column {c:?} is {} bytes long; Postgres names are at most {MAX_IDENT} bytes: rename it in the delivered file",
                c.len()
            )));
        }
        let (srows, stombs) = staging(table);
        let pg_name = |t: &Option<String>| staging_type(t.as_deref()).name().to_owned();
        let cols: Vec<String> = layout
            .types
            .iter()
            .enumerate()
            .map(|(i, t)| format!("c{i} {}", pg_name(t)))
            .collect();
        let keys: Vec<String> = layout
            .key
            .iter()
            .enumerate()
            .map(|(i, (_, t))| format!("k{i} {}", pg_name(t)))
            .collect();
        let or_none = |v: Vec<String>, none: &str| {
            if v.is_empty() {
                format!("{none} TEXT")
            } else {
                v.join(", ")
            }
        };
        let (cols, keys) = (or_none(cols, "c_none"), or_none(keys, "k_none"));
        let columns = format!("{cols}; {keys}");
        if self.kept.get(table).is_some_and(|k| k.columns == columns) {
            return self.empty_staging(table);
        }
        self.kept.remove(table);
        self.client
            .batch_execute(&format!(
                "DROP TABLE IF EXISTS {srows}; DROP TABLE IF EXISTS {stombs};
                 CREATE TEMP TABLE {srows} ({cols}); CREATE TEMP TABLE {stombs} ({keys});"
            ))
            .pg()?;
        self.kept.insert(
            table.to_owned(),
            Kept {
                columns,
                rows: 0,
                tombstones: 0,
                dead: 0,
            },
        );
        Ok(())
    }

    fn stage_batch(
        &mut self,
        table: &str,
        layout: &Layout,
        batch: &Batch,
    ) -> Result<(), StoreError> {
        let (srows, stombs) = staging(table);
        let row_types: Vec<Type> = layout
            .types
            .iter()
            .map(|t| staging_type(t.as_deref()))
            .collect();
        let key_types: Vec<Type> = layout
            .key
            .iter()
            .map(|(_, t)| staging_type(t.as_deref()))
            .collect();
        let (live, tombs) = batch.rows().fold((0usize, 0usize), |(l, t), r| {
            if r.tombstone {
                (l, t + 1)
            } else {
                (l + 1, t)
            }
        });
        if let Some(kept) = self.kept.get_mut(table) {
            // counted before the copy: rows a failed copy left behind are emptied too
            kept.rows += live as u64;
            kept.tombstones += tombs as u64;
        }
        for (tombstone, n, into, types, prefix) in [
            (false, live, &srows, &row_types, "c"),
            (true, tombs, &stombs, &key_types, "k"),
        ] {
            if n == 0 {
                continue;
            }
            let (columns, types): (Vec<String>, Vec<Type>) = if types.is_empty() {
                (vec![format!("{prefix}_none")], vec![Type::TEXT])
            } else {
                (
                    (0..types.len()).map(|i| format!("{prefix}{i}")).collect(),
                    types.clone(),
                )
            };
            let mut rows = batch
                .rows()
                .filter(|r| r.tombstone == tombstone)
                .map(|row| {
                    if row.is_empty() {
                        return vec![Pg::Null];
                    }
                    types
                        .iter()
                        .enumerate()
                        .map(|(k, ty)| {
                            if k < row.len() {
                                staged(row.get(k), ty)
                            } else {
                                Pg::Null
                            }
                        })
                        .collect::<Vec<_>>()
                });
            self.copy(into, &columns, &types, &mut rows)?;
        }
        Ok(())
    }

    fn stage_clear(&mut self, table: &str) -> Result<(), StoreError> {
        if self.client.is_closed() {
            return Ok(()); // a lost session took its TEMP tables with it
        }
        if self.kept.contains_key(table) {
            // kept for the next delivery, emptied (outside a transaction: a DELETE of TEMP
            // rows commits without waiting for a WAL flush)
            return self.empty_staging(table);
        }
        let (srows, stombs) = staging(table);
        self.client
            .batch_execute(&format!(
                "DROP TABLE IF EXISTS {srows}; DROP TABLE IF EXISTS {stombs};"
            ))
            .pg()
    }

    fn keys_outside(
        &mut self,
        table: &str,
        q: &KeysOutside<'_>,
    ) -> Result<(u64, Option<Vec<Datum>>), StoreError> {
        let (srows, stombs) = staging(table);
        self.analyse(table, false)?;
        self.analyse(table, true)?;
        let t = self.qualified(table);
        let (low, cast_low) = bound(&q.window.low);
        let (high, cast_high) = bound(&q.window.high);
        let types: HashMap<String, String> = self.published_types(table)?.into_iter().collect();
        let mut select: Vec<String> = Vec::new();
        let mut kinds: Vec<ReadAs> = Vec::new();
        for c in q
            .key
            .iter()
            .map(String::as_str)
            .chain(std::iter::once(q.column))
        {
            let (kind, cast) = read_as(types.get(c).map_or("text", String::as_str));
            let col = format!("p.{}", quote_ident(c));
            select.push(match cast {
                Some(to) => format!("{col}::{to}"),
                None => col,
            });
            kinds.push(kind);
        }
        let hits = keys_outside_query_in(
            q,
            &KeysOutsideSql {
                table: &t,
                rows: &srows,
                tombstones: &stombs,
                select: &select,
                low: &format!("$1::{cast_low}"),
                high: &format!("$2::{cast_high}"),
            },
        );
        let params: [&(dyn ToSql + Sync); 2] = [&low, &high];
        let count: i64 = self
            .query(&format!("SELECT count(*) FROM ({hits}) h"), &params)?
            .first()
            .ok_or_else(|| plain("a count answered no row".into()))?
            .get(0);
        if count == 0 {
            return Ok((0, None));
        }
        let row = self
            .client
            .query_one(&format!("{hits} LIMIT 1"), &params)
            .pg()?;
        let first = kinds
            .iter()
            .enumerate()
            .map(|(i, k)| datum(&row, i, *k))
            .collect::<Result<Vec<_>, _>>()
            .pg()?;
        Ok((count as u64, Some(first)))
    }

    fn execute(&mut self, table: &str, step: Step<'_>) -> Result<(), StoreError> {
        let (srows, stombs) = staging(table);
        let t = self.qualified(table);
        let index = quote_ident(&key_index(table));
        match step {
            Step::Create(columns) => {
                let defs: Vec<String> = columns
                    .iter()
                    .map(|c: &Column| {
                        let ty = postgres_type(c.ty.as_deref());
                        let name = quote_ident(&c.name);
                        if c.key {
                            format!("{name} {ty} NOT NULL")
                        } else {
                            format!("{name} {ty}")
                        }
                    })
                    .collect();
                self.types.remove(table);
                self.run(&format!("CREATE TABLE {t} ({})", defs.join(", ")), &[])?;
            }
            Step::Drop => {
                self.types.remove(table);
                self.run(&format!("DROP TABLE {t}"), &[])?;
            }
            // a whole-table load: the key index is built once, after it
            Step::BeginBulk(_) => {
                self.run(&format!("DROP INDEX IF EXISTS {}.{index}", self.s()), &[])?;
            }
            Step::Indexes(contract) => {
                if !contract.key().is_empty() {
                    self.run(
                        &format!(
                            "CREATE INDEX IF NOT EXISTS {index} ON {t} ({})",
                            ident_list(contract.key().iter().map(String::as_str), "")
                        ),
                        &[],
                    )?;
                }
            }
            Step::DeleteAll => {
                // DELETE, not TRUNCATE: TRUNCATE is not MVCC-safe, and a reader's snapshot
                // taken before it would see the table empty beside the old ledger
                self.run(&format!("DELETE FROM {t}"), &[])?;
            }
            Step::DeleteWindow(column, window) => {
                let w = quote_ident(column);
                let (low, cl) = bound(&window.low);
                let (high, ch) = bound(&window.high);
                self.run(
                    &format!("DELETE FROM {t} WHERE {w} >= $1::{cl} AND {w} <= $2::{ch}"),
                    &[&low, &high],
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
                self.analyse(table, matches!(from, KeysFrom::Tombstones))?;
                let on: Vec<String> = key
                    .iter()
                    .zip(&source)
                    .map(|(k, s)| format!("p.{} = s.{s}", quote_ident(k)))
                    .collect();
                self.run(
                    &format!(
                        "DELETE FROM {t} p USING {staging} s WHERE {}",
                        on.join(" AND ")
                    ),
                    &[],
                )?;
            }
            Step::InsertStaged(layout) => {
                if layout.loaded.is_empty() {
                    return Ok(());
                }
                let types: HashMap<String, String> =
                    self.published_types(table)?.into_iter().collect();
                // text staged for a typed column (decimal) is cast to the published type
                let cols: Vec<String> = layout
                    .loaded
                    .iter()
                    .zip(&layout.types)
                    .enumerate()
                    .map(|(i, (name, ty))| {
                        let published = types.get(name).map_or("text", String::as_str);
                        if staging_type(ty.as_deref()) == Type::TEXT && published != "text" {
                            format!("CAST(c{i} AS {published})")
                        } else {
                            format!("c{i}")
                        }
                    })
                    .collect();
                self.run(
                    &format!(
                        "INSERT INTO {t} ({}) SELECT {} FROM {srows}",
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
            let s = self.s();
            return write_whole_ledger(
                &mut self.client,
                &mut self.prepared,
                &s,
                table,
                &Ledger::from_json(document)?,
            );
        }
        let changed = self.run(
            &format!(
                "INSERT INTO {}.dogana_ledgers (table_name, document) VALUES ($1, $2)
                 ON CONFLICT (table_name) DO UPDATE SET document = EXCLUDED.document",
                self.s()
            ),
            &[&table, &document],
        )?;
        if changed != 1 {
            return Err(StoreError::Corrupt(format!(
                "saving the ledger of {table:?} changed {changed} rows, not one"
            )));
        }
        Ok(())
    }

    fn keeps_ledger_rows(&self) -> bool {
        self.rows
    }

    fn ledger_identity(&mut self, table: &str) -> Result<Option<String>, StoreError> {
        if !self.rows {
            return Ok(None);
        }
        let sql = format!(
            "SELECT identity FROM {}.dogana_ledger_heads WHERE table_name = $1",
            self.s()
        );
        let rows = self.query(&sql, &[&table])?;
        Ok(rows.first().map(|r| r.get(0)))
    }

    fn save_ledger_rows(
        &mut self,
        table: &str,
        identity: &str,
        rows: &LedgerRows,
    ) -> Result<(), StoreError> {
        let s = self.s();
        write_ledger_rows(
            &mut self.client,
            &mut self.prepared,
            &s,
            table,
            identity,
            rows,
        )
    }

    fn save_receipt(&mut self, table: &str, receipt: &Receipt) -> Result<(), StoreError> {
        let accepted = receipt.outcome() == Outcome::Accepted;
        let s = self.s();
        // the next seq and accepted_order in the statement that inserts them (writers of a
        // table are serialized by its lock)
        let changed = self.run(
            &format!(
                "INSERT INTO {s}.dogana_receipts
                 (table_name, seq, identity, manifest_identity, outcome, accepted_order, document)
                 SELECT $1, coalesce(max(seq), 0) + 1, $2, $3, $4,
                        CASE WHEN $5 THEN coalesce(max(accepted_order), 0) + 1 END, $6
                 FROM {s}.dogana_receipts WHERE table_name = $1"
            ),
            &[
                &table,
                &receipt.identity(),
                &receipt.manifest().identity(),
                &receipt.outcome().name(),
                &accepted,
                &receipt.to_json(),
            ],
        )?;
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
        let mut select = Vec::new();
        let mut kinds = Vec::new();
        for c in columns {
            let (kind, cast) = read_as(types.get(c).map_or("text", String::as_str));
            let q = quote_ident(c);
            select.push(match cast {
                Some(to) => format!("{q}::{to}"),
                None => q,
            });
            kinds.push(kind);
        }
        let rows = self
            .client
            .query(
                &format!(
                    "SELECT {} FROM {}",
                    select.join(", "),
                    self.qualified(table)
                ),
                &[],
            )
            .pg()?;
        rows.iter()
            .map(|r| {
                kinds
                    .iter()
                    .enumerate()
                    .map(|(i, k)| datum(r, i, *k))
                    .collect::<Result<Vec<_>, _>>()
                    .pg()
            })
            .collect()
    }

    fn group_of(&mut self, table: &str) -> Result<Option<Vec<String>>, StoreError> {
        // a store made before groups has no dogana_groups until a writer opens it
        let exists: bool = self
            .client
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                 WHERE n.nspname = $1 AND c.relname = 'dogana_groups' AND c.relkind IN ('r', 'p'))",
                &[&self.schema],
            )
            .pg()?
            .get(0);
        if !exists {
            return Ok(None);
        }
        let rows = self
            .client
            .query(
                &format!(
                    "SELECT table_name FROM {s}.dogana_groups WHERE group_id =
                     (SELECT group_id FROM {s}.dogana_groups WHERE table_name = $1)
                     ORDER BY table_name COLLATE \"C\"",
                    s = self.s()
                ),
                &[&table.to_ascii_lowercase()],
            )
            .pg()?;
        let tables: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
        Ok(if tables.is_empty() {
            None
        } else {
            Some(tables)
        })
    }

    fn save_group(&mut self, tables: &[String]) -> Result<(), StoreError> {
        // the group's first table names it; one row per table, so a table has one group. The
        // table was made when the writer connected (no CREATE inside a delivery's transaction)
        let Some(id) = tables.first() else {
            return Ok(());
        };
        let sql = format!(
            "INSERT INTO {}.dogana_groups (table_name, group_id) VALUES ($1, $2)
             ON CONFLICT (table_name) DO UPDATE SET group_id = excluded.group_id",
            self.s()
        );
        for t in tables {
            self.run(&sql, &[t, id])?;
        }
        Ok(())
    }
}

/// The columns of table or view `table` in the schema a store URL names
/// (`postgres://…?schema=NAME`, default `public`), in order, each with its type as
/// `format_type` spells it (`bigint`, `numeric(12,2)`, `timestamp with time zone`…); None when
/// the schema holds no such table. A read-only session; nothing changes, and the schema need
/// not be a dogana store.
pub fn table_columns(url: &str, table: &str) -> Result<Option<Vec<(String, String)>>, StoreError> {
    let target = Target::from_url(url).map_err(plain)?;
    let schema = target.schema.clone().unwrap_or_else(|| "public".into());
    let mut client = session(&target, false)?;
    let found = client
        .query_opt(
            "SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = $1 AND c.relname = $2
               AND c.relkind IN ('r', 'p', 'v', 'm', 'f')",
            &[&schema, &table],
        )
        .pg()?;
    let Some(row) = found else {
        return Ok(None);
    };
    let oid: u32 = row.get(0);
    let cols = client
        .query(
            "SELECT attname::text, format_type(atttypid, atttypmod) FROM pg_attribute
             WHERE attrelid = $1 AND attnum > 0 AND NOT attisdropped ORDER BY attnum",
            &[&oid],
        )
        .pg()?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    Ok(Some(cols))
}
