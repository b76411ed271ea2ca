//! What the engine's conformance, crash and concurrency suites need of Postgres beyond the
//! port. The server is the one `DOGANA_PG_URL` names (`scripts/postgres.sh start`); each
//! test's folder has its own schema, named from the folder's path and recorded in the folder.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use dogana_receiver::conformance::{copy_dir, Damage, Harness};
use dogana_receiver::sql::quote_ident;

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
