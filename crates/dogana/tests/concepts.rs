//! The concepts' running example, through the public API: a full read on Sunday, the last
//! three days on Tuesday, changes with tombstones on Wednesday; the same changes since Monday
//! refused.

mod common;
use common::{at, day, orders};
use dogana::{Duration, Gate, Ledger, State, Window};

const SUNDAY: &str = "2026-10-25T06:00:00Z";
const MONDAY: &str = "2026-10-26T06:00:00Z";
const TUESDAY: &str = "2026-10-27T06:00:00Z";
const WEDNESDAY: &str = "2026-10-28T06:00:00Z";

fn sunday_and_tuesday() -> Ledger {
    let c = orders();
    let ledger = Ledger::new(c.clone());
    let full = c.manifest("full", at(SUNDAY)).rows(1000).build().unwrap();
    let r = Gate::evaluate(&ledger, &full, &[], at(SUNDAY), Some("nightly"), &[]);
    assert!(r.accepted(), "{:?}", r.checks());
    let ledger = ledger.follow(&r).unwrap();
    let last3 = c
        .manifest("last3", at(TUESDAY))
        .window(Window::new(day("2026-10-25"), day("2026-10-27")))
        .rows(40)
        .build()
        .unwrap();
    let r = Gate::evaluate(&ledger, &last3, &[], at(TUESDAY), None, &[]);
    assert!(r.accepted(), "{:?}", r.checks());
    ledger.follow(&r).unwrap()
}

#[test]
fn sunday_full_then_tuesday_window_gives_three_regions() {
    // rule: TRANS-25
    let ledger = sunday_and_tuesday();
    let lines: Vec<String> = ledger.regions().iter().map(|r| r.to_string()).collect();
    assert_eq!(
        lines,
        [
            "(-inf, 2026-10-24]: complete as of 2026-10-25T06:00:00+00:00; deletions as of 2026-10-25T06:00:00+00:00",
            "[2026-10-25, 2026-10-27]: complete as of 2026-10-27T06:00:00+00:00; deletions as of 2026-10-27T06:00:00+00:00",
            "[2026-10-28, +inf): complete as of 2026-10-25T06:00:00+00:00; deletions as of 2026-10-25T06:00:00+00:00",
        ]
    );
}

#[test]
fn wednesday_changes_since_sunday_make_the_table_exact() {
    // rule: TRANS-26
    let c = orders();
    let ledger = sunday_and_tuesday();
    let changes = c
        .manifest("changes", at(WEDNESDAY))
        .since(at(SUNDAY))
        .rows(30)
        .tombstones(2)
        .build()
        .unwrap();
    let r = Gate::evaluate(&ledger, &changes, &[], at(WEDNESDAY), None, &[]);
    assert!(r.accepted(), "{:?}", r.checks());
    let ledger = ledger.follow(&r).unwrap();
    assert_eq!(ledger.region_count(), 1);
    let claims = ledger.claims(at(WEDNESDAY), Duration::MAX, None).unwrap();
    assert_eq!(claims.state(), State::Complete);
    assert_eq!(claims.exact_as_of(), Some(at(WEDNESDAY)));
}

#[test]
fn wednesday_changes_since_monday_are_refused() {
    // rule: TRANS-26
    let c = orders();
    let ledger = sunday_and_tuesday();
    let changes = c
        .manifest("changes", at(WEDNESDAY))
        .since(at(MONDAY))
        .rows(30)
        .tombstones(2)
        .build()
        .unwrap();
    let r = Gate::evaluate(&ledger, &changes, &[], at(WEDNESDAY), None, &[]);
    assert!(!r.accepted());
    let failed: Vec<_> = r.failures().map(|c| c.name().to_owned()).collect();
    assert_eq!(failed, ["transition"]);
    assert!(
        r.checks()[2].detail().contains("TRANS-08"),
        "{}",
        r.checks()[2]
    );
    // a rejection leaves ledger and publication as they were
    assert_eq!(Some(r.publication_id()), ledger.publication_id());
    assert!(ledger.follow(&r).is_err());
}
