//! Documents the reader refuses, each with the JSON path and the rule it names; and the
//! spellings it accepts because they are the same value (4.0, -0.0, offsets).

mod wire_support;

use dogana::{
    Action, Claims, Contract, FromWire, Ledger, Manifest, Position, Receipt, Region,
    SerializationError, Shape, Since, Value, Wire,
};
use serde_json::json;
use wire_support::*;

fn manifest_doc() -> String {
    wednesday_changes().to_json()
}

fn contract_doc() -> String {
    orders().to_json()
}

fn ledger_doc() -> String {
    sunday_and_tuesday().1.to_json()
}

fn receipt_doc() -> String {
    wednesday().0.to_json()
}

#[track_caller]
fn assert_refused(e: &SerializationError, path: &str, rule: &str) {
    assert_eq!(
        (e.0.field.as_str(), e.0.rule),
        (path, rule),
        "unexpected refusal: {e}"
    );
}

// ---- fields ----

#[test]
fn missing_field_is_named() {
    // rule: WIRE-07, WIRE-04
    let e = refusal::<Manifest>(&edit(&manifest_doc(), "/rows", None));
    assert_refused(&e, "$.rows", "WIRE-07");
    assert!(e.to_string().contains("defaults included"), "{e}");
}

#[test]
fn missing_default_field_is_refused_too() {
    // rule: WIRE-04
    let e = refusal::<Manifest>(&edit(&manifest_doc(), "/generation", None));
    assert_refused(&e, "$.generation", "WIRE-07");
}

#[test]
fn missing_field_of_a_nested_value_is_named_by_its_path() {
    // rule: WIRE-07, WIRE-03
    let e = refusal::<Contract>(&edit(&contract_doc(), "/shapes/last3/cost", None));
    assert_refused(&e, "$.shapes.last3.cost", "WIRE-07");
}

#[test]
fn unknown_field_is_refused() {
    // rule: WIRE-07, WIRE-37 (decided: readers are strict within version 4)
    let e = refusal::<Manifest>(&edit(&manifest_doc(), "/keys", Some(json!([1, 2]))));
    assert_refused(&e, "$.keys", "WIRE-07");
}

#[test]
fn unknown_field_deep_in_a_ledger_is_named_by_its_path() {
    // rule: WIRE-07
    let e = refusal::<Ledger>(&edit(&ledger_doc(), "/regions/1/shrink", Some(json!(3))));
    assert_refused(&e, "$.regions[1].shrink", "WIRE-07");
}

#[test]
fn a_document_that_is_not_an_object_is_refused() {
    // rule: WIRE-07
    assert_refused(&refusal::<Manifest>("[]"), "$", "WIRE-07");
    assert_refused(&refusal::<Manifest>("null"), "$", "WIRE-07");
}

// ---- versions and kinds ----

#[test]
fn earlier_versions_are_refused_naming_what_wrote_them() {
    // rule: WIRE-02
    for (version, wrote) in [
        (1, "dogana 0.1, whose manifests listed keys"),
        (2, "dogana 0.2 and 0.3, whose receipts carried ledgers"),
        (
            3,
            "dogana 0.4 to 0.6, whose contracts carried a shrink limit",
        ),
    ] {
        let e = refusal::<Manifest>(&edit(&manifest_doc(), "/version", Some(json!(version))));
        assert_refused(&e, "$.version", "WIRE-02");
        assert!(e.to_string().contains(wrote), "{e}");
    }
}

#[test]
fn unknown_versions_are_refused() {
    // rule: WIRE-02, WIRE-29, WIRE-37 (decided: exactly version 4 is read)
    for version in [json!(5), json!(0), json!(-4), json!(40), json!(1e300)] {
        let e = refusal::<Manifest>(&edit(&manifest_doc(), "/version", Some(version)));
        assert_refused(&e, "$.version", "WIRE-02");
    }
}

#[test]
fn version_must_be_a_number() {
    // rule: WIRE-07
    for version in [json!("4"), json!(true), json!(null)] {
        let e = refusal::<Manifest>(&edit(&manifest_doc(), "/version", Some(version)));
        assert_refused(&e, "$.version", "WIRE-07");
    }
}

#[test]
fn version_4_0_reads_as_4() {
    // rule: WIRE-06
    let text = manifest_doc().replace(r#""version":4"#, r#""version":4.0"#);
    assert!(text.contains("4.0"));
    assert_eq!(Manifest::from_json(&text).unwrap(), wednesday_changes());
}

#[test]
fn version_with_a_fraction_is_refused() {
    // rule: WIRE-06
    let text = manifest_doc().replace(r#""version":4"#, r#""version":4.5"#);
    assert_refused(&refusal::<Manifest>(&text), "$.version", "WIRE-06");
}

#[test]
fn a_nested_value_carries_its_own_version() {
    // rule: WIRE-03, WIRE-02
    let e = refusal::<Receipt>(&edit(
        &receipt_doc(),
        "/transition/plan/actions/1/version",
        Some(json!(3)),
    ));
    assert_refused(&e, "$.transition.plan.actions[1].version", "WIRE-02");
    let e = refusal::<Contract>(&edit(&contract_doc(), "/shapes/full/version", None));
    assert_refused(&e, "$.shapes.full.version", "WIRE-07");
}

#[test]
fn wrong_kind_is_refused() {
    // rule: WIRE-08
    let e = refusal::<Contract>(&manifest_doc());
    assert_refused(&e, "$.kind", "WIRE-08");
}

#[test]
fn wrong_kind_at_a_nested_position_is_refused() {
    // rule: WIRE-08
    let e = refusal::<Receipt>(&edit(
        &receipt_doc(),
        "/manifest/kind",
        Some(json!("Contract")),
    ));
    assert_refused(&e, "$.manifest.kind", "WIRE-08");
    let e = refusal::<Ledger>(&edit(
        &ledger_doc(),
        "/regions/2/kind",
        Some(json!("RegionClaim")),
    ));
    assert_refused(&e, "$.regions[2].kind", "WIRE-08");
}

#[test]
fn missing_kind_is_refused() {
    // rule: WIRE-07
    let e = refusal::<Manifest>(&edit(&manifest_doc(), "/kind", None));
    assert_refused(&e, "$.kind", "WIRE-07");
}

// ---- numbers ----

#[test]
fn a_bool_is_never_an_integer() {
    // rule: WIRE-07
    let e = refusal::<Manifest>(&edit(&manifest_doc(), "/rows", Some(json!(true))));
    assert_refused(&e, "$.rows", "WIRE-07");
}

#[test]
fn a_fraction_where_an_integer_is_expected_is_a_wrong_type() {
    // rule: WIRE-06
    let e = refusal::<Manifest>(&edit(&manifest_doc(), "/rows", Some(json!(4.5))));
    assert_refused(&e, "$.rows", "WIRE-06");
}

#[test]
fn a_zero_fraction_is_the_integer_it_spells() {
    // rule: WIRE-06
    let text = manifest_doc().replace(r#""rows":12"#, r#""rows":12.0"#);
    assert_eq!(Manifest::from_json(&text).unwrap().rows(), 12);
    let text = manifest_doc().replace(r#""rows":12"#, r#""rows":1.2e1"#);
    assert_eq!(Manifest::from_json(&text).unwrap().rows(), 12);
}

#[test]
fn minus_zero_is_zero() {
    // rule: WIRE-06
    let text = manifest_doc().replace(r#""tombstones":1"#, r#""tombstones":-0.0"#);
    let m = Manifest::from_json(&text).unwrap();
    assert_eq!(m.tombstones(), 0);
    let text = text.replace(r#""rows":12"#, r#""rows":-0"#);
    assert_eq!(Manifest::from_json(&text).unwrap().rows(), 0);
}

#[test]
fn minus_zero_in_a_value_position_is_the_integer_zero() {
    // rule: WIRE-06
    let doc = tuesday_last3()
        .to_json()
        .replace(r#"{"$date":"2026-10-25"}"#, "-0.0");
    let m = Manifest::from_json(&doc).unwrap();
    assert_eq!(m.window().unwrap().low, Value::Int(0));
}

#[test]
fn a_negative_count_is_refused() {
    // rule: WIRE-07
    let e = refusal::<Manifest>(&edit(&manifest_doc(), "/rows", Some(json!(-1))));
    assert_refused(&e, "$.rows", "WIRE-07");
}

#[test]
fn counts_and_positions_stay_within_2_pow_53_minus_1() {
    // rule: WIRE-24
    let max = Value::INT_MAX;
    let ok = edit(&manifest_doc(), "/rows", Some(json!(max)));
    assert_eq!(Manifest::from_json(&ok).unwrap().rows(), max as u64);
    for too_big in [json!(max + 1), json!(u64::MAX), json!(1e16)] {
        let e = refusal::<Manifest>(&edit(&manifest_doc(), "/rows", Some(too_big)));
        assert_refused(&e, "$.rows", "WIRE-24");
    }
    let feed = feed_receipts()[3].manifest().to_json();
    let e = refusal::<Manifest>(&edit(&feed, "/generation", Some(json!(-(max + 1)))));
    assert_refused(&e, "$.generation", "WIRE-24");
}

#[test]
fn integer_bounds_stay_within_the_value_domain() {
    // rule: DOMAIN-14, WIRE-25
    let base = Manifest::builder("t", "w", at(SUNDAY))
        .window(dogana::Window::new(1, 2))
        .rows(0)
        .build()
        .unwrap()
        .to_json();
    let ok = edit(&base, "/window/1", Some(json!(Value::INT_MAX)));
    assert_eq!(
        Manifest::from_json(&ok).unwrap().window().unwrap().high,
        Value::Int(Value::INT_MAX)
    );
    let e = refusal::<Manifest>(&edit(&base, "/window/1", Some(json!(Value::INT_MAX + 1))));
    assert_refused(&e, "$.window[1]", "DOMAIN-14");
}

#[test]
fn a_large_key_as_a_string_is_kept_exactly() {
    // rule: WIRE-25
    let m = Manifest::builder("t", "w", at(SUNDAY))
        .window(dogana::Window::new("9007199254740993", "9007199254740993"))
        .rows(0)
        .build()
        .unwrap();
    let back = Manifest::from_json(&m.to_json()).unwrap();
    assert_eq!(
        back.window().unwrap().low,
        Value::Str("9007199254740993".into())
    );
}

#[test]
fn an_integer_cost_must_be_exact_in_binary64() {
    // rule: WIRE-24
    let text = contract_doc().replace(r#""cost":10"#, r#""cost":9007199254740993"#);
    let e = refusal::<Contract>(&text);
    assert_refused(&e, "$.shapes.full.cost", "WIRE-24");
}

#[test]
fn non_finite_numbers_are_refused() {
    // rule: WIRE-31
    let text = contract_doc().replace(r#""cost":10"#, r#""cost":1e400"#);
    let e = refusal::<Contract>(&text);
    assert_refused(&e, "$.shapes.full.cost", "WIRE-31");
}

// ---- tags ----

#[test]
fn datetime_without_offset_is_refused() {
    // rule: WIRE-10, TRUST-09
    let e = refusal::<Manifest>(&edit(
        &manifest_doc(),
        "/produced_at/$datetime",
        Some(json!("2026-10-28T06:00:00")),
    ));
    assert_refused(&e, "$.produced_at", "WIRE-10");
}

#[test]
fn datetime_with_seven_fractional_digits_is_refused() {
    // rule: WIRE-13
    let e = refusal::<Manifest>(&edit(
        &manifest_doc(),
        "/produced_at/$datetime",
        Some(json!("2026-10-28T06:00:00.1234567Z")),
    ));
    assert_refused(&e, "$.produced_at", "WIRE-13");
}

#[test]
fn datetime_out_of_range_after_its_offset_is_refused() {
    // rule: WIRE-14
    let e = refusal::<Manifest>(&edit(
        &manifest_doc(),
        "/since/$datetime",
        Some(json!("0001-01-01T00:00:00+01:00")),
    ));
    assert_refused(&e, "$.since", "WIRE-14");
}

#[test]
fn datetime_offsets_and_fractions_normalize_to_utc() {
    // rule: WIRE-10, WIRE-11, DOMAIN-08
    let text = edit(
        &manifest_doc(),
        "/produced_at/$datetime",
        Some(json!("2026-10-28T08:00:00.000000+02:00")),
    );
    let m = Manifest::from_json(&text).unwrap();
    assert_eq!(m, wednesday_changes());
    assert!(m
        .to_json()
        .contains(r#""produced_at":{"$datetime":"2026-10-28T06:00:00+00:00"}"#));
}

#[test]
fn date_tag_outside_its_grammar_is_refused() {
    // rule: WIRE-09, WIRE-13
    let doc = tuesday_last3().to_json();
    for bad in [
        "2026-10-5",
        "2026-02-30",
        "2026-10-25T00:00:00Z",
        " 2026-10-25",
    ] {
        let e = refusal::<Manifest>(&edit(&doc, "/window/0/$date", Some(json!(bad))));
        assert_refused(&e, "$.window[0]", "WIRE-13");
    }
    let e = refusal::<Manifest>(&edit(&doc, "/window/0/$date", Some(json!(20261025))));
    assert_refused(&e, "$.window[0]", "WIRE-13");
}

#[test]
fn tag_object_with_an_extra_key_is_refused() {
    // rule: WIRE-13, WIRE-15
    let e = refusal::<Manifest>(&edit(
        &manifest_doc(),
        "/produced_at/tz",
        Some(json!("Europe/Rome")),
    ));
    assert_refused(&e, "$.produced_at.tz", "WIRE-13");
}

#[test]
fn a_date_where_a_datetime_is_expected_is_a_wrong_type() {
    // rule: WIRE-07
    let e = refusal::<Manifest>(&edit(
        &manifest_doc(),
        "/produced_at",
        Some(json!({"$date": "2026-10-28"})),
    ));
    assert_refused(&e, "$.produced_at", "WIRE-07");
    let e = refusal::<Manifest>(&edit(
        &manifest_doc(),
        "/produced_at",
        Some(json!("2026-10-28T06:00:00Z")),
    ));
    assert_refused(&e, "$.produced_at", "WIRE-07");
}

#[test]
fn negative_seconds_are_refused() {
    // rule: WIRE-12
    let e = refusal::<Contract>(&edit(
        &contract_doc(),
        "/shapes/last3/window_size/$seconds",
        Some(json!(-86400)),
    ));
    assert_refused(&e, "$.shapes.last3.window_size", "WIRE-12");
}

#[test]
fn seconds_that_would_round_are_refused() {
    // rule: WIRE-13
    let e = refusal::<Contract>(&edit(
        &contract_doc(),
        "/shapes/full/lookback",
        Some(json!({"$seconds": 0.0000001})),
    ));
    assert_refused(&e, "$.shapes.full.lookback", "WIRE-13");
}

#[test]
fn seconds_beyond_the_largest_duration_are_refused() {
    // rule: WIRE-14
    for too_big in [json!(1e20), json!(86_400_000_000_000i64), json!(u64::MAX)] {
        let e = refusal::<Contract>(&edit(
            &contract_doc(),
            "/shapes/last3/window_size/$seconds",
            Some(too_big),
        ));
        assert_refused(&e, "$.shapes.last3.window_size", "WIRE-14");
    }
}

#[test]
fn whole_seconds_written_as_a_float_read_exactly() {
    // rule: WIRE-12, WIRE-06
    let text = contract_doc().replace(r#""$seconds":259200"#, r#""$seconds":259200.0"#);
    assert_eq!(Contract::from_json(&text).unwrap(), orders());
}

// ---- strings and JSON ----

#[test]
fn lone_surrogate_is_refused() {
    // rule: WIRE-16
    let text = manifest_doc().replace(r#""table":"orders""#, r#""table":"orders\ud800""#);
    let e = refusal::<Manifest>(&text);
    assert_refused(&e, "$.table", "WIRE-16");
}

#[test]
fn duplicate_key_is_refused() {
    // rule: WIRE-07
    let text = manifest_doc().replace(r#""rows":12"#, r#""rows":12,"rows":13"#);
    let e = refusal::<Manifest>(&text);
    assert_refused(&e, "$.rows", "WIRE-07");
}

#[test]
fn a_million_nested_arrays_give_a_clean_error() {
    // rule: WIRE-07
    let depth = 1_000_000;
    let text = format!(r#"{{"table":{}{}}}"#, "[".repeat(depth), "]".repeat(depth));
    let e = refusal::<Manifest>(&text);
    assert_eq!(e.0.rule, "WIRE-07");
    assert!(e.0.field.starts_with("$.table[0][0]"), "{}", e.0.field);
    assert!(e.to_string().len() < 2000);
}

#[test]
fn a_megabyte_where_a_hash_belongs_gives_a_short_error() {
    // rule: MAN-23
    let big = "a".repeat(1 << 20);
    let e = refusal::<Manifest>(&edit(&manifest_doc(), "/content_hash", Some(json!(big))));
    assert_refused(&e, "$.content_hash", "MAN-23");
    assert!(e.to_string().len() < 500, "{} bytes", e.to_string().len());
}

#[test]
fn a_syntax_error_names_where_it_is() {
    // rule: WIRE-07
    let e = refusal::<Manifest>(r#"{"version":4,"kind":"Manifest","rows":}"#);
    assert_eq!(e.0.rule, "WIRE-07");
    assert_eq!(e.0.field, "$.rows");
}

// ---- enums ----

#[test]
fn enum_values_are_the_wire_names() {
    // rule: WIRE-32
    let e = refusal::<Contract>(&edit(
        &contract_doc(),
        "/shapes/full/coverage",
        Some(json!("Table")),
    ));
    assert_refused(&e, "$.shapes.full.coverage", "WIRE-32");
    let e = refusal::<Receipt>(&edit(&receipt_doc(), "/outcome", Some(json!("approved"))));
    assert_refused(&e, "$.outcome", "WIRE-32");
    let e = refusal::<Receipt>(&edit(
        &receipt_doc(),
        "/transition/plan/actions/0/action",
        Some(json!("merge")),
    ));
    assert_refused(&e, "$.transition.plan.actions[0].action", "WIRE-32");
}

#[test]
fn type_names_are_the_six() {
    // rule: DOMAIN-05
    let e = refusal::<Contract>(&edit(
        &contract_doc(),
        "/types/id",
        Some(json!("decimal(12,2)")),
    ));
    assert_refused(&e, "$.types.id", "DOMAIN-05");
}

// ---- constructor rules keep their rule, under a path ----

#[test]
fn contract_rules_come_back_with_the_json_path() {
    // rule: CONTRACT-40, CONTRACT-47
    let e = refusal::<Contract>(&edit(
        &contract_doc(),
        "/shapes/last3/window_size/$seconds",
        Some(json!(3600)),
    ));
    assert_refused(&e, "$.shapes.last3.window_size", "CONTRACT-40");
}

#[test]
fn shape_names_that_are_not_identifiers_are_quoted_in_paths() {
    // rule: CONTRACT-35
    let c = Contract::builder("orders", ["id"])
        .shape("last 3 days", Shape::window().size(days(3)))
        .window_column("order_date")
        .column("id", dogana::LogicalType::Int)
        .column("order_date", dogana::LogicalType::Date)
        .build()
        .unwrap();
    let e = refusal::<Contract>(&edit(
        &c.to_json(),
        "/shapes/last 3 days/window_size/$seconds",
        Some(json!(0)),
    ));
    assert_refused(&e, r#"$.shapes["last 3 days"].window_size"#, "CONTRACT-35");
}

#[test]
fn a_column_typed_but_never_bound_is_refused_at_its_path() {
    // rule: CONTRACT-05
    let e = refusal::<Contract>(&edit(
        &contract_doc(),
        "/types/amount",
        Some(json!("float")),
    ));
    assert_refused(&e, "$.types.amount", "CONTRACT-05");
}

#[test]
fn a_shape_outside_the_ten_is_refused_at_the_shape() {
    // rule: CONTRACT-29
    let e = refusal::<Contract>(&edit(
        &contract_doc(),
        "/shapes/full/deletions",
        Some(json!("tombstone")),
    ));
    assert_refused(&e, "$.shapes.full", "CONTRACT-29");
}

#[test]
fn a_negative_cost_is_refused() {
    // rule: CONTRACT-33
    let e = refusal::<Shape>(&edit(&Shape::full().to_json(), "/cost", Some(json!(-1))));
    assert_refused(&e, "$.cost", "CONTRACT-33");
}

#[test]
fn region_dates_in_the_wrong_order_are_refused() {
    // rule: LEDGER-05
    let e = refusal::<Ledger>(&edit(
        &ledger_doc(),
        "/regions/1/deletions_as_of/$datetime",
        Some(json!("2026-10-28T00:00:00Z")),
    ));
    assert_refused(&e, "$.regions[1].deletions_as_of", "LEDGER-05");
}

#[test]
fn regions_that_do_not_partition_the_domain_are_refused() {
    // rule: LEDGER-03
    let e = refusal::<Ledger>(&edit(
        &ledger_doc(),
        "/regions/0/high/$date",
        Some(json!("2026-10-23")),
    ));
    assert_refused(&e, "$.regions[0].high", "LEDGER-03");
}

#[test]
fn an_empty_region_is_refused() {
    // rule: DOMAIN-18
    let r = Region::new(
        Some(Value::Int(5)),
        Some(Value::Int(9)),
        false,
        false,
        None,
        None,
    )
    .unwrap();
    let e = refusal::<Region>(&edit(&r.to_json(), "/high", Some(json!(4))));
    assert_refused(&e, "$.high", "DOMAIN-18");
}

#[test]
fn an_empty_generation_token_is_refused() {
    // rule: MAN-09
    let doc = feed_receipts()[1].manifest().to_json();
    let e = refusal::<Manifest>(&edit(&doc, "/since", Some(json!(""))));
    assert_refused(&e, "$.since", "MAN-09");
}

#[test]
fn since_reads_by_its_json_type() {
    // rule: MAN-08, MAN-09, MAN-10
    let token = feed_receipts()[1].manifest().clone();
    assert_eq!(
        token.since(),
        Some(&Since::Position(Position::Token("g-41".into())))
    );
    assert_eq!(Manifest::from_json(&token.to_json()).unwrap(), token);
    let seq = feed_receipts()[3].manifest().clone();
    assert_eq!(seq.since(), Some(&Since::Position(Position::Sequence(990))));
    assert_eq!(Manifest::from_json(&seq.to_json()).unwrap(), seq);
}

#[test]
fn a_window_is_two_values() {
    // rule: WIRE-05
    let doc = tuesday_last3().to_json();
    let three = json!([{"$date": "2026-10-25"}, {"$date": "2026-10-26"}, {"$date": "2026-10-27"}]);
    let e = refusal::<Manifest>(&edit(&doc, "/window", Some(three)));
    assert_refused(&e, "$.window", "WIRE-05");
    let e = refusal::<Manifest>(&edit(&doc, "/window/1", None));
    assert_refused(&e, "$.window", "WIRE-05");
}

// ---- receipts: structure that cannot be wrong without being forged ----

#[test]
fn a_rejection_carries_no_transition() {
    // rule: GATE-15
    let accepted = wednesday().0.to_value();
    let doc = edit(
        &rejected_by_gate().to_json(),
        "/transition",
        Some(accepted["transition"].clone()),
    );
    assert_refused(&refusal::<Receipt>(&doc), "$.transition", "GATE-15");
}

#[test]
fn an_acceptance_carries_its_transition() {
    // rule: GATE-15
    let e = refusal::<Receipt>(&edit(&receipt_doc(), "/transition", Some(json!(null))));
    assert_refused(&e, "$.transition", "GATE-15");
    let replay = wednesday().0.as_replay().unwrap().to_json();
    let e = refusal::<Receipt>(&edit(&replay, "/transition", Some(json!(null))));
    assert_refused(&e, "$.transition", "GATE-15");
}

#[test]
fn an_acceptance_names_a_chain_head() {
    // rule: GATE-19, RECV-15
    for bad in [json!("None"), json!(""), json!("F".repeat(64))] {
        let e = refusal::<Receipt>(&edit(&receipt_doc(), "/publication_id", Some(bad)));
        assert_refused(&e, "$.publication_id", "GATE-19");
    }
    let e = refusal::<Receipt>(&edit(&receipt_doc(), "/ledger_identity", Some(json!(""))));
    assert_refused(&e, "$.ledger_identity", "GATE-19");
}

#[test]
fn a_rejection_keeps_the_publication_it_found() {
    // rule: GATE-18, GATE-20
    let doc = rejected_by_receiver().to_json();
    assert!(Receipt::from_json(&doc).is_ok());
    let e = refusal::<Receipt>(&edit(&doc, "/publication_id", Some(json!("a".repeat(64)))));
    assert_refused(&e, "$.publication_id", "GATE-18");
    let doc = rejected_by_gate().to_json();
    let e = refusal::<Receipt>(&edit(&doc, "/publication_id", Some(json!("None"))));
    assert_refused(&e, "$.publication_id", "GATE-18");
}

#[test]
fn claims_state_must_follow_from_the_region_and_the_limit() {
    // rule: CLAIMS-06
    let doc = claims()[1].to_json();
    let fresh = Claims::from_json(&doc).unwrap();
    let i = fresh
        .regions()
        .iter()
        .position(|r| r.state() == dogana::State::Expired)
        .unwrap();
    let e = refusal::<Claims>(&edit(
        &doc,
        &format!("/regions/{i}/state"),
        Some(json!("complete")),
    ));
    assert_refused(&e, &format!("$.regions[{i}].state"), "CLAIMS-06");
}

#[test]
fn replace_window_names_its_window() {
    // rule: PLAN-04
    let a = Action::new(
        dogana::ActionKind::ReplaceWindow,
        Some(dogana::Window::new(1, 2)),
        vec!["id".into()],
    );
    let e = refusal::<Action>(&edit(&a.to_json(), "/window", Some(json!(null))));
    assert_refused(&e, "$.window", "PLAN-04");
    let upsert = Action::new(dogana::ActionKind::Upsert, None, vec![]);
    let e = refusal::<Action>(&edit(&upsert.to_json(), "/window", Some(json!([1, 2]))));
    assert_refused(&e, "$.window", "PLAN-04");
}

// ---- what a sender controls is bounded ----

/// Every refusal of a document a sender wrote stays short, whatever it holds.
#[track_caller]
fn short(e: &SerializationError) {
    let text = e.to_string();
    assert!(text.len() < 1000, "{} bytes: {}", text.len(), &text[..300]);
}

#[test]
fn a_name_of_50_mb_is_refused_in_a_short_message() {
    // rule: CONTRACT-48 (decided: names are at most 1,024 bytes), TRUST-07
    let huge = "t".repeat(50 << 20);
    let e = refusal::<Manifest>(&edit(&manifest_doc(), "/table", Some(json!(huge))));
    assert_refused(&e, "$.table", "CONTRACT-48");
    assert!(e.0.value.ends_with("…\" (52428800 bytes)"), "{}", e.0.value);
    short(&e);
    // smaller ones for the rest, to keep the test quick
    let huge = "t".repeat(4 << 20);
    let e = refusal::<Manifest>(&edit(&manifest_doc(), "/shape", Some(json!(huge))));
    assert_refused(&e, "$.shape", "CONTRACT-48");
    short(&e);
    let e = refusal::<Contract>(&edit(&contract_doc(), "/table", Some(json!(huge))));
    assert_refused(&e, "$.table", "CONTRACT-48");
    short(&e);
    // a receipt carries its manifest: it cannot carry the name either
    let e = refusal::<Receipt>(&edit(&receipt_doc(), "/manifest/table", Some(json!(huge))));
    assert_refused(&e, "$.manifest.table", "CONTRACT-48");
    short(&e);
}

#[test]
fn a_key_of_megabytes_is_cut_in_the_path() {
    // rule: WIRE-07, TRUST-07
    let huge = "k".repeat(4 << 20);
    let e = refusal::<Manifest>(&edit(&manifest_doc(), &format!("/{huge}"), Some(json!(1))));
    assert_eq!(e.0.rule, "WIRE-07");
    assert!(
        e.0.field.starts_with("$[\"kkkk") && e.0.field.ends_with("…\" (4194304 bytes)]"),
        "{}",
        &e.0.field[..100]
    );
    short(&e);
    // a shape named by 50 MB, whose fields' paths all hold the name
    let mut doc: serde_json::Value = serde_json::from_str(&contract_doc()).unwrap();
    let shape = doc["shapes"]["last3"].take();
    doc["shapes"][huge.as_str()] = shape;
    doc["shapes"][huge.as_str()]["cost"] = json!("ten");
    let e = refusal::<Contract>(&doc.to_string());
    assert_eq!(e.0.rule, "WIRE-07");
    short(&e);
    // a tag of megabytes
    let tag = json!({ "$datetime": huge });
    let e = refusal::<Manifest>(&edit(&manifest_doc(), "/produced_at", Some(tag)));
    assert_eq!(e.0.field, "$.produced_at");
    short(&e);
}

#[test]
fn names_and_tokens_up_to_1024_bytes_are_read() {
    // rule: CONTRACT-48, MAN-09 (decided: at most 1,024 bytes)
    let name = "é".repeat(512); // 1,024 bytes
    let c = Contract::builder(name.as_str(), ["id"])
        .shape(name.as_str(), Shape::full())
        .column("id", dogana::LogicalType::Int)
        .build()
        .unwrap();
    round_trip(&c);
    let longer = format!("{name}x");
    let e = Contract::builder(longer.as_str(), ["id"])
        .shape("full", Shape::full())
        .column("id", dogana::LogicalType::Int)
        .build()
        .unwrap_err();
    assert_eq!(
        (e.problem().field.as_str(), e.problem().rule),
        ("table", "CONTRACT-48")
    );
    assert!(e.to_string().contains("at most 1024 bytes"), "{e}");
    let e = refusal::<Manifest>(&edit(
        &manifest_doc(),
        "/since",
        Some(json!("g".repeat(1025))),
    ));
    // since of a timestamp read is a datetime: a long string there is a wrong tag
    short(&e);
}

#[test]
fn a_generation_token_of_megabytes_is_refused() {
    // rule: MAN-09 (decided: a token is at most 1,024 bytes), TRUST-07
    let c = every_shape_with_generations();
    let name = c
        .shapes()
        .iter()
        .find(|(_, s)| s.checkpoint() == dogana::Checkpoint::None)
        .map(|(n, _)| n.clone())
        .unwrap();
    let e = c
        .manifest(name, at("2026-10-25T00:00:00Z"))
        .generation(Position::Token("g".repeat(4 << 20)))
        .rows(1)
        .build()
        .unwrap_err();
    assert_eq!(
        (e.problem().field.as_str(), e.problem().rule),
        ("generation", "MAN-09")
    );
    assert!(e.to_string().len() < 400, "{e}");
}
