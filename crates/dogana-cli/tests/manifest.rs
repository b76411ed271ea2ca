//! `dogana manifest`: CLI-01 to CLI-14.

mod common;

use common::{refused, text, Work, ABC_SHA256};
use dogana::{
    column_hash, Contract, Deletions, FromWire, LogicalType, Manifest, Position, Shape, Since,
    Timestamp, Window, Wire,
};

const T: &str = "2026-10-26T06:00:00Z";

fn manifest_args<'a>(shape: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "manifest",
        "orders.csv",
        "--contract",
        "orders.toml",
        "--shape",
        shape,
        "--produced-at",
        T,
        "--rows",
        "1000",
    ];
    args.extend_from_slice(extra);
    args
}

fn written(work: &Work, name: &str) -> Manifest {
    let text = work.read(name);
    Manifest::from_json(&text).unwrap()
}

#[test]
fn full_manifest_is_written_next_to_the_file() {
    // rule: CLI-01
    // rule: CLI-03
    // rule: CLI-04
    // rule: CLI-06
    let work = Work::new();
    let out = work.dogana(manifest_args("full", &[])).assert().success();
    let m = written(&work, "orders.csv.json");
    let expected = common::orders()
        .manifest("full", T.parse().unwrap())
        .rows(1000)
        .content_hash(ABC_SHA256)
        .build()
        .unwrap();
    assert_eq!(m, expected);
    assert_eq!(m.content_hash(), Some(ABC_SHA256));
    assert_eq!(
        text(&out.get_output().stdout),
        format!("wrote orders.csv.json (Manifest {})\n", expected.identity())
    );
}

#[test]
fn the_document_is_canonical_json_and_a_newline() {
    // rule: CLI-14
    let work = Work::new();
    work.dogana(manifest_args("full", &[])).assert().success();
    let m = written(&work, "orders.csv.json");
    assert_eq!(work.read("orders.csv.json"), format!("{}\n", m.to_json()));
}

#[test]
fn schema_hash_is_the_contracts() {
    // rule: CLI-06
    let work = Work::new();
    let columns = "columns = [[\"id\", \"int\"], [\"order_date\", \"date\"], [\"updated_at\", \"datetime\"], [\"amount\", \"decimal(12,2)\"], [\"deleted\", \"bool\"]]\n";
    work.write("hashed.toml", &format!("{columns}{}", common::ORDERS_TOML));
    let mut args = manifest_args("full", &[]);
    args[3] = "hashed.toml";
    work.dogana(&args).assert().success();
    // the deleted column is left out of the hash (CONTRACT-18)
    let expected = column_hash(&[
        ("id", "int"),
        ("order_date", "date"),
        ("updated_at", "datetime"),
        ("amount", "decimal(12,2)"),
    ]);
    assert_eq!(
        written(&work, "orders.csv.json").schema_hash(),
        Some(expected.as_str())
    );
}

#[test]
fn the_file_is_hashed_never_parsed() {
    // rule: CLI-02
    // rule: CLI-06
    use sha2::{Digest, Sha256};
    let work = Work::new();
    // not UTF-8, not CSV, and larger than one read buffer
    let bytes: Vec<u8> = (0..3_000_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    std::fs::write(work.path("blob.bin"), &bytes).unwrap();
    let mut args = manifest_args("full", &[]);
    args[1] = "blob.bin";
    work.dogana(&args).assert().success();
    let m = written(&work, "blob.bin.json");
    let expected: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(m.content_hash(), Some(expected.as_str()));
    // an empty file has the SHA-256 of nothing
    work.write("empty.csv", "");
    args[1] = "empty.csv";
    work.dogana(&args).assert().success();
    assert_eq!(
        written(&work, "empty.csv.json").content_hash(),
        Some("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    );
}

#[test]
fn required_options_are_usage_errors() {
    // rule: CLI-03
    // rule: CLI-11
    // rule: CLI-29
    let work = Work::new();
    for missing in ["--contract", "--shape", "--produced-at", "--rows"] {
        let mut args = manifest_args("full", &[]);
        let i = args.iter().position(|a| *a == missing).unwrap();
        args.drain(i..i + 2);
        work.dogana(&args).assert().code(2);
    }
    work.dogana(["manifest", "--contract", "orders.toml"])
        .assert()
        .code(2);
    assert!(!work.exists("orders.csv.json"));
}

#[test]
fn wrong_calls_exit_2() {
    // rule: CLI-29
    let work = Work::new();
    work.dogana(manifest_args("full", &["--bogus"]))
        .assert()
        .code(2);
    let mut args = manifest_args("full", &[]);
    let i = args.iter().position(|a| *a == "1000").unwrap();
    args[i] = "many";
    work.dogana(&args).assert().code(2);
    args[i] = "-3";
    work.dogana(&args).assert().code(2);
    work.dogana(manifest_args("full", &["--window", "2026-10-01"]))
        .assert()
        .code(2);
    work.dogana(["frobnicate"]).assert().code(2);
    work.dogana(Vec::<&str>::new()).assert().code(2);
    assert!(!work.exists("orders.csv.json"));
}

#[test]
fn an_invalid_manifest_writes_nothing() {
    // rule: CLI-05
    // rule: CLI-07
    let work = Work::new();
    let err = refused(&work, manifest_args("full", &["--tombstones", "2"]));
    insta::assert_snapshot!(err, @r#"error: the manifest is invalid for contract "orders": tombstones = 2: shape "full" does not deliver tombstones (MAN-16); fix --rows and --tombstones"#);
    assert_eq!(work.names(), ["orders.csv", "orders.toml"]);
}

#[test]
fn tombstones_for_a_tombstone_shape_default_zero() {
    // rule: CLI-07
    // rule: CLI-14
    let work = Work::new();
    work.dogana(manifest_args(
        "changes",
        &["--since", "2026-10-25T06:00:00Z", "--tombstones", "3"],
    ))
    .assert()
    .success();
    let m = written(&work, "orders.csv.json");
    assert_eq!((m.rows(), m.tombstones()), (1000, 3));
    assert_eq!(
        m.since(),
        Some(&Since::Time("2026-10-25T06:00:00Z".parse().unwrap()))
    );
    work.dogana(manifest_args(
        "changes",
        &["--since", "2026-10-25T06:00:00Z", "--force"],
    ))
    .assert()
    .success();
    assert_eq!(written(&work, "orders.csv.json").tombstones(), 0);
}

#[test]
fn a_rolling_window_ends_at_produced_at() {
    // rule: CLI-09
    let work = Work::new();
    work.dogana(manifest_args("last30", &[])).assert().success();
    let m = written(&work, "orders.csv.json");
    assert_eq!(m.window().unwrap().to_string(), "[2026-09-27, 2026-10-26]");
    // ... in UTC, whatever the offset --produced-at is written with
    let mut args = manifest_args("last3", &["-o", "-"]);
    let i = args.iter().position(|a| *a == T).unwrap();
    args[i] = "2026-10-26T01:00:00+02:00";
    let out = work.dogana(&args).assert().success();
    let m = Manifest::from_json(&text(&out.get_output().stdout)).unwrap();
    assert_eq!(m.window().unwrap().to_string(), "[2026-10-23, 2026-10-25]");
}

#[test]
fn an_explicit_window_is_typed_by_the_window_column() {
    // rule: CLI-08
    let work = Work::new();
    work.dogana(manifest_args(
        "last3",
        &["--window", "2026-10-01", "2026-10-25"],
    ))
    .assert()
    .success();
    let m = written(&work, "orders.csv.json");
    assert_eq!(
        m.window(),
        Some(&Window::new(
            "2026-10-01".parse::<dogana::Date>().unwrap(),
            "2026-10-25".parse::<dogana::Date>().unwrap()
        ))
    );
}

#[test]
fn a_bad_window_type_is_refused() {
    // rule: CLI-08
    let work = Work::new();
    let err = refused(
        &work,
        manifest_args("last3", &["--window", "2026-10-01", "42"]),
    );
    insta::assert_snapshot!(err, @r#"error: --window HIGH "42" is not a date, and the window column "order_date" is date; write YYYY-MM-DD, as in 2026-10-26"#);
    let err = refused(
        &work,
        manifest_args("last3", &["--window", "2026-10-25", "2026-10-01"]),
    );
    assert!(err.contains("DOMAIN-18"), "{err}");
    let err = refused(
        &work,
        manifest_args("full", &["--window", "2026-10-01", "2026-10-25"]),
    );
    assert!(err.contains("drop --window"), "{err}");
    assert!(!work.exists("orders.csv.json"));
}

fn typed_contract(window: LogicalType) -> String {
    let c = Contract::builder("events", ["id"])
        .shape("part", Shape::window())
        .shape("seq", Shape::sequence(Deletions::None))
        .window_column("w")
        .column("id", LogicalType::Int)
        .column("w", window)
        .build()
        .unwrap();
    c.to_json()
}

#[test]
fn int_str_and_datetime_windows() {
    // rule: CLI-08
    let work = Work::new();
    let cases = [
        (LogicalType::Int, ["-5", "17"], Window::new(-5, 17)),
        (LogicalType::Str, ["a", "m z"], Window::new("a", "m z")),
        (
            LogicalType::Datetime,
            ["2026-10-26T00:00:00+02:00", "2026-10-26T00:00:00.5Z"],
            Window::new(
                "2026-10-25T22:00:00Z".parse::<Timestamp>().unwrap(),
                "2026-10-26T00:00:00.5Z".parse::<Timestamp>().unwrap(),
            ),
        ),
    ];
    for (ty, [low, high], window) in cases {
        work.write("events.json", &typed_contract(ty));
        let out = work
            .dogana([
                "manifest",
                "orders.csv",
                "--contract",
                "events.json",
                "--shape",
                "part",
                "--produced-at",
                T,
                "--rows",
                "1",
                "--window",
                low,
                high,
                "-o",
                "-",
            ])
            .assert()
            .success();
        let m = Manifest::from_json(&text(&out.get_output().stdout)).unwrap();
        assert_eq!(m.window(), Some(&window), "{ty}");
    }
    // an int column refuses a non-integer, a datetime column a naive time
    work.write("events.json", &typed_contract(LogicalType::Int));
    let err = refused(
        &work,
        [
            "manifest",
            "orders.csv",
            "--contract",
            "events.json",
            "--shape",
            "part",
            "--produced-at",
            T,
            "--rows",
            "1",
            "--window",
            "1",
            "2.5",
        ],
    );
    assert!(err.contains("is not an integer"), "{err}");
    work.write("events.json", &typed_contract(LogicalType::Datetime));
    let err = refused(
        &work,
        [
            "manifest",
            "orders.csv",
            "--contract",
            "events.json",
            "--shape",
            "part",
            "--produced-at",
            T,
            "--rows",
            "1",
            "--window",
            "2026-10-26T00:00:00",
            "2026-10-27T00:00:00Z",
        ],
    );
    assert!(err.contains("UTC offset"), "{err}");
}

#[test]
fn a_window_shape_without_size_needs_window() {
    // rule: CLI-14
    let work = Work::new();
    let err = refused(&work, manifest_args("partition", &[]));
    insta::assert_snapshot!(err, @r#"error: shape "partition" covers a window and has no size, so no window ends at --produced-at; pass --window LOW HIGH (CLI-09)"#);
    assert!(!work.exists("orders.csv.json"));
}

#[test]
fn since_and_generation_are_typed_by_the_contract() {
    // rule: CLI-08
    let work = Work::new();
    // sequence table: integer since and generation
    work.write("events.json", &typed_contract(LogicalType::Int));
    let base = [
        "manifest",
        "orders.csv",
        "--contract",
        "events.json",
        "--shape",
        "seq",
        "--produced-at",
        T,
        "--rows",
        "1",
        "-o",
        "-",
    ];
    let args: Vec<&str> = base
        .iter()
        .copied()
        .chain(["--since", "-2", "--generation", "41"])
        .collect();
    let out = work.dogana(&args).assert().success();
    let m = Manifest::from_json(&text(&out.get_output().stdout)).unwrap();
    assert_eq!(m.since(), Some(&Since::Position(Position::Sequence(-2))));
    assert_eq!(m.generation(), Some(&Position::Sequence(41)));
    let args: Vec<&str> = base
        .iter()
        .copied()
        .chain(["--since", "x", "--generation", "41"])
        .collect();
    assert!(refused(&work, &args).contains("is not an integer"));
    let args: Vec<&str> = base
        .iter()
        .copied()
        .chain(["--since", "1", "--generation", "g7"])
        .collect();
    assert!(refused(&work, &args).contains("(MAN-12)"));
    let args: Vec<&str> = base.iter().copied().chain(["--since", "1"]).collect();
    assert!(refused(&work, &args).contains("pass --generation"));

    // generation table: string tokens
    let c = Contract::builder("events", ["id"])
        .shape("full", Shape::full())
        .shape("feed", Shape::generations(Deletions::None))
        .column("id", LogicalType::Int)
        .build()
        .unwrap();
    work.write("gen.json", &c.to_json());
    let out = work
        .dogana([
            "manifest",
            "orders.csv",
            "--contract",
            "gen.json",
            "--shape",
            "feed",
            "--produced-at",
            T,
            "--rows",
            "1",
            "--since",
            "41",
            "--generation",
            "42",
            "-o",
            "-",
        ])
        .assert()
        .success();
    let m = Manifest::from_json(&text(&out.get_output().stdout)).unwrap();
    assert_eq!(
        m.since(),
        Some(&Since::Position(Position::Token("41".into())))
    );
    assert_eq!(m.generation(), Some(&Position::Token("42".into())));
    // a complete whole-table read may issue a token
    let out = work
        .dogana([
            "manifest",
            "orders.csv",
            "--contract",
            "gen.json",
            "--shape",
            "full",
            "--produced-at",
            T,
            "--rows",
            "1",
            "--generation",
            "g1",
            "-o",
            "-",
        ])
        .assert()
        .success();
    let m = Manifest::from_json(&text(&out.get_output().stdout)).unwrap();
    assert_eq!(m.generation(), Some(&Position::Token("g1".into())));
    // a complete read has no checkpoint
    let err = refused(&work, manifest_args("full", &["--since", T]));
    assert!(err.contains("drop --since"), "{err}");
    // a read of changes needs one
    let err = refused(&work, manifest_args("changes", &[]));
    assert!(err.contains("pass --since"), "{err}");
    // a timestamp read issues no position
    let err = refused(
        &work,
        manifest_args(
            "changes",
            &["--since", "2026-10-25T00:00:00Z", "--generation", "g"],
        ),
    );
    assert!(err.contains("(MAN-14)"), "{err}");
}

#[test]
fn times_need_a_utc_offset() {
    // rule: CLI-10
    // rule: CLI-14
    let work = Work::new();
    let mut args = manifest_args("full", &[]);
    let i = args.iter().position(|a| *a == T).unwrap();
    args[i] = "2026-10-26T06:00:00";
    let err = refused(&work, &args);
    insta::assert_snapshot!(err, @r#"error: --produced-at "2026-10-26T06:00:00" has no UTC offset, so it names no instant (CLI-10); write it with Z or ±HH:MM, as in 2026-10-26T06:00:00Z"#);
    args[i] = "yesterday";
    let err = refused(&work, &args);
    assert!(err.contains("--produced-at"), "{err}");
    let err = refused(
        &work,
        manifest_args("changes", &["--since", "2026-10-25 06:00:00"]),
    );
    assert!(
        err.contains("--since") && err.contains("no UTC offset"),
        "{err}"
    );
    assert!(!work.exists("orders.csv.json"));
}

#[test]
fn produced_at_is_kept_as_declared() {
    // rule: CLI-11
    let work = Work::new();
    let mut args = manifest_args("full", &["-o", "-"]);
    let i = args.iter().position(|a| *a == T).unwrap();
    args[i] = "2001-02-03T04:05:06.789+01:00";
    let out = work.dogana(&args).assert().success();
    let m = Manifest::from_json(&text(&out.get_output().stdout)).unwrap();
    assert_eq!(
        m.produced_at(),
        "2001-02-03T03:05:06.789Z".parse::<Timestamp>().unwrap()
    );
}

#[test]
fn an_existing_manifest_is_replaced_only_with_force() {
    // rule: CLI-12
    let work = Work::new();
    work.write("orders.csv.json", "precious");
    let err = refused(&work, manifest_args("full", &[]));
    insta::assert_snapshot!(err, @"error: orders.csv.json exists; pass --force to replace the manifest, or -o to write elsewhere");
    assert_eq!(work.read("orders.csv.json"), "precious");
    work.dogana(manifest_args("full", &["--force"]))
        .assert()
        .success();
    assert_eq!(written(&work, "orders.csv.json").rows(), 1000);
    // atomic: no temporary file is left behind
    assert_eq!(
        work.names(),
        ["orders.csv", "orders.csv.json", "orders.toml"]
    );
    // a refused declaration leaves the old manifest in place, even with --force
    refused(
        &work,
        manifest_args("full", &["--force", "--tombstones", "1"]),
    );
    assert_eq!(written(&work, "orders.csv.json").rows(), 1000);
}

#[cfg(unix)]
#[test]
fn a_replaced_manifest_keeps_its_permissions() {
    // rule: CLI-12
    use std::os::unix::fs::PermissionsExt;
    let work = Work::new();
    work.dogana(manifest_args("full", &[])).assert().success();
    let mode = |w: &Work| {
        std::fs::metadata(w.path("orders.csv.json"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode(&work), 0o644);
    std::fs::set_permissions(
        work.path("orders.csv.json"),
        std::fs::Permissions::from_mode(0o640),
    )
    .unwrap();
    work.dogana(manifest_args("full", &["--force"]))
        .assert()
        .success();
    assert_eq!(mode(&work), 0o640);
}

#[test]
fn dash_o_dash_writes_standard_output() {
    // rule: CLI-13
    let work = Work::new();
    work.write("orders.csv.json", "precious");
    let out = work
        .dogana(manifest_args("full", &["-o", "-"]))
        .assert()
        .success();
    let stdout = text(&out.get_output().stdout);
    let m = Manifest::from_json(&stdout).unwrap();
    assert_eq!(stdout, format!("{}\n", m.to_json()));
    assert_eq!(m.content_hash(), Some(ABC_SHA256));
    assert_eq!(work.read("orders.csv.json"), "precious");
}

#[test]
fn dash_o_path_writes_there() {
    // rule: CLI-14
    let work = Work::new();
    std::fs::create_dir(work.path("out")).unwrap();
    work.dogana(manifest_args("full", &["-o", "out/m.json"]))
        .assert()
        .success();
    assert!(!work.exists("orders.csv.json"));
    assert_eq!(written(&work, "out/m.json").rows(), 1000);
    refused(&work, manifest_args("full", &["--output", "out/m.json"]));
    work.dogana(manifest_args(
        "full",
        &["--output", "out/m.json", "--force"],
    ))
    .assert()
    .success();
    let err = refused(&work, manifest_args("full", &["-o", "missing/m.json"]));
    assert!(
        err.contains("cannot write the manifest missing/m.json"),
        "{err}"
    );
}

#[test]
fn a_wrong_shape_is_refused() {
    // rule: CLI-05
    let work = Work::new();
    let err = refused(&work, manifest_args("fulll", &[]));
    insta::assert_snapshot!(err, @r#"error: contract for table "orders" has no shape "fulll"; pass --shape with one of "changes", "full", "last3", "last30", "partition""#);
}

#[test]
fn an_unreadable_file_is_refused() {
    // rule: CLI-29
    let work = Work::new();
    let mut args = manifest_args("full", &[]);
    args[1] = "missing.csv";
    let err = refused(&work, &args);
    assert!(err.starts_with("error: cannot read missing.csv: "), "{err}");
    std::fs::create_dir(work.path("dir")).unwrap();
    args[1] = "dir";
    let err = refused(&work, &args);
    assert!(err.contains("is a directory"), "{err}");
    assert_eq!(work.names(), ["dir", "orders.csv", "orders.toml"]);
}

#[test]
fn an_invalid_or_unreadable_contract_is_refused() {
    // rule: CLI-29
    let work = Work::new();
    let mut args = manifest_args("full", &[]);
    args[3] = "nowhere.toml";
    assert!(refused(&work, &args).contains("cannot read the contract nowhere.toml"));
    work.write("bad.json", r#"{"kind":"Contract","version":3}"#);
    args[3] = "bad.json";
    assert!(refused(&work, &args).contains("contract bad.json is refused"));
    work.write("bad.toml", "table = \"orders\"\n");
    args[3] = "bad.toml";
    assert!(refused(&work, &args).contains("key is missing"));
}

#[test]
fn contract_accepts_json_and_toml_by_extension_or_content() {
    // rule: CLI-03
    let work = Work::new();
    work.write("c.json", &common::orders().to_json());
    work.write("c-json", &common::orders().to_json());
    work.write("c-toml", common::ORDERS_TOML);
    let mut outputs = Vec::new();
    for contract in ["orders.toml", "c.json", "c-json", "c-toml"] {
        let mut args = manifest_args("last3", &["-o", "-"]);
        args[3] = contract;
        let out = work.dogana(&args).assert().success();
        outputs.push(text(&out.get_output().stdout));
    }
    assert!(outputs.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn a_manifest_the_gate_admits() {
    // rule: CLI-05
    // The manifest written is the one the gate accepts on a fresh ledger.
    let work = Work::new();
    work.dogana(manifest_args("full", &[])).assert().success();
    let m = written(&work, "orders.csv.json");
    let ledger = dogana::Ledger::new(common::orders());
    let now: Timestamp = "2026-10-26T07:00:00Z".parse().unwrap();
    let receipt = dogana::Gate::evaluate(&ledger, &m, &[], now, None, &[]);
    assert!(
        receipt.accepted(),
        "{:?}",
        receipt.failures().collect::<Vec<_>>()
    );
}

#[test]
fn a_changes_read_starting_after_its_produced_at_is_refused_by_manifest_and_check() {
    // rule: TRANS-08 (refused whatever the ledger, so refused before any receiver sees it)
    let work = Work::new();
    work.write("c.csv", "id,order_date,updated_at,deleted\n");
    let (code, err) = common::refused_code(
        &work,
        [
            "manifest",
            "c.csv",
            "--contract",
            "orders.toml",
            "--shape",
            "changes",
            "--produced-at",
            "2026-10-27T06:00:00Z",
            "--since",
            "2026-10-28T06:00:00Z",
            "--rows",
            "0",
        ],
    );
    assert_eq!(code, dogana_codes::MANIFEST_INVALID);
    assert!(err.contains("(TRANS-08)"), "{err}");
    assert!(err.contains("since = 2026-10-28T06:00:00+00:00"), "{err}");
    assert!(!work.exists("c.csv.json"), "nothing written");
    // a manifest written by hand with the same declarations: check refuses it too
    let contract = dogana::Contract::from_slice(
        &work
            .dogana(["contract", "orders.toml"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let m = contract
        .manifest("changes", "2026-10-27T06:00:00Z".parse().unwrap())
        .since(dogana::Since::Time("2026-10-28T06:00:00Z".parse().unwrap()))
        .rows(0)
        .build()
        .unwrap();
    use dogana::Wire;
    work.write("c.csv.json", &m.to_json());
    let (code, err) = common::refused_code(&work, ["check", "c.csv", "--contract", "orders.toml"]);
    assert_eq!(code, dogana_codes::MANIFEST_INVALID);
    assert!(err.contains("(TRANS-08)"), "{err}");
}
