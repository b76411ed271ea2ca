//! What the engine's conformance, crash and concurrency suites need of SQLite beyond the port.

use std::path::Path;

use rusqlite::OptionalExtension;

use dogana_receiver::conformance::{Damage, Harness, LedgerLayout, LedgerRowsHarness, RegionRow};
use dogana_receiver::sql::quote_ident;
use dogana_receiver::{Open, StoreError};
use rusqlite::types::ValueRef;

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

fn text(v: ValueRef<'_>) -> Option<String> {
    match v {
        ValueRef::Null => None,
        ValueRef::Integer(i) => Some(i.to_string()),
        ValueRef::Real(x) => Some(x.to_string()),
        ValueRef::Text(t) => Some(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Some(b.iter().map(|b| format!("{b:02x}")).collect()),
    }
}

/// The earlier versions' `dogana_regions`, over the table of documents.
const EARLIER_REGIONS: &str = r#"
CREATE VIEW dogana_regions AS
SELECT l.table_name,
       json_extract(l.document, '$.publication_id') AS publication_id,
       CAST(r.key AS INTEGER) AS region_index,
       r.value -> '$.low' AS low,
       r.value -> '$.high' AS high,
       json_extract(r.value, '$.low_open') AS low_open,
       json_extract(r.value, '$.high_open') AS high_open,
       json_extract(r.value, '$.complete_as_of."$datetime"') AS complete_as_of,
       json_extract(r.value, '$.deletions_as_of."$datetime"') AS deletions_as_of
FROM dogana_ledgers l, json_each(l.document, '$.regions') r;
"#;

/// SQLite keeps no version of a row: the first look at the region rows makes TEMP triggers
/// (this connection's alone) that log every region row it writes from then on.
const WRITES_LOG: &str = "
CREATE TEMP TABLE IF NOT EXISTS dogana_harness_writes (table_name TEXT, low BLOB);
CREATE TEMP TRIGGER IF NOT EXISTS dogana_harness_insert
    AFTER INSERT ON main.dogana_ledger_regions
    BEGIN INSERT INTO dogana_harness_writes VALUES (NEW.table_name, NEW.low); END;
CREATE TEMP TRIGGER IF NOT EXISTS dogana_harness_update
    AFTER UPDATE ON main.dogana_ledger_regions
    BEGIN INSERT INTO dogana_harness_writes VALUES (NEW.table_name, NEW.low); END;
CREATE TEMP TRIGGER IF NOT EXISTS dogana_harness_delete
    AFTER DELETE ON main.dogana_ledger_regions
    BEGIN INSERT INTO dogana_harness_writes VALUES (OLD.table_name, OLD.low); END;
";

impl LedgerRowsHarness for Sqlite {
    fn open_store(dir: &Path, write: bool) -> Result<Sqlite, StoreError> {
        Sqlite::open(&dir.join("store.db"), &StoreOptions::default(), write)
    }

    fn layout(&mut self) -> Result<LedgerLayout, String> {
        let kind = |name: &str| -> Result<Option<String>, String> {
            self.connection()
                .query_row(
                    "SELECT type FROM main.sqlite_master WHERE name = ?1",
                    [name],
                    |r| r.get(0),
                )
                .optional()
                .map_err(|e| e.to_string())
        };
        let found = (
            kind("dogana_ledgers")?,
            kind("dogana_regions")?,
            kind("dogana_ledger_heads")?,
            kind("dogana_ledger_regions")?,
        );
        Ok(match &found {
            (Some(l), Some(r), Some(h), Some(g))
                if l == "view" && r == "view" && h == "table" && g == "table" =>
            {
                LedgerLayout::Rows
            }
            (Some(l), Some(r), None, None) if l == "table" && r == "view" => LedgerLayout::Earlier,
            _ => LedgerLayout::Other(format!(
                "dogana_ledgers, dogana_regions, dogana_ledger_heads, dogana_ledger_regions: {found:?}"
            )),
        })
    }

    fn documents(&mut self) -> Result<Vec<(String, String)>, String> {
        let mut s = self
            .connection()
            .prepare("SELECT table_name, document FROM dogana_ledgers ORDER BY table_name")
            .map_err(|e| e.to_string())?;
        let rows = s
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| e.to_string());
        rows
    }

    fn regions_view(&mut self) -> Result<Vec<Vec<Option<String>>>, String> {
        let mut s = self
            .connection()
            .prepare(
                "SELECT table_name, publication_id, region_index, low, high, low_open, high_open,
                        complete_as_of, deletions_as_of
                 FROM dogana_regions r ORDER BY r.table_name, r.region_index",
            )
            .map_err(|e| e.to_string())?;
        let rows = s
            .query_map([], |r| (0..9).map(|i| r.get_ref(i).map(text)).collect())
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| e.to_string());
        rows
    }

    fn region_rows(&mut self, table: &str) -> Result<Vec<RegionRow>, String> {
        let conn = self.connection();
        conn.execute_batch(WRITES_LOG).map_err(|e| e.to_string())?;
        let mut s = conn
            .prepare(
                "SELECT r.low, r.region,
                        (SELECT count(*) FROM dogana_harness_writes w
                         WHERE w.table_name = r.table_name AND w.low = r.low)
                 FROM main.dogana_ledger_regions r WHERE r.table_name = ?1 ORDER BY r.low",
            )
            .map_err(|e| e.to_string())?;
        let rows = s
            .query_map([table], |r| {
                Ok(RegionRow {
                    low: r.get(0)?,
                    region: r.get(1)?,
                    written: r.get::<_, i64>(2)?.to_string(),
                })
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| e.to_string());
        rows
    }

    fn to_earlier_layout(&mut self, documents: &[(String, String)]) -> Result<(), String> {
        let e = |e: rusqlite::Error| e.to_string();
        let txn = self.connection().unchecked_transaction().map_err(e)?;
        txn.execute_batch(
            "DROP VIEW dogana_regions;
             DROP VIEW dogana_ledgers;
             DROP TABLE dogana_ledger_regions;
             DROP TABLE dogana_ledger_heads;
             CREATE TABLE dogana_ledgers (
                 table_name TEXT PRIMARY KEY NOT NULL,
                 document   TEXT NOT NULL
             );",
        )
        .map_err(e)?;
        for (table, document) in documents {
            txn.execute(
                "INSERT INTO dogana_ledgers (table_name, document) VALUES (?1, ?2)",
                [table, document],
            )
            .map_err(e)?;
        }
        txn.execute_batch(EARLIER_REGIONS).map_err(e)?;
        txn.commit().map_err(e)
    }

    fn damage_identity(&mut self, table: &str, identity: &str) -> Result<(), String> {
        self.connection()
            .execute(
                "UPDATE dogana_ledger_heads SET identity = ?1 WHERE table_name = ?2",
                [identity, table],
            )
            .map(drop)
            .map_err(|e| e.to_string())
    }
}
