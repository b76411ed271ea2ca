//! The ledger: a table's regions with their two dates, its held position and publication chain.

use std::fmt;
use std::ops::Bound;
use std::sync::{Arc, OnceLock};

use imbl::OrdMap;
use sha2::{Digest, Sha256};

use crate::contract::Contract;
use crate::error::{invalid, InvalidContract, Problem, RejectedDelivery};
use crate::manifest::{Manifest, Position, Since};
use crate::plan::{Action, ActionKind, ApplyPlan, Transition};
use crate::shape::{Checkpoint, Shape};
use crate::time::Timestamp;
use crate::value::{LogicalType, Value, Window};
use crate::wire::Wire;

/// A known region's two dates: complete as of `c`, deletions as of `d`, with `d <= c`
/// (LEDGER-05). A `Dates` value with `d > c` cannot be built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Dates {
    complete_as_of: Timestamp,
    deletions_as_of: Timestamp,
}

impl Dates {
    /// The dates `(c, d)`; refused when `d > c`.
    pub fn new(
        complete_as_of: Timestamp,
        deletions_as_of: Timestamp,
    ) -> Result<Dates, InvalidContract> {
        if deletions_as_of > complete_as_of {
            return Err(invalid(
                "deletions_as_of",
                deletions_as_of,
                "LEDGER-05",
                format!("deletions_as_of is never later than complete_as_of ({complete_as_of})"),
            ));
        }
        Ok(Dates {
            complete_as_of,
            deletions_as_of,
        })
    }

    /// `(p, p)`: the region is the source at `p`.
    pub fn exact(p: Timestamp) -> Dates {
        Dates {
            complete_as_of: p,
            deletions_as_of: p,
        }
    }

    /// c: every row the source held then is present.
    pub fn complete_as_of(self) -> Timestamp {
        self.complete_as_of
    }

    /// d: no row the source deleted before then is still present.
    pub fn deletions_as_of(self) -> Timestamp {
        self.deletions_as_of
    }
}

/// Where a region starts: at the least value of the domain, or at a value.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Start {
    Min,
    At(Value),
}

impl Start {
    fn of(v: &Value) -> Start {
        if v.is_min() {
            Start::Min
        } else {
            Start::At(v.clone())
        }
    }
}

/// One region of a ledger: an interval of the window column's values and its dates.
///
/// Bounds are stored closed wherever a closed spelling exists (DOMAIN-15): integers, dates and
/// datetimes always; a string high end only when the next region starts at `s + "\0"`, and
/// open otherwise. An unbounded end is `None` with its open flag `true` (DOMAIN-16).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    low: Option<Value>,
    high: Option<Value>,
    low_open: bool,
    high_open: bool,
    dates: Option<Dates>,
}

impl Region {
    /// A region from its wire fields; refuses one date without the other, `d > c`, and an
    /// unbounded end whose open flag is false.
    pub fn new(
        low: Option<Value>,
        high: Option<Value>,
        low_open: bool,
        high_open: bool,
        complete_as_of: Option<Timestamp>,
        deletions_as_of: Option<Timestamp>,
    ) -> Result<Region, InvalidContract> {
        let dates = match (complete_as_of, deletions_as_of) {
            (None, None) => None,
            (Some(c), Some(d)) => Some(Dates::new(c, d)?),
            (c, _) => {
                return Err(invalid(
                    if c.is_none() {
                        "complete_as_of"
                    } else {
                        "deletions_as_of"
                    },
                    "None",
                    "LEDGER-05",
                    "a region has both dates or neither",
                ))
            }
        };
        for (field, bound, open) in [
            ("low_open", &low, low_open),
            ("high_open", &high, high_open),
        ] {
            if bound.is_none() && !open {
                return Err(invalid(
                    field,
                    "false",
                    "DOMAIN-16",
                    "an unbounded end is open",
                ));
            }
        }
        Ok(Region {
            low,
            high,
            low_open,
            high_open,
            dates,
        })
    }

    /// The low end, `None` when unbounded.
    pub fn low(&self) -> Option<&Value> {
        self.low.as_ref()
    }

    /// The high end, `None` when unbounded.
    pub fn high(&self) -> Option<&Value> {
        self.high.as_ref()
    }

    /// Whether the low end is excluded.
    pub fn low_open(&self) -> bool {
        self.low_open
    }

    /// Whether the high end is excluded.
    pub fn high_open(&self) -> bool {
        self.high_open
    }

    /// The dates, or `None` when unknown.
    pub fn dates(&self) -> Option<Dates> {
        self.dates
    }

    /// c, or `None` when unknown.
    pub fn complete_as_of(&self) -> Option<Timestamp> {
        self.dates.map(Dates::complete_as_of)
    }

    /// d, or `None` when unknown.
    pub fn deletions_as_of(&self) -> Option<Timestamp> {
        self.dates.map(Dates::deletions_as_of)
    }

    /// Whether nothing is proven here (LEDGER-07).
    pub fn is_unknown(&self) -> bool {
        self.dates.is_none()
    }

    /// Whether `v` lies in the region.
    pub fn contains(&self, v: &Value) -> bool {
        let above = match &self.low {
            None => true,
            Some(l) if self.low_open => v > l,
            Some(l) => v >= l,
        };
        let below = match &self.high {
            None => true,
            Some(h) if self.high_open => v < h,
            Some(h) => v <= h,
        };
        above && below
    }

    /// The part of the region inside the closed window, if any (CLAIMS-03).
    pub fn clip(&self, window: &Window) -> Option<Region> {
        let (low, low_open) = match &self.low {
            Some(l) if *l >= window.low => (l.clone(), self.low_open),
            _ => (window.low.clone(), false),
        };
        let (high, high_open) = match &self.high {
            Some(h) if *h <= window.high => (h.clone(), self.high_open),
            _ => (window.high.clone(), false),
        };
        let empty = low > high || (low == high && (low_open || high_open));
        (!empty).then_some(Region {
            low: Some(low),
            high: Some(high),
            low_open,
            high_open,
            dates: self.dates,
        })
    }

    /// The interval as the command line prints it (CLI-25): `[` or `(` by the open flags,
    /// `-inf` and `+inf` for unbounded ends, integer and date bounds always closed.
    pub fn interval(&self) -> String {
        let mut out = String::new();
        self.write_interval(&mut out).expect("writing to a String");
        out
    }

    /// Writes [`Region::interval`] without building it.
    pub(crate) fn write_interval(&self, out: &mut impl fmt::Write) -> fmt::Result {
        // An open integer or date end is shown closed, at its neighbour, where it has one.
        let shown = |v: &Value, open: bool, low: bool| -> (Option<Value>, bool) {
            match v {
                Value::Int(_) | Value::Date(_) if open => {
                    match if low { v.successor() } else { v.predecessor() } {
                        Some(n) => (Some(n), false),
                        None => (None, true),
                    }
                }
                _ => (None, open),
            }
        };
        match &self.low {
            None => out.write_str("(-inf")?,
            Some(v) => {
                let (n, open) = shown(v, self.low_open, true);
                out.write_char(if open { '(' } else { '[' })?;
                write!(out, "{}", n.as_ref().unwrap_or(v))?;
            }
        }
        out.write_str(", ")?;
        match &self.high {
            None => out.write_str("+inf)"),
            Some(v) => {
                let (n, open) = shown(v, self.high_open, false);
                write!(out, "{}", n.as_ref().unwrap_or(v))?;
                out.write_char(if open { ')' } else { ']' })
            }
        }
    }

    /// The one region of a new ledger: unbounded, unknown.
    pub(crate) fn unbounded() -> Region {
        Region {
            low: None,
            high: None,
            low_open: true,
            high_open: true,
            dates: None,
        }
    }
}

impl fmt::Display for Region {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let date = |t: Option<Timestamp>| t.map_or("unknown".to_owned(), |t| t.to_string());
        write!(
            f,
            "{}: complete as of {}; deletions as of {}",
            self.interval(),
            date(self.complete_as_of()),
            date(self.deletions_as_of())
        )
    }
}

/// The evidence from one point of the ledger up to the next, and the identity bytes of the
/// region it starts, written once and shared by every ledger that shares the point.
///
/// A region's bytes depend on its point and on the next point's start (its high end). An
/// operation that changes a point's successor (a split after it, a merge of the point after
/// it) replaces the point with a new one, so that the bytes are written again; the bytes
/// also record the successor they were written for, and are not used for any other.
#[derive(Clone)]
struct Point(Arc<PointData>);

struct PointData {
    dates: Option<Dates>,
    bytes: OnceLock<RegionBytes>,
}

/// The RFC 8785 text of a region's identity form (WIRE-18, WIRE-22), preceded by the comma
/// that separates it from the previous region unless it is the first.
struct RegionBytes {
    next: Option<Start>,
    bytes: Box<[u8]>,
}

impl Point {
    fn new(dates: Option<Dates>) -> Point {
        Point(Arc::new(PointData {
            dates,
            bytes: OnceLock::new(),
        }))
    }

    fn dates(&self) -> Option<Dates> {
        self.0.dates
    }

    /// Appends the region's bytes to `out`: the cached ones, written on first use (a ledger
    /// read only for its claims never needs them), or fresh ones for another successor.
    fn write_identity(&self, start: &Start, next: Option<&Start>, sink: &mut impl FnMut(&[u8])) {
        let cached = self.0.bytes.get_or_init(|| RegionBytes {
            next: next.cloned(),
            bytes: region_identity(start, self.0.dates, next).into_boxed_slice(),
        });
        if cached.next.as_ref() == next {
            sink(&cached.bytes);
        } else {
            debug_assert!(false, "a point whose successor changed is replaced");
            sink(&region_identity(start, self.0.dates, next));
        }
    }
}

impl PartialEq for Point {
    fn eq(&self, other: &Point) -> bool {
        self.0.dates == other.0.dates
    }
}

impl Eq for Point {}

/// The identity bytes of the region from `start` to just below `next` ([`region_at`]), with
/// its leading comma unless it is the first.
fn region_identity(start: &Start, dates: Option<Dates>, next: Option<&Start>) -> Vec<u8> {
    use crate::wire::{Form, Text, WriteText};
    let mut out = Text::new(Form::Identity, 256);
    if *start != Start::Min {
        out.raw(",");
    }
    region_at(start, dates, next).write_text(&mut out);
    out.into_string().into_bytes()
}

/// The region from `start` to just below `next`, as a ledger stores it.
fn region_at(start: &Start, dates: Option<Dates>, next: Option<&Start>) -> Region {
    let low = match start {
        Start::Min => None,
        Start::At(v) => Some(v.clone()),
    };
    let (high, high_open) = match next {
        None | Some(Start::Min) => (None, true),
        Some(Start::At(n)) => match n.predecessor() {
            Some(p) => (Some(p), false),
            None => (Some(n.clone()), true),
        },
    };
    Region {
        low_open: low.is_none(),
        low,
        high,
        high_open,
        dates,
    }
}

/// `,"version":4}`: what closes a region's (and the ledger's) canonical wire form.
fn document_version_suffix() -> String {
    format!(",\"version\":{}}}", crate::wire::VERSION)
}

/// The canonical document after its last region.
fn document_tail() -> String {
    format!("]{}", document_version_suffix())
}

/// The storage key of the region starting at `start`: bytes whose order is the order of the
/// starts (the regions' order) for the window column's one type. The unbounded start is the
/// empty key; any other is 0x01 and the value: integers, dates (days) and datetimes
/// (microseconds) as big-endian with the sign bit flipped, strings as their UTF-8 bytes
/// (compared bytewise, as `String` orders them).
fn region_key(start: &Start) -> Vec<u8> {
    let flipped = |n: i64| ((n as u64) ^ (1 << 63)).to_be_bytes();
    match start {
        Start::Min => Vec::new(),
        Start::At(v) => {
            let mut key = vec![1u8];
            match v {
                Value::Int(n) => key.extend_from_slice(&flipped(*n)),
                Value::Date(d) => key.extend_from_slice(&flipped(d.days_since_epoch())),
                Value::Datetime(t) => key.extend_from_slice(&flipped(t.as_micros())),
                Value::Str(s) => key.extend_from_slice(s.as_bytes()),
            }
            key
        }
    }
}

/// A ledger's canonical document cut into rows, for a store that keeps it region by region
/// ([`Ledger::region_rows_since`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerRows {
    /// The document before the first region: `{"contract":…,"regions":[`.
    pub head: String,
    /// The document after the last region: `],"version":4}`.
    pub tail: String,
    /// The ledger's [`Ledger::publication_id`], for a store to keep beside the head.
    pub publication_id: Option<String>,
    /// The regions whose key the earlier ledger has, rewritten: each one's key (ordered as
    /// the regions) and canonical JSON. A store updates their rows in place.
    pub changed: Vec<(Vec<u8>, String)>,
    /// The regions whose key is new (every region, without an earlier ledger), as
    /// `changed`. A store inserts their rows.
    pub added: Vec<(Vec<u8>, String)>,
    /// The keys of the regions that are gone.
    pub removed: Vec<Vec<u8>>,
}

impl LedgerRows {
    /// The regions to write, changed then added: for a store that upserts them alike.
    pub fn upserted(&self) -> impl Iterator<Item = &(Vec<u8>, String)> + '_ {
        self.changed.iter().chain(&self.added)
    }

    /// The document of a head, the regions' JSON in key order and a tail: the ledger's
    /// [`Wire::to_json`].
    pub fn document<'a>(
        head: &str,
        regions: impl IntoIterator<Item = &'a str>,
        tail: &str,
    ) -> String {
        let mut out = String::from(head);
        for (i, r) in regions.into_iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(r);
        }
        out.push_str(tail);
        out
    }
}

/// The span of the window column a delivery covers.
#[derive(Debug, Clone)]
enum Span {
    All,
    /// From a start (inclusive) to the start of what follows (exclusive), if anything does.
    Part(Start, Option<Start>),
}

/// A table's ledger: its contract, the regions that partition the window column's domain with
/// their dates, the held position and the head of the publication chain (LEDGER-01).
///
/// A ledger stores only the points where evidence changes, in a persistent ordered map, so
/// [`Ledger::apply`] returns a new ledger in O(log n + k) for n points and k regions touched,
/// sharing the rest with the old one.
///
/// ```
/// use dogana::{Contract, Ledger, Shape};
/// let c = Contract::builder("orders", ["id"])
///     .shape("full", Shape::full())
///     .column("id", dogana::LogicalType::Int)
///     .build()
///     .unwrap();
/// let ledger = Ledger::new(c.clone());
/// assert!(ledger.regions()[0].is_unknown());
/// let m = c.manifest("full", "2026-10-25T00:00:00Z".parse().unwrap()).rows(10).build().unwrap();
/// let after = ledger.apply(&m).unwrap();
/// assert_eq!(after.regions()[0].complete_as_of(), Some(m.produced_at()));
/// assert!(after.apply(&m).is_err()); // not idempotent: t must be later than c
/// ```
#[derive(Clone)]
pub struct Ledger {
    contract: Arc<Contract>,
    contract_identity: Arc<str>,
    /// The RFC 8785 text of the contract's identity form, which opens the ledger's.
    contract_jcs: Arc<[u8]>,
    points: OrdMap<Start, Point>,
    generation: Option<Position>,
    publication_id: Option<String>,
    /// The ledger's identity once computed: a receiver asks for it more than once per
    /// decision. Every change to the fields above makes a new, empty cell ([`Ledger::changed`]).
    identity: OnceLock<Arc<str>>,
    /// The regions' identity bytes in runs, once written ([`Ledger::runs`]).
    runs: OnceLock<Arc<Runs>>,
    /// The runs of a ledger this one was made from, which it shares where no region changed.
    inherited: Option<Arc<Runs>>,
}

/// How many regions a run of identity bytes holds when it is written: about 15 KB, long
/// enough that the hasher runs over contiguous bytes, short enough that rewriting the run of a
/// changed region costs little.
const RUN_REGIONS: usize = 64;

/// A ledger's regions' identity bytes, cut into runs of consecutive regions, each run one
/// contiguous buffer; what the ledger's identity hashes between its header and trailer.
///
/// Why: each point keeps its region's bytes, but in a heap block of its own, and a receiver's
/// ledger between two deliveries is out of the CPU's caches; hashing region by region then
/// waits for memory at every region (about 1.3x to 1.5x a hash of contiguous bytes, issue 16).
/// A ledger made from another (a delivery, an evolution) shares the runs in which no region
/// changed and rewrites the others from the points' bytes.
struct Runs {
    /// The regions these runs were written from (what the next ledger diffs against).
    points: OrdMap<Start, Point>,
    /// Each run: the start of its first region, and the bytes of its regions in order.
    runs: Vec<(Start, Arc<[u8]>)>,
}

impl PartialEq for Ledger {
    fn eq(&self, other: &Ledger) -> bool {
        self.contract == other.contract
            && self.points == other.points
            && self.generation == other.generation
            && self.publication_id == other.publication_id
    }
}

impl fmt::Debug for Ledger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ledger")
            .field("table", &self.contract.table)
            .field("regions", &self.regions())
            .field("generation", &self.generation)
            .field("publication_id", &self.publication_id)
            .finish()
    }
}

/// The head that follows `previous` when `contract` accepts `manifest` (RECV-14): SHA-256 of
/// the UTF-8 text `previous:contract_identity:manifest_identity`, `None` for the first link.
pub fn chain(previous: Option<&str>, contract_identity: &str, manifest_identity: &str) -> String {
    let text = format!(
        "{}:{contract_identity}:{manifest_identity}",
        previous.unwrap_or("None")
    );
    hex(&Sha256::digest(text.as_bytes()))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 15)] as char);
    }
    s
}

/// TRANS-08's first clause, which holds whatever the ledger: a timestamp read of changes
/// starts no later than its produced_at.
pub(crate) fn since_not_after(since: Timestamp, t: Timestamp) -> Result<(), RejectedDelivery> {
    if since > t {
        return Err(refuse(
            "TRANS-08",
            "since",
            since,
            format!("a read of changes starts no later than its produced_at, {t}"),
        ));
    }
    Ok(())
}

fn refuse(
    rule: &'static str,
    field: &str,
    value: impl fmt::Display,
    reason: String,
) -> RejectedDelivery {
    RejectedDelivery {
        check: "transition",
        problem: Problem::new(field, value, rule, reason),
    }
}

impl Ledger {
    /// A new ledger: one unbounded unknown region, no position, no publication (LEDGER-02).
    pub fn new(contract: Contract) -> Ledger {
        let (contract_identity, contract_jcs) = contract_identity(&contract);
        Ledger {
            contract: Arc::new(contract),
            contract_identity,
            contract_jcs,
            points: OrdMap::unit(Start::Min, Point::new(None)),
            generation: None,
            publication_id: None,
            identity: OnceLock::new(),
            runs: OnceLock::new(),
            inherited: None,
        }
    }

    /// Whether `other` is this ledger, or a clone of it (the same shared regions): cheaper
    /// than equality, and never true for two ledgers that differ.
    pub(crate) fn is_same(&self, other: &Ledger) -> bool {
        self.points.ptr_eq(&other.points)
            && self.generation == other.generation
            && self.publication_id == other.publication_id
            && (Arc::ptr_eq(&self.contract, &other.contract) || self.contract == other.contract)
    }

    /// Forgets the cached identity of a ledger about to change, keeping its runs of identity
    /// bytes (or the ones it inherited) to share what the change leaves as it was.
    fn changed(&mut self) {
        if let Some(runs) = self.runs.take() {
            self.inherited = Some(runs);
        }
        self.identity = OnceLock::new();
    }

    /// The regions' identity bytes in runs, written once: from the inherited runs, sharing
    /// each run in which no region changed, or afresh.
    fn runs(&self) -> &Runs {
        self.runs.get_or_init(|| {
            let runs = match &self.inherited {
                Some(old) if !old.runs.is_empty() => self.runs_since(old),
                _ => self.write_runs(Bound::Unbounded, Bound::Unbounded),
            };
            Arc::new(Runs {
                points: self.points.clone(),
                runs,
            })
        })
    }

    /// `old`'s runs where no region of theirs changed, the others written again. A run is
    /// rewritten when a region starting in its range is new, changed or gone, or when the
    /// region after one of them is (the one before a new or removed point ends elsewhere).
    fn runs_since(&self, old: &Runs) -> Vec<(Start, Arc<[u8]>)> {
        let (touched, removed) = touched_since(&old.points, &self.points);
        let run_of = |k: &Start| old.runs.partition_point(|(s, _)| s <= k).saturating_sub(1);
        let mut dirty = vec![false; old.runs.len()];
        for k in touched.iter().chain(&removed) {
            dirty[run_of(k)] = true;
        }
        let mut runs = Vec::with_capacity(old.runs.len() + 2);
        for (i, (start, bytes)) in old.runs.iter().enumerate() {
            if !dirty[i] {
                runs.push((start.clone(), bytes.clone()));
                continue;
            }
            let lo = if i == 0 {
                Bound::Unbounded
            } else {
                Bound::Included(start)
            };
            let hi = old
                .runs
                .get(i + 1)
                .map_or(Bound::Unbounded, |(s, _)| Bound::Excluded(s));
            runs.extend(self.write_runs(lo, hi));
        }
        // removals and splits leave short runs behind: past twice as many as needed, afresh
        if runs.len() > 2 * (self.points.len() / RUN_REGIONS) + 16 {
            return self.write_runs(Bound::Unbounded, Bound::Unbounded);
        }
        runs
    }

    /// The identity bytes of the regions starting between `lo` and `hi`, in runs of
    /// [`RUN_REGIONS`] regions.
    fn write_runs(&self, lo: Bound<&Start>, hi: Bound<&Start>) -> Vec<(Start, Arc<[u8]>)> {
        let points: Vec<(&Start, &Point)> = self.points.range::<_, Start>((lo, hi)).collect();
        let after = points
            .last()
            .and_then(|(last, _)| next_point(&self.points, last));
        let mut runs = Vec::with_capacity(points.len() / RUN_REGIONS + 1);
        for (c, chunk) in points.chunks(RUN_REGIONS).enumerate() {
            let mut bytes = Vec::with_capacity(chunk.len() * 256);
            for (i, (start, point)) in chunk.iter().enumerate() {
                let next = points
                    .get(c * RUN_REGIONS + i + 1)
                    .map(|(n, _)| *n)
                    .or(after.as_ref());
                point.write_identity(start, next, &mut |b: &[u8]| bytes.extend_from_slice(b));
            }
            runs.push((chunk[0].0.clone(), Arc::from(bytes)));
        }
        runs
    }

    /// The ledger's identity (LEDGER-15), computed once.
    pub(crate) fn cached_identity(&self) -> &str {
        self.identity.get_or_init(|| {
            let mut hasher = Sha256::new();
            self.write_identity_json(|bytes| hasher.update(bytes));
            hex(&hasher.finalize()).into()
        })
    }

    /// Streams the RFC 8785 text of the identity form (WIRE-18, WIRE-19) to `sink`, in pieces
    /// of up to 64 KiB: the header, each region's cached bytes, the trailer. Keys are in UTF-16
    /// order: contract, generation, kind, publication_id, regions.
    pub(crate) fn write_identity_json(&self, mut sink: impl FnMut(&[u8])) {
        let mut out: Vec<u8> = Vec::with_capacity(self.contract_jcs.len() + 256);
        let mut header = String::with_capacity(128);
        header.push_str("{\"contract\":");
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(&self.contract_jcs);
        header.clear();
        if let Some(g) = &self.generation {
            header.push_str(",\"generation\":");
            match g {
                Position::Token(t) => dogana_json::write_jcs_string(&mut header, t),
                Position::Sequence(n) => header.push_str(&n.to_string()),
            }
        }
        header.push_str(",\"kind\":\"Ledger\"");
        if let Some(p) = &self.publication_id {
            header.push_str(",\"publication_id\":");
            dogana_json::write_jcs_string(&mut header, p);
        }
        header.push_str(",\"regions\":[");
        out.extend_from_slice(header.as_bytes());
        sink(&out);
        for (_, bytes) in &self.runs().runs {
            sink(bytes);
        }
        sink(b"]}");
    }

    /// The canonical document (WIRE-17) written from the regions' cached identity bytes, or
    /// `None` when a region's bytes are not all printable ASCII (the two forms escape other
    /// characters differently) and the caller must take the generic path.
    ///
    /// A region's canonical wire form is its identity form plus `"version":4`, which sorts
    /// last: for printable ASCII, RFC 8785 and the canonical form write the same bytes, and
    /// the keys sort the same way in UTF-16 and in code-point order.
    pub(crate) fn streamed_json(&self) -> Option<String> {
        let version = document_version_suffix();
        let mut out = String::with_capacity(256 * self.points.len() + 1024);
        self.write_document_head(&mut out);
        let mut printable = true;
        let mut iter = self.points.iter().peekable();
        while let Some((start, point)) = iter.next() {
            let next = iter.peek().map(|(n, _)| *n);
            point.write_identity(start, next, &mut |bytes: &[u8]| {
                match bytes.split_last() {
                    Some((b'}', body)) if body.iter().all(|b| (0x20..0x7f).contains(b)) => {
                        // printable ASCII is UTF-8
                        out.push_str(std::str::from_utf8(body).expect("ASCII"));
                        out.push_str(&version);
                    }
                    _ => printable = false,
                }
            });
            if !printable {
                return None;
            }
        }
        out.push_str(&document_tail());
        Some(out)
    }

    /// The canonical document up to its first region: `{"contract":…,"regions":[`.
    fn write_document_head(&self, out: &mut String) {
        use crate::wire::Wire;
        out.push_str("{\"contract\":");
        out.push_str(&self.contract.to_json());
        out.push_str(",\"generation\":");
        match &self.generation {
            None => out.push_str("null"),
            Some(Position::Token(t)) => dogana_json::write_python_ascii_string(out, t),
            Some(Position::Sequence(n)) => out.push_str(&n.to_string()),
        }
        out.push_str(",\"kind\":\"Ledger\",\"publication_id\":");
        match &self.publication_id {
            None => out.push_str("null"),
            Some(p) => dogana_json::write_python_ascii_string(out, p),
        }
        out.push_str(",\"regions\":[");
    }

    /// The canonical JSON of the region starting at `start` (an element of the document's
    /// `regions`): its cached identity bytes plus `"version"` when they are printable ASCII
    /// (see [`Ledger::streamed_json`]), else the generic path.
    fn region_document(&self, start: &Start, point: &Point, next: Option<&Start>) -> String {
        let mut fast = None;
        point.write_identity(start, next, &mut |bytes: &[u8]| {
            let bytes = bytes.strip_prefix(b",").unwrap_or(bytes);
            if let Some((b'}', body)) = bytes.split_last() {
                if body.iter().all(|b| (0x20..0x7f).contains(b)) {
                    let mut text = String::with_capacity(body.len() + 16);
                    text.push_str(std::str::from_utf8(body).expect("printable ASCII is UTF-8"));
                    text.push_str(&document_version_suffix());
                    fast = Some(text);
                }
            }
        });
        fast.unwrap_or_else(|| {
            use crate::wire::Wire;
            region_at(start, point.dates(), next).to_json()
        })
    }

    /// The ledger's canonical document cut for a store that keeps it region by region: the
    /// head and tail, and the regions that differ from `before`'s (all of them without
    /// `before`), each under a key whose byte order is the regions' order. Writing the
    /// changes over `before`'s rows gives this ledger's rows, and
    /// [`LedgerRows::document`] over them, in key order, gives [`Wire::to_json`]'s bytes.
    ///
    /// A delivery touches a few regions, so a store that saves only these writes a few rows
    /// however large the ledger (issue 16: the save of a 100,000-region ledger rewrote its
    /// 24 MB document).
    ///
    /// ```
    /// use dogana::{Contract, Ledger, LedgerRows, Shape, Wire};
    /// let c = Contract::builder("orders", ["id"]).shape("full", Shape::full())
    ///     .column("id", dogana::LogicalType::Int).build().unwrap();
    /// let before = Ledger::new(c.clone());
    /// let m = c.manifest("full", "2026-10-25T00:00:00Z".parse().unwrap()).rows(1).build().unwrap();
    /// let after = before.apply(&m).unwrap();
    /// let all = after.region_rows_since(None);
    /// let doc = LedgerRows::document(&all.head, all.added.iter().map(|(_, r)| r.as_str()), &all.tail);
    /// assert_eq!(doc, after.to_json());
    /// let cut = after.region_rows_since(Some(&before));
    /// // the one region, rewritten under its key
    /// assert_eq!((cut.changed.len(), cut.added.len(), cut.removed.len()), (1, 0, 0));
    /// ```
    pub fn region_rows_since(&self, before: Option<&Ledger>) -> LedgerRows {
        let mut head = String::with_capacity(self.contract_jcs.len() + 256);
        self.write_document_head(&mut head);
        let mut rows = LedgerRows {
            head,
            tail: document_tail(),
            publication_id: self.publication_id.clone(),
            changed: Vec::new(),
            added: Vec::new(),
            removed: Vec::new(),
        };
        let Some(before) = before else {
            let mut iter = self.points.iter().peekable();
            while let Some((start, point)) = iter.next() {
                let next = iter.peek().map(|(n, _)| *n);
                rows.added
                    .push((region_key(start), self.region_document(start, point, next)));
            }
            return rows;
        };
        let (touched, removed) = touched_since(&before.points, &self.points);
        rows.removed = removed.iter().map(region_key).collect();
        for start in touched {
            let point = self.points.get(&start).expect("a touched start is a point");
            let next = self
                .points
                .range::<_, Start>((Bound::Excluded(&start), Bound::Unbounded))
                .next()
                .map(|(n, _)| n);
            let row = (
                region_key(&start),
                self.region_document(&start, point, next),
            );
            if before.points.contains_key(&start) {
                rows.changed.push(row);
            } else {
                rows.added.push(row);
            }
        }
        rows
    }

    /// The contract in force.
    pub fn contract(&self) -> &Contract {
        &self.contract
    }

    /// The identity of the contract in force.
    pub fn contract_identity(&self) -> &str {
        &self.contract_identity
    }

    /// The held position, if any.
    pub fn generation(&self) -> Option<&Position> {
        self.generation.as_ref()
    }

    /// The head of the publication chain, `None` before the first acceptance.
    pub fn publication_id(&self) -> Option<&str> {
        self.publication_id.as_deref()
    }

    /// How many regions the ledger has.
    pub fn region_count(&self) -> usize {
        self.points.len()
    }

    /// Whether nothing was ever accepted: one unknown region and no publication.
    pub fn is_untouched(&self) -> bool {
        self.publication_id.is_none() && self.points.len() == 1 && self.first_dates().is_none()
    }

    fn first_dates(&self) -> Option<Dates> {
        self.points.get_min().and_then(|(_, p)| p.dates())
    }

    /// The regions, in order, as a view of the points.
    pub fn regions(&self) -> Vec<Region> {
        self.regions_between(&Span::All)
    }

    /// The regions overlapping the closed window, cut to it (CLAIMS-03).
    pub fn regions_in(&self, window: &Window) -> Vec<Region> {
        self.regions_between(&self.span_of(window))
            .into_iter()
            .filter_map(|r| r.clip(window))
            .collect()
    }

    /// Every region in order, one at a time.
    pub(crate) fn for_each_region(&self, mut each: impl FnMut(Region)) {
        let mut iter = self.points.iter().peekable();
        while let Some((k, d)) = iter.next() {
            let next = iter.peek().map(|(n, _)| *n);
            each(region_at(k, d.dates(), next));
        }
    }

    fn regions_between(&self, span: &Span) -> Vec<Region> {
        let (first, end) = match span {
            Span::All => (Start::Min, None),
            Span::Part(lo, end) => (
                self.points
                    .get_prev(lo)
                    .map_or(Start::Min, |(k, _)| k.clone()),
                end.clone(),
            ),
        };
        let upper = end.as_ref().map_or(Bound::Unbounded, Bound::Excluded);
        let mut out = Vec::new();
        let mut iter = self
            .points
            .range::<_, Start>((Bound::Included(&first), upper))
            .peekable();
        while let Some((k, d)) = iter.next() {
            let next = match iter.peek() {
                Some((n, _)) => Some((*n).clone()),
                None => next_point(&self.points, k),
            };
            out.push(region_at(k, d.dates(), next.as_ref()));
        }
        out
    }

    fn span_of(&self, w: &Window) -> Span {
        Span::Part(Start::of(&w.low), w.high.successor().map(Start::At))
    }

    /// Admits `manifest` and returns the ledger it leaves (LEDGER-11): the manifest check
    /// (TRANS-01), then transitions 2 to 6 and 8. It never checks rows, replays or the clock
    /// (LEDGER-12); a refusal is a [`RejectedDelivery`] naming the rule.
    pub fn apply(&self, manifest: &Manifest) -> Result<Ledger, RejectedDelivery> {
        self.transition(manifest).map(|(ledger, _)| ledger)
    }

    /// Like [`Ledger::apply`], also returning the [`Transition`]: the plan, and the regions
    /// over the coverage afterwards.
    pub fn transition(
        &self,
        manifest: &Manifest,
    ) -> Result<(Ledger, Transition), RejectedDelivery> {
        let shape = manifest
            .check_against(&self.contract)
            .map_err(|problem| RejectedDelivery {
                check: "manifest",
                problem,
            })?;
        let span = match &manifest.window {
            Some(w) => self.span_of(w),
            None => Span::All,
        };
        let covered = self.regions_between(&span);
        self.admit(shape, manifest, &covered)?;
        let t = manifest.produced_at;
        let mut next = self.clone();
        next.changed();
        let effect = |d: Option<Dates>| -> Option<Dates> {
            let Some(old) = d else {
                // Only complete reads and the first append reach unknown regions.
                return Some(Dates::exact(t));
            };
            if shape.is_complete() || self.contract.is_keyless() {
                return Some(Dates::exact(t));
            }
            let deletions = match (shape.deletions, &manifest.since, shape.checkpoint) {
                (crate::shape::Deletions::Tombstone, Some(Since::Time(since)), _) => {
                    if old.deletions_as_of >= *since {
                        t
                    } else {
                        old.deletions_as_of
                    }
                }
                (
                    crate::shape::Deletions::Tombstone,
                    _,
                    Checkpoint::Generation | Checkpoint::Sequence,
                ) => {
                    if old.deletions_as_of == old.complete_as_of {
                        t
                    } else {
                        old.deletions_as_of
                    }
                }
                _ => old.deletions_as_of,
            };
            Some(Dates {
                complete_as_of: t,
                deletions_as_of: deletions,
            })
        };
        match &span {
            Span::All if shape.is_complete() || self.contract.is_keyless() => {
                next.points = OrdMap::unit(Start::Min, Point::new(Some(Dates::exact(t))));
            }
            Span::All => {
                let keys: Vec<Start> = next.points.keys().cloned().collect();
                for k in keys {
                    let d = next.points[&k].dates();
                    next.points.insert(k, Point::new(effect(d)));
                }
                next.merge(&Start::Min, None);
            }
            Span::Part(lo, end) => {
                next.split(lo);
                if let Some(e) = end {
                    next.split(e);
                }
                let upper = end.as_ref().map_or(Bound::Unbounded, Bound::Excluded);
                let keys: Vec<Start> = next
                    .points
                    .range::<_, Start>((Bound::Included(lo), upper))
                    .map(|(k, _)| k.clone())
                    .collect();
                for k in keys {
                    let d = next.points[&k].dates();
                    next.points.insert(k, Point::new(effect(d)));
                }
                next.merge(lo, end.as_ref());
            }
        }
        if let Some(g) = &manifest.generation {
            next.generation = Some(g.clone());
        }
        next.publication_id = Some(chain(
            self.publication_id.as_deref(),
            &self.contract_identity,
            &manifest.identity(),
        ));
        let regions = match &manifest.window {
            Some(w) => next.regions_in(w),
            None => next.regions(),
        };
        let plan = self.plan(shape, manifest);
        Ok((next, Transition { plan, regions }))
    }

    fn plan(&self, shape: &Shape, manifest: &Manifest) -> ApplyPlan {
        let key = self.contract.key.clone();
        let action = |kind, window| Action::new(kind, window, key.clone());
        let actions = if shape.is_complete() {
            match &manifest.window {
                Some(w) => vec![action(ActionKind::ReplaceWindow, Some(w.clone()))],
                None => vec![action(ActionKind::ReplaceAll, None)],
            }
        } else if self.contract.is_keyless() {
            vec![action(ActionKind::Append, None)]
        } else if shape.delivers_tombstones() {
            vec![
                action(ActionKind::Upsert, None),
                action(ActionKind::Tombstone, None),
            ]
        } else {
            vec![action(ActionKind::Upsert, None)]
        };
        ApplyPlan::new(actions)
    }

    /// Transitions 2 to 6 (TRANS-02 to TRANS-11).
    fn admit(
        &self,
        shape: &Shape,
        m: &Manifest,
        covered: &[Region],
    ) -> Result<(), RejectedDelivery> {
        let t = m.produced_at;
        for r in covered {
            if let Some(c) = r.complete_as_of() {
                if c >= t {
                    return Err(refuse(
                        "TRANS-02",
                        "produced_at",
                        t,
                        format!(
                            "region {} is already complete as of {c}; a delivery must be later than every known region it covers",
                            r.interval()
                        ),
                    ));
                }
            }
        }
        if shape.is_complete() {
            return Ok(());
        }
        let since = m.since.as_ref().expect("checked by the manifest check");
        if self.contract.is_keyless() && self.is_untouched() {
            let Since::Time(s) = since else {
                unreachable!("keyless appends are timestamp reads")
            };
            return match self.contract.start_at {
                Some(start) if start == *s => self.since_before(*s, t),
                Some(start) => Err(refuse(
                    "TRANS-05",
                    "since",
                    s,
                    format!("the first append on an untouched ledger starts at the contract's start_at, {start}"),
                )),
                None => Err(refuse(
                    "TRANS-05",
                    "since",
                    s,
                    "the first append on an untouched ledger starts at the contract's start_at, and this contract declares none; deliver a complete read first or declare start_at".into(),
                )),
            };
        }
        if let Some(r) = covered.iter().find(|r| r.is_unknown()) {
            return Err(refuse(
                "TRANS-04",
                "shape",
                format!("{:?}", m.shape),
                format!(
                    "a read of changes needs a base, and region {} is unknown; deliver a complete read of it first",
                    r.interval()
                ),
            ));
        }
        match (shape.checkpoint, since) {
            (Checkpoint::Timestamp, Since::Time(s)) => {
                self.since_before(*s, t)?;
                if self.contract.is_keyless() {
                    if let Some(r) = covered.iter().find(|r| r.complete_as_of() != Some(*s)) {
                        let levels = covered.windows(2).any(|w| w[0].complete_as_of() != w[1].complete_as_of());
                        return Err(refuse(
                            if levels { "TRANS-07" } else { "TRANS-06" },
                            "since",
                            s,
                            if levels {
                                "the table's regions are complete as of different instants, so no since fits them all; an append needs a complete whole-table delivery first".to_owned()
                            } else {
                                format!(
                                    "an append continues exactly where the table is complete; region {} is complete as of {}",
                                    r.interval(),
                                    r.complete_as_of().map_or("unknown".into(), |c| c.to_string())
                                )
                            },
                        ));
                    }
                } else if let Some(r) = covered.iter().find(|r| r.complete_as_of() < Some(*s)) {
                    return Err(refuse(
                        "TRANS-08",
                        "since",
                        s,
                        format!(
                            "region {} is complete only as of {}, so changes between then and since would be in no read; start no later than that",
                            r.interval(),
                            r.complete_as_of().map_or("unknown".into(), |c| c.to_string())
                        ),
                    ));
                }
                Ok(())
            }
            (Checkpoint::Generation, Since::Position(p)) => match &self.generation {
                Some(held) if held == p => Ok(()),
                held => Err(refuse(
                    "TRANS-09",
                    "since",
                    p,
                    format!(
                        "a generation read continues from the held generation ({}); a broken chain needs a complete whole-table delivery that issues a generation",
                        held.as_ref().map_or("none".into(), |h| h.to_string())
                    ),
                )),
            },
            (Checkpoint::Sequence, Since::Position(Position::Sequence(s))) => {
                let g = match &m.generation {
                    Some(Position::Sequence(g)) => *g,
                    _ => unreachable!("checked by the manifest check"),
                };
                match &self.generation {
                    Some(Position::Sequence(p)) if s <= p && p <= &g => Ok(()),
                    Some(Position::Sequence(p)) => Err(refuse(
                        "TRANS-10",
                        "since",
                        format!("{s} (generation {g})"),
                        format!("a sequence read may reread but never skip or go back: it needs since <= {p} <= generation, {p} being the held position"),
                    )),
                    held => Err(refuse(
                        "TRANS-11",
                        "since",
                        s,
                        format!(
                            "a sequence read continues from a held integer position, and the ledger holds {}; deliver a complete whole-table read that issues one",
                            held.as_ref().map_or("none".into(), |h| format!("the opaque {h}"))
                        ),
                    )),
                }
            }
            _ => unreachable!("the manifest check matches since to the checkpoint"),
        }
    }

    fn since_before(&self, since: Timestamp, t: Timestamp) -> Result<(), RejectedDelivery> {
        since_not_after(since, t)
    }

    fn split(&mut self, at: &Start) {
        if !self.points.contains_key(at) {
            let Some((before, d)) = self
                .points
                .get_prev(at)
                .map(|(k, p)| (k.clone(), p.dates()))
            else {
                unreachable!("the first point is the domain's least value")
            };
            // `before` now ends below `at`: a new point, so its bytes are written again.
            self.points.insert(before, Point::new(d));
            self.points.insert(at.clone(), Point::new(d));
        }
    }

    /// Removes the points in `[from, to]` whose evidence equals their predecessor's
    /// (LEDGER-09).
    fn merge(&mut self, from: &Start, to: Option<&Start>) {
        let upper = to.map_or(Bound::Unbounded, Bound::Included);
        let keys: Vec<Start> = self
            .points
            .range::<_, Start>((Bound::Included(from), upper))
            .map(|(k, _)| k.clone())
            .collect();
        let mut previous = self
            .points
            .range::<_, Start>((Bound::Unbounded, Bound::Excluded(from)))
            .next_back()
            .map(|(k, p)| (k.clone(), p.dates()));
        let mut extended = Vec::new();
        for k in keys {
            let d = self.points[&k].dates();
            match &previous {
                Some((before, pd)) if k != Start::Min && *pd == d => {
                    self.points.remove(&k);
                    if extended.last() != Some(before) {
                        extended.push(before.clone());
                    }
                }
                _ => previous = Some((k, d)),
            }
        }
        // A point whose region now reaches further is new, so its bytes are written again.
        for k in extended {
            let d = self.points[&k].dates();
            self.points.insert(k, Point::new(d));
        }
    }

    /// The same ledger under a new contract (EVOL-07): regions, position and head are kept.
    /// Once the table has history (an accepted delivery), a contract that changes a fixed field
    /// is refused (EVOL-01, EVOL-02).
    pub fn with_contract(&self, contract: Contract) -> Result<Ledger, InvalidContract> {
        if self.publication_id.is_some() {
            if let Some((field, old, new)) = self.contract.fixed_field_change(&contract) {
                return Err(invalid(
                    field,
                    new,
                    "EVOL-01",
                    format!("the table has history, so this field is fixed at {old}; a new table needs a new ledger"),
                ));
            }
        }
        let (contract_identity, contract_jcs) = contract_identity(&contract);
        let mut next = self.clone();
        next.changed();
        if self.contract.window_type() != contract.window_type() {
            next.points = OrdMap::unit(Start::Min, Point::new(None));
        }
        next.contract = Arc::new(contract);
        next.contract_identity = contract_identity;
        next.contract_jcs = contract_jcs;
        Ok(next)
    }

    /// A ledger from its wire parts, checking that the regions partition the domain in the
    /// canonical spelling (LEDGER-03, LEDGER-09, DOMAIN-15, DOMAIN-16).
    pub fn from_parts(
        contract: Contract,
        regions: Vec<Region>,
        generation: Option<Position>,
        publication_id: Option<String>,
    ) -> Result<Ledger, InvalidContract> {
        let mut parts = Parts::new(contract);
        for r in regions {
            parts.push(r)?;
        }
        parts.finish(generation, publication_id)
    }
}

/// [`Ledger::from_parts`] one region at a time, so that a reader need not hold the regions:
/// the same checks in the same order, with the same messages.
pub(crate) struct Parts {
    contract: Contract,
    window_type: Option<LogicalType>,
    points: OrdMap<Start, Point>,
    previous: Option<Region>,
    count: usize,
}

impl Parts {
    pub(crate) fn new(contract: Contract) -> Parts {
        Parts {
            window_type: contract.window_type(),
            contract,
            points: OrdMap::new(),
            previous: None,
            count: 0,
        }
    }

    /// The next region, checked against the one before it.
    pub(crate) fn push(&mut self, r: Region) -> Result<(), InvalidContract> {
        let i = self.count;
        let at = |i: usize, f: &str| format!("regions[{i}].{f}");
        let window_type = self.window_type;
        for (f, v) in [("low", &r.low), ("high", &r.high)] {
            if let Some(v) = v {
                if Some(v.logical_type()) != window_type || !v.in_domain() {
                    return Err(invalid(
                        at(i, f),
                        v,
                        "LEDGER-03",
                        format!(
                            "region bounds are values of the window column ({})",
                            window_type.map_or("none".into(), |t: LogicalType| t.to_string())
                        ),
                    ));
                }
            }
        }
        let start = match (&self.previous, &r.low) {
            (None, None) => Start::Min,
            (None, Some(v)) => {
                return Err(invalid(
                    at(i, "low"),
                    v,
                    "LEDGER-03",
                    "the first region is unbounded below",
                ))
            }
            (Some(_), None) => {
                return Err(invalid(
                    at(i, "low"),
                    "None",
                    "LEDGER-03",
                    "only the first region is unbounded below",
                ))
            }
            (Some(p), Some(v)) => {
                if r.low_open || v.is_min() {
                    return Err(invalid(
                        at(i, "low_open"),
                        r.low_open,
                        "DOMAIN-15",
                        "a region's low end is stored closed and is not the domain's least value",
                    ));
                }
                let expected = match v.predecessor() {
                    Some(pv) => (Some(pv), false),
                    None => (Some(v.clone()), true),
                };
                if (p.high.clone(), p.high_open) != expected {
                    return Err(invalid(
                        at(i - 1, "high"),
                        p.high.as_ref().map_or("None".into(), |h| h.to_string()),
                        "LEDGER-03",
                        format!("regions are contiguous in the canonical spelling: the region before {v} ends just below it"),
                    ));
                }
                if p.dates == r.dates {
                    return Err(invalid(
                        at(i, "complete_as_of"),
                        r.complete_as_of().map_or("None".into(), |c| c.to_string()),
                        "LEDGER-09",
                        "neighbouring regions with equal dates are merged",
                    ));
                }
                Start::At(v.clone())
            }
        };
        // Regions arrive in order, so each point goes at the end of the map.
        self.points.insert(start, Point::new(r.dates));
        self.previous = Some(r);
        self.count += 1;
        Ok(())
    }

    /// The ledger, once every region is in.
    pub(crate) fn finish(
        self,
        generation: Option<Position>,
        publication_id: Option<String>,
    ) -> Result<Ledger, InvalidContract> {
        let at = |i: usize, f: &str| format!("regions[{i}].{f}");
        let Some(last) = &self.previous else {
            return Err(invalid(
                "regions",
                "[]",
                "LEDGER-03",
                "regions cover the whole domain; there is at least one",
            ));
        };
        if last.high.is_some() {
            return Err(invalid(
                at(self.count - 1, "high"),
                last.high.as_ref().map_or(String::new(), |h| h.to_string()),
                "LEDGER-03",
                "the last region is unbounded above",
            ));
        }
        if self.window_type.is_none() && self.count != 1 {
            return Err(invalid(
                "regions",
                self.count,
                "LEDGER-08",
                "a table without a window column has one region",
            ));
        }
        if let Some(p) = &publication_id {
            if !crate::contract::is_sha256_hex(p) {
                return Err(invalid(
                    "publication_id",
                    dogana_json::quoted(p, dogana_json::SHOWN),
                    "RECV-15",
                    "a chain head is 64 lowercase hexadecimal characters",
                ));
            }
        }
        let contract = self.contract;
        let (contract_identity, contract_jcs) = contract_identity(&contract);
        Ok(Ledger {
            contract: Arc::new(contract),
            contract_identity,
            contract_jcs,
            points: self.points,
            generation,
            publication_id,
            identity: OnceLock::new(),
            runs: OnceLock::new(),
            inherited: None,
        })
    }
}

/// The starts of `now`'s regions whose bytes may differ from `before`'s, and the starts
/// `before` had that `now` has not. A region depends on its point and on where the next region
/// starts: it differs when its point is new or changed, or when the point after it is new or
/// gone. `diff` skips the subtrees the two maps share, so a delivery that changed a few points
/// costs a few steps, not a walk over every region.
fn touched_since(
    before: &OrdMap<Start, Point>,
    now: &OrdMap<Start, Point>,
) -> (std::collections::BTreeSet<Start>, Vec<Start>) {
    let before_of = |k: &Start| {
        now.range::<_, Start>((Bound::Unbounded, Bound::Excluded(k)))
            .next_back()
            .map(|(p, _)| p.clone())
    };
    let mut touched = std::collections::BTreeSet::new();
    let mut removed = Vec::new();
    for item in before.diff(now) {
        match item {
            imbl::ordmap::DiffItem::Add(k, _) => {
                touched.insert(k.clone());
                touched.extend(before_of(k));
            }
            imbl::ordmap::DiffItem::Update { new: (k, _), .. } => {
                touched.insert(k.clone());
            }
            imbl::ordmap::DiffItem::Remove(k, _) => {
                removed.push(k.clone());
                touched.extend(before_of(k));
            }
        }
    }
    (touched, removed)
}

/// The first point strictly after `k`.
fn next_point(points: &OrdMap<Start, Point>, k: &Start) -> Option<Start> {
    points
        .range::<_, Start>((Bound::Excluded(k), Bound::Unbounded))
        .next()
        .map(|(k, _)| k.clone())
}

/// The contract's identity and the RFC 8785 text it hashes, which the ledger's identity embeds.
fn contract_identity(contract: &Contract) -> (Arc<str>, Arc<[u8]>) {
    use crate::wire::WriteText;
    let jcs = contract.identity_text().into_bytes();
    (hex(&Sha256::digest(&jcs)).into(), jcs.into())
}
