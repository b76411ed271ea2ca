//! Rows to Parquet parts and back. A declared type maps to one Arrow type: `int` Int64,
//! `float` Float64, `bool` Boolean, `date` Date32, `datetime` Timestamp(µs, UTC); `str`,
//! `decimal(p,s)` (its exact text) and untyped columns Utf8.

use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Date32Builder, Float64Builder, Int64Builder, StringBuilder,
    TimestampMicrosecondBuilder,
};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Date32Array, Float64Array, Int64Array, RecordBatch, StringArray,
    TimestampMicrosecondArray,
};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use bytes::Bytes;
use dogana::{Date, LogicalType, Timestamp};
use dogana_receiver::{Datum, StoreError};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

use crate::layout::ColumnDef;

/// The physical kind of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Int64.
    Int,
    /// Float64.
    Float,
    /// Boolean.
    Bool,
    /// Date32.
    Date,
    /// Timestamp(µs, UTC).
    Datetime,
    /// Utf8.
    Text,
}

impl Kind {
    /// The kind of a declared type name.
    pub fn of(ty: Option<&str>) -> Kind {
        match ty.and_then(LogicalType::from_name) {
            Some(LogicalType::Int) => Kind::Int,
            Some(LogicalType::Float) => Kind::Float,
            Some(LogicalType::Bool) => Kind::Bool,
            Some(LogicalType::Date) => Kind::Date,
            Some(LogicalType::Datetime) => Kind::Datetime,
            _ => Kind::Text,
        }
    }

    fn arrow(self) -> DataType {
        match self {
            Kind::Int => DataType::Int64,
            Kind::Float => DataType::Float64,
            Kind::Bool => DataType::Boolean,
            Kind::Date => DataType::Date32,
            Kind::Datetime => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            Kind::Text => DataType::Utf8,
        }
    }
}

fn corrupt(m: impl Into<String>) -> StoreError {
    StoreError::Corrupt(m.into())
}

fn pq(e: impl std::error::Error + Send + Sync + 'static) -> StoreError {
    StoreError::backend("lake", e)
}

/// The Arrow schema of a table's columns.
pub fn schema(columns: &[ColumnDef]) -> Arc<Schema> {
    Arc::new(Schema::new(
        columns
            .iter()
            .map(|c| Field::new(&c.name, Kind::of(c.ty.as_deref()).arrow(), !c.key))
            .collect::<Vec<_>>(),
    ))
}

fn column(kind: Kind, name: &str, rows: &[Vec<Datum>], i: usize) -> Result<ArrayRef, StoreError> {
    let bad = |d: &Datum| {
        corrupt(format!(
            "column {name:?} of kind {kind:?} cannot hold {d:?}"
        ))
    };
    Ok(match kind {
        Kind::Int => {
            let mut b = Int64Builder::with_capacity(rows.len());
            for r in rows {
                match &r[i] {
                    Datum::Null => b.append_null(),
                    Datum::Int(v) => b.append_value(*v),
                    d => return Err(bad(d)),
                }
            }
            Arc::new(b.finish())
        }
        Kind::Float => {
            let mut b = Float64Builder::with_capacity(rows.len());
            for r in rows {
                match &r[i] {
                    Datum::Null => b.append_null(),
                    Datum::Real(v) => b.append_value(*v),
                    Datum::Int(v) => b.append_value(*v as f64),
                    d => return Err(bad(d)),
                }
            }
            Arc::new(b.finish())
        }
        Kind::Bool => {
            let mut b = BooleanBuilder::with_capacity(rows.len());
            for r in rows {
                match &r[i] {
                    Datum::Null => b.append_null(),
                    Datum::Bool(v) => b.append_value(*v),
                    d => return Err(bad(d)),
                }
            }
            Arc::new(b.finish())
        }
        Kind::Date => {
            let mut b = Date32Builder::with_capacity(rows.len());
            for r in rows {
                match &r[i] {
                    Datum::Null => b.append_null(),
                    Datum::Date(d) => b.append_value(
                        i32::try_from(d.days_since_epoch())
                            .map_err(|_| corrupt(format!("date {d} out of range")))?,
                    ),
                    d => return Err(bad(d)),
                }
            }
            Arc::new(b.finish())
        }
        Kind::Datetime => {
            let mut b = TimestampMicrosecondBuilder::with_capacity(rows.len()).with_timezone("UTC");
            for r in rows {
                match &r[i] {
                    Datum::Null => b.append_null(),
                    Datum::Datetime(t) => b.append_value(t.as_micros()),
                    d => return Err(bad(d)),
                }
            }
            Arc::new(b.finish())
        }
        Kind::Text => {
            let mut b = StringBuilder::with_capacity(rows.len(), rows.len() * 8);
            for r in rows {
                match &r[i] {
                    Datum::Null => b.append_null(),
                    Datum::Text(s) => b.append_value(s),
                    d => match d.render() {
                        Some(s) => b.append_value(s),
                        None => b.append_null(),
                    },
                }
            }
            Arc::new(b.finish())
        }
    })
}

/// One Parquet file of these rows (one value per column each).
pub fn encode(columns: &[ColumnDef], rows: &[Vec<Datum>]) -> Result<Bytes, StoreError> {
    let schema = schema(columns);
    let arrays: Vec<ArrayRef> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| column(Kind::of(c.ty.as_deref()), &c.name, rows, i))
        .collect::<Result<_, _>>()?;
    let batch = if columns.is_empty() {
        RecordBatch::new_empty(schema.clone())
    } else {
        RecordBatch::try_new(schema.clone(), arrays).map_err(pq)?
    };
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .build();
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new(&mut out, schema, Some(props)).map_err(pq)?;
    w.write(&batch).map_err(pq)?;
    w.close().map_err(pq)?;
    Ok(Bytes::from(out))
}

fn datum(a: &dyn Array, kind: Kind, i: usize) -> Result<Datum, StoreError> {
    if a.is_null(i) {
        return Ok(Datum::Null);
    }
    let wrong = || corrupt(format!("a part's column is not of kind {kind:?}"));
    Ok(match kind {
        Kind::Int => Datum::Int(
            a.as_any()
                .downcast_ref::<Int64Array>()
                .ok_or_else(wrong)?
                .value(i),
        ),
        // rule: store.reconcile.lattice — a part written before the column took the
        // promotion holds Int64: it reads as Float64 with no cast asked of the reader
        Kind::Float => match a.as_any().downcast_ref::<Float64Array>() {
            Some(f) => Datum::Real(f.value(i)),
            None => Datum::Real(
                a.as_any()
                    .downcast_ref::<Int64Array>()
                    .ok_or_else(wrong)?
                    .value(i) as f64,
            ),
        },
        Kind::Bool => Datum::Bool(
            a.as_any()
                .downcast_ref::<BooleanArray>()
                .ok_or_else(wrong)?
                .value(i),
        ),
        Kind::Date => {
            let d = a
                .as_any()
                .downcast_ref::<Date32Array>()
                .ok_or_else(wrong)?
                .value(i);
            Datum::Date(
                Date::from_days_since_epoch(i64::from(d))
                    .ok_or_else(|| corrupt(format!("day {d} is out of range")))?,
            )
        }
        Kind::Datetime => {
            let t = a
                .as_any()
                .downcast_ref::<TimestampMicrosecondArray>()
                .ok_or_else(wrong)?
                .value(i);
            Datum::Datetime(
                Timestamp::from_micros(t)
                    .ok_or_else(|| corrupt(format!("instant {t} is out of range")))?,
            )
        }
        Kind::Text => Datum::Text(
            a.as_any()
                .downcast_ref::<StringArray>()
                .ok_or_else(wrong)?
                .value(i)
                .to_owned(),
        ),
    })
}

/// The rows of one Parquet part, in the columns given (by name; a column the part lacks
/// reads as NULL).
pub fn decode(columns: &[ColumnDef], bytes: Bytes) -> Result<Vec<Vec<Datum>>, StoreError> {
    let reader = ParquetRecordBatchReaderBuilder::try_new(bytes)
        .map_err(pq)?
        .build()
        .map_err(pq)?;
    let mut rows = Vec::new();
    for batch in reader {
        let batch = batch.map_err(pq)?;
        let cols: Vec<Option<&ArrayRef>> = columns
            .iter()
            .map(|c| batch.column_by_name(&c.name))
            .collect();
        for i in 0..batch.num_rows() {
            let mut row = Vec::with_capacity(columns.len());
            for (c, a) in columns.iter().zip(&cols) {
                row.push(match a {
                    None => Datum::Null,
                    Some(a) => datum(a.as_ref(), Kind::of(c.ty.as_deref()), i)?,
                });
            }
            rows.push(row);
        }
    }
    Ok(rows)
}
