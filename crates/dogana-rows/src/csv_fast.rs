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
use memchr::{memchr3, memchr_iter};

use crate::hash::BUFFER_SIZE;

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// Lines up to this long are split into a preallocated table of ranges.
const SHORT_LINE: usize = 4096;

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
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    eof: bool,
    started: bool,
    delimiter: u8,
    core: CoreReader,
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
}

impl<R: Read> Records<R> {
    pub(crate) fn new(input: R, delimiter: u8) -> Records<R> {
        Records {
            input,
            buf: vec![0; 2 * BUFFER_SIZE],
            pos: 0,
            end: 0,
            eof: false,
            started: false,
            delimiter,
            core: ReaderBuilder::new().delimiter(delimiter).build(),
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
        }
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
        }
        loop {
            match self.input.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(false);
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(true);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Reads the next record; false at the end of the input.
    pub(crate) fn next_record(&mut self) -> io::Result<bool> {
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
        let (mut nout_all, mut nend_all) = (0, 0);
        self.line = self.next_line;
        loop {
            let input = &self.buf[self.pos..self.end];
            let (res, nin, nout, nend) = self.core.read_record(
                input,
                &mut self.slow[nout_all..],
                &mut self.slow_ends[nend_all..],
            );
            self.next_line += memchr_iter(b'\n', &input[..nin]).count() as u64;
            self.pos += nin;
            nout_all += nout;
            nend_all += nend;
            match res {
                ReadRecordResult::InputEmpty => {
                    // at the end of the input, the next call passes no input: csv-core's
                    // signal to finish the record
                    self.refill()?;
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

#[cfg(test)]
mod tests {
    use super::*;

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
