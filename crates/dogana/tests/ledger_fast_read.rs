//! `Ledger::from_slice_fast` reads a ledger document without a JSON tree. It must read every
//! canonical document, and never accept one the strict reader refuses nor read one
//! differently: the strict reader keeps every refusal and its message.

use dogana::{
    Contract, Date, FromWire, Ledger, LogicalType, Position, Shape, Timestamp, Window, Wire,
};
use proptest::prelude::*;

fn contract(window: LogicalType) -> Contract {
    Contract::builder("orders", ["id"])
        .shape("full", Shape::full())
        .shape("daily", Shape::window())
        .window_column("w")
        .column("id", LogicalType::Int)
        .column("w", window)
        .build()
        .unwrap()
}

/// Three disjoint date windows delivered in turn, then a full read with a generation.
fn ledger() -> Ledger {
    let c = contract(LogicalType::Date);
    let t0 = "2026-01-01T00:00:00Z".parse::<Timestamp>().unwrap();
    let at = |k: i64| Timestamp::from_micros(t0.as_micros() + k * 1_000_000).unwrap();
    let day = |d: i64| {
        Date::from_ymd(2026, 1, 1)
            .unwrap()
            .checked_add_days(d)
            .unwrap()
    };
    let mut l = Ledger::new(c.clone());
    for (k, (lo, hi)) in [(0, 2), (5, 5), (3, 4)].into_iter().enumerate() {
        let m = c
            .manifest("daily", at(k as i64 + 1))
            .window(Window::new(day(lo), day(hi)))
            .rows(1)
            .build()
            .unwrap();
        l = l.apply(&m).unwrap();
    }
    l
}

/// The strict reader alone: the JSON tree, then `from_value`.
fn strict(bytes: &[u8]) -> Option<Ledger> {
    let value = dogana_json::parse(bytes).ok()?;
    Ledger::from_value(&value).ok()
}

#[test]
fn reads_every_canonical_document() {
    let l = ledger();
    let c = contract(LogicalType::Str);
    let m = c
        .manifest("full", "2026-01-02T00:00:00Z".parse().unwrap())
        .generation(Position::Token("g\u{e9}".into()))
        .rows(1)
        .build();
    let with_generation = Ledger::new(c).apply(&m.unwrap()).unwrap();
    for l in [Ledger::new(contract(LogicalType::Int)), l, with_generation] {
        let doc = l.to_json();
        assert_eq!(Ledger::from_slice_fast(doc.as_bytes()).as_ref(), Some(&l));
    }
}

#[test]
fn leaves_other_spellings_to_the_strict_reader() {
    // rule: WIRE-06 — 4.0 is the version 4; the strict reader reads it, the fast one leaves it
    // the ledger's own version is its last member
    let doc = ledger().to_json();
    let doc = format!(
        "{},\"version\":4.0}}",
        doc.strip_suffix(",\"version\":4}").unwrap()
    );
    assert_eq!(Ledger::from_slice_fast(doc.as_bytes()), None);
    assert_eq!(Ledger::from_json(&doc).ok(), Some(ledger()));
}

#[test]
fn refusals_keep_the_strict_readers_message() {
    // rule: WIRE-07 — a missing field is named by the strict reader, whichever reader ran
    let doc = ledger().to_json().replacen(r#""low_open":false,"#, "", 1);
    let e = Ledger::from_json(&doc).unwrap_err();
    let strict = Ledger::from_value(&dogana_json::parse(doc.as_bytes()).unwrap()).unwrap_err();
    assert_eq!(e, strict);
    assert_eq!(e.0.field, "$.regions[1].low_open");
}

/// A document with one edit: a byte replaced, removed or inserted at `at`.
fn edited(doc: &[u8], at: usize, edit: u8, byte: u8) -> Vec<u8> {
    let mut out = doc.to_vec();
    let at = at % (out.len() + 1);
    match edit % 3 {
        0 if at < out.len() => out[at] = byte,
        1 if at < out.len() => {
            out.remove(at);
        }
        _ => out.insert(at, byte),
    }
    out
}

/// Bytes that matter to JSON and to the ledger's values.
fn byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        Just(b'"'),
        Just(b'\\'),
        Just(b','),
        Just(b':'),
        Just(b'{'),
        Just(b'}'),
        Just(b'['),
        Just(b']'),
        Just(b' '),
        Just(b'0'),
        Just(b'1'),
        Just(b'9'),
        Just(b'-'),
        Just(b'.'),
        Just(b'e'),
        Just(b'u'),
        Just(b'n'),
        Just(0x01),
        Just(0xC3),
        any::<u8>(),
    ]
}

/// Pieces of a ledger document, and what to put in their place: other values, other
/// spellings of the same value, other types, broken JSON.
const SWAPS: &[(&str, &[&str])] = &[
    (
        r#""version":4"#,
        &[
            r#""version":5"#,
            r#""version":4.0"#,
            r#""version":"4""#,
            r#""version":40"#,
            r#""version":-4"#,
        ],
    ),
    (
        r#""kind":"Region""#,
        &[
            r#""kind":"Regio""#,
            r#""kind":"Ledger""#,
            r#""k\u0069nd":"Region""#,
        ],
    ),
    (
        r#""kind":"Ledger""#,
        &[r#""kind":"Region""#, r#""kind":null"#],
    ),
    (
        r#""low":"#,
        &[
            r#""high":"#,
            r#""lo":"#,
            r#""low":null,"low":"#,
            r#""low" :"#,
        ],
    ),
    (
        r#""high":"#,
        &[r#""low":"#, r#""high":{"$date":"2026-01-09"},"high":"#],
    ),
    ("true", &["false", "null", "1", "tru", r#""true""#]),
    ("false", &["true", "null", "0", "falsey"]),
    (
        "null",
        &[
            "true",
            "0",
            r#""""#,
            "nul",
            r#"{"$date":"2026-01-02"}"#,
            "[]",
        ],
    ),
    (
        r#"{"$date":"#,
        &[
            r#"{"$datetime":"#,
            r#"{"$seconds":"#,
            r#"{"$date":"2026-01-02","$date":"#,
            r#"{ "$date" :"#,
        ],
    ),
    (
        r#"{"$datetime":"#,
        &[r#"{"$date":"#, r#"{"x":1,"$datetime":"#],
    ),
    (
        "2026-01-0",
        &["2026-13-0", "2026-01-3", "2026-1-0", "1900-01-0"],
    ),
    (
        "T00:00:0",
        &["T24:00:0", "T00:60:0", " 00:00:0", "T00:00:6"],
    ),
    ("+00:00", &["Z", "+01:00", "", "+00:00:00", "-00:00"]),
    ("},{", &["},", "}{", "}, {", "},{},{", "}]"]),
    ("[{", &["[", "[]", "[{}", "[ {"]),
    ("}]", &["]", "},]", "}]]"]),
    (
        "\"publication_id\":\"",
        &[
            "\"publication_id\":\"0",
            "\"publication_id\":null,\"x\":\"",
            "\"publication_id\":\"\\u0030",
        ],
    ),
    (
        "\"generation\":null",
        &[
            "\"generation\":\"\"",
            "\"generation\":7",
            "\"generation\":\"g\"",
            "\"generation\":1.5",
            "\"generation\":\"\\ud800\"",
        ],
    ),
    (
        "\"contract\":",
        &["\"contract\":null,\"c\":", "\"contract\": "],
    ),
    (
        "\"regions\":[",
        &["\"regions\":[],\"r\":[", "\"regions\": ["],
    ),
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    // rule: WIRE-07 — whatever the edit, the fast reader accepts only what the strict one does
    #[test]
    fn never_accepts_what_the_strict_reader_refuses(
        swaps in prop::collection::vec((any::<prop::sample::Index>(), any::<prop::sample::Index>(), any::<prop::sample::Index>()), 0..3),
        edits in prop::collection::vec((any::<usize>(), any::<u8>(), byte()), 0..2),
    ) {
        let mut doc = ledger().to_json();
        for (which, to, occurrence) in swaps {
            let (from, tos) = SWAPS[which.index(SWAPS.len())];
            let hits: Vec<usize> = doc.match_indices(from).map(|(i, _)| i).collect();
            if hits.is_empty() {
                continue;
            }
            let at = hits[occurrence.index(hits.len())];
            doc.replace_range(at..at + from.len(), tos[to.index(tos.len())]);
        }
        let mut doc = doc.into_bytes();
        for (at, edit, b) in edits {
            doc = edited(&doc, at, edit, b);
        }
        if let Some(fast) = Ledger::from_slice_fast(&doc) {
            prop_assert_eq!(Some(fast), strict(&doc));
        }
    }
}
