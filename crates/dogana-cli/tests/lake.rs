//! The lake store's own verbs: `dogana fold` (and, without the lake feature, the one line
//! saying how to get them).

mod common;

use common::{refused, Work};

#[cfg(feature = "lake")]
use common::text;

/// A full delivery of 3 rows, then `changes` deliveries of one new row each: one part each.
#[cfg(feature = "lake")]
fn deliveries(work: &Work, store: &str, changes: usize) {
    deliveries_with(work, store, changes, &[]);
}

/// [`deliveries`], each `dogana deliver` given `extra` too.
#[cfg(feature = "lake")]
fn deliveries_with(work: &Work, store: &str, changes: usize, extra: &[&str]) {
    work.write(
        "full.csv",
        "id,order_date,updated_at,amount,deleted\n1,2026-10-20,2026-10-20T10:00:00Z,10.00,false\n2,2026-10-21,2026-10-21T10:00:00Z,20.00,false\n3,2026-10-22,2026-10-22T10:00:00Z,30.00,false\n",
    );
    let mut files = vec![(
        "full.csv".to_owned(),
        vec![
            "--shape",
            "full",
            "--produced-at",
            "2026-10-25T06:00:00Z",
            "--rows",
            "3",
        ]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>(),
    )];
    for d in 0..changes {
        let name = format!("c{d}.csv");
        work.write(
            &name,
            &format!(
                "id,order_date,updated_at,amount,deleted\n{},2026-10-23,2026-10-{:02}T10:00:00Z,5.00,false\n",
                100 + d,
                25 + d
            ),
        );
        files.push((
            name,
            vec![
                "--shape".into(),
                "changes".into(),
                "--produced-at".into(),
                format!("2026-10-{:02}T06:00:00Z", 26 + d),
                "--since".into(),
                format!("2026-10-{:02}T06:00:00Z", 25 + d),
                "--rows".into(),
                "1".into(),
            ],
        ));
    }
    for (i, (file, args)) in files.iter().enumerate() {
        let mut all = vec![
            "manifest",
            file.as_str(),
            "--contract",
            "orders.toml",
            "--force",
        ];
        all.extend(args.iter().map(String::as_str));
        work.dogana(&all).assert().success();
        let at = format!("2026-10-{:02}T07:00:00Z", 25 + i);
        let mut deliver = vec![
            "deliver",
            file,
            "--store",
            store,
            "--contract",
            "orders.toml",
            "--at",
            &at,
        ];
        deliver.extend_from_slice(extra);
        work.dogana(&deliver).assert().success();
    }
}

#[cfg(feature = "lake")]
#[test]
fn fold_merges_a_tier_and_changes_no_receipt_or_ledger() {
    // rule: store.fold.tiered-merge, store.fold.compaction-lease
    let work = Work::new();
    let store = format!("file://{}", work.path("lake").display());
    deliveries(&work, &store, 4);
    let receipts = work
        .dogana(["receipts", "--store", &store, "orders", "--json"])
        .output()
        .unwrap();
    let ledger = work
        .dogana(["ledger", "--store", &store, "orders"])
        .output()
        .unwrap();
    let out = work.dogana(["fold", "--store", &store]).assert().success();
    let line = text(&out.get_output().stdout);
    assert!(
        line.starts_with("orders: folded 5 parts into 2 (1 merges of 4;"),
        "{line}"
    );
    let again = work
        .dogana(["fold", "--store", &store, "orders"])
        .assert()
        .success();
    assert_eq!(
        text(&again.get_output().stdout),
        "orders: nothing to fold: 2 parts, every size tier holds fewer than 4\n"
    );
    assert_eq!(
        work.dogana(["receipts", "--store", &store, "orders", "--json"])
            .output()
            .unwrap()
            .stdout,
        receipts.stdout
    );
    assert_eq!(
        work.dogana(["ledger", "--store", &store, "orders"])
            .output()
            .unwrap()
            .stdout,
        ledger.stdout
    );
    work.dogana(["verify", "--store", &store])
        .assert()
        .success();
}

#[cfg(feature = "lake")]
#[test]
fn deliver_fold_folds_after_a_delivery_when_the_tiers_ask() {
    // rule: store.fold.tiered-merge — configurable: dogana deliver --fold
    let work = Work::new();
    let store = format!("file://{}", work.path("lake").display());
    deliveries_with(&work, &store, 4, &["--fold"]);
    let out = work.dogana(["fold", "--store", &store]).assert().success();
    assert_eq!(
        text(&out.get_output().stdout),
        "orders: nothing to fold: 2 parts, every size tier holds fewer than 4\n"
    );
    work.dogana(["verify", "--store", &store])
        .assert()
        .success();
    // and without --fold the parts pile up
    let plain = format!("file://{}", work.path("plain").display());
    deliveries(&work, &plain, 4);
    let out = work.dogana(["fold", "--store", &plain]).assert().success();
    assert!(text(&out.get_output().stdout).starts_with("orders: folded 5 parts into 2"));
}

#[cfg(feature = "lake")]
#[test]
fn fold_refuses_what_is_no_lake_store_and_creates_nothing() {
    let work = Work::new();
    let line = refused(&work, ["fold", "--store", "orders.db"]);
    assert!(
        line.contains("works on a lake store, and orders.db is a sqlite store"),
        "{line}"
    );
    let missing = format!("file://{}", work.path("nothing").display());
    let line = refused(&work, ["fold", "--store", &missing]);
    assert!(line.contains("not a dogana lake store"), "{line}");
    assert!(!work.path("nothing").exists(), "nothing created");
    let store = format!("file://{}", work.path("lake").display());
    deliveries(&work, &store, 0);
    let line = refused(&work, ["fold", "--store", &store, "invoices"]);
    assert!(
        line.contains("has no table \"invoices\"; its tables: orders"),
        "{line}"
    );
}

#[cfg(feature = "lake")]
#[test]
fn collect_deletes_what_only_older_snapshots_name_and_keeps_receipts() {
    // rule: store.collect.superseded, store.collect.retain-generations
    let work = Work::new();
    let store = format!("file://{}", work.path("lake").display());
    deliveries(&work, &store, 4);
    work.dogana(["fold", "--store", &store]).assert().success();
    let receipts = work
        .dogana(["receipts", "--store", &store, "orders", "--json"])
        .output()
        .unwrap();
    let out = work
        .dogana(["collect", "--store", &store, "--retain-generations", "1"])
        .assert()
        .success();
    let line = text(&out.get_output().stdout);
    assert!(
        line.starts_with("orders: kept 1 snapshots whole; deleted 4 parts (")
            && line.ends_with(
                " bytes) of 5 older snapshots, their manifests, receipts and ledgers kept\n"
            ),
        "{line}"
    );
    let again = work
        .dogana(["collect", "--store", &store])
        .assert()
        .success();
    assert_eq!(
        text(&again.get_output().stdout),
        "orders: nothing to collect: every part is named by one of the 6 snapshots kept\n"
    );
    assert_eq!(
        work.dogana(["receipts", "--store", &store, "orders", "--json"])
            .output()
            .unwrap()
            .stdout,
        receipts.stdout
    );
    work.dogana(["verify", "--store", &store])
        .assert()
        .success();
}

#[cfg(feature = "lake")]
#[test]
fn collect_keeping_0_generations_is_refused_before_anything() {
    // rule: store.collect.retain-generations
    let work = Work::new();
    let store = format!("file://{}", work.path("lake").display());
    deliveries(&work, &store, 0);
    let listing = || {
        let mut v: Vec<_> = std::fs::read_dir(work.path("lake/tables/orders"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        v.sort();
        v
    };
    let before = listing();
    let line = refused(
        &work,
        ["collect", "--store", &store, "--retain-generations", "0"],
    );
    assert!(
        line.contains("retain_generations = \"0\" is refused (store.collect.retain-generations)"),
        "{line}"
    );
    assert_eq!(listing(), before);
}

#[cfg(feature = "lake")]
#[test]
fn replicate_keeps_a_read_only_copy_readers_read() {
    // rule: store.replicate.descriptor, store.replicate.write-refused, store.pull.pointer-last
    let work = Work::new();
    let store = format!("file://{}", work.path("lake").display());
    deliveries(&work, &store, 1);
    let out = work
        .dogana(["replicate", "--from", &store, "--to", "replica"])
        .assert()
        .success();
    let line = text(&out.get_output().stdout);
    assert!(line.starts_with("orders: nothing -> "), "{line}");
    assert!(
        line.ends_with(" (2 parts, ") || line.contains(" (2 parts, "),
        "{line}"
    );
    let replica = format!("file://{}", work.path("replica").display());
    for args in [
        &["receipts", "--store", "STORE", "orders", "--json"][..],
        &["ledger", "--store", "STORE", "orders"][..],
    ] {
        let on = |s: &str| {
            let a: Vec<&str> = args
                .iter()
                .map(|x| if *x == "STORE" { s } else { x })
                .collect();
            work.dogana(&a).output().unwrap().stdout
        };
        assert_eq!(on(&replica), on(&store), "{args:?}");
    }
    work.dogana(["verify", "--store", &replica])
        .assert()
        .success();
    let again = work
        .dogana(["replicate", "--from", &store, "--to", "replica", "orders"])
        .assert()
        .success();
    assert!(text(&again.get_output().stdout).starts_with("orders: up to date at "));
    // write verbs on the replica: refused, naming the canonical store
    for args in [
        &["fold", "--store", replica.as_str()][..],
        &["collect", "--store", replica.as_str()][..],
        &[
            "deliver",
            "c0.csv",
            "--store",
            replica.as_str(),
            "--contract",
            "orders.toml",
        ][..],
    ] {
        let line = refused(&work, args);
        assert!(
            line.contains("ReplicaWriteRefused") && line.contains(&store),
            "{args:?}: {line}"
        );
    }
    // a replica of another store: refused
    let other = format!("file://{}", work.path("other").display());
    deliveries(&work, &other, 0);
    let line = refused(&work, ["replicate", "--from", &other, "--to", "replica"]);
    assert!(line.contains("ReplicaStoreMismatch"), "{line}");
}

#[cfg(not(feature = "lake"))]
#[test]
fn a_build_without_the_lake_says_how_to_get_it() {
    let work = Work::new();
    let line = refused(&work, ["fold", "--store", "file:///tmp/x"]);
    assert!(line.contains("--features lake"), "{line}");
}

#[cfg(feature = "lake")]
#[test]
fn duckdb_sql_prints_views_over_the_current_parts_and_regions() {
    // rule: store.lay-out.table-pointer — the views name exactly the parts the pointer's
    // snapshot names; a keyed table of several parts reads each key's current row only
    let work = Work::new();
    let store = format!("file://{}", work.path("lake").display());
    deliveries(&work, &store, 0);
    let one = text(
        &work
            .dogana(["duckdb-sql", "--store", &store, "orders"])
            .assert()
            .success()
            .get_output()
            .stdout,
    );
    let parts = |dir: &str| -> Vec<String> {
        std::fs::read_dir(work.path(dir))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    };
    let first = parts("lake/tables/orders/parts");
    assert_eq!(first.len(), 1);
    assert!(one.contains(&first[0]), "{one}");
    assert!(
        one.starts_with("CREATE OR REPLACE VIEW \"orders\" AS SELECT ")
            && one.contains("CREATE OR REPLACE VIEW \"orders__regions\" AS"),
        "{one}"
    );
    assert!(
        !one.contains("NOT EXISTS"),
        "one part: nothing to shadow: {one}"
    );
    deliveries(&work, &format!("file://{}", work.path("two").display()), 1);
    let two = text(
        &work
            .dogana([
                "duckdb-sql",
                "--store",
                &format!("file://{}", work.path("two").display()),
                "orders",
            ])
            .assert()
            .success()
            .get_output()
            .stdout,
    );
    for p in parts("two/tables/orders/parts") {
        assert!(two.contains(&p), "{p} in {two}");
    }
    assert!(
        two.contains(
            "WHERE NOT EXISTS (SELECT 1 FROM \"__dogana_keys\" k WHERE k.\"id\" = r.\"id\""
        ),
        "{two}"
    );
    let line = refused(&work, ["duckdb-sql", "--store", &store, "invoices"]);
    assert!(line.contains("has no table \"invoices\""), "{line}");
}

#[cfg(not(feature = "lake"))]
#[test]
fn duckdb_sql_without_the_lake_feature_says_how_to_get_it() {
    let work = Work::new();
    let line = refused(
        &work,
        ["duckdb-sql", "--store", "file:///nowhere", "orders"],
    );
    assert!(
        line.contains("dogana duckdb-sql needs the lake store") && line.contains("--features lake"),
        "{line}"
    );
}

#[cfg(feature = "lake")]
#[test]
fn push_then_a_lazy_pull_reads_every_receipt_and_the_duckdb_views() {
    // rule: store.push.manifest-commit, store.pull.lazy-parts, read.cache.lazy-hydration
    let work = Work::new();
    let store = format!("file://{}", work.path("lake").display());
    let bucket = format!("file://{}", work.path("bucket").display());
    let cold = format!("file://{}", work.path("cold").display());
    deliveries(&work, &store, 2);
    let out = work
        .dogana(["push", "--store", &store, "--to", &bucket, "--json"])
        .assert()
        .success();
    let doc: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(doc["advanced"], serde_json::json!(["orders"]));
    assert_eq!(doc["generation"], 1);
    let out = work
        .dogana(["pull", "--store", &cold, "--from", &bucket, "--lazy"])
        .assert()
        .success();
    let line = text(&out.get_output().stdout);
    assert!(line.contains("3 parts left in the bucket"), "{line}");
    assert!(!work.path("cold/tables/orders/parts").exists());
    let receipts = |s: &str| {
        work.dogana(["receipts", "--store", s, "orders", "--json"])
            .output()
            .unwrap()
            .stdout
    };
    assert_eq!(receipts(&cold), receipts(&store));
    work.dogana(["verify", "--store", &cold]).assert().success();
    let claims = |s: &str| {
        work.dogana([
            "claims",
            "--store",
            s,
            "orders",
            "--at",
            "2026-11-01T00:00:00Z",
            "--json",
        ])
        .output()
        .unwrap()
        .stdout
    };
    assert_eq!(claims(&cold), claims(&store));
    // the ledger's page reads receipts and ledgers, never a part
    for (s, page) in [(&cold, "cold.html"), (&store, "warm.html")] {
        work.dogana([
            "show",
            "--store",
            s,
            "orders",
            "--at",
            "2026-11-01T00:00:00Z",
            "-o",
            page,
        ])
        .assert()
        .success();
    }
    assert_eq!(
        std::fs::read(work.path("cold.html")).unwrap(),
        std::fs::read(work.path("warm.html")).unwrap(),
        "the lazy store's page is the full store's"
    );
    assert!(!work.path("cold/tables/orders/parts").exists());
    // the DuckDB views name files: their parts come home first
    work.dogana(["duckdb-sql", "--store", &cold, "orders"])
        .assert()
        .success();
    assert_eq!(
        std::fs::read_dir(work.path("cold/tables/orders/parts"))
            .unwrap()
            .count(),
        3
    );
    // nothing new: the push lists nothing and commits no generation
    let out = work
        .dogana(["push", "--store", &store, "--to", &bucket, "--json"])
        .assert()
        .success();
    let doc: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(
        (doc["uploaded"].clone(), doc["generation"].clone()),
        (0.into(), 1.into())
    );
}

#[cfg(feature = "lake")]
#[test]
fn a_sync_setting_of_0_is_refused_naming_the_key_before_anything() {
    // rule: store.merge.retries
    let work = Work::new();
    let store = format!("file://{}", work.path("lake").display());
    let bucket = work.path("bucket");
    deliveries(&work, &store, 0);
    work.write("sync.toml", "[sync]\npush_retries = 0\n");
    let out = work
        .dogana([
            "push",
            "--store",
            &store,
            "--to",
            &format!("file://{}", bucket.display()),
            "--config",
            &work.path("sync.toml").display().to_string(),
        ])
        .assert()
        .code(1);
    let err = text(&out.get_output().stderr);
    assert!(err.contains("sync.push_retries"), "{err}");
    assert!(!bucket.exists(), "nothing written");
}

#[cfg(not(feature = "lake"))]
#[test]
fn push_and_pull_without_the_lake_say_how_to_get_it() {
    let work = Work::new();
    let line = refused(&work, ["push", "--store", "x", "--to", "file:///b"]);
    assert!(line.contains("--features lake"), "{line}");
    let line = refused(&work, ["pull", "--store", "x", "--from", "file:///b"]);
    assert!(line.contains("--features lake"), "{line}");
}
