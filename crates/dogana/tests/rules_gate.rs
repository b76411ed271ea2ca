//! The GATE, CHECK, CLAIMS, RECV, EVOL and RECOVERY rules: decisions, receipts, claims,
//! following receipts and contract evolution.

mod common;
use common::*;
use dogana::{
    Check, Contract, Deletions, DoganaError, Duration, Gate, Ledger, LogicalType, Outcome, Shape,
    State, Wire,
};

fn names(r: &dogana::Receipt) -> Vec<&str> {
    r.checks().iter().map(|c| c.name()).collect()
}

#[test]
fn core_checks_come_first_in_order() {
    // rule: GATE-01, GATE-02, GATE-07
    let c = orders();
    let l = Ledger::new(c.clone());
    let m = full(&c, hour(1));
    let pre = Gate::preflight(&l, &m, hour(2));
    assert_eq!(
        pre.iter().map(|c| c.name()).collect::<Vec<_>>(),
        ["manifest", "receiver_time", "transition"]
    );
    let r = Gate::evaluate(
        &l,
        &m,
        &[Check::pass("rows", "10")],
        hour(2),
        None,
        &[Check::pass("together", "x")],
    );
    assert_eq!(
        names(&r),
        [
            "manifest",
            "receiver_time",
            "transition",
            "rows",
            "together"
        ]
    );
}

#[test]
fn manifest_check_reports_disagreement() {
    // rule: GATE-03
    let c = orders();
    let m = c.manifest("last3", hour(1)).rows(1).build().unwrap();
    let pre = Gate::preflight(&Ledger::new(c), &m, hour(2));
    assert!(!pre[0].passed());
    assert!(pre[0].detail().contains("MAN-05"), "{}", pre[0]);
}

#[test]
fn receiver_time_refuses_the_future() {
    // rule: GATE-04, TRANS-12
    let c = orders();
    let l = Ledger::new(c.clone());
    let r = Gate::evaluate(&l, &full(&c, hour(3)), &[], hour(2), None, &[]);
    assert_eq!(
        r.failures().map(|c| c.name()).collect::<Vec<_>>(),
        ["receiver_time"]
    );
    assert!(Gate::evaluate(&l, &full(&c, hour(2)), &[], hour(2), None, &[]).accepted());
}

#[test]
fn transition_check_reports_refusal() {
    // rule: GATE-05, GATE-10
    let c = orders();
    let l = applied(&c, &[full(&c, hour(2))]);
    let pre = Gate::preflight(&l, &full(&c, hour(1)), hour(3));
    assert!(!pre[2].passed());
    assert!(pre[2].detail().contains("TRANS-02"));
    let bad = c.manifest("last3", hour(4)).rows(1).build().unwrap();
    let pre = Gate::preflight(&l, &bad, hour(5));
    assert_eq!(pre[2].detail(), "not evaluated: the manifest check failed");
}

#[test]
fn any_failed_check_rejects() {
    // rule: GATE-06, CHECK-19, CHECK-01
    let c = orders();
    let l = Ledger::new(c.clone());
    let r = Gate::evaluate(
        &l,
        &full(&c, hour(1)),
        &[Check::pass("rows", ""), Check::fail("keys", "dup 7")],
        hour(2),
        None,
        &[],
    );
    assert_eq!(r.outcome(), Outcome::Rejected);
    assert_eq!(r.checks().len(), 5);
    let r = Gate::evaluate(
        &l,
        &full(&c, hour(1)),
        &[],
        hour(2),
        None,
        &[Check::fail("together", "")],
    );
    assert!(!r.accepted());
}

#[test]
fn reject_records_the_receivers_failure() {
    // rule: GATE-08, GATE-09
    let c = orders();
    let l = Ledger::new(c.clone());
    let m = full(&c, hour(1));
    let failed = [Check::fail("keys", "key 7 twice")];
    assert_eq!(
        Gate::reject(&l, &m, &failed, hour(2), Some("s3")),
        Gate::evaluate(&l, &m, &failed, hour(2), Some("s3"), &[])
    );
    let late = full(&c, hour(9));
    assert_eq!(
        Gate::reject(&l, &late, &[], hour(2), None),
        Gate::evaluate(&l, &late, &[], hour(2), None, &[])
    );
    let r = Gate::reject(&l, &m, &[], hour(2), None);
    assert!(!r.accepted());
    assert_eq!(r.checks().last().unwrap().name(), "receiver");
}

#[test]
fn receipts_carry_every_field() {
    // rule: GATE-12, GATE-13, GATE-16, GATE-17
    let c = orders();
    let l = applied(&c, &[full(&c, hour(1))]);
    let m = full(&c, hour(2));
    let r = Gate::evaluate(&l, &m, &[], hour(3), Some("nightly"), &[]);
    assert_eq!(r.manifest(), &m);
    assert_eq!(r.contract(), &c);
    assert_eq!(r.received_at(), hour(3));
    assert_eq!(r.source(), Some("nightly"));
    assert_eq!(r.base_publication_id(), l.publication_id());
    let next = l.apply(&m).unwrap();
    assert_eq!(Some(r.publication_id()), next.publication_id());
    assert_eq!(r.ledger_identity(), next.identity());
    let v = r.to_value();
    for f in [
        "manifest",
        "contract",
        "checks",
        "outcome",
        "received_at",
        "source",
        "base_publication_id",
        "publication_id",
        "ledger_identity",
        "transition",
    ] {
        assert!(v.get(f).is_some(), "{f}");
    }
}

#[test]
fn accepted_and_replayed_properties() {
    // rule: GATE-14, GATE-15, WIRE-20, RECV-02
    let c = orders();
    let l = Ledger::new(c.clone());
    let r = Gate::evaluate(&l, &full(&c, hour(1)), &[], hour(2), None, &[]);
    assert!(r.accepted() && !r.replayed() && r.transition().is_some());
    let replay = r.as_replay().unwrap();
    assert!(replay.accepted() && replay.replayed() && replay.transition().is_some());
    assert_eq!(replay.identity(), r.identity());
    let rejected = Gate::evaluate(&l, &full(&c, hour(3)), &[], hour(2), None, &[]);
    assert!(!rejected.accepted() && rejected.transition().is_none());
    assert!(rejected.as_replay().is_err());
}

#[test]
fn a_rejection_leaves_ledger_and_publication() {
    // rule: GATE-18, GATE-19, GATE-20
    let c = orders();
    let l = Ledger::new(c.clone());
    let r = Gate::evaluate(&l, &full(&c, hour(3)), &[], hour(2), None, &[]);
    assert_eq!(r.publication_id(), "None");
    assert_eq!(r.base_publication_id(), None);
    assert_eq!(r.ledger_identity(), l.identity());
    let l = applied(&c, &[full(&c, hour(1))]);
    let r = Gate::evaluate(&l, &full(&c, hour(3)), &[], hour(2), None, &[]);
    assert_eq!(Some(r.publication_id()), l.publication_id());
    assert!(!r.ledger_identity().is_empty());
}

#[test]
fn receipts_are_filed_under_the_contracts_table() {
    // rule: GATE-22
    let c = orders();
    let m = dogana::Manifest::builder("invoices", "full", hour(1))
        .rows(1)
        .build()
        .unwrap();
    let r = Gate::evaluate(&Ledger::new(c), &m, &[], hour(2), None, &[]);
    assert_eq!(r.table(), "orders");
    assert_eq!(r.outcome(), Outcome::Rejected);
}

#[test]
fn receipt_identity_covers_checks() {
    // rule: GATE-23
    let c = orders();
    let l = Ledger::new(c.clone());
    let m = full(&c, hour(1));
    let base = Gate::evaluate(&l, &m, &[Check::pass("rows", "10")], hour(2), None, &[]).identity();
    for other in [
        Check::pass("row", "10"),
        Check::pass("rows", "11"),
        Check::fail("rows", "10"),
    ] {
        assert_ne!(
            Gate::evaluate(&l, &m, &[other], hour(2), None, &[]).identity(),
            base
        );
    }
}

#[test]
fn the_error_tree() {
    // rule: GATE-24, GATE-26
    let c = orders();
    let l = applied(&c, &[full(&c, hour(2))]);
    let e: DoganaError = l.apply(&full(&c, hour(1))).unwrap_err().into();
    assert!(matches!(e, DoganaError::RejectedDelivery(_)));
    let e: DoganaError = Contract::builder("", ["id"]).build().unwrap_err().into();
    assert!(matches!(e, DoganaError::InvalidContract(_)));
    assert!(e.to_string().contains("CONTRACT-48"), "{e}");
}

#[test]
fn operational_failures_are_not_receipts() {
    // rule: GATE-25, CHECK-18
    // Only checks become rejections: an honest delivery with passing checks is accepted, and
    // nothing in the gate can fail for a reason other than a check.
    let c = orders();
    let r = Gate::evaluate(
        &Ledger::new(c.clone()),
        &full(&c, hour(1)),
        &[Check::pass("rows", "10")],
        hour(1),
        None,
        &[],
    );
    assert!(r.accepted());
}

#[test]
fn follow_checks_the_chain_and_the_ledger() {
    // rule: RECV-17, RECV-18
    let c = orders();
    let l = Ledger::new(c.clone());
    let r1 = Gate::evaluate(&l, &full(&c, hour(1)), &[], hour(1), None, &[]);
    let l1 = l.follow(&r1).unwrap();
    let r2 = Gate::evaluate(&l1, &full(&c, hour(2)), &[], hour(2), None, &[]);
    // skipping r1
    assert!(l.follow(&r2).is_err());
    // a replay publishes nothing
    assert!(l1.follow(&r1.as_replay().unwrap()).is_err());
    assert_eq!(
        l1.follow(&r2).unwrap().publication_id(),
        Some(r2.publication_id())
    );
}

#[test]
fn from_receipts_folds_accepted_and_ignores_rejected() {
    // rule: RECV-19, RECV-12, RECOVERY-01, RECV-22
    let c = orders();
    let mut l = Ledger::new(c.clone());
    let mut receipts = vec![];
    for (t, now) in [(1, 1), (5, 2), (2, 3), (3, 3)] {
        let r = Gate::evaluate(&l, &full(&c, hour(t)), &[], hour(now), None, &[]);
        if r.accepted() {
            l = l.follow(&r).unwrap();
            receipts.push(r.as_replay().unwrap());
        }
        receipts.push(r);
    }
    let rebuilt = Ledger::from_receipts(c, &receipts).unwrap();
    assert_eq!(rebuilt, l);
    assert_eq!(rebuilt.identity(), l.identity());
}

#[test]
fn from_receipts_refuses_missing_reordered_or_foreign() {
    // rule: RECV-20
    let c = orders();
    let l = Ledger::new(c.clone());
    let r1 = Gate::evaluate(&l, &full(&c, hour(1)), &[], hour(1), None, &[]);
    let l1 = l.follow(&r1).unwrap();
    let r2 = Gate::evaluate(&l1, &full(&c, hour(2)), &[], hour(2), None, &[]);
    assert!(Ledger::from_receipts(c.clone(), [&r2]).is_err());
    assert!(Ledger::from_receipts(c.clone(), [&r2, &r1]).is_err());
    let e = Ledger::from_receipts(parts(), [&r1]).unwrap_err();
    assert_eq!(e.0.rule, "RECV-20");
}

#[test]
fn reconstruction_uses_each_receipts_contract() {
    // rule: RECV-21, EVOL-04, EVOL-08
    let c1 = orders();
    let c2 = orders_builder()
        .shape("full", Shape::full().cost(3.0))
        .build()
        .unwrap();
    let l = Ledger::new(c1.clone());
    let r1 = Gate::evaluate(&l, &full(&c1, hour(1)), &[], hour(1), None, &[]);
    let l = l.follow(&r1).unwrap().with_contract(c2.clone()).unwrap();
    let r2 = Gate::evaluate(&l, &full(&c2, hour(2)), &[], hour(2), None, &[]);
    assert_eq!(r2.contract(), &c2);
    assert_eq!(r1.contract(), &c1);
    let l = l.follow(&r2).unwrap();
    assert_eq!(Ledger::from_receipts(c2, [&r1, &r2]).unwrap(), l);
}

#[test]
fn fixed_fields_refuse_once_there_is_history() {
    // rule: EVOL-01, EVOL-02, EVOL-06, EVOL-09, RECOVERY-03
    let c = orders();
    let l = applied(&c, &[full(&c, hour(1))]);
    let changed_key = Contract::builder("orders", ["id", "line"])
        .shape("full", Shape::full())
        .column("id", LogicalType::Int)
        .column("line", LogicalType::Int)
        .build()
        .unwrap();
    assert_eq!(
        l.with_contract(changed_key.clone())
            .unwrap_err()
            .problem()
            .rule,
        "EVOL-01"
    );
    let no_deleted = orders_builder()
        .shape("changes", Shape::changes(Deletions::None))
        .shape("window_changes", Shape::window_changes(Deletions::None))
        .build();
    let no_deleted = Contract::builder("orders", ["id"])
        .shape("full", Shape::full())
        .shape("last3", Shape::window())
        .window_column("order_date")
        .column("id", LogicalType::Int)
        .column("order_date", LogicalType::Date)
        .build()
        .map(|c| (c, no_deleted.is_err()))
        .unwrap();
    assert!(l.with_contract(no_deleted.0).is_err());
    // without history anything goes
    assert!(Ledger::new(c).with_contract(changed_key).is_ok());
}

#[test]
fn everything_else_may_evolve() {
    // rule: EVOL-03, EVOL-05, EVOL-07
    let c = orders();
    let l = applied(&c, &[full(&c, hour(1))]);
    let evolved = orders_builder()
        .shape("full", Shape::full().cost(99.0))
        .shape(
            "hourly",
            Shape::changes(Deletions::None).lookback(Duration::from_seconds(60).unwrap()),
        )
        .cursor_column("modified_at")
        .column("modified_at", LogicalType::Int)
        .schema_hash("e".repeat(64))
        .build();
    let evolved = match evolved {
        Ok(c) => c,
        Err(_) => orders_builder()
            .shape("full", Shape::full().cost(99.0))
            .shape(
                "hourly",
                Shape::changes(Deletions::None).lookback(Duration::from_seconds(60).unwrap()),
            )
            .schema_hash("e".repeat(64))
            .build()
            .unwrap(),
    };
    let moved = l.with_contract(evolved.clone()).unwrap();
    assert_eq!(moved.regions(), l.regions());
    assert_eq!(moved.publication_id(), l.publication_id());
    assert_ne!(moved.contract_identity(), l.contract_identity());
    let next = moved.apply(&full(&evolved, hour(2))).unwrap();
    let same_contract = l.apply(&full(&c, hour(2))).unwrap();
    assert_ne!(next.publication_id(), same_contract.publication_id());
}

#[test]
fn limit_is_named_and_exactly_limit_old_is_not_expired() {
    // rule: CLAIMS-01, CLAIMS-04, CLAIMS-06
    let c = orders();
    let l = applied(&c, &[full(&c, hour(0))]);
    let day = Duration::from_days(1).unwrap();
    assert_eq!(
        l.claims(hour(24), day, None).unwrap().state(),
        State::Complete
    );
    let past = dogana::Timestamp::from_micros(hour(24).as_micros() + 1).unwrap();
    assert_eq!(l.claims(past, day, None).unwrap().state(), State::Expired);
}

#[test]
fn durations_are_nonnegative() {
    // rule: CLAIMS-02
    assert!(Duration::from_micros(-1).is_err());
}

#[test]
fn claims_cut_to_a_window() {
    // rule: CLAIMS-03
    let c = orders();
    let l = applied(
        &c,
        &[window(
            &c,
            "last3",
            days("2026-10-01", "2026-10-10"),
            hour(1),
        )],
    );
    let claims = l
        .claims(
            hour(1),
            Duration::MAX,
            Some(&days("2026-10-05", "2026-10-20")),
        )
        .unwrap();
    let lines: Vec<String> = claims.regions().iter().map(|r| r.to_string()).collect();
    assert_eq!(
        lines,
        [
            "orders [2026-10-05, 2026-10-10]: complete; complete as of 2026-10-25T01:00:00+00:00; deletions as of 2026-10-25T01:00:00+00:00",
            "orders [2026-10-11, 2026-10-20]: unknown; complete as of unknown; deletions as of unknown",
        ]
    );
    assert!(l.claims(hour(1), Duration::MAX, Some(&ints(1, 2))).is_err());
}

#[test]
fn max_limit_expires_nothing() {
    // rule: CLAIMS-05
    let c = orders();
    let l = applied(&c, &[full(&c, at("0001-01-01T00:00:00Z"))]);
    assert_eq!(
        l.claims(at("9999-12-31T23:59:59Z"), Duration::MAX, None)
            .unwrap()
            .state(),
        State::Complete
    );
}

#[test]
fn table_state_is_the_worst_region() {
    // rule: CLAIMS-07, CLAIMS-16
    let c = orders();
    let l = applied(
        &c,
        &[window(
            &c,
            "last3",
            days("2026-10-01", "2026-10-10"),
            hour(1),
        )],
    );
    let claims = l.claims(hour(1), Duration::MAX, None).unwrap();
    assert_eq!(claims.state(), State::Unknown);
    assert_eq!(claims.exact_as_of(), None);
    assert_eq!(
        claims.summary("orders"),
        "orders: unknown; exact at no single instant"
    );
}

#[test]
fn table_dates_are_separate_minima() {
    // rule: CLAIMS-08, CLAIMS-09, CLAIMS-10, GROUP-03
    let c = orders();
    let l = applied(
        &c,
        &[
            full(&c, hour(1)),
            c.manifest("patch", hour(5))
                .since(hour(1))
                .rows(1)
                .build()
                .unwrap(),
            window(&c, "last3", days("2026-10-01", "2026-10-03"), hour(6)),
        ],
    );
    let claims = l
        .claims(hour(100), Duration::from_seconds(3600).unwrap(), None)
        .unwrap();
    assert_eq!(claims.complete_as_of(), Some(hour(5)));
    assert_eq!(claims.deletions_as_of(), Some(hour(1)));
    assert_eq!(claims.state(), State::Expired);
    // equal minima without a common instant
    let l = applied(
        &c,
        &[
            full(&c, hour(1)),
            window(&c, "last3", days("2026-10-01", "2026-10-03"), hour(2)),
        ],
    );
    let claims = l.claims(hour(2), Duration::MAX, None).unwrap();
    assert_eq!(claims.complete_as_of(), claims.deletions_as_of());
    assert_eq!(claims.exact_as_of(), None);
}

#[test]
fn claims_describe_the_current_ledger() {
    // rule: CLAIMS-11
    let c = orders();
    let l1 = applied(&c, &[full(&c, hour(1))]);
    let l2 = l1.apply(&full(&c, hour(2))).unwrap();
    assert_eq!(
        l2.claims(hour(1), Duration::MAX, None)
            .unwrap()
            .complete_as_of(),
        Some(hour(2))
    );
}

#[test]
fn a_region_proven_after_now_is_not_expired() {
    // rule: CLAIMS-12
    let c = orders();
    let l = applied(&c, &[full(&c, hour(10))]);
    assert_eq!(
        l.claims(hour(1), Duration::ZERO, None).unwrap().state(),
        State::Complete
    );
}

#[test]
fn exactness_ignores_freshness() {
    // rule: GROUP-01, GROUP-02
    let c = orders();
    let l = applied(&c, &[full(&c, hour(1))]);
    let claims = l.claims(hour(100), Duration::ZERO, None).unwrap();
    assert_eq!(claims.state(), State::Expired);
    assert_eq!(claims.exact_as_of(), Some(hour(1)));
}

#[test]
fn a_core_api_never_takes_rows() {
    // rule: TRUST-01, TRUST-02, TRUST-08, CHECK-01
    // The gate records checks by name only; dogana names none of the receiver's.
    let c = orders();
    let r = Gate::evaluate(
        &Ledger::new(c.clone()),
        &full(&c, hour(1)),
        &[Check::new("anything", true, "")],
        hour(1),
        None,
        &[],
    );
    assert_eq!(r.checks()[3].name(), "anything");
}
