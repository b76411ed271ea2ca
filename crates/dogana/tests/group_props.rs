//! Properties of `plan_together` over random groups: applying every request at its `until`
//! makes the group exact at `until`; nothing is planned only when the group is already exact
//! late enough.

mod planning_support;

use std::collections::BTreeMap;

use dogana::{plan_together, Duration, Group, Ledger, Manifest, Receipt, Value, Window};
use planning_support::{contract, deliver, history, minutes, spec, step, Spec, Step};
use proptest::prelude::*;

fn table() -> impl Strategy<Value = (Spec, Vec<Step>, Option<(u8, u8)>)> {
    (
        spec(true),
        proptest::collection::vec(step(), 0..10),
        proptest::option::of((0u8..22, 0u8..8)),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn applying_plan_together_makes_the_group_exact_at_until(
        tables in proptest::collection::vec(table(), 1..4),
        at_least in -120i64..3000,
    ) {
        // rule: GROUP-27
        // rule: GROUP-28
        // rule: GROUP-29
        let mut contracts = Vec::new();
        let mut ledgers: Vec<Ledger> = Vec::new();
        let mut windows = BTreeMap::new();
        for (i, (s, steps, window)) in tables.iter().enumerate() {
            let c = contract(&format!("t{i}"), s);
            if let (true, Some((lo, len))) = (c.window_column().is_some(), window) {
                let lo = i64::from(*lo);
                windows.insert(
                    c.table().to_uppercase(),
                    Window::new(Value::Int(lo), Value::Int(lo + i64::from(*len))),
                );
            }
            ledgers.push(history(&c, steps).0);
            contracts.push(c);
        }
        let group = Group::new(contracts.clone()).unwrap();
        let at_least = minutes(at_least);
        // every table has a full read, so the group can always reach one instant
        let planned = plan_together(&group, &ledgers, at_least, Some(&windows)).unwrap();
        match planned {
            None => {
                let claims = group
                    .claims(&ledgers, at_least, Duration::MAX, Some(&windows))
                    .unwrap();
                prop_assert!(claims.exact_as_of().is_some_and(|p| p >= at_least));
            }
            Some(requests) => {
                prop_assert_eq!(requests.len(), contracts.len());
                let until = requests[0].until();
                prop_assert!(until >= at_least);
                for (x, l) in requests.iter().zip(&ledgers) {
                    prop_assert_eq!(x.until(), until);
                    prop_assert_eq!(x.table(), l.contract().table());
                    for r in l.regions() {
                        prop_assert!(r.complete_as_of().is_none_or(|c| c < until));
                    }
                }
                let manifests: Vec<Manifest> = requests
                    .iter()
                    .zip(&contracts)
                    .map(|(x, c)| deliver(x, c))
                    .collect();
                let receipts = group.apply(&ledgers, &manifests, until, None, None).unwrap();
                prop_assert!(
                    receipts.iter().all(Receipt::accepted),
                    "{:?}",
                    receipts.iter().map(|r| r.checks().to_vec()).collect::<Vec<_>>()
                );
                let after: Vec<Ledger> = ledgers
                    .iter()
                    .zip(&receipts)
                    .map(|(l, r)| l.follow(r).unwrap())
                    .collect();
                let claims = group
                    .claims(&after, until, Duration::MAX, Some(&windows))
                    .unwrap();
                prop_assert_eq!(claims.exact_as_of(), Some(until));
                // and the group needs nothing more at that instant
                prop_assert_eq!(plan_together(&group, &after, until, Some(&windows)).unwrap(), None);
            }
        }
    }
}
