//! Writes the page of a large history: `large PATH.html [RECEIPTS] [WINDOWS] [STORED_REGIONS]`,
//! by default 10,000 window receipts over 200 windows and a stored ledger of 100,000 regions
//! (which their fold is not); with STORED_REGIONS 0 the stored ledger is the fold. Prints how
//! long each part took.
#[path = "../tests/common/mod.rs"]
mod common;

use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .expect("usage: large PATH.html [RECEIPTS] [STORED_REGIONS]");
    let receipts: usize = args.next().map_or(10_000, |a| a.parse().unwrap());
    let windows: usize = args.next().map_or(200, |a| a.parse().unwrap());
    let regions: usize = args.next().map_or(100_000, |a| a.parse().unwrap());
    let start = Instant::now();
    let b = common::many(receipts, windows);
    let mut history = b.history();
    if regions > 0 {
        history.ledger = Some(common::wide(regions));
    }
    let built = start.elapsed();
    let start = Instant::now();
    let page = dogana_show::render(&[history], &common::options()).unwrap();
    let rendered = start.elapsed();
    std::fs::write(&path, &page).unwrap();
    println!(
        "{path}: {} bytes; history built in {built:.2?}, page rendered in {rendered:.2?}",
        page.len()
    );
}
