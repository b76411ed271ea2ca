//! One row as the callback of [`check_rows_with`](crate::check_rows_with) sees it.

use std::borrow::Cow;

use crate::cell::{Cell, Typed};

#[derive(Clone, Copy)]
pub(crate) enum Raw<'r> {
    Csv {
        data: &'r [u8],
        ranges: &'r [(usize, usize)],
    },
    Json {
        entries: &'r [(Cow<'r, str>, serde_json::Value)],
        slots: &'r [usize],
    },
    #[cfg(feature = "parquet")]
    Arrow {
        batch: &'r arrow_array::RecordBatch,
        row: usize,
    },
}

/// One row of a delivery, handed to the callback of [`check_rows_with`](crate::check_rows_with)
/// after the row was checked, so that a receiver can stage it in the same pass.
///
/// Every column of the file is there, named by [`columns`](Row::columns): the bound columns
/// (key, window, cursor, deleted) typed by the contract, the others as the file has them (see
/// [`Cell`]). Only rows that parse are handed over; a row that does not fails the `parse`
/// check, which rejects the delivery.
///
/// ```
/// use dogana::{Contract, Deletions, LogicalType, Shape};
/// use dogana_rows::{check_rows_with, Cell, Format, Options};
/// let contract = Contract::builder("orders", ["id"])
///     .shape("changes", Shape::changes(Deletions::Tombstone))
///     .deleted_column("deleted")
///     .column("id", LogicalType::Int)
///     .column("deleted", LogicalType::Bool)
///     .build()?;
/// let manifest = contract
///     .manifest("changes", "2026-10-27T06:00:00Z".parse()?)
///     .since("2026-10-26T06:00:00Z".parse::<dogana::Timestamp>()?)
///     .rows(1)
///     .tombstones(1)
///     .build()?;
/// let file = "id,note,deleted\n7,hello,false\n9,,true\n";
/// let mut staged = Vec::new();
/// let report = check_rows_with(file.as_bytes(), Format::Csv, &contract, &manifest, &Options::new(), |row| {
///     assert_eq!(row.columns(), ["id", "note", "deleted"]);
///     staged.push((row.cell(0).map(Cell::into_owned), row.cell(1).map(Cell::into_owned), row.is_tombstone()));
///     Ok::<(), std::io::Error>(())
/// })?;
/// assert!(report.passed());
/// assert_eq!(staged[0], (Some(Cell::Int(7)), Some(Cell::Str("hello".into())), false));
/// assert_eq!(staged[1], (Some(Cell::Int(9)), Some(Cell::Null), true));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy)]
pub struct Row<'r> {
    pub(crate) columns: &'r [String],
    pub(crate) typed: &'r [Option<Typed>],
    pub(crate) raw: Raw<'r>,
    pub(crate) line: u64,
    pub(crate) tombstone: bool,
}

impl<'r> Row<'r> {
    /// The file's columns, in file order.
    pub fn columns(&self) -> &'r [String] {
        self.columns
    }

    /// The number of columns.
    pub fn len(&self) -> usize {
        self.columns.len()
    }

    /// Whether the file has no columns.
    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }

    /// Where the row is: the line it starts on (CSV, NDJSON), or its 1-based row number
    /// (Parquet).
    pub fn line(&self) -> u64 {
        self.line
    }

    /// Whether the row is a tombstone: its deleted column is true.
    pub fn is_tombstone(&self) -> bool {
        self.tombstone
    }

    /// The value of column `i`: typed by the contract for a bound column, as the file has it
    /// otherwise. `None` when there is no such column.
    pub fn cell(&self, i: usize) -> Option<Cell<'r>> {
        if i >= self.columns.len() {
            return None;
        }
        if let Some(t) = self.typed.get(i).copied().flatten() {
            return Some(match t {
                Typed::Text => Cell::Str(self.text(i).unwrap_or_default()),
                t => t.to_cell(""),
            });
        }
        Some(self.natural(i))
    }

    /// The value of the column named `name`, as [`cell`](Row::cell).
    pub fn get(&self, name: &str) -> Option<Cell<'r>> {
        let i = self.columns.iter().position(|c| c == name)?;
        self.cell(i)
    }

    /// Every value, in column order.
    pub fn cells(&self) -> impl Iterator<Item = Cell<'r>> + '_ {
        (0..self.columns.len()).map(|i| self.cell(i).unwrap_or(Cell::Null))
    }

    /// The text of column `i` as the file spells it: a CSV field (`Some("")` when empty), a
    /// JSON string's contents or another JSON value's text. `None` for a JSON null, a key the
    /// row lacks, a Parquet null, or no such column.
    pub fn raw(&self, i: usize) -> Option<Cow<'r, str>> {
        if i >= self.columns.len() {
            return None;
        }
        match self.raw {
            Raw::Csv { data, ranges } => csv_field(data, ranges, i).map(String::from_utf8_lossy),
            Raw::Json { entries, slots } => {
                let v = &entries.get(*slots.get(i)?)?.1;
                match v {
                    serde_json::Value::Null => None,
                    serde_json::Value::String(s) => Some(Cow::Borrowed(s.as_str())),
                    other => Some(Cow::Owned(other.to_string())),
                }
            }
            #[cfg(feature = "parquet")]
            Raw::Arrow { .. } => match self.natural(i) {
                Cell::Null => None,
                Cell::Str(s) => Some(s),
                other => Some(Cow::Owned(crate::parquet_rows::plain_text(&other))),
            },
        }
    }

    /// A string value's text.
    fn text(&self, i: usize) -> Option<Cow<'r, str>> {
        match self.raw {
            Raw::Csv { data, ranges } => csv_field(data, ranges, i).map(String::from_utf8_lossy),
            Raw::Json { entries, slots } => match &entries.get(*slots.get(i)?)?.1 {
                serde_json::Value::String(s) => Some(Cow::Borrowed(s.as_str())),
                serde_json::Value::Object(o) => o
                    .values()
                    .next()
                    .and_then(|v| v.as_str())
                    .map(Cow::Borrowed),
                _ => None,
            },
            #[cfg(feature = "parquet")]
            Raw::Arrow { .. } => match self.natural(i) {
                Cell::Str(s) => Some(s),
                _ => None,
            },
        }
    }

    /// An unbound column's value as the file types it.
    fn natural(&self, i: usize) -> Cell<'r> {
        match self.raw {
            Raw::Csv { data, ranges } => match csv_field(data, ranges, i) {
                None | Some(b"") => Cell::Null,
                Some(b) => Cell::Str(String::from_utf8_lossy(b)),
            },
            Raw::Json { entries, slots } => match slots.get(i).and_then(|&s| entries.get(s)) {
                None => Cell::Null,
                Some((_, v)) => crate::ndjson::natural(v),
            },
            #[cfg(feature = "parquet")]
            Raw::Arrow { batch, row } => crate::parquet_rows::natural(batch, i, row),
        }
    }
}

/// Field `i` of a CSV record.
#[inline]
pub(crate) fn csv_field<'a>(
    data: &'a [u8],
    ranges: &[(usize, usize)],
    i: usize,
) -> Option<&'a [u8]> {
    ranges.get(i).map(|&(a, b)| &data[a..b])
}

impl std::fmt::Debug for Row<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut m = f.debug_map();
        for (i, c) in self.columns.iter().enumerate() {
            m.entry(c, &self.cell(i));
        }
        m.finish()
    }
}
