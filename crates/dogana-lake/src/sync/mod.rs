//! # Sync: many loaders, one bucket
//!
//! A loader delivers into a **local** lake store (`file:///dir`: its own disk, fast and
//! available when the link is not) and **pushes** to a shared bucket; readers and fresh
//! containers **pull**, whole or lazily. The bucket is itself a lake store (its pointers,
//! snapshots, parts and receipts have the local layout), so every reader that opens a lake
//! opens it, plus two things only a bucket has: the bucket manifest (`manifest.json`,
//! [`manifest`]) and its generations (`manifests/`).
//!
//! ## Decisions
//!
//! - **One publication chain per table, never forked (`store.push.pointer-fenced`).** A push
//!   takes the bucket table's write lease (the lake's own lease: a field of the bucket
//!   pointer, renewed while the push uploads), and publishes the local head only when the
//!   local chain reaches the bucket head (the bucket head is the local head or one of its
//!   ancestors). A local head that does not is *fenced*: it stays local, nothing of it is
//!   uploaded, and the push reports it beside its commit, naming both heads. Its receipts stay
//!   in the local store. To decide those deliveries again against the bucket's head, the user
//!   pulls with `--adopt TABLE` (the local table's own objects are moved, not deleted, under
//!   `.sync/fenced/`) and delivers the files again. *Which node may deliver into which table*
//!   is therefore decided at push time by the bucket lease and the chain: any node may deliver
//!   locally; the first push of a delivery built on the bucket head wins; a node whose table
//!   was fenced learns it at its next push and never loses a receipt.
//! - **Order of a push (`store.push.manifest-commit`).** Per table, under its bucket lease:
//!   remove unpublished receipts a crashed push left past the bucket head (they would shadow
//!   ours: of several receipts at one seq the highest fence is published), upload the
//!   table's published objects the manifest does not list, then replace the bucket pointer.
//!   After every table: commit the manifest by compare-and-set over the scoped union
//!   (`store.merge.scoped-union`), then write the generation manifest and drop those past
//!   `retain_generations`. A crash before the manifest commit leaves uploaded objects
//!   unlisted (the next push lists them); a pointer may name objects the manifest does not
//!   list yet, which a pull waits for (`pointer-last`).
//! - **Ownership is recorded, not read off the key.** dogana's keys carry no node (a part is
//!   `parts/<uuid>.parquet`), so the push that first lists a key writes its node beside it and
//!   no merge changes it. Content-addressed keys two nodes may write alike (ledger pages,
//!   replay index entries) are unowned and propagate no deletion (`store.merge.ownership`).
//! - **Tombstones are signed with ring's ed25519** (`tombstone-signed-node`): each node has an
//!   issuer key (`.sync/issuer.pk8`, made with its id at its first push or pull) registered
//!   in the manifest's key-set ledger from its first push, with a validity interval; a new key
//!   of the node closes the old one's interval. A tombstone whose signature does not verify
//!   under a key of its owner valid at its instant keeps its entry and deletes nothing
//!   (`SyncTombstoneUnverified`); one whose owner is not the entry's keeps it too
//!   (`SyncTombstoneForeign`). The key set is as trusted as write access to the bucket.
//! - **The manifest commit loop** re-reads and re-merges after a lost condition:
//!   `push_retries` consecutive rounds that meet no newer generation, or 64 rounds in all,
//!   end in `SyncManifestRebaseExhausted` listing every object uploaded
//!   (`lost-commit-round`).
//! - **Pull is pointer-last** (`store.pull.pointer-last`): objects first, each verified
//!   against its listed SHA-256 (a mismatch is `digest-mismatch`, the object is not
//!   written); then, once every advancing table's head and parts are home (under `--lazy`,
//!   its manifest only), every pointer, none before all are verified
//!   (`store.pull.pointer-advance`). Verified objects stay, so a pull refused midway resumes
//!   by downloading only what still differs (`store.pull.unconverged-resume`).
//! - **Lazy parts** ([`cache`]): a lazy pull skips data parts and writes `.sync/source.json`;
//!   the local root then fetches a part whole on its first read, verified against the bucket
//!   manifest, within 30 s, and keeps fetched parts under `part_cache_bytes`, evicting the
//!   least recently read one this process does not hold.

pub mod cache;
pub mod config;
pub mod drain;
pub mod manifest;
mod node;
mod pull;
mod push;

pub use config::SyncConfig;
pub use node::{Node, HELD, PUSH_LOCK, SYNC_DIR};
pub use pull::{pull, PullOptions, PullReport};
pub use push::{commit_rounds, push, PushReport};

use std::collections::{BTreeMap, BTreeSet};

use dogana_receiver::StoreError;

use crate::layout::{self, table_dir, SnapshotManifest};
use crate::objects::Root;
use crate::{Lake, LakeError, LakeOptions, STORE_ID};

/// What a push or pull noticed and went on past: each a warning with its rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyncWarning {
    /// A local head that does not extend the bucket's stays local (`store.push.pointer-fenced`).
    PointerFenced {
        /// The table.
        table: String,
        /// The local head.
        local: String,
        /// The bucket head.
        bucket: String,
    },
    /// Another writer held the table's lease in the bucket past the wait: the table was not
    /// pushed this time.
    TableHeld {
        /// The table.
        table: String,
        /// What the lease said.
        reason: String,
    },
    /// A tombstone that names an entry of another owner (`SyncTombstoneForeign`): the entry
    /// is kept.
    TombstoneForeign {
        /// The key.
        key: String,
        /// Who the tombstone says owns it.
        tombstone_owner: String,
        /// Who the entry says.
        entry_owner: String,
    },
    /// A tombstone nobody can trust (`SyncTombstoneUnverified`): its entry is kept, nothing
    /// is deleted.
    TombstoneUnverified {
        /// The key.
        key: String,
        /// Its owner.
        owner: String,
        /// Why.
        reason: String,
    },
    /// A local head the bucket's chain does not reach (deliveries not pushed, or fenced):
    /// the pull leaves the table as it is.
    LocalAhead {
        /// The table.
        table: String,
        /// The local head.
        local: String,
        /// The bucket head.
        bucket: Option<String>,
        /// Whether the bucket head is in the local chain (only unpushed deliveries), or not
        /// (fenced: `--adopt` decides again against the bucket).
        diverged: bool,
    },
    /// A local writer held the table's lease: the pull wrote no pointer for it.
    LocalHeld {
        /// The table.
        table: String,
    },
}

impl SyncWarning {
    /// The rule or error name it reports under.
    pub fn code(&self) -> &'static str {
        match self {
            SyncWarning::PointerFenced { .. } => "store.push.pointer-fenced",
            SyncWarning::TableHeld { .. } => "store.lease.held",
            SyncWarning::TombstoneForeign { .. } => "SyncTombstoneForeign",
            SyncWarning::TombstoneUnverified { .. } => "SyncTombstoneUnverified",
            SyncWarning::LocalAhead { .. } => "store.pull.pointer-advance",
            SyncWarning::LocalHeld { .. } => "store.lease.held",
        }
    }
}

impl std::fmt::Display for SyncWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SyncWarning::PointerFenced { table, local, bucket } => write!(
                f,
                "{table}: the local head {local} does not extend the bucket head {bucket}; it stays local with its receipts (store.push.pointer-fenced). To decide those deliveries again against the bucket's head: dogana pull --adopt {table}, then deliver the files again"
            ),
            SyncWarning::TableHeld { table, reason } => {
                write!(f, "{table}: not pushed this time: {reason}")
            }
            SyncWarning::TombstoneForeign {
                key,
                tombstone_owner,
                entry_owner,
            } => write!(
                f,
                "SyncTombstoneForeign: a tombstone of {tombstone_owner} names {key}, which {entry_owner} owns; the entry is kept"
            ),
            SyncWarning::TombstoneUnverified { key, owner, reason } => write!(
                f,
                "SyncTombstoneUnverified: the tombstone of {key} by {owner} is not trusted ({reason}); the entry is kept and nothing is deleted"
            ),
            SyncWarning::LocalAhead {
                table,
                local,
                bucket,
                diverged,
            } => {
                let bucket = bucket.as_deref().unwrap_or("none");
                if *diverged {
                    write!(f, "{table}: the local head {local} is not on the bucket's chain (head {bucket}); left as it is: push to find whether it is fenced, or pull --adopt {table} to take the bucket's head (the local objects are kept under .sync/fenced/)")
                } else {
                    write!(f, "{table}: the local head {local} is ahead of the bucket head {bucket}: deliveries not pushed yet; left as it is")
                }
            }
            SyncWarning::LocalHeld { table } => write!(
                f,
                "{table}: a local writer holds the table's lease; its pointer was not moved (pull again)"
            ),
        }
    }
}

/// The machine's catalog file in a local store's directory (`dogana_sqlite::catalog`): its
/// leases, cursors and journal. A push never lists it; a pull never touches it.
pub const MACHINE_CATALOG: &str = "machine.sqlite";

/// The derived catalog, a cache rebuilt from the store's objects: never synced either.
pub const DERIVED_CATALOG: &str = "derived.sqlite";

/// Whether a file directly in a local store's directory is the machine's own, not the
/// store's: dot files (`.sync/`), `store.toml` and the catalogs. A directory holding only
/// these is empty to a pull or a new store.
pub fn machine_local(name: &str) -> bool {
    name.starts_with('.')
        || name == config::STORE_TOML
        || name.starts_with(MACHINE_CATALOG)
        || name.starts_with(DERIVED_CATALOG)
}

/// Whether a key of a store is synced: everything but a node's own files (any name starting
/// with a dot, `.sync/`), pointers (moved by their own rules), the probe's keys, the store's
/// identity (checked on its own), configuration and replica files, the catalogs, and the bucket's manifests.
pub fn synced(key: &str) -> bool {
    if key.split('/').any(|c| c.starts_with('.')) {
        return false;
    }
    // the machine's catalog and the derived one (with SQLite's -wal, -shm and -journal
    // files): one machine's state, never synced (store.lay-out.machine-catalog)
    if key.starts_with(MACHINE_CATALOG) || key.starts_with(DERIVED_CATALOG) {
        return false;
    }
    let name = key.rsplit('/').next().unwrap_or(key);
    !(name.starts_with("_pointer.json")
        || key.starts_with("_probe/")
        || key == STORE_ID
        || key == config::STORE_TOML
        || key == crate::replica::REPLICA_JSON
        || key.starts_with("manifest.json")
        || key.starts_with(drain::MARKS)
        || key.starts_with(manifest::GENERATIONS))
}

/// Whether a key has an owner: every synced key but the content-addressed ones two nodes may
/// write alike (ledger pages, replay index entries).
pub fn owned(key: &str) -> bool {
    !(key.contains("/ledger/") || key.contains("/receipts/by-manifest/"))
}

/// Whether a key is a table's Parquet data part (what a lazy pull leaves in the bucket).
pub fn is_data_part(key: &str) -> bool {
    key.starts_with("tables/") && key.contains("/parts/") && key.ends_with(".parquet")
}

/// The table a key belongs to, if any.
pub fn table_of_key(key: &str) -> Option<String> {
    key.strip_prefix("tables/")
        .and_then(|r| r.split('/').next())
        .and_then(layout::table_of_dir)
}

/// The options a sync opens its stores with.
fn options() -> LakeOptions {
    LakeOptions::default()
}

fn store_error(e: StoreError) -> LakeError {
    match e {
        StoreError::Backend { source, .. } | StoreError::Transient { source, .. }
            if source.is::<LakeError>() =>
        {
            *source.downcast::<LakeError>().expect("checked")
        }
        e => LakeError::Root(e.to_string()),
    }
}

/// The store-id of a root (None: it has none), cut to 80 characters for a message.
fn store_id_of(root: &Root) -> Result<Option<String>, LakeError> {
    Ok(root.get(STORE_ID)?.map(|b| {
        String::from_utf8_lossy(&b)
            .trim()
            .chars()
            .take(80)
            .collect()
    }))
}

/// Whether the chain below `head` in `root` reaches the snapshot `target`: the question a
/// push asks of the local chain (does it extend the bucket head?) and a pull of the bucket's
/// (does it extend the local head?).
///
/// The first snapshot of the walk that carries a valid folded-runs index answers for the
/// chain beneath it (`store.merge.collected-index`): `target` is on it when one of the
/// index's runs was published by `target`, whose manifest is read to confirm it; a
/// `target` that published a run the index does not list is not. So a pull after ten
/// thousand deliveries by other nodes reads one manifest and a few segments, not ten
/// thousand manifests. Without a valid index, and for a `target` that published no run
/// (a fold), it walks the chain by each manifest's parent; a missing snapshot ends the walk.
///
/// ```no_run
/// use dogana_lake::objects::Root;
/// let bucket = Root::open("s3://bucket/store").unwrap();
/// let reached = dogana_lake::sync::chain_reaches(&bucket, Some("tables/orders/snapshots/b.json"),
///     "tables/orders/snapshots/a.json").unwrap();
/// # let _ = reached;
/// ```
pub fn chain_reaches(root: &Root, head: Option<&str>, target: &str) -> Result<bool, LakeError> {
    let snapshot = |key: &str| -> Result<Option<SnapshotManifest>, LakeError> {
        root.get(key)?
            .map(|b| serde_json::from_slice(&b).map_err(|e| LakeError::Root(format!("{key}: {e}"))))
            .transpose()
    };
    let mut at = head.map(str::to_owned);
    let mut indexed = false;
    let mut seen = 0usize;
    while let Some(key) = at {
        if key == target {
            return Ok(true);
        }
        let Some(s) = snapshot(&key)? else {
            return Ok(false);
        };
        if let (false, Some(index)) = (indexed, &s.folded_runs) {
            if let Some(runs) = crate::runs::valid_runs(root, &key, index).map_err(store_error)? {
                indexed = true;
                let named = runs.iter().any(|r| r.snapshot == target);
                match snapshot(target)? {
                    Some(_) if named => return Ok(true),
                    Some(t) if t.receipt.is_some() => return Ok(false),
                    // a fold, or a manifest this root lacks: only the walk can tell
                    _ => {}
                }
            }
        }
        at = s.parent;
        seen += 1;
        if seen > 10_000_000 {
            return Err(LakeError::Root(format!(
                "{key}: a snapshot chain that loops"
            )));
        }
    }
    Ok(false)
}

/// The published objects of `table` in a store that `listed` does not list yet: the chain of
/// snapshots from its head down to the first listed one (whose objects a committed push
/// listed already, down to the root) or the first missing one, the parts, ledger pages and
/// folded-runs segments those name that the store holds, collected markers not listed, and of the receipts past
/// the listed snapshot's count up to the head's, the published one at each seq with its
/// replay entries. Unpublished leftovers (a crashed writer's receipts, parts no snapshot
/// names) are left out. So a push costs what changed since the last one, not the history.
pub(crate) fn published_objects(
    root: &Root,
    lake: &Lake,
    table: &str,
    listed: &dyn Fn(&str) -> bool,
) -> Result<BTreeSet<String>, LakeError> {
    let mut out = BTreeSet::new();
    let Some(head) = lake.head(table).map_err(store_error)? else {
        return Ok(out);
    };
    let dir = format!("tables/{}/", table_dir(table));
    let present: BTreeSet<String> = root.list(&dir)?.into_iter().collect();
    let mut receipts = None;
    let mut floor = 0;
    let mut at = Some(head);
    while let Some(key) = at {
        let Some(b) = root.get(&key)? else { break };
        let s: SnapshotManifest =
            serde_json::from_slice(&b).map_err(|e| LakeError::Root(format!("{key}: {e}")))?;
        receipts.get_or_insert(s.receipts);
        if listed(&key) {
            floor = s.receipts;
            break;
        }
        out.insert(key);
        for p in &s.parts {
            if present.contains(&p.path) {
                out.insert(p.path.clone());
            }
        }
        if let Some(pages) = &s.ledger_pages {
            for p in &pages.pages {
                let k = layout::page_key(table, &p.id);
                if present.contains(&k) {
                    out.insert(k);
                }
            }
        }
        for k in crate::runs::segment_keys(&s) {
            if present.contains(&k) {
                out.insert(k);
            }
        }
        at = s.parent;
    }
    // a collection's markers land on old snapshots too
    out.extend(
        present
            .iter()
            .filter(|k| k.ends_with(".collected.json") && k.contains("/snapshots/") && !listed(k))
            .cloned(),
    );
    let receipts = receipts.unwrap_or(0);
    // of the receipts at each seq up to the head's count, the highest fence is published
    let prefix = layout::receipts_prefix(table);
    let mut best: BTreeMap<u64, (u64, String)> = BTreeMap::new();
    for k in present.iter().filter(|k| k.starts_with(&prefix)) {
        let rest = &k[prefix.len()..];
        let mut it = rest.split('/');
        let (Some(seq), Some(fence)) = (it.next(), it.next()) else {
            continue;
        };
        let (Ok(seq), Ok(fence)) = (
            seq.parse::<u64>(),
            fence.trim_end_matches(".json").parse::<u64>(),
        ) else {
            continue;
        };
        if seq > floor && seq <= receipts && best.get(&seq).is_none_or(|(f, _)| fence > *f) {
            best.insert(seq, (fence, k.clone()));
        }
    }
    let by_manifest = format!("{dir}receipts/by-manifest/");
    for k in present.iter().filter(|k| k.starts_with(&by_manifest)) {
        let name = k.rsplit('/').next().unwrap_or("");
        let mut it = name.split('-');
        if let (Some(Ok(seq)), Some(Ok(fence))) = (
            it.next().map(str::parse::<u64>),
            it.next().map(str::parse::<u64>),
        ) {
            if best.get(&seq).is_some_and(|(f, _)| *f == fence) {
                out.insert(k.clone());
            }
        }
    }
    out.extend(best.into_values().map(|(_, k)| k));
    Ok(out)
}

/// Before a collection in a bucket deletes anything, its manifest records each key it
/// deletes as collected and lists the record and markers the collection wrote
/// (`store.collect.drop-first`): so no push lists a deleted object again, no pull fetches
/// one, and a lazy read of one meets `part-collected`. Nothing when the root has no bucket
/// manifest (a store nothing was pushed to).
pub(crate) fn record_collected(
    root: &Root,
    deleted: &[String],
    written: &[(String, bytes::Bytes)],
) -> Result<(), LakeError> {
    if root.get_versioned(manifest::MANIFEST)?.is_none() {
        return Ok(());
    }
    let now = chrono::Utc::now().to_rfc3339();
    push::commit_rounds(SyncConfig::default().push_retries, &[], || {
        let Some((mut m, version)) = push::read_manifest(root)? else {
            return Err(LakeError::SyncManifestInvalid {
                key: manifest::MANIFEST.into(),
                reason: "the bucket manifest vanished during a collection".into(),
            });
        };
        let read = m.generation;
        for k in deleted {
            m.entries.remove(k);
            if !m.collected.iter().any(|c| &c.key == k) {
                m.collected.push(manifest::Collected {
                    key: k.clone(),
                    at: now.clone(),
                });
            }
        }
        for (k, b) in written {
            m.entries.insert(
                k.clone(),
                manifest::Entry {
                    sha256: node::digest(b),
                    size: b.len() as u64,
                    owner: None,
                },
            );
        }
        m.generation += 1;
        m.committed_by = "collect".into();
        m.committed_at = now.clone();
        let bytes = bytes::Bytes::from(m.to_bytes());
        let won = root
            .put_versioned(manifest::MANIFEST, bytes.clone(), Some(&version))?
            .is_some();
        if won {
            root.put(&manifest::generation_key(m.generation), bytes)?;
        }
        Ok((won, read))
    })?;
    Ok(())
}
