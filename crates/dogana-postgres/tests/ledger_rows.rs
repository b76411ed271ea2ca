//! What only Postgres does with a store of the earlier layout (one document per table): a
//! reader opened before a writer converts it reads on, and a view of the user's over the
//! earlier table stops the conversion. What every backend keeping its ledgers region by region
//! does is in the conformance suite (`conformance_suite!(...; ledger_rows)`).

use std::path::{Path, PathBuf};

use dogana::Outcome;
use dogana_postgres::harness::test_url;
use dogana_postgres::postgres::{Client, NoTls};
use dogana_postgres::{Postgres, PostgresOptions, Store, StoreError};
use dogana_receiver::conformance::{deliver_window_of_day, Harness, LedgerRowsHarness};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dogana-pg-rows-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A store in the folder's own (new, empty) schema, and the schema's name.
fn create(d: &Path) -> (Store, String) {
    let backend = Postgres::create(d).expect("the store opens");
    let schema = backend.schema().to_owned();
    (Store::new(backend), schema)
}

fn url(schema: &str) -> String {
    let url = test_url().expect("the test server");
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}schema={schema}")
}

/// Opens the store of `schema` again, for writing or for reading only.
fn connect(schema: &str, write: bool) -> Result<Store, StoreError> {
    Postgres::connect(&url(schema), &PostgresOptions::default(), write).map(Store::new)
}

fn admin() -> Client {
    Client::connect(&test_url().expect("the test server"), NoTls).expect("the test server")
}

/// Delivers [`window_of_day`] of `day` at 06:`day`.
fn deliver_day(store: &mut Store, d: &Path, day: u32) -> Outcome {
    deliver_window_of_day(store, d, day, 6).unwrap()
}

/// `pg_class.relkind` of one of the schema's objects (`r` a table, `v` a view), if it exists.
fn kind(schema: &str, name: &str) -> Option<String> {
    admin()
        .query_opt(
            "SELECT c.relkind::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = $1 AND c.relname = $2",
            &[&schema, &name],
        )
        .unwrap()
        .map(|r| r.get(0))
}

/// Turns the store into the layout of earlier versions (the harness's, with the documents it
/// holds), and closes it.
fn to_earlier_layout(mut store: Store) {
    let b = store.backend_mut();
    let documents = b.documents().unwrap();
    b.to_earlier_layout(&documents).unwrap();
}

#[test]
fn a_reader_of_the_earlier_layout_reads_on_after_a_writer_converts_it() {
    // rule: RECV-13 — a reader opened before the conversion reads one committed state after it
    let d = dir("reader");
    let (mut store, schema) = create(&d);
    for day in [1, 3] {
        assert_eq!(deliver_day(&mut store, &d, day), Outcome::Accepted);
    }
    to_earlier_layout(store);
    let mut reader = connect(&schema, false).unwrap();
    let mut writer = connect(&schema, true).unwrap();
    assert_eq!(deliver_day(&mut writer, &d, 5), Outcome::Accepted);
    let ledger = writer.ledger("orders").unwrap().unwrap();
    assert_eq!(reader.ledger("orders").unwrap().unwrap(), ledger);
    assert!(reader.verify("orders").unwrap().ok());
}

#[test]
fn a_view_of_the_users_over_the_earlier_table_stops_the_conversion_one_over_the_regions_lives_on() {
    // rule: LOADER-10 — what users built on dogana_ledgers is never dropped behind their back
    let d = dir("dependent");
    let (mut store, schema) = create(&d);
    assert_eq!(deliver_day(&mut store, &d, 1), Outcome::Accepted);
    let ledger = store.ledger("orders").unwrap().unwrap();
    to_earlier_layout(store);
    // a view over dogana_regions lives on (the view is replaced in place); one over the
    // table dogana_ledgers, which becomes a view, stops the conversion
    admin()
        .batch_execute(&format!(
            "CREATE VIEW {schema}.my_regions AS SELECT table_name, region_index, low
             FROM {schema}.dogana_regions;
             CREATE VIEW {schema}.my_ledgers AS SELECT table_name FROM {schema}.dogana_ledgers"
        ))
        .unwrap();
    let e = connect(&schema, true).unwrap_err();
    assert!(
        matches!(&e, StoreError::Corrupt(m) if m.contains("my_ledgers") && m.contains("nothing was changed")),
        "{e}"
    );
    assert_eq!(kind(&schema, "dogana_ledgers").as_deref(), Some("r"));
    assert_eq!(kind(&schema, "dogana_ledger_heads"), None);
    admin()
        .batch_execute(&format!("DROP VIEW {schema}.my_ledgers"))
        .unwrap();
    let mut store = connect(&schema, true).unwrap();
    assert_eq!(kind(&schema, "dogana_ledgers").as_deref(), Some("v"));
    assert_eq!(store.ledger("orders").unwrap().unwrap(), ledger);
    let mine: i64 = admin()
        .query_one(&format!("SELECT count(*) FROM {schema}.my_regions"), &[])
        .unwrap()
        .get(0);
    assert_eq!(mine as usize, ledger.region_count());
}
