//! The folded-runs index (`folded-index`): every delivery (a *run*) a snapshot's chain folds,
//! as Parquet segments beside the table (`tables/<t>/runs/<uuid>.parquet`) that each snapshot
//! names in `folded_runs`.
//!
//! A run is a delivery's receipt: its seq and fence (so its object's key), its manifest
//! identity (the run's digest: the SHA-256 of the file's bytes, shape and position), its
//! outcome, the snapshot that published it and when. Without the index a reader of a table's
//! receipts lists `receipts/seq/` (one LIST page per thousand deliveries on a bucket) and a
//! lazy store walks the chain; with it, a reader reads a few segments.
//!
//! - **A pass writes the index over its parent's** (`store.fold.folded-index`): the
//!   parent's segments by reference, plus one segment of the runs above it (the pass's own
//!   receipt), then merges 4 segments of one size tier (the parts' tiers, `crate::tier`) into
//!   one, so a pass writes few rows and the segments stay few. A parent without an index (a
//!   snapshot older than it) is walked down to the first snapshot that has one, or to the
//!   root; a walk meeting a missing manifest writes none.
//! - **A reader trusts an index only where it validates** (`store.lay-out.folded-index-valid`):
//!   `through` names the snapshot read, and every segment reads at its recorded SHA-256 and
//!   row count; otherwise it walks (`store.lay-out.folded-index-walk`): the snapshots from
//!   the head down to the first valid index, taking each one's own run. So a damaged index
//!   costs time, never a run.
//! - A writer trusts its parent's index by its `through` alone (reading every segment at each
//!   delivery would cost what the index saves); a merge reads the segments it merges and, if
//!   one does not validate, carries them unmerged. Readers check everything.

use std::sync::Arc;

use arrow_array::{Array, RecordBatch, StringArray, UInt64Array};
use arrow_schema::{DataType, Field, Schema};
use bytes::Bytes;
use dogana_receiver::StoreError;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;

use crate::layout::{
    receipt_key, table_dir, FoldedRuns, ReceiptObject, RunSegment, SnapshotManifest,
};
use crate::objects::Root;

/// One delivery a snapshot's chain folds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// Its receipt's place among the table's receipts.
    pub seq: u64,
    /// The fence its receipt was written under (with `seq`, its key).
    pub fence: u64,
    /// Its manifest identity: the run's digest.
    pub manifest: String,
    /// `accepted` or `rejected`.
    pub outcome: String,
    /// The snapshot that published it.
    pub snapshot: String,
    /// When that snapshot was made (RFC 3339).
    pub committed_at: String,
}

impl Run {
    /// Its receipt's key.
    pub fn receipt_key(&self, table: &str) -> String {
        receipt_key(table, self.seq, self.fence)
    }
}

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("seq", DataType::UInt64, false),
        Field::new("fence", DataType::UInt64, false),
        Field::new("manifest", DataType::Utf8, false),
        Field::new("outcome", DataType::Utf8, false),
        Field::new("snapshot", DataType::Utf8, false),
        Field::new("committed_at", DataType::Utf8, false),
    ]))
}

fn corrupt(m: String) -> StoreError {
    StoreError::Corrupt(m)
}

/// A segment's bytes.
pub fn encode(runs: &[Run]) -> Result<Bytes, StoreError> {
    let strings = |f: fn(&Run) -> &str| -> Arc<dyn Array> {
        Arc::new(StringArray::from_iter_values(runs.iter().map(f)))
    };
    let batch = RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(UInt64Array::from_iter_values(runs.iter().map(|r| r.seq))),
            Arc::new(UInt64Array::from_iter_values(runs.iter().map(|r| r.fence))),
            strings(|r| &r.manifest),
            strings(|r| &r.outcome),
            strings(|r| &r.snapshot),
            strings(|r| &r.committed_at),
        ],
    )
    .map_err(|e| corrupt(format!("a runs segment: {e}")))?;
    let mut w = ArrowWriter::try_new(Vec::new(), schema(), None)
        .map_err(|e| corrupt(format!("a runs segment: {e}")))?;
    w.write(&batch)
        .map_err(|e| corrupt(format!("a runs segment: {e}")))?;
    Ok(Bytes::from(
        w.into_inner()
            .map_err(|e| corrupt(format!("a runs segment: {e}")))?,
    ))
}

/// A segment's runs (None: it does not decode as one).
pub fn decode(bytes: Bytes) -> Option<Vec<Run>> {
    let reader = ParquetRecordBatchReaderBuilder::try_new(bytes)
        .ok()?
        .build()
        .ok()?;
    let mut out = Vec::new();
    for batch in reader {
        let b = batch.ok()?;
        let u = |i: usize| b.column(i).as_any().downcast_ref::<UInt64Array>().cloned();
        let s = |i: usize| b.column(i).as_any().downcast_ref::<StringArray>().cloned();
        let (seq, fence) = (u(0)?, u(1)?);
        let (manifest, outcome, snapshot, at) = (s(2)?, s(3)?, s(4)?, s(5)?);
        for i in 0..b.num_rows() {
            out.push(Run {
                seq: seq.value(i),
                fence: fence.value(i),
                manifest: manifest.value(i).to_owned(),
                outcome: outcome.value(i).to_owned(),
                snapshot: snapshot.value(i).to_owned(),
                committed_at: at.value(i).to_owned(),
            });
        }
    }
    Some(out)
}

/// Writes a segment of `runs`.
fn write_segment(root: &Root, table: &str, runs: &[Run]) -> Result<RunSegment, StoreError> {
    let bytes = encode(runs)?;
    let path = format!(
        "tables/{}/runs/{}.parquet",
        table_dir(table),
        uuid::Uuid::new_v4().simple()
    );
    let segment = RunSegment {
        path: path.clone(),
        sha256: crate::pages::id_of(&bytes),
        rows: runs.len() as u64,
    };
    root.put(&path, bytes)?;
    Ok(segment)
}

/// A segment's runs, if it reads at its recorded digest and row count.
fn read_segment(root: &Root, s: &RunSegment) -> Result<Option<Vec<Run>>, StoreError> {
    let Some(bytes) = root.get(&s.path)? else {
        return Ok(None);
    };
    if crate::pages::id_of(&bytes) != s.sha256 {
        return Ok(None);
    }
    Ok(decode(bytes).filter(|runs| runs.len() as u64 == s.rows))
}

/// The runs an index lists, if it is valid for the snapshot `key`
/// (`store.lay-out.folded-index-valid`).
pub fn valid_runs(
    root: &Root,
    key: &str,
    index: &FoldedRuns,
) -> Result<Option<Vec<Run>>, StoreError> {
    if index.through != key {
        return Ok(None);
    }
    let mut out = Vec::new();
    for s in &index.segments {
        match read_segment(root, s)? {
            Some(runs) => out.extend(runs),
            None => return Ok(None),
        }
    }
    Ok(Some(out))
}

/// The run the snapshot `key` published itself, read from its receipt (None: it published
/// none, as a fold).
fn own_run(
    root: &Root,
    table: &str,
    key: &str,
    s: &SnapshotManifest,
) -> Result<Option<Run>, StoreError> {
    let Some(r) = &s.receipt else {
        return Ok(None);
    };
    let rk = receipt_key(table, r.seq, r.fence);
    let b = root
        .get(&rk)?
        .ok_or_else(|| corrupt(format!("{key} names receipt {rk}, which is missing")))?;
    let o: ReceiptObject = serde_json::from_slice(&b).map_err(|e| corrupt(format!("{rk}: {e}")))?;
    Ok(Some(Run {
        seq: o.seq,
        fence: o.fence,
        manifest: o.manifest_identity,
        outcome: o.outcome,
        snapshot: key.to_owned(),
        committed_at: s.created_at.clone(),
    }))
}

/// Every run the chain below (and including) the snapshot `head` folds, oldest first: from
/// its index where valid, otherwise by walking down to the first valid index or the root
/// (`store.lay-out.folded-index-walk`). None: the walk met a missing manifest.
pub fn runs_of(root: &Root, table: &str, head: &str) -> Result<Option<Vec<Run>>, StoreError> {
    let mut above: Vec<Run> = Vec::new();
    let mut at = Some(head.to_owned());
    let mut base: Vec<Run> = Vec::new();
    while let Some(key) = at {
        let Some(b) = root.get(&key)? else {
            return Ok(None);
        };
        let s: SnapshotManifest =
            serde_json::from_slice(&b).map_err(|e| corrupt(format!("{key}: {e}")))?;
        if let Some(index) = &s.folded_runs {
            if let Some(runs) = valid_runs(root, &key, index)? {
                base = runs;
                break;
            }
        }
        above.extend(own_run(root, table, &key, &s)?);
        at = s.parent;
    }
    above.reverse();
    base.extend(above);
    Ok(Some(base))
}

/// The index a pass writes for its snapshot `key` (`store.fold.folded-index`), whose parent
/// is `parent` (its key and index) and which publishes `own` (its receipt's run, if any).
/// None: the parent's chain holds no index and its walk meets a missing manifest.
pub(crate) fn next_index(
    root: &Root,
    table: &str,
    key: &str,
    parent: Option<(&str, Option<&FoldedRuns>)>,
    own: Option<Run>,
) -> Result<Option<FoldedRuns>, StoreError> {
    let mut segments: Vec<RunSegment> = Vec::new();
    let mut fresh: Vec<Run> = Vec::new();
    if let Some((p, index)) = parent {
        match index {
            // carried by reference: trusted by its `through` (readers check the rest)
            Some(index) if index.through == p => segments = index.segments.clone(),
            _ => match runs_of(root, table, p)? {
                Some(runs) => fresh = runs,
                None => return Ok(None),
            },
        }
    }
    fresh.extend(own);
    let mut planned: Vec<Planned> = segments.into_iter().map(Planned::Stored).collect();
    if !fresh.is_empty() {
        planned.push(Planned::Fresh(fresh));
    }
    merge_tiers(root, &mut planned)?;
    // only now are the new segments written: one merged away in this pass never is
    let mut segments = Vec::with_capacity(planned.len());
    for p in planned {
        segments.push(match p {
            Planned::Stored(s) => s,
            Planned::Fresh(runs) => write_segment(root, table, &runs)?,
        });
    }
    Ok(Some(FoldedRuns {
        through: key.to_owned(),
        segments,
    }))
}

/// A segment as a pass plans its index: one already stored, or runs still to write.
enum Planned {
    Stored(RunSegment),
    Fresh(Vec<Run>),
}

impl Planned {
    fn rows(&self) -> u64 {
        match self {
            Planned::Stored(s) => s.rows,
            Planned::Fresh(r) => r.len() as u64,
        }
    }
}

/// Merges 4 segments of one size tier into one, the lowest tier first, until every tier
/// holds fewer than 4; a merge meeting a segment that does not validate leaves them all as
/// they are.
fn merge_tiers(root: &Root, planned: &mut Vec<Planned>) -> Result<(), StoreError> {
    loop {
        let rows: Vec<u64> = planned.iter().map(Planned::rows).collect();
        let Some(m) = crate::plan_merges(&rows).into_iter().next() else {
            return Ok(());
        };
        let mut runs = Vec::new();
        for i in m {
            match &planned[i] {
                Planned::Fresh(r) => runs.extend(r.iter().cloned()),
                Planned::Stored(s) => match read_segment(root, s)? {
                    Some(r) => runs.extend(r),
                    None => return Ok(()),
                },
            }
        }
        runs.sort_by_key(|r| r.seq);
        for i in m.iter().rev() {
            planned.remove(*i);
        }
        planned.insert(m[0], Planned::Fresh(runs));
    }
}

/// The folded-runs segments a key names, as a collection keeps them: every segment of every
/// retained snapshot's index (`layout::FoldedRuns`).
pub fn segment_keys(s: &SnapshotManifest) -> Vec<String> {
    s.folded_runs
        .iter()
        .flat_map(|f| f.segments.iter().map(|g| g.path.clone()))
        .collect()
}
