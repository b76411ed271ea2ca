//! Lease renewal (`lease-renewed-by-holder`, docs/store-decisions.md): a transaction holding
//! a table's write lease longer than its TTL keeps it and publishes; a holder whose renewal
//! lost its condition to another writer publishes nothing (`LeaseFenced`). On `file://` and
//! `memory://`, and with the `servers` feature (scripts/test-lake.sh) on S3 (moto) and Azure
//! (Azurite), where the TTL is longer: S3's Last-Modified has a resolution of one second.

use std::path::Path;
use std::time::{Duration, Instant};

use bytes::Bytes;
use dogana_lake::layout::{pointer_key, Lease, Pointer};
use dogana_lake::{Lake, LakeError, LakeOptions};
use dogana_receiver::{Backend, Open, Txn};

fn open(url: &str, ttl: Duration, wait: Duration) -> Lake {
    let o = LakeOptions {
        lease_ttl: ttl,
        lock_wait: wait,
        ..LakeOptions::default()
    };
    Lake::open(Path::new(url), &o, true).unwrap_or_else(|e| panic!("{url}: {e}"))
}

fn pointer(lake: &Lake, table: &str) -> Pointer {
    let v = lake
        .root()
        .get_versioned(&pointer_key(table))
        .unwrap()
        .unwrap();
    serde_json::from_slice(&v.bytes).unwrap()
}

fn lake_err(e: &dogana_receiver::StoreError) -> &LakeError {
    LakeError::of(e).unwrap_or_else(|| panic!("not a lake error: {e}"))
}

/// A holder keeps its lease for 4 TTLs: every attempt of another writer meanwhile is
/// `LeaseHeld`, and its commit then publishes under its own fence.
pub fn held_past_ttl_publishes(url: &str, ttl: Duration) {
    let mut a = open(url, ttl, Duration::ZERO);
    let mut b = open(url, Duration::from_secs(60), Duration::ZERO);
    a.begin(Txn::Write, &["t"]).unwrap();
    let fence = a.held_fence("t").unwrap();
    a.save_ledger("t", "held").unwrap();
    let until = Instant::now() + ttl * 4;
    let mut tries = 0;
    while Instant::now() < until {
        std::thread::sleep(ttl / 2);
        let e = b.begin(Txn::Write, &["t"]).unwrap_err();
        assert!(
            matches!(lake_err(&e), LakeError::LeaseHeld { holder, .. } if holder == a.holder()),
            "after {tries} tries, another writer got past the renewed lease: {e}"
        );
        tries += 1;
    }
    a.commit().unwrap();
    let p = pointer(&a, "t");
    assert_eq!(
        (p.fence, p.lease),
        (fence, None),
        "published and released under the fence acquired"
    );
    b.begin(Txn::Read, &["t"]).unwrap();
    assert_eq!(b.ledger("t").unwrap().as_deref(), Some("held"));
    b.rollback();
}

/// Another writer's acquisition as the storage sees it (one conditional write raising the
/// fence, naming the successor), as after a holder paused past its lease.
fn take_over(a: &Lake, table: &str) -> Pointer {
    let root = a.root();
    let key = pointer_key(table);
    for _ in 0..100 {
        let v = root.get_versioned(&key).unwrap().unwrap();
        let p: Pointer = serde_json::from_slice(&v.bytes).unwrap();
        let next = Pointer {
            fence: p.fence + 1,
            lease: Some(Lease {
                holder: "successor".into(),
                ttl_ms: 600_000,
                renewals: 0,
            }),
            ..p
        };
        let json = Bytes::from(serde_json::to_vec(&next).unwrap());
        if root
            .put_versioned(&key, json, Some(&v.version))
            .unwrap()
            .is_some()
        {
            return next;
        }
        // the holder's renewal landed between our read and write: read again
    }
    panic!("could not take the lease over in 100 tries");
}

/// A holder whose lease another writer took: its renewal loses its condition, and its
/// commit is `LeaseFenced`, writing nothing (the successor's pointer stays as written).
pub fn taken_lease_refuses_to_publish(url: &str, ttl: Duration) {
    let mut a = open(url, ttl, Duration::ZERO);
    a.begin(Txn::Write, &["t"]).unwrap();
    let fence = a.held_fence("t").unwrap();
    a.save_ledger("t", "lost").unwrap();
    let theirs = take_over(&a, "t");
    std::thread::sleep(ttl); // three renewal periods: at least one renewal ran and lost
    let objects = a.root().list("").unwrap();
    let e = a.commit().unwrap_err();
    assert!(
        matches!(lake_err(&e), LakeError::LeaseFenced { fence: f, current, .. }
            if *f == fence && *current == fence + 1),
        "{e}"
    );
    assert_eq!(
        pointer(&a, "t"),
        theirs,
        "the successor's pointer is untouched"
    );
    assert_eq!(
        a.root().list("").unwrap(),
        objects,
        "a fenced holder writes no part, manifest or receipt"
    );
}

/// Once its renewal was lost, the holder's next port call is `LeaseFenced`: a delivery stops
/// there instead of staging on.
pub fn lost_renewal_stops_the_next_port_call(url: &str, ttl: Duration) {
    let mut a = open(url, ttl, Duration::ZERO);
    a.begin(Txn::Write, &["t"]).unwrap();
    take_over(&a, "t");
    std::thread::sleep(ttl);
    let e = a.save_ledger("t", "late").unwrap_err();
    assert!(
        matches!(lake_err(&e), LakeError::LeaseFenced { table, .. } if table == "t"),
        "{e}"
    );
    a.rollback();
}

macro_rules! renewal_tests {
    ($root:expr, $ttl:expr) => {
        #[test]
        fn a_delivery_held_past_its_ttl_is_renewed_and_publishes() {
            // rule: store.lease.held, store.lease.acquire, topology.coordinate.fenced-commit
            let (_keep, url) = $root;
            super::held_past_ttl_publishes(&url, $ttl);
        }

        #[test]
        fn a_holder_whose_renewal_lost_refuses_to_publish() {
            // rule: store.lease.stale-fence, topology.coordinate.fenced-commit
            let (_keep, url) = $root;
            super::taken_lease_refuses_to_publish(&url, $ttl);
        }

        #[test]
        fn a_lost_renewal_stops_the_next_port_call() {
            // rule: store.lease.stale-fence
            let (_keep, url) = $root;
            super::lost_renewal_stops_the_next_port_call(&url, $ttl);
        }
    };
}

fn unique() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

mod file {
    fn root() -> (tempfile::TempDir, String) {
        let d = tempfile::tempdir().unwrap();
        let url = format!("file://{}", d.path().display());
        (d, url)
    }
    renewal_tests!(root(), std::time::Duration::from_millis(300));
}

mod memory {
    renewal_tests!(
        ((), format!("memory://renewal-{}", super::unique())),
        std::time::Duration::from_millis(300)
    );
}

#[cfg(feature = "servers")]
fn server(env: &str) -> ((), String) {
    let base = std::env::var(env)
        .unwrap_or_else(|_| panic!("{env} names the server's root (scripts/test-lake.sh)"));
    (
        (),
        format!("{}/renewal-{}", base.trim_end_matches('/'), unique()),
    )
}

#[cfg(feature = "servers")]
mod s3 {
    renewal_tests!(
        super::server("DOGANA_LAKE_S3_URL"),
        std::time::Duration::from_secs(3)
    );
}

#[cfg(feature = "servers")]
mod azure {
    renewal_tests!(
        super::server("DOGANA_LAKE_AZ_URL"),
        std::time::Duration::from_secs(3)
    );
}
