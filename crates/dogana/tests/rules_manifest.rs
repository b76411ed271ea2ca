//! The MAN rules: what a manifest may declare. A manifest that disagrees with its contract is a
//! failed `manifest` check (a rejection), not an exception.

mod common;
use common::*;
use dogana::{
    Contract, Gate, Ledger, LogicalType, Manifest, Position, RejectedDelivery, Shape, Value,
    Window, Wire,
};

fn refusal(c: &Contract, m: &Manifest) -> RejectedDelivery {
    Ledger::new(c.clone()).apply(m).unwrap_err()
}

fn manifest_rule(c: &Contract, m: &Manifest) -> &'static str {
    let e = refusal(c, m);
    assert_eq!(e.check, "manifest", "{e}");
    e.problem.rule
}

#[test]
fn builder_takes_table_shape_produced_at_then_keywords() {
    // rule: MAN-01, MAN-02
    let m = Manifest::builder("orders", "full", hour(1))
        .rows(3)
        .build()
        .unwrap();
    assert_eq!(
        (m.table(), m.shape(), m.produced_at()),
        ("orders", "full", hour(1))
    );
    assert_eq!(m.window(), None);
    assert_eq!(m.since(), None);
    assert_eq!(m.generation(), None);
    assert_eq!(m.schema_hash(), None);
    assert_eq!(m.content_hash(), None);
    assert_eq!(m.tombstones(), 0);
    // rows is required
    let e = Manifest::builder("orders", "full", hour(1))
        .build()
        .unwrap_err();
    assert_eq!(e.problem().rule, "MAN-02");
}

#[test]
fn produced_at_is_aware() {
    // rule: MAN-03
    assert!("2026-10-25T00:00:00".parse::<dogana::Timestamp>().is_err());
}

#[test]
fn wrong_table_or_shape_fails_the_manifest_check() {
    // rule: MAN-04
    let c = orders();
    let m = Manifest::builder("invoices", "full", hour(1))
        .rows(1)
        .build()
        .unwrap();
    assert_eq!(manifest_rule(&c, &m), "MAN-04");
    let m = c.manifest("nightly", hour(1)).rows(1).build().unwrap();
    assert_eq!(manifest_rule(&c, &m), "MAN-04");
}

#[test]
fn window_exactly_for_window_coverage() {
    // rule: MAN-05
    let c = orders();
    let m = c.manifest("last3", hour(1)).rows(1).build().unwrap();
    assert_eq!(manifest_rule(&c, &m), "MAN-05");
    let m = c
        .manifest("full", hour(1))
        .window(days("2026-10-01", "2026-10-02"))
        .rows(1)
        .build()
        .unwrap();
    assert_eq!(manifest_rule(&c, &m), "MAN-05");
}

#[test]
fn since_exactly_for_changed_only() {
    // rule: MAN-06
    let c = orders();
    let m = c.manifest("changes", hour(1)).rows(1).build().unwrap();
    assert_eq!(manifest_rule(&c, &m), "MAN-06");
    let m = c
        .manifest("full", hour(2))
        .since(hour(1))
        .rows(1)
        .build()
        .unwrap();
    assert_eq!(manifest_rule(&c, &m), "MAN-06");
}

#[test]
fn window_bounds_are_typed_and_ordered() {
    // rule: MAN-07, DOMAIN-06, DOMAIN-18
    let c = orders();
    let m = window(&c, "last3", Window::new(1, 2), hour(1));
    assert_eq!(manifest_rule(&c, &m), "MAN-07");
    let m = window(
        &c,
        "last3",
        Window::new(day("2026-10-02"), Value::Datetime(hour(1))),
        hour(1),
    );
    assert_eq!(manifest_rule(&c, &m), "MAN-07");
    let m = window(&c, "last3", days("2026-10-02", "2026-10-01"), hour(1));
    assert_eq!(manifest_rule(&c, &m), "DOMAIN-18");
}

#[test]
fn timestamp_since_is_a_datetime() {
    // rule: MAN-08
    let c = orders();
    let m = c
        .manifest("changes", hour(2))
        .since(Position::Token("x".into()))
        .rows(1)
        .build()
        .unwrap();
    assert_eq!(manifest_rule(&c, &m), "MAN-08");
}

#[test]
fn generation_reads_carry_nonempty_tokens_and_issue_the_next() {
    // rule: MAN-09
    let c = feed();
    let e = c
        .manifest("gen", hour(2))
        .since(Position::Token(String::new()))
        .generation(Position::Token("g2".into()))
        .rows(1)
        .build()
        .unwrap_err();
    assert_eq!(e.problem().rule, "MAN-09");
    let m = c
        .manifest("gen", hour(2))
        .since(Position::Token("g1".into()))
        .rows(1)
        .build()
        .unwrap();
    assert_eq!(manifest_rule(&c, &m), "MAN-09");
}

#[test]
fn sequence_reads_cover_since_to_generation() {
    // rule: MAN-10
    let c = log();
    let m = c
        .manifest("seq", hour(2))
        .since(Position::Sequence(10))
        .generation(Position::Sequence(9))
        .rows(0)
        .build()
        .unwrap();
    assert_eq!(manifest_rule(&c, &m), "MAN-10");
}

#[test]
fn empty_intervals_hold_nothing() {
    // rule: MAN-11
    let c = orders();
    let m = c
        .manifest("changes", hour(2))
        .since(hour(2))
        .rows(1)
        .build()
        .unwrap();
    assert_eq!(manifest_rule(&c, &m), "MAN-11");
    let c = log();
    let m = c
        .manifest("seq", hour(2))
        .since(Position::Sequence(5))
        .generation(Position::Sequence(5))
        .tombstones(1)
        .rows(0)
        .build()
        .unwrap();
    assert_eq!(manifest_rule(&c, &m), "MAN-11");
}

#[test]
fn positions_have_the_tables_kind() {
    // rule: MAN-12
    let c = log();
    let m = c
        .manifest("full", hour(1))
        .generation(Position::Token("g".into()))
        .rows(1)
        .build()
        .unwrap();
    assert_eq!(manifest_rule(&c, &m), "MAN-12");
    let c = feed();
    let m = c
        .manifest("full", hour(1))
        .generation(Position::Sequence(3))
        .rows(1)
        .build()
        .unwrap();
    assert_eq!(manifest_rule(&c, &m), "MAN-12");
}

#[test]
fn complete_whole_table_may_issue_a_position_but_a_window_never() {
    // rule: MAN-13
    let c = feed();
    let m = c
        .manifest("full", hour(1))
        .generation(Position::Token("g1".into()))
        .rows(1)
        .build()
        .unwrap();
    let l = Ledger::new(c.clone()).apply(&m).unwrap();
    assert_eq!(l.generation(), Some(&Position::Token("g1".into())));
    let c = orders();
    let m = c
        .manifest("last3", hour(1))
        .window(days("2026-10-01", "2026-10-02"))
        .generation(Position::Token("g".into()))
        .rows(1)
        .build()
        .unwrap();
    assert_eq!(manifest_rule(&c, &m), "MAN-13");
}

#[test]
fn timestamp_changes_issue_no_position() {
    // rule: MAN-14
    let c = orders();
    let m = c
        .manifest("changes", hour(2))
        .since(hour(1))
        .generation(Position::Token("g".into()))
        .rows(1)
        .build()
        .unwrap();
    assert_eq!(manifest_rule(&c, &m), "MAN-14");
}

#[test]
fn counts_are_nonnegative_integers_within_binary64() {
    // rule: MAN-15
    let e = Manifest::builder("t", "full", hour(1))
        .rows(1 << 53)
        .build()
        .unwrap_err();
    assert_eq!(e.problem().rule, "WIRE-24");
    let m = Manifest::builder("t", "full", hour(1))
        .rows(3)
        .tombstones(2)
        .build()
        .unwrap();
    assert_eq!((m.rows(), m.tombstones()), (3, 2));
}

#[test]
fn tombstones_need_a_tombstone_shape() {
    // rule: MAN-16
    let c = orders();
    let l = applied(&c, &[full(&c, hour(1))]);
    let m = c
        .manifest("patch", hour(2))
        .since(hour(1))
        .rows(1)
        .tombstones(1)
        .build()
        .unwrap();
    let e = l.apply(&m).unwrap_err();
    assert_eq!(e.problem.rule, "MAN-16");
}

#[test]
fn manifests_carry_no_keys() {
    // rule: MAN-17
    let c = orders();
    let m = c.manifest("full", hour(1)).rows(1).build().unwrap();
    let doc = m.to_json();
    for field in ["keys", "deleted_keys", "\"key\""] {
        assert!(!doc.contains(field), "{doc}");
    }
}

#[test]
fn schema_hash_must_match_the_contracts() {
    // rule: MAN-22
    let h = "1".repeat(64);
    let c = orders_builder().schema_hash(h.clone()).build().unwrap();
    let m = Manifest::builder("orders", "full", hour(1))
        .rows(1)
        .build()
        .unwrap();
    assert_eq!(manifest_rule(&c, &m), "MAN-22");
    let m = Manifest::builder("orders", "full", hour(1))
        .rows(1)
        .schema_hash("2".repeat(64))
        .build()
        .unwrap();
    assert_eq!(manifest_rule(&c, &m), "MAN-22");
    assert!(Ledger::new(c.clone())
        .apply(&c.manifest("full", hour(1)).rows(1).build().unwrap())
        .is_ok());
}

#[test]
fn content_hash_is_lowercase_sha256_hex() {
    // rule: MAN-23, MAN-24
    for bad in ["A".repeat(64), "a".repeat(63), "g".repeat(64)] {
        let e = Manifest::builder("t", "full", hour(1))
            .rows(1)
            .content_hash(bad)
            .build()
            .unwrap_err();
        assert_eq!(e.problem().rule, "MAN-23");
    }
}

#[test]
fn content_hash_is_part_of_identity() {
    // rule: MAN-25
    let a = Manifest::builder("t", "full", hour(1))
        .rows(1)
        .content_hash("a".repeat(64))
        .build()
        .unwrap();
    let b = Manifest::builder("t", "full", hour(1))
        .rows(1)
        .content_hash("b".repeat(64))
        .build()
        .unwrap();
    assert_ne!(a.identity(), b.identity());
}

#[test]
fn a_correction_at_the_same_boundary_is_refused() {
    // rule: MAN-29, MAN-30
    let c = orders();
    let l = applied(&c, &[full(&c, hour(1))]);
    let corrected = c
        .manifest("full", hour(1))
        .rows(11)
        .content_hash("c".repeat(64))
        .build()
        .unwrap();
    let e = l.apply(&corrected).unwrap_err();
    assert_eq!(e.problem.rule, "TRANS-02");
    assert!(l
        .apply(&c.manifest("full", hour(2)).rows(11).build().unwrap())
        .is_ok());
}

#[test]
fn the_gate_reports_a_bad_manifest_as_a_failed_check() {
    // rule: MAN-04, GATE-22
    let c = orders();
    let m = Manifest::builder("invoices", "full", hour(1))
        .rows(1)
        .build()
        .unwrap();
    let r = Gate::evaluate(&Ledger::new(c), &m, &[], hour(2), None, &[]);
    assert!(!r.accepted());
    assert_eq!(r.table(), "orders");
    assert!(!r.checks()[0].passed());
}

#[test]
fn keyed_sequence_and_keyless_append_intervals() {
    // rule: MAN-19, MAN-20, MAN-21
    // A timestamp read's interval is (since, produced_at]: since may equal the region's c
    // (keyed reads may also start earlier and overlap); an append must start exactly there.
    let c = orders();
    let l = applied(&c, &[full(&c, hour(1))]);
    assert!(l
        .apply(
            &c.manifest("patch", hour(3))
                .since(hour(1))
                .rows(1)
                .build()
                .unwrap()
        )
        .is_ok());
    assert!(l
        .apply(
            &c.manifest("patch", hour(3))
                .since(hour(0))
                .rows(1)
                .build()
                .unwrap()
        )
        .is_ok());
    let e = events();
    let l = applied(
        &e,
        &[e.manifest("append", hour(1))
            .since(hour(0))
            .rows(5)
            .build()
            .unwrap()],
    );
    assert!(l
        .apply(
            &e.manifest("append", hour(2))
                .since(hour(0))
                .rows(1)
                .build()
                .unwrap()
        )
        .is_err());
    assert!(l
        .apply(
            &e.manifest("append", hour(2))
                .since(hour(1))
                .rows(1)
                .build()
                .unwrap()
        )
        .is_ok());
}

#[test]
fn one_final_row_per_key_is_the_receivers_check() {
    // rule: MAN-18
    // The core never sees rows: the manifest has no field that could list them.
    let m = Manifest::builder("t", "full", hour(1))
        .rows(1)
        .build()
        .unwrap();
    let fields: Vec<String> = match m.to_value() {
        serde_json::Value::Object(o) => o.keys().cloned().collect(),
        _ => unreachable!(),
    };
    assert_eq!(
        fields,
        [
            "content_hash",
            "generation",
            "kind",
            "produced_at",
            "rows",
            "schema_hash",
            "shape",
            "since",
            "table",
            "tombstones",
            "version",
            "window"
        ]
    );
}

#[test]
fn integer_window_bounds_stay_in_the_portable_range() {
    // rule: DOMAIN-14, WIRE-25
    let c = Contract::builder("p", ["id"])
        .shape("w", Shape::window())
        .window_column("part")
        .column("id", LogicalType::Int)
        .column("part", LogicalType::Int)
        .build()
        .unwrap();
    let e = c
        .manifest("w", hour(1))
        .window(Window::new(0, 1i64 << 53))
        .rows(0)
        .build()
        .unwrap_err();
    assert_eq!(e.problem().rule, "DOMAIN-14");
}
