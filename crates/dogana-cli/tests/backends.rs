//! The receiver commands on every backend: `--store` picks it (a `.duckdb` path or
//! `duckdb:PATH` DuckDB, `.db`/`.sqlite` or `sqlite:PATH` SQLite), and `deliver`, `receipts`,
//! `verify` and `claims --store` print the same lines on each. A binary without a backend
//! answers a store that needs it with one line saying how to get it; readers never write; a
//! second writer waits a bounded time for DuckDB's lock and then refuses naming the holder.

mod common;

#[cfg(any(feature = "duckdb", feature = "lake"))]
use common::text;
use common::{refused, Work};

const SUNDAY: &str = "\
id,order_date,updated_at,amount,deleted
1,2026-10-20,2026-10-20T10:00:00Z,10.00,false
2,2026-10-21,2026-10-21T10:00:00Z,20.00,false
3,2026-10-22,2026-10-22T10:00:00Z,30.00,false
";

const MONDAY: &str = "\
id,order_date,updated_at,amount,deleted
2,2026-10-21,2026-10-25T09:00:00Z,21.00,false
4,2026-10-25,2026-10-25T12:00:00Z,60.00,false
3,2026-10-22,2026-10-25T15:00:00Z,0,true
";

fn manifests(work: &Work) {
    work.write("sun.csv", SUNDAY);
    work.write("mon.csv", MONDAY);
    work.write("bad.csv", MONDAY);
    for args in [
        &[
            "sun.csv",
            "--shape",
            "full",
            "--produced-at",
            "2026-10-25T06:00:00Z",
            "--rows",
            "3",
        ][..],
        &[
            "mon.csv",
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
        ][..],
        // declares one live row too many: refused by the rows check
        &[
            "bad.csv",
            "--shape",
            "changes",
            "--produced-at",
            "2026-10-27T06:00:00Z",
            "--since",
            "2026-10-26T06:00:00Z",
            "--rows",
            "3",
            "--tombstones",
            "1",
        ][..],
    ] {
        let mut all = vec!["manifest", "--contract", "orders.toml", "--force"];
        all.extend_from_slice(args);
        work.dogana(&all).assert().success();
    }
}

/// Everything the receiver commands print for one store, the store's name replaced by STORE.
#[cfg(any(feature = "duckdb", feature = "lake"))]
fn session(work: &Work, store: &str) -> String {
    let mut out = String::new();
    let mut run = |args: &[&str], code: i32| {
        let a = work.dogana(args).assert().code(code);
        let o = a.get_output();
        out.push_str(&format!("$ {}\n", args.join(" ")));
        out.push_str(&text(&o.stdout));
        out.push_str(&text(&o.stderr));
    };
    for (file, at, code) in [
        ("sun.csv", "2026-10-25T07:00:00Z", 0),
        ("mon.csv", "2026-10-26T07:00:00Z", 0),
        ("bad.csv", "2026-10-27T07:00:00Z", 1),
        ("mon.csv", "2026-10-27T08:00:00Z", 0),
    ] {
        run(
            &[
                "deliver",
                file,
                "--store",
                store,
                "--contract",
                "orders.toml",
                "--at",
                at,
                "--source",
                "test",
            ],
            code,
        );
    }
    run(&["receipts", "--store", store, "orders"], 0);
    run(&["receipts", "--store", store, "orders", "--json"], 0);
    run(&["verify", "--store", store], 0);
    run(
        &[
            "claims",
            "--store",
            store,
            "orders",
            "--at",
            "2026-10-27T09:00:00Z",
            "--limit-days",
            "2",
        ],
        0,
    );
    out.replace(store, "STORE")
}

#[cfg(feature = "duckdb")]
#[test]
fn every_command_prints_the_same_on_sqlite_and_duckdb() {
    // rule: LOADER-01, LOADER-04, RECV-11, RECV-12
    let work = Work::new();
    manifests(&work);
    let sqlite = session(&work, "orders.db");
    let duckdb = session(&work, "orders.duckdb");
    assert_eq!(sqlite, duckdb);
    assert!(sqlite.contains("accepted orders/full"), "{sqlite}");
    assert!(sqlite.contains("rejected orders/changes"), "{sqlite}");
    // the prefixes pick the backend whatever the extension
    let prefixed = session(&work, "duckdb:other.db");
    assert_eq!(prefixed, duckdb);
    assert!(duckdb_file(&work.path("other.db")));
    let sqlite_prefixed = session(&work, "sqlite:other.duckdb");
    assert_eq!(sqlite_prefixed, sqlite);
    assert!(!duckdb_file(&work.path("other.duckdb")));
}

#[cfg(feature = "lake")]
#[test]
fn every_command_prints_the_same_on_sqlite_and_the_lake() {
    // rule: LOADER-01, LOADER-04, RECV-11, RECV-12
    let work = Work::new();
    manifests(&work);
    let sqlite = session(&work, "orders.db");
    let url = format!("file://{}", work.path("lake").display());
    let lake = session(&work, &url);
    assert_eq!(sqlite, lake);
    assert!(work.path("lake").join("store-id").exists());
    assert!(work
        .path("lake")
        .join("tables/orders/_pointer.json")
        .exists());
}

#[cfg(feature = "duckdb")]
fn duckdb_file(path: &std::path::Path) -> bool {
    std::fs::read(path).is_ok_and(|b| b.len() >= 12 && &b[8..12] == b"DUCK")
}

#[cfg(not(feature = "duckdb"))]
#[test]
fn a_build_without_duckdb_says_how_to_get_it() {
    let work = Work::new();
    manifests(&work);
    let line = refused(
        &work,
        [
            "deliver",
            "sun.csv",
            "--store",
            "orders.duckdb",
            "--contract",
            "orders.toml",
        ],
    );
    assert!(line.contains("--features duckdb"), "{line}");
    assert!(!work.exists("orders.duckdb"), "nothing was created");
}

#[test]
fn readers_refuse_a_database_that_is_not_a_store_and_change_nothing() {
    // rule: RECV-13
    let work = Work::new();
    // an application's SQLite database: a table of its own, no dogana tables
    let app = work.path("app.db");
    {
        let conn = dogana_sqlite::rusqlite::Connection::open(&app).unwrap();
        conn.execute_batch("CREATE TABLE orders (id INTEGER); INSERT INTO orders VALUES (1);")
            .unwrap();
    }
    let before = std::fs::read(&app).unwrap();
    for args in [
        &["verify", "--store", "app.db"][..],
        &["receipts", "--store", "app.db", "orders"][..],
        &["claims", "--store", "app.db", "orders"][..],
    ] {
        let line = refused(&work, args);
        assert!(line.contains("not a dogana store"), "{args:?}: {line}");
    }
    assert_eq!(
        std::fs::read(&app).unwrap(),
        before,
        "a reader changed the file"
    );
    assert_eq!(
        work.names()
            .iter()
            .filter(|n| n.starts_with("app.db"))
            .count(),
        1
    );
}

#[test]
fn readers_work_on_a_store_the_user_can_only_read() {
    let work = Work::new();
    manifests(&work);
    work.dogana([
        "deliver",
        "sun.csv",
        "--store",
        "orders.db",
        "--contract",
        "orders.toml",
        "--at",
        "2026-10-25T07:00:00Z",
    ])
    .assert()
    .success();
    let store = work.path("orders.db");
    let before = std::fs::read(&store).unwrap();
    let mut perms = std::fs::metadata(&store).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&store, perms).unwrap();
    for args in [
        &["verify", "--store", "orders.db"][..],
        &["receipts", "--store", "orders.db", "orders"][..],
        &[
            "claims",
            "--store",
            "orders.db",
            "orders",
            "--at",
            "2026-10-25T08:00:00Z",
        ][..],
    ] {
        work.dogana(args).assert().success();
    }
    assert_eq!(std::fs::read(&store).unwrap(), before);
}

#[cfg(feature = "duckdb")]
#[test]
fn a_second_writer_waits_then_refuses_naming_the_holder() {
    // rule: RECV-09, RECV-11
    let work = Work::new();
    manifests(&work);
    let store = work.path("orders.duckdb");
    // this process holds DuckDB's lock on the file
    let holder = dogana_duckdb::Store::open(&store).unwrap();
    let started = std::time::Instant::now();
    let (code, line) = common::transient(
        &work,
        [
            "deliver",
            "sun.csv",
            "--store",
            "orders.duckdb",
            "--contract",
            "orders.toml",
            "--lock-timeout",
            "1",
        ],
    );
    let waited = started.elapsed();
    assert_eq!(code, dogana_codes::STORE_LOCKED);
    assert!(line.contains("locked by another writer"), "{line}");
    assert!(
        line.contains(&format!("PID {}", std::process::id())),
        "names the holder: {line}"
    );
    assert!(waited >= std::time::Duration::from_secs(1), "{waited:?}");
    drop(holder);
    // once it lets go, the delivery goes through, and nothing was lost meanwhile
    work.dogana([
        "deliver",
        "sun.csv",
        "--store",
        "orders.duckdb",
        "--contract",
        "orders.toml",
        "--at",
        "2026-10-25T07:00:00Z",
    ])
    .assert()
    .success();
    let out = work
        .dogana(["receipts", "--store", "orders.duckdb", "orders"])
        .assert()
        .success();
    assert_eq!(text(&out.get_output().stdout).lines().count(), 1);
}

#[cfg(feature = "duckdb")]
#[test]
fn several_deliver_processes_at_once_lose_nothing() {
    // rule: RECV-10, RECV-11, RECV-12
    let work = Work::new();
    let days = [
        "2026-10-20",
        "2026-10-21",
        "2026-10-22",
        "2026-10-23",
        "2026-10-24",
    ];
    // five full reads at distinct instants: every order lands, whatever order they commit in
    let mut files = Vec::new();
    for (i, day) in days.iter().enumerate() {
        let name = format!("full{i}.csv");
        work.write(
            &name,
            &format!(
                "id,order_date,updated_at,amount,deleted\n{i},{day},{day}T10:00:00Z,1.00,false\n"
            ),
        );
        let at = format!("2026-10-2{}T06:00:00Z", 5 + i);
        work.dogana([
            "manifest",
            &name,
            "--contract",
            "orders.toml",
            "--shape",
            "full",
            "--produced-at",
            &at,
            "--rows",
            "1",
        ])
        .assert()
        .success();
        files.push(name);
    }
    let children: Vec<std::process::Child> = files
        .iter()
        .map(|f| {
            std::process::Command::new(env!("CARGO_BIN_EXE_dogana"))
                .current_dir(work.dir())
                .args([
                    "deliver",
                    f,
                    "--store",
                    "orders.duckdb",
                    "--contract",
                    "orders.toml",
                    "--at",
                    "2026-11-01T00:00:00Z",
                ])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut codes = Vec::new();
    for c in children {
        let out = c.wait_with_output().unwrap();
        codes.push((out.status.code(), text(&out.stderr)));
    }
    // each was accepted or rejected (an older full after a newer one), none failed to run
    for (code, err) in &codes {
        assert!(matches!(code, Some(0) | Some(1)), "{code:?} {err}");
        assert!(!err.contains("locked"), "{err}");
    }
    let out = work
        .dogana(["receipts", "--store", "orders.duckdb", "orders"])
        .assert()
        .success();
    assert_eq!(
        text(&out.get_output().stdout).lines().count(),
        files.len(),
        "one receipt per delivery; the processes said: {codes:?}"
    );
    work.dogana(["verify", "--store", "orders.duckdb"])
        .assert()
        .success();
}

#[test]
fn a_table_dogana_did_not_create_is_refused_unless_adopted() {
    // rule: RECV-07, GATE-25
    let work = Work::new();
    manifests(&work);
    let app = work.path("app.db");
    {
        let conn = dogana_sqlite::rusqlite::Connection::open(&app).unwrap();
        conn.execute_batch("CREATE TABLE orders (id INTEGER); INSERT INTO orders VALUES (42);")
            .unwrap();
    }
    let deliver = |extra: &[&str]| {
        let mut args = vec![
            "deliver",
            "sun.csv",
            "--store",
            "app.db",
            "--contract",
            "orders.toml",
            "--at",
            "2026-10-25T07:00:00Z",
        ];
        args.extend_from_slice(extra);
        args.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    let line = refused(&work, deliver(&[]));
    assert!(
        line.contains("did not create") && line.contains("--adopt"),
        "{line}"
    );
    let count = |sql: &str| -> i64 {
        let conn = dogana_sqlite::rusqlite::Connection::open(&app).unwrap();
        conn.query_row(sql, [], |r| r.get(0)).unwrap()
    };
    assert_eq!(
        count("SELECT count(*) FROM orders WHERE id = 42"),
        1,
        "its rows stay"
    );
    assert_eq!(
        count("SELECT count(*) FROM dogana_receipts"),
        0,
        "no receipt"
    );
    // adopted: the full delivery replaces the application's rows
    work.dogana(deliver(&["--adopt"])).assert().success();
    assert_eq!(
        count("SELECT count(*) FROM orders WHERE id = 42"),
        0,
        "replaced"
    );
    assert_eq!(count("SELECT count(*) FROM orders"), 3);
    work.dogana(["verify", "--store", "app.db"])
        .assert()
        .success();
}

/// A table whose name differs from dogana's own only in letter case: the refusal says a store
/// holds one table per case-folded name and which name to use, with or without --adopt.
fn letter_case_refused(store: &str) {
    // rule: RECV-07, GATE-25
    let work = Work::new();
    manifests(&work);
    work.dogana([
        "deliver",
        "sun.csv",
        "--store",
        store,
        "--contract",
        "orders.toml",
        "--at",
        "2026-10-25T07:00:00Z",
    ])
    .assert()
    .success();
    work.write(
        "Orders.toml",
        &work
            .read("orders.toml")
            .replace("table = \"orders\"", "table = \"Orders\""),
    );
    work.dogana([
        "manifest",
        "sun.csv",
        "--contract",
        "Orders.toml",
        "--shape",
        "full",
        "--produced-at",
        "2026-10-26T06:00:00Z",
        "--rows",
        "3",
        "-o",
        "upper.json",
    ])
    .assert()
    .success();
    for adopt in [false, true] {
        let mut args = vec![
            "deliver",
            "sun.csv",
            "--manifest",
            "upper.json",
            "--store",
            store,
            "--contract",
            "Orders.toml",
            "--at",
            "2026-10-26T07:00:00Z",
        ];
        if adopt {
            args.push("--adopt");
        }
        let (code, line) = common::refused_code(&work, &args);
        assert_eq!(code, dogana_codes::TABLE_NAME_UNUSABLE, "{line}");
        assert!(line.contains("one table per case-folded name"), "{line}");
        assert!(line.contains("deliver under the name \"orders\""), "{line}");
    }
    let out = work
        .dogana(["receipts", "--store", store, "orders"])
        .assert()
        .success();
    assert_eq!(
        common::text(&out.get_output().stdout).lines().count(),
        1,
        "nothing stored"
    );
}

#[test]
fn sqlite_refuses_a_table_differing_only_in_letter_case_saying_what_to_do() {
    letter_case_refused("orders.db");
}

#[cfg(feature = "duckdb")]
#[test]
fn duckdb_refuses_a_table_differing_only_in_letter_case_saying_what_to_do() {
    letter_case_refused("orders.duckdb");
}
