//! `dogana check`: CLI-15 to CLI-19.

mod common;

use common::{refused, text, Work, ABC_SHA256};
use dogana::{Check, FromWire, Wire};

const T: &str = "2026-10-26T06:00:00Z";

fn write_manifest(work: &Work, file: &str, shape: &str) {
    work.dogana([
        "manifest",
        file,
        "--contract",
        "orders.toml",
        "--shape",
        shape,
        "--produced-at",
        T,
        "--rows",
        "1000",
    ])
    .assert()
    .success();
}

#[test]
fn success_prints_one_line() {
    // rule: CLI-15
    // rule: CLI-19
    let work = Work::new();
    write_manifest(&work, "orders.csv", "full");
    let out = work
        .dogana(["check", "orders.csv", "--contract", "orders.toml"])
        .assert()
        .success();
    assert!(out.get_output().stderr.is_empty());
    insta::assert_snapshot!(text(&out.get_output().stdout), @"orders.csv: manifest valid for orders/full; content_hash matches");
}

#[test]
fn rows_are_not_checked() {
    // rule: CLI-18
    // The manifest declares 1000 rows; the file holds three bytes. Only the receiver counts.
    let work = Work::new();
    write_manifest(&work, "orders.csv", "full");
    work.dogana(["check", "orders.csv", "--contract", "orders.toml"])
        .assert()
        .success();
}

#[test]
fn manifest_option_names_the_manifest() {
    // rule: CLI-15
    let work = Work::new();
    write_manifest(&work, "orders.csv", "last3");
    std::fs::rename(work.path("orders.csv.json"), work.path("m.json")).unwrap();
    // without --manifest, FILE.json is read and is missing
    let err = refused(&work, ["check", "orders.csv", "--contract", "orders.toml"]);
    assert!(
        err.starts_with("error: cannot read the manifest orders.csv.json: "),
        "{err}"
    );
    let out = work
        .dogana([
            "check",
            "orders.csv",
            "--contract",
            "orders.toml",
            "--manifest",
            "m.json",
        ])
        .assert()
        .success();
    assert_eq!(
        text(&out.get_output().stdout),
        "orders.csv: manifest valid for orders/last3; content_hash matches\n"
    );
}

#[test]
fn a_content_mismatch_is_refused() {
    // rule: CLI-16
    let work = Work::new();
    write_manifest(&work, "orders.csv", "full");
    work.write("orders.csv", "abd");
    let err = refused(&work, ["check", "orders.csv", "--contract", "orders.toml"]);
    insta::assert_snapshot!(err, @"error: orders.csv does not match its manifest: orders.csv.json declares content_hash ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad, the file's SHA-256 is a52d159f262b2c6ddb724a61840befc36eb30c88877a4030b65cbe86298449c9 (CLI-16); deliver the file the manifest describes, or write a new manifest with dogana manifest --force");
}

#[test]
fn a_manifest_without_content_hash_is_refused() {
    // rule: CLI-17
    let work = Work::new();
    let m = common::orders()
        .manifest("full", T.parse().unwrap())
        .rows(1)
        .build()
        .unwrap();
    work.write("orders.csv.json", &m.to_json());
    let err = refused(&work, ["check", "orders.csv", "--contract", "orders.toml"]);
    insta::assert_snapshot!(err, @"error: manifest orders.csv.json declares no content_hash, so nothing ties it to orders.csv (CLI-17); write it again with dogana manifest, which declares one");
}

#[test]
fn the_manifest_is_checked_against_the_contract() {
    // rule: CLI-16
    let work = Work::new();
    write_manifest(&work, "orders.csv", "last3");
    // another contract for the same table, without the shape
    work.write(
        "other.toml",
        "table = \"orders\"\nkey = [\"id\"]\n[types]\nid = \"int\"\n[shapes.full]\nkind = \"full\"\n",
    );
    let err = refused(&work, ["check", "orders.csv", "--contract", "other.toml"]);
    insta::assert_snapshot!(err, @r#"error: manifest orders.csv.json is invalid for contract "orders": shape = "last3": the contract has no such shape; it has "full" (MAN-04); write it again with dogana manifest"#);
    // another table
    work.write(
        "items.toml",
        "table = \"items\"\nkey = [\"id\"]\n[types]\nid = \"int\"\n[shapes.last3]\nkind = \"full\"\n",
    );
    let err = refused(&work, ["check", "orders.csv", "--contract", "items.toml"]);
    assert!(err.contains("table = \"orders\""), "{err}");
}

#[test]
fn the_schema_hash_is_checked() {
    // rule: CLI-16
    let work = Work::new();
    write_manifest(&work, "orders.csv", "full");
    let hashed = format!(
        "schema_hash = \"{}\"\n{}",
        "0".repeat(64),
        common::ORDERS_TOML
    );
    work.write("hashed.toml", &hashed);
    let err = refused(&work, ["check", "orders.csv", "--contract", "hashed.toml"]);
    assert!(
        err.contains("schema_hash = None") && err.contains("(MAN-22)"),
        "{err}"
    );
}

#[test]
fn an_unreadable_file_is_refused() {
    // rule: CLI-29
    let work = Work::new();
    write_manifest(&work, "orders.csv", "full");
    std::fs::remove_file(work.path("orders.csv")).unwrap();
    let err = refused(&work, ["check", "orders.csv", "--contract", "orders.toml"]);
    // the data file is named as the data file, before its manifest is read
    assert!(
        err.starts_with("error: the data file orders.csv cannot be read: "),
        "{err}"
    );
    work.write("broken.json", "{");
    let err = refused(
        &work,
        [
            "check",
            "orders.toml",
            "--contract",
            "orders.toml",
            "--manifest",
            "broken.json",
        ],
    );
    assert!(
        err.starts_with("error: manifest broken.json is refused: "),
        "{err}"
    );
    let err = refused(&work, ["check", "orders.csv", "--contract", "nowhere.toml"]);
    assert!(
        err.starts_with("error: cannot read the contract nowhere.toml"),
        "{err}"
    );
    work.dogana(["check", "orders.csv"]).assert().code(2);
    work.dogana(["check", "--contract", "orders.toml"])
        .assert()
        .code(2);
}

#[test]
fn json_reports_the_checks() {
    // rule: CLI-19
    let work = Work::new();
    write_manifest(&work, "orders.csv", "full");
    let out = work
        .dogana(["check", "orders.csv", "--contract", "orders.toml", "--json"])
        .assert()
        .success();
    let stdout = text(&out.get_output().stdout);
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["passed"], true);
    assert_eq!(doc["file"], "orders.csv");
    assert_eq!(doc["manifest"], "orders.csv.json");
    let checks: Vec<Check> = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| Check::from_value(c).unwrap())
        .collect();
    assert_eq!(
        checks,
        [
            Check::pass(
                "manifest",
                "complete whole-table read of \"orders\" through shape \"full\""
            ),
            Check::pass("content_hash", format!("sha256 {ABC_SHA256} as declared")),
        ]
    );
    // a failure: the same object with passed false, and the one-line refusal
    work.write("orders.csv", "abd");
    let out = work
        .dogana(["check", "orders.csv", "--contract", "orders.toml", "--json"])
        .assert()
        .code(1);
    let doc: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(doc["passed"], false);
    assert_eq!(doc["checks"][1]["passed"], false);
    assert_eq!(text(&out.get_output().stderr).lines().count(), 1);
    // an invalid manifest: content_hash is not evaluated
    work.write("other.toml", "table = \"orders\"\nkey = [\"id\"]\n[types]\nid = \"int\"\n[shapes.only]\nkind = \"full\"\n");
    let out = work
        .dogana(["check", "orders.csv", "--contract", "other.toml", "--json"])
        .assert()
        .code(1);
    let doc: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    insta::assert_snapshot!(dogana_json::canonical(&doc["checks"]), @r#"[{"detail":"shape = \"full\": the contract has no such shape; it has \"only\" (MAN-04)","kind":"Check","name":"manifest","passed":false,"version":4},{"detail":"not evaluated: the manifest check failed","kind":"Check","name":"content_hash","passed":false,"version":4}]"#);
}
