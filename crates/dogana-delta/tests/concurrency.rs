//! The engine's concurrency harness on Delta tables (`file://`): writer threads with their
//! own handles and a reader, then processes at once, racing to create the table. No writer
//! holds a lock: each commit is the put-if-absent of the next log entry, and a writer that
//! loses it decides again (`dogana_receiver::concurrency`).
//!
//! rule: RECV-10, RECV-11, RECV-12, RECV-13, RECV-09, LOADER-08

use dogana_delta::Delta;

const CHILD: &str = "DOGANA_DELTA_CONCURRENCY_CHILD";

#[test]
fn threads_with_their_own_handles() {
    if std::env::var(CHILD).is_err() {
        dogana_receiver::concurrency::threads::<Delta>("delta");
    }
}

/// A child process: does nothing unless `processes_at_once` started it.
#[test]
fn concurrency_child() {
    dogana_receiver::concurrency::child::<Delta>(CHILD);
}

#[test]
fn processes_at_once() {
    dogana_receiver::concurrency::processes::<Delta>(CHILD, "concurrency_child");
}
