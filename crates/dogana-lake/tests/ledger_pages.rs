//! The ledger kept in pages (`crate::pages`, layout `tables/<t>/ledger/<id>.regions`): a
//! delivery writes the pages holding what it changed, a snapshot of the earlier layout (the
//! ledger whole in its manifest) is read and converted by the next delivery, and a page or
//! identity that does not match is found rather than built on. Pages are cut small here
//! (1 KiB) so a ledger of a hundred regions spans dozens of them.

use std::collections::BTreeSet;
use std::path::Path;

use bytes::Bytes;
use dogana::{Date, Ledger, Outcome, Timestamp, Window, Wire};
use dogana_lake::layout::{page_key, SnapshotManifest};
use dogana_lake::{Lake, LakeOptions};
use dogana_receiver::conformance::{orders, orders_csv, Order};
use dogana_receiver::{Open, Store, StoreError};

fn options() -> LakeOptions {
    LakeOptions {
        ledger_page_bytes: 1024,
        ..LakeOptions::default()
    }
}

/// A new handle on the store in `dir` (nothing of another handle's kept pages).
fn open(dir: &Path) -> Store<Lake> {
    Store::new(Lake::open(dir, &options(), true).expect("opens"))
}

fn day(i: u32) -> Date {
    Date::from_ymd(2000, 1, 1)
        .unwrap()
        .checked_add_days(i64::from(i))
        .unwrap()
}

/// Delivers a one-day window of day `i`, one row, produced `i` seconds into 2026.
fn deliver(store: &mut Store<Lake>, dir: &Path, i: u32) -> Result<Outcome, StoreError> {
    let when = day(i).to_string();
    let updated = format!("{when}T10:00:00Z");
    let rows: Vec<Order<'_>> = vec![(i64::from(i), &when, &updated, "1.00", false)];
    let file = dir.join("w.csv");
    std::fs::write(&file, orders_csv(&rows)).unwrap();
    let produced = Timestamp::from_micros(
        "2026-01-01T00:00:00Z"
            .parse::<Timestamp>()
            .unwrap()
            .as_micros()
            + i64::from(i) * 1_000_000,
    )
    .unwrap();
    let m = orders()
        .manifest("window", produced)
        .window(Window::new(day(i), day(i)))
        .rows(1)
        .build()
        .unwrap();
    let now: Timestamp = "2026-11-01T00:00:00Z".parse().unwrap();
    Ok(store
        .deliver(&file, &orders(), &m, now, None)?
        .receipt
        .outcome())
}

fn accept(store: &mut Store<Lake>, dir: &Path, i: u32) {
    assert_eq!(
        deliver(store, dir, i).unwrap(),
        Outcome::Accepted,
        "day {i}"
    );
}

fn head(store: &Store<Lake>) -> (String, SnapshotManifest) {
    let lake = store.backend();
    let key = lake.head("orders").unwrap().expect("a head");
    let s = lake.snapshot(&key).unwrap();
    (key, s)
}

fn page_ids(s: &SnapshotManifest) -> Vec<String> {
    s.ledger_pages
        .as_ref()
        .expect("a ledger in pages")
        .pages
        .iter()
        .map(|p| p.id.clone())
        .collect()
}

fn ledger(store: &mut Store<Lake>) -> Ledger {
    store.ledger("orders").unwrap().expect("a ledger")
}

fn verified(store: &mut Store<Lake>) {
    let report = store.verify("orders").unwrap();
    assert!(report.ok(), "{:#?}", report.problems);
}

/// A store in `dir` whose ledger spans many pages: windows every other day.
fn many_pages(dir: &Path) -> Store<Lake> {
    let mut store = open(dir);
    for i in (0..80).step_by(2) {
        accept(&mut store, dir, i);
    }
    store
}

#[test]
fn a_delivery_writes_the_pages_holding_what_it_changed() {
    // rule: RECV-09 — the ledger saved with the acceptance is the ledger followed, written as
    // the pages it changed
    let dir = tempfile::tempdir().unwrap();
    let mut store = many_pages(dir.path());
    let (_, before) = head(&store);
    let before_ids = page_ids(&before);
    assert!(before_ids.len() > 20, "{} pages", before_ids.len());
    accept(&mut store, dir.path(), 41);
    let (_, after) = head(&store);
    let after_ids = page_ids(&after);
    let new: Vec<&String> = after_ids
        .iter()
        .filter(|id| !before_ids.contains(id))
        .collect();
    assert!(
        (1..=2).contains(&new.len()),
        "{} of {} pages written",
        new.len(),
        after_ids.len()
    );
    // the pages the snapshots share are one object each
    let stored: BTreeSet<String> = store
        .backend()
        .root()
        .list("tables/orders/ledger/")
        .unwrap()
        .into_iter()
        .collect();
    for id in before_ids.iter().chain(&after_ids) {
        assert!(stored.contains(&page_key("orders", id)), "{id}");
    }
    // a new handle reads the pages and finds the ledger the engine followed, byte for byte
    let expected = ledger(&mut store);
    let mut other = open(dir.path());
    assert_eq!(
        other.backend().snapshot_ledger(&after).unwrap(),
        Some(expected.to_json())
    );
    assert_eq!(
        after.ledger_pages.as_ref().unwrap().identity,
        expected.identity()
    );
    assert_eq!(ledger(&mut other), expected);
    verified(&mut other);
}

#[test]
fn a_snapshot_of_the_earlier_layout_is_read_and_converted() {
    // rule: store.lay-out.format-version — a snapshot holding its ledger whole (format 2) is
    // read as it is, and the next delivery writes the ledger in pages (format 4)
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    for i in [1, 3, 5] {
        accept(&mut store, dir.path(), i);
    }
    let expected = ledger(&mut store);
    let (key, mut s) = head(&store);
    s.ledger = Some(expected.to_json());
    s.ledger_pages = None;
    s.format_version = Some("2.0".into());
    store
        .backend()
        .root()
        .put(&key, Bytes::from(serde_json::to_vec(&s).unwrap()))
        .unwrap();
    drop(store);
    let mut store = open(dir.path());
    assert_eq!(ledger(&mut store), expected);
    verified(&mut store);
    accept(&mut store, dir.path(), 7);
    let (_, converted) = head(&store);
    assert_eq!(converted.format_version.as_deref(), Some("4.1"));
    assert!(converted.ledger.is_none());
    let now = ledger(&mut store);
    assert_eq!(now.region_count(), expected.region_count() + 2);
    assert_eq!(
        open(dir.path())
            .backend()
            .snapshot_ledger(&converted)
            .unwrap(),
        Some(now.to_json())
    );
    // the earlier snapshot still reads as it was
    assert_eq!(
        store.backend().snapshot_ledger(&s).unwrap(),
        Some(expected.to_json())
    );
    verified(&mut open(dir.path()));
}

#[test]
fn a_page_that_is_not_the_one_named_is_found() {
    // rule: RECOVERY-01 — a damaged ledger is reported, never silently replaced
    let dir = tempfile::tempdir().unwrap();
    let mut store = many_pages(dir.path());
    let (_, s) = head(&store);
    // one byte of every page's first region changed (so whichever page is read is damaged)
    let root = store.backend().root().clone();
    for id in page_ids(&s) {
        let key = page_key("orders", &id);
        let mut bytes = root.get(&key).unwrap().unwrap().to_vec();
        let at = bytes.iter().position(|b| *b == b'{').unwrap() + 2;
        bytes[at] ^= 0x01;
        root.put(&key, Bytes::from(bytes)).unwrap();
    }
    let receipts = store.receipts("orders").unwrap().len();
    drop(store);
    let damaged = |e: &StoreError| {
        matches!(e, StoreError::Corrupt(m) if m.contains("the ledger page tables/orders/ledger/")
            && m.contains("is not the page its snapshot names"))
    };
    // verify reads what is stored (a new handle keeps no page)
    let mut store = open(dir.path());
    let e = store.verify("orders").unwrap_err();
    assert!(damaged(&e), "{e}");
    // a delivery reads the pages it changes, and builds on none that does not match
    let e = deliver(&mut store, dir.path(), 7).unwrap_err();
    assert!(damaged(&e), "{e}");
    assert_eq!(store.receipts("orders").unwrap().len(), receipts);
}

#[test]
fn an_identity_not_matching_the_pages_is_found() {
    // rule: RECV-12 — verify compares what is stored; a delivery does not build on it
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    for i in [1, 3] {
        accept(&mut store, dir.path(), i);
    }
    let (key, mut s) = head(&store);
    let other = Ledger::new(orders()).identity();
    s.ledger_pages.as_mut().unwrap().identity = other.clone();
    store
        .backend()
        .root()
        .put(&key, Bytes::from(serde_json::to_vec(&s).unwrap()))
        .unwrap();
    let receipts = store.receipts("orders").unwrap().len();
    drop(store);
    let mut store = open(dir.path());
    let report = store.verify("orders").unwrap();
    assert!(
        report.problems.iter().any(|p| p.contains(&other)),
        "{:?}",
        report.problems
    );
    let e = deliver(&mut store, dir.path(), 5).unwrap_err();
    assert!(
        matches!(&e, StoreError::Corrupt(m) if m.contains(&other)),
        "{e}"
    );
    assert_eq!(store.receipts("orders").unwrap().len(), receipts);
}

#[test]
fn fold_and_collect_keep_the_ledger_pages() {
    // rule: store.fold.carry-by-reference — a fold carries the ledger's pages by reference,
    // and a collection deletes none (every snapshot's ledger stays readable)
    let dir = tempfile::tempdir().unwrap();
    let mut store = many_pages(dir.path());
    let (first, s) = head(&store);
    let expected = ledger(&mut store);
    let lake = store.backend_mut();
    let report = lake.fold("orders").unwrap();
    let folded = lake
        .snapshot(report.snapshot.as_ref().expect("a fold"))
        .unwrap();
    assert_eq!(folded.ledger_pages, s.ledger_pages);
    lake.collect("orders", 1).unwrap();
    let mut store = open(dir.path());
    assert_eq!(ledger(&mut store), expected);
    let old = store.backend().snapshot(&first).unwrap();
    assert_eq!(
        store.backend().snapshot_ledger(&old).unwrap(),
        Some(expected.to_json())
    );
    verified(&mut store);
}
