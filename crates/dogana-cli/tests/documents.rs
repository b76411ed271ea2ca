//! `dogana identity`, `dogana canonical`, `dogana completions` and `--help`.

mod common;

use common::{refused, text, Work};
use dogana::{Check, Duration, Gate, Ledger, Requirement, Timestamp, Wire};
use predicates::prelude::*;

fn identity_line(work: &Work, name: &str, doc: &str) -> String {
    work.write(name, doc);
    let out = work.dogana(["identity", name]).assert().success();
    text(&out.get_output().stdout)
}

#[test]
fn identity_of_every_kind() {
    // rule: CLI-01
    // rule: WIRE-18
    let work = Work::new();
    let contract = common::orders();
    let t: Timestamp = "2026-10-26T06:00:00Z".parse().unwrap();
    let manifest = contract
        .manifest("last3", t)
        .window(
            contract
                .shape("last3")
                .unwrap()
                .window_ending_at(t, dogana::LogicalType::Date)
                .unwrap(),
        )
        .rows(3)
        .content_hash(common::ABC_SHA256)
        .build()
        .unwrap();
    let ledger = Ledger::new(contract.clone());
    let receipt = Gate::evaluate(
        &ledger,
        &manifest,
        &[Check::pass("rows", "3 live rows")],
        t,
        None,
        &[],
    );
    assert!(receipt.accepted());
    let transition = receipt.transition().unwrap().clone();
    let plan = transition.plan().clone();
    let action = plan.actions()[0].clone();
    let after = ledger.follow(&receipt).unwrap();
    let region = after.regions()[1].clone();
    let claims = after.claims(t, Duration::MAX, None).unwrap();
    let region_claim = claims.regions()[0].clone();
    let check = receipt.checks()[0].clone();
    let shape = contract.shape("full").unwrap().clone();
    let requirement = Requirement::exact("orders", t);
    let extraction = dogana::next_extraction(&ledger, "last3", t, None).unwrap();

    let cases: Vec<(&str, String, String)> = vec![
        ("Contract", contract.to_json(), contract.identity()),
        ("Shape", shape.to_json(), shape.identity()),
        ("Manifest", manifest.to_json(), manifest.identity()),
        ("Ledger", after.to_json(), after.identity()),
        ("Region", region.to_json(), region.identity()),
        ("Receipt", receipt.to_json(), receipt.identity()),
        ("Check", check.to_json(), check.identity()),
        ("Transition", transition.to_json(), transition.identity()),
        ("ApplyPlan", plan.to_json(), plan.identity()),
        ("Action", action.to_json(), action.identity()),
        ("Claims", claims.to_json(), claims.identity()),
        (
            "RegionClaim",
            region_claim.to_json(),
            region_claim.identity(),
        ),
        ("Requirement", requirement.to_json(), requirement.identity()),
        ("Extraction", extraction.to_json(), extraction.identity()),
    ];
    for (kind, doc, id) in cases {
        assert_eq!(
            identity_line(&work, "doc.json", &doc),
            format!("{kind} {id}\n")
        );
    }
    // from standard input, with other whitespace and key order
    let pretty = serde_json::to_string_pretty(
        &serde_json::from_str::<serde_json::Value>(&manifest.to_json()).unwrap(),
    )
    .unwrap();
    let out = work
        .dogana(["identity", "-"])
        .write_stdin(pretty)
        .assert()
        .success();
    assert_eq!(
        text(&out.get_output().stdout),
        format!("Manifest {}\n", manifest.identity())
    );
}

#[test]
fn identity_refusals() {
    // rule: CLI-29
    let work = Work::new();
    work.write("a.json", r#"{"kind": "Gizmo", "version": 4}"#);
    let err = refused(&work, ["identity", "a.json"]);
    insta::assert_snapshot!(err, @r#"error: a.json has kind "Gizmo", which dogana cannot read; the kinds are Contract, Shape, Manifest, Ledger, Region, Receipt, Check, Transition, ApplyPlan, Action, Claims, RegionClaim, Requirement, Extraction"#);
    work.write("b.json", r#"[1, 2]"#);
    let err = refused(&work, ["identity", "b.json"]);
    assert!(err.contains("has no \"kind\""), "{err}");
    work.write("c.json", r#"{"kind": "Check", "version": 4, "name": "x"}"#);
    let err = refused(&work, ["identity", "c.json"]);
    assert!(
        err.starts_with("error: c.json is not a valid Check: "),
        "{err}"
    );
    work.write("d.json", "{\"kind\": \"Check\",");
    let err = refused(&work, ["identity", "d.json"]);
    assert!(
        err.starts_with("error: document d.json is not valid JSON: "),
        "{err}"
    );
    let err = refused(&work, ["identity", "nowhere.json"]);
    assert!(
        err.starts_with("error: cannot read the document nowhere.json"),
        "{err}"
    );
    work.dogana(["identity"]).assert().code(2);
}

#[test]
fn canonical_prints_jcs_without_newline() {
    // rule: CLI-01
    let work = Work::new();
    work.write(
        "doc.json",
        "{\"b\": 1.0, \"a\": [1e21, \"\u{e9}\", -0.0], \"\u{20ac}\": null}\n",
    );
    let out = work.dogana(["canonical", "doc.json"]).assert().success();
    assert_eq!(
        text(&out.get_output().stdout),
        "{\"a\":[1e+21,\"\u{e9}\",0],\"b\":1,\"\u{20ac}\":null}"
    );
    let out = work
        .dogana(["canonical", "-"])
        .write_stdin(" [ 3 , {\"z\":1,\"y\":2} ] ")
        .assert()
        .success();
    assert_eq!(text(&out.get_output().stdout), "[3,{\"y\":2,\"z\":1}]");
    // a manifest's canonical bytes are its identity JSON only when nothing is at a default;
    // the command prints JCS of the document as given
    let m = common::orders()
        .manifest("full", "2026-10-26T06:00:00Z".parse().unwrap())
        .rows(1)
        .build()
        .unwrap();
    work.write("m.json", &m.to_json());
    let out = work.dogana(["canonical", "m.json"]).assert().success();
    assert_eq!(out.get_output().stdout, dogana_json::jcs(&m.to_value()));
}

#[test]
fn canonical_refusals() {
    // rule: CLI-29
    let work = Work::new();
    work.write("dup.json", r#"{"a": 1, "a": 2}"#);
    let err = refused(&work, ["canonical", "dup.json"]);
    assert!(
        err.starts_with("error: document dup.json is not valid JSON: "),
        "{err}"
    );
    work.write("big.json", "[9007199254740993]");
    let err = refused(&work, ["canonical", "big.json"]);
    assert!(err.contains("without rounding"), "{err}");
    work.dogana(["canonical"]).assert().code(2);
}

#[test]
fn completions_for_each_shell() {
    // rule: CLI-01
    let work = Work::new();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = work.dogana(["completions", shell]).assert().success();
        let script = text(&out.get_output().stdout);
        assert!(script.contains("dogana"), "{shell}");
        assert!(script.contains("produced-at"), "{shell}");
    }
    work.dogana(["completions", "tcsh"]).assert().code(2);
    work.dogana(["completions"]).assert().code(2);
}

#[test]
fn every_command_has_help_with_examples() {
    // rule: CLI-01
    // rule: CLI-03
    // rule: CLI-15
    // rule: CLI-20
    let work = Work::new();
    for command in [
        "manifest",
        "check",
        "claims",
        "deliver",
        "receipts",
        "verify",
        "contract",
        "identity",
        "canonical",
        "completions",
    ] {
        let out = work.dogana([command, "--help"]).assert().success();
        let help = text(&out.get_output().stdout);
        assert!(help.contains("Examples:"), "{command}");
        assert!(help.contains(&format!("dogana {command} ")), "{command}");
    }
    let out = work.dogana(["--help"]).assert().success();
    let help = text(&out.get_output().stdout);
    assert!(help.contains("Examples:") && help.contains("Exit status"));
    let usage = |command: &str| {
        let out = work.dogana([command, "--help"]).assert().success();
        text(&out.get_output().stdout)
            .lines()
            .find(|l| l.starts_with("Usage: "))
            .unwrap()
            .to_owned()
    };
    insta::assert_snapshot!(
        [usage("manifest"), usage("check"), usage("claims")].join("\n"),
        @r"
    Usage: dogana manifest FILE --contract PATH --shape NAME --produced-at TIME --rows N [options]
    Usage: dogana check FILE --contract PATH [--manifest PATH] [--json]
    Usage: dogana claims LEDGER [--at TIME] [--limit-days DAYS] [--window LOW HIGH] [--json]
    "
    );
    work.dogana(["--version"]).assert().success();
    work.dogana(["help", "manifest"]).assert().success();
}

#[test]
fn usage_errors_exit_2_with_usage() {
    // rule: CLI-29
    let work = Work::new();
    work.dogana(["claims", "--at"])
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::starts_with(
            "error: a value is required for '--at <TIME>'",
        ));
    let out = work
        .dogana(["claims", "ledger.json", "--bogus"])
        .assert()
        .code(2);
    let err = text(&out.get_output().stderr);
    assert!(err.contains("Usage: dogana claims"), "{err}");
}

#[test]
fn receiver_commands_are_there() {
    // rule: CLI-30
    // Decision: the receiver commands (deliver, receipts, verify, claims --store) run on a
    // dogana-sqlite store (tests/receiver.rs); called without their arguments they are usage
    // errors.
    let work = Work::new();
    for command in ["deliver", "receipts", "verify"] {
        work.dogana([command]).assert().code(2);
        work.dogana([command, "--help"]).assert().success();
    }
    work.dogana(["claims", "--store", "db.sqlite"])
        .assert()
        .code(2);
    // a reader never creates a store
    work.dogana(["claims", "--store", "db.sqlite", "orders"])
        .assert()
        .code(1);
    assert!(!work.exists("db.sqlite"));
}
