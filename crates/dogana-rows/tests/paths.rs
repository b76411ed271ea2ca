//! Property: the three ways a CSV file is read give the same report. `check_rows` in two
//! threads counts clean rows without building them (`Checker::clean_row`) and splits lines a
//! 64-byte block at a time; `check_rows_with` (a row callback) checks every row one by one;
//! `hash_in_thread(false)` reads everything in the calling thread. Whatever the rows'
//! faults, and whatever the manifest declares, the reports are equal.

mod common;

use common::*;
use dogana::{Contract, Deletions, LogicalType, Manifest, Shape};
use dogana_rows::{check_rows, check_rows_with, Format, RowReport, RowsError};
use proptest::prelude::*;

const HEADER: &str = "id,order_date,updated_at,amount,customer,deleted\n";

/// One row, written from a menu of values: most clean, some faulty.
fn row_strategy() -> impl Strategy<Value = String> {
    let id = prop_oneof![
        8 => (0i64..400).prop_map(|i| i.to_string()),
        1 => Just(String::new()),
        1 => Just("x7".to_owned()),
        1 => (0i64..5).prop_map(|i| format!("-{i}")),
    ];
    let day = prop_oneof![
        8 => (1u32..=28).prop_map(|d| format!("2026-10-{d:02}")),
        1 => Just(String::new()),
        1 => Just("2026-13-01".to_owned()),
        1 => Just("2026-11-05".to_owned()),
    ];
    let at = prop_oneof![
        6 => (0u32..24).prop_map(|h| format!("2026-10-26T{h:02}:30:00Z")),
        2 => (0u32..24).prop_map(|h| format!("2026-10-26T{h:02}:00:00.25+02:00")),
        1 => Just(String::new()),
        1 => Just("2026-10-26T10:00:00".to_owned()),
        1 => Just("2026-10-25T10:00:00Z".to_owned()),
        1 => Just("2026-10-28T10:00:00Z".to_owned()),
    ];
    let deleted = prop_oneof![
        8 => Just("false"),
        2 => Just("true"),
        1 => Just(""),
        1 => Just("maybe"),
    ];
    let customer = prop_oneof![
        6 => "[a-z]{0,40}",
        1 => Just("\u{e9}t\u{e9}".to_owned()),
        1 => Just("\"quoted, \"\"with\"\" a comma\"".to_owned()),
        1 => Just("\"two\nlines\"".to_owned()),
    ];
    let ending = prop_oneof![6 => Just("\n"), 2 => Just("\r\n"), 1 => Just("\n\n")];
    (id, day, at, deleted, customer, ending, 0u8..30).prop_map(
        |(id, day, at, deleted, customer, ending, shape)| {
            let line = match shape {
                // a ragged row, and a row with a field too many
                0 => format!("{id},{day},{at}"),
                1 => format!("{id},{day},{at},1.5,{customer},{deleted},extra"),
                _ => format!("{id},{day},{at},1.5,{customer},{deleted}"),
            };
            line + ending
        },
    )
}

/// Reads `text` the three ways; the reports, with the key set's size (its layout depends on
/// a random seed) left out.
fn three_ways(text: &str, c: &Contract, m: &Manifest) -> [RowReport; 3] {
    let clean = check_rows(text.as_bytes(), Format::Csv, c, m, &options()).unwrap();
    let row_by_row = check_rows_with(text.as_bytes(), Format::Csv, c, m, &options(), |_| {
        Ok::<(), RowsError>(())
    })
    .unwrap();
    let one_thread = check_rows(
        text.as_bytes(),
        Format::Csv,
        c,
        m,
        &options().hash_in_thread(false),
    )
    .unwrap();
    [clean, row_by_row, one_thread].map(|mut r| {
        r.key_set_bytes = 0;
        r
    })
}

fn window_changes(c: &Contract, rows: u64, tombs: u64) -> Manifest {
    c.manifest("wchanges", ts(T))
        .since(ts(SINCE))
        .window(dogana::Window::new(date("2026-10-03"), date("2026-10-25")))
        .rows(rows)
        .tombstones(tombs)
        .build()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_path_gives_the_same_report(
        rows in prop::collection::vec(row_strategy(), 0..300),
        live_off in -2i64..=2,
        tomb_off in -2i64..=2,
        shape in 0usize..3,
        tail in 0usize..6,
    ) {
        // rule: CHECK-18, CHECK-02
        // sometimes the file ends inside a quote (a truncated file)
        let tail = ["", "", "", "5,2026-10-05,,1,\"cut", "\"", "6,2026-10-05,,\"1\n.5\",\"x\ny"][tail];
        let text = format!("{HEADER}{}{tail}", rows.concat());
        let c = orders();
        // roughly what the rows hold, give or take, so that the counts are sometimes right
        let tombs = rows.iter().filter(|r| r.contains(",true")).count() as i64;
        let live = rows.len() as i64 - tombs;
        let (live, tombs) = ((live + live_off).max(0) as u64, (tombs + tomb_off).max(0) as u64);
        let m = match shape {
            0 => changes(&c, live, tombs).build().unwrap(),
            1 => window_changes(&c, live, tombs),
            _ => full(&c, live).build().unwrap(),
        };
        let [clean, row_by_row, one_thread] = three_ways(&text, &c, &m);
        prop_assert_eq!(&clean, &row_by_row);
        prop_assert_eq!(&clean, &one_thread);
    }
}

#[test]
fn clean_rows_keyed_by_date_or_datetime_count_as_the_row_by_row_path_does() {
    // rule: CHECK-09
    // a date key and a datetime key are kept as i64 (days, microseconds) on both paths; the
    // repeats are reported with the same line and value
    for (key_type, key) in [
        (LogicalType::Date, "order_date"),
        (LogicalType::Datetime, "updated_at"),
    ] {
        let c = Contract::builder("orders", [key])
            .shape("changes", Shape::changes(Deletions::Tombstone))
            .cursor_column("updated_at")
            .deleted_column("deleted")
            .column("updated_at", LogicalType::Datetime)
            .column("deleted", LogicalType::Bool)
            .column(key, key_type)
            .build()
            .unwrap();
        let mut text = HEADER.to_owned();
        for d in 1..=28 {
            text.push_str(&format!(
                "{d},2026-10-{d:02},2026-10-26T{:02}:00:00Z,1.5,customer {d},false\n",
                d % 24
            ));
        }
        let m = changes(&c, 28, 0).build().unwrap();
        let [clean, row_by_row, one_thread] = three_ways(&text, &c, &m);
        assert_eq!(clean, row_by_row, "{key}");
        assert_eq!(clean, one_thread, "{key}");
        // the hours repeat after 24 rows: the datetime key has 4 repeats, the date key none
        let repeats = usize::from(key == "updated_at");
        assert_eq!(clean.check("keys").unwrap().passed(), repeats == 0, "{key}");
    }
}

#[test]
fn a_file_ending_inside_quotes_gives_the_same_report_on_every_path() {
    // rule: CHECK-02, CHECK-18
    // files of several 512 KiB chunks, the unterminated quote opening in the first chunk (it
    // then spans every later one), near a chunk boundary, and in the last chunk
    let c = orders();
    let row = "17,2026-10-26,2026-10-26T10:30:00Z,1.5,some customer,false\n";
    let rows = (1 << 20) * 3 / 2 / row.len();
    for open_at in [10, rows / 3, (512 << 10) / row.len(), rows - 1] {
        let mut text = HEADER.to_owned();
        for i in 0..rows {
            if i == open_at {
                text.push_str("9,2026-10-26,,1,\"never closed,");
            }
            text.push_str(&row.replacen("17", &i.to_string(), 1));
        }
        let m = full(&c, rows as u64).build().unwrap();
        let [clean, row_by_row, one_thread] = three_ways(&text, &c, &m);
        assert_eq!(clean, row_by_row, "{open_at}");
        assert_eq!(clean, one_thread, "{open_at}");
        let parse = clean.check("parse").unwrap().detail().to_owned();
        let line = open_at + 2;
        assert!(
            parse.contains(&format!(
                "line {line}: the file ends inside the quoted field opened on line {line}"
            )),
            "{open_at}: {parse}"
        );
    }
}
