//! Property: an honest delivery fails no check (CHECK-18), and flipping one declaration of its
//! manifest or contract makes exactly the matching check fail.

mod common;

use common::*;
use dogana::{Contract, Date, Manifest, Timestamp, Window};
use dogana_rows::{check_rows, sha256_bytes, Format};
use proptest::prelude::*;

/// One generated row: key, window value, cursor value, tombstone, amount, customer.
#[derive(Debug, Clone)]
struct Gen {
    id: i64,
    day: Option<Date>,
    at: Option<Timestamp>,
    tomb: bool,
    amount: f64,
    customer: String,
}

const LOW: &str = "2026-10-01";
const HIGH: &str = "2026-10-20";

fn rows_strategy() -> impl Strategy<Value = Vec<Gen>> {
    let since = ts(SINCE).as_micros();
    let t = ts(T).as_micros();
    let row = (
        0i64..20,           // day offset in [LOW, HIGH]
        1i64..=(t - since), // cursor offset in (since, t]
        any::<bool>(),      // tombstone
        any::<bool>(),      // tombstone values null
        -1e6f64..1e6,
        "[ -~]{0,6}|[\u{e9}\u{1f600},\"\n]{1,3}",
        0usize..4, // the offset the datetime is written with
    );
    prop::collection::vec(row, 1..25).prop_map(move |rows| {
        rows.into_iter()
            .enumerate()
            .map(|(i, (d, c, tomb, nulls, amount, customer, _))| {
                // the first row is live, so every flip has a value to act on
                let tomb = tomb && i > 0;
                let day = date(LOW).checked_add_days(d).unwrap();
                let at = Timestamp::from_micros(since + c).unwrap();
                Gen {
                    id: (i as i64) * 7 - 20,
                    day: (!(tomb && nulls)).then_some(day),
                    at: (!(tomb && nulls)).then_some(at),
                    tomb,
                    amount,
                    customer,
                }
            })
            .collect()
    })
}

/// A datetime in one of several spellings of the same instant.
fn spell(t: Timestamp, how: usize) -> String {
    let utc = t.to_string(); // ...+00:00
    match how % 3 {
        0 => utc,
        1 => utc.replace("+00:00", "Z"),
        _ => {
            // the same instant at +05:30
            let shifted = Timestamp::from_micros(t.as_micros() + 19_800_000_000).unwrap();
            shifted.to_string().replace("+00:00", "+05:30")
        }
    }
}

fn write_csv(rows: &[Gen]) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "id",
        "order_date",
        "updated_at",
        "amount",
        "customer",
        "deleted",
    ])
    .unwrap();
    for (i, r) in rows.iter().enumerate() {
        w.write_record([
            r.id.to_string(),
            r.day.map(|d| d.to_string()).unwrap_or_default(),
            r.at.map(|t| spell(t, i)).unwrap_or_default(),
            r.amount.to_string(),
            r.customer.clone(),
            r.tomb.to_string(),
        ])
        .unwrap();
    }
    w.into_inner().unwrap()
}

fn write_ndjson(rows: &[Gen]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let v = serde_json::json!({
            "id": r.id,
            "order_date": r.day.map(|d| d.to_string()),
            "updated_at": r.at.map(|t| spell(t, i)),
            "amount": r.amount,
            "customer": r.customer,
            "deleted": r.tomb,
        });
        out.extend_from_slice(v.to_string().as_bytes());
        out.push(b'\n');
    }
    out
}

/// The honest manifest of a window read of changes with tombstones over `rows`.
fn honest(c: &Contract, rows: &[Gen], bytes: &[u8]) -> dogana::ManifestBuilder {
    let tombs = rows.iter().filter(|r| r.tomb).count() as u64;
    c.manifest("wchanges", ts(T))
        .since(ts(SINCE))
        .window(Window::new(date(LOW), date(HIGH)))
        .rows(rows.len() as u64 - tombs)
        .tombstones(tombs)
        .content_hash(sha256_bytes(bytes))
}

fn failed_checks(bytes: &[u8], format: Format, c: &Contract, m: &Manifest) -> Vec<String> {
    let r = check_rows(bytes, format, c, m, &options()).unwrap();
    r.failed().map(|c| c.name().to_owned()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn honest_deliveries_pass_and_one_flip_fails_one_check(
        rows in rows_strategy(),
        as_json in any::<bool>(),
        flip in 0usize..7,
    ) {
        // rule: CHECK-18
        let (format, bytes) = if as_json {
            (Format::Ndjson, write_ndjson(&rows))
        } else {
            (Format::Csv, write_csv(&rows))
        };
        let c = orders_hashed();
        let m = honest(&c, &rows, &bytes).build().unwrap();
        prop_assert_eq!(failed_checks(&bytes, format, &c, &m), Vec::<String>::new());

        let first = &rows[0];
        let (contract, manifest, expected) = match flip {
            0 => (c.clone(), honest(&c, &rows, &bytes).rows(m.rows() + 1).build().unwrap(), "rows"),
            1 => (c.clone(), honest(&c, &rows, &bytes).tombstones(m.tombstones() + 1).build().unwrap(), "rows"),
            2 => (c.clone(), honest(&c, &rows, &bytes).content_hash(sha256_bytes(b"other")).build().unwrap(), "content_hash"),
            3 => {
                // the data contract says amount is an int: other columns
                let mut cols = COLUMNS;
                cols[3] = ("amount", "int");
                let other = orders_builder().schema_hash(dogana::column_hash(&cols)).build().unwrap();
                (other.clone(), honest(&other, &rows, &bytes).build().unwrap(), "schema_hash")
            }
            4 => {
                // a window that leaves the first row's window value out
                let v = first.day.unwrap();
                let w = if v > date(LOW) {
                    Window::new(date(LOW), v.checked_add_days(-1).unwrap())
                } else {
                    Window::new(v.checked_add_days(1).unwrap(), date(HIGH))
                };
                (c.clone(), honest(&c, &rows, &bytes).window(w).build().unwrap(), "window")
            }
            5 => {
                // since at the first row's cursor: that row is no longer after it
                let s = first.at.unwrap();
                (c.clone(), honest(&c, &rows, &bytes).since(s).build().unwrap(), "cursor")
            }
            _ => {
                // produced_at just before the latest cursor
                let latest = rows.iter().filter_map(|r| r.at).max().unwrap();
                let m = c
                    .manifest("wchanges", latest.predecessor().unwrap())
                    .since(ts(SINCE))
                    .window(Window::new(date(LOW), date(HIGH)))
                    .rows(m.rows())
                    .tombstones(m.tombstones())
                    .content_hash(sha256_bytes(&bytes))
                    .build()
                    .unwrap();
                (c.clone(), m, "cursor")
            }
        };
        prop_assert_eq!(failed_checks(&bytes, format, &contract, &manifest), vec![expected.to_owned()]);
    }
}
