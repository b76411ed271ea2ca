//! # dogana-show: one HTML page of dogana tables
//!
//! [`render`] turns, for one or several tables, the ledger a receiver holds and the table's
//! receipts in the order they were stored into one self-contained HTML page (styles, data and
//! script inline; nothing is fetched): the regions along the window column's domain coloured by
//! their state at the reader's time, the history replayed from the accepted receipts
//! (`Ledger::follow`, one step per acceptance) on a timeline to scrub or click, the refusals with
//! their failed checks, the tables' common exact instant over time (`Group::claims`), and
//! whether the stored ledger is the fold of its receipts (as `dogana verify` says).
//!
//! It is pure: no file, no clock. The command line (`dogana show`) reads the store and writes
//! the file.
//!
//! ## How a large history stays small
//!
//! The data is one compact JSON document (columns of numbers, never one object per region).
//! A step stores only what changed: the points of the ledger inside the delivery's coverage
//! (and at its two seams), as the ledger itself stores them, so 10,000 window deliveries cost
//! what they change, not 10,000 copies of the ledger. The page draws one band per region that
//! is at least a pixel wide and one aggregate band (the worst state, and how many regions) per
//! pixel column of narrower ones; the timeline is a canvas. Every value from the data reaches
//! the page as JSON inside a `<script type="application/json">` element with `<`, `>`, `&`,
//! U+2028 and U+2029 escaped, and the script writes it with `textContent`, never as markup.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use dogana::{
    Coverage, Dates, Duration, Group, Ledger, Outcome, Receipt, Region, State, Timestamp, Value,
    Wire,
};
use serde_json::{json, Value as Json};

const CSS: &str = include_str!("../assets/show.css");
const JS: &str = include_str!("../assets/show.js");

/// One table to show: the ledger the receiver holds for it (`None` when it has none stored,
/// as before a first acceptance) and every receipt of the table, accepted and rejected, in the
/// order they were stored.
#[derive(Debug, Clone)]
pub struct TableHistory {
    /// The stored ledger, if any.
    pub ledger: Option<Ledger>,
    /// The table's receipts in stored order; the first is number 1.
    pub receipts: Vec<Receipt>,
}

impl TableHistory {
    /// The table: the stored ledger's, else the first receipt's.
    pub fn table(&self) -> Option<&str> {
        match &self.ledger {
            Some(l) => Some(l.contract().table()),
            None => self.receipts.first().map(Receipt::table),
        }
    }
}

/// The reader's side of the page: the time the states are taken at and the freshness limit
/// (`Duration::MAX` expires nothing), as `dogana claims` takes them.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// The reader's time.
    pub at: Timestamp,
    /// The freshness limit.
    pub limit: Duration,
    /// How many regions the fold may hash, summed over the accepted receipts, for the page to
    /// check it with `Ledger::from_receipts`; [`FOLD_BUDGET`] by default.
    pub fold_budget: usize,
}

impl Options {
    /// The reader's time and limit, with the default [`FOLD_BUDGET`].
    pub fn new(at: Timestamp, limit: Duration) -> Options {
        Options {
            at,
            limit,
            fold_budget: FOLD_BUDGET,
        }
    }
}

/// Why no page can be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShowError {
    /// No table was given.
    NoTables,
    /// A table has no receipt: there is no history to show.
    EmptyHistory {
        /// The table, as far as it can be named.
        table: String,
    },
    /// Two tables of one page have the same name.
    RepeatedTable {
        /// The table.
        table: String,
    },
}

impl fmt::Display for ShowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShowError::NoTables => f.write_str("no table to show"),
            ShowError::EmptyHistory { table } => {
                write!(
                    f,
                    "table {table:?} has no receipt, so it has no history to show"
                )
            }
            ShowError::RepeatedTable { table } => write!(f, "table {table:?} is named twice"),
        }
    }
}

impl std::error::Error for ShowError {}

/// A point of a ledger: where a region starts (`None`: at the least value of the domain).
type Key = Option<Value>;

fn key_of(v: Option<&Value>) -> Key {
    v.filter(|v| !v.is_min()).cloned()
}

/// The state code the page uses: the order of [`State`], worst first.
fn state_code(s: State) -> u8 {
    match s {
        State::Unknown => 0,
        State::Expired => 1,
        State::Patched => 2,
        State::Complete => 3,
    }
}

fn state_of(dates: Option<Dates>, o: &Options) -> State {
    let region = Region::new(
        None,
        None,
        true,
        true,
        dates.map(Dates::complete_as_of),
        dates.map(Dates::deletions_as_of),
    )
    .expect("an unbounded region with valid dates");
    State::of(&region, o.at, o.limit)
}

/// One step of the history: the ledger after an accepted receipt, as the points that changed.
struct Step {
    receipt: usize,
    /// The points from `lo` to `hi` inclusive are replaced (`hi` `None`: to the end).
    lo: Key,
    hi: Option<Value>,
    points: Vec<(Key, Option<Dates>)>,
    ledger: Ledger,
}

/// Everything the page says of one table, before the values are numbered.
struct TableModel {
    name: String,
    column: Option<String>,
    window_type: Option<String>,
    now: Vec<(Key, Option<Dates>, State)>,
    summary: String,
    verify: String,
    problems: Vec<String>,
    notes: Vec<String>,
    steps: Vec<Step>,
    /// For each receipt, its step.
    step_of: Vec<Option<usize>>,
    receipts: Vec<Receipt>,
    current: Ledger,
}

fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}

fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// The points of `ledger` (all of them).
fn points_of(ledger: &Ledger) -> BTreeMap<Key, Option<Dates>> {
    ledger
        .regions()
        .into_iter()
        .map(|r| (key_of(r.low()), r.dates()))
        .collect()
}

/// How many regions the identities of a fold may hash, summed over its receipts, before the
/// page checks the chain alone (see [`follow_chain`]): about two seconds of hashing.
pub const FOLD_BUDGET: usize = 2_000_000;

/// `Ledger::follow` but for the identity of the ledger each receipt leaves: the receipt is an
/// acceptance, continues this ledger's chain, moves it to its contract, is admitted
/// (`Ledger::apply`), and names the head that gives. That identity hashes the whole ledger, so
/// checking it at every receipt costs regions × receipts; the page checks it by
/// `Ledger::from_receipts` when that stays within [`FOLD_BUDGET`], and at the last receipt
/// otherwise.
fn follow_chain(prev: &Ledger, r: &Receipt) -> Result<Ledger, String> {
    if r.outcome() != Outcome::Accepted {
        return Err(format!(
            "receipt outcome {} publishes nothing (RECV-18)",
            r.outcome()
        ));
    }
    if r.base_publication_id() != prev.publication_id() {
        return Err(format!(
            "base_publication_id = {}: the receipt continues another head; this ledger's head is {} (RECV-17)",
            r.base_publication_id().unwrap_or("None"),
            prev.publication_id().unwrap_or("None")
        ));
    }
    let under = if r.contract() == prev.contract() {
        prev.clone()
    } else {
        prev.with_contract(r.contract().clone()).map_err(|e| {
            format!("the receipt's contract cannot follow this ledger's: {e} (RECV-20)")
        })?
    };
    let next = under
        .apply(r.manifest())
        .map_err(|e| format!("this ledger does not admit the receipt's manifest: {e} (RECV-17)"))?;
    if next.publication_id() != Some(r.publication_id()) {
        return Err(format!(
            "publication_id = {}: applying the receipt gives head {} (RECV-17)",
            r.publication_id(),
            next.publication_id().unwrap_or("None")
        ));
    }
    Ok(next)
}

/// Replays the accepted receipts from a new ledger; stops at the first that does not follow.
fn replay(receipts: &[Receipt]) -> (Vec<Step>, Option<String>) {
    let mut steps = Vec::new();
    let mut ledger: Option<Ledger> = None;
    let mut mirror: BTreeMap<Key, Option<Dates>> = BTreeMap::new();
    for (i, r) in receipts.iter().enumerate() {
        if r.outcome() != Outcome::Accepted {
            continue;
        }
        let prev = match ledger.take() {
            Some(l) => l,
            None => {
                let l = Ledger::new(r.contract().clone());
                mirror = points_of(&l);
                l
            }
        };
        let next = match follow_chain(&prev, r) {
            Ok(n) => n,
            Err(e) => {
                return (
                    steps,
                    Some(format!(
                        "receipt {} does not follow the ledger before it, so the history stops there: {e}",
                        i + 1
                    )),
                )
            }
        };
        let m = r.manifest();
        let whole = r
            .contract()
            .shape(m.shape())
            .is_none_or(|s| s.coverage() == Coverage::Table);
        let step = match m.window() {
            Some(w) if !whole => {
                let lo = key_of(Some(&w.low));
                let hi = w.high.successor();
                let after = hi.as_ref().and_then(|h| {
                    mirror
                        .range(..=Some(h.clone()))
                        .next_back()
                        .map(|(_, d)| *d)
                });
                let doomed: Vec<Key> = match &hi {
                    Some(h) => mirror
                        .range(lo.clone()..=Some(h.clone()))
                        .map(|(k, _)| k.clone())
                        .collect(),
                    None => mirror.range(lo.clone()..).map(|(k, _)| k.clone()).collect(),
                };
                for k in doomed {
                    mirror.remove(&k);
                }
                let pieces = next.regions_in(w);
                let first = pieces.first().map(|p| key_of(p.low()));
                for p in &pieces {
                    mirror.insert(key_of(p.low()), p.dates());
                }
                let mut seams: Vec<Key> = first.into_iter().collect();
                if let (Some(h), Some(d)) = (&hi, after) {
                    mirror.insert(Some(h.clone()), d);
                    seams.push(Some(h.clone()));
                }
                for k in seams {
                    let here = mirror.get(&k).copied();
                    let before = mirror.range(..k.clone()).next_back().map(|(_, d)| *d);
                    if here.is_some() && before == here {
                        mirror.remove(&k);
                    }
                }
                let points = match &hi {
                    Some(h) => mirror.range(lo.clone()..=Some(h.clone())),
                    None => mirror.range(lo.clone()..),
                }
                .map(|(k, d)| (k.clone(), *d))
                .collect();
                Step {
                    receipt: i,
                    lo,
                    hi,
                    points,
                    ledger: next.clone(),
                }
            }
            _ => {
                mirror = points_of(&next);
                Step {
                    receipt: i,
                    lo: None,
                    hi: None,
                    points: mirror.iter().map(|(k, d)| (k.clone(), *d)).collect(),
                    ledger: next.clone(),
                }
            }
        };
        debug_assert!(
            next.region_count() > 1000 || mirror == points_of(&next),
            "the page's points are the ledger's after receipt {}",
            i + 1
        );
        steps.push(step);
        ledger = Some(next);
    }
    (steps, None)
}

fn model(history: &TableHistory, o: &Options) -> Result<TableModel, ShowError> {
    let name = history.table().unwrap_or("").to_owned();
    if history.receipts.is_empty() {
        return Err(ShowError::EmptyHistory { table: name });
    }
    let receipts = history.receipts.clone();
    let accepted: Vec<&Receipt> = receipts
        .iter()
        .filter(|r| r.outcome() == Outcome::Accepted)
        .collect();
    // As `dogana verify` does (RECV-12, RECOVERY-01).
    let mut problems = Vec::new();
    for (i, r) in receipts.iter().enumerate() {
        if r.table() != name {
            problems.push(format!(
                "receipt {} is filed under {name:?} but is of table {:?}",
                i + 1,
                r.table()
            ));
        }
    }
    let contract = history
        .ledger
        .as_ref()
        .map(|l| l.contract().clone())
        .or_else(|| accepted.last().map(|r| r.contract().clone()));
    let (steps, stopped) = replay(&receipts);
    let hashed: usize = steps.iter().map(|s| s.ledger.region_count()).sum();
    let budget = o.fold_budget;
    let mut notes = Vec::new();
    let rebuilt = match &contract {
        None => None,
        Some(_) if hashed > budget => {
            // The chain was checked at every receipt; the identity at the last one.
            match (&stopped, steps.last()) {
                (Some(s), _) => {
                    problems.push(format!(
                        "the accepted receipts do not fold into a ledger (RECV-20): {s}"
                    ));
                    None
                }
                (None, last) => {
                    let fold = last.map_or_else(
                        || Ledger::new(contract.clone().expect("a contract")),
                        |s| s.ledger.clone(),
                    );
                    if let Some(s) = last {
                        let r = &receipts[s.receipt];
                        let id = fold.identity();
                        if id != r.ledger_identity() {
                            problems.push(format!(
                                "the accepted receipts do not fold into a ledger (RECV-20): receipt {}: ledger_identity = {}: applying the receipt leaves ledger {id} (RECV-17)",
                                s.receipt + 1,
                                r.ledger_identity()
                            ));
                        }
                    }
                    notes.push(format!(
                        "the chain of every accepted receipt is checked, and the identity of the ledger the last one leaves; the identities the {} others name are not (that hashes {hashed} regions): dogana verify checks them",
                        steps.len().saturating_sub(1)
                    ));
                    match &contract {
                        Some(c) if fold.contract() != c => fold.with_contract(c.clone()).ok(),
                        _ => Some(fold),
                    }
                }
            }
        }
        Some(c) => match Ledger::from_receipts(c.clone(), accepted.iter().copied()) {
            Ok(l) => Some(l),
            Err(e) => {
                problems.push(format!(
                    "the accepted receipts do not fold into a ledger (RECV-20): {e}"
                ));
                None
            }
        },
    };
    match (&history.ledger, &rebuilt) {
        (None, Some(_)) if !accepted.is_empty() => problems.push(format!(
            "{} accepted receipts and no stored ledger",
            accepted.len()
        )),
        (Some(s), Some(r)) if s != r || s.to_json() != r.to_json() => problems.push(format!(
            "the stored ledger {} differs from the fold of the accepted receipts {} (RECV-12)",
            s.identity(),
            r.identity()
        )),
        _ => {}
    }
    let counts = format!(
        "{}, {} accepted",
        count(receipts.len(), "receipt"),
        accepted.len()
    );
    let verify = if problems.is_empty() {
        match &history.ledger {
            Some(l) => format!(
                "{name}: ok: {counts}; ledger {} is the fold of the accepted receipts",
                short(&l.identity())
            ),
            None => format!("{name}: ok: {counts}; no ledger: nothing accepted yet"),
        }
    } else {
        format!("{name}: {}: {counts}", count(problems.len(), "problem"))
    };

    if let Some(s) = stopped {
        if hashed <= budget {
            notes.push(s);
        }
    }
    let mut step_of = vec![None; receipts.len()];
    for (k, s) in steps.iter().enumerate() {
        step_of[s.receipt] = Some(k);
    }

    let current = match &history.ledger {
        Some(l) => l.clone(),
        None => Ledger::new(receipts[receipts.len() - 1].contract().clone()),
    };
    let claims = current
        .claims(o.at, o.limit, None)
        .expect("claims without a window");
    let now = claims
        .regions()
        .iter()
        .map(|c| (key_of(c.region().low()), c.region().dates(), c.state()))
        .collect();
    let contract = current.contract();
    Ok(TableModel {
        summary: claims.summary(&name),
        name,
        column: contract.window_column().map(str::to_owned),
        window_type: contract.window_type().map(|t| t.name().to_owned()),
        now,
        verify,
        problems,
        notes,
        steps,
        step_of,
        receipts,
        current,
    })
}

/// Numbers the values of one table's points in order.
struct Dictionary {
    index: BTreeMap<Value, usize>,
}

impl Dictionary {
    fn new(t: &TableModel) -> Dictionary {
        let mut all = BTreeSet::new();
        for (k, _, _) in &t.now {
            all.extend(k.clone());
        }
        for s in &t.steps {
            all.extend(s.lo.clone());
            all.extend(s.hi.clone());
            for (k, _) in &s.points {
                all.extend(k.clone());
            }
        }
        Dictionary {
            index: all.into_iter().enumerate().map(|(i, v)| (v, i)).collect(),
        }
    }

    fn key(&self, k: &Key) -> i64 {
        match k {
            None => -1,
            Some(v) => self.index[v] as i64,
        }
    }

    /// The values' texts, the text of a region's high end just before each, and the axis
    /// coordinate of each. Integers send their coordinate alone: the page writes `n` and
    /// `n-1]` (the least integer is the domain's minimum, never a point here).
    fn columns(&self) -> (Json, Json, Json) {
        if self
            .index
            .keys()
            .next()
            .is_some_and(|v| matches!(v, Value::Int(_)))
        {
            let xs = self
                .index
                .keys()
                .map(|v| match v {
                    Value::Int(i) => Json::from(*i),
                    _ => unreachable!("one type per window column"),
                })
                .collect();
            return (Json::Null, Json::Null, Json::Array(xs));
        }
        let mut vals = Vec::with_capacity(self.index.len());
        let mut ends = Vec::with_capacity(self.index.len());
        let mut xs = Vec::with_capacity(self.index.len());
        for (rank, v) in self.index.keys().enumerate() {
            vals.push(Json::from(v.to_string()));
            // As the ledger spells a region ending just before v: closed at its predecessor,
            // else open at v (a string has none).
            ends.push(Json::from(match v.predecessor() {
                Some(p) => format!("{p}]"),
                None => format!("{v})"),
            }));
            xs.push(match v {
                Value::Int(i) => Json::from(*i),
                Value::Date(d) => Json::from(d.days_since_epoch()),
                Value::Datetime(t) => Json::from(t.as_micros() as f64 / 1e6),
                Value::Str(_) => Json::from(rank),
            });
        }
        (Json::Array(vals), Json::Array(ends), Json::Array(xs))
    }
}

/// Numbers the timestamps of every table in time order.
#[derive(Default)]
struct Times {
    index: BTreeMap<Timestamp, usize>,
}

impl Times {
    fn add(&mut self, d: Option<Dates>) {
        if let Some(d) = d {
            self.index.insert(d.complete_as_of(), 0);
            self.index.insert(d.deletions_as_of(), 0);
        }
    }

    fn number(&mut self) {
        for (i, v) in self.index.values_mut().enumerate() {
            *v = i;
        }
    }

    fn of(&self, t: Option<Timestamp>) -> i64 {
        t.map_or(-1, |t| self.index[&t] as i64)
    }
}

fn columns(
    points: impl Iterator<Item = (i64, Option<Dates>, State)>,
    times: &Times,
) -> serde_json::Map<String, Json> {
    let (mut p, mut c, mut d, mut s) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (k, dates, state) in points {
        p.push(Json::from(k));
        c.push(Json::from(times.of(dates.map(Dates::complete_as_of))));
        d.push(Json::from(times.of(dates.map(Dates::deletions_as_of))));
        s.push(Json::from(state_code(state)));
    }
    let mut m = serde_json::Map::new();
    m.insert("p".into(), Json::Array(p));
    m.insert("c".into(), Json::Array(c));
    m.insert("d".into(), Json::Array(d));
    m.insert("s".into(), Json::Array(s));
    m
}

/// The texts of a table's checks, each once: a check is `[name, passed, detail]` as indices.
#[derive(Default)]
struct Strings {
    index: BTreeMap<String, usize>,
    list: Vec<Json>,
}

impl Strings {
    fn of(&mut self, s: &str) -> usize {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.list.len();
        self.index.insert(s.to_owned(), i);
        self.list.push(Json::from(s));
        i
    }
}

/// A timestamp's text without the `+00:00` every one ends with (the page puts it back).
fn utc(t: Timestamp) -> String {
    let text = t.to_string();
    match text.strip_suffix("+00:00") {
        Some(s) => s.to_owned(),
        None => text,
    }
}

/// The receipts as columns, each text once in `strs` (the page rebuilds one object per
/// receipt): outcome, shape, coverage, source, plan and since as indices (-1: none); produced
/// and received as UTC text; the checks as `name, passed, detail` triples, flattened.
fn receipts_json(receipts: &[Receipt], step_of: &[Option<usize>], strs: &mut Strings) -> Json {
    let n = receipts.len();
    let mut cols: Vec<(&str, Vec<Json>)> = [
        "o", "shape", "cov", "pa", "ra", "src", "plan", "since", "rows", "tomb", "pid", "base",
        "checks", "step",
    ]
    .iter()
    .map(|k| (*k, Vec::with_capacity(n)))
    .collect();
    let opt = |s: Option<String>, strs: &mut Strings| -> Json {
        s.map_or(Json::from(-1), |s| Json::from(strs.of(&s)))
    };
    for (i, r) in receipts.iter().enumerate() {
        let m = r.manifest();
        let whole = r
            .contract()
            .shape(m.shape())
            .is_none_or(|s| s.coverage() == Coverage::Table);
        let coverage = match m.window() {
            Some(w) if !whole => format!("window {w}"),
            _ => "whole table".to_owned(),
        };
        let plan = r.transition().map(|t| {
            t.plan()
                .actions()
                .iter()
                .map(|a| match a.window() {
                    Some(w) => format!("{} {w}", a.kind()),
                    None => a.kind().to_string(),
                })
                .collect::<Vec<_>>()
                .join(", ")
        });
        let mut checks = Vec::with_capacity(3 * r.checks().len());
        for c in r.checks() {
            checks.push(Json::from(strs.of(c.name())));
            checks.push(Json::from(u8::from(c.passed())));
            checks.push(Json::from(strs.of(c.detail())));
        }
        let row = [
            Json::from(strs.of(r.outcome().name())),
            Json::from(strs.of(m.shape())),
            Json::from(strs.of(&coverage)),
            Json::from(utc(m.produced_at())),
            Json::from(utc(r.received_at())),
            opt(r.source().map(str::to_owned), strs),
            opt(plan, strs),
            opt(m.since().map(|s| s.to_string()), strs),
            Json::from(m.rows()),
            Json::from(m.tombstones()),
            Json::from(short(r.publication_id())),
            r.base_publication_id()
                .map_or(Json::Null, |b| Json::from(short(b))),
            Json::Array(checks),
            Json::from(step_of[i].map_or(-1, |s| s as i64)),
        ];
        for ((_, col), v) in cols.iter_mut().zip(row) {
            col.push(v);
        }
    }
    Json::Object(
        cols.into_iter()
            .map(|(k, v)| (k.to_owned(), Json::Array(v)))
            .collect(),
    )
}

/// The exact instant shared by every ledger, by the core's group claims (GROUP-01); `None`
/// when there is none. An exact ledger has one region (neighbours with equal dates are
/// merged), so a ledger with more regions answers `None` without building its claims.
fn group_exact(ledgers: &[&Ledger], o: &Options) -> Option<Timestamp> {
    if ledgers.iter().any(|l| l.region_count() != 1) {
        return None;
    }
    let group = Group::new(ledgers.iter().map(|l| l.contract().clone())).ok()?;
    let owned: Vec<Ledger> = ledgers.iter().map(|l| (*l).clone()).collect();
    group
        .claims(&owned, o.at, o.limit, None)
        .ok()?
        .exact_as_of()
}

/// Every string in `value` (keys too) through [`dogana::shown`]: written on the page with
/// `textContent`, a control, line separator or bidirectional control would act there (reorder
/// a name, break a line); its escape is shown instead, as on the command line.
fn shown_strings(value: &mut Json) {
    match value {
        Json::String(s) => {
            if let std::borrow::Cow::Owned(e) = dogana::shown(s) {
                *s = e;
            }
        }
        Json::Array(a) => a.iter_mut().for_each(shown_strings),
        Json::Object(o) => {
            if o.keys().any(|k| dogana::shown(k) != k.as_str()) {
                let old = std::mem::take(o);
                for (k, v) in old {
                    o.insert(dogana::shown(&k).into_owned(), v);
                }
            }
            o.values_mut().for_each(shown_strings);
        }
        _ => {}
    }
}

/// Escapes text for HTML element content and attribute values.
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// JSON text safe inside a `<script>` element: `<`, `>`, `&`, U+2028 and U+2029 written as
/// `\u` escapes. They occur only inside JSON strings, where the escape means the same.
pub fn script_json(value: &Json) -> String {
    let text = value.to_string();
    let mut out = String::with_capacity(text.len() + 16);
    for ch in text.chars() {
        match ch {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

fn limit_text(limit: Duration) -> Option<String> {
    if limit == Duration::MAX {
        return None;
    }
    let days = limit.as_micros() as f64 / 86_400e6;
    Some(format!("{days} days"))
}

/// The page's data: everything the script draws, as one JSON document.
pub fn data(tables: &[TableHistory], options: &Options) -> Result<Json, ShowError> {
    if tables.is_empty() {
        return Err(ShowError::NoTables);
    }
    let models = tables
        .iter()
        .map(|t| model(t, options))
        .collect::<Result<Vec<_>, _>>()?;
    for (i, m) in models.iter().enumerate() {
        if models[..i].iter().any(|o| o.name == m.name) {
            return Err(ShowError::RepeatedTable {
                table: m.name.clone(),
            });
        }
    }

    // Every receipt of every table on one time axis: each table's in stored order, the
    // tables merged by received_at (the earliest next receipt first; ties by table order).
    let mut events: Vec<(Timestamp, usize, usize)> = Vec::new();
    let mut next = vec![0usize; models.len()];
    loop {
        let pick = (0..models.len())
            .filter(|&t| next[t] < models[t].receipts.len())
            .min_by_key(|&t| (models[t].receipts[next[t]].received_at(), t));
        let Some(t) = pick else { break };
        events.push((models[t].receipts[next[t]].received_at(), t, next[t]));
        next[t] += 1;
    }

    // The common exact instant after each event, from each table's replayed ledger.
    let mut at_step: Vec<Option<usize>> = vec![None; models.len()];
    let mut group_after: Vec<Option<Timestamp>> = Vec::with_capacity(events.len());
    for &(_, t, i) in &events {
        if let Some(k) = models[t].step_of[i] {
            at_step[t] = Some(k);
        }
        let ledgers: Option<Vec<&Ledger>> = at_step
            .iter()
            .zip(&models)
            .map(|(k, m)| k.map(|k| &m.steps[k].ledger))
            .collect();
        group_after.push(ledgers.and_then(|l| group_exact(&l, options)));
    }
    let currents: Vec<&Ledger> = models.iter().map(|m| &m.current).collect();
    let group_now = group_exact(&currents, options);
    let group_ok = Group::new(currents.iter().map(|l| l.contract().clone())).is_ok();

    let mut times = Times::default();
    for m in &models {
        for (_, d, _) in &m.now {
            times.add(*d);
        }
        for s in &m.steps {
            for (_, d) in &s.points {
                times.add(*d);
            }
        }
    }
    for p in group_after.iter().chain([&group_now]).flatten() {
        times.add(Some(Dates::exact(*p)));
    }
    times.number();

    let mut out_tables = Vec::with_capacity(models.len());
    for m in &models {
        let dict = Dictionary::new(m);
        let (vals, ends, xs) = dict.columns();
        let now = columns(m.now.iter().map(|(k, d, s)| (dict.key(k), *d, *s)), &times);
        let steps: Vec<Json> = m
            .steps
            .iter()
            .map(|s| {
                let mut o = columns(
                    s.points
                        .iter()
                        .map(|(k, d)| (dict.key(k), *d, state_of(*d, options))),
                    &times,
                );
                o.insert("r".into(), Json::from(s.receipt));
                o.insert("lo".into(), Json::from(dict.key(&s.lo)));
                o.insert(
                    "hi".into(),
                    Json::from(s.hi.as_ref().map_or(-2, |h| dict.index[h] as i64)),
                );
                o.insert("n".into(), Json::from(s.ledger.region_count()));
                Json::Object(o)
            })
            .collect();
        let mut strs = Strings::default();
        let receipts = receipts_json(&m.receipts, &m.step_of, &mut strs);
        out_tables.push(json!({
            "name": m.name,
            "column": m.column,
            "type": m.window_type,
            "vals": vals,
            "ends": ends,
            "x": xs,
            "now": Json::Object(now),
            "summary": m.summary,
            "verify": m.verify,
            "problems": m.problems,
            "notes": m.notes,
            "receipts": receipts,
            "strs": strs.list,
            "steps": steps,
            // The replay's last ledger is the one drawn at --at: the page starts there.
            "last_is_now": m.steps.last().is_some_and(|s| s.ledger == m.current),
        }));
    }
    let time_texts: Vec<Json> = times.index.keys().map(|t| Json::from(utc(*t))).collect();
    Ok(json!({
        "version": 1,
        "at": options.at.to_string(),
        "atsec": options.at.as_micros() as f64 / 1e6,
        "limit": limit_text(options.limit),
        "times": time_texts,
        "tables": out_tables,
        "events": events.iter().map(|&(_, t, i)| json!([t, i])).collect::<Vec<_>>(),
        "gx": group_after.iter().map(|p| times.of(*p)).collect::<Vec<_>>(),
        "group": {
            "ok": group_ok,
            "exact": group_now.map(|p| p.to_string()),
        },
    }))
}

/// The page: one self-contained HTML document showing `tables` at `options`.
///
/// ```
/// use dogana::{Check, Contract, Duration, Gate, Ledger, LogicalType, Shape};
/// use dogana_show::{render, Options, TableHistory};
/// let c = Contract::builder("orders", ["id"]).shape("full", Shape::full())
///     .column("id", LogicalType::Int).build().unwrap();
/// let at = "2026-10-25T01:00:00Z".parse().unwrap();
/// let m = c.manifest("full", "2026-10-25T00:00:00Z".parse().unwrap()).rows(2).build().unwrap();
/// let ledger = Ledger::new(c);
/// let receipt = Gate::evaluate(&ledger, &m, &[Check::pass("rows", "2 live rows")], at, None, &[]);
/// let ledger = ledger.follow(&receipt).unwrap();
/// let page = render(&[TableHistory { ledger: Some(ledger), receipts: vec![receipt] }],
///     &Options::new(at, Duration::MAX)).unwrap();
/// assert!(page.starts_with("<!DOCTYPE html>"));
/// assert!(!page.contains("<script src"));
/// ```
pub fn render(tables: &[TableHistory], options: &Options) -> Result<String, ShowError> {
    let mut data = data(tables, options)?;
    // every text of the page shown as the terminal shows it: a sender's line break, escape
    // sequence or bidirectional override is displayed as its escape, never acted on
    shown_strings(&mut data);
    let names: Vec<&str> = data["tables"]
        .as_array()
        .map(|a| a.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    let title = escape_html(&format!("dogana show: {}", names.join(", ")));
    let json = script_json(&data);
    let mut page = String::with_capacity(json.len() + CSS.len() + JS.len() + 2048);
    page.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    page.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    page.push_str(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n",
    );
    page.push_str(&format!("<title>{title}</title>\n<style>\n"));
    page.push_str(CSS);
    page.push_str("</style>\n</head>\n<body>\n");
    page.push_str(&format!(
        "<header><h1>{title}</h1><p id=\"reader\"></p></header>\n"
    ));
    page.push_str("<main id=\"app\"><noscript>This page draws its tables with JavaScript.</noscript></main>\n");
    page.push_str("<script type=\"application/json\" id=\"dogana-data\">");
    page.push_str(&json);
    page.push_str("</script>\n<script>\n");
    page.push_str(JS);
    page.push_str("</script>\n</body>\n</html>\n");
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_json_escapes_what_could_close_or_break_a_script() {
        let v = json!({"a": "</script><b>&\u{2028}\u{2029}"});
        let s = script_json(&v);
        assert!(!s.contains('<') && !s.contains('>') && !s.contains('&'));
        assert!(!s.contains('\u{2028}') && !s.contains('\u{2029}'));
        assert_eq!(serde_json::from_str::<Json>(&s).unwrap(), v);
    }

    #[test]
    fn escape_html_escapes_markup() {
        assert_eq!(
            escape_html("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
