//! What the engine's conformance, crash and concurrency suites need of SQLite beyond the port.

use std::path::Path;

use dogana_receiver::conformance::{Damage, Harness};
use dogana_receiver::sql::quote_ident;
use dogana_receiver::Open;

use crate::{Sqlite, StoreOptions};

impl Harness for Sqlite {
    fn create(dir: &Path) -> Result<Sqlite, String> {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        Sqlite::open(&dir.join("store.db"), &StoreOptions::default(), true)
            .map_err(|e| e.to_string())
    }

    fn reopen(&self) -> Result<Sqlite, String> {
        Sqlite::open(self.path(), &StoreOptions::default(), true).map_err(|e| e.to_string())
    }

    fn damage(&mut self, table: &str, damage: Damage) -> Result<(), String> {
        let conn = self.connection();
        let e = |e: rusqlite::Error| e.to_string();
        match damage {
            Damage::DeleteRow(id) => {
                let key: String = conn
                    .query_row(
                        "SELECT name FROM pragma_table_info(?1, 'main') WHERE cid = 0",
                        [table],
                        |r| r.get(0),
                    )
                    .map_err(e)?;
                conn.execute(
                    &format!(
                        "DELETE FROM main.{} WHERE CAST({} AS TEXT) = ?1",
                        quote_ident(table),
                        quote_ident(&key)
                    ),
                    [id],
                )
                .map_err(e)?;
            }
            Damage::Ledger(ledger) => {
                crate::store::write_whole_ledger(conn, table, &ledger)
                    .map_err(|e| e.to_string())?;
            }
            Damage::DeleteReceipt(seq) => {
                conn.execute(
                    "DELETE FROM dogana_receipts WHERE table_name = ?1 AND seq = ?2",
                    rusqlite::params![table, seq],
                )
                .map_err(e)?;
            }
            Damage::ForeignTable(name) => {
                conn.execute_batch(&format!(
                    "CREATE TABLE main.{t} (id INTEGER); INSERT INTO main.{t} VALUES (1);",
                    t = quote_ident(&name)
                ))
                .map_err(e)?;
            }
        }
        Ok(())
    }
}
