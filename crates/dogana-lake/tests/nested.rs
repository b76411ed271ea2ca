//! Nested values through the engine (`store.reconcile.nested-landing`, `…nested-lattice`,
//! `…stored-type`), on `file://` and `memory://`: a table whose stored schema holds struct,
//! list and map columns (declared at the port: a dogana contract types none, CONTRACT-16)
//! takes NDJSON deliveries whose undeclared columns carry objects and arrays; they land as
//! Parquet Struct, List and Map columns and read back row by row; a struct that gains a field
//! reads it null from the parts written before, and a fold merges those parts; a value that
//! does not fit its stored type is refused naming table, path, stored and arriving type, with
//! nothing written; a variant column keeps each row's kind (`store.reconcile.variant`).

use arrow_schema::DataType;
use dogana::{Contract, Deletions, LogicalType, Shape};
use std::time::Duration;

use dogana_lake::objects::Root;
use dogana_lake::{Lake, LakeError, LakeOptions, MemoryLake};
use dogana_receiver::conformance::{ts, Fixture, Harness, Job};
use dogana_receiver::{Backend, Column, Datum, Layout, Open, Step, Store, StoreError, Txn};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

/// The lake under a harness.
trait Inner: Harness {
    fn lake(&mut self) -> &mut Lake;
}

impl Inner for Lake {
    fn lake(&mut self) -> &mut Lake {
        self
    }
}

impl Inner for MemoryLake {
    fn lake(&mut self) -> &mut Lake {
        &mut self.0
    }
}

const T: &str = "docs";

/// Key id, cursor updated_at; `full` and `changes` (upserts) shapes. `s`, `l`, `m` are not
/// in the contract: the deliveries carry them undeclared.
fn docs() -> Contract {
    Contract::builder(T, ["id"])
        .shape("full", Shape::full())
        .shape("changes", Shape::changes(Deletions::None))
        .cursor_column("updated_at")
        .column("id", LogicalType::Int)
        .column("updated_at", LogicalType::Datetime)
        .build()
        .unwrap()
}

fn col(name: &str, ty: &str) -> Column {
    Column {
        name: name.into(),
        ty: Some(ty.into()),
        key: false,
    }
}

/// Declares the nested columns at the port: a table created with them and dropped in one
/// publication, so the stored schema records their types and no table is published.
fn declare<B: Inner>(fx: &mut Fixture<Store<B>>, s: &str) {
    let b = fx.r.backend_mut();
    b.begin(Txn::Write, &[T]).unwrap();
    b.execute(
        T,
        Step::Create(&[
            col("s", s),
            col("l", "list<float>"),
            col("m", "map<str,int>"),
        ]),
    )
    .unwrap();
    b.execute(T, Step::Drop).unwrap();
    b.commit().unwrap();
}

/// Retypes the published struct column `s` at the port (an insert of no rows whose staged
/// column is declared `ty`): the struct gains the fields `ty` adds.
fn retype<B: Inner>(fx: &mut Fixture<Store<B>>, ty: &str) {
    let b = fx.r.backend_mut();
    let layout = Layout {
        loaded: vec!["s".into()],
        types: vec![Some(ty.into())],
        key: vec![],
    };
    b.begin(Txn::Write, &[T]).unwrap();
    b.stage_create(T, &layout).unwrap();
    b.execute(T, Step::InsertStaged(&layout)).unwrap();
    b.commit().unwrap();
}

fn ndjson(rows: &[(i64, &str, &str)]) -> String {
    rows.iter()
        .map(|(id, at, rest)| {
            format!(
                "{{\"id\":{id},\"updated_at\":\"{at}\"{}{rest}}}\n",
                if rest.is_empty() { "" } else { "," }
            )
        })
        .collect()
}

fn full<B: Inner>(fx: &Fixture<Store<B>>, name: &str, at: &str, rows: &[(i64, &str, &str)]) -> Job {
    let n = rows.len() as u64;
    fx.job(name, ndjson(rows), &docs(), |c, h| {
        c.manifest("full", ts(at))
            .rows(n)
            .content_hash(h)
            .build()
            .unwrap()
    })
}

fn changes<B: Inner>(
    fx: &Fixture<Store<B>>,
    name: &str,
    since: &str,
    at: &str,
    rows: &[(i64, &str, &str)],
) -> Job {
    let n = rows.len() as u64;
    fx.job(name, ndjson(rows), &docs(), |c, h| {
        c.manifest("changes", ts(at))
            .since(ts(since))
            .rows(n)
            .content_hash(h)
            .build()
            .unwrap()
    })
}

/// The published rows as (id, s, l, m) texts, by id (None too for a column not published).
fn rows<B: Inner>(fx: &mut Fixture<Store<B>>) -> Vec<Vec<Option<String>>> {
    use dogana_receiver::conformance::Receiver as _;
    let (rows, _) = fx.r.read(T).unwrap();
    let at: Vec<Option<usize>> = ["id", "s", "l", "m"]
        .iter()
        .map(|c| rows.columns.iter().position(|x| x == c))
        .collect();
    let mut out: Vec<Vec<Option<String>>> = rows
        .rows
        .iter()
        .map(|r| at.iter().map(|i| i.and_then(|i| r[i].clone())).collect())
        .collect();
    out.sort_by_key(|r| r[0].as_deref().unwrap_or("").parse::<i64>().unwrap_or(0));
    out
}

fn some(s: &str) -> Option<String> {
    Some(s.to_owned())
}

/// The Arrow type of column `name` in each part of the published table.
fn part_types<B: Inner>(fx: &mut Fixture<Store<B>>, name: &str) -> Vec<DataType> {
    let lake = fx.r.backend_mut().lake();
    let (_, parts, _) = lake.published(T).unwrap().unwrap();
    let root = lake.root().clone();
    parts
        .iter()
        .map(|p| {
            let b = ParquetRecordBatchReaderBuilder::try_new(root.get(&p.path).unwrap().unwrap())
                .unwrap();
            b.schema()
                .field_with_name(name)
                .unwrap()
                .data_type()
                .clone()
        })
        .collect()
}

fn objects_and_arrays_land_as_nested_columns<B: Inner>(name: &str) {
    // rule: store.reconcile.nested-landing, store.reconcile.stored-type — undeclared NDJSON
    // objects and arrays land in the nested types the stored schema holds
    let mut fx = Fixture::<Store<B>>::new(name);
    declare(&mut fx, "struct<a:int,tags:list<str>>");
    let job = full(
        &fx,
        "a.ndjson",
        "2026-10-10T06:00:00Z",
        &[
            (
                1,
                "2026-10-01T10:00:00Z",
                r#""s":{"a":1,"tags":["x","y"]},"l":[1.5,2],"m":{"k":1,"j":2}"#,
            ),
            (2, "2026-10-01T11:00:00Z", r#""s":{"a":null},"l":[],"m":{}"#),
            (3, "2026-10-01T12:00:00Z", ""),
        ],
    );
    fx.accept(&job);
    assert_eq!(
        rows(&mut fx),
        vec![
            vec![
                some("1"),
                some(r#"{"a":1,"tags":["x","y"]}"#),
                some("[1.5,2.0]"),
                some(r#"{"j":2,"k":1}"#),
            ],
            vec![
                some("2"),
                some(r#"{"a":null,"tags":null}"#),
                some("[]"),
                some("{}"),
            ],
            vec![some("3"), None, None, None],
        ]
    );
    assert!(matches!(
        part_types(&mut fx, "s")[..],
        [DataType::Struct(_)]
    ));
    assert!(matches!(part_types(&mut fx, "l")[..], [DataType::List(_)]));
    assert!(matches!(
        part_types(&mut fx, "m")[..],
        [DataType::Map(_, _)]
    ));
    // a replica reads the same rows from its copies of the parts
    let dir = tempfile::tempdir().unwrap();
    let to = Root::open(dir.path().to_str().unwrap()).unwrap();
    let lake = fx.r.backend_mut().lake();
    let url = lake.root().url().to_owned();
    dogana_lake::replica::pull(lake, &url, &to, &[], false).unwrap();
    let want = fx.state(T);
    let mut reader = Fixture::<Store<Lake>>::new("nested-replica");
    reader.r = Store::new(Lake::open(dir.path(), &LakeOptions::default(), false).unwrap());
    assert_eq!(reader.state(T), want);
}

fn a_fold_merges_parts_written_before_a_struct_gained_a_field<B: Inner>(name: &str) {
    // rule: store.reconcile.nested-lattice — the struct gains a field, which the parts
    // written before read as null, before and after a fold merges them
    let mut fx = Fixture::<Store<B>>::new(name);
    declare(&mut fx, "struct<a:int>");
    fx.accept(&full(
        &fx,
        "a.ndjson",
        "2026-10-10T06:00:00Z",
        &[(1, "2026-10-01T10:00:00Z", r#""s":{"a":1}"#)],
    ));
    fx.accept(&changes(
        &fx,
        "b.ndjson",
        "2026-10-10T06:00:00Z",
        "2026-10-11T06:00:00Z",
        &[(2, "2026-10-10T10:00:00Z", r#""s":{"a":2}"#)],
    ));
    retype(&mut fx, "struct<a:int,b:str>");
    fx.accept(&changes(
        &fx,
        "c.ndjson",
        "2026-10-11T06:00:00Z",
        "2026-10-12T06:00:00Z",
        &[(3, "2026-10-11T10:00:00Z", r#""s":{"a":3,"b":"x"}"#)],
    ));
    fx.accept(&changes(
        &fx,
        "d.ndjson",
        "2026-10-12T06:00:00Z",
        "2026-10-13T06:00:00Z",
        &[(4, "2026-10-12T10:00:00Z", r#""s":{"b":"y"}"#)],
    ));
    let before = part_types(&mut fx, "s");
    assert_eq!(before.len(), 4, "four parts: {before:?}");
    let fields = |t: &DataType| match t {
        DataType::Struct(f) => f.iter().map(|f| f.name().clone()).collect::<Vec<_>>(),
        t => panic!("not a struct: {t}"),
    };
    assert_eq!(
        fields(&before[0]),
        ["a"],
        "written before the field was gained"
    );
    assert_eq!(fields(&before[3]), ["a", "b"]);
    let want = vec![
        vec![some("1"), some(r#"{"a":1,"b":null}"#), None, None],
        vec![some("2"), some(r#"{"a":2,"b":null}"#), None, None],
        vec![some("3"), some(r#"{"a":3,"b":"x"}"#), None, None],
        vec![some("4"), some(r#"{"a":null,"b":"y"}"#), None, None],
    ];
    assert_eq!(rows(&mut fx), want);
    let report = fx.r.backend_mut().lake().fold(T).unwrap();
    assert_eq!((report.parts_before, report.parts_after), (4, 1));
    let after = part_types(&mut fx, "s");
    assert_eq!(after.len(), 1);
    assert_eq!(
        fields(&after[0]),
        ["a", "b"],
        "the merged part has the gained field"
    );
    assert_eq!(rows(&mut fx), want, "a fold changes no row");
    fx.verify(T);
}

/// Delivers a job expected to fail with `StoreSchemaIncompatible`: (table, path, stored,
/// arriving).
fn incompatible<B: Inner>(
    fx: &mut Fixture<Store<B>>,
    job: &Job,
) -> (String, String, String, String) {
    let e: StoreError = match fx.r.deliver_with(
        &job.file,
        &job.contract,
        &job.manifest,
        job.now,
        job.source.as_deref(),
        &dogana_receiver::DeliverOptions::new(),
    ) {
        Ok(d) => panic!(
            "delivered: {:?} {}",
            d.receipt.outcome(),
            dogana_receiver::conformance::failures(&d.receipt)
        ),
        Err(e) => e,
    };
    match LakeError::of(&e) {
        Some(LakeError::StoreSchemaIncompatible {
            table,
            column,
            stored,
            arriving,
        }) => (
            table.clone(),
            column.clone(),
            stored.clone(),
            arriving.clone(),
        ),
        other => panic!("not StoreSchemaIncompatible: {other:?} ({e})"),
    }
}

fn values_outside_the_stored_type_are_refused_naming_the_path<B: Inner>(name: &str) {
    // rule: store.reconcile.nested-landing — a struct key outside its fields, and a kind
    // change (rule: store.reconcile.nested-lattice), meet incompatible naming table, path,
    // stored and arriving type; nothing is written
    let mut fx = Fixture::<Store<B>>::new(name);
    declare(&mut fx, "struct<a:int>");
    fx.accept(&full(
        &fx,
        "a.ndjson",
        "2026-10-10T06:00:00Z",
        &[(
            1,
            "2026-10-01T10:00:00Z",
            r#""s":{"a":1},"l":null,"m":null"#,
        )],
    ));
    let root = fx.r.backend_mut().lake().root().clone();
    let written = || {
        let mut v = root.list(&format!("tables/{T}/parts/")).unwrap();
        v.extend(root.list(&format!("tables/{T}/snapshots/")).unwrap());
        v.sort();
        v
    };
    let before = written();
    let state = fx.state(T);
    for (i, (rest, want)) in [
        (
            r#""s":{"a":2,"c":true}"#,
            (
                "s.c",
                "struct<a:int>",
                "an object with key \"c\" outside its fields",
            ),
        ),
        (r#""s":[1]"#, ("s", "struct<a:int>", "an array [1]")),
        (
            r#""m":[["k",1]]"#,
            ("m", "map<str,int>", "an array [[\"k\",1]]"),
        ),
        (r#""l":[1,"x"]"#, ("l[]", "float", "a string \"x\"")),
    ]
    .into_iter()
    .enumerate()
    {
        let job = changes(
            &fx,
            &format!("bad{i}.ndjson"),
            "2026-10-10T06:00:00Z",
            "2026-10-11T06:00:00Z",
            &[(2, "2026-10-10T10:00:00Z", rest)],
        );
        let (table, path, stored, arriving) = incompatible(&mut fx, &job);
        assert_eq!(
            (
                table.as_str(),
                path.as_str(),
                stored.as_str(),
                arriving.as_str()
            ),
            (T, want.0, want.1, want.2)
        );
    }
    assert_eq!(written(), before, "no part and no snapshot written");
    assert_eq!(fx.state(T), state);
}

#[test]
fn a_variant_keeps_the_kind_each_row_was_sent_as() {
    // rule: store.reconcile.variant — one attribute sent as a string by one row and as an
    // integer by another reads back with each row's kind, under one Struct column
    let mut fx = Fixture::<Store<Lake>>::new("nested-variant");
    let b = fx.r.backend_mut();
    b.begin(Txn::Write, &[T]).unwrap();
    b.execute(T, Step::Create(&[col("v", "variant")])).unwrap();
    b.execute(T, Step::Drop).unwrap();
    b.commit().unwrap();
    fx.accept(&full(
        &fx,
        "a.ndjson",
        "2026-10-10T06:00:00Z",
        &[
            (1, "2026-10-01T10:00:00Z", r#""v":"5""#),
            (2, "2026-10-01T11:00:00Z", r#""v":5"#),
            (3, "2026-10-01T12:00:00Z", r#""v":2.5"#),
            (
                4,
                "2026-10-01T13:00:00Z",
                r#""v":{"kind":"binary","binary":"aGk="}"#,
            ),
            (5, "2026-10-01T14:00:00Z", r#""v":true"#),
        ],
    ));
    let snap = fx.r.read_consistent_rows(T).unwrap();
    let (id, v) = (
        snap.columns.iter().position(|c| c == "id").unwrap(),
        snap.columns.iter().position(|c| c == "v").unwrap(),
    );
    let mut got: Vec<(Datum, Datum)> = snap
        .rows
        .iter()
        .map(|r| (r[id].clone(), r[v].clone()))
        .collect();
    got.sort_by_key(|(i, _)| i.render().unwrap().parse::<i64>().unwrap());
    assert_eq!(
        got.into_iter().map(|(_, v)| v).collect::<Vec<_>>(),
        [
            Datum::Text("5".into()),
            Datum::Int(5),
            Datum::Real(2.5),
            Datum::Text(r#"{"binary":"aGk=","kind":"binary"}"#.into()),
            Datum::Bool(true),
        ]
    );
    let types = part_types(&mut fx, "v");
    assert!(
        matches!(&types[..], [DataType::Struct(f)] if f.len() == 6 && f[0].name() == "kind"),
        "{types:?}"
    );
}

#[test]
fn a_value_refused_at_commit_releases_the_lease() {
    // rule: store.reconcile.incompatible — the refusal writes nothing and leaves the table's
    // lease released: the next writer takes it at once (within a 100 ms lock wait)
    let mut fx = Fixture::<Store<Lake>>::new("nested-lease");
    let options = LakeOptions {
        lock_wait: Duration::from_millis(100),
        ..LakeOptions::default()
    };
    fx.r = Store::open_with(fx.dir.join("short-wait"), options).unwrap();
    declare(&mut fx, "struct<a:int>");
    fx.accept(&full(
        &fx,
        "a.ndjson",
        "2026-10-10T06:00:00Z",
        &[(1, "2026-10-01T10:00:00Z", r#""s":{"a":1}"#)],
    ));
    let job = changes(
        &fx,
        "b.ndjson",
        "2026-10-10T06:00:00Z",
        "2026-10-11T06:00:00Z",
        &[(2, "2026-10-10T10:00:00Z", r#""s":{"z":1}"#)],
    );
    assert_eq!(incompatible(&mut fx, &job).1, "s.z");
    let b = fx.r.backend_mut();
    b.begin(Txn::Write, &[T])
        .expect("the lease is free after the refusal");
    b.rollback();
}

mod file {
    use super::*;

    #[test]
    fn objects_and_arrays_land_as_nested_columns() {
        super::objects_and_arrays_land_as_nested_columns::<Lake>("nested-land");
    }

    #[test]
    fn a_fold_merges_parts_written_before_a_struct_gained_a_field() {
        super::a_fold_merges_parts_written_before_a_struct_gained_a_field::<Lake>("nested-fold");
    }

    #[test]
    fn values_outside_the_stored_type_are_refused_naming_the_path() {
        super::values_outside_the_stored_type_are_refused_naming_the_path::<Lake>("nested-bad");
    }
}

mod memory {
    use super::*;

    #[test]
    fn objects_and_arrays_land_as_nested_columns() {
        super::objects_and_arrays_land_as_nested_columns::<MemoryLake>("nested-land");
    }

    #[test]
    fn a_fold_merges_parts_written_before_a_struct_gained_a_field() {
        super::a_fold_merges_parts_written_before_a_struct_gained_a_field::<MemoryLake>(
            "nested-fold",
        );
    }

    #[test]
    fn values_outside_the_stored_type_are_refused_naming_the_path() {
        super::values_outside_the_stored_type_are_refused_naming_the_path::<MemoryLake>(
            "nested-bad",
        );
    }
}

#[test]
#[ignore = "needs DuckDB's Python package: scripts/test-lake.sh runs it"]
fn duckdb_reads_the_nested_columns_of_parts_as_struct_list_and_map() {
    // rule: store.reconcile.nested-landing — the parts' Struct, List and Map columns read in
    // DuckDB as STRUCT, a list and MAP through the view the store prints; a part written
    // before the struct gained a field reads it NULL (rule: store.reconcile.nested-lattice)
    use std::io::Write as _;
    use std::process::{Command, Stdio};
    let python =
        std::env::var("DOGANA_LAKE_PYTHON").expect("DOGANA_LAKE_PYTHON names a python with duckdb");
    let mut fx = Fixture::<Store<Lake>>::new("nested-duckdb");
    declare(&mut fx, "struct<a:int>");
    fx.accept(&full(
        &fx,
        "a.ndjson",
        "2026-10-10T06:00:00Z",
        &[(
            1,
            "2026-10-01T10:00:00Z",
            r#""s":{"a":1},"l":[1,2.5],"m":{"k":1}"#,
        )],
    ));
    retype(&mut fx, "struct<a:int,b:str>");
    fx.accept(&changes(
        &fx,
        "b.ndjson",
        "2026-10-10T06:00:00Z",
        "2026-10-11T06:00:00Z",
        &[(
            2,
            "2026-10-10T10:00:00Z",
            r#""s":{"a":2,"b":"x"},"l":[],"m":{}"#,
        )],
    ));
    assert_eq!(
        part_types(&mut fx, "s").len(),
        2,
        "a part before the field, one after"
    );
    let sql = dogana_lake::sql::current_snapshot_sql(fx.r.backend(), T)
        .unwrap()
        .expect("published");
    let script = "import duckdb, sys\ncon = duckdb.connect()\ncon.execute(sys.stdin.read())\n\
print(*con.execute('SELECT typeof(s), typeof(l), typeof(m) FROM docs LIMIT 1').fetchone(), sep=' | ')\n\
for r in con.execute(\"SELECT id, s.a, s.b, l, len(l), m['k'] FROM docs ORDER BY id\").fetchall():\n    print(*r, sep=' | ')\n";
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
        "STRUCT(a BIGINT, b VARCHAR) | DOUBLE[] | MAP(VARCHAR, BIGINT)\n\
         1 | 1 | None | [1.0, 2.5] | 2 | 1\n\
         2 | 2 | x | [] | 0 | None\n"
    );
}
