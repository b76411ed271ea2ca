//! What the engine's conformance, crash and concurrency suites need of DuckDB beyond the port.

use std::path::Path;

use dogana_receiver::conformance::{Damage, Harness, LedgerLayout, LedgerRowsHarness, RegionRow};
use dogana_receiver::sql::quote_ident;
use dogana_receiver::{Backend, Open, StoreError, Txn};
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

    /// DuckDB's refusal of a block failing its checksum (`lib.rs`, "A checkpoint killed in
    /// its metadata write"; tests/torn_checkpoint.rs builds such a file).
    fn torn_by_its_database(error: &str) -> bool {
        error.contains(crate::backend::TORN_BLOCK)
    }
}

/// The reference's DuckDB view over the documents ("Ledger JSON"), as a query: what
/// `dogana_regions` was before ledgers were kept region by region.
pub const REFERENCE_REGIONS: &str = "select l.table_name,
       json_extract_string(l.document, '$.publication_id') as publication_id,
       r.key::integer as region_index,
       json_extract(r.value, '$.low') as low,
       json_extract(r.value, '$.high') as high,
       json_extract(r.value, '$.low_open')::boolean as low_open,
       json_extract(r.value, '$.high_open')::boolean as high_open,
       json_extract_string(r.value, '$.complete_as_of.\"$datetime\"')::timestamptz as complete_as_of,
       json_extract_string(r.value, '$.deletions_as_of.\"$datetime\"')::timestamptz as deletions_as_of
from dogana_ledgers l,
     json_each(l.document, '$.regions') r";

impl LedgerRowsHarness for DuckDb {
    fn open_store(dir: &Path, write: bool) -> Result<DuckDb, StoreError> {
        DuckDb::open(&dir.join("store.duckdb"), &DuckDbOptions::default(), write)
    }

    fn layout(&mut self) -> Result<LedgerLayout, String> {
        let kind = |name: &str| -> Result<Option<String>, String> {
            let mut s = self
                .connection()
                .prepare(
                    "SELECT table_type FROM information_schema.tables
                     WHERE table_schema = 'main' AND table_catalog = current_database()
                       AND table_name = ?",
                )
                .map_err(|e| e.to_string())?;
            let mut rows = s
                .query_map([name], |r| r.get::<_, String>(0))
                .map_err(|e| e.to_string())?;
            rows.next().transpose().map_err(|e| e.to_string())
        };
        let found = (
            kind("dogana_ledgers")?,
            kind("dogana_regions")?,
            kind("dogana_ledger_heads")?,
            kind("dogana_ledger_regions")?,
        );
        Ok(match &found {
            (Some(l), Some(r), Some(h), Some(g))
                if l == "VIEW" && r == "VIEW" && h == "BASE TABLE" && g == "BASE TABLE" =>
            {
                LedgerLayout::Rows
            }
            (Some(l), Some(r), None, None) if l == "BASE TABLE" && r == "VIEW" => {
                LedgerLayout::Earlier
            }
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
                "SELECT table_name, publication_id, region_index::varchar, low::varchar,
                        high::varchar, low_open::varchar, high_open::varchar,
                        complete_as_of::varchar, deletions_as_of::varchar
                 FROM dogana_regions r ORDER BY r.table_name, r.region_index",
            )
            .map_err(|e| e.to_string())?;
        let rows = s
            .query_map([], |r| {
                (0..9).map(|i| r.get::<_, Option<String>>(i)).collect()
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| e.to_string());
        rows
    }

    /// The row's `rowid` for its version: a row deleted and inserted again gets a new one, a
    /// row changed in place keeps it (and its text tells). DuckDB has no row version that a
    /// write of the same text in place changes; the WAL's growth shows those
    /// (tests/ledger_rows.rs).
    fn region_rows(&mut self, table: &str) -> Result<Vec<RegionRow>, String> {
        let mut s = self
            .connection()
            .prepare(
                "SELECT low, region, rowid::varchar FROM dogana_ledger_regions
                 WHERE table_name = ? ORDER BY low",
            )
            .map_err(|e| e.to_string())?;
        let rows = s
            .query_map([table], |r| {
                Ok(RegionRow {
                    low: r.get(0)?,
                    region: r.get(1)?,
                    written: r.get(2)?,
                })
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| e.to_string());
        rows
    }

    fn to_earlier_layout(&mut self, documents: &[(String, String)]) -> Result<(), String> {
        let conn = self.connection();
        let e = |e: duckdb::Error| e.to_string();
        conn.execute("BEGIN TRANSACTION", []).map_err(e)?;
        let done = (|| {
            for sql in [
                "DROP VIEW dogana_regions",
                "DROP VIEW dogana_ledgers",
                "DROP TABLE dogana_ledger_regions",
                "DROP TABLE dogana_ledger_heads",
                "CREATE TABLE dogana_ledgers (table_name VARCHAR NOT NULL, document VARCHAR NOT NULL)",
            ] {
                conn.execute(sql, [])?;
            }
            for (table, document) in documents {
                conn.execute(
                    "INSERT INTO dogana_ledgers VALUES (?, ?)",
                    [table, document],
                )?;
            }
            conn.execute(
                &format!("CREATE VIEW dogana_regions AS {REFERENCE_REGIONS}"),
                [],
            )?;
            conn.execute("COMMIT", [])
        })();
        if done.is_err() {
            let _ = conn.execute("ROLLBACK", []);
        }
        done.map(drop).map_err(e)
    }

    fn damage_identity(&mut self, table: &str, identity: &str) -> Result<(), String> {
        self.connection()
            .execute(
                "UPDATE dogana_ledger_heads SET identity = ? WHERE table_name = ?",
                [identity, table],
            )
            .map(drop)
            .map_err(|e| e.to_string())
    }
}
