//! The benchmark of bench/rows.md: generates the issue's orders CSV and checks it.
//!
//! ```text
//! cargo run --release -p dogana-rows --example orders_bench -- gen 10000000 /tmp/orders.csv
//! cargo run --release -p dogana-rows --example orders_bench -- check /tmp/orders.csv
//! cargo run --release -p dogana-rows --example orders_bench -- sha /tmp/orders.csv
//! ```
//!
//! `gen` writes N rows `id,order_date,updated_at,amount,customer,deleted` (int, date, datetime
//! with offset, float, str, bool); one row in 100 is a tombstone. Ids are 1..=N scrambled
//! by a bijection, so they are unique and unordered. `check` runs every check (all bound
//! columns parsed, keys, window, cursor, schema hash, content hash) as a read of changes with
//! tombstones, and prints the time and the peak resident memory.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::time::Instant;

use dogana::{Contract, Deletions, LogicalType, Shape};
use dogana_rows::{check_file, Format, Options};

const COLUMNS: [(&str, &str); 5] = [
    ("id", "int"),
    ("order_date", "date"),
    ("updated_at", "datetime"),
    ("amount", "float"),
    ("customer", "str"),
];

fn contract() -> Contract {
    Contract::builder("orders", ["id"])
        .shape("full", Shape::full())
        .shape("last30", Shape::window())
        .shape("changes", Shape::changes(Deletions::Tombstone))
        .window_column("order_date")
        .cursor_column("updated_at")
        .deleted_column("deleted")
        .column("id", LogicalType::Int)
        .column("order_date", LogicalType::Date)
        .column("updated_at", LogicalType::Datetime)
        .column("deleted", LogicalType::Bool)
        .schema_hash(dogana::column_hash(&COLUMNS))
        .build()
        .expect("a valid contract")
}

/// Row `i` (0-based): (id, order date days since 2024-01-01, seconds into the day, amount
/// cents, customer, tombstone).
fn row(i: u64, n: u64) -> (u64, u64, u64, u64, u64, bool) {
    // an odd multiplier modulo a power of two above n is a bijection; reduce by cycle-walking
    let bits = 64 - n.leading_zeros();
    let mask = (1u64 << bits) - 1;
    let mut x = i;
    loop {
        // each step is a bijection on [0, 2^bits): odd multiply, xorshift, odd multiply
        x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15) & mask;
        x ^= x >> 7;
        x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9) & mask;
        if x < n {
            break;
        }
    }
    let h = i.wrapping_mul(0x2545_F491_4F6C_DD1D);
    (
        x + 1,
        i % 1000,
        h % 86_400,
        h % 1_000_000,
        h % 100_000,
        i % 100 == 99,
    )
}

fn gen(n: u64, path: &str) -> std::io::Result<()> {
    let mut out = BufWriter::with_capacity(1 << 20, File::create(path)?);
    out.write_all(b"id,order_date,updated_at,amount,customer,deleted\n")?;
    let epoch: dogana::Date = "2024-01-01".parse().expect("a date");
    for i in 0..n {
        let (id, day, secs, cents, customer, tomb) = row(i, n);
        let d = epoch.checked_add_days(day as i64).expect("in range");
        let offset = if i % 3 == 0 { "+02:00" } else { "Z" };
        writeln!(
            out,
            "{id},{d},{d}T{:02}:{:02}:{:02}{offset},{}.{:02},customer_{customer},{tomb}",
            secs / 3600,
            secs / 60 % 60,
            secs % 60,
            cents / 100,
            cents % 100,
        )?;
    }
    out.flush()
}

fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// User and system CPU seconds of this process so far (all threads), from /proc/self/stat.
fn cpu_secs() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(") ").map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the command name
    (ticks(11) + ticks(12)) / 100.0
}

/// Lines in a file, counted over 1 MiB blocks.
fn count_lines(path: &str) -> std::io::Result<u64> {
    use std::io::Read;
    let mut f = File::open(path)?;
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0u64;
    loop {
        let got = f.read(&mut buf)?;
        if got == 0 {
            return Ok(n);
        }
        n += buf[..got].iter().filter(|&&b| b == b'\n').count() as u64;
    }
}

fn check(path: &str, threads: bool, rows: Option<u64>) -> Result<(), Box<dyn std::error::Error>> {
    let c = contract();
    // what the export declares: its row count, and the hash `dogana manifest` computes
    let n = match rows {
        Some(n) => n,
        None => count_lines(path)? - 1,
    };
    let tombs = (0..n).filter(|i| i % 100 == 99).count() as u64;
    let sha = std::time::Instant::now();
    let content = match rows {
        Some(_) => "0".repeat(64),
        None => dogana_rows::sha256_file(path)?,
    };
    let sha_secs = sha.elapsed().as_secs_f64();
    let m = c
        .manifest("changes", "2030-01-01T00:00:00Z".parse()?)
        .since("2020-01-01T00:00:00Z".parse::<dogana::Timestamp>()?)
        .rows(n - tombs)
        .tombstones(tombs)
        .content_hash(content)
        .build()?;
    let options = Options::new()
        .column_type("amount", "float")
        .column_type("customer", "str")
        .hash_in_thread(threads);
    // the best of three runs (the page cache is warm after the first)
    let mut best: Option<(f64, f64, dogana_rows::RowReport)> = None;
    for _ in 0..3 {
        let (start, cpu) = (Instant::now(), cpu_secs());
        let report = check_file(path, Some(Format::Csv), &c, &m, &options)?;
        let secs = start.elapsed().as_secs_f64();
        let cpu = cpu_secs() - cpu;
        if best.as_ref().is_none_or(|(s, _, _)| secs < *s) {
            best = Some((secs, cpu, report));
        }
    }
    let (secs, cpu, report) = best.expect("three runs");
    for c in &report.checks {
        println!("{c}");
    }
    println!(
        "check_rows: {secs:.3} s wall, {cpu:.2} s CPU, for {} bytes ({:.0} MB/s), {} rows, {} keys, key set {:.1} MiB ({:.1} bytes/key), peak RSS {:.1} MiB (sha256_file alone: {sha_secs:.3} s)",
        report.bytes,
        report.bytes as f64 / secs / 1e6,
        report.records,
        report.distinct_keys,
        report.key_set_bytes as f64 / 1048576.0,
        report.key_set_bytes as f64 / report.distinct_keys.max(1) as f64,
        peak_rss_mib(),
    );
    assert!(
        report.passed() || rows.is_some(),
        "an honest delivery fails no check"
    );
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["gen", n, path] => gen(n.parse()?, path)?,
        ["check", path] => check(path, true, None)?,
        ["check1", path] => check(path, false, None)?,
        // for profiling: rows given, no hash computed beforehand (content_hash then fails)
        ["profile", path, n] => check(path, false, Some(n.parse()?))?,
        ["sha", path] => {
            let t = Instant::now();
            let h = dogana_rows::sha256_file(path)?;
            println!("{h} {:.3} s", t.elapsed().as_secs_f64());
        }
        _ => {
            eprintln!(
                "usage: orders_bench gen N PATH | check PATH | check1 PATH | profile PATH N | sha PATH"
            );
            std::process::exit(2);
        }
    }
    Ok(())
}
