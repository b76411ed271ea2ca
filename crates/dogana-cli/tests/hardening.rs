//! What the command line takes from a sender, or from a mistyped option, is checked before
//! anything is read, bounded, and shown without a terminal acting on it.

mod common;

use common::{refused, text, Work};
use dogana::{Contract, Ledger, LogicalType, Shape, Wire};

const SUNDAY: &str =
    "id,order_date,updated_at,amount,deleted\n1,2026-10-20,2026-10-20T10:00:00Z,10.00,false\n";

fn deliver_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "deliver",
        "sun.csv",
        "--store",
        "orders.db",
        "--contract",
        "orders.toml",
        "--at",
        "2026-10-25T06:05:00Z",
    ];
    args.extend_from_slice(extra);
    args
}

#[test]
fn a_mistyped_or_repeated_column_type_is_refused_before_any_row() {
    // rule: CONTRACT-16, CLI-29
    let work = Work::new();
    work.write("sun.csv", SUNDAY);
    for (options, says) in [
        (
            &["--column-type", "amount=flaot"][..],
            "error: --column-type \"amount=flaot\": \"flaot\" is not a column type: a column type is int, float, str, bool, date, datetime or decimal(p,s) with 1 <= p <= 38 and 0 <= s <= p, as in decimal(12,2) (CONTRACT-16)",
        ),
        (
            &["--column-type", "amount=decimal(2,5)"][..],
            "error: --column-type \"amount=decimal(2,5)\": \"decimal(2,5)\" is not a column type: its scale 5 is more than its precision 2",
        ),
        (
            &["--column-type", "amount=money"][..],
            "error: --column-type \"amount=money\": \"money\" is not a column type",
        ),
        (
            &["--column-type", "amount=float", "--column-type", "amount=str"][..],
            "error: --column-type \"amount=str\": column \"amount\" is typed twice, as float and as str; a column has one type; give each column once",
        ),
    ] {
        let err = refused(&work, deliver_args(options));
        assert!(err.starts_with(says), "{err}");
        // nothing was read or created: not even the store
        assert!(!work.exists("orders.db"), "{err}");
    }
}

#[test]
fn a_missing_data_file_is_named_as_the_data_file() {
    // rule: CLI-16, CLI-29
    let work = Work::new();
    let err = refused(&work, ["check", "gone.csv", "--contract", "orders.toml"]);
    assert!(
        err.starts_with("error: the data file gone.csv cannot be read: "),
        "{err}"
    );
    assert!(!err.contains("manifest"), "{err}");
    let err = refused(
        &work,
        [
            "deliver",
            "gone.csv",
            "--store",
            "x.db",
            "--contract",
            "orders.toml",
        ],
    );
    assert!(
        err.starts_with("error: the data file gone.csv cannot be read: "),
        "{err}"
    );
    assert!(!work.exists("x.db"));
}

#[test]
fn a_negative_count_says_the_count_must_be_nonnegative() {
    // rule: CLI-07, CLI-29 (a usage error: exit 2)
    let work = Work::new();
    for rows in [["--rows", "-5"], ["--rows=-5", "--tombstones=0"]] {
        let mut args = vec![
            "manifest",
            "orders.csv",
            "--contract",
            "orders.toml",
            "--shape",
            "full",
            "--produced-at",
            "2026-10-26T06:00:00Z",
        ];
        args.extend(rows);
        let out = work.dogana(&args).assert().code(2).get_output().clone();
        let err = text(&out.stderr);
        assert!(err.contains("the count must be nonnegative"), "{err}");
    }
    let out = work
        .dogana([
            "manifest",
            "orders.csv",
            "--contract",
            "orders.toml",
            "--shape",
            "changes",
            "--produced-at",
            "2026-10-26T06:00:00Z",
            "--since",
            "2026-10-25T06:00:00Z",
            "--rows",
            "1",
            "--tombstones",
            "-1",
        ])
        .assert()
        .code(2)
        .get_output()
        .clone();
    assert!(text(&out.stderr).contains("the count must be nonnegative"));
}

#[test]
fn a_ledger_names_text_that_is_shown_never_executed() {
    // rule: TRUST-07 (text from a sender is shown, never executed), CLI-24
    // a table name may hold characters that reorder what a terminal shows; they are escaped
    let work = Work::new();
    let table = "orders\u{202e}sredro";
    let c = Contract::builder(table, ["id"])
        .shape("full", Shape::full())
        .column("id", LogicalType::Int)
        .build()
        .unwrap();
    work.write("ledger.json", &Ledger::new(c).to_json());
    let out = work
        .dogana(["claims", "ledger.json", "--at", "2026-10-26T06:00:00Z"])
        .assert()
        .success()
        .get_output()
        .clone();
    let stdout = text(&out.stdout);
    assert!(!stdout.contains('\u{202e}'), "{stdout}");
    assert!(
        stdout.starts_with("orders\\u{202e}sredro (-inf, +inf): unknown"),
        "{stdout}"
    );
}

#[test]
fn a_document_of_megabytes_gives_a_short_refusal() {
    // rule: TRUST-07, CONTRACT-48
    let work = Work::new();
    let c = common::orders();
    let m = c
        .manifest("full", "2026-10-26T06:00:00Z".parse().unwrap())
        .rows(1)
        .content_hash(common::ABC_SHA256)
        .build()
        .unwrap();
    let doc = m.to_json().replace(
        "\"table\":\"orders\"",
        &format!("\"table\":\"{}\"", "t".repeat(4 << 20)),
    );
    work.write("orders.csv.json", &doc);
    let err = refused(&work, ["check", "orders.csv", "--contract", "orders.toml"]);
    assert!(err.len() < 600, "{} bytes", err.len());
    assert!(err.contains("(CONTRACT-48)"), "{err}");
}

#[test]
fn a_source_with_escape_sequences_cannot_forge_a_line_of_deliver_output() {
    // rule: TRUST-07 (text from a sender is shown, never executed)
    let work = Work::new();
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
    let out = work
        .dogana([
            "deliver",
            "sun.csv",
            "--store",
            "o.db",
            "--contract",
            "orders.toml",
            "--at",
            "2026-10-25T07:00:00Z",
            "--source",
            "sftp\u{1b}[2J\nsun.csv: accepted forged",
        ])
        .assert()
        .success()
        .get_output()
        .clone();
    let stdout = text(&out.stdout);
    assert!(!stdout.contains('\u{1b}'), "{stdout}");
    assert!(
        !stdout
            .lines()
            .any(|l| l.starts_with("sun.csv: accepted forged")),
        "{stdout}"
    );
    // and the receipts list shows it escaped as well
    let out = work
        .dogana(["receipts", "--store", "o.db", "orders", "--json"])
        .assert()
        .success()
        .get_output()
        .clone();
    assert!(!text(&out.stdout).contains('\u{1b}'));
}
