//! The folded-runs index (STORE-P2 `store.lay-out.folded-index*`, `store.fold.folded-index`):
//! every snapshot names the runs (deliveries) its chain folds in a few Parquet segments,
//! carried by reference and merged 4 of a tier into one; readers trust it only where it
//! validates and otherwise walk.

use dogana_lake::layout::SnapshotManifest;
use dogana_lake::objects::Root;
use dogana_lake::runs::{runs_of, valid_runs};
use dogana_lake::Lake;
use dogana_receiver::conformance::{Fixture, Order};
use dogana_receiver::Store;

type Fx = Fixture<Store<Lake>>;

fn at(i: usize) -> String {
    format!("2026-10-{:02}T06:00:00Z", 2 + i)
}

fn row(id: i64, updated: &str) -> Vec<Order<'_>> {
    vec![(id, "2026-10-01", updated, "1.00", false)]
}

/// A store of a full delivery and `n` changes deliveries, and one refused delivery: `n + 2`
/// receipts, each published by its own snapshot.
fn store(name: &str, n: usize) -> Fx {
    let mut fx = Fx::new(name);
    fx.accept(&fx.full("f.csv", &at(0), &row(1, "2026-10-01T10:00:00Z")));
    for i in 1..=n {
        let upd = format!("2026-10-{:02}T07:00:00Z", 1 + i);
        fx.accept(&fx.changes(
            &format!("c{i}.csv"),
            &at(i - 1),
            &at(i),
            &row(100 + i as i64, &upd),
        ));
    }
    // a delivery whose file contradicts its manifest: a rejected receipt, a run too
    let mut lying = fx.changes(
        "lie.csv",
        &at(n),
        &at(n + 1),
        &row(999, "2026-10-28T07:00:00Z"),
    );
    lying.manifest = fx
        .changes(
            "lie2.csv",
            &at(n),
            &at(n + 1),
            &row(998, "2026-10-28T07:00:00Z"),
        )
        .manifest;
    fx.deliver(&lying);
    fx
}

fn manifest(root: &Root, key: &str) -> SnapshotManifest {
    serde_json::from_slice(&root.get(key).unwrap().unwrap()).unwrap()
}

#[test]
fn every_snapshot_names_the_runs_its_chain_folds_in_a_few_merged_segments() {
    // rule: store.lay-out.folded-index, store.fold.folded-index
    let mut fx = store("runs-index", 20);
    let lake = fx.r.backend();
    let root = lake.root().clone();
    let head = lake.head("orders").unwrap().unwrap();
    let s = manifest(&root, &head);
    assert!(
        s.format_version.as_deref().unwrap().ends_with(".1"),
        "the index raises the minor"
    );
    let index = s.folded_runs.clone().expect("an index");
    assert_eq!(index.through, head);
    let runs = valid_runs(&root, &head, &index).unwrap().expect("valid");
    let receipts = fx.state("orders").receipts;
    assert_eq!(runs.len(), receipts.len(), "one run per receipt");
    let mut seqs: Vec<u64> = runs.iter().map(|r| r.seq).collect();
    seqs.sort();
    assert_eq!(seqs, (1..=receipts.len() as u64).collect::<Vec<_>>());
    assert!(runs.iter().any(|r| r.outcome == "rejected"));
    // 22 runs in few segments: merged 4 of a tier into one
    assert!(
        index.segments.len() < 8,
        "{} segments",
        index.segments.len()
    );
    // each run names the snapshot that published it, whose own receipt it is
    for r in &runs {
        let s = manifest(&root, &r.snapshot);
        let own = s.receipt.unwrap();
        assert_eq!((own.seq, own.fence), (r.seq, r.fence));
    }
}

#[test]
fn a_reader_walks_past_an_index_that_does_not_validate() {
    // rule: store.lay-out.folded-index-valid, store.lay-out.folded-index-walk
    let mut fx = store("runs-walk", 9);
    let expected = fx.state("orders").receipts;
    let root = fx.r.backend().root().clone();
    let head = fx.r.backend().head("orders").unwrap().unwrap();
    let index = manifest(&root, &head).folded_runs.unwrap();
    let all = valid_runs(&root, &head, &index).unwrap().unwrap();
    // a damaged segment: the index does not validate, the walk finds every run all the same
    let seg = &index.segments[0];
    let good = root.get(&seg.path).unwrap().unwrap();
    root.put(&seg.path, bytes::Bytes::from_static(b"not parquet"))
        .unwrap();
    assert!(valid_runs(&root, &head, &index).unwrap().is_none());
    let walked = runs_of(&root, "orders", &head).unwrap().unwrap();
    let key = |r: &dogana_lake::runs::Run| (r.seq, r.fence, r.manifest.clone());
    let mut a: Vec<_> = walked.iter().map(key).collect();
    let mut b: Vec<_> = all.iter().map(key).collect();
    a.sort();
    b.sort();
    assert_eq!(a, b);
    assert_eq!(
        fx.state("orders").receipts,
        expected,
        "receipts read through the walk"
    );
    root.put(&seg.path, good).unwrap();
    // an index naming another snapshot is not trusted there
    let mut moved = index.clone();
    moved.through = "tables/orders/snapshots/elsewhere.json".into();
    assert!(valid_runs(&root, &head, &moved).unwrap().is_none());
}

#[test]
fn a_chain_without_an_index_is_walked_once_and_indexed_by_the_next_pass() {
    // rule: store.fold.folded-index, store.lay-out.folded-index-walk
    let mut fx = store("runs-upgrade", 5);
    let root = fx.r.backend().root().clone();
    // the snapshots as a build before the index wrote them: no folded_runs anywhere
    for k in root.list("tables/orders/snapshots/").unwrap() {
        if k.ends_with(".collected.json") {
            continue;
        }
        let mut v: serde_json::Value =
            serde_json::from_slice(&root.get(&k).unwrap().unwrap()).unwrap();
        v.as_object_mut().unwrap().remove("folded_runs");
        root.put(&k, bytes::Bytes::from(serde_json::to_vec(&v).unwrap()))
            .unwrap();
    }
    let before = fx.state("orders").receipts;
    fx.accept(&fx.changes(
        "next.csv",
        &at(5),
        &at(7),
        &row(500, "2026-10-08T07:00:00Z"),
    ));
    let head = fx.r.backend().head("orders").unwrap().unwrap();
    let index = manifest(&root, &head)
        .folded_runs
        .expect("the next pass writes one");
    let runs = valid_runs(&root, &head, &index).unwrap().unwrap();
    assert_eq!(runs.len(), before.len() + 1);
}

#[test]
fn a_collection_deletes_the_segments_no_retained_index_names_and_readers_still_read_every_run() {
    // rule: store.fold.folded-index, store.lay-out.folded-index-valid
    let mut fx = store("runs-collect", 12);
    let expected = fx.state("orders").receipts;
    let root = fx.r.backend().root().clone();
    let before = root.list("tables/orders/runs/").unwrap().len();
    fx.r.backend_mut().collect("orders", 1).unwrap();
    let head = fx.r.backend().head("orders").unwrap().unwrap();
    let index = manifest(&root, &head).folded_runs.unwrap();
    let left = root.list("tables/orders/runs/").unwrap();
    assert_eq!(
        left.len(),
        index.segments.len(),
        "only the head's segments stay"
    );
    assert!(left.len() < before);
    assert!(valid_runs(&root, &head, &index).unwrap().is_some());
    assert_eq!(fx.state("orders").receipts, expected);
    fx.verify("orders");
}
