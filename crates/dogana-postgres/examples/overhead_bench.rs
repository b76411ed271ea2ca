//! What a delivery costs outside its rows on Postgres, against SHA-256 of the ledger it leaves
//! (issue 16; bench/postgres.md, "Per delivery, outside the rows"); the workload is
//! `dogana_receiver::overhead`'s, as in `dogana-sqlite`'s example of the same name.
//!
//! `overhead_bench N [ROUNDS]` (needs `DOGANA_PG_URL`: `scripts/postgres.sh start`): a store in
//! a fresh schema `dogana_overhead_N` whose `orders` ledger holds N disjoint one-day windows
//! (N + 2 regions), then ROUNDS deliveries (15 unless told) of a one-row window for the next
//! day, each alternating with SHA-256 of the document of the ledger it left. Prints the medians
//! and the median of the ratios; the schema is dropped at the end.
use dogana_postgres::postgres::{Client, NoTls};
use dogana_postgres::{Postgres, PostgresOptions, Store};

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
    let dir = std::env::temp_dir().join(format!("dogana-pg-overhead-{n}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory");
    let mut store = Store::new(
        Postgres::connect(&store_url, &PostgresOptions::default(), true).expect("connects"),
    );
    println!(
        "{}",
        dogana_receiver::overhead::run(&mut store, n, rounds, &dir)
    );
    drop(store);
    admin
        .batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
        .expect("drops the schema");
    let _ = std::fs::remove_dir_all(&dir);
}
