//! A batch of staged rows as Arrow columns, appended to a staging table in one call per
//! column vector instead of one per value (bench/duckdb.md, "Where our time goes": the
//! row-by-row appender's parameter vectors and per-value allocations were a fifth of a full
//! delivery's CPU).
//!
//! Each staging column has one of the staging types (`staging_type` in backend.rs); a value
//! becomes what the row-by-row path made of it: an integer in a DOUBLE column its binary64
//! value, a typed value in a VARCHAR column (an untyped column of a JSON file) its text, and a
//! value of any other kind NULL (only in a delivery some check refuses: what it stages is
//! never published).

use std::fmt::Write;
use std::sync::Arc;

use dogana_receiver::{Row, Staged};
use duckdb::arrow::array::{
    ArrayRef, BooleanBuilder, Date32Builder, Float64Builder, Int64Builder, StringBuilder,
    TimestampMicrosecondBuilder,
};
use duckdb::arrow::datatypes::{Field, Schema};
use duckdb::arrow::error::ArrowError;
use duckdb::arrow::record_batch::RecordBatch;

/// The builder of one staging column.
enum Column {
    Int(Int64Builder),
    Real(Float64Builder),
    Bool(BooleanBuilder),
    Date(Date32Builder),
    Datetime(TimestampMicrosecondBuilder),
    Text(StringBuilder),
}

impl Column {
    fn new(staging_type: &str, rows: usize) -> Column {
        match staging_type {
            "BIGINT" => Column::Int(Int64Builder::with_capacity(rows)),
            "DOUBLE" => Column::Real(Float64Builder::with_capacity(rows)),
            "BOOLEAN" => Column::Bool(BooleanBuilder::with_capacity(rows)),
            "DATE" => Column::Date(Date32Builder::with_capacity(rows)),
            // TIMESTAMPTZ: a zoned Arrow timestamp is DuckDB's TIMESTAMP WITH TIME ZONE
            "TIMESTAMPTZ" => Column::Datetime(
                TimestampMicrosecondBuilder::with_capacity(rows).with_timezone("UTC"),
            ),
            _ => Column::Text(StringBuilder::with_capacity(rows, rows * 16)),
        }
    }

    fn push(&mut self, value: Staged<'_>, scratch: &mut String) {
        match (self, value) {
            (Column::Int(b), Staged::Int(i)) => b.append_value(i),
            (Column::Int(b), _) => b.append_null(),
            (Column::Real(b), Staged::Int(i)) => b.append_value(i as f64),
            (Column::Real(b), Staged::Real(x)) => b.append_value(x),
            (Column::Real(b), _) => b.append_null(),
            (Column::Bool(b), Staged::Bool(v)) => b.append_value(v),
            (Column::Bool(b), _) => b.append_null(),
            (Column::Date(b), Staged::Date(d)) => b.append_value(d.days_since_epoch() as i32),
            (Column::Date(b), _) => b.append_null(),
            (Column::Datetime(b), Staged::Datetime(t)) => b.append_value(t.as_micros()),
            (Column::Datetime(b), _) => b.append_null(),
            (Column::Text(b), Staged::Text(s)) => b.append_value(s),
            (Column::Text(b), Staged::Null) => b.append_null(),
            (Column::Text(b), other) => {
                scratch.clear();
                // writing to a String cannot fail
                let _ = match other {
                    Staged::Int(i) => write!(scratch, "{i}"),
                    Staged::Real(x) => write!(scratch, "{x}"),
                    Staged::Bool(v) => write!(scratch, "{v}"),
                    Staged::Date(d) => write!(scratch, "{d}"),
                    Staged::Datetime(t) => write!(scratch, "{t}"),
                    Staged::Text(_) | Staged::Null => Ok(()),
                };
                b.append_value(scratch.as_str());
            }
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Column::Int(b) => Arc::new(b.finish()),
            Column::Real(b) => Arc::new(b.finish()),
            Column::Bool(b) => Arc::new(b.finish()),
            Column::Date(b) => Arc::new(b.finish()),
            Column::Datetime(b) => Arc::new(b.finish()),
            Column::Text(b) => Arc::new(b.finish()),
        }
    }
}

/// The rows of one staging table (a delivery's live rows, or its tombstones' keys) as they
/// are collected from a batch.
pub(crate) struct Columns {
    columns: Vec<Column>,
    rows: usize,
    scratch: String,
}

impl Columns {
    /// Columns of these staging types; none gives the one VARCHAR column a staging table of no
    /// column has (`c_none`, `k_none`), NULL in every row.
    pub(crate) fn new(staging_types: &[&str], rows: usize) -> Columns {
        let columns = if staging_types.is_empty() {
            vec![Column::new("VARCHAR", rows)]
        } else {
            staging_types.iter().map(|t| Column::new(t, rows)).collect()
        };
        Columns {
            columns,
            rows: 0,
            scratch: String::new(),
        }
    }

    /// Adds a row: its values in column order, NULL for the columns it lacks.
    pub(crate) fn push(&mut self, row: &Row<'_>) {
        for (k, column) in self.columns.iter_mut().enumerate() {
            let value = if k < row.len() {
                row.get(k)
            } else {
                Staged::Null
            };
            column.push(value, &mut self.scratch);
        }
        self.rows += 1;
    }

    /// How many rows were added.
    pub(crate) fn len(&self) -> usize {
        self.rows
    }

    /// The rows as a record batch (its field names are not the table's: the appender matches
    /// columns by position).
    pub(crate) fn finish(&mut self) -> Result<RecordBatch, ArrowError> {
        let arrays: Vec<ArrayRef> = self.columns.iter_mut().map(Column::finish).collect();
        let fields: Vec<Field> = arrays
            .iter()
            .enumerate()
            .map(|(i, a)| Field::new(format!("c{i}"), a.data_type().clone(), true))
            .collect();
        self.rows = 0;
        RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)
    }
}
