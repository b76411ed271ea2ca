//! CSV in two threads: the calling thread reads the input and checks the records (and calls
//! the row callback, which need not be `Send`); a second thread hashes the bytes and splits
//! them into records, handed back in batches. The input is read once.

use std::cell::RefCell;
use std::io::{self, Read};
use std::rc::Rc;
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};

use sha2::{Digest, Sha256};

use crate::checker::Checker;
use crate::csv_fast::Records;
use crate::csv_rows::{Body, EMPTY_FILE};
use crate::error::RowsError;
use crate::hash::{hex, BUFFER_SIZE};
use crate::{Options, RowCallback};

/// Chunks the calling thread keeps in flight ahead of the splitter.
const AHEAD: usize = 4;
/// A batch is sent when it has this many records or this many bytes.
const BATCH_RECORDS: usize = 4096;
const BATCH_BYTES: usize = 256 << 10;

/// One record of a batch: its bytes and fields in the batch's buffers.
#[derive(Debug, Clone, Copy)]
struct Rec {
    at: usize,
    len: usize,
    first: usize,
    fields: usize,
    line: u64,
    ascii: bool,
}

/// Records split by the second thread.
#[derive(Debug, Default)]
struct Batch {
    data: Vec<u8>,
    ranges: Vec<(usize, usize)>,
    recs: Vec<Rec>,
}

impl Batch {
    fn clear(&mut self) {
        self.data.clear();
        self.ranges.clear();
        self.recs.clear();
    }
}

enum Msg {
    /// The splitter took a chunk: the reader may send another.
    Consumed,
    Batch(Batch),
}

/// The splitter's batch being filled, and where it goes.
struct Outbox {
    batch: Batch,
    out: Sender<Msg>,
    free: Receiver<Batch>,
}

impl Outbox {
    fn flush(&mut self) {
        if self.batch.recs.is_empty() {
            return;
        }
        let mut next = self.free.try_recv().unwrap_or_default();
        next.clear();
        let full = std::mem::replace(&mut self.batch, next);
        // the reader may have stopped (a callback error): nothing more to do then
        let _ = self.out.send(Msg::Batch(full));
    }
}

/// The splitter's input: chunks from the reading thread, hashed as they are taken.
struct ChunkInput {
    chunks: Receiver<Vec<u8>>,
    recycle: Sender<Vec<u8>>,
    outbox: Rc<RefCell<Outbox>>,
    hasher: Sha256,
    current: Vec<u8>,
    pos: usize,
}

impl Read for ChunkInput {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pos == self.current.len() {
            let next = match self.chunks.try_recv() {
                Ok(c) => c,
                Err(TryRecvError::Empty) => {
                    // about to wait: hand over the records split so far, or both threads wait
                    self.outbox.borrow_mut().flush();
                    match self.chunks.recv() {
                        Ok(c) => c,
                        Err(_) => return Ok(0),
                    }
                }
                Err(TryRecvError::Disconnected) => return Ok(0),
            };
            self.hasher.update(&next);
            let _ = self.outbox.borrow().out.send(Msg::Consumed);
            let used = std::mem::replace(&mut self.current, next);
            if used.capacity() > 0 {
                let _ = self.recycle.send(used);
            }
            self.pos = 0;
        }
        let n = buf.len().min(self.current.len() - self.pos);
        buf[..n].copy_from_slice(&self.current[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// The second thread: splits the chunks into records and hashes them; returns the hash.
fn splitter(
    chunks: Receiver<Vec<u8>>,
    recycle: Sender<Vec<u8>>,
    out: Sender<Msg>,
    free: Receiver<Batch>,
    delimiter: u8,
) -> String {
    let outbox = Rc::new(RefCell::new(Outbox {
        batch: Batch::default(),
        out,
        free,
    }));
    let input = ChunkInput {
        chunks,
        recycle,
        outbox: outbox.clone(),
        hasher: Sha256::new(),
        current: Vec::new(),
        pos: 0,
    };
    let mut records = Records::new(input, delimiter);
    // ChunkInput never fails: it ends when the reader hangs up
    while let Ok(true) = records.next_record() {
        let mut o = outbox.borrow_mut();
        let (data, ranges) = records.parts();
        let b = &mut o.batch;
        b.recs.push(Rec {
            at: b.data.len(),
            len: data.len(),
            first: b.ranges.len(),
            fields: ranges.len(),
            line: records.line(),
            ascii: records.is_ascii(),
        });
        b.data.extend_from_slice(data);
        b.ranges.extend_from_slice(ranges);
        if b.recs.len() >= BATCH_RECORDS || b.data.len() >= BATCH_BYTES {
            o.flush();
        }
    }
    outbox.borrow_mut().flush();
    hex(&records.into_inner().hasher.finalize())
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
    std::thread::scope(|scope| {
        let (chunk_tx, chunk_rx) = mpsc::channel::<Vec<u8>>();
        let (recycle_tx, recycle_rx) = mpsc::channel::<Vec<u8>>();
        let (msg_tx, msg_rx) = mpsc::channel::<Msg>();
        let (free_tx, free_rx) = mpsc::channel::<Batch>();
        let delimiter = options.delimiter;
        let split = scope.spawn(move || splitter(chunk_rx, recycle_tx, msg_tx, free_rx, delimiter));
        let mut chunk_tx = Some(chunk_tx);
        let (mut in_flight, mut bytes) = (0usize, 0u64);
        let mut body: Option<Body> = None;
        loop {
            while in_flight < AHEAD {
                let Some(tx) = &chunk_tx else { break };
                let mut buf = recycle_rx.try_recv().unwrap_or_default();
                buf.clear();
                buf.resize(BUFFER_SIZE, 0);
                let mut filled = 0;
                while filled < buf.len() {
                    match input.read(&mut buf[filled..]) {
                        Ok(0) => break,
                        Ok(n) => filled += n,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(RowsError::Io(e)),
                    }
                }
                if filled == 0 {
                    chunk_tx = None; // the end: the splitter finishes and hangs up
                    break;
                }
                buf.truncate(filled);
                bytes += filled as u64;
                if tx.send(buf).is_err() {
                    break;
                }
                in_flight += 1;
            }
            let batch = match msg_rx.recv() {
                Ok(Msg::Consumed) => {
                    in_flight -= 1;
                    continue;
                }
                Ok(Msg::Batch(b)) => b,
                Err(_) => break, // the splitter is done
            };
            for r in &batch.recs {
                let data = &batch.data[r.at..r.at + r.len];
                let ranges = &batch.ranges[r.first..r.first + r.fields];
                match &mut body {
                    Some(body) => body.record(checker, on_row, r.line, data, ranges, r.ascii)?,
                    None => body = Some(Body::new(checker, column_types, data, ranges)?),
                }
            }
            let _ = free_tx.send(batch);
        }
        drop(chunk_tx);
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
