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

/// A delivery killed while it holds its lease file (`<db>-dogana-<token>.lock`) leaves the
/// file; the next writer removes it once no process holds it (its holder is dead), and
/// leaves a live holder's alone (issue 37).
#[test]
fn lock_files_a_killed_delivery_left_are_removed_by_the_next_writer() {
    // rule: RECV-09, RECV-13
    let work = Work::new();
    let mut csv = String::from("id,order_date,updated_at,amount,deleted\n");
    for i in 1..=300_000 {
        csv.push_str(&format!(
            "{i},2026-10-20,2026-10-20T10:00:00Z,{i}.00,false\n"
        ));
    }
    work.write("big.csv", &csv);
    work.write("sun.csv", SUNDAY);
    for (file, rows, at) in [
        ("big.csv", "300000", "2026-10-25T06:00:00Z"),
        ("sun.csv", "1", "2026-10-26T06:00:00Z"),
    ] {
        work.dogana([
            "manifest",
            file,
            "--contract",
            "orders.toml",
            "--shape",
            "full",
            "--produced-at",
            at,
            "--rows",
            rows,
        ])
        .assert()
        .success();
    }
    let locks = || -> Vec<std::path::PathBuf> {
        std::fs::read_dir(work.dir())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                let n = p.file_name().unwrap().to_string_lossy();
                n.starts_with("orders.db-dogana-") && n.ends_with(".lock")
            })
            .collect()
    };
    // kill deliveries while they stage the whole table under their lease
    let mut killed = 0;
    for _ in 0..20 {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_dogana"))
            .current_dir(work.dir())
            .args([
                "deliver",
                "big.csv",
                "--store",
                "orders.db",
                "--contract",
                "orders.toml",
                "--at",
                "2026-10-25T07:00:00Z",
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let before = locks().len();
        let started = std::time::Instant::now();
        while locks().len() == before && started.elapsed() < std::time::Duration::from_secs(20) {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        if locks().len() > before {
            killed += 1;
        }
        if killed == 3 {
            break;
        }
    }
    assert!(
        killed >= 1,
        "no delivery was killed while holding its lease"
    );
    let dead = locks();
    assert!(!dead.is_empty());
    // a live holder's file, as old as the dead ones
    let live_path = work.path("orders.db-dogana-999999x1x1.lock");
    let live = std::fs::File::create(&live_path).unwrap();
    live.lock().unwrap();
    // time passes: every file older than a handle's creation-to-lock instant
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(120);
    for p in dead.iter().chain([&live_path]) {
        std::fs::File::options()
            .write(true)
            .open(p)
            .unwrap()
            .set_modified(old)
            .unwrap();
    }
    work.dogana([
        "deliver",
        "sun.csv",
        "--store",
        "orders.db",
        "--contract",
        "orders.toml",
        "--at",
        "2026-10-26T07:00:00Z",
    ])
    .assert()
    .success();
    assert_eq!(
        locks(),
        vec![live_path.clone()],
        "the dead holders' files are gone"
    );
    drop(live);
    // the store is whole: verify passes
    work.dogana(["verify", "--store", "orders.db"])
        .assert()
        .success();
}
