//! # dogana-rows: check a delivered file against its manifest
//!
//! dogana decides from declarations and never reads rows; the receiver does, and reports what
//! it found as [`Check`] values (CHECK-01, LOADER-06). This crate is that reading: it parses a
//! CSV, NDJSON or Parquet delivery **once**, streaming, and checks every fact the manifest and
//! contract declare about the rows, while hashing the bytes for `content_hash` in the same
//! pass. Memory stays bounded (a few MiB of buffers) except for the set of keys, which is kept
//! exactly (never as hashes, which could collide and fail an honest delivery): about 13 bytes
//! per key for a single `int`, `date` or `datetime` key column, the key's encoding plus a
//! table slot for other keys.
//!
//! Speed (figures in `bench/rows.md`): 10 million rows, 700 MB of CSV, take about 0.8 to 1.2 s
//! for every check and the content hash on a two-core virtual machine, under half the time
//! DuckDB takes to count the rows and distinct ids and take the minima and maxima of two
//! columns. The calling thread reads and splits CSV into records in place (lines without
//! quotes 64 bytes at a time with SSE2, other records by `csv-core`, the parser of the `csv`
//! crate); a second thread hashes the bytes (SHA-256 with the CPU's SHA extensions) and parses
//! bound values ahead when the calling thread, which checks, falls behind. A row that passes
//! every check is counted from its parsed values alone; any other row is checked one by one,
//! for the messages.
//!
//! The checks, always in this order and with these names ([`CHECK_NAMES`]):
//!
//! | name | what it compares |
//! | --- | --- |
//! | `parse` | every row has the header's columns, is valid UTF-8, and every bound value parses as its type; datetimes carry an offset (CHECK-06, CHECK-17) |
//! | `rows` | live rows == `manifest.rows`, tombstones == `manifest.tombstones`; a null deleted value is neither (CHECK-02, CHECK-03) |
//! | `deleted` | no null deleted value; a true only in a tombstone shape (CHECK-03, CHECK-05) |
//! | `keys` | every key, live or tombstoned, non-null and unique (CHECK-09) |
//! | `window` | every live row's window value non-null and, for a window delivery, inside the window; a tombstone's may be null, a present one must be inside (CHECK-10, CHECK-11) |
//! | `cursor` | a datetime cursor of a timestamp read in (since, produced_at], an int cursor of a sequence read in (since, generation]; a tombstone's null or inside (CHECK-12 to CHECK-15) |
//! | `schema_hash` | the loaded columns, in file order and without the deleted column, hash to the contract's schema_hash, else the manifest's (CHECK-07, CONTRACT-16 to 18) |
//! | `content_hash` | the bytes hash to the declared content_hash (CHECK-08) |
//!
//! A check that does not apply passes with a detail that says so. A failed check's detail
//! names the first offending row (its line and key) and how many more there are. An honest
//! delivery fails none (CHECK-18); a file that contradicts its manifest fails one and is
//! never an error. [`RowsError`] is for I/O, misuse and the receiver's own failures.
//!
//! ## Decisions
//!
//! - **CSV bools**: `true`/`false`, `True`/`False`, `TRUE`/`FALSE`, `1`/`0` and `t`/`f`
//!   (Postgres) are accepted; anything else fails `parse`. NDJSON bools are JSON booleans.
//! - **Column types** are parsed as [`ColumnType`]: the six names or `decimal(p,s)` with
//!   1 <= p <= 38 and 0 <= s <= p, spelled exactly as the column hash spells them; a mistyped
//!   one (`flaot`, `money`, `decimal(2,5)`) or a column named twice ([`ColumnTypes`]) is
//!   refused before any row is read. [`ColumnType::check`] checks one value: a decimal has at
//!   most s digits after the point and p − s before it (SQL's `numeric(p,s)`, never rounded);
//!   a **float NaN or infinity is refused** (as is a number beyond binary64), never stored as
//!   null — SQLite turns a NaN REAL into NULL, and a NaN compares equal to nothing. The same
//!   holds for [`Cell::parse`] of a float.
//! - **CHECK-11**: a tombstone's window value may be null; a present one must be inside the
//!   window of a window delivery. A live row's may not be null.
//! - **Column types for `schema_hash`**: the contract types only the bound columns, and a CSV
//!   file types nothing, so the receiver gives its column list with [`Options::column_type`]
//!   (from its data contract: ODCS, dbt model or column list; the six names or
//!   `decimal(p,s)`). A file column the list does not name fails `schema_hash` (the file has
//!   other columns). With no list at all while a hash must be checked, [`check_rows`] returns
//!   [`RowsError::ColumnTypesRequired`]: the receiver's configuration, not the delivery, is at
//!   fault. Bound columns always take the contract's type. CSV and Parquet columns hash in
//!   file order; Parquet types come from the file when the list does not name a column.
//! - **NDJSON column order**: JSON objects are unordered (RFC 8259, and many writers sort
//!   keys), so NDJSON columns hash in the order of the receiver's list, which then names every
//!   column, bound ones included; a listed column no line has is a column of nulls, a key not
//!   in the list fails `schema_hash`. Without a list, the keys' order of first appearance.
//! - **Datetimes** follow RFC 3339 with `Z` or `±HH:MM`, `T` or a space (RFC 3339 §5.6), up
//!   to six fractional digits; normalized to UTC, so keys equal as instants are equal.
//! - **Ints** are `-?[0-9]+` within i64 (leading zeros allowed); NDJSON also takes a number
//!   with a zero fraction.
//! - **NDJSON columns** are the keys in order of first appearance (as [`Row`] shows them); a
//!   key a line lacks is null there (so a bound column is never "missing", only null), except
//!   the deleted column: a line without it is a live row (CHECK-04), an explicit `null` fails
//!   `deleted`. An NDJSON file with no rows and no column list names no columns, so its
//!   `schema_hash` check passes with that detail.
//! - **CSV**: RFC 4180 as the `csv` crate reads it (quotes, doubled quotes, fields spanning
//!   lines, CRLF, LF or CR line ends, empty lines skipped). An empty field is null, so an empty
//!   string key cannot travel in CSV. A header is required (an empty file fails `parse`). A
//!   UTF-8 byte order mark is skipped (and hashed). A row's line is where it starts. A file
//!   that **ends inside a quoted field** is truncated (or a quote is never closed): the
//!   record is not a row, and `parse` fails naming the line the quote opened on. A **first
//!   line over 1 MiB** is no header (columns are named in at most 1,024 bytes each): `parse`
//!   fails and the rest is only hashed, never held; a column name over 1,024 bytes fails
//!   `parse`. Values in messages are cut after 40 characters, with their length.
//! - **Line numbers** name rows in details; a repeated `int`/`date`/`datetime` key past line
//!   4,294,967,295 is named "a line after 4294967294".
//! - **Parquet** (feature `parquet`) cannot be streamed, its footer comes last: the bytes are
//!   hashed in one read and the row groups read in a second, with memory bounded by a batch.
//!
//! ```
//! use dogana::{Contract, Deletions, LogicalType, Shape, Window, Date};
//! use dogana_rows::{check_rows, Format, Options};
//! let contract = Contract::builder("orders", ["id"])
//!     .shape("last3", Shape::window())
//!     .shape("changes", Shape::changes(Deletions::Tombstone))
//!     .window_column("order_date")
//!     .deleted_column("deleted")
//!     .column("id", LogicalType::Int)
//!     .column("order_date", LogicalType::Date)
//!     .column("deleted", LogicalType::Bool)
//!     .build()?;
//! let file = "id,order_date,amount,deleted\n7,2026-10-26,120,false\n9,,,true\n";
//! let manifest = contract
//!     .manifest("changes", "2026-10-27T06:00:00Z".parse()?)
//!     .since("2026-10-26T06:00:00Z".parse::<dogana::Timestamp>()?)
//!     .rows(1)
//!     .tombstones(1)
//!     .content_hash(dogana_rows::sha256_bytes(file.as_bytes()))
//!     .build()?;
//! let report = check_rows(file.as_bytes(), Format::Csv, &contract, &manifest, &Options::new())?;
//! assert!(report.passed(), "{:#?}", report.checks);
//! assert_eq!((report.live, report.tombstones, report.distinct_keys), (1, 1, 2));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
// One exception, allowed where it stands: the SSE2 loads of `csv_fast::Masks::of`, whose
// soundness is argued there.
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod cell;
mod checker;
mod column_type;
mod csv_fast;
mod csv_pipe;
mod csv_rows;
mod error;
mod format;
mod hash;
mod keys;
mod ndjson;
#[cfg(feature = "parquet")]
mod parquet_footer;
#[cfg(feature = "parquet")]
mod parquet_rows;
mod row;

use std::error::Error;
use std::fs::File;
use std::io::Read;
use std::path::Path;

use dogana::{Check, Contract, Manifest};

pub use cell::Cell;
pub use checker::CHECK_NAMES;
pub use column_type::{ColumnType, ColumnTypeError, ColumnTypes, DECIMAL_MAX_PRECISION};
pub use error::RowsError;
pub use format::{Format, UnknownFormat};
pub use hash::{sha256_file, HashingReader, BUFFER_SIZE};
#[cfg(feature = "parquet")]
pub use parquet_rows::{parquet_schema, ParquetColumn};
pub use row::Row;

/// The row callback after its error type is boxed.
pub(crate) type RowCallback<'a> = dyn FnMut(&Row<'_>) -> Result<(), RowsError> + 'a;

/// How to read a delivery.
///
/// ```
/// use dogana_rows::Options;
/// let options = Options::new()
///     .column_type("amount", "decimal(12,2)")
///     .column_type("customer", "str")
///     .delimiter(b';');
/// # let _ = options;
/// ```
#[derive(Debug, Clone)]
pub struct Options {
    column_types: Vec<(String, String)>,
    delimiter: u8,
    hash_thread: bool,
    columns: Vec<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            column_types: Vec::new(),
            delimiter: b',',
            hash_thread: true,
            columns: Vec::new(),
        }
    }
}

impl Options {
    /// Comma-separated, no column types, hashing in a second thread.
    pub fn new() -> Options {
        Options::default()
    }

    /// The next column of the receiver's column list (its data contract: ODCS, dbt model or
    /// column list), with its type: one of the six type names or `decimal(p,s)` (CONTRACT-16,
    /// CONTRACT-19). Give the columns in the data contract's order. The list types the columns
    /// the contract does not bind, for the column hash; bound columns always take the
    /// contract's type. For NDJSON, whose objects have no column order, the list also gives
    /// the order the column hash takes, so there it names every column, bound ones included.
    /// Naming a column again replaces its type and keeps its place.
    pub fn column_type(mut self, column: impl Into<String>, ty: impl Into<String>) -> Options {
        let (column, ty) = (column.into(), ty.into());
        match self.column_types.iter_mut().find(|(c, _)| *c == column) {
            Some(entry) => entry.1 = ty,
            None => self.column_types.push((column, ty)),
        }
        self
    }

    /// The receiver's column list, already checked ([`ColumnTypes`]: every type one of the
    /// six or `decimal(p,s)`, every name once), as [`column_type`](Options::column_type) of
    /// each in order. Prefer it to the unchecked texts: a mistyped type given as text only
    /// shows as a column hash that does not match.
    pub fn column_list(mut self, list: &ColumnTypes) -> Options {
        for (name, ty) in list {
            self = self.column_type(name, ty.to_string());
        }
        self
    }

    /// Several column types at once, as [`column_type`](Options::column_type).
    pub fn column_types<N: Into<String>, T: Into<String>>(
        mut self,
        types: impl IntoIterator<Item = (N, T)>,
    ) -> Options {
        for (n, t) in types {
            self = self.column_type(n, t);
        }
        self
    }

    /// NDJSON: the columns every row has from the first line on, in this order; a key a line
    /// lacks is null there. A receiver staging rows as they come gives the union of the file's
    /// keys ([`ndjson_keys`]), so that a key first met on a later line is a column like any
    /// other and never dropped. Keys met that the list lacks still follow it, in order of
    /// first appearance. CSV and Parquet ignore it.
    pub fn ndjson_columns(mut self, columns: Vec<String>) -> Options {
        self.columns = columns;
        self
    }

    /// The CSV field delimiter (default `,`).
    pub fn delimiter(mut self, delimiter: u8) -> Options {
        self.delimiter = delimiter;
        self
    }

    /// Whether a second thread hashes the bytes (and, for CSV, helps parse the values and
    /// deduplicate the keys) while the calling thread checks (default true).
    /// Either way the input is read once, by the calling thread, and the row callback runs in
    /// the calling thread. On a machine whose cores are all busy, one thread spends less CPU.
    pub fn hash_in_thread(mut self, yes: bool) -> Options {
        self.hash_thread = yes;
        self
    }
}

/// What [`check_rows`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowReport {
    /// One check per name of [`CHECK_NAMES`], in that order: pass them to `Gate::evaluate`.
    pub checks: Vec<Check>,
    /// The lowercase hex SHA-256 of every byte of the input.
    pub content_sha256: String,
    /// How many bytes the input had.
    pub bytes: u64,
    /// The file's columns, in file order.
    pub columns: Vec<String>,
    /// The column hash of the loaded columns, when every column's type is known.
    pub column_hash: Option<String>,
    /// Data rows read (unreadable ones included).
    pub records: u64,
    /// Live rows.
    pub live: u64,
    /// Tombstones.
    pub tombstones: u64,
    /// Distinct non-null keys (0 for a keyless table).
    pub distinct_keys: u64,
    /// The memory the set of keys held at the end, in bytes (its table and key storage).
    pub key_set_bytes: u64,
}

impl RowReport {
    /// Whether every check passed.
    pub fn passed(&self) -> bool {
        self.checks.iter().all(Check::passed)
    }

    /// The check of that name.
    pub fn check(&self, name: &str) -> Option<&Check> {
        self.checks.iter().find(|c| c.name() == name)
    }

    /// The checks that failed.
    pub fn failed(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|c| !c.passed())
    }
}

/// The lowercase hex SHA-256 of some bytes.
///
/// ```
/// assert_eq!(
///     dogana_rows::sha256_bytes(b"abc"),
///     "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
/// );
/// ```
pub fn sha256_bytes(bytes: &[u8]) -> String {
    use sha2::Digest;
    hash::hex(&sha2::Sha256::digest(bytes))
}

/// The keys of an NDJSON delivery, in order of first appearance over the whole file: the
/// columns [`Options::ndjson_columns`] gives a receiver that stages rows as they come. Reads
/// only the top-level keys of each line (values are skipped, not built); a line that is not
/// one JSON object is left to the check, which reports it.
///
/// ```
/// let file = b"{\"id\": 1}\n{\"id\": 2, \"note\": \"late\"}\n";
/// assert_eq!(dogana_rows::ndjson_keys(&file[..]).unwrap(), ["id", "note"]);
/// ```
pub fn ndjson_keys<R: Read>(reader: R) -> std::io::Result<Vec<String>> {
    ndjson::keys(reader)
}

/// Reads a delivery from `reader` and checks its rows against `manifest` and `contract`, in
/// one pass that also hashes the bytes. See the crate documentation for the checks.
///
/// Run it only after `Gate::preflight` passed (LOADER-03): a manifest that does not fit its
/// contract (an unknown shape, a missing window) is a [`RowsError::Manifest`].
///
/// ```
/// use dogana::{Contract, LogicalType, Shape};
/// use dogana_rows::{check_rows, Format, Options};
/// let contract = Contract::builder("orders", ["id"])
///     .shape("full", Shape::full())
///     .column("id", LogicalType::Int)
///     .build()?;
/// let manifest = contract.manifest("full", "2026-10-27T06:00:00Z".parse()?).rows(3).build()?;
/// let file = "id,name\n1,a\n2,b\n2,c\n";
/// let report = check_rows(file.as_bytes(), Format::Csv, &contract, &manifest, &Options::new())?;
/// let keys = report.check("keys").unwrap();
/// assert!(!keys.passed());
/// assert_eq!(keys.detail(), "line 4, key id=2: a key an earlier row already has");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn check_rows<R: Read>(
    reader: R,
    format: Format,
    contract: &Contract,
    manifest: &Manifest,
    options: &Options,
) -> Result<RowReport, RowsError> {
    check_rows_inner(reader, format, contract, manifest, options, None::<NoRows>)
}

/// The row callback of [`check_rows`], which wants no rows.
type NoRows = fn(&Row<'_>) -> Result<(), RowsError>;

/// [`check_rows`], handing every row that parses to `on_row` as it is checked, so a receiver
/// can stage the rows in the same pass (see [`Row`]). An error from `on_row` stops the reading
/// and is returned as [`RowsError::Callback`].
pub fn check_rows_with<R, F, E>(
    reader: R,
    format: Format,
    contract: &Contract,
    manifest: &Manifest,
    options: &Options,
    on_row: F,
) -> Result<RowReport, RowsError>
where
    R: Read,
    F: FnMut(&Row<'_>) -> Result<(), E>,
    E: Into<Box<dyn Error + Send + Sync>>,
{
    check_rows_inner(reader, format, contract, manifest, options, Some(on_row))
}

/// [`check_rows_with`], the callback optional: without one, rows that pass every check are
/// counted without being built.
fn check_rows_inner<R, F, E>(
    reader: R,
    format: Format,
    contract: &Contract,
    manifest: &Manifest,
    options: &Options,
    mut on_row: Option<F>,
) -> Result<RowReport, RowsError>
where
    R: Read,
    F: FnMut(&Row<'_>) -> Result<(), E>,
    E: Into<Box<dyn Error + Send + Sync>>,
{
    let rows_wanted = on_row.is_some();
    let mut checker = checker::Checker::new(checker::Spec::new(contract, manifest)?);
    checker.two_threads = options.hash_thread;
    let mut callback = |row: &Row<'_>| match &mut on_row {
        Some(f) => f(row).map_err(|e| RowsError::Callback(e.into())),
        None => Ok(()),
    };
    let callback: &mut RowCallback<'_> = &mut callback;
    let (columns, header, bytes, sha) = match format {
        Format::Csv if options.hash_thread => {
            let (columns, bytes, sha) = csv_pipe::run(
                reader,
                &mut checker,
                options,
                &options.column_types,
                callback,
                rows_wanted,
            )?;
            let header = !columns.is_empty();
            (columns, header, bytes, sha)
        }
        Format::Csv | Format::Ndjson => {
            let checker = &mut checker;
            let (columns, bytes, sha) = hash::read_hashed(reader, options.hash_thread, |input| {
                match format {
                    Format::Csv => {
                        csv_rows::run(input, checker, options, &options.column_types, callback)
                    }
                    _ => ndjson::run(input, checker, &options.columns, callback),
                }
                .map(|(columns, _)| columns)
            })?;
            // an empty CSV file fails `parse` alone: it has no header to miss a column from
            let header = format == Format::Csv && !columns.is_empty();
            (columns, header, bytes, sha)
        }
        Format::Parquet => {
            #[cfg(feature = "parquet")]
            {
                let read = parquet_rows::run(reader, &mut checker, callback)?;
                // the receiver's list first; the file's own types for the columns it omits
                let mut types = options.column_types.clone();
                for (name, ty) in read.types {
                    if !types.iter().any(|(n, _)| *n == name) {
                        types.push((name, ty));
                    }
                }
                let header = !read.columns.is_empty();
                return checker.finish(read.columns, &types, read.sha, read.bytes, header);
            }
            #[cfg(not(feature = "parquet"))]
            {
                let _ = (reader, callback);
                return Err(RowsError::Unsupported(
                    "reading Parquet needs dogana-rows built with the `parquet` feature".into(),
                ));
            }
        }
    };
    checker.finish(columns, &options.column_types, sha, bytes, header)
}

/// [`check_rows`] on a file, its format taken from its extension unless given.
pub fn check_file(
    path: impl AsRef<Path>,
    format: Option<Format>,
    contract: &Contract,
    manifest: &Manifest,
    options: &Options,
) -> Result<RowReport, RowsError> {
    let path = path.as_ref();
    let format = match format.or_else(|| Format::from_path(path)) {
        Some(f) => f,
        None => {
            return Err(RowsError::Unsupported(format!(
                "cannot tell the format of {} from its extension: name it",
                path.display()
            )))
        }
    };
    check_rows(File::open(path)?, format, contract, manifest, options)
}
