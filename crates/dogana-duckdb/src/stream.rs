//! A whole-table staging fed to DuckDB as a table function, `dogana_batches(id)`, which
//! `INSERT INTO main.dogana_whole__… SELECT * FROM dogana_batches(id)` scans on every DuckDB
//! thread at once: each thread takes the next batch the reading thread checked, turns it into
//! a DuckDB vector and appends it to its own row groups, compressing them. The appender wrote
//! every row group through the connection's one thread, which was the delivery's critical path
//! (bench/duckdb.md, "Where our time goes now").
//!
//! The rows are the batches the engine staged, nothing else: the same columns (`Columns`, as
//! `stage_batch` builds them) and the same conversion into DuckDB's vectors as the appender's.
//! Only their order in the table is not the file's: the threads interleave their row groups
//! (the insert runs with `preserve_insertion_order` off, without which DuckDB inserts from one
//! thread).

use std::collections::HashMap;
use std::error::Error;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use dogana_receiver::Batch;
use duckdb::arrow::record_batch::RecordBatch;
use duckdb::core::{DataChunkHandle, LogicalTypeHandle, LogicalTypeId};
use duckdb::vtab::{
    record_batch_to_duckdb_data_chunk, BindInfo, InitInfo, TableFunctionInfo, VTab,
};

use crate::columns::Columns;

/// The table function's name.
pub(crate) const FUNCTION: &str = "dogana_batches";

/// DuckDB's vector size: the most rows one call may emit.
const VECTOR: usize = 2048;

/// What one staging scan reads: the engine's batches, and what it leaves beside the rows.
pub(crate) struct Source {
    row_types: Vec<&'static str>,
    key_types: Vec<&'static str>,
    state: Mutex<State>,
}

struct State {
    /// The batches still to read; None once they ended (or the scan was stopped).
    batches: Option<Box<dyn Iterator<Item = Batch> + Send>>,
    /// Parts of converted batches still to emit, at most a vector each.
    pending: Vec<RecordBatch>,
    /// The tombstones' keys, appended to their TEMP table after the scan.
    dead: Vec<RecordBatch>,
    /// How many live rows were emitted.
    rows: u64,
}

fn sources() -> &'static Mutex<HashMap<u64, Arc<Source>>> {
    static MAP: OnceLock<Mutex<HashMap<u64, Arc<Source>>>> = OnceLock::new();
    MAP.get_or_init(|| Mutex::new(HashMap::new()))
}

static NEXT: AtomicU64 = AtomicU64::new(1);

/// A source registered for one scan; unregistered (and its batches dropped, which stops the
/// reading thread if they did not end) when dropped.
pub(crate) struct Registered {
    pub(crate) id: u64,
    pub(crate) source: Arc<Source>,
}

impl Registered {
    pub(crate) fn new(
        row_types: Vec<&'static str>,
        key_types: Vec<&'static str>,
        batches: Box<dyn Iterator<Item = Batch> + Send>,
    ) -> Registered {
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        let source = Arc::new(Source {
            row_types,
            key_types,
            state: Mutex::new(State {
                batches: Some(batches),
                pending: Vec::new(),
                dead: Vec::new(),
                rows: 0,
            }),
        });
        if let Ok(mut map) = sources().lock() {
            map.insert(id, source.clone());
        }
        Registered { id, source }
    }

    /// The tombstones' keys the scan set aside, and how many live rows it emitted.
    pub(crate) fn finish(&self) -> (Vec<RecordBatch>, u64) {
        match self.source.state.lock() {
            Ok(mut s) => {
                s.batches = None;
                (std::mem::take(&mut s.dead), s.rows)
            }
            Err(_) => (Vec::new(), 0),
        }
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        if let Ok(mut map) = sources().lock() {
            map.remove(&self.id);
        }
        if let Ok(mut s) = self.source.state.lock() {
            s.batches = None;
            s.pending.clear();
        }
    }
}

fn logical(staging_type: &str) -> LogicalTypeHandle {
    match staging_type {
        "BIGINT" => LogicalTypeId::Bigint,
        "DOUBLE" => LogicalTypeId::Double,
        "BOOLEAN" => LogicalTypeId::Boolean,
        "DATE" => LogicalTypeId::Date,
        "TIMESTAMPTZ" => LogicalTypeId::TimestampTZ,
        _ => LogicalTypeId::Varchar,
    }
    .into()
}

/// The table function.
pub(crate) struct Batches;

impl VTab for Batches {
    type BindData = Arc<Source>;
    type InitData = ();

    fn bind(bind: &BindInfo) -> Result<Arc<Source>, Box<dyn Error>> {
        let id = bind.get_parameter(0).to_int64() as u64;
        let source = sources()
            .lock()
            .map_err(|_| "the staging sources were poisoned")?
            .get(&id)
            .cloned()
            .ok_or("no such staging source")?;
        if source.row_types.is_empty() {
            bind.add_result_column("c_none", LogicalTypeId::Varchar.into());
        }
        for (i, t) in source.row_types.iter().enumerate() {
            bind.add_result_column(&format!("c{i}"), logical(t));
        }
        Ok(source)
    }

    fn init(init: &InitInfo) -> Result<(), Box<dyn Error>> {
        // DuckDB runs it on at most its own threads
        init.set_max_threads(64);
        Ok(())
    }

    fn func(
        func: &TableFunctionInfo<Self>,
        output: &mut DataChunkHandle,
    ) -> Result<(), Box<dyn Error>> {
        let source = func.get_bind_data();
        loop {
            let batch = {
                let mut s = source
                    .state
                    .lock()
                    .map_err(|_| "a staging source was poisoned")?;
                if let Some(part) = s.pending.pop() {
                    drop(s);
                    record_batch_to_duckdb_data_chunk(&part, output)?;
                    return Ok(());
                }
                match s.batches.as_mut().and_then(Iterator::next) {
                    Some(b) => b,
                    None => {
                        s.batches = None;
                        output.set_len(0);
                        return Ok(());
                    }
                }
            };
            // converted outside the lock, on this thread, as stage_batch converts it
            let mut live = Columns::new(&source.row_types, batch.len());
            let mut dead = Columns::new(&source.key_types, 0);
            for row in batch.rows() {
                if row.tombstone {
                    dead.push(&row);
                } else {
                    live.push(&row);
                }
            }
            let dead = if dead.len() > 0 {
                Some(dead.finish()?)
            } else {
                None
            };
            let n = live.len();
            let live = if n > 0 { Some(live.finish()?) } else { None };
            let mut first = None;
            {
                let mut s = source
                    .state
                    .lock()
                    .map_err(|_| "a staging source was poisoned")?;
                s.dead.extend(dead);
                s.rows += n as u64;
                if let Some(rb) = live {
                    let mut at = 0;
                    while at < n {
                        let len = VECTOR.min(n - at);
                        let part = rb.slice(at, len);
                        if first.is_none() {
                            first = Some(part);
                        } else {
                            s.pending.push(part);
                        }
                        at += len;
                    }
                }
            }
            if let Some(part) = first {
                record_batch_to_duckdb_data_chunk(&part, output)?;
                return Ok(());
            }
        }
    }

    fn parameters() -> Option<Vec<LogicalTypeHandle>> {
        Some(vec![LogicalTypeId::Bigint.into()])
    }
}
