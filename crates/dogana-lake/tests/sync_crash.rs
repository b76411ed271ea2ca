//! SIGKILL at random points of a push and of a pull (`file://` local stores and bucket): a
//! child process pushes (or pulls) and is killed after a random delay spread over the second
//! half of the time a whole run takes. After each kill, the bucket manifest parses and lists
//! only objects that exist with their digests, every pointer names the old head or the new one
//! and reaches only objects that exist (with their listed digests where listed), and a push
//! (or pull) run again afterwards converges.
//!
//! `DOGANA_SYNC_KILLS` sets the kills per operation (default 100).

mod common;

use common::{copy_tree, Rng};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use dogana_lake::objects::Root;
use dogana_lake::sync::manifest::{BucketManifest, MANIFEST};
use dogana_lake::sync::{pull, push, PullOptions, SyncConfig};
use dogana_lake::{Lake, LakeOptions};
use dogana_receiver::conformance::Fixture;
use dogana_receiver::{Open, Store};

const CHILD: &str = "DOGANA_SYNC_CRASH_CHILD";

fn kills() -> usize {
    std::env::var("DOGANA_SYNC_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100)
}

fn url(p: &Path) -> String {
    format!("file://{}", p.display())
}

/// The child: pushes or pulls between the two directories the parent names.
#[test]
fn sync_crash_child() {
    let Ok(spec) = std::env::var(CHILD) else {
        return;
    };
    let mut it = spec.splitn(3, '|');
    let (op, local, bucket) = (it.next().unwrap(), it.next().unwrap(), it.next().unwrap());
    match op {
        "push" => {
            let dir = Path::new(local.strip_prefix("file://").unwrap());
            push(local, bucket, &SyncConfig::of_store(dir).unwrap()).expect("push");
        }
        "pull" => {
            pull(local, bucket, &PullOptions::default()).expect("pull");
        }
        other => panic!("no operation {other}"),
    }
}

fn spawn(op: &str, local: &Path, bucket: &Path) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "sync_crash_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, format!("{op}|{}|{}", url(local), url(bucket)))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// One run not killed, which must succeed (its stderr shown when it does not).
fn whole_run(op: &str, local: &Path, bucket: &Path) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "sync_crash_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, format!("{op}|{}|{}", url(local), url(bucket)))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{op}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn sha(b: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

/// A node's store of a full delivery and `n` single-row changes, with the node's directory.
fn node(name: &str, n: usize, from: usize) -> Fixture<Store<Lake>> {
    let mut fx = Fixture::<Store<Lake>>::new(name);
    fx.accept(&fx.full(
        "f.csv",
        "2026-10-02T00:00:00Z",
        &[(1, "2026-10-01", "2026-10-01T10:00:00Z", "1.00", false)],
    ));
    more(&mut fx, from, from + n);
    fx
}

fn more(fx: &mut Fixture<Store<Lake>>, from: usize, to: usize) {
    for d in from..to {
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
}

/// The store's head of `orders`, after asserting that everything it reaches exists (with its
/// listed digest, where the manifest `m` lists it).
fn whole_head(dir: &Path, m: Option<&BucketManifest>, what: &str) -> Option<String> {
    let lake = Lake::open(dir, &LakeOptions::default(), false).unwrap();
    let head = lake.head("orders").unwrap()?;
    let s = lake.snapshot(&head).unwrap();
    let mut keys = vec![head.clone()];
    keys.extend(s.parts.iter().map(|p| p.path.clone()));
    for k in keys {
        let b = std::fs::read(dir.join(&k))
            .unwrap_or_else(|_| panic!("{what}: {k} is named and missing"));
        if let Some(e) = m.and_then(|m| m.entries.get(&k)) {
            assert_eq!(sha(&b), e.sha256, "{what}: {k}");
        }
    }
    Some(head)
}

/// The bucket manifest lists only objects that exist with their digests.
fn listed_exist(bucket: &Path, what: &str) -> Option<BucketManifest> {
    let root = Root::open(&url(bucket)).unwrap();
    // the versioned read: on file:// the plain manifest.json is a copy a killed writer may
    // leave behind the current version
    let b = root.get_versioned(MANIFEST).unwrap()?.bytes;
    let m = BucketManifest::parse(MANIFEST, &b).unwrap();
    for (k, e) in &m.entries {
        let b =
            std::fs::read(bucket.join(k)).unwrap_or_else(|_| panic!("{what}: {k} listed, missing"));
        assert_eq!(sha(&b), e.sha256, "{what}: {k}");
    }
    Some(m)
}

fn dirs(fx: &Fixture<Store<Lake>>) -> PathBuf {
    fx.r.backend().root().local_dir().unwrap().to_path_buf()
}

#[test]
fn sigkill_during_pushes_leaves_a_bucket_that_names_only_what_exists() {
    // rule: store.push.manifest-commit, store.merge.held-record
    let mut fx = node("sync-crash-push", 3, 0);
    let local_t = dirs(&fx);
    let bucket_t = fx.dir.join("bucket-template");
    push(&url(&local_t), &url(&bucket_t), &SyncConfig::default()).unwrap();
    let old = whole_head(&bucket_t, None, "template").unwrap();
    // the node delivers more and collects: the push has parts to upload and keys to tombstone
    more(&mut fx, 3, 9);
    fx.r.backend_mut().collect("orders", 2).unwrap();
    let new = fx.r.backend().head("orders").unwrap().unwrap();
    let local_snapshot = fx.dir.join("local-template");
    copy_tree(&local_t, &local_snapshot);
    // a killed push holds the bucket table's lease this long
    std::fs::write(
        local_snapshot.join("store.toml"),
        "[sync]\nlease_ttl = \"300ms\"\n",
    )
    .unwrap();
    let (local, bucket) = (fx.dir.join("local-work"), fx.dir.join("bucket-work"));
    copy_tree(&local_snapshot, &local);
    copy_tree(&bucket_t, &bucket);
    let started = Instant::now();
    whole_run("push", &local, &bucket);
    let whole = started.elapsed();
    let mut rng = Rng::new();
    let (mut at_old, mut at_new) = (0, 0);
    let n = kills();
    for i in 0..n {
        copy_tree(&local_snapshot, &local);
        copy_tree(&bucket_t, &bucket);
        rng.kill_midway(spawn("push", &local, &bucket), whole);
        let what = format!("kill {i}");
        let m = listed_exist(&bucket, &what);
        let head = whole_head(&bucket, m.as_ref(), &what).unwrap();
        if head == old {
            at_old += 1;
        } else {
            assert_eq!(head, new, "{what}");
            at_new += 1;
        }
        // every tenth: the push run again converges, its head listed
        if i % 10 == 0 {
            let c = SyncConfig::of_store(&local).unwrap();
            let r = push(&url(&local), &url(&bucket), &c).unwrap();
            assert!(r.warnings.is_empty(), "{what}: {:?}", r.warnings);
            let m = listed_exist(&bucket, &what).unwrap();
            let head = whole_head(&bucket, Some(&m), &what).unwrap();
            assert_eq!(head, new, "{what}");
            assert!(m.entries.contains_key(&head), "{what}: the head is listed");
        }
    }
    eprintln!("{n} kills during pushes: {at_old} left the old head, {at_new} the new one");
}

#[test]
fn sigkill_during_pulls_never_points_at_missing_objects() {
    // rule: store.pull.pointer-last, store.pull.unconverged-resume
    let mut fx = node("sync-crash-pull", 2, 0);
    let origin = dirs(&fx);
    let bucket = fx.dir.join("bucket");
    push(&url(&origin), &url(&bucket), &SyncConfig::default()).unwrap();
    let local_t = fx.dir.join("local-template");
    pull(&url(&local_t), &url(&bucket), &PullOptions::default()).unwrap();
    let old = whole_head(&local_t, None, "template").unwrap();
    more(&mut fx, 2, 8);
    fx.r.backend_mut().fold("orders").unwrap();
    push(&url(&origin), &url(&bucket), &SyncConfig::default()).unwrap();
    let new = fx.r.backend().head("orders").unwrap().unwrap();
    let m = listed_exist(&bucket, "bucket").unwrap();
    let local = fx.dir.join("local-work");
    copy_tree(&local_t, &local);
    let started = Instant::now();
    whole_run("pull", &local, &bucket);
    let whole = started.elapsed();
    let mut rng = Rng::new();
    let (mut at_old, mut at_new) = (0, 0);
    let n = kills();
    for i in 0..n {
        copy_tree(&local_t, &local);
        rng.kill_midway(spawn("pull", &local, &bucket), whole);
        let what = format!("kill {i}");
        let head = whole_head(&local, Some(&m), &what).unwrap();
        if head == old {
            at_old += 1;
        } else {
            assert_eq!(head, new, "{what}");
            at_new += 1;
        }
        if i % 10 == 0 {
            let r = pull(&url(&local), &url(&bucket), &PullOptions::default()).unwrap();
            assert_eq!(
                whole_head(&local, Some(&m), &what).unwrap(),
                new,
                "{what}: {r:?}"
            );
            let mut reader = Fixture::<Store<Lake>>::new("sync-crash-reader");
            reader.r = Store::new(Lake::open(&local, &LakeOptions::default(), false).unwrap());
            reader.verify("orders");
        }
    }
    eprintln!("{n} kills during pulls: {at_old} left the old head, {at_new} the new one");
}
