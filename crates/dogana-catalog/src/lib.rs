//! # The catalog port
//!
//! Where a machine (or a cluster of them) keeps the state that needs **one writer**: leases
//! with their fences, cursors moved by compare-and-swap, and an append-only journal of what
//! happened. The lake keeps its data in objects; this is the small, hot, transactional part
//! beside it (the store design record's `machine.sqlite`, `store-s-catalogs`).
//!
//! The port is [`Catalog`]; engine code holds a `Box<dyn Catalog>` and never names a backend
//! (`topology.coordinate.catalog-port`): `dogana_stores::open_catalog` picks one by URL. The
//! SQL is written once, here ([`SqlCatalog`]); a backend implements only [`Exec`], running
//! one statement with its parameters, and names its clock and types in a [`Dialect`]:
//!
//! - `dogana_sqlite::catalog`: a local file (`machine.sqlite`), the single-node default;
//! - `dogana_postgres::catalog`: a Postgres schema, for clusters.
//!
//! ```text
//!            engine code ──► dyn Catalog
//!                               │
//!                        SqlCatalog<E: Exec>        (every statement, once)
//!                        ┌──────┴───────┐
//!              SqliteExec (rusqlite)   PgExec (postgres)
//! ```
//!
//! ## Decisions
//!
//! - **The catalog's clock, never the caller's** (`topology.coordinate.catalog-clock`). No
//!   method takes an instant: every expiry is computed and compared inside the statement
//!   that reads or writes it, against the database's own clock ([`Dialect::now_ms`]:
//!   SQLite's `julianday('now')`, Postgres's `clock_timestamp()`). Machines whose clocks
//!   disagree still agree on who holds a lease, because only the catalog reads a clock.
//! - **Every single-writer step is one conditional statement read back by its count**
//!   (`topology.coordinate.cursor-cas`, `topology.coordinate.inventory`): a cursor moves by
//!   `UPDATE … WHERE version = $expected`, and moved only if one row was affected; a lease
//!   is taken by one upsert whose `WHERE` admits only an expired row or its own holder; a
//!   renewal by one `UPDATE` predicated on holder, fence and an unexpired row. There is no
//!   read-then-write anywhere, so no transaction isolation level is assumed.
//! - **A fence only grows.** Taking a lease that is free or expired makes its fence the old
//!   one plus one; a holder renewing keeps it; a release expires the row but keeps its fence,
//!   so the next holder's is higher. A writer stamps its fence on what it publishes; a
//!   paused holder whose lease expired finds its renewal refused
//!   ([`CatalogError::LeaseLost`]) and its fence below the new holder's.
//! - **A catalog proves its conditional update at open**
//!   (`coordination-probed-compare`): [`SqlCatalog::open`] moves a probe cursor twice with
//!   the same expected version; the first must affect one row and the second none. A
//!   backend that reports otherwise (a proxy that hides counts, a replica that accepts
//!   writes) is refused with [`CatalogError::WeakConditionalBackend`] before any use.
//! - **Cadence leases last 90 s and are renewed every 30 s**
//!   (`topology.coordinate.cadence-lease-ttl`, `…-renewal`): [`CADENCE_LEASE_TTL`] and
//!   [`CADENCE_RENEWAL`]; a renewal missed twice still leaves 30 s before another machine
//!   may fire.

use std::fmt;
use std::time::Duration;

pub mod conformance;

/// How long the catalog grants a cadence lease (`topology.coordinate.cadence-lease-ttl`).
pub const CADENCE_LEASE_TTL: Duration = Duration::from_secs(90);

/// How often a holder renews its cadence lease (`topology.coordinate.cadence-lease-renewal`).
pub const CADENCE_RENEWAL: Duration = Duration::from_secs(30);

/// A lease the catalog granted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// What it is a lease on (`cadence/orders`, `table/orders`).
    pub name: String,
    /// Who holds it (a node id).
    pub holder: String,
    /// Its fence: greater than every earlier holder's.
    pub fence: u64,
    /// When it expires, in milliseconds since the epoch on the catalog's clock.
    pub expires_at_ms: i64,
}

/// What [`Catalog::acquire`] answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Acquired {
    /// The lease is the caller's.
    Granted(Lease),
    /// Another holder has it, unexpired.
    Held {
        /// Who.
        holder: String,
        /// Its fence.
        fence: u64,
        /// When it expires (catalog clock, milliseconds since the epoch).
        expires_at_ms: i64,
    },
}

/// A cursor: a value and the version it was written at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    /// Its value (the caller's encoding: a watermark, a JSON document).
    pub value: String,
    /// Its version: 1 when created, one more at each swap.
    pub version: u64,
}

/// One entry of the journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalEntry {
    /// Its place: increasing, never reused.
    pub seq: u64,
    /// When the catalog wrote it (its clock, milliseconds since the epoch).
    pub at_ms: i64,
    /// What kind of event (`fold`, `push`, `lease`…).
    pub kind: String,
    /// Its body (the caller's encoding).
    pub body: String,
}

/// The catalog port: leases, cursors and the journal (`topology.coordinate.catalog-port`).
///
/// Methods take `&mut self`: a catalog is one connection. Open one per thread.
///
/// ```
/// # fn demo(catalog: &mut dyn dogana_catalog::Catalog) -> Result<(), dogana_catalog::CatalogError> {
/// use std::time::Duration;
/// use dogana_catalog::Acquired;
/// match catalog.acquire("table/orders", "node-a", Duration::from_secs(60))? {
///     Acquired::Granted(lease) => {
///         // ... publish, stamping lease.fence ...
///         catalog.release(&lease)?;
///     }
///     Acquired::Held { holder, .. } => println!("{holder} is folding orders"),
/// }
/// # Ok(()) }
/// ```
pub trait Catalog: Send {
    /// The catalog as messages name it (its URL without a password).
    fn shown(&self) -> String;
    /// The catalog's clock, in milliseconds since the epoch.
    fn now_ms(&mut self) -> Result<i64, CatalogError>;
    /// Takes the lease `name` for `holder` for `ttl`, if it is free, expired or already
    /// `holder`'s (then renewed, keeping its fence).
    fn acquire(
        &mut self,
        name: &str,
        holder: &str,
        ttl: Duration,
    ) -> Result<Acquired, CatalogError>;
    /// Extends a held lease by `ttl` from now; [`CatalogError::LeaseLost`] when it expired or
    /// another holder took it.
    fn renew(&mut self, lease: &Lease, ttl: Duration) -> Result<Lease, CatalogError>;
    /// Gives a lease up (nothing when it was lost already). Its fence stays.
    fn release(&mut self, lease: &Lease) -> Result<(), CatalogError>;
    /// The cursor `name`, if it exists.
    fn cursor(&mut self, name: &str) -> Result<Option<Cursor>, CatalogError>;
    /// Sets the cursor `name` to `value` if its version is `expected` (None: if it does not
    /// exist). The new cursor, or None when the condition failed and nothing changed.
    fn swap_cursor(
        &mut self,
        name: &str,
        expected: Option<u64>,
        value: &str,
    ) -> Result<Option<Cursor>, CatalogError>;
    /// Appends an entry to the journal; its seq.
    fn append(&mut self, kind: &str, body: &str) -> Result<u64, CatalogError>;
    /// Up to `limit` entries after `after`, oldest first.
    fn journal(&mut self, after: u64, limit: usize) -> Result<Vec<JournalEntry>, CatalogError>;
}

/// Takes the cadence lease of `unit` for `holder`, for [`CADENCE_LEASE_TTL`].
pub fn acquire_cadence(
    catalog: &mut dyn Catalog,
    unit: &str,
    holder: &str,
) -> Result<Acquired, CatalogError> {
    catalog.acquire(&format!("cadence/{unit}"), holder, CADENCE_LEASE_TTL)
}

/// An error of the catalog. Each names the catalog (without a password) and what to fix.
#[derive(Debug)]
pub enum CatalogError {
    /// A catalog URL this build does not open.
    UrlInvalid {
        /// The URL (cut to 200 characters).
        url: String,
        /// Why.
        reason: String,
    },
    /// The catalog did not answer or refused the connection.
    Unreachable {
        /// The catalog.
        catalog: String,
        /// The driver's message.
        reason: String,
    },
    /// The backend did not show a linearizable conditional update at open
    /// (`weak-conditional-backend`).
    WeakConditionalBackend {
        /// The catalog.
        catalog: String,
        /// What the probe saw.
        detail: String,
    },
    /// A renewal of a lease that expired or another holder took.
    LeaseLost {
        /// The lease.
        name: String,
        /// The caller.
        holder: String,
        /// The caller's fence.
        fence: u64,
    },
    /// The database refused a statement.
    Backend {
        /// The catalog.
        catalog: String,
        /// The database's message.
        detail: String,
        /// Whether retrying can help (a lost connection, a busy file).
        transient: bool,
    },
}

impl CatalogError {
    /// Its stable code (docs/errors.md).
    pub fn code(&self) -> dogana_codes::Code {
        use dogana_codes as codes;
        match self {
            CatalogError::UrlInvalid { .. } => codes::STORE_SPEC_INVALID,
            CatalogError::Unreachable { .. } => codes::CONNECTION_LOST,
            CatalogError::WeakConditionalBackend { .. } => codes::COORDINATION_UNPROVEN,
            CatalogError::LeaseLost { .. } => codes::STORE_LOCKED,
            CatalogError::Backend {
                transient: true, ..
            } => codes::STORE_LOCKED,
            CatalogError::Backend { .. } => codes::STORE_FAILED,
        }
    }
}

impl fmt::Display for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CatalogError::UrlInvalid { url, reason } => write!(
                f,
                "CatalogUrlInvalid: {url}: {reason} (a catalog is a SQLite file, sqlite:///path/machine.sqlite, or postgres://USER@HOST:PORT/DB?schema=NAME)"
            ),
            CatalogError::Unreachable { catalog, reason } => write!(
                f,
                "CatalogUnreachable: {catalog}: {reason}; check the server is up and the URL names it"
            ),
            CatalogError::WeakConditionalBackend { catalog, detail } => write!(
                f,
                "WeakConditionalBackend: {catalog}: {detail}; its conditional update is not linearizable, so it cannot keep writers apart (coordination-probed-compare); use a SQLite file on a local disk or a Postgres primary"
            ),
            CatalogError::LeaseLost {
                name,
                holder,
                fence,
            } => write!(
                f,
                "LeaseLost: {name}: {holder}'s lease (fence {fence}) expired or was taken; stop, and take it again before publishing"
            ),
            CatalogError::Backend {
                catalog, detail, ..
            } => write!(f, "catalog {catalog}: {detail}"),
        }
    }
}

impl std::error::Error for CatalogError {}

/// A statement's parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Param<'a> {
    /// A text.
    Text(&'a str),
    /// An integer.
    Int(i64),
}

/// A value read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// An integer.
    Int(i64),
    /// A text.
    Text(String),
}

impl Value {
    fn int(&self) -> i64 {
        match self {
            Value::Int(i) => *i,
            _ => 0,
        }
    }

    fn text(&self) -> String {
        match self {
            Value::Text(s) => s.clone(),
            Value::Int(i) => i.to_string(),
            Value::Null => String::new(),
        }
    }
}

/// What a backend names: its clock and its placeholders.
#[derive(Debug, Clone, Copy)]
pub struct Dialect {
    /// An SQL expression of the database's clock, in milliseconds since the epoch (a
    /// BIGINT / INTEGER).
    pub now_ms: &'static str,
    /// `?` (SQLite: `?1`, `?2`) or `$` (Postgres: `$1`, `$2`).
    pub placeholder: char,
    /// The journal's key column declaration.
    pub serial: &'static str,
    /// What opens the transaction that makes the tables, so that two first opens do not
    /// race (Postgres's `CREATE TABLE IF NOT EXISTS` is not safe under concurrency).
    pub ddl_begin: &'static str,
}

/// What a backend implements: one statement at a time, each its own transaction.
pub trait Exec: Send {
    /// The catalog as messages name it.
    fn shown(&self) -> String;
    /// Runs a statement (or several, with no parameters); the rows it affected.
    fn execute(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64, CatalogError>;
    /// Runs a query; its rows.
    fn query(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Vec<Value>>, CatalogError>;
}

/// The catalog over any [`Exec`]: every statement of the port, written once.
pub struct SqlCatalog<E> {
    exec: E,
    dialect: Dialect,
}

const PROBE: &str = "dogana.catalog.probe";

impl<E: Exec> SqlCatalog<E> {
    /// Makes the catalog's tables if they are missing and proves the backend's conditional
    /// update ([`CatalogError::WeakConditionalBackend`] otherwise).
    pub fn open(exec: E, dialect: Dialect) -> Result<Self, CatalogError> {
        let mut c = SqlCatalog { exec, dialect };
        let ddl = format!(
            "{} CREATE TABLE IF NOT EXISTS dogana_catalog_leases (name TEXT PRIMARY KEY, holder TEXT NOT NULL, fence BIGINT NOT NULL, expires_at_ms BIGINT NOT NULL);
             CREATE TABLE IF NOT EXISTS dogana_catalog_cursors (name TEXT PRIMARY KEY, value TEXT NOT NULL, version BIGINT NOT NULL);
             CREATE TABLE IF NOT EXISTS dogana_catalog_journal (seq {}, at_ms BIGINT NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL); COMMIT",
            dialect.ddl_begin, dialect.serial
        );
        c.exec.execute(&ddl, &[])?;
        c.probe()?;
        Ok(c)
    }

    /// The backend.
    pub fn exec(&mut self) -> &mut E {
        &mut self.exec
    }

    fn sql(&self, template: &str) -> String {
        // templates write `$1`; SQLite takes `?1`
        let s = template.replace("NOW", self.dialect.now_ms);
        match self.dialect.placeholder {
            '$' => s,
            p => s.replace('$', &p.to_string()),
        }
    }

    /// Moves a probe cursor of this open's own twice from one version: one row, then none;
    /// then removes it.
    fn probe(&mut self) -> Result<(), CatalogError> {
        static OPENS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let name = format!(
            "{PROBE}.{}.{nanos}.{}",
            std::process::id(),
            OPENS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        let Some(c) = self.swap_cursor(&name, None, "")? else {
            return Err(self.weak("a new probe cursor was not created"));
        };
        let sql = self.sql(
            "UPDATE dogana_catalog_cursors SET version = version + 1 WHERE name = $1 AND version = $2",
        );
        let params = [Param::Text(&name), Param::Int(c.version as i64)];
        let first = self.exec.execute(&sql, &params)?;
        let second = self.exec.execute(&sql, &params)?;
        let sql = self.sql("DELETE FROM dogana_catalog_cursors WHERE name = $1");
        self.exec.execute(&sql, &[Param::Text(&name)])?;
        if (first, second) != (1, 0) {
            return Err(self.weak(&format!(
                "two updates predicated on version {} affected {first} and {second} rows (1 and 0 expected)",
                c.version
            )));
        }
        Ok(())
    }

    fn weak(&self, detail: &str) -> CatalogError {
        CatalogError::WeakConditionalBackend {
            catalog: self.exec.shown(),
            detail: detail.to_owned(),
        }
    }

    fn row_lease(name: &str, row: &[Value]) -> Lease {
        Lease {
            name: name.to_owned(),
            holder: row[0].text(),
            fence: row[1].int() as u64,
            expires_at_ms: row[2].int(),
        }
    }
}

fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX / 4)
}

impl<E: Exec> Catalog for SqlCatalog<E> {
    fn shown(&self) -> String {
        self.exec.shown()
    }

    fn now_ms(&mut self) -> Result<i64, CatalogError> {
        let sql = self.sql("SELECT NOW");
        let rows = self.exec.query(&sql, &[])?;
        Ok(rows.first().and_then(|r| r.first()).map_or(0, Value::int))
    }

    fn acquire(
        &mut self,
        name: &str,
        holder: &str,
        ttl: Duration,
    ) -> Result<Acquired, CatalogError> {
        // one upsert: a free, expired or own row is taken; the fence grows unless the
        // holder renews an unexpired lease of its own
        let sql = self.sql(
            "INSERT INTO dogana_catalog_leases AS l (name, holder, fence, expires_at_ms)
             VALUES ($1, $2, 1, NOW + $3)
             ON CONFLICT (name) DO UPDATE SET
               holder = excluded.holder,
               fence = CASE WHEN l.holder = excluded.holder AND l.expires_at_ms > NOW
                            THEN l.fence ELSE l.fence + 1 END,
               expires_at_ms = excluded.expires_at_ms
             WHERE l.expires_at_ms <= NOW OR l.holder = excluded.holder
             RETURNING holder, fence, expires_at_ms",
        );
        let rows = self.exec.query(
            &sql,
            &[Param::Text(name), Param::Text(holder), Param::Int(ms(ttl))],
        )?;
        if let Some(row) = rows.first() {
            return Ok(Acquired::Granted(Self::row_lease(name, row)));
        }
        let sql = self
            .sql("SELECT holder, fence, expires_at_ms FROM dogana_catalog_leases WHERE name = $1");
        let rows = self.exec.query(&sql, &[Param::Text(name)])?;
        let row = rows.first().ok_or_else(|| CatalogError::Backend {
            catalog: self.exec.shown(),
            detail: format!("lease {name}: refused, and no row holds it"),
            transient: true,
        })?;
        let l = Self::row_lease(name, row);
        Ok(Acquired::Held {
            holder: l.holder,
            fence: l.fence,
            expires_at_ms: l.expires_at_ms,
        })
    }

    fn renew(&mut self, lease: &Lease, ttl: Duration) -> Result<Lease, CatalogError> {
        let sql = self.sql(
            "UPDATE dogana_catalog_leases SET expires_at_ms = NOW + $4
             WHERE name = $1 AND holder = $2 AND fence = $3 AND expires_at_ms > NOW
             RETURNING holder, fence, expires_at_ms",
        );
        let rows = self.exec.query(
            &sql,
            &[
                Param::Text(&lease.name),
                Param::Text(&lease.holder),
                Param::Int(lease.fence as i64),
                Param::Int(ms(ttl)),
            ],
        )?;
        match rows.first() {
            Some(row) => Ok(Self::row_lease(&lease.name, row)),
            None => Err(CatalogError::LeaseLost {
                name: lease.name.clone(),
                holder: lease.holder.clone(),
                fence: lease.fence,
            }),
        }
    }

    fn release(&mut self, lease: &Lease) -> Result<(), CatalogError> {
        let sql = self.sql(
            "UPDATE dogana_catalog_leases SET expires_at_ms = 0
             WHERE name = $1 AND holder = $2 AND fence = $3",
        );
        self.exec.execute(
            &sql,
            &[
                Param::Text(&lease.name),
                Param::Text(&lease.holder),
                Param::Int(lease.fence as i64),
            ],
        )?;
        Ok(())
    }

    fn cursor(&mut self, name: &str) -> Result<Option<Cursor>, CatalogError> {
        let sql = self.sql("SELECT value, version FROM dogana_catalog_cursors WHERE name = $1");
        let rows = self.exec.query(&sql, &[Param::Text(name)])?;
        Ok(rows.first().map(|r| Cursor {
            value: r[0].text(),
            version: r[1].int() as u64,
        }))
    }

    fn swap_cursor(
        &mut self,
        name: &str,
        expected: Option<u64>,
        value: &str,
    ) -> Result<Option<Cursor>, CatalogError> {
        let (sql, version, affected) = match expected {
            None => {
                let sql = self.sql(
                    "INSERT INTO dogana_catalog_cursors (name, value, version) VALUES ($1, $2, 1)
                     ON CONFLICT (name) DO NOTHING",
                );
                let n = self
                    .exec
                    .execute(&sql, &[Param::Text(name), Param::Text(value)])?;
                (sql, 1, n)
            }
            Some(v) => {
                let sql = self.sql(
                    "UPDATE dogana_catalog_cursors SET value = $2, version = version + 1
                     WHERE name = $1 AND version = $3",
                );
                let n = self.exec.execute(
                    &sql,
                    &[Param::Text(name), Param::Text(value), Param::Int(v as i64)],
                )?;
                (sql, v + 1, n)
            }
        };
        match affected {
            0 => Ok(None),
            1 => Ok(Some(Cursor {
                value: value.to_owned(),
                version,
            })),
            n => Err(CatalogError::WeakConditionalBackend {
                catalog: self.exec.shown(),
                detail: format!("{sql}: affected {n} rows of one key"),
            }),
        }
    }

    fn append(&mut self, kind: &str, body: &str) -> Result<u64, CatalogError> {
        let sql = self.sql(
            "INSERT INTO dogana_catalog_journal (at_ms, kind, body) VALUES (NOW, $1, $2) RETURNING seq",
        );
        let rows = self
            .exec
            .query(&sql, &[Param::Text(kind), Param::Text(body)])?;
        Ok(rows.first().and_then(|r| r.first()).map_or(0, Value::int) as u64)
    }

    fn journal(&mut self, after: u64, limit: usize) -> Result<Vec<JournalEntry>, CatalogError> {
        let sql = self.sql(
            "SELECT seq, at_ms, kind, body FROM dogana_catalog_journal
             WHERE seq > $1 ORDER BY seq LIMIT $2",
        );
        let rows = self.exec.query(
            &sql,
            &[
                Param::Int(after as i64),
                Param::Int(i64::try_from(limit).unwrap_or(i64::MAX)),
            ],
        )?;
        Ok(rows
            .iter()
            .map(|r| JournalEntry {
                seq: r[0].int() as u64,
                at_ms: r[1].int(),
                kind: r[2].text(),
                body: r[3].text(),
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A backend that answers one affected row to every statement: a proxy that hides the
    /// database's counts.
    struct EveryRowAffected;

    impl Exec for EveryRowAffected {
        fn shown(&self) -> String {
            "proxy://counts-hidden".into()
        }
        fn execute(&mut self, _: &str, _: &[Param<'_>]) -> Result<u64, CatalogError> {
            Ok(1)
        }
        fn query(&mut self, _: &str, _: &[Param<'_>]) -> Result<Vec<Vec<Value>>, CatalogError> {
            Ok(Vec::new())
        }
    }

    #[test]
    fn a_backend_whose_conditional_update_is_not_linearizable_is_refused_at_open() {
        // issue 31: weak-conditional-backend, refused at open
        let dialect = Dialect {
            now_ms: "0",
            placeholder: '$',
            serial: "BIGINT",
            ddl_begin: "BEGIN;",
        };
        match SqlCatalog::open(EveryRowAffected, dialect) {
            Err(e @ CatalogError::WeakConditionalBackend { .. }) => {
                let m = e.to_string();
                assert!(
                    m.contains("proxy://counts-hidden") && m.contains("affected 1 and 1"),
                    "{m}"
                );
                assert_eq!(e.code(), dogana_codes::COORDINATION_UNPROVEN);
            }
            Err(e) => panic!("{e}"),
            Ok(_) => panic!("a catalog that cannot tell a lost update was opened"),
        }
    }
}
