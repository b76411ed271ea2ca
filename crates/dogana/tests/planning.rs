//! Planning reads: `Requirement`, `plan_delivery`, `next_extraction` and the `Extraction`
//! request (PLANNER), through the public API.

use dogana::{
    next_extraction, plan_delivery, Contract, Date, Deletions, Duration, Extraction, Gate, Ledger,
    LogicalType, Manifest, Position, Requirement, Shape, Since, Timestamp, Value, Window, Wire,
};

fn at(s: &str) -> Timestamp {
    s.parse().unwrap()
}

fn day(s: &str) -> Value {
    Value::Date(s.parse::<Date>().unwrap())
}

fn days(a: &str, b: &str) -> Window {
    Window::new(day(a), day(b))
}

fn minutes(n: i64) -> Duration {
    Duration::from_seconds(60 * n).unwrap()
}

const SUNDAY: &str = "2026-10-25T06:00:00Z";
const MONDAY: &str = "2026-10-26T06:00:00Z";
const TUESDAY: &str = "2026-10-27T06:00:00Z";
const WEDNESDAY: &str = "2026-10-28T06:00:00Z";
const FRIDAY: &str = "2026-10-30T06:00:00Z";

/// The concepts' orders table: a full read, the last three days, changes with tombstones.
fn orders() -> Contract {
    Contract::builder("orders", ["id"])
        .shape("full", Shape::full().cost(10.0))
        .shape(
            "last3",
            Shape::window()
                .size(Duration::from_days(3).unwrap())
                .cost(2.0),
        )
        .shape("changes", Shape::changes(Deletions::Tombstone))
        .window_column("order_date")
        .cursor_column("updated_at")
        .deleted_column("deleted")
        .column("id", LogicalType::Int)
        .column("order_date", LogicalType::Date)
        .column("updated_at", LogicalType::Datetime)
        .column("deleted", LogicalType::Bool)
        .build()
        .unwrap()
}

/// A keyed table without a window column, with the given shapes.
fn table(shapes: &[(&str, Shape)]) -> Contract {
    let mut b = Contract::builder("t", ["id"]).column("id", LogicalType::Int);
    let tombstones = shapes.iter().any(|(_, s)| s.delivers_tombstones());
    for (name, shape) in shapes {
        b = b.shape(*name, shape.clone());
    }
    if tombstones {
        b = b
            .deleted_column("deleted")
            .column("deleted", LogicalType::Bool);
    }
    b.build().unwrap()
}

fn apply(ledger: &Ledger, m: Manifest) -> Ledger {
    ledger.apply(&m).unwrap()
}

fn full(c: &Contract, t: &str) -> Manifest {
    c.manifest("full", at(t)).rows(10).build().unwrap()
}

/// Sunday's full read of orders.
fn sunday() -> Ledger {
    let c = orders();
    apply(&Ledger::new(c.clone()), full(&c, SUNDAY))
}

/// Sunday's full read, then the window [2026-10-25, 2026-10-27] on Tuesday.
fn sunday_and_tuesday() -> Ledger {
    let c = orders();
    let m = c
        .manifest("last3", at(TUESDAY))
        .window(days("2026-10-25", "2026-10-27"))
        .rows(4)
        .build()
        .unwrap();
    apply(&sunday(), m)
}

/// The manifest an extraction asks for, with no rows, a fresh generation for a feed.
fn delivered(x: &Extraction, c: &Contract) -> Manifest {
    let mut b = x.manifest(c, 0);
    match x.since() {
        Some(Since::Position(Position::Sequence(p))) => b = b.generation(Position::Sequence(*p)),
        Some(Since::Position(Position::Token(_))) => {
            b = b.generation(Position::Token("next".into()))
        }
        _ => {}
    }
    b.build().unwrap()
}

fn rules(e: &dogana::PlanningError) -> Vec<&'static str> {
    e.reasons.iter().map(|p| p.rule).collect()
}

// ---------------------------------------------------------------------------------------------
// Requirement

#[test]
fn a_requirement_names_table_dates_and_window() {
    // rule: PLANNER-01
    let r = Requirement::new("orders", at(MONDAY))
        .with_deletions_as_of(at(SUNDAY))
        .with_window(days("2026-10-25", "2026-10-27"));
    assert_eq!(r.table(), "orders");
    assert_eq!(r.complete_as_of(), at(MONDAY));
    assert_eq!(r.deletions_as_of(), Some(at(SUNDAY)));
    assert_eq!(r.window(), Some(&days("2026-10-25", "2026-10-27")));
    let bare = Requirement::new("orders", at(MONDAY));
    assert_eq!((bare.deletions_as_of(), bare.window()), (None, None));
}

#[test]
fn a_fresh_requirement_is_the_oldest_date_a_limit_keeps() {
    // rule: PLANNER-10
    let r = Requirement::fresh("orders", at(MONDAY), Duration::from_days(1).unwrap());
    assert_eq!(r.complete_as_of(), at(SUNDAY));
    let forever = Requirement::fresh("orders", at(MONDAY), Duration::MAX);
    assert_eq!(forever.complete_as_of(), Timestamp::MIN);
}

#[test]
fn a_requirement_for_another_table_is_a_planning_error() {
    // rule: PLANNER-01
    let e = plan_delivery(&sunday(), &Requirement::new("Orders", at(MONDAY))).unwrap_err();
    assert_eq!(rules(&e), ["PLANNER-01"]);
    assert!(e.to_string().contains("\"orders\""), "{e}");
}

#[test]
fn a_requirement_window_of_the_wrong_type_is_a_planning_error() {
    // rule: PLANNER-01
    let r = Requirement::new("orders", at(MONDAY)).with_window(Window::new(1, 3));
    let e = plan_delivery(&sunday(), &r).unwrap_err();
    assert_eq!(rules(&e), ["MAN-07"]);
}

// ---------------------------------------------------------------------------------------------
// plan_delivery

#[test]
fn nothing_is_planned_when_every_region_meets_the_requirement() {
    // rule: PLANNER-02
    let ledger = sunday_and_tuesday();
    let r = Requirement::exact("orders", at(SUNDAY));
    assert_eq!(plan_delivery(&ledger, &r).unwrap(), None);
}

#[test]
fn nothing_is_planned_when_the_window_meets_it_though_the_table_does_not() {
    // rule: PLANNER-02
    let ledger = sunday_and_tuesday();
    let r = Requirement::exact("orders", at(TUESDAY)).with_window(days("2026-10-26", "2026-10-27"));
    assert_eq!(plan_delivery(&ledger, &r).unwrap(), None);
    let whole = Requirement::exact("orders", at(TUESDAY));
    assert!(plan_delivery(&ledger, &whole).unwrap().is_some());
}

#[test]
fn a_short_deletions_date_is_not_met() {
    // rule: PLANNER-02
    let c = table(&[
        ("full", Shape::full()),
        ("ch", Shape::changes(Deletions::None)),
    ]);
    let l = apply(&Ledger::new(c.clone()), full(&c, SUNDAY));
    let l = apply(
        &l,
        c.manifest("ch", at(MONDAY))
            .since(at(SUNDAY))
            .rows(1)
            .build()
            .unwrap(),
    );
    // (Mon, Sun): complete as of Monday, but deletions only as of Sunday
    assert_eq!(
        plan_delivery(&l, &Requirement::new("t", at(MONDAY))).unwrap(),
        None
    );
    let both = Requirement::new("t", at(MONDAY)).with_deletions_as_of(at(MONDAY));
    assert!(plan_delivery(&l, &both).unwrap().is_some());
}

#[test]
fn the_cheapest_shape_that_establishes_it_is_chosen() {
    // rule: PLANNER-03
    let x = plan_delivery(&sunday(), &Requirement::exact("orders", at(MONDAY)))
        .unwrap()
        .unwrap();
    assert_eq!(x.shape(), "changes");
    assert_eq!(x.since(), Some(&Since::Time(at(SUNDAY))));
}

#[test]
fn equal_costs_break_ties_by_name_in_code_point_order() {
    // rule: PLANNER-03
    // rule: PLANNER-10
    let c = table(&[
        ("afull", Shape::full()),
        ("Zfull", Shape::full()),
        ("\u{e9}full", Shape::full()),
    ]);
    let x = plan_delivery(&Ledger::new(c), &Requirement::new("t", at(SUNDAY)))
        .unwrap()
        .unwrap();
    assert_eq!(x.shape(), "Zfull");
}

#[test]
fn a_cheaper_shape_the_ledger_would_refuse_is_excluded() {
    // rule: PLANNER-04
    // A keyless append on an untouched ledger starts at start_at (TRANS-05); a boundary
    // before start_at would make since later than produced_at, which the ledger refuses.
    let c = Contract::builder("events", Vec::<String>::new())
        .shape("full", Shape::full().cost(10.0))
        .shape("append", Shape::changes(Deletions::None))
        .start_at(at(MONDAY))
        .build()
        .unwrap();
    let l = Ledger::new(c);
    let x = plan_delivery(&l, &Requirement::new("events", at(SUNDAY)))
        .unwrap()
        .unwrap();
    assert_eq!(x.shape(), "full");
    let later = plan_delivery(&l, &Requirement::new("events", at(TUESDAY)))
        .unwrap()
        .unwrap();
    assert_eq!(later.shape(), "append");
    assert_eq!(later.since(), Some(&Since::Time(at(MONDAY))));
}

#[test]
fn a_refused_candidate_is_named_with_the_transition_rule() {
    // rule: PLANNER-04
    let c = Contract::builder("events", Vec::<String>::new())
        .shape("append", Shape::changes(Deletions::None))
        .start_at(at(MONDAY))
        .build()
        .unwrap();
    let e = plan_delivery(&Ledger::new(c), &Requirement::new("events", at(SUNDAY))).unwrap_err();
    assert_eq!(rules(&e), ["PLANNER-04"]);
    assert!(e.reasons[0].reason.contains("TRANS-08"), "{e}");
}

#[test]
fn changes_are_excluded_where_a_covered_region_is_unknown() {
    // rule: PLANNER-05
    let c = orders();
    let m = c
        .manifest("last3", at(SUNDAY))
        .window(days("2026-10-23", "2026-10-25"))
        .rows(4)
        .build()
        .unwrap();
    let l = apply(&Ledger::new(c), m);
    let x = plan_delivery(&l, &Requirement::new("orders", at(MONDAY)))
        .unwrap()
        .unwrap();
    assert_eq!(x.shape(), "full");
}

#[test]
fn window_changes_serve_a_known_window_of_an_otherwise_unknown_table() {
    // rule: PLANNER-05
    let c = Contract::builder("orders", ["id"])
        .shape("win", Shape::window().cost(5.0))
        .shape("winch", Shape::window_changes(Deletions::Tombstone))
        .window_column("d")
        .deleted_column("deleted")
        .column("id", LogicalType::Int)
        .column("d", LogicalType::Int)
        .column("deleted", LogicalType::Bool)
        .build()
        .unwrap();
    let l = apply(
        &Ledger::new(c.clone()),
        c.manifest("win", at(SUNDAY))
            .window(Window::new(1, 10))
            .rows(1)
            .build()
            .unwrap(),
    );
    let inside = Requirement::exact("orders", at(MONDAY)).with_window(Window::new(2, 5));
    let x = plan_delivery(&l, &inside).unwrap().unwrap();
    assert_eq!(x.shape(), "winch");
    let across = Requirement::exact("orders", at(MONDAY)).with_window(Window::new(5, 15));
    let x = plan_delivery(&l, &across).unwrap().unwrap();
    assert_eq!(x.shape(), "win");
}

/// A table with a cheap generation feed and an expensive full read that issues generations.
fn fed(deletions: Deletions) -> Contract {
    table(&[
        ("full", Shape::full().cost(10.0)),
        ("feed", Shape::generations(deletions)),
        ("plain", Shape::changes(Deletions::None).cost(0.5)),
    ])
}

#[test]
fn a_feed_is_excluded_when_deletions_are_needed_where_the_dates_differ() {
    // rule: PLANNER-06
    let c = fed(Deletions::Tombstone);
    let l = apply(
        &Ledger::new(c.clone()),
        c.manifest("full", at(SUNDAY))
            .generation(Position::Token("g1".into()))
            .rows(1)
            .build()
            .unwrap(),
    );
    // changes without tombstones on Monday leave (Mon, Sun)
    let l = apply(
        &l,
        c.manifest("plain", at(MONDAY))
            .since(at(SUNDAY))
            .rows(1)
            .build()
            .unwrap(),
    );
    let r = Requirement::exact("t", at(TUESDAY));
    let x = plan_delivery(&l, &r).unwrap().unwrap();
    assert_eq!(x.shape(), "full");
}

#[test]
fn a_tombstone_feed_repairs_deletions_where_both_dates_are_equal() {
    // rule: PLANNER-06
    let c = fed(Deletions::Tombstone);
    let l = apply(
        &Ledger::new(c.clone()),
        c.manifest("full", at(SUNDAY))
            .generation(Position::Token("g1".into()))
            .rows(1)
            .build()
            .unwrap(),
    );
    let x = plan_delivery(&l, &Requirement::exact("t", at(TUESDAY)))
        .unwrap()
        .unwrap();
    assert_eq!(x.shape(), "feed");
    assert_eq!(
        x.since(),
        Some(&Since::Position(Position::Token("g1".into())))
    );
}

#[test]
fn a_feed_without_tombstones_never_reaches_a_deletions_date() {
    // rule: PLANNER-06
    let c = fed(Deletions::None);
    let l = apply(
        &Ledger::new(c.clone()),
        c.manifest("full", at(SUNDAY))
            .generation(Position::Token("g1".into()))
            .rows(1)
            .build()
            .unwrap(),
    );
    let r = Requirement::exact("t", at(TUESDAY));
    assert_eq!(plan_delivery(&l, &r).unwrap().unwrap().shape(), "full");
    let c_only = Requirement::new("t", at(TUESDAY));
    assert_eq!(
        plan_delivery(&l, &c_only).unwrap().unwrap().shape(),
        "plain"
    );
}

#[test]
fn a_whole_table_requirement_excludes_window_shapes() {
    // rule: PLANNER-07
    let c = Contract::builder("orders", ["id"])
        .shape("full", Shape::full().cost(10.0))
        .shape("win", Shape::window())
        .window_column("d")
        .column("id", LogicalType::Int)
        .column("d", LogicalType::Int)
        .build()
        .unwrap();
    let l = Ledger::new(c);
    let whole = plan_delivery(&l, &Requirement::new("orders", at(SUNDAY)))
        .unwrap()
        .unwrap();
    assert_eq!(whole.shape(), "full");
    let w = Window::new(3, 7);
    let windowed = plan_delivery(
        &l,
        &Requirement::new("orders", at(SUNDAY)).with_window(w.clone()),
    )
    .unwrap()
    .unwrap();
    assert_eq!(windowed.shape(), "win");
    // the window shape reads exactly the requirement's window
    assert_eq!(windowed.window(), Some(&w));
}

#[test]
fn no_suitable_shape_is_a_planning_error_naming_every_candidate() {
    // rule: PLANNER-08
    let c = Contract::builder("orders", ["id"])
        .shape("win", Shape::window())
        .shape("ch", Shape::changes(Deletions::None))
        .window_column("d")
        .column("id", LogicalType::Int)
        .column("d", LogicalType::Int)
        .build()
        .unwrap();
    let e = plan_delivery(&Ledger::new(c), &Requirement::new("orders", at(SUNDAY))).unwrap_err();
    let fields: Vec<&str> = e.reasons.iter().map(|p| p.field.as_str()).collect();
    assert_eq!(fields, ["shapes.ch", "shapes.win"]);
    assert_eq!(rules(&e), ["PLANNER-05", "PLANNER-07"]);
    let shown = e.to_string();
    assert!(shown.starts_with("no read can establish"), "{shown}");
}

#[test]
fn the_boundary_is_one_microsecond_after_the_latest_covered_date() {
    // rule: PLANNER-09
    // rule: PLANNER-10
    let ledger = sunday_and_tuesday();
    // required Monday, but Tuesday's window is covered by a whole-table read
    let x = plan_delivery(&ledger, &Requirement::exact("orders", at(MONDAY)))
        .unwrap()
        .unwrap();
    assert_eq!(x.shape(), "changes");
    assert_eq!(x.until(), at(TUESDAY).successor().unwrap());
}

#[test]
fn the_boundary_is_the_required_date_when_that_is_later() {
    // rule: PLANNER-09
    let x = plan_delivery(&sunday(), &Requirement::new("orders", at(FRIDAY)))
        .unwrap()
        .unwrap();
    assert_eq!(x.until(), at(FRIDAY));
    let d_later = Requirement::new("orders", at(MONDAY)).with_deletions_as_of(at(FRIDAY));
    assert_eq!(
        plan_delivery(&sunday(), &d_later).unwrap().unwrap().until(),
        at(FRIDAY)
    );
}

#[test]
fn a_window_read_needs_only_its_own_regions_older() {
    // rule: PLANNER-09
    // Without a cheaper whole-table read, the window read of [28, 29], proven on Sunday
    // only, may be at Monday, although Tuesday's window elsewhere is later.
    let c = Contract::builder("orders", ["id"])
        .shape("full", Shape::full().cost(10.0))
        .shape("last3", Shape::window().cost(2.0))
        .window_column("order_date")
        .column("id", LogicalType::Int)
        .column("order_date", LogicalType::Date)
        .build()
        .unwrap();
    let l = apply(&Ledger::new(c.clone()), full(&c, SUNDAY));
    let l = apply(
        &l,
        c.manifest("last3", at(TUESDAY))
            .window(days("2026-10-25", "2026-10-27"))
            .rows(1)
            .build()
            .unwrap(),
    );
    let r = Requirement::exact("orders", at(MONDAY)).with_window(days("2026-10-28", "2026-10-29"));
    let x = plan_delivery(&l, &r).unwrap().unwrap();
    assert_eq!((x.shape(), x.until()), ("last3", at(MONDAY)));
    // a whole-table read covers Tuesday's window, so it reads later
    let x = plan_delivery(&sunday_and_tuesday(), &r).unwrap().unwrap();
    assert_eq!(
        (x.shape(), x.until()),
        ("changes", at(TUESDAY).successor().unwrap())
    );
}

#[test]
fn timestamp_tombstones_start_early_enough_to_repair_deletions() {
    // rule: PLANNER-03
    let c = table(&[
        ("full", Shape::full().cost(10.0)),
        ("plain", Shape::changes(Deletions::None).cost(0.5)),
        ("tomb", Shape::changes(Deletions::Tombstone)),
    ]);
    let l = apply(&Ledger::new(c.clone()), full(&c, SUNDAY));
    let l = apply(
        &l,
        c.manifest("plain", at(MONDAY))
            .since(at(SUNDAY))
            .rows(1)
            .build()
            .unwrap(),
    );
    // (Mon, Sun): tombstones since Monday would leave d at Sunday; since Sunday repairs it
    let x = plan_delivery(&l, &Requirement::exact("t", at(TUESDAY)))
        .unwrap()
        .unwrap();
    assert_eq!(x.shape(), "tomb");
    assert_eq!(x.since(), Some(&Since::Time(at(SUNDAY))));
}

#[test]
fn a_planned_delivery_is_accepted_and_meets_the_requirement() {
    // rule: PLANNER-04
    // rule: PLANNER-09
    let ledger = sunday_and_tuesday();
    let r = Requirement::exact("orders", at(MONDAY));
    let x = plan_delivery(&ledger, &r).unwrap().unwrap();
    let m = delivered(&x, ledger.contract());
    let receipt = Gate::evaluate(&ledger, &m, &[], x.until(), None, &[]);
    assert!(receipt.accepted(), "{:?}", receipt.checks());
    let after = ledger.follow(&receipt).unwrap();
    assert_eq!(plan_delivery(&after, &r).unwrap(), None);
}

#[test]
fn the_planner_reads_the_lookback_of_a_timestamp_shape() {
    // rule: PLANNER-12
    // rule: CONTRACT-42
    let c = table(&[
        ("full", Shape::full().cost(10.0)),
        ("ch", Shape::changes(Deletions::None).lookback(minutes(30))),
    ]);
    let l = apply(&Ledger::new(c.clone()), full(&c, SUNDAY));
    let x = plan_delivery(&l, &Requirement::new("t", at(MONDAY)))
        .unwrap()
        .unwrap();
    assert_eq!(x.since(), Some(&Since::Time(at("2026-10-25T05:30:00Z"))));
}

// ---------------------------------------------------------------------------------------------
// next_extraction

#[test]
fn a_rolling_window_ends_at_until() {
    // rule: PLANNER-11
    // rule: PLANNER-16
    let x = next_extraction(&sunday(), "last3", at(TUESDAY), None).unwrap();
    assert_eq!(x.window(), Some(&days("2026-10-25", "2026-10-27")));
    assert_eq!(
        (x.shape(), x.until(), x.since()),
        ("last3", at(TUESDAY), None)
    );
}

#[test]
fn a_datetime_until_ends_a_date_window_on_its_utc_date() {
    // rule: PLANNER-17
    // 23:30 at UTC-02:00 is 01:30 the next day in UTC
    let until = at("2026-10-27T23:30:00-02:00");
    let x = next_extraction(&sunday(), "last3", until, None).unwrap();
    assert_eq!(x.window(), Some(&days("2026-10-26", "2026-10-28")));
}

#[test]
fn a_datetime_window_is_elapsed_time_ending_at_until() {
    // rule: PLANNER-16
    // rule: PLANNER-17
    let c = Contract::builder("events", ["id"])
        .shape("full", Shape::full())
        .shape("hour", Shape::window().size(minutes(60)))
        .window_column("at")
        .column("id", LogicalType::Int)
        .column("at", LogicalType::Datetime)
        .build()
        .unwrap();
    let x = next_extraction(&Ledger::new(c), "hour", at(MONDAY), None).unwrap();
    assert_eq!(
        x.window(),
        Some(&Window::new(at("2026-10-26T05:00:00.000001Z"), at(MONDAY)))
    );
}

#[test]
fn a_rolling_window_extends_back_to_meet_the_last_complete_evidence() {
    // rule: PLANNER-11
    // rule: PLANNER-15
    // Sunday full, Tuesday [25, 27]; a run on Friday reads [28, 30]: it meets Tuesday's
    // window, so it is not extended.
    let ledger = sunday_and_tuesday();
    let x = next_extraction(&ledger, "last3", at(FRIDAY), None).unwrap();
    assert_eq!(x.window(), Some(&days("2026-10-28", "2026-10-30")));
    // A run on Sunday 11-01 reads [30, 01]: the 28th and 29th were proven on Sunday 10-25
    // only, older than Tuesday's evidence below them, so the window reaches back to the 28th.
    let x = next_extraction(&ledger, "last3", at("2026-11-01T06:00:00Z"), None).unwrap();
    assert_eq!(x.window(), Some(&days("2026-10-28", "2026-11-01")));
}

#[test]
fn a_rolling_window_does_not_extend_over_uniform_evidence() {
    // rule: PLANNER-11
    let x = next_extraction(&sunday(), "last3", at(FRIDAY), None).unwrap();
    assert_eq!(x.window(), Some(&days("2026-10-28", "2026-10-30")));
}

#[test]
fn a_rolling_window_extends_over_unknown_values_to_the_last_evidence() {
    // rule: PLANNER-11
    let c = orders();
    let m = c
        .manifest("last3", at(MONDAY))
        .window(days("2026-10-24", "2026-10-26"))
        .rows(3)
        .build()
        .unwrap();
    let l = apply(&Ledger::new(c), m);
    let x = next_extraction(&l, "last3", at(FRIDAY), None).unwrap();
    assert_eq!(x.window(), Some(&days("2026-10-27", "2026-10-30")));
    // nothing proven below an untouched window: no extension
    let x = next_extraction(&Ledger::new(orders()), "last3", at(FRIDAY), None).unwrap();
    assert_eq!(x.window(), Some(&days("2026-10-28", "2026-10-30")));
}

#[test]
fn an_explicit_window_overrides_the_rolling_one() {
    // rule: PLANNER-15
    let ledger = sunday_and_tuesday();
    let w = days("2026-10-01", "2026-10-02");
    let x = next_extraction(&ledger, "last3", at(FRIDAY), Some(&w)).unwrap();
    assert_eq!(x.window(), Some(&w));
}

#[test]
fn a_window_shape_without_a_size_needs_a_window() {
    // rule: PLANNER-11
    let c = Contract::builder("orders", ["id"])
        .shape("win", Shape::window())
        .window_column("d")
        .column("id", LogicalType::Int)
        .column("d", LogicalType::Int)
        .build()
        .unwrap();
    let l = Ledger::new(c);
    let e = next_extraction(&l, "win", at(MONDAY), None).unwrap_err();
    assert_eq!(rules(&e), ["PLANNER-11"]);
    let x = next_extraction(&l, "win", at(MONDAY), Some(&Window::new(1, 2))).unwrap();
    assert_eq!(x.window(), Some(&Window::new(1, 2)));
}

#[test]
fn a_whole_table_shape_takes_no_window() {
    // rule: PLANNER-15
    let w = days("2026-10-01", "2026-10-02");
    let e = next_extraction(&sunday(), "full", at(MONDAY), Some(&w)).unwrap_err();
    assert_eq!(rules(&e), ["PLANNER-15"]);
}

#[test]
fn an_unknown_shape_name_is_a_planning_error() {
    // rule: PLANNER-15
    let e = next_extraction(&sunday(), "nightly", at(MONDAY), None).unwrap_err();
    assert_eq!(rules(&e), ["PLANNER-15"]);
    assert_eq!(e.reasons[0].field, "shape");
    assert!(e.reasons[0].reason.contains("\"changes\""), "{e}");
}

#[test]
fn until_must_be_later_than_every_covered_date() {
    // rule: PLANNER-15
    let e = next_extraction(&sunday(), "full", at(SUNDAY), None).unwrap_err();
    assert_eq!(rules(&e), ["PLANNER-15"]);
    assert!(e.reasons[0].reason.contains("TRANS-02"), "{e}");
    assert!(next_extraction(&sunday(), "full", at(MONDAY), None).is_ok());
}

#[test]
fn a_complete_request_has_no_since() {
    // rule: PLANNER-11
    let x = next_extraction(&sunday(), "full", at(MONDAY), None).unwrap();
    assert_eq!((x.window(), x.since()), (None, None));
}

#[test]
fn timestamp_since_is_the_earliest_covered_date() {
    // rule: PLANNER-12
    let x = next_extraction(&sunday_and_tuesday(), "changes", at(WEDNESDAY), None).unwrap();
    assert_eq!(x.since(), Some(&Since::Time(at(SUNDAY))));
}

#[test]
fn timestamp_since_subtracts_the_lookback() {
    // rule: PLANNER-12
    // rule: CONTRACT-42
    let c = table(&[
        ("full", Shape::full()),
        ("ch", Shape::changes(Deletions::None).lookback(minutes(90))),
    ]);
    let l = apply(&Ledger::new(c.clone()), full(&c, SUNDAY));
    let x = next_extraction(&l, "ch", at(MONDAY), None).unwrap();
    assert_eq!(x.since(), Some(&Since::Time(at("2026-10-25T04:30:00Z"))));
}

#[test]
fn a_lookback_past_the_domain_start_is_clamped() {
    // rule: PLANNER-12
    let c = table(&[
        ("full", Shape::full()),
        (
            "ch",
            Shape::changes(Deletions::None).lookback(Duration::MAX),
        ),
    ]);
    let l = apply(&Ledger::new(c.clone()), full(&c, SUNDAY));
    let x = next_extraction(&l, "ch", at(MONDAY), None).unwrap();
    assert_eq!(x.since(), Some(&Since::Time(Timestamp::MIN)));
}

#[test]
fn timestamp_changes_over_an_unknown_region_are_refused() {
    // rule: PLANNER-12
    let e = next_extraction(&Ledger::new(orders()), "changes", at(MONDAY), None).unwrap_err();
    assert_eq!(rules(&e), ["TRANS-04"]);
}

fn events() -> Contract {
    Contract::builder("events", Vec::<String>::new())
        .shape("full", Shape::full().cost(10.0))
        .shape("win", Shape::window().cost(5.0))
        .shape("append", Shape::changes(Deletions::None))
        .window_column("d")
        .column("d", LogicalType::Int)
        .start_at(at("2026-01-01T00:00:00Z"))
        .build()
        .unwrap()
}

#[test]
fn an_append_starts_at_the_shared_complete_date() {
    // rule: PLANNER-13
    let c = events();
    let l = apply(&Ledger::new(c.clone()), full(&c, SUNDAY));
    let x = next_extraction(&l, "append", at(MONDAY), None).unwrap();
    assert_eq!(x.since(), Some(&Since::Time(at(SUNDAY))));
}

#[test]
fn the_first_append_starts_at_start_at() {
    // rule: PLANNER-13
    let x = next_extraction(&Ledger::new(events()), "append", at(MONDAY), None).unwrap();
    assert_eq!(x.since(), Some(&Since::Time(at("2026-01-01T00:00:00Z"))));
}

#[test]
fn an_append_over_regions_of_different_dates_is_a_planning_error() {
    // rule: PLANNER-13
    let c = events();
    let l = apply(&Ledger::new(c.clone()), full(&c, SUNDAY));
    let l = apply(
        &l,
        c.manifest("win", at(MONDAY))
            .window(Window::new(1, 2))
            .rows(1)
            .build()
            .unwrap(),
    );
    let e = next_extraction(&l, "append", at(TUESDAY), None).unwrap_err();
    assert_eq!(rules(&e), ["PLANNER-13"]);
    // and plan_delivery then needs the full read
    let x = plan_delivery(&l, &Requirement::new("events", at(TUESDAY)))
        .unwrap()
        .unwrap();
    assert_eq!(x.shape(), "full");
}

#[test]
fn a_generation_request_starts_from_the_held_generation() {
    // rule: PLANNER-14
    let c = fed(Deletions::Tombstone);
    let l = apply(
        &Ledger::new(c.clone()),
        c.manifest("full", at(SUNDAY))
            .generation(Position::Token("g7".into()))
            .rows(1)
            .build()
            .unwrap(),
    );
    let x = next_extraction(&l, "feed", at(MONDAY), None).unwrap();
    assert_eq!(
        x.since(),
        Some(&Since::Position(Position::Token("g7".into())))
    );
}

#[test]
fn a_generation_request_without_a_held_generation_is_a_planning_error() {
    // rule: PLANNER-14
    let c = fed(Deletions::Tombstone);
    let l = apply(&Ledger::new(c.clone()), full(&c, SUNDAY));
    let e = next_extraction(&l, "feed", at(MONDAY), None).unwrap_err();
    assert_eq!(rules(&e), ["TRANS-09"]);
    assert!(e.reasons[0].reason.contains("PLANNER-14"), "{e}");
}

fn sequenced() -> Contract {
    table(&[
        ("full", Shape::full().cost(10.0)),
        ("log", Shape::sequence(Deletions::Tombstone)),
    ])
}

#[test]
fn a_sequence_request_starts_from_the_held_position() {
    // rule: PLANNER-14
    let c = sequenced();
    let l = apply(
        &Ledger::new(c.clone()),
        c.manifest("full", at(SUNDAY))
            .generation(Position::Sequence(41))
            .rows(1)
            .build()
            .unwrap(),
    );
    let x = next_extraction(&l, "log", at(MONDAY), None).unwrap();
    assert_eq!(x.since(), Some(&Since::Position(Position::Sequence(41))));
    // the caller sets the position the read ends at
    let m = x
        .manifest(&c, 3)
        .generation(Position::Sequence(50))
        .build()
        .unwrap();
    assert!(Gate::evaluate(&l, &m, &[], at(MONDAY), None, &[]).accepted());
}

#[test]
fn a_sequence_request_without_a_held_position_is_a_planning_error() {
    // rule: PLANNER-14
    let c = sequenced();
    let l = apply(&Ledger::new(c.clone()), full(&c, SUNDAY));
    let e = next_extraction(&l, "log", at(MONDAY), None).unwrap_err();
    assert_eq!(rules(&e), ["TRANS-11"]);
}

#[test]
fn a_next_extraction_is_admitted_by_the_gate() {
    // rule: PLANNER-11
    // rule: PLANNER-18
    let ledger = sunday_and_tuesday();
    let x = next_extraction(&ledger, "last3", at(FRIDAY), None).unwrap();
    let m = delivered(&x, ledger.contract());
    assert!(Gate::evaluate(&ledger, &m, &[], at(FRIDAY), None, &[]).accepted());
}

// ---------------------------------------------------------------------------------------------
// Extraction and wire

#[test]
fn an_extraction_stamps_its_manifest_at_until() {
    // rule: PLANNER-09
    let c = Contract::builder("orders", ["id"])
        .shape("full", Shape::full())
        .column("id", LogicalType::Int)
        .schema_hash("a".repeat(64))
        .build()
        .unwrap();
    let x = Extraction::new("orders", "full", at(MONDAY), None, None);
    let m = x.manifest(&c, 12).build().unwrap();
    assert_eq!(m.produced_at(), at(MONDAY));
    assert_eq!(m.schema_hash(), Some("a".repeat(64).as_str()));
    assert_eq!((m.table(), m.shape(), m.rows()), ("orders", "full", 12));
}

#[test]
fn an_extraction_for_another_table_is_refused_by_the_gate() {
    // rule: PLANNER-01
    let c = table(&[("full", Shape::full())]);
    let x = Extraction::new("other", "full", at(MONDAY), None, None);
    let m = x.manifest(&c, 1).build().unwrap();
    let r = Gate::evaluate(&Ledger::new(c), &m, &[], at(MONDAY), None, &[]);
    assert!(!r.accepted());
    assert!(r.checks()[0].detail().contains("MAN-04"));
}

#[test]
fn requirement_wire_form_has_every_field() {
    // rule: WIRE-01
    // rule: WIRE-04
    let r = Requirement::new("orders", at(MONDAY));
    assert_eq!(
        r.to_json(),
        r#"{"complete_as_of":{"$datetime":"2026-10-26T06:00:00+00:00"},"deletions_as_of":null,"kind":"Requirement","table":"orders","version":4,"window":null}"#
    );
    assert_eq!(
        r.identity_json(),
        r#"{"complete_as_of":{"$datetime":"2026-10-26T06:00:00+00:00"},"kind":"Requirement","table":"orders"}"#
    );
    let full = r
        .with_deletions_as_of(at(SUNDAY))
        .with_window(days("2026-10-25", "2026-10-27"));
    let v = full.to_value();
    assert_eq!(
        v["deletions_as_of"]["$datetime"],
        "2026-10-25T06:00:00+00:00"
    );
    assert_eq!(v["window"][1]["$date"], "2026-10-27");
}

#[test]
fn extraction_wire_form_has_every_field() {
    // rule: WIRE-01
    // rule: WIRE-04
    let x = Extraction::new(
        "t",
        "feed",
        at(MONDAY),
        None,
        Some(Since::Position(Position::Sequence(41))),
    );
    assert_eq!(
        x.to_json(),
        r#"{"kind":"Extraction","shape":"feed","since":41,"table":"t","until":{"$datetime":"2026-10-26T06:00:00+00:00"},"version":4,"window":null}"#
    );
    assert_eq!(
        x.identity_json(),
        r#"{"kind":"Extraction","shape":"feed","since":41,"table":"t","until":{"$datetime":"2026-10-26T06:00:00+00:00"}}"#
    );
}
