//! Writes a ledger document with N disjoint, daily windows (default 100,000), each proven at a
//! different instant, for benchmarking `dogana claims` (bench/cli.md):
//!
//! ```sh
//! cargo run --release -p dogana-cli --example gen_ledger -- /tmp/ledger-100k.json 100000
//! ```

use dogana::{Contract, Date, Duration, Ledger, LogicalType, Shape, Timestamp, Window, Wire};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_else(|| "ledger.json".into());
    let n: i64 = args.next().map_or(100_000, |s| s.parse().expect("a count"));
    let contract = Contract::builder("orders", ["id"])
        .shape("day", Shape::window().size(Duration::from_days(1).unwrap()))
        .window_column("order_date")
        .column("id", LogicalType::Int)
        .column("order_date", LogicalType::Date)
        .build()
        .unwrap();
    let first: Date = "1800-01-01".parse().unwrap();
    let base: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
    let mut ledger = Ledger::new(contract.clone());
    for i in 0..n {
        // consecutive days, each proven at its own instant, so that no two regions merge
        let day = first.checked_add_days(i).unwrap();
        let at = base
            .checked_add(Duration::from_seconds(i).unwrap())
            .unwrap();
        let m = contract
            .manifest("day", at)
            .window(Window::new(day, day))
            .rows(1)
            .build()
            .unwrap();
        ledger = ledger.apply(&m).unwrap();
    }
    std::fs::write(&path, ledger.to_json()).unwrap();
    eprintln!("{path}: {} regions", ledger.region_count());
}
