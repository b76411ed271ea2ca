//! Property: what a sender controls is bounded. Whatever header line a CSV file has (names of
//! any length and bytes, repeated, unterminated quotes, half a million columns, a first line
//! of megabytes) and whatever its rows, every check's detail stays within a few kilobytes,
//! and the three ways a file is read give the same report.

mod common;

use common::*;
use dogana_rows::{check_rows, check_rows_with, Format, Options, RowReport, RowsError};
use proptest::prelude::*;

/// The most bytes a check's detail may take, whatever the file.
const DETAIL_MAX: usize = 32 << 10;

/// One header name, from a menu of hostile ones.
fn name_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z_]{1,12}",
        1 => Just("id".to_owned()),
        1 => Just("amount".to_owned()),
        1 => (1usize..3000).prop_map(|n| "n".repeat(n)),
        1 => Just("\u{1b}[2J\u{202e}évil".to_owned()),
        1 => Just("\"quoted, name\"".to_owned()),
        1 => Just("\"never closed".to_owned()),
        1 => Just(String::new()),
    ]
}

fn header_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => prop::collection::vec(name_strategy(), 1..40).prop_map(|v| v.join(",")),
        // many columns, one repeated name
        1 => (1usize..200_000).prop_map(|n| vec!["c"; n].join(",")),
        // a first line over the header's limit, quoted or not
        1 => (any::<bool>(), (1usize << 20)..(3usize << 20))
            .prop_map(|(q, n)| format!("{}{}", if q { "\"" } else { "" }, "h".repeat(n))),
    ]
}

fn rows_strategy() -> impl Strategy<Value = String> {
    let value = prop_oneof![
        4 => "[0-9]{1,4}",
        1 => Just("2026-10-26".to_owned()),
        1 => (1usize..100_000).prop_map(|n| "v".repeat(n)),
        1 => Just("\"open".to_owned()),
        1 => Just("99999999999999999999".to_owned()),
    ];
    prop::collection::vec(prop::collection::vec(value, 1..8), 0..20)
        .prop_map(|rows| rows.iter().map(|r| r.join(",") + "\n").collect::<String>())
}

fn read(text: &str, options: &Options) -> [Result<RowReport, String>; 3] {
    let c = orders_hashed();
    let m = full(&c, 3).build().unwrap();
    let clean = check_rows(text.as_bytes(), Format::Csv, &c, &m, options);
    let row_by_row = check_rows_with(text.as_bytes(), Format::Csv, &c, &m, options, |_| {
        Ok::<(), RowsError>(())
    });
    let one_thread = check_rows(
        text.as_bytes(),
        Format::Csv,
        &c,
        &m,
        &options.clone().hash_in_thread(false),
    );
    [clean, row_by_row, one_thread].map(|r| {
        r.map(|mut r| {
            r.key_set_bytes = 0;
            r
        })
        .map_err(|e| e.to_string())
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn every_detail_stays_small_whatever_the_header(
        header in header_strategy(),
        rows in rows_strategy(),
    ) {
        // rule: TRUST-07 (what a sender controls is bounded), CHECK-18
        let text = format!("{header}\n{rows}");
        let [clean, row_by_row, one_thread] = read(&text, &options());
        prop_assert_eq!(&clean, &row_by_row);
        prop_assert_eq!(&clean, &one_thread);
        match &clean {
            Ok(report) => {
                for check in &report.checks {
                    prop_assert!(
                        check.detail().len() <= DETAIL_MAX,
                        "{}: {} bytes",
                        check.name(),
                        check.detail().len()
                    );
                }
            }
            Err(e) => prop_assert!(e.len() <= DETAIL_MAX, "{} bytes", e.len()),
        }
    }
}
