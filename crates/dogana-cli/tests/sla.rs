//! `dogana sla --store DB --odcs FILE`: an ODCS document's service levels against the claims a
//! store's ledger makes (docs/decisions.md, "Service levels from the ledger"): latency from
//! the table's complete-as-of date, frequency from its newest, the rest not checkable; exit 1
//! with DGN-502 when one is missed, and since when.

mod common;

use common::{refused_code, text, Work};
use dogana_codes as codes;

const SUNDAY: &str = "\
id,order_date,updated_at,deleted
1,2026-10-20,2026-10-20T10:00:00Z,false
2,2026-10-21,2026-10-21T10:00:00Z,false
3,2026-10-22,2026-10-22T10:00:00Z,false
";

const ODCS: &str = "\
apiVersion: v3.0.2
kind: DataContract
id: orders-sla
status: active
schema:
  - name: orders
    logicalType: object
    properties:
      - name: id
        logicalType: integer
slaProperties:
  - property: latency
    value: 1
    unit: d
    element: orders.updated_at
  - property: frequency
    value: 12
    unit: h
    element: orders
  - property: retention
    value: 3
    unit: y
    element: orders.order_date
";

/// A store holding orders, read whole on Sunday 2026-10-25 at 06:00 (the concepts' contract).
fn store(work: &Work, shape: &str, extra: &[&str]) {
    work.write("sun.csv", SUNDAY);
    let mut args = vec![
        "manifest",
        "sun.csv",
        "--contract",
        "orders.toml",
        "--shape",
        shape,
        "--produced-at",
        "2026-10-25T06:00:00Z",
        "--rows",
        "3",
    ];
    args.extend_from_slice(extra);
    work.dogana(&args).assert().success();
    work.dogana([
        "deliver",
        "sun.csv",
        "--store",
        "s.db",
        "--contract",
        "orders.toml",
        "--at",
        "2026-10-25T06:05:00Z",
    ])
    .assert()
    .success();
}

#[test]
fn met_levels_pass_and_the_unanswerable_are_named() {
    let work = Work::new();
    store(&work, "full", &[]);
    work.write("orders.odcs.yaml", ODCS);
    let out = work
        .dogana([
            "sla",
            "--store",
            "s.db",
            "--odcs",
            "orders.odcs.yaml",
            "--at",
            "2026-10-25T12:00:00Z",
        ])
        .assert()
        .success();
    let stdout = text(&out.get_output().stdout);
    let dates = "complete as of 2026-10-25T06:00:00+00:00; newest complete as of 2026-10-25T06:00:00+00:00; deletions as of 2026-10-25T06:00:00+00:00";
    assert_eq!(
        stdout,
        format!(
            "orders latency 1 d: met; {dates}\n\
             orders frequency 12 h: met; {dates}\n\
             orders retention 3 y: not checkable: the ledger records what deliveries proved, not how long the receiver keeps rows\n"
        )
    );
}

#[test]
fn a_missed_level_exits_1_and_says_since_when() {
    let work = Work::new();
    store(&work, "full", &[]);
    work.write("orders.odcs.yaml", ODCS);
    let args = [
        "sla",
        "--store",
        "s.db",
        "--odcs",
        "orders.odcs.yaml",
        "--at",
        "2026-10-26T07:00:00Z",
    ];
    let (code, line) = refused_code(&work, args);
    assert_eq!(code, codes::SLA_MISSED);
    assert!(
        line.starts_with("error: 2 service levels of orders.odcs.yaml missed at 2026-10-26T07:00:00+00:00, first orders latency 1 d"),
        "{line}"
    );
    let out = work.dogana(args).assert().code(1);
    let stdout = text(&out.get_output().stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    // complete as of Sunday 06:00: one day later it is too old, twelve hours later as well
    assert!(
        lines[0].starts_with("orders latency 1 d: missed since 2026-10-26T06:00:00+00:00;"),
        "{stdout}"
    );
    assert!(
        lines[1].starts_with("orders frequency 12 h: missed since 2026-10-25T18:00:00+00:00;"),
        "{stdout}"
    );
    // the JSON report
    let out = work
        .dogana([
            "sla",
            "--store",
            "s.db",
            "--odcs",
            "orders.odcs.yaml",
            "--at",
            "2026-10-26T07:00:00Z",
            "--json",
        ])
        .assert()
        .code(1);
    let doc: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(doc["met"], false);
    let slas = doc["slas"].as_array().unwrap();
    assert_eq!(slas[0]["status"], "missed");
    assert_eq!(slas[0]["since"], "2026-10-26T06:00:00+00:00");
    assert_eq!(slas[0]["complete_as_of"], "2026-10-25T06:00:00+00:00");
    assert_eq!(slas[2]["status"], "not_checkable");
    let err: serde_json::Value = serde_json::from_slice(&out.get_output().stderr).unwrap();
    assert_eq!(err["error"]["code"], codes::SLA_MISSED.id);
}

#[test]
fn a_region_never_proven_complete_misses_latency_with_no_date() {
    // a window read proves its window only: the regions either side are unknown
    let work = Work::new();
    store(
        &work,
        "partition",
        &["--window", "2026-10-20", "2026-10-22"],
    );
    work.write("orders.odcs.yaml", ODCS);
    let out = work
        .dogana([
            "sla",
            "--store",
            "s.db",
            "--odcs",
            "orders.odcs.yaml",
            "--at",
            "2026-10-25T07:00:00Z",
        ])
        .assert()
        .code(1);
    let stdout = text(&out.get_output().stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[0].starts_with("orders latency 1 d: missed: a region of the table was never proven complete; complete as of unknown; newest complete as of 2026-10-25T06:00:00+00:00"),
        "{stdout}"
    );
    // the window's region was proven an hour ago: updated within 12 hours
    assert!(
        lines[1].starts_with("orders frequency 12 h: met;"),
        "{stdout}"
    );
}

#[test]
fn bad_documents_and_unknown_tables_are_refused() {
    let work = Work::new();
    store(&work, "full", &[]);
    let cases = [
        (
            ODCS.replace("name: orders\n", "name: invoices\n")
                .replace("orders.updated_at", "invoices")
                .replace("element: orders\n", "element: invoices\n")
                .replace("orders.order_date", "invoices"),
            codes::TABLE_UNKNOWN,
            "no receipt and no ledger for table \"invoices\"",
        ),
        (
            ODCS.replace("value: 12", "value: soon"),
            codes::DATA_CONTRACT_INVALID,
            "slaProperties[1] (\"frequency\"): value \"soon\" is not a positive number",
        ),
        (
            ODCS.replace("element: orders\n", "element: invoices.total\n"),
            codes::DATA_CONTRACT_INVALID,
            "no schema object is named \"invoices\"",
        ),
        (
            ODCS.split("slaProperties:").next().unwrap().to_owned(),
            codes::DATA_CONTRACT_INVALID,
            "has no slaProperties: nothing to check",
        ),
        (
            "schema: [".to_owned(),
            codes::DATA_CONTRACT_INVALID,
            "does not parse as YAML",
        ),
    ];
    for (doc, code, says) in cases {
        work.write("bad.yaml", &doc);
        let (got, line) = refused_code(
            &work,
            [
                "sla",
                "--store",
                "s.db",
                "--odcs",
                "bad.yaml",
                "--at",
                "2026-10-25T12:00:00Z",
            ],
        );
        assert_eq!(got, code, "{line}");
        assert!(line.contains(says), "{says}: {line}");
    }
}

#[test]
fn an_unanswerable_level_needs_no_table_in_the_store() {
    // a lifecycle date for every schema object, one of which the store does not hold
    let work = Work::new();
    store(&work, "full", &[]);
    let doc = ODCS.replace(
        "slaProperties:\n",
        "  - name: customers\n    properties:\n      - name: id\n        logicalType: integer\nslaProperties:\n  - property: endOfSupport\n    value: \"2032-05-12T09:30:10-08:00\"\n",
    );
    work.write("orders.odcs.yaml", &doc);
    let out = work
        .dogana([
            "sla",
            "--store",
            "s.db",
            "--odcs",
            "orders.odcs.yaml",
            "--at",
            "2026-10-25T12:00:00Z",
        ])
        .assert()
        .success();
    let stdout = text(&out.get_output().stdout);
    assert!(stdout.starts_with("orders endOfSupport 2032-05-12T09:30:10-08:00: not checkable: a lifecycle date of the contract, not of the data\ncustomers endOfSupport"), "{stdout}");
}
