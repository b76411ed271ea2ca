//! Tables delivered together and planning from the command line: `deliver --group`, `claims
//! --store DB TABLE TABLE...`, `ledger`, `plan`, `plan --together` and `next`, each held to
//! the core's answers.

mod common;

use common::{refused, text, Work, ORDERS_TOML};
use dogana::{
    next_extraction, plan_delivery, FromWire, Group, Ledger, Requirement, Timestamp, Wire,
};

const INVOICES_TOML: &str = r#"table = "invoices"
key = ["id"]
[types]
id = "int"
[shapes.full]
kind = "full"
"#;

const LINES_TOML: &str = r#"table = "lines"
key = ["id"]
[types]
id = "int"
[shapes.full]
kind = "full"
"#;

fn shop() -> Work {
    let work = Work::new();
    work.write("invoices.toml", INVOICES_TOML);
    work.write("lines.toml", LINES_TOML);
    work.write(
        "shop.toml",
        "contracts = [\"invoices.toml\", \"lines.toml\"]\n",
    );
    work
}

/// Writes FILE with `ids` and its manifest, a full read of `contract` at `at`.
fn full(work: &Work, file: &str, contract: &str, at: &str, ids: &[i64]) {
    let mut text = String::from("id,amount\n");
    for id in ids {
        text.push_str(&format!("{id},1.00\n"));
    }
    work.write(file, &text);
    let n = ids.len().to_string();
    work.dogana([
        "manifest",
        file,
        "--contract",
        contract,
        "--shape",
        "full",
        "--produced-at",
        at,
        "--rows",
        &n,
        "--force",
    ])
    .assert()
    .success();
}

fn stdout(work: &Work, args: &[&str]) -> String {
    let out = work.dogana(args).assert().success();
    text(&out.get_output().stdout)
}

fn ts(s: &str) -> Timestamp {
    s.parse().unwrap()
}

#[test]
fn invoices_and_lines_are_exact_together_only_when_read_at_one_instant() {
    // rule: GROUP-01, GROUP-09, GROUP-10, GROUP-16, CLAIMS-13
    let work = shop();
    full(
        &work,
        "inv.csv",
        "invoices.toml",
        "2026-10-27T10:00:00Z",
        &[1, 2],
    );
    full(
        &work,
        "lin.csv",
        "lines.toml",
        "2026-10-27T10:05:00Z",
        &[10, 11, 12],
    );
    for (file, contract) in [("inv.csv", "invoices.toml"), ("lin.csv", "lines.toml")] {
        work.dogana([
            "deliver",
            file,
            "--store",
            "shop.db",
            "--contract",
            contract,
            "--at",
            "2026-10-27T11:00:00Z",
        ])
        .assert()
        .success();
    }
    let claims = stdout(
        &work,
        &[
            "claims",
            "--store",
            "shop.db",
            "invoices",
            "lines",
            "--at",
            "2026-10-27T11:00:00Z",
        ],
    );
    assert!(
        claims.ends_with("invoices + lines: complete; exact at no single instant\n"),
        "{claims}"
    );
    // one group read at one instant: exact at it
    full(
        &work,
        "inv2.csv",
        "invoices.toml",
        "2026-10-27T12:00:00Z",
        &[1, 2, 3],
    );
    full(
        &work,
        "lin2.csv",
        "lines.toml",
        "2026-10-27T12:00:00Z",
        &[10, 11],
    );
    let out = stdout(
        &work,
        &[
            "deliver",
            "--group",
            "shop.toml",
            "inv2.csv",
            "lin2.csv",
            "--store",
            "shop.db",
            "--at",
            "2026-10-27T12:30:00Z",
        ],
    );
    assert!(out.contains("together: passed"), "{out}");
    assert_eq!(out.matches(": accepted ").count(), 2, "{out}");
    let claims = stdout(
        &work,
        &[
            "claims",
            "--store",
            "shop.db",
            "invoices",
            "lines",
            "--at",
            "2026-10-27T13:00:00Z",
            "--dates",
        ],
    );
    assert!(
        claims.contains(
            "invoices + lines: complete; exact at 2026-10-27T12:00:00+00:00\ninvoices + lines: complete as of 2026-10-27T12:00:00+00:00; deletions as of 2026-10-27T12:00:00+00:00\n"
        ),
        "{claims}"
    );
    // the same group again is a replay of both, exit 0
    let again = stdout(
        &work,
        &[
            "deliver",
            "--group",
            "shop.toml",
            "inv2.csv",
            "lin2.csv",
            "--store",
            "shop.db",
        ],
    );
    assert_eq!(again.matches(": replayed ").count(), 2, "{again}");
}

#[test]
fn a_group_with_one_table_refused_publishes_nothing_and_exits_1() {
    // rule: GROUP-12, GROUP-15, GROUP-16
    let work = shop();
    full(
        &work,
        "inv.csv",
        "invoices.toml",
        "2026-10-27T10:00:00Z",
        &[1],
    );
    full(
        &work,
        "lin.csv",
        "lines.toml",
        "2026-10-27T10:05:00Z",
        &[10],
    );
    // different produced_at: the together check fails, named
    let line = refused(
        &work,
        [
            "deliver",
            "--group",
            "shop.toml",
            "inv.csv",
            "lin.csv",
            "--store",
            "shop.db",
            "--at",
            "2026-10-27T11:00:00Z",
        ],
    );
    assert!(line.contains("together"), "{line}");
    assert!(line.contains("different instants"), "{line}");
    let receipts = stdout(&work, &["receipts", "--store", "shop.db", "invoices"]);
    assert!(receipts.starts_with("1 rejected"), "{receipts}");
}

#[test]
fn bad_groups_are_refused_by_name_and_change_nothing() {
    // rule: GROUP-17, GROUP-08
    let work = shop();
    full(
        &work,
        "inv.csv",
        "invoices.toml",
        "2026-10-27T10:00:00Z",
        &[1],
    );
    full(
        &work,
        "lin.csv",
        "lines.toml",
        "2026-10-27T10:00:00Z",
        &[10],
    );
    // a group file naming a table twice, in another letter case
    work.write(
        "INVOICES.toml",
        &INVOICES_TOML.replace("\"invoices\"", "\"INVOICES\""),
    );
    work.write(
        "twice.toml",
        "contracts = [\"invoices.toml\", \"INVOICES.toml\"]\n",
    );
    let line = refused(
        &work,
        [
            "deliver",
            "--group",
            "twice.toml",
            "inv.csv",
            "--store",
            "shop.db",
        ],
    );
    assert!(line.contains("twice.toml"), "{line}");
    // a file whose manifest names a table the group does not hold
    work.write("orders.toml", ORDERS_TOML);
    work.write("o.csv", "id,order_date,updated_at,deleted\n");
    work.dogana([
        "manifest",
        "o.csv",
        "--contract",
        "orders.toml",
        "--shape",
        "full",
        "--produced-at",
        "2026-10-27T10:00:00Z",
        "--rows",
        "0",
    ])
    .assert()
    .success();
    let line = refused(
        &work,
        [
            "deliver",
            "--group",
            "shop.toml",
            "inv.csv",
            "o.csv",
            "--store",
            "shop.db",
        ],
    );
    assert!(line.contains("\"orders\", which the group"), "{line}");
    // one file for a two-table group
    let line = refused(
        &work,
        [
            "deliver",
            "--group",
            "shop.toml",
            "inv.csv",
            "--store",
            "shop.db",
        ],
    );
    assert!(line.contains("do not match"), "{line}");
    assert!(
        !work.exists("shop.db") || {
            let r = work
                .dogana(["receipts", "--store", "shop.db", "invoices"])
                .assert();
            r.get_output().status.code() == Some(1)
        }
    );
}

#[test]
fn ledger_plan_and_next_give_the_cores_answers() {
    // rule: PLANNER-01, PLANNER-15
    let work = Work::new();
    work.write("orders.toml", ORDERS_TOML);
    work.write(
        "sun.csv",
        "id,order_date,updated_at,deleted\n1,2026-10-20,2026-10-20T10:00:00Z,false\n",
    );
    work.dogana([
        "manifest",
        "sun.csv",
        "--contract",
        "orders.toml",
        "--shape",
        "full",
        "--produced-at",
        "2026-10-25T06:00:00Z",
        "--rows",
        "1",
    ])
    .assert()
    .success();
    work.dogana([
        "deliver",
        "sun.csv",
        "--store",
        "o.db",
        "--contract",
        "orders.toml",
        "--at",
        "2026-10-25T07:00:00Z",
    ])
    .assert()
    .success();
    // ledger: the stored document, byte for byte what the store holds
    let doc = stdout(&work, &["ledger", "--store", "o.db", "orders"]);
    let ledger = Ledger::from_json(doc.trim_end()).unwrap();
    assert_eq!(format!("{}\n", ledger.to_json()), doc);
    // plan: already met
    let out = stdout(
        &work,
        &[
            "plan",
            "--store",
            "o.db",
            "orders",
            "--complete-as-of",
            "2026-10-25T06:00:00Z",
        ],
    );
    assert!(out.contains("already meet"), "{out}");
    // plan: exact on Tuesday — the core's read, in wire form
    let req = Requirement::new("orders", ts("2026-10-27T06:00:00Z"))
        .with_deletions_as_of(ts("2026-10-27T06:00:00Z"));
    let expected = plan_delivery(&ledger, &req).unwrap().unwrap();
    let json = stdout(
        &work,
        &[
            "plan",
            "--store",
            "o.db",
            "orders",
            "--complete-as-of",
            "2026-10-27T06:00:00Z",
            "--deletions-as-of",
            "2026-10-27T06:00:00Z",
            "--json",
        ],
    );
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["extraction"], expected.to_value());
    assert_eq!(v["requirement"], req.to_value());
    let lines = stdout(
        &work,
        &[
            "plan",
            "--store",
            "o.db",
            "orders",
            "--complete-as-of",
            "2026-10-27T06:00:00Z",
            "--deletions-as-of",
            "2026-10-27T06:00:00Z",
        ],
    );
    assert!(lines.starts_with(&format!("{expected}\n")), "{lines}");
    // next: next_extraction's request
    let x = next_extraction(&ledger, "last3", ts("2026-10-27T06:00:00Z"), None).unwrap();
    let json = stdout(
        &work,
        &[
            "next",
            "--store",
            "o.db",
            "orders",
            "--shape",
            "last3",
            "--until",
            "2026-10-27T06:00:00Z",
            "--json",
        ],
    );
    assert_eq!(json, format!("{}\n", x.to_json()));
    // bad input: an unknown shape; a window the contract... (orders has one): a plan on a table
    // without a window column
    let line = refused(
        &work,
        [
            "next",
            "--store",
            "o.db",
            "orders",
            "--shape",
            "weekly",
            "--until",
            "2026-10-27T06:00:00Z",
        ],
    );
    assert!(line.contains("weekly"), "{line}");
}

#[test]
fn a_window_on_a_table_without_a_window_column_is_refused() {
    let work = shop();
    full(
        &work,
        "inv.csv",
        "invoices.toml",
        "2026-10-27T10:00:00Z",
        &[1],
    );
    work.dogana([
        "deliver",
        "inv.csv",
        "--store",
        "s.db",
        "--contract",
        "invoices.toml",
        "--at",
        "2026-10-27T11:00:00Z",
    ])
    .assert()
    .success();
    let line = refused(
        &work,
        [
            "plan",
            "--store",
            "s.db",
            "invoices",
            "--window",
            "1",
            "5",
            "--complete-as-of",
            "2026-10-28T00:00:00Z",
        ],
    );
    assert!(line.contains("no window column"), "{line}");
}

#[test]
fn plan_together_gives_plan_together() {
    // rule: GROUP-27, GROUP-28
    let work = shop();
    full(
        &work,
        "inv.csv",
        "invoices.toml",
        "2026-10-27T10:00:00Z",
        &[1],
    );
    full(
        &work,
        "lin.csv",
        "lines.toml",
        "2026-10-27T10:05:00Z",
        &[10],
    );
    for (file, contract) in [("inv.csv", "invoices.toml"), ("lin.csv", "lines.toml")] {
        work.dogana([
            "deliver",
            file,
            "--store",
            "shop.db",
            "--contract",
            contract,
            "--at",
            "2026-10-27T11:00:00Z",
        ])
        .assert()
        .success();
    }
    let ledgers: Vec<Ledger> = ["invoices", "lines"]
        .iter()
        .map(|t| {
            let doc = stdout(&work, &["ledger", "--store", "shop.db", t]);
            Ledger::from_json(doc.trim_end()).unwrap()
        })
        .collect();
    let group = Group::new(ledgers.iter().map(|l| l.contract().clone())).unwrap();
    let at = ts("2026-10-27T11:00:00Z");
    let expected = dogana::plan_together(&group, &ledgers, at, None)
        .unwrap()
        .unwrap();
    let json = stdout(
        &work,
        &[
            "plan",
            "--together",
            "--store",
            "shop.db",
            "invoices",
            "lines",
            "--at",
            "2026-10-27T11:00:00Z",
            "--json",
        ],
    );
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let want: Vec<serde_json::Value> = expected.iter().map(Wire::to_value).collect();
    assert_eq!(v, serde_json::Value::Array(want));
    assert_eq!(expected[0].until(), expected[1].until(), "one until");
}
