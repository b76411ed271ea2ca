//! CSV in two threads, the input read once. A second thread hashes each chunk of the input
//! and splits it into records, in place; the chunk itself goes to the calling thread with the
//! records' places in it (field ends as `u32`), not copied (only a record that spans two
//! chunks, or that has quotes, is copied), and the calling thread checks the records (and
//! calls the row callback, which need not be `Send`) and hands the chunk back for reuse.

use std::io::{self, Read};
use std::sync::mpsc::{self, Receiver, Sender};

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use dogana::LogicalType;
use sha2::{Digest, Sha256};

use crate::cell::{parse_typed_in, Typed};

use crate::checker::Checker;
use crate::csv_fast::{Split, Splitter};
use crate::csv_rows::{bound_columns, header_name, Body, EMPTY_FILE};
use crate::error::RowsError;
use crate::hash::hex;
use crate::{Options, RowCallback};

/// Chunks in flight between the threads.
const AHEAD: usize = 4;
/// The size of a chunk: small enough that a chunk is still in cache when it is checked.
const CHUNK: usize = 512 << 10;

/// A chunk of input (`bytes[..len]`; the buffer keeps its full size, so it is never cleared),
/// and whether the input ends with it.
struct Chunk {
    bytes: Vec<u8>,
    len: usize,
    last: bool,
}

impl Chunk {
    /// Fills a chunk from `input`, reusing `bytes`.
    fn fill<R: Read>(input: &mut R, mut bytes: Vec<u8>) -> io::Result<Chunk> {
        if bytes.len() != CHUNK {
            bytes.resize(CHUNK, 0);
        }
        let mut len = 0;
        let mut last = false;
        while len < CHUNK {
            match input.read(&mut bytes[len..]) {
                Ok(0) => {
                    last = true;
                    break;
                }
                Ok(n) => len += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(Chunk { bytes, len, last })
    }

    fn data(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

type Done = io::Result<(Chunk, Split)>;

/// The bound columns' values, parsed in the second thread so that the calling thread only
/// checks them.
struct Ahead {
    types: HashMap<String, LogicalType>,
    /// the header's width and its bound columns, once the header is read
    layout: Option<(usize, Vec<(usize, LogicalType)>)>,
    ranges: Vec<(usize, usize)>,
}

impl Ahead {
    /// Parses the bound columns of every record of `records` that has the header's width
    /// (only reads the header when not `values`); the first record is the header.
    fn parse(&mut self, data: &[u8], records: &mut Split, values: bool) {
        if self.layout.is_some() && !values {
            return;
        }
        let mut typed = std::mem::take(&mut records.typed);
        for k in 0..records.recs.len() {
            let r = records.recs[k];
            let rec = records.record(data, &r, &mut self.ranges);
            let Some((width, bound)) = &self.layout else {
                let columns: Vec<String> = self
                    .ranges
                    .iter()
                    .map(|&(a, b)| header_name(&rec[a..b]))
                    .collect();
                let types = &self.types;
                let bound = bound_columns(&columns, |c| types.get(c).copied());
                self.layout = Some((columns.len(), bound));
                continue;
            };
            if !values {
                break;
            }
            if self.ranges.len() != *width {
                continue;
            }
            let at = typed.len();
            for &(i, ty) in bound {
                let (a, b) = self.ranges[i];
                typed.push(parse_typed_in(rec, a, b, ty).unwrap_or(Typed::Bad));
            }
            records.recs[k].typed_at = at;
        }
        records.typed = typed;
    }
}

/// The second thread's work on one chunk: hash it, split it, parse its bound values, send it
/// on. False when it was the last or the calling thread stopped.
fn process(
    chunk: Chunk,
    hasher: &mut Sha256,
    split: &mut Splitter,
    ahead: &mut Ahead,
    out: &Sender<Done>,
    free: &Receiver<Split>,
    queued: &AtomicUsize,
) -> bool {
    hasher.update(chunk.data());
    let mut records = free.try_recv().unwrap_or_default();
    records.clear();
    split.feed(chunk.data(), chunk.last, &mut records);
    // the calling thread has records waiting: it is the slower, so take over some of its work
    let behind = queued.load(Ordering::Relaxed) > 0;
    ahead.parse(chunk.data(), &mut records, behind);
    queued.fetch_add(1, Ordering::Relaxed);
    let last = chunk.last;
    // the calling thread may have stopped (a callback error): nothing more to do then
    out.send(Ok((chunk, records))).is_ok() && !last
}

/// The second thread, fed chunks by the calling thread (the reader need not be `Send`);
/// returns the hash.
fn split_sent(
    chunks: Receiver<Chunk>,
    out: Sender<Done>,
    free: Receiver<Split>,
    delimiter: u8,
    types: HashMap<String, LogicalType>,
    queued: &AtomicUsize,
) -> String {
    let (mut hasher, mut split) = (Sha256::new(), Splitter::new(delimiter));
    let mut ahead = Ahead {
        types,
        layout: None,
        ranges: Vec::new(),
    };
    for chunk in chunks {
        if !process(
            chunk,
            &mut hasher,
            &mut split,
            &mut ahead,
            &out,
            &free,
            queued,
        ) {
            break;
        }
    }
    hex(&hasher.finalize())
}

/// Reads a CSV delivery with a second thread; returns the columns, the byte count and the
/// hash.
pub(crate) fn run<R: Read>(
    mut input: R,
    checker: &mut Checker,
    options: &Options,
    column_types: &[(String, String)],
    on_row: &mut RowCallback<'_>,
) -> Result<(Vec<String>, u64, String), RowsError> {
    // chunks split and not yet taken by the calling thread
    let queued = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let (out_tx, out_rx) = mpsc::channel::<Done>();
        let (free_tx, free_rx) = mpsc::channel::<Split>();
        let delimiter = options.delimiter;
        let (chunk_tx, chunk_rx) = mpsc::channel::<Chunk>();
        let types = checker.spec.bound_types();
        let q = &queued;
        let split = scope.spawn(move || split_sent(chunk_rx, out_tx, free_rx, delimiter, types, q));
        let mut pool: Vec<Vec<u8>> = Vec::new();
        let (mut in_flight, mut bytes, mut ended) = (0usize, 0u64, false);
        let mut body: Option<Body> = None;
        let mut ranges: Vec<(usize, usize)> = Vec::new();
        loop {
            while in_flight < AHEAD && !ended {
                let chunk = Chunk::fill(&mut input, pool.pop().unwrap_or_default())?;
                ended = chunk.last;
                if chunk_tx.send(chunk).is_err() {
                    break;
                }
                in_flight += 1;
            }
            if in_flight == 0 {
                break;
            }
            let Ok(done) = out_rx.recv() else {
                break; // the splitter stopped
            };
            queued.fetch_sub(1, Ordering::Relaxed);
            let (chunk, records) = done?;
            in_flight -= 1;
            bytes += chunk.len as u64;
            let data = chunk.data();
            for r in &records.recs {
                let rec = records.record(data, r, &mut ranges);
                let width = body.as_ref().map_or(0, Body::bound_len);
                let pre = records
                    .typed
                    .get(r.typed_at..r.typed_at.saturating_add(width));
                match &mut body {
                    Some(body) => {
                        body.record(checker, on_row, r.line, rec, &ranges, r.ascii, pre)?
                    }
                    None => body = Some(Body::new(checker, column_types, rec, &ranges)?),
                }
            }
            let last = chunk.last;
            pool.push(chunk.bytes);
            let _ = free_tx.send(records);
            if last {
                break;
            }
        }
        drop(chunk_tx); // the second thread finishes
        let sha = split
            .join()
            .map_err(|_| RowsError::Io(io::Error::other("the splitting thread panicked")))?;
        let columns = match body {
            Some(b) => b.columns,
            None => {
                checker.file_problem(EMPTY_FILE.into());
                Vec::new()
            }
        };
        Ok((columns, bytes, sha))
    })
}
