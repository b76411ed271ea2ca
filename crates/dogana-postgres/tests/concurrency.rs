//! The engine's concurrency harness on Postgres: four writer threads with their own sessions
//! and a reader, then four processes at once, all serialized per table by the advisory lock
//! (`dogana_receiver::concurrency`).
//!
//! rule: RECV-10, RECV-11, RECV-12, RECV-13, RECV-09, LOADER-08

use dogana_postgres::Postgres;

const CHILD: &str = "DOGANA_POSTGRES_CONCURRENCY_CHILD";

#[test]
fn threads_with_their_own_sessions() {
    if std::env::var(CHILD).is_err() {
        dogana_receiver::concurrency::threads::<Postgres>("postgres");
    }
}

/// A child process: does nothing unless `processes_at_once` started it.
#[test]
fn concurrency_child() {
    dogana_receiver::concurrency::child::<Postgres>(CHILD);
}

#[test]
fn processes_at_once() {
    dogana_receiver::concurrency::processes::<Postgres>(CHILD, "concurrency_child");
}
