//! Random contracts and histories for the planning and group properties.
//!
//! A contract is drawn from a [`Spec`]: keyed or keyless, with any of the ten shapes the
//! protocol allows for it and random costs (small, so that ties happen). A history is a list
//! of random [`Step`]s, each turned into a manifest against the current ledger; the ledger
//! keeps the ones it admits, so every ledger is the result of valid deliveries.

#![allow(dead_code)]

use dogana::{
    Contract, Deletions, Duration, Extraction, Ledger, LogicalType, Manifest, Position, Region,
    Shape, Since, Timestamp, Value, Window,
};
use proptest::prelude::*;

pub const T0: &str = "2026-10-01T00:00:00Z";

pub fn t0() -> Timestamp {
    T0.parse().unwrap()
}

pub fn minutes(n: i64) -> Timestamp {
    let m = Duration::from_seconds(60 * n.abs()).unwrap();
    if n >= 0 {
        t0().checked_add(m).unwrap()
    } else {
        t0().checked_sub(m).unwrap()
    }
}

/// Which shapes a contract has, and their costs.
#[derive(Debug, Clone)]
pub struct Spec {
    pub keyless: bool,
    pub full: Option<u8>,
    pub window: Option<u8>,
    /// cost, tombstones
    pub window_changes: Option<(u8, bool)>,
    /// cost, tombstones, lookback in minutes (0: none)
    pub changes: Option<(u8, bool, u8)>,
    /// cost, sequence (else generation), tombstones
    pub feed: Option<(u8, bool, bool)>,
    pub start_at: bool,
}

pub fn spec(force_full: bool) -> impl Strategy<Value = Spec> {
    let cost = 0u8..3;
    (
        any::<bool>(),
        proptest::option::weighted(0.7, cost.clone()),
        proptest::option::of(cost.clone()),
        proptest::option::of((cost.clone(), any::<bool>())),
        proptest::option::weighted(0.8, (cost.clone(), any::<bool>(), 0u8..3)),
        proptest::option::of((cost, any::<bool>(), any::<bool>())),
        any::<bool>(),
    )
        .prop_map(
            move |(keyless, full, window, window_changes, changes, feed, start_at)| Spec {
                keyless,
                full: if force_full {
                    Some(full.unwrap_or(1))
                } else {
                    full
                },
                window,
                window_changes,
                changes,
                feed,
                start_at,
            },
        )
}

/// The contract a spec describes, for table `name`.
pub fn contract(name: &str, s: &Spec) -> Contract {
    let key: Vec<&str> = if s.keyless { vec![] } else { vec!["id"] };
    let mut b = Contract::builder(name, key);
    let mut shapes = 0;
    let mut windowed = false;
    let mut tombstones = false;
    let cost = |c: u8| f64::from(c) / 2.0;
    if let Some(c) = s.full {
        b = b.shape("full", Shape::full().cost(cost(c)));
        shapes += 1;
    }
    if let Some(c) = s.window {
        b = b.shape("win", Shape::window().cost(cost(c)));
        shapes += 1;
        windowed = true;
    }
    if let Some((c, tomb, lb)) = s.changes {
        let shape = if s.keyless {
            Shape::changes(Deletions::None)
        } else {
            let d = if tomb {
                Deletions::Tombstone
            } else {
                Deletions::None
            };
            tombstones |= d == Deletions::Tombstone;
            let sh = Shape::changes(d);
            if lb > 0 {
                sh.lookback(Duration::from_seconds(60 * i64::from(lb) * 7).unwrap())
            } else {
                sh
            }
        };
        b = b.shape("changes", shape.cost(cost(c)));
        shapes += 1;
    }
    if !s.keyless {
        if let Some((c, t)) = s.window_changes {
            let d = if t {
                Deletions::Tombstone
            } else {
                Deletions::None
            };
            tombstones |= t;
            b = b.shape("winch", Shape::window_changes(d).cost(cost(c)));
            shapes += 1;
            windowed = true;
        }
        if let Some((c, sequence, t)) = s.feed {
            let d = if t {
                Deletions::Tombstone
            } else {
                Deletions::None
            };
            tombstones |= t;
            let sh = if sequence {
                Shape::sequence(d)
            } else {
                Shape::generations(d)
            };
            b = b.shape("feed", sh.cost(cost(c)));
            shapes += 1;
        }
        b = b.column("id", LogicalType::Int);
    }
    if shapes == 0 {
        b = b.shape("full", Shape::full());
    }
    if windowed {
        b = b.window_column("w").column("w", LogicalType::Int);
    }
    if tombstones {
        b = b
            .deleted_column("deleted")
            .column("deleted", LogicalType::Bool);
    }
    if s.start_at {
        b = b.start_at(minutes(-60));
    }
    b.build().unwrap()
}

/// One random delivery attempt.
#[derive(Debug, Clone)]
pub struct Step {
    pub shape: u8,
    pub dt: u16,
    pub lo: u8,
    pub len: u8,
    pub since: u8,
    pub rows: u8,
    pub tombstones: u8,
    pub issue: bool,
    pub advance: u8,
}

pub fn step() -> impl Strategy<Value = Step> {
    (
        any::<u8>(),
        0u16..240,
        0u8..20,
        0u8..6,
        any::<u8>(),
        0u8..4,
        0u8..3,
        any::<bool>(),
        0u8..4,
    )
        .prop_map(
            |(shape, dt, lo, len, since, rows, tombstones, issue, advance)| Step {
                shape,
                dt,
                lo,
                len,
                since,
                rows,
                tombstones,
                issue,
                advance,
            },
        )
}

fn covered(ledger: &Ledger, w: Option<&Window>) -> Vec<Region> {
    match w {
        Some(w) => ledger.regions_in(w),
        None => ledger.regions(),
    }
}

/// The manifest a step asks for against `ledger` at `t` (the `i`th step), if it builds.
pub fn attempt(ledger: &Ledger, s: &Step, t: Timestamp, i: usize) -> Option<Manifest> {
    let c = ledger.contract();
    let names: Vec<&String> = c.shapes().keys().collect();
    let name = names[usize::from(s.shape) % names.len()];
    let shape = c.shape(name).unwrap();
    let mut b = c.manifest(name.as_str(), t);
    let window = (shape.coverage() == dogana::Coverage::Window).then(|| {
        let lo = i64::from(s.lo);
        Window::new(Value::Int(lo), Value::Int(lo + i64::from(s.len)))
    });
    if let Some(w) = &window {
        b = b.window(w.clone());
    }
    let regions = covered(ledger, window.as_ref());
    let mut empty = false;
    match shape.checkpoint() {
        dogana::Checkpoint::None => {
            if s.issue && c.shapes().values().any(|sh| sh.is_feed()) && window.is_none() {
                b = b.generation(next_position(ledger, s, i));
            }
        }
        dogana::Checkpoint::Timestamp => {
            let mut options: Vec<Timestamp> = Vec::new();
            if let Some(m) = regions.iter().filter_map(Region::complete_as_of).min() {
                options.push(m);
                options.push(m.checked_sub(Duration::from_seconds(600).unwrap()).unwrap());
            }
            if let Some(m) = regions.iter().filter_map(Region::deletions_as_of).min() {
                options.push(m);
            }
            if let Some(r) = regions.get(usize::from(s.since) % regions.len().max(1)) {
                options.extend(r.complete_as_of());
            }
            options.extend(c.start_at());
            options.push(t);
            let since = options[usize::from(s.since) % options.len()];
            empty = since == t;
            b = b.since(since);
        }
        dogana::Checkpoint::Generation => {
            let since = match ledger.generation() {
                Some(p) if s.since % 8 != 0 => p.clone(),
                _ => Position::Token("g0".into()),
            };
            b = b
                .since(since)
                .generation(Position::Token(format!("g{}", i + 1)));
        }
        dogana::Checkpoint::Sequence => {
            let held = match ledger.generation() {
                Some(Position::Sequence(p)) => *p,
                _ => 0,
            };
            let since = held - i64::from(s.since % 3);
            let end = held + i64::from(s.advance);
            empty = since == end;
            b = b
                .since(Position::Sequence(since))
                .generation(Position::Sequence(end));
        }
    }
    let (rows, tombstones) = if empty {
        (0, 0)
    } else {
        (
            u64::from(s.rows),
            if shape.delivers_tombstones() {
                u64::from(s.tombstones)
            } else {
                0
            },
        )
    };
    b.rows(rows).tombstones(tombstones).build().ok()
}

fn next_position(ledger: &Ledger, s: &Step, i: usize) -> Position {
    if ledger.contract().positions_are_integers() {
        let held = match ledger.generation() {
            Some(Position::Sequence(p)) => *p,
            _ => 0,
        };
        Position::Sequence(held + i64::from(s.advance))
    } else {
        Position::Token(format!("g{}", i + 1))
    }
}

/// The ledger after every step the ledger admits, and the last instant used.
pub fn history(contract: &Contract, steps: &[Step]) -> (Ledger, Timestamp) {
    let mut ledger = Ledger::new(contract.clone());
    let mut t = t0();
    for (i, s) in steps.iter().enumerate() {
        t = t
            .checked_add(Duration::from_seconds(60 * i64::from(s.dt)).unwrap())
            .unwrap();
        if let Some(m) = attempt(&ledger, s, t, i) {
            if let Ok(next) = ledger.apply(&m) {
                ledger = next;
            }
        }
    }
    (ledger, t)
}

/// The manifest of an extraction with no rows; a feed ends where it starts (a sequence) or
/// issues a fresh token (a generation).
pub fn deliver(x: &Extraction, c: &Contract) -> Manifest {
    let mut b = x.manifest(c, 0);
    match x.since() {
        Some(Since::Position(p @ Position::Sequence(_))) => b = b.generation(p.clone()),
        Some(Since::Position(Position::Token(_))) => {
            b = b.generation(Position::Token("planned-next".into()))
        }
        _ => {}
    }
    b.build().unwrap()
}
