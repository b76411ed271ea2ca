//! The store root: an object store under a prefix, read and written synchronously, and the one
//! conditional write the store's coordination rests on (`topology.coordinate.primitive`).
//!
//! On an object store the pointer is one object replaced under If-Match on its ETag (or its
//! version) and created under If-None-Match. `object_store`'s local filesystem creates
//! exclusively but cannot replace conditionally, so on `file://` a pointer is a sequence of
//! immutable version files `_pointer.json.<n>` (20 digits): replacing version `n` is, under an
//! exclusive `flock(2)` of `._pointer.json.lock` (released by the kernel when a writer dies),
//! checking that `n` is the highest version and creating `n + 1` with `link(2)` from a fully
//! written temporary file, which no reader sees half-written. The highest version is the pointer; after each
//! replacement `_pointer.json` is refreshed (a rename) as a copy for outside readers, and
//! versions 8 below the new one are removed.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;
use chrono::{DateTime, Utc};
use futures::TryStreamExt;
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use object_store::path::Path as OPath;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion};
use tokio::runtime::Runtime;

use crate::LakeError;

/// How many pointer versions below the current one a filesystem root keeps.
const KEEP_VERSIONS: u64 = 8;

/// Which version of a conditionally written object a write is conditioned on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Version {
    /// An object store's ETag and version.
    Tag(UpdateVersion),
    /// A filesystem pointer's version number.
    Local(u64),
}

/// A conditionally written object as read: its bytes, its version and when the storage last
/// wrote it (by the storage's clock).
#[derive(Debug, Clone)]
pub struct Versioned {
    /// The bytes.
    pub bytes: Bytes,
    /// The version to condition a replacement on.
    pub version: Version,
    /// The storage's time of the write.
    pub modified: DateTime<Utc>,
}

/// Where the objects live.
#[derive(Debug, Clone)]
enum Kind {
    /// A local directory (the pointer written by link-based versions).
    Local(PathBuf),
    /// An object store with real conditional writes (memory, S3, GCS, Azure).
    Remote,
}

/// A store root: the object store, the prefix of the store in it, and a runtime to drive it.
#[derive(Clone)]
pub struct Root {
    url: String,
    store: Arc<dyn ObjectStore>,
    prefix: OPath,
    kind: Kind,
    rt: Arc<Runtime>,
    /// A lazily pulled local store's source of absent parts (`crate::sync::cache`).
    lazy: Option<Arc<crate::sync::cache::PartSource>>,
}

impl std::fmt::Debug for Root {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Root").field("url", &self.url).finish()
    }
}

/// The `memory://NAME` stores of this process: every handle on one name shares its objects.
fn memory_stores() -> &'static Mutex<BTreeMap<String, Arc<InMemory>>> {
    static STORES: OnceLock<Mutex<BTreeMap<String, Arc<InMemory>>>> = OnceLock::new();
    STORES.get_or_init(|| Mutex::new(BTreeMap::new()))
}

fn runtime() -> Result<Arc<Runtime>, LakeError> {
    Ok(Arc::new(
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?,
    ))
}

impl Root {
    /// Opens a root from its URL: `file:///dir`, `memory://name`, `s3://bucket/prefix`,
    /// `gs://bucket/prefix`, `az://container/prefix` (credentials and endpoints from each
    /// cloud's usual environment variables), or a plain directory path.
    pub fn open(spec: &str) -> Result<Root, LakeError> {
        let rt = runtime()?;
        if !spec.contains("://") {
            return Root::local(PathBuf::from(spec), rt);
        }
        let url = url::Url::parse(spec).map_err(|e| LakeError::Root(format!("{spec}: {e}")))?;
        let prefix = || OPath::from(url.path().trim_matches('/'));
        let bucket = || {
            url.host_str()
                .filter(|h| !h.is_empty())
                .map(str::to_owned)
                .ok_or_else(|| LakeError::Root(format!("{spec}: no bucket or container")))
        };
        let (store, prefix): (Arc<dyn ObjectStore>, OPath) = match url.scheme() {
            "file" => {
                let path = url
                    .to_file_path()
                    .map_err(|()| LakeError::Root(format!("{spec}: not a local path")))?;
                return Root::local(path, rt);
            }
            "memory" => {
                let name = format!("{}{}", url.host_str().unwrap_or(""), url.path());
                let store = memory_stores()
                    .lock()
                    .map_err(|_| LakeError::Root("the memory stores' lock is poisoned".into()))?
                    .entry(name)
                    .or_insert_with(|| Arc::new(InMemory::new()))
                    .clone();
                (store, OPath::from(""))
            }
            "s3" | "s3a" => (
                Arc::new(
                    object_store::aws::AmazonS3Builder::from_env()
                        .with_bucket_name(bucket()?)
                        .build()?,
                ),
                prefix(),
            ),
            "gs" => (
                Arc::new(
                    object_store::gcp::GoogleCloudStorageBuilder::from_env()
                        .with_bucket_name(bucket()?)
                        .build()?,
                ),
                prefix(),
            ),
            "az" | "azure" | "abfs" => (
                Arc::new(
                    object_store::azure::MicrosoftAzureBuilder::from_env()
                        .with_container_name(bucket()?)
                        .build()?,
                ),
                prefix(),
            ),
            other => {
                return Err(LakeError::Root(format!(
                    "{spec}: scheme {other}:// is not one of file, memory, s3, gs, az"
                )))
            }
        };
        Ok(Root {
            url: spec.to_owned(),
            store,
            prefix,
            kind: Kind::Remote,
            rt,
            lazy: None,
        })
    }

    /// A root over an object store given directly (tests wrap one to make it misbehave).
    pub fn with_store(url: &str, store: Arc<dyn ObjectStore>) -> Result<Root, LakeError> {
        Ok(Root {
            url: url.to_owned(),
            store,
            prefix: OPath::from(""),
            kind: Kind::Remote,
            rt: runtime()?,
            lazy: None,
        })
    }

    fn local(dir: PathBuf, rt: Arc<Runtime>) -> Result<Root, LakeError> {
        std::fs::create_dir_all(&dir)?;
        let dir = dir.canonicalize()?;
        let lazy = crate::sync::cache::PartSource::of_dir(&dir)?.map(Arc::new);
        Ok(Root {
            url: format!("file://{}", dir.display()),
            store: Arc::new(LocalFileSystem::new_with_prefix(&dir)?),
            prefix: OPath::from(""),
            kind: Kind::Local(dir),
            rt,
            lazy,
        })
    }

    /// The same root with its own runtime (another handle, for another thread). A cloud
    /// root gets its own HTTP client too: a client's connections belong to the runtime that
    /// made them.
    pub fn reopen(&self) -> Result<Root, LakeError> {
        let cloud = ["s3:", "s3a:", "gs:", "az:", "azure:", "abfs:"]
            .iter()
            .any(|s| self.url.starts_with(s));
        if cloud {
            return Root::open(&self.url);
        }
        Ok(Root {
            rt: runtime()?,
            ..self.clone()
        })
    }

    /// The object store the root lives in and the root's prefix there (another reader of the
    /// same objects, such as a Delta log store, starts from these).
    pub fn object_store(&self) -> (Arc<dyn ObjectStore>, OPath) {
        (self.store.clone(), self.prefix.clone())
    }

    /// The root's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The local directory of a `file://` root.
    pub fn local_dir(&self) -> Option<&std::path::Path> {
        match &self.kind {
            Kind::Local(d) => Some(d),
            Kind::Remote => None,
        }
    }

    /// Where an outside reader (DuckDB) finds the object `key`: a local path for `file://`, the
    /// object's URL for a cloud root; a `memory://` object has none.
    pub fn object_url(&self, key: &str) -> Result<String, LakeError> {
        match &self.kind {
            Kind::Local(dir) => Ok(dir.join(key).display().to_string()),
            Kind::Remote if self.url.starts_with("memory:") => Err(LakeError::Root(format!(
                "{}: a memory store has no URL an outside reader can open",
                self.url
            ))),
            Kind::Remote => Ok(format!("{}/{key}", self.url.trim_end_matches('/'))),
        }
    }

    fn path(&self, key: &str) -> OPath {
        let mut p = self.prefix.clone();
        for part in key.split('/').filter(|s| !s.is_empty()) {
            p = p.join(part);
        }
        p
    }

    fn key_of(&self, p: &OPath) -> String {
        let full = p.as_ref();
        let pre = self.prefix.as_ref();
        full.strip_prefix(pre)
            .unwrap_or(full)
            .trim_start_matches('/')
            .to_owned()
    }

    /// The object `key`, or None when it does not exist. On a lazily pulled store an absent
    /// data part is fetched from the bucket first (`crate::sync::cache`).
    pub fn get(&self, key: &str) -> Result<Option<Bytes>, LakeError> {
        let path = self.path(key);
        let got: Option<Bytes> = self.rt.block_on(async {
            match self.store.get(&path).await {
                Ok(r) => Ok(Some(r.bytes().await?)),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(LakeError::from(e)),
            }
        })?;
        match (&self.lazy, got) {
            (Some(lazy), None) if crate::sync::is_data_part(key) || lazy.is_skipped(key) => {
                lazy.fetch(key)
            }
            (Some(lazy), Some(b)) => {
                lazy.touch(key);
                Ok(Some(b))
            }
            (_, got) => Ok(got),
        }
    }

    /// Streams the object `key` into a new temporary file beside `to` (its directory made),
    /// hashing it as it goes: the temporary file, its SHA-256 (hex) and its size; None when
    /// the object does not exist. The caller renames the file into place once the digest is
    /// the one it expects, so memory stays bounded whatever the object's size.
    pub fn download(
        &self,
        key: &str,
        to: &Path,
    ) -> Result<Option<(PathBuf, String, u64)>, LakeError> {
        use sha2::Digest as _;
        let path = self.path(key);
        let parent = to
            .parent()
            .ok_or_else(|| LakeError::Root(format!("{}: no directory", to.display())))?;
        std::fs::create_dir_all(parent)?;
        let tmp = parent.join(format!(
            ".{}.{}.part",
            to.file_name().and_then(|n| n.to_str()).unwrap_or("object"),
            uuid::Uuid::new_v4().simple()
        ));
        let result = self.rt.block_on(async {
            let r = match self.store.get(&path).await {
                Ok(r) => r,
                Err(object_store::Error::NotFound { .. }) => return Ok(None),
                Err(e) => return Err(LakeError::from(e)),
            };
            let mut file = std::fs::File::create(&tmp)?;
            let mut hash = sha2::Sha256::new();
            let mut size = 0u64;
            let mut take = |chunk: &[u8]| -> std::io::Result<()> {
                file.write_all(chunk)?;
                hash.update(chunk);
                size += chunk.len() as u64;
                Ok(())
            };
            match r.payload {
                // a local bucket: object_store's stream reads a file 8 KiB per blocking
                // task, which made a 200 MB part's copy twice as slow as reading it whole;
                // a plain read loop with a 1 MiB buffer keeps memory bounded and fast
                object_store::GetResultPayload::File(mut src, _) => {
                    use std::io::Read as _;
                    let mut buf = vec![0u8; 1 << 20];
                    loop {
                        let n = src.read(&mut buf)?;
                        if n == 0 {
                            break;
                        }
                        take(&buf[..n])?;
                    }
                }
                object_store::GetResultPayload::Stream(mut stream) => {
                    while let Some(chunk) = stream.try_next().await? {
                        take(&chunk)?;
                    }
                }
            }
            file.sync_all()?;
            let digest = crate::pages::hex(&hash.finalize());
            Ok(Some((tmp.clone(), digest, size)))
        });
        if !matches!(result, Ok(Some(_))) {
            let _ = std::fs::remove_file(&tmp);
        }
        result
    }

    /// A lazily pulled store's part source (None: every part is home).
    pub fn part_source(&self) -> Option<&crate::sync::cache::PartSource> {
        self.lazy.as_deref()
    }

    /// Brings the data parts `keys` home on a lazy store and holds them for this process (the
    /// cache evicts none of them), so that a reader of their files finds them; on any other
    /// store, nothing. [`LakeError::FoldInputsExceedCache`] when together they exceed the
    /// cache (`store.fold.cached-inputs`), before anything is fetched.
    pub fn hydrate(&self, table: &str, keys: &[(String, u64)]) -> Result<(), LakeError> {
        let Some(lazy) = &self.lazy else {
            return Ok(());
        };
        let inputs: u64 = keys.iter().map(|(_, n)| n).sum();
        if inputs > lazy.limit() {
            return Err(LakeError::FoldInputsExceedCache {
                table: table.to_owned(),
                inputs,
                cache: lazy.limit(),
            });
        }
        lazy.hold(keys.iter().map(|(k, _)| k.clone()));
        for (k, _) in keys {
            if self.size(k)?.is_none() && !lazy.fetch_to_disk(k)? {
                return Err(LakeError::Root(format!(
                    "part {k} is neither here nor listed in the bucket {}",
                    lazy.bucket().unwrap_or("(none named)")
                )));
            }
        }
        Ok(())
    }

    /// Writes the object `key` whole (an atomic replace).
    pub fn put(&self, key: &str, bytes: Bytes) -> Result<(), LakeError> {
        let path = self.path(key);
        self.rt
            .block_on(self.store.put(&path, PutPayload::from(bytes)))?;
        Ok(())
    }

    /// Creates the object `key` unless it exists: false when it did.
    pub fn create(&self, key: &str, bytes: Bytes) -> Result<bool, LakeError> {
        let path = self.path(key);
        let r = self.rt.block_on(self.store.put_opts(
            &path,
            PutPayload::from(bytes),
            PutOptions::from(PutMode::Create),
        ));
        match r {
            Ok(_) => Ok(true),
            Err(object_store::Error::AlreadyExists { .. }) => Ok(false),
            // GCS and some S3 servers answer a lost If-None-Match as a failed precondition
            Err(object_store::Error::Precondition { .. }) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Deletes the object `key` (no error when it is gone).
    pub fn delete(&self, key: &str) -> Result<(), LakeError> {
        let path = self.path(key);
        match self.rt.block_on(self.store.delete(&path)) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// The size of the object at `key` in bytes (None: it does not exist), without reading it.
    pub fn size(&self, key: &str) -> Result<Option<u64>, LakeError> {
        let path = self.path(key);
        match self.rt.block_on(self.store.head(&path)) {
            Ok(m) => Ok(Some(m.size)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Every object key under `prefix` (recursively), sorted.
    pub fn list(&self, prefix: &str) -> Result<Vec<String>, LakeError> {
        let path = self.path(prefix);
        let metas: Vec<_> = self
            .rt
            .block_on(self.store.list(Some(&path)).try_collect::<Vec<_>>())
            .or_else(|e| match e {
                object_store::Error::NotFound { .. } => Ok(Vec::new()),
                e => Err(e),
            })?;
        let mut keys: Vec<String> = metas.iter().map(|m| self.key_of(&m.location)).collect();
        if let Some(lazy) = &self.lazy {
            // what a lazy pull left in the bucket is listed as the store's own
            keys.extend(lazy.skipped_under(prefix));
            keys.sort();
            keys.dedup();
        }
        keys.sort();
        Ok(keys)
    }

    /// Whether the root holds no object and no "directory" at all (an empty directory, a
    /// prefix of a bucket with nothing under it).
    pub fn is_empty(&self) -> Result<bool, LakeError> {
        self.is_empty_but(&[])
    }

    /// Whether the root holds nothing but, at most, the folders `except` (their names
    /// directly under the root).
    pub fn is_empty_but(&self, except: &[&str]) -> Result<bool, LakeError> {
        let path = self.path("");
        match self
            .rt
            .block_on(self.store.list_with_delimiter(Some(&path)))
        {
            // a local store's own configuration, node files and catalogs are no one
            // else's objects
            Ok(r) => Ok(r.objects.iter().all(|o| {
                o.location
                    .filename()
                    .is_some_and(crate::sync::machine_local)
            }) && r.common_prefixes.iter().all(|p| {
                p.filename().is_some_and(|n| except.contains(&n))
                    || p.filename().is_some_and(|n| n.starts_with('.'))
            })),
            Err(object_store::Error::NotFound { .. }) => Ok(true),
            Err(e) => Err(e.into()),
        }
    }

    /// The names directly under `prefix` that are "directories".
    pub fn list_dirs(&self, prefix: &str) -> Result<Vec<String>, LakeError> {
        let path = self.path(prefix);
        let r = match self
            .rt
            .block_on(self.store.list_with_delimiter(Some(&path)))
        {
            Ok(r) => r,
            Err(object_store::Error::NotFound { .. }) => return Ok(Vec::new()),
            Err(e) => return Err(e.into()),
        };
        let mut names: Vec<String> = r
            .common_prefixes
            .iter()
            .filter_map(|p| p.filename().map(str::to_owned))
            .collect();
        names.sort();
        Ok(names)
    }

    /// Reads a conditionally written object (a pointer): None when it does not exist.
    pub fn get_versioned(&self, key: &str) -> Result<Option<Versioned>, LakeError> {
        match &self.kind {
            Kind::Local(dir) => local_get(dir, key),
            Kind::Remote => {
                let path = self.path(key);
                self.rt.block_on(async {
                    match self.store.get(&path).await {
                        Ok(r) => {
                            let meta = r.meta.clone();
                            let bytes = r.bytes().await?;
                            Ok(Some(Versioned {
                                bytes,
                                version: Version::Tag(UpdateVersion {
                                    e_tag: meta.e_tag,
                                    version: meta.version,
                                }),
                                modified: meta.last_modified,
                            }))
                        }
                        Err(object_store::Error::NotFound { .. }) => Ok(None),
                        Err(e) => Err(e.into()),
                    }
                })
            }
        }
    }

    /// Writes a conditionally written object: created when `expect` is None (it must not
    /// exist), replaced when it is the object's current version. `Ok(None)`: the condition
    /// was lost, nothing was written; otherwise the version written.
    pub fn put_versioned(
        &self,
        key: &str,
        bytes: Bytes,
        expect: Option<&Version>,
    ) -> Result<Option<Version>, LakeError> {
        match &self.kind {
            Kind::Local(dir) => local_put(dir, key, &bytes, expect),
            Kind::Remote => {
                let mode = match expect {
                    None => PutMode::Create,
                    Some(Version::Tag(v)) => PutMode::Update(v.clone()),
                    Some(Version::Local(_)) => {
                        return Err(LakeError::Root(
                            "a filesystem version conditions an object-store write".into(),
                        ))
                    }
                };
                let path = self.path(key);
                let r = self.rt.block_on(self.store.put_opts(
                    &path,
                    PutPayload::from(bytes),
                    PutOptions::from(mode),
                ));
                match r {
                    Ok(r) => Ok(Some(Version::Tag(UpdateVersion {
                        e_tag: r.e_tag,
                        version: r.version,
                    }))),
                    Err(object_store::Error::AlreadyExists { .. })
                    | Err(object_store::Error::Precondition { .. }) => Ok(None),
                    // a replacement of an object since deleted
                    Err(object_store::Error::NotFound { .. }) if expect.is_some() => Ok(None),
                    Err(e) => Err(e.into()),
                }
            }
        }
    }

    /// Removes a conditionally written object whatever its version (the probe's own), and the
    /// directory it was made in once empty (a writer creating a key there meanwhile makes it
    /// again: [`open_lock_in`]).
    pub fn delete_versioned(&self, key: &str) -> Result<(), LakeError> {
        match &self.kind {
            Kind::Local(dir) => {
                for (_, p) in local_versions(dir, key)? {
                    let _ = std::fs::remove_file(p);
                }
                let full = dir.join(key);
                let _ = std::fs::remove_file(&full);
                // its lock file too: a key deleted whole is one no writer uses any more
                if let (Some(parent), Some(name)) = (full.parent(), full.file_name()) {
                    let mut lock = std::ffi::OsString::from(".");
                    lock.push(name);
                    lock.push(".lock");
                    let _ = std::fs::remove_file(parent.join(lock));
                    // and the directory it was made in, once empty
                    let _ = std::fs::remove_dir(parent);
                }
                Ok(())
            }
            Kind::Remote => self.delete(key),
        }
    }
}

/// The version files of a filesystem pointer, by version.
fn local_versions(dir: &std::path::Path, key: &str) -> Result<Vec<(u64, PathBuf)>, LakeError> {
    let full = dir.join(key);
    let (Some(parent), Some(name)) = (full.parent(), full.file_name().and_then(|n| n.to_str()))
    else {
        return Err(LakeError::Root(format!("{key}: not a file key")));
    };
    let stem = format!("{name}.");
    let mut out = Vec::new();
    let entries = match std::fs::read_dir(parent) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(e.into()),
    };
    for entry in entries {
        let entry = entry?;
        let file = entry.file_name();
        let Some(file) = file.to_str() else { continue };
        if let Some(n) = file.strip_prefix(&stem) {
            if n.len() == 20 && n.bytes().all(|b| b.is_ascii_digit()) {
                if let Ok(n) = n.parse::<u64>() {
                    out.push((n, entry.path()));
                }
            }
        }
    }
    out.sort();
    Ok(out)
}

fn local_get(dir: &std::path::Path, key: &str) -> Result<Option<Versioned>, LakeError> {
    // a version may be pruned between the listing and the read: list again
    for _ in 0..16 {
        let versions = local_versions(dir, key)?;
        let Some((n, path)) = versions.last() else {
            return Ok(None);
        };
        // the bytes and the time from one open file: a prune after the open changes neither
        match std::fs::File::open(path) {
            Ok(mut file) => {
                let mut bytes = Vec::new();
                std::io::Read::read_to_end(&mut file, &mut bytes)?;
                let modified = file.metadata()?.modified()?;
                return Ok(Some(Versioned {
                    bytes: Bytes::from(bytes),
                    version: Version::Local(*n),
                    modified: DateTime::<Utc>::from(modified),
                }));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(LakeError::Root(format!(
        "{key}: its versions changed under 16 reads in a row"
    )))
}

/// Creates `dir` if needed and opens (creating) the lock file `name` in it. Another writer's
/// [`Root::delete_versioned`] removes an empty directory: between our creating it and our lock
/// file making it non-empty, it may go, and is made again (a few times, then the error).
fn open_lock_in(dir: &Path, name: &str) -> std::io::Result<std::fs::File> {
    let mut attempts = 0;
    loop {
        // create_dir_all answers EEXIST when another process removes the directory between
        // its mkdir and its check (delete_versioned removes an emptied one): try again
        match std::fs::create_dir_all(dir) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempts < 8 => {
                attempts += 1;
                continue;
            }
            other => other?,
        }
        match std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(name))
        {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && attempts < 8 => attempts += 1,
            other => return other,
        }
    }
}

fn local_put(
    dir: &std::path::Path,
    key: &str,
    bytes: &[u8],
    expect: Option<&Version>,
) -> Result<Option<Version>, LakeError> {
    let next = match expect {
        None => 1,
        Some(Version::Local(n)) => n + 1,
        Some(Version::Tag(_)) => {
            return Err(LakeError::Root(
                "an object-store version conditions a filesystem write".into(),
            ))
        }
    };
    let full = dir.join(key);
    let parent = full
        .parent()
        .ok_or_else(|| LakeError::Root(format!("{key}: not a file key")))?;
    let name = full
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| LakeError::Root(format!("{key}: not a file key")))?;
    // the version check and the link happen under an exclusive flock(2) of the pointer's lock
    // file, which the kernel releases when a writer dies: a writer that read a version long
    // ago can neither pass the check nor refill a pruned version's slot
    let lock = open_lock_in(parent, &format!(".{name}.lock"))?;
    lock.lock()?;
    let current = local_versions(dir, key)?.last().map(|(n, _)| *n);
    if current != expect.map(|_| next - 1) {
        return Ok(None);
    }
    let tmp = parent.join(format!(".{name}.tmp-{}", uuid::Uuid::new_v4()));
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    let target = parent.join(format!("{name}.{next:020}"));
    // rule: store.fold.pointer-commit — the version-checked rename: link(2) creates the next
    // version only if no other process did
    let won = match std::fs::hard_link(&tmp, &target) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e.into());
        }
    };
    if !won {
        let _ = std::fs::remove_file(&tmp);
        return Ok(None);
    }
    if let Ok(d) = std::fs::File::open(parent) {
        let _ = d.sync_all();
    }
    // the copy outside readers find under the plain name
    if std::fs::rename(&tmp, &full).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    if next > KEEP_VERSIONS {
        let old = parent.join(format!("{name}.{:020}", next - KEEP_VERSIONS));
        let _ = std::fs::remove_file(old);
    }
    Ok(Some(Version::Local(next)))
}
