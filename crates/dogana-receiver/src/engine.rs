//! The engine: the receiver's side of the protocol, in its order, over any [`Backend`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use dogana::{
    Action, ActionKind, Check, Contract, FromWire, Gate, Group, Ledger, Manifest, Outcome, Receipt,
    Timestamp, Wire,
};
use dogana_rows::{sha256_file, Format, RowReport};

use crate::batch::Datum;
use crate::ledger_cache;
use crate::overhead::Lap;
use crate::port::{Backend, Column, KeysFrom, KeysOutside, ReceiptRow, Step, Txn};
use crate::stage::{self, target_columns, Staged};
use crate::StoreError;

static HANDLES: AtomicU64 = AtomicU64::new(1);

/// How to read one delivered file.
#[derive(Debug, Clone)]
pub struct DeliverOptions {
    pub(crate) format: Option<Format>,
    pub(crate) delimiter: u8,
    pub(crate) column_types: BTreeMap<String, String>,
    pub(crate) hash_in_thread: bool,
    pub(crate) adopt: bool,
}

impl Default for DeliverOptions {
    fn default() -> Self {
        DeliverOptions {
            format: None,
            delimiter: b',',
            column_types: BTreeMap::new(),
            hash_in_thread: true,
            adopt: false,
        }
    }
}

impl DeliverOptions {
    /// The format from the file's extension, comma-separated CSV, no column types.
    pub fn new() -> DeliverOptions {
        DeliverOptions::default()
    }

    /// The file's format, whatever its extension.
    pub fn format(mut self, format: Format) -> DeliverOptions {
        self.format = Some(format);
        self
    }

    /// The CSV delimiter.
    pub fn delimiter(mut self, delimiter: u8) -> DeliverOptions {
        self.delimiter = delimiter;
        self
    }

    /// The type of a column the contract does not bind, from the data contract: one of the six
    /// type names or `decimal(p,s)`. It serves the column hash (CHECK-07) and the published
    /// column's type; values of an `int`, `float`, `bool`, `date` or `datetime` column are
    /// converted, and one that does not parse fails the `values` check. Bound columns always
    /// take the contract's type.
    pub fn column_type(mut self, column: impl Into<String>, ty: impl Into<String>) -> Self {
        self.column_types.insert(column.into(), ty.into());
        self
    }

    /// Whether SHA-256 runs in a second thread while rows are parsed (default true).
    pub fn hash_in_thread(mut self, yes: bool) -> DeliverOptions {
        self.hash_in_thread = yes;
        self
    }

    /// Whether the table's first delivery may take over a table of that name that dogana did
    /// not create (default false: [`StoreError::ForeignTable`]). The delivery's plan then runs
    /// on it like on any published table: a full delivery replaces its rows.
    pub fn adopt(mut self, yes: bool) -> DeliverOptions {
        self.adopt = yes;
        self
    }

    pub(crate) fn rows_options(&self) -> dogana_rows::Options {
        dogana_rows::Options::new()
            .delimiter(self.delimiter)
            .hash_in_thread(self.hash_in_thread)
            .column_types(
                self.column_types
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone())),
            )
    }
}

/// One delivery to decide.
#[derive(Debug, Clone)]
pub(crate) struct Job {
    pub(crate) file: PathBuf,
    pub(crate) contract: Contract,
    pub(crate) manifest: Manifest,
    pub(crate) now: Timestamp,
    pub(crate) source: Option<String>,
    pub(crate) options: DeliverOptions,
}

impl Job {
    pub(crate) fn format(&self) -> Result<Format, StoreError> {
        stage::format_of(&self.file, self.options.format)
    }

    fn source(&self) -> Option<&str> {
        self.source.as_deref()
    }
}

/// What a delivery came to.
#[derive(Debug, Clone)]
pub struct Delivery {
    /// The receipt: accepted or rejected and stored, or the original acceptance answered again
    /// as `replayed` (nothing stored).
    pub receipt: Receipt,
    /// How many times the decision was made again because the published chain head moved
    /// between deciding and committing (RECV-10).
    pub redecided: u32,
    /// What reading the rows found, when they were read: not for a replay nor a delivery the
    /// preflight refused.
    pub report: Option<RowReport>,
    /// How long each phase took (zero for a phase the caller ran itself, as with
    /// [`Store::decide`] then [`Store::commit`]).
    pub timing: Timing,
}

/// How long a delivery's two phases took: the decision (staging and checking the rows, the
/// gate) and the commit (the write transaction, with any decision made again in it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timing {
    /// Phase one: [`Store::decide`] or [`Store::decide_group`].
    pub decide: std::time::Duration,
    /// Phase two: [`Store::commit`] or [`Store::commit_group`].
    pub commit: std::time::Duration,
}

impl Timing {
    /// The phases of a delivery that began at `started` and was decided at `decided`, now.
    fn since(started: std::time::Instant, decided: std::time::Instant) -> Timing {
        Timing {
            decide: decided - started,
            commit: decided.elapsed(),
        }
    }
}

impl Delivery {
    /// Whether the delivery was a replay of an accepted one (RECV-02).
    pub fn replayed(&self) -> bool {
        self.receipt.replayed()
    }

    /// Whether the rows are published (accepted now, or a replay of an acceptance).
    pub fn accepted(&self) -> bool {
        self.receipt.accepted()
    }
}

/// A decision not yet committed: the first phase of [`Store::deliver`]. The staged rows stay in
/// the backend's staging area until [`Store::commit`], which decides again if the chain head
/// moved meanwhile (RECV-10). One decision per handle is outstanding: a later
/// [`Store::decide`] replaces it.
#[derive(Debug)]
pub struct Decision {
    handle: u64,
    stage: u64,
    job: Job,
    verdict: Verdict,
    staged: Option<Staged>,
}

impl Decision {
    /// The receipt decided (a replay's is the original answered as `replayed`).
    pub fn receipt(&self) -> &Receipt {
        match &self.verdict {
            Verdict::Replay(r) => r,
            Verdict::Decided { receipt, .. } => receipt,
        }
    }

    /// Whether the delivery is a replay, which commits nothing.
    pub fn is_replay(&self) -> bool {
        matches!(self.verdict, Verdict::Replay(_))
    }
}

#[derive(Debug, Clone)]
enum Verdict {
    Replay(Receipt),
    Decided {
        receipt: Receipt,
        ledger: Ledger,
        table: TablePlan,
    },
}

/// What the published table needs before the plan runs.
#[derive(Debug, Clone, PartialEq)]
enum TablePlan {
    /// Nothing: it exists with fitting columns (or nothing is published).
    Keep,
    /// Create it with these columns.
    Create(Vec<Column>),
    /// Drop it and create it with these columns: a complete whole-table delivery of another
    /// row schema (RECOVERY-04).
    Recreate(Vec<Column>),
}

/// One stored receipt.
#[derive(Debug, Clone)]
pub struct StoredReceipt {
    /// Its place among the table's receipts, from 1.
    pub seq: i64,
    /// Its place among the table's acceptances, from 1, for an accepted receipt.
    pub accepted_order: Option<i64>,
    /// The receipt.
    pub receipt: Receipt,
}

/// What [`Store::verify`] found (RECV-12, RECOVERY-01).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyReport {
    /// The table.
    pub table: String,
    /// How many receipts are stored.
    pub receipts: usize,
    /// How many of them are acceptances.
    pub accepted: usize,
    /// The identity of the stored ledger, if one is stored.
    pub stored: Option<String>,
    /// The identity of the ledger folded from the accepted receipts, if the fold succeeded.
    pub rebuilt: Option<String>,
    /// Every difference found; empty when the store is consistent.
    pub problems: Vec<String>,
}

impl VerifyReport {
    /// Whether nothing was found wrong.
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// A published table read with its ledger from one committed state (RECV-13).
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// The ledger the rows were published under (None: nothing stored yet).
    pub ledger: Option<Ledger>,
    /// The published columns (empty when no table is published).
    pub columns: Vec<String>,
    /// Every row, in the table's order.
    pub rows: Vec<Vec<Datum>>,
}

/// A dogana receiver: the protocol's delivery order over one [`Backend`].
///
/// [`Store::deliver`] does, in this order (RECV-01 to RECV-10): replay lookup by manifest
/// identity, `Gate::preflight`, the rows staged while dogana-rows checks them (the published
/// table is not touched), the receiver's own checks, `Gate::evaluate`, then one write
/// transaction that re-reads the chain head, decides again if it moved, executes the plan,
/// and saves the ledger and the receipt.
#[derive(Debug)]
pub struct Store<B: Backend> {
    backend: B,
    handle: u64,
    stage: u64,
}

/// A backend that opens from a path or URL.
pub trait Open: Backend + Sized {
    /// How the backend writes (timeouts, durability, ...).
    type Options: Default + Clone;
    /// Opens (and for `write`, creates) the store at `path`. A reader (`write` false) never
    /// changes the file, and refuses one that is not a dogana store.
    fn open(path: &Path, options: &Self::Options, write: bool) -> Result<Self, StoreError>;
}

impl<B: Open> Store<B> {
    /// Opens (or creates) the store at `path` for writing, with the default options.
    pub fn open(path: impl AsRef<Path>) -> Result<Store<B>, StoreError> {
        Store::open_with(path, B::Options::default())
    }

    /// Opens (or creates) the store at `path` for writing.
    pub fn open_with(path: impl AsRef<Path>, options: B::Options) -> Result<Store<B>, StoreError> {
        Ok(Store::new(B::open(path.as_ref(), &options, true)?))
    }

    /// Opens an existing store for reading only: nothing in the file changes, and a file that
    /// is not a dogana store is refused ([`StoreError::NotAStore`]).
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Store<B>, StoreError> {
        Ok(Store::new(B::open(
            path.as_ref(),
            &B::Options::default(),
            false,
        )?))
    }
}

/// Refuses table names the store cannot publish under.
fn check_table_name(table: &str) -> Result<(), StoreError> {
    let lower = table.to_ascii_lowercase();
    if table.is_empty() {
        return Err(StoreError::TableName("the table name is empty".into()));
    }
    if table.contains('\0') {
        return Err(StoreError::TableName(format!(
            "{table:?} contains a NUL character, which no SQL identifier can"
        )));
    }
    if lower.starts_with("dogana_") || lower.starts_with("sqlite_") {
        return Err(StoreError::TableName(format!(
            "{table:?}: names beginning with dogana_ or sqlite_ belong to the store and to SQLite"
        )));
    }
    Ok(())
}

impl<B: Backend> Store<B> {
    /// The engine over a backend.
    pub fn new(backend: B) -> Store<B> {
        Store {
            backend,
            handle: HANDLES.fetch_add(1, Ordering::Relaxed),
            stage: 0,
        }
    }

    /// The backend, for reading what the engine does not model. Writing to the store's tables
    /// behind its back breaks what [`Store::verify`] checks.
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// The backend, mutably (tests damage a store through it).
    pub fn backend_mut(&mut self) -> &mut B {
        &mut self.backend
    }

    /// Runs `f` in one transaction: committed when it succeeds, rolled back otherwise.
    fn within<T>(
        &mut self,
        txn: Txn,
        table: &str,
        f: impl FnOnce(&mut B) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let tables: &[&str] = if table.is_empty() { &[] } else { &[table] };
        self.within_tables(txn, tables, f)
    }

    /// [`Store::within`] for a transaction writing several tables (sorted here).
    fn within_tables<T>(
        &mut self,
        txn: Txn,
        tables: &[&str],
        f: impl FnOnce(&mut B) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut sorted = tables.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        self.backend.begin(txn, &sorted)?;
        match f(&mut self.backend) {
            Ok(v) => {
                if let Err(e) = self.backend.commit() {
                    self.backend.rollback();
                    return Err(e);
                }
                Ok(v)
            }
            Err(e) => {
                self.backend.rollback();
                Err(e)
            }
        }
    }

    /// Delivers one file: decides it and commits the decision, as the protocol orders
    /// (RECV-01 to RECV-10). See [`Store::decide`] and [`Store::commit`].
    pub fn deliver(
        &mut self,
        file: impl AsRef<Path>,
        contract: &Contract,
        manifest: &Manifest,
        now: Timestamp,
        source: Option<&str>,
    ) -> Result<Delivery, StoreError> {
        self.deliver_with(
            file,
            contract,
            manifest,
            now,
            source,
            &DeliverOptions::default(),
        )
    }

    /// [`Store::deliver`] with options for reading the file.
    pub fn deliver_with(
        &mut self,
        file: impl AsRef<Path>,
        contract: &Contract,
        manifest: &Manifest,
        now: Timestamp,
        source: Option<&str>,
        options: &DeliverOptions,
    ) -> Result<Delivery, StoreError> {
        let started = std::time::Instant::now();
        let decision = self.decide_with(file, contract, manifest, now, source, options)?;
        let decided = std::time::Instant::now();
        let mut delivery = self.commit(decision)?;
        delivery.timing = Timing::since(started, decided);
        Ok(delivery)
    }

    /// Phase one of a delivery, in the protocol's order: (1) an accepted receipt of the same
    /// manifest makes a replay, answered once a declared content_hash matches the bytes, and a
    /// repeated manifest over other bytes is refused (RECV-01 to RECV-04); (2) the ledger and
    /// `Gate::preflight`, whose failure is recorded with `Gate::reject` and reads no row
    /// (RECV-05); (3) the rows staged while dogana-rows checks them, then the receiver's own
    /// checks, then `Gate::evaluate` (RECV-06). Nothing is written to the store; the ledger
    /// and the published rows are read in one read transaction.
    pub fn decide(
        &mut self,
        file: impl AsRef<Path>,
        contract: &Contract,
        manifest: &Manifest,
        now: Timestamp,
        source: Option<&str>,
    ) -> Result<Decision, StoreError> {
        self.decide_with(
            file,
            contract,
            manifest,
            now,
            source,
            &DeliverOptions::default(),
        )
    }

    /// [`Store::decide`] with options for reading the file.
    pub fn decide_with(
        &mut self,
        file: impl AsRef<Path>,
        contract: &Contract,
        manifest: &Manifest,
        now: Timestamp,
        source: Option<&str>,
        options: &DeliverOptions,
    ) -> Result<Decision, StoreError> {
        check_table_name(contract.table())?;
        let job = Job {
            file: file.as_ref().to_path_buf(),
            contract: contract.clone(),
            manifest: manifest.clone(),
            now,
            source: source.map(str::to_owned),
            options: options.clone(),
        };
        job.format()?;
        self.stage += 1;
        let mut staged = None;
        let verdict = self.within(Txn::Read, contract.table(), |b| {
            decide_in(b, &job, &mut staged)
        })?;
        Ok(Decision {
            handle: self.handle,
            stage: self.stage,
            job,
            verdict,
            staged,
        })
    }

    /// Phase two: in one write transaction, re-reads the stored chain head; if it is no
    /// longer the decision's `base_publication_id`, the decision is stale and is made again
    /// from the replay lookup on, under the lock, never rebased (RECV-10). Then, for an
    /// acceptance, executes the plan from the staged rows on the published table and saves
    /// `ledger.follow(receipt)` and the receipt (RECV-07, RECV-09); for a rejection, saves the
    /// receipt alone (RECV-08); a replay commits nothing (RECV-02). Every receipt is kept, the
    /// accepted ones numbered in publication order (RECV-11).
    pub fn commit(&mut self, decision: Decision) -> Result<Delivery, StoreError> {
        if decision.handle != self.handle || decision.stage != self.stage {
            return Err(StoreError::ForeignDecision);
        }
        let Decision {
            job,
            verdict,
            mut staged,
            ..
        } = decision;
        let report = |staged: &Option<Staged>| staged.as_ref().map(|s| s.report.clone());
        if let Verdict::Replay(receipt) = verdict {
            self.backend.stage_clear(job.contract.table())?;
            return Ok(Delivery {
                receipt,
                redecided: 0,
                report: report(&staged),
                timing: Timing::default(),
            });
        }
        let table = job.contract.table().to_owned();
        let mut redecided = 0;
        let mut attempts = 0;
        let racing = std::time::Instant::now();
        let outcome = loop {
            attempts += 1;
            let verdict = verdict.clone();
            let tried = self.within(Txn::Write, &table, |b| {
                // the stored ledger under the lock: the head to compare, and what the ledger saved
                // below changes
                let stored = stored_ledger(b, &table)?;
                let head = publication_id(stored.as_ref());
                let base = match &verdict {
                    Verdict::Decided { receipt, .. } => {
                        receipt.base_publication_id().map(str::to_owned)
                    }
                    Verdict::Replay(_) => unreachable!("answered above"),
                };
                let verdict = if head != base {
                    // rule: RECV-10 — stale: decided again under the lock, from step 1
                    redecided += 1;
                    decide_in(b, &job, &mut staged)?
                } else {
                    verdict
                };
                match verdict {
                    Verdict::Replay(receipt) => Ok(receipt),
                    Verdict::Decided {
                        receipt,
                        ledger,
                        table: plan,
                    } => {
                        if receipt.outcome() == Outcome::Accepted {
                            let s = staged.as_ref().ok_or_else(|| {
                                StoreError::Corrupt("an acceptance without rows".into())
                            })?;
                            let next = ledger.follow(&receipt)?;
                            publish(b, &job, s, &receipt, &plan)?;
                            save_ledger(b, &table, &next, stored.as_ref())?;
                        }
                        b.save_receipt(&table, &receipt)?;
                        Ok(receipt)
                    }
                }
            });
            match tried {
                // rule: RECV-10 — a store without a write lock lost its commit race: the write
                // transaction again, whose head has moved, so the delivery is decided again
                Err(StoreError::Moved { .. }) if racing.elapsed() < MOVED_WAIT => {
                    std::thread::sleep(moved_backoff(attempts))
                }
                other => break other,
            }
        };
        let cleared = self.backend.stage_clear(&table);
        let receipt = outcome?;
        cleared?;
        Ok(Delivery {
            receipt,
            redecided,
            report: report(&staged),
            timing: Timing::default(),
        })
    }

    /// The ledger's part of a delivery of `manifest`, for the benchmark of issue 16
    /// ([`crate::overhead`]): in one write transaction, what a delivery does for its ledger —
    /// the replay lookup, the stored ledger, `Gate::evaluate` (the rows' checks taken as
    /// passed), `follow`, and the save of the ledger and the receipt — then rolled back, so
    /// the store is as it was. Returns the ledger the delivery would have left.
    /// `lap` is told as each [`Lap`] ends, for the benchmark's breakdown.
    pub(crate) fn ledger_part(
        &mut self,
        contract: &Contract,
        manifest: &Manifest,
        now: Timestamp,
        lap: &mut dyn FnMut(Lap),
    ) -> Result<Ledger, StoreError> {
        let b = &mut self.backend;
        b.begin(Txn::Write, &[contract.table()])?;
        lap(Lap::Begin);
        let left = ledger_part_in(b, contract, manifest, now, lap);
        b.rollback();
        lap(Lap::End);
        left
    }

    /// Every receipt of `table`, in the order they were stored.
    pub fn receipts(&mut self, table: &str) -> Result<Vec<StoredReceipt>, StoreError> {
        let rows = self.within(Txn::Read, table, |b| b.receipts(table))?;
        rows.into_iter()
            .map(|r| {
                Ok(StoredReceipt {
                    seq: r.seq,
                    accepted_order: r.accepted_order,
                    receipt: Receipt::from_json(&r.document)?,
                })
            })
            .collect()
    }

    /// The stored ledger of `table` (None before its first acceptance).
    pub fn ledger(&mut self, table: &str) -> Result<Option<Ledger>, StoreError> {
        self.within(Txn::Read, table, |b| reader_ledger(b, table))
    }

    /// The tables with a stored ledger or any receipt, sorted.
    pub fn tables(&mut self) -> Result<Vec<String>, StoreError> {
        self.within(Txn::Read, "", |b| b.tables())
    }

    /// Rebuilds the ledger of `table` from its stored accepted receipts with
    /// `Ledger::from_receipts` and compares it with the stored one (RECV-12, RECOVERY-01); also
    /// checks the receipts' bookkeeping (identities, outcomes, sequence, publication order).
    /// Rows cannot be checked: a rebuilt ledger recovers no rows (RECOVERY-02).
    pub fn verify(&mut self, table: &str) -> Result<VerifyReport, StoreError> {
        self.within(Txn::Read, table, |b| verify(b, table))
    }

    /// Every published row of `table` with its ledger, read in one transaction (RECV-13).
    pub fn read_consistent_rows(&mut self, table: &str) -> Result<Snapshot, StoreError> {
        self.within(Txn::Read, table, |b| {
            let ledger = reader_ledger(b, table)?;
            let columns = b.published_columns(table)?.unwrap_or_default();
            let rows = if columns.is_empty() {
                Vec::new()
            } else {
                b.read_rows(table, &columns)?
            };
            Ok(Snapshot {
                ledger,
                columns,
                rows,
            })
        })
    }
}

/// The stored ledger of `table`, for a decision: for a backend that keeps the identity
/// beside it, the kept ledger of that identity when there is one (no region read); else the
/// document, parsed or answered from the kept ones, whose identity must then be the stored
/// one (a delivery never builds on regions altered behind the engine's back).
fn stored_ledger<B: Backend>(b: &mut B, table: &str) -> Result<Option<Ledger>, StoreError> {
    read_ledger(b, table, true)
}

/// [`stored_ledger`] for a reader (`claims`, rows with their ledger): the document's
/// identity is not computed (a hash of the whole ledger, and its regions' bytes kept), so a
/// large ledger is read in about the memory of its document and its value.
fn reader_ledger<B: Backend>(b: &mut B, table: &str) -> Result<Option<Ledger>, StoreError> {
    read_ledger(b, table, false)
}

fn read_ledger<B: Backend>(
    b: &mut B,
    table: &str,
    check: bool,
) -> Result<Option<Ledger>, StoreError> {
    let identity = b.ledger_identity(table)?;
    if let Some(kept) = identity.as_deref().and_then(ledger_cache::by_identity) {
        return Ok(Some(kept));
    }
    let Some(doc) = b.ledger(table)? else {
        return match identity {
            None => Ok(None),
            Some(i) => Err(StoreError::Corrupt(format!(
                "table {table:?} has a stored ledger identity {i} and no ledger"
            ))),
        };
    };
    let ledger = ledger_cache::parse(doc)?;
    if let (Some(i), true) = (identity, check) {
        if ledger.identity() != i {
            return Err(StoreError::Corrupt(format!(
                "the stored ledger of {table:?} has identity {}, not the {i} stored beside it; `verify` says more",
                ledger.identity()
            )));
        }
        ledger_cache::remember_identity(&i, &ledger);
    }
    Ok(Some(ledger))
}

/// Saves `ledger` as the table's stored ledger, and keeps it for the next read of it: only
/// the regions that differ from `stored` (the stored ledger, read in this write
/// transaction), when the backend keeps ledgers region by region, else the whole document.
fn save_ledger<B: Backend>(
    b: &mut B,
    table: &str,
    ledger: &Ledger,
    stored: Option<&Ledger>,
) -> Result<(), StoreError> {
    if b.keeps_ledger_rows() {
        let rows = ledger.region_rows_since(stored);
        let identity = ledger.identity();
        b.save_ledger_rows(table, &identity, &rows)?;
        ledger_cache::remember_identity(&identity, ledger);
        return Ok(());
    }
    let document = ledger.to_json();
    b.save_ledger(table, &document)?;
    ledger_cache::remember(document, ledger);
    Ok(())
}

/// [`Store::ledger_part`] inside the transaction it holds.
fn ledger_part_in<B: Backend>(
    b: &mut B,
    contract: &Contract,
    manifest: &Manifest,
    now: Timestamp,
    lap: &mut dyn FnMut(Lap),
) -> Result<Ledger, StoreError> {
    let table = contract.table();
    if accepted_receipt(b, table, &manifest.identity())?.is_some() {
        return Err(StoreError::Corrupt(
            "the manifest was delivered already".into(),
        ));
    }
    lap(Lap::Replay);
    let stored = stored_ledger(b, table)?;
    lap(Lap::Stored);
    let ledger = load_ledger(b, contract, false)?;
    lap(Lap::Load);
    let receipt = Gate::evaluate(&ledger, manifest, &[], now, None, &[]);
    lap(Lap::Evaluate);
    if !receipt.accepted() {
        return Err(StoreError::Corrupt(format!(
            "the ledger's part was refused: {:?}",
            receipt.failures().collect::<Vec<_>>()
        )));
    }
    let next = ledger.follow(&receipt)?;
    lap(Lap::Follow);
    save_ledger(b, table, &next, stored.as_ref())?;
    lap(Lap::SaveLedger);
    b.save_receipt(table, &receipt)?;
    lap(Lap::SaveReceipt);
    Ok(next)
}

/// The chain head of a stored ledger (None: no ledger, or none accepted yet).
fn publication_id(stored: Option<&Ledger>) -> Option<String> {
    stored.and_then(|l| l.publication_id().map(str::to_owned))
}

/// The ledger a decision is made against: the stored one, moved to the given contract when
/// it evolved (EVOL), or a new one.
fn load_ledger<B: Backend>(
    b: &mut B,
    contract: &Contract,
    adopt: bool,
) -> Result<Ledger, StoreError> {
    let table = contract.table();
    let Some(ledger) = stored_ledger(b, table)? else {
        // first acceptance: no receipt may be accepted yet, and no stored table may differ
        // from this one only in letter case (SQL identifiers ignore it)
        let accepted = b
            .receipts(table)?
            .iter()
            .filter(|r| r.outcome == "accepted")
            .count();
        if accepted > 0 {
            return Err(StoreError::Corrupt(format!(
                "table {table:?} has {accepted} accepted receipts and no stored ledger; rebuild it with Ledger::from_receipts (RECOVERY-01)"
            )));
        }
        // a table of dogana's own that differs only in letter case is named first: the
        // database sees it as this table, yet adopting it is no answer
        let lower = table.to_ascii_lowercase();
        if let Some(other) = b
            .tables()?
            .into_iter()
            .find(|t| t != table && t.to_ascii_lowercase() == lower)
        {
            return Err(StoreError::TableName(format!(
                "{table:?} and dogana's table {other:?} of this store differ only in letter case: a store holds one table per case-folded name, since SQL identifiers ignore letter case (--adopt cannot change that); deliver under the name {other:?} (the contract's table), or into another store"
            )));
        }
        // rule: RECV-07 — publish only over what dogana published
        if !adopt && b.published_columns(table)?.is_some() {
            return Err(StoreError::ForeignTable(table.to_owned()));
        }
        return Ok(Ledger::new(contract.clone()));
    };
    if ledger.contract() == contract {
        return Ok(ledger);
    }
    ledger
        .with_contract(contract.clone())
        .map_err(StoreError::Contract)
}

fn accepted_receipt<B: Backend>(
    b: &mut B,
    table: &str,
    manifest_identity: &str,
) -> Result<Option<Receipt>, StoreError> {
    match b.accepted_receipt(table, manifest_identity)? {
        None => Ok(None),
        Some(d) => Ok(Some(Receipt::from_json(&d)?)),
    }
}

/// Steps 1 to 3 of the receiver, inside a transaction the caller holds (read or write).
fn decide_in<B: Backend>(
    b: &mut B,
    job: &Job,
    staged: &mut Option<Staged>,
) -> Result<Verdict, StoreError> {
    let table = job.contract.table();
    let manifest = &job.manifest;
    // step 1 — rule: RECV-01, LOADER-01
    if let Some(original) = accepted_receipt(b, table, &manifest.identity())? {
        let replay = || -> Result<Verdict, StoreError> {
            // rule: RECV-02 — the original receipt, answered as replayed; no row is read
            Ok(Verdict::Replay(original.as_replay()?))
        };
        let Some(declared) = manifest.content_hash() else {
            return replay();
        };
        let actual = match staged {
            Some(s) => s.report.content_sha256.clone(),
            None => sha256_file(&job.file)?,
        };
        if actual == declared {
            return replay();
        }
        // rule: RECV-03 — a repeated manifest over other bytes is refused
        let ledger = load_ledger(b, &job.contract, job.options.adopt)?;
        let check = Check::fail(
            "content_hash",
            format!(
                "the bytes hash to {actual}, not to the declared {declared}; this manifest was accepted before (receipt {}), and a repeated manifest over other bytes is refused (RECV-03)",
                original.identity()
            ),
        );
        let receipt = Gate::reject(&ledger, manifest, &[check], job.now, job.source());
        return Ok(Verdict::Decided {
            receipt,
            ledger,
            table: TablePlan::Keep,
        });
    }
    // step 2 — rule: RECV-05, LOADER-02
    let ledger = load_ledger(b, &job.contract, job.options.adopt)?;
    let core = Gate::preflight(&ledger, manifest, job.now);
    if core.iter().any(|c| !c.passed()) {
        let receipt = Gate::reject(&ledger, manifest, &[], job.now, job.source());
        return Ok(Verdict::Decided {
            receipt,
            ledger,
            table: TablePlan::Keep,
        });
    }
    // step 3 — rule: RECV-06, LOADER-03
    let (outcomes, plan) = receiver_checks(b, job, staged)?;
    // rule: LOADER-04
    let receipt = Gate::evaluate(&ledger, manifest, &outcomes, job.now, job.source(), &[]);
    Ok(Verdict::Decided {
        receipt,
        ledger,
        table: plan,
    })
}

/// Step 3's reading: the rows staged (once) while dogana-rows checks them, then the receiver's
/// own checks, in their order; and what the published table needs before the plan runs.
fn receiver_checks<B: Backend>(
    b: &mut B,
    job: &Job,
    staged: &mut Option<Staged>,
) -> Result<(Vec<Check>, TablePlan), StoreError> {
    if staged.is_none() {
        *staged = Some(stage::stage(b, job)?);
    }
    let s = staged.as_ref().expect("staged above");
    let published = b.published_columns(job.contract.table())?;
    let (columns, plan) = columns_check(job, s, published.as_deref());
    let elsewhere = keys_elsewhere(b, job, s, published.is_some())?;
    let mut outcomes = s.report.checks.clone();
    outcomes.push(s.values.clone());
    outcomes.push(columns);
    outcomes.push(elsewhere);
    Ok((outcomes, plan))
}

/// The receiver's `columns` check: the file's columns fit the published table, or the
/// delivery replaces the table whole (RECOVERY-04).
fn columns_check(job: &Job, staged: &Staged, published: Option<&[String]>) -> (Check, TablePlan) {
    let loaded = &staged.layout.loaded;
    let fail = |d: String| (Check::fail("columns", d), TablePlan::Keep);
    let mut folded: BTreeMap<String, &str> = BTreeMap::new();
    for c in loaded {
        if c.is_empty() {
            // a trailing delimiter in a header names an empty column: DuckDB and Postgres
            // have no empty identifier, so no backend publishes one
            return fail(
                "the file has a column with an empty name (a trailing delimiter in the header?), which no SQL identifier can be".into(),
            );
        }
        if c.contains('\0') {
            return fail(format!(
                "column {c:?} contains a NUL character, which no SQL identifier can"
            ));
        }
        if let Some(prev) = folded.insert(c.to_ascii_lowercase(), c) {
            if prev != c {
                return fail(format!(
                    "columns {prev:?} and {c:?} differ only in letter case, which SQL identifiers ignore"
                ));
            }
        }
    }
    let typed: Vec<Column> = target_columns(job, loaded);
    let wanted: Vec<String> = typed.iter().map(|c| c.name.clone()).collect();
    let names = |v: &[String]| {
        v.iter()
            .map(|c| format!("{c:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(published) = published else {
        return (
            Check::pass(
                "columns",
                format!("the table is created with columns {}", names(&wanted)),
            ),
            TablePlan::Create(typed),
        );
    };
    let have: BTreeSet<&str> = published.iter().map(String::as_str).collect();
    let want: BTreeSet<&str> = wanted.iter().map(String::as_str).collect();
    if stage::complete_table(job) {
        return if have == want {
            (
                Check::pass("columns", "the file's columns are the published table's"),
                TablePlan::Keep,
            )
        } else {
            (
                Check::pass(
                    "columns",
                    format!(
                        "a complete whole-table delivery publishes columns {} in place of {} (RECOVERY-04)",
                        names(&wanted),
                        names(published)
                    ),
                ),
                TablePlan::Recreate(typed),
            )
        };
    }
    let extra: Vec<String> = loaded
        .iter()
        .filter(|c| !have.contains(c.as_str()))
        .cloned()
        .collect();
    if !extra.is_empty() {
        return fail(format!(
            "the published table has no column {}; a changed row schema needs a complete whole-table delivery (RECOVERY-04)",
            names(&extra)
        ));
    }
    // NDJSON names only the keys its rows carry, and a missing key is null; CSV and Parquet
    // name every column
    let lacking: Vec<String> = published
        .iter()
        .filter(|c| !loaded.contains(c))
        .cloned()
        .collect();
    let ndjson = matches!(job.format(), Ok(Format::Ndjson));
    if !lacking.is_empty() && !ndjson && staged.report.records > 0 {
        return fail(format!(
            "the file lacks the published column {}; a changed row schema needs a complete whole-table delivery (RECOVERY-04)",
            names(&lacking)
        ));
    }
    (
        Check::pass(
            "columns",
            "the file's columns are among the published table's",
        ),
        TablePlan::Keep,
    )
}

/// The receiver's CHECK-16: a window delivery carries no key (live or tombstoned) already
/// published outside its window, in any region, known or unknown (PLAN-12 decided: every
/// published row counts). Named `keys_elsewhere`.
fn keys_elsewhere<B: Backend>(
    b: &mut B,
    job: &Job,
    staged: &Staged,
    table_exists: bool,
) -> Result<Check, StoreError> {
    let name = "keys_elsewhere";
    let contract = &job.contract;
    let (Some(window), Some(wcol)) = (job.manifest.window(), contract.window_column()) else {
        return Ok(Check::pass(
            name,
            "not applicable: a whole-table delivery may move keys between regions",
        ));
    };
    if contract.is_keyless() {
        return Ok(Check::pass(
            name,
            "not applicable: a keyless table's rows have no identity",
        ));
    }
    if !table_exists {
        return Ok(Check::pass(name, "no row is published yet"));
    }
    let key = contract.key();
    let staged_key: Option<Vec<usize>> = key.iter().map(|k| staged.layout.column_of(k)).collect();
    let Some(staged_key) = staged_key else {
        return Ok(Check::pass(
            name,
            "not applicable: the file has no key column (see the keys check)",
        ));
    };
    let (count, first) = b.keys_outside(
        contract.table(),
        &KeysOutside {
            key,
            staged_key: &staged_key,
            column: wcol,
            window,
        },
    )?;
    let Some(first) = first.filter(|_| count > 0) else {
        return Ok(Check::pass(
            name,
            format!("no key of the read is published outside {window}"),
        ));
    };
    let keys: Vec<String> = key
        .iter()
        .zip(&first)
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let more = if count > 1 {
        format!(" (and {} more keys)", count - 1)
    } else {
        String::new()
    };
    let at = first.get(key.len()).cloned().unwrap_or(Datum::Null);
    Ok(Check::fail(
        name,
        format!(
            "key {} is already published with {wcol} {at}, outside {window}: a window delivery cannot move a key out of the region that keeps its claim (CHECK-16){more}",
            keys.join(", "),
        ),
    ))
}

/// Executes the plan from the staged rows (PLAN-03 to PLAN-08, LOADER-07). The deleted column
/// was never staged, so it is never published (PLAN-14).
fn publish<B: Backend>(
    b: &mut B,
    job: &Job,
    staged: &Staged,
    receipt: &Receipt,
    plan: &TablePlan,
) -> Result<(), StoreError> {
    let contract = &job.contract;
    let table = contract.table();
    let layout = &staged.layout;
    let actions: &[Action] = receipt
        .transition()
        .map(|tr| tr.plan().actions())
        .unwrap_or_default();
    if staged.whole && matches!(actions, [a] if a.kind() == ActionKind::ReplaceAll) {
        // rule: PLAN-03 — the rows staged whole become the published table, in this commit
        b.replace_with_staged(table, plan == &TablePlan::Keep)?;
        return b.execute(table, Step::Indexes(contract));
    }
    match plan {
        TablePlan::Keep => {}
        TablePlan::Create(cols) => b.execute(table, Step::Create(cols))?,
        TablePlan::Recreate(cols) => {
            b.execute(table, Step::Drop)?;
            b.execute(table, Step::Create(cols))?;
        }
    }
    if actions.iter().any(|a| a.kind() == ActionKind::ReplaceAll) {
        b.execute(table, Step::BeginBulk(contract))?;
    }
    let staged_key: Option<Vec<usize>> =
        contract.key().iter().map(|k| layout.column_of(k)).collect();
    let delete_keys = |b: &mut B, action: &Action, from: KeysFrom<'_>| {
        if action.key().is_empty() {
            return Ok(()); // rule: PLAN-08 — keyless: no key matching
        }
        b.execute(table, Step::DeleteKeys(action.key(), from))
    };
    for action in actions {
        match action.kind() {
            // rule: PLAN-03
            ActionKind::ReplaceAll => {
                if plan == &TablePlan::Keep {
                    b.execute(table, Step::DeleteAll)?;
                }
                b.execute(table, Step::InsertStaged(layout))?;
            }
            // rule: PLAN-04, PLAN-08
            ActionKind::ReplaceWindow => {
                let window = action.window().ok_or_else(|| {
                    StoreError::Corrupt("a replace_window action without a window".into())
                })?;
                let wcol = contract.window_column().ok_or_else(|| {
                    StoreError::Corrupt("a replace_window action without a window column".into())
                })?;
                b.execute(table, Step::DeleteWindow(wcol, window))?;
                if let Some(at) = &staged_key {
                    delete_keys(b, action, KeysFrom::Rows(at))?;
                }
                b.execute(table, Step::InsertStaged(layout))?;
            }
            // rule: PLAN-05
            ActionKind::Upsert => {
                if let Some(at) = &staged_key {
                    delete_keys(b, action, KeysFrom::Rows(at))?;
                }
                b.execute(table, Step::InsertStaged(layout))?;
            }
            // rule: PLAN-06
            ActionKind::Tombstone => delete_keys(b, action, KeysFrom::Tombstones)?,
            // rule: PLAN-07
            ActionKind::Append => b.execute(table, Step::InsertStaged(layout))?,
        }
    }
    b.execute(table, Step::Indexes(contract))
}

fn verify<B: Backend>(b: &mut B, table: &str) -> Result<VerifyReport, StoreError> {
    let mut problems = Vec::new();
    let rows: Vec<ReceiptRow> = b.receipts(table)?;
    let mut accepted: Vec<Receipt> = Vec::new();
    let mut next_order = 1;
    for (i, row) in rows.iter().enumerate() {
        // rule: RECV-11 — every receipt is kept: a gap in the sequence is a lost receipt
        let expected = i as i64 + 1;
        if row.seq != expected {
            problems.push(format!(
                "receipt {} is stored where receipt {expected} follows: {} receipts are missing from the sequence (RECV-11)",
                row.seq,
                row.seq - expected
            ));
        }
        let receipt = match Receipt::from_json(&row.document) {
            Ok(r) => r,
            Err(e) => {
                problems.push(format!("receipt {} does not read back: {e}", row.seq));
                continue;
            }
        };
        if receipt.identity() != row.identity {
            problems.push(format!(
                "receipt {}: its identity column differs from its document",
                row.seq
            ));
        }
        if receipt.manifest().identity() != row.manifest_identity {
            problems.push(format!(
                "receipt {}: its manifest_identity column differs from its document",
                row.seq
            ));
        }
        if receipt.outcome().name() != row.outcome {
            problems.push(format!(
                "receipt {}: its outcome column differs from its document",
                row.seq
            ));
        }
        if receipt.table() != table {
            problems.push(format!(
                "receipt {} is filed under {table:?} but is of table {:?}",
                row.seq,
                receipt.table()
            ));
        }
        if receipt.outcome() == Outcome::Accepted {
            if row.accepted_order != Some(next_order) {
                problems.push(format!(
                    "receipt {}: accepted_order {:?} where {next_order} follows (RECV-11)",
                    row.seq, row.accepted_order
                ));
            }
            next_order += 1;
            accepted.push(receipt);
        } else if row.accepted_order.is_some() {
            problems.push(format!(
                "receipt {}: a rejection with an accepted_order",
                row.seq
            ));
        }
    }
    let stored = match b.ledger(table)? {
        None => None,
        Some(doc) => match Ledger::from_json(&doc) {
            Ok(l) => Some(l),
            Err(e) => {
                problems.push(format!("the stored ledger does not read back: {e}"));
                None
            }
        },
    };
    let contract = stored
        .as_ref()
        .map(|l| l.contract().clone())
        .or_else(|| accepted.last().map(|r| r.contract().clone()));
    let rebuilt = match &contract {
        None => None,
        Some(c) => match Ledger::from_receipts(c.clone(), &accepted) {
            Ok(l) => Some(l),
            Err(e) => {
                problems.push(format!(
                    "the accepted receipts do not fold into a ledger (RECV-20): {e}"
                ));
                None
            }
        },
    };
    match (&stored, &rebuilt) {
        (None, Some(_)) if !accepted.is_empty() => problems.push(format!(
            "{} accepted receipts and no stored ledger",
            accepted.len()
        )),
        (Some(s), Some(r)) if s != r || s.to_json() != r.to_json() => problems.push(format!(
            "the stored ledger {} differs from the fold of the accepted receipts {} (RECV-12)",
            s.identity(),
            r.identity()
        )),
        _ => {}
    }
    if let (Some(s), Some(i)) = (&stored, b.ledger_identity(table)?) {
        if s.identity() != i {
            problems.push(format!(
                "the stored ledger has identity {}, not the {i} stored beside it",
                s.identity()
            ));
        }
    }
    if !accepted.is_empty() && b.published_columns(table)?.is_none() {
        problems.push(format!(
            "{} accepted receipts and no published table {table:?}",
            accepted.len()
        ));
    }
    Ok(VerifyReport {
        table: table.to_owned(),
        receipts: rows.len(),
        accepted: accepted.len(),
        stored: stored.as_ref().map(Wire::identity),
        rebuilt: rebuilt.as_ref().map(Wire::identity),
        problems,
    })
}

/// Any [`Store`], whatever its backend, as one object: what a command line or a binding holds
/// when the backend is chosen at run time. Every `Store<B>` is one.
pub trait AnyStore {
    /// [`Store::deliver_with`].
    fn deliver_with(
        &mut self,
        file: &Path,
        contract: &Contract,
        manifest: &Manifest,
        now: Timestamp,
        source: Option<&str>,
        options: &DeliverOptions,
    ) -> Result<Delivery, StoreError>;
    /// [`Store::receipts`].
    fn receipts(&mut self, table: &str) -> Result<Vec<StoredReceipt>, StoreError>;
    /// [`Store::ledger`].
    fn ledger(&mut self, table: &str) -> Result<Option<Ledger>, StoreError>;
    /// [`Store::tables`].
    fn tables(&mut self) -> Result<Vec<String>, StoreError>;
    /// [`Store::verify`].
    fn verify(&mut self, table: &str) -> Result<VerifyReport, StoreError>;
    /// [`Store::read_consistent_rows`].
    fn read_consistent_rows(&mut self, table: &str) -> Result<Snapshot, StoreError>;
    /// [`Store::deliver_group`].
    fn deliver_group(
        &mut self,
        group: &Group,
        parts: &[Part],
        now: Timestamp,
        source: Option<&str>,
    ) -> Result<GroupDelivery, StoreError>;
}

impl<B: Backend> AnyStore for Store<B> {
    fn deliver_with(
        &mut self,
        file: &Path,
        contract: &Contract,
        manifest: &Manifest,
        now: Timestamp,
        source: Option<&str>,
        options: &DeliverOptions,
    ) -> Result<Delivery, StoreError> {
        Store::deliver_with(self, file, contract, manifest, now, source, options)
    }

    fn receipts(&mut self, table: &str) -> Result<Vec<StoredReceipt>, StoreError> {
        Store::receipts(self, table)
    }

    fn ledger(&mut self, table: &str) -> Result<Option<Ledger>, StoreError> {
        Store::ledger(self, table)
    }

    fn tables(&mut self) -> Result<Vec<String>, StoreError> {
        Store::tables(self)
    }

    fn verify(&mut self, table: &str) -> Result<VerifyReport, StoreError> {
        Store::verify(self, table)
    }

    fn read_consistent_rows(&mut self, table: &str) -> Result<Snapshot, StoreError> {
        Store::read_consistent_rows(self, table)
    }

    fn deliver_group(
        &mut self,
        group: &Group,
        parts: &[Part],
        now: Timestamp,
        source: Option<&str>,
    ) -> Result<GroupDelivery, StoreError> {
        Store::deliver_group(self, group, parts, now, source)
    }
}

/// One table's delivery within a group: its file, manifest and how to read it.
#[derive(Debug, Clone)]
pub struct Part {
    /// The delivered file.
    pub file: PathBuf,
    /// Its manifest (its table names the part's table).
    pub manifest: Manifest,
    /// How to read the file.
    pub options: DeliverOptions,
}

/// What a group delivery came to: one receipt per table, in the group's order.
#[derive(Debug, Clone)]
pub struct GroupDelivery {
    /// The receipts, in the group's order: all acceptances, all rejections, or all replays.
    pub receipts: Vec<Receipt>,
    /// How many times the group was decided again because a table's head moved (RECV-10).
    pub redecided: u32,
    /// What reading each table's rows found, when they were read.
    pub reports: Vec<Option<RowReport>>,
    /// How long each phase took (zero when the caller ran them itself).
    pub timing: Timing,
}

impl GroupDelivery {
    /// Whether the group's rows are published (accepted now, or a replay of an acceptance).
    pub fn accepted(&self) -> bool {
        self.receipts.iter().all(Receipt::accepted)
    }

    /// Whether the group was a replay of one accepted together (GROUP-23).
    pub fn replayed(&self) -> bool {
        self.receipts.iter().all(Receipt::replayed)
    }
}

#[derive(Debug, Clone)]
enum GroupVerdict {
    Replay(Vec<Receipt>),
    Decided {
        receipts: Vec<Receipt>,
        ledgers: Vec<Ledger>,
        plans: Vec<TablePlan>,
    },
}

/// A group's decision not yet committed: the first phase of [`Store::deliver_group`]. Like
/// [`Decision`], it belongs to the handle that made it and is replaced by its next decision.
#[derive(Debug)]
pub struct GroupDecision {
    handle: u64,
    stage: u64,
    group: Group,
    jobs: Vec<Job>,
    verdict: GroupVerdict,
    staged: Vec<Option<Staged>>,
}

impl GroupDecision {
    /// The receipts decided, in the group's order (a replay's are the originals answered as
    /// `replayed`).
    pub fn receipts(&self) -> &[Receipt] {
        match &self.verdict {
            GroupVerdict::Replay(r) => r,
            GroupVerdict::Decided { receipts, .. } => receipts,
        }
    }
}

/// The lowercase, sorted table names of a group: its key in the store.
fn group_key(group: &Group) -> Vec<String> {
    let mut v: Vec<String> = group.tables().map(str::to_ascii_lowercase).collect();
    v.sort();
    v
}

impl<B: Backend> Store<B> {
    /// Delivers one file per table of `group` as one ("Tables together"): each table decided
    /// alone, then the `together` check joined to every receipt (GROUP-10 to GROUP-15); every
    /// table's rows, ledger and receipt committed in one transaction, or nothing (GROUP-16);
    /// every receipt a rejection if any table is refused. A repeated group answers with the
    /// receipts recorded when every manifest was accepted together (identified by the
    /// together digest) once every declared content_hash matches the bytes (GROUP-23,
    /// GROUP-24); deliveries accepted alone, in another group or never are a new decision. A
    /// table belongs to one group: a group overlapping another the store holds is refused
    /// ([`StoreError::GroupOverlap`]), as are parts that do not match the group one to one
    /// ([`StoreError::Group`]). Nothing is written for a refusal.
    pub fn deliver_group(
        &mut self,
        group: &Group,
        parts: &[Part],
        now: Timestamp,
        source: Option<&str>,
    ) -> Result<GroupDelivery, StoreError> {
        let started = std::time::Instant::now();
        let decision = self.decide_group(group, parts, now, source)?;
        let decided = std::time::Instant::now();
        let mut delivery = self.commit_group(decision)?;
        delivery.timing = Timing::since(started, decided);
        Ok(delivery)
    }

    /// Phase one of [`Store::deliver_group`]: every table staged and decided in one read
    /// transaction, nothing written. The decision is committed by [`Store::commit_group`].
    pub fn decide_group(
        &mut self,
        group: &Group,
        parts: &[Part],
        now: Timestamp,
        source: Option<&str>,
    ) -> Result<GroupDecision, StoreError> {
        let manifests: Vec<Manifest> = parts.iter().map(|p| p.manifest.clone()).collect();
        // GROUP-17: one part per table, matched case-insensitively, or nothing is decided
        group
            .together_digest(&manifests)
            .map_err(StoreError::Group)?;
        let mut jobs = Vec::with_capacity(parts.len());
        for table in group.tables() {
            let part = parts
                .iter()
                .find(|p| p.manifest.table().eq_ignore_ascii_case(table))
                .ok_or_else(|| StoreError::Corrupt(format!("no part for table {table:?}")))?;
            let contract = group
                .contract(table)
                .ok_or_else(|| StoreError::Corrupt(format!("no contract for {table:?}")))?;
            check_table_name(contract.table())?;
            let job = Job {
                file: part.file.clone(),
                contract: contract.clone(),
                manifest: part.manifest.clone(),
                now,
                source: source.map(str::to_owned),
                options: part.options.clone(),
            };
            job.format()?;
            jobs.push(job);
        }
        let tables: Vec<String> = jobs.iter().map(|j| j.contract.table().to_owned()).collect();
        let names: Vec<&str> = tables.iter().map(String::as_str).collect();
        self.stage += 1;
        let mut staged: Vec<Option<Staged>> = vec![None; jobs.len()];
        let verdict = self.within_tables(Txn::Read, &names, |b| {
            decide_group_in(b, group, &jobs, &mut staged)
        })?;
        Ok(GroupDecision {
            handle: self.handle,
            stage: self.stage,
            group: group.clone(),
            jobs,
            verdict,
            staged,
        })
    }

    /// Phase two of [`Store::deliver_group`]: in one write transaction over every table of
    /// the group, re-reads each table's chain head; if any moved since the decision, the
    /// whole group is decided again under the lock (RECV-10), never one table alone. Then
    /// every table's rows, ledger and receipt are written, or every rejection alone.
    pub fn commit_group(&mut self, decision: GroupDecision) -> Result<GroupDelivery, StoreError> {
        if decision.handle != self.handle || decision.stage != self.stage {
            return Err(StoreError::ForeignDecision);
        }
        let GroupDecision {
            group,
            jobs,
            verdict,
            mut staged,
            ..
        } = decision;
        let tables: Vec<String> = jobs.iter().map(|j| j.contract.table().to_owned()).collect();
        let names: Vec<&str> = tables.iter().map(String::as_str).collect();
        let group = &group;
        let reports = |staged: &[Option<Staged>]| {
            staged
                .iter()
                .map(|s| s.as_ref().map(|s| s.report.clone()))
                .collect::<Vec<_>>()
        };
        let mut redecided = 0;
        let mut attempts = 0;
        let racing = std::time::Instant::now();
        let outcome = loop {
            attempts += 1;
            let tried = match verdict.clone() {
                GroupVerdict::Replay(receipts) => Ok(receipts),
                first => self.within_tables(Txn::Write, &names, |b| {
                    let mut verdict = first;
                    // the stored ledgers under the locks: the heads to compare, and what the
                    // ledgers saved below change
                    let stored = jobs
                        .iter()
                        .map(|job| stored_ledger(b, job.contract.table()))
                        .collect::<Result<Vec<_>, _>>()?;
                    if let GroupVerdict::Decided { receipts, .. } = &verdict {
                        for (ledger, receipt) in stored.iter().zip(receipts) {
                            let head = publication_id(ledger.as_ref());
                            if head.as_deref() != receipt.base_publication_id() {
                                // rule: RECV-10 — one table moved: the whole group is decided again
                                redecided += 1;
                                verdict = decide_group_in(b, group, &jobs, &mut staged)?;
                                break;
                            }
                        }
                    }
                    match verdict {
                        GroupVerdict::Replay(receipts) => Ok(receipts),
                        GroupVerdict::Decided {
                            receipts,
                            ledgers,
                            plans,
                        } => {
                            let accepted =
                                receipts.iter().all(|r| r.outcome() == Outcome::Accepted);
                            for (k, receipt) in receipts.iter().enumerate() {
                                let table = jobs[k].contract.table();
                                if receipt.outcome() == Outcome::Accepted {
                                    let s = staged[k].as_ref().ok_or_else(|| {
                                        StoreError::Corrupt("an acceptance without rows".into())
                                    })?;
                                    let next = ledgers[k].follow(receipt)?;
                                    publish(b, &jobs[k], s, receipt, &plans[k])?;
                                    save_ledger(b, table, &next, stored[k].as_ref())?;
                                }
                                b.save_receipt(table, receipt)?;
                            }
                            if accepted {
                                b.save_group(&group_key(group))?;
                            }
                            Ok(receipts)
                        }
                    }
                }),
            };
            match tried {
                // rule: RECV-10 — as in `commit`: the group's write transaction again
                Err(StoreError::Moved { .. }) if racing.elapsed() < MOVED_WAIT => {
                    std::thread::sleep(moved_backoff(attempts))
                }
                other => break other,
            }
        };
        let mut cleared = Ok(());
        for t in &tables {
            if let Err(e) = self.backend.stage_clear(t) {
                cleared = Err(e);
            }
        }
        let receipts = outcome?;
        cleared?;
        Ok(GroupDelivery {
            receipts,
            redecided,
            reports: reports(&staged),
            timing: Timing::default(),
        })
    }
}

/// How long a write transaction is run again while its commit answers
/// [`StoreError::Moved`] (another writer published first) before that error is returned: as
/// long as a writer waits for another's lock by default, since losing a race is that wait.
const MOVED_WAIT: std::time::Duration = std::time::Duration::from_secs(120);

/// How long to wait before the write transaction's attempt after `attempts` lost races: a
/// random wait below 1, 2, 4, 8, then 16 ms. Short and not growing further: a writer that
/// lost keeps its chances against writers that just won (a long backoff would hand the next
/// races to them, and a writer could wait out its whole `MOVED_WAIT`), while the random part
/// keeps writers that lost together from retrying together.
fn moved_backoff(attempts: u32) -> std::time::Duration {
    use std::hash::{BuildHasher, Hasher};
    let ceiling_micros = 1000u64 << attempts.saturating_sub(1).min(4);
    // a random draw from the standard library's randomly keyed hasher
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(attempts);
    std::time::Duration::from_micros(h.finish() % ceiling_micros)
}

/// A group's decision inside a transaction the caller holds (read or write).
fn decide_group_in<B: Backend>(
    b: &mut B,
    group: &Group,
    jobs: &[Job],
    staged: &mut [Option<Staged>],
) -> Result<GroupVerdict, StoreError> {
    let key = group_key(group);
    // a table belongs to one group
    for job in jobs {
        let table = job.contract.table();
        if let Some(other) = b.group_of(table)? {
            if other != key {
                return Err(StoreError::GroupOverlap {
                    table: table.to_owned(),
                    held: other,
                });
            }
        }
    }
    let manifests: Vec<Manifest> = jobs.iter().map(|j| j.manifest.clone()).collect();
    // GROUP-23 — replay: every manifest accepted together with exactly these
    let mut recorded = Vec::new();
    for job in jobs {
        if let Some(r) = accepted_receipt(b, job.contract.table(), &job.manifest.identity())? {
            recorded.push(r);
        }
    }
    let mut mismatched: BTreeMap<String, Check> = BTreeMap::new();
    if let Some(replayed) = group
        .replay(&manifests, &recorded)
        .map_err(StoreError::Group)?
    {
        for (k, job) in jobs.iter().enumerate() {
            let Some(declared) = job.manifest.content_hash() else {
                continue;
            };
            let actual = match &staged[k] {
                Some(s) => s.report.content_sha256.clone(),
                None => sha256_file(&job.file)?,
            };
            if actual != declared {
                // rule: RECV-03 — a repeated manifest over other bytes is refused
                mismatched.insert(
                    job.contract.table().to_owned(),
                    Check::fail(
                        "content_hash",
                        format!(
                            "the bytes hash to {actual}, not to the declared {declared}; this group was accepted before, and a repeated manifest over other bytes is refused (RECV-03)"
                        ),
                    ),
                );
            }
        }
        if mismatched.is_empty() {
            return Ok(GroupVerdict::Replay(replayed));
        }
    }
    let mut ledgers = Vec::with_capacity(jobs.len());
    let mut plans = Vec::with_capacity(jobs.len());
    let mut outcomes: BTreeMap<String, Vec<Check>> = BTreeMap::new();
    for (k, job) in jobs.iter().enumerate() {
        let table = job.contract.table();
        let ledger = load_ledger(b, &job.contract, job.options.adopt)?;
        let mut checks = Vec::new();
        let mut plan = TablePlan::Keep;
        if let Some(c) = mismatched.remove(table) {
            checks.push(c);
        } else if Gate::preflight(&ledger, &job.manifest, job.now)
            .iter()
            .all(Check::passed)
        {
            let (c, p) = receiver_checks(b, job, &mut staged[k])?;
            checks = c;
            plan = p;
        }
        outcomes.insert(table.to_owned(), checks);
        ledgers.push(ledger);
        plans.push(plan);
    }
    let now = jobs.first().map_or_else(|| Timestamp::MIN, |j| j.now);
    let sources: Option<BTreeMap<String, String>> = jobs.first().and_then(|j| {
        j.source.as_ref().map(|s| {
            jobs.iter()
                .map(|j| (j.contract.table().to_owned(), s.clone()))
                .collect()
        })
    });
    let receipts = group
        .apply(&ledgers, &manifests, now, Some(&outcomes), sources.as_ref())
        .map_err(StoreError::Group)?;
    Ok(GroupVerdict::Decided {
        receipts,
        ledgers,
        plans,
    })
}
