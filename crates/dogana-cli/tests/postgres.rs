//! The receiver commands on a Postgres store (`--store postgres://USER@HOST:PORT/DB?schema=NAME`,
//! the `postgres` feature), on the server `DOGANA_PG_URL` names (`bash scripts/test-postgres.sh`):
//! the same lines as on SQLite, the libpq environment filling what the URL leaves out, a
//! password never printed, and one-line refusals that name what to fix and change nothing.
#![cfg(feature = "postgres")]

mod common;

use common::{refused, text, Work};
use dogana_postgres::postgres::{Client, NoTls};

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

/// The test server, or a failure saying how to start one (never a skip).
fn url() -> String {
    std::env::var("DOGANA_PG_URL").expect(
        "DOGANA_PG_URL is not set: these tests need a Postgres server; run bash scripts/test-postgres.sh",
    )
}

fn admin() -> Client {
    Client::connect(&url(), NoTls)
        .unwrap_or_else(|e| panic!("the test server (DOGANA_PG_URL) is unreachable: {e}"))
}

/// The URL's parts: (user, password, host:port/db).
fn parts(url: &str) -> (String, String, String) {
    let rest = url.strip_prefix("postgres://").expect("a postgres:// URL");
    let (userinfo, server) = rest.split_once('@').expect("user info");
    let (user, password) = userinfo
        .split_once(':')
        .expect("a password in DOGANA_PG_URL");
    (user.into(), password.into(), server.into())
}

/// A new empty schema for one test, and the store URL naming it.
fn schema(name: &str) -> (String, String) {
    let schema = format!("cli_{name}_{}", std::process::id());
    admin()
        .batch_execute(&format!(
            "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
        ))
        .expect("a schema");
    (schema.clone(), format!("{}?schema={schema}", url()))
}

/// How many tables the schema holds.
fn tables_in(schema: &str) -> i64 {
    admin()
        .query_one(
            "SELECT count(*) FROM pg_tables WHERE schemaname = $1",
            &[&schema],
        )
        .unwrap()
        .get(0)
}

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

/// Everything the receiver commands print for one store, the store (as given and as shown)
/// replaced by STORE.
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
    let shown = dogana_stores::Spec::parse(store).to_string();
    out.replace(store, "STORE").replace(&shown, "STORE")
}

#[test]
fn every_command_prints_the_same_on_sqlite_and_postgres() {
    // rule: LOADER-01, LOADER-04, RECV-11, RECV-12
    let work = Work::new();
    manifests(&work);
    let (_, store) = schema("same");
    let sqlite = session(&work, "orders.db");
    let postgres = session(&work, &store);
    assert_eq!(sqlite, postgres);
    assert!(postgres.contains("accepted orders/full"), "{postgres}");
    assert!(postgres.contains("rejected orders/changes"), "{postgres}");
}

/// A group of two tables (invoices and lines, read at one instant) delivered, replayed, then
/// delivered over by a group holding one of them; everything printed, the store replaced by
/// STORE.
fn group_session(work: &Work, store: &str) -> String {
    let mut out = String::new();
    let mut run = |args: &[&str], code: i32| {
        let a = work.dogana(args).assert().code(code);
        let o = a.get_output();
        out.push_str(&format!("$ {}\n", args.join(" ")));
        out.push_str(&text(&o.stdout));
        out.push_str(&text(&o.stderr));
    };
    let deliver = ["deliver", "--group", "shop.toml", "inv.csv", "lin.csv"];
    for _ in 0..2 {
        let mut args = deliver.to_vec();
        args.extend(["--store", store, "--at", "2026-10-27T11:00:00Z"]);
        run(&args, 0);
    }
    // a table belongs to one group
    run(
        &[
            "deliver",
            "--group",
            "other.toml",
            "inv.csv",
            "--store",
            store,
            "--at",
            "2026-10-27T11:00:00Z",
        ],
        1,
    );
    for t in ["invoices", "lines"] {
        run(&["receipts", "--store", store, t], 0);
        run(&["ledger", "--store", store, t], 0);
    }
    run(
        &[
            "claims",
            "--store",
            store,
            "invoices",
            "lines",
            "--at",
            "2026-10-27T11:00:00Z",
        ],
        0,
    );
    run(&["verify", "--store", store], 0);
    let shown = dogana_stores::Spec::parse(store).to_string();
    out.replace(store, "STORE").replace(&shown, "STORE")
}

#[test]
fn a_group_prints_the_same_on_sqlite_and_postgres() {
    // rule: GROUP-10, GROUP-16, GROUP-17, GROUP-23
    let work = Work::new();
    for t in ["invoices", "lines"] {
        work.write(
            &format!("{t}.toml"),
            &format!(
                "table = \"{t}\"\nkey = [\"id\"]\n[types]\nid = \"int\"\n[shapes.full]\nkind = \"full\"\n"
            ),
        );
    }
    work.write(
        "shop.toml",
        "contracts = [\"invoices.toml\", \"lines.toml\"]\n",
    );
    work.write("other.toml", "contracts = [\"invoices.toml\"]\n");
    for (file, contract, ids) in [
        ("inv.csv", "invoices.toml", &[1, 2][..]),
        ("lin.csv", "lines.toml", &[10, 11, 12][..]),
    ] {
        let mut rows = String::from("id,amount\n");
        for id in ids {
            rows.push_str(&format!("{id},1.00\n"));
        }
        work.write(file, &rows);
        let n = ids.len().to_string();
        work.dogana([
            "manifest",
            file,
            "--contract",
            contract,
            "--shape",
            "full",
            "--produced-at",
            "2026-10-27T10:00:00Z",
            "--rows",
            &n,
            "--force",
        ])
        .assert()
        .success();
    }
    let (schema_name, store) = schema("group");
    let sqlite = group_session(&work, "shop.db");
    let postgres = group_session(&work, &store);
    assert_eq!(sqlite, postgres);
    assert_eq!(postgres.matches(": accepted ").count(), 2, "{postgres}");
    assert_eq!(postgres.matches(": replayed ").count(), 2, "{postgres}");
    assert!(
        postgres.contains("invoices + lines: complete"),
        "{postgres}"
    );
    let groups: Vec<(String, String)> = admin()
        .query(
            &format!(
                "SELECT table_name, group_id FROM {}.dogana_groups ORDER BY 1",
                dogana_receiver::sql::quote_ident(&schema_name)
            ),
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let pair = |t: &str| (t.to_owned(), "invoices".to_owned());
    assert_eq!(groups, [pair("invoices"), pair("lines")]);
}

#[test]
fn a_password_never_appears_in_any_output_nor_receipt() {
    let work = Work::new();
    manifests(&work);
    let (schema, store) = schema("secret");
    let (_, password, _) = parts(&store);
    let mut seen = String::new();
    for (args, code) in [
        (
            vec![
                "deliver",
                "sun.csv",
                "--store",
                &store,
                "--contract",
                "orders.toml",
                "--at",
                "2026-10-25T07:00:00Z",
            ],
            0,
        ),
        (
            vec![
                "deliver",
                "bad.csv",
                "--store",
                &store,
                "--contract",
                "orders.toml",
                "--at",
                "2026-10-27T07:00:00Z",
            ],
            1,
        ),
        (
            vec![
                "deliver",
                "sun.csv",
                "--store",
                &store,
                "--contract",
                "orders.toml",
                "--json",
                "--at",
                "2026-10-25T07:00:00Z",
            ],
            0,
        ),
        (vec!["receipts", "--store", &store, "orders", "--json"], 0),
        (vec!["verify", "--store", &store], 0),
        (vec!["claims", "--store", &store, "orders"], 0),
        (vec!["receipts", "--store", &store, "nosuchtable"], 1),
    ] {
        let o = work.dogana(&args).assert().code(code).get_output().clone();
        seen.push_str(&text(&o.stdout));
        seen.push_str(&text(&o.stderr));
    }
    assert!(seen.contains("postgres://"), "the store is named: {seen}");
    assert!(
        !seen.contains(&password),
        "the password was printed: {seen}"
    );
    let documents: Vec<String> = admin()
        .query(
            &format!("SELECT document FROM {schema}.dogana_receipts UNION ALL SELECT document FROM {schema}.dogana_ledgers"),
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert!(documents.len() >= 3);
    assert!(documents.iter().all(|d| !d.contains(&password)));
}

#[test]
fn the_libpq_environment_and_pgpass_fill_what_the_url_leaves_out() {
    let work = Work::new();
    manifests(&work);
    let (schema, _) = schema("env");
    let (user, password, server) = parts(&url());
    let (hostport, db) = server.split_once('/').unwrap();
    let (host, port) = hostport.rsplit_once(':').unwrap();
    // the password from PGPASSWORD
    let bare = format!("postgres://{user}@{hostport}/{db}?schema={schema}");
    work.dogana([
        "deliver",
        "sun.csv",
        "--store",
        &bare,
        "--contract",
        "orders.toml",
    ])
    .env("PGPASSWORD", &password)
    .assert()
    .success();
    // everything from PG* and the password from a pgpass file
    let pgpass = work.write("pgpass", &format!("{host}:{port}:{db}:{user}:{password}\n"));
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let empty = format!("postgres://?schema={schema}");
    let out = work
        .dogana(["verify", "--store", &empty])
        .env_remove("PGPASSWORD")
        .env("PGHOST", host)
        .env("PGPORT", port)
        .env("PGUSER", &user)
        .env("PGDATABASE", db)
        .env("PGPASSFILE", &pgpass)
        .assert()
        .success()
        .get_output()
        .clone();
    assert!(
        text(&out.stdout).contains("orders"),
        "{}",
        text(&out.stdout)
    );
    // no password anywhere: the server asks for one, and the line says where to put it
    let line = {
        let o = work
            .dogana(["verify", "--store", &bare])
            .env_remove("PGPASSWORD")
            .env("PGPASSFILE", work.path("none"))
            .assert()
            .code(1)
            .get_output()
            .clone();
        text(&o.stderr)
    };
    assert!(line.contains("PGPASSWORD or ~/.pgpass"), "{line}");
}

#[test]
fn connection_errors_are_one_line_naming_what_to_fix_and_change_nothing() {
    let work = Work::new();
    manifests(&work);
    let (user, password, server) = parts(&url());
    let (hostport, db) = server.split_once('/').unwrap();
    let deliver = |store: &str| {
        refused(
            &work,
            [
                "deliver",
                "sun.csv",
                "--store",
                store,
                "--contract",
                "orders.toml",
            ],
        )
    };
    // a wrong password
    let (schema_a, _) = schema("wrongpw");
    let wrong = format!("postgres://{user}:not-{password}@{hostport}/{db}?schema={schema_a}");
    let line = deliver(&wrong);
    assert!(line.contains("correct the user or the password"), "{line}");
    assert!(!line.contains(&password), "{line}");
    assert_eq!(tables_in(&schema_a), 0, "nothing was created");
    // an unreachable server: a port nobody listens on
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    // (transient: exit 3, retrying once the server is up can succeed)
    let (code, line) = common::transient(
        &work,
        [
            "deliver",
            "sun.csv",
            "--store",
            &format!("postgres://{user}:{password}@127.0.0.1:{port}/{db}"),
            "--contract",
            "orders.toml",
        ],
    );
    assert_eq!(code, dogana_codes::CONNECTION_LOST);
    assert!(
        line.contains("cannot reach the Postgres server at 127.0.0.1"),
        "{line}"
    );
    assert!(line.contains("start it"), "{line}");
    assert!(!line.contains(&password), "{line}");
    // a missing schema
    let missing = format!("{}?schema=no_such_schema_{}", url(), std::process::id());
    let line = deliver(&missing);
    assert!(
        line.contains("does not exist") && line.contains("CREATE SCHEMA"),
        "{line}"
    );
    let n: i64 = admin()
        .query_one(
            "SELECT count(*) FROM pg_namespace WHERE nspname = $1",
            &[&format!("no_such_schema_{}", std::process::id())],
        )
        .unwrap()
        .get(0);
    assert_eq!(n, 0, "no schema was created");
    // a role without privileges on the schema
    let (schema_b, _) = schema("nopriv");
    let role = format!("dogana_np_{}", std::process::id());
    admin()
        .batch_execute(&format!(
            "DROP ROLE IF EXISTS {role}; CREATE ROLE {role} LOGIN PASSWORD 'np-secret'"
        ))
        .unwrap();
    let np = format!("postgres://{role}:np-secret@{hostport}/{db}?schema={schema_b}");
    let line = deliver(&np);
    assert!(line.contains("GRANT USAGE, CREATE ON SCHEMA"), "{line}");
    assert!(!line.contains("np-secret"), "{line}");
    assert_eq!(tables_in(&schema_b), 0, "nothing was created");
    admin()
        .batch_execute(&format!("GRANT USAGE ON SCHEMA {schema_b} TO {role}"))
        .unwrap();
    let line = deliver(&np);
    assert!(line.contains("GRANT CREATE ON SCHEMA"), "{line}");
    assert_eq!(tables_in(&schema_b), 0, "nothing was created");
}

#[test]
fn a_reader_refuses_a_schema_without_dogana_tables_and_changes_nothing() {
    // rule: RECV-13
    let work = Work::new();
    let (schema, store) = schema("reader");
    admin()
        .batch_execute(&format!(
            "CREATE TABLE {schema}.orders (id BIGINT); INSERT INTO {schema}.orders VALUES (1)"
        ))
        .unwrap();
    for args in [
        &["verify", "--store", &store][..],
        &["receipts", "--store", &store, "orders"][..],
        &["claims", "--store", &store, "orders"][..],
    ] {
        let line = refused(&work, args);
        assert!(line.contains("not a dogana store"), "{args:?}: {line}");
        assert!(line.contains("has no dogana tables"), "{args:?}: {line}");
    }
    assert_eq!(tables_in(&schema), 1, "a reader created nothing");
}

/// Readers never need write access (issue 37): a role that may only connect, use the schema
/// and select from it answers every reader command, and the schema is unchanged.
#[test]
fn readers_work_with_a_role_that_may_only_select() {
    // rule: RECV-11, RECV-12
    let work = Work::new();
    manifests(&work);
    let (schema, store) = schema("readonly_role");
    work.dogana([
        "deliver",
        "sun.csv",
        "--store",
        &store,
        "--contract",
        "orders.toml",
        "--at",
        "2026-10-25T07:00:00Z",
    ])
    .assert()
    .success();
    let role = format!("dogana_reader_{}", std::process::id());
    let (_, _, server) = parts(&url());
    let db = server.split('/').nth(1).unwrap_or("postgres").to_owned();
    admin()
        .batch_execute(&format!(
            "DROP ROLE IF EXISTS {role};
             CREATE ROLE {role} LOGIN PASSWORD 'reader';
             GRANT CONNECT ON DATABASE \"{db}\" TO {role};
             GRANT USAGE ON SCHEMA {schema} TO {role};
             GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {role};"
        ))
        .expect("a reader role");
    let reader = format!("postgres://{role}:reader@{server}?schema={schema}");
    let count = || tables_in(&schema);
    let before = count();
    let snapshot = || -> Vec<String> {
        admin()
            .query(
                &format!(
                    "SELECT seq::text || ':' || outcome FROM {schema}.dogana_receipts ORDER BY seq"
                ),
                &[],
            )
            .map(|rows| rows.iter().map(|r| r.get(0)).collect())
            .unwrap_or_default()
    };
    let receipts = snapshot();
    for args in [
        &[
            "claims",
            "--store",
            &reader,
            "orders",
            "--at",
            "2026-10-26T00:00:00Z",
        ][..],
        &["receipts", "--store", &reader, "orders"][..],
        &["verify", "--store", &reader][..],
        &["ledger", "--store", &reader, "orders"][..],
        &[
            "plan",
            "--store",
            &reader,
            "orders",
            "--at",
            "2026-10-26T00:00:00Z",
        ][..],
        &[
            "next",
            "--store",
            &reader,
            "orders",
            "--shape",
            "changes",
            "--until",
            "2026-10-26T00:00:00Z",
        ][..],
        &[
            "show",
            "--store",
            &reader,
            "orders",
            "--at",
            "2026-10-26T00:00:00Z",
            "-o",
            "page.html",
        ][..],
    ] {
        let out = work.dogana(args).output().unwrap();
        assert!(
            out.status.success(),
            "dogana {}: {}",
            args[0],
            text(&out.stderr)
        );
    }
    assert_eq!(count(), before, "no table added");
    assert_eq!(snapshot(), receipts, "receipts unchanged");
    admin()
        .batch_execute(&format!(
            "REVOKE ALL ON ALL TABLES IN SCHEMA {schema} FROM {role};
             REVOKE ALL ON SCHEMA {schema} FROM {role};
             REVOKE ALL ON DATABASE \"{db}\" FROM {role};
             DROP ROLE {role};"
        ))
        .expect("the role dropped");
}

/// The orders columns' hash as Python's json.dumps and hashlib compute it (CONTRACT-16), as
/// `tests/columns_from.rs` has it from an ODCS document, a dbt manifest and Parquet.
const ORDERS_HASH: &str = "eb708413c74df7e2a6fa44c9ca9aaffcfe17dcb9c4052965ff1264a2602174e7";

#[test]
fn a_live_postgres_table_hashes_as_its_odcs_document() {
    // rule: CONTRACT-16, CONTRACT-19
    let work = Work::new();
    let (schema, store) = schema("columns");
    admin()
        .batch_execute(&format!(
            "CREATE TABLE {schema}.orders (id BIGINT NOT NULL, order_date DATE,
             updated_at TIMESTAMP(3) WITH TIME ZONE, amount NUMERIC(12, 2),
             customer CHARACTER VARYING(40), dropped INT);
             ALTER TABLE {schema}.orders DROP COLUMN dropped;
             CREATE TABLE {schema}.odd (id UUID)"
        ))
        .unwrap();
    let odcs = format!(
        "{}/../dogana-columns/tests/data/orders.odcs.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let hash = |args: &[&str]| {
        let out = work
            .dogana(["contract"].iter().chain(args))
            .assert()
            .success();
        let stdout = text(&out.get_output().stdout);
        stdout
            .lines()
            .find_map(|l| l.strip_prefix("schema_hash "))
            .unwrap_or_else(|| panic!("{stdout}"))
            .to_owned()
    };
    assert_eq!(hash(&["--from-table", &store, "orders"]), ORDERS_HASH);
    assert_eq!(hash(&["--odcs", &odcs, "--schema", "orders"]), ORDERS_HASH);
    // a TOML contract naming the live table
    work.write(
        "c.toml",
        &format!("table = \"orders\"\nkey = [\"id\"]\ncolumns_from = {{ store = \"{store}\", table = \"orders\" }}\n\n[types]\nid = \"int\"\n\n[shapes.full]\nkind = \"full\"\n"),
    );
    let out = work
        .dogana(["contract", "c.toml", "-o", "c.json"])
        .assert()
        .success();
    assert!(text(&out.get_output().stdout).contains(ORDERS_HASH));
    // refusals name what to fix, and the password never shows
    let (code, line) = common::refused_code(&work, ["contract", "--from-table", &store, "nope"]);
    assert_eq!(code, dogana_codes::TABLE_NOT_FOUND, "{line}");
    assert!(line.contains("has no table \"nope\""), "{line}");
    let (code, line) = common::refused_code(&work, ["contract", "--from-table", &store, "odd"]);
    assert_eq!(code, dogana_codes::COLUMN_TYPE_UNMAPPED, "{line}");
    assert!(
        line.contains("column \"id\" of type \"uuid\": it has no dogana name"),
        "{line}"
    );
    let (_, password, _) = parts(&url());
    assert!(!line.contains(&password), "{line}");
    assert_eq!(tables_in(&schema), 2, "a reader created nothing");

    // a table dogana published reads back the columns its contract hashed
    let (_, store) = self::schema("published");
    std::fs::copy(&odcs, work.path("orders.odcs.yaml")).unwrap();
    work.write(
        "o.toml",
        "table = \"orders\"\nkey = [\"id\"]\ncolumns_from = { odcs = \"orders.odcs.yaml\", schema = \"orders\" }\n\n[shapes.full]\nkind = \"full\"\n",
    );
    work.write(
        "o.csv",
        "id,order_date,updated_at,amount,customer\n1,2026-10-20,2026-10-20T10:00:00Z,10.00,acme\n",
    );
    work.dogana([
        "manifest",
        "o.csv",
        "--contract",
        "o.toml",
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
        "o.csv",
        "--store",
        &store,
        "--contract",
        "o.toml",
    ])
    .assert()
    .success();
    assert_eq!(hash(&["--from-table", &store, "orders"]), ORDERS_HASH);
}
