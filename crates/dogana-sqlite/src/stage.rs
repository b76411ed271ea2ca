//! Staging: the delivered rows go into TEMP tables of the store's connection in the same pass
//! that checks them (dogana-rows), never into the published table (RECV-06).
//!
//! `temp.dogana_stage_rows(c0, c1, ...)` holds the live rows, one column per file column
//! except the deleted column, which is never published (PLAN-14); `temp.dogana_stage_tombstones
//! (k0, ...)` holds the keys the tombstones name. The staging columns have no declared type,
//! so values keep the storage class they were bound with: integers, reals, and text for
//! strings, dates (`YYYY-MM-DD`) and datetimes (the protocol's UTC form).

use std::collections::BTreeMap;
use std::fs::File;

use dogana::{Check, LogicalType};
use dogana_rows::{check_rows_with, Cell, Format, RowReport};
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, Statement};

use crate::sql::cell_sql;
use crate::store::Job;
use crate::StoreError;

pub(crate) const ROWS: &str = "temp.dogana_stage_rows";
pub(crate) const TOMBSTONES: &str = "temp.dogana_stage_tombstones";

/// What staging left in the TEMP tables, with the row checks.
#[derive(Debug, Clone)]
pub(crate) struct Staged {
    /// The row checks of dogana-rows, in their order.
    pub(crate) report: RowReport,
    /// The staged columns: `c{i}` of the rows table holds `loaded[i]`.
    pub(crate) loaded: Vec<String>,
    /// The receiver's `values` check: columns the receiver types beyond the contract parse.
    pub(crate) values: Check,
}

impl Staged {
    /// The staged column holding `name`, if the file has it.
    pub(crate) fn column_of(&self, name: &str) -> Option<usize> {
        self.loaded.iter().position(|c| c == name)
    }
}

/// Counts the values of receiver-typed columns that do not parse, keeping the first.
#[derive(Default)]
struct Failures {
    count: u64,
    first: Option<String>,
}

/// A receiver-typed column: how its values are converted.
fn coerce<'a>(cell: Cell<'a>, ty: LogicalType) -> Result<Cell<'a>, String> {
    match (cell, ty) {
        (Cell::Null, _) => Ok(Cell::Null),
        (Cell::Str(s), LogicalType::Str) => Ok(Cell::Str(s)),
        (Cell::Str(s), ty) => match Cell::parse(&s, ty) {
            Ok(c) => Ok(c.into_owned()),
            Err(e) => Err(e),
        },
        (Cell::Int(i), LogicalType::Int) => Ok(Cell::Int(i)),
        (Cell::Int(i), LogicalType::Float) => Ok(Cell::Float(i as f64)),
        (Cell::Float(x), LogicalType::Float) => Ok(Cell::Float(x)),
        (Cell::Bool(b), LogicalType::Bool) => Ok(Cell::Bool(b)),
        (c @ (Cell::Date(_) | Cell::Datetime(_)), _) if cell_type(&c) == Some(ty) => Ok(c),
        (c, ty) => Err(format!("{c} is not a {ty}")),
    }
}

fn cell_type(c: &Cell<'_>) -> Option<LogicalType> {
    Some(match c {
        Cell::Date(_) => LogicalType::Date,
        Cell::Datetime(_) => LogicalType::Datetime,
        _ => return None,
    })
}

/// Where the staged columns come from in the file, derived from the file's columns.
#[derive(Debug, Clone)]
struct Layout {
    /// file column index of each staged column
    loaded_at: Vec<usize>,
    /// file column index of each key column, if the file has it
    keys_at: Vec<Option<usize>>,
    /// receiver type of each staged column, when it converts
    typed: Vec<Option<LogicalType>>,
    /// the staged columns' names
    loaded: Vec<String>,
}

impl Layout {
    fn new(job: &Job, columns: &[String]) -> Layout {
        let contract = &job.contract;
        let deleted = contract.deleted_column();
        let loaded_at: Vec<usize> = (0..columns.len())
            .filter(|&i| Some(columns[i].as_str()) != deleted)
            .collect();
        let loaded: Vec<String> = loaded_at.iter().map(|&i| columns[i].clone()).collect();
        // a repeated name binds its first occurrence (dogana-rows fails `parse` for it)
        let keys_at = contract
            .key()
            .iter()
            .map(|k| columns.iter().position(|c| c == k))
            .collect();
        let typed = loaded
            .iter()
            .map(|c| {
                if contract.types().contains_key(c) {
                    return None; // dogana-rows types bound columns itself
                }
                job.options
                    .column_types
                    .get(c)
                    .and_then(|t| LogicalType::from_name(t))
            })
            .collect();
        Layout {
            loaded_at,
            keys_at,
            typed,
            loaded,
        }
    }
}

/// Drops the staging tables, if any.
pub(crate) fn clear(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(&format!(
        "DROP TABLE IF EXISTS {ROWS}; DROP TABLE IF EXISTS {TOMBSTONES};"
    ))
}

/// Creates the staging tables and their insert statements.
fn create<'c>(
    conn: &'c Connection,
    layout: &Layout,
) -> rusqlite::Result<(Statement<'c>, Statement<'c>)> {
    let cols: Vec<String> = (0..layout.loaded.len()).map(|i| format!("c{i}")).collect();
    let keys: Vec<String> = (0..layout.keys_at.len()).map(|i| format!("k{i}")).collect();
    // columns without a declared type: values keep the class they are bound with
    let or_none = |v: &[String], none: &str| {
        if v.is_empty() {
            none.to_owned()
        } else {
            v.join(", ")
        }
    };
    conn.execute_batch(&format!(
        "CREATE TABLE {ROWS} ({}); CREATE TABLE {TOMBSTONES} ({});",
        or_none(&cols, "c_none"),
        or_none(&keys, "k_none")
    ))?;
    let marks = |n: usize| vec!["?"; n.max(1)].join(", ");
    let rows = conn.prepare(&format!(
        "INSERT INTO {ROWS} VALUES ({})",
        marks(cols.len())
    ))?;
    let tombs = conn.prepare(&format!(
        "INSERT INTO {TOMBSTONES} VALUES ({})",
        marks(keys.len())
    ))?;
    Ok((rows, tombs))
}

/// A staged value, its text kept in the batch's arena.
#[derive(Debug, Clone, Copy)]
enum Owned {
    Null,
    Int(i64),
    Real(f64),
    Text(u32, u32),
}

/// Rows on their way from the parsing thread to the connection's: each live row has one cell
/// per staged column, each tombstone one per key column.
#[derive(Debug, Default)]
struct Batch {
    tombstone: Vec<bool>,
    cells: Vec<Owned>,
    text: String,
}

const BATCH_ROWS: usize = 4096;

impl Batch {
    fn push(&mut self, cell: &Cell<'_>, scratch: &mut String) {
        let owned = match cell {
            Cell::Null => Owned::Null,
            Cell::Int(i) => Owned::Int(*i),
            Cell::Bool(b) => Owned::Int(i64::from(*b)),
            Cell::Float(x) => Owned::Real(*x),
            other => {
                let text: &[u8] = match cell_sql(other, scratch) {
                    ToSqlOutput::Borrowed(ValueRef::Text(t)) => t,
                    _ => b"",
                };
                let start = self.text.len() as u32;
                // the text is valid UTF-8: a str cell or a formatted date
                self.text
                    .push_str(std::str::from_utf8(text).unwrap_or_default());
                Owned::Text(start, self.text.len() as u32 - start)
            }
        };
        self.cells.push(owned);
    }
}

enum Msg {
    Columns(Vec<String>),
    Rows(Batch),
}

/// Reads the delivery once: checks every row (dogana-rows), hashes the bytes, and stages the
/// rows that parse. Call inside a transaction: the TEMP inserts are one transaction.
///
/// Parsing and checking run on a second thread (and hashing on a third, in dogana-rows), while
/// the calling thread, which owns the connection, inserts the rows in batches.
pub(crate) fn stage(conn: &Connection, job: &Job) -> Result<Staged, StoreError> {
    clear(conn)?;
    let format = job.format()?;
    let file = File::open(&job.file)?;
    let options = job.options.rows_options();
    let (tx, rx) = std::sync::mpsc::sync_channel::<Msg>(8);
    std::thread::scope(|scope| -> Result<Staged, StoreError> {
        let parser = scope.spawn(move || {
            let mut bad = Failures::default();
            let mut layout: Option<Layout> = None;
            let mut batch = Batch::default();
            let mut scratch = String::new();
            let result = check_rows_with(
                file,
                format,
                &job.contract,
                &job.manifest,
                &options,
                |row| -> Result<(), &'static str> {
                    if layout.is_none() {
                        layout = Some(Layout::new(job, row.columns()));
                        tx.send(Msg::Columns(row.columns().to_vec()))
                            .map_err(|_| "staging stopped")?;
                    }
                    let l = layout.as_ref().expect("set above");
                    if row.is_tombstone() {
                        batch.tombstone.push(true);
                        for at in &l.keys_at {
                            let cell = at.and_then(|i| row.cell(i)).unwrap_or(Cell::Null);
                            batch.push(&cell, &mut scratch);
                        }
                    } else {
                        batch.tombstone.push(false);
                        for (s, &i) in l.loaded_at.iter().enumerate() {
                            let cell = row.cell(i).unwrap_or(Cell::Null);
                            match l.typed[s] {
                                None => batch.push(&cell, &mut scratch),
                                Some(ty) => match coerce(cell, ty) {
                                    Ok(c) => batch.push(&c, &mut scratch),
                                    Err(why) => {
                                        bad.count += 1;
                                        if bad.first.is_none() {
                                            bad.first = Some(format!(
                                                "line {}, column {}: {why}",
                                                row.line(),
                                                l.loaded[s]
                                            ));
                                        }
                                        let raw = row.cell(i).unwrap_or(Cell::Null);
                                        batch.push(&raw, &mut scratch);
                                    }
                                },
                            }
                        }
                    }
                    if batch.tombstone.len() >= BATCH_ROWS {
                        tx.send(Msg::Rows(std::mem::take(&mut batch)))
                            .map_err(|_| "staging stopped")?;
                    }
                    Ok(())
                },
            );
            if !batch.tombstone.is_empty() {
                let _ = tx.send(Msg::Rows(batch));
            }
            (result, bad)
        });
        let mut tables: Option<(Layout, Statement<'_>, Statement<'_>)> = None;
        let mut failure: Option<rusqlite::Error> = None;
        for msg in rx.iter() {
            let step = match msg {
                Msg::Columns(columns) => {
                    let layout = Layout::new(job, &columns);
                    create(conn, &layout).map(|(r, t)| tables = Some((layout, r, t)))
                }
                Msg::Rows(batch) => match tables.as_mut() {
                    Some((layout, rows, tombs)) => insert(layout, rows, tombs, &batch),
                    None => Ok(()),
                },
            };
            if let Err(e) = step {
                failure = Some(e);
                break; // dropping the receiver stops the parser
            }
        }
        drop(rx);
        let (result, bad) = parser.join().map_err(|_| {
            StoreError::Io(std::io::Error::other(
                "the thread reading the delivery panicked",
            ))
        })?;
        if let Some(e) = failure {
            return Err(StoreError::Sqlite(e));
        }
        let report = result?;
        let loaded = match tables {
            Some((layout, ..)) => layout.loaded,
            None => {
                // no row was staged: the tables exist all the same, empty
                let layout = Layout::new(job, &report.columns);
                create(conn, &layout)?;
                layout.loaded
            }
        };
        let values = values_check(job, &loaded, &bad);
        Ok(Staged {
            report,
            loaded,
            values,
        })
    })
}

fn insert<'c>(
    layout: &Layout,
    rows: &mut Statement<'c>,
    tombs: &mut Statement<'c>,
    batch: &Batch,
) -> rusqlite::Result<()> {
    let mut cells = batch.cells.iter();
    for &tomb in &batch.tombstone {
        let (stmt, n) = if tomb {
            (&mut *tombs, layout.keys_at.len())
        } else {
            (&mut *rows, layout.loaded.len())
        };
        if n == 0 {
            stmt.raw_bind_parameter(1, rusqlite::types::Null)?;
        }
        for k in 1..=n {
            let v = match cells.next().copied().unwrap_or(Owned::Null) {
                Owned::Null => ValueRef::Null,
                Owned::Int(i) => ValueRef::Integer(i),
                Owned::Real(x) => ValueRef::Real(x),
                Owned::Text(at, len) => {
                    ValueRef::Text(&batch.text.as_bytes()[at as usize..(at + len) as usize])
                }
            };
            stmt.raw_bind_parameter(k, ToSqlOutput::Borrowed(v))?;
        }
        stmt.raw_execute()?;
    }
    Ok(())
}

fn values_check(job: &Job, loaded: &[String], bad: &Failures) -> Check {
    let typed_names: Vec<&str> = loaded
        .iter()
        .filter(|c| !job.contract.types().contains_key(*c))
        .filter(|c| {
            job.options
                .column_types
                .get(*c)
                .and_then(|t| LogicalType::from_name(t))
                .is_some_and(|t| t != LogicalType::Str)
        })
        .map(String::as_str)
        .collect();
    match (&bad.first, bad.count) {
        (Some(first), 1) => Check::fail("values", first.clone()),
        (Some(first), n) => Check::fail("values", format!("{first} (and {} more)", n - 1)),
        (None, _) if typed_names.is_empty() => Check::pass(
            "values",
            "not applicable: the receiver types no column beyond the contract's",
        ),
        (None, _) => Check::pass(
            "values",
            format!(
                "every value of {} parses as the type the receiver gives it",
                typed_names.join(", ")
            ),
        ),
    }
}

/// Converts the receiver's column types to a map for dogana-rows.
pub(crate) fn rows_types(types: &BTreeMap<String, String>) -> Vec<(String, String)> {
    types.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// The format of a file, from its extension unless given.
pub(crate) fn format_of(
    path: &std::path::Path,
    given: Option<Format>,
) -> Result<Format, StoreError> {
    given.or_else(|| Format::from_path(path)).ok_or_else(|| {
        StoreError::Format(format!(
            "cannot tell the format of {} from its extension (.csv, .ndjson, .jsonl, .parquet): name it",
            path.display()
        ))
    })
}
