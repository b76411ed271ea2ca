//! Fuzzes what a sender controls: no input makes an error, a check's detail or a receipt grow
//! with it. The first byte chooses the input's kind:
//!
//! - even: the rest is a wire document (a manifest, a contract, a ledger, a receipt). A refusal
//!   is at most three `Problem` texts long; a manifest read holds no name over `NAME_MAX`
//!   bytes, and the gate's checks of it stay as small.
//! - odd: the rest is a CSV delivery, header line included (names of any length and bytes,
//!   quotes never closed, megabytes of first line). Every check's detail is at most 32 KiB,
//!   and the three ways a file is read give the same report.
//!
//! Run with `cargo +nightly fuzz run bounded -- -max_len=4000000` from the repository root (a
//! long `max_len` lets inputs pass the limits: 1,024-byte names, a 1 MiB header).

#![no_main]

use dogana::{
    Contract, FromWire, Gate, Ledger, LogicalType, Manifest, Receipt, Shape, NAME_MAX,
    PROBLEM_TEXT_MAX,
};
use dogana_rows::{check_rows, check_rows_with, Format, Options, RowReport, RowsError};
use libfuzzer_sys::fuzz_target;

/// The longest refusal of a wire document: a field, a value and a reason, each bounded.
const ERROR_MAX: usize = 3 * PROBLEM_TEXT_MAX + 256;
/// The longest detail of a row check.
const DETAIL_MAX: usize = 32 << 10;

fn contract() -> Contract {
    Contract::builder("orders", ["id"])
        .shape("full", Shape::full())
        .window_column("order_date")
        .shape("last3", Shape::window())
        .column("id", LogicalType::Int)
        .column("order_date", LogicalType::Date)
        .schema_hash(dogana::column_hash(&[("id", "int"), ("order_date", "date")]))
        .build()
        .expect("a valid contract")
}

fn bounded_refusal<T: FromWire>(data: &[u8]) -> Option<T> {
    match T::from_slice(data) {
        Ok(v) => Some(v),
        Err(e) => {
            let n = e.to_string().len();
            assert!(n <= ERROR_MAX, "a refusal of {n} bytes");
            None
        }
    }
}

fn wire(data: &[u8]) {
    if let Some(m) = bounded_refusal::<Manifest>(data) {
        assert!(m.table().len() <= NAME_MAX && m.shape().len() <= NAME_MAX);
        let ledger = Ledger::new(contract());
        let receipt = Gate::evaluate(&ledger, &m, &[], m.produced_at(), None, &[]);
        for check in receipt.checks() {
            assert!(check.detail().len() <= ERROR_MAX, "{}", check.name());
        }
    }
    if let Some(c) = bounded_refusal::<Contract>(data) {
        assert!(c.table().len() <= NAME_MAX);
        assert!(c.shapes().keys().all(|k| k.len() <= NAME_MAX));
    }
    let _ = bounded_refusal::<Ledger>(data);
    let _ = bounded_refusal::<Receipt>(data);
}

fn three_ways(file: &[u8]) -> [Result<RowReport, String>; 3] {
    let c = contract();
    let m = c
        .manifest("full", "2026-10-27T00:00:00Z".parse().expect("a time"))
        .rows(3)
        .build()
        .expect("a valid manifest");
    let options = Options::new().column_types([("amount", "decimal(12,2)"), ("customer", "str")]);
    let clean = check_rows(file, Format::Csv, &c, &m, &options);
    let row_by_row = check_rows_with(file, Format::Csv, &c, &m, &options, |_| {
        Ok::<(), RowsError>(())
    });
    let one_thread = check_rows(file, Format::Csv, &c, &m, &options.clone().hash_in_thread(false));
    [clean, row_by_row, one_thread].map(|r| {
        r.map(|mut r| {
            r.key_set_bytes = 0;
            r
        })
        .map_err(|e| e.to_string())
    })
}

fn csv(file: &[u8]) {
    let [clean, row_by_row, one_thread] = three_ways(file);
    assert_eq!(clean, row_by_row);
    assert_eq!(clean, one_thread);
    match &clean {
        Ok(report) => {
            for check in &report.checks {
                let n = check.detail().len();
                assert!(n <= DETAIL_MAX, "{}: {n} bytes", check.name());
            }
        }
        Err(e) => assert!(e.len() <= DETAIL_MAX, "an error of {} bytes", e.len()),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&kind, rest)) = data.split_first() else {
        return;
    };
    if kind % 2 == 0 {
        wire(rest);
    } else {
        csv(rest);
    }
});
