//! The engine's port on Delta tables: one table of the store is one Delta table in the
//! store's folder (`<store>/<table_dir>/`), and one write transaction is one Delta commit.
//!
//! ## The commit protocol
//!
//! `begin(Write)` reads each table's newest snapshot (version `v`); the engine decides in it
//! and executes its plan as Add and Remove actions (copy-on-write: a file holding a row the
//! plan deletes is rewritten without it, or removed whole); new Parquet files and the
//! `_dogana/` objects (ledger, receipt segment, replay index, head) are written before the
//! commit and named by nothing until it lands. `commit` then writes `_delta_log/<v+1>.json`
//! with delta-rs's commit, its retries turned off (`max_retries(0)`): delta-rs then never runs
//! its conflict checker (which would rebase the commit on the newer version), and a version
//! that another writer took first — seen before the put, or by the put-if-absent itself — is
//! an error we answer as [`StoreError::Moved`]. The engine runs its write transaction again:
//! a new snapshot, a new decision if the ledger moved (RECV-10), never a rebase.
//!
//! Delta commits one table at a time: a group of tables is refused (nothing committed).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use deltalake_core::kernel::transaction::{CommitBuilder, CommitProperties, TransactionError};
use deltalake_core::kernel::{
    new_metadata, Action, Add, DataType, Metadata, MetadataExt, Protocol, Remove, StructField,
    StructType, Transaction,
};
use deltalake_core::logstore::{default_logstore, LogStoreRef, StorageConfig};
use deltalake_core::protocol::{DeltaOperation, SaveMode};
use deltalake_core::{DeltaTable, DeltaTableConfig, DeltaTableError};
use dogana::{LedgerRows, Outcome, Receipt, Value, Wire};
use dogana_lake::layout::{table_dir, table_of_dir, ColumnDef};
use dogana_lake::objects::Root;
use dogana_lake::parts::PartWriter;
use dogana_receiver::{
    key_text, Backend, Batch, Column, Datum, KeysFrom, KeysOutside, Layout, Open, ReceiptRow, Step,
    StoreError, Txn,
};
use object_store::local::LocalFileSystem;
use object_store::path::Path as OPath;
use object_store::prefix::PrefixStore;
use object_store::ObjectStore;
use tokio::runtime::Runtime;

use crate::layout::{self, Entry, Head, APP_ID, HEAD_PROPERTY, SEGMENT, VERSION_PROPERTY};
use crate::stats;

const BACKEND: &str = "delta";

/// Rows of values.
type Rows = Vec<Vec<Datum>>;

/// How long a writer's turn (`Delta::take_turn`) lasts, by the writer's clock against the
/// storage's time of the turn object's write, before another writer may take it over.
const TURN_TTL: std::time::Duration = std::time::Duration::from_secs(10);
/// How long a writer waits for its turn before it races without one.
const TURN_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// The checkpoint interval of the tables dogana creates.
const CHECKPOINT_INTERVAL: (&str, &str) = ("delta.checkpointInterval", "10");

fn corrupt(m: impl Into<String>) -> StoreError {
    StoreError::Corrupt(m.into())
}

fn delta_err(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> StoreError {
    StoreError::backend(BACKEND, e)
}

fn lake_err(e: dogana_lake::LakeError) -> StoreError {
    StoreError::from(e)
}

/// The process's runtime for delta-rs (its futures are driven from the engine's threads).
fn runtime() -> Result<Arc<Runtime>, StoreError> {
    static RT: OnceLock<Arc<Runtime>> = OnceLock::new();
    if let Some(rt) = RT.get() {
        return Ok(rt.clone());
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(StoreError::Io)?;
    Ok(RT.get_or_init(|| Arc::new(rt)).clone())
}

/// A published file as the working state of a transaction holds it.
#[derive(Debug, Clone)]
struct File {
    add: Add,
    /// Written by this transaction (not in the snapshot).
    new: bool,
}

/// One table as a transaction sees it.
struct TableTxn {
    /// The snapshot read (None: no Delta table there).
    delta: Option<DeltaTable>,
    /// Its Delta version.
    version: Option<u64>,
    /// dogana's head in it (None: none).
    head: Option<Head>,
    /// Why the table is not dogana's to write: a Delta table without dogana's head, or with
    /// commits outside dogana after dogana's last one.
    foreign: Option<String>,
    /// The published columns, as the plan leaves them.
    columns: Option<Vec<ColumnDef>>,
    /// The published files, as the plan leaves them.
    files: Vec<File>,
    /// The snapshot's files the plan removed.
    removed: Vec<Remove>,
    /// Whether the plan changed the columns (a new schema).
    schema_changed: bool,
    /// Whether the plan changed the rows.
    rows_changed: bool,
    /// The ledger document to save.
    ledger: Option<String>,
    /// The receipts to append.
    entries: Vec<Entry>,
}

/// How many rows one Parquet file a delivery writes holds at most: a delivery's rows are
/// split into files of this many, so that a later change rewrites only the files holding its
/// keys (a full load of 10M rows is ten files).
const FILE_ROWS: u64 = 1 << 20;

/// The rows staged for one table: the live rows encoded as Parquet as they arrive (in the
/// layout's columns, a file every [`FILE_ROWS`]), or held as values when they cannot be (a
/// NULL in a key column, which the engine's checks refuse but staging must hold); the
/// tombstones as values.
#[derive(Default)]
struct Staging {
    /// The layout's columns.
    columns: Vec<ColumnDef>,
    /// The file being written.
    writer: Option<PartWriter>,
    /// The files written, with their row counts.
    parts: Vec<(Bytes, u64)>,
    /// The live rows as values (instead of `parts`), once a NULL key was met.
    held: Option<Vec<Vec<Datum>>>,
    tombstones: Vec<Vec<Datum>>,
}

impl Staging {
    /// Seals the file being written.
    fn seal(&mut self) -> Result<(), StoreError> {
        if let Some(w) = self.writer.take() {
            let rows = w.rows();
            if rows > 0 {
                self.parts.push((w.finish()?, rows));
            }
        }
        Ok(())
    }

    /// Every staged live row, in the layout's columns.
    fn live(&mut self) -> Result<Vec<Vec<Datum>>, StoreError> {
        self.seal()?;
        if let Some(held) = &self.held {
            return Ok(held.clone());
        }
        let mut rows = Vec::new();
        for (bytes, _) in &self.parts {
            rows.extend(dogana_lake::decode_part(&self.columns, bytes.clone())?);
        }
        Ok(rows)
    }
}

/// A dogana store of Delta tables: `delta+file:///dir`, `delta+memory://name`,
/// `delta+s3://bucket/prefix`, `delta+gs://…`, `delta+az://…` (credentials and endpoints
/// from each cloud's usual environment variables, as the lake reads them).
///
/// ```no_run
/// use dogana_receiver::{Open, Store};
/// use dogana_delta::Delta;
/// let store: Store<Delta> = Store::open("delta+file:///data/delta")?;
/// # Ok::<(), dogana_receiver::StoreError>(())
/// ```
pub struct Delta {
    root: Root,
    /// The store's directory for a `file://` store (delta-rs then reads the filesystem from
    /// its root).
    local: Option<PathBuf>,
    rt: Arc<Runtime>,
    write: bool,
    txn: Option<Txn>,
    tables: BTreeMap<String, TableTxn>,
    staged: HashMap<String, Staging>,
    /// Segments and ledgers read, by SHA-256 (immutable objects).
    segments: HashMap<String, Arc<Vec<Entry>>>,
    ledgers: HashMap<String, Arc<String>>,
    /// The snapshot of each table this handle read last.
    snapshots: HashMap<String, DeltaTable>,
    /// Heads read, by SHA-256.
    heads: HashMap<String, Head>,
    /// The turn object this handle holds (its key), and its own mark in it.
    turn: Option<String>,
    /// This handle's mark in a turn object.
    holder: String,
    /// The objects the open write transaction writes before its commit, by key: put only
    /// once the commit's version is seen free, so a writer that lost its race writes nothing.
    pending: Vec<(String, Bytes)>,
    /// The next commit is an application's, without dogana's head (the conformance suite's
    /// foreign table).
    foreign_commit: bool,
}

impl std::fmt::Debug for Delta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Delta")
            .field("url", &self.root.url())
            .finish_non_exhaustive()
    }
}

/// The object store URL a `delta+…` spec names (the spec without `delta+`).
pub fn root_url(spec: &str) -> Option<&str> {
    spec.strip_prefix("delta+")
        .or_else(|| spec.strip_prefix("delta:"))
}

impl Open for Delta {
    type Options = ();

    fn open(path: &Path, _: &(), write: bool) -> Result<Delta, StoreError> {
        let spec = path
            .to_str()
            .ok_or_else(|| StoreError::InvalidSpec(format!("{} is not UTF-8", path.display())))?;
        Delta::open_url(spec, write)
    }
}

impl Delta {
    /// Opens the store a `delta+URL` spec names (or a bare URL or directory). A reader
    /// creates nothing: a local store must exist.
    pub fn open_url(spec: &str, write: bool) -> Result<Delta, StoreError> {
        let url = root_url(spec).unwrap_or(spec);
        let local = if url.contains("://") {
            url::Url::parse(url)
                .ok()
                .filter(|u| u.scheme() == "file")
                .and_then(|u| u.to_file_path().ok())
        } else {
            Some(PathBuf::from(url))
        };
        if !write && local.as_ref().is_some_and(|p| !p.exists()) {
            return Err(StoreError::NotAStore(format!("{spec} does not exist")));
        }
        let root = Root::open(url).map_err(lake_err)?;
        let local = root.local_dir().map(Path::to_path_buf);
        if write && local.is_none() && !url.starts_with("memory:") {
            probe(&root)?;
        }
        Ok(Delta::new(root, local, runtime()?, write))
    }

    /// A handle with nothing read yet.
    fn new(root: Root, local: Option<PathBuf>, rt: Arc<Runtime>, write: bool) -> Delta {
        Delta {
            root,
            local,
            rt,
            write,
            txn: None,
            tables: BTreeMap::new(),
            staged: HashMap::new(),
            segments: HashMap::new(),
            ledgers: HashMap::new(),
            snapshots: HashMap::new(),
            heads: HashMap::new(),
            turn: None,
            holder: uuid::Uuid::new_v4().simple().to_string(),
            pending: Vec::new(),
            foreign_commit: false,
        }
    }

    /// Another handle on the same store (another writer).
    pub fn reopen(&self) -> Result<Delta, StoreError> {
        Ok(Delta::new(
            self.root.reopen().map_err(lake_err)?,
            self.local.clone(),
            self.rt.clone(),
            self.write,
        ))
    }

    /// The newest Delta version of `table` (None: no Delta table there).
    pub fn version(&mut self, table: &str) -> Result<Option<u64>, StoreError> {
        self.begin(Txn::Read, &[table])?;
        let v = self.table(table).map(|t| t.version);
        self.rollback();
        v
    }

    /// The store's root (its object store and prefix).
    pub fn root(&self) -> &Root {
        &self.root
    }

    /// Where a Delta reader finds `table`: its folder's path (`file://`) or URL.
    pub fn table_url(&self, table: &str) -> Result<String, StoreError> {
        self.root.object_url(&table_dir(table)).map_err(lake_err)
    }

    /// delta-rs's log store of `table`.
    fn log_store(&self, table: &str) -> Result<LogStoreRef, StoreError> {
        let dir = table_dir(table);
        let (root_store, path, location): (Arc<dyn ObjectStore>, OPath, url::Url) =
            match &self.local {
                Some(base) => {
                    let at = base.join(&dir);
                    let location = url::Url::from_directory_path(&at)
                        .map_err(|()| corrupt(format!("{} is not absolute", at.display())))?;
                    let path = OPath::from_absolute_path(&at).map_err(delta_err)?;
                    (Arc::new(LocalFileSystem::new()), path, location)
                }
                None => {
                    let (store, prefix) = self.root.object_store();
                    let path = prefix.clone().join(dir.as_str());
                    // delta-rs reads the log through the root store at the location's path:
                    // the location is the object store's URL of `path` (a memory store's
                    // name is not part of its paths)
                    let root = url::Url::parse(self.root.url())
                        .map_err(|e| corrupt(format!("{}: {e}", self.root.url())))?;
                    let host = match root.scheme() {
                        "memory" => "",
                        _ => root.host_str().unwrap_or(""),
                    };
                    let text = format!("{}://{host}/{path}/", root.scheme());
                    let location =
                        url::Url::parse(&text).map_err(|e| corrupt(format!("{text}: {e}")))?;
                    (store, path, location)
                }
            };
        let prefixed: Arc<dyn ObjectStore> = Arc::new(PrefixStore::new(root_store.clone(), path));
        Ok(default_logstore(
            prefixed,
            root_store,
            &location,
            &StorageConfig::default(),
        ))
    }

    /// Reads `table`'s newest snapshot into the transaction (once per transaction).
    fn table(&mut self, table: &str) -> Result<&mut TableTxn, StoreError> {
        if !self.tables.contains_key(table) {
            let t = self.load(table)?;
            self.tables.insert(table.to_owned(), t);
        }
        self.tables
            .get_mut(table)
            .ok_or_else(|| corrupt("a table just loaded is gone"))
    }

    fn load(&mut self, table: &str) -> Result<TableTxn, StoreError> {
        let mut t = TableTxn {
            delta: None,
            version: None,
            head: None,
            foreign: None,
            columns: None,
            files: Vec::new(),
            removed: Vec::new(),
            schema_changed: false,
            rows_changed: false,
            ledger: None,
            entries: Vec::new(),
        };
        // the snapshot this handle read last, brought up to date by the log entries since
        // (a full read of the log only the first time)
        let cached = self.snapshots.get(table).cloned().and_then(|mut d| {
            self.rt
                .block_on(d.update_incremental(None))
                .is_ok()
                .then_some(d)
        });
        let delta = match cached {
            Some(d) => d,
            None => {
                let log_store = self.log_store(table)?;
                let exists = self
                    .rt
                    .block_on(log_store.is_delta_table_location())
                    .map_err(delta_err)?;
                if !exists {
                    return Ok(t);
                }
                let mut d = DeltaTable::new(log_store, DeltaTableConfig::default());
                self.rt.block_on(d.load()).map_err(delta_err)?;
                d
            }
        };
        self.snapshots.insert(table.to_owned(), delta.clone());
        let snapshot = delta.snapshot().map_err(delta_err)?;
        let version = snapshot.version();
        check_protocol(table, snapshot.protocol())?;
        let config = snapshot.metadata().configuration().clone();
        // Add actions are what a Remove is made from (delta-rs would have us read Arrow
        // arrays of the log instead; the Add is the stable, documented form)
        #[allow(deprecated)]
        let files = snapshot
            .log_data()
            .iter()
            .map(|f| File {
                add: f.add_action(),
                new: false,
            })
            .collect();
        t.files = files;
        match config.get(HEAD_PROPERTY) {
            None => {
                t.foreign = Some(format!(
                    "the Delta table {} was not written by dogana (no {HEAD_PROPERTY} property)",
                    dogana::quoted(table, dogana::SHOWN)
                ));
                t.columns = Some(columns_of_schema(snapshot.metadata())?);
            }
            Some(sha) => {
                let head: Head = match self.heads.get(sha) {
                    Some(h) => h.clone(),
                    None => {
                        let h: Head = self.object(table, "head", sha)?;
                        self.heads.insert(sha.clone(), h.clone());
                        h
                    }
                };
                let ours: Option<u64> = config.get(VERSION_PROPERTY).and_then(|v| v.parse().ok());
                // commits after dogana's that change no row (VACUUM, OPTIMIZE, a checkpoint's
                // neighbours) leave the table dogana's; one that adds or removes rows does not
                let outside = match ours {
                    Some(v) if v == version => None,
                    Some(v) if v < version => {
                        self.changed_rows(&delta.log_store(), v + 1, version)?
                    }
                    _ => Some("a version dogana does not know".to_owned()),
                };
                if let Some(what) = outside {
                    t.foreign = Some(format!(
                        "the Delta table {} was written outside dogana after dogana's last commit (version {}): {what}; its rows are no longer the ones its ledger describes. Undo that (RESTORE TABLE … TO VERSION {1}) and deliver again, or deliver into another table",
                        dogana::quoted(table, dogana::SHOWN),
                        ours.map_or("unknown".to_owned(), |v| v.to_string()),
                    ));
                }
                t.columns = head.columns.clone();
                t.head = Some(head);
            }
        }
        t.version = Some(version);
        t.delta = Some(delta);
        Ok(t)
    }

    /// The first of the log entries `from..=to` that changes rows or columns (an add or a
    /// remove with `dataChange`, a new schema or protocol), described; None when none does.
    /// An entry the log no longer holds cannot be shown harmless, so it counts as a change.
    fn changed_rows(
        &self,
        log_store: &LogStoreRef,
        from: u64,
        to: u64,
    ) -> Result<Option<String>, StoreError> {
        for v in from..=to {
            let Some(bytes) = self
                .rt
                .block_on(log_store.read_commit_entry(v))
                .map_err(delta_err)?
            else {
                return Ok(Some(format!("version {v}, which the log no longer holds")));
            };
            for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                let action: serde_json::Value = serde_json::from_slice(line)
                    .map_err(|e| corrupt(format!("version {v} of the Delta log: {e}")))?;
                let changes = ["add", "remove"].iter().any(|k| {
                    action.get(*k).is_some_and(|a| {
                        a.get("dataChange") != Some(&serde_json::Value::Bool(false))
                    })
                }) || action.get("metaData").is_some()
                    || action.get("protocol").is_some();
                if changes {
                    let op = bytes
                        .split(|b| *b == b'\n')
                        .filter_map(|l| serde_json::from_slice::<serde_json::Value>(l).ok())
                        .find_map(|a| {
                            a.get("commitInfo")?
                                .get("operation")?
                                .as_str()
                                .map(str::to_owned)
                        })
                        .unwrap_or_else(|| "an unnamed operation".into());
                    return Ok(Some(format!(
                        "version {v} ({op}) changed its rows or columns"
                    )));
                }
            }
        }
        Ok(None)
    }

    /// An immutable `_dogana/` object of `table`, parsed.
    fn object<T: serde::de::DeserializeOwned>(
        &self,
        table: &str,
        kind: &str,
        sha: &str,
    ) -> Result<T, StoreError> {
        let key = layout::key(&table_dir(table), kind, sha);
        let bytes =
            self.root.get(&key).map_err(lake_err)?.ok_or_else(|| {
                corrupt(format!("{key}, which the table's head names, is missing"))
            })?;
        if layout::sha256(&bytes) != sha {
            return Err(corrupt(format!(
                "{key} is damaged: its bytes' SHA-256 is not its name"
            )));
        }
        serde_json::from_slice(&bytes).map_err(|e| corrupt(format!("{key}: {e}")))
    }

    /// Writes an immutable `_dogana/` object; its SHA-256.
    fn put_object(
        &mut self,
        table: &str,
        kind: &str,
        bytes: Vec<u8>,
    ) -> Result<String, StoreError> {
        let sha = layout::sha256(&bytes);
        let key = layout::key(&table_dir(table), kind, &sha);
        self.pending.push((key, Bytes::from(bytes)));
        Ok(sha)
    }

    /// The object at `key`: written by this transaction, or in the store.
    fn get(&self, key: &str) -> Result<Option<Bytes>, StoreError> {
        if let Some((_, b)) = self.pending.iter().find(|(k, _)| k == key) {
            return Ok(Some(b.clone()));
        }
        self.root.get(key).map_err(lake_err)
    }

    fn segment(&mut self, table: &str, sha: &str) -> Result<Arc<Vec<Entry>>, StoreError> {
        if let Some(s) = self.segments.get(sha) {
            return Ok(s.clone());
        }
        let s: Arc<Vec<Entry>> = Arc::new(self.object(table, "segments", sha)?);
        self.segments.insert(sha.to_owned(), s.clone());
        Ok(s)
    }

    /// The head of `table` as the transaction read it (None: no dogana head).
    fn head(&mut self, table: &str) -> Result<Option<Head>, StoreError> {
        Ok(self.table(table)?.head.clone())
    }

    /// A table the transaction may write: refused when it is not dogana's.
    fn writable(&mut self, table: &str) -> Result<&mut TableTxn, StoreError> {
        if self.txn != Some(Txn::Write) {
            return Err(corrupt("a write outside a write transaction"));
        }
        let t = self.table(table)?;
        if let Some(why) = &t.foreign {
            if t.head.is_some() {
                return Err(StoreError::Backend {
                    backend: BACKEND,
                    source: why.clone().into(),
                });
            }
        }
        Ok(t)
    }

    /// Every row of the working files of `table`, as its columns.
    fn rows_of(&self, table: &str, files: &[File]) -> Result<Vec<Vec<Datum>>, StoreError> {
        let t = self.tables.get(table).ok_or_else(|| corrupt("no table"))?;
        let columns = t.columns.clone().unwrap_or_default();
        let mut rows = Vec::new();
        for f in files {
            rows.extend(self.file_rows(table, &columns, &f.add)?);
        }
        Ok(rows)
    }

    fn file_rows(
        &self,
        table: &str,
        columns: &[ColumnDef],
        add: &Add,
    ) -> Result<Vec<Vec<Datum>>, StoreError> {
        if add.deletion_vector.is_some() {
            return Err(StoreError::Unavailable(format!(
                "{}: a file with a deletion vector ({}); dogana reads only tables without them",
                dogana::quoted(table, dogana::SHOWN),
                add.path
            )));
        }
        let key = format!("{}/{}", table_dir(table), file_path(&add.path));
        let bytes = self
            .get(&key)?
            .ok_or_else(|| corrupt(format!("{key}, which the Delta log names, is missing")))?;
        dogana_lake::decode_part(columns, bytes)
    }

    /// Writes `rows` of the table's columns as one new Parquet file of the table.
    fn write_file(&mut self, table: &str, rows: &[Vec<Datum>]) -> Result<(), StoreError> {
        let t = self.tables.get(table).ok_or_else(|| corrupt("no table"))?;
        let columns = t
            .columns
            .clone()
            .ok_or_else(|| corrupt(format!("rows for {table:?}, which has no columns")))?;
        let mut w = PartWriter::new(table, &columns)?;
        w.write(rows)?;
        let bytes = w.finish()?;
        self.add_file(table, &columns, bytes)
    }

    /// Puts one Parquet file of `columns` into the table's folder and adds it to the working
    /// set, with its statistics.
    fn add_file(
        &mut self,
        table: &str,
        columns: &[ColumnDef],
        bytes: Bytes,
    ) -> Result<(), StoreError> {
        let stats = stats::of_parquet(columns, &bytes)?;
        let name = format!("part-{}.snappy.parquet", uuid::Uuid::new_v4());
        let size = bytes.len() as i64;
        self.pending
            .push((format!("{}/{name}", table_dir(table)), bytes));
        let add = Add {
            path: name,
            partition_values: HashMap::new(),
            size,
            modification_time: chrono::Utc::now().timestamp_millis(),
            data_change: true,
            stats: Some(stats),
            tags: None,
            deletion_vector: None,
            base_row_id: None,
            default_row_commit_version: None,
            clustering_provider: None,
        };
        let t = self.table(table)?;
        t.files.push(File { add, new: true });
        t.rows_changed = true;
        Ok(())
    }

    /// The staged live rows and tombstones of `table`, as values.
    fn staged_rows(&mut self, table: &str) -> Result<(Rows, Rows), StoreError> {
        match self.staged.get_mut(table) {
            Some(s) => Ok((s.live()?, s.tombstones.clone())),
            None => Ok((Vec::new(), Vec::new())),
        }
    }

    /// Deletes the rows `gone` names from the working files of `table`, copy-on-write: a file
    /// `judge` rules out by its statistics is kept unread, one it finds wholly gone is removed
    /// unread, and one that may hold such a row is read: removed, and its other rows written
    /// as a new file, when it holds one. One file at a time.
    fn delete_where(
        &mut self,
        table: &str,
        judge: impl Fn(&Add) -> Judged,
        gone: impl Fn(&[Datum]) -> bool,
    ) -> Result<(), StoreError> {
        let t = self.tables.get(table).ok_or_else(|| corrupt("no table"))?;
        let columns = t.columns.clone().unwrap_or_default();
        let files = t.files.clone();
        let mut keep = Vec::new();
        for f in files {
            let rows = match judge(&f.add) {
                Judged::Keep => {
                    keep.push(f);
                    continue;
                }
                Judged::Gone => Vec::new(),
                Judged::Read => self.file_rows(table, &columns, &f.add)?,
            };
            let before = rows.len();
            let left: Vec<Vec<Datum>> = rows.into_iter().filter(|r| !gone(r)).collect();
            if left.len() == before && before > 0 {
                keep.push(f);
                continue;
            }
            if f.new {
                // a file this transaction wrote, never published: not written at all
                let key = format!("{}/{}", table_dir(table), file_path(&f.add.path));
                self.pending.retain(|(k, _)| *k != key);
            }
            drop_file(self.table(table)?, f);
            if !left.is_empty() {
                // the new file joins the working set after `keep` is set below
                let kept = std::mem::take(&mut self.table(table)?.files);
                self.write_file(table, &left)?;
                let t = self.table(table)?;
                keep.append(&mut t.files);
                t.files = kept;
            }
        }
        let t = self.table(table)?;
        t.files = keep;
        t.rows_changed = true;
        Ok(())
    }

    fn col_index(&mut self, table: &str, column: &str) -> Result<usize, StoreError> {
        self.table(table)?
            .columns
            .as_ref()
            .and_then(|c| c.iter().position(|c| c.name == column))
            .ok_or_else(|| corrupt(format!("{table:?} has no column {column:?}")))
    }

    /// Takes `table`'s writing turn on a cloud store: one object, `_dogana/writer`, created
    /// only if absent (taken over when its writer left it past [`TURN_TTL`]). A turn is
    /// advisory: the commit's put-if-absent alone keeps two writers from publishing one
    /// version. It is there for progress: on a store where a round trip is slow, writers
    /// that all race lose most of their attempts (each a dozen round trips) and few commit;
    /// in turn, each commits at its first attempt. Waits at most [`TURN_WAIT`], then races
    /// without it. A local or memory store races (its round trips cost nothing).
    fn take_turn(&mut self, table: &str) -> Result<(), StoreError> {
        if self.local.is_some() || self.root.url().starts_with("memory:") {
            return Ok(());
        }
        let key = format!("{}/_dogana/writer", table_dir(table));
        let mark = Bytes::from(self.holder.clone());
        let started = std::time::Instant::now();
        let mut wait_ms = 5u64;
        loop {
            // a read while another writer holds the turn; a create when none seems to
            let held = self.root.get_versioned(&key).map_err(lake_err)?;
            let expect = match &held {
                None => None,
                Some(h) => {
                    let age = chrono::Utc::now().signed_duration_since(h.modified);
                    if !age.to_std().is_ok_and(|a| a > TURN_TTL) {
                        if started.elapsed() > TURN_WAIT {
                            return Ok(());
                        }
                        std::thread::sleep(std::time::Duration::from_millis(
                            wait_ms / 2
                                + u64::from(uuid::Uuid::new_v4().as_bytes()[0]) % (wait_ms / 2 + 1),
                        ));
                        wait_ms = (wait_ms * 2).min(320);
                        continue;
                    }
                    // lapsed: taken over by a replace conditioned on what was read
                    Some(&h.version)
                }
            };
            if self
                .root
                .put_versioned(&key, mark.clone(), expect)
                .map_err(lake_err)?
                .is_some()
            {
                self.turn = Some(key);
                return Ok(());
            }
        }
    }

    /// Gives the writing turn back, if this handle still holds it.
    fn end_turn(&mut self) {
        let Some(key) = self.turn.take() else {
            return;
        };
        if let Ok(Some(held)) = self.root.get_versioned(&key) {
            if held.bytes == self.holder.as_bytes() {
                let _ = self.root.delete_versioned(&key);
            }
        }
    }

    /// Damage for the conformance suite: removes, in the open write transaction, the rows
    /// whose first column reads `id`, keeping dogana's head.
    pub(crate) fn damage_rows(&mut self, table: &str, id: &str) -> Result<(), StoreError> {
        self.writable(table)?;
        self.delete_where(
            table,
            |_| Judged::Read,
            |r| r.first().and_then(Datum::render).as_deref() == Some(id),
        )
    }

    /// Damage for the conformance suite: drops receipt `seq` from the head's segments.
    pub(crate) fn damage_receipt(&mut self, table: &str, seq: i64) -> Result<(), StoreError> {
        let Some(mut head) = self.writable(table)?.head.clone() else {
            return Ok(());
        };
        let mut all = Vec::new();
        for sha in &head.segments {
            all.extend(self.segment(table, sha)?.iter().cloned());
        }
        all.retain(|e| e.seq != seq);
        head.receipts = 0;
        head.accepted = 0;
        head.segments.clear();
        let t = self.table(table)?;
        t.head = Some(head);
        // the survivors become this transaction's receipts (their seq kept)
        for e in all {
            let t = self.table(table)?;
            t.entries.push(e);
        }
        Ok(())
    }

    /// Damage for the conformance suite: a Delta table of `column` holding `rows`, as an
    /// application would make it (no dogana head).
    pub(crate) fn damage_foreign(
        &mut self,
        table: &str,
        column: ColumnDef,
        rows: Vec<Vec<Datum>>,
    ) -> Result<(), StoreError> {
        let columns = vec![column];
        let t = self.table(table)?;
        t.columns = Some(columns);
        t.schema_changed = true;
        self.write_file(table, &rows)?;
        self.foreign_commit = true;
        Ok(())
    }

    /// Publishes one table's transaction as one Delta commit.
    fn publish(&mut self, table: &str) -> Result<(), StoreError> {
        let dir = table_dir(table);
        let Some(t) = self.tables.get(table) else {
            return Ok(());
        };
        if t.ledger.is_none() && t.entries.is_empty() && !t.rows_changed && !t.schema_changed {
            return Ok(());
        }
        let mut head = t.head.clone().unwrap_or_else(|| Head::empty(table));
        let ledger = t.ledger.clone();
        let entries = t.entries.clone();
        head.columns = t.columns.clone();
        if let Some(doc) = ledger {
            head.ledger = Some(self.put_object(table, "ledger", doc.into_bytes())?);
        }
        // the receipts: the last segment, if not full, grows; then new ones
        let mut tail: Vec<Entry> = match head.segments.last() {
            Some(sha) if head.receipts % SEGMENT as u64 != 0 => {
                let sha = sha.clone();
                head.segments.pop();
                self.segment(table, &sha)?.as_ref().clone()
            }
            _ => Vec::new(),
        };
        for e in &entries {
            tail.push(e.clone());
            head.receipts += 1;
            if e.accepted_order.is_some() {
                head.accepted += 1;
                // the replay lookup's index entry, before the commit that makes it true
                self.pending.push((
                    layout::accepted_key(&dir, &e.manifest, e.seq, &e.identity),
                    Bytes::new(),
                ));
            }
        }
        for chunk in tail.chunks(SEGMENT) {
            let bytes = serde_json::to_vec(chunk).map_err(|e| corrupt(e.to_string()))?;
            let sha = self.put_object(table, "segments", bytes)?;
            self.segments.insert(sha.clone(), Arc::new(chunk.to_vec()));
            head.segments.push(sha);
        }
        let head_bytes = serde_json::to_vec(&head).map_err(|e| corrupt(e.to_string()))?;
        let head_sha = self.put_object(table, "head", head_bytes)?;

        let t = self.tables.get(table).ok_or_else(|| corrupt("no table"))?;
        let next = t.version.map_or(0, |v| v + 1);
        let columns = t.columns.clone().unwrap_or_default();
        let schema = schema_of(&columns)?;
        let config: Vec<(String, String)> = if std::mem::take(&mut self.foreign_commit) {
            Vec::new()
        } else {
            vec![
                (HEAD_PROPERTY.to_owned(), head_sha.clone()),
                (VERSION_PROPERTY.to_owned(), next.to_string()),
            ]
        };
        let t = self.tables.get(table).ok_or_else(|| corrupt("no table"))?;
        let mut actions: Vec<Action> = Vec::new();
        let created = t.delta.is_none();
        let metadata = match t.delta.as_ref() {
            None => {
                // a checkpoint every 10 versions (Spark's default; delta-rs's is 100): a
                // reader of the newest version reads the log entries since the last one
                let mut config = config.clone();
                if !config.is_empty() {
                    config.push((
                        CHECKPOINT_INTERVAL.0.to_owned(),
                        CHECKPOINT_INTERVAL.1.to_owned(),
                    ));
                }
                new_metadata(&schema, Vec::<String>::new(), config).map_err(delta_err)?
            }
            Some(d) => {
                let mut m: Metadata = d.snapshot().map_err(delta_err)?.metadata().clone();
                if t.schema_changed {
                    m = m.with_schema(&schema).map_err(delta_err)?;
                }
                for (k, v) in &config {
                    m = m.add_config_key(k.clone(), v.clone()).map_err(delta_err)?;
                }
                m
            }
        };
        if created {
            let protocol: Protocol = serde_json::from_value(serde_json::json!({
                "minReaderVersion": 1,
                "minWriterVersion": 2
            }))
            .map_err(|e| corrupt(e.to_string()))?;
            actions.push(Action::Protocol(protocol));
        }
        actions.push(Action::Metadata(metadata.clone()));
        actions.extend(t.removed.iter().cloned().map(Action::Remove));
        actions.extend(
            t.files
                .iter()
                .filter(|f| f.new)
                .map(|f| Action::Add(f.add.clone())),
        );
        let last = entries.last();
        let info = serde_json::json!({
            "head": head_sha,
            "ledger": head.ledger,
            "receipts": entries.iter().map(|e| serde_json::from_str::<serde_json::Value>(&e.document).unwrap_or(serde_json::Value::Null)).collect::<Vec<_>>(),
            "receipt": last.map(|e| e.identity.clone()),
        });
        let properties = CommitProperties::default()
            // rule: RECV-10 — no conflict resolution: a moved table is decided again
            .with_max_retries(0)
            .with_metadata([("dogana".to_owned(), info)])
            .with_application_transaction(Transaction::new(APP_ID, head.receipts as i64));
        // rule: RECV-10 — a version already taken means a lost race: nothing is written
        let entry = format!("{dir}/_delta_log/{next:020}.json");
        if self.root.size(&entry).map_err(lake_err)?.is_some() {
            return Err(StoreError::Moved {
                store: format!("{} table {table:?}", self.root.url()),
                detail: format!("version {next} was taken first"),
            });
        }
        for (key, bytes) in std::mem::take(&mut self.pending) {
            self.root.put(&key, bytes).map_err(lake_err)?;
        }
        let log_store = self.log_store(table)?;
        let operation = if created {
            DeltaOperation::Create {
                mode: SaveMode::ErrorIfExists,
                location: log_store.root_url().clone(),
                protocol: match &actions[0] {
                    Action::Protocol(p) => p.clone(),
                    _ => return Err(corrupt("a new table's commit without its protocol")),
                },
                metadata,
            }
        } else {
            DeltaOperation::Write {
                mode: if t.removed.is_empty() {
                    SaveMode::Append
                } else {
                    SaveMode::Overwrite
                },
                partition_by: None,
                predicate: None,
            }
        };
        let snapshot = match t.delta.as_ref() {
            Some(d) => Some(d.snapshot().map_err(delta_err)?),
            None => None,
        };
        let committed = self.rt.block_on(async {
            CommitBuilder::from(properties)
                .with_actions(actions)
                .build(
                    snapshot.map(|s| s as &dyn deltalake_core::kernel::transaction::TableReference),
                    log_store,
                    operation,
                )
                .await
        });
        match committed {
            Ok(c) if c.version() == next => Ok(()),
            Ok(c) => Err(corrupt(format!(
                "the commit of {table:?} landed at version {}, not {next}",
                c.version()
            ))),
            Err(e) if moved(&e) => Err(StoreError::Moved {
                store: format!("{} table {table:?}", self.root.url()),
                detail: format!("version {next} was taken first: {e}"),
            }),
            Err(e) => Err(delta_err(e)),
        }
    }
}

/// Shows that the object store creates an object only if it is absent, which a Delta commit
/// rests on: a store that lets a second create of one key succeed would let two writers both
/// commit one version, and is refused for writing (`weak-conditional-backend`, as the lake's
/// probe refuses it).
fn probe(root: &Root) -> Result<(), StoreError> {
    let key = format!("_probe/{}", uuid::Uuid::new_v4().simple());
    let first = root
        .create(&key, Bytes::from_static(b"1"))
        .map_err(lake_err)?;
    let second = root
        .create(&key, Bytes::from_static(b"2"))
        .map_err(lake_err)?;
    root.delete(&key).map_err(lake_err)?;
    if first && !second {
        return Ok(());
    }
    Err(dogana_lake::LakeError::WeakConditionalBackend {
        root: root.url().to_owned(),
        ignored: "If-None-Match (a second create of one key succeeded)",
    }
    .into())
}

/// Whether a commit failed because another writer took its version first.
fn moved(e: &DeltaTableError) -> bool {
    match e {
        DeltaTableError::VersionAlreadyExists(_) => true,
        DeltaTableError::Transaction { source } => matches!(
            source,
            TransactionError::MaxCommitAttempts(_) | TransactionError::VersionAlreadyExists(_)
        ),
        _ => false,
    }
}

/// The path of an Add's file under the table's folder (its path is a URL-encoded relative
/// path).
fn file_path(path: &str) -> String {
    percent_decode(path)
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            if let Some(v) = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Marks a file of the working set removed (a snapshot file gets a Remove action; a file this
/// transaction wrote is simply dropped).
fn drop_file(t: &mut TableTxn, f: File) {
    if !f.new {
        t.removed.push(Remove {
            path: f.add.path.clone(),
            data_change: true,
            deletion_timestamp: Some(chrono::Utc::now().timestamp_millis()),
            extended_file_metadata: Some(true),
            partition_values: Some(f.add.partition_values.clone()),
            size: Some(f.add.size),
            tags: f.add.tags.clone(),
            deletion_vector: None,
            base_row_id: f.add.base_row_id,
            default_row_commit_version: f.add.default_row_commit_version,
        });
    }
}

/// Refuses a table whose protocol asks for what dogana does not write: a reader version
/// above 1 or a writer version above 2 (deletion vectors, column mapping, any table feature),
/// naming what it asks for.
fn check_protocol(table: &str, p: &Protocol) -> Result<(), StoreError> {
    let v = serde_json::to_value(p).map_err(|e| corrupt(e.to_string()))?;
    let reader = v
        .get("minReaderVersion")
        .and_then(|x| x.as_i64())
        .unwrap_or(0);
    let writer = v
        .get("minWriterVersion")
        .and_then(|x| x.as_i64())
        .unwrap_or(0);
    if reader <= 1 && writer <= 2 {
        return Ok(());
    }
    let features: Vec<String> = ["readerFeatures", "writerFeatures"]
        .iter()
        .filter_map(|k| v.get(*k).and_then(|f| f.as_array()))
        .flatten()
        .filter_map(|f| f.as_str().map(str::to_owned))
        .collect();
    Err(StoreError::Unavailable(format!(
        "the Delta table {} needs reader version {reader} and writer version {writer}{}; dogana writes tables of reader version 1 and writer version 2 only (no deletion vectors, column mapping or other table features): deliver into another table",
        dogana::quoted(table, dogana::SHOWN),
        if features.is_empty() {
            String::new()
        } else {
            format!(" with the features {}", features.join(", "))
        }
    )))
}

/// The Delta type of a declared type name (the lake's Parquet mapping: text for decimals,
/// strings and untyped columns).
fn delta_type(ty: Option<&str>) -> DataType {
    use dogana::LogicalType as L;
    match ty.and_then(L::from_name) {
        Some(L::Int) => DataType::LONG,
        Some(L::Float) => DataType::DOUBLE,
        Some(L::Bool) => DataType::BOOLEAN,
        Some(L::Date) => DataType::DATE,
        Some(L::Datetime) => DataType::TIMESTAMP,
        _ => DataType::STRING,
    }
}

fn schema_of(columns: &[ColumnDef]) -> Result<StructType, StoreError> {
    StructType::try_new(
        columns
            .iter()
            .map(|c| StructField::new(c.name.clone(), delta_type(c.ty.as_deref()), !c.key)),
    )
    .map_err(delta_err)
}

/// The columns of a Delta table dogana did not write, typed as its schema says.
fn columns_of_schema(m: &Metadata) -> Result<Vec<ColumnDef>, StoreError> {
    let schema = m.parse_schema().map_err(delta_err)?;
    Ok(schema
        .fields()
        .map(|f| ColumnDef {
            name: f.name().clone(),
            ty: match f.data_type() {
                t if *t == DataType::LONG || *t == DataType::INTEGER => Some("int".into()),
                t if *t == DataType::DOUBLE => Some("float".into()),
                t if *t == DataType::BOOLEAN => Some("bool".into()),
                t if *t == DataType::DATE => Some("date".into()),
                t if *t == DataType::TIMESTAMP => Some("datetime".into()),
                _ => None,
            },
            key: false,
        })
        .collect())
}

/// Which files may hold a row whose `column` is one of `values`: a file whose statistics
/// bound `column` between two neighbouring values, or outside them all, is ruled out without
/// being read (a delivery's keys find the files that hold them: its cost follows the
/// delivery as far as file statistics allow). A file without usable bounds may hold any.
fn holds_one_of(column: &str, values: impl Iterator<Item = Datum>) -> impl Fn(&Add) -> bool {
    let mut sorted: Vec<Datum> = values.filter(|v| !matches!(v, Datum::Null)).collect();
    sorted.sort_by(|a, b| Datum::compare(a, b).unwrap_or(std::cmp::Ordering::Equal));
    let column = column.to_owned();
    move |a: &Add| {
        let Some(like) = sorted.first() else {
            return false;
        };
        match stats::bounds(a.stats.as_deref(), &column, like) {
            // the first value not below the file's minimum, if it is not above its maximum
            Some((lo, hi)) => {
                let at =
                    sorted.partition_point(|v| Datum::compare(v, &lo).is_some_and(|o| o.is_lt()));
                sorted
                    .get(at)
                    .is_some_and(|v| Datum::compare(v, &hi).is_some_and(|o| o.is_le()))
            }
            None => true,
        }
    }
}

/// What a file's statistics say of a deletion ([`Delta::delete_where`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Judged {
    /// It holds no row the deletion names: kept, unread.
    Keep,
    /// Every row it holds is named: removed, unread.
    Gone,
    /// It may hold some: read.
    Read,
}

/// Whether every row of a file lies in the window `low..=high` of `column`, by its
/// statistics: its bounds inside the window and no NULL in the column.
fn inside_window(a: &Add, column: &str, low: &Datum, high: &Datum) -> bool {
    match stats::bounds(a.stats.as_deref(), column, low) {
        Some((lo, hi)) => {
            in_window(&lo, low, high)
                && in_window(&hi, low, high)
                && stats::nulls(a.stats.as_deref(), column) == Some(0)
        }
        None => false,
    }
}

/// A window bound as a datum.
fn bound(v: &Value) -> Datum {
    Datum::of_value(v, false)
}

fn in_window(v: &Datum, low: &Datum, high: &Datum) -> bool {
    matches!(Datum::compare(v, low), Some(o) if o.is_ge())
        && matches!(Datum::compare(v, high), Some(o) if o.is_le())
}

impl Backend for Delta {
    const TEXT_TIMES: bool = false;

    fn begin(&mut self, txn: Txn, tables: &[&str]) -> Result<(), StoreError> {
        self.tables.clear();
        self.pending.clear();
        if txn == Txn::Write {
            if !self.write {
                return Err(StoreError::Unavailable(
                    "this Delta store was opened to read".into(),
                ));
            }
            for t in tables {
                dogana_lake::layout::check_table_name(t).map_err(StoreError::TableName)?;
            }
            if tables.len() > 1 {
                return Err(StoreError::Unavailable(format!(
                    "a Delta store publishes one table per commit, and Delta has no commit across tables: the group {} cannot be published together here; deliver it to a SQLite, DuckDB, Postgres or lake store",
                    tables.join(", ")
                )));
            }
        }
        self.txn = Some(txn);
        if txn == Txn::Write {
            if let Some(t) = tables.first() {
                self.take_turn(t)?;
            }
        }
        for t in tables {
            if let Err(e) = self.table(t) {
                // the engine rolls back only a transaction that began
                self.rollback();
                return Err(e);
            }
        }
        Ok(())
    }

    fn commit(&mut self) -> Result<(), StoreError> {
        let names: Vec<String> = self.tables.keys().cloned().collect();
        let result = if self.txn == Some(Txn::Write) {
            names.iter().try_for_each(|t| self.publish(t))
        } else {
            Ok(())
        };
        self.tables.clear();
        self.pending.clear();
        self.txn = None;
        self.end_turn();
        result
    }

    fn rollback(&mut self) {
        self.tables.clear();
        self.pending.clear();
        self.txn = None;
        self.end_turn();
    }

    fn ledger(&mut self, table: &str) -> Result<Option<String>, StoreError> {
        if let Some(doc) = &self.table(table)?.ledger {
            return Ok(Some(doc.clone()));
        }
        let Some(sha) = self.head(table)?.and_then(|h| h.ledger) else {
            return Ok(None);
        };
        if let Some(doc) = self.ledgers.get(&sha) {
            return Ok(Some(doc.as_ref().clone()));
        }
        let key = layout::key(&table_dir(table), "ledger", &sha);
        let bytes = self
            .root
            .get(&key)
            .map_err(lake_err)?
            .ok_or_else(|| corrupt(format!("{key}, the table's ledger, is missing")))?;
        if layout::sha256(&bytes) != sha {
            return Err(corrupt(format!(
                "{key} is damaged: its bytes' SHA-256 is not its name"
            )));
        }
        let doc = String::from_utf8(bytes.to_vec())
            .map_err(|_| corrupt(format!("{key} is not UTF-8")))?;
        self.ledgers.clear();
        self.ledgers.insert(sha, Arc::new(doc.clone()));
        Ok(Some(doc))
    }

    fn accepted_receipt(
        &mut self,
        table: &str,
        manifest: &str,
    ) -> Result<Option<String>, StoreError> {
        let Some(head) = self.head(table)? else {
            return Ok(None);
        };
        let prefix = layout::accepted_prefix(&table_dir(table), manifest);
        let mut found: Vec<(i64, String)> = self
            .root
            .list(&prefix)
            .map_err(lake_err)?
            .iter()
            .filter_map(|k| layout::parse_accepted(k.rsplit('/').next().unwrap_or("")))
            .filter(|(seq, _)| *seq >= 1 && *seq as u64 <= head.receipts)
            .collect();
        found.sort();
        for (seq, identity) in found {
            let at = ((seq - 1) as usize) / SEGMENT;
            let Some(sha) = head.segments.get(at) else {
                continue;
            };
            let segment = self.segment(table, sha)?;
            // an entry whose commit never landed names a receipt the segment does not hold
            if let Some(e) = segment
                .iter()
                .find(|e| e.seq == seq && e.identity == identity)
            {
                if e.accepted_order.is_some() {
                    return Ok(Some(e.document.clone()));
                }
            }
        }
        Ok(None)
    }

    fn receipts(&mut self, table: &str) -> Result<Vec<ReceiptRow>, StoreError> {
        let Some(head) = self.head(table)? else {
            return Ok(Vec::new());
        };
        let mut out = Vec::with_capacity(head.receipts as usize);
        for sha in &head.segments {
            for e in self.segment(table, sha)?.iter() {
                out.push(ReceiptRow {
                    seq: e.seq,
                    identity: e.identity.clone(),
                    manifest_identity: e.manifest.clone(),
                    outcome: e.outcome.clone(),
                    accepted_order: e.accepted_order,
                    document: e.document.clone(),
                });
            }
        }
        Ok(out)
    }

    fn tables(&mut self) -> Result<Vec<String>, StoreError> {
        let mut out = Vec::new();
        for dir in self.root.list_dirs("").map_err(lake_err)? {
            let Some(name) = table_of_dir(&dir) else {
                continue;
            };
            if table_dir(&name) != dir {
                continue;
            }
            if self
                .head(&name)?
                .is_some_and(|h| h.ledger.is_some() || h.receipts > 0)
            {
                out.push(name);
            }
        }
        out.sort();
        Ok(out)
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
        let held = (!PartWriter::plain(&columns)).then(Vec::new);
        self.staged.insert(
            table.to_owned(),
            Staging {
                columns,
                held,
                ..Staging::default()
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
        let s = self
            .staged
            .get_mut(table)
            .ok_or_else(|| corrupt(format!("no staging area for {table:?}")))?;
        let hold = |row: dogana_receiver::Row<'_>| -> Vec<Datum> {
            (0..row.len()).map(|i| Datum::from(row.get(i))).collect()
        };
        s.tombstones
            .extend(batch.rows().filter(|r| r.tombstone).map(hold));
        // a NULL key cannot be encoded in a key column: from then on, values
        let keys: Vec<usize> = (0..s.columns.len()).filter(|i| s.columns[*i].key).collect();
        if s.held.is_none()
            && batch.rows().any(|r| {
                !r.tombstone
                    && keys
                        .iter()
                        .any(|i| r.get(*i) == dogana_receiver::Staged::Null)
            })
        {
            s.held = Some(s.live()?);
            s.parts.clear();
        }
        if let Some(held) = s.held.as_mut() {
            held.extend(batch.rows().filter(|r| !r.tombstone).map(hold));
            return Ok(());
        }
        if s.writer.is_none() {
            s.writer = Some(PartWriter::new(table, &s.columns)?);
        }
        let at: Vec<usize> = (0..s.columns.len()).collect();
        if let Some(w) = s.writer.as_mut() {
            w.write_batch(batch, &at)?;
            if w.rows() >= FILE_ROWS {
                s.seal()?;
            }
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
        let key_at: Vec<usize> = q
            .key
            .iter()
            .map(|k| self.col_index(table, k))
            .collect::<Result<_, _>>()?;
        let w = self.col_index(table, q.column)?;
        let (live, tombstones) = self.staged_rows(table)?;
        let keys: HashSet<String> = live
            .iter()
            .map(|r| key_text(q.staged_key.iter().map(|i| &r[*i])))
            .chain(tombstones.iter().map(|r| key_text(r.iter())))
            .collect();
        if keys.is_empty() {
            return Ok((0, None));
        }
        let (low, high) = (bound(&q.window.low), bound(&q.window.high));
        let may_hold = holds_one_of(
            &q.key[0],
            live.iter()
                .map(|r| r[q.staged_key[0]].clone())
                .chain(tombstones.iter().map(|r| r[0].clone())),
        );
        let files: Vec<File> = self
            .table(table)?
            .files
            .iter()
            // a file wholly inside the window holds no row outside it
            .filter(|f| may_hold(&f.add) && !inside_window(&f.add, q.column, &low, &high))
            .cloned()
            .collect();
        let rows = self.rows_of(table, &files)?;
        let mut count = 0;
        let mut first = None;
        for r in rows {
            if in_window(&r[w], &low, &high) {
                continue;
            }
            if keys.contains(&key_text(key_at.iter().map(|i| &r[*i]))) {
                count += 1;
                if first.is_none() {
                    let mut v: Vec<Datum> = key_at.iter().map(|i| r[*i].clone()).collect();
                    v.push(r[w].clone());
                    first = Some(v);
                }
            }
        }
        Ok((count, first))
    }

    fn execute(&mut self, table: &str, step: Step<'_>) -> Result<(), StoreError> {
        self.writable(table)?;
        match step {
            Step::Create(columns) => {
                let t = self.table(table)?;
                t.columns = Some(
                    columns
                        .iter()
                        .map(|c: &Column| ColumnDef {
                            name: c.name.clone(),
                            ty: c.ty.clone(),
                            key: c.key,
                        })
                        .collect(),
                );
                t.schema_changed = true;
                t.foreign = None;
                let files = std::mem::take(&mut t.files);
                for f in files {
                    drop_file(t, f);
                }
            }
            Step::Drop | Step::DeleteAll => {
                let t = self.table(table)?;
                if matches!(step, Step::Drop) {
                    t.columns = None;
                    t.schema_changed = true;
                }
                let files = std::mem::take(&mut t.files);
                for f in files {
                    drop_file(t, f);
                }
                t.rows_changed = true;
            }
            Step::BeginBulk(_) | Step::Indexes(_) => {}
            Step::DeleteWindow(column, window) => {
                let w = self.col_index(table, column)?;
                let (low, high) = (bound(&window.low), bound(&window.high));
                let name = column.to_owned();
                let (l2, h2) = (low.clone(), high.clone());
                // a file whose bounds lie outside the window is kept unread; one whose bounds
                // lie inside it, without a NULL there, is removed whole, unread
                let judge = move |a: &Add| match stats::bounds(a.stats.as_deref(), &name, &l2) {
                    Some((lo, hi)) => {
                        let below = matches!(Datum::compare(&hi, &l2), Some(o) if o.is_lt());
                        let above = matches!(Datum::compare(&lo, &h2), Some(o) if o.is_gt());
                        if below || above {
                            Judged::Keep
                        } else if inside_window(a, &name, &l2, &h2) {
                            Judged::Gone
                        } else {
                            Judged::Read
                        }
                    }
                    None => Judged::Read,
                };
                self.delete_where(table, judge, |r| in_window(&r[w], &low, &high))?;
            }
            Step::DeleteKeys(key, from) => {
                let at: Vec<usize> = key
                    .iter()
                    .map(|k| self.col_index(table, k))
                    .collect::<Result<_, _>>()?;
                let (live, tombstones) = self.staged_rows(table)?;
                let staged: Vec<Vec<Datum>> = match from {
                    KeysFrom::Rows(staged_at) => live
                        .iter()
                        .map(|r| staged_at.iter().map(|i| r[*i].clone()).collect())
                        .collect(),
                    KeysFrom::Tombstones => tombstones,
                };
                if staged.is_empty() {
                    return Ok(());
                }
                let keys: HashSet<String> = staged.iter().map(|k| key_text(k.iter())).collect();
                let may_hold = holds_one_of(&key[0], staged.iter().map(|k| k[0].clone()));
                let judge = move |a: &Add| {
                    if may_hold(a) {
                        Judged::Read
                    } else {
                        Judged::Keep
                    }
                };
                self.delete_where(table, judge, |r| {
                    keys.contains(&key_text(at.iter().map(|i| &r[*i])))
                })?;
            }
            Step::InsertStaged(layout) => {
                let columns = self.table(table)?.columns.clone().ok_or_else(|| {
                    corrupt(format!("insert into {table:?}, which has no columns"))
                })?;
                let Some(s) = self.staged.get_mut(table) else {
                    return Ok(());
                };
                s.seal()?;
                // the staged files as they are when their columns are the published ones
                if s.held.is_none()
                    && dogana_lake::parts::schema(&s.columns)
                        == dogana_lake::parts::schema(&columns)
                {
                    let parts = s.parts.clone();
                    for (bytes, _) in parts {
                        self.add_file(table, &columns, bytes)?;
                    }
                    return Ok(());
                }
                let from: Vec<Option<usize>> =
                    columns.iter().map(|c| layout.column_of(&c.name)).collect();
                let (live, _) = self.staged_rows(table)?;
                let rows: Vec<Vec<Datum>> = live
                    .iter()
                    .map(|r| {
                        from.iter()
                            .map(|i| i.map_or(Datum::Null, |i| r[i].clone()))
                            .collect()
                    })
                    .collect();
                for chunk in rows.chunks(FILE_ROWS as usize) {
                    self.write_file(table, chunk)?;
                }
            }
        }
        Ok(())
    }

    fn save_ledger(&mut self, table: &str, document: &str) -> Result<(), StoreError> {
        self.writable(table)?.ledger = Some(document.to_owned());
        Ok(())
    }

    fn save_ledger_rows(
        &mut self,
        _table: &str,
        _identity: &str,
        _rows: &LedgerRows,
    ) -> Result<(), StoreError> {
        Err(StoreError::Unavailable(
            "a Delta store keeps each ledger as one document".into(),
        ))
    }

    fn save_receipt(&mut self, table: &str, receipt: &Receipt) -> Result<(), StoreError> {
        let t = self.writable(table)?;
        let (receipts, accepted) = t.head.as_ref().map_or((0, 0), |h| (h.receipts, h.accepted));
        let seq = receipts + t.entries.len() as u64 + 1;
        let accepted_before = accepted
            + t.entries
                .iter()
                .filter(|e| e.accepted_order.is_some())
                .count() as u64;
        let is_accepted = receipt.outcome() == Outcome::Accepted;
        t.entries.push(Entry {
            seq: seq as i64,
            identity: receipt.identity(),
            manifest: receipt.manifest().identity(),
            outcome: receipt.outcome().name().to_owned(),
            accepted_order: is_accepted.then_some(accepted_before as i64 + 1),
            document: receipt.to_json(),
        });
        Ok(())
    }

    fn read_rows(
        &mut self,
        table: &str,
        columns: &[String],
    ) -> Result<Vec<Vec<Datum>>, StoreError> {
        let at: Vec<usize> = columns
            .iter()
            .map(|c| self.col_index(table, c))
            .collect::<Result<_, _>>()?;
        let files = self.table(table)?.files.clone();
        Ok(self
            .rows_of(table, &files)?
            .into_iter()
            .map(|r| at.iter().map(|i| r[*i].clone()).collect())
            .collect())
    }

    fn group_of(&mut self, _table: &str) -> Result<Option<Vec<String>>, StoreError> {
        Ok(None)
    }
}

impl Delta {
    /// Two statements for DuckDB (after `INSTALL delta; LOAD delta;`): a view `<table>` over
    /// the Delta table through `delta_scan` (decimal columns, kept as their exact text, cast
    /// back) and a view `<table>__regions` over its ledger's regions. None when the store
    /// holds no dogana table of that name. `delta_scan` reads the newest version each time
    /// the view is queried; the regions are the ones published when this was printed.
    pub fn duckdb_sql(&mut self, table: &str) -> Result<Option<String>, StoreError> {
        use dogana_lake::sql::{literal, regions_sql};
        use dogana_receiver::sql::quote_ident;
        self.begin(Txn::Read, &[table])?;
        let read = (|| {
            let Some(head) = self.head(table)? else {
                return Ok(None);
            };
            let ledger = self.ledger(table)?;
            let url = self.table_url(table)?;
            let select: Vec<String> = head
                .columns
                .iter()
                .flatten()
                .map(|c| {
                    let q = quote_ident(&c.name);
                    match c.ty.as_deref() {
                        Some(t) if t.starts_with("decimal(") => {
                            format!("CAST({q} AS {}) AS {q}", t.to_ascii_uppercase())
                        }
                        _ => q,
                    }
                })
                .collect();
            let select = if select.is_empty() {
                "*".to_owned()
            } else {
                select.join(", ")
            };
            Ok(Some(format!(
                "INSTALL delta;\nLOAD delta;\nCREATE OR REPLACE VIEW {} AS SELECT {select} FROM delta_scan({});\n{}",
                quote_ident(table),
                literal(&url),
                regions_sql(table, ledger.as_deref())
            )))
        })();
        self.rollback();
        read
    }
}
