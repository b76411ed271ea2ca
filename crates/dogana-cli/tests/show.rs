//! `dogana show`: the page of a store's tables, or of a ledger document and its receipts.

mod common;

use common::{refused, text, Work};
use dogana::{Duration, Wire};
use dogana_show::{render, Options, TableHistory};
use dogana_sqlite::Store;

const SUNDAY: &str = "\
id,order_date,updated_at,amount,deleted
1,2026-10-20,2026-10-20T10:00:00Z,10.00,false
2,2026-10-21,2026-10-21T10:00:00Z,20.00,false
";

/// Changes since Sunday declaring 3 live rows; the file holds 1: rejected.
const MONDAY: &str = "\
id,order_date,updated_at,amount,deleted
2,2026-10-21,2026-10-25T09:00:00Z,21.00,false
";

const AT: &str = "2026-10-28T00:00:00Z";

/// orders.db with an accepted full dump and a rejected changes file.
fn store() -> Work {
    let work = Work::new();
    work.write("sun.csv", SUNDAY);
    work.write("mon.csv", MONDAY);
    for (file, args) in [
        (
            "sun.csv",
            vec![
                "--shape",
                "full",
                "--produced-at",
                "2026-10-25T06:00:00Z",
                "--rows",
                "2",
            ],
        ),
        (
            "mon.csv",
            vec![
                "--shape",
                "changes",
                "--produced-at",
                "2026-10-26T06:00:00Z",
                "--since",
                "2026-10-25T06:00:00Z",
                "--rows",
                "3",
            ],
        ),
    ] {
        let mut all = vec!["manifest", file, "--contract", "orders.toml"];
        all.extend(args);
        work.dogana(&all).assert().success();
    }
    work.dogana([
        "deliver",
        "sun.csv",
        "--store",
        "orders.db",
        "--contract",
        "orders.toml",
        "--at",
        "2026-10-25T06:05:00Z",
    ])
    .assert()
    .success();
    work.dogana([
        "deliver",
        "mon.csv",
        "--store",
        "orders.db",
        "--contract",
        "orders.toml",
        "--at",
        "2026-10-26T06:05:00Z",
    ])
    .assert()
    .code(1);
    work
}

/// The page the library makes of what the store holds.
fn expected(work: &Work) -> String {
    let mut db = Store::open(work.path("orders.db")).unwrap();
    let history = TableHistory {
        ledger: db.ledger("orders").unwrap(),
        receipts: db
            .receipts("orders")
            .unwrap()
            .into_iter()
            .map(|r| r.receipt)
            .collect(),
    };
    render(
        &[history],
        &Options::new(AT.parse().unwrap(), Duration::MAX),
    )
    .unwrap()
}

#[test]
fn show_writes_the_page_of_what_the_store_holds() {
    let work = store();
    let out = work
        .dogana([
            "show",
            "--store",
            "orders.db",
            "orders",
            "--at",
            AT,
            "-o",
            "orders.html",
        ])
        .assert()
        .success();
    let page = work.read("orders.html");
    assert_eq!(
        text(&out.get_output().stdout),
        format!(
            "wrote orders.html ({} bytes): 1 table, 2 receipts, 1 regions\n",
            page.len()
        )
    );
    assert_eq!(page, expected(&work));
}

#[test]
fn a_ledger_document_and_its_exported_receipts_give_the_same_page() {
    let work = store();
    let receipts = work
        .dogana(["receipts", "--store", "orders.db", "orders", "--json"])
        .assert()
        .success();
    work.write("receipts.json", &text(&receipts.get_output().stdout));
    let ledger = Store::open(work.path("orders.db"))
        .unwrap()
        .ledger("orders")
        .unwrap()
        .unwrap();
    work.write("ledger.json", &ledger.to_json());
    work.dogana([
        "show",
        "--ledger",
        "ledger.json",
        "--receipts",
        "receipts.json",
        "--at",
        AT,
        "-o",
        "doc.html",
    ])
    .assert()
    .success();
    assert_eq!(work.read("doc.html"), expected(&work));
}

#[test]
fn a_table_the_store_does_not_hold_is_refused_and_nothing_is_written() {
    let work = store();
    let line = refused(
        &work,
        [
            "show",
            "--store",
            "orders.db",
            "orders",
            "invoices",
            "-o",
            "x.html",
        ],
    );
    assert_eq!(
        line,
        "error: store orders.db has no receipt and no ledger for table \"invoices\"; its tables: orders"
    );
    assert!(!work.exists("x.html"));
}

#[test]
fn a_missing_store_is_refused_and_not_created() {
    let work = Work::new();
    let line = refused(
        &work,
        ["show", "--store", "none.db", "orders", "-o", "x.html"],
    );
    assert!(
        line.starts_with("error: store none.db does not exist"),
        "{line}"
    );
    assert!(!work.exists("none.db") && !work.exists("x.html"));
}

#[test]
fn a_file_that_is_not_a_store_is_refused_and_left_as_it_was() {
    let work = Work::new();
    work.write("notes.txt", "not a database");
    let line = refused(
        &work,
        ["show", "--store", "notes.txt", "orders", "-o", "x.html"],
    );
    assert_eq!(
        line,
        "error: not a dogana store: notes.txt is not a SQLite database; name a store made by dogana deliver"
    );
    assert_eq!(work.read("notes.txt"), "not a database");
    assert_eq!(work.names(), ["notes.txt", "orders.csv", "orders.toml"]);
}

#[test]
fn an_empty_history_is_refused() {
    let work = store();
    let ledger = Store::open(work.path("orders.db"))
        .unwrap()
        .ledger("orders")
        .unwrap()
        .unwrap();
    work.write("ledger.json", &ledger.to_json());
    work.write("receipts.json", "[]");
    let line = refused(
        &work,
        [
            "show",
            "--ledger",
            "ledger.json",
            "--receipts",
            "receipts.json",
            "-o",
            "x.html",
        ],
    );
    assert!(
        line.starts_with("error: receipts receipts.json is empty, so there is no history to show"),
        "{line}"
    );
    assert!(!work.exists("x.html"));
}

#[test]
fn an_existing_page_is_replaced_only_with_force() {
    let work = store();
    work.write("orders.html", "old");
    let line = refused(
        &work,
        [
            "show",
            "--store",
            "orders.db",
            "orders",
            "--at",
            AT,
            "-o",
            "orders.html",
        ],
    );
    assert_eq!(
        line,
        "error: orders.html exists; pass --force to replace the page, or -o to write elsewhere"
    );
    assert_eq!(work.read("orders.html"), "old");
    work.dogana([
        "show",
        "--store",
        "orders.db",
        "orders",
        "--at",
        AT,
        "-o",
        "orders.html",
        "--force",
    ])
    .assert()
    .success();
    assert_eq!(work.read("orders.html"), expected(&work));
}

#[test]
fn a_store_without_tables_named_is_a_usage_error() {
    let work = store();
    work.dogana(["show", "--store", "orders.db", "-o", "x.html"])
        .assert()
        .code(2);
    work.dogana(["show", "--ledger", "l.json", "-o", "x.html"])
        .assert()
        .code(2);
    work.dogana(["show", "orders", "-o", "x.html"])
        .assert()
        .code(2);
}

#[test]
fn receipts_that_are_not_receipts_are_refused() {
    let work = store();
    let ledger = Store::open(work.path("orders.db"))
        .unwrap()
        .ledger("orders")
        .unwrap()
        .unwrap();
    work.write("ledger.json", &ledger.to_json());
    work.write("receipts.json", &format!("[{}]", ledger.to_json()));
    let line = refused(
        &work,
        [
            "show",
            "--ledger",
            "ledger.json",
            "--receipts",
            "receipts.json",
            "-o",
            "x.html",
        ],
    );
    assert!(
        line.starts_with("error: receipt 1 of receipts.json is refused: "),
        "{line}"
    );
}

#[test]
fn a_directory_is_refused() {
    let work = Work::new();
    std::fs::create_dir(work.path("db")).unwrap();
    let line = refused(&work, ["show", "--store", "db", "orders", "-o", "x.html"]);
    assert_eq!(
        line,
        "error: store db is a directory; name the database file"
    );
}
