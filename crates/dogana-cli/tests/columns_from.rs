//! A contract's columns from where they are defined (docs/contract-toml.md, "Columns from where
//! they are defined"): one orders table described four ways — an ODCS document, the dbt example
//! project's manifest, a live table, a Parquet file — hashes alike through `dogana contract`
//! and through a TOML contract's `columns_from`; every refusal names what to fix and writes
//! nothing.

mod common;

use std::path::PathBuf;
#[cfg(feature = "parquet")]
use std::sync::Arc;

use common::{refused_code, text, Work};
use dogana_codes as codes;

/// The test documents of dogana-columns: orders.odcs.yaml / .json, dbt-manifest-excerpt.json.
fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../dogana-columns/tests/data")
        .join(name)
}

/// The orders columns' hash as Python's json.dumps and hashlib compute it (CONTRACT-16).
const ORDERS_HASH: &str = "eb708413c74df7e2a6fa44c9ca9aaffcfe17dcb9c4052965ff1264a2602174e7";
const ORDERS_COLUMNS: &str =
    "hashed columns: id int, order_date date, updated_at datetime, amount decimal(12,2), customer str";

/// The orders table as a database declares it.
const ORDERS_DDL: &str = "CREATE TABLE orders (id BIGINT NOT NULL, order_date DATE, updated_at TIMESTAMP WITH TIME ZONE, amount NUMERIC(12, 2), customer VARCHAR(40))";

/// `dogana contract ARGS`: its schema_hash line's hash, after checking the hashed columns.
fn hash_of(work: &Work, args: &[&str]) -> String {
    let out = work
        .dogana(["contract"].iter().chain(args))
        .assert()
        .success();
    let stdout = text(&out.get_output().stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert!(lines[0].starts_with("columns from "), "{stdout}");
    assert_eq!(lines[1], ORDERS_COLUMNS, "{stdout}");
    lines[2]
        .strip_prefix("schema_hash ")
        .unwrap_or_else(|| panic!("{stdout}"))
        .to_owned()
}

fn sqlite_table(work: &Work, ddl: &str) -> String {
    let path = work.path("warehouse.db");
    let conn = dogana_sqlite::rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(ddl).unwrap();
    path.to_string_lossy().into_owned()
}

/// A Parquet file of the orders table's schema (no rows), written with the parquet crate.
#[cfg(feature = "parquet")]
fn orders_parquet(work: &Work, name: &str, fields: Vec<arrow_schema::Field>) -> String {
    use arrow_array::RecordBatch;
    use arrow_schema::Schema;
    let schema = Arc::new(Schema::new(fields));
    let path = work.path(name);
    let file = std::fs::File::create(&path).unwrap();
    let mut writer = parquet::arrow::ArrowWriter::try_new(file, schema.clone(), None).unwrap();
    writer.write(&RecordBatch::new_empty(schema)).unwrap();
    writer.close().unwrap();
    path.to_string_lossy().into_owned()
}

#[cfg(feature = "parquet")]
fn orders_fields() -> Vec<arrow_schema::Field> {
    use arrow_schema::{DataType, Field, TimeUnit};
    vec![
        Field::new("id", DataType::Int64, false),
        Field::new("order_date", DataType::Date32, true),
        Field::new(
            "updated_at",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            true,
        ),
        Field::new("amount", DataType::Decimal128(12, 2), true),
        Field::new("customer", DataType::Utf8, true),
    ]
}

#[test]
fn one_table_four_ways_hashes_alike() {
    // rule: CONTRACT-16, CONTRACT-19
    let work = Work::new();
    let odcs = data("orders.odcs.yaml");
    let odcs_json = data("orders.odcs.json");
    let dbt = data("dbt-manifest-excerpt.json");
    let db = sqlite_table(&work, ORDERS_DDL);
    // more ways in the builds with DuckDB and Parquet
    #[allow(unused_mut)]
    let mut hashes = vec![
        (
            "odcs yaml",
            hash_of(
                &work,
                &["--odcs", odcs.to_str().unwrap(), "--schema", "orders"],
            ),
        ),
        (
            "odcs json",
            hash_of(
                &work,
                &["--odcs", odcs_json.to_str().unwrap(), "--schema", "orders"],
            ),
        ),
        (
            "dbt",
            hash_of(
                &work,
                &[
                    "--dbt-manifest",
                    dbt.to_str().unwrap(),
                    "--model",
                    "orders_export",
                ],
            ),
        ),
        (
            "sqlite table",
            hash_of(&work, &["--from-table", &db, "orders"]),
        ),
    ];
    #[cfg(feature = "duckdb")]
    {
        let path = work.path("warehouse.duckdb");
        let conn = dogana_duckdb::duckdb::Connection::open(&path).unwrap();
        conn.execute_batch(ORDERS_DDL).unwrap();
        drop(conn);
        let spec = path.to_string_lossy().into_owned();
        hashes.push((
            "duckdb table",
            hash_of(&work, &["--from-table", &spec, "orders"]),
        ));
    }
    #[cfg(feature = "parquet")]
    {
        let file = orders_parquet(&work, "orders.parquet", orders_fields());
        hashes.push(("parquet", hash_of(&work, &["--from-parquet", &file])));
    }
    for (way, hash) in &hashes {
        assert_eq!(hash, ORDERS_HASH, "{way}");
    }
    // every backend this build has, and Parquet when it has it, took part
    let ways = 4 + usize::from(cfg!(feature = "duckdb")) + usize::from(cfg!(feature = "parquet"));
    assert_eq!(hashes.len(), ways);
}

#[test]
fn columns_from_in_the_toml_contract_gives_the_same_schema_hash() {
    // rule: CONTRACT-16, CONTRACT-18
    let work = Work::new();
    std::fs::copy(data("orders.odcs.yaml"), work.path("orders.odcs.yaml")).unwrap();
    std::fs::copy(
        data("dbt-manifest-excerpt.json"),
        work.path("manifest.json"),
    )
    .unwrap();
    sqlite_table(&work, ORDERS_DDL);
    let contract = |from: &str| {
        format!(
            "table = \"orders\"\nkey = [\"id\"]\ndeleted_column = \"deleted\"\ncolumns_from = {from}\n\n[types]\nid = \"int\"\ndeleted = \"bool\"\n\n[shapes.full]\nkind = \"full\"\n\n[shapes.changes]\nkind = \"changes\"\ndeletions = \"tombstone\"\n"
        )
    };
    std::fs::create_dir(work.path("contracts")).unwrap();
    let forms = [
        "{ odcs = \"../orders.odcs.yaml\", schema = \"orders\" }",
        "{ dbt_manifest = \"../manifest.json\", model = \"orders_export\" }",
        "{ store = \"../warehouse.db\", table = \"orders\" }",
    ];
    for (i, from) in forms.iter().enumerate() {
        // paths relative to the contract file, whatever the working directory
        let name = format!("contracts/c{i}.toml");
        work.write(&name, &contract(from));
        let out_name = format!("c{i}.json");
        let out = work
            .dogana(["contract", &name, "-o", &out_name])
            .assert()
            .success();
        let stdout = text(&out.get_output().stdout);
        assert!(
            stdout.contains(&format!("schema_hash {ORDERS_HASH}\n")),
            "{from}: {stdout}"
        );
        assert!(stdout.contains(ORDERS_COLUMNS), "{from}: {stdout}");
        assert!(work.read(&out_name).contains(ORDERS_HASH), "{from}");
    }
    // the command line's source in place of columns_from
    work.write(
        "plain.toml",
        "table = \"orders\"\nkey = [\"id\"]\n\n[types]\nid = \"int\"\n\n[shapes.full]\nkind = \"full\"\n",
    );
    let out = work
        .dogana([
            "contract",
            "plain.toml",
            "--odcs",
            "orders.odcs.yaml",
            "--schema",
            "orders",
            "-o",
            "p.json",
        ])
        .assert()
        .success();
    assert!(text(&out.get_output().stdout).contains(ORDERS_HASH));
}

#[test]
fn the_deleted_column_a_source_lists_is_left_out() {
    // rule: CONTRACT-18
    let work = Work::new();
    let db = sqlite_table(
        &work,
        "CREATE TABLE orders (id BIGINT, order_date DATE, updated_at TIMESTAMP WITH TIME ZONE, amount NUMERIC(12, 2), customer VARCHAR(40), deleted BOOLEAN)",
    );
    let with_deleted = hash_of_all(&work, &["--from-table", &db, "orders"]);
    assert_ne!(with_deleted, ORDERS_HASH);
    work.write(
        "c.toml",
        &format!("table = \"orders\"\nkey = [\"id\"]\ndeleted_column = \"deleted\"\ncolumns_from = {{ store = \"{db}\", table = \"orders\" }}\n\n[types]\nid = \"int\"\n\n[shapes.changes]\nkind = \"changes\"\ndeletions = \"tombstone\"\n"),
    );
    let out = work
        .dogana(["contract", "c.toml", "-o", "c.json"])
        .assert()
        .success();
    assert!(text(&out.get_output().stdout).contains(&format!("schema_hash {ORDERS_HASH}")));
}

/// The schema_hash line of `dogana contract ARGS`, whatever the columns.
fn hash_of_all(work: &Work, args: &[&str]) -> String {
    let out = work
        .dogana(["contract"].iter().chain(args))
        .assert()
        .success();
    let stdout = text(&out.get_output().stdout);
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("schema_hash "))
        .unwrap()
        .to_owned()
}

#[test]
fn bad_sources_are_refused_naming_what_to_fix_and_nothing_is_written() {
    // rule: CONTRACT-19
    let work = Work::new();
    let odcs = data("orders.odcs.yaml");
    let odcs = odcs.to_str().unwrap();
    let dbt = data("dbt-manifest-excerpt.json");
    let dbt = dbt.to_str().unwrap();
    work.write("broken.yaml", "apiVersion: v3.0.2\nschema: [\n");
    let db = sqlite_table(
        &work,
        "CREATE TABLE odd (id BIGINT, at TIME, blob_col BLOB)",
    );
    work.write("plain.toml", "table = \"orders\"\nkey = [\"id\"]\n\n[types]\nid = \"int\"\n\n[shapes.full]\nkind = \"full\"\n");
    let cases: Vec<(Vec<&str>, dogana_codes::Code, &str)> = vec![
        (
            vec!["--odcs", "broken.yaml", "--schema", "orders"],
            codes::DATA_CONTRACT_INVALID,
            "ODCS document broken.yaml does not parse as YAML",
        ),
        (
            vec!["--odcs", "missing.yaml", "--schema", "orders"],
            codes::FILE_UNREADABLE,
            "cannot read the ODCS document missing.yaml",
        ),
        (
            vec!["--odcs", odcs, "--schema", "invoices"],
            codes::DATA_CONTRACT_INVALID,
            "has no schema object \"invoices\"; it has \"orders\", \"customers\"",
        ),
        (
            vec!["--odcs", odcs, "--schema", "customers"],
            codes::COLUMN_TYPE_UNMAPPED,
            "property \"address\": logicalType \"object\" has no dogana name",
        ),
        (
            vec!["--dbt-manifest", dbt, "--model", "nope"],
            codes::DATA_CONTRACT_INVALID,
            "has no model \"nope\"; its models are \"orders_export\", \"table_dates\"",
        ),
        (
            vec!["--dbt-manifest", dbt, "--model", "table_dates"],
            codes::COLUMN_TYPE_UNMAPPED,
            "column \"table_name\" has no data_type",
        ),
        (
            vec!["--from-table", &db, "nope"],
            codes::TABLE_NOT_FOUND,
            "has no table \"nope\"; name a table or view it holds",
        ),
        (
            vec!["--from-table", &db, "odd"],
            codes::COLUMN_TYPE_UNMAPPED,
            "column \"at\" of type \"TIME\": it has no dogana name",
        ),
        (
            vec!["--from-table", "absent.db", "orders"],
            codes::FILE_UNREADABLE,
            "the database absent.db does not exist",
        ),
    ];
    for (args, code, says) in cases {
        let before = work.names();
        let mut all = vec!["contract"];
        all.extend(args.iter().copied());
        let (got, line) = refused_code(&work, &all);
        assert_eq!(got, code, "{args:?}: {line}");
        assert!(line.contains(says), "{args:?}: {line}");
        // through a TOML contract's -o, the output is not written either
        let mut with_toml = vec!["contract", "plain.toml", "-o", "out.json"];
        with_toml.extend(args.iter().copied());
        let (got, _) = refused_code(&work, &with_toml);
        assert_eq!(got, code, "{args:?}");
        assert_eq!(work.names(), before, "{args:?}: nothing written");
    }
    // with --json, the column at fault and its type are the error's field and value
    let out = work
        .dogana([
            "contract",
            "--odcs",
            odcs,
            "--schema",
            "customers",
            "--json",
        ])
        .assert()
        .code(1);
    let err: serde_json::Value = serde_json::from_slice(&out.get_output().stderr).unwrap();
    assert_eq!(err["error"]["code"], codes::COLUMN_TYPE_UNMAPPED.id);
    assert_eq!(err["error"]["field"], "address");
    assert_eq!(err["error"]["value"], "object");
    // -o without a contract to write
    let (code, line) = refused_code(
        &work,
        [
            "contract", "--odcs", odcs, "--schema", "orders", "-o", "x.json",
        ],
    );
    assert_eq!(code, codes::OPTION_INVALID);
    assert!(
        line.contains("-o x.json writes a contract, and no contract is named"),
        "{line}"
    );
    assert!(!work.exists("x.json"));
    // columns and columns_from together, or an unknown form
    work.write("both.toml", "table = \"t\"\nkey = []\ncolumns = [[\"a\", \"int\"]]\ncolumns_from = { parquet = \"x.parquet\" }\n[shapes.full]\nkind = \"full\"\n");
    let (code, line) = refused_code(&work, ["contract", "both.toml"]);
    assert_eq!(code, codes::CONTRACT_INVALID);
    assert!(
        line.contains("columns and columns_from both give the columns; keep one"),
        "{line}"
    );
    work.write("odd.toml", "table = \"t\"\nkey = []\ncolumns_from = { csv = \"x.csv\" }\n[shapes.full]\nkind = \"full\"\n");
    let (code, line) = refused_code(&work, ["contract", "odd.toml"]);
    assert_eq!(code, codes::CONTRACT_INVALID);
    assert!(
        line.contains("columns_from has the keys csv; it is one of"),
        "{line}"
    );
}

#[test]
#[cfg(feature = "parquet")]
fn parquet_types_without_a_dogana_name_are_refused() {
    // rule: CONTRACT-19, CHECK-17
    use arrow_schema::{DataType, Field, TimeUnit};
    let work = Work::new();
    let naive = orders_parquet(
        &work,
        "naive.parquet",
        vec![Field::new(
            "at",
            DataType::Timestamp(TimeUnit::Microsecond, None),
            true,
        )],
    );
    let (code, line) = refused_code(&work, ["contract", "--from-parquet", &naive]);
    assert_eq!(code, codes::COLUMN_TYPE_UNMAPPED);
    assert!(line.contains("column \"at\" of type \"Timestamp(µs)\": a timestamp without a time zone has no dogana name"), "{line}");
    let nested = orders_parquet(
        &work,
        "nested.parquet",
        vec![Field::new(
            "tags",
            DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
            true,
        )],
    );
    let (code, line) = refused_code(&work, ["contract", "--from-parquet", &nested]);
    assert_eq!(code, codes::COLUMN_TYPE_UNMAPPED);
    assert!(line.contains("column \"tags\""), "{line}");
    work.write("not.parquet", "id,amount\n");
    let (code, line) = refused_code(&work, ["contract", "--from-parquet", "not.parquet"]);
    assert_eq!(code, codes::DATA_CONTRACT_INVALID);
    assert!(line.contains("not.parquet: not a Parquet file"), "{line}");
}

/// A store with the orders table delivered under a contract whose columns come from the ODCS
/// document; `store` is its spec.
#[cfg(feature = "duckdb")]
fn deliver_orders(work: &Work, store: &str) {
    std::fs::copy(data("orders.odcs.yaml"), work.path("orders.odcs.yaml")).unwrap();
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
    work.dogana(["deliver", "o.csv", "--store", store, "--contract", "o.toml"])
        .assert()
        .success();
}

#[test]
#[cfg(feature = "duckdb")]
fn a_table_dogana_published_in_duckdb_reads_back_its_contract_s_columns() {
    // rule: CONTRACT-16, CONTRACT-19
    let work = Work::new();
    deliver_orders(&work, "w.duckdb");
    assert_eq!(
        hash_of(&work, &["--from-table", "w.duckdb", "orders"]),
        ORDERS_HASH
    );
}
