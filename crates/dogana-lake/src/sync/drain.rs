//! Drained deliveries (`unpushed-run-marked`): a local store on a disk that may be thrown
//! away (a container's) names its bucket in `store.toml` (`[sync] drain_to = "URL"`). Every
//! publication into it is then marked unpushed in the bucket *before* its local pointer
//! moves: `drain/<node>/<table dir>/<snapshot file>` created under If-None-Match
//! (`store.drain.mark`). A push clears the marks of what it listed. The next command on the
//! store, whatever it is, first looks at the node's marks (`store.drain.before-read`): marks
//! whose snapshot is on this disk are pushed, and a push that fails stops the command naming
//! them; marks whose snapshot is not (the disk that held them is gone) stop it too, naming
//! the deliveries to send again, until `dogana push --forget-lost` clears them.
//!
//! The record keeps these marks in the execution database (Postgres). The lake's catalogs are
//! part 3 of the record, not built yet, so the mark lives in the one durable place a
//! drained node already writes to: its bucket.

use std::cell::Cell;
use std::path::Path;

use bytes::Bytes;
use serde::{Deserialize, Serialize};

use super::{Node, SyncConfig};
use crate::layout::table_dir;
use crate::objects::Root;
use crate::LakeError;

/// Where marks live in the bucket.
pub const MARKS: &str = "drain/";

thread_local! {
    /// Set while a push or pull runs: the stores they open check no marks (the push is the
    /// check's own remedy).
    static SYNCING: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with the drain check off on this thread.
pub(crate) fn syncing<T>(f: impl FnOnce() -> T) -> T {
    let was = SYNCING.with(|s| s.replace(true));
    let r = f();
    SYNCING.with(|s| s.set(was));
    r
}

/// One unpushed publication.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mark {
    /// The node that published it.
    pub node: String,
    /// The table.
    pub table: String,
    /// The snapshot its publication made.
    pub snapshot: String,
    /// When it was marked (RFC 3339).
    pub at: String,
}

/// A drained store's bucket and node.
#[derive(Debug)]
pub struct Drain {
    bucket_url: String,
    bucket: Root,
    node: String,
}

impl Drain {
    /// The drain of the local store at `dir` (None: its `store.toml` names no `drain_to`).
    pub fn of_dir(dir: &Path) -> Result<Option<Drain>, LakeError> {
        let Some(url) = SyncConfig::of_store(dir)?.drain_to else {
            return Ok(None);
        };
        Ok(Some(Drain {
            bucket: Root::open(&url)?,
            bucket_url: url,
            node: Node::of(dir)?.id,
        }))
    }

    fn key(&self, table: &str, snapshot: &str) -> String {
        let file = snapshot.rsplit('/').next().unwrap_or(snapshot);
        format!("{MARKS}{}/{}/{file}", self.node, table_dir(table))
    }

    /// Marks the publication of `snapshot` unpushed (before the pointer names it).
    pub fn mark(&self, table: &str, snapshot: &str) -> Result<(), LakeError> {
        let mark = Mark {
            node: self.node.clone(),
            table: table.to_owned(),
            snapshot: snapshot.to_owned(),
            at: chrono::Utc::now().to_rfc3339(),
        };
        self.bucket.create(
            &self.key(table, snapshot),
            Bytes::from(serde_json::to_vec(&mark).expect("json")),
        )?;
        Ok(())
    }

    /// The node's marks in the bucket.
    pub fn marks(&self) -> Result<Vec<(String, Mark)>, LakeError> {
        marks_of(&self.bucket, &self.node)
    }
}

/// The marks of `node` in `bucket`, with their keys.
pub(crate) fn marks_of(bucket: &Root, node: &str) -> Result<Vec<(String, Mark)>, LakeError> {
    let mut out = Vec::new();
    for k in bucket.list(&format!("{MARKS}{node}/"))? {
        if let Some(b) = bucket.get(&k)? {
            let m: Mark =
                serde_json::from_slice(&b).map_err(|e| LakeError::SyncManifestInvalid {
                    key: k.clone(),
                    reason: format!("a drain mark that does not parse: {e}"),
                })?;
            out.push((k, m));
        }
    }
    Ok(out)
}

fn name(m: &Mark) -> String {
    format!("{} {}", m.table, m.snapshot)
}

/// Before a command reads the local store at `root` (`store.drain.before-read`): pushes
/// its node's unpushed publications, or stops naming them.
pub(crate) fn before_command(root: &Root) -> Result<(), LakeError> {
    if SYNCING.with(Cell::get) {
        return Ok(());
    }
    let Some(dir) = root.local_dir() else {
        return Ok(());
    };
    let Some(drain) = Drain::of_dir(dir)? else {
        return Ok(());
    };
    let marks = drain.marks()?;
    if marks.is_empty() {
        return Ok(());
    }
    let (here, lost): (Vec<_>, Vec<_>) = marks
        .into_iter()
        .partition(|(_, m)| dir.join(&m.snapshot).exists());
    if !lost.is_empty() {
        return Err(LakeError::DrainLost {
            bucket: drain.bucket_url.clone(),
            deliveries: lost.iter().map(|(_, m)| name(m)).collect(),
        });
    }
    let config = SyncConfig::of_store(dir)?;
    let url = format!("file://{}", dir.display());
    super::push(&url, &drain.bucket_url, &config).map_err(|e| LakeError::DrainUnpushed {
        bucket: drain.bucket_url.clone(),
        deliveries: here.iter().map(|(_, m)| name(m)).collect(),
        reason: e.to_string(),
    })?;
    Ok(())
}

/// Clears the marks of `local_url`'s node in its drain bucket whose publications are not on
/// this disk: the user has sent those deliveries again (`dogana push --forget-lost`).
pub fn forget_lost(local_url: &str) -> Result<Vec<Mark>, LakeError> {
    let local = Root::open(local_url)?;
    let dir = super::push::local_dir(&local)?;
    let Some(drain) = Drain::of_dir(&dir)? else {
        return Ok(Vec::new());
    };
    let mut gone = Vec::new();
    for (k, m) in drain.marks()? {
        if !dir.join(&m.snapshot).exists() {
            drain.bucket.delete(&k)?;
            gone.push(m);
        }
    }
    Ok(gone)
}

/// Marks a publication of the store at `root` unpushed when the store drains into a bucket
/// (nothing otherwise).
pub(crate) fn mark_publication(root: &Root, table: &str, snapshot: &str) -> Result<(), LakeError> {
    let Some(dir) = root.local_dir() else {
        return Ok(());
    };
    if !dir.join(super::config::STORE_TOML).exists() {
        return Ok(());
    }
    match Drain::of_dir(dir)? {
        Some(d) => d.mark(table, snapshot),
        None => Ok(()),
    }
}

/// Clears `node`'s marks in `bucket` whose publication `listed` says is there now.
pub(crate) fn clear_pushed(
    bucket: &Root,
    node: &str,
    listed: impl Fn(&str) -> bool,
) -> Result<(), LakeError> {
    for (k, m) in marks_of(bucket, node)? {
        if listed(&m.snapshot) {
            bucket.delete(&k)?;
        }
    }
    Ok(())
}
