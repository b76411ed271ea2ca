//! The CONTRACT rules: what makes a contract valid.

mod common;
use common::*;
use dogana::{Contract, Deletions, Duration, InvalidContract, Ledger, LogicalType, Shape, Wire};

fn rule_of(e: InvalidContract) -> &'static str {
    e.problem().rule
}

fn keyed() -> dogana::ContractBuilder {
    Contract::builder("t", ["id"]).column("id", LogicalType::Int)
}

#[test]
fn table_key_and_shapes_come_first_and_the_rest_is_optional() {
    // rule: CONTRACT-01, CONTRACT-02, CONTRACT-04
    let c = keyed().shape("full", Shape::full()).build().unwrap();
    assert_eq!(c.table(), "t");
    assert_eq!(c.key(), ["id"]);
    assert_eq!(c.shapes().len(), 1);
    assert_eq!(c.window_column(), None);
    assert_eq!(c.cursor_column(), None);
    assert_eq!(c.deleted_column(), None);
    assert_eq!(c.schema_hash(), None);
    assert_eq!(c.start_at(), None);
}

#[test]
fn a_contract_without_shapes_is_refused() {
    // rule: CONTRACT-04, CONTRACT-47
    assert_eq!(rule_of(keyed().build().unwrap_err()), "CONTRACT-04");
}

#[test]
fn empty_key_is_keyless() {
    // rule: CONTRACT-03, CONTRACT-06
    let c = Contract::builder("e", Vec::<String>::new())
        .shape("full", Shape::full())
        .build()
        .unwrap();
    assert!(c.is_keyless());
    assert!(c.types().is_empty());
}

#[test]
fn types_must_name_every_bound_column() {
    // rule: CONTRACT-05
    let e = Contract::builder("t", ["id"])
        .shape("full", Shape::full())
        .build()
        .unwrap_err();
    assert_eq!(rule_of(e.clone()), "CONTRACT-05");
    assert!(e.to_string().contains("types.id"), "{e}");
}

#[test]
fn types_may_not_name_other_columns() {
    // rule: CONTRACT-05, CONTRACT-06
    let e = keyed()
        .shape("full", Shape::full())
        .column("amount", LogicalType::Float)
        .build()
        .unwrap_err();
    assert_eq!(rule_of(e), "CONTRACT-05");
}

#[test]
fn type_names_are_the_six() {
    // rule: CONTRACT-07
    assert!(LogicalType::from_name("timestamp").is_none());
    assert!(LogicalType::from_name("datetime").is_some());
}

#[test]
fn cursor_is_datetime_or_int() {
    // rule: CONTRACT-08
    let e = keyed()
        .shape("full", Shape::full())
        .cursor_column("u")
        .column("u", LogicalType::Str)
        .build()
        .unwrap_err();
    assert_eq!(rule_of(e), "CONTRACT-08");
    for t in [LogicalType::Int, LogicalType::Datetime] {
        assert!(keyed()
            .shape("full", Shape::full())
            .cursor_column("u")
            .column("u", t)
            .build()
            .is_ok());
    }
}

#[test]
fn deleted_column_is_bool() {
    // rule: CONTRACT-09
    let e = keyed()
        .shape("c", Shape::changes(Deletions::Tombstone))
        .deleted_column("d")
        .column("d", LogicalType::Int)
        .build()
        .unwrap_err();
    assert_eq!(rule_of(e), "CONTRACT-09");
}

#[test]
fn keys_and_windows_are_ordered_scalars() {
    // rule: CONTRACT-10, DOMAIN-07, DOMAIN-06
    let e = Contract::builder("t", ["f"])
        .shape("full", Shape::full())
        .column("f", LogicalType::Float)
        .build()
        .unwrap_err();
    assert_eq!(rule_of(e), "CONTRACT-10");
    let e = keyed()
        .shape("w", Shape::window())
        .window_column("b")
        .column("b", LogicalType::Bool)
        .build()
        .unwrap_err();
    assert_eq!(rule_of(e), "CONTRACT-10");
}

#[test]
fn deleted_column_is_distinct() {
    // rule: CONTRACT-11
    let e = Contract::builder("t", ["id"])
        .shape("c", Shape::changes(Deletions::Tombstone))
        .deleted_column("id")
        .column("id", LogicalType::Bool)
        .build()
        .unwrap_err();
    assert_eq!(rule_of(e), "CONTRACT-10"); // a bool key is refused first
    let e = keyed()
        .shape("c", Shape::changes(Deletions::Tombstone))
        .cursor_column("d")
        .deleted_column("d")
        .column("d", LogicalType::Bool)
        .build()
        .unwrap_err();
    // the shared column is typed bool, which a cursor cannot be, or collides: both refuse
    assert!(matches!(rule_of(e), "CONTRACT-08" | "CONTRACT-11"));
}

#[test]
fn window_column_exactly_with_a_window_shape() {
    // rule: CONTRACT-12
    let e = keyed().shape("w", Shape::window()).build().unwrap_err();
    assert_eq!(rule_of(e), "CONTRACT-12");
    let e = keyed()
        .shape("full", Shape::full())
        .window_column("d")
        .column("d", LogicalType::Date)
        .build()
        .unwrap_err();
    assert_eq!(rule_of(e), "CONTRACT-12");
}

#[test]
fn deleted_column_exactly_with_a_tombstone_shape() {
    // rule: CONTRACT-13
    let e = keyed()
        .shape("c", Shape::changes(Deletions::Tombstone))
        .build()
        .unwrap_err();
    assert_eq!(rule_of(e), "CONTRACT-13");
    let e = keyed()
        .shape("c", Shape::changes(Deletions::None))
        .deleted_column("d")
        .column("d", LogicalType::Bool)
        .build()
        .unwrap_err();
    assert_eq!(rule_of(e), "CONTRACT-13");
}

#[test]
fn window_may_be_a_key_column_but_not_the_cursor() {
    // rule: CONTRACT-14
    assert!(Contract::builder("t", ["day", "id"])
        .shape("w", Shape::window())
        .window_column("day")
        .column("day", LogicalType::Date)
        .column("id", LogicalType::Int)
        .build()
        .is_ok());
    let e = keyed()
        .shape("w", Shape::window())
        .window_column("u")
        .cursor_column("u")
        .column("u", LogicalType::Datetime)
        .build()
        .unwrap_err();
    assert_eq!(rule_of(e), "CONTRACT-14");
    let e = Contract::builder("t", ["id", "id"])
        .shape("full", Shape::full())
        .column("id", LogicalType::Int)
        .build()
        .unwrap_err();
    assert_eq!(rule_of(e), "CONTRACT-14");
}

#[test]
fn cursor_type_is_not_matched_to_checkpoints() {
    // rule: CONTRACT-15
    // An int cursor beside timestamp shapes is allowed; rows are checked only where the
    // cursor's type matches the read's checkpoint.
    assert!(keyed()
        .shape("c", Shape::changes(Deletions::None))
        .cursor_column("n")
        .column("n", LogicalType::Int)
        .build()
        .is_ok());
}

#[test]
fn schema_hash_is_sha256_hex() {
    // rule: CONTRACT-21, CONTRACT-20
    let e = keyed()
        .shape("full", Shape::full())
        .schema_hash("ABC")
        .build()
        .unwrap_err();
    assert_eq!(rule_of(e), "CONTRACT-21");
    let h = "a".repeat(64);
    let c = keyed()
        .shape("full", Shape::full())
        .schema_hash(h.clone())
        .build()
        .unwrap();
    assert_eq!(c.schema_hash(), Some(h.as_str()));
}

#[test]
fn keyless_changes_are_appends_only() {
    // rule: CONTRACT-23, CONTRACT-24
    let keyless = || Contract::builder("e", Vec::<String>::new());
    let e = keyless()
        .shape("w", Shape::window_changes(Deletions::None))
        .window_column("d")
        .column("d", LogicalType::Date)
        .build()
        .unwrap_err();
    assert_eq!(rule_of(e), "CONTRACT-23");
    for shape in [
        Shape::changes(Deletions::Tombstone),
        Shape::generations(Deletions::None),
        Shape::sequence(Deletions::None),
    ] {
        let mut b = keyless().shape("s", shape.clone());
        if shape.delivers_tombstones() {
            b = b.deleted_column("d").column("d", LogicalType::Bool);
        }
        assert_eq!(rule_of(b.build().unwrap_err()), "CONTRACT-24");
    }
    assert!(keyless()
        .shape("append", Shape::changes(Deletions::None))
        .build()
        .is_ok());
}

#[test]
fn keyless_contracts_may_have_complete_shapes() {
    // rule: CONTRACT-25
    let c = Contract::builder("e", Vec::<String>::new())
        .shape("full", Shape::full())
        .shape("w", Shape::window())
        .window_column("d")
        .column("d", LogicalType::Date)
        .build()
        .unwrap();
    let l = Ledger::new(c.clone());
    let m = c
        .manifest("w", hour(1))
        .window(days("2026-10-01", "2026-10-02"))
        .rows(2)
        .build()
        .unwrap();
    let (_, t) = l.transition(&m).unwrap();
    assert!(!t.plan().actions()[0].matches_keys());
}

#[test]
fn start_at_is_optional_and_allowed_on_any_contract() {
    // rule: CONTRACT-26, CONTRACT-27
    assert_eq!(events().start_at(), Some(hour(0)));
    assert!(keyed()
        .shape("full", Shape::full())
        .start_at(hour(0))
        .build()
        .is_ok());
    assert!(Contract::builder("e", Vec::<String>::new())
        .shape("append", Shape::changes(Deletions::None))
        .build()
        .is_ok());
}

#[test]
fn shape_has_six_properties() {
    // rule: CONTRACT-28, CONTRACT-44
    let s = Shape::window()
        .size(Duration::from_days(3).unwrap())
        .cost(2.5);
    assert_eq!(s.coverage(), dogana::Coverage::Window);
    assert_eq!(s.checkpoint(), dogana::Checkpoint::None);
    assert_eq!(s.deletions(), Deletions::Absence);
    assert_eq!(s.cost_value(), 2.5);
    assert_eq!(s.window_size(), Some(Duration::from_days(3).unwrap()));
    assert_eq!(s.lookback_value(), None);
    assert_eq!(Shape::full().cost_value(), 1.0);
}

#[test]
fn one_kind_of_position() {
    // rule: CONTRACT-31
    let e = keyed()
        .shape("g", Shape::generations(Deletions::None))
        .shape("s", Shape::sequence(Deletions::None))
        .build()
        .unwrap_err();
    assert_eq!(rule_of(e), "CONTRACT-31");
}

#[test]
fn cost_is_finite_and_nonnegative() {
    // rule: CONTRACT-33
    for bad in [-1.0, f64::NAN, f64::INFINITY] {
        let e = keyed()
            .shape("full", Shape::full().cost(bad))
            .build()
            .unwrap_err();
        assert_eq!(rule_of(e), "CONTRACT-33");
    }
    assert!(keyed()
        .shape("full", Shape::full().cost(0.0))
        .build()
        .is_ok());
}

#[test]
fn cost_never_affects_a_decision() {
    // rule: CONTRACT-34
    let cheap = orders_builder()
        .shape("full", Shape::full().cost(0.0))
        .build()
        .unwrap();
    let dear = orders();
    let a = Ledger::new(cheap.clone())
        .apply(&full(&cheap, hour(1)))
        .unwrap();
    let b = Ledger::new(dear.clone())
        .apply(&full(&dear, hour(1)))
        .unwrap();
    assert_eq!(a.regions(), b.regions());
}

#[test]
fn window_size_is_positive() {
    // rule: CONTRACT-35
    let e = orders_builder()
        .shape("last3", Shape::window().size(Duration::ZERO))
        .build()
        .unwrap_err();
    assert_eq!(rule_of(e), "CONTRACT-35");
}

#[test]
fn window_size_never_limits_a_pushed_window() {
    // rule: CONTRACT-36
    let c = orders();
    let wide = window(&c, "last3", days("2026-01-01", "2026-10-20"), hour(1));
    assert!(Ledger::new(c).apply(&wide).is_ok());
}

#[test]
fn rolling_window_needs_a_time_window_column() {
    // rule: CONTRACT-37
    let e = keyed()
        .shape("w", Shape::window().size(Duration::from_days(1).unwrap()))
        .window_column("p")
        .column("p", LogicalType::Int)
        .build()
        .unwrap_err();
    assert_eq!(rule_of(e), "CONTRACT-37");
}

#[test]
fn date_window_size_is_whole_days_and_only_on_window_shapes() {
    // rule: CONTRACT-40
    let e = orders_builder()
        .shape(
            "last3",
            Shape::window().size(Duration::from_seconds(3600).unwrap()),
        )
        .build()
        .unwrap_err();
    assert_eq!(rule_of(e), "CONTRACT-40");
    let e = orders_builder()
        .shape("full", Shape::full().size(Duration::from_days(1).unwrap()))
        .build()
        .unwrap_err();
    assert_eq!(rule_of(e), "CONTRACT-40");
}

#[test]
fn lookback_only_on_keyed_timestamp_shapes() {
    // rule: CONTRACT-41
    let week = Duration::from_days(7).unwrap();
    assert!(orders_builder()
        .shape("patch", Shape::changes(Deletions::None).lookback(week))
        .build()
        .is_ok());
    let e = orders_builder()
        .shape("full", Shape::full().lookback(week))
        .build()
        .unwrap_err();
    assert_eq!(rule_of(e), "CONTRACT-41");
    let e = Contract::builder("e", Vec::<String>::new())
        .shape("append", Shape::changes(Deletions::None).lookback(week))
        .build()
        .unwrap_err();
    assert_eq!(rule_of(e), "CONTRACT-41");
}

#[test]
fn shape_constructors_read_like_the_concepts() {
    // rule: CONTRACT-43
    let c = orders();
    assert_eq!(c.shape("full").unwrap().cost_value(), 10.0);
    assert_eq!(
        c.shape("last3").unwrap().window_size(),
        Some(Duration::from_days(3).unwrap())
    );
    assert!(c.shape("changes").unwrap().delivers_tombstones());
}

#[test]
fn contract_manifest_fills_table_and_schema_hash() {
    // rule: CONTRACT-45
    let h = "0".repeat(64);
    let c = keyed()
        .shape("full", Shape::full())
        .schema_hash(h.clone())
        .build()
        .unwrap();
    let m = c.manifest("full", hour(1)).rows(1).build().unwrap();
    assert_eq!(m.table(), "t");
    assert_eq!(m.schema_hash(), Some(h.as_str()));
}

#[test]
fn identity_normalizes_numbers() {
    // rule: CONTRACT-46
    let a = keyed()
        .shape("full", Shape::full().cost(2.0))
        .build()
        .unwrap();
    let doc = a.to_json();
    assert!(doc.contains(r#""cost":2,"#), "{doc}");
    let b = keyed()
        .shape("full", Shape::full().cost(2.5))
        .build()
        .unwrap();
    assert_ne!(a.identity(), b.identity());
    let default = keyed().shape("full", Shape::full()).build().unwrap();
    let one = keyed()
        .shape("full", Shape::full().cost(1.0))
        .build()
        .unwrap();
    assert_eq!(default.identity(), one.identity());
}

#[test]
fn table_names_are_nonempty() {
    // rule: CONTRACT-48
    let e = Contract::builder("", ["id"])
        .shape("full", Shape::full())
        .column("id", LogicalType::Int)
        .build()
        .unwrap_err();
    assert_eq!(rule_of(e), "CONTRACT-48");
}

#[test]
fn complete_and_changed_only_combinations() {
    // rule: CONTRACT-29, CONTRACT-30, CONTRACT-32
    assert!(Shape::new(
        dogana::Coverage::Window,
        dogana::Checkpoint::Timestamp,
        Deletions::Tombstone
    )
    .is_ok());
    assert!(Shape::new(
        dogana::Coverage::Window,
        dogana::Checkpoint::Generation,
        Deletions::None
    )
    .is_err());
}

#[test]
fn the_column_hash_leaves_out_the_deleted_column() {
    // rule: CONTRACT-18
    // The hash is over the columns the caller passes; receivers pass the loaded columns
    // without the deleted one, so adding the deleted column changes the hash.
    let with = dogana::column_hash(&[("id", "int"), ("deleted", "bool")]);
    let without = dogana::column_hash(&[("id", "int")]);
    assert_ne!(with, without);
}
