//! Rows to Parquet parts and back. A declared type maps to one Arrow type: `int` Int64,
//! `float` Float64, `bool` Boolean, `date` Date32, `datetime` Timestamp(µs, UTC); `str`,
//! `decimal(p,s)` (its exact text) and untyped columns Utf8. The lattice's typed columns
//! land too (`store.reconcile.typed-landing`): `binary` Binary and `fixed_size_binary(n)`
//! FixedSizeBinary(n) from padded base64 text, `vector(n,f32)` and `vector(n,f16)` a
//! dimension-n FixedSizeList of Float32 or Float16 (half width in Parquet,
//! `store.reconcile.half-width`) from a JSON number array of n numbers; any other value is
//! `StoreSchemaIncompatible`. They read back as the same text. Struct, list, map and
//! variant columns land from JSON as Arrow Struct, List and Map columns (`crate::nested`,
//! `store.reconcile.nested-landing`, `store.reconcile.variant`). (A dogana contract declares
//! none of them: they reach the lake through its port, and a delivery's undeclared column
//! lands in the one the stored schema holds, `store.reconcile.stored-type`.)

use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Date32Builder, Float64Builder, Int64Builder, StringBuilder,
    TimestampMicrosecondBuilder,
};
use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, FixedSizeBinaryArray,
    FixedSizeListArray, Float16Array, Float32Array, Float64Array, Int64Array, RecordBatch,
    StringArray, TimestampMicrosecondArray,
};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use base64::Engine as _;
use bytes::Bytes;
use dogana::{Date, LogicalType, Timestamp};
use dogana_receiver::{Batch, Datum, Staged, StoreError};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::{ArrowWriter, ProjectionMask};
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;

use crate::lattice::LakeType;
use crate::layout::ColumnDef;
use crate::nested;
use crate::LakeError;

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
    /// Binary, from padded base64.
    Binary,
    /// FixedSizeBinary(n), from padded base64 of n bytes.
    FixedBinary(i32),
    /// A dimension-n FixedSizeList of Float32 (or Float16: `half`), from a JSON number array.
    Vector {
        /// The dimension.
        dim: i32,
        /// Float16 elements.
        half: bool,
    },
    /// A struct, list, map or variant column (`crate::nested`), from JSON.
    Nested,
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
            _ => match ty.and_then(LakeType::parse) {
                Some(LakeType::Binary) => Kind::Binary,
                Some(LakeType::FixedBinary(n)) => Kind::FixedBinary(n.min(i32::MAX as u32) as i32),
                Some(LakeType::Vector { dim, half }) => Kind::Vector {
                    dim: dim.min(i32::MAX as u32) as i32,
                    half,
                },
                Some(t) if nested::is_nested(&t) => Kind::Nested,
                _ => Kind::Text,
            },
        }
    }

    fn arrow(self) -> DataType {
        match self {
            Kind::Nested => unreachable!("a nested column's Arrow type is its lattice type's"),
            Kind::Int => DataType::Int64,
            Kind::Float => DataType::Float64,
            Kind::Bool => DataType::Boolean,
            Kind::Date => DataType::Date32,
            Kind::Datetime => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            Kind::Text => DataType::Utf8,
            Kind::Binary => DataType::Binary,
            Kind::FixedBinary(n) => DataType::FixedSizeBinary(n),
            Kind::Vector { dim, half } => DataType::FixedSizeList(
                Arc::new(Field::new(
                    "item",
                    if half {
                        DataType::Float16
                    } else {
                        DataType::Float32
                    },
                    true,
                )),
                dim,
            ),
        }
    }

    /// The type name, for an error.
    fn name(self) -> String {
        match self {
            Kind::Binary => "binary".into(),
            Kind::FixedBinary(n) => format!("fixed_size_binary({n})"),
            Kind::Vector { dim, half } => {
                format!("vector({dim},{})", if half { "f16" } else { "f32" })
            }
            k => format!("{k:?}").to_lowercase(),
        }
    }
}

fn corrupt(m: impl Into<String>) -> StoreError {
    StoreError::Corrupt(m.into())
}

fn pq(e: impl std::error::Error + Send + Sync + 'static) -> StoreError {
    StoreError::backend("lake", e)
}

/// The lattice type of a nested or variant column (None: another kind).
fn nested_type(ty: Option<&str>) -> Option<LakeType> {
    ty.and_then(LakeType::parse).filter(nested::is_nested)
}

/// The Arrow schema of a table's columns.
pub fn schema(columns: &[ColumnDef]) -> Arc<Schema> {
    Arc::new(Schema::new(
        columns
            .iter()
            .map(|c| {
                let ty = match nested_type(c.ty.as_deref()) {
                    Some(t) => nested::arrow_type(&t),
                    None => Kind::of(c.ty.as_deref()).arrow(),
                };
                Field::new(&c.name, ty, !c.key)
            })
            .collect::<Vec<_>>(),
    ))
}

/// A value a typed column cannot hold: `StoreSchemaIncompatible` naming the column, its type
/// and what arrived (cut to 80 characters).
fn incompatible(table: &str, name: &str, kind: Kind, what: String) -> StoreError {
    LakeError::StoreSchemaIncompatible {
        table: table.to_owned(),
        column: name.chars().take(80).collect(),
        stored: kind.name(),
        arriving: what.chars().take(80).collect(),
    }
    .into()
}

/// The text of a value a typed column got (a base64 or JSON array text).
fn text_of(d: &Datum) -> Option<String> {
    match d {
        Datum::Text(s) => Some(s.clone()),
        d => d.render(),
    }
}

fn typed_column(
    table: &str,
    kind: Kind,
    name: &str,
    rows: &[Vec<Datum>],
    i: usize,
) -> Result<ArrayRef, StoreError> {
    let b64 = base64::engine::general_purpose::STANDARD;
    let value = |d: &Datum| -> Result<Option<String>, StoreError> {
        match d {
            Datum::Null => Ok(None),
            d => text_of(d)
                .map(Some)
                .ok_or_else(|| incompatible(table, name, kind, format!("{d:?}"))),
        }
    };
    Ok(match kind {
        Kind::Binary | Kind::FixedBinary(_) => {
            let mut out: Vec<Option<Vec<u8>>> = Vec::with_capacity(rows.len());
            for r in rows {
                let Some(t) = value(&r[i])? else {
                    out.push(None);
                    continue;
                };
                let bytes = b64.decode(t.as_bytes()).map_err(|_| {
                    incompatible(table, name, kind, format!("{t:?}, not padded base64"))
                })?;
                if let Kind::FixedBinary(n) = kind {
                    if bytes.len() != n as usize {
                        return Err(incompatible(
                            table,
                            name,
                            kind,
                            format!("{} bytes", bytes.len()),
                        ));
                    }
                }
                out.push(Some(bytes));
            }
            match kind {
                Kind::FixedBinary(n) => Arc::new(
                    FixedSizeBinaryArray::try_from_sparse_iter_with_size(
                        out.iter().map(|v| v.as_deref()),
                        n,
                    )
                    .map_err(pq)?,
                ),
                _ => Arc::new(BinaryArray::from_iter(out.iter().map(|v| v.as_deref()))),
            }
        }
        Kind::Vector { dim, half } => {
            let mut valid = Vec::with_capacity(rows.len());
            let mut items: Vec<f32> = Vec::with_capacity(rows.len() * dim.max(0) as usize);
            for r in rows {
                let Some(t) = value(&r[i])? else {
                    valid.push(false);
                    items.extend(std::iter::repeat_n(0.0, dim.max(0) as usize));
                    continue;
                };
                let v: Vec<f64> = serde_json::from_str(&t).map_err(|_| {
                    incompatible(table, name, kind, format!("{t:?}, not a number array"))
                })?;
                if v.len() != dim as usize {
                    return Err(incompatible(
                        table,
                        name,
                        kind,
                        format!("an array of {} numbers", v.len()),
                    ));
                }
                valid.push(true);
                items.extend(v.iter().map(|x| *x as f32));
            }
            let field = Arc::new(Field::new(
                "item",
                if half {
                    DataType::Float16
                } else {
                    DataType::Float32
                },
                true,
            ));
            let values: ArrayRef = if half {
                Arc::new(Float16Array::from(
                    items
                        .iter()
                        .map(|x| half::f16::from_f32(*x))
                        .collect::<Vec<_>>(),
                ))
            } else {
                Arc::new(Float32Array::from(items))
            };
            Arc::new(
                FixedSizeListArray::try_new(field, dim, values, Some(NullBuffer::from(valid)))
                    .map_err(pq)?,
            )
        }
        _ => return Err(corrupt(format!("{kind:?} is not a typed column"))),
    })
}

/// A value of a row held as [`Datum`]s, as the borrowed [`Staged`] a batch gives.
fn staged(d: &Datum) -> Staged<'_> {
    match d {
        Datum::Null => Staged::Null,
        Datum::Int(v) => Staged::Int(*v),
        Datum::Real(v) => Staged::Real(*v),
        Datum::Bool(v) => Staged::Bool(*v),
        Datum::Text(s) => Staged::Text(s),
        Datum::Date(d) => Staged::Date(*d),
        Datum::Datetime(t) => Staged::Datetime(*t),
    }
}

/// The text a non-text value takes in a text column.
fn render(v: Staged<'_>) -> Option<String> {
    match v {
        Staged::Null => None,
        Staged::Int(v) => Datum::Int(v).render(),
        Staged::Real(v) => Datum::Real(v).render(),
        Staged::Bool(v) => Datum::Bool(v).render(),
        Staged::Text(s) => Some(s.to_owned()),
        Staged::Date(d) => Datum::Date(d).render(),
        Staged::Datetime(t) => Datum::Datetime(t).render(),
    }
}

/// One column of a plain kind from its `n` values.
fn column<'a>(
    kind: Kind,
    name: &str,
    n: usize,
    values: impl Iterator<Item = Staged<'a>>,
) -> Result<ArrayRef, StoreError> {
    let bad = |d: &Staged<'_>| {
        corrupt(format!(
            "column {name:?} of kind {kind:?} cannot hold {d:?}"
        ))
    };
    Ok(match kind {
        Kind::Int => {
            let mut b = Int64Builder::with_capacity(n);
            for v in values {
                match v {
                    Staged::Null => b.append_null(),
                    Staged::Int(v) => b.append_value(v),
                    d => return Err(bad(&d)),
                }
            }
            Arc::new(b.finish())
        }
        Kind::Float => {
            let mut b = Float64Builder::with_capacity(n);
            for v in values {
                match v {
                    Staged::Null => b.append_null(),
                    Staged::Real(v) => b.append_value(v),
                    Staged::Int(v) => b.append_value(v as f64),
                    d => return Err(bad(&d)),
                }
            }
            Arc::new(b.finish())
        }
        Kind::Bool => {
            let mut b = BooleanBuilder::with_capacity(n);
            for v in values {
                match v {
                    Staged::Null => b.append_null(),
                    Staged::Bool(v) => b.append_value(v),
                    d => return Err(bad(&d)),
                }
            }
            Arc::new(b.finish())
        }
        Kind::Date => {
            let mut b = Date32Builder::with_capacity(n);
            for v in values {
                match v {
                    Staged::Null => b.append_null(),
                    Staged::Date(d) => b.append_value(
                        i32::try_from(d.days_since_epoch())
                            .map_err(|_| corrupt(format!("date {d} out of range")))?,
                    ),
                    d => return Err(bad(&d)),
                }
            }
            Arc::new(b.finish())
        }
        Kind::Datetime => {
            let mut b = TimestampMicrosecondBuilder::with_capacity(n).with_timezone("UTC");
            for v in values {
                match v {
                    Staged::Null => b.append_null(),
                    Staged::Datetime(t) => b.append_value(t.as_micros()),
                    d => return Err(bad(&d)),
                }
            }
            Arc::new(b.finish())
        }
        Kind::Text => {
            let mut b = StringBuilder::with_capacity(n, n * 8);
            for v in values {
                match v {
                    Staged::Null => b.append_null(),
                    Staged::Text(s) => b.append_value(s),
                    d => match render(d) {
                        Some(s) => b.append_value(s),
                        None => b.append_null(),
                    },
                }
            }
            Arc::new(b.finish())
        }
        k => return Err(corrupt(format!("{k:?} is a typed column"))),
    })
}

/// One Parquet file of these rows of `table` (one value per column each).
pub fn encode(
    table: &str,
    columns: &[ColumnDef],
    rows: &[Vec<Datum>],
) -> Result<Bytes, StoreError> {
    let mut w = PartWriter::new(table, columns)?;
    w.write(rows)?;
    w.finish()
}

/// One Parquet part written batch by batch: each [`PartWriter::write`] encodes its rows
/// (Parquet compresses them page by page), so a large delivery is held encoded, never as
/// rows, until [`PartWriter::finish`] gives the file's bytes.
pub struct PartWriter {
    table: String,
    columns: Vec<ColumnDef>,
    schema: Arc<Schema>,
    writer: ArrowWriter<Vec<u8>>,
    rows: u64,
}

impl std::fmt::Debug for PartWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PartWriter")
            .field("table", &self.table)
            .field("rows", &self.rows)
            .finish_non_exhaustive()
    }
}

impl PartWriter {
    /// A new part of `table`'s `columns`.
    pub fn new(table: &str, columns: &[ColumnDef]) -> Result<PartWriter, StoreError> {
        let schema = schema(columns);
        // dictionaries where values repeat (text, dates, booleans): an integer, float or
        // instant column is mostly distinct values, whose interning costs and saves nothing
        let mut props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            // page statistics in each page header too, as parquet before 56 wrote them: the
            // same bytes a part had before the move to arrow 58 (docs/decisions.md)
            .set_write_page_header_statistics(true)
            .set_dictionary_enabled(false);
        for c in columns {
            if matches!(
                Kind::of(c.ty.as_deref()),
                Kind::Text | Kind::Date | Kind::Bool
            ) {
                props =
                    props.set_column_dictionary_enabled(ColumnPath::from(c.name.as_str()), true);
            }
        }
        let props = props.build();
        let writer = ArrowWriter::try_new(Vec::new(), schema.clone(), Some(props)).map_err(pq)?;
        Ok(PartWriter {
            table: table.to_owned(),
            columns: columns.to_vec(),
            schema,
            writer,
            rows: 0,
        })
    }

    /// Encodes `rows` (one value per column each) into the part.
    pub fn write(&mut self, rows: &[Vec<Datum>]) -> Result<(), StoreError> {
        let arrays: Vec<ArrayRef> = self
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| match Kind::of(c.ty.as_deref()) {
                k @ (Kind::Binary | Kind::FixedBinary(_) | Kind::Vector { .. }) => {
                    typed_column(&self.table, k, &c.name, rows, i)
                }
                // rule: store.reconcile.nested-landing — objects and arrays land as Struct,
                // List and Map columns; rule: store.reconcile.variant — a variant as its one
                // Struct
                Kind::Nested => match nested_type(c.ty.as_deref()) {
                    Some(t) => nested::column(&self.table, &c.name, &t, rows, i),
                    None => Err(corrupt(format!("{:?} is not a nested type", c.ty))),
                },
                k => column(k, &c.name, rows.len(), rows.iter().map(|r| staged(&r[i]))),
            })
            .collect::<Result<_, _>>()?;
        self.push(arrays, rows.len())
    }

    /// Writes one record batch of these column arrays, of `n` rows.
    fn push(&mut self, arrays: Vec<ArrayRef>, n: usize) -> Result<(), StoreError> {
        let batch = if self.columns.is_empty() {
            RecordBatch::new_empty(self.schema.clone())
        } else {
            RecordBatch::try_new(self.schema.clone(), arrays).map_err(pq)?
        };
        self.writer.write(&batch).map_err(pq)?;
        self.rows += n as u64;
        Ok(())
    }

    /// Encodes the live rows of `batch` into the part: column `i` of the part is the batch's
    /// value `at[i]`. Plain kinds only (see [`PartWriter::plain`]): nothing is copied into
    /// rows of values first.
    pub fn write_batch(&mut self, batch: &Batch, at: &[usize]) -> Result<(), StoreError> {
        let n = batch.rows().filter(|r| !r.tombstone).count();
        let arrays: Vec<ArrayRef> = self
            .columns
            .iter()
            .zip(at)
            .map(|(c, &i)| {
                let live = batch.rows().filter(|r| !r.tombstone).map(|r| r.get(i));
                column(Kind::of(c.ty.as_deref()), &c.name, n, live)
            })
            .collect::<Result<_, _>>()?;
        self.push(arrays, n)
    }

    /// Whether every column is of a plain kind (no typed or nested column), as
    /// [`PartWriter::write_batch`] needs.
    pub fn plain(columns: &[ColumnDef]) -> bool {
        columns.iter().all(|c| {
            !matches!(
                Kind::of(c.ty.as_deref()),
                Kind::Binary | Kind::FixedBinary(_) | Kind::Vector { .. } | Kind::Nested
            )
        })
    }

    /// How many rows it holds.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// The finished Parquet file.
    pub fn finish(self) -> Result<Bytes, StoreError> {
        Ok(Bytes::from(self.writer.into_inner().map_err(pq)?))
    }
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
        Kind::Binary => Datum::Text(
            base64::engine::general_purpose::STANDARD.encode(
                a.as_any()
                    .downcast_ref::<BinaryArray>()
                    .ok_or_else(wrong)?
                    .value(i),
            ),
        ),
        Kind::FixedBinary(_) => Datum::Text(
            base64::engine::general_purpose::STANDARD.encode(
                a.as_any()
                    .downcast_ref::<FixedSizeBinaryArray>()
                    .ok_or_else(wrong)?
                    .value(i),
            ),
        ),
        Kind::Vector { half, .. } => {
            let list = a
                .as_any()
                .downcast_ref::<FixedSizeListArray>()
                .ok_or_else(wrong)?
                .value(i);
            let items: Vec<f64> = if half {
                let f = list
                    .as_any()
                    .downcast_ref::<Float16Array>()
                    .ok_or_else(wrong)?;
                f.values().iter().map(|x| f64::from(x.to_f32())).collect()
            } else {
                let f = list
                    .as_any()
                    .downcast_ref::<Float32Array>()
                    .ok_or_else(wrong)?;
                f.values().iter().map(|x| f64::from(*x)).collect()
            };
            Datum::Text(serde_json::to_string(&items).map_err(pq)?)
        }
        Kind::Nested => return Err(corrupt("a nested column is read by its lattice type")),
    })
}

/// The rows of one Parquet part, in the columns given (by name; a column the part lacks
/// reads as NULL).
pub fn decode(columns: &[ColumnDef], bytes: Bytes) -> Result<Vec<Vec<Datum>>, StoreError> {
    let builder = ParquetRecordBatchReaderBuilder::try_new(bytes).map_err(pq)?;
    // only the columns asked for are read (a deletion part's keys, a key scan)
    let roots: Vec<usize> = builder
        .parquet_schema()
        .root_schema()
        .get_fields()
        .iter()
        .enumerate()
        .filter(|(_, f)| columns.iter().any(|c| c.name == f.name()))
        .map(|(i, _)| i)
        .collect();
    let mask = ProjectionMask::roots(builder.parquet_schema(), roots);
    let reader = builder.with_projection(mask).build().map_err(pq)?;
    let types: Vec<Option<LakeType>> = columns
        .iter()
        .map(|c| nested_type(c.ty.as_deref()))
        .collect();
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
                row.push(match (a, &types[row.len()]) {
                    (None, _) => Datum::Null,
                    (Some(a), Some(t)) => nested::datum_at(a.as_ref(), t, i)?,
                    (Some(a), None) => datum(a.as_ref(), Kind::of(c.ty.as_deref()), i)?,
                });
            }
            rows.push(row);
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::basic::Type as Physical;
    use parquet::file::reader::{FileReader, SerializedFileReader};

    fn col(name: &str, ty: &str) -> ColumnDef {
        ColumnDef {
            name: name.into(),
            ty: Some(ty.into()),
            key: false,
        }
    }

    fn text(s: &str) -> Datum {
        Datum::Text(s.into())
    }

    #[test]
    fn bytes_land_from_padded_base64_and_vectors_from_number_arrays() {
        // rule: store.reconcile.typed-landing
        let cols = [
            col("b", "binary"),
            col("f", "fixed_size_binary(2)"),
            col("v", "vector(3,f32)"),
        ];
        let rows = vec![
            vec![text("aGk="), text("AAE="), text("[1.0,2.5,-3.0]")],
            vec![Datum::Null, Datum::Null, Datum::Null],
        ];
        let bytes = encode("t", &cols, &rows).unwrap();
        assert_eq!(decode(&cols, bytes).unwrap(), rows);
        // other values meet incompatible, naming column, type and what arrived
        for (row, column, arriving) in [
            (
                vec![text("hi!"), Datum::Null, Datum::Null],
                "b",
                "\"hi!\", not padded base64",
            ),
            (
                vec![text("aGk"), Datum::Null, Datum::Null],
                "b",
                "\"aGk\", not padded base64",
            ),
            (vec![Datum::Null, text("AAEC"), Datum::Null], "f", "3 bytes"),
            (
                vec![Datum::Null, Datum::Null, text("[1,2]")],
                "v",
                "an array of 2 numbers",
            ),
            (
                vec![Datum::Null, Datum::Null, text("{}")],
                "v",
                "\"{}\", not a number array",
            ),
        ] {
            let e = encode("t", &cols, &[row]).unwrap_err();
            match LakeError::of(&e) {
                Some(LakeError::StoreSchemaIncompatible {
                    column: c,
                    arriving: a,
                    ..
                }) if c == column => assert_eq!(a, arriving),
                other => panic!("{column}: {other:?} ({e})"),
            }
        }
        // a fixed-size binary of the wrong width names its width
        let e = encode(
            "t",
            &[col("f", "fixed_size_binary(4)")],
            &[vec![text("aGk=")]],
        )
        .unwrap_err();
        assert!(e.to_string().contains("fixed_size_binary(4)"), "{e}");
        assert!(e.to_string().contains("2 bytes"), "{e}");
    }

    #[test]
    fn a_float16_vector_is_stored_at_half_width() {
        // rule: store.reconcile.half-width
        let cols = [col("v", "vector(2,f16)")];
        let rows = vec![vec![text("[0.5,-2.0]")]];
        let bytes = encode("t", &cols, &rows).unwrap();
        let reader = SerializedFileReader::new(bytes.clone()).unwrap();
        let leaf = reader.metadata().file_metadata().schema_descr().column(0);
        assert_eq!(leaf.physical_type(), Physical::FIXED_LEN_BYTE_ARRAY);
        assert_eq!(leaf.type_length(), 2, "two bytes an element");
        assert_eq!(decode(&cols, bytes).unwrap(), rows);
        // and a Float32 vector at full width
        let bytes = encode("t", &[col("v", "vector(2,f32)")], &rows).unwrap();
        let reader = SerializedFileReader::new(bytes).unwrap();
        let leaf = reader.metadata().file_metadata().schema_descr().column(0);
        assert_eq!(leaf.physical_type(), Physical::FLOAT);
    }

    #[test]
    fn a_parts_data_pages_carry_their_statistics_in_their_headers() {
        // decision: docs/decisions.md, "One arrow: 58" — a part is written as parquet 55
        // wrote it, page statistics in each data page's header (56 and later leave them out)
        use parquet::file::properties::ReaderProperties;
        use parquet::file::serialized_reader::ReadOptionsBuilder;
        use parquet::file::statistics::Statistics;
        let cols = [col("n", "int")];
        let rows = vec![
            vec![Datum::Int(5)],
            vec![Datum::Int(-3)],
            vec![Datum::Null],
            vec![Datum::Int(9)],
        ];
        let bytes = encode("t", &cols, &rows).unwrap();
        let options = ReadOptionsBuilder::new()
            .with_reader_properties(
                ReaderProperties::builder()
                    .set_read_page_statistics(true)
                    .build(),
            )
            .build();
        let reader = SerializedFileReader::new_with_options(bytes, options).unwrap();
        let pages: Vec<_> = reader
            .get_row_group(0)
            .unwrap()
            .get_column_page_reader(0)
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(
            pages.len(),
            1,
            "one data page, no dictionary for an int column"
        );
        match pages[0].statistics() {
            Some(Statistics::Int64(s)) => {
                assert_eq!((s.min_opt(), s.max_opt()), (Some(&-3), Some(&9)));
                assert_eq!(s.null_count_opt(), Some(1));
            }
            other => panic!("the data page's header has no Int64 statistics: {other:?}"),
        }
    }
}
