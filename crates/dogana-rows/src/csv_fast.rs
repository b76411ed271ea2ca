//! CSV records, read with a fast path for the common line and `csv-core` for the rest.
//!
//! A line with no quote and no bare carriage return is split on the delimiter where it lies in
//! the read buffer, found with SIMD `memchr`; its fields are exactly what `csv-core` (the parser
//! the `csv` crate runs) would give for it. Any record that has a quote or a bare `\r` before
//! its end is handed to `csv-core`, which keeps its state between records, so quoting, escaped
//! quotes and fields spanning lines read as the `csv` crate reads them. Empty lines are skipped
//! and one UTF-8 byte order mark at the start is dropped, as the `csv` crate does.

use std::io::{self, Read};

use csv_core::{ReadRecordResult, Reader as CoreReader, ReaderBuilder};
use memchr::{memchr, memchr3, memchr_iter};

use crate::cell::Typed;
use crate::hash::BUFFER_SIZE;

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// Lines up to this long are split into a preallocated table of ranges.
const SHORT_LINE: usize = 4096;

/// The longest header a file may have, in bytes: its columns' names (each at most
/// [`dogana::NAME_MAX`] bytes) and delimiters. A first line longer than this is no header,
/// and is never held whole (TRUST-07: what a sender controls is bounded).
pub(crate) const MAX_HEADER: usize = 1 << 20;

/// Where a record is, as `csv-core` reads it, for telling whether a record that the end of
/// the input finished was inside a quoted field: a file that ends inside quotes is
/// truncated, or has a quote never closed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Quoting {
    /// Before the record's first byte (empty lines are skipped).
    #[default]
    Record,
    /// At the start of a field.
    Field,
    /// Inside an unquoted field (a quote there is a plain byte).
    Plain,
    /// Inside a quoted field.
    Quoted,
    /// Right after a quote inside a quoted field: a second quote is a quote, anything else
    /// ends the quoting.
    AfterQuote,
}

/// The state of one record's quoting over its bytes, and the line its open quote is on.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct QuoteTracker {
    state: Quoting,
    /// line feeds seen since the record began
    lines: u64,
    /// line feeds before the quote of the quoted field the record is in
    opened: u64,
}

impl QuoteTracker {
    /// Follows `bytes`, the next bytes of the record, as `csv-core` (the `csv` crate's
    /// defaults: `"` quotes, a doubled quote escapes, CR and LF end records) reads them.
    pub(crate) fn feed(&mut self, bytes: &[u8], delimiter: u8) {
        // inside quotes only a quote matters, inside a plain field only its end: both are
        // skipped to with memchr, so quoted records cost little more than csv-core's read
        let mut i = 0;
        while i < bytes.len() {
            let rest = &bytes[i..];
            match self.state {
                Quoting::Quoted => match memchr(b'"', rest) {
                    Some(p) => {
                        self.lines += memchr_iter(b'\n', &rest[..p]).count() as u64;
                        self.state = Quoting::AfterQuote;
                        i += p + 1;
                    }
                    None => {
                        self.lines += memchr_iter(b'\n', rest).count() as u64;
                        return;
                    }
                },
                Quoting::Plain => match memchr3(delimiter, b'\n', b'\r', rest) {
                    Some(p) => {
                        self.step(rest[p], delimiter);
                        i += p + 1;
                    }
                    None => return,
                },
                _ => {
                    self.step(rest[0], delimiter);
                    i += 1;
                }
            }
        }
    }

    /// One byte's transition.
    #[inline]
    fn step(&mut self, b: u8, delimiter: u8) {
        use Quoting::*;
        let end = b == b'\n' || b == b'\r';
        self.state = match self.state {
            Record | Field if b == b'"' => {
                self.opened = self.lines;
                Quoted
            }
            Record if end => Record,
            Field | Plain | AfterQuote if end => Record,
            Record | Field | Plain | AfterQuote if b == delimiter => Field,
            Quoted if b == b'"' => AfterQuote,
            AfterQuote if b == b'"' => Quoted,
            Quoted => Quoted,
            _ => Plain,
        };
        self.lines += u64::from(b == b'\n');
    }

    /// When the bytes followed end inside a quoted field: how many lines after the record's
    /// first the quote was opened on.
    pub(crate) fn open_quote(&self) -> Option<u64> {
        (self.state == Quoting::Quoted).then_some(self.opened)
    }
}

/// Splits a line without quotes or CRs at `delimiter`, eight bytes at a time, into `ranges`
/// (at least `line.len() + 1` long: a line has at most that many fields); returns the number
/// of fields and whether the line is ASCII (and so valid UTF-8). Writing by index, not by
/// `push`, keeps the loop free of a grow path that would spill its registers.
#[inline(never)]
fn split(line: &[u8], delimiter: u8, ranges: &mut [(usize, usize)]) -> (usize, bool) {
    let (mut k, mut start, mut high) = (0, 0, 0u64);
    let pattern = LO * u64::from(delimiter);
    let mut base = 0;
    while base + 8 <= line.len() {
        let w = u64::from_le_bytes(line[base..base + 8].try_into().expect("8 bytes"));
        high |= w;
        let x = w ^ pattern;
        let mut m = !(((x & !HI).wrapping_add(!HI)) | x) & HI;
        while m != 0 {
            let d = base + (m.trailing_zeros() / 8) as usize;
            ranges[k] = (start, d);
            k += 1;
            start = d + 1;
            m &= m - 1;
        }
        base += 8;
    }
    for (j, &b) in line[base..].iter().enumerate() {
        high |= u64::from(b);
        if b == delimiter {
            ranges[k] = (start, base + j);
            k += 1;
            start = base + j + 1;
        }
    }
    ranges[k] = (start, line.len());
    (k + 1, high & HI == 0)
}

/// [`split`] for a long line, growing `ranges` as needed.
fn split_long(line: &[u8], delimiter: u8, ranges: &mut Vec<(usize, usize)>) -> (usize, bool) {
    let mut k = 0;
    let mut start = 0;
    for d in memchr_iter(delimiter, line) {
        if k == ranges.len() {
            ranges.push((0, 0));
        }
        ranges[k] = (start, d);
        k += 1;
        start = d + 1;
    }
    if k == ranges.len() {
        ranges.push((0, 0));
    }
    ranges[k] = (start, line.len());
    (k + 1, line.is_ascii())
}

/// Reads CSV records from `input`.
pub(crate) struct Records<R> {
    input: R,
    /// From [`FIRST_BUFFER`] bytes, doubled while reads fill it, up to [`FULL_BUFFER`] (and
    /// beyond only for one record longer than that).
    buf: Vec<u8>,
    /// Whether the last read filled the buffer's free space (more input is likely).
    filled: bool,
    pos: usize,
    end: usize,
    eof: bool,
    started: bool,
    delimiter: u8,
    /// csv-core's reader, built at the first record that needs it (building its DFA costs a
    /// file of a few plain rows more than reading them)
    core: Option<CoreReader>,
    slow: Vec<u8>,
    slow_ends: Vec<usize>,
    /// whether the current record's fields are in `slow`
    in_slow: bool,
    /// where the current record's bytes start in `buf` (fast path)
    rec_at: usize,
    rec_len: usize,
    /// the current record's fields are `ranges[..fields]`
    ranges: Vec<(usize, usize)>,
    fields: usize,
    /// whether the current record is known to be ASCII
    ascii: bool,
    line: u64,
    next_line: u64,
    /// records returned so far
    returned: u64,
    /// the first record is longer than [`MAX_HEADER`]: reading stopped
    too_long: bool,
    /// the current record was finished by the end of the input inside the quoted field
    /// opened on this line
    unterminated: Option<u64>,
}

/// The reading buffer of [`Records`] at first: a small file is read without zeroing the
/// full buffer (issue 16: a delivery of a few rows).
const FIRST_BUFFER: usize = 64 << 10;

/// The reading buffer of [`Records`] once reads fill it.
const FULL_BUFFER: usize = 2 * BUFFER_SIZE;

impl<R: Read> Records<R> {
    pub(crate) fn new(input: R, delimiter: u8) -> Records<R> {
        Records {
            input,
            buf: vec![0; FIRST_BUFFER],
            filled: false,
            pos: 0,
            end: 0,
            eof: false,
            started: false,
            delimiter,
            core: None,
            slow: vec![0; 1024],
            slow_ends: vec![0; 64],
            in_slow: false,
            rec_at: 0,
            rec_len: 0,
            ranges: vec![(0, 0); SHORT_LINE + 1],
            fields: 0,
            ascii: false,
            line: 0,
            next_line: 1,
            returned: 0,
            too_long: false,
            unterminated: None,
        }
    }

    /// Whether reading stopped at a first line longer than [`MAX_HEADER`] (then
    /// [`next_record`](Records::next_record) returned false, and the rest of the input is
    /// left unread).
    pub(crate) fn too_long(&self) -> bool {
        self.too_long
    }

    /// Whether the current record ends where the input ends, inside the quoted field opened
    /// on the line returned.
    pub(crate) fn unterminated(&self) -> Option<u64> {
        self.unterminated
    }

    /// Stops at an over-long first record.
    fn stop_too_long(&mut self) -> io::Result<bool> {
        self.too_long = true;
        Ok(false)
    }

    /// The input, for reading what is left after the last record.
    pub(crate) fn into_inner(self) -> R {
        self.input
    }

    /// Reads more input after the unconsumed bytes; false at the end of the input.
    fn refill(&mut self) -> io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
        }
        if self.end == self.buf.len() {
            // one record longer than the buffer
            self.buf.resize(self.buf.len() * 2, 0);
        } else if self.filled && self.buf.len() < FULL_BUFFER {
            // a large input: large reads
            self.buf.resize((self.buf.len() * 2).min(FULL_BUFFER), 0);
        }
        loop {
            let room = self.buf.len() - self.end;
            match self.input.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(false);
                }
                Ok(n) => {
                    self.end += n;
                    self.filled = n == room;
                    return Ok(true);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Reads the next record; false at the end of the input.
    pub(crate) fn next_record(&mut self) -> io::Result<bool> {
        if self.too_long {
            return Ok(false);
        }
        self.unterminated = None;
        let read = self.next_record_inner()?;
        self.returned += u64::from(read);
        Ok(read)
    }

    fn next_record_inner(&mut self) -> io::Result<bool> {
        if !self.started {
            self.started = true;
            while self.end < 3 && self.refill()? {}
            if self.buf[..self.end].starts_with(b"\xef\xbb\xbf") {
                self.pos = 3;
            }
        }
        loop {
            let rest = &self.buf[self.pos..self.end];
            let (len, next) = match memchr3(b'\n', b'\r', b'"', rest) {
                Some(p) if rest[p] == b'\n' => (p, p + 1),
                Some(p) if rest[p] == b'\r' && rest.get(p + 1) == Some(&b'\n') => (p, p + 2),
                Some(p) if rest[p] == b'\r' && p + 1 == rest.len() && !self.eof => {
                    // a CR at the end of the buffer: look at the next byte first
                    self.refill()?;
                    continue;
                }
                Some(_) => return self.slow_record(),
                None if !self.eof => {
                    let before = self.end - self.pos;
                    if self.returned == 0 && before > MAX_HEADER {
                        return self.stop_too_long();
                    }
                    if !self.refill()? && before == 0 {
                        return Ok(false);
                    }
                    continue;
                }
                None if rest.is_empty() => return Ok(false),
                None => (rest.len(), rest.len()),
            };
            let at = self.pos;
            self.pos += next;
            self.line = self.next_line;
            self.next_line += 1;
            if len == 0 {
                continue; // an empty line
            }
            if self.returned == 0 && len > MAX_HEADER {
                return self.stop_too_long();
            }
            self.in_slow = false;
            self.rec_at = at;
            self.rec_len = len;
            let line = &self.buf[at..at + len];
            (self.fields, self.ascii) = if len < SHORT_LINE {
                split(line, self.delimiter, &mut self.ranges)
            } else {
                split_long(line, self.delimiter, &mut self.ranges)
            };
            return Ok(true);
        }
    }

    /// Reads one record with `csv-core`.
    fn slow_record(&mut self) -> io::Result<bool> {
        let (mut nin_all, mut nout_all, mut nend_all) = (0, 0, 0);
        self.line = self.next_line;
        let mut quotes = QuoteTracker::default();
        let mut ended = false;
        if self.core.is_none() {
            self.core = Some(ReaderBuilder::new().delimiter(self.delimiter).build());
        }
        loop {
            let input = &self.buf[self.pos..self.end];
            let core = self.core.as_mut().expect("built above");
            let (res, nin, nout, nend) = core.read_record(
                input,
                &mut self.slow[nout_all..],
                &mut self.slow_ends[nend_all..],
            );
            quotes.feed(&input[..nin], self.delimiter);
            self.next_line += memchr_iter(b'\n', &input[..nin]).count() as u64;
            self.pos += nin;
            nin_all += nin;
            nout_all += nout;
            nend_all += nend;
            if self.returned == 0 && nin_all > MAX_HEADER {
                return self.stop_too_long();
            }
            match res {
                ReadRecordResult::InputEmpty => {
                    // at the end of the input, the next call passes no input: csv-core's
                    // signal to finish the record
                    ended = !self.refill()?;
                }
                ReadRecordResult::OutputFull => {
                    let n = self.slow.len() * 2;
                    self.slow.resize(n, 0);
                }
                ReadRecordResult::OutputEndsFull => {
                    let n = self.slow_ends.len() * 2;
                    self.slow_ends.resize(n, 0);
                }
                ReadRecordResult::Record => {
                    if ended {
                        self.unterminated = quotes.open_quote().map(|n| self.line + n);
                    }
                    self.in_slow = true;
                    self.ascii = false;
                    self.rec_len = nout_all;
                    if self.ranges.len() < nend_all {
                        self.ranges.resize(nend_all, (0, 0));
                    }
                    let mut start = 0;
                    for (k, &e) in self.slow_ends[..nend_all].iter().enumerate() {
                        self.ranges[k] = (start, e);
                        start = e;
                    }
                    self.fields = nend_all;
                    return Ok(true);
                }
                ReadRecordResult::End => return Ok(false),
            }
        }
    }

    /// The line the current record starts on.
    pub(crate) fn line(&self) -> u64 {
        self.line
    }

    /// Whether the current record is known to be ASCII, so valid UTF-8 (false: not checked).
    #[inline]
    pub(crate) fn is_ascii(&self) -> bool {
        self.ascii
    }

    /// The current record's bytes and the ranges of its fields in them.
    #[inline]
    pub(crate) fn parts(&self) -> (&[u8], &[(usize, usize)]) {
        let data = if self.in_slow {
            &self.slow[..self.rec_len]
        } else {
            &self.buf[self.rec_at..self.rec_at + self.rec_len]
        };
        (data, &self.ranges[..self.fields])
    }
}

/// One record found by a [`Splitter`]: its bytes and field ends in the [`Split`]'s buffers.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rec {
    /// where the record's bytes start: in the chunk, or in `side` when `side` is set
    pub(crate) at: usize,
    pub(crate) len: usize,
    /// its field ends are `ends[first..first + fields]` (`wide_ends` when `wide`)
    pub(crate) first: usize,
    pub(crate) fields: usize,
    pub(crate) line: u64,
    pub(crate) side: bool,
    pub(crate) ascii: bool,
    /// whether a delimiter sits between fields (a fast-path line) or not (csv-core's output)
    pub(crate) gap: bool,
    /// a record of 4 GiB or more: its ends are in `wide_ends`
    pub(crate) wide: bool,
    /// where its bound columns' values, parsed ahead, start in `typed` (`usize::MAX`: not
    /// parsed ahead)
    pub(crate) typed_at: usize,
}

/// The records a [`Splitter`] found in one chunk; the chunk itself travels beside it.
#[derive(Debug, Default)]
pub(crate) struct Split {
    /// bytes of the records that are not whole in the chunk: those that began in an earlier
    /// chunk, and those csv-core read (quotes, bare CRs)
    pub(crate) side: Vec<u8>,
    pub(crate) ends: Vec<u32>,
    pub(crate) wide_ends: Vec<usize>,
    pub(crate) recs: Vec<Rec>,
    /// bound columns' values parsed ahead (see [`Rec::typed_at`])
    pub(crate) typed: Vec<Typed>,
    /// the last record ends where the input ends, inside the quoted field opened on this line
    pub(crate) unterminated: Option<u64>,
}

impl Split {
    pub(crate) fn clear(&mut self) {
        self.side.clear();
        self.ends.clear();
        self.wide_ends.clear();
        self.recs.clear();
        self.typed.clear();
        self.unterminated = None;
    }

    /// The bytes of record `r`.
    #[inline]
    pub(crate) fn bytes<'a>(&'a self, chunk: &'a [u8], r: &Rec) -> &'a [u8] {
        let bytes = if r.side { &self.side[..] } else { chunk };
        &bytes[r.at..r.at + r.len]
    }

    /// The range of field `i` (below `r.fields`) in the bytes of record `r`.
    #[inline]
    pub(crate) fn field(&self, r: &Rec, i: usize) -> (usize, usize) {
        debug_assert!(i < r.fields);
        let end = |k: usize| match r.wide {
            true => self.wide_ends[r.first + k],
            false => self.ends[r.first + k] as usize,
        };
        let start = match i {
            0 => 0,
            _ => end(i - 1) + usize::from(r.gap),
        };
        (start, end(i))
    }

    /// The bytes of record `r` and the ranges of its fields, written into `ranges`.
    #[inline]
    pub(crate) fn record<'a>(
        &'a self,
        chunk: &'a [u8],
        r: &Rec,
        ranges: &mut Vec<(usize, usize)>,
    ) -> &'a [u8] {
        ranges.clear();
        let gap = usize::from(r.gap);
        let mut start = 0;
        if r.wide {
            for &e in &self.wide_ends[r.first..r.first + r.fields] {
                ranges.push((start, e));
                start = e + gap;
            }
        } else {
            for &e in &self.ends[r.first..r.first + r.fields] {
                let e = e as usize;
                ranges.push((start, e));
                start = e + gap;
            }
        }
        let bytes = if r.side { &self.side[..] } else { chunk };
        &bytes[r.at..r.at + r.len]
    }
}

/// Splits CSV input that arrives in chunks into records, in place: a record whole inside a
/// chunk is found where it lies (its field ends recorded, its bytes not copied); a record
/// spanning chunks, or one with a quote or a bare CR, is copied to the [`Split`]'s side
/// buffer. The records are exactly those of [`Records`] (and so of the `csv` crate).
pub(crate) struct Splitter {
    delimiter: u8,
    core: CoreReader,
    /// the unconsumed bytes of earlier chunks: the start of an unfinished record
    pending: Vec<u8>,
    started: bool,
    next_line: u64,
    slow: Vec<u8>,
    slow_ends: Vec<usize>,
    ranges: Vec<(usize, usize)>,
    /// whether a record was emitted yet (the first is the header)
    emitted: bool,
    /// the first record is longer than [`MAX_HEADER`]: splitting stopped
    too_long: bool,
    /// the record csv-core is reading, begun in an earlier chunk
    partial: Option<Partial>,
}

/// A record csv-core is still reading when its input ran out: what it wrote so far. csv-core
/// keeps its own state, so the record goes on with the next chunk's bytes and is never read
/// again from its start (which would take time quadratic in its length).
#[derive(Debug, Clone, Copy)]
struct Partial {
    nout: usize,
    nend: usize,
    lines: u64,
    /// input bytes it took so far
    read: usize,
    quotes: QuoteTracker,
}

impl Splitter {
    pub(crate) fn new(delimiter: u8) -> Splitter {
        Splitter {
            delimiter,
            core: ReaderBuilder::new().delimiter(delimiter).build(),
            pending: Vec::new(),
            started: false,
            next_line: 1,
            slow: vec![0; 1024],
            slow_ends: vec![0; 64],
            ranges: vec![(0, 0); SHORT_LINE + 1],
            emitted: false,
            too_long: false,
            partial: None,
        }
    }

    /// Whether splitting stopped at a first record longer than [`MAX_HEADER`]: every chunk
    /// fed since gave no record, and no more than that is held.
    pub(crate) fn too_long(&self) -> bool {
        self.too_long
    }

    /// [`feed_all`](Splitter::feed_all), stopping at an over-long first record.
    pub(crate) fn feed(&mut self, chunk: &[u8], last: bool, out: &mut Split) {
        if self.too_long {
            return;
        }
        self.feed_all(chunk, last, out);
        if self.emitted {
            return;
        }
        let first = out.recs.first().map(|r| r.len);
        let held = self.pending.len() + self.partial.map_or(0, |p| p.read);
        if first.unwrap_or(held) > MAX_HEADER {
            self.too_long = true;
            out.clear();
            self.pending = Vec::new();
            self.partial = None;
            self.core.reset();
        }
        self.emitted = first.is_some();
    }

    /// Splits the next chunk (`last`: the input ends with it) into `out`, whose records point
    /// into `chunk` or into `out.side`.
    fn feed_all(&mut self, chunk: &[u8], last: bool, out: &mut Split) {
        let mut start = 0;
        if !self.started {
            if self.pending.len() + chunk.len() < 3 && !last {
                self.pending.extend_from_slice(chunk);
                return;
            }
            self.started = true;
            let mut head = self.pending.clone();
            head.extend_from_slice(&chunk[..chunk.len().min(3)]);
            if head.starts_with(b"\xef\xbb\xbf") {
                let from_pending = self.pending.len().min(3);
                self.pending.drain(..from_pending);
                start = 3 - from_pending;
            }
        }
        if !self.pending.is_empty() {
            let mut pending = std::mem::take(&mut self.pending);
            loop {
                // the unfinished record goes on: take the next line of the chunk too
                let nl = memchr(b'\n', &chunk[start..]).map_or(chunk.len(), |p| start + p + 1);
                pending.extend_from_slice(&chunk[start..nl]);
                start = nl;
                let used = self.scan(&pending, 0, last && start == chunk.len(), true, out);
                pending.drain(..used);
                if pending.is_empty() || start == chunk.len() {
                    break;
                }
            }
            self.pending = pending;
            if !self.pending.is_empty() {
                return;
            }
        }
        let used = self.scan(chunk, start, last, false, out);
        self.pending.extend_from_slice(&chunk[used..]);
    }

    /// Emits the whole records of `buf` from `pos` on; returns where they end (the rest is an
    /// unfinished record, unless `last`). `side`: `buf` is not the chunk, so the records'
    /// bytes are copied to `out.side`.
    fn scan(
        &mut self,
        buf: &[u8],
        mut pos: usize,
        last: bool,
        side: bool,
        out: &mut Split,
    ) -> usize {
        // the block scan records field ends as u32 offsets into the chunk
        let blocks = !side && u32::try_from(buf.len()).is_ok() && plain_delimiter(self.delimiter);
        loop {
            if self.partial.is_some() {
                // a record begun earlier goes on
                pos += self.slow_record(&buf[pos..], last, out);
                if self.partial.is_some() {
                    return pos;
                }
                continue;
            }
            if blocks {
                pos = self.scan_blocks(buf, pos, out);
            }
            let rest = &buf[pos..];
            let (len, next) = match memchr3(b'\n', b'\r', b'"', rest) {
                Some(p) if rest[p] == b'\n' => (p, p + 1),
                Some(p) if rest[p] == b'\r' && rest.get(p + 1) == Some(&b'\n') => (p, p + 2),
                Some(p) if rest[p] == b'\r' && p + 1 == rest.len() && !last => return pos,
                Some(_) => {
                    pos += self.slow_record(rest, last, out);
                    if self.partial.is_some() {
                        return pos;
                    }
                    continue;
                }
                None if !last || rest.is_empty() => return pos,
                None => (rest.len(), rest.len()),
            };
            let line = self.next_line;
            self.next_line += 1;
            let at = pos;
            pos += next;
            if len == 0 {
                continue; // an empty line
            }
            let bytes = &buf[at..at + len];
            let (fields, ascii) = if len < SHORT_LINE {
                split(bytes, self.delimiter, &mut self.ranges)
            } else {
                split_long(bytes, self.delimiter, &mut self.ranges)
            };
            let at = if side {
                let a = out.side.len();
                out.side.extend_from_slice(bytes);
                a
            } else {
                at
            };
            push_rec(out, at, len, fields, line, side, ascii, true, &self.ranges);
        }
    }

    /// Emits the records of `buf` from `pos` on that lie in whole 64-byte blocks without a
    /// quote or a bare CR, found from the blocks' masks (see [`Masks`]); returns where it
    /// stopped, at the start of a line: at a block with a quote or a bare CR, or less than a
    /// block before the end. The lines it emits are exactly those the line-by-line scan of
    /// [`scan`](Splitter::scan) would (a CRLF ends a line as an LF does; an empty line is
    /// skipped and counted).
    fn scan_blocks(&mut self, buf: &[u8], pos: usize, out: &mut Split) -> usize {
        let mut line_start = pos;
        let mut first = out.ends.len();
        // whether the current line had a byte over 0x7f in an earlier block
        let mut high = false;
        let mut base = pos;
        while let Some(block) = buf.get(base..base + 64) {
            let m = Masks::of(block.try_into().expect("64 bytes"), self.delimiter);
            // a CR is plain only right before an LF of the same block
            if m.quote | (m.cr & !(m.nl >> 1)) != 0 {
                break;
            }
            let mut bits = m.delim | m.nl;
            // the first bit of the current line in this block
            let mut seg = 0u32;
            while bits != 0 {
                let i = bits.trailing_zeros();
                bits &= bits - 1;
                let p = base + i as usize;
                if (m.nl >> i) & 1 == 0 {
                    out.ends.push((p - line_start) as u32);
                    continue;
                }
                let end = if p > line_start && buf[p - 1] == b'\r' {
                    p - 1
                } else {
                    p
                };
                let line = self.next_line;
                self.next_line += 1;
                if end > line_start {
                    let below = (1u64 << i) - 1;
                    let from = !((1u64 << seg) - 1);
                    let ascii = !high && m.high & below & from == 0;
                    out.ends.push((end - line_start) as u32);
                    out.recs.push(Rec {
                        at: line_start,
                        len: end - line_start,
                        first,
                        fields: out.ends.len() - first,
                        line,
                        side: false,
                        ascii,
                        gap: true,
                        wide: false,
                        typed_at: usize::MAX,
                    });
                }
                line_start = p + 1;
                first = out.ends.len();
                high = false;
                seg = i + 1;
            }
            high |= seg < 64 && m.high >> seg != 0;
            base += 64;
        }
        // the unfinished line is scanned again by the caller
        out.ends.truncate(first);
        line_start
    }

    /// Reads one record with csv-core from the start of `input` (or goes on with the record
    /// begun earlier, [`Partial`]) into `out.side`; returns the bytes it took. When the record
    /// goes on past `input` (and `last` is false), it takes all of `input` and keeps the
    /// record as `self.partial`.
    fn slow_record(&mut self, input: &[u8], last: bool, out: &mut Split) -> usize {
        let (mut nout_all, mut nend_all, mut lines, mut read, mut quotes) =
            match self.partial.take() {
                Some(p) => (p.nout, p.nend, p.lines, p.read, p.quotes),
                None => (0, 0, 0u64, 0, QuoteTracker::default()),
            };
        let mut nin_all = 0;
        let mut finishing = false;
        loop {
            if nin_all == input.len() && !last && !finishing {
                // no more input yet (no input at all is csv-core's signal to finish)
                self.partial = Some(Partial {
                    nout: nout_all,
                    nend: nend_all,
                    lines,
                    read,
                    quotes,
                });
                return nin_all;
            }
            let feed = if finishing {
                &[][..]
            } else {
                &input[nin_all..]
            };
            let (res, nin, nout, nend) = self.core.read_record(
                feed,
                &mut self.slow[nout_all..],
                &mut self.slow_ends[nend_all..],
            );
            lines += memchr_iter(b'\n', &feed[..nin]).count() as u64;
            quotes.feed(&feed[..nin], self.delimiter);
            nin_all += nin;
            read += nin;
            nout_all += nout;
            nend_all += nend;
            match res {
                ReadRecordResult::InputEmpty => {
                    // unfinished: with more input it goes on (at the loop's top); at the end
                    // of the input, no input is csv-core's signal to finish
                    finishing = last;
                }
                ReadRecordResult::OutputFull => {
                    let n = self.slow.len() * 2;
                    self.slow.resize(n, 0);
                }
                ReadRecordResult::OutputEndsFull => {
                    let n = self.slow_ends.len() * 2;
                    self.slow_ends.resize(n, 0);
                }
                ReadRecordResult::Record => {
                    let line = self.next_line;
                    self.next_line += lines;
                    if finishing {
                        // the input's end finished it: was it inside quotes?
                        out.unterminated = quotes.open_quote().map(|n| line + n);
                    }
                    let at = out.side.len();
                    out.side.extend_from_slice(&self.slow[..nout_all]);
                    if self.ranges.len() < nend_all {
                        self.ranges.resize(nend_all, (0, 0));
                    }
                    for (k, &e) in self.slow_ends[..nend_all].iter().enumerate() {
                        self.ranges[k] = (0, e);
                    }
                    push_rec(
                        out,
                        at,
                        nout_all,
                        nend_all,
                        line,
                        true,
                        false,
                        false,
                        &self.ranges,
                    );
                    return nin_all;
                }
                ReadRecordResult::End => {
                    self.next_line += lines;
                    return nin_all.max(input.len());
                }
            }
        }
    }
}

/// Whether the block scan may split on this delimiter: not a byte it treats otherwise.
fn plain_delimiter(delimiter: u8) -> bool {
    !matches!(delimiter, b'\n' | b'\r' | b'"')
}

/// The bytes of interest in a 64-byte block, one bit per byte (bit `i` for byte `i`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Masks {
    delim: u64,
    nl: u64,
    cr: u64,
    quote: u64,
    /// bytes over 0x7f: the line is not ASCII
    high: u64,
}

impl Masks {
    /// The masks of a block, 16 bytes at a time with SSE2.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    #[allow(unsafe_code)]
    fn of(block: &[u8; 64], delimiter: u8) -> Masks {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
        };
        let mut m = Masks {
            delim: 0,
            nl: 0,
            cr: 0,
            quote: 0,
            high: 0,
        };
        // SAFETY: SSE2 is part of the x86_64 baseline, so every intrinsic here is available on
        // any x86_64 CPU; `_mm_loadu_si128` reads 16 bytes from `block[16 * k..16 * k + 16]`,
        // inside the 64-byte array for k < 4, and needs no alignment. The rest only compares
        // registers.
        unsafe {
            let (d, n, c, q) = (
                _mm_set1_epi8(delimiter as i8),
                _mm_set1_epi8(b'\n' as i8),
                _mm_set1_epi8(b'\r' as i8),
                _mm_set1_epi8(b'"' as i8),
            );
            for k in 0..4 {
                let v = _mm_loadu_si128(block.as_ptr().add(16 * k).cast::<__m128i>());
                let bits = |x| u64::from(_mm_movemask_epi8(x) as u16) << (16 * k);
                m.delim |= bits(_mm_cmpeq_epi8(v, d));
                m.nl |= bits(_mm_cmpeq_epi8(v, n));
                m.cr |= bits(_mm_cmpeq_epi8(v, c));
                m.quote |= bits(_mm_cmpeq_epi8(v, q));
                m.high |= bits(v);
            }
        }
        m
    }

    /// The masks of a block, a byte at a time: the reference the SSE2 version is tested
    /// against, and the version for other architectures.
    #[cfg_attr(target_arch = "x86_64", allow(dead_code))]
    fn of_bytes(block: &[u8; 64], delimiter: u8) -> Masks {
        let mask = |want: &dyn Fn(u8) -> bool| -> u64 {
            block
                .iter()
                .enumerate()
                .filter(|&(_, &b)| want(b))
                .fold(0, |m, (i, _)| m | 1 << i)
        };
        Masks {
            delim: mask(&|b| b == delimiter),
            nl: mask(&|b| b == b'\n'),
            cr: mask(&|b| b == b'\r'),
            quote: mask(&|b| b == b'"'),
            high: mask(&|b| b > 0x7f),
        }
    }

    #[cfg(not(target_arch = "x86_64"))]
    #[inline]
    fn of(block: &[u8; 64], delimiter: u8) -> Masks {
        Masks::of_bytes(block, delimiter)
    }
}

/// Records one record whose field ends are `ranges[..fields].1`.
#[allow(clippy::too_many_arguments)]
#[inline]
fn push_rec(
    out: &mut Split,
    at: usize,
    len: usize,
    fields: usize,
    line: u64,
    side: bool,
    ascii: bool,
    gap: bool,
    ranges: &[(usize, usize)],
) {
    let wide = u32::try_from(len).is_err();
    let first = if wide {
        let f = out.wide_ends.len();
        out.wide_ends.extend(ranges[..fields].iter().map(|r| r.1));
        f
    } else {
        let f = out.ends.len();
        out.ends.extend(ranges[..fields].iter().map(|r| r.1 as u32));
        f
    };
    out.recs.push(Rec {
        at,
        len,
        first,
        fields,
        line,
        side,
        ascii,
        gap,
        wide,
        typed_at: usize::MAX,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quote_tracker_skips_as_it_steps() {
        // rule: CHECK-02
        // the skipping feed agrees with one step per byte, however the bytes are cut
        let alphabet = [b'a', b',', b'"', b'\n', b'\r', b';'];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..2000 {
            let mut next = || {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed
            };
            let len = (next() % 40) as usize;
            let bytes: Vec<u8> = (0..len).map(|_| alphabet[(next() % 6) as usize]).collect();
            let cut = (next() as usize) % (len + 1);
            let mut fast = QuoteTracker::default();
            fast.feed(&bytes[..cut], b',');
            fast.feed(&bytes[cut..], b',');
            let mut slow = QuoteTracker::default();
            for &b in &bytes {
                slow.step(b, b',');
            }
            assert_eq!(
                (fast.state, fast.lines, fast.opened),
                (slow.state, slow.lines, slow.opened),
                "{:?}",
                String::from_utf8_lossy(&bytes)
            );
        }
    }

    /// Every record as the `csv` crate reads it (flexible, no headers).
    fn with_csv(input: &[u8]) -> Vec<(u64, Vec<Vec<u8>>)> {
        let mut r = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(input);
        let mut out = Vec::new();
        let mut rec = csv::ByteRecord::new();
        while r.read_byte_record(&mut rec).unwrap() {
            let line = rec.position().unwrap().line();
            out.push((line, rec.iter().map(<[u8]>::to_vec).collect()));
        }
        out
    }

    fn with_records(input: &[u8], buffer: Option<usize>) -> Vec<(u64, Vec<Vec<u8>>)> {
        let mut r = Records::new(input, b',');
        if let Some(n) = buffer {
            r.buf = vec![0; n];
        }
        let mut out = Vec::new();
        while r.next_record().unwrap() {
            let (data, ranges) = r.parts();
            out.push((
                r.line(),
                ranges.iter().map(|&(a, b)| data[a..b].to_vec()).collect(),
            ));
        }
        out
    }

    /// Every record as a [`Splitter`] finds it, fed in chunks of `n` bytes.
    fn with_splitter(input: &[u8], n: usize) -> Vec<(u64, Vec<Vec<u8>>)> {
        let mut s = Splitter::new(b',');
        let mut out = Vec::new();
        let mut split = Split::default();
        let mut ranges = Vec::new();
        let mut chunks: Vec<&[u8]> = input.chunks(n).collect();
        // the reader sends an empty last chunk when the input is a multiple of the chunk size
        if input.len() % n == 0 {
            chunks.push(b"");
        }
        let count = chunks.len();
        for (i, chunk) in chunks.into_iter().enumerate() {
            split.clear();
            s.feed(chunk, i + 1 == count, &mut split);
            for r in &split.recs {
                let data = split.record(chunk, r, &mut ranges);
                assert!(!r.ascii || data.is_ascii(), "{data:?} is not ASCII");
                out.push((
                    r.line,
                    ranges.iter().map(|&(a, b)| data[a..b].to_vec()).collect(),
                ));
            }
        }
        out
    }

    #[test]
    fn splitter_matches_records_in_any_chunks() {
        let mut long = b"id,note\r\n".to_vec();
        for i in 0..300 {
            let note = "x".repeat(i * 7 % 50);
            if i % 3 == 0 {
                long.extend_from_slice(format!("{i},\"q,\"\"{note}\n{note}\"\r\n").as_bytes());
            } else {
                long.extend_from_slice(format!("{i},{note}\r").as_bytes());
            }
        }
        long.extend_from_slice(&b"z".repeat(5000));
        let mut inputs: Vec<Vec<u8>> = [
            &b"a,b,c\n1,2,3\n"[..],
            b"a,b\r\n1,2\r\n\r\n\n3,4",
            b"\xef\xbb\xbfa,b\n1,2\n",
            b"\xef\xbb\xbf",
            b"\xef\xbb",
            b"a,\"b,c\"\n\"x\"\"y\",z\n\"multi\nline\",2\n3,4\n",
            b"a\rb\rc\n",
            b"a,b\r",
            b"a,b\r\r\n1,\"2\"\r3\n",
            b"",
            b"\n\n",
            b",\n,,\n",
            b"\"unterminated,1\n2,3\n",
            b"\"a\"b,c\n",
            b"x,\"\"\n\"\",y\n",
            b"1,2,3,4\n5,6\n7\n",
            b"id,\xc3\xa9t\xc3\xa9\n1,\xff\n",
            b"a,b\r\n\"3\",4\r\n5\r\n",
        ]
        .iter()
        .map(|i| i.to_vec())
        .collect();
        inputs.push(long);
        for input in &inputs {
            let expected = with_records(input, None);
            let text = String::from_utf8_lossy(input);
            for n in [1, 2, 3, 4, 5, 7, 8, 13, 64, 100, 4096, 1 << 20] {
                assert_eq!(with_splitter(input, n), expected, "{n}: {text:?}");
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// The block scan (lines in whole 64-byte blocks) finds the records the line-by-line
        /// reader finds, with their line numbers, in chunks of any size; a record it calls ASCII
        /// is ASCII.
        #[test]
        fn block_scan_matches_records(
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    8 => "[a-z0-9]{0,90}",
                    3 => proptest::prelude::Just(",".to_owned()),
                    2 => proptest::prelude::Just("\n".to_owned()),
                    1 => proptest::prelude::Just("\r\n".to_owned()),
                    1 => proptest::prelude::Just("\r".to_owned()),
                    1 => proptest::prelude::Just("\"".to_owned()),
                    1 => proptest::prelude::Just("\u{e9}".to_owned()),
                ],
                0..120,
            ),
            n in 1usize..300,
        ) {
            let input = parts.concat();
            let expected = with_records(input.as_bytes(), None);
            proptest::prop_assert_eq!(with_splitter(input.as_bytes(), n), expected.clone());
            proptest::prop_assert_eq!(with_splitter(input.as_bytes(), 1 << 20), expected);
        }
    }

    #[test]
    fn masks_match_the_bytes() {
        let mut block = [0u8; 64];
        for seed in 0..2000u64 {
            let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            for b in block.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // mostly the bytes of interest
                *b = match x % 8 {
                    0 => b',',
                    1 => b'\n',
                    2 => b'\r',
                    3 => b'"',
                    4 => 0xc3,
                    5 => b';',
                    _ => (x >> 8) as u8,
                };
            }
            for delimiter in [b',', b';', b'\t', 0xc3] {
                assert_eq!(
                    Masks::of(&block, delimiter),
                    Masks::of_bytes(&block, delimiter),
                    "{block:?}"
                );
            }
        }
    }

    #[test]
    fn long_lines_keep_what_earlier_blocks_saw() {
        // a non-ASCII byte in the first block of a line that ends in a later one
        let mut input = b"h\n\xc3\xa9".to_vec();
        input.extend_from_slice(&b"a".repeat(200));
        input.extend_from_slice(b",b\n");
        input.extend_from_slice(&b"c".repeat(150));
        input.extend_from_slice(b"\n\n");
        let got = with_splitter(&input, 1 << 20);
        assert_eq!(got, with_records(&input, None));
        assert_eq!(got.len(), 3);
    }

    #[test]
    fn split_finds_every_delimiter() {
        let mut ranges = vec![(0, 0); 64];
        for line in [
            "",
            "a",
            ",",
            "abcdefgh,ijklmnop",
            ",,,,,,,,,,,,,,,,,",
            "1,2024-01-01,\u{e9}\u{ff},x",
        ] {
            let (n, ascii) = split(line.as_bytes(), b',', &mut ranges);
            assert_eq!(ascii, line.is_ascii());
            let got: Vec<&str> = ranges[..n].iter().map(|&(a, b)| &line[a..b]).collect();
            assert_eq!(
                split_long(line.as_bytes(), b',', &mut Vec::new()),
                (n, ascii)
            );
            let want: Vec<&str> = line.split(',').collect();
            assert_eq!(got, want, "{line:?}");
        }
        for b in 0..=255u8 {
            let w = u64::from_le_bytes([b, 0x2c, 0xac, 0x2d, 0x2b, 0x00, 0xff, 0x2c]);
            let x = w ^ (LO * u64::from(b','));
            let m = !(((x & !HI).wrapping_add(!HI)) | x) & HI;
            let want: u64 = [b, 0x2c, 0xac, 0x2d, 0x2b, 0x00, 0xff, 0x2c]
                .iter()
                .enumerate()
                .map(|(i, &x)| if x == b',' { 0x80u64 << (8 * i) } else { 0 })
                .sum();
            assert_eq!(m, want, "{b}");
        }
    }

    #[test]
    fn long_records_and_quotes_across_refills() {
        let mut input = b"id,note\r\n".to_vec();
        for i in 0..300 {
            let note = "x".repeat(i * 7 % 50);
            if i % 3 == 0 {
                input.extend_from_slice(format!("{i},\"q,\"\"{note}\n{note}\"\r\n").as_bytes());
            } else {
                input.extend_from_slice(format!("{i},{note}\r").as_bytes());
            }
        }
        input.extend_from_slice(&b"z".repeat(5000));
        let strip = |v: Vec<(u64, Vec<Vec<u8>>)>| -> Vec<Vec<Vec<u8>>> {
            v.into_iter().map(|(_, f)| f).collect()
        };
        let expected = strip(with_csv(&input));
        for n in [7, 64, 100, 4096] {
            assert_eq!(strip(with_records(&input, Some(n))), expected, "{n}");
        }
    }

    #[test]
    fn crlf_lines_are_counted_where_they_start() {
        let got = with_records(b"a,b\r\n1,2\r\n\r\n\n\"3\",4\r\n5\r\n", None);
        let lines: Vec<u64> = got.iter().map(|(l, _)| *l).collect();
        assert_eq!(lines, [1, 2, 5, 6]);
    }

    #[test]
    fn records_match_the_csv_crate() {
        for input in [
            &b"a,b,c\n1,2,3\n"[..],
            b"a,b\r\n1,2\r\n\r\n\n3,4",
            b"\xef\xbb\xbfa,b\n1,2\n",
            b"a,\"b,c\"\n\"x\"\"y\",z\n\"multi\nline\",2\n3,4\n",
            b"a\rb\rc\n",
            b"a,b\r",
            b"a,b\r\r\n1,\"2\"\r3\n",
            b"",
            b"\n\n",
            b",\n,,\n",
            b"\"unterminated,1\n2,3\n",
            b"\"a\"b,c\n",
            b"x,\"\"\n\"\",y\n",
            b"1,2,3,4\n5,6\n7\n",
        ] {
            // The csv crate counts the LF of a CRLF at the start of the next record, so its
            // line numbers lag after a CRLF; compare them only for LF files.
            let strip = |v: Vec<(u64, Vec<Vec<u8>>)>| -> Vec<(u64, Vec<Vec<u8>>)> {
                if input.contains(&b'\r') {
                    v.into_iter().map(|(_, f)| (0, f)).collect()
                } else {
                    v
                }
            };
            let expected = strip(with_csv(input));
            let text = String::from_utf8_lossy(input);
            assert_eq!(strip(with_records(input, None)), expected, "{text:?}");
            for n in [1, 2, 3, 5, 8] {
                assert_eq!(
                    strip(with_records(input, Some(n))),
                    expected,
                    "{n}: {text:?}"
                );
            }
        }
    }
}
