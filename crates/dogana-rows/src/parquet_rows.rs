//! Parquet (feature `parquet`). Its footer comes last, so it cannot be parsed as it streams:
//! the bytes are hashed while they are spooled to an unnamed temporary file (or, for a path,
//! hashed in a first read), and the row groups are read in a second, one batch of rows at a
//! time.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, Read, Seek};

use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, TimeUnit};
use dogana::{Date, LogicalType, Timestamp};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::cell::{Cell, Typed};
use crate::checker::{Checker, Slot};
use crate::csv_rows::{header_names, Layout};
use crate::error::RowsError;
use crate::hash::{HashingReader, BUFFER_SIZE};
use crate::parquet_footer::check_footer;
use crate::row::{Raw, Row};
use crate::RowCallback;

/// Rows per batch.
const BATCH_ROWS: usize = 8192;

/// The logical type name a Parquet column's Arrow type maps to, when it has one
/// (CONTRACT-19): integers `int`, floats `float`, strings `str`, booleans `bool`, dates
/// `date`, timestamps with a time zone `datetime`, decimals `decimal(p,s)`.
pub(crate) fn type_name(ty: &DataType) -> Option<String> {
    Some(match ty {
        DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64 => "int".into(),
        DataType::Float16 | DataType::Float32 | DataType::Float64 => "float".into(),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "str".into(),
        DataType::Boolean => "bool".into(),
        DataType::Date32 | DataType::Date64 => "date".into(),
        DataType::Timestamp(_, Some(_)) => "datetime".into(),
        DataType::Decimal128(p, s) | DataType::Decimal256(p, s) => format!("decimal({p},{s})"),
        _ => return None,
    })
}

/// One column of a Parquet file's schema: its name, and its type name ([`type_name`]) or,
/// when it has none, its Arrow type as text.
pub type ParquetColumn = (String, Result<String, String>);

/// A Parquet file's columns from its footer, in file order, each with the type name a Parquet
/// delivery's column takes ([`type_name`], CONTRACT-19), or, when it has none, its Arrow type
/// as text (a timestamp without a time zone, a nested or binary column). Reads the footer
/// only; an error says why the file is not Parquet.
pub fn parquet_schema(mut file: File) -> Result<Vec<ParquetColumn>, String> {
    let bytes = file
        .metadata()
        .map_err(|e| format!("cannot read the file: {e}"))?
        .len();
    check_footer(&mut file, bytes).map_err(|e| format!("cannot read the file: {e}"))??;
    let builder = guarded(|| ParquetRecordBatchReaderBuilder::try_new(file))?
        .map_err(|e| format!("not a Parquet file: {e}"))?;
    Ok(builder
        .schema()
        .fields()
        .iter()
        .map(|f| {
            let ty = f.data_type();
            (
                f.name().clone(),
                type_name(ty).ok_or_else(|| ty.to_string()),
            )
        })
        .collect())
}

/// A value as the file types it.
pub(crate) fn natural(batch: &RecordBatch, col: usize, row: usize) -> Cell<'_> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::*;
    let a = batch.column(col);
    if a.is_null(row) {
        return Cell::Null;
    }
    macro_rules! int {
        ($t:ty) => {
            Cell::Int(i64::from(a.as_primitive::<$t>().value(row)))
        };
    }
    match a.data_type() {
        DataType::Int8 => int!(Int8Type),
        DataType::Int16 => int!(Int16Type),
        DataType::Int32 => int!(Int32Type),
        DataType::Int64 => int!(Int64Type),
        DataType::UInt8 => int!(UInt8Type),
        DataType::UInt16 => int!(UInt16Type),
        DataType::UInt32 => int!(UInt32Type),
        DataType::UInt64 => {
            let v = a.as_primitive::<UInt64Type>().value(row);
            i64::try_from(v).map_or(Cell::Str(Cow::Owned(v.to_string())), Cell::Int)
        }
        DataType::Float32 => Cell::Float(f64::from(a.as_primitive::<Float32Type>().value(row))),
        DataType::Float64 => Cell::Float(a.as_primitive::<Float64Type>().value(row)),
        DataType::Utf8 => Cell::Str(Cow::Borrowed(a.as_string::<i32>().value(row))),
        DataType::LargeUtf8 => Cell::Str(Cow::Borrowed(a.as_string::<i64>().value(row))),
        DataType::Utf8View => Cell::Str(Cow::Borrowed(a.as_string_view().value(row))),
        DataType::Boolean => Cell::Bool(a.as_boolean().value(row)),
        DataType::Date32 => {
            let d = a.as_primitive::<Date32Type>().value(row);
            Date::from_days_since_epoch(i64::from(d)).map_or(Cell::Null, Cell::Date)
        }
        DataType::Date64 => {
            let ms = a.as_primitive::<Date64Type>().value(row);
            Date::from_days_since_epoch(ms.div_euclid(86_400_000)).map_or(Cell::Null, Cell::Date)
        }
        DataType::Timestamp(unit, tz) => {
            let v = match unit {
                TimeUnit::Second => a
                    .as_primitive::<TimestampSecondType>()
                    .value(row)
                    .checked_mul(1_000_000),
                TimeUnit::Millisecond => a
                    .as_primitive::<TimestampMillisecondType>()
                    .value(row)
                    .checked_mul(1000),
                TimeUnit::Microsecond => {
                    Some(a.as_primitive::<TimestampMicrosecondType>().value(row))
                }
                TimeUnit::Nanosecond => Some(
                    a.as_primitive::<TimestampNanosecondType>()
                        .value(row)
                        .div_euclid(1000),
                ),
            };
            match (v.and_then(Timestamp::from_micros), tz) {
                (Some(t), Some(_)) => Cell::Datetime(t),
                // a naive timestamp: its text, without an offset
                (Some(t), None) => Cell::Str(Cow::Owned(t.to_string().replace("+00:00", ""))),
                (None, _) => Cell::Str(Cow::Owned(format!("{v:?} (out of range)"))),
            }
        }
        _ => Cell::Str(Cow::Owned(
            arrow_cast::display::array_value_to_string(a, row).unwrap_or_default(),
        )),
    }
}

/// Text for [`Row::raw`]: values as the protocol writes them.
pub(crate) fn plain_text(c: &Cell<'_>) -> String {
    match c {
        Cell::Str(s) => s.to_string(),
        Cell::Null => String::new(),
        other => other.to_string(),
    }
}

/// A natural value as a bound column of type `ty`.
fn typed(c: &Cell<'_>, ty: LogicalType, arrow: &DataType) -> Result<Typed, String> {
    Ok(match (ty, c) {
        (_, Cell::Null) => Typed::Null,
        (LogicalType::Int, Cell::Int(i)) => Typed::Int(*i),
        (LogicalType::Float, Cell::Float(x)) => Typed::Float(*x),
        (LogicalType::Float, Cell::Int(i)) => Typed::Float(*i as f64),
        (LogicalType::Str, Cell::Str(_)) if type_name(arrow).as_deref() == Some("str") => Typed::Text,
        (LogicalType::Bool, Cell::Bool(b)) => Typed::Bool(*b),
        (LogicalType::Date, Cell::Date(d)) => Typed::Date(*d),
        (LogicalType::Datetime, Cell::Datetime(t)) => Typed::Datetime(*t),
        (LogicalType::Datetime, _) if matches!(arrow, DataType::Timestamp(_, None)) => {
            return Err(format!(
                "{c} is a timestamp without a time zone; a datetime in a read carries its UTC offset (CHECK-17)"
            ))
        }
        _ => return Err(format!("a {arrow} value, {c}, is not a {ty}")),
    })
}

/// Copies `reader` to an unnamed temporary file while hashing it.
fn spool<R: Read>(reader: R) -> io::Result<(File, u64, String)> {
    let dir = std::env::temp_dir();
    let mut n = 0u32;
    let (path, mut file) = loop {
        let path = dir.join(format!(".dogana-rows-{}-{n}.parquet", std::process::id()));
        match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(f) => break (path, f),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
            Err(e) => return Err(e),
        }
    };
    // the file lives on, unnamed, while it is open
    let _ = std::fs::remove_file(&path);
    let mut input = HashingReader::new(reader);
    let mut buf = vec![0u8; BUFFER_SIZE];
    loop {
        let got = input.read(&mut buf)?;
        if got == 0 {
            break;
        }
        io::Write::write_all(&mut file, &buf[..got])?;
    }
    file.rewind()?;
    let bytes = input.bytes_read();
    Ok((file, bytes, input.finish()))
}

/// Runs a step of the parquet crate's reader, turning a panic into the reason it gave. The
/// reader asserts some of what a damaged footer or page may break (a negative offset, a
/// length past the end) instead of returning an error, and a sender's damaged file must be a
/// refusal that names it, never a crash of the receiver. [`chunks_inside`] checks the
/// offsets known to panic before any is read; this is the backstop for the rest.
fn guarded<T>(step: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(step)).map_err(|panic| {
        let why = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "the reader stopped".into());
        format!("the file is damaged ({why})")
    })
}

/// Whether every column chunk the footer names lies inside the file's `bytes`: a damaged
/// footer's negative offset or length makes the parquet crate panic when the chunk is read
/// (`ColumnChunkMetaData::byte_range`).
fn chunks_inside(
    metadata: &parquet::file::metadata::ParquetMetaData,
    bytes: u64,
) -> Result<(), String> {
    for (g, group) in metadata.row_groups().iter().enumerate() {
        for (c, chunk) in group.columns().iter().enumerate() {
            let start = chunk
                .dictionary_page_offset()
                .unwrap_or_else(|| chunk.data_page_offset());
            let len = chunk.compressed_size();
            let inside = u64::try_from(start)
                .ok()
                .zip(u64::try_from(len).ok())
                .and_then(|(s, l)| s.checked_add(l))
                .is_some_and(|end| end <= bytes);
            if !inside {
                return Err(format!(
                    "the Parquet file is damaged: its footer places column {c} of row group {g} at byte {start}, {len} bytes long, outside the file's {bytes} bytes"
                ));
            }
        }
    }
    Ok(())
}

/// What reading a Parquet file found besides the checks.
pub(crate) struct ParquetRead {
    /// The columns, in file order.
    pub(crate) columns: Vec<String>,
    /// The types Parquet gives the columns that have one of the protocol's names.
    pub(crate) types: Vec<(String, String)>,
    /// The bytes and their hash.
    pub(crate) bytes: u64,
    pub(crate) sha: String,
}

/// Reads a Parquet delivery, feeding `checker`.
pub(crate) fn run<R: Read>(
    reader: R,
    checker: &mut Checker,
    on_row: &mut RowCallback<'_>,
) -> Result<ParquetRead, RowsError> {
    let (mut file, bytes, sha) = spool(reader)?;
    let unread = |checker: &mut Checker, why: String| {
        checker.file_problem(why);
        ParquetRead {
            columns: Vec::new(),
            types: Vec::new(),
            bytes,
            sha: sha.clone(),
        }
    };
    if let Err(why) = check_footer(&mut file, bytes)? {
        return Ok(unread(checker, why));
    }
    let builder = match guarded(|| ParquetRecordBatchReaderBuilder::try_new(file)) {
        Ok(Ok(b)) => b.with_batch_size(BATCH_ROWS),
        Ok(Err(e)) => return Ok(unread(checker, format!("not a Parquet file: {e}"))),
        Err(why) => return Ok(unread(checker, format!("not a Parquet file: {why}"))),
    };
    if let Err(why) = chunks_inside(builder.metadata(), bytes) {
        return Ok(unread(checker, why));
    }
    let schema = builder.schema().clone();
    let names: Vec<&[u8]> = schema
        .fields()
        .iter()
        .map(|f| f.name().as_bytes())
        .collect();
    let columns = header_names(names, checker);
    let inferred: Vec<(String, String)> = schema
        .fields()
        .iter()
        .filter_map(|f| type_name(f.data_type()).map(|t| (f.name().clone(), t)))
        .collect();
    let layout = Layout::new(checker, &columns);
    let mut typed_cols: Vec<Option<Typed>> = vec![None; columns.len()];
    let mut reader = match guarded(|| builder.build()) {
        Ok(Ok(r)) => Ok(r),
        Ok(Err(e)) => Err(e.to_string()),
        Err(why) => Err(why),
    }
    .map_err(|e| checker.file_problem(format!("the Parquet file cannot be read: {e}")));
    let mut line: u64 = 0;
    while let Ok(batches) = &mut reader {
        let batch = match guarded(|| batches.next()) {
            Ok(None) => break,
            Ok(Some(Ok(b))) => b,
            Ok(Some(Err(e))) => {
                checker.file_problem(format!(
                    "after row {line}: the Parquet file cannot be read: {e}"
                ));
                break;
            }
            Err(why) => {
                checker.file_problem(format!(
                    "after row {line}: the Parquet file cannot be read: {why}"
                ));
                break;
            }
        };
        for row in 0..batch.num_rows() {
            line += 1;
            let mut error: Option<String> = None;
            for &(i, ty) in &layout.bound {
                let cell = natural(&batch, i, row);
                typed_cols[i] = Some(match typed(&cell, ty, batch.column(i).data_type()) {
                    Ok(t) => t,
                    Err(why) => {
                        error.get_or_insert_with(|| format!("column {}: {why}", columns[i]));
                        Typed::Bad
                    }
                });
            }
            let slot = |i: Option<usize>| -> Slot<'_> {
                let Some(i) = i else { return Slot::Absent };
                match typed_cols[i] {
                    None | Some(Typed::Bad) => Slot::Bad,
                    Some(Typed::Text) => Slot::Val(natural(&batch, i, row)),
                    Some(t) => Slot::Val(t.to_cell("")),
                }
            };
            checker.key_start();
            for (k, &i) in layout.keys.iter().enumerate() {
                checker.key_part(k, &slot(i));
            }
            let ok = error.is_none();
            let tomb = checker.row(
                line,
                slot(layout.deleted),
                slot(layout.window),
                slot(layout.cursor),
                error,
            );
            if let (true, Some(tombstone)) = (ok, tomb) {
                on_row(&Row {
                    columns: &columns,
                    typed: &typed_cols,
                    raw: Raw::Arrow { batch: &batch, row },
                    line,
                    tombstone,
                })?;
            }
        }
    }
    Ok(ParquetRead {
        columns,
        types: inferred,
        bytes,
        sha,
    })
}

#[cfg(test)]
mod tests {
    use super::guarded;

    #[test]
    fn a_panic_of_the_reader_is_a_reason() {
        // rule: CHECK-08 — what the parquet crate asserts on a damaged file is a refusal
        assert_eq!(guarded(|| 7), Ok(7));
        let why = guarded(|| -> u8 { panic!("column start and length should not be negative") });
        assert_eq!(
            why,
            Err("the file is damaged (column start and length should not be negative)".into())
        );
        let why = guarded(|| -> u8 { panic!("{} of {}", 3, 4) });
        assert_eq!(why, Err("the file is damaged (3 of 4)".into()));
    }
}
