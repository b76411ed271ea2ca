//! The receiver commands on a dogana-sqlite store: `dogana deliver`, `dogana receipts`,
//! `dogana verify` and `dogana claims --store DB TABLE` (CLI-30: the spec leaves them open; this
//! is the command line's decision), following the loader (LOADER-01 to LOADER-09) and the
//! receiver's rules (RECV-01 to RECV-13).

mod common;

use common::{text, Work};
use dogana::{FromWire, Outcome, Receipt, Wire};
use dogana_sqlite::Datum;
use dogana_sqlite::Store;

/// Sunday's full dump of orders, read at 2026-10-25T06:00:00Z: five live rows.
const SUNDAY: &str = "\
id,order_date,updated_at,amount,deleted
1,2026-10-20,2026-10-20T10:00:00Z,10.00,false
2,2026-10-21,2026-10-21T10:00:00Z,20.00,false
3,2026-10-22,2026-10-22T10:00:00Z,30.00,false
4,2026-10-23,2026-10-23T10:00:00Z,40.00,false
5,2026-10-24,2026-10-24T10:00:00Z,50.00,false
";

/// Monday's changes since Sunday 06:00, read at 2026-10-26T06:00:00Z: order 2 updated, order 6
/// new, order 4 deleted (2 live rows, 1 tombstone).
const MONDAY: &str = "\
id,order_date,updated_at,amount,deleted
2,2026-10-21,2026-10-25T09:00:00Z,21.00,false
6,2026-10-25,2026-10-25T12:00:00Z,60.00,false
4,2026-10-23,2026-10-25T15:00:00Z,0,true
";

/// Tuesday's changes since Monday 06:00, read at 2026-10-27T06:00:00Z: two live rows.
const TUESDAY: &str = "\
id,order_date,updated_at,amount,deleted
6,2026-10-25,2026-10-26T08:00:00Z,61.00,false
7,2026-10-26,2026-10-26T09:00:00Z,70.00,false
";

/// Writes FILE and its manifest FILE.json with `dogana manifest`.
fn manifest(work: &Work, file: &str, data: &str, args: &[&str]) {
    work.write(file, data);
    let mut all = vec!["manifest", file, "--contract", "orders.toml", "--force"];
    all.extend_from_slice(args);
    work.dogana(&all).assert().success();
}

fn sunday(work: &Work) {
    manifest(
        work,
        "sun.csv",
        SUNDAY,
        &[
            "--shape",
            "full",
            "--produced-at",
            "2026-10-25T06:00:00Z",
            "--rows",
            "5",
        ],
    );
}

fn monday(work: &Work) {
    manifest(
        work,
        "mon.csv",
        MONDAY,
        &[
            "--shape",
            "changes",
            "--produced-at",
            "2026-10-26T06:00:00Z",
            "--since",
            "2026-10-25T06:00:00Z",
            "--rows",
            "2",
            "--tombstones",
            "1",
        ],
    );
}

/// Tuesday's changes since Monday 06:00 with a manifest that declares 3 live rows: the file
/// holds 2.
fn tuesday_lying(work: &Work) {
    manifest(
        work,
        "tue.csv",
        TUESDAY,
        &[
            "--shape",
            "changes",
            "--produced-at",
            "2026-10-27T06:00:00Z",
            "--since",
            "2026-10-26T06:00:00Z",
            "--rows",
            "3",
        ],
    );
}

/// `dogana deliver FILE --store orders.db --contract orders.toml --at AT [extra]`.
fn deliver(work: &Work, file: &str, at: &str, extra: &[&str]) -> assert_cmd::assert::Assert {
    let mut args = vec![
        "deliver",
        file,
        "--store",
        "orders.db",
        "--contract",
        "orders.toml",
        "--at",
        at,
    ];
    args.extend_from_slice(extra);
    work.dogana(&args).assert()
}

/// Delivers FILE, expects exit 0 and nothing on standard error, returns standard output.
fn delivered(work: &Work, file: &str, at: &str) -> String {
    let out = deliver(work, file, at, &[]).success();
    assert!(out.get_output().stderr.is_empty(), "{out:?}");
    text(&out.get_output().stdout)
}

fn store(work: &Work) -> Store {
    Store::open(work.path("orders.db")).unwrap()
}

/// The published ids of orders, sorted.
fn ids(work: &Work) -> Vec<i64> {
    let snapshot = store(work).read_consistent_rows("orders").unwrap();
    let at = snapshot.columns.iter().position(|c| c == "id").unwrap();
    let mut ids: Vec<i64> = snapshot
        .rows
        .iter()
        .map(|r| match r[at] {
            Datum::Int(i) => i,
            ref v => panic!("id {v:?}"),
        })
        .collect();
    ids.sort();
    ids
}

#[test]
fn a_full_dump_is_accepted() {
    // rule: RECV-06
    // rule: RECV-07
    // rule: LOADER-02
    // rule: LOADER-04
    // rule: LOADER-05
    // rule: LOADER-06
    // rule: CLI-29
    let work = Work::new();
    sunday(&work);
    let out = delivered(&work, "sun.csv", "2026-10-25T06:05:00Z");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with(
            "sun.csv: accepted orders/full produced at 2026-10-25T06:00:00+00:00; publication "
        ),
        "{out}"
    );
    assert!(lines[0].ends_with(", the table's first"), "{out}");
    // every check, core checks first, with its detail
    for name in [
        "manifest",
        "receiver_time",
        "transition",
        "parse",
        "rows",
        "keys",
        "content_hash",
    ] {
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with(&format!("  {name}: passed"))),
            "{name}: {out}"
        );
    }
    assert!(out.contains("  rows: passed: 5 live rows and 0 tombstones, as declared\n"));
    assert!(out.contains("  plan: replace_all\n"), "{out}");
    assert_eq!(
        lines.last().unwrap(),
        &"orders: complete; exact at 2026-10-25T06:00:00+00:00"
    );
    assert_eq!(ids(&work), [1, 2, 3, 4, 5]);
    let receipts = store(&work).receipts("orders").unwrap();
    assert_eq!(receipts.len(), 1);
    assert_eq!(receipts[0].receipt.outcome(), Outcome::Accepted);
    assert_eq!(
        receipts[0].receipt.received_at().to_string(),
        "2026-10-25T06:05:00+00:00"
    );
}

#[test]
fn changes_with_tombstones_are_accepted() {
    // rule: RECV-07
    // rule: RECV-13
    // rule: CHECK-02
    // rule: TRANS-16
    let work = Work::new();
    sunday(&work);
    monday(&work);
    delivered(&work, "sun.csv", "2026-10-25T06:05:00Z");
    let out = delivered(&work, "mon.csv", "2026-10-26T06:05:00Z");
    assert!(
        out.starts_with("mon.csv: accepted orders/changes produced at 2026-10-26T06:00:00+00:00"),
        "{out}"
    );
    assert!(out.contains("  rows: passed: 2 live rows and 1 tombstones, as declared\n"));
    assert!(out.contains("  plan: upsert, tombstone\n"), "{out}");
    assert!(out.ends_with("orders: complete; exact at 2026-10-26T06:00:00+00:00\n"));
    // order 4 deleted, order 6 added, order 2 updated
    assert_eq!(ids(&work), [1, 2, 3, 5, 6]);
}

#[test]
fn a_manifest_that_lies_about_rows_is_rejected_and_kept() {
    // rule: RECV-06
    // rule: RECV-08
    // rule: RECV-11
    // rule: CHECK-02
    // rule: LOADER-05
    // rule: CLI-29
    let work = Work::new();
    sunday(&work);
    monday(&work);
    delivered(&work, "sun.csv", "2026-10-25T06:05:00Z");
    delivered(&work, "mon.csv", "2026-10-26T06:05:00Z");
    let before = store(&work).ledger("orders").unwrap().unwrap();
    // the file holds 2 live rows, the manifest declares 3
    tuesday_lying(&work);
    let out = deliver(&work, "tue.csv", "2026-10-27T06:05:00Z", &[]).code(1);
    let stdout = text(&out.get_output().stdout);
    let stderr = text(&out.get_output().stderr);
    assert!(
        stdout.starts_with("tue.csv: rejected orders/changes produced at 2026-10-27T06:00:00+00:00; nothing published, the receipt is kept\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "  rows: FAILED: the read holds 2 live rows and 0 tombstones; the manifest declares 3 and 0\n"
        ),
        "{stdout}"
    );
    assert!(!stdout.contains("  plan:"), "{stdout}");
    // the table line is the unchanged ledger's
    assert!(stdout.ends_with("orders: complete; exact at 2026-10-26T06:00:00+00:00\n"));
    // one line on standard error naming the failed check and its detail
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(
            "error[DGN-201]: tue.csv was rejected by 1 failed check: rows: the read holds 2 live rows"
        ),
        "{stderr}"
    );
    // rows and ledger untouched; the rejection is kept
    assert_eq!(store(&work).ledger("orders").unwrap().unwrap(), before);
    assert_eq!(ids(&work), [1, 2, 3, 5, 6]);
    let receipts = store(&work).receipts("orders").unwrap();
    assert_eq!(receipts.len(), 3);
    assert_eq!(receipts[2].receipt.outcome(), Outcome::Rejected);
    assert_eq!(receipts[2].accepted_order, None);
}

#[test]
fn changes_since_a_point_after_the_evidence_are_refused_before_any_row_is_read() {
    // rule: RECV-05
    // rule: LOADER-03
    // rule: TRANS-08
    // rule: GATE-05
    let work = Work::new();
    sunday(&work);
    delivered(&work, "sun.csv", "2026-10-25T06:05:00Z");
    // the table is complete as of Sunday 06:00: changes since Monday 06:00 leave a gap
    manifest(
        &work,
        "tue.csv",
        TUESDAY,
        &[
            "--shape",
            "changes",
            "--produced-at",
            "2026-10-27T06:00:00Z",
            "--since",
            "2026-10-26T06:00:00Z",
            "--rows",
            "2",
        ],
    );
    let out = deliver(&work, "tue.csv", "2026-10-27T06:05:00Z", &[]).code(1);
    let stdout = text(&out.get_output().stdout);
    let stderr = text(&out.get_output().stderr);
    assert!(stdout.contains("  transition: FAILED: "), "{stdout}");
    // the preflight failed: no row check ran
    assert!(!stdout.contains("  rows:"), "{stdout}");
    assert!(!stdout.contains("  parse:"), "{stdout}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("error[DGN-201]: tue.csv was rejected by 1 failed check: transition: "),
        "{stderr}"
    );
    let receipts = store(&work).receipts("orders").unwrap();
    assert_eq!(receipts.len(), 2);
    assert_eq!(
        receipts[1].receipt.checks().len(),
        3,
        "the core checks only"
    );
}

#[test]
fn a_second_delivery_of_an_accepted_manifest_is_a_replay() {
    // rule: RECV-01
    // rule: RECV-02
    // rule: LOADER-01
    // rule: ALG-02
    // rule: WIRE-20
    let work = Work::new();
    sunday(&work);
    monday(&work);
    delivered(&work, "sun.csv", "2026-10-25T06:05:00Z");
    let first = deliver(&work, "mon.csv", "2026-10-26T06:05:00Z", &["--json"]).success();
    let first = Receipt::from_json(&text(&first.get_output().stdout)).unwrap();
    assert_eq!(first.outcome(), Outcome::Accepted);

    let out = delivered(&work, "mon.csv", "2026-10-27T06:10:00Z");
    let publication = &first.publication_id()[..12];
    assert!(
        out.starts_with(&format!(
            "mon.csv: replayed orders/changes produced at 2026-10-26T06:00:00+00:00: this manifest was accepted before, as publication {publication}; nothing changed\n"
        )),
        "{out}"
    );
    assert!(
        out.contains(
            "  the original receipt: received at 2026-10-26T06:05:00+00:00, 14 checks passed\n"
        ),
        "{out}"
    );
    assert!(out.ends_with("orders: complete; exact at 2026-10-26T06:00:00+00:00\n"));

    let again = deliver(&work, "mon.csv", "2026-10-27T06:10:00Z", &["--json"]).success();
    let again = Receipt::from_json(&text(&again.get_output().stdout)).unwrap();
    assert_eq!(again.outcome(), Outcome::Replayed);
    assert_eq!(again.identity(), first.identity());
    // a replay stores nothing
    assert_eq!(store(&work).receipts("orders").unwrap().len(), 2);
    assert_eq!(ids(&work), [1, 2, 3, 5, 6]);
}

#[test]
fn a_repeated_manifest_over_other_bytes_is_refused() {
    // rule: RECV-03
    let work = Work::new();
    sunday(&work);
    delivered(&work, "sun.csv", "2026-10-25T06:05:00Z");
    // same manifest (sun.csv.json), other bytes
    work.write("sun.csv", &SUNDAY.replace("50.00", "55.00"));
    let out = deliver(&work, "sun.csv", "2026-10-25T07:00:00Z", &[]).code(1);
    let stdout = text(&out.get_output().stdout);
    assert!(stdout.contains("  content_hash: FAILED: "), "{stdout}");
    let stderr = text(&out.get_output().stderr);
    assert!(stderr.contains("content_hash: "), "{stderr}");
    assert_eq!(ids(&work), [1, 2, 3, 4, 5]);
}

#[test]
fn receipts_lists_every_receipt_in_order() {
    // rule: RECV-11
    let work = Work::new();
    sunday(&work);
    monday(&work);
    delivered(&work, "sun.csv", "2026-10-25T06:05:00Z");
    delivered(&work, "mon.csv", "2026-10-26T06:05:00Z");
    tuesday_lying(&work);
    deliver(&work, "tue.csv", "2026-10-27T06:05:00Z", &[]).code(1);
    delivered(&work, "mon.csv", "2026-10-27T06:10:00Z"); // a replay: not stored

    let stored = store(&work).receipts("orders").unwrap();
    let pid = |i: usize| stored[i].receipt.publication_id()[..12].to_owned();
    let out = work
        .dogana(["receipts", "--store", "orders.db", "orders"])
        .assert()
        .success();
    assert_eq!(
        text(&out.get_output().stdout),
        format!(
            "1 accepted full 2026-10-25T06:00:00+00:00 publication {}\n\
             2 accepted changes 2026-10-26T06:00:00+00:00 publication {}\n\
             3 rejected changes 2026-10-27T06:00:00+00:00 publication {} failed: rows: the read holds 2 live rows and 0 tombstones; the manifest declares 3 and 0\n",
            pid(0),
            pid(1),
            pid(2)
        )
    );
    assert_eq!(pid(1), pid(2), "a rejection leaves the head where it was");

    let out = work
        .dogana(["receipts", "--store", "orders.db", "orders", "--json"])
        .assert()
        .success();
    let docs: serde_json::Value = serde_json::from_str(&text(&out.get_output().stdout)).unwrap();
    let docs = docs.as_array().unwrap();
    assert_eq!(docs.len(), 3);
    for (doc, s) in docs.iter().zip(&stored) {
        assert_eq!(Receipt::from_value(doc).unwrap(), s.receipt);
    }
}

#[test]
fn verify_compares_each_ledger_with_the_fold_of_its_receipts() {
    // rule: RECV-12
    // rule: RECOVERY-01
    // rule: CLI-29
    let work = Work::new();
    sunday(&work);
    monday(&work);
    delivered(&work, "sun.csv", "2026-10-25T06:05:00Z");
    delivered(&work, "mon.csv", "2026-10-26T06:05:00Z");
    let ledger = store(&work).ledger("orders").unwrap().unwrap();
    let expected = format!(
        "orders: ok: 2 receipts, 2 accepted; ledger {} is the fold of the accepted receipts\n",
        &ledger.identity()[..12]
    );
    for args in [
        vec!["verify", "--store", "orders.db"],
        vec!["verify", "--store", "orders.db", "orders"],
    ] {
        let out = work.dogana(&args).assert().success();
        assert_eq!(text(&out.get_output().stdout), expected);
        assert!(out.get_output().stderr.is_empty());
    }

    // a lost acceptance: the stored ledger is no longer the fold of the receipts
    store(&work)
        .backend()
        .connection()
        .execute(
            "DELETE FROM dogana_receipts WHERE table_name = 'orders' AND seq = 2",
            [],
        )
        .unwrap();
    let out = work
        .dogana(["verify", "--store", "orders.db"])
        .assert()
        .code(1);
    let stdout = text(&out.get_output().stdout);
    assert!(
        stdout.starts_with("orders: 1 problem: 1 receipt, 1 accepted\n"),
        "{stdout}"
    );
    assert!(stdout.contains("(RECV-12)"), "{stdout}");
    let stderr = text(&out.get_output().stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr
        .starts_with("error[DGN-307]: the store orders.db does not match its receipts for orders"));
}

#[test]
fn claims_from_a_store_are_the_claims_of_its_ledger() {
    // rule: CLI-20
    // rule: CLI-24
    // rule: CLI-26
    // rule: LOADER-10
    // rule: RECV-13
    let work = Work::new();
    sunday(&work);
    monday(&work);
    delivered(&work, "sun.csv", "2026-10-25T06:05:00Z");
    delivered(&work, "mon.csv", "2026-10-26T06:05:00Z");
    // the same lines as `dogana claims LEDGER` of the ledger document the store holds
    let ledger = store(&work).ledger("orders").unwrap().unwrap();
    work.write("ledger.json", &ledger.to_json());
    for extra in [
        vec!["--at", "2026-10-27T07:00:00Z"],
        vec!["--at", "2026-10-28T07:00:00Z", "--limit-days", "1"],
        vec![
            "--at",
            "2026-10-27T07:00:00Z",
            "--window",
            "2026-10-01",
            "2026-10-31",
        ],
        vec!["--at", "2026-10-27T07:00:00Z", "--json"],
    ] {
        let mut from_store = vec!["claims", "--store", "orders.db", "orders"];
        from_store.extend_from_slice(&extra);
        let mut from_file = vec!["claims", "ledger.json"];
        from_file.extend_from_slice(&extra);
        let a = work.dogana(&from_store).assert().success();
        let b = work.dogana(&from_file).assert().success();
        assert_eq!(a.get_output().stdout, b.get_output().stdout, "{extra:?}");
        assert!(a.get_output().stderr.is_empty());
    }
    let out = work
        .dogana([
            "claims",
            "--store",
            "orders.db",
            "orders",
            "--at",
            "2026-10-28T07:00:00Z",
            "--limit-days",
            "1",
        ])
        .assert()
        .success();
    assert_eq!(
        text(&out.get_output().stdout),
        "orders (-inf, +inf): expired; complete as of 2026-10-26T06:00:00+00:00; deletions as of 2026-10-26T06:00:00+00:00\n\
         orders: expired; exact at 2026-10-26T06:00:00+00:00\n"
    );
    // TABLE may come before --store
    work.dogana([
        "claims",
        "orders",
        "--store",
        "orders.db",
        "--at",
        "2026-10-27T07:00:00Z",
    ])
    .assert()
    .success();
}

#[test]
fn a_table_with_only_rejections_claims_nothing() {
    // rule: RECV-08
    // rule: LEDGER-02
    let work = Work::new();
    manifest(
        &work,
        "mon.csv",
        MONDAY,
        &[
            "--shape",
            "changes",
            "--produced-at",
            "2026-10-26T06:00:00Z",
            "--since",
            "2026-10-25T06:00:00Z",
            "--rows",
            "2",
            "--tombstones",
            "1",
        ],
    );
    // changes on an unknown table: refused by the transition check
    deliver(&work, "mon.csv", "2026-10-26T06:05:00Z", &[]).code(1);
    let out = work
        .dogana([
            "claims",
            "--store",
            "orders.db",
            "orders",
            "--at",
            "2026-10-27T00:00:00Z",
        ])
        .assert()
        .success();
    assert_eq!(
        text(&out.get_output().stdout),
        "orders (-inf, +inf): unknown; complete as of unknown; deletions as of unknown\n\
         orders: unknown; exact at no single instant\n"
    );
    let out = work
        .dogana(["verify", "--store", "orders.db"])
        .assert()
        .success();
    assert_eq!(
        text(&out.get_output().stdout),
        "orders: ok: 1 receipt, 0 accepted; no ledger: nothing accepted yet\n"
    );
}

#[test]
fn readers_refuse_a_missing_store_or_table_and_create_nothing() {
    // rule: CLI-29
    let work = Work::new();
    for args in [
        vec!["receipts", "--store", "none.db", "orders"],
        vec!["verify", "--store", "none.db"],
        vec!["claims", "--store", "none.db", "orders"],
    ] {
        let err = common::refused(&work, &args);
        assert!(err.contains("store none.db does not exist"), "{err}");
    }
    assert!(!work.exists("none.db"));

    sunday(&work);
    delivered(&work, "sun.csv", "2026-10-25T06:05:00Z");
    for args in [
        vec!["receipts", "--store", "orders.db", "order"],
        vec!["verify", "--store", "orders.db", "order"],
        vec!["claims", "--store", "orders.db", "order"],
    ] {
        let err = common::refused(&work, &args);
        assert!(
            err.ends_with("has no receipt and no ledger for table \"order\"; its tables: orders"),
            "{err}"
        );
    }
}

#[test]
fn refusals_store_nothing() {
    // rule: CLI-29
    let work = Work::new();
    sunday(&work);
    // an unreadable file
    let err = common::refused(
        &work,
        [
            "deliver",
            "missing.csv",
            "--store",
            "orders.db",
            "--contract",
            "orders.toml",
            "--manifest",
            "sun.csv.json",
        ],
    );
    // named as the data file, before any manifest is looked for
    assert!(
        err.starts_with("error: the data file missing.csv cannot be read: "),
        "{err}"
    );
    // a format the extension does not name
    std::fs::copy(work.path("sun.csv"), work.path("sun.export")).unwrap();
    let args = [
        "deliver",
        "sun.export",
        "--store",
        "orders.db",
        "--contract",
        "orders.toml",
        "--manifest",
        "sun.csv.json",
        "--at",
        "2026-10-25T06:05:00Z",
    ];
    let err = common::refused(&work, args);
    assert!(err.contains("--format csv, ndjson or parquet"), "{err}");
    // a naive --at
    let err = common::refused(
        &work,
        [
            "deliver",
            "sun.csv",
            "--store",
            "orders.db",
            "--contract",
            "orders.toml",
            "--at",
            "2026-10-25T06:05:00",
        ],
    );
    assert!(err.contains("has no UTC offset"), "{err}");
    if work.exists("orders.db") {
        assert!(store(&work).receipts("orders").unwrap().is_empty());
    }
    // with --format the same file is delivered
    let mut with_format = args.to_vec();
    with_format.extend(["--format", "csv"]);
    work.dogana(&with_format).assert().success();
    assert_eq!(ids(&work), [1, 2, 3, 4, 5]);
}

#[test]
fn a_receipt_from_the_future_is_rejected_at_the_receivers_now() {
    // rule: GATE-04
    // rule: RECV-05
    let work = Work::new();
    sunday(&work);
    let out = deliver(&work, "sun.csv", "2026-10-25T05:59:59Z", &[]).code(1);
    let stdout = text(&out.get_output().stdout);
    assert!(stdout.contains("  receiver_time: FAILED: "), "{stdout}");
}

#[test]
fn column_types_come_from_the_toml_columns_or_the_command_line() {
    // rule: CHECK-07
    let work = Work::new();
    let hashed = common::ORDERS_TOML.replace(
        "deleted_column = \"deleted\"\n",
        "deleted_column = \"deleted\"\ncolumns = [[\"id\", \"int\"], [\"order_date\", \"date\"], [\"updated_at\", \"datetime\"], [\"amount\", \"decimal(12,2)\"], [\"deleted\", \"bool\"]]\n",
    );
    work.write("hashed.toml", &hashed);
    work.write("sun.csv", SUNDAY);
    work.dogana([
        "manifest",
        "sun.csv",
        "--contract",
        "hashed.toml",
        "--shape",
        "full",
        "--produced-at",
        "2026-10-25T06:00:00Z",
        "--rows",
        "5",
    ])
    .assert()
    .success();
    work.dogana(["contract", "hashed.toml", "-o", "hashed.json"])
        .assert()
        .success();
    // a JSON contract names no type for amount: the receiver cannot check the column hash
    let base = |contract: &'static str, db: &'static str| {
        vec![
            "deliver",
            "sun.csv",
            "--store",
            db,
            "--contract",
            contract,
            "--at",
            "2026-10-25T06:05:00Z",
        ]
    };
    let err = common::refused(&work, base("hashed.json", "a.db"));
    assert!(
        err.contains("the contract does not type amount; pass --column-type NAME=TYPE"),
        "{err}"
    );
    let mut typed = base("hashed.json", "a.db");
    typed.extend(["--column-type", "amount=decimal(12,2)"]);
    let out = work.dogana(&typed).assert().success();
    assert!(text(&out.get_output().stdout).contains("  schema_hash: passed: "));
    // the TOML contract's columns give the type
    let out = work.dogana(base("hashed.toml", "b.db")).assert().success();
    assert!(text(&out.get_output().stdout).contains("  schema_hash: passed: "));
    // a bound column's type is the contract's
    let mut bound = base("hashed.json", "c.db");
    bound.extend(["--column-type", "id=str"]);
    let err = common::refused(&work, &bound);
    assert!(
        err.contains("the contract binds column \"id\" to int"),
        "{err}"
    );
}

#[test]
fn no_progress_is_drawn_when_standard_error_is_not_a_terminal() {
    // rule: CLI-29
    // Decision: the spinner shows on standard error only when it is a terminal and the delivery
    // takes longer than DOGANA_PROGRESS_AFTER_MS (1000 by default); here it would show at once.
    let work = Work::new();
    sunday(&work);
    monday(&work);
    for (file, at) in [
        ("sun.csv", "2026-10-25T06:05:00Z"),
        ("mon.csv", "2026-10-26T06:05:00Z"),
        ("mon.csv", "2026-10-26T06:06:00Z"),
    ] {
        let out = work
            .dogana([
                "deliver",
                file,
                "--store",
                "orders.db",
                "--contract",
                "orders.toml",
                "--at",
                at,
            ])
            .env("DOGANA_PROGRESS_AFTER_MS", "0")
            .assert()
            .success();
        assert!(out.get_output().stderr.is_empty(), "{out:?}");
    }
}

#[test]
fn usage_errors_exit_2() {
    // rule: CLI-29
    let work = Work::new();
    // claims: --store needs its TABLE, and LEDGER and --store TABLE take one place
    let out = work
        .dogana(["claims", "--store", "orders.db"])
        .assert()
        .code(2);
    let err = text(&out.get_output().stderr);
    assert!(
        err.starts_with("error: --store DB reads the ledger of a table"),
        "{err}"
    );
    assert!(err.contains("Usage: dogana claims LEDGER"), "{err}");
    // with --store, more positionals are more tables read together: an unknown one is refused
    work.dogana(["claims", "--store", "orders.db", "orders", "ledger.json"])
        .assert()
        .code(1);
    work.dogana(["deliver", "sun.csv", "--contract", "orders.toml"])
        .assert()
        .code(2);
    work.dogana(["deliver", "sun.csv", "--store", "orders.db"])
        .assert()
        .code(2);
    work.dogana([
        "deliver",
        "sun.csv",
        "--store",
        "orders.db",
        "--contract",
        "orders.toml",
        "--format",
        "xlsx",
    ])
    .assert()
    .code(2);
    work.dogana(["receipts", "--store", "orders.db"])
        .assert()
        .code(2);
    work.dogana(["receipts", "orders"]).assert().code(2);
    work.dogana(["verify"]).assert().code(2);
    assert!(!work.exists("orders.db"));
}

#[test]
fn quickstart_script_exists_and_is_strict() {
    // rule: LOADER-09
    // The quick start is a loader on SQLite, run end to end by `bash quickstart.sh` (its output
    // is in docs/quickstart.md); here only its shape is checked, as running it builds a release
    // binary.
    let script = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../quickstart.sh"),
    )
    .unwrap();
    assert!(script.contains("set -euo pipefail"));
    for command in [
        "dogana manifest",
        "dogana deliver",
        "dogana receipts",
        "dogana verify",
        "dogana claims --store",
    ] {
        assert!(script.contains(command), "{command}");
    }
}
