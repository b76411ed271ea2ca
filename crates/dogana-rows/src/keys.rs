//! The set of keys a read holds (CHECK-09), stored exactly: a hash set of hashes would let two
//! different keys collide and fail an honest delivery.
//!
//! A single `int`, `date` or `datetime` key is one i64 (the integer, the day number, the UTC
//! microseconds) in [`IntKeys`]: 12 bytes per key. Any other key (a `str` key, or several
//! columns) is encoded into bytes, one self-delimiting component per column, and stored once in
//! an arena of 1 MiB chunks indexed by a `hashbrown` table of 8-byte references.

use std::hash::{BuildHasher, RandomState};

use dogana::{Date, LogicalType, Timestamp};

use crate::cell::Cell;

/// Seeds a set's hash function at random, so a sender cannot choose keys that collide.
fn random_seed() -> u64 {
    RandomState::new().hash_one(0x646f67616e61u64) | 1
}

/// murmur3's finalizer over the seeded key: a bijection on u64, so distinct keys never share a
/// full hash.
#[inline]
fn mix(key: i64, seed: u64) -> u64 {
    let mut x = (key as u64) ^ seed;
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^= x >> 33;
    x
}

/// Logs the keys are spread over as they arrive: few, so that their write positions stay in
/// the L1 cache.
const PART_BITS: u32 = 4;
const PARTS: usize = 1 << PART_BITS;
/// Keys per piece a log is split into at the end, so each piece's table fits the L2 cache.
const PIECE: usize = 1 << 15;
/// Keys per chunk of a part's log.
const LOG_CHUNK: usize = 4096;
/// Marks an empty slot; the key i64::MIN itself is kept aside in a flag.
const EMPTY: i64 = i64::MIN;

/// One part's keys and the lines they were on, in arrival order: the current chunk, and the
/// full ones (so the log never reallocates or copies).
#[derive(Debug, Default)]
struct Log {
    keys: Vec<i64>,
    lines: Vec<u32>,
    full: Vec<(Vec<i64>, Vec<u32>)>,
}

impl Log {
    fn len(&self) -> usize {
        self.full.len() * LOG_CHUNK + self.keys.len()
    }

    fn chunks(&self) -> impl Iterator<Item = (&[i64], &[u32])> {
        self.full
            .iter()
            .map(|(k, l)| (k.as_slice(), l.as_slice()))
            .chain(std::iter::once((
                self.keys.as_slice(),
                self.lines.as_slice(),
            )))
    }
}

/// The first repeated key found: its line and value.
pub(crate) type Repeat = (u64, i64);

/// The keys of a read with a single `int`, `date` or `datetime` key column, as i64.
///
/// Checking each key against one large hash table as it arrives costs a cache and TLB miss
/// per row (about 190 ns a row in a virtual machine, most of the check's time). Instead each
/// key is appended, with its line, to one of 16 logs chosen by its hash: sequential writes.
/// At the end each log is split again by more bits of the hash into pieces of about 32 Ki
/// keys, and each piece deduplicated in arrival order with a table that fits in the L2 cache.
/// Memory: 12 bytes per key, at most one 48 KiB chunk per log, a copy of the largest log
/// while it is split (1/16 of the keys), and one piece's table.
#[derive(Debug)]
pub(crate) struct IntKeys {
    seed: u64,
    logs: Vec<Log>,
    len: u64,
}

impl IntKeys {
    pub(crate) fn new() -> Self {
        IntKeys {
            seed: random_seed(),
            logs: (0..PARTS).map(|_| Log::default()).collect(),
            len: 0,
        }
    }

    /// Adds a key seen on `line` (lines past u32::MAX are kept as u32::MAX).
    #[inline]
    pub(crate) fn push(&mut self, key: i64, line: u64) {
        // one multiply picks the log (any function of the key will do: equal keys share a
        // log); the pieces and the tables below use the full mix
        let pick = ((key as u64) ^ self.seed).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let log = &mut self.logs[(pick >> (64 - PART_BITS)) as usize];
        if log.keys.len() == log.keys.capacity() {
            if !log.keys.is_empty() {
                let keys = std::mem::replace(&mut log.keys, Vec::with_capacity(LOG_CHUNK));
                let lines = std::mem::replace(&mut log.lines, Vec::with_capacity(LOG_CHUNK));
                log.full.push((keys, lines));
            } else {
                log.keys.reserve_exact(LOG_CHUNK);
                log.lines.reserve_exact(LOG_CHUNK);
            }
        }
        log.keys.push(key);
        log.lines.push(u32::try_from(line).unwrap_or(u32::MAX));
        self.len += 1;
    }

    /// Bytes held by the logs.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.logs
            .iter()
            .map(|l| (l.full.len() * LOG_CHUNK + l.keys.capacity()) * 12)
            .sum()
    }

    /// Deduplicates: the number of distinct keys, how many rows repeat an earlier key, and the
    /// first such row (smallest line) with its key. Also returns the peak bytes of the tables
    /// and copies it used.
    pub(crate) fn finish(&self) -> (u64, u64, Option<Repeat>, usize) {
        self.finish_logs(&self.logs)
    }

    /// [`finish`](IntKeys::finish) with the logs shared between this thread and a second
    /// one; the peak is then the two threads' peaks together.
    pub(crate) fn finish_in_two(&self) -> (u64, u64, Option<Repeat>, usize) {
        if self.len < 1 << 20 {
            return self.finish();
        }
        let (a, b) = self.logs.split_at(self.logs.len() / 2);
        let (x, y) = std::thread::scope(|scope| {
            let other = scope.spawn(|| self.finish_logs(b));
            let x = self.finish_logs(a);
            // finish_logs does not panic on any input; a panic here is a bug, passed on
            let y = other
                .join()
                .unwrap_or_else(|e| std::panic::resume_unwind(e));
            (x, y)
        });
        let first = match (x.2, y.2) {
            (Some(p), Some(q)) => Some(p.min(q)),
            (p, q) => p.or(q),
        };
        (x.0 + y.0, x.1 + y.1, first, x.3 + y.3)
    }

    fn finish_logs(&self, logs: &[Log]) -> (u64, u64, Option<Repeat>, usize) {
        let mut dedup = Dedup::default();
        let mut peak = 0;
        let (mut keys, mut lines): (Vec<i64>, Vec<u32>) = (Vec::new(), Vec::new());
        let mut starts: Vec<usize> = Vec::new();
        for log in logs {
            let n = log.len();
            if n <= PIECE {
                let all = log
                    .chunks()
                    .flat_map(|(k, l)| k.iter().copied().zip(l.iter().copied()));
                dedup.piece(all, n, self.seed);
                peak = peak.max(dedup.table.capacity() * 8);
                continue;
            }
            // split by the top bits of the mix (the log was picked by another hash), keeping
            // arrival order (a counting sort): count, place, then deduplicate each piece;
            // at least one bit: a shift by 64 - 0 would overflow
            let bits = n
                .div_ceil(PIECE)
                .next_power_of_two()
                .trailing_zeros()
                .clamp(1, 16);
            let piece_of = |k: i64| (mix(k, self.seed) >> (64 - bits)) as usize;
            starts.clear();
            starts.resize((1 << bits) + 1, 0);
            for (k, _) in log.chunks() {
                for &key in k {
                    starts[piece_of(key) + 1] += 1;
                }
            }
            for i in 1..starts.len() {
                starts[i] += starts[i - 1];
            }
            keys.clear();
            keys.resize(n, 0);
            lines.clear();
            lines.resize(n, 0);
            let mut at = starts.clone();
            for (k, l) in log.chunks() {
                for (&key, &line) in k.iter().zip(l) {
                    let p = piece_of(key);
                    keys[at[p]] = key;
                    lines[at[p]] = line;
                    at[p] += 1;
                }
            }
            for p in 0..(1usize << bits) {
                let (a, b) = (starts[p], starts[p + 1]);
                dedup.piece(
                    keys[a..b].iter().copied().zip(lines[a..b].iter().copied()),
                    b - a,
                    self.seed,
                );
            }
            peak = peak.max(keys.capacity() * 12 + dedup.table.capacity() * 8);
        }
        (dedup.distinct, dedup.repeats, dedup.first, peak)
    }
}

/// Deduplicates pieces of keys, each with its own table.
#[derive(Default)]
struct Dedup {
    table: Vec<i64>,
    distinct: u64,
    repeats: u64,
    first: Option<Repeat>,
}

impl Dedup {
    fn piece(&mut self, keys: impl Iterator<Item = (i64, u32)>, n: usize, seed: u64) {
        let cap = (n * 2).next_power_of_two();
        self.table.clear();
        self.table.resize(cap, EMPTY);
        let mask = cap - 1;
        let mut has_min = false;
        for (key, line) in keys {
            let new = if key == EMPTY {
                !std::mem::replace(&mut has_min, true)
            } else {
                let mut i = mix(key, seed) as usize & mask;
                loop {
                    let s = self.table[i];
                    if s == key {
                        break false;
                    }
                    if s == EMPTY {
                        self.table[i] = key;
                        break true;
                    }
                    i = (i + 1) & mask;
                }
            };
            if new {
                self.distinct += 1;
            } else {
                self.repeats += 1;
                // the smallest line, and on that line (records split by bare CRs share one)
                // the smallest key: whatever the order the pieces came in
                let repeat = (u64::from(line), key);
                if self.first.is_none_or(|first| repeat < first) {
                    self.first = Some(repeat);
                }
            }
        }
    }
}

const CHUNK: usize = 1 << 20;

/// A set of byte strings, each stored once in an arena.
#[derive(Debug)]
pub(crate) struct BytesSet {
    hasher: hashbrown::DefaultHashBuilder,
    table: hashbrown::HashTable<u64>,
    chunks: Vec<Vec<u8>>,
}

impl BytesSet {
    pub(crate) fn new() -> Self {
        BytesSet {
            hasher: hashbrown::DefaultHashBuilder::default(),
            table: hashbrown::HashTable::new(),
            chunks: Vec::new(),
        }
    }

    fn get(chunks: &[Vec<u8>], at: u64) -> &[u8] {
        let chunk = &chunks[(at >> 32) as usize];
        let start = (at & 0xffff_ffff) as usize;
        let len = u32::from_le_bytes(chunk[start..start + 4].try_into().expect("4 bytes")) as usize;
        &chunk[start + 4..start + 4 + len]
    }

    /// Adds a key; false when it was already there.
    pub(crate) fn insert(&mut self, key: &[u8]) -> bool {
        let hash = self.hasher.hash_one(key);
        let chunks = &self.chunks;
        if self
            .table
            .find(hash, |&at| BytesSet::get(chunks, at) == key)
            .is_some()
        {
            return false;
        }
        let need = key.len() + 4;
        let fits = self
            .chunks
            .last()
            .is_some_and(|c| c.capacity() - c.len() >= need);
        if !fits {
            self.chunks.push(Vec::with_capacity(need.max(CHUNK)));
        }
        let index = self.chunks.len() - 1;
        let chunk = &mut self.chunks[index];
        let at = ((index as u64) << 32) | chunk.len() as u64;
        chunk.extend_from_slice(&(key.len() as u32).to_le_bytes());
        chunk.extend_from_slice(key);
        let (hasher, chunks) = (&self.hasher, &self.chunks);
        self.table
            .insert_unique(hash, at, |&a| hasher.hash_one(BytesSet::get(chunks, a)));
        true
    }

    pub(crate) fn len(&self) -> u64 {
        self.table.len() as u64
    }

    /// Bytes held by the table and the arena.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.table.capacity() * 9 + self.chunks.iter().map(Vec::capacity).sum::<usize>()
    }
}

/// Appends one key component to an encoded key: 8 bytes for an int, date or datetime, the
/// length (4 bytes) and the UTF-8 bytes for a string. Each component is self-delimiting, so two
/// keys are equal exactly when their encodings are.
pub(crate) fn encode(buf: &mut Vec<u8>, cell: &Cell<'_>) {
    match cell {
        Cell::Str(s) => {
            buf.extend_from_slice(&(s.len() as u32).to_le_bytes());
            buf.extend_from_slice(s.as_bytes());
        }
        other => buf.extend_from_slice(&as_i64(other).unwrap_or(0).to_le_bytes()),
    }
}

/// The i64 a single-column key is stored as, for the types that have one.
#[inline]
pub(crate) fn as_i64(cell: &Cell<'_>) -> Option<i64> {
    match cell {
        Cell::Int(i) => Some(*i),
        Cell::Date(d) => Some(d.days_since_epoch()),
        Cell::Datetime(t) => Some(t.as_micros()),
        _ => None,
    }
}

/// Whether a key of these column types is kept as one i64.
pub(crate) fn is_int_key(types: &[LogicalType]) -> bool {
    matches!(
        types,
        [LogicalType::Int | LogicalType::Date | LogicalType::Datetime]
    )
}

/// Shows an i64-stored key as its type writes it.
pub(crate) fn show_i64(v: i64, ty: LogicalType) -> String {
    match ty {
        LogicalType::Date => {
            Date::from_days_since_epoch(v).map_or(v.to_string(), |d| d.to_string())
        }
        LogicalType::Datetime => Timestamp::from_micros(v).map_or(v.to_string(), |t| t.to_string()),
        _ => v.to_string(),
    }
}

/// Shows an encoded key, one component per type.
pub(crate) fn show_encoded(mut b: &[u8], types: &[LogicalType]) -> Vec<String> {
    let mut out = Vec::with_capacity(types.len());
    for &ty in types {
        if ty == LogicalType::Str {
            let Some(len) = b.get(..4) else { break };
            let len = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
            let s = b.get(4..4 + len).unwrap_or_default();
            out.push(dogana::quoted_bytes(s, dogana::SHOWN));
            b = b.get(4 + len..).unwrap_or_default();
        } else {
            let Some(v) = b.get(..8) else { break };
            out.push(show_i64(
                i64::from_le_bytes(v.try_into().expect("8 bytes")),
                ty,
            ));
            b = &b[8..];
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_keys_are_exact() {
        // rule: CHECK-09
        let mut s = IntKeys::new();
        for k in 0..100_000i64 {
            s.push(k * 7919 - 50_000, 2 + k as u64);
        }
        s.push(i64::MIN, 200_000);
        s.push(i64::MAX, 200_001);
        assert_eq!(s.finish().0, 100_002);
        assert_eq!(s.finish().1, 0);
        s.push(i64::MIN, 200_002);
        s.push(7919 * 5 - 50_000, 200_004);
        s.push(7919 * 4 - 50_000, 200_003);
        let (distinct, repeats, first, _) = s.finish();
        assert_eq!((distinct, repeats), (100_002, 3));
        assert_eq!(first, Some((200_002, i64::MIN)));
        // 12 bytes a key and at most one partly used chunk per log
        assert!(s.heap_bytes() <= 12 * 100_005 + PARTS * LOG_CHUNK * 12);
        // big enough that logs are split into pieces
        let mut big = IntKeys::new();
        for k in 0..2_000_000i64 {
            big.push(k ^ 0x5555, 2 + k as u64);
        }
        big.push(77 ^ 0x5555, 3_000_000);
        big.push(i64::MIN, 3_000_001);
        big.push(5 ^ 0x5555, 2_999_999);
        let (distinct, repeats, first, _) = big.finish();
        assert_eq!((distinct, repeats), (2_000_001, 2));
        assert_eq!(first, Some((2_999_999, 5 ^ 0x5555)));
    }

    #[test]
    fn the_first_repeat_does_not_depend_on_the_seed() {
        // rule: CHECK-09
        // two repeats on one line (records split by bare CRs share their line): the report
        // names the smaller key, whatever the seed that orders the pieces
        for _ in 0..32 {
            let mut s = IntKeys::new();
            for (key, line) in [(9, 2), (5, 2), (77, 3), (9, 4), (5, 4), (77, 4)] {
                s.push(key, line);
            }
            let (distinct, repeats, first, _) = s.finish();
            assert_eq!((distinct, repeats, first), (3, 3, Some((4, 5))));
            assert_eq!(s.finish_in_two().2, Some((4, 5)));
        }
    }

    #[test]
    fn int_keys_of_every_log_size() {
        // rule: CHECK-09
        // logs just over one piece (1M keys are 62.5 Ki a log, under two pieces) used to
        // compute a shift by 64
        for n in [
            PIECE as i64 * PARTS as i64 / 2,
            PIECE as i64 * PARTS as i64 + 1,
            1_000_000,
            PIECE as i64 * PARTS as i64 * 3,
        ] {
            let mut s = IntKeys::new();
            for k in 0..n {
                s.push(k * 3, 2 + k as u64);
            }
            s.push(3 * (n / 2), 2 + n as u64);
            let (distinct, repeats, first, _) = s.finish();
            assert_eq!((distinct, repeats), (n as u64, 1), "{n} keys");
            assert_eq!(first, Some((2 + n as u64, 3 * (n / 2))), "{n} keys");
        }
    }

    #[test]
    fn bytes_set_is_exact() {
        // rule: CHECK-09
        let mut s = BytesSet::new();
        let big = vec![b'x'; 3 << 20];
        assert!(s.insert(&big));
        for k in 0..50_000u32 {
            assert!(s.insert(format!("k{k}").as_bytes()));
        }
        assert!(s.insert(b""));
        assert!(!s.insert(b""));
        assert!(!s.insert(&big));
        assert!(!s.insert(b"k49999"));
        assert_eq!(s.len(), 50_002);
    }

    #[test]
    fn encoded_keys_are_self_delimiting() {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        encode(&mut a, &Cell::Str("ab".into()));
        encode(&mut a, &Cell::Str("c".into()));
        encode(&mut b, &Cell::Str("a".into()));
        encode(&mut b, &Cell::Str("bc".into()));
        assert_ne!(a, b);
        let types = [LogicalType::Str, LogicalType::Str];
        assert_eq!(show_encoded(&a, &types), ["\"ab\"", "\"c\""]);
    }
}
