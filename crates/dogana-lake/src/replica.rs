//! Replicas (`replica-read-whole`): a read-only local copy of a lake store's whole snapshots.
//!
//! A replica is a directory laid out as a lake store (so every reader of a lake reads it:
//! `dogana receipts`, `claims`, `verify`, the DuckDB SQL) with the canonical store's
//! `store-id`, and `replica.json` naming the canonical store and, per table, every snapshot
//! it holds whole (`store.replicate.descriptor`). A pull copies, for each table, the bucket
//! head's snapshot manifest, its Parquet parts and the receipts it publishes, verifies every
//! part on disk against its manifest (`store.replicate.partial-parquet`), and only then, for
//! all the tables at once, writes each table's local pointer (`store.pull.pointer-last`),
//! which advances only along the bucket pointer's chain (`store.pull.pointer-advance`). A
//! store opened for writing on a replica is [`LakeError::ReplicaWriteRefused`].

use std::collections::BTreeMap;

use bytes::Bytes;
use chrono::Utc;
use dogana_receiver::StoreError;
use serde::{Deserialize, Serialize};

use crate::layout::{self, pointer_key, receipts_prefix, table_dir, Pointer, SnapshotManifest};
use crate::objects::Root;
use crate::{Lake, LakeError};

/// The key of a replica's descriptor.
pub const REPLICA_JSON: &str = "replica.json";

/// `replica.json`: what a replica copies and holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplicaDescriptor {
    /// Its format.
    pub format_version: String,
    /// The canonical store, as the pull named it (a URL without its password).
    pub canonical: String,
    /// The canonical store's identity, which the replica's `store-id` repeats.
    pub store_id: String,
    /// When the last pull finished writing it (RFC 3339, the puller's clock).
    pub pulled_at: String,
    /// Per table, what the replica holds.
    pub tables: BTreeMap<String, HeldTable>,
}

/// What a replica holds of one table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeldTable {
    /// The snapshot its pointer names.
    pub head: Option<String>,
    /// The fence its pointer carries.
    pub fence: u64,
    /// Every snapshot whose manifest and parts are all on disk, sorted.
    pub held: Vec<String>,
}

/// What one pull did to one table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullReport {
    /// The table.
    pub table: String,
    /// The snapshot the local pointer named before (None: none).
    pub from: Option<String>,
    /// The snapshot it names now.
    pub to: Option<String>,
    /// Parts copied.
    pub parts: usize,
    /// Bytes of parts copied.
    pub bytes: u64,
}

fn corrupt(m: impl Into<String>) -> StoreError {
    StoreError::Corrupt(m.into())
}

fn json<T: Serialize>(v: &T) -> Result<Bytes, StoreError> {
    serde_json::to_vec(v)
        .map(Bytes::from)
        .map_err(|e| StoreError::backend("lake", e))
}

/// The canonical store a replica's root names, if it is a replica.
pub fn canonical_of(root: &Root) -> Result<Option<String>, StoreError> {
    match root.get(REPLICA_JSON)? {
        None => Ok(None),
        Some(b) => {
            let d: ReplicaDescriptor = serde_json::from_slice(&b)
                .map_err(|e| corrupt(format!("{REPLICA_JSON} does not read back: {e}")))?;
            Ok(Some(d.canonical))
        }
    }
}

/// The local pointer of `table` and its version.
fn local_pointer(
    root: &Root,
    table: &str,
) -> Result<Option<(Pointer, crate::objects::Version)>, StoreError> {
    match root.get_versioned(&pointer_key(table))? {
        None => Ok(None),
        Some(v) => {
            let p: Pointer = serde_json::from_slice(&v.bytes)
                .map_err(|e| corrupt(format!("the replica's pointer of {table:?}: {e}")))?;
            Ok(Some((p, v.version)))
        }
    }
}

/// One table's pull, prepared: its snapshot and parts on disk and verified, its pointer not
/// yet written.
struct Prepared {
    table: String,
    pointer: Pointer,
    expect: Option<crate::objects::Version>,
    report: PullReport,
    write: bool,
}

/// Pulls `tables` (all the canonical store's tables when empty) of the store `from` into the
/// replica at `to` (a local directory). `canonical` is how the descriptor names the store.
/// `adopt`: a local pointer off the bucket pointer's chain is replaced (else
/// [`LakeError::ReplicaPointerDiverged`] and no pointer is written).
pub fn pull(
    from: &Lake,
    canonical: &str,
    to: &Root,
    tables: &[String],
    adopt: bool,
) -> Result<Vec<PullReport>, StoreError> {
    let store_id = from.store_id()?;
    // the replica's identity: the canonical one, or refused before anything is written
    match to.get(crate::STORE_ID)? {
        Some(b) => {
            let text = String::from_utf8_lossy(&b);
            let found = text.trim_end_matches('\n');
            if found != store_id {
                return Err(LakeError::ReplicaStoreMismatch {
                    replica: to.url().to_owned(),
                    found: found.chars().take(80).collect(),
                    canonical: canonical.to_owned(),
                    expected: store_id,
                }
                .into());
            }
            if to.get(REPLICA_JSON)?.is_none() {
                return Err(LakeError::ReplicaTargetIsAStore {
                    target: to.url().to_owned(),
                }
                .into());
            }
        }
        None => {
            if !to.list("")?.is_empty() {
                return Err(LakeError::ReplicaTargetIsAStore {
                    target: to.url().to_owned(),
                }
                .into());
            }
        }
    }
    let names: Vec<String> = if tables.is_empty() {
        from.table_names()?
    } else {
        tables.to_vec()
    };
    let mut descriptor = match to.get(REPLICA_JSON)? {
        Some(b) => serde_json::from_slice::<ReplicaDescriptor>(&b)
            .map_err(|e| corrupt(format!("{REPLICA_JSON} does not read back: {e}")))?,
        None => ReplicaDescriptor {
            format_version: layout::format_text(),
            canonical: canonical.to_owned(),
            store_id: store_id.clone(),
            pulled_at: Utc::now().to_rfc3339(),
            tables: BTreeMap::new(),
        },
    };
    descriptor.canonical = canonical.to_owned();
    // the descriptor first: from the first byte on, the directory is a replica (no write verb
    // opens it), then its identity
    to.put(REPLICA_JSON, json(&descriptor)?)?;
    if to.get(crate::STORE_ID)?.is_none() {
        to.create(crate::STORE_ID, Bytes::from(store_id.clone()))?;
    }
    // phase 1: every table's snapshot on disk and verified; no pointer written
    let mut prepared = Vec::with_capacity(names.len());
    for table in &names {
        prepared.push(prepare(from, to, table, adopt)?);
    }
    // phase 2: the pointers, each only after every part of every advancing table is on disk
    // (rule: store.pull.pointer-last)
    for p in &prepared {
        if !p.write {
            continue;
        }
        let written =
            to.put_versioned(&pointer_key(&p.table), json(&p.pointer)?, p.expect.as_ref())?;
        if written.is_none() {
            return Err(corrupt(format!(
                "the replica's pointer of {:?} changed during the pull: another pull ran",
                p.table
            )));
        }
    }
    // the descriptor: every snapshot held whole (rule: store.replicate.descriptor)
    for table in &names {
        descriptor.tables.insert(table.clone(), held(to, table)?);
    }
    descriptor.pulled_at = Utc::now().to_rfc3339();
    to.put(REPLICA_JSON, json(&descriptor)?)?;
    Ok(prepared.into_iter().map(|p| p.report).collect())
}

/// Whether `ancestor` is `head` or one of its parents in the canonical store.
fn on_chain(from: &Lake, head: &str, ancestor: &str) -> Result<bool, StoreError> {
    let mut at = Some(head.to_owned());
    while let Some(k) = at {
        if k == ancestor {
            return Ok(true);
        }
        at = from.snapshot(&k)?.parent;
    }
    Ok(false)
}

fn prepare(from: &Lake, to: &Root, table: &str, adopt: bool) -> Result<Prepared, StoreError> {
    let (head, fence) = from.current(table)?.unwrap_or((None, 0));
    let local = local_pointer(to, table)?;
    let from_key = local.as_ref().and_then(|(p, _)| p.snapshot.clone());
    let mut report = PullReport {
        table: table.to_owned(),
        from: from_key.clone(),
        to: from_key.clone(),
        parts: 0,
        bytes: 0,
    };
    let pointer = Pointer {
        format_version: layout::format_text(),
        snapshot: head.clone(),
        fence,
        lease: None,
        pending: None,
    };
    let expect = local.as_ref().map(|(_, v)| v.clone());
    // rule: store.pull.pointer-advance — the same snapshot: kept, at a higher fence; one
    // the bucket pointer's chain names: advanced; any other: only under adopt
    if let Some((p, _)) = &local {
        if p.snapshot == head {
            let write = fence > p.fence;
            return Ok(Prepared {
                table: table.to_owned(),
                pointer,
                expect,
                report,
                write,
            });
        }
        if let (Some(mine), Some(theirs)) = (&p.snapshot, &head) {
            if !adopt && !on_chain(from, theirs, mine)? {
                return Err(LakeError::ReplicaPointerDiverged {
                    table: table.to_owned(),
                    local: mine.clone(),
                    canonical: theirs.clone(),
                }
                .into());
            }
        } else if !adopt {
            return Err(LakeError::ReplicaPointerDiverged {
                table: table.to_owned(),
                local: p.snapshot.clone().unwrap_or_else(|| "nothing".into()),
                canonical: head.clone().unwrap_or_else(|| "nothing".into()),
            }
            .into());
        }
    }
    let Some(key) = head.clone() else {
        return Ok(Prepared {
            table: table.to_owned(),
            pointer,
            expect,
            report,
            write: local.is_none(),
        });
    };
    let manifest_bytes = from.root().get(&key)?.ok_or_else(|| {
        corrupt(format!(
            "the canonical pointer of {table:?} names {key}, which is missing"
        ))
    })?;
    let manifest: SnapshotManifest = serde_json::from_slice(&manifest_bytes)
        .map_err(|e| corrupt(format!("{key} does not read back: {e}")))?;
    // the parts, each copied unless already on disk whole
    for part in &manifest.parts {
        if to.size(&part.path)? == Some(part.bytes) {
            continue;
        }
        let Some(b) = from.root().get(&part.path)? else {
            // rule: store.replicate.partial-parquet — the snapshot stays unpublished here
            return Err(LakeError::ReplicaPartialParquet {
                table: table.to_owned(),
                snapshot: key,
                part: part.path.clone(),
            }
            .into());
        };
        report.parts += 1;
        report.bytes += b.len() as u64;
        to.put(&part.path, b)?;
    }
    // verified on disk: every part present at its recorded size
    for part in &manifest.parts {
        if to.size(&part.path)? != Some(part.bytes) {
            return Err(LakeError::ReplicaPartialParquet {
                table: table.to_owned(),
                snapshot: key,
                part: part.path.clone(),
            }
            .into());
        }
    }
    // its ledger's pages, each copied unless already on disk (a page never changes)
    for page in manifest.ledger_pages.iter().flat_map(|l| &l.pages) {
        let path = layout::page_key(table, &page.id);
        if to.size(&path)? == Some(page.bytes) {
            continue;
        }
        let b = from.root().get(&path)?.ok_or_else(|| {
            corrupt(format!(
                "the ledger page {path} of {table:?}, which {key} names, is missing"
            ))
        })?;
        to.put(&path, b)?;
    }
    // the receipts it publishes, and their replay entries
    let dir = table_dir(table);
    let mut mine: std::collections::HashSet<String> = to
        .list(&format!("tables/{dir}/receipts/"))?
        .into_iter()
        .collect();
    for k in from.root().list(&format!("tables/{dir}/receipts/"))? {
        if mine.contains(&k) {
            continue;
        }
        if k.starts_with(&receipts_prefix(table)) {
            if let Some((seq, _)) = layout::parse_receipt_key(&k) {
                if seq > manifest.receipts {
                    continue; // published after this snapshot
                }
            }
        }
        if let Some(b) = from.root().get(&k)? {
            to.put(&k, b)?;
            mine.insert(k);
        }
    }
    // the manifest last of the table's objects
    to.put(&key, manifest_bytes)?;
    report.to = Some(key);
    Ok(Prepared {
        table: table.to_owned(),
        pointer,
        expect,
        report,
        write: true,
    })
}

/// The snapshots of `table` a replica holds whole: manifest and every part on disk.
fn held(to: &Root, table: &str) -> Result<HeldTable, StoreError> {
    let local = local_pointer(to, table)?;
    let mut held = Vec::new();
    for k in to.list(&format!("tables/{}/snapshots/", table_dir(table)))? {
        if !layout::is_snapshot_manifest(&k) {
            continue;
        }
        let Some(b) = to.get(&k)? else { continue };
        let Ok(s) = serde_json::from_slice::<SnapshotManifest>(&b) else {
            continue;
        };
        let mut whole = true;
        for p in &s.parts {
            if to.size(&p.path)? != Some(p.bytes) {
                whole = false;
                break;
            }
        }
        if whole {
            held.push(k);
        }
    }
    held.sort();
    Ok(HeldTable {
        head: local.as_ref().and_then(|(p, _)| p.snapshot.clone()),
        fence: local.map(|(p, _)| p.fence).unwrap_or(0),
        held,
    })
}
