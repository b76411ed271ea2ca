//! What a Delta store does beyond the engine's suites: the commit race delta-rs must lose
//! rather than rebase, the receipt in the commit, VACUUM, outside writers, protocols dogana
//! does not write, and damaged objects.

use std::path::{Path, PathBuf};

use deltalake_core::kernel::transaction::{CommitBuilder, CommitProperties, TransactionError};
use deltalake_core::kernel::Action;
use deltalake_core::protocol::{DeltaOperation, SaveMode};
use dogana::Wire;
use dogana_delta::Delta;
use dogana_receiver::conformance::{now, orders, window_of_day};
use dogana_receiver::{Backend, Open, Store, StoreError, Txn};

fn fresh(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dogana-delta-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    dir
}

fn store(dir: &Path) -> Store<Delta> {
    Store::open(format!("delta+file://{}", dir.join("store").display())).expect("opens")
}

fn log_dir(dir: &Path) -> PathBuf {
    dir.join("store").join("orders").join("_delta_log")
}

/// The Delta versions the log holds, in order.
fn versions(dir: &Path) -> Vec<u64> {
    let mut v: Vec<u64> = std::fs::read_dir(log_dir(dir))
        .expect("a log")
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".json")?.parse().ok()
        })
        .collect();
    v.sort_unstable();
    v
}

/// The actions of log entry `v`.
fn entry(dir: &Path, v: u64) -> Vec<serde_json::Value> {
    let text =
        std::fs::read_to_string(log_dir(dir).join(format!("{v:020}.json"))).expect("an entry");
    text.lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect()
}

fn deliver_day(s: &mut Store<Delta>, dir: &Path, day: u32) -> dogana_receiver::Delivery {
    let (file, m) = window_of_day(dir, day, 1);
    s.deliver(&file, &orders(), &m, now(), None)
        .expect("delivers")
}

#[test]
fn a_commit_with_retries_off_fails_when_the_log_moved_and_is_never_rebased() {
    // rule: RECV-10 — pins delta-rs: with max_retries(0) a commit whose base version is no
    // longer the newest fails (MaxCommitAttempts), where by default it would run the conflict
    // checker and land on top of the other writer's commit
    let dir = fresh("retries-off");
    let mut s = store(&dir);
    deliver_day(&mut s, &dir, 1);
    let url = url::Url::from_directory_path(dir.join("store").join("orders")).expect("a URL");
    let rt = tokio::runtime::Runtime::new().expect("a runtime");
    let stale = rt
        .block_on(deltalake_core::open_table(url))
        .expect("the table opens");
    deliver_day(&mut s, &dir, 2);
    assert_eq!(versions(&dir), vec![0, 1]);
    let attempt = |retries: usize| {
        let props = CommitProperties::default().with_max_retries(retries);
        rt.block_on(async {
            CommitBuilder::from(props)
                .with_actions(Vec::<Action>::new())
                .build(
                    Some(stale.snapshot().expect("a snapshot")),
                    stale.log_store(),
                    DeltaOperation::Write {
                        mode: SaveMode::Append,
                        partition_by: None,
                        predicate: None,
                    },
                )
                .await
                .map(|c| c.version())
        })
    };
    let e = attempt(0).expect_err("the log moved");
    assert!(
        matches!(
            e,
            deltalake_core::DeltaTableError::Transaction {
                source: TransactionError::MaxCommitAttempts(0)
            }
        ),
        "not the retries-off failure: {e:?}"
    );
    assert_eq!(versions(&dir), vec![0, 1], "nothing was committed");
    // what dogana turns off: with retries, delta-rs runs its conflict checker on the winning
    // commit, to rebase the stale one when it finds no conflict (here it finds one: dogana's
    // commits change the table's metadata)
    let e = attempt(15).expect_err("a conflict");
    assert!(
        matches!(
            e,
            deltalake_core::DeltaTableError::Transaction {
                source: TransactionError::CommitConflict(_)
            }
        ),
        "the conflict checker did not run: {e:?}"
    );
    assert_eq!(versions(&dir), vec![0, 1], "nothing was committed");
}

#[test]
fn two_deliveries_decided_on_one_version_make_one_version_each_and_the_loser_decides_again() {
    // rule: RECV-10
    let dir = fresh("race");
    let mut a = store(&dir);
    deliver_day(&mut a, &dir, 1);
    let (file, m) = window_of_day(&dir, 2, 1);
    let decision = a
        .decide(&file, &orders(), &m, now(), None)
        .expect("decides");
    let mut b = Store::new(a.backend().reopen().expect("a second handle"));
    deliver_day(&mut b, &dir, 3);
    let late = a.commit(decision).expect("commits");
    assert_eq!(late.redecided, 1, "decided again, not rebased");
    assert_eq!(versions(&dir), vec![0, 1, 2]);
    let receipts = a.receipts("orders").expect("reads");
    assert_eq!(receipts.len(), 3);
    assert!(a.verify("orders").expect("verifies").ok());
    // each version carries its own receipt
    for (v, r) in [0u64, 1, 2].iter().zip(&receipts) {
        let info = entry(&dir, *v)
            .into_iter()
            .find_map(|a| a.get("commitInfo").cloned())
            .expect("a commitInfo");
        assert_eq!(
            info["dogana"]["receipt"].as_str(),
            Some(r.receipt.identity().as_str())
        );
    }
}

#[test]
fn the_newest_commit_holds_the_receipt_receipts_prints_and_a_txn_action() {
    let dir = fresh("commit-info");
    let mut s = store(&dir);
    deliver_day(&mut s, &dir, 1);
    let d = deliver_day(&mut s, &dir, 2);
    let last = *versions(&dir).last().expect("a version");
    let actions = entry(&dir, last);
    let info = actions
        .iter()
        .find_map(|a| a.get("commitInfo"))
        .expect("a commitInfo");
    let stored = s.receipts("orders").expect("reads");
    let newest = stored.last().expect("a receipt");
    assert_eq!(newest.receipt.identity(), d.receipt.identity());
    assert_eq!(
        info["dogana"]["receipt"].as_str(),
        Some(d.receipt.identity().as_str())
    );
    let doc = &info["dogana"]["receipts"][0];
    assert_eq!(
        doc,
        &serde_json::from_str::<serde_json::Value>(&d.receipt.to_json()).expect("JSON")
    );
    let txn = actions
        .iter()
        .find_map(|a| a.get("txn"))
        .expect("a txn action");
    assert_eq!(txn["appId"], "dogana");
    assert_eq!(txn["version"], 2);
}

#[test]
fn vacuum_leaves_dogana_objects_and_the_table_stays_dogana_s() {
    let dir = fresh("vacuum");
    let mut s = store(&dir);
    deliver_day(&mut s, &dir, 1);
    // the same day again: its file is removed from the table, which VACUUM deletes
    let (file, m) = window_of_day(&dir, 1, 2);
    s.deliver(&file, &orders(), &m, now(), None)
        .expect("delivers");
    let dogana_dir = dir.join("store").join("orders").join("_dogana");
    let count = |d: &Path| walk(d).len();
    let before = count(&dogana_dir);
    let parquet_before = parquet_files(&dir);
    let url = url::Url::from_directory_path(dir.join("store").join("orders")).expect("a URL");
    let rt = tokio::runtime::Runtime::new().expect("a runtime");
    rt.block_on(async {
        let t = deltalake_core::open_table(url).await.expect("opens");
        t.vacuum()
            .with_retention_period(chrono::Duration::zero())
            .with_enforce_retention_duration(false)
            .await
            .expect("vacuums")
    });
    assert_eq!(
        parquet_files(&dir),
        parquet_before - 1,
        "VACUUM deleted the removed file"
    );
    assert_eq!(
        count(&dogana_dir),
        before,
        "VACUUM deleted a _dogana object"
    );
    // VACUUM's own commits change no row: the table is still dogana's to deliver into
    deliver_day(&mut s, &dir, 2);
    assert!(s.verify("orders").expect("verifies").ok());
}

fn walk(d: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

fn parquet_files(dir: &Path) -> usize {
    walk(&dir.join("store").join("orders"))
        .iter()
        .filter(|p| {
            p.extension().is_some_and(|e| e == "parquet")
                && !p.to_string_lossy().contains("_delta_log")
        })
        .count()
}

#[test]
fn rows_appended_outside_dogana_stop_deliveries_and_say_how_to_undo_them() {
    let dir = fresh("outside");
    let mut s = store(&dir);
    deliver_day(&mut s, &dir, 1);
    // an application appends a file of its own (version 1)
    let url = url::Url::from_directory_path(dir.join("store").join("orders")).expect("a URL");
    let rt = tokio::runtime::Runtime::new().expect("a runtime");
    rt.block_on(async {
        let t = deltalake_core::open_table(url).await.expect("opens");
        let add = t
            .snapshot()
            .expect("a snapshot")
            .log_data()
            .iter()
            .map(|f| {
                #[allow(deprecated)]
                let mut a = f.add_action();
                a.path = a.path.clone();
                a
            })
            .next()
            .expect("a file");
        CommitBuilder::default()
            .with_actions(vec![Action::Add(add)])
            .build(
                Some(t.snapshot().expect("a snapshot")),
                t.log_store(),
                DeltaOperation::Write {
                    mode: SaveMode::Append,
                    partition_by: None,
                    predicate: None,
                },
            )
            .await
            .expect("commits")
    });
    assert_eq!(versions(&dir), vec![0, 1]);
    let (file, m) = window_of_day(&dir, 2, 1);
    let e = s
        .deliver(&file, &orders(), &m, now(), None)
        .expect_err("refused");
    let text = e.to_string();
    assert!(
        text.contains("outside dogana") && text.contains("RESTORE"),
        "{text}"
    );
    assert_eq!(versions(&dir), vec![0, 1], "nothing was committed");
    // the history still reads
    assert_eq!(s.receipts("orders").expect("reads").len(), 1);
}

#[test]
fn a_table_needing_deletion_vectors_is_refused_naming_the_feature() {
    let dir = fresh("protocol");
    let log = log_dir(&dir);
    std::fs::create_dir_all(&log).expect("a log folder");
    let schema = r#"{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}]}"#;
    std::fs::write(
        log.join(format!("{:020}.json", 0)),
        format!(
            "{{\"protocol\":{{\"minReaderVersion\":3,\"minWriterVersion\":7,\"readerFeatures\":[\"deletionVectors\"],\"writerFeatures\":[\"deletionVectors\"]}}}}\n{{\"metaData\":{{\"id\":\"x\",\"format\":{{\"provider\":\"parquet\",\"options\":{{}}}},\"schemaString\":\"{schema}\",\"partitionColumns\":[],\"configuration\":{{}},\"createdTime\":0}}}}\n"
        ),
    )
    .expect("writes the log");
    let mut s = store(&dir);
    let (file, m) = window_of_day(&dir, 1, 1);
    let e = s
        .deliver(&file, &orders(), &m, now(), None)
        .expect_err("refused");
    let text = e.to_string();
    assert!(matches!(e, StoreError::Unavailable(_)), "{e:?}");
    assert!(
        text.contains("deletionVectors") && text.contains("writer version 7"),
        "{text}"
    );
    assert_eq!(versions(&dir), vec![0], "nothing was committed");
}

#[test]
fn a_damaged_ledger_object_is_named_and_nothing_is_committed() {
    let dir = fresh("damaged");
    let mut s = store(&dir);
    deliver_day(&mut s, &dir, 1);
    let ledgers = dir
        .join("store")
        .join("orders")
        .join("_dogana")
        .join("ledger");
    for f in walk(&ledgers) {
        std::fs::write(&f, b"{\"not\": \"the ledger\"}").expect("damages");
    }
    let (file, m) = window_of_day(&dir, 2, 1);
    let e = s
        .deliver(&file, &orders(), &m, now(), None)
        .expect_err("refused");
    assert!(matches!(e, StoreError::Corrupt(_)), "{e:?}");
    assert!(e.to_string().contains("_dogana/ledger/"), "{e}");
    assert_eq!(versions(&dir), vec![0], "nothing was committed");
}

#[test]
fn a_reader_opens_nothing_that_is_not_there() {
    let dir = fresh("reader");
    let missing = format!("delta+file://{}", dir.join("nothing").display());
    let e = Delta::open(Path::new(&missing), &(), false).expect_err("refused");
    assert!(matches!(e, StoreError::NotAStore(_)), "{e:?}");
    assert!(!dir.join("nothing").exists());
    // and a read transaction on an empty store lists no table
    let mut d = Delta::open_url(&format!("delta+file://{}", dir.display()), false).expect("opens");
    d.begin(Txn::Read, &[]).expect("begins");
    assert!(d.tables().expect("lists").is_empty());
}

#[test]
fn after_a_checkpoint_and_the_log_s_cleanup_the_head_is_found_from_the_table_alone() {
    // delta-rs checkpoints every 100 versions (at version 99, its hundredth); the log entries
    // up to it may then be removed
    // (log retention): dogana's head is a table property, which the checkpoint keeps
    let dir = fresh("checkpoint");
    let mut s = store(&dir);
    for i in 0..105u32 {
        let (file, m) = window_of_day(&dir, i % 28 + 1, i / 28);
        s.deliver(&file, &orders(), &m, now(), None)
            .expect("delivers");
    }
    let log = log_dir(&dir);
    assert!(
        log.join(format!("{:020}.checkpoint.parquet", 99)).exists(),
        "no checkpoint at version 99"
    );
    for v in 0..100u64 {
        std::fs::remove_file(log.join(format!("{v:020}.json"))).expect("removes");
    }
    let mut again = store(&dir);
    let receipts = again.receipts("orders").expect("reads");
    assert_eq!(receipts.len(), 105);
    assert!(again.verify("orders").expect("verifies").ok());
    // and the next delivery commits version 105
    let (file, m) = window_of_day(&dir, 5, 10);
    let d = again
        .deliver(&file, &orders(), &m, now(), None)
        .expect("delivers");
    assert!(!d.replayed());
    assert_eq!(versions(&dir).last(), Some(&105));
}

#[test]
fn an_upsert_with_tombstones_leaves_no_file_the_log_does_not_name() {
    use dogana_receiver::conformance::Fixture;
    // rewritten twice in one transaction (the updated keys, then the tombstones' keys): the
    // first rewrite is never written
    let mut fx = Fixture::<Store<Delta>>::new("delta-no-leftovers");
    let rows = [
        (1, "2026-10-01", "2026-10-01T10:00:00Z", "10.00", false),
        (2, "2026-10-01", "2026-10-01T11:00:00Z", "20.00", false),
        (3, "2026-10-02", "2026-10-02T10:00:00Z", "30.00", false),
    ];
    fx.accept(&fx.full("full.csv", "2026-10-10T06:00:00Z", &rows));
    let changes = [
        (2, "2026-10-01", "2026-10-10T12:00:00Z", "21.00", false),
        (3, "2026-10-02", "2026-10-10T12:00:00Z", "", true),
    ];
    fx.accept(&fx.changes(
        "changes.csv",
        "2026-10-10T06:00:00Z",
        "2026-10-11T06:00:00Z",
        &changes,
    ));
    let folder = walk(&fx.dir)
        .into_iter()
        .filter(|p| {
            p.extension().is_some_and(|e| e == "parquet")
                && !p.to_string_lossy().contains("_delta_log")
        })
        .count();
    let rt = tokio::runtime::Runtime::new().expect("a runtime");
    let table = walk(&fx.dir)
        .into_iter()
        .find(|p| p.ends_with("_delta_log/00000000000000000000.json"))
        .and_then(|p| p.parent()?.parent().map(Path::to_path_buf))
        .expect("the table's folder");
    let url = url::Url::from_directory_path(&table).expect("a URL");
    let named: usize = rt.block_on(async {
        let t = deltalake_core::open_table(url).await.expect("opens");
        t.snapshot().expect("a snapshot").log_data().num_files()
    });
    // now: order 1 rewritten without orders 2 and 3, and the upserted order 2; and the full
    // delivery's file, which the second version removed
    assert_eq!(named, 2);
    assert_eq!(folder, named + 1, "a file no version names was written");
}

#[test]
fn a_window_s_own_files_are_removed_whole_without_being_read() {
    // the first delivery's file holds day 1 only: a later delivery of day 1 removes it by its
    // statistics alone, so a file that could no longer be read does not stop it
    let dir = fresh("window-whole");
    let mut s = store(&dir);
    deliver_day(&mut s, &dir, 1);
    let table = dir.join("store").join("orders");
    for f in walk(&table) {
        if f.extension().is_some_and(|e| e == "parquet")
            && !f.to_string_lossy().contains("_delta_log")
        {
            std::fs::write(&f, b"not parquet").expect("damages");
        }
    }
    let (file, m) = window_of_day(&dir, 1, 2);
    let d = s
        .deliver(&file, &orders(), &m, now(), None)
        .expect("delivers");
    assert!(
        d.accepted(),
        "{}",
        dogana_receiver::conformance::failures(&d.receipt)
    );
    assert_eq!(versions(&dir), vec![0, 1]);
}
