//! `dogana push`: a local store's published tables into a bucket (see the module above for the
//! order and the rules).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use bytes::Bytes;
use chrono::{SecondsFormat, Utc};

use super::manifest::{generation_key, BucketManifest, Tombstone, MANIFEST};
use super::node::{Digests, Node, SyncTurn};
use super::{
    chain_reaches, options, owned, published_objects, store_error, store_id_of, synced, SyncConfig,
    SyncWarning,
};
use crate::layout::{self, SnapshotManifest};
use crate::objects::{Root, Version};
use crate::{Lake, LakeError, STORE_ID};

/// What a push does with one table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decision {
    /// The bucket head is the local head.
    Unchanged,
    /// The local chain reaches the bucket head (or the bucket has none): publish ours.
    Advance,
    /// The bucket's chain passed the local head.
    Behind,
    /// Neither chain reaches the other's head (`store.push.pointer-fenced`).
    Fenced,
}

/// What a push did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PushReport {
    /// The node that pushed.
    pub node: String,
    /// The tables whose bucket pointer now names the local head (moved by this push).
    pub advanced: Vec<String>,
    /// The tables already at the local head.
    pub unchanged: Vec<String>,
    /// The tables whose local head the bucket's chain already passed (pull to catch up).
    pub behind: Vec<String>,
    /// Every object uploaded.
    pub uploaded: Vec<String>,
    /// The bytes uploaded.
    pub uploaded_bytes: u64,
    /// Keys deleted from the bucket by this push's tombstones.
    pub tombstoned: Vec<String>,
    /// The generation committed.
    pub generation: u64,
    /// The manifest commit rounds it took.
    pub rounds: u32,
    /// What it went on past.
    pub warnings: Vec<SyncWarning>,
}

/// The local store's directory, or a refusal naming the URL.
pub(crate) fn local_dir(local: &Root) -> Result<std::path::PathBuf, LakeError> {
    local.local_dir().map(Path::to_owned).ok_or_else(|| {
        LakeError::Root(format!(
            "{}: a local store is a directory (file:///dir); the bucket is the one named by --to or --from",
            local.url()
        ))
    })
}

/// Reads the bucket manifest and its version (None: none yet).
pub(crate) fn read_manifest(bucket: &Root) -> Result<Option<(BucketManifest, Version)>, LakeError> {
    match bucket.get_versioned(MANIFEST)? {
        None => Ok(None),
        Some(v) => Ok(Some((
            BucketManifest::parse(MANIFEST, &v.bytes)?,
            v.version,
        ))),
    }
}

/// The manifest commit loop (`store.merge.retries`, `store.merge.round-ceiling`,
/// `store.merge.exhausted`): `round` reads the manifest, merges and tries its conditional
/// replace, answering whether it won and the generation it read. A round that loses counts
/// against `retries` only when the generation it read is not newer than the round before's;
/// 64 rounds end it whatever they met. Answers the rounds taken.
pub fn commit_rounds(
    retries: u32,
    uploaded: &[String],
    mut round: impl FnMut() -> Result<(bool, u64), LakeError>,
) -> Result<u32, LakeError> {
    const CEILING: u32 = 64;
    let mut stale = 0u32;
    let mut last: Option<u64> = None;
    for n in 1..=CEILING {
        let (won, generation) = round()?;
        if won {
            return Ok(n);
        }
        // a round meeting a newer generation than the round before lost to a commit that
        // landed: only rounds that met none count against the retries (lost-commit-round)
        if last.is_none_or(|l| generation <= l) {
            stale += 1;
        } else {
            stale = 0;
        }
        last = Some(generation);
        if stale >= retries {
            return Err(LakeError::SyncManifestRebaseExhausted {
                rounds: n,
                uploaded: uploaded.to_vec(),
            });
        }
        std::thread::sleep(std::time::Duration::from_millis(
            (n as u64 * 7).min(100) + u64::from(uuid::Uuid::new_v4().as_bytes()[0] % 16),
        ));
    }
    Err(LakeError::SyncManifestRebaseExhausted {
        rounds: CEILING,
        uploaded: uploaded.to_vec(),
    })
}

/// Makes the bucket a store of `store_id`, or checks that it is one (`store.init.*`).
pub(crate) fn bind_bucket(bucket: &Root, local: &Root, store_id: &[u8]) -> Result<(), LakeError> {
    let mismatch = |found: Option<String>| LakeError::SyncStoreMismatch {
        local: local.url().to_owned(),
        local_id: String::from_utf8_lossy(store_id)
            .trim()
            .chars()
            .take(80)
            .collect(),
        bucket: bucket.url().to_owned(),
        bucket_id: found.unwrap_or_else(|| "none (and it holds other objects)".into()),
    };
    match store_id_of(bucket)? {
        Some(id) if id.as_bytes() == String::from_utf8_lossy(store_id).trim().as_bytes() => Ok(()),
        Some(id) => Err(mismatch(Some(id))),
        None => {
            if !bucket.is_empty_but(&["_probe", "drain"])? {
                return Err(mismatch(None));
            }
            if !bucket.create(STORE_ID, Bytes::copy_from_slice(store_id))? {
                // another push made it first: it must be ours
                return bind_bucket(bucket, local, store_id);
            }
            Ok(())
        }
    }
}

/// Pushes the local store at `local_url` into the bucket at `bucket_url`.
pub fn push(
    local_url: &str,
    bucket_url: &str,
    config: &SyncConfig,
) -> Result<PushReport, LakeError> {
    super::drain::syncing(|| push_now(local_url, bucket_url, config))
}

fn push_now(
    local_url: &str,
    bucket_url: &str,
    config: &SyncConfig,
) -> Result<PushReport, LakeError> {
    let local = Root::open(local_url)?;
    let dir = local_dir(&local)?;
    let store_id = local.get(STORE_ID)?.ok_or_else(|| {
        LakeError::Root(format!(
            "{}: not a lake store (no store-id); deliver into it first",
            local.url()
        ))
    })?;
    let bucket = Root::open(bucket_url)?;
    bind_bucket(&bucket, &local, &store_id)?;
    let _turn = SyncTurn::take(&dir)?;
    let node = Node::of(&dir)?;
    let local_lake = Lake::open_root(local.clone(), options(), false).map_err(store_error)?;
    let mut bucket_lake = Lake::open_root(
        bucket.clone(),
        crate::LakeOptions {
            lease_ttl: config.lease_ttl,
            ..options()
        },
        true,
    )
    .map_err(store_error)?;
    let mut report = PushReport {
        node: node.id.clone(),
        ..PushReport::default()
    };
    let mut digests = Digests::open(&dir);
    let start = read_manifest(&bucket)?.map(|(m, _)| m);
    let listed = |k: &str| start.as_ref().and_then(|m| m.entries.get(k)).cloned();
    let collected: BTreeSet<String> = start
        .iter()
        .flat_map(|m| m.collected.iter().map(|c| c.key.clone()))
        .collect();

    // the held record as this push starts (store.merge.held-absent)
    let mut held = node.held()?;
    let mine = held.entry(node.id.clone()).or_default();
    if mine.is_empty() && node.push_marked() {
        if let Some(m) = &start {
            mine.extend(
                m.entries
                    .iter()
                    .filter(|(_, e)| e.owner.as_deref() == Some(node.id.as_str()))
                    .map(|(k, _)| k.clone()),
            );
        }
    }
    node.mark_push(true)?;

    // the objects this push lists: the published objects of each table it pushes or finds
    // in step, and the store's other synced objects (decisions of group commits)
    let mut local_entries: BTreeMap<String, (String, u64)> = BTreeMap::new();
    // keys no tombstone may name: every object of a table head as read here
    let mut protected: BTreeSet<String> = BTreeSet::new();
    let upload = |key: &str,
                  digests: &mut Digests,
                  report: &mut PushReport|
     -> Result<Option<(String, u64)>, LakeError> {
        let Some((sha, size)) = digests.of(&dir, key)? else {
            return Ok(None);
        };
        if let Some(e) = listed(key) {
            if e.sha256 != sha {
                return Err(LakeError::SyncKeyConflict {
                    key: key.to_owned(),
                    local: sha,
                    remote: e.sha256,
                });
            }
            return Ok(Some((sha, size)));
        }
        if collected.contains(key) {
            // store.push.collected: a key a standing record names is never uploaded again
            return Ok(None);
        }
        let bytes = std::fs::read(dir.join(key))?;
        let (sha, size) = (super::node::digest(&bytes), bytes.len() as u64);
        bucket.put(key, Bytes::from(bytes))?;
        report.uploaded.push(key.to_owned());
        report.uploaded_bytes += size;
        Ok(Some((sha, size)))
    };

    for key in local.list("commits/")? {
        if synced(&key) {
            if let Some(d) = upload(&key, &mut digests, &mut report)? {
                local_entries.insert(key, d);
            }
        }
    }
    let tables_here: BTreeSet<String> = local_lake
        .table_names()
        .map_err(store_error)?
        .into_iter()
        .collect();
    for table in tables_here.iter().cloned() {
        let Some((Some(local_head), local_fence)) =
            local_lake.current(&table).map_err(store_error)?
        else {
            continue;
        };
        let decide = |bucket_head: &Option<String>| -> Result<Decision, LakeError> {
            Ok(match bucket_head {
                Some(b) if *b == local_head => Decision::Unchanged,
                None => Decision::Advance,
                Some(b) if chain_reaches(&local, Some(&local_head), b)? => Decision::Advance,
                // the local head is listed, so it is on the bucket's chain, which moved past it
                Some(_) if listed(&local_head).is_some() => Decision::Behind,
                Some(_) => Decision::Fenced,
            })
        };
        // decided first without the lease (most tables of a push are in step or behind),
        // and again under it for a table to advance
        let mut bucket_head = bucket_lake
            .current(&table)
            .map_err(store_error)?
            .and_then(|(h, _)| h);
        let mut decision = decide(&bucket_head)?;
        let mut leased = false;
        let mut bucket_receipts = 0;
        if decision == Decision::Advance {
            match bucket_lake.sync_lease(&table) {
                Ok((head, receipts)) => {
                    leased = true;
                    bucket_receipts = receipts;
                    if head != bucket_head {
                        bucket_head = head;
                        decision = decide(&bucket_head)?;
                    }
                }
                Err(e) => match store_error(e) {
                    e @ LakeError::LeaseHeld { .. } => {
                        report.warnings.push(SyncWarning::TableHeld {
                            table: table.clone(),
                            reason: e.to_string(),
                        });
                        continue;
                    }
                    e => return Err(e),
                },
            }
        }
        let result = (|| -> Result<(), LakeError> {
            match decision {
                Decision::Behind | Decision::Fenced => {
                    // a table this push does not move keeps its bucket head whole: no
                    // tombstone names it
                    if let Some(b) = &bucket_head {
                        protected.insert(b.clone());
                        if let Some(bytes) = bucket.get(b)? {
                            if let Ok(s) = serde_json::from_slice::<SnapshotManifest>(&bytes) {
                                protected.extend(s.parts.iter().map(|p| p.path.clone()));
                            }
                        }
                    }
                    if decision == Decision::Fenced {
                        report.warnings.push(SyncWarning::PointerFenced {
                            table: table.clone(),
                            local: local_head.clone(),
                            bucket: bucket_head.clone().unwrap_or_default(),
                        });
                    } else {
                        report.behind.push(table.clone());
                    }
                }
                Decision::Unchanged | Decision::Advance => {
                    let objects =
                        published_objects(&local, &local_lake, &table, &|k| listed(k).is_some())?;
                    if decision == Decision::Advance {
                        // receipts a crashed push left past the bucket head would shadow ours
                        // (of several at one seq, the highest fence is published)
                        let ours = local_lake
                            .snapshot(&local_head)
                            .map_err(store_error)?
                            .receipts;
                        for seq in bucket_receipts + 1..=ours {
                            for k in bucket.list(&layout::receipt_seq_prefix(&table, seq))? {
                                if listed(&k).is_none() {
                                    bucket.delete(&k)?;
                                }
                            }
                        }
                    }
                    // an object of a head already published is listed again if a push
                    // stopped between its pointer and its manifest
                    for key in &objects {
                        if let Some(d) = upload(key, &mut digests, &mut report)? {
                            local_entries.insert(key.clone(), d);
                        }
                    }
                    protected.extend(objects.iter().cloned());
                }
            }
            Ok(())
        })();
        match (result, decision) {
            (Ok(()), Decision::Advance) => {
                bucket_lake
                    .sync_publish(&table, &local_head, local_fence)
                    .map_err(store_error)?;
                report.advanced.push(table);
            }
            (Ok(()), other) => {
                if leased {
                    bucket_lake.sync_release();
                }
                if other == Decision::Unchanged {
                    report.unchanged.push(table);
                }
            }
            (Err(e), _) => {
                if leased {
                    bucket_lake.sync_release();
                }
                digests.save()?;
                return Err(e);
            }
        }
    }
    digests.save()?;

    // this push's owned keys are held before the commit lists them (store.merge.held-record)
    let mine = held.entry(node.id.clone()).or_default();
    for k in local_entries.keys().filter(|k| owned(k)) {
        if listed(k).is_none_or(|e| e.owner.as_deref() == Some(node.id.as_str())) {
            mine.insert(k.clone());
        }
    }
    node.write_held(&held)?;
    // only keys of tables this store still has can be its deletions
    let held_mine: BTreeSet<String> = held
        .get(&node.id)
        .map(|h| {
            h.iter()
                .filter(|k| super::table_of_key(k).is_none_or(|t| tables_here.contains(&t)))
                .cloned()
                .collect()
        })
        .unwrap_or_default();

    let now = Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true);
    let store_id_text = String::from_utf8_lossy(&store_id).trim().to_owned();
    let mut committed: Option<BucketManifest> = None;
    let mut tombstoned: Vec<String> = Vec::new();
    let mut warnings: Vec<SyncWarning> = Vec::new();
    let rounds = commit_rounds(config.push_retries, &report.uploaded, || {
        let (remote, version) = match read_manifest(&bucket)? {
            Some((m, v)) => (m, Some(v)),
            None => (BucketManifest::empty(&store_id_text), None),
        };
        let read_generation = remote.generation;
        // a local store that went away under the push (its directory removed) is no reason
        // to tombstone what it held
        if !dir.join(STORE_ID).exists() {
            return Err(LakeError::Root(format!(
                "{}: the local store's {STORE_ID} is gone; nothing was committed",
                local.url()
            )));
        }
        let (mut next, dead, warns) = merge(
            &remote,
            &local_entries,
            &held_mine,
            &protected,
            &node,
            &dir,
            config,
            &now,
        );
        if version.is_some()
            && next.entries == remote.entries
            && next.tombstones == remote.tombstones
            && next.collected == remote.collected
            && next.keys == remote.keys
        {
            // nothing to list, tombstone or register: no new generation
            committed = Some(remote);
            tombstoned = dead;
            warnings = warns;
            return Ok((true, read_generation));
        }
        next.generation = remote.generation + 1;
        next.committed_by = node.id.clone();
        next.committed_at = now.clone();
        let bytes = Bytes::from(next.to_bytes());
        let won = bucket
            .put_versioned(MANIFEST, bytes, version.as_ref())?
            .is_some();
        if won {
            committed = Some(next);
            tombstoned = dead;
            warnings = warns;
        }
        Ok((won, read_generation))
    })?;
    let mut m = committed.expect("a won round keeps its manifest");
    report.rounds = rounds;
    report.generation = m.generation;
    report.warnings.extend(warnings);
    // the generation manifest, and the retained ones only (store.collect.retain-generations)
    bucket.put(&generation_key(m.generation), Bytes::from(m.to_bytes()))?;
    let keep_from = m
        .generation
        .saturating_sub(u64::from(config.retain_generations) - 1);
    for k in bucket.list(super::manifest::GENERATIONS)? {
        let n = k
            .rsplit('/')
            .next()
            .and_then(|n| n.strip_suffix(".json"))
            .and_then(|n| n.parse::<u64>().ok());
        if n.is_some_and(|n| n < keep_from) {
            bucket.delete(&k)?;
        }
    }
    // the objects its tombstones name, now unlisted, leave the bucket
    for k in &tombstoned {
        bucket.delete(k)?;
    }
    report.tombstoned = tombstoned;
    // the held record is replaced by what the commit lists of this node's (store.merge.held-record)
    let now_held: BTreeSet<String> = m
        .entries
        .iter()
        .filter(|(k, e)| {
            e.owner.as_deref() == Some(node.id.as_str()) && dir.join(k.as_str()).exists()
        })
        .map(|(k, _)| k.clone())
        .collect();
    held.insert(node.id.clone(), now_held);
    node.write_held(&held)?;
    node.mark_push(false)?;
    // the publications this commit listed are pushed: their drain marks go (store.drain.mark)
    super::drain::clear_pushed(&bucket, &node.id, |k| m.entries.contains_key(k))?;
    Ok(report)
}

/// The scoped union of one commit round (`store.merge.scoped-union`): every remote entry,
/// plus the local entries (new ones owned by this node when they have an owner), less the
/// node's owned entries it held and no longer has (tombstoned and signed), less the keys a
/// trusted tombstone or a collected record names. Answers the manifest, the keys tombstoned,
/// and the warnings.
#[allow(clippy::too_many_arguments)]
fn merge(
    remote: &BucketManifest,
    local: &BTreeMap<String, (String, u64)>,
    held: &BTreeSet<String>,
    protected: &BTreeSet<String>,
    node: &Node,
    dir: &Path,
    config: &SyncConfig,
    now: &str,
) -> (BucketManifest, Vec<String>, Vec<SyncWarning>) {
    let mut next = remote.clone();
    let mut warnings = Vec::new();
    let collected: BTreeSet<&str> = remote.collected.iter().map(|c| c.key.as_str()).collect();
    let tombstones: BTreeMap<&str, &Tombstone> = remote
        .tombstones
        .iter()
        .map(|t| (t.key.as_str(), t))
        .collect();
    for (k, (sha, size)) in local {
        if collected.contains(k.as_str()) || next.entries.contains_key(k) {
            continue;
        }
        let mut owner = owned(k).then(|| node.id.clone());
        if let Some(t) = tombstones.get(k.as_str()) {
            if t.owner != node.id {
                match remote.verify(t) {
                    // a trusted deletion of another node's: not listed again
                    Ok(()) => continue,
                    Err(why) => {
                        // store.merge.tombstone-unverified: the entry is preserved
                        warnings.push(SyncWarning::TombstoneUnverified {
                            key: k.clone(),
                            owner: t.owner.clone(),
                            reason: why.to_string(),
                        });
                        owner = Some(t.owner.clone());
                    }
                }
            }
        }
        next.entries.insert(
            k.clone(),
            super::manifest::Entry {
                sha256: sha.clone(),
                size: *size,
                owner,
            },
        );
    }
    // store.merge.collected: a key a standing collected record names is no entry, wherever a
    // copy of it survives
    next.entries.retain(|k, _| !collected.contains(k.as_str()));
    // entries a trusted tombstone names go; a tombstone of another owner keeps its entry
    for t in &remote.tombstones {
        if let Some(e) = next.entries.get(&t.key) {
            if e.owner.as_deref() != Some(t.owner.as_str()) {
                warnings.push(SyncWarning::TombstoneForeign {
                    key: t.key.clone(),
                    tombstone_owner: t.owner.clone(),
                    entry_owner: e.owner.clone().unwrap_or_else(|| "nobody".into()),
                });
            } else if let Err(why) = remote.verify(t) {
                warnings.push(SyncWarning::TombstoneUnverified {
                    key: t.key.clone(),
                    owner: t.owner.clone(),
                    reason: why.to_string(),
                });
            } else {
                next.entries.remove(&t.key);
            }
        }
    }
    // this node's deletions: owned, held, and gone from the local store
    let mut dead = Vec::new();
    for (k, e) in &remote.entries {
        if e.owner.as_deref() == Some(node.id.as_str())
            && held.contains(k)
            && !protected.contains(k)
            && !local.contains_key(k)
            && !dir.join(k).exists()
        {
            next.entries.remove(k);
            next.tombstones.retain(|t| t.key != *k);
            next.tombstones
                .push(Tombstone::signed(k, &node.id, now, node.issuer.as_ref()));
            dead.push(k.clone());
        }
    }
    // tombstones and collected records older than tombstone_ttl lapse
    let ttl = chrono::Duration::from_std(config.tombstone_ttl).unwrap_or(chrono::Duration::MAX);
    let fresh = |at: &str| {
        chrono::DateTime::parse_from_rfc3339(at)
            .map(|t| Utc::now().signed_duration_since(t) < ttl)
            .unwrap_or(true)
    };
    next.tombstones.retain(|t| fresh(&t.deleted_at));
    next.collected.retain(|c| fresh(&c.at));
    if let Some(k) = &node.issuer {
        next.register_key(&node.id, k, now);
    }
    (next, dead, warnings)
}
