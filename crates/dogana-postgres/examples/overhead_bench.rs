//! What a delivery costs outside its rows on Postgres, against SHA-256 of the ledger it leaves
//! (issue 16; bench/postgres.md, "Per delivery, outside the rows"). The Postgres version of
//! `dogana-sqlite`'s example of the same name.
//!
//! `overhead_bench N [ROUNDS]` (needs `DOGANA_PG_URL`: `scripts/postgres.sh start`): a store in
//! a fresh schema `dogana_overhead_N` whose `orders` ledger holds N disjoint one-day windows
//! (N + 2 regions), then ROUNDS deliveries of a one-row window for the next day, each timed
//! from `deliver_with` to its return (replay lookup, ledger load, staging the row, checks,
//! `Gate::evaluate`, the write transaction re-reading the head, follow, save of ledger and
//! receipt, COMMIT). Alternating with each delivery: SHA-256 of the canonical document of the
//! ledger it leaves, the reference. Prints the medians and the median of the ratios;
//! the schema is dropped at the end.
use std::time::Instant;

use dogana::{Contract, Date, FromWire, Ledger, LogicalType, Shape, Timestamp, Window, Wire};
use dogana_postgres::postgres::{Client, NoTls};
use dogana_postgres::{DeliverOptions, Postgres, PostgresOptions, Store};
use dogana_receiver::{Backend, Txn};
use sha2::{Digest, Sha256};

fn contract() -> Contract {
    Contract::builder("orders", ["id"])
        .shape("daily", Shape::window())
        .window_column("order_date")
        .column("id", LogicalType::Int)
        .column("order_date", LogicalType::Date)
        .build()
        .expect("a valid contract")
}

fn day(i: usize) -> Date {
    Date::from_ymd(2000, 1, 1)
        .expect("a date")
        .checked_add_days(i as i64)
        .expect("in the date domain")
}

fn at(i: usize) -> Timestamp {
    let t0: Timestamp = "2026-01-01T00:00:00Z".parse().expect("a datetime");
    Timestamp::from_micros(t0.as_micros() + i as i64 * 1_000_000).expect("in the domain")
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().expect("N").parse().expect("a number");
    let rounds: usize = args.next().map_or(15, |r| r.parse().expect("a number"));
    let url = std::env::var("DOGANA_PG_URL")
        .expect("DOGANA_PG_URL: start a server with `eval \"$(bash scripts/postgres.sh start)\"`");
    let schema = format!("dogana_overhead_{n}");
    let mut admin = Client::connect(&url, NoTls).expect("the server");
    admin
        .batch_execute(&format!(
            "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
        ))
        .expect("a schema");
    let sep = if url.contains('?') { '&' } else { '?' };
    let store_url = format!("{url}{sep}schema={schema}");
    let c = contract();
    let dir = std::env::temp_dir().join(format!("dogana-pg-overhead-{n}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory");
    let deliver = |store: &mut Store, i: usize| {
        let file = dir.join("one.csv");
        std::fs::write(&file, format!("id,order_date\n{i},{}\n", day(i))).expect("writes");
        let m = c
            .manifest("daily", at(i))
            .window(Window::new(day(i), day(i)))
            .rows(1)
            .build()
            .expect("a manifest");
        let d = store
            .deliver_with(&file, &c, &m, at(i + 1), None, &DeliverOptions::new())
            .expect("delivers");
        assert!(d.receipt.accepted(), "{:?}", d.receipt);
    };
    let mut store = Store::new(
        Postgres::connect(&store_url, &PostgresOptions::default(), true).expect("connects"),
    );
    // the table and its first receipt, then the ledger of n windows saved in its place
    deliver(&mut store, 0);
    let mut ledger = Ledger::new(c.clone());
    for i in 0..n {
        let m = c
            .manifest("daily", at(i))
            .window(Window::new(day(i), day(i)))
            .rows(1)
            .build()
            .expect("a manifest");
        ledger = ledger.apply(&m).expect("disjoint later windows");
    }
    let b = store.backend_mut();
    b.begin(Txn::Write, &["orders"]).expect("begins");
    b.save_ledger("orders", &ledger.to_json()).expect("saves");
    b.commit().expect("commits");
    let mut ratios = Vec::new();
    let (mut hashes, mut delivers) = (Vec::new(), Vec::new());
    for r in 0..=rounds {
        let i = n + r;
        let t = Instant::now();
        deliver(&mut store, i);
        let delivered = t.elapsed().as_secs_f64();
        // the reference: the document of the ledger this delivery left, hashed
        let doc = {
            let b = store.backend_mut();
            b.begin(Txn::Read, &["orders"]).expect("begins");
            let d = b.ledger("orders").expect("reads").expect("a ledger");
            b.commit().expect("ends");
            d
        };
        assert_eq!(Ledger::from_json(&doc).expect("parses").to_json(), doc);
        let t = Instant::now();
        let digest = Sha256::digest(doc.as_bytes());
        let hashed = t.elapsed().as_secs_f64();
        std::hint::black_box(digest);
        if r == 0 {
            continue; // the first delivery reads the document saved behind the engine's back
        }
        ratios.push(delivered / hashed);
        hashes.push(hashed);
        delivers.push(delivered);
    }
    println!(
        "regions {}: delivery {:.3} ms, SHA-256 of the ledger document {:.3} ms ({} bytes), ratio median {:.2}, least-time ratio {:.2}",
        n + 2,
        median(delivers.clone()) * 1e3,
        median(hashes.clone()) * 1e3,
        ledger.to_json().len(),
        median(ratios),
        delivers.iter().copied().fold(f64::MAX, f64::min) / hashes.iter().copied().fold(f64::MAX, f64::min),
    );
    drop(store);
    admin
        .batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
        .expect("drops the schema");
    let _ = std::fs::remove_dir_all(&dir);
}
