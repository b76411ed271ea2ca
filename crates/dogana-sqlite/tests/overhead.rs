//! The per-delivery benchmark's workload (`dogana_receiver::overhead`, issue 16) on SQLite:
//! what it reports is measured, step by step, and its timed ledger's part leaves the store
//! as it was.

use dogana_receiver::overhead::{self, Lap};
use dogana_sqlite::Store;

#[test]
fn the_ledger_part_is_timed_step_by_step_and_rolled_back() {
    let dir = std::env::temp_dir().join(format!("dogana-sqlite-overhead-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut store = Store::open(dir.join("store.db")).unwrap();
    let rounds = 3;
    let o = overhead::run(&mut store, 20, rounds, &dir);
    assert_eq!(o.regions, 22);
    // every step was timed: a step the engine no longer reports would read zero
    for (lap, took) in Lap::ALL.iter().zip(o.laps) {
        assert!(took > 0.0, "{} was not timed: {o}", lap.name());
    }
    assert!(o.ledger_ratio.is_finite() && o.ledger_ratio > 0.0, "{o}");
    // the deliveries' receipts only: the first, then one per round and its warm-up; each timed
    // ledger's part saved a receipt and a ledger and rolled them back
    let receipts = store.receipts("orders").unwrap();
    assert_eq!(receipts.len(), 1 + rounds + 1, "{receipts:?}");
    let last = receipts.last().unwrap().receipt.publication_id().to_owned();
    let ledger = store.ledger("orders").unwrap().unwrap();
    assert_eq!(ledger.publication_id(), Some(last.as_str()));
    std::fs::remove_dir_all(&dir).unwrap();
}
