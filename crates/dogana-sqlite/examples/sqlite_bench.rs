//! The benchmark of bench/sqlite.md: a full delivery of a generated orders CSV into a fresh
//! store, timed from `Store::open` to the end of the commit, against the `sqlite3` shell's
//! `.import` of the same file into a table with an INTEGER PRIMARY KEY.
//!
//! ```text
//! cargo run --release -p dogana-sqlite --example sqlite_bench -- gen 10000000 /tmp/orders-full.csv
//! cargo run --release -p dogana-sqlite --example sqlite_bench -- deliver /tmp/orders-full.csv /tmp/bench.db
//! cargo run --release -p dogana-sqlite --example sqlite_bench -- import /tmp/orders-full.csv /tmp/import.db
//! cargo run --release -p dogana-sqlite --example sqlite_bench -- compare /tmp/orders-full.csv /tmp
//! ```
//!
//! `gen` writes the rows of dogana-rows' `orders_bench` generator (`id,order_date,updated_at,
//! amount,customer,deleted`; ids 1..=N scrambled, so unordered; a third of the datetimes with a
//! +02:00 offset), except that every row is live: a complete read carries no tombstone.
//! `deliver` delivers it as the contract's `full` shape with every check (the schema hash
//! included, `amount` typed float, `customer` str) and prints the time and the peak resident
//! memory (VmHWM). `import` runs `sqlite3` with `.import`. `compare` runs both in alternating
//! rounds (three unless told: import, deliver, import, deliver, …), each in a child process
//! measured by `/usr/bin/time -v`, and prints each round's time and size ratios and the
//! median time ratio. With `BENCH_THEN_WINDOW` set, `deliver` then delivers a one-row window
//! of the file's first date twice and prints each time: the first builds the window index.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::process::Command;
use std::time::Instant;

use dogana::{Contract, Deletions, LogicalType, Shape, Timestamp};
use dogana_sqlite::{DeliverOptions, Store, StoreOptions};

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

/// dogana-rows' orders_bench row `i` of `n`.
fn row(i: u64, n: u64) -> (u64, u64, u64, u64, u64) {
    let bits = 64 - n.leading_zeros();
    let mask = (1u64 << bits) - 1;
    let mut x = i;
    loop {
        x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15) & mask;
        x ^= x >> 7;
        x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9) & mask;
        if x < n {
            break;
        }
    }
    let h = i.wrapping_mul(0x2545_F491_4F6C_DD1D);
    (x + 1, i % 1000, h % 86_400, h % 1_000_000, h % 100_000)
}

fn gen(n: u64, path: &str) -> std::io::Result<()> {
    let mut out = BufWriter::with_capacity(1 << 20, File::create(path)?);
    out.write_all(b"id,order_date,updated_at,amount,customer,deleted\n")?;
    let epoch: dogana::Date = "2024-01-01".parse().expect("a date");
    for i in 0..n {
        let (id, day, secs, cents, customer) = row(i, n);
        let d = epoch.checked_add_days(day as i64).expect("in range");
        let offset = if i % 3 == 0 { "+02:00" } else { "Z" };
        writeln!(
            out,
            "{id},{d},{d}T{:02}:{:02}:{:02}{offset},{}.{:02},customer_{customer},false",
            secs / 3600,
            secs / 60 % 60,
            secs % 60,
            cents / 100,
            cents % 100
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

fn remove_db(db: &str) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let _ = std::fs::remove_file(format!("{db}{suffix}"));
    }
}

fn deliver(path: &str, db: &str, window_index: bool) -> Result<(), Box<dyn std::error::Error>> {
    remove_db(db);
    let n = {
        // the sender's manifest: its count and hash come from the export, not the receiver
        // (streamed, so that the peak memory measured is the receiver's)
        use std::io::Read;
        let mut f = File::open(path)?;
        let mut buf = vec![0u8; 1 << 20];
        let mut lines = 0u64;
        loop {
            let k = f.read(&mut buf)?;
            if k == 0 {
                break;
            }
            lines += buf[..k].iter().filter(|&&b| b == b'\n').count() as u64;
        }
        (lines - 1, dogana_rows::sha256_file(path)?)
    };
    let c = contract();
    let at: Timestamp = "2026-10-26T06:00:00Z".parse()?;
    let manifest = c.manifest("full", at).rows(n.0).content_hash(n.1).build()?;
    let options = DeliverOptions::new()
        .column_type("amount", "float")
        .column_type("customer", "str");
    let started = Instant::now();
    let mut options_store = StoreOptions::new().window_index(window_index);
    if let Ok(mib) = std::env::var("BENCH_CACHE_MIB") {
        options_store = options_store.cache_mib(mib.parse()?);
    }
    if let Ok(bytes) = std::env::var("BENCH_PAGE_SIZE") {
        options_store = options_store.page_size(bytes.parse()?);
    }
    let mut store = Store::open_with(db, options_store)?;
    let decision = store.decide_with(path, &c, &manifest, at, Some("bench"), &options)?;
    let decided = started.elapsed();
    let delivery = store.commit(decision)?;
    let total = started.elapsed();
    let receipt = &delivery.receipt;
    assert!(
        receipt.accepted(),
        "{:?}",
        receipt.failures().collect::<Vec<_>>()
    );
    println!(
        "deliver: {} rows, {:.2} s (decide: checks and staging {:.2} s; commit {:.2} s); peak RSS {:.0} MiB",
        n.0,
        total.as_secs_f64(),
        decided.as_secs_f64(),
        (total - decided).as_secs_f64(),
        peak_rss_mib()
    );
    println!("SECONDS={}", total.as_secs_f64());
    if std::env::var_os("BENCH_THEN_WINDOW").is_some() {
        // the first window after the full read: one new row for the file's first date, which
        // replaces that day's rows (and builds the window index, docs/decisions.md)
        let first_date = std::io::BufRead::lines(std::io::BufReader::new(File::open(path)?))
            .nth(1)
            .ok_or("an empty file")??
            .split(',')
            .nth(1)
            .ok_or("a row without order_date")?
            .to_owned();
        let file = format!("{db}.window.csv");
        let text = format!(
            "id,order_date,updated_at,amount,customer,deleted\n{},{first_date},2026-10-26T07:00:00Z,1.00,customer_new,false\n",
            n.0 + 1
        );
        std::fs::write(&file, &text)?;
        let day: dogana::Date = first_date.parse()?;
        let at: Timestamp = "2026-10-26T07:00:00Z".parse()?;
        for round in 1..=2 {
            let started = Instant::now();
            let at = Timestamp::from_micros(at.as_micros() + round).ok_or("a time")?;
            let manifest = c
                .manifest("last30", at)
                .window(dogana::Window::new(day, day))
                .rows(1)
                .build()?;
            let delivery = store.deliver_with(&file, &c, &manifest, at, Some("bench"), &options)?;
            assert!(delivery.receipt.accepted(), "{:?}", delivery.receipt);
            println!(
                "window {round} after the full read ({first_date}): {:.2} s",
                started.elapsed().as_secs_f64()
            );
        }
        let _ = std::fs::remove_file(&file);
    }
    Ok(())
}

fn import(path: &str, db: &str) -> Result<(), Box<dyn std::error::Error>> {
    remove_db(db);
    let started = Instant::now();
    // BENCH_IMPORT_PRAGMAS: settings for the shell's connection, run before the import (for
    // example the delivery's own: "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;")
    let pragmas = std::env::var("BENCH_IMPORT_PRAGMAS").unwrap_or_default();
    let status = Command::new("sqlite3")
        .arg(db)
        .arg(format!("{pragmas} SELECT 1 WHERE 0;"))
        .arg(
            "CREATE TABLE orders (id INTEGER PRIMARY KEY, order_date TEXT, updated_at TEXT, amount REAL, customer TEXT, deleted TEXT);",
        )
        .arg(format!(".import --csv --skip 1 {path} orders"))
        .status()?;
    assert!(status.success());
    let secs = started.elapsed().as_secs_f64();
    println!("import: {secs:.2} s");
    println!("SECONDS={secs}");
    Ok(())
}

/// Runs this program with `args` under `/usr/bin/time -v`, prints what it printed and the
/// time's figures, and answers the seconds it reported (`SECONDS=`).
fn timed(args: &[&str]) -> Result<f64, Box<dyn std::error::Error>> {
    let out = Command::new("/usr/bin/time")
        .arg("-v")
        .arg(std::env::current_exe()?)
        .args(args)
        .output()?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut secs = f64::NAN;
    for l in stdout.lines() {
        match l.strip_prefix("SECONDS=") {
            Some(v) => secs = v.parse()?,
            None => println!("{l}"),
        }
    }
    let err = String::from_utf8_lossy(&out.stderr);
    for l in err.lines() {
        let l = l.trim();
        if l.starts_with("Elapsed (wall clock)")
            || l.starts_with("Maximum resident set size")
            || l.starts_with("User time")
            || l.starts_with("System time")
        {
            println!("    {l}");
        }
    }
    assert!(out.status.success(), "{err}");
    Ok(secs)
}

/// The size of a database file and of its WAL, in bytes.
fn sizes(db: &str) -> (u64, u64) {
    let len = |p: String| std::fs::metadata(p).map_or(0, |m| m.len());
    (len(db.to_owned()), len(format!("{db}-wal")))
}

/// `rounds` rounds, each the reference then the delivery (and, with
/// `BENCH_NO_WINDOW_INDEX` set, the delivery without the window index), so that both see the
/// same load; then each round's ratios and their median.
fn compare(path: &str, dir: &str, rounds: usize) -> Result<(), Box<dyn std::error::Error>> {
    let (d, i) = (format!("{dir}/bench.db"), format!("{dir}/import.db"));
    let no_window = std::env::var_os("BENCH_NO_WINDOW_INDEX").is_some();
    let mut ratios = Vec::new();
    let mut ratios_no_window = Vec::new();
    for round in 1..=rounds {
        let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
        println!("round {round}, load average {}", load.trim());
        let ti = timed(&["import", path, &i])?;
        let si = sizes(&i);
        remove_db(&i);
        let td = timed(&["deliver", path, &d])?;
        let sd = sizes(&d);
        remove_db(&d);
        println!(
            "round {round}: import {ti:.2} s, {} bytes (+{} journal); deliver {td:.2} s, {} bytes (+{} WAL); time {:.3}x, size {:.3}x",
            si.0,
            si.1,
            sd.0,
            sd.1,
            td / ti,
            sd.0 as f64 / si.0 as f64
        );
        ratios.push(td / ti);
        if no_window {
            let tn = timed(&["deliver-no-window-index", path, &d])?;
            let sn = sizes(&d);
            remove_db(&d);
            println!(
                "round {round}: deliver without the window index {tn:.2} s, {} bytes; time {:.3}x, size {:.3}x",
                sn.0,
                tn / ti,
                sn.0 as f64 / si.0 as f64
            );
            ratios_no_window.push(tn / ti);
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    println!(
        "median time ratio {:.3}x over {rounds} rounds",
        median(&mut ratios)
    );
    if no_window {
        println!(
            "median time ratio without the window index {:.3}x",
            median(&mut ratios_no_window)
        );
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    match a.as_slice() {
        ["gen", n, path] => gen(n.parse()?, path)?,
        ["deliver", path, db] => deliver(path, db, true)?,
        ["deliver-no-window-index", path, db] => deliver(path, db, false)?,
        ["import", path, db] => import(path, db)?,
        ["compare", path, dir] => compare(path, dir, 3)?,
        ["compare", path, dir, rounds] => compare(path, dir, rounds.parse()?)?,
        _ => {
            eprintln!("usage: sqlite_bench gen N PATH | deliver PATH DB | import PATH DB | compare PATH DIR [ROUNDS]");
            std::process::exit(2);
        }
    }
    Ok(())
}
