//! Receipts, manifests and contracts write their canonical document and their identity form
//! straight into text, without a JSON tree. For random values of every outcome, with and
//! without a transition, every optional field set and unset, and non-ASCII and control
//! characters in their strings, those bytes must be exactly the generic path's:
//! `dogana_json::canonical(&x.to_value())` and `dogana_json::jcs(&x.identity_dict())`.

mod wire_support;

use dogana::{
    Action, ActionKind, ApplyPlan, Check, Contract, FromWire, Ledger, Manifest, Outcome, Receipt,
    Region, Transition, Value, Window, Wire,
};
use proptest::prelude::*;
use serde_json::{json, Value as Json};
use sha2::{Digest, Sha256};
use wire_support::strategies::{contract, hex64, manifest, text, timestamp, value};

/// The generic path's identity JSON: RFC 8785 of the identity form built as a tree.
fn generic_jcs<W: Wire>(x: &W) -> String {
    String::from_utf8(dogana_json::jcs(&x.identity_dict())).unwrap()
}

fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The three direct writings of `x` against the generic path: the canonical document
/// (WIRE-17), the identity JSON (WIRE-21), the identity (WIRE-18), the last asked twice (a
/// kept identity).
fn assert_direct<W: Wire>(x: &W) -> Result<(), TestCaseError> {
    prop_assert_eq!(x.to_json(), dogana_json::canonical(&x.to_value()));
    let jcs = generic_jcs(x);
    prop_assert_eq!(x.identity_json(), jcs.clone());
    prop_assert_eq!(x.identity(), sha256_hex(&jcs));
    prop_assert_eq!(x.identity(), sha256_hex(&jcs));
    Ok(())
}

fn check() -> impl Strategy<Value = Check> {
    (text(), any::<bool>(), text())
        .prop_map(|(name, passed, detail)| Check::new(name, passed, detail))
}

/// Two values of one type, in order.
fn bounds() -> impl Strategy<Value = (Value, Value)> {
    let ordered = |(a, b): (Value, Value)| if a <= b { (a, b) } else { (b, a) };
    prop_oneof![
        (
            Value::INT_MIN..=Value::INT_MAX,
            Value::INT_MIN..=Value::INT_MAX
        )
            .prop_map(|(a, b)| (Value::Int(a), Value::Int(b))),
        (any::<String>(), text()).prop_map(|(a, b)| (Value::Str(a), Value::Str(b))),
        (timestamp(), timestamp()).prop_map(|(a, b)| (Value::Datetime(a), Value::Datetime(b))),
        (value(), Just(())).prop_map(|(a, ())| (a.clone(), a)),
    ]
    .prop_map(ordered)
}

fn region() -> impl Strategy<Value = Region> {
    (
        bounds(),
        any::<(bool, bool, bool, bool)>(),
        proptest::option::of((timestamp(), timestamp())),
    )
        .prop_filter_map(
            "a valid region",
            |((low, high), (bounded_low, bounded_high, lo, ho), dates)| {
                let (complete, deletions) = match dates {
                    Some((a, b)) => (Some(a.max(b)), Some(a.min(b))),
                    None => (None, None),
                };
                let low = bounded_low.then_some(low);
                let high = bounded_high.then_some(high);
                let (lo, ho) = match (&low, &high) {
                    (Some(l), Some(h)) if l == h => (false, false),
                    _ => (lo || low.is_none(), ho || high.is_none()),
                };
                Region::new(low, high, lo, ho, complete, deletions).ok()
            },
        )
}

fn action() -> impl Strategy<Value = Action> {
    (
        proptest::sample::select(vec![
            ActionKind::ReplaceAll,
            ActionKind::ReplaceWindow,
            ActionKind::Upsert,
            ActionKind::Tombstone,
            ActionKind::Append,
        ]),
        bounds(),
        proptest::collection::vec(text(), 0..3),
    )
        .prop_map(|(kind, (low, high), key)| {
            let window = (kind == ActionKind::ReplaceWindow).then(|| Window::new(low, high));
            Action::new(kind, window, key)
        })
}

fn transition() -> impl Strategy<Value = Transition> {
    (
        proptest::collection::vec(action(), 0..4),
        proptest::collection::vec(region(), 0..4),
    )
        .prop_map(|(actions, regions)| Transition::new(ApplyPlan::new(actions), regions))
}

/// A receipt read from a document of random parts: the outcome decides what the reader
/// requires of the chain fields and the transition (GATE-15, GATE-18, GATE-19).
fn receipt() -> impl Strategy<Value = Receipt> {
    (
        (manifest(), contract()),
        proptest::collection::vec(check(), 0..4),
        proptest::sample::select(vec![
            Outcome::Accepted,
            Outcome::Rejected,
            Outcome::Replayed,
        ]),
        timestamp(),
        proptest::option::of(text()),
        proptest::option::of(hex64()),
        (hex64(), hex64()),
        transition(),
    )
        .prop_map(
            |((m, c), checks, outcome, received_at, source, base, (head, ledger), t)| {
                let rejected = outcome == Outcome::Rejected;
                let publication_id = if rejected {
                    base.clone()
                        .unwrap_or_else(|| dogana::NO_PUBLICATION.to_owned())
                } else {
                    head
                };
                let doc = json!({
                    "version": 4,
                    "kind": "Receipt",
                    "manifest": m.to_value(),
                    "contract": c.to_value(),
                    "checks": checks.iter().map(Wire::to_value).collect::<Vec<Json>>(),
                    "outcome": outcome.name(),
                    "received_at": {"$datetime": received_at.to_string()},
                    "source": source,
                    "base_publication_id": base,
                    "publication_id": publication_id,
                    "ledger_identity": ledger,
                    "transition": if rejected { Json::Null } else { t.to_value() },
                });
                Receipt::from_value(&doc).unwrap()
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    // rule: WIRE-17 — a receipt's canonical document written directly is the generic one
    // rule: WIRE-21 — its identity JSON is RFC 8785 of identity_dict(), a replay's the original's
    // rule: WIRE-18 — its identity is SHA-256 of that JCS, kept or fresh
    #[test]
    fn receipts_write_the_generic_bytes(r in receipt()) {
        assert_direct(&r)?;
        assert_direct(r.manifest())?;
        assert_direct(r.contract())?;
        // A copy keeps or recomputes the same identity; a replay of an acceptance has it.
        prop_assert_eq!(r.clone().identity(), r.identity());
        if r.outcome() == Outcome::Accepted {
            let replay = r.as_replay().unwrap();
            assert_direct(&replay)?;
            prop_assert_eq!(replay.identity(), r.identity());
        }
        // Read back from the direct document: the same receipt, the same bytes.
        let back = Receipt::from_json(&r.to_json()).unwrap();
        prop_assert_eq!(&back, &r);
        prop_assert_eq!(back.identity_json(), r.identity_json());
    }

    // rule: WIRE-17 — manifests written directly: the generic canonical document
    // rule: WIRE-21 — and the generic identity JSON
    #[test]
    fn manifests_write_the_generic_bytes(m in manifest()) {
        assert_direct(&m)?;
    }

    // rule: WIRE-17 — contracts written directly, and the ledger's document that opens with one
    // rule: WIRE-21 — the contract's identity JSON, and the ledger's identity that contains it
    #[test]
    fn contracts_write_the_generic_bytes(c in contract()) {
        assert_direct(&c)?;
        let ledger = Ledger::new(c.clone());
        prop_assert_eq!(ledger.contract_identity(), c.identity());
        prop_assert_eq!(ledger.identity_json(), generic_jcs(&ledger));
        prop_assert_eq!(ledger.to_json(), dogana_json::canonical(&ledger.to_value()));
    }
}

// rule: WIRE-17 — the receipts of every outcome the gate and the receiver give
// rule: WIRE-21 — and their identity JSON
#[test]
fn receipts_of_the_gate_write_the_generic_bytes() {
    for r in wire_support::receipts() {
        assert_direct(&r).unwrap();
    }
    // a check detail and a source with controls and non-ASCII text
    let (wed, _) = wire_support::wednesday();
    let c: &Contract = wed.contract();
    let m: &Manifest = wed.manifest();
    let ledger = Ledger::new(c.clone());
    let r = dogana::Gate::reject(
        &ledger,
        m,
        &[Check::fail("caf\u{e9}", "line\u{0}\n\u{1F600} \"q\" \\")],
        m.produced_at(),
        Some("s\u{7f}\u{2028}/\u{e9}"),
    );
    assert_direct(&r).unwrap();
}
