//! A node's own state in its local store: its id and issuer key, the held record, the push
//! marker, the digest cache. None of it is ever pushed or pulled (every name starts with a dot
//! or sits under `.sync/`).

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

use ring::rand::SystemRandom;
use ring::signature::Ed25519KeyPair;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use crate::pages::{hex, id_of};
use crate::LakeError;

/// The directory of a node's own files under its local store.
pub const SYNC_DIR: &str = ".sync";
/// The held record (`store.merge.held-record`).
pub const HELD: &str = ".sync-held.json";
/// The push marker (`store.merge.held-absent`): present from a push's first upload until its
/// held record is written.
pub const PUSH_LOCK: &str = ".push.lock";

/// Writes `bytes` to `path` whole: a temporary file beside it, synced, then renamed over it.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), LakeError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let tmp = path.with_file_name(format!(
        ".{}.{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("f"),
        uuid::Uuid::new_v4().simple()
    ));
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}

/// The SHA-256 of a file, streamed, and its size.
pub(crate) fn file_digest(path: &Path) -> Result<(String, u64), LakeError> {
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut size = 0u64;
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        size += n as u64;
        h.update(&buf[..n]);
    }
    Ok((hex(&h.finalize()), size))
}

/// The SHA-256 of bytes, hex.
pub(crate) fn digest(bytes: &[u8]) -> String {
    id_of(bytes)
}

/// Who this local store is as a node of a bucket.
pub struct Node {
    /// Its id (`node-` and 12 hex digits, made at its first push or pull).
    pub id: String,
    /// Its issuer key, which signs its tombstones (None: the key file was removed; its
    /// tombstones are unsigned and nobody else acts on them).
    pub issuer: Option<Ed25519KeyPair>,
    dir: PathBuf,
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node").field("id", &self.id).finish()
    }
}

#[derive(Serialize, Deserialize)]
struct NodeFile {
    node: String,
}

impl Node {
    /// The node of the local store at `dir`, made (id and issuer key) when it has none.
    pub fn of(dir: &Path) -> Result<Node, LakeError> {
        let sync = dir.join(SYNC_DIR);
        let file = sync.join("node.json");
        let id = match std::fs::read(&file) {
            Ok(b) => {
                serde_json::from_slice::<NodeFile>(&b)
                    .map_err(|e| LakeError::Root(format!("{}: {e}", file.display())))?
                    .node
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let id = format!("node-{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
                let key = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new())
                    .map_err(|_| LakeError::Root("no randomness for an issuer key".into()))?;
                write_atomic(&sync.join("issuer.pk8"), key.as_ref())?;
                write_atomic(
                    &file,
                    &serde_json::to_vec(&NodeFile { node: id.clone() }).expect("json"),
                )?;
                id
            }
            Err(e) => return Err(e.into()),
        };
        let issuer = match std::fs::read(sync.join("issuer.pk8")) {
            Ok(b) => Some(Ed25519KeyPair::from_pkcs8(&b).map_err(|_| {
                LakeError::Root(format!(
                    "{}: not an ed25519 PKCS#8 key",
                    sync.join("issuer.pk8").display()
                ))
            })?),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e.into()),
        };
        Ok(Node {
            id,
            issuer,
            dir: dir.to_owned(),
        })
    }

    /// The held record: per node, the owned keys its pushes listed while this store held them.
    pub fn held(&self) -> Result<BTreeMap<String, BTreeSet<String>>, LakeError> {
        match std::fs::read(self.dir.join(HELD)) {
            Ok(b) => {
                serde_json::from_slice(&b).map_err(|e| LakeError::Root(format!("{HELD}: {e}")))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
            Err(e) => Err(e.into()),
        }
    }

    /// Replaces the held record.
    pub fn write_held(&self, held: &BTreeMap<String, BTreeSet<String>>) -> Result<(), LakeError> {
        write_atomic(
            &self.dir.join(HELD),
            &serde_json::to_vec(held).expect("json"),
        )
    }

    /// Whether the push marker survives (a push stopped between its upload and its record).
    pub fn push_marked(&self) -> bool {
        self.dir.join(PUSH_LOCK).exists()
    }

    /// Sets or clears the push marker.
    pub fn mark_push(&self, on: bool) -> Result<(), LakeError> {
        let p = self.dir.join(PUSH_LOCK);
        if on {
            write_atomic(&p, self.id.as_bytes())
        } else {
            match std::fs::remove_file(p) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(e.into()),
            }
        }
    }
}

/// One machine's exclusive turn at syncing a local store: a `flock(2)` of `.sync/lock`
/// (released by the kernel when the process dies).
pub(crate) struct SyncTurn(#[allow(dead_code)] std::fs::File);

impl SyncTurn {
    pub(crate) fn take(dir: &Path) -> Result<SyncTurn, LakeError> {
        std::fs::create_dir_all(dir.join(SYNC_DIR))?;
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(SYNC_DIR).join("lock"))?;
        f.lock()?;
        Ok(SyncTurn(f))
    }
}

/// The digests of a local store's files, cached by size and modification time so that a push
/// hashes each immutable file once.
pub(crate) struct Digests {
    path: PathBuf,
    known: BTreeMap<String, (u64, i128, String)>,
    dirty: bool,
}

impl Digests {
    pub(crate) fn open(dir: &Path) -> Digests {
        let path = dir.join(SYNC_DIR).join("digests.json");
        let known = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        Digests {
            path,
            known,
            dirty: false,
        }
    }

    /// The digest and size of the file of `key` under `dir` (None: it does not exist).
    pub(crate) fn of(&mut self, dir: &Path, key: &str) -> Result<Option<(String, u64)>, LakeError> {
        let p = dir.join(key);
        let meta = match std::fs::metadata(&p) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let mtime = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_nanos() as i128)
            .unwrap_or(-1);
        if let Some((size, m, sha)) = self.known.get(key) {
            if *size == meta.len() && *m == mtime {
                return Ok(Some((sha.clone(), *size)));
            }
        }
        let (sha, size) = file_digest(&p)?;
        self.known
            .insert(key.to_owned(), (size, mtime, sha.clone()));
        self.dirty = true;
        Ok(Some((sha, size)))
    }

    /// Records a digest just verified for a file just written.
    pub(crate) fn forget(&mut self, key: &str) {
        if self.known.remove(key).is_some() {
            self.dirty = true;
        }
    }

    pub(crate) fn save(&mut self) -> Result<(), LakeError> {
        if self.dirty {
            write_atomic(&self.path, &serde_json::to_vec(&self.known).expect("json"))?;
            self.dirty = false;
        }
        Ok(())
    }
}
