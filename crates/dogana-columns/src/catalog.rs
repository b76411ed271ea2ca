//! A live table's columns from its database's catalog: the backend crates read each column's
//! name and declared type (SQLite's `pragma_table_info`, DuckDB's and Postgres's
//! `information_schema.columns` with the type as the database spells it), in the table's
//! order; this maps each type through [`crate::sql_types`].
//!
//! SQLite keeps a column's declared type as written, so a table created with `DATE`,
//! `TIMESTAMP` or `DECIMAL(12,2)` reads as `date`, `datetime` or `decimal(12,2)`. A table
//! dogana published there declares `date`, `datetime` and decimal columns `TEXT` (SQLite has
//! no such storage class), which read back as `str`: take such a table's columns from its
//! data contract instead (docs/contract-toml.md).

use crate::sql_types;
use crate::{q, Columns, ColumnsError};

/// The columns of `table` (shown as `source` in messages) from its catalog rows, `(name,
/// declared type)` in order; `None` when the database holds no such table.
pub fn columns(
    source: &str,
    table: &str,
    rows: Option<Vec<(String, String)>>,
) -> Result<Columns, ColumnsError> {
    let Some(rows) = rows else {
        return Err(ColumnsError::NotFound(format!(
            "{source} has no table {}; name a table or view it holds",
            q(table)
        )));
    };
    let source = format!("{source}, table {}", q(table));
    let mut pairs = Vec::with_capacity(rows.len());
    for (name, declared) in rows {
        let ty = sql_types::column_type(&declared).map_err(|e| {
            ColumnsError::unmapped(
                format!(
                    "{source}: column {} of type {}: {e}",
                    q(&name),
                    q(&declared)
                ),
                &name,
                &declared,
            )
        })?;
        pairs.push((name, ty));
    }
    Columns::new(pairs, &source)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_types_map_and_a_missing_table_is_named() {
        // rule: CONTRACT-19
        let rows = vec![
            ("id".to_owned(), "BIGINT".to_owned()),
            ("amount".to_owned(), "DECIMAL(12,2)".to_owned()),
        ];
        let c = columns("store s.duckdb", "orders", Some(rows)).unwrap();
        assert_eq!(
            c.pairs(),
            [
                ("id".to_owned(), "int".to_owned()),
                ("amount".to_owned(), "decimal(12,2)".to_owned())
            ]
        );
        let e = columns("store s.db", "nope", None).unwrap_err();
        assert_eq!(
            e,
            ColumnsError::NotFound(
                "store s.db has no table \"nope\"; name a table or view it holds".into()
            )
        );
        let e = columns("store s.db", "t", Some(vec![("x".into(), "".into())])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "store s.db, table \"t\": column \"x\" of type \"\": no type is declared"
        );
    }
}
