//! Random histories of deliveries, folds and collections (proptest): every retained snapshot
//! stays readable with its exact rows, and a fold never changes what a reader reads.
//!
//! rule: store.fold.tiered-merge, store.fold.carry-by-reference,
//! store.fold.reference-retention, store.collect.superseded, store.collect.retain-generations

use std::collections::{BTreeMap, BTreeSet};

use dogana_lake::Lake;
use dogana_receiver::conformance::Fixture;
use dogana_receiver::{Datum, Store};
use proptest::prelude::*;

type Fx = Fixture<Store<Lake>>;

#[derive(Debug, Clone)]
enum Op {
    /// A changes delivery: these ids, each live or a tombstone.
    Deliver(BTreeMap<i64, bool>),
    Fold,
    Collect(u32),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => proptest::collection::btree_map(1i64..12, any::<bool>(), 1..4).prop_map(Op::Deliver),
        2 => Just(Op::Fold),
        1 => (1u32..4).prop_map(Op::Collect),
    ]
}

fn rows_of(lake: &Lake, key: &str) -> Vec<String> {
    let mut v: Vec<String> = lake
        .snapshot_rows(key)
        .unwrap_or_else(|e| panic!("{key}: {e}"))
        .iter()
        .map(|r| format!("{:?}", r.iter().map(Datum::render).collect::<Vec<_>>()))
        .collect();
    v.sort();
    v
}

fn chain(lake: &Lake) -> Vec<String> {
    let mut out = Vec::new();
    let mut at = lake.head("orders").unwrap();
    while let Some(k) = at {
        at = lake.snapshot(&k).unwrap().parent;
        out.push(k);
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn retained_snapshots_keep_their_rows(ops in proptest::collection::vec(op(), 1..10)) {
        let mut fx = Fx::new("history");
        fx.accept(&fx.full(
            "f.csv",
            "2026-10-02T00:00:00Z",
            &[(1, "2026-10-01", "2026-10-01T10:00:00Z", "1.00", false)],
        ));
        // what each snapshot read when it was the head
        let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let head = fx.r.backend().head("orders").unwrap().unwrap();
        seen.insert(head.clone(), rows_of(fx.r.backend(), &head));
        let mut live: BTreeSet<i64> = [1].into();
        let mut d = 0; // deliveries so far: each starts where the last ended
        for op in &ops {
            match op {
                Op::Deliver(ids) => {
                    d += 1;
                    let since = format!("2026-10-{:02}T00:00:00Z", d + 1);
                    let at = format!("2026-10-{:02}T00:00:00Z", d + 2);
                    let upd = format!("2026-10-{:02}T01:00:00Z", d + 1);
                    let rows: Vec<_> = ids
                        .iter()
                        .map(|(id, gone)| (*id, "2026-10-02", upd.as_str(), "2.00", *gone))
                        .collect();
                    fx.accept(&fx.changes(&format!("c{d}.csv"), &since, &at, &rows));
                    for (id, gone) in ids {
                        if *gone { live.remove(id); } else { live.insert(*id); }
                    }
                }
                Op::Fold => {
                    let before = fx.state("orders");
                    let lake = fx.r.backend_mut();
                    let head = lake.head("orders").unwrap().unwrap();
                    let rows = rows_of(lake, &head);
                    let r = lake.fold("orders").unwrap();
                    let now = lake.head("orders").unwrap().unwrap();
                    // a fold never changes what a reader reads
                    prop_assert_eq!(rows_of(lake, &now), rows);
                    prop_assert_eq!(r.snapshot.is_some(), now != head);
                    // every tier holds fewer than 4 parts after it
                    let s = lake.snapshot(&now).unwrap();
                    let mut tiers: BTreeMap<u32, usize> = BTreeMap::new();
                    for p in s.parts.iter().filter(|p| !p.deletes) {
                        *tiers.entry(dogana_lake::tier(p.rows)).or_default() += 1;
                    }
                    prop_assert!(tiers.values().all(|n| *n < 4), "{:?}", tiers);
                    prop_assert_eq!(fx.state("orders"), before);
                }
                Op::Collect(n) => {
                    let lake = fx.r.backend_mut();
                    lake.collect("orders", *n).unwrap();
                    // the newest n snapshots read whole, with the rows they read as heads
                    for k in chain(lake).iter().take(*n as usize) {
                        prop_assert_eq!(&rows_of(lake, k), &seen[k]);
                    }
                }
            }
            let lake = fx.r.backend();
            let head = lake.head("orders").unwrap().unwrap();
            let rows = rows_of(lake, &head);
            seen.entry(head).or_insert(rows.clone());
            // the head reads the model's live keys
            let ids: BTreeSet<i64> = fx.state("orders").rows.column("id")
                .into_iter().flatten().map(|s| s.parse().unwrap()).collect();
            prop_assert_eq!(&ids, &live);
        }
        fx.verify("orders");
    }
}
