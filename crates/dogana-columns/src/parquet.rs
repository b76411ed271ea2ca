//! A Parquet file's columns (the `parquet` feature): its footer's schema, in file order, each
//! column typed as the receiver types a Parquet delivery's column
//! ([`dogana_rows::parquet_schema`], CONTRACT-19), so a contract hashed from the file's schema
//! agrees with what the receiver computes when the file arrives. A column whose type has no
//! dogana name (a timestamp without a time zone, a nested, binary or time column) is refused.

use std::fs::File;

use crate::{q, Columns, ColumnsError};

/// The columns of the Parquet file `file`, named `name` in messages.
pub fn columns(file: File, name: &str) -> Result<Columns, ColumnsError> {
    let schema = dogana_rows::parquet_schema(file)
        .map_err(|e| ColumnsError::Document(format!("{name}: {e}")))?;
    let source = format!("Parquet file {name}");
    let mut pairs = Vec::with_capacity(schema.len());
    for (column, ty) in schema {
        let ty = match ty {
            Ok(t) => t.parse().map_err(|e| {
                ColumnsError::unmapped(format!("{source}: column {}: {e}", q(&column)), &column, &t)
            })?,
            Err(arrow) => {
                let why = if arrow.starts_with("Timestamp(") {
                    "a timestamp without a time zone has no dogana name: a datetime carries its UTC offset (CHECK-17); write the column with a time zone (UTC)"
                } else {
                    "it has no dogana name; a column is one of int, float, str, bool, date, datetime or decimal(p,s)"
                };
                return Err(ColumnsError::unmapped(
                    format!(
                        "{source}: column {} of type {}: {why}",
                        q(&column),
                        q(&arrow)
                    ),
                    &column,
                    &arrow,
                ));
            }
        };
        pairs.push((column, ty));
    }
    Columns::new(pairs, &source)
}
