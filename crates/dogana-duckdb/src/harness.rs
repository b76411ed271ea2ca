//! What the engine's conformance, crash and concurrency suites need of DuckDB beyond the port.

use std::path::Path;

use dogana_receiver::conformance::{Damage, Harness};
use dogana_receiver::sql::quote_ident;
use dogana_receiver::{Backend, Open, Txn};
use duckdb::types::Value as DValue;

use crate::{DuckDb, DuckDbOptions};

impl Harness for DuckDb {
    fn create(dir: &Path) -> Result<DuckDb, String> {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        DuckDb::open(&dir.join("store.duckdb"), &DuckDbOptions::default(), true)
            .map_err(|e| e.to_string())
    }

    fn reopen(&self) -> Result<DuckDb, String> {
        self.try_clone().map_err(|e| e.to_string())
    }

    fn damage(&mut self, table: &str, damage: Damage) -> Result<(), String> {
        let conn = self.connection();
        let e = |e: duckdb::Error| e.to_string();
        match damage {
            Damage::DeleteRow(id) => {
                let key: String = conn
                    .query_row(
                        "SELECT column_name FROM information_schema.columns
                         WHERE table_schema = 'main' AND table_name = ? AND ordinal_position = 1",
                        [table],
                        |r| r.get(0),
                    )
                    .map_err(e)?;
                conn.execute(
                    &format!(
                        "DELETE FROM main.{} WHERE CAST({} AS VARCHAR) = ?",
                        quote_ident(table),
                        quote_ident(&key)
                    ),
                    [id],
                )
                .map_err(e)?;
            }
            Damage::Ledger(ledger) => {
                // the region rows and the head, identity included, in one transaction
                self.begin(Txn::Write, &[]).map_err(|e| e.to_string())?;
                if let Err(e) = self.write_whole_ledger(table, &ledger) {
                    self.rollback();
                    return Err(e.to_string());
                }
                self.commit().map_err(|e| e.to_string())?;
            }
            Damage::DeleteReceipt(seq) => {
                conn.execute(
                    "DELETE FROM dogana_receipts WHERE table_name = ? AND seq = ?",
                    duckdb::params_from_iter([DValue::Text(table.into()), DValue::BigInt(seq)]),
                )
                .map_err(e)?;
            }
            Damage::ForeignTable(name) => {
                let t = quote_ident(&name);
                conn.execute(&format!("CREATE TABLE main.{t} (id BIGINT)"), [])
                    .map_err(e)?;
                conn.execute(&format!("INSERT INTO main.{t} VALUES (1)"), [])
                    .map_err(e)?;
            }
        }
        Ok(())
    }
}
