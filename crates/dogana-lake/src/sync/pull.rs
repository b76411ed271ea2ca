//! `dogana pull`: a bucket's tables into a local store, pointer-last.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use bytes::Bytes;
use chrono::Utc;

use super::cache::{Source, SOURCE_JSON};
use super::manifest::{BucketManifest, Entry};
use super::node::{write_atomic, Digests, Node, SyncTurn};
use super::push::{local_dir, read_manifest};
use super::{
    chain_reaches, is_data_part, options, store_error, store_id_of, synced, table_of_key,
    SyncWarning,
};
use crate::layout::{self, pointer_key, table_dir, Pointer, SnapshotManifest};
use crate::objects::Root;
use crate::{Lake, LakeError, STORE_ID};

/// How a pull runs.
#[derive(Debug, Clone, Default)]
pub struct PullOptions {
    /// Leave data parts in the bucket; the first read fetches each (`store.pull.lazy-parts`).
    pub lazy: bool,
    /// Only these tables (empty: every table the bucket lists).
    pub tables: Vec<String>,
    /// The part cache's bound to record for a lazy store (None: the default).
    pub part_cache_bytes: Option<u64>,
    /// Tables whose local head is off the bucket's chain to replace by the bucket's head,
    /// moving their local-only objects under `.sync/fenced/` (kept, not deleted).
    pub adopt: Vec<String>,
}

/// What a pull did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PullReport {
    /// The tables whose local pointer moved, with the head they now name.
    pub advanced: Vec<(String, String)>,
    /// The tables already at the bucket head.
    pub unchanged: Vec<String>,
    /// Objects downloaded and verified.
    pub downloaded: Vec<String>,
    /// Their bytes.
    pub downloaded_bytes: u64,
    /// Data parts left in the bucket (a lazy pull).
    pub skipped_parts: usize,
    /// Receipts and collected snapshots' manifests left in the bucket (a lazy pull).
    pub skipped_runs: usize,
    /// Local copies removed by trusted tombstones.
    pub deleted: Vec<String>,
    /// Where adopted tables' local-only objects were moved.
    pub moved_aside: Vec<String>,
    /// The bucket manifest's generation it read.
    pub generation: u64,
    /// What it went on past.
    pub warnings: Vec<SyncWarning>,
}

/// Checks that the local directory is a store of the bucket's `store-id`, or empty (true: its
/// `store-id` is to be written); a directory holding anything else is refused.
fn bind_local(
    local: &Root,
    dir: &Path,
    bucket: &Root,
    bucket_id: &[u8],
) -> Result<bool, LakeError> {
    let id_text = String::from_utf8_lossy(bucket_id).trim().to_owned();
    let mismatch = |found: String| LakeError::SyncStoreMismatch {
        local: local.url().to_owned(),
        local_id: found,
        bucket: bucket.url().to_owned(),
        bucket_id: id_text.chars().take(80).collect(),
    };
    match store_id_of(local)? {
        Some(id) if id == id_text => Ok(false),
        Some(id) => Err(mismatch(id)),
        None => {
            let others = std::fs::read_dir(dir)?
                .filter_map(Result::ok)
                .filter(|e| !super::machine_local(&e.file_name().to_string_lossy()))
                .count();
            if others > 0 {
                return Err(mismatch(
                    "none (and the directory holds other files)".into(),
                ));
            }
            Ok(true)
        }
    }
}

/// Downloads `key`, verifies it against `entry`, and writes it locally.
fn fetch(bucket: &Root, dir: &Path, key: &str, entry: &Entry) -> Result<u64, LakeError> {
    super::cache::download_verified(bucket, dir, key, entry)
}

/// Whether a local file that differs from the bucket's may be replaced: an unpublished
/// receipt (past the local head's count) or replay entry a crashed local writer left.
fn leftover(key: &str, table: &str, local_receipts: u64) -> bool {
    let prefix = layout::receipts_prefix(table);
    if let Some(rest) = key.strip_prefix(&prefix) {
        return rest
            .split('/')
            .next()
            .and_then(|s| s.parse::<u64>().ok())
            .is_some_and(|seq| seq > local_receipts);
    }
    key.contains("/receipts/by-manifest/")
}

/// Which objects the snapshot at `head` needs at home before a pointer may name it
/// (`store.pull.pointer-last`; `store.pull.lazy-pointer` under lazy parts: its manifest and
/// ledger pages, not its parts). None: its manifest is not home yet.
fn needs(
    dir: &Path,
    table: &str,
    head: &str,
    lazy: bool,
) -> Result<Option<Vec<String>>, LakeError> {
    let Ok(b) = std::fs::read(dir.join(head)) else {
        return Ok(None);
    };
    let s: SnapshotManifest =
        serde_json::from_slice(&b).map_err(|e| LakeError::Root(format!("{head}: {e}")))?;
    let mut out = Vec::new();
    if !lazy {
        out.extend(s.parts.iter().map(|p| p.path.clone()));
    }
    if let Some(pages) = &s.ledger_pages {
        out.extend(pages.pages.iter().map(|p| layout::page_key(table, &p.id)));
    }
    Ok(Some(out))
}

/// Pulls the bucket at `bucket_url` into the local store at `local_url` (made when the
/// directory is empty).
pub fn pull(
    local_url: &str,
    bucket_url: &str,
    opts: &PullOptions,
) -> Result<PullReport, LakeError> {
    super::drain::syncing(|| pull_now(local_url, bucket_url, opts))
}

fn pull_now(
    local_url: &str,
    bucket_url: &str,
    opts: &PullOptions,
) -> Result<PullReport, LakeError> {
    let local = Root::open(local_url)?;
    let dir = local_dir(&local)?;
    let bucket = Root::open(bucket_url)?;
    let bucket_id = bucket
        .get(STORE_ID)?
        .ok_or_else(|| LakeError::SyncManifestInvalid {
            key: format!("{}/{STORE_ID}", bucket.url()),
            reason: "the bucket holds no store-id: nothing was pushed to it".into(),
        })?;
    // the manifest is read and checked before anything local changes
    let (mut manifest, _) =
        read_manifest(&bucket)?.ok_or_else(|| LakeError::SyncManifestInvalid {
            key: format!("{}/{}", bucket.url(), super::manifest::MANIFEST),
            reason: "the bucket has no manifest: nothing was pushed to it".into(),
        })?;
    // the local directory is checked before anything is written to it
    let create = bind_local(&local, &dir, &bucket, &bucket_id)?;
    let _turn = SyncTurn::take(&dir)?;
    if create {
        local.put(STORE_ID, Bytes::copy_from_slice(&bucket_id))?;
    }
    let node = Node::of(&dir)?;
    let bucket_lake = Lake::open_root(bucket.clone(), options(), false).map_err(store_error)?;
    let local_lake = Lake::open_root(local.clone(), options(), false).map_err(store_error)?;
    let mut report = PullReport::default();
    let mut digests = Digests::open(&dir);

    let mut tables: BTreeSet<String> = manifest
        .entries
        .keys()
        .filter_map(|k| table_of_key(k))
        .collect();
    if !opts.tables.is_empty() {
        tables.retain(|t| opts.tables.iter().any(|w| w == t));
    }
    // each table: the bucket head and fence, the local head, and whether it advances
    struct Plan {
        head: String,
        fence: u64,
        receipts_here: u64,
    }
    let mut plans: BTreeMap<String, Plan> = BTreeMap::new();
    for table in &tables {
        let Some((Some(head), fence)) = bucket_lake.current(table).map_err(store_error)? else {
            continue;
        };
        let here = local_lake
            .current(table)
            .map_err(store_error)?
            .and_then(|(h, _)| h);
        let receipts_here = match &here {
            Some(h) => local_lake.snapshot(h).map(|s| s.receipts).unwrap_or(0),
            None => 0,
        };
        match here {
            Some(h) if h == head => {
                report.unchanged.push(table.clone());
                continue;
            }
            Some(h) if !chain_reaches(&bucket, Some(&head), &h)? => {
                if opts.adopt.iter().any(|a| a == table) {
                    report
                        .moved_aside
                        .extend(move_aside(&dir, table, &manifest)?);
                } else {
                    let diverged = !chain_reaches(&local, Some(&h), &head)?;
                    report.warnings.push(SyncWarning::LocalAhead {
                        table: table.clone(),
                        local: h,
                        bucket: Some(head),
                        diverged,
                    });
                    continue;
                }
            }
            _ => {}
        }
        plans.insert(
            table.clone(),
            Plan {
                head,
                fence,
                receipts_here,
            },
        );
    }

    // objects, verified; a mismatch stops before any pointer, keeping what verified
    let lazy = opts.lazy;
    // under lazy parts, the receipts of other nodes' deliveries (the runs the head folds:
    // store.pull.lazy-folded-runs) and collected snapshots' manifests (husks:
    // store.pull.husks-skipped) stay in the bucket too, fetched when a reader lists them
    let heads: BTreeSet<String> = plans.values().map(|p| p.head.clone()).collect();
    let mut skipped: BTreeSet<String> = super::cache::read_skipped(&dir);
    let skippable = |key: &str, entry: &Entry, husks: &BTreeSet<String>| {
        lazy && entry.owner.as_deref() != Some(node.id.as_str())
            && (key.contains("/receipts/seq/") || (husks.contains(key) && !heads.contains(key)))
    };
    let mut unconverged: Vec<String> = Vec::new();
    for round in 0..4 {
        if round > 0 {
            manifest = read_manifest(&bucket)?.map(|(m, _)| m).unwrap_or(manifest);
        }
        let mut first_err = None;
        let husks: BTreeSet<String> = manifest
            .entries
            .keys()
            .filter_map(|k| {
                k.strip_suffix(".collected.json")
                    .map(|s| format!("{s}.json"))
            })
            .collect();
        for (key, entry) in &manifest.entries {
            if !synced(key) {
                continue;
            }
            let table = table_of_key(key);
            let plan = match &table {
                Some(t) => match plans.get(t) {
                    Some(p) => Some(p),
                    None => continue,
                },
                None => None,
            };
            if lazy && is_data_part(key) {
                if round == 0 {
                    report.skipped_parts += 1;
                }
                continue;
            }
            if skippable(key, entry, &husks) && !dir.join(key).exists() {
                if skipped.insert(key.clone()) {
                    report.skipped_runs += 1;
                }
                continue;
            }
            match digests.of(&dir, key)? {
                Some((sha, _)) if sha == entry.sha256 => continue,
                Some((sha, _)) => {
                    let replaceable = match (&table, plan) {
                        (Some(t), Some(p)) => leftover(key, t, p.receipts_here),
                        _ => false,
                    };
                    if !replaceable {
                        return Err(LakeError::SyncKeyConflict {
                            key: key.clone(),
                            local: sha,
                            remote: entry.sha256.clone(),
                        });
                    }
                }
                None => {}
            }
            match fetch(&bucket, &dir, key, entry) {
                Ok(n) => {
                    digests.forget(key);
                    report.downloaded.push(key.clone());
                    report.downloaded_bytes += n;
                }
                Err(e @ LakeError::SyncDigestMismatch { .. }) => {
                    first_err.get_or_insert(e);
                }
                Err(e) => {
                    digests.save()?;
                    return Err(e);
                }
            }
        }
        digests.save()?;
        if let Some(e) = first_err {
            return Err(e);
        }
        unconverged.clear();
        let mut missing = None;
        for (table, plan) in &plans {
            let need = needs(&dir, table, &plan.head, lazy)?;
            let absent = match &need {
                None => Some(plan.head.clone()),
                Some(keys) => keys
                    .iter()
                    .find(|k| !dir.join(k.as_str()).exists())
                    .cloned(),
            };
            if let Some(k) = absent {
                unconverged.push(table.clone());
                missing.get_or_insert(k);
            }
        }
        if unconverged.is_empty() {
            break;
        }
        if round == 3 {
            return Err(LakeError::SyncPullUnconverged {
                tables: unconverged,
                missing: missing.unwrap_or_default(),
            });
        }
        std::thread::sleep(std::time::Duration::from_millis(200 * (round + 1)));
    }
    report.generation = manifest.generation;

    // trusted tombstones remove local copies no head names; untrusted ones delete nothing
    let mut named: BTreeSet<String> = BTreeSet::new();
    for (table, plan) in &plans {
        named.insert(plan.head.clone());
        if let Some(keys) = needs(&dir, table, &plan.head, false)? {
            named.extend(keys);
        }
    }
    for t in &manifest.tombstones {
        if !dir.join(&t.key).exists()
            || named.contains(&t.key)
            || manifest.entries.contains_key(&t.key)
        {
            continue;
        }
        match manifest.verify(t) {
            Ok(()) => {
                std::fs::remove_file(dir.join(&t.key))?;
                report.deleted.push(t.key.clone());
            }
            Err(why) => report.warnings.push(SyncWarning::TombstoneUnverified {
                key: t.key.clone(),
                owner: t.owner.clone(),
                reason: why.to_string(),
            }),
        }
    }

    // the skipped list names what is still in the bucket only
    skipped.retain(|k| !dir.join(k).exists());
    if skipped.is_empty() {
        match std::fs::remove_file(dir.join(super::cache::SKIPPED_JSON)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e.into()),
        }
    } else {
        write_atomic(
            &dir.join(super::cache::SKIPPED_JSON),
            &serde_json::to_vec(&skipped).expect("json"),
        )?;
    }
    // a reader meeting the new pointers fetches what the pull left in the bucket from here
    if lazy {
        let source = Source {
            bucket: bucket_url.to_owned(),
            part_cache_bytes: opts.part_cache_bytes,
        };
        write_atomic(
            &dir.join(SOURCE_JSON),
            &serde_json::to_vec_pretty(&source).expect("json"),
        )?;
    }
    // pointers last, once every advancing table verified
    for (table, plan) in &plans {
        let key = pointer_key(table);
        let current = local.get_versioned(&key)?;
        let (fence, expect) = match &current {
            None => (plan.fence, None),
            Some(v) => {
                let p: Pointer = serde_json::from_slice(&v.bytes)
                    .map_err(|e| LakeError::Root(format!("{key}: {e}")))?;
                if let Some(l) = &p.lease {
                    let expires = v.modified
                        + chrono::Duration::milliseconds(l.ttl_ms.min(i64::MAX as u64) as i64);
                    if Utc::now() < expires {
                        report.warnings.push(SyncWarning::LocalHeld {
                            table: table.clone(),
                        });
                        continue;
                    }
                }
                (p.fence.max(plan.fence), Some(v.version.clone()))
            }
        };
        let next = Pointer {
            format_version: layout::format_text(),
            snapshot: Some(plan.head.clone()),
            fence,
            lease: None,
            pending: None,
        };
        let bytes = Bytes::from(serde_json::to_vec(&next).expect("json"));
        if local.put_versioned(&key, bytes, expect.as_ref())?.is_some() {
            report.advanced.push((table.clone(), plan.head.clone()));
        } else {
            report.warnings.push(SyncWarning::LocalHeld {
                table: table.clone(),
            });
        }
    }

    // the node's owned keys this store now holds (store.merge.held-record)
    let mut held = node.held()?;
    let mine = held.entry(node.id.clone()).or_default();
    for (k, e) in &manifest.entries {
        if e.owner.as_deref() == Some(node.id.as_str()) && dir.join(k).exists() {
            mine.insert(k.clone());
        }
    }
    node.write_held(&held)?;
    Ok(report)
}

/// Moves the local-only objects of `table` (those the bucket manifest does not list) under
/// `.sync/fenced/<table dir>-<instant>/`, keeping their paths: the receipts of deliveries a
/// push found fenced stay on disk for the user to read and deliver again.
fn move_aside(
    dir: &Path,
    table: &str,
    manifest: &BucketManifest,
) -> Result<Vec<String>, LakeError> {
    let tdir = format!("tables/{}/", table_dir(table));
    let aside = format!(
        ".sync/fenced/{}-{}",
        table_dir(table),
        Utc::now().format("%Y%m%dT%H%M%S%.3fZ")
    );
    let mut moved = Vec::new();
    let mut stack = vec![dir.join(&tdir)];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.filter_map(Result::ok) {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let Ok(rel) = p.strip_prefix(dir) else {
                continue;
            };
            let key = rel.to_string_lossy().replace('\\', "/");
            if !synced(&key) {
                continue;
            }
            // the bucket's own copy stays; a local object at a listed key with other bytes
            // (a receipt of the fenced chain at the same seq and fence) goes aside too
            if let Some(e) = manifest.entries.get(&key) {
                if super::node::file_digest(&p)?.0 == e.sha256 {
                    continue;
                }
            }
            let to = dir.join(&aside).join(rel);
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::rename(&p, &to)?;
            moved.push(key);
        }
    }
    Ok(moved)
}
