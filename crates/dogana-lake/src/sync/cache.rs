//! Lazy parts and the part cache (`cold-store-boots`).
//!
//! A lazy pull leaves data parts in the bucket and writes `.sync/source.json` naming it. The
//! local root then answers a read of an absent part by fetching it whole from the bucket,
//! checking its SHA-256 against the bucket manifest (`digest-mismatch` refuses), within one
//! 30 s deadline covering the manifest lookup, the GET attempts and the sleeps between them
//! (`read.cache.miss-wait`; expiry is `ReadPartUnavailable` naming the part). Fetched parts
//! are recorded in `.sync/cache.json` with their size and last read; above `part_cache_bytes`
//! the least recently read part this process does not hold is deleted
//! (`store.pull.part-cache`). A part the pull brought home is not the cache's to evict.
//!
//! What "holds" means here: a part a fold reads, or one `dogana duckdb-sql` hands to DuckDB
//! by its path, is held by this process until it ends; a part read into memory is not held
//! once read. Another process's holds are not seen (the cache index is one file, rewritten
//! whole); a part evicted under it is fetched again on its next read.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde::{Deserialize, Serialize};

use super::manifest::{Entry, MANIFEST};
use super::node::{digest, write_atomic};
use super::SyncConfig;
use crate::objects::Root;
use crate::LakeError;

/// Where a lazy store names its bucket.
pub const SOURCE_JSON: &str = ".sync/source.json";
/// The part cache's index.
pub const CACHE_JSON: &str = ".sync/cache.json";
/// The receipts and collected snapshot manifests a lazy pull left in the bucket
/// (`store.pull.lazy-folded-runs`, `store.pull.husks-skipped`).
pub const SKIPPED_JSON: &str = ".skipped-runs.json";
/// The deadline of one part's acquisition (`read.cache.miss-wait`).
pub const MISS_WAIT: Duration = Duration::from_secs(30);

/// `.sync/source.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Source {
    /// The bucket the parts come from.
    pub bucket: String,
    /// The part cache's bound the pull was configured with (the store's `store.toml`, when
    /// it has one, takes precedence).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part_cache_bytes: Option<u64>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Index {
    /// Per fetched part: its size and when it was last read (ms since the epoch).
    parts: BTreeMap<String, (u64, u64)>,
}

/// What the bucket manifest lists, as read: its entries and the keys collected.
type Listed = (BTreeMap<String, Entry>, BTreeSet<String>);

/// A lazy store's source of parts, and its cache.
pub struct PartSource {
    dir: PathBuf,
    /// None: the store lists skipped objects but names no bucket to fetch them from.
    bucket_url: Option<String>,
    limit: u64,
    skipped: Mutex<Option<BTreeSet<String>>>,
    bucket: Mutex<Option<Root>>,
    entries: Mutex<Option<Listed>>,
    index: Mutex<Index>,
    held: Mutex<BTreeSet<String>>,
    deadline: Duration,
}

impl std::fmt::Debug for PartSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PartSource")
            .field("bucket", &self.bucket_url.as_deref().unwrap_or("none"))
            .finish()
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl PartSource {
    /// The part source of the local store at `dir` (None: it was not pulled lazily).
    pub fn of_dir(dir: &Path) -> Result<Option<PartSource>, LakeError> {
        let source: Option<Source> = match std::fs::read(dir.join(SOURCE_JSON)) {
            Ok(b) => Some(
                serde_json::from_slice(&b)
                    .map_err(|e| LakeError::Root(format!("{SOURCE_JSON}: {e}")))?,
            ),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e.into()),
        };
        if source.is_none() && !dir.join(SKIPPED_JSON).exists() {
            return Ok(None);
        }
        let index = std::fs::read(dir.join(CACHE_JSON))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        let limit = if dir.join(super::config::STORE_TOML).exists() {
            SyncConfig::of_store(dir)?.part_cache_bytes
        } else {
            source
                .as_ref()
                .and_then(|s| s.part_cache_bytes)
                .unwrap_or(SyncConfig::default().part_cache_bytes)
        };
        Ok(Some(PartSource {
            dir: dir.to_owned(),
            bucket_url: source.map(|s| s.bucket),
            limit,
            skipped: Mutex::new(None),
            bucket: Mutex::new(None),
            entries: Mutex::new(None),
            index: Mutex::new(index),
            held: Mutex::new(BTreeSet::new()),
            deadline: MISS_WAIT,
        }))
    }

    /// The skipped objects (`.skipped-runs.json`), read once.
    fn with_skipped<T>(&self, f: impl FnOnce(&BTreeSet<String>) -> T) -> T {
        let mut s = self.skipped.lock().expect("skipped");
        if s.is_none() {
            *s = Some(read_skipped(&self.dir));
        }
        f(s.as_ref().expect("set above"))
    }

    /// Whether a lazy pull left `key` in the bucket (a receipt or a collected snapshot's
    /// manifest).
    pub fn is_skipped(&self, key: &str) -> bool {
        self.with_skipped(|s| s.contains(key))
    }

    /// The skipped keys under `prefix`: a listing of the store includes them, as the bucket
    /// holds them.
    pub fn skipped_under(&self, prefix: &str) -> Vec<String> {
        self.with_skipped(|s| {
            s.range(prefix.to_owned()..)
                .take_while(|k| k.starts_with(prefix))
                .cloned()
                .collect()
        })
    }

    /// The same source with another acquisition deadline (tests).
    pub fn with_deadline(mut self, deadline: Duration) -> PartSource {
        self.deadline = deadline;
        self
    }

    /// `part_cache_bytes`.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// The bucket it fetches from (None: none named).
    pub fn bucket(&self) -> Option<&str> {
        self.bucket_url.as_deref()
    }

    /// Holds `keys` for this process: the cache evicts none of them.
    pub fn hold(&self, keys: impl IntoIterator<Item = String>) {
        self.held.lock().expect("held").extend(keys);
    }

    /// Lets go of `keys`.
    pub fn release(&self, keys: &[String]) {
        let mut h = self.held.lock().expect("held");
        for k in keys {
            h.remove(k);
        }
    }

    /// The listed entry of `key`, reading the bucket manifest (again, when `fresh`).
    fn entry(&self, key: &str, fresh: bool) -> Result<Option<Entry>, LakeError> {
        let mut cached = self.entries.lock().expect("entries");
        if fresh || cached.is_none() {
            let root = self.root()?;
            let m = super::push::read_manifest(&root)?.ok_or_else(|| {
                LakeError::SyncManifestInvalid {
                    key: format!("{}/{MANIFEST}", self.bucket_url.as_deref().unwrap_or("?")),
                    reason: "the bucket has no manifest".into(),
                }
            })?;
            let collected = m.0.collected.iter().map(|c| c.key.clone()).collect();
            *cached = Some((m.0.entries, collected));
        }
        let (entries, collected) = cached.as_ref().expect("read above");
        if let Some(e) = entries.get(key) {
            return Ok(Some(e.clone()));
        }
        if fresh && collected.contains(key) {
            // store.pull.folded-run-collected: the bucket answers it collected
            return Err(LakeError::PartCollected {
                snapshot: "(a snapshot a collection in the bucket reclaimed)".into(),
                part: key.to_owned(),
            });
        }
        Ok(None)
    }

    fn root(&self) -> Result<Root, LakeError> {
        let mut b = self.bucket.lock().expect("bucket");
        if b.is_none() {
            let url = self.bucket_url.as_deref().ok_or_else(|| {
                LakeError::Root(format!("{SOURCE_JSON} is missing: no bucket to fetch from"))
            })?;
            *b = Some(Root::open(url)?);
        }
        Ok(b.clone().expect("set above"))
    }

    /// Fetches the absent part `key` whole, verified, and keeps it (None: the bucket manifest
    /// does not list it, so it is not the source's to give).
    pub fn fetch(&self, key: &str) -> Result<Option<Bytes>, LakeError> {
        let got = self.acquire(key, |root, entry| {
            let bytes = root
                .get(key)?
                .ok_or_else(|| LakeError::Root(format!("{key} is listed but not in the bucket")))?;
            let found = digest(&bytes);
            if found != entry.sha256 {
                return Err(LakeError::SyncDigestMismatch {
                    key: key.to_owned(),
                    expected: entry.sha256.clone(),
                    found,
                });
            }
            write_atomic(&self.dir.join(key), &bytes)?;
            Ok((bytes.len() as u64, bytes))
        })?;
        Ok(got)
    }

    /// Brings the absent part `key` home without holding it in memory (a reader of its file,
    /// such as DuckDB through `duckdb-sql`): false when the bucket manifest does not list it.
    pub fn fetch_to_disk(&self, key: &str) -> Result<bool, LakeError> {
        let got = self.acquire(key, |root, entry| {
            download_verified(root, &self.dir, key, entry).map(|n| (n, ()))
        })?;
        Ok(got.is_some())
    }

    /// One acquisition of the absent object `key` (`read.cache.miss-wait`): its entry in the
    /// bucket manifest (read again once when it is not there yet), then `get` it, retried
    /// with backoff, lookups, attempts and sleeps within one deadline; a data part fetched is
    /// kept in the cache. None: the bucket does not list it.
    fn acquire<T>(
        &self,
        key: &str,
        get: impl Fn(&Root, &Entry) -> Result<(u64, T), LakeError>,
    ) -> Result<Option<T>, LakeError> {
        if self.bucket_url.is_none() {
            // store.pull.folded-runs-unreachable: skipped, and nowhere to fetch it from
            return Err(if super::is_data_part(key) {
                LakeError::ReadPartUnavailable {
                    part: key.to_owned(),
                    reason: format!("the store names no bucket ({SOURCE_JSON} is missing)"),
                }
            } else {
                LakeError::SyncFoldedRunsUnfetched {
                    table: super::table_of_key(key).unwrap_or_default(),
                    key: key.to_owned(),
                }
            });
        }
        let start = Instant::now();
        let mut pause = Duration::from_millis(50);
        let attempt = |refresh: bool| -> Result<Option<(u64, T)>, LakeError> {
            let entry = match self.entry(key, refresh)? {
                Some(e) => e,
                // an object newer than the manifest read: read the manifest again once
                None if !refresh => match self.entry(key, true)? {
                    Some(e) => e,
                    None => return Ok(None),
                },
                None => return Ok(None),
            };
            get(&self.root()?, &entry).map(Some)
        };
        let mut refresh = false;
        loop {
            match attempt(refresh) {
                Ok(Some((size, got))) => {
                    // only data parts are the cache's; a receipt or manifest fetched stays
                    if super::is_data_part(key) {
                        self.keep(key, size)?;
                    }
                    return Ok(Some(got));
                }
                Ok(None) => return Ok(None),
                Err(
                    e @ (LakeError::SyncDigestMismatch { .. }
                    | LakeError::PartCollected { .. }
                    | LakeError::CredentialsRefused { .. }),
                ) => return Err(e),
                Err(e) => {
                    if start.elapsed() + pause > self.deadline {
                        return Err(LakeError::ReadPartUnavailable {
                            part: key.to_owned(),
                            reason: e.to_string(),
                        });
                    }
                    refresh = true;
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_secs(2));
                }
            }
        }
    }

    /// Records a read of a fetched part (for least-recently-read eviction).
    pub fn touch(&self, key: &str) {
        let mut idx = self.index.lock().expect("index");
        if let Some(e) = idx.parts.get_mut(key) {
            e.1 = now_ms();
        }
    }

    /// Records a part just fetched, then evicts down to the limit.
    fn keep(&self, key: &str, size: u64) -> Result<(), LakeError> {
        let mut idx = self.index.lock().expect("index");
        // merge what other processes recorded meanwhile
        if let Some(disk) = std::fs::read(self.dir.join(CACHE_JSON))
            .ok()
            .and_then(|b| serde_json::from_slice::<Index>(&b).ok())
        {
            for (k, v) in disk.parts {
                idx.parts.entry(k).or_insert(v);
            }
        }
        idx.parts.insert(key.to_owned(), (size, now_ms()));
        let held = self.held.lock().expect("held").clone();
        let mut total: u64 = idx.parts.values().map(|(s, _)| s).sum();
        if total > self.limit {
            let mut by_age: Vec<(u64, String, u64)> = idx
                .parts
                .iter()
                .filter(|(k, _)| k.as_str() != key && !held.contains(k.as_str()))
                .map(|(k, (s, t))| (*t, k.clone(), *s))
                .collect();
            by_age.sort();
            for (_, k, s) in by_age {
                if total <= self.limit {
                    break;
                }
                match std::fs::remove_file(self.dir.join(&k)) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(e.into()),
                }
                idx.parts.remove(&k);
                total -= s;
            }
        }
        write_atomic(
            &self.dir.join(CACHE_JSON),
            &serde_json::to_vec(&*idx).expect("json"),
        )
    }

    /// The parts the cache holds now (fetched and not evicted), with their sizes.
    pub fn cached(&self) -> BTreeMap<String, u64> {
        self.index
            .lock()
            .expect("index")
            .parts
            .iter()
            .map(|(k, (s, _))| (k.clone(), *s))
            .collect()
    }
}

/// The keys `.skipped-runs.json` lists (none when it is missing or unreadable).
pub(crate) fn read_skipped(dir: &Path) -> BTreeSet<String> {
    std::fs::read(dir.join(SKIPPED_JSON))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Streams `key` from `bucket` into `dir`, verified against its listed digest and size before
/// it is renamed into place (`digest-mismatch` otherwise, nothing written): its size. Memory
/// stays bounded whatever the object's size.
pub(crate) fn download_verified(
    bucket: &Root,
    dir: &Path,
    key: &str,
    entry: &Entry,
) -> Result<u64, LakeError> {
    let to = dir.join(key);
    let Some((tmp, found, size)) = bucket.download(key, &to)? else {
        return Err(LakeError::SyncDigestMismatch {
            key: key.to_owned(),
            expected: entry.sha256.clone(),
            found: "nothing (the object is not in the bucket)".into(),
        });
    };
    if found != entry.sha256 || size != entry.size {
        let _ = std::fs::remove_file(&tmp);
        return Err(LakeError::SyncDigestMismatch {
            key: key.to_owned(),
            expected: entry.sha256.clone(),
            found,
        });
    }
    std::fs::rename(&tmp, &to)?;
    Ok(size)
}
