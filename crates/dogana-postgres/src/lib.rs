//! # dogana-postgres: a dogana receiver on Postgres
//!
//! A [`Store`] is the delivery engine of `dogana-receiver` over one schema (by default
//! `public`) of a Postgres database, holding per table:
//!
//! - the **published table**, `SCHEMA."table"`, with the file's columns except the deleted
//!   column, which is never published (PLAN-14). Columns take their declared type: `int`
//!   BIGINT, `float` DOUBLE PRECISION (a NaN stays NaN, as the rows reader gives it), `bool`
//!   BOOLEAN, `str` TEXT, `date` DATE, `datetime` TIMESTAMPTZ, `decimal(p,s)` NUMERIC(p,s);
//!   untyped columns TEXT. Key columns are NOT NULL.
//! - its **ledger**, the view `dogana_ledgers(table_name, document)` with the ledger's
//!   canonical JSON as TEXT (LOADER-10; byte for byte, which jsonb would not keep), kept region
//!   by region in `dogana_ledger_regions(table_name, low BYTEA, region)` with its head, tail,
//!   publication id and identity in `dogana_ledger_heads`, so that a delivery writes only the
//!   regions it changed (a store of the earlier layout, a `dogana_ledgers` table of documents,
//!   is read as it is and converted when first opened for writing); and the view
//!   **`dogana_regions`**, the reference's DuckDB view in jsonb and timestamptz (LOADER-11 to
//!   LOADER-13).
//! - every **receipt**, `dogana_receipts(table_name, seq, identity, manifest_identity,
//!   outcome, accepted_order, document)`, accepted and rejected alike (RECV-11), with
//!   `(table_name, seq)` the primary key and `(table_name, accepted_order)` unique.
//! - its **group**, when it was delivered with others ([`Store::deliver_group`]):
//!   `dogana_groups(table_name, group_id)`, one row per table (lowercase; the group named by
//!   its first table), written in the commit of the group's acceptance. A writer creates the
//!   table when it connects; a reader of a store made before groups finds none.
//!
//! A store is named by a URL, `postgres://USER[:PASSWORD]@HOST[:PORT]/DB?schema=NAME`, and
//! what it leaves out comes from the libpq environment (`PGHOST`, `PGPORT`, `PGUSER`,
//! `PGPASSWORD`, `PGDATABASE`, `PGPASSFILE`, `~/.pgpass`): see [`Postgres::connect`].
//!
//! ## Decisions
//!
//! - **Writers of a table are serialized by an advisory lock**: a write transaction takes
//!   `pg_advisory_xact_lock(hashtext(schema), hashtext(table))` for each table it writes, in
//!   the engine's (sorted) order, so two groups never deadlock, and the first delivery of a
//!   table (no ledger row to lock yet) is serialized too. The wait is bounded by
//!   [`PostgresOptions::lock_timeout`] (`lock_timeout`, 60 s), then [`StoreError::Locked`].
//!   Writers of different tables do not wait on each other.
//! - **Writers run at READ COMMITTED, after the lock**: once a writer holds its table's lock,
//!   no other writer of the table can commit, so each statement's fresh snapshot sees the
//!   latest head, which the engine re-reads to decide again if it moved (RECV-10).
//!   SERIALIZABLE would add aborts and retries and nothing the lock does not already give.
//! - **Readers run at REPEATABLE READ READ ONLY**: one snapshot for every statement of a read,
//!   so the rows come with the ledger that describes them (RECV-13). A handle opened for
//!   reading sets `default_transaction_read_only` too. A writer's decision phase reads at
//!   REPEATABLE READ as well, but not READ ONLY: it creates its TEMP staging tables there.
//! - **Staging in TEMP tables** through binary `COPY … FROM STDIN (FORMAT binary)`, typed as
//!   the published columns (text for decimals, which the rows reader does not parse; inserting
//!   casts them to NUMERIC). TEMP tables are the session's own: other sessions cannot see
//!   them, they write no WAL, and they vanish with a killed client. Their names are
//!   `dogana_stage_rows__HASH` and `dogana_stage_tombstones__HASH`, HASH 16 hex digits of
//!   SHA-256 of the table name (Postgres names are at most 63 bytes). The published table
//!   changes only in the write transaction that saves the ledger and the receipt (RECV-09).
//! - **A session keeps its staging tables from one delivery to the next** (issue 16): made
//!   once per table and layout, emptied after each delivery with `DELETE` (a TEMP table's
//!   rows write no WAL, so the transaction commits without waiting for a flush) or, once
//!   4,096 rows were staged since they were made, with `TRUNCATE` (dead rows are never
//!   vacuumed from a TEMP table). Making and dropping them per delivery wrote the catalog
//!   twice, which made the decision's read transaction and the final drop wait for WAL
//!   flushes of their own: three flushed commits per delivery where one is needed. After a
//!   rollback (which may undo a making or an emptying) they are made again. A staging table
//!   is analysed only when it holds at least 1,000 rows: below that, the planner's estimate
//!   for a table never analysed already plans the joins over it as index lookups, and
//!   ANALYZE writes the catalog too.
//! - **Statements prepared once per session**: an unprepared statement costs two round
//!   trips (parse, then bind and execute) and a plan; the store's own statements are
//!   prepared at their first use and kept (at most 256), so a small delivery makes about
//!   twenty round trips. Statements without parameters go as simple queries (one round
//!   trip), and the write transaction's BEGIN, lock wait and advisory locks go in one. The
//!   published rows are read unprepared: Postgres refuses a prepared statement whose result
//!   types changed, as a published table's may.
//! - **No PRIMARY KEY on a published table, an index on its key**: the engine proves a
//!   delivery's keys unique and deletes every key it inserts, so a constraint would only cost
//!   time; a plain btree index `dogana_key__HASH` on the key columns makes the deletes by key
//!   of upserts and tombstones index lookups. A whole-table load drops it first and builds it
//!   once after. The window column has no index: a window delivery scans.
//! - **A ledger is kept region by region** (issue 16): the document is O(regions) (24 MB at
//!   100,000), and a delivery changes a few of them. `Ledger::region_rows_since` names the
//!   rows a delivery changed; they are written in three statements (the head upserted, the
//!   gone regions deleted with `= ANY`, the new and changed ones upserted from `unnest`). The
//!   region keys are BYTEA, which compares bytewise, the keys' order, so the view's
//!   `string_agg(region, ',' ORDER BY low)` is the document `Wire::to_json` writes. Reads
//!   compare the stored identity with the ledgers the engine keeps before reading the document.
//!   The earlier layout is converted in one transaction under the schema's lock, with the old
//!   table locked against writers of earlier versions; a document that does not read back, or
//!   an object of the user's depending on the old table, stops it and changes nothing.
//! - **DELETE, never TRUNCATE**: TRUNCATE is not MVCC-safe, so a reader whose snapshot
//!   predates it would see an empty table beside the old ledger.
//! - **Names longer than 63 bytes are refused** (a table is [`StoreError::TableName`]; a
//!   column an error before anything is written): Postgres would silently truncate them.
//! - **A lost session is replaced at the next transaction**: after a terminated backend or a
//!   restarted server, the failed operation reports the lost connection (nothing of it is
//!   committed unless its receipt is stored) and the next delivery on the same handle opens a
//!   new session.
//! - **No TLS**: the client connects with `NoTls`; a URL or `PGSSLMODE` asking for
//!   `require` or stronger is refused with a message, never silently downgraded.
//! - **A password never appears in a message**: the store is shown as its URL without the
//!   password, and the server never echoes one.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod backend;
pub mod catalog;
mod conninfo;
pub mod harness;
mod values;

pub use backend::{postgres_type, table_columns, Postgres, PostgresOptions};

/// The delivery engine over Postgres: open it with
/// `Store::new(Postgres::connect(url, &PostgresOptions::default(), true)?)`, or
/// `Store::open(url)`.
pub type Store = dogana_receiver::Store<Postgres>;

pub use dogana_receiver::{
    Datum, Decision, DeliverOptions, Delivery, Format, Snapshot, StoreError, StoredReceipt,
    VerifyReport,
};
pub use postgres;
