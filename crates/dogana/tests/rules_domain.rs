//! Notation, domain and trust rules that are not covered next to their code.

mod common;
use common::*;
use dogana::{Ledger, Region, Value, Wire};

#[test]
fn interval_notation() {
    // rule: DOMAIN-01
    let closed = Region::new(
        Some(Value::Int(1)),
        Some(Value::Int(3)),
        false,
        false,
        None,
        None,
    )
    .unwrap();
    assert!(closed.contains(&Value::Int(1)) && closed.contains(&Value::Int(3)));
    let half = Region::new(
        Some(Value::Int(1)),
        Some(Value::Int(3)),
        true,
        false,
        None,
        None,
    )
    .unwrap();
    assert!(!half.contains(&Value::Int(1)) && half.contains(&Value::Int(3)));
    let unbounded = Region::new(None, None, true, true, None, None).unwrap();
    assert!(unbounded.contains(&Value::Int(i64::MIN)));
}

#[test]
fn coverage_is_the_table_or_one_closed_window() {
    // rule: DOMAIN-02, DOMAIN-03
    let c = orders();
    let l = applied(&c, &[full(&c, hour(1))]);
    let (_, whole) = l.transition(&full(&c, hour(2))).unwrap();
    assert_eq!(whole.regions()[0].interval(), "(-inf, +inf)");
    let (_, part) = l
        .transition(&window(
            &c,
            "last3",
            days("2026-10-01", "2026-10-01"),
            hour(2),
        ))
        .unwrap();
    assert_eq!(part.regions()[0].interval(), "[2026-10-01, 2026-10-01]");
    // t is produced_at; (c, d) are the region's dates
    assert_eq!(part.regions()[0].complete_as_of(), Some(hour(2)));
}

#[test]
fn tombstones_are_rows_the_manifest_counts() {
    // rule: DOMAIN-04
    let c = orders();
    let l = applied(&c, &[full(&c, hour(1))]);
    let m = c
        .manifest("changes", hour(2))
        .since(hour(1))
        .rows(0)
        .tombstones(3)
        .build()
        .unwrap();
    assert_eq!(m.tombstones(), 3);
    assert!(l.apply(&m).is_ok());
}

#[test]
fn strings_have_no_greatest_value() {
    // rule: DOMAIN-20
    let mut v = Value::from("\u{10ffff}");
    for _ in 0..3 {
        let next = v.successor().expect("every string has a successor");
        assert!(next > v);
        v = next;
    }
}

#[test]
fn a_ledger_holds_contract_regions_position_and_head_only() {
    // rule: LEDGER-01
    let c = orders();
    let l = applied(
        &c,
        &[full(&c, hour(1)), full(&c, hour(2)), full(&c, hour(3))],
    );
    let v = l.to_value();
    let mut fields: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    fields.sort();
    assert_eq!(
        fields,
        [
            "contract",
            "generation",
            "kind",
            "publication_id",
            "regions",
            "version"
        ]
    );
    // three acceptances leave one region and no history
    assert_eq!(v["regions"].as_array().unwrap().len(), 1);
}

#[test]
fn now_is_an_aware_instant() {
    // rule: GATE-11
    // `now` is a Timestamp, which cannot be built from a naive datetime.
    assert!("2026-10-25T00:00:00".parse::<dogana::Timestamp>().is_err());
    assert!("2026-10-25T00:00:00+02:00"
        .parse::<dogana::Timestamp>()
        .is_ok());
}

#[test]
fn hashes_are_lowercase_hex() {
    // rule: RECV-15
    let c = orders();
    let l = applied(&c, &[full(&c, hour(1))]);
    for h in [
        l.publication_id().unwrap().to_owned(),
        l.identity(),
        c.identity(),
    ] {
        assert!(dogana::is_sha256_hex(&h), "{h}");
    }
}

#[test]
fn the_core_depends_only_on_the_decided_crates() {
    // rule: TRUST-13
    let manifest = include_str!("../Cargo.toml");
    let deps = manifest
        .split("[dependencies]")
        .nth(1)
        .and_then(|s| s.split("\n[").next())
        .unwrap();
    let mut names: Vec<&str> = deps
        .lines()
        .filter_map(|l| l.split(['=', ' ']).next())
        .filter(|n| !n.is_empty() && !n.starts_with('#'))
        .collect();
    names.sort();
    assert_eq!(names, ["dogana-json", "imbl", "serde_json", "sha2"]);
}

#[test]
fn rebuilding_recovers_the_ledger_not_the_rows() {
    // rule: RECV-23, ALG-06
    // from_receipts takes a contract and receipts and returns a ledger: there is no API that
    // merges two ledgers or that returns rows.
    let c = orders();
    let l = Ledger::new(c.clone());
    let r = dogana::Gate::evaluate(&l, &full(&c, hour(1)), &[], hour(1), None, &[]);
    let rebuilt = Ledger::from_receipts(c, [&r]).unwrap();
    assert_eq!(rebuilt, l.follow(&r).unwrap());
}
