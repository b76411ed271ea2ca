//! Collection (STORE-P1 `store.collect.*`, `store.fold.reference-retention`): the newest
//! snapshots kept whole, every manifest, receipt and ledger kept, what is removed recorded
//! before it is deleted.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use dogana_lake::layout::{
    collected_marker, parse_retain_generations, CollectedMarker, CollectionRecord,
    RETAIN_GENERATIONS,
};
use dogana_lake::objects::Root;
use dogana_lake::{Lake, LakeError, LakeOptions};
use dogana_receiver::conformance::Fixture;
use dogana_receiver::Store;
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use object_store::memory::InMemory;
use object_store::path::Path as OPath;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult,
};

type Fx = Fixture<Store<Lake>>;

/// A full delivery, `n` single-row changes deliveries, a fold after them: `n + 2` snapshots.
fn history(fx: &mut Fx, n: usize) {
    fx.accept(&fx.full(
        "f.csv",
        "2026-10-02T00:00:00Z",
        &[(1, "2026-10-01", "2026-10-01T10:00:00Z", "1.00", false)],
    ));
    for d in 0..n {
        let since = format!("2026-10-{:02}T00:00:00Z", d + 2);
        let at = format!("2026-10-{:02}T00:00:00Z", d + 3);
        let upd = format!("2026-10-{:02}T01:00:00Z", d + 2);
        fx.accept(&fx.changes(
            &format!("c{d}.csv"),
            &since,
            &at,
            &[(100 + d as i64, "2026-10-02", upd.as_str(), "2.00", false)],
        ));
    }
    fx.r.backend_mut().fold("orders").unwrap();
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

#[test]
fn retain_generations_is_64_by_default_and_0_is_refused_at_the_parse() {
    // rule: store.collect.retain-generations
    assert_eq!(RETAIN_GENERATIONS, 64);
    assert_eq!(parse_retain_generations("8").unwrap(), 8);
    for bad in ["0", "-1", "", "many"] {
        match parse_retain_generations(bad) {
            Err(LakeError::ConfigInvalid {
                field, value, rule, ..
            }) => assert_eq!(
                (field, value.as_str(), rule),
                (
                    "retain_generations",
                    bad,
                    "store.collect.retain-generations"
                )
            ),
            other => panic!("{bad:?}: {other:?}"),
        }
    }
    // and a lake asked to collect keeping 0 touches nothing
    let mut fx = Fx::new("collect-zero");
    history(&mut fx, 4);
    let root = fx.r.backend().root().clone();
    let before = root.list("").unwrap();
    let e = fx.r.backend_mut().collect("orders", 0).unwrap_err();
    assert!(
        matches!(LakeError::of(&e), Some(LakeError::ConfigInvalid { .. })),
        "{e}"
    );
    assert_eq!(
        root.list("").unwrap(),
        before,
        "not even the lease was taken"
    );
}

#[test]
fn collect_keeps_retained_parts_every_manifest_receipt_and_ledger() {
    // rule: store.collect.superseded, store.fold.reference-retention,
    // store.collect.manifest-kept
    let mut fx = Fx::new("collect-keeps");
    history(&mut fx, 5); // 7 snapshots; the fold's has 3 parts (one of 4 rows, two of 1)
    fx.accept(&fx.changes(
        "late.csv",
        "2026-10-07T00:00:00Z",
        "2026-10-08T00:00:00Z",
        &[(999, "2026-10-03", "2026-10-07T01:00:00Z", "3.00", false)],
    ));
    let before = fx.state("orders");
    let root = fx.r.backend().root().clone();
    let receipts = root.list("tables/orders/receipts/").unwrap();
    let manifests = root.list("tables/orders/snapshots/").unwrap();
    let lake = fx.r.backend_mut();
    let snapshots = chain(lake);
    assert_eq!(snapshots.len(), 8);
    let r = lake.collect("orders", 2).unwrap();
    assert_eq!(r.retained, 2);
    // the two retained snapshots read whole, with their exact rows
    for k in &snapshots[..2] {
        lake.snapshot_rows(k).unwrap();
    }
    // the four single-row parts the fold merged are named only by older snapshots: deleted
    assert_eq!(r.deleted, 4, "{r:?}");
    for k in &snapshots[2..] {
        let s = lake.snapshot(k).unwrap();
        let gone: Vec<String> = s
            .parts
            .iter()
            .filter(|p| root.get(&p.path).unwrap().is_none())
            .map(|p| p.path.clone())
            .collect();
        let marker = root.get(&collected_marker(k)).unwrap();
        if gone.is_empty() {
            assert!(marker.is_none() || lake.snapshot_rows(k).is_ok());
        } else {
            let m: CollectedMarker = serde_json::from_slice(&marker.expect("a marker")).unwrap();
            assert_eq!(m.parts, gone, "the marker lists what was removed");
            // a reader of a reclaimed snapshot meets part-collected, not a missing object
            let e = lake.snapshot_rows(k).unwrap_err();
            assert!(
                matches!(LakeError::of(&e), Some(LakeError::PartCollected { .. })),
                "{e}"
            );
        }
    }
    // every manifest kept (markers added beside), every receipt kept, ledger and rows the same
    let after: Vec<String> = root
        .list("tables/orders/snapshots/")
        .unwrap()
        .into_iter()
        .filter(|k| !k.ends_with(".collected.json"))
        .collect();
    assert_eq!(after, manifests);
    assert_eq!(root.list("tables/orders/receipts/").unwrap(), receipts);
    assert_eq!(fx.state("orders"), before);
    fx.verify("orders");
    // a second collection finds nothing more and writes nothing
    let again = fx.r.backend_mut().collect("orders", 2).unwrap();
    assert_eq!((again.deleted, again.record), (0, None));
}

#[test]
fn collect_with_the_default_keeps_a_short_history_whole() {
    // rule: store.collect.retain-generations — 64 generations keep all 7 snapshots here
    let mut fx = Fx::new("collect-default");
    history(&mut fx, 5);
    let root = fx.r.backend().root().clone();
    // the lease's acquisition and release write the pointer; nothing else may change
    let data = |root: &Root| -> Vec<String> {
        root.list("")
            .unwrap()
            .into_iter()
            .filter(|k| !k.contains("_pointer.json"))
            .collect()
    };
    let objects = data(&root);
    let r =
        fx.r.backend_mut()
            .collect("orders", RETAIN_GENERATIONS)
            .unwrap();
    assert_eq!((r.retained, r.deleted, r.record), (7, 0, None));
    assert_eq!(data(&root), objects, "nothing written or deleted");
}

// ---------------------------------------------------------------------------------------------
// the order of a collection's writes and deletions

#[derive(Debug)]
struct Recording {
    inner: InMemory,
    log: Arc<Mutex<Vec<String>>>,
}

impl std::fmt::Display for Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Recording")
    }
}

#[async_trait]
impl ObjectStore for Recording {
    async fn put_opts(
        &self,
        location: &OPath,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        self.log.lock().unwrap().push(format!("put {location}"));
        self.inner.put_opts(location, payload, opts).await
    }
    async fn put_multipart_opts(
        &self,
        location: &OPath,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }
    async fn get_opts(
        &self,
        location: &OPath,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        self.inner.get_opts(location, options).await
    }
    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<OPath>>,
    ) -> BoxStream<'static, object_store::Result<OPath>> {
        let log = Arc::clone(&self.log);
        // each deletion is recorded as the store takes it, before it is removed
        let logged = locations
            .inspect_ok(move |location| log.lock().unwrap().push(format!("delete {location}")))
            .boxed();
        self.inner.delete_stream(logged)
    }
    fn list(&self, prefix: Option<&OPath>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list(prefix)
    }
    async fn list_with_delimiter(
        &self,
        prefix: Option<&OPath>,
    ) -> object_store::Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }
    async fn copy_opts(
        &self,
        from: &OPath,
        to: &OPath,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}

#[test]
fn collect_records_what_it_removes_before_deleting_anything() {
    // rule: store.collect.drop-first
    let log = Arc::new(Mutex::new(Vec::new()));
    let root = Root::with_store(
        "recording://",
        Arc::new(Recording {
            inner: InMemory::new(),
            log: log.clone(),
        }),
    )
    .unwrap();
    let mut fx = Fx::new("collect-order");
    fx.r = Store::new(Lake::open_root(root.clone(), LakeOptions::default(), true).unwrap());
    history(&mut fx, 4);
    let lake = fx.r.backend_mut();
    log.lock().unwrap().clear();
    let r = lake.collect("orders", 1).unwrap();
    assert_eq!(r.deleted, 4);
    let ops = log.lock().unwrap().clone();
    let record_key = r.record.clone().unwrap();
    let record: CollectionRecord =
        serde_json::from_slice(&root.get(&record_key).unwrap().unwrap()).unwrap();
    let first_delete = ops
        .iter()
        .position(|o| o.starts_with("delete tables/orders/parts/"))
        .expect("a deletion");
    let put_at = |key: &str| {
        ops.iter()
            .position(|o| *o == format!("put {key}"))
            .unwrap_or_else(|| panic!("{key} was not written: {ops:#?}"))
    };
    assert!(put_at(&record_key) < first_delete, "{ops:#?}");
    for k in &record.reclaimed {
        assert!(put_at(&collected_marker(k)) < first_delete, "{ops:#?}");
    }
    // parts, and folded-runs segments no retained index names
    let deleted: Vec<String> = ops
        .iter()
        .filter_map(|o| o.strip_prefix("delete "))
        .filter(|k| k.starts_with("tables/orders/parts/") || k.starts_with("tables/orders/runs/"))
        .map(str::to_owned)
        .collect();
    assert_eq!(
        deleted, record.deleted,
        "the record lists exactly what was deleted"
    );
    assert_eq!(fx.state("orders").rows.rows.len(), 5);
    fx.verify("orders");
}

#[test]
fn a_part_no_snapshot_names_is_collected() {
    // rule: store.collect.superseded — a part a dead writer left (no snapshot names it)
    let mut fx = Fx::new("collect-orphan");
    history(&mut fx, 1);
    let root = fx.r.backend().root().clone();
    root.put(
        "tables/orders/parts/deadbeef.parquet",
        bytes::Bytes::from_static(b"PAR1"),
    )
    .unwrap();
    let r = fx.r.backend_mut().collect("orders", 64).unwrap();
    assert_eq!(r.deleted, 1);
    assert!(root
        .get("tables/orders/parts/deadbeef.parquet")
        .unwrap()
        .is_none());
    fx.verify("orders");
}

#[test]
fn a_collection_stops_its_walk_at_the_first_snapshot_an_earlier_one_reclaimed() {
    // rule: store.collect.index-walk
    let mut fx = Fx::new("collect-walk");
    for (i, at) in [
        "2026-10-02T00:00:00Z",
        "2026-10-03T00:00:00Z",
        "2026-10-04T00:00:00Z",
    ]
    .iter()
    .enumerate()
    {
        fx.accept(&fx.full(
            &format!("f{i}.csv"),
            at,
            &[(1, "2026-10-01", "2026-10-01T10:00:00Z", "1.00", false)],
        ));
    }
    fx.r.backend_mut().collect("orders", 1).unwrap();
    // the oldest snapshot, reclaimed: damaged now, a walk that read it would fail
    let root = fx.r.backend().root().clone();
    let mut chain = Vec::new();
    let mut at = fx.r.backend().head("orders").unwrap();
    while let Some(k) = at {
        at = fx.r.backend().snapshot(&k).unwrap().parent;
        chain.push(k);
    }
    let oldest = chain.last().unwrap().clone();
    root.put(&oldest, bytes::Bytes::from_static(b"{damaged"))
        .unwrap();
    for (i, at) in ["2026-10-05T00:00:00Z", "2026-10-06T00:00:00Z"]
        .iter()
        .enumerate()
    {
        fx.accept(&fx.full(
            &format!("g{i}.csv"),
            at,
            &[(2, "2026-10-01", "2026-10-01T10:00:00Z", "2.00", false)],
        ));
    }
    let r = fx.r.backend_mut().collect("orders", 1).unwrap();
    assert_eq!(r.reclaimed, 2, "{r:?}");
    assert!(r.deleted > 0);
}
