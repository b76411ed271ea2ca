//! Table names outside `[A-Za-z0-9_-]` (issue 37): one escaping (`layout::table_dir`) names
//! every key, path, listing and URL of a table, so any Unicode name a contract admits goes
//! through deliver, fold, collect, replicate and `duckdb-sql` as one table, read back by its
//! name, whose files all exist where the views name them.

use dogana_lake::layout::{table_dir, TABLE_DIR_MAX};
use dogana_lake::replica::pull;
use dogana_lake::{objects::Root, Lake, LakeOptions};
use dogana_receiver::conformance::{orders_csv, orders_named, ts, Fixture, Job, Order, Receiver};
use dogana_receiver::{Open, Store};
use proptest::prelude::*;

type Fx = Fixture<Store<Lake>>;

fn full(fx: &Fx, table: &str, name: &str, at: &str, rows: &[Order<'_>]) -> Job {
    let c = orders_named(table, "id", "order_date");
    fx.job(name, orders_csv(rows), &c, |c, h| {
        c.manifest("full", ts(at))
            .rows(rows.len() as u64)
            .content_hash(h)
            .build()
            .unwrap()
    })
}

/// The file paths DuckDB views name: each `'…parquet'` literal (a path holds no quote: its
/// table's directory is escaped).
fn quoted_paths(sql: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = sql;
    while let Some(end) = rest.find(".parquet'") {
        let head = &rest[..end + ".parquet".len()];
        if let Some(start) = head.rfind('\'') {
            out.push(head[start + 1..].to_owned());
        }
        rest = &rest[end + ".parquet'".len()..];
    }
    out
}

fn one_table_through_every_verb(table: &str) {
    let mut fx = Fx::new("names");
    let day = |d: &'static str| -> Vec<Order<'static>> {
        vec![
            (1, d, "2026-10-01T10:00:00Z", "10.00", false),
            (2, d, "2026-10-01T11:00:00Z", "20.00", false),
        ]
    };
    for (i, at) in [
        "2026-10-10T06:00:00Z",
        "2026-10-11T06:00:00Z",
        "2026-10-12T06:00:00Z",
        "2026-10-13T06:00:00Z",
        "2026-10-14T06:00:00Z",
    ]
    .iter()
    .enumerate()
    {
        fx.accept(&full(
            &fx,
            table,
            &format!("f{i}.csv"),
            at,
            &day("2026-10-01"),
        ));
    }
    let before = fx.state(table);
    let lake = fx.r.backend_mut();
    // listed once, by its exact name
    assert_eq!(lake.table_names().unwrap(), vec![table.to_owned()]);
    lake.fold(table).unwrap();
    let r = lake.collect(table, 1).unwrap();
    assert_eq!(r.table, table);
    // the views name files that exist, under the one directory of the table
    let sql = dogana_lake::sql::current_snapshot_sql(lake, table)
        .unwrap()
        .expect("published");
    let paths = quoted_paths(&sql);
    assert!(!paths.is_empty(), "{sql}");
    for p in &paths {
        assert!(
            std::path::Path::new(p).is_file(),
            "{p} named by the view does not exist"
        );
        assert!(p.contains(&format!("/tables/{}/", table_dir(table))), "{p}");
    }
    // a replica reads the same table, by the same name
    let dir = tempfile::tempdir().unwrap();
    let to = Root::open(dir.path().to_str().unwrap()).unwrap();
    let url = lake.root().url().to_owned();
    let pulled = pull(lake, &url, &to, &[], false).unwrap();
    assert_eq!(pulled.len(), 1);
    assert_eq!(pulled[0].table, table);
    let mut reader = Fx::new("names-replica");
    reader.r = Store::new(Lake::open(dir.path(), &LakeOptions::default(), false).unwrap());
    assert_eq!(reader.state(table).rows, before.rows);
    reader.verify(table);
    fx.verify(table);
    assert_eq!(
        fx.state(table),
        before,
        "fold and collect change no reader's answer"
    );
}

#[test]
fn a_name_with_a_space_is_one_table() {
    // rule: store.lay-out.table-pointer
    one_table_through_every_verb("order lines");
}

#[test]
fn a_cyrillic_name_of_56_bytes_is_one_table() {
    // rule: store.lay-out.table-pointer
    let name = "Заказы клиентов за прошлый год";
    assert_eq!(name.len(), 56);
    one_table_through_every_verb(name);
}

#[test]
fn a_name_too_long_for_a_directory_is_refused_naming_both_lengths() {
    let name = "я".repeat(40); // 80 bytes, 240 escaped
    let mut fx = Fx::new("names-long");
    let job = full(
        &fx,
        &name,
        "f.csv",
        "2026-10-10T06:00:00Z",
        &[(1, "2026-10-01", "2026-10-01T10:00:00Z", "1.00", false)],
    );
    let e = Receiver::deliver(&mut fx.r, &job)
        .map(|d| d.receipt)
        .expect_err("refused");
    assert!(
        e.contains("240 bytes") && e.contains(&TABLE_DIR_MAX.to_string()),
        "{e}"
    );
    assert!(
        fx.r.backend().table_names().unwrap().is_empty(),
        "nothing written"
    );
}

fn admissible_name() -> impl Strategy<Value = String> {
    // any character but controls (CONTRACT-48), short enough for a directory
    "[^\\p{Cc}]{1,12}".prop_filter("fits a directory name", |s| {
        !s.trim().is_empty()
            && table_dir(s).len() <= TABLE_DIR_MAX
            && !s.to_ascii_lowercase().starts_with("dogana")
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn any_admissible_name_is_one_table_through_every_verb(name in admissible_name()) {
        // rule: store.lay-out.table-pointer
        one_table_through_every_verb(&name);
    }
}
