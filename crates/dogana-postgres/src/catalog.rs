//! The catalog port on Postgres: the cluster's catalog (`topology.coordinate.backends`).
//! Its tables (`dogana_catalog_leases`, `…_cursors`, `…_journal`) live in the schema the URL
//! names (`?schema=NAME`, default `public`; it must exist), beside a Postgres store's tables
//! if there is one. Every statement runs in its own transaction; the clock is the server's
//! `clock_timestamp()`, read inside each statement, so machines with skewed clocks agree.
//!
//! ```no_run
//! use dogana_catalog::Catalog;
//! let mut catalog =
//!     dogana_postgres::catalog::connect("postgres://dogana@db:5432/ops?schema=catalog").unwrap();
//! let now = catalog.now_ms().unwrap();
//! # let _ = now;
//! ```

use dogana_catalog::{CatalogError, Dialect, Exec, Param, SqlCatalog, Value};
use dogana_receiver::sql::quote_ident;
use postgres::types::ToSql;
use postgres::Client;

use crate::backend::{one_line, session_of};
use crate::conninfo::Target;

/// Postgres's clock (milliseconds since the epoch), placeholders and journal key.
pub const DIALECT: Dialect = Dialect {
    now_ms: "(extract(epoch FROM clock_timestamp()) * 1000)::bigint",
    placeholder: '$',
    serial: "BIGSERIAL PRIMARY KEY",
    ddl_begin: "BEGIN; SELECT pg_advisory_xact_lock(hashtext(current_schema()), hashtext('dogana_catalog_ddl'));",
};

/// One session with a catalog schema.
pub struct PgExec {
    client: Client,
    shown: String,
}

/// Connects to the catalog a URL names (`postgres://USER@HOST:PORT/DB?schema=NAME`, what it
/// leaves out taken from the `PG*` variables and `~/.pgpass` as for a Postgres store), making
/// its tables if they are missing.
pub fn connect(url: &str) -> Result<SqlCatalog<PgExec>, CatalogError> {
    let target = Target::from_url(url).map_err(|reason| CatalogError::UrlInvalid {
        url: url.chars().take(200).collect(),
        reason,
    })?;
    let shown = target.shown();
    let mut client = session_of(&target).map_err(|e| CatalogError::Unreachable {
        catalog: shown.clone(),
        reason: e.to_string(),
    })?;
    let schema = target.schema.clone().unwrap_or_else(|| "public".into());
    client
        .batch_execute(&format!("SET search_path TO {}", quote_ident(&schema)))
        .map_err(|e| CatalogError::Unreachable {
            catalog: shown.clone(),
            reason: one_line(&e),
        })?;
    SqlCatalog::open(PgExec { client, shown }, DIALECT)
}

impl PgExec {
    fn error(&self, e: postgres::Error) -> CatalogError {
        let transient = e.is_closed() || e.as_db_error().is_none();
        CatalogError::Backend {
            catalog: self.shown.clone(),
            detail: one_line(&e),
            transient,
        }
    }
}

enum Owned {
    Text(String),
    Int(i64),
}

fn bind(params: &[Param<'_>]) -> Vec<Owned> {
    params
        .iter()
        .map(|p| match p {
            Param::Text(s) => Owned::Text((*s).to_owned()),
            Param::Int(i) => Owned::Int(*i),
        })
        .collect()
}

fn refs(owned: &[Owned]) -> Vec<&(dyn ToSql + Sync)> {
    owned
        .iter()
        .map(|o| match o {
            Owned::Text(s) => s as &(dyn ToSql + Sync),
            Owned::Int(i) => i as &(dyn ToSql + Sync),
        })
        .collect()
}

impl Exec for PgExec {
    fn shown(&self) -> String {
        self.shown.clone()
    }

    fn execute(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64, CatalogError> {
        if params.is_empty() && sql.contains(';') {
            return self
                .client
                .batch_execute(sql)
                .map(|()| 0)
                .map_err(|e| self.error(e));
        }
        let owned = bind(params);
        self.client
            .execute(sql, &refs(&owned))
            .map_err(|e| self.error(e))
    }

    fn query(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Vec<Value>>, CatalogError> {
        let owned = bind(params);
        let rows = self
            .client
            .query(sql, &refs(&owned))
            .map_err(|e| self.error(e))?;
        Ok(rows
            .iter()
            .map(|row| {
                (0..row.len())
                    .map(|i| {
                        if let Ok(Some(v)) = row.try_get::<_, Option<i64>>(i) {
                            Value::Int(v)
                        } else if let Ok(Some(s)) = row.try_get::<_, Option<String>>(i) {
                            Value::Text(s)
                        } else {
                            Value::Null
                        }
                    })
                    .collect()
            })
            .collect())
    }
}
