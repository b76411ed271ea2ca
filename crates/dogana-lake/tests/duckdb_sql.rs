//! The SQL `dogana_lake::sql::current_snapshot_sql` prints, run in DuckDB (the `duckdb`
//! Python package: `DOGANA_LAKE_PYTHON=/path/to/python`, as scripts/test-lake.sh sets it),
//! reads the published rows and regions the store itself reads.

use std::io::Write as _;
use std::process::{Command, Stdio};

use dogana_lake::Lake;
use dogana_receiver::conformance::Fixture;
use dogana_receiver::Store;

#[test]
#[ignore = "needs DuckDB's Python package: scripts/test-lake.sh runs it"]
fn duckdb_reads_the_current_snapshot_the_store_reads() {
    let python =
        std::env::var("DOGANA_LAKE_PYTHON").expect("DOGANA_LAKE_PYTHON names a python with duckdb");
    let mut fx = Fixture::<Store<Lake>>::new("lake-sql");
    let full = [
        (1, "2026-10-01", "2026-10-01T10:00:00Z", "10.00", false),
        (2, "2026-10-02", "2026-10-01T11:00:00Z", "20.00", false),
        (3, "2026-10-03", "2026-10-01T12:00:00Z", "30.00", false),
    ];
    let job = fx.full("f.csv", "2026-10-10T06:00:00Z", &full);
    assert!(fx.deliver(&job).receipt.accepted());
    let w = [(4, "2026-10-05", "2026-10-05T10:00:00Z", "40.00", false)];
    let job = fx.window(
        "w.csv",
        "2026-10-11T06:00:00Z",
        "2026-10-05",
        "2026-10-05",
        &w,
    );
    assert!(fx.deliver(&job).receipt.accepted());
    let ch = [
        (2, "2026-10-02", "2026-10-11T07:00:00Z", "21.00", false),
        (3, "2026-10-03", "2026-10-11T08:00:00Z", "0", true),
    ];
    let job = fx.changes("c.csv", "2026-10-10T06:00:00Z", "2026-10-12T06:00:00Z", &ch);
    let d = fx.deliver(&job);
    assert!(
        d.receipt.accepted(),
        "{}",
        dogana_receiver::conformance::failures(&d.receipt)
    );

    let sql = dogana_lake::sql::current_snapshot_sql(fx.r.backend(), "orders")
        .unwrap()
        .expect("published");
    let script = "import duckdb, sys\ncon = duckdb.connect()\ncon.execute(sys.stdin.read())\n\
for r in con.execute('SELECT id, CAST(amount AS VARCHAR) FROM orders ORDER BY id').fetchall():\n    print('row', r[0], r[1])\n\
print('regions', con.execute('SELECT count(*) FROM \"orders__regions\"').fetchone()[0])\n";
    let mut child = Command::new(&python)
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs python");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(sql.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{sql}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let snap = fx.r.read_consistent_rows("orders").unwrap();
    let id = snap.columns.iter().position(|c| c == "id").unwrap();
    let amount = snap.columns.iter().position(|c| c == "amount").unwrap();
    let mut want: Vec<(i64, String)> = snap
        .rows
        .iter()
        .map(|r| {
            (
                r[id].render().unwrap().parse().unwrap(),
                r[amount].render().unwrap(),
            )
        })
        .collect();
    want.sort();
    let mut expected: String = want.iter().map(|(i, a)| format!("row {i} {a}\n")).collect();
    let regions = snap.ledger.unwrap().regions().len();
    expected.push_str(&format!("regions {regions}\n"));
    assert_eq!(stdout, expected);
    assert!(
        stdout.starts_with("row 1 10.00\nrow 2 21.00\nrow 4 40.00\n"),
        "{stdout}"
    );
}

#[test]
#[ignore = "needs DuckDB's Python package: scripts/test-lake.sh runs it"]
fn duckdb_reads_int64_and_float64_parts_of_a_promoted_column_as_double() {
    // rule: store.reconcile.lattice — Int64 with Float64 to Float64, read back by one scan of
    // the current snapshot with no per-column cast
    let python =
        std::env::var("DOGANA_LAKE_PYTHON").expect("DOGANA_LAKE_PYTHON names a python with duckdb");
    let mut fx = Fixture::<Store<Lake>>::new("lake-sql-promote");
    let mut job = fx.full(
        "f.csv",
        "2026-10-10T06:00:00Z",
        &[(1, "2026-10-01", "2026-10-01T10:00:00Z", "10", false)],
    );
    job.column_types = vec![("amount".into(), "int".into())];
    assert!(fx.deliver(&job).receipt.accepted());
    let mut job = fx.changes(
        "c.csv",
        "2026-10-10T06:00:00Z",
        "2026-10-11T06:00:00Z",
        &[(2, "2026-10-02", "2026-10-10T07:00:00Z", "2.5", false)],
    );
    job.column_types = vec![("amount".into(), "float".into())];
    assert!(fx.deliver(&job).receipt.accepted());
    let (cols, parts, _) = fx.r.backend().published("orders").unwrap().unwrap();
    assert_eq!(parts.len(), 2, "an Int64 part and a Float64 part");
    assert!(cols
        .iter()
        .any(|c| c.name == "amount" && c.ty.as_deref() == Some("float")));
    let sql = dogana_lake::sql::current_snapshot_sql(fx.r.backend(), "orders")
        .unwrap()
        .expect("published");
    assert!(
        !sql.contains("CAST(\"amount\""),
        "no per-column cast: {sql}"
    );
    let script = "import duckdb, sys\ncon = duckdb.connect()\ncon.execute(sys.stdin.read())\n\
print(con.execute(\"SELECT typeof(amount) FROM orders LIMIT 1\").fetchone()[0])\n\
for r in con.execute('SELECT id, amount FROM orders ORDER BY id').fetchall():\n    print('row', r[0], repr(r[1]))\n";
    let mut child = Command::new(&python)
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs python");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(sql.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{sql}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "DOUBLE\nrow 1 10.0\nrow 2 2.5\n"
    );
}
