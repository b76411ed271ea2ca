//! What a delivery costs outside its rows on the lake, against SHA-256 of the ledger it
//! leaves (issue 16; bench/lake.md, "Per delivery, outside the rows"); the workload is
//! `dogana_receiver::overhead`'s, as in `dogana-sqlite`'s example of the same name.
//!
//! `overhead_bench N [ROUNDS]`: a lake in a fresh local directory (`file://`) whose `orders`
//! ledger holds N disjoint one-day windows (N + 2 regions), then ROUNDS deliveries (15 unless
//! told) of a one-row window for the next day, each alternating with SHA-256 of the document
//! of the ledger it left. Prints the medians and the median of the ratios.
use dogana_lake::{Lake, LakeOptions};
use dogana_receiver::{Open, Store};

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().expect("N").parse().expect("a number");
    let rounds: usize = args.next().map_or(15, |r| r.parse().expect("a number"));
    let dir = std::env::temp_dir().join(format!("dogana-lake-overhead-{n}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory");
    let lake = Lake::open(&dir.join("lake"), &LakeOptions::default(), true).expect("opens");
    let mut store = Store::new(lake);
    println!(
        "{}",
        dogana_receiver::overhead::run(&mut store, n, rounds, &dir)
    );
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}
