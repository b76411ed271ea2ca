//! The store's objects and their documents.
//!
//! ```text
//! <root>/store-id                                   one canonical v4 UUID
//! <root>/tables/<t>/_pointer.json                   Pointer: snapshot, fence, lease
//! <root>/tables/<t>/snapshots/<fence>-<uuid>.json   SnapshotManifest (immutable)
//! <root>/tables/<t>/parts/<uuid>.parquet            one Parquet part (immutable)
//! <root>/tables/<t>/ledger/<sha256>.regions          a page of ledger regions (immutable,
//!                                                   named by its bytes' SHA-256, shared)
//! <root>/tables/<t>/receipts/seq/<seq>/<fence>.json ReceiptObject (immutable)
//! <root>/tables/<t>/receipts/by-manifest/<manifest identity>/<seq>-<fence>   (empty)
//! ```
//!
//! `<t>` is the table name with every byte but `[A-Za-z0-9_-]` written `~XX` (hex), numbers
//! are zero-padded to 20 digits so keys sort by number.

use serde::{Deserialize, Serialize};

use crate::LakeError;

/// The format major and minor of a pointer, and of a snapshot whose parts are disjoint
/// (`store.lay-out.format-version`): major 2, since a snapshot references its parts; minor 0,
/// no folded_runs.
pub const FORMAT: (u32, u32) = (2, 0);

/// The format of a keyed table's snapshot whose parts may overlap (more than one part): a
/// later part shadows an earlier one's rows by key and a deletion part names deleted keys.
/// That changes what the parts mean, so it is a major (`manifest-carries-format`): a reader
/// of major 2 refuses such a snapshot instead of reading shadowed rows as current.
pub const OVERLAPPING_FORMAT: (u32, u32) = (3, 0);

/// The format of a snapshot whose ledger is kept in region pages ([`LedgerPages`]) rather
/// than whole in the manifest: a reader that knows only the inline ledger would read such a
/// snapshot as one without a ledger, so it is a major. What its parts mean is said by
/// [`SnapshotManifest::overlapping`], as in [`OVERLAPPING_FORMAT`].
pub const PAGED_FORMAT: (u32, u32) = (4, 0);

/// The format version as written (of a pointer, or a snapshot of disjoint parts).
pub fn format_text() -> String {
    format!("{}.{}", FORMAT.0, FORMAT.1)
}

/// [`snapshot_format_text`], one minor up when the snapshot carries a folded-runs index.
pub fn indexed_format_text(overlapping: bool, paged: bool, indexed: bool) -> String {
    let text = snapshot_format_text(overlapping, paged);
    if !indexed {
        return text;
    }
    match text.split_once('.') {
        Some((major, _)) => format!("{major}.1"),
        None => text,
    }
}

/// The format version a snapshot manifest is written with: [`PAGED_FORMAT`] when its ledger
/// is in pages, else [`OVERLAPPING_FORMAT`] when its parts may overlap, else [`FORMAT`].
pub fn snapshot_format_text(overlapping: bool, paged: bool) -> String {
    let (major, minor) = if paged {
        PAGED_FORMAT
    } else if overlapping {
        OVERLAPPING_FORMAT
    } else {
        FORMAT
    };
    format!("{major}.{minor}")
}

/// The newest format this build reads, as written in an error.
fn supported_text() -> String {
    indexed_format_text(true, true, true)
}

/// Reads a `format_version`: absent reads as 1.0, a newer minor as ours, a newer major is
/// refused naming the file and both versions (`store.lay-out.format-newer`).
pub fn check_format(file: &str, version: Option<&str>) -> Result<(u32, u32), LakeError> {
    let Some(v) = version else {
        return Ok((1, 0));
    };
    let parsed = v
        .split_once('.')
        .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)));
    let Some((major, minor)) = parsed else {
        return Err(LakeError::StoreManifestFormatNewer {
            file: file.to_owned(),
            found: v.to_owned(),
            supported: supported_text(),
        });
    };
    if major > PAGED_FORMAT.0 {
        return Err(LakeError::StoreManifestFormatNewer {
            file: file.to_owned(),
            found: v.to_owned(),
            supported: supported_text(),
        });
    }
    Ok((major, minor))
}

/// A table's name as one key segment: the one escaping every key, path, listing and URL of the
/// store uses. `[A-Za-z0-9_-]` stand for themselves; every other byte of the name's UTF-8 is
/// `!` and two hex digits (`order lines` is `order!20lines`). `!` is among the characters S3,
/// GCS, Azure and object_store's paths all keep as they are, so the segment is the same
/// bytes on a disk, in a bucket, in a listing and in a URL DuckDB reads: nothing encodes it
/// again (object_store percent-encodes `~` and `%`, which is why an earlier escape split a
/// table in two directories).
///
/// ```
/// use dogana_lake::layout::{table_dir, table_of_dir};
/// assert_eq!(table_dir("order lines"), "order!20lines");
/// assert_eq!(table_of_dir(&table_dir("Заказы")).as_deref(), Some("Заказы"));
/// ```
pub fn table_dir(table: &str) -> String {
    let mut s = String::with_capacity(table.len());
    for b in table.bytes() {
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'-' {
            s.push(b as char);
        } else {
            s.push_str(&format!("!{b:02X}"));
        }
    }
    s
}

/// The longest [`table_dir`] a table may take: a directory name is at most 255 bytes on
/// common filesystems, and an object key of a deep path stays far below S3's 1,024.
pub const TABLE_DIR_MAX: usize = 200;

/// Refuses a table whose escaped name ([`table_dir`]) is longer than [`TABLE_DIR_MAX`]
/// bytes, naming both lengths.
pub fn check_table_name(table: &str) -> Result<(), String> {
    let escaped = table_dir(table).len();
    if escaped > TABLE_DIR_MAX {
        return Err(format!(
            "{} takes {escaped} bytes as a lake directory name ({} bytes of UTF-8, each byte outside [A-Za-z0-9_-] written as three), and a lake table's is at most {TABLE_DIR_MAX}: use a shorter name",
            dogana::quoted(table, dogana::SHOWN),
            table.len()
        ));
    }
    Ok(())
}

/// The table name a key segment spells (None: not one this store wrote). Reads the `~XX`
/// escape of earlier stores too.
pub fn table_of_dir(dir: &str) -> Option<String> {
    let b = dir.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'!' || b[i] == b'~' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The key of a table's pointer.
pub fn pointer_key(table: &str) -> String {
    format!("tables/{}/_pointer.json", table_dir(table))
}

/// A key segment for a manifest identity (any text).
pub fn identity_dir(identity: &str) -> String {
    table_dir(identity)
}

/// The lease a pointer carries: who holds the table's write lease and for how long after the
/// pointer's write, by the storage's clock (`topology.coordinate.lease-row`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    /// The holder (a random id per acquisition, with host and process).
    pub holder: String,
    /// How long the lease lasts after the pointer was written, in milliseconds.
    pub ttl_ms: u64,
    /// How many times the holder renewed it (rewrote the pointer, changing nothing else), so
    /// each renewal's bytes, and a content-hash ETag, differ from the last. Absent: 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub renewals: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// `tables/<t>/_pointer.json`: the table's current snapshot, its commit fence and its lease
/// (`store.lay-out.table-pointer`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pointer {
    /// The pointer's format.
    pub format_version: String,
    /// The key of the current snapshot manifest (None: nothing published yet).
    pub snapshot: Option<String>,
    /// The commit fence: raised by every lease acquisition, kept by release
    /// (`topology.coordinate.fence-advances`).
    pub fence: u64,
    /// The write lease, while one is held (None: released).
    pub lease: Option<Lease>,
    /// A commit of several tables `snapshot` waits on: `snapshot` is the table's head only
    /// once that commit's decision object reads committed, `pending.previous` until then and
    /// when it reads aborted (absent: a single-table publication, `snapshot` is the head).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<Pending>,
}

/// The commit of several tables a pointer waits on (see [`Pointer::pending`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pending {
    /// The key of the commit's decision object, `commits/<uuid>.json`: created once, under
    /// If-None-Match, committed by the writer or aborted by whoever finds it missing after
    /// the writer's lease expired.
    pub commit: String,
    /// The table's head before the commit.
    pub previous: Option<String>,
}

/// `commits/<uuid>.json`: the decision of a commit of several tables.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitDecision {
    /// `committed` or `aborted`.
    pub outcome: String,
}

/// A published column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnDef {
    /// Its name.
    pub name: String,
    /// Its declared type name (None: text).
    pub ty: Option<String>,
    /// Whether it is part of the key.
    pub key: bool,
}

impl ColumnDef {
    /// The columns a delivery is staged in: the layout's, in its order, typed as it types
    /// them, the contract's key columns marked.
    pub fn staged(layout: &dogana_receiver::Layout) -> Vec<ColumnDef> {
        layout
            .loaded
            .iter()
            .zip(&layout.types)
            .map(|(name, ty)| ColumnDef {
                name: name.clone(),
                ty: ty.clone(),
                key: layout.key.iter().any(|(k, _)| k == name),
            })
            .collect()
    }
}

/// One Parquet part of a snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartRef {
    /// Its key.
    pub path: String,
    /// How many rows (a deletion part: keys) it holds.
    pub rows: u64,
    /// Its size in bytes.
    pub bytes: u64,
    /// A deletion part: it holds the key columns of keys deleted at its place in the list,
    /// and no rows (absent: a part of rows). Only a keyed table has them: a row of an earlier
    /// part whose key a later part holds, as a row or a deletion, is not current.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deletes: bool,
}

/// The receipt a snapshot published.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReceiptRef {
    /// Its place among the table's receipts.
    pub seq: u64,
    /// The fence it was written under.
    pub fence: u64,
}

/// `tables/<t>/snapshots/<fence>-<uuid>.json`: one published state of a table, whole: its
/// columns and parts (rows), its ledger and its receipts. Immutable once written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SnapshotManifest {
    /// The manifest's format (`store.lay-out.format-version`).
    pub format_version: Option<String>,
    /// The table.
    pub table: String,
    /// The previous snapshot's key (None for the first).
    pub parent: Option<String>,
    /// The fence the writer held (`store.fold.compaction-lease`).
    pub fence: u64,
    /// When it was written, by the writer's clock (RFC 3339).
    pub created_at: String,
    /// The published table's columns (None: no published table).
    pub columns: Option<Vec<ColumnDef>>,
    /// The published rows, part by part, in the table's order.
    pub parts: Vec<PartRef>,
    /// The ledger document, whole (None before the first acceptance, or when the ledger is
    /// in pages: [`SnapshotManifest::ledger_pages`]).
    pub ledger: Option<String>,
    /// The ledger as region pages that snapshots share (a delivery writes the pages it
    /// changed, not the ledger). Such a snapshot is written in [`PAGED_FORMAT`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger_pages: Option<LedgerPages>,
    /// How many receipts the table holds: receipts `1..=receipts` are published.
    pub receipts: u64,
    /// How many of them are acceptances.
    pub accepted: u64,
    /// The receipt this snapshot published, if it published one.
    pub receipt: Option<ReceiptRef>,
    /// The group the table is delivered in (its tables, lowercase, sorted), once a group
    /// delivery was accepted; carried by every later snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<Vec<String>>,
    /// The table's stored schema: every column ever published, each with the join of the
    /// types it was written with in the schema lattice (`crate::lattice`), and whether it was
    /// ever a key. Absent in snapshots before part 1b: then the published columns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<Vec<ColumnDef>>,
    /// Whether its parts may overlap: a keyed table's later part (of rows or deletions)
    /// shadows an earlier part's rows of the same key, so readers keep each key's newest row.
    /// Absent: the parts are disjoint (a keyless table, one part, or a fold that left no
    /// shadowed row). Such a snapshot is written in [`OVERLAPPING_FORMAT`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub overlapping: bool,
    /// The index of every delivery this snapshot's chain folds ([`crate::runs`],
    /// `store.lay-out.folded-index`). Its presence raises the format's minor only: a reader
    /// that does not know it walks the chain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folded_runs: Option<FoldedRuns>,
}

/// A snapshot's folded-runs index: Parquet segments listing every delivery (run) the chain
/// below it folds, carried by reference from its parent's and merged 4 of a size tier into
/// one (`store.fold.folded-index`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FoldedRuns {
    /// The snapshot it describes (the manifest's own key): a copy carried into another
    /// snapshot by mistake is not trusted there.
    pub through: String,
    /// Its segments, oldest runs first.
    pub segments: Vec<RunSegment>,
}

/// One segment of a folded-runs index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSegment {
    /// Its key (`tables/<t>/runs/<uuid>.parquet`).
    pub path: String,
    /// The SHA-256 of its bytes.
    pub sha256: String,
    /// Its rows (runs).
    pub rows: u64,
}

/// A ledger kept as pages of its regions (`tables/<t>/ledger/<id>.regions`): its canonical
/// document is `head`, every page's regions in order, joined by commas, and `tail`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerPages {
    /// The ledger's identity (SHA-256 of its identity form), so a reader holding that ledger
    /// need read no page.
    pub identity: String,
    /// The document before the first region: `{"contract":…,"regions":[`.
    pub head: String,
    /// The document after the last region.
    pub tail: String,
    /// The pages, in the regions' order.
    pub pages: Vec<PageRef>,
}

/// One page of a ledger's regions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageRef {
    /// SHA-256 of the page's bytes (lowercase hex): its name, and its check on reading.
    pub id: String,
    /// The storage key of its first region, in hex (empty: the unbounded start).
    pub first: String,
    /// How many regions it holds.
    pub regions: u64,
    /// Its size in bytes.
    pub bytes: u64,
}

/// The key of a ledger page.
pub fn page_key(table: &str, id: &str) -> String {
    format!("tables/{}/ledger/{id}.regions", table_dir(table))
}

/// `tables/<t>/receipts/seq/<seq>/<fence>.json`: one receipt, written before the pointer
/// that publishes it. Of several at one seq, the published one has the highest fence (only a
/// writer a later acquisition fenced can leave another, and its fence is lower).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReceiptObject {
    /// Its place among the table's receipts.
    pub seq: u64,
    /// The fence it was written under.
    pub fence: u64,
    /// Its place among the acceptances.
    pub accepted_order: Option<u64>,
    /// The receipt's identity.
    pub identity: String,
    /// The manifest's identity.
    pub manifest_identity: String,
    /// `accepted` or `rejected`.
    pub outcome: String,
    /// The receipt's canonical JSON.
    pub document: String,
}

/// The key of receipt `seq` written under `fence`.
pub fn receipt_key(table: &str, seq: u64, fence: u64) -> String {
    format!(
        "tables/{}/receipts/seq/{seq:020}/{fence:020}.json",
        table_dir(table)
    )
}

/// The prefix of the receipts at `seq`.
pub fn receipt_seq_prefix(table: &str, seq: u64) -> String {
    format!("tables/{}/receipts/seq/{seq:020}/", table_dir(table))
}

/// The prefix of every receipt of a table.
pub fn receipts_prefix(table: &str) -> String {
    format!("tables/{}/receipts/seq/", table_dir(table))
}

/// The replay index entry of an acceptance.
pub fn by_manifest_key(table: &str, manifest: &str, seq: u64, fence: u64) -> String {
    format!(
        "{}{seq:020}-{fence:020}",
        by_manifest_prefix(table, manifest)
    )
}

/// The prefix of a manifest identity's replay index entries.
pub fn by_manifest_prefix(table: &str, manifest: &str) -> String {
    format!(
        "tables/{}/receipts/by-manifest/{}/",
        table_dir(table),
        identity_dir(manifest)
    )
}

/// Parses `<seq>` and `<fence>` of a receipt key's last two segments.
pub fn parse_receipt_key(key: &str) -> Option<(u64, u64)> {
    let mut it = key.rsplit('/');
    let fence = it.next()?.strip_suffix(".json")?.parse().ok()?;
    let seq = it.next()?.parse().ok()?;
    Some((seq, fence))
}

/// Parses `<seq>-<fence>` of a replay index key.
pub fn parse_by_manifest_key(key: &str) -> Option<(u64, u64)> {
    let last = key.rsplit('/').next()?;
    let (s, f) = last.split_once('-')?;
    Some((s.parse().ok()?, f.parse().ok()?))
}

/// Whether `s` is one canonical version-4 UUID: lower-case hex, hyphenated, version 4,
/// RFC 4122 variant (`store.init.store-identity`).
pub fn is_canonical_v4(s: &str) -> bool {
    match uuid::Uuid::parse_str(s) {
        Ok(u) => {
            u.get_version_num() == 4
                && u.get_variant() == uuid::Variant::RFC4122
                && u.hyphenated().to_string() == s
        }
        Err(_) => false,
    }
}

/// The newest snapshots of each table's chain a collection keeps by default, the current one
/// included (`store.collect.retain-generations`).
pub const RETAIN_GENERATIONS: u32 = 64;

/// Parses a `retain_generations` setting: a whole number from 1; 0 (or anything else) is
/// refused at the parse, naming field, value and rule, before a collection starts.
pub fn parse_retain_generations(text: &str) -> Result<u32, LakeError> {
    match text.trim().parse::<u32>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(LakeError::ConfigInvalid {
            field: "retain_generations",
            value: text.chars().take(80).collect(),
            rule: "store.collect.retain-generations",
            reason: "a whole number of generations from 1 (the current snapshot is one)",
        }),
    }
}

/// The key of the collection marker beside a snapshot manifest
/// (`tables/<t>/snapshots/<name>.collected.json`), written only by a collection, before it
/// deletes any of the parts it lists (`store.collect.manifest-kept`).
pub fn collected_marker(snapshot: &str) -> String {
    format!(
        "{}.collected.json",
        snapshot.strip_suffix(".json").unwrap_or(snapshot)
    )
}

/// Whether a key under `snapshots/` is a snapshot manifest (not a collection marker).
pub fn is_snapshot_manifest(key: &str) -> bool {
    key.ends_with(".json") && !key.ends_with(".collected.json")
}

/// `<snapshot>.collected.json`: the parts a collection removed of a snapshot it reclaimed
/// (its manifest is kept; a reader of it meets `PartCollected`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CollectedMarker {
    /// The marker's format.
    pub format_version: String,
    /// The snapshot reclaimed.
    pub snapshot: String,
    /// Its parts the collection removed.
    pub parts: Vec<String>,
    /// The collection's record.
    pub collection: String,
}

/// `tables/<t>/_collected/<fence>-<uuid>.json`: what one collection removes, written before it
/// deletes anything (`store.collect.drop-first`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CollectionRecord {
    /// The record's format.
    pub format_version: String,
    /// The table.
    pub table: String,
    /// The lease fence the collection held.
    pub fence: u64,
    /// When it started, by the collector's clock (RFC 3339).
    pub created_at: String,
    /// How many generations it kept.
    pub retain_generations: u32,
    /// The snapshots it kept whole, newest first.
    pub retained: Vec<String>,
    /// The snapshots whose parts it reclaimed (their manifests kept).
    pub reclaimed: Vec<String>,
    /// Every object it deletes.
    pub deleted: Vec<String>,
}
