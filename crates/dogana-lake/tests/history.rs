//! Random histories of deliveries, folds and collections (proptest): every snapshot no
//! collection has reclaimed stays readable with its exact rows, a reclaimed one reads its rows
//! or refuses as `part-collected` (never other rows), and a fold never changes what a reader
//! reads.
//!
//! The model: a collection keeping `n` generations reclaims every snapshot of the chain past
//! the newest `n`, and a reclaimed snapshot stays reclaimed. A later collection keeping more
//! generations does not bring its deleted parts back, so it is not expected to read whole
//! (the case `[Deliver, Fold, Collect(1), Collect(2)]` in the regressions file).
//!
//! rule: store.fold.tiered-merge, store.fold.carry-by-reference,
//! store.fold.reference-retention, store.collect.superseded, store.collect.retain-generations

use std::collections::{BTreeMap, BTreeSet};

use dogana_lake::{Lake, LakeError};
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

/// What a snapshot a collection reclaimed reads: its own rows, when every part it names is
/// still kept by a retained snapshot, or a `part-collected` refusal; never other rows.
fn reclaimed_reads(lake: &Lake, key: &str, seen: &[String]) -> Result<(), TestCaseError> {
    match lake.snapshot_rows(key) {
        Ok(_) => prop_assert_eq!(&rows_of(lake, key), seen),
        Err(e) => prop_assert!(
            matches!(LakeError::of(&e), Some(LakeError::PartCollected { .. })),
            "{key}: {e}"
        ),
    }
    Ok(())
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

/// Runs one history from a full delivery of id 1, checking every step against the model.
fn run(ops: &[Op]) -> Result<(), TestCaseError> {
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
    // the snapshots some collection reclaimed (past its newest n)
    let mut reclaimed: BTreeSet<String> = BTreeSet::new();
    let mut live: BTreeSet<i64> = [1].into();
    let mut d = 0; // deliveries so far: each starts where the last ended
    for op in ops {
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
                    if *gone {
                        live.remove(id);
                    } else {
                        live.insert(*id);
                    }
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
                let chain = chain(lake);
                reclaimed.extend(chain.iter().skip(*n as usize).cloned());
                // every snapshot no collection reclaimed reads whole, with the rows it read
                // as the head; a reclaimed one reads those rows or refuses
                for k in &chain {
                    if reclaimed.contains(k) {
                        reclaimed_reads(lake, k, &seen[k])?;
                    } else {
                        prop_assert_eq!(&rows_of(lake, k), &seen[k]);
                    }
                }
            }
        }
        let lake = fx.r.backend();
        let head = lake.head("orders").unwrap().unwrap();
        let rows = rows_of(lake, &head);
        seen.entry(head).or_insert(rows.clone());
        // the head reads the model's live keys
        let ids: BTreeSet<i64> = fx
            .state("orders")
            .rows
            .column("id")
            .into_iter()
            .flatten()
            .map(|s| s.parse().unwrap())
            .collect();
        prop_assert_eq!(&ids, &live);
    }
    fx.verify("orders");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn retained_snapshots_keep_their_rows(ops in proptest::collection::vec(op(), 1..10)) {
        run(&ops)?;
    }
}

/// The case CI met (issue 37): a collection keeping one generation reclaims the delivery's
/// snapshot, and a later one keeping two must not be expected to read it whole.
#[test]
fn a_wider_collection_does_not_revive_a_reclaimed_snapshot() {
    let ops = [
        Op::Deliver([(1, false)].into()),
        Op::Fold,
        Op::Collect(1),
        Op::Collect(2),
    ];
    run(&ops).unwrap();
}

/// The case the model found with the fold: merged parts keep only their current rows, so a
/// merge of four one-row parts whose keys repeat leaves a part of two rows, still of tier 0,
/// and the fold must go on merging until every tier holds fewer than 4 parts.
#[test]
fn a_fold_plans_its_tiers_by_the_rows_a_merge_keeps() {
    let d = |id: i64| Op::Deliver([(id, false)].into());
    run(&[d(1), d(1), d(2), d(3), d(1), d(4), Op::Fold]).unwrap();
}
