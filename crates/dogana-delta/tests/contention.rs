//! Writers racing for one Delta table's next versions: every delivery ends as exactly one
//! Delta version, no receipt is lost, and the table verifies. On `file://` always (8 writers
//! x 10 deliveries); on an S3 server when scripts/test-lake.sh names one
//! (`DOGANA_LAKE_S3_URL`, the `#[ignore]`d test; `DOGANA_DELTA_CONTENTION=WxR`, default 16x50,
//! which took 670 s on moto on 2026-12-06; scripts/test-lake.sh runs 16x10).
//!
//! rule: RECV-10, RECV-11, RECV-12

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use dogana::{Manifest, Window, Wire};
use dogana_delta::Delta;
use dogana_receiver::conformance::{date, orders, orders_csv, ts, Order};
use dogana_receiver::Store;

/// Delivery `i`: one order of day 2026-10-(i mod 28 + 1), produced `i` seconds after 08:00.
fn delivery(dir: &Path, i: u64) -> (PathBuf, Manifest) {
    let day = format!("2026-10-{:02}", i % 28 + 1);
    let updated = format!("{day}T10:00:00Z");
    let rows: Vec<Order<'_>> = vec![(i as i64, &day, &updated, "1.00", false)];
    let file = dir.join(format!("d{i}.csv"));
    std::fs::write(&file, orders_csv(&rows)).expect("writes");
    let at = ts("2026-10-27T08:00:00Z").as_micros() + i as i64 * 1_000_000;
    let m = orders()
        .manifest(
            "window",
            dogana::Timestamp::from_micros(at).expect("an instant"),
        )
        .window(Window::new(date(&day), date(&day)))
        .rows(1)
        .build()
        .expect("a manifest");
    (file, m)
}

fn race(url: &str, writers: u64, rounds: u64) {
    let dir = std::env::temp_dir().join(format!(
        "dogana-delta-contention-{}-{}",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ));
    std::fs::create_dir_all(&dir).expect("a folder");
    let first = Delta::open_url(url, true).unwrap_or_else(|e| panic!("{url}: {e}"));
    let threads: Vec<_> = (0..writers)
        .map(|w| {
            let backend = first.reopen().expect("a handle");
            let dir = dir.clone();
            std::thread::spawn(move || {
                let mut store = Store::new(backend);
                let mut redecided = 0;
                for r in 0..rounds {
                    let (file, m) = delivery(&dir, w * rounds + r);
                    let d = store
                        .deliver(&file, &orders(), &m, ts("2026-10-28T00:00:00Z"), None)
                        .expect("delivers");
                    redecided += d.redecided;
                }
                redecided
            })
        })
        .collect();
    let redecided: u32 = threads
        .into_iter()
        .map(|t| t.join().expect("a writer"))
        .sum();
    eprintln!("{writers} x {rounds}: {redecided} decisions made again");
    let mut store = Store::new(first);
    let receipts = store.receipts("orders").expect("reads");
    assert_eq!(
        receipts.len() as u64,
        writers * rounds,
        "a receipt was lost"
    );
    let seqs: HashSet<i64> = receipts.iter().map(|r| r.seq).collect();
    assert_eq!(seqs.len() as u64, writers * rounds);
    assert!(store.verify("orders").expect("verifies").ok());
    // one version per delivery (version 0 holds the first)
    let mut b = store.backend().reopen().expect("a handle");
    assert_eq!(
        b.version("orders").expect("reads"),
        Some(writers * rounds - 1),
        "not one Delta version per delivery"
    );
    let identities: HashSet<String> = receipts.iter().map(|r| r.receipt.identity()).collect();
    assert_eq!(
        identities.len() as u64,
        writers * rounds,
        "two versions named one receipt"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn writers_on_a_folder_each_commit_one_version_per_delivery() {
    let dir = std::env::temp_dir().join(format!("dogana-delta-race-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    race(&format!("delta+file://{}", dir.display()), 8, 10);
    let versions = std::fs::read_dir(dir.join("orders").join("_delta_log"))
        .expect("a log")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".json"))
        })
        .count();
    assert_eq!(versions, 80, "one Delta version per delivery");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs an S3 server: scripts/test-lake.sh"]
fn writers_on_an_s3_server_each_commit_one_version_per_delivery() {
    let base =
        std::env::var("DOGANA_LAKE_S3_URL").expect("DOGANA_LAKE_S3_URL (scripts/test-lake.sh)");
    let (w, r) = match std::env::var("DOGANA_DELTA_CONTENTION") {
        Ok(spec) => {
            let (w, r) = spec.split_once('x').expect("WRITERSxROUNDS");
            (w.parse().expect("writers"), r.parse().expect("rounds"))
        }
        Err(_) => (16, 50),
    };
    race(
        &format!(
            "delta+{}/race-{}",
            base.trim_end_matches('/'),
            uuid::Uuid::new_v4().simple()
        ),
        w,
        r,
    );
}
