//! The schema lattice (STORE-P1 `store.reconcile.*`): the join's algebra over random types
//! (proptest), and the lake's writes through the engine: the one promotion read back from
//! mixed parts, a widening key and an incompatible pair refused before anything is written.

use dogana::{Contract, Shape};
use dogana_lake::lattice::{join, Conflict, LakeType};
use dogana_lake::objects::Root;
use dogana_lake::{Lake, LakeError, LakeOptions};
use dogana_receiver::conformance::{ts, Fixture, Job};
use dogana_receiver::{Backend, Column, Datum, DeliverOptions, Open, Step, Store, StoreError, Txn};
use proptest::prelude::*;

type Fx = Fixture<Store<Lake>>;

fn t(s: &str) -> LakeType {
    LakeType::parse(s).unwrap_or_else(|| panic!("{s} parses"))
}

fn scalar() -> impl Strategy<Value = LakeType> {
    prop_oneof![
        Just(LakeType::Int),
        Just(LakeType::Float),
        Just(LakeType::Str),
        Just(LakeType::Json),
        Just(LakeType::Bool),
        Just(LakeType::Date),
        Just(LakeType::Datetime),
        Just(LakeType::Decimal("decimal(10,2)".into())),
        Just(LakeType::Binary),
        (1u32..3).prop_map(LakeType::FixedBinary),
        (1u32..3, any::<bool>()).prop_map(|(dim, half)| LakeType::Vector { dim, half }),
        Just(LakeType::Variant),
    ]
}

fn any_type() -> impl Strategy<Value = LakeType> {
    scalar().prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            inner.clone().prop_map(|t| LakeType::List(Box::new(t))),
            inner.clone().prop_map(|t| LakeType::Map(Box::new(t))),
            proptest::collection::btree_map("[abc]", inner, 1..3).prop_map(|m| {
                LakeType::parse(&format!(
                    "struct<{}>",
                    m.iter()
                        .map(|(k, v)| format!("{k}:{v}"))
                        .collect::<Vec<_>>()
                        .join(",")
                ))
                .expect("a struct parses")
            }),
        ]
    })
}

fn ok(r: Result<LakeType, Conflict>) -> Option<LakeType> {
    r.ok()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// rule: store.reconcile.lattice, store.reconcile.nested-lattice — the join is
    /// commutative, and a type joined with itself is itself.
    #[test]
    fn join_is_commutative_and_idempotent(a in any_type(), b in any_type()) {
        prop_assert_eq!(ok(join("c", &a, &b, false)), ok(join("c", &b, &a, false)));
        prop_assert_eq!(join("c", &a, &a, false), Ok(a.clone()));
    }

    /// rule: store.reconcile.lattice — associative over random sequences: where both
    /// groupings of three types join they reach the same type; without a variant (which
    /// absorbs kinds that refuse each other) both groupings refuse alike too.
    #[test]
    fn join_is_associative(a in any_type(), b in any_type(), c in any_type()) {
        let left = join("c", &a, &b, false).and_then(|ab| join("c", &ab, &c, false));
        let right = join("c", &b, &c, false).and_then(|bc| join("c", &a, &bc, false));
        let variant = [&a, &b, &c].iter().any(|t| t.to_string().contains("variant"));
        match (ok(left), ok(right)) {
            (Some(l), Some(r)) => prop_assert_eq!(l, r),
            (None, None) => {}
            (l, r) => prop_assert!(variant, "{:?} against {:?}", l, r),
        }
    }

    /// rule: store.reconcile.key-widening — a key never widens: joined as a key, a type
    /// either stays what was stored or is refused, and the only refusal a numeric pair meets
    /// is StoreKeyWidened.
    #[test]
    fn a_key_never_widens(types in proptest::collection::vec(scalar(), 1..6)) {
        let stored = types[0].clone();
        for arriving in &types[1..] {
            match join("id", &stored, arriving, true) {
                Ok(j) => prop_assert_eq!(&j, &stored),
                Err(Conflict::KeyWidened { .. }) => {
                    // a widening: the pair joins as other columns, to another type
                    let j = join("id", &stored, arriving, false);
                    prop_assert!(
                        j.is_ok() && (j != Ok(stored.clone()) || stored == LakeType::Float),
                        "{:?}", j
                    );
                    break;
                }
                Err(Conflict::Incompatible { .. }) => {
                    prop_assert!(join("id", &stored, arriving, false).is_err());
                    break;
                }
            }
        }
    }
}

#[test]
fn the_one_promotion_and_json_absorbing_str() {
    // rule: store.reconcile.lattice
    assert_eq!(join("x", &t("int"), &t("float"), false), Ok(t("float")));
    assert_eq!(join("x", &t("float"), &t("int"), false), Ok(t("float")));
    assert_eq!(join("x", &t("str"), &t("json"), false), Ok(t("json")));
    // rule: store.reconcile.incompatible — any other pair, naming column and both types
    for (a, b) in [
        ("int", "str"),
        ("date", "datetime"),
        ("bool", "int"),
        ("decimal(10,2)", "decimal(12,2)"),
        ("float", "decimal(10,2)"),
    ] {
        assert_eq!(
            join("x", &t(a), &t(b), false),
            Err(Conflict::Incompatible {
                path: "x".into(),
                stored: a.into(),
                arriving: b.into()
            })
        );
    }
}

#[test]
fn binary_and_vectors_take_no_promotion() {
    // rule: store.reconcile.binary-and-vector
    for (a, b) in [
        ("binary", "fixed_size_binary(16)"),
        ("fixed_size_binary(16)", "fixed_size_binary(32)"),
        ("vector(768,f32)", "vector(768,f16)"),
        ("vector(768,f32)", "vector(384,f32)"),
        ("binary", "str"),
        ("vector(3,f32)", "list<float>"),
    ] {
        assert!(
            matches!(
                join("v", &t(a), &t(b), false),
                Err(Conflict::Incompatible { .. })
            ),
            "{a} with {b}"
        );
    }
    assert_eq!(
        join("v", &t("vector(8,f16)"), &t("vector(8,f16)"), false),
        Ok(t("vector(8,f16)"))
    );
}

#[test]
fn structs_gain_fields_lists_and_maps_reconcile_items() {
    // rule: store.reconcile.nested-lattice
    assert_eq!(
        join("s", &t("struct<a:int>"), &t("struct<b:str,a:float>"), false),
        Ok(t("struct<a:float,b:str>"))
    );
    assert_eq!(
        join("l", &t("list<int>"), &t("list<float>"), false),
        Ok(t("list<float>"))
    );
    assert_eq!(
        join("m", &t("map<str,int>"), &t("map<str,float>"), false),
        Ok(t("map<str,float>"))
    );
    // a kind change names the column path
    assert_eq!(
        join(
            "s",
            &t("struct<a:list<int>>"),
            &t("struct<a:list<str>>"),
            false
        ),
        Err(Conflict::Incompatible {
            path: "s.a[]".into(),
            stored: "int".into(),
            arriving: "str".into()
        })
    );
    for (a, b) in [
        ("list<int>", "map<str,int>"),
        ("int", "list<int>"),
        ("struct<a:int>", "str"),
    ] {
        assert!(
            matches!(join("n", &t(a), &t(b), false), Err(Conflict::Incompatible { path, .. }) if path == "n"),
            "{a} with {b}"
        );
    }
    assert_eq!(
        join(
            "m",
            &t("map<str,list<int>>"),
            &t("map<str,list<bool>>"),
            false
        ),
        Err(Conflict::Incompatible {
            path: "m{}[]".into(),
            stored: "int".into(),
            arriving: "bool".into()
        })
    );
}

#[test]
fn a_variant_keeps_every_scalar_kind() {
    // rule: store.reconcile.variant — a variant column absorbs string, Int64, Float64,
    // boolean and bytes values (each keeping its kind); nothing else
    for s in ["str", "int", "float", "bool", "binary"] {
        assert_eq!(join("v", &t("variant"), &t(s), false), Ok(t("variant")));
        assert_eq!(join("v", &t(s), &t("variant"), false), Ok(t("variant")));
    }
    for s in ["date", "list<int>", "struct<a:int>", "vector(3,f32)"] {
        assert!(matches!(
            join("v", &t("variant"), &t(s), false),
            Err(Conflict::Incompatible { .. })
        ));
    }
}

// ---------------------------------------------------------------------------------------------
// the lattice at the lake's writes

fn keyless() -> Contract {
    Contract::builder("t", Vec::<String>::new())
        .shape("full", Shape::full())
        .build()
        .unwrap()
}

fn full(
    fx: &Fx,
    name: &str,
    at: &str,
    contract: &Contract,
    csv: &str,
    types: &[(&str, &str)],
) -> Job {
    let rows = csv.lines().count() as u64 - 1;
    let mut job = fx.job(name, csv, contract, |c, h| {
        c.manifest("full", ts(at))
            .rows(rows)
            .content_hash(h)
            .build()
            .unwrap()
    });
    job.column_types = types
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect();
    job
}

/// Delivers through the engine, expecting an operational error (the lake's refusal).
fn deliver_err(fx: &mut Fx, job: &Job) -> StoreError {
    let options = job
        .column_types
        .iter()
        .fold(DeliverOptions::new(), |o, (c, t)| o.column_type(c, t));
    match fx.r.deliver_with(
        &job.file,
        &job.contract,
        &job.manifest,
        job.now,
        job.source.as_deref(),
        &options,
    ) {
        Ok(d) => panic!("delivered: {:?}", d.receipt.outcome()),
        Err(e) => e,
    }
}

/// Every object under the table's parts and snapshots.
fn written(root: &Root) -> Vec<String> {
    let mut v = root.list("tables/t/parts/").unwrap();
    v.extend(root.list("tables/t/snapshots/").unwrap());
    v.sort();
    v
}

#[test]
fn int_then_float_reads_back_float_from_mixed_parts() {
    // rule: store.reconcile.lattice — Int64 with Float64 to Float64: a changes delivery
    // typing `amount` float lands beside the Int64 part, which reads back widened
    let mut fx = Fx::new("lattice-promote");
    let mut job = fx.full(
        "a.csv",
        "2026-10-10T06:00:00Z",
        &[
            (1, "2026-10-01", "2026-10-01T10:00:00Z", "10", false),
            (2, "2026-10-02", "2026-10-01T11:00:00Z", "20", false),
        ],
    );
    job.column_types = vec![("amount".into(), "int".into())];
    fx.accept(&job);
    let (cols, _, _) = fx.r.backend().published("orders").unwrap().unwrap();
    assert_eq!(
        cols.iter()
            .find(|c| c.name == "amount")
            .unwrap()
            .ty
            .as_deref(),
        Some("int")
    );
    let mut job = fx.changes(
        "b.csv",
        "2026-10-10T06:00:00Z",
        "2026-10-11T06:00:00Z",
        &[(3, "2026-10-03", "2026-10-10T10:00:00Z", "2.5", false)],
    );
    job.column_types = vec![("amount".into(), "float".into())];
    fx.accept(&job);
    let (cols, parts, _) = fx.r.backend().published("orders").unwrap().unwrap();
    assert_eq!(
        parts.len(),
        2,
        "the Int64 part is carried, the Float64 part added"
    );
    let at = cols.iter().position(|c| c.name == "amount").unwrap();
    assert_eq!(
        cols[at].ty.as_deref(),
        Some("float"),
        "the column took the promotion"
    );
    let root = fx.r.backend().root().clone();
    let mut amounts = Vec::new();
    for p in &parts {
        for r in dogana_lake::decode_part(&cols, root.get(&p.path).unwrap().unwrap()).unwrap() {
            amounts.push(r[at].clone());
        }
    }
    amounts.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
    assert_eq!(
        amounts,
        vec![Datum::Real(10.0), Datum::Real(2.5), Datum::Real(20.0)]
    );
    // the stored schema keeps float: an int arriving now lands as float
    let mut job = fx.changes(
        "c.csv",
        "2026-10-11T06:00:00Z",
        "2026-10-12T06:00:00Z",
        &[(4, "2026-10-03", "2026-10-11T10:00:00Z", "7", false)],
    );
    job.column_types = vec![("amount".into(), "int".into())];
    fx.accept(&job);
    let (cols, _, _) = fx.r.backend().published("orders").unwrap().unwrap();
    assert_eq!(cols[at].ty.as_deref(), Some("float"));
}

#[test]
fn an_incompatible_type_is_refused_before_anything_is_written() {
    // rule: store.reconcile.incompatible
    let mut fx = Fx::new("lattice-incompatible");
    let c = keyless();
    fx.accept(&full(
        &fx,
        "a.csv",
        "2026-10-10T06:00:00Z",
        &c,
        "id,amount\n1,10\n",
        &[("amount", "int")],
    ));
    let root = fx.r.backend().root().clone();
    let before = written(&root);
    let state = fx.state("t");
    let job = full(
        &fx,
        "b.csv",
        "2026-10-11T06:00:00Z",
        &c,
        "id,amount\n2,2026-10-01\n",
        &[("amount", "date")],
    );
    let e = deliver_err(&mut fx, &job);
    match LakeError::of(&e) {
        Some(LakeError::StoreSchemaIncompatible {
            table,
            column,
            stored,
            arriving,
        }) => {
            assert_eq!((table.as_str(), column.as_str()), ("t", "amount"));
            assert_eq!((stored.as_str(), arriving.as_str()), ("int", "date"));
        }
        other => panic!("not StoreSchemaIncompatible: {other:?} ({e})"),
    }
    assert_eq!(written(&root), before, "no part and no snapshot written");
    assert_eq!(fx.state("t"), state);
}

#[test]
fn a_widening_key_is_store_key_widened_before_anything_is_written() {
    // rule: store.reconcile.key-widening — at the port: a float column published, then a
    // table recreated with it as an int key (the engine's contracts never declare a float
    // key, and a table's key is fixed once it has history, so the port is where it shows)
    let dir = tempfile::tempdir().unwrap();
    let mut lake = Lake::open(dir.path(), &LakeOptions::default(), true).unwrap();
    let col = |name: &str, ty: &str, key: bool| Column {
        name: name.into(),
        ty: Some(ty.into()),
        key,
    };
    lake.begin(Txn::Write, &["t"]).unwrap();
    lake.execute("t", Step::Create(&[col("x", "float", false)]))
        .unwrap();
    lake.commit().unwrap();
    let root = lake.root().clone();
    let before = written(&root);
    {
        let (stored_as, arriving) = ("float", "int");
        lake.begin(Txn::Write, &["t"]).unwrap();
        lake.execute("t", Step::Drop).unwrap();
        let e = lake
            .execute("t", Step::Create(&[col("x", arriving, true)]))
            .unwrap_err();
        lake.rollback();
        match LakeError::of(&e) {
            Some(LakeError::StoreKeyWidened {
                table,
                column,
                stored,
                arriving: a,
            }) => assert_eq!(
                (table.as_str(), column.as_str(), stored.as_str(), a.as_str()),
                ("t", "x", stored_as, arriving)
            ),
            other => panic!("not StoreKeyWidened: {other:?} ({e})"),
        }
    }
    assert_eq!(written(&root), before, "no part and no snapshot written");
    // an int key stays an int key: no widening when a float arrives for it either
    lake.begin(Txn::Write, &["k"]).unwrap();
    lake.execute("k", Step::Create(&[col("id", "int", true)]))
        .unwrap();
    lake.commit().unwrap();
    lake.begin(Txn::Write, &["k"]).unwrap();
    lake.execute("k", Step::Drop).unwrap();
    let e = lake
        .execute("k", Step::Create(&[col("id", "float", true)]))
        .unwrap_err();
    lake.rollback();
    assert!(
        matches!(LakeError::of(&e), Some(LakeError::StoreKeyWidened { .. })),
        "{e}"
    );
}

#[test]
fn an_undeclared_column_lands_in_the_stored_binary_or_vector_type() {
    // rule: store.reconcile.stored-type — at the port: a table recreated with its binary and
    // vector columns undeclared keeps their types; a declared other type is refused
    let dir = tempfile::tempdir().unwrap();
    let mut lake = Lake::open(dir.path(), &LakeOptions::default(), true).unwrap();
    let col = |name: &str, ty: Option<&str>| Column {
        name: name.into(),
        ty: ty.map(str::to_owned),
        key: false,
    };
    lake.begin(Txn::Write, &["t"]).unwrap();
    lake.execute(
        "t",
        Step::Create(&[col("b", Some("binary")), col("v", Some("vector(3,f16)"))]),
    )
    .unwrap();
    lake.commit().unwrap();
    lake.begin(Txn::Write, &["t"]).unwrap();
    lake.execute("t", Step::Drop).unwrap();
    lake.execute("t", Step::Create(&[col("b", None), col("v", None)]))
        .unwrap();
    lake.commit().unwrap();
    let (cols, _, _) = lake.published("t").unwrap().unwrap();
    let types: Vec<Option<&str>> = cols.iter().map(|c| c.ty.as_deref()).collect();
    assert_eq!(types, [Some("binary"), Some("vector(3,f16)")]);
    lake.begin(Txn::Write, &["t"]).unwrap();
    lake.execute("t", Step::Drop).unwrap();
    let e = lake
        .execute("t", Step::Create(&[col("b", Some("str")), col("v", None)]))
        .unwrap_err();
    lake.rollback();
    assert!(
        matches!(LakeError::of(&e), Some(LakeError::StoreSchemaIncompatible { column, stored, arriving, .. })
            if column == "b" && stored == "binary" && arriving == "str"),
        "{e}"
    );
}
