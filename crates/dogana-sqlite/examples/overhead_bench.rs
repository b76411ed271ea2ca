//! What a delivery costs outside its rows, against SHA-256 of the ledger it leaves
//! (issue 16; bench/sqlite.md, "Per delivery, outside the rows"); the workload is
//! `dogana_receiver::overhead`'s.
//!
//! `overhead_bench N [ROUNDS] [normal]`: a store whose `orders` ledger holds N disjoint one-day
//! windows (N + 2 regions), then ROUNDS deliveries (15 unless told) of a one-row window for
//! the next day, each alternating with SHA-256 of the document of the ledger it left. Prints
//! the medians and the median of the ratios. With `normal`, the store commits with
//! `synchronous = NORMAL` (no sync of the WAL per commit), to show what the delivery costs
//! without the disk's sync. With `OVERHEAD_BENCH_KEEP=PATH`, the store is kept at PATH (for
//! `dogana claims --store`).
use dogana_sqlite::{Store, StoreOptions, Synchronous};

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().expect("N").parse().expect("a number");
    let rounds: usize = args.next().map_or(15, |r| r.parse().expect("a number"));
    let sync = match args.next().as_deref() {
        None => Synchronous::Full,
        Some("normal") => Synchronous::Normal,
        Some(other) => panic!("the third argument is `normal` or nothing, not {other:?}"),
    };
    let dir = std::env::temp_dir().join(format!("dogana-overhead-{n}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory");
    let options = StoreOptions::default().synchronous(sync);
    let mut store = Store::open_with(dir.join("store.db"), options).expect("opens");
    println!(
        "{}",
        dogana_receiver::overhead::run(&mut store, n, rounds, &dir)
    );
    drop(store);
    if let Some(keep) = std::env::var_os("OVERHEAD_BENCH_KEEP") {
        std::fs::rename(dir.join("store.db"), &keep).expect("moves the store");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
