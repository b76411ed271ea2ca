//! Fuzzes `dogana_rows` on a Parquet delivery: whatever the bytes (a damaged footer, pages
//! that do not decompress, a schema of other columns, types that do not map), the reader
//! answers a report or a bounded error, and never panics. The footer and the pages are the
//! parquet crate's to parse; what this target holds to is that dogana's use of it turns
//! every malformed file into an error a sender can read.
//!
//! The parquet crate asserts some of what a damaged file breaks instead of returning an
//! error; `dogana_rows` reads it under `catch_unwind` and refuses the file. libFuzzer's own
//! panic hook aborts at any panic, caught or not, so this target replaces it with one that
//! prints the panic on one line (`caught panic: …`, counted in the log) and goes on: a panic
//! that escapes `dogana_rows` still aborts, where `libfuzzer_sys` catches it.
//!
//! Seed it with Parquet files of the contract's columns in several compressions and row
//! group sizes (DuckDB's `COPY … TO 'x.parquet' (FORMAT parquet, COMPRESSION zstd)`), then run
//! `cargo +nightly fuzz run parquet_rows CORPUS` from the repository root.

#![no_main]

use dogana::{Contract, Deletions, LogicalType, Manifest, Shape, Window};
use dogana_rows::{check_rows, Format, Options};
use libfuzzer_sys::fuzz_target;

/// The longest error a file may draw.
const ERROR_MAX: usize = 32 << 10;

fn contract() -> Contract {
    Contract::builder("orders", ["id"])
        .shape("wchanges", Shape::window_changes(Deletions::Tombstone))
        .window_column("order_date")
        .cursor_column("updated_at")
        .deleted_column("deleted")
        .column("id", LogicalType::Int)
        .column("order_date", LogicalType::Date)
        .column("updated_at", LogicalType::Datetime)
        .column("deleted", LogicalType::Bool)
        .build()
        .expect("a valid contract")
}

fn manifest(c: &Contract) -> Manifest {
    c.manifest("wchanges", "2026-10-27T00:00:00Z".parse().expect("a time"))
        .since("2026-10-26T00:00:00Z".parse::<dogana::Timestamp>().expect("a time"))
        .window(Window::new(
            "2026-10-01".parse::<dogana::Date>().expect("a date"),
            "2026-10-25".parse::<dogana::Date>().expect("a date"),
        ))
        .rows(3)
        .tombstones(1)
        .build()
        .expect("a valid manifest")
}

fuzz_target!(
    init: {
        std::panic::set_hook(Box::new(|info| {
            let at = info.location().map(|l| format!("{}:{}", l.file(), l.line()));
            eprintln!("caught panic: {} at {}", info, at.unwrap_or_default().replace('\n', " "));
        }))
    },
    |data: &[u8]| {
    let c = contract();
    let m = manifest(&c);
    let options = Options::new().column_types([("amount", "decimal(12,2)"), ("customer", "str")]);
    match check_rows(data, Format::Parquet, &c, &m, &options) {
        Ok(report) => {
            for check in &report.checks {
                assert!(check.detail().len() <= ERROR_MAX, "{}", check.name());
            }
        }
        Err(e) => {
            let n = e.to_string().len();
            assert!(n <= ERROR_MAX, "an error of {n} bytes");
        }
    }
}
);
