//! The lake behind the engine's port.
//!
//! A transaction reads each table's pointer once (its snapshot is immutable, so a read is one
//! committed state). `begin(Write, tables)` takes each table's write lease by one conditional
//! write of its pointer, which raises the pointer's fence (`store.lease.pointer-fence`); while
//! the transaction lasts a thread renews those leases every third of the TTL
//! (`crate::renewal`).
//! Steps change an in-memory copy of the snapshot: untouched parts stay references
//! (`pass-carries-untouched`); a deletion rewrites only the parts holding a deleted row
//! (copy-on-write by part). `commit` writes the new parts, the receipt, its replay index
//! entry and the snapshot manifest, each under a key no other writer uses, then publishes
//! them with ONE conditional write of the pointer, conditioned on the version the lease
//! acquisition wrote, which also releases the lease. Nothing before that write is reachable,
//! so rows, ledger and receipt appear together or not at all. A transaction changing several
//! tables (a group) publishes them all at one decision object instead
//! (`Lake::publish_together`).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::time::{Duration, Instant};

use bytes::Bytes;
use chrono::Utc;
use dogana::{Outcome, Receipt, Value, Wire};
use dogana_receiver::{
    key_text, Backend, Batch, Column, Datum, KeysFrom, KeysOutside, Layout, Open, ReceiptRow, Row,
    Staged, Step, StoreError, Txn,
};

use crate::lattice::{self, Conflict, LakeType};
use crate::layout::{
    self, by_manifest_key, by_manifest_prefix, check_format, is_canonical_v4,
    parse_by_manifest_key, parse_receipt_key, pointer_key, receipt_key, receipt_seq_prefix,
    receipts_prefix, table_dir, table_of_dir, ColumnDef, CommitDecision, Lease, LedgerPages,
    PageRef, PartRef, Pending, Pointer, ReceiptObject, ReceiptRef, SnapshotManifest,
};
use crate::objects::{Root, Version, Versioned};
use crate::pages::{self, Regions};
use crate::parts;
use crate::renewal::Renewal;
use crate::LakeError;

mod collect;
mod fold;
mod sync_hooks;

/// The key of the store's identity.
pub const STORE_ID: &str = "store-id";

/// Where the conditional-write probe writes its object (removed after it).
const PROBE_DIR: &str = "_probe";

/// How the lake writes and waits.
#[derive(Debug, Clone)]
pub struct LakeOptions {
    /// How long a write lease lasts after its acquisition, by the storage's clock.
    pub lease_ttl: Duration,
    /// How long `begin(Write)` waits for another writer's lease before [`LakeError::LeaseHeld`].
    pub lock_wait: Duration,
    /// Fold a table right after a delivery publishes it, when its size tiers ask for it
    /// (a tier holding 4 parts, `store.fold.tiered-merge`); off by default. A fold that fails
    /// there (another writer's lease) leaves the delivery published and the parts for the
    /// next fold.
    pub fold_after_delivery: bool,
    /// Renew the write leases a transaction holds, every third of `lease_ttl`, until it
    /// publishes or rolls back (`lease-renewed-by-holder`); on by default. Off only to stand
    /// for a writer paused past its lease (tests): its lease then lapses after `lease_ttl`.
    pub renew_leases: bool,
    /// The size a page of a ledger's regions is cut at when it grows past it
    /// ([`crate::pages`]): a delivery writes the pages holding a region it changed, and a
    /// reader without the ledger reads every page. 256 KiB by default.
    pub ledger_page_bytes: usize,
}

impl Default for LakeOptions {
    fn default() -> Self {
        LakeOptions {
            lease_ttl: Duration::from_secs(60),
            lock_wait: Duration::from_secs(60),
            fold_after_delivery: false,
            renew_leases: true,
            ledger_page_bytes: crate::pages::DEFAULT_PAGE_BYTES,
        }
    }
}

/// A table's published state as an outside reader needs it: its columns, its Parquet parts
/// and its ledger document.
pub type Published = (Vec<ColumnDef>, Vec<PartRef>, Option<String>);

/// What one fold of a table did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoldReport {
    /// The table.
    pub table: String,
    /// Its parts before and after.
    pub parts_before: usize,
    /// Its parts after.
    pub parts_after: usize,
    /// How many merges of 4 parts into one the fold made.
    pub merges: usize,
    /// How many parts it rewrote alone, dropping the rows later parts shadow (a part of a
    /// keyed table a quarter or more of whose rows are no longer current).
    pub rewritten: usize,
    /// Bytes of the parts merged away or rewritten.
    pub bytes_merged: u64,
    /// Bytes of the parts the fold wrote.
    pub bytes_written: u64,
    /// The snapshot it published (None: the tiers asked for nothing, nothing was written).
    pub snapshot: Option<String>,
    /// The fence of the lease it held, stamped in that snapshot and the pointer.
    pub fence: u64,
}

/// What one collection of a table did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectReport {
    /// The table.
    pub table: String,
    /// The snapshots kept whole (the newest `retain_generations` of the chain).
    pub retained: usize,
    /// The older snapshots whose parts it reclaimed (manifests kept).
    pub reclaimed: usize,
    /// The parts it deleted.
    pub deleted: usize,
    /// The bytes of the parts it deleted, as their manifests record them (0 for a part no
    /// snapshot names).
    pub bytes: u64,
    /// The folded-runs segments it deleted (no retained snapshot's index names them).
    pub segments: usize,
    /// Its record (None: nothing to delete, nothing written).
    pub record: Option<String>,
}

/// The size tier of a part of `rows` rows: tier k spans `4^k ..= 4^(k+1) - 1` rows (a part of
/// 0 to 3 rows is tier 0) (`store.fold.tiered-merge`).
pub fn tier(rows: u64) -> u32 {
    if rows < 4 {
        0
    } else {
        (63 - rows.leading_zeros()) / 2
    }
}

/// The merges a fold makes of parts of these row counts, in order: each is the positions (in
/// the list as it stands before that merge) of 4 parts of one tier, replaced by one part at
/// the first one's position. Repeats until every tier holds fewer than 4 parts, the lowest
/// tier first (`store.fold.tiered-merge`).
pub fn plan_merges(rows: &[u64]) -> Vec<[usize; 4]> {
    let sizes: Vec<(u64, u64)> = rows.iter().map(|r| (*r, *r)).collect();
    plan_merges_of(&sizes)
}

/// [`plan_merges`] over parts whose rows are not all current: each part as `(rows as it
/// stands, its current rows)`. A part's tier is that of the rows it holds; a merged part
/// holds its members' current rows only (a shadowed row is dropped), so its size is their
/// sum, and the tiers planned are the tiers the fold leaves.
fn plan_merges_of(parts: &[(u64, u64)]) -> Vec<[usize; 4]> {
    let mut parts = parts.to_vec();
    let mut merges = Vec::new();
    loop {
        let mut by_tier: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
        for (i, (rows, _)) in parts.iter().enumerate() {
            by_tier.entry(tier(*rows)).or_default().push(i);
        }
        let Some(at) = by_tier.values().find(|v| v.len() >= 4) else {
            return merges;
        };
        let m = [at[0], at[1], at[2], at[3]];
        let total: u64 = m.iter().map(|i| parts[*i].1).sum();
        for i in m.iter().rev() {
            parts.remove(*i);
        }
        parts.insert(m[0], (total, total));
        merges.push(m);
    }
}

/// A part of the working snapshot. A keyed table's parts may overlap: a row is current
/// unless a later part holds its key, as a row or as a deletion (merge-on-read, so a
/// delivery's cost follows the delivery: see docs/store-decisions.md, "Deletions").
#[derive(Debug, Clone)]
enum Part {
    /// A part of the head snapshot, carried by reference.
    Ref(PartRef),
    /// Rows to write as a new part at commit.
    Rows(Vec<Vec<Datum>>),
    /// Keys (the table's key columns, in their order) deleted here: a deletion part at commit.
    Deletes(Vec<Vec<Datum>>),
    /// A part already encoded (the staged rows, of the table's columns): its bytes and rows.
    Encoded(Bytes, u64),
}

impl Part {
    /// Whether it is a deletion part.
    fn is_deletes(&self) -> bool {
        match self {
            Part::Ref(r) => r.deletes,
            Part::Rows(_) | Part::Encoded(..) => false,
            Part::Deletes(_) => true,
        }
    }

    /// How many rows (a deletion part: keys) it holds.
    fn len(&self) -> u64 {
        match self {
            Part::Ref(r) => r.rows,
            Part::Rows(r) | Part::Deletes(r) => r.len() as u64,
            Part::Encoded(_, rows) => *rows,
        }
    }
}

/// The current rows of each of `parts` (whether it is a deletion part, its rows as written),
/// in order: all of them in a keyless table (`key_at` empty); in a keyed one, each row whose
/// key no later part holds, as a row or a deletion (a deletion part: none).
fn current_rows(
    key_at: &[usize],
    overlapping: bool,
    parts: Vec<(bool, Vec<Vec<Datum>>)>,
) -> Result<Vec<Vec<Vec<Datum>>>, StoreError> {
    if key_at.is_empty() || !overlapping {
        if parts.iter().any(|(deletes, _)| *deletes) {
            return Err(corrupt(
                "a deletion part in a snapshot whose parts do not overlap",
            ));
        }
        return Ok(parts.into_iter().map(|(_, rows)| rows).collect());
    }
    // the newest part first: a key met once is shadowed in every earlier part
    let mut seen: HashSet<String> = HashSet::new();
    let mut out = Vec::with_capacity(parts.len());
    for (deletes, rows) in parts.into_iter().rev() {
        if deletes {
            seen.extend(rows.into_iter().map(key_text));
            out.push(Vec::new());
            continue;
        }
        let mut current = Vec::with_capacity(rows.len());
        // within one part, a later row wins too
        for r in rows.into_iter().rev() {
            if seen.insert(key_text(key_at.iter().map(|i| r[*i].clone()))) {
                current.push(r);
            }
        }
        current.reverse();
        out.push(current);
    }
    out.reverse();
    Ok(out)
}

/// The positions of `columns`' key columns (empty: a keyless table).
fn key_positions(columns: &[ColumnDef]) -> Vec<usize> {
    columns
        .iter()
        .enumerate()
        .filter(|(_, c)| c.key)
        .map(|(i, _)| i)
        .collect()
}

/// The columns of a deletion part of a table of `columns`: its key columns.
fn key_defs(columns: &[ColumnDef]) -> Vec<ColumnDef> {
    columns.iter().filter(|c| c.key).cloned().collect()
}

/// One table as a transaction sees and changes it.
#[derive(Debug, Clone)]
struct TableTxn {
    /// The pointer as read (or as the lease acquisition wrote it).
    pointer: Option<(Pointer, Version)>,
    /// The head snapshot's key.
    head_key: Option<String>,
    /// The lease this transaction holds: its fence.
    fence: Option<u64>,
    columns: Option<Vec<ColumnDef>>,
    parts: Vec<Part>,
    ledger: StoredLedger,
    /// The ledger pages this transaction made (id and bytes), written before its manifest.
    new_pages: Vec<(String, Bytes)>,
    receipts: u64,
    accepted: u64,
    receipt: Option<ReceiptObject>,
    group: Option<Vec<String>>,
    /// The stored schema (see [`SnapshotManifest::schema`]).
    schema: Vec<ColumnDef>,
    /// Whether the parts may overlap (see [`SnapshotManifest::overlapping`]).
    overlapping: bool,
    /// The head snapshot's folded-runs index, which the next pass carries.
    folded: Option<layout::FoldedRuns>,
    dirty: bool,
}

/// A table's ledger as a snapshot holds it.
#[derive(Debug, Clone, Default)]
pub(crate) enum StoredLedger {
    /// None yet (nothing accepted).
    #[default]
    None,
    /// The document, whole in the manifest: as snapshots before [`layout::PAGED_FORMAT`]
    /// hold it, and as [`Backend::save_ledger`] stores any document.
    Whole(String),
    /// In pages the snapshots share ([`crate::pages`]), as a delivery stores it.
    Paged(LedgerPages),
}

impl StoredLedger {
    /// A snapshot manifest's ledger fields (pages win: a writer sets one of the two).
    fn of(whole: Option<String>, pages: Option<LedgerPages>) -> StoredLedger {
        match (whole, pages) {
            (_, Some(p)) => StoredLedger::Paged(p),
            (Some(doc), None) => StoredLedger::Whole(doc),
            (None, None) => StoredLedger::None,
        }
    }
}

/// A staging area: one delivery's staged rows and tombstones. Live rows of plain columns are
/// encoded into a Parquet part as they arrive (`part`), so a large delivery is held encoded,
/// not as rows; the part is published as it is when the table's columns are the staged ones.
/// Rows of the lattice's typed columns are held as values (`rows`).
#[derive(Debug, Default)]
struct StagedRows {
    rows: Vec<Vec<Datum>>,
    tombstones: Vec<Vec<Datum>>,
    part: Option<StagedPart>,
}

/// The staged rows encoded: their columns (the layout's, in its order), the writer while
/// staging goes on, then the part's bytes.
#[derive(Debug)]
struct StagedPart {
    columns: Vec<ColumnDef>,
    writer: Option<parts::PartWriter>,
    sealed: Option<(Bytes, u64)>,
}

impl StagedPart {
    /// The finished part and its row count (the writer finished on first use).
    fn sealed(&mut self) -> Result<(Bytes, u64), StoreError> {
        if let Some(w) = self.writer.take() {
            let rows = w.rows();
            self.sealed = Some((w.finish()?, rows));
        }
        self.sealed
            .clone()
            .ok_or_else(|| corrupt("a staged part without its writer"))
    }
}

/// The lake store: one root, the engine's [`Backend`].
#[derive(Debug)]
pub struct Lake {
    root: Root,
    options: LakeOptions,
    write: bool,
    txn: Option<Txn>,
    tables: BTreeMap<String, TableTxn>,
    staged: HashMap<String, StagedRows>,
    holder: String,
    /// The renewal of the open write transaction's leases (`lease-renewed-by-holder`).
    renewal: Option<Renewal>,
    /// The root the renewal thread writes through (its own runtime), made once.
    renew_root: Option<Root>,
    /// Ledger pages read or written, by id (pages never change: a kept one is always right).
    pages: std::sync::Mutex<PageCache>,
}

/// The ledger pages a handle keeps, up to [`PageCache::MAX_BYTES`].
#[derive(Debug, Default)]
struct PageCache {
    pages: HashMap<String, Regions>,
    bytes: u64,
}

impl PageCache {
    /// Past this, the cache is emptied before a page is kept (a ledger larger than it is read
    /// again when a handle without it needs it whole).
    const MAX_BYTES: u64 = 256 << 20;

    fn get(&self, id: &str) -> Option<Regions> {
        self.pages.get(id).cloned()
    }

    fn keep(&mut self, page: &PageRef, regions: Regions) {
        if self.bytes + page.bytes > Self::MAX_BYTES {
            self.pages.clear();
            self.bytes = 0;
        }
        if self.pages.insert(page.id.clone(), regions).is_none() {
            self.bytes += page.bytes;
        }
    }
}

fn in_window(v: &Datum, low: &Value, high: &Value) -> bool {
    let (lo, hi) = (Datum::of_value(low, false), Datum::of_value(high, false));
    matches!(v.compare(&lo), Some(o) if o.is_ge()) && matches!(v.compare(&hi), Some(o) if o.is_le())
}

/// The tables a commit published.
fn dirty_names(tables: &BTreeMap<String, TableTxn>) -> Vec<String> {
    tables
        .iter()
        .filter(|(_, t)| t.fence.is_some() && t.dirty)
        .map(|(n, _)| n.clone())
        .collect()
}

fn corrupt(m: impl Into<String>) -> StoreError {
    StoreError::Corrupt(m.into())
}

/// At most 80 characters of a type name, for an error.
fn cut(s: &str) -> String {
    if s.chars().count() <= 80 {
        s.to_owned()
    } else {
        format!("{}…", s.chars().take(79).collect::<String>())
    }
}

/// Reconciles a column arriving as `ty` (a declared type name, None: untyped) with the
/// stored `schema` (`crate::lattice`): records the join there and returns the type name the
/// published column takes. A key (now, or ever before) takes no promotion
/// ([`LakeError::StoreKeyWidened`]); a pair outside the lattice is
/// [`LakeError::StoreSchemaIncompatible`]. A type name outside the lattice joins only itself.
fn reconcile(
    table: &str,
    schema: &mut Vec<ColumnDef>,
    name: &str,
    ty: Option<&str>,
    key: bool,
) -> Result<Option<String>, LakeError> {
    let Some(stored) = schema.iter_mut().find(|c| c.name == name) else {
        schema.push(ColumnDef {
            name: name.to_owned(),
            ty: ty.map(str::to_owned),
            key,
        });
        return Ok(ty.map(str::to_owned));
    };
    // rule: store.reconcile.stored-type — once the stored schema records a binary, vector,
    // nested, variant or json type, an undeclared column lands in it without a declaration
    if ty.is_none()
        && matches!(
            LakeType::of_declared(stored.ty.as_deref()),
            Some(
                LakeType::Binary
                    | LakeType::FixedBinary(_)
                    | LakeType::Vector { .. }
                    | LakeType::Struct(_)
                    | LakeType::List(_)
                    | LakeType::Map(_)
                    | LakeType::Variant
                    | LakeType::Json
            )
        )
    {
        stored.key |= key;
        return Ok(stored.ty.clone());
    }
    let name_of = |t: Option<&str>| t.unwrap_or("str").to_owned();
    let incompatible = |column: String, s: String, a: String| LakeError::StoreSchemaIncompatible {
        table: table.to_owned(),
        column: cut(&column),
        stored: cut(&s),
        arriving: cut(&a),
    };
    let (Some(s), Some(a)) = (
        LakeType::of_declared(stored.ty.as_deref()),
        LakeType::of_declared(ty),
    ) else {
        if stored.ty.as_deref() == ty {
            stored.key |= key;
            return Ok(ty.map(str::to_owned));
        }
        return Err(incompatible(
            name.to_owned(),
            name_of(stored.ty.as_deref()),
            name_of(ty),
        ));
    };
    match lattice::join(name, &s, &a, key || stored.key) {
        Ok(j) => {
            if j != s {
                stored.ty = Some(j.to_string());
            }
            stored.key |= key;
            Ok(if j == a {
                ty.map(str::to_owned)
            } else {
                Some(j.to_string())
            })
        }
        Err(Conflict::KeyWidened {
            path,
            stored,
            arriving,
        }) => Err(LakeError::StoreKeyWidened {
            table: table.to_owned(),
            column: cut(&path),
            stored,
            arriving,
        }),
        Err(Conflict::Incompatible {
            path,
            stored,
            arriving,
        }) => Err(incompatible(path, stored, arriving)),
    }
}

/// Every region of a ledger document kept whole, as pages hold them (a document that does
/// not read back as a ledger cannot be converted: [`StoreError::Corrupt`] naming the table).
fn whole_regions(table: &str, doc: &str) -> Result<Vec<pages::Region>, StoreError> {
    use dogana::FromWire;
    let ledger = dogana::Ledger::from_json(doc).map_err(|e| {
        corrupt(format!(
            "the ledger of {table:?} kept whole in its snapshot cannot be converted to pages: {e}"
        ))
    })?;
    Ok(ledger.region_rows_since(None).added)
}

fn json<T: serde::Serialize>(v: &T) -> Result<Bytes, StoreError> {
    serde_json::to_vec(v)
        .map(Bytes::from)
        .map_err(|e| StoreError::backend("lake", e))
}

fn parse<T: serde::de::DeserializeOwned>(key: &str, b: &[u8]) -> Result<T, StoreError> {
    serde_json::from_slice(b).map_err(|e| corrupt(format!("{key} does not read back: {e}")))
}

/// Reads a manifest's `format_version` before its fields, so a newer major is refused by
/// name rather than as a document that does not parse.
fn checked<T: serde::de::DeserializeOwned>(key: &str, b: &[u8]) -> Result<T, StoreError> {
    let v: serde_json::Value = parse(key, b)?;
    check_format(key, v.get("format_version").and_then(|f| f.as_str()))?;
    serde_json::from_value(v).map_err(|e| corrupt(format!("{key} does not read back: {e}")))
}

impl Lake {
    /// Opens the store at `root` (a URL or a directory). For writing, the store is created
    /// when absent, its conditional writes are probed (`store.probe.inconclusive`,
    /// `topology.coordinate.weak-backend`) and its identity is created once and kept
    /// (`store.init.store-identity`); a reader changes nothing and refuses a root without an
    /// identity.
    pub fn open_root(root: Root, options: LakeOptions, write: bool) -> Result<Lake, StoreError> {
        let lake = Lake {
            root,
            options,
            write,
            txn: None,
            tables: BTreeMap::new(),
            staged: HashMap::new(),
            holder: format!(
                "pid {} ({})",
                std::process::id(),
                &uuid::Uuid::new_v4().simple().to_string()[..12]
            ),
            renewal: None,
            renew_root: None,
            pages: Default::default(),
        };
        if write {
            // rule: store.replicate.write-refused
            if let Some(canonical) = crate::replica::canonical_of(&lake.root)? {
                return Err(LakeError::ReplicaWriteRefused {
                    replica: lake.root.url().to_owned(),
                    canonical,
                }
                .into());
            }
            // a root holding anything but no store-id is someone else's: refused before a
            // byte is written (the probe included). Another writer's probe is not: two
            // first deliveries into one new store both probe, then one creates the store-id
            // (a conditional create) and the other reads it.
            if !lake.made_or_empty()? {
                return Err(StoreError::NotAStore(format!(
                    "{} holds objects but no {STORE_ID}, so it is not a dogana lake store, and a store is made only where nothing is: name an empty directory or prefix, or the store's own root",
                    lake.root.url()
                )));
            }
            lake.probe()?;
            if lake.root.get(STORE_ID)?.is_none() {
                let id = uuid::Uuid::new_v4().hyphenated().to_string();
                lake.root.create(STORE_ID, Bytes::from(id))?;
            }
        }
        lake.store_id()?;
        // a drained store pushes what it has not pushed before anything reads it
        // (store.drain.before-read)
        crate::sync::drain::before_command(&lake.root)?;
        Ok(lake)
    }

    /// Whether the root holds a store-id, or nothing but probes: a root that is neither is
    /// someone else's. Another writer making this store right now shows for a moment as
    /// objects without a store-id (its probe, or the object store's staging file of the
    /// store-id itself), so a root that looks foreign is looked at again a few times, 20 ms
    /// apart, before it is called so.
    fn made_or_empty(&self) -> Result<bool, StoreError> {
        for attempt in 0..5 {
            if attempt > 0 {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            if self.root.get(STORE_ID)?.is_some() || self.root.is_empty_but(&[PROBE_DIR])? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The store's identity: the canonical v4 UUID in `store-id`
    /// (`store.init.identity-invalid`: anything else is [`LakeError::StoreIdentityInvalid`]).
    pub fn store_id(&self) -> Result<String, StoreError> {
        let Some(b) = self.root.get(STORE_ID)? else {
            return Err(StoreError::NotAStore(format!(
                "{} has no {STORE_ID}: not a dogana lake store",
                self.root.url()
            )));
        };
        let text = String::from_utf8_lossy(&b);
        let id = text.strip_suffix('\n').unwrap_or(&text);
        if !is_canonical_v4(id) {
            return Err(LakeError::StoreIdentityInvalid {
                path: format!("{}/{STORE_ID}", self.root.url()),
                found: id.chars().take(80).collect(),
            }
            .into());
        }
        Ok(id.to_owned())
    }

    /// The root.
    pub fn root(&self) -> &Root {
        &self.root
    }

    /// Demonstrates conditional create and replace on a key of its own.
    fn probe(&self) -> Result<(), StoreError> {
        let key = format!("{PROBE_DIR}/{}", uuid::Uuid::new_v4().simple());
        let url = self.root.url().to_owned();
        let inconclusive = |step: &'static str, e: LakeError| LakeError::SyncProbeInconclusive {
            root: url.clone(),
            step,
            reason: e.to_string(),
        };
        let weak = |ignored: &'static str| LakeError::WeakConditionalBackend {
            root: url.clone(),
            ignored,
        };
        let result = (|| -> Result<(), LakeError> {
            let v1 = self
                .root
                .put_versioned(&key, Bytes::from_static(b"1"), None)
                .map_err(|e| inconclusive("conditional create", e))?
                .ok_or_else(|| {
                    inconclusive(
                        "conditional create",
                        LakeError::Root("a new key reads as existing".into()),
                    )
                })?;
            let again = self
                .root
                .put_versioned(&key, Bytes::from_static(b"2"), None)
                .map_err(|e| inconclusive("second conditional create", e))?;
            if again.is_some() {
                return Err(weak("If-None-Match (a second create of one key succeeded)"));
            }
            let v2 = self
                .root
                .put_versioned(&key, Bytes::from_static(b"3"), Some(&v1))
                .map_err(|e| inconclusive("conditional replace", e))?;
            if v2.is_none() {
                return Err(inconclusive(
                    "conditional replace",
                    LakeError::Root("a replace on the current version lost its condition".into()),
                ));
            }
            let stale = self
                .root
                .put_versioned(&key, Bytes::from_static(b"4"), Some(&v1))
                .map_err(|e| inconclusive("stale conditional replace", e))?;
            if stale.is_some() {
                return Err(weak("If-Match (a replace on a stale version succeeded)"));
            }
            Ok(())
        })();
        let _ = self.root.delete_versioned(&key);
        result.map_err(StoreError::from)
    }

    fn read_pointer(&self, table: &str) -> Result<Option<(Pointer, Versioned)>, StoreError> {
        let key = pointer_key(table);
        match self.root.get_versioned(&key)? {
            None => Ok(None),
            Some(v) => Ok(Some((checked(&key, &v.bytes)?, v))),
        }
    }

    /// Whether the commit of several tables `pending` names was committed; `settle`: a
    /// missing decision is made aborted first (only once the writer's lease is past), so it
    /// can never be committed later.
    fn committed(&self, pending: &Pending, settle: bool) -> Result<bool, StoreError> {
        let decided = |b: Bytes| -> Result<bool, StoreError> {
            let d: CommitDecision = parse(&pending.commit, &b)?;
            Ok(d.outcome == "committed")
        };
        if let Some(b) = self.root.get(&pending.commit)? {
            return decided(b);
        }
        if !settle {
            return Ok(false);
        }
        let aborted = json(&CommitDecision {
            outcome: "aborted".into(),
        })?;
        if self.root.create(&pending.commit, aborted)? {
            return Ok(false);
        }
        match self.root.get(&pending.commit)? {
            Some(b) => decided(b),
            None => Err(corrupt(format!(
                "{} exists and then does not",
                pending.commit
            ))),
        }
    }

    /// The pointer with its pending commit, if any, decided: the head it names.
    fn resolved(&self, mut p: Pointer, settle: bool) -> Result<Pointer, StoreError> {
        if let Some(pending) = p.pending.take() {
            if !self.committed(&pending, settle)? {
                p.snapshot = pending.previous;
            }
        }
        Ok(p)
    }

    /// The table's pointer as a reader sees it: its head decided.
    fn read_head(&self, table: &str) -> Result<Option<(Pointer, Version)>, StoreError> {
        match self.read_pointer(table)? {
            None => Ok(None),
            Some((p, v)) => Ok(Some((self.resolved(p, false)?, v.version))),
        }
    }

    fn load(
        &self,
        table: &str,
        pointer: Option<(Pointer, Version)>,
    ) -> Result<TableTxn, StoreError> {
        let mut t = TableTxn {
            head_key: pointer.as_ref().and_then(|(p, _)| p.snapshot.clone()),
            pointer,
            fence: None,
            columns: None,
            parts: Vec::new(),
            ledger: StoredLedger::None,
            new_pages: Vec::new(),
            receipts: 0,
            accepted: 0,
            receipt: None,
            group: None,
            schema: Vec::new(),
            overlapping: false,
            folded: None,
            dirty: false,
        };
        if let Some(key) = &t.head_key {
            let b = self.root.get(key)?.ok_or_else(|| {
                corrupt(format!(
                    "the pointer of {table:?} names {key}, which is missing"
                ))
            })?;
            let s: SnapshotManifest = checked(key, &b)?;
            t.schema = s.schema.or_else(|| s.columns.clone()).unwrap_or_default();
            t.columns = s.columns;
            t.parts = s.parts.into_iter().map(Part::Ref).collect();
            t.ledger = StoredLedger::of(s.ledger, s.ledger_pages);
            t.receipts = s.receipts;
            t.accepted = s.accepted;
            t.group = s.group;
            t.overlapping = s.overlapping;
            t.folded = s.folded_runs;
        }
        Ok(t)
    }

    /// The regions of one of `table`'s ledger pages: kept, or read and checked against its
    /// name.
    fn page(&self, table: &str, page: &PageRef) -> Result<Regions, StoreError> {
        let cache = || self.pages.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(kept) = cache().get(&page.id) {
            return Ok(kept);
        }
        let key = layout::page_key(table, &page.id);
        let bytes = self.root.get(&key)?.ok_or_else(|| {
            corrupt(format!(
                "the ledger page {key} of {table:?}, which its snapshot names, is missing"
            ))
        })?;
        let regions: Regions = std::sync::Arc::new(pages::decode(&key, page, &bytes)?);
        cache().keep(page, regions.clone());
        Ok(regions)
    }

    /// The document of a stored ledger (its pages read, when it is in pages).
    fn ledger_document(
        &self,
        table: &str,
        ledger: &StoredLedger,
    ) -> Result<Option<String>, StoreError> {
        match ledger {
            StoredLedger::None => Ok(None),
            StoredLedger::Whole(doc) => Ok(Some(doc.clone())),
            StoredLedger::Paged(p) => {
                let read: Vec<Regions> = p
                    .pages
                    .iter()
                    .map(|page| self.page(table, page))
                    .collect::<Result<_, _>>()?;
                Ok(Some(pages::document(&p.head, &read, &p.tail)))
            }
        }
    }

    /// The table as this transaction sees it (read on first use).
    fn table(&mut self, table: &str) -> Result<&mut TableTxn, StoreError> {
        if self.txn.is_none() {
            return Err(corrupt("the lake was used outside a transaction"));
        }
        if !self.tables.contains_key(table) {
            let p = self.read_head(table)?;
            let t = self.load(table, p)?;
            self.tables.insert(table.to_owned(), t);
        }
        Ok(self.tables.get_mut(table).expect("inserted above"))
    }

    /// Takes the write lease of `table`: one conditional write of its pointer assigning the
    /// holder and raising the fence (`store.lease.acquire`, `store.lease.pointer-fence`).
    fn acquire(&self, table: &str) -> Result<TableTxn, StoreError> {
        layout::check_table_name(table).map_err(StoreError::TableName)?;
        let key = pointer_key(table);
        let deadline = Instant::now() + self.options.lock_wait;
        let mut pause = Duration::from_millis(2);
        loop {
            let current = self.read_pointer(table)?;
            let lease = Lease {
                holder: self.holder.clone(),
                ttl_ms: self.options.lease_ttl.as_millis() as u64,
                renewals: 0,
            };
            let (next, expect) = match &current {
                None => (
                    Pointer {
                        format_version: layout::format_text(),
                        snapshot: None,
                        fence: 1,
                        lease: Some(lease),
                        pending: None,
                    },
                    None,
                ),
                Some((p, v)) => {
                    if let Some(held) = &p.lease {
                        let expires = v.modified
                            + chrono::Duration::milliseconds(
                                held.ttl_ms.min(i64::MAX as u64) as i64
                            );
                        if Utc::now() < expires {
                            // rule: store.lease.held
                            if Instant::now() >= deadline {
                                return Err(LakeError::LeaseHeld {
                                    table: table.to_owned(),
                                    holder: held.holder.clone(),
                                    expires: expires.to_rfc3339(),
                                }
                                .into());
                            }
                            std::thread::sleep(pause);
                            pause = (pause * 2).min(Duration::from_millis(50));
                            continue;
                        }
                    }
                    // a commit of several tables its writer left undecided past its lease is
                    // aborted here, so the head is decided before the fence moves
                    let head = self.resolved(p.clone(), true)?;
                    (
                        Pointer {
                            format_version: layout::format_text(),
                            snapshot: head.snapshot,
                            fence: p.fence + 1,
                            lease: Some(lease),
                            pending: None,
                        },
                        Some(v.version.clone()),
                    )
                }
            };
            let mut won = self
                .root
                .put_versioned(&key, json(&next)?, expect.as_ref())?;
            if won.is_none() {
                // a retried request whose first attempt landed answers as a lost condition:
                // the pointer carrying our holder and fence says we won
                if let Some((p, v)) = self.read_pointer(table)? {
                    if p == next {
                        won = Some(v.version);
                    }
                }
            }
            if let Some(version) = won {
                let fence = next.fence;
                let mut t = self.load(table, Some((next, version)))?;
                t.fence = Some(fence);
                return Ok(t);
            }
            // another writer's acquisition landed first: read again
        }
    }

    /// Starts renewing the leases the open write transaction holds, every third of the TTL
    /// (`lease-renewed-by-holder`).
    fn start_renewal(&mut self) -> Result<(), StoreError> {
        self.renewal = None;
        let held: BTreeMap<String, (Pointer, Version)> = self
            .tables
            .iter()
            .filter(|(_, t)| t.fence.is_some())
            .filter_map(|(n, t)| t.pointer.clone().map(|p| (n.clone(), p)))
            .collect();
        let every = self.options.lease_ttl / 3;
        if held.is_empty() || every.is_zero() || !self.options.renew_leases {
            return Ok(());
        }
        if self.renew_root.is_none() {
            self.renew_root = Some(self.root.reopen()?);
        }
        let root = self.renew_root.clone().expect("made above");
        self.renewal = Some(Renewal::start(root, every, held));
        Ok(())
    }

    /// Stops the renewal and takes the versions it wrote into the open transaction's tables.
    fn sync_renewal(&mut self) {
        if let Some(r) = &self.renewal {
            r.stop();
            for (name, t) in self.tables.iter_mut() {
                if let Some(h) = r.held(name) {
                    t.pointer = Some(h);
                }
            }
        }
    }

    /// The pointer and version of `table` this transaction last wrote: its renewal's (the
    /// renewal stopped first, so nothing else writes the pointer meanwhile), or the
    /// acquisition's.
    fn renewed(&self, table: &str, t: &TableTxn) -> Option<(Pointer, Version)> {
        if let Some(r) = &self.renewal {
            r.stop();
            if let Some(h) = r.held(table) {
                return Some(h);
            }
        }
        t.pointer.clone()
    }

    /// [`LakeError::LeaseFenced`] when a renewal of `table`'s lease lost its condition: another
    /// writer took the lease, so this transaction publishes nothing of it
    /// (`store.lease.stale-fence`).
    fn lease_lost(&self, table: &str, t: &TableTxn) -> Result<(), StoreError> {
        match self.renewal.as_ref().and_then(|r| r.lost(table)) {
            Some(current) => Err(LakeError::LeaseFenced {
                table: table.to_owned(),
                fence: t.fence.unwrap_or(0),
                current,
            }
            .into()),
            None => Ok(()),
        }
    }

    /// At a port call: [`LakeError::LeaseFenced`] as soon as a renewal of any lease the open
    /// transaction holds was lost, so the delivery stops before it publishes.
    fn check_renewal(&self) -> Result<(), StoreError> {
        match self.renewal.as_ref().and_then(|r| r.any_lost()) {
            Some((table, current)) => Err(LakeError::LeaseFenced {
                fence: self.tables.get(&table).and_then(|t| t.fence).unwrap_or(0),
                table,
                current,
            }
            .into()),
            None => Ok(()),
        }
    }

    /// Releases the write lease this handle holds on `table`, keeping the fence
    /// (`topology.coordinate.fence-advances`). A lease another holder holds, or one a later
    /// acquisition fenced past, raises [`LakeError::LeaseNotHeld`] and changes nothing
    /// (`store.lease.not-held`).
    fn release(&self, table: &str, t: &TableTxn) -> Result<(), StoreError> {
        let (Some((p, version)), Some(fence)) = (&self.renewed(table, t), t.fence) else {
            return Ok(());
        };
        let next = Pointer {
            lease: None,
            ..p.clone()
        };
        debug_assert_eq!(next.fence, fence);
        match self
            .root
            .put_versioned(&pointer_key(table), json(&next)?, Some(version))?
        {
            Some(_) => Ok(()),
            None => {
                let holder = self
                    .read_pointer(table)?
                    .and_then(|(p, _)| p.lease.map(|l| l.holder))
                    .unwrap_or_else(|| "nobody".into());
                Err(LakeError::LeaseNotHeld {
                    table: table.to_owned(),
                    holder,
                }
                .into())
            }
        }
    }

    /// Publishes the table's working snapshot: the new parts, the receipt and its replay
    /// entry, the manifest, then the pointer, conditioned on the acquisition's version
    /// (`store.fold.pointer-commit`, `store.lease.stale-fence`).
    fn publish(&self, table: &str, t: &TableTxn) -> Result<(), StoreError> {
        // rule: store.lease.stale-fence — a lease whose renewal was lost writes nothing more
        self.lease_lost(table, t)?;
        let key = self.prepare(table, t)?;
        // the renewal stops only now: writing the parts may outlast the TTL
        let (pointer, version) = self
            .renewed(table, t)
            .ok_or_else(|| corrupt("a leased table without a pointer"))?;
        self.lease_lost(table, t)?;
        let next = Pointer {
            format_version: layout::format_text(),
            snapshot: Some(key),
            fence: pointer.fence,
            lease: None,
            pending: None,
        };
        self.point(table, &next, &version).map(|_| ())
    }

    /// Replaces the pointer of a table this transaction leased by `next`, conditioned on
    /// `version`; the version written, or [`LakeError::LeaseFenced`].
    fn point(&self, table: &str, next: &Pointer, version: &Version) -> Result<Version, StoreError> {
        match self
            .root
            .put_versioned(&pointer_key(table), json(next)?, Some(version))?
        {
            Some(v) => Ok(v),
            None => {
                // a retried request whose first attempt landed answers as a lost condition:
                // the pointer as we wrote it (our snapshot, fence, lease) says we won
                let now = self.read_pointer(table)?;
                if let Some((p, v)) = &now {
                    if p == next {
                        return Ok(v.version.clone());
                    }
                    // ...or, a plain publication, a head that later writers built on it
                    if next.pending.is_none() && next.lease.is_none() {
                        if let Some(ours) = &next.snapshot {
                            let head = self.resolved(p.clone(), false)?.snapshot;
                            if self.descends_from(head, ours, next.fence)? {
                                return Ok(v.version.clone());
                            }
                        }
                    }
                }
                // rule: store.lease.stale-fence — the head is fenced past us
                let current = now.map(|(p, _)| p.fence).unwrap_or(0);
                Err(LakeError::LeaseFenced {
                    table: table.to_owned(),
                    fence: next.fence,
                    current,
                }
                .into())
            }
        }
    }

    /// Whether the snapshot `head` is `ours` or has it as an ancestor; the walk stops at the
    /// first snapshot written under a fence below `fence` (ours was written under `fence`).
    fn descends_from(
        &self,
        mut head: Option<String>,
        ours: &str,
        fence: u64,
    ) -> Result<bool, StoreError> {
        while let Some(key) = head {
            if key == ours {
                return Ok(true);
            }
            let Some(b) = self.root.get(&key)? else {
                return Ok(false);
            };
            let s: SnapshotManifest = parse(&key, &b)?;
            if s.fence < fence {
                return Ok(false);
            }
            head = s.parent;
        }
        Ok(false)
    }

    /// Publishes several tables at once: each pointer names its new snapshot as pending on
    /// one decision object (keeping the lease), then the decision is created committed (the
    /// one write that publishes them all), then each pointer is settled and its lease
    /// released. Until the decision exists every reader sees every table's previous head; a
    /// writer that loses a pointer's condition, or finds the decision aborted (an acquisition
    /// after its lease expired made it so), raises [`LakeError::LeaseFenced`] and publishes
    /// nothing.
    fn publish_together(&self, tables: &[(&String, &TableTxn)]) -> Result<(), StoreError> {
        let commit = format!("commits/{}.json", uuid::Uuid::new_v4().simple());
        let mut prepared = Vec::with_capacity(tables.len());
        for (name, t) in tables {
            self.lease_lost(name, t)?;
        }
        let mut keys = Vec::with_capacity(tables.len());
        for (name, t) in tables {
            keys.push(self.prepare(name, t)?);
        }
        for ((name, t), key) in tables.iter().zip(keys) {
            // rule: store.lease.stale-fence — the renewal stopped, a lost lease publishes nothing
            let (pointer, version) = self
                .renewed(name, t)
                .ok_or_else(|| corrupt("a leased table without a pointer"))?;
            self.lease_lost(name, t)?;
            prepared.push((*name, pointer, version, key, t.head_key.clone()));
        }
        let abort = |e: StoreError| -> StoreError {
            let _ = self.committed(
                &Pending {
                    commit: commit.clone(),
                    previous: None,
                },
                true,
            );
            e
        };
        let mut pointed = Vec::with_capacity(prepared.len());
        for (name, pointer, version, key, previous) in &prepared {
            let next = Pointer {
                format_version: layout::format_text(),
                snapshot: Some(key.clone()),
                fence: pointer.fence,
                lease: pointer.lease.clone(),
                pending: Some(Pending {
                    commit: commit.clone(),
                    previous: previous.clone(),
                }),
            };
            let v = self.point(name, &next, version).map_err(abort)?;
            pointed.push((*name, next, v));
        }
        let committed = json(&CommitDecision {
            outcome: "committed".into(),
        })?;
        if !self.root.create(&commit, committed)? {
            // a retried create whose first attempt landed reads committed
            let pending = Pending {
                commit: commit.clone(),
                previous: None,
            };
            if !self.committed(&pending, false)? {
                let (name, next, _) = &pointed[0];
                let current = self.read_pointer(name)?.map(|(p, _)| p.fence).unwrap_or(0);
                return Err(LakeError::LeaseFenced {
                    table: (*name).clone(),
                    fence: next.fence,
                    current,
                }
                .into());
            }
        }
        // settled: the pointers name their heads plainly and the leases are released; one
        // left pending (a crash, a lease lost) reads the same through the decision
        for (name, next, v) in pointed {
            let settled = Pointer {
                lease: None,
                pending: None,
                ..next
            };
            let _ = self
                .root
                .put_versioned(&pointer_key(name), json(&settled)?, Some(&v));
        }
        Ok(())
    }

    /// Writes the table's working snapshot: its new parts, the receipt and its replay entry,
    /// then the snapshot manifest, each under a key nobody else writes; the manifest's key.
    fn prepare(&self, table: &str, t: &TableTxn) -> Result<String, StoreError> {
        let fence = t
            .fence
            .ok_or_else(|| corrupt(format!("{table:?} was changed without its lease")))?;
        let dir = table_dir(table);
        let columns = t.columns.clone();
        let mut parts: Vec<PartRef> = Vec::with_capacity(t.parts.len());
        let mut pending: Vec<Vec<Datum>> = Vec::new();
        let flush =
            |pending: &mut Vec<Vec<Datum>>, parts: &mut Vec<PartRef>| -> Result<(), StoreError> {
                if pending.is_empty() {
                    return Ok(());
                }
                let cols = columns
                    .as_deref()
                    .ok_or_else(|| corrupt(format!("rows for {table:?}, which has no columns")))?;
                parts.push(self.write_part(table, cols, pending, false)?);
                pending.clear();
                Ok(())
            };
        for part in &t.parts {
            match part {
                Part::Ref(r) => {
                    flush(&mut pending, &mut parts)?;
                    parts.push(r.clone());
                }
                Part::Rows(rows) => pending.extend(rows.iter().cloned()),
                Part::Encoded(bytes, rows) => {
                    flush(&mut pending, &mut parts)?;
                    parts.push(self.put_part(table, bytes.clone(), *rows, false)?);
                }
                Part::Deletes(keys) => {
                    flush(&mut pending, &mut parts)?;
                    if !keys.is_empty() {
                        let cols = columns.as_deref().ok_or_else(|| {
                            corrupt(format!("deletions in {table:?}, which has no columns"))
                        })?;
                        parts.push(self.write_part(table, &key_defs(cols), keys, true)?);
                    }
                }
            }
        }
        flush(&mut pending, &mut parts)?;
        if let Some(r) = &t.receipt {
            self.root
                .put(&receipt_key(table, r.seq, r.fence), json(r)?)?;
            if r.outcome == "accepted" {
                self.root.put(
                    &by_manifest_key(table, &r.manifest_identity, r.seq, r.fence),
                    Bytes::new(),
                )?;
            }
        }
        let key = format!(
            "tables/{dir}/snapshots/{fence:020}-{}.json",
            uuid::Uuid::new_v4().simple()
        );
        let overlapping = t.overlapping && (parts.len() > 1 || parts.iter().any(|p| p.deletes));
        let (ledger, ledger_pages) = match &t.ledger {
            StoredLedger::None => (None, None),
            StoredLedger::Whole(doc) => (Some(doc.clone()), None),
            StoredLedger::Paged(p) => {
                // the pages before the manifest that names them (unnamed, they are unread)
                for (id, bytes) in &t.new_pages {
                    if p.pages.iter().any(|r| r.id == *id) {
                        self.root.put(&layout::page_key(table, id), bytes.clone())?;
                    }
                }
                (None, Some(p.clone()))
            }
        };
        let created_at = Utc::now().to_rfc3339();
        // the index of every delivery the chain folds, over the parent's (store.fold.folded-index)
        let own = t.receipt.as_ref().map(|r| crate::runs::Run {
            seq: r.seq,
            fence: r.fence,
            manifest: r.manifest_identity.clone(),
            outcome: r.outcome.clone(),
            snapshot: key.clone(),
            committed_at: created_at.clone(),
        });
        let folded_runs = crate::runs::next_index(
            &self.root,
            table,
            &key,
            t.head_key.as_deref().map(|h| (h, t.folded.as_ref())),
            own,
        )?;
        let manifest = SnapshotManifest {
            format_version: Some(layout::indexed_format_text(
                overlapping,
                ledger_pages.is_some(),
                folded_runs.is_some(),
            )),
            table: table.to_owned(),
            parent: t.head_key.clone(),
            fence,
            created_at,
            columns,
            parts,
            ledger,
            ledger_pages,
            receipts: t.receipts,
            accepted: t.accepted,
            receipt: t.receipt.as_ref().map(|r| ReceiptRef {
                seq: r.seq,
                fence: r.fence,
            }),
            group: t.group.clone(),
            schema: Some(t.schema.clone()),
            overlapping,
            folded_runs,
        };
        self.root.put(&key, json(&manifest)?)?;
        // a store on a disposable disk marks the publication unpushed in its bucket before
        // its pointer moves (store.drain.mark)
        crate::sync::drain::mark_publication(&self.root, table, &key)?;
        Ok(key)
    }

    /// The staged live rows, in the layout's columns (decoded from the staged part when
    /// they were encoded).
    fn staged_live(&mut self, table: &str) -> Result<Vec<Vec<Datum>>, StoreError> {
        let Some(s) = self.staged.get_mut(table) else {
            return Ok(Vec::new());
        };
        match &mut s.part {
            Some(p) => {
                let (bytes, _) = p.sealed()?;
                parts::decode(&p.columns, bytes)
            }
            None => Ok(s.rows.clone()),
        }
    }

    /// For each part of `t`, which of its rows are current: no later part holds the row's
    /// key (as a row or a deletion). Reads only the key columns of every part.
    fn current_flags(
        &self,
        t: &TableTxn,
        columns: &[ColumnDef],
    ) -> Result<Vec<Vec<bool>>, StoreError> {
        let keys = key_defs(columns);
        let mut seen: HashSet<String> = HashSet::new();
        let mut out = vec![Vec::new(); t.parts.len()];
        for (i, p) in t.parts.iter().enumerate().rev() {
            let rows = match p {
                Part::Ref(r) => {
                    let Some(b) = self.root.get(&r.path)? else {
                        return Err(self.missing_part(t.head_key.as_deref(), &r.path));
                    };
                    parts::decode(&keys, b)?
                }
                Part::Deletes(k) => k.clone(),
                other => {
                    let at = key_positions(columns);
                    self.part_rows(t, other)?
                        .into_iter()
                        .map(|r| at.iter().map(|i| r[*i].clone()).collect())
                        .collect()
                }
            };
            if p.is_deletes() {
                seen.extend(rows.into_iter().map(key_text));
                continue;
            }
            let mut flags = vec![false; rows.len()];
            for (j, k) in rows.into_iter().enumerate().rev() {
                flags[j] = seen.insert(key_text(k));
            }
            out[i] = flags;
        }
        Ok(out)
    }

    /// Writes one new Parquet part of `rows` (of `columns`) under a fresh key: its reference.
    fn write_part(
        &self,
        table: &str,
        columns: &[ColumnDef],
        rows: &[Vec<Datum>],
        deletes: bool,
    ) -> Result<PartRef, StoreError> {
        self.put_part(
            table,
            parts::encode(table, columns, rows)?,
            rows.len() as u64,
            deletes,
        )
    }

    /// Writes one encoded Parquet part under a fresh key: its reference.
    fn put_part(
        &self,
        table: &str,
        bytes: Bytes,
        rows: u64,
        deletes: bool,
    ) -> Result<PartRef, StoreError> {
        let path = format!(
            "tables/{}/parts/{}.parquet",
            table_dir(table),
            uuid::Uuid::new_v4().simple()
        );
        let size = bytes.len() as u64;
        self.root.put(&path, bytes)?;
        Ok(PartRef {
            path,
            rows,
            bytes: size,
            deletes,
        })
    }

    /// The current rows of the working table, part by part: all of them in a keyless table;
    /// in a keyed one, each row no later part holds the key of.
    fn rows_of(&self, t: &TableTxn) -> Result<Vec<Vec<Datum>>, StoreError> {
        Ok(self.current_by_part(t, 0)?.into_iter().flatten().collect())
    }

    /// The current rows of each part from position `from` on (a deletion part: none), in
    /// the parts' order. Parts before `from` are not read.
    fn current_by_part(
        &self,
        t: &TableTxn,
        from: usize,
    ) -> Result<Vec<Vec<Vec<Datum>>>, StoreError> {
        let cols = t.columns.as_deref().unwrap_or_default();
        let tail = t.parts.get(from..).unwrap_or_default();
        let decoded = tail
            .iter()
            .map(|p| Ok((p.is_deletes(), self.part_rows(t, p)?)))
            .collect::<Result<Vec<_>, StoreError>>()?;
        current_rows(&key_positions(cols), t.overlapping, decoded)
    }

    /// The rows a part holds as written (a deletion part: its keys), current or not.
    fn part_rows(&self, t: &TableTxn, p: &Part) -> Result<Vec<Vec<Datum>>, StoreError> {
        match p {
            Part::Rows(r) | Part::Deletes(r) => Ok(r.clone()),
            Part::Encoded(bytes, _) => {
                let cols = t
                    .columns
                    .as_deref()
                    .ok_or_else(|| corrupt("a part in a table without columns"))?;
                parts::decode(cols, bytes.clone())
            }
            Part::Ref(r) => {
                let cols = t
                    .columns
                    .as_deref()
                    .ok_or_else(|| corrupt("a part in a table without columns"))?;
                let Some(b) = self.root.get(&r.path)? else {
                    return Err(self.missing_part(t.head_key.as_deref(), &r.path));
                };
                if r.deletes {
                    parts::decode(&key_defs(cols), b)
                } else {
                    parts::decode(cols, b)
                }
            }
        }
    }

    /// Removes the rows `gone` selects, rewriting only the parts that hold one.
    fn delete_where(
        &mut self,
        table: &str,
        gone: impl Fn(&[Datum]) -> bool,
    ) -> Result<(), StoreError> {
        let t = self
            .tables
            .get(table)
            .cloned()
            .ok_or_else(|| corrupt("no table"))?;
        let mut parts = Vec::with_capacity(t.parts.len());
        let mut changed = false;
        for p in &t.parts {
            if p.is_deletes() {
                // its keys stay deleted: whatever this removes, it removes every copy
                parts.push(p.clone());
                continue;
            }
            let rows = self.part_rows(&t, p)?;
            let before = rows.len();
            let kept: Vec<Vec<Datum>> = rows.into_iter().filter(|r| !gone(r)).collect();
            if kept.len() == before {
                parts.push(p.clone()); // rule: store.fold.carry-by-reference
            } else {
                changed = true;
                if !kept.is_empty() {
                    parts.push(Part::Rows(kept));
                }
            }
        }
        let t = self.table(table)?;
        if changed {
            t.parts = parts;
            t.dirty = true;
        }
        Ok(())
    }

    fn col_index(&self, table: &str, name: &str) -> Result<usize, StoreError> {
        self.tables
            .get(table)
            .and_then(|t| t.columns.as_ref())
            .and_then(|c| c.iter().position(|c| c.name == name))
            .ok_or_else(|| corrupt(format!("table {table:?} has no column {name:?}")))
    }

    /// The published receipt at `seq`: the object of the highest fence there.
    fn receipt_at(&self, table: &str, seq: u64) -> Result<Option<(u64, String)>, StoreError> {
        let fence = self
            .root
            .list(&receipt_seq_prefix(table, seq))?
            .iter()
            .filter_map(|k| parse_receipt_key(k))
            .filter(|(s, _)| *s == seq)
            .map(|(_, f)| f)
            .max();
        Ok(fence.map(|f| (f, receipt_key(table, seq, f))))
    }

    /// The published state of `table`, as a reader of the store sees it now: its columns and
    /// the keys of its Parquet parts (for outside readers, [`crate::sql`]).
    pub fn published(&self, table: &str) -> Result<Option<Published>, StoreError> {
        Ok(self.published_snapshot(table)?.map(|(p, _)| p))
    }

    /// [`Lake::published`], and whether the parts may overlap (a keyed table's later part
    /// shadowing an earlier one's rows: [`SnapshotManifest::overlapping`]).
    pub fn published_snapshot(&self, table: &str) -> Result<Option<(Published, bool)>, StoreError> {
        let p = self.read_head(table)?;
        let mut t = self.load(table, p)?;
        let overlapping = t.overlapping;
        let ledger = self.ledger_document(table, &std::mem::take(&mut t.ledger))?;
        Ok(t.columns
            .map(|c| {
                (
                    c,
                    t.parts
                        .into_iter()
                        .filter_map(|p| match p {
                            Part::Ref(r) => Some(r),
                            Part::Rows(_) | Part::Deletes(_) | Part::Encoded(..) => None,
                        })
                        .collect(),
                    ledger,
                )
            })
            .map(|p| (p, overlapping)))
    }

    /// The tables of the store (every table with a pointer), sorted.
    pub fn table_names(&self) -> Result<Vec<String>, StoreError> {
        let mut out: Vec<String> = self
            .root
            .list_dirs("tables")?
            .iter()
            .filter_map(|d| table_of_dir(d))
            .collect();
        out.sort();
        Ok(out)
    }

    /// The snapshot manifest at `key`, read and its format checked.
    pub fn snapshot(&self, key: &str) -> Result<SnapshotManifest, StoreError> {
        let b = self
            .root
            .get(key)?
            .ok_or_else(|| corrupt(format!("snapshot {key} is missing")))?;
        checked(key, &b)
    }

    /// The ledger document a snapshot holds: whole in it, or read from the pages it names
    /// (None before the first acceptance).
    pub fn snapshot_ledger(&self, s: &SnapshotManifest) -> Result<Option<String>, StoreError> {
        let ledger = StoredLedger::of(s.ledger.clone(), s.ledger_pages.clone());
        self.ledger_document(&s.table, &ledger)
    }

    /// The error for a part a snapshot names and the store lacks: on a replica,
    /// [`LakeError::ReplicaPartialParquet`] (`store.replicate.partial-parquet`).
    fn missing_part(&self, snapshot: Option<&str>, part: &str) -> StoreError {
        if matches!(crate::replica::canonical_of(&self.root), Ok(Some(_))) {
            let table = part
                .strip_prefix("tables/")
                .and_then(|r| r.split('/').next())
                .and_then(table_of_dir)
                .unwrap_or_default();
            return LakeError::ReplicaPartialParquet {
                table,
                snapshot: snapshot.unwrap_or("the working snapshot").to_owned(),
                part: part.to_owned(),
            }
            .into();
        }
        corrupt(format!("part {part} is missing"))
    }

    /// `table`'s current snapshot key and its pointer's fence, as a reader sees them now
    /// (None: no pointer).
    pub fn current(&self, table: &str) -> Result<Option<(Option<String>, u64)>, StoreError> {
        Ok(self.read_head(table)?.map(|(p, _)| (p.snapshot, p.fence)))
    }

    /// The key of `table`'s current snapshot, as a reader sees it now.
    pub fn head(&self, table: &str) -> Result<Option<String>, StoreError> {
        Ok(self.read_head(table)?.and_then(|(p, _)| p.snapshot))
    }

    /// Every row of the snapshot at `key`, part by part, in its columns.
    pub fn snapshot_rows(&self, key: &str) -> Result<Vec<Vec<Datum>>, StoreError> {
        let s = self.snapshot(key)?;
        let Some(cols) = s.columns else {
            return Ok(Vec::new());
        };
        let mut decoded = Vec::with_capacity(s.parts.len());
        for p in &s.parts {
            let Some(b) = self.root.get(&p.path)? else {
                if self.root.get(&layout::collected_marker(key))?.is_some() {
                    return Err(LakeError::PartCollected {
                        snapshot: key.to_owned(),
                        part: p.path.clone(),
                    }
                    .into());
                }
                return Err(self.missing_part(Some(key), &p.path));
            };
            let rows = if p.deletes {
                parts::decode(&key_defs(&cols), b)?
            } else {
                parts::decode(&cols, b)?
            };
            decoded.push((p.deletes, rows));
        }
        Ok(current_rows(&key_positions(&cols), s.overlapping, decoded)?
            .into_iter()
            .flatten()
            .collect())
    }

    /// Commits the open write transaction (the renewal stopped before each pointer write).
    fn commit_held(&mut self) -> Result<(), StoreError> {
        let tables = std::mem::take(&mut self.tables);
        self.txn = None;
        let dirty: Vec<(&String, &TableTxn)> = tables
            .iter()
            .filter(|(_, t)| t.fence.is_some() && t.dirty)
            .collect();
        if dirty.len() > 1 {
            // several tables change: one decision publishes them all
            let r = self.publish_together(&dirty);
            for (name, t) in &tables {
                // a publication that failed (a value refused at its encoding) releases its
                // leases too; the release is conditioned on the acquisition's version, so it
                // leaves a pointer this commit already moved as it is
                if t.fence.is_some() && (!t.dirty || r.is_err()) {
                    let _ = self.release(name, t);
                }
            }
            if r.is_ok() {
                self.renewal = None;
                self.fold_after(dirty_names(&tables));
            }
            return r;
        }
        let mut first_err = None;
        for (name, t) in &tables {
            if t.fence.is_none() {
                continue;
            }
            let r = if first_err.is_some() {
                self.release(name, t).or(Ok(()))
            } else if t.dirty {
                self.publish(name, t)
            } else {
                // nothing to publish: a lease lost meanwhile changes nothing either
                self.release(name, t).or(Ok(()))
            };
            if let Err(e) = r {
                if t.dirty {
                    // as above: a failed publication holds its lease no longer
                    let _ = self.release(name, t);
                }
                first_err = Some(e);
            }
        }
        match first_err {
            None => {
                self.renewal = None;
                self.fold_after(dirty_names(&tables));
                Ok(())
            }
            Some(e) => Err(e),
        }
    }

    /// Who this handle is, as a lease names its holder.
    pub fn holder(&self) -> &str {
        &self.holder
    }

    /// Releases the write lease the open transaction holds on `table` (changing nothing
    /// else); [`LakeError::LeaseNotHeld`] when another holder took it meanwhile.
    pub fn release_lease(&mut self, table: &str) -> Result<(), StoreError> {
        self.sync_renewal();
        match self.tables.remove(table) {
            Some(t) => {
                let r = self.release(table, &t);
                self.start_renewal()?;
                r
            }
            None => Err(LakeError::LeaseNotHeld {
                table: table.to_owned(),
                holder: "not taken by this transaction".into(),
            }
            .into()),
        }
    }

    /// The write lease's fence this handle holds on `table` in the open transaction.
    pub fn held_fence(&self, table: &str) -> Option<u64> {
        self.tables.get(table).and_then(|t| t.fence)
    }

    /// A second handle on the same root (its own runtime and holder id).
    pub fn try_clone(&self) -> Result<Lake, StoreError> {
        Ok(Lake {
            root: self.root.reopen()?,
            options: self.options.clone(),
            write: self.write,
            txn: None,
            tables: BTreeMap::new(),
            staged: HashMap::new(),
            holder: format!(
                "pid {} ({})",
                std::process::id(),
                &uuid::Uuid::new_v4().simple().to_string()[..12]
            ),
            renewal: None,
            renew_root: None,
            // a second handle stands for another process: it keeps no page of this one's
            pages: Default::default(),
        })
    }

    /// Changes the open write transaction's copy of `table` (the harness's damage).
    pub(crate) fn with_table<T>(
        &mut self,
        table: &str,
        f: impl FnOnce(&mut Vec<Vec<Datum>>, &mut Option<Vec<ColumnDef>>, &mut StoredLedger) -> T,
    ) -> Result<T, StoreError> {
        let t = self
            .tables
            .get(table)
            .cloned()
            .ok_or_else(|| corrupt("no table"))?;
        let mut rows = if t.columns.is_some() {
            self.rows_of(&t)?
        } else {
            Vec::new()
        };
        let t = self.table(table)?;
        let out = f(&mut rows, &mut t.columns, &mut t.ledger);
        t.parts = vec![Part::Rows(rows)];
        t.overlapping = false;
        t.dirty = true;
        Ok(out)
    }
}

impl Open for Lake {
    type Options = LakeOptions;

    fn open(path: &Path, options: &LakeOptions, write: bool) -> Result<Lake, StoreError> {
        let spec = path
            .to_str()
            .ok_or_else(|| LakeError::Root(format!("{} is not UTF-8", path.display())))?;
        // a reader creates nothing: a local root (a path, or a file:// URL) must exist
        let local = if spec.contains("://") {
            url::Url::parse(spec)
                .ok()
                .filter(|u| u.scheme() == "file")
                .and_then(|u| u.to_file_path().ok())
        } else {
            Some(path.to_path_buf())
        };
        if !write && local.is_some_and(|p| !p.exists()) {
            return Err(StoreError::NotAStore(format!("{spec} does not exist")));
        }
        let root = Root::open(spec)?;
        Lake::open_root(root, options.clone(), write)
    }
}

impl Backend for Lake {
    const TEXT_TIMES: bool = false;

    fn begin(&mut self, txn: Txn, tables: &[&str]) -> Result<(), StoreError> {
        self.renewal = None;
        self.tables.clear();
        if txn == Txn::Write {
            if !self.write {
                return Err(StoreError::Unavailable(format!(
                    "{} is open for reading only",
                    self.root.url()
                )));
            }
            let mut sorted: Vec<&str> = tables.to_vec();
            sorted.sort_unstable();
            sorted.dedup();
            for table in sorted {
                match self.acquire(table) {
                    Ok(t) => {
                        self.tables.insert(table.to_owned(), t);
                    }
                    Err(e) => {
                        self.txn = Some(txn);
                        self.rollback();
                        return Err(e);
                    }
                }
            }
            if let Err(e) = self.start_renewal() {
                self.txn = Some(txn);
                self.rollback();
                return Err(e);
            }
        }
        self.txn = Some(txn);
        Ok(())
    }

    fn commit(&mut self) -> Result<(), StoreError> {
        let r = self.commit_held();
        self.renewal = None;
        r
    }

    fn rollback(&mut self) {
        let tables = std::mem::take(&mut self.tables);
        self.txn = None;
        for (name, t) in &tables {
            let _ = self.release(name, t);
        }
        self.renewal = None;
    }

    fn ledger(&mut self, table: &str) -> Result<Option<String>, StoreError> {
        let ledger = self.table(table)?.ledger.clone();
        self.ledger_document(table, &ledger)
    }

    fn keeps_ledger_rows(&self) -> bool {
        true
    }

    fn ledger_identity(&mut self, table: &str) -> Result<Option<String>, StoreError> {
        Ok(match &self.table(table)?.ledger {
            StoredLedger::Paged(p) => Some(p.identity.clone()),
            // a document kept whole (an earlier snapshot) is read and hashed by the engine
            StoredLedger::None | StoredLedger::Whole(_) => None,
        })
    }

    fn save_ledger_rows(
        &mut self,
        table: &str,
        identity: &str,
        rows: &dogana::LedgerRows,
    ) -> Result<(), StoreError> {
        self.check_renewal()?;
        let stored = self.table(table)?.ledger.clone();
        let (pages, whole) = match &stored {
            StoredLedger::None => (Vec::new(), None),
            StoredLedger::Paged(p) => (p.pages.clone(), None),
            // the first save over a document kept whole: its regions become pages
            StoredLedger::Whole(doc) => (Vec::new(), Some(whole_regions(table, doc)?)),
        };
        let edited = pages::edit(&pages, whole, rows, self.options.ledger_page_bytes, |p| {
            self.page(table, p)
        })?;
        let t = self.table(table)?;
        for new in &edited.new {
            t.new_pages.push((new.page.id.clone(), new.bytes.clone()));
        }
        t.ledger = StoredLedger::Paged(LedgerPages {
            identity: identity.to_owned(),
            head: rows.head.clone(),
            tail: rows.tail.clone(),
            pages: edited.pages,
        });
        t.dirty = true;
        let mut cache = self.pages.lock().unwrap_or_else(|e| e.into_inner());
        for new in edited.new {
            cache.keep(&new.page, new.regions);
        }
        Ok(())
    }

    fn accepted_receipt(
        &mut self,
        table: &str,
        manifest: &str,
    ) -> Result<Option<String>, StoreError> {
        let published = self.table(table)?.receipts;
        let mut entries: Vec<(u64, u64)> = self
            .root
            .list(&by_manifest_prefix(table, manifest))?
            .iter()
            .filter_map(|k| parse_by_manifest_key(k))
            .filter(|(seq, _)| *seq <= published)
            .collect();
        entries.sort_unstable();
        for (seq, fence) in entries {
            let Some((f, key)) = self.receipt_at(table, seq)? else {
                continue;
            };
            if f != fence {
                continue; // an unpublished writer's entry
            }
            let Some(b) = self.root.get(&key)? else {
                continue;
            };
            let r: ReceiptObject = parse(&key, &b)?;
            if r.outcome == "accepted" && r.manifest_identity == manifest {
                return Ok(Some(r.document));
            }
        }
        Ok(None)
    }

    fn receipts(&mut self, table: &str) -> Result<Vec<ReceiptRow>, StoreError> {
        let (published, head) = {
            let t = self.table(table)?;
            (t.receipts, t.head_key.clone())
        };
        let mut best: BTreeMap<u64, u64> = BTreeMap::new();
        // the head's folded-runs index names each published receipt; where it does not
        // validate, the chain is walked down to one that does (crate::runs)
        let runs = match &head {
            Some(h) => crate::runs::runs_of(&self.root, table, h)?,
            None => Some(Vec::new()),
        };
        match runs {
            Some(runs) => {
                for r in runs.into_iter().filter(|r| r.seq <= published) {
                    best.insert(r.seq, r.fence);
                }
            }
            // a chain with a missing manifest: the receipts as listed
            None => {
                for (seq, fence) in self
                    .root
                    .list(&receipts_prefix(table))?
                    .iter()
                    .filter_map(|k| parse_receipt_key(k))
                {
                    if seq <= published {
                        let f = best.entry(seq).or_insert(fence);
                        *f = (*f).max(fence);
                    }
                }
            }
        }
        let mut out = Vec::with_capacity(best.len());
        for (seq, fence) in best {
            let key = receipt_key(table, seq, fence);
            let Some(b) = self.root.get(&key)? else {
                continue;
            };
            let r: ReceiptObject = parse(&key, &b)?;
            out.push(ReceiptRow {
                seq: r.seq as i64,
                identity: r.identity,
                manifest_identity: r.manifest_identity,
                outcome: r.outcome,
                accepted_order: r.accepted_order.map(|o| o as i64),
                document: r.document,
            });
        }
        Ok(out)
    }

    fn tables(&mut self) -> Result<Vec<String>, StoreError> {
        let mut out = Vec::new();
        for dir in self.root.list_dirs("tables")? {
            let Some(name) = table_of_dir(&dir) else {
                continue;
            };
            let t = self.table(&name)?;
            if !matches!(t.ledger, StoredLedger::None) || t.receipts > 0 {
                out.push(name);
            }
        }
        out.sort();
        Ok(out)
    }

    fn group_of(&mut self, table: &str) -> Result<Option<Vec<String>>, StoreError> {
        Ok(self.table(table)?.group.clone())
    }

    /// The group is recorded in each of its tables' next snapshots, which the commit
    /// publishes together with the deliveries' rows, ledgers and receipts (one decision for
    /// all of them, `Lake::publish_together`).
    fn save_group(&mut self, tables: &[String]) -> Result<(), StoreError> {
        let leased: Vec<String> = self
            .tables
            .iter()
            .filter(|(_, t)| t.fence.is_some())
            .map(|(n, _)| n.clone())
            .collect();
        for member in tables {
            let name = leased
                .iter()
                .find(|n| n.to_lowercase() == *member)
                .cloned()
                .ok_or_else(|| {
                    corrupt(format!(
                        "the group's table {member:?} is not written by this transaction"
                    ))
                })?;
            let t = self.table(&name)?;
            if t.group.as_deref() != Some(tables) {
                t.group = Some(tables.to_vec());
                t.dirty = true;
            }
        }
        Ok(())
    }

    fn published_columns(&mut self, table: &str) -> Result<Option<Vec<String>>, StoreError> {
        Ok(self
            .table(table)?
            .columns
            .as_ref()
            .map(|c| c.iter().map(|c| c.name.clone()).collect()))
    }

    fn stage_create(&mut self, table: &str, layout: &Layout) -> Result<(), StoreError> {
        let columns = ColumnDef::staged(layout);
        // the lattice's typed columns check each value as it is encoded: held as values,
        // they are encoded (and refused) only once published, as before
        let plain = parts::PartWriter::plain(&columns);
        // a column the stored schema holds in another kind lands in the stored type
        // (`store.reconcile.stored-type`) from the values as they arrived: held as values too
        let stored = self
            .table(table)
            .map(|t| t.schema.clone())
            .unwrap_or_default();
        let same = columns.iter().all(|c| {
            stored.iter().find(|s| s.name == c.name).is_none_or(|s| {
                parts::Kind::of(s.ty.as_deref()) == parts::Kind::of(c.ty.as_deref())
            })
        });
        let part = if plain && same {
            Some(StagedPart {
                writer: Some(parts::PartWriter::new(table, &columns)?),
                columns,
                sealed: None,
            })
        } else {
            None
        };
        self.staged.insert(
            table.to_owned(),
            StagedRows {
                part,
                ..StagedRows::default()
            },
        );
        Ok(())
    }

    fn stage_batch(
        &mut self,
        table: &str,
        _layout: &Layout,
        batch: &Batch,
    ) -> Result<(), StoreError> {
        self.check_renewal()?;
        let s = self
            .staged
            .get_mut(table)
            .ok_or_else(|| corrupt(format!("no staging area for {table:?}")))?;
        let hold = |row: Row<'_>| -> Vec<Datum> {
            (0..row.len()).map(|i| Datum::from(row.get(i))).collect()
        };
        s.tombstones
            .extend(batch.rows().filter(|r| r.tombstone).map(hold));
        // a NULL key (which the engine's checks refuse) cannot be encoded in a key column:
        // such a delivery is held as values, as typed columns are
        if let Some(p) = s.part.as_mut() {
            let keys: Vec<usize> = (0..p.columns.len()).filter(|i| p.columns[*i].key).collect();
            if batch
                .rows()
                .any(|r| !r.tombstone && keys.iter().any(|i| r.get(*i) == Staged::Null))
            {
                let (bytes, _) = p.sealed()?;
                s.rows = parts::decode(&p.columns, bytes)?;
                s.part = None;
            }
        }
        match s.part.as_mut() {
            Some(p) => match p.writer.as_mut() {
                // the staged part's columns are the layout's, in its order
                Some(w) => w.write_batch(batch, &(0..p.columns.len()).collect::<Vec<_>>())?,
                None => return Err(corrupt("rows staged after the staged part was sealed")),
            },
            None => s
                .rows
                .extend(batch.rows().filter(|r| !r.tombstone).map(hold)),
        }
        Ok(())
    }

    fn stage_clear(&mut self, table: &str) -> Result<(), StoreError> {
        self.staged.remove(table);
        Ok(())
    }

    fn keys_outside(
        &mut self,
        table: &str,
        q: &KeysOutside<'_>,
    ) -> Result<(u64, Option<Vec<Datum>>), StoreError> {
        self.table(table)?;
        let key_at: Vec<usize> = q
            .key
            .iter()
            .map(|k| self.col_index(table, k))
            .collect::<Result<_, _>>()?;
        let w = self.col_index(table, q.column)?;
        let t = self
            .tables
            .get(table)
            .cloned()
            .ok_or_else(|| corrupt("no table"))?;
        // published rows outside the window, by key
        let mut outside: HashMap<String, Vec<Vec<Datum>>> = HashMap::new();
        for r in self.rows_of(&t)? {
            if r[w] == Datum::Null || !in_window(&r[w], &q.window.low, &q.window.high) {
                let k = key_text(key_at.iter().map(|i| r[*i].clone()));
                let mut hit: Vec<Datum> = key_at.iter().map(|i| r[*i].clone()).collect();
                hit.push(r[w].clone());
                outside.entry(k).or_default().push(hit);
            }
        }
        let live = self.staged_live(table)?;
        let empty = StagedRows::default();
        let s = self.staged.get(table).unwrap_or(&empty);
        let mut count = 0u64;
        let mut first = None;
        let staged_keys = live
            .iter()
            .map(|r| key_text(q.staged_key.iter().map(|i| r[*i].clone())))
            .chain(s.tombstones.iter().map(|r| key_text(r.iter().cloned())));
        for k in staged_keys {
            if let Some(hits) = outside.get(&k) {
                count += hits.len() as u64;
                if first.is_none() {
                    first = hits.first().cloned();
                }
            }
        }
        Ok((count, first))
    }

    fn execute(&mut self, table: &str, step: Step<'_>) -> Result<(), StoreError> {
        self.check_renewal()?;
        self.table(table)?;
        match step {
            Step::Create(columns) => {
                let t = self.table(table)?;
                // rule: store.reconcile.lattice — every column against the stored schema,
                // before anything changes (and long before any Parquet is written)
                let mut schema = t.schema.clone();
                let mut published = Vec::with_capacity(columns.len());
                for c in columns.iter() {
                    let c: &Column = c;
                    let ty = reconcile(table, &mut schema, &c.name, c.ty.as_deref(), c.key)?;
                    published.push(ColumnDef {
                        name: c.name.clone(),
                        ty,
                        key: c.key,
                    });
                }
                t.schema = schema;
                t.columns = Some(published);
                t.parts.clear();
                t.overlapping = false;
                t.dirty = true;
            }
            Step::Drop => {
                let t = self.table(table)?;
                t.columns = None;
                t.parts.clear();
                t.overlapping = false;
                t.dirty = true;
            }
            Step::BeginBulk(_) | Step::Indexes(_) => {}
            Step::DeleteAll => {
                let t = self.table(table)?;
                t.parts.clear();
                t.overlapping = false;
                t.dirty = true;
            }
            Step::DeleteWindow(column, window) => {
                let w = self.col_index(table, column)?;
                let (low, high) = (window.low.clone(), window.high.clone());
                let t = self.tables.get(table).ok_or_else(|| corrupt("no table"))?;
                let key_at = key_positions(t.columns.as_deref().unwrap_or_default());
                if key_at.is_empty() {
                    // keyless: rewrite the parts holding a row of the window
                    self.delete_where(table, |r| in_window(&r[w], &low, &high))?;
                } else {
                    // keyed: one deletion part of the current rows' keys in the window
                    // (a shadowed row's key is not named: a later part holds it)
                    let keys: Vec<Vec<Datum>> = self
                        .rows_of(t)?
                        .into_iter()
                        .filter(|r| in_window(&r[w], &low, &high))
                        .map(|r| key_at.iter().map(|i| r[*i].clone()).collect())
                        .collect();
                    if !keys.is_empty() {
                        let t = self.table(table)?;
                        t.parts.push(Part::Deletes(keys));
                        t.overlapping = true;
                        t.dirty = true;
                    }
                }
            }
            Step::DeleteKeys(key, from) => {
                let at: Vec<usize> = key
                    .iter()
                    .map(|k| self.col_index(table, k))
                    .collect::<Result<_, _>>()?;
                let t = self.tables.get(table).ok_or_else(|| corrupt("no table"))?;
                let key_at = key_positions(t.columns.as_deref().unwrap_or_default());
                let mut sorted = at.clone();
                sorted.sort_unstable();
                if !key_at.is_empty() && sorted == key_at {
                    // merge-on-read: the delivery's cost follows the delivery, not the table
                    // (pass-carries-untouched): no published part is read or rewritten
                    let KeysFrom::Tombstones = from else {
                        // the staged rows' own part, which InsertStaged adds next (the engine
                        // always follows these keys with it), shadows their keys
                        return Ok(());
                    };
                    // the tombstones' key columns, in the table's key order
                    let order: Vec<usize> = key_at
                        .iter()
                        .map(|c| at.iter().position(|a| a == c).unwrap_or(0))
                        .collect();
                    let keys: Vec<Vec<Datum>> = self
                        .staged
                        .get(table)
                        .map(|s| {
                            s.tombstones
                                .iter()
                                .map(|r| order.iter().map(|i| r[*i].clone()).collect())
                                .collect()
                        })
                        .unwrap_or_default();
                    if !keys.is_empty() {
                        let t = self.table(table)?;
                        t.parts.push(Part::Deletes(keys));
                        t.overlapping = true;
                        t.dirty = true;
                    }
                    return Ok(());
                }
                let live = match from {
                    KeysFrom::Rows(_) => self.staged_live(table)?,
                    KeysFrom::Tombstones => Vec::new(),
                };
                let empty = StagedRows::default();
                let s = self.staged.get(table).unwrap_or(&empty);
                let keys: HashSet<String> = match from {
                    KeysFrom::Rows(staged_at) => live
                        .iter()
                        .map(|r| key_text(staged_at.iter().map(|i| r[*i].clone())))
                        .collect(),
                    KeysFrom::Tombstones => s
                        .tombstones
                        .iter()
                        .map(|r| key_text(r.iter().cloned()))
                        .collect(),
                };
                if !keys.is_empty() {
                    self.delete_where(table, |r| {
                        keys.contains(&key_text(at.iter().map(|i| r[*i].clone())))
                    })?;
                }
            }
            Step::InsertStaged(layout) => {
                let cols = self
                    .tables
                    .get(table)
                    .and_then(|t| t.columns.clone())
                    .ok_or_else(|| {
                        corrupt(format!("insert into {table:?}, which has no columns"))
                    })?;
                let from: Vec<Option<usize>> =
                    cols.iter().map(|c| layout.column_of(&c.name)).collect();
                // rule: store.reconcile.lattice — the staged columns' types against the
                // stored ones: a promotion retypes the published column (its earlier parts
                // read back widened), anything else is refused before any Parquet
                let t = self.table(table)?;
                let mut schema = t.schema.clone();
                let mut cols = cols;
                for (c, i) in cols.iter_mut().zip(&from) {
                    let Some(i) = i else { continue };
                    let arriving = layout.types.get(*i).cloned().flatten();
                    // a key of the published table or of the arriving contract
                    let key = c.key || layout.key.iter().any(|(k, _)| *k == c.name);
                    let ty = reconcile(table, &mut schema, &c.name, arriving.as_deref(), key)?;
                    if LakeType::of_declared(ty.as_deref())
                        != LakeType::of_declared(c.ty.as_deref())
                    {
                        c.ty = ty;
                    }
                }
                t.schema = schema;
                if t.columns.as_ref() != Some(&cols) {
                    t.columns = Some(cols);
                }
                let published = self
                    .tables
                    .get(table)
                    .and_then(|t| t.columns.clone())
                    .unwrap_or_default();
                // the staged part as it is, when its columns are the published ones (the
                // Parquet schema both give); otherwise its rows, column by column
                let encoded = match self.staged.get_mut(table).and_then(|s| s.part.as_mut()) {
                    Some(p) if parts::schema(&p.columns) == parts::schema(&published) => {
                        Some(p.sealed()?)
                    }
                    _ => None,
                };
                let part = match encoded {
                    Some((_, 0)) => None,
                    Some((bytes, rows)) => Some(Part::Encoded(bytes, rows)),
                    None => {
                        let rows: Vec<Vec<Datum>> = self
                            .staged_live(table)?
                            .into_iter()
                            .map(|r| {
                                from.iter()
                                    .map(|i| i.map(|i| r[i].clone()).unwrap_or(Datum::Null))
                                    .collect()
                            })
                            .collect();
                        (!rows.is_empty()).then_some(Part::Rows(rows))
                    }
                };
                let t = self.table(table)?;
                if let Some(part) = part {
                    // a keyed table's new rows may shadow rows of its earlier parts
                    let keyed = t.columns.iter().flatten().any(|c| c.key);
                    t.overlapping |= keyed && !t.parts.is_empty();
                    t.parts.push(part);
                }
                t.dirty = true;
            }
        }
        Ok(())
    }

    fn save_ledger(&mut self, table: &str, document: &str) -> Result<(), StoreError> {
        self.check_renewal()?;
        let t = self.table(table)?;
        t.ledger = StoredLedger::Whole(document.to_owned());
        t.dirty = true;
        Ok(())
    }

    fn save_receipt(&mut self, table: &str, receipt: &Receipt) -> Result<(), StoreError> {
        self.check_renewal()?;
        let t = self.table(table)?;
        let fence = t
            .fence
            .ok_or_else(|| corrupt(format!("a receipt of {table:?} saved without its lease")))?;
        if t.receipt.is_some() {
            return Err(corrupt(format!(
                "a second receipt of {table:?} in one transaction"
            )));
        }
        let accepted = receipt.outcome() == Outcome::Accepted;
        t.receipts += 1;
        if accepted {
            t.accepted += 1;
        }
        t.receipt = Some(ReceiptObject {
            seq: t.receipts,
            fence,
            accepted_order: accepted.then_some(t.accepted),
            identity: receipt.identity(),
            manifest_identity: receipt.manifest().identity(),
            outcome: receipt.outcome().name().to_owned(),
            document: receipt.to_json(),
        });
        t.dirty = true;
        Ok(())
    }

    fn read_rows(
        &mut self,
        table: &str,
        columns: &[String],
    ) -> Result<Vec<Vec<Datum>>, StoreError> {
        self.table(table)?;
        let at: Vec<usize> = columns
            .iter()
            .map(|c| self.col_index(table, c))
            .collect::<Result<_, _>>()?;
        let t = self
            .tables
            .get(table)
            .cloned()
            .ok_or_else(|| corrupt("no table"))?;
        Ok(self
            .rows_of(&t)?
            .into_iter()
            .map(|r| at.iter().map(|i| r[*i].clone()).collect())
            .collect())
    }
}
