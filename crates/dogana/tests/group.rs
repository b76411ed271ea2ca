//! Tables read together: `Group`, `Group::claims`, `Group::apply`, group replay and
//! `plan_together` (GROUP), through the public API.

use std::collections::BTreeMap;

use dogana::{
    plan_together, Check, Contract, Deletions, Duration, Gate, Group, Ledger, LogicalType,
    Manifest, Outcome, Position, Receipt, Shape, State, Timestamp, Window, Wire, TOGETHER,
};
use sha2::{Digest, Sha256};

fn at(s: &str) -> Timestamp {
    s.parse().unwrap()
}

const NINE: &str = "2026-10-25T09:00:00Z";
const TEN: &str = "2026-10-25T10:00:00Z";
const TEN_FIVE: &str = "2026-10-25T10:05:00Z";
const ELEVEN: &str = "2026-10-25T11:00:00Z";
const NOON: &str = "2026-10-25T12:00:00Z";

/// A keyed table: a full read (cost 10), changes with tombstones (cost 1) and changes
/// without (cost 0.5).
fn keyed(name: &str) -> Contract {
    Contract::builder(name, ["id"])
        .shape("full", Shape::full().cost(10.0))
        .shape("changes", Shape::changes(Deletions::Tombstone))
        .shape("plain", Shape::changes(Deletions::None).cost(0.5))
        .deleted_column("deleted")
        .column("id", LogicalType::Int)
        .column("deleted", LogicalType::Bool)
        .build()
        .unwrap()
}

/// A keyed table with an integer window column `d`.
fn windowed(name: &str) -> Contract {
    Contract::builder(name, ["id"])
        .shape("full", Shape::full().cost(10.0))
        .shape("win", Shape::window().cost(2.0))
        .window_column("d")
        .column("id", LogicalType::Int)
        .column("d", LogicalType::Int)
        .build()
        .unwrap()
}

fn full(c: &Contract, t: &str) -> Manifest {
    c.manifest("full", at(t)).rows(10).build().unwrap()
}

fn changes(c: &Contract, shape: &str, since: &str, t: &str) -> Manifest {
    c.manifest(shape, at(t))
        .since(at(since))
        .rows(2)
        .build()
        .unwrap()
}

fn ledger_at(c: &Contract, t: &str) -> Ledger {
    Ledger::new(c.clone()).apply(&full(c, t)).unwrap()
}

fn invoices_and_lines() -> (Group, Contract, Contract) {
    let (inv, lines) = (keyed("invoices"), keyed("lines"));
    let g = Group::new([inv.clone(), lines.clone()]).unwrap();
    (g, inv, lines)
}

fn together(r: &Receipt) -> &Check {
    r.checks().iter().find(|c| c.name() == TOGETHER).unwrap()
}

fn follow_all(ledgers: &[Ledger], receipts: &[Receipt]) -> Vec<Ledger> {
    ledgers
        .iter()
        .zip(receipts)
        .map(|(l, r)| l.follow(r).unwrap())
        .collect()
}

fn map<V: Clone>(pairs: &[(&str, V)]) -> BTreeMap<String, V> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

fn group_rule(e: &dogana::InvalidContract) -> &'static str {
    e.problem().rule
}

// ---------------------------------------------------------------------------------------------
// Exact

#[test]
fn invoices_at_ten_and_lines_at_ten_five_have_no_common_instant() {
    // rule: GROUP-04
    let (g, inv, lines) = invoices_and_lines();
    let ledgers = [ledger_at(&inv, TEN), ledger_at(&lines, TEN_FIVE)];
    for l in &ledgers {
        assert!(l
            .claims(at(NOON), Duration::MAX, None)
            .unwrap()
            .exact_as_of()
            .is_some());
    }
    let claims = g.claims(&ledgers, at(NOON), Duration::MAX, None).unwrap();
    assert_eq!(claims.exact_as_of(), None);
}

#[test]
fn tables_exact_at_one_instant_are_exact_together() {
    // rule: GROUP-01
    let (g, inv, lines) = invoices_and_lines();
    let ledgers = [ledger_at(&inv, TEN), ledger_at(&lines, TEN)];
    let claims = g.claims(&ledgers, at(NOON), Duration::MAX, None).unwrap();
    assert_eq!(claims.exact_as_of(), Some(at(TEN)));
}

#[test]
fn an_expired_group_is_still_exact() {
    // rule: GROUP-02
    let (g, inv, lines) = invoices_and_lines();
    let ledgers = [ledger_at(&inv, TEN), ledger_at(&lines, TEN)];
    let claims = g
        .claims(
            &ledgers,
            at(NOON),
            Duration::from_seconds(60).unwrap(),
            None,
        )
        .unwrap();
    assert_eq!(claims.state(), State::Expired);
    assert_eq!(claims.exact_as_of(), Some(at(TEN)));
}

#[test]
fn equal_minima_do_not_make_a_group_exact() {
    // rule: GROUP-03
    // rule: CLAIMS-10
    let c = windowed("orders");
    let l = ledger_at(&c, TEN)
        .apply(
            &c.manifest("win", at(ELEVEN))
                .window(Window::new(1, 5))
                .rows(1)
                .build()
                .unwrap(),
        )
        .unwrap();
    let g = Group::new([c, keyed("lines")]).unwrap();
    let ledgers = [l, ledger_at(&keyed("lines"), TEN)];
    let claims = g.claims(&ledgers, at(NOON), Duration::MAX, None).unwrap();
    assert_eq!(claims.complete_as_of(), Some(at(TEN)));
    assert_eq!(claims.deletions_as_of(), Some(at(TEN)));
    assert_eq!(claims.exact_as_of(), None);
}

// ---------------------------------------------------------------------------------------------
// Group

#[test]
fn tables_differing_only_in_case_are_refused() {
    // rule: GROUP-07
    let e = Group::new([keyed("lines"), keyed("Lines")]).unwrap_err();
    assert_eq!(group_rule(&e), "GROUP-07");
    assert_eq!(e.problem().field, "contracts[1].table");
}

#[test]
fn tables_are_looked_up_whatever_their_case() {
    // rule: GROUP-07
    let (g, _, _) = invoices_and_lines();
    assert_eq!(g.contract("INVOICES").unwrap().table(), "invoices");
    assert_eq!(g.contract("Lines").unwrap().table(), "lines");
    assert!(g.contract("payments").is_none());
    assert_eq!(g.tables().collect::<Vec<_>>(), ["invoices", "lines"]);
}

#[test]
fn an_empty_group_is_refused() {
    // rule: GROUP-07
    let e = Group::new(Vec::<Contract>::new()).unwrap_err();
    assert_eq!(group_rule(&e), "GROUP-07");
}

// ---------------------------------------------------------------------------------------------
// Group::claims

#[test]
fn group_claims_hold_every_tables_regions_and_take_minima_across_them() {
    // rule: GROUP-09
    // rule: CLAIMS-13
    let (g, inv, lines) = invoices_and_lines();
    let patched = ledger_at(&lines, NINE)
        .apply(&changes(&lines, "plain", NINE, ELEVEN))
        .unwrap();
    // lines first: ledgers are matched by table, in any order
    let ledgers = [patched, ledger_at(&inv, TEN)];
    let claims = g.claims(&ledgers, at(NOON), Duration::MAX, None).unwrap();
    let tables: Vec<&str> = claims.regions().iter().map(|r| r.table()).collect();
    assert_eq!(tables, ["invoices", "lines"]);
    assert_eq!(claims.complete_as_of(), Some(at(TEN)));
    assert_eq!(claims.deletions_as_of(), Some(at(NINE)));
    assert_eq!(claims.state(), State::Patched);
}

#[test]
fn group_claims_clip_each_table_to_its_window() {
    // rule: GROUP-09
    let c = windowed("orders");
    let l = ledger_at(&c, TEN)
        .apply(
            &c.manifest("win", at(ELEVEN))
                .window(Window::new(1, 5))
                .rows(1)
                .build()
                .unwrap(),
        )
        .unwrap();
    let g = Group::new([c, keyed("lines")]).unwrap();
    let ledgers = [l, ledger_at(&keyed("lines"), ELEVEN)];
    let windows = map(&[("ORDERS", Window::new(2, 3))]);
    let claims = g
        .claims(&ledgers, at(NOON), Duration::MAX, Some(&windows))
        .unwrap();
    let shown: Vec<String> = claims
        .regions()
        .iter()
        .map(|r| format!("{} {}", r.table(), r.region().interval()))
        .collect();
    assert_eq!(shown, ["orders [2, 3]", "lines (-inf, +inf)"]);
}

#[test]
fn a_reader_of_windows_gets_the_instant_of_those_windows() {
    // rule: GROUP-22
    let c = windowed("orders");
    let l = ledger_at(&c, TEN)
        .apply(
            &c.manifest("win", at(ELEVEN))
                .window(Window::new(1, 5))
                .rows(1)
                .build()
                .unwrap(),
        )
        .unwrap();
    let g = Group::new([c, keyed("lines")]).unwrap();
    let ledgers = [l, ledger_at(&keyed("lines"), ELEVEN)];
    let whole = g.claims(&ledgers, at(NOON), Duration::MAX, None).unwrap();
    assert_eq!(whole.exact_as_of(), None);
    let windows = map(&[("orders", Window::new(1, 5))]);
    let read = g
        .claims(&ledgers, at(NOON), Duration::MAX, Some(&windows))
        .unwrap();
    assert_eq!(read.exact_as_of(), Some(at(ELEVEN)));
}

#[test]
fn group_claims_refuse_missing_extra_and_foreign_ledgers() {
    // rule: GROUP-17
    let (g, inv, lines) = invoices_and_lines();
    let missing = g.claims(&[ledger_at(&inv, TEN)], at(NOON), Duration::MAX, None);
    assert!(missing
        .unwrap_err()
        .problem()
        .reason
        .contains("\"lines\" has none"));
    let twice = [
        ledger_at(&inv, TEN),
        ledger_at(&lines, TEN),
        ledger_at(&inv, NINE),
    ];
    let e = g.claims(&twice, at(NOON), Duration::MAX, None).unwrap_err();
    assert_eq!(
        (group_rule(&e), e.problem().field.as_str()),
        ("GROUP-17", "ledgers[2]")
    );
    let foreign = [
        ledger_at(&inv, TEN),
        ledger_at(&lines, TEN),
        ledger_at(&keyed("payments"), TEN),
    ];
    let e = g
        .claims(&foreign, at(NOON), Duration::MAX, None)
        .unwrap_err();
    assert!(e.problem().reason.contains("no such table"), "{e}");
}

#[test]
fn group_claims_refuse_a_window_for_no_table() {
    // rule: GROUP-17
    let (g, inv, lines) = invoices_and_lines();
    let ledgers = [ledger_at(&inv, TEN), ledger_at(&lines, TEN)];
    let windows = map(&[("orders", Window::new(1, 2))]);
    let e = g
        .claims(&ledgers, at(NOON), Duration::MAX, Some(&windows))
        .unwrap_err();
    assert_eq!(group_rule(&e), "GROUP-17");
}

#[test]
fn a_ledger_under_another_contract_is_refused() {
    // rule: GROUP-17
    let (g, inv, _) = invoices_and_lines();
    let other = Contract::builder("lines", ["id"])
        .shape("full", Shape::full())
        .column("id", LogicalType::Int)
        .build()
        .unwrap();
    let ledgers = [ledger_at(&inv, TEN), ledger_at(&other, TEN)];
    let e = g
        .claims(&ledgers, at(NOON), Duration::MAX, None)
        .unwrap_err();
    assert!(e.problem().reason.contains("another contract"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// Group::apply

fn sunday_group() -> (Group, Vec<Ledger>, Vec<Manifest>) {
    let (g, inv, lines) = invoices_and_lines();
    let ledgers = vec![ledger_at(&inv, NINE), ledger_at(&lines, NINE)];
    let manifests = vec![
        changes(&inv, "changes", NINE, TEN),
        changes(&lines, "changes", NINE, TEN),
    ];
    (g, ledgers, manifests)
}

#[test]
fn apply_answers_one_receipt_per_table_in_the_groups_order() {
    // rule: GROUP-10
    let (g, ledgers, mut manifests) = sunday_group();
    manifests.reverse();
    let outcomes = map(&[("lines", vec![Check::pass("rows", "2 rows")])]);
    let receipts = g
        .apply(&ledgers, &manifests, at(NOON), Some(&outcomes), None)
        .unwrap();
    let tables: Vec<&str> = receipts.iter().map(Receipt::table).collect();
    assert_eq!(tables, ["invoices", "lines"]);
    assert!(receipts.iter().all(Receipt::accepted));
    assert!(receipts[1].checks().iter().any(|c| c.name() == "rows"));
    assert!(!receipts[0].checks().iter().any(|c| c.name() == "rows"));
}

#[test]
fn each_table_is_decided_as_the_gate_decides_it_alone() {
    // rule: GROUP-11
    let (g, ledgers, manifests) = sunday_group();
    let sources = map(&[("invoices", "erp".to_owned())]);
    let receipts = g
        .apply(&ledgers, &manifests, at(NOON), None, Some(&sources))
        .unwrap();
    for (k, r) in receipts.iter().enumerate() {
        let source = (k == 0).then_some("erp");
        let alone = Gate::evaluate(&ledgers[k], &manifests[k], &[], at(NOON), source, &[]);
        let n = alone.checks().len();
        assert_eq!(&r.checks()[..n], alone.checks());
        assert_eq!(r.source(), source);
        assert_eq!(r.transition(), alone.transition());
    }
}

#[test]
fn together_passes_for_one_instant_and_every_table_accepted() {
    // rule: GROUP-12
    let (g, ledgers, manifests) = sunday_group();
    let receipts = g.apply(&ledgers, &manifests, at(NOON), None, None).unwrap();
    assert!(
        together(&receipts[0]).passed(),
        "{}",
        together(&receipts[0])
    );
}

#[test]
fn together_fails_for_different_instants() {
    // rule: GROUP-12
    let (g, inv, lines) = invoices_and_lines();
    let ledgers = [ledger_at(&inv, NINE), ledger_at(&lines, NINE)];
    let manifests = [
        changes(&inv, "changes", NINE, TEN),
        changes(&lines, "changes", NINE, TEN_FIVE),
    ];
    let receipts = g.apply(&ledgers, &manifests, at(NOON), None, None).unwrap();
    let check = together(&receipts[0]);
    assert!(!check.passed());
    assert!(check.detail().contains("different instants"), "{check}");
}

#[test]
fn produced_at_is_compared_as_an_instant() {
    // rule: GROUP-12
    let (g, inv, lines) = invoices_and_lines();
    let ledgers = [ledger_at(&inv, NINE), ledger_at(&lines, NINE)];
    let manifests = [
        changes(&inv, "changes", NINE, "2026-10-25T12:00:00+02:00"),
        changes(&lines, "changes", NINE, TEN),
    ];
    let receipts = g.apply(&ledgers, &manifests, at(NOON), None, None).unwrap();
    assert!(receipts.iter().all(Receipt::accepted));
}

#[test]
fn the_together_detail_digests_every_manifest_identity() {
    // rule: GROUP-13
    let (g, ledgers, manifests) = sunday_group();
    let receipts = g.apply(&ledgers, &manifests, at(NOON), None, None).unwrap();
    let mut lines = [
        format!("invoices:{}", manifests[0].identity()),
        format!("lines:{}", manifests[1].identity()),
    ];
    lines.sort();
    let digest: String = Sha256::digest(lines.join("\n").as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(g.together_digest(&manifests).unwrap(), digest);
    let detail = together(&receipts[0]).detail();
    assert!(detail.starts_with(&format!("{digest}: ")), "{detail}");
}

#[test]
fn another_manifest_gives_another_digest() {
    // rule: GROUP-13
    let (g, _, mut manifests) = sunday_group();
    let before = g.together_digest(&manifests).unwrap();
    let lines = g.contract("lines").unwrap();
    manifests[1] = lines
        .manifest("changes", at(TEN))
        .since(at(NINE))
        .rows(3)
        .build()
        .unwrap();
    assert_ne!(g.together_digest(&manifests).unwrap(), before);
}

#[test]
fn together_joins_every_receipt_as_its_last_check() {
    // rule: GROUP-14
    let (g, ledgers, manifests) = sunday_group();
    let receipts = g.apply(&ledgers, &manifests, at(NOON), None, None).unwrap();
    let last: Vec<&Check> = receipts
        .iter()
        .map(|r| r.checks().last().unwrap())
        .collect();
    assert_eq!(last[0].name(), TOGETHER);
    assert_eq!(last[0], last[1]);
}

#[test]
fn one_refused_table_refuses_every_table() {
    // rule: GROUP-15
    let (g, ledgers, manifests) = sunday_group();
    let outcomes = map(&[("lines", vec![Check::fail("rows", "3 rows, 2 declared")])]);
    let receipts = g
        .apply(&ledgers, &manifests, at(NOON), Some(&outcomes), None)
        .unwrap();
    assert!(receipts.iter().all(|r| r.outcome() == Outcome::Rejected));
    // invoices passed alone: only together fails on its receipt
    let failed: Vec<&str> = receipts[0].failures().map(Check::name).collect();
    assert_eq!(failed, [TOGETHER]);
    assert!(together(&receipts[0])
        .detail()
        .contains("refused alone: lines (failed: rows)"));
}

#[test]
fn the_group_commits_every_table_or_none() {
    // rule: GROUP-16
    let (g, ledgers, manifests) = sunday_group();
    let accepted = g.apply(&ledgers, &manifests, at(NOON), None, None).unwrap();
    let after = follow_all(&ledgers, &accepted);
    assert!(after.iter().zip(&ledgers).all(|(a, b)| a != b));
    let outcomes = map(&[("invoices", vec![Check::fail("bytes", "hash differs")])]);
    let refused = g
        .apply(&ledgers, &manifests, at(NOON), Some(&outcomes), None)
        .unwrap();
    for (l, r) in ledgers.iter().zip(&refused) {
        assert!(l.follow(r).is_err());
        assert_eq!(r.ledger_identity(), l.identity());
    }
}

#[test]
fn apply_refuses_missing_extra_and_unknown_manifests() {
    // rule: GROUP-17
    let (g, ledgers, manifests) = sunday_group();
    let e = g
        .apply(&ledgers, &manifests[..1], at(NOON), None, None)
        .unwrap_err();
    assert_eq!(
        (group_rule(&e), e.problem().field.as_str()),
        ("GROUP-17", "manifests")
    );
    let twice = [
        manifests[0].clone(),
        manifests[1].clone(),
        manifests[1].clone(),
    ];
    let e = g.apply(&ledgers, &twice, at(NOON), None, None).unwrap_err();
    assert_eq!(e.problem().field, "manifests[2]");
    let c = keyed("payments");
    let foreign = [manifests[0].clone(), manifests[1].clone(), full(&c, TEN)];
    let e = g
        .apply(&ledgers, &foreign, at(NOON), None, None)
        .unwrap_err();
    assert!(e.problem().reason.contains("no such table"), "{e}");
}

#[test]
fn apply_refuses_outcomes_and_sources_for_no_table() {
    // rule: GROUP-17
    let (g, ledgers, manifests) = sunday_group();
    let outcomes = map(&[("payments", vec![Check::pass("rows", "")])]);
    let e = g
        .apply(&ledgers, &manifests, at(NOON), Some(&outcomes), None)
        .unwrap_err();
    assert_eq!(e.problem().field, "outcomes.payments");
    let sources = map(&[("Lines", "a".to_owned()), ("lines", "b".to_owned())]);
    let e = g
        .apply(&ledgers, &manifests, at(NOON), None, Some(&sources))
        .unwrap_err();
    assert!(e.problem().reason.contains("ignoring case"), "{e}");
}

#[test]
fn a_manifest_spelling_its_table_in_another_case_is_rejected_by_the_gate() {
    // rule: GROUP-17
    let (g, ledgers, manifests) = sunday_group();
    let m = &manifests[1];
    let shouted = Manifest::builder("LINES", m.shape(), m.produced_at())
        .since(at(NINE))
        .rows(2)
        .build()
        .unwrap();
    let receipts = g
        .apply(
            &ledgers,
            &[manifests[0].clone(), shouted],
            at(NOON),
            None,
            None,
        )
        .unwrap();
    assert!(receipts.iter().all(|r| !r.accepted()));
    assert_eq!(receipts[1].table(), "lines");
    assert!(receipts[1].checks()[0].detail().contains("MAN-04"));
}

#[test]
fn dogana_runs_no_check_between_tables() {
    // rule: GROUP-18
    let (g, ledgers, manifests) = sunday_group();
    let receipts = g.apply(&ledgers, &manifests, at(NOON), None, None).unwrap();
    for r in &receipts {
        let names: Vec<&str> = r.checks().iter().map(Check::name).collect();
        assert_eq!(names, ["manifest", "receiver_time", "transition", TOGETHER]);
    }
}

#[test]
fn together_does_not_require_an_exact_result() {
    // rule: GROUP-19
    let (g, inv, lines) = invoices_and_lines();
    let ledgers = [ledger_at(&inv, NINE), ledger_at(&lines, NINE)];
    let manifests = [
        changes(&inv, "plain", NINE, TEN),
        changes(&lines, "plain", NINE, TEN),
    ];
    let receipts = g.apply(&ledgers, &manifests, at(NOON), None, None).unwrap();
    assert!(receipts.iter().all(Receipt::accepted));
    let after = follow_all(&ledgers, &receipts);
    let claims = g.claims(&after, at(NOON), Duration::MAX, None).unwrap();
    assert_eq!(claims.state(), State::Patched);
    assert_eq!(claims.exact_as_of(), None);
}

#[test]
fn four_kinds_of_read_reach_one_instant_together() {
    // rule: GROUP-20
    let complete = keyed("complete");
    let append = Contract::builder("append", Vec::<String>::new())
        .shape("full", Shape::full())
        .shape("append", Shape::changes(Deletions::None))
        .build()
        .unwrap();
    let tombs = keyed("tombs");
    let feed = Contract::builder("feed", ["id"])
        .shape("full", Shape::full())
        .shape("feed", Shape::generations(Deletions::Tombstone))
        .deleted_column("deleted")
        .column("id", LogicalType::Int)
        .column("deleted", LogicalType::Bool)
        .build()
        .unwrap();
    let g = Group::new([
        complete.clone(),
        append.clone(),
        tombs.clone(),
        feed.clone(),
    ])
    .unwrap();
    // tombs is patched, (10:00, 09:00): tombstones since 09:00 repair it
    let tombs_ledger = ledger_at(&tombs, NINE)
        .apply(&changes(&tombs, "plain", NINE, TEN))
        .unwrap();
    let feed_ledger = Ledger::new(feed.clone())
        .apply(
            &feed
                .manifest("full", at(TEN))
                .generation(Position::Token("g1".into()))
                .rows(1)
                .build()
                .unwrap(),
        )
        .unwrap();
    let ledgers = [
        ledger_at(&complete, NINE),
        ledger_at(&append, TEN),
        tombs_ledger,
        feed_ledger,
    ];
    let manifests = [
        full(&complete, NOON),
        changes(&append, "append", TEN, NOON),
        tombs
            .manifest("changes", at(NOON))
            .since(at(NINE))
            .rows(1)
            .tombstones(1)
            .build()
            .unwrap(),
        feed.manifest("feed", at(NOON))
            .since(Position::Token("g1".into()))
            .generation(Position::Token("g2".into()))
            .rows(1)
            .tombstones(1)
            .build()
            .unwrap(),
    ];
    let receipts = g.apply(&ledgers, &manifests, at(NOON), None, None).unwrap();
    assert!(receipts.iter().all(Receipt::accepted), "{receipts:?}");
    let after = follow_all(&ledgers, &receipts);
    let claims = g.claims(&after, at(NOON), Duration::MAX, None).unwrap();
    assert_eq!(claims.exact_as_of(), Some(at(NOON)));
}

#[test]
fn an_empty_tombstone_read_moves_an_unchanged_table_to_the_instant() {
    // rule: GROUP-21
    let (g, inv, lines) = invoices_and_lines();
    let ledgers = [ledger_at(&inv, TEN), ledger_at(&lines, TEN)];
    let manifests = [
        changes(&inv, "changes", TEN, NOON),
        lines
            .manifest("changes", at(NOON))
            .since(at(TEN))
            .rows(0)
            .build()
            .unwrap(),
    ];
    let receipts = g.apply(&ledgers, &manifests, at(NOON), None, None).unwrap();
    let after = follow_all(&ledgers, &receipts);
    let claims = g.claims(&after, at(NOON), Duration::MAX, None).unwrap();
    assert_eq!(claims.exact_as_of(), Some(at(NOON)));
}

#[test]
fn changes_without_tombstones_leave_the_group_without_an_instant() {
    // rule: GROUP-21
    let (g, inv, lines) = invoices_and_lines();
    let ledgers = [ledger_at(&inv, TEN), ledger_at(&lines, TEN)];
    let manifests = [
        changes(&inv, "changes", TEN, NOON),
        changes(&lines, "plain", TEN, NOON),
    ];
    let receipts = g.apply(&ledgers, &manifests, at(NOON), None, None).unwrap();
    let after = follow_all(&ledgers, &receipts);
    let claims = g.claims(&after, at(NOON), Duration::MAX, None).unwrap();
    assert_eq!(claims.exact_as_of(), None);
}

// ---------------------------------------------------------------------------------------------
// Replay

#[test]
fn a_group_accepted_together_replays_whole() {
    // rule: GROUP-23
    let (g, ledgers, manifests) = sunday_group();
    let receipts = g.apply(&ledgers, &manifests, at(NOON), None, None).unwrap();
    // the receiver's lookup may hold other receipts, in any order
    let stray = Gate::evaluate(&ledgers[0], &manifests[0], &[], at(NOON), None, &[]);
    let recorded = [receipts[1].clone(), stray, receipts[0].clone()];
    let replayed = g.replay(&manifests, &recorded).unwrap().unwrap();
    assert!(replayed.iter().all(Receipt::replayed));
    for (a, b) in replayed.iter().zip(&receipts) {
        assert_eq!(a.identity(), b.identity());
    }
}

#[test]
fn deliveries_accepted_alone_are_decided_anew() {
    // rule: GROUP-24
    let (g, ledgers, manifests) = sunday_group();
    let alone: Vec<Receipt> = ledgers
        .iter()
        .zip(&manifests)
        .map(|(l, m)| Gate::evaluate(l, m, &[], at(NOON), None, &[]))
        .collect();
    assert!(alone.iter().all(Receipt::accepted));
    assert_eq!(g.replay(&manifests, &alone).unwrap(), None);
}

#[test]
fn deliveries_accepted_in_another_group_are_decided_anew() {
    // rule: GROUP-24
    let (g, ledgers, manifests) = sunday_group();
    let payments = keyed("payments");
    let bigger = Group::new([
        g.contracts()[0].clone(),
        g.contracts()[1].clone(),
        payments.clone(),
    ])
    .unwrap();
    let mut all_ledgers = ledgers.clone();
    all_ledgers.push(ledger_at(&payments, NINE));
    let mut all_manifests = manifests.clone();
    all_manifests.push(changes(&payments, "changes", NINE, TEN));
    let receipts = bigger
        .apply(&all_ledgers, &all_manifests, at(NOON), None, None)
        .unwrap();
    assert!(receipts.iter().all(Receipt::accepted));
    assert_eq!(g.replay(&manifests, &receipts).unwrap(), None);
    assert!(bigger.replay(&all_manifests, &receipts).unwrap().is_some());
}

#[test]
fn a_group_with_one_new_manifest_is_decided_anew() {
    // rule: GROUP-24
    let (g, ledgers, manifests) = sunday_group();
    let receipts = g.apply(&ledgers, &manifests, at(NOON), None, None).unwrap();
    let lines = g.contract("lines").unwrap();
    let newer = [
        manifests[0].clone(),
        changes(lines, "changes", NINE, ELEVEN),
    ];
    assert_eq!(g.replay(&newer, &receipts).unwrap(), None);
}

#[test]
fn a_rejected_group_is_decided_anew() {
    // rule: GROUP-24
    // rule: RECV-04
    let (g, ledgers, manifests) = sunday_group();
    let outcomes = map(&[("lines", vec![Check::fail("rows", "")])]);
    let refused = g
        .apply(&ledgers, &manifests, at(NOON), Some(&outcomes), None)
        .unwrap();
    assert_eq!(g.replay(&manifests, &refused).unwrap(), None);
    // decided anew, the same manifests are accepted
    let again = g.apply(&ledgers, &manifests, at(NOON), None, None).unwrap();
    assert!(again.iter().all(Receipt::accepted));
}

#[test]
fn each_table_keeps_its_own_chain() {
    // rule: GROUP-25
    let (g, ledgers, manifests) = sunday_group();
    let receipts = g.apply(&ledgers, &manifests, at(NOON), None, None).unwrap();
    for (l, r) in ledgers.iter().zip(&receipts) {
        // each receipt continues its own table's chain and names its own ledger
        assert_eq!(r.base_publication_id(), l.publication_id());
        assert_eq!(r.table(), l.contract().table());
        let next = l.follow(r).unwrap();
        assert_eq!(next.publication_id(), Some(r.publication_id()));
    }
    assert_ne!(receipts[0].publication_id(), receipts[1].publication_id());
}

// ---------------------------------------------------------------------------------------------
// plan_together

#[test]
fn nothing_is_planned_for_a_group_exact_late_enough() {
    // rule: GROUP-27
    let (g, inv, lines) = invoices_and_lines();
    let ledgers = [ledger_at(&inv, TEN), ledger_at(&lines, TEN)];
    assert_eq!(plan_together(&g, &ledgers, at(TEN), None).unwrap(), None);
    assert_eq!(plan_together(&g, &ledgers, at(NINE), None).unwrap(), None);
    assert!(plan_together(&g, &ledgers, at(ELEVEN), None)
        .unwrap()
        .is_some());
}

#[test]
fn one_request_per_table_shares_one_until() {
    // rule: GROUP-28
    let (g, inv, lines) = invoices_and_lines();
    let ledgers = [ledger_at(&lines, TEN_FIVE), ledger_at(&inv, TEN)];
    let xs = plan_together(&g, &ledgers, at(NOON), None)
        .unwrap()
        .unwrap();
    let shown: Vec<(&str, &str, Timestamp)> = xs
        .iter()
        .map(|x| (x.table(), x.shape(), x.until()))
        .collect();
    assert_eq!(
        shown,
        [
            ("invoices", "changes", at(NOON)),
            ("lines", "changes", at(NOON))
        ]
    );
}

#[test]
fn until_is_the_earliest_instant_after_every_tables_evidence() {
    // rule: GROUP-29
    // rule: GROUP-28
    let (g, inv, lines) = invoices_and_lines();
    let ledgers = [ledger_at(&inv, TEN), ledger_at(&lines, TEN_FIVE)];
    let xs = plan_together(&g, &ledgers, at(NINE), None)
        .unwrap()
        .unwrap();
    let until = at(TEN_FIVE).successor().unwrap();
    assert!(xs.iter().all(|x| x.until() == until));
}

#[test]
fn the_planned_reads_make_the_group_exact_at_until() {
    // rule: GROUP-28
    let (g, inv, lines) = invoices_and_lines();
    let patched = ledger_at(&lines, NINE)
        .apply(&changes(&lines, "plain", NINE, TEN_FIVE))
        .unwrap();
    let ledgers = [ledger_at(&inv, TEN), patched];
    let xs = plan_together(&g, &ledgers, at(NOON), None)
        .unwrap()
        .unwrap();
    let manifests: Vec<Manifest> = xs
        .iter()
        .map(|x| {
            x.manifest(g.contract(x.table()).unwrap(), 0)
                .build()
                .unwrap()
        })
        .collect();
    let receipts = g.apply(&ledgers, &manifests, at(NOON), None, None).unwrap();
    assert!(receipts.iter().all(Receipt::accepted));
    let after = follow_all(&ledgers, &receipts);
    let claims = g.claims(&after, at(NOON), Duration::MAX, None).unwrap();
    assert_eq!(claims.exact_as_of(), Some(at(NOON)));
}

#[test]
fn plan_together_reads_each_table_over_its_window() {
    // rule: GROUP-28
    // rule: GROUP-22
    let c = windowed("orders");
    let g = Group::new([c.clone(), keyed("lines")]).unwrap();
    let ledgers = [ledger_at(&c, TEN), ledger_at(&keyed("lines"), TEN)];
    let windows = map(&[("orders", Window::new(1, 5))]);
    let xs = plan_together(&g, &ledgers, at(NOON), Some(&windows))
        .unwrap()
        .unwrap();
    assert_eq!(xs[0].shape(), "win");
    assert_eq!(xs[0].window(), Some(&Window::new(1, 5)));
}

#[test]
fn a_table_that_cannot_reach_the_instant_is_a_planning_error() {
    // rule: GROUP-30
    // A table with only a window shape cannot reach (p, p) over the whole table.
    let inv = keyed("invoices");
    let windows_only = Contract::builder("lines", ["id"])
        .shape("win", Shape::window())
        .window_column("d")
        .column("id", LogicalType::Int)
        .column("d", LogicalType::Int)
        .build()
        .unwrap();
    let g = Group::new([inv.clone(), windows_only.clone()]).unwrap();
    let ledgers = [ledger_at(&inv, TEN), Ledger::new(windows_only)];
    let e = plan_together(&g, &ledgers, at(NOON), None).unwrap_err();
    assert_eq!(e.reasons.len(), 1);
    assert_eq!(e.reasons[0].field, "lines.shapes.win");
    assert_eq!(e.reasons[0].rule, "PLANNER-07");
    // over a window, it can
    let windows = map(&[("lines", Window::new(1, 5))]);
    assert!(plan_together(&g, &ledgers, at(NOON), Some(&windows)).is_ok());
}

#[test]
fn plan_together_refuses_ledgers_that_do_not_match_the_group() {
    // rule: GROUP-30
    // rule: GROUP-17
    let (g, inv, _) = invoices_and_lines();
    let e = plan_together(&g, &[ledger_at(&inv, TEN)], at(NOON), None).unwrap_err();
    assert_eq!(e.reasons[0].rule, "GROUP-17");
}

// ---------------------------------------------------------------------------------------------
// A parent with two children

fn parent_and_children() -> (Group, Vec<Ledger>, Vec<Manifest>) {
    let tables = [keyed("invoices"), keyed("lines"), keyed("payments")];
    let g = Group::new(tables.clone()).unwrap();
    let ledgers = tables.iter().map(|c| ledger_at(c, NINE)).collect();
    let manifests = tables
        .iter()
        .map(|c| {
            c.manifest("changes", at(TEN))
                .since(at(NINE))
                .rows(5)
                .tombstones(1)
                .build()
                .unwrap()
        })
        .collect();
    (g, ledgers, manifests)
}

#[test]
fn a_parent_with_two_children_is_accepted_together() {
    // rule: GROUP-08
    // rule: GROUP-15
    let (g, ledgers, manifests) = parent_and_children();
    let receipts = g.apply(&ledgers, &manifests, at(NOON), None, None).unwrap();
    assert!(receipts.iter().all(|r| r.outcome() == Outcome::Accepted));
    let after = follow_all(&ledgers, &receipts);
    let claims = g.claims(&after, at(NOON), Duration::MAX, None).unwrap();
    assert_eq!(claims.exact_as_of(), Some(at(TEN)));
}

#[test]
fn one_refused_child_refuses_the_parent_and_its_sibling() {
    // rule: GROUP-08
    // rule: GROUP-15
    let (g, ledgers, mut manifests) = parent_and_children();
    // payments declares a boundary its ledger already passed
    let payments = g.contract("payments").unwrap();
    manifests[2] = payments
        .manifest("changes", at(TEN))
        .since(at(TEN_FIVE))
        .rows(1)
        .build()
        .unwrap();
    let receipts = g.apply(&ledgers, &manifests, at(NOON), None, None).unwrap();
    assert!(receipts.iter().all(|r| r.outcome() == Outcome::Rejected));
    let failed: Vec<Vec<&str>> = receipts
        .iter()
        .map(|r| r.failures().map(Check::name).collect())
        .collect();
    assert_eq!(
        failed,
        [vec![TOGETHER], vec![TOGETHER], vec!["transition", TOGETHER]]
    );
}
