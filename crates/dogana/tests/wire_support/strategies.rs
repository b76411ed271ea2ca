//! Random wire values for property tests, built through the public API: timestamps, texts
//! (non-ASCII, controls), key values, positions, manifests and contracts with every optional
//! field set or unset.

use dogana::{
    Contract, Deletions, Duration, LogicalType, Manifest, Position, Shape, Timestamp, Value, Window,
};
use proptest::prelude::*;

use super::days;

pub fn timestamp() -> impl Strategy<Value = Timestamp> {
    prop_oneof![
        (Timestamp::MIN.as_micros()..=Timestamp::MAX.as_micros()),
        // whole seconds, the common case, written without a fraction
        (-62_135_596_800i64..=253_402_300_799).prop_map(|s| s * 1_000_000),
        Just(Timestamp::MIN.as_micros()),
        Just(Timestamp::MAX.as_micros()),
    ]
    .prop_map(|m| Timestamp::from_micros(m).unwrap())
}

pub fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z_][a-z0-9_]{0,8}",
        any::<String>(),
        Just("\u{1F600}\u{FF61}\u{e9}".to_owned()),
        // controls, quotes, DEL and separators, which the two forms escape differently
        Just("\u{0}\u{1f}\t\n\"\\/\u{7f}\u{2028}\u{ffff}".to_owned()),
        Just("".to_owned()),
    ]
}

pub fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        (Value::INT_MIN..=Value::INT_MAX).prop_map(Value::Int),
        any::<String>().prop_map(Value::Str),
        (dogana::Date::MIN.days_since_epoch()..=dogana::Date::MAX.days_since_epoch())
            .prop_map(|d| Value::Date(dogana::Date::from_days_since_epoch(d).unwrap())),
        timestamp().prop_map(Value::Datetime),
    ]
}

pub fn hex64() -> impl Strategy<Value = String> {
    "[0-9a-f]{64}"
}

pub fn position() -> impl Strategy<Value = Position> {
    prop_oneof![
        "[a-zA-Z0-9:/.-]{1,20}".prop_map(Position::Token),
        (Value::INT_MIN..=Value::INT_MAX).prop_map(Position::Sequence),
    ]
}

pub fn manifest() -> impl Strategy<Value = Manifest> {
    (
        (text(), text(), timestamp()),
        proptest::option::of((value(), value())),
        proptest::option::of(prop_oneof![
            timestamp().prop_map(dogana::Since::Time),
            position().prop_map(dogana::Since::Position),
        ]),
        proptest::option::of(position()),
        (0..=Value::INT_MAX as u64, 0..=Value::INT_MAX as u64),
        proptest::option::of(hex64()),
        proptest::option::of(hex64()),
    )
        .prop_map(
            |((table, shape, t), window, since, generation, (rows, tombs), sh, ch)| {
                let mut b = Manifest::builder(table, shape, t)
                    .rows(rows)
                    .tombstones(tombs);
                if let Some((l, h)) = window {
                    b = b.window(Window::new(l, h));
                }
                if let Some(s) = since {
                    b = b.since(s);
                }
                if let Some(g) = generation {
                    b = b.generation(g);
                }
                if let Some(h) = sh {
                    b = b.schema_hash(h);
                }
                if let Some(h) = ch {
                    b = b.content_hash(h);
                }
                b.build().unwrap()
            },
        )
}

pub fn cost() -> impl Strategy<Value = Option<f64>> {
    proptest::option::of(prop_oneof![
        (0u32..1000).prop_map(f64::from),
        0.0f64..1e6,
        Just(0.1),
        Just(1e-7),
        Just(123456.789),
        Just(1e21),
        Just(f64::MAX),
    ])
}

/// Seconds as a duration: whole, or with a fraction binary64 spells exactly.
pub fn duration() -> impl Strategy<Value = Duration> {
    prop_oneof![
        (1i64..10_000_000).prop_map(|s| Duration::from_seconds(s).unwrap()),
        (1i64..1_000_000).prop_map(|h| Duration::from_micros(i128::from(h) * 500_000).unwrap()),
        Just(Duration::MAX),
    ]
}

#[derive(Debug, Clone)]
pub struct ShapeSpec {
    /// 0 full, 1 window, 2 window changes, 3 changes, 4 feed (generation or sequence)
    kind: u8,
    tombstones: bool,
    cost: Option<f64>,
    size: Option<Duration>,
    days: i64,
    lookback: Option<Duration>,
}

pub fn shape_spec() -> impl Strategy<Value = ShapeSpec> {
    (
        0u8..5,
        any::<bool>(),
        cost(),
        proptest::option::of(duration()),
        1i64..400,
        proptest::option::of(prop_oneof![Just(Duration::ZERO), duration()]),
    )
        .prop_map(|(kind, tombstones, cost, size, days, lookback)| ShapeSpec {
            kind,
            tombstones,
            cost,
            size,
            days,
            lookback,
        })
}

/// A valid contract built from random choices: every choice is adjusted to what the protocol
/// allows, so most draws build.
pub fn contract() -> impl Strategy<Value = Contract> {
    (
        text().prop_filter("a name", |t| {
            !t.is_empty() && !t.chars().any(char::is_control)
        }),
        proptest::collection::vec("[a-z\u{e9}\u{1F600}]{1,6}", 0..3),
        proptest::sample::select(vec![
            None,
            Some(LogicalType::Int),
            Some(LogicalType::Str),
            Some(LogicalType::Date),
            Some(LogicalType::Datetime),
        ]),
        proptest::sample::select(vec![
            None,
            Some(LogicalType::Datetime),
            Some(LogicalType::Int),
        ]),
        any::<bool>(),
        proptest::collection::btree_map("[a-z\u{FF61}\u{1F600} ]{1,5}", shape_spec(), 1..6),
        proptest::option::of(hex64()),
        proptest::option::of(timestamp()),
    )
        .prop_filter_map(
            "valid contract",
            |(table, key, window, cursor, sequences, specs, schema_hash, start_at)| {
                let mut key: Vec<String> = key.into_iter().map(|k| format!("k_{k}")).collect();
                key.dedup();
                let keyed = !key.is_empty();
                let mut b = Contract::builder(table, key.clone());
                let (mut has_window, mut has_tombstones) = (false, false);
                for (name, s) in specs {
                    let del = if s.tombstones && keyed {
                        Deletions::Tombstone
                    } else {
                        Deletions::None
                    };
                    let mut shape = match (s.kind, window.is_some(), keyed) {
                        (1, true, _) => Shape::window(),
                        (2, true, true) => Shape::window_changes(del),
                        (3, _, _) => Shape::changes(del),
                        (4, _, true) if sequences => Shape::sequence(del),
                        (4, _, true) => Shape::generations(del),
                        _ => Shape::full(),
                    };
                    if let Some(c) = s.cost {
                        shape = shape.cost(c);
                    }
                    if shape.coverage() == dogana::Coverage::Window {
                        has_window = true;
                        match window {
                            Some(LogicalType::Date) => shape = shape.size(days(s.days)),
                            Some(LogicalType::Datetime) => {
                                if let Some(size) = s.size {
                                    shape = shape.size(size);
                                }
                            }
                            _ => {}
                        }
                    }
                    if shape.checkpoint() == dogana::Checkpoint::Timestamp && keyed {
                        if let Some(l) = s.lookback {
                            shape = shape.lookback(l);
                        }
                    }
                    has_tombstones |= shape.delivers_tombstones();
                    b = b.shape(name, shape);
                }
                for k in &key {
                    b = b.column(k.clone(), LogicalType::Str);
                }
                if let (true, Some(t)) = (has_window, window) {
                    b = b.window_column("w").column("w", t);
                }
                if let Some(t) = cursor {
                    b = b.cursor_column("c").column("c", t);
                }
                if has_tombstones {
                    b = b.deleted_column("d").column("d", LogicalType::Bool);
                }
                if let Some(h) = schema_hash {
                    b = b.schema_hash(h);
                }
                if let Some(t) = start_at {
                    b = b.start_at(t);
                }
                b.build().ok()
            },
        )
}
