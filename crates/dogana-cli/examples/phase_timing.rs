//! Times the phases of `dogana claims` on a ledger document (bench/cli.md).
use std::time::Instant;

use dogana::{Duration, FromWire, Ledger};

fn main() {
    let path = std::env::args().nth(1).expect("a ledger document");
    let t = Instant::now();
    let bytes = std::fs::read(&path).unwrap();
    eprintln!("read      {:?}", t.elapsed());
    let t = Instant::now();
    let fast: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    eprintln!("serde     {:?} (for comparison)", t.elapsed());
    std::mem::forget(fast);
    let t = Instant::now();
    let value = dogana_json::parse(&bytes).unwrap();
    eprintln!("parse     {:?}", t.elapsed());
    let t = Instant::now();
    let ledger = Ledger::from_value(&value).unwrap();
    eprintln!("decode    {:?}", t.elapsed());
    let t = Instant::now();
    let claims = ledger
        .claims("2026-10-27T00:00:00Z".parse().unwrap(), Duration::MAX, None)
        .unwrap();
    eprintln!("claims    {:?}", t.elapsed());
    let t = Instant::now();
    let mut out = String::new();
    for r in claims.regions() {
        out.push_str(&r.to_string());
        out.push('\n');
    }
    out.push_str(&claims.summary("orders"));
    eprintln!("format    {:?} ({} bytes)", t.elapsed(), out.len());
    let t = Instant::now();
    drop((value, ledger, claims));
    eprintln!("drop      {:?}", t.elapsed());
}
