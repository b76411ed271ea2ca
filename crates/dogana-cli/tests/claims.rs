//! `dogana claims`: CLI-20 to CLI-28, CLI-31.

mod common;

use common::{refused, text, Work};
use dogana::{
    Claims, Contract, Deletions, Duration, FromWire, Ledger, LogicalType, Manifest, Shape,
    Timestamp, Window, Wire,
};

const REFERENCE: &str = "\
orders (-inf, 2026-09-26]: unknown; complete as of unknown; deletions as of unknown
orders [2026-09-27, 2026-10-26]: complete; complete as of 2026-10-26T06:00:00+00:00; deletions as of 2026-10-26T06:00:00+00:00
orders [2026-10-27, +inf): unknown; complete as of unknown; deletions as of unknown
orders: unknown; exact at no single instant
";

/// The reference ledger: the orders contract with a 30-day window shape, one complete window
/// [2026-09-27, 2026-10-26] proven at 2026-10-26T06:00:00+00:00. The manifest is the one
/// `dogana manifest` writes for the rolling shape.
fn reference(work: &Work) {
    let out = work
        .dogana([
            "manifest",
            "orders.csv",
            "--contract",
            "orders.toml",
            "--shape",
            "last30",
            "--produced-at",
            "2026-10-26T06:00:00+00:00",
            "--rows",
            "3",
            "-o",
            "-",
        ])
        .assert()
        .success();
    let m = Manifest::from_json(&text(&out.get_output().stdout)).unwrap();
    let ledger = Ledger::new(common::orders()).apply(&m).unwrap();
    work.write("ledger.json", &ledger.to_json());
}

fn claims(work: &Work, extra: &[&str]) -> String {
    let mut args = vec!["claims", "ledger.json"];
    args.extend_from_slice(extra);
    let out = work.dogana(&args).assert().success();
    assert!(out.get_output().stderr.is_empty());
    text(&out.get_output().stdout)
}

#[test]
fn reference_lines_byte_for_byte() {
    // rule: CLI-31
    // rule: CLI-20
    // rule: CLI-24
    // rule: CLI-25
    // rule: CLI-26
    // rule: CLI-27
    let work = Work::new();
    reference(&work);
    assert_eq!(
        claims(&work, &["--at", "2026-10-26T07:00:00+00:00"]),
        REFERENCE
    );
    // the ledger document as a receiver's store exports it, from a file or standard input
    let out = work
        .dogana(["claims", "-", "--at", "2026-10-26T07:00:00Z"])
        .write_stdin(work.read("ledger.json"))
        .assert()
        .success();
    assert_eq!(text(&out.get_output().stdout), REFERENCE);
}

#[test]
fn at_defaults_to_now() {
    // rule: CLI-21
    let work = Work::new();
    reference(&work);
    // without a limit nothing expires, so the lines are the same at any time
    assert_eq!(claims(&work, &[]), REFERENCE);
    // now is after 2026-10-26: a one-day limit expires the window
    let now = claims(&work, &["--limit-days", "1"]);
    assert!(now.contains("[2026-09-27, 2026-10-26]: expired;"), "{now}");
    // ... and an --at before the proof leaves it complete (never expired, CLAIMS-12)
    let before = claims(
        &work,
        &["--at", "2026-10-26T05:00:00+00:00", "--limit-days", "1"],
    );
    assert!(
        before.contains("[2026-09-27, 2026-10-26]: complete;"),
        "{before}"
    );
}

#[test]
fn limit_days_expires_regions_older_than_the_limit() {
    // rule: CLI-22
    let work = Work::new();
    reference(&work);
    let at = ["--at", "2026-10-28T06:00:00Z"];
    let line = |extra: &[&str]| {
        let args: Vec<&str> = at.iter().chain(extra).copied().collect();
        claims(&work, &args).lines().nth(1).unwrap().to_owned()
    };
    // exactly two days old: not expired
    assert!(line(&["--limit-days", "2"]).contains(": complete;"));
    assert!(line(&["--limit-days", "1.5"]).contains(": expired;"));
    assert!(line(&["--limit-days", "0"]).contains(": expired;"));
    assert!(line(&["--limit-days", "2.000001"]).contains(": complete;"));
    // without the option nothing expires, however old
    let args = ["--at", "9999-12-31T00:00:00Z"];
    assert!(claims(&work, &args)
        .lines()
        .nth(1)
        .unwrap()
        .contains(": complete;"));
    let lines = claims(
        &work,
        &["--at", "2026-10-28T06:00:00Z", "--limit-days", "1"],
    );
    insta::assert_snapshot!(lines, @r"
    orders (-inf, 2026-09-26]: unknown; complete as of unknown; deletions as of unknown
    orders [2026-09-27, 2026-10-26]: expired; complete as of 2026-10-26T06:00:00+00:00; deletions as of 2026-10-26T06:00:00+00:00
    orders [2026-10-27, +inf): unknown; complete as of unknown; deletions as of unknown
    orders: unknown; exact at no single instant
    ");
}

#[test]
fn a_bad_limit_is_a_usage_error() {
    // rule: CLI-29
    let work = Work::new();
    reference(&work);
    for bad in ["-1", "two", "nan", ""] {
        work.dogana(["claims", "ledger.json", "--limit-days", bad])
            .assert()
            .code(2);
    }
}

#[test]
fn window_cuts_the_regions() {
    // rule: CLI-23
    let work = Work::new();
    reference(&work);
    let lines = claims(
        &work,
        &[
            "--at",
            "2026-10-26T07:00:00Z",
            "--window",
            "2026-10-20",
            "2026-10-30",
        ],
    );
    insta::assert_snapshot!(lines, @r"
    orders [2026-10-20, 2026-10-26]: complete; complete as of 2026-10-26T06:00:00+00:00; deletions as of 2026-10-26T06:00:00+00:00
    orders [2026-10-27, 2026-10-30]: unknown; complete as of unknown; deletions as of unknown
    orders: unknown; exact at no single instant
    ");
    // inside the proven window, the table line is exact
    let lines = claims(
        &work,
        &[
            "--at",
            "2026-10-26T07:00:00Z",
            "--window",
            "2026-10-01",
            "2026-10-01",
        ],
    );
    insta::assert_snapshot!(lines, @r"
    orders [2026-10-01, 2026-10-01]: complete; complete as of 2026-10-26T06:00:00+00:00; deletions as of 2026-10-26T06:00:00+00:00
    orders: complete; exact at 2026-10-26T06:00:00+00:00
    ");
}

#[test]
fn a_bad_window_is_refused() {
    // rule: CLI-23
    let work = Work::new();
    reference(&work);
    let err = refused(&work, ["claims", "ledger.json", "--window", "1", "2"]);
    insta::assert_snapshot!(err, @r#"error: --window LOW "1" is not a date, and the window column "order_date" is date; write YYYY-MM-DD, as in 2026-10-26"#);
    let err = refused(
        &work,
        [
            "claims",
            "ledger.json",
            "--window",
            "2026-10-30",
            "2026-10-01",
        ],
    );
    assert!(err.contains("(DOMAIN-18)"), "{err}");
    // a table without a window column
    let c = Contract::builder("items", ["id"])
        .shape("full", Shape::full())
        .column("id", LogicalType::Int)
        .build()
        .unwrap();
    work.write("items.json", &Ledger::new(c).to_json());
    let err = refused(&work, ["claims", "items.json", "--window", "1", "2"]);
    insta::assert_snapshot!(err, @r#"error: table "items" has no window column, so there is no window to declare; drop --window to see the whole table"#);
}

#[test]
fn json_prints_the_claims_document() {
    // rule: CLI-20
    let work = Work::new();
    reference(&work);
    let out = claims(&work, &["--at", "2026-10-26T07:00:00Z", "--json"]);
    let c = Claims::from_json(&out).unwrap();
    assert_eq!(out, format!("{}\n", c.to_json()));
    assert_eq!(c.regions().len(), 3);
    assert_eq!(c.limit(), Duration::MAX);
    assert_eq!(c.at(), "2026-10-26T07:00:00Z".parse::<Timestamp>().unwrap());
}

#[test]
fn undecided_formats_are_the_cores() {
    // rule: CLI-28
    // Decisions: string bounds print quoted, with escapes, and the region after a string
    // window starts closed at its successor s + "\0" (DOMAIN-15); datetime bounds keep their
    // open brackets; fractional seconds print six digits; a table without a window column is one
    // region (-inf, +inf); an exact table prints its instant.
    let work = Work::new();
    let at: Timestamp = "2026-10-26T06:00:00.25Z".parse().unwrap();

    let c = Contract::builder("plants", ["id"])
        .shape("part", Shape::window())
        .window_column("plant")
        .column("id", LogicalType::Int)
        .column("plant", LogicalType::Str)
        .build()
        .unwrap();
    let m = c
        .manifest("part", at)
        .window(Window::new("b\"1", "m"))
        .rows(1)
        .build()
        .unwrap();
    work.write("plants.json", &Ledger::new(c).apply(&m).unwrap().to_json());
    let out = work
        .dogana(["claims", "plants.json", "--at", "2026-10-27T00:00:00Z"])
        .assert()
        .success();
    insta::assert_snapshot!(text(&out.get_output().stdout), @r#"
    plants (-inf, "b\"1"): unknown; complete as of unknown; deletions as of unknown
    plants ["b\"1", "m"]: complete; complete as of 2026-10-26T06:00:00.250000+00:00; deletions as of 2026-10-26T06:00:00.250000+00:00
    plants ["m\0", +inf): unknown; complete as of unknown; deletions as of unknown
    plants: unknown; exact at no single instant
    "#);

    let c = Contract::builder("events", ["id"])
        .shape("part", Shape::window())
        .window_column("ts")
        .column("id", LogicalType::Int)
        .column("ts", LogicalType::Datetime)
        .build()
        .unwrap();
    let m = c
        .manifest("part", at)
        .window(Window::new(
            "2026-10-25T00:00:00Z".parse::<Timestamp>().unwrap(),
            "2026-10-26T00:00:00Z".parse::<Timestamp>().unwrap(),
        ))
        .rows(1)
        .build()
        .unwrap();
    work.write("events.json", &Ledger::new(c).apply(&m).unwrap().to_json());
    let out = work
        .dogana(["claims", "events.json", "--at", "2026-10-27T00:00:00Z"])
        .assert()
        .success();
    insta::assert_snapshot!(text(&out.get_output().stdout), @r"
    events (-inf, 2026-10-24T23:59:59.999999+00:00]: unknown; complete as of unknown; deletions as of unknown
    events [2026-10-25T00:00:00+00:00, 2026-10-26T00:00:00+00:00]: complete; complete as of 2026-10-26T06:00:00.250000+00:00; deletions as of 2026-10-26T06:00:00.250000+00:00
    events [2026-10-26T00:00:00.000001+00:00, +inf): unknown; complete as of unknown; deletions as of unknown
    events: unknown; exact at no single instant
    ");

    let c = Contract::builder("items", ["id"])
        .shape("full", Shape::full())
        .shape("changes", Shape::changes(Deletions::None))
        .cursor_column("updated_at")
        .column("id", LogicalType::Int)
        .column("updated_at", LogicalType::Datetime)
        .build()
        .unwrap();
    work.write("untouched.json", &Ledger::new(c.clone()).to_json());
    let full = c.manifest("full", at).rows(1).build().unwrap();
    let ledger = Ledger::new(c.clone()).apply(&full).unwrap();
    work.write("exact.json", &ledger.to_json());
    let later: Timestamp = "2026-10-26T18:00:00Z".parse().unwrap();
    let changes = c
        .manifest("changes", later)
        .since(at)
        .rows(1)
        .build()
        .unwrap();
    work.write("patched.json", &ledger.apply(&changes).unwrap().to_json());
    let mut all = String::new();
    for doc in ["untouched.json", "exact.json", "patched.json"] {
        let out = work
            .dogana(["claims", doc, "--at", "2026-10-27T00:00:00Z"])
            .assert()
            .success();
        all.push_str(&text(&out.get_output().stdout));
    }
    insta::assert_snapshot!(all, @r"
    items (-inf, +inf): unknown; complete as of unknown; deletions as of unknown
    items: unknown; exact at no single instant
    items (-inf, +inf): complete; complete as of 2026-10-26T06:00:00.250000+00:00; deletions as of 2026-10-26T06:00:00.250000+00:00
    items: complete; exact at 2026-10-26T06:00:00.250000+00:00
    items (-inf, +inf): patched; complete as of 2026-10-26T18:00:00+00:00; deletions as of 2026-10-26T06:00:00.250000+00:00
    items: patched; exact at no single instant
    ");
}

#[test]
fn integer_bounds_print_closed() {
    // rule: CLI-25
    let work = Work::new();
    let c = Contract::builder("lines", ["id"])
        .shape("part", Shape::window())
        .window_column("n")
        .column("id", LogicalType::Int)
        .column("n", LogicalType::Int)
        .build()
        .unwrap();
    let at: Timestamp = "2026-10-26T06:00:00Z".parse().unwrap();
    let m = c
        .manifest("part", at)
        .window(Window::new(10, 20))
        .rows(1)
        .build()
        .unwrap();
    work.write("lines.json", &Ledger::new(c).apply(&m).unwrap().to_json());
    let out = work
        .dogana([
            "claims",
            "lines.json",
            "--at",
            "2026-10-27T00:00:00Z",
            "--window",
            "-5",
            "25",
        ])
        .assert()
        .success();
    insta::assert_snapshot!(text(&out.get_output().stdout), @r"
    lines [-5, 9]: unknown; complete as of unknown; deletions as of unknown
    lines [10, 20]: complete; complete as of 2026-10-26T06:00:00+00:00; deletions as of 2026-10-26T06:00:00+00:00
    lines [21, 25]: unknown; complete as of unknown; deletions as of unknown
    lines: unknown; exact at no single instant
    ");
}

#[test]
fn refusals() {
    // rule: CLI-29
    let work = Work::new();
    reference(&work);
    let err = refused(&work, ["claims", "nowhere.json"]);
    assert!(
        err.starts_with("error: cannot read the ledger nowhere.json: "),
        "{err}"
    );
    work.write("broken.json", "{\"kind\": \"Ledger\",");
    let err = refused(&work, ["claims", "broken.json"]);
    assert!(
        err.starts_with("error: ledger broken.json is refused: EOF while parsing a value at $ (line 1, column 18)"),
        "{err}"
    );
    work.write(
        "manifest.json",
        &common::orders()
            .manifest("full", "2026-10-26T06:00:00Z".parse().unwrap())
            .rows(1)
            .build()
            .unwrap()
            .to_json(),
    );
    let err = refused(&work, ["claims", "manifest.json"]);
    assert!(err.contains("ledger manifest.json is refused"), "{err}");
    let err = refused(
        &work,
        ["claims", "ledger.json", "--at", "2026-10-26T06:00:00"],
    );
    insta::assert_snapshot!(err, @r#"error: --at "2026-10-26T06:00:00" has no UTC offset, so it names no instant (CLI-10); write it with Z or ±HH:MM, as in 2026-10-26T06:00:00Z"#);
    work.dogana(["claims"]).assert().code(2);
    work.dogana(["claims", "ledger.json", "--window", "2026-10-01"])
        .assert()
        .code(2);
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    // rule: CLI-29
    let work = Work::new();
    reference(&work);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dogana"))
        .current_dir(work.dir())
        .args(["claims", "ledger.json"])
        .stdout(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success());
}
