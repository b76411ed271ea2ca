//! Properties of the planner over random ledgers: what `plan_delivery` proposes is accepted
//! and meets the requirement; nothing is proposed only when the claims already meet it; what
//! `next_extraction` asks for is admitted.

mod planning_support;

use dogana::{
    next_extraction, plan_delivery, Claims, Duration, Gate, Requirement, Timestamp, Value, Window,
};
use planning_support::{contract, deliver, history, minutes, spec, step};
use proptest::prelude::*;

/// Whether claims meet a requirement, read from the claims' minima (CLAIMS-08).
fn meets(claims: &Claims, r: &Requirement) -> bool {
    claims
        .complete_as_of()
        .is_some_and(|c| c >= r.complete_as_of())
        && r.deletions_as_of()
            .is_none_or(|need| claims.deletions_as_of().is_some_and(|d| d >= need))
}

fn requirement(
    table: &str,
    windowed: bool,
    (c, d, window): (i64, Option<i64>, Option<(u8, u8)>),
) -> Requirement {
    let mut r = Requirement::new(table, minutes(c));
    if let Some(back) = d {
        r = r.with_deletions_as_of(minutes(c - back));
    }
    if let (true, Some((lo, len))) = (windowed, window) {
        let lo = i64::from(lo);
        r = r.with_window(Window::new(Value::Int(lo), Value::Int(lo + i64::from(len))));
    }
    r
}

fn wanted() -> impl Strategy<Value = (i64, Option<i64>, Option<(u8, u8)>)> {
    (
        -120i64..3000,
        proptest::option::of(prop_oneof![Just(0i64), 0i64..300]),
        proptest::option::of((0u8..22, 0u8..8)),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn a_planned_delivery_is_accepted_and_meets_the_requirement(
        s in spec(false),
        steps in proptest::collection::vec(step(), 0..12),
        want in wanted(),
    ) {
        // rule: PLANNER-02
        // rule: PLANNER-03
        // rule: PLANNER-04
        // rule: PLANNER-09
        let c = contract("t", &s);
        let (ledger, _) = history(&c, &steps);
        let r = requirement("t", c.window_column().is_some(), want);
        match plan_delivery(&ledger, &r) {
            Ok(None) => {
                let claims = ledger.claims(Timestamp::MAX, Duration::MAX, r.window()).unwrap();
                prop_assert!(meets(&claims, &r), "nothing planned, yet {claims:?} misses {r}");
            }
            Ok(Some(x)) => {
                prop_assert!(x.until() >= r.complete_as_of());
                prop_assert!(r.deletions_as_of().is_none_or(|d| x.until() >= d));
                let shape = c.shape(x.shape()).unwrap();
                let m = deliver(&x, &c);
                let receipt = Gate::evaluate(&ledger, &m, &[], x.until(), None, &[]);
                prop_assert!(receipt.accepted(), "{x}: {:?}", receipt.checks());
                let after = ledger.follow(&receipt).unwrap();
                let claims = after.claims(x.until(), Duration::MAX, r.window()).unwrap();
                prop_assert!(meets(&claims, &r), "{x} leaves {claims:?}, short of {r}");
                // a complete read always establishes a requirement over what it covers, so
                // the chosen read is never dearer than one (ties by name)
                let order = |name: &str| (c.shape(name).unwrap().cost_value(), name.to_owned());
                let chosen = (shape.cost_value(), x.shape().to_owned());
                if c.shape("full").is_some() {
                    prop_assert!(chosen <= order("full"), "{x} chosen over full");
                }
                if c.shape("win").is_some() && r.window().is_some() {
                    prop_assert!(chosen <= order("win"), "{x} chosen over win");
                }
            }
            Err(e) => {
                // rule: PLANNER-08
                prop_assert!(c.shape("full").is_none(), "a full read always serves: {e}");
                prop_assert_eq!(e.reasons.len(), c.shapes().len(), "{}", e);
            }
        }
    }

    #[test]
    fn a_next_extraction_is_admitted(
        s in spec(false),
        steps in proptest::collection::vec(step(), 0..12),
        pick in any::<u8>(),
        later in 1i64..600,
    ) {
        // rule: PLANNER-11
        // rule: PLANNER-15
        let c = contract("t", &s);
        let (ledger, last) = history(&c, &steps);
        let names: Vec<&String> = c.shapes().keys().collect();
        let name = names[usize::from(pick) % names.len()];
        let until = last.checked_add(Duration::from_seconds(60 * later).unwrap()).unwrap();
        if let Ok(x) = next_extraction(&ledger, name, until, None) {
            prop_assert_eq!(x.until(), until);
            let m = deliver(&x, &c);
            let receipt = Gate::evaluate(&ledger, &m, &[], until, None, &[]);
            prop_assert!(receipt.accepted(), "{x}: {:?}", receipt.checks());
        }
    }

    #[test]
    fn a_complete_request_always_exists_after_the_evidence(
        s in spec(true),
        steps in proptest::collection::vec(step(), 0..12),
        later in 1i64..600,
    ) {
        // rule: PLANNER-15
        let c = contract("t", &s);
        let (ledger, last) = history(&c, &steps);
        let until = last.checked_add(Duration::from_seconds(60 * later).unwrap()).unwrap();
        prop_assert!(next_extraction(&ledger, "full", until, None).is_ok());
    }
}
