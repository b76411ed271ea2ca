//! Property: what a sender controls is bounded. A manifest document whose strings (table,
//! shape, generation, hashes, keys, tags) are of any length and hold any characters is either
//! refused with an error of a few kilobytes, or read, and then the receipt the gate writes for
//! it holds no name over 1,024 bytes and checks whose details stay small.

mod wire_support;

use dogana::{FromWire, Gate, Ledger, Manifest, Wire, NAME_MAX, PROBLEM_TEXT_MAX};
use proptest::prelude::*;
use serde_json::{json, Value};
use wire_support::*;

/// A hostile string: its length from a menu around the limits, its characters from another.
fn text() -> impl Strategy<Value = String> {
    let unit = prop_oneof![
        Just("a"),
        Just("é"),
        Just("\u{1b}[2J"),
        Just("\u{202e}"),
        Just("\""),
        Just("\\"),
        Just("😀"),
    ];
    let len = prop_oneof![
        Just(0usize),
        Just(1),
        Just(200),
        Just(NAME_MAX),
        Just(NAME_MAX + 1),
        Just(100_000),
        Just(3 << 20),
    ];
    (unit, len).prop_map(|(u, n)| u.repeat(n.div_ceil(u.len().max(1))))
}

/// Where the hostile string goes in the manifest document.
const PLACES: [&str; 8] = [
    "/table",
    "/shape",
    "/since",
    "/generation",
    "/content_hash",
    "/schema_hash",
    "/produced_at/$datetime",
    "key",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn refusals_and_receipts_stay_small(s in text(), place in 0usize..PLACES.len()) {
        // rule: TRUST-07, CONTRACT-48, MAN-09, WIRE-07
        let mut doc: Value = serde_json::from_str(&wednesday_changes().to_json()).unwrap();
        match PLACES[place] {
            // an unknown member named by the string
            "key" => {
                doc[s.as_str()] = json!(1);
            }
            "/produced_at/$datetime" => doc["produced_at"]["$datetime"] = json!(s),
            p => doc[&p[1..]] = json!(s),
        }
        let text = doc.to_string();
        match Manifest::from_json(&text) {
            Err(e) => {
                let shown = e.to_string();
                prop_assert!(shown.len() <= 3 * PROBLEM_TEXT_MAX + 200, "{} bytes", shown.len());
                // the refusal of a long string never shows much of it
                prop_assert!(shown.len() <= 2000 || s.len() <= 2000, "{} bytes", shown.len());
            }
            Ok(m) => {
                prop_assert!(m.table().len() <= NAME_MAX && m.shape().len() <= NAME_MAX);
                let (_, ledger): (_, Ledger) = sunday_and_tuesday();
                let receipt = Gate::evaluate(&ledger, &m, &[], at(WEDNESDAY), None, &[]);
                for check in receipt.checks() {
                    prop_assert!(check.detail().len() <= 3 * PROBLEM_TEXT_MAX + 200);
                }
                // the receipt reads back, however hostile what it carries
                let back = dogana::Receipt::from_json(&receipt.to_json());
                prop_assert!(back.is_ok(), "{:?}", back.err());
            }
        }
    }
}
