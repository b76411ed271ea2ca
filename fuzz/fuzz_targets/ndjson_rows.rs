//! Fuzzes the NDJSON reader: no input panics; reading with the union of the keys given first
//! (`ndjson_keys` then `Options::ndjson_columns`, as a receiver stages) reports the same
//! checks as reading without it; and every key a row holds is among the union, so no value
//! can be dropped by a staging made from the union.
//!
//! Run with `cargo fuzz run ndjson_rows` from the repository root (nightly, or
//! `RUSTC_BOOTSTRAP=1` on stable).

#![no_main]

use dogana::{Contract, Deletions, LogicalType, Manifest, Shape};
use dogana_rows::{check_rows, check_rows_with, ndjson_keys, Format, Options, RowsError};
use libfuzzer_sys::fuzz_target;

fn contract() -> Contract {
    Contract::builder("orders", ["id"])
        .shape("changes", Shape::changes(Deletions::Tombstone))
        .cursor_column("updated_at")
        .deleted_column("deleted")
        .column("id", LogicalType::Int)
        .column("updated_at", LogicalType::Datetime)
        .column("deleted", LogicalType::Bool)
        .build()
        .expect("a valid contract")
}

fn manifest(c: &Contract, rows: u64, tombstones: u64) -> Manifest {
    c.manifest("changes", "2026-10-27T00:00:00Z".parse().expect("a time"))
        .since("2026-10-26T00:00:00Z".parse::<dogana::Timestamp>().expect("a time"))
        .rows(rows)
        .tombstones(tombstones)
        .build()
        .expect("a valid manifest")
}

fuzz_target!(|data: &[u8]| {
    let (counts, file) = data.split_at(data.len().min(2));
    let declared = |i: usize| u64::from(counts.get(i).copied().unwrap_or(0) % 16);
    let c = contract();
    let m = manifest(&c, declared(0), declared(1));
    let keys = ndjson_keys(file).expect("reading memory");
    // one thread: the reading is the same either way (csv_rows compares them), and a thread
    // per execution would cost more than the reading
    let one = Options::new().hash_in_thread(false);
    let plain = check_rows(file, Format::Ndjson, &c, &m, &one);
    let mut seen: Vec<String> = Vec::new();
    let seeded = check_rows_with(
        file,
        Format::Ndjson,
        &c,
        &m,
        &one.clone().ndjson_columns(keys.clone()),
        |row| {
            for col in row.columns() {
                if !seen.contains(col) {
                    seen.push(col.clone());
                }
            }
            Ok::<(), RowsError>(())
        },
    );
    let clean = |r: Result<dogana_rows::RowReport, RowsError>| {
        r.map(|mut r| {
            r.key_set_bytes = 0;
            r.checks
        })
        .map_err(|e| e.to_string())
    };
    let (plain, seeded) = (clean(plain), clean(seeded));
    assert_eq!(plain, seeded, "the union given first changes no check");
    for col in &seen {
        assert!(keys.contains(col), "a row's column {col:?} is outside the union {keys:?}");
    }
});
