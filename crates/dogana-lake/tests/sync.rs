//! Sync (STORE-P2): local stores pushing to one bucket and pulling from it, the bucket
//! manifest, signed tombstones, lazy parts and the part cache.

use std::path::Path;

use dogana_lake::objects::Root;
use dogana_lake::sync::cache::PartSource;
use dogana_lake::sync::manifest::{BucketManifest, Tombstone, MANIFEST};
use dogana_lake::sync::{
    commit_rounds, pull, push, PullOptions, SyncConfig, SyncWarning, HELD, PUSH_LOCK,
};
use dogana_lake::{Lake, LakeError, LakeOptions};
use dogana_receiver::conformance::Receiver as _;
use dogana_receiver::conformance::{Fixture, Order};
use dogana_receiver::{Open, Store};

type Fx = Fixture<Store<Lake>>;

const T1: &str = "2026-10-10T06:00:00Z";
const T2: &str = "2026-10-11T06:00:00Z";
const T3: &str = "2026-10-12T06:00:00Z";
const T4: &str = "2026-10-13T06:00:00Z";

fn base() -> Vec<Order<'static>> {
    vec![
        (1, "2026-10-01", "2026-10-01T10:00:00Z", "10.00", false),
        (2, "2026-10-01", "2026-10-01T11:00:00Z", "20.00", false),
        (3, "2026-10-02", "2026-10-02T10:00:00Z", "30.00", false),
    ]
}

/// One changed order, updated at the delivery's own instant (inside its cursor range).
fn change(id: i64, at: &str) -> Vec<Order<'_>> {
    vec![(id, "2026-10-03", at, "99.00", false)]
}

fn url(fx: &Fx) -> String {
    fx.r.backend().root().url().to_owned()
}

fn dir_url(d: &Path) -> String {
    format!("file://{}", d.display())
}

/// A node whose local store is at `dir` (made by a pull), delivering through the engine.
fn node_at(dir: &Path, name: &str) -> Fx {
    let mut fx = Fx::new(name);
    fx.r = Store::new(Lake::open(dir, &LakeOptions::default(), true).unwrap());
    fx
}

fn manifest_of(bucket: &str) -> BucketManifest {
    let root = Root::open(bucket).unwrap();
    // the versioned read: on file:// the plain manifest.json is a copy that may lag
    BucketManifest::parse(
        MANIFEST,
        &root.get_versioned(MANIFEST).unwrap().unwrap().bytes,
    )
    .unwrap()
}

/// Every key the bucket manifest lists exists in the bucket with its digest and size, and
/// every bucket pointer's head is listed.
fn check_bucket(bucket: &str) {
    let root = Root::open(bucket).unwrap();
    let m = manifest_of(bucket);
    for (k, e) in &m.entries {
        let b = root
            .get(k)
            .unwrap()
            .unwrap_or_else(|| panic!("{k} listed, not in the bucket"));
        assert_eq!(dogana_lake_sha(&b), e.sha256, "{k}");
        assert_eq!(b.len() as u64, e.size, "{k}");
    }
    let lake = Lake::open_root(root, LakeOptions::default(), false).unwrap();
    for t in lake.table_names().unwrap() {
        if let Some(h) = lake.head(&t).unwrap() {
            assert!(m.entries.contains_key(&h), "{t}'s head {h} is not listed");
        }
    }
}

fn dogana_lake_sha(b: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

fn reader(dir: &Path, name: &str) -> Fx {
    let mut fx = Fx::new(name);
    fx.r = Store::new(Lake::open(dir, &LakeOptions::default(), false).unwrap());
    fx
}

/// A new bucket holding what `fx` pushed into it, and its URL.
fn pushed(fx: &Fx) -> (tempfile::TempDir, String) {
    let bucket = tempfile::tempdir().unwrap();
    let b_url = dir_url(bucket.path());
    push(&url(fx), &b_url, &cfg()).unwrap();
    (bucket, b_url)
}

/// A lazy pull of the bucket at `b_url` into `dir`.
fn lazy_pull(dir: &Path, b_url: &str) -> dogana_lake::sync::PullReport {
    pull(
        &dir_url(dir),
        b_url,
        &PullOptions {
            lazy: true,
            ..PullOptions::default()
        },
    )
    .unwrap()
}

fn cfg() -> SyncConfig {
    SyncConfig::default()
}

#[test]
fn a_push_lists_every_object_and_a_pull_reads_what_the_node_reads() {
    // rule: store.push.manifest-commit, store.pull.pointer-last, store.merge.ownership
    let mut a = Fx::new("sync-a");
    a.accept(&a.full("a.csv", T1, &base()));
    a.accept(&a.changes("b.csv", T1, T2, &change(4, T2)));
    let bucket = tempfile::tempdir().unwrap();
    let r = push(&url(&a), &dir_url(bucket.path()), &cfg()).unwrap();
    assert_eq!(r.advanced, vec!["orders".to_string()]);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    check_bucket(&dir_url(bucket.path()));
    let m = manifest_of(&dir_url(bucket.path()));
    assert_eq!(m.generation, 1);
    // owned keys name the node; ledger pages and replay entries are unowned
    for (k, e) in &m.entries {
        let unowned = k.contains("/ledger/") || k.contains("/by-manifest/");
        assert_eq!(e.owner.is_none(), unowned, "{k}: {:?}", e.owner);
        if !unowned {
            assert_eq!(e.owner.as_deref(), Some(r.node.as_str()));
        }
    }
    // the bucket is a lake store every reader opens
    assert_eq!(
        reader(bucket.path(), "sync-bucket-read").state("orders"),
        a.state("orders")
    );
    let c = tempfile::tempdir().unwrap();
    let p = pull(
        &dir_url(c.path()),
        &dir_url(bucket.path()),
        &PullOptions::default(),
    )
    .unwrap();
    assert_eq!(p.advanced.len(), 1);
    let mut rc = reader(c.path(), "sync-c");
    assert_eq!(rc.state("orders"), a.state("orders"));
    rc.verify("orders");
    // nothing new: a second push uploads nothing, a second pull downloads nothing
    let again = push(&url(&a), &dir_url(bucket.path()), &cfg()).unwrap();
    assert!(again.uploaded.is_empty(), "{:?}", again.uploaded);
    assert_eq!(again.unchanged, vec!["orders".to_string()]);
    // one more delivery: the push uploads what it wrote, not the history
    a.accept(&a.changes("c.csv", T2, T3, &change(5, T3)));
    let head = a.r.backend().head("orders").unwrap().unwrap();
    let r = push(&url(&a), &dir_url(bucket.path()), &cfg()).unwrap();
    assert!(r.uploaded.contains(&head), "{:?}", r.uploaded);
    assert!(
        r.uploaded
            .iter()
            .all(|k| !k.contains("/receipts/seq/00000000000000000001/")),
        "{:?}",
        r.uploaded
    );
    assert!(r.uploaded.len() <= 6, "{:?}", r.uploaded);
    pull(
        &dir_url(c.path()),
        &dir_url(bucket.path()),
        &PullOptions::default(),
    )
    .unwrap();
    let p2 = pull(
        &dir_url(c.path()),
        &dir_url(bucket.path()),
        &PullOptions::default(),
    )
    .unwrap();
    assert!(p2.downloaded.is_empty());
    assert_eq!(p2.unchanged, vec!["orders".to_string()]);
}

#[test]
fn a_stale_table_is_fenced_at_push_keeps_its_receipts_and_is_decided_again_after_adopt() {
    // rule: store.push.pointer-fenced, store.pull.pointer-advance
    let bucket = tempfile::tempdir().unwrap();
    let b_url = dir_url(bucket.path());
    let mut a = Fx::new("sync-fence-a");
    a.accept(&a.full("a.csv", T1, &base()));
    push(&url(&a), &b_url, &cfg()).unwrap();
    // node B pulls, delivers on the bucket's head, pushes first
    let bdir = tempfile::tempdir().unwrap();
    pull(&dir_url(bdir.path()), &b_url, &PullOptions::default()).unwrap();
    let mut b = node_at(bdir.path(), "sync-fence-b");
    b.accept(&b.changes("b.csv", T1, T2, &change(4, T2)));
    let rb = push(&url(&b), &b_url, &cfg()).unwrap();
    assert_eq!(rb.advanced, vec!["orders".to_string()]);
    let b_head = b.r.backend().head("orders").unwrap().unwrap();
    // node A delivers on its stale head: its push leaves the table local and says so
    a.accept(&a.changes("c.csv", T1, T3, &change(5, T3)));
    let a_state = a.state("orders");
    let a_head = a.r.backend().head("orders").unwrap().unwrap();
    let ra = push(&url(&a), &b_url, &cfg()).unwrap();
    assert!(ra.advanced.is_empty());
    match &ra.warnings[..] {
        [SyncWarning::PointerFenced {
            table,
            local,
            bucket,
        }] => {
            assert_eq!(
                (table.as_str(), local, bucket),
                ("orders", &a_head, &b_head)
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(ra.warnings[0].to_string().contains("pull --adopt orders"));
    let bucket_lake = Lake::open(bucket.path(), &LakeOptions::default(), false).unwrap();
    assert_eq!(
        bucket_lake.head("orders").unwrap().unwrap(),
        b_head,
        "the bucket chain is B's"
    );
    assert!(
        !manifest_of(&b_url).entries.contains_key(&a_head),
        "nothing of A's head was listed"
    );
    check_bucket(&b_url);
    // A's receipts are all still local
    assert_eq!(a.state("orders"), a_state);
    // a plain pull leaves A's table as it is, naming why
    let p = pull(&url(&a), &b_url, &PullOptions::default()).unwrap();
    assert!(p.advanced.is_empty());
    assert!(
        matches!(
            &p.warnings[..],
            [SyncWarning::LocalAhead { diverged: true, .. }]
        ),
        "{:?}",
        p.warnings
    );
    // --adopt takes the bucket's head, keeping A's own objects aside
    let p = pull(
        &url(&a),
        &b_url,
        &PullOptions {
            adopt: vec!["orders".into()],
            ..PullOptions::default()
        },
    )
    .unwrap();
    assert_eq!(p.advanced, vec![("orders".to_string(), b_head.clone())]);
    assert!(
        p.moved_aside.iter().any(|k| k.contains("/receipts/seq/")),
        "{:?}",
        p.moved_aside
    );
    let mut a2 = node_at(a.r.backend().root().local_dir().unwrap(), "sync-fence-a2");
    assert_eq!(a2.state("orders"), b.state("orders"));
    // the delivery decided again against the bucket's head, and pushed
    a2.accept(&a2.changes("c.csv", T2, T3, &change(5, T3)));
    let r = push(&url(&a2), &b_url, &cfg()).unwrap();
    assert_eq!(r.advanced, vec!["orders".to_string()]);
    check_bucket(&b_url);
}

#[test]
fn a_bucket_or_directory_of_another_store_is_refused_and_nothing_changes() {
    // rule: store.init.store-identity — a bucket binds one store-id
    let mut a = Fx::new("sync-id-a");
    a.accept(&a.full("a.csv", T1, &base()));
    let mut b = Fx::new("sync-id-b");
    b.accept(&b.full("a.csv", T1, &base()));
    let (_bucket, b_url) = pushed(&a);
    let before = Root::open(&b_url).unwrap().list("").unwrap();
    let e = push(&url(&b), &b_url, &cfg()).unwrap_err();
    assert!(matches!(e, LakeError::SyncStoreMismatch { .. }), "{e}");
    assert_eq!(Root::open(&b_url).unwrap().list("").unwrap(), before);
    let e = pull(&url(&b), &b_url, &PullOptions::default()).unwrap_err();
    assert!(matches!(e, LakeError::SyncStoreMismatch { .. }), "{e}");
    // a directory holding other files is no place to pull into
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("notes.txt"), "mine").unwrap();
    let e = pull(&dir_url(d.path()), &b_url, &PullOptions::default()).unwrap_err();
    assert!(matches!(e, LakeError::SyncStoreMismatch { .. }), "{e}");
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
}

#[test]
fn a_manifest_that_does_not_parse_or_is_newer_is_refused_with_nothing_written() {
    // rule: store.push.manifest-format
    let mut a = Fx::new("sync-bad-manifest");
    a.accept(&a.full("a.csv", T1, &base()));
    let (_bucket, b_url) = pushed(&a);
    let root = Root::open(&b_url).unwrap();
    let good = root.get_versioned(MANIFEST).unwrap().unwrap().bytes;
    // without format, a manifest reads as 1
    let mut v: serde_json::Value = serde_json::from_slice(&good).unwrap();
    v.as_object_mut().unwrap().remove("format");
    let m = BucketManifest::parse(MANIFEST, &serde_json::to_vec(&v).unwrap()).unwrap();
    assert_eq!(m.format, 1);
    v["format"] = 3.into();
    let e = BucketManifest::parse(MANIFEST, &serde_json::to_vec(&v).unwrap()).unwrap_err();
    assert!(e.to_string().contains("format 3"), "{e}");
    // a pull of a bucket whose manifest does not parse changes nothing locally
    let version = root.get_versioned(MANIFEST).unwrap().unwrap().version;
    root.put_versioned(
        MANIFEST,
        bytes::Bytes::from_static(b"{not json"),
        Some(&version),
    )
    .unwrap()
    .unwrap();
    let c = tempfile::tempdir().unwrap();
    let e = pull(&dir_url(c.path()), &b_url, &PullOptions::default()).unwrap_err();
    assert!(matches!(e, LakeError::SyncManifestInvalid { .. }), "{e}");
    assert_eq!(
        std::fs::read_dir(c.path()).unwrap().count(),
        0,
        "nothing written"
    );
    // nor does a push publish anything on it
    let e = push(&url(&a), &b_url, &cfg()).unwrap_err();
    assert!(matches!(e, LakeError::SyncManifestInvalid { .. }), "{e}");
}

#[test]
fn a_part_that_does_not_match_its_digest_is_refused_and_the_next_pull_resumes() {
    // rule: store.pull.unconverged-resume, store.pull.pointer-last
    let mut a = Fx::new("sync-digest");
    a.accept(&a.full("a.csv", T1, &base()));
    a.accept(&a.changes("b.csv", T1, T2, &change(4, T2)));
    let (bucket, b_url) = pushed(&a);
    let m = manifest_of(&b_url);
    let part = m
        .entries
        .keys()
        .find(|k| dogana_lake::sync::is_data_part(k))
        .unwrap()
        .clone();
    let good = std::fs::read(bucket.path().join(&part)).unwrap();
    std::fs::write(bucket.path().join(&part), b"damaged").unwrap();
    let c = tempfile::tempdir().unwrap();
    let e = pull(&dir_url(c.path()), &b_url, &PullOptions::default()).unwrap_err();
    match &e {
        LakeError::SyncDigestMismatch { key, .. } => assert_eq!(key, &part),
        other => panic!("{other}"),
    }
    assert!(
        !c.path().join(&part).exists(),
        "the damaged part was not written"
    );
    assert!(
        !c.path().join("tables/orders/_pointer.json").exists(),
        "no pointer moved"
    );
    let kept = std::fs::read_dir(c.path().join("tables/orders/receipts/seq"))
        .unwrap()
        .count();
    assert!(kept > 0, "verified objects are kept");
    // repaired: the next pull downloads only what still differs
    std::fs::write(bucket.path().join(&part), good).unwrap();
    let p = pull(&dir_url(c.path()), &b_url, &PullOptions::default()).unwrap();
    assert_eq!(p.downloaded, vec![part]);
    reader(c.path(), "sync-digest-c").verify("orders");
}

#[test]
fn commit_rounds_count_only_rounds_that_met_no_newer_generation() {
    // rule: store.merge.retries, store.merge.exhausted
    let uploaded = vec!["tables/t/parts/a.parquet".to_string()];
    // the generation never moves: 5 lost rounds and it gives up, naming what it uploaded
    let mut n = 0;
    let e = commit_rounds(5, &uploaded, || {
        n += 1;
        Ok((false, 7))
    })
    .unwrap_err();
    assert_eq!(n, 5);
    match e {
        LakeError::SyncManifestRebaseExhausted {
            rounds,
            uploaded: u,
        } => {
            assert_eq!((rounds, u), (5, uploaded.clone()))
        }
        other => panic!("{other}"),
    }
    assert!(commit_rounds(5, &uploaded, || Ok((false, 7)))
        .unwrap_err()
        .to_string()
        .contains("run the push again"));
    // newer generations each round: the retries never run out, it wins on round 9
    let mut g = 0;
    let rounds = commit_rounds(5, &uploaded, || {
        g += 1;
        Ok((g == 9, g))
    })
    .unwrap();
    assert_eq!(rounds, 9);
}

#[test]
fn a_push_stops_after_64_rounds_whatever_they_meet() {
    // rule: store.merge.round-ceiling
    let mut g = 0;
    let e = commit_rounds(5, &[], || {
        g += 1;
        Ok((false, g))
    })
    .unwrap_err();
    assert_eq!(g, 64);
    assert!(matches!(
        e,
        LakeError::SyncManifestRebaseExhausted { rounds: 64, .. }
    ));
}

#[test]
fn sync_settings_take_the_records_defaults_and_refuse_zero_naming_the_key() {
    // rule: store.merge.retries, store.pull.part-cache, store.collect.retain-generations
    let d = SyncConfig::parse("").unwrap();
    assert_eq!(
        (
            d.push_retries,
            d.retain_generations,
            d.part_cache_bytes,
            d.lazy_parts
        ),
        (5, 64, 8 << 30, false)
    );
    assert_eq!(d.tombstone_ttl.as_secs(), 7 * 86_400);
    assert_eq!(d.lease_ttl.as_secs(), 60);
    assert_eq!(
        SyncConfig::parse("[sync]\nlease_ttl = \"300ms\"\n")
            .unwrap()
            .lease_ttl
            .as_millis(),
        300
    );
    for key in [
        "push_retries",
        "retain_generations",
        "part_cache_bytes",
        "tombstone_ttl",
    ] {
        let e = SyncConfig::parse(&format!("[sync]\n{key} = 0\n")).unwrap_err();
        match &e {
            LakeError::ConfigInvalid { field, .. } => assert_eq!(*field, format!("sync.{key}")),
            other => panic!("{other}"),
        }
    }
    let e = SyncConfig::parse("[sync]\npush_retry = 3\n").unwrap_err();
    assert!(e.to_string().contains("push_retry"), "{e}");
    let c = SyncConfig::parse(
        "[sync]\nlazy_parts = true\ntombstone_ttl = \"12h\"\npart_cache_bytes = \"2GiB\"\n",
    )
    .unwrap();
    assert!(c.lazy_parts);
    assert_eq!(
        (c.tombstone_ttl.as_secs(), c.part_cache_bytes),
        (43_200, 2 << 30)
    );
}

#[test]
fn generation_manifests_keep_the_newest_retain_generations() {
    // rule: store.collect.retain-generations
    let mut a = Fx::new("sync-generations");
    a.accept(&a.full("a.csv", T1, &base()));
    let bucket = tempfile::tempdir().unwrap();
    let b_url = dir_url(bucket.path());
    let c = SyncConfig {
        retain_generations: 2,
        ..cfg()
    };
    let mut last = 0;
    for (i, at) in [T2, T3, T4].iter().enumerate() {
        last = push(&url(&a), &b_url, &c).unwrap().generation;
        a.accept(&a.changes(
            &format!("c{i}.csv"),
            if i == 0 { T1 } else { [T2, T3][i - 1] },
            at,
            &change(10 + i as i64, at),
        ));
    }
    last = last.max(push(&url(&a), &b_url, &c).unwrap().generation);
    let gens = Root::open(&b_url).unwrap().list("manifests/").unwrap();
    assert_eq!(gens.len(), 2, "{gens:?}");
    assert!(gens.last().unwrap().contains(&format!("{last:020}")));
}

/// Deletes some of a node's parts locally, as a collection does: the keys deleted.
fn deleted_locally(fx: &mut Fx) -> Vec<String> {
    // two full deliveries replace every part, then a collect keeping one snapshot: the
    // earlier parts go
    for (i, at) in [T2, T3].iter().enumerate() {
        fx.accept(&fx.full(&format!("d{i}.csv"), at, &base()));
    }
    let before = fx.r.backend().root().list("tables/orders/parts/").unwrap();
    fx.r.backend_mut().collect("orders", 1).unwrap();
    let after = fx.r.backend().root().list("tables/orders/parts/").unwrap();
    before.into_iter().filter(|k| !after.contains(k)).collect()
}

#[test]
fn a_push_tombstones_owned_held_keys_it_deleted_signed_and_a_pull_applies_them() {
    // rule: store.merge.tombstone-signed, store.merge.scoped-union, store.merge.held-record
    let bucket = tempfile::tempdir().unwrap();
    let b_url = dir_url(bucket.path());
    let mut a = Fx::new("sync-tomb-a");
    a.accept(&a.full("a.csv", T1, &base()));
    push(&url(&a), &b_url, &cfg()).unwrap();
    let held: serde_json::Value = serde_json::from_slice(
        &std::fs::read(a.r.backend().root().local_dir().unwrap().join(HELD)).unwrap(),
    )
    .unwrap();
    assert!(
        held.as_object()
            .unwrap()
            .values()
            .next()
            .unwrap()
            .as_array()
            .unwrap()
            .len()
            > 2
    );
    let bdir = tempfile::tempdir().unwrap();
    pull(&dir_url(bdir.path()), &b_url, &PullOptions::default()).unwrap();
    let listed = manifest_of(&b_url);
    let gone: Vec<String> = deleted_locally(&mut a)
        .into_iter()
        .filter(|k| listed.entries.contains_key(k))
        .collect();
    assert!(!gone.is_empty());
    let r = push(&url(&a), &b_url, &cfg()).unwrap();
    let mut t = r.tombstoned.clone();
    t.sort();
    assert_eq!(t, gone);
    let m = manifest_of(&b_url);
    for k in &gone {
        assert!(!m.entries.contains_key(k));
        assert!(!bucket.path().join(k).exists(), "{k} left the bucket");
        let ts = m.tombstones.iter().find(|t| &t.key == k).unwrap();
        assert_eq!(ts.owner, r.node);
        m.verify(ts).unwrap();
    }
    check_bucket(&b_url);
    // B holds copies; its pull verifies the tombstones and drops them
    for k in &gone {
        assert!(bdir.path().join(k).exists());
    }
    let p = pull(&dir_url(bdir.path()), &b_url, &PullOptions::default()).unwrap();
    let mut d = p.deleted.clone();
    d.sort();
    assert_eq!(d, gone);
    reader(bdir.path(), "sync-tomb-b").verify("orders");
}

#[test]
fn untrusted_or_foreign_tombstones_keep_their_entries_and_delete_nothing() {
    // rule: store.merge.tombstone-unverified, store.merge.tombstone-owner
    let bucket = tempfile::tempdir().unwrap();
    let b_url = dir_url(bucket.path());
    let mut a = Fx::new("sync-forged-a");
    a.accept(&a.full("a.csv", T1, &base()));
    let ra = push(&url(&a), &b_url, &cfg()).unwrap();
    let bdir = tempfile::tempdir().unwrap();
    pull(&dir_url(bdir.path()), &b_url, &PullOptions::default()).unwrap();
    let root = Root::open(&b_url).unwrap();
    let v = root.get_versioned(MANIFEST).unwrap().unwrap();
    let mut m = BucketManifest::parse(MANIFEST, &v.bytes).unwrap();
    let part = m
        .entries
        .keys()
        .find(|k| dogana_lake::sync::is_data_part(k))
        .unwrap()
        .clone();
    let snap = m
        .entries
        .keys()
        .find(|k| k.contains("/snapshots/"))
        .unwrap()
        .clone();
    let now = chrono::Utc::now().to_rfc3339();
    // an unsigned tombstone in A's name, and one by a stranger for A's snapshot
    m.tombstones
        .push(Tombstone::signed(&part, &ra.node, &now, None));
    m.tombstones
        .push(Tombstone::signed(&snap, "node-stranger", &now, None));
    root.put_versioned(MANIFEST, bytes::Bytes::from(m.to_bytes()), Some(&v.version))
        .unwrap()
        .unwrap();
    let r = push(&url(&a), &b_url, &cfg()).unwrap();
    let m2 = manifest_of(&b_url);
    assert!(m2.entries.contains_key(&part) && m2.entries.contains_key(&snap));
    assert!(
        r.warnings
            .iter()
            .any(|w| matches!(w, SyncWarning::TombstoneUnverified { key, .. } if *key == part)),
        "{:?}",
        r.warnings
    );
    assert!(
        r.warnings
            .iter()
            .any(|w| matches!(w, SyncWarning::TombstoneForeign { key, .. } if *key == snap)),
        "{:?}",
        r.warnings
    );
    // a pull deletes nothing for them
    let p = pull(&dir_url(bdir.path()), &b_url, &PullOptions::default()).unwrap();
    assert!(p.deleted.is_empty());
    assert!(bdir.path().join(&part).exists());
    // a signature under a key the ledger does not hold is not trusted either
    let stranger = ring::signature::Ed25519KeyPair::from_pkcs8(
        ring::signature::Ed25519KeyPair::generate_pkcs8(&ring::rand::SystemRandom::new())
            .unwrap()
            .as_ref(),
    )
    .unwrap();
    let forged = Tombstone::signed(&part, &ra.node, &now, Some(&stranger));
    assert!(m2.verify(&forged).is_err());
}

#[test]
fn a_store_without_held_keys_tombstones_nothing_unless_a_push_marker_survives() {
    // rule: store.merge.held-absent
    let bucket = tempfile::tempdir().unwrap();
    let b_url = dir_url(bucket.path());
    let mut a = Fx::new("sync-held-absent");
    a.accept(&a.full("a.csv", T1, &base()));
    push(&url(&a), &b_url, &cfg()).unwrap();
    let dir = a.r.backend().root().local_dir().unwrap().to_owned();
    let listed = manifest_of(&b_url);
    let gone: Vec<String> = deleted_locally(&mut a)
        .into_iter()
        .filter(|k| listed.entries.contains_key(k))
        .collect();
    assert!(!gone.is_empty());
    // no held record and no marker: the store is taken to hold none of the remote keys
    std::fs::remove_file(dir.join(HELD)).unwrap();
    let r = push(&url(&a), &b_url, &cfg()).unwrap();
    assert!(r.tombstoned.is_empty(), "{:?}", r.tombstoned);
    // a marker left by a push that died before its record: it held every remote key it owns
    std::fs::remove_file(dir.join(HELD)).unwrap();
    std::fs::write(dir.join(PUSH_LOCK), "x").unwrap();
    let r = push(&url(&a), &b_url, &cfg()).unwrap();
    let mut t = r.tombstoned.clone();
    t.sort();
    assert_eq!(t, gone);
    assert!(
        !dir.join(PUSH_LOCK).exists(),
        "the marker is cleared once the record is written"
    );
}

#[test]
fn a_lazy_pull_boots_on_metadata_and_the_first_read_fetches_each_part() {
    // rule: store.pull.lazy-parts, store.pull.lazy-pointer, read.cache.lazy-hydration
    let mut a = Fx::new("sync-lazy");
    a.accept(&a.full("a.csv", T1, &base()));
    a.accept(&a.changes("b.csv", T1, T2, &change(4, T2)));
    let (_bucket, b_url) = pushed(&a);
    let c = tempfile::tempdir().unwrap();
    let p = pull(
        &dir_url(c.path()),
        &b_url,
        &PullOptions {
            lazy: true,
            ..PullOptions::default()
        },
    )
    .unwrap();
    assert_eq!(p.advanced.len(), 1);
    assert!(p.skipped_parts >= 2);
    assert!(
        p.downloaded
            .iter()
            .all(|k| !dogana_lake::sync::is_data_part(k)),
        "{:?}",
        p.downloaded
    );
    let parts = |d: &Path| {
        std::fs::read_dir(d.join("tables/orders/parts"))
            .map(|r| r.count())
            .unwrap_or(0)
    };
    assert_eq!(parts(c.path()), 0);
    // every reader works: the rows come through the part cache
    let mut rc = reader(c.path(), "sync-lazy-c");
    assert_eq!(rc.state("orders"), a.state("orders"));
    rc.verify("orders");
    assert!(parts(c.path()) >= 2, "the first read fetched the parts");
    let src = PartSource::of_dir(c.path()).unwrap().unwrap();
    assert!(src.cached().len() >= 2);
}

#[test]
fn the_part_cache_evicts_the_least_recently_read_part_above_its_bytes() {
    // rule: store.pull.part-cache
    let mut a = Fx::new("sync-cache");
    a.accept(&a.full("a.csv", T1, &base()));
    a.accept(&a.changes("b.csv", T1, T2, &change(4, T2)));
    a.accept(&a.changes("c.csv", T2, T3, &change(5, T3)));
    let (_bucket, b_url) = pushed(&a);
    let c = tempfile::tempdir().unwrap();
    // room for about one part
    std::fs::write(
        c.path().join("store.toml"),
        "[sync]\npart_cache_bytes = 3000\n",
    )
    .unwrap();
    lazy_pull(c.path(), &b_url);
    let src = PartSource::of_dir(c.path()).unwrap().unwrap();
    let m = manifest_of(&b_url);
    let mut parts: Vec<String> = m
        .entries
        .keys()
        .filter(|k| dogana_lake::sync::is_data_part(k))
        .cloned()
        .collect();
    parts.sort();
    assert!(parts.len() >= 3);
    for p in &parts {
        src.fetch(p).unwrap().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let cached = src.cached();
    let total: u64 = cached.values().sum();
    assert!(total <= 3000 || cached.len() == 1, "{cached:?}");
    assert!(
        cached.contains_key(parts.last().unwrap()),
        "the newest read stays"
    );
    assert!(
        !c.path().join(&parts[0]).exists(),
        "the least recently read left the disk"
    );
    // a held part is not evicted
    src.hold([parts[0].clone()]);
    src.fetch(&parts[0]).unwrap().unwrap();
    src.fetch(&parts[1]).unwrap().unwrap();
    assert!(c.path().join(&parts[0]).exists());
}

#[test]
fn an_absent_part_the_bucket_cannot_give_is_unavailable_within_the_deadline() {
    // rule: read.cache.miss-wait
    let mut a = Fx::new("sync-miss");
    a.accept(&a.full("a.csv", T1, &base()));
    let (bucket, b_url) = pushed(&a);
    let c = tempfile::tempdir().unwrap();
    lazy_pull(c.path(), &b_url);
    let part = manifest_of(&b_url)
        .entries
        .keys()
        .find(|k| dogana_lake::sync::is_data_part(k))
        .unwrap()
        .clone();
    std::fs::remove_file(bucket.path().join(&part)).unwrap();
    let src = PartSource::of_dir(c.path())
        .unwrap()
        .unwrap()
        .with_deadline(std::time::Duration::from_millis(600));
    let t = std::time::Instant::now();
    let e = src.fetch(&part).unwrap_err();
    assert!(t.elapsed() < std::time::Duration::from_secs(3));
    match e {
        LakeError::ReadPartUnavailable { part: p, .. } => assert_eq!(p, part),
        other => panic!("{other}"),
    }
    // a part whose bytes are not the listed ones is refused, not kept
    std::fs::write(bucket.path().join(&part), b"other bytes").unwrap();
    let e = src.fetch(&part).unwrap_err();
    assert!(matches!(e, LakeError::SyncDigestMismatch { .. }), "{e}");
    assert!(!c.path().join(&part).exists());
}

#[test]
fn a_fold_on_a_lazy_store_whose_inputs_exceed_the_cache_publishes_nothing() {
    // rule: store.fold.cached-inputs
    let mut a = Fx::new("sync-fold");
    a.accept(&a.full("a.csv", T1, &base()));
    for (i, (since, at)) in [(T1, T2), (T2, T3), (T3, T4)].iter().enumerate() {
        a.accept(&a.changes(&format!("f{i}.csv"), since, at, &change(30 + i as i64, at)));
    }
    let (_bucket, b_url) = pushed(&a);
    let c = tempfile::tempdir().unwrap();
    std::fs::write(
        c.path().join("store.toml"),
        "[sync]\npart_cache_bytes = 100\n",
    )
    .unwrap();
    lazy_pull(c.path(), &b_url);
    let mut lake = Lake::open(c.path(), &LakeOptions::default(), true).unwrap();
    let head = lake.head("orders").unwrap();
    let e = lake.fold("orders").unwrap_err();
    match LakeError::of(&e) {
        Some(LakeError::FoldInputsExceedCache { inputs, cache, .. }) => {
            assert!(*inputs > 100);
            assert_eq!(*cache, 100);
        }
        other => panic!("{other:?} {e}"),
    }
    assert_eq!(lake.head("orders").unwrap(), head, "nothing published");
    // with room, the fold fetches its inputs through the cache and publishes
    std::fs::write(
        c.path().join("store.toml"),
        "[sync]\npart_cache_bytes = 1000000\n",
    )
    .unwrap();
    let mut lake = Lake::open(c.path(), &LakeOptions::default(), true).unwrap();
    lake.fold("orders").unwrap();
    assert_ne!(lake.head("orders").unwrap(), head);
}

/// A full delivery of the base rows into `table` at `at`.
fn full_job(fx: &Fx, table: &str, name: &str, at: &str) -> dogana_receiver::conformance::Job {
    let rows = base();
    let contract = dogana_receiver::conformance::orders_named(table, "id", "order_date");
    fx.job(
        name,
        dogana_receiver::conformance::orders_csv(&rows),
        &contract,
        |c, h| {
            c.manifest("full", dogana_receiver::conformance::ts(at))
                .rows(3)
                .content_hash(h)
                .build()
                .unwrap()
        },
    )
}

/// 4 nodes, each with its own local store, delivering into their own table and pushing
/// concurrently for `rounds` rounds into the bucket at `b_url`; then every object each node
/// pushed is listed, no receipt is lost, a fresh pull verifies, and a node's stale copy of
/// another's table is fenced at push.
fn four_nodes(b_url: &str, rounds: usize) {
    // one store: node 0 makes it and pushes first, the others boot from the bucket
    let mut first = Fx::new("sync-four-0");
    first.accept(&first.full("a.csv", T1, &base()));
    push(&url(&first), b_url, &cfg()).unwrap();
    let dirs: Vec<tempfile::TempDir> = (0..4).map(|_| tempfile::tempdir().unwrap()).collect();
    for d in &dirs {
        pull(&dir_url(d.path()), b_url, &PullOptions::default()).unwrap();
    }
    let handles: Vec<_> = (0..4)
        .map(|n| {
            let b_url = b_url.to_owned();
            let dir = dirs[n].path().to_owned();
            std::thread::spawn(move || {
                let mut fx = node_at(&dir, &format!("sync-four-{n}"));
                let table = format!("t{n}");
                let mut uploaded = Vec::new();
                for i in 0..rounds {
                    let at = format!("2026-10-11T{:02}:{:02}:00Z", 6 + i / 60, i % 60);
                    fx.accept(&full_job(&fx, &table, &format!("f{i}.csv"), &at));
                    let r = push(
                        &url(&fx),
                        &b_url,
                        &SyncConfig {
                            push_retries: 64,
                            ..SyncConfig::default()
                        },
                    )
                    .unwrap();
                    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
                    assert!(r.advanced.contains(&table), "{r:?}");
                    uploaded.extend(r.uploaded);
                }
                let receipts = fx.state(&table).receipts;
                (table, receipts, uploaded)
            })
        })
        .collect();
    // every thread joined before any failure is raised: the local stores outlive them all
    let joined: Vec<_> = handles.into_iter().map(|h| h.join()).collect();
    let results: Vec<_> = joined
        .into_iter()
        .map(|r| r.unwrap_or_else(|e| std::panic::resume_unwind(e)))
        .collect();
    check_bucket(b_url);
    let m = manifest_of(b_url);
    let c = tempfile::tempdir().unwrap();
    pull(&dir_url(c.path()), b_url, &PullOptions::default()).unwrap();
    let mut rc = reader(c.path(), "sync-four-c");
    for (table, receipts, uploaded) in &results {
        assert_eq!(receipts.len(), rounds, "{table}");
        for k in uploaded {
            assert!(m.entries.contains_key(k), "{k}, pushed, is listed");
        }
        assert_eq!(
            &rc.state(table).receipts,
            receipts,
            "no receipt of {table} lost"
        );
        rc.verify(table);
    }
    // node 0 delivers into t1 on its stale copy: its push leaves t1 local and says so
    let mut zero = node_at(dirs[0].path(), "sync-four-stale");
    zero.accept(&full_job(&zero, "t1", "stale.csv", "2026-10-30T06:00:00Z"));
    let r = push(&url(&zero), b_url, &cfg()).unwrap();
    assert!(
        matches!(&r.warnings[..], [SyncWarning::PointerFenced { table, .. }] if table == "t1"),
        "{:?}",
        r.warnings
    );
    assert_eq!(
        rc.state("t1").receipts,
        results[1].1,
        "the bucket's t1 is node 1's"
    );
}

#[test]
fn four_nodes_push_concurrently_into_one_bucket_and_nothing_is_lost() {
    // rule: store.push.manifest-commit, store.merge.scoped-union, store.push.pointer-fenced
    let bucket = tempfile::tempdir().unwrap();
    let rounds = std::env::var("DOGANA_SYNC_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12);
    four_nodes(&dir_url(bucket.path()), rounds);
}

/// The same on the servers scripts/test-lake.sh starts (moto's S3, Azurite), 50 rounds.
#[cfg(feature = "servers")]
mod servers {
    use super::*;

    fn rounds() -> usize {
        std::env::var("DOGANA_SYNC_ROUNDS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(50)
    }

    #[test]
    fn four_nodes_on_s3() {
        // rule: store.push.manifest-commit, store.merge.scoped-union
        let dir = tempfile::tempdir().unwrap();
        four_nodes(
            &dogana_lake::cloud_url("DOGANA_LAKE_S3_URL", dir.path()).unwrap(),
            rounds(),
        );
    }

    const WRONG_KEY_CHILD: &str = "DOGANA_SYNC_WRONG_KEY_CHILD";

    /// The child of `wrong_credentials_*`: a push or pull under the environment the parent
    /// gave it, printing the error's code and message.
    #[test]
    fn wrong_key_child() {
        let Ok(spec) = std::env::var(WRONG_KEY_CHILD) else {
            return;
        };
        let mut it = spec.splitn(3, '|');
        let (op, local, bucket) = (it.next().unwrap(), it.next().unwrap(), it.next().unwrap());
        let e = match op {
            "push" => push(local, bucket, &cfg()).map(|_| ()),
            _ => pull(local, bucket, &PullOptions::default()).map(|_| ()),
        }
        .expect_err("refused");
        println!("REFUSED {} {e}", e.code());
    }

    /// Runs `op` in a child process whose Azure account key is wrong (the environment is
    /// the process's, so the parent's other tests keep the right one); its output.
    fn with_wrong_key(op: &str, local: &str, bucket: &str) -> String {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "servers::wrong_key_child", "--nocapture"])
            .env(WRONG_KEY_CHILD, format!("{op}|{local}|{bucket}"))
            // 64 bytes, base64: a well-formed key that is not the account's
            .env("AZURE_STORAGE_ACCOUNT_KEY", "A".repeat(86) + "==")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    }

    fn listing(url: &str) -> Vec<(String, Vec<u8>)> {
        let root = Root::open(url).unwrap();
        let mut keys = root.list("").unwrap();
        keys.sort();
        keys.into_iter()
            .map(|k| {
                let b = root.get(&k).unwrap().unwrap().to_vec();
                (k, b)
            })
            .collect()
    }

    #[test]
    fn wrong_credentials_refuse_a_push_and_a_pull_by_name_and_change_nothing() {
        // issue 30, bad input: wrong credentials are a named error, and nothing changes
        let dir = tempfile::tempdir().unwrap();
        let b_url = dogana_lake::cloud_url("DOGANA_LAKE_AZ_URL", dir.path()).unwrap();
        let mut a = Fx::new("sync-wrong-key");
        a.accept(&a.full("a.csv", T1, &base()));
        push(&url(&a), &b_url, &cfg()).unwrap();
        a.accept(&a.changes("b.csv", T1, T2, &change(4, T2)));
        let (bucket_before, local_before) = (listing(&b_url), listing(&url(&a)));
        let out = with_wrong_key("push", &url(&a), &b_url);
        assert!(out.contains("REFUSED DGN-310 CredentialsRefused"), "{out}");
        assert_eq!(listing(&b_url), bucket_before, "nothing published");
        assert_eq!(listing(&url(&a)), local_before, "the local store unchanged");
        let fresh = tempfile::tempdir().unwrap();
        let out = with_wrong_key("pull", &dir_url(fresh.path()), &b_url);
        assert!(out.contains("REFUSED DGN-310 CredentialsRefused"), "{out}");
        assert_eq!(
            std::fs::read_dir(fresh.path()).unwrap().count(),
            0,
            "nothing written"
        );
        // with the right key the same push goes through
        push(&url(&a), &b_url, &cfg()).unwrap();
        check_bucket(&b_url);
    }

    #[test]
    fn four_nodes_on_azure() {
        // rule: store.push.manifest-commit, store.merge.scoped-union
        let dir = tempfile::tempdir().unwrap();
        four_nodes(
            &dogana_lake::cloud_url("DOGANA_LAKE_AZ_URL", dir.path()).unwrap(),
            rounds(),
        );
    }
}

#[test]
fn a_lazy_pull_leaves_receipts_and_husks_in_the_bucket_until_a_reader_lists_them() {
    // rule: store.pull.lazy-folded-runs, store.pull.husks-skipped, store.pull.lazy-ready
    let mut a = Fx::new("sync-husks");
    a.accept(&a.full("a.csv", T1, &base()));
    a.accept(&a.full("b.csv", T2, &base()));
    a.accept(&a.full("c.csv", T3, &base()));
    a.r.backend_mut().collect("orders", 1).unwrap();
    let (_bucket, b_url) = pushed(&a);
    let m = manifest_of(&b_url);
    let husks: Vec<String> = m
        .entries
        .keys()
        .filter_map(|k| {
            k.strip_suffix(".collected.json")
                .map(|s| format!("{s}.json"))
        })
        .collect();
    assert_eq!(husks.len(), 2, "two collected snapshots");
    let receipts: Vec<&String> = m
        .entries
        .keys()
        .filter(|k| k.contains("/receipts/seq/"))
        .collect();
    assert_eq!(receipts.len(), 3);
    let c = tempfile::tempdir().unwrap();
    let p = pull(
        &dir_url(c.path()),
        &b_url,
        &PullOptions {
            lazy: true,
            ..PullOptions::default()
        },
    )
    .unwrap();
    assert_eq!(p.skipped_runs, 5, "3 receipts and 2 husks");
    let skipped: Vec<String> =
        serde_json::from_slice(&std::fs::read(c.path().join(".skipped-runs.json")).unwrap())
            .unwrap();
    for k in husks.iter().chain(receipts.iter().copied()) {
        assert!(skipped.contains(k), "{k} listed as skipped");
        assert!(!c.path().join(k).exists(), "{k} left in the bucket");
    }
    // every other in-scope object but the data parts is home
    for k in m.entries.keys() {
        if !dogana_lake::sync::is_data_part(k) && !skipped.contains(k) {
            assert!(c.path().join(k).exists(), "{k} is home");
        }
    }
    // an unbounded read (rows and ledger) fetches none of them
    let mut rc = reader(c.path(), "sync-husks-c");
    let (rows, ledger) = rc.r.read("orders").unwrap();
    assert_eq!((rows, ledger), a.r.read("orders").unwrap());
    for k in &skipped {
        assert!(
            !c.path().join(k).exists(),
            "{k} not fetched by a read of the head"
        );
    }
    // listing the table's receipts fetches them, each verified
    assert_eq!(rc.state("orders").receipts, a.state("orders").receipts);
    for k in &receipts {
        assert!(c.path().join(k).exists());
    }
}

#[test]
fn a_chain_walk_fetches_husks_and_a_store_without_its_bucket_names_what_it_lacks() {
    // rule: store.pull.husks-fetched, store.pull.folded-runs-fetched, store.pull.folded-runs-unreachable
    let mut a = Fx::new("sync-husks-walk");
    a.accept(&a.full("a.csv", T1, &base()));
    a.accept(&a.full("b.csv", T2, &base()));
    a.accept(&a.full("c.csv", T3, &base()));
    a.r.backend_mut().collect("orders", 1).unwrap();
    let (_bucket, b_url) = pushed(&a);
    let c = tempfile::tempdir().unwrap();
    lazy_pull(c.path(), &b_url);
    let skipped: Vec<String> =
        serde_json::from_slice(&std::fs::read(c.path().join(".skipped-runs.json")).unwrap())
            .unwrap();
    let husk = skipped
        .iter()
        .find(|k| k.contains("/snapshots/"))
        .unwrap()
        .clone();
    // a walk of the whole chain (a push from the lazy node reads every snapshot) brings the
    // husks home as it reaches them
    let lake = Lake::open(c.path(), &LakeOptions::default(), false).unwrap();
    let mut at = lake.head("orders").unwrap();
    let mut walked = 0;
    while let Some(k) = at {
        at = lake.snapshot(&k).unwrap().parent;
        walked += 1;
    }
    assert_eq!(walked, 3);
    assert!(c.path().join(&husk).exists(), "{husk} fetched by the walk");
    // without its bucket, a store listing skipped receipts names the table and the object
    std::fs::remove_file(c.path().join(".sync/source.json")).unwrap();
    let mut rc = reader(c.path(), "sync-husks-nosource");
    let e = rc.r.receipts("orders").unwrap_err();
    match LakeError::of(&e) {
        Some(LakeError::SyncFoldedRunsUnfetched { table, key }) => {
            assert_eq!(table, "orders");
            assert!(key.contains("/receipts/seq/"), "{key}");
        }
        other => panic!("{other:?}: {e}"),
    }
}

#[test]
fn a_collected_record_keeps_its_key_out_of_every_push_until_it_lapses() {
    // rule: store.merge.collected, store.push.collected, store.push.manifest-format
    let mut a = Fx::new("sync-collected");
    a.accept(&a.full("a.csv", T1, &base()));
    let (_bucket, b_url) = pushed(&a);
    a.accept(&a.changes("b.csv", T1, T2, &change(4, T2)));
    // a collection recorded one of the node's new parts (not yet pushed) and one listed key
    let root = Root::open(&b_url).unwrap();
    let v = root.get_versioned(MANIFEST).unwrap().unwrap();
    let mut m = BucketManifest::parse(MANIFEST, &v.bytes).unwrap();
    let listed = m
        .entries
        .keys()
        .find(|k| k.contains("/ledger/"))
        .unwrap()
        .clone();
    let head = a.r.backend().head("orders").unwrap().unwrap();
    let new_part =
        a.r.backend()
            .snapshot(&head)
            .unwrap()
            .parts
            .last()
            .unwrap()
            .path
            .clone();
    let now = chrono::Utc::now().to_rfc3339();
    for k in [&listed, &new_part] {
        m.collected.push(dogana_lake::sync::manifest::Collected {
            key: k.clone(),
            at: now.clone(),
        });
    }
    root.put_versioned(MANIFEST, bytes::Bytes::from(m.to_bytes()), Some(&v.version))
        .unwrap()
        .unwrap();
    assert_eq!(
        manifest_of(&b_url).format,
        2,
        "a manifest holding a collected record is format 2"
    );
    let r = push(&url(&a), &b_url, &cfg()).unwrap();
    assert!(
        !r.uploaded.contains(&new_part),
        "a recorded key is not uploaded"
    );
    let after = manifest_of(&b_url);
    assert!(!after.entries.contains_key(&new_part) && !after.entries.contains_key(&listed));
    assert_eq!(after.collected.len(), 2, "the records are carried");
    // past tombstone_ttl the records lapse, and the format is 1 again
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let short = SyncConfig {
        tombstone_ttl: std::time::Duration::from_secs(1),
        ..cfg()
    };
    a.accept(&a.changes("c.csv", T2, T3, &change(5, T3)));
    push(&url(&a), &b_url, &short).unwrap();
    let lapsed = manifest_of(&b_url);
    assert!(lapsed.collected.is_empty());
    assert_eq!(lapsed.format, 1);
}

#[test]
fn a_chain_question_is_answered_by_the_heads_valid_index_and_otherwise_by_the_walk() {
    // rule: store.merge.collected-index
    let mut a = Fx::new("sync-chain-index");
    a.accept(&a.full("a.csv", T1, &base()));
    for (i, (from, to)) in [(T1, T2), (T2, T3), (T3, T4)].into_iter().enumerate() {
        a.accept(&a.changes(&format!("c{i}.csv"), from, to, &change(10 + i as i64, to)));
    }
    let lake = a.r.backend();
    let root = lake.root().clone();
    let dir = std::path::PathBuf::from(url(&a).trim_start_matches("file://"));
    let mut chain = vec![lake.head("orders").unwrap().unwrap()];
    while let Some(p) = lake.snapshot(chain.last().unwrap()).unwrap().parent {
        chain.push(p);
    }
    assert_eq!(chain.len(), 4);
    let (head, middle, first) = (&chain[0], &chain[2], &chain[3]);
    let index = lake.snapshot(head).unwrap().folded_runs.unwrap();
    let reaches = |t: &str| dogana_lake::sync::chain_reaches(&root, Some(head), t).unwrap();
    // a middle manifest gone: the walk could not pass it, the head's index answers
    let middle_bytes = std::fs::read(dir.join(middle)).unwrap();
    std::fs::remove_file(dir.join(middle)).unwrap();
    assert!(reaches(first), "the index names the first snapshot's run");
    // indexes that do not validate are not trusted: the walk stops at the gap
    let segments: Vec<(std::path::PathBuf, Vec<u8>)> = root
        .list("tables/orders/runs/")
        .unwrap()
        .into_iter()
        .map(|k| (dir.join(&k), std::fs::read(dir.join(&k)).unwrap()))
        .collect();
    assert!(segments.len() >= index.segments.len());
    for (path, _) in &segments {
        std::fs::write(path, b"not a segment").unwrap();
    }
    assert!(
        !reaches(first),
        "no valid index, and the walk meets a missing snapshot"
    );
    // with the chain whole again, the walk alone reaches it
    std::fs::write(dir.join(middle), &middle_bytes).unwrap();
    assert!(reaches(first));
    for (path, bytes) in &segments {
        std::fs::write(path, bytes).unwrap();
    }
    // a snapshot that published a run the valid index does not list is off the chain
    let mut forked = lake.snapshot(first).unwrap();
    forked.parent = None;
    let fork_key = "tables/orders/snapshots/forked.json";
    std::fs::write(dir.join(fork_key), serde_json::to_vec(&forked).unwrap()).unwrap();
    assert!(!reaches(fork_key));
}

#[test]
fn the_machine_catalog_is_never_pushed_and_a_pull_keeps_it() {
    // rule: store.lay-out.machine-catalog
    use dogana_lake::sync::MACHINE_CATALOG;
    let mut a = Fx::new("sync-machine-catalog");
    a.accept(&a.full("a.csv", T1, &base()));
    let dir = std::path::PathBuf::from(url(&a).trim_start_matches("file://"));
    let files = [
        (
            MACHINE_CATALOG.to_owned(),
            b"SQLite format 3\0 node a".to_vec(),
        ),
        (format!("{MACHINE_CATALOG}-wal"), b"wal of node a".to_vec()),
    ];
    for (name, bytes) in &files {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    let (bucket, b_url) = pushed(&a);
    let listed = manifest_of(&b_url);
    assert!(
        listed
            .entries
            .keys()
            .all(|k| !k.starts_with(MACHINE_CATALOG)),
        "{:?}",
        listed.entries.keys().collect::<Vec<_>>()
    );
    assert!(!bucket.path().join(MACHINE_CATALOG).exists());
    // a machine with its own catalog pulls into its directory: the catalog stays as it was
    let c = tempfile::tempdir().unwrap();
    let own = b"SQLite format 3\0 node c".to_vec();
    std::fs::write(c.path().join(MACHINE_CATALOG), &own).unwrap();
    pull(&dir_url(c.path()), &b_url, &PullOptions::default()).unwrap();
    assert_eq!(std::fs::read(c.path().join(MACHINE_CATALOG)).unwrap(), own);
    assert_eq!(
        reader(c.path(), "sync-machine-catalog-c")
            .r
            .receipts("orders")
            .unwrap()
            .len(),
        1
    );
    // and again, after the node delivered and pushed once more
    a.accept(&a.changes("b.csv", T1, T2, &change(4, T2)));
    push(&url(&a), &b_url, &cfg()).unwrap();
    pull(&dir_url(c.path()), &b_url, &PullOptions::default()).unwrap();
    assert_eq!(std::fs::read(c.path().join(MACHINE_CATALOG)).unwrap(), own);
    assert!(!c.path().join(format!("{MACHINE_CATALOG}-wal")).exists());
}

#[test]
fn a_delivery_whose_snapshot_was_collected_replays_from_its_receipt_and_writes_nothing() {
    // rule: store.lay-out.run-folded-replay, store.lay-out.run-digest, store.lay-out.folded-committed
    let mut a = Fx::new("sync-replay");
    let first = a.full("a.csv", T1, &base());
    let accepted = a.accept(&first);
    a.accept(&a.full("b.csv", T2, &base()));
    a.accept(&a.full("c.csv", T3, &base()));
    a.r.backend_mut().collect("orders", 1).unwrap();
    // pushed and pulled, the collected delivery is on another node as its receipt alone
    let (_bucket, b_url) = pushed(&a);
    let c = tempfile::tempdir().unwrap();
    pull(&dir_url(c.path()), &b_url, &PullOptions::default()).unwrap();
    let mut node = node_at(c.path(), "sync-replay-b");
    let before: Vec<String> = Root::open(&dir_url(c.path())).unwrap().list("").unwrap();
    // the same file again: its manifest's identity (the digest of its bytes, shape and
    // position; not the instant it arrives) finds the receipt, and nothing is written
    let mut again = first.clone();
    again.now = dogana_receiver::conformance::ts("2026-10-20T00:00:00Z");
    let d = node.deliver(&again);
    assert_eq!(d.receipt.outcome(), dogana::Outcome::Replayed);
    assert_eq!(d.receipt.publication_id(), accepted.publication_id());
    let after: Vec<String> = Root::open(&dir_url(c.path())).unwrap().list("").unwrap();
    assert_eq!(before, after, "nothing written");
    // the collected delivery still answers with its rows
    let receipts = node.r.receipts("orders").unwrap();
    assert_eq!(receipts.len(), 3);
    assert_eq!((receipts[0].seq, &receipts[0].receipt), (1, &accepted));
}

/// A node on a disposable disk at `dir`, draining into `bucket`.
fn drained(dir: &Path, bucket: &str, name: &str) -> Fx {
    std::fs::write(
        dir.join("store.toml"),
        format!("[sync]\ndrain_to = \"{bucket}\"\n"),
    )
    .unwrap();
    node_at(dir, name)
}

#[test]
fn a_drained_store_marks_each_publication_before_it_commits_and_the_next_command_pushes_it() {
    // rule: store.drain.mark, store.drain.before-read
    let bucket = tempfile::tempdir().unwrap();
    let b_url = dir_url(bucket.path());
    let disk = tempfile::tempdir().unwrap();
    let mut a = drained(disk.path(), &b_url, "sync-drain");
    a.accept(&a.full("a.csv", T1, &base()));
    let head = a.r.backend().head("orders").unwrap().unwrap();
    let marks = Root::open(&b_url).unwrap().list("drain/").unwrap();
    assert_eq!(marks.len(), 1, "{marks:?}");
    assert!(
        marks[0].ends_with(head.rsplit('/').next().unwrap()),
        "{marks:?}"
    );
    // the next command on the store pushes first: the bucket head is ours, the mark gone
    let next = Lake::open(disk.path(), &LakeOptions::default(), false).unwrap();
    assert_eq!(next.head("orders").unwrap().as_deref(), Some(head.as_str()));
    let bucket_lake = Lake::open(bucket.path(), &LakeOptions::default(), false).unwrap();
    assert_eq!(bucket_lake.head("orders").unwrap(), Some(head.clone()));
    assert!(Root::open(&b_url)
        .unwrap()
        .list("drain/")
        .unwrap()
        .is_empty());
    check_bucket(&b_url);
    // a push that cannot happen stops the next command, naming the publication
    let mut a = drained(disk.path(), &b_url, "sync-drain-2");
    a.accept(&a.changes("b.csv", T1, T2, &change(4, T2)));
    let second = a.r.backend().head("orders").unwrap().unwrap();
    let root = Root::open(&b_url).unwrap();
    let v = root.get_versioned(MANIFEST).unwrap().unwrap();
    root.put_versioned(MANIFEST, bytes::Bytes::from_static(b"{"), Some(&v.version))
        .unwrap()
        .unwrap();
    let e = Lake::open(disk.path(), &LakeOptions::default(), false).unwrap_err();
    match LakeError::of(&e) {
        Some(LakeError::DrainUnpushed { deliveries, .. }) => {
            assert_eq!(deliveries, &vec![format!("orders {second}")])
        }
        other => panic!("{other:?}: {e}"),
    }
}

#[test]
fn marks_whose_publications_left_with_the_disk_stop_every_command_until_forgotten() {
    // rule: store.drain.before-read
    let bucket = tempfile::tempdir().unwrap();
    let b_url = dir_url(bucket.path());
    let disk = tempfile::tempdir().unwrap();
    let mut a = drained(disk.path(), &b_url, "sync-lost");
    a.accept(&a.full("a.csv", T1, &base()));
    drop(Lake::open(disk.path(), &LakeOptions::default(), false).unwrap()); // pushed
    a.accept(&a.changes("b.csv", T1, T2, &change(4, T2)));
    let lost = a.r.backend().head("orders").unwrap().unwrap();
    // the disk is replaced: a new one with the node's identity and the bucket's state
    let fresh = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(fresh.path().join(".sync")).unwrap();
    std::fs::copy(
        disk.path().join(".sync/node.json"),
        fresh.path().join(".sync/node.json"),
    )
    .unwrap();
    pull(&dir_url(fresh.path()), &b_url, &PullOptions::default()).unwrap();
    std::fs::copy(
        disk.path().join("store.toml"),
        fresh.path().join("store.toml"),
    )
    .unwrap();
    let e = Lake::open(fresh.path(), &LakeOptions::default(), false).unwrap_err();
    match LakeError::of(&e) {
        Some(LakeError::DrainLost { deliveries, .. }) => {
            assert_eq!(deliveries, &vec![format!("orders {lost}")])
        }
        other => panic!("{other:?}: {e}"),
    }
    assert!(e.to_string().contains("--forget-lost"));
    let gone = dogana_lake::sync::drain::forget_lost(&dir_url(fresh.path())).unwrap();
    assert_eq!(gone.len(), 1);
    Lake::open(fresh.path(), &LakeOptions::default(), false).unwrap();
}

#[test]
fn concurrent_probes_in_one_directory_never_fail() {
    // rule: topology.coordinate.primitive — every push probes its bucket; on file:// the
    // probes of several nodes create and remove keys in one directory at once (a race there
    // once made a push fail with "File exists")
    let bucket = tempfile::tempdir().unwrap();
    let b_url = dir_url(bucket.path());
    // two writers, each making and removing its own key: the directory is empty between
    // them as often as possible
    let threads: Vec<_> = (0..2)
        .map(|n| {
            let b_url = b_url.clone();
            std::thread::spawn(move || {
                let root = Root::open(&b_url).unwrap();
                for i in 0..3000 {
                    let key = format!("_probe/{n}-{i}");
                    root.put_versioned(&key, bytes::Bytes::from_static(b"1"), None)
                        .unwrap_or_else(|e| panic!("thread {n}, round {i}: {e}"))
                        .expect("a new key");
                    root.delete_versioned(&key).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn a_table_gone_from_the_node_is_no_deletion_of_its_objects() {
    // rule: store.merge.scoped-union — a node tombstones what it deleted, not what it lost
    let bucket = tempfile::tempdir().unwrap();
    let b_url = dir_url(bucket.path());
    let mut a = Fx::new("sync-gone");
    a.accept(&a.full("a.csv", T1, &base()));
    push(&url(&a), &b_url, &cfg()).unwrap();
    let dir = a.r.backend().root().local_dir().unwrap().to_owned();
    let before = manifest_of(&b_url).entries;
    std::fs::remove_dir_all(dir.join("tables/orders")).unwrap();
    let r = push(&url(&a), &b_url, &cfg()).unwrap();
    assert!(r.tombstoned.is_empty(), "{:?}", r.tombstoned);
    assert_eq!(manifest_of(&b_url).entries, before);
}

#[test]
fn a_collection_in_the_bucket_records_every_key_it_deletes_before_deleting_any() {
    // rule: store.collect.folded-runs, store.collect.drop-first, store.push.collected
    let bucket = tempfile::tempdir().unwrap();
    let b_url = dir_url(bucket.path());
    let mut a = Fx::new("sync-bucket-collect");
    a.accept(&a.full("a.csv", T1, &base()));
    a.accept(&a.full("b.csv", T2, &base()));
    a.accept(&a.full("c.csv", T3, &base()));
    push(&url(&a), &b_url, &cfg()).unwrap();
    let before = manifest_of(&b_url);
    let mut lake = Lake::open(bucket.path(), &LakeOptions::default(), true).unwrap();
    let r = lake.collect("orders", 1).unwrap();
    assert!(r.deleted > 0);
    let m = manifest_of(&b_url);
    assert_eq!(m.format, 2, "a manifest holding collected records");
    assert!(m.generation > before.generation);
    let collected: Vec<&str> = m.collected.iter().map(|c| c.key.as_str()).collect();
    let gone: Vec<&String> = before
        .entries
        .keys()
        .filter(|k| !bucket.path().join(k).exists())
        .collect();
    assert!(!gone.is_empty());
    for k in &gone {
        assert!(collected.contains(&k.as_str()), "{k} recorded");
        assert!(!m.entries.contains_key(*k), "{k} no longer listed");
    }
    check_bucket(&b_url);
    // the node still holds those parts: its next push lists none of them again
    let again = push(&url(&a), &b_url, &cfg()).unwrap();
    assert!(
        again.uploaded.iter().all(|k| !gone.contains(&k)),
        "{:?}",
        again.uploaded
    );
    let m = manifest_of(&b_url);
    for k in &gone {
        assert!(!m.entries.contains_key(*k));
    }
}

#[test]
fn a_lazy_read_of_a_part_the_bucket_collected_is_refused_as_part_collected() {
    // rule: store.pull.folded-run-collected
    let bucket = tempfile::tempdir().unwrap();
    let b_url = dir_url(bucket.path());
    let mut a = Fx::new("sync-lazy-collected");
    a.accept(&a.full("a.csv", T1, &base()));
    a.accept(&a.full("b.csv", T2, &base()));
    push(&url(&a), &b_url, &cfg()).unwrap();
    let c = tempfile::tempdir().unwrap();
    lazy_pull(c.path(), &b_url);
    let lazy = Lake::open(c.path(), &LakeOptions::default(), false).unwrap();
    let head = lazy.head("orders").unwrap().unwrap();
    let older = lazy.snapshot(&head).unwrap().parent.unwrap();
    Lake::open(bucket.path(), &LakeOptions::default(), true)
        .unwrap()
        .collect("orders", 1)
        .unwrap();
    // the head reads; the older snapshot's part is gone from the bucket, and says so
    assert_eq!(lazy.snapshot_rows(&head).unwrap().len(), 3);
    let e = lazy.snapshot_rows(&older).unwrap_err();
    assert!(
        matches!(LakeError::of(&e), Some(LakeError::PartCollected { .. })),
        "{e}"
    );
}
