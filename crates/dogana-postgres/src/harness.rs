//! What the engine's conformance, crash and concurrency suites need of Postgres beyond the
//! port. The server is the one `DOGANA_PG_URL` names (`scripts/postgres.sh start`); each
//! test's folder has its own schema, named from the folder's path and recorded in the folder.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use dogana_receiver::conformance::{
    copy_dir, Damage, Harness, LedgerLayout, LedgerRowsHarness, RegionRow,
};
use dogana_receiver::sql::quote_ident;
use dogana_receiver::StoreError;

use crate::backend::one_line;
use crate::{Postgres, PostgresOptions};

/// The variable naming the test server.
pub const URL_VAR: &str = "DOGANA_PG_URL";

/// The file in a test folder naming its schema.
const MARKER: &str = "postgres-schema";

/// The test server's URL, or a message saying how to start one.
pub fn test_url() -> Result<String, String> {
    std::env::var(URL_VAR).map_err(|_| {
        format!(
            "{URL_VAR} is not set: the Postgres tests need a server; run them with `bash scripts/test-postgres.sh`, or start one with `eval \"$(bash scripts/postgres.sh start)\"`"
        )
    })
}

fn canonical(dir: &Path) -> PathBuf {
    dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf())
}

/// The schema of a test folder.
pub fn schema_of(dir: &Path) -> String {
    format!(
        "dogana_test_{}",
        crate::backend::tag(&canonical(dir).to_string_lossy())
    )
}

fn admin(url: &str) -> Result<postgres::Client, String> {
    crate::backend::raw_session(url).map_err(|e| format!("the test server ({URL_VAR}): {e}"))
}

/// Waits until no other session holds a writer's lock of this schema: a killed client's
/// server process may still be committing what it sent.
fn settle(client: &mut postgres::Client, schema: &str) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let n: i64 = client
            .query_one(
                "SELECT count(*) FROM pg_locks
                 WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()
                   AND classid::bigint = (hashtext($1)::bigint & 4294967295)",
                &[&schema],
            )
            .map_err(|e| {
                format!(
                    "waiting for the writers of schema {schema}: {}",
                    one_line(&e)
                )
            })?
            .get(0);
        if n == 0 {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!(
                "schema {schema}: a writer still holds its lock after 60 s"
            ));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn with_schema(url: &str, schema: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}schema={schema}")
}

impl Harness for Postgres {
    /// A store in the folder's own schema: created empty (dropping one left by an earlier run)
    /// unless the folder already names it.
    fn create(dir: &Path) -> Result<Postgres, String> {
        let url = test_url()?;
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        let schema = schema_of(dir);
        let marker = dir.join(MARKER);
        let mut client = admin(&url)?;
        // processes racing to create one store: the first makes the schema and the marker
        // under this session lock, the others find the marker (the lock goes with the session)
        client
            .execute(
                "SELECT pg_advisory_lock(hashtext($1), hashtext('dogana_harness_create'))",
                &[&schema],
            )
            .map_err(|e| format!("locking schema {schema}: {}", one_line(&e)))?;
        if marker.exists() {
            settle(&mut client, &schema)?;
        } else {
            let s = quote_ident(&schema);
            client
                .batch_execute(&format!(
                    "DROP SCHEMA IF EXISTS {s} CASCADE; CREATE SCHEMA {s}"
                ))
                .map_err(|e| format!("creating schema {schema}: {}", one_line(&e)))?;
            std::fs::write(&marker, &schema).map_err(|e| e.to_string())?;
        }
        drop(client);
        Postgres::connect(
            &with_schema(&url, &schema),
            &PostgresOptions::default(),
            true,
        )
        .map_err(|e| e.to_string())
    }

    fn reopen(&self) -> Result<Postgres, String> {
        self.try_clone().map_err(|e| e.to_string())
    }

    fn damage(&mut self, table: &str, damage: Damage) -> Result<(), String> {
        let s = quote_ident(self.schema());
        let schema = self.schema().to_owned();
        let conn = self.client();
        let e = |e: postgres::Error| e.to_string();
        match damage {
            Damage::DeleteRow(id) => {
                let key: String = conn
                    .query_one(
                        "SELECT column_name::text FROM information_schema.columns
                         WHERE table_schema = $1 AND table_name = $2 AND ordinal_position = 1",
                        &[&schema, &table],
                    )
                    .map_err(e)?
                    .get(0);
                conn.execute(
                    &format!(
                        "DELETE FROM {s}.{} WHERE CAST({} AS TEXT) = $1",
                        quote_ident(table),
                        quote_ident(&key)
                    ),
                    &[&id],
                )
                .map_err(e)?;
            }
            Damage::Ledger(ledger) => {
                // the region rows and the head, identity included, in one transaction
                let mut txn = conn.transaction().map_err(e)?;
                crate::backend::write_whole_ledger(
                    &mut txn,
                    &mut crate::backend::Prepared::default(),
                    &s,
                    table,
                    &ledger,
                )
                .map_err(|e| e.to_string())?;
                txn.commit().map_err(e)?;
            }
            Damage::DeleteReceipt(seq) => {
                conn.execute(
                    &format!("DELETE FROM {s}.dogana_receipts WHERE table_name = $1 AND seq = $2"),
                    &[&table, &seq],
                )
                .map_err(e)?;
            }
            Damage::ForeignTable(name) => {
                let t = quote_ident(&name);
                conn.batch_execute(&format!(
                    "CREATE TABLE {s}.{t} (id BIGINT); INSERT INTO {s}.{t} VALUES (1);"
                ))
                .map_err(e)?;
            }
        }
        Ok(())
    }

    /// Copies the schema on the server (every table's rows; dogana's tables and view made as
    /// a writer makes them) and the folder's files, the marker naming the copy's schema.
    fn copy_store(from: &Path, to: &Path) -> Result<(), String> {
        let url = test_url()?;
        let (a, b) = (schema_of(from), schema_of(to));
        copy_dir(from, to)?;
        std::fs::write(to.join(MARKER), &b).map_err(|e| e.to_string())?;
        let mut client = admin(&url)?;
        settle(&mut client, &b)?;
        let (qa, qb) = (quote_ident(&a), quote_ident(&b));
        client
            .batch_execute(&format!(
                "DROP SCHEMA IF EXISTS {qb} CASCADE; CREATE SCHEMA {qb}"
            ))
            .map_err(|e| e.to_string())?;
        drop(
            Postgres::connect(&with_schema(&url, &b), &PostgresOptions::default(), true)
                .map_err(|e| e.to_string())?,
        );
        let tables: Vec<String> = client
            .query(
                "SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                 WHERE n.nspname = $1 AND c.relkind = 'r' ORDER BY 1",
                &[&a],
            )
            .map_err(|e| e.to_string())?
            .iter()
            .map(|r| r.get(0))
            .collect();
        let mut sql = String::from("BEGIN;");
        for t in &tables {
            let q = quote_ident(t);
            if !t.starts_with("dogana_") {
                sql.push_str(&format!(
                    "CREATE TABLE {qb}.{q} (LIKE {qa}.{q} INCLUDING DEFAULTS INCLUDING CONSTRAINTS);"
                ));
            }
            sql.push_str(&format!("INSERT INTO {qb}.{q} SELECT * FROM {qa}.{q};"));
        }
        sql.push_str("COMMIT;");
        client.batch_execute(&sql).map_err(|e| e.to_string())
    }
}

impl LedgerRowsHarness for Postgres {
    /// The folder's schema, as [`Harness::create`] named it, without waiting for other
    /// sessions or creating anything: as another process would connect.
    fn open_store(dir: &Path, write: bool) -> Result<Postgres, StoreError> {
        let url = test_url().map_err(StoreError::Unavailable)?;
        Postgres::connect(
            &with_schema(&url, &schema_of(dir)),
            &PostgresOptions::default(),
            write,
        )
    }

    fn layout(&mut self) -> Result<LedgerLayout, String> {
        let schema = self.schema().to_owned();
        let mut kind = |name: &str| -> Result<Option<String>, String> {
            self.client()
                .query_opt(
                    "SELECT c.relkind::text FROM pg_class c
                     JOIN pg_namespace n ON n.oid = c.relnamespace
                     WHERE n.nspname = $1 AND c.relname = $2",
                    &[&schema, &name],
                )
                .map(|r| r.map(|r| r.get(0)))
                .map_err(|e| one_line(&e))
        };
        let found = (
            kind("dogana_ledgers")?,
            kind("dogana_regions")?,
            kind("dogana_ledger_heads")?,
            kind("dogana_ledger_regions")?,
        );
        Ok(match &found {
            (Some(l), Some(r), Some(h), Some(g)) if l == "v" && r == "v" && h == "r" && g == "r" => {
                LedgerLayout::Rows
            }
            (Some(l), Some(r), None, None) if l == "r" && r == "v" => LedgerLayout::Earlier,
            _ => LedgerLayout::Other(format!(
                "relkind of dogana_ledgers, dogana_regions, dogana_ledger_heads, dogana_ledger_regions: {found:?}"
            )),
        })
    }

    fn documents(&mut self) -> Result<Vec<(String, String)>, String> {
        let s = quote_ident(self.schema());
        Ok(self
            .client()
            .query(
                &format!("SELECT table_name, document FROM {s}.dogana_ledgers ORDER BY table_name"),
                &[],
            )
            .map_err(|e| one_line(&e))?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect())
    }

    fn regions_view(&mut self) -> Result<Vec<Vec<Option<String>>>, String> {
        let s = quote_ident(self.schema());
        Ok(self
            .client()
            .query(
                &format!(
                    "SELECT table_name, publication_id, region_index::text, low::text, high::text,
                            low_open::text, high_open::text, complete_as_of::text,
                            deletions_as_of::text
                     FROM {s}.dogana_regions r ORDER BY r.table_name, r.region_index"
                ),
                &[],
            )
            .map_err(|e| one_line(&e))?
            .iter()
            .map(|r| (0..9).map(|i| r.get(i)).collect())
            .collect())
    }

    /// The row's `xmin` for its version: the transaction that inserted it, or wrote it again
    /// (an update is a new version of the row).
    fn region_rows(&mut self, table: &str) -> Result<Vec<RegionRow>, String> {
        let s = quote_ident(self.schema());
        Ok(self
            .client()
            .query(
                &format!(
                    "SELECT low, region, xmin::text FROM {s}.dogana_ledger_regions
                     WHERE table_name = $1 ORDER BY low"
                ),
                &[&table],
            )
            .map_err(|e| one_line(&e))?
            .iter()
            .map(|r| RegionRow {
                low: r.get(0),
                region: r.get(1),
                written: r.get(2),
            })
            .collect())
    }

    fn to_earlier_layout(&mut self, documents: &[(String, String)]) -> Result<(), String> {
        let s = quote_ident(self.schema());
        let mut txn = self.client().transaction().map_err(|e| one_line(&e))?;
        txn.batch_execute(&format!(
            "DROP VIEW {s}.dogana_regions;
             DROP VIEW {s}.dogana_ledgers;
             DROP TABLE {s}.dogana_ledger_regions;
             DROP TABLE {s}.dogana_ledger_heads;
             CREATE TABLE {s}.dogana_ledgers (
                 table_name TEXT PRIMARY KEY,
                 document   TEXT NOT NULL
             );"
        ))
        .map_err(|e| one_line(&e))?;
        for (table, document) in documents {
            txn.execute(
                &format!("INSERT INTO {s}.dogana_ledgers (table_name, document) VALUES ($1, $2)"),
                &[table, document],
            )
            .map_err(|e| one_line(&e))?;
        }
        txn.batch_execute(&format!(
            "CREATE VIEW {s}.dogana_regions AS
             SELECT l.table_name,
                    l.document::jsonb ->> 'publication_id' AS publication_id,
                    (r.ordinality - 1)::integer AS region_index,
                    r.value -> 'low' AS low,
                    r.value -> 'high' AS high,
                    (r.value ->> 'low_open')::boolean AS low_open,
                    (r.value ->> 'high_open')::boolean AS high_open,
                    (r.value -> 'complete_as_of' ->> '$datetime')::timestamptz AS complete_as_of,
                    (r.value -> 'deletions_as_of' ->> '$datetime')::timestamptz AS deletions_as_of
             FROM {s}.dogana_ledgers l,
                  jsonb_array_elements(l.document::jsonb -> 'regions')
                      WITH ORDINALITY AS r(value, ordinality);"
        ))
        .map_err(|e| one_line(&e))?;
        txn.commit().map_err(|e| one_line(&e))
    }

    fn damage_identity(&mut self, table: &str, identity: &str) -> Result<(), String> {
        let s = quote_ident(self.schema());
        self.client()
            .execute(
                &format!("UPDATE {s}.dogana_ledger_heads SET identity = $1 WHERE table_name = $2"),
                &[&identity, &table],
            )
            .map(drop)
            .map_err(|e| one_line(&e))
    }
}
