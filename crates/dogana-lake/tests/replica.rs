//! Replicas (STORE-P1 `store.replicate.*`, `store.pull.*`): a read-only local copy of whole
//! snapshots, its pointers written last and only along the bucket pointer's chain.

use std::path::Path;

use dogana_lake::layout::pointer_key;
use dogana_lake::objects::Root;
use dogana_lake::replica::{pull, ReplicaDescriptor, REPLICA_JSON};
use dogana_lake::{Lake, LakeError, LakeOptions};
use dogana_receiver::conformance::{orders_csv, orders_named, ts, Fixture, Job, Order};
use dogana_receiver::{Open, Store, StoreError};

type Fx = Fixture<Store<Lake>>;

const T1: &str = "2026-10-10T06:00:00Z";
const T2: &str = "2026-10-11T06:00:00Z";

fn rows(day: &str) -> Vec<Order<'_>> {
    vec![
        (1, day, "2026-10-01T10:00:00Z", "10.00", false),
        (2, day, "2026-10-01T11:00:00Z", "20.00", false),
    ]
}

/// A full delivery of `table` (the orders contract under that name).
fn full(fx: &Fx, table: &str, name: &str, at: &str, rows: &[Order<'_>]) -> Job {
    let c = orders_named(table, "id", "order_date");
    fx.job(name, orders_csv(rows), &c, |c, h| {
        c.manifest("full", ts(at))
            .rows(rows.len() as u64)
            .content_hash(h)
            .build()
            .unwrap()
    })
}

fn replica_root(dir: &Path) -> Root {
    Root::open(dir.to_str().unwrap()).unwrap()
}

fn descriptor(root: &Root) -> ReplicaDescriptor {
    serde_json::from_slice(&root.get(REPLICA_JSON).unwrap().unwrap()).unwrap()
}

fn lake_err(e: &StoreError) -> &LakeError {
    LakeError::of(e).unwrap_or_else(|| panic!("not a lake error: {e}"))
}

/// What a reader reads of `table` through the engine on the store at `dir`.
fn state(dir: &Path, table: &str) -> dogana_receiver::conformance::State {
    let mut fx = Fx::new("replica-reader");
    fx.r = Store::new(Lake::open(dir, &LakeOptions::default(), false).unwrap());
    fx.state(table)
}

#[test]
fn a_replica_reads_whole_snapshots_and_names_them() {
    // rule: store.replicate.descriptor, store.pull.pointer-last
    let mut fx = Fx::new("replica-basic");
    fx.accept(&fx.full("a.csv", T1, &rows("2026-10-01")));
    let dir = tempfile::tempdir().unwrap();
    let to = replica_root(dir.path());
    let url = fx.r.backend().root().url().to_owned();
    let r = pull(fx.r.backend(), &url, &to, &[], false).unwrap();
    assert_eq!(r.len(), 1);
    let head = fx.r.backend().head("orders").unwrap();
    assert_eq!(r[0].to, head);
    assert_eq!(r[0].from, None);
    // the replica reads what the store reads: rows, ledger and receipts, from one snapshot
    assert_eq!(state(dir.path(), "orders"), fx.state("orders"));
    let mut reader = Fx::new("replica-verify");
    reader.r = Store::new(Lake::open(dir.path(), &LakeOptions::default(), false).unwrap());
    reader.verify("orders");
    // replica.json: the canonical store, its id, and each held snapshot
    let d = descriptor(&to);
    assert_eq!(d.canonical, url);
    assert_eq!(d.store_id, fx.r.backend().store_id().unwrap());
    let t = &d.tables["orders"];
    assert_eq!(t.head, head);
    assert_eq!(t.held, vec![head.clone().unwrap()]);
    // a second pull of the same head copies nothing
    let again = pull(fx.r.backend(), &url, &to, &[], false).unwrap();
    assert_eq!((again[0].parts, again[0].from.clone()), (0, head));
}

#[test]
fn every_write_verb_on_a_replica_is_refused_naming_the_canonical_store() {
    // rule: store.replicate.write-refused
    let mut fx = Fx::new("replica-refused");
    fx.accept(&fx.full("a.csv", T1, &rows("2026-10-01")));
    let dir = tempfile::tempdir().unwrap();
    let to = replica_root(dir.path());
    let url = fx.r.backend().root().url().to_owned();
    pull(fx.r.backend(), &url, &to, &[], false).unwrap();
    let before = to.list("").unwrap();
    let e = Lake::open(dir.path(), &LakeOptions::default(), true).unwrap_err();
    match lake_err(&e) {
        LakeError::ReplicaWriteRefused { canonical, .. } => assert_eq!(canonical, &url),
        other => panic!("{other:?}"),
    }
    assert!(e.to_string().contains(&url), "{e}");
    assert_eq!(to.list("").unwrap(), before, "nothing written");
}

#[test]
fn a_replica_of_another_store_is_refused_before_anything_is_written() {
    // rule: store.replicate.descriptor — a replica is of one store-id
    let mut a = Fx::new("replica-a");
    a.accept(&a.full("a.csv", T1, &rows("2026-10-01")));
    let mut b = Fx::new("replica-b");
    b.accept(&b.full("b.csv", T1, &rows("2026-10-02")));
    let dir = tempfile::tempdir().unwrap();
    let to = replica_root(dir.path());
    let url_a = a.r.backend().root().url().to_owned();
    let url_b = b.r.backend().root().url().to_owned();
    pull(a.r.backend(), &url_a, &to, &[], false).unwrap();
    let before: Vec<(String, Vec<u8>)> = to
        .list("")
        .unwrap()
        .into_iter()
        .map(|k| (k.clone(), to.get(&k).unwrap().unwrap().to_vec()))
        .collect();
    let e = pull(b.r.backend(), &url_b, &to, &[], false).unwrap_err();
    match lake_err(&e) {
        LakeError::ReplicaStoreMismatch {
            found, expected, ..
        } => {
            assert_eq!(found, &a.r.backend().store_id().unwrap());
            assert_eq!(expected, &b.r.backend().store_id().unwrap());
        }
        other => panic!("{other:?}"),
    }
    let after: Vec<(String, Vec<u8>)> = to
        .list("")
        .unwrap()
        .into_iter()
        .map(|k| (k.clone(), to.get(&k).unwrap().unwrap().to_vec()))
        .collect();
    assert_eq!(after, before, "nothing written");
    // and a directory holding a store that is no replica is not pulled into
    let e = pull(a.r.backend(), &url_a, b.r.backend().root(), &[], false).unwrap_err();
    assert!(
        matches!(
            lake_err(&e),
            LakeError::ReplicaStoreMismatch { .. } | LakeError::ReplicaTargetIsAStore { .. }
        ),
        "{e}"
    );
}

#[test]
fn a_pull_advances_along_the_chain_and_keeps_a_higher_fence() {
    // rule: store.pull.pointer-advance
    let mut fx = Fx::new("replica-advance");
    fx.accept(&fx.full("a.csv", T1, &rows("2026-10-01")));
    let dir = tempfile::tempdir().unwrap();
    let to = replica_root(dir.path());
    let url = fx.r.backend().root().url().to_owned();
    pull(fx.r.backend(), &url, &to, &[], false).unwrap();
    let first = fx.r.backend().head("orders").unwrap();
    fx.accept(&fx.full("b.csv", T2, &rows("2026-10-02")));
    let second = fx.r.backend().head("orders").unwrap();
    let r = pull(fx.r.backend(), &url, &to, &[], false).unwrap();
    assert_eq!(
        (r[0].from.clone(), r[0].to.clone()),
        (first.clone(), second.clone())
    );
    assert_eq!(state(dir.path(), "orders"), fx.state("orders"));
    // the same snapshot at a higher fence (a fold with nothing to merge took the lease)
    let fence = |root: &Root| -> u64 {
        let v = root.get_versioned(&pointer_key("orders")).unwrap().unwrap();
        serde_json::from_slice::<dogana_lake::layout::Pointer>(&v.bytes)
            .unwrap()
            .fence
    };
    let before = fence(&to);
    fx.r.backend_mut().fold("orders").unwrap();
    assert_eq!(fx.r.backend().head("orders").unwrap(), second);
    pull(fx.r.backend(), &url, &to, &[], false).unwrap();
    assert!(fence(&to) > before);
    assert_eq!(fence(&to), fence(fx.r.backend().root()));
    // a local pointer off the chain: refused, unless adopted
    let v = to.get_versioned(&pointer_key("orders")).unwrap().unwrap();
    let mut p: dogana_lake::layout::Pointer = serde_json::from_slice(&v.bytes).unwrap();
    p.snapshot = Some("tables/orders/snapshots/00000000000000000001-elsewhere.json".into());
    to.put_versioned(
        &pointer_key("orders"),
        serde_json::to_vec(&p).unwrap().into(),
        Some(&v.version),
    )
    .unwrap()
    .unwrap();
    let e = pull(fx.r.backend(), &url, &to, &[], false).unwrap_err();
    assert!(
        matches!(lake_err(&e), LakeError::ReplicaPointerDiverged { local, .. } if local.ends_with("elsewhere.json")),
        "{e}"
    );
    let r = pull(fx.r.backend(), &url, &to, &[], true).unwrap();
    assert_eq!(r[0].to, second);
    assert_eq!(state(dir.path(), "orders"), fx.state("orders"));
}

#[test]
fn a_missing_part_leaves_every_pointer_unwritten() {
    // rule: store.replicate.partial-parquet, store.pull.pointer-last — every advancing table
    // is verified before any pointer is written
    let mut fx = Fx::new("replica-partial");
    fx.accept(&full(&fx, "orders", "a.csv", T1, &rows("2026-10-01")));
    fx.accept(&full(&fx, "zeta", "z.csv", T1, &rows("2026-10-01")));
    let dir = tempfile::tempdir().unwrap();
    let to = replica_root(dir.path());
    let url = fx.r.backend().root().url().to_owned();
    pull(fx.r.backend(), &url, &to, &[], false).unwrap();
    let old = state(dir.path(), "orders");
    fx.accept(&full(&fx, "orders", "b.csv", T2, &rows("2026-10-02")));
    fx.accept(&full(&fx, "zeta", "y.csv", T2, &rows("2026-10-02")));
    // the canonical store lost zeta's new part
    let lake = fx.r.backend();
    let zeta = lake.snapshot(&lake.head("zeta").unwrap().unwrap()).unwrap();
    lake.root().delete(&zeta.parts[0].path).unwrap();
    let d_before = descriptor(&to);
    let e = pull(fx.r.backend(), &url, &to, &[], false).unwrap_err();
    match lake_err(&e) {
        LakeError::ReplicaPartialParquet { table, part, .. } => {
            assert_eq!((table.as_str(), part), ("zeta", &zeta.parts[0].path))
        }
        other => panic!("{other:?}"),
    }
    // orders was verified whole, but its pointer waits for every table: unchanged
    assert_eq!(state(dir.path(), "orders"), old);
    assert_eq!(descriptor(&to).tables, d_before.tables);
    // a reader of a replica that lacks a part meets ReplicaPartialParquet
    let head = d_before.tables["orders"].head.clone().unwrap();
    let r = Lake::open(dir.path(), &LakeOptions::default(), false).unwrap();
    let part = r.snapshot(&head).unwrap().parts[0].path.clone();
    std::fs::remove_file(dir.path().join(&part)).unwrap();
    let e = r.snapshot_rows(&head).unwrap_err();
    assert!(
        matches!(lake_err(&e), LakeError::ReplicaPartialParquet { part: p, .. } if *p == part),
        "{e}"
    );
}
