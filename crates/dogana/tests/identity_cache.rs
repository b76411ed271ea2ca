//! The ledger keeps each region's identity bytes and its own identity once computed, shared
//! with the ledgers it shares regions with. After random histories of deliveries, those cached
//! bytes must be exactly what a fresh serialisation writes: RFC 8785 of `identity_dict()`
//! (built from `regions()`, not from any cache), and the identity its SHA-256.

use dogana::{
    Contract, Date, Deletions, FromWire, Gate, Ledger, LedgerRows, LogicalType, Manifest, Position,
    Receipt, Shape, Timestamp, Value, Window, Wire,
};
use proptest::prelude::*;
use sha2::{Digest, Sha256};

#[derive(Debug, Clone, Copy)]
enum WinType {
    Int,
    Str,
    Date,
    Datetime,
}

/// Window values by index, in order. The ends of the domain (no predecessor, no successor) and,
/// for strings, escapes and non-ASCII text, whose JCS and canonical spellings differ.
fn wv(ty: WinType, i: usize) -> Value {
    let t0 = "2026-01-01T00:00:00Z".parse::<Timestamp>().unwrap();
    match ty {
        WinType::Int => Value::Int([Value::INT_MIN, -3, 0, 1, 2, 7, Value::INT_MAX][i]),
        WinType::Str => {
            Value::Str(["", "\0", "\"q", "a", "a\0", "b\n", "\u{e9}", "\u{1F600}"][i.min(7)].into())
        }
        WinType::Date => Value::Date(
            [Date::MIN, Date::from_ymd(2026, 1, 1).unwrap(), Date::MAX][i.min(2)]
                .checked_add_days(if i.min(2) == 1 { i as i64 } else { 0 })
                .unwrap(),
        ),
        WinType::Datetime => Value::Datetime(match i {
            0 => Timestamp::MIN,
            6 => Timestamp::MAX,
            _ => Timestamp::from_micros(t0.as_micros() + i as i64 * 1_000_001).unwrap(),
        }),
    }
}

fn logical(ty: WinType) -> LogicalType {
    match ty {
        WinType::Int => LogicalType::Int,
        WinType::Str => LogicalType::Str,
        WinType::Date => LogicalType::Date,
        WinType::Datetime => LogicalType::Datetime,
    }
}

fn contract(ty: WinType, feed: bool) -> Contract {
    let b = Contract::builder("t\u{e9}", ["id"])
        .shape("full", Shape::full())
        .shape("win", Shape::window())
        .shape("chg", Shape::changes(Deletions::Tombstone))
        .shape("wchg", Shape::window_changes(Deletions::None))
        .window_column("w")
        .cursor_column("u")
        .deleted_column("del")
        .column("id", LogicalType::Int)
        .column("u", LogicalType::Datetime)
        .column("del", LogicalType::Bool)
        .column("w", logical(ty));
    let b = if feed {
        b.shape("feed", Shape::generations(Deletions::Tombstone))
    } else {
        b
    };
    b.build().unwrap()
}

/// One delivery: its shape, a window of value indices, how far back `since` reaches.
#[derive(Debug, Clone)]
struct Step {
    shape: usize,
    low: usize,
    high: usize,
    back: i64,
    token: usize,
}

fn step() -> impl Strategy<Value = Step> {
    (0usize..5, 0usize..7, 0usize..7, 0i64..4, 0usize..3).prop_map(
        |(shape, low, high, back, token)| Step {
            shape,
            low: low.min(high),
            high: low.max(high),
            back,
            token,
        },
    )
}

fn manifest(c: &Contract, ty: WinType, s: &Step, i: i64, held: Option<&Position>) -> Manifest {
    let t0 = "2026-02-01T00:00:00Z".parse::<Timestamp>().unwrap();
    let at = |k: i64| Timestamp::from_micros(t0.as_micros() + k * 60_000_000).unwrap();
    let window = Window::new(wv(ty, s.low), wv(ty, s.high));
    let token = Position::Token(["g\u{e9}", "g\"1", "g2"][s.token].into());
    let b = match s.shape {
        0 => c.manifest("full", at(i)).generation(token),
        1 => c.manifest("win", at(i)).window(window),
        2 => c.manifest("chg", at(i)).since(at(i - s.back)),
        3 => c
            .manifest("wchg", at(i))
            .window(window)
            .since(at(i - s.back)),
        _ => match held {
            Some(p) => c.manifest("feed", at(i)).since(p.clone()).generation(token),
            None => c.manifest("full", at(i)),
        },
    };
    b.rows(1).build().unwrap()
}

/// The identity form's RFC 8785 text, built afresh (a ledger's from `regions()`).
fn fresh_jcs<W: Wire>(l: &W) -> String {
    String::from_utf8(dogana_json::jcs(&l.identity_dict())).unwrap()
}

fn fresh_identity<W: Wire>(l: &W) -> String {
    Sha256::digest(fresh_jcs(l).as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn win_type() -> impl Strategy<Value = WinType> {
    prop_oneof![
        Just(WinType::Int),
        Just(WinType::Str),
        Just(WinType::Date),
        Just(WinType::Datetime)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    // rule: WIRE-18 — the identity is SHA-256 of the JCS identity form, whatever is cached
    // rule: WIRE-22 — the cached region bytes are RFC 8785 (escapes, UTF-8, key order)
    // rule: LEDGER-15 — the receipt's ledger_identity is the identity of the ledger left
    #[test]
    fn cached_identity_bytes_equal_a_fresh_serialisation(
        ty in win_type(),
        feed in any::<bool>(),
        steps in prop::collection::vec(step(), 1..24),
    ) {
        let c = contract(ty, feed);
        let mut ledger = Ledger::new(c.clone());
        let mut history = vec![ledger.clone()];
        for (i, s) in steps.iter().enumerate() {
            let m = manifest(&c, ty, s, 10 * (i as i64 + 1), ledger.generation());
            let receipt = Gate::evaluate(&ledger, &m, &[], m.produced_at(), None, &[]);
            // rule: WIRE-18 — a manifest's and a receipt's kept identity is the fresh one,
            // the first time it is asked for and every time after, in copies and read back
            for _ in 0..2 {
                prop_assert_eq!(m.identity(), fresh_identity(&m));
                prop_assert_eq!(receipt.manifest().identity(), fresh_identity(&m));
                prop_assert_eq!(receipt.identity(), fresh_identity(&receipt));
                prop_assert_eq!(receipt.clone().identity(), fresh_identity(&receipt));
            }
            let read = Receipt::from_json(&receipt.to_json()).unwrap();
            prop_assert_eq!(read.identity(), receipt.identity());
            if let Ok(replay) = receipt.as_replay() {
                prop_assert_eq!(replay.identity(), fresh_identity(&replay));
                prop_assert_eq!(replay.identity(), receipt.identity());
            }
            if !receipt.accepted() {
                // A rejection names the ledger as it stands, from its cache.
                prop_assert_eq!(receipt.ledger_identity(), fresh_identity(&ledger));
                continue;
            }
            let next = ledger.follow(&receipt).unwrap();
            prop_assert_eq!(next.identity_json(), fresh_jcs(&next));
            prop_assert_eq!(receipt.ledger_identity(), fresh_identity(&next));
            prop_assert_eq!(next.identity(), fresh_identity(&next));
            // rule: WIRE-17 — the streamed canonical document is the generic one, byte for byte
            prop_assert_eq!(next.to_json(), dogana_json::canonical(&next.to_value()));
            // Read back from its canonical document, the ledger has the same identity.
            let read = Ledger::from_json(&next.to_json()).unwrap();
            prop_assert_eq!(read.identity(), fresh_identity(&next));
            prop_assert_eq!(read.identity_json(), fresh_jcs(&next));
            history.push(next.clone());
            ledger = next;
        }
        // The regions the last ledger shares with earlier ones did not change their bytes.
        for l in &history {
            prop_assert_eq!(l.identity_json(), fresh_jcs(l));
            prop_assert_eq!(l.identity(), fresh_identity(l));
        }
    }
}

/// The rows a store keeps of `ledger`, by key (what `region_rows_since(None)` writes).
fn rows_of(ledger: &Ledger) -> std::collections::BTreeMap<Vec<u8>, String> {
    ledger.region_rows_since(None).added.into_iter().collect()
}

fn document_of(rows: &std::collections::BTreeMap<Vec<u8>, String>, cut: &LedgerRows) -> String {
    LedgerRows::document(&cut.head, rows.values().map(String::as_str), &cut.tail)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    // rule: WIRE-17 — a ledger kept region by region is its canonical document, byte for byte:
    // the rows of every region in key order, and the rows a history of deliveries leaves when
    // each writes only the regions it changed
    #[test]
    fn region_rows_rebuild_the_canonical_document(
        ty in win_type(),
        feed in any::<bool>(),
        steps in prop::collection::vec(step(), 1..24),
    ) {
        let c = contract(ty, feed);
        let mut ledger = Ledger::new(c.clone());
        let mut kept = rows_of(&ledger);
        for (i, s) in steps.iter().enumerate() {
            let m = manifest(&c, ty, s, 10 * (i as i64 + 1), ledger.generation());
            let receipt = Gate::evaluate(&ledger, &m, &[], m.produced_at(), None, &[]);
            if !receipt.accepted() {
                continue;
            }
            let next = ledger.follow(&receipt).unwrap();
            let cut = next.region_rows_since(Some(&ledger));
            for key in &cut.removed {
                prop_assert!(kept.remove(key).is_some(), "a removed key was kept");
            }
            for (key, region) in &cut.changed {
                prop_assert!(kept.contains_key(key), "a changed key was not kept");
                kept.insert(key.clone(), region.clone());
            }
            for (key, region) in &cut.added {
                prop_assert!(!kept.contains_key(key), "an added key was kept");
                kept.insert(key.clone(), region.clone());
            }
            prop_assert_eq!(document_of(&kept, &cut), next.to_json());
            prop_assert_eq!(&kept, &rows_of(&next));
            prop_assert_eq!(kept.len(), next.region_count());
            // a ledger read back from its document has the same rows, and nothing to write
            let read = Ledger::from_json(&next.to_json()).unwrap();
            let same = read.region_rows_since(Some(&next));
            prop_assert!(same.changed.is_empty() && same.added.is_empty() && same.removed.is_empty());
            ledger = next;
        }
    }
}

/// A region whose point is gone makes the region before it longer: that row is rewritten
/// though its dates did not change (ledgers read from documents share no structure, so the
/// diff compares every point).
// rule: WIRE-17 — the rows left are the canonical document's
#[test]
fn a_removed_region_rewrites_the_one_before_it() {
    let c = contract(WinType::Int, false);
    let step = |low, high| Step {
        shape: 1,
        low,
        high,
        back: 0,
        token: 0,
    };
    let mut three = Ledger::new(c.clone());
    for (i, s) in [step(2, 2), step(3, 3)].iter().enumerate() {
        three = three
            .apply(&manifest(&c, WinType::Int, s, 10 * (i as i64 + 1), None))
            .unwrap();
    }
    // the same ledger with the region of value 0 stretched over value 1's
    let mut doc: serde_json::Value = serde_json::from_str(&three.to_json()).unwrap();
    let regions = doc["regions"].as_array_mut().unwrap();
    let at = regions
        .iter()
        .position(|r| r["low"] == serde_json::json!(0))
        .unwrap();
    let high = regions[at + 1]["high"].clone();
    regions[at]["high"] = high;
    regions.remove(at + 1);
    let two = Ledger::from_json(&dogana_json::canonical(&doc)).unwrap();
    assert_eq!(two.region_count() + 1, three.region_count());
    let before = Ledger::from_json(&three.to_json()).unwrap();
    let cut = two.region_rows_since(Some(&before));
    assert_eq!(cut.removed.len(), 1);
    assert_eq!(cut.changed.len(), 1, "the stretched region is rewritten");
    assert_eq!(cut.added.len(), 0);
    let mut kept = rows_of(&three);
    kept.remove(&cut.removed[0]);
    kept.extend(cut.changed.clone());
    assert_eq!(document_of(&kept, &cut), two.to_json());
}

/// A receipt fresh from the gate remembers the ledger it leaves; following it on the ledger it
/// was decided on gives that ledger, and on any other ledger decides afresh.
// rule: RECV-17 — follow leaves exactly the ledger the receipt names, or refuses
#[test]
fn a_receipt_remembers_only_the_ledger_it_was_decided_on() {
    let c = contract(WinType::Date, false);
    let step = |shape, low, high| Step {
        shape,
        low,
        high,
        back: 0,
        token: 0,
    };
    let first = manifest(&c, WinType::Date, &step(1, 1, 1), 10, None);
    let base = Ledger::new(c.clone()).apply(&first).unwrap();
    let m = manifest(&c, WinType::Date, &step(1, 2, 2), 20, None);
    let receipt = Gate::evaluate(&base, &m, &[], m.produced_at(), None, &[]);
    let read = dogana::Receipt::from_json(&receipt.to_json()).unwrap();
    assert_eq!(read, receipt);
    let next = base.follow(&receipt).unwrap();
    assert_eq!(next, base.follow(&read).unwrap());
    assert_eq!(next.identity(), fresh_identity(&next));
    // Another ledger with the same head: regions differ, so the receipt leaves another ledger.
    let other = Ledger::from_parts(
        c.clone(),
        Ledger::new(c.clone()).regions(),
        None,
        base.publication_id().map(str::to_owned),
    )
    .unwrap();
    let e = other.follow(&receipt).unwrap_err();
    assert_eq!(e.0.field, "ledger_identity");
}

/// A date-windowed contract for long histories.
fn daily() -> Contract {
    Contract::builder("orders", ["id"])
        .shape("full", Shape::full())
        .shape("win", Shape::window())
        .window_column("d")
        .column("id", LogicalType::Int)
        .column("d", LogicalType::Date)
        .build()
        .unwrap()
}

/// A delivery of a long history: a window of `len` days from day `first`, or a full read.
#[derive(Debug, Clone)]
enum Long {
    Window { first: i64, len: i64 },
    Full,
}

fn long_step() -> impl Strategy<Value = Long> {
    prop_oneof![
        40 => (0i64..600, 1i64..6).prop_map(|(first, len)| Long::Window { first, len }),
        1 => Just(Long::Full),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    // rule: LEDGER-15 — the identity of a ledger of hundreds of regions, many runs of its
    // identity bytes shared with the ledger before and the changed ones rewritten, is the
    // SHA-256 of a fresh serialisation after every delivery
    // rule: WIRE-18 — the identity form's bytes, whatever was shared
    #[test]
    fn identities_of_long_ledgers_equal_a_fresh_serialisation(
        built in 100usize..400,
        steps in prop::collection::vec(long_step(), 1..40),
    ) {
        let c = daily();
        let day0 = Date::from_ymd(2024, 1, 1).unwrap();
        let day = |k: i64| day0.checked_add_days(k).unwrap();
        let t0 = "2026-01-01T00:00:00Z".parse::<Timestamp>().unwrap();
        let at = |k: usize| Timestamp::from_micros(t0.as_micros() + k as i64 * 1_000_000).unwrap();
        // every other day a window of its own: `built` regions apart, then the random steps
        // over them, in the middle (splits, merges) as at the ends
        let mut ledger = Ledger::new(c.clone());
        for k in 0..built {
            let m = c.manifest("win", at(k)).window(Window::new(day(2 * k as i64), day(2 * k as i64))).rows(1).build().unwrap();
            ledger = ledger.apply(&m).unwrap();
        }
        prop_assert_eq!(ledger.identity(), fresh_identity(&ledger));
        for (i, s) in steps.iter().enumerate() {
            let t = at(built + i);
            let m = match s {
                Long::Window { first, len } => c.manifest("win", t).window(Window::new(day(*first), day(first + len - 1))),
                Long::Full => c.manifest("full", t),
            };
            let m = m.rows(1).build().unwrap();
            let receipt = Gate::evaluate(&ledger, &m, &[], m.produced_at(), None, &[]);
            prop_assert!(receipt.accepted(), "{:?}", receipt.failures().collect::<Vec<_>>());
            let next = ledger.follow(&receipt).unwrap();
            prop_assert_eq!(receipt.ledger_identity(), fresh_identity(&next));
            prop_assert_eq!(next.identity_json(), fresh_jcs(&next));
            // the ledger before keeps its own bytes
            prop_assert_eq!(ledger.identity_json(), fresh_jcs(&ledger));
            ledger = next;
        }
    }
}
