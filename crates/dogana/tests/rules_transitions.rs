//! The LEDGER, TRANS, PLAN and ALG rules: what a delivery does to a ledger.

mod common;
use common::*;
use dogana::{ActionKind, Deletions, Ledger, Position, Shape, Wire};

fn rule(l: &Ledger, m: &dogana::Manifest) -> &'static str {
    let e = l.apply(m).unwrap_err();
    assert_eq!(e.check, "transition", "{e}");
    e.problem.rule
}

fn kinds(l: &Ledger, m: &dogana::Manifest) -> Vec<ActionKind> {
    let (_, t) = l.transition(m).unwrap();
    t.plan().actions().iter().map(|a| a.kind()).collect()
}

#[test]
fn a_new_ledger_is_one_unbounded_unknown_region() {
    // rule: LEDGER-02, LEDGER-07, LEDGER-10
    let l = Ledger::new(orders());
    assert_eq!(shape_of(&l), [("(-inf, +inf)".to_owned(), None, None)]);
    assert_eq!(l.generation(), None);
    assert_eq!(l.publication_id(), None);
}

#[test]
fn regions_partition_the_domain() {
    // rule: LEDGER-03, LEDGER-04
    let c = parts();
    let l = applied(
        &c,
        &[
            window(&c, "window", ints(10, 20), hour(1)),
            window(&c, "window", ints(30, 40), hour(2)),
        ],
    );
    assert_eq!(
        shape_of(&l).into_iter().map(|r| r.0).collect::<Vec<_>>(),
        [
            "(-inf, 9]",
            "[10, 20]",
            "[21, 29]",
            "[30, 40]",
            "[41, +inf)"
        ]
    );
}

#[test]
fn region_dates_are_both_or_neither_and_ordered() {
    // rule: LEDGER-05
    assert!(dogana::Dates::new(hour(1), hour(2)).is_err());
    assert!(dogana::Region::new(None, None, true, true, Some(hour(1)), None).is_err());
    assert!(dogana::Region::new(None, None, true, true, Some(hour(2)), Some(hour(1))).is_ok());
}

#[test]
fn a_table_without_a_window_column_has_one_region() {
    // rule: LEDGER-08
    let c = feed();
    let l = applied(&c, &[full(&c, hour(1))]);
    assert_eq!(l.regions().len(), 1);
}

#[test]
fn neighbours_with_equal_dates_merge() {
    // rule: LEDGER-09
    let c = parts();
    let l = applied(
        &c,
        &[
            full(&c, hour(1)),
            window(&c, "window", ints(10, 20), hour(2)),
            window(&c, "window", ints(21, 30), hour(2)),
        ],
    );
    let l2 = applied(
        &c,
        &[
            full(&c, hour(1)),
            window(&c, "window", ints(10, 30), hour(2)),
        ],
    );
    assert_eq!(shape_of(&l), shape_of(&l2));
    assert_eq!(l.regions().len(), 3);
}

#[test]
fn apply_is_accounting_only() {
    // rule: LEDGER-11, LEDGER-12, TRANS-12
    // A read from the future is admitted by the ledger: only the gate has a clock.
    let c = orders();
    let far = at("9000-01-01T00:00:00Z");
    assert!(Ledger::new(c.clone()).apply(&full(&c, far)).is_ok());
}

#[test]
fn apply_returns_a_new_ledger() {
    // rule: LEDGER-13
    let c = orders();
    let l = Ledger::new(c.clone());
    let after = l.apply(&full(&c, hour(1))).unwrap();
    assert!(l.regions()[0].is_unknown());
    assert!(!after.regions()[0].is_unknown());
    let e = after.apply(&full(&c, hour(1))).unwrap_err();
    assert_eq!(e.check, "transition");
}

#[test]
fn ledger_json_holds_contract_regions_generation_and_head() {
    // rule: LEDGER-14, LEDGER-15
    let c = orders();
    let l = applied(&c, &[full(&c, hour(1))]);
    let v = l.to_value();
    for f in ["contract", "regions", "generation", "publication_id"] {
        assert!(v.get(f).is_some(), "{f}");
    }
    let r = &v["regions"][0];
    for f in [
        "low",
        "high",
        "low_open",
        "high_open",
        "complete_as_of",
        "deletions_as_of",
    ] {
        assert!(r.get(f).is_some(), "{f}");
    }
    assert!(r["low"].is_null());
    assert_eq!(l.identity().len(), 64);
}

#[test]
fn a_full_without_a_position_keeps_the_held_one() {
    // rule: LEDGER-16
    let c = feed();
    let with = c
        .manifest("full", hour(1))
        .generation(Position::Token("g1".into()))
        .rows(1)
        .build()
        .unwrap();
    let l = applied(&c, &[with, full(&c, hour(2))]);
    assert_eq!(l.generation(), Some(&Position::Token("g1".into())));
}

#[test]
fn manifest_must_match_contract() {
    // rule: TRANS-01
    let c = orders();
    let m = c.manifest("last3", hour(1)).rows(1).build().unwrap();
    assert_eq!(Ledger::new(c).apply(&m).unwrap_err().check, "manifest");
}

#[test]
fn a_late_full_cannot_overwrite_a_newer_window() {
    // rule: TRANS-02
    let c = orders();
    let l = applied(
        &c,
        &[window(
            &c,
            "last3",
            days("2026-10-01", "2026-10-03"),
            hour(5),
        )],
    );
    assert_eq!(rule(&l, &full(&c, hour(4))), "TRANS-02");
    // unknown regions impose no bound: a window elsewhere is fine
    assert!(l
        .apply(&window(
            &c,
            "last3",
            days("2026-09-01", "2026-09-03"),
            hour(1)
        ))
        .is_ok());
}

#[test]
fn t_equal_to_c_is_refused_for_every_shape() {
    // rule: TRANS-03, ALG-03
    let c = orders();
    let l = applied(&c, &[full(&c, hour(1))]);
    assert_eq!(rule(&l, &full(&c, hour(1))), "TRANS-02");
    let m = c
        .manifest("changes", hour(1))
        .since(hour(1))
        .rows(0)
        .build()
        .unwrap();
    assert_eq!(rule(&l, &m), "TRANS-02");
}

#[test]
fn changes_need_a_base() {
    // rule: TRANS-04
    let c = orders();
    let m = c
        .manifest("changes", hour(2))
        .since(hour(1))
        .rows(1)
        .build()
        .unwrap();
    assert_eq!(rule(&Ledger::new(c.clone()), &m), "TRANS-04");
    let l = applied(
        &c,
        &[window(
            &c,
            "last3",
            days("2026-10-01", "2026-10-03"),
            hour(1),
        )],
    );
    assert_eq!(rule(&l, &m), "TRANS-04");
    let wm = c
        .manifest("window_changes", hour(2))
        .window(days("2026-10-01", "2026-10-03"))
        .since(hour(1))
        .rows(1)
        .build()
        .unwrap();
    assert!(l.apply(&wm).is_ok());
}

#[test]
fn the_first_append_starts_at_start_at() {
    // rule: TRANS-05
    let e = events();
    let l = Ledger::new(e.clone());
    let wrong = e
        .manifest("append", hour(2))
        .since(hour(1))
        .rows(1)
        .build()
        .unwrap();
    assert_eq!(rule(&l, &wrong), "TRANS-05");
    let right = e
        .manifest("append", hour(2))
        .since(hour(0))
        .rows(1)
        .build()
        .unwrap();
    let after = l.apply(&right).unwrap();
    assert_eq!(
        shape_of(&after),
        [("(-inf, +inf)".to_owned(), Some(hour(2)), Some(hour(2)))]
    );
    let no_start = dogana::Contract::builder("e", Vec::<String>::new())
        .shape("append", Shape::changes(Deletions::None))
        .build()
        .unwrap();
    let m = no_start
        .manifest("append", hour(2))
        .since(hour(0))
        .rows(1)
        .build()
        .unwrap();
    assert_eq!(rule(&Ledger::new(no_start), &m), "TRANS-05");
}

#[test]
fn later_appends_continue_exactly_at_c() {
    // rule: TRANS-06, TRANS-20
    let e = events();
    let l = applied(&e, &[full(&e, hour(1))]);
    let gap = e
        .manifest("append", hour(3))
        .since(hour(2))
        .rows(1)
        .build()
        .unwrap();
    assert_eq!(rule(&l, &gap), "TRANS-06");
    let ok = e
        .manifest("append", hour(3))
        .since(hour(1))
        .rows(1)
        .build()
        .unwrap();
    assert_eq!(shape_of(&l.apply(&ok).unwrap())[0].1, Some(hour(3)));
    assert_eq!(kinds(&l, &ok), [ActionKind::Append]);
}

#[test]
fn an_append_needs_a_level_table() {
    // rule: TRANS-07
    let c = dogana::Contract::builder("e", Vec::<String>::new())
        .shape("full", Shape::full())
        .shape("w", Shape::window())
        .shape("append", Shape::changes(Deletions::None))
        .window_column("d")
        .column("d", dogana::LogicalType::Date)
        .build()
        .unwrap();
    let l = applied(
        &c,
        &[
            full(&c, hour(1)),
            window(&c, "w", days("2026-10-01", "2026-10-02"), hour(2)),
        ],
    );
    let m = c
        .manifest("append", hour(3))
        .since(hour(1))
        .rows(1)
        .build()
        .unwrap();
    assert_eq!(rule(&l, &m), "TRANS-07");
}

#[test]
fn timestamp_since_is_no_later_than_t_or_c() {
    // rule: TRANS-08
    let c = orders();
    let l = applied(&c, &[full(&c, hour(2))]);
    let late = c
        .manifest("patch", hour(4))
        .since(hour(3))
        .rows(1)
        .build()
        .unwrap();
    assert_eq!(rule(&l, &late), "TRANS-08");
    let future = c
        .manifest("patch", hour(3))
        .since(hour(4))
        .rows(0)
        .build()
        .unwrap();
    assert_eq!(rule(&l, &future), "TRANS-08");
    let overlap = c
        .manifest("patch", hour(4))
        .since(hour(1))
        .rows(1)
        .build()
        .unwrap();
    assert!(l.apply(&overlap).is_ok());
}

#[test]
fn generation_reads_continue_the_held_generation() {
    // rule: TRANS-09
    let c = feed();
    let g = |s: &str| Position::Token(s.into());
    let base = c
        .manifest("full", hour(1))
        .generation(g("g1"))
        .rows(1)
        .build()
        .unwrap();
    let l = applied(&c, &[base]);
    let next = |since: &str| {
        c.manifest("gen", hour(2))
            .since(g(since))
            .generation(g("g2"))
            .rows(1)
            .build()
            .unwrap()
    };
    assert_eq!(rule(&l, &next("g0")), "TRANS-09");
    let after = l.apply(&next("g1")).unwrap();
    assert_eq!(after.generation(), Some(&g("g2")));
    // no held generation at all
    let bare = applied(&c, &[full(&c, hour(1))]);
    assert_eq!(rule(&bare, &next("g1")), "TRANS-09");
}

#[test]
fn sequence_reads_may_reread_but_never_skip_or_go_back() {
    // rule: TRANS-10
    let c = log();
    let base = c
        .manifest("full", hour(1))
        .generation(Position::Sequence(100))
        .rows(1)
        .build()
        .unwrap();
    let l = applied(&c, &[base]);
    let read = |s: i64, g: i64| {
        c.manifest("seq", hour(2))
            .since(Position::Sequence(s))
            .generation(Position::Sequence(g))
            .rows(u64::from(s != g))
            .build()
            .unwrap()
    };
    assert!(l.apply(&read(90, 120)).is_ok());
    assert!(l.apply(&read(100, 120)).is_ok());
    assert_eq!(rule(&l, &read(101, 120)), "TRANS-10");
    assert_eq!(rule(&l, &read(50, 99)), "TRANS-10");
}

#[test]
fn sequence_reads_need_a_held_integer_position() {
    // rule: TRANS-11
    let c = log();
    let l = applied(&c, &[full(&c, hour(1))]);
    let m = c
        .manifest("seq", hour(2))
        .since(Position::Sequence(0))
        .generation(Position::Sequence(5))
        .rows(1)
        .build()
        .unwrap();
    assert_eq!(rule(&l, &m), "TRANS-11");
    let repaired = l
        .apply(
            &c.manifest("full", hour(2))
                .generation(Position::Sequence(0))
                .rows(1)
                .build()
                .unwrap(),
        )
        .unwrap();
    let m = c
        .manifest("seq", hour(3))
        .since(Position::Sequence(0))
        .generation(Position::Sequence(5))
        .rows(1)
        .build()
        .unwrap();
    assert!(repaired.apply(&m).is_ok());
}

#[test]
fn each_acceptance_extends_the_chain() {
    // rule: TRANS-13, RECV-14
    let c = orders();
    let m = full(&c, hour(1));
    let l = applied(&c, std::slice::from_ref(&m));
    assert_eq!(
        l.publication_id(),
        Some(dogana::chain(None, &c.identity(), &m.identity()).as_str())
    );
    let m2 = full(&c, hour(2));
    let l2 = l.apply(&m2).unwrap();
    assert_eq!(
        l2.publication_id().unwrap(),
        dogana::chain(l.publication_id(), &c.identity(), &m2.identity())
    );
    // the first link hashes the string None
    use sha2::Digest;
    let text = format!("None:{}:{}", c.identity(), m.identity());
    let expected: String = sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(l.publication_id(), Some(expected.as_str()));
}

#[test]
fn a_full_leaves_one_exact_region() {
    // rule: TRANS-14
    let c = orders();
    let l = applied(
        &c,
        &[
            window(&c, "last3", days("2026-10-01", "2026-10-03"), hour(1)),
            full(&c, hour(2)),
        ],
    );
    assert_eq!(
        shape_of(&l),
        [("(-inf, +inf)".to_owned(), Some(hour(2)), Some(hour(2)))]
    );
}

#[test]
fn a_window_splits_at_its_edges() {
    // rule: TRANS-15, TRANS-22
    let c = orders();
    let l = applied(
        &c,
        &[
            full(&c, hour(1)),
            window(&c, "last3", days("2026-10-05", "2026-10-07"), hour(2)),
        ],
    );
    assert_eq!(
        shape_of(&l),
        [
            (
                "(-inf, 2026-10-04]".to_owned(),
                Some(hour(1)),
                Some(hour(1))
            ),
            (
                "[2026-10-05, 2026-10-07]".to_owned(),
                Some(hour(2)),
                Some(hour(2))
            ),
            (
                "[2026-10-08, +inf)".to_owned(),
                Some(hour(1)),
                Some(hour(1))
            ),
        ]
    );
}

#[test]
fn changes_set_c_and_a_window_read_of_changes_splits() {
    // rule: TRANS-16, TRANS-17
    let c = orders();
    let l = applied(&c, &[full(&c, hour(1))]);
    let m = c
        .manifest("window_changes", hour(3))
        .window(days("2026-10-05", "2026-10-07"))
        .since(hour(1))
        .rows(1)
        .build()
        .unwrap();
    let after = l.apply(&m).unwrap();
    assert_eq!(after.regions().len(), 3);
    assert_eq!(after.regions()[1].complete_as_of(), Some(hour(3)));
    let patch = c
        .manifest("patch", hour(3))
        .since(hour(1))
        .rows(1)
        .build()
        .unwrap();
    let after = l.apply(&patch).unwrap();
    assert_eq!(
        shape_of(&after),
        [("(-inf, +inf)".to_owned(), Some(hour(3)), Some(hour(1)))]
    );
}

#[test]
fn timestamp_tombstones_raise_d_only_where_since_reaches_it() {
    // rule: TRANS-18, TRANS-23
    let c = orders();
    let patched = applied(
        &c,
        &[
            full(&c, hour(1)),
            c.manifest("patch", hour(3))
                .since(hour(1))
                .rows(1)
                .build()
                .unwrap(),
        ],
    );
    // d = hour 1; tombstones since hour 2 leave deletions between 1 and 2 unreported
    let late = c
        .manifest("changes", hour(4))
        .since(hour(2))
        .rows(1)
        .build()
        .unwrap();
    assert_eq!(shape_of(&patched.apply(&late).unwrap())[0].2, Some(hour(1)));
    let reaching = c
        .manifest("changes", hour(4))
        .since(hour(1))
        .rows(1)
        .build()
        .unwrap();
    assert_eq!(
        shape_of(&patched.apply(&reaching).unwrap())[0].2,
        Some(hour(4))
    );
}

#[test]
fn feed_tombstones_raise_d_only_where_both_dates_were_equal() {
    // rule: TRANS-19, TRANS-21
    let c = feed();
    let g = |s: &str| Position::Token(s.into());
    let l = applied(
        &c,
        &[c.manifest("full", hour(1))
            .generation(g("g1"))
            .rows(1)
            .build()
            .unwrap()],
    );
    let plain = c
        .manifest("gen_plain", hour(2))
        .since(g("g1"))
        .generation(g("g2"))
        .rows(1)
        .build()
        .unwrap();
    let patched = l.apply(&plain).unwrap();
    assert_eq!(shape_of(&patched)[0].2, Some(hour(1)));
    let tomb = c
        .manifest("gen", hour(3))
        .since(g("g2"))
        .generation(g("g3"))
        .rows(1)
        .build()
        .unwrap();
    assert_eq!(shape_of(&patched.apply(&tomb).unwrap())[0].2, Some(hour(1)));
    let exact = c
        .manifest("gen", hour(2))
        .since(g("g1"))
        .generation(g("g2"))
        .rows(1)
        .build()
        .unwrap();
    let after = l.apply(&exact).unwrap();
    assert_eq!(shape_of(&after)[0].2, Some(hour(2)));
    assert_eq!(after.generation(), Some(&g("g2")));
}

#[test]
fn complete_windows_and_timestamp_changes_keep_the_position() {
    // rule: TRANS-21
    let c = log();
    let l = applied(
        &c,
        &[c.manifest("full", hour(1))
            .generation(Position::Sequence(7))
            .rows(1)
            .build()
            .unwrap()],
    );
    let l = l.apply(&full(&c, hour(2))).unwrap();
    assert_eq!(l.generation(), Some(&Position::Sequence(7)));
}

#[test]
fn sunday_then_monday_changes_leave_the_table_patched() {
    // rule: TRANS-24
    let c = orders();
    let l = applied(
        &c,
        &[
            full(&c, hour(0)),
            c.manifest("patch", hour(24))
                .since(hour(0))
                .rows(1)
                .build()
                .unwrap(),
        ],
    );
    let claims = l.claims(hour(24), dogana::Duration::MAX, None).unwrap();
    assert_eq!(claims.state(), dogana::State::Patched);
}

#[test]
fn plans_follow_the_shape() {
    // rule: PLAN-02, PLAN-09, PLAN-10
    let c = orders();
    let l = applied(&c, &[full(&c, hour(1))]);
    assert_eq!(
        kinds(&Ledger::new(c.clone()), &full(&c, hour(1))),
        [ActionKind::ReplaceAll]
    );
    let w = window(&c, "last3", days("2026-10-01", "2026-10-02"), hour(2));
    assert_eq!(kinds(&l, &w), [ActionKind::ReplaceWindow]);
    let (_, t) = l.transition(&w).unwrap();
    assert_eq!(
        t.plan().actions()[0].window(),
        Some(&days("2026-10-01", "2026-10-02"))
    );
    let tomb = c
        .manifest("changes", hour(2))
        .since(hour(1))
        .rows(1)
        .build()
        .unwrap();
    assert_eq!(
        kinds(&l, &tomb),
        [ActionKind::Upsert, ActionKind::Tombstone]
    );
    let patch = c
        .manifest("patch", hour(2))
        .since(hour(1))
        .rows(1)
        .build()
        .unwrap();
    assert_eq!(kinds(&l, &patch), [ActionKind::Upsert]);
}

#[test]
fn keyless_replacement_matches_no_keys() {
    // rule: PLAN-08
    let e = events();
    let (_, t) = Ledger::new(e.clone())
        .transition(&full(&e, hour(1)))
        .unwrap();
    assert!(t.plan().actions().iter().all(|a| !a.matches_keys()));
    let (_, t) = Ledger::new(orders())
        .transition(&full(&orders(), hour(1)))
        .unwrap();
    assert_eq!(t.plan().actions()[0].key(), ["id"]);
}

#[test]
fn a_transition_shows_the_regions_over_its_coverage() {
    // rule: PLAN-01, PLAN-11, GATE-21
    let c = orders();
    let l = applied(&c, &[full(&c, hour(1))]);
    let (_, t) = l
        .transition(&window(
            &c,
            "last3",
            days("2026-10-05", "2026-10-07"),
            hour(2),
        ))
        .unwrap();
    assert_eq!(t.regions().len(), 1);
    assert_eq!(t.regions()[0].interval(), "[2026-10-05, 2026-10-07]");
}

#[test]
fn plans_never_read_rows() {
    // rule: PLAN-13, TRUST-01
    // Ledger::transition takes a manifest and nothing else; the plan depends on declarations.
    let c = orders();
    let a = c.manifest("full", hour(1)).rows(1).build().unwrap();
    let b = c.manifest("full", hour(1)).rows(1_000_000).build().unwrap();
    let l = Ledger::new(c);
    assert_eq!(
        l.transition(&a).unwrap().1.plan(),
        l.transition(&b).unwrap().1.plan()
    );
}

#[test]
fn same_history_same_ledger() {
    // rule: ALG-01
    let c = orders();
    let ms = [
        full(&c, hour(1)),
        window(&c, "last3", days("2026-10-01", "2026-10-03"), hour(2)),
    ];
    assert_eq!(applied(&c, &ms).identity(), applied(&c, &ms).identity());
}

#[test]
fn disjoint_windows_commute_on_evidence_not_on_the_chain() {
    // rule: ALG-04, ALG-05, TRANS-08
    let c = parts();
    let a = window(&c, "window", ints(1, 5), hour(2));
    let b = window(&c, "window", ints(10, 15), hour(3));
    let ab = applied(&c, &[a.clone(), b.clone()]);
    let ba = applied(&c, &[b, a]);
    assert_eq!(ab.regions(), ba.regions());
    assert_ne!(ab.publication_id(), ba.publication_id());
}

#[test]
fn rejection_is_per_manifest() {
    // rule: ALG-07
    let c = orders();
    let l = applied(&c, &[full(&c, hour(2))]);
    assert!(l.apply(&full(&c, hour(1))).is_err());
    assert!(l.apply(&full(&c, hour(3))).is_ok());
    assert_eq!(l.regions()[0].complete_as_of(), Some(hour(2)));
}

#[test]
fn windows_at_the_domain_ends_create_no_empty_region() {
    // rule: DOMAIN-13, DOMAIN-15, DOMAIN-16
    let c = orders();
    let l = applied(
        &c,
        &[window(
            &c,
            "last3",
            days("0001-01-01", "2026-10-01"),
            hour(1),
        )],
    );
    assert_eq!(
        shape_of(&l).into_iter().map(|r| r.0).collect::<Vec<_>>(),
        ["(-inf, 2026-10-01]", "[2026-10-02, +inf)"]
    );
    let l = applied(
        &c,
        &[window(
            &c,
            "last3",
            days("2026-10-01", "9999-12-31"),
            hour(1),
        )],
    );
    assert_eq!(
        shape_of(&l).into_iter().map(|r| r.0).collect::<Vec<_>>(),
        ["(-inf, 2026-09-30]", "[2026-10-01, +inf)"]
    );
    let r = &l.regions()[0];
    assert!(r.low_open() && !r.high_open());
}

#[test]
fn string_windows_start_at_the_empty_string_and_end_open() {
    // rule: DOMAIN-14, DOMAIN-11, DOMAIN-15
    let c = dogana::Contract::builder("s", ["id"])
        .shape("w", Shape::window())
        .window_column("plant")
        .column("id", dogana::LogicalType::Int)
        .column("plant", dogana::LogicalType::Str)
        .build()
        .unwrap();
    let l = applied(
        &c,
        &[window(&c, "w", dogana::Window::new("", "b"), hour(1))],
    );
    let rs = l.regions();
    assert_eq!(rs.len(), 2);
    assert_eq!(rs[0].interval(), "(-inf, \"b\"]");
    assert_eq!(rs[1].interval(), "[\"b\\0\", +inf)");
    let l = applied(
        &c,
        &[window(&c, "w", dogana::Window::new("a", "b"), hour(1))],
    );
    assert_eq!(l.regions()[0].interval(), "(-inf, \"a\")");
}

#[test]
fn partitions_never_prove_what_they_do_not_cover() {
    // rule: DOMAIN-19, DOMAIN-17
    let c = parts();
    let l = applied(
        &c,
        &[
            window(&c, "window", ints(1, 1), hour(1)),
            window(&c, "window", ints(2, 2), hour(1)),
        ],
    );
    let rs = l.regions();
    assert!(rs.first().unwrap().is_unknown() && rs.last().unwrap().is_unknown());
    assert_eq!(rs[1].interval(), "[1, 2]");
}
