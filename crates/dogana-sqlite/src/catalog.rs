//! The catalog port on a SQLite file (`machine.sqlite`): the single-node default
//! (`topology.coordinate.backends`). Every statement is its own transaction in WAL mode, with
//! a 30 s busy wait, so threads and processes of one machine share the file; the clock is
//! SQLite's `julianday('now')`, read inside each statement. A file on a network filesystem
//! whose locks do not hold is not detected by the open's probe: keep it on a local disk.
//!
//! ```
//! use dogana_catalog::{Acquired, Catalog};
//! let dir = tempfile::tempdir().unwrap();
//! let mut catalog = dogana_sqlite::catalog::open(&dir.path().join("machine.sqlite")).unwrap();
//! let granted = catalog.acquire("table/orders", "node-a", std::time::Duration::from_secs(60)).unwrap();
//! assert!(matches!(granted, Acquired::Granted(l) if l.fence == 1));
//! ```

use std::path::Path;
use std::time::Duration;

use dogana_catalog::{CatalogError, Dialect, Exec, Param, SqlCatalog, Value};
use rusqlite::{Connection, ErrorCode};

/// SQLite's clock (milliseconds since the epoch), placeholders and journal key.
pub const DIALECT: Dialect = Dialect {
    now_ms: "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)",
    placeholder: '?',
    serial: "INTEGER PRIMARY KEY AUTOINCREMENT",
    ddl_begin: "BEGIN IMMEDIATE;",
};

/// One connection to a catalog file.
pub struct SqliteExec {
    conn: Connection,
    shown: String,
}

/// Opens (creating it if missing) the catalog file at `path`.
pub fn open(path: &Path) -> Result<SqlCatalog<SqliteExec>, CatalogError> {
    let shown = path.display().to_string();
    let unreachable = |e: rusqlite::Error| CatalogError::Unreachable {
        catalog: shown.clone(),
        reason: e.to_string(),
    };
    let conn = Connection::open(path).map_err(unreachable)?;
    conn.busy_timeout(Duration::from_secs(30))
        .map_err(unreachable)?;
    conn.pragma_update(None, "journal_mode", "WAL")
        .map_err(unreachable)?;
    conn.pragma_update(None, "synchronous", "FULL")
        .map_err(unreachable)?;
    SqlCatalog::open(SqliteExec { conn, shown }, DIALECT)
}

impl SqliteExec {
    fn error(&self, e: rusqlite::Error) -> CatalogError {
        let transient = matches!(
            e.sqlite_error_code(),
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
        );
        CatalogError::Backend {
            catalog: self.shown.clone(),
            detail: e.to_string(),
            transient,
        }
    }
}

fn bind(params: &[Param<'_>]) -> Vec<rusqlite::types::Value> {
    params
        .iter()
        .map(|p| match p {
            Param::Text(s) => rusqlite::types::Value::Text((*s).to_owned()),
            Param::Int(i) => rusqlite::types::Value::Integer(*i),
        })
        .collect()
}

impl Exec for SqliteExec {
    fn shown(&self) -> String {
        self.shown.clone()
    }

    fn execute(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64, CatalogError> {
        if params.is_empty() && sql.contains(';') {
            return self
                .conn
                .execute_batch(sql)
                .map(|()| 0)
                .map_err(|e| self.error(e));
        }
        self.conn
            .execute(sql, rusqlite::params_from_iter(bind(params)))
            .map(|n| n as u64)
            .map_err(|e| self.error(e))
    }

    fn query(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Vec<Value>>, CatalogError> {
        let run = |conn: &Connection| -> rusqlite::Result<Vec<Vec<Value>>> {
            let mut stmt = conn.prepare_cached(sql)?;
            let n = stmt.column_count();
            let mut rows = stmt.query(rusqlite::params_from_iter(bind(params)))?;
            let mut out = Vec::new();
            while let Some(row) = rows.next()? {
                out.push(
                    (0..n)
                        .map(|i| {
                            Ok(match row.get_ref(i)? {
                                rusqlite::types::ValueRef::Integer(v) => Value::Int(v),
                                rusqlite::types::ValueRef::Text(t) => {
                                    Value::Text(String::from_utf8_lossy(t).into_owned())
                                }
                                rusqlite::types::ValueRef::Real(r) => Value::Int(r as i64),
                                _ => Value::Null,
                            })
                        })
                        .collect::<rusqlite::Result<Vec<Value>>>()?,
                );
            }
            Ok(out)
        };
        run(&self.conn).map_err(|e| self.error(e))
    }
}
