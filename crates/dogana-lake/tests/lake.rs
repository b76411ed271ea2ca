//! The lake store's own rules (STORE-P1): identity, pointer and format, carried parts, leases
//! and fences, the probe, and the filesystem's version-checked pointer across processes.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use dogana_lake::layout::{pointer_key, Pointer, SnapshotManifest};
use dogana_lake::objects::Root;
use dogana_lake::{Lake, LakeError, LakeOptions};
use dogana_receiver::conformance::{Fixture, Job};
use dogana_receiver::{Backend, Open, Store, StoreError, Txn};
use futures::stream::BoxStream;
use object_store::memory::InMemory;
use object_store::path::Path as OPath;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    ObjectStoreExt, PutMode, PutMultipartOptions, PutOptions, PutPayload, PutResult,
};

type Fx = Fixture<Store<Lake>>;

fn deliver(fx: &mut Fx, job: impl FnOnce(&Fx) -> Job) {
    let job = job(fx);
    let d = fx.deliver(&job);
    assert!(
        d.receipt.accepted(),
        "{}",
        dogana_receiver::conformance::failures(&d.receipt)
    );
}

fn lake_err(e: &StoreError) -> &LakeError {
    LakeError::of(e).unwrap_or_else(|| panic!("not a lake error: {e}"))
}

fn root_of(fx: &Fx) -> Root {
    fx.r.backend().root().clone()
}

fn pointer(root: &Root, table: &str) -> Pointer {
    let v = root
        .get_versioned(&pointer_key(table))
        .unwrap()
        .expect("a pointer");
    serde_json::from_slice(&v.bytes).unwrap()
}

fn snapshot(root: &Root, key: &str) -> SnapshotManifest {
    serde_json::from_slice(&root.get(key).unwrap().expect("a manifest")).unwrap()
}

const DAY1: [(i64, &str, &str, &str, bool); 2] = [
    (1, "2026-10-01", "2026-10-01T10:00:00Z", "10.00", false),
    (2, "2026-10-02", "2026-10-01T11:00:00Z", "20.00", false),
];

#[test]
fn identity_is_one_canonical_v4_kept_by_every_open() {
    // rule: store.init.store-identity
    let dir = tempfile::tempdir().unwrap();
    let a = Lake::open(dir.path(), &LakeOptions::default(), true).unwrap();
    let id = a.store_id().unwrap();
    assert!(dogana_lake::layout::is_canonical_v4(&id), "{id}");
    let b = Lake::open(dir.path(), &LakeOptions::default(), true).unwrap();
    assert_eq!(b.store_id().unwrap(), id);
    let c = Lake::open(dir.path(), &LakeOptions::default(), false).unwrap();
    assert_eq!(c.store_id().unwrap(), id);
    // a recreated root is another store
    drop((a, b, c));
    std::fs::remove_dir_all(dir.path()).unwrap();
    let d = Lake::open(dir.path(), &LakeOptions::default(), true).unwrap();
    assert_ne!(d.store_id().unwrap(), id);
}

#[test]
fn writers_opening_one_new_store_at_once_all_open_it_with_one_identity() {
    // rule: store.init.store-identity
    // Each writer probes the root before the store-id exists; another writer's probe must not
    // make the root look like someone else's (the receiving service opens a new store from
    // many deliveries at once).
    for _ in 0..50 {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("lake");
        let barrier = std::sync::Barrier::new(8);
        let ids: Vec<String> = std::thread::scope(|s| {
            let opens: Vec<_> = (0..8)
                .map(|_| {
                    s.spawn(|| {
                        barrier.wait();
                        Lake::open(&root, &LakeOptions::default(), true)
                            .and_then(|l| l.store_id())
                            .unwrap_or_else(|e| panic!("a concurrent first open: {e}"))
                    })
                })
                .collect();
            opens.into_iter().map(|o| o.join().unwrap()).collect()
        });
        assert!(ids.iter().all(|id| id == &ids[0]), "{ids:?}");
    }
}

#[test]
fn malformed_identity_is_store_identity_invalid() {
    // rule: store.init.identity-invalid
    for bad in [
        "not a uuid",
        "6F9619FF-8B86-4011-B42D-00C04FC964FF", // upper case: not canonical
        "6f9619ff-8b86-1011-b42d-00c04fc964ff", // version 1
        "",
    ] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("store-id"), bad).unwrap();
        for write in [true, false] {
            let e = Lake::open(dir.path(), &LakeOptions::default(), write).unwrap_err();
            assert!(
                matches!(lake_err(&e), LakeError::StoreIdentityInvalid { found, .. } if found == bad),
                "{bad:?}: {e}"
            );
        }
        // and nothing was changed
        assert_eq!(
            std::fs::read_to_string(dir.path().join("store-id")).unwrap(),
            bad
        );
    }
}

#[test]
fn a_reader_refuses_a_root_that_is_no_store() {
    let dir = tempfile::tempdir().unwrap();
    let e = Lake::open(dir.path(), &LakeOptions::default(), false).unwrap_err();
    assert!(matches!(e, StoreError::NotAStore(_)), "{e}");
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}

#[test]
fn pointer_names_the_snapshot_and_its_fence() {
    // rule: store.lay-out.table-pointer, store.lay-out.format-version, store.fold.compaction-lease
    let mut fx = Fx::new("lake-pointer");
    deliver(&mut fx, |fx| {
        fx.full("f.csv", "2026-10-10T06:00:00Z", &DAY1)
    });
    let root = root_of(&fx);
    let p = pointer(&root, "orders");
    assert_eq!(p.format_version, "2.0");
    assert!(p.lease.is_none(), "the publication released the lease");
    let key = p.snapshot.clone().expect("a snapshot");
    let s = snapshot(&root, &key);
    // its ledger in pages: a reader of the inline ledger (format 2 or 3) refuses it
    // 4.1: the folded-runs index raises the minor (crate::runs)
    assert_eq!(s.format_version.as_deref(), Some("4.1"));
    assert_eq!(s.fence, p.fence, "the snapshot carries the pointer's fence");
    assert_eq!((s.receipts, s.accepted), (1, 1));
    assert!(s.ledger.is_none());
    assert!(s.ledger_pages.as_ref().is_some_and(|l| !l.pages.is_empty()));
    assert_eq!(s.parts.iter().map(|p| p.rows).sum::<u64>(), 2);
    // the plain _pointer.json a filesystem reader opens says the same
    let copy: Pointer = serde_json::from_slice(
        &std::fs::read(root.local_dir().unwrap().join(pointer_key("orders"))).unwrap(),
    )
    .unwrap();
    assert_eq!(copy, p);
}

#[test]
fn newer_major_refuses_reads_naming_file_and_versions() {
    // rule: store.lay-out.format-newer, store.lay-out.format-version
    let mut fx = Fx::new("lake-format");
    deliver(&mut fx, |fx| {
        fx.full("f.csv", "2026-10-10T06:00:00Z", &DAY1)
    });
    let root = root_of(&fx);
    let key = pointer(&root, "orders").snapshot.unwrap();
    let original = root.get(&key).unwrap().unwrap();
    let with = |v: &str| {
        let mut doc: serde_json::Value = serde_json::from_slice(&original).unwrap();
        doc["format_version"] = v.into();
        root.put(&key, Bytes::from(serde_json::to_vec(&doc).unwrap()))
            .unwrap();
    };
    with("2.7"); // a newer minor reads as ours
    assert_eq!(fx.r.read_consistent_rows("orders").unwrap().rows.len(), 2);
    with("3.9"); // the overlapping-parts major, and a newer minor of it
    assert_eq!(fx.r.read_consistent_rows("orders").unwrap().rows.len(), 2);
    with("4.3"); // the paged-ledger major (this build's), and a newer minor of it
    assert_eq!(fx.r.read_consistent_rows("orders").unwrap().rows.len(), 2);
    with("5.0");
    let e = fx.r.read_consistent_rows("orders").unwrap_err();
    match lake_err(&e) {
        LakeError::StoreManifestFormatNewer {
            file,
            found,
            supported,
        } => {
            assert_eq!(
                (file.as_str(), found.as_str(), supported.as_str()),
                (key.as_str(), "5.0", "4.1")
            );
        }
        other => panic!("{other}"),
    }
    assert!(e.to_string().contains(&key) && e.to_string().contains("5.0"));
    // and the table refuses writes too, until a newer build reads it
    let job = fx.full("g.csv", "2026-10-11T06:00:00Z", &DAY1);
    let e =
        fx.r.deliver(&job.file, &job.contract, &job.manifest, job.now, None)
            .unwrap_err();
    assert!(
        matches!(lake_err(&e), LakeError::StoreManifestFormatNewer { .. }),
        "{e}"
    );
}

#[test]
fn untouched_parts_are_carried_by_reference() {
    // rule: store.fold.carry-by-reference
    let mut fx = Fx::new("lake-carry");
    deliver(&mut fx, |fx| {
        fx.full("f.csv", "2026-10-10T06:00:00Z", &DAY1)
    });
    let root = root_of(&fx);
    let first = snapshot(&root, &pointer(&root, "orders").snapshot.unwrap()).parts;
    assert_eq!(first.len(), 1);
    let w = [(3, "2026-10-05", "2026-10-05T10:00:00Z", "30.00", false)];
    deliver(&mut fx, |fx| {
        fx.window(
            "w.csv",
            "2026-10-11T06:00:00Z",
            "2026-10-05",
            "2026-10-05",
            &w,
        )
    });
    let second = snapshot(&root, &pointer(&root, "orders").snapshot.unwrap()).parts;
    assert_eq!(second.len(), 2);
    assert_eq!(
        second[0], first[0],
        "the part the window did not touch is the same object"
    );
    let w2 = [(4, "2026-10-05", "2026-10-05T11:00:00Z", "40.00", false)];
    deliver(&mut fx, |fx| {
        fx.window(
            "w2.csv",
            "2026-10-12T06:00:00Z",
            "2026-10-05",
            "2026-10-05",
            &w2,
        )
    });
    let head = pointer(&root, "orders").snapshot.unwrap();
    let third = snapshot(&root, &head).parts;
    // merge-on-read: the window's current key (3) is named in a deletion part and the new
    // rows are one part; no published part is rewritten
    assert_eq!(third.len(), 4, "{third:?}");
    assert_eq!(third[..2], second[..]);
    assert!(third[2].deletes && third[2].rows == 1, "{:?}", third[2]);
    assert!(!third[3].deletes && third[3].rows == 1, "{:?}", third[3]);
    // rule: store.lay-out.format-version — parts that may overlap: a major that readers of
    // disjoint parts (2) refuse, and the snapshot says so
    let s = snapshot(&root, &head);
    assert!(s.overlapping && s.format_version.as_deref() == Some("4.1"));
    let ids: Vec<String> = fx
        .state("orders")
        .rows
        .column("id")
        .into_iter()
        .flatten()
        .collect();
    assert_eq!(ids, ["1", "2", "4"]);
    fx.verify("orders");
}

#[test]
fn a_changes_delivery_reads_and_rewrites_no_published_part() {
    // rule: store.fold.carry-by-reference — cost follows the delivery (pass-carries-untouched)
    let mut fx = Fx::new("lake-changes-carry");
    deliver(&mut fx, |fx| {
        fx.full("f.csv", "2026-10-10T06:00:00Z", &DAY1)
    });
    let root = root_of(&fx);
    let first = snapshot(&root, &pointer(&root, "orders").snapshot.unwrap()).parts;
    // the first part unreadable: a delivery that read or rewrote it would fail
    let saved = root.get(&first[0].path).unwrap().unwrap();
    root.put(&first[0].path, Bytes::from_static(b"not parquet"))
        .unwrap();
    let ch = [
        (2, "2026-10-02", "2026-10-10T07:00:00Z", "21.00", false),
        (1, "2026-10-01", "2026-10-10T08:00:00Z", "0", true),
        (5, "2026-10-05", "2026-10-10T09:00:00Z", "50.00", false),
    ];
    deliver(&mut fx, |fx| {
        fx.changes("c.csv", "2026-10-10T06:00:00Z", "2026-10-11T06:00:00Z", &ch)
    });
    root.put(&first[0].path, saved).unwrap();
    let parts = snapshot(&root, &pointer(&root, "orders").snapshot.unwrap()).parts;
    assert_eq!(parts[0], first[0], "carried by reference");
    assert_eq!(
        parts[1..]
            .iter()
            .map(|p| (p.deletes, p.rows))
            .collect::<Vec<_>>(),
        [(false, 2), (true, 1)],
        "the upserted rows' part, then the tombstones' deletion part"
    );
    // readers see each key's current row only: 2 updated, 1 gone, 5 new
    let rows = fx.state("orders").rows;
    let got: Vec<(String, String)> = rows
        .column("id")
        .into_iter()
        .zip(rows.column("amount"))
        .map(|(i, a)| (i.unwrap(), a.unwrap()))
        .collect();
    assert_eq!(
        got,
        [("2".into(), "21.00".into()), ("5".into(), "50.00".into())]
    );
    fx.verify("orders");
}

#[test]
fn a_window_replacement_never_brings_back_a_shadowed_row() {
    // rule: store.fold.carry-by-reference — key 1 moves into the window by a change; its
    // older copy outside the window stays shadowed once the window is replaced without it
    let mut fx = Fx::new("lake-shadow");
    deliver(&mut fx, |fx| {
        fx.full("f.csv", "2026-10-10T06:00:00Z", &DAY1)
    });
    let ch = [(1, "2026-10-05", "2026-10-10T07:00:00Z", "11.00", false)];
    deliver(&mut fx, |fx| {
        fx.changes("c.csv", "2026-10-10T06:00:00Z", "2026-10-11T06:00:00Z", &ch)
    });
    let w = [(3, "2026-10-05", "2026-10-11T10:00:00Z", "30.00", false)];
    deliver(&mut fx, |fx| {
        fx.window(
            "w.csv",
            "2026-10-12T06:00:00Z",
            "2026-10-05",
            "2026-10-05",
            &w,
        )
    });
    let ids: Vec<String> = fx
        .state("orders")
        .rows
        .column("id")
        .into_iter()
        .flatten()
        .collect();
    assert_eq!(ids, ["2", "3"], "key 1's copy of 2026-10-01 is not current");
    fx.verify("orders");
}

fn opts(ttl_ms: u64, wait_ms: u64) -> LakeOptions {
    LakeOptions {
        lease_ttl: Duration::from_millis(ttl_ms),
        lock_wait: Duration::from_millis(wait_ms),
        ..LakeOptions::default()
    }
}

#[test]
fn an_unexpired_lease_is_lease_held_naming_holder_and_expiry() {
    // rule: store.lease.held, topology.coordinate.lease-row
    let dir = tempfile::tempdir().unwrap();
    let mut a = Lake::open(dir.path(), &opts(60_000, 50), true).unwrap();
    let mut b = Lake::open(dir.path(), &opts(60_000, 50), true).unwrap();
    a.begin(Txn::Write, &["t"]).unwrap();
    let e = b.begin(Txn::Write, &["t"]).unwrap_err();
    match lake_err(&e) {
        LakeError::LeaseHeld {
            table,
            holder,
            expires,
        } => {
            assert_eq!(table, "t");
            assert_eq!(holder, a.holder());
            let at = chrono::DateTime::parse_from_rfc3339(expires).unwrap();
            let left = at.signed_duration_since(chrono::Utc::now());
            assert!(left > chrono::Duration::seconds(50), "{expires}");
        }
        other => panic!("{other}"),
    }
    a.commit().unwrap();
    b.begin(Txn::Write, &["t"]).unwrap();
    b.rollback();
}

/// A writer whose leases lapse after `ttl_ms` (no renewal): one paused past its lease.
fn paused(ttl_ms: u64) -> LakeOptions {
    LakeOptions {
        renew_leases: false,
        ..opts(ttl_ms, 0)
    }
}

#[test]
fn a_writer_paused_past_its_lease_is_fenced_and_publishes_nothing() {
    // rule: store.lease.stale-fence, topology.coordinate.fenced-commit, store.lease.pointer-fence, topology.coordinate.fence-advances
    let dir = tempfile::tempdir().unwrap();
    let mut a = Lake::open(dir.path(), &paused(100), true).unwrap();
    let mut b = Lake::open(dir.path(), &opts(60_000, 5_000), true).unwrap();
    a.begin(Txn::Write, &["t"]).unwrap();
    let fa = a.held_fence("t").unwrap();
    a.save_ledger("t", "{\"from\": \"a\"}").unwrap();
    std::thread::sleep(Duration::from_millis(200));
    b.begin(Txn::Write, &["t"]).unwrap();
    let fb = b.held_fence("t").unwrap();
    assert_eq!(fb, fa + 1, "each acquisition raises the fence by one");
    assert_eq!(
        pointer(a.root(), "t").fence,
        fb,
        "taking the lease raised the pointer's fence"
    );
    let e = a.commit().unwrap_err();
    assert!(
        matches!(lake_err(&e), LakeError::LeaseFenced { fence, current, .. } if *fence == fa && *current == fb),
        "{e}"
    );
    assert_eq!(
        pointer(a.root(), "t").snapshot,
        None,
        "a's snapshot stays unreadable"
    );
    b.save_ledger("t", "{\"from\": \"b\"}").unwrap();
    b.commit().unwrap();
    a.begin(Txn::Read, &["t"]).unwrap();
    assert_eq!(a.ledger("t").unwrap().as_deref(), Some("{\"from\": \"b\"}"));
    a.rollback();
    // release keeps the fence: the next acquisition is one above it
    a.begin(Txn::Write, &["t"]).unwrap();
    assert_eq!(a.held_fence("t"), Some(fb + 1));
    a.rollback();
}

#[test]
fn releasing_a_lease_fenced_past_is_lease_not_held_and_changes_nothing() {
    // rule: store.lease.not-held
    let dir = tempfile::tempdir().unwrap();
    let mut a = Lake::open(dir.path(), &paused(100), true).unwrap();
    let mut b = Lake::open(dir.path(), &opts(60_000, 5_000), true).unwrap();
    a.begin(Txn::Write, &["t"]).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    b.begin(Txn::Write, &["t"]).unwrap();
    let before = pointer(a.root(), "t");
    let e = a.release_lease("t").unwrap_err();
    assert!(
        matches!(lake_err(&e), LakeError::LeaseNotHeld { holder, .. } if holder == b.holder()),
        "{e}"
    );
    assert_eq!(pointer(a.root(), "t"), before);
    b.rollback();
}

/// An object store that misbehaves in one way, over memory.
#[derive(Debug)]
struct Faulty {
    inner: InMemory,
    mode: Fault,
}

#[derive(Debug, Clone, Copy)]
enum Fault {
    /// Conditional puts are written unconditionally.
    IgnoresConditions,
    /// Conditional puts answer "not implemented".
    Unsupported,
}

impl std::fmt::Display for Faulty {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Faulty({:?})", self.mode)
    }
}

#[async_trait]
impl ObjectStore for Faulty {
    async fn put_opts(
        &self,
        location: &OPath,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        if !matches!(opts.mode, PutMode::Overwrite) {
            match self.mode {
                Fault::IgnoresConditions => {
                    return self.inner.put(location, payload).await;
                }
                Fault::Unsupported => {
                    return Err(object_store::Error::NotImplemented {
                        operation: "a conditional put_opts".into(),
                        implementer: self.to_string(),
                    });
                }
            }
        }
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
        self.inner.delete_stream(locations)
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

fn faulty(mode: Fault) -> Root {
    Root::with_store(
        "faulty://",
        Arc::new(Faulty {
            inner: InMemory::new(),
            mode,
        }),
    )
    .unwrap()
}

#[test]
fn a_backend_ignoring_conditions_is_refused_for_writing() {
    // rule: topology.coordinate.weak-backend, topology.coordinate.primitive
    let e = Lake::open_root(
        faulty(Fault::IgnoresConditions),
        LakeOptions::default(),
        true,
    )
    .unwrap_err();
    assert!(
        matches!(lake_err(&e), LakeError::WeakConditionalBackend { .. }),
        "{e}"
    );
    assert!(e.to_string().contains("weak-conditional-backend"));
}

#[test]
fn an_unsupported_conditional_write_is_sync_probe_inconclusive() {
    // rule: store.probe.inconclusive
    let root = faulty(Fault::Unsupported);
    let e = Lake::open_root(root.clone(), LakeOptions::default(), true).unwrap_err();
    assert!(
        matches!(lake_err(&e), LakeError::SyncProbeInconclusive { step, .. } if *step == "conditional create"),
        "{e}"
    );
    assert!(
        root.list("").unwrap().is_empty(),
        "nothing written, the probe's key removed"
    );
}

const CAS_CHILD: &str = "DOGANA_LAKE_CAS_CHILD";
const ROUNDS: u64 = 150;

/// The child of `filesystem_pointer_is_atomic_across_processes`: increments a counter
/// pointer by compare-and-swap until it has won ROUNDS times.
#[test]
fn cas_child() {
    let Ok(dir) = std::env::var(CAS_CHILD) else {
        return;
    };
    let root = Root::open(&dir).unwrap();
    let mut won = 0;
    while won < ROUNDS {
        let cur = root.get_versioned("counter").unwrap();
        let (n, expect) = match &cur {
            None => (0u64, None),
            Some(v) => (
                std::str::from_utf8(&v.bytes).unwrap().parse().unwrap(),
                Some(&v.version),
            ),
        };
        if root
            .put_versioned("counter", Bytes::from((n + 1).to_string()), expect)
            .unwrap()
            .is_some()
        {
            won += 1;
        }
    }
}

#[test]
fn filesystem_pointer_is_atomic_across_processes() {
    // rule: store.fold.pointer-commit, topology.coordinate.primitive
    // four processes each win 150 increments of one counter by the version-checked rename:
    // a lost update would leave the counter below 600
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..4)
        .map(|_| {
            std::process::Command::new(&exe)
                .args(["--exact", "cas_child", "--nocapture", "--test-threads=1"])
                .env(CAS_CHILD, dir.path())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let root = Root::open(dir.path().to_str().unwrap()).unwrap();
    let v = root.get_versioned("counter").unwrap().unwrap();
    assert_eq!(
        std::str::from_utf8(&v.bytes).unwrap(),
        (4 * ROUNDS).to_string()
    );
    assert_eq!(v.version, dogana_lake::objects::Version::Local(4 * ROUNDS));
    let kept = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("counter.")
        })
        .count();
    assert!(kept <= 8, "old versions are pruned: {kept} kept");
    let _ = Path::new("");
}

/// Two tables, each published once with ledger "1", then both pointers rewritten as a writer
/// of several tables leaves them before its decision: new snapshots (ledger "2") pending on
/// `commit`, under a lease of 1 ms held by nobody alive.
fn undecided_pair(lake: &mut Lake, tables: [&str; 2], commit: &str) {
    use dogana_lake::layout::{Lease, Pending};
    lake.begin(Txn::Write, &tables).unwrap();
    for t in tables {
        lake.save_ledger(t, "1").unwrap();
    }
    lake.commit().unwrap();
    let root = lake.root().clone();
    for t in tables {
        let v = root.get_versioned(&pointer_key(t)).unwrap().unwrap();
        let p: Pointer = serde_json::from_slice(&v.bytes).unwrap();
        assert!(p.pending.is_none() && p.lease.is_none(), "settled: {p:?}");
        let old = p.snapshot.clone().unwrap();
        let mut s = snapshot(&root, &old);
        s.ledger = Some("2".into());
        s.parent = Some(old.clone());
        let key = format!("{}-next.json", old.trim_end_matches(".json"));
        root.put(&key, Bytes::from(serde_json::to_vec(&s).unwrap()))
            .unwrap();
        let next = Pointer {
            snapshot: Some(key),
            lease: Some(Lease {
                holder: "a writer that died".into(),
                ttl_ms: 1,
                renewals: 0,
            }),
            pending: Some(Pending {
                commit: commit.into(),
                previous: Some(old),
            }),
            ..p
        };
        let json = Bytes::from(serde_json::to_vec(&next).unwrap());
        assert!(root
            .put_versioned(&pointer_key(t), json, Some(&v.version))
            .unwrap()
            .is_some());
    }
}

fn ledgers(lake: &mut Lake, tables: &[&str]) -> Vec<Option<String>> {
    lake.begin(Txn::Read, tables).unwrap();
    let out = tables.iter().map(|t| lake.ledger(t).unwrap()).collect();
    lake.rollback();
    out
}

#[test]
fn a_commit_of_several_tables_publishes_at_its_decision() {
    // rule: RECV-09, store.fold.pointer-commit, store.lease.stale-fence
    let dir = tempfile::tempdir().unwrap();
    let mut lake = Lake::open(dir.path(), &LakeOptions::default(), true).unwrap();
    let one = Some("1".to_owned());
    let two = Some("2".to_owned());

    // decided committed: both tables move at once
    undecided_pair(&mut lake, ["a", "b"], "commits/x.json");
    assert_eq!(ledgers(&mut lake, &["a", "b"]), [one.clone(), one.clone()]);
    let committed = Bytes::from_static(br#"{"outcome":"committed"}"#);
    assert!(lake
        .root()
        .create("commits/x.json", committed.clone())
        .unwrap());
    assert_eq!(ledgers(&mut lake, &["a", "b"]), [two.clone(), two.clone()]);
    // the next writer settles the head it found
    lake.begin(Txn::Write, &["a"]).unwrap();
    assert_eq!(lake.ledger("a").unwrap(), two);
    lake.rollback();

    // undecided past its lease: the next acquisition of either table aborts it, for both
    undecided_pair(&mut lake, ["c", "d"], "commits/y.json");
    std::thread::sleep(Duration::from_millis(20));
    lake.begin(Txn::Write, &["c"]).unwrap();
    assert_eq!(lake.ledger("c").unwrap(), one);
    lake.rollback();
    let decision = lake.root().get("commits/y.json").unwrap().unwrap();
    assert_eq!(&decision[..], br#"{"outcome":"aborted"}"#);
    // the late writer's decision loses, and nothing of its commit ever reads
    assert!(!lake.root().create("commits/y.json", committed).unwrap());
    assert_eq!(ledgers(&mut lake, &["c", "d"]), [one.clone(), one]);
}

#[test]
fn a_complete_empty_full_delivery_is_an_empty_replacement() {
    // rule: store.declare.empty-replacement, run.advance.zero-row-commit,
    // run.advance.snapshot-completion — the counterparts here: a complete full read of zero
    // rows publishes an empty snapshot that folds and replicas keep; the snapshot before it
    // keeps its rows; an unchanged (replayed) delivery and a refused one publish nothing
    let mut fx = Fx::new("lake-empty");
    deliver(&mut fx, |fx| {
        fx.full("f.csv", "2026-10-10T06:00:00Z", &DAY1)
    });
    let before = fx.r.backend().head("orders").unwrap().unwrap();
    let empty = fx.full("e.csv", "2026-10-11T06:00:00Z", &[]);
    fx.accept(&empty);
    let lake = fx.r.backend_mut();
    let head = lake.head("orders").unwrap().unwrap();
    let s = lake.snapshot(&head).unwrap();
    assert!(s.parts.is_empty(), "no part: {:?}", s.parts);
    assert_eq!(s.parent.as_deref(), Some(before.as_str()));
    assert!(lake.snapshot_rows(&head).unwrap().is_empty());
    assert_eq!(
        lake.snapshot_rows(&before).unwrap().len(),
        2,
        "earlier rows kept"
    );
    // a fold preserves it
    assert_eq!(lake.fold("orders").unwrap().snapshot, None);
    assert_eq!(lake.head("orders").unwrap().as_deref(), Some(head.as_str()));
    // a replica reads it empty
    let dir = tempfile::tempdir().unwrap();
    let to = Root::open(dir.path().to_str().unwrap()).unwrap();
    let url = lake.root().url().to_owned();
    dogana_lake::replica::pull(lake, &url, &to, &[], false).unwrap();
    let replica = Lake::open(dir.path(), &LakeOptions::default(), false).unwrap();
    assert_eq!(
        replica.head("orders").unwrap().as_deref(),
        Some(head.as_str())
    );
    assert!(replica.snapshot_rows(&head).unwrap().is_empty());
    // the same delivery again: its receipt answered, nothing published
    let d = fx.deliver(&empty);
    assert!(d.receipt.accepted());
    assert_eq!(
        fx.r.backend().head("orders").unwrap().as_deref(),
        Some(head.as_str())
    );
    assert!(fx.state("orders").rows.rows.is_empty());
    // a refused delivery publishes no rows either
    let mut bad = fx.full("b.csv", "2026-10-12T06:00:00Z", &DAY1);
    bad.manifest = bad
        .contract
        .manifest(
            "full",
            dogana_receiver::conformance::ts("2026-10-12T06:00:00Z"),
        )
        .rows(5)
        .content_hash(dogana_receiver::conformance::sha(
            std::fs::read(&bad.file).unwrap(),
        ))
        .build()
        .unwrap();
    fx.refuse(&bad, "rows");
    assert!(fx.state("orders").rows.rows.is_empty());
}
