//! The catalog port on Postgres: the conformance suite of `dogana_catalog`, each case in its
//! own schema of the server `DOGANA_PG_URL` names (`bash scripts/test-postgres.sh`), every
//! connection its own session.

use dogana_catalog::conformance as suite;
use dogana_catalog::{Catalog, CatalogError};
use dogana_postgres::harness::{schema_of, test_url};
use dogana_receiver::conformance::Harness;

/// A fresh schema for `dir`, and the catalog URL naming it.
fn fresh(name: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::Builder::new().prefix(name).tempdir().unwrap();
    // the harness makes the folder's schema (a store's tables in it too, which the
    // catalog's tables sit beside)
    dogana_postgres::Postgres::create(dir.path()).unwrap();
    let url = test_url().unwrap();
    let sep = if url.contains('?') { '&' } else { '?' };
    let url = format!("{url}{sep}schema={}", schema_of(dir.path()));
    (dir, url)
}

fn opener(url: &str) -> impl Fn() -> Box<dyn Catalog> + Sync + '_ {
    move || Box::new(dogana_postgres::catalog::connect(url).unwrap()) as Box<dyn Catalog>
}

#[test]
fn leases_fence_each_holder() {
    // rule: topology.coordinate.catalog-port, topology.coordinate.inventory
    let (_d, url) = fresh("cat-leases");
    suite::leases_fence_each_holder(&opener(&url));
}

#[test]
fn a_paused_holder_is_fenced_by_the_servers_clock() {
    // rule: topology.coordinate.catalog-clock
    let (_d, url) = fresh("cat-paused");
    suite::a_paused_holder_is_fenced(&opener(&url));
}

#[test]
fn cadence_leases_last_90_seconds() {
    // rule: topology.coordinate.cadence-lease-ttl
    let (_d, url) = fresh("cat-cadence");
    suite::cadence_leases_last_90_seconds(&opener(&url));
}

#[test]
fn cursors_move_by_compare_and_swap() {
    // rule: topology.coordinate.cursor-cas
    let (_d, url) = fresh("cat-cursors");
    suite::cursors_move_by_compare_and_swap(&opener(&url));
}

#[test]
fn the_journal_appends_in_order() {
    // rule: store.lay-out.machine-catalog
    let (_d, url) = fresh("cat-journal");
    suite::the_journal_appends_in_order(&opener(&url));
}

#[test]
fn sixteen_writers_fifty_rounds_lose_no_increment_and_never_share_a_lease() {
    // rule: topology.coordinate.cursor-cas, topology.coordinate.backends
    let (_d, url) = fresh("cat-contend");
    suite::writers_contend(&opener(&url), 16, 50);
}

#[test]
fn a_catalog_url_that_does_not_connect_is_unreachable_naming_the_server() {
    // rule: topology.coordinate.backends
    // a port nothing listens on (bound, then let go)
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://dogana@127.0.0.1:{port}/dogana?connect_timeout=2");
    match dogana_postgres::catalog::connect(&url) {
        Err(e @ CatalogError::Unreachable { .. }) => {
            assert!(e.to_string().contains(&port.to_string()), "{e}");
            assert_eq!(e.code(), dogana_codes::CONNECTION_LOST);
        }
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("connected to nothing"),
    }
}
