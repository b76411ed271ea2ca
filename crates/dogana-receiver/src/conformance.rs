//! The conformance suite every backend runs: one public function per behaviour, generic over
//! [`Receiver`], which every [`Store`] over a [`Harness`] backend is.
//! [`conformance_tests!`](crate::conformance_tests) expands to one `#[test]` per function:
//!
//! ```ignore
//! dogana_receiver::conformance_tests!(dogana_receiver::Store<dogana_sqlite::Sqlite>;
//!     full_replaces_all, window_replaces_window /* , ... */);
//! ```
//!
//! Every function panics on a failure, checks `verify` after every step, and names the rules
//! it proves in `// rule:` comments.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::{Backend, Datum, DeliverOptions, Part, Store, StoreError};
use dogana::{
    Contract, Date, Deletions, Group, Ledger, LogicalType, Manifest, Outcome, Receipt, Shape,
    Timestamp, Window, Wire,
};

/// One delivery, as a receiver is handed it.
#[derive(Debug, Clone)]
pub struct Job {
    /// The delivered file.
    pub file: PathBuf,
    /// The contract in force.
    pub contract: Contract,
    /// The sender's manifest.
    pub manifest: Manifest,
    /// The receiver's time.
    pub now: Timestamp,
    /// Where it came from.
    pub source: Option<String>,
    /// Types of columns the contract does not bind (for the column hash and the `values`
    /// check).
    pub column_types: Vec<(String, String)>,
}

/// What a delivery came to.
#[derive(Debug, Clone)]
pub struct Delivered {
    /// The receipt answered (stored, or a replay).
    pub receipt: Receipt,
    /// How many times the decision was made again because the head moved (RECV-10).
    pub redecided: u32,
}

/// A published table: its columns and every row, each value as text (None for NULL), rows
/// sorted.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Rows {
    /// The published columns.
    pub columns: Vec<String>,
    /// The rows, sorted.
    pub rows: Vec<Vec<Option<String>>>,
}

impl Rows {
    /// The values of one column, in row order.
    pub fn column(&self, name: &str) -> Vec<Option<String>> {
        match self.columns.iter().position(|c| c == name) {
            None => Vec::new(),
            Some(i) => self.rows.iter().map(|r| r[i].clone()).collect(),
        }
    }

    /// The values of one column as a set of texts (NULL as "null").
    pub fn set(&self, name: &str) -> BTreeSet<String> {
        self.column(name)
            .into_iter()
            .map(|v| v.unwrap_or_else(|| "null".into()))
            .collect()
    }

    /// The value in the row whose `key` column is `id`.
    pub fn value(&self, key: &str, id: &str, column: &str) -> Option<String> {
        let k = self.columns.iter().position(|c| c == key)?;
        let c = self.columns.iter().position(|c| c == column)?;
        self.rows
            .iter()
            .find(|r| r[k].as_deref() == Some(id))
            .and_then(|r| r[c].clone())
    }
}

/// A way to damage a store behind the receiver's back, for the recovery tests.
#[derive(Debug, Clone)]
pub enum Damage {
    /// Delete every published row whose first column equals this text.
    DeleteRow(String),
    /// Overwrite the stored ledger.
    Ledger(Box<Ledger>),
    /// Delete the stored receipt with this `seq`.
    DeleteReceipt(i64),
    /// Create, outside dogana, a table of this name with one integer column `id` and one row
    /// (an application's own table).
    ForeignTable(String),
}

/// A dogana receiver under test.
pub trait Receiver: Sized {
    /// A new, empty receiver keeping its data in `dir`.
    fn create(dir: &Path) -> Result<Self, String>;
    /// Delivers one file (RECV-01 to RECV-10).
    fn deliver(&mut self, job: &Job) -> Result<Delivered, String>;
    /// Decides `first`, then delivers `second` through another handle on the same data, then
    /// commits `first`: the head moves between deciding and committing `first` (RECV-10).
    fn interleave(&mut self, first: &Job, second: &Job) -> Result<(Delivered, Delivered), String>;
    /// The published rows and the ledger, read from one committed state (RECV-13).
    fn read(&mut self, table: &str) -> Result<(Rows, Option<Ledger>), String>;
    /// Every stored receipt of the table, in the order stored.
    fn receipts(&mut self, table: &str) -> Result<Vec<Receipt>, String>;
    /// The problems `verify` finds (RECV-12, RECOVERY-01); empty when consistent.
    fn verify(&mut self, table: &str) -> Result<Vec<String>, String>;
    /// Damages the data behind the receiver's back.
    fn damage(&mut self, table: &str, damage: Damage) -> Result<(), String>;
    /// Delivers one job per table of `group` as one (GROUP-10 to GROUP-16); the receipts in
    /// the group's order.
    fn deliver_group(&mut self, group: &Group, jobs: &[Job]) -> Result<Vec<Receipt>, String>;
    /// Decides the group `jobs`, then delivers `second` (one table's file alone) through
    /// another handle on the same data, then commits the group: one table's head moves between
    /// the group's decision and its commit (RECV-10). The group's receipts and how many times
    /// it was decided again.
    fn interleave_group(
        &mut self,
        group: &Group,
        jobs: &[Job],
        second: &Job,
    ) -> Result<(Vec<Receipt>, u32), String>;
    /// Whether the backend keeps its ledgers region by region ([`Backend::keeps_ledger_rows`]):
    /// then its suite runs the ledger-rows cases too ([`conformance_suite!`](crate::conformance_suite)).
    fn keeps_ledger_rows(&self) -> bool;
}

/// What the conformance suite needs of a backend beyond the port: a fresh one, a second
/// handle on the same data, and damage done behind the engine's back.
pub trait Harness: Backend + Sized {
    /// A new, empty store keeping its data in `dir`.
    fn create(dir: &Path) -> Result<Self, String>;
    /// Another handle on the same data (another connection), as a second writer would have.
    fn reopen(&self) -> Result<Self, String>;
    /// Damages the data behind the engine's back.
    fn damage(&mut self, table: &str, damage: Damage) -> Result<(), String>;
    /// Copies the closed store kept in folder `from` so that `create(to)` opens the copy, in
    /// place of what `to` held: the crash harness's snapshots. By default the folder's files,
    /// for a store that lives in its folder; a server's store copies what it keeps there.
    fn copy_store(from: &Path, to: &Path) -> Result<(), String> {
        copy_dir(from, to)
    }
    /// Whether `error`, from [`create`](Harness::create) on a store whose writer was killed,
    /// is a refusal the backend documents as its database's own: the database no longer
    /// opens the file because the kill tore one of its own writes (DuckDB rewrites its
    /// metadata block in place at each checkpoint). Such a store holds no mixture of two
    /// states; it holds nothing readable. The crash harness counts these kills apart and
    /// fails when more than one in fifty end so. None, by default.
    fn torn_by_its_database(error: &str) -> bool {
        let _ = error;
        false
    }
}

/// Replaces folder `to` with a copy of folder `from`, its subfolders too (a lake or a Delta
/// store is a tree of objects).
pub fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to).map_err(|e| format!("creating {}: {e}", to.display()))?;
    let entries =
        std::fs::read_dir(from).map_err(|e| format!("reading {}: {e}", from.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| e.to_string())?;
        let ty = entry.file_type().map_err(|e| e.to_string())?;
        let target = to.join(entry.file_name());
        if ty.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else if ty.is_file() {
            std::fs::copy(entry.path(), &target)
                .map_err(|e| format!("copying {}: {e}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// Implements [`Backend`](crate::Backend) for a newtype `$t(pub $inner)` by delegating every
/// method to the backend inside (the harnesses' wrappers of one backend: a store in memory,
/// one with short leases...).
#[macro_export]
macro_rules! delegate_backend {
    ($t:ty, $inner:ty) => {
        impl $crate::Backend for $t {
            const TEXT_TIMES: bool = <$inner as $crate::Backend>::TEXT_TIMES;

            fn begin(
                &mut self,
                txn: $crate::Txn,
                tables: &[&str],
            ) -> Result<(), $crate::StoreError> {
                $crate::Backend::begin(&mut self.0, txn, tables)
            }
            fn commit(&mut self) -> Result<(), $crate::StoreError> {
                $crate::Backend::commit(&mut self.0)
            }
            fn rollback(&mut self) {
                $crate::Backend::rollback(&mut self.0)
            }
            fn ledger(&mut self, table: &str) -> Result<Option<String>, $crate::StoreError> {
                $crate::Backend::ledger(&mut self.0, table)
            }
            fn keeps_ledger_rows(&self) -> bool {
                $crate::Backend::keeps_ledger_rows(&self.0)
            }
            fn ledger_identity(
                &mut self,
                table: &str,
            ) -> Result<Option<String>, $crate::StoreError> {
                $crate::Backend::ledger_identity(&mut self.0, table)
            }
            fn save_ledger_rows(
                &mut self,
                table: &str,
                identity: &str,
                rows: &::dogana::LedgerRows,
            ) -> Result<(), $crate::StoreError> {
                $crate::Backend::save_ledger_rows(&mut self.0, table, identity, rows)
            }
            fn accepted_receipt(
                &mut self,
                table: &str,
                m: &str,
            ) -> Result<Option<String>, $crate::StoreError> {
                $crate::Backend::accepted_receipt(&mut self.0, table, m)
            }
            fn receipts(
                &mut self,
                table: &str,
            ) -> Result<Vec<$crate::ReceiptRow>, $crate::StoreError> {
                $crate::Backend::receipts(&mut self.0, table)
            }
            fn tables(&mut self) -> Result<Vec<String>, $crate::StoreError> {
                $crate::Backend::tables(&mut self.0)
            }
            fn published_columns(
                &mut self,
                table: &str,
            ) -> Result<Option<Vec<String>>, $crate::StoreError> {
                $crate::Backend::published_columns(&mut self.0, table)
            }
            fn stage_create(
                &mut self,
                table: &str,
                layout: &$crate::Layout,
            ) -> Result<(), $crate::StoreError> {
                $crate::Backend::stage_create(&mut self.0, table, layout)
            }
            fn stage_batch(
                &mut self,
                t: &str,
                layout: &$crate::Layout,
                batch: &$crate::Batch,
            ) -> Result<(), $crate::StoreError> {
                $crate::Backend::stage_batch(&mut self.0, t, layout, batch)
            }
            fn stage_clear(&mut self, table: &str) -> Result<(), $crate::StoreError> {
                $crate::Backend::stage_clear(&mut self.0, table)
            }
            fn keys_outside(
                &mut self,
                table: &str,
                q: &$crate::KeysOutside<'_>,
            ) -> Result<(u64, Option<Vec<$crate::Datum>>), $crate::StoreError> {
                $crate::Backend::keys_outside(&mut self.0, table, q)
            }
            fn execute(
                &mut self,
                table: &str,
                step: $crate::Step<'_>,
            ) -> Result<(), $crate::StoreError> {
                $crate::Backend::execute(&mut self.0, table, step)
            }
            fn save_ledger(
                &mut self,
                table: &str,
                document: &str,
            ) -> Result<(), $crate::StoreError> {
                $crate::Backend::save_ledger(&mut self.0, table, document)
            }
            fn save_receipt(
                &mut self,
                table: &str,
                r: &::dogana::Receipt,
            ) -> Result<(), $crate::StoreError> {
                $crate::Backend::save_receipt(&mut self.0, table, r)
            }
            fn read_rows(
                &mut self,
                t: &str,
                columns: &[String],
            ) -> Result<Vec<Vec<$crate::Datum>>, $crate::StoreError> {
                $crate::Backend::read_rows(&mut self.0, t, columns)
            }
            fn group_of(&mut self, table: &str) -> Result<Option<Vec<String>>, $crate::StoreError> {
                $crate::Backend::group_of(&mut self.0, table)
            }
            fn save_group(&mut self, tables: &[String]) -> Result<(), $crate::StoreError> {
                $crate::Backend::save_group(&mut self.0, tables)
            }
        }
    };
}

fn options(job: &Job) -> DeliverOptions {
    job.column_types
        .iter()
        .fold(DeliverOptions::new(), |o, (c, t)| o.column_type(c, t))
}

fn err(e: StoreError) -> String {
    e.to_string()
}

/// Every engine over a [`Harness`] backend is a [`Receiver`].
impl<B: Harness> Receiver for Store<B> {
    fn create(dir: &Path) -> Result<Self, String> {
        Ok(Store::new(B::create(dir)?))
    }

    fn deliver(&mut self, job: &Job) -> Result<Delivered, String> {
        let d = self
            .deliver_with(
                &job.file,
                &job.contract,
                &job.manifest,
                job.now,
                job.source.as_deref(),
                &options(job),
            )
            .map_err(err)?;
        Ok(Delivered {
            receipt: d.receipt,
            redecided: d.redecided,
        })
    }

    fn interleave(&mut self, first: &Job, second: &Job) -> Result<(Delivered, Delivered), String> {
        let decision = self
            .decide_with(
                &first.file,
                &first.contract,
                &first.manifest,
                first.now,
                first.source.as_deref(),
                &options(first),
            )
            .map_err(err)?;
        let mut other = Store::new(self.backend().reopen()?);
        let b = Receiver::deliver(&mut other, second)?;
        drop(other);
        let a = self.commit(decision).map_err(err)?;
        Ok((
            Delivered {
                receipt: a.receipt,
                redecided: a.redecided,
            },
            b,
        ))
    }

    fn read(&mut self, table: &str) -> Result<(Rows, Option<Ledger>), String> {
        let s = self.read_consistent_rows(table).map_err(err)?;
        let mut rows: Vec<Vec<Option<String>>> = s
            .rows
            .iter()
            .map(|r| r.iter().map(Datum::render).collect())
            .collect();
        rows.sort();
        Ok((
            Rows {
                columns: s.columns,
                rows,
            },
            s.ledger,
        ))
    }

    fn receipts(&mut self, table: &str) -> Result<Vec<Receipt>, String> {
        Ok(Store::receipts(self, table)
            .map_err(err)?
            .into_iter()
            .map(|r| r.receipt)
            .collect())
    }

    fn verify(&mut self, table: &str) -> Result<Vec<String>, String> {
        Ok(Store::verify(self, table).map_err(err)?.problems)
    }

    fn damage(&mut self, table: &str, damage: Damage) -> Result<(), String> {
        self.backend_mut().damage(table, damage)
    }

    fn deliver_group(&mut self, group: &Group, jobs: &[Job]) -> Result<Vec<Receipt>, String> {
        let parts = group_parts(jobs);
        let now = jobs.first().map_or_else(now, |j| j.now);
        let source = jobs.first().and_then(|j| j.source.clone());
        Store::deliver_group(self, group, &parts, now, source.as_deref())
            .map(|d| d.receipts)
            .map_err(err)
    }

    fn interleave_group(
        &mut self,
        group: &Group,
        jobs: &[Job],
        second: &Job,
    ) -> Result<(Vec<Receipt>, u32), String> {
        let parts = group_parts(jobs);
        let now = jobs.first().map_or_else(now, |j| j.now);
        let decision = self.decide_group(group, &parts, now, None).map_err(err)?;
        let mut other = Store::new(self.backend().reopen()?);
        Receiver::deliver(&mut other, second)?;
        drop(other);
        let d = self.commit_group(decision).map_err(err)?;
        Ok((d.receipts, d.redecided))
    }

    fn keeps_ledger_rows(&self) -> bool {
        self.backend().keeps_ledger_rows()
    }
}

fn group_parts(jobs: &[Job]) -> Vec<Part> {
    jobs.iter()
        .map(|j| Part {
            file: j.file.clone(),
            manifest: j.manifest.clone(),
            options: options(j),
        })
        .collect()
}

/// Expands to one `#[test]` per named conformance function, run against a [`Receiver`] type.
///
/// ```ignore
/// dogana_receiver::conformance_tests!(dogana_receiver::Store<dogana_sqlite::Sqlite>;
///     // rule: PLAN-03
///     full_replaces_all,
/// );
/// ```
#[macro_export]
macro_rules! conformance_tests {
    ($receiver:ty; $($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                $crate::conformance::$name::<$receiver>();
            }
        )*
    };
}

// ---------------------------------------------------------------------------------------------
// fixtures

static DIRS: AtomicU64 = AtomicU64::new(0);

/// A new empty directory under the system's temporary directory, named for this process, a
/// number of its own and `name`.
fn fresh_dir(prefix: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "{prefix}-{}-{}-{name}",
        std::process::id(),
        DIRS.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir
}

/// A receiver in a fresh directory, removed afterwards, with helpers for the tests.
pub struct Fixture<R: Receiver> {
    /// The directory holding the files and the receiver's data.
    pub dir: PathBuf,
    /// The receiver.
    pub r: R,
}

impl<R: Receiver> fmt::Debug for Fixture<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fixture({})", self.dir.display())
    }
}

impl<R: Receiver> Drop for Fixture<R> {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Everything a receiver holds for one table.
#[derive(Debug, Clone, PartialEq)]
pub struct State {
    /// The published rows.
    pub rows: Rows,
    /// The stored ledger.
    pub ledger: Option<Ledger>,
    /// The identities of the stored receipts, in order.
    pub receipts: Vec<String>,
}

impl<R: Receiver> Fixture<R> {
    /// A fresh receiver in a new directory under the system's temporary directory.
    pub fn new(name: &str) -> Fixture<R> {
        let dir = fresh_dir("dogana-conformance", name);
        let r = R::create(&dir).expect("a receiver");
        Fixture { dir, r }
    }

    /// Writes a file into the directory.
    pub fn file(&self, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.dir.join(name);
        std::fs::write(&path, bytes).expect("writing a delivery");
        path
    }

    /// Delivers, panicking on an operational error.
    pub fn deliver(&mut self, job: &Job) -> Delivered {
        self.r.deliver(job).expect("the delivery does not fail")
    }

    /// The table's state.
    pub fn state(&mut self, table: &str) -> State {
        let (rows, ledger) = self.r.read(table).expect("read");
        let receipts = self
            .r
            .receipts(table)
            .expect("receipts")
            .iter()
            .map(Wire::identity)
            .collect();
        State {
            rows,
            ledger,
            receipts,
        }
    }

    /// Asserts that verify finds nothing wrong, and that the ledger read with the rows is the
    /// one stored under the last acceptance.
    pub fn verify(&mut self, table: &str) {
        // rule: RECV-12, RECOVERY-01
        let problems = self.r.verify(table).expect("verify");
        assert!(problems.is_empty(), "verify({table}): {problems:#?}");
        let receipts = self.r.receipts(table).expect("receipts");
        let (_, ledger) = self.r.read(table).expect("read");
        let last = receipts
            .iter()
            .rev()
            .find(|r| r.outcome() == Outcome::Accepted);
        assert_eq!(
            ledger
                .as_ref()
                .and_then(|l| l.publication_id().map(str::to_owned)),
            last.map(|r| r.publication_id().to_owned()),
            "the stored ledger's head is the last acceptance's"
        );
    }

    /// Delivers and asserts acceptance; verifies.
    pub fn accept(&mut self, job: &Job) -> Receipt {
        let d = self.deliver(job);
        assert_eq!(
            d.receipt.outcome(),
            Outcome::Accepted,
            "{}",
            failures(&d.receipt)
        );
        self.verify(job.contract.table());
        d.receipt
    }

    /// Delivers a job expected to be refused by the check named `check`: the receipt is
    /// rejected and stored, rows and ledger are untouched (RECV-08), verify passes.
    pub fn refuse(&mut self, job: &Job, check: &str) -> Receipt {
        let table = job.contract.table();
        let before = self.state(table);
        let d = self.deliver(job);
        let receipt = d.receipt;
        assert_eq!(
            receipt.outcome(),
            Outcome::Rejected,
            "{check}: {receipt:#?}"
        );
        assert!(
            receipt.failures().any(|c| c.name() == check),
            "expected a failed {check} check; failures: {}",
            failures(&receipt)
        );
        let after = self.state(table);
        // rule: RECV-08 — rows and ledger stay as they were; the receipt alone is saved
        assert_eq!(after.rows, before.rows, "rows changed by a refusal");
        assert_eq!(after.ledger, before.ledger, "ledger changed by a refusal");
        let mut expected = before.receipts.clone();
        expected.push(receipt.identity());
        assert_eq!(
            after.receipts, expected,
            "the refusal is stored as a receipt"
        );
        self.verify(table);
        receipt
    }
}

/// The failed checks of a receipt, for messages.
pub fn failures(r: &Receipt) -> String {
    r.failures()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// A UTC instant.
pub fn ts(s: &str) -> Timestamp {
    s.parse().expect("a datetime")
}

/// A date.
pub fn date(s: &str) -> Date {
    s.parse().expect("a date")
}

/// The receiver's clock in the tests: after every produced_at.
pub fn now() -> Timestamp {
    ts("2026-11-01T00:00:00Z")
}

/// The orders contract: key id, window order_date, cursor updated_at, deleted deleted; shapes
/// `full`, `window` (complete window), `changes` (timestamp with tombstones), `window_changes`
/// (a window's timestamp changes with tombstones).
pub fn orders() -> Contract {
    orders_named("orders", "id", "order_date")
}

/// The orders contract under other table, key and window names.
pub fn orders_named(table: &str, id: &str, window: &str) -> Contract {
    Contract::builder(table, [id])
        .shape("full", Shape::full())
        .shape("window", Shape::window())
        .shape("changes", Shape::changes(Deletions::Tombstone))
        .shape(
            "window_changes",
            Shape::window_changes(Deletions::Tombstone),
        )
        .window_column(window)
        .cursor_column("updated_at")
        .deleted_column("deleted")
        .column(id, LogicalType::Int)
        .column(window, LogicalType::Date)
        .column("updated_at", LogicalType::Datetime)
        .column("deleted", LogicalType::Bool)
        .build()
        .expect("a valid contract")
}

/// A keyless events contract: complete `full` and `window` (by day) reads, and an `append`
/// starting at 2026-10-01.
pub fn events() -> Contract {
    Contract::builder("events", Vec::<String>::new())
        .shape("full", Shape::full())
        .shape("window", Shape::window())
        .shape("append", Shape::changes(Deletions::None))
        .window_column("day")
        .cursor_column("at")
        .column("day", LogicalType::Date)
        .column("at", LogicalType::Datetime)
        .start_at(ts("2026-10-01T00:00:00Z"))
        .build()
        .expect("a valid contract")
}

/// The file (in `d`) and manifest of a one-day `window` delivery of [`orders`] for
/// 2026-10-`day`, one order of that id, produced at `hour`:`day` on 2026-10-26: the deliveries
/// the backends' ledger-rows tests make a ledger of many regions with.
pub fn window_of_day(d: &Path, day: u32, hour: u32) -> (PathBuf, Manifest) {
    let when = format!("2026-10-{day:02}");
    let updated = format!("{when}T10:00:00Z");
    let file = d.join(format!("w{day}-{hour}.csv"));
    let rows: Vec<Order<'_>> = vec![(i64::from(day), &when, &updated, "1.00", false)];
    std::fs::write(&file, orders_csv(&rows)).expect("writes the file");
    let m = orders()
        .manifest("window", ts(&format!("2026-10-26T{hour:02}:{day:02}:00Z")))
        .window(Window::new(date(&when), date(&when)))
        .rows(1)
        .build()
        .expect("a valid manifest");
    (file, m)
}

/// A window delivery of day 2026-10-`day` holding `rows` rows (ids from 100), written to
/// `d`, declared at 07:00 on 2026-10-26 with its content hash: a staging larger than a few
/// rows.
pub fn large_window_of_day(d: &Path, day: u32, rows: i64) -> (PathBuf, Manifest) {
    let when = format!("2026-10-{day:02}");
    let updated = format!("{when}T10:00:00Z");
    let many: Vec<Order<'_>> = (100..100 + rows)
        .map(|i| (i, when.as_str(), updated.as_str(), "1.00", false))
        .collect();
    let text = orders_csv(&many);
    let file = d.join(format!("large-{day}.csv"));
    std::fs::write(&file, &text).expect("writes the file");
    let m = orders()
        .manifest("window", ts("2026-10-26T07:00:00Z"))
        .window(Window::new(date(&when), date(&when)))
        .rows(rows as u64)
        .content_hash(sha(&text))
        .build()
        .expect("a valid manifest");
    (file, m)
}

/// Delivers [`window_of_day`] of `day` at `hour` into `store`, at [`now`].
pub fn deliver_window_of_day<B: Backend>(
    store: &mut Store<B>,
    d: &Path,
    day: u32,
    hour: u32,
) -> Result<Outcome, StoreError> {
    let (file, m) = window_of_day(d, day, hour);
    Ok(store
        .deliver(&file, &orders(), &m, now(), None)?
        .receipt
        .outcome())
}

/// One orders row: id, order_date, updated_at, amount, deleted.
pub type Order<'a> = (i64, &'a str, &'a str, &'a str, bool);

/// An orders CSV file with a header `id,order_date,updated_at,amount,deleted`.
pub fn orders_csv(rows: &[Order<'_>]) -> String {
    let mut s = String::from("id,order_date,updated_at,amount,deleted\n");
    for (id, d, u, a, del) in rows {
        s.push_str(&format!("{id},{d},{u},{a},{del}\n"));
    }
    s
}

/// The lowercase hex SHA-256 of some bytes.
pub fn sha(bytes: impl AsRef<[u8]>) -> String {
    dogana_rows::sha256_bytes(bytes.as_ref())
}

impl<R: Receiver> Fixture<R> {
    /// A job over a file written from `text`, its manifest built by `manifest` (which is given
    /// the content hash to declare).
    pub fn job(
        &self,
        name: &str,
        text: impl AsRef<[u8]>,
        contract: &Contract,
        manifest: impl FnOnce(&Contract, String) -> Manifest,
    ) -> Job {
        let bytes = text.as_ref();
        let file = self.file(name, bytes);
        Job {
            file,
            manifest: manifest(contract, sha(bytes)),
            contract: contract.clone(),
            now: now(),
            source: Some("conformance".into()),
            column_types: Vec::new(),
        }
    }

    /// A full orders delivery at `at` of these rows.
    pub fn full(&self, name: &str, at: &str, rows: &[Order<'_>]) -> Job {
        let live = rows.iter().filter(|r| !r.4).count() as u64;
        self.job(name, orders_csv(rows), &orders(), |c, h| {
            c.manifest("full", ts(at))
                .rows(live)
                .content_hash(h)
                .build()
                .expect("manifest")
        })
    }

    /// A complete window delivery of orders.
    pub fn window(&self, name: &str, at: &str, lo: &str, hi: &str, rows: &[Order<'_>]) -> Job {
        let live = rows.iter().filter(|r| !r.4).count() as u64;
        let window = Window::new(date(lo), date(hi));
        self.job(name, orders_csv(rows), &orders(), |c, h| {
            c.manifest("window", ts(at))
                .window(window)
                .rows(live)
                .content_hash(h)
                .build()
                .expect("manifest")
        })
    }

    /// A timestamp changes delivery of orders with tombstones.
    pub fn changes(&self, name: &str, since: &str, at: &str, rows: &[Order<'_>]) -> Job {
        let live = rows.iter().filter(|r| !r.4).count() as u64;
        let tombs = rows.iter().filter(|r| r.4).count() as u64;
        self.job(name, orders_csv(rows), &orders(), |c, h| {
            c.manifest("changes", ts(at))
                .since(ts(since))
                .rows(live)
                .tombstones(tombs)
                .content_hash(h)
                .build()
                .expect("manifest")
        })
    }
}

const T1: &str = "2026-10-10T06:00:00Z";
const T2: &str = "2026-10-11T06:00:00Z";
const T3: &str = "2026-10-12T06:00:00Z";

/// Five orders over three days, updated before T1.
fn base_orders() -> Vec<Order<'static>> {
    vec![
        (1, "2026-10-01", "2026-10-01T10:00:00Z", "10.00", false),
        (2, "2026-10-01", "2026-10-01T11:00:00Z", "20.00", false),
        (3, "2026-10-02", "2026-10-02T10:00:00Z", "30.00", false),
        (4, "2026-10-03", "2026-10-03T10:00:00Z", "40.00", false),
        (5, "2026-10-03", "2026-10-03T11:00:00Z", "50.00", false),
    ]
}

fn ids(rows: &Rows) -> Vec<String> {
    let mut v: Vec<String> = rows.column("id").into_iter().flatten().collect();
    v.sort_by_key(|s| s.parse::<i64>().unwrap_or(i64::MAX));
    v
}

fn set(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

// ---------------------------------------------------------------------------------------------
// actions

/// An honest delivery passes every check, in the documented order, and is accepted: the
/// core checks, then dogana-rows' eight, then the receiver's three.
pub fn honest_delivery_passes_every_check<R: Receiver>() {
    // rule: CHECK-01, CHECK-18, CHECK-19, GATE-02, LOADER-04, LOADER-05, LOADER-06, RECV-07
    // rule: RECV-17 — the stored ledger is ledger.follow(receipt)
    let mut fx = Fixture::<R>::new("honest");
    let job = fx.full("full.csv", T1, &base_orders());
    let receipt = fx.accept(&job);
    let names: Vec<&str> = receipt.checks().iter().map(|c| c.name()).collect();
    assert_eq!(
        names,
        [
            "manifest",
            "receiver_time",
            "transition",
            "parse",
            "rows",
            "deleted",
            "keys",
            "window",
            "cursor",
            "schema_hash",
            "content_hash",
            "values",
            "columns",
            "keys_elsewhere"
        ]
    );
    assert!(receipt.checks().iter().all(|c| c.passed()));
    let state = fx.state("orders");
    assert_eq!(state.receipts, vec![receipt.identity()]);
    // rule: RECV-07 — the saved ledger is ledger.follow(receipt)
    let expected = Ledger::new(orders()).follow(&receipt).expect("follows");
    assert_eq!(state.ledger.as_ref(), Some(&expected));
}

/// replace_all deletes every published row, then inserts the read's live rows.
pub fn full_replaces_all<R: Receiver>() {
    // rule: PLAN-03, PLAN-09, RECV-07, RECV-11
    let mut fx = Fixture::<R>::new("full");
    let first = fx.accept(&fx.full("full1.csv", T1, &base_orders()));
    assert_eq!(
        ids(&fx.state("orders").rows),
        set(&["1", "2", "3", "4", "5"])
    );
    let rows = [
        (2, "2026-10-01", "2026-10-11T01:00:00Z", "21.00", false),
        (3, "2026-10-02", "2026-10-02T10:00:00Z", "30.00", false),
        (6, "2026-10-04", "2026-10-11T02:00:00Z", "60.00", false),
    ];
    let second = fx.accept(&fx.full("full2.csv", T2, &rows));
    let state = fx.state("orders");
    assert_eq!(ids(&state.rows), set(&["2", "3", "6"]));
    assert_eq!(
        state.rows.value("id", "2", "amount").as_deref(),
        Some("21.00")
    );
    // rule: RECV-11 — every receipt kept, accepted ones in publication order
    let receipts = fx.r.receipts("orders").unwrap();
    assert_eq!(receipts, vec![first.clone(), second.clone()]);
    assert_eq!(second.base_publication_id(), Some(first.publication_id()));
    // rule: RECV-14 — the chain: SHA-256 of "previous:contract identity:manifest identity"
    assert_eq!(
        second.publication_id(),
        dogana::chain(
            Some(first.publication_id()),
            &orders().identity(),
            &second.manifest().identity()
        )
    );
    // an empty full delivery empties the table
    fx.accept(&fx.full("full3.csv", T3, &[]));
    assert!(fx.state("orders").rows.rows.is_empty());
}

/// A full read replaces the table whole however the backend stages it (straight into a new
/// table, [`Backend::stage_create_whole`](crate::Backend::stage_create_whole)): an acceptance
/// publishes exactly its rows, also when decided again after the head moved; a refusal found
/// after the rows were staged publishes nothing, and the next full read is published whole.
pub fn full_replacement_publishes_only_accepted_rows<R: Receiver>() {
    // rule: PLAN-03, PLAN-14, RECV-08, RECV-10
    let mut fx = Fixture::<R>::new("whole");
    fx.accept(&fx.full("full1.csv", T1, &base_orders()));
    let published = fx.state("orders").rows;
    // refused by the rows check, which counts the rows as they are staged
    let mut short = fx.full("full2.csv", T2, &base_orders()[..3]);
    short.manifest = orders()
        .manifest("full", ts(T2))
        .rows(4)
        .build()
        .expect("manifest");
    fx.refuse(&short, "rows");
    assert_eq!(fx.state("orders").rows.columns, published.columns);
    // decided, overtaken by a window delivery, decided again and published whole
    let rows = [
        (2, "2026-10-01", "2026-10-11T01:00:00Z", "21.00", false),
        (7, "2026-10-05", "2026-10-11T02:00:00Z", "70.00", false),
    ];
    let a = fx.full("full3.csv", T3, &rows);
    let b = fx.window(
        "window.csv",
        T2,
        "2026-10-03",
        "2026-10-03",
        &[(4, "2026-10-03", "2026-10-10T10:00:00Z", "44.00", false)],
    );
    let (da, db) = fx.r.interleave(&a, &b).expect("interleave");
    assert_eq!(db.receipt.outcome(), Outcome::Accepted);
    assert_eq!(da.redecided, 1);
    assert_eq!(
        da.receipt.outcome(),
        Outcome::Accepted,
        "{}",
        failures(&da.receipt)
    );
    fx.verify("orders");
    let state = fx.state("orders");
    assert_eq!(state.rows.columns, published.columns);
    assert_eq!(ids(&state.rows), set(&["2", "7"]));
    assert_eq!(
        state.rows.value("id", "7", "amount").as_deref(),
        Some("70.00")
    );
    // rule: PLAN-14 — the deleted column is never published
    assert!(!state.rows.columns.iter().any(|c| c == "deleted"));
}

/// replace_window deletes the rows inside the window and earlier copies of the read's keys,
/// then inserts; rows outside the window are untouched.
pub fn window_replaces_window<R: Receiver>() {
    // rule: PLAN-04, PLAN-11, PLAN-09, PLAN-01, PLAN-02
    let mut fx = Fixture::<R>::new("window");
    fx.accept(&fx.full("full.csv", T1, &base_orders()));
    // the window [10-02, 10-03]: 3 changes, 4 is gone, 5 stays, 7 is new
    let rows = [
        (3, "2026-10-02", "2026-10-11T01:00:00Z", "31.00", false),
        (5, "2026-10-03", "2026-10-03T11:00:00Z", "50.00", false),
        (7, "2026-10-03", "2026-10-11T02:00:00Z", "70.00", false),
    ];
    let receipt = fx.accept(&fx.window("w.csv", T2, "2026-10-02", "2026-10-03", &rows));
    let actions: Vec<&str> = receipt
        .transition()
        .unwrap()
        .plan()
        .actions()
        .iter()
        .map(|a| a.kind().name())
        .collect();
    assert_eq!(actions, ["replace_window"]);
    let state = fx.state("orders");
    assert_eq!(ids(&state.rows), set(&["1", "2", "3", "5", "7"]));
    assert_eq!(
        state.rows.value("id", "3", "amount").as_deref(),
        Some("31.00")
    );
    assert_eq!(
        state.rows.value("id", "1", "amount").as_deref(),
        Some("10.00")
    );
    // a window that holds nothing now empties it
    fx.accept(&fx.window("w2.csv", T3, "2026-10-03", "2026-10-03", &[]));
    assert_eq!(ids(&fx.state("orders").rows), set(&["1", "2", "3"]));
}

/// upsert replaces the rows sharing a key with a live row; tombstone deletes the rows the
/// tombstones name.
pub fn changes_upsert_and_tombstone<R: Receiver>() {
    // rule: PLAN-05, PLAN-06, PLAN-09, CHECK-03, CHECK-06
    let mut fx = Fixture::<R>::new("changes");
    fx.accept(&fx.full("full.csv", T1, &base_orders()));
    let rows = [
        (2, "2026-10-01", "2026-10-10T12:00:00Z", "22.00", false),
        (8, "2026-10-04", "2026-10-11T01:00:00Z", "80.00", false),
        (4, "", "", "", true),
        (9, "", "", "", true), // a tombstone of a key never published deletes nothing
    ];
    let receipt = fx.accept(&fx.changes("c.csv", T1, T2, &rows));
    let actions: Vec<&str> = receipt
        .transition()
        .unwrap()
        .plan()
        .actions()
        .iter()
        .map(|a| a.kind().name())
        .collect();
    assert_eq!(actions, ["upsert", "tombstone"]);
    let state = fx.state("orders");
    assert_eq!(ids(&state.rows), set(&["1", "2", "3", "5", "8"]));
    assert_eq!(
        state.rows.value("id", "2", "amount").as_deref(),
        Some("22.00")
    );
    // an empty changes read at T3 moves the dates and nothing else
    fx.accept(&fx.changes("c2.csv", T2, T3, &[]));
    assert_eq!(
        ids(&fx.state("orders").rows),
        set(&["1", "2", "3", "5", "8"])
    );
}

/// The deleted column is never published, whatever the delivery.
pub fn deleted_column_never_published<R: Receiver>() {
    // rule: PLAN-14, CHECK-04
    let mut fx = Fixture::<R>::new("deleted");
    fx.accept(&fx.full("full.csv", T1, &base_orders()));
    let state = fx.state("orders");
    assert_eq!(
        state.rows.columns,
        ["id", "order_date", "updated_at", "amount"]
    );
    fx.accept(&fx.changes(
        "c.csv",
        T1,
        T2,
        &[
            (1, "2026-10-01", "2026-10-10T12:00:00Z", "11.00", false),
            (2, "", "", "", true),
        ],
    ));
    assert_eq!(
        fx.state("orders").rows.columns,
        ["id", "order_date", "updated_at", "amount"]
    );
    // a read may omit the deleted column: every row is live (CHECK-04)
    let text = "id,order_date,updated_at,amount\n3,2026-10-02,2026-10-11T10:00:00Z,33.00\n";
    let job = fx.job("c2.csv", text, &orders(), |c, h| {
        c.manifest("changes", ts(T3))
            .since(ts(T2))
            .rows(1)
            .content_hash(h)
            .build()
            .unwrap()
    });
    fx.accept(&job);
    assert_eq!(
        fx.state("orders")
            .rows
            .value("id", "3", "amount")
            .as_deref(),
        Some("33.00")
    );
}

/// A keyless table: append inserts without matching, so equal events stay two rows; a
/// complete window replaces by window value only.
pub fn keyless_append_and_window<R: Receiver>() {
    // rule: PLAN-07, PLAN-08, CONTRACT-25, CONTRACT-26
    let mut fx = Fixture::<R>::new("keyless");
    let c = events();
    let text = "day,at,what\n2026-10-02,2026-10-02T10:00:00Z,click\n2026-10-02,2026-10-02T10:00:00Z,click\n";
    let job = fx.job("a1.csv", text, &c, |c, h| {
        c.manifest("append", ts(T1))
            .since(ts("2026-10-01T00:00:00Z"))
            .rows(2)
            .content_hash(h)
            .build()
            .unwrap()
    });
    let r = fx.accept(&job);
    assert_eq!(
        r.transition().unwrap().plan().actions()[0].kind().name(),
        "append"
    );
    let text =
        "day,at,what\n2026-10-10,2026-10-10T07:00:00Z,view\n2026-10-02,2026-10-10T08:00:00Z,late\n";
    let job = fx.job("a2.csv", text, &c, |c, h| {
        c.manifest("append", ts(T2))
            .since(ts(T1))
            .rows(2)
            .content_hash(h)
            .build()
            .unwrap()
    });
    fx.accept(&job);
    let rows = fx.state("events").rows;
    assert_eq!(rows.rows.len(), 4, "equal events stay two rows");
    // a complete window [10-02, 10-02] replaces that day's events by value, matching no keys
    let text = "day,at,what\n2026-10-02,2026-10-02T10:00:00Z,click\n";
    let job = fx.job("w.csv", text, &c, |c, h| {
        c.manifest("window", ts(T3))
            .window(Window::new(date("2026-10-02"), date("2026-10-02")))
            .rows(1)
            .content_hash(h)
            .build()
            .unwrap()
    });
    let r = fx.accept(&job);
    let action = &r.transition().unwrap().plan().actions()[0];
    assert_eq!(action.kind().name(), "replace_window");
    assert!(!action.matches_keys());
    let rows = fx.state("events").rows;
    assert_eq!(
        rows.set("what"),
        ["click", "view"].iter().map(|s| s.to_string()).collect()
    );
    assert_eq!(rows.rows.len(), 2);
}

// ---------------------------------------------------------------------------------------------
// replays and the order of steps

/// A repeated accepted manifest is a replay: the original receipt as `replayed`, nothing
/// stored, nothing changed.
pub fn replay_answers_original<R: Receiver>() {
    // rule: RECV-01, RECV-02, ALG-02, LOADER-01, WIRE-20
    let mut fx = Fixture::<R>::new("replay");
    let job = fx.full("full.csv", T1, &base_orders());
    let original = fx.accept(&job);
    let later = fx.changes(
        "c.csv",
        T1,
        T2,
        &[(1, "2026-10-01", "2026-10-10T12:00:00Z", "12.00", false)],
    );
    fx.accept(&later);
    let before = fx.state("orders");
    for j in [&job, &later] {
        let d = fx.deliver(j);
        assert_eq!(d.receipt.outcome(), Outcome::Replayed);
        assert!(d.receipt.accepted() && d.receipt.replayed());
        assert_eq!(fx.state("orders"), before, "a replay changes nothing");
        fx.verify("orders");
    }
    let d = fx.deliver(&job);
    assert_eq!(d.receipt.identity(), original.identity());
    assert_eq!(d.receipt, original.as_replay().unwrap());
}

/// Without a content_hash, a repeated manifest is a replay and the file is never read: even a
/// missing one.
pub fn replay_without_content_hash_reads_nothing<R: Receiver>() {
    // rule: RECV-02, LOADER-01
    let mut fx = Fixture::<R>::new("replay-nohash");
    let text = orders_csv(&base_orders());
    let mut job = fx.job("full.csv", &text, &orders(), |c, _| {
        c.manifest("full", ts(T1)).rows(5).build().unwrap()
    });
    fx.accept(&job);
    let before = fx.state("orders");
    job.file = fx.dir.join("no-such-file.csv");
    let d = fx.deliver(&job);
    assert!(d.receipt.replayed());
    assert_eq!(fx.state("orders"), before);
}

/// A repeated manifest over other bytes is refused, with a failed content_hash check.
pub fn repeated_manifest_over_other_bytes_refused<R: Receiver>() {
    // rule: RECV-03, CHECK-08
    let mut fx = Fixture::<R>::new("replay-other");
    let job = fx.full("full.csv", T1, &base_orders());
    fx.accept(&job);
    let mut other = job.clone();
    other.file = fx.file("other.csv", orders_csv(&base_orders()[..4]));
    fx.refuse(&other, "content_hash");
    // the original bytes still replay
    assert!(fx.deliver(&job).receipt.replayed());
    // rule: RECOVERY-07, MAN-29 — a corrected file is a new delivery with a later boundary
    let corrected = fx.full("corrected.csv", T2, &base_orders()[..4]);
    fx.accept(&corrected);
    assert_eq!(ids(&fx.state("orders").rows), set(&["1", "2", "3", "4"]));
}

/// A manifest seen only on rejected receipts is decided anew.
pub fn rejected_manifest_decided_anew<R: Receiver>() {
    // rule: RECV-04, ALG-07, GATE-04
    let mut fx = Fixture::<R>::new("anew");
    let mut job = fx.full("full.csv", T1, &base_orders());
    job.now = ts("2026-10-09T00:00:00Z"); // before produced_at: receiver_time fails
    fx.refuse(&job, "receiver_time");
    job.now = now();
    fx.accept(&job);
    assert_eq!(fx.r.receipts("orders").unwrap().len(), 2);
}

/// A failed preflight is recorded with Gate::reject and no row is read: the file may not even
/// exist.
pub fn preflight_failure_reads_no_rows<R: Receiver>() {
    // rule: RECV-05, LOADER-02, LOADER-03, GATE-05, GATE-08
    let mut fx = Fixture::<R>::new("preflight");
    // changes on an untouched ledger: the transition check fails
    let mut job = fx.changes("c.csv", T1, T2, &[]);
    job.file = fx.dir.join("never-written.csv");
    let r = fx.refuse(&job, "transition");
    let names: Vec<&str> = r.checks().iter().map(|c| c.name()).collect();
    assert_eq!(
        names,
        ["manifest", "receiver_time", "transition"],
        "no row check ran"
    );
}

/// A receipt is filed under the contract's table even when the manifest names another.
pub fn receipt_filed_under_contract_table<R: Receiver>() {
    // rule: GATE-22, GATE-03
    let mut fx = Fixture::<R>::new("filed");
    let text = orders_csv(&base_orders());
    let other = orders_named("invoices", "id", "order_date");
    let job = fx.job("full.csv", &text, &orders(), |_, h| {
        other
            .manifest("full", ts(T1))
            .rows(5)
            .content_hash(h)
            .build()
            .unwrap()
    });
    let r = fx.refuse(&job, "manifest");
    assert_eq!(r.table(), "orders");
    assert!(fx.r.receipts("invoices").unwrap().is_empty());
}

// ---------------------------------------------------------------------------------------------
// each check, failing (each passes in honest_delivery_passes_every_check)

/// `parse`: a bound value that does not parse as its type.
pub fn check_parse_fails<R: Receiver>() {
    // rule: CHECK-06, DOMAIN-06
    let mut fx = Fixture::<R>::new("parse");
    fx.accept(&fx.full("full.csv", T1, &base_orders()));
    let mut rows = base_orders();
    rows[2].1 = "2026-13-45"; // not a date
    fx.refuse(&fx.full("bad-date.csv", T2, &rows), "parse");
    let text =
        "id,order_date,updated_at,amount,deleted\nseven,2026-10-01,2026-10-01T10:00:00Z,1,false\n";
    let job = fx.job("bad-int.csv", text, &orders(), |c, h| {
        c.manifest("full", ts(T2))
            .rows(1)
            .content_hash(h)
            .build()
            .unwrap()
    });
    fx.refuse(&job, "parse");
    // a naive datetime is refused (CHECK-17)
    let mut rows = base_orders();
    rows[0].2 = "2026-10-01T10:00:00";
    fx.refuse(&fx.full("naive.csv", T2, &rows), "parse");
}

/// `rows`: a manifest lying about its counts.
pub fn check_rows_fails<R: Receiver>() {
    // rule: CHECK-02, TRUST-03
    let mut fx = Fixture::<R>::new("rows");
    fx.accept(&fx.full("full.csv", T1, &base_orders()));
    let text = orders_csv(&base_orders());
    for declared in [4, 6] {
        let job = fx.job(&format!("lie{declared}.csv"), &text, &orders(), |c, h| {
            c.manifest("full", ts(T2))
                .rows(declared)
                .content_hash(h)
                .build()
                .unwrap()
        });
        fx.refuse(&job, "rows");
    }
    let rows = [(2, "", "", "", true)];
    let text = orders_csv(&rows);
    let job = fx.job("tomb-lie.csv", &text, &orders(), |c, h| {
        c.manifest("changes", ts(T2))
            .since(ts(T1))
            .rows(1)
            .tombstones(0)
            .content_hash(h)
            .build()
            .unwrap()
    });
    fx.refuse(&job, "rows");
}

/// `deleted`: a tombstone in a shape without tombstones, and a null deleted value.
pub fn check_deleted_fails<R: Receiver>() {
    // rule: CHECK-03, CHECK-05
    let mut fx = Fixture::<R>::new("deleted-check");
    fx.accept(&fx.full("full.csv", T1, &base_orders()));
    let mut rows = base_orders();
    rows[0].4 = true;
    let text = orders_csv(&rows);
    let job = fx.job("true.csv", &text, &orders(), |c, h| {
        c.manifest("full", ts(T2))
            .rows(4)
            .content_hash(h)
            .build()
            .unwrap()
    });
    fx.refuse(&job, "deleted");
    let text = "id,order_date,updated_at,amount,deleted\n1,2026-10-01,2026-10-10T10:00:00Z,1,\n";
    let job = fx.job("null.csv", text, &orders(), |c, h| {
        c.manifest("changes", ts(T2))
            .since(ts(T1))
            .rows(1)
            .content_hash(h)
            .build()
            .unwrap()
    });
    fx.refuse(&job, "deleted");
}

/// `keys`: a repeated key, and a null key.
pub fn check_keys_fails<R: Receiver>() {
    // rule: CHECK-09
    let mut fx = Fixture::<R>::new("keys");
    let mut rows = base_orders();
    rows[1].0 = 1;
    fx.refuse(&fx.full("dup.csv", T1, &rows), "keys");
    let text =
        "id,order_date,updated_at,amount,deleted\n,2026-10-01,2026-10-01T10:00:00Z,1,false\n";
    let job = fx.job("null.csv", text, &orders(), |c, h| {
        c.manifest("full", ts(T1))
            .rows(1)
            .content_hash(h)
            .build()
            .unwrap()
    });
    fx.refuse(&job, "keys");
    assert!(fx.state("orders").ledger.is_none(), "nothing published");
}

/// `window`: a row outside the delivery's window, and a null window value.
pub fn check_window_fails<R: Receiver>() {
    // rule: CHECK-10, CHECK-11
    let mut fx = Fixture::<R>::new("window-check");
    fx.accept(&fx.full("full.csv", T1, &base_orders()));
    let rows = [(3, "2026-10-05", "2026-10-02T10:00:00Z", "30.00", false)];
    fx.refuse(
        &fx.window("out.csv", T2, "2026-10-02", "2026-10-03", &rows),
        "window",
    );
    let rows = [(3, "", "2026-10-02T10:00:00Z", "30.00", false)];
    fx.refuse(&fx.full("null.csv", T2, &rows), "window");
}

/// `cursor`: a live row of a timestamp read whose cursor is outside (since, produced_at].
pub fn check_cursor_fails<R: Receiver>() {
    // rule: CHECK-12, CHECK-14
    let mut fx = Fixture::<R>::new("cursor");
    fx.accept(&fx.full("full.csv", T1, &base_orders()));
    let rows = [(1, "2026-10-01", "2026-10-09T00:00:00Z", "1", false)]; // before since
    fx.refuse(&fx.changes("early.csv", T1, T2, &rows), "cursor");
    let rows = [(1, "2026-10-01", "2026-10-12T00:00:00Z", "1", false)]; // after produced_at
    fx.refuse(&fx.changes("late.csv", T1, T2, &rows), "cursor");
    let rows = [(1, "2026-10-01", T2, "1", false)]; // produced_at itself is inside
    fx.accept(&fx.changes("edge.csv", T1, T2, &rows));
}

/// `schema_hash`: the loaded columns hash to the contract's schema_hash, or the delivery is
/// refused.
pub fn check_schema_hash<R: Receiver>() {
    // rule: CHECK-07, CONTRACT-16, CONTRACT-18
    let mut fx = Fixture::<R>::new("schema");
    let pairs = [
        ("id", "int"),
        ("order_date", "date"),
        ("updated_at", "datetime"),
        ("amount", "decimal(12,2)"),
    ];
    let hash = dogana::column_hash(&pairs);
    let c = Contract::builder("orders", ["id"])
        .shape("full", Shape::full())
        .window_column("order_date")
        .cursor_column("updated_at")
        .deleted_column("deleted")
        .shape("changes", Shape::changes(Deletions::Tombstone))
        .column("id", LogicalType::Int)
        .column("order_date", LogicalType::Date)
        .column("updated_at", LogicalType::Datetime)
        .column("deleted", LogicalType::Bool)
        .shape("window", Shape::window())
        .schema_hash(hash)
        .build()
        .unwrap();
    let types = vec![("amount".to_string(), "decimal(12,2)".to_string())];
    let text = orders_csv(&base_orders());
    let mut job = fx.job("ok.csv", &text, &c, |c, h| {
        c.manifest("full", ts(T1))
            .rows(5)
            .content_hash(h)
            .build()
            .unwrap()
    });
    job.column_types = types.clone();
    fx.accept(&job);
    let text = "id,order_date,updated_at,amount,note,deleted\n1,2026-10-01,2026-10-01T10:00:00Z,1,x,false\n";
    let mut job = fx.job("extra.csv", text, &c, |c, h| {
        c.manifest("full", ts(T2))
            .rows(1)
            .content_hash(h)
            .build()
            .unwrap()
    });
    job.column_types = types;
    job.column_types.push(("note".into(), "str".into()));
    fx.refuse(&job, "schema_hash");
}

/// `content_hash`: the bytes do not hash to the declared content_hash.
pub fn check_content_hash_fails<R: Receiver>() {
    // rule: CHECK-08, MAN-23
    let mut fx = Fixture::<R>::new("content");
    let mut job = fx.full("full.csv", T1, &base_orders());
    job.manifest = orders()
        .manifest("full", ts(T1))
        .rows(5)
        .content_hash(sha(b"other bytes"))
        .build()
        .unwrap();
    fx.refuse(&job, "content_hash");
}

/// `values`: a column the receiver types beyond the contract holds a value of another type.
pub fn check_values_fails<R: Receiver>() {
    // rule: CHECK-18
    let mut fx = Fixture::<R>::new("values");
    let mut job = fx.full("full.csv", T1, &base_orders());
    job.column_types = vec![("amount".into(), "float".into())];
    fx.accept(&job);
    let mut rows = base_orders();
    rows[3].3 = "forty";
    let mut job = fx.full("bad.csv", T2, &rows);
    job.column_types = vec![("amount".into(), "float".into())];
    fx.refuse(&job, "values");
}

/// `columns`: a window or changes delivery with columns the published table lacks is refused;
/// a complete whole-table delivery replaces the table with its columns.
pub fn check_columns_and_schema_change<R: Receiver>() {
    // rule: RECOVERY-04
    let mut fx = Fixture::<R>::new("columns");
    fx.accept(&fx.full("full.csv", T1, &base_orders()));
    let text = "id,order_date,updated_at,amount,note,deleted\n3,2026-10-02,2026-10-02T10:00:00Z,30.00,hi,false\n";
    let job = fx.job("w.csv", text, &orders(), |c, h| {
        c.manifest("window", ts(T2))
            .window(Window::new(date("2026-10-02"), date("2026-10-02")))
            .rows(1)
            .content_hash(h)
            .build()
            .unwrap()
    });
    fx.refuse(&job, "columns");
    let text = "id,order_date,updated_at,deleted\n3,2026-10-02,2026-10-10T10:00:00Z,false\n";
    let job = fx.job("c.csv", text, &orders(), |c, h| {
        c.manifest("changes", ts(T2))
            .since(ts(T1))
            .rows(1)
            .content_hash(h)
            .build()
            .unwrap()
    });
    fx.refuse(&job, "columns");
    let text = "id,order_date,updated_at,amount,note,deleted\n3,2026-10-02,2026-10-02T10:00:00Z,30.00,hi,false\n";
    let job = fx.job("f.csv", text, &orders(), |c, h| {
        c.manifest("full", ts(T2))
            .rows(1)
            .content_hash(h)
            .build()
            .unwrap()
    });
    fx.accept(&job);
    let state = fx.state("orders");
    assert_eq!(
        state.rows.columns,
        ["id", "order_date", "updated_at", "amount", "note"]
    );
    assert_eq!(state.rows.value("id", "3", "note").as_deref(), Some("hi"));
}

/// `keys_elsewhere`: a window delivery carrying a key already published outside its window,
/// live or tombstoned, is refused; a whole-table delivery may move keys.
pub fn keys_elsewhere_refuses_moved_key<R: Receiver>() {
    // rule: CHECK-16, PLAN-11, PLAN-12
    let mut fx = Fixture::<R>::new("elsewhere");
    fx.accept(&fx.full("full.csv", T1, &base_orders()));
    // key 1 is published on 10-01; the window [10-02, 10-03] carries it on 10-02
    let mut rows: Vec<Order<'_>> = base_orders()[2..].to_vec();
    rows.push((1, "2026-10-02", "2026-10-10T10:00:00Z", "10.00", false));
    fx.refuse(
        &fx.window("moved.csv", T2, "2026-10-02", "2026-10-03", &rows),
        "keys_elsewhere",
    );
    // a window changes read tombstoning key 2 (published on 10-01) from window [10-03, 10-03]
    let rows = [(2, "", "", "", true)];
    let text = orders_csv(&rows);
    let job = fx.job("tomb.csv", &text, &orders(), |c, h| {
        c.manifest("window_changes", ts(T2))
            .window(Window::new(date("2026-10-03"), date("2026-10-03")))
            .since(ts(T1))
            .rows(0)
            .tombstones(1)
            .content_hash(h)
            .build()
            .unwrap()
    });
    fx.refuse(&job, "keys_elsewhere");
    // the same key inside the window passes, and so does a whole-table move
    let rows = [
        (4, "2026-10-03", "2026-10-10T10:00:00Z", "41.00", false),
        (5, "", "", "", true),
    ];
    let text = orders_csv(&rows);
    let job = fx.job("ok.csv", &text, &orders(), |c, h| {
        c.manifest("window_changes", ts(T2))
            .window(Window::new(date("2026-10-03"), date("2026-10-03")))
            .since(ts(T1))
            .rows(1)
            .tombstones(1)
            .content_hash(h)
            .build()
            .unwrap()
    });
    fx.accept(&job);
    assert_eq!(ids(&fx.state("orders").rows), set(&["1", "2", "3", "4"]));
    let mut rows = base_orders()[..4].to_vec();
    rows[0].1 = "2026-10-02";
    fx.accept(&fx.full("move.csv", T3, &rows));
    assert_eq!(
        fx.state("orders")
            .rows
            .value("id", "1", "order_date")
            .as_deref(),
        Some("2026-10-02")
    );
}

/// The core checks reject too, and are recorded: a manifest the contract refuses, a read
/// from the receiver's future, a transition the ledger refuses (a late full).
pub fn core_checks_reject<R: Receiver>() {
    // rule: GATE-03, GATE-04, GATE-05, TRANS-02, RECV-05
    let mut fx = Fixture::<R>::new("core");
    fx.accept(&fx.full("full.csv", T2, &base_orders()));
    fx.refuse(&fx.full("late.csv", T1, &base_orders()), "transition");
    let mut job = fx.full("future.csv", T3, &base_orders());
    job.now = ts(T2);
    fx.refuse(&job, "receiver_time");
    let text = orders_csv(&base_orders());
    let job = fx.job("other-table.csv", &text, &orders(), |_, h| {
        // a manifest of another table: the manifest check fails
        orders_named("x", "id", "order_date")
            .manifest("full", ts(T3))
            .rows(5)
            .content_hash(h)
            .build()
            .unwrap()
    });
    fx.refuse(&job, "manifest");
}

// ---------------------------------------------------------------------------------------------
// stale decisions

/// A decision made against a head that moved before its commit is made again, against the
/// new head, never rebased (here it is still accepted, now continuing the other delivery).
pub fn stale_head_redecided<R: Receiver>() {
    // rule: RECV-10, LOADER-08, ALG-04, ALG-05
    let mut fx = Fixture::<R>::new("stale");
    fx.accept(&fx.full("full.csv", T1, &base_orders()));
    let a = fx.window(
        "a.csv",
        T2,
        "2026-10-01",
        "2026-10-01",
        &[(1, "2026-10-01", "2026-10-10T10:00:00Z", "11.00", false)],
    );
    let b = fx.window(
        "b.csv",
        T2,
        "2026-10-03",
        "2026-10-03",
        &[(4, "2026-10-03", "2026-10-10T10:00:00Z", "44.00", false)],
    );
    let (da, db) = fx.r.interleave(&a, &b).expect("interleave");
    assert_eq!(db.receipt.outcome(), Outcome::Accepted);
    assert_eq!(db.redecided, 0);
    assert_eq!(
        da.receipt.outcome(),
        Outcome::Accepted,
        "{}",
        failures(&da.receipt)
    );
    assert_eq!(da.redecided, 1, "the stale decision was made again");
    assert_eq!(
        da.receipt.base_publication_id(),
        Some(db.receipt.publication_id()),
        "the new decision continues the head that moved"
    );
    fx.verify("orders");
    let state = fx.state("orders");
    assert_eq!(ids(&state.rows), set(&["1", "3", "4"]));
    assert_eq!(
        state.rows.value("id", "1", "amount").as_deref(),
        Some("11.00")
    );
    assert_eq!(
        state.rows.value("id", "4", "amount").as_deref(),
        Some("44.00")
    );
}

/// A stale decision made again can come out the other way: a full read overtaken by a later
/// full is rejected, and the later full's rows stay.
pub fn stale_head_redecided_to_rejection<R: Receiver>() {
    // rule: RECV-10, TRANS-02
    let mut fx = Fixture::<R>::new("stale-reject");
    let a = fx.full("a.csv", T1, &base_orders());
    let b = fx.full("b.csv", T2, &base_orders()[..2]);
    let (da, db) = fx.r.interleave(&a, &b).expect("interleave");
    assert_eq!(db.receipt.outcome(), Outcome::Accepted);
    assert_eq!(da.redecided, 1);
    assert_eq!(da.receipt.outcome(), Outcome::Rejected);
    assert!(da.receipt.failures().any(|c| c.name() == "transition"));
    fx.verify("orders");
    assert_eq!(ids(&fx.state("orders").rows), set(&["1", "2"]));
    assert_eq!(fx.r.receipts("orders").unwrap().len(), 2);
}

/// The same manifest delivered twice at once: one acceptance and one replay.
pub fn concurrent_duplicate_becomes_replay<R: Receiver>() {
    // rule: RECV-10, RECV-02, ALG-02
    let mut fx = Fixture::<R>::new("duplicate");
    let a = fx.full("a.csv", T1, &base_orders());
    let (da, db) = fx.r.interleave(&a, &a).expect("interleave");
    assert_eq!(db.receipt.outcome(), Outcome::Accepted);
    assert_eq!(da.receipt.outcome(), Outcome::Replayed);
    assert_eq!(da.receipt.identity(), db.receipt.identity());
    fx.verify("orders");
    assert_eq!(fx.r.receipts("orders").unwrap().len(), 1);
}

// ---------------------------------------------------------------------------------------------
// recovery

/// verify rebuilds the ledger from the accepted receipts and finds a stored ledger that
/// differs.
pub fn verify_detects_wrong_ledger<R: Receiver>() {
    // rule: RECOVERY-01, RECV-12, RECV-19
    let mut fx = Fixture::<R>::new("verify");
    fx.accept(&fx.full("full.csv", T1, &base_orders()));
    fx.accept(&fx.changes("c.csv", T1, T2, &[(2, "", "", "", true)]));
    // the ledger as it was after the first delivery: behind its rows
    let first = fx.r.receipts("orders").unwrap()[0].clone();
    let behind = Ledger::new(orders()).follow(&first).unwrap();
    fx.r.damage("orders", Damage::Ledger(Box::new(behind)))
        .unwrap();
    let problems = fx.r.verify("orders").unwrap();
    assert!(
        !problems.is_empty(),
        "a ledger behind its receipts is found"
    );
}

/// Rebuilding the ledger recovers no rows: verify cannot see rows lost behind the store's
/// back, a replay does not restore them, and a newer complete whole-table read does.
pub fn rebuild_recovers_no_rows<R: Receiver>() {
    // rule: RECOVERY-02, RECV-23, RECV-16
    let mut fx = Fixture::<R>::new("recover");
    let full = fx.full("full.csv", T1, &base_orders());
    fx.accept(&full);
    fx.r.damage("orders", Damage::DeleteRow("3".into()))
        .unwrap();
    fx.verify("orders"); // the ledger is right; the rows are not, and no ledger can tell
    assert!(fx.deliver(&full).receipt.replayed());
    assert_eq!(ids(&fx.state("orders").rows), set(&["1", "2", "4", "5"]));
    fx.accept(&fx.full("full2.csv", T2, &base_orders()));
    assert_eq!(
        ids(&fx.state("orders").rows),
        set(&["1", "2", "3", "4", "5"])
    );
}

/// Readers get the rows with the ledger that describes them.
pub fn readers_see_rows_with_their_ledger<R: Receiver>() {
    // rule: RECV-13, LOADER-08
    let mut fx = Fixture::<R>::new("readers");
    let (rows, ledger) = fx.r.read("orders").unwrap();
    assert!(rows.rows.is_empty() && ledger.is_none());
    let r = fx.accept(&fx.full("full.csv", T1, &base_orders()));
    let (rows, ledger) = fx.r.read("orders").unwrap();
    assert_eq!(rows.rows.len(), 5);
    assert_eq!(ledger.unwrap().publication_id(), Some(r.publication_id()));
}

/// A contract may evolve (a new shape); one that changes a fixed field is refused and
/// nothing changes.
pub fn contract_evolution<R: Receiver>() {
    // rule: EVOL-01, RECOVERY-03, RECV-21
    let mut fx = Fixture::<R>::new("evolution");
    fx.accept(&fx.full("full.csv", T1, &base_orders()));
    let evolved = Contract::builder("orders", ["id"])
        .shape("full", Shape::full().cost(5.0))
        .shape("window", Shape::window())
        .shape("changes", Shape::changes(Deletions::Tombstone))
        .shape(
            "window_changes",
            Shape::window_changes(Deletions::Tombstone),
        )
        .window_column("order_date")
        .cursor_column("updated_at")
        .deleted_column("deleted")
        .column("id", LogicalType::Int)
        .column("order_date", LogicalType::Date)
        .column("updated_at", LogicalType::Datetime)
        .column("deleted", LogicalType::Bool)
        .build()
        .unwrap();
    let mut job = fx.full("full2.csv", T2, &base_orders());
    job.contract = evolved.clone();
    job.manifest = evolved
        .manifest("full", ts(T2))
        .rows(5)
        .content_hash(sha(orders_csv(&base_orders())))
        .build()
        .unwrap();
    let r = fx.accept(&job);
    assert_eq!(r.contract(), &evolved);
    let rekeyed = Contract::builder("orders", ["order_date", "id"])
        .shape("full", Shape::full())
        .column("id", LogicalType::Int)
        .column("order_date", LogicalType::Date)
        .build()
        .unwrap();
    let before = fx.state("orders");
    let mut job = fx.full("full3.csv", T3, &base_orders());
    job.manifest = rekeyed
        .manifest("full", ts(T3))
        .rows(5)
        .content_hash(sha(orders_csv(&base_orders())))
        .build()
        .unwrap();
    job.contract = rekeyed;
    assert!(fx.r.deliver(&job).is_err(), "a changed key is refused");
    assert_eq!(fx.state("orders"), before);
    fx.verify("orders");
}

// ---------------------------------------------------------------------------------------------
// bad input

/// A ragged CSV (a row with a field too many or too few) fails `parse` (and `rows`).
pub fn ragged_csv_refused<R: Receiver>() {
    // rule: CHECK-02, RECV-08
    let mut fx = Fixture::<R>::new("ragged");
    fx.accept(&fx.full("full.csv", T1, &base_orders()));
    let text = "id,order_date,updated_at,amount,deleted\n1,2026-10-01,2026-10-01T10:00:00Z,1,false,extra\n2,2026-10-01,2026-10-01T10:00:00Z,2,false\n";
    let job = fx.job("ragged.csv", text, &orders(), |c, h| {
        c.manifest("full", ts(T2))
            .rows(2)
            .content_hash(h)
            .build()
            .unwrap()
    });
    fx.refuse(&job, "parse");
}

/// Invalid UTF-8 in any column fails `parse`.
pub fn invalid_utf8_refused<R: Receiver>() {
    // rule: CHECK-06, RECV-08
    let mut fx = Fixture::<R>::new("utf8");
    fx.accept(&fx.full("full.csv", T1, &base_orders()));
    let mut bytes =
        b"id,order_date,updated_at,amount,deleted\n1,2026-10-01,2026-10-01T10:00:00Z,".to_vec();
    bytes.extend_from_slice(&[0xff, 0xfe]);
    bytes.extend_from_slice(b",false\n");
    let job = fx.job("utf8.csv", &bytes, &orders(), |c, h| {
        c.manifest("full", ts(T2))
            .rows(1)
            .content_hash(h)
            .build()
            .unwrap()
    });
    fx.refuse(&job, "parse");
}

/// A file without a bound column fails the check of that column.
pub fn missing_bound_column_refused<R: Receiver>() {
    // rule: CHECK-09, CHECK-10, RECV-08
    let mut fx = Fixture::<R>::new("missing");
    fx.accept(&fx.full("full.csv", T1, &base_orders()));
    let text = "order_date,updated_at,amount\n2026-10-01,2026-10-01T10:00:00Z,1\n";
    let job = fx.job("nokey.csv", text, &orders(), |c, h| {
        c.manifest("full", ts(T2))
            .rows(1)
            .content_hash(h)
            .build()
            .unwrap()
    });
    fx.refuse(&job, "keys");
    let text = "id,updated_at,amount\n1,2026-10-01T10:00:00Z,1\n";
    let job = fx.job("nowindow.csv", text, &orders(), |c, h| {
        c.manifest("full", ts(T2))
            .rows(1)
            .content_hash(h)
            .build()
            .unwrap()
    });
    fx.refuse(&job, "window");
}

/// A truncated file (cut in the middle of a row) is refused: the last row is ragged and the
/// count no longer matches.
pub fn truncated_file_refused<R: Receiver>() {
    // rule: TRUST-03, CHECK-02, RECV-08
    let mut fx = Fixture::<R>::new("truncated");
    fx.accept(&fx.full("full.csv", T1, &base_orders()));
    let text = orders_csv(&base_orders());
    let cut = &text[..text.len() - 12];
    let job = fx.job("cut.csv", cut, &orders(), |c, h| {
        c.manifest("full", ts(T2))
            .rows(5)
            .content_hash(h)
            .build()
            .unwrap()
    });
    let r = fx.refuse(&job, "parse");
    assert!(r.failures().any(|c| c.name() == "rows"));
}

/// Table and column names with quotes, spaces and semicolons are quoted identifiers: the
/// delivery works and injects nothing.
pub fn odd_names_are_quoted<R: Receiver>() {
    // rule: RECV-07, LOADER-10
    let mut fx = Fixture::<R>::new("names");
    let table = "ord\"ers; DROP TABLE dogana_receipts; --";
    let id = "i\"d";
    let window = "order date;";
    let c = orders_named(table, id, window);
    let text = "\"i\"\"d\",order date;,updated_at,\"am\"\"t; --\",deleted\n1,2026-10-01,2026-10-01T10:00:00Z,1,false\n2,2026-10-02,2026-10-01T10:00:00Z,2,false\n";
    let job = fx.job("odd.csv", text, &c, |c, h| {
        c.manifest("full", ts(T1))
            .rows(2)
            .content_hash(h)
            .build()
            .unwrap()
    });
    fx.accept(&job);
    let job = fx.job(
        "odd-w.csv",
        "\"i\"\"d\",order date;,updated_at,\"am\"\"t; --\",deleted\n2,2026-10-02,2026-10-10T10:00:00Z,3,false\n",
        &c,
        |c, h| {
            c.manifest("window", ts(T2))
                .window(Window::new(date("2026-10-02"), date("2026-10-02")))
                .rows(1)
                .content_hash(h)
                .build()
                .unwrap()
        },
    );
    fx.accept(&job);
    let rows = fx.state(table).rows;
    assert_eq!(rows.columns, [id, window, "updated_at", "am\"t; --"]);
    assert_eq!(rows.value(id, "2", "am\"t; --").as_deref(), Some("3"));
    // the store's own tables are still there, with both receipts
    assert_eq!(fx.r.receipts(table).unwrap().len(), 2);
    fx.verify(table);
}

/// Names that clash are refused: a column differing from another only in letter case fails
/// `columns`; a table named like the store's own or SQLite's is an error and records nothing,
/// and so is one differing from a stored table only in letter case.
pub fn impossible_names_refused<R: Receiver>() {
    // rule: RECV-08, GATE-25
    let mut fx = Fixture::<R>::new("impossible");
    let text = "id,order_date,updated_at,Amount,amount,deleted\n1,2026-10-01,2026-10-01T10:00:00Z,1,1,false\n";
    let job = fx.job("case.csv", text, &orders(), |c, h| {
        c.manifest("full", ts(T1))
            .rows(1)
            .content_hash(h)
            .build()
            .unwrap()
    });
    fx.refuse(&job, "columns");
    // (a NUL or another control character is already refused by the contract, CONTRACT-48)
    for table in ["dogana_receipts", "DOGANA_LEDGERS", "sqlite_master"] {
        let c = orders_named(table, "id", "order_date");
        let job = fx.job("t.csv", orders_csv(&base_orders()), &c, |c, h| {
            c.manifest("full", ts(T1))
                .rows(5)
                .content_hash(h)
                .build()
                .unwrap()
        });
        assert!(fx.r.deliver(&job).is_err(), "{table:?} is refused");
        assert!(fx.r.receipts(table).unwrap().is_empty());
    }
    fx.accept(&fx.full("full.csv", T1, &base_orders()));
    let c = orders_named("ORDERS", "id", "order_date");
    let job = fx.job("upper.csv", orders_csv(&base_orders()), &c, |c, h| {
        c.manifest("full", ts(T2))
            .rows(5)
            .content_hash(h)
            .build()
            .unwrap()
    });
    let e =
        fx.r.deliver(&job)
            .map(|d| d.receipt)
            .expect_err("ORDERS is the SQL table orders");
    // says what is wrong and what to do: one table per case-folded name, the name to use
    assert!(e.contains("one table per case-folded name"), "{e}");
    assert!(e.contains("deliver under the name \"orders\""), "{e}");
    assert!(fx.r.receipts("ORDERS").unwrap().is_empty());
    fx.verify("orders");
}

/// A key an NDJSON delivery's first line lacks is a column all the same (issue 37): a full
/// read whose second line first carries `note` publishes `note`, null in the first row; a
/// changes read whose second line first carries `secret`, which the published table lacks,
/// fails `columns` naming it, and nothing changes. A value is never dropped silently.
pub fn ndjson_keys_first_met_late_are_columns<R: Receiver>() {
    // rule: CHECK-19, RECV-08, RECOVERY-04
    let mut fx = Fixture::<R>::new("ndjson_late");
    let full = "{\"id\":1,\"order_date\":\"2026-10-01\",\"updated_at\":\"2026-10-01T10:00:00Z\",\"deleted\":false}\n\
                {\"id\":2,\"order_date\":\"2026-10-01\",\"updated_at\":\"2026-10-01T11:00:00Z\",\"deleted\":false,\"note\":\"hello\"}\n";
    let job = fx.job("full.ndjson", full, &orders(), |c, h| {
        c.manifest("full", ts(T1))
            .rows(2)
            .content_hash(h)
            .build()
            .unwrap()
    });
    fx.accept(&job);
    let state = fx.state("orders");
    assert!(
        state.rows.columns.iter().any(|c| c == "note"),
        "note is published: {:?}",
        state.rows.columns
    );
    assert_eq!(
        state.rows.value("id", "2", "note").as_deref(),
        Some("hello")
    );
    assert_eq!(state.rows.value("id", "1", "note"), None);
    let changes = "{\"id\":3,\"order_date\":\"2026-10-02\",\"updated_at\":\"2026-10-02T10:00:00Z\",\"deleted\":false}\n\
                   {\"id\":4,\"order_date\":\"2026-10-02\",\"updated_at\":\"2026-10-02T11:00:00Z\",\"deleted\":false,\"secret\":\"s\"}\n";
    let job = fx.job("changes.ndjson", changes, &orders(), |c, h| {
        c.manifest("changes", ts(T2))
            .since(ts(T1))
            .rows(2)
            .content_hash(h)
            .build()
            .unwrap()
    });
    let receipt = fx.refuse(&job, "columns");
    let detail = receipt
        .failures()
        .find(|c| c.name() == "columns")
        .map(|c| c.detail().to_owned())
        .unwrap_or_default();
    assert!(detail.contains("\"secret\""), "names the column: {detail}");
    fx.verify("orders");
}

/// A text value holding U+0000, which Postgres's text cannot hold, is refused by the
/// `values` check on every backend alike (issue 37): one file, one answer, a receipt naming
/// the line and the column, nothing published.
pub fn a_nul_in_text_is_refused_alike<R: Receiver>() {
    // rule: RECV-08, CHECK-19
    let mut fx = Fixture::<R>::new("nul");
    fx.accept(&fx.full("full.csv", T1, &base_orders()));
    let text =
        "id,order_date,updated_at,amount,deleted\n1,2026-10-01,2026-10-01T10:00:00Z,a\0b,false\n";
    let job = fx.job("nul.csv", text, &orders(), |c, h| {
        c.manifest("full", ts(T2))
            .rows(1)
            .content_hash(h)
            .build()
            .unwrap()
    });
    let receipt = fx.refuse(&job, "values");
    let detail = receipt
        .failures()
        .find(|c| c.name() == "values")
        .map(|c| c.detail().to_owned())
        .unwrap_or_default();
    assert!(
        detail.starts_with("line 2, column amount: ") && detail.contains("NUL"),
        "{detail}"
    );
    fx.verify("orders");
}

/// Expands to the whole suite, one `#[test]` per case, against a [`Receiver`] type: what every
/// backend's test file instantiates, so that no backend runs fewer cases.
///
/// A backend keeps its ledgers either as whole documents (the port's default) or region by
/// region ([`Backend::keeps_ledger_rows`]), and says which here. One that keeps them in SQL
/// region rows (SQLite, DuckDB, Postgres) names `ledger_rows`, and its suite runs the
/// ledger-rows cases too (its harness is a [`LedgerRowsHarness`], or the test does not
/// compile); one that keeps them region by region in objects of its own (the lake's pages)
/// names `ledger_pages` and gets `ledgers_kept_in_pages`; one that keeps whole documents gets
/// `ledgers_kept_whole`. Each of the last two fails if the backend keeps its ledgers the
/// other way. So no backend runs fewer cases than what it keeps calls for, and none passes a
/// case that does not apply to it.
///
/// ```ignore
/// dogana_receiver::conformance_suite!(dogana_sqlite::Store; ledger_rows);
/// dogana_receiver::conformance_suite!(dogana_receiver::Store<dogana_lake::Lake>; ledger_pages);
/// ```
#[macro_export]
macro_rules! conformance_suite {
    (@cases $receiver:ty) => {
        $crate::conformance_tests!($receiver;
            // rule: CHECK-01, CHECK-18, CHECK-19, GATE-02, LOADER-04, LOADER-05, LOADER-06, RECV-07, RECV-17
            honest_delivery_passes_every_check,
            // rule: PLAN-03, PLAN-09, RECV-07, RECV-11, RECV-14
            full_replaces_all,
            // rule: PLAN-03, PLAN-14, RECV-08, RECV-10
            full_replacement_publishes_only_accepted_rows,
            // rule: PLAN-01, PLAN-02, PLAN-04, PLAN-11
            window_replaces_window,
            // rule: PLAN-05, PLAN-06, CHECK-03, CHECK-06
            changes_upsert_and_tombstone,
            // rule: PLAN-14, CHECK-04
            deleted_column_never_published,
            // rule: PLAN-07, PLAN-08, CONTRACT-25, CONTRACT-26
            keyless_append_and_window,
            // rule: RECV-01, RECV-02, ALG-02, LOADER-01, WIRE-20
            replay_answers_original,
            // rule: RECV-02, LOADER-01
            replay_without_content_hash_reads_nothing,
            // rule: RECV-03, CHECK-08, RECOVERY-07
            repeated_manifest_over_other_bytes_refused,
            // rule: RECV-04, ALG-07
            rejected_manifest_decided_anew,
            // rule: RECV-05, LOADER-02, LOADER-03, GATE-08
            preflight_failure_reads_no_rows,
            // rule: GATE-22
            receipt_filed_under_contract_table,
            // rule: CHECK-06, CHECK-17, RECV-08
            check_parse_fails,
            // rule: CHECK-02, TRUST-03, RECV-08
            check_rows_fails,
            // rule: CHECK-03, CHECK-05, RECV-08
            check_deleted_fails,
            // rule: CHECK-09, RECV-08
            check_keys_fails,
            // rule: CHECK-10, CHECK-11, RECV-08
            check_window_fails,
            // rule: CHECK-12, CHECK-14, RECV-08
            check_cursor_fails,
            // rule: CHECK-07, CONTRACT-16, CONTRACT-18
            check_schema_hash,
            // rule: CHECK-08, RECV-08
            check_content_hash_fails,
            // rule: CHECK-18, RECV-08
            check_values_fails,
            // rule: RECOVERY-04, RECV-08
            check_columns_and_schema_change,
            // rule: CHECK-16, PLAN-11, PLAN-12
            keys_elsewhere_refuses_moved_key,
            // rule: GATE-03, GATE-04, GATE-05, TRANS-02, RECV-05
            core_checks_reject,
            // rule: RECV-10, LOADER-08, ALG-05
            stale_head_redecided,
            // rule: RECV-10
            stale_head_redecided_to_rejection,
            // rule: RECV-10, RECV-02, ALG-02
            concurrent_duplicate_becomes_replay,
            // rule: RECOVERY-01, RECV-12, RECV-19
            verify_detects_wrong_ledger,
            // rule: RECOVERY-02, RECV-23
            rebuild_recovers_no_rows,
            // rule: RECV-13
            readers_see_rows_with_their_ledger,
            // rule: EVOL-01, RECOVERY-03, RECV-21
            contract_evolution,
            // rule: CHECK-02, RECV-08
            ragged_csv_refused,
            // rule: CHECK-06, RECV-08
            invalid_utf8_refused,
            // rule: CHECK-09, CHECK-10, RECV-08
            missing_bound_column_refused,
            // rule: TRUST-03, CHECK-02, RECV-08
            truncated_file_refused,
            // rule: LOADER-10
            odd_names_are_quoted,
            // rule: GATE-25, RECV-08
            impossible_names_refused,
            // rule: CHECK-19, RECV-08, RECOVERY-04
            ndjson_keys_first_met_late_are_columns,
            // rule: RECV-08, CHECK-19
            a_nul_in_text_is_refused_alike,
            // rule: RECV-11, RECV-12
            verify_reports_a_gap_in_receipts,
            // rule: RECV-07, GATE-25
            foreign_table_never_published_over,
            // rule: RECV-06, RECV-07, CHECK-06
            published_rows_are_the_checked_rows,
            // rule: CHECK-18
            decimal_and_float_values_checked_as_declared,
            // rule: GATE-25
            typed_column_the_file_lacks_refused,
            // rule: RECV-06, RECV-08
            staged_rows_stay_with_their_delivery,
        );
    };
    (@groups $receiver:ty) => {
        $crate::conformance_tests!($receiver;
            // rule: GROUP-10, GROUP-11, GROUP-12, GROUP-13, GROUP-15, GROUP-16
            group_accepted_together,
            // rule: GROUP-14, GROUP-15, GROUP-16
            group_one_refused_all_refused,
            // rule: GROUP-23, GROUP-24
            group_replays_whole,
            // rule: GROUP-24
            group_partial_replay_is_decided_anew,
            // rule: GROUP-17, GROUP-08
            group_overlapping_another_refused,
            group_stale_head_redecided,
        );
    };
    ($receiver:ty; ledger_rows) => {
        $crate::conformance_suite!(@cases $receiver);
        $crate::conformance_suite!(@groups $receiver);
        $crate::conformance_tests!($receiver;
            // rule: RECV-09, LOADER-10, LOADER-11
            ledger_delivery_writes_the_regions_it_changed,
            // rule: LOADER-10, LOADER-11
            ledger_view_is_the_document_through_a_history,
            // rule: LOADER-10, LOADER-11
            ledger_earlier_layout_read_and_converted,
            // rule: RECOVERY-01
            ledger_unreadable_document_stops_the_conversion,
            // rule: RECV-12
            ledger_identity_not_matching_the_regions_is_found,
            // rule: RECV-13
            ledger_writers_at_once_convert_once,
            // rule: LOADER-10
            ledger_regions_rewritten_together_keep_their_own_text,
        );
    };
    ($receiver:ty) => {
        $crate::conformance_suite!(@cases $receiver);
        $crate::conformance_suite!(@groups $receiver);
        $crate::conformance_tests!($receiver;
            // rule: RECV-09
            ledgers_kept_whole,
        );
    };
    // a store that cannot publish several tables in one commit (Delta): every case but the
    // groups', which it refuses whole (its own tests show the refusal)
    ($receiver:ty; ledgers_whole_no_groups) => {
        $crate::conformance_suite!(@cases $receiver);
        $crate::conformance_tests!($receiver;
            // rule: RECV-09
            ledgers_kept_whole,
            // rule: GROUP-10, GATE-25
            group_refused_whole,
        );
    };
    ($receiver:ty; ledger_pages) => {
        $crate::conformance_suite!(@cases $receiver);
        $crate::conformance_suite!(@groups $receiver);
        $crate::conformance_tests!($receiver;
            // rule: RECV-09
            ledgers_kept_in_pages,
        );
    };
}

/// Each delivery publishes the rows it staged and nothing else, whatever the deliveries
/// before it staged (a backend may keep its staging area from one delivery to the next): a
/// large staging of rows and tombstones, a refusal's rows, a layout of other columns.
pub fn staged_rows_stay_with_their_delivery<R: Receiver>() {
    // rule: RECV-06, RECV-08 — the rows of one delivery never reach another's table
    let mut fx = Fixture::<R>::new("staging");
    fx.accept(&fx.full("full.csv", T1, &base_orders()));
    // 5,000 rows and 2,001 tombstones (5 among them), more than a small staging holds
    let many: Vec<Order<'_>> = (1000..6000)
        .map(|i| (i, "2026-10-04", "2026-10-11T01:00:00Z", "1.00", false))
        .chain((6000..8000).map(|i| (i, "", "", "", true)))
        .chain(std::iter::once((5, "", "", "", true)))
        .collect();
    fx.accept(&fx.changes("many.csv", T1, T2, &many));
    // then one row of those 5,000 changed and one tombstone, staged in the same columns: a
    // row of the delivery before would publish key 1000 twice
    let one: [Order<'_>; 2] = [
        (1000, "2026-10-04", "2026-10-11T12:00:00Z", "9.99", false),
        (3, "", "", "", true),
    ];
    fx.accept(&fx.changes("one.csv", T2, T3, &one));
    let state = fx.state("orders");
    let mut expected: Vec<String> = ["1", "2", "4"].map(String::from).to_vec();
    expected.extend((1000..6000).map(|i: i64| i.to_string()));
    let published = ids(&state.rows);
    let differ = published.iter().zip(&expected).position(|(p, e)| p != e);
    assert!(
        published.len() == expected.len() && differ.is_none(),
        "{} rows published, {} expected; the first that differs, at {differ:?}: {:?}",
        published.len(),
        expected.len(),
        differ.map(|i| (&published[i], &expected[i]))
    );
    assert_eq!(
        state.rows.value("id", "1000", "amount").as_deref(),
        Some("9.99")
    );
    // a file of three columns, refused for them
    let three = "id,order_date,updated_at,deleted\n8,2026-10-04,2026-10-11T02:00:00Z,false\n";
    let narrow = fx.job("three.csv", three, &orders(), |c, h| {
        c.manifest("window", ts("2026-10-12T07:00:00Z"))
            .window(Window::new(date("2026-10-04"), date("2026-10-04")))
            .rows(1)
            .content_hash(h)
            .build()
            .expect("manifest")
    });
    fx.refuse(&narrow, "columns");
    // two rows where one is declared: refused, with its rows staged
    let two: [Order<'_>; 2] = [
        (8, "2026-10-04", "2026-10-11T02:00:00Z", "8.00", false),
        (9, "2026-10-04", "2026-10-11T02:00:00Z", "9.00", false),
    ];
    let refused = fx.job("two.csv", orders_csv(&two), &orders(), |c, h| {
        c.manifest("window", ts("2026-10-12T08:00:00Z"))
            .window(Window::new(date("2026-10-04"), date("2026-10-04")))
            .rows(1)
            .content_hash(h)
            .build()
            .expect("manifest")
    });
    fx.refuse(&refused, "rows");
    // the window of 10-04 replaced by two rows, 5 moved into it (its tombstone came above):
    // the refused rows 8 and 9 were staged in the same columns
    let window: [Order<'_>; 2] = [
        (5, "2026-10-04", "2026-10-11T03:00:00Z", "5.50", false),
        (7, "2026-10-04", "2026-10-11T03:00:00Z", "7.00", false),
    ];
    let at = "2026-10-12T09:00:00Z";
    fx.accept(&fx.window("w.csv", at, "2026-10-04", "2026-10-04", &window));
    let state = fx.state("orders");
    assert_eq!(ids(&state.rows), set(&["1", "2", "4", "5", "7"]));
    assert_eq!(
        state.rows.value("id", "5", "amount").as_deref(),
        Some("5.50")
    );
}

/// A rejected receipt deleted from the middle of the sequence is a hole `verify` reports.
pub fn verify_reports_a_gap_in_receipts<R: Receiver>() {
    // rule: RECV-11 — every receipt is kept: the sequence has no hole
    let mut fx = Fixture::<R>::new("gap");
    fx.accept(&fx.full("a.csv", T1, &base_orders()));
    let mut bad = fx.full("b.csv", T2, &base_orders());
    bad.manifest = orders()
        .manifest("full", ts(T2))
        .rows(99)
        .build()
        .expect("manifest");
    fx.refuse(&bad, "rows");
    fx.accept(&fx.full("c.csv", T3, &base_orders()));
    fx.r.damage("orders", Damage::DeleteReceipt(2))
        .expect("damage");
    let problems = fx.r.verify("orders").expect("verify");
    assert!(
        problems
            .iter()
            .any(|p| p.contains("receipt 3 is stored where receipt 2 follows")),
        "{problems:#?}"
    );
}

/// A table of the contract's name that dogana did not create is never published over: the
/// delivery is an error (nothing stored), and the table keeps its rows.
pub fn foreign_table_never_published_over<R: Receiver>() {
    // rule: GATE-25 — the receiver's configuration is at fault, not the delivery: no receipt
    let mut fx = Fixture::<R>::new("foreign");
    fx.r.damage("orders", Damage::ForeignTable("orders".into()))
        .expect("an application's table");
    let before = fx.state("orders");
    assert_eq!(before.rows.rows.len(), 1);
    let job = fx.full("a.csv", T1, &base_orders());
    let e = fx.r.deliver(&job).map(|d| d.receipt).expect_err("refused");
    assert!(e.contains("did not create"), "{e}");
    assert!(e.contains("\"orders\""), "names the table: {e}");
    assert_eq!(fx.state("orders"), before, "nothing changed");
}

/// The files where two parsers commonly disagree: each line of a case is `name`, the bytes.
fn disagreeing_files() -> Vec<(&'static str, &'static str, Vec<u8>)> {
    let long = "x".repeat(300_000);
    let mut v: Vec<(&'static str, &'static str, Vec<u8>)> = vec![
        (
            "quoted_newline",
            "csv",
            b"id,note\n1,\"a\nb\"\n2,\"c\r\nd\"\n".to_vec(),
        ),
        (
            "doubled_quotes",
            "csv",
            b"id,note\n1,\"say \"\"hi\"\"\"\n2,\"\"\"\"\n".to_vec(),
        ),
        ("bom", "csv", b"\xef\xbb\xbfid,note\n1,a\n".to_vec()),
        ("crlf", "csv", b"id,note\r\n1,a\r\n2,b\r\n".to_vec()),
        ("bare_cr", "csv", b"id,note\r1,a\r2,b\r".to_vec()),
        ("empty_vs_missing", "csv", b"id,note\n1,\"\"\n2,\n".to_vec()),
        ("trailing_delimiter", "csv", b"id,note,\n1,a,\n".to_vec()),
        (
            "non_ascii",
            "csv",
            "id,note\n1,\u{e9}t\u{e9} \u{65e5}\u{672c} \u{1f600}\n2,\"\u{2028}\"\n"
                .as_bytes()
                .to_vec(),
        ),
        (
            "json_escapes",
            "ndjson",
            b"{\"id\":1,\"note\":\"a\\nb\\u00e9\\\"\"}\n{\"id\":2,\"note\":\"\"}\n{\"id\":3}\n"
                .to_vec(),
        ),
        (
            "json_crlf_null",
            "ndjson",
            b"{\"id\":1,\"note\":null}\r\n{\"id\":2,\"note\":\"\\ud83d\\ude00\"}\r\n".to_vec(),
        ),
    ];
    v.push((
        "long_field",
        "csv",
        format!("id,note\n1,\"{long}\"\n2,{long}\n").into_bytes(),
    ));
    v
}

fn render_cell(c: &dogana_rows::Cell<'_>) -> Option<String> {
    use dogana_rows::Cell;
    Some(match c {
        Cell::Null => return None,
        Cell::Int(i) => i.to_string(),
        Cell::Float(x) => x.to_string(),
        Cell::Str(s) => s.to_string(),
        Cell::Bool(b) => i64::from(*b).to_string(),
        Cell::Date(d) => d.to_string(),
        Cell::Datetime(t) => t.to_string(),
    })
}

/// Rows checked are rows published: every file of a corpus where parsers commonly disagree
/// is delivered, and the published table equals, row by row, what dogana-rows read and
/// checked — or, when the checks refuse the file, nothing is published.
pub fn published_rows_are_the_checked_rows<R: Receiver>() {
    let contract = Contract::builder("notes", ["id"])
        .shape("full", Shape::full())
        .column("id", LogicalType::Int)
        .build()
        .expect("a valid contract");
    let mut accepted = Vec::new();
    for (name, ext, bytes) in disagreeing_files() {
        let mut fx = Fixture::<R>::new(name);
        let format = if ext == "csv" {
            dogana_rows::Format::Csv
        } else {
            dogana_rows::Format::Ndjson
        };
        // what dogana-rows reads and checks, row by row
        let probe = contract
            .manifest("full", ts(T1))
            .rows(0)
            .build()
            .expect("manifest");
        let mut checked: Vec<(Vec<String>, Vec<Option<String>>)> = Vec::new();
        let report = dogana_rows::check_rows_with(
            &bytes[..],
            format,
            &contract,
            &probe,
            &dogana_rows::Options::new(),
            |row| -> Result<(), &'static str> {
                checked.push((
                    row.columns().to_vec(),
                    row.cells().map(|c| render_cell(&c)).collect(),
                ));
                Ok(())
            },
        )
        .expect("reads");
        let live = report.live;
        let job = fx.job(&format!("{name}.{ext}"), &bytes, &contract, |c, h| {
            c.manifest("full", ts(T1))
                .rows(live)
                .content_hash(h)
                .build()
                .expect("manifest")
        });
        let d = fx.deliver(&job);
        let (published, _) = fx.r.read("notes").expect("read");
        if d.receipt.outcome() != Outcome::Accepted {
            assert!(published.rows.is_empty(), "{name}: refused, yet published");
            continue;
        }
        let mut expected: Vec<Vec<Option<String>>> = Vec::new();
        for (columns, cells) in &checked {
            let row: Vec<Option<String>> = published
                .columns
                .iter()
                .map(|c| {
                    columns
                        .iter()
                        .position(|k| k == c)
                        .and_then(|i| cells.get(i).cloned().flatten())
                })
                .collect();
            expected.push(row);
        }
        expected.sort();
        assert_eq!(
            published.rows, expected,
            "{name}: the published rows are not the rows dogana-rows checked"
        );
        fx.verify("notes");
        accepted.push(name);
    }
    eprintln!("published and compared: {accepted:?}");
    // the corpus is not vacuous: only the trailing delimiter (an empty column name) is refused
    assert_eq!(accepted.len(), 10, "{accepted:?}");
}

/// Invoices and their lines: one group, both read whole.
fn invoices_group() -> (Contract, Contract, Group) {
    let contract = |t: &str| {
        Contract::builder(t, ["id"])
            .shape("full", Shape::full())
            .column("id", LogicalType::Int)
            .build()
            .expect("a valid contract")
    };
    let (i, l) = (contract("invoices"), contract("lines"));
    let g = Group::new([i.clone(), l.clone()]).expect("a group");
    (i, l, g)
}

impl<R: Receiver> Fixture<R> {
    /// A full read of `table` at `at` holding ids `ids`.
    fn full_of(&self, contract: &Contract, name: &str, at: &str, ids: &[i64]) -> Job {
        let mut text = String::from("id,amount\n");
        for id in ids {
            text.push_str(&format!("{id},{id}.00\n"));
        }
        let n = ids.len() as u64;
        self.job(name, text, contract, |c, h| {
            c.manifest("full", ts(at))
                .rows(n)
                .content_hash(h)
                .build()
                .expect("manifest")
        })
    }
}

/// A group read at one instant is accepted together: every receipt carries the passed
/// `together` check, and both tables are published with their ledgers.
pub fn group_accepted_together<R: Receiver>() {
    let (i, l, g) = invoices_group();
    let mut fx = Fixture::<R>::new("group-accept");
    let jobs = [
        fx.full_of(&l, "l.csv", T1, &[10, 11, 12]),
        fx.full_of(&i, "i.csv", T1, &[1, 2]),
    ];
    let receipts = fx.r.deliver_group(&g, &jobs).expect("delivers");
    assert_eq!(receipts.len(), 2);
    // in the group's order
    assert_eq!(receipts[0].table(), "invoices");
    for r in &receipts {
        assert_eq!(r.outcome(), Outcome::Accepted, "{}", failures(r));
        assert!(r
            .checks()
            .iter()
            .any(|c| c.name() == "together" && c.passed()));
    }
    assert_eq!(ids(&fx.state("invoices").rows), set(&["1", "2"]));
    assert_eq!(fx.state("lines").rows.rows.len(), 3);
    fx.verify("invoices");
    fx.verify("lines");
}

/// A store that cannot publish several tables in one commit (Delta) refuses a group whole:
/// an error, not a receipt, and nothing stored in any of its tables.
pub fn group_refused_whole<R: Receiver>() {
    let (i, l, g) = invoices_group();
    let mut fx = Fixture::<R>::new("group-refused");
    let jobs = [
        fx.full_of(&l, "l.csv", T1, &[10, 11]),
        fx.full_of(&i, "i.csv", T1, &[1]),
    ];
    let e =
        fx.r.deliver_group(&g, &jobs)
            .expect_err("the group is refused");
    assert!(!e.is_empty());
    for t in ["invoices", "lines"] {
        assert!(
            fx.r.receipts(t).expect("reads").is_empty(),
            "{t} kept a receipt"
        );
        assert!(
            fx.r.read(t).expect("reads").0.rows.is_empty(),
            "{t} has rows"
        );
    }
}

/// One table refused: every receipt is a rejection, nothing is published, every rejection is
/// kept.
pub fn group_one_refused_all_refused<R: Receiver>() {
    let (i, l, g) = invoices_group();
    let mut fx = Fixture::<R>::new("group-refuse");
    let mut lying = fx.full_of(&l, "l.csv", T1, &[10, 11]);
    lying.manifest = l
        .manifest("full", ts(T1))
        .rows(5)
        .build()
        .expect("manifest");
    let jobs = [fx.full_of(&i, "i.csv", T1, &[1, 2]), lying];
    let receipts = fx.r.deliver_group(&g, &jobs).expect("decides");
    for r in &receipts {
        assert_eq!(r.outcome(), Outcome::Rejected);
        assert!(r
            .checks()
            .iter()
            .any(|c| c.name() == "together" && !c.passed()));
    }
    for t in ["invoices", "lines"] {
        let st = fx.state(t);
        assert!(st.rows.rows.is_empty(), "{t} published");
        assert!(st.ledger.is_none());
        assert_eq!(st.receipts.len(), 1, "{t}: the rejection is kept");
        fx.verify(t);
    }
}

/// A repeated group answers with the recorded receipts as replays and stores nothing.
pub fn group_replays_whole<R: Receiver>() {
    let (i, l, g) = invoices_group();
    let mut fx = Fixture::<R>::new("group-replay");
    let jobs = [
        fx.full_of(&i, "i.csv", T1, &[1, 2]),
        fx.full_of(&l, "l.csv", T1, &[10]),
    ];
    let first = fx.r.deliver_group(&g, &jobs).expect("delivers");
    let before = (fx.state("invoices"), fx.state("lines"));
    let again = fx.r.deliver_group(&g, &jobs).expect("replays");
    for (a, b) in first.iter().zip(&again) {
        assert!(b.replayed(), "{b:?}");
        assert_eq!(a.publication_id(), b.publication_id());
    }
    assert_eq!((fx.state("invoices"), fx.state("lines")), before);
}

/// A manifest accepted alone, then sent in a group, is a new decision: the group is not a
/// replay (here it is refused, its full read being older than nothing, a new decision).
pub fn group_partial_replay_is_decided_anew<R: Receiver>() {
    let (i, l, g) = invoices_group();
    let mut fx = Fixture::<R>::new("group-partial");
    let inv = fx.full_of(&i, "i.csv", T1, &[1]);
    fx.accept(&inv);
    let jobs = [inv, fx.full_of(&l, "l.csv", T1, &[10])];
    let receipts = fx.r.deliver_group(&g, &jobs).expect("decides");
    assert!(receipts.iter().all(|r| !r.replayed()), "{receipts:?}");
    assert_eq!(
        fx.state("invoices").receipts.len(),
        2,
        "a new receipt, not a replay"
    );
    fx.verify("invoices");
    fx.verify("lines");
}

/// One table's head moves between the group's decision and its commit (another writer
/// delivered that table alone): the whole group is decided again under the lock, and every
/// receipt continues the head it is published on, the moved table's included.
pub fn group_stale_head_redecided<R: Receiver>() {
    // rule: RECV-10
    let (i, l, g) = invoices_group();
    let mut fx = Fixture::<R>::new("group-stale");
    let first = [
        fx.full_of(&i, "i1.csv", T1, &[1]),
        fx.full_of(&l, "l1.csv", T1, &[10]),
    ];
    let base = fx.r.deliver_group(&g, &first).expect("delivers");
    let jobs = [
        fx.full_of(&i, "i3.csv", T3, &[1, 2, 3]),
        fx.full_of(&l, "l3.csv", T3, &[10, 11]),
    ];
    let alone = fx.full_of(&i, "i2.csv", T2, &[1, 2]);
    let (receipts, redecided) = fx.r.interleave_group(&g, &jobs, &alone).expect("commits");
    assert_eq!(redecided, 1, "the stale group decision was made again");
    let stored = fx.r.receipts("invoices").expect("receipts");
    let moved = stored
        .iter()
        .find(|r| r.manifest().identity() == alone.manifest.identity())
        .expect("the delivery alone is kept");
    assert_eq!(moved.outcome(), Outcome::Accepted, "{}", failures(moved));
    for r in &receipts {
        assert_eq!(r.outcome(), Outcome::Accepted, "{}", failures(r));
    }
    assert_eq!(
        receipts[0].base_publication_id(),
        Some(moved.publication_id()),
        "invoices continues the head that moved, not the one decided on"
    );
    assert_eq!(
        receipts[1].base_publication_id(),
        Some(base[1].publication_id()),
        "lines continues its own head"
    );
    assert_eq!(ids(&fx.state("invoices").rows), set(&["1", "2", "3"]));
    fx.verify("invoices");
    fx.verify("lines");
}

/// A table belongs to one group: a group overlapping one the store holds is refused, and
/// nothing is written.
pub fn group_overlapping_another_refused<R: Receiver>() {
    let (i, l, g) = invoices_group();
    let mut fx = Fixture::<R>::new("group-overlap");
    let jobs = [
        fx.full_of(&i, "i.csv", T1, &[1]),
        fx.full_of(&l, "l.csv", T1, &[10]),
    ];
    fx.r.deliver_group(&g, &jobs).expect("delivers");
    let payments = Contract::builder("payments", ["id"])
        .shape("full", Shape::full())
        .column("id", LogicalType::Int)
        .build()
        .expect("a contract");
    let other = Group::new([i.clone(), payments.clone()]).expect("a group");
    let before = fx.state("invoices");
    let jobs = [
        fx.full_of(&i, "i2.csv", T2, &[1, 2]),
        fx.full_of(&payments, "p.csv", T2, &[7]),
    ];
    let e = fx.r.deliver_group(&other, &jobs).expect_err("refused");
    assert!(e.contains("belongs to one group"), "{e}");
    assert_eq!(fx.state("invoices"), before);
    assert!(fx.state("payments").receipts.is_empty());
    // parts that do not match the group one to one: refused before anything is decided
    let e = fx.r.deliver_group(&g, &jobs[..1]).expect_err("refused");
    assert!(e.contains("do not match"), "{e}");
}

/// A receiver-typed `decimal(p,s)` column is checked against its precision and scale, and a
/// float column's NaN is refused, never published as NULL.
pub fn decimal_and_float_values_checked_as_declared<R: Receiver>() {
    let mut fx = Fixture::<R>::new("decimals");
    let mut ok = fx.full("ok.csv", T1, &base_orders());
    ok.column_types = vec![("amount".into(), "decimal(6,2)".into())];
    fx.accept(&ok);
    // 123456.78 has six digits before the point: more than decimal(6,2) holds
    let mut rows = base_orders();
    rows[1].3 = "123456.78";
    let mut wide = fx.full("wide.csv", T2, &rows);
    wide.column_types = vec![("amount".into(), "decimal(6,2)".into())];
    let r = fx.refuse(&wide, "values");
    assert!(failures(&r).contains("amount"), "{}", failures(&r));
    let mut rows = base_orders();
    rows[2].3 = "nan";
    let mut nan = fx.full("nan.csv", T2, &rows);
    nan.column_types = vec![("amount".into(), "float".into())];
    fx.refuse(&nan, "values");
}

/// A column type given for a column the file lacks checks nothing: an error, nothing stored.
pub fn typed_column_the_file_lacks_refused<R: Receiver>() {
    let mut fx = Fixture::<R>::new("absent-typed");
    let mut job = fx.full("a.csv", T1, &base_orders());
    job.column_types = vec![("amuont".into(), "decimal(6,2)".into())];
    let e = fx.r.deliver(&job).map(|d| d.receipt).expect_err("refused");
    assert!(e.contains("amuont") && e.contains("does not have"), "{e}");
    assert!(fx.state("orders").receipts.is_empty(), "nothing stored");
}

// ---------------------------------------------------------------------------------------------
// ledgers kept region by region

/// How a store keeps its ledgers, as [`LedgerRowsHarness::layout`] finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LedgerLayout {
    /// This version's: the tables `dogana_ledger_heads` and `dogana_ledger_regions`, and
    /// `dogana_ledgers` a view assembling each document from them.
    Rows,
    /// Earlier versions': `dogana_ledgers` a table of whole documents, `dogana_regions` the
    /// view over it, and neither the heads nor the region rows.
    Earlier,
    /// Neither (a store half converted), described.
    Other(String),
}

/// One stored region row of a ledger, as [`LedgerRowsHarness::region_rows`] reads it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct RegionRow {
    /// The row's key: the order-preserving key of the region's low end.
    pub low: Vec<u8>,
    /// The region's canonical JSON.
    pub region: String,
    /// What changes whenever the row is written, as far as the backend can tell (its version:
    /// Postgres's `xmin`, DuckDB's `rowid`, on SQLite how often this handle wrote it).
    pub written: String,
}

/// What the ledger-rows cases need of a backend that keeps its ledgers region by region
/// ([`Backend::keeps_ledger_rows`]): opening its store again for writing or for reading only,
/// a look at its own tables, and the earlier layout and damage made behind the engine's back.
/// A backend that keeps whole documents (the lake) has none of these and implements none:
/// its suite runs `ledgers_kept_whole` in place of the ledger-rows cases
/// ([`conformance_suite!`](crate::conformance_suite)).
pub trait LedgerRowsHarness: Harness {
    /// Opens the store [`Harness::create`] made in `dir`, for writing (converting a store of
    /// the earlier layout) or for reading only (changing nothing), as another process would.
    fn open_store(dir: &Path, write: bool) -> Result<Self, StoreError>;
    /// How the store keeps its ledgers.
    fn layout(&mut self) -> Result<LedgerLayout, String>;
    /// Every row of `dogana_ledgers(table_name, document)`, by table: what a user's query
    /// reads, in either layout (LOADER-10).
    fn documents(&mut self) -> Result<Vec<(String, String)>, String>;
    /// Every row of `dogana_regions`, each column as text, by table and region index: what a
    /// user's query reads, in either layout (LOADER-11).
    fn regions_view(&mut self) -> Result<Vec<Vec<Option<String>>>, String>;
    /// The stored region rows of `table`, by key.
    fn region_rows(&mut self, table: &str) -> Result<Vec<RegionRow>, String>;
    /// Turns the store into the layout of earlier versions, holding these documents: a
    /// `dogana_ledgers` table of `(table_name, document)` and `dogana_regions` the view over
    /// it, as those versions made them; the region rows and heads dropped. The handle is
    /// dropped after (what it knows of the store is gone).
    fn to_earlier_layout(&mut self, documents: &[(String, String)]) -> Result<(), String>;
    /// Overwrites the identity stored beside `table`'s region rows, leaving the rows.
    fn damage_identity(&mut self, table: &str, identity: &str) -> Result<(), String>;
}

/// A [`Store`] over a [`LedgerRowsHarness`] backend: what the ledger-rows cases run on.
pub trait LedgerRowsStore {
    /// The backend.
    type Backend: LedgerRowsHarness;
}

impl<B: LedgerRowsHarness> LedgerRowsStore for Store<B> {
    type Backend = B;
}

/// A fresh folder, removed afterwards unless the test failed.
struct Folder(PathBuf);

impl Folder {
    fn new(name: &str) -> Folder {
        Folder(fresh_dir("dogana-ledger-rows", name))
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// A new store in `d` keeping its ledgers region by region.
fn rows_store<B: LedgerRowsHarness>(d: &Path) -> Store<B> {
    let store = Store::new(B::create(d).expect("a store"));
    assert!(
        store.backend().keeps_ledger_rows(),
        "the suite runs the ledger-rows cases on a backend that keeps whole documents"
    );
    store
}

/// Opens the store in `d` again.
fn reopened<B: LedgerRowsHarness>(d: &Path, write: bool) -> Store<B> {
    Store::new(B::open_store(d, write).expect("the store opens"))
}

/// Delivers [`window_of_day`] of `day` at 06:`day`, accepted.
fn accept_day<B: Backend>(store: &mut Store<B>, d: &Path, day: u32) {
    let outcome = deliver_window_of_day(store, d, day, 6).expect("delivers");
    assert_eq!(outcome, Outcome::Accepted, "day {day}");
}

fn stored_ledger<B: Backend>(store: &mut Store<B>) -> Ledger {
    store.ledger("orders").expect("reads").expect("a ledger")
}

fn stored_identity<B: Backend>(store: &mut Store<B>) -> Option<String> {
    let b = store.backend_mut();
    b.begin(crate::Txn::Read, &["orders"]).expect("begins");
    let identity = b.ledger_identity("orders").expect("reads the identity");
    b.commit().expect("commits");
    identity
}

fn verified<B: Backend>(store: &mut Store<B>) {
    let report = store.verify("orders").expect("verify");
    assert!(report.ok(), "{:#?}", report.problems);
}

/// The region rows a change wrote: those new or written again, and those removed.
fn rows_written(before: &[RegionRow], after: &[RegionRow]) -> usize {
    let written = after.iter().filter(|r| !before.contains(r)).count();
    let removed = before
        .iter()
        .filter(|b| !after.iter().any(|a| a.low == b.low))
        .count();
    written + removed
}

/// A backend whose suite runs no ledger-rows cases keeps its ledgers as whole documents, and
/// the ledger saved with each acceptance is the ledger followed.
pub fn ledgers_kept_whole<R: Receiver>() {
    // rule: RECV-09 — the ledger saved with the acceptance is the ledger followed
    let mut fx = Fixture::<R>::new("whole");
    assert!(
        !fx.r.keeps_ledger_rows(),
        "this backend keeps its ledgers region by region: its suite must run the ledger-rows \
         cases (`conformance_suite!(...; ledger_rows)`, its harness a LedgerRowsHarness)"
    );
    saved_ledgers_are_the_ledgers_followed(&mut fx);
}

/// A backend keeping its ledgers region by region in its own objects (the lake's pages,
/// not SQL rows): the ledger saved with each acceptance is the ledger followed, and `verify`
/// finds it consistent with its receipts and the identity stored beside it.
pub fn ledgers_kept_in_pages<R: Receiver>() {
    // rule: RECV-09 — the ledger saved with the acceptance is the ledger followed
    let mut fx = Fixture::<R>::new("pages");
    assert!(
        fx.r.keeps_ledger_rows(),
        "this backend keeps its ledgers whole: its suite is `conformance_suite!(...)`"
    );
    saved_ledgers_are_the_ledgers_followed(&mut fx);
    fx.verify("orders");
}

/// Three window deliveries, each one's stored ledger the one before it followed by it.
fn saved_ledgers_are_the_ledgers_followed<R: Receiver>(fx: &mut Fixture<R>) {
    let mut expected = Ledger::new(orders());
    for day in [5, 1, 3] {
        let (file, manifest) = window_of_day(&fx.dir, day, 6);
        let job = Job {
            file,
            contract: orders(),
            manifest,
            now: now(),
            source: None,
            column_types: Vec::new(),
        };
        let receipt = fx.accept(&job);
        expected = expected.follow(&receipt).expect("follows");
        assert_eq!(fx.state("orders").ledger.as_ref(), Some(&expected));
    }
}

/// A delivery writes the region rows it changed (a few around its window), not the ledger:
/// the other rows are never written again. Readers still see the reference's document and one
/// region row per region, in order; the identity beside the rows is the ledger's.
pub fn ledger_delivery_writes_the_regions_it_changed<S: LedgerRowsStore>() {
    // rule: RECV-09 — the ledger saved with the acceptance is the ledger followed
    let d = Folder::new("few");
    let mut store = rows_store::<S::Backend>(&d.0);
    for day in (1..=27).step_by(2) {
        accept_day(&mut store, &d.0, day);
    }
    let regions = stored_ledger(&mut store).region_count();
    assert!(regions > 25, "{regions} regions");
    let before = store.backend_mut().region_rows("orders").expect("rows");
    assert_eq!(before.len(), regions);
    accept_day(&mut store, &d.0, 28);
    let ledger = stored_ledger(&mut store);
    let after = store.backend_mut().region_rows("orders").expect("rows");
    assert_eq!(after.len(), ledger.region_count());
    // the region of day 28 and the ones beside it: rewriting the ledger whole would write
    // every row
    let written = rows_written(&before, &after);
    assert!(
        (1..=3).contains(&written),
        "{written} region rows written for a ledger of {} regions",
        after.len()
    );
    assert_eq!(stored_identity(&mut store), Some(ledger.identity()));
    // rule: LOADER-10 — dogana_ledgers(table_name, document), document = ledger.to_json()
    let documents = store.backend_mut().documents().expect("documents");
    assert_eq!(documents, [("orders".to_owned(), ledger.to_json())]);
    // rule: LOADER-11 — one row per region, in order
    let view = store.backend_mut().regions_view().expect("regions");
    assert_eq!(view.len(), ledger.region_count());
    for (i, row) in view.iter().enumerate() {
        assert_eq!(row[0].as_deref(), Some("orders"));
        assert_eq!(row[2].as_deref(), Some(i.to_string().as_str()), "{row:?}");
    }
    verified(&mut store);
}

/// The document readers see is the ledger's, byte for byte, after every kind of change: a
/// window, a region split and merged, a complete replacement.
pub fn ledger_view_is_the_document_through_a_history<S: LedgerRowsStore>() {
    // rule: LOADER-10 — byte for byte, after every kind of change
    let d = Folder::new("history");
    let mut store = rows_store::<S::Backend>(&d.0);
    for day in [5, 1, 9, 3, 7, 2, 4, 6, 8] {
        accept_day(&mut store, &d.0, day);
        let ledger = stored_ledger(&mut store);
        let documents = store.backend_mut().documents().expect("documents");
        assert_eq!(
            documents,
            [("orders".to_owned(), ledger.to_json())],
            "after day {day}"
        );
    }
    let file = d.0.join("full.csv");
    std::fs::write(
        &file,
        orders_csv(&[(1, "2026-10-01", "2026-10-01T10:00:00Z", "2.00", false)]),
    )
    .expect("writes the file");
    let m = orders()
        .manifest("full", ts("2026-10-27T06:00:00Z"))
        .rows(1)
        .build()
        .expect("a manifest");
    let delivery = store
        .deliver(&file, &orders(), &m, now(), None)
        .expect("delivers");
    assert_eq!(delivery.receipt.outcome(), Outcome::Accepted);
    let ledger = stored_ledger(&mut store);
    let documents = store.backend_mut().documents().expect("documents");
    assert_eq!(documents, [("orders".to_owned(), ledger.to_json())]);
    // rule: LOADER-11 — one row per region
    let view = store.backend_mut().regions_view().expect("regions");
    assert_eq!(view.len(), ledger.region_count());
    assert_eq!(
        store
            .backend_mut()
            .region_rows("orders")
            .expect("rows")
            .len(),
        ledger.region_count()
    );
    verified(&mut store);
}

/// A store of the earlier layout (a `dogana_ledgers` table of documents) is read as it is,
/// changing nothing, and converted when opened for writing: the same ledger, document and
/// regions, the identity beside the rows, and deliveries go on.
pub fn ledger_earlier_layout_read_and_converted<S: LedgerRowsStore>() {
    // rule: LOADER-10 — dogana_ledgers(table_name, document) in either layout
    let d = Folder::new("convert");
    let mut store = rows_store::<S::Backend>(&d.0);
    for day in [1, 3, 5] {
        accept_day(&mut store, &d.0, day);
    }
    let ledger = stored_ledger(&mut store);
    let regions = store.backend_mut().regions_view().expect("regions");
    let documents = store.backend_mut().documents().expect("documents");
    store
        .backend_mut()
        .to_earlier_layout(&documents)
        .expect("the earlier layout");
    drop(store);
    // read as it is, nothing changed
    let mut reader = reopened::<S::Backend>(&d.0, false);
    assert_eq!(reader.backend_mut().layout(), Ok(LedgerLayout::Earlier));
    // rule: LOADER-11 — the earlier view and this one give the same rows
    assert_eq!(reader.backend_mut().regions_view(), Ok(regions.clone()));
    assert_eq!(reader.backend_mut().documents(), Ok(documents.clone()));
    assert_eq!(stored_ledger(&mut reader), ledger);
    verified(&mut reader);
    assert_eq!(reader.tables().expect("tables"), ["orders"]);
    drop(reader);
    let mut reader = reopened::<S::Backend>(&d.0, false);
    assert_eq!(reader.backend_mut().layout(), Ok(LedgerLayout::Earlier));
    drop(reader);
    // converted when opened for writing, then delivered to
    let mut store = reopened::<S::Backend>(&d.0, true);
    assert_eq!(store.backend_mut().layout(), Ok(LedgerLayout::Rows));
    assert!(store.backend().keeps_ledger_rows());
    assert_eq!(stored_ledger(&mut store), ledger);
    assert_eq!(store.backend_mut().documents(), Ok(documents));
    assert_eq!(store.backend_mut().regions_view(), Ok(regions));
    assert_eq!(stored_identity(&mut store), Some(ledger.identity()));
    assert_eq!(
        store
            .backend_mut()
            .region_rows("orders")
            .expect("rows")
            .len(),
        ledger.region_count()
    );
    accept_day(&mut store, &d.0, 7);
    verified(&mut store);
    let ledger = stored_ledger(&mut store);
    assert_eq!(
        store.backend_mut().documents(),
        Ok(vec![("orders".to_owned(), ledger.to_json())])
    );
}

/// A document of the earlier layout that does not read back stops the conversion, naming
/// its table, and the store is left as it was.
pub fn ledger_unreadable_document_stops_the_conversion<S: LedgerRowsStore>() {
    // rule: RECOVERY-01 — a damaged ledger is reported, never silently replaced
    let d = Folder::new("unreadable");
    let mut store = rows_store::<S::Backend>(&d.0);
    accept_day(&mut store, &d.0, 1);
    let damaged = vec![("orders".to_owned(), "{\"kind\": \"Ledger\"}".to_owned())];
    store
        .backend_mut()
        .to_earlier_layout(&damaged)
        .expect("the earlier layout");
    drop(store);
    let e = S::Backend::open_store(&d.0, true)
        .map(drop)
        .expect_err("refused");
    assert!(
        matches!(&e, StoreError::Corrupt(m) if m.contains("\"orders\"") && m.contains("cannot be converted")),
        "{e}"
    );
    let mut reader = reopened::<S::Backend>(&d.0, false);
    assert_eq!(reader.backend_mut().layout(), Ok(LedgerLayout::Earlier));
    assert_eq!(reader.backend_mut().documents(), Ok(damaged));
}

/// An identity stored beside the region rows that does not match them is found by `verify`
/// (in a new handle: nothing kept answers for the identity), and a delivery does not build on
/// it: an error, nothing stored.
pub fn ledger_identity_not_matching_the_regions_is_found<S: LedgerRowsStore>() {
    // rule: RECV-12 — verify compares what is stored; a delivery does not build on it
    let d = Folder::new("identity");
    let mut store = rows_store::<S::Backend>(&d.0);
    for day in [1, 3] {
        accept_day(&mut store, &d.0, day);
    }
    let other = Ledger::new(orders()).identity();
    store
        .backend_mut()
        .damage_identity("orders", &other)
        .expect("damage");
    drop(store);
    let mut store = reopened::<S::Backend>(&d.0, true);
    let report = store.verify("orders").expect("verify");
    assert!(
        report.problems.iter().any(|p| p.contains(&other)),
        "{:?}",
        report.problems
    );
    let receipts = store.receipts("orders").expect("receipts").len();
    let e = deliver_window_of_day(&mut store, &d.0, 5, 7).expect_err("refused");
    assert!(
        matches!(&e, StoreError::Corrupt(m) if m.contains(&other)),
        "{e}"
    );
    assert_eq!(store.receipts("orders").expect("receipts").len(), receipts);
}

/// Writers opening a store of the earlier layout at once convert it once: each reads the
/// ledger it held, and the store holds one document per table after.
pub fn ledger_writers_at_once_convert_once<S: LedgerRowsStore>() {
    // rule: RECV-13 — one committed state: the conversion is one transaction under the lock
    let d = Folder::new("race");
    let mut store = rows_store::<S::Backend>(&d.0);
    for day in [1, 3] {
        accept_day(&mut store, &d.0, day);
    }
    let ledger = stored_ledger(&mut store);
    let documents = store.backend_mut().documents().expect("documents");
    store
        .backend_mut()
        .to_earlier_layout(&documents)
        .expect("the earlier layout");
    drop(store);
    let dir = d.0.as_path();
    let opened: Vec<Ledger> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| s.spawn(move || stored_ledger(&mut reopened::<S::Backend>(dir, true))))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a writer"))
            .collect()
    });
    assert!(opened.iter().all(|l| *l == ledger));
    let mut store = reopened::<S::Backend>(&d.0, true);
    assert_eq!(store.backend_mut().layout(), Ok(LedgerLayout::Rows));
    assert_eq!(store.backend_mut().documents(), Ok(documents));
    assert_eq!(
        store
            .backend_mut()
            .region_rows("orders")
            .expect("rows")
            .len(),
        ledger.region_count()
    );
    assert_eq!(stored_identity(&mut store), Some(ledger.identity()));
    verified(&mut store);
    accept_day(&mut store, &d.0, 5);
    verified(&mut store);
}

/// Stored regions rewritten together in one save each keep the text given for their own key:
/// a backend that writes several regions in one statement pairs every key with its region.
pub fn ledger_regions_rewritten_together_keep_their_own_text<S: LedgerRowsStore>() {
    // rule: LOADER-10 — the document readers see is the regions saved, each under its key
    let d = Folder::new("together");
    let mut store = rows_store::<S::Backend>(&d.0);
    for day in [1, 3, 5, 7] {
        accept_day(&mut store, &d.0, day);
    }
    let mut rows = stored_ledger(&mut store).region_rows_since(None);
    // every region rewritten at once with the next one's text: a store that wrote one text
    // everywhere, or paired a key with another's text, shows another document
    let mut texts: Vec<String> = rows.added.iter().map(|(_, r)| r.clone()).collect();
    assert!(texts.len() > 4, "{} regions", texts.len());
    texts.rotate_left(1);
    rows.changed = rows
        .added
        .drain(..)
        .map(|(key, _)| key)
        .zip(texts.iter().cloned())
        .collect();
    let b = store.backend_mut();
    b.begin(crate::Txn::Write, &["orders"]).expect("begins");
    b.save_ledger_rows("orders", &"0".repeat(64), &rows)
        .expect("saves");
    b.commit().expect("commits");
    let expected =
        dogana::LedgerRows::document(&rows.head, texts.iter().map(String::as_str), &rows.tail);
    assert_eq!(
        store.backend_mut().documents(),
        Ok(vec![("orders".to_owned(), expected)])
    );
}
