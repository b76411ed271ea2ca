//! Every wire kind reads back what it writes: an equal value, the same bytes, the same identity
//! (WIRE-30), for values built through the public API and for random ones.

mod wire_support;

use dogana::{
    Action, ActionKind, ApplyPlan, Check, Contract, FromWire, Manifest, Region, RegionClaim, Shape,
    State, Transition, Window, Wire,
};
use proptest::prelude::*;
use wire_support::strategies::{contract, manifest};
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
