//! SHA-256 of the delivered bytes (CHECK-08), computed as the bytes are read.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use sha2::{Digest, Sha256};

/// The buffer size used for reading deliveries: 1 MiB.
pub const BUFFER_SIZE: usize = 1 << 20;

/// Lowercase hexadecimal, the spelling of every SHA-256 the protocol carries.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    s
}

/// The lowercase hex SHA-256 of a file's bytes, read in 1 MiB blocks: what a manifest's
/// `content_hash` declares (MAN-23).
///
/// ```
/// let path = std::env::temp_dir().join(format!("dogana-rows-doc-{}.csv", std::process::id()));
/// std::fs::write(&path, b"abc").unwrap();
/// assert_eq!(
///     dogana_rows::sha256_file(&path).unwrap(),
///     "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
/// );
/// # std::fs::remove_file(&path).unwrap();
/// ```
pub fn sha256_file(path: impl AsRef<Path>) -> io::Result<String> {
    let mut reader = HashingReader::new(File::open(path)?);
    let mut buf = vec![0u8; BUFFER_SIZE];
    while reader.read(&mut buf)? > 0 {}
    Ok(reader.finish())
}

/// A reader that hashes every byte it passes on, so that parsing a delivery and computing its
/// content hash are one pass over the bytes.
///
/// Give it large reads (a 1 MiB buffer, as [`BUFFER_SIZE`]); SHA-256 runs at about 1 GB/s
/// with the SHA extensions `sha2` detects at run time.
///
/// ```
/// use std::io::Read;
/// use dogana_rows::HashingReader;
/// let mut r = HashingReader::new(&b"id\n7\n"[..]);
/// let mut text = String::new();
/// r.read_to_string(&mut text).unwrap();
/// assert_eq!(text, "id\n7\n");
/// assert_eq!(r.bytes_read(), 5);
/// assert_eq!(r.finish().len(), 64);
/// ```
#[derive(Debug)]
pub struct HashingReader<R> {
    inner: R,
    hasher: Sha256,
    bytes: u64,
}

impl<R: Read> HashingReader<R> {
    /// Wraps `inner`.
    pub fn new(inner: R) -> Self {
        HashingReader {
            inner,
            hasher: Sha256::new(),
            bytes: 0,
        }
    }

    /// How many bytes have passed through so far.
    pub fn bytes_read(&self) -> u64 {
        self.bytes
    }

    /// Reads whatever the consumer left unread, so that the hash covers every byte of the
    /// input, and returns how many bytes that was.
    pub fn drain(&mut self) -> io::Result<u64> {
        let before = self.bytes;
        // mostly nothing is left: the large buffer only when something is
        let mut first = [0u8; 4096];
        if self.read(&mut first)? == 0 {
            return Ok(0);
        }
        let mut buf = vec![0u8; BUFFER_SIZE];
        while self.read(&mut buf)? > 0 {}
        Ok(self.bytes - before)
    }

    /// The lowercase hex SHA-256 of the bytes read so far.
    pub fn finish(self) -> String {
        hex(&self.hasher.finalize())
    }

    /// The lowercase hex SHA-256 of the bytes read so far, and the inner reader.
    pub fn into_parts(self) -> (R, String) {
        (self.inner, hex(&self.hasher.finalize()))
    }
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }
}

/// Reads `inner` in 1 MiB chunks, hands each chunk to a hashing thread and serves its bytes to
/// the parser: the input is read once, hashed on one core and parsed on another.
struct ChunkedReader<R> {
    inner: R,
    tx: std::sync::mpsc::SyncSender<std::sync::Arc<Vec<u8>>>,
    back: std::sync::mpsc::Receiver<std::sync::Arc<Vec<u8>>>,
    current: std::sync::Arc<Vec<u8>>,
    pos: usize,
    bytes: u64,
    eof: bool,
}

impl<R: Read> ChunkedReader<R> {
    /// Reads the next chunk; false at the end of the input.
    fn next_chunk(&mut self) -> io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        self.current = std::sync::Arc::new(Vec::new());
        let mut buf = self
            .back
            .try_recv()
            .ok()
            .and_then(|a| std::sync::Arc::try_unwrap(a).ok())
            .unwrap_or_else(|| Vec::with_capacity(BUFFER_SIZE));
        buf.clear();
        buf.resize(BUFFER_SIZE, 0);
        let mut filled = 0;
        while filled < buf.len() {
            match self.inner.read(&mut buf[filled..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        buf.truncate(filled);
        if filled == 0 {
            return Ok(false);
        }
        self.bytes += filled as u64;
        let chunk = std::sync::Arc::new(buf);
        self.tx
            .send(chunk.clone())
            .map_err(|_| io::Error::other("the hashing thread stopped"))?;
        self.current = chunk;
        self.pos = 0;
        Ok(true)
    }
}

impl<R: Read> Read for ChunkedReader<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.pos == self.current.len() && !self.next_chunk()? {
            return Ok(0);
        }
        let n = out.len().min(self.current.len() - self.pos);
        out[..n].copy_from_slice(&self.current[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// Runs `parse` over `reader` while hashing every byte, then reads what `parse` left so the
/// hash covers the whole input. Returns `parse`'s result, the byte count and the hex SHA-256.
pub(crate) fn read_hashed<R: Read, T>(
    reader: R,
    threaded: bool,
    parse: impl FnOnce(&mut dyn Read) -> Result<T, crate::RowsError>,
) -> Result<(T, u64, String), crate::RowsError> {
    if !threaded {
        let mut input = HashingReader::new(reader);
        let out = parse(&mut input)?;
        input.drain()?;
        let bytes = input.bytes_read();
        return Ok((out, bytes, input.finish()));
    }
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<std::sync::Arc<Vec<u8>>>(4);
        let (back_tx, back) = std::sync::mpsc::channel();
        let hasher = scope.spawn(move || {
            let mut h = Sha256::new();
            for chunk in rx {
                h.update(chunk.as_slice());
                // the parser may still be reading it; it recycles the buffer when it can
                let _ = back_tx.send(chunk);
            }
            hex(&h.finalize())
        });
        let mut input = ChunkedReader {
            inner: reader,
            tx,
            back,
            current: std::sync::Arc::new(Vec::new()),
            pos: 0,
            bytes: 0,
            eof: false,
        };
        let out = parse(&mut input);
        let drained = match &out {
            Ok(_) => (|| {
                while input.next_chunk()? {}
                Ok::<(), io::Error>(())
            })(),
            Err(_) => Ok(()),
        };
        let bytes = input.bytes;
        drop(input);
        let sha = hasher
            .join()
            .map_err(|_| io::Error::other("the hashing thread panicked"))?;
        let out = out?;
        drained?;
        Ok((out, bytes, sha))
    })
}
