//! The engine's concurrency harness on SQLite: four writer threads with their own connections
//! and a reader, then four processes at once (`dogana_receiver::concurrency`).
//!
//! rule: RECV-10, RECV-11, RECV-12, RECV-13, RECV-09, LOADER-08

use dogana_sqlite::Sqlite;

const CHILD: &str = "DOGANA_SQLITE_CONCURRENCY_CHILD";

#[test]
fn threads_with_their_own_connections() {
    if std::env::var(CHILD).is_err() {
        dogana_receiver::concurrency::threads::<Sqlite>("sqlite");
    }
}

/// A child process: does nothing unless `processes_at_once` started it.
#[test]
fn concurrency_child() {
    dogana_receiver::concurrency::child::<Sqlite>(CHILD);
}

#[test]
fn processes_at_once() {
    dogana_receiver::concurrency::processes::<Sqlite>(CHILD, "concurrency_child");
}
