//! CSV in two threads, the input read once. The calling thread reads each chunk and splits it
//! into records in place (`csv_fast::Splitter`: the records' places in the chunk, field ends
//! as `u32`; only a record that spans two chunks, or that has quotes, is copied), then sends
//! the chunk and its records to the second thread, which hashes the chunk (SHA-256 must see
//! the bytes in order, on one core) and, when the calling thread has chunks waiting, parses
//! their bound values ahead. The chunk comes back to the calling thread, which checks the
//! records (and calls the row callback, which need not be `Send`) and reuses the buffers.
//!
//! Hashing is about 0.6 s of CPU for 700 MB and the rest (reading, splitting, parsing,
//! checking) about as much again: splitting in the calling thread and moving the parsing to
//! whichever thread is idle keeps both cores busy to the end.

use std::io::{self, Read};
use std::sync::mpsc::{self, Receiver, Sender};

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use dogana::LogicalType;
use sha2::{Digest, Sha256};

use crate::cell::{parse_fast, Typed};

use crate::checker::Checker;
use crate::csv_fast::{Rec, Split, Splitter};
use crate::csv_rows::{unterminated, Body, CleanLayout, Header};
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

/// A chunk and its records, between the threads.
type Done = (Chunk, Split);

/// The header's width and its bound columns (column, type), in the order of the record's
/// bound values; set by the calling thread once it has read the header.
type Bound = (usize, Vec<(usize, LogicalType)>);

/// Parses the bound values of every record of `records` that has the header's width, so that
/// the calling thread only checks them.
fn parse_ahead(data: &[u8], records: &mut Split, (width, bound): &Bound) {
    let mut typed = std::mem::take(&mut records.typed);
    for k in 0..records.recs.len() {
        let r = records.recs[k];
        if r.fields != *width {
            continue;
        }
        records.recs[k].typed_at = typed.len();
        parse_bound(records, data, &r, bound, &mut typed);
    }
    records.typed = typed;
}

/// Appends the bound values of record `r` (which has the header's width) to `out`.
#[inline]
pub(crate) fn parse_bound(
    records: &Split,
    data: &[u8],
    r: &Rec,
    bound: &[(usize, LogicalType)],
    out: &mut Vec<Typed>,
) {
    let rec = records.bytes(data, r);
    for &(i, ty) in bound {
        let (a, b) = records.field(r, i);
        out.push(parse_fast(rec, a, b, ty));
    }
}

/// What the two threads share.
struct Shared {
    bound: OnceLock<Bound>,
    /// chunks the second thread sent back and the calling thread has not yet checked
    queued: AtomicUsize,
}

/// The second thread: hashes every chunk, in order, and parses the bound values ahead while
/// the calling thread has chunks waiting; returns the hash.
fn second(chunks: Receiver<Done>, out: Sender<Done>, shared: &Shared) -> String {
    let mut hasher = Sha256::new();
    for (chunk, mut records) in chunks {
        hasher.update(chunk.data());
        // the calling thread is the slower: take over the parsing
        if shared.queued.load(Ordering::Relaxed) > 0 {
            if let Some(bound) = shared.bound.get() {
                parse_ahead(chunk.data(), &mut records, bound);
            }
        }
        shared.queued.fetch_add(1, Ordering::Relaxed);
        let last = chunk.last;
        // the calling thread may have stopped (a callback error): nothing more to do then
        if out.send((chunk, records)).is_err() || last {
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
    rows_wanted: bool,
) -> Result<(Vec<String>, u64, String), RowsError> {
    let shared = Shared {
        bound: OnceLock::new(),
        queued: AtomicUsize::new(0),
    };
    let mut splitter = Splitter::new(options.delimiter);
    std::thread::scope(|scope| {
        let (out_tx, out_rx) = mpsc::channel::<Done>();
        let (chunk_tx, chunk_rx) = mpsc::channel::<Done>();
        let shared = &shared;
        let second = scope.spawn(move || second(chunk_rx, out_tx, shared));
        let mut pool: Vec<(Vec<u8>, Split)> = Vec::new();
        let (mut in_flight, mut bytes, mut ended) = (0usize, 0u64, false);
        let mut body: Option<Body> = None;
        // the header's problem, when it has one (the file is then read to its end unchecked)
        let mut bad_header: Option<Header> = None;
        let mut clean: Option<CleanLayout> = None;
        let mut values: Vec<Typed> = Vec::new();
        let mut ranges: Vec<(usize, usize)> = Vec::new();
        loop {
            while in_flight < AHEAD && !ended {
                let (buffer, mut records) = pool.pop().unwrap_or_default();
                let chunk = Chunk::fill(&mut input, buffer)?;
                records.clear();
                splitter.feed(chunk.data(), chunk.last, &mut records);
                ended = chunk.last;
                if chunk_tx.send((chunk, records)).is_err() {
                    break;
                }
                in_flight += 1;
            }
            if in_flight == 0 {
                break;
            }
            let Ok((chunk, records)) = out_rx.recv() else {
                break; // the second thread stopped
            };
            shared.queued.fetch_sub(1, Ordering::Relaxed);
            in_flight -= 1;
            bytes += chunk.len as u64;
            let data = chunk.data();
            let cut = match records.unterminated {
                Some(opened) => Some((records.recs.len() - 1, opened)),
                None => None,
            };
            for (k, r) in records.recs.iter().enumerate() {
                if bad_header.is_some() {
                    break;
                }
                if let Some((_, opened)) = cut.filter(|&(at, _)| at == k) {
                    match body {
                        None => bad_header = Some(Header::Unterminated(opened)),
                        Some(_) => checker.unreadable(r.line, || unterminated(opened)),
                    }
                    continue;
                }
                let Some(body) = &mut body else {
                    let rec = records.record(data, r, &mut ranges);
                    let b = Body::new(checker, column_types, rec, &ranges)?;
                    clean = if rows_wanted { None } else { b.clean_layout() };
                    let _ = shared.bound.set((b.columns.len(), b.bound().to_vec()));
                    body = Some(b);
                    continue;
                };
                let width = body.bound_len();
                let mut pre = records
                    .typed
                    .get(r.typed_at..r.typed_at.saturating_add(width));
                if let (Some(clean), true) = (&clean, r.ascii) {
                    if let Some(values) = pre {
                        if clean.check(checker, r.line, values) {
                            continue;
                        }
                    } else if r.fields == body.columns.len() {
                        // not parsed ahead: parse the bound values here
                        values.clear();
                        parse_bound(&records, data, r, body.bound(), &mut values);
                        if clean.check(checker, r.line, &values) {
                            continue;
                        }
                        pre = Some(&values);
                    }
                }
                let rec = records.record(data, r, &mut ranges);
                body.record(checker, on_row, r.line, rec, &ranges, r.ascii, pre)?;
            }
            let last = chunk.last;
            pool.push((chunk.bytes, records));
            if last {
                break;
            }
        }
        drop(chunk_tx); // the second thread finishes
        let sha = second
            .join()
            .map_err(|_| RowsError::Io(io::Error::other("the hashing thread panicked")))?;
        let columns = match body {
            Some(b) => b.columns,
            None => {
                bad_header
                    .unwrap_or(Header::None)
                    .report(checker, splitter.too_long());
                Vec::new()
            }
        };
        Ok((columns, bytes, sha))
    })
}
