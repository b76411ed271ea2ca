//! `dogana contract` and the TOML contract description (docs/contract-toml.md).

mod common;

use common::{refused, text, Work};
use dogana::{
    column_hash, Contract, Deletions, Duration, FromWire, LogicalType, Shape, Timestamp, Wire,
};

/// The concepts' orders contract, through the API.
fn concepts_orders() -> Contract {
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

/// The first ```toml block of docs/contract-toml.md.
fn docs_example() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/contract-toml.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let start = doc.find("```toml\n").unwrap() + "```toml\n".len();
    let end = start + doc[start..].find("```").unwrap();
    doc[start..end].to_owned()
}

fn contract_of(work: &Work, toml: &str) -> Contract {
    work.write("c.toml", toml);
    let out = work.dogana(["contract", "c.toml"]).assert().success();
    let stdout = text(&out.get_output().stdout);
    let c = Contract::from_json(&stdout).unwrap();
    assert_eq!(stdout, format!("{}\n", c.to_json()));
    c
}

#[test]
fn docs_example_is_the_concepts_orders_contract() {
    // rule: CLI-03
    let work = Work::new();
    assert_eq!(contract_of(&work, &docs_example()), concepts_orders());
}

#[test]
fn toml_round_trip() {
    // rule: CLI-08
    // TOML -> wire document -> Contract equals the API's; the wire document used as
    // --contract gives the same manifest as the TOML.
    let work = Work::new();
    let c = contract_of(&work, common::ORDERS_TOML);
    assert_eq!(c, common::orders());
    let out = work
        .dogana(["contract", "orders.toml", "-o", "orders.contract.json"])
        .assert()
        .success();
    assert_eq!(
        text(&out.get_output().stdout),
        format!(
            "wrote orders.contract.json (Contract {})\nschema_hash none\n",
            c.identity()
        )
    );
    assert_eq!(
        Contract::from_json(&work.read("orders.contract.json")).unwrap(),
        c
    );
    // a JSON contract is normalized by the same command
    let out = work
        .dogana(["contract", "orders.contract.json"])
        .assert()
        .success();
    assert_eq!(
        text(&out.get_output().stdout),
        work.read("orders.contract.json")
    );
    // identity of the TOML and of the document agree
    let a = work.dogana(["identity", "orders.toml"]).assert().success();
    let b = work
        .dogana(["identity", "orders.contract.json"])
        .assert()
        .success();
    assert_eq!(a.get_output().stdout, b.get_output().stdout);
    assert_eq!(
        text(&a.get_output().stdout),
        format!("Contract {}\n", c.identity())
    );
}

#[test]
fn an_existing_output_is_replaced_only_with_force() {
    // rule: CLI-12
    let work = Work::new();
    work.write("out.json", "precious");
    let err = refused(&work, ["contract", "orders.toml", "-o", "out.json"]);
    assert!(err.contains("pass --force"), "{err}");
    assert_eq!(work.read("out.json"), "precious");
    work.dogana(["contract", "orders.toml", "-o", "out.json", "--force"])
        .assert()
        .success();
    assert_eq!(
        Contract::from_json(&work.read("out.json")).unwrap(),
        common::orders()
    );
    // -o - is standard output
    let out = work
        .dogana(["contract", "orders.toml", "-o", "-"])
        .assert()
        .success();
    assert_eq!(text(&out.get_output().stdout), work.read("out.json"));
}

#[test]
fn columns_compute_the_schema_hash() {
    // rule: CLI-06
    let work = Work::new();
    let pairs = "columns = [[\"id\", \"int\"], [\"order_date\", \"date\"], [\"updated_at\", \"datetime\"], [\"amount\", \"decimal(12,2)\"], [\"deleted\", \"bool\"]]\n";
    let expected = column_hash(&[
        ("id", "int"),
        ("order_date", "date"),
        ("updated_at", "datetime"),
        ("amount", "decimal(12,2)"),
    ]);
    let c = contract_of(&work, &format!("{pairs}{}", docs_example()));
    assert_eq!(c.schema_hash(), Some(expected.as_str()));

    // the same as an array of tables, with the types taken from the columns
    let tables = "table = \"orders\"\nkey = [\"id\"]\nwindow_column = \"order_date\"\n\
        [[columns]]\nname = \"id\"\ntype = \"int\"\n\
        [[columns]]\nname = \"order_date\"\ntype = \"date\"\n\
        [[columns]]\nname = \"amount\"\ntype = \"decimal(12,2)\"\n\
        [shapes.last3]\nkind = \"window\"\nsize = \"3d\"\n";
    let c = contract_of(&work, tables);
    assert_eq!(
        c.schema_hash(),
        Some(
            column_hash(&[
                ("id", "int"),
                ("order_date", "date"),
                ("amount", "decimal(12,2)")
            ])
            .as_str()
        )
    );
    assert_eq!(c.types().get("order_date"), Some(&LogicalType::Date));

    // -o prints what was hashed
    work.write("h.toml", &format!("{pairs}{}", docs_example()));
    let out = work
        .dogana(["contract", "h.toml", "-o", "h.json"])
        .assert()
        .success();
    let stdout = text(&out.get_output().stdout);
    assert!(
        stdout.contains(&format!("schema_hash {expected}\n")),
        "{stdout}"
    );
    assert!(
        stdout.ends_with(
            "hashed columns: id int, order_date date, updated_at datetime, amount decimal(12,2)\n"
        ),
        "{stdout}"
    );

    // a declared hash must agree
    work.write(
        "bad.toml",
        &format!(
            "schema_hash = \"{}\"\n{pairs}{}",
            "0".repeat(64),
            docs_example()
        ),
    );
    let err = refused(&work, ["contract", "bad.toml"]);
    assert!(err.contains("is not the hash of columns"), "{err}");
    // a declared hash alone is kept
    let declared = format!("schema_hash = \"{expected}\"\n{}", docs_example());
    assert_eq!(
        contract_of(&work, &declared).schema_hash(),
        Some(expected.as_str())
    );
    // types in columns and [types] must agree
    let clash = format!("columns = [[\"id\", \"str\"]]\n{}", docs_example());
    assert!(refused_toml(&work, &clash).contains("make them agree"));
    // column types are the six or decimal(p,s)
    let odd = format!(
        "columns = [[\"id\", \"int\"], [\"x\", \"varchar\"]]\n{}",
        docs_example()
    );
    assert!(refused_toml(&work, &odd).contains("decimal(p,s)"));
}

fn refused_toml(work: &Work, toml: &str) -> String {
    work.write("r.toml", toml);
    refused(work, ["contract", "r.toml"])
}

#[test]
fn unknown_keys_are_refused_by_name() {
    // rule: CLI-29
    let work = Work::new();
    let err = refused_toml(
        &work,
        &docs_example().replace("window_column", "windw_column"),
    );
    insta::assert_snapshot!(err, @"error: contract r.toml: unknown key windw_column; the keys here are table, key, window_column, cursor_column, deleted_column, types, columns, columns_from, schema_hash, start_at, shapes");
    let err = refused_toml(
        &work,
        &docs_example().replace("size = \"3d\"", "window_size = \"3d\""),
    );
    insta::assert_snapshot!(err, @"error: contract r.toml: unknown key shapes.last3.window_size; the keys here are kind, deletions, cost, size, lookback");
}

#[test]
fn shapes_durations_and_start() {
    // rule: CLI-08
    let work = Work::new();
    let toml = r#"
table = "events"
key = []
cursor_column = "at"
start_at = 2026-01-01T01:00:00+01:00
[types]
at = "datetime"
[shapes.append]
kind = "changes"
"#;
    let c = contract_of(&work, toml);
    assert_eq!(
        c.start_at(),
        Some("2026-01-01T00:00:00Z".parse::<Timestamp>().unwrap())
    );
    assert_eq!(c.shape("append"), Some(&Shape::changes(Deletions::None)));
    let c = contract_of(
        &work,
        &toml.replace("2026-01-01T01:00:00+01:00", "\"2026-01-01T00:00:00Z\""),
    );
    assert_eq!(
        c.start_at(),
        Some("2026-01-01T00:00:00Z".parse::<Timestamp>().unwrap())
    );

    let keyed = r#"
table = "t"
key = ["id"]
window_column = "ts"
cursor_column = "u"
[types]
id = "str"
ts = "datetime"
u = "int"
[shapes.a]
kind = "window"
size = "1d12h"
[shapes.b]
kind = "window_changes"
lookback = 90
cost = 0.5
[shapes.c]
kind = "sequence"
deletions = "none"
[shapes.d]
kind = "changes"
lookback = "1.5h"
"#;
    let c = contract_of(&work, keyed);
    assert_eq!(
        c.shape("a").unwrap().window_size(),
        Some(Duration::from_seconds(129_600).unwrap())
    );
    assert_eq!(
        c.shape("b").unwrap().lookback_value(),
        Some(Duration::from_seconds(90).unwrap())
    );
    assert_eq!(c.shape("b").unwrap().cost_value(), 0.5);
    assert_eq!(c.shape("c"), Some(&Shape::sequence(Deletions::None)));
    assert_eq!(
        c.shape("d").unwrap().lookback_value(),
        Some(Duration::from_seconds(5400).unwrap())
    );

    // refusals
    let naive = toml.replace("2026-01-01T01:00:00+01:00", "2026-01-01T01:00:00");
    assert!(refused_toml(&work, &naive).contains("has no UTC offset"));
    let bad_kind = keyed.replace("kind = \"sequence\"", "kind = \"feed\"");
    assert!(refused_toml(&work, &bad_kind).contains("is not a kind of shape"));
    let bad_del = keyed.replace("deletions = \"none\"", "deletions = \"absence\"");
    assert!(refused_toml(&work, &bad_del).contains("\"none\" or \"tombstone\""));
    let full_del =
        "table = \"t\"\nkey = []\n[shapes.f]\nkind = \"full\"\ndeletions = \"tombstone\"\n";
    assert!(refused_toml(&work, full_del).contains("(CONTRACT-29)"));
    let bad_size = keyed.replace("\"1d12h\"", "\"3w\"");
    assert!(refused_toml(&work, &bad_size).contains("unknown unit 'w'"));
    let no_kind = keyed.replace("kind = \"window_changes\"\n", "");
    assert!(refused_toml(&work, &no_kind).contains("shapes.b.kind is missing"));
    let bad_type = keyed.replace("u = \"int\"", "u = \"integer\"");
    assert!(refused_toml(&work, &bad_type).contains("is not a type"));
    let no_key = "table = \"t\"\n[shapes.f]\nkind = \"full\"\n";
    assert!(refused_toml(&work, no_key).contains("key is missing"));
    let no_table = "key = []\n[shapes.f]\nkind = \"full\"\n";
    assert!(refused_toml(&work, no_table).contains("table is missing"));
    let syntax = "table = \"t\nkey = []\n";
    let err = refused_toml(&work, syntax);
    assert!(err.contains("is not valid TOML at line 1"), "{err}");
}

#[test]
fn the_core_checks_the_contract() {
    // rule: CLI-29
    let work = Work::new();
    let toml = docs_example()
        .replace("window_column = \"order_date\"\n", "")
        .replace("order_date = \"date\"\n", "");
    let err = refused_toml(&work, &toml);
    insta::assert_snapshot!(err, @"error: contract r.toml is invalid: window_column = None: a contract with a window shape names its window column (CONTRACT-12); fix the description");
}

#[test]
fn wrong_calls() {
    // rule: CLI-29
    let work = Work::new();
    work.dogana(["contract"]).assert().code(2);
    let err = refused(&work, ["contract", "nowhere.toml"]);
    assert!(
        err.starts_with("error: cannot read the contract nowhere.toml"),
        "{err}"
    );
}
