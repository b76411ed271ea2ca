//! Fuzzes the CSV reader: no input panics, and the three ways a file is read (two threads
//! counting clean rows from their parsed values, two threads checking every row for a row
//! callback, one thread) give the same report. The input is the file after a fixed header, so
//! that most inputs reach the rows.
//!
//! Run with `cargo +nightly fuzz run csv_rows` from the repository root.

#![no_main]

use dogana::{Contract, Deletions, LogicalType, Manifest, Shape, Window};
use dogana_rows::{check_rows, check_rows_with, Format, Options, RowReport, RowsError};
use libfuzzer_sys::fuzz_target;

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

fn manifest(c: &Contract, rows: u64, tombstones: u64) -> Manifest {
    c.manifest("wchanges", "2026-10-27T00:00:00Z".parse().expect("a time"))
        .since("2026-10-26T00:00:00Z".parse::<dogana::Timestamp>().expect("a time"))
        .window(Window::new(
            "2026-10-03".parse::<dogana::Date>().expect("a date"),
            "2026-10-25".parse::<dogana::Date>().expect("a date"),
        ))
        .rows(rows)
        .tombstones(tombstones)
        .build()
        .expect("a valid manifest")
}

fn three_ways(file: &[u8], c: &Contract, m: &Manifest) -> [Result<RowReport, String>; 3] {
    let options = Options::new().column_types([("amount", "float"), ("customer", "str")]);
    let clean = check_rows(file, Format::Csv, c, m, &options);
    let row_by_row = check_rows_with(file, Format::Csv, c, m, &options, |_| {
        Ok::<(), RowsError>(())
    });
    let one_thread = check_rows(file, Format::Csv, c, m, &options.clone().hash_in_thread(false));
    [clean, row_by_row, one_thread].map(|r| {
        r.map(|mut r| {
            // the key set's layout depends on a random seed
            r.key_set_bytes = 0;
            r
        })
        .map_err(|e| e.to_string())
    })
}

fuzz_target!(|data: &[u8]| {
    // the first two bytes choose the declared counts, the rest follows the header
    let (counts, rows) = data.split_at(data.len().min(2));
    let declared = |i: usize| u64::from(counts.get(i).copied().unwrap_or(0) % 16);
    let mut file = b"id,order_date,updated_at,amount,customer,deleted\n".to_vec();
    file.extend_from_slice(rows);
    let c = contract();
    let m = manifest(&c, declared(0), declared(1));
    let [clean, row_by_row, one_thread] = three_ways(&file, &c, &m);
    assert_eq!(clean, row_by_row);
    assert_eq!(clean, one_thread);
});
