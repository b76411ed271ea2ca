//! Errors a machine can act on (issue 37): every error carries a stable code listed in
//! `docs/errors.md`, `--json` makes it one JSON object on standard error, and the exit status
//! tells a refusal (1) from a usage error (2) and a transient failure (3), which a decision
//! never is.

mod common;

use common::{text, Work};
use serde_json::Value;

/// Sunday's full dump of orders: five live rows.
const SUNDAY: &str = "\
id,order_date,updated_at,amount,deleted
1,2026-10-20,2026-10-20T10:00:00Z,10.00,false
2,2026-10-21,2026-10-21T10:00:00Z,20.00,false
";

fn sunday(work: &Work) {
    work.write("sun.csv", SUNDAY);
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
        "2",
    ])
    .assert()
    .success();
}

/// The one JSON object a failed command wrote on standard error, and its exit status.
fn json_error<I, S>(work: &Work, args: I) -> (i32, Value)
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let out = work.dogana(args).output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    let v: Value = serde_json::from_str(&err).unwrap_or_else(|e| panic!("{e}: {err}"));
    let code = v["error"]["code"].as_str().expect("a code");
    let listed = dogana_codes::by_id(code).unwrap_or_else(|| panic!("{code} is not listed"));
    assert_eq!(v["error"]["kind"], listed.kind.name());
    assert!(v["error"]["message"]
        .as_str()
        .is_some_and(|m| !m.is_empty()));
    (out.status.code().unwrap(), v)
}

/// The commands `dogana help` lists.
fn commands(work: &Work) -> Vec<String> {
    let out = work.dogana(["help"]).assert().success();
    let help = text(&out.get_output().stdout);
    let list = help
        .split("Commands:\n")
        .nth(1)
        .expect("a command list")
        .split("\n\n")
        .next()
        .unwrap();
    list.lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_command_takes_json() {
    let work = Work::new();
    let commands = commands(&work);
    assert!(commands.len() >= 18, "{commands:?}");
    for c in &commands {
        let out = work.dogana([c.as_str(), "--help"]).assert().success();
        assert!(
            text(&out.get_output().stdout).contains("--json"),
            "dogana {c} has no --json"
        );
    }
}

#[test]
fn a_refusal_with_json_is_one_object_naming_code_field_and_value() {
    // rule: CLI-10, CLI-29
    let work = Work::new();
    work.write("sun.csv", SUNDAY);
    let (status, v) = json_error(
        &work,
        [
            "manifest",
            "sun.csv",
            "--contract",
            "orders.toml",
            "--shape",
            "full",
            "--rows",
            "2",
            "--produced-at",
            "2026-10-26T06:00:00",
            "--json",
        ],
    );
    assert_eq!(status, 1);
    assert_eq!(v["error"]["code"], "DGN-106");
    assert_eq!(v["error"]["kind"], "refusal");
    assert_eq!(v["error"]["field"], "--produced-at");
    assert_eq!(v["error"]["value"], "2026-10-26T06:00:00");
    assert!(v["error"]["message"]
        .as_str()
        .unwrap()
        .contains("has no UTC offset"));
}

#[test]
fn a_refusal_without_json_is_one_line_with_its_code() {
    // rule: CLI-29
    let work = Work::new();
    let (code, line) = common::refused_code(&work, ["identity", "nowhere.json"]);
    assert_eq!(code, dogana_codes::FILE_UNREADABLE);
    assert!(
        line.starts_with("error: cannot read the document nowhere.json"),
        "{line}"
    );
}

#[test]
fn a_usage_error_with_json_is_code_001_and_exit_2() {
    // rule: CLI-29
    let work = Work::new();
    let (status, v) = json_error(&work, ["deliver", "--json"]);
    assert_eq!(status, 2);
    assert_eq!(v["error"]["code"], "DGN-001");
    assert_eq!(v["error"]["kind"], "usage");
    // without --json, clap's own text, still exit 2
    let out = work.dogana(["deliver"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).starts_with("error: "));
}

#[test]
fn a_rejection_is_a_refusal_never_transient() {
    // rule: RECV-11
    let work = Work::new();
    work.write("sun.csv", SUNDAY);
    // the manifest declares 3 rows; the file holds 2
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
        "3",
    ])
    .assert()
    .success();
    let (status, v) = json_error(
        &work,
        [
            "deliver",
            "sun.csv",
            "--store",
            "s.db",
            "--contract",
            "orders.toml",
            "--at",
            "2026-10-25T07:00:00Z",
            "--json",
        ],
    );
    assert_eq!(status, 1);
    assert_eq!(v["error"]["code"], "DGN-201");
}

#[test]
fn a_lock_held_past_the_wait_is_transient_exit_3() {
    // rule: RECV-09
    let work = Work::new();
    sunday(&work);
    // Monday's full dump: a new manifest, so a delivery of it needs the write lock (a
    // replay of Sunday's would be answered without it)
    work.write("mon.csv", SUNDAY);
    work.dogana([
        "manifest",
        "mon.csv",
        "--contract",
        "orders.toml",
        "--shape",
        "full",
        "--produced-at",
        "2026-10-26T06:00:00Z",
        "--rows",
        "2",
    ])
    .assert()
    .success();
    let deliver = |file: &str, extra: &[&str]| {
        let mut args = vec![
            "deliver",
            file,
            "--store",
            "s.db",
            "--contract",
            "orders.toml",
            "--at",
            "2026-10-26T07:00:00Z",
            "--lock-timeout",
            "0.2",
        ];
        args.extend_from_slice(extra);
        work.dogana(args).output().unwrap()
    };
    assert!(deliver("sun.csv", &[]).status.success());
    // another writer holds SQLite's write lock
    let holder = dogana_sqlite::rusqlite::Connection::open(work.path("s.db")).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let out = deliver("mon.csv", &[]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let (code, _) = common::error_line(text(&out.stderr).trim_end());
    assert_eq!(code, dogana_codes::STORE_LOCKED);
    let out = deliver("mon.csv", &["--json"]);
    assert_eq!(out.status.code(), Some(3));
    let v: Value = serde_json::from_str(&text(&out.stderr)).unwrap();
    assert_eq!(v["error"]["code"], "DGN-401");
    assert_eq!(v["error"]["kind"], "transient");
    holder.execute_batch("ROLLBACK").unwrap();
    // nothing was decided meanwhile: one receipt; the retry is decided and accepted
    let out = work
        .dogana(["receipts", "--store", "s.db", "orders"])
        .assert()
        .success();
    assert_eq!(text(&out.get_output().stdout).lines().count(), 1);
    assert!(deliver("mon.csv", &[]).status.success());
}

#[test]
fn json_output_for_verify_and_identity() {
    let work = Work::new();
    sunday(&work);
    work.dogana([
        "deliver",
        "sun.csv",
        "--store",
        "s.db",
        "--contract",
        "orders.toml",
        "--at",
        "2026-10-25T07:00:00Z",
    ])
    .assert()
    .success();
    let out = work
        .dogana(["verify", "--store", "s.db", "--json"])
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v[0]["table"], "orders");
    assert_eq!(v[0]["ok"], true);
    assert_eq!(v[0]["receipts"], 1);
    let out = work
        .dogana(["identity", "sun.csv.json", "--json"])
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["kind"], "Manifest");
    assert_eq!(v["identity"].as_str().unwrap().len(), 64);
}

#[test]
fn no_color_and_no_drawing_when_output_is_not_a_terminal() {
    // a usage error and a delivery, with colors forced on by the environment and NO_COLOR
    // set: not one escape sequence reaches a pipe
    let work = Work::new();
    sunday(&work);
    for args in [
        &["deliver"][..],
        &[
            "deliver",
            "sun.csv",
            "--store",
            "s.db",
            "--contract",
            "orders.toml",
        ][..],
    ] {
        let out = work
            .dogana(args)
            .env("NO_COLOR", "1")
            .env("CLICOLOR_FORCE", "1")
            .env("DOGANA_PROGRESS_AFTER_MS", "0")
            .output()
            .unwrap();
        let all = [out.stdout, out.stderr].concat();
        assert!(!all.contains(&0x1b), "{}", String::from_utf8_lossy(&all));
    }
}

#[test]
fn an_empty_root_or_in_memory_store_is_refused_and_nothing_is_written() {
    // issue 37: `--store file://` is the filesystem root, `duckdb:` an in-memory database
    let work = Work::new();
    sunday(&work);
    let mut specs = vec!["sqlite:", "duckdb:", ":memory:", "sqlite::memory:"];
    if cfg!(feature = "lake") {
        specs.extend(["file://", "file:///", "lake:", "memory://m"]);
    }
    for spec in specs {
        for args in [
            &[
                "deliver",
                "sun.csv",
                "--store",
                spec,
                "--contract",
                "orders.toml",
            ][..],
            &["receipts", "--store", spec, "orders"][..],
        ] {
            let (status, v) = json_error(&work, [args, &["--json"]].concat());
            assert_eq!(status, 1, "{spec}: {v}");
            assert_eq!(v["error"]["code"], "DGN-303", "{spec}: {v}");
            assert_eq!(v["error"]["field"], "--store", "{spec}: {v}");
            assert_eq!(v["error"]["value"], spec, "{spec}: {v}");
        }
    }
    // nothing written at the root, nothing beside the work files
    assert!(!std::path::Path::new("/store-id").exists());
    assert!(!std::path::Path::new("/tables").exists());
    assert_eq!(
        work.names(),
        ["orders.csv", "orders.toml", "sun.csv", "sun.csv.json"]
    );
}
