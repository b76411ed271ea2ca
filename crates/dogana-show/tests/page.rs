//! The page's data, read back as the page's script reads it, against the core.

mod common;

use common::{date, orders, small, t, Builder};
use dogana::{Duration, Ledger, Window, Wire};
use dogana_show::{data, render, Options, ShowError, TableHistory};
use serde_json::Value as Json;

/// The points of a table's ledger as the script holds them.
struct Points {
    p: Vec<i64>,
    c: Vec<i64>,
    d: Vec<i64>,
    s: Vec<i64>,
}

fn ints(v: &Json) -> Vec<i64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect()
}

fn points(v: &Json) -> Points {
    Points {
        p: ints(&v["p"]),
        c: ints(&v["c"]),
        d: ints(&v["d"]),
        s: ints(&v["s"]),
    }
}

/// The script's `apply`: the points from lo to hi inclusive (hi -2: to the end) are replaced.
fn apply(l: &mut Points, step: &Json) {
    let lo = step["lo"].as_i64().unwrap();
    let hi = step["hi"].as_i64().unwrap();
    let i0 = l.p.iter().position(|&p| p >= lo).unwrap_or(l.p.len());
    let i1 = if hi == -2 {
        l.p.len()
    } else {
        l.p.iter().position(|&p| p > hi).unwrap_or(l.p.len())
    };
    let new = points(step);
    l.p.splice(i0..i1, new.p);
    l.c.splice(i0..i1, new.c);
    l.d.splice(i0..i1, new.d);
    l.s.splice(i0..i1, new.s);
}

/// The script's region lines: `interval: state; complete as of c; deletions as of d`.
fn lines(data: &Json, table: &Json, l: &Points) -> Vec<String> {
    let times: Vec<String> = data["times"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| format!("{}+00:00", t.as_str().unwrap()))
        .collect();
    let text = |v: &Json, i: usize, int_end: bool| -> String {
        match v.as_array() {
            Some(a) => a[i].as_str().unwrap().to_owned(),
            None => {
                let n = table["x"][i].as_i64().unwrap();
                if int_end {
                    format!("{}]", n - 1)
                } else {
                    n.to_string()
                }
            }
        }
    };
    let time = |i: i64| {
        if i < 0 {
            "unknown".to_owned()
        } else {
            times[i as usize].clone()
        }
    };
    let states = ["unknown", "expired", "patched", "complete"];
    (0..l.p.len())
        .map(|i| {
            let low = if l.p[i] == -1 {
                "(-inf".to_owned()
            } else {
                format!("[{}", text(&table["vals"], l.p[i] as usize, false))
            };
            let high = if i + 1 < l.p.len() {
                text(&table["ends"], l.p[i + 1] as usize, true)
            } else {
                "+inf)".to_owned()
            };
            format!(
                "{low}, {high}: {}; complete as of {}; deletions as of {}",
                states[l.s[i] as usize],
                time(l.c[i]),
                time(l.d[i])
            )
        })
        .collect()
}

fn claims_lines(ledger: &Ledger, o: &Options) -> Vec<String> {
    let table = ledger.contract().table();
    ledger
        .claims(o.at, o.limit, None)
        .unwrap()
        .regions()
        .iter()
        .map(|c| {
            c.to_string()
                .strip_prefix(&format!("{table} "))
                .unwrap()
                .to_owned()
        })
        .collect()
}

/// The ledger after each accepted receipt, by `Ledger::follow`.
fn followed(b: &Builder) -> Vec<Ledger> {
    let mut out: Vec<Ledger> = Vec::new();
    for r in b.receipts.iter().filter(|r| r.accepted()) {
        let prev = out
            .last()
            .cloned()
            .unwrap_or_else(|| Ledger::new(r.contract().clone()));
        out.push(prev.follow(r).unwrap());
    }
    out
}

/// A history of every kind of step: windows overlapping and touching, a full dump, patches
/// (window changes without deletions), windows at the ends of the domain.
fn mixed() -> Builder {
    let mut b = small("orders");
    let c = b.contract();
    b.window("2026-09-05", "2026-09-30", "2026-10-29T06:00:00Z");
    b.window("2026-10-01", "2026-10-03", "2026-10-29T07:00:00Z");
    let m = c
        .manifest("full", t("2026-10-30T06:00:00Z"))
        .rows(40)
        .build()
        .unwrap();
    b.deliver(m, None);
    b.window("2026-10-10", "2026-10-12", "2026-10-31T06:00:00Z");
    b.window("2026-10-13", "2026-10-15", "2026-10-31T06:00:00Z");
    b.window("0001-01-01", "2026-01-01", "2026-11-01T06:00:00Z");
    b.window("2026-12-01", "9999-12-31", "2026-11-01T07:00:00Z");
    let m = c
        .manifest("patch", t("2026-11-02T06:00:00Z"))
        .window(Window::new(date("2026-10-11"), date("2026-10-14")))
        .since(t("2026-10-31T06:00:00Z"))
        .rows(2)
        .build()
        .unwrap();
    b.deliver(m, None);
    for i in 0..40 {
        let low = format!("2026-08-{:02}", 1 + (i * 7) % 28);
        let high = format!("2026-08-{:02}", 1 + (i * 7) % 28 + i % 3);
        b.window(
            &low,
            &high,
            &format!("2026-11-03T{:02}:{:02}:00Z", i / 6, (i * 7) % 60),
        );
    }
    b
}

#[test]
fn every_step_rebuilds_the_ledger_follow_gives() {
    let o = common::options();
    for b in [small("orders"), mixed()] {
        let d = data(&[b.history()], &o).unwrap();
        let table = &d["tables"][0];
        let steps = table["steps"].as_array().unwrap();
        let ledgers = followed(&b);
        assert_eq!(steps.len(), ledgers.len());
        let mut l = Points {
            p: vec![-1],
            c: vec![-1],
            d: vec![-1],
            s: vec![0],
        };
        for (k, (step, ledger)) in steps.iter().zip(&ledgers).enumerate() {
            apply(&mut l, step);
            assert_eq!(
                lines(&d, table, &l),
                claims_lines(ledger, &o),
                "after step {k}"
            );
        }
    }
}

#[test]
fn the_band_at_the_reader_s_time_is_the_claims_of_the_stored_ledger() {
    let o = common::options();
    let b = small("orders");
    let d = data(&[b.history()], &o).unwrap();
    let table = &d["tables"][0];
    let got = lines(&d, table, &points(&table["now"]));
    assert_eq!(got, claims_lines(&b.ledger, &o));
    // The small history has each state at least once.
    for state in ["unknown", "expired", "patched", "complete"] {
        assert!(
            got.iter().any(|l| l.contains(&format!(": {state};"))),
            "{state} in {got:#?}"
        );
    }
}

#[test]
fn a_ledger_that_is_not_the_fold_of_its_receipts_says_so() {
    let o = common::options();
    let mut h = small("orders").history();
    let other = mixed();
    h.ledger = Some(other.ledger.clone());
    let d = data(&[h], &o).unwrap();
    let table = &d["tables"][0];
    assert_eq!(
        table["verify"], "orders: 1 problem: 5 receipts, 4 accepted",
        "{table:#}"
    );
    let problem = table["problems"][0].as_str().unwrap();
    assert!(
        problem.starts_with(&format!(
            "the stored ledger {} differs from the fold of the accepted receipts",
            other.ledger.identity()
        )),
        "{problem}"
    );
}

#[test]
fn a_fold_that_is_right_says_so() {
    let d = data(&[small("orders").history()], &common::options()).unwrap();
    let verify = d["tables"][0]["verify"].as_str().unwrap();
    assert!(
        verify.starts_with("orders: ok: 5 receipts, 4 accepted; ledger "),
        "{verify}"
    );
}

#[test]
fn over_the_budget_the_chain_is_checked_and_a_wrong_ledger_still_found() {
    let mut o = common::options();
    o.fold_budget = 3;
    let b = small("orders");
    let d = data(&[b.history()], &o).unwrap();
    assert_eq!(d["tables"][0]["problems"], Json::Array(vec![]));
    let note = d["tables"][0]["notes"][0].as_str().unwrap();
    assert!(note.contains("dogana verify checks them"), "{note}");
    let mut h = b.history();
    h.ledger = Some(mixed().ledger);
    let d = data(&[h], &o).unwrap();
    assert_eq!(
        d["tables"][0]["verify"],
        "orders: 1 problem: 5 receipts, 4 accepted"
    );
}

#[test]
fn a_receipt_missing_from_the_history_stops_the_replay_there() {
    let o = common::options();
    let mut h = small("orders").history();
    h.receipts.remove(1);
    let d = data(&[h], &o).unwrap();
    let table = &d["tables"][0];
    assert_eq!(table["steps"].as_array().unwrap().len(), 1);
    let note = table["notes"][0].as_str().unwrap();
    assert!(
        note.starts_with("receipt 2 does not follow the ledger before it"),
        "{note}"
    );
    let problem = table["problems"][0].as_str().unwrap();
    assert!(
        problem.starts_with("the accepted receipts do not fold into a ledger (RECV-20)"),
        "{problem}"
    );
}

#[test]
fn a_table_without_receipts_is_refused() {
    let h = TableHistory {
        ledger: Some(Ledger::new(orders("orders"))),
        receipts: vec![],
    };
    assert_eq!(
        render(&[h], &common::options()).unwrap_err(),
        ShowError::EmptyHistory {
            table: "orders".into()
        }
    );
    assert_eq!(
        render(&[], &common::options()).unwrap_err(),
        ShowError::NoTables
    );
}

#[test]
fn a_table_named_twice_is_refused() {
    let h = small("orders").history();
    assert_eq!(
        render(&[h.clone(), h], &common::options()).unwrap_err(),
        ShowError::RepeatedTable {
            table: "orders".into()
        }
    );
}

#[test]
fn the_common_exact_instant_follows_the_group_claims() {
    let (inv, lines) = common::together();
    let o = Options::new(t("2026-10-27T00:00:00Z"), Duration::MAX);
    let d = data(&[inv.history(), lines.history()], &o).unwrap();
    let times = d["times"].as_array().unwrap();
    let gx = ints(&d["gx"]);
    // Invoices alone: lines still unknown; both at Sunday; lines moved on.
    assert_eq!(gx.len(), 3);
    assert_eq!(gx[0], -1);
    assert_eq!(times[gx[1] as usize], "2026-10-25T06:00:00");
    assert_eq!(gx[2], -1);
    let group = dogana::Group::new([inv.contract(), lines.contract()]).unwrap();
    let claims = group
        .claims(
            &[inv.ledger.clone(), lines.ledger.clone()],
            o.at,
            o.limit,
            None,
        )
        .unwrap();
    assert_eq!(claims.exact_as_of(), None);
    assert_eq!(d["group"]["exact"], Json::Null);
}

#[test]
fn no_markup_from_the_data_reaches_the_page_unescaped() {
    let page = render(&[common::hostile().history()], &common::options()).unwrap();
    assert!(!page.contains(common::PAYLOAD));
    assert!(!page.contains("<img"));
    assert!(!page.contains('\u{2028}'));
    // Only the page's own two script elements.
    assert_eq!(page.matches("<script").count(), 2);
    assert_eq!(page.matches("</script>").count(), 2);
}

#[test]
fn the_page_fetches_nothing() {
    let page = render(&[small("orders").history()], &common::options()).unwrap();
    for needle in ["http://", "https://", "src=", "<link", "@import", "url("] {
        assert!(!page.contains(needle), "{needle}");
    }
}

#[test]
fn a_table_without_a_window_column_is_one_band() {
    let c = dogana::Contract::builder("customers", ["id"])
        .shape("full", dogana::Shape::full())
        .column("id", dogana::LogicalType::Int)
        .build()
        .unwrap();
    let mut b = Builder::new(c.clone());
    let m = c
        .manifest("full", t("2026-10-25T06:00:00Z"))
        .rows(3)
        .build()
        .unwrap();
    b.deliver(m, None);
    let o = common::options();
    let d = data(&[b.history()], &o).unwrap();
    let table = &d["tables"][0];
    assert_eq!(table["column"], Json::Null);
    assert_eq!(
        lines(&d, table, &points(&table["now"])),
        ["(-inf, +inf): complete; complete as of 2026-10-25T06:00:00+00:00; deletions as of 2026-10-25T06:00:00+00:00"]
    );
}
