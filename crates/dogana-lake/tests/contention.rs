//! Real compare-and-swap under contention, and a writer stopped past its lease, on
//! `file://` always and on an S3-compatible server and Azurite when scripts/test-lake.sh
//! names them (`DOGANA_LAKE_S3_URL`, `DOGANA_LAKE_AZ_URL`; the `#[ignore]`d tests).

use std::collections::HashSet;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use dogana_lake::layout::{pointer_key, Pointer, SnapshotManifest};
use dogana_lake::objects::Root;
use dogana_lake::{Lake, LakeError, LakeOptions};
use dogana_receiver::{Backend, Open, Txn};

/// Writers and rounds on `file://`: 16 x 50.
const FILE: (usize, u64) = (16, 50);
/// On a server, each round is several requests: 8 writers x 20 raw increments, 8 x 10
/// publications keep the run to a minute or two a server on 2 cores.
const SERVER_CAS: (usize, u64) = (8, 20);
const SERVER_PUBLISH: (usize, u64) = (8, 10);

/// `DOGANA_LAKE_SERVER_CONTENTION=WxR` (e.g. `16x50`, the brief's size) sets writers and
/// rounds of both server runs instead.
fn on_server(default: (usize, u64)) -> (usize, u64) {
    let Ok(spec) = std::env::var("DOGANA_LAKE_SERVER_CONTENTION") else {
        return default;
    };
    let (w, r) = spec
        .split_once('x')
        .unwrap_or_else(|| panic!("DOGANA_LAKE_SERVER_CONTENTION={spec:?}: WRITERSxROUNDS"));
    (
        w.parse().expect("writers: a number"),
        r.parse().expect("rounds: a number"),
    )
}

fn fresh(base: &str) -> String {
    format!(
        "{}/run-{}",
        base.trim_end_matches('/'),
        uuid::Uuid::new_v4().simple()
    )
}

fn open(url: &str, ttl_ms: u64) -> Lake {
    let o = LakeOptions {
        lease_ttl: Duration::from_millis(ttl_ms),
        lock_wait: Duration::from_secs(300),
        ..LakeOptions::default()
    };
    Lake::open(Path::new(url), &o, true).unwrap_or_else(|e| panic!("{url}: {e}"))
}

/// `writers` threads each win `rounds` increments of one object by the storage's conditional
/// replace.
fn raw_cas(url: &str, (writers, rounds): (usize, u64)) {
    let root = Arc::new(Root::open(url).unwrap());
    let threads: Vec<_> = (0..writers)
        .map(|_| {
            let root = root.reopen().unwrap();
            std::thread::spawn(move || {
                let mut won = 0;
                while won < rounds {
                    let cur = root.get_versioned("counter").unwrap();
                    let (n, expect) = match &cur {
                        None => (0u64, None),
                        Some(v) => (
                            std::str::from_utf8(&v.bytes).unwrap().parse().unwrap(),
                            Some(&v.version),
                        ),
                    };
                    let next = Bytes::from((n + 1).to_string());
                    if root
                        .put_versioned("counter", next, expect)
                        .unwrap()
                        .is_some()
                    {
                        won += 1;
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let v = root.get_versioned("counter").unwrap().unwrap();
    assert_eq!(
        std::str::from_utf8(&v.bytes).unwrap(),
        (writers as u64 * rounds).to_string(),
        "a lost update: the storage's conditional replace is not atomic"
    );
}

/// `writers` writers publish `rounds` times each through the lease; the snapshots form one
/// chain, every head with exactly one child.
fn publications(url: &str, (writers, rounds): (usize, u64)) {
    let first = open(url, 60_000);
    let threads: Vec<_> = (0..writers)
        .map(|_| {
            let mut lake = first.try_clone().unwrap();
            std::thread::spawn(move || {
                for _ in 0..rounds {
                    lake.begin(Txn::Write, &["c"]).unwrap();
                    let n: u64 = lake.ledger("c").unwrap().map_or(0, |s| s.parse().unwrap());
                    lake.save_ledger("c", &(n + 1).to_string()).unwrap();
                    lake.commit().unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let root = first.root();
    let p: Pointer = serde_json::from_slice(
        &root
            .get_versioned(&pointer_key("c"))
            .unwrap()
            .unwrap()
            .bytes,
    )
    .unwrap();
    let mut at = p.snapshot;
    let mut chain = HashSet::new();
    let mut value = None;
    while let Some(key) = at {
        let s: SnapshotManifest =
            serde_json::from_slice(&root.get(&key).unwrap().unwrap()).unwrap();
        value.get_or_insert(s.ledger.clone());
        assert!(chain.insert(key), "a cycle");
        at = s.parent;
    }
    let total = writers as u64 * rounds;
    assert_eq!(value.flatten(), Some(total.to_string()));
    assert_eq!(chain.len() as u64, total, "one snapshot per publication");
    let written: HashSet<String> = root
        .list("tables/c/snapshots/")
        .unwrap()
        .into_iter()
        .collect();
    assert_eq!(written, chain, "no snapshot was written beside the chain");
}

const STOP_CHILD: &str = "DOGANA_LAKE_STOP_CHILD";

/// The stopped writer: takes the lease (1 s), says so, waits for `go`, commits; exits 0 only
/// when the commit is LeaseFenced.
#[test]
fn stop_child() {
    let Ok(spec) = std::env::var(STOP_CHILD) else {
        return;
    };
    let (url, flags) = spec.split_once('|').unwrap();
    let flags = Path::new(flags);
    let mut lake = open(url, 1_000);
    lake.begin(Txn::Write, &["t"]).unwrap();
    lake.save_ledger("t", "child").unwrap();
    std::fs::write(flags.join("ready"), "").unwrap();
    while !flags.join("go").exists() {
        std::thread::sleep(Duration::from_millis(5));
    }
    match lake.commit() {
        Err(e) if matches!(LakeError::of(&e), Some(LakeError::LeaseFenced { .. })) => {}
        other => panic!("the stopped writer was not fenced: {other:?}"),
    }
}

fn sigstop(url: &str) {
    // rule: store.lease.stale-fence, topology.coordinate.fenced-commit
    let flags = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "stop_child",
            "--nocapture",
            "--test-threads=1",
            "--include-ignored",
        ])
        .env(STOP_CHILD, format!("{url}|{}", flags.path().display()))
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !flags.path().join("ready").exists() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the child never took the lease"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let pid = child.id().to_string();
    assert!(Command::new("kill")
        .args(["-STOP", &pid])
        .status()
        .unwrap()
        .success());
    std::thread::sleep(Duration::from_millis(1_300)); // past the child's lease
    let mut lake = open(url, 60_000);
    lake.begin(Txn::Write, &["t"]).unwrap();
    lake.save_ledger("t", "successor").unwrap();
    lake.commit().unwrap();
    std::fs::write(flags.path().join("go"), "").unwrap();
    assert!(Command::new("kill")
        .args(["-CONT", &pid])
        .status()
        .unwrap()
        .success());
    assert!(
        child.wait().unwrap().success(),
        "the child's commit was not LeaseFenced"
    );
    lake.begin(Txn::Read, &["t"]).unwrap();
    assert_eq!(lake.ledger("t").unwrap().as_deref(), Some("successor"));
    lake.rollback();
}

fn file_url() -> (tempfile::TempDir, String) {
    let d = tempfile::tempdir().unwrap();
    let url = format!("file://{}", d.path().display());
    (d, url)
}

#[test]
fn file_cas_under_contention() {
    // rule: store.fold.pointer-commit, topology.coordinate.primitive
    let (_d, url) = file_url();
    raw_cas(&url, FILE);
}

#[test]
fn file_one_publication_per_head() {
    // rule: store.fold.pointer-commit, store.lease.acquire, store.lease.pointer-fence
    let (_d, url) = file_url();
    publications(&url, FILE);
}

#[test]
fn file_sigstopped_writer_is_fenced() {
    let (_d, url) = file_url();
    sigstop(&url);
}

fn env_url(name: &str) -> String {
    std::env::var(name)
        .unwrap_or_else(|_| panic!("{name} names the server's root (scripts/test-lake.sh)"))
}

#[test]
#[ignore = "needs an S3-compatible server: scripts/test-lake.sh"]
fn s3_cas_under_contention() {
    // rule: store.fold.pointer-commit, topology.coordinate.primitive
    raw_cas(
        &fresh(&env_url("DOGANA_LAKE_S3_URL")),
        on_server(SERVER_CAS),
    );
}

#[test]
#[ignore = "needs an S3-compatible server: scripts/test-lake.sh"]
fn s3_one_publication_per_head() {
    // rule: store.fold.pointer-commit, store.lease.acquire, store.lease.pointer-fence
    publications(
        &fresh(&env_url("DOGANA_LAKE_S3_URL")),
        on_server(SERVER_PUBLISH),
    );
}

#[test]
#[ignore = "needs an S3-compatible server: scripts/test-lake.sh"]
fn s3_sigstopped_writer_is_fenced() {
    sigstop(&fresh(&env_url("DOGANA_LAKE_S3_URL")));
}

#[test]
#[ignore = "needs Azurite: scripts/test-lake.sh"]
fn azure_cas_under_contention() {
    // rule: store.fold.pointer-commit, topology.coordinate.primitive
    raw_cas(
        &fresh(&env_url("DOGANA_LAKE_AZ_URL")),
        on_server(SERVER_CAS),
    );
}

#[test]
#[ignore = "needs Azurite: scripts/test-lake.sh"]
fn azure_one_publication_per_head() {
    // rule: store.fold.pointer-commit, store.lease.acquire, store.lease.pointer-fence
    publications(
        &fresh(&env_url("DOGANA_LAKE_AZ_URL")),
        on_server(SERVER_PUBLISH),
    );
}

#[test]
#[ignore = "needs Azurite: scripts/test-lake.sh"]
fn azure_sigstopped_writer_is_fenced() {
    sigstop(&fresh(&env_url("DOGANA_LAKE_AZ_URL")));
}
