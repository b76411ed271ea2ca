//! The catalog port on a SQLite file: the conformance suite of `dogana_catalog`, each case on
//! a fresh file, every connection its own.

use std::path::{Path, PathBuf};

use dogana_catalog::conformance as suite;
use dogana_catalog::{Catalog, CatalogError};

fn fresh() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("machine.sqlite");
    (dir, path)
}

fn opener(path: &Path) -> impl Fn() -> Box<dyn Catalog> + Sync + '_ {
    move || Box::new(dogana_sqlite::catalog::open(path).unwrap()) as Box<dyn Catalog>
}

#[test]
fn leases_fence_each_holder() {
    // rule: topology.coordinate.catalog-port, topology.coordinate.inventory
    let (_d, p) = fresh();
    suite::leases_fence_each_holder(&opener(&p));
}

#[test]
fn a_paused_holder_is_fenced_by_the_catalogs_clock() {
    // rule: topology.coordinate.catalog-clock
    let (_d, p) = fresh();
    suite::a_paused_holder_is_fenced(&opener(&p));
}

#[test]
fn cadence_leases_last_90_seconds() {
    // rule: topology.coordinate.cadence-lease-ttl
    let (_d, p) = fresh();
    suite::cadence_leases_last_90_seconds(&opener(&p));
}

#[test]
fn cursors_move_by_compare_and_swap() {
    // rule: topology.coordinate.cursor-cas
    let (_d, p) = fresh();
    suite::cursors_move_by_compare_and_swap(&opener(&p));
}

#[test]
fn the_journal_appends_in_order() {
    // rule: store.lay-out.machine-catalog
    let (_d, p) = fresh();
    suite::the_journal_appends_in_order(&opener(&p));
}

#[test]
fn sixteen_writers_fifty_rounds_lose_no_increment_and_never_share_a_lease() {
    // rule: topology.coordinate.cursor-cas, topology.coordinate.backends
    let (_d, p) = fresh();
    suite::writers_contend(&opener(&p), 16, 50);
}

#[test]
fn a_catalog_file_that_cannot_be_opened_is_unreachable_naming_it() {
    // rule: topology.coordinate.backends
    let (d, _) = fresh();
    let path = d.path().join("no-such-dir").join("machine.sqlite");
    match dogana_sqlite::catalog::open(&path) {
        Err(e @ CatalogError::Unreachable { .. }) => {
            assert!(e.to_string().contains("no-such-dir"), "{e}");
            assert_eq!(e.code(), dogana_codes::CONNECTION_LOST);
        }
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("opened a file in a missing directory"),
    }
    assert!(!d.path().join("no-such-dir").exists(), "nothing made");
}
