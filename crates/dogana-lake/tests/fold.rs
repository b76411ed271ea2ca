//! Folding (STORE-P1 `store.fold.*`): tiered merging under the compaction lease, untouched
//! parts carried by reference, and nothing a reader reads changed: rows, ledger, receipts.

use dogana_lake::layout::{pointer_key, Pointer};
use dogana_lake::{plan_merges, tier, Lake, LakeError, LakeOptions};
use dogana_receiver::conformance::{Fixture, Order};
use dogana_receiver::{Backend, Column, Open, Step, Store, Txn};

type Fx = Fixture<Store<Lake>>;

/// `n` changes deliveries of `per` new rows each after a first full one of `per` rows: one
/// part per delivery.
fn history(fx: &mut Fx, n: usize, per: usize) {
    let rows: Vec<(i64, String)> = (0..per)
        .map(|i| (i as i64, "2026-10-01T10:00:00Z".to_string()))
        .collect();
    let orders: Vec<_> = rows
        .iter()
        .map(|(id, u)| (*id, "2026-10-01", u.as_str(), "1.00", false))
        .collect();
    fx.accept(&fx.full("f.csv", "2026-10-02T00:00:00Z", &orders));
    for d in 0..n {
        let since = format!("2026-10-{:02}T00:00:00Z", d + 2);
        let at = format!("2026-10-{:02}T00:00:00Z", d + 3);
        let upd = format!("2026-10-{:02}T01:00:00Z", d + 2);
        let orders: Vec<_> = (0..per)
            .map(|i| {
                (
                    ((d + 1) * 1000 + i) as i64,
                    "2026-10-02",
                    upd.as_str(),
                    "2.00",
                    false,
                )
            })
            .collect();
        fx.accept(&fx.changes(&format!("c{d}.csv"), &since, &at, &orders));
    }
}

fn pointer(lake: &Lake, table: &str) -> Pointer {
    let v = lake
        .root()
        .get_versioned(&pointer_key(table))
        .unwrap()
        .unwrap();
    serde_json::from_slice(&v.bytes).unwrap()
}

#[test]
fn tiers_span_consecutive_powers_of_four() {
    // rule: store.fold.tiered-merge
    assert_eq!(
        [0, 1, 3, 4, 15, 16, 63, 64, 255, 256].map(tier),
        [0, 0, 0, 1, 1, 2, 2, 3, 3, 4]
    );
    // 4 parts of one tier merge into one, again until each tier holds fewer than 4
    assert_eq!(plan_merges(&[1, 1, 1]), Vec::<[usize; 4]>::new());
    assert_eq!(plan_merges(&[1, 2, 3, 1]), vec![[0, 1, 2, 3]]);
    assert_eq!(plan_merges(&[100, 1, 1, 1, 1]), vec![[1, 2, 3, 4]]);
    // sixteen single rows: four merges to tier 1, then one of those four
    assert_eq!(plan_merges(&[1; 16]).len(), 5);
    // parts of other tiers are left alone
    assert_eq!(plan_merges(&[1, 4, 1, 16, 1, 64]), Vec::<[usize; 4]>::new());
}

#[test]
fn a_fold_merges_tiers_and_changes_nothing_a_reader_reads() {
    // rule: store.fold.tiered-merge, store.fold.compaction-lease, store.fold.pointer-commit
    let mut fx = Fx::new("fold-tiers");
    history(&mut fx, 6, 1); // 7 single-row parts
    let before = fx.state("orders");
    let lake = fx.r.backend_mut();
    let fence_before = pointer(lake, "orders").fence;
    let head_before = lake.head("orders").unwrap().unwrap();
    let parts_before = lake.snapshot(&head_before).unwrap().parts;
    assert_eq!(parts_before.len(), 7);
    let report = lake.fold("orders").unwrap();
    assert_eq!(
        (report.parts_before, report.parts_after, report.merges),
        (7, 4, 1)
    );
    let p = pointer(lake, "orders");
    let s = lake.snapshot(report.snapshot.as_ref().unwrap()).unwrap();
    // the compaction lease: acquired above the previous fence, stamped in both
    assert!(report.fence > fence_before);
    assert_eq!((p.fence, s.fence), (report.fence, report.fence));
    assert!(p.lease.is_none(), "the publication released the lease");
    assert_eq!(p.snapshot.as_deref(), report.snapshot.as_deref());
    assert_eq!(s.parent.as_deref(), Some(head_before.as_str()));
    // tiers: the merged part holds 4 rows, 3 single-row parts stay
    let mut rows: Vec<u64> = s.parts.iter().map(|p| p.rows).collect();
    rows.sort();
    assert_eq!(rows, [1, 1, 1, 4]);
    // rule: store.fold.carry-by-reference — the three untouched parts are the same objects
    let carried = s
        .parts
        .iter()
        .filter(|p| parts_before.iter().any(|b| b.path == p.path))
        .count();
    assert_eq!(carried, 3);
    // no row, no ledger, no receipt changed
    assert_eq!(fx.state("orders"), before);
    fx.verify("orders");
    // a second fold finds nothing to merge and writes nothing
    let lake = fx.r.backend_mut();
    let again = lake.fold("orders").unwrap();
    assert_eq!((again.merges, again.snapshot), (0, None));
    assert_eq!(lake.head("orders").unwrap(), report.snapshot);
}

#[test]
fn sixteen_parts_fold_to_one() {
    // rule: store.fold.tiered-merge
    let mut fx = Fx::new("fold-sixteen");
    history(&mut fx, 15, 1);
    let before = fx.state("orders");
    let report = fx.r.backend_mut().fold("orders").unwrap();
    assert_eq!(
        (report.parts_before, report.parts_after, report.merges),
        (16, 1, 5)
    );
    // each part's bytes written once per tier it climbed: here at most 4x the bytes merged
    assert!(
        report.bytes_written <= 4 * report.bytes_merged,
        "{report:?}"
    );
    assert_eq!(fx.state("orders"), before);
    fx.verify("orders");
}

#[test]
fn folding_after_a_delivery_when_the_tiers_ask() {
    // rule: store.fold.tiered-merge — configurable: off by default, on with
    // LakeOptions::fold_after_delivery
    let mut fx = Fx::new("fold-after");
    history(&mut fx, 4, 1);
    let lake = fx.r.backend();
    let head = lake.head("orders").unwrap().unwrap();
    assert_eq!(
        lake.snapshot(&head).unwrap().parts.len(),
        5,
        "off by default"
    );
    let root = lake.root().url().to_owned();
    let options = LakeOptions {
        fold_after_delivery: true,
        ..LakeOptions::default()
    };
    let mut fx2 = Fx::new("fold-after-on");
    fx2.r = Store::new(Lake::open(std::path::Path::new(&root), &options, true).unwrap());
    let before = fx2.state("orders");
    fx2.accept(&fx2.changes(
        "late.csv",
        "2026-10-06T00:00:00Z",
        "2026-10-07T00:00:00Z",
        &[(99_999, "2026-10-03", "2026-10-06T01:00:00Z", "3.00", false)],
    ));
    let lake = fx2.r.backend();
    let head = lake.head("orders").unwrap().unwrap();
    let s = lake.snapshot(&head).unwrap();
    // 6 single-row parts: folded to one of 4 and two of 1, after the delivery's snapshot
    let mut rows: Vec<u64> = s.parts.iter().map(|p| p.rows).collect();
    rows.sort();
    assert_eq!(rows, [1, 1, 4]);
    let parent = lake.snapshot(s.parent.as_ref().unwrap()).unwrap();
    assert_eq!(parent.parts.len(), 6, "the delivery published first");
    assert_eq!(parent.receipts, s.receipts, "the fold added no receipt");
    assert_eq!(
        fx2.state("orders").rows.rows.len(),
        before.rows.rows.len() + 1
    );
    fx2.verify("orders");
}

#[test]
fn a_fold_meeting_a_float_key_is_store_key_widened() {
    // rule: store.reconcile.key-widening — a fold meeting a key already reconciled to Float64
    let dir = tempfile::tempdir().unwrap();
    let mut lake = Lake::open(dir.path(), &LakeOptions::default(), true).unwrap();
    lake.begin(Txn::Write, &["t"]).unwrap();
    lake.execute(
        "t",
        Step::Create(&[Column {
            name: "k".into(),
            ty: Some("float".into()),
            key: true,
        }]),
    )
    .unwrap();
    lake.commit().unwrap();
    let head = lake.head("t").unwrap();
    let e = lake.fold("t").unwrap_err();
    assert!(
        matches!(LakeError::of(&e), Some(LakeError::StoreKeyWidened { column, stored, .. }) if column == "k" && stored == "float"),
        "{e}"
    );
    assert_eq!(lake.head("t").unwrap(), head, "nothing published");
    assert!(pointer(&lake, "t").lease.is_none(), "the lease released");
}

#[test]
fn a_fold_waits_for_the_table_lease() {
    // rule: store.fold.compaction-lease, store.lease.held — a fold needs the table's lease:
    // a writer holding it makes the fold LeaseHeld, and nothing is written
    let mut fx = Fx::new("fold-held");
    history(&mut fx, 4, 1);
    let url = fx.r.backend().root().url().to_owned();
    let short = LakeOptions {
        lock_wait: std::time::Duration::from_millis(50),
        ..LakeOptions::default()
    };
    let mut writer = Lake::open(std::path::Path::new(&url), &short, true).unwrap();
    writer.begin(Txn::Write, &["orders"]).unwrap();
    let mut folder = Lake::open(std::path::Path::new(&url), &short, true).unwrap();
    let head = folder.head("orders").unwrap();
    let e = folder.fold("orders").unwrap_err();
    assert!(
        matches!(LakeError::of(&e), Some(LakeError::LeaseHeld { .. })),
        "{e}"
    );
    assert_eq!(folder.head("orders").unwrap(), head);
    writer.rollback();
    assert_eq!(folder.fold("orders").unwrap().merges, 1);
}

#[test]
fn folding_or_collecting_a_table_that_does_not_exist_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut lake = Lake::open(dir.path(), &LakeOptions::default(), true).unwrap();
    let before = lake.root().list("").unwrap();
    assert_eq!(lake.fold("nope").unwrap().snapshot, None);
    assert_eq!(lake.collect("nope", 64).unwrap().record, None);
    assert_eq!(lake.root().list("").unwrap(), before, "no pointer created");
}

#[test]
fn a_fold_rewrites_a_part_a_quarter_shadowed_and_drops_the_deletions_it_no_longer_needs() {
    // rule: store.fold.carry-by-reference, store.lay-out.format-version — a part of which a
    // quarter or more is shadowed is rewritten with its current rows; with no shadowed row
    // left the deletion parts go and the snapshot's parts are disjoint again (format 2.0)
    let mut fx = Fx::new("fold-rewrite");
    let base: Vec<_> = (1..=8)
        .map(|id| (id, "2026-10-01", "2026-10-01T10:00:00Z", "1.00", false))
        .collect();
    fx.accept(&fx.full("f.csv", "2026-10-02T00:00:00Z", &base));
    let changes: [&[Order<'_>]; 3] = [
        &[(1, "2026-10-01", "2026-10-02T01:00:00Z", "2.00", false)],
        &[(2, "2026-10-01", "2026-10-03T01:00:00Z", "2.00", false)],
        &[
            (3, "2026-10-01", "2026-10-04T01:00:00Z", "2.00", false),
            (4, "2026-10-01", "2026-10-04T02:00:00Z", "0", true),
        ],
    ];
    for (d, rows) in changes.iter().enumerate() {
        let since = format!("2026-10-{:02}T00:00:00Z", d + 2);
        let at = format!("2026-10-{:02}T00:00:00Z", d + 3);
        fx.accept(&fx.changes(&format!("c{d}.csv"), &since, &at, rows));
    }
    let before = fx.state("orders");
    let lake = fx.r.backend_mut();
    let head = lake.head("orders").unwrap().unwrap();
    let s = lake.snapshot(&head).unwrap();
    assert!(s.overlapping && s.format_version.as_deref() == Some("4.1"));
    assert_eq!(
        s.parts
            .iter()
            .map(|p| (p.rows, p.deletes))
            .collect::<Vec<_>>(),
        [(8, false), (1, false), (1, false), (1, false), (1, true)]
    );
    let report = lake.fold("orders").unwrap();
    assert_eq!((report.merges, report.rewritten), (0, 1), "{report:?}");
    let s = lake.snapshot(report.snapshot.as_ref().unwrap()).unwrap();
    assert_eq!(
        s.parts
            .iter()
            .map(|p| (p.rows, p.deletes))
            .collect::<Vec<_>>(),
        [(4, false), (1, false), (1, false), (1, false)],
        "ids 5..8 rewritten; the three changed rows carried; the deletion part gone"
    );
    assert!(!s.overlapping && s.format_version.as_deref() == Some("4.1"));
    assert_eq!(fx.state("orders"), before);
    fx.verify("orders");
}
