//! The engine's concurrency harness on DuckDB: four writer threads on clones of the file's one
//! instance and a reader, then four processes at once, each waiting for DuckDB's file lock
//! (`dogana_receiver::concurrency`).
//!
//! rule: RECV-10, RECV-11, RECV-12, RECV-13, RECV-09, LOADER-08

use dogana_duckdb::DuckDb;

const CHILD: &str = "DOGANA_DUCKDB_CONCURRENCY_CHILD";

#[test]
fn threads_with_their_own_connections() {
    if std::env::var(CHILD).is_err() {
        dogana_receiver::concurrency::threads::<DuckDb>("duckdb");
    }
}

/// A child process: does nothing unless `processes_at_once` started it.
#[test]
fn concurrency_child() {
    dogana_receiver::concurrency::child::<DuckDb>(CHILD);
}

#[test]
fn processes_at_once() {
    dogana_receiver::concurrency::processes::<DuckDb>(CHILD, "concurrency_child");
}
