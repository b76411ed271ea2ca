//! Every wire kind reads back what it writes: an equal value, the same bytes, the same identity
//! (WIRE-30), for values built through the public API and for random ones.

mod wire_support;

use dogana::{
    Action, ActionKind, ApplyPlan, Check, Contract, Deletions, Duration, FromWire, LogicalType,
    Manifest, Position, Region, RegionClaim, Shape, State, Timestamp, Transition, Value, Window,
    Wire,
};
use proptest::prelude::*;
use wire_support::*;

#[test]
fn contracts_round_trip() {
    // rule: WIRE-30
    for c in contracts() {
        round_trip(&c);
    }
}

#[test]
fn every_shape_kind_round_trips_alone_and_inside_a_contract() {
    // rule: WIRE-30, WIRE-03
    let mut kinds = 0;
    for c in contracts() {
        for (name, shape) in c.shapes() {
            round_trip(shape);
            let inside = &c.to_value()["shapes"][name];
            assert_eq!(Shape::from_value(inside).unwrap(), *shape);
            kinds += 1;
        }
    }
    assert!(kinds >= 10);
}

#[test]
fn manifests_round_trip() {
    // rule: WIRE-30
    let mut all = vec![sunday_full(), tuesday_last3(), wednesday_changes()];
    for r in receipts() {
        all.push(r.manifest().clone());
    }
    for m in &all {
        round_trip(m);
    }
}

#[test]
fn ledgers_after_deliveries_round_trip() {
    // rule: WIRE-30
    let ledgers = ledgers();
    assert!(ledgers.iter().any(|l| l.region_count() >= 3));
    assert!(ledgers.iter().any(|l| l.generation().is_some()));
    for l in &ledgers {
        round_trip(l);
        for r in l.regions() {
            round_trip(&r);
        }
    }
}

#[test]
fn receipts_of_every_outcome_round_trip() {
    // rule: WIRE-30, GATE-14
    let receipts = receipts();
    for outcome in ["accepted", "rejected", "replayed"] {
        assert!(receipts.iter().any(|r| r.outcome().name() == outcome));
    }
    for r in &receipts {
        round_trip(r);
        for c in r.checks() {
            round_trip(c);
        }
        if let Some(t) = r.transition() {
            round_trip(t);
            round_trip(t.plan());
            for a in t.plan().actions() {
                round_trip(a);
            }
        }
    }
}

#[test]
fn plans_of_every_action_kind_round_trip() {
    // rule: WIRE-30, PLAN-02
    let w = Window::new(day("2026-10-25"), day("2026-10-27"));
    let key = vec!["id".to_owned()];
    let plan = ApplyPlan::new(vec![
        Action::new(ActionKind::ReplaceAll, None, key.clone()),
        Action::new(ActionKind::ReplaceWindow, Some(w), key.clone()),
        Action::new(ActionKind::Upsert, None, key.clone()),
        Action::new(ActionKind::Tombstone, None, key),
        Action::new(ActionKind::Append, None, vec![]),
    ]);
    round_trip(&plan);
    round_trip(&ApplyPlan::new(vec![]));
    let t = Transition::new(plan, vec![]);
    round_trip(&t);
}

#[test]
fn claims_round_trip() {
    // rule: WIRE-30
    let claims = claims();
    assert!(claims
        .iter()
        .any(|c| c.regions().iter().any(|r| r.state() == State::Expired)));
    for c in &claims {
        round_trip(c);
        for r in c.regions() {
            round_trip(r);
        }
    }
    let lone = RegionClaim::new(
        "orders",
        Region::new(None, None, true, true, None, None).unwrap(),
        State::Unknown,
    );
    round_trip(&lone);
}

#[test]
fn checks_round_trip_with_any_text() {
    // rule: WIRE-30
    for c in [
        Check::pass("rows", ""),
        Check::fail("caf\u{e9} \u{1F600}", "line 1\nline 2\t\"quoted\" \\ \u{0}"),
    ] {
        round_trip(&c);
    }
}

// ---- random values ----

fn timestamp() -> impl Strategy<Value = Timestamp> {
    prop_oneof![
        (Timestamp::MIN.as_micros()..=Timestamp::MAX.as_micros()),
        // whole seconds, the common case, written without a fraction
        (-62_135_596_800i64..=253_402_300_799).prop_map(|s| s * 1_000_000),
        Just(Timestamp::MIN.as_micros()),
        Just(Timestamp::MAX.as_micros()),
    ]
    .prop_map(|m| Timestamp::from_micros(m).unwrap())
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z_][a-z0-9_]{0,8}",
        any::<String>(),
        Just("\u{1F600}\u{FF61}\u{e9}".to_owned()),
        Just("".to_owned()),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        (Value::INT_MIN..=Value::INT_MAX).prop_map(Value::Int),
        any::<String>().prop_map(Value::Str),
        (dogana::Date::MIN.days_since_epoch()..=dogana::Date::MAX.days_since_epoch())
            .prop_map(|d| Value::Date(dogana::Date::from_days_since_epoch(d).unwrap())),
        timestamp().prop_map(Value::Datetime),
    ]
}

fn hex64() -> impl Strategy<Value = String> {
    "[0-9a-f]{64}"
}

fn position() -> impl Strategy<Value = Position> {
    prop_oneof![
        "[a-zA-Z0-9:/.-]{1,20}".prop_map(Position::Token),
        (Value::INT_MIN..=Value::INT_MAX).prop_map(Position::Sequence),
    ]
}

fn manifest() -> impl Strategy<Value = Manifest> {
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

fn cost() -> impl Strategy<Value = Option<f64>> {
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
fn duration() -> impl Strategy<Value = Duration> {
    prop_oneof![
        (1i64..10_000_000).prop_map(|s| Duration::from_seconds(s).unwrap()),
        (1i64..1_000_000).prop_map(|h| Duration::from_micros(i128::from(h) * 500_000).unwrap()),
        Just(Duration::MAX),
    ]
}

#[derive(Debug, Clone)]
struct ShapeSpec {
    /// 0 full, 1 window, 2 window changes, 3 changes, 4 feed (generation or sequence)
    kind: u8,
    tombstones: bool,
    cost: Option<f64>,
    size: Option<Duration>,
    days: i64,
    lookback: Option<Duration>,
}

fn shape_spec() -> impl Strategy<Value = ShapeSpec> {
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
fn contract() -> impl Strategy<Value = Contract> {
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

/// The document with every object's keys in reverse order and whitespace everywhere: the same
/// JSON value, other bytes.
fn reformatted(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Object(m) => {
            let members: Vec<String> = m
                .iter()
                .rev()
                .map(|(k, x)| {
                    format!(
                        "\n  {} :  {}",
                        serde_json::to_string(k).unwrap(),
                        reformatted(x)
                    )
                })
                .collect();
            format!("{{ {} \n}}", members.join(" ,"))
        }
        serde_json::Value::Array(xs) => {
            let items: Vec<String> = xs.iter().map(reformatted).collect();
            format!("[ {} ]", items.join(" , "))
        }
        other => serde_json::to_string(other).unwrap(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn random_manifests_round_trip(m in manifest()) {
        // rule: WIRE-30
        let text = m.to_json();
        let back = Manifest::from_json(&text).unwrap();
        prop_assert_eq!(&back, &m);
        prop_assert_eq!(back.to_json(), text);
    }

    #[test]
    fn random_manifest_identity_is_stable_under_reformatting(m in manifest()) {
        // rule: WIRE-18, WIRE-30
        let again = Manifest::from_json(&reformatted(&m.to_value())).unwrap();
        prop_assert_eq!(again.identity(), m.identity());
        prop_assert_eq!(again.identity_json(), m.identity_json());
    }

    #[test]
    fn random_contracts_round_trip(c in contract()) {
        // rule: WIRE-30
        let text = c.to_json();
        let back = Contract::from_json(&text).unwrap();
        prop_assert_eq!(&back, &c);
        prop_assert_eq!(back.to_json(), text);
    }

    #[test]
    fn random_contract_identity_is_stable_under_reformatting(c in contract()) {
        // rule: WIRE-18, CONTRACT-46
        let again = Contract::from_json(&reformatted(&c.to_value())).unwrap();
        prop_assert_eq!(again.identity(), c.identity());
    }
}
