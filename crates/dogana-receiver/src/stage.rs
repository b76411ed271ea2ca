//! Staging: the delivered rows reach the backend's private staging area in the same pass that
//! checks them (dogana-rows), never the published table (RECV-06).
//!
//! Parsing and checking run on a second thread (and hashing on a third, in dogana-rows),
//! while the calling thread, which owns the backend's connection, stages the rows in batches;
//! a file of at most [`SMALL_FILE`] bytes is read whole on the calling thread, then staged.

use std::fs::File;
use std::path::Path;

use dogana::{Check, LogicalType};
use dogana_rows::{check_rows_with, Cell, ColumnType, Format, RowReport};

use crate::batch::{Batch, BATCH_ROWS};
use crate::engine::Job;
use crate::port::{Backend, Column, Layout};
use crate::StoreError;

/// What staging left in the backend, with the row checks.
#[derive(Debug, Clone)]
pub(crate) struct Staged {
    /// The row checks of dogana-rows, in their order.
    pub(crate) report: RowReport,
    /// The staged columns and their types.
    pub(crate) layout: Layout,
    /// The receiver's `values` check: columns the receiver types beyond the contract parse.
    pub(crate) values: Check,
    /// Whether the live rows were staged into a new table of the published columns
    /// ([`Backend::stage_create_whole`]).
    pub(crate) whole: bool,
}

/// Counts the values of receiver-typed columns that do not parse, keeping the first.
#[derive(Default)]
struct Failures {
    count: u64,
    first: Option<String>,
}

impl Failures {
    /// Counts one value that does not parse, keeping its place if it is the first.
    fn note(&mut self, line: impl std::fmt::Display, column: &str, why: impl std::fmt::Display) {
        self.count += 1;
        if self.first.is_none() {
            self.first = Some(format!("line {line}, column {column}: {why}"));
        }
    }
}

/// Why a text holding U+0000 is refused: Postgres's text cannot hold it, and a file has one
/// answer on every backend, so every receiver refuses it in its `values` check.
const NUL: &str = "the text holds a NUL character (U+0000), which a text column cannot hold on every backend (Postgres refuses it); remove it, or deliver the value as another type";

/// Whether a text value holds U+0000.
fn holds_nul(cell: &Cell<'_>) -> bool {
    matches!(cell, Cell::Str(s) if s.as_bytes().contains(&0))
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

/// The declared type name of a column: the contract's for a bound column, the receiver's
/// column type for the others.
pub(crate) fn declared_type(job: &Job, column: &str) -> Option<String> {
    match job.contract.types().get(column) {
        Some(t) => Some(t.name().to_owned()),
        None => job.options.column_types.get(column).cloned(),
    }
}

/// The published table's columns for a file of these staged columns: each with its declared
/// type, then the bound columns (key, window) the file lacks.
pub(crate) fn target_columns(job: &Job, loaded: &[String]) -> Vec<Column> {
    let mut wanted: Vec<String> = loaded.to_vec();
    for b in bound_published(&job.contract) {
        if !wanted.contains(&b) {
            wanted.push(b);
        }
    }
    wanted
        .into_iter()
        .map(|c| Column {
            ty: declared_type(job, &c),
            key: job.contract.key().contains(&c),
            name: c,
        })
        .collect()
}

/// The bound columns the published table always has: the key and the window column.
fn bound_published(contract: &dogana::Contract) -> Vec<String> {
    let mut v: Vec<String> = contract.key().to_vec();
    if let Some(w) = contract.window_column() {
        if !v.iter().any(|k| k == w) {
            v.push(w.to_owned());
        }
    }
    v
}

/// Whether the delivery's shape is a complete read of the whole table.
pub(crate) fn complete_table(job: &Job) -> bool {
    job.contract
        .shape(job.manifest.shape())
        .is_some_and(|s| s.is_complete() && s.coverage() == dogana::Coverage::Table)
}

/// Whether the delivery, if accepted, replaces every published row (a complete read of the
/// whole table without a window: the plan's one `replace_all`, PLAN-03). Known before a row
/// is read.
pub(crate) fn replaces_whole(job: &Job) -> bool {
    job.manifest.window().is_none() && complete_table(job)
}

/// Creates the staging area: straight into a new table of the published columns when the
/// delivery replaces the whole table and the backend can, in its private area otherwise.
fn create_area<B: Backend>(
    backend: &mut B,
    job: &Job,
    layout: &Layout,
) -> Result<bool, StoreError> {
    let table = job.contract.table();
    if replaces_whole(job) {
        backend.stage_create_whole(table, layout, &target_columns(job, &layout.loaded))
    } else {
        backend.stage_create(table, layout).map(|()| false)
    }
}

/// Where the staged columns come from in the file.
#[derive(Debug, Clone)]
struct Plan {
    layout: Layout,
    /// file column index of each staged column
    loaded_at: Vec<usize>,
    /// file column index of each key column, if the file has it
    keys_at: Vec<Option<usize>>,
    /// receiver type of each staged column, when it converts
    typed: Vec<Option<LogicalType>>,
    /// receiver decimal type of each staged column, when its values are checked as text
    decimals: Vec<Option<ColumnType>>,
}

impl Plan {
    fn new(job: &Job, columns: &[String]) -> Plan {
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
        let decimals = loaded
            .iter()
            .map(|c| {
                if contract.types().contains_key(c) {
                    return None;
                }
                job.options
                    .column_types
                    .get(c)
                    .and_then(|t| t.parse::<ColumnType>().ok())
                    .filter(|t| t.logical().is_none())
            })
            .collect();
        let types = loaded.iter().map(|c| declared_type(job, c)).collect();
        let key = contract
            .key()
            .iter()
            .map(|k| (k.clone(), declared_type(job, k)))
            .collect();
        Plan {
            layout: Layout { loaded, types, key },
            loaded_at,
            keys_at,
            typed,
            decimals,
        }
    }
}

/// How many batches the reading thread may be ahead of the staging one: about one DuckDB row
/// group (122,880 rows), so that reading goes on while the backend compresses a full row group
/// (a few MiB of batches).
const QUEUED: usize = 32;

/// A file of at most this many bytes is read on the calling thread, in one pass without the
/// hashing thread, and staged once it is read: a second and third thread cost such a file
/// more than they save (issue 16). The report is the same either way (dogana-rows'
/// `tests/paths.rs`).
pub(crate) const SMALL_FILE: u64 = 64 << 10;

enum Msg {
    Columns(Vec<String>),
    Rows(Batch),
}

/// The row callback's state: what the rows are staged as, the batch being filled and the
/// receiver-typed values that do not parse.
struct Rows<'j> {
    job: &'j Job,
    text_times: bool,
    plan: Option<Plan>,
    batch: Batch,
    bad: Failures,
}

impl<'j> Rows<'j> {
    fn new(job: &'j Job, text_times: bool) -> Rows<'j> {
        Rows {
            job,
            text_times,
            plan: None,
            batch: Batch::default(),
            bad: Failures::default(),
        }
    }

    /// One checked row into the batch; `send` gets the columns first, then each full batch.
    fn row(
        &mut self,
        row: &dogana_rows::Row<'_>,
        send: &mut impl FnMut(Msg) -> Result<(), &'static str>,
    ) -> Result<(), &'static str> {
        let text_times = self.text_times;
        if self.plan.is_none() {
            self.plan = Some(Plan::new(self.job, row.columns()));
            send(Msg::Columns(row.columns().to_vec()))?;
        }
        let job = self.job;
        let p = self.plan.as_ref().expect("set above");
        let (batch, bad) = (&mut self.batch, &mut self.bad);
        batch.start_row(row.is_tombstone());
        if row.is_tombstone() {
            for (k, at) in p.keys_at.iter().enumerate() {
                let cell = at.and_then(|i| row.cell(i)).unwrap_or(Cell::Null);
                if holds_nul(&cell) {
                    bad.note(row.line(), &job.contract.key()[k], NUL);
                    // the delivery is refused: staged as null, never published
                    batch.push(&Cell::Null, text_times);
                    continue;
                }
                batch.push(&cell, text_times);
            }
        } else {
            for (s, &i) in p.loaded_at.iter().enumerate() {
                let cell = row.cell(i).unwrap_or(Cell::Null);
                // rule: RECV-08 — a value no backend can hold alike is refused alike
                if holds_nul(&cell) {
                    bad.note(row.line(), &p.layout.loaded[s], NUL);
                    // the delivery is refused: staged as null, never published
                    batch.push(&Cell::Null, text_times);
                    continue;
                }
                if let Some(d) = p.decimals[s] {
                    // rule: CHECK-18 — a decimal within its precision and scale
                    if let Err(why) = d.check_cell(&cell) {
                        bad.note(row.line(), &p.layout.loaded[s], why);
                    }
                }
                match p.typed[s] {
                    None => batch.push(&cell, text_times),
                    Some(ty) => match coerce(cell, ty) {
                        Ok(c) => batch.push(&c, text_times),
                        Err(why) => {
                            bad.note(row.line(), &p.layout.loaded[s], why);
                            // the delivery is refused: what is staged is never published
                            batch.push(&Cell::Null, text_times);
                        }
                    },
                }
            }
        }
        if batch.len() >= BATCH_ROWS {
            let next = batch.empty_like();
            send(Msg::Rows(std::mem::replace(batch, next)))?;
        }
        Ok(())
    }

    /// Sends the last batch, and answers the failures.
    fn finish(self, send: &mut impl FnMut(Msg) -> Result<(), &'static str>) -> Failures {
        if !self.batch.is_empty() {
            let _ = send(Msg::Rows(self.batch));
        }
        self.bad
    }
}

/// What the reading left: the report (or why it stopped) and the failures.
type Read = (Result<RowReport, dogana_rows::RowsError>, Failures);

/// Reads the delivery once: checks every row (dogana-rows), hashes the bytes, and stages the
/// rows. Call inside a transaction.
pub(crate) fn stage<B: Backend>(backend: &mut B, job: &Job) -> Result<Staged, StoreError> {
    let table = job.contract.table();
    backend.stage_clear(table)?;
    let format = job.format()?;
    let file = File::open(&job.file)?;
    let mut options = job.options.rows_options();
    if format == Format::Ndjson {
        // the staging table is made at the first row: it must have every column of the
        // file then, so the union of the keys is read first (a key first met on a later
        // line is a column like any other, never dropped)
        options = options.ndjson_columns(dogana_rows::ndjson_keys(File::open(&job.file)?)?);
    }
    if file
        .metadata()
        .is_ok_and(|m| m.is_file() && m.len() <= SMALL_FILE)
    {
        // a small file: read whole, then staged, on this thread
        let mut msgs = Vec::new();
        let mut send = |m: Msg| {
            msgs.push(m);
            Ok(())
        };
        let mut rows = Rows::new(job, B::TEXT_TIMES);
        let result = check_rows_with(
            file,
            format,
            &job.contract,
            &job.manifest,
            &options.hash_in_thread(false),
            |row| rows.row(row, &mut send),
        );
        let bad = rows.finish(&mut send);
        return staged_from(backend, job, format, msgs.into_iter(), || Ok((result, bad)));
    }
    let (tx, rx) = std::sync::mpsc::sync_channel::<Msg>(QUEUED);
    std::thread::scope(|scope| -> Result<Staged, StoreError> {
        let parser = scope.spawn(move || {
            let mut send = |m: Msg| tx.send(m).map_err(|_| "staging stopped");
            let mut rows = Rows::new(job, B::TEXT_TIMES);
            let result = check_rows_with(
                file,
                format,
                &job.contract,
                &job.manifest,
                &options,
                |row| rows.row(row, &mut send),
            );
            let bad = rows.finish(&mut send);
            (result, bad)
        });
        staged_from(backend, job, format, rx.into_iter(), || {
            parser.join().map_err(|_| {
                StoreError::Io(std::io::Error::other(
                    "the thread reading the delivery panicked",
                ))
            })
        })
    })
}

/// Stages what the reading sends (the columns first, then only batches) as it comes, then
/// takes the reading's end from `read` (after the messages end or are dropped, which stops
/// a reading thread) and makes the staged delivery.
fn staged_from<B: Backend>(
    backend: &mut B,
    job: &Job,
    format: Format,
    msgs: impl Iterator<Item = Msg> + Send + 'static,
    read: impl FnOnce() -> Result<Read, StoreError>,
) -> Result<Staged, StoreError> {
    let table = job.contract.table();
    let mut layout: Option<Layout> = None;
    let mut whole = false;
    let mut failure: Option<StoreError> = None;
    let mut msgs = msgs;
    // the reading sends the columns first, then only batches
    match msgs.next() {
        Some(Msg::Columns(columns)) => {
            let l = Plan::new(job, &columns).layout;
            let step = create_area(backend, job, &l).and_then(|w| {
                whole = w;
                let batches = msgs.map_while(|m| match m {
                    Msg::Rows(batch) => Some(batch),
                    Msg::Columns(_) => None,
                });
                // dropped on a failure: that stops the reading thread
                backend.stage_batches(table, &l, Box::new(batches))
            });
            layout = Some(l);
            if let Err(e) = step {
                failure = Some(e);
            }
        }
        // nothing read, or (never) rows before their columns: stops the reading thread
        _ => drop(msgs),
    }
    let (result, bad) = read()?;
    if let Some(e) = failure {
        return Err(e);
    }
    let report = result?;
    let layout = match layout {
        Some(l) => l,
        None => {
            // no row was staged: the staging area exists all the same, empty
            let l = Plan::new(job, &report.columns).layout;
            whole = create_area(backend, job, &l)?;
            l
        }
    };
    // a column the receiver types that the file lacks would check nothing: the receiver's
    // configuration is wrong (NDJSON: a key no line has is a column of nulls)
    if format != Format::Ndjson {
        let absent: Vec<&str> = job
            .options
            .column_types
            .keys()
            .filter(|c| !report.columns.contains(c))
            .map(String::as_str)
            .collect();
        if !absent.is_empty() {
            return Err(StoreError::ColumnTypes(format!(
                "a column type is given for {}, which the file does not have (its columns: {}); drop the --column-type or fix its NAME",
                absent
                    .iter()
                    .map(|c| dogana::quoted(c, dogana::SHOWN))
                    .collect::<Vec<_>>()
                    .join(", "),
                report
                    .columns
                    .iter()
                    .take(20)
                    .map(|c| dogana::quoted(c, dogana::SHOWN))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    let values = values_check(job, &layout.loaded, &bad);
    Ok(Staged {
        report,
        layout,
        values,
        whole,
    })
}

fn values_check(job: &Job, loaded: &[String], bad: &Failures) -> Check {
    let typed_names: Vec<&str> = loaded
        .iter()
        .filter(|c| !job.contract.types().contains_key(*c))
        .filter(|c| {
            job.options
                .column_types
                .get(*c)
                .and_then(|t| t.parse::<ColumnType>().ok())
                .is_some_and(|t| t != ColumnType::Str)
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

/// The format of a file, from its extension unless given.
pub(crate) fn format_of(path: &Path, given: Option<Format>) -> Result<Format, StoreError> {
    given.or_else(|| Format::from_path(path)).ok_or_else(|| {
        StoreError::Format(format!(
            "cannot tell the format of {} from its extension (.csv, .ndjson, .jsonl, .parquet): name it",
            path.display()
        ))
    })
}
