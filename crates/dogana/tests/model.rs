//! Property tests of the core against a brute-force model of a source, a truthful sender and a
//! receiver that executes every accepted plan.
//!
//! The source is a set of keyed rows (or keyless events) with a fixed window value, changed by
//! inserts, updates and deletions at integer instants ("ticks", one minute apart), with its whole
//! history kept so that "the rows live at instant x" is computable. A key's window value never
//! changes (CONTRACT-22), so a truthful window read never carries a key published outside its
//! window; the receiver still runs that check (CHECK-16).
//!
//! The sender reads the source truthfully at the receiver's clock: full, window, changes since a
//! chosen instant with or without tombstones, window changes, generation or sequence feeds,
//! keyless appends. It also redelivers stale reads, replays accepted manifests, and sends
//! invalid deliveries (future produced_at, malformed manifests, a failed receiver check). The
//! gate decides; the receiver executes `receipt.transition.plan` on its loaded rows and follows
//! the receipt. A refused delivery changes nothing.
//!
//! Contracts are drawn at random: keyed or keyless (an append with or without start_at), with
//! or without a window column (int, str, date or datetime; windows sometimes reach an end of
//! the domain), timestamp changes and window changes with or without tombstones, generation or
//! sequence feeds.
//!
//! Each property runs the same simulation and checks one thing after every delivery; a sixth
//! compares the gate and the ledger with a brute-force ledger that applies the rules value by
//! value. The rule IDs are those of spec/rules.md. The whole file runs in about 10 s in debug
//! mode; `DOGANA_MODEL_SCALE=20` multiplies every case count for a longer search.

use std::collections::BTreeMap;

use dogana::{
    ActionKind, ApplyPlan, Check, Contract, Date, Deletions, Duration, Gate, Ledger, LogicalType,
    Manifest, Position, Receipt, Region, Shape, Since, Timestamp, Value, Window, Wire,
};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

/// Keys of a keyed source.
const KEYS: i64 = 10;
/// Window values are 0..WIDTH.
const WIDTH: i64 = 6;
/// Ticks with source changes: 1..=TICKS.
const TICKS: usize = 30;

type Res = Result<(), TestCaseError>;

// ---------------------------------------------------------------------------------------------
// Time and values

fn base_micros() -> i64 {
    "2026-01-01T00:00:00Z"
        .parse::<Timestamp>()
        .unwrap()
        .as_micros()
}

fn ts(tick: i64) -> Timestamp {
    Timestamp::from_micros(base_micros() + tick * 60_000_000).unwrap()
}

fn tick(t: Timestamp) -> i64 {
    let d = t.as_micros() - base_micros();
    assert_eq!(
        d % 60_000_000,
        0,
        "every instant of the model is a whole tick"
    );
    d / 60_000_000
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WinType {
    Int,
    Str,
    Date,
    Datetime,
}

/// The least value of the window column's domain, as a model window value.
const DOMAIN_MIN: i64 = i64::MIN;
/// The greatest value of the window column's domain (strings have none: a long string).
const DOMAIN_MAX: i64 = i64::MAX;

/// The window column's value for the model's window value `w`; order-preserving.
fn wv(ty: WinType, w: i64) -> Value {
    match (ty, w) {
        (WinType::Int, DOMAIN_MIN) => Value::Int(Value::INT_MIN),
        (WinType::Int, DOMAIN_MAX) => Value::Int(Value::INT_MAX),
        (WinType::Int, w) => Value::Int(w),
        (WinType::Str, DOMAIN_MIN) => Value::Str(String::new()),
        (WinType::Str, DOMAIN_MAX) => Value::Str("zzzz".into()),
        (WinType::Str, w) => {
            Value::Str(char::from(u8::try_from(i64::from(b'm') + w).unwrap()).to_string())
        }
        (WinType::Date, DOMAIN_MIN) => Value::Date(Date::from_ymd(1, 1, 1).unwrap()),
        (WinType::Date, DOMAIN_MAX) => Value::Date(Date::from_ymd(9999, 12, 31).unwrap()),
        (WinType::Date, w) => Value::Date(
            Date::from_ymd(2026, 1, 1)
                .unwrap()
                .checked_add_days(w)
                .unwrap(),
        ),
        (WinType::Datetime, DOMAIN_MIN) => Value::Datetime(Timestamp::MIN),
        (WinType::Datetime, DOMAIN_MAX) => Value::Datetime(Timestamp::MAX),
        (WinType::Datetime, w) => Value::Datetime(ts(w)),
    }
}

// ---------------------------------------------------------------------------------------------
// Contracts

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Feed {
    Generation,
    Sequence,
}

/// Which contract a case runs against. Shape names: `full`, `win` (complete window), `chg`
/// (timestamp changes of the whole table; an append when keyless), `wchg` (timestamp changes
/// of a window), `feed` (generation or sequence).
#[derive(Debug, Clone)]
struct Config {
    keyless: bool,
    window: Option<WinType>,
    win: bool,
    /// `Some(tombstones)`.
    chg: Option<bool>,
    wchg: Option<bool>,
    feed: Option<(Feed, bool)>,
    lookback: bool,
    cursor: bool,
    start_at: bool,
}

impl Config {
    fn contract(&self) -> Contract {
        let key: Vec<&str> = if self.keyless { vec![] } else { vec!["id"] };
        let mut b = Contract::builder("orders", key).shape("full", Shape::full().cost(10.0));
        if !self.keyless {
            b = b.column("id", LogicalType::Int);
        }
        let mut tombstones = false;
        if let Some(ty) = self.window {
            b = b.window_column("day").column(
                "day",
                match ty {
                    WinType::Int => LogicalType::Int,
                    WinType::Str => LogicalType::Str,
                    WinType::Date => LogicalType::Date,
                    WinType::Datetime => LogicalType::Datetime,
                },
            );
            if self.win {
                b = b.shape("win", Shape::window().cost(2.0));
            }
            if let Some(t) = self.wchg {
                tombstones |= t;
                b = b.shape("wchg", Shape::window_changes(deletions(t)));
            }
        }
        if let Some(t) = self.chg {
            tombstones |= t;
            let mut s = Shape::changes(deletions(t));
            if self.lookback && !self.keyless {
                s = s.lookback(Duration::from_seconds(120).unwrap());
            }
            b = b.shape("chg", s);
        }
        if let Some((feed, t)) = self.feed {
            tombstones |= t;
            b = b.shape(
                "feed",
                match feed {
                    Feed::Generation => Shape::generations(deletions(t)),
                    Feed::Sequence => Shape::sequence(deletions(t)),
                },
            );
        }
        if tombstones {
            b = b
                .deleted_column("deleted")
                .column("deleted", LogicalType::Bool);
        }
        if self.cursor {
            b = b
                .cursor_column("updated_at")
                .column("updated_at", LogicalType::Datetime);
        }
        if self.keyless && self.start_at {
            b = b.start_at(ts(0));
        }
        b.build().expect("the model builds valid contracts")
    }
}

fn deletions(tombstones: bool) -> Deletions {
    if tombstones {
        Deletions::Tombstone
    } else {
        Deletions::None
    }
}

fn config(window_required: bool) -> impl Strategy<Value = Config> {
    (
        0u8..4,
        0u8..6,
        any::<bool>(),
        0u8..3,
        0u8..3,
        0u8..5,
        any::<(bool, bool, bool)>(),
    )
        .prop_map(
            move |(keyless, window, win, chg, wchg, feed, (lookback, cursor, start_at))| {
                let keyless = keyless == 0;
                let window = match (window, window_required) {
                    (0, false) => None,
                    (1, _) | (0, true) => Some(WinType::Int),
                    (2, _) => Some(WinType::Str),
                    (3, _) => Some(WinType::Datetime),
                    _ => Some(WinType::Date),
                };
                let pick = |n: u8| match n {
                    0 => None,
                    1 => Some(false),
                    _ => Some(!keyless),
                };
                let mut cfg = Config {
                    keyless,
                    window,
                    win,
                    chg: pick(chg),
                    wchg: if keyless || window.is_none() {
                        None
                    } else {
                        pick(wchg)
                    },
                    feed: match (keyless, feed) {
                        (true, _) | (_, 0) => None,
                        (_, 1) => Some((Feed::Generation, false)),
                        (_, 2) => Some((Feed::Generation, true)),
                        (_, 3) => Some((Feed::Sequence, false)),
                        _ => Some((Feed::Sequence, true)),
                    },
                    lookback,
                    cursor,
                    start_at,
                };
                // A contract has a window column exactly when it has a window shape.
                if cfg.window.is_some() && cfg.wchg.is_none() {
                    cfg.win = true;
                }
                if cfg.window.is_none() {
                    cfg.win = false;
                }
                cfg
            },
        )
}

// ---------------------------------------------------------------------------------------------
// The source

/// A delivered row: `key` (-1 for a keyless event), `id` (the version of a keyed row, unique
/// over the source's history, or the event id) and the window value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Row {
    key: i64,
    id: u64,
    w: i64,
}

#[derive(Debug, Clone)]
struct Source {
    keyed: bool,
    /// Each key's window value, fixed forever (CONTRACT-22).
    wval: Vec<i64>,
    /// Per key, its changes in order: (tick, live version or deleted).
    hist: Vec<Vec<(i64, Option<u64>)>>,
    /// Per version: (key, first tick live, first tick no longer live).
    versions: BTreeMap<u64, (i64, i64, Option<i64>)>,
    /// Keyless events: (id, tick, window value); never revised or deleted.
    events: Vec<(u64, i64, i64)>,
}

impl Source {
    fn build(keyed: bool, wval: Vec<i64>, script: &[Vec<(u8, u8)>]) -> Source {
        let mut s = Source {
            keyed,
            wval,
            hist: vec![Vec::new(); KEYS as usize],
            versions: BTreeMap::new(),
            events: Vec::new(),
        };
        let mut next = 1u64;
        for (i, changes) in script.iter().enumerate() {
            let t = i as i64 + 1;
            for &(op, b) in changes {
                if !keyed {
                    if op % 2 == 0 {
                        s.events.push((next, t, i64::from(b) % WIDTH));
                        next += 1;
                    }
                    continue;
                }
                let key = i64::from(b) % KEYS;
                let hist = &mut s.hist[key as usize];
                let current = hist.last().and_then(|(_, v)| *v);
                let upsert = op % 3 != 0;
                if !upsert && current.is_none() {
                    continue;
                }
                if let Some(v) = current {
                    s.versions.get_mut(&v).unwrap().2 = Some(t);
                }
                if upsert {
                    hist.push((t, Some(next)));
                    s.versions.insert(next, (key, t, None));
                    next += 1;
                } else {
                    hist.push((t, None));
                }
            }
        }
        s
    }

    /// The key's live version at `x` and the tick of its last change up to `x`.
    fn at(&self, key: i64, x: i64) -> (Option<u64>, Option<i64>) {
        let mut out = (None, None);
        for &(t, v) in &self.hist[key as usize] {
            if t > x {
                break;
            }
            out = (v, Some(t));
        }
        out
    }

    fn row(&self, key: i64, version: u64) -> Row {
        Row {
            key,
            id: version,
            w: self.wval[key as usize],
        }
    }

    /// Every row live at `t`, inside `win` if given.
    fn complete(&self, t: i64, win: Option<&dyn Fn(i64) -> bool>) -> Read {
        let inside = |w: i64| win.is_none() || win.is_some_and(|f| f(w));
        let mut read = Read::default();
        if self.keyed {
            for key in 0..KEYS {
                if let (Some(v), _) = self.at(key, t) {
                    if inside(self.wval[key as usize]) {
                        read.live.push(self.row(key, v));
                    }
                }
            }
        } else {
            for &(id, et, w) in &self.events {
                if et <= t && inside(w) {
                    read.live.push(Row { key: -1, id, w });
                }
            }
        }
        read
    }

    /// The rows changed in `(since, t]`: one final row per key, the live row or, with
    /// `tombstones`, a tombstone when the key ends deleted (MAN-18); inside `win` if given.
    fn changes(
        &self,
        since: i64,
        t: i64,
        tombstones: bool,
        win: Option<&dyn Fn(i64) -> bool>,
    ) -> Read {
        let inside = |w: i64| win.is_none() || win.is_some_and(|f| f(w));
        let mut read = Read::default();
        if self.keyed {
            for key in 0..KEYS {
                if !inside(self.wval[key as usize]) {
                    continue;
                }
                match self.at(key, t) {
                    (Some(v), Some(last)) if last > since => read.live.push(self.row(key, v)),
                    (None, Some(last)) if last > since && tombstones => read.tombstones.push(key),
                    _ => {}
                }
            }
        } else {
            for &(id, et, w) in &self.events {
                if et > since && et <= t && inside(w) {
                    read.live.push(Row { key: -1, id, w });
                }
            }
        }
        read
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Read {
    live: Vec<Row>,
    tombstones: Vec<i64>,
}

// ---------------------------------------------------------------------------------------------
// Deliveries

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// A well-formed manifest of a truthful read at or before now: the transition decides.
    Valid,
    /// produced_at after the receiver's now (GATE-04).
    Future,
    /// The manifest contradicts its contract or itself (GATE-03).
    Malformed,
    /// A receiver check fails (GATE-06, CHECK-19).
    ReceiverFail,
}

#[derive(Debug, Clone)]
struct Delivery {
    manifest: Manifest,
    read: Read,
    expect: Expect,
}

/// One step of a case: advance the clock, then deliver. The bytes choose the delivery.
#[derive(Debug, Clone, Copy)]
struct Step {
    advance: u8,
    kind: u8,
    a: u8,
    b: u8,
    c: u8,
    e: u8,
}

fn step() -> impl Strategy<Value = Step> {
    (
        0u8..6,
        any::<u8>(),
        any::<u8>(),
        any::<u8>(),
        any::<u8>(),
        any::<u8>(),
    )
        .prop_map(|(advance, kind, a, b, c, e)| Step {
            // Mostly one tick; sometimes none (the same instant again) or a jump.
            advance: [0, 1, 1, 1, 2, 3][usize::from(advance)],
            kind,
            a,
            b,
            c,
            e,
        })
}

#[derive(Debug, Clone)]
struct Case {
    cfg: Config,
    wval: Vec<i64>,
    script: Vec<Vec<(u8, u8)>>,
    steps: Vec<Step>,
}

fn case(window_required: bool, max_steps: usize) -> impl Strategy<Value = Case> {
    (
        config(window_required),
        prop::collection::vec(0..WIDTH, KEYS as usize),
        prop::collection::vec(
            prop::collection::vec(any::<(u8, u8)>(), 0..4),
            TICKS..=TICKS,
        ),
        prop::collection::vec(step(), 1..max_steps),
    )
        .prop_map(|(cfg, wval, script, steps)| Case {
            cfg,
            wval,
            script,
            steps,
        })
}

// ---------------------------------------------------------------------------------------------
// The brute-force ledger: per probe value, the dates the rules give (TRANS-14 to TRANS-21)

#[derive(Debug, Clone, PartialEq)]
struct Model {
    /// Per probe, `(c, d)` in ticks, or unknown.
    dates: Vec<Option<(i64, i64)>>,
    generation: Option<Position>,
    touched: bool,
}

// ---------------------------------------------------------------------------------------------
// The simulation

struct Sim {
    cfg: Config,
    contract: Contract,
    src: Source,
    ledger: Ledger,
    /// The receiver's published rows.
    loaded: Vec<Row>,
    receipts: Vec<Receipt>,
    accepted: Vec<Delivery>,
    pool: Vec<Delivery>,
    now: i64,
    /// Probe values of the window column: every region boundary the model can create lies
    /// between two of them. `None` when the contract has no window column.
    probes: Vec<Option<Value>>,
    model: Model,
    /// Per probe, whether an accepted delivery ever covered it.
    ever: Vec<bool>,
}

/// What one delivery did, for the checks.
struct Event<'a> {
    step: Step,
    before: Ledger,
    model_before: Model,
    delivery: &'a Delivery,
    receipt: &'a Receipt,
}

impl Sim {
    fn new(c: &Case) -> Sim {
        let contract = c.cfg.contract();
        let probes: Vec<Option<Value>> = match c.cfg.window {
            None => vec![None],
            // Each value the model uses and its successor: every region the windows of the
            // model can create holds one of them.
            Some(ty) => [DOMAIN_MIN, DOMAIN_MAX]
                .into_iter()
                .chain(-2..=WIDTH + 1)
                .flat_map(|w| {
                    let v = wv(ty, w);
                    [v.successor(), Some(v)]
                })
                .flatten()
                .collect::<std::collections::BTreeSet<Value>>()
                .into_iter()
                .map(Some)
                .collect(),
        };
        let n = probes.len();
        Sim {
            cfg: c.cfg.clone(),
            ledger: Ledger::new(contract.clone()),
            contract,
            src: Source::build(!c.cfg.keyless, c.wval.clone(), &c.script),
            loaded: Vec::new(),
            receipts: Vec::new(),
            accepted: Vec::new(),
            pool: Vec::new(),
            now: 1,
            probes,
            model: Model {
                dates: vec![None; n],
                generation: None,
                touched: false,
            },
            ever: vec![false; n],
        }
    }

    fn wtype(&self) -> Option<WinType> {
        self.cfg.window
    }

    fn window(&self, lo: i64, hi: i64) -> Window {
        let ty = self.wtype().expect("a window contract");
        Window::new(wv(ty, lo), wv(ty, hi))
    }

    /// A window of the test range from two bytes.
    fn window_of(&self, a: u8, b: u8) -> Window {
        let lo = i64::from(a) % (WIDTH + 2) - 1;
        let hi = if b & 0x80 == 0 {
            lo + i64::from(b % 3)
        } else {
            i64::from(b) % (WIDTH + 2) - 1
        };
        let (lo, hi) = (lo.min(hi), lo.max(hi));
        // Sometimes a window reaches an end of the domain (DOMAIN-13).
        let lo = if a >= 240 { DOMAIN_MIN } else { lo };
        let hi = if b & 0x7f >= 120 { DOMAIN_MAX } else { hi };
        self.window(lo, hi)
    }

    fn value_of(&self, w: i64) -> Option<Value> {
        self.wtype().map(|ty| wv(ty, w))
    }

    fn position(&self, t: i64) -> Position {
        if self.contract.positions_are_integers() {
            Position::Sequence(t)
        } else {
            Position::Token(format!("g{t}"))
        }
    }

    fn position_tick(p: &Position) -> i64 {
        match p {
            Position::Sequence(n) => *n,
            Position::Token(s) => s[1..].parse().unwrap(),
        }
    }

    /// The complete_as_of ticks of the regions a window (or the whole table) covers; `None`
    /// if one of them is unknown.
    fn covered_cs(&self, win: Option<&Window>) -> Option<Vec<i64>> {
        let regions = match win {
            Some(w) => self.ledger.regions_in(w),
            None => self.ledger.regions(),
        };
        regions
            .iter()
            .map(|r| r.complete_as_of().map(tick))
            .collect()
    }

    /// A since for a timestamp read, from two bytes: the oldest covered c, an overlap before
    /// it, the newest covered c, any instant up to now, or just after the oldest c.
    fn since_choice(&self, win: Option<&Window>, a: u8, b: u8) -> i64 {
        let t = self.now;
        if self.cfg.keyless && self.ledger.is_untouched() && a % 5 < 3 {
            return 0;
        }
        let any = i64::from(b) % (t + 1);
        let Some(cs) = self.covered_cs(win).filter(|cs| !cs.is_empty()) else {
            return any;
        };
        let (min, max) = (*cs.iter().min().unwrap(), *cs.iter().max().unwrap());
        match a % 5 {
            0 => min,
            1 => (min - i64::from(b % 3)).max(0),
            2 => max,
            3 => any,
            _ => (min + 1).min(t),
        }
    }

    fn in_window(&self, win: &Window) -> impl Fn(i64) -> bool + '_ {
        let win = win.clone();
        move |w| win.contains(&self.value_of(w).unwrap())
    }

    fn valid(&self, m: dogana::ManifestBuilder, read: Read) -> Delivery {
        let manifest = m
            .rows(read.live.len() as u64)
            .tombstones(read.tombstones.len() as u64)
            .build()
            .unwrap();
        Delivery {
            manifest,
            read,
            expect: Expect::Valid,
        }
    }

    fn full(&self, s: &Step) -> Delivery {
        let t = self.now;
        let mut m = self.contract.manifest("full", ts(t));
        if self.cfg.feed.is_some() && s.b % 2 == 0 {
            m = m.generation(self.position(t));
        }
        self.valid(m, self.src.complete(t, None))
    }

    fn make(&self, s: &Step) -> Delivery {
        let t = self.now;
        let others: Vec<&str> = ["win", "chg", "wchg", "feed"]
            .into_iter()
            .filter(|name| self.contract.shape(name).is_some())
            .collect();
        let kind = match s.kind % 12 {
            k @ 2..=8 if !others.is_empty() => others[usize::from(k) % others.len()],
            0..=8 => "full",
            9 => "stale",
            10 => "invalid",
            _ => "replay",
        };
        match kind {
            "win" => {
                let win = self.window_of(s.a, s.b);
                let f = self.in_window(&win);
                let read = self.src.complete(t, Some(&f));
                let m = self.contract.manifest("win", ts(t)).window(win.clone());
                self.valid(m, read)
            }
            "chg" => {
                let since = self.since_choice(None, s.a, s.b);
                let tombstones = self.cfg.chg == Some(true);
                let read = self.src.changes(since, t, tombstones, None);
                let m = self.contract.manifest("chg", ts(t)).since(ts(since));
                self.valid(m, read)
            }
            "wchg" => {
                let win = self.window_of(s.a, s.b);
                let since = self.since_choice(Some(&win), s.c, s.e);
                let f = self.in_window(&win);
                let tombstones = self.cfg.wchg == Some(true);
                let read = self.src.changes(since, t, tombstones, Some(&f));
                let m = self
                    .contract
                    .manifest("wchg", ts(t))
                    .window(win.clone())
                    .since(ts(since));
                self.valid(m, read)
            }
            "feed" => {
                let (feed, tombstones) = self.cfg.feed.unwrap();
                let held = self.ledger.generation().map(Sim::position_tick);
                let any = i64::from(s.b) % (t + 1);
                let since = match (s.a % 3, held) {
                    (0, Some(p)) => p,
                    (1, Some(p)) if feed == Feed::Sequence => (p - i64::from(s.b % 3)).max(0),
                    (1, Some(p)) => p,
                    _ => any,
                }
                .min(t);
                let read = self.src.changes(since, t, tombstones, None);
                let m = self
                    .contract
                    .manifest("feed", ts(t))
                    .since(Since::Position(self.position(since)))
                    .generation(self.position(t));
                self.valid(m, read)
            }
            "stale" if !self.pool.is_empty() => {
                // A stale read, redelivered now: truthful at its own produced_at.
                self.pool[usize::from(s.a) % self.pool.len()].clone()
            }
            "invalid" => self.invalid(s),
            "replay" if !self.accepted.is_empty() => {
                // The last accepted manifest again (ALG-03).
                self.accepted.last().unwrap().clone()
            }
            _ => self.full(s),
        }
    }

    fn invalid(&self, s: &Step) -> Delivery {
        let t = self.now;
        let read = self.src.complete(t, None);
        let rows = read.live.len() as u64;
        let malformed = |m: dogana::ManifestBuilder| Delivery {
            manifest: m.build().unwrap(),
            read: read.clone(),
            expect: Expect::Malformed,
        };
        match s.a % 7 {
            0 => {
                let future = t + 1 + i64::from(s.b % 3);
                let read = self.src.complete(future, None);
                Delivery {
                    manifest: self
                        .contract
                        .manifest("full", ts(future))
                        .rows(read.live.len() as u64)
                        .build()
                        .unwrap(),
                    read,
                    expect: Expect::Future,
                }
            }
            // MAN-05: a whole-table shape with a window.
            1 => malformed(
                self.contract
                    .manifest("full", ts(t))
                    .window(Window::new(0, 1))
                    .rows(rows),
            ),
            // MAN-04: no such shape.
            2 => malformed(self.contract.manifest("nope", ts(t)).rows(rows)),
            // MAN-16: tombstones through a shape without them.
            3 => malformed(
                self.contract
                    .manifest("full", ts(t))
                    .rows(rows)
                    .tombstones(1),
            ),
            // MAN-06: since on a complete shape.
            4 => malformed(
                self.contract
                    .manifest("full", ts(t))
                    .since(ts(t.saturating_sub(1)))
                    .rows(rows),
            ),
            // MAN-07: window bounds of another type; MAN-12 without a window shape.
            5 if self.contract.shape("win").is_some() => malformed(
                self.contract
                    .manifest("win", ts(t))
                    .window(if self.cfg.window == Some(WinType::Str) {
                        Window::new(0, 1)
                    } else {
                        Window::new("a", "b")
                    })
                    .rows(rows),
            ),
            5 => malformed(
                self.contract
                    .manifest("full", ts(t))
                    .generation(if self.contract.positions_are_integers() {
                        Position::Token("g".into())
                    } else {
                        Position::Sequence(t)
                    })
                    .rows(rows),
            ),
            _ => Delivery {
                expect: Expect::ReceiverFail,
                ..self.full(s)
            },
        }
    }

    /// What the receiver verifies of the rows against the manifest (CHECK-02, CHECK-16).
    fn receiver_checks(&self, d: &Delivery) -> Vec<Check> {
        let m = &d.manifest;
        let mut checks = vec![
            Check::new(
                "rows",
                d.read.live.len() as u64 == m.rows(),
                format!("{} live rows", d.read.live.len()),
            ),
            Check::new(
                "tombstones",
                d.read.tombstones.len() as u64 == m.tombstones(),
                format!("{} tombstones", d.read.tombstones.len()),
            ),
        ];
        if let (Some(win), false) = (m.window(), self.cfg.keyless) {
            let outside = d.read.live.iter().any(|r| {
                self.loaded.iter().any(|l| {
                    l.key == r.key && self.value_of(l.w).is_some_and(|v| !win.contains(&v))
                })
            });
            checks.push(Check::new(
                "window_keys",
                !outside,
                "no key already published outside the window",
            ));
        }
        if d.expect == Expect::ReceiverFail {
            checks.push(Check::fail("content_hash", "the bytes do not hash to it"));
        }
        checks
    }

    /// Executes an accepted plan on the loaded rows (PLAN-03 to PLAN-08).
    fn execute(&mut self, plan: &ApplyPlan, read: &Read) -> Res {
        for action in plan.actions() {
            match action.kind() {
                ActionKind::ReplaceAll => self.loaded = read.live.clone(),
                ActionKind::ReplaceWindow => {
                    let win = action.window().expect("replace_window names its window");
                    let ty = self.wtype().expect("a window contract");
                    // Keyless replacement matches no keys (PLAN-08).
                    let matches_keys = action.matches_keys();
                    prop_assert_eq!(matches_keys, !self.cfg.keyless, "PLAN-08");
                    let replaced = |l: &Row| {
                        win.contains(&wv(ty, l.w))
                            || (matches_keys && read.live.iter().any(|r| r.key == l.key))
                    };
                    self.loaded.retain(|l| !replaced(l));
                    self.loaded.extend(read.live.iter().copied());
                }
                ActionKind::Upsert => {
                    self.loaded
                        .retain(|l| !read.live.iter().any(|r| r.key == l.key));
                    self.loaded.extend(read.live.iter().copied());
                }
                ActionKind::Tombstone => {
                    self.loaded.retain(|l| !read.tombstones.contains(&l.key));
                }
                ActionKind::Append => self.loaded.extend(read.live.iter().copied()),
            }
        }
        Ok(())
    }

    /// The dates the rules give after accepting `m` (TRANS-14 to TRANS-21).
    fn model_apply(&mut self, m: &Manifest) {
        let t = tick(m.produced_at());
        let shape = self.contract.shape(m.shape()).unwrap().clone();
        let keyless = self.cfg.keyless;
        for i in covered(&self.probes, m) {
            self.ever[i] = true;
            let next = match self.model.dates[i] {
                None => (t, t),
                Some(_) if shape.is_complete() || keyless => (t, t),
                Some((c, d)) => {
                    let d = match (shape.delivers_tombstones(), m.since().unwrap()) {
                        (true, Since::Time(s)) if d >= tick(*s) => t,
                        (true, Since::Position(_)) if d == c => t,
                        _ => d,
                    };
                    (t, d)
                }
            };
            self.model.dates[i] = Some(next);
        }
        if let Some(g) = m.generation() {
            self.model.generation = Some(g.clone());
        }
        self.model.touched = true;
    }

    /// Delivers `d` at now: receiver checks, the gate, and on acceptance the plan and the
    /// ledger the receipt names.
    fn deliver(&mut self, d: &Delivery) -> Result<Receipt, TestCaseError> {
        let checks = self.receiver_checks(d);
        let r = Gate::evaluate(&self.ledger, &d.manifest, &checks, ts(self.now), None, &[]);
        if r.accepted() {
            let next = self
                .ledger
                .follow(&r)
                .map_err(|e| TestCaseError::fail(format!("follow refused an acceptance: {e}")))?;
            let transition = r.transition().expect("an acceptance carries a transition");
            self.execute(transition.plan(), &d.read)?;
            self.ledger = next;
            self.model_apply(&d.manifest);
            self.accepted.push(d.clone());
        }
        self.receipts.push(r.clone());
        if d.expect == Expect::Valid && self.pool.len() < 32 {
            self.pool.push(d.clone());
        }
        Ok(r)
    }

    fn region_of(&self, probe: &Option<Value>) -> Region {
        let regions = self.ledger.regions();
        match probe {
            None => regions[0].clone(),
            Some(v) => regions
                .into_iter()
                .find(|r| r.contains(v))
                .expect("the regions cover the domain"),
        }
    }
}

/// The probes a manifest covers.
fn covered(probes: &[Option<Value>], m: &Manifest) -> Vec<usize> {
    (0..probes.len())
        .filter(|&i| match (m.window(), &probes[i]) {
            (Some(w), Some(v)) => w.contains(v),
            _ => true,
        })
        .collect()
}

/// Whether the rules admit a well-formed manifest (TRANS-02 to TRANS-11), by brute force over
/// the probe values.
fn admits(
    cfg: &Config,
    contract: &Contract,
    probes: &[Option<Value>],
    model: &Model,
    m: &Manifest,
) -> bool {
    let t = tick(m.produced_at());
    let cov = covered(probes, m);
    let dates = &model.dates;
    // TRANS-02: later than every known region it covers.
    if cov
        .iter()
        .any(|&i| matches!(dates[i], Some((c, _)) if c >= t))
    {
        return false;
    }
    let shape = contract.shape(m.shape()).unwrap();
    if shape.is_complete() {
        return true;
    }
    let since = m.since().unwrap();
    // TRANS-05: the first append on an untouched ledger starts at start_at.
    if cfg.keyless && !model.touched {
        return contract
            .start_at()
            .is_some_and(|s| *since == Since::Time(s) && s <= m.produced_at());
    }
    // TRANS-04: changes need a base.
    if cov.iter().any(|&i| dates[i].is_none()) {
        return false;
    }
    let mut cs = cov.iter().map(|&i| dates[i].unwrap().0);
    match since {
        Since::Time(s) => {
            let s = tick(*s);
            // TRANS-08; TRANS-06 for appends.
            s <= t
                && if cfg.keyless {
                    cs.all(|c| c == s)
                } else {
                    cs.all(|c| c >= s)
                }
        }
        // TRANS-09
        Since::Position(p @ Position::Token(_)) => model.generation.as_ref() == Some(p),
        // TRANS-10, TRANS-11
        Since::Position(Position::Sequence(s)) => {
            let Some(Position::Sequence(g)) = m.generation() else {
                unreachable!("checked by the manifest check")
            };
            matches!(model.generation, Some(Position::Sequence(p)) if *s <= p && p <= *g)
        }
    }
}

/// Runs a case, calling `check` after every delivery.
fn run(c: &Case, mut check: impl FnMut(&Sim, &Event) -> Res) -> Res {
    let mut sim = Sim::new(c);
    for s in &c.steps {
        sim.now += i64::from(s.advance);
        let d = sim.make(s);
        let before = sim.ledger.clone();
        let model_before = sim.model.clone();
        let receipt = sim.deliver(&d)?;
        let event = Event {
            step: *s,
            before,
            model_before,
            delivery: &d,
            receipt: &receipt,
        };
        check(&sim, &event)?;
    }
    Ok(())
}

/// `n` cases, times `DOGANA_MODEL_SCALE` if set (for a longer search than the default run).
fn cases(n: u32) -> ProptestConfig {
    let scale = std::env::var("DOGANA_MODEL_SCALE")
        .ok()
        .and_then(|s| s.parse::<u32>().ok())
        .unwrap_or(1);
    ProptestConfig {
        cases: n.saturating_mul(scale),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------------------------
// 1. Soundness of (c, d)

/// For every known region (c, d): every row live at c at the source whose window value is in
/// the region is loaded, in its version at c; every loaded row in the region was live at the
/// source at some instant in [d, c]. Keyless events are loaded once each.
fn check_soundness(sim: &Sim, e: &Event) -> Res {
    if !e.receipt.accepted() {
        return Ok(());
    }
    let src = &sim.src;
    let in_region = |r: &Region, w: i64| {
        sim.value_of(w).is_none() || sim.value_of(w).is_some_and(|v| r.contains(&v))
    };
    if sim.cfg.keyless {
        let mut seen = BTreeMap::new();
        for l in &sim.loaded {
            *seen.entry(l.id).or_insert(0) += 1;
        }
        let twice: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
        prop_assert!(twice.is_empty(), "events loaded twice: {twice:?}");
    }
    for r in sim.ledger.regions() {
        let Some(dates) = r.dates() else { continue };
        let (c, d) = (tick(dates.complete_as_of()), tick(dates.deletions_as_of()));
        if src.keyed {
            for key in 0..KEYS {
                if !in_region(&r, src.wval[key as usize]) {
                    continue;
                }
                if let (Some(v), _) = src.at(key, c) {
                    let loaded = sim.loaded.iter().find(|l| l.key == key);
                    prop_assert!(
                        loaded.is_some_and(|l| l.id >= v),
                        "region {r}: key {key} is live at c = {c} in version {v}, loaded {loaded:?}"
                    );
                }
            }
            for l in sim.loaded.iter().filter(|l| in_region(&r, l.w)) {
                let (_, start, end) = src.versions[&l.id];
                prop_assert!(
                    start <= c && (end.is_none() || end.is_some_and(|end| end > d)),
                    "region {r}: loaded key {} version {} was live in [{start}, {end:?}), not in [d, c] = [{d}, {c}]",
                    l.key,
                    l.id
                );
            }
        } else {
            for &(id, et, w) in &src.events {
                if et <= c && in_region(&r, w) {
                    prop_assert!(
                        sim.loaded.iter().any(|l| l.id == id),
                        "region {r}: event {id} at {et} is missing"
                    );
                }
            }
            for l in sim.loaded.iter().filter(|l| in_region(&r, l.w)) {
                let et = src.events.iter().find(|ev| ev.0 == l.id).unwrap().1;
                prop_assert!(
                    et <= c,
                    "region {r}: loaded event {} happens at {et}, after c = {c}",
                    l.id
                );
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(cases(160))]

    // rule: TRUST-04, LEDGER-06, TRANS-14, TRANS-15, TRANS-16, TRANS-17, TRANS-18, TRANS-19,
    // TRANS-20, PLAN-03, PLAN-04, PLAN-05, PLAN-06, PLAN-07, PLAN-08, PLAN-09, PLAN-11,
    // MAN-18, MAN-21, CHECK-16
    #[test]
    fn dates_are_sound_for_truthful_reads(c in case(false, 24)) {
        run(&c, check_soundness)?;
    }
}

// ---------------------------------------------------------------------------------------------
// 2. Regions partition the domain

fn check_partition(sim: &Sim, e: &Event) -> Res {
    if !e.receipt.accepted() {
        return Ok(());
    }
    let regions = sim.ledger.regions();
    let first = &regions[0];
    let last = regions.last().unwrap();
    prop_assert!(
        first.low().is_none() && first.low_open(),
        "first region {first} is unbounded below"
    );
    prop_assert!(
        last.high().is_none() && last.high_open(),
        "last region {last} is unbounded above"
    );
    if sim.cfg.window.is_none() {
        prop_assert_eq!(regions.len(), 1, "LEDGER-08");
    }
    for r in &regions {
        if let Some(dates) = r.dates() {
            prop_assert!(
                dates.deletions_as_of() <= dates.complete_as_of(),
                "d <= c in {r}"
            );
        }
    }
    for pair in regions.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        let (Some(high), Some(low)) = (a.high(), b.low()) else {
            return Err(TestCaseError::fail(format!(
                "inner bounds of {a} and {b} are bounded"
            )));
        };
        if sim.cfg.window == Some(WinType::Str) {
            // A string high end is closed only when the next region starts at its successor.
            let next = high.successor();
            let ok = if a.high_open() {
                high == low
            } else {
                next.as_ref() == Some(low)
            };
            prop_assert!(ok && !b.low_open(), "{a} and {b} are contiguous");
            prop_assert_eq!(
                a.high_open(),
                low.predecessor().is_none(),
                "{} is spelled closed where it can be",
                a
            );
        } else {
            // Integer, date and datetime bounds are stored closed (DOMAIN-15).
            prop_assert!(
                !a.high_open() && !b.low_open(),
                "{a} and {b} are spelled closed"
            );
            let next = high.successor();
            prop_assert_eq!(next.as_ref(), Some(low), "{} and {} are contiguous", a, b);
        }
        prop_assert!(
            a.dates() != b.dates(),
            "neighbours {a} and {b} have equal dates"
        );
    }
    // Values no delivery touched stay unknown; touched ones never go back to unknown.
    for (i, p) in sim.probes.iter().enumerate() {
        let r = sim.region_of(p);
        prop_assert_eq!(
            r.is_unknown(),
            !sim.ever[i],
            "probe {:?} in {}: touched = {}",
            p,
            r,
            sim.ever[i]
        );
    }
    // The receipt's transition carries the regions over the coverage afterwards, cut to it
    // (PLAN-01, CLAIMS-03).
    let after = e.receipt.transition().unwrap().regions();
    match e.delivery.manifest.window() {
        None => prop_assert_eq!(after, &sim.ledger.regions()[..]),
        Some(w) => {
            prop_assert!(!after.is_empty(), "a window's transition has regions");
            let (first, last) = (&after[0], &after[after.len() - 1]);
            prop_assert!(
                first.low() == Some(&w.low) && !first.low_open(),
                "{first} starts the window {w}"
            );
            prop_assert!(
                last.high() == Some(&w.high) && !last.high_open(),
                "{last} ends the window {w}"
            );
            prop_assert_eq!(&sim.ledger.regions_in(w)[..], after);
            for p in sim.probes.iter().flatten().filter(|p| w.contains(p)) {
                let cut = after.iter().find(|r| r.contains(p));
                prop_assert!(
                    cut.is_some_and(|r| r.dates() == sim.region_of(&Some(p.clone())).dates()),
                    "the transition's region at {p} is {cut:?}"
                );
            }
        }
    }
    // The regions are the ledger's canonical spelling: from_parts accepts them as they are.
    let rebuilt = Ledger::from_parts(
        sim.contract.clone(),
        regions,
        sim.ledger.generation().cloned(),
        sim.ledger.publication_id().map(str::to_owned),
    );
    prop_assert!(
        rebuilt.as_ref().is_ok_and(|l| *l == sim.ledger),
        "from_parts: {rebuilt:?}"
    );
    Ok(())
}

proptest! {
    #![proptest_config(cases(128))]

    // rule: LEDGER-03, LEDGER-05, LEDGER-07, LEDGER-08, LEDGER-09, LEDGER-10, TRUST-05,
    // DOMAIN-10, DOMAIN-11, DOMAIN-13, DOMAIN-15, DOMAIN-16, PLAN-01, CLAIMS-03
    #[test]
    fn regions_partition_the_domain(c in case(false, 24)) {
        run(&c, check_partition)?;
    }
}

// ---------------------------------------------------------------------------------------------
// 3. The ledger is the fold of the accepted receipts

fn check_fold(sim: &Sim, e: &Event) -> Res {
    let r = e.receipt;
    // GATE-16: the base is the ledger's head before the decision.
    prop_assert_eq!(r.base_publication_id(), e.before.publication_id());
    if r.accepted() {
        // GATE-17
        prop_assert_eq!(Some(r.publication_id()), sim.ledger.publication_id());
        prop_assert_eq!(r.ledger_identity(), sim.ledger.identity());
    }
    if !r.accepted() {
        return Ok(());
    }
    let folded = Ledger::from_receipts(sim.contract.clone(), &sim.receipts);
    prop_assert!(
        folded.is_ok(),
        "from_receipts refused the history: {:?}",
        folded.err()
    );
    let folded = folded.unwrap();
    prop_assert!(
        folded == sim.ledger,
        "from_receipts {folded:?} differs from {:?}",
        sim.ledger
    );
    prop_assert_eq!(folded.identity(), sim.ledger.identity());
    // Missing or reordered receipts are refused (RECV-20).
    let accepted: Vec<&Receipt> = sim.receipts.iter().filter(|r| r.accepted()).collect();
    if accepted.len() >= 2 {
        let mut swapped = accepted.clone();
        let n = swapped.len();
        swapped.swap(n - 2, n - 1);
        prop_assert!(
            Ledger::from_receipts(sim.contract.clone(), swapped).is_err(),
            "reordered"
        );
        prop_assert!(
            Ledger::from_receipts(sim.contract.clone(), accepted[1..].iter().copied()).is_err(),
            "missing the first receipt"
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(cases(96))]

    // rule: RECV-12, RECV-17, RECV-19, RECV-20, ALG-01, ALG-07, GATE-16, GATE-17
    #[test]
    fn ledger_is_the_fold_of_accepted_receipts(c in case(false, 20)) {
        run(&c, check_fold)?;
    }
}

// ---------------------------------------------------------------------------------------------
// 4. Disjoint windows commute on evidence, never on the chain

fn check_commute(sim: &Sim, e: &Event) -> Res {
    if !e.receipt.accepted() {
        return Ok(());
    }
    let s = e.step;
    let (changes, name) = match (
        sim.contract.shape("win").is_some(),
        sim.contract.shape("wchg").is_some(),
    ) {
        (_, true) if s.c & 0x80 != 0 => (true, "wchg"),
        (true, _) => (false, "win"),
        (false, true) => (true, "wchg"),
        (false, false) => return Ok(()),
    };
    // Two disjoint windows meeting (or not) around a split point.
    let split = i64::from(s.c) % (WIDTH + 1);
    let w1 = sim.window(split - 1 - i64::from(s.e % 3), split - 1);
    let w2 = sim.window(
        split + i64::from((s.e / 3) % 2),
        split + i64::from((s.e / 6) % 3),
    );
    let t1 = sim.now + 1 + i64::from((s.e >> 6) & 1);
    let t2 = sim.now + 1 + i64::from((s.c >> 6) & 1);
    let manifest = |w: &Window, t: i64| {
        let mut m = sim.contract.manifest(name, ts(t)).window(w.clone()).rows(0);
        if changes {
            let since = sim
                .covered_cs(Some(w))
                .and_then(|cs| cs.into_iter().min())
                .unwrap_or(t);
            m = m.since(ts(since));
        }
        m.build().unwrap()
    };
    let (m1, m2) = (manifest(&w1, t1), manifest(&w2, t2));
    let l = &sim.ledger;
    match (l.apply(&m1), l.apply(&m2)) {
        (Ok(a), Ok(b)) => {
            let ab = a.apply(&m2);
            let ba = b.apply(&m1);
            prop_assert!(
                ab.is_ok() && ba.is_ok(),
                "both alone are admitted, so both orders are: {ab:?} {ba:?}"
            );
            let (ab, ba) = (ab.unwrap(), ba.unwrap());
            prop_assert_eq!(
                ab.regions(),
                ba.regions(),
                "{} then {} vs the reverse",
                w1,
                w2
            );
            prop_assert_eq!(ab.generation(), ba.generation());
            prop_assert_ne!(ab.publication_id(), ba.publication_id());
        }
        (Err(_), Ok(b)) => prop_assert!(
            b.apply(&m1).is_err(),
            "{w1} was refused alone, then admitted after {w2}"
        ),
        (Ok(a), Err(_)) => prop_assert!(
            a.apply(&m2).is_err(),
            "{w2} was refused alone, then admitted after {w1}"
        ),
        (Err(_), Err(_)) => {}
    }
    Ok(())
}

proptest! {
    #![proptest_config(cases(128))]

    // rule: ALG-04, ALG-05, TRANS-22
    #[test]
    fn disjoint_windows_commute_on_evidence(c in case(true, 20)) {
        run(&c, check_commute)?;
    }
}

// ---------------------------------------------------------------------------------------------
// 5. Outside the coverage nothing changes; a refusal changes nothing; apply is not idempotent

fn check_locality(sim: &Sim, e: &Event) -> Res {
    let r = e.receipt;
    let m = &e.delivery.manifest;
    if !r.accepted() {
        // GATE-18: the publication and ledger identities are the input ledger's.
        prop_assert_eq!(
            r.publication_id(),
            e.before.publication_id().unwrap_or("None")
        );
        prop_assert_eq!(r.ledger_identity(), e.before.identity());
        prop_assert!(r.transition().is_none(), "GATE-15");
        prop_assert!(sim.ledger == e.before, "the receiver keeps its ledger");
        prop_assert!(e.before.follow(r).is_err(), "a rejection moves no ledger");
        // Ledger::apply agrees with the gate on the transition (TRANS-12: not on the clock).
        let transition_failed = r
            .checks()
            .iter()
            .any(|c| (c.name() == "manifest" || c.name() == "transition") && !c.passed());
        prop_assert_eq!(
            e.before.apply(m).is_err(),
            transition_failed,
            "{:?}",
            r.checks()
        );
        return Ok(());
    }
    // ALG-03: the same manifest again is refused, by apply and by the gate.
    prop_assert!(sim.ledger.apply(m).is_err(), "apply is not idempotent");
    let again = Gate::evaluate(&sim.ledger, m, &[], ts(sim.now), None, &[]);
    prop_assert!(
        !again.accepted(),
        "the gate refuses the same manifest again"
    );
    // TRANS-22: outside the coverage, every value keeps its dates...
    if let Some(w) = m.window() {
        for p in sim.probes.iter().flatten() {
            if w.contains(p) {
                continue;
            }
            let find = |l: &Ledger| l.regions().into_iter().find(|r| r.contains(p)).unwrap();
            prop_assert_eq!(
                find(&e.before).dates(),
                find(&sim.ledger).dates(),
                "at {}",
                p
            );
        }
        // ...and every region wholly outside keeps its bounds, apart from merging.
        for old in e.before.regions() {
            let below = old.high().is_some_and(|h| h < &w.low);
            let above = old.low().is_some_and(|l| l > &w.high);
            if !(below || above) {
                continue;
            }
            // The region that now holds the old region's values holds all of them, with the
            // same dates, and is unbounded where the old one was.
            let inside: Vec<&Value> = sim
                .probes
                .iter()
                .flatten()
                .filter(|p| old.contains(p))
                .collect();
            let Some(first) = inside.first() else {
                continue;
            };
            let new = sim
                .ledger
                .regions()
                .into_iter()
                .find(|r| r.contains(first))
                .unwrap();
            prop_assert!(
                inside.iter().all(|p| new.contains(p))
                    && (old.low().is_some() || new.low().is_none())
                    && (old.high().is_some() || new.high().is_none())
                    && new.dates() == old.dates(),
                "region {old} outside {w} became {new}"
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(cases(128))]

    // rule: TRANS-22, GATE-15, GATE-18, ALG-03, ALG-07, TRANS-12, LEDGER-12
    #[test]
    fn outside_coverage_and_refusals_change_nothing(c in case(false, 24)) {
        run(&c, check_locality)?;
    }
}

// ---------------------------------------------------------------------------------------------
// 6. The gate decides and the ledger dates as the rules say, by brute force over probe values

fn check_rules(sim: &Sim, e: &Event) -> Res {
    let d = e.delivery;
    let r = e.receipt;
    let expected = match d.expect {
        // The decision the rules give on the ledger before the delivery.
        Expect::Valid => admits(
            &sim.cfg,
            &sim.contract,
            &sim.probes,
            &e.model_before,
            &d.manifest,
        ),
        Expect::Future | Expect::Malformed | Expect::ReceiverFail => false,
    };
    prop_assert_eq!(
        r.accepted(),
        expected,
        "{:?} {:?} at now {}: {:?}",
        d.expect,
        d.manifest,
        sim.now,
        r.checks()
    );
    if d.expect != Expect::Valid {
        let failed: Vec<&str> = r.failures().map(|c| c.name()).collect();
        let want = match d.expect {
            Expect::Future => "receiver_time",
            Expect::Malformed => "manifest",
            _ => "content_hash",
        };
        prop_assert!(
            failed.contains(&want),
            "{:?} fails {want}: {failed:?}",
            d.expect
        );
    }
    for (i, p) in sim.probes.iter().enumerate() {
        let region = sim.region_of(p);
        let got = region
            .dates()
            .map(|x| (tick(x.complete_as_of()), tick(x.deletions_as_of())));
        prop_assert_eq!(got, sim.model.dates[i], "probe {:?} in {}", p, region);
    }
    prop_assert_eq!(
        sim.ledger.generation(),
        sim.model.generation.as_ref(),
        "TRANS-21"
    );
    Ok(())
}

proptest! {
    #![proptest_config(cases(160))]

    // rule: TRANS-02, TRANS-03, TRANS-04, TRANS-05, TRANS-06, TRANS-07, TRANS-08, TRANS-09,
    // TRANS-10, TRANS-11, TRANS-14, TRANS-15, TRANS-16, TRANS-17, TRANS-18, TRANS-19, TRANS-20,
    // TRANS-21, GATE-03, GATE-04, GATE-06, CHECK-19, MAN-04, MAN-05, MAN-06, MAN-07, MAN-16
    #[test]
    fn gate_and_dates_follow_the_rules(c in case(false, 24)) {
        run(&c, check_rules)?;
    }
}
